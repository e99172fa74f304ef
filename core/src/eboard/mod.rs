//! DGT electronic boards, the pure part: DGT's serial protocol, the link
//! state machine, move detection with `shakmaty`, the Laws checks an
//! electronic board makes possible (Art. 6.2a1, 6.4, 6.9), the live PGN with
//! clock times, and offline decoding of captures. The daemon's shell (the
//! serial task, the simulated board, the PGN file) lives in the daemon.
//!
//! **DGT's notice:** DGT's protocol documentation states that the DGT board
//! protocol may not be used commercially without DGT's written permission.
//! This module implements it for non-commercial use; anyone who wants to use
//! it commercially must obtain DGT's written permission first.
//!
//! Layout: [`protocol`] parser, [`placement`], [`session`] link state
//! machine, [`detect`] move detection, [`laws`], [`pgn`] (export-format PGN,
//! TimeControl tags), [`decode`], [`follower`] (what the board core follows
//! of a board's game, and its PGN), [`link`] (the values the shell and the
//! board core exchange).
//!
//! # How the board core uses it
//!
//! One [`Follower`] per board (also without an electronic board: it then
//! keeps the clock record). All instants given to it are on one base, the
//! monotonic µs of [`EboardEvent`]'s `at` (engine instant + the board's
//! epoch); `wall_us` are wall-clock µs, for tags only. Nothing here reads a
//! clock.
//!
//! 1. **The shell.** Per configured `eboard` device the daemon runs the
//!    serial task (`chessclockd::eboard::serial::spawn`): it drives
//!    [`session::DgtSession`] and [`detect::MoveDetector`] and sends
//!    [`EboardEvent`]s; it takes [`EboardCommand`]s. The detector stays in
//!    the shell, off the timing thread (its searches cost up to a
//!    millisecond).
//! 2. **Create**: `Follower::new(FollowerConfig::default(), has_eboard,
//!    tags, engine.control())`, `tags` from the configuration (`[event]`,
//!    `[[board]]`: `Config::pgn_tags`).
//! 3. **Board events**: every [`EboardEvent`] goes to
//!    [`Follower::on_event`]; when it returns `true` the event is a move or
//!    takeback of the current game: journal it (`StoredEvent::BoardMove` /
//!    `BoardTakeBack`).
//! 4. **Before a press** (`move-count = "eboard"`, the side's clock runs):
//!    `count_before_press(at, side, engine_moves)`; `Some(m)`: apply
//!    `Adjust { moves: m }` (journaled with `source: eboard`) just before
//!    the press. Optional with a re-running core (step 5's `AdjustMoves`
//!    gives the same result), but it saves a re-run in the common case.
//! 5. **After every input the engine took, and after the passing of time
//!    caused something** (stage change, flag), for its notices in order:
//!    `Started` → [`Follower::on_started`] (wall clock: the `Date` tag);
//!    `Pressed` → [`Follower::on_press`] with the state right after it, and
//!    `EboardCommand::ClockPressed { at, side }` to the shell (it confirms
//!    the pressing side's own tentative move, never the opponent's); `FlagFell` → [`Follower::on_flag`] (the Art. 6.4 /
//!    6.9 report to publish; a loss or a 6.9 draw becomes the result);
//!    `Adjusted` with time given back → [`Follower::on_flag_withdrawn`].
//!    Then, always, [`Follower::on_clocks`] with the state and the wall clock
//!    of that instant: the clock tags of the PGN are exactly this.
//! 6. **Arbiter**: `Command::SetTags` → [`Follower::set_tags`] (journal
//!    `StoredEvent::Tags`); `Command::SetResult` → [`Follower::set_result`];
//!    `NewGame` → [`Follower::new_game`] with the new game's tags and
//!    control (the moves it returns belong to the new game: journal them).
//! 7. **Time**: [`Follower::next_deadline`] joins the board's deadlines;
//!    at it, [`Follower::tick`].
//! 8. **Actions**: after each of the above, [`Follower::drain`] and carry
//!    out, in order, until it returns nothing:
//!    * `AdjustMoves { at, side, moves }`: insert `Adjust { side, moves }`
//!      just before the press at `at` (journal it 1 µs before that press, so
//!      a replay in the order of instants puts it there) and re-run the
//!      engine; call [`Follower::rewind`]`(at)`, then `on_press` for every
//!      re-run press from `at` on and `on_clocks` after the last input;
//!    * `StopClock { at, reason }`: when the clock runs, a `Pause` at `at`
//!      (inserted and re-run when earlier than the last input), and the
//!      display's end text (`MATE`, `STALEMATE`, the result);
//!    * `Command(c)`: to the board's shell;
//!    * `OfferNewGame { .. }`: tell the arbiter (the `NewGameOffered`
//!      signal, `State()`, `chessclockctl status`);
//!    * `ResultChanged { .. }`: journal `StoredEvent::GameResult`;
//!    * `PgnChanged`: write [`Follower::render`] to `<pgn-dir>/<board>.pgn`
//!      atomically once what caused it is committed.
//! 9. **PGN on demand**: [`Follower::render`] is the broadcast PGN
//!    (`Command::Pgn`, the file, the hub's round PGN); [`Follower::render_live`]
//!    adds the tentative move.
//! 10. **Restart**: a fresh follower, [`Follower::begin_restore`], the
//!     stored rows in the order of their instants as above (board rows to
//!     [`Follower::on_board_event`], `Tags` to `set_tags`, `GameResult` to
//!     [`Follower::restore_result`], the replayed notices as in step 5),
//!     then [`Follower::end_restore`]: the command that makes the shell
//!     follow the same game (`Resume { moves, finished }`).
//!
//! The board core does exactly this: `core/src/board/follow.rs`.

pub mod decode;
pub mod detect;
pub mod follower;
pub mod laws;
pub mod link;
pub mod pgn;
pub mod placement;
pub mod protocol;
pub mod session;

pub use decode::{decode_capture, render_moves, CaptureFormat, DecodeError, DecodedMove};
pub use detect::{
    BoardEvent, DetectedMove, DetectorConfig, GameEndReason, MoveDetector, MoveStatus,
    SignalledResult,
};
pub use follower::{Follower, FollowerAction, FollowerConfig, StopReason};
pub use laws::{can_checkmate, flag_report, FlagReport, FlagVerdict};
pub use link::{EboardCommand, EboardEvent};
pub use pgn::{GameResult, MoveClock, PgnGame, Termination};
