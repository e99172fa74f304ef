//! Transcript tests of the special modes of clock-behaviour.md (hourglass,
//! upcount, byo-yomi, Canadian overtime, a control per side) and of inputs no
//! clock should ever see (the engine must not panic on them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use chessclockd::engine::{
    Adjustment, Engine, EngineError, Input, MatchControl, Notice, Settings, SECOND,
};
use chessclockd::timecontrol::{Bonus, Stage, TimeControl};
use kit::engine::*;

#[test]
fn hourglass_time_used_is_added_to_the_opponent_and_the_total_stays_constant() {
    let mut g = game("*60");
    g.start(0);
    assert_eq!(g.clocks_ms(10_000), (Some(50_000), Some(70_000)));
    g.press(10_000, White);
    assert_eq!(g.clocks_ms(30_000), (Some(70_000), Some(50_000)));
    let (w, b) = g.clocks_ms(45_000);
    assert_eq!(w.unwrap() + b.unwrap(), 120_000);
    // Black's flag falls at 30 + 50 s; the game freezes (the sandclock ran out)
    let state = g.state(100_000);
    assert_eq!(state.black.flag_at, Some(ms(80_000)));
    assert!(state.frozen);
    assert_eq!(state.white.remaining, Some(ms(120_000)));
}

#[test]
fn upcount_counts_the_time_used_upward_and_never_flags() {
    let mut g = game("-");
    g.start(0);
    g.press(90_000, White);
    let state = g.state(1_000_000_000);
    assert_eq!(state.white.remaining, None);
    assert_eq!(state.white.used, ms(90_000));
    assert_eq!(state.black.used, ms(1_000_000_000 - 90_000));
    assert!(state.flags.is_empty());
    assert_eq!(g.engine.next_deadline(), None);
    // there is no remaining time to correct
    assert!(matches!(
        g.engine.apply(
            ms(1_000_000_000),
            Input::Adjust(Adjustment {
                side: White,
                remaining: Some(1),
                moves: None,
                stage: None
            })
        ),
        Err(EngineError::InvalidAdjustment(_))
    ));
}

fn byo_yomi(main: i64, periods: u32, period: i64) -> Game {
    let control = TimeControl::ByoYomi {
        main: main * SECOND,
        periods,
        period: period * SECOND,
    };
    Game {
        engine: Engine::new(MatchControl::same(control), Settings::default()),
    }
}

#[test]
fn byo_yomi_a_move_within_a_period_resets_it_a_period_that_runs_out_is_used_up() {
    let mut g = byo_yomi(10, 3, 5);
    g.start(0);
    // main time ends at 10 s; period 1 runs
    let state = g.state(12_000);
    assert_eq!(state.white.remaining, Some(ms(3_000)));
    assert_eq!(state.white.periods_left, Some(3));
    assert!(state.white.in_overtime);
    assert_eq!(state.white.stage, 2);
    g.press(12_000, White);
    assert_eq!(g.remaining(12_000, White), Some(5 * SECOND), "period reset");
    g.press(13_000, Black);
    // White lets one period run out (13 + 5 s) and moves 2 s into the next
    let state = g.state(20_000);
    assert_eq!(state.white.periods_left, Some(2));
    assert_eq!(state.white.remaining, Some(ms(3_000)));
    // the runtime sleeps until the period ends, then until the next one does
    assert_eq!(g.engine.next_deadline(), Some(ms(18_000)));
    assert!(g.engine.advance(ms(18_000)).is_empty());
    assert_eq!(g.engine.next_deadline(), Some(ms(23_000)));
}

#[test]
fn byo_yomi_the_flag_falls_when_the_last_period_runs_out() {
    let mut g = byo_yomi(10, 2, 5);
    g.start(0);
    let notices = g.engine.advance(ms(100_000));
    assert_eq!(
        notices
            .iter()
            .filter(|n| matches!(n, Notice::FlagFell { .. }))
            .count(),
        1
    );
    assert!(notices.contains(&Notice::FlagFell {
        side: White,
        at: ms(20_000),
        stage: 2,
        last_stage: true
    }));
    let state = g.state(100_000);
    assert_eq!(state.white.periods_left, Some(0));
    assert_eq!(state.white.remaining, Some(0));
}

#[test]
fn byo_yomi_without_main_time_starts_in_the_periods() {
    let mut g = byo_yomi(0, 1, 30);
    assert_eq!(g.remaining(0, White), Some(30 * SECOND));
    assert!(g.state(0).white.in_overtime);
    g.start(0);
    assert_eq!(g.engine.next_deadline(), Some(ms(30_000)));
}

fn canadian(main: i64, moves: u32, block: i64) -> Game {
    let control = TimeControl::Canadian {
        main: main * SECOND,
        moves,
        block: block * SECOND,
    };
    Game {
        engine: Engine::new(MatchControl::same(control), Settings::default()),
    }
}

#[test]
fn canadian_overtime_block_restarts_after_the_mth_move_and_unused_time_is_lost() {
    let mut g = canadian(10, 2, 20);
    g.start(0);
    // main time out at 10 s: block of 2 moves in 20 s
    g.press(12_000, White); // 1 of 2, 18 s left
    assert_eq!(g.remaining(12_000, White), Some(18 * SECOND));
    assert_eq!(g.state(12_000).white.periods_left, Some(1));
    g.press(13_000, Black);
    g.press(15_000, White); // 2 of 2 with 16 s left: new block of 20 s
    let state = g.state(15_000);
    assert_eq!(state.white.remaining, Some(20 * SECOND));
    assert_eq!(state.white.periods_left, Some(2));
}

