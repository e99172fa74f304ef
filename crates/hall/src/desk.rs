//! The event desk: the page an event is run from (`/desk`, with its own
//! script `/desk.js`: no inline script or style) and its API, for a
//! logged-in arbiter, each call with the session's CSRF token:
//! * `POST /api/rounds/load` `{"round", "pairings", "boards"?, "control"?}`:
//!   a round's pairings (the file's text: TRF16, TRF26 or CSV), its board
//!   map (CSV `board,id`) and control; kept in the event and made the
//!   current round; answers the review (`/review.json`);
//! * `POST /api/rounds/send` `{"round", "confirm"?, "changes"?}`: without
//!   `confirm`, the review only (what would be sent: nothing goes out);
//!   with it, the commands of the review, provided it still makes
//!   `changes` changes (else 409 and the new review): a board whose game
//!   of the round has started or is over is never touched;
//! * `POST /api/rounds/start` `{"round", "at_ms", "force"?}`: the round's
//!   scheduled start, kept with the round and sent (`start-at`, with
//!   `force` if given) to every paired board whose game has not started;
//!   `null` clears it and cancels those boards' start (`cancel-start`).
//!   Answers each board (`{"board", "id", "ok", "error"?, "skipped"?}`):
//!   a board whose game has started is left as it is;
//! * `POST /api/rounds/close` `{"round"}`: the round's results are frozen;
//! * `POST /api/rounds/correct` `{"round", "board", "result",
//!   "termination"?}`: a result corrected (kept among the round's
//!   corrections), closed round or not;
//! * `POST /api/rounds/delay` `{"round", "seconds"}`: the round's own
//!   broadcast delay (seconds, 0 allowed; `null`: the hub's
//!   `--delay-seconds`), kept in the event; the current round's holds
//!   within a second on every public route and the lichess push.
//!
//! The read side (`/rounds.json`, `/review.json`, `/rounds/N/...`) is the
//! round's (`crate::round`), open as the round's other exports are.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::commands::arbiter_request;
use crate::hub::Hub;
use crate::pairings::parse_board_map;
use crate::round::Review;

const DESK_HTML: &str = include_str!("page/desk.html");
const DESK_SCRIPT: &str = include_str!("page/desk.js");

/// The desk's routes.
pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/desk", get(page))
        .route("/desk.js", get(script))
        .route("/api/rounds/load", post(load))
        .route("/api/rounds/send", post(send))
        .route("/api/rounds/start", post(start))
        .route("/api/rounds/close", post(close))
        .route("/api/rounds/correct", post(correct))
        .route("/api/rounds/delay", post(delay))
}

async fn page() -> Html<&'static str> {
    Html(DESK_HTML)
}

async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        DESK_SCRIPT,
    )
}

fn answer(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn refusal(status: StatusCode, message: &str) -> Response {
    answer(status, json!({"ok": false, "error": message}))
}

/// A refusal, boxed (a response is large).
type Refused = Box<Response>;

/// The request's `round`: a number from 1.
fn round_of(body: &Value) -> Result<u32, Refused> {
    body["round"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            Box::new(refusal(
                StatusCode::BAD_REQUEST,
                "give `round`: a number from 1",
            ))
        })
}

/// The current round's review, checked to be round `round`'s.
fn review_of(hub: &Hub, round: u32) -> Result<Review, Refused> {
    // A copy: the desk's lock is never taken inside the hub's (the
    // round's readers take them the other way round).
    let boards = hub.known().boards().clone();
    let review = hub.desk().review(&boards);
    match review {
        Some(review) if review.round == round => Ok(review),
        Some(review) => Err(Box::new(refusal(
            StatusCode::CONFLICT,
            &format!(
                "round {round} is not the current round ({}): load its pairings first",
                review.round
            ),
        ))),
        None => Err(Box::new(refusal(
            StatusCode::CONFLICT,
            "no round loaded: load its pairings first",
        ))),
    }
}

