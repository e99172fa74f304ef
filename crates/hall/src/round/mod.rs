//! The round on the hub: its PGN for a broadcast (served at `/round.pgn`
//! live, at `/public/round.pgn` behind the broadcast delay, and pushed to
//! lichess broadcast rounds behind it too), the round's pairings put on
//! the boards, and its results for the pairing programs.
//!
//! HTTP routes (merged into the hub's):
//! * `/round.pgn`: every board's game ([`round_games`]); `/public/round.pgn`
//!   the round as the public sees it ([`public_games`]); each with
//!   `?boards=A-B`, `ETag` and `Last-Modified` (a poller may send
//!   `If-None-Match`: 304 while its text has not changed; see `public.rs`);
//! * `/broadcast.json`: the round, its pairings and the lichess push's
//!   status ([`PushStatus`]);
//! * `/results.json`, `/results.trf` (`.trf16`), `/results.trf26`,
//!   `/results.res`, `/results.csv`, `/bulletin.pgn`, `/event.pgn` and
//!   every round's `/rounds/N/...`: the round's results (from the boards'
//!   states: the e-board's result or the arbiter's `set-result`), each
//!   reconciled with the boards' own records (see `exports.rs` and
//!   [`super::results`]).
//!
//! Promises:
//! * the PGN's clock tags are the board's state as published: `WhiteClock`
//!   and `BlackClock` are the times of the state's snapshot and
//!   `ReferenceTime` its wall instant (`W/` or `B/` before it while that
//!   clock runs, as DGT LiveChess writes it; nothing when no clock runs:
//!   not started, paused, a flag fallen, a result). A state published when
//!   time is added (a stage's bonus at its last move, a correction) changes
//!   them at once; between two states the PGN does not change;
//! * the public PGN and the push are made from the public feed
//!   ([`RoundSource::public_boards`]: each board as it was the delay ago,
//!   its `ReferenceTime` moved on by the delay; with pairings, the paired
//!   boards only); a finished game's recorded PGN goes in only once the
//!   cut shows its record ([`crate::broadcast::Cut::shows_record`]);
//! * the push sends each hundred of boards (1-100, 101-200, ...) to its
//!   own lichess round (the ids given, in order; boards beyond them are
//!   named in [`PushStatus::unpushed`], not pushed; or the rounds the hub
//!   makes in a broadcast, see `created.rs`), at most [`MAX_GAMES`]
//!   games a request, one request at a time, at most one per lichess round
//!   every push interval, always the latest PGN (changes meanwhile are
//!   coalesced into the next), only the requests whose games changed since
//!   the last accepted push; it retries network errors, 408, 429 (after
//!   its `Retry-After`) and 5xx with a doubling wait (1 s to 60 s) and
//!   gives up on a text the server refused otherwise (4xx) until the next
//!   change; what lichess said of each game is kept
//!   ([`PushStatus::boards`]). The token is never logged or shown;
//! * sending pairings names every paired board (`set-tags`) and gives it
//!   the round's control (`new-game`) only when no game runs on it; a
//!   pairing board without a hall board is reported, never guessed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;
use serde_json::{json, Value};

use tokio::sync::broadcast;

use crate::broadcast::Cut;
use crate::event::store::{GameRecord, Store};
use crate::pairings::{self, Pairing, Pairings, Source};
use crate::results::{self, GameResult, Outcome};

mod created;
mod desk;
mod exports;
mod public;
mod push;
mod seating;
#[cfg(test)]
use exports::{decided, rows};
use exports::{plain, NO_PAIRINGS};
mod send;
pub use created::{check_names, check_tournament, round_name, MadeRound, DEFAULT_NAMES, MAX_MADE};
pub use desk::{LoadError, Review};
pub use public::{parse_boards, BoardRange};
pub use push::{spawn_push, GameStatus, PushStatus, PushTarget};
pub use send::{plan_pairings, send_pairings, Plan, Sending, Sent};

/// The most games one push request carries (lichess's limit).
pub const MAX_GAMES: usize = 100;
/// The first wait before a push is tried again; doubled up to
/// [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(60);
/// How long one push request may take, connection included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an answer's body read.
const MAX_ANSWER: usize = 1024 * 1024;

