//! `chessclockctl watch` on a terminal (a PTY): it draws every board,
//! redraws when the daemon signals a change, and quits on `q`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use chessclockd::control::{Caller, Command};
use chessclockd::engine::Side;
use kit::dbus::*;

const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");

/// Collects the terminal's output on a thread; `wait_for` polls it.
struct Screen {
    text: tokio::sync::mpsc::UnboundedReceiver<String>,
    seen: String,
}

impl Screen {
    async fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.seen.contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.text.recv()).await {
                Ok(Some(chunk)) => self.seen.push_str(&chunk),
                _ => panic!(
                    "`{needle}` never appeared; the screen showed:\n{}",
                    self.seen
                ),
            }
        }
    }
}

#[tokio::test]
async fn watch_draws_follows_changes_and_quits_on_q() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let (handle, _server) = serve_fake(&bus, &["b1", "b2"]).await;

        let pty = nix::pty::openpty(None, None).expect("openpty");
        let slave = std::fs::File::from(pty.slave);
        let mut child = tokio::process::Command::new(CTL)
            .arg(format!("--address={}", bus.address))
            .arg("watch")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut master = std::fs::File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0
                    || tx
                        .send(String::from_utf8_lossy(&buffer[..n]).into_owned())
                        .is_err()
                {
                    return;
                }
            }
        });
        let mut screen = Screen {
            text: rx,
            seen: String::new(),
        };
        screen.wait_for("BOARD").await;
        screen.wait_for("not started").await;

        // A change in the daemon shows up without any key pressed.
        handle
            .call("b2", Command::Start, Caller::uid(0))
            .await
            .unwrap();
        handle
            .call("b2", Command::Press { side: Side::White }, Caller::uid(0))
            .await
            .unwrap();
        screen.wait_for("black to move").await;

        master.write_all(b"q").unwrap();
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .expect("watch did not quit on q")
            .unwrap();
        assert!(status.success());
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn watch_json_streams_a_line_per_change() {
    use tokio::io::AsyncBufReadExt;
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let bus = PrivateBus::session();
        let (handle, _server) = serve_fake(&bus, &["b1", "b2"]).await;
        let mut child = tokio::process::Command::new(CTL)
            .arg(format!("--address={}", bus.address))
            .args(["watch", "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        async fn next_json(
            lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
        ) -> serde_json::Value {
            let line = lines.next_line().await.unwrap().expect("a line");
            serde_json::from_str(&line).unwrap()
        }
        assert_eq!(next_json(&mut lines).await["board"], "b1");
        assert_eq!(next_json(&mut lines).await["board"], "b2");
        handle
            .call("b2", Command::Start, Caller::uid(0))
            .await
            .unwrap();
        let change = next_json(&mut lines).await;
        assert_eq!(change["board"], "b2");
        assert_eq!(change["started"], true);
        assert_eq!(change["running"], "white");
        child.kill().await.unwrap();
    })
    .await
    .expect("test timed out");
}
