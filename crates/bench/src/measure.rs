//! The benchmark run: PTY floor, then for each board count a game with
//! paced presses on every board (latency, display timing, resources,
//! accounting at 0 ms delay), then the same presses with delivery delays
//! injected (accounting accuracy), then the state store (commit rate and
//! restart-to-restored time of a 200-move game), then issue 13's three
//! figures ([`super::edges`]). `sections` chooses which of these run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use chessclock_protocol::Button;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::analysis::{self, TruePress};
use super::edges::{self, EdgeOptions, FloodReport, KillReport, LateFlagReport, RigBase};
use super::placement::Placement;
use super::procfs::{self, ProcSample, Usage};
use super::rig::{self, Binaries, Rig, RigOptions};
use super::stats::Summary;
use chessclock_core::engine::SECOND;
use chessclock_host::clock::monotonic_now_us;

/// The parts of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// The PTY floor and the games of each board count.
    Scale,
    /// The state store.
    Store,
    /// Issue 13: late presses before a flag.
    LateFlag,
    /// Issue 13: display timing and latency under a `History()` flood.
    ReaderFlood,
    /// Issue 13: time charged across kill -9.
    KillCharge,
}

impl Section {
    pub const ALL: [Section; 5] = [
        Section::Scale,
        Section::Store,
        Section::LateFlag,
        Section::ReaderFlood,
        Section::KillCharge,
    ];
}

/// What to run.
#[derive(Clone, Debug, Serialize)]
pub struct BenchOptions {
    pub quick: bool,
    /// The parts to run (default: all).
    pub sections: Vec<Section>,
    /// How much of the edge measurements ([`super::edges`]); `issue13` in
    /// the report, the key since the first reports.
    #[serde(rename = "issue13")]
    pub edges: EdgeOptions,
    pub board_counts: Vec<usize>,
    /// Length of the steady game per board count, seconds.
    pub game_seconds: f64,
    /// Length of each injected-delay phase, seconds.
    pub delay_seconds: f64,
    pub delays_ms: Vec<u64>,
    /// Each board is pressed every this many ms (uniform), except three
    /// presses in ten, which come 1 to 2.5 s later.
    pub press_gap_ms: (u64, u64),
    pub floor_rounds: usize,
    pub store_moves: usize,
    pub realtime: bool,
    /// Run the harness and the daemon on separate CPUs
    /// ([`super::placement`]).
    pub pin: bool,
    pub seed: u64,
    /// Keep each rig's temporary folder (logs, state, config).
    pub keep: bool,
    /// Wait this long after the devices connect before the game starts, as
    /// an arbiter would (the clock sync converges meanwhile; see
    /// `accounting_samples` for the first seconds).
    pub settle_seconds: f64,
    /// The scale run's units boot at random instants within this many ms,
    /// once the daemon holds their ports open (0: all at once, their
    /// heartbeats in phase; see [`RigOptions::boot_spread_us`]). One
    /// heartbeat interval by default: 512 units' heartbeats in phase make
    /// the one harness thread that plays them all send 512 frames in about
    /// 15 ms every 250 ms, and a frame it reads meanwhile waits, which real
    /// units (each its own microcontroller) never do (BENCHMARKS.md, issue
    /// 18, fourth session).
    pub boot_spread_ms: u64,
}

impl BenchOptions {
    pub fn full() -> BenchOptions {
        BenchOptions {
            quick: false,
            sections: Section::ALL.to_vec(),
            edges: EdgeOptions::full(),
            board_counts: vec![1, 8, 32],
            game_seconds: 60.0,
            delay_seconds: 15.0,
            delays_ms: vec![0, 10, 50],
            press_gap_ms: (200, 600),
            floor_rounds: 3000,
            store_moves: 200,
            realtime: true,
            pin: true,
            seed: 1,
            keep: false,
            settle_seconds: 5.0,
            boot_spread_ms: 250,
        }
    }

    pub fn quick() -> BenchOptions {
        BenchOptions {
            quick: true,
            game_seconds: 4.0,
            delay_seconds: 1.5,
            settle_seconds: 2.0,
            floor_rounds: 500,
            store_moves: 200,
            edges: EdgeOptions::quick(),
            ..BenchOptions::full()
        }
    }
}

