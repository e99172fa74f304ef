//! What a board's display unit shows at an instant: a pure function of the
//! engine's [`ClockState`], the `[display]` config, the unit's capabilities
//! and a few board-level marks (arbiter called, link lost, down time).
//!
//! Promises:
//! * times are ROUNDED UP (to the second, or to the tenth below
//!   `tenths_below_ms` on units that can show tenths), so `0:00` / `0:00.0`
//!   appears exactly at the instant the flag falls, never before;
//! * `H:MM:SS` at one hour and above, `M:SS` below, `M:SS.t` in tenths mode
//!   (tenths mode is chosen on the rounded value, so `0:20` is followed by
//!   `0:19.9`, never by `0:20.0`); upcount shows the used time rounded down;
//! * [`DisplayRules::next_change`] gives the exact instant the rendered
//!   [`DisplayState`] next changes by the passing of time alone, so a runtime
//!   sends frames when the shown value changes, not on a polling tick; events
//!   (presses, flags, pauses) change the state and are rendered at once;
//! * which panel is White's follows the board's `white_button`;
//! * no clock, no I/O, no panics.
//!
//! Units with fewer than five digits still get `H:MM:SS` text: the unit
//! decides how to fit it (the protocol carries text, not segments).

use chessclock_protocol::{Capabilities, DisplayState, Icons, Panel, Text};

use serde::{Deserialize, Serialize};

use crate::engine::{ClockState, Micros, Side, SideState, MS, SECOND};

/// One tenth of a second.
const TENTH: Micros = 100 * MS;

/// `[display]`
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DisplayConfig {
    /// Show tenths of a second below this remaining time (ms).
    pub tenths_below_ms: u64,
    /// Beep when a time control is passed (units with a buzzer). Off by default.
    pub beep_on_control: bool,
    /// Beep in each of the last N seconds (0 = never). Off by default.
    pub beep_last_seconds: u32,
    /// 0..=255 for units that support brightness.
    pub brightness: u8,
}

impl Default for DisplayConfig {
    fn default() -> Self {
        DisplayConfig {
            tenths_below_ms: 20_000,
            beep_on_control: false,
            beep_last_seconds: 0,
            brightness: 200,
        }
    }
}

/// Which physical button (left or right, facing the unit) is White's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ButtonSide {
    #[default]
    Left,
    Right,
}

/// Board-level facts the engine state does not carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// The side whose flag fell first in this game (any stage).
    pub first_flag: Option<Side>,
    /// Sides whose latest flag fell in a non-last stage (clock ran on).
    pub stage_flag_white: bool,
    pub stage_flag_black: bool,
    /// The arbiter was called (Art. 6.12b) and the clock not yet resumed.
    pub arbiter_called: bool,
    /// The board's button unit is configured but not connected.
    pub buttons_lost: bool,
    /// Down time of the last restart, shown while paused after it (Art. 6.10a).
    pub down_time: Option<Micros>,
    /// The game ended on an electronic board (`MATE`, `STALEMATE`).
    pub game_end: Option<String>,
}

impl Marks {
    fn stage_flag(&self, side: Side) -> bool {
        match side {
            Side::White => self.stage_flag_white,
            Side::Black => self.stage_flag_black,
        }
    }
}

/// How one board's display unit renders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayRules {
    /// Tenths are shown when the rounded-up remaining time is below this.
    pub tenths_below: Micros,
    pub tenths: bool,
    pub text_chars: u8,
    pub brightness: u8,
    pub white_button: ButtonSide,
}

impl DisplayRules {
    pub fn new(config: &DisplayConfig, caps: &Capabilities, white_button: ButtonSide) -> Self {
        DisplayRules {
            tenths_below: i64::try_from(config.tenths_below_ms)
                .unwrap_or(i64::MAX / MS)
                .saturating_mul(MS),
            tenths: caps.tenths,
            text_chars: caps.text_chars,
            brightness: config.brightness,
            white_button,
        }
    }

