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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::display::{ButtonSide, DisplayConfig, DisplaySide};
use crate::engine::{Credit, MatchControl, Settings, StageAdvance, SECOND};
use crate::timecontrol::{self, TimeControl};

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

/// `[hall]`: publish every board's state and events to the event's MQTT
/// broker and take the arbiters' commands from it (see [`crate::hall`]).
/// Absent: off. Changes need a daemon restart (SIGHUP keeps the running
/// connection).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct HallConfig {
    /// `mqtt://HOST[:PORT]` (port 1883) or `mqtts://HOST[:PORT]` (TLS,
    /// port 8883; give `ca`).
    #[serde(default = "default_broker")]
    pub broker: String,
    /// The hall's name: the second level of every topic
    /// (`chessclock/<name>/...`).
    pub name: String,
    /// This host's name in `chessclock/<hall>/host/<host>/online` and the
    /// MQTT client id (default: the system's host name).
    #[serde(default)]
    pub host: Option<String>,
    /// A TOML file with `username` and `password` for the broker (keep it
    /// readable by the daemon only).
    #[serde(default)]
    pub credentials: Option<PathBuf>,
    /// The PEM file of the CA that signed the broker's certificate
    /// (`mqtts://` only).
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// MQTT keepalive in seconds (1 ..= 3600): the broker publishes this
    /// host's last will ("offline") within about 1.5 x this after the host
    /// dies.
    #[serde(default = "default_keepalive")]
    pub keepalive_seconds: u16,
    /// Messages (events, replies) kept while the broker is away; beyond it
    /// the oldest are dropped, counted and reported on reconnect. The
    /// boards' states are never dropped (the latest of each is kept).
    #[serde(default = "default_hall_buffer")]
    pub buffer: usize,
}

fn default_broker() -> String {
    "mqtt://127.0.0.1:1883".to_owned()
}

fn default_keepalive() -> u16 {
    5
}

fn default_hall_buffer() -> usize {
    1024
}

/// Where a `[hall] broker` URL points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerAddress {
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

impl BrokerAddress {
    /// Reads `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]` (an IPv6
    /// address in brackets).
    pub fn parse(url: &str) -> Result<BrokerAddress, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("mqtts://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("mqtt://") {
            (false, rest)
        } else {
            return Err(format!(
                "broker `{url}` must start with mqtt:// or mqtts://"
            ));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let default_port = if tls { 8883 } else { 1883 };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("broker `{url}`: `[` without `]`"))?;
            match after {
                "" => (host, None),
                other => match other.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None => return Err(format!("broker `{url}`: expected `:PORT` after `]`")),
                },
            }
        } else {
            match rest.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            }
        };
        if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
            return Err(format!(
                "broker `{url}`: give a host name or address, then optionally :PORT \
                 (no user, path or query)"
            ));
        }
        let port = match port {
            None => default_port,
            Some(text) => match text.parse::<u16>() {
                Ok(port) if port > 0 => port,
                _ => return Err(format!("broker `{url}`: port `{text}` is not 1 ..= 65535")),
            },
        };
        Ok(BrokerAddress {
            host: host.to_owned(),
            port,
            tls,
        })
    }
}

/// Why a hall or host name cannot be a topic level, if it cannot.
pub fn check_topic_level(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    if name.len() > 64 {
        return Err(format!("{what} `{name}` is longer than 64 bytes"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| matches!(c, '/' | '+' | '#') || c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "{what} `{name}` cannot be an MQTT topic level (found {bad:?}): \
             no `/`, `+`, `#`, spaces or control characters"
        ));
    }
    Ok(())
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

/// One entry of a board's `displays`: the device and the side it shows.
/// Written as a plain device string (side `both`) or as a table
/// `{ device = "/dev/...", side = "black" }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DisplayRef {
    pub device: DeviceRef,
    pub side: DisplaySide,
}

impl From<DeviceRef> for DisplayRef {
    fn from(device: DeviceRef) -> DisplayRef {
        DisplayRef {
            device,
            side: DisplaySide::Both,
        }
    }
}

