//! A simulated event through the pure board core, in compressed time:
//! `rounds` rounds on `boards` boards (issue 18: 20 rounds on 32 boards,
//! a 72-hour event), each board a [`Board`] of the daemon's core, every
//! record it asks for written by the daemon's own store code
//! ([`commit_batch`] into a real SQLite state directory, group commits as
//! the store thread makes them) and every commit fed back to the board, as
//! the daemon's shell does, but with no threads, no devices and no clock:
//! the instant is a parameter and jumps from one input or deadline to the
//! next.
//!
//! Each round starts a new game on every board (the boards live through
//! the whole event, as in the daemon), and plays it with a classical
//! control with increment: the button unit's presses at human thinking
//! times, 40 to 90 moves a side, some games lost on time (a side stops
//! pressing and its flag falls), some paused by the arbiter and resumed,
//! some with a time penalty (Art. 7.5: two minutes to the opponent), and a
//! result at the end. Every display deadline the board asks for is served
//! (the board renders its display faces as it does live).
//!
//! It reports the process's RSS and the state database's size (the
//! database file and its WAL) at the end of each round, and the wall time taken. Memory is flat
//! when no round after the second ends more than [`FLAT_MARGIN_KB`] above
//! the second's end. Not simulated: the store thread's once-a-second
//! "alive" checkpoint runs once a simulated minute here (it updates one row
//! per running game; it adds no rows).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, Context};
use chessclock_core::board::{
    Action, Board, BoardCommand, BoardInput, BoardSetup, DeviceInput, DisplaySetup, GameSpec,
};
use chessclock_core::contract::Caller;
use chessclock_core::display::{ButtonSide, DisplayConfig, DisplaySide};
use chessclock_core::eboard::{GameResult, Termination};
use chessclock_core::engine::{MatchControl, Settings, Side, SECOND};
use chessclock_core::session::DeviceRole;
use chessclock_core::time::Micros;
use chessclock_protocol::{Button, Capabilities, Hello, Roles, Text, PROTOCOL_VERSION};
use rand::{Rng, SeedableRng};
use serde::Serialize;

use chessclockd::runtime::store::{commit_batch, Job, Store};

/// A round after the second may end this much above the second's RSS and
/// memory still counts as flat (allocator and SQLite page cache noise).
pub const FLAT_MARGIN_KB: u64 = 2048;

/// The event's control: FIDE classical with increment.
pub const CONTROL: &str = "40/5400+30:1800+30";

#[derive(Clone, Debug, Serialize)]
pub struct EventOptions {
    pub rounds: usize,
    pub boards: usize,
    pub seed: u64,
    /// Where the state database goes (a temporary directory if `None`).
    pub state_dir: Option<PathBuf>,
}

impl EventOptions {
    /// Issue 18's event: 20 rounds on 32 boards.
    pub fn full() -> EventOptions {
        EventOptions {
            rounds: 20,
            boards: 32,
            seed: 72,
            state_dir: None,
        }
    }
}