async fn load(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let round = match round_of(&body) {
        Ok(round) => round,
        Err(refused) => return *refused,
    };
    let Some(text) = body["pairings"].as_str().filter(|t| !t.trim().is_empty()) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "give `pairings`: the text of a TRF or CSV file",
        );
    };
    let map = match body["boards"].as_str().filter(|t| !t.trim().is_empty()) {
        Some(text) => match parse_board_map(text) {
            Ok(map) => map,
            Err(error) => return refusal(StatusCode::BAD_REQUEST, &format!("board map: {error}")),
        },
        None => Default::default(),
    };
    let control = body["control"]
        .as_str()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    match hub
        .desk()
        .load_round(round, text, map, control, hub.now_ms())
    {
        Ok(pairings) => {
            tracing::info!(
                user,
                round,
                games = pairings.games.len(),
                "desk: pairings loaded"
            );
            hub.refresh_seats();
            match review_of(&hub, round) {
                Ok(review) => answer(StatusCode::OK, json!({"ok": true, "review": review})),
                Err(refused) => *refused,
            }
        }
        Err(error) => refusal(StatusCode::UNPROCESSABLE_ENTITY, &error.to_string()),
    }
}

async fn send(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let round = match round_of(&body) {
        Ok(round) => round,
        Err(refused) => return *refused,
    };
    let review = match review_of(&hub, round) {
        Ok(review) => review,
        Err(refused) => return *refused,
    };
    if body["confirm"] != true {
        return answer(
            StatusCode::OK,
            json!({"ok": true, "sent": false, "review": review}),
        );
    }
    if body["changes"].as_u64() != Some(review.changes as u64) {
        return answer(
            StatusCode::CONFLICT,
            json!({"ok": false, "sent": false, "review": review,
                   "error": "the boards changed since the review: look at it again"}),
        );
    }
    let sends = review
        .plans
        .iter()
        .filter(|plan| !plan.commands.is_empty())
        .filter_map(|plan| {
            plan.id
                .clone()
                .map(|id| (plan.board, id, plan.commands.clone()))
        })
        .map(|(board, id, commands)| {
            let hub = hub.clone();
            let user = user.clone();
            async move {
                for mut command in commands {
                    command["arbiter"] = json!(user);
                    if let Err(problem) = crate::commands::send(&hub, &id, command, "desk").await {
                        return json!({"board": board, "id": id, "ok": false, "error": problem});
                    }
                }
                json!({"board": board, "id": id, "ok": true})
            }
        });
    let results = futures_util::future::join_all(sends).await;
    let all = results.iter().all(|r| r["ok"] == true);
    if let Err(error) = hub.desk().mark_sent(round, hub.now_ms()) {
        tracing::error!(%error, round, "desk: cannot mark the round sent");
    }
    tracing::info!(
        user,
        round,
        boards = results.len(),
        all,
        "desk: pairings sent"
    );
    answer(
        StatusCode::OK,
        json!({"ok": all, "sent": true, "boards": results, "review": review}),
    )
}

