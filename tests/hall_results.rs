//! Results out, end to end (issue 30 item 4): a real mosquitto (the
//! test's own), the real daemon with three boards, the hub with a state
//! directory; round 2 of a TRF with two byes is loaded and sent from the
//! desk (`chessclock-hall round`), played and ended by an arbiter over the
//! broker. The hub's TRF26 and TRF16 exports are read back by a reader
//! written here from the format's description (FIDE C.02.03 annex A),
//! sharing no code with the hub's writer, and checked against every
//! board's own record (its state's result and its game's tags, from
//! `/boards.json`); the CSV, the round's bulletin and the event's PGN
//! too. Then a board's record changes after the round is closed: the
//! disagreement is flagged in `/results.json`, the TRF exports refuse
//! until a correction on the desk settles it, and the corrected export is
//! read back again. Serialised; every wait has a deadline and waits for a
//! condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::collections::BTreeMap;

use serde_json::{json, Value};

use kit::hall::event::{daemon, fixture, hall, strings};
use kit::hall::round::{games, tag, Arbiter};
use kit::hall::trf;
use kit::hall::{Broker, Hub};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Checks a TRF export against the boards' own records: every player's
/// points are the sum of its line's results; each board's game of round 2
/// (its `Round` tag `2.N`, its players' names) is in both players' lines
/// with the board's result; the byes are carried.
fn check_against_boards(text: &str, boards: &Value) -> trf::File {
    let file = trf::read(text);
    assert_eq!(file.players.len(), 8, "{text}");
    for (rank, player) in &file.players {
        let sum: u32 = player.rounds.iter().map(|r| trf::tenths(r.result)).sum();
        assert_eq!(player.points, sum, "player {rank}'s points\n{text}");
    }
    let rank_of: BTreeMap<&str, u32> = file
        .players
        .iter()
        .map(|(rank, p)| (p.name.as_str(), *rank))
        .collect();
    let mut played = 0;
    for (id, board) in boards["boards"].as_object().unwrap() {
        let pgn = board["pgn"].as_str().unwrap();
        let round = tag(pgn, "Round").unwrap();
        assert!(round.starts_with("2."), "{id}: {pgn}");
        let white = rank_of[tag(pgn, "White").unwrap()];
        let black = rank_of[tag(pgn, "Black").unwrap()];
        let result = board["state"]["result"]["result"].as_str().unwrap();
        let (w, b) = match result {
            "1-0" => ('1', '0'),
            "0-1" => ('0', '1'),
            "1/2-1/2" => ('=', '='),
            other => panic!("{id}: result {other}"),
        };
        assert_eq!(
            file.players[&white].rounds[1],
            trf::Round {
                opponent: black,
                colour: 'w',
                result: w
            },
            "{id} ({result}): white, player {white}\n{text}"
        );
        assert_eq!(
            file.players[&black].rounds[1],
            trf::Round {
                opponent: white,
                colour: 'b',
                result: b
            },
            "{id} ({result}): black, player {black}\n{text}"
        );
        played += 1;
    }
    assert_eq!(played, 3);
    // The byes of round 2: 5 a half point (0 before), 8 the pairing's
    // (1/2 before).
    for (rank, code, points) in [(5, 'H', 5), (8, 'U', 15)] {
        let player = &file.players[&rank];
        assert_eq!(
            player.rounds[1],
            trf::Round {
                opponent: 0,
                colour: '-',
                result: code
            },
            "{text}"
        );
        assert_eq!(player.points, points, "{text}");
    }
    file
}

