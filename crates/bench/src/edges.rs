//! The clock at its edges, three figures, each measured on a rig of
//! its own (one board, the real daemon, simulated units):
//!
//! - [`late_flag`]: presses made in the last 200 ms before the pressing
//!   side's flag whose BUTTON frame reaches the daemon 0-500 ms late: the
//!   accounting error of each, and whether a flag was left standing;
//! - [`reader_flood`]: press-to-display latency and display lateness with
//!   readers calling `History()` in a loop on a game of thousands of
//!   events, beside the same figures without readers, in one run;
//! - [`kill_charge`]: the time charged to the running side across a
//!   kill -9 and restart of the daemon, against the true instants.
//!
//! Promises: nothing here asserts a time; every function returns what it
//! measured, joined with the simulator's log by the pure functions of
//! [`super::analysis`]. Everything a rig started is stopped when it returns.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use chessclock_protocol::Button;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::Value;

use super::analysis::{self, Beside, LatePressOutcome, RestartCharge, TruePress};
use super::placement::Placement;
use super::rig::{self, Binaries, Rig, RigOptions};
use super::stats::Summary;
use chessclock_core::engine::{MS, SECOND};
use chessclock_host::clock::monotonic_now_us;

/// How much of each measurement to run.
#[derive(Clone, Debug, Serialize)]
pub struct EdgeOptions {
    /// Late presses before a flag: games played, one press each.
    pub late_trials: usize,
    /// The sudden-death control of those games, seconds.
    pub late_initial_seconds: u64,
    /// Presses are made this long before the flag at most (uniform, from
    /// 5 ms), ms.
    pub late_window_ms: u64,
    /// The BUTTON frame is held 0 to this many ms (spread evenly over the
    /// trials), ms.
    pub late_max_delay_ms: u64,
    /// Reader flood: concurrent `History()` readers, each on a connection
    /// of its own (a caller of its own).
    pub flood_readers: usize,
    /// Events in the game before the measurement.
    pub flood_events: usize,
    /// Seconds of each phase (without readers, with readers, ...).
    pub flood_phase_seconds: f64,
    /// Pairs of phases (without, with).
    pub flood_rounds: usize,
    /// The daemon's RLIMIT_RTTIME in the flood run (the shipped unit's
    /// `LimitRTTIME=1s`).
    pub flood_rttime_us: Option<u64>,
    /// Kill -9 and restarts.
    pub kill_repetitions: usize,
}

impl EdgeOptions {
    pub fn full() -> EdgeOptions {
        EdgeOptions {
            late_trials: 30,
            late_initial_seconds: 2,
            late_window_ms: 200,
            late_max_delay_ms: 500,
            flood_readers: 8,
            flood_events: 5_000,
            flood_phase_seconds: 15.0,
            flood_rounds: 2,
            flood_rttime_us: Some(1_000_000),
            kill_repetitions: 10,
        }
    }

    pub fn quick() -> EdgeOptions {
        EdgeOptions {
            late_trials: 8,
            flood_phase_seconds: 5.0,
            flood_rounds: 1,
            kill_repetitions: 3,
            ..EdgeOptions::full()
        }
    }
}

/// `/proc/loadavg`'s three averages, for the figures' side.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What every section needs to start its rig.
#[derive(Clone, Copy, Debug)]
pub struct RigBase {
    pub realtime: bool,
    pub seed: u64,
    pub placement: Option<Placement>,
    /// Seconds between the devices connecting and the first game.
    pub settle_seconds: f64,
    pub keep: bool,
}

impl RigBase {
    fn start(
        &self,
        binaries: &Binaries,
        log_sent: bool,
        rttime_us: Option<u64>,
    ) -> anyhow::Result<Rig> {
        let rig = Rig::start(
            binaries,
            &RigOptions {
                boards: 1,
                realtime: self.realtime,
                log_sent,
                seed: self.seed,
                daemon_cpus: self.placement.map(|p| p.daemon_cpu_list()),
                rttime_us,
                boot_spread_us: 0,
            },
        )?;
        std::thread::sleep(Duration::from_secs_f64(self.settle_seconds));
        Ok(rig)
    }

    fn finish(&self, mut rig: Rig) {
        if self.keep {
            eprintln!("chessclock-bench: kept {}", rig.dir.path().display());
            rig.keep_dir();
        }
    }
}

