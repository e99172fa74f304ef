//! Properties of the engine over random games (proptest): time is conserved
//! (used + remaining = initial + credits), no time is ever negative, flags
//! fall exactly at the instant `next_deadline` announced, and a press by the
//! side whose clock is not running changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclockd::engine::{
    Adjustment, Credit, Engine, EngineError, Input, MatchControl, Micros, Notice, Settings, Side,
    StageAdvance, MS,
};
use chessclockd::timecontrol::{parse, TimeControl};
use proptest::prelude::*;

const CONTROLS: &[&str] = &[
    "300",
    "10",
    "180+2",
    "5+1",
    "300d3",
    "8d2",
    "300b3",
    "8b2",
    "2/10+1:20+1",
    "3/8:5",
    "2/6:4/6d1:5b1",
    "40/60:30",
    "*20",
    "byoyomi:5:2x3",
    "canadian:5:2/6",
];

#[derive(Clone, Copy, Debug)]
enum Step {
    /// The side whose clock runs presses (the common case).
    PressRunning,
    Press(Side),
    Pause,
    Resume,
    Look,
    /// An arbiter's correction: remaining (ms), moves, stage.
    Adjust(Side, Option<i64>, Option<u32>, Option<u32>),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => Just(Step::PressRunning),
        2 => prop_oneof![Just(Side::White), Just(Side::Black)].prop_map(Step::Press),
        1 => Just(Step::Pause),
        1 => Just(Step::Resume),
        1 => Just(Step::Look),
        1 => (
            prop_oneof![Just(Side::White), Just(Side::Black)],
            prop::option::of(0i64..20_000),
            prop::option::of(0u32..100),
            prop::option::of(1u32..5),
        )
            .prop_map(|(side, remaining, moves, stage)| Step::Adjust(side, remaining, moves, stage)),
    ]
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        prop_oneof![Just(Credit::BeforeMove), Just(Credit::AfterMove)],
        prop_oneof![Just(StageAdvance::Moves), Just(StageAdvance::Flag)],
        prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
    )
        .prop_map(|(credit, stage_advance, freeze)| Settings {
            credit,
            stage_advance,
            freeze,
        })
}

fn game() -> impl Strategy<Value = (String, String, Settings, Vec<(Micros, Step)>)> {
    (
        prop::sample::select(CONTROLS),
        prop::sample::select(CONTROLS),
        any::<bool>(),
        settings(),
        prop::collection::vec((0i64..6_000_000, step()), 1..60),
    )
        .prop_map(|(white, black, same, settings, steps)| {
            let black = if same { white } else { black };
            (white.to_owned(), black.to_owned(), settings, steps)
        })
}

fn engine(white: &str, black: &str, settings: Settings) -> Engine {
    Engine::new(
        MatchControl {
            white: parse(white).unwrap(),
            black: parse(black).unwrap(),
        },
        settings,
    )
}

/// Applies `input`. The engine may refuse only a correction a game cannot
/// have (a stage the control lacks, a remaining time on an upcount clock),
/// and then nothing changes.
fn apply(e: &mut Engine, now: Micros, input: Input) -> Result<Vec<Notice>, TestCaseError> {
    let before = e.state(now);
    match e.apply(now, input) {
        Ok(notices) => Ok(notices),
        Err(EngineError::InvalidAdjustment(why)) => {
            let Input::Adjust(a) = input else {
                return Err(TestCaseError::fail(format!("{input:?} refused: {why}")));
            };
            let control = e.control().for_side(a.side);
            prop_assert!(
                a.stage.is_some_and(|s| s > control.max_stage())
                    || (a.remaining.is_some() && matches!(control, TimeControl::Upcount)),
                "{a:?} refused on `{control}`: {why}"
            );
            prop_assert_eq!(e.state(now), before, "a refused correction changed nothing");
            Ok(Vec::new())
        }
        Err(other) => Err(TestCaseError::fail(format!("{input:?}: {other}"))),
    }
}

fn input(step: Step, to_move: Option<Side>) -> Input {
    match step {
        Step::PressRunning => Input::Press(to_move.unwrap_or(Side::White)),
        Step::Press(side) => Input::Press(side),
        Step::Pause => Input::Pause,
        Step::Resume => Input::Resume,
        Step::Look => Input::Elapsed,
        Step::Adjust(side, remaining, moves, stage) => Input::Adjust(Adjustment {
            side,
            remaining: remaining.map(|ms| ms * MS),
            moves,
            stage,
        }),
    }
}

