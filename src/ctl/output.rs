//! What `chessclockctl` prints: the board table of `status`, the notes
//! under it, the history table, and the record as JSON and CSV. Pure
//! functions of the daemon's typed views (`chessclock_core::views`), which
//! the CLI deserialises from the daemon's JSON.
//!
//! Promises: every time is written by the one formatter
//! (`chessclock_core::clocktext`) in the board's own style, so `status`
//! shows what the board's displays show at the same instant; nothing
//! printed is Rust debug text.

use chessclock_core::clocktext;
use chessclock_core::engine::Side;
use chessclock_core::views::{
    EboardView, GameSummary, HistoryView, RecordRow, SideView, StateView, RECORD_COLUMNS,
};

use serde_json::Value;

use super::time::LocalTime;

/// A side's time as the board's displays show it.
pub fn side_time(view: &StateView, side: Side) -> String {
    side_time_of(view, view.side(side))
}

fn side_time_of(view: &StateView, side: &SideView) -> String {
    match side.remaining_ms {
        Some(ms) => clocktext::remaining_ms(ms, view.style()),
        None => clocktext::elapsed(side.used_ms.saturating_mul(1000), clocktext::Style::SECONDS),
    }
}

/// The board's state in a few words.
pub fn state_text(view: &StateView) -> String {
    let mut text = if let Some(over) = &view.over {
        format!("over: {}", over.why)
    } else if !view.started {
        if view.scheduled_start_ms.is_some() {
            "start scheduled".to_owned()
        } else {
            "not started".to_owned()
        }
    } else if view.frozen {
        "stopped (flag)".to_owned()
    } else if view.paused {
        "paused".to_owned()
    } else if let Some(side) = view.running {
        format!("{side} to move")
    } else {
        "stopped".to_owned()
    };
    if view.arbiter_called {
        text.push_str(", ARBITER CALLED");
    }
    text
}

fn side_cell(view: &StateView, side: Side) -> String {
    let own = view.side(side);
    let marker = if view.running == Some(side) { ">" } else { " " };
    format!(
        "{marker}{:>9}  {:>3} mv  st {}",
        side_time(view, side),
        own.moves,
        own.stage
    )
}

fn devices_text(view: &StateView) -> String {
    let mut links: Vec<String> = view
        .devices
        .iter()
        .map(|d| format!("{} {}", d.role, if d.connected { "ok" } else { "DOWN" }))
        .collect();
    if let Some(eboard) = &view.eboard {
        links.push(format!(
            "eboard {}",
            if eboard.connected { "ok" } else { "DOWN" }
        ));
    }
    if links.is_empty() {
        "-".to_owned()
    } else {
        links.join(", ")
    }
}

/// The board table of `status`: a header and one line per board.
pub fn status_table(views: &[StateView]) -> String {
    let header = [
        "BOARD", "CONTROL", "STATE", "WHITE", "BLACK", "FLAGS", "DEVICES",
    ]
    .map(str::to_owned);
    let mut rows = vec![header.to_vec()];
    for view in views {
        rows.push(vec![
            view.board.clone(),
            view.control.clone(),
            state_text(view),
            side_cell(view, Side::White),
            side_cell(view, Side::Black),
            if view.flags.is_empty() {
                "-".to_owned()
            } else {
                view.flags
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            },
            devices_text(view),
        ]);
    }
    columns(&rows)
}

/// `text` padded with spaces to `width` characters. Not with `format!`'s
/// width (`{:<width$}`): a width above 65,535 panics there ("Formatting
/// argument out of range"), and a cell may be longer than that (a history
/// row naming many tags).
pub fn pad(text: &str, width: usize) -> String {
    let mut padded = String::with_capacity(text.len().max(width));
    padded.push_str(text);
    padded.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text.chars().count()),
    ));
    padded
}

/// Rows of cells as aligned columns, two spaces apart.
fn columns(rows: &[Vec<String>]) -> String {
    let count = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..count)
        .map(|c| {
            rows.iter()
                .map(|row| row.get(c).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| pad(cell, widths[c]))
            .collect();
        text.push_str(line.join("  ").trim_end());
        text.push('\n');
    }
    text
}