/// Sleeps until the CLOCK_MONOTONIC instant `at_us` (returns at once if past).
fn sleep_until_us(at_us: i64) {
    let now = monotonic_now_us();
    if at_us > now {
        std::thread::sleep(Duration::from_micros((at_us - now) as u64));
    }
}

/// The board's history, retried while the reads are rate-limited.
fn history_patiently(rig: &mut Rig, board: &str) -> anyhow::Result<(Vec<Value>, i64)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match rig.history(board) {
            Ok(found) => return Ok(found),
            Err(error) if error.to_string().contains("too many reads") => {
                if Instant::now() > deadline {
                    return Err(error);
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(error) => return Err(error),
        }
    }
}

/// The true press of `unit` logged at exactly `at_us`.
fn press_at<'a>(presses: &'a [TruePress], unit: &str, at_us: i64) -> Option<&'a TruePress> {
    presses.iter().find(|p| p.unit == unit && p.at_us == at_us)
}

// ---------------------------------------------------------------------
// 1. Late presses before a flag.

/// One game of the late-press measurement.
#[derive(Clone, Debug, Serialize)]
pub struct LateFlagTrial {
    /// From the true press instant to the instant White's flag was due, ms.
    pub before_flag_ms: f64,
    /// How long its BUTTON frame was held, ms.
    pub delay_ms: u64,
    /// `None` when the simulator's log has no such press.
    pub outcome: Option<LatePressOutcome>,
    /// Black's press after it, on time and far from a flag: its accounting
    /// error, ms (`None` when not found).
    pub ordinary_error_ms: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LateFlagReport {
    pub trials: Vec<LateFlagTrial>,
    /// Accounted − true, ms, over every press made before its flag.
    pub error_ms: Summary,
    pub abs_error_ms: Summary,
    /// |error| of the ordinary presses of the same games (Black's, on
    /// time, far from a flag): what "as exact as any press" compares with.
    pub ordinary_abs_error_ms: Summary,
    /// |error| by how late the frame was: `0-99`, `100-299`, `300-500` ms.
    pub abs_error_by_delay_ms: BTreeMap<String, Summary>,
    /// Trials whose flag was shown before the press arrived, then withdrawn.
    pub flags_withdrawn: usize,
    /// Flags wrongly left standing (goal 0).
    pub flags_standing: usize,
    pub presses_ignored: usize,
    pub presses_not_placed: usize,
    /// Presses the history does not have, or the log does not have.
    pub presses_missing: usize,
    /// Trials whose press came after the flag after all (the harness slept
    /// too long): left out of the figures.
    pub trials_late_harness: usize,
    pub load_average: String,
}

fn delay_band(delay_ms: u64) -> &'static str {
    match delay_ms {
        0..=99 => "0-99",
        100..=299 => "100-299",
        _ => "300-500",
    }
}

