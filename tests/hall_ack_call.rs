//! Issue 30, item 3: acknowledging a player's arbiter call, end to end with
//! a real mosquitto (the test's own), the real daemon (board `b1` with
//! simulated button and display units, board `b2` without devices), the
//! hub binary with an arbiter's login and Debian's headless chromium:
//! * `chessclockctl ack-call` (D-Bus `AckCall`) is refused with why while no
//!   call stands; on a call it is carried out and echoed with the caller's
//!   name, which the State and the record (`call-acknowledged`) carry;
//! * over MQTT, `ack-call` on a call already acknowledged is refused, and on
//!   a fresh call is carried out with the arbiter's name, which the board's
//!   retained MQTT state carries; a resume answers the call (no call, no
//!   acknowledgment);
//! * on the page, the row's `Acknowledge call` button (only while the call
//!   is unanswered) records it with the logged-in arbiter's name; the row
//!   then says `call acknowledged by ann at HH:MM:SS`, is no longer an
//!   `arbiter-call` nor counted among the calls, and ranks below a call no
//!   one acknowledged (the page's own ranks);
//! * on the board's page (`/board/b1`), a fresh call is acknowledged by its
//!   `Acknowledge call` (the same `ack-call` command through
//!   `/api/command`): the page's record and the daemon's get a
//!   `call-acknowledged` row with ann's name, and the hall's page no longer
//!   shows the call as one to answer;
//! * a daemon restart keeps the call and its acknowledgment.
//!
//! Every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::Path;
use std::time::Duration;

use chessclock_protocol::Button;
use serde_json::{json, Value};

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};
use kit::hall::browser::Browser;
use kit::hall::round::Arbiter;
use kit::hall::watch::{options, Watcher};
use kit::hall::{Broker, Hub, ARBITER, ARBITER_PASSWORD, WAIT};

const CTL: &str = env!("CARGO_BIN_EXE_chessclockctl");

