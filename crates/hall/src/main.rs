//! `chessclock-hall`: the hall's hub. Follows every board of a hall on the
//! event's MQTT broker and serves the arbiters' page, a live event stream
//! and the round's PGN over HTTP (see the library's `hub` and `http`), and can push
//! the round to a lichess broadcast (see `round`). Stops
//! on SIGINT or SIGTERM. `chessclock-hall pairings` sends a round's
//! pairings to the hall's boards and exits; `chessclock-hall passwd FILE
//! USER` adds an arbiter to a password file (the password read from
//! standard input).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// mimalloc: the hall's JSON states are made on the MQTT task and dropped
/// on others, thousands a second; glibc's malloc took half the hub's time
/// at a hall's peak (BENCHMARKS.md, "Hall at scale").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod desk_cli;

#[derive(Parser, Debug)]
#[command(
    name = "chessclock-hall",
    version,
    about = "The hall's hub: every board of an event on one page, and the round's PGN",
    subcommand_negates_reqs = true
)]
struct Args {
    /// The broker: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (with --ca).
    #[arg(long, default_value = "mqtt://127.0.0.1:1883", global = true)]
    broker: String,
    /// The hall's name (as in the daemons' `[hall] name`).
    #[arg(long, required = true)]
    hall: Option<String>,
    /// Where to serve the page.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// A TOML file with `username` and `password` for the broker.
    #[arg(long, global = true)]
    credentials: Option<PathBuf>,
    /// The PEM file of the CA of the broker's certificate (mqtts://).
    #[arg(long, global = true)]
    ca: Option<PathBuf>,
    /// The arbiters' password file (`chessclock-hall passwd FILE USER`);
    /// without it the page is read-only.
    #[arg(long, value_name = "FILE")]
    passwords: Option<PathBuf>,
    /// The hall screens' read tokens, one a line (16 to 256 letters,
    /// digits, `-`, `_`, `.`, `~`): a screen opens `/?token=TOKEN` and
    /// reads live data (never commands); without a login or a token only
    /// the spectators' view is served.
    #[arg(long, value_name = "FILE")]
    screen_tokens: Option<PathBuf>,
    /// The sites that may frame the spectators' page and feeds (CSP
    /// `frame-ancestors`, e.g. "https://club.example"); default: none may.
    #[arg(long, value_name = "SOURCES")]
    public_frame_ancestors: Option<String>,
    /// The most connections served at once (default: the open-files
    /// limit less 64); an eighth is kept from the spectators' streams for
    /// the arbiters.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Seconds a client has to send a request's head (from its first
    /// byte, or from connecting); then it is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
    /// Seconds an idle kept-alive connection stays open.
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86400))]
    idle_timeout: u64,
    /// Where the hub keeps the event (players, rounds, results, final
    /// PGNs): a directory of its own, locked while the hub runs. Without
    /// it the event is kept in memory only, and a restart forgets it.
    #[arg(long, value_name = "DIR", env = "STATE_DIRECTORY")]
    state_dir: Option<PathBuf>,
    /// How long an arbiter stays logged in, in hours.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..=168))]
    session_hours: u64,
    /// More log output (-v, -vv).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(flatten)]
    round: round_cli::RoundArgs,
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Add an arbiter to a password file, or give them a new password (read
    /// from standard input: the first line). The file is made if missing;
    /// it keeps argon2id hashes only.
    Passwd {
        /// The password file.
        file: PathBuf,
        /// The arbiter's user name (1 to 64 characters, no spaces or `:`).
        user: String,
    },
    #[command(flatten)]
    Round(round_cli::Sub),
    /// The event desk from the command line (as on the page, /desk):
    /// load a round's pairings, review, send, start, close, correct, on
    /// the running hub (an arbiter logs in).
    #[command(name = "round")]
    Desk(desk_cli::RoundArgs),
    /// Write this program's man page, chessclock-hall(1), into a directory
    /// (the repository keeps it in man/).
    Man {
        /// Where the page goes.
        dir: PathBuf,
    },
}