/// What the round reads of the hub that keeps it: the desk, the boards'
/// latest states and their changes. The hub implements it, so the round
/// never names the hub: the arrow goes one way (hub -> round).
pub trait RoundSource: Send + Sync + 'static {
    /// A read of every board's latest state payload, by board id (a lock
    /// held while it lives: keep it short).
    type Boards<'a>: std::ops::Deref<Target = BTreeMap<String, Value>>
    where
        Self: 'a;
    /// The round's settings and the push's status.
    fn desk(&self) -> &Desk;
    /// Every board's latest state payload.
    fn boards(&self) -> Self::Boards<'_>;
    /// Every change of what the hub knows, from now on.
    fn changes(&self) -> broadcast::Receiver<Arc<str>>;
    /// Now on the hub's wall clock, in milliseconds.
    fn now_ms(&self) -> i64;
    /// The public feed as of now: its cut (the delay in force) and every
    /// public board's state as the public sees it (see
    /// [`crate::broadcast`]: delayed, shifted, the round's boards only).
    fn public_boards(&self) -> (Cut, BTreeMap<String, Value>);
    /// Rung at each change of the public feed (released behind the
    /// delay); one permit kept when no one waits.
    fn public_changed(&self) -> &tokio::sync::Notify;
    /// The public feed's cut now (the delay in force).
    fn public_cut(&self) -> Cut;
}

/// The round's settings and the push's status, kept by the hub.
pub struct Desk {
    setup: Mutex<Setup>,
    push: Mutex<PushStatus>,
    served: Mutex<BTreeMap<String, Served>>,
    /// The event's store (see [`crate::event`]); taken after `setup`.
    store: Mutex<Option<Store>>,
    /// Board id -> the arbiter who last sent it a `set-result` from the
    /// hub (who entered its result).
    hints: Mutex<BTreeMap<String, String>>,
    /// Which pairing board each hall board plays, as last worked out
    /// (taken after `setup`): every state asks, and working it out for a
    /// hall of 1,000 boards at each of thousands of states a second is
    /// what a hub cannot afford.
    numbers: Mutex<Option<Numbers>>,
}

/// Hall board id -> its pairing board number, for one set of hall boards
/// (the hub's `ids`, the same `Arc` until a board comes or goes) and one
/// round's pairing boards and board map.
struct Numbers {
    ids: Arc<Vec<String>>,
    round: u32,
    boards: Vec<u32>,
    map: BTreeMap<u32, String>,
    by_id: std::collections::HashMap<String, u32>,
}

impl Default for Desk {
    fn default() -> Desk {
        let store = Store::in_memory()
            .map_err(|error| tracing::error!(%error, "desk: no event store in memory"))
            .ok();
        Desk::with(store)
    }
}

#[derive(Default)]
struct Setup {
    round: Option<u32>,
    pairings: Option<Pairings>,
    map: BTreeMap<u32, String>,
    /// The round's control for boards without their own.
    control: Option<String>,
    /// The current round's results as recorded, by pairing board (the
    /// store's, kept here for the readers).
    kept: BTreeMap<u32, GameRecord>,
    /// The current round is closed: its results are the recorded ones.
    closed: bool,
    /// The current round's own broadcast delay (s), set on the desk.
    delay_s: Option<u32>,
}

/// The last `/round.pgn` served: its hash and since when (wall ms).
#[derive(Default)]
struct Served {
    hash: u64,
    since_ms: i64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each change under these locks is one assignment: a panic elsewhere
    // cannot leave them half-changed.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Desk {
    /// The round's number (for `Round "R.B"`), when no pairings give it.
    pub fn set_round(&self, round: u32) {
        lock(&self.setup).round = Some(round);
    }

    /// The round's pairings (their round number too).
    pub fn set_pairings(&self, pairings: Pairings) {
        let mut setup = lock(&self.setup);
        setup.round = Some(pairings.round);
        setup.pairings = Some(pairings);
    }

    /// Which hall board plays which pairing board (see
    /// [`pairings::parse_board_map`]).
    pub fn set_board_map(&self, map: BTreeMap<u32, String>) {
        lock(&self.setup).map = map;
    }

    fn push_status(&self) -> MutexGuard<'_, PushStatus> {
        lock(&self.push)
    }
}

