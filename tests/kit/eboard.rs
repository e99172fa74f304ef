//! End to end with an electronic board, shared by the e-board test files:
//! the real `chessclockd` binary on a private dbus-daemon, simulated button
//! and display units (`chessclock_sim_units`) and a simulated DGT board playing
//! PGN games on a PTY (`eboard::run_sim`); and the PGN read back by two
//! independent tools, python-chess and pgn-extract (installed by
//! `scripts/setup-debian`; a missing one fails the test loudly).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chessclock_protocol::Button;
use chessclock_sim::dgt::SimMoveEvent;
use chessclock_sim::dgt::{run_sim, DgtSim, DgtSimOptions, SimScript};
use chessclock_sim_units::{spawn_units, SimHandle, SimOptions, SimUnits};
use serde_json::Value;

use crate::kit::daemon::{devices_linked, Client, Daemon, PrivateBus};

pub use crate::kit::WAIT;

/// What a test's board is made of.
pub struct SetupOptions {
    pub control: String,
    pub pgn: String,
    pub move_pause: Duration,
    /// A button unit (and a display) on the board; without, the board has
    /// only its electronic board.
    pub buttons: bool,
    /// The simulated DGT clock's lever flips after each move.
    pub clock_presses: bool,
    /// Kings in the centre after each decided game.
    pub signal_results: bool,
    /// Told just before each move is put down.
    pub move_events: Option<mpsc::Sender<SimMoveEvent>>,
    /// Extra keys of the `[[board]]`.
    pub board_keys: String,
    /// Extra sections of the config (e.g. `[event]`).
    pub sections: String,
    /// `[engine]` keys besides `move-count = "eboard"`.
    pub engine_keys: String,
    pub game_pause: Duration,
    /// A second board `b2` without any device.
    pub second_board: Option<String>,
}

impl SetupOptions {
    pub fn new(control: &str, pgn: &str, move_pause: Duration) -> SetupOptions {
        SetupOptions {
            control: control.into(),
            pgn: pgn.into(),
            move_pause,
            buttons: true,
            clock_presses: false,
            signal_results: false,
            move_events: None,
            board_keys: String::new(),
            sections: String::new(),
            engine_keys: String::new(),
            game_pause: Duration::from_secs(3),
            second_board: None,
        }
    }
}

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub bus: PrivateBus,
    pub units: Option<SimUnits>,
    pub sim: SimHandle,
    pub board: Option<DgtSim>,
    pub config: PathBuf,
}

impl Setup {
    /// Units, a DGT board playing `pgn` (one move every `move_pause`) and
    /// the config of board `b1` with all three.
    pub fn new(control: &str, pgn: &str, move_pause: Duration) -> Setup {
        Setup::with(SetupOptions::new(control, pgn, move_pause))
    }

    pub fn with(options: SetupOptions) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let bus = PrivateBus::session_in(dir.path());
        let mut unit_options = SimOptions::demo();
        for unit in &mut unit_options.units {
            unit.link = Some(dir.path().join(format!("dev-{}", unit.name)));
        }
        let units = spawn_units(&unit_options).expect("simulated units");
        let sim = units.handle();
        let dgt_link = dir.path().join("dev-dgt");
        let mut dgt = DgtSimOptions::new(SimScript::Pgn {
            text: options.pgn.clone(),
        });
        dgt.link = Some(dgt_link.clone());
        dgt.step = Duration::from_millis(20);
        dgt.move_pause = options.move_pause;
        dgt.clock_presses = options.clock_presses;
        dgt.signal_results = options.signal_results;
        dgt.move_events = options.move_events.clone();
        dgt.game_pause = options.game_pause;
        // Time for the daemon to link the units before the first move.
        dgt.start_delay = Duration::from_millis(2500);
        let board = run_sim(dgt).expect("simulated DGT board");
        let state = dir.path().join("state");
        // Not created here: the daemon creates it.
        let pgn_dir = dir.path().join("pgn");
        let config = dir.path().join("chessclockd.toml");
        let devices = if options.buttons {
            format!(
                "buttons = \"{}\"\ndisplays = [\"{}\"]\n",
                units.path("buttons").unwrap().display(),
                units.path("display").unwrap().display()
            )
        } else {
            String::new()
        };
        let second = options
            .second_board
            .as_ref()
            .map(|control| format!("\n[[board]]\nid = \"b2\"\ncontrol = \"{control}\"\n"))
            .unwrap_or_default();
        std::fs::write(
            &config,
            format!(
                r#"[daemon]
bus = "session"
state-dir = "{state}"
rt-priority = 0
mlock = false
pgn-dir = "{pgn_dir}"

[engine]
move-count = "eboard"
{engine_keys}
{sections}

[[board]]
id = "b1"
control = "{control}"
{devices}eboard = "{dgt}"
{board_keys}
{second}"#,
                state = state.display(),
                pgn_dir = pgn_dir.display(),
                control = options.control,
                dgt = dgt_link.display(),
                engine_keys = options.engine_keys,
                sections = options.sections,
                board_keys = options.board_keys,
            ),
        )
        .unwrap();
        Setup {
            dir,
            bus,
            units: Some(units),
            sim,
            board: Some(board),
            config,
        }
    }

    pub fn daemon(&self) -> Daemon {
        self.daemon_logging_to("daemon.log")
    }

    pub fn daemon_logging_to(&self, log: &str) -> Daemon {
        Daemon::spawn(&self.config, &self.bus, self.dir.path().join(log))
    }

    pub fn pgn_file(&self) -> PathBuf {
        self.dir.path().join("pgn").join("b1.pgn")
    }

    /// The broadcast file as it is now (empty when not written yet).
    pub fn pgn_text(&self) -> String {
        std::fs::read_to_string(self.pgn_file()).unwrap_or_default()
    }

    /// Presses and waits for the ACK (the press is committed).
    pub fn press(&self, button: Button) {
        self.sim.press(Some("buttons"), button).unwrap();
        let sim = self.sim.clone();
        std::thread::spawn(move || sim.wait_until("buttons", WAIT, |s| s.unacked == 0))
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Presses without waiting for anything.
    pub fn press_now(&self, button: Button) {
        self.sim.press(Some("buttons"), button).unwrap();
    }

    /// `chessclockctl --user ARGS` against this daemon: (status, stdout,
    /// stderr).
    pub fn ctl(&self, args: &[&str]) -> (i32, String, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
            .arg("--user")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .output()
            .expect("run chessclockctl");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// `chessclockctl` that must succeed; its standard output.
    pub fn ctl_ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.ctl(args);
        assert_eq!(code, 0, "chessclockctl {args:?}: {out}{err}");
        out
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(board) = self.board.take() {
            let _ = board.stop();
        }
        if let Some(units) = self.units.take() {
            units.shutdown();
        }
    }
}

