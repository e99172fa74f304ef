//! Transcript tests of the engine, one per rule of FIDE Art. 6 and of the
//! equipment standard as `docs/clock-behaviour.md` states them,
//! and one per example given there. Times are written as the clock shows them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use chessclockd::engine::{HistoryEntry, Ignored, Input, Notice, MS, SECOND};
use kit::engine::*;

// ---- Art. 6.1, 6.2: one clock runs; a press completes a move -------------

#[test]
fn art_6_1_only_one_clock_runs_at_a_time() {
    let mut g = game("300");
    g.start(0);
    assert_eq!(g.clocks_ms(10_000), (Some(290_000), Some(300_000)));
    g.press(10_000, White);
    assert_eq!(g.state(10_000).running, Some(Black));
    assert_eq!(g.clocks_ms(25_000), (Some(290_000), Some(285_000)));
}

#[test]
fn art_6_2_press_completes_the_move_and_starts_the_opponents_clock() {
    let mut g = game("300");
    g.start(0);
    let notices = g.press(12_345, White);
    assert_eq!(
        notices,
        vec![Notice::Pressed {
            side: White,
            move_number: 1,
            used: 12_345 * MS
        }]
    );
    let state = g.state(12_345);
    assert_eq!(state.white.moves, 1);
    assert_eq!(state.black.moves, 0);
    assert_eq!(state.running, Some(Black));
    assert_eq!(state.to_move, Some(Black));
}

#[test]
fn art_6_2_press_by_the_side_not_running_changes_nothing_but_is_logged() {
    let mut g = game("300+5");
    g.start(0);
    let before = g.state(4_000);
    let notices = g.press(4_000, Black);
    assert_eq!(
        notices,
        vec![Notice::Ignored {
            input: Input::Press(Black),
            reason: Ignored::NotRunningSide
        }]
    );
    assert_eq!(g.state(4_000), before);
    let last = g.engine.history().last().unwrap();
    assert_eq!(last.input, Input::Press(Black));
    assert_eq!(last.at, 4_000 * MS);
}

// ---- Art. 6.3: stages, time saved, delay ---------------------------------

#[test]
fn art_6_3a_flag_before_completing_the_stages_moves_is_a_loss_flag() {
    // 2 moves in 10 s, then 20 s: White makes 1 move, Black's flag falls
    // in stage 1 under "by moves"
    let mut g = game("2/10:20");
    g.start(0);
    g.press(1_000, White);
    g.advance_to_check(1_000);
    let notices = g.engine.advance(11_000 * MS);
    assert_eq!(
        notices,
        vec![Notice::FlagFell {
            side: Black,
            at: 11_000 * MS,
            stage: 1,
            last_stage: true
        }]
    );
    let state = g.state(11_000);
    assert_eq!(state.flags, vec![Black]);
    assert_eq!(state.black.stage, 1);
    assert_eq!(state.black.remaining, Some(0));
}

#[test]
fn art_6_3b_time_saved_carries_over() {
    // 90 min for 40 moves, then 30 min, 30 s from move 1; each move 60 s:
    // White after 40 moves: 90:30 + 40 * (30 - 60) s + 30 min
    let mut g = game("40/5400+30:1800+30");
    g.start(0);
    let mut t = 0;
    for _ in 0..40 {
        t += 60_000;
        g.press(t, White);
        t += 60_000;
        g.press(t, Black);
    }
    let state = g.state(t);
    let expected = (5400 + 30 - 40 * 30 + 1800) * SECOND;
    assert_eq!(state.white.remaining, Some(expected));
    assert_eq!(state.black.remaining, Some(expected));
    assert_eq!(state.white.stage, 2);
    assert_eq!(state.black.stage, 2);
    assert!(state.white.in_overtime);
}

#[test]
fn art_6_3b_each_side_gets_the_next_stage_at_its_own_nth_press() {
    let mut g = game("2/10:20");
    g.start(0);
    g.press(1_000, White);
    g.press(2_000, Black);
    let notices = g.press(3_000, White);
    assert!(notices.contains(&Notice::StageChanged {
        side: White,
        stage: 2,
        at: 3_000 * MS
    }));
    // White: 10 - 2 + 20; Black still in stage 1
    assert_eq!(g.clocks_ms(3_000), (Some(28_000), Some(9_000)));
    assert_eq!(g.state(3_000).black.stage, 1);
    g.press(4_000, Black);
    assert_eq!(g.clocks_ms(4_000), (Some(28_000), Some(28_000)));
    assert_eq!(g.state(4_000).black.stage, 2);
}

