//! The record in words: a history row as a person reads it (the record's
//! `what`), a correction's before -> after, instants in UTC. Shared by the
//! history views (the fixed export schema) and the board core.
//!
//! Promises: pure; clock times are written as the displays write them
//! (`crate::clocktext`), nothing is Rust debug text.

use crate::clocktext::Style;
use crate::time::{Micros, MS};

/// Seconds with milliseconds, `12.345 s`, for the record.
pub(crate) fn seconds(us: Micros) -> String {
    let ms = us.div_euclid(MS);
    format!("{}.{:03} s", ms.div_euclid(1000), ms.rem_euclid(1000))
}

/// Wall-clock µs since the Unix epoch as RFC 3339 in UTC, to the
/// millisecond (`2026-12-01T12:00:00.000Z`): the record's time of day.
pub fn utc_text(unix_us: i64) -> String {
    let ms = unix_us.div_euclid(MS);
    let seconds = ms.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        (of_day / 60) % 60,
        of_day % 60,
        ms.rem_euclid(1000)
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn clock(ms: Option<i64>, style: Style) -> String {
    ms.map_or_else(
        || "no limit".to_owned(),
        |ms| crate::clocktext::remaining_ms(ms, style),
    )
}

/// A correction's before -> after, in words: `white 5:11 -> 4:30, moves 12 -> 13`
/// (tenths below 20 s, the default display; see [`correction_text_in`]).
pub fn correction_text(correction: &crate::views::Correction) -> String {
    correction_text_in(correction, Style::CLOCK)
}

/// [`correction_text`], with clock times written in `style` (the board's
/// display setting).
pub fn correction_text_in(correction: &crate::views::Correction, style: Style) -> String {
    let time_changed = correction.remaining_before_ms != correction.remaining_after_ms;
    let others_changed = correction.moves_before != correction.moves_after
        || correction.stage_before != correction.stage_after;
    let mut parts = vec![if time_changed || !others_changed {
        format!(
            "{} {} -> {}",
            correction.side,
            clock(correction.remaining_before_ms, style),
            clock(correction.remaining_after_ms, style)
        )
    } else {
        // Only the count changed: the clock's own time is not news.
        correction.side.to_string()
    }];
    if correction.moves_before != correction.moves_after {
        parts.push(format!(
            "moves {} -> {}",
            correction.moves_before, correction.moves_after
        ));
    }
    if correction.stage_before != correction.stage_after {
        parts.push(format!(
            "stage {} -> {}",
            correction.stage_before, correction.stage_after
        ));
    }
    match parts.split_first() {
        Some((side, rest)) if !time_changed && others_changed => {
            format!("{side} {}", rest.join(", "))
        }
        _ => parts.join(", "),
    }
}

/// A history row in words (the record's `what`): what happened and what it
/// caused, for a person reading the record of a dispute.
pub fn row_text(row: &crate::views::HistoryRow) -> String {
    row_text_in(row, Style::CLOCK)
}

/// [`row_text`], with clock times written in `style` (the board's display
/// setting, so the record and the displays agree).
pub fn row_text_in(row: &crate::views::HistoryRow, style: Style) -> String {
    use crate::journal::{InputSource, StoredEvent};
    let ignored = row.ignored.map(|reason| match reason {
        crate::views::IgnoredReason::NotStarted => "the game had not started",
        crate::views::IgnoredReason::AlreadyStarted => "the game had already started",
        crate::views::IgnoredReason::Paused => "the clock was paused",
        crate::views::IgnoredReason::NotPaused => "the clock was not paused",
        crate::views::IgnoredReason::NotRunningSide => "that side's clock was not running",
        crate::views::IgnoredReason::Frozen => "the clock had stopped after a flag",
        crate::views::IgnoredReason::TooLate => "it arrived too late to be placed",
        crate::views::IgnoredReason::MoveLimit => {
            "that side had made 999 moves, the most a game can have"
        }
    });
    let by_arbiter = row.caller_uid.is_some() || row.caller_name.is_some();
    let text = match &row.event {
        StoredEvent::Start => match ignored {
            Some(why) => format!("start ignored: {why}"),
            None => "White's clock started".to_owned(),
        },
        StoredEvent::StartAt {
            unix_time_us,
            forced,
            replaces_unix_us,
        } => format!(
            "start scheduled for {}{}{}",
            utc_text(*unix_time_us),
            if *forced {
                " (forced past the NTP check)"
            } else {
                " (not forced past the NTP check)"
            },
            replaces_unix_us.map_or(String::new(), |old| format!(
                "; replaces the start scheduled for {}",
                utc_text(old)
            ))
        ),
        StoredEvent::StartCancelled { unix_time_us } => format!(
            "scheduled start for {} cancelled",
            utc_text(*unix_time_us)
        ),
        StoredEvent::Press { side } => match (row.move_number, row.move_used_ms, ignored) {
            (Some(number), Some(used), _) => format!(
                "{side} completed move {number} in {}{}",
                seconds(used.saturating_mul(MS)),
                if row.device.is_none() {
                    " (pressed by the arbiter)"
                } else {
                    ""
                }
            ),
            (_, _, Some(why)) => format!("{side}'s press ignored: {why}"),
            _ => format!("{side} pressed"),
        },
        StoredEvent::Pause => match ignored {
            Some(why) => format!("pause ignored: {why}"),
            None if by_arbiter => "clock paused by the arbiter".to_owned(),
            None => "clock paused by the daemon".to_owned(),
        },
        StoredEvent::ArbiterCall => match ignored {
            Some(why) => format!("ARBITER CALLED at the board (Art. 6.12b); {why}"),
            None => "ARBITER CALLED at the board (Art. 6.12b): clock paused".to_owned(),
        },
        StoredEvent::Resume => match ignored {
            Some(why) => format!("resume ignored: {why}"),
            None => "clock resumed".to_owned(),
        },
        StoredEvent::Adjust {
            side,
            moves,
            by_us,
            source,
            ..
        } => {
            let change = row
                .correction
                .as_ref()
                .map_or_else(
                    || format!("{side} corrected"),
                    |c| correction_text_in(c, style),
                );
            match (source, by_us) {
                (Some(InputSource::Eboard), _) => format!(
                    "move count taken from the electronic board: {side} moves {}",
                    moves.map_or_else(String::new, |m| m.to_string())
                ),
                (None, Some(by)) => format!(
                    "{side} {}{} (relative correction): {change}",
                    if *by < 0 { "-" } else { "+" },
                    crate::clocktext::amount(by.saturating_abs())
                ),
                (None, None) => format!("correction: {change}"),
            }
        }
        StoredEvent::PressUndone { side, press_at_us } => format!(
            "the arbiter's press for {side} at {} was undone{}",
            crate::clocktext::exact(*press_at_us),
            row.correction
                .as_ref()
                .map_or(String::new(), |c| format!(": {}", correction_text_in(c, style)))
        ),
        StoredEvent::Note { text } => format!("note: {text}"),
        StoredEvent::CallAcknowledged => {
            "the arbiter call was acknowledged: an arbiter is on the way".to_owned()
        }
        StoredEvent::Restart {
            down_us,
            same_boot,
            was_running,
            replayed,
            paused,
        } => format!(
            "the daemon restarted after {} down ({}); {}; {replayed} stored rows replayed{}",
            crate::clocktext::remaining(*down_us, crate::clocktext::Style::SECONDS),
            if *same_boot {
                "same boot: the running side was charged the true time"
            } else {
                "the machine rebooted: the game went on from the last instant known"
            },
            match was_running {
                Some(side) => format!("{side}'s clock was running"),
                None => "no clock was running".to_owned(),
            },
            if *paused {
                "; paused for the arbiter (Art. 6.10a)"
            } else {
                ""
            }
        ),
        StoredEvent::Flag {
            side,
            stage,
            last_stage,
        } => format!(
            "{side}'s flag fell in stage {stage}{}",
            if *last_stage {
                ""
            } else {
                " (not the last stage: the clock runs on)"
            }
        ),
        StoredEvent::Stage { side, stage, first } => format!(
            "{side} reached stage {stage}{}",
            if *first { " first" } else { "" }
        ),
        StoredEvent::Device {
            role,
            name,
            connected,
            serial,
            reason,
        } => format!(
            "{role} {name}{} {}",
            serial
                .as_deref()
                .map_or(String::new(), |s| format!(" ({s})")),
            if *connected {
                "link back".to_owned()
            } else {
                match reason {
                    Some(reason) => format!("link lost: {reason}"),
                    None => "link lost".to_owned(),
                }
            }
        ),
        StoredEvent::FlagWithdrawn { side, flag_at_us } => format!(
            "{side}'s flag shown at {} withdrawn: a press made before it arrived late and was placed at its instant",
            crate::clocktext::exact(*flag_at_us)
        ),
        StoredEvent::PressNotPlaced { side, device_at_us } => format!(
            "{side}'s press made at {} arrived too late to be placed: recorded, not applied (the arbiter decides)",
            crate::clocktext::exact(*device_at_us)
        ),
        StoredEvent::BoardMove {
            ply, san, confirmed, ..
        } => format!(
            "electronic board: {}{san}{}",
            if ply % 2 == 1 {
                format!("{}. ", ply.div_ceil(2))
            } else {
                format!("{}... ", ply / 2)
            },
            if *confirmed { "" } else { " (tentative)" }
        ),
        StoredEvent::BoardTakeBack { to_ply, .. } => {
            format!("electronic board: moves taken back to half-move {to_ply}")
        }
        StoredEvent::Tags { tags } => format!(
            "game tags set: {}",
            tags.iter()
                .map(|(name, value)| if value.is_empty() {
                    format!("{name} back to its default")
                } else {
                    format!("{name} \"{value}\"")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        StoredEvent::GameResult {
            result,
            termination,
        } => match result {
            Some(result) => format!(
                "result {}{}",
                result.pgn(),
                termination.map_or(String::new(), |t| format!(" ({})", t.words()))
            ),
            None => "result withdrawn".to_owned(),
        },
    };
    // What the row caused beyond itself (a stage reached at a press, ...).
    let extra: Vec<&str> = row
        .outcome
        .iter()
        .map(String::as_str)
        .filter(|o| {
            o.contains("reached stage") || o.contains("flag fell") || o.starts_with("clock stopped")
        })
        .collect();
    if extra.is_empty() || matches!(row.event, StoredEvent::Flag { .. }) {
        text
    } else {
        format!("{text}; {}", extra.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_is_rfc3339() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc_text(1_796_126_400_000_000), "2026-12-01T12:00:00.000Z");
        assert_eq!(utc_text(951_782_400_123_456), "2000-02-29T00:00:00.123Z");
        assert_eq!(utc_text(-1_000), "1969-12-31T23:59:59.999Z");
    }
}
