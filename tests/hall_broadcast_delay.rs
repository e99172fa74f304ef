//! The broadcast delayed at the source (issue 32), end to end: a real
//! mosquitto (the test's own), the real daemon (a simulated unit on PTYs
//! for the presses, more boards without devices), the hub binary with a
//! short delay (the code does not care: the example is 2
//! minutes), the round's pairings (TRF: board 4 of the hall unpaired) and
//! a stand-in of lichess's push endpoint on 127.0.0.1. While a game is
//! played, a reader polls every public route without a login
//! (`/public/boards.json`, `/public/round.pgn`, `/public/round.pgn?boards=`)
//! and follows `/public/events`; the stand-in records every push. Checked:
//! no move, clock or result seen before its time on any of them; every
//! move seen within the push interval (and the reader's polling) after
//! its delay; the public clocks are the live ones shifted by exactly the
//! delay (they tick right behind it); the live routes and the current
//! round's exports answer 401 without a login; the unpaired board never
//! goes out; the push's games are the round's, in board order, with the
//! pairings' player tags; the round's own delay set from the desk's
//! command line. And with `--results-immediately`, a game's end goes out
//! at once while its moves still wait.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chessclock_protocol::Button;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};
use kit::hall::round::{game_of, games, tag, Arbiter, Lichess, HALL};
use kit::hall::watch::{options, Watcher};
use kit::hall::{Broker, Hub, WAIT};

const TOKEN: &str = "lip_test-token-123";
/// The public delay of the test, ms.
const DELAY_MS: i64 = 4_000;
/// The push interval, ms.
const INTERVAL_MS: i64 = 1_000;
/// How often the reader polls, ms.
const POLL_MS: u64 = 100;
/// What the hub's and the test's clocks and answers may lag by, ms.
const SLACK_MS: i64 = 1_500;

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Days from 1970-01-01 of a civil date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The wall ms of a `ReferenceTime` (`W/2026-...Z`, the prefix optional).
fn reference_ms(text: &str) -> i64 {
    let text = text.trim_start_matches("W/").trim_start_matches("B/");
    let n = |range: std::ops::Range<usize>| text[range].parse::<i64>().unwrap();
    days_from_civil(n(0..4), n(5..7), n(8..10)) * 86_400_000
        + n(11..13) * 3_600_000
        + n(14..16) * 60_000
        + n(17..19) * 1000
        + n(20..23)
}

/// What one public reading showed of board b1.
#[derive(Clone, Debug)]
struct Seen {
    /// Where: the route or `push`.
    route: String,
    /// When the answer was in (wall ms).
    at_ms: i64,
    /// Moves (presses) shown.
    moves: usize,
    /// A result shown.
    result: bool,
    /// The clocks shown: white, black (ms), and their instant (wall ms)
    /// as the public is told it (shifted by the delay).
    clocks: Option<(i64, i64, i64)>,
}

fn pgn_seen(route: &str, at_ms: i64, game: &str) -> Seen {
    let clock = |name: &str| {
        let text = tag(game, name)?;
        let parts: Vec<i64> = text.split(':').map(|p| p.parse().unwrap()).collect();
        Some((parts[0] * 3600 + parts[1] * 60 + parts[2]) * 1000)
    };
    let clocks = match (
        clock("WhiteClock"),
        clock("BlackClock"),
        tag(game, "ReferenceTime"),
    ) {
        (Some(white), Some(black), Some(reference)) => {
            Some((white, black, reference_ms(reference)))
        }
        _ => None,
    };
    Seen {
        route: route.to_owned(),
        at_ms,
        moves: game.matches("[%clk ").count(),
        result: tag(game, "Result").is_some_and(|r| r != "*"),
        clocks,
    }
}

