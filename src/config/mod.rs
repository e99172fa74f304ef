//! The daemon's configuration: TOML, kebab-case keys, unknown keys refused.
//!
//! Promises: [`Config::default`] is the embedded configuration the daemon runs
//! on without a file (the `--demo` board lives elsewhere); [`Config::load`]
//! names the file, line and column of any error; the shipped
//! `config/chessclockd.toml` always parses (a test checks it); a loaded config
//! is validated: board ids are `[A-Za-z0-9_]+` and unique, no device serves
//! two boards, and every preset and board control resolves to a time control.
//!
//! Time controls are resolved by [`Config::resolve_control`]: a preset name
//! (the config's `[presets]` first, then the [`builtin_presets`]) or a
//! notation (see [`crate::timecontrol`]); a preset table's `credit`,
//! `stage-advance` and `freeze` override the `[engine]` defaults.
//!
//! The keys are a public interface (operators' config files): keys are only
//! ever added, never renamed.
//!
//! The module is split by responsibility, all under the one public path
//! `crate::config`: the schema and [`Config::load`] here, the devices'
//! notation in `devices`, time controls and the built-in presets in
//! `controls`, the checks the schema cannot make in `validate`, and the
//! `file:line:column` rendering of errors in `errors`.

mod controls;
mod devices;
mod errors;
mod hall;
mod validate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use self::controls::{builtin_presets, BuiltinPreset};
pub use self::devices::{DeviceRef, DisplayRef};
pub use self::errors::ConfigError;
pub use self::hall::{check_topic_level, BrokerAddress, HallConfig};
pub use crate::display::{ButtonSide, DisplayConfig, DisplaySide};
use crate::engine::{Credit, StageAdvance};

/// The whole configuration file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Config {
    pub daemon: DaemonConfig,
    /// `[event]`: the PGN tags every board's games start with.
    pub event: EventConfig,
    pub engine: EngineConfig,
    pub display: DisplayConfig,
    /// Named time-control presets, in addition to the built-in ones.
    pub presets: BTreeMap<String, ControlSpec>,
    /// The boards this daemon runs (TOML: `[[board]]`).
    #[serde(rename = "board")]
    pub boards: Vec<BoardConfig>,
    /// `[hall]`: every board on the event's MQTT broker (none: off).
    pub hall: Option<HallConfig>,
}

/// `[daemon]`
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DaemonConfig {
    /// Where the SQLite state lives.
    pub state_dir: PathBuf,
    /// `true` (the default): a state directory that cannot be used stops
    /// the daemon with an error. `false`: the daemon then runs from memory
    /// (a crash loses every game) and says so in the state health.
    pub crash_safety: bool,
    /// `system` or `session` bus.
    pub bus: BusKind,
    /// SCHED_FIFO priority of the timing thread (1 ..= the kernel's maximum,
    /// `sched_get_priority_max(SCHED_FIFO)`, usually 99); 0 = do not ask.
    /// Above the maximum is a config error.
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
    /// `allow` (the default): the host's radios are reported; `forbid`: a
    /// radio that may transmit (Wi-Fi up, Bluetooth not blocked) is a
    /// finding, for a wired hall.
    pub radios: crate::radios::RadioPolicy,
}

/// `[event]`: defaults of the PGN tags of every board's games (a
/// `[[board]]` key of the same name overrides one; `chessclockctl tags` sets
/// them per game).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct EventConfig {
    /// The `Event` tag.
    pub name: Option<String>,
    /// The `Site` tag.
    pub site: Option<String>,
    /// The `Round` tag (`3`, or `3.1` for board 1 of round 3).
    pub round: Option<String>,
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
    /// Display units (a combined unit may appear both here and as `buttons`):
    /// a device reference, or `{ device = "...", side = "white" | "black" |
    /// "both" }` for the side it shows (default `both`; see [`DisplaySide`]).
    #[serde(default)]
    pub displays: Vec<DisplayRef>,
    /// An electronic board (DGT).
    pub eboard: Option<DeviceRef>,
    /// Which side of the button unit White sits on: the unit's `left` or `right` button.
    #[serde(default)]
    pub white_button: ButtonSide,
    /// Club practice: before the game has started, a press of Black's button
    /// starts White's clock. Off by default (FIDE Art. 6.6: the arbiter
    /// starts the clocks); the `--demo` board has it on.
    #[serde(default)]
    pub start_on_black_press: bool,
    /// The board's control gives less than a minute of base time on
    /// purpose (`15+10` is 15 seconds: the notation counts seconds, and a
    /// control under a minute is refused as a likely slip without this, as
    /// `chessclockctl new` refuses it without `--yes`).
    #[serde(default)]
    pub short_control: bool,
    /// PGN tags of this board's games: `Event` (over `[event] name`),
    /// `Site`, `Round`, `White`, `Black`.
    #[serde(default)]
    pub event: Option<String>,
    #[serde(default)]
    pub site: Option<String>,
    #[serde(default)]
    pub round: Option<String>,
    #[serde(default)]
    pub white: Option<String>,
    #[serde(default)]
    pub black: Option<String>,
}

impl Config {
    /// The PGN tags a new game of `board` starts with: `[event]`, then the
    /// board's own keys.
    pub fn pgn_tags(&self, board: &BoardConfig) -> BTreeMap<String, String> {
        let mut tags = BTreeMap::new();
        let pairs = [
            ("Event", board.event.as_ref().or(self.event.name.as_ref())),
            ("Site", board.site.as_ref().or(self.event.site.as_ref())),
            ("Round", board.round.as_ref().or(self.event.round.as_ref())),
            ("White", board.white.as_ref()),
            ("Black", board.black.as_ref()),
        ];
        for (name, value) in pairs {
            if let Some(value) = value.filter(|v| !v.is_empty()) {
                tags.insert(name.to_owned(), value.clone());
            }
        }
        tags
    }
}

fn default_board_control() -> String {
    "fide-rapid".to_owned()
}

impl Default for DaemonConfig {
    fn default() -> Self {
        DaemonConfig {
            state_dir: PathBuf::from("/var/lib/chessclockd"),
            crash_safety: true,
            bus: BusKind::System,
            rt_priority: 50,
            mlock: true,
            resume_after_restart: false,
            admin_group: "chessclock".to_owned(),
            default_time_ms: 0,
            require_ntp_for_scheduled_start: true,
            pgn_dir: None,
            watch_dirs: Vec::new(),
            radios: crate::radios::RadioPolicy::Allow,
        }
    }
}

impl Config {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        Config::parse_str(&text, path)
    }

    /// [`Config::load`], and what in the file is valid but most likely a
    /// slip, one line each (`FILE:LINE:COLUMN: warning: ...`).
    pub fn load_with_warnings(path: &Path) -> Result<(Config, Vec<String>), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        let config = Config::parse_str(&text, path)?;
        let warnings = config
            .slips()
            .into_iter()
            .map(|(message, place)| {
                errors::invalid(&text, path, format!("warning: {message}"), &place).to_string()
            })
            .collect();
        Ok((config, warnings))
    }

    /// Parses and validates config text; `path` names it in errors.
    pub fn parse_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config =
            toml::from_str(text).map_err(|error| errors::syntax(text, path, &error))?;
        config
            .check()
            .map_err(|(message, place)| errors::invalid(text, path, message, &place))?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests;