/// When a scheduled start is due, in words: `at 14:00:00, in 4:59`.
pub fn start_text(view: &StateView, local: &LocalTime) -> Option<String> {
    let at = view.scheduled_start_ms?;
    let left_ms = (at - view.t).max(0);
    let when = view
        .scheduled_start_unix_ms
        .map(|unix_ms| format!("at {}, ", local.time_of_day(unix_ms.saturating_mul(1000))))
        .unwrap_or_default();
    Some(format!(
        "{when}in {}",
        clocktext::remaining_ms(left_ms, clocktext::Style::SECONDS)
    ))
}

/// The players the game's PGN tags name, `White - Black` (`?` for one
/// unnamed); `None` when neither is named.
pub fn players_text(view: &StateView) -> Option<String> {
    let players = &view.players;
    (!players.is_empty()).then(|| {
        format!(
            "{} - {}",
            players.white.as_deref().unwrap_or("?"),
            players.black.as_deref().unwrap_or("?")
        )
    })
}

/// What the board table cannot show: the players, a scheduled start to come, an
/// arbiter call, a restart (how long the daemon was down, whose clock runs
/// on resume), a side that has not moved within the default time (Art.
/// 6.7), presses that came too late, the electronic board.
pub fn state_notes(view: &StateView, local: &LocalTime) -> Vec<String> {
    let board = &view.board;
    let mut notes = Vec::new();
    if let Some(players) = players_text(view) {
        notes.push(format!("{board}: players {players} (White - Black)"));
    }
    if !view.started {
        if let Some(when) = start_text(view, local) {
            let check = match view.scheduled_start_forced {
                Some(true) => " (forced past the NTP check)",
                _ => "",
            };
            notes.push(format!("{board}: starts {when}{check} (scheduled)"));
        }
    }
    if view.arbiter_called {
        notes.push(format!(
            "{board}: ARBITER CALLED at the board (Art. 6.12b): the clock is paused; \
             chessclockctl resume {board} when dealt with"
        ));
        if let Some(by) = &view.arbiter_call_acknowledged_by {
            notes.push(format!("{board}: the call was acknowledged by {by}"));
        }
    }
    if let Some(restart) = view.restart.as_ref().filter(|_| view.paused) {
        let down = clocktext::remaining_ms(restart.down_ms, clocktext::Style::SECONDS);
        let how = if restart.same_boot {
            "the running side was charged the true time"
        } else {
            "the machine rebooted: the game went on from the last instant known"
        };
        let mut note = format!("{board}: the daemon was down {down} ({how})");
        if let Some(side) = restart.was_running {
            note.push_str(&format!("; {}'s clock was running", player(side)));
        }
        note.push_str(if restart.paused_at_game_ms.is_some() {
            "; paused for the arbiter (Art. 6.10a)"
        } else {
            "; paused"
        });
        if let Some(side) = view.to_move {
            note.push_str(&format!(": on resume {}'s clock runs", player(side)));
        }
        notes.push(note);
    }
    for side in &view.default_time_overrun {
        notes.push(format!(
            "{board}: {side} has not moved within the default time (Art. 6.7); \
             the arbiter decides"
        ));
    }
    if view.unplaced_presses > 0 {
        notes.push(format!(
            "{board}: {} press{} arrived too late to be placed (recorded, not applied): \
             chessclockctl history {board}",
            view.unplaced_presses,
            if view.unplaced_presses == 1 { "" } else { "es" }
        ));
    }
    if let Some(result) = &view.result {
        notes.push(format!(
            "{board}: result {} ({})",
            result.result, result.termination
        ));
    }
    if let Some(line) = view.eboard.as_ref().map(eboard_status_line) {
        notes.push(format!("{board}: {line}"));
    }
    notes
}

/// What `State()`'s `host_health` says, one line each (see
/// [`crate::host::HostHealth::notes`]); nothing from a daemon without it.
pub fn host_notes(state: &Value) -> Vec<String> {
    state
        .get("host_health")
        .and_then(|health| serde_json::from_value::<crate::host::HostHealth>(health.clone()).ok())
        .map(|health| health.notes())
        .unwrap_or_default()
}

