//! The event desk end to end: a real mosquitto (the test's own), the real
//! daemon with three boards, the hub with a state directory
//! (`--state-dir`): a round's pairings sent a second time leave its
//! finished games (and their results, in every export) as they are, even
//! once a board has moved on to another game; a hub restarted on its
//! state directory keeps the event: its rounds, results and the exports of
//! a closed round after the next one started; a second hub on the same
//! directory is refused; the desk's page (headless chromium) loads a
//! round's file, reviews it and sends it after a confirm. Serialised; every wait has a deadline and waits
//! for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use serde_json::{json, Value};

use kit::hall::event::{daemon, fixture, hall, strings};
use kit::hall::round::{game_of, tag, Arbiter, HALL};
use kit::hall::{arbiters, Broker, Hub, ARBITER, ARBITER_PASSWORD, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `POST path` with a JSON body and no session: status, body.
async fn post(port: u16, path: &str, body: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: hub\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("the hub answered")
        .unwrap();
    let (status, _, body) = kit::hall::http_answer(&String::from_utf8(answer).unwrap());
    (status, body)
}

fn all_decided(body: &str) -> bool {
    let v: Value = serde_json::from_str(body).unwrap();
    v["games"]
        .as_array()
        .is_some_and(|g| !g.is_empty() && g.iter().all(|g| g["result"].is_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_s_pairings_sent_again_keep_its_finished_games_and_results() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let (_bus, daemon, _client) = daemon(dir.path(), &broker).await;
    let trf = fixture("round2.trf").display().to_string();
    let state = dir.path().join("hub-state").display().to_string();
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &["--state-dir", &state, "--pairings", &trf, "--round", "2"],
    )
    .await;
    hub.wait_for_boards(&["b1", "b2", "b3"]).await;
    let send = strings(&[
        "--broker",
        &format!("mqtt://127.0.0.1:{}", broker.port),
        "--hall",
        HALL,
        "pairings",
        "--trf",
        &trf,
        "--round",
        "2",
        "--control",
        "600+5",
    ]);
    let (ok, out, err) = hall(send.clone(), "").await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("board 1 (b1): ok: new game 600+5"), "{out}");
    hub.wait_for("/boards.json", "the boards named", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        ["b1", "b2", "b3"].iter().all(|id| {
            v["boards"][id]["pgn"]
                .as_str()
                .is_some_and(|p| p.contains("[Round \"2."))
        })
    })
    .await;

    // The games are played and end.
    let mut arbiter = Arbiter::connect(broker.port).await;
    for (board, result) in [("b1", "0-1"), ("b2", "1/2-1/2"), ("b3", "1-0")] {
        let reply = arbiter.command(board, json!({"command": "start"})).await;
        assert_eq!(reply["ok"], true, "{reply}");
        let reply = arbiter
            .command(board, json!({"command": "set-result", "result": result}))
            .await;
        assert_eq!(reply["ok"], true, "{reply}");
    }
    hub.wait_for("/results.json", "three results", all_decided)
        .await;
    let expected_res = std::fs::read_to_string(fixture("round2.res")).unwrap();
    let expected_trf = std::fs::read_to_string(fixture("round2-results.trf")).unwrap();
    assert_eq!(hub.get("/results.res", "").await.2, expected_res);

    // The same pairings again: a dry run says what it would do (nothing
    // to the finished games), then the sending.
    let mut dry = send.clone();
    dry.push("--dry-run".to_owned());
    let (ok, out, err) = hall(dry, "").await;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(
            "board 1 (b1): nothing to send: its game of round 2.1 is over (0-1): left as it is"
        ),
        "{out}"
    );
    let (ok, out, err) = hall(send, "").await;
    assert!(ok, "{out}{err}");
    for board in 1..=3 {
        assert!(
            out.contains(&format!(
                "board {board} (b{board}): nothing to send: its game of round 2.{board} is over"
            )),
            "{out}"
        );
    }
    assert!(!out.contains("new game"), "{out}");
    // The boards still have their results; so do the exports.
    let (_, _, boards) = hub.get("/boards.json", "").await;
    let boards: Value = serde_json::from_str(&boards).unwrap();
    assert_eq!(boards["boards"]["b1"]["state"]["result"]["result"], "0-1");
    assert_eq!(hub.get("/results.res", "").await.2, expected_res);
    assert_eq!(hub.get("/results.trf", "").await.2, expected_trf);

    // A board that moves on to another game (an arbiter's new game):
    // the round keeps its game, its result and its final PGN.
    let reply = arbiter
        .command("b1", json!({"command": "new-game", "control": "60"}))
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    hub.wait_for("/boards.json", "b1's new game", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        v["boards"]["b1"]["snapshot"]["control"] == "60"
    })
    .await;
    assert_eq!(hub.get("/results.res", "").await.2, expected_res);
    assert_eq!(hub.get("/results.trf", "").await.2, expected_trf);
    assert_eq!(hub.get("/rounds/2/results.res", "").await.2, expected_res);
    let (_, _, pgn) = hub.get("/round.pgn", "").await;
    let game = game_of(&pgn, "b1").unwrap();
    assert_eq!(tag(&game, "Result"), Some("0-1"), "{game}");
    assert_eq!(tag(&game, "White"), Some("Beta, Bert"), "{game}");
    assert_eq!(tag(&game, "Round"), Some("2.1"), "{game}");
    let (_, _, results) = hub.get("/results.json", "").await;
    let results: Value = serde_json::from_str(&results).unwrap();
    assert_eq!(results["games"][0]["result"], "0-1", "{results}");
    drop(hub);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_restart_keeps_the_event_and_a_closed_round_s_exports() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let (_bus, daemon, _client) = daemon(dir.path(), &broker).await;
    let trf = fixture("round2.trf").display().to_string();
    let state = dir.path().join("hub-state").display().to_string();
    let passwords = arbiters(dir.path()).display().to_string();
    let password = dir.path().join("password");
    std::fs::write(&password, format!("{ARBITER_PASSWORD}\n")).unwrap();
    let password = password.display().to_string();
    let hub = Hub::with_arbiters(broker.port, dir.path(), &["--state-dir", &state]).await;
    let port = hub.port;
    hub.wait_for_boards(&["b1", "b2", "b3"]).await;
    let url = format!("http://127.0.0.1:{port}");
    let desk = |rest: &[&str]| kit::hall::event::desk_command(&url, ARBITER, &password, rest);

    // The desk's page: its own script, nothing inline; its API only for a
    // logged-in arbiter.
    let (status, _, page) = hub.get("/desk", "").await;
    assert_eq!(status, 200);
    assert!(page.contains("<script src=\"desk.js\"></script>"), "{page}");
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(!page.contains("style="), "{page}");
    assert_eq!(hub.get("/desk.js", "").await.0, 200);
    let (status, body) = post(port, "/api/rounds/close", "{\"round\": 1}").await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("log in"), "{body}");

    // Round 1: loaded, reviewed, sent, played, closed.
    let (ok, out, err) = hall(
        desk(&[
            "load",
            "--round",
            "1",
            "--pairings",
            &trf,
            "--control",
            "600+5",
        ]),
        "",
    )
    .await;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("round 1 (loaded): 3 board(s) would change"),
        "{out}"
    );
    let (ok, out, _) = hall(desk(&["send", "--round", "1"]), "").await;
    assert!(!ok, "no confirm, nothing sent: {out}");
    assert!(out.contains("nothing sent: give --yes"), "{out}");
    let (ok, out, err) = hall(desk(&["send", "--round", "1", "--yes"]), "").await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("board 1 (b1): sent"), "{out}");
    let mut arbiter = Arbiter::connect(broker.port).await;
    hub.wait_for("/boards.json", "round 1 on the boards", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        ["b1", "b2", "b3"].iter().all(|id| {
            v["boards"][id]["pgn"]
                .as_str()
                .is_some_and(|p| p.contains("[Round \"1."))
        })
    })
    .await;
    for (board, result) in [("b1", "1-0"), ("b2", "0-1"), ("b3", "1/2-1/2")] {
        let reply = arbiter.command(board, json!({"command": "start"})).await;
        assert_eq!(reply["ok"], true, "{reply}");
        let reply = arbiter
            .command(board, json!({"command": "set-result", "result": result}))
            .await;
        assert_eq!(reply["ok"], true, "{reply}");
    }
    hub.wait_for("/rounds/1/results.json", "round 1's results", all_decided)
        .await;
    let (ok, out, err) = hall(desk(&["close", "--round", "1"]), "").await;
    assert!(ok, "{out}{err}");
    let (_, _, res_1) = hub.get("/rounds/1/results.res", "").await;
    let (_, _, trf_1) = hub.get("/rounds/1/results.trf", "").await;
    let (_, _, pgn_1) = hub.get("/rounds/1/round.pgn", "").await;
    assert!(res_1.starts_with("3 1\n"), "{res_1}");

    // Round 2: the finished games of round 1 make way for it.
    let (ok, out, err) = hall(desk(&["load", "--round", "2", "--pairings", &trf]), "").await;
    assert!(ok, "{out}{err}");
    let (ok, out, err) = hall(desk(&["send", "--round", "2", "--yes"]), "").await;
    assert!(ok, "{out}{err}");
    hub.wait_for("/boards.json", "round 2 on the boards", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        ["b1", "b2", "b3"].iter().all(|id| {
            v["boards"][id]["pgn"]
                .as_str()
                .is_some_and(|p| p.contains("[Round \"2."))
                && v["boards"][id]["state"]["result"].is_null()
        })
    })
    .await;
    let reply = arbiter.command("b1", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    // Round 1's exports are as they were.
    assert_eq!(hub.get("/rounds/1/results.res", "").await.2, res_1);

    // The hub restarts on its state directory: the event is all there.
    drop(hub);
    let hub = Hub::start_on(
        broker.port,
        port,
        dir.path().join("hub-2.log"),
        &["--state-dir", &state, "--passwords", &passwords],
    )
    .await;
    let (status, _, event) = hub.get("/rounds.json", "").await;
    assert_eq!(status, 200, "{event}");
    let event: Value = serde_json::from_str(&event).unwrap();
    assert_eq!(event["current"], 2, "{event}");
    assert_eq!(event["rounds"][0]["status"], "closed", "{event}");
    assert_eq!(event["rounds"][0]["results"], 3, "{event}");
    assert_eq!(event["rounds"][1]["status"], "sent", "{event}");
    assert!(event["players"].as_array().unwrap().len() == 6, "{event}");
    assert_eq!(hub.get("/rounds/1/results.res", "").await.2, res_1);
    assert_eq!(hub.get("/rounds/1/results.trf", "").await.2, trf_1);
    assert_eq!(hub.get("/rounds/1/round.pgn", "").await.2, pgn_1);
    for board in ["b1", "b2", "b3"] {
        let game = game_of(&pgn_1, board).unwrap();
        assert!(tag(&game, "Round").unwrap().starts_with("1."), "{game}");
        assert_ne!(tag(&game, "Result"), Some("*"), "{game}");
    }
    // The current round is round 2, from the boards.
    let pgn = hub
        .wait_for("/round.pgn", "round 2's games", |p| {
            p.matches("[Round \"2.").count() == 3
        })
        .await;
    assert_eq!(tag(&game_of(&pgn, "b1").unwrap(), "Result"), Some("*"));

    // One hub per state directory.
    let (ok, out, err) = hall(
        strings(&[
            "--broker",
            &format!("mqtt://127.0.0.1:{}", broker.port),
            "--hall",
            HALL,
            "--listen",
            &format!("127.0.0.1:{}", kit::hall::round::free_port()),
            "--state-dir",
            &state,
        ]),
        "",
    )
    .await;
    assert!(!ok, "{out}");
    assert!(err.contains("in use by another chessclock-hall"), "{err}");
    drop(hub);
    assert!(daemon.terminate().success());
}

