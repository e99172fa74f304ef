//! The hub's pages and their API: the arbiters' page (`/`: the board
//! cards, or the table), the spectators' page (`/spectator`), the hall
//! screen (`/screen`: big cards of the spectators' data, turning pages),
//! their scripts and style, the cards' mini boards
//! (`/public/picture/board.svg`), the arbiters' login and the corrections
//! they send to the boards (`/api/...`).
//!
//! The pages are files beside this one (`page/*.html|js|css`), built into
//! the binary. Their stable hooks (row elements, classes, form fields) are
//! documented in `docs/hall-hub.md`.
//!
//! Promises:
//! * without a password file the page is read-only and every `/api/login`
//!   and `/api/command` is refused (403, saying how to enable arbiters);
//! * a command is published only for a live session (cookie, else 401)
//!   whose CSRF token comes with it (`X-CSRF-Token`, else 403), and only
//!   once its fields are checked here (400 with the reason otherwise): a
//!   time is `H:MM:SS` or `M:SS` (or `270s`, `4m30s`...), never a bare
//!   number, as `chessclockctl` takes it; a board the hub has no state
//!   of is refused (404);
//! * failed logins are limited per client address and per user name
//!   ([`LOGIN_FAILURES`] within [`LOGIN_WINDOW`]: then 429);
//! * the spectators' stream ([`public_view`]) carries players, clocks,
//!   moves, flags and results only: no arbiter calls, devices or hosts
//!   (the hall's matters, for its arbiters); it carries the hub's link to
//!   the broker and each board's host status (not the host's name), as
//!   the arbiters' does, so its clocks stop where the data is stale;
//! * both streams send a message at least every [`HEARTBEAT`], so a page
//!   tells a silent hub from a quiet hall ([`PAGE_SILENCE`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use rand::Rng;
use serde_json::{json, Value};

use crate::auth::Session;
use crate::hub::{CommandOutcome, Hub};

/// How long the hub waits for a daemon's reply to a command.
pub const REPLY_WAIT: Duration = Duration::from_secs(5);
/// The session cookie's name.
pub const COOKIE: &str = "chessclock_hall_session";
/// Below this a running clock is "low time" (as `chessclockctl watch`).
pub const LOW_TIME_MS: i64 = 60_000;
/// The longest the event streams stay silent: a `{"type": "heartbeat"}`
/// goes when nothing else went for this long.
pub const HEARTBEAT: Duration = Duration::from_millis(500);
/// The silence after which the page takes the hub as lost (three
/// heartbeats; `HUB_SILENCE_MS` in `page/hall.js`, and its checks every
/// 200 ms: lost within 1.7 s).
pub const PAGE_SILENCE: Duration = Duration::from_millis(1_500);
/// The longest request body taken (a login or a command is small).
const MAX_BODY: usize = 16 * 1024;

const ARBITERS_HTML: &str = include_str!("page/arbiters.html");
const SPECTATORS_HTML: &str = include_str!("page/spectators.html");
const SCREEN_HTML: &str = include_str!("page/screen.html");
const SCRIPT: &str = include_str!("page/hall.js");
const CARDS_SCRIPT: &str = include_str!("page/cards.js");
const STYLE: &str = include_str!("page/hall.css");

/// What arbiters are told when the hub has no password file.
pub(crate) const NO_ARBITERS: &str =
    "arbiters are not enabled on this hub: make a password file with \
     `chessclock-hall passwd FILE USER` and start the hub with `--passwords FILE`";