#[test]
fn canadian_overtime_the_flag_falls_when_a_block_runs_out() {
    let mut g = canadian(10, 5, 20);
    g.start(0);
    let state = g.state(40_000);
    assert_eq!(state.white.flag_at, Some(ms(30_000)));
    assert!(state.frozen);
}

#[test]
fn armageddon_each_side_has_its_own_control() {
    let mut g = per_side("300", "240");
    assert_eq!(g.clocks_ms(0), (Some(300_000), Some(240_000)));
    g.start(0);
    g.press(10_000, White);
    assert_eq!(g.clocks_ms(20_000), (Some(290_000), Some(230_000)));
    assert_eq!(g.engine.next_deadline(), Some(ms(250_000)));
}

#[test]
fn handicap_different_increments_per_side() {
    let mut g = per_side("300+5", "60");
    assert_eq!(g.clocks_ms(0), (Some(305_000), Some(60_000)));
    g.start(0);
    g.press(10_000, White);
    g.press(20_000, Black);
    assert_eq!(g.clocks_ms(20_000), (Some(300_000), Some(50_000)));
    // Black's flag: no bonus in Black's control, so no freeze
    g.press(21_000, White);
    assert!(!g.state(200_000).frozen);
}

#[test]
fn absurd_values_do_not_panic() {
    let huge = TimeControl::Stages(vec![
        Stage {
            moves: Some(u32::MAX),
            time: i64::MAX,
            bonus: Bonus::Increment(i64::MAX),
        },
        Stage {
            moves: Some(1),
            time: i64::MAX,
            bonus: Bonus::Bronstein(i64::MAX),
        },
    ]);
    for control in [
        huge,
        TimeControl::Stages(vec![]),
        TimeControl::Stages(vec![Stage {
            moves: Some(1),
            time: 0,
            bonus: Bonus::Delay(0),
        }]),
        TimeControl::Stages(vec![Stage {
            moves: None,
            time: -5,
            bonus: Bonus::Delay(-7),
        }]),
        TimeControl::ByoYomi {
            main: 0,
            periods: 0,
            period: 0,
        },
        TimeControl::ByoYomi {
            main: -1,
            periods: u32::MAX,
            period: 0,
        },
        TimeControl::Canadian {
            main: 0,
            moves: 0,
            block: 0,
        },
        TimeControl::Hourglass { time: i64::MAX },
        TimeControl::Upcount,
    ] {
        for settings in [Settings::default(), by_flag(), after_move(), freeze(false)] {
            let mut e = Engine::new(MatchControl::same(control.clone()), settings);
            let inputs = [
                Input::Start,
                Input::Press(White),
                Input::Press(Black),
                Input::Adjust(Adjustment {
                    side: White,
                    remaining: Some(i64::MAX),
                    moves: Some(u32::MAX),
                    stage: Some(u32::MAX),
                }),
                Input::Press(White),
                Input::Pause,
                Input::Resume,
                Input::Press(Black),
                Input::Adjust(Adjustment {
                    side: Black,
                    remaining: Some(0),
                    moves: Some(0),
                    stage: Some(1),
                }),
                Input::Press(Black),
                Input::Press(White),
            ];
            let instants = [
                i64::MIN,
                -5,
                0,
                1,
                i64::MAX / 4,
                i64::MAX / 2,
                i64::MAX - 1,
                i64::MAX,
                i64::MAX,
                0,
                i64::MAX,
            ];
            for (now, input) in instants.into_iter().zip(inputs) {
                let _ = e.apply(now, input);
                let _ = e.next_deadline();
                let state = e.state(i64::MAX);
                for side in [White, Black] {
                    let s = state.side(side);
                    assert!(s.remaining.unwrap_or(0) >= 0);
                    assert!(s.used >= 0);
                }
            }
            let _ = e.advance(i64::MAX);
            let _ = e.state(i64::MIN);
        }
    }
}

#[test]
fn time_going_backwards_is_refused_and_changes_nothing() {
    let mut g = game("300");
    g.start(10_000);
    let before = g.state(10_000);
    assert_eq!(
        g.engine.apply(ms(9_999), Input::Press(White)),
        Err(EngineError::TimeWentBackwards {
            now: ms(9_999),
            last: ms(10_000)
        })
    );
    assert_eq!(g.state(10_000), before);
}

#[test]
fn many_stage_flags_in_one_interval_all_fall_at_their_instants() {
    // one move per minute, stage advance at the flag: a state asked for two
    // hours later has seen 120 stage flags, the last one exactly on time
    let mut g = game_with("1/60", by_flag());
    g.start(0);
    let notices = g.engine.advance(ms(7_200_000));
    let flags: Vec<_> = notices
        .iter()
        .filter_map(|n| match n {
            Notice::FlagFell { at, .. } => Some(*at),
            _ => None,
        })
        .collect();
    assert_eq!(flags.len(), 120);
    assert_eq!(flags[119], ms(7_200_000));
    assert_eq!(g.state(7_200_000).white.stage, 121);
}
