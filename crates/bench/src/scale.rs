//! The hall at scale (issue 30 item 7): one hub under a hall of 1,000
//! boards, on this machine. It starts a mosquitto of its own (127.0.0.1, a
//! free port), `chessclock-hall` (reading live data with a screen token,
//! as a hall screen does), a few real `chessclockd`s with simulated units
//! (as [`super::hall`] does), and the load generator
//! ([`super::loadgen::Generator`]): fake hosts, each with its `online`
//! topic, publishing their boards' states (the shape of the real daemons'
//! state taken from one of them, 2-4 KB) and a `pressed` event per move.
//! Once every board is on the page it runs three phases: a steady rate, a
//! peak (an Olympiad's ~10,000 messages/s), the steady rate again, pressing
//! the real boards' simulated buttons at a steady rate all along, while
//! hall screens read `/events`.
//!
//! What it measures (never asserts):
//! * press to page on the real boards: from a press's true instant (the
//!   simulated unit's) to the hub's `/events` stream carrying that board's
//!   state with the press counted, by phase and over the run;
//! * the hub's CPU (user + system time from `/proc/PID/stat`, as a fraction
//!   of one core) by phase and over the run, its RSS (sampled every
//!   second) and its peak RSS (`VmHWM`); the broker's and the bench's own
//!   CPU (the generator shares the machine);
//! * the rate the generator reached, what its clients refused, the states'
//!   sizes, and how often the hub ended a screen's stream (a reader that
//!   fell behind is dropped; the page reconnects);
//! * with the lichess push on ([`ScaleOptions::lichess`], issue 32 item 6):
//!   the hub pushes the round (one lichess round per hundred boards) to a
//!   stand-in of lichess on 127.0.0.1 ([`super::lichess`]), and the report
//!   gives the requests per round, the intervals between them, games and
//!   bytes per request and the push lag of the fake boards' states, by
//!   phase and over the run.
//!
//! Everything it starts is stopped by its own pid when the run ends.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc as std_mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use serde_json::{json, Value};

use super::hall::{self, Controller, Mosquitto, Process};
use super::lichess::{self, PushReport, StandIn};
use super::loadgen::{self, Generator, StreamCounts};
use super::procfs::{self, ProcSample, Usage};
use super::rig::Binaries;
use super::stats::Summary;
use chessclock_host::clock::monotonic_now_us;
use chessclock_protocol::Button;
use chessclock_sim_units::{SimOptions, SimUnits, UnitKind, UnitSpec};

/// The targets.
pub const TARGET_P99_MS: f64 = 250.0;
pub const TARGET_RSS_MB: f64 = 128.0;
pub const TARGET_CORES: f64 = 0.5;

/// How to run the scale bench.
#[derive(Clone, Debug)]
pub struct ScaleOptions {
    /// Fake boards (the load generator's).
    pub boards: usize,
    /// Fake hosts they are spread over (each its own connection).
    pub hosts: usize,
    /// Real daemons, and the boards of each (their presses are measured).
    pub daemons: usize,
    pub boards_per_daemon: usize,
    /// Messages per second (a state and its event are two) of the steady
    /// phases and of the peak.
    pub steady_rate: f64,
    pub peak_rate: f64,
    pub steady_seconds: f64,
    pub peak_seconds: f64,
    /// Presses per second over the real boards.
    pub presses_per_second: f64,
    /// Hall screens reading `/events` besides the one that measures.
    pub screens: usize,
    /// The hub binary (default: beside the daemon).
    pub hub: Option<PathBuf>,
    pub keep: bool,
    /// The hub pushes the round to a lichess stand-in (one lichess round
    /// per hundred boards), at most once per round every
    /// `push_interval_seconds`, behind `delay_seconds` (the hub's public
    /// feed's delay, given to the hub whether or not it pushes).
    pub lichess: bool,
    pub push_interval_seconds: u64,
    pub delay_seconds: u32,
}