/// `chessclockctl --user ARGS` against the private bus: (success, stdout,
/// stderr).
fn ctl(bus: &PrivateBus, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(CTL)
        .arg("--user")
        .args(args)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn config(
    dir: &Path,
    broker: &Broker,
    units: &chessclock_sim_units::SimUnits,
) -> std::path::PathBuf {
    let config = dir.join("chessclockd.toml");
    std::fs::write(
        &config,
        format!(
            r#"{daemon}
[[board]]
id = "b1"
control = "300+2"
buttons = "{buttons}"
displays = ["{display}"]

[[board]]
id = "b2"
control = "300"

[hall]
broker = "mqtt://127.0.0.1:{port}"
name = "open"
host = "pi1"
"#,
            daemon = kit::daemon::daemon_table(&dir.join("state")),
            buttons = units.path("buttons").unwrap().display(),
            display = units.path("display").unwrap().display(),
            port = broker.port,
        ),
    )
    .unwrap();
    config
}

/// The player presses the arbiter button; returns once the unit's frame
/// was acknowledged and the daemon's state has the call.
async fn call(sim: &chessclock_sim_units::SimHandle, client: &Client, daemon: &Daemon) {
    tokio::task::spawn_blocking({
        let sim = sim.clone();
        move || {
            sim.press_returning_instant(Some("buttons"), Button::Arbiter)
                .unwrap();
            sim.wait_until("buttons", WAIT, |s| s.unacked == 0)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    })
    .await
    .unwrap();
    client
        .wait_state(daemon, "the arbiter call", |s| s["arbiter_called"] == true)
        .await;
}

/// The last `call-acknowledged` row of b1's record, via D-Bus.
async fn last_ack(client: &Client) -> Value {
    let history = client.history().await;
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|row| row["do"] == "call-acknowledged")
        .cloned()
        .unwrap_or_else(|| panic!("no call-acknowledged row in {history}"))
}

const ROW: &str = "const r = document.querySelector('tr[data-board=\"b1\"]');
     if (!r) return null;
     const t = (c) => { const e = r.querySelector('td.' + c); return e ? e.textContent : null; };
     const ack = r.querySelector('button[data-action=\"ack-call\"]');
     const card = document.getElementById('card-b1');
     const cardAck = card && card.querySelector('button[data-action=\"ack-call\"]');
     return {classes: Array.from(r.classList), arbiter: t('arbiter'), needs: t('needs'),
             ack_shown: !!ack && !ack.hidden && ack.offsetParent !== null,
             card_ack_shown: !!cardAck && !cardAck.hidden && cardAck.offsetParent !== null,
             card: card ? card.textContent : null,
             counts: document.getElementById('counts').textContent};";

/// The board's page (`/board/b1`): its `Acknowledge call` shown, the
/// record's calls, the names on its acknowledgments, the last reply.
const BOARD_PAGE: &str = "const b = document.querySelector('#commands button[data-action=\"ack-call\"]');
     return {ack_shown: !!b && b.offsetParent !== null,
             calls: document.querySelectorAll('#record-body tr.arbiter-call').length,
             acks: Array.from(document.querySelectorAll('#record-body tr.call-acknowledged td.who')).map(e => e.textContent),
             reply: document.getElementById('reply').dataset.ok || null};";

fn has_class(row: &Value, class: &str) -> bool {
    row["classes"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c == class))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiter_call_is_acknowledged_from_the_cli_mqtt_and_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let units = kit::daemon::demo_units(dir.path());
    let sim = units.handle();
    let config = config(dir.path(), &broker, &units);
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, devices_linked).await;
    let me = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("uid {}", nix::unistd::getuid()));

    // No call: refused, saying why; nothing recorded.
    let (ok, _, err) = ctl(&bus, &["ack-call", "b1"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("no arbiter call stands on board `b1`"),
        "{err}"
    );
    client.board.start().await.unwrap();

    // The CLI (D-Bus AckCall): echoed with the caller's name, in the State
    // and the record.
    call(&sim, &client, &daemon).await;
    let (ok, out, err) = ctl(&bus, &["ack-call", "b1"]);
    assert!(ok, "{out}{err}");
    assert_eq!(
        out.trim(),
        format!(
            "b1: arbiter call acknowledged by {me}; the clock stays stopped until \
             chessclockctl resume b1"
        )
    );
    let state = client.state().await;
    assert_eq!(state["arbiter_called"], true, "{state}");
    assert_eq!(state["paused"], true, "{state}");
    assert_eq!(state["arbiter_call_acknowledged_by"], me.as_str());
    let called_at = state["arbiter_called_at_ms"].as_i64().unwrap();
    let acked_at = state["arbiter_call_acknowledged_at_ms"].as_i64().unwrap();
    assert!(acked_at >= called_at, "{state}");
    assert_eq!(last_ack(&client).await["caller_name"], me.as_str());
    let (_, status, _) = ctl(&bus, &["status", "b1"]);
    assert!(
        status.contains(&format!("the call was acknowledged by {me}")),
        "{status}"
    );

    // MQTT: a second acknowledgment is refused, naming who goes; the
    // board's retained state carries the acknowledgment.
    let mut arbiter = Arbiter::connect(broker.port).await;
    let again = arbiter.command("b1", json!({"command": "ack-call"})).await;
    assert_eq!(again["ok"], false, "{again}");
    assert_eq!(again["error"]["kind"], "invalid-state", "{again}");
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("already acknowledged by {me}")),
        "{again}"
    );
    let mut states = Watcher::connect(
        options("test-states", broker.port, None),
        "chessclock/open/board/b1/state",
        Duration::from_secs(60),
    )
    .await;
    let by_of = |seen: &kit::hall::watch::Seen| {
        seen.json()["state"]["arbiter_call_acknowledged_by"].clone()
    };
    states
        .wait_for("the CLI's acknowledgment over MQTT", WAIT, |s| {
            by_of(s) == me.as_str()
        })
        .await;
    // A resume answers the call: neither stands.
    let (ok, out, err) = ctl(&bus, &["resume", "b1"]);
    assert!(ok, "{out}{err}");
    let state = client.state().await;
    assert_eq!(state["arbiter_called"], false, "{state}");
    assert_eq!(
        state["arbiter_call_acknowledged_by"],
        Value::Null,
        "{state}"
    );
    assert_eq!(
        state["arbiter_call_acknowledged_at_ms"],
        Value::Null,
        "{state}"
    );

    // MQTT on a fresh call: carried out with the arbiter's name.
    call(&sim, &client, &daemon).await;
    states.mark();
    let done = arbiter.command("b1", json!({"command": "ack-call"})).await;
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(last_ack(&client).await["caller_name"], "Test Arbiter");
    states
        .wait_for("the MQTT acknowledgment in the state", WAIT, |s| {
            by_of(s) == "Test Arbiter"
                && s.json()["state"]["arbiter_call_acknowledged_at_ms"].is_i64()
        })
        .await;
    states.mark();
    let resumed = arbiter.command("b1", json!({"command": "resume"})).await;
    assert_eq!(resumed["ok"], true, "{resumed}");
    states
        .wait_for("the resume over MQTT", WAIT, |s| {
            s.json()["state"]["arbiter_called"] == false && by_of(s).is_null()
        })
        .await;

    // The page: logged in as ann, the row's button acknowledges.
    let hub = Hub::with_arbiters(broker.port, dir.path(), &[]).await;
    let browser = Browser::start().await;
    browser
        .log_in(&hub.screen_url("/"), ARBITER, ARBITER_PASSWORD)
        .await;
    let calm = browser
        .wait("b1's row, no call", WAIT, ROW, |r| {
            r.is_object() && !has_class(r, "arbiter-call")
        })
        .await;
    // The cards are the page's default view: the card has the button.
    assert_eq!(calm["card_ack_shown"], false, "no call, no button: {calm}");
    call(&sim, &client, &daemon).await;
    let called = browser
        .wait("b1's call on the page", WAIT, ROW, |r| {
            has_class(r, "arbiter-call") && r["card_ack_shown"] == true
        })
        .await;
    assert!(
        called["counts"]
            .as_str()
            .unwrap()
            .contains("1 ARBITER CALL"),
        "{called}"
    );
    browser
        .click("#card-b1 button[data-action=\"ack-call\"]")
        .await;
    let acked = browser
        .wait("the acknowledgment on the page", WAIT, ROW, |r| {
            has_class(r, "call-acknowledged")
        })
        .await;
    browser.screenshot("arbiters-call-acknowledged").await;
    assert!(!has_class(&acked, "arbiter-call"), "{acked}");
    assert_eq!(
        acked["card_ack_shown"], false,
        "answered: no button: {acked}"
    );
    assert!(
        acked["card"]
            .as_str()
            .is_some_and(|c| c.contains("call acknowledged by ann")),
        "the card says who is coming: {acked}"
    );
    assert!(
        !acked["counts"].as_str().unwrap().contains("ARBITER CALL"),
        "an acknowledged call is not counted as one to answer: {acked}"
    );
    let row = last_ack(&client).await;
    assert_eq!(row["caller_name"], "ann", "{row}");
    // The time of day of the acknowledgment as the page writes it, from
    // the state's instant (the daemon's monotonic ms on the page's wall).
    let at = browser
        .run(
            "const p = boards.b1.payload;
             return [timeOfDay(wallOf(p, p.state.arbiter_called_at_ms)),
                     timeOfDay(wallOf(p, p.state.arbiter_call_acknowledged_at_ms))];",
        )
        .await;
    let (called_text, acked_text) = (at[0].as_str().unwrap(), at[1].as_str().unwrap());
    assert_eq!(
        acked["arbiter"],
        format!("CALLED at {called_text}, call acknowledged by ann at {acked_text}"),
        "{acked}"
    );
    assert!(
        acked["needs"]
            .as_str()
            .unwrap()
            .starts_with(&format!("call acknowledged by ann at {acked_text}")),
        "{acked}"
    );
    // The page's ranks: this call, acknowledged, below the same call
    // unanswered (and below a flag).
    let ranks = browser
        .run(
            "const p = boards.b1.payload;
             const open = structuredClone(p);
             open.state.arbiter_call_acknowledged_by = null;
             const flag = structuredClone(open);
             flag.snapshot.arbiter_called = false; flag.snapshot.flags = ['white'];
             return [urgency(open)[0], urgency(flag)[0], urgency(p)[0]];",
        )
        .await;
    assert_eq!(ranks, json!([0, 1, 3]));

    // The board's page: its `Acknowledge call` sends the same command, on
    // a fresh call.
    let (ok, out, err) = ctl(&bus, &["resume", "b1"]);
    assert!(ok, "{out}{err}");
    call(&sim, &client, &daemon).await;
    let acks = |history: &Value| {
        history["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["do"] == "call-acknowledged")
            .count()
    };
    let acks_before = acks(&client.history().await);
    browser.open(&hub.url("/board/b1")).await;
    let page = browser
        .wait(
            "the board page's commands and record",
            WAIT,
            BOARD_PAGE,
            |p| p["ack_shown"] == true && p["calls"].as_u64().unwrap_or(0) > 0,
        )
        .await;
    let page_acks = page["acks"].as_array().unwrap().len();
    browser
        .click("#commands button[data-action=\"ack-call\"]")
        .await;
    let done = browser
        .wait("the board page's acknowledgment", WAIT, BOARD_PAGE, |p| {
            p["acks"].as_array().unwrap().len() > page_acks
        })
        .await;
    assert_eq!(done["reply"], "true", "{done}");
    assert_eq!(
        done["acks"].as_array().unwrap().last().unwrap(),
        "ann",
        "{done}"
    );
    let state = client.state().await;
    assert_eq!(state["arbiter_called"], true, "{state}");
    assert_eq!(state["arbiter_call_acknowledged_by"], "ann", "{state}");
    let history = client.history().await;
    assert_eq!(acks(&history), acks_before + 1, "{history}");
    assert_eq!(last_ack(&client).await["caller_name"], "ann");
    // The hall's page: the call is answered, its button gone.
    browser.open(&hub.screen_url("/")).await;
    let answered = browser
        .wait(
            "the board page's acknowledgment on the cards",
            WAIT,
            ROW,
            |r| has_class(r, "call-acknowledged") && r["card"].is_string(),
        )
        .await;
    assert!(!has_class(&answered, "arbiter-call"), "{answered}");
    assert_eq!(answered["card_ack_shown"], false, "{answered}");
    assert!(
        !answered["counts"]
            .as_str()
            .unwrap()
            .contains("ARBITER CALL"),
        "{answered}"
    );
    browser.close().await;

    // A daemon restart keeps the call and who acknowledged it.
    assert!(daemon.terminate().success());
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon-2.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, |s| {
        s["arbiter_called"] == true && s["arbiter_call_acknowledged_by"] == "ann"
    })
    .await;
    let (ok, out, err) = ctl(&bus, &["resume", "b1"]);
    assert!(ok, "{out}{err}");
    let state = client.state().await;
    assert_eq!(
        state["arbiter_call_acknowledged_by"],
        Value::Null,
        "{state}"
    );
    drop(hub);
    assert!(daemon.terminate().success());
}
