//! `chessclockctl`, the arbiter's command line: reads and controls the
//! daemon's clocks over D-Bus (system bus by default, the user bus, or a
//! remote host through `ssh HOST systemd-stdio-bridge`), and runs the
//! engine offline (`replay`).
//!
//! Promises: every reading command takes `--json`; every failure prints one
//! clear line (the daemon's own message and error name) on standard error
//! and exits non-zero (1; 2 for usage errors and bad replay input).

pub mod output;
pub mod time;
pub mod watch;

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgGroup, CommandFactory, Parser, Subcommand, ValueEnum};
use zbus::address::transport::{Transport, Unixexec};
use zbus::{Address, Connection};

use crate::dbus::client::{BoardProxy, ManagerProxy};
use crate::dbus::{board_id, board_path, Error as ApiError};
use output::{Snapshot, Table};

/// Control the chessclockd chess clocks.
#[derive(Debug, Parser)]
#[command(
    name = "chessclockctl",
    version,
    about = "Control the chessclockd chess clocks (FIDE Art. 6) over D-Bus",
    long_about = "Control the chessclockd chess clocks over D-Bus: list and watch the \
                  boards, start a round (optionally at one instant on every board), pause, \
                  correct a clock, read a game's history, and replay a timeline offline. \
                  Reading is open to every local user; changing a clock needs root or \
                  membership of the group `chessclock`.",
    after_help = "Examples:\n  chessclockctl status\n  chessclockctl start --all --at 14:00\n  \
                  chessclockctl adjust board1 black --remaining 4:30 --moves 20\n  \
                  chessclockctl -H arbiter@pi-board1 watch"
)]
pub struct Cli {
    /// Talk to the daemon on the system bus (the default).
    #[arg(long, global = true, conflicts_with = "user")]
    pub system: bool,
    /// Talk to a daemon on your user (session) bus.
    #[arg(long, global = true)]
    pub user: bool,
    /// Reach the daemon on another machine: `ssh -xT HOST systemd-stdio-bridge`.
    #[arg(short = 'H', long = "host", global = true, value_name = "[USER@]HOST")]
    pub host: Option<String>,
    /// A D-Bus address to connect to instead (for tests and debugging).
    #[arg(long, global = true, hide = true, value_name = "ADDRESS")]
    pub address: Option<String>,
    #[command(subcommand)]
    pub command: Cmd,
}

/// A side of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SideArg {
    White,
    Black,
}

