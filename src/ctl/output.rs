//! What `chessclockctl` prints: the board table (times extrapolated from a
//! snapshot to the daemon's "now"), history lines and CSV. Pure functions.

use serde::Deserialize;
use serde_json::Value;

use super::time::format_ms;

/// One device link as the daemon reports it.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Link {
    pub role: String,
    pub name: String,
    pub connected: bool,
    pub serial: Option<String>,
}

/// A board's snapshot (`Board.Snapshot()`), plus the JSON it came from.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Snapshot {
    pub board: String,
    pub control: String,
    pub snapshot_ms: i64,
    pub started: bool,
    pub running: Option<String>,
    pub paused: bool,
    pub white_remaining_ms: i64,
    pub black_remaining_ms: i64,
    pub white_moves: u32,
    pub black_moves: u32,
    pub white_stage: u32,
    pub black_stage: u32,
    pub flags: Vec<String>,
    pub devices: Vec<Link>,
    pub arbiter_called: bool,
    #[serde(skip)]
    pub raw: Value,
}

impl Snapshot {
    pub fn parse(text: &str) -> Result<Snapshot, String> {
        let raw: Value = serde_json::from_str(text)
            .map_err(|e| format!("the daemon sent a snapshot that is not JSON: {e}"))?;
        let mut snapshot: Snapshot = serde_json::from_value(raw.clone())
            .map_err(|e| format!("the daemon sent an unexpected snapshot: {e}"))?;
        snapshot.raw = raw;
        Ok(snapshot)
    }

    /// A side's remaining time at `now_ms` (daemon monotonic): the running
    /// side's clock has run since the snapshot.
    pub fn remaining_at(&self, side: &str, now_ms: i64) -> i64 {
        let at_snapshot = if side == "white" {
            self.white_remaining_ms
        } else {
            self.black_remaining_ms
        };
        if self.running.as_deref() == Some(side) && !self.paused {
            at_snapshot - (now_ms - self.snapshot_ms).max(0)
        } else {
            at_snapshot
        }
    }

    fn state_text(&self) -> String {
        let mut text = if !self.started {
            "not started".to_owned()
        } else if self.paused {
            "paused".to_owned()
        } else if let Some(side) = &self.running {
            format!("{side} to move")
        } else {
            "stopped".to_owned()
        };
        if self.arbiter_called {
            text.push_str(", ARBITER CALLED");
        }
        text
    }

    fn side_text(&self, side: &str, now_ms: i64) -> String {
        let (moves, stage) = if side == "white" {
            (self.white_moves, self.white_stage)
        } else {
            (self.black_moves, self.black_stage)
        };
        let marker = if self.running.as_deref() == Some(side) && !self.paused {
            ">"
        } else {
            " "
        };
        format!(
            "{marker}{:>9}  {moves:>3} mv  st {stage}",
            format_ms(self.remaining_at(side, now_ms))
        )
    }

