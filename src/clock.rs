//! The host's clocks. Intervals and instants use CLOCK_MONOTONIC (never
//! wall time); wall time is used only to schedule a start (Art. 6.6).

use crate::engine::Micros;

/// Now on CLOCK_MONOTONIC, in microseconds.
pub fn monotonic_now_us() -> Micros {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) {
        Ok(ts) => ts.tv_sec() * 1_000_000 + ts.tv_nsec() / 1_000,
        // CLOCK_MONOTONIC cannot fail on Linux; fall back rather than panic.
        Err(_) => 0,
    }
}

/// Now on CLOCK_REALTIME, microseconds since the Unix epoch.
pub fn wall_now_us() -> i64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME) {
        Ok(ts) => ts.tv_sec() * 1_000_000 + ts.tv_nsec() / 1_000,
        Err(_) => 0,
    }
}
