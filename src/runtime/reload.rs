//! What a reload (SIGHUP) changes, key by key.
//!
//! [`plan`] compares the running configuration with the new file and
//! decides, for every key whose value differs, whether the running daemon
//! applies it at once or keeps its running value until a restart.
//!
//! Promises: [`plan`] is pure (no I/O, no logging: the runtime logs the
//! [`KeyChange`]s); every differing key appears exactly once in
//! [`Plan::changes`], named as in the file (`daemon.admin-group`,
//! `board.b1.control`, `presets.blitz`); [`Plan::effective`] is the new
//! configuration with every restart-only key kept at its running value and
//! every removed board kept, so it is what the daemon runs after the reload;
//! the running boards keep their positions and the added ones follow, in
//! the file's order. A key this module does not know is classified as
//! needing a restart (the safe side): a new key must be added to
//! [`classify`] to be applied live.
//!
//! Decisions (README "Reloading the configuration"):
//! * applied at once: `daemon.admin-group`, `daemon.require-ntp-for-
//!   scheduled-start`, `daemon.radios`, `daemon.pgn-dir`, `daemon.default-time-ms`,
//!   `daemon.resume-after-restart`, `[event]`, `[engine]`, `[display]`,
//!   `[presets]`, an added board (unless one of its devices is in use by a
//!   running board; it starts with its stored game, paused, when the state
//!   has one, else a new game of its control), and a board's `control` (a game not yet started takes
//!   it at once, a game in progress keeps its control), `white-button`,
//!   `start-on-black-press`, `short-control` (it only silences a warning)
//!   and PGN tags (`[event]`, `[engine]` and the
//!   tags from the next game);
//! * kept until a restart (logged at WARN): `daemon.state-dir`, `bus`,
//!   `crash-safety`, `rt-priority`, `mlock`, `watch-dirs`, `[hall]`, a board's
//!   `buttons`, `displays` and `eboard` (its device links stay open on the
//!   old devices), and a removed board (it keeps running: removing a board
//!   under a game would lose the game, and boards are addressed by position
//!   by the running threads).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::config::{BoardConfig, Config, DeviceRef};

/// What the daemon does with one changed key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// In effect once the reload is done.
    Applied,
    /// The running value stays until the daemon restarts.
    NeedsRestart,
}

/// One key whose value differs between the running config and the new one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyChange {
    /// The key as written in the file, dotted (`board.<id>.<key>` for a
    /// board's keys, `board.<id>` for a board added or removed).
    pub key: String,
    /// The running value (TOML-like text; `(none)` when absent).
    pub old: String,
    /// The new file's value.
    pub new: String,
    pub decision: Decision,
    /// Why, or what "applied" means for this key, when it is not obvious.
    pub note: String,
}

impl fmt::Display for KeyChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let decision = match self.decision {
            Decision::Applied => "applied",
            Decision::NeedsRestart => "needs a restart",
        };
        write!(f, "{}: {} -> {}: {decision}", self.key, self.old, self.new)?;
        if !self.note.is_empty() {
            write!(f, " ({})", self.note)?;
        }
        Ok(())
    }
}

/// The outcome of comparing two configs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Every changed key, in file order (sections, then boards).
    pub changes: Vec<KeyChange>,
    /// What the daemon runs after the reload (see the module docs).
    pub effective: Config,
    /// The ids of the boards to create, in file order (they are the last
    /// entries of `effective.boards`).
    pub added: Vec<String>,
}

impl Plan {
    /// One line per change (the transcript the tests compare).
    pub fn transcript(&self) -> String {
        self.changes
            .iter()
            .map(|change| format!("{change}\n"))
            .collect()
    }
}

/// Keys of `[daemon]` that only take effect at start-up.
const RESTART_DAEMON_KEYS: &[&str] = &[
    "state-dir",
    "crash-safety",
    "bus",
    "rt-priority",
    "mlock",
    "watch-dirs",
];

/// Keys of `[daemon]` the running daemon applies at once.
const LIVE_DAEMON_KEYS: &[&str] = &[
    "admin-group",
    "require-ntp-for-scheduled-start",
    "pgn-dir",
    "default-time-ms",
    "resume-after-restart",
    "radios",
];

/// A board's keys that name its devices (their links are opened at start).
const BOARD_DEVICE_KEYS: &[&str] = &["buttons", "displays", "eboard"];