    fn devices_text(&self) -> String {
        if self.devices.is_empty() {
            return "-".to_owned();
        }
        self.devices
            .iter()
            .map(|link| {
                format!(
                    "{} {}",
                    link.role,
                    if link.connected { "ok" } else { "DOWN" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The board table of `status` and `watch`.
pub struct Table;

impl Table {
    /// One header line and one line per board, times at `now_ms`.
    pub fn render(boards: &[Snapshot], now_ms: i64) -> String {
        let header = [
            "BOARD", "CONTROL", "STATE", "WHITE", "BLACK", "FLAGS", "DEVICES",
        ]
        .map(str::to_owned);
        let mut rows = vec![header.to_vec()];
        for board in boards {
            rows.push(vec![
                board.board.clone(),
                board.control.clone(),
                board.state_text(),
                board.side_text("white", now_ms),
                board.side_text("black", now_ms),
                if board.flags.is_empty() {
                    "-".to_owned()
                } else {
                    board.flags.join(",")
                },
                board.devices_text(),
            ]);
        }
        let columns = rows[0].len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                rows.iter()
                    .map(|row| row[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut text = String::new();
        for row in rows {
            let line: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| format!("{cell:<width$}", width = widths[c]))
                .collect();
            text.push_str(line.join("  ").trim_end());
            text.push('\n');
        }
        text
    }
}

/// What the board table cannot show, from a board's `State()` JSON: a
/// scheduled start still to come, a side that has not moved within the
/// competition's default time (Art. 6.7: the arbiter decides), the
/// electronic board (link, moves, Art. 6.4 / 6.9 flag report, game end).
pub fn state_notes(board: &str, state: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    let started = state
        .get("started")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let (false, Some(at), Some(t)) = (
        started,
        state.get("scheduled_start_ms").and_then(Value::as_i64),
        state.get("t").and_then(Value::as_i64),
    ) {
        notes.push(format!(
            "{board}: starts in {} (scheduled)",
            format_ms((at - t).max(0))
        ));
    }
    if let Some(Value::Array(sides)) = state.get("default_time_overrun") {
        for side in sides.iter().filter_map(Value::as_str) {
            notes.push(format!(
                "{board}: {side} has not moved within the default time (Art. 6.7); \
                 the arbiter decides"
            ));
        }
    }
    if let Some(result) = state.get("result").filter(|r| !r.is_null()) {
        notes.push(format!(
            "{board}: result {} ({})",
            result.get("result").and_then(Value::as_str).unwrap_or("?"),
            result
                .get("termination")
                .and_then(Value::as_str)
                .unwrap_or("?")
        ));
    }
    if let Some(line) = state.get("eboard").and_then(eboard_status_line) {
        notes.push(format!("{board}: {line}"));
    }
    notes
}

/// What `State()`'s `state_health` says, one line each, when there is
/// anything to say (the state is damaged, or kept in memory only).
pub fn health_notes(state: &Value) -> Vec<String> {
    let Some(health) = state.get("state_health") else {
        return Vec::new();
    };
    let memory = health.get("mode").and_then(Value::as_str) == Some("memory");
    let mut notes = Vec::new();
    if let Some(Value::Array(findings)) = health.get("findings") {
        for finding in findings {
            let message = finding.get("message").and_then(Value::as_str).unwrap_or("");
            let board = finding.get("board").and_then(Value::as_str);
            let kind = finding.get("kind").and_then(Value::as_str).unwrap_or("");
            let head = if kind == "no-crash-safety" {
                "state: NOT SAVED"
            } else {
                "state: DAMAGED"
            };
            notes.push(match board {
                Some(board) => format!("{head}: {board}: {message}"),
                None => format!("{head}: {message}"),
            });
        }
    }
    if let Some(evidence) = health.get("evidence").and_then(Value::as_str) {
        notes.push(format!("state: the damaged files were kept in {evidence}"));
    }
    if memory && notes.is_empty() {
        notes.push("state: NOT SAVED: kept in memory only, no crash safety".to_owned());
    }
    notes
}

/// The entries of a history document: the array itself, or the first array
/// of objects inside an object.
fn history_entries(history: &Value) -> Option<&Vec<Value>> {
    match history {
        Value::Array(entries) => Some(entries),
        Value::Object(map) => map.values().find_map(|value| match value {
            Value::Array(entries) if entries.iter().all(Value::is_object) => Some(entries),
            _ => None,
        }),
        _ => None,
    }
}

fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// History for people: one line per entry, `key=value` pairs.
pub fn history_lines(history: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(history) else {
        return format!("{history}\n");
    };
    let Some(entries) = history_entries(&value) else {
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    };
    let mut text = String::new();
    for entry in entries {
        match entry {
            Value::Object(map) => {
                let pairs: Vec<String> = map
                    .iter()
                    .map(|(key, value)| format!("{key}={}", cell(value)))
                    .collect();
                text.push_str(&pairs.join("  "));
            }
            other => text.push_str(&cell(other)),
        }
        text.push('\n');
    }
    text
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// History as CSV (RFC 4180): one column per key, in first-seen order.
pub fn history_csv(history: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(history)
        .map_err(|e| format!("the daemon sent a history that is not JSON: {e}"))?;
    let entries = history_entries(&value)
        .ok_or_else(|| "the daemon's history has no list of entries to export".to_owned())?;
    let mut columns: Vec<String> = Vec::new();
    for entry in entries {
        if let Value::Object(map) = entry {
            for key in map.keys() {
                if !columns.contains(key) {
                    columns.push(key.clone());
                }
            }
        }
    }
    let mut text = columns
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    text.push_str("\r\n");
    for entry in entries {
        let row: Vec<String> = columns
            .iter()
            .map(|column| csv_field(&entry.get(column).map(cell).unwrap_or_default()))
            .collect();
        text.push_str(&row.join(","));
        text.push_str("\r\n");
    }
    Ok(text)
}

/// One line for `chessclockctl status` from the State JSON's `eboard`
/// object (`None` when the board has no electronic board).
pub fn eboard_status_line(eboard: &Value) -> Option<String> {
    let eboard = eboard.as_object()?;
    let link = if eboard.get("connected") == Some(&Value::Bool(true)) {
        "connected"
    } else {
        "not connected"
    };
    let mut line = format!(
        "e-board {}: {link}, {} half-moves",
        eboard.get("name").and_then(Value::as_str).unwrap_or("?"),
        eboard.get("ply").and_then(Value::as_u64).unwrap_or(0)
    );
    if let Some(end) = eboard.get("game_end").filter(|v| !v.is_null()) {
        let reason = end.get("reason").and_then(Value::as_str).unwrap_or("?");
        line.push_str(&format!("; game over on the board: {reason}"));
        if let Some(winner) = end.get("winner").and_then(Value::as_str) {
            line.push_str(&format!(" ({winner} wins)"));
        }
    }
    if let Some(report) = eboard.get("flag_report").filter(|v| !v.is_null()) {
        let side = report.get("side").and_then(Value::as_str).unwrap_or("?");
        let verdict = report.get("verdict").and_then(Value::as_str).unwrap_or("?");
        line.push_str(&format!("; {side}'s flag: {verdict}"));
        match report.get("moves_completed").and_then(Value::as_bool) {
            Some(true) => line.push_str(" (required moves completed, Art. 6.4)"),
            Some(false) => line.push_str(" (required moves not completed, Art. 6.4)"),
            None => {}
        }
        if report.get("opponent_can_mate") == Some(&Value::Bool(false)) {
            line.push_str(" (opponent cannot mate, Art. 6.9)");
        }
    }
    if eboard.get("next_game_waiting") == Some(&Value::Bool(true)) {
        line.push_str("; the board shows a new game: set it up with `chessclockctl new`");
    }
    if let Some(lever) = eboard.get("dgt_clock_lever").and_then(Value::as_str) {
        line.push_str(&format!("; DGT clock lever: {lever}"));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot::parse(
            r#"{"board":"b1","control":"300+2","snapshot_ms":10000,"started":true,
                "running":"white","paused":false,"white_remaining_ms":60000,
                "black_remaining_ms":45000,"white_moves":3,"black_moves":3,
                "white_stage":1,"black_stage":1,"flags":[],
                "devices":[{"role":"buttons","name":"/dev/x","connected":false,"serial":null}],
                "arbiter_called":true}"#,
        )
        .unwrap()
    }

    #[test]
    fn the_running_side_is_extrapolated() {
        let s = snapshot();
        assert_eq!(s.remaining_at("white", 12_500), 57_500);
        assert_eq!(s.remaining_at("black", 12_500), 45_000);
        let table = Table::render(&[s], 12_500);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("BOARD"));
        assert!(lines[1].contains(">     0:57"), "{table}");
        assert!(
            lines[1].contains("white to move, ARBITER CALLED"),
            "{table}"
        );
        assert!(lines[1].contains("buttons DOWN"), "{table}");
    }

    #[test]
    fn notes_for_scheduled_starts_and_default_time() {
        let state: Value = serde_json::from_str(
            r#"{"t":1000,"started":false,"scheduled_start_ms":91000,
                "default_time_overrun":[]}"#,
        )
        .unwrap();
        assert_eq!(
            state_notes("b1", &state),
            vec!["b1: starts in 1:30 (scheduled)"]
        );
        let state: Value = serde_json::from_str(
            r#"{"t":1000,"started":true,"scheduled_start_ms":null,
                "default_time_overrun":["white"]}"#,
        )
        .unwrap();
        let notes = state_notes("b1", &state);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("b1: white has not moved within the default time"));
        assert!(state_notes("b1", &Value::Null).is_empty());
    }

    #[test]
    fn notes_for_the_electronic_board() {
        let state: Value = serde_json::from_str(
            r#"{"t":1000,"started":true,"default_time_overrun":[],
                "eboard":{"name":"/dev/dgt","connected":true,"ply":3,"game_end":null,
                  "flag_report":{"side":"black","moves_completed":true,
                                 "opponent_can_mate":true,"verdict":"moves-completed"}}}"#,
        )
        .unwrap();
        assert_eq!(
            state_notes("b1", &state),
            vec![
                "b1: e-board /dev/dgt: connected, 3 half-moves; black's flag: moves-completed \
                 (required moves completed, Art. 6.4)"
            ]
        );
        let without: Value = serde_json::from_str(r#"{"eboard":null}"#).unwrap();
        assert!(state_notes("b1", &without).is_empty());
        let decided: Value = serde_json::from_str(
            r#"{"eboard":null,"result":{"result":"1-0","termination":"time forfeit"}}"#,
        )
        .unwrap();
        assert_eq!(
            state_notes("b2", &decided),
            vec!["b2: result 1-0 (time forfeit)"]
        );
    }

    #[test]
    fn csv_has_every_key_and_quotes() {
        let csv =
            history_csv(r#"[{"t":1,"what":"press"},{"t":2,"uid":0,"what":"a,b \"c\""}]"#).unwrap();
        assert_eq!(csv, "t,what,uid\r\n1,press,\r\n2,\"a,b \"\"c\"\"\",0\r\n");
        let nested = history_csv(r#"{"board":"b1","entries":[{"t":5}]}"#).unwrap();
        assert_eq!(nested, "t\r\n5\r\n");
        assert!(history_csv("{}").is_err());
    }

    #[test]
    fn history_lines_are_key_value_pairs() {
        assert_eq!(
            history_lines(r#"[{"t":1,"uid":null}]"#),
            "t=1  uid=\n".to_owned()
        );
    }
}
