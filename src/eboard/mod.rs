//! DGT electronic boards: the host side of DGT's serial protocol, move
//! detection with `shakmaty`, the Laws checks an electronic board makes
//! possible (Art. 6.2a1, 6.4, 6.9), a live PGN with clock times, offline
//! decoding of captures and the serial shell.
//!
//! **DGT's notice:** DGT's protocol documentation states that the DGT board
//! protocol may not be used commercially without DGT's written permission.
//! This module implements it for non-commercial use; anyone who wants to use
//! it commercially must obtain DGT's written permission first.
//!
//! Layout: the pure cores live in `chessclock_core::eboard` and are
//! re-exported here ([`protocol`] parser, [`placement`], [`session`] link
//! state machine, [`detect`] move detection, [`laws`], [`pgn`], [`decode`],
//! [`follower`]); the thin shells are here: [`serial`], the tokio task on a
//! real port; [`files`], the PGN file and capture files. A simulated board
//! on a PTY is the simulator's (`chessclock-sim dgt`, `crates/sim`).
//!
//! How the board core drives a board (the serial task's events, the
//! follower's inputs and actions) is the contract in the module docs of
//! `chessclock_core::eboard` ("How the board core uses it"); the board
//! core (`core/src/board`) carries it out on the timing thread.

pub use chessclock_core::eboard::{
    decode, detect, follower, laws, link, pgn, placement, protocol, session,
};
pub mod files;
pub mod serial;

pub use chessclock_core::eboard::{
    can_checkmate, decode_capture, flag_report, render_moves, BoardEvent, CaptureFormat,
    DecodeError, DecodedMove, DetectedMove, DetectorConfig, EboardCommand, EboardEvent, FlagReport,
    FlagVerdict, Follower, FollowerAction, FollowerConfig, GameEndReason, GameResult, MoveClock,
    MoveDetector, MoveStatus, PgnGame, SignalledResult, StopReason, Termination,
};
pub use files::{decode_cli, write_atomic};
pub use serial::{spawn, EboardHandle};
