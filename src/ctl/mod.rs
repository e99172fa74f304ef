//! `chessclockctl`, the arbiter's command line: reads and controls the
//! daemon's clocks over D-Bus (system bus by default, the user bus, or a
//! remote host through `ssh HOST systemd-stdio-bridge`), and runs the
//! engine offline (`replay`).
//!
//! Promises: every reading command takes `--json`; every changing command
//! prints what it changed, one line per board (`b2 white 5:11 -> 4:30`);
//! a time is never a bare number (`4:30`, `270s`, `1500ms`); every failure
//! prints one clear line (the daemon's own message and error name) on
//! standard error and exits non-zero (1; 2 for usage errors and bad replay
//! input). The daemon's JSON is read into the typed views of
//! `chessclock_core::views`.

pub mod commands;
pub mod echo;
pub mod hall;
pub mod output;
pub mod rows;
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
use chessclock_core::contract::BoardSnapshot;
use chessclock_core::views::{GameSummary, HistoryView, StateView};

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
                  membership of the group `chessclock`. Every change prints what it changed.",
    after_help = "Examples:\n  chessclockctl status\n  chessclockctl start --all --at 14:00\n  \
                  chessclockctl adjust board1 black --remaining 4:30 --moves 20\n  \
                  chessclockctl adjust board1 white --sub 2:00\n  \
                  chessclockctl note board1 3-fold claim rejected\n  \
                  chessclockctl -H pi-board1 -H pi-board2 watch\n  \
                  chessclockctl --hall http://192.168.1.10:8080 watch\n\n\
                  Environment:\n  CHESSCLOCKCTL_BUS=user  talk to the daemon on your user bus \
                  (like --user on every command)"
)]
pub struct Cli {
    /// Talk to the daemon on the system bus (the default).
    #[arg(long, global = true, conflicts_with = "user")]
    pub system: bool,
    /// Talk to a daemon on your user (session) bus.
    #[arg(long, global = true)]
    pub user: bool,
    /// Which bus to use when neither --system nor --user is given.
    #[arg(
        long,
        global = true,
        value_enum,
        env = "CHESSCLOCKCTL_BUS",
        value_name = "BUS",
        hide_env_values = true
    )]
    pub bus: Option<BusArg>,
    /// Reach the daemon on another machine: `ssh -xT HOST systemd-stdio-bridge`.
    /// `watch` takes it more than once (one view of every host's boards).
    #[arg(short = 'H', long = "host", global = true, value_name = "[USER@]HOST")]
    pub host: Vec<String>,
    /// Read the boards from a hall's hub (`chessclock-hall`) at this
    /// address (`http://HOST:PORT`) instead of from daemons: `watch` only.
    #[arg(long, global = true, value_name = "URL", conflicts_with = "host")]
    pub hall: Option<String>,
    /// With --hall (else unused): a file whose first line is one of the
    /// hub's hall screen tokens (`chessclock-hall --screen-tokens`): the
    /// hub serves its live boards to arbiters and hall screens only.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        env = "CHESSCLOCKCTL_HALL_TOKEN_FILE"
    )]
    pub hall_token_file: Option<std::path::PathBuf>,
    /// A D-Bus address to connect to instead (for tests and debugging).
    #[arg(long, global = true, hide = true, value_name = "ADDRESS")]
    pub address: Option<String>,
    #[command(subcommand)]
    pub command: Cmd,
}