/// One game as played (what the store must hold).
#[derive(Clone, Debug, Serialize)]
pub struct GamePlayed {
    pub round: usize,
    pub board: String,
    /// Device presses sent (each must be one `press` row).
    pub presses: u32,
    pub result: String,
    pub flag: bool,
    pub paused: bool,
    pub penalty: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct RoundFigures {
    pub round: usize,
    /// RSS of this process at the round's end, kB.
    pub rss_kb: u64,
    /// The database file, bytes.
    pub db_bytes: u64,
    /// Its write-ahead log, bytes (SQLite folds it back into the database
    /// every 1,000 pages, about 4 MB).
    pub wal_bytes: u64,
    /// Rows written this round.
    pub records: u64,
    /// Simulated hours since the event began.
    pub simulated_hours: f64,
    /// Wall seconds since the event began.
    pub wall_seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EventReport {
    pub options: EventOptions,
    pub rounds: Vec<RoundFigures>,
    pub games: Vec<GamePlayed>,
    /// Inputs given to the board cores (commands, presses, deadlines,
    /// commits).
    pub inputs: u64,
    pub records: u64,
    pub commits: u64,
    pub simulated_hours: f64,
    pub wall_seconds: f64,
    /// The database file after the event, the store closed (its WAL
    /// folded in), bytes.
    pub final_db_bytes: u64,
    pub final_wal_bytes: u64,
    /// The largest end-of-round RSS after the second round minus the
    /// second round's, kB (negative: it shrank).
    pub rss_growth_after_round_2_kb: i64,
    pub memory_flat: bool,
    pub load_average: String,
    /// The state directory (kept when given).
    pub state_dir: PathBuf,
}

/// The board setup of board `i`: a button unit and one display unit.
fn setup(i: usize) -> BoardSetup {
    BoardSetup {
        id: format!("b{}", i + 1),
        buttons: Some(format!("serial:BU{}", i + 1)),
        displays: vec![DisplaySetup {
            name: format!("serial:DU{}", i + 1),
            side: DisplaySide::Both,
        }],
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: false,
        display: DisplayConfig::default(),
        moves_from_eboard: false,
        default_time_ms: 0,
        resume_after_restart: false,
        pgn_file: false,
        pgn_tags: Default::default(),
        state_notice: None,
    }
}

fn spec() -> anyhow::Result<GameSpec> {
    let control =
        chessclock_core::timecontrol::parse(CONTROL).map_err(|e| anyhow!("{CONTROL}: {e}"))?;
    Ok(GameSpec {
        text: CONTROL.into(),
        control: MatchControl::same(control),
        settings: Settings::default(),
    })
}

fn hello(roles: Roles, serial: &str) -> Hello {
    Hello {
        protocol_version: PROTOCOL_VERSION,
        roles,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            text_chars: 16,
            ..Capabilities::default()
        },
        vendor: Text::truncated("sim"),
        model: Text::truncated("event"),
        serial: Text::truncated(serial),
        firmware: Text::truncated("1.0"),
        boot_id: 1,
        first_unacked_event: 0,
    }
}

/// What a board does next in its game.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Next {
    Start,
    /// The running side presses (its `ply`-th press, from 0).
    Press,
    Resume,
    Penalty,
    /// A flag is falling: only deadlines until it has.
    Flagging,
    Result,
    Done,
}

/// One board through the event.
struct Player {
    board: Board,
    index: usize,
    serial: String,
    next: Next,
    /// Simulated µs of the next scripted input.
    at: Micros,
    /// The latest instant the board was given (inputs to one board never
    /// go back in time).
    last: Micros,
    /// The button unit's next event number.
    event: u16,
    ply: u32,
    plies: u32,
    /// The ply at which the side to move stops pressing (a flag).
    flag_at: Option<u32>,
    pause_at: Option<u32>,
    penalty_at: Option<u32>,
    played: GamePlayed,
}

/// The simulation's clocks: monotonic µs = `t0 + t`, wall = `wall0 + t`.
struct Clock {
    t0: Micros,
    wall0: i64,
}

struct Sim<'a> {
    store: &'a mut Store,
    clock: Clock,
    pending: Vec<Job>,
    inputs: u64,
    records: u64,
    commits: u64,
}

/// Jobs in one group commit at most (the store thread's batch is 256; a
/// smaller one keeps the feedback close to what a live daemon sees).
const BATCH: usize = 64;

impl Sim<'_> {
    /// One input to a board, its actions carried out.
    fn feed(&mut self, player: &mut Player, now: Micros, input: BoardInput) -> anyhow::Result<()> {
        let now = now.max(player.last);
        player.last = now;
        let wall = self.clock.wall0 + (now - self.clock.t0);
        self.inputs += 1;
        let actions = player.board.handle(now, wall, input);
        self.carry_out(player, actions)
    }

    fn carry_out(&mut self, player: &Player, actions: Vec<Action>) -> anyhow::Result<()> {
        for action in actions {
            match action {
                Action::Store { seq, record } => {
                    self.records += 1;
                    self.pending.push(Job {
                        board: player.index,
                        id: player.board.id().to_owned(),
                        seq,
                        record,
                    });
                }
                Action::Running(running) => {
                    self.store.set_running(player.board.id(), running)?;
                }
                // Frames, replies, events and views go to no one here.
                _ => {}
            }
        }
        Ok(())
    }

    /// Commits what is pending (when `all`, or a batch is full) and tells
    /// the boards.
    fn flush(&mut self, players: &mut [Player], now: Micros, all: bool) -> anyhow::Result<()> {
        while (all && !self.pending.is_empty()) || self.pending.len() >= BATCH {
            let batch: Vec<Job> = self.pending.drain(..).collect();
            let commits = commit_batch(self.store, &batch)
                .map_err(|failure| anyhow!("the store could not commit: {:?}", failure.reason))?;
            self.commits += 1;
            for commit in commits {
                if !commit.ok {
                    return Err(anyhow!("board {} could not commit", commit.board + 1));
                }
                let player = &mut players[commit.board];
                self.feed(
                    player,
                    now,
                    BoardInput::Committed {
                        seq: commit.seq,
                        ok: true,
                    },
                )?;
            }
        }
        Ok(())
    }
}

