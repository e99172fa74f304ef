//! The lichess push at scale (issue 32 item 6): a stand-in of lichess's
//! push endpoint for the scale bench ([`super::scale`]), and what its
//! requests say of the hub's push.
//!
//! [`StandIn`]: a plain HTTP/1.1 server on 127.0.0.1 (a free port) that
//! takes `POST /api/broadcast/round/{id}/push` as lichess does (a PGN text
//! of one game per board, `Content-Length`), notes when each request's
//! body was in (CLOCK_MONOTONIC µs), its round, its size and, for each of
//! its games, the board and the press its last clock comment is of, and
//! answers 200 with `{"games": [{"tags": {"White", "Black"}, "moves"}]}`,
//! one per game in the order pushed (the shape the hub reads: see
//! `tests/kit/hall/round.rs`). It answers one connection at a time (the
//! hub sends one request at a time) and never stalls on one longer than
//! [`READ_TIMEOUT`]. Anything else gets 404, 411 or 413; a request it
//! cannot read is dropped, and none of it panics.
//!
//! [`analyse`]: per phase and over the run, the requests per lichess
//! round, the intervals between consecutive requests to one round, games
//! and bytes per request, and the **push lag** of the fake boards: from
//! the instant a fake board's state counting K presses was handed to the
//! broker ([`Publication`]) to the first request whose game of that
//! board counts K presses or more ([`push_lags`]). A fake board's presses
//! only grow and its PGN numbers on when it starts again
//! ([`super::loadgen::FakeBoard`]), so the last clock comment of a pushed
//! game ([`last_ply`]) tells which of its states went out.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use super::loadgen::{id_number, Publication};
use super::stats::Summary;
use chessclock_host::clock::monotonic_now_us;

/// The longest the stand-in waits on a connection for a request.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head and body the stand-in reads (bytes).
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 32 * 1024 * 1024;

/// One game of a pushed text: the board it is of (the number its `Board`
/// tag ends in, else the `B` of `Round "R.B"`; 0 if neither) and the press
/// its last clock comment is of (0 without one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushedGame {
    pub board: u32,
    pub ply: u32,
    pub white: Option<String>,
    pub black: Option<String>,
}

/// One push request the stand-in took.
#[derive(Clone, Debug)]
pub struct Request {
    /// The lichess round (the path's id).
    pub round: String,
    /// When its body was in (CLOCK_MONOTONIC µs).
    pub at_us: i64,
    pub bytes: usize,
    pub games: Vec<PushedGame>,
}

/// A request's head as the stand-in needs it.
#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    pub path: String,
    pub content_length: Option<usize>,
}

/// Reads a request head (up to its empty line, excluded).
pub fn parse_head(head: &str) -> Option<Head> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    first.next().filter(|v| v.starts_with("HTTP/1."))?;
    let mut content_length = None;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            content_length = Some(value.trim().parse().ok()?);
        }
    }
    Some(Head {
        method,
        path,
        content_length,
    })
}

/// The lichess round of a push endpoint's path.
pub fn round_of_path(path: &str) -> Option<&str> {
    let id = path
        .strip_prefix("/api/broadcast/round/")?
        .strip_suffix("/push")?;
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric())).then_some(id)
}

/// The press the last clock comment of a movetext is of: `{12. ...}` is
/// press 23 (White's 12th move), `{12... ...}` press 24; `None` when no
/// comment starts with a move number.
pub fn last_ply(movetext: &str) -> Option<u32> {
    movetext.rsplit('{').find_map(|comment| {
        let comment = comment.trim_start();
        let digits = comment.len()
            - comment
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        let number: u32 = comment[..digits].parse().ok()?;
        let rest = &comment[digits..];
        if rest.starts_with("...") {
            number.checked_mul(2)
        } else if rest.starts_with('.') {
            number.checked_mul(2)?.checked_sub(1)
        } else {
            None
        }
    })
}

