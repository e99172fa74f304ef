//! What a process costs, read from `/proc`: resident memory, CPU time and
//! context switches (every switch is a sleep or a preemption: their rate is
//! the wake-up rate).

use std::path::Path;

use serde::Serialize;

/// One reading of a process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ProcSample {
    /// CLOCK_MONOTONIC µs when read.
    pub at_us: i64,
    pub rss_kb: u64,
    /// Peak RSS so far (VmHWM).
    pub hwm_kb: u64,
    /// User + system CPU time, clock ticks.
    pub cpu_ticks: u64,
    /// Voluntary + non-voluntary context switches over all threads.
    pub ctxt_switches: u64,
    pub threads: u64,
    /// Threads running SCHED_FIFO (the timing thread, when granted).
    pub fifo_threads: u64,
    /// Bytes the process caused to be written to storage so far
    /// (`write_bytes` of `/proc/PID/io`; 0 when unreadable).
    pub write_bytes: u64,
}

fn status_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// utime + stime from a `/proc/PID/stat` line (fields 14 and 15; the
/// command name in parentheses may hold spaces, so count after the last `)`).
pub fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state).
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The scheduling policy (field 41 of a stat line; 1 = SCHED_FIFO).
pub fn stat_policy(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(38)?.parse().ok()
}

/// Reads process `pid`; `None` once it is gone.
pub fn sample(pid: u32) -> Option<ProcSample> {
    let base = Path::new("/proc").join(pid.to_string());
    let status = std::fs::read_to_string(base.join("status")).ok()?;
    let stat = std::fs::read_to_string(base.join("stat")).ok()?;
    let mut ctxt = 0;
    let mut threads = 0;
    let mut fifo_threads = 0;
    if let Ok(tasks) = std::fs::read_dir(base.join("task")) {
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("status")) {
                threads += 1;
                let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                if stat_policy(&stat) == Some(1) {
                    fifo_threads += 1;
                }
                ctxt += status_field(&text, "voluntary_ctxt_switches").unwrap_or(0)
                    + status_field(&text, "nonvoluntary_ctxt_switches").unwrap_or(0);
            }
        }
    }
    let write_bytes = std::fs::read_to_string(base.join("io"))
        .ok()
        .and_then(|io| status_field(&io, "write_bytes"))
        .unwrap_or(0);
    Some(ProcSample {
        at_us: chessclock_host::clock::monotonic_now_us(),
        rss_kb: status_field(&status, "VmRSS").unwrap_or(0),
        hwm_kb: status_field(&status, "VmHWM").unwrap_or(0),
        cpu_ticks: stat_cpu_ticks(&stat)?,
        ctxt_switches: ctxt,
        threads,
        fifo_threads,
        write_bytes,
    })
}

/// Clock ticks per second of `/proc/PID/stat`: USER_HZ, which Linux fixes
/// at 100 for user space on every architecture.
/// Each thread of process `pid`, `comm(tid) state wchan=...`: its name,
/// its state and the kernel function it waits in (for a process that is
/// stuck), comma separated.
pub fn threads(pid: u32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return format!("/proc/{pid}/task unreadable");
    };
    tasks
        .filter_map(|entry| entry.ok())
        .map(|entry| {
            let dir = entry.path();
            let read = |name: &str| {
                std::fs::read_to_string(dir.join(name))
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            };
            let state = read("status")
                .lines()
                .find_map(|l| l.strip_prefix("State:"))
                .unwrap_or("")
                .trim()
                .to_owned();
            format!(
                "{}({}) {} wchan={}",
                read("comm"),
                entry.file_name().to_string_lossy(),
                state,
                read("wchan")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn ticks_per_second() -> f64 {
    100.0
}

/// Resource use between two samples of one process.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Usage {
    pub seconds: f64,
    pub rss_mb_max: f64,
    pub rss_mb_end: f64,
    pub hwm_mb: f64,
    /// CPU time / wall time, percent of one core.
    pub cpu_percent: f64,
    pub wakeups_per_second: f64,
    pub threads: u64,
    pub fifo_threads: u64,
    /// Bytes written to storage between the samples.
    pub write_bytes: u64,
}

/// Usage from `first` to `last`, with the largest RSS among `all`.
pub fn usage(first: &ProcSample, last: &ProcSample, all: &[ProcSample]) -> Usage {
    let seconds = (last.at_us - first.at_us).max(1) as f64 / 1e6;
    let mb = |kb: u64| kb as f64 / 1024.0;
    Usage {
        seconds,
        rss_mb_max: mb(all.iter().map(|s| s.rss_kb).max().unwrap_or(last.rss_kb)),
        rss_mb_end: mb(last.rss_kb),
        hwm_mb: mb(last.hwm_kb),
        cpu_percent: (last.cpu_ticks.saturating_sub(first.cpu_ticks)) as f64
            / ticks_per_second()
            / seconds
            * 100.0,
        wakeups_per_second: last.ctxt_switches.saturating_sub(first.ctxt_switches) as f64 / seconds,
        threads: last.threads,
        fifo_threads: last.fifo_threads,
        write_bytes: last.write_bytes.saturating_sub(first.write_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_s_threads_are_named_with_their_state() {
        let named = std::thread::Builder::new()
            .name("procfs-probe".into())
            .spawn(|| threads(std::process::id()))
            .unwrap()
            .join()
            .unwrap();
        // The thread that reads is running as it reads.
        let probe = named
            .split(", ")
            .find(|t| t.starts_with("procfs-probe("))
            .unwrap_or_else(|| panic!("no probe thread in {named}"));
        assert!(probe.contains(") R (running) wchan="), "{probe}");
        assert_eq!(
            threads(u32::MAX),
            format!("/proc/{}/task unreadable", u32::MAX)
        );
    }

    #[test]
    fn stat_line_with_spaces_in_the_name() {
        let line = "42 (a b) S 1 2 3 4 5 6 7 8 9 10 111 222 0 0 20 0 1 0";
        assert_eq!(stat_cpu_ticks(line), Some(333));
        let fields: Vec<String> = (3..=45)
            .map(|i| if i == 41 { "1".into() } else { i.to_string() })
            .collect();
        assert_eq!(stat_policy(&format!("9 (x) {}", fields.join(" "))), Some(1));
    }

    #[test]
    fn this_process_can_be_sampled() {
        let s = sample(std::process::id()).expect("own /proc entry");
        assert!(s.rss_kb > 0);
        assert!(s.threads >= 1);
        assert!(s.ctxt_switches > 0);
    }

    #[test]
    fn usage_is_rates_over_the_interval() {
        let a = ProcSample {
            at_us: 0,
            rss_kb: 1024,
            hwm_kb: 2048,
            cpu_ticks: 0,
            ctxt_switches: 0,
            threads: 3,
            fifo_threads: 1,
            write_bytes: 4096,
        };
        let b = ProcSample {
            at_us: 2_000_000,
            ctxt_switches: 100,
            write_bytes: 3 * 4096,
            ..a
        };
        let u = usage(&a, &b, &[a, b]);
        assert_eq!(u.write_bytes, 2 * 4096);
        assert_eq!(u.wakeups_per_second, 50.0);
        assert_eq!(u.rss_mb_max, 1.0);
        assert_eq!(u.cpu_percent, 0.0);
    }
}
