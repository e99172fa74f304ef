//! Transcripts of the display rules: the text, panels and marks shown for a
//! clock state, and the exact instant the shown text next changes.

use super::*;

fn side(remaining: Option<Micros>) -> SideState {
    SideState {
        remaining,
        used: 0,
        moves: 0,
        stage: 1,
        flag_at: None,
        delay_left: None,
        periods_left: None,
        in_overtime: false,
    }
}

fn running_white(t: Micros, white: Micros, black: Micros) -> ClockState {
    ClockState {
        t,
        started: true,
        running: Some(Side::White),
        to_move: Some(Side::White),
        paused: false,
        frozen: false,
        flags: vec![],
        white: side(Some(white)),
        black: side(Some(black)),
    }
}

fn caps(tenths: bool) -> Capabilities {
    Capabilities {
        displays: 2,
        digits: 5,
        tenths,
        text_chars: 16,
        ..Capabilities::default()
    }
}

fn rules(tenths: bool) -> DisplayRules {
    DisplayRules::new(&DisplayConfig::default(), &caps(tenths), ButtonSide::Left)
}

fn rules_with(digits: u8, tenths: bool, tenths_below_ms: u64) -> DisplayRules {
    let config = DisplayConfig {
        tenths_below_ms,
        ..DisplayConfig::default()
    };
    let caps = Capabilities {
        digits,
        ..caps(tenths)
    };
    DisplayRules::new(&config, &caps, ButtonSide::Left)
}

fn digit_positions(text: &str) -> usize {
    text.chars().filter(|c| !matches!(c, ':' | '.')).count()
}

fn text_of(rules: &DisplayRules, remaining: Micros) -> String {
    rules.time_text(&side(Some(remaining)))
}

#[test]
fn formats_round_up_and_switch_modes() {
    let r = rules(true);
    assert_eq!(text_of(&r, 5_400 * SECOND), "1:30:00");
    assert_eq!(text_of(&r, 3_600 * SECOND), "1:00:00");
    assert_eq!(text_of(&r, 3_599 * SECOND + 1), "1:00:00");
    assert_eq!(text_of(&r, 3_599 * SECOND), "59:59");
    assert_eq!(text_of(&r, 299 * SECOND + 1), "5:00");
    assert_eq!(text_of(&r, 20 * SECOND), "0:20");
    assert_eq!(text_of(&r, 19_900 * MS + 1), "0:20");
    assert_eq!(text_of(&r, 19_900 * MS), "0:19.9");
    assert_eq!(text_of(&r, 19_650 * MS), "0:19.7");
    assert_eq!(text_of(&r, 1), "0:00.1");
    assert_eq!(text_of(&r, 0), "0:00.0");
    assert_eq!(text_of(&r, -5 * SECOND), "0:00.0");
    let plain = rules(false);
    assert_eq!(text_of(&plain, 19_650 * MS), "0:20");
    assert_eq!(text_of(&plain, 1), "0:01");
    assert_eq!(text_of(&plain, 0), "0:00");
}

#[test]
fn upcount_rounds_down() {
    let r = rules(true);
    let mut s = side(None);
    s.used = 61 * SECOND + 999_999;
    assert_eq!(r.time_text(&s), "1:01");
}

#[test]
fn next_change_on_second_boundaries() {
    let r = rules(true);
    // 5:00 exactly at t=1000: shows 5:00 until 4:59 at t + 1 s.
    let state = running_white(1_000, 300 * SECOND, 300 * SECOND);
    assert_eq!(r.next_change(&state), Some(1_000 + SECOND));
    // 4:59.000001 shows 5:00; changes when 4:59.000000 is reached.
    let state = running_white(0, 299 * SECOND + 1, 300 * SECOND);
    assert_eq!(r.next_change(&state), Some(1));
    let changed = running_white(1, 299 * SECOND, 300 * SECOND);
    assert_eq!(
        r.render(&changed, &Marks::default()).left.time.as_str(),
        "4:59"
    );
}

