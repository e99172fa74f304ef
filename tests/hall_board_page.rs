//! Issue 31 items 2 and 3: a board's page (`/board/<id>`) and its time
//! machine, in Debian's headless chromium (chromedriver, fantoccini), with
//! a real mosquitto of the test's own, the real daemon (board `b1` with
//! simulated button and display units on PTYs) and the hub binary.
//!
//! A game is played on the daemon (presses on the simulated unit, an
//! arbiter's pause and resume, a relative correction, a correction that
//! leaves White 1.2 s, White's flag). The page opened as a hall screen
//! shows the record, the moves with their `%clk`, the chart; at ten
//! instants of the game (five opened by the page's shareable link, five
//! typed as game time), its time machine shows the clocks, the running
//! side, the moves and the flags that `chessclockctl replay` (the real
//! binary, run from outside) computes for the same instants over the
//! daemon's own record (its D-Bus `History()`, turned into replay input
//! here, not by the hub). The replay format counts whole milliseconds and
//! the record microseconds: each input written to the millisecond moves a
//! clock by under 1 ms, so the clocks may differ by fewer milliseconds
//! than there were inputs before the instant, never more. An arbiter
//! logged in on the page (and only they: not a hall screen) has the
//! board's commands, `Acknowledge call` among them, records a note through
//! `/api/command`, and the page's record shows it. Every wait has a deadline and waits for a
//! condition; the game itself takes real time (the clock runs in it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use chessclock_protocol::Button;
use fantoccini::Locator;
use serde_json::{json, Value};

use kit::daemon::{devices_linked, Client, Daemon, PrivateBus};
use kit::hall::browser::Browser;
use kit::hall::{Broker, Hub, ARBITER, ARBITER_PASSWORD, SCREEN_TOKEN, WAIT};

/// What the page's time machine shows.
const SHOWN: &str = "const tm = document.getElementById('time-machine');
  const w = document.getElementById('tm-white'), b = document.getElementById('tm-black');
  return {t: tm.dataset.t == null ? null : Number(tm.dataset.t),
          report: tm.dataset.report ? JSON.parse(tm.dataset.report) : null,
          white_ms: w.dataset.ms, black_ms: b.dataset.ms, white: w.textContent, black: b.textContent,
          white_moves: w.dataset.moves, black_moves: b.dataset.moves,
          running: document.getElementById('tm-running').dataset.side,
          state: document.getElementById('tm-state').textContent,
          fen: document.getElementById('tm-fen').textContent,
          error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent};";

/// The daemon's record as `chessclockctl replay` input: the setup line,
/// then every engine input at its millisecond, with a `state` line after
/// the inputs at or before each instant of `at` (ascending).
fn replay_input(history: &Value, at: &[i64]) -> (String, usize) {
    let settings = &history["settings"];
    let mut lines = vec![json!({"control": history["control"],
                                "credit": settings["credit"],
                                "stage_advance": settings["stage-advance"]})
    .to_string()];
    let mut inputs = Vec::new();
    for row in history["events"].as_array().unwrap() {
        let t = row["t_us"].as_i64().unwrap().div_euclid(1000);
        let line = match row["do"].as_str().unwrap() {
            "start" => json!({"t": t, "do": "start"}),
            "press" => json!({"t": t, "do": "press", "side": row["side"]}),
            "pause" | "arbiter-call" => json!({"t": t, "do": "pause"}),
            "resume" => json!({"t": t, "do": "resume"}),
            "adjust" => {
                let mut line = json!({"t": t, "do": "adjust", "side": row["side"]});
                if let Some(us) = row["remaining_us"].as_i64() {
                    line["remaining_ms"] = json!(us.div_euclid(1000));
                }
                if let Some(moves) = row["moves"].as_u64() {
                    line["moves"] = json!(moves);
                }
                line
            }
            "press-undone" => panic!("the game has no undone press: {row}"),
            _ => continue,
        };
        inputs.push((t, line.to_string()));
    }
    let mut states = 0;
    let mut next = inputs.iter().peekable();
    for &t in at {
        while let Some((_, line)) = next.next_if(|(at, _)| *at <= t) {
            lines.push(line.clone());
        }
        lines.push(json!({"t": t, "do": "state"}).to_string());
        states += 1;
    }
    lines.extend(next.map(|(_, line)| line.clone()));
    (lines.join("\n") + "\n", states)
}

