//! What a board's display unit shows at an instant: a pure function of the
//! engine's [`ClockState`], the `[display]` config, the unit's capabilities
//! (its HELLO), the side the unit is configured for, and a few board-level
//! marks (arbiter called, button unit lost, down time).
//!
//! Promises (the normative rules are `protocol/SPEC.md` 8.1 and 8.2):
//! * times are ROUNDED UP to the unit shown (the tenth, the second, the
//!   minute), so `0:00` / `0:00.0` appears exactly at the instant the flag
//!   falls, never before; upcount shows the used time rounded down;
//! * the text fits the unit's declared `digits`: `M:SS` below one hour,
//!   `M:SS.t` in tenths mode (chosen on the rounded value, so `0:20` is
//!   followed by `0:19.9`, never by `0:20.0`; only below 10 min on 4 digits,
//!   1 h on more, so it fits), `H:MM:SS` from one hour where it fits (5
//!   digits: up to 9:59:59), else `H.MM` (hours and minutes: `1.30` on a
//!   4-digit unit);
//! * [`DisplayRules::next_change`] gives the exact instant the rendered
//!   [`DisplayState`] next changes by the passing of time alone, so a runtime
//!   sends frames when the shown value changes, not on a polling tick; events
//!   (presses, flags, pauses) change the state and are rendered at once;
//! * which panel shows which side follows the board's `white_button` and the
//!   display's [`DisplaySide`]; a one-panel unit shows its side in `left`
//!   (`both`: the side whose clock runs);
//! * the host's icons only: LINK_LOST and LOW_POWER are never set (the
//!   device sets them for its own link); a board without its button unit
//!   sets NO_BUTTONS; FIRST_FLAG marks the side whose flag fell first, from
//!   that instant on;
//! * the brightness setting (0..=255) is scaled to the unit's levels;
//! * no clock, no I/O, no panics.

use chessclock_protocol::{Capabilities, DisplayState, Icons, Panel, Text};

use serde::{Deserialize, Serialize};

use crate::clocktext::{self, Style, TENTH};
use crate::engine::{ClockState, Micros, Side, SideState, MS, SECOND};

/// One minute.
const MINUTE: Micros = 60 * SECOND;
/// Digits assumed for a unit that declares fewer (SPEC.md 8.1).
const MIN_DIGITS: u8 = 4;

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
    /// 0 (darkest) ..= 255 (brightest), scaled to each unit's levels.
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

/// Which side a display unit shows (per display in the board's config).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DisplaySide {
    /// White's time only (in the left panel).
    White,
    /// Black's time only (in the left panel).
    Black,
    /// Both sides on a two-panel unit (White's panel by `white-button`); on a
    /// one-panel unit the side whose clock runs, else the side to move, else
    /// White.
    #[default]
    Both,
}

impl DisplaySide {
    pub fn as_str(self) -> &'static str {
        match self {
            DisplaySide::White => "white",
            DisplaySide::Black => "black",
            DisplaySide::Both => "both",
        }
    }
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
    /// A notice about the saved state (e.g. `STATE DAMAGED` when the store
    /// found damage at start-up), shown unless something above needs the
    /// text line.
    pub state_notice: Option<String>,
    /// Time left until a scheduled start (Art. 6.6), shown as a countdown
    /// (`START 4:59`) while the game has not started.
    pub start_in: Option<Micros>,
}

impl Marks {
    fn stage_flag(&self, side: Side) -> bool {
        match side {
            Side::White => self.stage_flag_white,
            Side::Black => self.stage_flag_black,
        }
    }
}

/// `round(setting × (levels − 1) / 255)`, halves up; 0 for a unit without
/// brightness levels (SPEC.md 5.7).
pub fn scale_brightness(setting: u8, levels: u8) -> u8 {
    if levels == 0 {
        return 0;
    }
    let scaled = (2 * u32::from(setting) * (u32::from(levels) - 1) + 255) / 510;
    u8::try_from(scaled).unwrap_or(u8::MAX)
}

/// How one board's display unit renders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayRules {
    /// Tenths are shown when the rounded-up remaining time is below this.
    pub tenths_below: Micros,
    pub tenths: bool,
    pub text_chars: u8,
    /// Already scaled to the unit's levels.
    pub brightness: u8,
    pub white_button: ButtonSide,
    /// Digit positions per panel (at least [`MIN_DIGITS`]).
    pub digits: u8,
    /// Panels (time displays) of the unit: 1 or 2.
    pub panels: u8,
    pub side: DisplaySide,
}