/// One board as the round sees it.
struct Seat<'a> {
    id: &'a str,
    number: Option<u32>,
    pairing: Option<&'a Pairing>,
    payload: &'a Value,
}

/// The boards in board order (board number, then id), with their numbers
/// and pairings.
fn seats<'a>(setup: &'a Setup, boards: &'a BTreeMap<String, Value>) -> Vec<Seat<'a>> {
    let ids = boards.keys().map(String::as_str);
    let numbers: BTreeMap<&str, u32> = match &setup.pairings {
        Some(pairings) => {
            let assigned =
                pairings::assign(pairings.games.iter().map(|g| g.board), ids, &setup.map);
            assigned
                .into_iter()
                .filter_map(|(number, id)| {
                    boards
                        .get_key_value(id.as_str())
                        .map(|(id, _)| (id.as_str(), number))
                })
                .collect()
        }
        None => BTreeMap::new(),
    };
    let mut seats: Vec<Seat<'a>> = boards
        .iter()
        .map(|(id, payload)| {
            let number = numbers.get(id.as_str()).copied().or_else(|| {
                setup
                    .map
                    .iter()
                    .find(|(_, mapped)| *mapped == id)
                    .map(|(n, _)| *n)
                    .or_else(|| {
                        // Without pairings (or off them), the number the id
                        // ends in.
                        setup
                            .pairings
                            .is_none()
                            .then(|| pairings::id_number(id))
                            .flatten()
                    })
            });
            let pairing = setup
                .pairings
                .as_ref()
                .and_then(|p| numbers.get(id.as_str()).and_then(|n| p.board(*n)));
            Seat {
                id,
                number,
                pairing,
                payload,
            }
        })
        .collect();
    seats.sort_by(|a, b| {
        (a.number.unwrap_or(u32::MAX), a.id).cmp(&(b.number.unwrap_or(u32::MAX), b.id))
    });
    seats
}

