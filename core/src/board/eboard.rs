//! The electronic board's events: its link, the moves it saw (kept in the
//! journal so a restart follows the same game), the DGT clock's lever. What
//! the moves mean for the clock (counts, the end of the game, the PGN) is
//! the follower's (`follow.rs`).

use super::*;

impl Board {
    pub(super) fn eboard_event(&mut self, now: Micros, wall: i64, event: EboardEvent) {
        let Some(eboard) = self.eboard.as_mut() else {
            return;
        };
        let mut link_changed = false;
        match &event {
            EboardEvent::Connected { path, .. } => {
                eboard.connected = true;
                link_changed = true;
                tracing::info!(board = %self.setup.id, device = %path.display(), "electronic board connected")
            }
            EboardEvent::Disconnected { path, reason, .. } => {
                eboard.connected = false;
                link_changed = true;
                tracing::warn!(board = %self.setup.id, device = %path.display(), reason, "electronic board disconnected")
            }
            EboardEvent::SerialNumber(serial) => {
                eboard.serial = Some(serial.clone());
                link_changed = true;
            }
            EboardEvent::Board(crate::eboard::BoardEvent::Unrecognised { .. }) => {
                tracing::warn!(board = %self.setup.id, "the electronic board shows a position that fits no legal move: the arbiter should look")
            }
            _ => {}
        }
        let link = DeviceLink {
            role: "eboard".into(),
            name: eboard.name.clone(),
            connected: eboard.connected,
            serial: eboard.serial.clone(),
        };
        self.dirty = true;
        if self.follower.on_event(&event) {
            if let Some(stored) = follow::board_record(&event) {
                let t = self.t(now).max(self.game.processed_to());
                self.write_row(t, wall, stored, &Caller::DAEMON, None, &[]);
            }
        }
        if link_changed {
            if let EboardEvent::Connected { .. } | EboardEvent::Disconnected { .. } = &event {
                let reason = match &event {
                    EboardEvent::Disconnected { reason, .. } => Some(reason.clone()),
                    _ => None,
                };
                self.device_row(now, wall, &link, reason);
            }
            self.outbox.publish(BoardEvent::DeviceChanged {
                board: self.setup.id.clone(),
                link,
            });
        }
        if let EboardEvent::ClockPress { right_up, at } = event {
            self.lever_pressed(now, wall, right_up, at);
        }
    }
}
