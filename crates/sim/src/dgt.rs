//! A simulated DGT board on a PTY, for end-to-end tests and demos
//! (`chessclock-sim dgt ...`).
//!
//! It answers the board commands the host sends (reset, board dump, clock,
//! update modes, serial number, long serial number, version; clock messages
//! are swallowed) and, once the host has put it in an update mode, either
//! replays a capture's messages or plays the moves of a PGN the way hands
//! do: lift and put down, sometimes on an intermediate square first (d2-d3
//! then d4, a rook stopping on the way), sometimes lifting the captured piece
//! first, castling king first or rook first, en passant in either order, a
//! pawn put on the last rank before the new piece. The variations come from
//! a seeded random generator, so a seed always gives the same byte stream.
//! A PGN of several games is played game after game: after each game's last
//! move a pause ([`DgtSimOptions::game_pause`]), then the pieces go back to
//! the starting position one by one (every piece off a square it does not
//! start on, then every missing piece put back), as players reset a board.
//! [`DgtSimOptions::move_events`] tells a test the moment a move is about to
//! be put down (so it can press a clock before the board reports the move).
//!
//! The PTY slave is set raw at once and kept open by the simulator, so the
//! host can open, close and reopen it; an optional symlink gives it a stable
//! name.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::san::SanPlus;
use shakmaty::{CastlingSide, Chess, File as BoardFile, Move, Position, Role, Square};

use chessclock_core::eboard::decode::{capture_reads, CaptureFormat};
use chessclock_core::eboard::placement::{code_of, index_of, Orientation, Placement};
use chessclock_core::eboard::protocol::{
    command, encode_board_dump, encode_field_update, encode_message, message_id, Message, Parsed,
    Parser,
};

/// What the simulated board plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimScript {
    /// Replays a capture: its first board dump is the initial placement,
    /// every later message is sent in turn.
    Capture {
        path: PathBuf,
        format: CaptureFormat,
    },
    /// Plays the moves of this PGN text from the starting position.
    Pgn { text: String },
}

/// A move about to be put down on the simulated board: the last placement
/// change of `ply` (1-based) of game `game` (0-based) follows after
/// [`DgtSimOptions::press_lead`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimMoveEvent {
    pub game: usize,
    pub ply: usize,
}

/// Options of [`run_sim`].
#[derive(Clone, Debug)]
pub struct DgtSimOptions {
    pub script: SimScript,
    /// A symlink to create to the PTY slave (replaced if it exists).
    pub link: Option<PathBuf>,
    /// Pause before each placement change (PGN) or message (capture).
    pub step: Duration,
    /// Extra pause before each move's first change (PGN).
    pub move_pause: Duration,
    /// Pause between the host entering update mode and the first change.
    pub start_delay: Duration,
    /// Seed of the hand's variations (PGN).
    pub seed: u64,
    /// The board stands turned round (White on the connector side) (PGN).
    pub turned_round: bool,
    /// Send a BWTIME with the lever flipped after each move, as an attached
    /// DGT clock does when pressed (PGN).
    pub clock_presses: bool,
    /// Keep answering for this long after the script ends, then stop
    /// (`None`: until [`DgtSim::stop`]).
    pub linger: Option<Duration>,
    /// Five ASCII digits.
    pub serial_number: String,
    /// Pause after a game's last move before the pieces go back (PGN with
    /// several games).
    pub game_pause: Duration,
    /// Told of every move just before its last placement change.
    pub move_events: Option<mpsc::Sender<SimMoveEvent>>,
    /// How long after telling `move_events` the move is put down.
    pub press_lead: Duration,
    /// After a game whose PGN result is decided (`1-0`, `0-1`, `1/2-1/2`)
    /// and that did not end in checkmate or stalemate, the players show the
    /// result with both kings in the centre (DGT's signal: light squares
    /// 1-0, dark 0-1, one of each a draw).
    pub signal_results: bool,
}

impl DgtSimOptions {
    pub fn new(script: SimScript) -> DgtSimOptions {
        DgtSimOptions {
            script,
            link: None,
            step: Duration::from_millis(150),
            move_pause: Duration::from_millis(600),
            start_delay: Duration::from_millis(500),
            seed: 1,
            turned_round: false,
            clock_presses: false,
            linger: None,
            serial_number: "24055".into(),
            game_pause: Duration::from_secs(3),
            move_events: None,
            press_lead: Duration::from_millis(54),
            signal_results: false,
        }
    }
}

