//! Issue 30, "Checked by": the event desk run as an organiser runs it, end
//! to end. A 3-Pi hall: three real `chessclockd`s (hosts pi1..pi3, four
//! boards each, b1..b12, each board with a simulated button unit on a PTY,
//! each daemon on a private bus and a system bus that cannot be reached,
//! so no NTP check can pass), a mosquitto of the test's own on 127.0.0.1
//! run with the files `scripts/hall-credentials` makes from the hall's
//! plan (the daemons over TLS, `mqtts://`, each with its own login; the
//! hub, on the broker's machine, on its plain listener of 127.0.0.1 with
//! its own), the hub with `--state-dir` and an arbiter's login, driven
//! from its pages in Debian's headless chromium:
//! * two rounds (24 players, 12 boards), each loaded from a TRF file
//!   uploaded on the desk's page (`/desk`), reviewed, sent after the
//!   confirm, started at a time of day on the page (`even without NTP`),
//!   played by presses on the simulated units, every result entered with
//!   its termination on the arbiters' page, the round closed;
//! * round 2's pairings sent again from the desk with half its games over
//!   and half under way: the confirm says nothing changes, and no board's
//!   game, result or clock record is touched;
//! * the hub killed with SIGKILL and started again on its state directory;
//! * then every export of both rounds (TRF26, TRF16, Vega `.res`, CSV,
//!   each round's PGN and the event's PGN) compared with the boards' own
//!   records, read from each daemon over D-Bus (every stored game of every
//!   board: its PGN with the `Round` tag, the players, the result and the
//!   `%clk` of each press; its history's result row with the termination
//!   and the arbiter's name).
//!
//! Every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chessclock_protocol::Button;
use chessclock_sim_units::{SimOptions, SimUnits, UnitKind, UnitSpec};
use chessclockd::dbus::client::BoardProxy;
use fantoccini::Locator;
use serde_json::Value;

use kit::daemon::{Daemon, PrivateBus};
use kit::hall::browser::{free_port, Browser};
use kit::hall::event::hall_daemon_config;
use kit::hall::round::{game_of, games, tag};
use kit::hall::secure::{HallFiles, SecureBroker};
use kit::hall::trf;
use kit::hall::{arbiters, Hub, ARBITER, ARBITER_PASSWORD, WAIT};

const PIS: usize = 3;
const BOARDS_PER_PI: usize = 4;
const BOARDS: usize = PIS * BOARDS_PER_PI;
const PLAYERS: usize = 2 * BOARDS;

/// The hall's plan for `scripts/hall-credentials`.
const PLAN: &str = "# the desk's test hall
hall open
broker 127.0.0.1 localhost
host pi1 b1 b2 b3 b4
host pi2 b5 b6 b7 b8
host pi3 b9 b10 b11 b12
hub hub
";

/// One Pi: its daemon, its boards' simulated button units, a D-Bus client
/// of each of its boards.
struct Pi {
    boards: Vec<String>,
    units: Option<SimUnits>,
    daemon: Option<Daemon>,
    _bus: PrivateBus,
    proxies: BTreeMap<String, BoardProxy<'static>>,
}