/// What `State()` says of the daemon's health, one line each, when there
/// is anything to say: the configured hall is off (`hall_off`), or its
/// `state_health` says the store cannot save as it should, the state is
/// damaged, or kept in memory only.
pub fn health_notes(state: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(reason) = state.get("hall_off").and_then(Value::as_str) {
        notes.push(format!("hall: OFF: {reason}"));
    }
    notes.extend(state_health_notes(state));
    notes
}

/// What `State()`'s `state_health` says, one line each.
fn state_health_notes(state: &Value) -> Vec<String> {
    let Some(health) = state.get("state_health") else {
        return Vec::new();
    };
    let memory = health.get("mode").and_then(Value::as_str) == Some("memory");
    let mut notes = Vec::new();
    if let Some(message) = health
        .get("saving")
        .and_then(|saving| saving.get("message"))
        .and_then(Value::as_str)
    {
        notes.push(format!("state: {message}"));
    }
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

/// One line about the electronic board.
pub fn eboard_status_line(eboard: &EboardView) -> String {
    let link = if eboard.connected {
        "connected"
    } else {
        "not connected"
    };
    let mut line = format!("e-board {}: {link}, {} half-moves", eboard.name, eboard.ply);
    if let Some(end) = &eboard.game_end {
        line.push_str(&format!("; game over on the board: {}", end.reason));
        if let Some(winner) = end.winner {
            line.push_str(&format!(" ({winner} wins)"));
        }
    }
    if let Some(report) = &eboard.flag_report {
        line.push_str(&format!("; {}'s flag: {}", report.side, report.verdict));
        match report.moves_completed {
            Some(true) => line.push_str(" (required moves completed, Art. 6.4)"),
            Some(false) => line.push_str(" (required moves not completed, Art. 6.4)"),
            None => {}
        }
        if !report.opponent_can_mate {
            line.push_str(" (opponent cannot mate, Art. 6.9)");
        }
    }
    if eboard.next_game_waiting {
        line.push_str("; the board shows a new game: set it up with `chessclockctl new`");
    }
    if let Some(lever) = &eboard.dgt_clock_lever {
        line.push_str(&format!("; DGT clock lever: {lever}"));
    }
    line
}

/// `White` or `Black`, as a sentence names a player.
fn player(side: Side) -> &'static str {
    match side {
        Side::White => "White",
        Side::Black => "Black",
    }
}

fn clock_cell(ms: Option<i64>, style: clocktext::Style) -> String {
    ms.map_or_else(|| "-".to_owned(), |ms| clocktext::remaining_ms(ms, style))
}

/// The history as a table a person reads: time of day, game time, move,
/// side, time used, both clocks after, who, what.
pub fn history_table(history: &HistoryView, local: &LocalTime) -> String {
    let header = &history.header;
    let mut text = format!(
        "{}: {}{}{}\n",
        header.board,
        match header.game {
            Some(game) => format!("game {game}, "),
            None => String::new(),
        },
        header.control,
        header
            .control_prose
            .as_deref()
            .map_or(String::new(), |p| format!(" ({p})"))
    );
    let mut rows = vec![[
        "TIME", "GAME", "MOVE", "SIDE", "USED", "WHITE", "BLACK", "WHO", "WHAT",
    ]
    .map(str::to_owned)
    .to_vec()];
    for record in history.records() {
        rows.push(record_cells(&record, local, header.style()));
    }
    text.push_str(&columns(&rows));
    text
}

fn record_cells(record: &RecordRow, local: &LocalTime, style: clocktext::Style) -> Vec<String> {
    vec![
        local.time_of_day(record.wall_us),
        clocktext::exact(record.game_ms.saturating_mul(1000)),
        record
            .move_number
            .map_or_else(String::new, |n| n.to_string()),
        record.side.map_or_else(String::new, |s| s.to_string()),
        record
            .used_ms
            .map_or_else(String::new, |ms| clocktext::exact(ms.saturating_mul(1000))),
        clock_cell(record.white_ms, style),
        clock_cell(record.black_ms, style),
        record.who.clone(),
        record.what.clone(),
    ]
}

