//! The hall's security as README "Setting up the hall's broker (TLS,
//! passwords, ACL)" sets it up: `scripts/hall-credentials` makes the CA,
//! the broker's certificate, a credentials file per user, the password
//! file, the ACL and the mosquitto snippet from a plan; each test runs its
//! own mosquitto with the generated snippet (TLS on a free port of
//! 127.0.0.1) and the real `chessclockd` with simulated units, logged in
//! with its generated credentials over `mqtts://`. What the ACL refuses
//! never arrives: checked by a later message from the same client that
//! does (the broker keeps one client's messages in order).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use chessclock_sim_units::SimUnits;
use rumqttc::{ConnectReturnCode, ConnectionError, QoS};
use serde_json::{json, Value};

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};
use kit::hall::secure::{run_script, HallFiles, SecureBroker};
use kit::hall::watch::{first_connection, tls_options, Seen, Watcher};
use kit::hall::{Hub, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const PLAN: &str = "# a test hall
hall open
broker 127.0.0.1 localhost
host pi1 b1
host pi2 b2 b3   # a Pi with two boards
hub hub
arbiter ann
spectator screen
";

fn topic(board: &str, leaf: &str) -> String {
    format!("chessclock/open/board/{board}/{leaf}")
}

/// A daemon of host pi1 with board b1 (simulated units), connected over
/// `mqtts://` with its generated credentials and the hall's CA.
struct Pi {
    _bus: PrivateBus,
    units: Option<SimUnits>,
    daemon: Option<Daemon>,
    client: Client,
}

impl Pi {
    async fn start(dir: &std::path::Path, files: &HallFiles) -> Pi {
        let bus = PrivateBus::session_in(dir);
        let units = kit::daemon::demo_units(dir);
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

[hall]
broker = "mqtts://127.0.0.1:{port}"
name = "open"
host = "pi1"
credentials = "{credentials}"
ca = "{ca}"
"#,
                daemon = kit::daemon::daemon_table(&dir.join("state")),
                buttons = units.path("buttons").unwrap().display(),
                display = units.path("display").unwrap().display(),
                port = files.port,
                credentials = files.credentials("pi1").display(),
                ca = files.ca().display(),
            ),
        )
        .unwrap();
        let daemon = Daemon::spawn(&config, &bus, dir.join("daemon.log"));
        let client = Client::connect_when(&bus, &daemon, WAIT, devices_linked).await;
        Pi {
            _bus: bus,
            units: Some(units),
            daemon: Some(daemon),
            client,
        }
    }
}

impl Drop for Pi {
    fn drop(&mut self) {
        drop(self.daemon.take());
        if let Some(units) = self.units.take() {
            units.shutdown();
        }
    }
}

/// A client of the hall logged in as `user` over TLS, watching `filter`.
async fn watcher(files: &HallFiles, user: &str, filter: &str) -> Watcher {
    let (name, password) = files.login(user);
    let options = tls_options(
        &format!("test-{user}"),
        files.port,
        files.ca_pem(),
        Some((&name, &password)),
    );
    Watcher::connect(options, filter, WAIT).await
}

/// Publishes `marker` on `marker_topic` from `client` after what it sent
/// before, and waits for `watcher` to see it: anything the client sent
/// before that the broker let through has arrived by then.
async fn fence(client: &Watcher, watcher: &mut Watcher, marker_topic: &str, marker: &str) {
    client
        .client
        .publish(
            marker_topic,
            QoS::AtLeastOnce,
            false,
            marker.as_bytes().to_vec(),
        )
        .await
        .unwrap();
    let marker = marker.to_owned();
    watcher
        .wait_for("the fence", WAIT, move |seen: &Seen| seen.text() == marker)
        .await;
}

async fn command(hub: &mut Watcher, board: &str, id: &str, command: Value) -> Value {
    let mut request = json!({"id": id, "arbiter": "Ann Arbiter"});
    for (key, value) in command.as_object().unwrap() {
        request[key] = value.clone();
    }
    hub.mark();
    hub.client
        .publish(
            topic(board, "command"),
            QoS::AtLeastOnce,
            false,
            serde_json::to_vec(&request).unwrap(),
        )
        .await
        .unwrap();
    let (reply_topic, id) = (topic(board, "reply"), id.to_owned());
    hub.wait_for("the reply", WAIT, move |seen| {
        seen.topic == reply_topic && seen.json()["id"] == id.as_str()
    })
    .await
    .json()
}