/// The timing thread's own figures for its timer wake-ups (µs late), or
/// for its display writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WakeLateness {
    pub wakeups: u64,
    /// `None` with no samples or beyond the daemon's 10 ms histogram (the
    /// daemon then leaves the field out of its line).
    pub p50_us: Option<u64>,
    pub p99_us: Option<u64>,
    pub max_us: u64,
}

impl WakeLateness {
    /// From the last "lateness of its deadline wake-ups" line of a daemon
    /// log (`key=value` fields, as the stderr logger writes them).
    pub fn from_log(log: &str) -> Option<WakeLateness> {
        WakeLateness::from_line(log, "lateness of its deadline wake-ups", "wakeups")
    }

    /// From the last line of `log` saying `message`, its count in field
    /// `count_key` (the timing thread's other lateness lines).
    pub fn from_line(log: &str, message: &str, count_key: &str) -> Option<WakeLateness> {
        let line = log.lines().rev().find(|l| l.contains(message))?;
        let field = |key: &str| -> Option<u64> {
            let at = line.find(&format!("{key}="))? + key.len() + 1;
            let digits: String = line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        };
        Some(WakeLateness {
            wakeups: field(count_key)?,
            p50_us: field("p50_us"),
            p99_us: field("p99_us"),
            max_us: field("max_us")?,
        })
    }
}

/// Figures for one board count.
#[derive(Clone, Debug, Serialize)]
pub struct ScaleReport {
    pub boards: usize,
    pub presses: usize,
    /// Press-to-display, ms.
    pub latency_ms: Summary,
    pub latency_missing: usize,
    /// Against the back-to-back PTY floor (`BenchReport::pty_floor_ms`).
    pub latency_ratio_p50: f64,
    pub latency_ratio_p99: f64,
    /// Bare PTY round trips at press spacing, taken during this steady game
    /// (see `floor::PacedFloor`).
    pub pty_floor_paced_ms: Summary,
    /// Against that paced floor: the like-for-like ratio.
    pub latency_ratio_paced_p50: f64,
    pub latency_ratio_paced_p99: f64,
    /// Lateness of whole-second display changes, ms.
    pub display_late_ms: Summary,
    /// How late the daemon's timing thread woke for its timer deadlines
    /// over the whole run, by its own count (its log line at a clean stop);
    /// `None` when the daemon did not stop cleanly or said nothing.
    pub timer_wake_late_us: Option<WakeLateness>,
    /// From a board's deadline to its display frame's write returning, by
    /// the daemon's own count: the daemon's share of `display_late_ms`.
    pub display_write_after_deadline_us: Option<WakeLateness>,
    /// From a press's arrival to its display frame's write returning, by the
    /// daemon's own count: the daemon's share of `latency_ms`.
    pub display_write_after_press_us: Option<WakeLateness>,
    /// Signed accounting error per injected delay (key: delay ms), ms.
    pub accounting_error_ms: BTreeMap<u64, Summary>,
    /// Absolute value of the same.
    pub accounting_abs_error_ms: BTreeMap<u64, Summary>,
    /// (seconds since the devices were connected, signed error ms, delay ms)
    /// of every press: the error over time (clock-sync convergence).
    pub accounting_samples: Vec<(f64, f64, u64)>,
    /// The harness's own CPU (simulated units, log writer), % of a core.
    pub harness_cpu_percent: f64,
    /// True presses the history does not contain.
    pub presses_unaccounted: usize,
    pub presses_ignored: usize,
    pub resources: Usage,
    /// Presses made during the steady game (the window of `resources`).
    pub steady_presses: usize,
    /// Storage bytes the daemon wrote per press in the steady game
    /// (`write_bytes` of `/proc/PID/io` over the window / its presses).
    pub write_bytes_per_press: f64,
    /// Raw samples for the plots (latency ms; error ms per delay).
    #[serde(skip)]
    pub latency_samples: Vec<f64>,
    #[serde(skip)]
    pub error_samples: BTreeMap<u64, Vec<f64>>,
    #[serde(skip)]
    pub display_samples: Vec<f64>,
    #[serde(skip)]
    pub floor_paced_samples: Vec<f64>,
}