#[test]
fn next_change_enters_tenths_at_nineteen_nine() {
    let r = rules(true);
    // 20.5 s shows 0:21; next change at 20.0 s (shows 0:20).
    let state = running_white(0, 20_500 * MS, SECOND);
    assert_eq!(r.next_change(&state), Some(500 * MS));
    // 20.0 s shows 0:20; next change at 19.9 s (0:19.9), 100 ms later.
    let state = running_white(0, 20 * SECOND, SECOND);
    assert_eq!(r.next_change(&state), Some(100 * MS));
    // In tenths: 19.65 s shows 0:19.7, changes at 19.6 s.
    let state = running_white(7, 19_650 * MS, SECOND);
    assert_eq!(r.next_change(&state), Some(7 + 50 * MS));
}

#[test]
fn zero_appears_exactly_at_the_flag() {
    let r = rules(true);
    let state = running_white(0, 100 * MS, SECOND);
    let at = r.next_change(&state);
    assert_eq!(at, Some(100 * MS));
    let just_before = running_white(100 * MS - 1, 1, SECOND);
    assert_eq!(
        r.render(&just_before, &Marks::default()).left.time.as_str(),
        "0:00.1"
    );
    let at_flag = running_white(100 * MS, 0, SECOND);
    assert_eq!(
        r.render(&at_flag, &Marks::default()).left.time.as_str(),
        "0:00.0"
    );
    assert_eq!(r.next_change(&at_flag), None);
}

#[test]
fn next_change_waits_for_a_running_delay() {
    let r = rules(false);
    let mut state = running_white(0, 300 * SECOND, 300 * SECOND);
    state.white.delay_left = Some(3 * SECOND);
    assert_eq!(r.next_change(&state), Some(4 * SECOND));
}

#[test]
fn a_rising_time_changes_just_past_each_shown_value() {
    let r = rules(true);
    // 59.4 s shows 1:00 until it exceeds 60 s, 0.6 s (and 1 µs) later.
    let at = r.next_change_rising(&side(Some(59_400 * MS)), 1_000);
    assert_eq!(at, Some(1_000 + 600 * MS + 1));
    assert_eq!(text_of(&r, 59_400 * MS + 600 * MS), "1:00");
    assert_eq!(text_of(&r, 59_400 * MS + 600 * MS + 1), "1:01");
    // In tenths: 10.05 s shows 0:10.1 until past 10.1 s.
    let at = r.next_change_rising(&side(Some(10_050 * MS)), 0);
    assert_eq!(at, Some(50 * MS + 1));
    assert_eq!(r.next_change_rising(&side(None), 0), None);
}

#[test]
fn nothing_changes_while_paused_or_not_started() {
    let r = rules(true);
    let mut state = running_white(0, 300 * SECOND, 300 * SECOND);
    state.running = None;
    state.paused = true;
    assert_eq!(r.next_change(&state), None);
    let shown = r.render(&state, &Marks::default());
    assert!(shown.left.icons.contains(Icons::PAUSED));
    assert_eq!(shown.text.as_str(), "PAUSE");
}

#[test]
fn white_panel_follows_white_button() {
    let state = running_white(0, 300 * SECOND, 180 * SECOND);
    let left = rules(true).render(&state, &Marks::default());
    assert_eq!(left.left.time.as_str(), "5:00");
    assert!(left.left.icons.contains(Icons::RUNNING));
    assert_eq!(left.right.time.as_str(), "3:00");
    let right_rules = DisplayRules::new(&DisplayConfig::default(), &caps(true), ButtonSide::Right);
    let right = right_rules.render(&state, &Marks::default());
    assert_eq!(right.left.time.as_str(), "3:00");
    assert_eq!(right.right.time.as_str(), "5:00");
    assert!(right.right.icons.contains(Icons::RUNNING));
    assert!(!right.left.icons.contains(Icons::RUNNING));
}

