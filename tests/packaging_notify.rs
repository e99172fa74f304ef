//! The daemon speaks the systemd notify protocol the unit relies on
//! (`Type=notify`, `WatchdogSec=`): the real `chessclockd` binary, run with a
//! fake `NOTIFY_SOCKET` and `WATCHDOG_USEC`, sends `READY=1` once it owns its
//! bus name, then keeps sending `WATCHDOG=1`, and stops on SIGTERM.
//!
//! Runs against a private session bus started for the test and a config with
//! no boards; every wait has a deadline, so it cannot hang CI.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kit::bus::PrivateBus;

const BUS_NAME: &str = "org.chessclockd.ChessClock1";

/// What this test asks of the kit's private bus.
trait NameOwners {
    fn has_owner(&self, name: &str) -> bool;
}

impl NameOwners for PrivateBus {
    /// Whether `name` has an owner on this bus, asked with dbus-send.
    fn has_owner(&self, name: &str) -> bool {
        let output = Command::new("dbus-send")
            .arg(format!("--bus={}", self.address))
            .arg("--print-reply")
            .arg("--reply-timeout=2000")
            .arg("--dest=org.freedesktop.DBus")
            .arg("/org/freedesktop/DBus")
            .arg("org.freedesktop.DBus.NameHasOwner")
            .arg(format!("string:{name}"))
            .output()
            .expect("dbus-send");
        assert!(
            output.status.success(),
            "dbus-send failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).contains("boolean true")
    }
}

/// The daemon under test, killed on drop; its stderr is kept for messages.
struct Daemon {
    child: Child,
    stderr_path: PathBuf,
}

impl Daemon {
    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Waits for the exit, up to `limit`.
    fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Collects notify datagrams into `seen` until one carries the assignment
/// `wanted` (true) or the deadline passes (false). Panics with the daemon's
/// stderr if it exits meanwhile.
fn wait_for(
    socket: &UnixDatagram,
    daemon: &mut Daemon,
    wanted: &str,
    limit: Duration,
    seen: &mut Vec<String>,
) -> bool {
    let deadline = Instant::now() + limit;
    let mut buf = vec![0u8; 4096];
    while Instant::now() < deadline {
        match socket.recv(&mut buf) {
            Ok(n) => {
                let message = String::from_utf8_lossy(&buf[..n]).into_owned();
                let found = message.lines().any(|line| line == wanted);
                seen.push(message);
                if found {
                    return true;
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                if let Some(status) = daemon.child.try_wait().expect("try_wait") {
                    panic!(
                        "chessclockd exited ({status}) before sending {wanted}; \
                         notify messages so far: {seen:?}; stderr:\n{}",
                        daemon.stderr()
                    );
                }
            }
            Err(e) => panic!("notify socket: {e}"),
        }
    }
    false
}

#[test]
fn daemon_sends_ready_after_owning_its_name_then_watchdog_pings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = PrivateBus::session_in(dir.path());

    let notify_path = dir.path().join("notify");
    let notify = UnixDatagram::bind(&notify_path).expect("bind fake NOTIFY_SOCKET");
    notify
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();

    let state_dir = dir.path().join("state");
    std::fs::create_dir(&state_dir).unwrap();
    let config_path = dir.path().join("chessclockd.toml");
    std::fs::write(
        &config_path,
        format!(
            "[daemon]\nbus = \"session\"\nstate-dir = \"{}\"\nrt-priority = 0\nmlock = false\n",
            state_dir.display()
        ),
    )
    .unwrap();

    let stderr_path = dir.path().join("daemon.stderr");
    let child = Command::new(env!("CARGO_BIN_EXE_chessclockd"))
        .arg("--config")
        .arg(&config_path)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("NOTIFY_SOCKET", &notify_path)
        // One second: pings every half second if the timing thread is alive.
        .env("WATCHDOG_USEC", "1000000")
        .env_remove("WATCHDOG_PID")
        .env_remove("LISTEN_FDS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("spawn chessclockd");
    let mut daemon = Daemon { child, stderr_path };

    let mut seen = Vec::new();
    assert!(
        wait_for(
            &notify,
            &mut daemon,
            "READY=1",
            Duration::from_secs(20),
            &mut seen
        ),
        "no READY=1 within 20 s; messages: {seen:?}; stderr:\n{}",
        daemon.stderr()
    );
    // READY=1 promises the bus name is already owned.
    assert!(
        bus.has_owner(BUS_NAME),
        "READY=1 was sent but {BUS_NAME} has no owner; stderr:\n{}",
        daemon.stderr()
    );
    let ready = seen
        .iter()
        .find(|m| m.lines().any(|l| l == "READY=1"))
        .unwrap();
    assert!(
        ready.lines().any(|l| l.starts_with("STATUS=")),
        "READY=1 should come with a STATUS= line for systemctl status: {ready:?}"
    );

    // Pings that arrived before READY do not count: the watchdog must keep
    // being fed after start-up.
    let mut after_ready = Vec::new();
    assert!(
        wait_for(&notify, &mut daemon, "WATCHDOG=1", Duration::from_secs(5), &mut after_ready),
        "no WATCHDOG=1 within 5 s after READY=1 (WATCHDOG_USEC=1000000); messages: {after_ready:?}; stderr:\n{}",
        daemon.stderr()
    );
    let mut second = Vec::new();
    assert!(
        wait_for(
            &notify,
            &mut daemon,
            "WATCHDOG=1",
            Duration::from_secs(5),
            &mut second
        ),
        "only one WATCHDOG=1; the watchdog must keep being fed; stderr:\n{}",
        daemon.stderr()
    );

    // SIGTERM: a clean, quick exit (the unit's TimeoutStopSec relies on it).
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(daemon.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = daemon.wait_exit(Duration::from_secs(5)).unwrap_or_else(|| {
        panic!(
            "chessclockd still running 5 s after SIGTERM; stderr:\n{}",
            daemon.stderr()
        )
    });
    assert!(
        status.success(),
        "chessclockd exited with {status} on SIGTERM; stderr:\n{}",
        daemon.stderr()
    );
}
