//! The runtime in-process: the real timing thread, store thread and control
//! loop, with a fake device backend in place of the serial devices. Device
//! events are injected with exact instants; every assertion is on exact
//! times, except the few upper bounds on how soon a frame goes out (loose).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::path::{Path, PathBuf};
use std::time::Duration;

use chessclock_protocol::{Button, Capabilities, DisplayState, Hello, Icons, Roles, Text};
use chessclockd::clock::monotonic_now_us;
use chessclockd::config::{BoardConfig, ButtonSide, Config, DeviceRef};
use chessclockd::control::{
    BoardEvent, Caller, Command, ControlError, ControlHandle, FindingKind, Reply, StateMode,
};
use chessclockd::devices::{DeviceCommand, DeviceEvent, DeviceKey, DeviceRole};
use chessclockd::engine::{Micros, Side, MS, SECOND};
use chessclockd::runtime::{DeviceBackend, Devices, Runtime, StateOptions};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

const TIMEOUT: Duration = Duration::from_secs(10);
const ROOT: Caller = Caller { uid: Some(0) };

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
    let mut config = Config::default();
    config.daemon.rt_priority = 0;
    config.daemon.mlock = false;
    config.boards.push(BoardConfig {
        id: "b1".into(),
        control: control.into(),
        buttons: Some(DeviceRef::Path("/dev/fake-buttons".into())),
        displays: vec![DeviceRef::Path("/dev/fake-display".into()).into()],
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: false,
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
    let (inject, events_rx) = mpsc::unbounded_channel();
    let (sent_tx, sent) = mpsc::unbounded_channel();
    let (hotplug_tx, hotplug) = mpsc::unbounded_channel();
    let runtime = Runtime::start(
        config,
        Some(dir.to_owned()),
        Devices::Custom {
            backend: Box::new(FakeDevices {
                sent: sent_tx,
                hotplug: hotplug_tx,
            }),
            events: events_rx,
        },
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

async fn wait_until(instant: Micros) {
    let now = monotonic_now_us();
    if instant > now {
        tokio::time::sleep(Duration::from_micros((instant - now) as u64)).await;
    }
}

fn white_panel(state: &DisplayState) -> &chessclock_protocol::Panel {
    &state.left
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_to_the_flag_with_exact_times() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("3"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;

    // White presses 1 s after the start, the frame arriving 50 ms late.
    wait_until(start + SECOND + 50 * MS).await;
    h.press(1, Button::Left, start + SECOND);
    let used = h
        .event(|e| match e {
            BoardEvent::Pressed {
                side: Side::White,
                used_ms,
                move_number,
                ..
            } => Some((*used_ms, *move_number)),
            _ => None,
        })
        .await;
    assert_eq!(used, (1000, 1));
    h.ack(1).await;

    // Black presses 0.5 s later.
    wait_until(start + 1_500 * MS).await;
    h.press(2, Button::Right, start + 1_500 * MS);
    let used = h
        .event(|e| match e {
            BoardEvent::Pressed {
                side: Side::Black,
                used_ms,
                ..
            } => Some(*used_ms),
            _ => None,
        })
        .await;
    assert_eq!(used, 500);

    // White had 2 s left: the flag falls at exactly start + 3.5 s.
    let flag_at = start + 3_500 * MS;
    let at_ms = h
        .event(|e| match e {
            BoardEvent::FlagFell {
                side: Side::White,
                at_ms,
                last_stage: true,
                ..
            } => Some(*at_ms),
            _ => None,
        })
        .await;
    assert_eq!(at_ms, flag_at / MS);

    // 0:00 appeared on White's panel no earlier than the flag, and soon after.
    let sent_at = h
        .sent(|(at, key, command)| match command {
            DeviceCommand::Display(shown)
                if key == &display() && white_panel(shown).time.as_str() == "0:00.0" =>
            {
                Some(*at)
            }
            _ => None,
        })
        .await;
    assert!(
        sent_at >= flag_at,
        "0:00 shown {} µs early",
        flag_at - sent_at
    );
    assert!(
        sent_at < flag_at + SECOND,
        "0:00 shown {} µs late",
        sent_at - flag_at
    );
    println!(
        "0:00 frame handed to the devices {} µs after the flag",
        sent_at - flag_at
    );

    let state = h.state().await;
    assert_eq!(state["white"]["flag_ms"], flag_at / MS);
    // Sudden death without increment: no freeze, the clock shows 0:00.
    assert_eq!(state["white"]["remaining_ms"], 0);
    assert_eq!(state["black"]["used_ms"], 500);
    assert_eq!(state["black"]["remaining_ms"], 2500);
    assert_eq!(state["flags"], serde_json::json!(["white"]));
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_frame_is_accounted_at_the_press_instant() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    let pressed = start + 300 * MS + 123;
    wait_until(pressed + 50 * MS).await;
    h.inject
        .send(DeviceEvent::Button {
            key: buttons(),
            event: 9,
            button: Button::Left,
            pressed: true,
            at: pressed,
            arrival: pressed + 50 * MS,
        })
        .unwrap();
    h.ack(9).await;
    let history = h.history().await;
    let press = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["do"] == "press")
        .unwrap()
        .clone();
    assert_eq!(
        press["t_us"].as_i64().unwrap() + h.state().await["game_epoch_us"].as_i64().unwrap(),
        pressed
    );
    assert_eq!(press["white_used_ms"], 300);
    assert_eq!(press["device"]["late_us"], 50 * MS);
    assert_eq!(press["device"]["serial"], "BTN1");
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_press_is_acknowledged_not_applied_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    wait_until(start + 10 * MS).await;
    h.press(5, Button::Left, start + 10 * MS);
    h.ack(5).await;
    h.press(5, Button::Left, start + 10 * MS);
    h.ack(5).await;
    let state = h.state().await;
    assert_eq!(state["white"]["moves"], 1);
    assert_eq!(state["running"], "black");
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_arbiter_button_pauses_and_calls_the_arbiter() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    wait_until(start + 20 * MS).await;
    h.press(3, Button::Arbiter, start + 20 * MS);
    h.event(|e| matches!(e, BoardEvent::ArbiterCalled { board } if board == "b1").then_some(()))
        .await;
    let shown = h
        .sent(|(_, key, command)| match command {
            DeviceCommand::Display(shown)
                if key == &display() && shown.text.as_str() == "ARBITER" =>
            {
                Some(*shown)
            }
            _ => None,
        })
        .await;
    assert!(shown.left.icons.contains(Icons::PAUSED));
    let state = h.state().await;
    assert_eq!(state["paused"], true);
    assert_eq!(state["arbiter_called"], true);
    assert_eq!(state["white"]["used_ms"], 20);
    h.call(Command::Resume).await.unwrap();
    assert_eq!(h.state().await["arbiter_called"], false);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplug_and_replug_keep_times_and_restore_the_display() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    wait_until(start + 100 * MS).await;
    h.press(1, Button::Left, start + 100 * MS);
    h.ack(1).await;
    h.inject
        .send(DeviceEvent::Disconnected {
            key: display(),
            reason: "unplugged".into(),
        })
        .unwrap();
    h.event(|e| match e {
        BoardEvent::DeviceChanged { link, .. } if !link.connected => Some(()),
        _ => None,
    })
    .await;
    let replugged = monotonic_now_us();
    h.inject
        .send(DeviceEvent::Connected {
            key: display(),
            hello: hello("DSP1", Roles::DISPLAY),
            path: "/dev/fake-display".into(),
        })
        .unwrap();
    let restored_at = h
        .sent(|(at, key, command)| {
            (key == &display() && matches!(command, DeviceCommand::Display(_)) && *at >= replugged)
                .then_some(*at)
        })
        .await;
    assert!(restored_at - replugged < SECOND);
    let state = h.state().await;
    assert_eq!(state["white"]["used_ms"], 100);
    assert_eq!(state["white"]["moves"], 1);
    assert_eq!(state["running"], "black");
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_frames_are_counted_and_change_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let h = launch(config("60"), dir.path());
    h.connect_all();
    h.call(Command::Pause).await.unwrap_err();
    let before = h.state().await;
    h.inject
        .send(DeviceEvent::Errors {
            key: buttons(),
            count: 7,
        })
        .unwrap();
    let mut after = h.state().await;
    assert_eq!(after["devices"][0]["errors"], 7);
    after["devices"][0]["errors"] = before["devices"][0]["errors"].clone();
    for key in ["t", "game_ms"] {
        after[key] = before[key].clone();
    }
    assert_eq!(after, before);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_rebuilds_the_game_paused_with_its_down_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    for (n, (button, offset)) in [
        (Button::Left, 100),
        (Button::Right, 250),
        (Button::Left, 400),
    ]
    .into_iter()
    .enumerate()
    {
        wait_until(start + offset * MS).await;
        h.press(n as u16 + 1, button, start + offset * MS);
        h.ack(n as u16 + 1).await;
    }
    let before = h.history().await;
    h.runtime.shutdown().await;
    let after_stop = monotonic_now_us();

    let h = launch(config("60"), dir.path());
    let state = h.state().await;
    assert_eq!(state["paused"], true);
    assert_eq!(state["running"], Value::Null);
    assert!(state["down_time_ms"].as_i64().is_some());
    assert_eq!(state["white"]["moves"], 2);
    assert_eq!(state["black"]["moves"], 1);
    assert_eq!(state["white"]["used_ms"], 250);
    // Black's clock ran from 400 ms until the daemon stopped.
    let black_used = state["black"]["used_ms"].as_i64().unwrap();
    let stopped = after_stop - start;
    assert!(
        (150..=150 + stopped / MS).contains(&black_used),
        "{black_used}"
    );
    let after = h.history().await;
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
    // Resuming continues from where it stopped.
    h.call(Command::Resume).await.unwrap();
    assert_eq!(h.state().await["running"], "black");
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
    assert_eq!(h.handle.health, health, "the control surfaces see it");
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
    let (_, start) = h.start_game().await;
    for n in 1..=4u16 {
        let at = start + i64::from(n) * 50 * MS;
        wait_until(at).await;
        h.press(
            n,
            if n % 2 == 1 {
                Button::Left
            } else {
                Button::Right
            },
            at,
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
async fn control_errors_are_typed_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let h = launch(config("60"), dir.path());
    let unknown = h
        .handle
        .call("nope", Command::State, ROOT)
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, ControlError::UnknownBoard(_)),
        "{unknown:?}"
    );
    let bad = h
        .call(Command::NewGame {
            control: "not a control".into(),
        })
        .await
        .unwrap_err();
    assert!(matches!(bad, ControlError::InvalidArgument(_)), "{bad:?}");
    let not_started = h
        .call(Command::Press { side: Side::White })
        .await
        .unwrap_err();
    assert!(
        matches!(not_started, ControlError::InvalidState(_)),
        "{not_started:?}"
    );
    let negative = h
        .call(Command::Adjust {
            side: Side::White,
            remaining_ms: Some(-5),
            moves: None,
            stage: None,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(negative, ControlError::InvalidArgument(_)),
        "{negative:?}"
    );
    assert_eq!(h.state().await["white"]["remaining_ms"], 60_000);
    h.call(Command::NewGame {
        control: "300+2".into(),
    })
    .await
    .unwrap();
    let state = h.state().await;
    assert_eq!(state["control"], "300+2");
    assert_eq!(state["white"]["remaining_ms"], 302_000);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reload_applies_only_to_boards_without_a_game() {
    let dir = tempfile::tempdir().unwrap();
    let h = launch(config("60"), dir.path());
    let mut reloaded = config("120");
    reloaded.boards[0].white_button = ButtonSide::Right;
    h.runtime.reload(reloaded.clone());
    let state = h.state().await;
    assert_eq!(state["control"], "120");
    assert_eq!(state["white"]["remaining_ms"], 120_000);

    h.call(Command::Start).await.unwrap();
    h.runtime.reload(config("300"));
    let state = h.state().await;
    assert_eq!(state["control"], "120", "a running game must not change");
    h.runtime.shutdown().await;
}

/// Collects what was sent to the devices until the ACK of `event`.
async fn sent_until_ack(h: &mut Harness, event: u16) -> Vec<DeviceCommand> {
    let mut seen = Vec::new();
    h.sent(|(_, _, command)| {
        seen.push(command.clone());
        (command == &DeviceCommand::Ack { event }).then_some(())
    })
    .await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beeps_only_when_configured() {
    for beep_on_control in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config("1/60:60");
        config.display.beep_on_control = beep_on_control;
        let mut h = launch(config, dir.path());
        h.inject
            .send(DeviceEvent::Connected {
                key: buttons(),
                hello: hello_with_buzzer("BTN1", Roles::BUTTONS, true),
                path: "/dev/fake-buttons".into(),
            })
            .unwrap();
        let (_, start) = h.start_game().await;
        wait_until(start + 10 * MS).await;
        // White's first press passes the first control (1 move).
        h.press(1, Button::Left, start + 10 * MS);
        let sent = sent_until_ack(&mut h, 1).await;
        let beeps = sent
            .iter()
            .filter(|c| matches!(c, DeviceCommand::Beep { .. }))
            .count();
        assert_eq!(beeps, usize::from(beep_on_control), "{sent:?}");
        let state = h.state().await;
        assert_eq!(state["white"]["stage"], 2);
        h.runtime.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_time_overrun_is_flagged_for_the_arbiter() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config("60");
    config.daemon.default_time_ms = 30;
    let mut h = launch(config, dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    // Asked at a known instant: the state is computed at the request.
    let early = h.state().await;
    if early["time_since_start_ms"].as_i64().unwrap() <= 30 {
        assert_eq!(early["default_time_overrun"], serde_json::json!([]));
    }
    wait_until(start + 31 * MS).await;
    let state = h.state().await;
    assert!(state["time_since_start_ms"].as_i64().unwrap() >= 31);
    assert_eq!(state["default_time_overrun"], serde_json::json!(["white"]));
    h.call(Command::Press { side: Side::White }).await.unwrap();
    let state = h.state().await;
    assert_eq!(state["default_time_overrun"], serde_json::json!(["black"]));
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
async fn white_sits_at_the_configured_button() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config("60");
    config.boards[0].white_button = ButtonSide::Right;
    let mut h = launch(config, dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    wait_until(start + 10 * MS).await;
    // The left button is Black's: not running, ignored (but acknowledged).
    h.press(1, Button::Left, start + 5 * MS);
    h.ack(1).await;
    assert_eq!(h.state().await["white"]["moves"], 0);
    h.press(2, Button::Right, start + 10 * MS);
    h.ack(2).await;
    let state = h.state().await;
    assert_eq!(state["white"]["moves"], 1);
    assert_eq!(state["white"]["used_ms"], 10);
    // White's time is on the right panel.
    let shown = h
        .sent(|(_, key, command)| match command {
            DeviceCommand::Display(shown)
                if key == &display() && shown.left.icons.contains(Icons::RUNNING) =>
            {
                Some(*shown)
            }
            _ => None,
        })
        .await;
    assert_eq!(shown.right.moves, 1);
    assert_eq!(shown.left.moves, 0);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beeps_in_the_last_seconds_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config("2");
    config.display.beep_last_seconds = 1;
    let mut h = launch(config, dir.path());
    h.inject
        .send(DeviceEvent::Connected {
            key: display(),
            hello: hello_with_buzzer("DSP1", Roles::DISPLAY, true),
            path: "/dev/fake-display".into(),
        })
        .unwrap();
    let (_, start) = h.start_game().await;
    let beeped_at = h
        .sent(|(at, key, command)| {
            (key == &display() && matches!(command, DeviceCommand::Beep { .. })).then_some(*at)
        })
        .await;
    // The last second starts when 1.000 s remain (shown as 0:01.0).
    assert!(
        beeped_at >= start + SECOND,
        "beeped {} µs early",
        start + SECOND - beeped_at
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_start_happens_at_its_wall_clock_instant() {
    let dir = tempfile::tempdir().unwrap();
    let h = launch(config("60"), dir.path());
    let wall = chessclockd::clock::wall_now_us();
    let mono = monotonic_now_us();
    let at = wall + 300 * MS;
    h.call(Command::StartAt {
        unix_time_us: at,
        force: false,
    })
    .await
    .unwrap();
    let state = h.state().await;
    assert_eq!(state["started"], false);
    let scheduled_ms = state["scheduled_start_ms"].as_i64().unwrap();
    assert!(
        (scheduled_ms - (mono + 300 * MS) / MS).abs() <= 2,
        "{scheduled_ms}"
    );
    let again = h
        .call(Command::StartAt {
            unix_time_us: wall - 10 * SECOND,
            force: false,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(again, ControlError::InvalidArgument(_)),
        "{again:?}"
    );

    wait_until(mono + 300 * MS + 5 * MS).await;
    let state = h.state().await;
    assert_eq!(state["started"], true);
    assert_eq!(state["running"], "white");
    let epoch = state["game_epoch_us"].as_i64().unwrap();
    let history = h.history().await;
    let start = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["do"] == "start")
        .unwrap()["t_us"]
        .as_i64()
        .unwrap()
        + epoch;
    assert_eq!(start / MS, scheduled_ms);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_after_restart_keeps_the_clock_running_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    wait_until(start + 30 * MS).await;
    h.press(1, Button::Left, start + 30 * MS);
    h.ack(1).await;
    h.runtime.shutdown().await;

    let mut resuming = config("60");
    resuming.daemon.resume_after_restart = true;
    let h = launch(resuming, dir.path());
    let state = h.state().await;
    assert_eq!(state["paused"], false);
    assert_eq!(state["running"], "black");
    assert_eq!(state["white"]["used_ms"], 30);
    let history = h.history().await;
    let last = history["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["do"], "restart", "{history}");
    assert!(last["down_us"].as_i64().unwrap() >= 0);
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hourglass_shows_the_waiting_side_growing() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("*60"), dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    // White thinks; Black's time grows by as much. Rounded up, Black shows
    // 1:02 once past 61 s: 1 µs after White reaches 0:59, not a second
    // later with White's next change.
    let (at, shown) = h
        .sent(|(at, key, command)| match command {
            DeviceCommand::Display(shown)
                if key == &display() && shown.right.time.as_str() == "1:02" =>
            {
                Some((*at, *shown))
            }
            _ => None,
        })
        .await;
    assert!(
        at > start + SECOND,
        "1:02 shown {} µs early",
        start + SECOND - at
    );
    assert!(
        at < start + 1_500 * MS,
        "1:02 shown {} µs late",
        at - start - SECOND
    );
    assert_eq!(shown.left.time.as_str(), "0:59");
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byo_yomi_period_shows_as_soon_as_it_begins() {
    use chessclockd::config::{ControlSpec, ControlTable, SideControlSpec, SpecialControl};
    let dir = tempfile::tempdir().unwrap();
    let mut config = config("byo");
    config.presets.insert(
        "byo".into(),
        ControlSpec::Table(ControlTable {
            control: Some(SideControlSpec::Special(SpecialControl::ByoYomi {
                main: 1,
                periods: 3,
                period: 1,
            })),
            ..ControlTable::default()
        }),
    );
    let mut h = launch(config, dir.path());
    h.connect_all();
    let (_, start) = h.start_game().await;
    // Main time ends at start + 1 s; the first period's 0:01.0 shows then.
    let at = h
        .sent(|(at, key, command)| match command {
            DeviceCommand::Display(shown)
                if key == &display()
                    && *at >= start + SECOND
                    && shown.left.time.as_str() == "0:01.0" =>
            {
                Some(*at)
            }
            _ => None,
        })
        .await;
    println!(
        "byo-yomi period shown {} µs after it began",
        at - start - SECOND
    );
    assert!(
        at < start + SECOND + 90 * MS,
        "shown {} µs late",
        at - start - SECOND
    );
    h.runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blacks_press_starts_whites_clock_only_when_configured() {
    // Default (FIDE Art. 6.6: the arbiter starts the clocks): a press before
    // the start changes nothing.
    let dir = tempfile::tempdir().unwrap();
    let mut h = launch(config("60"), dir.path());
    h.connect_all();
    h.press(1, Button::Right, monotonic_now_us());
    h.ack(1).await;
    let state = h.state().await;
    assert_eq!(state["running"], Value::Null);
    h.runtime.shutdown().await;

    // Club practice, on for the demo: Black's press starts White's clock,
    // and a press by White before the start still changes nothing.
    let dir = tempfile::tempdir().unwrap();
    let mut config = config("60");
    config.boards[0].start_on_black_press = true;
    let mut h = launch(config, dir.path());
    h.connect_all();
    h.press(1, Button::Left, monotonic_now_us());
    h.ack(1).await;
    assert_eq!(h.state().await["running"], Value::Null);
    h.press(2, Button::Right, monotonic_now_us());
    h.ack(2).await;
    let state = h.state().await;
    assert_eq!(state["running"], "white");
    assert_eq!(state["black"]["moves"], 0);
    // Once started, Black's button is an ordinary press again (ignored:
    // White's clock runs).
    h.press(3, Button::Right, monotonic_now_us());
    h.ack(3).await;
    let state = h.state().await;
    assert_eq!(state["running"], "white");
    assert_eq!(state["black"]["moves"], 0);
    h.runtime.shutdown().await;
}