/// The games of a pushed PGN text (split at each `[Event `, as the hub and
/// lichess do).
pub fn pushed_games(body: &str) -> Vec<PushedGame> {
    let mut texts: Vec<String> = Vec::new();
    for line in body.lines() {
        if line.starts_with("[Event ") || texts.is_empty() {
            texts.push(String::new());
        }
        if let Some(text) = texts.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    texts
        .iter()
        .filter(|t| !t.trim().is_empty())
        .map(|text| {
            let (tags, movetext) = text.split_once("\n\n").unwrap_or((text, ""));
            let tag = |name: &str| {
                let start = format!("[{name} \"");
                tags.lines()
                    .find_map(|line| line.trim().strip_prefix(start.as_str()))
                    .and_then(|rest| rest.strip_suffix("\"]"))
                    .map(str::to_owned)
            };
            let board = tag("Board").map(|id| id_number(&id)).filter(|n| *n > 0);
            let from_round = || {
                tag("Round")
                    .and_then(|r| r.split_once('.').and_then(|(_, b)| b.parse().ok()))
                    .unwrap_or(0)
            };
            PushedGame {
                board: board.unwrap_or_else(from_round),
                ply: last_ply(movetext).unwrap_or(0),
                white: tag("White"),
                black: tag("Black"),
            }
        })
        .collect()
}

/// Lichess's answer to a push of `games`.
pub fn answer(games: &[PushedGame]) -> String {
    let games: Vec<_> = games
        .iter()
        .map(|g| json!({"tags": {"White": g.white, "Black": g.black}, "moves": g.ply}))
        .collect();
    json!({ "games": games }).to_string()
}

/// The stand-in: see the module's documentation.
pub struct StandIn {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StandIn {
    pub fn start() -> anyhow::Result<StandIn> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let requests: Arc<Mutex<Vec<Request>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::Builder::new()
                .name("lichess-stand-in".into())
                .spawn(move || {
                    for stream in listener.incoming() {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if let Ok(stream) = stream {
                            if let Err(error) = serve(stream, &requests) {
                                tracing::warn!(%error, "the lichess stand-in dropped a request");
                            }
                        }
                    }
                })?
        };
        Ok(StandIn {
            port,
            requests,
            stop,
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests taken so far, in the order taken.
    pub fn requests(&self) -> Vec<Request> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Takes one request on `stream` and answers it.
fn serve(mut stream: TcpStream, requests: &Mutex<Vec<Request>>) -> anyhow::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    stream.set_write_timeout(Some(READ_TIMEOUT))?;
    let mut data = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if data.len() > MAX_HEAD {
            return reply(&mut stream, 413, "{\"error\":\"head too large\"}");
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            // A connection without a request (the stand-in's own wake-up).
            return Ok(());
        }
        data.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let Some(head) = parse_head(&head) else {
        return reply(&mut stream, 400, "{\"error\":\"bad request\"}");
    };
    let Some(length) = head.content_length else {
        return reply(&mut stream, 411, "{\"error\":\"length required\"}");
    };
    if length > MAX_BODY {
        return reply(&mut stream, 413, "{\"error\":\"too large\"}");
    }
    let mut body = data.split_off(head_end + 4);
    while body.len() < length {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            anyhow::bail!("the request ended after {} of {length} bytes", body.len());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    let at_us = monotonic_now_us();
    let Some(round) = round_of_path(&head.path).filter(|_| head.method == "POST") else {
        return reply(&mut stream, 404, "{\"error\":\"not found\"}");
    };
    let games = pushed_games(&String::from_utf8_lossy(&body));
    let text = answer(&games);
    requests
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(Request {
            round: round.to_owned(),
            at_us,
            bytes: length,
            games,
        });
    reply(&mut stream, 200, &text)
}

fn reply(stream: &mut TcpStream, status: u16, body: &str) -> anyhow::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        411 => "Length Required",
        413 => "Payload Too Large",
        _ => "Bad Request",
    };
    stream.write_all(
        format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )?;
    Ok(())
}

/// For each publication (in the order given), µs from it to the first
/// request (in time order) whose game of its board counts as many presses
/// or more: `None` if no request did. Requests are taken in the order of
/// their instants.
pub fn push_lags(publications: &[Publication], requests: &[Request]) -> Vec<Option<i64>> {
    // Each board's publications in the order of their presses (a board's
    // presses only grow, and it publishes them in that order).
    let mut by_board: HashMap<u32, Vec<usize>> = HashMap::new();
    for (index, publication) in publications.iter().enumerate() {
        by_board.entry(publication.board).or_default().push(index);
    }
    for indices in by_board.values_mut() {
        indices.sort_by_key(|i| (publications[*i].moves, publications[*i].at_us));
    }
    let mut order: Vec<&Request> = requests.iter().collect();
    order.sort_by_key(|r| r.at_us);
    let mut next: HashMap<u32, usize> = HashMap::new();
    let mut lags = vec![None; publications.len()];
    for request in order {
        for game in &request.games {
            let Some(indices) = by_board.get(&game.board) else {
                continue;
            };
            let cursor = next.entry(game.board).or_insert(0);
            while let Some(&index) = indices.get(*cursor) {
                if publications[index].moves > game.ply {
                    break;
                }
                lags[index] = Some(request.at_us - publications[index].at_us);
                *cursor += 1;
            }
        }
    }
    lags
}

/// Whether every board's latest publication went out: some request's game
/// of that board counts its presses or more.
pub fn all_pushed(publications: &[Publication], requests: &[Request]) -> bool {
    let mut pushed: HashMap<u32, u32> = HashMap::new();
    for game in requests.iter().flat_map(|r| &r.games) {
        let ply = pushed.entry(game.board).or_default();
        *ply = (*ply).max(game.ply);
    }
    publications
        .iter()
        .all(|p| pushed.get(&p.board).is_some_and(|ply| *ply >= p.moves))
}

/// The push's figures over one stretch of the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PushPhase {
    pub name: String,
    /// Requests whose body came in the stretch, per lichess round.
    pub requests: usize,
    pub requests_per_round: BTreeMap<String, usize>,
    /// ms between two consecutive requests to one round (the later in
    /// the stretch): the hub promises at least the interval.
    pub interval_ms: Summary,
    pub games_per_request: Summary,
    pub body_bytes: Summary,
    /// The fake boards' states published in the stretch, ms from each to
    /// the first request carrying it (or a later state of its board), and
    /// those no request carried by the end of the run.
    pub states: usize,
    pub push_lag_ms: Summary,
    pub states_unpushed: usize,
    /// States whose lag was over the interval plus the delay.
    pub states_over_target: usize,
}

/// A request with fewer games than another request to its round carried:
/// the boards it left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ShortRequest {
    pub round: String,
    /// CLOCK_MONOTONIC µs.
    pub at_us: i64,
    pub games: usize,
    /// The boards left out (at most 20).
    pub missing: Vec<u32>,
}