impl Serialize for DisplayRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.side == DisplaySide::Both {
            return self.device.serialize(serializer);
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("device", &self.device)?;
        map.serialize_entry("side", &self.side)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for DisplayRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = DisplayRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a device (`/dev/...` or `serial:<number>`) or a table \
                     `{ device = \"...\", side = \"white\" | \"black\" | \"both\" }`",
                )
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<DisplayRef, E> {
                DeviceRef::try_from(text.to_owned())
                    .map(DisplayRef::from)
                    .map_err(E::custom)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<DisplayRef, A::Error> {
                use serde::de::Error;
                let mut device: Option<DeviceRef> = None;
                let mut side: Option<DisplaySide> = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "device" if device.is_none() => device = Some(map.next_value()?),
                        "side" if side.is_none() => side = Some(map.next_value()?),
                        "device" | "side" => {
                            return Err(A::Error::custom(format!("duplicate field `{key}`")))
                        }
                        other => return Err(A::Error::unknown_field(other, &["device", "side"])),
                    }
                }
                Ok(DisplayRef {
                    device: device.ok_or_else(|| A::Error::missing_field("device"))?,
                    side: side.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_any(Visitor)
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
    /// A validation error located in the file (the key at fault).
    #[error("{path}:{line}:{column}: {message}")]
    InvalidAt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Where in the file a validation error belongs.
enum Place {
    /// A key of a top-level table (`[daemon]`, `rt-priority`).
    Key(&'static str, &'static str),
    Preset(String),
    /// The board with this index, at the line of this key or text.
    Board(usize, String),
}

/// 1-based (line, column) of `place` in the config text, if it can be found.
fn locate(text: &str, place: &Place) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let column = |line: &str| line.len() - line.trim_start().len() + 1;
    let is_key = |line: &str, key: &str| {
        let trimmed = line.trim_start();
        let rest = trimmed
            .strip_prefix(key)
            .or_else(|| trimmed.strip_prefix(&format!("\"{key}\"")));
        rest.is_some_and(|r| r.trim_start().starts_with('='))
    };
    match place {
        Place::Key(table, key) => {
            let mut inside = false;
            for (i, line) in lines.iter().enumerate() {
                let trimmed = line.trim();
                if trimmed.starts_with('[') {
                    inside = trimmed == format!("[{table}]");
                } else if inside && is_key(line, key) {
                    return Some((i + 1, column(line)));
                }
            }
            None
        }
        Place::Preset(name) => {
            let mut in_presets = false;
            for (i, line) in lines.iter().enumerate() {
                let trimmed = line.trim();
                if trimmed.starts_with('[') {
                    if trimmed == format!("[presets.{name}]")
                        || trimmed == format!("[presets.\"{name}\"]")
                    {
                        return Some((i + 1, column(line)));
                    }
                    in_presets = trimmed == "[presets]";
                } else if in_presets && is_key(line, name) {
                    return Some((i + 1, column(line)));
                }
            }
            None
        }
        Place::Board(index, needle) => {
            let header = lines
                .iter()
                .enumerate()
                .filter(|(_, line)| line.trim() == "[[board]]")
                .nth(*index)?
                .0;
            for (i, line) in lines.iter().enumerate().skip(header + 1) {
                if line.trim_start().starts_with('[') {
                    break;
                }
                if is_key(line, needle) {
                    return Some((i + 1, column(line)));
                }
                if let Some(at) = line.find(&format!("\"{needle}\"")) {
                    return Some((i + 1, line[..at].chars().count() + 1));
                }
            }
            Some((header + 1, column(lines[header])))
        }
    }
}

/// The largest time a config table may give, in seconds (as the notation).
const MAX_SECONDS: u64 = (crate::timecontrol::MAX_TIME / SECOND) as u64;

fn seconds(value: u64, what: &str) -> Result<i64, String> {
    if value > MAX_SECONDS {
        return Err(format!("{what} is too large (at most {MAX_SECONDS} s)"));
    }
    Ok(value as i64 * SECOND)
}

impl SpecialControl {
    /// The engine's control for this table.
    pub fn to_control(&self) -> Result<TimeControl, String> {
        match *self {
            SpecialControl::ByoYomi {
                main,
                periods,
                period,
            } => {
                if periods == 0 {
                    return Err("byo-yomi needs at least 1 period".into());
                }
                if periods > crate::timecontrol::MAX_MOVES {
                    return Err(format!(
                        "at most {} byo-yomi periods",
                        crate::timecontrol::MAX_MOVES
                    ));
                }
                if period == 0 {
                    return Err("a byo-yomi period must be longer than 0 s".into());
                }
                Ok(TimeControl::ByoYomi {
                    main: seconds(main, "`main`")?,
                    periods,
                    period: seconds(period, "`period`")?,
                })
            }
            SpecialControl::Canadian { main, moves, block } => {
                if moves == 0 {
                    return Err("a Canadian block needs at least 1 move".into());
                }
                if moves > crate::timecontrol::MAX_MOVES {
                    return Err(format!(
                        "a Canadian block of {moves} moves is more than a game can have (at most {})",
                        crate::timecontrol::MAX_MOVES
                    ));
                }
                if block == 0 {
                    return Err("a Canadian block must be longer than 0 s".into());
                }
                Ok(TimeControl::Canadian {
                    main: seconds(main, "`main`")?,
                    moves,
                    block: seconds(block, "`block`")?,
                })
            }
        }
    }
}

impl SideControlSpec {
    /// The engine's control: a notation (not a preset name) or a special table.
    pub fn to_control(&self) -> Result<TimeControl, String> {
        match self {
            SideControlSpec::Notation(text) => {
                timecontrol::parse(text).map_err(|e| format!("`{text}`: {e}"))
            }
            SideControlSpec::Special(special) => special.to_control(),
        }
    }
}

impl ControlTable {
    /// The per-side controls of this table, and its settings merged over `base`.
    pub fn resolve(&self, base: Settings) -> Result<(MatchControl, Settings), String> {
        let control = match (&self.control, &self.white, &self.black) {
            (Some(both), None, None) => MatchControl::same(both.to_control()?),
            (None, Some(white), Some(black)) => MatchControl {
                white: white.to_control().map_err(|e| format!("white: {e}"))?,
                black: black.to_control().map_err(|e| format!("black: {e}"))?,
            },
            (None, Some(_), None) | (None, None, Some(_)) => {
                return Err("give both `white` and `black`, or `control`".into())
            }
            (None, None, None) => return Err("give `control`, or `white` and `black`".into()),
            (Some(_), _, _) => {
                return Err("give either `control` or `white` and `black`, not both".into())
            }
        };
        let settings = Settings {
            credit: self.credit.unwrap_or(base.credit),
            stage_advance: self.stage_advance.unwrap_or(base.stage_advance),
            freeze: self.freeze.or(base.freeze),
        };
        Ok((control, settings))
    }
}

/// A built-in preset: name, description, control.
pub struct BuiltinPreset {
    pub name: &'static str,
    pub description: &'static str,
    pub spec: fn() -> ControlSpec,
}

fn notation(text: &str) -> ControlSpec {
    ControlSpec::Notation(text.to_owned())
}

fn per_side(white: &str, black: &str, description: &str) -> ControlSpec {
    ControlSpec::Table(ControlTable {
        description: Some(description.to_owned()),
        white: Some(SideControlSpec::Notation(white.to_owned())),
        black: Some(SideControlSpec::Notation(black.to_owned())),
        ..ControlTable::default()
    })
}

fn special(control: SpecialControl, description: &str) -> ControlSpec {
    ControlSpec::Table(ControlTable {
        description: Some(description.to_owned()),
        control: Some(SideControlSpec::Special(control)),
        ..ControlTable::default()
    })
}

/// The presets every daemon knows; a config's `[presets]` entry of the same
/// name replaces one.
pub fn builtin_presets() -> &'static [BuiltinPreset] {
    const PRESETS: &[BuiltinPreset] = &[
        BuiltinPreset {
            name: "fide-classical",
            description:
                "FIDE classical: 90 min for 40 moves, then 30 min, 30 s per move from move 1",
            spec: || notation("40/5400+30:1800+30"),
        },
        BuiltinPreset {
            name: "fide-rapid",
            description: "FIDE rapid: 15 min, 10 s per move",
            spec: || notation("900+10"),
        },
        BuiltinPreset {
            name: "fide-blitz",
            description: "FIDE blitz: 3 min, 2 s per move",
            spec: || notation("180+2"),
        },
        BuiltinPreset {
            name: "blitz",
            description: "blitz: 3 min, 2 s per move",
            spec: || notation("180+2"),
        },
        BuiltinPreset {
            name: "blitz-5",
            description: "blitz: 5 min, 3 s per move",
            spec: || notation("300+3"),
        },
        BuiltinPreset {
            name: "bullet",
            description: "bullet: 1 min, 1 s per move",
            spec: || notation("60+1"),
        },
        BuiltinPreset {
            name: "armageddon",
            description: "Armageddon: White 5 min, Black 4 min (draw odds), no increment",
            spec: || per_side("300", "240", "Armageddon: White 5 min, Black 4 min"),
        },
        BuiltinPreset {
            name: "us-classical",
            description: "US Chess: 40 moves in 120 min, then 30 min sudden death, 5 s delay",
            spec: || notation("40/120, SD/30;d5"),
        },
        BuiltinPreset {
            name: "us-rapid",
            description: "US Chess: game in 25 min, 5 s delay",
            spec: || notation("G/25;d5"),
        },
        BuiltinPreset {
            name: "byo-yomi",
            description: "10 min, then byo-yomi: 5 periods of 30 s",
            spec: || {
                special(
                    SpecialControl::ByoYomi {
                        main: 600,
                        periods: 5,
                        period: 30,
                    },
                    "10 min, then byo-yomi: 5 periods of 30 s",
                )
            },
        },
        BuiltinPreset {
            name: "canadian",
            description: "10 min, then Canadian overtime: 25 moves in 5 min",
            spec: || {
                special(
                    SpecialControl::Canadian {
                        main: 600,
                        moves: 25,
                        block: 300,
                    },
                    "10 min, then Canadian overtime: 25 moves in 5 min",
                )
            },
        },
        BuiltinPreset {
            name: "hourglass",
            description: "hourglass: 3 min each, time used goes to the opponent",
            spec: || notation("*180"),
        },
        BuiltinPreset {
            name: "upcount",
            description: "no time limit: both clocks count up",
            spec: || notation("-"),
        },
    ];
    PRESETS
}

