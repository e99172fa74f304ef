//! The journal format: a game's events as the store keeps them and as a
//! restart replays them.
//!
//! Promises: every field here is part of the stored format (serde names and
//! tags are the database's JSON); fields are only ever added, with
//! `#[serde(default)]`, so a database written by an older daemon still
//! loads. Instants are the game's own offsets (µs since the game was
//! created), never raw monotonic instants: see the board core for how a run
//! maps them to the monotonic clock.

use serde::{Deserialize, Serialize};

use crate::engine::{Adjustment, Input, Settings, Side};
use crate::time::Micros;

/// Who made a stored engine input that no caller or device made: an
/// adjustment with a source came from the daemon itself, never from an
/// arbiter (its `caller_uid` is empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputSource {
    /// The move count taken from the electronic board before a press
    /// (`move-count = "eboard"`, Art. 6.2a).
    Eboard,
}

/// One input of a game as stored (and as shown in the history).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum StoredEvent {
    Start,
    /// A scheduled start (Art. 6.6), wall clock µs since the epoch;
    /// `forced` when the NTP check was overridden.
    StartAt {
        unix_time_us: i64,
        #[serde(default)]
        forced: bool,
        /// The scheduled start this one replaced (moved), if one was set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces_unix_us: Option<i64>,
    },
    /// The scheduled start at `unix_time_us` was cancelled before it came
    /// due (not an engine input).
    StartCancelled {
        unix_time_us: i64,
    },
    Press {
        side: Side,
    },
    #[default]
    Pause,
    Resume,
    Adjust {
        side: Side,
        remaining_us: Option<Micros>,
        moves: Option<u32>,
        stage: Option<u32>,
        /// Set when the daemon made the adjustment itself (the move count
        /// taken from the electronic board), not an arbiter.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<InputSource>,
        /// A relative correction (a penalty, a bonus): what was added to
        /// the side's remaining time at the row's instant (negative: taken
        /// away); `remaining_us` is the result when it was made. A press
        /// placed before it later (its frame came late) changes what the
        /// clock showed at that instant: the game then adds `by_us` to the
        /// clock as it stands in the corrected game.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by_us: Option<Micros>,
    },
    /// The arbiter button of a unit (Art. 6.12b): the clocks stop like a
    /// pause, recorded as the call it is.
    ArbiterCall,
    /// An arbiter acknowledged the standing arbiter call (`ack-call`): on
    /// the way to the board; the clocks stay paused until a resume answers
    /// the call. Who acknowledged is the row's caller (not an engine input).
    CallAcknowledged,
    /// The arbiter took back the press recorded at `press_at_us` (one made
    /// with `chessclockctl press` by mistake): the game is re-run without
    /// it (not an engine input; a replay removes that press).
    PressUndone {
        side: Side,
        press_at_us: Micros,
    },
    /// An arbiter's note in the record ("3-fold claim rejected"); not an
    /// engine input.
    Note {
        text: String,
    },
    /// The daemon came back after `down_us` of down time (not an engine
    /// input). `same_boot`: the machine did not reboot, so the running side
    /// (`was_running`) was charged the true time up to the restart.
    Restart {
        down_us: Micros,
        #[serde(default)]
        same_boot: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        was_running: Option<Side>,
        /// How many stored rows the game was rebuilt from.
        #[serde(default)]
        replayed: u32,
        /// Whether the restart paused a running clock for the arbiter
        /// (Art. 6.10a).
        #[serde(default)]
        paused: bool,
    },
    /// A flag fell by the passing of time at the row's instant (not an
    /// engine input: the engine computes it; kept so the record shows what
    /// the clock showed, in order).
    Flag {
        side: Side,
        stage: u32,
        last_stage: bool,
    },
    /// `side` reached `stage` (not an engine input: the engine decides it;
    /// kept so the record shows who reached a time control first).
    /// `first`: the other side had not reached it yet.
    Stage {
        side: Side,
        stage: u32,
        first: bool,
    },
    /// A device of the board lost or regained its link during the game
    /// (not an engine input). `role`: `buttons`, `display` or `eboard`.
    Device {
        role: String,
        name: String,
        connected: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        serial: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A flag the clock showed (at `flag_at_us`) was withdrawn because an
    /// input that happened before it arrived late and was placed in its
    /// true order (not an engine input).
    FlagWithdrawn {
        side: Side,
        flag_at_us: Micros,
    },
    /// A press that arrived too late to be placed in the game: recorded and
    /// shown to the arbiter, not applied. `device_at_us` is its instant on
    /// the game's time base; the row's instant is its arrival.
    PressNotPlaced {
        side: Side,
        device_at_us: Micros,
    },
    /// A move seen on the electronic board (not an engine input): kept so
    /// the board can follow the game again after a restart.
    BoardMove {
        ply: u32,
        side: Side,
        side_moves: u32,
        san: String,
        uci: String,
        fen_after: String,
        confirmed: bool,
    },
    /// Moves taken back on the electronic board, back to `to_ply`.
    BoardTakeBack {
        to_ply: u32,
        fen: String,
    },
    /// Tags of the game's PGN set by the arbiter or the hub (not an engine
    /// input); an empty value gives a tag back to its configured default.
    Tags {
        tags: std::collections::BTreeMap<String, String>,
    },
    /// The game's result (not an engine input): from the board, a flag's
    /// verdict or the arbiter; `result` absent: withdrawn.
    GameResult {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<crate::eboard::GameResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        termination: Option<crate::eboard::Termination>,
    },
}