fn command(command: BoardCommand) -> BoardInput {
    BoardInput::Command {
        token: None,
        caller: Caller::uid(1000),
        command,
    }
}

/// The size of the database file (`suffix` "") or its WAL ("-wal") in
/// `dir`, bytes.
fn file_bytes(dir: &Path, suffix: &str) -> u64 {
    std::fs::metadata(dir.join(format!("{}{suffix}", chessclockd::runtime::store::DB_FILE)))
        .map_or(0, |m| m.len())
}

fn rss_kb() -> u64 {
    super::procfs::sample(std::process::id()).map_or(0, |s| s.rss_kb)
}

/// Plans board `player`'s game of round `round` starting about `round_start`.
fn plan(player: &mut Player, rng: &mut impl Rng, round: usize, round_start: Micros) {
    player.next = Next::Start;
    player.at = round_start + rng.random_range(0..120) * SECOND;
    player.ply = 0;
    player.plies = 2 * rng.random_range(40..=90);
    player.flag_at = rng
        .random_bool(0.1)
        .then(|| rng.random_range(20..player.plies));
    player.pause_at = rng
        .random_bool(0.15)
        .then(|| rng.random_range(1..player.plies));
    player.penalty_at = rng
        .random_bool(0.05)
        .then(|| rng.random_range(1..player.plies));
    player.played = GamePlayed {
        round: round + 1,
        board: player.board.id().to_owned(),
        presses: 0,
        result: String::new(),
        flag: player.flag_at.is_some(),
        paused: player.pause_at.is_some(),
        penalty: player.penalty_at.is_some(),
    };
}

/// A human's thinking time for the side to move at `now`, within what its
/// clock has left (a margin of a minute; at least a second).
fn think_time(player: &Player, rng: &mut impl Rng, now: Micros) -> Micros {
    let state = player.board.state(now);
    let Some(side) = state.running else {
        return SECOND;
    };
    let remaining = state.side(side).remaining.unwrap_or(0);
    let moves_done = state.side(side).moves;
    let mean = if moves_done < 40 { 100 } else { 45 } * SECOND;
    let wanted = rng.random_range(mean / 20..=mean * 2);
    wanted.min(remaining - 60 * SECOND).max(SECOND)
}

