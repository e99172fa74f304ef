//! End to end over PTYs: the simulated DGT board (`eboard::sim`) talks to the
//! serial shell (`eboard::serial`), whose session and detector must bring out
//! exactly the moves played. PTY tests are serialised.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use chessclock_sim::dgt::{pgn_sans, run_sim, DgtSimOptions, SimScript};
use chessclockd::eboard::detect::{BoardEvent, DetectorConfig, MoveStatus};
use chessclockd::eboard::placement::Orientation;
use chessclockd::eboard::serial::{spawn_with, EboardEvent, ShellConfig};
use tokio::sync::mpsc;

#[cfg(feature = "real-captures")]
mod real_captures;

static PTY: Mutex<()> = Mutex::new(());

const GAME: &str = "1. e4 d5 2. e5 f5 3. exf6 Nc6 4. fxg7 Bf5 5. gxh8=Q Qd7 \
                    6. Nf3 O-O-O 7. Be2 e5 8. O-O *";

/// Runs a PTY test alone (PTY pairs of parallel tests can race), on its
/// own runtime.
fn serialised(test: impl std::future::Future<Output = ()>) {
    let _guard = PTY.lock().unwrap_or_else(|e| e.into_inner());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
}

fn quick(script: SimScript) -> DgtSimOptions {
    let mut opts = DgtSimOptions::new(script);
    opts.step = Duration::from_millis(3);
    opts.move_pause = Duration::from_millis(5);
    opts.start_delay = Duration::from_millis(50);
    opts
}

fn shell_config() -> ShellConfig {
    ShellConfig {
        detector: DetectorConfig {
            confirm_after: 300_000,
        },
        backoff_min: Duration::from_millis(50),
        backoff_max: Duration::from_millis(200),
        ..ShellConfig::default()
    }
}

/// The game as the events tell it: ply -> (move, confirmed).
#[derive(Default)]
struct Game {
    moves: BTreeMap<u32, (String, bool)>,
    events: Vec<EboardEvent>,
}

impl Game {
    fn apply(&mut self, event: EboardEvent, san: bool) {
        match &event {
            EboardEvent::Board(BoardEvent::MoveDetected(m)) => {
                let text = if san { m.san.clone() } else { m.uci.clone() };
                self.moves.retain(|&ply, _| ply < m.ply);
                self.moves
                    .insert(m.ply, (text, m.status == MoveStatus::Confirmed));
            }
            EboardEvent::Board(BoardEvent::TakeBack { to_ply, .. }) => {
                self.moves.retain(|&ply, _| ply <= *to_ply);
            }
            _ => {}
        }
        self.events.push(event);
    }

    fn confirmed(&self) -> Vec<String> {
        self.moves
            .values()
            .take_while(|(_, confirmed)| *confirmed)
            .map(|(m, _)| m.clone())
            .collect()
    }
}

/// Collects events until `want` moves are confirmed (or the time is up).
async fn play_until(
    rx: &mut mpsc::UnboundedReceiver<EboardEvent>,
    game: &mut Game,
    want: usize,
    san: bool,
    limit: Duration,
) {
    let _ = tokio::time::timeout(limit, async {
        while game.confirmed().len() < want {
            match rx.recv().await {
                Some(event) => game.apply(event, san),
                None => break,
            }
        }
    })
    .await;
}

fn strip_marks(sans: Vec<String>) -> Vec<String> {
    sans.into_iter()
        .map(|s| s.trim_end_matches(['+', '#']).to_owned())
        .collect()
}

#[test]
fn simulated_board_plays_a_pgn_turned_round_with_clock() {
    serialised(simulated_board_plays_a_pgn_turned_round_with_clock_body());
}

async fn simulated_board_plays_a_pgn_turned_round_with_clock_body() {
    let mut opts = quick(SimScript::Pgn { text: GAME.into() });
    opts.turned_round = true;
    opts.clock_presses = true;
    opts.seed = 11;
    let sim = run_sim(opts).expect("simulator starts");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handle = spawn_with(sim.path().to_owned(), shell_config(), tx);
    let mut game = Game::default();
    let want = pgn_sans(GAME);
    play_until(
        &mut rx,
        &mut game,
        want.len(),
        true,
        Duration::from_secs(15),
    )
    .await;
    // The keep-alive (every 1.5 s) brings the serial number.
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = rx.recv().await {
            let serial = matches!(event, EboardEvent::SerialNumber(_));
            game.apply(event, true);
            if serial {
                break;
            }
        }
    })
    .await;
    handle.task.abort();
    let summary = sim.stop().expect("simulator stops cleanly");

    assert_eq!(strip_marks(game.confirmed()), want);
    assert!(summary.script_done);
    assert!(summary.commands_received >= 5, "{summary:?}");
    let has = |pred: &dyn Fn(&EboardEvent) -> bool| game.events.iter().any(pred);
    assert!(has(&|e| matches!(e, EboardEvent::Connected { .. })));
    assert!(has(&|e| matches!(
        e,
        EboardEvent::Orientation(Orientation::TurnedRound)
    )));
    assert!(has(&|e| matches!(
        e,
        EboardEvent::Version { main: 1, sub: 7 }
    )));
    assert!(has(&|e| *e == EboardEvent::SerialNumber("24055".into())));
    assert!(has(&|e| matches!(e, EboardEvent::ClockPress { .. })));
    assert!(!has(&|e| matches!(
        e,
        EboardEvent::Board(BoardEvent::Unrecognised { .. })
    )));
}

