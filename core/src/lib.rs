//! The pure rooms of chessclockd: state machines with no I/O and no clock.
//!
//! Every item here takes the instant it acts at as a parameter and returns
//! what it decided (actions, notices, the next deadline); the daemon's shells
//! carry those out. This crate depends on neither tokio, rusqlite nor zbus,
//! so Cargo keeps I/O out of it.
//!
//! * [`time`]: the microsecond type every core counts in;
//! * [`clocktext`]: how a time is written for people, on every surface;
//! * [`timecontrol`]: time-control notation (PGN TimeControl, US Chess) and
//!   FIDE prose;
//! * [`engine`]: the timing engine, FIDE Laws Art. 6;
//! * [`display`]: what a display unit shows at an instant, and when it next
//!   changes;
//! * [`session`]: one serial device's protocol session, host side;
//! * [`eboard`]: a DGT board's protocol, move detection and the Laws checks
//!   it makes possible, the live PGN;
//! * [`journal`]: the format of a game's stored events;
//! * [`limits`]: the bounds on everything a caller can store;
//! * [`timetext`]: times and durations as arbiters type them;
//! * [`contract`]: the commands, replies and events between a control
//!   surface and the boards' owner, and [`views`], what readers see.

pub mod board;
pub mod clocktext;
pub mod contract;
pub mod display;
pub mod eboard;
pub mod engine;
pub mod journal;
pub mod limits;
pub mod session;
pub mod time;
pub mod timecontrol;
pub mod timetext;
pub mod views;
