//! `chessclock-hall`, the hub: one per event. It subscribes to the hall's
//! board states, the daemons' replies and hosts' `online` topics on the
//! broker and serves, over HTTP (axum):
//! * `/`: the arbiters' page, every board in a row (see [`page`]); the
//!   running clocks tick in the browser from each state's snapshot (no
//!   reload); logged-in arbiters correct boards from it;
//! * `/spectator`: the same boards read-only, without arbiter matters;
//! * `/events`: server-sent events, one `message` per change, its data
//!   `{"type": "state", "board", "payload", "received_ms"}` (the board's
//!   state payload as published, see [`super::message::StatePayload`]) or
//!   `{"type": "host", "host", "online", "last_seen_ms"}`; every known
//!   board and host first, then changes; `/public/events` the same for
//!   spectators ([`page::public_view`]);
//! * `/boards.json`: every board's latest state, every host's status and
//!   when it was last heard of, and the boards most urgent first;
//! * `/api/...`: login, logout and the arbiters' commands ([`page`]);
//! * `/round.pgn` and the round's other routes: see [`super::round`].
//!
//! Promises: the hub never trusts a payload's shape (a malformed state is
//! kept as it came, and shown as far as it can be); it subscribes again on
//! every ConnAck; a command reaches the broker only from a logged-in
//! arbiter's session with its CSRF token, named with the arbiter and a
//! fresh id, and its reply (or its absence) is what the page is told.

// Sibling files of this module (`src/hall/`), declared here so that the
// hall's module list stays as it is.
#[path = "auth.rs"]
pub mod auth;
#[path = "page.rs"]
pub mod page;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::{json, Value};
use tokio::sync::{broadcast, oneshot};

/// What the hub knows.
#[derive(Default)]
pub(super) struct Known {
    /// Board id -> its latest state payload.
    pub(super) boards: BTreeMap<String, Value>,
    /// Board id -> when the hub received its latest state (wall ms).
    received: BTreeMap<String, i64>,
    /// Host -> `online` / `offline`.
    hosts: BTreeMap<String, String>,
    /// Host -> when the hub last heard of it (wall ms): its `online`, or a
    /// state of one of its boards.
    seen: BTreeMap<String, i64>,
}

/// The hub's shared state.
pub struct Hub {
    hall: String,
    known: Mutex<Known>,
    pub(super) changes: broadcast::Sender<String>,
    desk: super::round::Desk,
    /// Arbiters' logins: `None` without a password file (read-only page).
    access: Option<page::Access>,
    /// The broker connection, once `follow` runs.
    mqtt: Mutex<Option<AsyncClient>>,
    /// Commands sent and waiting for their reply, by request id.
    pending: Mutex<HashMap<String, oneshot::Sender<Value>>>,
}

impl Hub {
    /// A hub without arbiters (read-only).
    pub fn new(hall: &str) -> Arc<Hub> {
        Hub::with_access(hall, None)
    }

    /// A hub whose arbiters log in with `access`.
    pub fn with_access(hall: &str, access: Option<page::Access>) -> Arc<Hub> {
        let (changes, _) = broadcast::channel(1024);
        Arc::new(Hub {
            hall: hall.to_owned(),
            known: Mutex::new(Known::default()),
            changes,
            desk: super::round::Desk::default(),
            access,
            mqtt: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
        })
    }

    /// The hall's name.
    pub fn hall(&self) -> &str {
        &self.hall
    }

    /// The round: its settings and the broadcast push's status.
    pub fn desk(&self) -> &super::round::Desk {
        &self.desk
    }

    pub(super) fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        // A panic while holding the lock cannot leave `Known` half-changed
        // (each change is one insert or remove): keep going.
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes one message from the broker: a board's state, a daemon's
    /// reply or a host's status (an empty payload removes a state or a
    /// status, as a retained deletion does).
    pub fn take(&self, topic: &str, payload: &[u8]) {
        self.take_at(topic, payload, crate::clock::wall_now_us().div_euclid(1000))
    }

    /// [`Hub::take`] at wall instant `now_ms`.
    pub fn take_at(&self, topic: &str, payload: &[u8], now_ms: i64) {
        let Some(rest) = topic
            .strip_prefix("chessclock/")
            .and_then(|t| t.strip_prefix(self.hall.as_str()))
        else {
            return;
        };
        let levels: Vec<&str> = rest.split('/').collect();
        let change = match levels.as_slice() {
            ["", "board", board, "state"] => {
                let value = if payload.is_empty() {
                    None
                } else {
                    Some(serde_json::from_slice(payload).unwrap_or(Value::Null))
                };
                let mut known = self.known();
                match &value {
                    Some(value) => {
                        known.boards.insert((*board).to_owned(), value.clone());
                        known.received.insert((*board).to_owned(), now_ms);
                        if let Some(host) = value["host"].as_str() {
                            known.seen.insert(host.to_owned(), now_ms);
                        }
                    }
                    None => {
                        known.boards.remove(*board);
                        known.received.remove(*board);
                    }
                };
                json!({"type": "state", "board": board, "payload": value, "received_ms": now_ms})
            }
            ["", "board", _, "reply"] => {
                self.reply(payload);
                return;
            }
            ["", "host", host, "online"] => {
                let status = String::from_utf8_lossy(payload).into_owned();
                let mut known = self.known();
                if status.is_empty() {
                    known.hosts.remove(*host);
                    known.seen.remove(*host);
                } else {
                    if status == "online" {
                        known.seen.insert((*host).to_owned(), now_ms);
                    }
                    known.hosts.insert((*host).to_owned(), status.clone());
                }
                let seen = known.seen.get(*host).copied();
                json!({"type": "host", "host": host, "online": status == "online",
                       "last_seen_ms": seen})
            }
            _ => return,
        };
        let _ = self.changes.send(change.to_string());
    }

