//! Times and durations as arbiters type them, shared by every surface that
//! takes one (`chessclockctl`, the hub's page, the hall's commands):
//! remaining times and corrections (`4:30`, `1:04:30.5`, `4m30s`),
//! durations (`90s`, `1h30m`) and RFC 3339 instants.
//!
//! Promises: pure (no clock, no I/O); a bare number is refused where its
//! unit would be a guess; every error names the text and the forms taken.

/// `90s`, `5m`, `1h30m`, `2m30s`, `45` (seconds) into microseconds.
pub fn parse_duration_us(text: &str) -> Result<i64, String> {
    let bad = || {
        format!("duration `{text}` is not valid: give e.g. 90s, 5m, 1h30m (seconds when no unit)")
    };
    if text.is_empty() {
        return Err(bad());
    }
    let mut total: i64 = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        let value: i64 = digits.parse().map_err(|_| bad())?;
        total = total
            .checked_add(value.checked_mul(unit).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        digits.clear();
    }
    if !digits.is_empty() {
        let value: i64 = digits.parse().map_err(|_| bad())?;
        total = total.checked_add(value).ok_or_else(bad)?;
    }
    total.checked_mul(1_000_000).ok_or_else(bad)
}

/// The forms a time on the command line may take, for error messages.
pub const TIME_FORMS: &str = "4:30, 1:04:30, 270s, 4m30s or 1500ms";

/// A clock time as an arbiter types it (`--remaining`, `--add`, `--sub`),
/// in milliseconds: `M:SS` or `H:MM:SS` (seconds and, with hours, minutes
/// always two digits; optionally `.d` to `.ddd`), or units `1h4m30s`,
/// `270s`, `4m`, `1500ms`. A bare number is refused: is `270` seconds or
/// milliseconds? One typo must not end a game.
pub fn parse_clock_ms(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let forms = || format!("write {TIME_FORMS}");
    if text.is_empty() {
        return Err(format!("the time is empty: {}", forms()));
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "`{text}`: a bare number is ambiguous (seconds? milliseconds?): {}",
            forms()
        ));
    }
    if text.contains(':') {
        return parse_colon_ms(text);
    }
    parse_units_ms(text)
}

/// `M:SS[.f]`, `H:MM:SS[.f]`.
fn parse_colon_ms(text: &str) -> Result<i64, String> {
    let bad = |why: &str| format!("`{text}`: {why}: write {TIME_FORMS}");
    let (clock, fraction_ms) = match text.split_once('.') {
        Some((clock, fraction)) => {
            if fraction.is_empty()
                || fraction.len() > 3
                || !fraction.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(bad("the fraction of a second must be 1 to 3 digits"));
            }
            let padded = format!("{fraction:0<3}");
            (
                clock,
                padded.parse::<i64>().map_err(|_| bad("bad fraction"))?,
            )
        }
        None => (text, 0),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let number = |part: &str, what: &str| -> Result<i64, String> {
        if part.is_empty() || part.len() > 6 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(&format!("the {what} must be digits")));
        }
        part.parse::<i64>().map_err(|_| bad(&format!("bad {what}")))
    };
    let two_digits = |part: &str, what: &str, last: bool| -> Result<i64, String> {
        if part.len() != 2 {
            let hint = match (part.len(), last) {
                (1, true) => {
                    let head = &clock[..clock.len() - 1];
                    format!(" ({head}0{part} or {head}{part}0?)")
                }
                _ => String::new(),
            };
            return Err(format!(
                "`{text}`: the {what} need two digits{hint}: write {TIME_FORMS}"
            ));
        }
        let value = number(part, what)?;
        if value > 59 {
            return Err(bad(&format!("{what} {value} is more than 59")));
        }
        Ok(value)
    };
    let seconds = match parts.as_slice() {
        [m, s] => number(m, "minutes")? * 60 + two_digits(s, "seconds", true)?,
        [h, m, s] => {
            number(h, "hours")? * 3600
                + two_digits(m, "minutes", false)? * 60
                + two_digits(s, "seconds", true)?
        }
        _ => return Err(bad("give M:SS or H:MM:SS")),
    };
    Ok(seconds * 1000 + fraction_ms)
}

/// `1h4m30s`, `270s`, `4m`, `1500ms`: each unit at most once, largest first.
fn parse_units_ms(text: &str) -> Result<i64, String> {
    let bad = || format!("`{text}` is not a time: write {TIME_FORMS}");
    let mut total: i64 = 0;
    let mut rest = text;
    let mut last_rank = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(bad());
        }
        let value: i64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let (unit_ms, rank, len) = if rest.starts_with("ms") {
            (1, 4, 2)
        } else if rest.starts_with('h') {
            (3_600_000, 1, 1)
        } else if rest.starts_with('m') {
            (60_000, 2, 1)
        } else if rest.starts_with('s') {
            (1_000, 3, 1)
        } else {
            return Err(bad());
        };
        if rank <= last_rank {
            return Err(bad());
        }
        last_rank = rank;
        rest = &rest[len..];
        total = total
            .checked_add(value.checked_mul(unit_ms).ok_or_else(bad)?)
            .ok_or_else(bad)?;
    }
    Ok(total)
}

