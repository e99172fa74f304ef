//! What a board's D-Bus properties show at one instant ([`BoardSnapshot`]),
//! with its devices' links: the value the contract's `StateChanged`
//! carries and the hall publishes.
//!
//! Promises: fields are only ever added (D-Bus, the hall and
//! `chessclockctl` read them).

use serde::{Deserialize, Serialize};

use crate::engine::Side;

/// A device's link, as shown on D-Bus and in the CLI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceLink {
    /// `buttons`, `display`, `eboard`.
    pub role: String,
    /// Path or `serial:...` from the config.
    pub name: String,
    pub connected: bool,
    /// HELLO serial number once known.
    pub serial: Option<String>,
}

/// Everything a board's D-Bus properties show, as of `snapshot_ms`
/// (the daemon's monotonic milliseconds). Clients extrapolate the running
/// side's time from the snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardSnapshot {
    pub board: String,
    pub control: String,
    pub snapshot_ms: i64,
    /// When the board's view this snapshot was computed from was taken
    /// (the daemon's monotonic µs; in-process only, never serialised: 0
    /// when read back from JSON). It orders one board's snapshots by what
    /// they show, which `snapshot_ms` does not: a snapshot read now from
    /// the view the readers have has a later `snapshot_ms` than a newer
    /// view's `StateChanged` still on its way, taken a moment before.
    #[serde(skip)]
    pub view_us: i64,
    pub started: bool,
    pub running: Option<Side>,
    pub paused: bool,
    pub white_remaining_ms: i64,
    pub black_remaining_ms: i64,
    pub white_moves: u32,
    pub black_moves: u32,
    pub white_stage: u32,
    pub black_stage: u32,
    /// Fallen flags, first fallen first.
    pub flags: Vec<Side>,
    pub devices: Vec<DeviceLink>,
    pub arbiter_called: bool,
}
