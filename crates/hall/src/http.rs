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
    start_releaser(&hub);
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
    let mut known = hub.known();
    // (The hosts are a few hundred at most.)
    let (hosts, seen) = (known.hosts.clone(), known.seen.clone());
    let boards = known.boards();
    let urgent = page::urgent_order(boards, &hosts, now);
    axum::Json(json!({"boards": boards, "hosts": hosts,
                      "last_seen_ms": seen, "urgent": urgent,
                      "link": link.message(), "stale": !link.connected,
                      "oversize": oversize}))
}

/// The spectators' boards: each as the public sees it now (behind the
/// delay, the round's boards only: [`crate::broadcast`]) through
/// [`page::public_view`], with the delay in force.
async fn public_boards(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    let cut = hub.public_cut();
    let boards: BTreeMap<String, Value> = hub
        .public_states()
        .iter()
        .map(|(board, payload)| (board.clone(), page::public_view(payload)))
        .collect();
    axum::Json(json!({ "boards": boards, "delay_ms": cut.delay_ms }))
}

/// A released state as the public stream tells it.
fn public_state(board: &str, payload: Option<&Value>) -> String {
    let payload = payload.map_or(Value::Null, page::public_view);
    json!({"type": "state", "board": board, "payload": payload}).to_string()
}

/// Starts the releaser once: it tells the public stream each board's
/// state when the delay lets it out ([`crate::broadcast::Delayed::release`]),
/// waking at each state taken, when the next one falls due, and at least
/// every second (a delay changed on the desk holds within it).
pub fn start_releaser(hub: &Arc<Hub>) {
    use std::sync::atomic::Ordering;
    if tokio::runtime::Handle::try_current().is_err() || hub.releasing.swap(true, Ordering::SeqCst)
    {
        return;
    }
    let hub = hub.clone();
    tokio::spawn(async move {
        let mut delay_ms = None;
        loop {
            let cut = hub.public_cut();
            if delay_ms
                .replace(cut.delay_ms)
                .is_some_and(|d| d != cut.delay_ms)
            {
                hub.delayed.touch_all();
            }
            // No one follows the public stream (no spectator; the push
            // waits on `public_changed`):
            // what is released is only marked told, not written for no one
            // (a reader coming later gets every board as the public sees
            // it first, [`Hub::public_first`]). At a 1,000-board hall's
            // peak this was a fifth of the hub's time.
            let listening = hub.public.receiver_count() > 0;
            let (told, next) = hub
                .delayed
                .release(&cut, listening.then_some(&page::public_view));
            if !told.is_empty() {
                // The lichess push looks again.
                hub.public_changed.notify_one();
            }
            if !listening {
                continue_after(&hub, next, cut.now_ms).await;
                continue;
            }
            for (board, view) in told {
                let view = view.unwrap_or(Value::Null);
                let message = json!({"type": "state", "board": board, "payload": view});
                let _ = hub.public.send(Arc::from(message.to_string()));
            }
            continue_after(&hub, next, cut.now_ms).await;
        }
    });
}

/// The releaser's wait: until a state comes, the next one falls due
/// (`next`), or a second passes.
async fn continue_after(hub: &Hub, next: Option<i64>, now_ms: i64) {
    let wait_ms = next.map_or(1_000, |due| (due - now_ms).clamp(1, 1_000));
    tokio::select! {
        _ = hub.delayed.wake.notified() => {}
        _ = tokio::time::sleep(std::time::Duration::from_millis(wait_ms as u64)) => {}
    }
}

async fn events(State(hub): State<Arc<Hub>>, ticket: Option<Extension<Ticket>>) -> Response {
    // The gate let only arbiters and hall screens in.
    open_stream(&hub, ticket, StreamKind::Arbiters)
}

/// The spectators' stream: the public feed ([`Hub::public_first`], each
/// public board's state as the public sees it now, then the releaser's
/// changes), behind the delay.
async fn public_events(State(hub): State<Arc<Hub>>, ticket: Option<Extension<Ticket>>) -> Response {
    open_stream(&hub, ticket, StreamKind::Public)
}

/// A stream counted on its connection's ticket (none: served without the
/// limits, as in a test of the routes alone), or `503` when the
/// spectators' streams are full.
fn open_stream(hub: &Hub, ticket: Option<Extension<Ticket>>, kind: StreamKind) -> Response {
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
    stream(hub, kind, guard).into_response()
}

/// The `/events` stream (the arbiters'), or the public one: its first
/// picture, then its changes.
fn stream(
    hub: &Hub,
    kind: StreamKind,
    guard: Option<StreamGuard>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    // Subscribed before the first picture is taken: nothing falls between.
    let (changes, first): (_, std::collections::VecDeque<String>) = match kind {
        StreamKind::Public => {
            let changes = hub.public.subscribe();
            let mut first = hub.public_first();
            first.extend(
                hub.public_states()
                    .iter()
                    .map(|(board, payload)| public_state(board, Some(payload))),
            );
            (changes, first.into())
        }
        _ => (hub.changes.subscribe(), hub.everything().into()),
    };
    let stream = futures_util::stream::unfold(
        // The guard counts the stream until the stream is dropped.
        (first, changes, guard),
        move |(mut first, mut changes, guard)| async move {
            if let Some(data) = first.pop_front() {
                return Some((Ok(SseEvent::default().data(data)), (first, changes, guard)));
            }
            match changes.recv().await {
                Ok(data) => Some((Ok(SseEvent::default().data(data)), (first, changes, guard))),
                // Behind, or the hub stops: the stream ends; the page
                // reconnects (EventSource does) and gets everything again.
                Err(_) => None,
            }
        },
    );
    Sse::new(stream).keep_alive(page::heartbeat())
}
