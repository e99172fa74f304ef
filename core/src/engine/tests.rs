//! Unit tests of the engine's internals; the rule-by-rule transcripts live in
//! `tests/engine_*.rs`.

use super::*;
use crate::timecontrol::parse;

fn engine(text: &str) -> Engine {
    Engine::new(
        MatchControl::same(parse(text).unwrap()),
        Settings::default(),
    )
}

#[test]
fn replay_format_example() {
    let mut e = engine("40/5400+30:1800+30");
    e.apply(0, Input::Start).unwrap();
    e.apply(12_500 * MS, Input::Press(Side::White)).unwrap();
    let s = e.state(12_500 * MS);
    assert_eq!(s.white.remaining, Some(5_447_500 * MS));
    assert_eq!(s.black.remaining, Some(5_430_000 * MS));
    assert_eq!(s.running, Some(Side::Black));
    assert_eq!(s.white.used, 12_500 * MS);
}

#[test]
fn time_going_backwards_is_refused() {
    let mut e = engine("300");
    e.apply(10, Input::Start).unwrap();
    assert_eq!(
        e.apply(9, Input::Pause),
        Err(EngineError::TimeWentBackwards { now: 9, last: 10 })
    );
}
