//! Engine inputs: applied in their place (late ones re-run the game),
//! recorded, and reported (marks, board events, the e-board's PGN clocks
//! and flag reports) once committed.

use super::*;

impl Board {
    /// Applies one engine input at game time `t` and records it. Returns
    /// the input's own notices, or the engine's refusal (then nothing
    /// changed and nothing is recorded).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn input(
        &mut self,
        now: Micros,
        wall: i64,
        t: Micros,
        input: Input,
        stored: StoredEvent,
        caller: Caller,
        origin: Option<DeviceOrigin>,
        token: Option<ReplyToken>,
    ) -> Result<Vec<Notice>, ControlError> {
        if let Input::Press(side) = input {
            if t >= self.game.processed_to() {
                self.count_from_eboard(now, wall, t, side);
            }
        }
        // What time caused before the input comes first, as its own records.
        if t >= self.game.processed_to() {
            let elapsed = self.game.advance(t);
            self.time_notices(now, wall, &elapsed);
        }
        let before = matches!(input, Input::Adjust(_)).then(|| self.game.state(t));
        let row = self.history_len;
        let applied = match self.game.apply_placed(t, input, row, stored.relative_by()) {
            Ok(applied) => applied,
            Err(error) => {
                tracing::warn!(board = %self.setup.id, %error, ?input, "the engine refused an input");
                let error = engine_error(error);
                if let Some(token) = token {
                    self.outbox.reply(token, Err(error.clone()));
                }
                return Err(error);
            }
        };
        self.dirty = true;
        // What time caused before the input comes first, as its own records.
        self.time_notices(now, wall, &applied.elapsed);
        self.apply_marks(&applied.caused);
        let outcome = applied.caused.clone();
        if let Some(rerun) = &applied.rerun {
            tracing::info!(board = %self.setup.id, ?input, late_ms = (self.game.processed_to() - t) / MS,
                later_inputs = rerun.later_inputs, "a late input was placed at its instant; the game was re-run");
        }
        let answer = match record::refusal(&applied.caused) {
            Some(message) => Err(ControlError::InvalidState(message)),
            None => Ok(Reply::Done),
        };
        self.write_row_from(t, wall, stored, &caller, origin, &outcome, before.as_ref());
        self.stage_rows(wall, &outcome);
        let rerun_happened = applied.rerun.is_some();
        if let Some(rerun) = applied.rerun {
            // The rows of the inputs applied again say what they caused now.
            for replayed in rerun.replayed.iter().filter(|r| r.tag != row) {
                self.outbox
                    .after_commit(Action::ReviseHistory(Box::new(revision(replayed))));
            }
            // The follower hears the game again from the late input on.
            let wall_now = self.wall_of(self.game.processed_to(), now, wall);
            self.follower_rerun(t, &rerun, wall_now);
            self.after_rerun(now, wall, t, rerun);
        }
        self.report(now, t, wall, &outcome, !rerun_happened);
        if let Some(token) = token {
            self.outbox.reply(token, answer);
        }
        Ok(applied.caused)
    }

    /// What a re-run of the game changed about the flags, in the record:
    /// each withdrawn flag a row of its own, flags that now fell at
    /// instants already passed as flags by time.
    pub(super) fn after_rerun(&mut self, now: Micros, wall: i64, t: Micros, rerun: game::Rerun) {
        for fall in &rerun.withdrawn {
            self.flag_falls
                .retain(|f| !(f.side == fall.side && f.at == fall.at));
            self.write_row(
                t,
                wall,
                StoredEvent::FlagWithdrawn {
                    side: fall.side,
                    flag_at_us: fall.at,
                },
                &Caller::DAEMON,
                None,
                &[],
            );
            self.outbox.publish(BoardEvent::FlagWithdrawn {
                board: self.setup.id.clone(),
                side: fall.side,
                at_ms: fall.at.saturating_add(self.epoch).div_euclid(MS),
            });
        }
        self.recompute_marks();
        let added: Vec<Notice> = rerun
            .added
            .iter()
            .map(|fall| Notice::FlagFell {
                side: fall.side,
                at: fall.at,
                stage: fall.stage,
                last_stage: fall.last_stage,
            })
            .collect();
        // Flags the re-run made fall at instants already passed.
        self.time_notices(now, wall, &added);
    }

    /// A row for each stage a side reached among `notices` (who first).
    pub(super) fn stage_rows(&mut self, wall: i64, notices: &[Notice]) {
        for notice in notices {
            if let Notice::StageChanged { side, stage, at } = notice {
                let first = !self.stages_reached.contains(stage);
                if first {
                    self.stages_reached.push(*stage);
                }
                self.write_row(
                    *at,
                    wall,
                    StoredEvent::Stage {
                        side: *side,
                        stage: *stage,
                        first,
                    },
                    &Caller::DAEMON,
                    None,
                    &[],
                );
            }
        }
    }

    /// Appends a row to the journal and (after its commit) to the history;
    /// returns its index in the history.
    pub(super) fn write_row(
        &mut self,
        t: Micros,
        wall: i64,
        event: StoredEvent,
        caller: &Caller,
        origin: Option<DeviceOrigin>,
        notices: &[Notice],
    ) -> u64 {
        self.write_row_from(t, wall, event, caller, origin, notices, None)
    }

    /// [`Board::write_row`] for a correction: `before` is the clock's state
    /// just before it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_row_from(
        &mut self,
        t: Micros,
        wall: i64,
        event: StoredEvent,
        caller: &Caller,
        origin: Option<DeviceOrigin>,
        notices: &[Notice],
        before: Option<&ClockState>,
    ) -> u64 {
        let state = self.game.state(t);
        let row = history_row(
            &EventRow {
                offset_us: t,
                wall_us: wall,
                event: event.clone(),
                caller_uid: caller.uid,
                caller_name: caller.name.clone(),
                origin: origin.clone(),
            },
            notices,
            &state,
            before,
        );
        self.outbox.record(Record::Event(EventRow {
            offset_us: t,
            wall_us: wall,
            event,
            caller_uid: caller.uid,
            caller_name: caller.name.clone(),
            origin,
        }));
        self.outbox.after_commit(Action::History(Box::new(row)));
        self.history_len += 1;
        self.history_len - 1
    }

    pub(super) fn known_flag(&self, notice: &Notice) -> bool {
        matches!(notice, Notice::FlagFell { side, at, .. }
            if self.flag_falls.iter().any(|f| f.side == *side && f.at == *at))
    }

    /// The marks the display shows follow the notices.
    pub(super) fn apply_marks(&mut self, notices: &[Notice]) {
        for notice in notices {
            match notice {
                Notice::Started if self.started_at.is_none() => {
                    self.started_at = Some(self.game.processed_to());
                }
                Notice::FlagFell {
                    side,
                    at,
                    stage,
                    last_stage,
                } if !self
                    .flag_falls
                    .iter()
                    .any(|f| f.side == *side && f.at == *at) =>
                {
                    if self.marks.first_flag.is_none() {
                        self.marks.first_flag = Some(*side);
                    }
                    match side {
                        Side::White => self.marks.stage_flag_white = !last_stage,
                        Side::Black => self.marks.stage_flag_black = !last_stage,
                    }
                    self.flag_falls.push(FlagFall {
                        side: *side,
                        at: *at,
                        stage: *stage,
                        last_stage: *last_stage,
                    });
                }
                Notice::Adjusted(adjustment) if adjustment.remaining.is_some_and(|r| r > 0) => {
                    match adjustment.side {
                        Side::White => self.marks.stage_flag_white = false,
                        Side::Black => self.marks.stage_flag_black = false,
                    }
                    if self.marks.first_flag == Some(adjustment.side) {
                        // SPEC 8.2: the mark goes with this side's flag; a
                        // flag the other side still has down is now the one
                        // that fell first, and keeps the mark when this
                        // side's flag falls again.
                        let other = adjustment.side.other();
                        let state = self.game.state(self.game.processed_to());
                        let other_down = state.flags.contains(&other)
                            || match other {
                                Side::White => self.marks.stage_flag_white,
                                Side::Black => self.marks.stage_flag_black,
                            };
                        self.marks.first_flag = other_down.then_some(other);
                    }
                }
                Notice::Resumed => {
                    self.marks.arbiter_called = false;
                    self.marks.arbiter_called_at = None;
                    self.marks.arbiter_call_acknowledged = None;
                    self.marks.down_time = None;
                }
                _ => {}
            }
        }
    }

    /// After a re-run: the flag marks follow the flags that now stand.
    pub(super) fn recompute_marks(&mut self) {
        let state = self.game.state(self.game.processed_to());
        self.marks.first_flag = state.flags.first().copied();
        if !state.flags.contains(&Side::White) {
            self.marks.stage_flag_white = false;
        }
        if !state.flags.contains(&Side::Black) {
            self.marks.stage_flag_black = false;
        }
        if state.flags.is_empty() {
            // No flag stands: only the game's own end (or result) shows.
            self.marks.game_end = self.end_text();
        }
    }

    /// Turns notices into board events, beeps, the e-board's PGN clocks and
    /// flag reports.
    /// `notices` happened at game time `t`; `follow`: the follower hears
    /// them (not after a re-run, which replayed them to it already).
    pub(super) fn report(
        &mut self,
        now: Micros,
        t: Micros,
        wall: i64,
        notices: &[Notice],
        follow: bool,
    ) {
        let id = self.setup.id.clone();
        let flag_reports = if follow {
            let wall_at_t = self.wall_of(t, now, wall);
            self.follower_hears(t, wall_at_t, notices, true)
        } else {
            Vec::new()
        };
        for notice in notices {
            match notice {
                Notice::Pressed {
                    side,
                    move_number,
                    used,
                } => {
                    tracing::info!(board = %id, %side, move_number, used_ms = used / MS, "move completed");
                    self.outbox.publish(BoardEvent::Pressed {
                        board: id.clone(),
                        side: *side,
                        move_number: *move_number,
                        used_ms: used / MS,
                    });
                }
                Notice::FlagFell {
                    side,
                    at,
                    stage,
                    last_stage,
                } => {
                    tracing::info!(board = %id, %side, game_ms = at / MS, stage, last_stage, "flag fell");
                    self.outbox.publish(BoardEvent::FlagFell {
                        board: id.clone(),
                        side: *side,
                        at_ms: at.saturating_add(self.epoch).div_euclid(MS),
                        stage: *stage,
                        last_stage: *last_stage,
                    });
                }
                Notice::StageChanged { side, stage, .. } => {
                    self.outbox.publish(BoardEvent::StageChanged {
                        board: id.clone(),
                        side: *side,
                        stage: *stage,
                    });
                    if self.setup.display.beep_on_control {
                        self.beep(200, 2);
                    }
                }
                _ => {}
            }
        }
        for report in &flag_reports {
            tracing::info!(board = %id, side = %report.flagged, verdict = follow::verdict_name(report.verdict),
                "flag fall checked on the electronic board (Art. 6.4, 6.9)");
            self.outbox.publish(follow::flag_report_event(&id, report));
        }
    }

    /// With `move-count = "eboard"`, the engine's move count becomes the
    /// board's just before a press (recorded like any correction, marked as
    /// the daemon's), so stage time comes at the real N-th move.
    pub(super) fn count_from_eboard(&mut self, now: Micros, wall: i64, t: Micros, side: Side) {
        if !self.setup.moves_from_eboard {
            return;
        }
        let state = self.game.state(t);
        if state.running != Some(side) {
            return;
        }
        let Some(moves) =
            self.follower
                .count_before_press(self.mono(t), side, state.side(side).moves)
        else {
            return;
        };
        let adjustment = Adjustment {
            side,
            remaining: None,
            moves: Some(moves),
            stage: None,
        };
        tracing::info!(board = %self.setup.id, %side, engine_moves = state.side(side).moves,
            board_moves = ?adjustment.moves.map(|m| m + 1), "move count taken from the electronic board");
        let _ = self.input(
            now,
            wall,
            t,
            Input::Adjust(adjustment),
            StoredEvent::Adjust {
                side,
                remaining_us: None,
                moves: adjustment.moves,
                stage: None,
                source: Some(InputSource::Eboard),
                by_us: None,
            },
            Caller::DAEMON,
            None,
            None,
        );
    }
}

