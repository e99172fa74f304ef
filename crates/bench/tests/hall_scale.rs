//! A smoke test of the scale bench (issue 30 item 7): a small hall (50 fake
//! boards over 10 fake hosts, one real daemon of 2 boards, 2 s phases) on a
//! real mosquitto and the real hub, the hub pushing the round to the
//! bench's lichess stand-in (issue 32 item 6). It asserts what must hold at
//! any size (every board reached the page, the generator's messages reached
//! the broker, every press reached the page, the hub was measured, every
//! push carried all the round's games and every fake board's last state
//! went out), never a time: the figures are the bench's (`chessclock-bench
//! scale`, BENCHMARKS.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::time::Duration;

use chessclock_bench::rig::Binaries;
use chessclock_bench::scale::{self, ScaleOptions};

#[test]
fn a_small_hall_under_the_load_generator_reaches_the_page() {
    let binaries = Binaries::beside_current_exe().expect("the daemon's binaries");
    let hub = binaries.daemon.with_file_name("chessclock-hall");
    assert!(
        hub.is_file(),
        "{} is missing: build the hub first (`cargo build --bins`)",
        hub.display()
    );
    let options = ScaleOptions {
        boards: 50,
        hosts: 10,
        daemons: 1,
        boards_per_daemon: 2,
        steady_rate: 200.0,
        peak_rate: 1000.0,
        steady_seconds: 2.0,
        peak_seconds: 2.0,
        presses_per_second: 4.0,
        screens: 1,
        lichess: true,
        ..ScaleOptions::default()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(scale::run(&binaries, &options, &mut |line| {
            eprintln!("scale: {line}")
        }));
    });
    let report = rx
        .recv_timeout(Duration::from_secs(150))
        .expect("the run finishes within 150 s")
        .expect("the run completes");
    eprintln!("{}", serde_json::to_string_pretty(&report).unwrap());
    assert_eq!(report.boards, 50);
    assert_eq!(report.phases.len(), 3);
    // The generator made real-sized states from the real daemon's shape.
    assert!(report.real_state_bytes > 300, "{report:?}");
    assert!(report.states >= 50, "{report:?}");
    assert!(report.state_bytes_max <= 4096, "{report:?}");
    // It reached the broker at a rate (well under the asked one only if
    // this machine is starved; some must go).
    for phase in &report.phases {
        assert!(phase.rate_sent > 0.0, "{phase:?}");
        assert!(phase.presses > 0, "{phase:?}");
        assert!(phase.hub.seconds > 1.0, "the hub was sampled: {phase:?}");
    }
    // Every press reached the page, and the hub was measured.
    assert_eq!(report.presses_missing, 0, "{report:?}");
    assert!(report.press_to_page_ms.count > 0);
    assert!(report.hub_hwm_mb > 0.0, "{report:?}");
    assert!(report.page_messages > 50, "{report:?}");
    // The push: one lichess round for 50 boards, each request all of them,
    // every game of a fake board whose presses the bench read, and every
    // state published in the phases carried by a push by the end.
    let push = report.push.as_ref().expect("the push was measured");
    assert_eq!(push.rounds.len(), 1, "{push:?}");
    assert!(push.run.requests > 0, "{push:?}");
    assert_eq!(push.run.games_per_request.min, 50.0, "{push:?}");
    assert_eq!(push.run.games_per_request.max, 50.0, "{push:?}");
    assert_eq!(push.games_unknown, 0, "{push:?}");
    assert!(push.run.states > 0, "{push:?}");
    assert_eq!(push.run.states_unpushed, 0, "{push:?}");
    assert_eq!(push.run.push_lag_ms.count, push.run.states, "{push:?}");
}
