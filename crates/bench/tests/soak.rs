//! The short fault soak, as CI runs it: the real daemon on a private bus
//! with simulated units, through unplug/replug, kill -9 and restart, line
//! noise and malformed D-Bus calls. Asserts the counts that must be zero
//! (the long soak: `chessclock-bench soak --long`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::time::Duration;

use chessclock_bench::rig::Binaries;
use chessclock_bench::soak::{self, SoakOptions};

#[test]
fn short_soak_loses_nothing_outside_unplugged_windows() {
    let binaries = Binaries::beside_current_exe().expect("the daemon's binaries");
    let options = SoakOptions {
        seconds: 6.0,
        ..SoakOptions::short()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(soak::run(&binaries, &options, &mut |line| {
            eprintln!("soak: {line}")
        }));
    });
    let report = rx
        .recv_timeout(Duration::from_secs(180))
        .expect("the soak finishes within 3 minutes")
        .expect("the soak runs");
    eprintln!("{}", chessclock_bench::report::soak_markdown(&report));
    // Every kind of fault happened.
    assert!(report.unplugs >= 1, "{report:?}");
    assert!(report.kills >= 1, "{report:?}");
    assert!(report.noise_windows >= 1, "{report:?}");
    assert!(report.malformed_calls >= 10, "{report:?}");
    assert!(report.presses_sent >= 20, "{report:?}");
    // And nothing a clock must never do.
    assert_eq!(
        report.presses_lost_outside_unplugged, 0,
        "lost: {:?}",
        report.lost
    );
    assert_eq!(report.state_mismatches, 0, "{report:?}");
    // Every restart came back with its devices, and stated a restart
    // instant of its own run (between the spawn and its first answer).
    assert_eq!(report.restarts_not_ready, 0, "{:?}", report.findings);
    assert_eq!(report.restarts_out_of_bracket, 0, "{report:?}");
    assert_eq!(
        report.restart_figures.len() + report.restarts_without_figure,
        report.kills * SoakOptions::short().boards,
        "one figure or a reason per restart and board"
    );
    assert_eq!(report.crashes, 0, "{report:?}");
    assert!(
        report.malformed_accepted.is_empty(),
        "{:?}",
        report.malformed_accepted
    );
    assert!(report.presses_accounted + report.presses_in_unplugged_windows >= report.presses_sent);
}