/// The state store's figures.
#[derive(Clone, Debug, Serialize)]
pub struct StoreReport {
    pub moves: usize,
    /// Sequential D-Bus `Press()` calls (each replied after its commit).
    pub sequential_events_per_second: f64,
    /// 32 calls in flight at a time.
    pub pipelined_events_per_second: f64,
    /// From spawning the daemon after kill -9 until `History()` returns the
    /// whole game.
    pub restart_to_restored_ms: f64,
    /// ... and until every device is connected again.
    pub restart_to_devices_ms: f64,
    pub events_before: usize,
    pub events_after: usize,
    /// Events before the kill that differ or are missing after restart.
    pub mismatches: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub options: BenchOptions,
    pub host: String,
    pub pty_floor_ms: Summary,
    pub scale: Vec<ScaleReport>,
    pub store: Option<StoreReport>,
    /// Issue 13: late presses before a flag.
    pub late_flag: Option<LateFlagReport>,
    /// Issue 13: reader flood.
    pub reader_flood: Option<FloodReport>,
    /// Issue 13: time charged across kill -9.
    pub kill_charge: Option<KillReport>,
    pub targets: Vec<Target>,
    #[serde(skip)]
    pub floor_samples: Vec<f64>,
}

/// One target of issues 8 and 13 and whether the run met it.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub what: String,
    pub limit: String,
    pub measured: String,
    pub met: bool,
}

/// `cpus`: how many this process could use before the harness was pinned.
fn host_description(cpus: usize, placement: Option<&Placement>) -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{cpus} CPUs, load average {}; {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        placement.map_or_else(|| "not pinned".to_owned(), Placement::describe)
    )
}

