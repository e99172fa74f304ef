//! The board core and its game's [`Follower`] (`crate::eboard::follower`):
//! what the board tells it (the board's events, every press the engine
//! accepted, every change of the clocks, flags, the arbiter's results and
//! tags) and how the board carries out what it asks (a move count or a stop
//! placed at an earlier instant and the game re-run, commands for the
//! board's shell, the offer of a new game, journal rows, the PGN).
//!
//! Every board has a follower: without an electronic board it keeps the
//! clock record as PGN. Instants given to the follower are monotonic µs
//! (game time + the board's epoch), the base of the e-board's own events.

use super::*;
use crate::eboard::{FlagReport, FlagVerdict, FollowerAction, GameResult, StopReason};
use crate::views::{EboardView, FlagReportView, GameEndView};

/// The link to a board's electronic board.
#[derive(Clone, Debug)]
pub(super) struct EboardLink {
    pub name: String,
    pub connected: bool,
    pub serial: Option<String>,
    /// What the attached DGT clock's lever does: `presses` (a board
    /// without a button unit) or `ignored`; `None` until it moved.
    pub lever: Option<&'static str>,
}

impl EboardLink {
    pub fn new(name: &str) -> EboardLink {
        EboardLink {
            name: name.to_owned(),
            connected: false,
            serial: None,
            lever: None,
        }
    }

    pub fn view(&self, follower: &Follower) -> EboardView {
        EboardView {
            name: self.name.clone(),
            connected: self.connected,
            serial: self.serial.clone(),
            usable: follower.usable(),
            ply: follower.ply(),
            fen: follower.fen().map(str::to_owned),
            tentative: follower.tentative().map(|m| m.san.clone()),
            game_end: follower.game_end().map(|(reason, winner)| GameEndView {
                reason: match reason {
                    GameEndReason::Checkmate => "checkmate".into(),
                    GameEndReason::Stalemate => "stalemate".into(),
                },
                winner,
            }),
            flag_report: follower.flag_report().as_ref().map(flag_report_view),
            next_game_waiting: follower.next_game_waiting(),
            dgt_clock_lever: self.lever.map(str::to_owned),
        }
    }
}

/// The verdict's stable name, as in the State view and the D-Bus signal.
pub fn verdict_name(verdict: FlagVerdict) -> &'static str {
    match verdict {
        FlagVerdict::MovesCompleted => "moves-completed",
        FlagVerdict::Loss => "loss",
        FlagVerdict::Draw => "draw",
        FlagVerdict::GameAlreadyOver => "game-already-over",
    }
}

/// The display's text line for a flag report: short enough for small units.
/// `None` when the game had already ended on the board (its own text stays).
pub fn verdict_display_text(report: &FlagReport) -> Option<&'static str> {
    match report.verdict {
        FlagVerdict::MovesCompleted => Some("MOVES OK 6.4"),
        FlagVerdict::Loss => Some("LOSS"),
        FlagVerdict::Draw => Some("DRAW 6.9"),
        FlagVerdict::GameAlreadyOver => None,
    }
}

/// The report in the State view.
pub fn flag_report_view(report: &FlagReport) -> FlagReportView {
    FlagReportView {
        side: report.flagged,
        moves_completed: report.stage.map(|s| s.fulfilled),
        moves_required: report.stage.map(|s| s.required),
        moves_on_board: report.stage.map(|s| s.completed),
        opponent_can_mate: report.opponent_can_mate,
        verdict: verdict_name(report.verdict).to_owned(),
    }
}

/// The report as a board event (the D-Bus `FlagReport` signal):
/// `moves_completed` is false in sudden death, where no moves are required.
pub fn flag_report_event(board: &str, report: &FlagReport) -> BoardEvent {
    BoardEvent::FlagReport {
        board: board.to_owned(),
        side: report.flagged,
        moves_completed: report.stage.is_some_and(|s| s.fulfilled),
        opponent_can_mate: report.opponent_can_mate,
        verdict: verdict_name(report.verdict).to_owned(),
    }
}

