//! The `chessclockctl` binary against a fake runtime served on a private
//! dbus-daemon (`--address`), through a stand-in `ssh` for `-H`, and the
//! offline commands (replay, completions, man).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::path::Path;

use chessclockd::dbus::NtpSource;
use kit::dbus::*;

const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");

struct Served {
    bus: PrivateBus,
    handle: chessclockd::control::ControlHandle,
    _server: zbus::Connection,
}

async fn served(require_ntp: bool, ntp: NtpSource) -> Served {
    let bus = PrivateBus::session();
    let handle = fake_runtime(&["b1", "b2"]);
    let server = serve_on_bus(&bus, handle.clone(), test_config(require_ntp), ntp).await;
    Served {
        bus,
        handle,
        _server: server,
    }
}

impl Served {
    async fn ctl(&self, args: &[&str]) -> (bool, String, String) {
        let address = format!("--address={}", self.bus.address);
        let mut all = vec![address.as_str()];
        all.extend_from_slice(args);
        run(CTL, &all).await
    }

    async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.ctl(args).await;
        assert!(ok, "chessclockctl {args:?} failed: {err}");
        out
    }
}

#[tokio::test]
async fn reading_commands_in_text_and_json() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let s = served(false, NtpSource::Fixed(None)).await;
        assert_eq!(s.ok(&["boards"]).await, "b1\nb2\n");
        assert_eq!(s.ok(&["boards", "--json"]).await.trim(), r#"["b1","b2"]"#);

        let status = s.ok(&["status"]).await;
        let lines: Vec<&str> = status.lines().collect();
        assert_eq!(lines.len(), 3, "{status}");
        assert!(lines[0].starts_with("BOARD"));
        assert!(lines[1].starts_with("b1") && lines[1].contains("not started"));
        assert!(lines[1].contains("1:30:00") && lines[1].contains("buttons ok"));

        let one: serde_json::Value =
            serde_json::from_str(&s.ok(&["status", "b2", "--json"]).await).unwrap();
        assert_eq!(one["board"], "b2");
        assert_eq!(one["snapshot"]["white_remaining_ms"], 5_400_000);
        assert_eq!(one["state"]["white"]["remaining_ms"], 5_400_000);
        let all: serde_json::Value =
            serde_json::from_str(&s.ok(&["status", "--json"]).await).unwrap();
        assert_eq!(all.as_array().unwrap().len(), 2);

        let frame = s.ok(&["watch", "--once"]).await;
        let lines: Vec<&str> = frame.lines().collect();
        assert_eq!(lines[0], "chessclockd: 2 boards   q quits", "{frame}");
        assert!(
            lines[2].starts_with("b1 ") && lines[2].contains("not started"),
            "{frame}"
        );
        assert!(lines[2].contains(" 1:30:00 "), "{frame}");
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{frame}");

        // By object path too.
        s.ok(&["status", "/org/chessclockd/ChessClock1/board/b1"])
            .await;
        let (ok, _, err) = s.ctl(&["status", "nope"]).await;
        assert!(!ok);
        assert!(
            err.contains("no board `nope`; the daemon has: b1, b2"),
            "{err}"
        );
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn changing_commands_reach_the_daemon() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let s = served(false, NtpSource::Fixed(None)).await;
        s.ok(&["new", "b1", "fide-blitz"]).await;
        assert_eq!(snapshot(&s.handle, "b1").await.control, "fide-blitz");
        s.ok(&["start", "b1"]).await;
        s.ok(&["press", "b1", "white"]).await;
        let snap = snapshot(&s.handle, "b1").await;
        assert_eq!(
            (snap.white_moves, snap.running),
            (1, Some(chessclockd::engine::Side::Black))
        );
        s.ok(&["pause", "b1"]).await;
        assert!(snapshot(&s.handle, "b1").await.paused);
        s.ok(&["resume", "b1"]).await;
        assert!(!snapshot(&s.handle, "b1").await.paused);
        s.ok(&[
            "adjust",
            "b1",
            "black",
            "--remaining",
            "4:30",
            "--moves",
            "20",
            "--stage",
            "2",
        ])
        .await;
        let snap = snapshot(&s.handle, "b1").await;
        assert_eq!(
            (snap.black_remaining_ms, snap.black_moves, snap.black_stage),
            (270_000, 20, 2)
        );
        s.ok(&["adjust", "b1", "white", "--remaining", "61s"]).await;
        assert_eq!(snapshot(&s.handle, "b1").await.white_remaining_ms, 61_000);

        // b1 has started: it refuses, b2 is scheduled, the CLI says so.
        let (ok, _, err) = s.ctl(&["start", "--all", "--at", "+90s"]).await;
        assert!(!ok);
        assert!(err.contains("1 of 2 boards refused"), "{err}");
        assert!(
            err.contains("board b1: the game has already started"),
            "{err}"
        );
        let h2 = history(&s.handle, "b2").await;
        assert!(h2.last().unwrap()["command"]
            .as_str()
            .unwrap()
            .starts_with("StartAt"));
        s.ok(&["device", "add", "/dev/ttyACM5"]).await;
        assert!(snapshot(&s.handle, "b1")
            .await
            .devices
            .iter()
            .any(|d| d.name == "/dev/ttyACM5" && d.connected));
        s.ok(&["device", "remove", "/dev/ttyACM5"]).await;

        // Errors: the daemon's message and name, non-zero, nothing changed.
        let before = snapshot(&s.handle, "b1").await;
        let history_before = history(&s.handle, "b1").await;
        let (ok, _, err) = s.ctl(&["new", "b1", "fide-bulet"]).await;
        assert!(!ok);
        assert!(err.starts_with("chessclockctl: b1: "), "{err}");
        assert!(err.contains("(InvalidArgument)"), "{err}");
        let (ok, _, err) = s.ctl(&["start", "b1"]).await;
        assert!(!ok && err.contains("(InvalidState)"), "{err}");
        let (ok, _, err) = s
            .ctl(&["adjust", "b1", "white", "--remaining", "4:61"])
            .await;
        assert!(!ok && err.contains("seconds 61 is more than 59"), "{err}");
        let (ok, _, err) = s.ctl(&["press", "b1", "green"]).await;
        assert!(!ok && err.contains("invalid value 'green'"), "{err}");
        // Controls that give no time (issue 14, item 5).
        for control in ["0", "0+0", "40/0:1800"] {
            let (ok, _, err) = s.ctl(&["new", "b1", control]).await;
            assert!(!ok, "{control}");
            assert!(
                err.contains("(InvalidArgument)") && err.contains("0 s"),
                "{control}: {err}"
            );
        }
        assert_eq!(snapshot(&s.handle, "b1").await, before);
        assert_eq!(history(&s.handle, "b1").await, history_before);

        // History and export: a table (a title, a header, a row per
        // entry), JSON and CSV in the fixed schema.
        let text = s.ok(&["history", "b1"]).await;
        assert_eq!(text.lines().count(), history_before.len() + 2, "{text}");
        assert!(text.lines().nth(1).unwrap().starts_with("TIME "), "{text}");
        assert!(
            text.lines()
                .nth(2)
                .unwrap()
                .contains("note: fake runtime: new-game"),
            "{text}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&s.ok(&["history", "b1", "--json"]).await).unwrap();
        assert_eq!(json["rows"].as_array().unwrap().len(), history_before.len());
        assert_eq!(json["board"], "b1");
        let exported: serde_json::Value =
            serde_json::from_str(&s.ok(&["export", "b1", "--json"]).await).unwrap();
        assert_eq!(exported, json);
        let csv = s.ok(&["export", "b1", "--csv"]).await;
        let mut rows = csv.split("\r\n");
        assert_eq!(
            rows.next().unwrap(),
            chessclock_core::views::RECORD_COLUMNS.join(",")
        );
        assert!(rows.next().unwrap().starts_with("b1,,1,note,"));
        assert_eq!(csv.matches("\r\n").count(), history_before.len() + 1);
        assert!(s
            .ok(&["export", "b1", "--pgn"])
            .await
            .contains("[TimeControl \"fide-blitz\"]"));
        let (ok, _, _) = s.ctl(&["export", "b1"]).await;
        assert!(!ok, "a format is required");
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn tags_and_results_reach_the_daemon_and_bad_ones_do_not() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let s = served(false, NtpSource::Fixed(None)).await;
        s.ok(&[
            "tags",
            "b1",
            "--white",
            "Carlsen, Magnus",
            "--round",
            "3.1",
            "--tag",
            "WhiteElo=2830",
        ])
        .await;
        let last = history(&s.handle, "b1").await;
        let command = last.last().unwrap()["command"].as_str().unwrap().to_owned();
        assert!(command.starts_with("SetTags"), "{command}");
        for part in [
            "\"Round\", \"3.1\"",
            "\"White\", \"Carlsen, Magnus\"",
            "\"WhiteElo\", \"2830\"",
        ] {
            assert!(command.contains(part), "{part} in {command}");
        }
        s.ok(&["result", "b1", "1/2-1/2", "--termination", "agreement"])
            .await;
        let command = history(&s.handle, "b1").await.last().unwrap()["command"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            command,
            "SetResult { result: Some(Draw), termination: Some(Agreement) }"
        );
        s.ok(&["result", "b1", "*"]).await;
        // Refused before anything is sent: usage errors, exit status 2.
        let before = history(&s.handle, "b1").await;
        for args in [
            &["tags", "b1"][..],
            &["tags", "b1", "--tag", "Result=1-0"],
            &["tags", "b1", "--tag", "no-equals"],
            &["tags", "b1", "--date", "30.11.2026"],
            &["result", "b1", "1-1"],
            &["result", "b1", "1-0", "--termination", "boredom"],
            &["result", "b1", "*", "--termination", "normal"],
        ] {
            let (ok, _, err) = s.ctl(args).await;
            assert!(!ok, "{args:?} was accepted");
            assert!(
                err.starts_with("chessclockctl: ") || err.contains("error:"),
                "{err}"
            );
        }
        assert_eq!(history(&s.handle, "b1").await, before);
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn scheduled_start_of_all_boards_needs_ntp_or_force() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let s = served(true, NtpSource::Fixed(Some(false))).await;
        let (ok, _, err) = s.ctl(&["start", "--all", "--at", "+2m"]).await;
        assert!(!ok);
        assert!(err.contains("not NTP-synchronised"), "{err}");
        assert!(err.contains("(NotSynchronized)"), "{err}");
        assert!(history(&s.handle, "b1").await.is_empty());
        s.ok(&["start", "--all", "--at", "+2m", "--force"]).await;
        for board in ["b1", "b2"] {
            let entries = history(&s.handle, board).await;
            assert_eq!(entries.len(), 1);
            assert!(entries[0]["command"]
                .as_str()
                .unwrap()
                .contains("force: true"));
        }
        let (ok, _, err) = s
            .ctl(&["start", "b1", "--at", "2001-01-01T00:00:00Z"])
            .await;
        assert!(!ok && err.contains("in the past"), "{err}");
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn remote_host_goes_through_ssh_and_systemd_stdio_bridge() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let s = served(false, NtpSource::Fixed(None)).await;
        // A stand-in `ssh` that records its arguments and bridges to the
        // private bus the way the real one reaches the remote system bus.
        let bin = tempfile::tempdir().unwrap();
        let record = bin.path().join("argv");
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexec systemd-stdio-bridge --bus-path='{}'\n",
            record.display(),
            s.bus.address
        );
        let ssh = bin.path().join("ssh");
        std::fs::write(&ssh, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!(
            "{}:{}",
            bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let (ok, out, err) = run_with(
            tokio::process::Command::new(CTL)
                .args(["-H", "arbiter@pi-board1", "boards"])
                .env("PATH", path),
        )
        .await;
        assert!(ok, "{err}");
        assert_eq!(out, "b1\nb2\n");
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "-xT\n--\narbiter@pi-board1\nsystemd-stdio-bridge\n"
        );
    })
    .await
    .expect("test timed out");
}

