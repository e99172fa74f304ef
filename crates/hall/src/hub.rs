//! The hub's state: what it knows of the hall, kept from the broker. It
//! subscribes to the hall's board states, the daemons' replies and hosts'
//! `online` topics ([`follow`]); [`crate::http`] serves it, over HTTP (axum):
//! * `/`: the arbiters' page, every board in a row (see `crate::page`); the
//!   running clocks tick in the browser from each state's snapshot (no
//!   reload); logged-in arbiters correct boards from it;
//! * `/spectator`: the same boards read-only, without arbiter matters;
//! * `/events`: server-sent events, one `message` per change, its data
//!   `{"type": "link", "connected", "since_ms", "data_as_of_ms"}` (the
//!   hub's own link to the broker, [`Link`]),
//!   `{"type": "state", "board", "payload", "received_ms", "position"}` (the board's
//!   state payload as published, see `chessclock_hall_proto::message::StatePayload`;
//!   `position` its card's, [`crate::picture::position`]) or
//!   `{"type": "host", "host", "status", "online", "last_seen_ms"}` and,
//!   for each board of that host, `{"type": "board-host", "board",
//!   "status", "last_seen_ms"}` (the host unnamed, for spectators), or
//!   `{"type": "seats", "seats": {board: {"number", "white", "black"}}}`
//!   (each board's number in the round and the players its pairing
//!   names, [`Desk::seating`]: again when a board comes or goes or the
//!   desk loads a round); the
//!   link, every known host and board first, then changes, and a
//!   `{"type": "heartbeat"}` whenever nothing else went for
//!   [`crate::page::HEARTBEAT`]; `/public/events` the public feed: the
//!   link, the round's boards' hosts and seats, and each state's public
//!   view when the broadcast delay lets it out (`hub/public.rs`,
//!   [`crate::broadcast`]);
//! * `/boards.json`: every board's latest state, every host's status and
//!   when it was last known alive, the link, and the boards most urgent
//!   first;
//! * `/api/...`: login, logout and the arbiters' commands (`crate::page`);
//! * `/round.pgn` and the round's other routes: see [`crate::round`].
//!
//! Promises: the hub never shows old data as live. It knows its own link
//! to the broker (up from a ConnAck, down at the connection's first error)
//! and tells it first and at each change; while the link is down no host
//! is `online` (each is `unknown`, last known alive when the link was last
//! known good); a host's `last_seen_ms` is when it was last known alive
//! (its `online` or a live state: now; an `offline` from the broker: its
//! arrival, within the host's 1.5 x keepalive of its death; a retained
//! `offline` found at a (re)connection: kept as it was). The hub never
//! trusts a payload's shape (a malformed state is
//! kept as it came, and shown as far as it can be); it subscribes again on
//! every ConnAck; a command reaches the broker only from a logged-in
//! arbiter's session with its CSRF token, named with the arbiter and a
//! fresh id, and its reply (or its absence) is what the page is told; a
//! command is published only while the hub is connected to the broker
//! (else 503 at once) and carries a deadline before the hub's answer, so
//! one the page was told failed is never carried out later
//! ([`Hub::command`]); a message larger than the hall takes
//! (`chessclock_hall_proto::page::MAX_PAYLOAD`) costs only itself: the
//! broker drops one beyond the client's packet limit, the hub drops one
//! beyond the payload limit unread and counts it (`/boards.json`'s
//! `oversize`), and the link stays up.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chessclock_hall_proto::page::MAX_PAYLOAD;
use rumqttc::v5::mqttbytes::v5::Packet;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, ConnectionError, Event, MqttOptions, StateError};
use serde_json::{json, Value};
use tokio::sync::{broadcast, oneshot};

use chessclock_host::clock::{Clock, SystemClock};

use crate::auth::Access;
use crate::broadcast::{Cut, Delayed};

mod public;
mod state;
use crate::round::Desk;
pub use public::BoardsRead;

/// How many `/events` messages a page may fall behind before its stream
/// ends (it reconnects and gets everything again): 0.8 s of a 1,000-board
/// hall's peak (5,000 states a second), at most ~20 MB of states of the
/// hall's usual 2-5 KB.
const CHANGES_KEPT: usize = 4096;