/// How urgent a board is, most urgent first: `(rank, time left)` (see
/// [`urgent_order`] for the board order within a rank). Ranks, each with
/// the words the arbiters' page shows (`page/hall.js`, `needs`):
/// * 0 an arbiter call no arbiter acknowledged yet (`ARBITER CALLED at
///   ...`);
/// * 10 the game is finished (a result), whatever else: out of the way;
/// * 1 a fallen flag (`FLAG white at ...`);
/// * 2 trouble on the board's side of the hall: a unit or the e-board
///   that lost its link (`buttons LOST`), the host offline, its state not
///   saved as it should (a full disk), or an e-board whose half-moves
///   disagree with the clock's moves by more than one (a move the clock
///   did not count: [`eboard_disagrees`]);
/// * 3 an arbiter call an arbiter acknowledged (`call acknowledged by
///   NAME at ...`: someone is on the way; it stands until a resume), or a
///   board restarted and paused since, for the arbiter to resume
///   (`RESTARTED - resume`, as `chessclockctl watch` has it);
/// * 4 low time (the running side under [`LOW_TIME_MS`]);
/// * 5 its host's health has findings (`host_health.findings`: a radio on
///   where radios are forbidden, a clock not NTP-synchronised);
/// * 6 paused; 7 a scheduled start to come; 8 running; 9 not started.
///
/// Within ranks 4 and 8, less time left first (running boards).
pub fn urgency(payload: &Value, host_online: bool, now_ms: i64) -> (u8, i64) {
    let snapshot = &payload["snapshot"];
    let state = &payload["state"];
    let running = snapshot["running"].as_str();
    let left = running
        .and_then(|side| crate::round::remaining_at(payload, side, now_ms))
        .unwrap_or(i64::MAX);
    let flags = snapshot["flags"].as_array().is_some_and(|f| !f.is_empty());
    let device_lost = snapshot["devices"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["connected"] == false))
        || state["eboard"]["connected"] == false;
    let not_saving = state["state_health"]["saving"].is_object();
    let finished = state["result"].is_object() || state["over"]["result"].is_string();
    let paused = snapshot["paused"] == true || state["paused"] == true;
    let host_findings = state["host_health"]["findings"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    let called = snapshot["arbiter_called"] == true;
    let acknowledged = called && state["arbiter_call_acknowledged_by"].is_string();
    let rank = if called && !acknowledged {
        0
    } else if finished {
        10
    } else if flags {
        1
    } else if device_lost || !host_online || not_saving || eboard_disagrees(payload) {
        2
    } else if acknowledged || (paused && state["restart"].is_object()) {
        3
    } else if running.is_some() && !paused && left < LOW_TIME_MS {
        4
    } else if host_findings {
        5
    } else if paused {
        6
    } else if snapshot["started"] != true && state["scheduled_start_ms"].is_i64() {
        7
    } else if snapshot["started"] == true && running.is_some() {
        8
    } else {
        9
    };
    (rank, if rank == 4 || rank == 8 { left } else { 0 })
}

/// Whether the board's connected e-board has seen more than one half-move
/// more or fewer than the clock counted (`state.eboard.ply` against both
/// sides' `moves`): one apart is a move made and its clock not yet pressed.
pub fn eboard_disagrees(payload: &Value) -> bool {
    let state = &payload["state"];
    let eboard = &state["eboard"];
    if eboard["connected"] != true {
        return false;
    }
    let moves = |side: &str| {
        state[side]["moves"]
            .as_i64()
            .or_else(|| payload["snapshot"][format!("{side}_moves")].as_i64())
    };
    match (eboard["ply"].as_i64(), moves("white"), moves("black")) {
        (Some(ply), Some(white), Some(black)) => (ply - (white + black)).abs() > 1,
        _ => false,
    }
}

/// A board id's sort key (see [`board_key`]).
pub type BoardKey = Vec<(u8, u64, String)>;

/// A board id's sort key: digit runs as numbers (`b2` before `b10`).
pub fn board_key(board: &str) -> BoardKey {
    let mut key = Vec::new();
    let mut rest = board;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let (run, after) = rest.split_at(digits);
            key.push((1, run.parse().unwrap_or(u64::MAX), run.to_owned()));
            rest = after;
        } else {
            let letters = rest
                .char_indices()
                .find(|(_, c)| c.is_ascii_digit())
                .map_or(rest.len(), |(i, _)| i);
            let (run, after) = rest.split_at(letters);
            key.push((0, 0, run.to_owned()));
            rest = after;
        }
    }
    key
}

