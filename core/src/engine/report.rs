//! The clock's state as the replay tool prints it (a stable contract, see
//! `docs/replay-format.md`): one compact JSON object with keys in
//! the documented order, times in whole milliseconds. The D-Bus `State()`
//! method returns the same object.
//!
//! Milliseconds from microseconds: remaining time is rounded *up* (a clock
//! shows 0 only once its flag has fallen), used time and instants down.
//!
//! The overtime counters follow each side's own control: `periods_left` only
//! for byo-yomi, `moves_left_in_block` only for Canadian overtime; for every
//! other control the key is absent (not `null`).

use serde::Serialize;

use super::{ClockState, MatchControl, Micros, Side, SideState, MS};
use crate::timecontrol::TimeControl;

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
    /// Byo-yomi: the periods left, the running one included (all of them
    /// during the main time, 0 once the last one ran out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periods_left: Option<u32>,
    /// Canadian overtime: the moves still to make in the current block (the
    /// first block's full count during the main time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves_left_in_block: Option<u32>,
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
    /// `side` under its own `control` (which decides the overtime counter).
    pub fn new(side: &SideState, control: &TimeControl) -> SideReport {
        SideReport {
            remaining_ms: side.remaining.map(ceil_ms),
            used_ms: floor_ms(side.used),
            moves: side.moves,
            stage: side.stage,
            flag_ms: side.flag_at.map(floor_ms),
            periods_left: side
                .periods_left
                .filter(|_| matches!(control, TimeControl::ByoYomi { .. })),
            moves_left_in_block: side
                .periods_left
                .filter(|_| matches!(control, TimeControl::Canadian { .. })),
        }
    }
}

impl StateReport {
    /// `state` of a game played under `control`.
    pub fn new(state: &ClockState, control: &MatchControl) -> StateReport {
        StateReport {
            t: floor_ms(state.t),
            running: state.running,
            paused: state.paused,
            flags: state.flags.clone(),
            white: SideReport::new(&state.white, &control.white),
            black: SideReport::new(&state.black, &control.black),
        }
    }

    /// The compact JSON line (no trailing newline).
    pub fn to_json(&self) -> String {
        // serialising plain integers, booleans and enums cannot fail
        serde_json::to_string(self).unwrap_or_default()
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
    /// `docs/replay-format.md` promises `periods_left` for byo-yomi and
    /// `moves_left_in_block` for Canadian overtime, after `flag_ms`, and
    /// neither key for other controls (the output used to have neither).
    #[test]
    fn overtime_counters_follow_each_sides_control() {
        use crate::engine::{Engine, Input, Settings};
        use crate::timecontrol::parse;
        let control = MatchControl {
            white: parse("byoyomi:600:5x30").unwrap(),
            black: parse("canadian:600:25/300").unwrap(),
        };
        let mut engine = Engine::new(control.clone(), Settings::default());
        engine.apply(0, Input::Start).unwrap();
        let json = StateReport::new(&engine.state(0), &control).to_json();
        assert!(
            json.contains(r#""flag_ms":null,"periods_left":5},"black""#),
            "{json}"
        );
        assert!(
            json.ends_with(r#""flag_ms":null,"moves_left_in_block":25}}"#),
            "{json}"
        );
        let plain = MatchControl::same(parse("300+2").unwrap());
        let engine = Engine::new(plain.clone(), Settings::default());
        let json = StateReport::new(&engine.state(0), &plain).to_json();
        assert!(
            !json.contains("periods_left") && !json.contains("moves_left_in_block"),
            "{json}"
        );
    }
}