/// A board's keys the running daemon applies at once (its `control` and
/// PGN tags are decided apart).
const LIVE_BOARD_KEYS: &[&str] = &["white-button", "start-on-black-press", "short-control"];

/// A board's PGN tags (a game's tags are set when it starts).
const BOARD_TAG_KEYS: &[&str] = &["event", "site", "round", "white", "black"];

/// The decision for a changed key (`board.<id>.<key>` for a board's key),
/// with its note. Unknown keys need a restart.
pub fn classify(key: &str) -> (Decision, &'static str) {
    let mut parts = key.splitn(3, '.');
    let section = parts.next().unwrap_or_default();
    let second = parts.next().unwrap_or_default();
    let rest = parts.next().unwrap_or_default();
    match section {
        "daemon" if second == "admin-group" => (Decision::Applied, "authorises the next change"),
        "daemon" if LIVE_DAEMON_KEYS.contains(&second) => (Decision::Applied, ""),
        "daemon" if RESTART_DAEMON_KEYS.contains(&second) => (Decision::NeedsRestart, ""),
        "event" | "engine" => (Decision::Applied, "from the next game"),
        "display" | "presets" => (Decision::Applied, ""),
        "hall" => (
            Decision::NeedsRestart,
            "the broker connection is made at start-up",
        ),
        "board" if rest == "control" => (
            Decision::Applied,
            "a game not yet started takes it now; a game in progress keeps its control",
        ),
        "board" if BOARD_TAG_KEYS.contains(&rest) => (Decision::Applied, "from the next game"),
        "board" if LIVE_BOARD_KEYS.contains(&rest) => (Decision::Applied, ""),
        "board" if BOARD_DEVICE_KEYS.contains(&rest) => (
            Decision::NeedsRestart,
            "the board's device links stay on the old devices",
        ),
        _ => (Decision::NeedsRestart, "not reloadable"),
    }
}

/// Compares `running` with `new` (both already validated) key by key.
pub fn plan(running: &Config, new: &Config) -> Plan {
    let mut changes = Vec::new();
    let old_json = to_json(running);
    let new_json = to_json(new);
    for section in ["daemon", "event", "engine", "display", "presets", "hall"] {
        diff_values(
            section,
            old_json.get(section),
            new_json.get(section),
            &mut changes,
        );
    }

    let mut effective = new.clone();
    // Restart-only keys keep their running values.
    let daemon = &mut effective.daemon;
    daemon.state_dir = running.daemon.state_dir.clone();
    daemon.crash_safety = running.daemon.crash_safety;
    daemon.bus = running.daemon.bus;
    daemon.rt_priority = running.daemon.rt_priority;
    daemon.mlock = running.daemon.mlock;
    daemon.watch_dirs = running.daemon.watch_dirs.clone();
    // The hall's connection is made at start-up.
    effective.hall = running.hall.clone();

    // Running boards first, in their running order (their positions are
    // their addresses in the running threads).
    let mut boards = Vec::new();
    for old in &running.boards {
        match new.boards.iter().find(|b| b.id == old.id) {
            Some(board) => {
                diff_values(
                    &format!("board.{}", old.id),
                    Some(&board_json(old)),
                    Some(&board_json(board)),
                    &mut changes,
                );
                let mut kept = board.clone();
                kept.buttons = old.buttons.clone();
                kept.displays = old.displays.clone();
                kept.eboard = old.eboard.clone();
                boards.push(kept);
            }
            None => {
                changes.push(KeyChange {
                    key: format!("board.{}", old.id),
                    old: "(configured)".into(),
                    new: "(removed)".into(),
                    decision: Decision::NeedsRestart,
                    note: "the board keeps running until the daemon restarts".into(),
                });
                boards.push(old.clone());
            }
        }
    }
    let mut added = Vec::new();
    for board in &new.boards {
        if running.boards.iter().any(|b| b.id == board.id) {
            continue;
        }
        let key = format!("board.{}", board.id);
        match device_in_use(board, &boards) {
            Some((device, user)) => changes.push(KeyChange {
                key,
                old: "(none)".into(),
                new: "(added)".into(),
                decision: Decision::NeedsRestart,
                note: format!(
                    "its device {} is still used by board {user}",
                    String::from(device)
                ),
            }),
            None => {
                changes.push(KeyChange {
                    key,
                    old: "(none)".into(),
                    new: "(added)".into(),
                    decision: Decision::Applied,
                    note: "starts now".into(),
                });
                added.push(board.id.clone());
                boards.push(board.clone());
            }
        }
    }
    effective.boards = boards;
    Plan {
        changes,
        effective,
        added,
    }
}

