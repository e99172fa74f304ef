//! The hub's pages in Debian's headless chromium (chromedriver, fantoccini)
//! with a real mosquitto (the test's own), the real daemon (board `b1` with
//! simulated button and display units on PTYs, board `b2` without devices)
//! and the hub binary with an arbiters' password file made by
//! `chessclock-hall passwd`: rows appear, a flag turns its row red within a
//! second, an arbiter call is highlighted (and beeps with the sound on),
//! refusals of the hub's API (not logged in, no CSRF token, a wrong
//! password, a bare number, an unknown board, too many failures), a login
//! and corrections made on the page that reach the daemon's history with
//! the arbiter's name, the page after a hub restart (live again, the login
//! asked again), the arbiters' page without a login or a screen token (the
//! spectators' view until a login), and a spectator page without controls. Screenshots go to `target/hall-screenshots/`. Every wait has
//! a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::time::Duration;

use chessclock_protocol::Button;
use fantoccini::Locator;
use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};
use kit::hall::browser::{request, Browser};
use kit::hall::{Broker, Hub, ARBITER, ARBITER_PASSWORD, SCREEN_TOKEN, WAIT};

/// Every command published in the hall, as the broker delivers them.
async fn watch_commands(broker: &Broker) -> mpsc::UnboundedReceiver<Value> {
    let mut options = MqttOptions::new("test-command-watcher", "127.0.0.1", broker.port);
    options.set_keep_alive(Duration::from_secs(5));
    let (client, mut eventloop) = AsyncClient::new(options, 16);
    client
        .subscribe("chessclock/open/board/+/command", QoS::AtLeastOnce)
        .await
        .unwrap();
    let (tell, told) = mpsc::unbounded_channel();
    let (subscribed, is_subscribed) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let _client = client;
        let mut subscribed = Some(subscribed);
        while let Ok(event) = eventloop.poll().await {
            match event {
                Event::Incoming(Incoming::SubAck(_)) => {
                    if let Some(s) = subscribed.take() {
                        let _ = s.send(());
                    }
                }
                Event::Incoming(Incoming::Publish(p)) => {
                    let _ = tell.send(serde_json::from_slice(&p.payload).unwrap_or(Value::Null));
                }
                _ => {}
            }
        }
    });
    tokio::time::timeout(WAIT, is_subscribed)
        .await
        .expect("subscribed")
        .unwrap();
    told
}

/// The page's view of one board row: its classes, both times and cells.
fn row_script(board: &str) -> String {
    format!(
        "const r = document.querySelector('tr[data-board=\"{board}\"]');
         if (!r) return null;
         const t = (c) => {{ const e = r.querySelector('td.' + c); return e ? e.textContent : null; }};
         return {{classes: Array.from(r.classList), white: t('white'), black: t('black'),
                 flags: t('flags'), arbiter: t('arbiter'), host: t('host'),
                 first: r.querySelector('td.flags span.first-flag') ? r.querySelector('td.flags span.first-flag').textContent : null,
                 background: getComputedStyle(r).backgroundColor,
                 status: document.getElementById('status').textContent}};"
    )
}

fn has_class(row: &Value, class: &str) -> bool {
    row["classes"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c == class))
}

const REPLY: &str = "const r = document.getElementById('reply');
                     return {ok: r.dataset.ok || null, text: r.textContent};";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbiters_log_in_and_correct_from_the_page_and_spectators_only_read() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let units = kit::daemon::demo_units(dir.path());
    let sim = units.handle();
    let config = dir.path().join("chessclockd.toml");
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
control = "3"

