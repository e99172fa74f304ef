//! The daemon's hall task in-process, on the runtime's stepped clock
//! (`chessclockd::runtime::time`): the runtime and the hall read one clock,
//! so every state the hall publishes maps the daemon's instants onto the
//! wall clock exactly as the test moved it. The broker is a real mosquitto
//! on 127.0.0.1 (kit::hall::Broker): what crosses it takes real time, and
//! the test waits for it with a deadline; the clock itself never runs on
//! its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use chessclockd::config::{Config, HallConfig};
use chessclockd::control::{Caller, Command};
use chessclockd::engine::{Micros, SECOND};
use chessclockd::hall::Hall;
use chessclockd::runtime::time::{SteppedClock, TimeSource};
use chessclockd::runtime::{Devices, Runtime, StateOptions};
use kit::hall::watch::{options, Watcher};
use kit::hall::{Broker, WAIT};

const T0: Micros = 5_000 * SECOND;
const WALL0: i64 = 1_796_061_600_000_000;

fn config(broker: &Broker) -> Config {
    let mut config = kit::runtime::config();
    config.boards.push(kit::runtime::board("b1", "60"));
    config.hall = Some(
        toml::from_str::<HallConfig>(&format!(
            "broker = \"mqtt://127.0.0.1:{}\"\nname = \"open\"\nhost = \"pi1\"\n",
            broker.port
        ))
        .unwrap(),
    );
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_halls_states_map_the_daemons_instants_on_its_own_clock() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let config = config(&broker);
    let clock = SteppedClock::new(T0, WALL0);
    let (_inject, events) = tokio::sync::mpsc::unbounded_channel();
    let runtime = Runtime::start_timed(
        config.clone(),
        StateOptions {
            dir: Some(dir.path().join("state")),
            no_state: false,
            lock: None,
        },
        Devices::Custom {
            backend: Box::new(kit::runtime::NoDevices),
            events,
        },
        TimeSource::Stepped(clock.clone()),
    )
    .unwrap();
    let mut watcher = Watcher::connect(
        options("watcher", broker.port, None),
        "chessclock/open/board/b1/state",
        WAIT,
    )
    .await;
    let hall = Hall::start(
        config.hall.as_ref().unwrap(),
        runtime.handle(),
        runtime.time(),
        chessclockd::hall::NtpRule::new(true),
    )
    .unwrap();

    // The first state: the mapping is the clock's, to the millisecond.
    let first = watcher
        .wait_for("the first state", WAIT, |seen| seen.json()["board"] == "b1")
        .await
        .json();
    assert_eq!(first["clock"]["mono_ms"], T0 / 1000);
    assert_eq!(first["clock"]["wall_ms"], WALL0 / 1000);

    // Ten minutes later (of the test's clock), a start: the new state's
    // snapshot is at that instant on both clocks.
    clock.advance_us(600 * SECOND);
    watcher.mark();
    runtime
        .handle()
        .call("b1", Command::Start, Caller::uid(0))
        .await
        .unwrap();
    let started = watcher
        .wait_for("the started state", WAIT, |seen| {
            seen.json()["snapshot"]["started"] == true
        })
        .await
        .json();
    assert_eq!(started["clock"]["mono_ms"], (T0 + 600 * SECOND) / 1000);
    assert_eq!(started["clock"]["wall_ms"], (WALL0 + 600 * SECOND) / 1000);
    assert_eq!(
        started["snapshot_wall_ms"],
        (WALL0 + 600 * SECOND) / 1000,
        "the snapshot's instant on the wall clock"
    );
    hall.stop().await;
    runtime.shutdown().await;
}