/// `chessclock-sim dgt` arguments (the lead wires the subcommand to
/// [`run_sim_cli`]).
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct DgtSimArgs {
    /// Replay this capture (one base64-encoded read per line, or raw bytes
    /// with --raw).
    #[arg(long, conflicts_with = "pgn", required_unless_present = "pgn")]
    pub capture: Option<PathBuf>,
    /// The capture holds raw bytes.
    #[arg(long, requires = "capture")]
    pub raw: bool,
    /// Play the main line of this PGN file with realistic hand movements.
    #[arg(long)]
    pub pgn: Option<PathBuf>,
    /// Create this symlink to the PTY (e.g. /run/chessclock/dgt0).
    #[arg(long)]
    pub link: Option<PathBuf>,
    /// Milliseconds before each placement change or replayed message.
    #[arg(long, default_value_t = 150)]
    pub step_ms: u64,
    /// Extra milliseconds before each move (PGN).
    #[arg(long, default_value_t = 600)]
    pub move_pause_ms: u64,
    /// Milliseconds between the host's update-mode command and the first change.
    #[arg(long, default_value_t = 500)]
    pub start_delay_ms: u64,
    /// Seed of the hand's variations (PGN).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The board stands turned round, White on the connector side (PGN).
    #[arg(long)]
    pub turned_round: bool,
    /// Flip the attached clock's lever after every move (PGN).
    #[arg(long)]
    pub clock_presses: bool,
    /// Show each decided game's result with both kings in the centre (PGN).
    #[arg(long)]
    pub signal_results: bool,
    /// Milliseconds after a game's last move before the pieces go back to
    /// the start (a PGN with several games).
    #[arg(long, default_value_t = 3000)]
    pub game_pause_ms: u64,
    /// Stop this many milliseconds after the script ends (default: run
    /// until killed).
    #[arg(long)]
    pub linger_ms: Option<u64>,
}

impl DgtSimArgs {
    pub fn options(&self) -> io::Result<DgtSimOptions> {
        let script = match (&self.capture, &self.pgn) {
            (Some(path), _) => SimScript::Capture {
                path: path.clone(),
                format: if self.raw {
                    CaptureFormat::Raw
                } else {
                    CaptureFormat::Base64Lines
                },
            },
            (None, Some(path)) => SimScript::Pgn {
                text: std::fs::read_to_string(path)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?,
            },
            (None, None) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "give --capture FILE or --pgn FILE",
                ))
            }
        };
        let mut opts = DgtSimOptions::new(script);
        opts.link = self.link.clone();
        opts.step = Duration::from_millis(self.step_ms);
        opts.move_pause = Duration::from_millis(self.move_pause_ms);
        opts.start_delay = Duration::from_millis(self.start_delay_ms);
        opts.seed = self.seed;
        opts.turned_round = self.turned_round;
        opts.clock_presses = self.clock_presses;
        opts.linger = self.linger_ms.map(Duration::from_millis);
        opts.game_pause = Duration::from_millis(self.game_pause_ms);
        opts.signal_results = self.signal_results;
        Ok(opts)
    }
}

/// `chessclock-sim dgt ...`: starts the board, prints the port to open on
/// one line (`dgt board at /dev/pts/N`), then serves until the script is
/// done and `--linger-ms` has passed (or forever without it).
pub fn run_sim_cli(args: &DgtSimArgs, out: &mut dyn Write) -> io::Result<SimSummary> {
    let sim = run_sim(args.options()?)?;
    writeln!(out, "dgt board at {}", sim.path().display())?;
    out.flush()?;
    sim.wait()
}

/// What the simulator did, when it ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimSummary {
    /// Script messages sent (field updates, clock messages).
    pub messages_sent: usize,
    /// Command bytes received from the host.
    pub commands_received: usize,
    pub script_done: bool,
}

/// A running simulated board.
#[derive(Debug)]
pub struct DgtSim {
    slave_path: PathBuf,
    link: Option<PathBuf>,
    stop: mpsc::Sender<()>,
    thread: JoinHandle<io::Result<SimSummary>>,
}

