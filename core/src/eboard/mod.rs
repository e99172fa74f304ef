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
//! machine, [`detect`] move detection, [`laws`], [`pgn`], [`decode`],
//! [`tracker`] (what the board core follows of a board), [`link`] (the
//! values the shell and the runtime exchange).

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