/// `H:MM:SS` of a time in ms (rounded up to the second, as a clock shows
/// it; never negative).
fn clock_text(ms: i64) -> String {
    let seconds = ms.max(0).saturating_add(999) / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// Whether a state payload's game is over (a result, or a flag fallen).
fn over(payload: &Value) -> bool {
    payload["state"]["result"].is_object()
        || payload["snapshot"]["flags"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
}

/// The side whose clock runs in a state payload, if one does.
fn running_side(payload: &Value) -> Option<&str> {
    let snapshot = &payload["snapshot"];
    let side = snapshot["running"].as_str()?;
    (snapshot["started"] == true && snapshot["paused"] != true && !over(payload)).then_some(side)
}

/// A side's remaining time at wall instant `now_ms`, extrapolated from a
/// state payload's snapshot while that side runs.
pub fn remaining_at(payload: &Value, side: &str, now_ms: i64) -> Option<i64> {
    let remaining = payload["snapshot"][format!("{side}_remaining_ms")].as_i64()?;
    if running_side(payload) != Some(side) {
        return Some(remaining);
    }
    let since = payload["snapshot_wall_ms"]
        .as_i64()
        .map_or(0, |at| now_ms.saturating_sub(at).max(0));
    Some(remaining.saturating_sub(since).max(0))
}

/// A PGN tag value with `\` and `"` escaped.
fn tag_value(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Days since 1970-01-01 as a civil (proleptic Gregorian) date.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-11-30T13:02:03.456Z` of a wall instant in ms.
fn iso_time(ms: i64) -> String {
    let (year, month, day) = civil(ms.div_euclid(86_400_000));
    let in_day = ms.rem_euclid(86_400_000);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// The HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) of a wall instant.
fn http_date(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = ms.div_euclid(86_400_000);
    let (year, month, day) = civil(days);
    let seconds = ms.rem_euclid(86_400_000) / 1000;
    format!(
        "{}, {day:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month as usize).saturating_sub(1).min(11)],
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The tags and the movetext of one PGN game.
fn split_pgn(text: &str) -> (Vec<(String, String)>, String) {
    let mut tags = Vec::new();
    let mut body = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        let tag = trimmed
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|t| t.split_once(' '))
            .and_then(|(name, value)| {
                let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                Some((
                    name.to_owned(),
                    value.replace("\\\"", "\"").replace("\\\\", "\\"),
                ))
            });
        match tag {
            Some(tag) if body.trim().is_empty() => tags.push(tag),
            _ => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    (tags, body)
}

/// The value of tag `name` in a PGN's tags (as [`split_pgn`] reads
/// them), found without copying the game: the desk reads a tag of every
/// state it takes.
fn pgn_tag<'a>(text: &'a str, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let (tag, value) = trimmed
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|t| t.split_once(' '))?;
        let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
        if tag == name {
            return Some(if value.contains('\\') {
                value.replace("\\\"", "\"").replace("\\\\", "\\").into()
            } else {
                value.into()
            });
        }
    }
    None
}

/// Gives the desk a state as the hub does: its JSON text and its skim.
#[cfg(test)]
fn observe_json(desk: &Desk, ids: &Arc<Vec<String>>, board: &str, state: &Value, now_ms: i64) {
    let text = state.to_string();
    let skimmed = crate::skim::skim(&text).unwrap_or_default();
    desk.observe(ids, board, &skimmed, &text, now_ms);
}

/// Whether a tag value says nothing (`?`, empty).
fn unknown(value: Option<&str>) -> bool {
    value.is_none_or(|v| v.trim().is_empty() || v.trim() == "?")
}

/// One board's game for the round: its own PGN (or the seven tag roster
/// and the result), with `Round` (`R.B` when the round and the board's
/// number are known), the pairing's players where the board has none,
/// `Board` (the board id), `Result` (the state's), `WhiteClock`,
/// `BlackClock`, `ReferenceTime` and `ClockStatus` from the state's
/// snapshot; the movetext ends with the result.
fn game(seat: &Seat<'_>, round: Option<u32>) -> String {
    let payload = seat.payload;
    let own = payload["pgn"].as_str().filter(|p| !p.trim().is_empty());
    let (mut tags, mut body) = match own {
        Some(text) => split_pgn(text),
        None => {
            let tags = [
                ("Event", "?"),
                ("Site", "?"),
                ("Date", "????.??.??"),
                ("Round", "?"),
                ("White", "?"),
                ("Black", "?"),
                ("Result", "*"),
            ]
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
            (tags, String::new())
        }
    };
    let tag = |tags: &[(String, String)], name: &str| -> Option<String> {
        tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    };
    let result = payload["state"]["result"]["result"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| tag(&tags, "Result"))
        .filter(|r| Outcome::parse(r).is_some() || r == "*")
        .unwrap_or_else(|| "*".to_owned());
    let mut set: Vec<(&str, String)> = Vec::new();
    let mut set_owned: Vec<(String, String)> = Vec::new();
    if let (Some(round), Some(number)) = (round, seat.number) {
        set.push(("Round", format!("{round}.{number}")));
    }
    if let Some(pairing) = seat.pairing {
        // The players as the pairings name them (names, FIDE ids, titles,
        // ratings, federations: the tags lichess reads), where the
        // board's own PGN says nothing.
        for (name, value) in pairing.tags(round.unwrap_or(0)) {
            if name != "Round" && unknown(tag(&tags, &name).as_deref()) {
                set_owned.push((name, value));
            }
        }
    }
    set.push(("Result", result.clone()));
    set.push(("Board", seat.id.to_owned()));
    let snapshot = &payload["snapshot"];
    for (name, side) in [("WhiteClock", "white"), ("BlackClock", "black")] {
        if let Some(ms) = snapshot[format!("{side}_remaining_ms")].as_i64() {
            set.push((name, clock_text(ms)));
        }
    }
    if let Some(at) = payload["snapshot_wall_ms"].as_i64() {
        let prefix = match running_side(payload) {
            Some("white") => "W/",
            Some("black") => "B/",
            _ => "",
        };
        set.push(("ReferenceTime", format!("{prefix}{}", iso_time(at))));
    }
    let status = if snapshot["started"] != true {
        "not-started"
    } else if over(payload) {
        "stopped"
    } else if snapshot["paused"] == true {
        "paused"
    } else {
        "running"
    };
    set.push(("ClockStatus", status.to_owned()));
    let set = set
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .chain(set_owned);
    for (name, value) in set {
        match tags.iter_mut().find(|(n, _)| *n == name) {
            Some(existing) => existing.1 = value,
            None => tags.push((name, value)),
        }
    }
    // The movetext's last token is the game's result.
    let trimmed = body.trim_end();
    let last = trimmed.rsplit(char::is_whitespace).next().unwrap_or("");
    if matches!(last, "*" | "1-0" | "0-1" | "1/2-1/2") {
        body = trimmed[..trimmed.len() - last.len()].to_owned();
    }
    let body = body.trim();
    let mut text = String::new();
    for (name, value) in tags {
        text.push_str(&format!("[{name} \"{}\"]\n", tag_value(&value)));
    }
    text.push('\n');
    if !body.is_empty() {
        text.push_str(body);
        text.push(' ');
    }
    text.push_str(&result);
    text.push('\n');
    text
}

/// The seats of the round as `public` shows it (all of them when `None`):
/// with a cut, only the boards the public sees now (a state old enough)
/// and, with pairings, only the paired ones.
fn shown<'a>(setup: &'a Setup, seats: Vec<Seat<'a>>, public: Option<&Cut>) -> Vec<Seat<'a>> {
    match public {
        None => seats,
        Some(_) => seats
            .into_iter()
            .filter(|seat| !seat.payload.is_null())
            .filter(|seat| setup.pairings.is_none() || seat.pairing.is_some())
            .collect(),
    }
}

/// The round's games, one per board in board order (see [`game`]); with
/// `public`, as the public sees them under that cut (see [`shown`]; a
/// finished game's recorded PGN only once the cut shows its record).
fn round_games_of(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    public: Option<&Cut>,
) -> Vec<String> {
    let round = setup
        .round
        .or_else(|| setup.pairings.as_ref().map(|p| p.round));
    let seats = shown(setup, seats(setup, boards), public);
    let mut games: Vec<String> = seats
        .iter()
        .map(|seat| seat_game(setup, seat, round, public))
        .collect();
    // The round's finished games whose boards the hub no longer hears of.
    for (number, kept) in &setup.kept {
        if public.is_some_and(|cut| !cut.shows_record(kept.recorded_ms)) {
            continue;
        }
        if !seats
            .iter()
            .any(|s| s.pairing.is_some() && s.number == Some(*number))
        {
            if let Some(pgn) = &kept.pgn {
                games.push(pgn.clone());
            }
        }
    }
    games
}

/// A seat's game for the round: the recorded final PGN of its game of the
/// round once the board has moved on (no result on it any more: a new
/// game) or the round is closed, else the board's live game. With
/// `public`, the recorded PGN only once the cut shows it.
fn seat_game(setup: &Setup, seat: &Seat<'_>, round: Option<u32>, public: Option<&Cut>) -> String {
    let kept = seat
        .pairing
        .and(seat.number)
        .and_then(|number| setup.kept.get(&number))
        .filter(|kept| public.is_none_or(|cut| cut.shows_record(kept.recorded_ms)))
        .and_then(|kept| kept.pgn.as_ref())
        .filter(|_| setup.closed || !seat.payload["state"]["result"].is_object());
    match kept {
        Some(pgn) => pgn.clone(),
        None => game(seat, round),
    }
}

/// The round's games as the hub knows them now (the arbiters' feed).
pub fn round_games(hub: &impl RoundSource) -> Vec<String> {
    let setup = lock(&hub.desk().setup);
    round_games_of(&setup, &hub.boards(), None)
}

/// The round's games as the public sees them now (see
/// [`RoundSource::public_boards`]).
pub fn public_games(hub: &impl RoundSource) -> Vec<String> {
    let (cut, boards) = hub.public_boards();
    let setup = lock(&hub.desk().setup);
    round_games_of(&setup, &boards, Some(&cut))
}

/// Games separated by a blank line.
fn join(games: &[String]) -> String {
    games.join("\n")
}

/// Which push request a game goes in: `(hundred, part)`. The hundred is
/// that of its board's number (boards 1-100 in hundred 0, 101-200 in 1,
/// ...; boards without a number in `u32::MAX`, after them); a hundred with
/// more than [`MAX_GAMES`] games (two boards with one number) goes out in
/// several parts.
pub type RequestKey = (u32, usize);

/// The push requests, in board order, each with its key: at most
/// [`MAX_GAMES`] games each, a board always in its hundred's request.
/// Keyed by board number, not cut from the list of boards known: the hub
/// learns the boards one state at a time, and cut by position a request
/// would shift with every board that arrives (a first request of boards
/// 1-98, 100 and 101 while board 99's state is on its way), and every
/// request after it would go out again.
fn requests_of(
    setup: &Setup,
    boards: &BTreeMap<String, Value>,
    public: Option<&Cut>,
) -> Vec<(RequestKey, String)> {
    let round = setup
        .round
        .or_else(|| setup.pairings.as_ref().map(|p| p.round));
    let mut requests: Vec<(RequestKey, Vec<String>)> = Vec::new();
    for seat in shown(setup, seats(setup, boards), public) {
        let hundred = seat.number.map_or(u32::MAX, |number| {
            number.saturating_sub(1) / MAX_GAMES as u32
        });
        let key = match requests.last() {
            Some(((last, part), games)) if *last == hundred => {
                (hundred, part + usize::from(games.len() >= MAX_GAMES))
            }
            _ => (hundred, 0),
        };
        let game = seat_game(setup, &seat, round, public);
        match requests.last_mut() {
            Some((last, games)) if *last == key => games.push(game),
            _ => requests.push((key, vec![game])),
        }
    }
    requests
        .into_iter()
        .map(|(key, games)| (key, join(&games)))
        .collect()
}

/// The round's push requests as the public sees it now (a board always in
/// the request of its hundred), and how many games they hold.
pub fn round_requests(hub: &impl RoundSource) -> (usize, Vec<(RequestKey, String)>) {
    let (cut, boards) = hub.public_boards();
    let setup = lock(&hub.desk().setup);
    let requests = requests_of(&setup, &boards, Some(&cut));
    let games = requests.iter().map(|(_, body)| count_games(body)).sum();
    (games, requests)
}

/// How many games a PGN text holds (its `[Event ` tags).
fn count_games(body: &str) -> usize {
    body.matches("\n[Event ").count() + usize::from(body.starts_with("[Event "))
}

/// FNV-1a, 64 bits: the ETag of a text.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The broadcast's HTTP routes, merged into the hub's.
pub fn routes<S: RoundSource>() -> Router<Arc<S>> {
    Router::new()
        .route("/round.pgn", get(public::live_pgn::<S>))
        .route("/public/round.pgn", get(public::public_pgn::<S>))
        .route("/broadcast.json", get(status::<S>))
        .merge(exports::routes::<S>())
        .merge(desk::routes::<S>())
}

async fn status<S: RoundSource>(State(hub): State<Arc<S>>) -> Response {
    let push = hub.desk().push_status().clone();
    let cut = hub.public_cut();
    let round_delay = hub.desk().round_delay();
    let setup = lock(&hub.desk().setup);
    let boards = hub.boards();
    let boards = &*boards;
    let seats: Vec<Value> = seats(&setup, boards)
        .iter()
        .map(|seat| {
            json!({"board": seat.id, "number": seat.number,
                   "white": seat.pairing.map(|p| p.white.name.clone()),
                   "black": seat.pairing.map(|p| p.black.name.clone())})
        })
        .collect();
    let unseated: Vec<u32> = setup
        .pairings
        .iter()
        .flat_map(|p| p.games.iter())
        .filter(|g| {
            !seats
                .iter()
                .any(|s| s["number"] == g.board && s["white"].is_string())
        })
        .map(|g| g.board)
        .collect();
    axum::Json(json!({
        "round": setup.round.or(setup.pairings.as_ref().map(|p| p.round)),
        "pairings": setup.pairings.as_ref().map(|p| json!({
            "source": match p.source { Source::Trf(_) => "trf", Source::Csv => "csv" },
            "games": p.games.len(),
            "without_board": unseated,
        })),
        "boards": seats,
        "push": push,
        "delay": {"current_ms": cut.delay_ms, "round_seconds": round_delay,
                  "results_immediately": cut.results_immediately},
    }))
    .into_response()
}

#[cfg(test)]
mod desk_tests;
#[cfg(test)]
mod exports_tests;
#[cfg(test)]
mod tests;
