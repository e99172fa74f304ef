//! The contract between the control surfaces (D-Bus, the hall, the udev
//! entry point) and the runtime that owns the boards: the commands, their
//! answers and errors, and what the runtime tells every surface (board
//! events and snapshots). Plain values; the channels that carry them live in
//! the daemon.
//!
//! Promises: every type here is part of the daemon's interfaces (D-Bus
//! errors map 1:1 onto [`ControlError`]'s variants; snapshots and events
//! serialise to the JSON the D-Bus methods return), so fields are only ever
//! added.

use serde::{Deserialize, Serialize};

use crate::engine::Side;
// The snapshot is a view of a board, defined with the other views; the
// contract carries it (the arrow goes one way: contract -> views).
pub use crate::views::{BoardSnapshot, DeviceLink, HistoryRow};

/// Who asked: the uid from D-Bus credentials and, where known, the
/// person's name (the account name of the uid, or the arbiter's name a hall
/// command carries). Both `None` for the daemon itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caller {
    pub uid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Caller {
    /// The daemon itself (restarts, the e-board's move count, a scheduled
    /// start coming due).
    pub const DAEMON: Caller = Caller {
        uid: None,
        name: None,
    };

    /// A local user known by uid only.
    pub const fn uid(uid: u32) -> Caller {
        Caller {
            uid: Some(uid),
            name: None,
        }
    }
}

/// A change or a question about one board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A notation or a preset name.
    NewGame {
        control: String,
    },
    Start,
    /// Wall-clock start, microseconds since the Unix epoch (Art. 6.6).
    StartAt {
        unix_time_us: i64,
        force: bool,
    },
    Pause,
    Resume,
    Press {
        side: Side,
    },
    /// `None` leaves a value unchanged.
    Adjust {
        side: Side,
        remaining_ms: Option<i64>,
        moves: Option<u32>,
        stage: Option<u32>,
    },
    /// Adds `delta_ms` to a side's remaining time at the instant the board
    /// takes the command (negative: takes it away): a penalty or a bonus.
    AdjustBy {
        side: Side,
        delta_ms: i64,
    },
    /// Takes back the arbiter's last press (made by command), when no press
    /// came after it.
    UndoPress,
    /// Cancels the scheduled start.
    CancelStart,
    /// An arbiter acknowledges the player's standing arbiter call (on the
    /// way to the board); a resume still answers it.
    AckCall,
    /// An arbiter's note for the record.
    Note {
        text: String,
    },
    /// The state as JSON (replay schema plus additions).
    State,
    /// The game history as JSON.
    History,
    /// The game as PGN for broadcast (confirmed moves, clock comments).
    Pgn,
    /// Sets PGN tags of the current game (`Event`, `Site`, `Date`, `Round`,
    /// `White`, `Black`, or another valid tag name); an empty value gives a
    /// tag back to its configured default. Recorded in the game's journal.
    SetTags {
        tags: Vec<(String, String)>,
    },
    /// The game's result decided by the arbiter (a resignation, a draw
    /// agreed, a decision); `None` withdraws the result. The clock stops.
    SetResult {
        result: Option<crate::eboard::GameResult>,
        termination: Option<crate::eboard::Termination>,
    },
    /// Every game of the board in the state database, as JSON
    /// (`GameSummary` list, oldest first).
    Games,
    /// The history of one stored game (by its number), as JSON.
    GameHistory {
        game: i64,
    },
    /// The PGN of one stored game.
    GamePgn {
        game: i64,
    },
    /// The board's [`BoardSnapshot`].
    Snapshot,
    /// Manager level (the `board` of the request is ignored): a device node
    /// appeared (udev entry point / hotplug).
    DeviceAdded {
        path: String,
    },
    /// Manager level: a device node went away.
    DeviceRemoved {
        path: String,
    },
}

impl Command {
    /// Whether the command changes anything (and so needs authorization).
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Command::State
                | Command::History
                | Command::Pgn
                | Command::Snapshot
                | Command::Games
                | Command::GameHistory { .. }
                | Command::GamePgn { .. }
        )
    }

    /// A stable name of the command (for logs and the read limiter).
    pub fn name(&self) -> &'static str {
        match self {
            Command::NewGame { .. } => "new-game",
            Command::Start => "start",
            Command::StartAt { .. } => "start-at",
            Command::Pause => "pause",
            Command::Resume => "resume",
            Command::Press { .. } => "press",
            Command::Adjust { .. } => "adjust",
            Command::AdjustBy { .. } => "adjust-by",
            Command::UndoPress => "undo-press",
            Command::CancelStart => "cancel-start",
            Command::AckCall => "ack-call",
            Command::Note { .. } => "note",
            Command::State => "state",
            Command::History => "history",
            Command::Pgn => "pgn",
            Command::SetTags { .. } => "set-tags",
            Command::SetResult { .. } => "set-result",
            Command::Games => "games",
            Command::GameHistory { .. } => "game-history",
            Command::GamePgn { .. } => "game-pgn",
            Command::Snapshot => "snapshot",
            Command::DeviceAdded { .. } => "device-added",
            Command::DeviceRemoved { .. } => "device-removed",
        }
    }
}

