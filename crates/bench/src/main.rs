//! `chessclock-bench`: benchmarks and fault soak of the real daemon with
//! simulated devices (see `chessclockd::bench` and BENCHMARKS.md).
//!
//! ```text
//! chessclock-bench run [--quick] [--only scale,store,late-flag,reader-flood,kill-charge]
//!                       [--json FILE] [--plots DIR] [--markdown FILE]
//! chessclock-bench soak [--long | --seconds N | --unplugs N --kills N] [--ber X] [--json FILE]
//! chessclock-bench hall [--daemons 16] [--boards-per-daemon 16] [--json FILE]
//! chessclock-bench scale [--boards 1000] [--hosts 250] [--peak-rate 10000] [--lichess] [--json FILE]
//! chessclock-bench event [--rounds 20] [--boards 32] [--state-dir DIR] [--json FILE]
//! ```
//! Exit status 0 when the run completed (run) or the soak was clean (soak).

use std::path::PathBuf;
use std::process::ExitCode;

use chessclock_bench::{measure, report, rig::Binaries, soak};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "chessclock-bench",
    version,
    about = "Benchmarks and fault soak of chessclockd with simulated devices"
)]
struct Cli {
    /// The daemon binary (default: beside this one).
    #[arg(long, global = true)]
    daemon: Option<PathBuf>,
    /// The chessclockctl binary (default: beside this one).
    #[arg(long, global = true)]
    ctl: Option<PathBuf>,
    #[command(subcommand)]
    command: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Latency, accuracy, display timing, resources, scale, state store.
    Run {
        /// Short durations (CI, well under a minute).
        #[arg(long)]
        quick: bool,
        /// Board counts to run (default 1,8,32).
        #[arg(long, value_delimiter = ',')]
        boards: Option<Vec<usize>>,
        /// Seconds of steady game per board count.
        #[arg(long)]
        game_seconds: Option<f64>,
        /// Do not ask for SCHED_FIFO/mlockall (the shipped config does).
        #[arg(long)]
        no_realtime: bool,
        /// Do not run the harness (simulated units, floor) and the daemon
        /// on separate CPUs.
        #[arg(long)]
        no_pin: bool,
        #[arg(long)]
        seed: Option<u64>,
        /// Seconds between the devices connecting and the game start.
        #[arg(long)]
        settle_seconds: Option<f64>,
        /// Scale run: each simulated unit boots (says its first HELLO) at a
        /// random instant within this many ms, 1 s after the start, when
        /// the daemon holds its port open (default 250, one heartbeat
        /// interval: units that came up at different instants, as in a
        /// hall). 0: all at once, as units already attached when the
        /// daemon starts; their heartbeats then stay in phase for the
        /// whole run and the one harness thread that plays all the units
        /// sends them in bursts (BENCHMARKS.md). At most 1000.
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000))]
        boot_spread_ms: Option<u64>,
        /// Keep each rig's temporary folder (daemon logs, simulator log).
        #[arg(long)]
        keep: bool,
        /// Write the JSON report here (default: stdout).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write latency.svg, accuracy.svg, display.svg, scale.svg here.
        #[arg(long)]
        plots: Option<PathBuf>,
        /// Write the Markdown tables here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Run only these parts (default: all).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<measure::Section>>,
        /// Issue 13, late presses before a flag: games played.
        #[arg(long)]
        late_trials: Option<usize>,
        /// Issue 13, reader flood: concurrent `History()` readers.
        #[arg(long)]
        flood_readers: Option<usize>,
        /// Issue 13, reader flood: events in the game.
        #[arg(long)]
        flood_events: Option<usize>,
        /// Issue 13, reader flood: seconds of each phase.
        #[arg(long)]
        flood_phase_seconds: Option<f64>,
        /// Issue 13, reader flood: pairs of phases (without, with readers).
        #[arg(long)]
        flood_rounds: Option<usize>,
        /// Issue 13, reader flood: no RLIMIT_RTTIME on the daemon.
        #[arg(long)]
        no_rttime: bool,
        /// Issue 13: kill -9 and restarts.
        #[arg(long)]
        kill_repetitions: Option<usize>,
    },
    /// Unplugs, kill -9, line noise, malformed D-Bus calls; counts losses.
    Soak {
        /// The long soak (10 minutes, 2 boards).
        #[arg(long)]
        long: bool,
        #[arg(long)]
        seconds: Option<f64>,
        #[arg(long)]
        boards: Option<usize>,
        /// Bit-error rate of the line-noise windows.
        #[arg(long)]
        ber: Option<f64>,
        #[arg(long)]
        seed: Option<u64>,
        /// The long form: run until this many unplug/replug cycles...
        #[arg(long)]
        unplugs: Option<usize>,
        /// ...and this many kill -9 restarts have happened.
        #[arg(long)]
        kills: Option<usize>,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// A simulated event through the pure board core into the real store
    /// (compressed time): memory and database size per round.
    Event {
        #[arg(long, default_value_t = 20)]
        rounds: usize,
        #[arg(long, default_value_t = 32)]
        boards: usize,
        #[arg(long, default_value_t = 72)]
        seed: u64,
        /// Keep the state database here (a temporary directory otherwise).
        #[arg(long)]
        state_dir: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// The hall: many daemons on one broker and one hub (issue 16).
    Hall(chessclock_bench::hall::HallArgs),
    /// The hall at scale: one hub, 1,000 boards from a load generator and
    /// a few real daemons (issue 30); with --lichess, the hub's push to a
    /// lichess stand-in (issue 32).
    Scale(chessclock_bench::scale::ScaleArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("chessclock-bench: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn write_or_print(path: Option<&PathBuf>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display())),
        None => {
            println!("{text}");
            Ok(())
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let mut binaries = Binaries::beside_current_exe()?;
    if let Some(daemon) = cli.daemon {
        binaries.daemon = daemon;
    }
    if let Some(ctl) = cli.ctl {
        binaries.ctl = ctl;
    }
    let mut progress = |line: &str| eprintln!("chessclock-bench: {line}");
    match cli.command {
        Mode::Run {
            quick,
            boards,
            game_seconds,
            no_realtime,
            no_pin,
            seed,
            keep,
            settle_seconds,
            boot_spread_ms,
            json,
            plots,
            markdown,
            only,
            late_trials,
            flood_readers,
            flood_events,
            flood_phase_seconds,
            flood_rounds,
            no_rttime,
            kill_repetitions,
        } => {
            let mut options = if quick {
                measure::BenchOptions::quick()
            } else {
                measure::BenchOptions::full()
            };
            if let Some(boards) = boards {
                options.board_counts = boards;
            }
            if let Some(seconds) = game_seconds {
                options.game_seconds = seconds;
            }
            if no_realtime {
                options.realtime = false;
            }
            if no_pin {
                options.pin = false;
            }
            if let Some(seed) = seed {
                options.seed = seed;
            }
            options.keep = keep;
            if let Some(spread) = boot_spread_ms {
                options.boot_spread_ms = spread;
            }
            if let Some(only) = only {
                options.sections = only;
            }
            let i13 = &mut options.edges;
            if let Some(n) = late_trials {
                i13.late_trials = n;
            }
            if let Some(n) = flood_readers {
                i13.flood_readers = n;
            }
            if let Some(n) = flood_events {
                i13.flood_events = n;
            }
            if let Some(s) = flood_phase_seconds {
                i13.flood_phase_seconds = s;
            }
            if let Some(n) = flood_rounds {
                i13.flood_rounds = n;
            }
            if no_rttime {
                i13.flood_rttime_us = None;
            }
            if let Some(n) = kill_repetitions {
                i13.kill_repetitions = n;
            }
            if let Some(settle) = settle_seconds {
                options.settle_seconds = settle;
            }
            let result = measure::run(&binaries, &options, &mut progress)?;
            if let Some(dir) = &plots {
                report::write_plots(&result, dir)?;
            }
            let tables = report::markdown(&result);
            match &markdown {
                Some(path) => std::fs::write(path, &tables)?,
                None => eprintln!("{tables}"),
            }
            write_or_print(json.as_ref(), &serde_json::to_string_pretty(&result)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Mode::Soak {
            long,
            seconds,
            boards,
            ber,
            seed,
            unplugs,
            kills,
            json,
        } => {
            let mut options = if long {
                soak::SoakOptions::long()
            } else {
                soak::SoakOptions::short()
            };
            if let Some(seconds) = seconds {
                options.seconds = seconds;
            }
            if let Some(boards) = boards {
                options.boards = boards.max(1);
            }
            if let Some(ber) = ber {
                options.ber = ber;
            }
            if let Some(seed) = seed {
                options.seed = seed;
            }
            (options.unplugs, options.kills) = (unplugs, kills);
            let result = soak::run(&binaries, &options, &mut progress)?;
            eprintln!("{}", report::soak_markdown(&result));
            eprintln!("{}", result.charge_markdown());
            write_or_print(json.as_ref(), &serde_json::to_string_pretty(&result)?)?;
            Ok(if result.clean() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Mode::Hall(args) => {
            chessclock_bench::hall::main(&binaries, args, &mut progress).map(|()| ExitCode::SUCCESS)
        }
        Mode::Scale(args) => chessclock_bench::scale::main(&binaries, args, &mut progress)
            .map(|()| ExitCode::SUCCESS),
        Mode::Event {
            rounds,
            boards,
            seed,
            state_dir,
            json,
        } => {
            let options = chessclock_bench::event::EventOptions {
                rounds,
                boards: boards.max(1),
                seed,
                state_dir,
            };
            let result = chessclock_bench::event::run(&options, &mut progress)?;
            write_or_print(json.as_ref(), &serde_json::to_string_pretty(&result)?)?;
            Ok(if result.memory_flat {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}
