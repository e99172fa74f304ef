//! The hall: every board of this daemon on the event's MQTT broker
//! (`[hall]` in the config; off without it). The topics and payloads are
//! the hall's protocol, `chessclock_hall_proto::message`.
//!
//! One task on the main (control) runtime, never the timing thread, owns
//! the MQTT client ([`rumqttc`]); a second task polls the client's event
//! loop (connects, reconnects, reads) and a third carries the arbiters'
//! commands out, one at a time, in the order they came.
//!
//! Promises:
//! * the clock never waits for the broker: the hall listens to the same
//!   [`BoardEvent`] broadcast as the D-Bus signals and never blocks the
//!   runtime (a hall that falls behind the broadcast loses events, which it
//!   counts as dropped, and re-reads every board's state);
//! * every board's state is published retained on every change and again on
//!   every (re)connection; every other board event (a new kind included) is
//!   published on the board's event topic, QoS 1, after the state heard
//!   before it or with it: the runtime broadcasts a change's view before its
//!   events, so a subscriber that gets an event finds its change in the
//!   board's state already;
//! * while the broker is away, events and replies wait in a bounded buffer
//!   (`[hall] buffer`); beyond it the oldest are dropped, and how many is
//!   logged and published (`dropped`, on the host's event topic) on
//!   reconnect. States are never dropped: the latest of each board is kept.
//!   A message handed to the client in the moment the link breaks can still
//!   be lost (a clean session): its board's state is published again anyway;
//! * the host's `online` topic is retained `online` while connected, with
//!   `offline` as the last will (the broker publishes it when the host dies)
//!   and published cleanly on a clean stop;
//! * the command topics are subscribed again on every ConnAck (the client
//!   does not re-subscribe by itself);
//! * a command is carried out through the same control path as a D-Bus
//!   change, with the arbiter's name as the caller's name (so it is in the
//!   history with it), and answered on the board's reply topic; a malformed
//!   command gets an error reply. A request id seen again on the same board
//!   (QoS 1 may deliver twice, a broker may hand an old one over) gets the
//!   first reply again and is not carried out again, for as long as it
//!   could be ([`answered`]: per board, until its deadline, an hour without
//!   one); a retained command is never carried out, not even at its first
//!   delivery (it would be again at every reconnection: the subscription
//!   asks the broker for the retain flag as published); a command whose
//!   `deadline_ms` has passed by this daemon's wall clock when its turn
//!   comes is refused (`expired`, logged with how late it was) and not
//!   carried out. A `start-at` is held to D-Bus's rules ([`start`]): not
//!   in the past, and on a clock known to be NTP-synchronised unless
//!   forced. Who may
//!   command is the broker's to decide (its password file and ACL, made by
//!   `scripts/hall-credentials`): the daemon takes what its command topics
//!   carry;
//! * a board rebuilt at start-up after the daemon went down (its state's
//!   `state.restart`) gets one `restart` event on its event topic, QoS 1
//!   and buffered like the others, with how long the daemon was down;
//! * one message costs one message, never the link: the client tells the
//!   broker the largest packet it takes ([`client::MAX_PACKET`]; the broker
//!   drops a larger one for this client alone), a message above
//!   [`MAX_PAYLOAD`] that still comes is dropped unread, logged and
//!   counted (`oversize` on the host's event topic), and the daemon never
//!   publishes one above it: a `history` reply is cut into pages
//!   ([`chessclock_hall_proto::page`]), a state too large without its PGN
//!   goes without it, any other reply too large is an error reply
//!   (`too-large`).

mod answered;
mod start;

pub use start::NtpRule;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use chessclock_hall_proto::client::{self, client_options};
use chessclock_hall_proto::page::{history_page, MAX_PAYLOAD, PAGE_BYTES};
use rumqttc::v5::mqttbytes::v5::{Filter, LastWill, Packet};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, EventLoop};
use rumqttc::Outgoing;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::config::{check_topic_level, HallConfig};
use crate::control::{BoardEvent, BoardSnapshot, Caller, Command, ControlHandle, Reply};
use crate::runtime::time::TimeSource;

