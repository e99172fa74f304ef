//! The arbiter's CLI corrections over the hall (issue 30, item 3), end to
//! end against a real mosquitto (the test's own), the real daemon (boards
//! `b1`..`b3`, 5 minutes + 2 s, no devices, on a host without timedated:
//! its system bus is a socket that does not exist) and the hub binary with
//! an arbiter's login:
//! * over MQTT, `start-at` is refused while the daemon cannot tell that its
//!   clock is NTP-synchronised (as D-Bus refuses it) and carried out with
//!   `force`; `cancel-start`, `undo`, `adjust-by`, `note` and `set-result`
//!   with a termination are carried out, each recorded in the board's
//!   history with the arbiter's name as `caller_name`;
//! * from the page's API, a relative correction `+2:00` shows in the
//!   board's state, and pause all / resume all / start all at an instant go
//!   to every board, each answered, the boards that failed named;
//! * on the page (headless chromium), the correction form's relative
//!   correction, note and result with its termination, and pause all /
//!   resume all, whose failed boards the page lists;
//! * the desk's start of a round sends `start-at` to every paired board
//!   whose game has not started, and reports each board.
//!
//! Every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use kit::daemon::{Daemon, PrivateBus};
use kit::hall::browser::{request, Answer, Browser};
use kit::hall::round::Arbiter;
use kit::hall::{Broker, Hub, ARBITER, ARBITER_PASSWORD, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The daemon: boards `b1`..`b3` in hall `open` as host `pi1`, on a host
/// whose system bus (and so timedated) cannot be reached.
fn daemon(dir: &Path, broker: &Broker, bus: &PrivateBus) -> Daemon {
    let config = dir.join("chessclockd.toml");
    let boards: String = (1..=3)
        .map(|n| format!("[[board]]\nid = \"b{n}\"\ncontrol = \"300+2\"\n\n"))
        .collect();
    std::fs::write(
        &config,
        format!(
            "{daemon}\n{boards}[hall]\nbroker = \"mqtt://127.0.0.1:{port}\"\nname = \"open\"\n\
             host = \"pi1\"\n",
            daemon = kit::daemon::daemon_table(&dir.join("state")),
            port = broker.port,
        ),
    )
    .unwrap();
    let no_bus = format!("unix:path={}", dir.join("no-system-bus").display());
    Daemon::spawn_with_env(
        &config,
        bus,
        dir.join("daemon.log"),
        &[("DBUS_SYSTEM_BUS_ADDRESS", no_bus.as_str())],
    )
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The hub, with arbiter `ann` logged in: the hub and her requests'
/// headers. Returns once the hub has every board's state.
async fn hub_with_ann(dir: &Path, broker: &Broker) -> (Hub, Vec<(String, String)>) {
    let hub = Hub::with_arbiters(broker.port, dir, &[]).await;
    hub.wait_for_boards(&["b1", "b2", "b3"]).await;
    let headers = hub.log_in(ARBITER, ARBITER_PASSWORD).await.headers();
    (hub, headers)
}

async fn post(hub: &Hub, headers: &[(String, String)], path: &str, body: Value) -> Answer {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    request(hub.port, "POST", path, &headers, &body.to_string()).await
}

/// The hub's latest state of every board.
async fn boards(hub: &Hub) -> Value {
    let (status, _, body) = hub.get("/boards.json", "").await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).unwrap()["boards"].clone()
}

/// Waits until the hub's states satisfy `ready`.
async fn wait_boards(hub: &Hub, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let boards = boards(hub).await;
        if ready(&boards) {
            return boards;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {WAIT:?}: {boards}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The `{"board", "ok", "error"?}` answers of a command to many boards, by
/// board: `Ok(())` or the error's words.
fn by_board(answer: &Value) -> Vec<(String, Result<(), String>)> {
    answer["boards"]
        .as_array()
        .unwrap_or_else(|| panic!("no boards in {answer}"))
        .iter()
        .map(|b| {
            let board = b["board"]
                .as_str()
                .map_or_else(|| b["board"].to_string(), str::to_owned);
            let result = if b["ok"] == true {
                Ok(())
            } else {
                Err(b["error"].as_str().unwrap_or("").to_owned())
            };
            (board, result)
        })
        .collect()
}

/// The rows of b-board's current game, read over MQTT.
async fn history(arbiter: &mut Arbiter, board: &str) -> Vec<Value> {
    let reply = arbiter.command(board, json!({"command": "history"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    reply["result"]["events"].as_array().cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_new_mqtt_command_is_carried_out_and_recorded_with_the_arbiters_name() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let (hub, _) = hub_with_ann(dir.path(), &broker).await;
    let mut arbiter = Arbiter::connect(broker.port).await;

    // A scheduled start on a host that cannot tell its clock is right: as
    // D-Bus refuses it, and with `force` carried out.
    let at = now_ms() + 60_000;
    let refused = arbiter
        .command("b1", json!({"command": "start-at", "at_ms": at}))
        .await;
    assert_eq!(refused["ok"], false, "{refused}");
    assert_eq!(refused["error"]["kind"], "not-synchronized", "{refused}");
    let words = refused["error"]["message"].as_str().unwrap();
    assert!(
        words.contains("cannot tell whether the system clock is NTP-synchronised")
            && words.contains("\"force\": true"),
        "{words}"
    );
    let past = arbiter
        .command(
            "b1",
            json!({"command": "start-at", "at_ms": now_ms() - 60_000, "force": true}),
        )
        .await;
    assert_eq!(past["error"]["kind"], "invalid-argument", "{past}");
    let forced = arbiter
        .command(
            "b1",
            json!({"command": "start-at", "at_ms": at, "force": true}),
        )
        .await;
    assert_eq!(forced["ok"], true, "{forced}");
    wait_boards(&hub, "b1's scheduled start", |b| {
        b["b1"]["state"]["scheduled_start_ms"].is_i64()
    })
    .await;
    let cancel = arbiter
        .command("b1", json!({"command": "cancel-start"}))
        .await;
    assert_eq!(cancel["ok"], true, "{cancel}");
    wait_boards(&hub, "b1's start cancelled", |b| {
        b["b1"]["state"]["scheduled_start_ms"].is_null()
    })
    .await;

    // A start, a press by the arbiter and its undo, a relative correction,
    // a note and a result with its termination.
    for command in [
        json!({"command": "start"}),
        json!({"command": "press", "side": "white"}),
        json!({"command": "undo"}),
        json!({"command": "adjust-by", "side": "black", "delta_ms": 120_000}),
        json!({"command": "adjust-by", "side": "white", "delta_ms": -30_000}),
        json!({"command": "note", "text": "3-fold claim rejected"}),
        json!({"command": "set-result", "result": "0-1", "termination": "resignation"}),
    ] {
        let reply = arbiter.command("b1", command.clone()).await;
        assert_eq!(reply["ok"], true, "{command}: {reply}");
    }
    // The undo has nothing left to take back: a clear refusal.
    let again = arbiter.command("b1", json!({"command": "undo"})).await;
    assert_eq!(again["ok"], false, "{again}");

    let rows = history(&mut arbiter, "b1").await;
    let by_arbiter = |what: &str, extra: &dyn Fn(&Value) -> bool| {
        rows.iter()
            .any(|row| row["do"] == what && row["caller_name"] == "Test Arbiter" && extra(row))
    };
    for (what, extra) in [
        (
            "start-at",
            &(|row: &Value| row["forced"] == true) as &dyn Fn(&Value) -> bool,
        ),
        ("start-cancelled", &|_| true),
        ("start", &|_| true),
        ("press", &|row| row["side"] == "white"),
        ("press-undone", &|row| row["side"] == "white"),
        ("adjust", &|row| {
            row["side"] == "black" && row["by_us"] == 120_000_000
        }),
        ("adjust", &|row| {
            row["side"] == "white" && row["by_us"] == -30_000_000
        }),
        ("note", &|row| row["text"] == "3-fold claim rejected"),
        ("game-result", &|row| {
            row.to_string().contains("resignation")
        }),
    ] {
        assert!(
            by_arbiter(what, extra),
            "no `{what}` row by Test Arbiter as expected in {}",
            serde_json::to_string_pretty(&rows).unwrap()
        );
    }
    drop(hub);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_corrects_one_board_and_commands_every_board_at_once() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let (hub, ann) = hub_with_ann(dir.path(), &broker).await;
    let mut arbiter = Arbiter::connect(broker.port).await;

    // Start all at an instant: refused on every board without NTP, named
    // board by board; with `force` set on every board.
    let at = now_ms() + 60_000;
    let answer = post(
        &hub,
        &ann,
        "/api/round-command",
        json!({"command": "start-at", "at_ms": at}),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let answer = answer.json();
    assert_eq!(answer["ok"], false, "{answer}");
    let each = by_board(&answer);
    assert_eq!(each.len(), 3, "{answer}");
    for (board, result) in &each {
        let error = result.as_ref().unwrap_err();
        assert!(error.starts_with("not-synchronized: "), "{board}: {error}");
    }
    let answer = post(
        &hub,
        &ann,
        "/api/round-command",
        json!({"command": "start-at", "at_ms": at, "force": true}),
    )
    .await
    .json();
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(
        by_board(&answer)
            .into_iter()
            .map(|(b, _)| b)
            .collect::<Vec<_>>(),
        ["b1", "b2", "b3"]
    );
    wait_boards(&hub, "every board's scheduled start", |b| {
        (1..=3).all(|n| b[format!("b{n}")]["state"]["scheduled_start_ms"].is_i64())
    })
    .await;
    for board in ["b1", "b2", "b3"] {
        let answer = post(
            &hub,
            &ann,
            "/api/command",
            json!({"board": board, "command": "cancel-start"}),
        )
        .await
        .json();
        assert_eq!(answer["ok"], true, "{board}: {answer}");
    }
    // A time in the past is refused by the hub before anything goes out.
    let past = post(
        &hub,
        &ann,
        "/api/round-command",
        json!({"command": "start-at", "at_ms": now_ms() - 1_000, "force": true}),
    )
    .await;
    assert_eq!(past.status, 400, "{past:?}");

    // b1 and b2 running, b3 not started: pause all pauses two and names
    // b3 as failed; resume all resumes the two.
    for board in ["b1", "b2"] {
        let answer = post(
            &hub,
            &ann,
            "/api/command",
            json!({"board": board, "command": "start"}),
        )
        .await
        .json();
        assert_eq!(answer["ok"], true, "{board}: {answer}");
    }
    let answer = post(
        &hub,
        &ann,
        "/api/round-command",
        json!({"command": "pause"}),
    )
    .await
    .json();
    assert_eq!(answer["ok"], false, "{answer}");
    let each = by_board(&answer);
    assert_eq!(each[0], ("b1".to_owned(), Ok(())), "{answer}");
    assert_eq!(each[1], ("b2".to_owned(), Ok(())), "{answer}");
    assert_eq!(each[2].0, "b3", "{answer}");
    assert!(
        each[2]
            .1
            .as_ref()
            .unwrap_err()
            .starts_with("invalid-state: "),
        "{answer}"
    );
    wait_boards(&hub, "b1 and b2 paused", |b| {
        b["b1"]["snapshot"]["paused"] == true && b["b2"]["snapshot"]["paused"] == true
    })
    .await;
    let answer = post(
        &hub,
        &ann,
        "/api/round-command",
        json!({"command": "resume"}),
    )
    .await
    .json();
    let each = by_board(&answer);
    assert_eq!(each[0], ("b1".to_owned(), Ok(())), "{answer}");
    assert_eq!(each[1], ("b2".to_owned(), Ok(())), "{answer}");
    assert!(each[2].1.is_err(), "{answer}");
    wait_boards(&hub, "b1 and b2 running again", |b| {
        b["b1"]["snapshot"]["paused"] == false && b["b2"]["snapshot"]["paused"] == false
    })
    .await;
    let unknown = post(
        &hub,
        &ann,
        "/api/round-command",
        json!({"command": "start"}),
    )
    .await;
    assert_eq!(unknown.status, 400, "{unknown:?}");

    // One board: +2:00 for White shows in the state (5:00 less a few
    // seconds' play, plus 2:00), a note, a result with its termination.
    let before = boards(&hub).await["b1"]["snapshot"]["white_remaining_ms"]
        .as_i64()
        .unwrap();
    let answer = post(
        &hub,
        &ann,
        "/api/command",
        json!({"board": "b1", "command": "adjust-by", "side": "white", "time": "+2:00"}),
    )
    .await;
    assert_eq!(answer.json()["ok"], true, "{answer:?}");
    wait_boards(&hub, "White's two minutes", |b| {
        b["b1"]["snapshot"]["white_remaining_ms"]
            .as_i64()
            .is_some_and(|ms| ms > before + 100_000 && ms <= before + 120_000)
    })
    .await;
    let bad = post(
        &hub,
        &ann,
        "/api/command",
        json!({"board": "b1", "command": "adjust-by", "side": "white", "time": "2:00"}),
    )
    .await;
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(
        bad.json()["error"]
            .as_str()
            .unwrap()
            .contains("with its sign"),
        "{bad:?}"
    );
    for body in [
        json!({"board": "b1", "command": "note", "text": "phone rang"}),
        json!({"board": "b1", "command": "set-result", "result": "1-0",
               "termination": "rules infraction"}),
    ] {
        let answer = post(&hub, &ann, "/api/command", body.clone()).await.json();
        assert_eq!(answer["ok"], true, "{body}: {answer}");
    }
    // Nothing of the arbiter's to undo: the daemon's refusal, passed on.
    let undo = post(
        &hub,
        &ann,
        "/api/command",
        json!({"board": "b1", "command": "undo"}),
    )
    .await
    .json();
    assert_eq!(undo["ok"], false, "{undo}");
    assert_eq!(undo["error"]["kind"], "invalid-state", "{undo}");

    let rows = history(&mut arbiter, "b1").await;
    for what in [
        "start-at",
        "start-cancelled",
        "start",
        "pause",
        "resume",
        "adjust",
        "note",
        "game-result",
    ] {
        assert!(
            rows.iter()
                .any(|row| row["do"] == what && row["caller_name"] == "ann"),
            "no `{what}` row by ann in {}",
            serde_json::to_string_pretty(&rows).unwrap()
        );
    }
    drop(hub);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_starts_a_round_on_every_paired_board_not_started() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let (hub, ann) = hub_with_ann(dir.path(), &broker).await;
    let mut arbiter = Arbiter::connect(broker.port).await;

    let pairings = "board,white,black\n1,\"Alpha, Ann\",\"Beta, Bert\"\n\
                    2,\"Gamma, Gil\",\"Delta, Dora\"\n3,\"Eps, Eve\",\"Zeta, Zed\"\n";
    let loaded = post(
        &hub,
        &ann,
        "/api/rounds/load",
        json!({"round": 1, "pairings": pairings}),
    )
    .await;
    assert_eq!(loaded.status, 200, "{loaded:?}");
    // b2's game has started: the round's start leaves it alone.
    let started = arbiter.command("b2", json!({"command": "start"})).await;
    assert_eq!(started["ok"], true, "{started}");
    wait_boards(&hub, "b2 started", |b| {
        b["b2"]["snapshot"]["started"] == true
    })
    .await;

    let at = now_ms() + 120_000;
    let refused = post(
        &hub,
        &ann,
        "/api/rounds/start",
        json!({"round": 1, "at_ms": at}),
    )
    .await;
    assert_eq!(refused.status, 200, "{refused:?}");
    let refused = refused.json();
    assert_eq!(refused["ok"], false, "{refused}");
    let boards_of = |answer: &Value| answer["boards"].as_array().unwrap().clone();
    let each = boards_of(&refused);
    assert_eq!(each.len(), 3, "{refused}");
    for (index, board) in ["b1", "b2", "b3"].iter().enumerate() {
        assert_eq!(each[index]["id"], *board, "{refused}");
        assert_eq!(each[index]["board"], index as u64 + 1, "{refused}");
    }
    assert!(
        each[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("not-synchronized"),
        "{refused}"
    );
    assert_eq!(each[1]["ok"], true, "{refused}");
    assert!(
        each[1]["skipped"].as_str().unwrap().contains("started"),
        "{refused}"
    );
    assert!(
        each[2]["error"]
            .as_str()
            .unwrap()
            .starts_with("not-synchronized"),
        "{refused}"
    );

    let forced = post(
        &hub,
        &ann,
        "/api/rounds/start",
        json!({"round": 1, "at_ms": at, "force": true}),
    )
    .await
    .json();
    assert_eq!(forced["ok"], true, "{forced}");
    let boards = wait_boards(&hub, "b1 and b3 scheduled", |b| {
        b["b1"]["state"]["scheduled_start_ms"].is_i64()
            && b["b3"]["state"]["scheduled_start_ms"].is_i64()
    })
    .await;
    assert!(
        boards["b2"]["state"]["scheduled_start_ms"].is_null(),
        "{boards}"
    );
    let (_, _, rounds) = hub.get("/rounds.json", "").await;
    assert!(
        rounds.contains(&format!("\"start_at_ms\":{at}")),
        "{rounds}"
    );
    let rows = history(&mut arbiter, "b3").await;
    assert!(
        rows.iter().any(|row| row["do"] == "start-at"
            && row["caller_name"] == "ann"
            && row["unix_time_us"] == at * 1000),
        "{rows:?}"
    );

    // Cleared: the boards' starts are cancelled.
    let cleared = post(
        &hub,
        &ann,
        "/api/rounds/start",
        json!({"round": 1, "at_ms": null}),
    )
    .await
    .json();
    assert_eq!(cleared["ok"], true, "{cleared}");
    wait_boards(&hub, "the starts cancelled", |b| {
        b["b1"]["state"]["scheduled_start_ms"].is_null()
            && b["b3"]["state"]["scheduled_start_ms"].is_null()
    })
    .await;
    drop(hub);
    assert!(daemon.terminate().success());
}

/// The page's `#reply`: its state and text.
const REPLY: &str = "const r = document.getElementById('reply');
                     return {ok: r.dataset.ok || null, text: r.textContent};";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_s_forms_and_every_board_buttons_work_in_a_browser() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let (hub, _) = hub_with_ann(dir.path(), &broker).await;
    let mut arbiter = Arbiter::connect(broker.port).await;
    let started = arbiter.command("b1", json!({"command": "start"})).await;
    assert_eq!(started["ok"], true, "{started}");

    let browser = Browser::start().await;
    browser
        .log_in(&hub.url("/"), ARBITER, ARBITER_PASSWORD)
        .await;
    browser.wait_for_board("b3").await;
    browser
        .wait(
            "the every-board buttons",
            WAIT,
            "return !document.getElementById('round-commands').hidden;",
            |v| v == true,
        )
        .await;
    // The page's confirms, answered yes.
    browser.run("window.confirm = () => true;").await;
    let click = |selector: &str| format!("document.querySelector('{selector}').click();");

    // Pause all: b1 paused, b2 and b3 (not started) listed as failed.
    browser
        .run(&click("#round-commands [data-action=pause-all]"))
        .await;
    let reply = browser
        .wait("pause all's answer", WAIT, REPLY, |r| {
            r["ok"] == "false" || r["ok"] == "true"
        })
        .await;
    assert_eq!(
        reply["text"], "pause all: 2 of 3 board(s) failed",
        "{reply}"
    );
    let failed = browser
        .run(
            "return Array.from(document.querySelectorAll('#round-failed li'))
                 .map(li => [li.dataset.board, li.textContent]);",
        )
        .await;
    let failed = failed.as_array().unwrap();
    assert_eq!(failed.len(), 2, "{failed:?}");
    for (row, board) in failed.iter().zip(["b2", "b3"]) {
        assert_eq!(row[0], board, "{failed:?}");
        assert!(
            row[1].as_str().unwrap().contains("invalid-state"),
            "{failed:?}"
        );
    }
    wait_boards(&hub, "b1 paused", |b| b["b1"]["snapshot"]["paused"] == true).await;

    // b1's correction form: +2:00 for White, a note, the result with its
    // termination.
    browser
        .run(&click("tr[data-board=\"b1\"] button[data-action=correct]"))
        .await;
    let before = boards(&hub).await["b1"]["snapshot"]["white_remaining_ms"]
        .as_i64()
        .unwrap();
    browser
        .run(
            "const f = document.getElementById('correction');
             f.elements['side'].value = 'white'; f.elements['delta'].value = '+2:00';
             f.querySelector('[data-action=adjust-by]').click();",
        )
        .await;
    let reply = browser
        .wait("the correction's reply", WAIT, REPLY, |r| {
            r["ok"] != "pending"
        })
        .await;
    assert_eq!(reply["text"], "b1 adjust-by: ok", "{reply}");
    wait_boards(&hub, "White's two minutes", |b| {
        b["b1"]["snapshot"]["white_remaining_ms"] == before + 120_000
    })
    .await;
    browser
        .run(
            "const f = document.getElementById('correction');
             f.elements['note'].value = 'phone rang at board 1';
             f.querySelector('[data-action=note]').click();",
        )
        .await;
    let reply = browser
        .wait("the note's reply", WAIT, REPLY, |r| {
            r["ok"] != "pending" && r["text"].as_str().unwrap_or("").starts_with("b1 note")
        })
        .await;
    assert_eq!(reply["text"], "b1 note: ok", "{reply}");

    // Resume all: b1 resumes; the other two are named again.
    browser
        .run(&click("#round-commands [data-action=resume-all]"))
        .await;
    let reply = browser
        .wait("resume all's answer", WAIT, REPLY, |r| {
            r["ok"] != "pending" && r["text"].as_str().unwrap_or("").starts_with("resume all")
        })
        .await;
    assert_eq!(
        reply["text"], "resume all: 2 of 3 board(s) failed",
        "{reply}"
    );
    wait_boards(&hub, "b1 running", |b| {
        b["b1"]["snapshot"]["paused"] == false
    })
    .await;

    browser
        .run(
            "const f = document.getElementById('correction');
             f.elements['result'].value = '1-0'; f.elements['termination'].value = 'resignation';
             f.querySelector('[data-action=set-result]').click();",
        )
        .await;
    let reply = browser
        .wait("the result's reply", WAIT, REPLY, |r| {
            r["ok"] != "pending"
                && r["text"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("b1 set-result")
        })
        .await;
    assert_eq!(reply["text"], "b1 set-result: ok", "{reply}");
    browser.screenshot("arbiters-every-board").await;
    browser.close().await;

    let rows = history(&mut arbiter, "b1").await;
    let by_ann = |what: &str, extra: &dyn Fn(&Value) -> bool| {
        rows.iter()
            .any(|row| row["do"] == what && row["caller_name"] == "ann" && extra(row))
    };
    assert!(
        by_ann("adjust", &|row| row["by_us"] == 120_000_000),
        "{rows:?}"
    );
    assert!(
        by_ann("note", &|row| row["text"] == "phone rang at board 1"),
        "{rows:?}"
    );
    assert!(
        by_ann("game-result", &|row| row
            .to_string()
            .contains("resignation")),
        "{rows:?}"
    );
    assert!(
        by_ann("pause", &|_| true) && by_ann("resume", &|_| true),
        "{rows:?}"
    );
    drop(hub);
    assert!(daemon.terminate().success());
}