impl DisplayRules {
    /// Rules for a unit showing both sides ([`DisplaySide::Both`]).
    pub fn new(config: &DisplayConfig, caps: &Capabilities, white_button: ButtonSide) -> Self {
        Self::for_side(config, caps, white_button, DisplaySide::Both)
    }

    /// Rules for a unit configured to show `side`.
    pub fn for_side(
        config: &DisplayConfig,
        caps: &Capabilities,
        white_button: ButtonSide,
        side: DisplaySide,
    ) -> Self {
        DisplayRules {
            tenths_below: i64::try_from(config.tenths_below_ms)
                .unwrap_or(i64::MAX / MS)
                .saturating_mul(MS),
            tenths: caps.tenths,
            text_chars: caps.text_chars,
            brightness: scale_brightness(config.brightness, caps.brightness_levels),
            white_button,
            digits: caps.digits.max(MIN_DIGITS),
            panels: if caps.displays == 1 { 1 } else { 2 },
            side,
        }
    }

    /// The side White's button is on, i.e. the side of the left panel of a
    /// two-panel unit showing both sides.
    pub fn left_side(&self) -> Side {
        match self.white_button {
            ButtonSide::Left => Side::White,
            ButtonSide::Right => Side::Black,
        }
    }

    /// The sides shown, left panel first (one entry: the right panel is
    /// blank).
    fn shown(&self, state: &ClockState) -> (Side, Option<Side>) {
        match (self.side, self.panels) {
            (DisplaySide::White, _) => (Side::White, None),
            (DisplaySide::Black, _) => (Side::Black, None),
            (DisplaySide::Both, 1) => {
                (state.running.or(state.to_move).unwrap_or(Side::White), None)
            }
            (DisplaySide::Both, _) => (self.left_side(), Some(self.left_side().other())),
        }
    }

    /// The whole display at the state's instant.
    pub fn render(&self, state: &ClockState, marks: &Marks) -> DisplayState {
        let (left, right) = self.shown(state);
        DisplayState {
            left: self.panel(state, marks, left),
            right: match right {
                Some(side) => self.panel(state, marks, side),
                None => blank_panel(),
            },
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
            icons |= Icons::NO_BUTTONS.0;
        }
        if own.delay_left.is_some_and(|d| d > 0) {
            icons |= Icons::BONUS.0;
        }
        Panel {
            time: Text::truncated(&self.time_text(own)),
            icons: Icons(icons).without(Icons::DEVICE_OWN),
            moves: u16::try_from(own.moves).unwrap_or(u16::MAX - 1),
            stage: u8::try_from(own.stage).unwrap_or(u8::MAX),
        }
    }

    /// The time shown for one side (the one formatter, [`clocktext`]).
    pub fn time_text(&self, side: &SideState) -> String {
        match side.remaining {
            None => {
                let used = side.used.max(0);
                if used / SECOND < self.hms_limit().max(3600) {
                    clocktext::elapsed(used, Style::SECONDS)
                } else {
                    self.hours_minutes(used / MINUTE)
                }
            }
            Some(remaining) => {
                let remaining = remaining.max(0);
                if self.in_tenths(remaining)
                    || ceil_div(remaining, SECOND) < self.hms_limit().max(3600)
                {
                    clocktext::remaining(remaining, self.style())
                } else {
                    self.hours_minutes(ceil_div(remaining, MINUTE))
                }
            }
        }
    }

    /// How this unit writes a remaining time in [`clocktext`]'s terms
    /// (where `H:MM:SS` no longer fits its digits, [`Self::time_text`]
    /// writes `H.MM`).
    pub fn style(&self) -> Style {
        Style {
            tenths_below: self.tenths_limit(),
            hours: false,
        }
    }

    /// `H.MM` of `minutes` (already rounded): where `H:MM:SS` does not fit
    /// the unit's digits.
    fn hours_minutes(&self, minutes: Micros) -> String {
        let minutes = minutes.min(self.hm_max_minutes());
        format!("{}.{:02}", minutes / 60, minutes % 60)
    }

