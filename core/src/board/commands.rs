//! An arbiter's commands (new game, start, scheduled start, pause,
//! resume, press, correction) and the configuration's reload.

use super::*;

impl Board {
    /// The command's answer (its refusal too): it goes out with the view
    /// taken at the end of the input, never ahead of it (`Outbox::reply`).
    pub(super) fn answer(
        &mut self,
        token: Option<ReplyToken>,
        result: Result<Reply, ControlError>,
    ) {
        if let Some(token) = token {
            self.outbox.reply(token, result);
        }
    }

    pub(super) fn command(
        &mut self,
        now: Micros,
        wall: i64,
        token: Option<ReplyToken>,
        caller: Caller,
        command: BoardCommand,
    ) {
        self.outbox.command_begins();
        // Who asks is stored with what they do: bounded like every other
        // string a caller gives (`crate::limits`).
        if let Some(name) = &caller.name {
            if let Err(error) = crate::limits::check_bytes(
                "the caller's name",
                name,
                crate::limits::MAX_CALLER_NAME,
            ) {
                self.answer(token, Err(ControlError::InvalidArgument(error)));
                return;
            }
        }
        let t = self.t(now).max(self.game.processed_to());
        let (input, stored) = match command {
            BoardCommand::NewGame(spec) => {
                let result = self.new_game(now, wall, spec, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::StartAt {
                unix_time_us,
                forced,
            } => {
                let result = self.start_at(now, wall, unix_time_us, forced, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::SetTags(tags) => {
                let result = self.set_tags(now, wall, &tags, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::SetResult {
                result,
                termination,
            } => {
                self.set_result(now, wall, result, termination, &caller);
                self.reply_after_commit(token, Ok(()));
                return;
            }
            BoardCommand::CancelStart => {
                let result = self.cancel_start(now, wall, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::Note(text) => {
                let result = self.note(now, wall, &text, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::AckCall => {
                let result = self.ack_call(now, wall, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::UndoPress => {
                let result = self.undo_press(now, wall, &caller);
                self.reply_after_commit(token, result);
                return;
            }
            BoardCommand::AdjustBy { side, delta_ms } => {
                match relative(
                    side,
                    &self.game.state(t),
                    delta_ms,
                    crate::clocktext::Style::tenths_below_ms(self.setup.display.tenths_below_ms),
                ) {
                    Ok(adjustment) => (
                        Input::Adjust(adjustment),
                        StoredEvent::Adjust {
                            side,
                            remaining_us: adjustment.remaining,
                            moves: None,
                            stage: None,
                            source: None,
                            by_us: Some(delta_ms.saturating_mul(MS)),
                        },
                    ),
                    Err(error) => {
                        self.answer(token, Err(error));
                        return;
                    }
                }
            }
            BoardCommand::Start => (Input::Start, StoredEvent::Start),
            BoardCommand::Pause => (Input::Pause, StoredEvent::Pause),
            BoardCommand::Resume => (Input::Resume, StoredEvent::Resume),
            BoardCommand::Press(side) => (Input::Press(side), StoredEvent::Press { side }),
            BoardCommand::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            } => match adjustment(side, remaining_ms, moves, stage) {
                Ok(adjustment) => (
                    Input::Adjust(adjustment),
                    StoredEvent::Adjust {
                        side,
                        remaining_us: adjustment.remaining,
                        moves,
                        stage,
                        source: None,
                        by_us: None,
                    },
                ),
                Err(error) => {
                    self.answer(token, Err(error));
                    return;
                }
            },
        };
        let applied = self.input(now, wall, t, input, stored, caller, None, token);
        if let (Input::Press(side), Ok(notices)) = (input, &applied) {
            if notices.iter().any(|n| matches!(n, Notice::Pressed { .. })) {
                self.arbiter_presses.push((t, side));
            }
        }
    }

    /// The command's reply: once its records are committed, with the view
    /// of all it did (see `Outbox::reply`).
    fn reply_after_commit(&mut self, token: Option<ReplyToken>, result: Result<(), ControlError>) {
        self.answer(token, result.map(|()| Reply::Done));
    }

    pub(super) fn cancel_start(
        &mut self,
        now: Micros,
        wall: i64,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        let Some(scheduled) = self.scheduled.take() else {
            return Err(ControlError::InvalidState(format!(
                "no start is scheduled on board `{}`",
                self.setup.id
            )));
        };
        let t = self.t(now).max(self.game.processed_to());
        self.write_row(
            t,
            wall,
            StoredEvent::StartCancelled {
                unix_time_us: scheduled.start.unix_time_us,
            },
            caller,
            None,
            &[],
        );
        self.dirty = true;
        tracing::info!(board = %self.setup.id, unix_time_us = scheduled.start.unix_time_us, "scheduled start cancelled");
        Ok(())
    }

    pub(super) fn note(
        &mut self,
        now: Micros,
        wall: i64,
        text: &str,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ControlError::InvalidArgument(
                "the note is empty: give the text to record".into(),
            ));
        }
        crate::limits::check_chars("the note", text, crate::limits::MAX_NOTE)
            .map_err(ControlError::InvalidArgument)?;
        if text.chars().any(char::is_control) {
            return Err(ControlError::InvalidArgument(
                "the note must be one line of text (no control characters)".into(),
            ));
        }
        let t = self.t(now).max(self.game.processed_to());
        self.write_row(
            t,
            wall,
            StoredEvent::Note {
                text: text.to_owned(),
            },
            caller,
            None,
            &[],
        );
        Ok(())
    }

    /// Acknowledges the standing arbiter call: a `call-acknowledged` row
    /// with the caller, and the mark readers show until a resume answers
    /// the call. Refused when no call stands, or when one arbiter already
    /// acknowledged it (two arbiters must not both think the other goes).
    pub(super) fn ack_call(
        &mut self,
        now: Micros,
        wall: i64,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        if !self.marks.arbiter_called {
            return Err(ControlError::InvalidState(format!(
                "no arbiter call stands on board `{}`: there is nothing to acknowledge",
                self.setup.id
            )));
        }
        if let Some((by, _)) = &self.marks.arbiter_call_acknowledged {
            return Err(ControlError::InvalidState(format!(
                "the arbiter call on board `{}` was already acknowledged by {by}; \
                 resume the clock when the call is dealt with",
                self.setup.id
            )));
        }
        let t = self.t(now).max(self.game.processed_to());
        let by = caller_words(caller);
        tracing::info!(board = %self.setup.id, %by, "the arbiter call was acknowledged");
        self.marks.arbiter_call_acknowledged = Some((by, t));
        self.dirty = true;
        self.write_row(t, wall, StoredEvent::CallAcknowledged, caller, None, &[]);
        Ok(())
    }

    /// Takes back the arbiter's last press: the game is re-run without it.
    pub(super) fn undo_press(
        &mut self,
        now: Micros,
        wall: i64,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        let Some(&(at, side)) = self.arbiter_presses.last() else {
            return Err(ControlError::InvalidState(format!(
                "there is no press by the arbiter to undo on board `{}` (presses on the \
                 buttons are the players' own: correct the clock with adjust)",
                self.setup.id
            )));
        };
        let later = self
            .game
            .inputs()
            .iter()
            .filter(|entry| entry.t > at && matches!(entry.input, Input::Press(_)))
            .count();
        if later > 0 {
            return Err(ControlError::InvalidState(format!(
                "the arbiter's press for {side} at {} of the game was followed by {later} \
                 press{}: it can no longer be undone; correct the clock with adjust",
                crate::clocktext::exact(at),
                if later == 1 { "" } else { "es" }
            )));
        }
        let t = self.t(now).max(self.game.processed_to());
        let before = self.game.state(t);
        let applied = match self.game.remove(at, Input::Press(side)) {
            Some(Ok(applied)) => applied,
            Some(Err(error)) => return Err(engine_error(error)),
            None => {
                self.arbiter_presses.pop();
                return Err(ControlError::InvalidState(
                    "the arbiter's last press is no longer in the game".into(),
                ));
            }
        };
        self.arbiter_presses.pop();
        self.dirty = true;
        tracing::info!(board = %self.setup.id, %side, press_at_us = at, "the arbiter's press was undone");
        self.write_row_from(
            t,
            wall,
            StoredEvent::PressUndone {
                side,
                press_at_us: at,
            },
            caller,
            None,
            &[],
            Some(&before),
        );
        if let Some(rerun) = applied.rerun {
            self.after_rerun(now, wall, t, rerun);
        }
        Ok(())
    }

    pub(super) fn in_progress(&self, now: Micros) -> bool {
        let state = self.state(now);
        state.started && !state.frozen && state.flags.is_empty()
    }

    pub(super) fn new_game(
        &mut self,
        now: Micros,
        wall: i64,
        spec: GameSpec,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        if self.in_progress(now) && self.state(now).running.is_some() {
            return Err(ControlError::InvalidState(format!(
                "a game is running on board `{}`: pause it first (chessclockctl pause {})",
                self.setup.id, self.setup.id
            )));
        }
        // A start scheduled for the old game does not carry over: its
        // record says so.
        if let Some(scheduled) = self.scheduled.take() {
            let t = self.t(now).max(self.game.processed_to());
            self.write_row(
                t,
                wall,
                StoredEvent::StartCancelled {
                    unix_time_us: scheduled.start.unix_time_us,
                },
                caller,
                None,
                &[],
            );
        }
        tracing::info!(board = %self.setup.id, control = %spec.text, uid = ?caller.uid, "new game");
        self.replace_game(now, wall, spec, caller.uid);
        Ok(())
    }

    /// The board's game becomes a new one of `spec` (devices, links and
    /// the units' event records stay).
    pub(super) fn replace_game(
        &mut self,
        now: Micros,
        wall: i64,
        spec: GameSpec,
        caller_uid: Option<u32>,
    ) {
        let mut fresh = Board::blank(
            self.setup.clone(),
            spec,
            self.boot_id.clone(),
            now,
            wall,
            caller_uid,
        );
        fresh.devices.carry_over(&self.devices);
        fresh.marks.buttons_lost = self.marks.buttons_lost;
        fresh.outbox = std::mem::take(&mut self.outbox);
        fresh.eboard.clone_from(&self.eboard);
        // The follower goes on to the next game: the board may already be
        // following it (its moves come along into the new game's journal).
        let mut follower = std::mem::replace(&mut self.follower, fresh.follower.clone());
        let promoted = follower.new_game(self.setup.pgn_tags.clone(), &fresh.spec.control);
        fresh.follower = follower;
        *self = fresh;
        self.outbox.record(Record::NewGame {
            control: self.spec.text.clone(),
            settings: self.spec.settings,
            epoch: now,
            caller_uid,
            wall_us: wall,
            boot_id: self.boot_id.clone(),
        });
        self.outbox
            .after_commit(Action::NewHistory(Box::new(self.header.clone())));
        for m in promoted {
            let event = EboardEvent::Board(crate::eboard::BoardEvent::MoveDetected(m));
            if let Some(stored) = follow::board_record(&event) {
                self.write_row(0, wall, stored, &Caller::DAEMON, None, &[]);
            }
        }
        self.outbox.after_commit(Action::Pgn(self.pgn_game()));
        self.dirty = true;
    }

    pub(super) fn start_at(
        &mut self,
        now: Micros,
        wall: i64,
        unix_time_us: i64,
        forced: bool,
        caller: &Caller,
    ) -> Result<(), ControlError> {
        if self.state(now).started {
            return Err(ControlError::InvalidState(format!(
                "the game on board `{}` has already started",
                self.setup.id
            )));
        }
        let ahead = unix_time_us.saturating_sub(wall);
        if ahead < -SECOND {
            return Err(ControlError::InvalidArgument(format!(
                "the start time is {} s in the past",
                -ahead / SECOND
            )));
        }
        if ahead > MAX_TIME {
            return Err(ControlError::InvalidArgument(format!(
                "the start time is more than {} hours away",
                MAX_TIME / (3_600 * SECOND)
            )));
        }
        let at = now.saturating_add(ahead.max(0));
        let replaces_unix_us = self.scheduled.as_ref().map(|s| s.start.unix_time_us);
        self.scheduled = Some(Scheduled {
            start: ScheduledStart {
                at,
                unix_time_us,
                forced,
            },
            caller: caller.clone(),
        });
        let t = self.t(now).max(self.game.processed_to());
        self.write_row(
            t,
            wall,
            StoredEvent::StartAt {
                unix_time_us,
                forced,
                replaces_unix_us,
            },
            caller,
            None,
            &[],
        );
        self.dirty = true;
        tracing::info!(board = %self.setup.id, unix_time_us, in_ms = ahead / MS, forced, "start scheduled");
        Ok(())
    }

    pub(super) fn reconfigure(
        &mut self,
        now: Micros,
        wall: i64,
        setup: BoardSetup,
        spec: GameSpec,
    ) {
        if setup.buttons != self.setup.buttons
            || setup.displays != self.setup.displays
            || setup.eboard != self.setup.eboard
        {
            tracing::warn!(board = %self.setup.id, "changed devices need a daemon restart");
        }
        let devices = (
            self.setup.buttons.clone(),
            self.setup.displays.clone(),
            self.setup.eboard.clone(),
        );
        self.setup = BoardSetup {
            buttons: devices.0,
            displays: devices.1,
            eboard: devices.2,
            ..setup
        };
        self.devices
            .reconfigure(&self.setup.display, self.setup.white_button);
        if self.in_progress(now) {
            tracing::info!(board = %self.setup.id, "config reload: the game in progress keeps its control");
        } else if !self.state(now).started && spec.text != self.spec.text {
            self.replace_game(now, wall, spec, None);
        }
        self.dirty = true;
    }
}

/// An arbiter's correction from a command's values, bounded by what a game
/// can have.
fn adjustment(
    side: Side,
    remaining_ms: Option<i64>,
    moves: Option<u32>,
    stage: Option<u32>,
) -> Result<Adjustment, ControlError> {
    let remaining = match remaining_ms {
        None => None,
        Some(ms) if ms < 0 => {
            return Err(ControlError::InvalidArgument(
                "remaining time must not be negative".into(),
            ))
        }
        Some(ms) if ms > MAX_TIME / MS => {
            return Err(ControlError::InvalidArgument(format!(
                "a remaining time of {ms} ms is more than a game can have (at most {} h)",
                MAX_TIME / (3_600 * SECOND)
            )))
        }
        Some(ms) => Some(ms * MS),
    };
    if remaining.is_none() && moves.is_none() && stage.is_none() {
        return Err(ControlError::InvalidArgument(
            "nothing to adjust: give the remaining time, the moves or the stage".into(),
        ));
    }
    Ok(Adjustment {
        side,
        remaining,
        moves,
        stage,
    })
}

/// A relative correction of `side`'s remaining time in `state` (the instant
/// of the command), bounded like any correction.
/// `style`: how the board's displays write times (the refusal says the
/// time as the arbiter sees it).
fn relative(
    side: Side,
    state: &ClockState,
    delta_ms: i64,
    style: crate::clocktext::Style,
) -> Result<Adjustment, ControlError> {
    if delta_ms == 0 {
        return Err(ControlError::InvalidArgument(
            "nothing to adjust: the time to add or take away is zero".into(),
        ));
    }
    let delta = delta_ms.saturating_mul(MS);
    if delta.unsigned_abs() > MAX_TIME.unsigned_abs() {
        return Err(ControlError::InvalidArgument(format!(
            "{delta_ms} ms is more than a game can have (at most {} h)",
            MAX_TIME / (3_600 * SECOND)
        )));
    }
    let Some(remaining) = state.side(side).remaining else {
        return Err(ControlError::InvalidState(format!(
            "{side}'s clock counts up (no time limit): there is no remaining time to add to"
        )));
    };
    let remaining = remaining.max(0);
    let result = remaining.saturating_add(delta);
    if result < 0 {
        return Err(ControlError::InvalidArgument(format!(
            "{side} has {} left: taking {} away would leave less than nothing \
             (take at most {}, or set the time with --remaining)",
            crate::clocktext::remaining(remaining, style),
            crate::clocktext::amount(-delta),
            // Rounded down: taking that much always leaves something.
            crate::clocktext::elapsed(remaining, crate::clocktext::Style::SECONDS),
        )));
    }
    if result > MAX_TIME {
        return Err(ControlError::InvalidArgument(format!(
            "{side} would have more than a game can have (at most {} h)",
            MAX_TIME / (3_600 * SECOND)
        )));
    }
    Ok(Adjustment {
        side,
        remaining: Some(result),
        moves: None,
        stage: None,
    })
}

/// Who a caller is, in words (as the record's `who`): the name, else the
/// uid, else the daemon itself.
pub(super) fn caller_words(caller: &Caller) -> String {
    match (&caller.name, caller.uid) {
        (Some(name), _) => name.clone(),
        (None, Some(uid)) => format!("uid {uid}"),
        (None, None) => "chessclockd".to_owned(),
    }
}