impl Pi {
    async fn start(root: &Path, index: usize, files: &HallFiles) -> Pi {
        let host = format!("pi{index}");
        let dir = root.join(&host);
        std::fs::create_dir_all(&dir).unwrap();
        let boards: Vec<String> = (1..=BOARDS_PER_PI)
            .map(|n| format!("b{}", (index - 1) * BOARDS_PER_PI + n))
            .collect();
        let units = chessclock_sim_units::spawn_units(&SimOptions {
            units: boards
                .iter()
                .map(|board| {
                    let mut unit = UnitSpec::new(board, UnitKind::Buttons);
                    unit.link = Some(dir.join(format!("dev-{board}")));
                    unit
                })
                .collect(),
            log: None,
            log_sent: false,
            seed: Some(index as u64),
        })
        .expect("simulated units");
        let tables: Vec<String> = boards
            .iter()
            .map(|board| {
                format!(
                    "[[board]]\nid = \"{board}\"\ncontrol = \"300\"\nwhite-button = \"left\"\n\
                     buttons = \"{}\"\n",
                    units.path(board).unwrap().display()
                )
            })
            .collect();
        let config = hall_daemon_config(
            &dir,
            &format!("mqtts://127.0.0.1:{}", files.port),
            &host,
            &tables,
            &format!(
                "credentials = \"{}\"\nca = \"{}\"\n",
                files.credentials(&host).display(),
                files.ca().display()
            ),
        );
        let bus = PrivateBus::session_in(&dir);
        let no_bus = format!("unix:path={}", dir.join("no-system-bus").display());
        let daemon = Daemon::spawn_with_env(
            &config,
            &bus,
            dir.join("daemon.log"),
            &[("DBUS_SYSTEM_BUS_ADDRESS", no_bus.as_str())],
        );
        let connection = zbus::connection::Builder::address(bus.address.as_str())
            .build()
            .await
            .unwrap();
        let mut proxies = BTreeMap::new();
        for board in &boards {
            let proxy = BoardProxy::builder(&connection)
                .path(format!("/org/chessclockd/ChessClock1/board/{board}"))
                .build()
                .await
                .unwrap();
            proxies.insert(board.clone(), proxy);
        }
        let pi = Pi {
            boards,
            units: Some(units),
            daemon: Some(daemon),
            _bus: bus,
            proxies,
        };
        for board in &pi.boards {
            pi.wait_state(board, "its button unit linked", |s| {
                kit::daemon::devices_linked(s) && !s["devices"].as_array().unwrap().is_empty()
            })
            .await;
        }
        pi
    }

    fn daemon(&self) -> &Daemon {
        self.daemon.as_ref().unwrap()
    }

