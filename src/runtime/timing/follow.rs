//! The glue between the timing loop and each board's [`Follower`], kept in
//! one place so that it ports as it is into the board core: what the loop
//! tells the follower (the board's events, every press the engine accepted,
//! every change of the clocks, flags, the arbiter's results and tags) and
//! how it carries out what the follower asks (a move count or a stop
//! inserted at an earlier instant and the engine re-run, commands for the
//! board's shell, the offer of a new game, journal rows, the PGN file).
//!
//! Instants given to the follower are monotonic µs (engine instant + the
//! board's epoch), the base of the e-board's own events.
//!
//! The re-run ([`Timing::insert_and_rerun`]) is this loop's stand-in for the
//! board core's: the inserted input goes into the history at its instant
//! (an adjustment that corrects a press is stored 1 µs before it, so a
//! restart, which replays the stored inputs in the order of their instants,
//! puts it there too), a fresh engine replays every stored input, and the
//! follower hears the presses from that instant on again.

use super::*;
use crate::eboard::{FlagReport, FollowerAction, GameResult, StopReason};

/// The monotonic instant of engine instant `t`.
fn mono(board: &Board, t: Micros) -> Micros {
    t + board.epoch
}

/// The wall clock of monotonic instant `at` (for the PGN's ReferenceTime).
fn wall_of(at: Micros) -> i64 {
    wall_now_us() - (monotonic_now_us() - at)
}

/// Before a press (`move-count = "eboard"`): the board's count when it is
/// ahead of the engine's, as the adjustment to apply first.
pub(super) fn count_before_press(
    board: &Board,
    t: Micros,
    side: Side,
    engine_moves: u32,
) -> Option<Adjustment> {
    let moves = board
        .follower
        .count_before_press(mono(board, t), side, engine_moves)?;
    Some(Adjustment {
        side,
        remaining: None,
        moves: Some(moves),
        stage: None,
    })
}

/// After the engine took an input (or the passing of time caused
/// something): the follower hears of the start, each press, each flag and
/// time given back, then the clocks as they are now. Returns the flag
/// reports to publish.
pub(super) fn on_notices(
    board: &mut Board,
    notices: &[Notice],
    outbox: &mut Outbox,
) -> Vec<FlagReport> {
    let at = mono(board, board.floor);
    on_notices_at(board, notices, wall_of(at), Some(outbox))
}

fn on_notices_at(
    board: &mut Board,
    notices: &[Notice],
    wall: i64,
    mut outbox: Option<&mut Outbox>,
) -> Vec<FlagReport> {
    let t = board.floor;
    let at = mono(board, t);
    let state = board.engine.state(t);
    let mut reports = Vec::new();
    for notice in notices {
        match notice {
            Notice::Started => board.follower.on_started(wall),
            Notice::Pressed {
                side,
                move_number,
                used,
            } => {
                board
                    .follower
                    .on_press(at, *side, *move_number, *used, &state);
                if let (Some(_), Some(outbox)) = (&board.eboard, outbox.as_deref_mut()) {
                    // The press confirms a tentative move on the board.
                    outbox
                        .eboard
                        .push((board.config.id.clone(), EboardCommand::ClockPressed { at }));
                }
            }
            Notice::FlagFell {
                side,
                at: flag_at,
                stage,
                ..
            } => {
                if let Some(report) = flag(board, *side, *flag_at, *stage) {
                    reports.push(report);
                }
            }
            Notice::Adjusted(adjustment) if adjustment.remaining.is_some_and(|r| r > 0) => {
                withdraw_flag(board, adjustment.side)
            }
            _ => {}
        }
    }
    board.follower.on_clocks(at, wall, &state);
    reports
}

/// A flag fell: the follower's Art. 6.4 / 6.9 report (kept for the State
/// JSON and shown on the display).
fn flag(board: &mut Board, side: Side, flag_at: Micros, stage: u32) -> Option<FlagReport> {
    let control = board.engine.control().for_side(side).clone();
    let at = mono(board, flag_at);
    let report = board.follower.on_flag(at, side, stage, &control);
    if let Some(eboard) = board.eboard.as_mut() {
        eboard.flag_report = report
            .as_ref()
            .map(crate::runtime::eboard::flag_report_json);
    }
    if let Some(text) = report
        .as_ref()
        .and_then(crate::runtime::eboard::verdict_display_text)
    {
        board.marks.game_end = Some(text.to_owned());
    }
    report
}