/// A board's latest state as it came: its JSON text (`null` if it was not
/// JSON), its host, when the hub received it (wall ms), and the position
/// its card shows (an e-board's FEN and last move,
/// [`crate::picture::position`]; `null` without one), made once per
/// state: a replay of the game is not for every stream's every message.
pub(crate) struct Latest {
    pub(crate) text: Arc<str>,
    pub(crate) host: Option<String>,
    pub(crate) received_ms: i64,
    pub(crate) position: Value,
}

/// What the hub knows.
#[derive(Default)]
pub(crate) struct Known {
    /// Board id -> its latest state as it came.
    latest: BTreeMap<String, Latest>,
    /// Board id -> its latest state parsed: made when a reader asks
    /// ([`Known::boards`]), again only for the boards in `unparsed`. A
    /// tree made and dropped for every state taken was over half the
    /// hub's time at a 1,000-board hall's peak (BENCHMARKS.md, "Hall at
    /// scale"); what the hub reads of each state it takes, it skims
    /// ([`crate::skim`]).
    trees: BTreeMap<String, Value>,
    /// Boards whose tree is older than their latest state.
    unparsed: std::collections::BTreeSet<String>,
    /// Host -> `online` / `offline` (as its topic says), or `unknown`:
    /// `online` when the hub lost the broker, until the broker tells again.
    pub(crate) hosts: BTreeMap<String, String>,
    /// Host -> when it was last known alive (wall ms): its `online` or a
    /// live state of one of its boards (alive then, and still while it is
    /// `online`), the arrival of its `offline`, or the last instant the
    /// link to the broker was known good when it was lost.
    pub(crate) seen: BTreeMap<String, i64>,
    /// The keys of `latest`, made again only when a board comes or goes:
    /// the desk reads them at every state, and copying 1,000 ids per
    /// state was a third of the hub's CPU at a hall's peak (BENCHMARKS.md,
    /// "Hall at scale").
    ids: Arc<Vec<String>>,
}

impl Known {
    /// Every board's latest state, parsed (the trees of the states taken
    /// since the last read made now).
    pub(crate) fn boards(&mut self) -> &BTreeMap<String, Value> {
        for board in std::mem::take(&mut self.unparsed) {
            if let Some(latest) = self.latest.get(&board) {
                let tree = serde_json::from_str(&latest.text).unwrap_or(Value::Null);
                self.trees.insert(board, tree);
            }
        }
        &self.trees
    }

    /// Whether the hub has a state of `board`.
    pub(crate) fn has_board(&self, board: &str) -> bool {
        self.latest.contains_key(board)
    }

    /// The boards the hub has a state of, in id order.
    pub(crate) fn board_ids(&self) -> impl Iterator<Item = &String> {
        self.latest.keys()
    }

    /// The host a board's latest state names.
    fn host_of(&self, board: &str) -> Option<&str> {
        self.latest.get(board)?.host.as_deref()
    }

    /// Keeps a board's latest state; whether the board is new (its id
    /// added to `ids`).
    fn keep(&mut self, board: &str, latest: Latest) -> bool {
        // No key made again for a board the hub has (every state).
        if !self.unparsed.contains(board) {
            self.unparsed.insert(board.to_owned());
        }
        match self.latest.get_mut(board) {
            Some(slot) => {
                *slot = latest;
                false
            }
            None => {
                self.latest.insert(board.to_owned(), latest);
                self.ids = Arc::new(self.latest.keys().cloned().collect());
                true
            }
        }
    }

    /// Forgets a board; whether the hub had it (its id then taken out of
    /// `ids`).
    fn forget(&mut self, board: &str) -> bool {
        self.trees.remove(board);
        self.unparsed.remove(board);
        let gone = self.latest.remove(board).is_some();
        if gone {
            self.ids = Arc::new(self.latest.keys().cloned().collect());
        }
        gone
    }
}

/// A state's `/events` message, `{"board", "payload", "received_ms",
/// "position", "type": "state"}`, with the payload's JSON text (`None`:
/// `null`, the board gone, and no `position`) written in as it is: no copy
/// of a parsed tree.
fn state_message(
    board: &str,
    payload: Option<&str>,
    received_ms: Option<i64>,
    position: Option<&Value>,
) -> String {
    let board = Value::from(board).to_string();
    let payload = payload.unwrap_or("null");
    let mut text = String::with_capacity(payload.len() + board.len() + 128);
    text.push_str("{\"board\":");
    text.push_str(&board);
    text.push_str(",\"payload\":");
    text.push_str(payload);
    text.push_str(",\"received_ms\":");
    match received_ms {
        Some(ms) => text.push_str(&ms.to_string()),
        None => text.push_str("null"),
    }
    if let Some(position) = position {
        text.push_str(",\"position\":");
        text.push_str(&position.to_string());
    }
    text.push_str(",\"type\":\"state\"}");
    text
}