/// `chessclockctl replay` over `input`: the state lines for the `state`
/// events, in order.
fn run_replay(input: &str) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .arg("replay")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "chessclockctl replay: {}\n{input}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One output line per event line: keep those of the `state` lines.
    input
        .lines()
        .skip(1)
        .zip(lines)
        .filter(|(line, _)| line.contains("\"state\""))
        .map(|(_, state)| state)
        .collect()
}

/// `ms` of game time as the page's instant field takes it (`M:SS.mmm`).
fn typed(ms: i64) -> String {
    format!("{}:{:02}.{:03}", ms / 60_000, (ms / 1000) % 60, ms % 1000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_machine_shows_what_the_replay_computes_at_ten_instants() {
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
control = "60+1"
buttons = "{buttons}"
displays = ["{display}"]

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
    let hub = Hub::with_arbiters(broker.port, dir.path(), &[]).await;

    // The game. The clock must run between the presses: the waits are
    // the players' thinking, in real time.
    let press = |button: Button| {
        let sim = sim.clone();
        tokio::task::spawn_blocking(move || {
            sim.press(Some("buttons"), button).unwrap();
            sim.wait_until("buttons", WAIT, |s| s.unacked == 0)
                .unwrap_or_else(|e| panic!("{e}"));
        })
    };
    client.board.start().await.unwrap();
    for (index, think_ms) in [300u64, 200, 400, 250, 350, 150].into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(think_ms)).await;
        let button = if index % 2 == 0 {
            Button::Left
        } else {
            Button::Right
        };
        press(button).await.unwrap();
        let moves = client
            .wait_state(&daemon, "the press counted", |s| {
                s["white"]["moves"].as_u64().unwrap_or(0)
                    + s["black"]["moves"].as_u64().unwrap_or(0)
                    == index as u64 + 1
            })
            .await;
        let _ = moves;
    }
    // White to move: the arbiter stops the clocks a while.
    client.board.pause().await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    client.board.resume().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.board.adjust_by("black", 5_000).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // White left 1.2 s: its flag falls by time.
    client.board.adjust("white", 1_200, -1).await.unwrap();
    client
        .wait_state(&daemon, "white's flag", |s| s["flags"] == json!(["white"]))
        .await;
    hub.wait_for("/boards.json", "b1's flag at the hub", |body| {
        serde_json::from_str::<Value>(body)
            .is_ok_and(|b| b["boards"]["b1"]["snapshot"]["flags"] == json!(["white"]))
    })
    .await;

    // The daemon's own record, and ten instants over it: before the
    // start, in the presses, in the pause, after the corrections, after
    // the flag.
    let history = client.history().await;
    let events = history["events"].as_array().unwrap();
    let t_of = |kind: &str| -> Vec<i64> {
        events
            .iter()
            .filter(|e| e["do"] == kind)
            .map(|e| e["t_us"].as_i64().unwrap().div_euclid(1000))
            .collect()
    };
    let start = t_of("start")[0];
    let presses = t_of("press");
    let (paused, resumed) = (t_of("pause")[0], t_of("resume")[0]);
    let adjusts = t_of("adjust");
    // The flag's row: its instant in game time (`State()`'s `flag_ms` is
    // on the daemon's monotonic clock).
    let flag_ms = t_of("flag")[0];
    assert_eq!(presses.len(), 6, "{history}");
    assert_eq!(adjusts.len(), 2, "{history}");
    let mut instants = vec![
        start.saturating_sub(50).max(0),
        start + 150,
        (presses[0] + presses[1]) / 2,
        presses[2] + 37,
        (presses[4] + presses[5]) / 2,
        (paused + resumed) / 2,
        resumed + 101,
        adjusts[0] + 77,
        adjusts[1] + 500,
        flag_ms + 250,
    ];
    assert!(
        adjusts[1] + 1_150 <= flag_ms && flag_ms <= adjusts[1] + 1_250,
        "White's 1.2 s ran out 1.2 s after the correction: {history}"
    );
    instants.sort_unstable();
    let (input, states) = replay_input(&history, &instants);
    assert_eq!(states, 10);
    let expected = run_replay(&input);
    assert_eq!(expected.len(), 10, "{input}");
    // Inputs at or before each instant (the tolerance, see the module).
    let inputs_before = |t: i64| {
        events
            .iter()
            .filter(|e| {
                matches!(
                    e["do"].as_str(),
                    Some("start" | "press" | "pause" | "resume" | "adjust")
                ) && e["t_us"].as_i64().unwrap().div_euclid(1000) <= t
            })
            .count() as i64
    };

    // The page, as a hall screen.
    let browser = Browser::start().await;
    let page = |at: Option<i64>| {
        format!(
            "http://127.0.0.1:{}/board/b1?token={SCREEN_TOKEN}{}",
            hub.port,
            at.map(|t| format!("&at={t}")).unwrap_or_default()
        )
    };
    let mut worst = 0i64;
    for (index, (&t, replayed)) in instants.iter().zip(&expected).enumerate() {
        if index % 2 == 0 {
            // The shareable link to the instant.
            browser.open(&page(Some(t))).await;
        } else {
            let field = browser
                .client
                .find(Locator::Id("tm-instant"))
                .await
                .unwrap();
            field.clear().await.unwrap();
            field.send_keys(&typed(t)).await.unwrap();
            browser
                .client
                .find(Locator::Id("tm-go"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
        }
        let shown = browser
            .wait(&format!("the instant {t} ms"), WAIT, SHOWN, |s| {
                s["t"] == json!(t) || !s["error"].is_null()
            })
            .await;
        assert!(shown["error"].is_null(), "at {t}: {shown}");
        let slack = inputs_before(t);
        for side in ["white", "black"] {
            let page_ms: i64 = shown[format!("{side}_ms")]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            let replay_ms = replayed[side]["remaining_ms"].as_i64().unwrap();
            let off = (page_ms - replay_ms).abs();
            worst = worst.max(off);
            assert!(
                off <= slack,
                "at {t} ms {side}: the page shows {page_ms} ms, the replay {replay_ms} ms \
                 (at most {slack} ms apart)\n{shown}\n{replayed}"
            );
            assert_eq!(
                shown[format!("{side}_moves")],
                replayed[side]["moves"].to_string(),
                "at {t}: {shown}\n{replayed}"
            );
            assert_eq!(
                shown["report"][side]["flag_ms"].is_null(),
                replayed[side]["flag_ms"].is_null(),
                "at {t}: {shown}\n{replayed}"
            );
        }
        let running = replayed["running"].as_str().unwrap_or("");
        assert_eq!(shown["running"], running, "at {t}: {shown}\n{replayed}");
        assert_eq!(shown["report"]["paused"], replayed["paused"], "at {t}");
        assert_eq!(shown["report"]["flags"], replayed["flags"], "at {t}");
        assert!(
            shown["fen"].as_str().unwrap().starts_with("none"),
            "no e-board: {shown}"
        );
        eprintln!(
            "at {t} ms: page {} / {} (running {running}), replay {} / {} ms",
            shown["white"],
            shown["black"],
            replayed["white"]["remaining_ms"],
            replayed["black"]["remaining_ms"]
        );
    }
    eprintln!("the page and the replay at most {worst} ms apart over ten instants");
    // The instant after the flag says so.
    let last = browser.run(SHOWN).await;
    assert!(
        last["state"]
            .as_str()
            .unwrap()
            .contains("white's flag fell"),
        "{last}"
    );

    // The record, the moves with their %clk, the chart.
    let page_view = browser
        .wait(
            "the record and the chart",
            WAIT,
            "const img = document.getElementById('chart');
             return {rows: document.querySelectorAll('#record-body tr').length,
                     kinds: Array.from(document.querySelectorAll('#record-body td.kind')).map(e => e.textContent),
                     moves: Array.from(document.querySelectorAll('#moves-body tr')).map(r =>
                        Array.from(r.querySelectorAll('td')).map(c => c.textContent)),
                     chart: img.complete ? img.naturalWidth : 0,
                     at: document.querySelectorAll('#record-body tr.at').length};",
            |v| v["chart"].as_i64().unwrap_or(0) > 0,
        )
        .await;
    assert_eq!(
        page_view["rows"].as_u64().unwrap() as usize,
        events.len(),
        "{page_view}"
    );
    assert_eq!(
        page_view["at"], 1,
        "the row at the instant is marked: {page_view}"
    );
    assert_eq!(page_view["chart"], 800, "{page_view}");
    let moves = page_view["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 3, "{page_view}");
    let first_white_clk = moves[0][2].as_str().unwrap();
    assert!(
        first_white_clk.starts_with("0:01:0") || first_white_clk.starts_with("0:00:5"),
        "White's %clk after move 1 (60 s + 1 s, less its thinking): {page_view}"
    );
    let svg = hub.get("/board/b1/chart.svg", "").await;
    assert_eq!(svg.0, 200);
    assert!(svg.2.contains("white's flag"), "{}", svg.2);
    assert!(svg.2.contains("class=\"pause\""), "{}", svg.2);
    assert_eq!(svg.2.matches("<line class=\"correction\"").count(), 2);
    browser.screenshot("board-page").await;
    // A hall screen has no commands: no `Acknowledge call` either.
    let ack_shown =
        "const b = document.querySelector('#commands button[data-action=\"ack-call\"]');
                     return !!b && b.offsetParent !== null;";
    assert_eq!(browser.run(ack_shown).await, json!(false));

    // Without a login or a token, no data.
    let anonymous = hub.get_anonymous("/board/b1/record.json", "").await;
    assert_eq!(anonymous.0, 401, "{anonymous:?}");
    let page_itself = hub.get_anonymous("/board/b1", "").await;
    assert_eq!(page_itself.0, 200);

    // An arbiter logs in on the page and records a note for the board.
    let board_page = hub.url("/board/b1");
    browser.log_in(&board_page, ARBITER, ARBITER_PASSWORD).await;
    browser
        .wait(
            "the commands",
            WAIT,
            "return !document.getElementById('commands').hidden;",
            |v| v == &json!(true),
        )
        .await;
    assert_eq!(
        browser.run(ack_shown).await,
        json!(true),
        "a logged-in arbiter has `Acknowledge call`"
    );
    let commands = browser.client.find(Locator::Id("commands")).await.unwrap();
    commands
        .find(Locator::Css("input[name=note]"))
        .await
        .unwrap()
        .send_keys("flag seen on the board page")
        .await
        .unwrap();
    commands
        .find(Locator::Css("button[data-action=note]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let noted = browser
        .wait(
            "the note in the record",
            WAIT,
            "return {reply: document.getElementById('reply').dataset.ok || null,
                     notes: Array.from(document.querySelectorAll('#record-body tr.note td.who')).map(e => e.textContent)};",
            |v| v["notes"].as_array().is_some_and(|n| !n.is_empty()),
        )
        .await;
    assert_eq!(noted["reply"], "true", "{noted}");
    assert_eq!(noted["notes"], json!(["ann"]), "{noted}");
    let history = client.history().await;
    assert!(
        history["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["do"] == "note" && e["caller_name"] == "ann"),
        "{history}"
    );
    browser.close().await;
    drop(daemon);
}
