//! The record's fixed schema, as `docs/history-format.md` documents it:
//! after a session with many kinds of events on the real daemon, every row
//! of `export --json` has exactly the documented columns in order, the CSV
//! header is the same list and every CSV line has a cell per column, and
//! every kind of row is a documented kind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::process::Command;
use std::time::{Duration, Instant};

use kit::daemon::{Daemon, PrivateBus};

const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");

/// The first column of the rows of the Markdown table under `heading`.
fn documented(heading: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/history-format.md"
    ))
    .unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("no section `{heading}` in docs/history-format.md"));
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let first = l.split('|').nth(1).unwrap_or("");
            first
                .split(',')
                .map(|name| name.trim().trim_matches('`').to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// RFC 4180 fields of one CSV line.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

struct Session {
    bus: PrivateBus,
}

impl Session {
    fn ctl(&self, args: &[&str]) -> String {
        let output = Command::new(CTL)
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .env("CHESSCLOCKCTL_BUS", "user")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "chessclockctl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Polls `status --json` of `board` until `ready` holds.
    fn wait(&self, board: &str, ready: impl Fn(&serde_json::Value) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let status: serde_json::Value =
                serde_json::from_str(&self.ctl(&["status", board, "--json"])).unwrap();
            if ready(&status["state"]) {
                return;
            }
            assert!(Instant::now() < deadline, "never ready: {status}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn spawn(dir: &std::path::Path, bus: &PrivateBus) -> Daemon {
    let daemon = Daemon::spawn(&dir.join("chessclockd.toml"), bus, dir.join("daemon.log"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while Command::new(CTL)
        .args(["boards"])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("CHESSCLOCKCTL_BUS", "user")
        .output()
        .map_or(true, |o| !o.status.success())
    {
        assert!(Instant::now() < deadline, "{}", daemon.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    daemon
}

#[test]
fn every_row_of_every_kind_has_the_documented_columns() {
    let columns = documented("The fixed schema");
    assert_eq!(columns.len(), 28, "{columns:?}");
    assert_eq!(columns, chessclock_core::views::RECORD_COLUMNS);
    let kinds = documented("Kinds of rows");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chessclockd.toml"),
        format!(
            "[daemon]\nrequire-ntp-for-scheduled-start = false\nrt-priority = 0\nmlock = false\n\
             state-dir = \"{}\"\n\n[[board]]\nid = \"b1\"\ncontrol = \"2/60:60\"\n",
            dir.path().join("state").display()
        ),
    )
    .unwrap();
    let bus = PrivateBus::session_in(dir.path());
    let daemon = spawn(dir.path(), &bus);
    let s = Session { bus };
    s.ctl(&["start", "b1", "--at", "+1h"]);
    s.ctl(&["start", "b1", "--at", "+2h"]);
    s.ctl(&["start", "b1", "--cancel"]);
    s.ctl(&["start", "b1"]);
    s.ctl(&["press", "b1", "white"]);
    s.ctl(&["undo", "b1"]);
    s.ctl(&["press", "b1", "white"]);
    s.ctl(&["press", "b1", "black"]);
    s.ctl(&["press", "b1", "white"]);
    s.ctl(&["adjust", "b1", "black", "--add", "0:30", "--moves", "1"]);
    s.ctl(&["note", "b1", "claim, \"rejected\""]);
    s.ctl(&["pause", "b1"]);
    s.ctl(&["resume", "b1"]);
    // A flag falls 300 ms later, at its instant.
    s.ctl(&["adjust", "b1", "black", "--remaining", "300ms"]);
    s.wait("b1", |state| !state["flags"].as_array().unwrap().is_empty());
    // A restart is a row of its own.
    daemon.kill9();
    let _daemon = spawn(dir.path(), &s.bus);

    let text = s.ctl(&["export", "b1", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    // The columns in their documented order (the first row as printed).
    let first = &text[text.find("\"rows\":[{").unwrap()..];
    let first = &first[..first.find('}').unwrap()];
    let mut at = 0;
    for column in &columns {
        let found = first[at..]
            .find(&format!("\"{column}\":"))
            .unwrap_or_else(|| panic!("`{column}` not in order in {first}"));
        at += found;
    }
    assert_eq!(json["columns"], serde_json::json!(columns));
    let rows = json["rows"].as_array().unwrap();
    let mut seen = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let mut keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want: Vec<&str> = columns.iter().map(String::as_str).collect();
        keys.sort_unstable();
        want.sort_unstable();
        assert_eq!(keys, want, "row {i}: {row}");
        assert_eq!(row["seq"], i + 1);
        let kind = row["kind"].as_str().unwrap().to_owned();
        assert!(kinds.contains(&kind), "`{kind}` is not documented");
        assert!(!row["what"].as_str().unwrap().contains("Some("), "{row}");
        if !seen.contains(&kind) {
            seen.push(kind);
        }
    }
    for kind in [
        "start-at",
        "start-cancelled",
        "start",
        "press",
        "press-undone",
        "adjust",
        "stage",
        "note",
        "pause",
        "resume",
        "flag",
        "restart",
    ] {
        assert!(
            seen.iter().any(|k| k == kind),
            "no `{kind}` row in {seen:?}"
        );
    }
    let first_flag = rows.iter().find(|r| r["kind"] == "flag").unwrap();
    assert_eq!(first_flag["side"], "black");
    assert_eq!(first_flag["black_ms"], 0);
    let stage = rows.iter().find(|r| r["kind"] == "stage").unwrap();
    assert!(
        stage["what"].as_str().unwrap().ends_with("first"),
        "{stage}"
    );
    let correction = rows
        .iter()
        .find(|r| r["kind"] == "adjust" && r["by_ms"] == 30_000)
        .unwrap();
    assert!(correction["remaining_before_ms"].is_i64(), "{correction}");
    assert!(correction["caller_uid"].is_u64(), "{correction}");

    let csv = s.ctl(&["export", "b1", "--csv"]);
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(csv_fields(lines[0]), columns);
    assert_eq!(lines.len(), rows.len() + 1);
    for (line, row) in lines[1..].iter().zip(rows) {
        let fields = csv_fields(line);
        assert_eq!(fields.len(), columns.len(), "{line}");
        assert_eq!(fields[3], row["kind"].as_str().unwrap());
        assert_eq!(fields[27], row["what"].as_str().unwrap());
    }
    assert!(csv.contains("\"claim, \"\"rejected\"\"\""), "{csv}");
}
