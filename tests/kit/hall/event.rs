//! The event desk's set-up, shared by the desk's tests: the fixtures of
//! `tests/data/hall`, `chessclock-hall` run as a command (its CLI: the
//! desk's `round`, `passwd`, `pairings`), and a daemon with boards on the
//! test's broker.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::round::HALL;
use super::{Broker, WAIT};
use crate::kit::daemon::{Client, Daemon, PrivateBus};

/// A file of `tests/data/hall`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hall")
        .join(name)
}

/// Runs `chessclock-hall ARGS` with `stdin`: exit success, stdout, stderr.
pub async fn hall(args: Vec<String>, stdin: &str) -> (bool, String, String) {
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = Command::new(crate::kit::binary("chessclock-hall"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// The desk's command line of `chessclock-hall` for the hub at `url`,
/// as `user` with the password in `password_file`, then `rest`.
pub fn desk_command(url: &str, user: &str, password_file: &str, rest: &[&str]) -> Vec<String> {
    let mut args = strings(&[
        "round",
        "--hub",
        url,
        "--user",
        user,
        "--password-file",
        password_file,
    ]);
    args.extend(strings(rest));
    args
}

/// The `[[board]]` table of a board without devices (5 minutes).
pub fn plain_board(id: &str) -> String {
    format!("[[board]]\nid = \"{id}\"\ncontrol = \"300\"\n")
}

/// The configuration of a daemon of hall [`HALL`] as host `host`: the
/// kit's `[daemon]` table (state in `dir/state`), then `boards` (each a
/// `[[board]]` table's text) and the `[hall]` table for `broker` (a
/// URL), with `more` (`credentials`, `ca`: lines of the table) if given.
pub fn hall_daemon_config(
    dir: &Path,
    broker: &str,
    host: &str,
    boards: &[String],
    more: &str,
) -> PathBuf {
    let config = dir.join("chessclockd.toml");
    let mut text = crate::kit::daemon::daemon_table(&dir.join("state"));
    for board in boards {
        text.push('\n');
        text.push_str(board);
    }
    text.push_str(&format!(
        "\n[hall]\nbroker = \"{broker}\"\nname = \"{HALL}\"\nhost = \"{host}\"\n{more}"
    ));
    std::fs::write(&config, text).unwrap();
    config
}

/// A daemon with boards b1-b3 (5 minutes, no devices) as host `pi1` on
/// the test's broker, and a client of its board b1.
pub async fn daemon(dir: &Path, broker: &Broker) -> (PrivateBus, Daemon, Client) {
    let bus = PrivateBus::session_in(dir);
    let boards: Vec<String> = ["b1", "b2", "b3"].map(plain_board).into();
    let url = format!("mqtt://127.0.0.1:{}", broker.port);
    let config = hall_daemon_config(dir, &url, "pi1", &boards, "");
    let daemon = Daemon::spawn(&config, &bus, dir.join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;
    (bus, daemon, client)
}
