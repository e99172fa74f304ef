//! The hall's wire format: topics and JSON payloads (pure, no I/O).
//!
//! Promises: every payload is a JSON object with `schema` 1; fields are only
//! ever added. A command payload from the broker is outside input: any byte
//! string gives either a command or an error reply, never a panic.
//!
//! Topics (`<hall>` and `<host>` from `[hall]`, `<board>` a board id):
//! * `chessclock/<hall>/board/<board>/state`: retained [`StatePayload`];
//! * `chessclock/<hall>/board/<board>/event`: QoS 1 [`EventPayload`];
//! * `chessclock/<hall>/board/<board>/command`: QoS 1, the arbiters'
//!   [`CommandRequest`]s ([`crate::command`]), answered on `.../reply` ([`ReplyPayload`]);
//! * `chessclock/<hall>/host/<host>/online`: retained `online` / `offline`
//!   (the last will);
//! * `chessclock/<hall>/host/<host>/event`: QoS 1 [`HostEventPayload`].

use serde::{Deserialize, Serialize};

use chessclock_core::contract::{BoardEvent, BoardSnapshot, ControlError, Reply};

// The commands are their own module; their names stay reachable here.
pub use crate::command::{
    parse_command, parse_request, CommandRequest, HallCommand, ParsedCommand,
};

/// The payload schema's version (the `schema` field of every payload).
pub const SCHEMA: u32 = 1;
/// The longest request id taken, in bytes (the arbiter's name: the core's
/// [`chessclock_core::limits::MAX_CALLER_NAME`], the same).
pub const MAX_NAME: usize = 128;

/// The topics of one hall as seen from one host.
#[derive(Clone, Debug)]
pub struct Topics {
    hall: String,
    host: String,
}

impl Topics {
    pub fn new(hall: &str, host: &str) -> Topics {
        Topics {
            hall: hall.to_owned(),
            host: host.to_owned(),
        }
    }

    /// The hall's name.
    pub fn hall(&self) -> &str {
        &self.hall
    }

    pub fn board(&self, board: &str, leaf: &str) -> String {
        format!("chessclock/{}/board/{board}/{leaf}", self.hall)
    }

    pub fn state(&self, board: &str) -> String {
        self.board(board, "state")
    }

    pub fn event(&self, board: &str) -> String {
        self.board(board, "event")
    }

    pub fn command(&self, board: &str) -> String {
        self.board(board, "command")
    }

    pub fn reply(&self, board: &str) -> String {
        self.board(board, "reply")
    }

    pub fn online(&self) -> String {
        format!("chessclock/{}/host/{}/online", self.hall, self.host)
    }

    pub fn host_event(&self) -> String {
        format!("chessclock/{}/host/{}/event", self.hall, self.host)
    }

    /// The board of a `.../board/<board>/command` topic of this hall.
    pub fn command_board<'t>(&self, topic: &'t str) -> Option<&'t str> {
        topic
            .strip_prefix("chessclock/")?
            .strip_prefix(self.hall.as_str())?
            .strip_prefix("/board/")?
            .strip_suffix("/command")
            .filter(|board| !board.is_empty() && !board.contains('/'))
    }
}

/// One instant on both of the daemon's clocks: the mapping from its
/// monotonic milliseconds (`snapshot_ms`, `at_ms`, a state's `t`) to wall
/// time is `wall_ms - mono_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockMapping {
    /// The daemon's CLOCK_MONOTONIC, ms.
    pub mono_ms: i64,
    /// CLOCK_REALTIME at the same instant, ms since the Unix epoch.
    pub wall_ms: i64,
}

impl ClockMapping {
    /// Wall ms of the daemon's monotonic ms `mono_ms`.
    pub fn wall_of(&self, mono_ms: i64) -> i64 {
        mono_ms.saturating_add(self.wall_ms.saturating_sub(self.mono_ms))
    }
}

/// `.../state` (retained): the board as of `snapshot.snapshot_ms`. A
/// reader extrapolates the running side's time: when `snapshot.running`
/// is a side and the game is neither paused nor over, that side's
/// remaining time at wall instant `w` is its `*_remaining_ms - (w -
/// snapshot_wall_ms)` (before any delay in `state`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatePayload {
    pub schema: u32,
    pub hall: String,
    pub host: String,
    pub board: String,
    /// The D-Bus properties, as of `snapshot.snapshot_ms` (monotonic).
    pub snapshot: BoardSnapshot,
    /// `snapshot.snapshot_ms` on the wall clock (ms since the Unix epoch).
    pub snapshot_wall_ms: i64,
    /// The daemon's clock mapping at publication.
    pub clock: ClockMapping,
    /// The board's `State()` view (as D-Bus returns it) when it could be
    /// read, else `null`: flag falls, result, restarts, e-board, scheduled
    /// start, delay left.
    pub state: Option<serde_json::Value>,
    /// The game as PGN (`Pgn()`), which the board core renders for every
    /// board: with an electronic board, the tags and the confirmed moves
    /// with `%clk` and `%emt`; without one, the tags and the clock's record
    /// as comments, one per press. `null` only when the daemon has no PGN
    /// of the board to give yet.
    #[serde(default)]
    pub pgn: Option<String>,
}

/// `.../event`: one board event (the D-Bus signals' stream), in order.
#[derive(Clone, Debug, Serialize)]
pub struct EventPayload<'a> {
    pub schema: u32,
    pub host: &'a str,
    /// Counts every message this daemon run put out on an event topic (a
    /// gap: messages dropped while the broker was away).
    pub seq: u64,
    pub clock: ClockMapping,
    /// `{"kind": "flag-fell", "board": ..., ...}`: see
    /// [`BoardEvent`]'s variants (kebab-case kinds).
    pub event: &'a BoardEvent,
}