impl DgtSim {
    /// The path a host opens: the symlink if one was asked for, else the
    /// PTY slave.
    pub fn path(&self) -> &Path {
        self.link.as_deref().unwrap_or(&self.slave_path)
    }

    pub fn slave_path(&self) -> &Path {
        &self.slave_path
    }

    /// True once the simulator has stopped by itself (see `linger`).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the simulator to stop by itself.
    pub fn wait(self) -> io::Result<SimSummary> {
        let DgtSim {
            link, thread, stop, ..
        } = self;
        let result = join(thread);
        drop(stop);
        remove_link(link.as_deref());
        result
    }

    /// Stops the simulator now.
    pub fn stop(self) -> io::Result<SimSummary> {
        let _ = self.stop.send(());
        self.wait()
    }
}

fn join(thread: JoinHandle<io::Result<SimSummary>>) -> io::Result<SimSummary> {
    thread
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the DGT simulator thread panicked")))
}

fn remove_link(link: Option<&Path>) {
    if let Some(link) = link {
        if link.is_symlink() {
            let _ = std::fs::remove_file(link);
        }
    }
}

/// One message the script sends, after a pause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimStep {
    pub delay: Duration,
    pub bytes: Vec<u8>,
    /// The step puts this move down (its last placement change).
    pub lands: Option<SimMoveEvent>,
}

/// The prepared script: the initial placement (raw board order) and steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimPlan {
    pub initial: [u8; 64],
    pub steps: Vec<SimStep>,
}

/// Creates the PTY, prepares the script and starts serving in a thread.
pub fn run_sim(opts: DgtSimOptions) -> io::Result<DgtSim> {
    let plan = match &opts.script {
        SimScript::Capture { path, format } => {
            let input = std::fs::read(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            capture_plan(&input, *format, opts.step)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
        }
        SimScript::Pgn { text } => {
            pgn_plan(text, &opts).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
        }
    };
    let pty = nix::pty::openpty(None, None).map_err(io::Error::from)?;
    let mut termios = tcgetattr(pty.slave.as_fd()).map_err(io::Error::from)?;
    cfmakeraw(&mut termios);
    tcsetattr(pty.slave.as_fd(), SetArg::TCSANOW, &termios).map_err(io::Error::from)?;
    let slave_path = nix::unistd::ttyname(pty.slave.as_fd()).map_err(io::Error::from)?;
    if let Some(link) = &opts.link {
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", link.display()));
        if link.is_symlink() {
            std::fs::remove_file(link).map_err(named)?;
        }
        std::os::unix::fs::symlink(&slave_path, link).map_err(named)?;
    }
    // Non-blocking: with no host reading, what the board sends is lost (as
    // on a real port) instead of blocking the simulator.
    let flags = nix::fcntl::fcntl(pty.master.as_fd(), nix::fcntl::FcntlArg::F_GETFL)
        .map_err(io::Error::from)?;
    let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(pty.master.as_fd(), nix::fcntl::FcntlArg::F_SETFL(flags))
        .map_err(io::Error::from)?;
    let (stop, stop_rx) = mpsc::channel();
    let master = File::from(pty.master);
    let slave = pty.slave;
    let link = opts.link.clone();
    let thread = std::thread::Builder::new()
        .name("dgt-sim".into())
        .spawn(move || {
            // Holding the slave keeps the master readable while no host has
            // the port open.
            let _slave = slave;
            serve(master, plan, &opts, stop_rx)
        })?;
    Ok(DgtSim {
        slave_path,
        link,
        stop,
        thread,
    })
}

/// Writes `bytes` to the host, waiting at most 100 ms for room; what does not
/// fit is dropped (nobody is reading).
fn send(master: &mut File, mut bytes: &[u8]) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_millis(100);
    while !bytes.is_empty() {
        match master.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(());
                }
                let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLOUT)];
                let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::ZERO);
                let _ = poll(&mut fds, timeout);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // EIO: no host has the port open.
            Err(e) if e.raw_os_error() == Some(libc::EIO) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

struct Served {
    board: [u8; 64],
    clock: Vec<u8>,
    parser: Parser,
}

