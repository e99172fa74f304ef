//! Issue 30 items 5 and 6 (the hub's side), the page an arbiter needs,
//! in Debian's headless chromium (chromedriver, fantoccini) on the hub
//! binary with a real mosquitto of the test's own: board states as the
//! daemons publish them (retained, crafted here so that every case is on
//! one page at once) and the round's pairings given to the hub.
//!
//! On the arbiters' page (a hall screen's token): the players and board
//! numbers of the pairings (the daemon's names off the pairings); the time
//! of day of an arbiter call and of a flag fall; a finished game out of
//! the urgent boards; a restarted board marked "RESTARTED - resume"; times
//! in tenths below the board's threshold as its displays write them
//! (rounded up); a host with a radio on where radios are forbidden, a
//! clock not NTP-synchronised, an e-board whose count disagrees with the
//! clock's, a lost unit: each in words, ranked; the page's order is the
//! hub's `/boards.json` order. Every wait has a deadline and waits for a
//! condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::{json, Value};

use kit::hall::browser::{request, Browser};
use kit::hall::{Broker, Hub, SCREEN_TOKEN, WAIT};

const HALL: &str = "open";
/// The daemon's monotonic ms at the states' publication.
const MONO: i64 = 5_000_000;

/// A board's state payload as the daemon publishes it, running White's
/// clock with 10 min each, as of `wall` (ms).
fn payload(board: &str, wall: i64) -> Value {
    json!({
        "schema": 1, "hall": HALL, "host": "pi1", "board": board, "pgn": null,
        "snapshot": {"board": board, "control": "900+10", "snapshot_ms": MONO,
                     "started": true, "running": "white", "paused": false,
                     "white_remaining_ms": 600_000, "black_remaining_ms": 600_000,
                     "white_moves": 5, "black_moves": 5, "white_stage": 1, "black_stage": 1,
                     "flags": [], "arbiter_called": false,
                     "devices": [{"role": "buttons", "name": "b", "connected": true,
                                  "serial": null}]},
        "snapshot_wall_ms": wall,
        "clock": {"mono_ms": MONO, "wall_ms": wall},
        "state": {"t": MONO, "running": "white", "paused": false, "flags": [],
                  "white": {"moves": 5}, "black": {"moves": 5},
                  "arbiter_called": false, "arbiter_called_at_ms": null,
                  "flag_falls": [], "restart": null, "result": null, "over": null,
                  "tenths_below_ms": 20_000, "scheduled_start_ms": null,
                  "eboard": null, "players": {"white": null, "black": null},
                  "host_health": {"radios_policy": "allow", "radios": [],
                                  "radios_unreadable": [], "ntp_synchronized": true,
                                  "ntp_unknown": null, "findings": []}},
    })
}

fn paused(p: &mut Value) {
    p["snapshot"]["paused"] = json!(true);
    p["state"]["paused"] = json!(true);
}

/// Every case, one board each.
fn boards(wall: i64) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    let mut add = |board: &str, change: &dyn Fn(&mut Value)| {
        let mut p = payload(board, wall);
        change(&mut p);
        all.push((board.to_owned(), p));
    };
    // The arbiter called 90 s before the publication.
    add("b1", &|p| {
        paused(p);
        p["snapshot"]["arbiter_called"] = json!(true);
        p["state"]["arbiter_called"] = json!(true);
        p["state"]["arbiter_called_at_ms"] = json!(MONO - 90_000);
    });
    // White's flag fell 30 s before; the arbiter has not ruled.
    add("b2", &|p| {
        p["snapshot"]["running"] = Value::Null;
        p["snapshot"]["white_remaining_ms"] = json!(0);
        p["snapshot"]["flags"] = json!(["white"]);
        p["state"]["flag_falls"] = json!([{"side": "white", "at_ms": MONO - 30_000,
                                           "game_ms": 1_000, "stage": 1, "last_stage": true}]);
        p["state"]["over"] = json!({"result": null, "termination": "time forfeit",
                                    "why": "white's flag fell"});
    });
    // A flag, and the result given: finished.
    add("b3", &|p| {
        p["snapshot"]["running"] = Value::Null;
        p["snapshot"]["flags"] = json!(["black"]);
        p["state"]["result"] = json!({"result": "1-0", "termination": "time forfeit"});
        p["state"]["over"] = json!({"result": "1-0", "termination": "time forfeit",
                                    "why": "1-0 (time forfeit)"});
    });
    // Restarted, paused since for the arbiter.
    add("b4", &|p| {
        paused(p);
        p["state"]["restart"] = json!({"down_ms": 4_000, "same_boot": true,
                                       "was_running": "white", "paused_at_game_ms": 60_000});
    });
    // Paused with White at 16.2 s and Black at 19.901 s (20 s threshold).
    add("b5", &|p| {
        paused(p);
        p["snapshot"]["white_remaining_ms"] = json!(16_200);
        p["snapshot"]["black_remaining_ms"] = json!(19_901);
    });
    // Its host: Wi-Fi on where radios are forbidden, the clock unsynced.
    add("b6", &|p| {
        p["state"]["host_health"] = json!({"radios_policy": "forbid",
            "radios": [{"kind": "wifi", "name": "wlan0", "on": true, "why": "interface up"}],
            "radios_unreadable": [], "ntp_synchronized": false, "ntp_unknown": null,
            "findings": ["radios are forbidden but on: wifi wlan0 (interface up)",
                         "the system clock is not NTP-synchronised"]});
    });
    // An e-board ten half-moves ahead of the clock.
    add("b7", &|p| {
        p["state"]["eboard"] = json!({"name": "dgt", "connected": true, "serial": null,
                                      "usable": true, "ply": 20, "fen": null,
                                      "game_end": null, "flag_report": null});
        p["snapshot"]["devices"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "eboard", "name": "dgt", "connected": true, "serial": null}));
    });
    // Its button unit lost its link.
    add("b8", &|p| {
        p["snapshot"]["devices"][0]["connected"] = json!(false);
    });
    // Off the pairings (numbered 10 by the board map), named by its tags;
    // not started.
    add("b9", &|p| {
        p["snapshot"]["started"] = json!(false);
        p["snapshot"]["running"] = Value::Null;
        p["state"]["players"] = json!({"white": "Zeta, Zoe", "black": null});
    });
    all
}

