//! The state directory, from outside: the real `chessclockd` binary on a
//! state directory another daemon holds, on a read-only database, on a
//! directory it may not write. Each start that must fail has to fail at
//! once with a clear error on standard error, and touch nothing.
//!
//! Permissions are not checked for root, so when the tests run as root the
//! daemon under test runs as `nobody` (`setpriv`, util-linux); the test
//! fails loudly if that is impossible.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kit::daemon::PrivateBus;

const WAIT: Duration = Duration::from_secs(10);

fn config(dir: &Path, state: &Path, extra: &str) -> PathBuf {
    let path = dir.join("chessclockd.toml");
    std::fs::write(
        &path,
        format!(
            "[daemon]\nbus = \"session\"\nstate-dir = \"{}\"\nrt-priority = 0\nmlock = false\n{extra}\n",
            state.display()
        ),
    )
    .unwrap();
    path
}

fn daemon(config: &Path, bus: Option<&PrivateBus>) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chessclockd"));
    command
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "info")
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match bus {
        Some(bus) => command.env("DBUS_SESSION_BUS_ADDRESS", &bus.address),
        None => command.env_remove("DBUS_SESSION_BUS_ADDRESS"),
    };
    command
}

/// Waits for the process to end (it must, within [`WAIT`]).
fn finished(mut child: Child) -> Output {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    panic!("chessclockd did not stop within {WAIT:?}");
}

/// Waits until `child` holds the lock of `state` (its PID is in the lock file).
fn holds_the_lock(child: &mut Child, state: &Path) {
    let lock = state.join("chessclockd.lock");
    let pid = format!("{}\n", child.id());
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if std::fs::read_to_string(&lock).is_ok_and(|text| text == pid) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the first daemon stopped: {status}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the first daemon never took the lock");
}

fn stop(mut child: Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    panic!("chessclockd did not stop after SIGTERM");
}

/// Item 2: two daemons on one state directory, each on a bus of its own (so
/// nothing but the state stops the second): the second refuses to start and
/// names the first one's PID; the first runs on.
#[test]
fn a_second_daemon_on_one_state_directory_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = config(dir.path(), &state, "");
    let bus_a = PrivateBus::session_in(
        &std::fs::create_dir_all(dir.path().join("a"))
            .map(|_| dir.path().join("a"))
            .unwrap(),
    );
    let bus_b = PrivateBus::session_in(
        &std::fs::create_dir_all(dir.path().join("b"))
            .map(|_| dir.path().join("b"))
            .unwrap(),
    );
    let mut first = daemon(&config, Some(&bus_a)).spawn().unwrap();
    holds_the_lock(&mut first, &state);
    let second = finished(daemon(&config, Some(&bus_b)).spawn().unwrap());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "in use by another chessclockd (PID {})",
            first.id()
        )),
        "{stderr}"
    );
    assert!(first.try_wait().unwrap().is_none(), "the first one runs on");
    stop(first);
}

/// Item 2: a second `chessclockd --demo` on the same state refuses to start
/// before it starts its simulated units.
#[test]
fn a_second_demo_on_one_state_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("demo-state");
    let bus = PrivateBus::session_in(dir.path());
    let demo = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_chessclockd"));
        command
            .arg("--demo")
            .arg("--state-dir")
            .arg(&state)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .env("RUST_LOG", "info")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    };
    let mut first = demo().spawn().unwrap();
    holds_the_lock(&mut first, &state);
    let second = finished(demo().spawn().unwrap());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("PID {}", first.id())), "{stderr}");
    stop(first);
}

/// Runs `command` as `nobody` when the tests run as root (root may write
/// anything).
fn as_unprivileged(command: Command) -> (Command, Option<(u32, u32)>) {
    if !nix::unistd::geteuid().is_root() {
        return (command, None);
    }
    let nobody = nix::unistd::User::from_name("nobody")
        .unwrap()
        .expect("a `nobody` user to run the daemon without root's rights");
    let mut wrapped = Command::new("setpriv");
    wrapped
        .arg(format!("--reuid={}", nobody.uid))
        .arg(format!("--regid={}", nobody.gid))
        .arg("--clear-groups")
        .arg(command.get_program());
    wrapped.args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    (wrapped, Some((nobody.uid.as_raw(), nobody.gid.as_raw())))
}

fn chown(path: &Path, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        nix::unistd::chown(path, Some(uid.into()), Some(gid.into())).unwrap();
    }
}

/// A world-readable temporary directory the unprivileged daemon can reach.
fn reachable_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Item 3: a database the daemon may not write stops it with a clear error
/// (never a silent run from memory); nothing is changed.
#[test]
fn a_read_only_database_stops_the_daemon_with_a_clear_error() {
    let dir = reachable_dir();
    let state = dir.path().join("state");
    {
        // A good state of ours, then made read-only.
        let opened = chessclockd::runtime::store::Store::open_state(&state).unwrap();
        drop(opened);
    }
    let config = config(dir.path(), &state, "");
    let (command, owner) = as_unprivileged(daemon(&config, None));
    let mut command = command;
    for entry in std::fs::read_dir(&state).unwrap() {
        chown(&entry.unwrap().path(), owner);
    }
    chown(&state, owner);
    let db = state.join("chessclockd.sqlite3");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&db).unwrap();
    let output = finished(command.spawn().expect("setpriv (util-linux) is installed"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
    assert!(stderr.contains("crash-safety = false"), "{stderr}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// Item 3: a state directory the daemon may not write stops it the same way.
#[test]
fn an_unwritable_state_directory_stops_the_daemon_with_a_clear_error() {
    let dir = reachable_dir();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o555)).unwrap();
    let config = config(dir.path(), &state, "");
    let (mut command, _) = as_unprivileged(daemon(&config, None));
    let output = finished(command.spawn().expect("setpriv (util-linux) is installed"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("not writable"), "{stderr}");
    assert!(stderr.contains(&state.display().to_string()), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&state).unwrap().count(),
        0,
        "nothing written"
    );
}

/// Item 3: a database of another program at our path stops the daemon and
/// is not written to.
#[test]
fn another_programs_database_stops_the_daemon_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let db = state.join("chessclockd.sqlite3");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE photos (name TEXT); INSERT INTO photos VALUES ('x');")
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let config = config(dir.path(), &state, "");
    let output = finished(daemon(&config, None).spawn().unwrap());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("is not chessclockd's database"), "{stderr}");
    assert!(stderr.contains("photos"), "{stderr}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}
