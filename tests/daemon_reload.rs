//! SIGHUP from outside: the real `chessclockd` on a private dbus-daemon,
//! with simulated units on PTYs. A reload applies or refuses every key
//! aloud: an added board appears on D-Bus and plays, `admin-group` decides
//! the next call, restart-only keys are logged at WARN with both values,
//! a broken file keeps the running config; `--check-config` validates
//! without running. Every wait is for a condition, with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chessclock_protocol::Button;
use chessclock_sim_units::{spawn_units, SimOptions, SimUnits, UnitKind, UnitSpec};
use chessclockd::dbus::client::{BoardProxy, ManagerProxy};
use serde_json::Value;

use kit::daemon::{devices_linked, PrivateBus};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const WAIT: Duration = Duration::from_secs(10);

/// A daemon, its bus, its config file and four simulated units (two
/// boards' worth: `buttons`/`display` for b1, `buttons2`/`display2` for a
/// board added later).
struct Setup {
    dir: tempfile::TempDir,
    bus: PrivateBus,
    units: Option<SimUnits>,
    config: PathBuf,
    log: PathBuf,
    daemon: Option<Child>,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let bus = PrivateBus::session_in(dir.path());
        let mut options = SimOptions::demo();
        options
            .units
            .push(UnitSpec::new("buttons2", UnitKind::Buttons));
        options
            .units
            .push(UnitSpec::new("display2", UnitKind::Display));
        for unit in &mut options.units {
            unit.link = Some(dir.path().join(format!("dev-{}", unit.name)));
        }
        let units = spawn_units(&options).expect("simulated units");
        let config = dir.path().join("chessclockd.toml");
        let log = dir.path().join("daemon.log");
        let setup = Setup {
            dir,
            bus,
            units: Some(units),
            config,
            log,
            daemon: None,
        };
        setup.write_config(&setup.base_config());
        setup
    }

    fn device(&self, unit: &str) -> String {
        self.dir
            .path()
            .join(format!("dev-{unit}"))
            .display()
            .to_string()
    }

    /// `[daemon]` on the test's bus and state, and board b1.
    fn base_config(&self) -> String {
        format!(
            r#"{daemon}admin-group = "root"

[[board]]
id = "b1"
control = "60"
buttons = "{buttons}"
displays = ["{display}"]
"#,
            daemon = kit::daemon::daemon_table(&self.dir.path().join("state")),
            buttons = self.device("buttons"),
            display = self.device("display"),
        )
    }

    /// Board b2 on the second pair of units.
    fn board2(&self) -> String {
        format!(
            r#"
[[board]]
id = "b2"
control = "300+3"
buttons = "{buttons}"
displays = ["{display}"]
"#,
            buttons = self.device("buttons2"),
            display = self.device("display2"),
        )
    }

    fn write_config(&self, text: &str) {
        std::fs::write(&self.config, text).unwrap();
    }

    /// Starts the daemon without `--session`/`--state-dir`: every key comes
    /// from the file, so a reload sees each of them change.
    fn start(&mut self) {
        let child = Command::new(env!("CARGO_BIN_EXE_chessclockd"))
            .arg("--config")
            .arg(&self.config)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("NOTIFY_SOCKET")
            .env_remove("JOURNAL_STREAM")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&self.log).unwrap())
            .spawn()
            .expect("spawn chessclockd");
        self.daemon = Some(child);
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn hangup(&self) {
        let child = self.daemon.as_ref().unwrap();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGHUP,
        )
        .unwrap();
    }

    /// Waits until the daemon logged the end of its `n`-th reload.
    async fn wait_reloads(&self, n: usize) -> String {
        self.wait_log(&format!("{n} reload(s)"), |log| {
            log.matches("SIGHUP: config reloaded").count()
                + log.matches("SIGHUP: the config has errors").count()
                >= n
        })
        .await
    }

    async fn wait_log(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let log = self.log();
            if ready(&log) {
                return log;
            }
            assert!(Instant::now() < deadline, "{what}: not in the log:\n{log}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn connection(&self) -> zbus::Connection {
        zbus::connection::Builder::address(self.bus.address.as_str())
            .build()
            .await
            .unwrap()
    }

    /// The proxy of board `id`, once its `State()` satisfies `ready`.
    async fn board(
        &self,
        connection: &zbus::Connection,
        id: &str,
        ready: impl Fn(&Value) -> bool,
    ) -> BoardProxy<'static> {
        let board = BoardProxy::builder(connection)
            .path(format!("/org/chessclockd/ChessClock1/board/{id}"))
            .build()
            .await
            .unwrap();
        wait_state(&board, &format!("board {id}"), &ready, self).await;
        board
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            )
            .unwrap();
            let deadline = Instant::now() + Duration::from_secs(5);
            while child.try_wait().unwrap().is_none() {
                assert!(Instant::now() < deadline, "no exit after SIGTERM");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    fn sim(&self) -> chessclock_sim_units::SimHandle {
        self.units.as_ref().unwrap().handle()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(units) = self.units.take() {
            units.shutdown();
        }
    }
}