/// The revision of a history row from its input's re-run.
pub(super) fn revision(replayed: &game::Replayed) -> crate::views::RowRevision {
    let state = &replayed.state;
    crate::views::RowRevision {
        index: replayed.tag,
        outcome: replayed.notices.iter().map(record::describe).collect(),
        white_used_ms: state.white.used.div_euclid(MS),
        black_used_ms: state.black.used.div_euclid(MS),
        white_remaining_ms: state.white.remaining.map(crate::engine::report::ceil_ms),
        black_remaining_ms: state.black.remaining.map(crate::engine::report::ceil_ms),
    }
}

/// A history row: stored row `row`, what it caused (`notices`), the clock's
/// state after it and, for a correction, before it.
pub(super) fn history_row(
    row: &EventRow,
    notices: &[Notice],
    state: &ClockState,
    before: Option<&ClockState>,
) -> HistoryRow {
    use crate::engine::report::ceil_ms;
    let pressed = notices.iter().find_map(|n| match n {
        Notice::Pressed {
            move_number, used, ..
        } => Some((*move_number, used.div_euclid(MS))),
        _ => None,
    });
    let ignored = notices
        .iter()
        .find_map(|n| match n {
            Notice::Ignored { reason, .. } => Some(IgnoredReason::from(*reason)),
            _ => None,
        })
        .or(match row.event {
            StoredEvent::PressNotPlaced { .. } => Some(IgnoredReason::TooLate),
            _ => None,
        });
    let correction = match (&row.event, before) {
        (
            StoredEvent::Adjust { side, .. } | StoredEvent::PressUndone { side, .. },
            Some(before),
        ) => {
            let (was, now) = (before.side(*side), state.side(*side));
            Some(Correction {
                side: *side,
                remaining_before_ms: was.remaining.map(ceil_ms),
                remaining_after_ms: now.remaining.map(ceil_ms),
                moves_before: was.moves,
                moves_after: now.moves,
                stage_before: was.stage,
                stage_after: now.stage,
            })
        }
        _ => None,
    };
    HistoryRow {
        event: row.event.clone(),
        t_ms: row.offset_us.div_euclid(MS),
        t_us: row.offset_us,
        wall_us: row.wall_us,
        caller_uid: row.caller_uid,
        caller_name: row.caller_name.clone(),
        device: row.origin.as_ref().map(DeviceOriginView::from),
        outcome: notices.iter().map(record::describe).collect(),
        white_used_ms: state.white.used.div_euclid(MS),
        black_used_ms: state.black.used.div_euclid(MS),
        white_remaining_ms: state.white.remaining.map(ceil_ms),
        black_remaining_ms: state.black.remaining.map(ceil_ms),
        white_moves: state.white.moves,
        black_moves: state.black.moves,
        move_number: pressed.map(|p| p.0),
        move_used_ms: pressed.map(|p| p.1),
        ignored,
        correction,
    }
}
