//! The device slots' reports: links coming and going, refused frames, and
//! button events checked against the unit's event record and placed at
//! their device instants.

use super::*;

impl Board {
    pub(super) fn device_changed(
        &mut self,
        now: Micros,
        wall: i64,
        role: DeviceRole,
        reason: Option<String>,
    ) {
        if let Some(slot) = self.devices.slot(role) {
            let view = slot.view();
            self.device_row(now, wall, &view.link(), reason);
            self.outbox.publish(BoardEvent::DeviceChanged {
                board: self.setup.id.clone(),
                link: view.link(),
            });
        }
        self.dirty = true;
    }

    /// Once the game has started, a device's link lost or back is a row of
    /// the record (before the start it matters to nobody's game).
    pub(super) fn device_row(
        &mut self,
        now: Micros,
        wall: i64,
        link: &DeviceLink,
        reason: Option<String>,
    ) {
        if self.started_at.is_none() {
            return;
        }
        let t = self.t(now).max(self.game.processed_to());
        self.write_row(
            t,
            wall,
            StoredEvent::Device {
                role: link.role.clone(),
                name: link.name.clone(),
                connected: link.connected,
                serial: link.serial.clone(),
                reason,
            },
            &Caller::DAEMON,
            None,
            &[],
        );
    }

    pub(super) fn device(&mut self, now: Micros, wall: i64, input: DeviceInput) {
        match input {
            DeviceInput::Connected { role, hello, path } => {
                // The same unit and boot, still linked: it said HELLO again
                // and was welcomed again. Its state goes out again and its
                // event record moves to the HELLO, but its link never went
                // down: no row, no event.
                let rewelcomed = self.devices.slot(role).is_some_and(|slot| {
                    slot.connected
                        && slot.serial.as_deref() == Some(hello.serial.as_str())
                        && slot.boot_id == hello.boot_id
                });
                if role == DeviceRole::Buttons {
                    self.marks.buttons_lost = false;
                }
                self.devices
                    .connected(role, &hello, &self.setup.display, self.setup.white_button);
                if rewelcomed {
                    self.dirty = true;
                } else {
                    tracing::info!(board = %self.setup.id, %role, path, serial = hello.serial.as_str(), "device connected");
                    self.device_changed(now, wall, role, None);
                }
            }
            DeviceInput::Disconnected { role, reason } => {
                if let Some(slot) = self.devices.slot_mut(role) {
                    slot.connected = false;
                    tracing::warn!(board = %self.setup.id, device = %slot.name, reason, "device disconnected");
                }
                if role == DeviceRole::Buttons {
                    self.marks.buttons_lost = true;
                }
                self.device_changed(now, wall, role, Some(reason));
            }
            DeviceInput::Refused { role, path, reason } => {
                tracing::warn!(board = %self.setup.id, %role, path, reason,
                    "a device on this board's port was refused and is left alone");
            }
            DeviceInput::Errors { role, count } => {
                if let Some(slot) = self.devices.slot_mut(role) {
                    slot.errors = slot.errors.saturating_add(count);
                    tracing::warn!(board = %self.setup.id, device = %slot.name, count, total = slot.errors,
                        "refused frames from a device");
                }
                self.dirty = true;
            }
            DeviceInput::Button {
                role,
                serial,
                event,
                button,
                pressed,
                at,
                arrival,
            } => self.button(now, wall, role, serial, event, button, pressed, at, arrival),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn button(
        &mut self,
        now: Micros,
        wall: i64,
        role: DeviceRole,
        serial: String,
        event: u16,
        button: Button,
        pressed: bool,
        at: Micros,
        arrival: Micros,
    ) {
        match self.devices.check_event(&serial, event) {
            Verdict::New => {}
            Verdict::Repeat { ack } => {
                tracing::info!(board = %self.setup.id, device = %serial, event, "a press already recorded was sent again; acknowledging it");
                self.outbox.soon(Action::Device {
                    role,
                    command: DeviceCommand::Ack { event: ack },
                });
                return;
            }
            Verdict::Pending | Verdict::Ahead => return,
        }
        let side = match button {
            Button::Arbiter => None,
            Button::Left | Button::Right => self.side_of_button(button),
            _ => {
                tracing::warn!(board = %self.setup.id, device = %serial, ?button, "unknown button");
                self.outbox.ack_after_commit(role, serial, event);
                return;
            }
        };
        if !pressed {
            self.outbox.ack_after_commit(role, serial, event);
            return;
        }
        // A press is never later than its frame's arrival, nor than now.
        let arrival = arrival.min(now);
        let t = self.t(at.min(arrival));
        let arrived = self.t(arrival);
        let origin = DeviceOrigin {
            serial: serial.clone(),
            boot_id: self.devices.boot_of(&serial),
            event,
            late_us: arrival.saturating_sub(at).max(0),
        };
        let in_outage = self.outage.is_some_and(|(from, to)| t >= from && t <= to);
        if t < self.game.processed_to() && t < arrived - LATE_PRESS_WINDOW && !in_outage {
            self.not_placed(now, wall, side, t, arrived, origin, role);
            return;
        }
        let (input, stored) = match side {
            None => {
                self.marks.arbiter_called = true;
                self.marks.arbiter_called_at = Some(t);
                tracing::warn!(board = %self.setup.id, "arbiter called (Art. 6.12b): clock paused");
                (Input::Pause, StoredEvent::ArbiterCall)
            }
            Some(side) => {
                let state = self.game.state(t);
                if side == Side::Black
                    && self.setup.start_on_black_press
                    && self.started_at.is_none()
                    && !state.started
                {
                    // Club practice: Black's press starts White's clock.
                    (Input::Start, StoredEvent::Start)
                } else {
                    (Input::Press(side), StoredEvent::Press { side })
                }
            }
        };
        let t = if input == Input::Start {
            t.max(self.game.processed_to())
        } else {
            t
        };
        let applied = self.input(
            now,
            wall,
            t,
            input,
            stored,
            Caller::DAEMON,
            Some(origin),
            None,
        );
        if side.is_none() {
            self.outbox.publish(BoardEvent::ArbiterCalled {
                board: self.setup.id.clone(),
            });
        }
        // A refusal (the engine refuses no press or pause) is in the log;
        // either way the unit's queue moves on.
        let _ = applied;
        self.outbox.ack_after_commit(role, serial, event);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn not_placed(
        &mut self,
        now: Micros,
        wall: i64,
        side: Option<Side>,
        t: Micros,
        arrived: Micros,
        origin: DeviceOrigin,
        role: DeviceRole,
    ) {
        let _ = now;
        self.unplaced = self.unplaced.saturating_add(1);
        self.dirty = true;
        let serial = origin.serial.clone();
        let event = origin.event;
        tracing::warn!(board = %self.setup.id, side = ?side, late_ms = (arrived - t) / MS,
            "a press arrived too late to be placed; recorded for the arbiter, not applied");
        if let Some(side) = side {
            self.write_row(
                arrived.max(self.game.processed_to()),
                wall,
                StoredEvent::PressNotPlaced {
                    side,
                    device_at_us: t,
                },
                &Caller::DAEMON,
                Some(origin),
                &[],
            );
            self.outbox.publish(BoardEvent::PressNotPlaced {
                board: self.setup.id.clone(),
                side,
                late_ms: (arrived - t) / MS,
            });
        }
        self.outbox.ack_after_commit(role, serial, event);
    }

    pub(super) fn side_of_button(&self, button: Button) -> Option<Side> {
        let left = match self.setup.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        };
        match button {
            Button::Left => Some(left),
            Button::Right => Some(left.other()),
            _ => None,
        }
    }
}
