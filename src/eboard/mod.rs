//! DGT electronic boards: the host side of DGT's serial protocol, move
//! detection with `shakmaty`, the Laws checks an electronic board makes
//! possible (Art. 6.2a1, 6.4, 6.9), a live PGN with clock times, offline
//! decoding of captures, the serial shell and a simulated board.
//!
//! **DGT's notice:** DGT's protocol header states that the protocol may not be
//! used commercially without DGT's written permission. This module
//! implements it for non-commercial use; anyone who wants to use it
//! commercially must obtain DGT's written permission first.
//!
//! Layout: pure cores ([`protocol`] parser, [`session`] link state machine,
//! [`detect`] move detection, [`laws`], [`pgn`], [`decode`]) and a thin shell
//! ([`serial`], the tokio task on a real port; [`sim`], a simulated board on
//! a PTY).

pub mod decode;
pub mod detect;
pub mod laws;
pub mod pgn;
pub mod placement;
pub mod protocol;
pub mod serial;
pub mod session;
pub mod sim;

pub use decode::{decode_capture, decode_cli, CaptureFormat, DecodeError, DecodedMove};
pub use detect::{BoardEvent, DetectedMove, DetectorConfig, MoveDetector, MoveStatus};