/// Time given back after a flag withdraws its report and verdict.
fn withdraw_flag(board: &mut Board, side: Side) {
    let Some(eboard) = board.eboard.as_mut() else {
        return;
    };
    if eboard
        .flag_report
        .as_ref()
        .is_some_and(|r| r["side"] == side.as_str())
    {
        eboard.flag_report = None;
        board.follower.on_flag_withdrawn(side);
        if board.follower.result().is_none() {
            board.marks.game_end = None;
        }
    }
}

/// Rebuilding a stored game: the follower hears each stored row as it
/// heard it live (without acting on anything).
pub(super) fn replay_row(board: &mut Board, row: &EventRow, notices: &[Notice]) {
    let at = mono(board, row.offset_us);
    match &row.event {
        StoredEvent::BoardMove { .. } | StoredEvent::BoardTakeBack { .. } => {
            if let Some(event) = board_event_of(&row.event, at) {
                board.follower.on_board_event(&event);
            }
        }
        StoredEvent::Tags { tags } => {
            let tags: Vec<(String, String)> =
                tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            if let Err(error) = board.follower.set_tags(&tags) {
                tracing::warn!(board = %board.config.id, %error, "a stored tag was refused");
            }
        }
        StoredEvent::GameResult {
            result,
            termination,
        } => board.follower.restore_result(at, *result, *termination),
        _ => {}
    }
    on_notices_at(board, notices, row.wall_us, None);
}

/// After a restart: the display's end-of-game text from what was rebuilt.
pub(super) fn restore_marks(board: &mut Board) {
    if board.marks.game_end.is_none() {
        board.marks.game_end = end_text(board);
    }
}

fn end_text(board: &Board) -> Option<String> {
    if let Some((reason, _)) = board.follower.game_end() {
        return Some(
            match reason {
                GameEndReason::Checkmate => "MATE",
                GameEndReason::Stalemate => "STALEMATE",
            }
            .to_owned(),
        );
    }
    board
        .follower
        .result()
        .map(|(result, _)| result_text(result).to_owned())
}

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

/// The moves of the board's next game, made before the arbiter's `new`,
/// go into the new game's journal.
pub(super) fn journal_promoted(
    board: &mut Board,
    moves: &[crate::eboard::DetectedMove],
    outbox: &mut Outbox,
) {
    for m in moves {
        let event = EboardEvent::Board(crate::eboard::BoardEvent::MoveDetected(m.clone()));
        if let Some(stored) = board_record(&event) {
            let row = EventRow {
                offset_us: board.floor,
                wall_us: wall_now_us(),
                event: stored,
                caller_uid: None,
                origin: None,
            };
            board.log_entry(row.clone(), &[]);
            outbox.jobs.push(Job {
                board: board.config.id.clone(),
                record: Some(Record::Event(row)),
                ..Job::default()
            });
        }
    }
}

impl Timing {
    /// [`Timing::follow_actions`], its events published with the board's
    /// new state.
    pub(super) fn follow_actions_published(
        config: &Config,
        board: &mut Board,
        outbox: &mut Outbox,
    ) {
        let mut events = Vec::new();
        Self::follow_actions(config, board, Caller { uid: None }, &mut events, outbox);
        if !events.is_empty() {
            let mono = board.floor + board.epoch;
            events.push(BoardEvent::StateChanged(board.snapshot(mono)));
            outbox.jobs.push(Job {
                board: board.config.id.clone(),
                events,
                ..Job::default()
            });
        }
    }

    /// Carries out what the follower asks, until it asks nothing more.
    /// `caller` is recorded with a result row (the arbiter's).
    pub(super) fn follow_actions(
        config: &Config,
        board: &mut Board,
        caller: Caller,
        events: &mut Vec<BoardEvent>,
        outbox: &mut Outbox,
    ) {
        loop {
            let actions = board.follower.drain();
            if actions.is_empty() {
                return;
            }
            for action in actions {
                Self::follow_action(config, board, caller, action, events, outbox);
            }
        }
    }