fn record<'f>(file: &'f trf::File, code: &str) -> Vec<&'f str> {
    file.records
        .iter()
        .filter(|(c, _)| c == code)
        .map(|(_, rest)| rest.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_results_go_out_as_trf26_trf16_csv_and_pgn_and_read_back_as_the_boards_say() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let (_bus, daemon, _client) = daemon(dir.path(), &broker).await;
    let trf = fixture("round2-byes.trf").display().to_string();
    let state = dir.path().join("hub-state").display().to_string();
    let passwords = dir.path().join("passwd").display().to_string();
    let (ok, out, err) = hall(strings(&["passwd", &passwords, "ann"]), "s3cret pass\n").await;
    assert!(ok, "{out}{err}");
    let password = dir.path().join("password");
    std::fs::write(&password, "s3cret pass\n").unwrap();
    let password = password.display().to_string();
    let port = kit::hall::round::free_port();
    let hub = Hub::start_on(
        broker.port,
        port,
        dir.path().join("hub.log"),
        &["--state-dir", &state, "--passwords", &passwords],
    )
    .await;
    hub.wait_for("/boards.json", "the three boards", |b| b.contains("\"b3\""))
        .await;
    let url = format!("http://127.0.0.1:{port}");
    let desk = |rest: &[&str]| kit::hall::event::desk_command(&url, "ann", &password, rest);
    let (ok, out, err) = hall(
        desk(&[
            "load",
            "--round",
            "2",
            "--pairings",
            &trf,
            "--control",
            "600+5",
        ]),
        "",
    )
    .await;
    assert!(ok, "{out}{err}");
    let (ok, out, err) = hall(desk(&["send", "--round", "2", "--yes"]), "").await;
    assert!(ok, "{out}{err}");
    hub.wait_for("/boards.json", "round 2 on the boards", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        ["b1", "b2", "b3"].iter().all(|id| {
            v["boards"][id]["pgn"]
                .as_str()
                .is_some_and(|p| p.contains("[Round \"2."))
        })
    })
    .await;
    let mut arbiter = Arbiter::connect(broker.port).await;
    for (board, result) in [("b1", "0-1"), ("b2", "1/2-1/2"), ("b3", "1-0")] {
        let reply = arbiter.command(board, json!({"command": "start"})).await;
        assert_eq!(reply["ok"], true, "{reply}");
        let reply = arbiter
            .command(board, json!({"command": "set-result", "result": result}))
            .await;
        assert_eq!(reply["ok"], true, "{reply}");
    }
    hub.wait_for("/results.json", "three results", |body| {
        let v: Value = serde_json::from_str(body).unwrap();
        v["games"]
            .as_array()
            .is_some_and(|g| g.len() == 3 && g.iter().all(|g| g["result"].is_string()))
    })
    .await;
    let (_, _, boards) = hub.get("/boards.json", "").await;
    let boards: Value = serde_json::from_str(&boards).unwrap();

    // TRF26: the results and points as the boards say, the byes, and the
    // records TRF26 adds.
    let (status, _, trf26) = hub.get_anonymous("/results.trf26", "").await;
    assert_eq!(status, 200, "{trf26}");
    let file = check_against_boards(&trf26, &boards);
    assert_eq!(record(&file, "142"), ["5"], "{trf26}");
    assert_eq!(record(&file, "222"), ["600+5"], "{trf26}");
    assert_eq!(record(&file, "240"), ["H 002    5"], "{trf26}");
    assert_eq!(record(&file, "012"), ["Hall Open 2026"], "{trf26}");
    // TRF16: the same players' lines, none of TRF26's records.
    let (status, _, trf16) = hub.get_anonymous("/results.trf", "").await;
    assert_eq!(status, 200, "{trf16}");
    let file16 = check_against_boards(&trf16, &boards);
    for code in ["142", "222", "240", "###"] {
        assert!(record(&file16, code).is_empty(), "{code}: {trf16}");
    }
    assert_eq!(record(&file16, "XXR"), ["5"], "{trf16}");
    assert_eq!(hub.get_anonymous("/results.trf16", "").await.2, trf16);
    assert_eq!(
        hub.get_anonymous("/rounds/2/results.trf26", "").await.2,
        trf26
    );

    // CSV and Vega.
    let (status, head, csv) = hub.get_anonymous("/results.csv", "").await;
    assert_eq!(status, 200, "{csv}");
    assert!(head.contains("content-type: text/csv"), "{head}");
    assert!(
        csv.contains("2,1,\"Eta, Ed\",7,\"Alpha, Anna\",1,0-1,normal,"),
        "{csv}"
    );
    assert!(
        csv.contains("2,,\"Theta, Tom\",8,,,U,pairing-allocated bye,,\n"),
        "{csv}"
    );
    assert_eq!(
        hub.get_anonymous("/results.res", "").await.2,
        "3 2\n7 1 0\n4 2 5\n6 3 1\n"
    );

    // The bulletin: the finished games, with the desk's results, open to
    // anyone; the event's PGN holds them all.
    let (status, _, bulletin) = hub.get_anonymous("/bulletin.pgn", "").await;
    assert_eq!(status, 200, "{bulletin}");
    let round = games(&bulletin);
    assert_eq!(round.len(), 3, "{bulletin}");
    for (game, (number, result)) in round.iter().zip([(1, "0-1"), (2, "1/2-1/2"), (3, "1-0")]) {
        assert_eq!(
            tag(game, "Round"),
            Some(format!("2.{number}").as_str()),
            "{game}"
        );
        assert_eq!(tag(game, "Result"), Some(result), "{game}");
        assert!(game.trim_end().ends_with(result), "{game}");
        assert_eq!(tag(game, "ClockStatus"), None, "{game}");
    }
    assert_eq!(
        hub.get_anonymous("/rounds/2/bulletin.pgn", "").await.2,
        bulletin
    );
    assert_eq!(hub.get_anonymous("/event.pgn", "").await.2, bulletin);

    // Closed; then board 2's own record changes (an arbiter on the
    // board): the desk keeps its result, the disagreement is flagged and
    // nothing is chosen for the pairing program.
    let (ok, out, err) = hall(desk(&["close", "--round", "2"]), "").await;
    assert!(ok, "{out}{err}");
    let reply = arbiter
        .command("b2", json!({"command": "set-result", "result": "1-0"}))
        .await;
    assert_eq!(reply["ok"], true, "{reply}");
    let results = hub
        .wait_for("/results.json", "the disagreement", |body| {
            let v: Value = serde_json::from_str(body).unwrap();
            v["disagreements"].as_array().is_some_and(|d| !d.is_empty())
        })
        .await;
    let results: Value = serde_json::from_str(&results).unwrap();
    assert_eq!(
        results["disagreements"],
        json!([{"board": 2, "id": "b2", "desk": "1/2-1/2", "board_record": "1-0",
                "source": "state", "corrected": false}]),
        "{results}"
    );
    assert_eq!(results["games"][1]["result"], "1/2-1/2", "{results}");
    for path in ["/results.trf26", "/results.trf", "/results.res"] {
        let (status, _, body) = hub.get_anonymous(path, "").await;
        assert_eq!(status, 409, "{path}: {body}");
        assert!(
            body.contains("board 2 (b2): the desk has 1/2-1/2, the board's state says 1-0"),
            "{path}: {body}"
        );
    }
    let (_, _, csv) = hub.get_anonymous("/results.csv", "").await;
    assert!(csv.contains(",1/2-1/2,normal,arbiter,1-0\n"), "{csv}");

    // The arbiter settles it on the desk: the board's result stands.
    let (ok, out, err) = hall(
        desk(&["correct", "--round", "2", "--board", "2", "--result", "1-0"]),
        "",
    )
    .await;
    assert!(ok, "{out}{err}");
    let (status, _, results) = hub.get_anonymous("/results.json", "").await;
    assert_eq!(status, 200);
    let results: Value = serde_json::from_str(&results).unwrap();
    assert_eq!(results["disagreements"], json!([]), "{results}");
    let (_, _, boards) = hub.get("/boards.json", "").await;
    let boards: Value = serde_json::from_str(&boards).unwrap();
    let (status, _, trf26) = hub.get_anonymous("/results.trf26", "").await;
    assert_eq!(status, 200, "{trf26}");
    let file = check_against_boards(&trf26, &boards);
    assert_eq!(file.players[&4].rounds[1].result, '1', "{trf26}");
    assert_eq!(file.players[&4].points, 20, "{trf26}");
    drop(hub);
    assert!(daemon.terminate().success());
}
