//! The host under every chessclockd program: its clocks and its log.
//!
//! * [`clock`]: CLOCK_MONOTONIC for intervals and instants, CLOCK_REALTIME
//!   only for scheduled starts and records;
//! * [`logging`]: the journal when systemd runs the program, else stderr.
//!
//! Promises: no program reads a clock or sets up its log any other way, so
//! the daemon, the hub, the simulator and the bench agree on both.

pub mod clock;
pub mod logging;
