//! The fault soak: one or more boards played by simulated units while the
//! rig pulls cables (unplug/replug), kills the daemon with SIGKILL at
//! random moments and restarts it, flips bits on the lines at a set rate,
//! and throws malformed D-Bus calls (wrong types, unknown sides, negative
//! times) with `busctl` and `gdbus`. Bounded in time, or (the long form)
//! by counts of faults: `--unplugs 1000 --kills 1000` runs until that many
//! of each have happened, interleaved with presses during games (a new game
//! on every board after a set number of presses). It counts what a clock
//! must never do: lose a press outside an unplugged window, come back from
//! a restart with a different history, or crash; and it measures the time
//! the daemon charged the running side across each kill -9 restart against
//! the truth.
//!
//! # The time charged across a restart, and its truth
//! Within one boot the daemon keeps the game's epoch on CLOCK_MONOTONIC,
//! so after a restart the side that was running is charged from its last
//! clock input up to the restart instant (`restart` row, `t_us`), as if
//! the daemon had never stopped (README, "After a restart"). The soak
//! knows the true instant of every press (the simulated unit stamps it on
//! the same clock) and the instants it killed and spawned the daemon. For
//! each board and restart it takes the last clock input before the restart
//! instant; when that is a device press (always, but for a press still in
//! flight whose unit resends it after the restart: it is placed at its
//! true instant, before the restart, and then it is the last input), the
//! charge is `t_restart − t_press` and the truth is `restart instant −
//! true press instant`. The restart instant the daemon states must lie
//! between the spawn and the first answer of the new process
//! (`restarts_out_of_bracket` counts those that do not); the outage (kill
//! to restart instant) is reported beside it. Every kill cycle is bounded
//! by the daemon's start-up, measured as spawn → first answer with the
//! game restored and spawn → every device linked again.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use chessclock_protocol::Button;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::Value;

use super::analysis;
use super::measure::history_mismatches;
use super::rig::{self, Binaries, Rig, RigOptions};
use super::stats::Summary;
use chessclock_host::clock::monotonic_now_us;
use chessclock_sim_units::Direction;

#[derive(Clone, Debug, Serialize)]
pub struct SoakOptions {
    pub seconds: f64,
    pub boards: usize,
    pub seed: u64,
    /// Bit-error rate of the noise windows.
    pub ber: f64,
    /// The long form: run until this many unplug/replug cycles (and
    /// `kills`) have happened, whatever `seconds` says.
    pub unplugs: Option<usize>,
    /// The long form: kill -9 restarts to make.
    pub kills: Option<usize>,
    /// A new game on every board after this many presses in all.
    pub presses_per_game: usize,
}

impl SoakOptions {
    pub fn short() -> SoakOptions {
        SoakOptions {
            seconds: 8.0,
            boards: 1,
            seed: 7,
            ber: 1e-3,
            unplugs: None,
            kills: None,
            presses_per_game: 200,
        }
    }
    pub fn long() -> SoakOptions {
        SoakOptions {
            seconds: 600.0,
            boards: 2,
            ..SoakOptions::short()
        }
    }
    /// The counts of faults asked for, when the run is bounded by counts.
    fn counts(&self) -> Option<(usize, usize)> {
        (self.unplugs.is_some() || self.kills.is_some())
            .then(|| (self.unplugs.unwrap_or(0), self.kills.unwrap_or(0)))
    }
}

/// One board's figure for one kill -9 restart.
#[derive(Clone, Debug, Serialize)]
pub struct RestartFigure {
    pub kill: usize,
    pub board: String,
    /// Charged − truth, ms (see the module docs).
    pub error_ms: f64,
    /// What the daemon charged the running side from its last press to
    /// the restart, ms.
    pub charged_ms: f64,
    /// Kill → the restart instant the daemon states, ms.
    pub outage_ms: f64,
    /// The down time the daemon states (from its last known instant), ms.
    pub down_ms: f64,
    /// The stated restart instant lies between the spawn and the first
    /// answer of the new process.
    pub restart_in_bracket: bool,
    /// The last press before the restart reached the daemon only after it
    /// (the unit resent it) and was placed at its true instant.
    pub placed_after_restart: bool,
}

