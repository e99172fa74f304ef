//! The runtime with an electronic board: a simulated DGT board on a PTY
//! (the `eboard` simulator) and a fake button unit. The board's move count
//! replaces the presses (`move-count = "eboard"`), so a forgotten press does
//! not shift the stage change; the live PGN carries the clock times.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::time::{Duration, Instant};

use chessclock_host::clock::monotonic_now_us;
use chessclock_protocol::{Button, Capabilities, Hello, Roles, Text};
use chessclock_sim::dgt::{run_sim, DgtSimOptions, SimScript};
use chessclockd::config::{BoardConfig, DeviceRef};
use chessclockd::control::{BoardEvent, Caller, Command, ControlHandle, Reply};
use chessclockd::devices::{DeviceEvent, DeviceKey, DeviceRole};
use chessclockd::engine::Side;
use chessclockd::runtime::{Devices, Runtime};
use kit::runtime::NoDevices;
use serde_json::Value;
use tokio::sync::mpsc;

const ROOT: Caller = Caller::uid(0);

async fn state(handle: &ControlHandle) -> Value {
    match handle.call("b1", Command::State, ROOT).await.unwrap() {
        Reply::Json(json) => serde_json::from_str(&json).unwrap(),
        other => panic!("unexpected {other:?}"),
    }
}