#[test]
fn art_6_3b_last_field_with_a_move_count_repeats() {
    // 2 moves every 10 s
    let mut g = game("2/10");
    g.start(0);
    let t = g.moves(0, White, 8, 1_000);
    let state = g.state(t);
    // each side: 10 - 4 s + 10 + 10 (stages 2 and 3 after moves 2 and 4)... 4 moves each
    assert_eq!(state.white.moves, 4);
    assert_eq!(state.white.stage, 3);
    assert_eq!(state.white.remaining, Some((10 - 4 + 10 + 10) * SECOND));
    assert_eq!(state.black.stage, 3);
}

#[test]
fn art_6_3_time_delay_mode_press_within_the_delay_keeps_the_main_time() {
    // clock-behaviour.md: 5 min + 3 s delay: display 5:00; 2 s used -> 5:00;
    // 5 s used -> 4:58
    let mut g = game("300d3");
    assert_eq!(g.remaining(0, White), clock(5, 0));
    g.start(0);
    assert_eq!(g.state(1_000).white.delay_left, Some(2 * SECOND));
    assert_eq!(g.remaining(1_000, White), clock(5, 0));
    g.press(2_000, White);
    assert_eq!(g.remaining(2_000, White), clock(5, 0));
    g.press(7_000, Black);
    assert_eq!(g.remaining(7_000, Black), clock(4, 58));
}

#[test]
fn us_delay_flag_falls_at_move_start_plus_delay_plus_main_time() {
    let mut g = game("10d3");
    g.start(0);
    g.press(5_000, White); // 10 - 2 = 8 s main time left
    g.press(6_000, Black);
    assert_eq!(g.engine.next_deadline(), Some((6_000 + 3_000 + 8_000) * MS));
    assert!(g.state(16_999).flags.is_empty());
    assert_eq!(g.state(17_000).white.flag_at, Some(17_000 * MS));
}

#[test]
fn us_delay_unused_delay_is_never_carried_over() {
    let mut g = game("10d3");
    g.start(0);
    g.press(1_000, White); // 2 s of delay unused
    g.press(1_500, Black);
    assert_eq!(g.state(1_500).white.delay_left, Some(3 * SECOND));
    assert_eq!(g.remaining(5_500, White), Some(9 * SECOND));
}

#[test]
fn bronstein_dgt_shows_the_delay_at_the_start_and_gives_back_at_most_the_delay() {
    // 5 min + 3 s Bronstein shows 5:03; 2 s used -> 5:01 then back to 5:03;
    // 5 s used -> 4:58, then 5:01
    let mut g = game("300b3");
    assert_eq!(g.remaining(0, White), clock(5, 3));
    g.start(0);
    assert_eq!(g.remaining(2_000, White), clock(5, 1));
    g.press(2_000, White);
    assert_eq!(g.remaining(2_000, White), clock(5, 3));
    assert_eq!(g.remaining(7_000, Black), clock(4, 58));
    g.press(7_000, Black);
    assert_eq!(g.remaining(7_000, Black), clock(5, 1));
}

#[test]
fn bronstein_final_result_equals_simple_delay() {
    let mut bronstein = game("60b5");
    let mut simple = game("60d5");
    for g in [&mut bronstein, &mut simple] {
        g.start(0);
        g.press(2_000, White);
        g.press(9_000, Black);
        g.press(15_000, White);
        g.press(16_000, Black);
    }
    assert_eq!(
        bronstein.engine.next_deadline(),
        simple.engine.next_deadline()
    );
    // after a completed move both show the same time for the next move
    // once the delay is added to the simple-delay main time
    let b = bronstein.state(16_000);
    let s = simple.state(16_000);
    assert_eq!(
        b.black.remaining.unwrap(),
        s.black.remaining.unwrap() + 5 * SECOND
    );
}

// ---- Fischer increment ---------------------------------------------------