[hall]
broker = "mqtt://127.0.0.1:{port}"
name = "open"
host = "pi1"
"#,
            daemon = kit::daemon::daemon_table(&dir.path().join("state")),
            buttons = units.path("buttons").unwrap().display(),
            display = units.path("display").unwrap().display(),
            port = broker.port,
        ),
    )
    .unwrap();
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, devices_linked).await;
    let connection = zbus::connection::Builder::address(bus.address.as_str())
        .build()
        .await
        .unwrap();
    let b2 = chessclockd::dbus::client::BoardProxy::builder(&connection)
        .path("/org/chessclockd/ChessClock1/board/b2")
        .build()
        .await
        .unwrap();

    // The arbiters' password file, made as an organiser makes it.
    let passwords = kit::hall::arbiters(dir.path());
    let file = std::fs::read_to_string(&passwords).unwrap();
    assert!(
        file.contains("ann:$argon2id$") && !file.contains("correct horse"),
        "{file}"
    );
    let hub = Hub::with_arbiters(broker.port, dir.path(), &[]).await;
    let mut commands = watch_commands(&broker).await;

    // The API refuses before anything is published.
    let session = request(hub.port, "GET", "/api/session", &[], "").await;
    assert_eq!(session.json()["arbiters"], true, "{session:?}");
    assert_eq!(session.json()["user"], Value::Null);
    let pause = r#"{"board":"b1","command":"pause"}"#;
    let json_type = ("Content-Type", "application/json");
    let anonymous = request(hub.port, "POST", "/api/command", &[json_type], pause).await;
    assert_eq!(anonymous.status, 401, "{anonymous:?}");
    let wrong = request(
        hub.port,
        "POST",
        "/api/login",
        &[json_type],
        r#"{"user":"ann","password":"wrong horse"}"#,
    )
    .await;
    assert_eq!(wrong.status, 401, "{wrong:?}");
    assert_eq!(wrong.json()["error"], "wrong user name or password");
    assert!(wrong.header("set-cookie").is_none());
    let asked = std::time::Instant::now();
    let good = request(
        hub.port,
        "POST",
        "/api/login",
        &[json_type],
        r#"{"user":"ann","password":"correct horse"}"#,
    )
    .await;
    assert_eq!(good.status, 200, "{good:?}");
    eprintln!("login (argon2id verify) took {:?}", asked.elapsed());
    let set_cookie = good.header("set-cookie").unwrap();
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Strict"), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let csrf = good.json()["csrf"].as_str().unwrap().to_owned();
    let no_token = request(
        hub.port,
        "POST",
        "/api/command",
        &[json_type, ("Cookie", &cookie)],
        pause,
    )
    .await;
    assert_eq!(no_token.status, 403, "{no_token:?}");
    let bad_token = request(
        hub.port,
        "POST",
        "/api/command",
        &[json_type, ("Cookie", &cookie), ("X-CSRF-Token", "0000")],
        pause,
    )
    .await;
    assert_eq!(bad_token.status, 403, "{bad_token:?}");
    let with_token = [json_type, ("Cookie", &cookie), ("X-CSRF-Token", &csrf)];
    let form = request(
        hub.port,
        "POST",
        "/api/command",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &cookie),
            ("X-CSRF-Token", &csrf),
        ],
        "board=b1&command=pause",
    )
    .await;
    assert_eq!(form.status, 415, "{form:?}");
    let bare = request(
        hub.port,
        "POST",
        "/api/command",
        &with_token,
        r#"{"board":"b1","command":"adjust","side":"white","time":"270"}"#,
    )
    .await;
    assert_eq!(bare.status, 400, "{bare:?}");
    assert!(
        bare.json()["error"]
            .as_str()
            .unwrap()
            .contains("bare number"),
        "{bare:?}"
    );
    let unknown = request(
        hub.port,
        "POST",
        "/api/command",
        &with_token,
        r#"{"board":"b9","command":"pause"}"#,
    )
    .await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    // Logged out, the same cookie is refused.
    let out = request(hub.port, "POST", "/api/logout", &with_token, "{}").await;
    assert_eq!(out.status, 200, "{out:?}");
    let after = request(hub.port, "POST", "/api/command", &with_token, pause).await;
    assert_eq!(after.status, 401, "{after:?}");

    // The page: both rows appear, live. It is opened as the hall's screen
    // (the kit's token in its address: the live view before any login);
    // without it, it would show the spectators' view until a login
    // (tests/hall_shed.rs).
    let bearer = format!("Bearer {SCREEN_TOKEN}");
    let screen = ("Authorization", bearer.as_str());
    let browser = Browser::start().await;
    // The table view (the cards are the default, tests/hall_cards.rs):
    // its buttons are clicked as a person would, so they must show. The
    // choice is remembered for the page's later loads.
    browser.open(&hub.screen_url("/?view=table")).await;
    for board in ["b1", "b2"] {
        browser
            .wait("the board's row", WAIT, &row_script(board), |r| {
                r["status"] == "live" && r["white"].as_str().is_some_and(|t| !t.is_empty())
            })
            .await;
    }
    let initial = browser.run(&row_script("b2")).await;
    // 3 s: below the displays' tenths threshold (20 s), in tenths as they
    // show it.
    assert_eq!(initial["white"], "0:03.0", "{initial}");
    assert!(has_class(&initial, "not-started"), "{initial}");
    assert!(
        initial["host"].as_str().unwrap().contains("pi1 online"),
        "{initial}"
    );

    // b2 flags 3 s after its start: its row turns red within a second of
    // the fall (the flagged state's snapshot instant).
    b2.start().await.unwrap();
    let flagged = browser
        .wait(
            "b2's flag",
            Duration::from_secs(8),
            &row_script("b2"),
            |r| has_class(r, "flag"),
        )
        .await;
    let seen_ms = chessclock_host::clock::wall_now_us() / 1000;
    let boards = request(hub.port, "GET", "/boards.json", &[screen], "")
        .await
        .json();
    let fell_ms = boards["boards"]["b2"]["snapshot_wall_ms"].as_i64().unwrap();
    assert_eq!(
        boards["boards"]["b2"]["snapshot"]["flags"],
        json!(["white"])
    );
    assert!(
        seen_ms - fell_ms < 1_000,
        "the row turned red {} ms after the fall",
        seen_ms - fell_ms
    );
    eprintln!("flag fall -> red row seen: {} ms", seen_ms - fell_ms);
    assert_eq!(flagged["background"], "rgb(244, 184, 184)", "{flagged}");
    assert_eq!(flagged["first"], "white", "{flagged}");
    assert_eq!(flagged["white"], "0:00.0", "{flagged}");

    // b1: started, then its player calls the arbiter: highlighted, first
    // in the urgency order, counted in the header, and a beep with the
    // sound switched on (the switch remembered).
    browser
        .client
        .find(Locator::Css("input#sound"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client.board.start().await.unwrap();
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
    let call = browser
        .wait("b1's arbiter call", WAIT, &row_script("b1"), |r| {
            has_class(r, "arbiter-call")
        })
        .await;
    // When it was made, as a time of day (the state's instant of the call).
    assert!(
        call["arbiter"]
            .as_str()
            .is_some_and(|a| a.starts_with("CALLED at ")),
        "{call}"
    );
    let sound = browser
        .run("return [document.body.dataset.beeps || null, localStorage.getItem('chessclock-hall.sound')];")
        .await;
    assert_eq!(sound, json!(["1", "on"]));
    let order = browser
        .run("return Array.from(document.querySelectorAll('#boards tr')).map(r => r.dataset.board).concat([document.getElementById('counts').textContent]);")
        .await;
    assert_eq!(order[0], "b1", "the call first: {order}");
    assert_eq!(order[1], "b2", "{order}");
    assert!(
        order[2].as_str().unwrap().contains("1 ARBITER CALL"),
        "{order}"
    );
    let urgent = request(hub.port, "GET", "/boards.json", &[screen], "")
        .await
        .json();
    assert_eq!(urgent["urgent"], json!(["b1", "b2"]), "{urgent}");
    browser.screenshot("arbiters-call-and-flag").await;

    // Logging in on the page: a wrong password is refused, then the right
    // one shows the arbiter and the controls.
    assert!(browser
        .client
        .find(Locator::Css(
            "#boards tr[data-board=\"b1\"] button[data-action=\"pause\"]"
        ))
        .await
        .unwrap()
        .is_displayed()
        .await
        .map(|shown| !shown)
        .unwrap());
    browser.submit_login(ARBITER, "not it").await;
    browser
        .wait(
            "the refusal",
            WAIT,
            "return document.getElementById('login-error').textContent;",
            |t| t == "wrong user name or password",
        )
        .await;
    browser.submit_login(ARBITER, ARBITER_PASSWORD).await;
    browser.logged_in(ARBITER).await;

    // A correction on the page: White to 4:30 on b1.
    browser
        .client
        .find(Locator::Css(
            "tr[data-board=\"b1\"] button[data-action=\"correct\"]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let form = browser
        .client
        .find(Locator::Css("form#correction"))
        .await
        .unwrap();
    browser
        .run("document.querySelector('#correction select[name=side]').value = 'white';")
        .await;
    let time = form.find(Locator::Css("input[name=time]")).await.unwrap();
    time.send_keys("270").await.unwrap();
    let adjust = form
        .find(Locator::Css("button[data-action=adjust]"))
        .await
        .unwrap();
    adjust.click().await.unwrap();
    let refused = browser
        .wait("the bare number refused", WAIT, REPLY, |r| {
            r["ok"] == "false"
        })
        .await;
    assert!(
        refused["text"].as_str().unwrap().contains("bare number"),
        "{refused}"
    );
    time.clear().await.unwrap();
    time.send_keys("4:30").await.unwrap();
    adjust.click().await.unwrap();
    let done = browser
        .wait("the adjustment's reply", WAIT, REPLY, |r| r["ok"] == "true")
        .await;
    assert_eq!(done["text"], "b1 adjust: ok", "{done}");
    assert_eq!(client.state().await["white"]["remaining_ms"], 270_000);
    browser
        .wait("the new time on the page", WAIT, &row_script("b1"), |r| {
            r["white"] == "4:30"
        })
        .await;
    browser.screenshot("arbiters-correction").await;
    // A refusal of the daemon's own is shown as it came: b2's game is over.
    browser
        .client
        .find(Locator::Css(
            "tr[data-board=\"b1\"] button[data-action=\"resume\"]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait("the resume's reply", WAIT, REPLY, |r| {
            r["ok"] == "true" && r["text"] == "b1 resume: ok"
        })
        .await;
    browser
        .wait("the call answered", WAIT, &row_script("b1"), |r| {
            !has_class(r, "arbiter-call") && has_class(r, "running")
        })
        .await;
    browser
        .client
        .find(Locator::Css(
            "tr[data-board=\"b2\"] button[data-action=\"resume\"]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let daemon_refusal = browser
        .wait("b2's refusal", WAIT, REPLY, |r| {
            r["ok"] == "false" && r["text"].as_str().unwrap_or("").starts_with("b2 resume: ")
        })
        .await;
    assert!(
        daemon_refusal["text"]
            .as_str()
            .unwrap()
            .contains("invalid-state"),
        "{daemon_refusal}"
    );

    // The result of b2's game, set on the page.
    browser
        .client
        .find(Locator::Css(
            "tr[data-board=\"b2\"] button[data-action=\"correct\"]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .run("document.querySelector('#correction select[name=result]').value = '0-1';")
        .await;
    form.find(Locator::Css("button[data-action=set-result]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let result = browser
        .wait("the result's reply", WAIT, REPLY, |r| {
            r["ok"] != "pending"
                && r["text"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("b2 set-result")
        })
        .await;
    assert_eq!(result["text"], "b2 set-result: ok", "{result}");
    let finished = browser
        .wait("b2 finished", WAIT, &row_script("b2"), |r| {
            has_class(r, "finished")
        })
        .await;
    assert!(has_class(&finished, "flag"), "{finished}");
    let b2_history: Value = serde_json::from_str(&b2.history().await.unwrap()).unwrap();
    assert!(
        b2_history["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["caller_name"] == "ann"),
        "{b2_history}"
    );

    // The daemon's history has the corrections with the arbiter's name.
    let history = client.history().await;
    let rows = history["events"].as_array().unwrap();
    let by = |kind: &str| -> Vec<Value> {
        rows.iter()
            .filter(|e| e["do"] == kind)
            .map(|e| e["caller_name"].clone())
            .collect()
    };
    assert_eq!(by("adjust"), [json!("ann")], "{history}");
    assert_eq!(by("resume"), [json!("ann")], "{history}");
    // Nothing from the refused requests went out: the first command
    // published is the page's adjustment, each with a fresh id.
    let first = tokio::time::timeout(WAIT, commands.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first["command"], "adjust", "{first}");
    assert_eq!(first["arbiter"], "ann", "{first}");
    assert_eq!(first["remaining_ms"], 270_000, "{first}");
    let second = tokio::time::timeout(WAIT, commands.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second["command"], "resume", "{second}");
    assert_ne!(first["id"], second["id"]);

    // The hub restarts: the page reconnects by itself, and since sessions
    // live in the hub's memory, asks the arbiter to log in again.
    let port = hub.port;
    drop(hub);
    browser
        .wait(
            "the page noticing",
            WAIT,
            "return document.getElementById('status').textContent;",
            |s| s != "live",
        )
        .await;
    let hub = Hub::start_on(
        broker.port,
        port,
        dir.path().join("hub2.log"),
        &["--passwords", passwords.to_str().unwrap()],
    )
    .await;
    browser
        .wait(
            "the page live again",
            WAIT,
            "const r = document.querySelector('tr[data-board=\"b2\"]');
             return [document.getElementById('status').textContent, !!r && r.classList.contains('flag'),
                     document.getElementById('login').hidden, document.getElementById('whoami').textContent];",
            |v| *v == json!(["live", true, false, ""]),
        )
        .await;

    // Without the screen's token and before a login the arbiters' page
    // gets the spectators' view (no hosts); a login brings the live view.
    browser.open(&hub.url("/")).await;
    browser
        .wait("the public view", WAIT, &row_script("b2"), |r| {
            r["status"] == "live" && has_class(r, "flag") && r["host"] == "? online"
        })
        .await;
    browser.submit_login(ARBITER, ARBITER_PASSWORD).await;
    browser
        .wait(
            "the live view once logged in",
            WAIT,
            &row_script("b2"),
            |r| r["status"] == "live" && r["host"].as_str().is_some_and(|h| h.starts_with("pi1 ")),
        )
        .await;

    // The spectators' page: the boards, and no controls (but the choice
    // of view) or arbiter matters.
    browser.open(&hub.url("/spectator?view=table")).await;
    let spectator = browser
        .wait("the spectators' rows", WAIT, &row_script("b2"), |r| {
            r["status"] == "live" && has_class(r, "flag")
        })
        .await;
    assert_eq!(spectator["arbiter"], Value::Null, "{spectator}");
    assert_eq!(spectator["host"], Value::Null, "{spectator}");
    let controls = browser
        .run("return document.querySelectorAll('button, input, select:not(#view), textarea, form, td.controls').length;")
        .await;
    assert_eq!(controls, 0);
    browser.screenshot("spectators").await;
    browser.close().await;
    let public = request(hub.port, "GET", "/public/boards.json", &[], "")
        .await
        .body;
    assert!(
        !public.contains("arbiter_called") && !public.contains("devices"),
        "{public}"
    );

    // Too many failed logins (5 from one address to the restarted hub):
    // refused for a while, even the right password.
    for _ in 0..5 {
        let answer = request(
            hub.port,
            "POST",
            "/api/login",
            &[json_type],
            r#"{"user":"ann","password":"guess"}"#,
        )
        .await;
        assert_eq!(answer.status, 401, "{answer:?}");
    }
    let limited = request(
        hub.port,
        "POST",
        "/api/login",
        &[json_type],
        r#"{"user":"ann","password":"correct horse"}"#,
    )
    .await;
    assert_eq!(limited.status, 429, "{limited:?}");
    assert!(limited.json()["error"]
        .as_str()
        .unwrap()
        .contains("too many failed logins"));

    drop(hub);
    assert!(daemon.terminate().success());
    units.shutdown();
}