impl SideArg {
    fn as_str(self) -> &'static str {
        match self {
            SideArg::White => "white",
            SideArg::Black => "black",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List the boards.
    Boards {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show every board (or one): times, running side, moves, stages, flags, devices.
    Status {
        /// A board id (default: all boards).
        board: Option<String>,
        /// Print JSON: the snapshot and the state of each board.
        #[arg(long)]
        json: bool,
    },
    /// A live view of all boards; quit with q or Ctrl-C.
    Watch {
        /// Print one frame and exit (for scripts).
        #[arg(long)]
        once: bool,
        /// Print every board's snapshot as a JSON line, then one line per change.
        #[arg(long)]
        json: bool,
    },
    /// Set up a new game with a time control (notation or preset name).
    New {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// e.g. `5400+30`, `40/5400+30:1800+30`, `G/90;d5`, `fide-rapid`.
        control: String,
    },
    /// Start a board's clock (White's), or every board's, now or at a time.
    #[command(group(ArgGroup::new("which").required(true).args(["board", "all"])))]
    Start {
        /// The board id from the daemon's configuration (or its object path).
        board: Option<String>,
        /// Start every board (at one instant with --at).
        #[arg(long)]
        all: bool,
        /// When: RFC 3339 (2026-11-30T14:00:00+01:00), HH:MM[:SS] today, or +90s / +5m.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// Start at --at even if the system clock is not NTP-synchronised.
        #[arg(long, requires = "at")]
        force: bool,
    },
    /// Pause a board's clocks (or every board's).
    #[command(group(ArgGroup::new("which").required(true).args(["board", "all"])))]
    Pause {
        /// The board id from the daemon's configuration (or its object path).
        board: Option<String>,
        #[arg(long)]
        all: bool,
    },
    /// Resume a paused board.
    Resume {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
    },
    /// Press a side's button, as the player would.
    Press {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// `white` or `black`.
        side: SideArg,
    },
    /// Correct a side's clock: remaining time, moves made, stage.
    #[command(group(ArgGroup::new("what").required(true).multiple(true)
        .args(["remaining", "moves", "stage"])))]
    Adjust {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// `white` or `black`.
        side: SideArg,
        /// Remaining time: M:SS, H:MM:SS or milliseconds.
        #[arg(long, value_name = "TIME")]
        remaining: Option<String>,
        /// Completed moves.
        #[arg(long)]
        moves: Option<u32>,
        /// Stage (1-based).
        #[arg(long)]
        stage: Option<u32>,
    },
    /// A game's history: every press and every change, with who made it.
    History {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        #[arg(long)]
        json: bool,
    },
    /// Export a game: history as JSON or CSV, or the game as PGN.
    #[command(group(ArgGroup::new("format").required(true).args(["json", "csv", "pgn"])))]
    Export {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        csv: bool,
        #[arg(long)]
        pgn: bool,
    },
    /// Set PGN tags of a board's current game (players, round, event...);
    /// an empty value gives a tag back to its configured default.
    #[command(group(ArgGroup::new("which").required(true).multiple(true)
        .args(["event", "site", "date", "round", "white", "black", "tag"])))]
    Tags {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        #[arg(long)]
        event: Option<String>,
        #[arg(long)]
        site: Option<String>,
        /// YYYY.MM.DD (? for unknown digits).
        #[arg(long)]
        date: Option<String>,
        /// e.g. `3`, or `3.1` (round 3, board 1).
        #[arg(long)]
        round: Option<String>,
        /// White's name, `Last, First`.
        #[arg(long)]
        white: Option<String>,
        /// Black's name, `Last, First`.
        #[arg(long)]
        black: Option<String>,
        /// Any other tag, e.g. `--tag WhiteElo=2750` (repeatable).
        #[arg(long, value_name = "NAME=VALUE")]
        tag: Vec<String>,
    },
    /// Enter a game's result (a resignation, a draw agreed, a decision): it
    /// goes into the PGN with its termination, and the clock stops.
    #[command(name = "result")]
    GameResult {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// `1-0`, `0-1`, `1/2-1/2`, or `*` to withdraw the result.
        result: String,
        /// `normal` (the default: resignation, agreement), `time-forfeit`,
        /// `rules-infraction`, `adjudication`, `abandoned`, `emergency`.
        #[arg(long)]
        termination: Option<String>,
    },
    /// Run the timing engine over a JSON Lines timeline (no daemon needed).
    Replay {
        /// The timeline; `-` or nothing reads standard input.
        file: Option<PathBuf>,
    },
    /// Electronic boards (DGT): offline tools.
    Eboard {
        #[command(subcommand)]
        action: EboardAction,
    },
    /// Tell the daemon a device appeared or went away (udev calls this).
    Device {
        #[command(subcommand)]
        action: DeviceAction,
    },
    /// Print shell completions.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Write man pages into a directory.
    Man {
        /// Where chessclockctl.1 and chessclockctl-<command>.1 go.
        dir: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum DeviceAction {
    /// A device node appeared.
    Add {
        /// e.g. /dev/ttyACM0
        path: String,
    },
    /// A device node went away.
    Remove {
        /// e.g. /dev/ttyACM0
        path: String,
    },
}

/// `chessclockctl eboard ...`
#[derive(Subcommand, Debug)]
pub enum EboardAction {
    /// Print the moves detected in a DGT board capture, one per line.
    Decode {
        /// One base64-encoded serial read per line (as a capture tool
        /// records them), or raw bytes with `--raw`.
        file: PathBuf,
        /// Print SAN instead of UCI.
        #[arg(long)]
        san: bool,
        /// The file holds the raw bytes the board sent.
        #[arg(long)]
        raw: bool,
    },
}

/// A failure of the CLI, printed as one line.
#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    #[error("{0}")]
    Usage(String),
    #[error("cannot connect to {what}: {source}")]
    Connect { what: String, source: zbus::Error },
    #[error("{0}")]
    Api(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl CtlError {
    fn exit_code(&self) -> u8 {
        match self {
            CtlError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// Explains an API error: the daemon's message, then its name, with a hint
/// for the bus's own refusals.
pub fn describe(error: ApiError) -> String {
    let (name, message) = match error {
        ApiError::ZBus(zbus::Error::MethodError(name, message, _)) => {
            (name.to_string(), message.unwrap_or_default())
        }
        ApiError::ZBus(zbus::Error::FDO(error)) => (
            zbus::DBusError::name(error.as_ref()).to_string(),
            zbus::DBusError::description(error.as_ref())
                .unwrap_or_default()
                .to_owned(),
        ),
        ApiError::ZBus(other) => return format!("D-Bus failure: {other}"),
        other => {
            let name = zbus::DBusError::name(&other).to_string();
            let message = zbus::DBusError::description(&other)
                .unwrap_or_default()
                .to_owned();
            let short = crate::dbus::error::short_name(&name).unwrap_or(&name);
            return format!("{message} ({short})");
        }
    };
    let hint = match name.as_str() {
        "org.freedesktop.DBus.Error.AccessDenied" => {
            "; changing a clock needs root or membership of group `chessclock`"
        }
        "org.freedesktop.DBus.Error.ServiceUnknown"
        | "org.freedesktop.DBus.Error.NameHasNoOwner" => {
            "; is chessclockd running? (systemctl status chessclockd; \
             --user for a daemon on your session bus)"
        }
        _ => "",
    };
    format!("{message}{hint} ({name})")
}

fn api<T>(context: &str, result: Result<T, ApiError>) -> Result<T, CtlError> {
    result.map_err(|e| CtlError::Api(format!("{context}: {}", describe(e))))
}

/// The process entry point of `chessclockctl`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("chessclockctl: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("chessclockctl: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

/// Runs one command; returns the exit status.
pub async fn run(cli: Cli) -> Result<u8, CtlError> {
    let mut stdout = std::io::stdout();
    match &cli.command {
        Cmd::Completions { shell } => {
            clap_complete::generate(*shell, &mut Cli::command(), "chessclockctl", &mut stdout);
            return Ok(0);
        }
        Cmd::Man { dir } => {
            write_man_pages(dir)?;
            return Ok(0);
        }
        Cmd::Replay { file } => return replay(file.as_deref()),
        Cmd::Eboard {
            action: EboardAction::Decode { file, san, raw },
        } => {
            return match crate::eboard::files::decode_cli(file, *raw, *san, &mut stdout) {
                Ok(()) => Ok(0),
                Err(error) => Err(CtlError::Usage(error.to_string())),
            };
        }
        _ => {}
    }
    let connection = connect(&cli).await?;
    let manager = api(
        "manager",
        ManagerProxy::builder(&connection)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(ApiError::from),
    )?;
    let ctx = Ctx {
        connection: &connection,
        manager: &manager,
    };
    match cli.command {
        Cmd::Boards { json } => {
            let ids = ctx.board_ids().await?;
            if json {
                writeln!(stdout, "{}", serde_json::json!(ids))?;
            } else {
                for id in ids {
                    writeln!(stdout, "{id}")?;
                }
            }
        }
        Cmd::Status { board, json } => {
            let ids = match &board {
                Some(board) => vec![ctx.resolve(board).await?],
                None => ctx.board_ids().await?,
            };
            let now_ms = ctx.daemon_now_ms().await?;
            let mut views = Vec::new();
            for id in &ids {
                views.push(ctx.snapshot(id).await?);
            }
            if json {
                let mut entries = Vec::new();
                for (id, view) in ids.iter().zip(&views) {
                    let state = api(id, ctx.board(id).await?.state().await)?;
                    let state: serde_json::Value =
                        serde_json::from_str(&state).unwrap_or(serde_json::Value::String(state));
                    entries.push(serde_json::json!({
                        "board": id,
                        "daemon_now_ms": now_ms,
                        "snapshot": view.raw,
                        "state": state,
                    }));
                }
                let value = if board.is_some() {
                    entries.remove(0)
                } else {
                    serde_json::Value::Array(entries)
                };
                writeln!(stdout, "{value}")?;
            } else {
                write!(stdout, "{}", Table::render(&views, now_ms))?;
                let mut health = Vec::new();
                for id in &ids {
                    let state = api(id, ctx.board(id).await?.state().await)?;
                    let state = serde_json::from_str(&state).unwrap_or_default();
                    for note in output::state_notes(id, &state) {
                        writeln!(stdout, "{note}")?;
                    }
                    if health.is_empty() {
                        health = output::health_notes(&state);
                    }
                }
                // The daemon's, not a board's: said once.
                for note in health {
                    writeln!(stdout, "{note}")?;
                }
            }
        }
        Cmd::Watch { once, json } => {
            if json {
                watch::stream_json(&ctx, once).await?;
            } else if once {
                let now_ms = ctx.daemon_now_ms().await?;
                let mut views = Vec::new();
                for id in ctx.board_ids().await? {
                    views.push(ctx.snapshot(&id).await?);
                }
                write!(stdout, "{}", Table::render(&views, now_ms))?;
            } else {
                watch::run(&ctx).await?;
            }
        }
        Cmd::New { board, control } => {
            let id = ctx.resolve(&board).await?;
            api(&id, ctx.board(&id).await?.new_game(&control).await)?;
        }
        Cmd::Start {
            board,
            all,
            at,
            force,
        } => {
            let at_us = match &at {
                Some(text) => {
                    let spec = time::StartTime::parse(text).map_err(CtlError::Usage)?;
                    Some(
                        spec.resolve(crate::clock::wall_now_us())
                            .map_err(CtlError::Usage)?,
                    )
                }
                None => None,
            };
            if all {
                match at_us {
                    Some(us) => api("all boards", manager.start_all_at(us, force).await)?,
                    None => api("all boards", manager.start_all().await)?,
                }
            } else {
                let id = ctx.resolve(board.as_deref().unwrap_or_default()).await?;
                let proxy = ctx.board(&id).await?;
                match at_us {
                    Some(us) => api(&id, proxy.start_at_forced(us, force).await)?,
                    None => api(&id, proxy.start().await)?,
                }
            }
        }
        Cmd::Pause { board, all } => {
            if all {
                api("all boards", manager.pause_all().await)?;
            } else {
                let id = ctx.resolve(board.as_deref().unwrap_or_default()).await?;
                api(&id, ctx.board(&id).await?.pause().await)?;
            }
        }
        Cmd::Resume { board } => {
            let id = ctx.resolve(&board).await?;
            api(&id, ctx.board(&id).await?.resume().await)?;
        }
        Cmd::Press { board, side } => {
            let id = ctx.resolve(&board).await?;
            api(&id, ctx.board(&id).await?.press(side.as_str()).await)?;
        }
        Cmd::Adjust {
            board,
            side,
            remaining,
            moves,
            stage,
        } => {
            let remaining_ms = match &remaining {
                Some(text) => time::parse_remaining_ms(text).map_err(CtlError::Usage)?,
                None => -1,
            };
            let to_i32 = |value: Option<u32>, what: &str| -> Result<i32, CtlError> {
                match value {
                    None => Ok(-1),
                    Some(n) => i32::try_from(n)
                        .map_err(|_| CtlError::Usage(format!("--{what} {n} is too large"))),
                }
            };
            let (moves, stage) = (to_i32(moves, "moves")?, to_i32(stage, "stage")?);
            let id = ctx.resolve(&board).await?;
            let proxy = ctx.board(&id).await?;
            if stage == -1 {
                api(&id, proxy.adjust(side.as_str(), remaining_ms, moves).await)?;
            } else {
                api(
                    &id,
                    proxy
                        .adjust_with_stage(side.as_str(), remaining_ms, moves, stage)
                        .await,
                )?;
            }
        }
        Cmd::History { board, json } => {
            let id = ctx.resolve(&board).await?;
            let history = api(&id, ctx.board(&id).await?.history().await)?;
            if json {
                writeln!(stdout, "{}", history.trim_end())?;
            } else {
                write!(stdout, "{}", output::history_lines(&history))?;
            }
        }
        Cmd::Export {
            board, csv, pgn, ..
        } => {
            let id = ctx.resolve(&board).await?;
            let proxy = ctx.board(&id).await?;
            if pgn {
                let text = api(&id, proxy.pgn().await)?;
                write!(stdout, "{text}")?;
                if !text.ends_with('\n') {
                    writeln!(stdout)?;
                }
            } else {
                let history = api(&id, proxy.history().await)?;
                if csv {
                    write!(
                        stdout,
                        "{}",
                        output::history_csv(&history).map_err(CtlError::Api)?
                    )?;
                } else {
                    writeln!(stdout, "{}", history.trim_end())?;
                }
            }
        }
        Cmd::Tags {
            board,
            event,
            site,
            date,
            round,
            white,
            black,
            tag,
        } => {
            let mut tags: Vec<(String, String)> = [
                ("Event", event),
                ("Site", site),
                ("Date", date),
                ("Round", round),
                ("White", white),
                ("Black", black),
            ]
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| (name.to_owned(), v)))
            .collect();
            for pair in &tag {
                let (name, value) = pair.split_once('=').ok_or_else(|| {
                    CtlError::Usage(format!("--tag `{pair}`: expected NAME=VALUE"))
                })?;
                tags.push((name.to_owned(), value.to_owned()));
            }
            for (name, value) in &tags {
                crate::eboard::follower::check_tag(name, value).map_err(CtlError::Usage)?;
            }
            let id = ctx.resolve(&board).await?;
            let map: std::collections::HashMap<&str, &str> = tags
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect();
            api(&id, ctx.board(&id).await?.set_tags(map).await)?;
        }
        Cmd::GameResult {
            board,
            result,
            termination,
        } => {
            let termination = termination.unwrap_or_default();
            crate::dbus::board::result_command(&result, &termination).map_err(CtlError::Usage)?;
            let id = ctx.resolve(&board).await?;
            api(
                &id,
                ctx.board(&id)
                    .await?
                    .set_result(&result, &termination)
                    .await,
            )?;
        }
        Cmd::Device { action } => match action {
            DeviceAction::Add { path } => api(&path, manager.add_device(&path).await)?,
            DeviceAction::Remove { path } => api(&path, manager.remove_device(&path).await)?,
        },
        Cmd::Replay { .. } | Cmd::Eboard { .. } | Cmd::Completions { .. } | Cmd::Man { .. } => {}
    }
    stdout.flush()?;
    Ok(0)
}

/// What the commands share: the connection and the manager proxy.
pub struct Ctx<'a> {
    pub connection: &'a Connection,
    pub manager: &'a ManagerProxy<'a>,
}

impl Ctx<'_> {
    /// Board ids, in the daemon's order.
    pub async fn board_ids(&self) -> Result<Vec<String>, CtlError> {
        let paths = api("boards", self.manager.list_boards().await)?;
        Ok(paths
            .iter()
            .filter_map(|path| board_id(path.as_str()).map(str::to_owned))
            .collect())
    }

    /// A board id from an id or object path, checked against the daemon.
    pub async fn resolve(&self, board: &str) -> Result<String, CtlError> {
        let id = board_id(board).unwrap_or(board).to_owned();
        let ids = self.board_ids().await?;
        if ids.contains(&id) {
            Ok(id)
        } else {
            Err(CtlError::Usage(format!(
                "no board `{id}`; the daemon has: {}",
                if ids.is_empty() {
                    "no boards".to_owned()
                } else {
                    ids.join(", ")
                }
            )))
        }
    }

    pub async fn board(&self, id: &str) -> Result<BoardProxy<'static>, CtlError> {
        api(
            id,
            BoardProxy::builder(self.connection)
                .path(board_path(id))
                .cache_properties(zbus::proxy::CacheProperties::No)
                .build()
                .await
                .map_err(ApiError::from),
        )
    }

    pub async fn snapshot(&self, id: &str) -> Result<Snapshot, CtlError> {
        let text = api(id, self.board(id).await?.snapshot().await)?;
        Snapshot::parse(&text).map_err(|e| CtlError::Api(format!("{id}: {e}")))
    }

    /// The daemon's monotonic milliseconds now (the base of `SnapshotMs`).
    pub async fn daemon_now_ms(&self) -> Result<i64, CtlError> {
        Ok(api("clock", self.manager.now().await)?.0)
    }
}

