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
//! [`follower`]); the thin shells are here: [`serial`], the tokio task on a
//! real port; [`sim`], a simulated board on a PTY; [`files`], the PGN file
//! and capture files.
//!
//! How the board core drives a board (the serial task's events, the
//! follower's inputs and actions) is the contract in the module docs of
//! `chessclock_core::eboard` ("How the board core uses it"); until the
//! board core lands, `src/runtime/timing/follow.rs` carries it out.

pub use chessclock_core::eboard::{
    decode, detect, follower, laws, link, pgn, placement, protocol, session,
};
pub mod files;
pub mod serial;
pub mod sim;

pub use chessclock_core::eboard::{
    can_checkmate, decode_capture, flag_report, render_moves, BoardEvent, CaptureFormat,
    DecodeError, DecodedMove, DetectedMove, DetectorConfig, EboardCommand, EboardEvent, FlagReport,
    FlagVerdict, Follower, FollowerAction, FollowerConfig, GameEndReason, GameResult, MoveClock,
    MoveDetector, MoveStatus, PgnGame, SignalledResult, StopReason, Termination,
};
pub use files::{decode_cli, write_atomic};
pub use serial::{spawn, EboardHandle};
pub use sim::{run_sim, run_sim_cli, DgtSim, DgtSimArgs, DgtSimOptions, SimScript};
