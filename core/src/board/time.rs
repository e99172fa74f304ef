//! Time passing: a scheduled start coming due, and flags and periods
//! falling at their exact instants, each flag a record of its own.

use super::*;

/// How far the wall clock may move against the monotonic one before a
/// scheduled start is mapped again: more than the reading jitter of the
/// two clocks (read one after the other), far less than a step that
/// matters to a round's start.
pub const WALL_SLACK: Micros = 20 * MS;

impl Board {
    /// A scheduled start follows the wall clock it was given in: when the
    /// wall clock was stepped (or slewed by more than [`WALL_SLACK`]) since
    /// the start's monotonic instant was worked out, the instant is worked
    /// out again from `now` and `wall`; a start whose wall instant has
    /// passed by the new reading is due at once, never before `now`.
    pub(super) fn follow_wall(&mut self, now: Micros, wall: i64) {
        let Some(scheduled) = self.scheduled.as_mut() else {
            return;
        };
        let mapped = now.saturating_add(scheduled.start.unix_time_us.saturating_sub(wall));
        let moved = mapped.saturating_sub(scheduled.start.at);
        if moved.saturating_abs() <= WALL_SLACK {
            return;
        }
        scheduled.start.at = mapped.max(now);
        self.dirty = true;
        tracing::info!(board = %self.setup.id, moved_ms = moved / MS,
            unix_time_us = scheduled.start.unix_time_us,
            "the wall clock moved: the scheduled start follows it");
    }

    /// A scheduled start that came due; flags and periods that fell due.
    pub(super) fn process_due(&mut self, now: Micros, wall: i64) {
        self.follow_wall(now, wall);
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