async fn start(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let round = match round_of(&body) {
        Ok(round) => round,
        Err(refused) => return *refused,
    };
    let at_ms = match &body["at_ms"] {
        Value::Null => None,
        value => match value.as_i64().filter(|at| *at > hub.now_ms()) {
            Some(at) => Some(at),
            None => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "`at_ms` must be a wall instant in ms after now (or null to clear it)",
                )
            }
        },
    };
    let force = body["force"] == true;
    // The round's boards as the review pairs them (its current round).
    let review = match review_of(&hub, round) {
        Ok(review) => review,
        Err(refused) => return *refused,
    };
    if let Err(error) = hub.desk().set_start(round, at_ms) {
        return refusal(StatusCode::INTERNAL_SERVER_ERROR, &error);
    }
    // Every paired board whose game has not started gets the start (or,
    // cleared, its cancellation); the others are told apart, not touched.
    let mut skipped = Vec::new();
    let mut targets = Vec::new();
    {
        let mut known = hub.known();
        let boards = known.boards();
        for plan in &review.plans {
            let Some(id) = plan.id.clone() else {
                skipped.push(json!({"board": plan.board, "id": null, "ok": false,
                                    "error": "no hall board for this pairing board"}));
                continue;
            };
            let started = boards
                .get(&id)
                .is_some_and(|payload| payload["snapshot"]["started"] == true);
            if started {
                skipped.push(json!({"board": plan.board, "id": id, "ok": true,
                                    "skipped": "its game has started: left as it is"}));
            } else {
                targets.push((plan.board, id));
            }
        }
    }
    let command = match at_ms {
        Some(at) => json!({"command": "start-at", "arbiter": user, "at_ms": at, "force": force}),
        None => json!({"command": "cancel-start", "arbiter": user}),
    };
    let ids: Vec<String> = targets.iter().map(|(_, id)| id.clone()).collect();
    let answers = crate::commands::to_each(&hub, ids, |_| command.clone(), "desk").await;
    let mut boards: Vec<Value> = targets
        .iter()
        .zip(answers)
        .map(|((board, id), mut answer)| {
            answer["board"] = json!(board);
            answer["id"] = json!(id);
            answer
        })
        .collect();
    boards.extend(skipped);
    boards.sort_by_key(|answer| answer["board"].as_u64());
    let all = boards.iter().all(|answer| answer["ok"] == true);
    tracing::info!(
        user,
        round,
        ?at_ms,
        force,
        all,
        "desk: scheduled start sent"
    );
    answer(
        StatusCode::OK,
        json!({"ok": all, "at_ms": at_ms, "boards": boards}),
    )
}

async fn close(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let round = match round_of(&body) {
        Ok(round) => round,
        Err(refused) => return *refused,
    };
    match hub.desk().close_round(round, hub.now_ms()) {
        Ok(()) => {
            tracing::info!(user, round, "desk: round closed");
            answer(StatusCode::OK, json!({"ok": true}))
        }
        Err(error) => refusal(StatusCode::CONFLICT, &error),
    }
}

async fn correct(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let round = match round_of(&body) {
        Ok(round) => round,
        Err(refused) => return *refused,
    };
    let Some(board) = body["board"].as_u64().and_then(|b| u32::try_from(b).ok()) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "give `board`: the pairing board's number",
        );
    };
    let result = body["result"].as_str().unwrap_or("");
    let termination = body["termination"].as_str().unwrap_or("normal");
    match hub
        .desk()
        .correct(round, board, result, termination, &user, hub.now_ms())
    {
        Ok(()) => {
            tracing::info!(user, round, board, result, "desk: result corrected");
            answer(StatusCode::OK, json!({"ok": true}))
        }
        Err(error) => refusal(StatusCode::BAD_REQUEST, &error),
    }
}

/// The longest delay the desk takes: a day.
const MAX_DELAY_S: u64 = 86_400;

async fn delay(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (user, body) = match arbiter_request(&hub, request).await {
        Ok(got) => got,
        Err(refused) => return refused,
    };
    let round = match round_of(&body) {
        Ok(round) => round,
        Err(refused) => return *refused,
    };
    let seconds = match &body["seconds"] {
        Value::Null => None,
        value => match value.as_u64().filter(|s| *s <= MAX_DELAY_S) {
            Some(seconds) => Some(seconds as u32),
            None => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "give `seconds`: the delay in whole seconds, 0 to 86400 (null: the \
                     hub's --delay-seconds)",
                )
            }
        },
    };
    match hub.desk().set_round_delay(round, seconds) {
        Ok(()) => {
            tracing::info!(user, round, ?seconds, "desk: broadcast delay set");
            let cut = hub.public_cut();
            answer(
                StatusCode::OK,
                json!({"ok": true, "round": round, "seconds": seconds,
                       "current_delay_ms": cut.delay_ms}),
            )
        }
        Err(error) => refusal(StatusCode::CONFLICT, &error),
    }
}
