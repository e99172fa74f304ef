//! Where the measurement runs: the harness (the simulated units, the
//! floor's initiating end, the D-Bus client) on one CPU, the daemon on the
//! others, and the floor's echo thread, which stands in for the daemon, on
//! the daemon's CPUs too.
//!
//! Real press-button and display units have processors of their own. On one
//! machine the simulator shares the daemon's CPUs instead, and a daemon
//! whose timing thread runs SCHED_FIFO preempts a simulated unit that shares
//! its CPU until the whole press is processed: the display frame then waits
//! in the simulator, not in the daemon. Apart, each side keeps its CPU, and
//! both the press and the floor cross between the same CPUs. With fewer than
//! two CPUs allowed there is nothing to split and nothing is pinned.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// The CPU split of one run.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    harness: CpuSet,
    daemon: CpuSet,
    harness_cpu: usize,
    /// The daemon's CPUs, ascending.
    daemon_first: usize,
    daemon_last: usize,
    daemon_count: usize,
}

impl Placement {
    /// The first CPU this process may use for the harness, the rest for
    /// the daemon; `None` when fewer than two are allowed.
    pub fn split() -> Option<Placement> {
        let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
        let cpus: Vec<usize> = (0..CpuSet::count())
            .filter(|&cpu| allowed.is_set(cpu).unwrap_or(false))
            .collect();
        let (&harness_cpu, rest) = cpus.split_first()?;
        let (&daemon_first, &daemon_last) = (rest.first()?, rest.last()?);
        let mut harness = CpuSet::new();
        harness.set(harness_cpu).ok()?;
        let mut daemon = CpuSet::new();
        for &cpu in rest {
            daemon.set(cpu).ok()?;
        }
        Some(Placement {
            harness,
            daemon,
            harness_cpu,
            daemon_first,
            daemon_last,
            daemon_count: rest.len(),
        })
    }

    /// Moves the calling thread to the harness CPU; threads it starts later
    /// inherit it.
    pub fn enter_harness(&self) -> nix::Result<()> {
        sched_setaffinity(Pid::from_raw(0), &self.harness)
    }

    /// Moves the calling thread to the daemon's CPUs (the floor's echo).
    pub fn enter_daemon(&self) -> nix::Result<()> {
        sched_setaffinity(Pid::from_raw(0), &self.daemon)
    }

    /// The daemon's CPUs as `taskset -c` takes them. Listed one by one
    /// (when not one contiguous range) so a cgroup's gaps are kept.
    pub fn daemon_cpu_list(&self) -> String {
        if self.daemon_last - self.daemon_first + 1 == self.daemon_count {
            if self.daemon_first == self.daemon_last {
                self.daemon_first.to_string()
            } else {
                format!("{}-{}", self.daemon_first, self.daemon_last)
            }
        } else {
            (self.daemon_first..=self.daemon_last)
                .filter(|&cpu| self.daemon.is_set(cpu).unwrap_or(false))
                .map(|cpu| cpu.to_string())
                .collect::<Vec<_>>()
                .join(",")
        }
    }

    /// For the report: `harness on CPU 0, daemon on CPUs 1-3`.
    pub fn describe(&self) -> String {
        format!(
            "harness on CPU {}, daemon and the floor's echo on CPU(s) {}",
            self.harness_cpu,
            self.daemon_cpu_list()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_gives_the_harness_one_allowed_cpu_and_the_daemon_the_rest() {
        let allowed = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let count = (0..CpuSet::count())
            .filter(|&cpu| allowed.is_set(cpu).unwrap())
            .count();
        let Some(placement) = Placement::split() else {
            assert!(count < 2, "{count} CPUs allowed but no split");
            return;
        };
        assert!(allowed.is_set(placement.harness_cpu).unwrap());
        assert!(!placement.daemon.is_set(placement.harness_cpu).unwrap());
        assert_eq!(placement.daemon_count, count - 1);
        let listed: Vec<usize> = placement
            .daemon_cpu_list()
            .split(',')
            .flat_map(|part| match part.split_once('-') {
                Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
                None => vec![part.parse().unwrap()],
            })
            .collect();
        assert_eq!(listed.len(), count - 1);
        assert!(listed
            .iter()
            .all(|&cpu| placement.daemon.is_set(cpu).unwrap()));
        // A thread entering either side runs only there.
        let side = std::thread::spawn(move || {
            placement.enter_daemon().unwrap();
            sched_getaffinity(Pid::from_raw(0)).unwrap()
        })
        .join()
        .unwrap();
        assert!(!side.is_set(placement.harness_cpu).unwrap());
        assert!(side.is_set(listed[0]).unwrap());
    }
}
