//! The host under every chessclockd program: its clocks and its log.
//!
//! * [`clock`]: CLOCK_MONOTONIC for intervals and instants, CLOCK_REALTIME
//!   only for scheduled starts and records;
//! * [`logging`]: the journal when systemd runs the program, else stderr;
//! * [`dirlock`]: one program per state directory (the daemon's, the hub's).
//!
//! Promises: no program reads a clock, sets up its log or locks its state
//! directory any other way, so the daemon, the hub, the simulator and the
//! bench agree on all three.

pub mod clock;
pub mod dirlock;
pub mod logging;