/// Runs everything; `progress` gets one line per step.
pub fn run(
    binaries: &Binaries,
    options: &BenchOptions,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<BenchReport> {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let placement = if options.pin {
        Placement::split()
    } else {
        None
    };
    if let Some(placement) = &placement {
        placement
            .enter_harness()
            .context("cannot move the harness to its CPU")?;
    }
    let wants = |section| options.sections.contains(&section);
    let floor_samples = if wants(Section::Scale) {
        progress("PTY floor");
        super::floor::pty_round_trips(options.floor_rounds, placement)?
    } else {
        Vec::new()
    };
    let pty_floor_ms = Summary::of(&floor_samples);
    let mut scale = Vec::new();
    let board_counts = if wants(Section::Scale) {
        options.board_counts.clone()
    } else {
        Vec::new()
    };
    for &boards in &board_counts {
        progress(&format!("{boards} board(s)"));
        let mut report = run_scale(binaries, options, placement, boards)
            .with_context(|| format!("the run with {boards} board(s)"))?;
        report.latency_ratio_p50 = report.latency_ms.p50 / pty_floor_ms.p50;
        report.latency_ratio_p99 = report.latency_ms.p99 / pty_floor_ms.p99;
        scale.push(report);
    }
    let store = if wants(Section::Store) {
        progress("state store");
        Some(run_store(binaries, options, placement).context("the state store run")?)
    } else {
        None
    };
    let base = RigBase {
        realtime: options.realtime,
        seed: options.seed,
        placement,
        settle_seconds: options.settle_seconds,
        keep: options.keep,
    };
    let i13 = &options.edges;
    let late_flag = if wants(Section::LateFlag) {
        progress("issue 13: late presses before a flag");
        Some(edges::late_flag(binaries, &base, i13).context("the late-press run")?)
    } else {
        None
    };
    let reader_flood = if wants(Section::ReaderFlood) {
        progress("issue 13: reader flood");
        Some(edges::reader_flood(binaries, &base, i13).context("the reader-flood run")?)
    } else {
        None
    };
    let kill_charge = if wants(Section::KillCharge) {
        progress("issue 13: time charged across kill -9");
        Some(edges::kill_charge(binaries, &base, i13).context("the kill -9 run")?)
    } else {
        None
    };
    let mut report = BenchReport {
        options: options.clone(),
        host: host_description(cpus, placement.as_ref()),
        pty_floor_ms,
        scale,
        store,
        late_flag,
        reader_flood,
        kill_charge,
        targets: Vec::new(),
        floor_samples,
    };
    report.targets = targets(&report);
    Ok(report)
}

fn targets(report: &BenchReport) -> Vec<Target> {
    let mut out = Vec::new();
    if let Some(one) = report.scale.iter().find(|s| s.boards == 1) {
        out.push(Target {
            what:
                "press-to-display latency / PTY round trip at press spacing (1 board, p50 and p99)"
                    .into(),
            limit: "< 2".into(),
            measured: format!(
                "{:.2} (p50), {:.2} (p99)",
                one.latency_ratio_paced_p50, one.latency_ratio_paced_p99
            ),
            met: one.latency_ratio_paced_p50 < 2.0 && one.latency_ratio_paced_p99 < 2.0,
        });
        out.push(Target {
            what: "press-to-display latency / back-to-back PTY round trip (1 board, p50 and p99)"
                .into(),
            limit: "< 2".into(),
            measured: format!(
                "{:.2} (p50), {:.2} (p99)",
                one.latency_ratio_p50, one.latency_ratio_p99
            ),
            met: one.latency_ratio_p50 < 2.0 && one.latency_ratio_p99 < 2.0,
        });
    }
    for s in &report.scale {
        let worst = s
            .accounting_abs_error_ms
            .values()
            .map(|e| e.max)
            .fold(0.0, f64::max);
        out.push(Target {
            what: format!("accounting error at every delay ({} boards, max)", s.boards),
            limit: "< 1 ms".into(),
            measured: format!("{worst:.3} ms"),
            met: worst < 1.0 && s.presses_unaccounted == 0,
        });
        out.push(Target {
            what: format!("display second changes, p99 late ({} boards)", s.boards),
            limit: "< 2 ms".into(),
            measured: format!("{:.3} ms", s.display_late_ms.p99),
            met: s.display_late_ms.p99 < 2.0,
        });
        if s.boards >= 256 {
            out.push(Target {
                what: format!(
                    "issue 18: display second changes, p99 late ({} boards)",
                    s.boards
                ),
                limit: "< 1 ms".into(),
                measured: format!("{:.3} ms", s.display_late_ms.p99),
                met: s.display_late_ms.count > 0 && s.display_late_ms.p99 < 1.0,
            });
            out.push(Target {
                what: format!(
                    "issue 18: press-to-display latency, p99 and max ({} boards)",
                    s.boards
                ),
                limit: "< 2 ms, < 5 ms".into(),
                measured: format!("{:.3} ms, {:.3} ms", s.latency_ms.p99, s.latency_ms.max),
                met: s.latency_ms.count > 0 && s.latency_ms.p99 < 2.0 && s.latency_ms.max < 5.0,
            });
        }
    }
    if let Some(late) = &report.late_flag {
        out.push(Target {
            what: "issue 13: late presses before a flag (0-500 ms late), max abs. accounting error"
                .into(),
            limit: "< 0.2 ms, every press placed".into(),
            measured: format!(
                "{:.3} ms over {} presses (ordinary presses: {:.3} ms; {} missing, {} ignored, {} not placed)",
                late.abs_error_ms.max,
                late.abs_error_ms.count,
                late.ordinary_abs_error_ms.max,
                late.presses_missing,
                late.presses_ignored,
                late.presses_not_placed
            ),
            met: late.abs_error_ms.count > 0
                && late.abs_error_ms.max < 0.2
                && late.presses_missing + late.presses_ignored + late.presses_not_placed == 0,
        });
        out.push(Target {
            what: "issue 13: flags wrongly left standing after a late press".into(),
            limit: "0".into(),
            measured: format!(
                "{} ({} shown and withdrawn)",
                late.flags_standing, late.flags_withdrawn
            ),
            met: late.flags_standing == 0 && late.abs_error_ms.count > 0,
        });
    }
    if let Some(flood) = &report.reader_flood {
        for (what, figure) in [
            ("press-to-display latency", &flood.latency_ms),
            ("display second changes, late", &flood.display_late_ms),
        ] {
            out.push(Target {
                what: format!(
                    "issue 13: {what} with {} `History()` readers beside none (p50, p99)",
                    flood.readers
                ),
                limit: "equal within noise".into(),
                measured: format!(
                    "{:.3} / {:.3} ms beside {:.3} / {:.3} ms (ratio {:.2}, {:.2})",
                    figure.with.p50,
                    figure.with.p99,
                    figure.without.p50,
                    figure.without.p99,
                    figure.ratio_p50,
                    figure.ratio_p99
                ),
                met: figure.within_noise && flood.daemon_alive,
            });
        }
    }
    if let Some(kill) = &report.kill_charge {
        out.push(Target {
            what: "issue 13: time charged to the running side across kill -9, max abs. error".into(),
            limit: "< 1 ms".into(),
            measured: format!(
                "{:.3} ms over {} restarts ({} without a figure, {} epochs changed, {} restart instants out of bracket)",
                kill.abs_error_ms.max,
                kill.abs_error_ms.count,
                kill.trials_without_figure,
                kill.epochs_changed,
                kill.restarts_out_of_bracket
            ),
            met: kill.abs_error_ms.count > 0
                && kill.abs_error_ms.max < 1.0
                && kill.trials_without_figure + kill.epochs_changed + kill.restarts_out_of_bracket
                    == 0,
        });
    }
    if let Some(big) = report.scale.iter().find(|s| s.boards == 32) {
        out.push(Target {
            what: "32 boards: RSS".into(),
            limit: "< 32 MB".into(),
            measured: format!("{:.1} MB", big.resources.rss_mb_max),
            met: big.resources.rss_mb_max < 32.0,
        });
        out.push(Target {
            what: "32 boards: p99 press-to-display latency".into(),
            limit: "< 5 ms".into(),
            measured: format!("{:.3} ms", big.latency_ms.p99),
            met: big.latency_ms.p99 < 5.0,
        });
    }
    out
}

/// How long a per-press delivery delay holds the unit's frames.
const PRESS_DELAY_WINDOW: Duration = Duration::from_millis(15);

/// Presses every board's running side at random gaps for `seconds`.
/// Returns when the last press was made.
fn press_paced(
    rig: &Rig,
    next_left: &mut [bool],
    seconds: f64,
    gap_ms: (u64, u64),
    press_delay: Option<Duration>,
    rng: &mut impl Rng,
    mut on_tick: impl FnMut(),
) -> anyhow::Result<()> {
    let sim = rig.sim();
    let n = next_left.len();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut due: Vec<Instant> = (0..n)
        .map(|_| start + Duration::from_millis(rng.random_range(0..gap_ms.1.max(1))))
        .collect();
    let mut last_tick = Instant::now();
    loop {
        let (board, at) = due
            .iter()
            .enumerate()
            .min_by_key(|(_, at)| **at)
            .map(|(i, at)| (i, *at))
            .ok_or_else(|| anyhow!("no boards"))?;
        if at >= end {
            break;
        }
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        }
        let button = if next_left[board] {
            Button::Left
        } else {
            Button::Right
        };
        if let Some(delay) = press_delay {
            // Held: this press's first transmission only (the window ends
            // long before the next heartbeat or retransmission is due).
            sim.delay(&rig::buttons_unit(board), delay, PRESS_DELAY_WINDOW)?;
        }
        sim.press(Some(&rig::buttons_unit(board)), button)?;
        next_left[board] = !next_left[board];
        // Three presses in ten think longer, so whole-second changes of a
        // running clock are shown too (display timing).
        let gap = if rng.random_bool(0.3) {
            rng.random_range(1000..=2500)
        } else {
            rng.random_range(gap_ms.0..=gap_ms.1)
        };
        due[board] = at + Duration::from_millis(gap);
        if last_tick.elapsed() >= Duration::from_secs(1) {
            on_tick();
            last_tick = Instant::now();
        }
    }
    Ok(())
}

