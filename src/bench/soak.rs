//! The fault soak: one or more boards played by simulated units while the
//! rig pulls cables (unplug/replug), kills the daemon with SIGKILL at
//! random moments and restarts it, flips bits on the lines at a set rate,
//! and throws malformed D-Bus calls (wrong types, unknown sides, negative
//! times) with `busctl` and `gdbus`. Bounded in time. It counts what a
//! clock must never do: lose a press outside an unplugged window, come
//! back from a restart with a different history, or crash.

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
use crate::clock::monotonic_now_us;
use crate::sim::Direction;

#[derive(Clone, Debug, Serialize)]
pub struct SoakOptions {
    pub seconds: f64,
    pub boards: usize,
    pub seed: u64,
    /// Bit-error rate of the noise windows.
    pub ber: f64,
}

impl SoakOptions {
    pub fn short() -> SoakOptions {
        SoakOptions {
            seconds: 8.0,
            boards: 1,
            seed: 7,
            ber: 1e-3,
        }
    }
    pub fn long() -> SoakOptions {
        SoakOptions {
            seconds: 600.0,
            boards: 2,
            ..SoakOptions::short()
        }
    }
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
}

impl SoakReport {
    pub fn clean(&self) -> bool {
        self.presses_lost_outside_unplugged == 0
            && self.state_mismatches == 0
            && self.crashes == 0
            && self.malformed_accepted.is_empty()
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
    let service = crate::dbus::BUS_NAME;
    let path = crate::dbus::board_path(board);
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
        },
    )?;
    rig.new_games("5400")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(options.seed);
    let mut report = SoakReport::default();
    let mut next_left = vec![true; options.boards];
    let mut unplugged: Vec<Unplugged> = Vec::new();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(options.seconds);
    let mut did_kill = false;
    let mut did_unplug = false;
    let mut did_noise = false;
    let mut did_dbus = false;
    while Instant::now() < end {
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
        let elapsed = start.elapsed().as_secs_f64() / options.seconds;
        // Every kind of fault at least once, at a random point of its share
        // of the run; more at random afterwards.
        let roll: f64 = rng.random();
        let force = |done: bool, at: f64| !done && elapsed > at;
        if force(did_unplug, 0.15) || roll < 0.03 {
            did_unplug = true;
            let unit = if rng.random_bool(0.6) {
                rig::buttons_unit(board)
            } else {
                rig::display_unit(board)
            };
            let after = Duration::from_millis(rng.random_range(100..800));
            progress(&format!("unplug {unit} for {after:?}"));
            let from = monotonic_now_us();
            rig.sim().unplug(&unit, Some(after))?;
            // The daemon reconnects with back-off: count the window until
            // the link is up again (plus a margin for the back-off).
            let _ = rig.sim().wait_until(&unit, Duration::from_secs(10), |s| {
                s.plugged && s.link_state == crate::sim::LinkState::Up
            });
            unplugged.push(Unplugged {
                unit,
                from_us: from,
                until_us: monotonic_now_us() + 100_000,
            });
            report.unplugs += 1;
        } else if force(did_noise, 0.3) || roll < 0.05 {
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
        } else if force(did_kill, 0.5) || roll < 0.065 {
            did_kill = true;
            // Mid-press: press, then kill a few ms later, frames in flight.
            let button = if next_left[board] {
                Button::Left
            } else {
                Button::Right
            };
            rig.sim().press(Some(&rig::buttons_unit(board)), button)?;
            next_left[board] = !next_left[board];
            std::thread::sleep(Duration::from_micros(rng.random_range(0..5000)));
            let mut before = Vec::new();
            for b in rig.boards.clone() {
                before.push(rig.history(&b).map(|h| h.0).unwrap_or_default());
            }
            progress("kill -9 and restart");
            if let Some(daemon) = rig.daemon.take() {
                daemon.kill9();
            }
            report.kills += 1;
            rig.spawn_daemon()?;
            rig.wait_ready(Duration::from_secs(30))?;
            for (i, b) in rig.boards.clone().iter().enumerate() {
                let (after, _) = rig.history(b)?;
                report.state_mismatches += history_mismatches(&before[i], &after);
                // Comes back paused (Art. 6.10a): the arbiter resumes.
                let _ = rig.board_call(b, async |p| p.resume().await);
                if let Some(left) = left_runs(&mut rig, b) {
                    next_left[i] = left;
                }
            }
        } else if force(did_dbus, 0.7) || roll < 0.075 {
            did_dbus = true;
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
        } else {
            let button = if next_left[board] {
                Button::Left
            } else {
                Button::Right
            };
            rig.sim().press(Some(&rig::buttons_unit(board)), button)?;
            next_left[board] = !next_left[board];
            std::thread::sleep(Duration::from_millis(rng.random_range(20..150)));
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
    for i in 0..options.boards {
        let unit = rig::buttons_unit(i);
        let serial = rig::unit_serial(&unit);
        let (history, _) = rig.history(&rig::board_id(i))?;
        let accounted = analysis::accounted_presses(&history);
        for press in presses.iter().filter(|p| p.unit == unit) {
            report.presses_sent += 1;
            let found = accounted
                .iter()
                .any(|a| a.serial == serial && a.event == press.event);
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
    let logs = rig.daemon_logs();
    report.crashes += logs.matches("panicked").count();
    report.seconds = start.elapsed().as_secs_f64();
    if report.presses_sent == 0 {
        return Err(anyhow!("the soak made no presses"));
    }
    Ok(report)
}