async fn wait_state(
    board: &BoardProxy<'_>,
    what: &str,
    ready: impl Fn(&Value) -> bool,
    setup: &Setup,
) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(text) = board.state().await {
            let state: Value = serde_json::from_str(&text).unwrap();
            if ready(&state) {
                return state;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not reached; daemon log:\n{}",
            setup.log()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The log lines of the reload decisions for `key`.
fn lines_for<'a>(log: &'a str, key: &str) -> Vec<&'a str> {
    let prefix = format!("config reload: {key}: ");
    log.lines().filter(|l| l.contains(&prefix)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_adds_a_board_that_appears_on_dbus_and_plays() {
    let _serial = SERIAL.lock().await;
    let mut setup = Setup::new();
    setup.start();
    let connection = setup.connection().await;
    let b1 = setup.board(&connection, "b1", devices_linked).await;
    let manager = ManagerProxy::new(&connection).await.unwrap();
    assert_eq!(manager.list_boards().await.unwrap().len(), 1);

    setup.write_config(&(setup.base_config() + &setup.board2()));
    setup.hangup();
    let log = setup.wait_reloads(1).await;
    let added = lines_for(&log, "board.b2");
    assert_eq!(added.len(), 1, "{log}");
    assert!(added[0].contains("INFO"), "{}", added[0]);
    assert!(added[0].contains("(added): applied"), "{}", added[0]);

    // Listed by the manager, in order, once the reload is done.
    let paths: Vec<String> = manager
        .list_boards()
        .await
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/org/chessclockd/ChessClock1/board/b1",
            "/org/chessclockd/ChessClock1/board/b2"
        ]
    );
    // Its object answers, its devices link, and it plays.
    let b2 = setup.board(&connection, "b2", devices_linked).await;
    let state: Value = serde_json::from_str(&b2.state().await.unwrap()).unwrap();
    assert_eq!(state["control"], "300+3", "{state}");
    b2.start().await.unwrap();
    wait_state(&b2, "b2 running White", |s| s["running"] == "white", &setup).await;
    let sim = setup.sim();
    tokio::task::spawn_blocking(move || sim.press(Some("buttons2"), Button::Left).unwrap())
        .await
        .unwrap();
    let state = wait_state(
        &b2,
        "b2 after White's press",
        |s| s["running"] == "black",
        &setup,
    )
    .await;
    assert_eq!(state["white"]["moves"], 1, "{state}");
    // Its display unit shows its clock (the link was started by the reload).
    let sim = setup.sim();
    tokio::task::spawn_blocking(move || {
        sim.wait_until("display2", WAIT, |s| s.display.is_some())
            .unwrap()
    })
    .await
    .unwrap();
    // b1 was not touched.
    let b1_state: Value = serde_json::from_str(&b1.state().await.unwrap()).unwrap();
    assert_eq!(b1_state["running"], Value::Null, "{b1_state}");
    assert_eq!(b1_state["control"], "60");
    setup.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_of_every_key_applies_or_warns_with_both_values() {
    let _serial = SERIAL.lock().await;
    let mut setup = Setup::new();
    // b2 runs from the start, without devices, so that it can be removed.
    setup.write_config(&(setup.base_config() + "\n[[board]]\nid = \"b2\"\n"));
    setup.start();
    let connection = setup.connection().await;
    let b1 = setup.board(&connection, "b1", devices_linked).await;

    let state_dir = setup.dir.path().join("state").display().to_string();
    let changed = setup
        .base_config()
        .replace(&state_dir, "/nonexistent/elsewhere")
        .replace("bus = \"session\"", "bus = \"system\"\ncrash-safety = false\nwatch-dirs = [\"/tmp\"]\npgn-dir = \"/tmp/pgn\"\nrequire-ntp-for-scheduled-start = false\ndefault-time-ms = 5000\nresume-after-restart = true\nradios = \"forbid\"")
        .replace("rt-priority = 0", "rt-priority = 5")
        .replace("mlock = false", "mlock = true")
        .replace("admin-group = \"root\"", "admin-group = \"wheel\"")
        .replace("control = \"60\"", "control = \"180+2\"\nwhite-button = \"right\"\nstart-on-black-press = true\nwhite = \"Ding\"\nblack = \"Nepo\"\nround = \"1\"\nevent = \"Open\"\nsite = \"Hall\"")
        .replace(&setup.device("display"), &setup.device("display2"))
        .replace("buttons = ", "eboard = \"/dev/nonexistent-dgt\"\nbuttons = ")
        + "\n[event]\nname = \"Club\"\n\n[engine]\nmove-count = \"presses\"\n\n[display]\nbrightness = 9\n\n[presets]\nclub = \"600+5\"\n";
    setup.write_config(&changed);
    setup.hangup();
    let log = setup.wait_reloads(1).await;

    let restart = [
        (
            "daemon.state-dir",
            state_dir.as_str(),
            "/nonexistent/elsewhere",
        ),
        ("daemon.bus", "\"session\"", "\"system\""),
        ("daemon.crash-safety", "true", "false"),
        ("daemon.watch-dirs", "[]", "[\"/tmp\"]"),
        ("daemon.rt-priority", "0", "5"),
        ("daemon.mlock", "false", "true"),
        (
            "board.b1.displays",
            &setup.device("display"),
            &setup.device("display2"),
        ),
        ("board.b1.eboard", "(none)", "\"/dev/nonexistent-dgt\""),
        ("board.b2", "(configured)", "(removed)"),
    ];
    for (key, old, new) in restart {
        let lines = lines_for(&log, key);
        assert_eq!(lines.len(), 1, "{key}: {lines:?}\n{log}");
        let line = lines[0];
        assert!(line.contains("WARN"), "{line}");
        assert!(line.contains("needs a restart"), "{line}");
        assert!(line.contains(old) && line.contains(new), "{key}: {line}");
    }
    let applied = [
        "daemon.admin-group",
        "daemon.pgn-dir",
        "daemon.require-ntp-for-scheduled-start",
        "daemon.default-time-ms",
        "daemon.resume-after-restart",
        "daemon.radios",
        "board.b1.control",
        "board.b1.white-button",
        "board.b1.start-on-black-press",
        "board.b1.white",
        "board.b1.black",
        "board.b1.round",
        "board.b1.event",
        "board.b1.site",
        "event.name",
        "engine.move-count",
        "display.brightness",
        "presets.club",
    ];
    for key in applied {
        let lines = lines_for(&log, key);
        assert_eq!(lines.len(), 1, "{key}: {lines:?}\n{log}");
        assert!(lines[0].contains("INFO"), "{}", lines[0]);
        assert!(lines[0].contains(": applied"), "{}", lines[0]);
    }
    // The removed board keeps running; the restart-only values stay.
    let manager = ManagerProxy::new(&connection).await.unwrap();
    assert_eq!(manager.list_boards().await.unwrap().len(), 2);
    assert!(!Path::new("/nonexistent/elsewhere").exists());
    // The applied ones are in effect: the new control (no game was started)
    // and the new preset.
    let state = wait_state(&b1, "b1's new control", |s| s["control"] == "180+2", &setup).await;
    assert_eq!(state["white"]["remaining_ms"], 182_000, "{state}");
    b1.new_game("club").await.unwrap();
    // The devices of b1 are still the old ones: still linked.
    wait_state(&b1, "b1's links", devices_linked, &setup).await;
    setup.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_with_a_broken_config_keeps_the_running_one() {
    let _serial = SERIAL.lock().await;
    let mut setup = Setup::new();
    setup.start();
    let connection = setup.connection().await;
    let b1 = setup.board(&connection, "b1", devices_linked).await;

    // The board's `control` names a preset that does not exist, and a
    // board is added: neither is taken.
    let broken = setup
        .base_config()
        .replace("control = \"60\"", "control = \"no-such-preset\"")
        + &setup.board2();
    let line = 1 + broken
        .lines()
        .position(|l| l.contains("no-such-preset"))
        .unwrap();
    setup.write_config(&broken);
    setup.hangup();
    let log = setup.wait_reloads(1).await;
    let path = setup.config.display().to_string();
    let error = log
        .lines()
        .find(|l| l.contains("SIGHUP: the config has errors"))
        .unwrap();
    assert!(error.contains("ERROR"), "{error}");
    assert!(error.contains(&format!("{path}:{line}:")), "{error}");
    assert!(!log.contains("config reload: "), "{log}");
    let manager = ManagerProxy::new(&connection).await.unwrap();
    assert_eq!(manager.list_boards().await.unwrap().len(), 1);
    let state: Value = serde_json::from_str(&b1.state().await.unwrap()).unwrap();
    assert_eq!(state["control"], "60");

    // Fixed, it is taken on the next SIGHUP.
    setup.write_config(&(setup.base_config().replace("\"60\"", "\"120\"")));
    setup.hangup();
    setup.wait_reloads(2).await;
    wait_state(&b1, "the fixed control", |s| s["control"] == "120", &setup).await;
    setup.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_changes_who_may_change_clocks_at_once() {
    let _serial = SERIAL.lock().await;
    let mut setup = Setup::new();
    // The caller's own primary group: it may change clocks.
    let me = nix::unistd::getuid();
    let group = nix::unistd::Group::from_gid(nix::unistd::getgid())
        .unwrap()
        .unwrap()
        .name;
    setup.write_config(&setup.base_config().replace(
        "admin-group = \"root\"",
        &format!("admin-group = \"{group}\""),
    ));
    setup.start();
    let connection = setup.connection().await;
    let b1 = setup.board(&connection, "b1", devices_linked).await;
    b1.start().await.unwrap();
    b1.pause().await.unwrap();

    // A group nobody is in (it does not exist): from the next call on,
    // only root may change clocks.
    setup.write_config(&setup.base_config().replace(
        "admin-group = \"root\"",
        "admin-group = \"chessclock-reload-test-nobody\"",
    ));
    setup.hangup();
    let log = setup.wait_reloads(1).await;
    let lines = lines_for(&log, "daemon.admin-group");
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains(&format!(
            "\"{group}\" -> \"chessclock-reload-test-nobody\": applied"
        )),
        "{}",
        lines[0]
    );
    let answer = b1.resume().await;
    if me.is_root() {
        // Root may always change clocks: the refusal itself can only be
        // seen by another user (the decision is tested in `dbus::tests`).
        answer.unwrap();
    } else {
        let message = format!("{:?}", answer.unwrap_err());
        assert!(message.contains("NotPermitted"), "{message}");
        assert!(
            message.contains("chessclock-reload-test-nobody"),
            "the new group decides: {message}"
        );
    }
    setup.stop();
}

/// `chessclockd --check-config FILE` with the environment of a machine
/// whose bus cannot be reached.
fn check_config(file: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_chessclockd"))
        .arg("--check-config")
        .arg(file)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .output()
        .unwrap()
}

#[test]
fn check_config_says_ok_or_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state-never-created");
    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        format!(
            "[daemon]\nstate-dir = \"{}\"\n\n[[board]]\nid = \"b1\"\n",
            state.display()
        ),
    )
    .unwrap();
    let output = check_config(&good);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{}: ok (1 board)\n", good.display())
    );
    // Nothing was opened: no state directory, no lock.
    assert!(!state.exists());

    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/chessclockd.toml");
    let output = check_config(&shipped);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{}: ok (3 boards)\n", shipped.display())
    );

    // A syntax error (unknown key) at line 6, column 1.
    let unknown =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/config/invalid_unknown_key.toml");
    let output = check_config(&unknown);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("{}:6:1: ", unknown.display())),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());

    // A validation error (a control that does not resolve) at its key.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[board]]\nid = \"b1\"\ncontrol = \"no-such-preset\"\n",
    )
    .unwrap();
    let output = check_config(&bad);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("{}:3:1: ", bad.display())),
        "{stderr}"
    );

    // A file that is not there.
    let missing = dir.path().join("missing.toml");
    let output = check_config(&missing);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot read"), "{stderr}");
}
