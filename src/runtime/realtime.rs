//! The timing thread's few system calls: real-time priority, locked memory
//! and absolute sleeps on CLOCK_MONOTONIC.
//!
//! Memory is locked with `mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)`:
//! a page is locked once it is resident and stays so, but pages never
//! touched (most of the binary's code: TLS, D-Bus, the hall; the unused
//! parts of every thread's stack) do not become resident at all (at 32
//! boards the RSS fell from 25 to 15 MB: BENCHMARKS.md, issue 18 round 3).
//! Why it is safe for timing:
//! the timing thread's code paths are touched before any game runs (the
//! boards' first renders and frames, the device handshakes), its stack is
//! touched to [`TIMING_STACK_PREFAULT`] at start ([`prefault_stack`]), and
//! a page once resident is never paged out. What is left is the first use
//! of a code path no board took yet (e.g. the first flag of the daemon's
//! life): a minor fault of about a microsecond while the binary is in the
//! page cache, where it is right after the start; a major fault (a read
//! from the SD card) only if the page cache dropped that part of the binary
//! before its first use. Heap pages the allocator hands out for the first
//! time are minor faults (zeroed pages) under either flag set.
//!
//! Refusals are logged once, clearly, and the daemon goes on at normal
//! priority (kernels with `CONFIG_RT_GROUP_SCHED=y` refuse SCHED_FIFO even
//! to root; unprivileged users lack `LimitRTPRIO` / `LimitMEMLOCK`).

use nix::sys::mman::{mlockall, MlockAllFlags};
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
        let present = MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE;
        // MCL_ONFAULT (Linux 4.4): lock each page when it is first touched
        // instead of faulting in every mapping now. Kernels without it
        // answer EINVAL: then everything is locked as before.
        let on_fault = present | MlockAllFlags::from_bits_retain(libc::MCL_ONFAULT);
        let locked = match mlockall(on_fault) {
            Err(nix::errno::Errno::EINVAL) => mlockall(present).map(|()| "every mapping"),
            other => other.map(|()| "pages as they are touched (MCL_ONFAULT)"),
        };
        match locked {
            Ok(what) => {
                status.locked = true;
                tracing::info!(what, "memory locked (mlockall)");
            }
            Err(error) => tracing::warn!(
                %error,
                "the system refused mlockall; memory may be paged out (give the service LimitMEMLOCK=infinity)"
            ),
        }
    }
    status
}

/// How much of the timing thread's stack is touched before its loop runs
/// (see [`prefault_stack`]): well above the deepest path of a press, a
/// render and a frame write through the device links.
pub const TIMING_STACK_PREFAULT: usize = 192 * 1024;

/// Touches `bytes` of the calling thread's stack, one write per page, so
/// those pages are resident (and, under mlockall, locked) before any
/// deadline is kept: with `MCL_ONFAULT` a stack page is otherwise faulted in
/// the first time a deep call reaches it, in the middle of a press.
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const PAGE: usize = 4096;
    const CHUNK: usize = 16 * 1024;
    // A fixed chunk per frame, recursing for the rest, so no frame is
    // larger than what the thread's guard page protects against overrun.
    let mut chunk = [0u8; CHUNK];
    for offset in (0..CHUNK).step_by(PAGE) {
        // black_box below keeps these writes and the array from being
        // optimised away.
        chunk[offset] = 1;
    }
    std::hint::black_box(&mut chunk);
    if bytes > CHUNK {
        prefault_stack(bytes - CHUNK);
    }
    std::hint::black_box(&chunk);
}

/// Sleeps until monotonic instant `deadline` (µs), absolute, so a late
/// wake-up never accumulates. Returns at once if the deadline has passed.
pub fn sleep_until(deadline: Micros) {
    let deadline = deadline.max(0);
    let request = chessclock_host::clock::timespec_of_us(deadline);
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
    use chessclock_host::clock::monotonic_now_us;

    #[test]
    fn sleeps_until_an_absolute_instant() {
        let start = monotonic_now_us();
        let deadline = start + 2_000;
        sleep_until(deadline);
        assert!(monotonic_now_us() >= deadline);
        // A past deadline returns at once.
        sleep_until(start);
    }
}
