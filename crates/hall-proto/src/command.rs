//! The arbiters' commands (`.../command`): the request's JSON, the
//! commands the hall may give and how a payload becomes the runtime's
//! command, its arguments checked as the D-Bus layer checks them.
//!
//! Promises: a command payload from the broker is outside input: any byte
//! string gives either a command or an error reply ([`ReplyPayload`]),
//! never a panic; a field a command does not have, a key given twice, an
//! argument out of range are refused with words that name them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use chessclock_core::contract::{Caller, Command};
use chessclock_core::engine::Side;
use chessclock_core::limits;

use crate::message::{ReplyPayload, MAX_NAME};
use crate::page::HistoryPage;

/// A command from the hall (`.../command`):
/// `{"id": "r1", "arbiter": "A. Arbiter", "command": "pause"}`, plus the
/// command's own fields (see [`HallCommand`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct CommandRequest {
    /// Echoed in the reply.
    pub id: String,
    /// Recorded in the history as the caller's name.
    pub arbiter: String,
    /// The last wall instant (ms since the Unix epoch) at which the command
    /// may still be carried out; later it is refused (`expired`) and
    /// nothing changes. Absent: no deadline. The hub sets it to when it
    /// stops waiting for the reply, so a command it answered as failed never
    /// runs later.
    #[serde(default)]
    pub deadline_ms: Option<i64>,
    #[serde(flatten)]
    pub command: HallCommand,
}

/// A command payload read and checked ([`parse_request`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedCommand {
    /// The request id, echoed in the reply.
    pub id: String,
    /// Who asks (the arbiter's name).
    pub caller: Caller,
    /// The runtime's command.
    pub command: Command,
    /// [`CommandRequest::deadline_ms`].
    pub deadline_ms: Option<i64>,
    /// The page asked for, for `history` ([`crate::page::history_page`]).
    pub page: Option<HistoryPage>,
}

impl ParsedCommand {
    /// The `expired` reply if the command's deadline has passed at wall
    /// instant `now_ms` (a command is carried out up to its deadline
    /// inclusive), else `None`.
    pub fn expired(&self, now_ms: i64) -> Option<ReplyPayload> {
        let deadline = self.deadline_ms?;
        (now_ms > deadline).then(|| {
            ReplyPayload::error(
                Some(self.id.clone()),
                "expired",
                format!(
                    "the command's deadline passed {} ms ago (deadline_ms {deadline}): \
                     not carried out",
                    now_ms - deadline
                ),
            )
        })
    }
}

/// The commands the hall may give, under `command` (kebab-case), with
/// their fields beside it. Times in ms.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum HallCommand {
    /// Starts White's clock (Art. 6.6).
    Start,
    Pause,
    Resume,
    /// A press of `side`'s button.
    Press {
        side: Side,
    },
    /// A correction; an absent field is left as it is (at least one).
    Adjust {
        side: Side,
        #[serde(default)]
        remaining_ms: Option<i64>,
        #[serde(default)]
        moves: Option<u32>,
        #[serde(default)]
        stage: Option<u32>,
    },
    /// Adds `delta_ms` to `side`'s remaining time at the instant the board
    /// takes it (negative: takes it away): a penalty or a bonus, Art. 7.5's
    /// two minutes (`chessclockctl adjust --add/--sub`).
    AdjustBy {
        side: Side,
        delta_ms: i64,
    },
    /// Takes back the arbiter's last press (one made with `press`), when no
    /// press came after it (`chessclockctl undo`).
    Undo,
    /// Acknowledges the player's standing arbiter call (an arbiter is on
    /// the way; `chessclockctl ack-call`): recorded with the arbiter's
    /// name; the call stands until a `resume`.
    AckCall,
    /// An arbiter's note for the game's record (one line, at most 500
    /// characters; `chessclockctl note`).
    Note {
        text: String,
    },
    /// Starts White's clock at the wall instant `at_ms` (ms since the Unix
    /// epoch, Art. 6.6); a second one moves it. Refused while the daemon's
    /// clock is not NTP-synchronised (`[daemon]
    /// require-ntp-for-scheduled-start`) unless `force`.
    StartAt {
        at_ms: i64,
        #[serde(default)]
        force: Option<bool>,
    },
    /// Cancels the scheduled start.
    CancelStart,
    /// A new game with a control (notation or preset).
    NewGame {
        control: String,
    },
    /// PGN tags of the current game (an empty value gives a tag back to
    /// its default).
    SetTags {
        tags: BTreeMap<String, String>,
    },
    /// `1-0`, `0-1`, `1/2-1/2`, or `*` to withdraw; `termination` as in
    /// PGN (`normal`, `time forfeit`, ...; absent: `normal`).
    SetResult {
        result: String,
        #[serde(default)]
        termination: Option<String>,
    },
    /// Reads: answered in the reply's `result`.
    State,
    /// The game's history, one page: the rows from index `from` (0-based,
    /// default 0), at most `limit` of them (default: as many as fit in
    /// [`crate::page::PAGE_BYTES`]).
    History {
        #[serde(default)]
        from: Option<u64>,
        #[serde(default)]
        limit: Option<u64>,
    },
    Snapshot,
    Pgn,
}

