//! The clock face: what the displays and LEDs show now, and the beeps.

use super::*;

impl Board {
    /// Sends what the displays and LEDs should show now, if it changed;
    /// beeps in the last seconds.
    pub(super) fn refresh(&mut self, now: Micros) {
        let state = self.state(now);
        self.marks.start_in = self
            .scheduled
            .as_ref()
            .map(|s| s.start.at.saturating_sub(now).max(0));
        // An unlinked unit is sent nothing: its picture goes out, rendered
        // for its capabilities, when it links (its `sent` is cleared then).
        for display in self
            .devices
            .displays
            .iter_mut()
            .filter(|d| d.slot.connected)
        {
            let shown = display.rules.render(&state, &self.marks);
            if display.sent != Some(shown) {
                display.sent = Some(shown);
                self.outbox.immediately(Action::Device {
                    role: display.slot.role,
                    command: DeviceCommand::Display(shown),
                });
            }
        }
        if self.devices.buttons.as_ref().is_some_and(|b| b.connected) {
            let left = match self.setup.white_button {
                ButtonSide::Left => Side::White,
                ButtonSide::Right => Side::Black,
            };
            let leds = Leds {
                left: state.running == Some(left),
                right: state.running == Some(left.other()),
                arbiter: self.marks.arbiter_called,
            };
            if self.devices.leds_sent != Some(leds) {
                self.devices.leds_sent = Some(leds);
                self.outbox.immediately(Action::Device {
                    role: DeviceRole::Buttons,
                    command: DeviceCommand::Leds(leds),
                });
            }
        }
        let beep_last = i64::from(self.setup.display.beep_last_seconds);
        if beep_last > 0 {
            let second = state
                .running
                .and_then(|side| state.side(side).remaining)
                .map(|r| (r.max(0) + SECOND - 1) / SECOND);
            if second != self.last_beep_second {
                self.last_beep_second = second;
                if second.is_some_and(|s| s > 0 && s <= beep_last) {
                    self.beep(80, 1);
                }
            }
        }
    }

    /// The next instant the countdown to a scheduled start changes on the
    /// displays (every second), if one is scheduled.
    pub(super) fn next_countdown_change(&self, now: Micros) -> Option<Micros> {
        let at = self.scheduled.as_ref()?.start.at;
        let left = at.saturating_sub(now);
        let wait = crate::clocktext::next_change_in(left, crate::clocktext::Style::SECONDS)?;
        Some(now.saturating_add(wait))
    }

    /// The next instant a last-seconds beep is due, if any.
    pub(super) fn next_beep(&self, state: &ClockState) -> Option<Micros> {
        let beep_last = i64::from(self.setup.display.beep_last_seconds);
        if beep_last == 0 {
            return None;
        }
        let side = state.running?;
        let remaining = state.side(side).remaining?;
        if remaining <= 0 {
            return None;
        }
        let second = (remaining + SECOND - 1) / SECOND;
        let boundary = (second - 1) * SECOND;
        (second - 1 <= beep_last).then(|| {
            state
                .t
                .saturating_add(remaining - boundary)
                .saturating_add(self.epoch)
        })
    }

    pub(super) fn beep(&mut self, duration_ms: u16, count: u8) {
        let roles: Vec<DeviceRole> = self
            .devices
            .buttons
            .iter()
            .chain(self.devices.displays.iter().map(|d| &d.slot))
            .filter(|s| s.connected && s.caps.buzzer)
            .map(|s| s.role)
            .collect();
        for role in roles {
            self.outbox.immediately(Action::Device {
                role,
                command: DeviceCommand::Beep { duration_ms, count },
            });
        }
    }
}
