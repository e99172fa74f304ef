//! The hub's HTTP routes (axum): the pages, the boards and their changes
//! (JSON and server-sent events), the arbiters' API and the round's
//! routes, all over one [`Hub`].
//!
//! Promises: every route reads the hub's state and returns; none waits on
//! the broker except `/api/command`, which waits at most the reply wait
//! ([`crate::page::REPLY_WAIT`]); a slow SSE client falls behind its own
//! channel and is dropped (the page reconnects), never slowing the others.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::hub::Hub;
use crate::{page, round};

/// The hub's HTTP routes.
pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/", get(page::arbiters))
        .route("/spectator", get(page::spectators))
        .route("/hall.js", get(page::script))
        .route("/hall.css", get(page::style))
        .route("/events", get(events))
        .route("/public/events", get(public_events))
        .route("/boards.json", get(boards))
        .route("/public/boards.json", get(public_boards))
        .route("/api/session", get(page::session))
        .route("/api/login", post(page::login))
        .route("/api/logout", post(page::logout))
        .route("/api/command", post(page::command))
        .merge(round::routes::<Hub>())
        .with_state(hub)
}

/// Serves `router` on `address` until `shutdown` completes.
pub async fn serve(
    hub: Arc<Hub>,
    address: SocketAddr,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| anyhow::anyhow!("cannot listen on {address}: {error}"))?;
    tracing::info!(%address, "hub: serving the arbiters' page");
    // The client's address: failed logins are counted per address.
    axum::serve(
        listener,
        router(hub).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await?;
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

async fn public_boards(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    let known = hub.known();
    let boards: BTreeMap<&String, Value> = known
        .boards
        .iter()
        .map(|(board, payload)| (board, page::public_view(payload)))
        .collect();
    axum::Json(json!({ "boards": boards }))
}

async fn events(
    State(hub): State<Arc<Hub>>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    stream(&hub, Some)
}

async fn public_events(
    State(hub): State<Arc<Hub>>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    stream(&hub, page::public_message)
}

/// The `/events` stream, each message passed through `view` (`None`:
/// left out).
fn stream(
    hub: &Hub,
    view: fn(String) -> Option<String>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    // Subscribed before the first picture is taken: nothing falls between.
    let changes = hub.changes.subscribe();
    let first: std::collections::VecDeque<String> =
        hub.everything().into_iter().filter_map(view).collect();
    let stream = futures_util::stream::unfold(
        (first, changes),
        move |(mut first, mut changes)| async move {
            if let Some(data) = first.pop_front() {
                return Some((Ok(SseEvent::default().data(data)), (first, changes)));
            }
            loop {
                match changes.recv().await {
                    Ok(data) => {
                        if let Some(data) = view(data) {
                            return Some((Ok(SseEvent::default().data(data)), (first, changes)));
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