impl Client {
    /// Connects once the daemon serves the board with all devices linked,
    /// the electronic board included.
    pub async fn connect_with_eboard(bus: &PrivateBus, daemon: &Daemon) -> Client {
        Client::connect_when(bus, daemon, WAIT, |state| {
            devices_linked(state) && state["eboard"]["connected"] == true
        })
        .await
    }

    /// Waits until the board shows the position after `ply` half-moves
    /// of the game, the moved piece put down on its final square (the
    /// simulated hand sets sliding pieces down on the squares between:
    /// pressing then would confirm the wrong move).
    pub async fn wait_ply(&self, ply: usize, placements: &[String], daemon: &Daemon) -> Value {
        let want = &placements[ply - 1];
        self.wait_state(daemon, &format!("ply {ply} ({want})"), |state| {
            let placement = state["eboard"]["fen"]
                .as_str()
                .and_then(|fen| fen.split_whitespace().next());
            state["eboard"]["ply"].as_u64() == Some(ply as u64) && placement == Some(want)
        })
        .await
    }
}

/// Polls `read` until `ready` holds for what it returns.
pub async fn wait_for<T: std::fmt::Debug>(
    what: &str,
    mut read: impl FnMut() -> T,
    ready: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        let value = read();
        if ready(&value) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "{what} never came: last {value:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The piece placement (FEN's first field) after each half-move of `sans`.
pub fn placements_of(sans: &[String]) -> Vec<String> {
    use shakmaty::san::SanPlus;
    use shakmaty::{Chess, EnPassantMode, Position};
    let mut position = Chess::default();
    sans.iter()
        .map(|san| {
            let san: SanPlus = san.parse().unwrap();
            let played = san.san.to_move(&position).unwrap();
            position = position.clone().play(played).unwrap();
            let fen = shakmaty::fen::Fen::from_position(&position, EnPassantMode::Legal);
            fen.to_string()
                .split_whitespace()
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The placements after each half-move of a PGN's first game.
pub fn placements(pgn: &str) -> Vec<String> {
    placements_of(&chessclock_sim::dgt::pgn_sans(pgn))
}

/// `H:MM:SS` of milliseconds, rounded up to the second (PGN `%clk`).
pub fn clk(ms: i64) -> String {
    let seconds = (ms.max(0) + 999) / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        (seconds / 60) % 60,
        seconds % 60
    )
}

/// A move as python-chess reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadMove {
    pub san: String,
    /// `%clk` in whole seconds.
    pub clk: Option<i64>,
    pub emt: Option<i64>,
}

/// A game as python-chess reads it.
#[derive(Clone, Debug)]
pub struct ReadGame {
    /// The tags in file order.
    pub tags: Vec<(String, String)>,
    pub moves: Vec<ReadMove>,
    /// The comment before the first move.
    pub comment: String,
}

impl ReadGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn sans(&self) -> Vec<String> {
        self.moves.iter().map(|m| m.san.clone()).collect()
    }
}

const READER: &str = r#"
import io, json, sys
try:
    import chess.pgn
except ImportError:
    sys.stderr.write("python-chess is not installed: run scripts/setup-debian (pip install chess)\n")
    sys.exit(3)
text = sys.stdin.read()
games = []
stream = io.StringIO(text)
while True:
    game = chess.pgn.read_game(stream)
    if game is None:
        break
    moves = []
    for node in game.mainline():
        clk = node.clock()
        emt = node.emt()
        moves.append({"san": node.san(), "clk": None if clk is None else round(clk),
                      "emt": None if emt is None else round(emt)})
    games.append({"tags": list(game.headers.items()), "moves": moves,
                  "errors": [str(e) for e in game.errors], "comment": game.comment})
print(json.dumps(games))
"#;

/// Reads `pgn` with python-chess: every game, its tags in order, its moves
/// with `%clk`/`%emt`; fails on any error python-chess reports.
pub fn read_pgn(pgn: &str) -> Vec<ReadGame> {
    let mut child = Command::new("python3")
        .args(["-c", READER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is installed (scripts/setup-debian)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(pgn.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "python-chess could not read the PGN: {}\n{pgn}",
        String::from_utf8_lossy(&output.stderr)
    );
    let games: Value = serde_json::from_slice(&output.stdout).unwrap();
    games
        .as_array()
        .unwrap()
        .iter()
        .map(|game| {
            let errors = game["errors"].as_array().unwrap();
            assert!(errors.is_empty(), "python-chess: {errors:?}\n{pgn}");
            ReadGame {
                tags: game["tags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|pair| {
                        (
                            pair[0].as_str().unwrap().to_owned(),
                            pair[1].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect(),
                moves: game["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| ReadMove {
                        san: m["san"].as_str().unwrap().to_owned(),
                        clk: m["clk"].as_i64(),
                        emt: m["emt"].as_i64(),
                    })
                    .collect(),
                comment: game["comment"].as_str().unwrap_or_default().to_owned(),
            }
        })
        .collect()
}

/// The one game of `pgn`, read by python-chess.
pub fn read_one(pgn: &str) -> ReadGame {
    let mut games = read_pgn(pgn);
    assert_eq!(games.len(), 1, "one game expected:\n{pgn}");
    games.remove(0)
}

fn pgn_extract() -> PathBuf {
    for candidate in ["/usr/games/pgn-extract", "/usr/bin/pgn-extract"] {
        if std::path::Path::new(candidate).exists() {
            return candidate.into();
        }
    }
    panic!("pgn-extract is not installed: run scripts/setup-debian (apt install pgn-extract)");
}

/// pgn-extract reads `pgn` without a complaint and finds `games` games in
/// it: its report (`-r`) holds only the file's name, one summary line a
/// game and the count, no error nor warning.
pub fn pgn_extract_accepts(pgn: &str, games: usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.pgn");
    std::fs::write(&file, pgn).unwrap();
    let output = Command::new(pgn_extract())
        .arg("-r")
        .arg(&file)
        .output()
        .expect("run pgn-extract");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = report.lines().filter(|l| !l.trim().is_empty()).collect();
    let counted = lines.iter().any(|l| {
        l.trim()
            == format!(
                "{games} game{} matched out of {games}.",
                if games == 1 { "" } else { "s" }
            )
    });
    assert!(
        output.status.success()
            && counted
            && lines.len() == games + 2
            && lines[0].starts_with("Processing "),
        "pgn-extract complains or counts otherwise than {games} games:\n{report}\n{pgn}"
    );
}

/// The tags of a PGN text in file order (the raw text, for order checks).
pub fn tag_names(pgn: &str) -> Vec<String> {
    pgn.lines()
        .take_while(|line| line.starts_with('['))
        .map(|line| line[1..].split(' ').next().unwrap().to_owned())
        .collect()
}

/// Every press of the history, in order: (side, remaining ms after it).
/// Takes D-Bus `History()` (`events`) or the CLI's fixed record schema
/// (`rows`, docs/history-format.md).
pub fn presses_of(history: &Value) -> Vec<(String, i64)> {
    if let Some(rows) = history["rows"].as_array() {
        return rows
            .iter()
            .filter(|r| r["kind"] == "press" && !r["move_number"].is_null())
            .map(|r| {
                let side = r["side"].as_str().unwrap().to_owned();
                let remaining = r[format!("{side}_ms")].as_i64().unwrap();
                (side, remaining)
            })
            .collect();
    }
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["do"] == "press"
                && e["outcome"].as_array().is_some_and(|o| {
                    o.iter()
                        .any(|n| n.as_str().unwrap().contains("completed move"))
                })
        })
        .map(|e| {
            let side = e["side"].as_str().unwrap().to_owned();
            let remaining = e[format!("{side}_remaining_ms")].as_i64().unwrap();
            (side, remaining)
        })
        .collect()
}

/// The `%clk` seconds of `H:MM:SS`-rounded-up milliseconds.
pub fn clk_seconds(ms: i64) -> i64 {
    (ms.max(0) + 999) / 1000
}
