//! `chessclock-hall`: the hall's hub. Follows every board of a hall on the
//! event's MQTT broker and serves the arbiters' page, a live event stream
//! and the round's PGN over HTTP (see `chessclockd::hall::hub`). Stops on
//! SIGINT or SIGTERM. `chessclock-hall passwd FILE USER` adds an arbiter to
//! a password file (the password read from standard input).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "chessclock-hall",
    version,
    about = "The hall's hub: every board of an event on one page, and the round's PGN",
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    /// The broker: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (with --ca).
    #[arg(long, default_value = "mqtt://127.0.0.1:1883")]
    broker: String,
    /// The hall's name (as in the daemons' `[hall] name`).
    #[arg(long, required = true)]
    hall: Option<String>,
    /// Where to serve the page.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// A TOML file with `username` and `password` for the broker.
    #[arg(long)]
    credentials: Option<PathBuf>,
    /// The PEM file of the CA of the broker's certificate (mqtts://).
    #[arg(long)]
    ca: Option<PathBuf>,
    /// The arbiters' password file (`chessclock-hall passwd FILE USER`);
    /// without it the page is read-only.
    #[arg(long, value_name = "FILE")]
    passwords: Option<PathBuf>,
    /// How long an arbiter stays logged in, in hours.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..=168))]
    session_hours: u64,
    /// More log output (-v, -vv).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
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
    match chessclockd::hall::hub::auth::set_password(file, user, password) {
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
    if let Err(error) = chessclockd::logging::init(args.verbose) {
        eprintln!("chessclock-hall: cannot set up logging: {error}");
    }
    let hall = args.hall.clone().unwrap_or_default();
    if let Err(error) = chessclockd::config::check_topic_level("--hall", &hall) {
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
    use chessclockd::hall::{client_options, hub};
    let options = client_options(
        &args.broker,
        format!("chessclock-hall-{hall}-{}", std::process::id()),
        args.credentials.as_deref(),
        args.ca.as_deref(),
        5,
    )?;
    let access = match &args.passwords {
        Some(file) => {
            let passwords = hub::auth::Passwords::load(file).map_err(anyhow::Error::msg)?;
            if passwords.is_empty() {
                anyhow::bail!(
                    "the password file {} has no arbiter: add one with `chessclock-hall passwd {} USER`",
                    file.display(),
                    file.display()
                );
            }
            tracing::info!(arbiters = passwords.len(), "hub: arbiters may log in");
            Some(hub::page::Access::new(
                passwords,
                std::time::Duration::from_secs(args.session_hours * 3600),
            ))
        }
        None => None,
    };
    let hub = hub::Hub::with_access(&hall, access);
    let follower = tokio::spawn(hub::follow(hub.clone(), options));
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let shutdown = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    };
    let served = hub::serve(hub, args.listen, shutdown).await;
    follower.abort();
    served
}