/// The display's text for a result.
fn result_text(result: GameResult) -> &'static str {
    match result {
        GameResult::WhiteWins => "1-0",
        GameResult::BlackWins => "0-1",
        GameResult::Draw => "1/2",
    }
}

/// The journal row of a board event that belongs to the current game.
pub(super) fn board_record(event: &EboardEvent) -> Option<StoredEvent> {
    match event {
        EboardEvent::Board(crate::eboard::BoardEvent::MoveDetected(m)) => {
            Some(StoredEvent::BoardMove {
                ply: m.ply,
                side: m.side,
                side_moves: m.side_moves,
                san: m.san.clone(),
                uci: m.uci.clone(),
                fen_after: m.fen_after.clone(),
                confirmed: m.status == crate::eboard::MoveStatus::Confirmed,
            })
        }
        EboardEvent::Board(crate::eboard::BoardEvent::TakeBack { to_ply, fen, .. }) => {
            Some(StoredEvent::BoardTakeBack {
                to_ply: *to_ply,
                fen: fen.clone(),
            })
        }
        _ => None,
    }
}

impl Board {
    /// Monotonic µs of game time `t`.
    pub(super) fn mono(&self, t: Micros) -> Micros {
        t.saturating_add(self.epoch)
    }

    /// The wall clock of game time `t`, from the instant handled now.
    pub(super) fn wall_of(&self, t: Micros, now: Micros, wall: i64) -> i64 {
        wall.saturating_sub(now.saturating_sub(self.mono(t)))
    }

    /// The follower hears what an input (at game time `t`) or the passing
    /// of time caused, then the clocks as they are after it. Returns the
    /// flag reports to publish.
    pub(super) fn follower_hears(
        &mut self,
        t: Micros,
        wall_at_t: i64,
        notices: &[Notice],
        acting: bool,
    ) -> Vec<FlagReport> {
        let at = self.mono(t);
        let state = self.game.state(t);
        let mut reports = Vec::new();
        for notice in notices {
            match notice {
                Notice::Started => self.follower.on_started(wall_at_t),
                Notice::Pressed {
                    side,
                    move_number,
                    used,
                } => {
                    self.follower
                        .on_press(at, *side, *move_number, *used, &state);
                    if acting && self.eboard.is_some() {
                        // The press confirms the presser's own tentative
                        // move on the board, never the opponent's.
                        self.outbox
                            .soon(Action::Eboard(EboardCommand::ClockPressed {
                                at,
                                side: *side,
                            }));
                    }
                }
                Notice::FlagFell {
                    side,
                    at: flag_at,
                    stage,
                    ..
                } => {
                    let control = self.spec.control.for_side(*side).clone();
                    let report =
                        self.follower
                            .on_flag(self.mono(*flag_at), *side, *stage, &control);
                    if let Some(report) = report {
                        if let Some(text) = verdict_display_text(&report) {
                            self.marks.game_end = Some(text.to_owned());
                        }
                        reports.push(report);
                    }
                }
                Notice::Adjusted(adjustment) if adjustment.remaining.is_some_and(|r| r > 0) => {
                    self.withdraw_flag_report(adjustment.side)
                }
                _ => {}
            }
        }
        self.follower.on_clocks(at, wall_at_t, &state);
        reports
    }

    /// Time given back after a flag withdraws its report and verdict.
    pub(super) fn withdraw_flag_report(&mut self, side: Side) {
        if self
            .follower
            .flag_report()
            .is_some_and(|r| r.flagged == side)
        {
            self.follower.on_flag_withdrawn(side);
            if self.follower.result().is_none() && self.follower.game_end().is_none() {
                self.marks.game_end = None;
            }
        }
    }