/// Connects to the bus the options name.
pub async fn connect(cli: &Cli) -> Result<Connection, CtlError> {
    let (builder, what) = if let Some(address) = &cli.address {
        (
            zbus::connection::Builder::address(address.as_str()),
            format!("address {address}"),
        )
    } else if let Some(host) = &cli.host {
        (
            zbus::connection::Builder::address(remote_address(host, cli.user)),
            format!(
                "{} on {host} (through ssh and systemd-stdio-bridge)",
                if cli.user {
                    "the user bus"
                } else {
                    "the system bus"
                }
            ),
        )
    } else if cli.user {
        (
            zbus::connection::Builder::session(),
            "your user (session) bus".to_owned(),
        )
    } else {
        (
            zbus::connection::Builder::system(),
            "the system bus".to_owned(),
        )
    };
    builder
        .build()
        .await
        .map_err(|source| CtlError::Connect { what, source })
}

/// `ssh -xT -- HOST systemd-stdio-bridge [--user]`, built in code: zbus does
/// not percent-decode argv values parsed from an address string.
pub fn remote_address(host: &str, user_bus: bool) -> Address {
    let mut args: Vec<OsString> = vec!["-xT".into(), "--".into(), host.into()];
    args.push("systemd-stdio-bridge".into());
    if user_bus {
        args.push("--user".into());
    }
    Address::from(Transport::Unixexec(Unixexec::new(
        PathBuf::from("ssh"),
        None,
        args,
    )))
}

