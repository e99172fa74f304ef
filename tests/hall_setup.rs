//! A broken hall setting never stops a clock (issue 29, item 6).
//!
//! `chessclockd --check-config` reads the files `[hall]` points to as the
//! hall's start-up does, and refuses each broken kind with its path (and
//! `LINE:COLUMN` in a credentials file that is not TOML); a daemon started
//! with a broken credentials file or a garbage CA comes up anyway: its
//! clock starts and takes presses over D-Bus, it logs at ERROR why the hall
//! is off, every `State()` says so under `hall_off`, and `chessclockctl
//! status` prints it. No broker is needed: the hall never gets that far.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::path::{Path, PathBuf};
use std::process::Command;

use kit::daemon::{Client, Daemon, PrivateBus};
use kit::hall::secure::HallFiles;
use kit::hall::WAIT;

const DAEMON: &str = env!("CARGO_BIN_EXE_chessclockd");
const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");

/// A plan for the real files of a good hall (the script's CA and login).
const PLAN: &str = "hall open\nbroker 127.0.0.1\nhost pi1 b1\n";

/// A config of board `b1` (no devices) whose `[hall]` points to
/// `credentials` and, over `mqtts://`, to `ca`.
fn write_config(dir: &Path, credentials: &Path, ca: &Path) -> PathBuf {
    let config = dir.join("chessclockd.toml");
    std::fs::write(
        &config,
        format!(
            "{daemon}\n[[board]]\nid = \"b1\"\ncontrol = \"300+2\"\n\n[hall]\n\
             broker = \"mqtts://127.0.0.1:1\"\nname = \"open\"\nhost = \"pi1\"\n\
             credentials = \"{credentials}\"\nca = \"{ca}\"\n",
            daemon = kit::daemon::daemon_table(&dir.join("state")),
            credentials = credentials.display(),
            ca = ca.display(),
        ),
    )
    .unwrap();
    config
}

/// `chessclockd --check-config FILE`: (success, stdout, stderr).
fn check(config: &Path) -> (bool, String, String) {
    let output = Command::new(DAEMON)
        .arg("--check-config")
        .arg(config)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn check_config_reads_the_halls_credentials_and_ca() {
    let dir = tempfile::tempdir().unwrap();
    let files = HallFiles::generate(dir.path(), PLAN);
    let good_login = files.credentials("pi1");
    let good_ca = files.ca();
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let write = |name: &str, text: &str| {
        let path = broken.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };

    let (ok, out, err) = check(&write_config(dir.path(), &good_login, &good_ca));
    assert!(ok, "the good hall was refused: {err}");
    assert!(out.contains("ok (1 board)"), "{out}");

    let missing = broken.join("missing.toml");
    let empty = write("empty.toml", "");
    let malformed = write(
        "malformed.toml",
        "username = \"pi1\"\npassword = secret\"\n",
    );
    let garbage = write("garbage.pem", "this is not a certificate\n");
    let bad_block = write(
        "bad-block.pem",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    );
    let no_ca = broken.join("no-ca.pem");
    let cases: [(&str, &Path, &Path, String); 7] = [
        (
            "a missing credentials file",
            &missing,
            &good_ca,
            format!("{}: cannot read the credentials file", missing.display()),
        ),
        (
            "an empty credentials file",
            &empty,
            &good_ca,
            format!(
                "{}:1:1: the credentials file: missing field `username`",
                empty.display()
            ),
        ),
        (
            "a malformed credentials file",
            &malformed,
            &good_ca,
            format!("{}:2:12: the credentials file: ", malformed.display()),
        ),
        (
            "a directory as the credentials file",
            &broken,
            &good_ca,
            format!("{}: cannot read the credentials file", broken.display()),
        ),
        (
            "a garbage CA",
            &good_login,
            &garbage,
            format!("{}: the CA file holds no certificate", garbage.display()),
        ),
        (
            "a CA whose certificate is not X.509",
            &good_login,
            &bad_block,
            format!(
                "{}: the CA file: 1 of its 1 certificate(s)",
                bad_block.display()
            ),
        ),
        (
            "a missing CA",
            &good_login,
            &no_ca,
            format!("{}: cannot read the CA file", no_ca.display()),
        ),
    ];
    for (what, credentials, ca, expected) in cases {
        let config = write_config(dir.path(), credentials, ca);
        let (ok, _, err) = check(&config);
        assert!(!ok, "{what}: --check-config passed");
        assert!(
            err.starts_with(&expected),
            "{what}: expected `{expected}...`, got: {err}"
        );
        assert!(
            err.contains(&format!("(the [hall] of {})", config.display())),
            "{what}: the config file is not named: {err}"
        );
    }
}

/// A daemon whose hall cannot be set up (`credentials`, `ca`): its clock
/// runs and takes presses over D-Bus; the hall is off with `expected` as
/// the reason, in the journal at ERROR, in `State()` and in `chessclockctl
/// status`.
async fn clocks_run_without_the_hall(credentials: &Path, ca: &Path, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), credentials, ca);
    let bus = PrivateBus::session_in(dir.path());
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;

    client.board.start().await.unwrap();
    client.board.press("white").await.unwrap();
    let state = client.state().await;
    assert_eq!(state["started"], true, "{state}");
    assert_eq!(state["white"]["moves"], 1, "{state}");
    assert_eq!(state["running"], "black", "{state}");
    let reason = state["hall_off"]
        .as_str()
        .unwrap_or_else(|| panic!("no hall_off: {state}"));
    assert!(reason.contains(expected), "{reason}");

    let log = daemon.log();
    let line = log
        .lines()
        .find(|line| line.contains("hall: OFF"))
        .unwrap_or_else(|| panic!("no `hall: OFF` in the log: {log}"));
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains(expected), "{line}");
    assert!(!log.contains("cannot reach the broker"), "{log}");

    let output = tokio::process::Command::new(CTL)
        .args(["--user", "status", "b1"])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let note = stdout
        .lines()
        .find(|line| line.starts_with("hall: OFF: "))
        .unwrap_or_else(|| panic!("ctl status does not say the hall is off: {stdout}"));
    assert!(note.contains(expected), "{note}");
    drop(daemon);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_credentials_file_or_a_garbage_ca_leaves_the_clocks_running() {
    let dir = tempfile::tempdir().unwrap();
    let files = HallFiles::generate(dir.path(), PLAN);
    let malformed = dir.path().join("malformed.toml");
    std::fs::write(&malformed, "username = \"pi1\"\npassword = secret\"\n").unwrap();
    clocks_run_without_the_hall(
        &malformed,
        &files.ca(),
        &format!("{}:2:12: the credentials file", malformed.display()),
    )
    .await;
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "this is not a certificate\n").unwrap();
    clocks_run_without_the_hall(
        &files.credentials("pi1"),
        &garbage,
        &format!("{}: the CA file holds no certificate", garbage.display()),
    )
    .await;
}
