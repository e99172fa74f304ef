//! Times and durations as arbiters type them: start times (`--at`) and
//! remaining times (`--remaining`). Pure parsing, except that a local time
//! of day is turned into an instant by the system's `date` (so the local
//! time zone and its daylight-saving rules are the system's own). The pure
//! forms (clock times, durations, RFC 3339) are `chessclock_core::timetext`.

use chessclock_core::timetext::{parse_duration_us, parse_rfc3339_us};

/// A start time as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartTime {
    /// RFC 3339: microseconds since the Unix epoch.
    Absolute(i64),
    /// `HH:MM[:SS]`, local time today.
    LocalToday { hour: u32, minute: u32, second: u32 },
    /// `+90s`, `+5m`, `+1h30m`: microseconds from now.
    FromNow(i64),
}

impl StartTime {
    /// Parses `2026-11-30T18:00:00+01:00`, `18:00`, `18:00:30`, `+90s`.
    pub fn parse(text: &str) -> Result<StartTime, String> {
        let text = text.trim();
        if let Some(duration) = text.strip_prefix('+') {
            return parse_duration_us(duration).map(StartTime::FromNow);
        }
        if text.len() <= 8 && text.contains(':') {
            let parts: Vec<&str> = text.split(':').collect();
            let number = |part: &str, max: u32, what: &str| -> Result<u32, String> {
                if part.len() != 2 || !part.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("`{text}`: {what} must be two digits"));
                }
                let value: u32 = part.parse().map_err(|_| format!("`{text}`: bad {what}"))?;
                if value > max {
                    return Err(format!("`{text}`: {what} {value} is out of range"));
                }
                Ok(value)
            };
            return match parts.as_slice() {
                [h, m] => Ok(StartTime::LocalToday {
                    hour: number(h, 23, "hour")?,
                    minute: number(m, 59, "minute")?,
                    second: 0,
                }),
                [h, m, s] => Ok(StartTime::LocalToday {
                    hour: number(h, 23, "hour")?,
                    minute: number(m, 59, "minute")?,
                    second: number(s, 59, "second")?,
                }),
                _ => Err(format!("`{text}`: give HH:MM or HH:MM:SS")),
            };
        }
        parse_rfc3339_us(text).map(StartTime::Absolute)
    }

    /// The instant, in microseconds since the Unix epoch.
    pub fn resolve(&self, now_us: i64) -> Result<i64, String> {
        match self {
            StartTime::Absolute(us) => Ok(*us),
            StartTime::FromNow(us) => Ok(now_us + us),
            StartTime::LocalToday {
                hour,
                minute,
                second,
            } => {
                let us = local_today_us(*hour, *minute, *second, None)?;
                if us < now_us {
                    return Err(format!(
                        "{hour:02}:{minute:02}:{second:02} has already passed today; give a full \
                         date and time (RFC 3339, e.g. 2026-12-01T10:00:00+01:00) or +DURATION"
                    ));
                }
                Ok(us)
            }
        }
    }
}

/// Today's local `HH:MM:SS` as microseconds since the epoch, from `date`
/// (the system's time zone; `tz` overrides it).
pub fn local_today_us(
    hour: u32,
    minute: u32,
    second: u32,
    tz: Option<&str>,
) -> Result<i64, String> {
    let mut date = std::process::Command::new("date");
    date.arg(format!("--date={hour:02}:{minute:02}:{second:02}"))
        .arg("+%s")
        .env("LC_ALL", "C");
    if let Some(tz) = tz {
        date.env("TZ", tz);
    }
    let output = date
        .output()
        .map_err(|e| format!("cannot run `date` to read the local time zone: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`date` could not convert {hour:02}:{minute:02}:{second:02}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let seconds: i64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .map_err(|_| "`date` printed something unexpected".to_owned())?;
    Ok(seconds * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_forms() {
        assert_eq!(
            StartTime::parse("+90s").unwrap(),
            StartTime::FromNow(90_000_000)
        );
        assert_eq!(
            StartTime::parse("+1h30m").unwrap(),
            StartTime::FromNow(5_400_000_000)
        );
        assert_eq!(
            StartTime::parse("18:05").unwrap(),
            StartTime::LocalToday {
                hour: 18,
                minute: 5,
                second: 0
            }
        );
        assert_eq!(
            StartTime::parse("09:00:30").unwrap(),
            StartTime::LocalToday {
                hour: 9,
                minute: 0,
                second: 30
            }
        );
        assert!(StartTime::parse("25:00").is_err());
        assert!(StartTime::parse("9:00").is_err());
        assert!(StartTime::parse("+5x").is_err());
        assert!(StartTime::parse("+").is_err());
        assert_eq!(StartTime::FromNow(5).resolve(10).unwrap(), 15);
    }

    #[test]
    fn local_time_of_day_uses_the_time_zone() {
        let now_s = chessclock_host::clock::wall_now_us() / 1_000_000;
        let midnight_utc = now_s - now_s % 86_400;
        assert_eq!(
            local_today_us(12, 0, 0, Some("UTC")).unwrap(),
            (midnight_utc + 43_200) * 1_000_000
        );
        let utc = local_today_us(12, 0, 0, Some("UTC")).unwrap();
        let tokyo = local_today_us(12, 0, 0, Some("Asia/Tokyo")).unwrap();
        assert_eq!(
            (utc - tokyo).rem_euclid(86_400 * 1_000_000),
            9 * 3_600 * 1_000_000
        );
    }
}

/// Times of day in the local time zone as the system's `date` knows it:
/// the UTC offset is asked once per hour of wall time (a daylight-saving
/// change within an hour is not followed), so a long record costs a few
/// `date` calls, not one per row. Without `date` times are shown in UTC.
#[derive(Default)]
pub struct LocalTime {
    offsets: std::cell::RefCell<std::collections::HashMap<i64, Option<i64>>>,
}

impl LocalTime {
    /// The UTC offset (seconds) at `unix_us`, if `date` could tell.
    fn offset_s(&self, unix_us: i64) -> Option<i64> {
        let hour = unix_us.div_euclid(3_600_000_000);
        if let Some(known) = self.offsets.borrow().get(&hour) {
            return *known;
        }
        let offset = std::process::Command::new("date")
            .arg(format!("--date=@{}", unix_us.div_euclid(1_000_000)))
            .arg("+%z")
            .env("LC_ALL", "C")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| {
                let text = String::from_utf8_lossy(&o.stdout).trim().to_owned();
                let sign = match text.as_bytes().first()? {
                    b'+' => 1,
                    b'-' => -1,
                    _ => return None,
                };
                let hours: i64 = text.get(1..3)?.parse().ok()?;
                let minutes: i64 = text.get(3..5)?.parse().ok()?;
                Some(sign * (hours * 3600 + minutes * 60))
            });
        self.offsets.borrow_mut().insert(hour, offset);
        offset
    }

    /// `14:03:12` (local), or `13:03:12Z` when the zone is unknown.
    pub fn time_of_day(&self, unix_us: i64) -> String {
        let (offset, zone) = match self.offset_s(unix_us) {
            Some(offset) => (offset, ""),
            None => (0, "Z"),
        };
        let seconds = (unix_us.div_euclid(1_000_000) + offset).rem_euclid(86_400);
        format!(
            "{:02}:{:02}:{:02}{zone}",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        )
    }
}