#[test]
fn flags_mark_first_and_stage() {
    let r = rules(true);
    let mut state = running_white(0, 0, 0);
    state.running = None;
    state.frozen = true;
    state.flags = vec![Side::Black, Side::White];
    state.white.flag_at = Some(10);
    state.black.flag_at = Some(5);
    let shown = r.render(&state, &Marks::default());
    assert!(shown.right.icons.contains(Icons::FLAG));
    assert!(shown.right.icons.contains(Icons::FIRST_FLAG));
    assert!(shown.left.icons.contains(Icons::FLAG));
    assert!(!shown.left.icons.contains(Icons::FIRST_FLAG));

    let mut running = running_white(0, 60 * SECOND, 0);
    running.black.stage = 2;
    let marks = Marks {
        first_flag: Some(Side::Black),
        stage_flag_black: true,
        ..Marks::default()
    };
    let shown = r.render(&running, &marks);
    assert!(shown.right.icons.contains(Icons::STAGE_FLAG));
    assert!(shown.right.icons.contains(Icons::FIRST_FLAG));
    assert!(!shown.right.icons.contains(Icons::FLAG));
    assert_eq!(shown.right.stage, 2);
}

#[test]
fn arbiter_and_down_time_text() {
    let r = rules(true);
    let mut state = running_white(0, 300 * SECOND, 300 * SECOND);
    state.running = None;
    state.paused = true;
    let marks = Marks {
        down_time: Some(83 * SECOND + 1),
        ..Marks::default()
    };
    assert_eq!(r.render(&state, &marks).text.as_str(), "DOWN 1:24");
    let marks = Marks {
        arbiter_called: true,
        ..Marks::default()
    };
    let shown = r.render(&state, &marks);
    assert_eq!(shown.text.as_str(), "ARBITER");
    assert!(shown.left.icons.contains(Icons::ARBITER));
}

#[test]
fn four_digit_units_show_hours_as_hours_and_minutes() {
    let r = rules_with(4, true, 20_000);
    // 1 h 30 min: `1:30:00` would show as `30:00` on 4 digits.
    assert_eq!(text_of(&r, 5_400 * SECOND), "1.30");
    // Rounded up to the minute shown.
    assert_eq!(text_of(&r, 5_370 * SECOND), "1.30");
    assert_eq!(text_of(&r, 5_340 * SECOND), "1.29");
    assert_eq!(text_of(&r, 5_340 * SECOND + 1), "1.30");
    // The switch: `1.00` for the last second above one hour.
    assert_eq!(text_of(&r, 3_660 * SECOND + 1), "1.02");
    assert_eq!(text_of(&r, 3_660 * SECOND), "1.01");
    assert_eq!(text_of(&r, 3_600 * SECOND + 1), "1.01");
    assert_eq!(text_of(&r, 3_600 * SECOND), "1.00");
    assert_eq!(text_of(&r, 3_599 * SECOND + 1), "1.00");
    assert_eq!(text_of(&r, 3_599 * SECOND), "59:59");
    assert_eq!(text_of(&r, 599 * SECOND), "9:59");
    assert_eq!(text_of(&r, 19_900 * MS), "0:19.9");
    // Too large for H.MM: the largest that fits.
    assert_eq!(text_of(&r, 6_000 * MINUTE), "99.59");
    assert_eq!(text_of(&r, 5_999 * MINUTE), "99.59");
    assert_eq!(text_of(&r, 5_998 * MINUTE), "99.58");
    // Every text fits the declared digits.
    for seconds in [0, 59, 600, 3_599, 3_600, 7_199, 35_999, 36_000, 359_999] {
        let text = text_of(&r, seconds * SECOND + 1);
        assert!(digit_positions(&text) <= 4, "{seconds} s: {text}");
    }
    // A unit declaring fewer digits is rendered as a 4-digit one.
    assert_eq!(
        text_of(&rules_with(3, true, 20_000), 5_400 * SECOND),
        "1.30"
    );
}