/// The hub's link to the broker, as the pages are told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// From a ConnAck to the connection's next error.
    pub connected: bool,
    /// When it last changed (wall ms; the hub's start before the first
    /// connection).
    pub since_ms: i64,
    /// Until when what the hub holds was known current (wall ms): `None`
    /// while connected (now) or before any connection; once lost, the
    /// last instant the link was known good (the error's own instant when
    /// the broker closed it, the last packet from the broker when its
    /// pings went unanswered).
    pub data_as_of_ms: Option<i64>,
}

impl Link {
    /// The `/events` message that tells it.
    pub fn message(&self) -> Value {
        json!({"type": "link", "connected": self.connected, "since_ms": self.since_ms,
               "data_as_of_ms": self.data_as_of_ms})
    }
}

/// The boards whose latest state names `host`.
fn boards_of<'a>(known: &'a Known, host: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    known
        .latest
        .iter()
        .filter(move |(_, latest)| latest.host.as_deref() == Some(host))
        .map(|(board, _)| board.as_str())
}

/// The `/events` message of a board's host's status, without the host's
/// name (spectators get it: whether the board's data is live, and until
/// when it was): `None` while its host's status is not known.
pub(crate) fn board_host_message(known: &Known, board: &str) -> Option<Value> {
    let host = known.host_of(board)?;
    let status = known.hosts.get(host)?;
    Some(
        json!({"type": "board-host", "board": board, "status": status,
                "last_seen_ms": known.seen.get(host)}),
    )
}

/// The `/events` message of a host's status.
fn host_message(host: &str, status: &str, seen: Option<i64>) -> Value {
    json!({"type": "host", "host": host, "status": status, "online": status == "online",
           "last_seen_ms": seen})
}

/// The hub's shared state.
pub struct Hub {
    hall: String,
    known: Mutex<Known>,
    pub(crate) changes: broadcast::Sender<Arc<str>>,
    desk: Desk,
    /// Arbiters' logins: `None` without a password file (read-only page).
    pub(crate) access: Option<Access>,
    /// The broker connection, once `follow` runs.
    mqtt: Mutex<Option<AsyncClient>>,
    /// The link to the broker. Commands are published only while it is up.
    link: Mutex<Link>,
    /// When the hub last heard from the broker (wall ms): any packet.
    heard_ms: AtomicI64,
    /// Where the hub reads the time (the system's, or a test's).
    clock: Arc<dyn Clock>,
    /// Commands sent and waiting for their reply, by request id.
    pending: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// The last `seats` message (`None`: not made yet): made again when a
    /// board comes or goes and when the desk loads a round, not on every
    /// state (with a thousand boards the assignment is not free).
    seats: Mutex<Option<Value>>,
    /// Messages above [`MAX_PAYLOAD`] dropped on arrival.
    oversize: AtomicU64,
    /// Every board's states with their instants: the public feed's
    /// source, behind the delay ([`crate::broadcast`]).
    pub(crate) delayed: Delayed,
    /// The public feed's changes: the link, the round's boards' hosts and
    /// seats as they come, the states as the delay releases them
    /// (`crate::http`'s releaser).
    pub(crate) public: broadcast::Sender<Arc<str>>,
    /// Whether the releaser runs.
    pub(crate) releasing: std::sync::atomic::AtomicBool,
    /// Rung when the public feed changed (a state released, a public
    /// seat or host): what the lichess push waits on. Not a reader of
    /// `public`: the releaser builds the public views only for readers.
    pub(crate) public_changed: tokio::sync::Notify,
}

impl Hub {
    /// A hub without arbiters (read-only).
    pub fn new(hall: &str) -> Arc<Hub> {
        Hub::with_access(hall, None)
    }

    /// A hub whose arbiters log in with `access`.
    pub fn with_access(hall: &str, access: Option<Access>) -> Arc<Hub> {
        Hub::with_clock(hall, access, Arc::new(SystemClock))
    }

