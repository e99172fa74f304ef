//! Time passing: a scheduled start coming due, and flags and periods
//! falling at their exact instants, each flag a record of its own.

use super::*;

impl Board {
    /// A scheduled start that came due; flags and periods that fell due.
    pub(super) fn process_due(&mut self, now: Micros, wall: i64) {
        if let Some(scheduled) = self.scheduled.clone() {
            if scheduled.start.at <= now {
                self.scheduled = None;
                let t = self.t(scheduled.start.at).max(self.game.processed_to());
                let _ = self.input(
                    now,
                    wall,
                    t,
                    Input::Start,
                    StoredEvent::Start,
                    scheduled.caller,
                    None,
                    None,
                );
            }
        }
        if self.follower.next_deadline().is_some_and(|d| d <= now) {
            self.follower.tick(now);
        }
        let t = self.t(now);
        if self
            .game
            .next_deadline()
            .is_some_and(|d| d <= t && d > self.game.processed_to())
        {
            let notices = self.game.advance(t);
            self.time_notices(now, wall, &notices);
        }
    }

    /// What the passing of time caused: each flag is a record of its own, at
    /// its exact instant.
    pub(super) fn time_notices(&mut self, now: Micros, wall: i64, notices: &[Notice]) {
        // A flag already in the record (seen before a restart) is not new.
        let notices: Vec<Notice> = notices
            .iter()
            .filter(|n| !self.known_flag(n))
            .cloned()
            .collect();
        let notices = notices.as_slice();
        if notices.is_empty() {
            return;
        }
        self.dirty = true;
        self.apply_marks(notices);
        let mut by_instant: Vec<(Micros, Vec<Notice>)> = Vec::new();
        for notice in notices {
            let at = match notice {
                Notice::FlagFell { at, .. }
                | Notice::StageChanged { at, .. }
                | Notice::Frozen { at } => *at,
                _ => self.game.processed_to(),
            };
            match by_instant.last_mut() {
                Some((t, group)) if *t == at => group.push(notice.clone()),
                _ => by_instant.push((at, vec![notice.clone()])),
            }
        }
        for (at, group) in by_instant {
            for notice in &group {
                if let Notice::FlagFell {
                    side,
                    stage,
                    last_stage,
                    ..
                } = notice
                {
                    self.write_row(
                        at,
                        wall,
                        StoredEvent::Flag {
                            side: *side,
                            stage: *stage,
                            last_stage: *last_stage,
                        },
                        &Caller::DAEMON,
                        None,
                        &group,
                    );
                }
            }
            self.stage_rows(wall, &group);
            self.report(now, at, wall, &group, true);
        }
    }
}