/// A command payload read and checked: the request id, who asks and the
/// runtime's command; or the error reply to send.
pub fn parse_command(payload: &[u8]) -> Result<(String, Caller, Command), ReplyPayload> {
    parse_request(payload).map(|parsed| (parsed.id, parsed.caller, parsed.command))
}

/// The commands' names, as a refusal lists them.
const COMMANDS: &str = "start|start-at|cancel-start|pause|resume|press|undo|ack-call|adjust|\
     adjust-by|note|new-game|set-tags|set-result|state|history|snapshot|pgn";

/// Any JSON value, read only to find an object that gives a key twice
/// (`serde_json::Value` keeps the last silently): the first such key is
/// the error.
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicateKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeys {
    type Value = NoDuplicateKeys;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut keys = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` is given twice: give each field once"
                )));
            }
            map.next_value::<NoDuplicateKeys>()?;
            keys.insert(key);
        }
        Ok(NoDuplicateKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(NoDuplicateKeys)
    }
}

/// The JSON type of a value, as a refusal names it.
fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// A command payload read and checked, with its deadline; or the error
/// reply to send. The deadline is not checked here: see
/// [`ParsedCommand::expired`]. Refused as `malformed`, each with its own
/// words: not JSON, not an object, a key given twice (anywhere in it), a
/// missing or misspelt command, `id`, `arbiter` or `command` not a string,
/// a field the command does not have.
pub fn parse_request(payload: &[u8]) -> Result<ParsedCommand, ReplyPayload> {
    let value: serde_json::Value = serde_json::from_slice(payload).map_err(|error| {
        ReplyPayload::error(
            None,
            "malformed",
            format!("the command is not JSON: {error}"),
        )
    })?;
    let Some(object) = value.as_object() else {
        return Err(ReplyPayload::error(
            None,
            "malformed",
            format!(
                "the command is {}: give an object, {{\"id\": \"...\", \"arbiter\": \"...\", \
                 \"command\": \"...\", ...}}",
                json_type(&value)
            ),
        ));
    };
    // The id, if there is a usable one, so that even a bad request is
    // answered under its id.
    let id = object
        .get("id")
        .and_then(|id| id.as_str())
        .filter(|id| id.len() <= MAX_NAME)
        .map(str::to_owned);
    let malformed = |message: String| ReplyPayload::error(id.clone(), "malformed", message);
    // A key given twice: which one counts is not the sender's to guess
    // (the id twice: no id is sure, none is echoed).
    if let Err(error) =
        NoDuplicateKeys::deserialize(&mut serde_json::Deserializer::from_slice(payload))
    {
        let message = error.to_string();
        let id = if message.contains("key `id`") {
            None
        } else {
            id.clone()
        };
        return Err(ReplyPayload::error(
            id,
            "malformed",
            // serde_json adds where: keep it, it points at the second key.
            message,
        ));
    }
    // The fields every command has, each named when it is of the wrong
    // type (serde's flattened enum would name another field).
    for (field, what) in [
        ("id", "the request id"),
        ("arbiter", "the arbiter's name"),
        ("command", COMMANDS),
    ] {
        match object.get(field) {
            None => return Err(malformed(format!("missing field `{field}`: give {what}"))),
            Some(serde_json::Value::String(_)) => {}
            Some(other) => {
                return Err(malformed(format!(
                    "`{field}` must be a string ({what}), not {} ({other})",
                    json_type(other)
                )))
            }
        }
    }
    // A field the command does not have is refused (a typo must not pass
    // for an absent optional field): the command's own fields are the keys
    // it serialises to (every field, `null` when absent).
    let given: Vec<String> = object.keys().cloned().collect();
    let request: CommandRequest = serde_json::from_value(value).map_err(|error| {
        malformed(format!(
            "{error}; expected {{\"id\": \"...\", \"arbiter\": \"...\", \"command\": \
             \"{COMMANDS}\", ...}}"
        ))
    })?;
    let known = serde_json::to_value(&request).unwrap_or_default();
    if let Some(unknown) = given.iter().find(|key| known.get(key.as_str()).is_none()) {
        return Err(malformed(format!(
            "unknown field `{unknown}` for this command"
        )));
    }
    let id = request.id;
    if id.len() > MAX_NAME {
        return Err(ReplyPayload::error(
            None,
            "malformed",
            format!("the request id is longer than {MAX_NAME} bytes"),
        ));
    }
    let arbiter = request.arbiter.trim();
    if arbiter.is_empty()
        || arbiter.len() > limits::MAX_CALLER_NAME
        || arbiter.chars().any(char::is_control)
    {
        return Err(ReplyPayload::error(
            Some(id),
            "invalid-argument",
            format!(
                "`arbiter` must name the arbiter: 1 to {} bytes, no control characters",
                limits::MAX_CALLER_NAME
            ),
        ));
    }
    let caller = Caller {
        uid: None,
        name: Some(arbiter.to_owned()),
    };
    let deadline_ms = request.deadline_ms;
    let page = match &request.command {
        HallCommand::History { from, limit } => {
            if *limit == Some(0) {
                return Err(ReplyPayload::error(
                    Some(id),
                    "invalid-argument",
                    "limit 0: give 1 row or more, or leave it out",
                ));
            }
            let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            Some(HistoryPage {
                from: from.map_or(0, size),
                limit: limit.map(size),
            })
        }
        _ => None,
    };
    match to_command(request.command) {
        Ok(command) => Ok(ParsedCommand {
            id,
            caller,
            command,
            deadline_ms,
            page,
        }),
        Err(message) => Err(ReplyPayload::error(Some(id), "invalid-argument", message)),
    }
}

/// The runtime's command for a hall command, its arguments checked as the
/// D-Bus layer checks them.
fn to_command(command: HallCommand) -> Result<Command, String> {
    Ok(match command {
        HallCommand::Start => Command::Start,
        HallCommand::Pause => Command::Pause,
        HallCommand::Resume => Command::Resume,
        HallCommand::Press { side } => Command::Press { side },
        HallCommand::Adjust {
            side,
            remaining_ms,
            moves,
            stage,
        } => {
            if let Some(ms) = remaining_ms.filter(|ms| *ms < 0) {
                return Err(format!(
                    "remaining_ms {ms} is negative: give the time left in ms (0 or more)"
                ));
            }
            if stage == Some(0) {
                return Err("stage 0 is out of range: stages count from 1".into());
            }
            if remaining_ms.is_none() && moves.is_none() && stage.is_none() {
                return Err("nothing to adjust: give remaining_ms, moves or stage".into());
            }
            Command::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            }
        }
        HallCommand::AdjustBy { side, delta_ms } => {
            let max_ms = chessclock_core::timecontrol::MAX_TIME / 1000;
            if delta_ms == 0 || delta_ms.unsigned_abs() > max_ms.unsigned_abs() {
                return Err(format!(
                    "delta_ms {delta_ms} is out of range: give the milliseconds to add (or, \
                     negative, to take away), not 0 and at most {} h",
                    max_ms / 3_600_000
                ));
            }
            Command::AdjustBy { side, delta_ms }
        }
        HallCommand::Undo => Command::UndoPress,
        HallCommand::AckCall => Command::AckCall,
        HallCommand::Note { text } => {
            // As the board checks it, so that too long a note is refused
            // before it waits in the queue.
            limits::check_chars("the note", &text, limits::MAX_NOTE)?;
            if text.trim().is_empty() {
                return Err("an empty note: give the words to record".into());
            }
            Command::Note { text }
        }
        HallCommand::StartAt { at_ms, force } => {
            let unix_time_us = at_ms
                .checked_mul(1000)
                .filter(|_| at_ms > 0)
                .ok_or_else(|| {
                    format!("at_ms {at_ms} is not a wall instant: give ms since the Unix epoch")
                })?;
            Command::StartAt {
                unix_time_us,
                force: force.unwrap_or(false),
            }
        }
        HallCommand::CancelStart => Command::CancelStart,
        HallCommand::NewGame { control } => {
            // The limit first: too long a text is not written back.
            limits::check_chars("the time control", &control, limits::MAX_CONTROL)?;
            if control.trim().is_empty() || control.trim() != control {
                return Err(format!(
                    "control `{control}`: give a notation or preset name without spaces at \
                     either end"
                ));
            }
            Command::NewGame { control }
        }
        HallCommand::SetTags { tags } => {
            let tags: Vec<(String, String)> = tags.into_iter().collect();
            chessclock_core::eboard::follower::check_tags(&tags)?;
            Command::SetTags { tags }
        }
        HallCommand::SetResult {
            result,
            termination,
        } => chessclock_core::contract::result_command(
            &result,
            termination.as_deref().unwrap_or(""),
        )?,
        HallCommand::State => Command::State,
        HallCommand::History { .. } => Command::History,
        HallCommand::Snapshot => Command::Snapshot,
        HallCommand::Pgn => Command::Pgn,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn error_of(payload: &str) -> ReplyPayload {
        parse_command(payload.as_bytes()).unwrap_err()
    }

    #[test]
    fn a_deadline_is_read_and_refuses_only_after_it() {
        let parsed = parse_request(
            br#"{"id":"r9","arbiter":"A","command":"pause","deadline_ms":1796061605000}"#,
        )
        .unwrap();
        assert_eq!(parsed.deadline_ms, Some(1_796_061_605_000));
        assert_eq!(parsed.command, Command::Pause);
        assert!(
            parsed.expired(1_796_061_605_000).is_none(),
            "at the deadline"
        );
        let reply = parsed.expired(1_796_061_605_250).unwrap();
        assert_eq!(reply.id.as_deref(), Some("r9"));
        assert!(!reply.ok);
        let error = reply.error.unwrap();
        assert_eq!(error.kind, "expired");
        assert!(error.message.contains("250 ms ago"), "{}", error.message);
        // Absent or null: no deadline, never expired.
        for payload in [
            r#"{"id":"r1","arbiter":"A","command":"pause"}"#,
            r#"{"id":"r1","arbiter":"A","command":"pause","deadline_ms":null}"#,
        ] {
            let parsed = parse_request(payload.as_bytes()).unwrap();
            assert_eq!(parsed.deadline_ms, None, "{payload}");
            assert!(parsed.expired(i64::MAX).is_none(), "{payload}");
        }
        // Not a number: malformed, under its id.
        let reply = error_of(r#"{"id":"r3","arbiter":"A","command":"pause","deadline_ms":"soon"}"#);
        assert_eq!(reply.id.as_deref(), Some("r3"));
        assert_eq!(reply.error.unwrap().kind, "malformed");
    }

    #[test]
    fn a_pause_carries_the_arbiters_name() {
        let (id, caller, command) =
            parse_command(br#"{"id":"r1","arbiter":" Ann Arbiter ","command":"pause"}"#).unwrap();
        assert_eq!(id, "r1");
        assert_eq!(caller.name.as_deref(), Some("Ann Arbiter"));
        assert_eq!(caller.uid, None);
        assert_eq!(command, Command::Pause);
    }

    #[test]
    fn an_adjustment_is_checked() {
        let (_, _, command) = parse_command(
            br#"{"id":"r2","arbiter":"A","command":"adjust","side":"black","remaining_ms":60000}"#,
        )
        .unwrap();
        assert_eq!(
            command,
            Command::Adjust {
                side: Side::Black,
                remaining_ms: Some(60_000),
                moves: None,
                stage: None
            }
        );
        let error = error_of(r#"{"id":"r3","arbiter":"A","command":"adjust","side":"white"}"#);
        assert_eq!(error.id.as_deref(), Some("r3"));
        assert_eq!(error.error.unwrap().kind, "invalid-argument");
        let error = error_of(
            r#"{"id":"r4","arbiter":"A","command":"adjust","side":"white","remaining_ms":-5}"#,
        );
        assert_eq!(error.error.unwrap().kind, "invalid-argument");
    }

    /// Issue 28: `set-tags` took 50,000 tags. Refused as D-Bus refuses
    /// them, with the core's words, and so are a control and an arbiter's
    /// name beyond their limits.
    #[test]
    fn fifty_thousand_tags_are_refused_with_a_clear_error() {
        let tags: serde_json::Map<String, serde_json::Value> = (0..50_000)
            .map(|i| (format!("Tag{i:05}"), serde_json::Value::from("x")))
            .collect();
        let payload = serde_json::json!({
            "id": "t1", "arbiter": "A", "command": "set-tags", "tags": tags,
        });
        let reply = error_of(&payload.to_string());
        assert_eq!(reply.id.as_deref(), Some("t1"));
        let error = reply.error.unwrap();
        assert_eq!(error.kind, "invalid-argument");
        assert_eq!(error.message, "too many tags: 50000 (at most 64)");

        // The largest accepted: 64 tags of 255 characters.
        let tags: serde_json::Map<String, serde_json::Value> = (0..limits::MAX_TAGS)
            .map(|i| {
                (
                    format!("Tag{i:02}"),
                    "é".repeat(limits::MAX_TAG_VALUE).into(),
                )
            })
            .collect();
        let payload = serde_json::json!({
            "id": "t2", "arbiter": "A", "command": "set-tags", "tags": tags,
        });
        let (_, _, command) = parse_command(payload.to_string().as_bytes()).unwrap();
        assert!(matches!(command, Command::SetTags { tags } if tags.len() == limits::MAX_TAGS));

        let payload = serde_json::json!({
            "id": "t3", "arbiter": "A", "command": "new-game", "control": "1".repeat(100_000),
        });
        let error = error_of(&payload.to_string()).error.unwrap();
        assert_eq!(
            error.message,
            "the time control has 100000 characters (at most 256)"
        );
        let payload = serde_json::json!({
            "id": "t4", "arbiter": "a".repeat(129), "command": "pause",
        });
        let error = error_of(&payload.to_string()).error.unwrap();
        assert_eq!(error.kind, "invalid-argument");
        assert!(
            error.message.contains("1 to 128 bytes"),
            "{}",
            error.message
        );
    }

    /// Issue 30: the CLI's corrections over MQTT, checked as D-Bus checks
    /// them.
    #[test]
    fn the_clis_corrections_are_commands_too() {
        let command = |payload: &str| parse_command(payload.as_bytes()).map(|(_, _, c)| c);
        assert_eq!(
            command(
                r#"{"id":"a","arbiter":"A","command":"adjust-by","side":"white","delta_ms":120000}"#
            ),
            Ok(Command::AdjustBy {
                side: Side::White,
                delta_ms: 120_000
            })
        );
        assert_eq!(
            command(
                r#"{"id":"a","arbiter":"A","command":"adjust-by","side":"black","delta_ms":-30000}"#
            ),
            Ok(Command::AdjustBy {
                side: Side::Black,
                delta_ms: -30_000
            })
        );
        assert_eq!(
            command(r#"{"id":"u","arbiter":"A","command":"undo"}"#),
            Ok(Command::UndoPress)
        );
        assert_eq!(
            command(r#"{"id":"k","arbiter":"A","command":"ack-call"}"#),
            Ok(Command::AckCall)
        );
        assert_eq!(
            command(r#"{"id":"n","arbiter":"A","command":"note","text":"3-fold claim rejected"}"#),
            Ok(Command::Note {
                text: "3-fold claim rejected".into()
            })
        );
        assert_eq!(
            command(r#"{"id":"s","arbiter":"A","command":"start-at","at_ms":1796061605000}"#),
            Ok(Command::StartAt {
                unix_time_us: 1_796_061_605_000_000,
                force: false
            })
        );
        assert_eq!(
            command(
                r#"{"id":"s","arbiter":"A","command":"start-at","at_ms":1796061605000,"force":true}"#
            ),
            Ok(Command::StartAt {
                unix_time_us: 1_796_061_605_000_000,
                force: true
            })
        );
        assert_eq!(
            command(r#"{"id":"c","arbiter":"A","command":"cancel-start"}"#),
            Ok(Command::CancelStart)
        );
        let (_, _, result) = parse_command(
            br#"{"id":"r","arbiter":"A","command":"set-result","result":"1-0","termination":"resignation"}"#,
        )
        .unwrap();
        assert!(matches!(
            result,
            Command::SetResult {
                termination: Some(chessclock_core::eboard::Termination::Resignation),
                ..
            }
        ));
        for (payload, needle) in [
            (
                r#"{"id":"x","arbiter":"A","command":"adjust-by","side":"white","delta_ms":0}"#,
                "delta_ms 0 is out of range",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"adjust-by","side":"white","delta_ms":360000001}"#,
                "at most 100 h",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"note","text":"  "}"#,
                "an empty note",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"start-at","at_ms":9223372036854775807}"#,
                "not a wall instant",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"start-at","at_ms":-5}"#,
                "not a wall instant",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"set-result","result":"1-0","termination":"boredom"}"#,
                "termination `boredom`",
            ),
        ] {
            let error = error_of(payload).error.unwrap();
            assert_eq!(error.kind, "invalid-argument", "{payload}");
            assert!(
                error.message.contains(needle),
                "{payload}: {}",
                error.message
            );
        }
        let long = serde_json::json!({"id": "x", "arbiter": "A", "command": "note",
                                      "text": "é".repeat(501)});
        let error = error_of(&long.to_string()).error.unwrap();
        assert_eq!(error.message, "the note has 501 characters (at most 500)");
        // A typo of a field is refused, not taken for the absent `force`.
        let error =
            error_of(r#"{"id":"x","arbiter":"A","command":"start-at","at_ms":5,"forced":true}"#)
                .error
                .unwrap();
        assert_eq!(error.kind, "malformed");
        assert!(
            error.message.contains("unknown field `forced`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn malformed_commands_get_error_replies() {
        for (payload, id, kind) in [
            ("not json", None, "malformed"),
            ("[1,2]", None, "malformed"),
            (r#"{"id":"x","arbiter":"A"}"#, Some("x"), "malformed"),
            (
                r#"{"id":"x","arbiter":"A","command":"explode"}"#,
                Some("x"),
                "malformed",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"press","side":"green"}"#,
                Some("x"),
                "malformed",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"pause","extra":1}"#,
                Some("x"),
                "malformed",
            ),
            (
                r#"{"id":"x","arbiter":"","command":"pause"}"#,
                Some("x"),
                "invalid-argument",
            ),
            (
                r#"{"id":7,"arbiter":"A","command":"pause"}"#,
                None,
                "malformed",
            ),
            (
                r#"{"id":"x","arbiter":"A","command":"set-result","result":"2-0"}"#,
                Some("x"),
                "invalid-argument",
            ),
        ] {
            let reply = error_of(payload);
            assert_eq!(reply.id.as_deref(), id, "{payload}");
            assert!(!reply.ok);
            assert_eq!(reply.error.unwrap().kind, kind, "{payload}");
        }
    }

    /// Issue 29: a key given twice was taken (the last won), and
    /// `"command": 5` was refused as "missing field control".
    #[test]
    fn a_key_given_twice_and_a_command_not_a_string_are_named() {
        let reply = error_of(r#"{"id":"d1","arbiter":"A","command":"pause","command":"start"}"#);
        assert_eq!(reply.id.as_deref(), Some("d1"));
        let error = reply.error.unwrap();
        assert_eq!(error.kind, "malformed");
        assert!(
            error.message.contains("the key `command` is given twice"),
            "{}",
            error.message
        );
        // Inside a field too (the tags), and the id twice: no id echoed.
        let reply = error_of(
            r#"{"id":"d2","arbiter":"A","command":"set-tags","tags":{"White":"a","White":"b"}}"#,
        );
        assert!(reply
            .error
            .unwrap()
            .message
            .contains("`White` is given twice"));
        let reply = error_of(r#"{"id":"d3","id":"d4","arbiter":"A","command":"pause"}"#);
        assert_eq!(reply.id, None);
        assert_eq!(reply.error.unwrap().kind, "malformed");

        let reply = error_of(r#"{"id":"c1","arbiter":"A","command":5}"#);
        assert_eq!(reply.id.as_deref(), Some("c1"));
        let error = reply.error.unwrap();
        assert_eq!(error.kind, "malformed");
        assert!(
            error.message.starts_with("`command` must be a string"),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("not a number (5)"),
            "{}",
            error.message
        );
        let error = error_of(r#"{"id":"c2","arbiter":"A"}"#).error.unwrap();
        assert!(
            error.message.starts_with("missing field `command`"),
            "{}",
            error.message
        );
        let error = error_of(r#"{"id":"c3","arbiter":["A"],"command":"pause"}"#)
            .error
            .unwrap();
        assert!(
            error.message.starts_with("`arbiter` must be a string"),
            "{}",
            error.message
        );
        let error = error_of("[1]").error.unwrap();
        assert!(error.message.contains("is an array"), "{}", error.message);
    }

    #[test]
    fn a_history_read_asks_for_a_page() {
        let parsed = parse_request(br#"{"id":"h1","arbiter":"A","command":"history"}"#).unwrap();
        assert_eq!(parsed.command, Command::History);
        assert_eq!(parsed.page, Some(HistoryPage::default()));
        let parsed = parse_request(
            br#"{"id":"h2","arbiter":"A","command":"history","from":120,"limit":50}"#,
        )
        .unwrap();
        assert_eq!(
            parsed.page,
            Some(HistoryPage {
                from: 120,
                limit: Some(50)
            })
        );
        let reply = error_of(r#"{"id":"h3","arbiter":"A","command":"history","limit":0}"#);
        assert_eq!(reply.error.unwrap().kind, "invalid-argument");
        let reply = error_of(r#"{"id":"h4","arbiter":"A","command":"pause","from":3}"#);
        assert!(reply
            .error
            .unwrap()
            .message
            .contains("unknown field `from`"));
        let parsed = parse_request(br#"{"id":"p","arbiter":"A","command":"pause"}"#).unwrap();
        assert_eq!(parsed.page, None);
    }

    #[test]
    fn any_bytes_give_a_command_or_an_error() {
        let mut seed = 0x2545_f491_u32;
        for length in 0..400 {
            let bytes: Vec<u8> = (0..length % 64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    (seed & 0xff) as u8
                })
                .collect();
            let _ = parse_command(&bytes);
        }
    }
}