/// Publishes `states` retained, and the host `online`, as client `id`.
async fn publish(broker_port: u16, id: &str, states: &[(String, Value)]) -> AsyncClient {
    let mut options = MqttOptions::new(id, "127.0.0.1", broker_port);
    options.set_keep_alive(Duration::from_secs(5));
    let (client, mut eventloop) = AsyncClient::new(options, 64);
    let (acked, mut acks) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(event) = eventloop.poll().await {
            if let Event::Incoming(Incoming::PubAck(_)) = event {
                let _ = acked.send(());
            }
        }
    });
    client
        .publish(
            format!("chessclock/{HALL}/host/pi1/online"),
            QoS::AtLeastOnce,
            true,
            "online",
        )
        .await
        .unwrap();
    for (board, state) in states {
        client
            .publish(
                format!("chessclock/{HALL}/board/{board}/state"),
                QoS::AtLeastOnce,
                true,
                state.to_string(),
            )
            .await
            .unwrap();
    }
    for _ in 0..=states.len() {
        tokio::time::timeout(WAIT, acks.recv())
            .await
            .expect("the broker acknowledged")
            .unwrap();
    }
    client
}

const ROWS: &str = "return Array.from(document.querySelectorAll('#boards tr')).map(r => {
      const t = (c) => { const e = r.querySelector('td.' + c); return e ? e.textContent : ''; };
      return {board: r.dataset.board, classes: Array.from(r.classList), cell: t('board'),
              players: t('players'), needs: t('needs'), white: t('white'), black: t('black'),
              flags: t('flags'), arbiter: t('arbiter'), devices: t('devices'), host: t('host')};
    });";

fn row<'a>(rows: &'a Value, board: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["board"] == board)
        .unwrap_or_else(|| panic!("no row {board}: {rows}"))
}

