//! `chessclock-sim`: simulated chess clock hardware on PTYs.
//!
//! `chessclock-sim interactive` draws the units in the terminal and maps keys
//! to buttons; `chessclock-sim run` runs headless (optionally a script) until
//! the script ends or SIGINT/SIGTERM. See `chessclock_sim_units` for the
//! behaviour and its `script` module for the script format.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use chessclock_sim_units::{
    self as sim, LogTarget, Script, SimOptions, SimUnits, UnitKind, UnitSpec,
};
use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "chessclock-sim",
    version,
    about = "Simulated chess clock button and display units on PTYs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the units headless: until the script ends (with --script) or
    /// until SIGINT/SIGTERM.
    Run {
        #[command(flatten)]
        units: UnitArgs,
        /// Keep running after the script ended.
        #[arg(long)]
        stay: bool,
    },
    /// Draw the units in the terminal; keys press the buttons
    /// (a/z/left shift = left, l/m/right shift = right, space = arbiter,
    /// u = unplug/replug, q = quit).
    Interactive {
        #[command(flatten)]
        units: UnitArgs,
    },
    /// Simulate a DGT electronic board on a PTY: replay a capture or play a
    /// PGN with realistic hand movements (prints the PTY path, then serves).
    Dgt {
        #[command(flatten)]
        args: chessclock_sim::dgt::DgtSimArgs,
    },
}

#[derive(Args, Debug)]
struct UnitArgs {
    /// A unit to simulate: `NAME=KIND[,key=value...]`, KIND one of
    /// buttons, display, combined; keys serial, vendor, model, firmware,
    /// displays (1|2), digits, tenths, buzzer, arbiter (yes|no), text-chars,
    /// offset-us, drift-ppm, boot-id, link. Repeatable. Default: `buttons=buttons`
    /// and `display=display`.
    #[arg(long = "unit", value_name = "SPEC")]
    units: Vec<UnitSpec>,
    /// Simulate one combined unit named `clock` instead of the defaults.
    #[arg(long, conflicts_with = "units")]
    combined: bool,
    /// A stable symlink to a unit's PTY: `NAME=PATH` (re-pointed on replug,
    /// removed on unplug and exit). Repeatable.
    #[arg(long = "link", value_name = "NAME=PATH")]
    links: Vec<String>,
    /// JSON Lines log of frames, presses, plugs (`-` = stdout).
    #[arg(long, value_name = "FILE")]
    log: Option<LogTarget>,
    /// Also log every frame sent to the host.
    #[arg(long, requires = "log")]
    log_sent: bool,
    /// A script of timed actions (`.toml`, else JSON Lines).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Seed for the fault injector (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
}

impl UnitArgs {
    fn options(&self) -> anyhow::Result<SimOptions> {
        let mut units = if self.combined {
            vec![UnitSpec::new("clock", UnitKind::Combined)]
        } else if self.units.is_empty() {
            SimOptions::demo().units
        } else {
            self.units.clone()
        };
        for link in &self.links {
            let Some((name, path)) = link.split_once('=') else {
                bail!("--link {link}: expected NAME=PATH");
            };
            let Some(unit) = units.iter_mut().find(|u| u.name == name) else {
                let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
                bail!(
                    "--link {link}: no unit named `{name}` (units: {})",
                    names.join(", ")
                );
            };
            unit.link = Some(PathBuf::from(path));
        }
        Ok(SimOptions {
            units,
            log: self.log.clone(),
            log_sent: self.log_sent,
            seed: self.seed,
        })
    }

    fn script(&self) -> anyhow::Result<Option<Script>> {
        match &self.script {
            Some(path) => Ok(Some(Script::load(path)?)),
            None => Ok(None),
        }
    }
}