fn run_scale(
    binaries: &Binaries,
    options: &BenchOptions,
    placement: Option<Placement>,
    boards: usize,
) -> anyhow::Result<ScaleReport> {
    let mut rig = Rig::start(
        binaries,
        &RigOptions {
            boards,
            realtime: options.realtime,
            log_sent: true,
            seed: options.seed,
            daemon_cpus: placement.map(|p| p.daemon_cpu_list()),
            rttime_us: None,
            boot_spread_us: options.boot_spread_ms.saturating_mul(1000),
        },
    )?;
    let ready_us = monotonic_now_us();
    std::thread::sleep(Duration::from_secs_f64(options.settle_seconds));
    rig.new_games("300")?;
    let pid = rig.daemon_pid().ok_or_else(|| anyhow!("no daemon"))?;
    let me = std::process::id();
    let harness_first = procfs::sample(me);
    let mut rng = rand::rngs::StdRng::seed_from_u64(options.seed ^ boards as u64);
    let mut next_left = vec![true; boards];

    // Steady game: latency, display timing, resources, 0 ms accounting.
    let steady_from = monotonic_now_us();
    let paced_floor =
        super::floor::PacedFloor::start(options.press_gap_ms, options.seed, placement)?;
    let mut samples: Vec<ProcSample> = procfs::sample(pid).into_iter().collect();
    press_paced(
        &rig,
        &mut next_left,
        options.game_seconds,
        options.press_gap_ms,
        None,
        &mut rng,
        || {
            samples.extend(procfs::sample(pid));
        },
    )?;
    samples.extend(procfs::sample(pid));
    let steady_until = monotonic_now_us();
    let floor_paced_samples = paced_floor.finish()?;
    let harness_cpu_percent = match (harness_first, procfs::sample(me)) {
        (Some(a), Some(b)) => procfs::usage(&a, &b, &[a, b]).cpu_percent,
        _ => f64::NAN,
    };
    let resources = match (samples.first(), samples.last()) {
        (Some(first), Some(last)) => procfs::usage(first, last, &samples),
        _ => return Err(anyhow!("the daemon's /proc entry could not be read")),
    };

    // Injected delivery delays, each press's frame held (the 0 ms figure
    // comes from the steady game). A delay held on every frame for longer
    // than the clock sync's window would move its offset estimate: that is
    // a slow link, not a late press.
    let mut phases: Vec<(u64, i64, i64)> = vec![(0, steady_from, steady_until)];
    for &delay in options.delays_ms.iter().filter(|d| **d > 0) {
        let from = monotonic_now_us();
        press_paced(
            &rig,
            &mut next_left,
            options.delay_seconds,
            options.press_gap_ms,
            Some(Duration::from_millis(delay)),
            &mut rng,
            || {},
        )?;
        phases.push((delay, from, monotonic_now_us()));
        std::thread::sleep(Duration::from_millis(delay + 600));
    }
    std::thread::sleep(Duration::from_millis(300));

    // Join the simulator's log with the daemon's histories.
    let records = rig.sim_records();
    let presses = analysis::true_presses(&records);
    let written = analysis::presses_as_written(&records, &presses);
    let frames = analysis::shown_frames(&records);
    let mut latency = Vec::new();
    let mut latency_missing = 0;
    let mut display = Vec::new();
    let mut errors: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut accounting_samples = Vec::new();
    let mut unaccounted = 0;
    let mut ignored = 0;
    for i in 0..boards {
        let unit = rig::buttons_unit(i);
        let serial = rig::unit_serial(&unit);
        let board_presses: Vec<TruePress> =
            presses.iter().filter(|p| p.unit == unit).cloned().collect();
        let board_written: Vec<TruePress> =
            written.iter().filter(|p| p.unit == unit).cloned().collect();
        let display_unit = rig::display_unit(i);
        let board_frames: Vec<analysis::Shown> = frames
            .iter()
            .filter(|f| f.unit == display_unit)
            .cloned()
            .collect();
        let (history, epoch) = rig.history(&rig::board_id(i))?;
        let accounted = analysis::accounted_presses(&history);
        ignored += accounted.iter().filter(|a| a.ignored).count();
        for (delay, from, until) in &phases {
            let in_phase: Vec<TruePress> = board_presses
                .iter()
                .filter(|p| p.at_us >= *from && p.at_us <= *until)
                .cloned()
                .collect();
            let errs = analysis::accounting_errors(&in_phase, &serial, &accounted, epoch);
            for (press, error) in in_phase.iter().zip(&errs) {
                accounting_samples.push(((press.at_us - ready_us) as f64 / 1e6, *error, *delay));
            }
            unaccounted += in_phase.len() - errs.len();
            errors.entry(*delay).or_default().extend(errs);
            if *delay == 0 {
                let in_phase_written: Vec<TruePress> = board_written
                    .iter()
                    .filter(|p| p.at_us >= *from && p.at_us <= *until)
                    .cloned()
                    .collect();
                for l in analysis::press_to_display(&in_phase_written, &board_frames, SECOND) {
                    match l {
                        Some(l) => latency.push(l),
                        None => latency_missing += 1,
                    }
                }
            }
        }
        let runs = analysis::running_intervals(&history, epoch, 300 * SECOND);
        let steady_frames: Vec<analysis::Shown> = board_frames
            .iter()
            .filter(|f| f.at_us >= steady_from && f.at_us <= steady_until)
            .cloned()
            .collect();
        display.extend(analysis::display_lateness(&steady_frames, &runs));
    }
    let press_count = presses.len();
    let steady_presses = presses
        .iter()
        .filter(|p| p.at_us >= steady_from && p.at_us <= steady_until)
        .count();
    let write_bytes_per_press = resources.write_bytes as f64 / steady_presses.max(1) as f64;
    // A clean stop, so the timing thread reports how late its own timer
    // wake-ups were over the run: the daemon's share of the lateness.
    if let Some(daemon) = rig.daemon.take() {
        daemon.terminate(Duration::from_secs(10));
    }
    let logs = rig.daemon_logs();
    let timer_wake_late_us = WakeLateness::from_log(&logs);
    let display_write_after_deadline_us = WakeLateness::from_line(
        &logs,
        "display frames written after their deadline",
        "frames",
    );
    let display_write_after_press_us =
        WakeLateness::from_line(&logs, "display frames written after their press", "frames");
    if options.keep {
        eprintln!("chessclock-bench: kept {}", rig.dir.path().display());
        rig.keep_dir();
    }
    drop(rig);
    let latency_ms = Summary::of(&latency);
    let pty_floor_paced_ms = Summary::of(&floor_paced_samples);
    Ok(ScaleReport {
        boards,
        presses: press_count,
        latency_ms: latency_ms.clone(),
        latency_missing,
        latency_ratio_p50: f64::NAN,
        latency_ratio_p99: f64::NAN,
        latency_ratio_paced_p50: latency_ms.p50 / pty_floor_paced_ms.p50,
        latency_ratio_paced_p99: latency_ms.p99 / pty_floor_paced_ms.p99,
        pty_floor_paced_ms,
        display_late_ms: Summary::of(&display),
        timer_wake_late_us,
        display_write_after_deadline_us,
        display_write_after_press_us,
        accounting_error_ms: errors.iter().map(|(d, e)| (*d, Summary::of(e))).collect(),
        accounting_abs_error_ms: errors
            .iter()
            .map(|(d, e)| (*d, Summary::of_abs(e)))
            .collect(),
        accounting_samples,
        harness_cpu_percent,
        presses_unaccounted: unaccounted,
        presses_ignored: ignored,
        resources,
        steady_presses,
        write_bytes_per_press,
        latency_samples: latency,
        error_samples: errors,
        display_samples: display,
        floor_paced_samples,
    })
}

