//! The real daemon and a private bus for end-to-end tests: a
//! `dbus-daemon --session` on a socket in the test's folder, and the
//! `chessclockd` binary on it with its log in a file. Both are killed when
//! dropped, so a failing test leaves nothing running.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::kit::bus::PrivateBus;

pub struct Daemon {
    pub child: Child,
    stderr: PathBuf,
}

impl Daemon {
    pub fn spawn(config: &Path, bus: &PrivateBus, stderr: PathBuf) -> Daemon {
        Daemon::spawn_with_env(config, bus, stderr, &[])
    }

    /// As [`Daemon::spawn`], with `env` set for the daemon (say
    /// `DBUS_SYSTEM_BUS_ADDRESS` on a socket that does not exist: a host
    /// without timedated, whatever the machine running the test has).
    pub fn spawn_with_env(
        config: &Path,
        bus: &PrivateBus,
        stderr: PathBuf,
        env: &[(&str, &str)],
    ) -> Daemon {
        let child = Command::new(env!("CARGO_BIN_EXE_chessclockd"))
            .envs(env.iter().copied())
            .arg("--config")
            .arg(config)
            .arg("--session")
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .env("RUST_LOG", "info")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("spawn chessclockd");
        Daemon { child, stderr }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn terminate(mut self) -> std::process::ExitStatus {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!(
            "chessclockd still running 5 s after SIGTERM:\n{}",
            self.log()
        );
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A D-Bus client of board `b1` of the daemon under test.
pub struct Client {
    pub board: chessclockd::dbus::client::BoardProxy<'static>,
}

impl Client {
    /// Connects once the daemon serves the board and its devices are
    /// linked.
    pub async fn connect(bus: &PrivateBus, daemon: &Daemon) -> Client {
        Client::connect_when(bus, daemon, crate::kit::WAIT, devices_linked).await
    }

    /// Waits until `ready` holds for the board's state.
    pub async fn wait_state(
        &self,
        daemon: &Daemon,
        what: &str,
        ready: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + crate::kit::WAIT;
        loop {
            let state = self.state().await;
            if ready(&state) {
                return state;
            }
            assert!(
                Instant::now() < deadline,
                "{what} never came: last state {state}\n{}",
                daemon.log()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Connects once the daemon serves the board and `ready` holds for its
    /// `State()`; fails with the daemon's log after `wait`.
    pub async fn connect_when(
        bus: &PrivateBus,
        daemon: &Daemon,
        wait: Duration,
        ready: impl Fn(&serde_json::Value) -> bool,
    ) -> Client {
        let connection = zbus::connection::Builder::address(bus.address.as_str())
            .build()
            .await
            .unwrap();
        let board = chessclockd::dbus::client::BoardProxy::builder(&connection)
            .path("/org/chessclockd/ChessClock1/board/b1")
            .build()
            .await
            .unwrap();
        let client = Client { board };
        let deadline = Instant::now() + wait;
        loop {
            if let Ok(state) = client.board.state().await {
                if ready(&serde_json::from_str(&state).unwrap()) {
                    return client;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the daemon did not come up with its devices linked:\n{}",
                daemon.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn state(&self) -> serde_json::Value {
        serde_json::from_str(&self.board.state().await.unwrap()).unwrap()
    }

    pub async fn history(&self) -> serde_json::Value {
        serde_json::from_str(&self.board.history().await.unwrap()).unwrap()
    }
}

/// Every button and display unit of the board is linked.
pub fn devices_linked(state: &serde_json::Value) -> bool {
    state["devices"]
        .as_array()
        .is_some_and(|devices| devices.iter().all(|d| d["connected"] == true))
}

/// The `[daemon]` table every end-to-end test runs with: the session bus (a
/// private one, see [`PrivateBus`]), a state directory of the test's own, no
/// real-time priority and no locked memory (tests share the machine). More
/// `[daemon]` keys may follow it.
pub fn daemon_table(state: &Path) -> String {
    format!(
        "[daemon]\nbus = \"session\"\nstate-dir = \"{}\"\nrt-priority = 0\nmlock = false\n",
        state.display()
    )
}

/// The demo's simulated units (a button unit and a display unit), their
/// PTY links in `dir` as `dev-buttons` and `dev-display`.
pub fn demo_units(dir: &Path) -> chessclock_sim_units::SimUnits {
    let mut options = chessclock_sim_units::SimOptions::demo();
    for unit in &mut options.units {
        unit.link = Some(dir.join(format!("dev-{}", unit.name)));
    }
    chessclock_sim_units::spawn_units(&options).expect("simulated units")
}
