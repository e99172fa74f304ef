//! A command the hub called failed never runs later (issue 29, item 1),
//! against a real mosquitto (the test's own), the real daemon (board `b1`
//! without devices) and the hub binary with an arbiter's login:
//! * a command whose `deadline_ms` has passed, published straight on the
//!   Pi's command topic, is refused `expired` and changes nothing; the same
//!   command within its deadline is carried out;
//! * with the broker stopped the hub answers 503 at once and publishes
//!   nothing when the broker is back: the board is as it was once a later
//!   command has been answered;
//! * with the broker frozen (SIGSTOP: the hub still holds its link) the hub
//!   answers 504 after its wait; the command it had handed the link
//!   reaches the daemon (if mosquitto still forwards it) only when the
//!   broker wakes, past its deadline, and is refused `expired`: nothing
//!   runs (the test prints the daemon's refusal line).
//!
//! Every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use kit::daemon::{Daemon, PrivateBus};
use kit::hall::browser::{request, Answer};
use kit::hall::watch::{options, Watcher};
use kit::hall::{Broker, Hub, ARBITER, ARBITER_PASSWORD, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const COMMAND: &str = "chessclock/open/board/b1/command";
const REPLY: &str = "chessclock/open/board/b1/reply";
const ONLINE: &str = "chessclock/open/host/pi1/online";

/// The daemon with board `b1` (5 minutes + 2 s, no devices) in hall
/// `open` as host `pi1`; a keepalive long enough to outlast a frozen
/// broker's few seconds.
fn daemon(dir: &Path, broker: &Broker, bus: &PrivateBus) -> Daemon {
    let config = dir.join("chessclockd.toml");
    std::fs::write(
        &config,
        format!(
            "{daemon}\n[[board]]\nid = \"b1\"\ncontrol = \"300+2\"\n\n[hall]\n\
             broker = \"mqtt://127.0.0.1:{port}\"\nname = \"open\"\nhost = \"pi1\"\n\
             keepalive-seconds = 60\n",
            daemon = kit::daemon::daemon_table(&dir.join("state")),
            port = broker.port,
        ),
    )
    .unwrap();
    Daemon::spawn(&config, bus, dir.join("daemon.log"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Publishes `request` on b1's command topic and waits for its reply.
async fn send(watcher: &mut Watcher, request: Value) -> Value {
    let id = request["id"].as_str().unwrap().to_owned();
    watcher.mark();
    watcher
        .publish_acked(COMMAND, false, request.to_string().as_bytes())
        .await;
    watcher
        .wait_for("the reply", WAIT, |seen| {
            seen.topic == REPLY && seen.json()["id"] == id.as_str()
        })
        .await
        .json()
}

/// b1's clocks and pause (a `snapshot` read) and its history's rows
/// (`history`), asked over MQTT.
async fn board(watcher: &mut Watcher, tag: &str) -> (Value, Vec<Value>) {
    let snapshot = send(
        watcher,
        json!({"id": format!("snap-{tag}"), "arbiter": "reader", "command": "snapshot"}),
    )
    .await;
    assert_eq!(snapshot["ok"], true, "{snapshot}");
    let history = send(
        watcher,
        json!({"id": format!("hist-{tag}"), "arbiter": "reader", "command": "history"}),
    )
    .await;
    assert_eq!(history["ok"], true, "{history}");
    let rows = history["result"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("history rows: {history}"));
    (snapshot["result"].clone(), rows)
}

/// Whether any history row is an adjustment or a pause.
fn corrected(rows: &[Value]) -> bool {
    rows.iter()
        .any(|row| row["do"] == "adjust" || row["do"] == "pause")
}

/// Waits until `what` holds of `text()` (a log), within `limit`.
async fn wait_log(
    what: &str,
    limit: Duration,
    text: impl Fn() -> String,
    ready: impl Fn(&str) -> bool,
) {
    let deadline = Instant::now() + limit;
    loop {
        let log = text();
        if ready(&log) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {limit:?}:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The daemon is up on the broker: `online` retained (the command topics
/// are subscribed before it is published).
async fn daemon_online(broker: &Broker, name: &str) -> Watcher {
    let mut watcher =
        Watcher::connect(options(name, broker.port, None), "chessclock/#", WAIT).await;
    watcher
        .wait_for("the daemon online", WAIT, |seen| {
            seen.topic == ONLINE && seen.text() == "online"
        })
        .await;
    watcher
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_command_is_refused_and_changes_nothing() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let mut watcher = daemon_online(&broker, "expired").await;
    let (before, rows) = board(&mut watcher, "before").await;
    assert!(!corrected(&rows), "{rows:?}");

    let late = json!({"id": "late-1", "arbiter": "Ann Arbiter", "command": "adjust",
                      "side": "white", "remaining_ms": 30_000,
                      "deadline_ms": now_ms() - 2_000});
    let reply = send(&mut watcher, late).await;
    assert_eq!(reply["ok"], false, "{reply}");
    assert_eq!(reply["error"]["kind"], "expired", "{reply}");
    let (after, rows) = board(&mut watcher, "after").await;
    assert_eq!(
        after["white_remaining_ms"], before["white_remaining_ms"],
        "{after}"
    );
    assert!(!corrected(&rows), "{rows:?}");
    let log = daemon.log();
    assert!(
        log.contains("past its deadline") && log.contains("late-1"),
        "the refusal is in the daemon's log:\n{log}"
    );

    // The same command within its deadline is carried out.
    let in_time = json!({"id": "in-time-1", "arbiter": "Ann Arbiter", "command": "adjust",
                         "side": "white", "remaining_ms": 30_000,
                         "deadline_ms": now_ms() + 60_000});
    let reply = send(&mut watcher, in_time).await;
    assert_eq!(reply["ok"], true, "{reply}");
    let (after, rows) = board(&mut watcher, "in-time").await;
    assert_eq!(after["white_remaining_ms"], 30_000, "{after}");
    assert!(corrected(&rows), "{rows:?}");
}

/// A hub with arbiter `ann` logged in: the hub and the headers of her
/// commands.
async fn hub_with_ann(dir: &Path, broker: &Broker) -> (Hub, Vec<(String, String)>) {
    let hub = Hub::with_arbiters(broker.port, dir, &[]).await;
    hub.wait_for_boards(&["b1"]).await;
    let headers = hub.log_in(ARBITER, ARBITER_PASSWORD).await.headers();
    (hub, headers)
}

async fn post(hub: &Hub, headers: &[(String, String)], body: &str) -> Answer {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    request(hub.port, "POST", "/api/command", &headers, body).await
}

const WHITE_0_30: &str = r#"{"board":"b1","command":"adjust","side":"white","time":"0:30"}"#;
const PAUSE: &str = r#"{"board":"b1","command":"pause"}"#;
/// The later command whose answer is the sync point.
const BLACK_4_00: &str = r#"{"board":"b1","command":"adjust","side":"black","time":"4:00"}"#;

/// The later command, sent until the hub and the daemon are both back
/// (503 while the hub reconnects); its answer.
async fn later_command(hub: &Hub, headers: &[(String, String)]) -> Answer {
    let deadline = Instant::now() + WAIT * 2;
    loop {
        let answer = post(hub, headers, BLACK_4_00).await;
        if answer.status == 200 {
            return answer;
        }
        assert!(
            Instant::now() < deadline && matches!(answer.status, 503 | 504),
            "{answer:?}\nhub log:\n{}",
            hub.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// After the later command: black at 4:00, White's 0:30 and the pause never
/// carried out, and none of `ids` in the daemon's log but as refused.
async fn nothing_ran_late(broker: &Broker, daemon: &Daemon, white_before: &Value, ids: &[String]) {
    let mut watcher =
        Watcher::connect(options("after", broker.port, None), "chessclock/#", WAIT).await;
    let (after, rows) = board(&mut watcher, "after").await;
    assert_eq!(after["black_remaining_ms"], 240_000, "{after}");
    assert_eq!(&after["white_remaining_ms"], white_before, "{after}");
    assert_eq!(after["paused"], false, "{after}");
    let adjusted: Vec<&Value> = rows
        .iter()
        .filter(|row| row["do"] == "adjust" || row["do"] == "pause")
        .collect();
    assert_eq!(adjusted.len(), 1, "only the later command: {adjusted:?}");
    let log = daemon.log();
    for id in ids {
        for line in log.lines().filter(|line| line.contains(id.as_str())) {
            assert!(
                line.contains("past its deadline"),
                "{id} carried out late: {line}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_broker_down_the_hub_answers_503_at_once_and_nothing_runs_later() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let mut broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let mut watcher = daemon_online(&broker, "down").await;
    let (before, _) = board(&mut watcher, "before").await;
    drop(watcher);
    let (hub, headers) = hub_with_ann(dir.path(), &broker).await;

    broker.kill();
    wait_log(
        "the hub sees the broker away",
        WAIT,
        || hub.log(),
        |log| log.contains("hub: the broker is away"),
    )
    .await;
    let mut ids = Vec::new();
    for body in [WHITE_0_30, PAUSE] {
        let asked = Instant::now();
        let answer = post(&hub, &headers, body).await;
        assert_eq!(answer.status, 503, "{answer:?}");
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{:?}",
            asked.elapsed()
        );
        assert!(
            answer.json()["error"]
                .as_str()
                .unwrap()
                .contains("not connected"),
            "{answer:?}"
        );
        ids.extend(answer.json()["id"].as_str().map(str::to_owned));
    }

    broker.run();
    wait_log(
        "the hub connected again",
        WAIT * 2,
        || hub.log(),
        |log| log.matches("hub: connected to the broker").count() >= 2,
    )
    .await;
    drop(daemon_online(&broker, "back").await);
    let later = later_command(&hub, &headers).await;
    assert_eq!(later.json()["ok"], true, "{later:?}");
    nothing_ran_late(&broker, &daemon, &before["white_remaining_ms"], &ids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_answered_504_is_refused_when_a_frozen_broker_wakes() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let daemon = daemon(dir.path(), &broker, &bus);
    let mut watcher = daemon_online(&broker, "frozen").await;
    let (before, _) = board(&mut watcher, "before").await;
    drop(watcher);
    let (hub, headers) = hub_with_ann(dir.path(), &broker).await;

    let pid = nix::unistd::Pid::from_raw(broker.pid().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let asked = Instant::now();
    let answer = post(&hub, &headers, WHITE_0_30).await;
    let waited = asked.elapsed();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    // Handed to a link that looked alive: no reply within the wait (or,
    // had the hub seen the link die first, refused at once).
    assert!(matches!(answer.status, 504 | 503), "{answer:?}");
    if answer.status == 504 {
        assert!(waited >= Duration::from_secs(5), "{waited:?}");
    }
    let ids: Vec<String> = answer.json()["id"]
        .as_str()
        .map(str::to_owned)
        .into_iter()
        .collect();

    let later = later_command(&hub, &headers).await;
    assert_eq!(later.json()["ok"], true, "{later:?}");
    nothing_ran_late(&broker, &daemon, &before["white_remaining_ms"], &ids).await;
    eprintln!(
        "the 504'd command at the daemon: {}",
        daemon
            .log()
            .lines()
            .filter(|line| ids.iter().any(|id| line.contains(id.as_str())))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