#[test]
fn five_and_six_digit_units_switch_at_ten_and_a_hundred_hours() {
    let five = rules_with(5, true, 20_000);
    assert_eq!(text_of(&five, 35_999 * SECOND), "9:59:59");
    assert_eq!(text_of(&five, 35_999 * SECOND + 1), "10.00");
    assert_eq!(text_of(&five, 36_000 * SECOND), "10.00");
    assert_eq!(text_of(&five, 36_060 * SECOND + 1), "10.02");
    assert_eq!(text_of(&five, 1_000 * 3_600 * SECOND), "999.59");
    let six = rules_with(6, true, 20_000);
    assert_eq!(text_of(&six, 36_000 * SECOND), "10:00:00");
    assert_eq!(text_of(&six, 359_999 * SECOND), "99:59:59");
    assert_eq!(text_of(&six, 359_999 * SECOND + 1), "100.00");
}

#[test]
fn tenths_only_where_the_text_fits() {
    // A 15-minute tenths threshold: on 4 digits tenths start below 10 min.
    let four = rules_with(4, true, 900_000);
    assert_eq!(text_of(&four, 14 * MINUTE), "14:00");
    assert_eq!(text_of(&four, 600 * SECOND), "10:00");
    assert_eq!(text_of(&four, 599_900 * MS + 1), "10:00");
    assert_eq!(text_of(&four, 599_900 * MS), "9:59.9");
    let five = rules_with(5, true, 900_000);
    assert_eq!(text_of(&five, 14 * MINUTE), "14:00.0");
    assert_eq!(text_of(&five, 899_900 * MS), "14:59.9");
    assert_eq!(text_of(&five, 900 * SECOND), "15:00");
    // No tenths flag: never.
    assert_eq!(text_of(&rules_with(5, false, 900_000), 19_650 * MS), "0:20");
    // A threshold of 0: never.
    assert_eq!(text_of(&rules_with(5, true, 0), 1), "0:01");
}

#[test]
fn upcount_rounds_down_to_the_unit_shown() {
    let used = |rules: &DisplayRules, us: Micros| {
        let mut s = side(None);
        s.used = us;
        rules.time_text(&s)
    };
    let four = rules_with(4, true, 20_000);
    assert_eq!(used(&four, 3_600 * SECOND - 1), "59:59");
    assert_eq!(used(&four, 3_600 * SECOND), "1.00");
    assert_eq!(used(&four, 5_460 * SECOND - 1), "1.30");
    assert_eq!(used(&four, 5_460 * SECOND), "1.31");
    assert_eq!(
        used(&rules_with(5, true, 20_000), 5_460 * SECOND),
        "1:31:00"
    );
    // Changes at each minute in H.MM, at each second below.
    let mut state = running_white(0, 0, 0);
    state.white.remaining = None;
    state.white.used = 5_430 * SECOND;
    assert_eq!(four.next_change(&state), Some(30 * SECOND));
    state.white.used = 3_599 * SECOND + 400 * MS;
    assert_eq!(four.next_change(&state), Some(600 * MS));
}

