//! A board's history as the interfaces show it: its rows (a stored event,
//! when, who, what it caused and both clocks after it), the game's header
//! and summary, and the record rows of `History()` and the replay.

use super::*;

/// One row of a board's history: a stored event with when it happened, who
/// made it, what it caused and both clocks after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRow {
    #[serde(flatten)]
    pub event: StoredEvent,
    /// Milliseconds since the game was created.
    pub t_ms: i64,
    pub t_us: Micros,
    /// Wall-clock µs since the Unix epoch when it happened.
    pub wall_us: i64,
    pub caller_uid: Option<u32>,
    #[serde(default)]
    pub caller_name: Option<String>,
    pub device: Option<DeviceOriginView>,
    /// What it caused, in words.
    pub outcome: Vec<String>,
    pub white_used_ms: i64,
    pub black_used_ms: i64,
    pub white_remaining_ms: Option<i64>,
    pub black_remaining_ms: Option<i64>,
    /// Moves completed by each side after the row.
    #[serde(default)]
    pub white_moves: u32,
    #[serde(default)]
    pub black_moves: u32,
    /// A press that completed a move: its number and the time it used.
    #[serde(default)]
    pub move_number: Option<u32>,
    #[serde(default)]
    pub move_used_ms: Option<i64>,
    /// Why the row's input changed nothing (a press of the side not to
    /// move, on a paused clock...), or why a press was not placed.
    #[serde(default)]
    pub ignored: Option<IgnoredReason>,
    /// A correction's side before and after (adjustments, an undone press).
    #[serde(default)]
    pub correction: Option<Correction>,
}

/// Why a row's input changed nothing: stable names for records and tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IgnoredReason {
    NotStarted,
    AlreadyStarted,
    Paused,
    NotPaused,
    NotRunningSide,
    Frozen,
    /// A press that arrived too late to be placed at its instant.
    TooLate,
    /// A press that would have been the side's 1000th move (a side has at
    /// most [`crate::timecontrol::MAX_MOVES`]).
    MoveLimit,
}

impl IgnoredReason {
    /// The stable name (as serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            IgnoredReason::NotStarted => "not-started",
            IgnoredReason::AlreadyStarted => "already-started",
            IgnoredReason::Paused => "paused",
            IgnoredReason::NotPaused => "not-paused",
            IgnoredReason::NotRunningSide => "not-running-side",
            IgnoredReason::Frozen => "frozen",
            IgnoredReason::TooLate => "too-late",
            IgnoredReason::MoveLimit => "move-limit",
        }
    }
}

impl From<crate::engine::Ignored> for IgnoredReason {
    fn from(reason: crate::engine::Ignored) -> Self {
        use crate::engine::Ignored;
        match reason {
            Ignored::NotStarted => IgnoredReason::NotStarted,
            Ignored::AlreadyStarted => IgnoredReason::AlreadyStarted,
            Ignored::Paused => IgnoredReason::Paused,
            Ignored::NotPaused => IgnoredReason::NotPaused,
            Ignored::NotRunningSide => IgnoredReason::NotRunningSide,
            Ignored::Frozen => IgnoredReason::Frozen,
            Ignored::MoveLimit => IgnoredReason::MoveLimit,
        }
    }
}

/// One side before and after a correction (remaining times rounded up;
/// `None` for upcount).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    pub side: Side,
    pub remaining_before_ms: Option<i64>,
    pub remaining_after_ms: Option<i64>,
    pub moves_before: u32,
    pub moves_after: u32,
    pub stage_before: u32,
    pub stage_after: u32,
}

/// A history row whose input was applied again by a re-run (a late input
/// placed before it): what it caused now, and both clocks after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowRevision {
    /// The row's place in the game's history (0 = the first row).
    pub index: u64,
    pub outcome: Vec<String>,
    pub white_used_ms: i64,
    pub black_used_ms: i64,
    pub white_remaining_ms: Option<i64>,
    pub black_remaining_ms: Option<i64>,
}

impl RowRevision {
    /// Applies it to `row`.
    pub fn apply(&self, row: &mut HistoryRow) {
        row.outcome.clone_from(&self.outcome);
        row.white_used_ms = self.white_used_ms;
        row.black_used_ms = self.black_used_ms;
        row.white_remaining_ms = self.white_remaining_ms;
        row.black_remaining_ms = self.black_remaining_ms;
    }
}

/// Where a row came from when a device made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceOriginView {
    pub serial: String,
    pub event: u16,
    pub late_us: Micros,
}

impl From<&DeviceOrigin> for DeviceOriginView {
    fn from(origin: &DeviceOrigin) -> Self {
        DeviceOriginView {
            serial: origin.serial.clone(),
            event: origin.event,
            late_us: origin.late_us,
        }
    }
}