    /// A daemon's reply: to the command waiting for its id, if any.
    fn reply(&self, payload: &[u8]) {
        let Ok(value) = serde_json::from_slice::<Value>(payload) else {
            return;
        };
        let Some(id) = value["id"].as_str() else {
            return;
        };
        if let Some(waiting) = self.pending().remove(id) {
            let _ = waiting.send(value);
        }
    }

    /// Every known board and host, as the `/events` messages that tell them.
    fn everything(&self) -> Vec<String> {
        let known = self.known();
        let hosts = known.hosts.iter().map(|(host, status)| {
            json!({"type": "host", "host": host, "online": status == "online",
                   "last_seen_ms": known.seen.get(host)})
            .to_string()
        });
        let boards = known.boards.iter().map(|(board, payload)| {
            json!({"type": "state", "board": board, "payload": payload,
                   "received_ms": known.received.get(board)})
            .to_string()
        });
        hosts.chain(boards).collect()
    }

    /// Publishes `request` (a command payload with its `id`) on `board`'s
    /// command topic (QoS 1) and waits up to `wait` for the daemon's reply.
    pub async fn command(&self, board: &str, request: Value, wait: Duration) -> CommandOutcome {
        let Some(id) = request["id"].as_str().map(str::to_owned) else {
            return CommandOutcome::NoBroker("the request has no id".into());
        };
        let client = self
            .mqtt
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(client) = client else {
            return CommandOutcome::NoBroker("the hub is not connected to the broker".into());
        };
        let (tell, told) = oneshot::channel();
        self.pending().insert(id.clone(), tell);
        let topic = format!("chessclock/{}/board/{board}/command", self.hall);
        let sent = client
            .publish(
                topic,
                QoS::AtLeastOnce,
                false,
                request.to_string().into_bytes(),
            )
            .await;
        let outcome = match sent {
            Err(error) => CommandOutcome::NoBroker(format!("cannot send the command: {error}")),
            Ok(()) => match tokio::time::timeout(wait, told).await {
                Ok(Ok(reply)) => CommandOutcome::Reply(reply),
                _ => CommandOutcome::NoReply,
            },
        };
        self.pending().remove(&id);
        outcome
    }
}

/// What became of a command sent to a board.
#[derive(Debug)]
pub enum CommandOutcome {
    /// The daemon's reply (`ok`, or its `error`).
    Reply(Value),
    /// No reply in time (the board's host is away, or the broker refused
    /// the command).
    NoReply,
    /// Not sent.
    NoBroker(String),
}

/// Subscribes to the hall (again on every ConnAck) and feeds the hub, for
/// good (the client reconnects by itself).
pub async fn follow(hub: Arc<Hub>, options: MqttOptions) {
    let (client, mut eventloop) = AsyncClient::new(options, 64);
    *hub.mqtt
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(client.clone());
    let filters = [
        format!("chessclock/{}/board/+/state", hub.hall),
        format!("chessclock/{}/board/+/reply", hub.hall),
        format!("chessclock/{}/host/+/online", hub.hall),
    ];
    let mut retry = Duration::from_millis(250);
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                retry = Duration::from_millis(250);
                tracing::info!("hub: connected to the broker");
                for filter in &filters {
                    if let Err(error) = client.try_subscribe(filter.clone(), QoS::AtLeastOnce) {
                        tracing::error!(%error, filter, "hub: cannot subscribe");
                    }
                }
            }
            Ok(Event::Incoming(Incoming::Publish(publish))) => {
                hub.take(&publish.topic, &publish.payload)
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(%error, "hub: the broker is away");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(Duration::from_secs(4));
            }
        }
    }
}

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
        .merge(super::round::routes())
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
    let now = crate::clock::wall_now_us().div_euclid(1000);
    let known = hub.known();
    let urgent = page::urgent_order(&known.boards, &known.hosts, now);
    axum::Json(json!({"boards": known.boards, "hosts": known.hosts,
                      "last_seen_ms": known.seen, "urgent": urgent}))
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
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn the_hub_takes_its_halls_topics_only() {
        let hub = Hub::new("open");
        hub.take("chessclock/open/board/b1/state", br#"{"board":"b1"}"#);
        hub.take("chessclock/other/board/b2/state", br#"{"board":"b2"}"#);
        hub.take("chessclock/open/host/pi/online", b"offline");
        hub.take("chessclock/open/board/b3/state", b"not json");
        let everything = hub.everything();
        assert_eq!(everything.len(), 3, "{everything:?}");
        hub.take("chessclock/open/board/b3/state", b"");
        assert_eq!(hub.everything().len(), 2);
    }
}