/// `watch` takes -H more than once (and a file of hosts): one view of
/// every host's boards; a host that cannot be reached is a line of its own.
#[tokio::test]
async fn watch_shows_several_hosts_in_one_view() {
    let _serial = BUS_LOCK.lock().await;
    tokio::time::timeout(TEST_TIMEOUT, async {
        let s = served(false, NtpSource::Fixed(None)).await;
        // A stand-in `ssh`: host `down` is unreachable, every other host
        // reaches the private bus.
        let bin = tempfile::tempdir().unwrap();
        let script = format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = down ] && exit 255; done\n\
             exec systemd-stdio-bridge --bus-path='{}'\n",
            s.bus.address
        );
        let ssh = bin.path().join("ssh");
        std::fs::write(&ssh, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let hosts = write(bin.path(), "hosts", "# hall B\npi2\ndown\n");
        let path = format!(
            "{}:{}",
            bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let (ok, out, err) = run_with(
            tokio::process::Command::new(CTL)
                .args(["-H", "pi1", "watch", "--once", "--hosts-file", &hosts])
                .env("PATH", path),
        )
        .await;
        assert!(ok, "{err}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("chessclockd: 5 boards on 3 hosts"),
            "{out}"
        );
        assert!(
            lines[2].starts_with("down") && lines[2].contains("UNREACHABLE"),
            "{out}"
        );
        for board in ["pi1/b1", "pi1/b2", "pi2/b1", "pi2/b2"] {
            assert!(lines.iter().any(|l| l.starts_with(board)), "{board}: {out}");
        }
        assert!(err.contains("cannot connect"), "{err}");
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{out}");
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn connection_failures_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let address = format!("--address=unix:path={}/none", dir.path().display());
    let (ok, _, err) = run(CTL, &[&address, "boards"]).await;
    assert!(!ok);
    assert!(
        err.starts_with("chessclockctl: cannot connect to address"),
        "{err}"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn replay_runs_the_engine_offline() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "game.jsonl",
        "{\"control\": \"300+2\"}\n{\"t\": 0, \"do\": \"start\"}\n\
         {\"t\": 12500, \"do\": \"press\", \"side\": \"white\"}\n",
    );
    let (ok, out, err) = run(CTL, &["replay", &good]).await;
    assert!(ok, "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["t"], 12500);
    assert_eq!(lines[1]["running"], "black");
    assert_eq!(lines[1]["white"]["moves"], 1);
    // Exactly what the engine's replay says.
    let mut expected = Vec::new();
    let code = chessclockd::replay::run(
        &mut std::io::BufReader::new(std::fs::File::open(&good).unwrap()),
        &mut expected,
        &mut Vec::new(),
    );
    assert_eq!(code, 0);
    assert_eq!(out, String::from_utf8(expected).unwrap());

    // The same from standard input.
    let mut command = tokio::process::Command::new(CTL);
    command
        .args(["replay", "-"])
        .stdin(std::process::Stdio::from(
            std::fs::File::open(&good).unwrap(),
        ))
        .kill_on_drop(true);
    let output = tokio::time::timeout(std::time::Duration::from_secs(15), command.output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), out);

    let bad = write(
        dir.path(),
        "bad.jsonl",
        "{\"control\": \"300+2\"}\n{\"t\": 0, \"do\": \"start\"}\n\
         {\"t\": 5, \"do\": \"press\", \"side\": \"green\"}\n",
    );
    let mut command = tokio::process::Command::new(CTL);
    command.args(["replay", &bad]).kill_on_drop(true);
    let output = tokio::time::timeout(std::time::Duration::from_secs(15), command.output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("line 3:"));

    let (ok, _, err) = run(CTL, &["replay", "/nonexistent/game.jsonl"]).await;
    assert!(
        !ok && err.contains("cannot open /nonexistent/game.jsonl"),
        "{err}"
    );
}

#[tokio::test]
async fn completions_and_man_pages() {
    let (ok, out, err) = run(CTL, &["completions", "bash"]).await;
    assert!(ok, "{err}");
    assert!(out.contains("_chessclockctl()"), "{out}");
    assert!(out.contains("adjust"));
    let (ok, out, _) = run(CTL, &["completions", "zsh"]).await;
    assert!(ok && out.contains("#compdef chessclockctl"));

    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = run(CTL, &["man", &dir.path().display().to_string()]).await;
    assert!(ok, "{err}");
    let main = std::fs::read_to_string(dir.path().join("chessclockctl.1")).unwrap();
    assert!(main.contains(".TH chessclockctl"), "{main}");
    assert!(main.contains("chessclockctl\\-start(1)") || main.contains("start"));
    let start = std::fs::read_to_string(dir.path().join("chessclockctl-start.1")).unwrap();
    assert!(start.contains("\\-\\-at"), "{start}");
    assert!(dir.path().join("chessclockctl-adjust.1").exists());
}

#[test]
fn eboard_decode_of_a_missing_file_says_so_and_exits_2() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["eboard", "decode", "no-such-capture.inbytes"])
        .output()
        .expect("run chessclockctl");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("no-such-capture.inbytes"), "stderr: {err}");
}