#[test]
fn fide_dgt_increment_for_move_1_is_credited_before_the_start() {
    // 3 min + 2 s: White starts at 3:02, uses 10 s: 2:52 + 2 s = 2:54
    let mut g = game("180+2");
    assert_eq!(g.remaining(0, White), clock(3, 2));
    assert_eq!(g.remaining(0, Black), clock(3, 2));
    g.start(0);
    g.press(10_000, White);
    assert_eq!(g.remaining(10_000, White), clock(2, 54));
}

#[test]
fn online_convention_credits_the_increment_only_after_each_move() {
    // 3:00 - 10 s + 2 s = 2:52
    let mut g = game_with("180+2", after_move());
    assert_eq!(g.remaining(0, White), clock(3, 0));
    g.start(0);
    g.press(10_000, White);
    assert_eq!(g.remaining(10_000, White), clock(2, 52));
}

#[test]
fn increment_of_the_stage_the_next_move_belongs_to_applies() {
    // no increment for moves 1-2, 10 s from move 3
    let mut g = game("2/60:60+10");
    assert_eq!(g.remaining(0, White), Some(60 * SECOND));
    g.start(0);
    g.press(1_000, White); // move 1: next move 2 is in stage 1: nothing
    assert_eq!(g.remaining(1_000, White), Some(59 * SECOND));
    g.press(2_000, Black);
    g.press(3_000, White); // move 2 ends stage 1; move 3 is in stage 2: +60 +10
    assert_eq!(g.remaining(3_000, White), Some((60 - 2 + 60 + 10) * SECOND));
    // after-move convention: the increment is earned by move 3 itself
    let mut g = game_with("2/60:60+10", after_move());
    g.start(0);
    g.press(1_000, White);
    g.press(2_000, Black);
    g.press(3_000, White);
    assert_eq!(g.remaining(3_000, White), Some((60 - 2 + 60) * SECOND));
    g.press(4_000, Black);
    g.press(5_000, White);
    assert_eq!(g.remaining(5_000, White), Some((60 - 3 + 60 + 10) * SECOND));
}

// ---- Art. 6.4 and stage advance "at the flag" ------------------------------

#[test]
fn art_6_4_stage_advance_at_the_flag_gives_both_sides_the_next_stage() {
    let mut g = game_with("40/60+1:30+1", by_flag());
    g.start(0);
    g.press(5_000, White); // White 61 - 5 + 1 = 57
                           // Black reaches zero at 5 + 61 s
    let notices = g.engine.advance(70_000 * MS);
    assert_eq!(
        notices[0],
        Notice::FlagFell {
            side: Black,
            at: 66_000 * MS,
            stage: 1,
            last_stage: false
        }
    );
    assert!(notices.contains(&Notice::StageChanged {
        side: White,
        stage: 2,
        at: 66_000 * MS
    }));
    assert!(notices.contains(&Notice::StageChanged {
        side: Black,
        stage: 2,
        at: 66_000 * MS
    }));
    let state = g.state(70_000);
    // Black's clock runs on into stage 2; its flag is recorded for the arbiter
    assert_eq!(state.running, Some(Black));
    assert_eq!(state.black.flag_at, Some(66_000 * MS));
    assert_eq!(state.flags, vec![Black]);
    assert_eq!(state.black.remaining, Some(26 * SECOND));
    assert_eq!(state.white.remaining, Some(87 * SECOND));
    assert_eq!((state.white.stage, state.black.stage), (2, 2));
}

#[test]
fn art_6_4_stage_advance_by_moves_ignores_the_move_count_of_the_other_side() {
    let mut g = game("1/10:20");
    g.start(0);
    g.press(1_000, White);
    let state = g.state(1_000);
    assert_eq!((state.white.stage, state.black.stage), (2, 1));
    assert_eq!(state.white.remaining, Some(29 * SECOND));
}

// ---- Art. 6.6, 6.7: the start --------------------------------------------

