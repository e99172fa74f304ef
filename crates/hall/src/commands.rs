//! The arbiters' commands as the hub's pages send them: one board's
//! (`POST /api/command`, [`build_command`]), the whole hall's at once
//! (`POST /api/round-command`, [`round_command`]: pause all, resume all,
//! start all at an instant) and the desk's start of a round
//! ([`crate::desk`]), each sent to a board with [`send`].
//!
//! Promises:
//! * a page's fields are checked here before anything goes out (a refusal
//!   names the field): a time is `H:MM:SS` or `M:SS` (or `270s`,
//!   `4m30s`...), never a bare number, as `chessclockctl` takes it; a
//!   relative correction is that time with its sign (`+2:00`, `-0:30`);
//! * every command goes out with the arbiter's name (the daemon records it
//!   as `caller_name`) and the hub's deadline rule
//!   ([`crate::hub::Hub::command`]): a command the page was told failed
//!   never runs later;
//! * a command to many boards is one command per board, all sent at once,
//!   each answered: the answer lists every board with `ok` and, for one
//!   that failed, why; one board's failure never stops the others.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use rand::Rng;
use serde_json::{json, Value};

use crate::hub::{CommandOutcome, Hub};
use crate::page::{csrf_ok, session_of, NO_ARBITERS, REPLY_WAIT};

/// The largest request taken (the desk's: a TRF file of a big open fits).
const MAX_BODY: usize = 1024 * 1024;

/// The longest note a page sends (the daemon's own limit,
/// `chessclock_core::limits::MAX_NOTE`, refuses a longer one anyway).
const MAX_NOTE: usize = chessclock_core::limits::MAX_NOTE;

/// The command payload for a page's request: `start`, `pause`, `resume`
/// (which also answers an arbiter's call), `undo` (the arbiter's last
/// press), `cancel-start`, `ack-call` (acknowledges a player's arbiter
/// call; a resume still answers it); `adjust` with `side` and `time` (`H:MM:SS`,
/// `M:SS`, `270s`...; never a bare number) and/or `moves`; `adjust-by`
/// with `side` and `time` signed (`+2:00`, `-0:30`); `note` with `text`;
/// `start-at` with `at_ms` (a wall instant after now) and `force`;
/// `set-result` with `result` (`1-0`, `0-1`, `1/2-1/2`, `*`) and an
/// optional `termination` (`resignation`, `agreement`, `time forfeit`,
/// `rules infraction`, `abandoned`, `adjudication`...).
pub fn build_command(body: &Value, id: &str, arbiter: &str) -> Result<Value, String> {
    let command = body["command"].as_str().unwrap_or("");
    let mut request = json!({"id": id, "arbiter": arbiter, "command": command});
    match command {
        "start" | "pause" | "resume" | "undo" | "cancel-start" | "ack-call" => {}
        "adjust-by" => {
            request["side"] = json!(side_of(body, "adjust-by")?);
            let time = body["time"].as_str().unwrap_or("");
            request["delta_ms"] = json!(parse_delta_ms(time)?);
        }
        "note" => {
            let text = body["text"].as_str().map(str::trim).unwrap_or("");
            if text.is_empty() {
                return Err("note: write the words to record".into());
            }
            chessclock_core::limits::check_chars("the note", text, MAX_NOTE)?;
            request["text"] = json!(text);
        }
        "start-at" => {
            let at_ms = body["at_ms"]
                .as_i64()
                .filter(|at| *at > 0)
                .ok_or("start-at: give `at_ms`, the wall instant in ms since the Unix epoch")?;
            request["at_ms"] = json!(at_ms);
            if body["force"] == true {
                request["force"] = json!(true);
            }
        }
        "adjust" => {
            request["side"] = json!(side_of(body, "adjust")?);
            let time = body["time"].as_str().map(str::trim).unwrap_or("");
            if !time.is_empty() {
                let ms = chessclock_core::timetext::parse_clock_ms(time)?;
                let max = chessclock_core::timecontrol::MAX_TIME / 1000;
                if ms > max {
                    return Err(format!(
                        "`{time}`: more than a game can have (at most {} h)",
                        max / 3_600_000
                    ));
                }
                request["remaining_ms"] = json!(ms);
            }
            let moves = match &body["moves"] {
                Value::Null => None,
                Value::String(text) if text.trim().is_empty() => None,
                Value::String(text) => Some(text.trim().parse::<u32>().map_err(|_| {
                    format!("moves `{text}`: give the number of moves made (0 or more)")
                })?),
                Value::Number(n) => Some(
                    n.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| format!("moves {n}: give 0 or more"))?,
                ),
                other => return Err(format!("moves {other}: give a number")),
            };
            if let Some(moves) = moves {
                if moves > chessclock_core::timecontrol::MAX_MOVES {
                    return Err(format!(
                        "moves {moves}: more than a game can have (at most {})",
                        chessclock_core::timecontrol::MAX_MOVES
                    ));
                }
                request["moves"] = json!(moves);
            }
            if request.get("remaining_ms").is_none() && request.get("moves").is_none() {
                return Err("adjust: give a time (H:MM:SS or M:SS) or a number of moves".into());
            }
        }
        "set-result" => {
            let result = body["result"].as_str().unwrap_or("");
            if !matches!(result, "1-0" | "0-1" | "1/2-1/2" | "*") {
                return Err(format!(
                    "result `{result}`: give 1-0, 0-1, 1/2-1/2 or * (to withdraw)"
                ));
            }
            request["result"] = json!(result);
            if let Some(termination) = body["termination"].as_str().filter(|t| !t.is_empty()) {
                // Checked as the daemon checks it, so a typo is told now.
                chessclock_core::contract::result_command(result, termination)?;
                request["termination"] = json!(termination);
            }
        }
        other => {
            return Err(format!(
                "command `{other}`: the page sends start, start-at, cancel-start, pause, \
                 resume, undo, ack-call, adjust, adjust-by, note or set-result"
            ))
        }
    }
    Ok(request)
}