impl Default for ScaleOptions {
    fn default() -> ScaleOptions {
        ScaleOptions {
            boards: 1000,
            hosts: 250,
            daemons: 2,
            boards_per_daemon: 2,
            steady_rate: 1000.0,
            peak_rate: 10_000.0,
            steady_seconds: 20.0,
            peak_seconds: 20.0,
            presses_per_second: 5.0,
            screens: 3,
            hub: None,
            keep: false,
            lichess: false,
            push_interval_seconds: 2,
            delay_seconds: 0,
        }
    }
}

/// One phase's figures.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseReport {
    pub name: String,
    pub seconds: f64,
    /// Messages per second asked for, and handed to the broker.
    pub rate_asked: f64,
    pub rate_sent: f64,
    /// Publishes the generator's clients refused (queue full).
    pub refused: u64,
    pub press_to_page_ms: Summary,
    pub presses: usize,
    pub presses_missing: usize,
    pub hub: Usage,
    /// The hub's CPU, fraction of one core.
    pub hub_cores: f64,
    pub broker: Usage,
    /// The bench itself (generator, simulated units, readers), % of a core.
    pub bench_cpu_percent: f64,
    /// Streams the hub ended (a screen fell behind), over all readers.
    pub page_reconnects: u64,
    /// `/events` messages the measuring reader got per second.
    pub page_messages_per_second: f64,
}

/// The figures of one run (ms unless named otherwise).
#[derive(Clone, Debug, Serialize)]
pub struct ScaleReport {
    pub boards: usize,
    pub hosts: usize,
    pub real_boards: usize,
    pub daemons: usize,
    pub screens: usize,
    pub load_average_start: [f64; 3],
    pub load_average_end: [f64; 3],
    /// The real daemon's state payload the fake ones are made from (bytes).
    pub real_state_bytes: usize,
    /// The fake states published: count and bytes (mean, min, max).
    pub states: u64,
    pub state_bytes_mean: f64,
    pub state_bytes_min: u64,
    pub state_bytes_max: u64,
    /// Seconds from the fake boards' first states until all were on the page.
    pub all_boards_on_page_s: f64,
    pub phases: Vec<PhaseReport>,
    /// Over the three phases.
    pub press_to_page_ms: Summary,
    pub presses: usize,
    pub presses_missing: usize,
    /// The hub's CPU over the three phases, fraction of one core, and in
    /// the busiest phase.
    pub hub_cores: f64,
    pub hub_cores_max_phase: f64,
    /// The hub's largest RSS sampled (every second) and its peak (VmHWM)
    /// at the end, MB.
    pub hub_rss_mb_max: f64,
    pub hub_hwm_mb: f64,
    pub page_messages: u64,
    pub page_reconnects: u64,
    /// The lichess push, when it was on.
    pub push: Option<PushReport>,
    /// The targets: press to page p99 < 250 ms (every phase), hub
    /// RSS < 128 MB, hub CPU < half a core (in every phase).
    pub target_p99_met: bool,
    pub target_rss_met: bool,
    pub target_cpu_met: bool,
}

/// A real board's state as the page got it.
struct PageState {
    at_us: i64,
    board: String,
    moves: u64,
    linked: bool,
}

struct Press {
    board: usize,
    moves: u64,
    at_us: i64,
    phase: usize,
}

/// The measuring reader's handler: real boards' states parsed, the first
/// linked one kept as the fake boards' template.
fn page_handler(
    real: HashSet<String>,
    page: std_mpsc::Sender<PageState>,
    template: Arc<Mutex<Option<Value>>>,
) -> impl FnMut(&str, i64) {
    move |data: &str, at_us: i64| {
        let Some(board) = loadgen::state_board(data) else {
            return;
        };
        if !real.contains(board) {
            return;
        }
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return;
        };
        let snapshot = &value["payload"]["snapshot"];
        let (Some(white), Some(black)) = (
            snapshot["white_moves"].as_u64(),
            snapshot["black_moves"].as_u64(),
        ) else {
            return;
        };
        let linked = snapshot["devices"]
            .as_array()
            .is_some_and(|d| !d.is_empty() && d.iter().all(|d| d["connected"] == true));
        if linked {
            let mut slot = template
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if slot.is_none() {
                *slot = Some(value["payload"].clone());
            }
        }
        let _ = page.send(PageState {
            at_us,
            board: board.to_owned(),
            moves: white + black,
            linked,
        });
    }
}