/// The boards, most urgent first (see [`urgency`]).
pub fn urgent_order(
    boards: &BTreeMap<String, Value>,
    hosts: &BTreeMap<String, String>,
    now_ms: i64,
) -> Vec<String> {
    let mut ranked: Vec<((u8, i64), BoardKey, &String)> = boards
        .iter()
        .map(|(board, payload)| {
            // `unknown` (the hub lost the broker) ranks on what was last
            // known, as `online` did.
            let online = payload["host"]
                .as_str()
                .and_then(|host| hosts.get(host))
                .is_none_or(|status| status == "online" || status == "unknown");
            (urgency(payload, online, now_ms), board_key(board), board)
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .map(|(_, _, board)| board.clone())
        .collect()
}

/// What spectators see of a board's state payload: players (the PGN's
/// tags), clocks, moves, stages, flags, the result, the e-board's
/// position and last move (`position`, [`crate::picture::position`]);
/// not arbiter calls, devices, hosts or the daemon's inner state.
pub fn public_view(payload: &Value) -> Value {
    let mut view = public_fields(payload);
    view["position"] = crate::picture::position::position(payload);
    view
}

/// [`public_view`] but its `position`.
fn public_fields(payload: &Value) -> Value {
    let snapshot = &payload["snapshot"];
    let mut public_snapshot = serde_json::Map::new();
    for key in [
        "board",
        "control",
        "started",
        "running",
        "paused",
        "white_remaining_ms",
        "black_remaining_ms",
        "white_moves",
        "black_moves",
        "white_stage",
        "black_stage",
        "flags",
    ] {
        if let Some(value) = snapshot.get(key) {
            public_snapshot.insert(key.to_owned(), value.clone());
        }
    }
    json!({
        "board": payload["board"],
        "snapshot": public_snapshot,
        "snapshot_wall_ms": payload["snapshot_wall_ms"],
        "state": {"result": payload["state"]["result"],
                  "over": payload["state"]["over"],
                  "scheduled_start_unix_ms": payload["state"]["scheduled_start_unix_ms"],
                  "tenths_below_ms": payload["state"]["tenths_below_ms"]},
        "players": players(payload),
    })
}

/// `{"white", "black"}`: the state's `players` (the daemon names them from
/// the game's PGN tags), else the payload's PGN tags (an older daemon);
/// `null` when unknown.
fn players(payload: &Value) -> Value {
    let named = &payload["state"]["players"];
    if named["white"].is_string() || named["black"].is_string() {
        return json!({"white": named["white"], "black": named["black"]});
    }
    let pgn = payload["pgn"].as_str().unwrap_or("");
    let tag = |name: &str| -> Value {
        pgn.lines()
            .find_map(|line| {
                line.trim()
                    .strip_prefix(&format!("[{name} \""))?
                    .strip_suffix("\"]")
                    .map(|v| v.replace("\\\"", "\"").replace("\\\\", "\\"))
            })
            .filter(|v| !v.is_empty() && v != "?")
            .map_or(Value::Null, Value::String)
    };
    json!({"white": tag("White"), "black": tag("Black")})
}

/// The streams' keep-alive: a `{"type": "heartbeat"}` message (not a
/// comment: a page sees messages only) after [`HEARTBEAT`] of silence.
pub fn heartbeat() -> axum::response::sse::KeepAlive {
    axum::response::sse::KeepAlive::new()
        .interval(HEARTBEAT)
        .event(axum::response::sse::Event::default().data(r#"{"type":"heartbeat"}"#))
}

pub async fn arbiters() -> Html<&'static str> {
    Html(ARBITERS_HTML)
}

pub async fn spectators() -> Html<&'static str> {
    Html(SPECTATORS_HTML)
}

/// `/screen`: the hall screen, the spectators' data as big cards.
pub async fn screen() -> Html<&'static str> {
    Html(SCREEN_HTML)
}

/// `GET /public/picture/board.svg?fen=FEN&last=e2e4`: the mini board of
/// a FEN ([`crate::picture::board_svg`]); a pure function of its query
/// (no data of the hub's), so public and cached; 400 with the reason for
/// a FEN or move that does not parse.
pub async fn board_picture(
    axum::extract::Query(query): axum::extract::Query<BTreeMap<String, String>>,
) -> Response {
    let fen = query.get("fen").map_or("", String::as_str);
    match crate::picture::board_svg::board_svg(fen, query.get("last").map(String::as_str)) {
        Ok(svg) => (
            [
                (header::CONTENT_TYPE, "image/svg+xml; charset=utf-8"),
                (header::CACHE_CONTROL, "public, max-age=86400"),
            ],
            svg,
        )
            .into_response(),
        Err(error) => refusal(StatusCode::BAD_REQUEST, &error),
    }
}

pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
}

/// The board cards' script (`page/cards.js`, after `hall.js`).
pub async fn cards_script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        CARDS_SCRIPT,
    )
}

pub async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}

