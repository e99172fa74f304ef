//! The runtime's shell in-process: the real timing thread, store thread and
//! control loop around the board cores, with a fake device backend in place
//! of the serial devices. What a board decides is tested in the board
//! core's transcripts (core/src/board/tests); these check the wiring: a
//! device's event reaches its board, records reach the store before
//! replies and ACKs leave, reads are answered from the views, a restart
//! reads the store back. Device events carry exact instants (in the past:
//! a press is placed at its instant however late it arrives), so nothing
//! here sleeps; it only waits for what it expects, with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::path::{Path, PathBuf};
use std::time::Duration;

use chessclock_host::clock::monotonic_now_us;
use chessclock_protocol::{Button, Capabilities, Hello, Roles, Text};
use chessclockd::config::{BoardConfig, Config, DeviceRef};
use chessclockd::control::{
    BoardEvent, Caller, Command, ControlError, ControlHandle, FindingKind, Reply, StateMode,
};
use chessclockd::devices::{DeviceCommand, DeviceEvent, DeviceKey, DeviceRole};
use chessclockd::engine::{Micros, Side, MS, SECOND};
use chessclockd::runtime::time::{SteppedClock, TimeSource};
use chessclockd::runtime::{DeviceBackend, Devices, Runtime, StateOptions};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

const TIMEOUT: Duration = Duration::from_secs(10);
const ROOT: Caller = Caller::uid(0);

/// What the runtime sent to a device, and when (monotonic µs).
type Sent = (Micros, DeviceKey, DeviceCommand);

struct FakeDevices {
    sent: mpsc::UnboundedSender<Sent>,
    hotplug: mpsc::UnboundedSender<String>,
}

impl DeviceBackend for FakeDevices {
    fn send(&self, key: &DeviceKey, command: DeviceCommand) {
        let _ = self.sent.send((monotonic_now_us(), key.clone(), command));
    }
    fn device_added(&self, path: &Path) {
        let _ = self.hotplug.send(format!("added {}", path.display()));
    }
    fn device_removed(&self, path: &Path) {
        let _ = self.hotplug.send(format!("removed {}", path.display()));
    }
    fn board_added(&mut self, board: &BoardConfig) {
        let _ = self.hotplug.send(format!("board {}", board.id));
    }
}

struct Harness {
    runtime: Runtime,
    handle: ControlHandle,
    inject: mpsc::UnboundedSender<DeviceEvent>,
    sent: mpsc::UnboundedReceiver<Sent>,
    hotplug: mpsc::UnboundedReceiver<String>,
    events: broadcast::Receiver<BoardEvent>,
}

fn config(control: &str) -> Config {
    let mut config = kit::runtime::config();
    config.boards.push(BoardConfig {
        short_control: false,
        buttons: Some(DeviceRef::Path("/dev/fake-buttons".into())),
        displays: vec![DeviceRef::Path("/dev/fake-display".into()).into()],
        ..kit::runtime::board("b1", control)
    });
    config
}

fn buttons() -> DeviceKey {
    DeviceKey {
        board: "b1".into(),
        role: DeviceRole::Buttons,
    }
}

fn display() -> DeviceKey {
    DeviceKey {
        board: "b1".into(),
        role: DeviceRole::Display(0),
    }
}

fn hello(serial: &str, roles: Roles) -> Hello {
    hello_with_buzzer(serial, roles, false)
}

fn hello_with_buzzer(serial: &str, roles: Roles, buzzer: bool) -> Hello {
    Hello {
        protocol_version: 1,
        roles,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            text_chars: 16,
            arbiter_button: true,
            buzzer,
            ..Capabilities::default()
        },
        vendor: Text::truncated("test"),
        model: Text::truncated("fake"),
        serial: Text::truncated(serial),
        firmware: Text::truncated("1"),
        boot_id: 77,
        first_unacked_event: 0,
    }
}

fn launch(config: Config, dir: &Path) -> Harness {
    launch_timed(config, dir, TimeSource::System)
}

