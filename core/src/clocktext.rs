//! How a time is written for people: the one formatter behind every
//! surface that shows a clock (the display units, `chessclockctl status`
//! and `watch`, the history table and CSV, the PGN's `%clk`).
//!
//! Promises:
//! * a remaining time is ROUNDED UP ([`remaining`]), so `0:00` appears
//!   exactly at the instant the flag falls and never before, and every
//!   surface that rounds the same instant shows the same text;
//! * nothing is ever shown negative: a time past zero shows `0:00`
//!   (`0:00.0` in tenths);
//! * time that counts up (upcount's used time, [`elapsed`]) is rounded down;
//! * `H:MM:SS` at one hour and above (or always, for [`Style::PGN`]),
//!   `M:SS` below, `M:SS.t` below the style's tenths threshold; the
//!   threshold is compared with the rounded-up tenths, so `0:20` is followed
//!   by `0:19.9`, never by `0:20.0`;
//! * pure: no clock, no I/O, no panics (arithmetic saturates).

use crate::time::{Micros, MS, SECOND};

/// One tenth of a second.
pub const TENTH: Micros = 100 * MS;

/// How a time is written: where tenths begin and whether hours always show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Tenths are shown while the rounded-up time is below this (0: never).
    pub tenths_below: Micros,
    /// Always `H:MM:SS` (the PGN's `%clk`), even below an hour.
    pub hours: bool,
}

impl Style {
    /// A clock with tenths below 20 s: the daemon's default display, and
    /// what `chessclockctl` shows when the daemon does not say otherwise.
    pub const CLOCK: Style = Style {
        tenths_below: 20 * SECOND,
        hours: false,
    };
    /// Whole seconds only (units that cannot show tenths, countdowns).
    pub const SECONDS: Style = Style {
        tenths_below: 0,
        hours: false,
    };
    /// The PGN's `%clk` and clock tags: `H:MM:SS`.
    pub const PGN: Style = Style {
        tenths_below: 0,
        hours: true,
    };

    /// A clock with tenths below `ms` milliseconds (0: never).
    pub fn tenths_below_ms(ms: u64) -> Style {
        Style {
            tenths_below: i64::try_from(ms)
                .unwrap_or(i64::MAX / MS)
                .saturating_mul(MS),
            hours: false,
        }
    }
}

fn ceil_div(value: Micros, unit: Micros) -> Micros {
    let quotient = value.div_euclid(unit);
    if value.rem_euclid(unit) == 0 {
        quotient
    } else {
        quotient.saturating_add(1)
    }
}

/// Whether `time` (not negative) is written with tenths in `style`.
pub fn shows_tenths(time: Micros, style: Style) -> bool {
    style.tenths_below > 0
        && ceil_div(time.max(0), TENTH).saturating_mul(TENTH) < style.tenths_below
}

/// A remaining time as a clock shows it: rounded up, never negative.
pub fn remaining(time: Micros, style: Style) -> String {
    let time = time.max(0);
    if shows_tenths(time, style) {
        let tenths = ceil_div(time, TENTH);
        let seconds = tenths / 10;
        format!("{}.{}", whole(seconds, style.hours), tenths % 10)
    } else {
        whole(ceil_div(time, SECOND), style.hours)
    }
}

/// A remaining time given in milliseconds (as the daemon's interfaces carry
/// it, already rounded up to the millisecond): the same text as
/// [`remaining`] of the exact time, since rounding up twice is rounding up
/// once.
pub fn remaining_ms(ms: i64, style: Style) -> String {
    remaining(ms.saturating_mul(MS), style)
}

/// Time that counts up (upcount): rounded down to the second.
pub fn elapsed(time: Micros, style: Style) -> String {
    whole(time.max(0) / SECOND, style.hours)
}

/// A length of time to the millisecond, rounded down: `0:12.345`,
/// `1:02:03.004` (the time a move used, in the record).
pub fn exact(time: Micros) -> String {
    let ms = time.max(0) / MS;
    format!("{}.{:03}", whole(ms / 1000, false), ms % 1000)
}

/// An amount of time given or taken (a correction): `2:00`, `0:05`, or to
/// the millisecond when it is not whole seconds (`0:00.500`).
pub fn amount(time: Micros) -> String {
    let time = time.max(0);
    if time % SECOND == 0 {
        whole(time / SECOND, false)
    } else {
        exact(time)
    }
}