fn payload_seen(route: &str, at_ms: i64, payload: &Value) -> Seen {
    let snapshot = &payload["snapshot"];
    let moves = snapshot["white_moves"].as_u64().unwrap_or(0)
        + snapshot["black_moves"].as_u64().unwrap_or(0);
    let clocks = match (
        snapshot["white_remaining_ms"].as_i64(),
        snapshot["black_remaining_ms"].as_i64(),
        payload["snapshot_wall_ms"].as_i64(),
    ) {
        (Some(w), Some(b), Some(at)) => Some((w, b, at)),
        _ => None,
    };
    Seen {
        route: route.to_owned(),
        at_ms,
        moves: moves as usize,
        result: payload["state"]["result"].is_object(),
        clocks,
    }
}

/// Follows `/public/events` (no login) and records what it tells of b1.
async fn follow_events(port: u16, seen: Arc<Mutex<Vec<Seen>>>, all: Arc<Mutex<Vec<String>>>) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream
        .write_all(b"GET /public/events HTTP/1.1\r\nHost: hub\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();
    let mut buffer = String::new();
    let mut chunk = vec![0u8; 65_536];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let at_ms = wall_ms();
        buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(data) = line.trim_end().strip_prefix("data: ") else {
                continue;
            };
            let Ok(message) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            all.lock().unwrap().push(data.to_owned());
            if message["type"] == "state"
                && message["board"] == "b1"
                && message["payload"].is_object()
            {
                seen.lock().unwrap().push(payload_seen(
                    "/public/events",
                    at_ms,
                    &message["payload"],
                ));
            }
        }
    }
}