use chessclock_hall_proto::message::{
    self, parse_request, ClockMapping, EventPayload, HostEvent, HostEventPayload, ParsedCommand,
    ReplyPayload, StatePayload, Topics, SCHEMA,
};

/// Requests the MQTT client may hold before `try_publish` says it is full.
const CLIENT_CAPACITY: usize = 256;
/// Commands waiting to be carried out; more are answered `busy`.
const COMMAND_QUEUE: usize = 64;
/// The first wait before connecting again; doubled up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(4);
/// How long a stop waits for `offline` to be sent.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// This host's name: `[hall] host`, else the system's host name.
fn host_name(config: &HallConfig) -> String {
    if let Some(host) = &config.host {
        return host.clone();
    }
    let system = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let system = system.trim();
    match check_topic_level("host", system) {
        Ok(()) => system.to_owned(),
        Err(_) => "chessclockd".to_owned(),
    }
}

/// Reads and checks the files `[hall]` points to (credentials, CA) as
/// [`Hall::start`] will: what `chessclockd --check-config` runs.
pub fn check(config: &HallConfig) -> anyhow::Result<()> {
    chessclock_hall_proto::client::check_files(config.credentials.as_deref(), config.ca.as_deref())
}

/// The running hall connection.
pub struct Hall {
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Hall {
    /// Starts the hall for the boards of `handle` (inside a tokio runtime).
    /// Fails only on what the config points to (credentials, CA file: the
    /// same reading as [`check`]); the broker itself may be away: the hall
    /// connects when it can.
    /// It reads the time from `time`, the runtime's, so the states' clock
    /// mapping agrees with the boards' instants.
    /// `ntp`: whether a `start-at` needs the host's clock NTP-synchronised
    /// (`[daemon] require-ntp-for-scheduled-start`).
    pub fn start(
        config: &HallConfig,
        handle: ControlHandle,
        time: TimeSource,
        ntp: NtpRule,
    ) -> anyhow::Result<Hall> {
        let host = host_name(config);
        let topics = Topics::new(&config.name, &host);
        if config.keepalive_seconds < client::MIN_KEEPALIVE_SECONDS {
            tracing::warn!(
                asked = config.keepalive_seconds,
                used = client::MIN_KEEPALIVE_SECONDS,
                "hall: keepalive-seconds below the MQTT 5 client's least; the least used"
            );
        }
        let mut options = client_options(
            &config.broker,
            format!("chessclockd-{}-{host}", config.name),
            config.credentials.as_deref(),
            config.ca.as_deref(),
            config.keepalive_seconds,
        )?;
        options.set_last_will(LastWill::new(
            topics.online(),
            "offline",
            QoS::AtLeastOnce,
            true,
            None,
        ));
        let (client, eventloop) = AsyncClient::new(options, CLIENT_CAPACITY);
        let (net_tx, net_rx) = mpsc::channel(256);
        let poller = tokio::spawn(poll(eventloop, net_tx));
        let (commands_tx, commands_rx) = mpsc::channel(COMMAND_QUEUE);
        let (replies_tx, replies_rx) = mpsc::unbounded_channel();
        tokio::spawn(run_commands(
            handle.clone(),
            topics.clone(),
            commands_rx,
            replies_tx,
            time.clone(),
            ntp,
        ));
        let (stop, stop_rx) = oneshot::channel();
        let events = handle.events.subscribe();
        tracing::info!(broker = %config.broker, hall = %config.name, %host, "hall: publishing to the broker");
        let task = HallTask {
            states: BTreeMap::new(),
            views: BTreeMap::new(),
            unsent_states: BTreeSet::new(),
            queue: VecDeque::new(),
            capacity: config.buffer.max(1),
            dropped: 0,
            oversize: 0,
            seq: 0,
            connected: false,
            connections: 0,
            backlogged: false,
            warned: false,
            client,
            topics,
            host,
            handle,
            commands: commands_tx,
            time,
        };
        let task = tokio::spawn(task.run(events, net_rx, replies_rx, stop_rx, poller));
        Ok(Hall {
            stop: Some(stop),
            task,
        })
    }

    /// Publishes what is still queued and `offline`, and disconnects
    /// (waits at most a few seconds for a broker that is away).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(STOP_WAIT * 2, &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

impl Drop for Hall {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// What the client's event loop reports.
enum Net {
    Up,
    Down(String),
    Message {
        topic: String,
        payload: Vec<u8>,
        /// Published retained (at the subscription from the broker's
        /// store, or live: the subscription keeps the flag as published).
        retained: bool,
    },
    /// A message above [`MAX_PAYLOAD`]: dropped, its payload never read.
    Oversize {
        topic: String,
        bytes: usize,
    },
}

/// Polls the client's event loop: connects, reconnects (with a growing
/// pause), reads. Ends when the client disconnected cleanly or the hall
/// task is gone.
async fn poll(mut eventloop: EventLoop, net: mpsc::Sender<Net>) {
    let mut retry = FIRST_RETRY;
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                retry = FIRST_RETRY;
                if net.send(Net::Up).await.is_err() {
                    return;
                }
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => {
                let topic = String::from_utf8_lossy(&publish.topic).into_owned();
                let message = if publish.payload.len() > MAX_PAYLOAD {
                    Net::Oversize {
                        topic,
                        bytes: publish.payload.len(),
                    }
                } else {
                    Net::Message {
                        topic,
                        payload: publish.payload.to_vec(),
                        retained: publish.retain,
                    }
                };
                if net.send(message).await.is_err() {
                    return;
                }
            }
            Ok(Event::Outgoing(Outgoing::Disconnect)) => return,
            Ok(_) => {}
            Err(error) => {
                if net.send(Net::Down(error.to_string())).await.is_err() {
                    return;
                }
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(MAX_RETRY);
            }
        }
    }
}

/// Carries the commands out one at a time, in order, and hands their
/// replies back to the hall task.
async fn run_commands(
    handle: ControlHandle,
    topics: Topics,
    mut commands: mpsc::Receiver<(String, Vec<u8>)>,
    replies: mpsc::UnboundedSender<Message>,
    time: TimeSource,
    ntp: NtpRule,
) {
    // The changes carried out, by board and request id: QoS 1 may deliver
    // a command twice, and a press must not be made twice.
    let mut answered = answered::Answered::default();
    while let Some((board, payload)) = commands.recv().await {
        let reply = match parse_request(&payload) {
            Ok(parsed) => {
                // Read when the command's turn comes, not when it arrived:
                // one that waited past its deadline in the queue is late too.
                let now = answered::Now {
                    wall_ms: time.wall_us().div_euclid(1000),
                    mono_ms: time.monotonic_us().div_euclid(1000),
                };
                let read = matches!(
                    parsed.command,
                    Command::State | Command::History | Command::Snapshot | Command::Pgn
                );
                if let Some(reply) = answered.seen(&board, &parsed.id, now).filter(|_| !read) {
                    tracing::info!(
                        board,
                        id = parsed.id,
                        "hall: a command seen again; answered again, not carried out"
                    );
                    reply.clone()
                } else if let Some(reply) = parsed.expired(now.wall_ms) {
                    // Whoever sent it has stopped waiting (the hub answered
                    // its page already): carried out now it would act behind
                    // the arbiter's back.
                    tracing::warn!(
                        board,
                        arbiter = parsed.caller.name.as_deref().unwrap_or(""),
                        id = parsed.id,
                        command = ?parsed.command,
                        late_ms = now.wall_ms - parsed.deadline_ms.unwrap_or(now.wall_ms),
                        "hall: a command past its deadline; refused (expired), not carried out"
                    );
                    reply
                } else if let Some(words) =
                    answered::Answered::too_far_ahead(parsed.deadline_ms, now).filter(|_| !read)
                {
                    // Its id would have to be kept as long: refused.
                    ReplyPayload::error(Some(parsed.id), "invalid-argument", words)
                } else if !read && answered.full(&board, now) {
                    tracing::warn!(
                        board,
                        id = parsed.id,
                        "hall: too many commands to keep; busy"
                    );
                    ReplyPayload::error(
                        Some(parsed.id),
                        "busy",
                        format!(
                            "{} commands to this board are still kept against replays; \
                             try again shortly",
                            answered::PER_BOARD
                        ),
                    )
                } else {
                    let ParsedCommand {
                        id,
                        caller,
                        command,
                        deadline_ms,
                        page,
                    } = parsed;
                    tracing::info!(board, arbiter = caller.name.as_deref().unwrap_or(""), id,
                        command = ?command, "hall: command");
                    // A scheduled start as D-Bus takes one: not in the
                    // past, and only on a clock known to be right.
                    let answer = match start::refusal(&command, &ntp, &handle, time.wall_us()) {
                        Some(refused) => Err(refused),
                        None => handle.call(&board, command, caller).await,
                    };
                    let mut reply = ReplyPayload::from_answer(id.clone(), answer);
                    if let (Some(page), Some(result)) = (page, reply.result.as_mut()) {
                        history_page(result, page, PAGE_BYTES);
                    }
                    if !read {
                        answered.remember(&board, id, deadline_ms, now, reply.clone());
                    }
                    reply
                }
            }
            Err(reply) => {
                tracing::warn!(board, error = ?reply.error, "hall: refused a command");
                reply
            }
        };
        if let Some(message) = Message::reply(topics.reply(&board), reply) {
            if replies.send(message).is_err() {
                return;
            }
        }
    }
}

/// One message to publish.
#[derive(Clone, Debug)]
struct Message {
    topic: String,
    payload: Vec<u8>,
    qos: QoS,
    retain: bool,
}

impl Message {
    /// The message, unless its payload cannot be encoded or is larger
    /// than [`MAX_PAYLOAD`] (logged: the hall never publishes one).
    fn json(topic: String, qos: QoS, value: &impl serde::Serialize) -> Option<Message> {
        match serde_json::to_vec(value) {
            Ok(payload) if payload.len() > MAX_PAYLOAD => {
                tracing::error!(
                    topic,
                    bytes = payload.len(),
                    limit = MAX_PAYLOAD,
                    "hall: a message too large to publish; not published"
                );
                None
            }
            Ok(payload) => Some(Message {
                topic,
                payload,
                qos,
                retain: false,
            }),
            Err(error) => {
                tracing::error!(topic, %error, "hall: cannot encode a message");
                None
            }
        }
    }