/// The request's `side`: `white` or `black`.
fn side_of<'b>(body: &'b Value, command: &str) -> Result<&'b str, String> {
    match body["side"].as_str().unwrap_or("") {
        side @ ("white" | "black") => Ok(side),
        _ => Err(format!("{command}: choose the side (white or black)")),
    }
}

/// A relative correction as an arbiter types it: a sign, then a time as
/// [`chessclock_core::timetext::parse_clock_ms`] takes it (`+2:00` adds
/// two minutes, `-0:30` takes 30 seconds away, `+10s`), in ms; the sign is
/// required (a correction without one is a setting: `adjust`).
pub fn parse_delta_ms(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let (sign, time) = match text.as_bytes().first() {
        Some(b'+') => (1, &text[1..]),
        Some(b'-') => (-1, &text[1..]),
        _ => {
            return Err(format!(
                "`{text}`: give the correction with its sign, `+2:00` to add or `-0:30` \
                 to take away"
            ))
        }
    };
    let ms = chessclock_core::timetext::parse_clock_ms(time)?;
    let max = chessclock_core::timecontrol::MAX_TIME / 1000;
    if ms == 0 || ms > max {
        return Err(format!(
            "`{text}`: give a correction above 0 and at most {} h",
            max / 3_600_000
        ));
    }
    Ok(sign * ms)
}

/// A fresh request id with the sender's `prefix` (`hub`, `desk`, `all`).
pub fn request_id(prefix: &str) -> String {
    format!("{prefix}-{:016x}", rand::rng().random::<u64>())
}

/// Sends `command` (a payload without `id`, with `arbiter`) to `board`:
/// `Ok` for the daemon's `ok`, else why not, in words.
pub async fn send(hub: &Hub, board: &str, mut command: Value, prefix: &str) -> Result<(), String> {
    command["id"] = json!(request_id(prefix));
    match hub.command(board, command, REPLY_WAIT).await {
        CommandOutcome::Reply(reply) if reply["ok"] == true => Ok(()),
        CommandOutcome::Reply(reply) => Err(format!(
            "{}: {}",
            reply["error"]["kind"].as_str().unwrap_or("error"),
            reply["error"]["message"].as_str().unwrap_or("")
        )),
        CommandOutcome::NoReply => Err(format!(
            "no reply within {} s: its host may be offline",
            REPLY_WAIT.as_secs()
        )),
        CommandOutcome::NoBroker(error) => Err(error),
    }
}