impl Served {
    /// Keeps the simulated board in step with what it sent.
    fn track(&mut self, bytes: &[u8]) {
        for parsed in self.parser.push(bytes) {
            match parsed {
                Parsed::Message(Message::FieldUpdate { square, piece }) => {
                    self.board[usize::from(square & 63)] = piece;
                }
                Parsed::Message(Message::BoardDump(board)) => self.board = board,
                Parsed::Message(Message::BwTime(_)) => {
                    // The last byte run is exactly the message just sent.
                    self.clock = bytes.to_vec();
                }
                _ => {}
            }
        }
    }
}

fn serve(
    mut master: File,
    plan: SimPlan,
    opts: &DgtSimOptions,
    stop: mpsc::Receiver<()>,
) -> io::Result<SimSummary> {
    let mut summary = SimSummary::default();
    let mut served = Served {
        board: plan.initial,
        // With a clock: White's (the left one) about to run, its lever up;
        // without: "no clock connected".
        clock: if opts.clock_presses {
            encode_message(
                message_id::BWTIME,
                &[0x00, 0x05, 0x00, 0x00, 0x05, 0x00, 0x09],
            )
        } else {
            encode_message(message_id::BWTIME, &[0, 0, 0, 0, 0, 0, 0x20])
        },
        parser: Parser::new(),
    };
    let mut update_mode = false;
    let mut next_index = 0usize;
    let mut next_at: Option<Instant> = None;
    let mut done_at: Option<Instant> = None;
    let mut skip = 0usize; // bytes of a clock message still to swallow
    let mut clock_size_pending = false;
    let mut notified: Option<usize> = None;
    let mut buf = [0u8; 256];
    loop {
        match stop.try_recv() {
            Ok(()) | Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let now = Instant::now();
        if next_index >= plan.steps.len() && done_at.is_none() && update_mode {
            done_at = Some(now);
            summary.script_done = true;
        }
        if let (Some(done), Some(linger)) = (done_at, opts.linger) {
            if now >= done + linger {
                break;
            }
        }
        let mut wait = Duration::from_millis(50);
        if let (true, Some(at)) = (update_mode, next_at) {
            wait = wait.min(at.saturating_duration_since(now));
        }
        let readable = {
            let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
            let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::ZERO);
            match poll(&mut fds, timeout) {
                Ok(n) if n > 0 => fds[0]
                    .revents()
                    .is_some_and(|r| r.intersects(PollFlags::POLLIN)),
                Ok(_) => false,
                Err(nix::errno::Errno::EINTR) => false,
                Err(e) => return Err(io::Error::from(e)),
            }
        };
        if readable {
            let n = match master.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
                // EIO: no host has the port open right now.
                Err(e) if e.raw_os_error() == Some(libc::EIO) => {
                    std::thread::sleep(Duration::from_millis(20));
                    0
                }
                Err(e) => return Err(e),
            };
            for &byte in &buf[..n] {
                summary.commands_received += 1;
                if clock_size_pending {
                    clock_size_pending = false;
                    skip = usize::from(byte);
                    continue;
                }
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let answer = match byte {
                    command::SEND_RESET => {
                        update_mode = false;
                        None
                    }
                    command::SEND_BRD => Some(encode_board_dump(&served.board)),
                    command::SEND_CLK => Some(served.clock.clone()),
                    command::SEND_UPDATE | command::SEND_UPDATE_BRD | command::SEND_UPDATE_NICE => {
                        if !update_mode && next_at.is_none() {
                            next_at = Some(Instant::now() + opts.start_delay);
                        }
                        update_mode = true;
                        None
                    }
                    command::RETURN_SERIALNR => Some(encode_message(
                        message_id::SERIALNR,
                        opts.serial_number.as_bytes(),
                    )),
                    command::RETURN_LONG_SERIALNR => Some(encode_message(
                        message_id::LONG_SERIALNR,
                        format!("{:0>10}", opts.serial_number).as_bytes(),
                    )),
                    command::SEND_VERSION => Some(encode_message(message_id::VERSION, &[1, 7])),
                    command::CLOCK_MESSAGE => {
                        clock_size_pending = true;
                        None
                    }
                    _ => None,
                };
                if let Some(answer) = answer {
                    send(&mut master, &answer)?;
                }
            }
        }
        if update_mode {
            if let Some(at) = next_at {
                // One instant for both checks: a step never goes out untold.
                let due = Instant::now() >= at;
                let step = plan.steps.get(next_index);
                if let (true, Some(event), Some(events)) = (
                    due && notified != Some(next_index),
                    step.and_then(|s| s.lands),
                    opts.move_events.as_ref(),
                ) {
                    // Tell the test, then put the move down a little later.
                    notified = Some(next_index);
                    let _ = events.send(event);
                    next_at = Some(Instant::now() + opts.press_lead);
                    continue;
                }
                if due && next_index < plan.steps.len() {
                    let bytes = &plan.steps[next_index].bytes;
                    send(&mut master, bytes)?;
                    served.track(bytes);
                    summary.messages_sent += 1;
                    next_index += 1;
                    next_at = plan.steps.get(next_index).map(|s| Instant::now() + s.delay);
                }
            }
        }
    }
    Ok(summary)
}