    /// A reply; one too large to publish is answered `too-large` instead.
    fn reply(topic: String, reply: ReplyPayload) -> Option<Message> {
        let bytes = serde_json::to_vec(&reply).map_or(0, |text| text.len());
        if bytes <= MAX_PAYLOAD {
            return Message::json(topic, QoS::AtLeastOnce, &reply);
        }
        tracing::warn!(
            topic,
            bytes,
            "hall: a reply too large for the hall; answered too-large"
        );
        let refusal = ReplyPayload::error(
            reply.id,
            "too-large",
            format!(
                "the reply would be {bytes} bytes, more than the hall's {MAX_PAYLOAD}: \
                 read it over D-Bus (chessclockctl), or a history in pages (`from`, `limit`)"
            ),
        );
        Message::json(topic, QoS::AtLeastOnce, &refusal)
    }
}

/// The request id of a command payload, if it has a readable one.
fn request_id(payload: &[u8]) -> Option<String> {
    serde_json::from_slice::<serde_json::Value>(payload)
        .ok()
        .and_then(|v| v.get("id").and_then(|id| id.as_str()).map(str::to_owned))
        .filter(|id| id.len() <= message::MAX_NAME)
}

/// The daemon's monotonic and wall clocks at one instant, ms.
fn clock_mapping(time: &TimeSource) -> ClockMapping {
    ClockMapping {
        mono_ms: time.monotonic_us().div_euclid(1000),
        wall_ms: time.wall_us().div_euclid(1000),
    }
}

/// A board's `restart` event: the shape of [`EventPayload`], with the
/// event taken from the board's state view (no [`BoardEvent`] carries it).
#[derive(serde::Serialize)]
struct RestartPayload<'a> {
    schema: u32,
    host: &'a str,
    seq: u64,
    clock: ClockMapping,
    event: serde_json::Value,
}