/// `POST /api/round-command`: `{"command": "pause" | "resume" |
/// "start-at", "at_ms"?, "force"?}` from a logged-in arbiter, to every
/// board the hub has a state of (the hall's boards): pause all, resume all,
/// start all at `at_ms`. Answers `{"ok": every board ok, "boards": [{"board",
/// "ok", "error"?}]}` in board order.
pub async fn round_command(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let command = body["command"].as_str().unwrap_or("");
    if !matches!(command, "pause" | "resume" | "start-at") {
        return refuse(&format!(
            "command `{command}`: every board is paused (pause), resumed (resume) or started \
             at an instant (start-at)"
        ));
    }
    if command == "start-at" && body["at_ms"].as_i64().is_none_or(|at| at <= hub.now_ms()) {
        return refuse("start-at: `at_ms` must be a wall instant in ms after now");
    }
    let payload = match build_command(&body, "", &user) {
        Ok(payload) => payload,
        Err(error) => return refuse(&error),
    };
    let mut boards: Vec<String> = hub.known().board_ids().cloned().collect();
    boards.sort_by_key(|board| crate::page::board_key(board));
    tracing::info!(
        user,
        command,
        boards = boards.len(),
        "hub: a command to every board"
    );
    let results = to_each(&hub, boards, |_| payload.clone(), "all").await;
    let all = results.iter().all(|result| result["ok"] == true);
    tracing::info!(user, command, all, "hub: every board answered");
    (
        StatusCode::OK,
        axum::Json(json!({"ok": all, "boards": results})),
    )
        .into_response()
}

/// The arbiter's name and the request's JSON body (a live session, its
/// CSRF token, JSON of at most 1 MiB), or the refusal.
pub(crate) async fn arbiter_request(
    hub: &Hub,
    request: Request,
) -> Result<(String, Value), Response> {
    if hub.access.is_none() {
        return Err(refusal(StatusCode::FORBIDDEN, NO_ARBITERS));
    }
    let Some((_, session)) = session_of(hub, request.headers()) else {
        return Err(refusal(
            StatusCode::UNAUTHORIZED,
            "log in as an arbiter first",
        ));
    };
    if !csrf_ok(request.headers(), &session) {
        return Err(refusal(
            StatusCode::FORBIDDEN,
            "the request has no valid CSRF token: reload the page",
        ));
    }
    let (parts, body) = request.into_parts();
    if !is_json(&parts.headers) {
        return Err(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send JSON (Content-Type: application/json)",
        ));
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| refusal(StatusCode::PAYLOAD_TOO_LARGE, "the request is too large"))?;
    let value = serde_json::from_slice(&bytes).map_err(|error| {
        refusal(
            StatusCode::BAD_REQUEST,
            &format!("the request is not JSON: {error}"),
        )
    })?;
    Ok((session.user, value))
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"ok": false, "error": message}))).into_response()
}

fn refuse(message: &str) -> Response {
    refusal(StatusCode::BAD_REQUEST, message)
}

