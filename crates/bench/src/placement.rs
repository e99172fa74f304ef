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
}

impl Placement {
    /// The first CPU this process may use for the harness, the rest for
    /// the daemon; `None` when fewer than two are allowed.
    pub fn split() -> Option<Placement> {
        let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
        let cpus: Vec<usize> = cpus_of(&allowed).collect();
        let (&harness_cpu, rest) = cpus.split_first()?;
        if rest.is_empty() {
            return None;
        }
        let mut daemon = CpuSet::new();
        for &cpu in rest {
            daemon.set(cpu).ok()?;
        }
        let mut harness = CpuSet::new();
        harness.set(harness_cpu).ok()?;
        Some(Placement {
            harness,
            daemon,
            harness_cpu,
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

    /// Moves the process (its main thread, and the threads it starts
    /// later) `pid` to the daemon's CPUs.
    pub fn move_to_daemon(&self, pid: u32) -> nix::Result<()> {
        sched_setaffinity(Pid::from_raw(pid as i32), &self.daemon)
    }

    /// The daemon's CPUs as `taskset -c` takes them: `1,2,3`.
    pub fn daemon_cpu_list(&self) -> String {
        cpus_of(&self.daemon)
            .map(|cpu| cpu.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// For the report: `harness on CPU 0, daemon ... on CPU(s) 1,2,3`.
    pub fn describe(&self) -> String {
        format!(
            "harness on CPU {}, daemon and the floor's echo on CPU(s) {}",
            self.harness_cpu,
            self.daemon_cpu_list()
        )
    }
}

/// The CPUs in `set`, ascending.
fn cpus_of(set: &CpuSet) -> impl Iterator<Item = usize> + '_ {
    (0..CpuSet::count()).filter(|&cpu| set.is_set(cpu).unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_gives_the_harness_one_allowed_cpu_and_the_daemon_the_rest() {
        let allowed: Vec<usize> = cpus_of(&sched_getaffinity(Pid::from_raw(0)).unwrap()).collect();
        let Some(placement) = Placement::split() else {
            assert!(allowed.len() < 2, "{allowed:?} allowed but no split");
            return;
        };
        let listed: Vec<usize> = placement
            .daemon_cpu_list()
            .split(',')
            .map(|cpu| cpu.parse().unwrap())
            .collect();
        assert_eq!(placement.harness_cpu, allowed[0]);
        assert_eq!(listed, allowed[1..]);
        // A thread entering either side runs only there.
        let side = std::thread::spawn(move || {
            placement.enter_daemon().unwrap();
            cpus_of(&sched_getaffinity(Pid::from_raw(0)).unwrap()).collect::<Vec<_>>()
        })
        .join()
        .unwrap();
        assert_eq!(side, listed);
    }
}