/// used + remaining == initial + credited for every side whose flag never
/// fell (`flagged` remembers), and nothing negative, at `now`.
fn check_conservation(
    engine: &Engine,
    now: Micros,
    flagged: &mut [bool; 2],
) -> Result<(), TestCaseError> {
    let state = engine.state(now);
    for side in Side::BOTH {
        let s = state.side(side);
        let ever_flagged = &mut flagged[side as usize];
        *ever_flagged |= s.flag_at.is_some();
        prop_assert!(s.used >= 0, "{side} used {}", s.used);
        if let Some(remaining) = s.remaining {
            prop_assert!(remaining >= 0, "{side} remaining {remaining}");
            if !*ever_flagged {
                prop_assert_eq!(
                    s.used + remaining,
                    engine.initial_time(side) + engine.credited_at(now, side),
                    "{} at {}",
                    side,
                    now
                );
            }
        }
        if let Some(delay) = s.delay_left {
            prop_assert!(delay >= 0);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn time_is_conserved_and_never_negative((white, black, settings, steps) in game()) {
        let mut e = engine(&white, &black, settings);
        let mut now: Micros = 0;
        e.apply(now, Input::Start).unwrap();
        let mut flagged = [false; 2];
        for (gap, step) in steps {
            // between events too
            check_conservation(&e, now + gap / 2, &mut flagged)?;
            now += gap;
            let input = input(step, e.state(now).to_move);
            // a flag may fall and be cleared by a correction at the same input
            for notice in apply(&mut e, now, input)? {
                if let Notice::FlagFell { side, .. } = notice {
                    flagged[side as usize] = true;
                }
            }
            check_conservation(&e, now, &mut flagged)?;
        }
    }

    #[test]
    fn flags_fall_exactly_at_the_announced_deadline((white, black, settings, steps) in game()) {
        let mut e = engine(&white, &black, settings);
        let mut now: Micros = 0;
        e.apply(now, Input::Start).unwrap();
        for (gap, step) in steps {
            now += gap;
            // follow the runtime: sleep until each deadline, then the event
            while let Some(deadline) = e.next_deadline() {
                if deadline > now {
                    break;
                }
                let mover = e.state(deadline).to_move.unwrap();
                // one microsecond before, the running side's time is not out
                let before = e.state(deadline - 1).side(mover).remaining;
                prop_assert!(before.is_some_and(|r| r > 0), "{before:?}");
                let notices = e.advance(deadline);
                // something changed by itself: a flag, a stage, a new period
                let after = e.state(deadline).side(mover).clone();
                // (a side whose flag was already down keeps its first instant)
                prop_assert!(
                    after.flag_at.is_some_and(|first| first <= deadline)
                        || after.remaining.is_some_and(|r| r > 0),
                    "{after:?} {notices:?}"
                );
                for notice in &notices {
                    if let Notice::FlagFell { side, at, .. } = notice {
                        prop_assert_eq!(*at, deadline);
                        prop_assert_eq!(*side, mover);
                        let first = e.state(deadline).side(*side).flag_at;
                        prop_assert!(first.is_some_and(|first| first <= deadline), "{first:?}");
                    }
                }
            }
            let notices = e.advance(now);
            prop_assert!(
                !notices.iter().any(|n| matches!(n, Notice::FlagFell { .. })),
                "a flag fell that no deadline announced: {:?}", notices
            );
            let input = input(step, e.state(now).to_move);
            apply(&mut e, now, input)?;
        }
    }

    #[test]
    fn presses_by_the_waiting_side_change_nothing((white, black, settings, steps) in game()) {
        let mut e = engine(&white, &black, settings);
        let mut now: Micros = 0;
        e.apply(now, Input::Start).unwrap();
        for (gap, step) in steps {
            now += gap;
            e.advance(now);
            let state = e.state(now);
            if let Some(waiting) = state.to_move.map(Side::other) {
                let notices = e.apply(now, Input::Press(waiting)).unwrap();
                prop_assert!(matches!(notices.as_slice(), [Notice::Ignored { .. }]), "{notices:?}");
                prop_assert_eq!(e.state(now), state.clone());
                prop_assert_eq!(e.state(now + 7 * MS), {
                    let mut twin = e.clone();
                    twin.advance(now + 7 * MS);
                    twin.state(now + 7 * MS)
                });
            }
            let input = input(step, state.to_move);
            apply(&mut e, now, input)?;
        }
    }

    #[test]
    fn the_notation_printer_and_parser_agree(
        stages in prop::collection::vec(
            // Stages of 0 s often: the rules for them are what a
            // printer and a parser most easily get wrong.
            (prop::option::of(1u32..100), prop_oneof![1 => Just(0i64), 4 => 1i64..100_000], 0u8..4, 0i64..100),
            1..5,
        )
    ) {
        let mut text = String::new();
        let last = stages.len() - 1;
        for (i, (moves, seconds, bonus, amount)) in stages.iter().enumerate() {
            if i > 0 {
                text.push(':');
            }
            // every field but the last needs a move count
            let moves = if i < last { Some(moves.unwrap_or(40)) } else { *moves };
            if let Some(moves) = moves {
                text.push_str(&format!("{moves}/"));
            }
            text.push_str(&seconds.to_string());
            match bonus {
                1 => text.push_str(&format!("+{amount}")),
                2 => text.push_str(&format!("d{amount}")),
                3 => text.push_str(&format!("b{amount}")),
                _ => {}
            }
        }
        // A stage of no time is refused by design when it is the first
        // (the player would flag at the start) or has no bonus (it gives
        // nothing); every other control prints as it was written.
        let no_time = stages
            .iter()
            .enumerate()
            .any(|(i, (_, seconds, bonus, amount))| *seconds == 0 && (i == 0 || *bonus == 0 || *amount == 0));
        if no_time {
            let error = parse(&text).unwrap_err();
            prop_assert!(error.message.contains("0 s"), "{}: {}", text, error.message);
            return Ok(());
        }
        let control = parse(&text).unwrap();
        prop_assert_eq!(control.to_string(), text);
        prop_assert!(!control.prose().is_empty());
    }

    #[test]
    fn the_parser_never_panics(text in "\\PC{0,30}") {
        if let Err(e) = parse(&text) {
            prop_assert!(e.position >= 1 && e.position <= text.chars().count() + 1);
        }
    }
}
