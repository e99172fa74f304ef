//! End to end: the real `chessclockd` (no devices) on a private session bus,
//! driven by `chessclockctl --user`. Checks that the daemon serves the API
//! this branch defines and that the CLI reads what the runtime reports.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::process::Stdio;
use std::time::{Duration, Instant};

use kit::dbus::*;

const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");
const DAEMON: &str = env!("CARGO_BIN_EXE_chessclockd");

/// The daemon, stopped (SIGTERM, then SIGKILL) when dropped.
struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn ctl(bus: &PrivateBus, args: &[&str]) -> (bool, String, String) {
    run_with(
        tokio::process::Command::new(CTL)
            .arg("--user")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address),
    )
    .await
}

#[tokio::test]
async fn chessclockctl_drives_the_real_daemon() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("chessclockd.toml");
        std::fs::write(
            &config,
            "[daemon]\nrequire-ntp-for-scheduled-start = true\nrt-priority = 0\nmlock = false\n\n\
             [[board]]\nid = \"board1\"\ncontrol = \"300+2\"\n\n[[board]]\nid = \"board2\"\n",
        )
        .unwrap();
        let _daemon = Daemon(
            std::process::Command::new(DAEMON)
                .args(["--session", "--config"])
                .arg(&config)
                .arg("--state-dir")
                .arg(dir.path().join("state"))
                .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chessclockd"),
        );
        // Wait until the daemon owns its name.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (ok, out, err) = ctl(&bus, &["boards"]).await;
            if ok {
                assert_eq!(out, "board1\nboard2\n");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the daemon never answered: {err}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        let (ok, _, err) = ctl(&bus, &["start", "board1"]).await;
        assert!(ok, "{err}");
        let (ok, _, err) = ctl(&bus, &["press", "board1", "white"]).await;
        assert!(ok, "{err}");
        let (ok, out, err) = ctl(&bus, &["status", "board1", "--json"]).await;
        assert!(ok, "{err}");
        let status: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(status["snapshot"]["running"], "black");
        assert_eq!(status["snapshot"]["white_moves"], 1);
        assert_eq!(status["state"]["white"]["moves"], 1);

        let (ok, _, err) = ctl(
            &bus,
            &[
                "adjust",
                "board1",
                "black",
                "--remaining",
                "4:30",
                "--moves",
                "3",
            ],
        )
        .await;
        assert!(ok, "{err}");
        let (ok, out, _) = ctl(&bus, &["status", "board1", "--json"]).await;
        assert!(ok);
        let status: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(status["snapshot"]["black_moves"], 3);
        let black_ms = status["snapshot"]["black_remaining_ms"].as_i64().unwrap();
        assert!((260_000..=270_000).contains(&black_ms), "{black_ms}");

        // Invalid input is refused with the typed error; nothing changes.
        let (ok, _, err) = ctl(&bus, &["new", "board1", "nonsense"]).await;
        assert!(!ok && err.contains("(InvalidArgument)"), "{err}");
        let (ok, _, err) = ctl(&bus, &["start", "board1"]).await;
        assert!(!ok && err.contains("(InvalidState)"), "{err}");
        // A scheduled start, forced past the NTP check (whose outcome
        // depends on the machine; tests/dbus_bus.rs covers it).
        let (ok, _, err) = ctl(&bus, &["start", "board2", "--at", "+1m", "--force"]).await;
        assert!(ok, "{err}");
        let (ok, out, _) = ctl(&bus, &["status", "board2", "--json"]).await;
        assert!(ok);
        let status: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            status["state"]["scheduled_start_ms"].is_i64(),
            "the scheduled start is not in the state: {out}"
        );
        let (ok, out, _) = ctl(&bus, &["status"]).await;
        assert!(ok);
        assert!(
            out.contains("board2: starts at ") && out.contains("(forced past the NTP check)"),
            "{out}"
        );
        // Issue 28 item 5: a start moved to an instant already reached
        // starts at once and says so.
        let (ok, out, err) = ctl(&bus, &["start", "board2", "--at", "+0s", "--force"]).await;
        assert!(ok, "{err}");
        assert!(
            out.contains("board2: started") && !out.contains("as scheduled"),
            "{out}"
        );
        let (ok, out, _) = ctl(&bus, &["status", "board2", "--json"]).await;
        assert!(ok);
        let status: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(status["state"]["started"], true, "{out}");

        // The history names the caller.
        let (ok, out, err) = ctl(&bus, &["history", "board1", "--json"]).await;
        assert!(ok, "{err}");
        let uid = nix::unistd::getuid().as_raw();
        assert!(
            out.contains(&format!("\"caller_uid\":{uid}")),
            "the history lacks the caller's uid: {out}"
        );
        let (ok, out, _) = ctl(&bus, &["export", "board1", "--csv"]).await;
        assert!(ok);
        assert!(out.lines().count() >= 4, "{out}");
    })
    .await
    .expect("test timed out");
}
