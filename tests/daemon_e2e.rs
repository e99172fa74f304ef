//! End to end: the real `chessclockd` binary with simulated button and
//! display units on PTYs (the `sim` library, in this process), a private
//! dbus-daemon, and the D-Bus client proxies. Serialised (PTYs, buses);
//! every wait has a deadline and waits for a condition, never a guess.
//!
//! Press instants are compared with the simulator's press instants (both on
//! CLOCK_MONOTONIC): within 1 ms, however late the frame arrived.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use chessclock_protocol::{Button, Icons};
use chessclock_sim_units::{Direction, LinkState, SimHandle, SimUnits};
use chessclockd::engine::{Micros, MS, SECOND};
use serde_json::Value;

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const WAIT: Duration = Duration::from_secs(10);

/// Everything one test needs.
struct Setup {
    dir: tempfile::TempDir,
    bus: PrivateBus,
    units: Option<SimUnits>,
    sim: SimHandle,
    config: PathBuf,
}

impl Setup {
    fn new(control: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let bus = PrivateBus::session_in(dir.path());
        let units = kit::daemon::demo_units(dir.path());
        let sim = units.handle();
        let state = dir.path().join("state");
        let config = dir.path().join("chessclockd.toml");
        std::fs::write(
            &config,
            format!(
                r#"{daemon}
[[board]]
id = "b1"
control = "{control}"
buttons = "{buttons}"
displays = ["{display}"]
"#,
                daemon = kit::daemon::daemon_table(&state),
                buttons = units.path("buttons").unwrap().display(),
                display = units.path("display").unwrap().display(),
            ),
        )
        .unwrap();
        Setup {
            dir,
            bus,
            units: Some(units),
            sim,
            config,
        }
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn daemon(&self, name: &str) -> Daemon {
        Daemon::spawn(&self.config, &self.bus, self.dir.path().join(name))
    }

    /// Waits (blocking) for a unit's state.
    fn wait_unit(
        &self,
        unit: &str,
        timeout: Duration,
        ready: impl Fn(&chessclock_sim_units::UnitSnapshot) -> bool + Send + Sync + 'static,
    ) -> chessclock_sim_units::UnitSnapshot {
        let sim = self.sim.clone();
        let unit = unit.to_owned();
        std::thread::spawn(move || sim.wait_until(&unit, timeout, ready))
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Presses now and returns the press instant; waits for its ACK
    /// (committed to the store).
    fn press(&self, button: Button) -> Micros {
        let at = self
            .sim
            .press_returning_instant(Some("buttons"), button)
            .unwrap();
        self.wait_unit("buttons", WAIT, |s| s.unacked == 0);
        at
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(units) = self.units.take() {
            units.shutdown();
        }
    }
}

/// `(monotonic instant, event)` of every history event of kind `kind`.
fn events(history: &Value, epoch: Micros, kind: &str) -> Vec<(Micros, Value)> {
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["do"] == kind)
        .map(|e| (e["t_us"].as_i64().unwrap() + epoch, e.clone()))
        .collect()
}

fn within_1ms(recorded: Micros, pressed: Micros) {
    assert!(
        (recorded - pressed).abs() <= MS,
        "press recorded at {recorded} µs, pressed at {pressed} µs ({} µs apart)",
        recorded - pressed
    );
}

/// The device-to-host time mapping takes the smallest delay among the
/// heartbeats seen (one every 250 ms): give it a couple of seconds of them,
/// so one slow wake-up of a loaded machine does not set the offset.
async fn let_clock_sync_settle() {
    tokio::time::sleep(Duration::from_secs(2)).await;
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_from_start_to_flag_with_exact_times() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("3"));
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let_clock_sync_settle().await;

    client.board.start().await.unwrap();
    let state = client.state().await;
    let epoch = state["game_epoch_us"].as_i64().unwrap();
    let start = events(&client.history().await, epoch, "start")[0].0;

    tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_millis(700)).await;
    let s = setup.clone();
    let white_pressed = blocking(move || s.press(Button::Left)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = setup.clone();
    let black_pressed = blocking(move || s.press(Button::Right)).await;

    let history = client.history().await;
    let presses = events(&history, epoch, "press");
    assert_eq!(presses.len(), 2, "{history}");
    within_1ms(presses[0].0, white_pressed);
    within_1ms(presses[1].0, black_pressed);
    assert_eq!(presses[0].1["side"], "white");
    assert_eq!(presses[1].1["side"], "black");

    // White has 3 s minus what it used; its flag falls exactly then.
    let white_used = presses[0].0 - start;
    let flag_at = presses[1].0 + 3 * SECOND - white_used;
    let state = client
        .wait_state(&daemon, "white's flag", |s| {
            s["flags"] == serde_json::json!(["white"])
        })
        .await;
    assert_eq!(state["white"]["flag_ms"], flag_at.div_euclid(MS));
    assert_eq!(state["white"]["moves"], 1);
    assert_eq!(state["black"]["moves"], 1);
    assert_eq!(
        state["black"]["used_ms"],
        (presses[1].0 - presses[0].0).div_euclid(MS)
    );

    // The display shows White's 0:00 with the first-flag mark.
    let shown = setup.wait_unit("display", WAIT, |s| {
        s.display
            .is_some_and(|d| d.left.time.as_str() == "0:00.0" && d.left.icons.contains(Icons::FLAG))
    });
    let shown = shown.display.unwrap();
    assert!(shown.left.icons.contains(Icons::FIRST_FLAG));
    assert_eq!(shown.left.moves, 1);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_delayed_50_ms_is_accounted_at_its_true_instant() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60"));
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let_clock_sync_settle().await;
    client.board.start().await.unwrap();
    let epoch = client.state().await["game_epoch_us"].as_i64().unwrap();

    setup
        .sim
        .delay("buttons", Duration::from_millis(50), Duration::from_secs(3))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let s = setup.clone();
    let pressed = blocking(move || s.press(Button::Left)).await;
    let history = client.history().await;
    let presses = events(&history, epoch, "press");
    assert_eq!(presses.len(), 1);
    within_1ms(presses[0].0, pressed);
    let late = presses[0].1["device"]["late_us"].as_i64().unwrap();
    assert!(late >= 45 * MS, "the frame was only {late} µs late");
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplug_and_replug_mid_game() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60"));
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    client.board.start().await.unwrap();
    let s = setup.clone();
    blocking(move || s.press(Button::Left)).await;
    client.board.pause().await.unwrap();
    let before = client.state().await;

    for unit in ["display", "buttons"] {
        setup.sim.unplug(unit, None).unwrap();
        setup.wait_unit(unit, WAIT, |s| !s.plugged);
    }
    client
        .wait_state(&daemon, "devices seen gone", |s| {
            s["devices"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["connected"] == false)
        })
        .await;
    for unit in ["display", "buttons"] {
        setup.sim.replug(unit).unwrap();
    }
    let replugged = Instant::now();
    // Restored within 1 s of the replug: the paused times on the display.
    let shown = setup.wait_unit("display", Duration::from_secs(1), |s| {
        s.plugged
            && s.link_state == LinkState::Up
            && s.display.is_some_and(|d| d.text.as_str() == "PAUSE")
    });
    assert!(replugged.elapsed() <= Duration::from_secs(1));
    let shown = shown.display.unwrap();
    assert!(shown.left.icons.contains(Icons::PAUSED));
    assert_eq!(shown.left.moves, 1);

    let after = client
        .wait_state(&daemon, "devices back", devices_linked)
        .await;
    for side in ["white", "black"] {
        assert_eq!(after[side], before[side], "{side}'s clock changed");
    }
    client.board.resume().await.unwrap();
    assert_eq!(client.state().await["running"], "black");
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_bytes_are_counted_and_change_nothing_else() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60"));
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    client.board.start().await.unwrap();
    let s = setup.clone();
    blocking(move || s.press(Button::Left)).await;
    client.board.pause().await.unwrap();
    let before = client.state().await;

    setup
        .sim
        .corrupt(
            "buttons",
            0.02,
            Direction::ToHost,
            Duration::from_millis(800),
        )
        .unwrap();
    let after = client
        .wait_state(&daemon, "refused frames counted", |s| {
            s["devices"][0]["errors"].as_u64().is_some_and(|n| n > 0)
        })
        .await;
    for side in ["white", "black"] {
        assert_eq!(after[side], before[side], "{side}'s clock changed");
    }
    assert_eq!(after["paused"], true);
    let history = client.history().await;
    let epoch = after["game_epoch_us"].as_i64().unwrap();
    assert_eq!(events(&history, epoch, "press").len(), 1);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_game_then_restart_keeps_every_committed_press() {
    let _serial = SERIAL.lock().await;
    let setup = std::sync::Arc::new(Setup::new("60"));
    let daemon = setup.daemon("daemon-1.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let_clock_sync_settle().await;
    client.board.start().await.unwrap();
    let epoch = client.state().await["game_epoch_us"].as_i64().unwrap();
    let mut pressed = Vec::new();
    for button in [Button::Left, Button::Right, Button::Left] {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let s = setup.clone();
        pressed.push(blocking(move || s.press(button)).await);
    }
    let before = client.history().await;
    daemon.kill9();

    let daemon = setup.daemon("daemon-2.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let state = client.state().await;
    assert_eq!(state["paused"], true, "{state}");
    assert_eq!(state["running"], Value::Null);
    assert!(state["down_time_ms"].as_i64().is_some());
    assert_eq!(state["white"]["moves"], 2);
    assert_eq!(state["black"]["moves"], 1);
    let after = client.history().await;
    let recorded = |history: &Value| -> Vec<Micros> {
        events(history, epoch, "press")
            .iter()
            .map(|(t, _)| *t)
            .collect()
    };
    assert_eq!(recorded(&after), recorded(&before));
    for (recorded, pressed) in recorded(&after).into_iter().zip(pressed) {
        within_1ms(recorded, pressed);
    }
    // The display tells the arbiter.
    setup.wait_unit("display", WAIT, |s| {
        s.display
            .is_some_and(|d| d.text.as_str().starts_with("DOWN"))
    });
    assert!(daemon.terminate().success());
}

/// The kept `damaged-*` directories of the state.
fn evidence_dirs(state: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("damaged-")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_database_is_kept_and_replaced() {
    let _serial = SERIAL.lock().await;
    let setup = Setup::new("60");
    std::fs::create_dir_all(setup.state_dir()).unwrap();
    let garbage = b"not SQLite at all ".repeat(300);
    std::fs::write(setup.state_dir().join("chessclockd.sqlite3"), &garbage).unwrap();
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let state = client.state().await;
    assert_eq!(state["started"], false);
    assert_eq!(
        state["state_health"]["findings"][0]["kind"], "not-a-database",
        "{state}"
    );
    client.board.start().await.unwrap();
    let log = daemon.log();
    assert!(
        log.contains("state damaged"),
        "no clear error in the log:\n{log}"
    );
    let kept = evidence_dirs(&setup.state_dir());
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read(kept[0].join("chessclockd.sqlite3")).unwrap(),
        garbage
    );
    assert!(daemon.terminate().success());
}

/// Tried from outside (issue 14): a game of 51 events, the daemon killed,
/// its write-ahead log cut in half. The restart restores what is left,
/// paused, and says so: in State(), in `chessclockctl status`, on the
/// display; the WAL as it was is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wal_cut_in_half_after_kill_9_is_found_shown_and_kept() {
    let _serial = SERIAL.lock().await;
    let setup = Setup::new("600");
    let daemon = setup.daemon("daemon-1.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    client.board.start().await.unwrap();
    for n in 0..50 {
        let side = if n % 2 == 0 { "white" } else { "black" };
        client.board.press(side).await.unwrap();
    }
    let before = client.history().await["events"].as_array().unwrap().len();
    assert!(before >= 51, "{before}");
    daemon.kill9();
    let wal = setup.state_dir().join("chessclockd.sqlite3-wal");
    let whole = std::fs::read(&wal).unwrap();
    std::fs::write(&wal, &whole[..whole.len() / 2]).unwrap();

    let daemon = setup.daemon("daemon-2.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let state = client.state().await;
    let health = &state["state_health"];
    assert_eq!(health["mode"], "durable", "{state}");
    let kinds: Vec<&str> = health["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"events-missing"), "{health}");
    let evidence = PathBuf::from(health["evidence"].as_str().unwrap());
    assert_eq!(
        std::fs::read(evidence.join("chessclockd.sqlite3-wal")).unwrap(),
        &whole[..whole.len() / 2]
    );
    // The manager property says the same.
    let connection = zbus::connection::Builder::address(setup.bus.address.as_str())
        .build()
        .await
        .unwrap();
    let manager = chessclockd::dbus::client::ManagerProxy::new(&connection)
        .await
        .unwrap();
    let property: Value = serde_json::from_str(&manager.state_health().await.unwrap()).unwrap();
    assert_eq!(&property, health);
    // The CLI.
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["--user", "status"])
        .env("DBUS_SESSION_BUS_ADDRESS", &setup.bus.address)
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("state: DAMAGED"), "{text}");
    assert!(text.contains("committed events are missing"), "{text}");
    assert!(text.contains(&evidence.display().to_string()), "{text}");
    // The display's text line.
    setup.wait_unit("display", WAIT, |s| {
        s.display
            .is_some_and(|d| d.text.as_str() == "STATE DAMAGED")
    });
    assert!(daemon.terminate().success());
}

/// The host's health (issue 30, item 6) on every surface: the manager's
/// `HostHealth`, each `State()`'s `host_health`, `chessclockctl status`;
/// and `[daemon] radios` applied by a reload, signalled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_radios_and_time_are_reported_and_their_policy_reloads() {
    use futures_util::StreamExt;
    let _serial = SERIAL.lock().await;
    let setup = Setup::new("60");
    let text = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(
        &setup.config,
        text.replace("[daemon]\n", "[daemon]\nradios = \"forbid\"\n"),
    )
    .unwrap();
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let connection = zbus::connection::Builder::address(setup.bus.address.as_str())
        .build()
        .await
        .unwrap();
    let manager = chessclockd::dbus::client::ManagerProxy::builder(&connection)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .unwrap();
    // The first check runs at start; its answer on the clock's
    // synchronisation (known, or why not) marks it done.
    let checked = Instant::now();
    let property = loop {
        let property: Value = serde_json::from_str(&manager.host_health().await.unwrap()).unwrap();
        if property["ntp_synchronized"].is_boolean() || property["ntp_unknown"].is_string() {
            break property;
        }
        assert!(
            checked.elapsed() < WAIT,
            "no host check within {WAIT:?}: {property}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(property["radios_policy"], "forbid", "{property}");
    // Whatever this machine has, it is what the kernel says: the same
    // radios as a scan here, and a finding for each one on.
    let scan = chessclockd::radios::scan(std::path::Path::new("/sys"));
    assert_eq!(
        property["radios"],
        serde_json::to_value(&scan.radios).unwrap(),
        "{property}"
    );
    let findings = property["findings"].as_array().unwrap();
    assert_eq!(
        findings
            .iter()
            .filter(|f| f.as_str().unwrap().starts_with("radios are forbidden"))
            .count(),
        usize::from(scan.on().next().is_some()),
        "{property}"
    );
    // Every board's State() carries the same.
    let state = client.state().await;
    assert_eq!(state["host_health"], property, "{state}");
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["--user", "status"])
        .env("DBUS_SESSION_BUS_ADDRESS", &setup.bus.address)
        .output()
        .await
        .unwrap();
    let status = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{status}");
    let expected: chessclockd::host::HostHealth = serde_json::from_value(property.clone()).unwrap();
    for note in expected.notes() {
        assert!(status.contains(&note), "{note} not in:\n{status}");
    }
    assert_eq!(
        status
            .lines()
            .filter(|line| line.starts_with("host: "))
            .count(),
        expected.findings.len(),
        "{status}"
    );

    // A reload allowing radios: applied at once and signalled.
    // A proxy that caches follows PropertiesChanged (an uncached one has no
    // stream of changes).
    let following = chessclockd::dbus::client::ManagerProxy::new(&connection)
        .await
        .unwrap();
    let mut changes = following.receive_host_health_changed().await;
    // The stream's first item is the value at subscription.
    let first = tokio::time::timeout(WAIT, changes.next())
        .await
        .unwrap()
        .unwrap();
    let first: Value = serde_json::from_str(&first.get().await.unwrap()).unwrap();
    assert_eq!(first["radios_policy"], "forbid", "{first}");
    std::fs::write(
        &setup.config,
        text.replace("[daemon]\n", "[daemon]\nradios = \"allow\"\n"),
    )
    .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(daemon.child.id() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let changed = tokio::time::timeout(WAIT, changes.next())
        .await
        .expect("HostHealth changed within the wait")
        .unwrap();
    let property: Value = serde_json::from_str(&changed.get().await.unwrap()).unwrap();
    assert_eq!(property["radios_policy"], "allow", "{property}");
    assert!(
        !property["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().starts_with("radios are")),
        "{property}"
    );
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_config_for_a_board_without_a_game() {
    let _serial = SERIAL.lock().await;
    let setup = Setup::new("60");
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    assert_eq!(client.state().await["control"], "60");
    let text = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(
        &setup.config,
        text.replace("control = \"60\"", "control = \"180+2\""),
    )
    .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(daemon.child.id() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let state = client
        .wait_state(&daemon, "the reloaded control", |s| s["control"] == "180+2")
        .await;
    assert_eq!(state["white"]["remaining_ms"], 182_000);
    assert!(daemon.terminate().success());
}

/// An event is never ahead of its state (issue 27), on D-Bus: a client that
/// hears `Pressed` and at once calls `State()` and reads the side's
/// `WhiteMoves`/`BlackMoves` property (uncached: asked of the daemon) sees
/// the move. The presses come from a second connection while the listener
/// reads, so each read lands as early after its signal as the bus allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hears_pressed_and_reads_at_once_sees_the_move() {
    const PRESSES: u32 = 60;
    let _serial = SERIAL.lock().await;
    let setup = Setup::new("300+2");
    let daemon = setup.daemon("daemon.log");
    let client = Client::connect(&setup.bus, &daemon).await;
    let connection = zbus::connection::Builder::address(setup.bus.address.as_str())
        .build()
        .await
        .unwrap();
    let listener = chessclockd::dbus::client::BoardProxy::builder(&connection)
        .path("/org/chessclockd/ChessClock1/board/b1")
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .unwrap();
    let mut pressed = listener.receive_pressed().await.unwrap();
    let reads = tokio::spawn(async move {
        use futures_util::StreamExt;
        let mut seen = Vec::new();
        while seen.len() < PRESSES as usize {
            let signal = tokio::time::timeout(WAIT, pressed.next())
                .await
                .expect("a Pressed signal")
                .unwrap();
            let args = signal.args().unwrap();
            let (side, move_number) = (args.side().clone(), *args.move_number());
            let state: Value = serde_json::from_str(&listener.state().await.unwrap()).unwrap();
            let property = if side == "white" {
                listener.white_moves().await.unwrap()
            } else {
                listener.black_moves().await.unwrap()
            };
            seen.push((
                side.clone(),
                move_number,
                state[&side]["moves"].clone(),
                property,
            ));
        }
        seen
    });
    client.board.start().await.unwrap();
    for n in 0..PRESSES {
        let side = if n % 2 == 0 { "white" } else { "black" };
        client.board.press(side).await.unwrap();
    }
    let seen = reads.await.unwrap();
    for (side, move_number, state_moves, property) in &seen {
        assert!(
            state_moves.as_u64() >= Some(u64::from(*move_number)) && property >= move_number,
            "{side}'s move {move_number} heard, then State() read {state_moves} moves and \
             the property {property}: {seen:?}"
        );
    }
    assert!(daemon.terminate().success());
}