async fn wait_state(handle: &ControlHandle, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let state = state(handle).await;
        if ready(&state) {
            return state;
        }
        assert!(Instant::now() < deadline, "{what}: last state {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_counts_the_moves_when_a_press_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dgt");
    let mut options = DgtSimOptions::new(SimScript::Pgn {
        text: "1. e4 e5 2. Nf3 Nc6 *".into(),
    });
    options.link = Some(link.clone());
    options.step = Duration::from_millis(20);
    options.move_pause = Duration::from_millis(60);
    options.start_delay = Duration::from_millis(300);
    let sim = run_sim(options).expect("simulated DGT board");

    let pgn_dir = dir.path().join("pgn");
    std::fs::create_dir(&pgn_dir).unwrap();
    let mut config = kit::runtime::config();
    config.daemon.pgn_dir = Some(pgn_dir.clone());
    config.boards.push(BoardConfig {
        short_control: false,
        buttons: Some(DeviceRef::Path("/dev/fake-buttons".into())),
        eboard: Some(DeviceRef::Path(link.clone())),
        // Two moves in a minute, then a minute more.
        ..kit::runtime::board("b1", "2/60:60")
    });
    let (inject, events_rx) = mpsc::unbounded_channel();
    let runtime = Runtime::start(
        config.clone(),
        Some(dir.path().join("state")),
        Devices::Custom {
            backend: Box::new(NoDevices),
            events: events_rx,
        },
    )
    .unwrap();
    let handle = runtime.handle();
    let mut events = handle.events.subscribe();
    let buttons = DeviceKey {
        board: "b1".into(),
        role: DeviceRole::Buttons,
    };
    inject
        .send(DeviceEvent::Connected {
            key: buttons.clone(),
            hello: Hello {
                protocol_version: 1,
                roles: Roles::BUTTONS,
                capabilities: Capabilities::default(),
                vendor: Text::truncated("test"),
                model: Text::truncated("fake"),
                serial: Text::truncated("BTN"),
                firmware: Text::truncated("1"),
                boot_id: 1,
                first_unacked_event: 0,
            },
            path: "/dev/fake-buttons".into(),
        })
        .unwrap();
    handle.call("b1", Command::Start, ROOT).await.unwrap();

    // White plays 1. e4 and 2. Nf3 on the board without ever pressing.
    let state_now = wait_state(&handle, "four plies on the board", |s| {
        s["eboard"]["ply"].as_u64() == Some(4)
    })
    .await;
    assert_eq!(state_now["eboard"]["connected"], true);
    assert_eq!(state_now["white"]["moves"], 0);

    // White's first press: the board says it is White's 2nd move, so the
    // second stage's minute is added now, not a move late.
    inject
        .send(DeviceEvent::Button {
            key: buttons,
            serial: "BTN".into(),
            // The unit's first event (its HELLO said 0 is the next).
            event: 0,
            button: Button::Left,
            pressed: true,
            at: monotonic_now_us(),
            arrival: monotonic_now_us(),
        })
        .unwrap();
    let stage = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(BoardEvent::StageChanged {
                side: Side::White,
                stage,
                ..
            }) = events.recv().await
            {
                return stage;
            }
        }
    })
    .await
    .expect("a stage change");
    assert_eq!(stage, 2);
    let after = state(&handle).await;
    assert_eq!(after["white"]["moves"], 2);
    assert_eq!(after["white"]["stage"], 2);
    let history = match handle.call("b1", Command::History, ROOT).await.unwrap() {
        Reply::Json(json) => serde_json::from_str::<Value>(&json).unwrap(),
        other => panic!("unexpected {other:?}"),
    };
    let kinds: Vec<&str> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["do"].as_str().unwrap())
        // (The link of the e-board is in the record too, when it came up
        // after the start.)
        .filter(|kind| !kind.starts_with("board-") && *kind != "device")
        .collect();
    // The move count taken from the board, the press, and the stage the
    // press reached as a row of its own.
    assert_eq!(kinds, ["start", "adjust", "press", "stage"]);
    let board_moves: Vec<&str> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["do"] == "board-move")
        .map(|e| e["uci"].as_str().unwrap())
        .collect();
    assert_eq!(board_moves.last(), Some(&"b8c6"), "{board_moves:?}");

    // The live PGN, by D-Bus command and on disk, once Black's last move
    // is confirmed (by 1.5 s without change: the broadcast PGN holds
    // confirmed moves only).
    let confirmed = Instant::now() + Duration::from_secs(10);
    let pgn = loop {
        let pgn = match handle.call("b1", Command::Pgn, ROOT).await.unwrap() {
            Reply::Text(text) => text,
            other => panic!("unexpected {other:?}"),
        };
        if pgn.contains("2... Nc6") {
            break pgn;
        }
        assert!(Instant::now() < confirmed, "Nc6 never confirmed: {pgn}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(pgn.contains("1. e4"), "{pgn}");
    assert!(pgn.contains("[%clk"), "{pgn}");
    let live_pgn = pgn.clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let written = std::fs::read_to_string(pgn_dir.join("b1.pgn")).unwrap_or_default();
        if written.contains("[%clk") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no PGN with clock times written: {written}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    runtime.shutdown().await;
    let _ = sim.stop();

    // After a restart the stored board moves rebuild the game on the board
    // side too (the board itself is gone now).
    let (_inject, events_rx) = mpsc::unbounded_channel();
    let runtime = Runtime::start(
        config,
        Some(dir.path().join("state")),
        Devices::Custom {
            backend: Box::new(NoDevices),
            events: events_rx,
        },
    )
    .unwrap();
    let handle = runtime.handle();
    let restored = state(&handle).await;
    assert_eq!(restored["eboard"]["ply"], 4, "{restored}");
    assert_eq!(restored["white"]["moves"], 2);
    let pgn = match handle.call("b1", Command::Pgn, ROOT).await.unwrap() {
        Reply::Text(text) => text,
        other => panic!("unexpected {other:?}"),
    };
    // The same moves with the same clock comments (the tags' clocks may
    // differ: the running side's time went on).
    let movetext = |pgn: &str| pgn.split_once("\n\n").map(|(_, moves)| moves.to_owned());
    assert_eq!(movetext(&pgn), movetext(&live_pgn), "{pgn}");
    assert!(pgn.contains("2... Nc6"), "{pgn}");
    runtime.shutdown().await;
}

/// A reload adds a board with an electronic board: its e-board task starts
/// with it, and its events reach the new board (not another one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_added_by_a_reload_follows_its_electronic_board() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dgt");
    let mut options = DgtSimOptions::new(SimScript::Pgn {
        text: "1. e4 e5 2. Nf3 Nc6 *".into(),
    });
    options.link = Some(link.clone());
    options.step = Duration::from_millis(20);
    options.move_pause = Duration::from_millis(60);
    options.start_delay = Duration::from_millis(300);
    let sim = run_sim(options).expect("simulated DGT board");

    let mut config = kit::runtime::config();
    let b1 = kit::runtime::board("b1", "600");
    config.boards.push(b1.clone());
    let (_inject, events_rx) = mpsc::unbounded_channel();
    let mut runtime = Runtime::start(
        config.clone(),
        Some(dir.path().join("state")),
        Devices::Custom {
            backend: Box::new(NoDevices),
            events: events_rx,
        },
    )
    .unwrap();
    let handle = runtime.handle();

    config.boards.push(BoardConfig {
        short_control: false,
        id: "b2".into(),
        eboard: Some(DeviceRef::Path(link.clone())),
        ..b1
    });
    assert_eq!(runtime.reload(config).await.added, ["b2"]);
    handle.call("b2", Command::Start, ROOT).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let b2 = match handle.call("b2", Command::State, ROOT).await.unwrap() {
            Reply::Json(json) => serde_json::from_str::<Value>(&json).unwrap(),
            other => panic!("unexpected {other:?}"),
        };
        if b2["eboard"]["connected"] == true && b2["eboard"]["ply"].as_u64() >= Some(2) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "b2 never followed its e-board: {b2}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // b1 has no e-board and saw none of it.
    let b1 = state(&handle).await;
    assert_eq!(b1["eboard"], Value::Null, "{b1}");
    runtime.shutdown().await;
    let _ = sim.stop();
}