/// The hall task's state.
struct HallTask {
    /// The latest state message of each board.
    states: BTreeMap<String, Message>,
    /// The latest `State()` view and live PGN read of each board.
    views: BTreeMap<String, (Option<serde_json::Value>, Option<String>)>,
    /// Boards whose latest state the client has not been handed.
    unsent_states: BTreeSet<String>,
    /// Events and replies not yet handed to the client, oldest first.
    queue: VecDeque<Message>,
    capacity: usize,
    /// Messages dropped since the last report.
    dropped: u64,
    /// Messages above [`MAX_PAYLOAD`] dropped on arrival, this run.
    oversize: u64,
    seq: u64,
    connected: bool,
    connections: u64,
    /// The client's queue was full: try again shortly.
    backlogged: bool,
    /// The first failure to connect was logged.
    warned: bool,
    client: AsyncClient,
    topics: Topics,
    host: String,
    handle: ControlHandle,
    commands: mpsc::Sender<(String, Vec<u8>)>,
    /// Where the clock mapping of each state is read.
    time: TimeSource,
}

impl HallTask {
    async fn run(
        mut self,
        mut events: broadcast::Receiver<BoardEvent>,
        mut net: mpsc::Receiver<Net>,
        mut replies: mpsc::UnboundedReceiver<Message>,
        mut stop: oneshot::Receiver<()>,
        mut poller: tokio::task::JoinHandle<()>,
    ) {
        // Every board's state from the start, before the first change.
        for board in &self.handle.boards.list() {
            self.refresh_state(board, None).await;
        }
        // A board rebuilt at boot after the daemon went down: a `restart`
        // event, once per run (its state keeps `state.restart`).
        for board in self.handle.boards.list() {
            self.restart_event(&board);
        }
        let mut events_open = true;
        let mut health = self.handle.health.subscribe();
        let mut host_health = self.handle.host.subscribe();
        loop {
            tokio::select! {
                biased;
                _ = &mut stop => break,
                Some(net) = net.recv() => self.network(net).await,
                Ok(()) = async {
                    tokio::select! {
                        changed = health.changed() => changed,
                        changed = host_health.changed() => changed,
                    }
                } => {
                    // The store's trouble saving or the host's health (a
                    // radio, the clock's synchronisation) changed: every
                    // board's state says so.
                    for board in &self.handle.boards.list() {
                        self.refresh_state(board, None).await;
                    }
                }
                event = events.recv(), if events_open => match event {
                    Ok(event) => {
                        let mut batch = vec![event];
                        while batch.len() < 256 {
                            match events.try_recv() {
                                Ok(event) => batch.push(event),
                                Err(_) => break,
                            }
                        }
                        self.board_events(batch).await;
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "hall: fell behind the board events; re-reading every board");
                        self.dropped += missed;
                        for board in &self.handle.boards.list() {
                            self.refresh_state(board, None).await;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => events_open = false,
                },
                Some(reply) = replies.recv() => self.enqueue(reply),
                _ = tokio::time::sleep(Duration::from_millis(20)), if self.backlogged => {}
                // Nothing left to listen to (cannot happen while the hall
                // holds its own senders): stop rather than spin.
                else => break,
            }
            self.flush();
        }
        // The runtime stopped first: its last events are still here.
        let mut last = Vec::new();
        while let Ok(event) = events.try_recv() {
            last.push(event);
        }
        self.board_events(last).await;
        self.flush();
        if self.connected {
            let offline =
                self.client
                    .publish(self.topics.online(), QoS::AtLeastOnce, true, "offline");
            let sent = tokio::time::timeout(STOP_WAIT, async {
                offline.await?;
                self.client.disconnect().await
            })
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                tracing::warn!("hall: could not publish `offline` on the way out");
            }
            if tokio::time::timeout(STOP_WAIT, &mut poller).await.is_err() {
                tracing::warn!("hall: the broker did not take the disconnect in time");
            }
        }
        poller.abort();
        tracing::info!("hall: stopped");
    }

