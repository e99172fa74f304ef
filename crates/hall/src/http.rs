//! The hub's HTTP routes (axum): the pages, the boards and their changes
//! (JSON and server-sent events), the arbiters' API and the round's
//! routes, all over one [`Hub`], behind the gate ([`crate::gate`]: live
//! data for arbiters and hall screens only) and served under the
//! connection limits ([`crate::shed`]).
//!
//! Promises: every route reads the hub's state and returns; none waits on
//! the broker except those that send commands (`/api/command`,
//! `/api/round-command`, `/api/rounds/send`, `/api/rounds/start`), each
//! command at most the reply wait ([`crate::page::REPLY_WAIT`]; the boards
//! are commanded side by side, a board's own commands one after another); a slow SSE client falls behind its own
//! channel and is dropped (the page reconnects), never slowing the others;
//! a spectators' stream over [`crate::shed::Limits::max_public_streams`] is
//! refused (`503`), an arbiter's never for a spectator's.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{json, Value};

use crate::gate::Gate;
use crate::hub::Hub;
use crate::shed::{Limits, StreamGuard, StreamKind, Ticket};
use crate::{desk, page, round};

/// The hub's HTTP routes, behind `gate`.
pub fn router(gate: Arc<Gate>) -> Router {
    let hub = gate.hub.clone();
    Router::new()
        .route("/", get(page::arbiters))
        .route("/spectator", get(page::spectators))
        .route("/screen", get(page::screen))
        .route("/public/picture/board.svg", get(page::board_picture))
        .route("/hall.js", get(page::script))
        .route("/hall.css", get(page::style))
        .route("/cards.js", get(page::cards_script))
        .route("/events", get(events))
        .route("/public/events", get(public_events))
        .route("/boards.json", get(boards))
        .route("/public/boards.json", get(public_boards))
        .route("/api/session", get(page::session))
        .route("/api/login", post(page::login))
        .route("/api/logout", post(page::logout))
        .route("/api/command", post(page::command))
        .route("/api/round-command", post(crate::commands::round_command))
        .merge(round::routes::<Hub>())
        .merge(desk::routes())
        .merge(crate::board::routes())
        .with_state(hub)
        .layer(axum::middleware::from_fn_with_state(
            gate,
            crate::gate::guard,
        ))
}

/// Serves the routes on `address` under `limits` until `shutdown`
/// completes.
pub async fn serve(
    gate: Arc<Gate>,
    address: SocketAddr,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| anyhow::anyhow!("cannot listen on {address}: {error}"))?;
    tracing::info!(%address, "hub: serving the arbiters' page");
    crate::shed::serve(listener, router(gate), limits, shutdown).await;
    Ok(())
}

async fn boards(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    let now = hub.now_ms();
    let link = hub.link();
    let oversize = hub.oversize();
    let known = hub.known();
    let urgent = page::urgent_order(&known.boards, &known.hosts, now);
    axum::Json(json!({"boards": known.boards, "hosts": known.hosts,
                      "last_seen_ms": known.seen, "urgent": urgent,
                      "link": link.message(), "stale": !link.connected,
                      "oversize": oversize}))
}

/// The spectators' boards: each through [`page::public_view`] (where a
/// broadcast delay will go).
async fn public_boards(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    let known = hub.known();
    let boards: BTreeMap<&String, Value> = known
        .boards
        .iter()
        .map(|(board, payload)| (board, page::public_view(payload)))
        .collect();
    axum::Json(json!({ "boards": boards }))
}

async fn events(State(hub): State<Arc<Hub>>, ticket: Option<Extension<Ticket>>) -> Response {
    // The gate let only arbiters and hall screens in.
    open_stream(&hub, ticket, StreamKind::Arbiters, Some)
}

/// The spectators' stream: each message through [`page::public_message`]
/// (where a broadcast delay will go).
async fn public_events(State(hub): State<Arc<Hub>>, ticket: Option<Extension<Ticket>>) -> Response {
    open_stream(&hub, ticket, StreamKind::Public, page::public_message)
}

/// A stream counted on its connection's ticket (none: served without the
/// limits, as in a test of the routes alone), or `503` when the
/// spectators' streams are full.
fn open_stream(
    hub: &Hub,
    ticket: Option<Extension<Ticket>>,
    kind: StreamKind,
    view: fn(String) -> Option<String>,
) -> Response {
    let guard = match ticket.map(|Extension(ticket)| ticket.stream(kind)) {
        Some(Ok(guard)) => Some(guard),
        Some(Err(_)) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(axum::http::header::RETRY_AFTER, "10")],
                axum::Json(json!({"ok": false,
                    "error": "too many spectators' streams: try again shortly"})),
            )
                .into_response()
        }
        None => None,
    };
    stream(hub, view, guard).into_response()
}

/// The `/events` stream, each message passed through `view` (`None`:
/// left out).
fn stream(
    hub: &Hub,
    view: fn(String) -> Option<String>,
    guard: Option<StreamGuard>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    // Subscribed before the first picture is taken: nothing falls between.
    let changes = hub.changes.subscribe();
    let first: std::collections::VecDeque<String> =
        hub.everything().into_iter().filter_map(view).collect();
    let stream = futures_util::stream::unfold(
        // The guard counts the stream until the stream is dropped.
        (first, changes, guard),
        move |(mut first, mut changes, guard)| async move {
            if let Some(data) = first.pop_front() {
                return Some((Ok(SseEvent::default().data(data)), (first, changes, guard)));
            }
            loop {
                match changes.recv().await {
                    Ok(data) => {
                        if let Some(data) = view(data) {
                            return Some((
                                Ok(SseEvent::default().data(data)),
                                (first, changes, guard),
                            ));
                        }
                    }
                    // Behind, or the hub stops: the stream ends; the page
                    // reconnects (EventSource does) and gets everything again.
                    Err(_) => return None,
                }
            }
        },
    );
    Sse::new(stream).keep_alive(page::heartbeat())
}