/// A capture as a plan: the first board dump is the initial placement; every
/// other message is a step.
pub fn capture_plan(
    input: &[u8],
    format: CaptureFormat,
    step: Duration,
) -> Result<SimPlan, String> {
    let reads = capture_reads(input, format).map_err(|e| e.to_string())?;
    let mut parser = Parser::new();
    let mut initial = None;
    let mut steps = Vec::new();
    for read in reads {
        for parsed in parser.push(&read) {
            let Parsed::Message(message) = parsed else {
                continue;
            };
            let bytes = match message {
                Message::BoardDump(board) if initial.is_none() => {
                    initial = Some(board);
                    continue;
                }
                Message::BoardDump(board) => encode_board_dump(&board),
                Message::FieldUpdate { square, piece } => encode_field_update(square, piece),
                Message::BwTime(_) | Message::Unknown(_) | Message::EeMoves(_) => {
                    reencode(&message)
                }
                _ => continue,
            };
            steps.push(SimStep {
                delay: step,
                bytes,
                lands: None,
            });
        }
    }
    let initial = initial.ok_or("the capture has no board dump to start from")?;
    Ok(SimPlan { initial, steps })
}

fn reencode(message: &Message) -> Vec<u8> {
    match message {
        Message::BwTime(chessclock_core::eboard::protocol::BwTime::Ack(d)) => {
            encode_message(message_id::BWTIME, d)
        }
        Message::BwTime(chessclock_core::eboard::protocol::BwTime::Reading(r)) => {
            let face = |f: &chessclock_core::eboard::protocol::ClockFace| {
                let bcd = |v: u8| ((v / 10) << 4) | (v % 10);
                let flags = (u8::from(f.flag_blocked) * 0x10)
                    | (u8::from(f.bonus_indicator) * 0x20)
                    | (u8::from(f.flag_shown) * 0x40);
                [f.hours | flags, bcd(f.minutes), bcd(f.seconds)]
            };
            let (right, left) = (face(&r.right), face(&r.left));
            let mut data = Vec::with_capacity(7);
            data.extend_from_slice(&right);
            data.extend_from_slice(&left);
            data.push(r.status);
            encode_message(message_id::BWTIME, &data)
        }
        Message::EeMoves(payload) => encode_message(message_id::EE_MOVES, payload),
        Message::Unknown(bytes) => bytes.clone(),
        _ => Vec::new(),
    }
}

/// The SAN moves of a PGN's first game's main line (tags, comments,
/// variations, NAGs, move numbers and the result skipped).
pub fn pgn_sans(text: &str) -> Vec<String> {
    pgn_games(text).into_iter().next().unwrap_or_default()
}

/// The SAN moves of every game of a PGN, in order: a game ends at its
/// result (`1-0`, `0-1`, `1/2-1/2`, `*`) or at the next game's tags.
pub fn pgn_games(text: &str) -> Vec<Vec<String>> {
    pgn_games_with_results(text)
        .into_iter()
        .map(|(sans, _)| sans)
        .collect()
}