/// The header of a board's current game (the History view's first fields).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameHeader {
    pub board: String,
    pub control: String,
    pub settings: Settings,
    pub created_wall_us: i64,
    pub caller_uid: Option<u32>,
    /// The game's number in the state database, when known (past games,
    /// `chessclockctl games`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<i64>,
    /// The control in FIDE prose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_prose: Option<String>,
    /// Where the board's displays begin to show tenths (ms; 0: never):
    /// the record writes clock times as they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenths_below_ms: Option<u64>,
}

impl GameHeader {
    /// How the game's clock times are written (as its displays write them).
    pub fn style(&self) -> crate::clocktext::Style {
        self.tenths_below_ms.map_or(
            crate::clocktext::Style::CLOCK,
            crate::clocktext::Style::tenths_below_ms,
        )
    }
}

/// The D-Bus `History()` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryView {
    #[serde(flatten)]
    pub header: GameHeader,
    pub events: Vec<HistoryRow>,
}

/// One row of a game's record in the fixed schema of `chessclockctl
/// history --json` and `export --json` / `--csv` (documented, column by
/// column, in `docs/history-format.md`): the same fields for every kind of
/// event, `null` (an empty CSV cell) where a field does not apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordRow {
    pub board: String,
    /// The game's number in the state database, when known.
    pub game: Option<i64>,
    /// 1-based position of the row in the game's record.
    pub seq: u32,
    /// The kind of event (`press`, `adjust`, `flag`, ...).
    pub kind: String,
    /// Game time: milliseconds since the game was created.
    pub game_ms: i64,
    /// Time of day: µs since the Unix epoch, and as RFC 3339 in UTC.
    pub wall_us: i64,
    pub time: String,
    pub side: Option<Side>,
    /// A press that completed a move: its number and the time it used.
    pub move_number: Option<u32>,
    pub used_ms: Option<i64>,
    /// Both clocks after the row, rounded up (`null`: no limit, upcount).
    pub white_ms: Option<i64>,
    pub black_ms: Option<i64>,
    pub white_moves: u32,
    pub black_moves: u32,
    /// Who made it: the person's name, `uid N`, `device SERIAL` or
    /// `chessclockd`.
    pub who: String,
    pub caller_uid: Option<u32>,
    pub caller_name: Option<String>,
    /// The button unit's serial number, for a row a device made.
    pub device: Option<String>,
    /// Why the row's input changed nothing (`not-running-side`, `paused`,
    /// `too-late`, ...).
    pub reason: Option<String>,
    /// A correction's side before and after.
    pub remaining_before_ms: Option<i64>,
    pub remaining_after_ms: Option<i64>,
    pub moves_before: Option<u32>,
    pub moves_after: Option<u32>,
    pub stage_before: Option<u32>,
    pub stage_after: Option<u32>,
    /// A relative correction: what was added (negative: taken away).
    pub by_ms: Option<i64>,
    /// An arbiter's note.
    pub note: Option<String>,
    /// The row in words.
    pub what: String,
}

/// The column names of [`RecordRow`], in order (the CSV header).
pub const RECORD_COLUMNS: [&str; 28] = [
    "board",
    "game",
    "seq",
    "kind",
    "game_ms",
    "wall_us",
    "time",
    "side",
    "move_number",
    "used_ms",
    "white_ms",
    "black_ms",
    "white_moves",
    "black_moves",
    "who",
    "caller_uid",
    "caller_name",
    "device",
    "reason",
    "remaining_before_ms",
    "remaining_after_ms",
    "moves_before",
    "moves_after",
    "stage_before",
    "stage_after",
    "by_ms",
    "note",
    "what",
];

impl RecordRow {
    /// Row `index` (0-based) of `header`'s game.
    pub fn new(header: &GameHeader, index: usize, row: &HistoryRow) -> RecordRow {
        use crate::journal::StoredEvent;
        let who = match (&row.caller_name, row.caller_uid, &row.device) {
            (Some(name), _, _) => name.clone(),
            (None, Some(uid), _) => format!("uid {uid}"),
            (None, None, Some(device)) => format!("device {}", device.serial),
            (None, None, None) => "chessclockd".to_owned(),
        };
        let correction = row.correction.as_ref();
        RecordRow {
            board: header.board.clone(),
            game: header.game,
            seq: u32::try_from(index + 1).unwrap_or(u32::MAX),
            kind: row.event.kind().to_owned(),
            game_ms: row.t_ms,
            wall_us: row.wall_us,
            time: text::utc_text(row.wall_us),
            side: row.event.side(),
            move_number: row.move_number,
            used_ms: row.move_used_ms,
            white_ms: row.white_remaining_ms,
            black_ms: row.black_remaining_ms,
            white_moves: row.white_moves,
            black_moves: row.black_moves,
            who,
            caller_uid: row.caller_uid,
            caller_name: row.caller_name.clone(),
            device: row.device.as_ref().map(|d| d.serial.clone()),
            reason: row.ignored.map(|r| r.as_str().to_owned()),
            remaining_before_ms: correction.and_then(|c| c.remaining_before_ms),
            remaining_after_ms: correction.and_then(|c| c.remaining_after_ms),
            moves_before: correction.map(|c| c.moves_before),
            moves_after: correction.map(|c| c.moves_after),
            stage_before: correction.map(|c| c.stage_before),
            stage_after: correction.map(|c| c.stage_after),
            by_ms: match &row.event {
                StoredEvent::Adjust {
                    by_us: Some(by), ..
                } => Some(by.div_euclid(MS)),
                _ => None,
            },
            note: match &row.event {
                StoredEvent::Note { text } => Some(text.clone()),
                _ => None,
            },
            what: text::row_text_in(row, header.style()),
        }
    }