    fn follow_action(
        config: &Config,
        board: &mut Board,
        caller: Caller,
        action: FollowerAction,
        events: &mut Vec<BoardEvent>,
        outbox: &mut Outbox,
    ) {
        let id = board.config.id.clone();
        match action {
            FollowerAction::AdjustMoves { at, side, moves } => {
                if config.engine.move_count != MoveCountSource::Eboard {
                    return;
                }
                let t = at - board.epoch;
                tracing::info!(board = %id, %side, board_moves = moves + 1,
                    "move count taken from the electronic board, before the press it corrects");
                let row = EventRow {
                    // Just before the press it corrects (see the module docs).
                    offset_us: t - 1,
                    wall_us: wall_now_us(),
                    event: StoredEvent::Adjust {
                        side,
                        remaining_us: None,
                        moves: Some(moves),
                        stage: None,
                        source: Some(super::super::eboard::InputSource::Eboard),
                    },
                    caller_uid: None,
                    origin: None,
                };
                Self::insert_and_rerun(board, row, events, outbox);
            }
            FollowerAction::StopClock { at, reason } => {
                board.marks.game_end = match reason {
                    StopReason::Checkmate => Some("MATE".to_owned()),
                    StopReason::Stalemate => Some("STALEMATE".to_owned()),
                    StopReason::ResultSignal | StopReason::Result => end_text(board),
                };
                tracing::info!(board = %id, ?reason, "the game is over: the clock stops");
                if board.engine.state(board.floor).running.is_none() {
                    return;
                }
                let t = (at - board.epoch).max(0);
                if t >= board.floor {
                    Self::apply_input(
                        config,
                        board,
                        t,
                        Input::Pause,
                        StoredEvent::Pause,
                        Caller { uid: None },
                        None,
                        events,
                        outbox,
                        None,
                        None,
                    );
                } else {
                    let row = EventRow {
                        offset_us: t,
                        wall_us: wall_now_us(),
                        event: StoredEvent::Pause,
                        caller_uid: None,
                        origin: None,
                    };
                    Self::insert_and_rerun(board, row, events, outbox);
                }
            }
            FollowerAction::Command(command) => {
                if board.eboard.is_some() {
                    outbox.eboard.push((id, command));
                }
            }
            FollowerAction::OfferNewGame { .. } => {
                tracing::info!(board = %id, "the electronic board shows a new game's starting position: `chessclockctl new {id} ...` sets up the clock");
                events.push(BoardEvent::NewGameOffered { board: id });
            }
            FollowerAction::ResultChanged {
                result,
                termination,
            } => {
                if result.is_none() {
                    board.marks.game_end = None;
                }
                let row = EventRow {
                    offset_us: board.t(monotonic_now_us()),
                    wall_us: wall_now_us(),
                    event: StoredEvent::GameResult {
                        result,
                        termination,
                    },
                    caller_uid: caller.uid,
                    origin: None,
                };
                board.log_entry(row.clone(), &[]);
                outbox.jobs.push(Job {
                    board: id,
                    record: Some(Record::Event(row)),
                    ..Job::default()
                });
            }
            FollowerAction::PgnChanged => {
                if let (Some(_), Some(dir)) = (&board.eboard, &config.daemon.pgn_dir) {
                    outbox.pgn.push((id, dir.clone(), board.follower.render()));
                }
            }
        }
    }

    /// Inserts a stored input at its (earlier) instant and re-runs the
    /// engine over the whole history; the follower hears the re-run presses
    /// and the clocks; stage changes the re-run made are published.
    fn insert_and_rerun(
        board: &mut Board,
        row: EventRow,
        events: &mut Vec<BoardEvent>,
        outbox: &mut Outbox,
    ) {
        let from = row.offset_us;
        let before = board.engine.state(board.floor);
        let index = board.log.partition_point(|e| e.row.offset_us <= from);
        board.log.insert(
            index,
            LogEntry {
                row: row.clone(),
                outcome: Vec::new(),
                white_used: 0,
                black_used: 0,
                white_remaining: None,
                black_remaining: None,
            },
        );
        let mut engine = Engine::new(board.engine.control().clone(), board.engine.settings());
        let mut floor = 0;
        let mut heard: Vec<(Micros, Vec<Notice>, ClockState)> = Vec::new();
        for entry in &mut board.log {
            let Some(input) = stored_input(&entry.row.event) else {
                continue;
            };
            let at = entry.row.offset_us.max(floor);
            let notices = match engine.apply(at, input) {
                Ok(notices) => {
                    floor = at;
                    notices
                }
                Err(error) => {
                    tracing::error!(board = %board.config.id, %error, "a re-run input was refused");
                    Vec::new()
                }
            };
            if entry.row.offset_us >= from {
                let state = engine.state(at);
                entry.outcome = notices.iter().map(describe).collect();
                entry.white_used = state.white.used;
                entry.black_used = state.black.used;
                entry.white_remaining = state.white.remaining;
                entry.black_remaining = state.black.remaining;
                heard.push((at, notices, state));
            }
        }
        let until = board.floor.max(floor);
        engine.advance(until);
        board.engine = engine;
        board.floor = until;
        board.follower.rewind(mono(board, from));
        for (at, notices, state) in &heard {
            for notice in notices {
                if let Notice::Pressed {
                    side,
                    move_number,
                    used,
                } = notice
                {
                    let at = mono(board, *at);
                    board
                        .follower
                        .on_press(at, *side, *move_number, *used, state);
                }
            }
        }
        let after = board.engine.state(until);
        let at = mono(board, until);
        board.follower.on_clocks(at, wall_of(at), &after);
        for side in Side::BOTH {
            let stage = after.side(side).stage;
            if stage != before.side(side).stage {
                events.push(BoardEvent::StageChanged {
                    board: board.config.id.clone(),
                    side,
                    stage,
                });
            }
        }
        outbox.jobs.push(Job {
            board: board.config.id.clone(),
            record: Some(Record::Event(row)),
            ..Job::default()
        });
    }