/// [`launch`] on `time` (a stepped clock: the test moves the time).
fn launch_timed(config: Config, dir: &Path, time: TimeSource) -> Harness {
    let (inject, events_rx) = mpsc::unbounded_channel();
    let (sent_tx, sent) = mpsc::unbounded_channel();
    let (hotplug_tx, hotplug) = mpsc::unbounded_channel();
    let runtime = Runtime::start_timed(
        config,
        StateOptions {
            dir: Some(dir.to_owned()),
            no_state: false,
            lock: None,
        },
        Devices::Custom {
            backend: Box::new(FakeDevices {
                sent: sent_tx,
                hotplug: hotplug_tx,
            }),
            events: events_rx,
        },
        time,
    )
    .expect("runtime starts");
    let handle = runtime.handle();
    let events = handle.events.subscribe();
    Harness {
        runtime,
        handle,
        inject,
        sent,
        hotplug,
        events,
    }
}

impl Harness {
    async fn call(&self, command: Command) -> Result<Reply, ControlError> {
        tokio::time::timeout(TIMEOUT, self.handle.call("b1", command, ROOT))
            .await
            .expect("reply in time")
    }

    async fn state(&self) -> Value {
        match self.call(Command::State).await.unwrap() {
            Reply::Json(json) => serde_json::from_str(&json).unwrap(),
            other => panic!("unexpected {other:?}"),
        }
    }

    async fn history(&self) -> Value {
        match self.call(Command::History).await.unwrap() {
            Reply::Json(json) => serde_json::from_str(&json).unwrap(),
            other => panic!("unexpected {other:?}"),
        }
    }

    fn connect_all(&self) {
        self.inject
            .send(DeviceEvent::Connected {
                key: buttons(),
                hello: hello("BTN1", Roles::BUTTONS),
                path: "/dev/fake-buttons".into(),
            })
            .unwrap();
        self.inject
            .send(DeviceEvent::Connected {
                key: display(),
                hello: hello("DSP1", Roles::DISPLAY),
                path: "/dev/fake-display".into(),
            })
            .unwrap();
    }

    fn press(&self, event: u16, button: Button, at: Micros) {
        self.inject
            .send(DeviceEvent::Button {
                key: buttons(),
                serial: "BTN1".into(),
                event,
                button,
                pressed: true,
                at,
                arrival: monotonic_now_us(),
            })
            .unwrap();
    }

