//! A board's page (`/board/<id>`, issue 31 items 2 and 3): the game's
//! moves with their `%clk` and the time each took, the chart of both
//! clocks ([`chart`]), the appeal record (the board's history), the time
//! machine (both clocks, the running side, the moves and the position at
//! any instant of the record) and the arbiter's commands for the board
//! (the arbiters' page's `/api/command`).
//!
//! Routes (documented in `docs/hall-hub.md`):
//! * `GET /board/<id>`, `GET /board.js`, `GET /board.css`: the page, its
//!   script and style (no data:
//!   a login on the page, as on the arbiters' page);
//! * `GET /board/<id>/record.json`, `/board/<id>/chart.svg`,
//!   `/board/<id>/at.json?t=MS` (game time) or `?wall=MS` (ms since the
//!   Unix epoch), `/board/<id>/replay.jsonl`: live data, behind the gate
//!   (an arbiter's session or a hall screen's token, [`crate::gate`]).
//!
//! Promises: the data routes read the board's record from its daemon at
//! each request (the MQTT `history` command, page after page, each page at
//! most the reply wait, [`crate::page::REPLY_WAIT`]; at most
//! [`MAX_PAGES`] pages), so what they show is the record as the daemon
//! keeps it; a board the hub has no state of is `404`, a daemon that does
//! not answer `504`, a record the hub cannot read `502`, each with the
//! reason in words; every instant is computed by the core's engine over
//! the record ([`record`]).

pub mod chart;
pub mod record;

use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{json, Value};

use crate::gate::Reader;
use crate::hub::{CommandOutcome, Hub};
use chessclock_core::views::HistoryView;
use record::Record;

/// The most history pages read for one request (a page is up to 128 KiB:
/// far beyond any game).
pub const MAX_PAGES: usize = 256;

const PAGE_HTML: &str = include_str!("board.html");
const SCRIPT: &str = include_str!("board.js");
const STYLE: &str = include_str!("board.css");

/// The page's routes.
pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/board.js", get(script))
        .route("/board.css", get(style))
        .route("/board/{id}", get(page))
        .route("/board/{id}/record.json", get(record_json))
        .route("/board/{id}/chart.svg", get(chart_svg))
        .route("/board/{id}/at.json", get(at_json))
        .route("/board/{id}/replay.jsonl", get(replay))
}

async fn page() -> Html<&'static str> {
    Html(PAGE_HTML)
}

async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
}

async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"ok": false, "error": message}))).into_response()
}

/// Who asks, as the daemon is told (`arbiter`: reads are not recorded).
fn asker(reader: Option<Extension<Reader>>) -> String {
    match reader {
        Some(Extension(Reader::Arbiter(user))) => user,
        _ => "hall screen".to_owned(),
    }
}

/// The board's record, read from its daemon page by page.
pub async fn fetch(hub: &Hub, board: &str, asker: &str) -> Result<HistoryView, Response> {
    if let Err(error) = chessclock_hall_proto::broker::check_topic_level("board", board) {
        return Err(refusal(StatusCode::BAD_REQUEST, &error));
    }
    if !hub.known().has_board(board) {
        return Err(refusal(
            StatusCode::NOT_FOUND,
            &format!("no board `{board}` in this hall"),
        ));
    }
    let mut whole: Option<Value> = None;
    let mut from = 0u64;
    for _ in 0..MAX_PAGES {
        let request = json!({"id": crate::commands::request_id("board"), "arbiter": asker,
                             "command": "history", "from": from});
        let page = match hub.command(board, request, crate::page::REPLY_WAIT).await {
            CommandOutcome::Reply(reply) if reply["ok"] == true => reply["result"].clone(),
            CommandOutcome::Reply(reply) => {
                return Err(refusal(
                    StatusCode::BAD_GATEWAY,
                    &format!(
                        "board {board} refused its history: {}",
                        reply["error"]["message"]
                            .as_str()
                            .unwrap_or("no reason given")
                    ),
                ))
            }
            CommandOutcome::NoReply => {
                return Err(refusal(
                    StatusCode::GATEWAY_TIMEOUT,
                    &format!(
                        "no reply from board {board} within {} s: its host may be offline",
                        crate::page::REPLY_WAIT.as_secs()
                    ),
                ))
            }
            CommandOutcome::NoBroker(error) => {
                return Err(refusal(StatusCode::SERVICE_UNAVAILABLE, &error))
            }
        };
        let next = page["next"].as_u64();
        match whole.as_mut() {
            None => whole = Some(page),
            Some(whole) => {
                let rows = page["events"].as_array().cloned().unwrap_or_default();
                if let Some(events) = whole["events"].as_array_mut() {
                    events.extend(rows);
                }
            }
        }
        match next {
            Some(next) if next > from => from = next,
            _ => {
                let whole = whole.unwrap_or(Value::Null);
                return serde_json::from_value(whole).map_err(|error| {
                    refusal(
                        StatusCode::BAD_GATEWAY,
                        &format!("board {board}'s history is not one the hub reads: {error}"),
                    )
                });
            }
        }
    }
    Err(refusal(
        StatusCode::BAD_GATEWAY,
        &format!("board {board}'s history is longer than {MAX_PAGES} pages"),
    ))
}

