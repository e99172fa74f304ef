//! End to end with an electronic board: the real `chessclockd` binary, a
//! private dbus-daemon, simulated button and display units on PTYs
//! (`chessclock_sim_units`) and a simulated DGT board on a PTY playing a PGN
//! (`eboard::run_sim`). Control `4/60+1:30+1`: four moves in a minute with
//! one second a move, then thirty seconds more. White forgets to press after
//! its 3rd move; its press after the 4th move on the board must still add
//! the second stage's time (Art. 6.2a2: the board counts the moves), and the
//! live PGN must carry each move's `%clk` exactly as the engine has it.
//! Serialised; every wait has a deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::time::{Duration, Instant};

use chessclock_protocol::Button;
use serde_json::Value;

use kit::daemon::Client;
use kit::eboard::{clk, placements, Setup, WAIT};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The `%clk` comment of every move of a PGN's movetext, by ply (1-based);
/// `None` for a move without one.
fn clocks_by_ply(pgn: &str) -> Vec<Option<String>> {
    let movetext: String = pgn
        .lines()
        .filter(|line| !line.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let mut plies: Vec<Option<String>> = Vec::new();
    let mut rest = movetext.as_str();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        if let Some(comment) = rest.strip_prefix('{') {
            let end = comment.find('}').expect("closed comment");
            let body = &comment[..end];
            if let (Some(last), Some(at)) = (plies.last_mut(), body.find("[%clk ")) {
                let value = &body[at + 6..];
                *last = Some(value[..value.find(']').unwrap()].to_owned());
            }
            rest = &comment[end + 1..];
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        rest = &rest[end..];
        let is_number = token
            .trim_end_matches('.')
            .chars()
            .all(|c| c.is_ascii_digit());
        let is_result = ["*", "1-0", "0-1", "1/2-1/2"].contains(&token);
        if !is_number && !is_result {
            plies.push(None);
        }
    }
    plies
}

#[test]
fn clocks_by_ply_reads_movetext() {
    let pgn = "[Event \"?\"]\n\n1. e4 {[%clk 0:01:00] [%emt 0:00:01]} 1... e5 2. Nf3\n{[%clk 0:00:59] [%emt 0:00:02]} *\n";
    assert_eq!(
        clocks_by_ply(pgn),
        [Some("0:01:00".to_owned()), None, Some("0:00:59".to_owned())]
    );
    assert_eq!(clk(59_001), "0:01:00");
    assert_eq!(clk(3_600_000), "1:00:00");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_press_does_not_move_the_stage_and_the_pgn_has_exact_clocks() {
    let _serial = SERIAL.lock().await;
    let game = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 *";
    let placements = placements(game);
    let setup = std::sync::Arc::new(Setup::new("4/60+1:30+1", game, Duration::from_millis(700)));
    let daemon = setup.daemon();
    let client = Client::connect_with_eboard(&setup.bus, &daemon).await;
    client.board.start().await.unwrap();

    // (ply on the board, who presses after it, or nobody): White forgets to
    // press after 3. Bb5; Black's 3... a6 is played on White's time, so
    // Black cannot press either.
    let script: [(usize, Option<Button>); 8] = [
        (1, Some(Button::Left)),
        (2, Some(Button::Right)),
        (3, Some(Button::Left)),
        (4, Some(Button::Right)),
        (5, None),
        (6, None),
        (7, Some(Button::Left)),
        (8, Some(Button::Right)),
    ];
    // The mover's clock right after each press, as the engine has it.
    let mut expected_clk: Vec<Option<String>> = vec![None; 8];
    let mut last = Value::Null;
    for (ply, press) in script {
        client.wait_ply(ply, &placements, &daemon).await;
        let Some(button) = press else { continue };
        let side = if button == Button::Left {
            "white"
        } else {
            "black"
        };
        let before = client.state().await;
        let s = setup.clone();
        tokio::task::spawn_blocking(move || s.press(button))
            .await
            .unwrap();
        let after = client.state().await;
        assert_ne!(
            after["running"], side,
            "{side}'s press stopped its clock: {after}"
        );
        let moves = after[side]["moves"].as_u64().unwrap();
        // The board's count, not the presses': the press after the 4th move
        // is the 4th move even though only two presses came before it.
        let board_moves = ply.div_ceil(2) as u64;
        assert_eq!(moves, board_moves, "{side} after ply {ply}: {after}");
        if ply == 7 {
            assert_eq!(before["white"]["moves"], 2, "{before}");
            assert_eq!(before["white"]["stage"], 1, "{before}");
            // 60 s, +1 s per move, minus what White used (well under 30 s):
            // only the second stage's 30 s takes it above 64 s.
            assert_eq!(after["white"]["stage"], 2, "{after}");
            assert!(
                after["white"]["remaining_ms"].as_i64().unwrap() > 64_000,
                "{after}"
            );
        }
        if ply == 8 {
            assert_eq!(after["black"]["stage"], 2, "{after}");
            assert!(
                after["black"]["remaining_ms"].as_i64().unwrap() > 64_000,
                "{after}"
            );
        }
        let remaining = after[side]["remaining_ms"].as_i64().unwrap();
        expected_clk[ply - 1] = Some(clk(remaining));
        last = after;
    }

    // The stored inputs: the count taken from the board is an adjustment
    // marked as the e-board's, with no caller uid.
    let history: Value = serde_json::from_str(&client.board.history().await.unwrap()).unwrap();
    let counts: Vec<&Value> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["do"] == "adjust")
        .collect();
    assert_eq!(counts.len(), 2, "{history}");
    for (count, (side, moves)) in counts.iter().zip([("white", 3), ("black", 3)]) {
        assert_eq!(count["side"], side, "{count}");
        assert_eq!(count["moves"], moves, "{count}");
        assert_eq!(count["source"], "eboard", "{count}");
        assert_eq!(count["caller_uid"], Value::Null, "{count}");
    }

    // The live PGN over D-Bus: every pressed move's %clk is the engine's
    // time left after the press; unpressed moves carry none. The PGN is
    // released once the press is committed (a broadcast shows only what a
    // crash keeps), so it may trail the state read just above by one commit.
    let deadline = Instant::now() + WAIT;
    let pgn = loop {
        let pgn = client.board.pgn().await.unwrap();
        if clocks_by_ply(&pgn) == expected_clk || Instant::now() >= deadline {
            break pgn;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(pgn.contains("[TimeControl "), "{pgn}");
    assert!(pgn.contains("4. Ba4"), "{pgn}");
    assert_eq!(clocks_by_ply(&pgn), expected_clk, "{pgn}");

    // The same text on disk, written atomically after the last commit.
    let deadline = Instant::now() + WAIT;
    loop {
        let written = std::fs::read_to_string(setup.pgn_file()).unwrap_or_default();
        if clocks_by_ply(&written) == expected_clk {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the PGN file never caught up: {written}\nexpected clocks {expected_clk:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A crash and a restart: the stored inputs (the e-board's count
    // included) rebuild the same game and the same PGN.
    drop(client);
    drop(daemon);
    let daemon = setup.daemon_logging_to("daemon-restarted.log");
    let client = Client::connect_with_eboard(&setup.bus, &daemon).await;
    let restored = client.state().await;
    for side in ["white", "black"] {
        assert_eq!(restored[side]["moves"], 4, "{restored}\n{}", daemon.log());
        assert_eq!(restored[side]["stage"], 2, "{restored}");
    }
    // Black's clock stood still since its press.
    assert_eq!(
        restored["black"]["remaining_ms"], last["black"]["remaining_ms"],
        "{restored}"
    );
    assert_eq!(restored["eboard"]["ply"], 8, "{restored}");
    let pgn = client.board.pgn().await.unwrap();
    assert_eq!(clocks_by_ply(&pgn), expected_clk, "{pgn}");
}

/// What a unit's display shows as text, once it shows `want`.
fn wait_display_text(setup: &Setup, want: &'static str) -> String {
    let sim = setup.sim.clone();
    std::thread::spawn(move || {
        sim.wait_until("display", WAIT, move |s| {
            s.display.as_ref().is_some_and(|d| d.text.as_str() == want)
        })
    })
    .join()
    .unwrap()
    .unwrap_or_else(|e| panic!("the display never showed {want}: {e}"))
    .display
    .unwrap()
    .text
    .as_str()
    .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_fall_is_checked_on_the_board_and_reported_everywhere() {
    let _serial = SERIAL.lock().await;
    // Five seconds for the game: White's flag falls with one move each on
    // the board, and Black has all its pieces: a loss (Art. 6.9).
    let game = "1. e4 e5 *";
    let placements = placements(game);
    let setup = std::sync::Arc::new(Setup::new("5", game, Duration::from_millis(500)));
    let daemon = setup.daemon();
    let client = Client::connect_with_eboard(&setup.bus, &daemon).await;
    let mut reports = client.board.receive_flag_report().await.unwrap();
    client.board.start().await.unwrap();
    for (ply, button) in [(1, Button::Left), (2, Button::Right)] {
        client.wait_ply(ply, &placements, &daemon).await;
        let s = setup.clone();
        tokio::task::spawn_blocking(move || s.press(button))
            .await
            .unwrap();
    }

    let signal = {
        use zbus::export::futures_core::Stream;
        let next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut reports).poll_next(cx));
        tokio::time::timeout(WAIT, next)
            .await
            .expect("a FlagReport signal")
            .expect("the signal stream ended")
    };
    let args = signal.args().unwrap();
    assert_eq!(args.side(), "white");
    assert!(!args.moves_completed(), "sudden death requires no moves");
    assert!(args.opponent_can_mate());
    assert_eq!(args.verdict(), "loss");

    let state = client.state().await;
    assert_eq!(state["flags"], serde_json::json!(["white"]), "{state}");
    let report = &state["eboard"]["flag_report"];
    assert_eq!(report["side"], "white", "{state}");
    assert_eq!(report["verdict"], "loss", "{state}");
    assert_eq!(report["opponent_can_mate"], true, "{state}");
    assert_eq!(report["moves_completed"], Value::Null, "{state}");

    let s = setup.clone();
    let shown = tokio::task::spawn_blocking(move || wait_display_text(&s, "LOSS"))
        .await
        .unwrap();
    assert_eq!(shown, "LOSS");

    let status = tokio::process::Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .arg("--user")
        .arg("status")
        .env("DBUS_SESSION_BUS_ADDRESS", &setup.bus.address)
        .output();
    let status = tokio::time::timeout(WAIT, status)
        .await
        .expect("chessclockctl status finishes")
        .unwrap();
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(
        out.contains("b1: e-board ") && out.contains("2 half-moves; white's flag: loss"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkmate_on_the_board_stops_the_clock() {
    let _serial = SERIAL.lock().await;
    let game = "1. f3 e5 2. g4 Qh4# 0-1";
    let placements = placements(game);
    let setup = std::sync::Arc::new(Setup::new("60", game, Duration::from_millis(500)));
    let daemon = setup.daemon();
    let client = Client::connect_with_eboard(&setup.bus, &daemon).await;
    client.board.start().await.unwrap();
    let script = [
        (1, Button::Left),
        (2, Button::Right),
        (3, Button::Left),
        (4, Button::Right),
    ];
    for (ply, button) in script {
        client.wait_ply(ply, &placements, &daemon).await;
        let s = setup.clone();
        tokio::task::spawn_blocking(move || s.press(button))
            .await
            .unwrap();
    }
    // Black's press confirms the mate (Art. 6.2a1): the clock stops.
    let deadline = Instant::now() + WAIT;
    let state = loop {
        let state = client.state().await;
        if state["paused"] == true {
            break state;
        }
        assert!(
            Instant::now() < deadline,
            "the clock never stopped: {state}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(
        state["eboard"]["game_end"]["reason"], "checkmate",
        "{state}"
    );
    assert_eq!(state["eboard"]["game_end"]["winner"], "black", "{state}");
    assert_eq!(state["black"]["moves"], 2, "{state}");
    let s = setup.clone();
    let shown = tokio::task::spawn_blocking(move || wait_display_text(&s, "MATE"))
        .await
        .unwrap();
    assert_eq!(shown, "MATE");
    let pgn = client.board.pgn().await.unwrap();
    assert!(pgn.contains("2. g4") && pgn.contains("Qh4#"), "{pgn}");
    assert!(pgn.trim_end().ends_with("0-1"), "{pgn}");
}
