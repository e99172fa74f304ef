//! An absolute CLOCK_MONOTONIC deadline the timing thread's event loop can
//! wait on beside its channels and device ports.
//!
//! tokio's own timers round to whole milliseconds; a clock must change its
//! display at the exact instant. A `timerfd` armed with `TFD_TIMER_ABSTIME`
//! fires at the microsecond, through the same epoll that watches the device
//! ports, so one thread can sleep until "a press arrives or the next
//! deadline comes, whichever is first" with neither a spin nor a blind
//! absolute sleep.
//!
//! [`WallWatch`] wakes the same loop when the wall clock is set, for the
//! starts scheduled on the wall clock.
//!
//! Promises: [`DeadlineTimer::expired`] never returns before the armed
//! instant; re-arming replaces the previous instant; it is cancel-safe (a
//! `select!` may drop it). Should the kernel refuse a timerfd (it does not on
//! Linux), the timer falls back to tokio's sleep with a warning: later by up
//! to a millisecond, never earlier.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};

use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

use super::time::TimeSource;
use crate::engine::Micros;
use chessclock_host::clock::monotonic_now_us;

struct TimerFdRaw(TimerFd);

impl AsRawFd for TimerFdRaw {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

enum Source {
    TimerFd(AsyncFd<TimerFdRaw>),
    Tokio,
    /// A stepped clock's moves (tests: see `super::time`).
    Stepped(tokio::sync::watch::Receiver<Micros>),
}

/// See the module docs. Must be created inside a tokio runtime with I/O
/// and time enabled.
pub struct DeadlineTimer {
    source: Source,
    armed: Micros,
}

impl DeadlineTimer {
    pub fn new() -> DeadlineTimer {
        DeadlineTimer::on(&TimeSource::System)
    }

    /// A timer on `time`: a timerfd on the host's clock, or the moves of a
    /// stepped clock.
    pub fn on(time: &TimeSource) -> DeadlineTimer {
        if let TimeSource::Stepped(clock) = time {
            return DeadlineTimer {
                source: Source::Stepped(clock.moves()),
                armed: 0,
            };
        }
        let source = match Self::timerfd() {
            Ok(fd) => Source::TimerFd(fd),
            Err(error) => {
                tracing::warn!(%error, "no timerfd: deadlines are met to the millisecond only");
                Source::Tokio
            }
        };
        DeadlineTimer { source, armed: 0 }
    }

    fn timerfd() -> io::Result<AsyncFd<TimerFdRaw>> {
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // `AsyncFd::new` is deprecated because a wrapper could hand out a
        // different descriptor over time; `TimerFdRaw` owns its descriptor
        // and always returns that one, the condition under which
        // registering it is sound.
        #[allow(deprecated)]
        AsyncFd::new(TimerFdRaw(timer))
    }

    /// Arms the timer for monotonic instant `at` (µs), replacing any
    /// earlier arming. A past instant fires at once.
    pub fn arm(&mut self, at: Micros) {
        // 0 would disarm a timerfd: the earliest real instant is 1 ns.
        let at = at.max(1);
        self.armed = at;
        if let Source::TimerFd(fd) = &self.source {
            let spec = chessclock_host::clock::timespec_of_us(at);
            if let Err(error) = fd.get_ref().0.set(
                Expiration::OneShot(spec),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            ) {
                tracing::error!(%error, "cannot arm the deadline timer");
            }
        }
    }

    /// The instant last armed.
    pub fn armed(&self) -> Micros {
        self.armed
    }

    /// Waits until the armed instant has passed.
    pub async fn expired(&self) {
        match &self.source {
            Source::TimerFd(fd) => loop {
                let Ok(mut guard) = fd.readable().await else {
                    return self.tokio_sleep().await;
                };
                // Readiness may be stale (the timer was re-armed since it
                // last fired): only a successful read of the expiry count
                // means the armed instant passed.
                let read = guard.try_io(|inner| {
                    let mut count = [0u8; 8];
                    nix::unistd::read(inner.get_ref().0.as_fd(), &mut count)
                        .map_err(io::Error::from)
                });
                match read {
                    Ok(Ok(_)) => return,
                    Ok(Err(error)) if error.kind() == io::ErrorKind::WouldBlock => continue,
                    Ok(Err(error)) => {
                        tracing::error!(%error, "cannot read the deadline timer");
                        return self.tokio_sleep().await;
                    }
                    Err(_would_block) => continue,
                }
            },
            Source::Tokio => self.tokio_sleep().await,
            Source::Stepped(moves) => {
                let mut moves = moves.clone();
                loop {
                    if *moves.borrow_and_update() >= self.armed {
                        return;
                    }
                    if moves.changed().await.is_err() {
                        // The clock is gone: no deadline comes any more.
                        return std::future::pending().await;
                    }
                }
            }
        }
    }

