//! Several daemons on one broker, as in a hall: three real `chessclockd`s
//! (hosts pi1..pi3, boards b1..b3, each with its own simulated units and
//! private bus) on one mosquitto of the test's own (127.0.0.1, a free
//! port, anonymous, no persistence). A client that subscribes late gets
//! every board's state and every host's `online` (retained); a daemon
//! killed with kill -9 or frozen with SIGSTOP shows `offline` within 2 x
//! its keepalive while the others stay online; after a broker restart every
//! daemon publishes its state again and takes commands. Serialised; every
//! wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chessclock_sim_units::SimUnits;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use rumqttc::QoS;
use serde_json::{json, Value};

use kit::daemon::{Daemon, PrivateBus};
use kit::hall::watch::{options, Seen, Watcher};
use kit::hall::{Broker, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const HALL: &str = "fleet";
const PIS: usize = 3;

fn board_topic(board: &str, leaf: &str) -> String {
    format!("chessclock/{HALL}/board/{board}/{leaf}")
}

fn online_topic(host: &str) -> String {
    format!("chessclock/{HALL}/host/{host}/online")
}

/// One Pi: a daemon with one board and its simulated units.
struct Pi {
    host: String,
    board: String,
    dir: PathBuf,
    _bus: PrivateBus,
    units: Option<SimUnits>,
    daemon: Option<Daemon>,
}

impl Pi {
    fn start(root: &Path, index: usize, port: u16, keepalive: u16) -> Pi {
        let host = format!("pi{index}");
        let board = format!("b{index}");
        let dir = root.join(&host);
        std::fs::create_dir_all(&dir).unwrap();
        let bus = PrivateBus::session_in(&dir);
        let units = kit::daemon::demo_units(&dir);
        let config = dir.join("chessclockd.toml");
        std::fs::write(
            &config,
            format!(
                r#"{daemon}
[[board]]
id = "{board}"
control = "300+2"
buttons = "{buttons}"
displays = ["{display}"]

[hall]
broker = "mqtt://127.0.0.1:{port}"
name = "{HALL}"
host = "{host}"
keepalive-seconds = {keepalive}
"#,
                daemon = kit::daemon::daemon_table(&dir.join("state")),
                buttons = units.path("buttons").unwrap().display(),
                display = units.path("display").unwrap().display(),
            ),
        )
        .unwrap();
        let daemon = Daemon::spawn(&config, &bus, dir.join("daemon.log"));
        Pi {
            host,
            board,
            dir,
            _bus: bus,
            units: Some(units),
            daemon: Some(daemon),
        }
    }

    fn daemon(&self) -> &Daemon {
        self.daemon.as_ref().unwrap()
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(self.daemon().child.id() as i32)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("daemon.log")).unwrap_or_default()
    }
}

impl Drop for Pi {
    fn drop(&mut self) {
        if let Some(daemon) = self.daemon.take() {
            // A frozen daemon must not stay frozen (kill works anyway).
            let _ = kill(Pid::from_raw(daemon.child.id() as i32), Signal::SIGCONT);
            drop(daemon);
        }
        if let Some(units) = self.units.take() {
            units.shutdown();
        }
    }
}

fn fleet(root: &Path, port: u16, keepalive: u16) -> Vec<Pi> {
    (1..=PIS)
        .map(|i| Pi::start(root, i, port, keepalive))
        .collect()
}

/// A state of `board` with its units linked.
fn linked_state(seen: &Seen, board: &str) -> bool {
    seen.topic == board_topic(board, "state")
        && seen.json()["snapshot"]["devices"]
            .as_array()
            .is_some_and(|devices| {
                !devices.is_empty() && devices.iter().all(|d| d["connected"] == true)
            })
}

async fn watcher(broker: &Broker, name: &str) -> Watcher {
    Watcher::connect(
        options(name, broker.port, None),
        &format!("chessclock/{HALL}/#"),
        WAIT,
    )
    .await
}

/// Waits until every Pi is online with its units linked.
async fn all_up(watcher: &mut Watcher, pis: &[Pi]) {
    for pi in pis {
        let topic = online_topic(&pi.host);
        watcher
            .wait_for(&format!("{} online", pi.host), WAIT, move |seen| {
                seen.topic == topic && seen.text() == "online"
            })
            .await;
        let board = pi.board.clone();
        watcher
            .wait_for(&format!("{} linked", pi.board), WAIT, move |seen| {
                linked_state(seen, &board)
            })
            .await;
    }
}