    /// After a re-run: the follower forgets the presses from the late
    /// input's instant on and hears the re-run ones, then the clocks.
    pub(super) fn follower_rerun(&mut self, from: Micros, rerun: &game::Rerun, wall: i64) {
        self.follower.rewind(self.mono(from));
        for replayed in &rerun.replayed {
            for notice in &replayed.notices {
                if let Notice::Pressed {
                    side,
                    move_number,
                    used,
                } = notice
                {
                    self.follower.on_press(
                        self.mono(replayed.t),
                        *side,
                        *move_number,
                        *used,
                        &replayed.state,
                    );
                }
            }
        }
        for fall in &rerun.withdrawn {
            self.withdraw_flag_report(fall.side);
        }
        let t = self.game.processed_to();
        let state = self.game.state(t);
        self.follower.on_clocks(self.mono(t), wall, &state);
    }

    /// Carries out what the follower asks, until it asks nothing more.
    /// `caller` is recorded with a result row.
    pub(super) fn follow_actions(&mut self, now: Micros, wall: i64, caller: &Caller) {
        for _ in 0..64 {
            let actions = self.follower.drain();
            if actions.is_empty() {
                return;
            }
            for action in actions {
                self.follow_action(now, wall, caller, action);
            }
        }
        tracing::error!(board = %self.setup.id, "the e-board follower keeps asking; stopped after 64 rounds");
    }

