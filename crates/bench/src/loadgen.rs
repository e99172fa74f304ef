//! The hall's load generator and page readers for the scale bench
//! ([`super::scale`], issue 30 item 7).
//!
//! [`Generator`]: fake hosts, each its own MQTT connection to the bench's
//! broker with its retained `online` topic (its last will `offline`), as a
//! daemon's host; each publishes its boards' states (retained, QoS 1, the
//! shape of a real daemon's state payload taken from one: see
//! [`FakeBoard`]) and, for every move, the `pressed` event that goes with
//! it (QoS 1), round robin over all boards at a rate that can change while
//! it runs. It counts what it handed to the broker (a publish written to
//! the connection), what the clients refused (their queue full) and the
//! states' sizes; it never waits on the broker (a generator that falls
//! behind shows as a lower rate, which the report gives).
//!
//! [`read_events`]: a reader of the hub's `/events` as a hall screen, that
//! reconnects when the hub ends its stream (a slow reader is dropped by the
//! hub, as a page is) and counts the reconnections.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use rumqttc::{AsyncClient, Event, Incoming, LastWill, MqttOptions, Outgoing, QoS};
use serde_json::{json, Value};

use super::hall::{HALL, SCREEN_TOKEN};
use chessclock_core::contract::BoardEvent;
use chessclock_core::engine::Side;
use chessclock_host::clock::monotonic_now_us;

/// The largest state a fake board publishes: its game starts again (its
/// PGN shortened) before it grows past this (bytes). A real state is 2 to
/// 4 KB in the middle of a game (the PGN grows with every press).
pub const MAX_STATE_BYTES: usize = 4096;

/// One fake board: its payload (a real daemon's, renamed) and its game.
pub struct FakeBoard {
    id: String,
    /// The number its id ends in (its pairing board's).
    number: u32,
    host: usize,
    payload: Value,
    /// The PGN's tags and the empty line after them, then one comment per
    /// press, as a daemon without an electronic board writes it.
    pgn_base: String,
    pgn: String,
    /// The payload's bytes besides its PGN's.
    overhead: usize,
    /// Presses so far. It only grows: when the PGN starts again its first
    /// comment goes on numbering from here, so the last comment of any
    /// text of this board (a lichess push's) tells which state it is
    /// ([`super::lichess::last_ply`]).
    moves: u32,
    seq: u64,
}

impl FakeBoard {
    /// Board `id` on fake host `host` from `template`, a real daemon's
    /// state payload, `moves` presses into its game.
    pub fn new(template: &Value, id: &str, host: usize, moves: u32) -> FakeBoard {
        let mut payload = template.clone();
        payload["board"] = json!(id);
        payload["host"] = json!(host_name(host));
        payload["snapshot"]["board"] = json!(id);
        payload["snapshot"]["started"] = json!(true);
        // The tags only (the template's movetext, if any, left out), and
        // the empty line that ends them.
        let text = template["pgn"].as_str().unwrap_or("[Event \"?\"]\n\n*\n");
        let tags = text.split("\n\n").next().unwrap_or_default().trim_end();
        let pgn_base = format!("{tags}\n\n");
        // Without its PGN, plus what escaping the tags adds.
        payload["pgn"] = json!("");
        let overhead = payload.to_string().len() + json!(pgn_base).to_string().len()
            - pgn_base.len()
            + "*\\n".len();
        let mut board = FakeBoard {
            overhead,
            id: id.to_owned(),
            number: id_number(id),
            host,
            payload,
            pgn: pgn_base.clone(),
            pgn_base,
            moves: 0,
            seq: 0,
        };
        for _ in 0..moves {
            board.press();
        }
        board
    }