/// The push over the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PushReport {
    pub interval_s: u64,
    pub delay_s: u32,
    pub rounds: Vec<String>,
    /// The target: a change never waits longer than the interval plus the
    /// delay (ms).
    pub target_ms: f64,
    pub phases: Vec<PushPhase>,
    /// Over the phases.
    pub run: PushPhase,
    /// Every request the stand-in took, and pushed games it could not
    /// tell the board or the press of.
    pub requests_total: usize,
    pub games_unknown: usize,
    /// Requests, from the first phase on, with fewer games than their
    /// round's most (at most 50 listed).
    pub short_requests: Vec<ShortRequest>,
}

/// The requests from `from_us` on that left out a board another request to
/// their round carried (the first 50).
pub fn short_requests(requests: &[Request], from_us: i64) -> Vec<ShortRequest> {
    let mut boards: HashMap<&str, std::collections::BTreeSet<u32>> = HashMap::new();
    for request in requests {
        boards
            .entry(request.round.as_str())
            .or_default()
            .extend(request.games.iter().map(|g| g.board));
    }
    let mut order: Vec<&Request> = requests.iter().filter(|r| r.at_us >= from_us).collect();
    order.sort_by_key(|r| r.at_us);
    order
        .into_iter()
        .filter_map(|request| {
            let all = boards.get(request.round.as_str())?;
            let carried: std::collections::BTreeSet<u32> =
                request.games.iter().map(|g| g.board).collect();
            let missing: Vec<u32> = all.difference(&carried).copied().take(20).collect();
            (!missing.is_empty()).then(|| ShortRequest {
                round: request.round.clone(),
                at_us: request.at_us,
                games: request.games.len(),
                missing,
            })
        })
        .take(50)
        .collect()
}

