//! The clock's state as the replay tool prints it (a stable contract, see
//! `docs/replay-format.md`): one compact JSON object with keys in
//! the documented order, times in whole milliseconds. The D-Bus `State()`
//! method returns the same object.
//!
//! Milliseconds from microseconds: remaining time is rounded *up* (a clock
//! shows 0 only once its flag has fallen), used time and instants down.

use serde::Serialize;

use super::{ClockState, Micros, Side, SideState, MS};

/// One output line of `chessclockctl replay`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateReport {
    pub t: i64,
    pub running: Option<Side>,
    pub paused: bool,
    pub flags: Vec<Side>,
    pub white: SideReport,
    pub black: SideReport,
}

/// One side in a [`StateReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SideReport {
    pub remaining_ms: Option<i64>,
    pub used_ms: i64,
    pub moves: u32,
    pub stage: u32,
    pub flag_ms: Option<i64>,
}

/// Milliseconds, rounded down.
pub fn floor_ms(time: Micros) -> i64 {
    time.div_euclid(MS)
}

/// Milliseconds, rounded up.
pub fn ceil_ms(time: Micros) -> i64 {
    let ms = time.div_euclid(MS);
    if time.rem_euclid(MS) == 0 {
        ms
    } else {
        ms.saturating_add(1)
    }
}

impl SideReport {
    pub fn new(side: &SideState) -> SideReport {
        SideReport {
            remaining_ms: side.remaining.map(ceil_ms),
            used_ms: floor_ms(side.used),
            moves: side.moves,
            stage: side.stage,
            flag_ms: side.flag_at.map(floor_ms),
        }
    }
}

impl StateReport {
    pub fn new(state: &ClockState) -> StateReport {
        StateReport {
            t: floor_ms(state.t),
            running: state.running,
            paused: state.paused,
            flags: state.flags.clone(),
            white: SideReport::new(&state.white),
            black: SideReport::new(&state.black),
        }
    }

    /// The compact JSON line (no trailing newline).
    pub fn to_json(&self) -> String {
        // serialising plain integers, booleans and enums cannot fail
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl From<&ClockState> for StateReport {
    fn from(state: &ClockState) -> StateReport {
        StateReport::new(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_shows_zero_only_at_the_flag() {
        assert_eq!(ceil_ms(1), 1);
        assert_eq!(ceil_ms(0), 0);
        assert_eq!(ceil_ms(1_000), 1);
        assert_eq!(ceil_ms(1_001), 2);
        assert_eq!(floor_ms(1_999), 1);
        assert_eq!(floor_ms(-1), -1);
        assert_eq!(ceil_ms(i64::MAX), i64::MAX / 1000 + 1);
    }
}