    /// Reads the board's State view and makes its state message (the given
    /// snapshot, or a fresh one).
    async fn refresh_state(&mut self, board: &str, snapshot: Option<BoardSnapshot>) {
        let snapshot = match snapshot {
            Some(snapshot) => snapshot,
            None => match self
                .handle
                .call(board, Command::Snapshot, Caller::DAEMON)
                .await
            {
                Ok(Reply::Snapshot(snapshot)) => snapshot,
                _ => return,
            },
        };
        // A view that cannot be read (the runtime stopping) keeps the last
        // one read: a stale view beats none in a retained message.
        let (last_state, last_pgn) = self.views.remove(board).unwrap_or_default();
        let state = match self
            .handle
            .call(board, Command::State, Caller::DAEMON)
            .await
        {
            Ok(Reply::Json(text)) => serde_json::from_str(&text).ok(),
            Ok(_) => None,
            Err(_) => last_state,
        };
        // As D-Bus's `State()` has it: the state store's health, with its
        // live trouble saving (a full disk shows on the hall's page), and
        // the host's (radios, clock synchronisation).
        let state = state.map(|mut state: serde_json::Value| {
            if let Some(map) = state.as_object_mut() {
                let health = serde_json::to_value(self.handle.health.get().as_ref())
                    .unwrap_or(serde_json::Value::Null);
                map.insert("state_health".into(), health);
                let host = serde_json::to_value(self.handle.host.get().as_ref())
                    .unwrap_or(serde_json::Value::Null);
                map.insert("host_health".into(), host);
            }
            state
        });
        let pgn = match self.handle.call(board, Command::Pgn, Caller::DAEMON).await {
            Ok(Reply::Text(text)) => Some(text),
            // The board core renders a PGN for every board (without an
            // e-board, the clock's record as comments); the runtime has none
            // only before the board's first one reached it: none.
            Err(crate::control::ControlError::InvalidState(_)) | Ok(_) => None,
            Err(_) => last_pgn,
        };
        self.views
            .insert(board.to_owned(), (state.clone(), pgn.clone()));
        let clock = clock_mapping(&self.time);
        let mut payload = StatePayload {
            pgn,
            schema: SCHEMA,
            hall: self.topics.hall().to_owned(),
            host: self.host.clone(),
            board: board.to_owned(),
            snapshot_wall_ms: clock.wall_of(snapshot.snapshot_ms),
            snapshot,
            clock,
            state,
        };
        // A game long enough that its state with the PGN is beyond what the
        // hall carries goes without the PGN (`Pgn()` over D-Bus has it).
        let bytes = serde_json::to_vec(&payload).map_or(0, |text| text.len());
        if bytes > MAX_PAYLOAD && payload.pgn.is_some() {
            tracing::warn!(
                board,
                bytes,
                limit = MAX_PAYLOAD,
                "hall: the state is too large with its PGN; published without it"
            );
            payload.pgn = None;
        }
        if let Some(mut message) =
            Message::json(self.topics.state(board), QoS::AtLeastOnce, &payload)
        {
            message.retain = true;
            self.states.insert(board.to_owned(), message);
            self.unsent_states.insert(board.to_owned());
        }
    }