    async fn tokio_sleep(&self) {
        let left = (self.armed - monotonic_now_us()).max(0);
        // Rounded up: never before the armed instant.
        tokio::time::sleep(std::time::Duration::from_micros(
            left.unsigned_abs() + 1_000,
        ))
        .await;
    }
}

impl Default for DeadlineTimer {
    fn default() -> Self {
        DeadlineTimer::new()
    }
}

/// How far ahead the wall-clock watch's own timer is armed: it is there to
/// be cancelled by a clock set, not to expire.
const WALL_WATCH_AHEAD: Micros = 365 * 24 * 3_600 * 1_000_000;

enum WallSource {
    /// A timerfd on CLOCK_REALTIME armed with `TFD_TIMER_CANCEL_ON_SET`:
    /// the kernel cancels it (its read fails with `ECANCELED`) whenever
    /// the wall clock is set.
    TimerFd(AsyncFd<TimerFdRaw>),
    /// No timerfd: the timing loop's own check at each wake-up (at least
    /// every half second) is all there is.
    None,
    /// A stepped clock's wall steps (tests: see `super::time`).
    Stepped(tokio::sync::watch::Receiver<u64>),
}

/// Wakes the timing loop when the wall clock is set (`date -s`, an NTP
/// step), so that a start scheduled on the wall clock follows it at once.
///
/// Promises: [`WallWatch::set`] returns after each set of the wall clock
/// (and, rarely, without one: a spurious wake costs one look at the
/// clocks); it is cancel-safe.
pub struct WallWatch {
    source: WallSource,
}

impl WallWatch {
    /// A watch on `time`'s wall clock.
    pub fn on(time: &TimeSource) -> WallWatch {
        if let TimeSource::Stepped(clock) = time {
            return WallWatch {
                source: WallSource::Stepped(clock.wall_sets()),
            };
        }
        let source = match Self::timerfd() {
            Ok(fd) => WallSource::TimerFd(fd),
            Err(error) => {
                tracing::warn!(%error, "no timerfd cancelled on a clock set: a set of the wall clock is seen within half a second");
                WallSource::None
            }
        };
        WallWatch { source }
    }

    fn timerfd() -> io::Result<AsyncFd<TimerFdRaw>> {
        let timer = TimerFd::new(
            ClockId::CLOCK_REALTIME,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        Self::arm(&timer)?;
        // As for `DeadlineTimer::timerfd`: `TimerFdRaw` owns its descriptor.
        #[allow(deprecated)]
        AsyncFd::new(TimerFdRaw(timer))
    }

    fn arm(timer: &TimerFd) -> io::Result<()> {
        let at = chessclock_host::clock::wall_now_us().saturating_add(WALL_WATCH_AHEAD);
        timer
            .set(
                Expiration::OneShot(chessclock_host::clock::timespec_of_us(at)),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME | TimerSetTimeFlags::TFD_TIMER_CANCEL_ON_SET,
            )
            .map_err(io::Error::from)
    }

    fn rearm(timer: &TimerFd) {
        if let Err(error) = Self::arm(timer) {
            tracing::error!(%error, "cannot arm the wall-clock watch again");
        }
    }

    /// Waits for the next set of the wall clock.
    pub async fn set(&mut self) {
        match &mut self.source {
            WallSource::TimerFd(fd) => loop {
                let Ok(mut guard) = fd.readable().await else {
                    return std::future::pending().await;
                };
                let read = guard.try_io(|inner| {
                    let mut count = [0u8; 8];
                    nix::unistd::read(inner.get_ref().0.as_fd(), &mut count)
                        .map_err(io::Error::from)
                });
                match read {
                    Err(_would_block) => continue,
                    Ok(Err(error)) if error.kind() == io::ErrorKind::WouldBlock => continue,
                    // Expired a year on: armed again.
                    Ok(Ok(_)) => Self::rearm(&fd.get_ref().0),
                    // Cancelled by a clock set: armed again, and told.
                    Ok(Err(error)) if error.raw_os_error() == Some(nix::libc::ECANCELED) => {
                        Self::rearm(&fd.get_ref().0);
                        return;
                    }
                    Ok(Err(error)) => {
                        tracing::error!(%error, "cannot read the wall-clock watch: a set of the wall clock is seen within half a second");
                        return std::future::pending().await;
                    }
                }
            },
            WallSource::None => std::future::pending().await,
            WallSource::Stepped(sets) => {
                if sets.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn fires_not_before_the_armed_instant_and_rearming_replaces_it() {
        let mut timer = DeadlineTimer::new();
        assert!(matches!(timer.source, Source::TimerFd(_)));
        let start = monotonic_now_us();
        timer.arm(start + 3_000);
        timer.expired().await;
        assert!(monotonic_now_us() >= start + 3_000);

        // Armed far away, then re-armed close: the close instant wins, and
        // the earlier expiry left no stale readiness behind.
        timer.arm(monotonic_now_us() + 60_000_000);
        let soon = monotonic_now_us() + 2_000;
        timer.arm(soon);
        assert_eq!(timer.armed(), soon);
        tokio::time::timeout(std::time::Duration::from_secs(10), timer.expired())
            .await
            .expect("a re-armed timer fires at its new instant");
        assert!(monotonic_now_us() >= soon);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_past_instant_fires_at_once_and_a_far_one_does_not() {
        let mut timer = DeadlineTimer::new();
        timer.arm(monotonic_now_us() - 1_000);
        tokio::time::timeout(std::time::Duration::from_secs(10), timer.expired())
            .await
            .expect("a past instant fires");
        timer.arm(monotonic_now_us() + 60_000_000);
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(20), timer.expired()).await;
        assert!(waited.is_err(), "a timer a minute away fired early");
    }
}