/// A device of `board` that a board of `running` already uses.
fn device_in_use(board: &BoardConfig, running: &[BoardConfig]) -> Option<(DeviceRef, String)> {
    let devices = |b: &BoardConfig| -> Vec<DeviceRef> {
        let mut all: Vec<DeviceRef> = b.buttons.iter().cloned().collect();
        all.extend(b.displays.iter().map(|d| d.device.clone()));
        all.extend(b.eboard.iter().cloned());
        all
    };
    let wanted = devices(board);
    running.iter().find_map(|other| {
        devices(other)
            .into_iter()
            .find(|device| wanted.contains(device))
            .map(|device| (device, other.id.clone()))
    })
}

fn to_json(config: &Config) -> Value {
    serde_json::to_value(config).unwrap_or(Value::Null)
}

fn board_json(board: &BoardConfig) -> Value {
    let mut value = serde_json::to_value(board).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("id");
    }
    value
}

/// Records every leaf under `key` whose value differs (tables are walked
/// key by key; arrays and scalars are compared whole).
fn diff_values(key: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<KeyChange>) {
    match (old, new) {
        (Some(Value::Object(old)), Some(Value::Object(new))) => {
            let keys: BTreeMap<&String, ()> =
                old.keys().chain(new.keys()).map(|k| (k, ())).collect();
            for name in keys.keys() {
                diff_values(
                    &format!("{key}.{name}"),
                    old.get(*name),
                    new.get(*name),
                    out,
                );
            }
        }
        (old, new) if old == new => {}
        (old, new) => {
            let (decision, note) = classify(key);
            out.push(KeyChange {
                key: key.to_owned(),
                old: show(old),
                new: show(new),
                decision,
                note: note.to_owned(),
            });
        }
    }
}