/// [`pgn_games`] with each game's result token (`None`: none written).
pub fn pgn_games_with_results(text: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut cleaned = String::new();
    let mut depth_comment = false;
    let mut depth_variation = 0u32;
    for line in text.lines() {
        if line.trim_start().starts_with('[') && !depth_comment {
            // A tag line: a game boundary when moves came before.
            cleaned.push_str(" [ ");
            continue;
        }
        for c in line.chars() {
            match c {
                '{' if !depth_comment => depth_comment = true,
                '}' if depth_comment => depth_comment = false,
                _ if depth_comment => {}
                ';' => break,
                '(' => depth_variation += 1,
                ')' => depth_variation = depth_variation.saturating_sub(1),
                _ if depth_variation > 0 => {}
                c => cleaned.push(c),
            }
        }
        cleaned.push(' ');
    }
    let mut games = Vec::new();
    let mut sans: Vec<String> = Vec::new();
    for token in cleaned.split_whitespace() {
        if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*" | "[") {
            if !sans.is_empty() {
                let result = (token != "[").then(|| token.to_owned());
                games.push((std::mem::take(&mut sans), result));
            }
            continue;
        }
        if token.starts_with('$') {
            continue;
        }
        let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if !token.is_empty() {
            sans.push(token.to_owned());
        }
    }
    if !sans.is_empty() {
        games.push((sans, None));
    }
    games
}

/// The moves of a PGN's games as placement changes the way hands make
/// them, the pieces set back up between games.
pub fn pgn_plan(text: &str, opts: &DgtSimOptions) -> Result<SimPlan, String> {
    let orientation = if opts.turned_round {
        Orientation::TurnedRound
    } else {
        Orientation::Normal
    };
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let mut steps = Vec::new();
    let raw_step = |square: Square, code: u8, delay: Duration| SimStep {
        delay,
        bytes: encode_field_update(orientation.canonical(index_of(square) as u8), code),
        lands: None,
    };
    for (game, (sans, result)) in pgn_games_with_results(text).iter().enumerate() {
        let mut pos = Chess::default();
        if game > 0 {
            // The previous game's final position goes back to the start,
            // one piece at a time, after a pause.
            let mut delay = opts.game_pause;
            for (square, code) in reset_gestures(&steps_placement(&steps, orientation)) {
                steps.push(raw_step(square, code, delay));
                delay = opts.step;
            }
        }
        for (i, san) in sans.iter().enumerate() {
            let parsed: SanPlus = san
                .parse()
                .map_err(|_| format!("game {}, move {}: `{san}` is not SAN", game + 1, i + 1))?;
            let mv = parsed.san.to_move(&pos).map_err(|_| {
                format!(
                    "game {}, move {}: `{san}` is not legal here",
                    game + 1,
                    i + 1
                )
            })?;
            let changes = gestures(&pos, mv, &mut rng);
            let last = changes.len().saturating_sub(1);
            for (j, (square, code)) in changes.into_iter().enumerate() {
                let delay = if j == 0 {
                    opts.move_pause + opts.step
                } else {
                    opts.step
                };
                let mut step = raw_step(square, code, delay);
                if j == last {
                    step.lands = Some(SimMoveEvent { game, ply: i + 1 });
                }
                steps.push(step);
            }
            if opts.clock_presses {
                // White just moved: the right clock (Black's) runs, lever up right.
                let status = if i % 2 == 0 { 0x13 } else { 0x09 };
                steps.push(SimStep {
                    delay: opts.step,
                    bytes: encode_message(
                        message_id::BWTIME,
                        &[0x00, 0x05, 0x00, 0x00, 0x05, 0x00, status],
                    ),
                    lands: None,
                });
            }
            pos.play_unchecked(mv);
        }
        let decided = result.as_deref().filter(|r| *r != "*");
        if let (true, Some(result), false) = (opts.signal_results, decided, pos.is_game_over()) {
            let (white_to, black_to) = match result {
                "1-0" => (Square::E4, Square::D5),
                "0-1" => (Square::D4, Square::E5),
                _ => (Square::D4, Square::D5),
            };
            let mut delay = opts.move_pause;
            let board = pos.board().clone();
            for square in [white_to, black_to] {
                if board.piece_at(square).is_some() {
                    steps.push(raw_step(square, 0, delay));
                    delay = opts.step;
                }
            }
            for (color, to) in [
                (shakmaty::Color::White, white_to),
                (shakmaty::Color::Black, black_to),
            ] {
                if let Some(king) = board.king_of(color) {
                    steps.push(raw_step(king, 0, delay));
                    delay = opts.step;
                    steps.push(raw_step(to, code_of(Role::King.of(color)), delay));
                }
            }
        }
    }
    Ok(SimPlan {
        initial: Placement::START.to_raw(orientation),
        steps,
    })
}