/// Every boundary: the text is the same on (boundary, remaining] and
/// differs at the boundary, for 4, 5 and 6 digits, with and without
/// tenths, around every switch.
#[test]
fn next_change_is_exactly_the_next_boundary_everywhere() {
    let mut points: Vec<Micros> = Vec::new();
    for center in [
        SECOND,
        19_900 * MS,
        20 * SECOND,
        600 * SECOND,
        900 * SECOND,
        3_599 * SECOND,
        3_600 * SECOND,
        3_660 * SECOND,
        5_400 * SECOND,
        35_999 * SECOND,
        36_000 * SECOND,
        359_999 * SECOND,
    ] {
        for delta in [
            -MINUTE - 1,
            -SECOND,
            -TENTH - 1,
            -TENTH,
            -1,
            0,
            1,
            TENTH,
            TENTH + 1,
            SECOND + 1,
            MINUTE + 1,
        ] {
            if center + delta > 0 {
                points.push(center + delta);
            }
        }
    }
    for digits in [4, 5, 6] {
        for tenths in [false, true] {
            for below_ms in [20_000, 900_000] {
                let r = rules_with(digits, tenths, below_ms);
                for &remaining in &points {
                    let state = running_white(0, remaining, SECOND);
                    let at = r.next_change(&state).expect("a running time changes");
                    let boundary = remaining - at;
                    let shown = text_of(&r, remaining);
                    assert!(boundary < remaining);
                    for x in [boundary + 1, (boundary + remaining) / 2 + 1, remaining] {
                        assert_eq!(
                            text_of(&r, x),
                            shown,
                            "digits {digits} tenths {tenths} below {below_ms}: {remaining} µs shows {shown}, {x} µs differs (boundary {boundary})"
                        );
                    }
                    assert_ne!(
                        text_of(&r, boundary),
                        shown,
                        "digits {digits} tenths {tenths} below {below_ms}: nothing changes at {boundary} µs below {remaining} µs"
                    );
                }
            }
        }
    }
}

fn one_panel(side: DisplaySide) -> DisplayRules {
    let caps = Capabilities {
        displays: 1,
        ..caps(true)
    };
    DisplayRules::for_side(&DisplayConfig::default(), &caps, ButtonSide::Left, side)
}

#[test]
fn a_one_panel_unit_shows_its_configured_side() {
    let mut state = running_white(0, 300 * SECOND, 180 * SECOND);
    let black = one_panel(DisplaySide::Black).render(&state, &Marks::default());
    assert_eq!(black.left.time.as_str(), "3:00");
    assert!(!black.left.icons.contains(Icons::RUNNING));
    assert_eq!(black.right, blank_panel());
    let white = one_panel(DisplaySide::White).render(&state, &Marks::default());
    assert_eq!(white.left.time.as_str(), "5:00");
    // `both` on one panel: the running side, then the side to move.
    let both = one_panel(DisplaySide::Both);
    assert_eq!(
        both.render(&state, &Marks::default()).left.time.as_str(),
        "5:00"
    );
    state.running = Some(Side::Black);
    state.to_move = Some(Side::Black);
    let shown = both.render(&state, &Marks::default());
    assert_eq!(shown.left.time.as_str(), "3:00");
    assert!(shown.left.icons.contains(Icons::RUNNING));
    state.running = None;
    state.paused = true;
    assert_eq!(
        both.render(&state, &Marks::default()).left.time.as_str(),
        "3:00"
    );
    state.to_move = None;
    assert_eq!(
        both.render(&state, &Marks::default()).left.time.as_str(),
        "5:00"
    );
}

#[test]
fn a_display_showing_one_side_changes_only_with_that_side() {
    let state = running_white(0, 300 * SECOND, 180 * SECOND);
    assert_eq!(one_panel(DisplaySide::Black).next_change(&state), None);
    assert_eq!(
        one_panel(DisplaySide::White).next_change(&state),
        Some(SECOND)
    );
    // Two panels showing Black only: Black's time left, the right blank.
    let caps = caps(true);
    let rules = DisplayRules::for_side(
        &DisplayConfig::default(),
        &caps,
        ButtonSide::Left,
        DisplaySide::Black,
    );
    let shown = rules.render(&state, &Marks::default());
    assert_eq!(shown.left.time.as_str(), "3:00");
    assert_eq!(shown.right, blank_panel());
    assert_eq!(rules.next_change(&state), None);
}

#[test]
fn a_lost_button_unit_is_no_buttons_never_link_lost() {
    let r = rules(true);
    let state = running_white(0, 300 * SECOND, 300 * SECOND);
    let marks = Marks {
        buttons_lost: true,
        ..Marks::default()
    };
    let shown = r.render(&state, &marks);
    for panel in [shown.left, shown.right] {
        assert!(panel.icons.contains(Icons::NO_BUTTONS));
        assert!(!panel.icons.contains(Icons::LINK_LOST));
        assert!(!panel.icons.contains(Icons::LOW_POWER));
    }
    assert_eq!(shown.text.as_str(), "NO BUTTONS");
    let shown = r.render(&state, &Marks::default());
    assert!(!shown.left.icons.contains(Icons::NO_BUTTONS));
}