fn replay(file: Option<&std::path::Path>) -> Result<u8, CtlError> {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = match file {
        None => crate::replay::run(
            &mut std::io::stdin().lock(),
            &mut stdout.lock(),
            &mut stderr.lock(),
        ),
        Some(path) if path.as_os_str() == "-" => crate::replay::run(
            &mut std::io::stdin().lock(),
            &mut stdout.lock(),
            &mut stderr.lock(),
        ),
        Some(path) => {
            let file = std::fs::File::open(path)
                .map_err(|e| CtlError::Usage(format!("cannot open {}: {e}", path.display())))?;
            let mut input: Box<dyn BufRead> = Box::new(std::io::BufReader::new(file));
            crate::replay::run(&mut input, &mut stdout.lock(), &mut stderr.lock())
        }
    };
    Ok(u8::try_from(code).unwrap_or(1))
}

/// `chessclockctl.1` and one `chessclockctl-<command>.1` per subcommand.
pub fn write_man_pages(dir: &std::path::Path) -> Result<(), CtlError> {
    std::fs::create_dir_all(dir)?;
    let command = Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    std::fs::write(dir.join("chessclockctl.1"), page)?;
    for sub in command.get_subcommands() {
        let name = format!("chessclockctl-{}", sub.get_name());
        let mut page = Vec::new();
        let sub = sub
            .clone()
            .display_name(name.clone())
            .bin_name(format!("chessclockctl {}", sub.get_name()));
        clap_mangen::Man::new(sub).render(&mut page)?;
        std::fs::write(dir.join(format!("{name}.1")), page)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn remote_address_keeps_argv_verbatim() {
        let address = remote_address("arbiter@pi board", false);
        let Transport::Unixexec(exec) = address.transport() else {
            panic!("not unixexec: {address}");
        };
        assert_eq!(exec.path(), &PathBuf::from("ssh"));
        assert_eq!(
            exec.args(),
            &["-xT", "--", "arbiter@pi board", "systemd-stdio-bridge"]
                .map(OsString::from)
                .to_vec()[..]
        );
        let user = remote_address("pi", true);
        let Transport::Unixexec(exec) = user.transport() else {
            panic!()
        };
        assert_eq!(exec.args().last().unwrap(), "--user");
    }

    #[test]
    fn start_needs_a_board_or_all() {
        assert!(Cli::try_parse_from(["chessclockctl", "start"]).is_err());
        assert!(Cli::try_parse_from(["chessclockctl", "start", "b1", "--all"]).is_err());
        assert!(Cli::try_parse_from(["chessclockctl", "start", "--all", "--force"]).is_err());
        let cli =
            Cli::try_parse_from(["chessclockctl", "start", "--all", "--at", "+90s", "--force"])
                .unwrap();
        assert!(matches!(
            cli.command,
            Cmd::Start {
                all: true,
                force: true,
                ..
            }
        ));
        assert!(Cli::try_parse_from(["chessclockctl", "adjust", "b1", "white"]).is_err());
        assert!(Cli::try_parse_from(["chessclockctl", "press", "b1", "green"]).is_err());
    }
}
