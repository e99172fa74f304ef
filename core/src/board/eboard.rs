//! The electronic board's events: its link, the moves it saw (kept in the
//! journal), its PGN, and the end of the game on the board (Art. 6.2a1).

use super::*;

impl Board {
    pub(super) fn eboard_event(&mut self, now: Micros, wall: i64, event: EboardEvent) {
        let Some(eboard) = self.eboard.as_mut() else {
            return;
        };
        let followed = eboard.on_event(&event);
        let link = DeviceLink {
            role: "eboard".into(),
            name: eboard.name.clone(),
            connected: eboard.connected,
            serial: eboard.serial.clone(),
        };
        let pgn = followed.pgn_changed.then(|| eboard.pgn()).flatten();
        match &event {
            EboardEvent::Connected { path, .. } => {
                tracing::info!(board = %self.setup.id, device = %path.display(), "electronic board connected")
            }
            EboardEvent::Disconnected { path, reason, .. } => {
                tracing::warn!(board = %self.setup.id, device = %path.display(), reason, "electronic board disconnected")
            }
            EboardEvent::Board(crate::eboard::BoardEvent::Unrecognised { .. }) => {
                tracing::warn!(board = %self.setup.id, "the electronic board shows a position that fits no legal move: the arbiter should look")
            }
            _ => {}
        }
        let t = self.t(now).max(self.game.processed_to());
        if let Some(stored) = followed.record {
            self.write_row(t, wall, stored, &Caller::DAEMON, None, &[]);
        }
        if let Some(pgn) = pgn {
            self.outbox.after_commit(Action::Pgn(pgn));
        }
        if followed.link_changed {
            self.outbox.soon(Action::Publish(BoardEvent::DeviceChanged {
                board: self.setup.id.clone(),
                link,
            }));
        }
        self.dirty = true;
        if let Some((reason, winner)) = followed.game_end {
            // Art. 6.2a1: checkmate or stalemate on the board ends the game.
            let text = match reason {
                GameEndReason::Checkmate => "MATE",
                GameEndReason::Stalemate => "STALEMATE",
            };
            self.marks.game_end = Some(text.to_owned());
            tracing::info!(board = %self.setup.id, ?reason, ?winner, "the game ended on the electronic board: clock stopped");
            if self.state(now).running.is_some() {
                let _ = self.input(
                    now,
                    wall,
                    t,
                    Input::Pause,
                    StoredEvent::Pause,
                    Caller::DAEMON,
                    None,
                    None,
                );
            }
        }
    }
}