/// Days from 1970-01-01 to a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = if year >= 0 { year } else { year - 399 } / 400;
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march as i64 + 2) / 5 + day as i64 - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// RFC 3339 (`2026-11-30T18:00:00Z`, `...+01:00`, fractions, `T` or space).
pub fn parse_rfc3339_us(text: &str) -> Result<i64, String> {
    let bad = |why: &str| {
        format!(
            "time `{text}` is not valid ({why}): give RFC 3339 (2026-11-30T18:00:00+01:00), \
             HH:MM[:SS] for today, or +DURATION (+90s, +5m)"
        )
    };
    let bytes = text.as_bytes();
    if bytes.len() < 20 {
        return Err(bad("too short"));
    }
    let digits = |range: std::ops::Range<usize>| -> Result<u32, String> {
        let part = &text[range];
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("expected digits"));
        }
        part.parse().map_err(|_| bad("expected digits"))
    };
    if bytes[4] != b'-' || bytes[7] != b'-' || !matches!(bytes[10], b'T' | b't' | b' ') {
        return Err(bad("expected YYYY-MM-DDTHH:MM:SS"));
    }
    if bytes[13] != b':' || bytes[16] != b':' {
        return Err(bad("expected HH:MM:SS"));
    }
    let (year, month, day) = (digits(0..4)? as i64, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(bad("no such date"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(bad("no such time of day"));
    }
    let mut rest = &text[19..];
    let mut micros: i64 = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let end = fraction
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(fraction.len());
        if end == 0 {
            return Err(bad("empty fraction"));
        }
        let padded: String = format!("{:0<6}", &fraction[..end.min(6)]);
        micros = padded.parse().map_err(|_| bad("bad fraction"))?;
        rest = &fraction[end..];
    }
    let offset_seconds: i64 = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':' =>
        {
            let hours = rest[1..3].parse::<i64>().map_err(|_| bad("bad offset"))?;
            let minutes = rest[4..6].parse::<i64>().map_err(|_| bad("bad offset"))?;
            if hours > 23 || minutes > 59 {
                return Err(bad("bad offset"));
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (hours * 3600 + minutes * 60)
        }
        _ => return Err(bad("expected Z or an offset such as +01:00")),
    };
    let seconds = days_from_civil(year, month, day) * 86_400
        + hour as i64 * 3600
        + minute as i64 * 60
        + second as i64
        - offset_seconds;
    Ok(seconds * 1_000_000 + micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_instants() {
        assert_eq!(parse_rfc3339_us("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(
            parse_rfc3339_us("2026-11-30T18:00:00Z").unwrap(),
            1_796_061_600_000_000
        );
        assert_eq!(
            parse_rfc3339_us("2026-11-30T19:00:00+01:00").unwrap(),
            1_796_061_600_000_000
        );
        assert_eq!(
            parse_rfc3339_us("2026-11-30 18:00:00.25Z").unwrap(),
            1_796_061_600_250_000
        );
        assert_eq!(
            parse_rfc3339_us("2024-02-29T00:00:00-00:30").unwrap(),
            (1_709_164_800 + 1800) * 1_000_000
        );
        for bad in [
            "2026-02-30T10:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T18:00:00",
            "2026-11-30T18:00:00+1:00",
            "30/11/2026 18:00",
        ] {
            assert!(parse_rfc3339_us(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn clock_times_as_arbiters_type_them() {
        assert_eq!(parse_clock_ms("4:30").unwrap(), 270_000);
        assert_eq!(parse_clock_ms("1:04:30").unwrap(), 3_870_000);
        assert_eq!(parse_clock_ms("0:09.5").unwrap(), 9_500);
        assert_eq!(parse_clock_ms("270s").unwrap(), 270_000);
        assert_eq!(parse_clock_ms("4m30s").unwrap(), 270_000);
        assert_eq!(parse_clock_ms("1h4m30s").unwrap(), 3_870_000);
        assert_eq!(parse_clock_ms("1500ms").unwrap(), 1_500);
        assert_eq!(parse_clock_ms("2m").unwrap(), 120_000);
        let err = parse_clock_ms("270").unwrap_err();
        assert_eq!(
            err,
            "`270`: a bare number is ambiguous (seconds? milliseconds?): \
             write 4:30, 1:04:30, 270s, 4m30s or 1500ms"
        );
        let err = parse_clock_ms("4:3").unwrap_err();
        assert_eq!(
            err,
            "`4:3`: the seconds need two digits (4:03 or 4:30?): \
             write 4:30, 1:04:30, 270s, 4m30s or 1500ms"
        );
        assert!(parse_clock_ms("1:4:30")
            .unwrap_err()
            .contains("minutes need two digits"));
        for bad in [
            "4:60",
            "-5",
            "1:2:3:4",
            "abc",
            "4:30.1234",
            "",
            "5s4m",
            "4m4m",
            "3x",
        ] {
            assert!(parse_clock_ms(bad).is_err(), "{bad}");
        }
    }
}