/// Runs the event; `progress` gets a line per round.
pub fn run(options: &EventOptions, progress: &mut dyn FnMut(&str)) -> anyhow::Result<EventReport> {
    let temp;
    let dir = match &options.state_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            dir.clone()
        }
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let mut opened = Store::open_state(&dir)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(options.seed);
    let clock = Clock {
        t0: chessclock_host::clock::monotonic_now_us(),
        // 2026-12-04T09:00:00Z, a Friday morning.
        wall0: 1_796_374_800_000_000,
    };
    let spec = spec()?;
    let started = Instant::now();
    let mut sim = Sim {
        store: &mut opened.store,
        clock,
        pending: Vec::new(),
        inputs: 0,
        records: 0,
        commits: 0,
    };
    let t0 = sim.clock.t0;
    let mut players = Vec::with_capacity(options.boards);
    for i in 0..options.boards {
        let (board, actions) = Board::new(
            setup(i),
            spec.clone(),
            None,
            Caller::uid(1000),
            t0,
            sim.clock.wall0,
        );
        let mut player = Player {
            board,
            index: i,
            serial: format!("BU{}", i + 1),
            next: Next::Done,
            at: t0,
            last: t0,
            event: 0,
            ply: 0,
            plies: 0,
            flag_at: None,
            pause_at: None,
            penalty_at: None,
            played: GamePlayed {
                round: 0,
                board: String::new(),
                presses: 0,
                result: String::new(),
                flag: false,
                paused: false,
                penalty: false,
            },
        };
        sim.carry_out(&player, actions)?;
        for (role, roles, serial) in [
            (DeviceRole::Buttons, Roles::BUTTONS, format!("BU{}", i + 1)),
            (
                DeviceRole::Display(0),
                Roles::DISPLAY,
                format!("DU{}", i + 1),
            ),
        ] {
            sim.feed(
                &mut player,
                t0,
                BoardInput::Device(DeviceInput::Connected {
                    role,
                    hello: hello(roles, &serial),
                    path: format!("/dev/sim/{serial}"),
                }),
            )?;
        }
        players.push(player);
    }
    sim.flush(&mut players, t0, true)?;
    let mut report_rounds = Vec::new();
    let mut games = Vec::new();
    let mut now = t0;
    let mut last_checkpoint = t0;
    for round in 0..options.rounds {
        let round_start = now + 10 * 60 * SECOND;
        let records_before = sim.records;
        for player in players.iter_mut() {
            plan(player, &mut rng, round, round_start);
        }
        // Every board's next instant: its scripted input or a deadline,
        // whichever is first; the earliest board goes next.
        loop {
            let mut best: Option<(Micros, usize, bool)> = None;
            for (i, p) in players.iter().enumerate() {
                if p.next == Next::Done {
                    continue;
                }
                let scripted = (p.next != Next::Flagging).then_some(p.at);
                let deadline = p.board.next_deadline();
                let (at, tick) = match (scripted, deadline) {
                    (Some(s), Some(d)) if d < s => (d, true),
                    (Some(s), _) => (s, false),
                    (None, Some(d)) => (d, true),
                    (None, None) => (now, false),
                };
                if best.is_none_or(|(b, _, _)| at < b) {
                    best = Some((at, i, tick));
                }
            }
            let Some((at, i, tick)) = best else {
                break;
            };
            now = now.max(at);
            if now - last_checkpoint >= 60 * SECOND {
                last_checkpoint = now;
                sim.flush(&mut players, now, true)?;
                let wall = sim.clock.wall0 + (now - t0);
                sim.store.checkpoint(now, wall)?;
            }
            let player = &mut players[i];
            if tick {
                sim.feed(player, now, BoardInput::Tick)?;
            } else {
                step(&mut sim, player, &mut rng, now)?;
            }
            if player.next == Next::Flagging && !player.board.state(now).flags.is_empty() {
                player.next = Next::Result;
                player.at = now + rng.random_range(10..120) * SECOND;
            }
            sim.flush(&mut players, now, false)?;
        }
        sim.flush(&mut players, now, true)?;
        games.extend(players.iter().map(|p| p.played.clone()));
        let figures = RoundFigures {
            round: round + 1,
            rss_kb: rss_kb(),
            db_bytes: file_bytes(&dir, ""),
            wal_bytes: file_bytes(&dir, "-wal"),
            records: sim.records - records_before,
            simulated_hours: (now - t0) as f64 / (3600.0 * SECOND as f64),
            wall_seconds: started.elapsed().as_secs_f64(),
        };
        progress(&format!(
            "round {}: RSS {} kB, database {} bytes (WAL {}), {} records, {:.1} h simulated, {:.1} s",
            figures.round,
            figures.rss_kb,
            figures.db_bytes,
            figures.wal_bytes,
            figures.records,
            figures.simulated_hours,
            figures.wall_seconds
        ));
        report_rounds.push(figures);
    }
    let (inputs, records, commits) = (sim.inputs, sim.records, sim.commits);
    drop(players);
    drop(opened);
    let base = report_rounds.get(1).map_or(0, |r| r.rss_kb);
    let growth = report_rounds
        .iter()
        .skip(2)
        .map(|r| r.rss_kb as i64 - base as i64)
        .max()
        .unwrap_or(0);
    Ok(EventReport {
        options: options.clone(),
        inputs,
        records,
        commits,
        simulated_hours: (now - t0) as f64 / (3600.0 * SECOND as f64),
        wall_seconds: started.elapsed().as_secs_f64(),
        final_db_bytes: file_bytes(&dir, ""),
        final_wal_bytes: file_bytes(&dir, "-wal"),
        rss_growth_after_round_2_kb: growth,
        memory_flat: growth <= FLAT_MARGIN_KB as i64,
        rounds: report_rounds,
        games,
        load_average: super::edges::load_average(),
        state_dir: dir,
    })
}