async fn folded(
    hub: &Hub,
    board: &str,
    reader: Option<Extension<Reader>>,
) -> Result<Record, Response> {
    let view = fetch(hub, board, &asker(reader)).await?;
    Record::new(view).map_err(|error| refusal(StatusCode::BAD_GATEWAY, &error))
}

/// `GET /board/<id>/record.json`: the header, the moves, the appeal
/// record and the time machine's range.
async fn record_json(
    State(hub): State<Arc<Hub>>,
    UrlPath(board): UrlPath<String>,
    reader: Option<Extension<Reader>>,
) -> Response {
    let record = match folded(&hub, &board, reader).await {
        Ok(record) => record,
        Err(response) => return response,
    };
    let header = &record.view.header;
    let end = record.end();
    axum::Json(json!({
        "ok": true,
        "board": board,
        "game": header.game,
        "control": header.control,
        "control_prose": header.control_prose,
        "created_wall_ms": header.created_wall_us.div_euclid(1000),
        "end_ms": chessclock_core::engine::report::floor_ms(end),
        "end_wall_ms": record.wall_of(end).div_euclid(1000),
        "eboard": record.fen_at(end).is_some(),
        "moves": record.moves(),
        "rows": record.table(),
    }))
    .into_response()
}

async fn chart_svg(
    State(hub): State<Arc<Hub>>,
    UrlPath(board): UrlPath<String>,
    reader: Option<Extension<Reader>>,
) -> Response {
    match folded(&hub, &board, reader).await {
        Ok(record) => (
            [(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8")],
            chart::svg(&record),
        )
            .into_response(),
        Err(response) => response,
    }
}

/// `t` (game ms) or `wall` (ms since the Unix epoch).
#[derive(serde::Deserialize)]
struct At {
    t: Option<String>,
    wall: Option<String>,
}

async fn at_json(
    State(hub): State<Arc<Hub>>,
    UrlPath(board): UrlPath<String>,
    Query(instant): Query<At>,
    reader: Option<Extension<Reader>>,
) -> Response {
    let number = |text: &Option<String>| -> Result<Option<i64>, String> {
        match text.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(text) => text
                .parse::<i64>()
                .map(Some)
                .map_err(|_| format!("`{text}`: give the instant as whole milliseconds")),
        }
    };
    let (t, wall) = match (number(&instant.t), number(&instant.wall)) {
        (Ok(t), Ok(wall)) => (t, wall),
        (Err(error), _) | (_, Err(error)) => return refusal(StatusCode::BAD_REQUEST, &error),
    };
    if t.is_none() == wall.is_none() {
        return refusal(
            StatusCode::BAD_REQUEST,
            "give one instant: `t` (game time, ms) or `wall` (time of day, ms since the Unix epoch)",
        );
    }
    let record = match folded(&hub, &board, reader).await {
        Ok(record) => record,
        Err(response) => return response,
    };
    let limit = chessclock_core::timecontrol::MAX_TIME.saturating_mul(4);
    let at = match (t, wall) {
        (Some(t), _) => t.clamp(0, limit / 1000).saturating_mul(1000),
        (None, Some(wall)) => record
            .game_of_wall(wall.saturating_mul(1000))
            .clamp(0, limit),
        (None, None) => 0,
    };
    axum::Json(record.at(at)).into_response()
}

/// `GET /board/<id>/replay.jsonl`: the record's placed inputs as
/// `chessclockctl replay` input.
async fn replay(
    State(hub): State<Arc<Hub>>,
    UrlPath(board): UrlPath<String>,
    reader: Option<Extension<Reader>>,
) -> Response {
    match folded(&hub, &board, reader).await {
        Ok(record) => {
            let mut text = record.replay_lines().join("\n");
            text.push('\n');
            (
                [(header::CONTENT_TYPE, "application/jsonl; charset=utf-8")],
                text,
            )
                .into_response()
        }
        Err(response) => response,
    }
}

#[cfg(test)]
mod tests;