    /// A hub that reads the time from `clock`.
    pub fn with_clock(hall: &str, access: Option<Access>, clock: Arc<dyn Clock>) -> Arc<Hub> {
        let (changes, _) = broadcast::channel(CHANGES_KEPT);
        let (public, _) = broadcast::channel(CHANGES_KEPT);
        let started_ms = clock.wall_ms();
        Arc::new(Hub {
            hall: hall.to_owned(),
            known: Mutex::new(Known::default()),
            changes,
            desk: Desk::default(),
            access,
            mqtt: Mutex::new(None),
            link: Mutex::new(Link {
                connected: false,
                since_ms: started_ms,
                data_as_of_ms: None,
            }),
            heard_ms: AtomicI64::new(started_ms),
            clock,
            pending: Mutex::new(HashMap::new()),
            seats: Mutex::new(None),
            oversize: AtomicU64::new(0),
            delayed: Delayed::default(),
            public,
            releasing: std::sync::atomic::AtomicBool::new(false),
            public_changed: tokio::sync::Notify::new(),
        })
    }

    /// Now on the hub's wall clock, in milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.clock.wall_ms()
    }

    /// The hall's name.
    pub fn hall(&self) -> &str {
        &self.hall
    }

    /// The round: its settings and the broadcast push's status.
    pub fn desk(&self) -> &Desk {
        &self.desk
    }

    pub(crate) fn known(&self) -> std::sync::MutexGuard<'_, Known> {
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
    /// status, as a retained deletion does). One larger than
    /// [`MAX_PAYLOAD`] (no daemon publishes one) is dropped unread, logged
    /// and counted ([`Hub::oversize`]): what the hub knew stays.
    pub fn take(&self, topic: &str, payload: &[u8]) {
        self.take_at(topic, payload, self.clock.wall_ms())
    }

    /// How many messages larger than [`MAX_PAYLOAD`] the hub dropped.
    pub fn oversize(&self) -> u64 {
        self.oversize.load(Ordering::SeqCst)
    }

    /// Drops (logs and counts) a payload above [`MAX_PAYLOAD`]: whether it
    /// was one.
    fn oversize_dropped(&self, topic: &str, payload: &[u8]) -> bool {
        if payload.len() > MAX_PAYLOAD {
            let dropped = self.oversize.fetch_add(1, Ordering::SeqCst) + 1;
            tracing::warn!(
                topic,
                bytes = payload.len(),
                limit = MAX_PAYLOAD,
                dropped,
                "hub: a message larger than the hall takes; dropped unread"
            );
            return true;
        }
        false
    }

    /// [`Hub::take`] at wall instant `now_ms`.
    pub fn take_at(&self, topic: &str, payload: &[u8], now_ms: i64) {
        self.take_message(topic, payload, false, now_ms)
    }

    /// One message from the broker at wall instant `now_ms`; `retained`: the
    /// broker's retained copy, sent because the hub subscribed (it tells
    /// what holds, not that anything happened now).
    pub fn take_message(&self, topic: &str, payload: &[u8], retained: bool, now_ms: i64) {
        if self.oversize_dropped(topic, payload) {
            return;
        }
        let Some(rest) = topic
            .strip_prefix("chessclock/")
            .and_then(|t| t.strip_prefix(self.hall.as_str()))
        else {
            return;
        };
        let levels: Vec<&str> = rest.split('/').collect();
        let changes: Vec<String> = match levels.as_slice() {
            ["", "board", board, "state"] => self.take_state(board, payload, retained, now_ms),
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
                    // `online` (retained or not): the broker holds the host
                    // connected now. A live `offline`: the broker just lost
                    // it (its will) or it said goodbye. A retained one
                    // tells nothing of when: what the hub knew stays.
                    if status == "online" || !retained {
                        known.seen.insert((*host).to_owned(), now_ms);
                    }
                    known.hosts.insert((*host).to_owned(), status.clone());
                }
                let mut changes = vec![host_message(host, &status, known.seen.get(*host).copied())];
                changes
                    .extend(boards_of(&known, host).filter_map(|b| board_host_message(&known, b)));
                let changes: Vec<String> = changes.into_iter().map(|c| c.to_string()).collect();
                drop(known);
                // The host message (first) names the host: not public.
                for change in changes.iter().skip(1) {
                    self.tell_public(change);
                }
                changes
            }
            _ => return,
        };
        for change in changes {
            let _ = self.changes.send(Arc::from(change));
        }
    }

    /// The `seats` message as of now: each board's number in the round
    /// and the players its pairing names ([`Desk::seating`]).
    fn seats_now(&self) -> Value {
        // The ids only, and the hub's lock let go before the desk's is
        // taken (the desk's readers take the hub's inside theirs).
        let ids: BTreeMap<String, Value> = self
            .known()
            .board_ids()
            .map(|id| (id.clone(), Value::Null))
            .collect();
        json!({"type": "seats", "seats": self.desk.seating(&ids)})
    }

    fn last_seats(&self) -> std::sync::MutexGuard<'_, Option<Value>> {
        self.seats
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes the `seats` message again; `Some` when it changed (to tell).
    fn remake_seats(&self) -> Option<Value> {
        let ids: BTreeMap<String, Value> = self
            .known()
            .board_ids()
            .map(|id| (id.clone(), Value::Null))
            .collect();
        self.delayed.set_members(self.desk.members(&ids));
        let seats = self.seats_now();
        let mut last = self.last_seats();
        (last.as_ref() != Some(&seats)).then(|| {
            *last = Some(seats.clone());
            seats
        })
    }

    /// After the desk changed the round's pairings or board map: tells the
    /// pages the boards' new numbers and players, if they changed.
    pub fn refresh_seats(&self) {
        if let Some(seats) = self.remake_seats() {
            let seats = seats.to_string();
            self.tell_public(&seats);
            let _ = self.changes.send(Arc::from(seats));
        }
    }

    /// The `seats` message last made (made now if none was).
    pub(crate) fn seats_message(&self) -> Value {
        if let Some(seats) = self.last_seats().clone() {
            return seats;
        }
        self.remake_seats()
            .or_else(|| self.last_seats().clone())
            .unwrap_or(Value::Null)
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

    /// The link, every known host and board, as the `/events` messages
    /// that tell them (the link first).
    pub(crate) fn everything(&self) -> Vec<String> {
        let link = self.link().message().to_string();
        let seats = self.seats_message().to_string();
        let known = self.known();
        let hosts = known.hosts.iter().map(|(host, status)| {
            host_message(host, status, known.seen.get(host).copied()).to_string()
        });
        let boards = known.latest.iter().map(|(board, latest)| {
            state_message(
                board,
                Some(&latest.text),
                Some(latest.received_ms),
                Some(&latest.position),
            )
        });
        let board_hosts = known
            .board_ids()
            .filter_map(|board| board_host_message(&known, board))
            .map(|message| message.to_string());
        std::iter::once(link)
            .chain(hosts)
            .chain(boards)
            .chain(board_hosts)
            .chain(std::iter::once(seats))
            .collect()
    }

    /// Whether the hub is connected to the broker (from its ConnAck to the
    /// next error of the connection).
    pub fn connected(&self) -> bool {
        self.link().connected
    }

    /// The link to the broker.
    pub fn link(&self) -> Link {
        *self
            .link
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A packet came from the broker at `now_ms`.
    pub fn heard(&self, now_ms: i64) {
        self.heard_ms.store(now_ms, Ordering::SeqCst);
    }

    /// The broker's ConnAck at `now_ms` (after the subscriptions are
    /// asked for): the link is up, and the pages are told.
    pub fn link_up(&self, now_ms: i64) {
        self.heard(now_ms);
        let link = {
            let mut link = self
                .link
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *link = Link {
                connected: true,
                since_ms: now_ms,
                data_as_of_ms: None,
            };
            *link
        };
        let _ = self.changes.send(Arc::from(link.message().to_string()));
        let _ = self.public.send(Arc::from(link.message().to_string()));
    }

    /// The connection failed at `now_ms`; `unanswered`: the broker stopped
    /// answering (its pings went unanswered), so what the hub holds was
    /// last known good at the last packet heard, not now. Once per outage:
    /// the link is down, every `online` host is `unknown` from then (last
    /// known alive then), and the pages are told.
    pub fn link_down(&self, now_ms: i64, unanswered: bool) {
        let as_of = if unanswered {
            self.heard_ms.load(Ordering::SeqCst).min(now_ms)
        } else {
            now_ms
        };
        let link = {
            let mut link = self
                .link
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !link.connected {
                return;
            }
            *link = Link {
                connected: false,
                since_ms: now_ms,
                data_as_of_ms: Some(as_of),
            };
            *link
        };
        let _ = self.changes.send(Arc::from(link.message().to_string()));
        let _ = self.public.send(Arc::from(link.message().to_string()));
        let mut known = self.known();
        let Known { hosts, seen, .. } = &mut *known;
        let mut gone = Vec::new();
        for (host, status) in hosts.iter_mut().filter(|(_, s)| *s == "online") {
            "unknown".clone_into(status);
            seen.insert(host.clone(), as_of);
            gone.push(host.clone());
        }
        for host in gone {
            let _ = self.changes.send(
                host_message(&host, "unknown", Some(as_of))
                    .to_string()
                    .into(),
            );
            for message in boards_of(&known, &host).filter_map(|b| board_host_message(&known, b)) {
                let message = message.to_string();
                self.tell_public(&message);
                let _ = self.changes.send(Arc::from(message));
            }
        }
    }

    /// Publishes `request` (a command payload with its `id`) on `board`'s
    /// command topic (QoS 1) and waits up to `wait` for the daemon's reply.
    ///
    /// Never carried out after its answer: while the hub is not connected
    /// to the broker nothing is published ([`CommandOutcome::NoBroker`] at
    /// once); a command published goes with `deadline_ms` =
    /// now + `wait` - [`DEADLINE_MARGIN`], after which a daemon refuses it
    /// (`expired`). That covers what the MQTT client still holds when the
    /// link breaks under it: its request channel outlives an outage (the
    /// client sends it at the next connection, however late), and the
    /// client cannot take a request back.
    pub async fn command(&self, board: &str, request: Value, wait: Duration) -> CommandOutcome {
        let Some(id) = request["id"].as_str().map(str::to_owned) else {
            return CommandOutcome::NoBroker("the request has no id".into());
        };
        let client = self
            .mqtt
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(client) = client.filter(|_| self.connected()) else {
            return CommandOutcome::NoBroker("the hub is not connected to the broker".into());
        };
        let mut request = request;
        let deadline_ms = command_deadline(self.now_ms(), wait);
        request["deadline_ms"] = json!(deadline_ms);
        if request["command"] == "set-result" {
            // Who entered the result the board's next state brings.
            if let Some(arbiter) = request["arbiter"].as_str() {
                self.desk.note_arbiter(board, arbiter);
            }
        }
        let (tell, told) = oneshot::channel();
        self.pending().insert(id.clone(), tell);
        let topic = format!("chessclock/{}/board/{board}/command", self.hall);
        // `try_publish`: a client whose queue is full (a link that stalls)
        // refuses at once rather than holding the request for later.
        let sent = client.try_publish(
            topic,
            QoS::AtLeastOnce,
            false,
            request.to_string().into_bytes(),
        );
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

/// How long before the hub stops waiting for a reply a command's deadline
/// falls: room for the reply's way back and for the hub's and the Pis'
/// clocks to disagree a little (NTP keeps them within milliseconds).
pub const DEADLINE_MARGIN: Duration = Duration::from_secs(1);

/// The `deadline_ms` of a command sent at wall instant `now_ms` whose reply
/// is waited for `wait`: [`DEADLINE_MARGIN`] before the wait ends (at the
/// send for a wait shorter than the margin).
pub fn command_deadline(now_ms: i64, wait: Duration) -> i64 {
    let before = wait.saturating_sub(DEADLINE_MARGIN);
    now_ms.saturating_add(i64::try_from(before.as_millis()).unwrap_or(i64::MAX))
}

/// What became of a command sent to a board.
#[derive(Debug)]
pub enum CommandOutcome {
    /// The daemon's reply (`ok`, or its `error`).
    Reply(Value),
    /// No reply in time (the board's host is away, or the broker refused
    /// the command).
    NoReply,
    /// Not sent (not connected to the broker, or the client's queue is
    /// full).
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
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                retry = Duration::from_millis(250);
                tracing::info!("hub: connected to the broker");
                for filter in &filters {
                    if let Err(error) = client.try_subscribe(filter.clone(), QoS::AtLeastOnce) {
                        tracing::error!(%error, filter, "hub: cannot subscribe");
                    }
                }
                // After the subscriptions: a command's reply cannot come
                // before the hub listens for it.
                hub.link_up(hub.now_ms());
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => {
                let now = hub.now_ms();
                hub.heard(now);
                let topic = String::from_utf8_lossy(&publish.topic);
                hub.take_message(&topic, &publish.payload, publish.retain, now)
            }
            Ok(Event::Incoming(_)) => hub.heard(hub.now_ms()),
            Ok(Event::Outgoing(_)) => {}
            Err(error) => {
                let unanswered = matches!(
                    error,
                    ConnectionError::MqttState(StateError::AwaitPingResp)
                        | ConnectionError::Timeout(_)
                );
                hub.link_down(hub.now_ms(), unanswered);
                tracing::warn!(%error, "hub: the broker is away");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(Duration::from_secs(4));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// A transcript on the hub's own clock: what it took is stamped with
    /// the instant it took it, and the event of a change is sent only once
    /// the change is in what readers see.
    #[test]
    fn the_hub_stamps_what_it_takes_with_its_clock_and_announces_it_after() {
        use chessclock_host::clock::ManualClock;
        const T0_MS: i64 = 1_796_061_600_000;
        let clock = Arc::new(ManualClock::new(0, T0_MS * 1000));
        let hub = Hub::with_clock("open", None, clock.clone());
        let mut changes = hub.changes.subscribe();

        hub.take(
            "chessclock/open/board/b1/state",
            br#"{"board":"b1","host":"pi"}"#,
        );
        let event: Value = serde_json::from_str(&changes.try_recv().unwrap()).unwrap();
        assert_eq!(event["received_ms"], T0_MS);
        assert_eq!(
            hub.known().boards()["b1"]["board"],
            "b1",
            "state before event"
        );
        // A board came: its number in the round (no pairings: its id's).
        let seats: Value = serde_json::from_str(&changes.try_recv().unwrap()).unwrap();
        assert_eq!(
            seats,
            json!({"type": "seats", "seats": {"b1": {"number": 1, "white": null,
                                                     "black": null}}})
        );

        clock.advance_us(2_500_000);
        hub.take("chessclock/open/host/pi/online", b"online");
        let event: Value = serde_json::from_str(&changes.try_recv().unwrap()).unwrap();
        assert_eq!(event["last_seen_ms"], T0_MS + 2_500);
        let known = hub.known();
        assert_eq!(known.latest["b1"].received_ms, T0_MS);
        assert_eq!(known.seen["pi"], T0_MS + 2_500);
        assert_eq!(hub.now_ms(), T0_MS + 2_500);
    }

    #[test]
    fn a_command_s_deadline_falls_before_the_hub_stops_waiting() {
        let now = 1_796_061_600_000;
        assert_eq!(command_deadline(now, Duration::from_secs(5)), now + 4_000);
        assert_eq!(command_deadline(now, Duration::from_millis(300)), now);
    }

    /// Not connected (no broker yet): refused at once, nothing waits.
    #[tokio::test]
    async fn without_the_broker_a_command_is_refused_at_once() {
        let hub = Hub::new("open");
        let (client, _eventloop) = AsyncClient::new(MqttOptions::new("t", "127.0.0.1", 1), 4);
        *hub.mqtt.lock().unwrap() = Some(client);
        let asked = std::time::Instant::now();
        let outcome = hub
            .command(
                "b1",
                json!({"id": "hub-1", "arbiter": "ann", "command": "pause"}),
                Duration::from_secs(5),
            )
            .await;
        assert!(
            matches!(&outcome, CommandOutcome::NoBroker(why) if why.contains("not connected")),
            "{outcome:?}"
        );
        assert!(asked.elapsed() < Duration::from_secs(1));
        assert!(hub.pending().is_empty());
    }

    /// Issue 29 item 7: the link is told first; when it breaks every
    /// online host turns `unknown`, last known alive when the link was
    /// last known good, and the pages are told once.
    #[test]
    fn a_lost_broker_makes_online_hosts_unknown_as_of_the_loss() {
        use chessclock_host::clock::ManualClock;
        const T0_MS: i64 = 1_796_061_600_000;
        let clock = Arc::new(ManualClock::new(0, T0_MS * 1000));
        let hub = Hub::with_clock("open", None, clock.clone());
        let first: Value = serde_json::from_str(&hub.everything()[0]).unwrap();
        assert_eq!(
            first,
            json!({"type": "link", "connected": false, "since_ms": T0_MS, "data_as_of_ms": null})
        );
        hub.link_up(T0_MS + 100);
        hub.take_message(
            "chessclock/open/host/pi1/online",
            b"online",
            true,
            T0_MS + 200,
        );
        hub.take_message(
            "chessclock/open/host/pi2/online",
            b"offline",
            true,
            T0_MS + 200,
        );
        assert_eq!(
            hub.known().seen.get("pi2"),
            None,
            "a retained offline tells no time"
        );
        hub.take_message(
            "chessclock/open/board/b1/state",
            br#"{"board":"b1","host":"pi1"}"#,
            true,
            T0_MS + 300,
        );
        let mut changes = hub.changes.subscribe();
        // The broker's pings went unanswered: known good at the last packet.
        hub.heard(T0_MS + 1_000);
        hub.link_down(T0_MS + 9_000, true);
        hub.link_down(T0_MS + 9_500, false);
        let told: Vec<Value> = std::iter::from_fn(|| changes.try_recv().ok())
            .map(|m| serde_json::from_str(&m).unwrap())
            .collect();
        assert_eq!(
            told,
            [
                json!({"type": "link", "connected": false, "since_ms": T0_MS + 9_000,
                       "data_as_of_ms": T0_MS + 1_000}),
                json!({"type": "host", "host": "pi1", "status": "unknown", "online": false,
                       "last_seen_ms": T0_MS + 1_000}),
                json!({"type": "board-host", "board": "b1", "status": "unknown",
                       "last_seen_ms": T0_MS + 1_000}),
            ],
            "once per outage"
        );
        assert!(!hub.connected());
        assert_eq!(hub.known().hosts["pi2"], "offline");
        let everything = hub.everything();
        let types: Vec<Value> = everything
            .iter()
            .rev()
            .take(2)
            .map(|m| serde_json::from_str::<Value>(m).unwrap()["type"].clone())
            .collect();
        assert_eq!(
            types,
            [json!("seats"), json!("board-host")],
            "{everything:?}"
        );
        // Back: the retained `offline` of a host that died meanwhile keeps
        // its last known alive; a live state is news of its host.
        hub.link_up(T0_MS + 20_000);
        hub.take_message(
            "chessclock/open/host/pi1/online",
            b"offline",
            true,
            T0_MS + 20_100,
        );
        assert_eq!(hub.known().seen["pi1"], T0_MS + 1_000);
        hub.take_message(
            "chessclock/open/board/b2/state",
            br#"{"board":"b2","host":"pi2"}"#,
            true,
            T0_MS + 20_200,
        );
        assert_eq!(
            hub.known().seen.get("pi2"),
            None,
            "a retained state tells no time"
        );
        hub.take_message(
            "chessclock/open/host/pi2/online",
            b"offline",
            false,
            T0_MS + 30_000,
        );
        assert_eq!(
            hub.known().seen["pi2"],
            T0_MS + 30_000,
            "a live offline: now"
        );
        // The broker closed the link: known good until the error.
        hub.link_down(T0_MS + 40_000, false);
        assert_eq!(hub.link().data_as_of_ms, Some(T0_MS + 40_000));
    }

    /// Issue 30 item 5: the pages hear of the round's numbers and players
    /// once when they change (a round loaded), not again for nothing.
    #[test]
    fn the_seats_are_told_when_the_round_changes_them() {
        let hub = Hub::new("open");
        hub.take("chessclock/open/board/b1/state", br#"{"board":"b1"}"#);
        let mut changes = hub.changes.subscribe();
        hub.refresh_seats();
        assert!(changes.try_recv().is_err(), "nothing changed");
        let pairings = crate::pairings::Pairings::parse("1,Alpha,Beta\n", 2).unwrap();
        hub.desk().set_pairings(pairings);
        hub.refresh_seats();
        let seats: Value = serde_json::from_str(&changes.try_recv().unwrap()).unwrap();
        assert_eq!(
            seats,
            json!({"type": "seats", "seats": {"b1": {"number": 1, "white": "Alpha",
                                                     "black": "Beta"}}})
        );
        assert!(hub.everything().iter().any(|m| m.contains("Alpha")));
    }

    #[test]
    fn the_hub_takes_its_halls_topics_only() {
        let hub = Hub::new("open");
        hub.take("chessclock/open/board/b1/state", br#"{"board":"b1"}"#);
        hub.take("chessclock/other/board/b2/state", br#"{"board":"b2"}"#);
        hub.take("chessclock/open/host/pi/online", b"offline");
        hub.take("chessclock/open/board/b3/state", b"not json");
        let everything = hub.everything();
        assert_eq!(everything.len(), 5, "the link, 3 and seats: {everything:?}");
        hub.take("chessclock/open/board/b3/state", b"");
        assert_eq!(hub.everything().len(), 4);
    }
}