    /// Seconds from which `H:MM:SS` no longer fits: `H` has `digits − 4`
    /// digits at most.
    fn hms_limit(&self) -> Micros {
        3600 * pow10(self.digits.saturating_sub(4))
    }

    /// The largest minute count `H.MM` can show (`99.59` on 4 digits).
    fn hm_max_minutes(&self) -> Micros {
        (pow10(self.digits.saturating_sub(2)) - 1) * 60 + 59
    }

    /// Below this (rounded-up tenths) the text is in tenths.
    fn tenths_limit(&self) -> Micros {
        let fits = if self.digits <= 4 {
            10 * MINUTE
        } else {
            60 * MINUTE
        };
        if self.tenths {
            self.tenths_below.min(fits)
        } else {
            0
        }
    }

    fn in_tenths(&self, remaining: Micros) -> bool {
        ceil_div(remaining, TENTH) * TENTH < self.tenths_limit()
    }

    fn text(&self, state: &ClockState, marks: &Marks) -> String {
        if marks.arbiter_called {
            "ARBITER".to_owned()
        } else if let Some(end) = &marks.game_end {
            end.clone()
        } else if marks.buttons_lost {
            "NO BUTTONS".to_owned()
        } else if let Some(notice) = &marks.state_notice {
            notice.clone()
        } else if let Some(start_in) = marks.start_in.filter(|_| !state.started) {
            format!("START {}", clocktext::remaining(start_in, Style::SECONDS))
        } else if state.paused {
            match marks.down_time {
                Some(down) => format!("DOWN {}", clocktext::remaining(down, Style::SECONDS)),
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
        let (left, right) = self.shown(state);
        if left != side && right != Some(side) {
            return None;
        }
        let own = state.side(side);
        let elapsed = match own.remaining {
            None => {
                let used = own.used.max(0);
                let unit = if self.whole_unit(used / SECOND) == MINUTE {
                    MINUTE
                } else {
                    SECOND
                };
                unit - used % unit
            }
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
        let unit = if self.in_tenths(remaining) {
            TENTH
        } else {
            self.whole_unit(ceil_div(remaining, SECOND))
        };
        let shown_up_to = ceil_div(remaining, unit) * unit;
        Some(t.saturating_add(shown_up_to - remaining + 1))
    }

    /// The unit of the whole text for `seconds`: a minute in `H.MM`.
    fn whole_unit(&self, seconds: Micros) -> Micros {
        if seconds >= 3600 && seconds >= self.hms_limit() {
            MINUTE
        } else {
            SECOND
        }
    }

    /// The largest remaining time `b < remaining` at which the shown text
    /// changes (the text changes when the remaining time reaches `b`).
    fn next_boundary_below(&self, remaining: Micros) -> Micros {
        if self.in_tenths(remaining) {
            return (ceil_div(remaining, TENTH) - 1) * TENTH;
        }
        let seconds = ceil_div(remaining, SECOND);
        let mut boundary = if self.whole_unit(seconds) == MINUTE {
            // H.MM: the minute changes, or (below the switch) the form does.
            let minutes = ceil_div(remaining, MINUTE).min(self.hm_max_minutes());
            let minute_boundary = (minutes - 1) * MINUTE;
            let switch = (self.hms_limit().max(3600) - 1) * SECOND;
            minute_boundary.max(switch)
        } else {
            (seconds - 1) * SECOND
        };
        // Tenths mode begins once the rounded-up tenths fall below the
        // limit: at the largest multiple of a tenth below it.
        let limit = self.tenths_limit();
        if limit > 0 {
            let tenths_start = ((limit - 1) / TENTH) * TENTH;
            if tenths_start < remaining {
                boundary = boundary.max(tenths_start);
            }
        }
        boundary
    }
}

/// A panel that shows nothing (SPEC.md 5.7: empty time, no counters).
fn blank_panel() -> Panel {
    Panel {
        time: Text::empty(),
        icons: Icons(0),
        moves: 0xFFFF,
        stage: 0,
    }
}

fn pow10(exponent: u8) -> Micros {
    10i64.saturating_pow(u32::from(exponent.min(15)))
}

fn ceil_div(value: Micros, unit: Micros) -> Micros {
    (value + unit - 1).div_euclid(unit)
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
}