/// A JSON answer with a status.
fn answer(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn refusal(status: StatusCode, message: &str) -> Response {
    answer(status, json!({"ok": false, "error": message}))
}

/// The session cookie's token in a request's headers.
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE).then(|| value.to_owned())
        })
}

/// The logged-in session of a request, if any.
pub(crate) fn session_of(hub: &Hub, headers: &HeaderMap) -> Option<(String, Session)> {
    let access = hub.access.as_ref()?;
    let token = cookie_token(headers)?;
    let session = access.sessions.get(&token, Instant::now())?;
    Some((token, session))
}

/// Whether the request's CSRF token is the session's.
pub(crate) fn csrf_ok(headers: &HeaderMap, session: &Session) -> bool {
    headers
        .get("x-csrf-token")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|given| {
            // Same length, compared without stopping at the first byte
            // that differs.
            given.len() == session.csrf.len()
                && given
                    .bytes()
                    .zip(session.csrf.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0
        })
}

/// A request's JSON body (`application/json`, at most [`MAX_BODY`]).
async fn json_body(request: Request) -> Result<(HeaderMap, Value), Response> {
    let (parts, body) = request.into_parts();
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        // A cross-site form cannot send JSON: this is part of the defence.
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
    Ok((parts.headers, value))
}

/// `GET /api/session`: whether arbiters are enabled, and who is logged in
/// with the session's CSRF token.
pub async fn session(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    let Some(_) = &hub.access else {
        return answer(
            StatusCode::OK,
            json!({"arbiters": false, "user": null, "csrf": null, "hint": NO_ARBITERS}),
        );
    };
    match session_of(&hub, &headers) {
        Some((_, session)) => answer(
            StatusCode::OK,
            json!({"arbiters": true, "user": session.user, "csrf": session.csrf}),
        ),
        None => answer(
            StatusCode::OK,
            json!({"arbiters": true, "user": null, "csrf": null}),
        ),
    }
}

/// `POST /api/login` `{"user", "password"}`: a session cookie (HttpOnly,
/// SameSite=Strict) and the CSRF token; 401 for a wrong user or password,
/// 429 after too many failures.
pub async fn login(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |info| info.0.ip().to_string());
    let Some(access) = &hub.access else {
        return refusal(StatusCode::FORBIDDEN, NO_ARBITERS);
    };
    let (_, body) = match json_body(request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let user = body["user"].as_str().unwrap_or("").trim().to_owned();
    let password = body["password"].as_str().unwrap_or("").to_owned();
    if user.is_empty() || password.is_empty() {
        return refusal(StatusCode::BAD_REQUEST, "give a user name and a password");
    }
    let keys = [format!("address {address}"), format!("user {user}")];
    let now = Instant::now();
    if let Some(wait) = keys
        .iter()
        .filter_map(|key| access.failures.blocked(key, now))
        .max()
    {
        tracing::warn!(%address, user, "hub: login refused: too many failures");
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "too many failed logins: try again in {} s",
                wait.as_secs().max(1)
            ),
        );
    }
    // argon2 is slow on purpose: off the async threads.
    let passwords = access.passwords.clone();
    let (checked_user, checked_password) = (user.clone(), password);
    let good =
        tokio::task::spawn_blocking(move || passwords.check(&checked_user, &checked_password))
            .await
            .unwrap_or(false);
    if !good {
        for key in &keys {
            access.failures.fail(key, Instant::now());
        }
        tracing::warn!(%address, user, "hub: wrong user name or password");
        return refusal(StatusCode::UNAUTHORIZED, "wrong user name or password");
    }
    access.failures.clear(&keys[1]);
    let (token, session) = access.sessions.open(&user, Instant::now());
    tracing::info!(%address, user, "hub: arbiter logged in");
    let cookie = format!(
        "{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        access.sessions.lifetime().as_secs()
    );
    (
        StatusCode::OK,
        [(header::SET_COOKIE, cookie)],
        axum::Json(json!({"ok": true, "user": session.user, "csrf": session.csrf})),
    )
        .into_response()
}