    /// A DGT clock's lever on the board: a press of the side whose lever
    /// went down when the board has no button unit (White's lever is on the
    /// `white-button` side); ignored, and said so, when it has one.
    pub(super) fn lever_pressed(
        config: &Config,
        board: &mut Board,
        right_up: bool,
        at: Micros,
        outbox: &mut Outbox,
    ) {
        let has_buttons = board.buttons.is_some();
        let Some(eboard) = board.eboard.as_mut() else {
            return;
        };
        if has_buttons {
            if eboard.lever.is_none() {
                tracing::warn!(board = %board.config.id,
                    "the DGT clock's lever is ignored: this board's button unit is its clock");
            }
            eboard.lever = Some("ignored");
            return;
        }
        eboard.lever = Some("presses");
        let left = match board.config.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        };
        // The right lever up: the left one went down.
        let side = if right_up { left } else { left.other() };
        let t = (at - board.epoch).max(board.floor);
        let (input, stored) = if side == Side::Black
            && board.config.start_on_black_press
            && !board.engine.state(t).started
        {
            (Input::Start, StoredEvent::Start)
        } else {
            (Input::Press(side), StoredEvent::Press { side })
        };
        tracing::info!(board = %board.config.id, %side, "press from the DGT clock's lever");
        let mut events = Vec::new();
        Self::apply_input(
            config,
            board,
            t,
            input,
            stored,
            Caller { uid: None },
            None,
            &mut events,
            outbox,
            None,
            None,
        );
    }

    /// `Command::SetTags`: the follower checks and takes them; the journal
    /// keeps them for a restart.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_tags(
        config: &Config,
        board: &mut Board,
        tags: &[(String, String)],
        caller: Caller,
        now: Micros,
        events: &mut Vec<BoardEvent>,
        outbox: &mut Outbox,
    ) -> Result<Reply, ControlError> {
        board
            .follower
            .set_tags(tags)
            .map_err(ControlError::InvalidArgument)?;
        let row = EventRow {
            offset_us: board.t(now),
            wall_us: wall_now_us(),
            event: StoredEvent::Tags {
                tags: tags.iter().cloned().collect(),
            },
            caller_uid: caller.uid,
            origin: None,
        };
        board.log_entry(row.clone(), &[]);
        outbox.jobs.push(Job {
            board: board.config.id.clone(),
            record: Some(Record::Event(row)),
            ..Job::default()
        });
        Self::follow_actions(config, board, caller, events, outbox);
        Ok(Reply::Done)
    }

    /// `Command::SetResult`: the arbiter's result; the clock stops.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_result(
        config: &Config,
        board: &mut Board,
        result: Option<GameResult>,
        termination: Option<crate::eboard::Termination>,
        caller: Caller,
        now: Micros,
        events: &mut Vec<BoardEvent>,
        outbox: &mut Outbox,
    ) {
        let at = mono(board, board.t(now));
        board.follower.set_result(at, result, termination);
        tracing::info!(board = %board.config.id, result = ?result, termination = ?termination,
            uid = ?caller.uid, "result entered");
        Self::follow_actions(config, board, caller, events, outbox);
    }
}