#[test]
fn art_6_6_whites_clock_is_started_and_before_the_start_the_displays_show_the_initial_times() {
    let mut g = game("40/5400+30:1800+30");
    let before = g.state(0);
    assert!(!before.started);
    assert_eq!(before.running, None);
    assert_eq!(before.white.remaining, Some(5430 * SECOND));
    assert_eq!(
        g.press(0, White)[0],
        Notice::Ignored {
            input: Input::Press(White),
            reason: Ignored::NotStarted
        }
    );
    assert_eq!(g.start(1_000), vec![Notice::Started]);
    assert_eq!(g.state(1_000).running, Some(White));
    assert_eq!(
        g.start(2_000),
        vec![Notice::Ignored {
            input: Input::Start,
            reason: Ignored::AlreadyStarted
        }]
    );
}

#[test]
fn art_6_7_the_time_whites_first_move_has_taken_is_known() {
    let mut g = game("900+10");
    g.start(0);
    assert_eq!(g.state(600_000).white.used, 600_000 * MS);
}

// ---- Art. 6.8, 6.11, flags -------------------------------------------------

#[test]
fn art_6_8_the_flag_falls_at_its_exact_instant_however_late_it_is_seen() {
    let mut g = game("60");
    g.start(0);
    assert_eq!(g.engine.next_deadline(), Some(60_000 * MS));
    assert!(g.state(59_999).flags.is_empty());
    assert_eq!(g.remaining(59_999, White), Some(MS));
    assert_eq!(g.state(60_000).white.flag_at, Some(60_000 * MS));
    // nobody asks until much later
    let notices = g.press(500_000, White);
    assert_eq!(
        notices[0],
        Notice::FlagFell {
            side: White,
            at: 60_000 * MS,
            stage: 1,
            last_stage: true
        }
    );
    assert_eq!(g.state(500_000).white.flag_at, Some(60_000 * MS));
}

#[test]
fn art_6_11_flags_are_recorded_in_the_order_they_fell() {
    let mut g = game("60");
    g.start(0);
    g.press(1_000, White);
    // Black falls at 61 s; keeps running (sudden death), presses at 70 s;
    // White falls at 70 + 59 = 129 s
    g.press(70_000, Black);
    let state = g.state(200_000);
    assert_eq!(state.flags, vec![Black, White]);
    assert_eq!(state.black.flag_at, Some(61_000 * MS));
    assert_eq!(state.white.flag_at, Some(129_000 * MS));
}

// ---- Freeze (FIDE equipment standard) ------------------------------------

#[test]
fn fide_equipment_freeze_with_increment_the_other_clock_keeps_its_value() {
    let mut g = game("60+1");
    g.start(0);
    g.press(5_000, White);
    let notices = g.engine.advance(100_000 * MS);
    assert!(notices.contains(&Notice::Frozen { at: 66_000 * MS }));
    let state = g.state(100_000);
    assert!(state.frozen);
    assert_eq!(state.running, None);
    assert_eq!(state.white.remaining, Some(57 * SECOND));
    assert_eq!(state.black.used, 61_000 * MS, "frozen clocks stop counting");
    assert_eq!(
        g.press(100_000, Black),
        vec![Notice::Ignored {
            input: Input::Press(Black),
            reason: Ignored::Frozen
        }]
    );
    assert_eq!(g.engine.next_deadline(), None);
}

#[test]
fn fide_equipment_freeze_with_delay_too() {
    let mut g = game("10d2");
    g.start(0);
    assert!(g.state(12_000).frozen);
    let mut g = game("10b2");
    g.start(0);
    assert!(g.state(12_000).frozen);
}

#[test]
fn fide_equipment_no_freeze_in_sudden_death_the_flagged_side_can_still_press() {
    let mut g = game("60");
    g.start(0);
    let state = g.state(65_000);
    assert!(!state.frozen);
    assert_eq!(state.running, Some(White));
    assert_eq!(state.white.remaining, Some(0));
    g.press(65_000, White);
    let state = g.state(80_000);
    assert_eq!(
        state.white.remaining,
        Some(0),
        "the flagged side stays at 0:00"
    );
    assert_eq!(state.black.remaining, Some(45 * SECOND));
    assert_eq!(g.engine.next_deadline(), Some(125_000 * MS));
}