/// Plays `late_trials` games of `late_initial_seconds` sudden death; in each
/// White presses 5 ms to `late_window_ms` before her flag, her frame held
/// 0 to `late_max_delay_ms`.
pub fn late_flag(
    binaries: &Binaries,
    base: &RigBase,
    options: &EdgeOptions,
) -> anyhow::Result<LateFlagReport> {
    let mut rig = base.start(binaries, false, None)?;
    let board = rig::board_id(0);
    let unit = rig::buttons_unit(0);
    let serial = rig::unit_serial(&unit);
    let sim = rig.sim();
    let mut rng = rand::rngs::StdRng::seed_from_u64(base.seed ^ 0x1a7e);
    let initial = options.late_initial_seconds.max(1);
    let n = options.late_trials.max(1);
    // (true press instant, flag instant, delay ms, history, epoch)
    let mut played = Vec::new();
    for k in 0..n {
        let delay_ms = if n > 1 {
            options.late_max_delay_ms * k as u64 / (n as u64 - 1)
        } else {
            options.late_max_delay_ms
        };
        rig.new_games(&initial.to_string())?;
        let (history, epoch) = rig.history(&board)?;
        let start = history
            .iter()
            .rev()
            .find(|e| e["do"] == "start")
            .and_then(|e| e["t_us"].as_i64())
            .ok_or_else(|| anyhow!("the new game has no start row"))?;
        let flag_at = epoch + start + initial as i64 * SECOND;
        let before_us = rng.random_range(5 * MS..=(options.late_window_ms as i64 * MS).max(5 * MS));
        sleep_until_us(flag_at - before_us);
        if delay_ms > 0 {
            // The first transmission only: later frames queue behind it
            // (a line keeps its order), none is held longer.
            sim.delay(
                &unit,
                Duration::from_millis(delay_ms),
                Duration::from_millis(15),
            )?;
        }
        let at = sim.press_returning_instant(Some(&unit), Button::Left)?;
        // Past the flag and the frame's arrival, so a flag is shown (and
        // withdrawn) before the history is read; Black's own flag is
        // `initial` away.
        sleep_until_us(flag_at.max(at + delay_ms as i64 * MS) + 400 * MS);
        let (history, epoch) = rig.history(&board)?;
        // Then Black presses, on time and far from any flag: an ordinary
        // press of the same game, the "any press" the goal compares with.
        // (It gives White her clock back, with less than the window left:
        // her flag then falls rightly, so the late press's outcome is read
        // from the history before it.)
        let ordinary = sim.press_returning_instant(Some(&unit), Button::Right)?;
        std::thread::sleep(Duration::from_millis(300));
        let (after, _) = rig.history(&board)?;
        played.push((at, ordinary, flag_at, delay_ms, history, after, epoch));
    }
    // The log is written in batches: read it once, at the end.
    std::thread::sleep(Duration::from_millis(300));
    let presses = analysis::true_presses(&rig.sim_records());
    base.finish(rig);

    let mut trials = Vec::new();
    for (at, ordinary, flag_at, delay_ms, history, after, epoch) in played {
        let outcome = press_at(&presses, &unit, at)
            .map(|p| analysis::late_press_outcome(&history, &serial, p.event, "white", at, epoch));
        let ordinary_error_ms = press_at(&presses, &unit, ordinary).and_then(|p| {
            analysis::late_press_outcome(&after, &serial, p.event, "black", ordinary, epoch)
                .error_ms
        });
        trials.push(LateFlagTrial {
            before_flag_ms: (flag_at - at) as f64 / 1e3,
            delay_ms,
            outcome,
            ordinary_error_ms,
        });
    }
    Ok(late_flag_report(trials))
}

/// The figures of the late-press trials.
pub fn late_flag_report(trials: Vec<LateFlagTrial>) -> LateFlagReport {
    let mut errors = Vec::new();
    let mut by_band: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut report = LateFlagReport {
        trials: Vec::new(),
        error_ms: Summary::default(),
        abs_error_ms: Summary::default(),
        ordinary_abs_error_ms: Summary::default(),
        abs_error_by_delay_ms: BTreeMap::new(),
        flags_withdrawn: 0,
        flags_standing: 0,
        presses_ignored: 0,
        presses_not_placed: 0,
        presses_missing: 0,
        trials_late_harness: 0,
        load_average: load_average(),
    };
    for trial in &trials {
        if trial.before_flag_ms <= 0.0 {
            report.trials_late_harness += 1;
            continue;
        }
        let Some(outcome) = &trial.outcome else {
            report.presses_missing += 1;
            continue;
        };
        report.flags_withdrawn += usize::from(outcome.flag_withdrawn);
        report.flags_standing += usize::from(outcome.flag_standing);
        report.presses_ignored += usize::from(outcome.ignored);
        report.presses_not_placed += usize::from(outcome.not_placed);
        match outcome.error_ms {
            Some(error) => {
                errors.push(error);
                by_band
                    .entry(delay_band(trial.delay_ms).to_owned())
                    .or_default()
                    .push(error);
            }
            None if !outcome.not_placed => report.presses_missing += 1,
            None => {}
        }
    }
    let ordinary: Vec<f64> = trials.iter().filter_map(|t| t.ordinary_error_ms).collect();
    report.ordinary_abs_error_ms = Summary::of_abs(&ordinary);
    report.error_ms = Summary::of(&errors);
    report.abs_error_ms = Summary::of_abs(&errors);
    report.abs_error_by_delay_ms = by_band
        .iter()
        .map(|(band, e)| (band.clone(), Summary::of_abs(e)))
        .collect();
    report.trials = trials;
    report
}