    /// One press: the game moves on (and its PGN starts again, numbering
    /// on, before the state grows past [`MAX_STATE_BYTES`]).
    fn press(&mut self) {
        // A press adds under 60 bytes; room for the numbers that grow.
        if self.overhead + self.pgn.len() + 120 > MAX_STATE_BYTES {
            self.pgn.clone_from(&self.pgn_base);
        }
        self.moves += 1;
        let n = self.moves;
        let left_s = 5400 - i64::from(n) * 37 % 5400;
        self.pgn.push_str(&format!(
            "{{{}{} [%clk {}:{:02}:{:02}] [%emt 0:00:{:02}]}} ",
            n.div_ceil(2),
            if n % 2 == 1 { "." } else { "..." },
            left_s / 3600,
            left_s / 60 % 60,
            left_s % 60,
            n % 60,
        ));
    }

    fn side(&self) -> Side {
        if self.moves % 2 == 1 {
            Side::Black
        } else {
            Side::White
        }
    }

    /// The state payload now (serialised).
    fn state(&mut self, mono_ms: i64, wall_ms: i64) -> Vec<u8> {
        let moves = i64::from(self.moves);
        let running = json!(self.side());
        let snapshot = &mut self.payload["snapshot"];
        snapshot["snapshot_ms"] = json!(mono_ms);
        snapshot["white_moves"] = json!(self.moves.div_ceil(2));
        snapshot["black_moves"] = json!(self.moves / 2);
        snapshot["white_remaining_ms"] = json!(5_400_000 - moves * 18_500 % 5_400_000);
        snapshot["black_remaining_ms"] = json!(5_400_000 - moves * 18_300 % 5_400_000);
        snapshot["running"] = running;
        self.payload["snapshot_wall_ms"] = json!(wall_ms);
        self.payload["clock"] = json!({"mono_ms": mono_ms, "wall_ms": wall_ms});
        self.payload["pgn"] = json!(format!("{}*\n", self.pgn));
        serde_json::to_vec(&self.payload).unwrap_or_default()
    }

    /// The `pressed` event of the last press (an `EventPayload`).
    fn event(&mut self, mono_ms: i64, wall_ms: i64) -> Vec<u8> {
        self.seq += 1;
        let event = BoardEvent::Pressed {
            board: self.id.clone(),
            side: if self.moves % 2 == 1 {
                Side::White
            } else {
                Side::Black
            },
            move_number: self.moves.div_ceil(2),
            used_ms: 18_400,
        };
        serde_json::to_vec(
            &json!({"schema": 1, "host": host_name(self.host), "seq": self.seq,
                                   "clock": {"mono_ms": mono_ms, "wall_ms": wall_ms},
                                   "event": event}),
        )
        .unwrap_or_default()
    }
}

/// Fake host `i`'s name.
pub fn host_name(i: usize) -> String {
    format!("h{i:03}")
}

/// The id of fake board number `n` (the generator's boards are numbered
/// from 1, `f0001`..., so that each is pairing board `n`).
pub fn board_name(n: usize) -> String {
    format!("f{n:04}")
}

/// The number a board id ends in (`f0007` -> 7; 0 without one), as the
/// hub reads it.
pub fn id_number(id: &str) -> u32 {
    let digits = id.len() - id.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    id[id.len() - digits..].parse().unwrap_or(0)
}

/// A state the generator handed to the broker's connection: board number
/// (`f0007` is 7), the presses it counts, and when (CLOCK_MONOTONIC µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Publication {
    pub board: u32,
    pub moves: u32,
    pub at_us: i64,
}

/// What the generator has done so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Publishes written to the broker's connection (states, events and
    /// `online`s).
    pub sent: u64,
    /// Publishes a host's client refused (its queue was full).
    pub refused: u64,
    /// States made, and their bytes, smallest and largest.
    pub states: u64,
    pub state_bytes: u64,
    pub state_bytes_min: u64,
    pub state_bytes_max: u64,
}

#[derive(Default)]
struct Shared {
    /// Messages per second asked for (f64 bits).
    rate: AtomicU64,
    /// Moves to send at once, besides the rate.
    burst: AtomicU64,
    stop: AtomicBool,
    connected: AtomicUsize,
    sent: AtomicU64,
    refused: AtomicU64,
    states: AtomicU64,
    state_bytes: AtomicU64,
    state_bytes_min: AtomicU64,
    state_bytes_max: AtomicU64,
    /// Every state handed to a connection, while `recording`.
    recording: AtomicBool,
    published: Mutex<Vec<Publication>>,
}