/// The board's next scripted input at `now`.
fn step(
    sim: &mut Sim<'_>,
    player: &mut Player,
    rng: &mut impl Rng,
    now: Micros,
) -> anyhow::Result<()> {
    match player.next {
        Next::Start => {
            if player.played.round > 1 {
                sim.feed(player, now, command(BoardCommand::NewGame(spec()?)))?;
            }
            sim.feed(player, now, command(BoardCommand::Start))?;
            player.next = Next::Press;
            player.at = now + think_time(player, rng, now);
        }
        Next::Press => {
            if player.flag_at == Some(player.ply) {
                player.next = Next::Flagging;
                return Ok(());
            }
            let state = player.board.state(now);
            let button = match state.running {
                Some(Side::White) => Button::Left,
                _ => Button::Right,
            };
            // The unit numbers its events from its HELLO's first
            // unacknowledged one (0).
            let event = player.event;
            player.event = player.event.wrapping_add(1);
            let arrival = now + rng.random_range(200..2_000);
            sim.feed(
                player,
                arrival,
                BoardInput::Device(DeviceInput::Button {
                    role: DeviceRole::Buttons,
                    serial: player.serial.clone(),
                    event,
                    button,
                    pressed: true,
                    at: now,
                    arrival,
                }),
            )?;
            player.played.presses += 1;
            player.ply += 1;
            if player.ply >= player.plies {
                player.next = Next::Result;
                player.at = now + rng.random_range(5..60) * SECOND;
            } else if player.pause_at == Some(player.ply) {
                // The arbiter stops the clock (a dispute), then restarts it.
                let paused = now + rng.random_range(2..20) * SECOND;
                sim.feed(player, paused, command(BoardCommand::Pause))?;
                player.next = Next::Resume;
                player.at = paused + rng.random_range(60..600) * SECOND;
            } else if player.penalty_at == Some(player.ply) {
                player.next = Next::Penalty;
                player.at = now + rng.random_range(2..20) * SECOND;
            } else {
                player.at = now + think_time(player, rng, now);
            }
        }
        Next::Resume => {
            sim.feed(player, now, command(BoardCommand::Resume))?;
            player.next = Next::Press;
            player.at = now + think_time(player, rng, now);
        }
        Next::Penalty => {
            // Art. 7.5: two minutes more for the opponent of the side to
            // move (an illegal move completed).
            let side = player.board.state(now).running.unwrap_or(Side::White);
            sim.feed(
                player,
                now,
                command(BoardCommand::AdjustBy {
                    side: side.other(),
                    delta_ms: 120_000,
                }),
            )?;
            player.next = Next::Press;
            player.at = now + think_time(player, rng, now);
        }
        Next::Result => {
            let state = player.board.state(now);
            let (result, termination) = match state.flags.first() {
                Some(Side::White) => (GameResult::BlackWins, Termination::TimeForfeit),
                Some(Side::Black) => (GameResult::WhiteWins, Termination::TimeForfeit),
                None => (
                    match rng.random_range(0..3) {
                        0 => GameResult::WhiteWins,
                        1 => GameResult::BlackWins,
                        _ => GameResult::Draw,
                    },
                    Termination::Normal,
                ),
            };
            if state.running.is_some() {
                sim.feed(player, now, command(BoardCommand::Pause))?;
            }
            sim.feed(
                player,
                now,
                command(BoardCommand::SetResult {
                    result: Some(result),
                    termination: Some(termination),
                }),
            )?;
            player.played.result = result.pgn().to_owned();
            player.next = Next::Done;
        }
        // Called only when the board has no deadline left: the flag
        // fell already (or cannot), the arbiter ends the game.
        Next::Flagging => {
            player.next = Next::Result;
            player.at = now;
        }
        Next::Done => {}
    }
    Ok(())
}