#[test]
fn first_flag_marks_the_first_fall_at_once_and_keeps_it() {
    let r = rules(true);
    // Sudden death without freeze: White fell, Black's clock runs on.
    let mut state = running_white(0, 0, 30 * SECOND);
    state.running = Some(Side::Black);
    state.flags = vec![Side::White];
    state.white.flag_at = Some(10);
    let shown = r.render(&state, &Marks::default());
    assert!(shown.left.icons.contains(Icons::FLAG));
    assert!(shown.left.icons.contains(Icons::FIRST_FLAG));
    assert!(!shown.right.icons.contains(Icons::FIRST_FLAG));
    // Black falls too: FIRST_FLAG stays with White alone.
    state.flags = vec![Side::White, Side::Black];
    state.black.flag_at = Some(30 * SECOND);
    state.running = None;
    let shown = r.render(&state, &Marks::default());
    assert!(shown.left.icons.contains(Icons::FIRST_FLAG));
    assert!(shown.right.icons.contains(Icons::FLAG));
    assert!(!shown.right.icons.contains(Icons::FIRST_FLAG));
}

#[test]
fn brightness_is_scaled_to_the_units_levels() {
    assert_eq!(scale_brightness(255, 8), 7);
    assert_eq!(scale_brightness(0, 8), 0);
    assert_eq!(scale_brightness(128, 2), 1);
    assert_eq!(scale_brightness(127, 2), 0);
    assert_eq!(scale_brightness(200, 16), 12);
    assert_eq!(scale_brightness(255, 255), 254);
    assert_eq!(scale_brightness(255, 1), 0);
    assert_eq!(scale_brightness(255, 0), 0);
    let caps = Capabilities {
        brightness_levels: 8,
        ..caps(true)
    };
    let rules = DisplayRules::new(&DisplayConfig::default(), &caps, ButtonSide::Left);
    let state = running_white(0, SECOND, SECOND);
    assert_eq!(rules.render(&state, &Marks::default()).brightness, 5);
}

#[test]
fn a_state_notice_shows_below_the_board_notices() {
    let r = rules(true);
    let mut state = running_white(0, 300 * SECOND, 300 * SECOND);
    state.running = None;
    state.paused = true;
    let marks = Marks {
        state_notice: Some("STATE DAMAGED".into()),
        down_time: Some(SECOND),
        ..Marks::default()
    };
    assert_eq!(r.render(&state, &marks).text.as_str(), "STATE DAMAGED");
    let marks = Marks {
        arbiter_called: true,
        ..marks
    };
    assert_eq!(r.render(&state, &marks).text.as_str(), "ARBITER");
}

#[test]
fn a_rising_time_changes_exactly_at_the_next_boundary_everywhere() {
    for digits in [4, 5] {
        let r = rules_with(digits, true, 20_000);
        for remaining in [
            59_400 * MS,
            19_950 * MS,
            19_900 * MS,
            3_599 * SECOND,
            3_599 * SECOND + 1,
            3_600 * SECOND,
            5_370 * SECOND,
            35_999 * SECOND,
            36_000 * SECOND + 7,
        ] {
            let at = r.next_change_rising(&side(Some(remaining)), 0).unwrap();
            let shown = text_of(&r, remaining);
            // The time grows by what passed since t = 0.
            assert_eq!(
                text_of(&r, remaining + at - 1),
                shown,
                "digits {digits}: {remaining} µs"
            );
            assert_ne!(
                text_of(&r, remaining + at),
                shown,
                "digits {digits}: {remaining} µs"
            );
        }
    }
}
