//! Golden transcripts of `chessclockctl` against the real daemon: every
//! message an arbiter meets, the echo of each change and each refusal.
//!
//! Each `tests/ctl_golden/NAME.txt` is a session on a fresh daemon with
//! four boards `b1`..`b4` (no devices) on a private session bus, run with
//! `CHESSCLOCKCTL_BUS=user` and `TZ=UTC`:
//!
//! ```text
//! # a comment
//! $ adjust b2 white --remaining 270      a command (words split on spaces; "..." keeps spaces)
//! > a line on standard output            `*` in a line matches any text
//! ! a line on standard error
//! ? 2                                    the exit status (0 when absent)
//! @restart                               kill -9 the daemon and start it again
//! ```
//!
//! `CHESSCLOCKD_UPDATE_GOLDEN=1` rewrites the files with what the commands
//! printed (then put back the `*` where output varies: times of day, the
//! milliseconds a command takes).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kit::daemon::{Daemon, PrivateBus};

const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");

const CONFIG: &str = "[daemon]\nrequire-ntp-for-scheduled-start = false\nrt-priority = 0\n\
                      mlock = false\nstate-dir = \"STATE\"\n\n\
                      [[board]]\nid = \"b1\"\ncontrol = \"fide-rapid\"\n\n\
                      [[board]]\nid = \"b2\"\ncontrol = \"fide-rapid\"\n\n\
                      [[board]]\nid = \"b3\"\ncontrol = \"fide-rapid\"\n\n\
                      [[board]]\nid = \"b4\"\ncontrol = \"fide-rapid\"\n";

/// `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(rest) = text.strip_prefix(parts[0]) else {
        return false;
    };
    let mut rest = rest;
    for (i, part) in parts.iter().enumerate().skip(1) {
        if i == parts.len() - 1 {
            return rest.ends_with(part) && rest.len() >= part.len();
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Words of a command line: spaces split, `"..."` keeps them.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

struct Session {
    dir: tempfile::TempDir,
    bus: PrivateBus,
    daemon: Option<Daemon>,
}

impl Session {
    fn start() -> Session {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("chessclockd.toml");
        std::fs::write(
            &config,
            CONFIG.replace("STATE", &dir.path().join("state").display().to_string()),
        )
        .unwrap();
        let bus = PrivateBus::session_in(dir.path());
        let mut session = Session {
            dir,
            bus,
            daemon: None,
        };
        session.spawn();
        session
    }

    fn spawn(&mut self) {
        let daemon = Daemon::spawn(
            &self.dir.path().join("chessclockd.toml"),
            &self.bus,
            self.dir.path().join("daemon.log"),
        );
        // Ready once it answers.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (code, out, _) = self.ctl(&["boards".to_owned()]);
            if code == 0 && out == "b1\nb2\nb3\nb4\n" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the daemon never answered:\n{}",
                daemon.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.daemon = Some(daemon);
    }

    fn restart(&mut self) {
        if let Some(daemon) = self.daemon.take() {
            daemon.kill9();
        }
        self.spawn();
    }

    fn ctl(&self, args: &[String]) -> (i32, String, String) {
        let output = Command::new(CTL)
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .env("CHESSCLOCKCTL_BUS", "user")
            .env("TZ", "UTC")
            .env_remove("DBUS_SYSTEM_BUS_ADDRESS")
            .output()
            .expect("chessclockctl runs");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

/// What one command printed, as golden lines.
fn transcript(code: i32, out: &str, err: &str) -> Vec<String> {
    let mut lines: Vec<String> = out.lines().map(|l| format!("> {l}")).collect();
    lines.extend(err.lines().map(|l| format!("! {l}")));
    if code != 0 {
        lines.push(format!("? {code}"));
    }
    lines
}

fn run_golden(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let update = std::env::var_os("CHESSCLOCKD_UPDATE_GOLDEN").is_some();
    let mut session = Session::start();
    let mut rewritten = Vec::new();
    let mut failures = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with('#') || line.trim().is_empty() {
            rewritten.push(line.to_owned());
            continue;
        }
        if line == "@restart" {
            session.restart();
            rewritten.push(line.to_owned());
            continue;
        }
        let Some(command) = line.strip_prefix("$ ") else {
            panic!(
                "{}: line {i}: expected `$ command`, found `{line}`",
                path.display()
            );
        };
        rewritten.push(line.to_owned());
        let mut expected = Vec::new();
        while i < lines.len() && matches!(lines[i].chars().next(), Some('>' | '!' | '?')) {
            expected.push(lines[i].to_owned());
            i += 1;
        }
        let (code, out, err) = session.ctl(&words(command));
        let got = transcript(code, &out, &err);
        let matches =
            got.len() == expected.len() && got.iter().zip(&expected).all(|(g, e)| glob(e, g));
        if matches {
            rewritten.extend(expected);
        } else {
            failures.push(format!(
                "$ {command}\n  expected:\n    {}\n  got:\n    {}",
                expected.join("\n    "),
                got.join("\n    ")
            ));
            rewritten.extend(got);
        }
    }
    if update {
        std::fs::write(path, rewritten.join("\n") + "\n").unwrap();
        return;
    }
    assert!(
        failures.is_empty(),
        "{}: {} command(s) differ (CHESSCLOCKD_UPDATE_GOLDEN=1 rewrites):\n{}\n\ndaemon log:\n{}",
        path.display(),
        failures.len(),
        failures.join("\n"),
        session.daemon.as_ref().map(Daemon::log).unwrap_or_default()
    );
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ctl_golden")
        .join(format!("{name}.txt"))
}

#[test]
fn glob_patterns_match_as_documented() {
    assert!(glob("a*c", "abbbc"));
    assert!(glob("> b1 white 5:*", "> b1 white 5:02 -> 4:30"));
    assert!(!glob("a*c", "abd"));
    assert!(glob("exact", "exact"));
    assert!(!glob("exact", "exact!"));
    assert_eq!(
        words("note b1 \"3-fold claim\" x"),
        ["note", "b1", "3-fold claim", "x"]
    );
}

#[test]
fn safe_corrections() {
    run_golden(&golden("corrections"));
}

#[test]
fn new_games() {
    run_golden(&golden("new_games"));
}

#[test]
fn round_control() {
    run_golden(&golden("round"));
}

#[test]
fn the_record() {
    run_golden(&golden("record"));
}

#[test]
fn a_restart_explained() {
    run_golden(&golden("restart"));
}