/// The canonical placement after the field updates of `steps` so far.
fn steps_placement(steps: &[SimStep], orientation: Orientation) -> Placement {
    let mut raw = Placement::START.to_raw(orientation);
    let mut parser = Parser::new();
    for step in steps {
        for parsed in parser.push(&step.bytes) {
            if let Parsed::Message(Message::FieldUpdate { square, piece }) = parsed {
                raw[usize::from(square & 63)] = piece & 0x0f;
            }
        }
    }
    Placement::from_raw(&raw, orientation)
}

/// Setting a board back up: every piece off a square where it does not
/// stand at the start, then every start square filled.
fn reset_gestures(from: &Placement) -> Vec<(Square, u8)> {
    let mut out = Vec::new();
    for index in 0..64 {
        if from.0[index] != 0 && from.0[index] != Placement::START.0[index] {
            out.push((chessclock_core::eboard::placement::square_of(index), 0));
        }
    }
    for index in 0..64 {
        if Placement::START.0[index] != 0 && from.0[index] != Placement::START.0[index] {
            out.push((
                chessclock_core::eboard::placement::square_of(index),
                Placement::START.0[index],
            ));
        }
    }
    out
}

/// The placement changes of one move: (square, new code), 0 = lifted.
fn gestures(pos: &Chess, mv: Move, rng: &mut StdRng) -> Vec<(Square, u8)> {
    let us = pos.turn();
    let code = |role: Role| code_of(role.of(us));
    let mut out = Vec::new();
    match mv {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            if capture.is_some() && rng.random_bool(0.5) {
                out.push((to, 0)); // the captured piece first
                out.push((from, 0));
            } else {
                out.push((from, 0));
                if capture.is_some() {
                    out.push((to, 0));
                }
            }
            if capture.is_none() && rng.random_bool(0.4) {
                if let Some(stop) = intermediate(role, from, to, rng) {
                    out.push((stop, code(role)));
                    out.push((stop, 0));
                }
            }
            if promotion.is_some() && rng.random_bool(0.3) {
                out.push((to, code(Role::Pawn)));
                out.push((to, 0));
            }
            out.push((to, code(promotion.unwrap_or(role))));
        }
        Move::EnPassant { from, to } => {
            let captured = Square::from_coords(to.file(), from.rank());
            if rng.random_bool(0.5) {
                out.extend([(captured, 0), (from, 0), (to, code(Role::Pawn))]);
            } else {
                out.extend([(from, 0), (to, code(Role::Pawn)), (captured, 0)]);
            }
        }
        Move::Castle { king, rook } => {
            let side = if rook.file() > king.file() {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            let king_to = Square::from_coords(side.king_to_file(), king.rank());
            let rook_to = Square::from_coords(side.rook_to_file(), king.rank());
            let king_moves = [(king, 0), (king_to, code(Role::King))];
            let rook_moves = [(rook, 0), (rook_to, code(Role::Rook))];
            if rng.random_bool(0.5) {
                out.extend(king_moves);
                out.extend(rook_moves);
            } else {
                out.extend(rook_moves);
                out.extend(king_moves);
            }
        }
        Move::Put { role, to } => out.push((to, code(role))),
    }
    out
}

/// A square strictly between `from` and `to` where a hand may stop: the
/// middle square of a pawn's double step, or one on a slider's path.
fn intermediate(role: Role, from: Square, to: Square, rng: &mut StdRng) -> Option<Square> {
    let df = i32::from(to.file()) - i32::from(from.file());
    let dr = i32::from(to.rank()) - i32::from(from.rank());
    let steps = df.abs().max(dr.abs());
    let straight = df == 0 || dr == 0 || df.abs() == dr.abs();
    let slides = matches!(role, Role::Rook | Role::Bishop | Role::Queen)
        || (role == Role::Pawn && df == 0 && dr.abs() == 2);
    if !slides || !straight || steps < 2 {
        return None;
    }
    let k = rng.random_range(1..steps);
    let file = i32::from(from.file()) + df.signum() * k;
    let rank = i32::from(from.rank()) + dr.signum() * k;
    Some(Square::from_coords(
        BoardFile::new(file as u32),
        shakmaty::Rank::new(rank as u32),
    ))
}

#[cfg(test)]
mod tests;
