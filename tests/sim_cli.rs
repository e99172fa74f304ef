//! `chessclock-sim run` as a process: a script drives presses and waits for
//! what the host (this test) shows; the JSON Lines log records it all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chessclock_protocol::{Button, DisplayState, Icons, Message, Text};
use kit::units::{eventually, log_lines, Host, WAIT};

static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Kills the simulator if a test fails half-way.
struct Sim(Child);

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Sim {
    fn start(dir: &Path, script: &str, script_name: &str) -> Sim {
        let script_path = dir.join(script_name);
        std::fs::write(&script_path, script).unwrap();
        let child = Command::new(crate::kit::binary("chessclock-sim"))
            .arg("run")
            .args(["--unit", "buttons=buttons,serial=CC0001"])
            .args(["--unit", "display=display,serial=CC0002,drift-ppm=50"])
            .arg("--link")
            .arg(format!("buttons={}", dir.join("buttons").display()))
            .arg("--link")
            .arg(format!("display={}", dir.join("display").display()))
            .arg("--log")
            .arg(dir.join("log.jsonl"))
            .arg("--script")
            .arg(&script_path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting chessclock-sim");
        Sim(child)
    }

    /// Exit status and stderr, within `within`.
    fn finish(mut self, within: Duration) -> (bool, String) {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                let mut stderr = String::new();
                if let Some(mut pipe) = self.0.stderr.take() {
                    use std::io::Read;
                    let _ = pipe.read_to_string(&mut stderr);
                }
                return (status.success(), stderr);
            }
            assert!(Instant::now() < deadline, "chessclock-sim did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

const SCRIPT: &str = r#"
# wait for the host, press, wait for the display to react
{"at_ms": 0, "action": "wait", "unit": "buttons", "link": "up", "timeout_ms": 4000}
{"after_ms": 20, "action": "press", "button": "left"}
{"action": "wait", "unit": "buttons", "unacked": 0, "timeout_ms": 4000}
{"action": "wait", "text": "GO", "icon": "running", "side": "right", "timeout_ms": 4000}
{"action": "end"}
{"action": "press", "button": "right"}
"#;

#[test]
fn scripted_run_presses_waits_for_the_display_and_logs_everything() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(dir.path(), SCRIPT, "game.jsonl");
    let buttons_path = dir.path().join("buttons");
    let display_path = dir.path().join("display");
    assert!(eventually(WAIT, || buttons_path.exists() && display_path.exists()));

    let mut buttons = Host::open(&buttons_path);
    let mut display = Host::open(&display_path);
    assert_eq!(buttons.handshake(250, 2000).serial.as_str(), "CC0001");
    assert_eq!(display.handshake(250, 2000).serial.as_str(), "CC0002");
    let press = buttons.expect(WAIT, "scripted press", |m| {
        matches!(m, Message::Button { .. })
    });
    let Message::Button {
        event,
        button,
        device_time_us,
        ..
    } = press.frame.message
    else {
        unreachable!()
    };
    assert_eq!(button, Button::Left);
    buttons.send(Message::Ack { event });

    let mut state = DisplayState::default();
    state.left.time = Text::new("14:59").unwrap();
    state.right.time = Text::new("15:00").unwrap();
    state.right.icons = Icons::RUNNING;
    state.text = Text::new("GO").unwrap();
    display.send(Message::Display(state));

    let (ok, stderr) = sim.finish(WAIT);
    assert!(ok, "script should succeed: {stderr}");
    assert!(stderr.contains("buttons (buttons) on"), "{stderr}");
    assert!(
        !buttons_path.exists() && !display_path.exists(),
        "links removed on exit"
    );

    let log = log_lines(&dir.path().join("log.jsonl"));
    let presses: Vec<_> = log.iter().filter(|r| r["kind"] == "press").collect();
    assert_eq!(presses.len(), 1, "the step after `end` never ran");
    assert_eq!(presses[0]["device_us"].as_u64(), Some(device_time_us));
    assert!(presses[0]["t_us"].as_i64().unwrap() <= press.at_us);
    let shown = log
        .iter()
        .find(|r| r["unit"] == "display" && r["kind"] == "rx" && r["msg"]["type"] == "display")
        .expect("display frame logged");
    assert_eq!(shown["msg"]["text"], "GO");
    assert_eq!(
        shown["msg"]["right"]["icon_names"],
        serde_json::json!(["running"])
    );
    let steps: Vec<_> = log.iter().filter(|r| r["kind"] == "script").collect();
    assert_eq!(steps.len(), 5);
    assert!(steps.iter().all(|s| s["status"] == "done"));
    // Display arrived after the press: the latency a benchmark would read.
    assert!(shown["t_us"].as_i64().unwrap() > presses[0]["t_us"].as_i64().unwrap());
}

#[test]
fn a_wait_that_times_out_fails_the_run_and_says_why() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let script =
        "[[step]]\naction = \"wait\"\nunit = \"display\"\ntext = \"NEVER\"\ntimeout_ms = 200\n";
    let sim = Sim::start(dir.path(), script, "never.toml");
    let (ok, stderr) = sim.finish(WAIT);
    assert!(!ok);
    assert!(
        stderr.contains("script failed") && stderr.contains("200 ms"),
        "{stderr}"
    );
}

#[test]
fn a_bad_script_is_refused_before_anything_starts() {
    let _serial = lock();
    let dir = tempfile::tempdir().unwrap();
    let script = "{\"action\": \"press\", \"button\": \"left\"}\n{\"action\": \"press\", \"button\": \"middle\"}\n";
    let sim = Sim::start(dir.path(), script, "bad.jsonl");
    let (ok, stderr) = sim.finish(WAIT);
    assert!(!ok);
    assert!(
        stderr.contains("bad.jsonl:2:") && stderr.contains("middle"),
        "{stderr}"
    );
    assert!(!dir.path().join("buttons").exists());
    let bad_unit = Command::new(crate::kit::binary("chessclock-sim"))
        .args(["run", "--unit", "x=toaster"])
        .output()
        .unwrap();
    assert!(!bad_unit.status.success());
    assert!(String::from_utf8_lossy(&bad_unit.stderr).contains("toaster"));
}