/// Why a board id is refused, if it is.
fn check_board_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("a board id must not be empty".into());
    }
    if let Some(bad) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "board id `{id}` may only contain A-Z, a-z, 0-9 and `_` (found `{bad}`)"
        ));
    }
    Ok(())
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
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

    /// Parses and validates config text; `path` names it in errors.
    pub fn parse_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|error| {
            let (line, column) = error
                .span()
                .map_or((1, 1), |span| line_column(text, span.start));
            ConfigError::Syntax {
                path: path.to_owned(),
                line,
                column,
                message: error.message().trim().to_owned(),
            }
        })?;
        config
            .check()
            .map_err(|(message, place)| match locate(text, &place) {
                Some((line, column)) => ConfigError::InvalidAt {
                    path: path.to_owned(),
                    line,
                    column,
                    message,
                },
                None => ConfigError::Invalid {
                    path: path.to_owned(),
                    message,
                },
            })?;
        Ok(config)
    }

    /// Checks what the schema alone cannot: board ids, devices used twice,
    /// presets and board controls that do not resolve.
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(|(message, _)| message)
    }

    fn check(&self) -> Result<(), (String, Place)> {
        let (_, max_priority) = crate::runtime::realtime::fifo_priority_range();
        if i32::from(self.daemon.rt_priority) > max_priority {
            return Err((
                format!(
                    "[daemon] rt-priority {} is above this kernel's highest SCHED_FIFO priority, \
                     {max_priority}: give 1 to {max_priority}, or 0 to run without real-time priority",
                    self.daemon.rt_priority
                ),
                Place::Key("daemon", "rt-priority"),
            ));
        }
        for name in self.presets.keys() {
            self.resolve_control(name).map_err(|e| {
                (
                    format!("[presets] `{name}`: {e}"),
                    Place::Preset(name.clone()),
                )
            })?;
        }
        if let Some(hall) = &self.hall {
            let at = |key| Place::Key("hall", key);
            let address = BrokerAddress::parse(&hall.broker)
                .map_err(|e| (format!("[hall] {e}"), at("broker")))?;
            check_topic_level("[hall] name", &hall.name).map_err(|e| (e, at("name")))?;
            if let Some(host) = &hall.host {
                check_topic_level("[hall] host", host).map_err(|e| (e, at("host")))?;
            }
            if !(1..=3600).contains(&hall.keepalive_seconds) {
                return Err((
                    format!(
                        "[hall] keepalive-seconds {} is out of range: give 1 to 3600",
                        hall.keepalive_seconds
                    ),
                    at("keepalive-seconds"),
                ));
            }
            if hall.buffer == 0 || hall.buffer > 1_000_000 {
                return Err((
                    format!(
                        "[hall] buffer {} is out of range: give 1 to 1000000 messages",
                        hall.buffer
                    ),
                    at("buffer"),
                ));
            }
            match (address.tls, &hall.ca) {
                (true, None) => {
                    return Err((
                        "[hall] an mqtts:// broker needs `ca`, the PEM file of the CA that \
                         signed its certificate"
                            .into(),
                        at("broker"),
                    ))
                }
                (false, Some(_)) => {
                    return Err((
                        "[hall] `ca` is for an mqtts:// broker; this one is mqtt:// (no TLS)"
                            .into(),
                        at("ca"),
                    ))
                }
                _ => {}
            }
        }
        let mut ids = std::collections::BTreeSet::new();
        let mut devices: std::collections::HashMap<&DeviceRef, &str> =
            std::collections::HashMap::new();
        for (index, board) in self.boards.iter().enumerate() {
            let at = |key: &str| Place::Board(index, key.to_owned());
            check_board_id(&board.id).map_err(|e| (e, at("id")))?;
            if !ids.insert(board.id.as_str()) {
                return Err((format!("board id `{}` is used twice", board.id), at("id")));
            }
            self.resolve_control(&board.control)
                .map_err(|e| (format!("board `{}`: control: {e}", board.id), at("control")))?;
            for (name, value) in self.pgn_tags(board) {
                chessclock_core::eboard::follower::check_tag(&name, &value).map_err(|e| {
                    (
                        format!("board `{}`: {e}", board.id),
                        at(&name.to_lowercase()),
                    )
                })?;
            }
            let mut own: Vec<&DeviceRef> = Vec::new();
            own.extend(board.buttons.iter());
            own.extend(board.displays.iter().map(|d| &d.device));
            own.extend(board.eboard.iter());
            let mut seen: Vec<&DeviceRef> = Vec::new();
            for device in own {
                // a combined unit may be both the buttons and a display
                if seen.contains(&device) {
                    continue;
                }
                seen.push(device);
                if let Some(other) = devices.insert(device, board.id.as_str()) {
                    let name = String::from(device.clone());
                    return Err((
                        format!(
                            "device `{name}` is used by both board `{other}` and board `{}`",
                            board.id
                        ),
                        at(&name),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The engine settings of `[engine]`.
    pub fn settings(&self) -> Settings {
        Settings {
            credit: self.engine.credit,
            stage_advance: self.engine.stage_advance,
            freeze: self.engine.freeze,
        }
    }

    /// The preset of that name: the config's own first, then the built-in one.
    pub fn preset(&self, name: &str) -> Option<ControlSpec> {
        if let Some(spec) = self.presets.get(name) {
            return Some(spec.clone());
        }
        builtin_presets()
            .iter()
            .find(|p| p.name == name)
            .map(|p| (p.spec)())
    }

    /// Every preset name this config knows (built-in and its own), sorted.
    pub fn preset_names(&self) -> Vec<String> {
        let mut names: Vec<String> = builtin_presets()
            .iter()
            .map(|p| p.name.to_owned())
            .chain(self.presets.keys().cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// A preset name or a notation, as the engine needs it, with the
    /// `[engine]` settings (overridden by a preset table's own).
    pub fn resolve_control(&self, text: &str) -> Result<(MatchControl, Settings), String> {
        self.resolve_at_depth(text.trim(), 0)
    }

    fn resolve_at_depth(
        &self,
        text: &str,
        depth: usize,
    ) -> Result<(MatchControl, Settings), String> {
        // a preset may name another preset; a cycle must end in an error
        if depth > 8 {
            return Err(format!(
                "preset `{text}`: presets refer to each other in a cycle"
            ));
        }
        match self.preset(text) {
            Some(ControlSpec::Table(table)) => table
                .resolve(self.settings())
                .map_err(|e| format!("preset `{text}`: {e}")),
            Some(ControlSpec::Notation(inner)) => {
                if inner.trim() != text && self.preset(inner.trim()).is_some() {
                    return self.resolve_at_depth(inner.trim(), depth + 1);
                }
                let control = timecontrol::parse(&inner)
                    .map_err(|e| format!("preset `{text}` = `{inner}`: {e}"))?;
                Ok((MatchControl::same(control), self.settings()))
            }
            None => match timecontrol::parse(text) {
                Ok(control) => Ok((MatchControl::same(control), self.settings())),
                Err(e) => Err(format!(
                    "`{text}` is neither a preset ({}) nor a time control: {e}",
                    self.preset_names().join(", ")
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Side;

    fn config(text: &str) -> Result<Config, ConfigError> {
        Config::parse_str(text, Path::new("test.toml"))
    }

    #[test]
    fn builtin_presets_all_resolve_to_what_they_promise() {
        let config = Config::default();
        for preset in builtin_presets() {
            config.resolve_control(preset.name).unwrap();
        }
        let control = |name: &str| config.resolve_control(name).unwrap().0;
        assert_eq!(
            control("fide-classical").white.to_string(),
            "40/5400+30:1800+30"
        );
        assert_eq!(control("fide-rapid").white.to_string(), "900+10");
        assert_eq!(control("blitz").white.to_string(), "180+2");
        assert_eq!(
            control("us-classical").white.to_string(),
            "40/7200d5:1800d5"
        );
        let armageddon = control("armageddon");
        assert_eq!(armageddon.for_side(Side::White).to_string(), "300");
        assert_eq!(armageddon.for_side(Side::Black).to_string(), "240");
    }

    #[test]
    fn notation_when_not_a_preset_with_engine_settings() {
        let config = config("[engine]\ncredit = \"after-move\"\n").unwrap();
        let (control, settings) = config.resolve_control(" G/90;d5 ").unwrap();
        assert_eq!(control.white.to_string(), "5400d5");
        assert_eq!(settings.credit, Credit::AfterMove);
        let err = config.resolve_control("fide-clasical").unwrap_err();
        assert!(err.contains("neither a preset"), "{err}");
        assert!(err.contains("fide-classical"), "lists the presets: {err}");
    }

    #[test]
    fn config_presets_override_builtins_and_may_alias() {
        let config = config(
            "[presets]\nblitz = \"300+3\"\nmy-blitz = \"blitz\"\n\
             [presets.slow]\ncontrol = \"3600\"\nfreeze = true\ncredit = \"after-move\"\n",
        )
        .unwrap();
        assert_eq!(
            config.resolve_control("blitz").unwrap().0.white.to_string(),
            "300+3"
        );
        assert_eq!(
            config
                .resolve_control("my-blitz")
                .unwrap()
                .0
                .white
                .to_string(),
            "300+3"
        );
        let (_, settings) = config.resolve_control("slow").unwrap();
        assert_eq!(settings.freeze, Some(true));
        assert_eq!(settings.credit, Credit::AfterMove);
    }

    #[test]
    fn preset_cycles_and_bad_presets_are_refused() {
        let err = config("[presets]\na = \"b\"\nb = \"a\"\n").unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
        let err = config("[presets]\nbroken = \"40/\"\n").unwrap_err();
        assert!(err.to_string().contains("`broken`"), "{err}");
        let err = config("[presets.half]\nwhite = \"300\"\n").unwrap_err();
        assert!(
            err.to_string().contains("both `white` and `black`"),
            "{err}"
        );
    }

    #[test]
    fn boards_are_validated() {
        let err = config("[[board]]\nid = \"a\"\n[[board]]\nid = \"a\"\n").unwrap_err();
        assert!(err.to_string().contains("used twice"), "{err}");
        let err = config("[[board]]\nid = \"\"\n").unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let err = config(
            "[[board]]\nid = \"a\"\nbuttons = \"serial:X\"\n[[board]]\nid = \"b\"\ndisplays = [\"serial:X\"]\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("`serial:X`"), "{err}");
        let err = config("[[board]]\nid = \"a\"\ncontrol = \"nonsense\"\n").unwrap_err();
        assert!(err.to_string().contains("board `a`"), "{err}");
        let ok = config(
            "[[board]]\nid = \"Board_7\"\nbuttons = \"serial:X\"\ndisplays = [\"serial:X\"]\n",
        )
        .unwrap();
        assert_eq!(ok.boards[0].control, "fide-rapid");
        let err = config("[[board]]\nid = \"a\"\nbuttons = \"ttyACM0\"\n").unwrap_err();
        match err {
            ConfigError::Syntax { line, .. } => assert_eq!(line, 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn validation_errors_point_at_the_key() {
        let at = |text: &str| match config(text).unwrap_err() {
            ConfigError::InvalidAt { line, column, .. } => (line, column),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            at("[[board]]\nid = \"a\"\n\n[[board]]\n  id = \"a\"\n"),
            (5, 3)
        );
        assert_eq!(at("[[board]]\nid = \"a\"\ncontrol = \"x\"\n"), (3, 1));
        assert_eq!(at("[presets]\nok = \"300\"\nbad = \"3x\"\n"), (3, 1));
        assert_eq!(at("[presets.bad]\nwhite = \"300\"\n"), (1, 1));
        assert_eq!(
            at("[[board]]\nid = \"a\"\nbuttons = \"serial:X\"\n[[board]]\nid = \"b\"\ndisplays = [\"serial:X\"]\n"),
            (6, 13)
        );
    }

    #[test]
    fn displays_take_a_side_and_plain_strings_still_work() {
        let parsed = config(
            "[[board]]\nid = \"a\"\ndisplays = [\"/dev/d0\", { device = \"/dev/d1\", side = \"black\" },\n  { device = \"serial:D2\", side = \"white\" }, { device = \"/dev/d3\" }]\n",
        )
        .unwrap();
        let sides: Vec<(String, DisplaySide)> = parsed.boards[0]
            .displays
            .iter()
            .map(|d| (String::from(d.device.clone()), d.side))
            .collect();
        assert_eq!(
            sides,
            vec![
                ("/dev/d0".to_owned(), DisplaySide::Both),
                ("/dev/d1".to_owned(), DisplaySide::Black),
                ("serial:D2".to_owned(), DisplaySide::White),
                ("/dev/d3".to_owned(), DisplaySide::Both),
            ]
        );
        // Written back the same way (a plain string for `both`).
        let text = toml::to_string(&parsed).unwrap();
        assert!(text.contains("\"/dev/d0\""), "{text}");
        let again = Config::parse_str(&text, Path::new("again.toml")).unwrap();
        assert_eq!(again.boards, parsed.boards);
        // The same device twice on one board, as a display and in a table.
        let err = config(
            "[[board]]\nid = \"a\"\ndisplays = [{ device = \"/dev/x\", side = \"black\" }]\n[[board]]\nid = \"b\"\ndisplays = [\"/dev/x\"]\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("`/dev/x` is used by both"),
            "{err}"
        );
    }

    #[test]
    fn bad_display_entries_name_line_and_column() {
        let at = |text: &str| match config(text).unwrap_err() {
            ConfigError::Syntax {
                line,
                column,
                message,
                ..
            } => (line, column, message),
            other => panic!("{other:?}"),
        };
        let (line, column, message) =
            at("[[board]]\nid = \"a\"\ndisplays = [{ device = \"/dev/d1\", side = \"blue\" }]\n");
        assert_eq!((line, column), (3, 42), "{message}");
        assert!(
            message.contains("white") && message.contains("black"),
            "{message}"
        );
        let (line, _, message) = at("[[board]]\nid = \"a\"\n\ndisplays = [{ side = \"black\" }]\n");
        assert_eq!(line, 4);
        assert!(message.contains("missing field `device`"), "{message}");
        let (_, _, message) = at("[[board]]\nid = \"a\"\ndisplays = [{ device = \"ttyACM0\" }]\n");
        assert!(message.contains("must be an absolute path"), "{message}");
        let (_, _, message) =
            at("[[board]]\nid = \"a\"\ndisplays = [{ device = \"/dev/d\", panel = 1 }]\n");
        assert!(message.contains("unknown field `panel`"), "{message}");
        let (_, _, message) = at("[[board]]\nid = \"a\"\ndisplays = [7]\n");
        assert!(message.contains("a device"), "{message}");
    }

    #[test]
    fn an_rt_priority_above_the_kernels_maximum_is_an_error() {
        let (_, max) = crate::runtime::realtime::fifo_priority_range();
        assert!(max >= 1, "{max}");
        let ok = config(&format!("[daemon]\nrt-priority = {max}\n")).unwrap();
        assert_eq!(i32::from(ok.daemon.rt_priority), max);
        if max < 255 {
            let err = config(&format!(
                "[daemon]\nmlock = true\nrt-priority = {}\n",
                max + 1
            ))
            .unwrap_err();
            match err {
                ConfigError::InvalidAt {
                    line,
                    column,
                    message,
                    ..
                } => {
                    assert_eq!((line, column), (3, 1));
                    assert!(
                        message.contains(&format!("highest SCHED_FIFO priority, {max}")),
                        "{message}"
                    );
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(config("[daemon]\nrt-priority = 0\n").is_ok());
    }

    #[test]
    fn zero_time_controls_are_config_errors_at_their_key() {
        let at = |text: &str| match config(text).unwrap_err() {
            ConfigError::InvalidAt {
                line,
                column,
                message,
                ..
            } => (line, column, message),
            other => panic!("{other:?}"),
        };
        let (line, column, message) = at("[[board]]\nid = \"a\"\ncontrol = \"0+0\"\n");
        assert_eq!((line, column), (3, 1));
        assert!(message.contains("0 s"), "{message}");
        let (line, _, message) = at("[presets]\nnothing = \"40/0:1800\"\n");
        assert_eq!(line, 2);
        assert!(
            message.contains("`nothing`") && message.contains("0 s"),
            "{message}"
        );
        let (_, _, message) = at("[presets.t]\nwhite = \"300\"\nblack = \"*0\"\n");
        assert!(message.contains("black"), "{message}");
    }

    #[test]
    fn crash_safety_is_on_unless_turned_off() {
        assert!(Config::default().daemon.crash_safety);
        assert!(
            !config("[daemon]\ncrash-safety = false\n")
                .unwrap()
                .daemon
                .crash_safety
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("", 5), (1, 1));
    }
    #[test]
    fn the_hall_is_off_by_default_and_checked_where_written() {
        assert_eq!(Config::default().hall, None);
        let hall = config("[hall]\nname = \"open\"\n").unwrap().hall.unwrap();
        assert_eq!(hall.broker, "mqtt://127.0.0.1:1883");
        assert_eq!(hall.keepalive_seconds, 5);
        assert!(matches!(
            config("[hall]\nbroker = \"mqtt://h\"\n"),
            Err(ConfigError::Syntax { .. })
        ));
        for (text, line, needle) in [
            (
                "[hall]\nname = \"a\"\nbroker = \"http://x\"\n",
                3,
                "mqtt://",
            ),
            ("[hall]\nbroker = \"mqtt://x:0\"\nname = \"a\"\n", 2, "port"),
            ("[hall]\nname = \"a/b\"\n", 2, "topic level"),
            ("[hall]\nname = \"a\"\nhost = \"pi#1\"\n", 3, "topic level"),
            (
                "[hall]\nname = \"a\"\nkeepalive-seconds = 0\n",
                3,
                "keepalive",
            ),
            ("[hall]\nname = \"a\"\nbroker = \"mqtts://x\"\n", 3, "`ca`"),
            ("[hall]\nname = \"a\"\nca = \"/ca.pem\"\n", 3, "mqtts"),
        ] {
            match config(text) {
                Err(ConfigError::InvalidAt {
                    line: at, message, ..
                }) => {
                    assert_eq!(at, line, "{text}: {message}");
                    assert!(message.contains(needle), "{text}: {message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn broker_addresses() {
        let at = |url| BrokerAddress::parse(url);
        assert_eq!(
            at("mqtt://127.0.0.1:1884"),
            Ok(BrokerAddress {
                host: "127.0.0.1".into(),
                port: 1884,
                tls: false
            })
        );
        assert_eq!(
            at("mqtts://hall.lan").map(|a| (a.port, a.tls)),
            Ok((8883, true))
        );
        assert_eq!(
            at("mqtt://[::1]:9").map(|a| (a.host, a.port)),
            Ok(("::1".into(), 9))
        );
        assert!(at("mqtt://user@h").is_err());
        assert!(at("mqtt://h:x").is_err());
        assert!(at("mqtt://").is_err());
    }
}
