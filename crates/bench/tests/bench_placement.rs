//! The bench's CPU placement as a run uses it: the real daemon started by
//! the rig through `taskset` runs, all its threads, only on the daemon's
//! CPUs, and the harness thread only on its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_bench::placement::Placement;
use chessclock_bench::rig::{Binaries, Rig, RigOptions};

/// The CPUs of a `Cpus_allowed_list` such as `1`, `0-3` or `0,2-3`.
fn cpu_list(text: &str) -> Vec<usize> {
    text.trim()
        .split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

fn allowed_cpus(status_path: &str) -> Vec<usize> {
    let status = std::fs::read_to_string(status_path).unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    cpu_list(line)
}

#[test]
fn the_daemon_runs_on_its_cpus_and_the_harness_on_its_own() {
    let all = allowed_cpus("/proc/self/status");
    let Some(placement) = Placement::split() else {
        // One CPU: the bench pins nothing, and says so.
        assert_eq!(all.len(), 1, "{all:?} allowed but no split");
        return;
    };
    let daemon_cpus = cpu_list(&placement.daemon_cpu_list());
    assert_eq!(daemon_cpus.len(), all.len() - 1);
    let harness_cpu = all[0];
    assert!(!daemon_cpus.contains(&harness_cpu));

    // The harness side: a thread entering it (and what it starts later).
    let placement_for_harness = placement;
    std::thread::spawn(move || {
        placement_for_harness.enter_harness().unwrap();
        assert_eq!(allowed_cpus("/proc/thread-self/status"), vec![harness_cpu]);
    })
    .join()
    .unwrap();

    let binaries = Binaries::beside_current_exe().expect("the daemon's binaries");
    let rig = Rig::start(
        &binaries,
        &RigOptions {
            boards: 1,
            realtime: false,
            log_sent: false,
            seed: 3,
            daemon_cpus: Some(placement.daemon_cpu_list()),
            rttime_us: None,
            boot_spread_us: 0,
        },
    )
    .expect("the rig starts with the daemon pinned");
    let pid = rig.daemon_pid().expect("a daemon");
    // Started through taskset, it is still the process the rig waits on:
    // taskset replaced itself with the daemon.
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "chessclockd");
    let tasks: Vec<_> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(tasks.len() >= 3, "the daemon's threads: {tasks:?}");
    for task in tasks {
        assert_eq!(
            allowed_cpus(&format!("/proc/{pid}/task/{task}/status")),
            daemon_cpus,
            "thread {task} of the daemon"
        );
    }
}