fn announce(units: &SimUnits) {
    for snapshot in units.snapshots() {
        let pty = snapshot
            .pty
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match snapshot.link {
            Some(link) => eprintln!(
                "chessclock-sim: {} ({}) on {} -> {pty}",
                snapshot.name,
                snapshot.kind.name(),
                link.display()
            ),
            None => eprintln!(
                "chessclock-sim: {} ({}) on {pty}",
                snapshot.name,
                snapshot.kind.name()
            ),
        }
    }
}

fn run(units_args: &UnitArgs, stay: bool) -> anyhow::Result<ExitCode> {
    let options = units_args.options()?;
    let script = units_args.script()?;
    let units = sim::spawn_units(&options).context("starting the simulated units")?;
    announce(&units);
    let script_run = match script {
        Some(script) => Some(units.spawn_script(script)?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let code = runtime.block_on(async move {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let script_done = async {
            match script_run {
                Some(run) => match tokio::task::spawn_blocking(move || run.wait()).await {
                    Ok(Ok(report)) => Some(report),
                    _ => None,
                },
                None => std::future::pending().await,
            }
        };
        let code = tokio::select! {
            _ = tokio::signal::ctrl_c() => ExitCode::SUCCESS,
            _ = terminate.recv() => ExitCode::SUCCESS,
            report = script_done => {
                let code = match &report {
                    Some(report) if report.is_ok() => ExitCode::SUCCESS,
                    Some(report) => {
                        eprintln!("chessclock-sim: script failed: {}", report.error.as_deref().unwrap_or(""));
                        ExitCode::FAILURE
                    }
                    None => ExitCode::FAILURE,
                };
                if stay {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = terminate.recv() => {}
                    }
                }
                code
            }
        };
        anyhow::Ok(code)
    })?;
    units.shutdown();
    Ok(code)
}

/// How long the view has to end after a stop signal before the program
/// leaves without it. The view looks at its stop flag every 40 ms and ends
/// at once when its terminal goes away, but a write to a terminal that is
/// there and not read blocks until it is read.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// `chessclock-sim interactive`: the view until `q`, until the terminal goes
/// away, or until SIGTERM, SIGINT or SIGHUP (terminal restored, symlinks
/// removed, status 0 for all of them).
fn interactive(units_args: &UnitArgs) -> anyhow::Result<ExitCode> {
    use tokio::signal::unix::{signal, SignalKind};
    let options = units_args.options()?;
    let script = units_args.script()?;
    // The signals are taken before anything starts, so none finds the
    // default action (death, symlinks left behind) on the way.
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut term, mut int, mut hup) = {
        let _context = signals.enter();
        (
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
            signal(SignalKind::hangup())?,
        )
    };
    let simulated = sim::spawn_units(&options).context("starting the simulated units")?;
    let stop = Arc::new(AtomicBool::new(false));
    let (ended, view_ended) = std::sync::mpsc::channel::<()>();
    let links: Vec<PathBuf> = options
        .units
        .iter()
        .filter_map(|u| u.link.clone())
        .collect();
    {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            signals.block_on(async {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                    _ = hup.recv() => {}
                }
            });
            stop.store(true, Ordering::Relaxed);
            if view_ended.recv_timeout(STOP_GRACE) == Err(RecvTimeoutError::Timeout) {
                // Stuck writing to a terminal nobody reads: leave without
                // the view (raw mode off, the symlinks removed as on every
                // exit; the alternate screen needs a write, so it stays).
                sim::interactive::leave_raw_mode();
                for link in &links {
                    sim::pty::remove_link(link);
                }
                std::process::exit(0);
            }
        });
    }
    let result =
        sim::interactive::run_interactive_full(simulated, script, &|| stop.load(Ordering::Relaxed));
    drop(ended);
    result?;
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run { units, stay } => run(units, *stay),
        Command::Dgt { args } => chessclock_sim::dgt::run_sim_cli(args, &mut std::io::stdout())
            .map(|_| ExitCode::SUCCESS)
            .context("simulating the DGT board"),
        Command::Interactive { units } => interactive(units),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("chessclock-sim: {error:#}");
            ExitCode::FAILURE
        }
    }
}