/// A successful answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Done,
    Json(String),
    Text(String),
    Snapshot(BoardSnapshot),
}

/// Typed failures, mapped 1:1 onto D-Bus errors
/// `org.chessclockd.ChessClock1.Error.<Variant>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    InvalidState(String),
    #[error("{0}")]
    NotPermitted(String),
    #[error("{0}")]
    UnknownBoard(String),
    #[error("{0}")]
    NotSynchronized(String),
    #[error("{0}")]
    Internal(String),
}

/// Something that happened on a board, broadcast to every control surface.
///
/// Serialises (for the hall's event topic) as an object with the variant's
/// kebab-case name under `kind` beside its fields
/// (`{"kind":"flag-fell","board":"b1","side":"white",...}`); a new variant
/// reaches the hall without further work.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BoardEvent {
    Pressed {
        board: String,
        side: Side,
        move_number: u32,
        used_ms: i64,
    },
    FlagFell {
        board: String,
        side: Side,
        at_ms: i64,
        stage: u32,
        last_stage: bool,
    },
    StageChanged {
        board: String,
        side: Side,
        stage: u32,
    },
    DeviceChanged {
        board: String,
        link: DeviceLink,
    },
    ArbiterCalled {
        board: String,
    },
    /// At a flag fall, what the electronic board says (Art. 6.4: did the
    /// flagged side complete the moves its stage required, `false` in
    /// sudden death; Art. 6.9: can the opponent mate?) and the verdict
    /// (`loss`, `draw`, `moves-completed`, `game-already-over`).
    FlagReport {
        board: String,
        side: Side,
        moves_completed: bool,
        opponent_can_mate: bool,
        verdict: String,
    },
    /// A flag the clock showed was withdrawn: an input made before it (a
    /// press whose frame came late) was placed in its true order. `at_ms`:
    /// the daemon's monotonic ms of the withdrawn fall.
    FlagWithdrawn {
        board: String,
        side: Side,
        at_ms: i64,
    },
    /// A press arrived too late to be placed in the game (`late_ms` after it
    /// was made): recorded for the arbiter, not applied.
    PressNotPlaced {
        board: String,
        side: Side,
        late_ms: i64,
    },
    /// The electronic board shows the starting position after a finished
    /// game while the clock still has that game: the arbiter may set up a
    /// new game (`chessclockctl new`).
    NewGameOffered {
        board: String,
    },
    /// Any change of the properties (emit PropertiesChanged).
    StateChanged(BoardSnapshot),
    /// A row was added to the board's history (committed): every change
    /// (a correction, a pause, a result, a new game, a restart) with who made
    /// it (`caller_uid`, `caller_name`) and both clocks after it.
    Recorded {
        board: String,
        row: Box<HistoryRow>,
    },
}

/// How the daemon keeps its state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateMode {
    /// In the SQLite database of the state directory, with its commit
    /// record: a crash loses nothing committed.
    #[default]
    Durable,
    /// In memory only (`--no-state`, or `[daemon] crash-safety = false`
    /// with a state directory that could not be used): a crash loses
    /// every game.
    Memory,
}

/// What kind of trouble the state store found when it opened the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// The database file is not a SQLite database at all.
    NotADatabase,
    /// SQLite's integrity check failed or the database cannot be read.
    Corrupt,
    /// The database file is empty (or lost its tables) although events had
    /// been committed to it.
    DatabaseEmptied,
    /// The write-ahead log is unreadable (cut inside its header, or not a
    /// WAL): SQLite ignores it, and the commits it held are lost.
    WalUnreadable,
    /// Fewer events than the commit record says were committed (a cut or
    /// lost WAL, rows removed at the end).
    EventsMissing,
    /// A game's events are not numbered 1, 2, 3, ... (rows removed in the
    /// middle, or repeated).
    SequenceBroken,
    /// An event row that cannot be read; it was left out of its game.
    EventUnreadable,
    /// The commit record beside the database is missing, unreadable or of
    /// another database, so lost events cannot be ruled out.
    CommitRecordUnusable,
    /// The daemon keeps its state in memory only.
    NoCrashSafety,
}