/// `man DIR`: chessclock-hall(1) from this command line.
fn man(dir: &std::path::Path) -> ExitCode {
    use clap::CommandFactory;
    let mut page = Vec::new();
    let written = clap_mangen::Man::new(Args::command())
        .render(&mut page)
        .and_then(|()| std::fs::create_dir_all(dir))
        .and_then(|()| std::fs::write(dir.join("chessclock-hall.1"), page));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!(
                "chessclock-hall: cannot write the man page into {}: {error}",
                dir.display()
            );
            ExitCode::FAILURE
        }
    }
}

/// `passwd FILE USER`: the password from standard input's first line.
fn passwd(file: &std::path::Path, user: &str) -> ExitCode {
    use std::io::{BufRead, IsTerminal};
    if std::io::stdin().is_terminal() {
        eprintln!("Password for {user} (one line; it is shown as typed):");
    }
    let mut line = String::new();
    if let Err(error) = std::io::stdin().lock().read_line(&mut line) {
        eprintln!("chessclock-hall: cannot read the password: {error}");
        return ExitCode::FAILURE;
    }
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    match chessclock_hall::auth::set_password(file, user, password) {
        Ok(()) => {
            println!("{user}: password set in {}", file.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("chessclock-hall: {error}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(Sub::Passwd { file, user }) = &args.command {
        return passwd(file, user);
    }
    if let Some(Sub::Man { dir }) = &args.command {
        return man(dir);
    }
    if let Some(Sub::Desk(desk)) = args.command {
        return desk_cli::main(desk);
    }
    if let Err(error) = chessclock_host::logging::init(args.verbose) {
        eprintln!("chessclock-hall: cannot set up logging: {error}");
    }
    let hall = args.hall.clone().unwrap_or_default();
    if let Some(Sub::Round(round_cli::Sub::Pairings(pairings))) = args.command {
        return round_cli::pairings(pairings, &args.broker, &hall, args.credentials, args.ca);
    }
    if let Err(error) = chessclock_hall_proto::broker::check_topic_level("--hall", &hall) {
        eprintln!("chessclock-hall: {error}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("chessclock-hall: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args, hall)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("chessclock-hall: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args, hall: String) -> anyhow::Result<()> {
    use chessclock_hall::{auth, gate, http, hub, shed};
    use chessclock_hall_proto::client::client_options;
    let options = client_options(
        &args.broker,
        format!("chessclock-hall-{hall}-{}", std::process::id()),
        args.credentials.as_deref(),
        args.ca.as_deref(),
        5,
    )?;
    let access = match &args.passwords {
        Some(file) => {
            let passwords = auth::Passwords::load(file).map_err(anyhow::Error::msg)?;
            if passwords.is_empty() {
                anyhow::bail!(
                    "the password file {} has no arbiter: add one with `chessclock-hall passwd {} USER`",
                    file.display(),
                    file.display()
                );
            }
            tracing::info!(arbiters = passwords.len(), "hub: arbiters may log in");
            Some(auth::Access::new(
                passwords,
                std::time::Duration::from_secs(args.session_hours * 3600),
            ))
        }
        None => None,
    };
    let screens = match &args.screen_tokens {
        Some(file) => {
            let screens = auth::ScreenTokens::load(file).map_err(anyhow::Error::msg)?;
            if screens.is_empty() {
                anyhow::bail!("the screen token file {} has no token", file.display());
            }
            tracing::info!(
                screens = screens.len(),
                "hub: hall screens may read live data"
            );
            screens
        }
        None => auth::ScreenTokens::default(),
    };
    let public_frame_ancestors = args
        .public_frame_ancestors
        .as_deref()
        .map(gate::check_frame_ancestors)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let nofile = shed::nofile().unwrap_or_else(|| {
        tracing::warn!("hub: cannot read the open-files limit: taking it as 1024");
        1024
    });
    let limits = shed::Limits::for_nofile(
        nofile,
        args.max_connections,
        std::time::Duration::from_secs(args.header_timeout),
        std::time::Duration::from_secs(args.idle_timeout),
    )
    .map_err(anyhow::Error::msg)?;
    tracing::info!(
        open_files = nofile,
        max_connections = limits.max_connections,
        kept_for_arbiters = limits.arbiter_reserve,
        header_timeout_s = args.header_timeout,
        idle_timeout_s = args.idle_timeout,
        "hub: connection limits"
    );
    let hub = hub::Hub::with_access(&hall, access);
    match &args.state_dir {
        Some(dir) => {
            let store = chessclock_hall::event::store::Store::open(dir)?;
            let current = hub.desk().attach(store).map_err(anyhow::Error::msg)?;
            tracing::info!(dir = %dir.display(), round = ?current, "hub: the event's store");
        }
        None => tracing::warn!(
            "hub: no --state-dir: the event is kept in memory only, a restart forgets it"
        ),
    }
    let pusher = round_cli::set_up(&hub, &args.round)?;
    let follower = tokio::spawn(hub::follow(hub.clone(), options));
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let shutdown = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    };
    let gate = std::sync::Arc::new(gate::Gate {
        hub,
        screens,
        public_frame_ancestors,
    });
    let served = http::serve(gate, args.listen, limits, shutdown).await;
    follower.abort();
    if let Some(pusher) = pusher {
        pusher.abort();
    }
    served
}

/// The round: `--round`, `--pairings`, `--boards`, the lichess push, and
/// the `pairings` subcommand.
mod round_cli {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::time::Duration;

    use anyhow::Context;
    use chessclock_hall::hub::Hub;
    use chessclock_hall::pairings::parse_board_map;
    use chessclock_hall::round::{self, PushTarget, Sending};

    #[derive(clap::Args, Debug)]
    #[command(group(
        clap::ArgGroup::new("lichess_target")
            .args(["lichess_round", "lichess_broadcast"])
            .multiple(false)
    ))]
    pub struct RoundArgs {
        /// The round's number, for `[Round "R.B"]` (the pairings' round
        /// when --pairings is given).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: Option<u32>,
        /// The round's pairings: a TRF16 file (needs --round) or a CSV
        /// `board,white,black[,control]`: names the boards in the round's
        /// PGN and gives /results.trf, /results.res, /results.json.
        #[arg(long, requires = "round")]
        pairings: Option<PathBuf>,
        /// Which hall board plays which pairing board: CSV `board,id`
        /// (default: the board whose id ends in the number).
        #[arg(long)]
        boards: Option<PathBuf>,
        /// Push the round's PGN to this lichess broadcast round (its id);
        /// `ID1,ID2,...` for a section of more than 100 boards: boards
        /// 1-100 go to the first round, 101-200 to the second...
        #[arg(long, requires = "lichess_token_file", value_name = "ID[,ID...]")]
        lichess_round: Option<String>,
        /// Push the round's PGN to lichess rounds the hub makes in this
        /// broadcast (its 8-letter id, the end of its URL): one per
        /// hundred boards, named "Round N" (one) or "Round N I", "Round N
        /// II"... (boards 1-100, 101-200...); kept in the event store, so
        /// a restart makes none again; the next round gets its own.
        #[arg(
            long,
            requires = "lichess_token_file",
            conflicts_with = "lichess_round",
            value_name = "TOURID"
        )]
        lichess_broadcast: Option<String>,
        /// The names of the lichess rounds the hub makes
        /// (--lichess-broadcast): `{round}` stands for the round's number,
        /// e.g. "Open, round {round}" gives "Open, round 3" or, split,
        /// "Open, round 3 I", "Open, round 3 II"...; without `{round}` the
        /// number follows the name ("Open" -> "Open 3 I").
        #[arg(
            long,
            requires = "lichess_broadcast",
            value_name = "NAME",
            default_value = chessclock_hall::round::DEFAULT_NAMES
        )]
        lichess_round_name: String,
        /// The least time between two pushes to one lichess round, in
        /// seconds: the changes meanwhile go together in the next (the
        /// latest text).
        #[arg(long, value_name = "SECONDS", default_value_t = 2,
              value_parser = clap::value_parser!(u64).range(1..=3600))]
        push_interval_seconds: u64,
        /// The public feed's delay, in seconds (the spectators' page,
        /// /public/..., /public/round.pgn, the lichess push): each game as
        /// it was this long ago, clocks included; the arbiters' feed is
        /// live. A round's own delay set on the desk wins.
        #[arg(long, value_name = "SECONDS", default_value_t = 0,
              value_parser = clap::value_parser!(u32).range(0..=86_400))]
        delay_seconds: u32,
        /// A game's result (its final state) goes public at once rather
        /// than after the delay.
        #[arg(long)]
        results_immediately: bool,
        /// A file whose first line is a lichess token with scope
        /// study:write (for --lichess-round or --lichess-broadcast).
        #[arg(long, requires = "lichess_target")]
        lichess_token_file: Option<PathBuf>,
        /// The lichess server.
        #[arg(long, default_value = "https://lichess.org")]
        lichess_url: String,
    }

    #[derive(clap::Subcommand, Debug)]
    pub enum Sub {
        /// Send a round's pairings to the hall's boards: each paired
        /// board gets the players and `Round "R.B"` (set-tags) and, where
        /// no game runs on it, the control (new-game).
        Pairings(PairingsArgs),
    }

    #[derive(clap::Args, Debug)]
    pub struct PairingsArgs {
        /// A FIDE TRF16 file.
        #[arg(long, conflicts_with = "csv", required_unless_present = "csv")]
        trf: Option<PathBuf>,
        /// A CSV: board,white,black[,control] (header optional).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// The round.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
        /// The control for every paired board with no game running
        /// (a notation or preset; a CSV's control column wins).
        #[arg(long)]
        control: Option<String>,
        /// Which hall board plays which pairing board: CSV `board,id`.
        #[arg(long)]
        boards: Option<PathBuf>,
        /// The name recorded in each board's history.
        #[arg(long, default_value = "chessclock-hall")]
        arbiter: String,
        /// Only print what would be sent.
        #[arg(long)]
        dry_run: bool,
        /// The longest wait for the broker and for the boards' replies, s.
        #[arg(long, default_value_t = 10)]
        wait_seconds: u64,
    }

    fn read(path: &Path, what: &str) -> anyhow::Result<String> {
        std::fs::read_to_string(path)
            .with_context(|| format!("{what}: cannot read {}", path.display()))
    }

    fn board_map(path: Option<&Path>) -> anyhow::Result<BTreeMap<u32, String>> {
        match path {
            None => Ok(BTreeMap::new()),
            Some(path) => parse_board_map(&read(path, "the board map")?)
                .map_err(|error| anyhow::anyhow!("{}: {error}", path.display())),
        }
    }

    /// Sets the hub's round up; starts the push if asked.
    pub fn set_up(
        hub: &Arc<Hub>,
        args: &RoundArgs,
    ) -> anyhow::Result<Option<tokio::task::JoinHandle<()>>> {
        let map = board_map(args.boards.as_deref())?;
        hub.set_delay(
            i64::from(args.delay_seconds) * 1000,
            args.results_immediately,
        );
        if args.delay_seconds > 0 || args.results_immediately {
            tracing::info!(
                delay_seconds = args.delay_seconds,
                results_immediately = args.results_immediately,
                "hub: the public feed goes out behind a delay"
            );
        }
        match (&args.pairings, args.round) {
            (Some(path), Some(round)) => {
                // Kept in the event as round `round` (a restart with the
                // same file keeps its status and results).
                let text = read(path, "the pairings")?;
                let pairings = hub
                    .desk()
                    .load_round(round, &text, map, None, hub.now_ms())
                    .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
                tracing::info!(games = pairings.games.len(), round, "hub: pairings read");
            }
            (None, Some(round)) => {
                // A round of the event: made the current one; else only
                // the number for `[Round "R.B"]`.
                if !hub.desk().switch_round(round).map_err(anyhow::Error::msg)? {
                    hub.desk().set_round(round);
                }
                if args.boards.is_some() {
                    hub.desk().set_board_map(map);
                }
            }
            _ => {
                if args.boards.is_some() {
                    hub.desk().set_board_map(map);
                }
            }
        }
        let interval = Duration::from_secs(args.push_interval_seconds);
        let target = match (
            &args.lichess_round,
            &args.lichess_broadcast,
            &args.lichess_token_file,
        ) {
            (Some(ids), _, Some(token)) => {
                PushTarget::new(&args.lichess_url, ids, token, interval)?
            }
            (None, Some(tournament), Some(token)) => PushTarget::made_in(
                &args.lichess_url,
                tournament,
                &args.lichess_round_name,
                token,
                interval,
            )?,
            _ => return Ok(None),
        };
        Ok(Some(round::spawn_push(hub.clone(), target)?))
    }

    /// `chessclock-hall pairings`.
    pub fn pairings(
        args: PairingsArgs,
        broker: &str,
        hall: &str,
        credentials: Option<PathBuf>,
        ca: Option<PathBuf>,
    ) -> ExitCode {
        match run_pairings(args, broker, hall, credentials, ca) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(error) => {
                eprintln!("chessclock-hall pairings: {error:#}");
                ExitCode::FAILURE
            }
        }
    }

    fn run_pairings(
        args: PairingsArgs,
        broker: &str,
        hall: &str,
        credentials: Option<PathBuf>,
        ca: Option<PathBuf>,
    ) -> anyhow::Result<bool> {
        let hall = hall.to_owned();
        chessclock_hall_proto::broker::check_topic_level("--hall", &hall)
            .map_err(anyhow::Error::msg)?;
        let (path, text) = match (&args.trf, &args.csv) {
            (Some(path), _) => (path, read(path, "the TRF file")?),
            (None, Some(path)) => (path, read(path, "the CSV file")?),
            (None, None) => anyhow::bail!("give --trf FILE or --csv FILE"),
        };
        let pairings = if args.trf.is_some() {
            chessclock_hall::pairings::parse_trf(&text, args.round)
        } else {
            chessclock_hall::pairings::parse_csv(&text, args.round)
        }
        .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
        let map = board_map(args.boards.as_deref())?;
        let options = chessclock_hall_proto::client::client_options(
            broker,
            format!("chessclock-hall-pairings-{}", std::process::id()),
            credentials.as_deref(),
            ca.as_deref(),
            5,
        )?;
        let sending = Sending {
            hall,
            arbiter: args.arbiter.clone(),
            control: args.control.clone(),
            settle: Duration::from_millis(500),
            wait: Duration::from_secs(args.wait_seconds.max(1)),
            dry_run: args.dry_run,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let sent = runtime.block_on(round::send_pairings(options, &sending, &pairings, &map))?;
        let mut all = true;
        for entry in &sent {
            let board = match &entry.id {
                Some(id) => format!("board {} ({id})", entry.board),
                None => format!("board {}", entry.board),
            };
            match &entry.outcome {
                Ok(text) if !entry.sends => println!("{board}: nothing to send: {text}"),
                Ok(text) if args.dry_run => println!("{board}: would send: {text}"),
                Ok(text) => println!("{board}: ok: {text}"),
                Err(error) => {
                    all = false;
                    println!("{board}: FAILED: {error}");
                }
            }
        }
        Ok(all)
    }
}