/// `chessclock/<hall>/host/<host>/event`: what concerns the host.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HostEventPayload {
    pub schema: u32,
    pub host: String,
    pub seq: u64,
    pub clock: ClockMapping,
    #[serde(flatten)]
    pub event: HostEvent,
}

/// What a host reports about itself.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum HostEvent {
    /// Connected to the broker (the first time in this run, or again).
    Connected { reconnect: bool },
    /// Messages dropped while the broker was away (the buffer was full).
    Dropped { messages: u64 },
    /// A message larger than [`crate::page::MAX_PAYLOAD`] came and was
    /// dropped (never read, never answered): its topic and size, and how
    /// many such messages this run of the daemon dropped.
    Oversize {
        topic: String,
        bytes: usize,
        messages: u64,
    },
}

/// `.../reply`: the answer to the request `id` (`null` when the request
/// had no readable id).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReplyPayload {
    pub schema: u32,
    pub id: Option<String>,
    pub ok: bool,
    /// A read's answer (JSON, or the PGN text); `null` for a change.
    #[serde(default)]
    pub result: Option<serde_json::Value>,
    #[serde(default)]
    pub error: Option<ReplyError>,
}

/// Why a command failed: `kind` is the D-Bus error's name in kebab-case
/// (`invalid-argument`, `invalid-state`, `unknown-board`, `malformed`,
/// `busy`, `internal`, ...), or `expired` (the command's `deadline_ms`
/// had passed: not carried out).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReplyError {
    pub kind: String,
    pub message: String,
}

impl ReplyPayload {
    pub fn ok(id: String, result: Option<serde_json::Value>) -> ReplyPayload {
        ReplyPayload {
            schema: SCHEMA,
            id: Some(id),
            ok: true,
            result,
            error: None,
        }
    }

    pub fn error(id: Option<String>, kind: &str, message: impl Into<String>) -> ReplyPayload {
        ReplyPayload {
            schema: SCHEMA,
            id,
            ok: false,
            result: None,
            error: Some(ReplyError {
                kind: kind.to_owned(),
                message: message.into(),
            }),
        }
    }

    /// The reply to `id` for what the runtime answered.
    pub fn from_answer(id: String, answer: Result<Reply, ControlError>) -> ReplyPayload {
        match answer {
            Ok(Reply::Done) => ReplyPayload::ok(id, None),
            Ok(Reply::Json(text)) => match serde_json::from_str(&text) {
                Ok(value) => ReplyPayload::ok(id, Some(value)),
                Err(error) => ReplyPayload::error(
                    Some(id),
                    "internal",
                    format!("the daemon's answer is not JSON: {error}"),
                ),
            },
            Ok(Reply::Text(text)) => ReplyPayload::ok(id, Some(serde_json::Value::String(text))),
            Ok(Reply::Snapshot(snapshot)) => match serde_json::to_value(snapshot) {
                Ok(value) => ReplyPayload::ok(id, Some(value)),
                Err(error) => ReplyPayload::error(Some(id), "internal", error.to_string()),
            },
            Err(error) => {
                let kind = match &error {
                    ControlError::InvalidArgument(_) => "invalid-argument",
                    ControlError::InvalidState(_) => "invalid-state",
                    ControlError::NotPermitted(_) => "not-permitted",
                    ControlError::UnknownBoard(_) => "unknown-board",
                    ControlError::NotSynchronized(_) => "not-synchronized",
                    ControlError::Internal(_) => "internal",
                };
                ReplyPayload::error(Some(id), kind, error.to_string())
            }
        }
    }
}

/// The board an event is about.
pub fn event_board(event: &BoardEvent) -> &str {
    match event {
        BoardEvent::Pressed { board, .. }
        | BoardEvent::FlagFell { board, .. }
        | BoardEvent::StageChanged { board, .. }
        | BoardEvent::DeviceChanged { board, .. }
        | BoardEvent::ArbiterCalled { board }
        | BoardEvent::FlagReport { board, .. }
        | BoardEvent::FlagWithdrawn { board, .. }
        | BoardEvent::PressNotPlaced { board, .. }
        | BoardEvent::NewGameOffered { board }
        | BoardEvent::Recorded { board, .. } => board,
        BoardEvent::StateChanged(snapshot) => &snapshot.board,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn topics() {
        let topics = Topics::new("open2026", "pi-7");
        assert_eq!(topics.state("b1"), "chessclock/open2026/board/b1/state");
        assert_eq!(topics.online(), "chessclock/open2026/host/pi-7/online");
        assert_eq!(
            topics.command_board("chessclock/open2026/board/b12/command"),
            Some("b12")
        );
        assert_eq!(
            topics.command_board("chessclock/other/board/b12/command"),
            None
        );
        assert_eq!(
            topics.command_board("chessclock/open2026/board//command"),
            None
        );
    }

    #[test]
    fn events_serialise_with_their_kind() {
        let event = BoardEvent::FlagFell {
            board: "b1".into(),
            side: chessclock_core::engine::Side::White,
            at_ms: 12,
            stage: 1,
            last_stage: true,
        };
        let payload = EventPayload {
            schema: SCHEMA,
            host: "pi",
            seq: 3,
            clock: ClockMapping {
                mono_ms: 10,
                wall_ms: 1010,
            },
            event: &event,
        };
        let value = serde_json::to_value(&payload).unwrap();
        assert_eq!(value["event"]["kind"], "flag-fell");
        assert_eq!(value["event"]["side"], "white");
        assert_eq!(payload.clock.wall_of(12), 1012);
    }
}