/// Sends a command to `board` and waits for its reply.
async fn command(watcher: &mut Watcher, board: &str, id: &str, command: Value) -> Value {
    let mut request = json!({"id": id, "arbiter": format!("Arbiter of {board}")});
    for (key, value) in command.as_object().unwrap() {
        request[key] = value.clone();
    }
    watcher.mark();
    watcher
        .client
        .publish(
            board_topic(board, "command"),
            QoS::AtLeastOnce,
            false,
            serde_json::to_vec(&request).unwrap(),
        )
        .await
        .unwrap();
    let (reply_topic, id) = (board_topic(board, "reply"), id.to_owned());
    watcher
        .wait_for("the reply", WAIT, move |seen| {
            seen.topic == reply_topic && seen.json()["id"] == id.as_str()
        })
        .await
        .json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_daemons_on_one_broker_then_kill_9_and_sigstop_show_offline_within_twice_the_keepalive(
) {
    let _serial = SERIAL.lock().await;
    // mosquitto 2.0.11 finds a lapsed keepalive up to about 5.5 s after
    // 1.5 x keepalive (measured here: 4.9 s with 16 s): 20 s leaves room
    // within 2 x on a loaded machine.
    let keepalive: u16 = 20;
    let limit = Duration::from_secs(2 * u64::from(keepalive));
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let pis = fleet(dir.path(), broker.port, keepalive);
    let mut first = watcher(&broker, "first").await;
    all_up(&mut first, &pis).await;

    // A client that comes late gets every board's state and every host's
    // `online` from the broker's retained store.
    let mut late = watcher(&broker, "late").await;
    for pi in &pis {
        let (board, host) = (pi.board.clone(), pi.host.clone());
        let state = late
            .wait_for(&format!("{board}'s retained state"), WAIT, move |seen| {
                seen.retain && seen.topic == board_topic(&board, "state")
            })
            .await
            .json();
        assert_eq!(state["host"], host.as_str());
        assert_eq!(state["board"], pi.board.as_str());
        let online = late
            .wait_for(&format!("{host}'s retained online"), WAIT, move |seen| {
                seen.retain && seen.topic == online_topic(&host)
            })
            .await;
        assert_eq!(online.text(), "online");
    }
    // Each board answers on its own topics, from its own daemon.
    for pi in &pis {
        let reply = command(
            &mut late,
            &pi.board,
            &format!("s-{}", pi.board),
            json!({"command": "start"}),
        )
        .await;
        assert_eq!(reply["ok"], true, "{reply}");
        let board = pi.board.clone();
        late.wait_for(&format!("{board} running"), WAIT, move |seen| {
            seen.topic == board_topic(&board, "state")
                && seen.json()["snapshot"]["running"] == "white"
        })
        .await;
    }

    // pi2 dies (kill -9), pi3 freezes (SIGSTOP), both now.
    late.mark();
    let stopped = Instant::now();
    kill(pis[1].pid(), Signal::SIGKILL).unwrap();
    kill(pis[2].pid(), Signal::SIGSTOP).unwrap();
    let dead = late
        .wait_for("pi2's last will", limit, |seen| {
            seen.topic == online_topic("pi2")
        })
        .await;
    assert_eq!(dead.text(), "offline");
    let after_kill = stopped.elapsed();
    let frozen = late
        .wait_for("pi3's last will", limit, |seen| {
            seen.topic == online_topic("pi3")
        })
        .await;
    assert_eq!(frozen.text(), "offline");
    let after_stop = stopped.elapsed();
    assert!(after_kill < limit, "kill -9: offline after {after_kill:?}");
    assert!(after_stop < limit, "SIGSTOP: offline after {after_stop:?}");
    // pi1 was untouched: still online, its board still answers.
    assert!(
        !late.saw(|seen| seen.topic == online_topic("pi1")),
        "pi1's online changed: {:?}",
        late.log
    );
    let reply = command(&mut late, "b1", "r-b1", json!({"command": "snapshot"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(reply["result"]["running"], "white", "{reply}");

    // Thawed, pi3 connects again and says so.
    late.mark();
    kill(pis[2].pid(), Signal::SIGCONT).unwrap();
    late.wait_for("pi3 online again", WAIT, |seen| {
        seen.topic == online_topic("pi3") && seen.text() == "online"
    })
    .await;
    eprintln!("offline after kill -9: {after_kill:?}; after SIGSTOP: {after_stop:?} (keepalive {keepalive} s)");
    drop(pis);
    drop(broker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_broker_restart_three_daemons_publish_again_and_take_commands() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let mut broker = Broker::start(dir.path());
    let pis = fleet(dir.path(), broker.port, 5);
    {
        let mut first = watcher(&broker, "first").await;
        all_up(&mut first, &pis).await;
    }

    // The broker goes away, with its retained messages (no persistence).
    broker.kill();
    for pi in &pis {
        let deadline = Instant::now() + WAIT;
        while !pi.log().contains("the broker is away") {
            assert!(Instant::now() < deadline, "{}: {}", pi.host, pi.log());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    broker.run();

    // Each daemon connects again by itself: `online` and its board's
    // state again, and its command topic subscribed again.
    let mut watcher = watcher(&broker, "after").await;
    for pi in &pis {
        let (host, board) = (pi.host.clone(), pi.board.clone());
        watcher
            .wait_for(
                &format!("{host} online again"),
                Duration::from_secs(15),
                move |seen| seen.topic == online_topic(&host) && seen.text() == "online",
            )
            .await;
        watcher
            .wait_for(
                &format!("{board}'s state again"),
                Duration::from_secs(15),
                move |seen| seen.topic == board_topic(&board, "state"),
            )
            .await;
    }
    for pi in &pis {
        let reply = command(
            &mut watcher,
            &pi.board,
            &format!("s-{}", pi.board),
            json!({"command": "start"}),
        )
        .await;
        assert_eq!(reply["ok"], true, "{}: {reply}", pi.board);
        let reply = command(
            &mut watcher,
            &pi.board,
            &format!("h-{}", pi.board),
            json!({"command": "history"}),
        )
        .await;
        let rows = reply["result"]["events"].as_array().unwrap();
        let start = rows
            .iter()
            .find(|row| row["do"] == "start")
            .unwrap_or_else(|| panic!("no start in {reply}"));
        assert_eq!(start["caller_name"], format!("Arbiter of {}", pi.board));
        assert!(pi.log().contains("reconnect=true"), "{}", pi.log());
    }
    drop(pis);
}