    /// Queues the board's `restart` event if its state view (read at
    /// start-up) says it was rebuilt after the daemon went down: the
    /// view's `restart` fields (`down_ms`, `same_boot`, `was_running`,
    /// `paused_at_game_ms`) beside `kind` and `board`.
    fn restart_event(&mut self, board: &str) {
        let restart = match self.views.get(board) {
            Some((Some(state), _)) => match state.get("restart") {
                Some(serde_json::Value::Object(restart)) => restart.clone(),
                _ => return,
            },
            _ => return,
        };
        let mut event = serde_json::Map::new();
        event.insert("kind".into(), "restart".into());
        event.insert("board".into(), board.into());
        event.extend(restart);
        self.seq += 1;
        let payload = RestartPayload {
            schema: SCHEMA,
            host: &self.host,
            seq: self.seq,
            clock: clock_mapping(&self.time),
            event: serde_json::Value::Object(event),
        };
        tracing::info!(
            board,
            "hall: the board was rebuilt after a restart; publishing `restart`"
        );
        if let Some(message) = Message::json(self.topics.event(board), QoS::AtLeastOnce, &payload) {
            self.enqueue(message);
        }
    }

    /// Board events in order: the latest state of each board, the others
    /// on their event topics.
    async fn board_events(&mut self, batch: Vec<BoardEvent>) {
        let mut snapshots: BTreeMap<String, BoardSnapshot> = BTreeMap::new();
        for event in batch {
            match event {
                BoardEvent::StateChanged(snapshot) => {
                    snapshots.insert(snapshot.board.clone(), snapshot);
                }
                other => {
                    let board = message::event_board(&other).to_owned();
                    self.seq += 1;
                    let payload = EventPayload {
                        schema: SCHEMA,
                        host: &self.host,
                        seq: self.seq,
                        clock: clock_mapping(&self.time),
                        event: &other,
                    };
                    if let Some(message) =
                        Message::json(self.topics.event(&board), QoS::AtLeastOnce, &payload)
                    {
                        self.enqueue(message);
                    }
                }
            }
        }
        for (board, snapshot) in snapshots {
            self.refresh_state(&board, Some(snapshot)).await;
        }
    }