    async fn state(&self, board: &str) -> Option<Value> {
        let text = self.proxies[board].state().await.ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Waits until `ready` holds for `board`'s `State()`.
    async fn wait_state(&self, board: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + kit::WAIT;
        loop {
            if let Some(state) = self.state(board).await {
                if ready(&state) {
                    return state;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{board}: {what} never came: {:?}\n{}",
                self.state(board).await,
                self.daemon().log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A press of `button` on `board`'s unit, acknowledged by the daemon.
    async fn press(&self, board: &str, button: Button) {
        let sim = self.units.as_ref().unwrap().handle();
        let unit = board.to_owned();
        tokio::task::spawn_blocking(move || {
            sim.press_returning_instant(Some(&unit), button).unwrap();
            sim.wait_until(&unit, WAIT, |s| s.unacked == 0)
                .unwrap_or_else(|e| panic!("{e}"));
        })
        .await
        .unwrap();
    }

    /// Every stored game of `board` that belongs to a round (its PGN has a
    /// `Round` tag `R.B`), as the board itself recorded it.
    async fn records(&self, board: &str) -> Vec<BoardGame> {
        let proxy = &self.proxies[board];
        let list: Value = serde_json::from_str(&proxy.games().await.unwrap()).unwrap();
        let mut records = Vec::new();
        for game in list.as_array().unwrap() {
            let id = game["game"].as_i64().unwrap();
            let pgn = proxy.game_pgn(id).await.unwrap();
            let Some((round, number)) = tag(&pgn, "Round").and_then(|r| r.split_once('.')) else {
                continue;
            };
            let history: Value =
                serde_json::from_str(&proxy.game_history(id).await.unwrap()).unwrap();
            let result_row = history["events"]
                .as_array()
                .unwrap()
                .iter()
                .rev()
                .find(|row| row["do"] == "game-result")
                .cloned()
                .unwrap_or(Value::Null);
            records.push(BoardGame {
                board: board.to_owned(),
                game: id,
                round: round.parse().unwrap(),
                number: number.parse().unwrap(),
                white: tag(&pgn, "White").unwrap().to_owned(),
                black: tag(&pgn, "Black").unwrap().to_owned(),
                result: tag(&pgn, "Result").unwrap().to_owned(),
                termination: result_row["termination"].as_str().map(str::to_owned),
                entered_by: result_row["caller_name"].as_str().map(str::to_owned),
                clocks: clocks(&pgn),
            });
        }
        records
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

/// A game as its board recorded it.
#[derive(Debug, Clone)]
struct BoardGame {
    board: String,
    game: i64,
    round: u32,
    number: u32,
    white: String,
    black: String,
    result: String,
    termination: Option<String>,
    entered_by: Option<String>,
    /// Every `[%clk ...]` of the PGN, in order.
    clocks: Vec<String>,
}

fn clocks(pgn: &str) -> Vec<String> {
    pgn.split("[%clk ")
        .skip(1)
        .map(|rest| rest.split(']').next().unwrap().to_owned())
        .collect()
}

fn name(rank: usize) -> String {
    format!("Player{rank:02}, Test")
}

/// Round `round`'s board `board`: (white, black) by starting rank.
fn pairing(round: u32, board: usize) -> (usize, usize) {
    match round {
        1 => (board, board + BOARDS),
        _ => (board + BOARDS, board % BOARDS + 1),
    }
}

/// The result and termination the arbiters enter for a board.
fn outcome(round: u32, board: usize) -> (&'static str, &'static str) {
    match (round, board % 3) {
        (1, 0) | (2, 2) => ("1-0", "resignation"),
        (1, 1) | (2, 0) => ("0-1", "resignation"),
        _ => ("1/2-1/2", "agreement"),
    }
}

/// The TRF16 file a pairing program writes for round `round` (the
/// results of the rounds before it filled in: round 1's by board, its
/// boards numbered in the pairings' order, everyone on 0 points).
fn trf_file(round: u32) -> String {
    let mut text = String::from("012 Desk Open 2026\n062 24\n092 Individual: Swiss-System\n");
    for rank in 1..=PLAYERS {
        let mut blocks = String::new();
        let mut tenths = 0;
        for r in 1..=round {
            let (board, white) = (1..=BOARDS)
                .find_map(|b| {
                    let (w, k) = pairing(r, b);
                    (w == rank || k == rank).then_some((b, w == rank))
                })
                .unwrap();
            let (w, k) = pairing(r, board);
            let opponent = if white { k } else { w };
            let code = if r < round {
                let (result, _) = outcome(r, board);
                let code = match (result, white) {
                    ("1/2-1/2", _) => '=',
                    ("1-0", true) | ("0-1", false) => '1',
                    _ => '0',
                };
                tenths += trf::tenths(code);
                code
            } else {
                ' '
            };
            blocks.push_str(&format!(
                "  {opponent:>4} {} {code}",
                if white { 'w' } else { 'b' }
            ));
        }
        text.push_str(&format!(
            "001 {rank:>4} m    {:<33} {:>4} NOR {:>11} 2000/01/01 {:>4} {rank:>4}{blocks}\n",
            name(rank),
            2400 - rank,
            1_000_000 + rank,
            format!("{}.{}", tenths / 10, tenths % 10),
        ));
    }
    text.push_str("XXR 2\n");
    text
}

const REPLY: &str = "const r = document.getElementById('reply');
                     return {ok: r.dataset.ok || null, text: r.textContent};";
const STATUS: &str = "return document.getElementById('desk-status').textContent;";

/// Accepts the page's confirm and returns its text.
async fn accept_confirm(browser: &Browser) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        match browser.client.get_alert_text().await {
            Ok(text) => {
                browser.client.accept_alert().await.unwrap();
                return text;
            }
            Err(_) => {
                assert!(Instant::now() < deadline, "no confirm");
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
    }
}

/// On the desk's page: round `round`'s TRF uploaded, reviewed, sent after
/// the confirm, and started `lead_ms` from now (even without NTP).
async fn load_send_and_start(browser: &Browser, port: u16, round: u32, file: &Path) {
    browser.open(&format!("http://127.0.0.1:{port}/desk")).await;
    browser
        .wait(
            "the desk",
            WAIT,
            "return document.getElementById('desk-user').textContent;",
            |t| t == "arbiter: ann",
        )
        .await;
    let form = browser
        .client
        .find(Locator::Css("form#load"))
        .await
        .unwrap();
    for (field, value) in [
        ("round", round.to_string()),
        ("file", file.display().to_string()),
        ("control", "300".to_owned()),
    ] {
        form.find(Locator::Css(&format!("input[name={field}]")))
            .await
            .unwrap()
            .send_keys(&value)
            .await
            .unwrap();
    }
    form.find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let review = browser
        .wait(
            "the review",
            WAIT,
            "return [document.querySelectorAll('#plans tbody tr').length,
                     document.getElementById('review-summary').textContent,
                     document.getElementById('review-round').textContent];",
            |r| r[0] == BOARDS && r[2] == round.to_string().as_str(),
        )
        .await;
    assert!(
        review[1]
            .as_str()
            .unwrap()
            .contains("12 board(s) would change, 0 game(s) started or over are kept"),
        "{review}"
    );
    browser.click("#send").await;
    let confirm = accept_confirm(browser).await;
    let (white, black) = pairing(round, 1);
    assert!(
        confirm.contains(&format!(
            "board 1: new game 300; Round {round}.1, {} - {}",
            name(white),
            name(black)
        )),
        "{confirm}"
    );
    browser.wait("sent", WAIT, STATUS, |t| t == "sent").await;
    // The round's start, a few seconds ahead, as a local time of day.
    browser
        .run(
            "const at = new Date(Date.now() + 4000);
             const p = (n) => String(n).padStart(2, '0');
             document.getElementById('start-at').value = at.getFullYear() + '-' + p(at.getMonth() + 1) +
               '-' + p(at.getDate()) + 'T' + p(at.getHours()) + ':' + p(at.getMinutes()) + ':' + p(at.getSeconds());
             document.getElementById('start-force').checked = true;",
        )
        .await;
    browser.click("#set-start").await;
    let confirm = accept_confirm(browser).await;
    assert!(
        confirm.contains(&format!("Start every board of round {round}")),
        "{confirm}"
    );
    let status = browser
        .wait("the start set", WAIT, STATUS, |t| {
            t.as_str()
                .is_some_and(|t| t.starts_with("start set") || t.contains("board"))
        })
        .await;
    assert_eq!(status, "start set on 12 board(s)");
}

/// On the arbiters' page: `board`'s result with its termination.
async fn enter_result(browser: &Browser, board: &str, result: &str, termination: &str) {
    browser
        .click(&format!(
            "tr[data-board=\"{board}\"] button[data-action=\"correct\"]"
        ))
        .await;
    browser
        .run(&format!(
            "const f = document.getElementById('correction');
             f.elements['result'].value = '{result}';
             f.elements['termination'].value = '{termination}';
             document.getElementById('reply').textContent = '';"
        ))
        .await;
    browser
        .click("#correction button[data-action=\"set-result\"]")
        .await;
    let reply = browser
        .wait("the result's reply", WAIT, REPLY, |r| {
            r["ok"] == "true" || r["ok"] == "false"
        })
        .await;
    assert_eq!(reply["text"], format!("{board} set-result: ok"), "{reply}");
}

/// Both players press once each on every board of the hall, once the
/// round's scheduled start came.
async fn play(pis: &[Pi]) {
    for pi in pis {
        for board in &pi.boards {
            pi.wait_state(board, "the scheduled start", |s| {
                s["started"] == true && s["running"] == "white"
            })
            .await;
        }
    }
    for pi in pis {
        for board in &pi.boards {
            pi.press(board, Button::Left).await;
            pi.wait_state(board, "white's press", |s| s["running"] == "black")
                .await;
            pi.press(board, Button::Right).await;
            pi.wait_state(board, "black's press", |s| {
                s["running"] == "white" && s["black"]["moves"] == 1
            })
            .await;
        }
    }
}

fn pi_of(pis: &[Pi], board: &str) -> usize {
    pis.iter()
        .position(|p| p.boards.iter().any(|b| b == board))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_of_two_rounds_run_from_the_desk_exports_what_the_boards_recorded() {
    let began = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    // The hall's files as an organiser makes them: the daemons over TLS
    // with their own logins; the hub, on the broker's machine, on its
    // plain listener of 127.0.0.1 with its own.
    let files = HallFiles::generate_with(dir.path(), PLAN, true);
    let _broker = SecureBroker::start(&files);
    let local = files.local_port.unwrap();
    let mut pis = Vec::new();
    for index in 1..=PIS {
        pis.push(Pi::start(dir.path(), index, &files).await);
    }
    let passwords = arbiters(dir.path());
    let state = dir.path().join("hub-state");
    let port = free_port();
    let hub_login = files.credentials("hub");
    let hub_args = [
        "--credentials",
        hub_login.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--passwords",
        passwords.to_str().unwrap(),
    ];
    let hub = Hub::start_on(local, port, dir.path().join("hub-1.log"), &hub_args).await;
    hub.wait_for("/boards.json", "every board", |b| {
        let v: Value = serde_json::from_str(b).unwrap();
        v["boards"].as_object().is_some_and(|b| b.len() == BOARDS)
    })
    .await;
    let files: Vec<PathBuf> = (1..=2)
        .map(|round| {
            let path = dir.path().join(format!("round{round}.trf"));
            std::fs::write(&path, trf_file(round)).unwrap();
            path
        })
        .collect();
    let browser = Browser::start().await;
    browser
        .log_in(&hub.url("/"), ARBITER, ARBITER_PASSWORD)
        .await;
    eprintln!("hall up: {:?}", began.elapsed());

    for round in 1..=2u32 {
        load_send_and_start(&browser, port, round, &files[round as usize - 1]).await;
        play(&pis).await;
        browser
            .open(&format!("http://127.0.0.1:{port}/?view=table"))
            .await;
        browser
            .wait(
                "every row",
                WAIT,
                "return document.querySelectorAll('#boards tr').length;",
                |n| n == BOARDS,
            )
            .await;
        let half = if round == 2 { BOARDS / 2 } else { BOARDS };
        for board in 1..=half {
            let (result, termination) = outcome(round, board);
            enter_result(&browser, &format!("b{board}"), result, termination).await;
        }
        if round == 2 {
            // The pairings sent again: half the games over, half under way.
            let before: Vec<Value> = {
                let mut states = Vec::new();
                for board in 1..=BOARDS {
                    let id = format!("b{board}");
                    let pi = &pis[pi_of(&pis, &id)];
                    states.push(pi.state(&id).await.unwrap());
                }
                states
            };
            let records_before = all_records(&pis).await;
            browser.open(&format!("http://127.0.0.1:{port}/desk")).await;
            browser
                .wait(
                    "the review of round 2",
                    WAIT,
                    "return document.getElementById('review-summary').textContent;",
                    |t| {
                        t.as_str().is_some_and(|t| {
                            t.contains(
                                "0 board(s) would change, 12 game(s) started or over are kept",
                            )
                        })
                    },
                )
                .await;
            browser.click("#send").await;
            let confirm = accept_confirm(&browser).await;
            assert!(confirm.contains("nothing changes"), "{confirm}");
            assert!(
                confirm.contains("12 game(s) started or over are left as they are"),
                "{confirm}"
            );
            browser
                .wait("sent again", WAIT, STATUS, |t| t == "sent")
                .await;
            for (board, before) in (1..=BOARDS).zip(&before) {
                let id = format!("b{board}");
                let after = pis[pi_of(&pis, &id)].state(&id).await.unwrap();
                for key in ["game_epoch_us", "started", "result", "over"] {
                    assert_eq!(after[key], before[key], "{id}'s {key}");
                }
                assert_eq!(after["white"]["moves"], 1, "{id}: {after}");
            }
            let records_after = all_records(&pis).await;
            assert_eq!(
                format!("{records_after:?}"),
                format!("{records_before:?}"),
                "no board's record changed"
            );
            browser
                .open(&format!("http://127.0.0.1:{port}/?view=table"))
                .await;
            browser
                .wait(
                    "every row",
                    WAIT,
                    "return document.querySelectorAll('#boards tr').length;",
                    |n| n == BOARDS,
                )
                .await;
            for board in half + 1..=BOARDS {
                let (result, termination) = outcome(round, board);
                enter_result(&browser, &format!("b{board}"), result, termination).await;
            }
        }
        hub.wait_for(
            &format!("/rounds/{round}/results.json"),
            "every result",
            |body| {
                let v: Value = serde_json::from_str(body).unwrap();
                v["games"]
                    .as_array()
                    .is_some_and(|g| g.len() == BOARDS && g.iter().all(|g| g["result"].is_string()))
            },
        )
        .await;
        browser.open(&format!("http://127.0.0.1:{port}/desk")).await;
        browser
            .wait(
                "the review",
                WAIT,
                "return document.getElementById('review-round').textContent;",
                |t| t == round.to_string().as_str(),
            )
            .await;
        browser.click("#close").await;
        accept_confirm(&browser).await;
        browser
            .wait("closed", WAIT, STATUS, |t| t == "round closed")
            .await;
        eprintln!("round {round} played and closed: {:?}", began.elapsed());
    }
    browser.screenshot("desk-e2e").await;
    browser.close().await;

    // The hub killed (SIGKILL) and started again on its state directory.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(hub.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    drop(hub);
    let hub = Hub::start_on(local, port, dir.path().join("hub-2.log"), &hub_args).await;
    let event = hub
        .wait_for("/rounds.json", "the event after the restart", |b| {
            let v: Value = serde_json::from_str(b).unwrap();
            v["rounds"].as_array().is_some_and(|r| {
                r.len() == 2
                    && r.iter()
                        .all(|r| r["status"] == "closed" && r["results"] == BOARDS)
            })
        })
        .await;
    let event: Value = serde_json::from_str(&event).unwrap();
    assert_eq!(event["current"], 2, "{event}");
    assert_eq!(
        event["players"].as_array().unwrap().len(),
        PLAYERS,
        "{event}"
    );

    // Every export against the boards' own records.
    let records = all_records(&pis).await;
    assert_eq!(records.len(), 2 * BOARDS, "{records:#?}");
    let rank: BTreeMap<String, usize> = (1..=PLAYERS).map(|r| (name(r), r)).collect();
    let mut seen = std::collections::BTreeSet::new();
    for game in &records {
        // The boards recorded what the arbiters entered, for a pairing of
        // the file (the hub numbers a round's boards itself: by score,
        // then rank), each pairing on one board.
        assert_eq!(game.board, format!("b{}", game.number), "{game:?}");
        let paired = (1..=BOARDS).find(|&b| {
            let (white, black) = pairing(game.round, b);
            (name(white), name(black)) == (game.white.clone(), game.black.clone())
        });
        let paired = paired.unwrap_or_else(|| panic!("not a pairing of the file: {game:?}"));
        assert!(seen.insert((game.round, paired)), "{game:?} twice");
        let (result, termination) = outcome(game.round, game.number as usize);
        assert_eq!(game.result, result, "{game:?}");
        assert_eq!(game.termination.as_deref(), Some(termination), "{game:?}");
        assert_eq!(game.entered_by.as_deref(), Some("ann"), "{game:?}");
        assert_eq!(game.clocks.len(), 2, "one %clk a press: {game:?}");
    }
    check_exports(&hub, &records, &rank).await;
    eprintln!("the whole event: {:?}", began.elapsed());
    drop(hub);
    for pi in &mut pis {
        assert!(pi.daemon.take().unwrap().terminate().success());
    }
}

/// Every board's games of the rounds, by (round, board number).
async fn all_records(pis: &[Pi]) -> Vec<BoardGame> {
    let mut records = Vec::new();
    for pi in pis {
        for board in &pi.boards {
            records.extend(pi.records(board).await);
        }
    }
    records.sort_by_key(|g| (g.round, g.number, g.game));
    records
}

fn code(result: &str, white: bool) -> char {
    match (result, white) {
        ("1/2-1/2", _) => '=',
        ("1-0", true) | ("0-1", false) => '1',
        _ => '0',
    }
}

/// An export: the results and bulletins open to anyone; the round's PGN
/// (live data, a broadcast's) as a hall screen.
async fn export(hub: &Hub, path: &str) -> String {
    let (status, _, body) = if path.ends_with("round.pgn") {
        hub.get(path, "").await
    } else {
        hub.get_anonymous(path, "").await
    };
    assert_eq!(status, 200, "{path}: {body}");
    body
}

async fn check_exports(hub: &Hub, records: &[BoardGame], rank: &BTreeMap<String, usize>) {
    // TRF26 and TRF16 of round 2 hold both rounds; round 1's, round 1.
    for (path, rounds) in [
        ("/rounds/2/results.trf26", 2),
        ("/rounds/2/results.trf", 2),
        ("/rounds/1/results.trf26", 1),
        ("/rounds/1/results.trf", 1),
    ] {
        let text = export(hub, path).await;
        let file = trf::read(&text);
        assert_eq!(file.players.len(), PLAYERS, "{path}\n{text}");
        for (number, player) in &file.players {
            let sum: u32 = player.rounds.iter().map(|r| trf::tenths(r.result)).sum();
            assert_eq!(
                player.points, sum,
                "{path}: player {number}'s points\n{text}"
            );
        }
        for game in records.iter().filter(|g| g.round <= rounds) {
            let (w, b) = (rank[&game.white] as u32, rank[&game.black] as u32);
            let slot = game.round as usize - 1;
            assert_eq!(
                file.players[&w].rounds[slot],
                trf::Round {
                    opponent: b,
                    colour: 'w',
                    result: code(&game.result, true)
                },
                "{path}: {game:?}\n{text}"
            );
            assert_eq!(
                file.players[&b].rounds[slot],
                trf::Round {
                    opponent: w,
                    colour: 'b',
                    result: code(&game.result, false)
                },
                "{path}: {game:?}\n{text}"
            );
        }
        if path.ends_with("trf26") {
            assert!(
                file.records
                    .iter()
                    .any(|(c, rest)| c == "222" && rest == "300"),
                "{text}"
            );
        }
    }
    for round in 1..=2u32 {
        let games_of: Vec<&BoardGame> = records.iter().filter(|g| g.round == round).collect();
        // Vega's .res.
        let res = export(hub, &format!("/rounds/{round}/results.res")).await;
        let mut lines = res.lines();
        assert_eq!(
            lines.next(),
            Some(format!("{BOARDS} {round}").as_str()),
            "{res}"
        );
        let mut want: Vec<String> = games_of
            .iter()
            .map(|g| {
                let code = match g.result.as_str() {
                    "1-0" => 1,
                    "0-1" => 0,
                    _ => 5,
                };
                format!("{} {} {code}", rank[&g.white], rank[&g.black])
            })
            .collect();
        let mut got: Vec<String> = lines.map(str::to_owned).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "round {round}'s .res");
        // The CSV: one line a game, as the board recorded it.
        let csv = export(hub, &format!("/rounds/{round}/results.csv")).await;
        for g in &games_of {
            let line = format!(
                "{round},{},\"{}\",{},\"{}\",{},{},{},ann,",
                g.number,
                g.white,
                rank[&g.white],
                g.black,
                rank[&g.black],
                g.result,
                g.termination.as_deref().unwrap()
            );
            assert!(csv.contains(&format!("{line}\n")), "no `{line}` in\n{csv}");
        }
        // The round's PGN: each game's result and every %clk as recorded.
        let pgn = export(hub, &format!("/rounds/{round}/round.pgn")).await;
        assert_eq!(games(&pgn).len(), BOARDS, "{pgn}");
        for g in &games_of {
            let game =
                game_of(&pgn, &g.board).unwrap_or_else(|| panic!("no {} in\n{pgn}", g.board));
            assert_eq!(
                tag(&game, "Round"),
                Some(format!("{round}.{}", g.number).as_str())
            );
            assert_eq!(tag(&game, "Result"), Some(g.result.as_str()), "{game}");
            assert_eq!(tag(&game, "White"), Some(g.white.as_str()), "{game}");
            assert_eq!(
                clocks(&game),
                g.clocks,
                "{}: the %clk of round {round}\n{game}",
                g.board
            );
        }
    }
    // The event's PGN: both rounds' games, each with the board's result.
    let event = export(hub, "/event.pgn").await;
    let all = games(&event);
    assert_eq!(all.len(), 2 * BOARDS, "{event}");
    for g in records {
        let round_tag = format!("{}.{}", g.round, g.number);
        let game = all
            .iter()
            .find(|game| tag(game, "Round") == Some(round_tag.as_str()))
            .unwrap_or_else(|| panic!("no game {round_tag} in the event's PGN"));
        assert_eq!(tag(game, "Result"), Some(g.result.as_str()), "{game}");
        assert_eq!(
            clocks(game),
            g.clocks,
            "{round_tag}: the event's %clk\n{game}"
        );
    }
}
