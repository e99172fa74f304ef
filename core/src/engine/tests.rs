//! Unit tests of the engine's internals; the rule-by-rule transcripts live in
//! `tests/engine_*.rs`.

use super::*;
use crate::timecontrol::{parse, MAX_STAGE};

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

/// A clock left running through a repeating stage under "at the flag" (a
/// restored game after a long power cut, a replay line years later) gets
/// stage flags up to the control's last possible stage and then a loss
/// flag: a bounded number of expiries, where it used to be a million (1.4 s
/// and 678 MB for a replay found by the fuzzer).
#[test]
fn a_repeating_stage_under_flag_advance_ends_at_the_last_possible_stage() {
    let settings = Settings {
        stage_advance: StageAdvance::Flag,
        ..Settings::default()
    };
    let mut e = Engine::new(MatchControl::same(parse("2/10:2/130").unwrap()), settings);
    e.apply(0, Input::Start).unwrap();
    let years = 121_012_600_000 * MS;
    e.apply(years, Input::Press(Side::White)).unwrap();
    let s = e.state(years);
    assert_eq!(s.white.stage, MAX_STAGE);
    assert_eq!(s.white.remaining, Some(0));
    assert_eq!(s.flags, vec![Side::White]);
    // 10 s, then 130 s for each of the stages 2..=MAX_STAGE
    let last_flag = (10 + 130 * i64::from(MAX_STAGE - 1)) * 1_000 * MS;
    let notices: Vec<&Notice> = e.history().iter().flat_map(|h| &h.notices).collect();
    // one stage flag per stage before the last, each with both sides'
    // stage changes: bounded, whatever the span of time
    let stage_flags = notices
        .iter()
        .filter(|n| {
            matches!(
                n,
                Notice::FlagFell {
                    last_stage: false,
                    ..
                }
            )
        })
        .count();
    assert_eq!(stage_flags, MAX_STAGE as usize - 1);
    assert!(
        notices.len() <= 3 * MAX_STAGE as usize,
        "{} notices",
        notices.len()
    );
    assert!(notices.contains(&&Notice::FlagFell {
        side: Side::White,
        at: last_flag,
        stage: MAX_STAGE,
        last_stage: true,
    }));
    // the press after the loss flag still counts (plain sudden death in
    // the repeating stage: no freeze)
    assert_eq!(s.white.moves, 1);
}

/// No side has more than 999 moves (`docs/clock-behaviour.md`): the press
/// that would be a side's 1000th move is ignored with
/// [`Ignored::MoveLimit`] and changes nothing (it used to count
/// `moves: 1000`).
#[test]
fn a_1000th_move_is_ignored_at_the_move_limit() {
    let mut e = engine("7200+1");
    e.apply(0, Input::Start).unwrap();
    let mut t = 0;
    for _ in 0..MAX_MOVES {
        for side in [Side::White, Side::Black] {
            t += 10 * MS;
            let notices = e.apply(t, Input::Press(side)).unwrap();
            assert!(
                matches!(notices.as_slice(), [Notice::Pressed { .. }]),
                "{notices:?}"
            );
        }
    }
    let before = e.state(t + MS);
    assert_eq!((before.white.moves, before.black.moves), (999, 999));
    let notices = e.apply(t + MS, Input::Press(Side::White)).unwrap();
    assert_eq!(
        notices,
        vec![Notice::Ignored {
            input: Input::Press(Side::White),
            reason: Ignored::MoveLimit
        }]
    );
    assert_eq!(e.state(t + MS), before, "the ignored press changed nothing");
    assert_eq!(before.running, Some(Side::White));
}