    /// Queues an event or a reply; a full queue drops its oldest.
    fn enqueue(&mut self, message: Message) {
        while self.queue.len() >= self.capacity {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(message);
    }

    fn host_event(&mut self, event: HostEvent) -> Option<Message> {
        self.seq += 1;
        let payload = HostEventPayload {
            schema: SCHEMA,
            host: self.host.clone(),
            seq: self.seq,
            clock: clock_mapping(&self.time),
            event,
        };
        Message::json(self.topics.host_event(), QoS::AtLeastOnce, &payload)
    }

    async fn network(&mut self, net: Net) {
        match net {
            Net::Up => {
                self.connected = true;
                self.backlogged = false;
                self.connections += 1;
                let reconnect = self.connections > 1;
                tracing::info!(reconnect, "hall: connected to the broker");
                // The retain flag as published: a retained command is
                // refused at its first, live, delivery too.
                let subscriptions: Vec<Filter> = self
                    .handle
                    .boards
                    .list()
                    .iter()
                    .map(|board| Filter {
                        preserve_retain: true,
                        ..Filter::new(self.topics.command(board), QoS::AtLeastOnce)
                    })
                    .collect();
                if !subscriptions.is_empty() {
                    if let Err(error) = self.client.subscribe_many(subscriptions).await {
                        tracing::error!(%error, "hall: cannot subscribe to the command topics");
                    }
                }
                let online = Message {
                    topic: self.topics.online(),
                    payload: b"online".to_vec(),
                    qos: QoS::AtLeastOnce,
                    retain: true,
                };
                // `online` first: the client's queue is empty at a ConnAck.
                let mut first = Vec::new();
                if !self.try_publish(online.clone()) {
                    first.push(online);
                }
                first.extend(self.host_event(HostEvent::Connected { reconnect }));
                if self.dropped > 0 {
                    tracing::warn!(
                        dropped = self.dropped,
                        "hall: messages were dropped while the broker was away"
                    );
                    let messages = self.dropped;
                    first.extend(self.host_event(HostEvent::Dropped { messages }));
                    self.dropped = 0;
                }
                for message in first.into_iter().rev() {
                    self.queue.push_front(message);
                }
                // Every board's state again: the broker may have lost it.
                self.unsent_states = self.states.keys().cloned().collect();
            }
            Net::Down(reason) => {
                if self.connections == 0 && !self.warned {
                    self.warned = true;
                    tracing::warn!(%reason, "hall: cannot reach the broker yet; buffering \
                        (under systemd the shipped unit keeps chessclockd off the network: \
                        README \"Hall (MQTT)\" has the drop-in that lets it reach the broker)");
                } else if self.connected {
                    tracing::warn!(%reason, "hall: the broker is away; buffering");
                } else {
                    tracing::debug!(%reason, "hall: still no broker");
                }
                self.connected = false;
            }
            Net::Message {
                topic,
                payload,
                retained,
            } => {
                let Some(board) = self.topics.command_board(&topic).map(str::to_owned) else {
                    tracing::debug!(topic, "hall: a message on a topic not ours");
                    return;
                };
                if retained {
                    // It would be carried out again at every reconnection.
                    tracing::warn!(board, "hall: a retained command; not carried out");
                    let reply = ReplyPayload::error(
                        request_id(&payload),
                        "retained",
                        "a retained command is not carried out: publish commands without retain",
                    );
                    if let Some(message) = Message::reply(self.topics.reply(&board), reply) {
                        self.enqueue(message);
                    }
                    return;
                }
                if let Err(mpsc::error::TrySendError::Full((board, payload))) =
                    self.commands.try_send((board, payload))
                {
                    let reply = ReplyPayload::error(
                        request_id(&payload),
                        "busy",
                        format!("{COMMAND_QUEUE} commands are waiting already; try again"),
                    );
                    if let Some(message) = Message::reply(self.topics.reply(&board), reply) {
                        self.enqueue(message);
                    }
                }
            }
            Net::Oversize { topic, bytes } => {
                self.oversize += 1;
                tracing::warn!(
                    topic,
                    bytes,
                    limit = MAX_PAYLOAD,
                    dropped = self.oversize,
                    "hall: a message larger than the hall takes; dropped unread"
                );
                let event = HostEvent::Oversize {
                    topic,
                    bytes,
                    messages: self.oversize,
                };
                if let Some(message) = self.host_event(event) {
                    self.enqueue(message);
                }
            }
        }
    }

    /// Hands the client what it can take: the unsent states, then the queue.
    fn flush(&mut self) {
        if !self.connected {
            return;
        }
        while let Some(board) = self.unsent_states.first().cloned() {
            let Some(message) = self.states.get(&board) else {
                self.unsent_states.remove(&board);
                continue;
            };
            if !self.try_publish(message.clone()) {
                self.backlogged = true;
                return;
            }
            self.unsent_states.remove(&board);
        }
        while let Some(message) = self.queue.front() {
            if !self.try_publish(message.clone()) {
                self.backlogged = true;
                return;
            }
            self.queue.pop_front();
        }
        self.backlogged = false;
    }

    fn try_publish(&self, message: Message) -> bool {
        self.client
            .try_publish(message.topic, message.qos, message.retain, message.payload)
            .is_ok()
    }
}