    fn follow_action(&mut self, now: Micros, wall: i64, caller: &Caller, action: FollowerAction) {
        match action {
            FollowerAction::AdjustMoves { at, side, moves } => {
                if !self.setup.moves_from_eboard {
                    return;
                }
                // Just before the press it corrects: a replay in the order
                // of instants puts it there too.
                let t = at.saturating_sub(self.epoch).saturating_sub(1);
                tracing::info!(board = %self.setup.id, %side, board_moves = moves + 1,
                    "move count taken from the electronic board, before the press it corrects");
                let _ = self.input(
                    now,
                    wall,
                    t,
                    Input::Adjust(Adjustment {
                        side,
                        remaining: None,
                        moves: Some(moves),
                        stage: None,
                    }),
                    StoredEvent::Adjust {
                        side,
                        remaining_us: None,
                        moves: Some(moves),
                        stage: None,
                        source: Some(InputSource::Eboard),
                        by_us: None,
                    },
                    Caller::DAEMON,
                    None,
                    None,
                );
            }
            FollowerAction::StopClock { at, reason } => {
                self.marks.game_end = match reason {
                    StopReason::Checkmate => Some("MATE".to_owned()),
                    StopReason::Stalemate => Some("STALEMATE".to_owned()),
                    StopReason::ResultSignal | StopReason::Result => self.end_text(),
                };
                self.dirty = true;
                tracing::info!(board = %self.setup.id, ?reason, "the game is over: the clock stops");
                let t = at.saturating_sub(self.epoch).max(0);
                if self.game.state(t).running.is_none() {
                    return;
                }
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
            FollowerAction::Command(command) => {
                if self.eboard.is_some() {
                    self.outbox.soon(Action::Eboard(command));
                }
            }
            FollowerAction::OfferNewGame { .. } => {
                tracing::info!(board = %self.setup.id, "the electronic board shows a new game's starting position: `chessclockctl new {} ...` sets up the clock", self.setup.id);
                self.dirty = true;
                self.outbox.publish(BoardEvent::NewGameOffered {
                    board: self.setup.id.clone(),
                });
            }
            FollowerAction::ResultChanged {
                result,
                termination,
            } => {
                if result.is_none() {
                    self.marks.game_end = None;
                }
                self.dirty = true;
                let t = self.t(now).max(self.game.processed_to());
                self.write_row(
                    t,
                    wall,
                    StoredEvent::GameResult {
                        result,
                        termination,
                    },
                    caller,
                    None,
                    &[],
                );
            }
            FollowerAction::PgnChanged => {
                if self.outbox.pgn_after_commit() {
                    self.outbox.immediately(Action::Pgn(self.pgn_game()));
                }
            }
        }
    }

    /// The display's end-of-game text from the follower's game.
    pub(super) fn end_text(&self) -> Option<String> {
        if let Some((reason, _)) = self.follower.game_end() {
            return Some(
                match reason {
                    GameEndReason::Checkmate => "MATE",
                    GameEndReason::Stalemate => "STALEMATE",
                }
                .to_owned(),
            );
        }
        self.follower
            .result()
            .map(|(result, _)| result_text(result).to_owned())
    }

    /// A DGT clock's lever on the board: a press of the side whose lever
    /// went down when the board has no button unit (White's lever is on the
    /// `white-button` side); ignored as a press, and said so, when it has
    /// one. Either way it confirms that side's own tentative move on the
    /// board (never the opponent's): the board's shell cannot, as only the
    /// board core knows which lever is whose.
    pub(super) fn lever_pressed(&mut self, now: Micros, wall: i64, right_up: bool, at: Micros) {
        let has_buttons = self.devices.buttons.is_some();
        let Some(eboard) = self.eboard.as_mut() else {
            return;
        };
        let left = match self.setup.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        };
        // The right lever up: the left one went down.
        let side = if right_up { left } else { left.other() };
        let confirm = Action::Eboard(EboardCommand::ClockPressed {
            at: at.min(now),
            side,
        });
        if has_buttons {
            if eboard.lever.is_none() {
                tracing::warn!(board = %self.setup.id,
                    "the DGT clock's lever is ignored: this board's button unit is its clock");
                self.dirty = true;
            }
            eboard.lever = Some("ignored");
            self.outbox.soon(confirm);
            return;
        }
        if eboard.lever.is_none() {
            self.dirty = true;
        }
        eboard.lever = Some("presses");
        let lever_serial = format!(
            "dgt-clock:{}",
            eboard.serial.as_deref().unwrap_or(&eboard.name)
        );
        let t = self.t(at.min(now)).max(self.game.processed_to());
        let (input, stored) = if side == Side::Black
            && self.setup.start_on_black_press
            && !self.game.state(t).started
        {
            (Input::Start, StoredEvent::Start)
        } else {
            (Input::Press(side), StoredEvent::Press { side })
        };
        // The player's press, as a button unit's is: the device's origin
        // (`dgt-clock:` and the e-board's serial, else its port) says so
        // in the record, and no arbiter is named (issue 28 item 5).
        let origin = DeviceOrigin {
            serial: lever_serial,
            boot_id: 0,
            event: 0,
            late_us: now.saturating_sub(at).max(0),
        };
        tracing::info!(board = %self.setup.id, %side, "press from the DGT clock's lever");
        let caused = self.input(
            now,
            wall,
            t,
            input,
            stored,
            Caller::DAEMON,
            Some(origin),
            None,
        );
        // A press the engine took has sent its confirmation already (see
        // `follower_hears`); one it did not take (a paused clock, the side
        // not running) still confirms, as a lever change always did.
        let pressed = caused.is_ok_and(|notices| {
            notices
                .iter()
                .any(|n| matches!(n, Notice::Pressed { side: s, .. } if *s == side))
        });
        if !pressed {
            self.outbox.soon(confirm);
        }
    }

    /// `SetTags`: the follower checks and takes them; the journal keeps them.
    pub(super) fn set_tags(
        &mut self,
        now: Micros,
        wall: i64,
        tags: &[(String, String)],
        caller: &Caller,
    ) -> Result<(), ControlError> {
        self.follower
            .set_tags(tags)
            .map_err(ControlError::InvalidArgument)?;
        let t = self.t(now).max(self.game.processed_to());
        self.write_row(
            t,
            wall,
            StoredEvent::Tags {
                tags: tags.iter().cloned().collect(),
            },
            caller,
            None,
            &[],
        );
        self.dirty = true;
        Ok(())
    }

    /// `SetResult`: the arbiter's result (the follower stops the clock).
    pub(super) fn set_result(
        &mut self,
        now: Micros,
        wall: i64,
        result: Option<GameResult>,
        termination: Option<crate::eboard::Termination>,
        caller: &Caller,
    ) {
        let at = self.mono(self.t(now).max(self.game.processed_to()));
        self.follower.set_result(at, result, termination);
        tracing::info!(board = %self.setup.id, result = ?result, termination = ?termination,
            uid = ?caller.uid, "result entered");
        self.follow_actions(now, wall, caller);
        self.dirty = true;
    }
}