fn callers(history: &Value) -> Vec<(String, Value)> {
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["do"].as_str().unwrap_or("").to_owned(),
                row["caller_name"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hall_secured_by_the_generated_files() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let files = HallFiles::generate(dir.path(), PLAN);
    let broker = SecureBroker::start(&files);
    let pi_dir = dir.path().join("pi1");
    std::fs::create_dir_all(&pi_dir).unwrap();
    let pi = Pi::start(&pi_dir, &files).await;

    // The hub sees the daemon's state over TLS. The daemon may connect
    // after this first subscriber (then the state arrives live), so the
    // retained copy is checked by a hub that connects once it is there.
    let mut first = watcher(&files, "hub", "chessclock/open/#").await;
    first
        .wait_for("the state over mqtts://", WAIT, |seen| {
            seen.topic == topic("b1", "state")
        })
        .await;
    drop(first);
    let mut hub = watcher(&files, "hub", "chessclock/open/#").await;
    let state = hub
        .wait_for("the retained state over mqtts://", WAIT, |seen| {
            seen.topic == topic("b1", "state") && seen.retain
        })
        .await
        .json();
    assert_eq!(state["host"], "pi1");
    assert_eq!(state["board"], "b1");
    let online = hub
        .wait_for("online", WAIT, |seen| {
            seen.topic == "chessclock/open/host/pi1/online"
        })
        .await;
    assert_eq!(online.text(), "online");
    assert!(online.retain);

    // Another Pi cannot publish under pi1's board (state, event, reply) or
    // host, nor command it; what it may publish (its own board's state)
    // arrives.
    let pi2 = watcher(&files, "pi2", "chessclock/open/board/b2/command").await;
    hub.mark();
    for (leaf, payload) in [
        ("state", r#"{"forged":"state"}"#),
        ("event", r#"{"forged":"event"}"#),
        ("reply", r#"{"forged":"reply"}"#),
        (
            "command",
            r#"{"id":"p2","arbiter":"Mallory","command":"start"}"#,
        ),
    ] {
        pi2.client
            .publish(
                topic("b1", leaf),
                QoS::AtLeastOnce,
                false,
                payload.as_bytes().to_vec(),
            )
            .await
            .unwrap();
    }
    pi2.client
        .publish(
            "chessclock/open/host/pi1/online",
            QoS::AtLeastOnce,
            true,
            b"offline".to_vec(),
        )
        .await
        .unwrap();
    fence(
        &pi2,
        &mut hub,
        &topic("b2", "state"),
        r#"{"pi2":"own board"}"#,
    )
    .await;
    assert!(
        !hub.saw(|seen| seen.text().contains("forged")
            || seen.text().contains("Mallory")
            || (seen.topic.ends_with("/pi1/online") && seen.text() == "offline")),
        "a message of pi2 under pi1's topics arrived: {:?}",
        hub.log
    );
    // The daemon did not take pi2's start: no reply to it, nothing in the
    // history, the game not started.
    let history = pi.client.history().await;
    assert!(
        callers(&history).iter().all(|(_, name)| name != "Mallory"),
        "{history}"
    );
    assert_eq!(pi.client.state().await["started"], false);

    // A spectator reads but cannot command; a Pi cannot command its own
    // board either (commands come from the hub and the arbiters only).
    let mut screen = watcher(&files, "screen", "chessclock/open/board/+/state").await;
    screen
        .wait_for("the spectator reads the state", WAIT, |seen| {
            seen.topic == topic("b1", "state")
        })
        .await;
    screen
        .publish_acked(
            &topic("b1", "command"),
            false,
            br#"{"id":"s1","arbiter":"Spectator","command":"start"}"#,
        )
        .await;
    // A Pi's own login cannot command either: pi2 on its own board (a
    // second client with pi1's login would take the daemon's place, one
    // login being one client: see the next test).
    pi2.client
        .publish(
            topic("b2", "command"),
            QoS::AtLeastOnce,
            false,
            br#"{"id":"self1","arbiter":"Pi Itself","command":"start"}"#.to_vec(),
        )
        .await
        .unwrap();
    fence(&pi2, &mut hub, &topic("b2", "event"), r#"{"pi2":"fence"}"#).await;
    assert!(
        !hub.saw(|seen| seen.text().contains("Pi Itself")),
        "a Pi's command arrived: {:?}",
        hub.log
    );

    // The hub's command comes after theirs; the daemon takes commands in
    // order, so by its reply theirs would have been answered.
    let reply = command(&mut hub, "b1", "h1", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    assert!(
        !hub.ever_saw(|seen| seen.topic == topic("b1", "reply")
            && (seen.json()["id"] == "s1" || seen.json()["id"] == "self1")),
        "a refused client's command was answered: {:?}",
        hub.log
    );
    let history = pi.client.history().await;
    let starts: Vec<Value> = callers(&history)
        .into_iter()
        .filter(|(what, _)| what == "start")
        .map(|(_, name)| name)
        .collect();
    assert_eq!(starts, vec![json!("Ann Arbiter")], "{history}");

    // A command the daemon refuses gets an error reply (and is in the
    // history as refused, under the arbiter's name).
    let reply = command(&mut hub, "b1", "h2", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], false, "{reply}");
    assert_eq!(reply["error"]["kind"], "invalid-state", "{reply}");
    let reply = command(
        &mut hub,
        "b1",
        "h3",
        json!({"command": "adjust", "side": "white", "remaining_ms": -1}),
    )
    .await;
    assert_eq!(reply["error"]["kind"], "invalid-argument", "{reply}");
    // An arbiter's own client commands like the hub.
    let mut ann = watcher(&files, "ann", "chessclock/open/board/b1/reply").await;
    let reply = command(&mut ann, "b1", "a1", json!({"command": "pause"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(pi.client.state().await["paused"], true);

    // Nobody gets in without a login the password file knows.
    let refused = |result: Result<(), ConnectionError>, who: &str| match result {
        Err(ConnectionError::ConnectionRefused(code)) => {
            assert!(
                matches!(
                    code,
                    ConnectReturnCode::NotAuthorized | ConnectReturnCode::BadUserNamePassword
                ),
                "{who}: {code:?}"
            )
        }
        other => panic!("{who} got in: {other:?}"),
    };
    let (_, hub_password) = files.login("hub");
    for (who, login) in [
        ("an unknown user", Some(("mallory", hub_password.as_str()))),
        ("the hub with a wrong password", Some(("hub", "guess"))),
        ("a client without a login", None),
    ] {
        let options = tls_options("stranger", files.port, files.ca_pem(), login);
        refused(first_connection(options, WAIT).await, who);
    }
    // A client that does not trust the hall's CA does not connect (the
    // broker is TLS only).
    let other_dir = tempfile::tempdir().unwrap();
    let other = HallFiles::generate(other_dir.path(), PLAN);
    let (name, password) = files.login("hub");
    let options = tls_options(
        "wrong-ca",
        files.port,
        other.ca_pem(),
        Some((&name, &password)),
    );
    match first_connection(options, WAIT).await {
        Err(ConnectionError::ConnectionRefused(_)) | Ok(()) => {
            panic!("a client that trusts another CA got in")
        }
        Err(_) => {}
    }
    drop(broker);
}

/// One login, one client (issue 29, item 3): the generated broker
/// configuration makes every client's id its user name on every listener,
/// so spectators that connect with the Pi's predictable client id
/// (`chessclockd-open-pi1`), one over TLS and one over the plain local
/// listener, get in as themselves and the Pi stays online: no `offline`, no
/// takeover in the broker's log, the daemon connected once, and the Pi takes
/// a command while both are connected, its new state reaching both. The
/// real hub runs on its own login meanwhile (the plain listener), and sees
/// the same state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stolen_client_id_does_not_take_a_pis_place() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let plan = format!("{PLAN}spectator screen2\n");
    let files = HallFiles::generate_with(dir.path(), &plan, true);
    let local = files.local_port.unwrap();
    let broker = SecureBroker::start(&files);
    let pi_dir = dir.path().join("pi1");
    std::fs::create_dir_all(&pi_dir).unwrap();
    let pi = Pi::start(&pi_dir, &files).await;
    let hub_login = files.credentials("hub");
    let hub = Hub::start(
        local,
        dir.path(),
        &["--credentials", hub_login.to_str().unwrap()],
    )
    .await;
    const ONLINE: &str = "chessclock/open/host/pi1/online";
    let mut ann = watcher(&files, "ann", "chessclock/open/#").await;
    ann.wait_for("pi1 online", WAIT, |seen| {
        seen.topic == ONLINE && seen.text() == "online"
    })
    .await;
    hub.wait_for("/boards.json", "the hub reads b1", |body| {
        body.contains("\"b1\"")
    })
    .await;
    ann.mark();

    let stolen = "chessclockd-open-pi1";
    let (user, password) = files.login("screen");
    let mut over_tls = Watcher::connect(
        tls_options(stolen, files.port, files.ca_pem(), Some((&user, &password))),
        "chessclock/open/board/+/state",
        WAIT,
    )
    .await;
    let (user, password) = files.login("screen2");
    let mut over_plain = Watcher::connect(
        kit::hall::watch::options(stolen, local, Some((&user, &password))),
        "chessclock/open/board/+/state",
        WAIT,
    )
    .await;

    // Both intruders are in; the Pi takes a command now, and its new state
    // reaches both: the three are connected at once.
    let reply = command(&mut ann, "b1", "steal1", json!({"command": "start"})).await;
    assert_eq!(reply["ok"], true, "{reply}");
    for (how, intruder) in [("over TLS", &mut over_tls), ("over plain", &mut over_plain)] {
        intruder
            .wait_for(&format!("the started state {how}"), WAIT, |seen| {
                seen.topic == topic("b1", "state") && seen.json()["state"]["started"] == true
            })
            .await;
    }
    hub.wait_for("/boards.json", "the hub sees b1 started", |body| {
        serde_json::from_str::<Value>(body)
            .is_ok_and(|v| v["boards"]["b1"]["state"]["started"] == true)
    })
    .await;
    assert!(
        !ann.saw(|seen| seen.topic == ONLINE && seen.text() == "offline"),
        "pi1 went offline: {:?}",
        ann.log
    );
    let log = broker.log();
    assert!(!log.contains("already connected"), "a takeover: {log}");
    for user in ["pi1", "hub", "screen", "screen2"] {
        assert!(
            log.contains(&format!(" as {user} (")),
            "{user} is not known by its login: {log}"
        );
    }
    let daemon_log = pi.daemon.as_ref().unwrap().log();
    assert_eq!(
        daemon_log.matches("hall: connected to the broker").count(),
        1,
        "the daemon connected more than once: {daemon_log}"
    );
    drop((over_tls, over_plain, hub));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_the_script_again_adds_a_host_and_keeps_every_secret() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let files = HallFiles::generate(dir.path(), PLAN);
    let read = |name: &str| std::fs::read(files.out.join(name)).unwrap();
    let before: Vec<(String, Vec<u8>)> = [
        "ca.key",
        "ca.pem",
        "broker.key",
        "broker.pem",
        "credentials/pi1.toml",
        "credentials/pi2.toml",
        "credentials/hub.toml",
        "credentials/ann.toml",
        "credentials/screen.toml",
    ]
    .iter()
    .map(|name| (name.to_string(), read(name)))
    .collect();
    let acl = String::from_utf8(read("acl")).unwrap();
    assert!(!acl.contains("pi3"), "{acl}");
    let passwd = String::from_utf8(read("passwd")).unwrap();
    // Hashed: no password in the clear.
    let (_, pi1_password) = files.login("pi1");
    assert!(!passwd.contains(&pi1_password), "{passwd}");
    assert!(
        passwd.lines().any(|line| line.starts_with("pi1:$7$")),
        "{passwd}"
    );

    let more = format!("{PLAN}host pi3 b4\n");
    let output = run_script(
        dir.path(),
        &more,
        &["--port", &files.port.to_string(), "--bind", "127.0.0.1"],
        &files.out,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for (name, bytes) in &before {
        assert_eq!(&read(name), bytes, "{name} changed on the second run");
    }
    let acl = String::from_utf8(read("acl")).unwrap();
    assert!(acl.contains("user pi3\n"), "{acl}");
    assert!(
        acl.contains("topic write chessclock/open/board/b4/state\n"),
        "{acl}"
    );
    assert!(
        acl.contains("topic read chessclock/open/board/b4/command\n"),
        "{acl}"
    );

    // The old users and the new one get in with their files.
    let broker = SecureBroker::start(&files);
    for user in ["pi1", "pi3", "hub"] {
        let (name, password) = files.login(user);
        let options = tls_options(user, broker.port, files.ca_pem(), Some((&name, &password)));
        first_connection(options, WAIT)
            .await
            .unwrap_or_else(|error| panic!("{user}: {error}: {}", broker.log()));
    }

    // New broker names: a new certificate with the same key.
    let moved = more.replace(
        "broker 127.0.0.1 localhost",
        "broker 127.0.0.1 hall.example",
    );
    let output = run_script(
        dir.path(),
        &moved,
        &["--port", &files.port.to_string()],
        &files.out,
    );
    assert!(output.status.success());
    assert_eq!(read("broker.key"), before[2].1);
    assert_ne!(read("broker.pem"), before[3].1);
    assert_eq!(read("ca.pem"), before[1].1);
}

#[test]
fn a_bad_plan_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (plan, says) in [
        ("hall open\nbroker 127.0.0.1\nhost pi1\n", "hall.plan:3"),
        ("hall open\nbroker 127.0.0.1\nhost pi/1 b1\n", "pi/1"),
        (
            "hall open\nbroker 127.0.0.1\nhost pi1 b1\nhost pi2 b1\n",
            "b1",
        ),
        ("hall open\nbroker 127.0.0.1\nhost pi1 b1\nhub pi1\n", "pi1"),
        ("broker 127.0.0.1\nhost pi1 b1\n", "no `hall NAME`"),
        ("hall open\nhost pi1 b1\n", "no `broker"),
        (
            "hall open\nbroker 127.0.0.1\nboss pi1\n",
            "unknown statement `boss`",
        ),
        ("hall open\nbroker 127.0.0.1\nhost pi1 b*\n", "b*"),
    ] {
        let output = run_script(dir.path(), plan, &[], &out);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{plan}: {stderr}");
        assert!(stderr.contains(says), "{plan}: {stderr}");
    }
    // Nothing was written for a plan refused before any file was made.
    assert!(!out.join("acl").exists());
}