/// Where a press came from, for duplicate detection after a crash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceOrigin {
    pub serial: String,
    /// The device's boot (event numbers are unique only within one boot).
    #[serde(default)]
    pub boot_id: u32,
    pub event: u16,
    /// How late the frame arrived after the press, µs.
    pub late_us: Micros,
}

impl StoredEvent {
    /// The engine input this event is, if it is one.
    pub fn input(&self) -> Option<Input> {
        match *self {
            StoredEvent::Start => Some(Input::Start),
            StoredEvent::Press { side } => Some(Input::Press(side)),
            StoredEvent::Pause | StoredEvent::ArbiterCall => Some(Input::Pause),
            StoredEvent::Resume => Some(Input::Resume),
            StoredEvent::Adjust {
                side,
                remaining_us,
                moves,
                stage,
                ..
            } => Some(Input::Adjust(Adjustment {
                side,
                remaining: remaining_us,
                moves,
                stage,
            })),
            _ => None,
        }
    }

    /// For a relative correction, the amount it added (`by_us`).
    pub fn relative_by(&self) -> Option<Micros> {
        match *self {
            StoredEvent::Adjust { by_us, .. } => by_us,
            _ => None,
        }
    }
}

impl StoredEvent {
    /// The row's kind: its stable name in the stored JSON (`do`), the
    /// history and its exports.
    pub fn kind(&self) -> &'static str {
        match self {
            StoredEvent::Start => "start",
            StoredEvent::StartAt { .. } => "start-at",
            StoredEvent::StartCancelled { .. } => "start-cancelled",
            StoredEvent::Press { .. } => "press",
            StoredEvent::Pause => "pause",
            StoredEvent::Resume => "resume",
            StoredEvent::Adjust { .. } => "adjust",
            StoredEvent::ArbiterCall => "arbiter-call",
            StoredEvent::CallAcknowledged => "call-acknowledged",
            StoredEvent::PressUndone { .. } => "press-undone",
            StoredEvent::Note { .. } => "note",
            StoredEvent::Restart { .. } => "restart",
            StoredEvent::Flag { .. } => "flag",
            StoredEvent::Stage { .. } => "stage",
            StoredEvent::Device { .. } => "device",
            StoredEvent::FlagWithdrawn { .. } => "flag-withdrawn",
            StoredEvent::PressNotPlaced { .. } => "press-not-placed",
            StoredEvent::BoardMove { .. } => "board-move",
            StoredEvent::BoardTakeBack { .. } => "board-take-back",
            StoredEvent::Tags { .. } => "tags",
            StoredEvent::GameResult { .. } => "game-result",
        }
    }

    /// The side the row is about, if one.
    pub fn side(&self) -> Option<Side> {
        match self {
            StoredEvent::Press { side }
            | StoredEvent::Adjust { side, .. }
            | StoredEvent::PressUndone { side, .. }
            | StoredEvent::Flag { side, .. }
            | StoredEvent::Stage { side, .. }
            | StoredEvent::FlagWithdrawn { side, .. }
            | StoredEvent::PressNotPlaced { side, .. }
            | StoredEvent::BoardMove { side, .. } => Some(*side),
            StoredEvent::Restart { .. }
            | StoredEvent::Start
            | StoredEvent::StartAt { .. }
            | StoredEvent::StartCancelled { .. }
            | StoredEvent::Pause
            | StoredEvent::Resume
            | StoredEvent::ArbiterCall
            | StoredEvent::CallAcknowledged
            | StoredEvent::Note { .. }
            | StoredEvent::Device { .. }
            | StoredEvent::BoardTakeBack { .. }
            | StoredEvent::Tags { .. }
            | StoredEvent::GameResult { .. } => None,
        }
    }
}

/// One stored event row. `offset_us` is the game time of the event (for a
/// press, its instant on the device, however late it arrived).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventRow {
    pub offset_us: Micros,
    pub wall_us: i64,
    pub event: StoredEvent,
    pub caller_uid: Option<u32>,
    /// The caller's name, where known (an account name, a hall arbiter).
    pub caller_name: Option<String>,
    pub origin: Option<DeviceOrigin>,
}

/// What the board core asks the store to write. Each is one committed unit;
/// the store answers with the sequence number the board core gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A new game of the board becomes its active game.
    NewGame {
        control: String,
        settings: Settings,
        /// Monotonic µs of the game's instant 0 in this run.
        epoch: Micros,
        caller_uid: Option<u32>,
        wall_us: i64,
        /// The machine's boot the epoch belongs to.
        boot_id: Option<String>,
    },
    Event(EventRow),
    /// Stored game `game` is the board's active game, on time base `epoch`
    /// of boot `boot_id` for this run (after a restart).
    Epoch {
        game: i64,
        epoch: Micros,
        boot_id: Option<String>,
    },
}

/// A game loaded from the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGame {
    pub id: i64,
    pub board: String,
    pub control: String,
    pub settings: Settings,
    pub created_wall_us: i64,
    pub caller_uid: Option<u32>,
    pub alive_offset_us: Micros,
    pub alive_wall_us: i64,
    /// The boot of the machine during the game's last run, and the
    /// monotonic µs of its instant 0 then (both absent in databases of
    /// older daemons).
    pub boot_id: Option<String>,
    pub epoch_mono_us: Option<Micros>,
    pub events: Vec<EventRow>,
}