/// A board's games: number, control, start, end, result, moves.
pub fn games_table(games: &[GameSummary], local: &LocalTime) -> String {
    let mut rows = vec![["GAME", "CONTROL", "START", "END", "RESULT", "MOVES"]
        .map(str::to_owned)
        .to_vec()];
    for game in games {
        rows.push(vec![
            format!("{}{}", game.game, if game.current { "*" } else { "" }),
            game.control.clone(),
            game.started_wall_us
                .map_or_else(|| "-".to_owned(), |at| local.time_of_day(at)),
            match (game.current, game.last_wall_us) {
                (true, _) if game.result == "unfinished" || game.result == "not started" => {
                    "(current)".to_owned()
                }
                (_, Some(at)) => local.time_of_day(at),
                (_, None) => "-".to_owned(),
            },
            game.result.clone(),
            game.moves.to_string(),
        ]);
    }
    let mut text = columns(&rows);
    if games.iter().any(|g| g.current) {
        text.push_str("* the board's current game\n");
    }
    text
}

/// The record as JSON in the fixed schema (`docs/history-format.md`), the
/// columns of every row in their documented order.
pub fn records_json(history: &HistoryView) -> String {
    #[derive(serde::Serialize)]
    struct Export<'a> {
        board: &'a str,
        game: Option<i64>,
        control: &'a str,
        control_prose: Option<&'a str>,
        created_wall_us: i64,
        columns: &'a [&'a str],
        rows: Vec<RecordRow>,
    }
    let header = &history.header;
    serde_json::to_string(&Export {
        board: &header.board,
        game: header.game,
        control: &header.control,
        control_prose: header.control_prose.as_deref(),
        created_wall_us: header.created_wall_us,
        columns: &RECORD_COLUMNS,
        rows: history.records(),
    })
    .unwrap_or_default()
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The record as CSV (RFC 4180) in the fixed schema: the header
/// [`RECORD_COLUMNS`], one line per row.
pub fn records_csv(history: &HistoryView) -> String {
    let mut text = RECORD_COLUMNS.join(",");
    text.push_str("\r\n");
    for record in history.records() {
        let cells: Vec<String> = record.cells().iter().map(|c| csv_field(c)).collect();
        text.push_str(&cells.join(","));
        text.push_str("\r\n");
    }
    text
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chessclock_core::views::{DeviceView, RestartView};

    pub(crate) fn view(board: &str) -> StateView {
        let side = |remaining: i64, moves: u32| SideView {
            remaining_ms: Some(remaining),
            used_ms: 0,
            moves,
            stage: 1,
            flag_ms: None,
            delay_left_ms: None,
            periods_left: None,
            moves_left_in_block: None,
            in_overtime: false,
            max_stage: Some(1),
        };
        StateView {
            t: 10_000,
            running: Some(Side::White),
            paused: false,
            flags: vec![],
            white: side(59_001, 3),
            black: side(45_000, 3),
            board: board.into(),
            control: "300+2".into(),
            started: true,
            frozen: false,
            to_move: Some(Side::White),
            game_ms: 9_000,
            game_epoch_us: 1_000_000,
            time_since_start_ms: Some(8_000),
            default_time_ms: 0,
            default_time_overrun: vec![],
            down_time_ms: None,
            arbiter_called: true,
            arbiter_called_at_ms: None,
            arbiter_call_acknowledged_by: None,
            arbiter_call_acknowledged_at_ms: None,
            scheduled_start_ms: None,
            scheduled_start_unix_ms: None,
            devices: vec![DeviceView {
                role: "buttons".into(),
                name: "/dev/x".into(),
                connected: false,
                serial: None,
                errors: 0,
            }],
            eboard: None,
            flag_falls: vec![],
            restart: None,
            unplaced_presses: 0,
            control_prose: Some("5 min; 2 s per move from move 1".into()),
            tenths_below_ms: Some(20_000),
            scheduled_start_forced: None,
            hourglass: false,
            state_health: None,
            over: None,
            players: Default::default(),
            result: None,
        }
    }

    #[test]
    fn the_status_table_rounds_up_like_the_displays() {
        let table = status_table(&[view("b1")]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("BOARD"));
        assert!(lines[1].contains(">     1:00"), "{table}");
        assert!(
            lines[1].contains("white to move, ARBITER CALLED"),
            "{table}"
        );
        assert!(lines[1].contains("buttons DOWN"), "{table}");
    }

    /// Issue 28: `chessclockctl history` panicked ("Formatting argument out
    /// of range") on a row of more than 65,535 characters: a game whose
    /// tags were set before tags were bounded (300 of 255 characters here,
    /// a row of about 80,000).
    #[test]
    fn history_prints_a_row_longer_than_65535_characters() {
        use chessclock_core::journal::StoredEvent;
        use chessclock_core::views::{GameHeader, HistoryRow};
        let tags = (0..300)
            .map(|i| (format!("Tag{i:03}"), "x".repeat(255)))
            .collect();
        let row = HistoryRow {
            event: StoredEvent::Tags { tags },
            t_ms: 1_000,
            t_us: 1_000_000,
            wall_us: 1_796_126_401_000_000,
            caller_uid: Some(1000),
            caller_name: None,
            device: None,
            outcome: vec![],
            white_used_ms: 0,
            black_used_ms: 0,
            white_remaining_ms: Some(300_000),
            black_remaining_ms: Some(300_000),
            white_moves: 0,
            black_moves: 0,
            move_number: None,
            move_used_ms: None,
            ignored: None,
            correction: None,
        };
        let history = HistoryView {
            header: GameHeader {
                board: "b1".into(),
                control: "300+2".into(),
                settings: Default::default(),
                created_wall_us: 1_796_126_400_000_000,
                caller_uid: None,
                game: Some(1),
                control_prose: None,
                tenths_below_ms: None,
            },
            events: vec![row],
        };
        let table = history_table(&history, &LocalTime::default());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "the title, the header, the row");
        assert!(lines[2].chars().count() > 65_535, "{}", lines[2].len());
        assert!(lines[2].ends_with(&format!("Tag299 \"{}\"", "x".repeat(255))));
        // The header's WHAT is not padded to the row's width.
        assert!(lines[1].ends_with("WHAT"), "{}", lines[1]);
    }

    #[test]
    fn pad_fills_to_a_width_in_characters() {
        assert_eq!(pad("é", 3), "é  ");
        assert_eq!(pad("abcd", 2), "abcd");
        assert_eq!(pad("", 70_000).len(), 70_000);
    }

    /// Issue 30 item 5: the players the game's tags name lead the notes.
    #[test]
    fn the_players_are_a_note() {
        let mut named = view("b2");
        named.arbiter_called = false;
        assert!(state_notes(&named, &LocalTime::default()).is_empty());
        named.players.white = Some("Alpha, Anna".into());
        assert_eq!(players_text(&named).as_deref(), Some("Alpha, Anna - ?"));
        assert_eq!(
            state_notes(&named, &LocalTime::default()),
            ["b2: players Alpha, Anna - ? (White - Black)"]
        );
    }

    #[test]
    fn notes_say_what_the_table_cannot() {
        let mut paused = view("b1");
        paused.arbiter_called = false;
        paused.running = None;
        paused.paused = true;
        paused.restart = Some(RestartView {
            down_ms: 14_000,
            same_boot: true,
            was_running: Some(Side::Black),
            paused_at_game_ms: Some(9_000),
        });
        paused.to_move = Some(Side::Black);
        assert_eq!(
            state_notes(&paused, &LocalTime::default()),
            [
                "b1: the daemon was down 0:14 (the running side was charged the true time); \
              Black's clock was running; paused for the arbiter (Art. 6.10a): on resume \
              Black's clock runs"
            ]
        );
        let mut scheduled = view("b2");
        scheduled.arbiter_called = false;
        scheduled.started = false;
        scheduled.scheduled_start_ms = Some(100_000);
        scheduled.scheduled_start_forced = Some(false);
        let notes = state_notes(&scheduled, &LocalTime::default());
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0], "b2: starts in 1:30 (scheduled)");
    }
}