// ---------------------------------------------------------------------
// 2. Reader flood.

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReaderCounts {
    /// `History()` calls answered.
    pub answered: u64,
    /// Refused with `RateLimited` (expected; not a failure).
    pub rate_limited: u64,
    /// Any other error.
    pub errors: u64,
    /// Bytes of history received, MB.
    pub mb: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FloodReport {
    pub readers: usize,
    /// How the game was built, and how long it took.
    pub built_how: String,
    pub build_seconds: f64,
    /// Rows of the game's history when the measurement began / ended.
    pub events_at_start: usize,
    pub events_at_end: usize,
    pub phase_seconds: f64,
    pub rounds: usize,
    pub rttime_us: Option<u64>,
    /// Press-to-display, ms: without readers beside with readers.
    pub latency_ms: Beside,
    pub latency_missing: [usize; 2],
    /// From the press to the unit's receipt of its ACK, ms (the ACK waits
    /// for the press's commit to the state database): not a goal of the
    /// issue, shown because a reader could delay it.
    pub ack_ms: Beside,
    /// Lateness of whole-second display changes, ms.
    pub display_late_ms: Beside,
    pub reads: ReaderCounts,
    /// The daemon was still running at the end (not killed by the
    /// RLIMIT_RTTIME or anything else).
    pub daemon_alive: bool,
    pub load_average: String,
}

/// Starts `n` readers on a thread of their own (on the daemon's CPUs when
/// pinned, so the simulated units keep theirs): each its own connection,
/// calling `History()` in a loop while `on`, until `stop`.
fn spawn_readers(
    address: String,
    board: String,
    n: usize,
    placement: Option<Placement>,
    on: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<anyhow::Result<ReaderCounts>> {
    std::thread::spawn(move || {
        if let Some(placement) = placement {
            placement.enter_daemon()?;
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let answered = Arc::new(AtomicU64::new(0));
        let limited = Arc::new(AtomicU64::new(0));
        let errors = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(AtomicU64::new(0));
        rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..n {
                let (address, board) = (address.clone(), board.clone());
                let (on, stop) = (on.clone(), stop.clone());
                let (answered, limited, errors, bytes) = (
                    answered.clone(),
                    limited.clone(),
                    errors.clone(),
                    bytes.clone(),
                );
                set.spawn(async move {
                    let proxy = rig::own_board_proxy(&address, &board).await?;
                    while !stop.load(Ordering::Relaxed) {
                        if !on.load(Ordering::Relaxed) {
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        }
                        match proxy.history().await {
                            Ok(text) => {
                                answered.fetch_add(1, Ordering::Relaxed);
                                bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
                            }
                            Err(chessclockd::dbus::error::Error::RateLimited(_)) => {
                                limited.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(_) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    anyhow::Ok(())
                });
            }
            while let Some(done) = set.join_next().await {
                done??;
            }
            anyhow::Ok(())
        })?;
        Ok(ReaderCounts {
            answered: answered.load(Ordering::Relaxed),
            rate_limited: limited.load(Ordering::Relaxed),
            errors: errors.load(Ordering::Relaxed),
            mb: bytes.load(Ordering::Relaxed) as f64 / 1e6,
        })
    })
}

/// Presses the board's running side at 200-600 ms (three in ten 1-2.5 s
/// later) for `seconds`; `next_left` is the button of the running side.
fn press_for(
    rig: &Rig,
    next_left: &mut bool,
    seconds: f64,
    rng: &mut impl Rng,
) -> anyhow::Result<()> {
    let sim = rig.sim();
    let unit = rig::buttons_unit(0);
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    loop {
        let gap = if rng.random_bool(0.3) {
            rng.random_range(1000..=2500)
        } else {
            rng.random_range(200..=600)
        };
        let at = Instant::now() + Duration::from_millis(gap);
        if at >= end {
            std::thread::sleep(end.saturating_duration_since(Instant::now()));
            return Ok(());
        }
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        let button = if *next_left {
            Button::Left
        } else {
            Button::Right
        };
        sim.press(Some(&unit), button)?;
        *next_left = !*next_left;
    }
}

/// Builds a game of `flood_events` events, then alternates phases without
/// and with `flood_readers` readers, pressing through the simulated unit
/// throughout; compares the phases.
pub fn reader_flood(
    binaries: &Binaries,
    base: &RigBase,
    options: &EdgeOptions,
) -> anyhow::Result<FloodReport> {
    let mut rig = base.start(binaries, true, options.flood_rttime_us)?;
    if let Some(placement) = &base.placement {
        // The bus carries the readers' answers: it works beside the
        // daemon, not beside the simulated units the figures come from.
        placement
            .move_to_daemon(rig.bus.pid())
            .context("cannot move the dbus-daemon to the daemon's CPUs")?;
    }
    let board = rig::board_id(0);
    // 90 minutes: no flag during the run; the display shows H:MM:SS.
    let initial_s: i64 = 5400;
    rig.new_games(&initial_s.to_string())?;
    // The game: D-Bus `Press()` calls, White and Black in turn, each
    // answered after its commit (the quickest way the public interface
    // allows; the same path as the state store's sequential figure).
    let build_started = Instant::now();
    let events = options.flood_events;
    {
        let address = rig.bus.address.clone();
        let board = board.clone();
        rig.rt.block_on(async move {
            let proxy = rig::own_board_proxy(&address, &board).await?;
            for k in 0..events {
                let side = if k % 2 == 0 { "white" } else { "black" };
                proxy.press(side).await?;
            }
            anyhow::Ok(())
        })?;
    }
    let build_seconds = build_started.elapsed().as_secs_f64();
    let (history, _) = rig.history(&board)?;
    let events_at_start = history.len();
    // White runs after an even number of presses; White is the left button.
    let mut next_left = events % 2 == 0;
    let mut rng = rand::rngs::StdRng::seed_from_u64(base.seed ^ 0xf100d);

    let on = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let readers = spawn_readers(
        rig.bus.address.clone(),
        board.clone(),
        options.flood_readers,
        base.placement,
        on.clone(),
        stop.clone(),
    );
    // Let the readers connect before the first phase.
    std::thread::sleep(Duration::from_millis(500));
    let mut phases: Vec<(bool, i64, i64)> = Vec::new();
    for _ in 0..options.flood_rounds.max(1) {
        for flooded in [false, true] {
            on.store(flooded, Ordering::Relaxed);
            // The readers' last calls of a flood end before a quiet phase.
            std::thread::sleep(Duration::from_millis(200));
            let from = monotonic_now_us();
            press_for(&rig, &mut next_left, options.flood_phase_seconds, &mut rng)?;
            phases.push((flooded, from, monotonic_now_us()));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let reads = readers
        .join()
        .map_err(|_| anyhow!("a reader thread panicked"))??;
    std::thread::sleep(Duration::from_millis(800));
    let exited = rig.daemon.as_mut().and_then(|d| d.exited());
    if let Some(status) = exited {
        let logs = rig::tail(&rig.daemon_logs(), 30);
        base.finish(rig);
        bail!("the daemon exited ({status}) during the reader flood:\n{logs}");
    }
    // The total read share refills in a few seconds.
    let (history, epoch) = history_patiently(&mut rig, &board)?;
    let records = rig.sim_records();
    base.finish(rig);

    let unit = rig::buttons_unit(0);
    let display = rig::display_unit(0);
    let presses: Vec<TruePress> = analysis::true_presses(&records)
        .into_iter()
        .filter(|p| p.unit == unit)
        .collect();
    let written = analysis::presses_as_written(&records, &presses);
    let frames: Vec<analysis::Shown> = analysis::shown_frames(&records)
        .into_iter()
        .filter(|f| f.unit == display)
        .collect();
    let runs = analysis::running_intervals(&history, epoch, initial_s * SECOND);
    let mut latency: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut missing = [0usize; 2];
    let mut late: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut acks: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (flooded, from, until) in &phases {
        let i = usize::from(*flooded);
        let in_phase: Vec<TruePress> = written
            .iter()
            .filter(|p| p.at_us >= *from && p.at_us <= *until)
            .cloned()
            .collect();
        for l in analysis::press_to_display(&in_phase, &frames, SECOND) {
            match l {
                Some(l) => latency[i].push(l),
                None => missing[i] += 1,
            }
        }
        let true_in_phase: Vec<TruePress> = presses
            .iter()
            .filter(|p| p.at_us >= *from && p.at_us <= *until)
            .cloned()
            .collect();
        acks[i].extend(
            analysis::ack_latency(&records, &true_in_phase)
                .into_iter()
                .flatten(),
        );
        let phase_frames: Vec<analysis::Shown> = frames
            .iter()
            .filter(|f| f.at_us >= *from && f.at_us <= *until)
            .cloned()
            .collect();
        late[i].extend(analysis::display_lateness(&phase_frames, &runs));
    }
    Ok(FloodReport {
        readers: options.flood_readers,
        built_how: format!(
            "{events} sequential D-Bus Press() calls, White and Black in turn, in one 90-minute game"
        ),
        build_seconds,
        events_at_start,
        events_at_end: history.len(),
        phase_seconds: options.flood_phase_seconds,
        rounds: options.flood_rounds.max(1),
        rttime_us: options.flood_rttime_us,
        latency_ms: analysis::beside(&latency[0], &latency[1]),
        latency_missing: missing,
        ack_ms: analysis::beside(&acks[0], &acks[1]),
        display_late_ms: analysis::beside(&late[0], &late[1]),
        reads,
        daemon_alive: exited.is_none(),
        load_average: load_average(),
    })
}

// ---------------------------------------------------------------------
// 3. Time charged across kill -9.

#[derive(Clone, Debug, Serialize)]
pub struct KillTrial {
    /// How long the daemon was down (kill to spawn), ms.
    pub outage_ms: f64,
    /// The daemon's figure, `None` when the rows were not found.
    pub charge: Option<RestartCharge>,
    /// The game's epoch after the restart is the one before (same boot).
    pub epoch_kept: bool,
    /// The restart instant the daemon states lies between the spawn and
    /// the first answer after it.
    pub restart_in_bracket: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct KillReport {
    pub trials: Vec<KillTrial>,
    /// charged − truth, ms.
    pub error_ms: Summary,
    pub abs_error_ms: Summary,
    /// Trials without a figure, with another epoch, or with the restart
    /// instant outside its bracket.
    pub trials_without_figure: usize,
    pub epochs_changed: usize,
    pub restarts_out_of_bracket: usize,
    pub load_average: String,
}

/// Starts a game, lets White press (Black's clock runs from the press's
/// true instant), kills the daemon with SIGKILL 0.3-0.9 s later, restarts
/// it 0.1-0.5 s after that, and reads what Black was charged from the
/// first history that has the restart row.
pub fn kill_charge(
    binaries: &Binaries,
    base: &RigBase,
    options: &EdgeOptions,
) -> anyhow::Result<KillReport> {
    let mut rig = base.start(binaries, false, None)?;
    let board = rig::board_id(0);
    let unit = rig::buttons_unit(0);
    let serial = rig::unit_serial(&unit);
    let sim = rig.sim();
    let mut rng = rand::rngs::StdRng::seed_from_u64(base.seed ^ 0x4b111);
    // (press instant, kill, spawn, first answer, epoch before, history, epoch after)
    let mut played = Vec::new();
    for _ in 0..options.kill_repetitions.max(1) {
        rig.new_games("300")?;
        std::thread::sleep(Duration::from_millis(rng.random_range(100..=300)));
        let at = sim.press_returning_instant(Some(&unit), Button::Left)?;
        std::thread::sleep(Duration::from_millis(rng.random_range(300..=900)));
        let (history, epoch_before) = rig.history(&board)?;
        if !history
            .iter()
            .any(|e| e["do"] == "press" && e["device"].is_object())
        {
            bail!("White's press was not recorded before the kill");
        }
        let killed = monotonic_now_us();
        if let Some(daemon) = rig.daemon.take() {
            daemon.kill9();
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(100..=500)));
        rig.spawn_daemon()?;
        let spawned = rig.daemon.as_ref().map_or(0, |d| d.started_us);
        // The first answer with the restart row closes the bracket in
        // which the daemon read its clock to charge the running side.
        let deadline = Instant::now() + Duration::from_secs(30);
        let (history, epoch_after, answered) = loop {
            if let Ok((history, epoch)) = rig.history(&board) {
                if history.iter().any(|e| e["do"] == "restart") {
                    break (history, epoch, monotonic_now_us());
                }
            }
            if Instant::now() > deadline {
                bail!(
                    "the game was not restored within 30 s:\n{}",
                    rig::tail(&rig.daemon_logs(), 20)
                );
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        rig.wait_ready(Duration::from_secs(30))?;
        // The next press is measured too: let the clock sync of the
        // relinked units settle first, as after the first start.
        std::thread::sleep(Duration::from_secs_f64(base.settle_seconds));
        played.push((
            at,
            killed,
            spawned,
            answered,
            epoch_before,
            history,
            epoch_after,
        ));
    }
    std::thread::sleep(Duration::from_millis(300));
    let presses = analysis::true_presses(&rig.sim_records());
    base.finish(rig);

    let trials = played
        .into_iter()
        .map(
            |(at, killed, spawned, answered, epoch_before, history, epoch_after)| {
                let charge = press_at(&presses, &unit, at).and_then(|p| {
                    analysis::charge_across_restart(&history, &serial, p.event, at, epoch_after)
                });
                KillTrial {
                    outage_ms: (spawned - killed) as f64 / 1e3,
                    restart_in_bracket: charge
                        .as_ref()
                        .is_some_and(|c| c.restart_at_us >= spawned && c.restart_at_us <= answered),
                    charge,
                    epoch_kept: epoch_before == epoch_after,
                }
            },
        )
        .collect();
    Ok(kill_report(trials))
}

/// The figures of the kill -9 trials.
pub fn kill_report(trials: Vec<KillTrial>) -> KillReport {
    let errors: Vec<f64> = trials
        .iter()
        .filter_map(|t| t.charge.as_ref().map(|c| c.error_ms))
        .collect();
    KillReport {
        error_ms: Summary::of(&errors),
        abs_error_ms: Summary::of_abs(&errors),
        trials_without_figure: trials.iter().filter(|t| t.charge.is_none()).count(),
        epochs_changed: trials.iter().filter(|t| !t.epoch_kept).count(),
        restarts_out_of_bracket: trials
            .iter()
            .filter(|t| t.charge.is_some() && !t.restart_in_bracket)
            .count(),
        trials,
        load_average: load_average(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(error: Option<f64>, withdrawn: bool, standing: bool) -> Option<LatePressOutcome> {
        Some(LatePressOutcome {
            error_ms: error,
            flag_withdrawn: withdrawn,
            flag_standing: standing,
            ..LatePressOutcome::default()
        })
    }

    #[test]
    fn the_late_flag_figures_count_each_trial_once() {
        let trial = |before: f64, delay: u64, outcome| LateFlagTrial {
            before_flag_ms: before,
            delay_ms: delay,
            outcome,
            ordinary_error_ms: Some(-before / 1000.0),
        };
        let report = late_flag_report(vec![
            trial(150.0, 0, outcome(Some(0.05), false, false)),
            trial(20.0, 300, outcome(Some(-0.1), true, false)),
            trial(20.0, 500, outcome(Some(40.0), false, true)),
            trial(-3.0, 250, outcome(Some(9.0), false, true)),
            trial(10.0, 100, None),
        ]);
        assert_eq!(report.error_ms.count, 3);
        assert_eq!(report.abs_error_ms.max, 40.0);
        assert_eq!(report.abs_error_by_delay_ms["0-99"].max, 0.05);
        assert_eq!(report.abs_error_by_delay_ms["300-500"].count, 2);
        assert_eq!(report.flags_withdrawn, 1);
        assert_eq!(report.flags_standing, 1);
        assert_eq!(report.trials_late_harness, 1);
        assert_eq!(report.presses_missing, 1);
        // Every game's ordinary press counts, whatever its late press did.
        assert_eq!(report.ordinary_abs_error_ms.count, 5);
        assert_eq!(report.ordinary_abs_error_ms.max, 0.15);
    }

    #[test]
    fn the_kill_figures_count_trials_without_a_figure() {
        let charge = |error_ms| RestartCharge {
            side: "black".into(),
            charged_us: 0,
            truth_us: 0,
            error_ms,
            restart_at_us: 0,
            down_ms: 0.0,
            same_boot: true,
        };
        let report = kill_report(vec![
            KillTrial {
                outage_ms: 200.0,
                charge: Some(charge(-0.2)),
                epoch_kept: true,
                restart_in_bracket: true,
            },
            KillTrial {
                outage_ms: 300.0,
                charge: Some(charge(0.1)),
                epoch_kept: false,
                restart_in_bracket: false,
            },
            KillTrial {
                outage_ms: 300.0,
                charge: None,
                epoch_kept: true,
                restart_in_bracket: false,
            },
        ]);
        assert_eq!(report.abs_error_ms.max, 0.2);
        assert_eq!(report.trials_without_figure, 1);
        assert_eq!(report.epochs_changed, 1);
        assert_eq!(report.restarts_out_of_bracket, 1);
    }
}
