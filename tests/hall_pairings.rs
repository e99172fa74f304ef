//! Pairings and results end to end: a real mosquitto (the test's own), the
//! real daemon with three boards, `chessclock-hall pairings` sending a
//! TRF16 round (players, `Round "R.B"`, the control where no game runs),
//! the arbiter's results over the broker, and the hub's exports compared
//! with the hand-written expected files (`tests/data/hall/round2-*`).
//! Serialised; every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use kit::daemon::{Client, Daemon, PrivateBus};
use kit::hall::round::{game_of, tag, Arbiter, HALL};
use kit::hall::{Broker, Hub, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hall")
        .join(name)
}

/// Runs `chessclock-hall ARGS`: exit success, stdout, stderr.
async fn hall(args: Vec<String>) -> (bool, String, String) {
    tokio::task::spawn_blocking(move || {
        let output = Command::new(crate::kit::binary("chessclock-hall"))
            .args(&args)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

fn args(broker: u16, rest: &[&str]) -> Vec<String> {
    let mut all = vec![
        "--broker".to_owned(),
        format!("mqtt://127.0.0.1:{broker}"),
        "--hall".to_owned(),
        HALL.to_owned(),
        "pairings".to_owned(),
    ];
    all.extend(rest.iter().map(|a| (*a).to_owned()));
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trf_round_names_the_boards_and_its_results_go_back_as_trf_and_vega() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let (_bus, daemon, client) = kit::hall::event::daemon(dir.path(), &broker).await;
    let trf = fixture("round2.trf").display().to_string();
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &["--pairings", &trf, "--round", "2"],
    )
    .await;
    hub.wait_for("/boards.json", "the three boards", |b| b.contains("\"b3\""))
        .await;

    // A game runs on board 3: it keeps its control.
    let mut arbiter = Arbiter::connect(broker.port).await;
    let reply = arbiter.command("b3", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");

    // A dry run sends nothing.
    let (ok, out, err) = hall(args(
        broker.port,
        &[
            "--trf",
            &trf,
            "--round",
            "2",
            "--control",
            "600+5",
            "--dry-run",
        ],
    ))
    .await;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(
            "board 1 (b1): would send: new game 600+5; Round 2.1, Beta, Bert - Alpha, Anna"
        ),
        "{out}"
    );

    let (ok, out, err) = hall(args(
        broker.port,
        &[
            "--trf",
            &trf,
            "--round",
            "2",
            "--control",
            "600+5",
            "--arbiter",
            "Ann Arbiter",
        ],
    ))
    .await;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("board 1 (b1): ok: new game 600+5; Round 2.1, Beta, Bert - Alpha, Anna"),
        "{out}"
    );
    assert!(
        out.contains("board 2 (b2): ok: new game 600+5; Round 2.2, Zeta, Zed - Epsilon, Eve"),
        "{out}"
    );
    assert!(
        out.contains("board 3 (b3): ok: a game is running: its control (300) is left as it is; Round 2.3, Delta, Dan - Gamma, Gina"),
        "{out}"
    );

    // The boards carry the players and the control; the history the
    // arbiter's name.
    let boards = hub
        .wait_for("/boards.json", "the new controls", |b| {
            let v: Value = serde_json::from_str(b).unwrap();
            v["boards"]["b2"]["snapshot"]["control"] == "600+5"
                && v["boards"]["b1"]["pgn"]
                    .as_str()
                    .is_some_and(|p| p.contains("Beta, Bert"))
                && v["boards"]["b3"]["pgn"]
                    .as_str()
                    .is_some_and(|p| p.contains("Gamma, Gina"))
        })
        .await;
    let boards: Value = serde_json::from_str(&boards).unwrap();
    assert_eq!(boards["boards"]["b1"]["snapshot"]["control"], "600+5");
    assert_eq!(boards["boards"]["b3"]["snapshot"]["control"], "300");
    assert_eq!(boards["boards"]["b3"]["snapshot"]["running"], "white");
    let history = client.history().await;
    assert!(
        history
            .to_string()
            .contains("\"caller_name\":\"Ann Arbiter\""),
        "{history}"
    );
    let (_, _, pgn) = hub.get("/round.pgn", "").await;
    let game = game_of(&pgn, "b1").unwrap();
    assert_eq!(tag(&game, "White"), Some("Beta, Bert"), "{game}");
    assert_eq!(tag(&game, "Black"), Some("Alpha, Anna"), "{game}");
    assert_eq!(tag(&game, "Round"), Some("2.1"), "{game}");
    assert_eq!(tag(&game, "BlackElo"), Some("2650"), "{game}");
    let game = game_of(&pgn, "b3").unwrap();
    assert_eq!(tag(&game, "Round"), Some("2.3"), "{game}");

    // No result yet: the exports say so.
    let (status, _, res) = hub.get("/results.res", "").await;
    assert_eq!((status, res.as_str()), (200, "0 2\n"));

    // The arbiters' results, then the exports.
    for (board, result) in [("b1", "0-1"), ("b2", "1/2-1/2"), ("b3", "1-0")] {
        let reply = arbiter
            .command(board, json!({"command": "set-result", "result": result}))
            .await;
        assert_eq!(reply["ok"], true, "{reply}");
    }
    hub.wait_for("/results.json", "three results", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        v["games"]
            .as_array()
            .is_some_and(|g| g.iter().all(|g| g["result"].is_string()))
    })
    .await;
    let (status, head, trf_out) = hub.get("/results.trf", "").await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/plain"), "{head}");
    assert_eq!(
        trf_out,
        std::fs::read_to_string(fixture("round2-results.trf")).unwrap()
    );
    let (status, _, res) = hub.get("/results.res", "").await;
    assert_eq!(status, 200);
    assert_eq!(res, std::fs::read_to_string(fixture("round2.res")).unwrap());
    let (_, _, pgn) = hub.get("/round.pgn", "").await;
    assert_eq!(
        tag(&game_of(&pgn, "b2").unwrap(), "Result"),
        Some("1/2-1/2")
    );
    drop(hub);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_pairings_name_boards_and_report_the_ones_without_a_board() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let config = kit::hall::event::hall_daemon_config(
        dir.path(),
        &format!("mqtt://127.0.0.1:{}", broker.port),
        "pi1",
        &["b1", "top"].map(kit::hall::event::plain_board),
        "",
    );
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let _client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;

    // Board 2 is "top" by the map; board 7 has no board.
    let csv = dir.path().join("round.csv");
    std::fs::write(
        &csv,
        "board,white,black,control\n1,\"Carlsen, Magnus\",Caruana,180+2\n2,Ding,Gukesh,\n7,A,B,\n",
    )
    .unwrap();
    let map = dir.path().join("boards.csv");
    std::fs::write(&map, "2,top\n").unwrap();
    let csv_arg = csv.display().to_string();
    let map_arg = map.display().to_string();
    let (ok, out, err) = hall(args(
        broker.port,
        &["--csv", &csv_arg, "--round", "3", "--boards", &map_arg],
    ))
    .await;
    assert!(!ok, "board 7 has no board: {out}{err}");
    assert!(
        out.contains("board 1 (b1): ok: new game 180+2; Round 3.1, Carlsen, Magnus - Caruana"),
        "{out}"
    );
    assert!(
        out.contains("board 2 (top): ok: Round 3.2, Ding - Gukesh"),
        "{out}"
    );
    assert!(out.contains("board 7: FAILED: no hall board"), "{out}");

    let hub = Hub::start(broker.port, dir.path(), &["--round", "3"]).await;
    let pgn = hub
        .wait_for("/round.pgn", "the named boards", |p| {
            p.contains("Carlsen, Magnus") && p.contains("Gukesh")
        })
        .await;
    let game = game_of(&pgn, "top").unwrap();
    assert_eq!(tag(&game, "White"), Some("Ding"), "{game}");
    assert_eq!(tag(&game, "Round"), Some("3.2"), "{game}");
    let (status, _, _) = hub.get("/results.trf", "").await;
    assert_eq!(status, 404);

    // Bad input: the line and column, nothing sent.
    std::fs::write(&csv, "1,A,B\n1,C,D\n").unwrap();
    let (ok, out, err) = hall(args(broker.port, &["--csv", &csv_arg, "--round", "3"])).await;
    assert!(!ok);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("round.csv: line 2, column 1: board 1 again (first on line 1)"),
        "{err}"
    );
    drop(hub);
    assert!(daemon.terminate().success());
}