/// Samples of the processes at one instant: hub, broker, the bench.
fn sample_all(hub: u32, broker: u32) -> [Option<ProcSample>; 3] {
    [
        procfs::sample(hub),
        procfs::sample(broker),
        procfs::sample(std::process::id()),
    ]
}

fn usage_between(first: Option<ProcSample>, last: Option<ProcSample>, all: &[ProcSample]) -> Usage {
    match (first, last) {
        (Some(first), Some(last)) => procfs::usage(&first, &last, all),
        _ => Usage::default(),
    }
}

/// Runs the scale bench.
pub fn run(
    binaries: &Binaries,
    options: &ScaleOptions,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<ScaleReport> {
    let load_average_start = hall::load_average();
    let hub_binary = match &options.hub {
        Some(hub) => hub.clone(),
        None => binaries.daemon.with_file_name("chessclock-hall"),
    };
    for binary in [&binaries.daemon, &hub_binary] {
        if !binary.exists() {
            bail!(
                "{} not found: build it first (cargo build --release --bins)",
                binary.display()
            );
        }
    }
    if options.daemons == 0 || options.boards_per_daemon == 0 || options.boards == 0 {
        bail!("give at least one daemon, one board per daemon and one fake board");
    }
    let mut dir = tempfile::Builder::new()
        .prefix("chessclock-bench-scale.")
        .tempdir()
        .context("cannot make a temporary folder")?;
    if options.keep {
        dir.disable_cleanup(true);
        progress(&format!("keeping {}", dir.path().display()));
    }
    let mut broker = Mosquitto::start(dir.path())?;
    // The round, as at an event: every fake board paired (pairing board
    // N on `fNNNN`, in a board map: the real boards' ids end in digits
    // too), so the hub's desk follows each state as it does for a real
    // round.
    let pairings = dir.path().join("round.csv");
    let games: String = (1..=options.boards)
        .map(|n| format!("{n},White {n},Black {n}\n"))
        .collect();
    std::fs::write(&pairings, format!("board,white,black\n{games}"))?;
    let map = dir.path().join("boards.csv");
    let seats: String = (1..=options.boards)
        .map(|n| format!("{n},{}\n", loadgen::board_name(n)))
        .collect();
    std::fs::write(&map, format!("board,id\n{seats}"))?;
    let mut round_args: Vec<std::ffi::OsString> = vec![
        "--round".into(),
        "1".into(),
        "--pairings".into(),
        pairings.into(),
        "--boards".into(),
        map.into(),
        "--delay-seconds".into(),
        options.delay_seconds.to_string().into(),
    ];
    // The lichess stand-in and one lichess round per hundred boards.
    let stand_in = if options.lichess {
        let stand_in = StandIn::start()?;
        let token = dir.path().join("lichess.token");
        std::fs::write(&token, "lip_bench\n")?;
        let rounds: Vec<String> = (1..=options.boards.div_ceil(100))
            .map(|r| format!("bench{r:03}"))
            .collect();
        round_args.extend([
            "--lichess-round".into(),
            rounds.join(",").into(),
            "--lichess-token-file".into(),
            token.into(),
            "--lichess-url".into(),
            stand_in.url().into(),
            "--push-interval-seconds".into(),
            options.push_interval_seconds.to_string().into(),
        ]);
        progress(&format!(
            "the hub pushes to {} lichess rounds on {}, every {} s at most, {} s behind",
            rounds.len(),
            stand_in.url(),
            options.push_interval_seconds,
            options.delay_seconds
        ));
        Some((stand_in, rounds))
    } else {
        None
    };
    let (hub, hub_port) = hall::start_hub(&hub_binary, dir.path(), broker.port, &round_args)?;
    let hub_pid = hub.pid();
    let broker_pid = broker.pid().unwrap_or(0);

    // The screens: the measuring one, and those that only read.
    let real: Vec<String> = (0..options.daemons)
        .flat_map(|d| (0..options.boards_per_daemon).map(move |b| format!("d{d}_b{b}")))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(StreamCounts::default());
    counts.collect_boards.store(true, Ordering::Relaxed);
    let template = Arc::new(Mutex::new(None));
    let (page_tx, page_rx) = std_mpsc::channel();
    {
        let (stop, counts) = (stop.clone(), counts.clone());
        let mut take = page_handler(real.iter().cloned().collect(), page_tx, template.clone());
        std::thread::Builder::new()
            .name("scale-page".into())
            .spawn(move || {
                if let Err(error) = loadgen::read_events(hub_port, &stop, &counts, &mut take) {
                    tracing::warn!(%error, "the measuring screen stopped");
                }
            })?;
    }
    let screen_counts = Arc::new(StreamCounts::default());
    for s in 0..options.screens {
        let (stop, counts) = (stop.clone(), screen_counts.clone());
        std::thread::Builder::new()
            .name(format!("scale-screen-{s}"))
            .spawn(move || {
                if let Err(error) = loadgen::read_events(hub_port, &stop, &counts, &mut |_, _| {}) {
                    tracing::warn!(%error, "a screen stopped");
                }
            })?;
    }

    // The real daemons and their units.
    let dev = dir.path().join("dev");
    std::fs::create_dir_all(&dev)?;
    let mut units = Vec::new();
    for board in &real {
        let mut buttons = UnitSpec::new(&format!("{board}-buttons"), UnitKind::Buttons);
        buttons.link = Some(dev.join(format!("{board}-buttons")));
        let mut display = UnitSpec::new(&format!("{board}-display"), UnitKind::Display);
        display.link = Some(dev.join(format!("{board}-display")));
        units.push(buttons);
        units.push(display);
    }
    let sim: SimUnits = chessclock_sim_units::spawn_units(&SimOptions {
        units,
        log: None,
        log_sent: false,
        seed: Some(30),
    })
    .context("cannot start the simulated units")?;
    let handle = sim.handle();
    progress(&format!(
        "starting {} real daemons of {} boards on the broker at 127.0.0.1:{}",
        options.daemons, options.boards_per_daemon, broker.port
    ));
    let mut daemons: Vec<Process> = Vec::new();
    let mut buses = Vec::new();
    for d in 0..options.daemons {
        let boards: Vec<String> = (0..options.boards_per_daemon)
            .map(|b| format!("d{d}_b{b}"))
            .collect();
        let (daemon, bus) = hall::start_daemon(
            binaries,
            &dir.path().join(format!("d{d}")),
            &boards,
            &dev,
            &format!("d{d}"),
            broker.port,
            10,
        )?;
        daemons.push(daemon);
        buses.push(bus);
    }
    let mut page: Vec<PageState> = Vec::new();
    let mut linked: BTreeMap<String, bool> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while linked.values().filter(|l| **l).count() < real.len() {
        match page_rx.recv_timeout(Duration::from_millis(200)) {
            Ok(state) => {
                linked.insert(state.board.clone(), state.linked);
                page.push(state);
            }
            Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            Err(std_mpsc::RecvTimeoutError::Disconnected) => bail!("the hub's event stream ended"),
        }
        if Instant::now() > deadline {
            bail!("the real boards did not reach the page linked within 120 s");
        }
    }
    let mut controller = Controller::connect(broker.port)?;
    let started =
        controller.command_all(&real, &json!({"command": "start"}), Duration::from_secs(30))?;
    if let Some((board, reply)) = started.iter().find(|(_, reply)| reply["ok"] != true) {
        bail!("{board} did not start: {reply}");
    }
    let template = template
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .ok_or_else(|| anyhow!("no real state to take the payload's shape from"))?;
    let real_state_bytes = template.to_string().len();

    // The fake hall: every board's state once, then until all are on the page.
    progress(&format!(
        "connecting {} fake hosts with {} boards",
        options.hosts, options.boards
    ));
    let generator = Generator::start(broker.port, options.hosts, options.boards, &template)?;
    if stand_in.is_some() {
        generator.record_publications();
    }
    let published_us = monotonic_now_us();
    generator.publish_all(options.boards);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let seen = counts
            .boards
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        if seen >= options.boards + real.len() {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "only {seen} of {} boards reached the page within 120 s",
                options.boards + real.len()
            );
        }
        while let Ok(state) = page_rx.try_recv() {
            page.push(state);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    counts.collect_boards.store(false, Ordering::Relaxed);
    let all_boards_on_page_s = (monotonic_now_us() - published_us) as f64 / 1e6;
    progress(&format!(
        "all {} boards on the page after {all_boards_on_page_s:.1} s",
        options.boards + real.len()
    ));

    // The phases, pressing the real boards round robin all along.
    let phases = [
        ("steady", options.steady_rate, options.steady_seconds),
        ("peak", options.peak_rate, options.peak_seconds),
        ("steady again", options.steady_rate, options.steady_seconds),
    ];
    let interval = Duration::from_secs_f64(1.0 / options.presses_per_second.max(0.1));
    let mut presses: Vec<Press> = Vec::new();
    let mut moves = vec![0u64; real.len()];
    let mut next_board = 0usize;
    let mut phase_samples = Vec::new();
    let mut hub_rss_kb_max = 0u64;
    let mut hub_series: Vec<ProcSample> = Vec::new();
    let mut windows: Vec<(String, i64, i64)> = Vec::new();
    for (index, (name, rate, seconds)) in phases.iter().enumerate() {
        progress(&format!("phase: {name}, {rate} messages/s for {seconds} s"));
        generator.set_rate(*rate);
        let window_start = monotonic_now_us();
        let first = sample_all(hub_pid, broker_pid);
        let sent_first = generator.counts();
        let reconnects_first = counts.reconnects.load(Ordering::Relaxed)
            + screen_counts.reconnects.load(Ordering::Relaxed);
        let messages_first = counts.messages.load(Ordering::Relaxed);
        let phase = Duration::from_secs_f64(*seconds);
        let start = Instant::now();
        let mut next = start;
        let mut next_sample = start + Duration::from_secs(1);
        let mut hub_all: Vec<ProcSample> = first[0].into_iter().collect();
        while start.elapsed() < phase {
            let now = Instant::now();
            if now < next {
                std::thread::sleep(next - now);
            }
            next += interval;
            let board = next_board % real.len();
            next_board += 1;
            let button = if moves[board] % 2 == 0 {
                Button::Left
            } else {
                Button::Right
            };
            let unit = format!("{}-buttons", real[board]);
            let at_us = handle
                .press_returning_instant(Some(&unit), button)
                .map_err(|e| anyhow!("press on {unit}: {e}"))?;
            moves[board] += 1;
            presses.push(Press {
                board,
                moves: moves[board],
                at_us,
                phase: index,
            });
            while let Ok(state) = page_rx.try_recv() {
                page.push(state);
            }
            if Instant::now() >= next_sample {
                next_sample += Duration::from_secs(1);
                if let Some(sample) = procfs::sample(hub_pid) {
                    hub_rss_kb_max = hub_rss_kb_max.max(sample.rss_kb);
                    hub_all.push(sample);
                    hub_series.push(sample);
                }
            }
        }
        let last = sample_all(hub_pid, broker_pid);
        windows.push(((*name).to_owned(), window_start, monotonic_now_us()));
        hub_all.extend(last[0]);
        let sent_last = generator.counts();
        let reconnects_last = counts.reconnects.load(Ordering::Relaxed)
            + screen_counts.reconnects.load(Ordering::Relaxed);
        let messages_last = counts.messages.load(Ordering::Relaxed);
        phase_samples.push((
            first,
            last,
            hub_all,
            sent_first,
            sent_last,
            reconnects_last - reconnects_first,
            messages_last - messages_first,
        ));
    }
    generator.set_rate(0.0);
    // 3 s for the page; with the push, until every fake board's last state
    // went out too (at most the interval and the delay and 30 s).
    let page_until = Instant::now() + Duration::from_secs(3);
    let push_until = page_until
        + Duration::from_secs(
            27 + options.push_interval_seconds + u64::from(options.delay_seconds),
        );
    loop {
        let now = Instant::now();
        if now >= page_until {
            let pushed = stand_in.as_ref().is_none_or(|(stand_in, _)| {
                now >= push_until
                    || lichess::all_pushed(&generator.publications(), &stand_in.requests())
            });
            if pushed {
                break;
            }
        }
        if let Ok(state) = page_rx.recv_timeout(Duration::from_millis(100)) {
            page.push(state);
        }
    }
    let hub_end = procfs::sample(hub_pid);
    let load_average_end = hall::load_average();
    let final_counts = generator.counts();
    let push = stand_in.map(|(stand_in, rounds)| {
        let requests = stand_in.requests();
        drop(stand_in);
        lichess::analyse(
            &generator.publications(),
            &requests,
            &windows,
            options.push_interval_seconds,
            options.delay_seconds,
            &rounds,
        )
    });
    stop.store(true, Ordering::Relaxed);
    generator.stop();
    for process in &mut daemons {
        process.terminate();
    }
    drop(controller);
    drop(hub);
    broker.kill();
    sim.shutdown();
    drop(buses);

    // Press to page.
    let mut by_board: HashMap<&str, Vec<&PageState>> = HashMap::new();
    for state in &page {
        by_board
            .entry(state.board.as_str())
            .or_default()
            .push(state);
    }
    let reached = |press: &Press| -> Option<f64> {
        by_board
            .get(real[press.board].as_str())?
            .iter()
            .find(|s| s.at_us >= press.at_us && s.moves >= press.moves)
            .map(|s| (s.at_us - press.at_us) as f64 / 1e3)
    };
    let mut all_latencies = Vec::new();
    let mut reports = Vec::new();
    for (index, (name, rate, _)) in phases.iter().enumerate() {
        let (first, last, hub_all, sent_first, sent_last, reconnects, messages) =
            &phase_samples[index];
        let mut latencies = Vec::new();
        let (mut count, mut missing) = (0, 0);
        for press in presses.iter().filter(|p| p.phase == index) {
            count += 1;
            match reached(press) {
                Some(ms) => latencies.push(ms),
                None => missing += 1,
            }
        }
        all_latencies.extend(&latencies);
        let hub = usage_between(first[0], last[0], hub_all);
        let broker = usage_between(first[1], last[1], &[]);
        let bench = usage_between(first[2], last[2], &[]);
        let seconds = hub.seconds.max(1e-3);
        reports.push(PhaseReport {
            name: (*name).to_owned(),
            seconds: hub.seconds,
            rate_asked: *rate,
            rate_sent: (sent_last.sent - sent_first.sent) as f64 / seconds,
            refused: sent_last.refused - sent_first.refused,
            press_to_page_ms: Summary::of(&latencies),
            presses: count,
            presses_missing: missing,
            hub_cores: hub.cpu_percent / 100.0,
            hub,
            broker,
            bench_cpu_percent: bench.cpu_percent,
            page_reconnects: *reconnects,
            page_messages_per_second: *messages as f64 / seconds,
        });
    }
    let run_first = phase_samples.first().and_then(|p| p.0[0]);
    let run_last = phase_samples.last().and_then(|p| p.1[0]);
    let hub_run = usage_between(run_first, run_last, &hub_series);
    let hub_hwm_mb = hub_end.map_or(hub_run.hwm_mb, |s| s.hwm_kb as f64 / 1024.0);
    let press_to_page_ms = Summary::of(&all_latencies);
    let hub_cores_max_phase = reports.iter().map(|p| p.hub_cores).fold(0.0, f64::max);
    let presses_missing = reports.iter().map(|p| p.presses_missing).sum();
    Ok(ScaleReport {
        boards: options.boards,
        hosts: options.hosts,
        real_boards: real.len(),
        daemons: options.daemons,
        screens: options.screens,
        load_average_start,
        load_average_end,
        real_state_bytes,
        states: final_counts.states,
        state_bytes_mean: final_counts.state_bytes as f64 / final_counts.states.max(1) as f64,
        state_bytes_min: final_counts.state_bytes_min,
        state_bytes_max: final_counts.state_bytes_max,
        all_boards_on_page_s,
        target_p99_met: presses_missing == 0
            && reports
                .iter()
                .all(|p| p.press_to_page_ms.p99 < TARGET_P99_MS),
        target_rss_met: hub_hwm_mb < TARGET_RSS_MB,
        target_cpu_met: hub_cores_max_phase < TARGET_CORES,
        phases: reports,
        press_to_page_ms,
        presses: presses.len(),
        presses_missing,
        hub_cores: hub_run.cpu_percent / 100.0,
        hub_cores_max_phase,
        hub_rss_mb_max: (hub_rss_kb_max as f64 / 1024.0).max(hub_run.rss_mb_end),
        hub_hwm_mb,
        page_messages: counts.messages.load(Ordering::Relaxed),
        page_reconnects: counts.reconnects.load(Ordering::Relaxed)
            + screen_counts.reconnects.load(Ordering::Relaxed),
        push,
    })
}

/// `chessclock-bench scale`: its arguments.
#[derive(Clone, Debug, clap::Args)]
pub struct ScaleArgs {
    /// Fake boards of the load generator.
    #[arg(long, default_value_t = 1000)]
    pub boards: usize,
    /// Fake hosts (MQTT connections) the fake boards are spread over.
    #[arg(long, default_value_t = 250)]
    pub hosts: usize,
    /// Real daemons (with simulated units), whose presses are measured.
    #[arg(long, default_value_t = 2)]
    pub daemons: usize,
    #[arg(long, default_value_t = 2)]
    pub boards_per_daemon: usize,
    /// Messages per second in the steady phases (a state and its event
    /// are two).
    #[arg(long, default_value_t = 1000.0)]
    pub steady_rate: f64,
    /// Messages per second at the peak.
    #[arg(long, default_value_t = 10_000.0)]
    pub peak_rate: f64,
    /// Seconds of each steady phase (before and after the peak).
    #[arg(long, default_value_t = 20.0)]
    pub steady_seconds: f64,
    #[arg(long, default_value_t = 20.0)]
    pub peak_seconds: f64,
    /// Presses per second over the real boards.
    #[arg(long, default_value_t = 5.0)]
    pub presses_per_second: f64,
    /// Hall screens reading `/events` besides the measuring one.
    #[arg(long, default_value_t = 3)]
    pub screens: usize,
    /// The hub binary (default: chessclock-hall beside the daemon).
    #[arg(long)]
    pub hub: Option<PathBuf>,
    /// Keep the temporary folder (logs).
    #[arg(long)]
    pub keep: bool,
    /// The hub pushes the round to a stand-in of lichess on 127.0.0.1
    /// (--lichess-round, one lichess round per hundred boards); the report
    /// then gives the requests per round, their intervals, games and bytes
    /// per request, and the push lag: from a fake board's state to the
    /// first push carrying it. Off by default (the runs before issue 32
    /// had no push); run once with and once without to see its cost.
    #[arg(long)]
    pub lichess: bool,
    /// The hub's --push-interval-seconds (with --lichess).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub push_interval_seconds: u64,
    /// The hub's --delay-seconds: its public feed (and the push) this far
    /// behind.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=3600))]
    pub delay_seconds: u32,
    /// Write the JSON report here (default: stdout).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs `chessclock-bench scale`: the report as JSON, a summary on stderr.
pub fn main(
    binaries: &Binaries,
    args: ScaleArgs,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<()> {
    let options = ScaleOptions {
        boards: args.boards,
        hosts: args.hosts.max(1),
        daemons: args.daemons,
        boards_per_daemon: args.boards_per_daemon,
        steady_rate: args.steady_rate,
        peak_rate: args.peak_rate,
        steady_seconds: args.steady_seconds,
        peak_seconds: args.peak_seconds,
        presses_per_second: args.presses_per_second,
        screens: args.screens,
        hub: args.hub,
        keep: args.keep,
        lichess: args.lichess,
        push_interval_seconds: args.push_interval_seconds,
        delay_seconds: args.delay_seconds,
    };
    let report = run(binaries, &options, progress)?;
    for phase in &report.phases {
        progress(&format!(
            "{}: {:.0}/{:.0} messages/s sent; press to page p50 {:.1} / p99 {:.1} / max {:.1} ms \
             ({} presses, {} missing); hub {:.2} cores, RSS {:.1} MB; {} reconnects",
            phase.name,
            phase.rate_sent,
            phase.rate_asked,
            phase.press_to_page_ms.p50,
            phase.press_to_page_ms.p99,
            phase.press_to_page_ms.max,
            phase.presses,
            phase.presses_missing,
            phase.hub_cores,
            phase.hub.rss_mb_max,
            phase.page_reconnects,
        ));
    }
    if let Some(push) = &report.push {
        for phase in push.phases.iter().chain([&push.run]) {
            progress(&format!(
                "push, {}: {} requests ({} rounds, {:.0}-{:.0} each), interval between two to one \
                 round min {:.0} / p50 {:.0} / max {:.0} ms; games per request {:.0}-{:.0}, \
                 body {:.0} KB p50; push lag p50 {:.0} / p99 {:.0} / max {:.0} ms over {} \
                 states ({} over the {:.0} ms target, {} never pushed)",
                phase.name,
                phase.requests,
                phase.requests_per_round.len(),
                phase
                    .requests_per_round
                    .values()
                    .min()
                    .copied()
                    .unwrap_or(0) as f64,
                phase
                    .requests_per_round
                    .values()
                    .max()
                    .copied()
                    .unwrap_or(0) as f64,
                phase.interval_ms.min,
                phase.interval_ms.p50,
                phase.interval_ms.max,
                phase.games_per_request.min,
                phase.games_per_request.max,
                phase.body_bytes.p50 / 1024.0,
                phase.push_lag_ms.p50,
                phase.push_lag_ms.p99,
                phase.push_lag_ms.max,
                phase.states,
                phase.states_over_target,
                push.target_ms,
                phase.states_unpushed,
            ));
        }
        if let Some(first) = push.short_requests.first() {
            progress(&format!(
                "push: {} requests left out games another request to their round carried \
                 (the first: {} with {} games, without boards {:?})",
                push.short_requests.len(),
                first.round,
                first.games,
                first.missing
            ));
        }
    }
    progress(&format!(
        "hub peak RSS (VmHWM) {:.1} MB, {:.2} cores over the run; targets met: p99 {}, RSS {}, \
         CPU {}; load {:?} -> {:?}",
        report.hub_hwm_mb,
        report.hub_cores,
        report.target_p99_met,
        report.target_rss_met,
        report.target_cpu_met,
        report.load_average_start,
        report.load_average_end,
    ));
    let text = serde_json::to_string_pretty(&report)?;
    match &args.json {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => println!("{text}"),
    }
    Ok(())
}
