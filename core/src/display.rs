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
    /// Game time (µs) of that call, for the readers (the hall's page shows
    /// when it came); the display does not use it.
    pub arbiter_called_at: Option<Micros>,
    /// Who acknowledged the standing call (`ack-call`) and at what game
    /// time (µs), for the readers; the call stands until a resume. The
    /// display does not use it (the players see the call until then).
    pub arbiter_call_acknowledged: Option<(String, Micros)>,
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
mod tests;