/// `POST /api/logout` (with the CSRF token): ends the session.
pub async fn logout(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    let (Some(access), Some((token, session))) = (&hub.access, session_of(&hub, &headers)) else {
        return refusal(StatusCode::UNAUTHORIZED, "not logged in");
    };
    if !csrf_ok(&headers, &session) {
        return refusal(StatusCode::FORBIDDEN, "the request has no valid CSRF token");
    }
    access.sessions.close(&token);
    tracing::info!(user = session.user, "hub: arbiter logged out");
    let cookie = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    (
        StatusCode::OK,
        [(header::SET_COOKIE, cookie)],
        axum::Json(json!({"ok": true})),
    )
        .into_response()
}

/// `POST /api/command`: `{"board", "command", ...}` from a logged-in
/// arbiter; see [`crate::commands::build_command`]. Answers `{"ok", "id", "reply"}` with
/// the daemon's reply, or `{"ok": false, "error"}`.
pub async fn command(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    if hub.access.is_none() {
        return refusal(StatusCode::FORBIDDEN, NO_ARBITERS);
    }
    let Some((_, session)) = session_of(&hub, request.headers()) else {
        return refusal(StatusCode::UNAUTHORIZED, "log in as an arbiter first");
    };
    if !csrf_ok(request.headers(), &session) {
        return refusal(
            StatusCode::FORBIDDEN,
            "the request has no valid CSRF token: reload the page",
        );
    }
    let (_, body) = match json_body(request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let board = body["board"].as_str().unwrap_or("").to_owned();
    if let Err(error) = chessclock_hall_proto::broker::check_topic_level("board", &board) {
        return refusal(StatusCode::BAD_REQUEST, &error);
    }
    if !hub.known().has_board(&board) {
        // No daemon would answer: say so now rather than after the wait.
        return refusal(
            StatusCode::NOT_FOUND,
            &format!("no board `{board}` in this hall"),
        );
    }
    let id = format!("hub-{:016x}", rand::rng().random::<u64>());
    let request = match crate::commands::build_command(&body, &id, &session.user) {
        Ok(request) => request,
        Err(error) => return refusal(StatusCode::BAD_REQUEST, &error),
    };
    tracing::info!(user = session.user, board, %request, "hub: command");
    match hub.command(&board, request, REPLY_WAIT).await {
        CommandOutcome::Reply(reply) => {
            let ok = reply["ok"] == true;
            tracing::info!(id, board, ok, "hub: reply");
            answer(
                StatusCode::OK,
                json!({"ok": ok, "id": id, "reply": reply,
                       "error": if ok { Value::Null } else { reply["error"].clone() }}),
            )
        }
        CommandOutcome::NoReply => answer(
            StatusCode::GATEWAY_TIMEOUT,
            json!({"ok": false, "id": id, "error": format!(
                "no reply from board {board} within {} s: its host may be offline",
                REPLY_WAIT.as_secs())}),
        ),
        CommandOutcome::NoBroker(error) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"ok": false, "id": id, "error": error}),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn board(running: Option<&str>, white: i64, host: &str) -> Value {
        json!({
            "host": host,
            "snapshot": {"started": running.is_some(), "paused": false, "running": running,
                         "white_remaining_ms": white, "black_remaining_ms": 600_000,
                         "flags": [], "arbiter_called": false,
                         "devices": [{"role": "buttons", "connected": true}]},
            "snapshot_wall_ms": 0,
            "state": {"result": null, "scheduled_start_ms": null},
        })
    }

    #[test]
    fn the_urgency_order_puts_calls_and_flags_first_then_low_time() {
        let mut boards = BTreeMap::new();
        boards.insert("b10".to_owned(), board(Some("white"), 900_000, "pi1"));
        boards.insert("b2".to_owned(), board(Some("white"), 800_000, "pi1"));
        boards.insert("b3".to_owned(), board(None, 600_000, "pi1"));
        let mut called = board(Some("black"), 900_000, "pi1");
        called["snapshot"]["arbiter_called"] = json!(true);
        called["snapshot"]["paused"] = json!(true);
        boards.insert("b9".to_owned(), called);
        let mut flagged = board(Some("white"), 0, "pi1");
        flagged["snapshot"]["flags"] = json!(["white"]);
        boards.insert("b8".to_owned(), flagged);
        // Low time as of now: 70 s at the snapshot, 20 s later.
        boards.insert("b7".to_owned(), board(Some("white"), 70_000, "pi1"));
        boards.insert("b6".to_owned(), board(Some("white"), 50_000, "pi1"));
        boards.insert("b5".to_owned(), board(Some("white"), 900_000, "pi2"));
        let mut lost = board(Some("white"), 900_000, "pi1");
        lost["snapshot"]["devices"][0]["connected"] = json!(false);
        boards.insert("b4".to_owned(), lost);
        let mut over = board(None, 900_000, "pi1");
        over["state"]["result"] = json!({"result": "1-0", "termination": "normal"});
        boards.insert("b1".to_owned(), over);
        let mut paused = board(Some("white"), 900_000, "pi1");
        paused["snapshot"]["paused"] = json!(true);
        boards.insert("b11".to_owned(), paused);
        let mut hosts = BTreeMap::new();
        hosts.insert("pi1".to_owned(), "online".to_owned());
        hosts.insert("pi2".to_owned(), "offline".to_owned());
        let order = urgent_order(&boards, &hosts, 20_000);
        assert_eq!(
            order,
            ["b9", "b8", "b4", "b5", "b6", "b7", "b11", "b2", "b10", "b3", "b1"],
            "call, flag, lost device / offline host, low time (least first), paused, \
             running (least time first), not started, finished"
        );
        // A host `unknown` (the hub lost the broker) ranks on what was
        // last known, as do hosts the hub has not heard of.
        hosts.insert("pi2".to_owned(), "unknown".to_owned());
        assert_eq!(urgent_order(&boards, &hosts, 20_000)[3], "b6");
        hosts.clear();
        assert_eq!(urgent_order(&boards, &hosts, 20_000)[3], "b6");
    }

    /// Issue 28 item 1: a board whose host cannot save its state (a full
    /// disk) ranks with the lost devices.
    #[test]
    fn a_host_not_saving_its_state_ranks_with_lost_devices() {
        let mut full = board(Some("white"), 900_000, "pi1");
        assert_eq!(urgency(&full, true, 0).0, 8);
        full["state"]["state_health"] =
            json!({"saving": {"reason": "no-space", "saving": false, "message": "not saving"}});
        assert_eq!(urgency(&full, true, 0).0, 2);
    }

    /// Issue 30 items 5 and 6: finished games leave the urgent boards, a
    /// restarted board waits for its resume, the hall's health ranks.
    #[test]
    fn finished_games_go_last_and_the_hall_s_health_ranks() {
        let mut boards = BTreeMap::new();
        // A flag, then the arbiter's result: finished, not urgent.
        let mut decided = board(None, 0, "pi1");
        decided["snapshot"]["flags"] = json!(["white"]);
        decided["state"]["result"] = json!({"result": "0-1", "termination": "time forfeit"});
        decided["state"]["over"] = json!({"result": "0-1", "termination": "time forfeit",
                                          "why": "0-1 (time forfeit)"});
        boards.insert("b1".to_owned(), decided);
        // A flag the arbiter has yet to rule on: urgent.
        let mut flag = board(None, 0, "pi1");
        flag["snapshot"]["flags"] = json!(["white"]);
        flag["state"]["over"] = json!({"result": null, "termination": "time forfeit",
                                       "why": "white's flag fell"});
        boards.insert("b2".to_owned(), flag);
        // Restarted and paused since: the arbiter resumes it.
        let mut restarted = board(Some("white"), 900_000, "pi1");
        restarted["snapshot"]["paused"] = json!(true);
        restarted["state"]["restart"] = json!({"down_ms": 4_000, "same_boot": true, "was_running": "white",
                   "paused_at_game_ms": 60_000});
        boards.insert("b3".to_owned(), restarted);
        // Its host's clock is not synchronised.
        let mut unsynced = board(Some("white"), 900_000, "pi1");
        unsynced["state"]["host_health"] = json!({"radios_policy": "allow", "radios": [],
            "radios_unreadable": [], "ntp_synchronized": false, "ntp_unknown": null,
            "findings": ["the system clock is not NTP-synchronised"]});
        boards.insert("b4".to_owned(), unsynced);
        // An e-board three half-moves ahead of the clock.
        let mut ahead = board(Some("white"), 900_000, "pi1");
        ahead["state"]["eboard"] = json!({"connected": true, "ply": 13});
        ahead["state"]["white"] = json!({"moves": 5});
        ahead["state"]["black"] = json!({"moves": 5});
        boards.insert("b5".to_owned(), ahead.clone());
        // One ahead: a move made, its clock not yet pressed.
        let mut one = ahead.clone();
        one["state"]["eboard"]["ply"] = json!(11);
        boards.insert("b6".to_owned(), one.clone());
        let mut paused = board(Some("white"), 900_000, "pi1");
        paused["snapshot"]["paused"] = json!(true);
        boards.insert("b7".to_owned(), paused);
        let mut hosts = BTreeMap::new();
        hosts.insert("pi1".to_owned(), "online".to_owned());
        assert_eq!(
            urgent_order(&boards, &hosts, 0),
            ["b2", "b5", "b3", "b4", "b7", "b6", "b1"],
            "flag, e-board disagreeing, restarted, host finding, paused, running, finished"
        );
        assert!(eboard_disagrees(&ahead));
        assert!(!eboard_disagrees(&one));
        // A lost e-board is a lost device, its count no news.
        ahead["state"]["eboard"]["connected"] = json!(false);
        assert!(!eboard_disagrees(&ahead));
        assert_eq!(urgency(&ahead, true, 0).0, 2);
    }

    /// An acknowledged call drops below the calls no one answered, below
    /// flags and lost units, and stays above low time (someone is on the
    /// way; the clock is stopped until the resume).
    #[test]
    fn an_acknowledged_call_ranks_below_the_unanswered_ones() {
        let mut boards = BTreeMap::new();
        let call = |acknowledged: bool| {
            let mut called = board(Some("black"), 900_000, "pi1");
            called["snapshot"]["arbiter_called"] = json!(true);
            called["snapshot"]["paused"] = json!(true);
            if acknowledged {
                called["state"]["arbiter_call_acknowledged_by"] = json!("ann");
                called["state"]["arbiter_call_acknowledged_at_ms"] = json!(5_000);
            }
            called
        };
        boards.insert("b1".to_owned(), call(true));
        boards.insert("b2".to_owned(), call(false));
        let mut flagged = board(Some("white"), 0, "pi1");
        flagged["snapshot"]["flags"] = json!(["white"]);
        boards.insert("b3".to_owned(), flagged);
        boards.insert("b4".to_owned(), board(Some("white"), 30_000, "pi1"));
        let mut hosts = BTreeMap::new();
        hosts.insert("pi1".to_owned(), "online".to_owned());
        assert_eq!(urgency(&boards["b1"], true, 0).0, 3);
        assert_eq!(urgent_order(&boards, &hosts, 0), ["b2", "b3", "b1", "b4"],);
        // An acknowledgment without a standing call (an older state) is
        // no call.
        let mut stale = board(Some("white"), 900_000, "pi1");
        stale["state"]["arbiter_call_acknowledged_by"] = json!("ann");
        assert_eq!(urgency(&stale, true, 0).0, 8);
    }

    #[test]
    fn board_order_is_natural() {
        let mut ids = vec!["b10", "b2", "a", "b1", "b02x"];
        ids.sort_by_key(|id| board_key(id));
        assert_eq!(ids, ["a", "b1", "b02x", "b2", "b10"]);
    }

    #[test]
    fn spectators_get_no_arbiter_matters() {
        let mut payload = board(Some("white"), 60_000, "pi1");
        payload["snapshot"]["arbiter_called"] = json!(true);
        payload["pgn"] = json!("[Event \"Open\"]\n[White \"Ann \\\"A\\\"\"]\n[Black \"?\"]\n\n*\n");
        let view = public_view(&payload);
        let text = view.to_string();
        assert!(!text.contains("arbiter"), "{text}");
        assert!(!text.contains("devices"), "{text}");
        assert!(!text.contains("pi1"), "{text}");
        assert_eq!(view["snapshot"]["white_remaining_ms"], 60_000);
        assert_eq!(view["players"]["white"], "Ann \"A\"");
        assert_eq!(view["players"]["black"], Value::Null);
        // The daemon's own names come before the PGN's.
        payload["state"]["players"] = json!({"white": "Alpha, Anna", "black": null});
        assert_eq!(public_view(&payload)["players"]["white"], "Alpha, Anna");
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            format!("a=1; {COOKIE}=abc; b=2").parse().unwrap(),
        );
        assert_eq!(cookie_token(&headers).as_deref(), Some("abc"));
        assert_eq!(cookie_token(&HeaderMap::new()), None);
    }
}