/// One thing found wrong with the state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateFinding {
    pub kind: FindingKind,
    /// What was found, for the arbiter (names the file, the game, the count).
    pub message: String,
    /// The board of the game concerned, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
}

/// The state store's health, from opening the state: empty `findings` in
/// durable mode means nothing was lost. Shown by `State()` (under
/// `state_health`), the manager's `StateHealth` property and
/// `chessclockctl status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateHealth {
    pub mode: StateMode,
    /// The database file (none in memory).
    pub path: Option<String>,
    /// Everything found wrong, in the order found.
    pub findings: Vec<StateFinding>,
    /// Where copies of the damaged files were kept (never deleted by the
    /// daemon).
    pub evidence: Option<String>,
    /// Live: the store cannot write the state directory as it should (a
    /// full disk, a read-only file system, I/O errors); `None` while every
    /// record is saved as it comes. Set at the first failed commit and
    /// cleared once everything waiting is saved and the space reserve is
    /// back.
    #[serde(default)]
    pub saving: Option<SavingTrouble>,
}

/// Why the store cannot save as it should.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SaveFailure {
    /// The state's file system is full.
    NoSpace,
    /// The state's file system is read-only (remounted after errors, say).
    ReadOnly,
    /// Writing failed with an I/O error.
    IoError,
}

impl SaveFailure {
    /// The words of the warning: "not saving: no space".
    pub fn words(self) -> &'static str {
        match self {
            SaveFailure::NoSpace => "no space",
            SaveFailure::ReadOnly => "read-only file system",
            SaveFailure::IoError => "I/O error",
        }
    }
}

/// The store's trouble saving, while it lasts ([`StateHealth::saving`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavingTrouble {
    pub reason: SaveFailure,
    /// `true`: records are still saved as they come, into the space the
    /// store kept in reserve (a full disk). `false`: nothing can be saved
    /// now; the records wait in memory, in order, and are saved as soon as
    /// the store can write again (a crash before that loses them).
    pub saving: bool,
    /// Records waiting in memory (0 while saving into the reserve).
    pub waiting_records: u64,
    /// Reserve bytes left for the state (0 when none is left).
    pub reserve_left_bytes: u64,
    /// When the first commit failed (wall clock, ms since the Unix epoch).
    pub since_wall_ms: i64,
    /// For the arbiter, one line: starts "not saving: no space" or "disk
    /// full: saving into the reserve".
    pub message: String,
}

impl StateHealth {
    /// Durable, nothing found, saving as it should.
    pub fn is_ok(&self) -> bool {
        self.mode == StateMode::Durable && self.findings.is_empty() && self.saving.is_none()
    }

    /// Whether games were (or may have been) lost or shortened.
    pub fn is_damaged(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.kind != FindingKind::NoCrashSafety)
    }

    /// The short text for the displays' text line, if there is one to show
    /// (the hook for the board's displays).
    pub fn display_notice(&self) -> Option<&'static str> {
        if self.is_damaged() {
            Some("STATE DAMAGED")
        } else if self.mode == StateMode::Memory {
            Some("NOT SAVED")
        } else {
            None
        }
    }

    /// One line per finding (and where the evidence is), for logs and the
    /// CLI.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .saving
            .iter()
            .map(|trouble| trouble.message.clone())
            .collect();
        lines.extend(self.findings.iter().map(|f| match &f.board {
            Some(board) => format!("{board}: {}", f.message),
            None => f.message.clone(),
        }));
        if let Some(evidence) = &self.evidence {
            lines.push(format!("the damaged files were kept in {evidence}"));
        }
        lines
    }
}

/// `SetResult`'s arguments as a command: `1-0`, `0-1`, `1/2-1/2` or `*`,
/// and a termination (empty: `normal`).
pub fn result_command(result: &str, termination: &str) -> Result<Command, String> {
    let parsed = match result {
        "*" => None,
        other => Some(crate::eboard::GameResult::parse(other).ok_or_else(|| {
            format!("result `{other}`: expected 1-0, 0-1, 1/2-1/2 or * (to withdraw it)")
        })?),
    };
    let termination = match termination {
        "" => None,
        text => Some(crate::eboard::Termination::parse(text).ok_or_else(|| {
            format!(
                "termination `{text}`: expected normal, resignation, agreement, checkmate, \
                 stalemate, time forfeit, rules infraction, adjudication, abandoned, death or \
                 emergency"
            )
        })?),
    };
    if parsed.is_none() && termination.is_some() {
        return Err("a withdrawn result (*) takes no termination".into());
    }
    Ok(Command::SetResult {
        result: parsed,
        termination,
    })
}