fn has_class(row: &Value, class: &str) -> bool {
    row["classes"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c == class))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_what_an_arbiter_needs_in_words_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let pairings = dir.path().join("round1.csv");
    let mut csv = String::from("board,white,black\n1,\"Alpha, Anna\",\"Beta, Bob\"\n");
    for n in 2..=8 {
        csv.push_str(&format!("{n},White {n},Black {n}\n"));
    }
    std::fs::write(&pairings, csv).unwrap();
    let map = dir.path().join("boards.csv");
    std::fs::write(&map, "board,id\n10,b9\n").unwrap();
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &[
            "--pairings",
            pairings.to_str().unwrap(),
            "--round",
            "1",
            "--boards",
            map.to_str().unwrap(),
        ],
    )
    .await;
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let states = boards(wall);
    let _daemon = publish(broker.port, "test-daemon", &states).await;
    let bearer = format!("Bearer {SCREEN_TOKEN}");
    let screen = ("Authorization", bearer.as_str());
    let deadline = std::time::Instant::now() + WAIT;
    let urgent = loop {
        let boards = request(hub.port, "GET", "/boards.json", &[screen], "")
            .await
            .json();
        if boards["boards"].as_object().is_some_and(|b| b.len() == 9) {
            break boards["urgent"].clone();
        }
        assert!(std::time::Instant::now() < deadline, "{boards}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Call, flag, e-board and lost unit (board order), restart, host's
    // findings, paused, not started, finished.
    assert_eq!(
        urgent,
        json!(["b1", "b2", "b7", "b8", "b4", "b6", "b5", "b9", "b3"]),
        "the hub's order"
    );

    let browser = Browser::start().await;
    browser
        .client
        .goto(&format!(
            "http://127.0.0.1:{}/?token={SCREEN_TOKEN}",
            hub.port
        ))
        .await
        .unwrap();
    let rows = browser
        .wait("every board with its seat", WAIT, ROWS, |rows| {
            rows.as_array().is_some_and(|r| r.len() == 9)
                && row(rows, "b9")["cell"] == "10 (b9)"
                && row(rows, "b1")["players"] == "Alpha, Anna - Beta, Bob"
        })
        .await;
    browser.screenshot("arbiters-desk-page").await;
    let order: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["board"].as_str().unwrap())
        .collect();
    assert_eq!(json!(order), urgent, "the page's order is the hub's");

    // Names and numbers: the pairing's, else the daemon's (its tags).
    assert_eq!(row(&rows, "b2")["players"], "White 2 - Black 2");
    assert_eq!(row(&rows, "b2")["cell"], "b2", "the id says its number");
    assert_eq!(row(&rows, "b9")["players"], "Zeta, Zoe - ?");

    // The time of day of the call and of the flag, as the page writes it.
    let times = browser
        .run(&format!(
            "return [timeOfDay({}), timeOfDay({})];",
            wall - 90_000,
            wall - 30_000
        ))
        .await;
    let b1 = row(&rows, "b1");
    assert_eq!(
        b1["arbiter"],
        format!("CALLED at {}", times[0].as_str().unwrap()),
        "{b1}"
    );
    assert!(
        b1["needs"]
            .as_str()
            .unwrap()
            .starts_with(&format!("ARBITER CALLED at {}", times[0].as_str().unwrap())),
        "{b1}"
    );
    let b2 = row(&rows, "b2");
    assert_eq!(
        b2["flags"],
        format!("white (first) at {}", times[1].as_str().unwrap()),
        "{b2}"
    );
    assert!(
        b2["needs"].as_str().unwrap().starts_with("FLAG white at "),
        "{b2}"
    );

    // Finished: last, nothing needed, not counted among the flags.
    let b3 = row(&rows, "b3");
    assert!(has_class(b3, "finished"), "{b3}");
    assert_eq!(b3["needs"], "", "{b3}");
    let counts = browser
        .run("return document.getElementById('counts').textContent;")
        .await;
    assert_eq!(counts, "9 boards, 1 ARBITER CALL, 1 flag");

    let b4 = row(&rows, "b4");
    assert!(has_class(b4, "restarted"), "{b4}");
    assert_eq!(b4["needs"], "RESTARTED - resume", "{b4}");

    // Tenths as the displays write them: rounded up, below 20 s only.
    let b5 = row(&rows, "b5");
    assert_eq!(b5["white"], "0:16.2", "{b5}");
    assert_eq!(b5["black"], "0:20", "{b5}");

    let b6 = row(&rows, "b6");
    let host = b6["host"].as_str().unwrap();
    assert!(
        host.contains("RADIO ON: wifi wlan0 (FORBIDDEN)")
            && host.contains("CLOCK NOT NTP-SYNCHRONISED"),
        "{b6}"
    );
    assert!(
        has_class(b6, "host-finding") && has_class(b6, "radios-on"),
        "{b6}"
    );
    assert!(
        b6["needs"]
            .as_str()
            .unwrap()
            .contains("HOST: radios are forbidden but on: wifi wlan0"),
        "{b6}"
    );

    let b7 = row(&rows, "b7");
    assert!(has_class(b7, "eboard-disagrees"), "{b7}");
    assert_eq!(b7["needs"], "E-BOARD 20 half-moves, clock 10", "{b7}");
    assert!(
        b7["devices"]
            .as_str()
            .unwrap()
            .contains("eboard 20 half-moves vs clock 10: CHECK"),
        "{b7}"
    );
    assert_eq!(row(&rows, "b8")["needs"], "buttons LOST");

    // A running clock below its threshold ticks in tenths on the page.
    let mut low = payload("b5", wall);
    low["snapshot"]["white_remaining_ms"] = json!(15_000);
    low["snapshot_wall_ms"] = json!(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64);
    let _daemon = publish(broker.port, "test-daemon-2", &[("b5".to_owned(), low)]).await;
    let ticking = browser
        .wait("b5's clock in tenths, running", WAIT, ROWS, |rows| {
            let b5 = row(rows, "b5");
            has_class(b5, "low-time")
                && b5["white"]
                    .as_str()
                    .is_some_and(|w| w.starts_with("0:1") && w.len() == 6 && w.contains('.'))
        })
        .await;
    assert_eq!(row(&ticking, "b5")["needs"], "LOW TIME");
    browser.close().await;
}
