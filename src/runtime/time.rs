//! Where the runtime reads the time and waits for its deadlines: the
//! host's clocks and an absolute timerfd ([`TimeSource::System`]), or a
//! clock the caller moves ([`TimeSource::Stepped`]), so that a test of the
//! whole shell (timing thread, store, control loop) reads as a transcript:
//! the game's minutes pass when the test says so, in microseconds of real
//! time, and every instant is written down.
//!
//! Promises: every reading of the runtime's threads goes through one
//! [`TimeSource`]; a stepped clock's monotonic reading never goes back,
//! and moving it wakes every deadline armed at or before the new instant,
//! and no other; stepping its wall reading alone wakes the runtime as a
//! set of the host's clock does (`super::deadline::WallWatch`).

use std::sync::Arc;

use chessclock_host::clock::{monotonic_now_us, wall_now_us, Clock, ManualClock};
use tokio::sync::watch;

use crate::engine::Micros;

/// See the module docs.
#[derive(Clone, Debug, Default)]
pub enum TimeSource {
    /// CLOCK_MONOTONIC and CLOCK_REALTIME; deadlines on a timerfd.
    #[default]
    System,
    /// A clock moved by [`SteppedClock::advance_us`].
    Stepped(Arc<SteppedClock>),
}

impl TimeSource {
    /// Now on the monotonic clock, µs.
    pub fn monotonic_us(&self) -> Micros {
        match self {
            TimeSource::System => monotonic_now_us(),
            TimeSource::Stepped(clock) => clock.clock.monotonic_us(),
        }
    }

    /// Now on the wall clock, µs since the Unix epoch.
    pub fn wall_us(&self) -> i64 {
        match self {
            TimeSource::System => wall_now_us(),
            TimeSource::Stepped(clock) => clock.clock.wall_us(),
        }
    }
}

/// A clock that moves only when told, and the deadlines waiting on it.
#[derive(Debug)]
pub struct SteppedClock {
    clock: ManualClock,
    moved: watch::Sender<Micros>,
    /// Counts the wall clock's steps ([`SteppedClock::step_wall_us`]).
    wall_set: watch::Sender<u64>,
}

impl SteppedClock {
    /// A clock reading `monotonic_us` and `wall_us`.
    pub fn new(monotonic_us: Micros, wall_us: i64) -> Arc<SteppedClock> {
        Arc::new(SteppedClock {
            clock: ManualClock::new(monotonic_us, wall_us),
            moved: watch::Sender::new(monotonic_us),
            wall_set: watch::Sender::new(0),
        })
    }

    /// Moves both readings on by `us` (never back) and wakes the deadlines
    /// now due.
    pub fn advance_us(&self, us: Micros) {
        self.clock.advance_us(us);
        self.moved.send_replace(self.clock.monotonic_us());
    }

    /// Moves the monotonic reading on to `at` (if later) and wakes the
    /// deadlines now due.
    pub fn advance_to(&self, at: Micros) {
        self.advance_us(at - self.clock.monotonic_us());
    }

    /// Steps the wall reading alone by `us` (forward or back), as setting
    /// the host's clock does, and tells the runtime, as the kernel tells a
    /// timer cancelled on a clock set.
    pub fn step_wall_us(&self, us: i64) {
        self.clock.step_wall_us(us);
        self.wall_set
            .send_modify(|steps| *steps = steps.wrapping_add(1));
    }

    /// Where the runtime learns that the wall clock was set.
    pub(crate) fn wall_sets(&self) -> watch::Receiver<u64> {
        self.wall_set.subscribe()
    }

    /// Now on this clock's monotonic reading.
    pub fn now_us(&self) -> Micros {
        self.clock.monotonic_us()
    }

    /// Where a deadline timer learns that the clock moved.
    pub(crate) fn moves(&self) -> watch::Receiver<Micros> {
        self.moved.subscribe()
    }
}