/// The fake hosts and their boards, publishing from a runtime of their own.
pub struct Generator {
    rt: tokio::runtime::Runtime,
    shared: Arc<Shared>,
    hosts: usize,
}

impl Generator {
    /// Connects `hosts` fake hosts to the broker at `port`, `boards` boards
    /// spread over them, each board's first state built from `template`,
    /// and waits (up to 30 s) until every host is connected. Nothing is
    /// published but their `online` until [`Generator::publish_all`].
    pub fn start(
        port: u16,
        hosts: usize,
        boards: usize,
        template: &Value,
    ) -> anyhow::Result<Generator> {
        if hosts == 0 || boards == 0 {
            bail!("the generator needs at least one host and one board");
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("loadgen")
            .enable_all()
            .build()?;
        let shared = Arc::new(Shared {
            state_bytes_min: AtomicU64::new(u64::MAX),
            ..Shared::default()
        });
        let mut clients = Vec::new();
        for h in 0..hosts {
            let host = host_name(h);
            let mut options = MqttOptions::new(format!("scale-{host}"), "127.0.0.1", port);
            let online = format!("chessclock/{HALL}/host/{host}/online");
            options
                .set_keep_alive(Duration::from_secs(10))
                .set_max_packet_size(1 << 16, 1 << 16)
                .set_inflight(200)
                .set_last_will(LastWill::new(&online, "offline", QoS::AtLeastOnce, true));
            let entered = rt.enter();
            let (client, mut eventloop) = AsyncClient::new(options, 4096);
            drop(entered);
            let shared = shared.clone();
            let announcer = client.clone();
            rt.spawn(async move {
                while !shared.stop.load(Ordering::Relaxed) {
                    match eventloop.poll().await {
                        Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                            let _ = announcer.try_publish(
                                online.clone(),
                                QoS::AtLeastOnce,
                                true,
                                "online",
                            );
                            shared.connected.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(Event::Outgoing(Outgoing::Publish(_))) => {
                            shared.sent.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(_) => {}
                        Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                    }
                }
            });
            clients.push(client);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while shared.connected.load(Ordering::Relaxed) < hosts {
            if Instant::now() > deadline {
                bail!(
                    "only {} of {hosts} fake hosts connected within 30 s",
                    shared.connected.load(Ordering::Relaxed)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Boards round robin over the hosts; games at every stage.
        let fakes: Vec<FakeBoard> = (0..boards)
            .map(|b| FakeBoard::new(template, &board_name(b + 1), b % hosts, (b * 7 % 60) as u32))
            .collect();
        let task_shared = shared.clone();
        rt.spawn(generate(task_shared, clients, fakes));
        Ok(Generator { rt, shared, hosts })
    }

    /// Sets the rate (messages per second: a state and its event are two).
    pub fn set_rate(&self, messages_per_second: f64) {
        self.shared
            .rate
            .store(messages_per_second.max(0.0).to_bits(), Ordering::Relaxed);
    }

    /// Publishes every board's state once, at once (a hall coming up):
    /// `boards` moves sent as soon as the generator wakes.
    pub fn publish_all(&self, boards: usize) {
        self.shared
            .burst
            .fetch_add(boards as u64, Ordering::Relaxed);
    }

    pub fn counts(&self) -> Counts {
        let s = &self.shared;
        Counts {
            sent: s.sent.load(Ordering::Relaxed),
            refused: s.refused.load(Ordering::Relaxed),
            states: s.states.load(Ordering::Relaxed),
            state_bytes: s.state_bytes.load(Ordering::Relaxed),
            state_bytes_min: s.state_bytes_min.load(Ordering::Relaxed),
            state_bytes_max: s.state_bytes_max.load(Ordering::Relaxed),
        }
    }

    /// From now on, keeps every state handed to a connection (its board,
    /// presses and instant) for [`Generator::publications`].
    pub fn record_publications(&self) {
        self.shared.recording.store(true, Ordering::Relaxed);
    }

    /// The states kept so far, in the order published.
    pub fn publications(&self) -> Vec<Publication> {
        self.shared
            .published
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn hosts(&self) -> usize {
        self.hosts
    }

    /// Stops publishing and drops the connections (the broker then
    /// publishes each host's last will).
    pub fn stop(self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.rt.shutdown_timeout(Duration::from_secs(2));
    }
}

/// Publishes moves round robin over `boards` at the shared rate, from the
/// time elapsed (a late wake-up sends what fell due meanwhile).
async fn generate(shared: Arc<Shared>, clients: Vec<AsyncClient>, mut boards: Vec<FakeBoard>) {
    let mut last = Instant::now();
    let mut due = 0.0f64;
    let mut next = 0usize;
    while !shared.stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let now = Instant::now();
        let rate = f64::from_bits(shared.rate.load(Ordering::Relaxed));
        due += rate / 2.0 * (now - last).as_secs_f64();
        last = now;
        if rate == 0.0 {
            due = 0.0;
        }
        due += shared.burst.swap(0, Ordering::Relaxed) as f64;
        let mono_ms = monotonic_now_us() / 1000;
        let wall_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let recording = shared.recording.load(Ordering::Relaxed);
        let mut published = Vec::new();
        while due >= 1.0 {
            due -= 1.0;
            let count = boards.len();
            let board = &mut boards[next];
            next = (next + 1) % count;
            board.press();
            let state = board.state(mono_ms, wall_ms);
            let len = state.len() as u64;
            shared.states.fetch_add(1, Ordering::Relaxed);
            shared.state_bytes.fetch_add(len, Ordering::Relaxed);
            shared.state_bytes_min.fetch_min(len, Ordering::Relaxed);
            shared.state_bytes_max.fetch_max(len, Ordering::Relaxed);
            let event = board.event(mono_ms, wall_ms);
            let client = &clients[board.host];
            for (leaf, payload, retain) in [("state", state, true), ("event", event, false)] {
                let topic = format!("chessclock/{HALL}/board/{}/{leaf}", board.id);
                if client
                    .try_publish(topic, QoS::AtLeastOnce, retain, payload)
                    .is_err()
                {
                    shared.refused.fetch_add(1, Ordering::Relaxed);
                } else if recording && retain {
                    published.push(Publication {
                        board: board.number,
                        moves: board.moves,
                        at_us: monotonic_now_us(),
                    });
                }
            }
        }
        if !published.is_empty() {
            shared
                .published
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(published);
        }
    }
}

/// What the readers of `/events` saw.
#[derive(Default)]
pub struct StreamCounts {
    pub messages: AtomicU64,
    pub bytes: AtomicU64,
    /// Streams the hub ended (a reader that fell behind), reconnected.
    pub reconnects: AtomicU64,
    /// Boards whose state the stream carried (only while `collect_boards`).
    pub boards: Mutex<HashSet<String>>,
    pub collect_boards: AtomicBool,
}

/// The board a `/events` state message is about, without parsing it: its
/// first `"board":"` (the message's own; the payload inside comes later in
/// either key order). `None` for messages that are not states.
pub fn state_board(data: &str) -> Option<&str> {
    if !data.contains("\"received_ms\":") {
        return None;
    }
    let start = data.find("\"board\":\"")? + "\"board\":\"".len();
    let len = data[start..].find('"')?;
    Some(&data[start..start + len])
}

/// Reads the hub's `/events` at `port` as a hall screen, handing every
/// message's data to `take` with the instant it was read (CLOCK_MONOTONIC
/// µs), reconnecting when the hub ends the stream, until `stop`. Returns
/// an error only when the hub refuses the stream or cannot be reached.
pub fn read_events(
    port: u16,
    stop: &AtomicBool,
    counts: &StreamCounts,
    take: &mut dyn FnMut(&str, i64),
) -> anyhow::Result<()> {
    while !stop.load(Ordering::Relaxed) {
        let mut stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.write_all(
            format!(
                "GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {SCREEN_TOKEN}\r\n\
                 Accept: text/event-stream\r\n\r\n"
            )
            .as_bytes(),
        )?;
        let mut reader = BufReader::with_capacity(1 << 16, stream);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if !line.contains(" 200") {
            return Err(anyhow!("the hub refused /events: {}", line.trim()));
        }
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let at_us = monotonic_now_us();
                    counts.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    let Some(data) = line.strip_prefix("data:") else {
                        continue;
                    };
                    counts.messages.fetch_add(1, Ordering::Relaxed);
                    let data = data.trim();
                    if counts.collect_boards.load(Ordering::Relaxed) {
                        if let Some(board) = state_board(data) {
                            let mut boards = counts
                                .boards
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            if !boards.contains(board) {
                                boards.insert(board.to_owned());
                            }
                        }
                    }
                    take(data, at_us);
                }
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
        if !stop.load(Ordering::Relaxed) {
            counts.reconnects.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn template() -> Value {
        json!({"schema": 1, "hall": "bench", "host": "d0", "board": "d0_b0",
               "snapshot": {"board": "d0_b0", "control": "600", "snapshot_ms": 1,
                            "started": false, "running": null, "paused": false,
                            "white_remaining_ms": 600000, "black_remaining_ms": 600000,
                            "white_moves": 0, "black_moves": 0, "white_stage": 0,
                            "black_stage": 0, "flags": [], "devices": [],
                            "arbiter_called": false},
               "snapshot_wall_ms": 2, "clock": {"mono_ms": 1, "wall_ms": 2},
               "state": {"result": null}, "pgn": "[Event \"x\"]\n[Round \"1.1\"]\n\n*\n"})
    }

    #[test]
    fn a_fake_board_keeps_the_real_shape_and_stays_under_its_size() {
        let mut board = FakeBoard::new(&template(), "f0001", 3, 10);
        let state: Value = serde_json::from_slice(&board.state(5, 6)).unwrap();
        assert_eq!(state["board"], "f0001");
        assert_eq!(state["host"], "h003");
        assert_eq!(state["snapshot"]["white_moves"], 5);
        assert_eq!(state["snapshot"]["black_moves"], 5);
        assert_eq!(state["clock"]["wall_ms"], 6);
        assert!(state["pgn"].as_str().unwrap().starts_with("[Event \"x\"]"));
        for _ in 0..500 {
            board.press();
            assert!(board.state(7, 8).len() <= MAX_STATE_BYTES);
        }
        let event: Value = serde_json::from_slice(&board.event(7, 8)).unwrap();
        assert_eq!(event["event"]["kind"], "pressed");
        assert_eq!(event["event"]["board"], "f0001");
    }

    #[test]
    fn a_fake_board_s_pgn_numbers_on_when_its_game_starts_again() {
        let mut board = FakeBoard::new(&template(), "f0012", 0, 0);
        assert_eq!(board.number, 12);
        let mut restarts = 0;
        let mut before = 0;
        for press in 1..=300u32 {
            board.press();
            let state: Value = serde_json::from_slice(&board.state(1, 2)).unwrap();
            let pgn = state["pgn"].as_str().unwrap();
            // The tags, an empty line, the presses' comments, the result.
            let (tags, movetext) = pgn.split_once("\n\n").unwrap();
            assert_eq!(tags, "[Event \"x\"]\n[Round \"1.1\"]");
            assert!(movetext.ends_with("} *\n"), "{movetext}");
            // The last comment is this press, whatever was cut before it.
            assert_eq!(crate::lichess::last_ply(movetext), Some(press));
            let comments = movetext.matches('{').count();
            if comments < before {
                restarts += 1;
            }
            before = comments;
        }
        assert!(restarts > 0, "the game started again within 300 presses");
    }

    #[test]
    fn a_state_s_board_is_found_without_parsing() {
        assert_eq!(
            state_board(
                r#"{"board":"f0001","payload":{"board":"x"},"received_ms":1,"type":"state"}"#
            ),
            Some("f0001")
        );
        assert_eq!(
            state_board(
                r#"{"board":"f0001","last_seen_ms":1,"status":"online","type":"board-host"}"#
            ),
            None
        );
    }
}
