//! The daemon's configuration: TOML, kebab-case keys, unknown keys refused.
//!
//! Promises: [`Config::default`] is the embedded configuration the daemon runs
//! on without a file (the `--demo` board lives elsewhere); [`Config::load`]
//! names the file, line and column of any error; the shipped
//! `config/chessclockd.toml` always parses (a test checks it).
//!
//! CONTRACT NOTE (skeleton): the field names and types below are the schema
//! other modules rely on. Add freely; keep what is here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::{Credit, StageAdvance};

/// The whole configuration file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Config {
    pub daemon: DaemonConfig,
    pub engine: EngineConfig,
    pub display: DisplayConfig,
    /// Named time-control presets, in addition to the built-in ones.
    pub presets: BTreeMap<String, ControlSpec>,
    /// The boards this daemon runs (TOML: `[[board]]`).
    #[serde(rename = "board")]
    pub boards: Vec<BoardConfig>,
}

/// `[daemon]`
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DaemonConfig {
    /// Where the SQLite state lives.
    pub state_dir: PathBuf,
    /// `system` or `session` bus.
    pub bus: BusKind,
    /// SCHED_FIFO priority of the timing thread (1..=99); 0 = do not ask.
    pub rt_priority: u8,
    /// Lock the daemon's memory (mlockall) for the timing thread.
    pub mlock: bool,
    /// After a restart, resume running games instead of coming back paused.
    pub resume_after_restart: bool,
    /// Members of this group (and root) may change clocks over D-Bus.
    pub admin_group: String,
    /// Art. 6.7: the competition's default time, in milliseconds (0 = the
    /// player must be present at the start).
    pub default_time_ms: u64,
    /// Refuse scheduled starts when the system clock is not NTP-synchronised.
    pub require_ntp_for_scheduled_start: bool,
    /// Where live PGN files are written (none: not written).
    pub pgn_dir: Option<PathBuf>,
    /// Extra directories watched for device hotplug (inotify).
    pub watch_dirs: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BusKind {
    #[default]
    System,
    Session,
}

/// `[engine]`: defaults for every game (a preset may override them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct EngineConfig {
    pub credit: Credit,
    pub stage_advance: StageAdvance,
    /// Absent: the FIDE default (freeze with increment or delay only).
    pub freeze: Option<bool>,
    /// Where a game's move count comes from when an e-board is attached.
    pub move_count: MoveCountSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MoveCountSource {
    /// The electronic board when one is attached and connected, else presses.
    #[default]
    Eboard,
    /// Always the presses.
    Presses,
}

/// `[display]`
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DisplayConfig {
    /// Show tenths of a second below this remaining time (ms).
    pub tenths_below_ms: u64,
    /// Beep when a time control is passed (units with a buzzer). Off by default.
    pub beep_on_control: bool,
    /// Beep in each of the last N seconds (0 = never). Off by default.
    pub beep_last_seconds: u32,
    /// 0..=255 for units that support brightness.
    pub brightness: u8,
}

/// A time control as written in the config: a notation string (PGN
/// TimeControl with extensions, US Chess notation, or a preset name), or a
/// table for per-side controls, byo-yomi and Canadian overtime.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ControlSpec {
    Notation(String),
    Table(ControlTable),
}

/// The table form of a [`ControlSpec`]. Exactly one of `control`,
/// (`white` + `black`) must be given.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct ControlTable {
    pub description: Option<String>,
    pub control: Option<SideControlSpec>,
    pub white: Option<SideControlSpec>,
    pub black: Option<SideControlSpec>,
    pub credit: Option<Credit>,
    pub stage_advance: Option<StageAdvance>,
    pub freeze: Option<bool>,
}

/// One side's control: a notation string or a byo-yomi / Canadian table.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum SideControlSpec {
    Notation(String),
    Special(SpecialControl),
}

/// Controls the notation cannot express. Times in seconds, like the notation.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, tag = "type")]
pub enum SpecialControl {
    ByoYomi {
        main: u64,
        periods: u32,
        period: u64,
    },
    Canadian {
        main: u64,
        moves: u32,
        block: u64,
    },
}

/// `[[board]]`
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BoardConfig {
    /// D-Bus object path component: `[A-Za-z0-9_]+`.
    pub id: String,
    /// Default time control: preset name or notation.
    #[serde(default = "default_board_control")]
    pub control: String,
    /// The button unit: a device reference (see [`DeviceRef`]).
    pub buttons: Option<DeviceRef>,
    /// Display units (a combined unit may appear both here and as `buttons`).
    #[serde(default)]
    pub displays: Vec<DeviceRef>,
    /// An electronic board (DGT).
    pub eboard: Option<DeviceRef>,
    /// Which side of the button unit White sits on: the unit's `left` or `right` button.
    #[serde(default)]
    pub white_button: ButtonSide,
}

fn default_board_control() -> String {
    "fide-rapid".to_owned()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ButtonSide {
    #[default]
    Left,
    Right,
}

/// A device: a path (`/dev/ttyACM0`, `/dev/serial/by-id/...`,
/// `/dev/chessclock/buttons-CC0001`) or `serial:<HELLO serial number>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub enum DeviceRef {
    Path(PathBuf),
    Serial(String),
}

impl TryFrom<String> for DeviceRef {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        if let Some(serial) = text.strip_prefix("serial:") {
            if serial.is_empty() {
                return Err("`serial:` needs a serial number after it".into());
            }
            Ok(DeviceRef::Serial(serial.to_owned()))
        } else if text.starts_with('/') {
            Ok(DeviceRef::Path(PathBuf::from(text)))
        } else {
            Err(format!(
                "device `{text}` must be an absolute path or `serial:<number>`"
            ))
        }
    }
}

impl From<DeviceRef> for String {
    fn from(device: DeviceRef) -> String {
        match device {
            DeviceRef::Path(path) => path.display().to_string(),
            DeviceRef::Serial(serial) => format!("serial:{serial}"),
        }
    }
}

impl Default for DaemonConfig {
    fn default() -> Self {
        DaemonConfig {
            state_dir: PathBuf::from("/var/lib/chessclockd"),
            bus: BusKind::System,
            rt_priority: 50,
            mlock: true,
            resume_after_restart: false,
            admin_group: "chessclock".to_owned(),
            default_time_ms: 0,
            require_ntp_for_scheduled_start: true,
            pgn_dir: None,
            watch_dirs: Vec::new(),
        }
    }
}

impl Default for DisplayConfig {
    fn default() -> Self {
        DisplayConfig {
            tenths_below_ms: 20_000,
            beep_on_control: false,
            beep_last_seconds: 0,
            brightness: 200,
        }
    }
}

/// A configuration error with its location.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let _ = path;
        todo!("config: load")
    }
}