/// The figures of one board at one restart, before the true press
/// instants are known (they come from the simulator's log at the end).
#[derive(Clone, Debug, PartialEq)]
struct ChargeParts {
    serial: String,
    event: u64,
    t_press: i64,
    t_restart: i64,
    down_us: i64,
    /// The press's row comes after the restart row.
    placed_after_restart: bool,
}

/// What a kill cycle leaves to be joined with the true press instants.
struct PendingFigure {
    kill: usize,
    board: String,
    unit: String,
    parts: ChargeParts,
    epoch: i64,
    killed: i64,
    spawned: i64,
    answered: i64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SoakReport {
    pub seconds: f64,
    pub presses_sent: usize,
    pub presses_accounted: usize,
    /// Sent while the button unit was unplugged (allowed to be lost).
    pub presses_in_unplugged_windows: usize,
    /// Must be 0.
    pub presses_lost_outside_unplugged: usize,
    pub unplugs: usize,
    pub noise_windows: usize,
    pub kills: usize,
    /// Pre-kill history events changed or missing after the restart. Must be 0.
    pub state_mismatches: usize,
    /// The daemon exited on its own or logged a panic. Must be 0.
    pub crashes: usize,
    pub malformed_calls: usize,
    /// Malformed calls the daemon accepted (each listed). Must be 0.
    pub malformed_accepted: Vec<String>,
    /// What was lost, for diagnosis: `unit#event@t_us`.
    pub lost: Vec<String>,
    /// Games played on each board (a new one after `presses_per_game`).
    pub games_per_board: usize,
    /// Charged − truth across each kill -9 restart, ms, every board.
    pub charge_error_ms: Summary,
    pub charge_abs_error_ms: Summary,
    /// Restarts (per board) whose charge is more than 1 ms off. Must be 0.
    pub charges_off_by_more_than_1ms: usize,
    /// Restarts (per board) with no figure: the last clock input before
    /// the restart was not a press of a known instant, or the rows were
    /// not found.
    pub restarts_without_figure: usize,
    /// Restart instants stated outside spawn..first answer. Must be 0.
    pub restarts_out_of_bracket: usize,
    /// Presses in flight at a kill, resent by the unit and placed at their
    /// true instants before the restart.
    pub presses_placed_after_restart: usize,
    /// Kill → restart instant, ms.
    pub outage_ms: Summary,
    /// The stated down time − the true outage (kill → restart), ms: how
    /// long before the kill the daemon last knew it ran.
    pub down_time_excess_ms: Summary,
    /// Spawn → the first answer with the game restored, ms.
    pub startup_ms: Summary,
    /// Spawn → every device linked again, ms.
    pub ready_ms: Summary,
    /// A whole kill cycle: the presses before it, kill, restart, checks,
    /// resume, ms.
    pub kill_cycle_ms: Summary,
    /// Unplug → the unit linked again, ms.
    pub unplug_cycle_ms: Summary,
    pub restart_figures: Vec<RestartFigure>,
    /// Restarts after which the devices were not all linked again within
    /// 30 s (the daemon was then killed and started once more). Must be 0.
    pub restarts_not_ready: usize,
    /// What went wrong, with the daemon's log tail, for diagnosis.
    pub findings: Vec<String>,
    /// /proc/loadavg at the end.
    pub load_average: String,
}

impl SoakReport {
    pub fn clean(&self) -> bool {
        self.presses_lost_outside_unplugged == 0
            && self.state_mismatches == 0
            && self.crashes == 0
            && self.malformed_accepted.is_empty()
            && self.charges_off_by_more_than_1ms == 0
            && self.restarts_out_of_bracket == 0
            && self.restarts_not_ready == 0
    }

