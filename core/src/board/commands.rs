//! An arbiter's commands (new game, start, scheduled start, pause,
//! resume, press, correction) and the configuration's reload.

use super::*;

impl Board {
    pub(super) fn reply_now(
        &mut self,
        token: Option<ReplyToken>,
        result: Result<Reply, ControlError>,
    ) {
        if let Some(token) = token {
            self.outbox.soon(Action::Reply { token, result });
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
        let t = self.t(now).max(self.game.processed_to());
        let (input, stored) = match command {
            BoardCommand::NewGame(spec) => {
                let result = self.new_game(now, wall, spec, &caller);
                match result {
                    Ok(()) => {
                        if let Some(token) = token {
                            self.outbox.after_commit(Action::Reply {
                                token,
                                result: Ok(Reply::Done),
                            });
                        }
                    }
                    Err(error) => self.reply_now(token, Err(error)),
                }
                return;
            }
            BoardCommand::StartAt {
                unix_time_us,
                forced,
            } => {
                let result = self.start_at(now, wall, unix_time_us, forced, &caller);
                match result {
                    Ok(()) => {
                        if let Some(token) = token {
                            self.outbox.after_commit(Action::Reply {
                                token,
                                result: Ok(Reply::Done),
                            });
                        }
                    }
                    Err(error) => self.reply_now(token, Err(error)),
                }
                return;
            }
            BoardCommand::SetTags(tags) => {
                match self.set_tags(now, wall, &tags, &caller) {
                    Ok(()) => {
                        if let Some(token) = token {
                            self.outbox.after_commit(Action::Reply {
                                token,
                                result: Ok(Reply::Done),
                            });
                        }
                    }
                    Err(error) => self.reply_now(token, Err(error)),
                }
                return;
            }
            BoardCommand::SetResult {
                result,
                termination,
            } => {
                self.set_result(now, wall, result, termination, &caller);
                if let Some(token) = token {
                    self.outbox.after_commit(Action::Reply {
                        token,
                        result: Ok(Reply::Done),
                    });
                }
                return;
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
                    },
                ),
                Err(error) => {
                    self.reply_now(token, Err(error));
                    return;
                }
            },
        };
        let _ = self.input(now, wall, t, input, stored, caller, None, token);
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
        self.outbox.after_commit(Action::Pgn(self.pgn()));
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