    /// The row's cells in [`RECORD_COLUMNS`] order, as text (empty for
    /// `null`).
    pub fn cells(&self) -> Vec<String> {
        fn some<T: ToString>(value: &Option<T>) -> String {
            value.as_ref().map_or_else(String::new, T::to_string)
        }
        vec![
            self.board.clone(),
            some(&self.game),
            self.seq.to_string(),
            self.kind.clone(),
            self.game_ms.to_string(),
            self.wall_us.to_string(),
            self.time.clone(),
            some(&self.side),
            some(&self.move_number),
            some(&self.used_ms),
            some(&self.white_ms),
            some(&self.black_ms),
            self.white_moves.to_string(),
            self.black_moves.to_string(),
            self.who.clone(),
            some(&self.caller_uid),
            some(&self.caller_name),
            some(&self.device),
            some(&self.reason),
            some(&self.remaining_before_ms),
            some(&self.remaining_after_ms),
            some(&self.moves_before),
            some(&self.moves_after),
            some(&self.stage_before),
            some(&self.stage_after),
            some(&self.by_ms),
            some(&self.note),
            self.what.clone(),
        ]
    }
}

impl HistoryView {
    /// The record in the fixed schema.
    pub fn records(&self) -> Vec<RecordRow> {
        self.events
            .iter()
            .enumerate()
            .map(|(index, row)| RecordRow::new(&self.header, index, row))
            .collect()
    }
}

/// One game of a board, as `chessclockctl games` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSummary {
    pub game: i64,
    pub board: String,
    pub control: String,
    /// When the game was created, and when White's clock first started
    /// (wall-clock µs since the Unix epoch).
    pub created_wall_us: i64,
    pub started_wall_us: Option<i64>,
    /// The last row of the game (its end, for a game that is over).
    pub last_wall_us: Option<i64>,
    /// The result decided on the electronic board or by the arbiter
    /// (`1-0 (normal)`, `1/2-1/2 (time forfeit)`, ...); else how the clock
    /// ended it: `white flagged`, `black flagged`; else `unfinished` or
    /// `not started`.
    pub result: String,
    /// Moves completed (White's count: full moves played).
    pub moves: u32,
    /// Whether it is the board's current game.
    pub current: bool,
}

impl GameSummary {
    /// The summary of game `game` from its history.
    pub fn of(game: i64, history: &HistoryView, current: bool) -> GameSummary {
        use crate::journal::StoredEvent;
        let started = history
            .events
            .iter()
            .find(|r| matches!(r.event, StoredEvent::Start) && r.ignored.is_none())
            .map(|r| r.wall_us);
        let first_flag = history.events.iter().find_map(|r| match r.event {
            StoredEvent::Flag {
                side,
                last_stage: true,
                ..
            } => Some(side),
            _ => None,
        });
        let withdrawn_all = history.events.iter().any(|r| {
            matches!(r.event, StoredEvent::FlagWithdrawn { side, .. } if Some(side) == first_flag)
        });
        // The last decision stands (a withdrawn result leaves the clock's).
        let decided = history.events.iter().rev().find_map(|r| match &r.event {
            StoredEvent::GameResult {
                result,
                termination,
            } => Some((*result, *termination)),
            _ => None,
        });
        let result = match (decided, first_flag.filter(|_| !withdrawn_all)) {
            (Some((Some(result), termination)), _) => format!(
                "{} ({})",
                result.pgn(),
                termination
                    .unwrap_or(crate::eboard::Termination::Normal)
                    .words()
            ),
            (_, Some(side)) => format!("{side} flagged"),
            _ if started.is_none() => "not started".to_owned(),
            _ => "unfinished".to_owned(),
        };
        let last = history.events.last();
        GameSummary {
            game,
            board: history.header.board.clone(),
            control: history.header.control.clone(),
            created_wall_us: history.header.created_wall_us,
            started_wall_us: started,
            last_wall_us: last.map(|r| r.wall_us),
            result,
            moves: last.map_or(0, |r| r.white_moves),
            current,
        }
    }
}
