//! The host's clocks. Intervals and instants use CLOCK_MONOTONIC (never
//! wall time); wall time is used only to schedule a start (Art. 6.6) and
//! for records.
//!
//! A shell that keeps time takes a [`Clock`] (ntpd-rs passes its clock the
//! same way): [`SystemClock`] in the programs, a [`ManualClock`] in tests,
//! which then read as transcripts with every instant written down.

use std::time::Duration;

use nix::sys::time::TimeSpec;

use chessclock_core::time::Micros;

/// Where a shell reads the time: both clocks, in microseconds.
pub trait Clock: Send + Sync + 'static {
    /// Now on the monotonic clock (intervals, deadlines).
    fn monotonic_us(&self) -> Micros;
    /// Now on the wall clock, microseconds since the Unix epoch (records,
    /// scheduled starts, what people read).
    fn wall_us(&self) -> i64;
    /// [`Clock::wall_us`] in whole milliseconds (rounded down), as the
    /// interfaces count.
    fn wall_ms(&self) -> i64 {
        self.wall_us().div_euclid(1000)
    }
}

/// The host's own clocks: [`monotonic_now_us`] and [`wall_now_us`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn monotonic_us(&self) -> Micros {
        monotonic_now_us()
    }

    fn wall_us(&self) -> i64 {
        wall_now_us()
    }
}

/// A clock that moves only when told: both readings start where given and
/// advance together by [`ManualClock::advance_us`]; the wall reading alone
/// is stepped by [`ManualClock::step_wall_us`].
#[derive(Debug, Default)]
pub struct ManualClock {
    monotonic: std::sync::atomic::AtomicI64,
    wall: std::sync::atomic::AtomicI64,
}

impl ManualClock {
    /// A clock reading `monotonic_us` and `wall_us`.
    pub fn new(monotonic_us: Micros, wall_us: i64) -> ManualClock {
        ManualClock {
            monotonic: monotonic_us.into(),
            wall: wall_us.into(),
        }
    }

    /// Moves both readings on by `us` (a negative `us` is taken as 0: a
    /// clock never goes back).
    pub fn advance_us(&self, us: Micros) {
        let us = us.max(0);
        self.monotonic
            .fetch_add(us, std::sync::atomic::Ordering::SeqCst);
        self.wall.fetch_add(us, std::sync::atomic::Ordering::SeqCst);
    }

    /// Steps the wall reading alone by `us`, forward or back, as a clock
    /// set (`date -s`, an NTP step) does; the monotonic reading stays.
    pub fn step_wall_us(&self, us: i64) {
        self.wall.fetch_add(us, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn monotonic_us(&self) -> Micros {
        self.monotonic.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn wall_us(&self) -> i64 {
        self.wall.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Now on CLOCK_MONOTONIC, in microseconds.
pub fn monotonic_now_us() -> Micros {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) {
        Ok(ts) => micros_of(ts),
        // CLOCK_MONOTONIC cannot fail on Linux; fall back rather than panic.
        Err(_) => 0,
    }
}

/// Now on CLOCK_REALTIME, microseconds since the Unix epoch.
pub fn wall_now_us() -> i64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME) {
        Ok(ts) => micros_of(ts),
        Err(_) => 0,
    }
}

/// Microseconds of a clock reading (never negative: both clocks count up
/// from boot or 1970). Through `Duration` because `time_t` and `tv_nsec`
/// are 32 bits on armhf and 64 on arm64 and amd64: one expression for
/// every Pi.
fn micros_of(ts: TimeSpec) -> i64 {
    i64::try_from(Duration::from(ts).as_micros()).unwrap_or(i64::MAX)
}

/// The `TimeSpec` of instant `us` (µs on its clock; a negative one is 0),
/// for absolute sleeps and timers. 32-bit `time_t` (armhf) holds 68 years
/// of CLOCK_MONOTONIC.
pub fn timespec_of_us(us: i64) -> TimeSpec {
    TimeSpec::from(Duration::from_micros(u64::try_from(us).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_go_to_timespecs_and_back_to_the_microsecond() {
        for us in [
            0,
            1,
            999_999,
            1_000_000,
            1_234_567_890_123,
            4_102_444_800_000_000,
        ] {
            let ts = timespec_of_us(us);
            assert_eq!(micros_of(ts), us, "{us} µs");
        }
        assert_eq!(micros_of(timespec_of_us(-5)), 0, "a negative instant is 0");
    }

    #[test]
    fn a_manual_clock_moves_only_when_told_and_never_back() {
        let clock = ManualClock::new(5_000_000, 1_796_061_600_000_000);
        assert_eq!(clock.monotonic_us(), 5_000_000);
        assert_eq!(clock.wall_ms(), 1_796_061_600_000);
        clock.advance_us(1_500);
        assert_eq!(clock.monotonic_us(), 5_001_500);
        assert_eq!(clock.wall_us(), 1_796_061_600_001_500);
        assert_eq!(clock.wall_ms(), 1_796_061_600_001);
        clock.advance_us(-10);
        assert_eq!(clock.monotonic_us(), 5_001_500, "never back");
    }

    #[test]
    fn the_clocks_read_plausible_instants() {
        let a = monotonic_now_us();
        let b = monotonic_now_us();
        assert!(a > 0 && b >= a, "{a} then {b}");
        // After 2020-01-01 and before 2100-01-01.
        let wall = wall_now_us();
        assert!(
            (1_577_836_800_000_000..4_102_444_800_000_000).contains(&wall),
            "{wall}"
        );
    }
}