/// A real recording (see CONTRIBUTING.md, "Real DGT recordings"): only
/// with the feature `real-captures`.
#[cfg(feature = "real-captures")]
#[test]
fn simulated_board_replays_a_real_capture() {
    serialised(simulated_board_replays_a_real_capture_body());
}

#[cfg(feature = "real-captures")]
async fn simulated_board_replays_a_real_capture_body() {
    use chessclockd::eboard::CaptureFormat;
    let dir = real_captures::dir();
    let want: Vec<String> = std::fs::read_to_string(dir.join("1.uci"))
        .unwrap()
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_owned)
        .collect();
    let mut opts = quick(SimScript::Capture {
        path: dir.join("1.inbytes"),
        format: CaptureFormat::Base64Lines,
    });
    opts.step = Duration::from_millis(1);
    let sim = run_sim(opts).expect("simulator starts");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handle = spawn_with(sim.path().to_owned(), shell_config(), tx);
    let mut game = Game::default();
    play_until(
        &mut rx,
        &mut game,
        want.len(),
        false,
        Duration::from_secs(20),
    )
    .await;
    handle.task.abort();
    sim.stop().expect("simulator stops cleanly");
    assert_eq!(game.confirmed(), want);
}

#[test]
fn board_unplugged_and_plugged_back_in() {
    serialised(board_unplugged_and_plugged_back_in_body());
}

async fn board_unplugged_and_plugged_back_in_body() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dgt-board");
    let mut opts = quick(SimScript::Pgn {
        text: "1. e4 e5".into(),
    });
    opts.link = Some(link.clone());
    let sim = run_sim(opts).expect("simulator starts");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handle = spawn_with(link.clone(), shell_config(), tx);
    let mut game = Game::default();
    play_until(&mut rx, &mut game, 2, true, Duration::from_secs(10)).await;
    assert_eq!(game.confirmed(), vec!["e4", "e5"]);

    // Unplug: the simulator goes away with its PTY and the link.
    sim.stop().unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = rx.recv().await {
            let gone = matches!(event, EboardEvent::Disconnected { .. });
            game.apply(event, true);
            if gone {
                break;
            }
        }
    })
    .await;
    assert!(
        game.events
            .iter()
            .any(|e| matches!(e, EboardEvent::Disconnected { .. })),
        "the loss of the board is reported"
    );

    // Plug a board back in under the same name: the shell reconnects and
    // the game goes on (the new board starts from the initial position,
    // which is a takeback to ply 0, then replays the moves and one more).
    let mut opts = quick(SimScript::Pgn {
        text: "1. e4 e5 2. Nf3".into(),
    });
    opts.link = Some(link.clone());
    let sim = run_sim(opts).expect("simulator restarts");
    let connected_before = game
        .events
        .iter()
        .filter(|e| matches!(e, EboardEvent::Connected { .. }))
        .count();
    play_until(&mut rx, &mut game, 3, true, Duration::from_secs(10)).await;
    handle.task.abort();
    sim.stop().unwrap();
    assert_eq!(game.confirmed(), vec!["e4", "e5", "Nf3"]);
    let connected_after = game
        .events
        .iter()
        .filter(|e| matches!(e, EboardEvent::Connected { .. }))
        .count();
    assert_eq!(connected_after, connected_before + 1);
}

#[test]
fn silent_board_is_reported_lost() {
    serialised(silent_board_is_reported_lost_body());
}

async fn silent_board_is_reported_lost_body() {
    use std::os::fd::AsFd;
    // A port whose far end never answers (a board that hangs).
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut termios = nix::sys::termios::tcgetattr(pty.slave.as_fd()).unwrap();
    nix::sys::termios::cfmakeraw(&mut termios);
    nix::sys::termios::tcsetattr(
        pty.slave.as_fd(),
        nix::sys::termios::SetArg::TCSANOW,
        &termios,
    )
    .unwrap();
    let path = nix::unistd::ttyname(pty.slave.as_fd()).unwrap();
    let mut config = shell_config();
    config.session.lost_after = 300_000;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handle = spawn_with(path.clone(), config, tx);
    let event = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event within 5 s");
    handle.task.abort();
    match event {
        Some(EboardEvent::Disconnected {
            path: reported,
            reason,
            ..
        }) => {
            assert_eq!(reported, path);
            assert!(
                reason.starts_with("no answer from the board for 3"),
                "{reason}"
            );
        }
        other => panic!("expected Disconnected, got {other:?}"),
    }
    drop(pty);
}

#[test]
fn simulator_never_blocks_when_nobody_reads() {
    let _guard = PTY.lock().unwrap_or_else(|e| e.into_inner());
    // A long script sent as fast as possible into a port nobody reads.
    let moves: String = (0..1000).map(|_| "Nf3 Nf6 Ng1 Ng8 ").collect::<String>();
    let mut opts = quick(SimScript::Pgn { text: moves });
    opts.step = Duration::ZERO;
    opts.move_pause = Duration::ZERO;
    opts.start_delay = Duration::ZERO;
    opts.clock_presses = true;
    let sim = run_sim(opts).expect("simulator starts");
    {
        use std::io::Write;
        let mut port = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(sim.path())
            .unwrap();
        // Update mode, then the host goes away without reading.
        port.write_all(&[0x4b]).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(sim.stop());
    });
    let summary = done_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("stop() returns promptly")
        .expect("the simulator ends without error");
    assert!(summary.messages_sent > 0, "{summary:?}");
}