/// Polls the public routes (no login) until stopped, recording what they
/// show of b1 and any sight of the unpaired b4.
async fn poll_public(
    hub_port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    leaks: Arc<Mutex<Vec<String>>>,
    etags: Arc<Mutex<usize>>,
) {
    loop {
        let (status, _, body) = kit::hall::round::get(hub_port, "/public/boards.json", "").await;
        let at_ms = wall_ms();
        assert_eq!(status, 200, "{body}");
        let value: Value = serde_json::from_str(&body).unwrap();
        if value["boards"]["b4"].is_object() {
            leaks.lock().unwrap().push(format!("boards.json: {body}"));
        }
        if value["boards"]["b1"].is_object() {
            seen.lock().unwrap().push(payload_seen(
                "/public/boards.json",
                at_ms,
                &value["boards"]["b1"],
            ));
        }
        for route in ["/public/round.pgn", "/public/round.pgn?boards=1-2"] {
            let (status, head, body) = kit::hall::round::get(hub_port, route, "").await;
            let at_ms = wall_ms();
            assert_eq!(status, 200, "{route}: {body}");
            if body.contains("[Board \"b4\"]") {
                leaks.lock().unwrap().push(format!("{route}: {body}"));
            }
            if let Some(game) = game_of(&body, "b1") {
                seen.lock().unwrap().push(pgn_seen(route, at_ms, &game));
            }
            if route.contains("boards") {
                // A poller with the ETag it was given: 304, unless the
                // text changed meanwhile (then another ETag).
                let given = head
                    .lines()
                    .find_map(|l| l.strip_prefix("etag: "))
                    .map(|e| e.trim().to_owned())
                    .expect("an ETag");
                let (status, again, _) =
                    kit::hall::round::get(hub_port, route, &format!("If-None-Match: {given}\r\n"))
                        .await;
                let changed = again
                    .lines()
                    .find_map(|l| l.strip_prefix("etag: "))
                    .is_some_and(|e| e.trim() != given);
                assert!(
                    status == 304 || (status == 200 && changed),
                    "{status}: {again}"
                );
                if status == 304 {
                    *etags.lock().unwrap() += 1;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
    }
}

/// Presses `button` on the simulated unit and waits for its ACK.
async fn press(sim: &chessclock_sim_units::SimHandle, button: Button) {
    let sim = sim.clone();
    tokio::task::spawn_blocking(move || {
        sim.press_returning_instant(Some("buttons"), button)
            .unwrap();
        sim.wait_until("buttons", WAIT, |s| s.unacked == 0)
            .unwrap_or_else(|e| panic!("{e}"));
    })
    .await
    .unwrap();
}

/// Runs `chessclock-hall ARGS` with `stdin`: success, stdout and stderr.
async fn hall(args: Vec<String>, stdin: &str) -> (bool, String, String) {
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut child = Command::new(kit::binary("chessclock-hall"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

/// The live moves of b1, as an arbiter's screen reads them.
async fn live_moves(hub: &Hub) -> (usize, bool) {
    let (_, _, body) = hub.get("/boards.json", "").await;
    let value: Value = serde_json::from_str(&body).unwrap();
    let seen = payload_seen("live", 0, &value["boards"]["b1"]);
    (seen.moves, seen.result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_move_or_clock_goes_public_before_the_delay_and_every_one_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let units = kit::daemon::demo_units(dir.path());
    let sim = units.handle();
    let mut boards = vec![format!(
        "[[board]]\nid = \"b1\"\ncontrol = \"300\"\nbuttons = \"{buttons}\"\n\
         displays = [\"{display}\"]\n",
        buttons = units.path("buttons").unwrap().display(),
        display = units.path("display").unwrap().display(),
    )];
    boards.extend(["b2", "b3", "b4"].map(kit::hall::event::plain_board));
    let config = kit::hall::event::hall_daemon_config(
        dir.path(),
        &format!("mqtt://127.0.0.1:{}", broker.port),
        "pi1",
        &boards,
        "",
    );
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, devices_linked).await;
    let mut states = Watcher::connect(
        options("states", broker.port, None),
        &format!("chessclock/{HALL}/board/b1/state"),
        WAIT,
    )
    .await;

    let lichess = Lichess::start(Vec::new()).await;
    let token = dir.path().join("lichess.token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let passwords = dir.path().join("passwd").display().to_string();
    let (ok, out, err) = hall(
        vec!["passwd".into(), passwords.clone(), "ann".into()],
        "s3cret pass\n",
    )
    .await;
    assert!(ok, "{out}{err}");
    let password = dir.path().join("password");
    std::fs::write(&password, "s3cret pass\n").unwrap();
    let pairings = std::env::current_dir()
        .unwrap()
        .join("tests/data/hall/round2.trf");
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &[
            "--round",
            "2",
            "--pairings",
            &pairings.display().to_string(),
            "--delay-seconds",
            &(DELAY_MS / 1000).to_string(),
            "--push-interval-seconds",
            &(INTERVAL_MS / 1000).to_string(),
            "--lichess-round",
            "r0und1",
            "--lichess-token-file",
            &token.display().to_string(),
            "--lichess-url",
            &lichess.url(),
            "--passwords",
            &passwords,
        ],
    )
    .await;

    // Nothing live without a login; the current round's exports neither,
    // while the feed is delayed.
    for path in [
        "/round.pgn",
        "/boards.json",
        "/events",
        "/broadcast.json",
        "/bulletin.pgn",
        "/results.json",
        "/rounds/2/bulletin.pgn",
        "/rounds/2/round.pgn",
    ] {
        let (status, _, body) = hub.get_anonymous(path, "").await;
        assert_eq!(status, 401, "{path}: {body}");
        assert!(!body.contains("[%clk"), "{path}: {body}");
    }
    let status = hub
        .wait_for("/broadcast.json", "the delay in force", |b| {
            b.contains("\"current_ms\":4000")
        })
        .await;
    assert!(status.contains("\"round_seconds\":null"), "{status}");

    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let leaks: Arc<Mutex<Vec<String>>> = Arc::default();
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let follower = tokio::spawn(follow_events(hub.port, seen.clone(), events.clone()));
    let etags: Arc<Mutex<usize>> = Arc::default();
    let poller = tokio::spawn(poll_public(
        hub.port,
        seen.clone(),
        leaks.clone(),
        etags.clone(),
    ));

    // Started, then four moves 700 ms apart: each move's instant before
    // its press (`before`), and when the hub had it (`live`). Real time:
    // the delay is kept by the hub's own wall clock, a process this test
    // cannot pause; the waits are the players' thinking.
    let mut arbiter = Arbiter::connect(broker.port).await;
    let mut before: Vec<i64> = Vec::new();
    let mut live: Vec<i64> = Vec::new();
    let started = wall_ms();
    let reply = arbiter.command("b1", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    for (index, button) in [Button::Left, Button::Right, Button::Left, Button::Right]
        .into_iter()
        .enumerate()
    {
        tokio::time::sleep(Duration::from_millis(700)).await;
        before.push(wall_ms());
        press(&sim, button).await;
        let deadline = wall_ms() + 5_000;
        while live_moves(&hub).await.0 < index + 1 {
            assert!(wall_ms() < deadline, "the hub never had move {}", index + 1);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        live.push(wall_ms());
    }
    // The result, then long enough for everything to come out (a result
    // half a second after the last move: its instant is told apart from
    // the move's on the hub's wall clock).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let result_before = wall_ms();
    let reply = arbiter
        .command(
            "b1",
            json!({"command": "set-result", "result": "1-0", "termination": "resignation"}),
        )
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    let result_live = wall_ms();
    let deadline = wall_ms() + DELAY_MS + INTERVAL_MS + 4 * SLACK_MS;
    loop {
        let done = lichess
            .pushed()
            .iter()
            .any(|p| game_of(&p.body, "b1").is_some_and(|g| tag(&g, "Result") == Some("1-0")));
        let shown = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.result)
            .map(|s| s.route.clone())
            .collect::<std::collections::BTreeSet<_>>();
        if done && shown.len() == 4 {
            break;
        }
        assert!(
            wall_ms() < deadline,
            "the result did not reach every route: {shown:?}, pushed: {done}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    poller.abort();
    follower.abort();

    // Every push, read as the public reads it.
    let pushed = lichess.pushed();
    let mut all = seen.lock().unwrap().clone();
    for push in &pushed {
        let at_ms = wall_ms() - push.at.elapsed().as_millis() as i64;
        assert!(
            !push.body.contains("[Board \"b4\"]"),
            "the unpaired board went out: {}",
            push.body
        );
        let boards: Vec<String> = games(&push.body)
            .iter()
            .map(|g| tag(g, "Round").unwrap().to_owned())
            .collect();
        assert!(
            boards.windows(2).all(|w| w[0] < w[1]),
            "not in board order: {boards:?}"
        );
        if let Some(game) = game_of(&push.body, "b1") {
            all.push(pgn_seen("push", at_ms, &game));
        }
    }
    assert!(
        leaks.lock().unwrap().is_empty(),
        "{:?}",
        leaks.lock().unwrap()
    );

    // No move early; each within the interval after its delay.
    for (index, (&pressed, &had)) in before.iter().zip(&live).enumerate() {
        let moves = index + 1;
        for route in [
            "/public/boards.json",
            "/public/round.pgn",
            "/public/round.pgn?boards=1-2",
            "/public/events",
            "push",
        ] {
            let first = all
                .iter()
                .filter(|s| s.route == route && s.moves >= moves)
                .map(|s| s.at_ms)
                .min()
                .unwrap_or_else(|| panic!("{route}: move {moves} never seen"));
            assert!(
                first >= pressed + DELAY_MS - 20,
                "{route}: move {moves} seen {} ms after its press, before the delay",
                first - pressed
            );
            assert!(
                first <= had + DELAY_MS + INTERVAL_MS + SLACK_MS,
                "{route}: move {moves} seen {} ms after the hub had it",
                first - had
            );
        }
    }
    // The result: not early, and every route had it in time (above).
    for route in [
        "/public/boards.json",
        "/public/round.pgn",
        "/public/events",
        "push",
    ] {
        let first = all
            .iter()
            .filter(|s| s.route == route && s.result)
            .map(|s| s.at_ms)
            .min()
            .unwrap();
        assert!(
            first >= result_before + DELAY_MS - 20,
            "{route}: the result early"
        );
        assert!(
            first <= result_live + DELAY_MS + INTERVAL_MS + SLACK_MS,
            "{route}: the result late"
        );
    }
    // Nothing of the game before it started plus the delay.
    assert!(
        all.iter()
            .filter(|s| s.at_ms < started + DELAY_MS - 20)
            .all(|s| s.moves == 0),
        "a move before its time"
    );

    // The clocks: each public reading is a live state shifted by exactly
    // the delay (a reader ticking from it is the delay behind), never in
    // the future.
    states.drain();
    let live_states: Vec<(i64, i64, i64)> = states
        .log
        .iter()
        .map(|s| s.json())
        .filter_map(|p| {
            Some((
                p["snapshot"]["white_remaining_ms"].as_i64()?,
                p["snapshot"]["black_remaining_ms"].as_i64()?,
                p["snapshot_wall_ms"].as_i64()?,
            ))
        })
        .collect();
    let mut checked = 0;
    for reading in all.iter().filter(|s| s.moves > 0) {
        let Some((white, black, at)) = reading.clocks else {
            continue;
        };
        assert!(
            at <= reading.at_ms + 20,
            "{}: a clock instant in the future",
            reading.route
        );
        let matches = live_states.iter().any(|(w, b, live_at)| {
            let same_time = if reading.route.contains("pgn") || reading.route == "push" {
                // H:MM:SS, rounded up to the second; the reference to the ms.
                (w + 999) / 1000 * 1000 == white && (b + 999) / 1000 * 1000 == black
            } else {
                *w == white && *b == black
            };
            same_time && live_at + DELAY_MS == at
        });
        assert!(
            matches,
            "{}: clocks {white}/{black} at {at} are no live state shifted by the delay",
            reading.route
        );
        checked += 1;
    }
    assert!(checked > 10, "only {checked} readings had clocks");

    // The push: the round's games in board order with the pairings' tags.
    let last = pushed.last().unwrap();
    let rounds: Vec<String> = games(&last.body)
        .iter()
        .map(|g| tag(g, "Round").unwrap().to_owned())
        .collect();
    assert_eq!(rounds, ["2.1", "2.2", "2.3"], "{}", last.body);
    let game = game_of(&last.body, "b1").unwrap();
    for name in [
        "WhiteTitle",
        "WhiteElo",
        "WhiteFideId",
        "BlackElo",
        "BlackFideId",
    ] {
        assert!(tag(&game, name).is_some(), "{name}: {game}");
    }
    assert!(*etags.lock().unwrap() > 0, "no 304 to a poller");
    let status = hub
        .wait_for("/broadcast.json", "the push settled", |b| {
            b.contains("\"state\":\"ok\"")
        })
        .await;
    let status: Value = serde_json::from_str(&status).unwrap();
    let white = status["boards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["board"] == "b1")
        .map(|b| b["white"].clone())
        .unwrap();
    assert_eq!(tag(&game, "White"), white.as_str(), "{game}");
    assert_eq!(status["push"]["boards"]["b1"]["accepted"], true, "{status}");
    assert!(status["push"]["boards"]["b4"].is_null(), "{status}");
    // The stream told nothing of the unpaired board, nor any host's name.
    let told = events.lock().unwrap().join("\n");
    assert!(!told.contains("\"b4\""), "{told}");
    assert!(!told.contains("pi1"), "{told}");
    // Every move's comment has its %emt beside its %clk.
    let clk = game.matches("[%clk ").count();
    assert!(clk == 4 && game.matches("[%emt ").count() == clk, "{game}");
    // The desk's page shows what the platform said.
    let (_, _, desk) = hub.get_anonymous("/desk", "").await;
    assert!(
        desk.contains("id=\"pushed\"") && desk.contains("id=\"delay\""),
        "{desk}"
    );

    // The round's own delay, set on the desk from the command line: 0
    // opens the current round's exports; `none` is the hub's again.
    let (status, _, _) = hub.get_anonymous("/api/rounds/delay", "").await;
    assert_ne!(status, 200);
    let url = format!("http://127.0.0.1:{}", hub.port);
    let password = password.display().to_string();
    let desk = |seconds: &str| -> Vec<String> {
        kit::hall::event::desk_command(
            &url,
            "ann",
            &password,
            &["delay", "--round", "2", "--seconds", seconds],
        )
    };
    let (ok, out, err) = hall(desk("0"), "").await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("in force now: 0 s"), "{out}");
    hub.wait_for("/broadcast.json", "the round's delay", |b| {
        b.contains("\"current_ms\":0") && b.contains("\"round_seconds\":0")
    })
    .await;
    let (status, _, bulletin) = hub.get_anonymous("/bulletin.pgn", "").await;
    assert_eq!(status, 200, "{bulletin}");
    let (ok, out, err) = hall(desk("none"), "").await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("in force now: 4 s"), "{out}");
    assert_eq!(hub.get_anonymous("/bulletin.pgn", "").await.0, 401);
    let (ok, _, err) = hall(desk("-3"), "").await;
    assert!(!ok && err.contains("--seconds"), "{err}");

    eprintln!(
        "{} public readings, {} pushes, {} with clocks checked",
        all.len(),
        pushed.len(),
        checked
    );

    drop(hub);
    assert!(daemon.terminate().success());
    units.shutdown();
    drop(client);
}

/// `--results-immediately`: a game's end goes public at once (its final
/// state, clocks stopped), while its moves before it still wait for the
/// delay; the public PGN and the push carry the result at once too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_goes_out_at_once_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let config = dir.path().join("chessclockd.toml");
    let text = format!(
        "{}\n[[board]]\nid = \"b1\"\ncontrol = \"300\"\n\n[hall]\nbroker = \
         \"mqtt://127.0.0.1:{}\"\nname = \"{HALL}\"\nhost = \"pi1\"\n",
        kit::daemon::daemon_table(&dir.path().join("state")),
        broker.port
    );
    std::fs::write(&config, text).unwrap();
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let _client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;
    let lichess = Lichess::start(Vec::new()).await;
    let token = dir.path().join("lichess.token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &[
            "--round",
            "1",
            "--delay-seconds",
            "600",
            "--results-immediately",
            "--lichess-round",
            "r0und1",
            "--lichess-token-file",
            &token.display().to_string(),
            "--lichess-url",
            &lichess.url(),
        ],
    )
    .await;
    hub.wait_for("/boards.json", "the board, live", |b| b.contains("\"b1\""))
        .await;
    let mut arbiter = Arbiter::connect(broker.port).await;
    let reply = arbiter.command("b1", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    // Ten minutes behind: the running game is not public.
    let (_, _, body) = hub.get_anonymous("/public/boards.json", "").await;
    let value: Value = serde_json::from_str(&body).unwrap();
    assert!(value["boards"]["b1"].is_null(), "{body}");
    assert_eq!(value["delay_ms"], 600_000);
    let set = wall_ms();
    let reply = arbiter
        .command(
            "b1",
            json!({"command": "set-result", "result": "0-1", "termination": "resignation"}),
        )
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    let body = hub
        .wait_for("/public/boards.json", "the result, at once", |b| {
            b.contains("\"result\":\"0-1\"")
        })
        .await;
    assert!(wall_ms() - set < 5_000);
    let value: Value = serde_json::from_str(&body).unwrap();
    let shown = &value["boards"]["b1"];
    assert_eq!(shown["snapshot"]["running"], Value::Null, "{shown}");
    // Not shifted: its own instant, in the past.
    assert!(
        shown["snapshot_wall_ms"].as_i64().unwrap() <= wall_ms(),
        "{shown}"
    );
    let (_, _, pgn) = hub.get_anonymous("/public/round.pgn", "").await;
    let game = game_of(&pgn, "b1").unwrap();
    assert_eq!(tag(&game, "Result"), Some("0-1"), "{game}");
    assert_eq!(tag(&game, "ClockStatus"), Some("stopped"), "{game}");
    lichess
        .wait(0, "the result pushed", |p| {
            game_of(&p.body, "b1").is_some_and(|g| tag(&g, "Result") == Some("0-1"))
        })
        .await;
    // Nothing of the game before its result ever went out.
    for pushed in lichess.pushed() {
        assert!(
            game_of(&pushed.body, "b1").is_none_or(|g| tag(&g, "Result") == Some("0-1")),
            "{}",
            pushed.body
        );
    }
    drop(hub);
    assert!(daemon.terminate().success());
}
