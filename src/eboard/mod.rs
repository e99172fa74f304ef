//! DGT electronic boards: the host side of DGT's serial protocol, move
//! detection with `shakmaty`, the Laws checks an electronic board makes
//! possible (Art. 6.2a1, 6.4, 6.9), a live PGN with clock times, offline
//! decoding of captures, the serial shell and a simulated board.
//!
//! **DGT's notice:** DGT's protocol documentation states that the DGT board
//! protocol may not be used commercially without DGT's written permission.
//! This module implements it for non-commercial use; anyone who wants to use
//! it commercially must obtain DGT's written permission first.
//!
//! Layout: the pure cores live in `chessclock_core::eboard` and are
//! re-exported here ([`protocol`] parser, [`placement`], [`session`] link
//! state machine, [`detect`] move detection, [`laws`], [`pgn`], [`decode`],
//! [`tracker`]); the thin shells are here: [`serial`], the tokio task on a
//! real port; [`sim`], a simulated board on a PTY; [`files`], the PGN file
//! and capture files.
//!
//! # How the runtime uses a board
//!
//! 1. Per configured `eboard` device: `let handle = serial::spawn(path, tx)`.
//!    Events arrive on `tx`'s receiver as [`EboardEvent`]s; `handle.commands`
//!    takes [`EboardCommand`]s. Reconnects happen inside the task.
//! 2. For every press the engine accepts (`Notice::Pressed`), send
//!    `EboardCommand::ClockPressed { at }`: it confirms a tentative move. (A
//!    DGT clock plugged into the board confirms moves by itself: its lever
//!    changes arrive as `EboardEvent::ClockPress`.)
//! 3. Feed every event to a [`tracker::BoardTracker`] (one per board). Board
//!    move count (setting `move-count = "eboard"`): just before applying
//!    `Input::Press(side)` to the engine, while `side`'s clock runs, apply
//!    `tracker.adjustment_before_press(side, state.side(side).moves)` if it
//!    is `Some` (an `Input::Adjust` setting the count to the board's minus
//!    one, at the same instant). The press then brings the engine to the
//!    board's count, and the engine's `>=` stage boundary adds the next
//!    stage's time at the press that completes the real 40th move even when
//!    an earlier press was forgotten (a press completes all previous moves,
//!    Art. 6.2a). The tracker returns `None` while the board is disconnected,
//!    not following a game, or out of step (after `Unrecognised`): presses
//!    count then. `tests/eboard_counting.rs` does exactly this.
//! 4. At `Notice::FlagFell { side, stage, .. }`:
//!    `tracker.flag_report(side, control.for_side(side), stage)` gives the
//!    Art. 6.4 check (moves required by the end of that stage against the
//!    board's count; none in sudden death) and the Art. 6.9 verdict (loss,
//!    or draw when the opponent cannot mate); publish it.
//! 5. `BoardEvent::GameEnd` (checkmate or stalemate, on a confirmed move):
//!    stop the clock (`Input::Pause`) and publish the result (Art. 6.2a1).
//! 6. Live PGN: create the tracker with `BoardTracker::with_pgn(tags)` (the
//!    `TimeControl` tag from `pgn::time_control_tag(&control)`); after every
//!    engine input call `tracker.on_engine_notice(&notice, &state)` for its
//!    notices (a `Pressed` gives that move's `%clk`/`%emt`, and both clocks
//!    for `WhiteClock`/`BlackClock`); after any change write
//!    `files::write_atomic(dir, "<board>.pgn", &tracker.pgn().unwrap().render())`.
//!    The same text answers `Command::Pgn` (`chessclockctl export --pgn`).
//! 7. A new game set up on the board after a finished one: send
//!    `EboardCommand::NewGame` (and reset the tracker) when the arbiter
//!    starts the next game; after a daemon restart in the middle of a game,
//!    `EboardCommand::Resume { moves }` with the UCI moves stored.

pub use chessclock_core::eboard::{
    decode, detect, laws, link, pgn, placement, protocol, session, tracker,
};
pub mod files;
pub mod serial;
pub mod sim;

pub use chessclock_core::eboard::{
    can_checkmate, decode_capture, flag_report, render_moves, BoardEvent, BoardTracker,
    CaptureFormat, DecodeError, DecodedMove, DetectedMove, DetectorConfig, EboardCommand,
    EboardEvent, FlagReport, FlagVerdict, GameEndReason, LivePgn, MoveClock, MoveDetector,
    MoveStatus, PgnTags, SignalledResult,
};
pub use files::{decode_cli, write_atomic};
pub use serial::{spawn, EboardHandle};
pub use sim::{run_sim, run_sim_cli, DgtSim, DgtSimArgs, DgtSimOptions, SimScript};
