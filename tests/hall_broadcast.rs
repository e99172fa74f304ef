//! The broadcast end to end: a real mosquitto (the test's own), the real
//! daemon (simulated units on PTYs for the presses, or many boards without
//! devices), the hub binary, and a stand-in of lichess's push endpoint on
//! 127.0.0.1 (never the internet): the token and content type of every
//! push, at most 100 games a request, the clock tags changed by the push
//! of the very state in which the second stage's time was added, clocks
//! that stop at a pause and a result, `/round.pgn`'s ETag, retries after a
//! 429; a section of 300 boards split over three lichess rounds by board
//! ranges, and its public PGN by range with its ETag; a section of 250
//! boards whose three lichess rounds the hub makes itself
//! (`--lichess-broadcast`), once, a restart making none again and the next
//! round its own; a round lichess would not make, retried with nothing
//! pushed meanwhile. Serialised; every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::time::{Duration, Instant};

use chessclock_protocol::Button;
use serde_json::{json, Value};

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};
use kit::hall::event::{hall as hub_command, strings};
use kit::hall::round::{game_of, games, tag, Arbiter, Lichess, ManyBoards, HALL};
use kit::hall::{Broker, Hub, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const TOKEN: &str = "lip_test-token-123";

fn token_file(dir: &std::path::Path) -> String {
    let path = dir.join("lichess.token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    path.display().to_string()
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

/// Every push the stand-in took carries the token and a text/plain body.
fn check_requests(lichess: &Lichess) {
    for pushed in lichess.pushed() {
        assert_eq!(pushed.path, "/api/broadcast/round/r0und1/push");
        assert_eq!(
            pushed.authorization.as_deref(),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert!(
            pushed
                .content_type
                .as_deref()
                .is_some_and(|t| t.starts_with("text/plain")),
            "{pushed:?}"
        );
        assert!(games(&pushed.body).len() <= 100);
    }
}

/// Starts board b157 (an arbiter's command over MQTT) and waits for the
/// push that shows it running: it must go to lichess round `round`, and the
/// push must settle.
async fn start_157_and_see_it_pushed_to(
    hub: &Hub,
    lichess: &Lichess,
    broker_port: u16,
    round: &str,
) {
    let mut arbiter = Arbiter::connect(broker_port).await;
    let before = lichess.pushed().len();
    let reply = arbiter.command("b157", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    let started = lichess
        .wait(before, "board 157 started", |p| {
            game_of(&p.body, "b157").is_some_and(|g| tag(&g, "ClockStatus") == Some("running"))
        })
        .await;
    assert_eq!(
        lichess.pushed()[started].path,
        format!("/api/broadcast/round/{round}/push")
    );
    hub.wait_for("/broadcast.json", "the push settled", |b| {
        b.contains("\"state\":\"ok\"")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_carries_the_second_stages_time_at_once_and_stops_the_clocks() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let units = kit::daemon::demo_units(dir.path());
    let sim = units.handle();
    let config = dir.path().join("chessclockd.toml");
    // Two moves in 60 s, then 30 s more: White's second press adds 30 s
    // (the 40th move's time, in small).
    std::fs::write(
        &config,
        format!(
            "{daemon}\n[[board]]\nid = \"b1\"\ncontrol = \"2/60:30\"\nbuttons = \"{buttons}\"\n\
             displays = [\"{display}\"]\n\n[hall]\nbroker = \"mqtt://127.0.0.1:{port}\"\n\
             name = \"{HALL}\"\nhost = \"pi1\"\n",
            daemon = kit::daemon::daemon_table(&dir.path().join("state")),
            buttons = units.path("buttons").unwrap().display(),
            display = units.path("display").unwrap().display(),
            port = broker.port,
        ),
    )
    .unwrap();
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, devices_linked).await;

    // The first push is answered 429 (Retry-After: 1 s): the hub waits and
    // pushes again.
    let lichess = Lichess::start(vec![(429, Some(1))]).await;
    let token = token_file(dir.path());
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &[
            "--round",
            "5",
            "--lichess-round",
            "r0und1",
            "--lichess-token-file",
            &token,
            "--lichess-url",
            &lichess.url(),
        ],
    )
    .await;
    let first = lichess
        .wait(0, "the first push", |p| p.body.contains("[Board \"b1\"]"))
        .await;
    let again = lichess
        .wait(first + 1, "the push after the 429", |p| {
            p.body.contains("[Board \"b1\"]")
        })
        .await;
    let pushed = lichess.pushed();
    assert!(
        pushed[again].at - pushed[first].at >= Duration::from_millis(900),
        "the retry came {:?} after the 429",
        pushed[again].at - pushed[first].at
    );
    let status = hub
        .wait_for("/broadcast.json", "the push's status", |b| {
            b.contains("\"state\":\"ok\"")
        })
        .await;
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["push"]["requests_failed"], 1, "{status}");
    assert_eq!(status["push"]["last_http_status"], 200, "{status}");
    assert_eq!(status["round"], 5);
    assert!(!status.to_string().contains(TOKEN));
    let game = game_of(&pushed[again].body, "b1").unwrap();
    assert_eq!(tag(&game, "Round"), Some("5.1"), "{game}");
    assert_eq!(tag(&game, "WhiteClock"), Some("0:01:00"), "{game}");
    assert_eq!(tag(&game, "ClockStatus"), Some("not-started"), "{game}");
    assert_eq!(tag(&game, "Result"), Some("*"), "{game}");

    // Started; White, Black, then White's second move: the state published
    // with that press is pushed with the 30 s added, with no further press.
    client.board.start().await.unwrap();
    press(&sim, Button::Left).await;
    press(&sim, Button::Right).await;
    let before = lichess.pushed().len();
    press(&sim, Button::Left).await;
    let pressed = Instant::now();
    let bonus = lichess
        .wait(before, "the push with White's bonus", |p| {
            game_of(&p.body, "b1").is_some_and(|g| {
                tag(&g, "WhiteClock").is_some_and(|t| t.starts_with("0:01:2") || t == "0:01:30")
            })
        })
        .await;
    let game = game_of(&lichess.pushed()[bonus].body, "b1").unwrap();
    assert!(
        tag(&game, "ReferenceTime").is_some_and(|t| t.starts_with("B/20")),
        "{game}"
    );
    assert_eq!(tag(&game, "ClockStatus"), Some("running"), "{game}");
    // The press's %clk in the movetext has the added time too.
    let last_clk = game
        .rsplit("[%clk ")
        .next()
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    assert_eq!(Some(last_clk), tag(&game, "WhiteClock"), "{game}");
    let snapshot = client.board.white_remaining_ms().await.unwrap();
    assert!(
        snapshot > 80_000,
        "White has {snapshot} ms after the second move"
    );
    eprintln!(
        "the bonus reached the stand-in {:?} after the press's ACK",
        lichess.pushed()[bonus]
            .at
            .saturating_duration_since(pressed)
    );

    // The same on /round.pgn, with an ETag that holds while nothing changes.
    let (status, head, body) = hub.get("/round.pgn", "").await;
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: application/x-chess-pgn"),
        "{head}"
    );
    assert!(head.contains("last-modified: "), "{head}");
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .unwrap()
        .trim()
        .to_owned();
    let polled = game_of(&body, "b1").unwrap();
    assert_eq!(tag(&polled, "WhiteClock"), tag(&game, "WhiteClock"));
    let (status, _, _) = hub
        .get("/round.pgn", &format!("If-None-Match: {etag}\r\n"))
        .await;
    assert_eq!(status, 304);

    // A pause stops the clocks in the PGN at once: no prefix.
    let mut arbiter = Arbiter::connect(broker.port).await;
    let before = lichess.pushed().len();
    let reply = arbiter.command("b1", json!({"command": "pause"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    let paused = lichess
        .wait(before, "the paused push", |p| {
            game_of(&p.body, "b1").is_some_and(|g| tag(&g, "ClockStatus") == Some("paused"))
        })
        .await;
    let game = game_of(&lichess.pushed()[paused].body, "b1").unwrap();
    assert!(
        tag(&game, "ReferenceTime").is_some_and(|t| t.starts_with("20")),
        "{game}"
    );
    let (status, _, _) = hub
        .get("/round.pgn", &format!("If-None-Match: {etag}\r\n"))
        .await;
    assert_eq!(status, 200, "the ETag changed with the pause");

    // The arbiter's result: stopped, and the result in the tag and the
    // movetext.
    let reply = arbiter.command("b1", json!({"command": "resume"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    let before = lichess.pushed().len();
    let reply = arbiter
        .command(
            "b1",
            json!({"command": "set-result", "result": "0-1", "termination": "resignation"}),
        )
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    let ended = lichess
        .wait(before, "the result's push", |p| {
            game_of(&p.body, "b1").is_some_and(|g| tag(&g, "Result") == Some("0-1"))
        })
        .await;
    let game = game_of(&lichess.pushed()[ended].body, "b1").unwrap();
    assert_eq!(tag(&game, "ClockStatus"), Some("stopped"), "{game}");
    assert!(game.trim_end().ends_with("0-1"), "{game}");
    assert!(
        !tag(&game, "ReferenceTime").unwrap().contains('/'),
        "{game}"
    );
    check_requests(&lichess);

    drop(hub);
    assert!(daemon.terminate().success());
    units.shutdown();
}

/// The round numbers (`R.B`'s B) of a push's games, in order.
fn numbers(body: &str) -> Vec<u32> {
    games(body)
        .iter()
        .map(|g| {
            tag(g, "Round")
                .unwrap()
                .split_once('.')
                .unwrap()
                .1
                .parse()
                .unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_of_300_boards_goes_to_three_lichess_rounds_in_board_order() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let hall = ManyBoards::start(dir.path(), 300).await;
    let broker = &hall.broker;

    let lichess = Lichess::start(Vec::new()).await;
    let token = token_file(dir.path());
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &[
            "--round",
            "2",
            "--lichess-round",
            "r0und1,r0und2,r0und3",
            "--push-interval-seconds",
            "1",
            "--lichess-token-file",
            &token,
            "--lichess-url",
            &lichess.url(),
        ],
    )
    .await;
    // Each lichess round gets its hundred, whole, in board order.
    for (index, round) in ["r0und1", "r0und2", "r0und3"].into_iter().enumerate() {
        let path = format!("/api/broadcast/round/{round}/push");
        let full = lichess
            .wait(0, &format!("{round}'s hundred"), |p| {
                p.path == path && games(&p.body).len() == 100
            })
            .await;
        let first = 100 * index as u32 + 1;
        assert_eq!(
            numbers(&lichess.pushed()[full].body),
            (first..first + 100).collect::<Vec<u32>>()
        );
    }
    let status = hub
        .wait_for("/broadcast.json", "the push settled", |b| {
            b.contains("\"state\":\"ok\"") && b.contains("\"games\":300")
        })
        .await;
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["push"]["urls"].as_array().unwrap().len(), 3);
    assert_eq!(status["push"]["unpushed"], json!([]), "{status}");
    assert_eq!(status["push"]["boards"]["b250"]["round"], "r0und3");
    assert_eq!(status["push"]["boards"]["b250"]["accepted"], true);
    let (_, _, pgn) = hub.get_anonymous("/public/round.pgn", "").await;
    assert_eq!(numbers(&pgn), (1..=300).collect::<Vec<u32>>());
    // A poller of one range (chess.com's way) gets its boards, and 304
    // with its ETag while they do not change.
    let (status, head, range) = hub
        .get_anonymous("/public/round.pgn?boards=101-200", "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(numbers(&range), (101..=200).collect::<Vec<u32>>());
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .unwrap()
        .trim()
        .to_owned();
    let (status, _, _) = hub
        .get_anonymous(
            "/public/round.pgn?boards=101-200",
            &format!("If-None-Match: {etag}\r\n"),
        )
        .await;
    assert_eq!(status, 304);
    let (status, _, _) = hub.get_anonymous("/public/round.pgn?boards=9-2", "").await;
    assert_eq!(status, 400);

    // A change on board 157 goes to the second lichess round only.
    let before = lichess.pushed().len();
    start_157_and_see_it_pushed_to(&hub, &lichess, broker.port, "r0und2").await;
    assert!(
        lichess.pushed()[before..]
            .iter()
            .all(|p| p.path == "/api/broadcast/round/r0und2/push"),
        "an unchanged lichess round was pushed again"
    );
    let (_, _, range) = hub
        .get_anonymous(
            "/public/round.pgn?boards=101-200",
            &format!("If-None-Match: {etag}\r\n"),
        )
        .await;
    assert_eq!(numbers(&range).len(), 100, "the range changed: a new text");
    for pushed in lichess.pushed() {
        assert!(games(&pushed.body).len() <= 100);
        assert_eq!(
            pushed.authorization.as_deref(),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
    // At most one request per lichess round every interval (1 s), counted
    // from each request (the stand-in's arrival instants: less what one
    // request's way there may take beyond the next's).
    for round in ["r0und1", "r0und2", "r0und3"] {
        let path = format!("/api/broadcast/round/{round}/push");
        let times: Vec<Instant> = lichess
            .pushed()
            .iter()
            .filter(|p| p.path == path)
            .map(|p| p.at)
            .collect();
        for pair in times.windows(2) {
            assert!(
                pair[1] - pair[0] >= Duration::from_millis(750),
                "{round}: two requests {:?} apart",
                pair[1] - pair[0]
            );
        }
    }
    drop(hub);
    assert!(hall.terminate());
}

/// The broadcast the hub makes its lichess rounds in (`--lichess-broadcast`).
const TOURNAMENT: &str = "ABcd1234";

/// A hub pushing the round to lichess rounds it makes itself.
async fn making_hub(
    broker_port: u16,
    dir: &std::path::Path,
    lichess: &Lichess,
    pairings: &str,
    token: &str,
    passwords: &str,
) -> Hub {
    let state = dir.join("hub-state").display().to_string();
    Hub::start(
        broker_port,
        dir,
        &[
            "--passwords",
            passwords,
            "--state-dir",
            &state,
            "--round",
            "2",
            "--pairings",
            pairings,
            "--lichess-broadcast",
            TOURNAMENT,
            "--push-interval-seconds",
            "1",
            "--lichess-token-file",
            token,
            "--lichess-url",
            &lichess.url(),
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_of_250_boards_gets_three_lichess_rounds_made_once() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let hall = ManyBoards::start(dir.path(), 250).await;
    let pairings = dir.path().join("round2.csv");
    let csv: String = (1..=250)
        .map(|b| format!("{b},White {b},Black {b}\n"))
        .collect();
    std::fs::write(&pairings, csv).unwrap();
    let pairings = pairings.display().to_string();
    let passwords = dir.path().join("passwd").display().to_string();
    let (ok, out, err) =
        hub_command(strings(&["passwd", &passwords, "ann"]), "s3cret pass\n").await;
    assert!(ok, "{out}{err}");
    let lichess = Lichess::start(Vec::new()).await;
    lichess.expect_token(TOKEN);
    let token = token_file(dir.path());
    // The same hub each time (the state dir is the test's).
    let making_hub_here = || {
        making_hub(
            hall.broker.port,
            dir.path(),
            &lichess,
            &pairings,
            &token,
            &passwords,
        )
    };
    let hub = making_hub_here().await;

    // Three rounds made, named as an organiser would, boards 1-100,
    // 101-200 and 201-250 to them in board order.
    // (`"games":250` alone would match the pairings' count.)
    let status = hub
        .wait_for("/broadcast.json", "the push settled", |b| {
            serde_json::from_str::<Value>(b).is_ok_and(|s| {
                s["push"]["state"] == "ok"
                    && s["push"]["games"] == 250
                    && s["push"]["boards"]["b250"]["accepted"] == true
            })
        })
        .await;
    let made = lichess.made();
    let names: Vec<&str> = made.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["Round 2 I", "Round 2 II", "Round 2 III"]);
    assert!(made.iter().all(|m| m.tournament == TOURNAMENT), "{made:?}");
    let ids: Vec<String> = made.iter().map(|m| m.id.clone()).collect();
    let making = lichess.making.lock().unwrap().clone();
    assert_eq!(making.len(), 3, "{making:#?}");
    for request in &making {
        assert_eq!(request.path, format!("/broadcast/{TOURNAMENT}/new"));
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/x-www-form-urlencoded")
        );
    }
    assert_eq!(making[0].body, "name=Round+2+I");
    for (index, id) in ids.iter().enumerate() {
        let path = format!("/api/broadcast/round/{id}/push");
        let size = if index == 2 { 50 } else { 100 };
        let full = lichess
            .wait(0, &format!("{id}'s boards"), |p| {
                p.path == path && games(&p.body).len() == size
            })
            .await;
        let first = 100 * index as u32 + 1;
        assert_eq!(
            numbers(&lichess.pushed()[full].body),
            (first..first + size as u32).collect::<Vec<u32>>()
        );
    }
    // Nothing went anywhere else (no push before its round was made).
    for pushed in lichess.pushed() {
        assert!(
            ids.iter()
                .any(|id| pushed.path == format!("/api/broadcast/round/{id}/push")),
            "{}",
            pushed.path
        );
    }
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["push"]["broadcast"], TOURNAMENT);
    assert_eq!(
        status["push"]["made"],
        json!(made
            .iter()
            .map(|m| json!({"name": m.name, "id": m.id}))
            .collect::<Vec<Value>>())
    );
    assert_eq!(status["push"]["urls"].as_array().unwrap().len(), 3);
    assert_eq!(status["push"]["boards"]["b250"]["round"], ids[2].as_str());
    assert_eq!(status["push"]["unpushed"], json!([]), "{status}");
    assert!(!hub.log().contains(TOKEN), "the token was logged");

    // The hub started again with its state: no round made again, the
    // pushes go on to the same three.
    drop(hub);
    let before = lichess.pushed().len();
    let hub = making_hub_here().await;
    for id in &ids {
        let path = format!("/api/broadcast/round/{id}/push");
        lichess
            .wait(before, &format!("{id} after the restart"), |p| {
                p.path == path
            })
            .await;
    }
    start_157_and_see_it_pushed_to(&hub, &lichess, hall.broker.port, &ids[1]).await;
    assert_eq!(lichess.made(), made, "a round was made again");
    assert_eq!(lichess.making.lock().unwrap().len(), 3);
    assert!(lichess.pushed()[before..].iter().all(|p| ids
        .iter()
        .any(|id| p.path == format!("/api/broadcast/round/{id}/push"))));

    // The next round, loaded on the running hub's desk, gets its own.
    let round3 = dir.path().join("round3.csv");
    let csv: String = (1..=250)
        .map(|b| format!("{b},Black {b},White {b}\n"))
        .collect();
    std::fs::write(&round3, csv).unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, "s3cret pass\n").unwrap();
    let url = format!("http://127.0.0.1:{}", hub.port);
    let (ok, out, err) = hub_command(
        kit::hall::event::desk_command(
            &url,
            "ann",
            &password.display().to_string(),
            &[
                "load",
                "--round",
                "3",
                "--pairings",
                &round3.display().to_string(),
            ],
        ),
        "",
    )
    .await;
    assert!(ok, "{out}{err}");
    let next = lichess
        .wait(before, "round 3's last boards", |p| {
            games(&p.body).len() == 50
                && games(&p.body)
                    .iter()
                    .all(|g| tag(g, "Round").is_some_and(|r| r.starts_with("3.")))
        })
        .await;
    let made3: Vec<String> = lichess.made()[3..].iter().map(|m| m.name.clone()).collect();
    assert_eq!(made3, ["Round 3 I", "Round 3 II", "Round 3 III"]);
    assert_eq!(
        lichess.pushed()[next].path,
        format!("/api/broadcast/round/{}/push", lichess.made()[5].id)
    );
    assert!(!hub.log().contains(TOKEN), "the token was logged");
    drop(hub);
    assert!(hall.terminate());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_lichess_would_not_make_is_retried_and_nothing_pushed_meanwhile() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let hall = ManyBoards::start(dir.path(), 3).await;
    // The first two attempts to make the round fail (lichess down).
    let lichess = Lichess::start(vec![(503, None), (503, None)]).await;
    lichess.expect_token(TOKEN);
    let token = token_file(dir.path());
    let hub = Hub::start(
        hall.broker.port,
        dir.path(),
        &[
            "--round",
            "1",
            "--lichess-broadcast",
            TOURNAMENT,
            "--lichess-round-name",
            "Open, round {round}",
            "--push-interval-seconds",
            "1",
            "--lichess-token-file",
            &token,
            "--lichess-url",
            &lichess.url(),
        ],
    )
    .await;
    // The error where push errors are shown: the status and the boards.
    let failing = hub
        .wait_for("/broadcast.json", "the failure shown", |b| {
            serde_json::from_str::<Value>(b).is_ok_and(|s| {
                s["push"]["state"] == "retrying"
                    && s["push"]["boards"]
                        .as_object()
                        .is_some_and(|boards| boards.values().any(|g| g["error"].is_string()))
            })
        })
        .await;
    let failing: Value = serde_json::from_str(&failing).unwrap();
    let error = failing["push"]["last_error"].as_str().unwrap();
    assert!(
        error.contains("making the lichess round \"Open, round 1\"") && error.contains("HTTP 503"),
        "{error}"
    );
    let board = failing["push"]["boards"]
        .as_object()
        .unwrap()
        .values()
        .find(|g| g["error"].is_string())
        .unwrap();
    assert!(
        board["error"]
            .as_str()
            .unwrap()
            .starts_with("no lichess round yet: making the lichess round"),
        "{board}"
    );
    assert!(lichess.pushed().is_empty(), "pushed to a round not made");
    // Made at the third attempt, named without a numeral (it fits), and
    // the boards pushed to it.
    hub.wait_for("/broadcast.json", "the push settled", |b| {
        serde_json::from_str::<Value>(b).is_ok_and(|s| {
            s["push"]["state"] == "ok"
                && s["push"]["games"] == 3
                && s["push"]["last_error"].is_null()
        })
    })
    .await;
    let made = lichess.made();
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0].name, "Open, round 1", "the organiser's name");
    let making = lichess.making.lock().unwrap().clone();
    assert_eq!(making.len(), 3);
    // Retried after a wait that doubles (1 s, then 2 s).
    let first = making[1].at - making[0].at;
    let second = making[2].at - making[1].at;
    assert!(first >= Duration::from_millis(900), "{first:?}");
    assert!(second >= Duration::from_millis(1900), "{second:?}");
    let path = format!("/api/broadcast/round/{}/push", made[0].id);
    assert!(!lichess.pushed().is_empty());
    for pushed in lichess.pushed() {
        assert_eq!(pushed.path, path);
        assert!(pushed.at > making[2].at);
    }
    assert!(!hub.log().contains(TOKEN), "the token was logged");
    drop(hub);
    assert!(hall.terminate());
}