/// The bus `--bus` / `CHESSCLOCKCTL_BUS` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BusArg {
    System,
    /// The user (session) bus; `session` is the same.
    #[value(alias = "session")]
    User,
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

    fn side(self) -> chessclock_core::engine::Side {
        match self {
            SideArg::White => chessclock_core::engine::Side::White,
            SideArg::Black => chessclock_core::engine::Side::Black,
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
    /// Show every board (or some): times, running side, moves, stages, flags,
    /// devices, and what needs the arbiter (a call, a restart, a scheduled start).
    Status {
        /// Board ids (default: all boards).
        boards: Vec<String>,
        /// Print JSON: the snapshot and the state of each board.
        #[arg(long)]
        json: bool,
    },
    /// A live view of all boards of one or more hosts, most urgent first;
    /// quit with q or Ctrl-C.
    Watch {
        /// Print one frame and exit (for scripts).
        #[arg(long)]
        once: bool,
        /// Print every board's snapshot as a JSON line, then one line per change.
        #[arg(long)]
        json: bool,
        /// No bell when a player calls the arbiter.
        #[arg(long)]
        no_bell: bool,
        /// No colour.
        #[arg(long)]
        no_color: bool,
        /// A file of hosts, one `[USER@]HOST` a line (# comments), like -H each.
        #[arg(long, value_name = "FILE")]
        hosts_file: Option<PathBuf>,
    },
    /// Set up a new game with a time control (notation or preset name) on
    /// one or more boards: `new b1 b2 900+10`, `new --all fide-rapid`.
    New {
        /// The board ids, then the control (e.g. `900+10`,
        /// `40/5400+30:1800+30`, `G/90;d5`, `fide-rapid`); with --all only
        /// the control.
        #[arg(required = true, value_name = "BOARD... CONTROL")]
        targets: Vec<String>,
        /// Every board.
        #[arg(long)]
        all: bool,
        /// Accept a base time under a minute (the notation counts seconds:
        /// 15+10 is 15 s, 900+10 is 15 min).
        #[arg(long)]
        yes: bool,
        /// Replace a game that has started and not ended (it stays readable:
        /// chessclockctl games BOARD).
        #[arg(long)]
        force: bool,
    },
    /// Start White's clock on boards (or every board), now or at a time; a
    /// second --at moves the scheduled start; --cancel cancels it.
    #[command(group(ArgGroup::new("which").required(true).args(["boards", "all"])))]
    Start {
        /// Board ids.
        boards: Vec<String>,
        /// Every board (at one instant with --at).
        #[arg(long)]
        all: bool,
        /// When: RFC 3339 (2026-11-30T14:00:00+01:00), HH:MM[:SS] today, or +90s / +5m.
        #[arg(long, value_name = "TIME", conflicts_with = "cancel")]
        at: Option<String>,
        /// Start at --at even if the system clock is not NTP-synchronised.
        #[arg(long, requires = "at")]
        force: bool,
        /// Cancel the scheduled start.
        #[arg(long)]
        cancel: bool,
    },
    /// Pause boards' clocks (or every board's).
    #[command(group(ArgGroup::new("which").required(true).args(["boards", "all"])))]
    Pause {
        /// Board ids.
        boards: Vec<String>,
        #[arg(long)]
        all: bool,
    },
    /// Resume paused boards (or every board).
    #[command(group(ArgGroup::new("which").required(true).args(["boards", "all"])))]
    Resume {
        /// Board ids.
        boards: Vec<String>,
        #[arg(long)]
        all: bool,
    },
    /// Press a side's button, as the player would.
    Press {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// `white` or `black`.
        side: SideArg,
    },
    /// Take back the arbiter's last press (a mistaken `press`), when no
    /// press came after it.
    Undo {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
    },
    /// Acknowledge a player's arbiter call (an arbiter is on the way): recorded
    /// with your name; the clock stays stopped until `resume`.
    AckCall {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
    },
    /// Correct a side's clock: remaining time, a penalty or bonus, moves
    /// made, stage. Times: 4:30, 1:04:30, 270s, 4m30s, 1500ms (never a bare
    /// number).
    #[command(group(ArgGroup::new("what").required(true).multiple(true)
        .args(["remaining", "add", "sub", "moves", "stage"])))]
    Adjust {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// `white` or `black`.
        side: SideArg,
        /// Set the remaining time.
        #[arg(long, value_name = "TIME", conflicts_with_all = ["add", "sub"])]
        remaining: Option<String>,
        /// Add time at the instant of the command (e.g. 2:00 for Art. 7.5).
        #[arg(long, value_name = "TIME", conflicts_with = "sub")]
        add: Option<String>,
        /// Take time away at the instant of the command.
        #[arg(long, value_name = "TIME")]
        sub: Option<String>,
        /// Completed moves (at most 999).
        #[arg(long)]
        moves: Option<u32>,
        /// Stage (1-based; at most the stages the control has).
        #[arg(long)]
        stage: Option<u32>,
    },
    /// Write a note into the game's record ("3-fold claim rejected").
    Note {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// The note (the words may be given unquoted).
        #[arg(required = true, num_args = 1.., trailing_var_arg = true)]
        text: Vec<String>,
    },
    /// A game's record: every press, correction, flag, call, restart and
    /// note, with the time of day and who made it.
    History {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        /// Print JSON in the fixed schema (docs/history-format.md).
        #[arg(long)]
        json: bool,
        /// A past game (its number from `chessclockctl games BOARD`).
        #[arg(long, value_name = "ID")]
        game: Option<i64>,
    },
    /// Export a game: the record as JSON or CSV, or the game as PGN.
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
        /// A past game (its number from `chessclockctl games BOARD`).
        #[arg(long, value_name = "ID")]
        game: Option<i64>,
    },
    /// A board's games: number, control, start, end, result, moves.
    Games {
        /// The board id from the daemon's configuration (or its object path).
        board: String,
        #[arg(long)]
        json: bool,
    },
    /// The presets the daemon knows, with their controls in words.
    Presets {
        #[arg(long)]
        json: bool,
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
    /// Write man pages into a directory: chessclockctl(1) and one page per
    /// command (the daemon's own: `chessclockd --man DIR`).
    Man {
        /// Where the pages go.
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
    /// Some boards of a command failed; each failure was printed already.
    #[error("{0} of the boards failed")]
    Reported(usize),
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
             --user or CHESSCLOCKCTL_BUS=user for a daemon on your session bus)"
        }
        "org.freedesktop.DBus.Error.UnknownMethod" => {
            "; the daemon is older than this chessclockctl (upgrade it)"
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
        Err(CtlError::Reported(_)) => ExitCode::from(1),
        Err(error) => {
            eprintln!("chessclockctl: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

/// Where the daemon is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Address(String),
    Host { host: String, user_bus: bool },
    User,
    System,
}

impl Target {
    /// How to reach `host` (or the local daemon) with the bus options of `cli`.
    fn of(cli: &Cli, host: Option<&str>) -> Target {
        let user_bus = cli.user || (!cli.system && cli.bus == Some(BusArg::User));
        if let Some(address) = &cli.address {
            return Target::Address(address.clone());
        }
        match host {
            Some(host) => Target::Host {
                host: host.to_owned(),
                user_bus,
            },
            None if user_bus => Target::User,
            None => Target::System,
        }
    }

    /// A short name for views and messages (the host, or nothing locally).
    pub fn label(&self) -> String {
        match self {
            Target::Host { host, .. } => host.clone(),
            _ => String::new(),
        }
    }
}

/// The one daemon a command talks to (`-H` once at most).
fn single_target(cli: &Cli) -> Result<Target, CtlError> {
    match cli.host.as_slice() {
        [] => Ok(Target::of(cli, None)),
        [host] => Ok(Target::of(cli, Some(host))),
        _ => Err(CtlError::Usage(
            "only `watch` takes -H more than once: give one host".into(),
        )),
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
        Cmd::Watch {
            once,
            json,
            no_bell,
            no_color,
            hosts_file,
        } => {
            let options = watch::Options {
                bell: !no_bell,
                color: !no_color,
            };
            if let Some(url) = &cli.hall {
                if hosts_file.is_some() {
                    return Err(CtlError::Usage(
                        "--hall reads every board from the hub: no --hosts-file".into(),
                    ));
                }
                let token = cli
                    .hall_token_file
                    .as_deref()
                    .map(hall::read_token)
                    .transpose()?;
                return watch::main_hall(url, token, *once, *json, options)
                    .await
                    .map(|()| 0);
            }
            let mut hosts = cli.host.clone();
            if let Some(file) = hosts_file {
                hosts.extend(watch::read_hosts_file(file)?);
            }
            let targets: Vec<Target> = if hosts.is_empty() {
                vec![Target::of(&cli, None)]
            } else {
                hosts.iter().map(|h| Target::of(&cli, Some(h))).collect()
            };
            return watch::main(&targets, *once, *json, options)
                .await
                .map(|()| 0);
        }
        _ => {}
    }
    if cli.hall.is_some() {
        return Err(CtlError::Usage(
            "--hall URL works with `watch` only: a hub reads, it does not command              (arbiters correct boards on the hub's page)"
                .into(),
        ));
    }
    let target = single_target(&cli)?;
    let connection = match connect(&target).await {
        Ok(connection) => connection,
        Err(error) => {
            if let Cmd::Presets { json } = &cli.command {
                eprintln!("chessclockctl: {error}; showing the built-in presets");
                print_presets(
                    &crate::dbus::presets::list(&crate::config::Config::default()),
                    *json,
                )?;
                return Ok(0);
            }
            return Err(error);
        }
    };
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
    commands::run(&ctx, cli.command).await?;
    stdout.flush()?;
    Ok(0)
}

/// Prints presets as a table or JSON.
fn print_presets(
    presets: &[chessclock_core::views::PresetView],
    json: bool,
) -> Result<(), CtlError> {
    let mut stdout = std::io::stdout();
    if json {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string(presets).map_err(|e| CtlError::Api(e.to_string()))?
        )?;
        return Ok(());
    }
    let width = presets.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let control_width = presets.iter().map(|p| p.control.len()).max().unwrap_or(0);
    for preset in presets {
        writeln!(
            stdout,
            "{}  {}  {}{}",
            output::pad(&preset.name, width),
            output::pad(&preset.control, control_width),
            preset.prose,
            if preset.source == "config" {
                "  (from the config)"
            } else {
                ""
            }
        )?;
    }
    Ok(())
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
        let ids = self.board_ids().await?;
        resolve_in(&ids, board)
    }

    /// Several boards (or all, with `all`), checked against the daemon.
    pub async fn resolve_all(&self, boards: &[String], all: bool) -> Result<Vec<String>, CtlError> {
        let ids = self.board_ids().await?;
        if all {
            return Ok(ids);
        }
        let mut resolved = Vec::new();
        for board in boards {
            let id = resolve_in(&ids, board)?;
            if !resolved.contains(&id) {
                resolved.push(id);
            }
        }
        Ok(resolved)
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

    pub async fn snapshot(&self, id: &str) -> Result<BoardSnapshot, CtlError> {
        let text = api(id, self.board(id).await?.snapshot().await)?;
        parse_json(id, "snapshot", &text)
    }

    /// The board's State view, as of now.
    pub async fn state(&self, id: &str) -> Result<StateView, CtlError> {
        let text = api(id, self.board(id).await?.state().await)?;
        parse_json(id, "state", &text)
    }

    /// The current game's history, or a stored game's.
    pub async fn history(&self, id: &str, game: Option<i64>) -> Result<HistoryView, CtlError> {
        let proxy = self.board(id).await?;
        let text = match game {
            None => api(id, proxy.history().await)?,
            Some(game) => api(id, proxy.game_history(game).await)?,
        };
        parse_json(id, "history", &text)
    }

    /// The board's games.
    pub async fn games(&self, id: &str) -> Result<Vec<GameSummary>, CtlError> {
        let text = api(id, self.board(id).await?.games().await)?;
        parse_json(id, "list of games", &text)
    }

    /// The daemon's monotonic milliseconds now (the base of `SnapshotMs`).
    pub async fn daemon_now_ms(&self) -> Result<i64, CtlError> {
        Ok(api("clock", self.manager.now().await)?.0)
    }
}

/// `board` (an id or an object path) among the daemon's `ids`.
fn resolve_in(ids: &[String], board: &str) -> Result<String, CtlError> {
    let id = board_id(board).unwrap_or(board).to_owned();
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

/// One of the daemon's JSON answers as its typed view.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    id: &str,
    what: &str,
    text: &str,
) -> Result<T, CtlError> {
    serde_json::from_str(text).map_err(|e| {
        CtlError::Api(format!(
            "{id}: the daemon sent a {what} this chessclockctl cannot read ({e}); \
             are the daemon and chessclockctl the same version?"
        ))
    })
}

/// Connects to the daemon `target` names.
pub async fn connect(target: &Target) -> Result<Connection, CtlError> {
    let (builder, what) = match target {
        Target::Address(address) => (
            zbus::connection::Builder::address(address.as_str()),
            format!("address {address}"),
        ),
        Target::Host { host, user_bus } => (
            zbus::connection::Builder::address(remote_address(host, *user_bus)),
            format!(
                "{} on {host} (through ssh and systemd-stdio-bridge)",
                if *user_bus {
                    "the user bus"
                } else {
                    "the system bus"
                }
            ),
        ),
        Target::User => (
            zbus::connection::Builder::session(),
            "your user (session) bus".to_owned(),
        ),
        Target::System => (
            zbus::connection::Builder::system(),
            "the system bus".to_owned(),
        ),
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
