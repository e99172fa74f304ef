//! `chessclock-hall`, the hub: one per event. It subscribes to the hall's
//! board states and hosts' `online` topics on the broker and serves, over
//! HTTP (axum):
//! * `/`: the arbiters' page, every board in a row; the running clocks tick
//!   in the browser from each state's snapshot (no reload);
//! * `/events`: server-sent events, one `message` per change, its data
//!   `{"type": "state", "board", "payload"}` (the board's state payload as
//!   published, see [`super::message::StatePayload`]) or `{"type": "host",
//!   "host", "online"}`; every known board and host first, then changes;
//! * `/boards.json`: every board's latest state and every host's status;
//! * `/round.pgn`: the round's PGN built from the board states (see
//!   [`super::round`]).
//!
//! Promises: the hub never trusts a payload's shape (a malformed state is
//! kept as it came, and shown as far as it can be); it subscribes again on
//! every ConnAck; it reads only (commands from the page are left for later).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::{json, Value};
use tokio::sync::broadcast;

/// What the hub knows.
#[derive(Default)]
pub(super) struct Known {
    /// Board id -> its latest state payload.
    pub(super) boards: BTreeMap<String, Value>,
    /// Host -> `online` / `offline`.
    hosts: BTreeMap<String, String>,
}

/// The hub's shared state.
pub struct Hub {
    hall: String,
    known: Mutex<Known>,
    pub(super) changes: broadcast::Sender<String>,
    desk: super::round::Desk,
}

impl Hub {
    pub fn new(hall: &str) -> Arc<Hub> {
        let (changes, _) = broadcast::channel(1024);
        Arc::new(Hub {
            hall: hall.to_owned(),
            known: Mutex::new(Known::default()),
            changes,
            desk: super::round::Desk::default(),
        })
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

    /// Takes one message from the broker: a board's state or a host's
    /// status (an empty payload removes it, as a retained deletion does).
    pub fn take(&self, topic: &str, payload: &[u8]) {
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
                    Some(value) => known.boards.insert((*board).to_owned(), value.clone()),
                    None => known.boards.remove(*board),
                };
                json!({"type": "state", "board": board, "payload": value})
            }
            ["", "host", host, "online"] => {
                let status = String::from_utf8_lossy(payload).into_owned();
                let mut known = self.known();
                if status.is_empty() {
                    known.hosts.remove(*host);
                } else {
                    known.hosts.insert((*host).to_owned(), status.clone());
                }
                json!({"type": "host", "host": host, "online": status == "online"})
            }
            _ => return,
        };
        let _ = self.changes.send(change.to_string());
    }

    /// Every known board and host, as the `/events` messages that tell them.
    fn everything(&self) -> Vec<String> {
        let known = self.known();
        let hosts = known.hosts.iter().map(|(host, status)| {
            json!({"type": "host", "host": host, "online": status == "online"}).to_string()
        });
        let boards = known.boards.iter().map(|(board, payload)| {
            json!({"type": "state", "board": board, "payload": payload}).to_string()
        });
        hosts.chain(boards).collect()
    }
}

