//! `chessclock-hall`: the hall's hub. Follows every board of a hall on the
//! event's MQTT broker and serves the arbiters' page, a live event stream
//! and the round's PGN over HTTP (see `chessclockd::hall::hub`). Stops on
//! SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "chessclock-hall",
    version,
    about = "The hall's hub: every board of an event on one page, and the round's PGN"
)]
struct Args {
    /// The broker: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (with --ca).
    #[arg(long, default_value = "mqtt://127.0.0.1:1883")]
    broker: String,
    /// The hall's name (as in the daemons' `[hall] name`).
    #[arg(long)]
    hall: String,
    /// Where to serve the page.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// A TOML file with `username` and `password` for the broker.
    #[arg(long)]
    credentials: Option<PathBuf>,
    /// The PEM file of the CA of the broker's certificate (mqtts://).
    #[arg(long)]
    ca: Option<PathBuf>,
    /// More log output (-v, -vv).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(error) = chessclockd::logging::init(args.verbose) {
        eprintln!("chessclock-hall: cannot set up logging: {error}");
    }
    if let Err(error) = chessclockd::config::check_topic_level("--hall", &args.hall) {
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
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("chessclock-hall: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    use chessclockd::hall::{client_options, hub};
    let options = client_options(
        &args.broker,
        format!("chessclock-hall-{}-{}", args.hall, std::process::id()),
        args.credentials.as_deref(),
        args.ca.as_deref(),
        5,
    )?;
    let hub = hub::Hub::new(&args.hall);
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
