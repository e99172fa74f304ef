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

use crate::engine::{Settings, Side};
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum StoredEvent {
    Start,
    /// A scheduled start (Art. 6.6), wall clock µs since the epoch.
    StartAt {
        unix_time_us: i64,
    },
    Press {
        side: Side,
    },
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
    },
    /// The daemon came back after `down_us` of down time (not an engine input).
    Restart {
        down_us: Micros,
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

/// One stored event row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    pub offset_us: Micros,
    pub wall_us: i64,
    pub event: StoredEvent,
    pub caller_uid: Option<u32>,
    pub origin: Option<DeviceOrigin>,
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
    pub events: Vec<EventRow>,
}