/// Whole seconds as `H:MM:SS` (at one hour and above, or when `hours`) or
/// `M:SS`.
fn whole(seconds: i64, hours: bool) -> String {
    let seconds = seconds.max(0);
    if hours || seconds >= 3600 {
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

/// The instant after which the text of a remaining time that is counting
/// down from `time` (not negative) next changes: the length of time until
/// the shown value drops. `None` once it shows zero.
pub fn next_change_in(time: Micros, style: Style) -> Option<Micros> {
    if time <= 0 {
        return None;
    }
    let tenths = ceil_div(time, TENTH);
    if shows_tenths(time, style) {
        return Some(time - (tenths - 1) * TENTH);
    }
    let seconds_boundary = (ceil_div(time, SECOND) - 1) * SECOND;
    if style.tenths_below <= 0 {
        return Some(time - seconds_boundary);
    }
    // Tenths begin once the rounded-up tenths fall below the threshold: at
    // the largest multiple of a tenth below it.
    let tenths_start = ((style.tenths_below - 1) / TENTH) * TENTH;
    let boundary = if tenths_start < time {
        seconds_boundary.max(tenths_start)
    } else {
        seconds_boundary
    };
    Some(time - boundary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_rounds_up_and_switches_modes() {
        let clock = Style::CLOCK;
        assert_eq!(remaining(5_400 * SECOND, clock), "1:30:00");
        assert_eq!(remaining(3_599 * SECOND + 1, clock), "1:00:00");
        assert_eq!(remaining(3_599 * SECOND, clock), "59:59");
        assert_eq!(remaining(299 * SECOND + 1, clock), "5:00");
        assert_eq!(remaining(20 * SECOND, clock), "0:20");
        assert_eq!(remaining(19_900 * MS + 1, clock), "0:20");
        assert_eq!(remaining(19_900 * MS, clock), "0:19.9");
        assert_eq!(remaining(1, clock), "0:00.1");
        assert_eq!(remaining(0, clock), "0:00.0");
        assert_eq!(remaining(-1_900 * MS, clock), "0:00.0", "never negative");
        assert_eq!(remaining(1, Style::SECONDS), "0:01");
        assert_eq!(remaining(-5, Style::SECONDS), "0:00");
        assert_eq!(remaining(300 * SECOND, Style::PGN), "0:05:00");
        assert_eq!(remaining(1, Style::PGN), "0:00:01");
        assert!(!remaining(i64::MAX, Style::CLOCK).is_empty());
    }

    #[test]
    fn milliseconds_give_the_same_text_as_the_exact_time() {
        for us in [0, 1, 999, 1_000, 1_001, 19_899_999, 19_900_001, 299_000_001] {
            let ms = us / MS + i64::from(us % MS != 0);
            assert_eq!(
                remaining_ms(ms, Style::CLOCK),
                remaining(us, Style::CLOCK),
                "{us}"
            );
        }
    }

    #[test]
    fn elapsed_rounds_down_and_exact_keeps_milliseconds() {
        assert_eq!(elapsed(61 * SECOND + 999_999, Style::SECONDS), "1:01");
        assert_eq!(exact(12_345_678), "0:12.345");
        assert_eq!(exact(3_723_004_000), "1:02:03.004");
        assert_eq!(exact(-5), "0:00.000");
        assert_eq!(amount(5 * SECOND), "0:05");
        assert_eq!(amount(120 * SECOND), "2:00");
        assert_eq!(amount(500 * MS), "0:00.500");
    }

    #[test]
    fn the_next_change_is_where_the_text_changes() {
        let clock = Style::CLOCK;
        for time in [
            1,
            99_999,
            100_000,
            19_950_000,
            20_000_000,
            20_500_000,
            300_000_000,
            3_600_000_001,
        ] {
            let wait = next_change_in(time, clock).unwrap();
            assert!(wait > 0);
            assert_eq!(
                remaining(time - wait + 1, clock),
                remaining(time, clock),
                "{time}"
            );
            assert_ne!(
                remaining(time - wait, clock),
                remaining(time, clock),
                "{time}"
            );
        }
        assert_eq!(next_change_in(0, clock), None);
    }
}