    /// The side shown on the left panel.
    pub fn left_side(&self) -> Side {
        match self.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        }
    }

    /// The whole display at the state's instant.
    pub fn render(&self, state: &ClockState, marks: &Marks) -> DisplayState {
        let left = self.left_side();
        DisplayState {
            left: self.panel(state, marks, left),
            right: self.panel(state, marks, left.other()),
            text: Text::truncated(truncate_chars(&self.text(state, marks), self.text_chars)),
            brightness: self.brightness,
        }
    }

    fn panel(&self, state: &ClockState, marks: &Marks, side: Side) -> Panel {
        let own = state.side(side);
        let mut icons = 0u16;
        let fallen = own.flag_at.is_some() || state.flags.contains(&side);
        if marks.stage_flag(side) {
            icons |= Icons::STAGE_FLAG.0;
        } else if fallen {
            icons |= Icons::FLAG.0;
        }
        let first = marks.first_flag.or_else(|| state.flags.first().copied());
        if first == Some(side) && (fallen || marks.stage_flag(side)) {
            icons |= Icons::FIRST_FLAG.0;
        }
        if state.running == Some(side) {
            icons |= Icons::RUNNING.0;
        }
        if state.paused {
            icons |= Icons::PAUSED.0;
        }
        if marks.arbiter_called {
            icons |= Icons::ARBITER.0;
        }
        if marks.buttons_lost {
            icons |= Icons::LINK_LOST.0;
        }
        if own.delay_left.is_some_and(|d| d > 0) {
            icons |= Icons::BONUS.0;
        }
        Panel {
            time: Text::truncated(&self.time_text(own)),
            icons: Icons(icons),
            moves: u16::try_from(own.moves).unwrap_or(u16::MAX - 1),
            stage: u8::try_from(own.stage).unwrap_or(u8::MAX),
        }
    }

    /// The time shown for one side.
    pub fn time_text(&self, side: &SideState) -> String {
        match side.remaining {
            None => format_seconds(side.used.max(0) / SECOND),
            Some(remaining) => {
                let remaining = remaining.max(0);
                let tenths = ceil_div(remaining, TENTH);
                if self.tenths && tenths * TENTH < self.tenths_below {
                    format!("{}:{:02}.{}", tenths / 600, (tenths / 10) % 60, tenths % 10)
                } else {
                    format_seconds(ceil_div(remaining, SECOND))
                }
            }
        }
    }

    fn text(&self, state: &ClockState, marks: &Marks) -> String {
        if marks.arbiter_called {
            "ARBITER".to_owned()
        } else if let Some(end) = &marks.game_end {
            end.clone()
        } else if marks.buttons_lost {
            "NO BUTTONS".to_owned()
        } else if state.paused {
            match marks.down_time {
                Some(down) => format!("DOWN {}", format_seconds(ceil_div(down.max(0), SECOND))),
                None => "PAUSE".to_owned(),
            }
        } else {
            String::new()
        }
    }

    /// The first instant after `state.t` at which the rendered display
    /// changes by the passing of time alone (`None`: it will not).
    pub fn next_change(&self, state: &ClockState) -> Option<Micros> {
        let side = state.running?;
        let own = state.side(side);
        let elapsed = match own.remaining {
            None => SECOND - own.used.max(0) % SECOND,
            Some(remaining) if remaining <= 0 => return None,
            Some(remaining) => {
                let boundary = self.next_boundary_below(remaining);
                own.delay_left.unwrap_or(0).max(0) + (remaining - boundary)
            }
        };
        Some(state.t.saturating_add(elapsed))
    }

    /// For a side whose time grows while the other thinks (hourglass): the
    /// first instant after `t` at which its shown time changes.
    pub fn next_change_rising(&self, side: &SideState, t: Micros) -> Option<Micros> {
        let remaining = side.remaining?.max(0);
        let tenths = ceil_div(remaining, TENTH);
        let unit = if self.tenths && tenths * TENTH < self.tenths_below {
            TENTH
        } else {
            SECOND
        };
        let shown_up_to = ceil_div(remaining, unit) * unit;
        Some(t.saturating_add(shown_up_to - remaining + 1))
    }

    /// The largest remaining time `b < remaining` at which the shown text
    /// changes (the text changes when the remaining time reaches `b`).
    fn next_boundary_below(&self, remaining: Micros) -> Micros {
        let tenths = ceil_div(remaining, TENTH);
        if self.tenths && tenths * TENTH < self.tenths_below {
            return (tenths - 1) * TENTH;
        }
        let seconds_boundary = (ceil_div(remaining, SECOND) - 1) * SECOND;
        if !self.tenths || self.tenths_below <= 0 {
            return seconds_boundary;
        }
        // Tenths mode begins once the rounded-up tenths fall below the
        // threshold: at the largest multiple of a tenth below it.
        let tenths_start = ((self.tenths_below - 1) / TENTH) * TENTH;
        if tenths_start < remaining {
            seconds_boundary.max(tenths_start)
        } else {
            seconds_boundary
        }
    }
}

fn ceil_div(value: Micros, unit: Micros) -> Micros {
    (value + unit - 1).div_euclid(unit)
}

fn format_seconds(seconds: Micros) -> String {
    if seconds >= 3600 {
        format!(
            "{}:{:02}:{:02}",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        )
    } else {
        format!("{}:{:02}", seconds / 60, seconds % 60)
    }
}

fn truncate_chars(text: &str, chars: u8) -> &str {
    match text.char_indices().nth(usize::from(chars)) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
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
        let right_rules =
            DisplayRules::new(&DisplayConfig::default(), &caps(true), ButtonSide::Right);
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
}