    /// The long form's lines, beside `report::soak_markdown`'s table.
    pub fn charge_markdown(&self) -> String {
        let row = |name: &str, s: &Summary| {
            format!(
                "| {name} | {} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                s.count, s.p50, s.p99, s.max, s.mean
            )
        };
        let mut out =
            String::from("| figure | n | p50 | p99 | max | mean |\n|---|---|---|---|---|---|\n");
        out += &row("charge error across restart, ms", &self.charge_error_ms);
        out += &row("|charge error|, ms", &self.charge_abs_error_ms);
        out += &row("outage (kill -> restart instant), ms", &self.outage_ms);
        out += &row("stated down time - outage, ms", &self.down_time_excess_ms);
        out += &row("start-up (spawn -> game restored), ms", &self.startup_ms);
        out += &row("ready (spawn -> devices linked), ms", &self.ready_ms);
        out += &row("kill cycle, ms", &self.kill_cycle_ms);
        out += &row("unplug cycle (unplug -> linked), ms", &self.unplug_cycle_ms);
        out += &format!(
            "\ncharges off by > 1 ms: {}; restarts not ready within 30 s: {}; restarts without a figure: {}; out of bracket: {}; presses placed after a restart: {}; games per board: {}; load average: {}\n",
            self.charges_off_by_more_than_1ms,
            self.restarts_not_ready,
            self.restarts_without_figure,
            self.restarts_out_of_bracket,
            self.presses_placed_after_restart,
            self.games_per_board,
            self.load_average
        );
        out
    }
}

/// A window in which a unit was unplugged (µs, with the reconnect time).
struct Unplugged {
    unit: String,
    from_us: i64,
    until_us: i64,
}

/// Calls that must be refused: (tool, arguments after the address).
fn malformed_calls(address: &str, board: &str) -> Vec<(String, Vec<String>)> {
    let service = chessclockd::dbus::BUS_NAME;
    let path = chessclockd::dbus::board_path(board);
    let iface = "org.chessclockd.ChessClock1.Board";
    let busctl = |args: &[&str]| {
        let mut all = vec![
            format!("--address={address}"),
            "--timeout=5".to_owned(),
            "call".to_owned(),
            service.to_owned(),
            path.clone(),
            iface.to_owned(),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        ("busctl".to_owned(), all)
    };
    let gdbus = |method: &str, args: &[&str]| {
        let mut all = vec![
            "call".to_owned(),
            "--address".to_owned(),
            address.to_owned(),
            "--dest".to_owned(),
            service.to_owned(),
            "--object-path".to_owned(),
            path.clone(),
            "--timeout".to_owned(),
            "5".to_owned(),
            "--method".to_owned(),
            format!("{iface}.{method}"),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        ("gdbus".to_owned(), all)
    };
    vec![
        busctl(&["Press", "s", "purple"]),
        busctl(&["Press", "s", ""]),
        busctl(&["Press", "i", "5"]),
        busctl(&["Press"]),
        busctl(&["Adjust", "sxi", "white", "-5000", "3"]),
        busctl(&["Adjust", "sxi", "sideways", "1000", "3"]),
        busctl(&["Adjust", "sxi", "black", "1000", "-9"]),
        busctl(&["AdjustWithStage", "sxii", "white", "1000", "2", "-4"]),
        busctl(&["NewGame", "s", "40/-5400"]),
        busctl(&["NewGame", "s", "no-such-preset\u{1}"]),
        busctl(&["StartAt", "x", "-1"]),
        busctl(&["StartAtForced", "xb", "-1000000", "true"]),
        busctl(&["NoSuchMethod", "s", "x"]),
        gdbus("Press", &["42"]),
        gdbus("Adjust", &["white", "--", "-1", "-1"]),
        gdbus("Adjust", &["white", "--", "-86400000", "5"]),
        gdbus("NewGame", &["''"]),
    ]
}

fn run_tool(tool: &str, args: &[String]) -> Option<bool> {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status.success());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Some(false);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Which side runs on `board` now (from the snapshot), as "next press is left".
fn left_runs(rig: &mut Rig, board: &str) -> Option<bool> {
    let snapshot: Value =
        serde_json::from_str(&rig.board_call(board, async |b| b.snapshot().await).ok()?).ok()?;
    match snapshot["running"].as_str()? {
        "white" => Some(true),
        "black" => Some(false),
        _ => None,
    }
}

/// The last restart row of `history` and the clock input that decides
/// what the running side was charged up to it: of the clock inputs placed
/// before the restart instant (in row order before the restart row, or a
/// press row after it whose instant is earlier: a press resent after the
/// restart), the latest. `None` when that input is not a device press (a
/// resume, an adjust...), or there is no restart row.
fn charge_parts(history: &[Value]) -> Option<ChargeParts> {
    let r = history.iter().rposition(|e| e["do"] == "restart")?;
    let restart = &history[r];
    let t_restart = restart["t_us"].as_i64()?;
    let clock_input = |e: &Value| {
        matches!(
            e["do"].as_str(),
            Some("press" | "pause" | "resume" | "adjust" | "start" | "start-at")
        )
    };
    let before = history[..r]
        .iter()
        .filter(|e| clock_input(e))
        .filter_map(|e| Some((e["t_us"].as_i64()?, e, false)));
    let after = history[r + 1..]
        .iter()
        .filter(|e| e["do"] == "press")
        .filter_map(|e| Some((e["t_us"].as_i64()?, e, true)))
        .filter(|(t, _, _)| *t < t_restart);
    // The latest by instant; among equal instants the later row.
    let (t_press, last, placed_after_restart) = before
        .chain(after)
        .filter(|(t, _, _)| *t <= t_restart)
        .fold(None, |best: Option<(i64, &Value, bool)>, next| match best {
            Some(b) if b.0 > next.0 => Some(b),
            _ => Some(next),
        })?;
    if last["do"] != "press" {
        return None;
    }
    let device = &last["device"];
    let serial = device["serial"].as_str()?.to_owned();
    let event = device["event"].as_u64()?;
    // The press started the other side's clock; the restart row must say
    // that side was running (unless the press reached the daemon only
    // after the restart, when the row was written before it).
    let started = match last["side"].as_str()? {
        "white" => "black",
        "black" => "white",
        _ => return None,
    };
    if !placed_after_restart && restart["was_running"].as_str() != Some(started) {
        return None;
    }
    Some(ChargeParts {
        serial,
        event,
        t_press,
        t_restart,
        down_us: restart["down_us"].as_i64().unwrap_or(0),
        placed_after_restart,
    })
}

/// Every device press of every game of every board in the state
/// database, as (serial, event) pairs.
fn accounted_in_store(rig: &mut Rig) -> anyhow::Result<Vec<(String, u64)>> {
    let mut all = Vec::new();
    for board in rig.boards.clone() {
        let games: Value =
            serde_json::from_str(&rig.board_call(&board, async |b| b.games().await)?)?;
        for game in games.as_array().cloned().unwrap_or_default() {
            let Some(id) = game["game"].as_i64() else {
                continue;
            };
            let history: Value = serde_json::from_str(
                &rig.board_call(&board, async move |b| b.game_history(id).await)?,
            )?;
            let events = rig::history_events(history);
            all.extend(
                analysis::accounted_presses(&events)
                    .into_iter()
                    .map(|a| (a.serial, a.event)),
            );
        }
    }
    all.sort();
    all.dedup();
    Ok(all)
}

/// What the run still has to do.
struct Plan {
    counts: Option<(usize, usize)>,
    end: Instant,
}

impl Plan {
    fn done(&self, report: &SoakReport) -> bool {
        match self.counts {
            Some((unplugs, kills)) => report.unplugs >= unplugs && report.kills >= kills,
            None => Instant::now() >= self.end,
        }
    }
}

/// Runs the soak; `progress` gets a line per fault.
pub fn run(
    binaries: &Binaries,
    options: &SoakOptions,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<SoakReport> {
    let mut rig = Rig::start(
        binaries,
        &RigOptions {
            boards: options.boards,
            realtime: false,
            log_sent: false,
            seed: options.seed,
            daemon_cpus: None,
            rttime_us: None,
            boot_spread_us: 0,
        },
    )?;
    rig.new_games("5400")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(options.seed);
    let mut report = SoakReport {
        games_per_board: 1,
        ..SoakReport::default()
    };
    let mut next_left = vec![true; options.boards];
    let mut unplugged: Vec<Unplugged> = Vec::new();
    let start = Instant::now();
    let plan = Plan {
        counts: options.counts(),
        end: start + Duration::from_secs_f64(options.seconds),
    };
    // The long form: a few noise windows and malformed-call rounds beside
    // the counted faults.
    let (noise_wanted, dbus_wanted) = match plan.counts {
        Some((unplugs, kills)) => ((unplugs / 50).max(1), (kills / 100).max(1)),
        None => (0, 0),
    };
    let mut dbus_rounds = 0usize;
    let mut presses_in_game = 0usize;
    let mut pending: Vec<PendingFigure> = Vec::new();
    let mut startup = Vec::new();
    let mut ready = Vec::new();
    let mut kill_cycles = Vec::new();
    let mut unplug_cycles = Vec::new();
    let mut did_kill = false;
    let mut did_unplug = false;
    let mut did_noise = false;
    let mut did_dbus = false;
    let press = |rig: &mut Rig, next_left: &mut Vec<bool>, board: usize| {
        let button = if next_left[board] {
            Button::Left
        } else {
            Button::Right
        };
        next_left[board] = !next_left[board];
        rig.sim().press(Some(&rig::buttons_unit(board)), button)
    };
    while !plan.done(&report) {
        if let Some(daemon) = rig.daemon.as_mut() {
            if let Some(status) = daemon.exited() {
                progress(&format!("the daemon died by itself ({status}): restarting"));
                report.crashes += 1;
                rig.daemon = None;
                rig.spawn_daemon()?;
                rig.wait_ready(Duration::from_secs(30))?;
            }
        }
        let board = rng.random_range(0..options.boards);
        let roll: f64 = rng.random();
        // What this step does.
        enum Step {
            Unplug,
            Noise,
            Kill,
            Dbus,
            Press,
        }
        let step = match plan.counts {
            Some((unplugs, kills)) => {
                // Faults in proportion to what is left of each, one step
                // in three a fault, the rest presses.
                let left_unplugs = unplugs.saturating_sub(report.unplugs);
                let left_kills = kills.saturating_sub(report.kills);
                let left_noise = noise_wanted.saturating_sub(report.noise_windows);
                let left_dbus = dbus_wanted.saturating_sub(dbus_rounds);
                let total = (left_unplugs + left_kills + left_noise + left_dbus) as f64;
                if roll < 0.66 || total == 0.0 {
                    Step::Press
                } else {
                    let pick = rng.random::<f64>() * total;
                    if pick < left_unplugs as f64 {
                        Step::Unplug
                    } else if pick < (left_unplugs + left_kills) as f64 {
                        Step::Kill
                    } else if pick < (left_unplugs + left_kills + left_noise) as f64 {
                        Step::Noise
                    } else {
                        Step::Dbus
                    }
                }
            }
            None => {
                // Every kind of fault at least once, at a random point of
                // its share of the run; more at random afterwards.
                let elapsed = start.elapsed().as_secs_f64() / options.seconds;
                let force = |done: bool, at: f64| !done && elapsed > at;
                if force(did_unplug, 0.15) || roll < 0.03 {
                    Step::Unplug
                } else if force(did_noise, 0.3) || roll < 0.05 {
                    Step::Noise
                } else if force(did_kill, 0.5) || roll < 0.065 {
                    Step::Kill
                } else if force(did_dbus, 0.7) || roll < 0.075 {
                    Step::Dbus
                } else {
                    Step::Press
                }
            }
        };
        match step {
            Step::Unplug => {
                did_unplug = true;
                let unit = if rng.random_bool(0.6) {
                    rig::buttons_unit(board)
                } else {
                    rig::display_unit(board)
                };
                let after = if plan.counts.is_some() {
                    Duration::from_millis(rng.random_range(50..400))
                } else {
                    Duration::from_millis(rng.random_range(100..800))
                };
                progress(&format!("unplug {unit} for {after:?}"));
                let from = monotonic_now_us();
                rig.sim().unplug(&unit, Some(after))?;
                // The daemon reconnects with back-off: count the window
                // until the link is up again (plus a margin for the
                // back-off).
                let _ = rig.sim().wait_until(&unit, Duration::from_secs(10), |s| {
                    s.plugged && s.link_state == chessclock_sim_units::LinkState::Up
                });
                let linked = monotonic_now_us();
                unplug_cycles.push((linked - from) as f64 / 1e3);
                unplugged.push(Unplugged {
                    unit,
                    from_us: from,
                    until_us: linked + 100_000,
                });
                report.unplugs += 1;
            }
            Step::Noise => {
                did_noise = true;
                let unit = rig::buttons_unit(board);
                progress(&format!("line noise on {unit} at BER {}", options.ber));
                rig.sim().corrupt(
                    &unit,
                    options.ber,
                    Direction::Both,
                    Duration::from_millis(rng.random_range(500..2000)),
                )?;
                report.noise_windows += 1;
            }
            Step::Kill => {
                did_kill = true;
                let cycle = Instant::now();
                let mut before = Vec::new();
                for b in rig.boards.clone() {
                    before.push(rig.history(&b).map(|h| h.0).unwrap_or_default());
                }
                // Mid-press: a press on every board (each running side's
                // last input is then a press of a known instant), then the
                // kill a few ms later, frames in flight.
                for b in 0..options.boards {
                    press(&mut rig, &mut next_left, b)?;
                }
                std::thread::sleep(Duration::from_micros(rng.random_range(0..5000)));
                progress(&format!("kill -9 and restart ({})", report.kills + 1));
                let killed = monotonic_now_us();
                if let Some(daemon) = rig.daemon.take() {
                    daemon.kill9();
                }
                report.kills += 1;
                let restarts_before: Vec<usize> = before
                    .iter()
                    .map(|h| h.iter().filter(|e| e["do"] == "restart").count())
                    .collect();
                rig.spawn_daemon()?;
                let spawned = rig.daemon.as_ref().map_or(0, |d| d.started_us);
                // The first answer with every game restored closes the
                // bracket in which the daemon read its clock.
                let deadline = Instant::now() + Duration::from_secs(30);
                let answered = loop {
                    let mut restored = true;
                    for (i, b) in rig.boards.clone().iter().enumerate() {
                        restored &= rig.history(b).is_ok_and(|(h, _)| {
                            h.iter().filter(|e| e["do"] == "restart").count() > restarts_before[i]
                        });
                        if !restored {
                            break;
                        }
                    }
                    if restored {
                        break monotonic_now_us();
                    }
                    if let Some(daemon) = rig.daemon.as_mut() {
                        if let Some(status) = daemon.exited() {
                            return Err(anyhow!(
                                "the daemon exited ({status}) while restarting:\n{}",
                                rig::tail(&rig.daemon_logs(), 30)
                            ));
                        }
                    }
                    if Instant::now() > deadline {
                        return Err(anyhow!(
                            "the games were not restored within 30 s:\n{}",
                            rig::tail(&rig.daemon_logs(), 30)
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                };
                startup.push((answered - spawned) as f64 / 1e3);
                match rig.wait_ready(Duration::from_secs(30)) {
                    Ok(took) => ready.push(took.as_secs_f64() * 1e3),
                    Err(error) => {
                        // A finding, not the end of the run: keep the
                        // evidence (the rig's folder stays), then do what
                        // the service manager would do: kill and restart.
                        progress(&format!("FINDING: {error:#}"));
                        report.findings.push(format!(
                            "kill {} (rig kept in {}): {error:#}",
                            report.kills,
                            rig.dir.path().display()
                        ));
                        report.restarts_not_ready += 1;
                        rig.keep_dir();
                        if let Some(daemon) = rig.daemon.take() {
                            daemon.kill9();
                        }
                        rig.spawn_daemon()?;
                        rig.wait_ready(Duration::from_secs(30))?;
                    }
                }
                // Presses in flight at the kill are resent once the units
                // are linked again: let them land before reading.
                for b in 0..options.boards {
                    let _ =
                        rig.sim()
                            .wait_until(&rig::buttons_unit(b), Duration::from_secs(5), |s| {
                                s.unacked == 0
                            });
                }
                for (i, b) in rig.boards.clone().iter().enumerate() {
                    let (after, epoch) = rig.history(b)?;
                    report.state_mismatches += history_mismatches(&before[i], &after);
                    match charge_parts(&after) {
                        Some(parts) => pending.push(PendingFigure {
                            kill: report.kills,
                            board: b.clone(),
                            unit: rig::buttons_unit(i),
                            parts,
                            epoch,
                            killed,
                            spawned,
                            answered,
                        }),
                        None => report.restarts_without_figure += 1,
                    }
                    // Comes back paused (Art. 6.10a): the arbiter resumes.
                    let _ = rig.board_call(b, async |p| p.resume().await);
                    if let Some(left) = left_runs(&mut rig, b) {
                        next_left[i] = left;
                    }
                }
                kill_cycles.push(cycle.elapsed().as_secs_f64() * 1e3);
            }
            Step::Dbus => {
                did_dbus = true;
                dbus_rounds += 1;
                progress("malformed D-Bus calls");
                for (tool, args) in malformed_calls(&rig.bus.address, &rig::board_id(board)) {
                    report.malformed_calls += 1;
                    if run_tool(&tool, &args) == Some(true) {
                        report
                            .malformed_accepted
                            .push(format!("{tool} {}", args.join(" ")));
                    }
                }
                if let Some(left) = left_runs(&mut rig, &rig::board_id(board)) {
                    next_left[board] = left;
                }
            }
            Step::Press => {
                press(&mut rig, &mut next_left, board)?;
                presses_in_game += 1;
                if plan.counts.is_some() {
                    std::thread::sleep(Duration::from_millis(rng.random_range(10..60)));
                } else {
                    std::thread::sleep(Duration::from_millis(rng.random_range(20..150)));
                }
                if presses_in_game >= options.presses_per_game && plan.counts.is_some() {
                    // The game ends (adjourned as it stands); a new one on
                    // every board. Presses still unacknowledged land in
                    // the old game first.
                    for i in 0..options.boards {
                        let _ = rig.sim().wait_until(
                            &rig::buttons_unit(i),
                            Duration::from_secs(10),
                            |s| s.unacked == 0,
                        );
                    }
                    progress("new games");
                    rig.new_games("5400")?;
                    next_left = vec![true; options.boards];
                    presses_in_game = 0;
                    report.games_per_board += 1;
                }
            }
        }
    }
    // Let retransmissions finish: every unit's queue empty, or 10 s.
    for i in 0..options.boards {
        let _ = rig
            .sim()
            .wait_until(&rig::buttons_unit(i), Duration::from_secs(10), |s| {
                s.unacked == 0
            });
    }
    if let Some(daemon) = rig.daemon.as_mut() {
        if daemon.exited().is_some() {
            report.crashes += 1;
        }
    }
    let records = rig.sim_records();
    let presses = analysis::true_presses(&records);
    let accounted = accounted_in_store(&mut rig)?;
    for i in 0..options.boards {
        let unit = rig::buttons_unit(i);
        let serial = rig::unit_serial(&unit);
        for press in presses.iter().filter(|p| p.unit == unit) {
            report.presses_sent += 1;
            let found = accounted
                .binary_search(&(serial.clone(), press.event))
                .is_ok();
            let in_window = unplugged
                .iter()
                .any(|w| w.unit == unit && w.from_us <= press.at_us && press.at_us <= w.until_us);
            if in_window {
                report.presses_in_unplugged_windows += 1;
            }
            if found {
                report.presses_accounted += 1;
            } else if !in_window {
                report.presses_lost_outside_unplugged += 1;
                report
                    .lost
                    .push(format!("{unit}#{}@{}", press.event, press.at_us));
            }
        }
    }
    // The restart figures, joined with the true press instants.
    for p in pending {
        let serial = rig::unit_serial(&p.unit);
        if p.parts.serial != serial {
            report.restarts_without_figure += 1;
            continue;
        }
        let Some(truth) = presses
            .iter()
            .find(|t| t.unit == p.unit && t.event == p.parts.event)
        else {
            report.restarts_without_figure += 1;
            continue;
        };
        let restart_at = p.epoch + p.parts.t_restart;
        let charged_us = p.parts.t_restart - p.parts.t_press;
        let truth_us = restart_at - truth.at_us;
        report.restart_figures.push(RestartFigure {
            kill: p.kill,
            board: p.board,
            error_ms: (charged_us - truth_us) as f64 / 1e3,
            charged_ms: charged_us as f64 / 1e3,
            outage_ms: (restart_at - p.killed) as f64 / 1e3,
            down_ms: p.parts.down_us as f64 / 1e3,
            restart_in_bracket: restart_at >= p.spawned && restart_at <= p.answered,
            placed_after_restart: p.parts.placed_after_restart,
        });
    }
    let figures = &report.restart_figures;
    let errors: Vec<f64> = figures.iter().map(|f| f.error_ms).collect();
    report.charge_error_ms = Summary::of(&errors);
    report.charge_abs_error_ms = Summary::of_abs(&errors);
    report.charges_off_by_more_than_1ms = errors.iter().filter(|e| e.abs() > 1.0).count();
    report.restarts_out_of_bracket = figures.iter().filter(|f| !f.restart_in_bracket).count();
    report.presses_placed_after_restart = figures.iter().filter(|f| f.placed_after_restart).count();
    report.outage_ms = Summary::of(&figures.iter().map(|f| f.outage_ms).collect::<Vec<_>>());
    report.down_time_excess_ms = Summary::of(
        &figures
            .iter()
            .map(|f| f.down_ms - f.outage_ms)
            .collect::<Vec<_>>(),
    );
    report.startup_ms = Summary::of(&startup);
    report.ready_ms = Summary::of(&ready);
    report.kill_cycle_ms = Summary::of(&kill_cycles);
    report.unplug_cycle_ms = Summary::of(&unplug_cycles);
    let logs = rig.daemon_logs();
    report.crashes += logs.matches("panicked").count();
    report.seconds = start.elapsed().as_secs_f64();
    report.load_average = super::edges::load_average();
    if report.presses_sent == 0 {
        return Err(anyhow!("the soak made no presses"));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn press(side: &str, t: i64, event: u64) -> Value {
        json!({"do": "press", "side": side, "t_us": t,
               "device": {"serial": "S1", "event": event}})
    }

    #[test]
    fn the_charge_runs_from_the_last_press_to_the_restart() {
        let history = vec![
            json!({"do": "start", "t_us": 0}),
            press("white", 1_000, 1),
            press("black", 5_000, 2),
            json!({"do": "restart", "t_us": 90_000, "down_us": 70_000, "was_running": "white"}),
            json!({"do": "pause", "t_us": 90_000}),
        ];
        let parts = charge_parts(&history).unwrap();
        assert_eq!(parts.event, 2);
        assert_eq!(parts.t_press, 5_000);
        assert_eq!(parts.t_restart, 90_000);
        assert_eq!(parts.down_us, 70_000);
        assert!(!parts.placed_after_restart);
    }

    #[test]
    fn a_press_resent_after_the_restart_is_the_last_input_by_its_instant() {
        let history = vec![
            press("white", 1_000, 1),
            json!({"do": "restart", "t_us": 90_000, "down_us": 70_000, "was_running": "black"}),
            json!({"do": "pause", "t_us": 90_000}),
            press("black", 6_000, 2),
        ];
        let parts = charge_parts(&history).unwrap();
        assert_eq!((parts.event, parts.t_press), (2, 6_000));
        assert!(parts.placed_after_restart);
    }

    #[test]
    fn no_figure_when_the_last_input_is_not_a_press_or_the_side_disagrees() {
        let resumed = vec![
            press("white", 1_000, 1),
            json!({"do": "resume", "t_us": 2_000}),
            json!({"do": "restart", "t_us": 90_000, "was_running": "black"}),
        ];
        assert_eq!(charge_parts(&resumed), None);
        let other_side = vec![
            press("white", 1_000, 1),
            json!({"do": "restart", "t_us": 90_000, "was_running": "white"}),
        ];
        assert_eq!(charge_parts(&other_side), None);
        assert_eq!(charge_parts(&[press("white", 1_000, 1)]), None);
    }

    #[test]
    fn the_latest_restart_row_is_the_one_measured() {
        let history = vec![
            press("white", 1_000, 1),
            json!({"do": "restart", "t_us": 50_000, "was_running": "black"}),
            json!({"do": "pause", "t_us": 50_000}),
            json!({"do": "resume", "t_us": 60_000}),
            press("black", 70_000, 2),
            json!({"do": "restart", "t_us": 99_000, "was_running": "white"}),
        ];
        let parts = charge_parts(&history).unwrap();
        assert_eq!((parts.event, parts.t_restart), (2, 99_000));
    }
}