/// The desk's page in headless chromium: a logged-in arbiter loads a
/// round's file, sees the review, sends it after a confirm that lists
/// what changes; the boards get the round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_page_loads_reviews_and_sends_a_round_after_a_confirm() {
    use fantoccini::Locator;
    use kit::hall::browser::Browser;
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let (_bus, daemon, _client) = daemon(dir.path(), &broker).await;
    let state = dir.path().join("hub-state").display().to_string();
    let hub = Hub::with_arbiters(broker.port, dir.path(), &["--state-dir", &state]).await;
    hub.wait_for_boards(&["b1", "b2", "b3"]).await;
    let browser = Browser::start().await;
    let client = &browser.client;
    browser
        .log_in(&hub.url("/"), ARBITER, ARBITER_PASSWORD)
        .await;
    client
        .find(Locator::Id("desk-link"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait(
            "the desk",
            WAIT,
            "return document.getElementById('desk-user').textContent;",
            |t| t == "arbiter: ann",
        )
        .await;

    let form = client.find(Locator::Css("form#load")).await.unwrap();
    form.find(Locator::Css("input[name=round]"))
        .await
        .unwrap()
        .send_keys("2")
        .await
        .unwrap();
    form.find(Locator::Css("input[name=file]"))
        .await
        .unwrap()
        .send_keys(&fixture("round2.trf").display().to_string())
        .await
        .unwrap();
    form.find(Locator::Css("input[name=control]"))
        .await
        .unwrap()
        .send_keys("600+5")
        .await
        .unwrap();
    form.find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let review = browser
        .wait(
            "the review",
            WAIT,
            "return [document.querySelectorAll('#plans tbody tr').length,
                     document.getElementById('review-summary').textContent,
                     document.querySelector('#plans tbody tr')?.textContent];",
            |r| r[0] == 3,
        )
        .await;
    assert!(
        review[1]
            .as_str()
            .unwrap()
            .contains("3 board(s) would change, 0 game(s) started or over are kept"),
        "{review}"
    );
    assert!(
        review[2]
            .as_str()
            .unwrap()
            .contains("sends: new game 600+5; Round 2.1, Beta, Bert - Alpha, Anna"),
        "{review}"
    );
    // Nothing is on the boards before the confirm.
    let (_, _, boards) = hub.get("/boards.json", "").await;
    assert!(!boards.contains("Round \\\"2.1"), "{boards}");

    client
        .find(Locator::Id("send"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    let confirm = loop {
        match client.get_alert_text().await {
            Ok(text) => break text,
            Err(_) => {
                assert!(std::time::Instant::now() < deadline, "no confirm");
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            }
        }
    };
    assert!(
        confirm.contains("board 1: new game 600+5; Round 2.1, Beta, Bert - Alpha, Anna"),
        "{confirm}"
    );
    client.accept_alert().await.unwrap();
    browser
        .wait(
            "sent",
            WAIT,
            "return document.getElementById('desk-status').textContent;",
            |t| t == "sent",
        )
        .await;
    hub.wait_for("/boards.json", "round 2 on the boards", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        ["b1", "b2", "b3"].iter().all(|id| {
            v["boards"][id]["pgn"]
                .as_str()
                .is_some_and(|p| p.contains("[Round \"2."))
        })
    })
    .await;
    // The review now: nothing left to change.
    browser
        .wait(
            "the review after the sending",
            WAIT,
            "return document.getElementById('review-summary').textContent;",
            |t| {
                t.as_str()
                    .is_some_and(|t| t.contains(": 0 board(s) would change"))
            },
        )
        .await;
    browser.screenshot("desk").await;
    browser.close().await;
    drop(hub);
    assert!(daemon.terminate().success());
}