    /// Waits for the first board event matching `want`.
    async fn event<T>(&mut self, mut want: impl FnMut(&BoardEvent) -> Option<T>) -> T {
        tokio::time::timeout(TIMEOUT, async {
            loop {
                match self.events.recv().await {
                    Ok(event) => {
                        if let Some(found) = want(&event) {
                            return found;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(error) => panic!("event channel: {error}"),
                }
            }
        })
        .await
        .expect("event in time")
    }

    /// Waits for the first device command matching `want`.
    async fn sent<T>(&mut self, mut want: impl FnMut(&Sent) -> Option<T>) -> T {
        tokio::time::timeout(TIMEOUT, async {
            loop {
                let sent = self.sent.recv().await.expect("backend open");
                if let Some(found) = want(&sent) {
                    return found;
                }
            }
        })
        .await
        .expect("device command in time")
    }

    async fn ack(&mut self, want: u16) {
        self.sent(|(_, key, command)| {
            (key == &buttons() && command == &DeviceCommand::Ack { event: want }).then_some(())
        })
        .await
    }

    /// The game's epoch and the start instant (monotonic µs).
    async fn start_game(&mut self) -> (Micros, Micros) {
        self.call(Command::Start).await.unwrap();
        let state = self.state().await;
        let epoch = state["game_epoch_us"].as_i64().unwrap();
        let history = self.history().await;
        let start = history["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["do"] == "start")
            .expect("start recorded")["t_us"]
            .as_i64()
            .unwrap();
        (epoch, epoch + start)
    }
}

/// The whole shell (timing thread, store, control loop) on a stepped clock:
/// a minute of White's time passes in two steps and no real time; the
/// flag falls at the step that reaches its instant, not a microsecond
/// before, and every instant below is the clock's, written down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_stepped_clock_the_flag_falls_at_the_step_that_reaches_it() {
    const T0: Micros = 1_000 * SECOND;
    const WALL0: i64 = 1_796_061_600_000_000;
    let dir = tempfile::tempdir().unwrap();
    let clock = SteppedClock::new(T0, WALL0);
    let mut h = launch_timed(config("60"), dir.path(), TimeSource::Stepped(clock.clone()));
    h.connect_all();
    let (epoch, start) = h.start_game().await;
    assert_eq!(start, T0, "the start is at the clock's instant");

    // One microsecond before White's flag: no flag, one millisecond shown
    // (a remaining time is rounded up).
    clock.advance_to(start + 60 * SECOND - 1);
    let state = h.state().await;
    assert_eq!(state["running"], "white");
    assert_eq!(state["white"]["remaining_ms"], 1);
    assert_eq!(state["flags"], serde_json::json!([]));
    while let Ok(event) = h.events.try_recv() {
        assert!(
            !matches!(event, BoardEvent::FlagFell { .. }),
            "a flag before its instant: {event:?}"
        );
    }

    // The step that reaches the flag's instant.
    clock.advance_us(1);
    let side = h
        .event(|e| match e {
            BoardEvent::FlagFell { side, .. } => Some(*side),
            _ => None,
        })
        .await;
    assert_eq!(side, Side::White);
    let state = h.state().await;
    assert_eq!(state["flags"], serde_json::json!(["white"]));
    assert_eq!(state["white"]["remaining_ms"], 0);
    // On the daemon's monotonic milliseconds, as every instant of the view.
    assert_eq!(state["white"]["flag_ms"], (start + 60 * SECOND) / MS);
    assert!(epoch <= start);
    h.runtime.shutdown().await;
}

/// Issue 28 item 5: a scheduled start kept its monotonic deadline when the
/// wall clock was stepped (a +10 s step made it start 10 s late by the
/// host's clock). On a stepped clock whose wall reading alone is stepped
/// by +10 s, as a clock set does, the start comes when the wall clock
/// reaches it: 10 s earlier on the monotonic clock, not a step later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_start_follows_a_step_of_the_wall_clock() {
    const T0: Micros = 1_000 * SECOND;
    const WALL0: i64 = 1_796_061_600_000_000;
    let dir = tempfile::tempdir().unwrap();
    let clock = SteppedClock::new(T0, WALL0);
    let h = launch_timed(config("60"), dir.path(), TimeSource::Stepped(clock.clone()));
    h.connect_all();
    h.call(Command::StartAt {
        unix_time_us: WALL0 + 60 * SECOND,
        force: true,
    })
    .await
    .unwrap();
    let state = h.state().await;
    assert_eq!(state["scheduled_start_ms"], (T0 + 60 * SECOND) / MS);

    clock.advance_us(20 * SECOND);
    clock.step_wall_us(10 * SECOND);
    // The runtime hears the set at once: the start is now due at 50 s.
    let due = (T0 + 50 * SECOND) / MS;
    tokio::time::timeout(TIMEOUT, async {
        while h.state().await["scheduled_start_ms"] != due {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the scheduled start follows the wall clock");
    clock.advance_to(T0 + 50 * SECOND - 1);
    assert_eq!(h.state().await["started"], false, "not before its instant");
    clock.advance_us(1);
    tokio::time::timeout(TIMEOUT, async {
        while h.state().await["started"] != true {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the game starts at the step that reaches its instant");
    let (epoch, start) = {
        let state = h.state().await;
        let history = h.history().await;
        let epoch = state["game_epoch_us"].as_i64().unwrap();
        let start = history["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["do"] == "start")
            .expect("start recorded")["t_us"]
            .as_i64()
            .unwrap();
        (epoch, start)
    };
    assert_eq!(
        epoch + start,
        T0 + 50 * SECOND,
        "when the wall clock said 60 s"
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_reaches_its_board_and_is_acked_after_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    // The unit's first event, made now: accounted at its own instant.
    let pressed = monotonic_now_us();
    h.press(0, Button::Left, pressed);
    h.ack(0).await;
    let state = h.state().await;
    assert_eq!(state["white"]["moves"], 1);
    assert_eq!(state["white"]["used_ms"], (pressed - start) / MS);
    assert_eq!(state["running"], "black");
    let history = h.history().await;
    let press = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["do"] == "press")
        .expect("the press is in the history once committed")
        .clone();
    assert_eq!(press["side"], "white");
    assert_eq!(press["device"]["serial"], "BTN1");
    h.event(|e| matches!(e, BoardEvent::Pressed { move_number: 1, .. }).then_some(()))
        .await;
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_reads_the_store_back_and_comes_back_paused() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (epoch, _) = h.start_game().await;
    for (n, button) in [Button::Left, Button::Right, Button::Left]
        .into_iter()
        .enumerate()
    {
        h.press(n as u16, button, monotonic_now_us());
        h.ack(n as u16).await;
    }
    let before = h.history().await;
    let last_press = epoch
        + before["events"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|e| e["do"] == "press")
            .unwrap()["t_us"]
            .as_i64()
            .unwrap();
    let white_used = h.state().await["white"]["used_ms"].clone();
    h.runtime.shutdown().await;
    let stopped = monotonic_now_us();

    let h = launch(config("60"), dir.path());
    let restarted = monotonic_now_us();
    let state = h.state().await;
    assert_eq!(state["paused"], true);
    assert_eq!(state["running"], Value::Null);
    assert_eq!(state["white"]["moves"], 2);
    assert_eq!(state["black"]["moves"], 1);
    assert_eq!(state["white"]["used_ms"], white_used);
    assert_eq!(state["restart"]["same_boot"], true);
    // Same boot: Black was charged from White's last press up to the
    // restart's pause, the outage included.
    let after = h.history().await;
    let rows = after["events"].as_array().unwrap();
    let last = rows.iter().rev().find(|e| e["do"] == "press").unwrap();
    let pause = rows.iter().rev().find(|e| e["do"] == "pause").unwrap();
    let pause_at = epoch + pause["t_us"].as_i64().unwrap();
    assert!(
        stopped <= pause_at && pause_at <= restarted,
        "the pause is at the restart"
    );
    let black_used = state["black"]["used_ms"].as_i64().unwrap();
    let expected = last["black_used_ms"].as_i64().unwrap() + (pause_at - last_press) / MS;
    assert!(
        (expected - 1..=expected + 1).contains(&black_used),
        "{black_used} ms, expected {expected}: {state}"
    );

    let presses = |history: &Value| -> Vec<Value> {
        history["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["do"] == "press")
            .map(|e| e["t_us"].clone())
            .collect()
    };
    assert_eq!(presses(&after), presses(&before));
    let kinds: Vec<&str> = after["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["do"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[kinds.len() - 2..], ["restart", "pause"]);
    h.call(Command::Resume).await.unwrap();
    assert_eq!(h.state().await["running"], "black");
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hotplug_requests_reach_the_devices() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    for command in [
        Command::DeviceAdded {
            path: "/dev/ttyACM7".into(),
        },
        Command::DeviceRemoved {
            path: "/dev/ttyACM7".into(),
        },
    ] {
        h.call(command).await.unwrap();
    }
    assert_eq!(h.hotplug.recv().await.unwrap(), "added /dev/ttyACM7");
    assert_eq!(h.hotplug.recv().await.unwrap(), "removed /dev/ttyACM7");
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_typed_errors_and_unknown_boards_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let h = launch(config("60"), dir.path());
    assert!(matches!(
        h.call(Command::Pause).await,
        Err(ControlError::InvalidState(_))
    ));
    assert!(matches!(
        h.call(Command::NewGame {
            control: "40/".into()
        })
        .await,
        Err(ControlError::InvalidArgument(_))
    ));
    let unknown = h
        .handle
        .call("nope", Command::State, ROOT)
        .await
        .unwrap_err();
    assert_eq!(
        unknown,
        ControlError::UnknownBoard("no board `nope`; this daemon runs: b1".into())
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_database_is_kept_aside_and_the_clock_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chessclockd.sqlite3"), vec![0xA5; 8192]).unwrap();
    let mut h = launch(config("60"), dir.path());
    let state = h.state().await;
    assert_eq!(state["started"], false);
    assert_eq!(state["white"]["remaining_ms"], 60_000);
    h.call(Command::Start).await.unwrap();
    let health = h.runtime.health();
    assert!(health.is_damaged(), "{health:?}");
    assert_eq!(health.findings[0].kind, FindingKind::NotADatabase);
    assert_eq!(h.handle.health.get(), health, "the control surfaces see it");
    let kept = PathBuf::from(health.evidence.clone().unwrap());
    assert_eq!(
        std::fs::read(kept.join("chessclockd.sqlite3")).unwrap(),
        vec![0xA5; 8192]
    );
    // The displays say so (the store's hook), once a unit is linked.
    h.connect_all();
    h.sent(|(_, key, command)| match command {
        DeviceCommand::Display(state)
            if key == &display() && state.text.as_str() == "STATE DAMAGED" =>
        {
            Some(())
        }
        _ => None,
    })
    .await;
    h.runtime.shutdown().await;
}

/// Item 3: a state directory that cannot be used stops the start with a
/// clear error, unless the daemon was told to run without crash safety.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_state_directory_stops_the_start_unless_crash_safety_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::write(&state, b"a file where the directory should be").unwrap();
    let (sent, _sent_rx) = mpsc::unbounded_channel();
    let (hotplug, _hotplug_rx) = mpsc::unbounded_channel();
    let devices = || Devices::Custom {
        backend: Box::new(FakeDevices {
            sent: sent.clone(),
            hotplug: hotplug.clone(),
        }),
        events: mpsc::unbounded_channel().1,
    };
    let error = Runtime::start(config("60"), Some(state.clone()), devices())
        .err()
        .expect("refused");
    let text = format!("{error:#}");
    assert!(text.contains(&state.display().to_string()), "{text}");
    assert!(text.contains("crash-safety = false"), "{text}");
    let mut relaxed = config("60");
    relaxed.daemon.crash_safety = false;
    let runtime = Runtime::start(relaxed, Some(state.clone()), devices()).unwrap();
    let health = runtime.health();
    assert_eq!(health.mode, StateMode::Memory);
    assert_eq!(health.findings[0].kind, FindingKind::NoCrashSafety);
    assert!(
        health.findings[0]
            .message
            .contains("cannot create the state directory"),
        "{health:?}"
    );
    runtime.shutdown().await;
    // --no-state: memory without looking at the directory at all.
    let runtime = Runtime::start_with(
        config("60"),
        StateOptions {
            dir: Some(state),
            no_state: true,
            lock: None,
        },
        devices(),
    )
    .unwrap();
    assert_eq!(runtime.health().mode, StateMode::Memory);
    runtime.shutdown().await;
}

/// Item 2: one runtime per state directory; the second one's error names the
/// first one's PID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_runtime_on_one_state_directory_is_refused_naming_the_pid() {
    let dir = tempfile::tempdir().unwrap();
    let first = launch(config("60"), dir.path());
    let (_inject, events) = mpsc::unbounded_channel();
    let (sent, _sent_rx) = mpsc::unbounded_channel();
    let (hotplug, _hotplug_rx) = mpsc::unbounded_channel();
    let second = Runtime::start(
        config("60"),
        Some(dir.path().to_owned()),
        Devices::Custom {
            backend: Box::new(FakeDevices { sent, hotplug }),
            events,
        },
    );
    let text = format!("{:#}", second.err().expect("refused"));
    assert!(
        text.contains(&format!("PID {}", std::process::id())),
        "{text}"
    );
    assert!(text.contains("in use by another chessclockd"), "{text}");
    // The first one is untouched and the directory is free once it stops.
    assert_eq!(first.state().await["started"], false);
    first.runtime.shutdown().await;
    let again = launch(config("60"), dir.path());
    again.runtime.shutdown().await;
}

/// Item 3: a game whose stored events were found damaged comes back paused
/// and marked, even with `resume-after-restart`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_game_comes_back_paused_even_when_resuming_is_configured() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    h.start_game().await;
    for n in 0..4u16 {
        h.press(
            n,
            if n % 2 == 0 {
                Button::Left
            } else {
                Button::Right
            },
            monotonic_now_us(),
        );
        h.ack(n).await;
    }
    h.runtime.shutdown().await;
    {
        let conn = rusqlite::Connection::open(dir.path().join("chessclockd.sqlite3")).unwrap();
        conn.execute("DELETE FROM events WHERE seq = 3", [])
            .unwrap();
    }
    let mut resuming = config("60");
    resuming.daemon.resume_after_restart = true;
    let h = launch(resuming, dir.path());
    let state = h.state().await;
    assert_eq!(state["paused"], true, "{state}");
    let health = h.runtime.health();
    assert!(
        health
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::SequenceBroken && f.board.as_deref() == Some("b1")),
        "{health:?}"
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_adds_a_board_that_plays_and_takes_back_its_stored_game() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    h.start_game().await;

    let mut new = config("180+2");
    new.boards.push(BoardConfig {
        short_control: false,
        id: "b2".into(),
        buttons: Some(DeviceRef::Path("/dev/fake-buttons-2".into())),
        displays: vec![DeviceRef::Path("/dev/fake-display-2".into()).into()],
        control: "300+3".into(),
        ..new.boards[0].clone()
    });
    let reloaded = h.runtime.reload(new).await;
    assert_eq!(reloaded.added, ["b2"]);
    // Every handle lists it, in order, once `reload` returns.
    assert_eq!(h.handle.boards.list(), ["b1", "b2"]);
    assert_eq!(h.runtime.config().boards.len(), 2);
    // The backend was told to drive its devices.
    let told = tokio::time::timeout(TIMEOUT, h.hotplug.recv())
        .await
        .unwrap();
    assert_eq!(told.as_deref(), Some("board b2"));
    // It answers and plays: a new game of its control, started.
    let call = |command| h.handle.call("b2", command, ROOT);
    tokio::time::timeout(TIMEOUT, call(Command::Start))
        .await
        .unwrap()
        .unwrap();
    let state = match tokio::time::timeout(TIMEOUT, h.handle.call("b2", Command::State, ROOT))
        .await
        .unwrap()
        .unwrap()
    {
        Reply::Json(json) => serde_json::from_str::<Value>(&json).unwrap(),
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(state["control"], "300+3");
    assert_eq!(state["running"], "white", "{state}");
    // Its display, once linked, is drawn.
    let display2 = DeviceKey {
        board: "b2".into(),
        role: DeviceRole::Display(0),
    };
    h.inject
        .send(DeviceEvent::Connected {
            key: display2.clone(),
            hello: hello("DSP2", Roles::DISPLAY),
            path: "/dev/fake-display-2".into(),
        })
        .unwrap();
    h.sent(|(_, key, _)| (key == &display2).then_some(())).await;
    // b1's game in progress kept its control.
    assert_eq!(h.state().await["control"], "60");
    h.runtime.shutdown().await;

    // A restart without b2, then a reload that names it again: its game
    // comes back from the store, paused, as a restart would bring it.
    let mut h = launch(config("180+2"), dir.path());
    let mut again = config("180+2");
    again.boards.push(BoardConfig {
        short_control: false,
        id: "b2".into(),
        buttons: None,
        displays: Vec::new(),
        control: "fide-rapid".into(),
        ..again.boards[0].clone()
    });
    assert_eq!(h.runtime.reload(again).await.added, ["b2"]);
    let state = match tokio::time::timeout(TIMEOUT, h.handle.call("b2", Command::State, ROOT))
        .await
        .unwrap()
        .unwrap()
    {
        Reply::Json(json) => serde_json::from_str::<Value>(&json).unwrap(),
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(state["control"], "300+3", "{state}");
    assert_eq!(state["started"], true, "{state}");
    assert_eq!(state["paused"], true, "{state}");
    tokio::time::timeout(TIMEOUT, h.handle.call("b2", Command::Resume, ROOT))
        .await
        .unwrap()
        .unwrap();
    h.runtime.shutdown().await;
}
