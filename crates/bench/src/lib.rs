//! Benchmarks and fault soaks of the whole daemon, as a user would run it:
//! the real `chessclockd` binary on a private D-Bus, with simulated button
//! and display units on PTYs ([`rig`]). [`measure`] produces the figures of
//! BENCHMARKS.md (latency against a bare PTY round trip, accounting
//! accuracy under injected delays, display timing, resources, scale, state
//! store, and the clock at its edges: late presses before a flag, a reader flood and
//! the time charged across kill -9: [`edges`]) as a JSON report with SVG plots
//! ([`svg`]); [`soak`] survives
//! unplugs, kill -9, line noise and malformed D-Bus calls and counts what
//! was lost (must be nothing); [`hall`] runs many daemons on one broker and
//! one hub, and [`scale`] one hub under a hall of 1,000 boards from a load
//! generator ([`loadgen`]) beside a few real daemons. Driven by the `chessclock-bench` binary and
//! `tests/soak.rs`.
//!
//! Figures are measured, never asserted on time: the soak asserts only
//! counts (lost presses, mismatches, crashes).

pub mod analysis;
pub mod edges;
pub mod event;
pub mod floor;
pub mod hall;
pub mod lichess;
pub mod loadgen;
pub mod measure;
pub mod placement;
pub mod procfs;
pub mod report;
pub mod rig;
pub mod scale;
pub mod soak;
pub mod stats;
pub mod svg;