/// Sends each board its command (made by `command` from the board id),
/// all at once; `{"board", "ok", "error"?}` each, in `boards`' order.
pub async fn to_each(
    hub: &Hub,
    boards: Vec<String>,
    command: impl Fn(&str) -> Value,
    prefix: &str,
) -> Vec<Value> {
    let sends = boards.into_iter().map(|board| {
        let payload = command(&board);
        async move {
            match send(hub, &board, payload, prefix).await {
                Ok(()) => json!({"board": board, "ok": true}),
                Err(error) => json!({"board": board, "ok": false, "error": error}),
            }
        }
    });
    futures_util::future::join_all(sends).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn commands_are_checked_before_they_go_out() {
        let adjust = build_command(
            &json!({"command": "adjust", "side": "black", "time": "1:04:30", "moves": "12"}),
            "hub-1",
            "Ann",
        )
        .unwrap();
        assert_eq!(
            adjust,
            json!({"id": "hub-1", "arbiter": "Ann", "command": "adjust", "side": "black",
                   "remaining_ms": 3_870_000, "moves": 12})
        );
        let pause = build_command(&json!({"command": "pause"}), "x", "A").unwrap();
        assert_eq!(
            pause,
            json!({"id": "x", "arbiter": "A", "command": "pause"})
        );
        for (body, needle) in [
            (
                json!({"command": "adjust", "side": "white", "time": "270"}),
                "bare number",
            ),
            (
                json!({"command": "adjust", "side": "white", "time": "4:3"}),
                "two digits",
            ),
            (
                json!({"command": "adjust", "side": "green", "time": "4:30"}),
                "choose the side",
            ),
            (json!({"command": "adjust", "side": "white"}), "give a time"),
            (
                json!({"command": "adjust", "side": "white", "moves": "-1"}),
                "moves `-1`",
            ),
            (
                json!({"command": "set-result", "result": "2-0"}),
                "give 1-0",
            ),
            (json!({"command": "new-game"}), "the page sends"),
            (json!({}), "the page sends"),
        ] {
            let error = build_command(&body, "x", "A").unwrap_err();
            assert!(error.contains(needle), "{body}: {error}");
        }
    }

    /// Issue 30: the CLI's corrections from the page.
    #[test]
    fn relative_corrections_notes_undo_and_scheduled_starts() {
        assert_eq!(parse_delta_ms("+2:00"), Ok(120_000));
        assert_eq!(parse_delta_ms(" -0:30 "), Ok(-30_000));
        assert_eq!(parse_delta_ms("+10s"), Ok(10_000));
        for (text, needle) in [
            ("2:00", "with its sign"),
            ("", "with its sign"),
            ("+", "empty"),
            ("+120", "bare number"),
            ("+0:00", "above 0"),
            ("-101:00:00", "at most 100 h"),
        ] {
            let error = parse_delta_ms(text).unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
        }
        let build = |body: Value| build_command(&body, "i", "Ann");
        assert_eq!(
            build(json!({"command": "adjust-by", "side": "white", "time": "+2:00"})).unwrap(),
            json!({"id": "i", "arbiter": "Ann", "command": "adjust-by", "side": "white",
                   "delta_ms": 120_000})
        );
        assert_eq!(
            build(json!({"command": "note", "text": " claim rejected "})).unwrap(),
            json!({"id": "i", "arbiter": "Ann", "command": "note", "text": "claim rejected"})
        );
        assert_eq!(
            build(json!({"command": "undo"})).unwrap(),
            json!({"id": "i", "arbiter": "Ann", "command": "undo"})
        );
        assert_eq!(
            build(json!({"command": "ack-call"})).unwrap(),
            json!({"id": "i", "arbiter": "Ann", "command": "ack-call"})
        );
        assert_eq!(
            build(json!({"command": "start-at", "at_ms": 1_796_061_605_000_i64, "force": true}))
                .unwrap(),
            json!({"id": "i", "arbiter": "Ann", "command": "start-at",
                   "at_ms": 1_796_061_605_000_i64, "force": true})
        );
        assert_eq!(
            build(json!({"command": "set-result", "result": "0-1", "termination": "resignation"}))
                .unwrap(),
            json!({"id": "i", "arbiter": "Ann", "command": "set-result", "result": "0-1",
                   "termination": "resignation"})
        );
        for (body, needle) in [
            (
                json!({"command": "adjust-by", "side": "white", "time": "2:00"}),
                "with its sign",
            ),
            (
                json!({"command": "adjust-by", "time": "+2:00"}),
                "choose the side",
            ),
            (json!({"command": "note", "text": "  "}), "write the words"),
            (
                json!({"command": "note", "text": "x".repeat(501)}),
                "at most 500",
            ),
            (json!({"command": "start-at"}), "give `at_ms`"),
            (
                json!({"command": "set-result", "result": "1-0", "termination": "boredom"}),
                "termination `boredom`",
            ),
            (
                json!({"command": "set-result", "result": "*", "termination": "resignation"}),
                "takes no termination",
            ),
        ] {
            let error = build(body.clone()).unwrap_err();
            assert!(error.contains(needle), "{body}: {error}");
        }
    }
}