/// A value as the log shows it: strings quoted, absent as `(none)`.
fn show(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "(none)".into(),
        Some(value) => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn config(text: &str) -> Config {
        Config::parse_str(text, Path::new("test.toml")).unwrap()
    }

    const BASE: &str = r#"
[daemon]
state-dir = "/var/lib/chessclockd"
admin-group = "chessclock"

[[board]]
id = "b1"
control = "60"
buttons = "/dev/b1-buttons"
displays = ["/dev/b1-display"]
"#;

    #[test]
    fn the_same_config_changes_nothing() {
        let plan = plan(&config(BASE), &config(BASE));
        assert_eq!(plan.transcript(), "");
        assert!(plan.added.is_empty());
        assert_eq!(plan.effective, config(BASE));
    }

    #[test]
    fn every_key_class_is_decided_aloud() {
        let new = BASE
            .replace("admin-group = \"chessclock\"", "admin-group = \"arbiters\"\nbus = \"session\"\nrt-priority = 10\npgn-dir = \"/srv/pgn\"")
            .replace("state-dir = \"/var/lib/chessclockd\"", "state-dir = \"/srv/state\"")
            .replace("control = \"60\"", "control = \"180+2\"\nwhite = \"Carlsen\"")
            .replace("/dev/b1-display", "/dev/other-display")
            + r#"
[event]
name = "Open"

[[board]]
id = "b2"
control = "300+3"
buttons = "/dev/b2-buttons"
"#;
        let plan = plan(&config(BASE), &config(&new));
        let transcript = plan.transcript();
        let expected = "\
daemon.admin-group: \"chessclock\" -> \"arbiters\": applied (authorises the next change)
daemon.bus: \"system\" -> \"session\": needs a restart
daemon.pgn-dir: (none) -> \"/srv/pgn\": applied
daemon.rt-priority: 50 -> 10: needs a restart
daemon.state-dir: \"/var/lib/chessclockd\" -> \"/srv/state\": needs a restart
event.name: (none) -> \"Open\": applied (from the next game)
board.b1.control: \"60\" -> \"180+2\": applied (a game not yet started takes it now; a game in progress keeps its control)
board.b1.displays: [\"/dev/b1-display\"] -> [\"/dev/other-display\"]: needs a restart (the board's device links stay on the old devices)
board.b1.white: (none) -> \"Carlsen\": applied (from the next game)
board.b2: (none) -> (added): applied (starts now)
";
        assert_eq!(transcript, expected, "{transcript}");
        // What runs: the live keys new, the restart-only ones as before.
        let running = &plan.effective;
        assert_eq!(running.daemon.admin_group, "arbiters");
        assert_eq!(
            running.daemon.pgn_dir.as_deref(),
            Some(Path::new("/srv/pgn"))
        );
        assert_eq!(running.daemon.bus, crate::config::BusKind::System);
        assert_eq!(running.daemon.rt_priority, 50);
        assert_eq!(running.daemon.state_dir, Path::new("/var/lib/chessclockd"));
        assert_eq!(running.boards[0].control, "180+2");
        assert_eq!(
            running.boards[0].displays,
            config(BASE).boards[0].displays,
            "the running display link stays"
        );
        assert_eq!(plan.added, vec!["b2".to_owned()]);
        assert_eq!(running.boards[1].id, "b2");
    }

    #[test]
    fn a_removed_board_keeps_running_and_says_so() {
        let new = BASE
            .replace("id = \"b1\"", "id = \"b3\"")
            .replace("/dev/b1-", "/dev/b3-");
        let plan = plan(&config(BASE), &config(&new));
        assert_eq!(
            plan.transcript(),
            "board.b1: (configured) -> (removed): needs a restart (the board keeps running until the daemon restarts)\n\
             board.b3: (none) -> (added): applied (starts now)\n"
        );
        let ids: Vec<&str> = plan
            .effective
            .boards
            .iter()
            .map(|b| b.id.as_str())
            .collect();
        assert_eq!(ids, ["b1", "b3"]);
    }

    #[test]
    fn an_added_board_on_a_running_boards_device_waits_for_a_restart() {
        // b1 renamed b3 on the same devices: b1 keeps them until a restart.
        let new = BASE.replace("id = \"b1\"", "id = \"b3\"");
        let plan = plan(&config(BASE), &config(&new));
        assert_eq!(
            plan.transcript(),
            "board.b1: (configured) -> (removed): needs a restart (the board keeps running until the daemon restarts)\n\
             board.b3: (none) -> (added): needs a restart (its device /dev/b1-buttons is still used by board b1)\n"
        );
        assert!(plan.added.is_empty());
        assert_eq!(plan.effective.boards.len(), 1);
    }

    #[test]
    fn presets_engine_and_display_apply() {
        let new = BASE.to_owned()
            + r#"
[engine]
credit = "after-move"

[display]
brightness = 10

[presets.club]
control = "600+5"
"#;
        let plan = plan(&config(BASE), &config(&new));
        for change in &plan.changes {
            assert_eq!(change.decision, Decision::Applied, "{change}");
        }
        assert!(
            plan.transcript().contains("presets.club"),
            "{}",
            plan.transcript()
        );
        assert!(
            plan.transcript().contains("engine.credit"),
            "{}",
            plan.transcript()
        );
        assert!(
            plan.transcript().contains("display.brightness"),
            "{}",
            plan.transcript()
        );
    }

    #[test]
    fn every_key_of_the_file_has_a_rule() {
        // Walk every leaf of a full config: none may fall to the
        // "not reloadable" default, so a key added to the config must be
        // classified here too.
        let full = config(include_str!("../../config/chessclockd.toml"));
        let json = to_json(&full);
        let Value::Object(sections) = json else {
            panic!("a config is a table")
        };
        let mut leaves = Vec::new();
        for (section, value) in &sections {
            if section == "board" {
                for board in full.boards.iter().take(1) {
                    if let Value::Object(keys) = board_json(board) {
                        leaves.extend(keys.keys().map(|k| format!("board.{}.{k}", board.id)));
                    }
                }
            } else if section == "presets" {
                leaves.push("presets.any".into());
            } else if let Value::Object(keys) = value {
                leaves.extend(keys.keys().map(|k| format!("{section}.{k}")));
            }
        }
        assert!(leaves.len() > 20, "{leaves:?}");
        for leaf in leaves {
            assert_ne!(classify(&leaf).1, "not reloadable", "{leaf} has no rule");
        }
    }
}