/// Subscribes to the hall (again on every ConnAck) and feeds the hub, for
/// good (the client reconnects by itself).
pub async fn follow(hub: Arc<Hub>, options: MqttOptions) {
    let (client, mut eventloop) = AsyncClient::new(options, 64);
    let filters = [
        format!("chessclock/{}/board/+/state", hub.hall),
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
        .route("/", get(page))
        .route("/events", get(events))
        .route("/boards.json", get(boards))
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
    axum::serve(listener, router(hub))
        .with_graceful_shutdown(shutdown)
        .await?;
    Ok(())
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn boards(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    let known = hub.known();
    axum::Json(json!({"boards": known.boards, "hosts": known.hosts}))
}

async fn events(
    State(hub): State<Arc<Hub>>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, std::convert::Infallible>>> {
    // Subscribed before the first picture is taken: nothing falls between.
    let changes = hub.changes.subscribe();
    let first: std::collections::VecDeque<String> = hub.everything().into();
    let stream =
        futures_util::stream::unfold((first, changes), |(mut first, mut changes)| async move {
            if let Some(data) = first.pop_front() {
                return Some((Ok(SseEvent::default().data(data)), (first, changes)));
            }
            match changes.recv().await {
                Ok(data) => Some((Ok(SseEvent::default().data(data)), (first, changes))),
                // Behind, or the hub stops: the stream ends; the page
                // reconnects (EventSource does) and gets everything again.
                Err(_) => None,
            }
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The arbiters' page: a table of every board, fed by `/events`; the
/// running clock ticks from the snapshot (`snapshot_wall_ms`).
const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>chessclock hall</title>
<style>
body { font-family: sans-serif; margin: 1em; background: #fafafa; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: .3em .6em; border-bottom: 1px solid #ddd; text-align: left; }
td.time { font-family: monospace; font-size: 1.3em; }
td.running { font-weight: bold; background: #e8f4e8; }
tr.flag { background: #f8c8c8; }
tr.arbiter { background: #ffd890; }
tr.offline { color: #999; background: #eee; }
#status { color: #666; }
</style></head>
<body>
<h1>Hall</h1>
<p id="status">connecting...</p>
<table><thead><tr><th>Board</th><th>Host</th><th>Control</th><th>White</th><th>Black</th>
<th>Moves</th><th>Stage</th><th>Flags</th><th>Arbiter</th><th>Devices</th></tr></thead>
<tbody id="boards"></tbody></table>
<script>
"use strict";
const boards = {}, hosts = {};
function clock(ms) {
  if (ms === null || ms === undefined) return "";
  const s = Math.ceil(Math.max(0, ms) / 1000);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(r).padStart(2, "0");
}
function remaining(p, side) {
  const s = p.snapshot || {};
  let ms = s[side + "_remaining_ms"];
  const over = (p.state && p.state.result) || (s.flags && s.flags.length);
  if (s.running === side && s.started && !s.paused && !over)
    ms -= Date.now() - p.snapshot_wall_ms;
  return Math.max(0, ms);
}
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
}
function render() {
  const body = document.getElementById("boards");
  body.replaceChildren();
  for (const id of Object.keys(boards).sort()) {
    const p = boards[id] || {}, s = p.snapshot || {};
    const row = document.createElement("tr");
    row.id = "board-" + id;
    const online = hosts[p.host] !== false;
    const flags = s.flags || [];
    row.className = !online ? "offline" : flags.length ? "flag" : s.arbiter_called ? "arbiter" : "";
    cell(row, id);
    cell(row, (p.host || "") + (online ? "" : " (offline)"));
    cell(row, s.control || "");
    cell(row, clock(remaining(p, "white")), "time white" + (s.running === "white" ? " running" : ""));
    cell(row, clock(remaining(p, "black")), "time black" + (s.running === "black" ? " running" : ""));
    cell(row, (s.white_moves ?? "") + " / " + (s.black_moves ?? ""));
    cell(row, (s.white_stage ?? "") + " / " + (s.black_stage ?? ""));
    cell(row, flags.map((f, i) => i === 0 ? f + " (first)" : f).join(", "));
    cell(row, s.arbiter_called ? "CALLED" : "");
    cell(row, (s.devices || []).map(d => d.role + (d.connected ? " ok" : " DOWN")).join(", "));
    body.appendChild(row);
  }
}
const source = new EventSource("events");
source.onopen = () => { document.getElementById("status").textContent = "live"; };
source.onerror = () => { document.getElementById("status").textContent = "reconnecting..."; };
source.onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (m.type === "state") { if (m.payload) boards[m.board] = m.payload; else delete boards[m.board]; }
  if (m.type === "host") hosts[m.host] = m.online;
  render();
};
setInterval(render, 200);
</script>
</body></html>
"#;

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