/// The push's figures per phase (`(name, start, end)`, CLOCK_MONOTONIC µs,
/// a request or publication in `[start, end)`) and over all of them.
pub fn analyse(
    publications: &[Publication],
    requests: &[Request],
    phases: &[(String, i64, i64)],
    interval_s: u64,
    delay_s: u32,
    rounds: &[String],
) -> PushReport {
    let lags = push_lags(publications, requests);
    let target_ms = (interval_s as f64 + f64::from(delay_s)) * 1e3;
    // Each request's gap since the round's previous one.
    let mut order: Vec<&Request> = requests.iter().collect();
    order.sort_by_key(|r| r.at_us);
    let mut previous: HashMap<&str, i64> = HashMap::new();
    let gaps: Vec<(&Request, Option<f64>)> = order
        .iter()
        .map(|r| {
            let gap = previous
                .insert(r.round.as_str(), r.at_us)
                .map(|before| (r.at_us - before) as f64 / 1e3);
            (*r, gap)
        })
        .collect();
    let stretch = |name: &str, start: i64, end: i64| {
        let inside = |at: i64| at >= start && at < end;
        let mut phase = PushPhase {
            name: name.to_owned(),
            ..PushPhase::default()
        };
        let (mut intervals, mut games, mut bytes) = (Vec::new(), Vec::new(), Vec::new());
        for (request, gap) in gaps.iter().filter(|(r, _)| inside(r.at_us)) {
            phase.requests += 1;
            *phase
                .requests_per_round
                .entry(request.round.clone())
                .or_default() += 1;
            intervals.extend(*gap);
            games.push(request.games.len() as f64);
            bytes.push(request.bytes as f64);
        }
        let mut lag_ms = Vec::new();
        for (publication, lag) in publications.iter().zip(&lags) {
            if !inside(publication.at_us) {
                continue;
            }
            phase.states += 1;
            match lag {
                Some(us) => {
                    let ms = *us as f64 / 1e3;
                    if ms > target_ms {
                        phase.states_over_target += 1;
                    }
                    lag_ms.push(ms);
                }
                None => phase.states_unpushed += 1,
            }
        }
        phase.interval_ms = Summary::of(&intervals);
        phase.games_per_request = Summary::of(&games);
        phase.body_bytes = Summary::of(&bytes);
        phase.push_lag_ms = Summary::of(&lag_ms);
        phase
    };
    let report_phases: Vec<PushPhase> = phases
        .iter()
        .map(|(name, start, end)| stretch(name, *start, *end))
        .collect();
    let run = match (phases.first(), phases.last()) {
        (Some(first), Some(last)) => stretch("run", first.1, last.2),
        _ => PushPhase::default(),
    };
    PushReport {
        interval_s,
        delay_s,
        rounds: rounds.to_vec(),
        target_ms,
        phases: report_phases,
        run,
        requests_total: requests.len(),
        games_unknown: requests
            .iter()
            .flat_map(|r| &r.games)
            .filter(|g| g.board == 0 || g.ply == 0)
            .count(),
        short_requests: short_requests(requests, phases.first().map_or(i64::MIN, |p| p.1)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn game(board: &str, round: &str, comments: &str) -> String {
        format!(
            "[Event \"Open\"]\n[Round \"{round}\"]\n[White \"White 7\"]\n[Black \"Black 7\"]\n\
             [Board \"{board}\"]\n[ReferenceTime \"B/2026-12-06T18:00:00.000Z\"]\n\n{comments}*\n"
        )
    }

    #[test]
    fn a_pushed_game_tells_its_board_and_its_last_press() {
        let body = format!(
            "{}\n{}\n{}",
            game(
                "f0007",
                "1.7",
                "{31. [%clk 1:20:00] [%emt 0:00:02]} {31... [%clk 1:19:00] [%emt 0:00:03]} "
            ),
            game("f0123", "1.123", "{40. [%clk 1:00:00] [%emt 0:00:20]} "),
            // No Board tag: the Round's board; no comment: no press.
            game("", "1.9", "").replace("[Board \"\"]\n", "")
        );
        let games = pushed_games(&body);
        assert_eq!(games.len(), 3);
        assert_eq!((games[0].board, games[0].ply), (7, 62));
        assert_eq!(games[0].white.as_deref(), Some("White 7"));
        assert_eq!((games[1].board, games[1].ply), (123, 79));
        assert_eq!((games[2].board, games[2].ply), (9, 0));
        let answer: serde_json::Value = serde_json::from_str(&answer(&games)).unwrap();
        assert_eq!(answer["games"].as_array().unwrap().len(), 3);
        assert_eq!(answer["games"][0]["tags"]["Black"], "Black 7");
        assert_eq!(answer["games"][1]["moves"], 79);
    }

    #[test]
    fn the_last_clock_comment_gives_the_press() {
        assert_eq!(last_ply("{1. [%clk 0:01:00]} "), Some(1));
        assert_eq!(
            last_ply("{1. White [%clk 0:01:00]} {1... Black [%clk 0:01:00]}"),
            Some(2)
        );
        assert_eq!(
            last_ply("e4 {[%clk 0:01:00]} {12. x} {not a move}"),
            Some(23)
        );
        assert_eq!(last_ply("e4 {[%clk 0:01:00]}"), None);
        assert_eq!(last_ply(""), None);
        assert_eq!(last_ply("{99999999999. x}"), None);
    }

    #[test]
    fn a_request_head_and_path_are_read() {
        let head = parse_head(
            "POST /api/broadcast/round/bench01/push HTTP/1.1\r\nhost: x\r\nContent-Length: 12",
        )
        .unwrap();
        assert_eq!(head.method, "POST");
        assert_eq!(head.content_length, Some(12));
        assert_eq!(round_of_path(&head.path), Some("bench01"));
        assert_eq!(round_of_path("/api/broadcast/round//push"), None);
        assert_eq!(round_of_path("/api/broadcast/round/a/b/push"), None);
        assert!(parse_head("POST / HTTP/1.1\r\nContent-Length: x").is_none());
        assert!(parse_head("garbage").is_none());
        assert_eq!(parse_head("GET / HTTP/1.0").unwrap().content_length, None);
    }

    fn publication(board: u32, moves: u32, at_us: i64) -> Publication {
        Publication {
            board,
            moves,
            at_us,
        }
    }

    fn request(round: &str, at_us: i64, games: &[(u32, u32)]) -> Request {
        Request {
            round: round.to_owned(),
            at_us,
            bytes: 100 * games.len(),
            games: games
                .iter()
                .map(|(board, ply)| PushedGame {
                    board: *board,
                    ply: *ply,
                    white: None,
                    black: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_lag_runs_to_the_first_push_carrying_the_state_or_a_later_one() {
        const S: i64 = 1_000_000;
        let publications = [
            publication(1, 10, S),
            publication(2, 5, 3 * S / 2),
            publication(1, 11, 2 * S),
            publication(1, 12, 5 * S / 2),
            publication(2, 6, 9 * S),
            publication(1, 13, 19 * S / 2),
        ];
        let requests = [
            // Board 1 at press 10 (not yet 11), board 2 not in it.
            request("a", 22 * S / 10, &[(1, 10)]),
            // Board 1 at press 12: covers 11 and 12; board 2 at 5.
            request("a", 4 * S, &[(1, 12), (2, 5)]),
            // An older state again covers nothing new.
            request("b", 5 * S, &[(1, 11)]),
            // Taken out of order: sorted by instant.
            request("a", 12 * S, &[(2, 6)]),
        ];
        let lags = push_lags(&publications, &requests);
        let ms = |ms: i64| Some(ms * 1_000);
        assert_eq!(
            lags,
            vec![ms(1_200), ms(2_500), ms(2_000), ms(1_500), ms(3_000), None]
        );
        let phases = [
            ("one".to_owned(), 0, 5 * S),
            ("two".to_owned(), 5 * S, 20 * S),
        ];
        let report = analyse(&publications, &requests, &phases, 2, 0, &["a".into()]);
        assert_eq!(report.target_ms, 2_000.0);
        let one = &report.phases[0];
        assert_eq!((one.requests, one.states, one.states_unpushed), (2, 4, 0));
        assert_eq!(one.requests_per_round["a"], 2);
        assert_eq!(one.interval_ms.count, 1);
        assert_eq!(one.interval_ms.min, 1_800.0);
        assert_eq!(one.push_lag_ms.max, 2_500.0);
        // 2.5 s is over the 2 s target; 2.0 s is not.
        assert_eq!(one.states_over_target, 1);
        let two = &report.phases[1];
        assert_eq!((two.requests, two.states, two.states_unpushed), (2, 2, 1));
        // Round a's request at 12 s follows its 4 s one; b's first has no gap.
        assert_eq!(two.interval_ms.count, 1);
        assert_eq!(two.interval_ms.max, 8_000.0);
        assert_eq!(two.states_over_target, 1);
        assert_eq!(report.run.requests, 4);
        assert_eq!(report.run.states, 6);
        assert_eq!(report.run.games_per_request.max, 2.0);
        assert_eq!(report.games_unknown, 0);
        // Round a's first request left out board 2, which its second
        // carried, and its last board 1; round b only ever had board 1.
        let short = |at_us: i64, missing: u32| ShortRequest {
            round: "a".into(),
            at_us,
            games: 1,
            missing: vec![missing],
        };
        assert_eq!(
            report.short_requests,
            vec![short(22 * S / 10, 2), short(12 * S, 1)]
        );
        assert_eq!(short_requests(&requests, 3 * S), vec![short(12 * S, 1)]);
        // Board 1's press 13 is not out yet; then it is.
        assert!(!all_pushed(&publications, &requests));
        let mut more = requests.to_vec();
        more.push(request("a", 14 * S, &[(1, 13)]));
        assert!(all_pushed(&publications, &more));
        // With a 10 s delay none is over the target.
        let delayed = analyse(&publications, &requests, &phases, 2, 10, &["a".into()]);
        assert_eq!(delayed.run.states_over_target, 0);
    }

    #[test]
    fn the_stand_in_answers_a_push_as_lichess_does() {
        let stand_in = StandIn::start().unwrap();
        let body = game("f0002", "1.2", "{1. [%clk 1:29:00] [%emt 0:00:01]} ");
        let mut stream = TcpStream::connect(("127.0.0.1", stand_in.port)).unwrap();
        stream
            .write_all(
                format!(
                    "POST /api/broadcast/round/r1/push HTTP/1.1\r\nHost: x\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
        let json = answer.split("\r\n\r\n").nth(1).unwrap();
        let json: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(json["games"][0]["moves"], 1);
        let mut other = TcpStream::connect(("127.0.0.1", stand_in.port)).unwrap();
        other
            .write_all(b"POST /elsewhere HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        other.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
        let requests = stand_in.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].round, "r1");
        assert_eq!(requests[0].bytes, body.len());
        assert_eq!(
            (requests[0].games[0].board, requests[0].games[0].ply),
            (2, 1)
        );
    }
}