#[test]
fn fide_equipment_no_credit_after_last_stage_flag() {
    let mut g = game_with("60+5", freeze(false));
    g.start(0);
    // White falls at 65 s and presses at 70 s: nothing is added
    g.press(70_000, White);
    let state = g.state(70_000);
    assert_eq!(state.white.remaining, Some(0));
    assert_eq!(state.white.moves, 1);
    g.press(71_000, Black);
    assert_eq!(g.remaining(71_000, White), Some(0));
    // Black was never flagged: 65 s - 1 s + 5 s
    assert_eq!(g.remaining(71_000, Black), Some(69 * SECOND));
}

#[test]
fn freeze_setting_overrides_the_default() {
    let mut g = game_with("60", freeze(true));
    g.start(0);
    assert!(g.state(61_000).frozen);
}

// ---- Art. 6.10b, 6.13: corrections; Art. 6.12: pause ------------------------

#[test]
fn art_6_10b_arbiter_sets_remaining_time_moves_and_stage() {
    let mut g = game("40/5400+30:1800+30");
    g.start(0);
    g.press(10_000, White);
    let notices = g.adjust(20_000, White, Some(3_000_000), Some(39), None);
    assert!(matches!(notices[0], Notice::Adjusted(_)));
    let state = g.state(20_000);
    assert_eq!(state.white.remaining, Some(3_000_000 * MS));
    assert_eq!(state.white.moves, 39);
    g.press(25_000, Black);
    // White's 40th move ends stage 1
    g.press(30_000, White);
    let state = g.state(30_000);
    assert_eq!(state.white.stage, 2);
    assert_eq!(
        state.white.remaining,
        Some((3_000_000 - 5_000 + 1_800_000 + 30_000) * MS)
    );
    g.adjust(31_000, Black, None, None, Some(2));
    assert_eq!(g.state(31_000).black.stage, 2);
}

#[test]
fn art_6_10b_correction_of_the_running_clock_counts_from_the_correction() {
    let mut g = game("300");
    g.start(0);
    g.adjust(10_000, White, Some(100_000), None, None);
    assert_eq!(g.remaining(15_000, White), Some(95 * SECOND));
    assert_eq!(g.engine.next_deadline(), Some(110_000 * MS));
}

#[test]
fn art_6_10b_giving_a_flagged_side_time_clears_its_flag() {
    let mut g = game("60");
    g.start(0);
    g.adjust(70_000, White, Some(30_000), None, None);
    let state = g.state(70_000);
    assert!(state.flags.is_empty());
    assert_eq!(state.white.flag_at, None);
    assert!(!state.paused, "a game that was not frozen keeps running");
    assert_eq!(g.remaining(80_000, White), Some(20 * SECOND));
}

#[test]
fn art_6_10b_clearing_the_only_flag_of_a_frozen_game_pauses_it_until_resumed() {
    let mut g = game("60+1");
    g.start(0);
    assert!(g.state(70_000).frozen);
    g.adjust(70_000, White, Some(10_000), None, None);
    let state = g.state(70_000);
    assert!(!state.frozen);
    assert!(state.paused);
    assert_eq!(state.running, None);
    assert_eq!(g.remaining(80_000, White), Some(10 * SECOND));
    g.resume(80_000);
    assert_eq!(g.remaining(85_000, White), Some(5 * SECOND));
}

#[test]
fn art_6_10b_setting_the_running_clock_to_zero_makes_its_flag_fall_at_once() {
    let mut g = game("300");
    g.start(0);
    let notices = g.adjust(10_000, White, Some(0), None, None);
    assert!(notices.contains(&Notice::FlagFell {
        side: White,
        at: 10_000 * MS,
        stage: 1,
        last_stage: true
    }));
}

