//! The rules of a scheduled start (Art. 6.6: White's clock started at a
//! wall instant), one place for every surface that takes one: D-Bus
//! (`StartAt`, `StartAllAt`, `chessclockctl start --at`) and the hall
//! (`start-at`).
//!
//! Promises: the same instant and the same synchronisation give the same
//! answer on every surface; a refusal says what is wrong and how to go on
//! (each surface names its own way to force).

use crate::control::ControlError;

/// A start instant (µs since the Unix epoch) that is not in the past at
/// `now_usec`, with one second of slack for the request's own transit.
pub fn check_start_time(unix_time_usec: i64, now_usec: i64) -> Result<(), ControlError> {
    if unix_time_usec < now_usec.saturating_sub(1_000_000) {
        return Err(ControlError::InvalidArgument(format!(
            "start time {unix_time_usec} is in the past (now is {now_usec}); \
             give microseconds since the Unix epoch, later than now"
        )));
    }
    Ok(())
}

/// Refuses a scheduled start unless the clock is NTP-synchronised
/// (`synchronized`: `Ok(true)` yes, `Ok(false)` no, `Err` why nobody can
/// tell), `force` is set or `required` (`[daemon]
/// require-ntp-for-scheduled-start`) is off. `how_to_force` is the
/// surface's own words (`chessclockctl start --force`).
pub fn check_synchronized(
    required: bool,
    force: bool,
    synchronized: Result<bool, String>,
    how_to_force: &str,
) -> Result<(), ControlError> {
    if !required || force {
        return Ok(());
    }
    match synchronized {
        Ok(true) => Ok(()),
        Ok(false) => Err(ControlError::NotSynchronized(format!(
            "the system clock is not NTP-synchronised (timedatectl shows \
             `System clock synchronized: no`), so a scheduled start could be off; \
             fix time synchronisation, or start anyway with force ({how_to_force})"
        ))),
        Err(why) => Err(ControlError::NotSynchronized(format!(
            "cannot tell whether the system clock is NTP-synchronised ({why}); \
             start anyway with force ({how_to_force}) if the clocks agree"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_synchronised_clock_or_force_passes() {
        let hint = "`\"force\": true`";
        assert_eq!(check_synchronized(true, false, Ok(true), hint), Ok(()));
        assert_eq!(check_synchronized(true, true, Ok(false), hint), Ok(()));
        assert_eq!(
            check_synchronized(false, false, Err("x".into()), hint),
            Ok(())
        );
        let Err(ControlError::NotSynchronized(words)) =
            check_synchronized(true, false, Ok(false), hint)
        else {
            panic!("refused")
        };
        assert!(
            words.contains("not NTP-synchronised") && words.contains(hint),
            "{words}"
        );
        let Err(ControlError::NotSynchronized(words)) =
            check_synchronized(true, false, Err("no timedated".into()), hint)
        else {
            panic!("refused")
        };
        assert!(words.contains("(no timedated)"), "{words}");
    }

    #[test]
    fn a_start_in_the_past_is_refused_with_a_second_of_slack() {
        let now = 1_800_000_000_000_000;
        assert!(check_start_time(now + 60_000_000, now).is_ok());
        assert!(check_start_time(now - 500_000, now).is_ok());
        assert!(check_start_time(now - 2_000_000, now).is_err());
    }
}
