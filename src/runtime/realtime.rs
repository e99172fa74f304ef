//! The timing thread's few system calls: real-time priority, locked memory
//! and absolute sleeps on CLOCK_MONOTONIC.
//!
//! Refusals are logged once, clearly, and the daemon goes on at normal
//! priority (kernels with `CONFIG_RT_GROUP_SCHED=y` refuse SCHED_FIFO even
//! to root; unprivileged users lack `LimitRTPRIO` / `LimitMEMLOCK`).

use nix::sys::mman::{mlockall, MlockAllFlags};
use nix::sys::time::TimeSpec;
use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};

use crate::engine::Micros;

/// What the timing thread got from the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RealtimeStatus {
    pub fifo: bool,
    pub locked: bool,
}

/// Asks for SCHED_FIFO at `priority` (0: do not ask) for the calling thread
/// and, when `lock`, for mlockall. Logs what was refused and why.
pub fn enter_realtime(priority: u8, lock: bool) -> RealtimeStatus {
    let mut status = RealtimeStatus {
        fifo: false,
        locked: false,
    };
    if priority > 0 {
        // The config refuses priorities above the kernel's maximum; the
        // kernel's answer below is the truth either way.
        let param = libc::sched_param {
            sched_priority: i32::from(priority),
        };
        // SAFETY: pthread_self() is always a valid handle for the calling
        // thread, and `param` is a fully initialised sched_param that lives
        // for the whole call.
        let result =
            unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
        if result == 0 {
            status.fifo = true;
            tracing::info!(priority, "timing thread runs with SCHED_FIFO");
        } else {
            let error = std::io::Error::from_raw_os_error(result);
            tracing::warn!(
                priority,
                %error,
                "the system refused SCHED_FIFO for the timing thread; running at normal priority \
                 (give the service LimitRTPRIO=, or check CONFIG_RT_GROUP_SCHED)"
            );
        }
    }
    if lock {
        match mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE) {
            Ok(()) => {
                status.locked = true;
                tracing::info!("memory locked (mlockall)");
            }
            Err(error) => tracing::warn!(
                %error,
                "the system refused mlockall; memory may be paged out (give the service LimitMEMLOCK=infinity)"
            ),
        }
    }
    status
}

/// Sleeps until monotonic instant `deadline` (µs), absolute, so a late
/// wake-up never accumulates. Returns at once if the deadline has passed.
pub fn sleep_until(deadline: Micros) {
    let deadline = deadline.max(0);
    let request = TimeSpec::new(deadline / 1_000_000, (deadline % 1_000_000) * 1_000);
    loop {
        match clock_nanosleep(
            ClockId::CLOCK_MONOTONIC,
            ClockNanosleepFlags::TIMER_ABSTIME,
            &request,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) | Err(_) => return,
        }
    }
}

/// Wake-up lateness of the absolute sleeps: a fixed histogram (10 µs
/// buckets up to 10 ms), no allocation on the timing thread.
#[derive(Clone, Debug)]
pub struct Lateness {
    buckets: [u32; 1000],
    overflow: u32,
    count: u64,
    max: i64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            buckets: [0; 1000],
            overflow: 0,
            count: 0,
            max: 0,
        }
    }
}

impl Lateness {
    const BUCKET: i64 = 10;

    pub fn record(&mut self, late_us: i64) {
        let late_us = late_us.max(0);
        self.count += 1;
        self.max = self.max.max(late_us);
        match self.buckets.get_mut((late_us / Self::BUCKET) as usize) {
            Some(bucket) => *bucket += 1,
            None => self.overflow += 1,
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_us(&self) -> i64 {
        self.max
    }

    /// The upper edge of the bucket holding the `percent`-th percentile, µs
    /// (`None` with no samples or beyond 10 ms).
    pub fn percentile_us(&self, percent: u64) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        let rank = (self.count * percent).div_ceil(100).max(1);
        let mut seen = 0u64;
        for (index, bucket) in self.buckets.iter().enumerate() {
            seen += u64::from(*bucket);
            if seen >= rank {
                return Some((index as i64 + 1) * Self::BUCKET);
            }
        }
        None
    }
}

/// One malloc arena for the whole daemon (glibc), set before any thread
/// starts. glibc gives threads arenas of their own (up to eight per core);
/// the timing thread builds what the control loop frees, so memory freed
/// in one arena and wanted in another is held twice, and under mlockall all
/// of it stays resident (at 256 boards: 65 MB with the default, 35 MB with
/// one arena). The threads seldom allocate at the same instant, so the
/// lock they share costs little.
pub fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt takes two integers by value and only changes
        // glibc's allocator parameters; it is called before any other
        // thread exists (start of main), and M_ARENA_MAX is a valid option.
        let set = unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
        if set != 1 {
            tracing::debug!("glibc refused M_ARENA_MAX; threads keep their own malloc arenas");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_now_us;

    #[test]
    fn sleeps_until_an_absolute_instant() {
        let start = monotonic_now_us();
        let deadline = start + 2_000;
        sleep_until(deadline);
        assert!(monotonic_now_us() >= deadline);
        // A past deadline returns at once.
        sleep_until(start);
    }

    #[test]
    fn lateness_percentiles() {
        let mut lateness = Lateness::default();
        assert_eq!(lateness.percentile_us(50), None);
        for late in [5, 15, 15, 95, 20_000] {
            lateness.record(late);
        }
        assert_eq!(lateness.count(), 5);
        assert_eq!(lateness.max_us(), 20_000);
        assert_eq!(lateness.percentile_us(50), Some(20));
        assert_eq!(lateness.percentile_us(80), Some(100));
        assert_eq!(lateness.percentile_us(100), None);
    }
}