#[test]
fn art_6_12_pause_stops_the_clock_presses_are_ignored_resume_restarts_the_running_side() {
    let mut g = game("300");
    g.start(0);
    g.press(10_000, White);
    assert_eq!(g.pause(20_000), vec![Notice::Paused]);
    let state = g.state(50_000);
    assert!(state.paused);
    assert_eq!(state.running, None);
    assert_eq!(state.to_move, Some(Black));
    assert_eq!(state.black.remaining, Some(290 * SECOND));
    assert_eq!(
        g.press(30_000, Black),
        vec![Notice::Ignored {
            input: Input::Press(Black),
            reason: Ignored::Paused
        }]
    );
    assert_eq!(g.resume(60_000), vec![Notice::Resumed]);
    assert_eq!(g.remaining(65_000, Black), Some(285 * SECOND));
    g.press(65_000, Black);
    // the move's used time excludes the pause
    let pressed = g
        .engine
        .history()
        .iter()
        .flat_map(|e| e.notices.iter())
        .filter_map(|n| match n {
            Notice::Pressed { side, used, .. } if *side == Black => Some(*used),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(pressed, vec![15_000 * MS]);
    assert_eq!(
        g.resume(66_000)[0],
        Notice::Ignored {
            input: Input::Resume,
            reason: Ignored::NotPaused
        }
    );
}

#[test]
fn art_6_12_simple_delay_survives_a_pause() {
    let mut g = game("60d5");
    g.start(0);
    g.pause(2_000);
    g.resume(10_000);
    assert_eq!(g.state(10_000).white.delay_left, Some(3 * SECOND));
    assert_eq!(g.remaining(14_000, White), Some(59 * SECOND));
}

// ---- the record ------------------------------------------------------------

#[test]
fn history_has_every_input_and_every_flag_with_the_used_time_of_every_move() {
    let mut g = game("60");
    g.start(0);
    g.press(3_000, White);
    g.press(4_000, White);
    g.engine.advance(100_000 * MS);
    let history: &[HistoryEntry] = g.engine.history();
    let inputs: Vec<Input> = history.iter().map(|e| e.input).collect();
    assert_eq!(
        inputs,
        vec![
            Input::Start,
            Input::Press(White),
            Input::Press(White),
            Input::Elapsed
        ]
    );
    assert_eq!(history[3].at, 63_000 * MS);
    assert_eq!(
        history[3].notices,
        vec![Notice::FlagFell {
            side: Black,
            at: 63_000 * MS,
            stage: 1,
            last_stage: true
        }]
    );
    assert_eq!(
        history[1].notices,
        vec![Notice::Pressed {
            side: White,
            move_number: 1,
            used: 3_000 * MS
        }]
    );
    // advance is idempotent
    assert!(g.engine.advance(100_000 * MS).is_empty());
    assert_eq!(g.engine.history().len(), 4);
}

#[test]
fn state_is_pure() {
    let mut g = game("60+1");
    g.start(0);
    let a = g.state(100_000);
    let b = g.state(100_000);
    assert_eq!(a, b);
    assert!(g.engine.history().len() == 1);
    assert_eq!(g.engine.next_deadline(), Some(61_000 * MS));
}

trait Check {
    fn advance_to_check(&mut self, at_ms: i64);
}

impl Check for Game {
    /// `advance` at the last input's instant changes nothing.
    fn advance_to_check(&mut self, at_ms: i64) {
        let before = self.state(at_ms);
        assert!(self.engine.advance(at_ms * MS).is_empty());
        assert_eq!(self.state(at_ms), before);
    }
}

#[test]
fn art_6_10b_moving_a_running_clock_into_a_stage_without_delay_drops_the_delay() {
    // Black moves in a 1 s delay stage; the arbiter moves it to the last
    // stage (Bronstein) and sets its time to 0: the flag falls at once, not
    // after the old stage's delay
    let mut g = game("2/6d1:5b1");
    g.start(0);
    g.press(1_000, White);
    let notices = g.adjust(1_000, Black, Some(0), None, Some(2));
    assert!(notices.contains(&Notice::FlagFell {
        side: Black,
        at: 1_000 * MS,
        stage: 2,
        last_stage: true
    }));
}

#[test]
fn stage_advance_at_the_flag_the_waiting_sides_next_move_gets_the_new_stages_increment() {
    // 1 s increment in stage 1, 5 s in stage 2; White runs out at 11 s:
    // Black's next move now belongs to stage 2
    let mut g = game_with("1/10+1:20+5", by_flag());
    g.start(0);
    let state = g.state(11_000);
    assert_eq!(state.white.remaining, Some(20 * SECOND));
    assert_eq!(state.black.remaining, Some((11 + 20 - 1 + 5) * SECOND));
    g.press(12_000, White);
    assert_eq!(g.remaining(12_000, White), Some((19 + 5) * SECOND));
}