fn run_store(
    binaries: &Binaries,
    options: &BenchOptions,
    placement: Option<Placement>,
) -> anyhow::Result<StoreReport> {
    let mut rig = Rig::start(
        binaries,
        &RigOptions {
            boards: 1,
            realtime: options.realtime,
            log_sent: false,
            seed: options.seed,
            daemon_cpus: placement.map(|p| p.daemon_cpu_list()),
            rttime_us: None,
            boot_spread_us: 0,
        },
    )?;
    let board = rig::board_id(0);
    rig.new_games("5400")?;
    let presses = options.store_moves * 2;
    let started = Instant::now();
    for k in 0..presses {
        let side = if k % 2 == 0 { "white" } else { "black" };
        rig.board_call(&board, async move |b| b.press(side).await)?;
    }
    let sequential = presses as f64 / started.elapsed().as_secs_f64();

    // That 200-move game: kill -9, restart, time until it is back.
    let (before, _) = rig.history(&board)?;
    if let Some(daemon) = rig.daemon.take() {
        daemon.kill9();
    }
    rig.spawn_daemon()?;
    let spawned = Instant::now();
    let deadline = spawned + Duration::from_secs(30);
    let (after, restored_ms) = loop {
        if let Ok((after, _)) = rig.history(&board) {
            let presses_after = after.iter().filter(|e| e["do"] == "press").count();
            if presses_after >= presses {
                break (after, spawned.elapsed().as_secs_f64() * 1e3);
            }
        }
        if Instant::now() > deadline {
            return Err(anyhow!(
                "the game was not restored within 30 s:\n{}",
                rig::tail(&rig.daemon_logs(), 20)
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    rig.wait_ready(Duration::from_secs(30))?;
    let devices_ms = spawned.elapsed().as_secs_f64() * 1e3;
    rig.new_games("5400")?;
    // On a fresh game, pipelined: 32 calls in flight. Order is not kept, so some presses
    // are by the waiting side: they are committed (and ignored) all the same.
    let pipelined = {
        let conn_address = rig.bus.address.clone();
        let board = board.clone();
        rig.rt.block_on(async move {
            let proxy = rig::own_board_proxy(&conn_address, &board).await?;
            let started = Instant::now();
            let mut sent = 0;
            while sent < presses {
                let batch = (presses - sent).min(32);
                let calls = (0..batch).map(|k| {
                    let proxy = proxy.clone();
                    async move {
                        let side = if k % 2 == 0 { "white" } else { "black" };
                        // A waiting-side press is refused (and recorded).
                        let _ = proxy.press(side).await;
                    }
                });
                let mut set = tokio::task::JoinSet::new();
                for call in calls {
                    set.spawn(call);
                }
                while set.join_next().await.is_some() {}
                sent += batch;
            }
            anyhow::Ok(presses as f64 / started.elapsed().as_secs_f64())
        })?
    };

    Ok(StoreReport {
        moves: options.store_moves,
        sequential_events_per_second: sequential,
        pipelined_events_per_second: pipelined,
        restart_to_restored_ms: restored_ms,
        restart_to_devices_ms: devices_ms,
        events_before: before.len(),
        events_after: after.len(),
        mismatches: history_mismatches(&before, &after),
    })
}

/// Events of `before` that are not found, equal in kind, side, instant and
/// origin, at the same place in `after` (restart markers skipped).
pub fn history_mismatches(before: &[serde_json::Value], after: &[serde_json::Value]) -> usize {
    let key = |e: &serde_json::Value| {
        (
            e["do"].clone(),
            e["side"].clone(),
            e["t_us"].clone(),
            e["device"]["serial"].clone(),
            e["device"]["event"].clone(),
        )
    };
    let after: Vec<_> = after
        .iter()
        .filter(|e| e["do"] != "restart")
        .map(key)
        .collect();
    before
        .iter()
        .filter(|e| e["do"] != "restart")
        .map(key)
        .enumerate()
        .filter(|(i, k)| after.get(*i) != Some(k))
        .count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_timing_threads_wake_lateness_is_read_from_its_log_line() {
        let log = "2026-12-02T07:41:22Z  INFO chessclockd::runtime::timing: timing thread done; \
                   lateness of its deadline wake-ups wakeups=5120 p50_us=61 p99_us=1480 max_us=9031\n";
        assert_eq!(
            super::WakeLateness::from_log(log),
            Some(super::WakeLateness {
                wakeups: 5120,
                p50_us: Some(61),
                p99_us: Some(1480),
                max_us: 9031
            })
        );
        assert_eq!(super::WakeLateness::from_log("nothing\n"), None);
        let log = "INFO chessclockd::runtime::timing: display frames written after their press \
                   frames=812 p50_us=90 p99_us=420 max_us=2210\n\
                   INFO chessclockd::runtime::timing: display frames written after their deadline \
                   frames=3000 p50_us=70 p99_us=350 max_us=5000\n";
        assert_eq!(
            super::WakeLateness::from_line(log, "written after their press", "frames"),
            Some(super::WakeLateness {
                wakeups: 812,
                p50_us: Some(90),
                p99_us: Some(420),
                max_us: 2210
            })
        );
        assert_eq!(
            super::WakeLateness::from_line(log, "written after their deadline", "frames")
                .map(|w| w.p99_us),
            Some(Some(350))
        );
        // a p99 past the histogram: the daemon leaves the field out
        let log =
            "INFO display frames written after their deadline frames=40 p50_us=120 max_us=12500\n";
        let beyond = super::WakeLateness::from_line(log, "after their deadline", "frames").unwrap();
        assert_eq!(
            (beyond.p50_us, beyond.p99_us, beyond.max_us),
            (Some(120), None, 12_500)
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn a_restored_history_with_more_events_has_no_mismatch() {
        let before = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "press", "side": "white", "t_us": 5}),
        ];
        let after = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "press", "side": "white", "t_us": 5}),
            json!({"do": "restart", "t_us": 9}),
            json!({"do": "press", "side": "black", "t_us": 12}),
        ];
        assert_eq!(history_mismatches(&before, &after), 0);
        let changed = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "press", "side": "white", "t_us": 6}),
        ];
        assert_eq!(history_mismatches(&before, &changed), 1);
        assert_eq!(history_mismatches(&before, &after[..1]), 1);
    }
}
