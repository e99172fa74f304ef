//! `chessclock-sim`, the simulator tool: the simulated units of
//! `chessclock-sim-units` driven from the command line and scripts, and a
//! simulated DGT electronic board ([`dgt`]). The daemon does not link this
//! crate; tests, the bench and people at a terminal do.

pub mod dgt;
