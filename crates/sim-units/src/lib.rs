//! `chessclock-sim`: emulated button units, display units and combined units
//! on PTYs, speaking the serial protocol (`protocol/SPEC.md`) as firmware
//! would, for development without hardware, tests, benchmarks and the
//! daemon's `--demo`.
//!
//! What it promises:
//! * each unit is a PTY pair; the daemon opens the slave path (or the stable
//!   symlink given in [`UnitSpec::link`], re-pointed on every replug and
//!   removed on unplug and on exit);
//! * each unit sends HELLO until WELCOME, heartbeats with its own µs clock
//!   (offset and drift configurable), keeps every press until the host
//!   acknowledges it (resent meanwhile, also across unplugs), and shows
//!   "link lost" when the host falls silent;
//! * faults on demand: unplug/replug, bit errors, delayed delivery (the
//!   press keeps its true timestamp), duplicated frames, power cycles (new
//!   `boot_id`, queue lost), low battery;
//! * a JSON Lines log of every frame received (and optionally sent) and
//!   every press's true instant ([`log`]), scripts ([`script`]) and a
//!   terminal view ([`view`], [`interactive`]).
//!
//! Threads: [`spawn_units`] starts one thread running a current-thread tokio
//! runtime with one task per unit (the only owner of that unit's state) plus
//! script tasks, and one log-writer thread. [`SimHandle`] (cheap to clone,
//! usable from any thread; its waiting calls block the calling thread, so
//! from async code run them in `spawn_blocking`) sends commands and reads
//! snapshots. Dropping
//! [`SimUnits`] (or [`SimUnits::shutdown`]) stops everything, closes the
//! PTYs and removes the symlinks before it returns.

pub mod faults;
pub mod interactive;
pub mod log;
pub mod pty;
pub mod runner;
pub mod script;
mod tty;
pub mod unit;
pub mod view;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chessclock_protocol::Button;
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

pub use faults::Direction;
pub use interactive::{run_demo, run_interactive, run_interactive_until, BoardHost};
pub use log::LogTarget;
pub use script::{Script, ScriptError};
pub use unit::{LinkState, UnitKind, UnitSnapshot, UnitSpec};

use chessclock_host::clock::monotonic_now_us;
use log::LogSink;
use runner::{UnitCommand, UnitTask};
use script::{Action, Condition, When};

/// What to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct SimOptions {
    pub units: Vec<UnitSpec>,
    /// JSON Lines log (none: no log).
    pub log: Option<LogTarget>,
    /// Also log every frame sent to the host.
    pub log_sent: bool,
    /// Seed for the fault injector (none: from the clock).
    pub seed: Option<u64>,
}

impl SimOptions {
    /// The demo board: a button unit `buttons` and a two-panel display unit
    /// `display`, no symlinks, no log.
    pub fn demo() -> SimOptions {
        SimOptions {
            units: vec![
                UnitSpec::new("buttons", UnitKind::Buttons),
                UnitSpec::new("display", UnitKind::Display),
            ],
            log: None,
            log_sent: false,
            seed: None,
        }
    }
}

impl SimOptions {
    /// [`SimOptions::demo`] with stable symlinks `DIR/buttons` and
    /// `DIR/display` (the folder is created if missing).
    pub fn demo_in(dir: &std::path::Path) -> SimOptions {
        let mut options = SimOptions::demo();
        for unit in &mut options.units {
            unit.link = Some(dir.join(&unit.name));
        }
        options
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions::demo()
    }
}

/// Why a simulator call failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SimError {
    #[error("no simulated unit named `{0}`")]
    UnknownUnit(String),
    #[error("no simulated unit has {0}")]
    NoSuchRole(&'static str),
    #[error("simulated unit `{0}` has no buttons")]
    NoButtons(String),
    #[error("simulated unit `{0}` has no display")]
    NoDisplay(String),
    #[error("the simulator has stopped")]
    Stopped,
    #[error("unit `{unit}`: {what} did not happen within {waited_ms} ms")]
    Timeout {
        unit: String,
        what: String,
        waited_ms: u64,
    },
}

struct UnitEntry {
    name: String,
    kind: UnitKind,
    commands: mpsc::UnboundedSender<UnitCommand>,
    snapshots: watch::Receiver<UnitSnapshot>,
}

/// Commands and observation for running units. Clone freely.
#[derive(Clone)]
pub struct SimHandle {
    units: Arc<[UnitEntry]>,
    started_us: i64,
    runtime: tokio::runtime::Handle,
    log: LogSink,
}

impl std::fmt::Debug for SimHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.units.iter().map(|u| u.name.as_str()).collect();
        f.debug_struct("SimHandle").field("units", &names).finish()
    }
}

impl SimHandle {
    /// When [`spawn_units`] started (CLOCK_MONOTONIC µs), before any unit.
    pub fn started_us(&self) -> i64 {
        self.started_us
    }

    pub fn unit_names(&self) -> Vec<String> {
        self.units.iter().map(|u| u.name.clone()).collect()
    }

    fn entry(&self, unit: &str) -> Result<&UnitEntry, SimError> {
        self.units
            .iter()
            .find(|u| u.name == unit)
            .ok_or_else(|| SimError::UnknownUnit(unit.to_owned()))
    }

    /// The named unit, or the first unit with buttons.
    fn buttons_unit(&self, unit: Option<&str>) -> Result<&UnitEntry, SimError> {
        match unit {
            Some(name) => self.entry(name),
            None => self
                .units
                .iter()
                .find(|u| u.kind.has_buttons())
                .ok_or(SimError::NoSuchRole("buttons")),
        }
    }

    fn send(&self, entry: &UnitEntry, command: UnitCommand) -> Result<(), SimError> {
        entry.commands.send(command).map_err(|_| SimError::Stopped)
    }

    /// Presses `button` now on `unit` (default: the first unit with buttons).
    pub fn press(&self, unit: Option<&str>, button: Button) -> Result<(), SimError> {
        self.press_returning_instant(unit, button).map(|_| ())
    }

    /// [`SimHandle::press`], returning the press's true instant
    /// (CLOCK_MONOTONIC µs, the instant the unit timestamps it with).
    pub fn press_returning_instant(
        &self,
        unit: Option<&str>,
        button: Button,
    ) -> Result<i64, SimError> {
        let at_us = monotonic_now_us();
        let entry = self.buttons_unit(unit)?;
        if !entry.kind.has_buttons() {
            return Err(SimError::NoButtons(entry.name.clone()));
        }
        self.send(entry, UnitCommand::Press { button, at_us })?;
        Ok(at_us)
    }

    /// Pulls `unit`'s cable; plugs it back after `replug_after` if given.
    pub fn unplug(&self, unit: &str, replug_after: Option<Duration>) -> Result<(), SimError> {
        let replug_after_us = replug_after.map(|d| d.as_micros() as i64);
        self.send(self.entry(unit)?, UnitCommand::Unplug { replug_after_us })
    }

    pub fn replug(&self, unit: &str) -> Result<(), SimError> {
        self.send(self.entry(unit)?, UnitCommand::Replug)
    }

    pub fn toggle_plug(&self, unit: &str) -> Result<(), SimError> {
        self.send(self.entry(unit)?, UnitCommand::TogglePlug)
    }

    /// Flips bits at rate `ber` on `unit`'s line for `duration`.
    pub fn corrupt(
        &self,
        unit: &str,
        ber: f64,
        direction: Direction,
        duration: Duration,
    ) -> Result<(), SimError> {
        let duration_us = duration.as_micros() as i64;
        self.send(
            self.entry(unit)?,
            UnitCommand::Corrupt {
                ber,
                direction,
                duration_us,
            },
        )
    }

    /// Holds frames to the host `delay` long for `duration`.
    pub fn delay(&self, unit: &str, delay: Duration, duration: Duration) -> Result<(), SimError> {
        let delay_us = delay.as_micros() as i64;
        let duration_us = duration.as_micros() as i64;
        self.send(
            self.entry(unit)?,
            UnitCommand::Delay {
                delay_us,
                duration_us,
            },
        )
    }

    /// Sends `copies` extra copies of every frame to the host for `duration`.
    pub fn duplicate(&self, unit: &str, copies: u32, duration: Duration) -> Result<(), SimError> {
        let duration_us = duration.as_micros() as i64;
        self.send(
            self.entry(unit)?,
            UnitCommand::Duplicate {
                copies,
                duration_us,
            },
        )
    }

    /// Pulls the cable and powers `unit` off; it powers up again (new
    /// `boot_id`, clock from its offset, queue empty) after `off`.
    pub fn power_cycle(&self, unit: &str, off: Duration) -> Result<(), SimError> {
        let off_us = off.as_micros() as i64;
        self.send(self.entry(unit)?, UnitCommand::PowerCycle { off_us })
    }

    /// Battery low or fine (heartbeat flag, LOW_POWER icon).
    pub fn set_low_power(&self, unit: &str, low_power: bool) -> Result<(), SimError> {
        self.send(self.entry(unit)?, UnitCommand::LowPower(low_power))
    }

    /// The unit's state now.
    pub fn snapshot(&self, unit: &str) -> Result<UnitSnapshot, SimError> {
        Ok(self.entry(unit)?.snapshots.borrow().clone())
    }

    /// Every unit's state now, in configuration order.
    pub fn snapshots(&self) -> Vec<UnitSnapshot> {
        self.units
            .iter()
            .map(|u| u.snapshots.borrow().clone())
            .collect()
    }

    /// Blocks until `ready` holds for `unit`'s state (checked at every
    /// change), or `timeout`. Not from inside an async task.
    pub fn wait_until(
        &self,
        unit: &str,
        timeout: Duration,
        ready: impl Fn(&UnitSnapshot) -> bool + Send + Sync + 'static,
    ) -> Result<UnitSnapshot, SimError> {
        let mut receiver = self.entry(unit)?.snapshots.clone();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        self.runtime.spawn(async move {
            let result = tokio::time::timeout(timeout, receiver.wait_for(|s| ready(s))).await;
            let _ = done_tx.send(match result {
                Ok(Ok(snapshot)) => Some(Ok(snapshot.clone())),
                Ok(Err(_)) => Some(Err(SimError::Stopped)),
                Err(_) => None,
            });
        });
        match done_rx.recv() {
            Ok(Some(result)) => result,
            Ok(None) => Err(SimError::Timeout {
                unit: unit.to_owned(),
                what: "the awaited state".into(),
                waited_ms: timeout.as_millis() as u64,
            }),
            Err(_) => Err(SimError::Stopped),
        }
    }

    /// Checks that every unit a script names exists and can do what the
    /// step asks (presses need buttons, display waits a display).
    pub fn check_script(&self, script: &Script) -> Result<(), SimError> {
        for step in &script.steps {
            let needs_display =
                matches!(&step.action, Action::Wait { condition, .. } if condition.needs_display());
            let needs_buttons = matches!(step.action, Action::Press { .. });
            match &step.unit {
                Some(unit) => {
                    let entry = self.entry(unit)?;
                    if needs_buttons && !entry.kind.has_buttons() {
                        return Err(SimError::NoButtons(unit.clone()));
                    }
                    if needs_display && !entry.kind.has_display() {
                        return Err(SimError::NoDisplay(unit.clone()));
                    }
                }
                None => {
                    if needs_buttons && !self.units.iter().any(|u| u.kind.has_buttons()) {
                        return Err(SimError::NoSuchRole("buttons"));
                    }
                    if needs_display && !self.units.iter().any(|u| u.kind.has_display()) {
                        return Err(SimError::NoSuchRole("a display"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Starts `script` on the simulator thread.
    pub fn spawn_script(&self, script: Script) -> Result<ScriptRun, SimError> {
        self.check_script(&script)?;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let (progress_tx, progress_rx) = watch::channel(String::new());
        let handle = self.clone();
        self.runtime.spawn(async move {
            let report = handle.execute(script, progress_tx).await;
            let _ = done_tx.send(report);
        });
        Ok(ScriptRun {
            done: done_rx,
            progress: progress_rx,
        })
    }

    /// Runs `script` to its end and returns what happened (blocking).
    pub fn run_script(&self, script: Script) -> Result<ScriptReport, SimError> {
        self.spawn_script(script)?.wait()
    }

    fn step_targets(&self, unit: &Option<String>, action: &Action) -> Vec<&UnitEntry> {
        if let Some(name) = unit {
            return self.entry(name).into_iter().collect();
        }
        let first = |pick: fn(&UnitEntry) -> bool| {
            self.units.iter().find(|u| pick(u)).into_iter().collect()
        };
        match action {
            Action::Press { .. } => first(|u| u.kind.has_buttons()),
            Action::Wait { condition, .. } if condition.needs_display() => {
                first(|u| u.kind.has_display())
            }
            _ => self.units.iter().collect(),
        }
    }

    async fn execute(&self, script: Script, progress: watch::Sender<String>) -> ScriptReport {
        let total = script.steps.len();
        let start = tokio::time::Instant::now();
        let mut previous_done = start;
        let mut report = ScriptReport {
            completed: 0,
            total,
            ended: false,
            error: None,
        };
        for (index, step) in script.steps.iter().enumerate() {
            let target = match step.when {
                When::At(ms) => start + Duration::from_millis(ms),
                When::After(ms) => previous_done + Duration::from_millis(ms),
            };
            tokio::time::sleep_until(target).await;
            let _ = progress.send(format!(
                "script step {}/{total}: {}",
                index + 1,
                step.action.name()
            ));
            let targets = self.step_targets(&step.unit, &step.action);
            let outcome = if targets.is_empty() {
                Err(format!("no unit for `{}`", step.action.name()))
            } else {
                self.perform(&step.action, &targets).await
            };
            let now = monotonic_now_us();
            let names: Vec<&str> = targets.iter().map(|u| u.name.as_str()).collect();
            let status = if outcome.is_ok() { "done" } else { "failed" };
            self.log.record(
                now,
                &names.join(","),
                "script",
                json!({
                    "step": index + 1,
                    "line": step.line,
                    "action": step.action.name(),
                    "status": status,
                    "error": outcome.as_ref().err(),
                }),
            );
            match outcome {
                Ok(false) => {}
                Ok(true) => {
                    report.completed += 1;
                    report.ended = true;
                    break;
                }
                Err(error) => {
                    report.error =
                        Some(format!("step {} (line {}): {error}", index + 1, step.line));
                    break;
                }
            }
            report.completed += 1;
            previous_done = tokio::time::Instant::now();
        }
        let _ = progress.send(match &report.error {
            Some(error) => format!("script failed: {error}"),
            None => format!("script done ({}/{total})", report.completed),
        });
        report
    }

    /// Performs one action; `Ok(true)` ends the script.
    async fn perform(&self, action: &Action, targets: &[&UnitEntry]) -> Result<bool, String> {
        let send = |entry: &UnitEntry, command: UnitCommand| {
            entry
                .commands
                .send(command)
                .map_err(|_| "the simulator has stopped".to_owned())
        };
        for entry in targets {
            match action {
                Action::Press { button } => send(
                    entry,
                    UnitCommand::Press {
                        button: *button,
                        at_us: monotonic_now_us(),
                    },
                )?,
                Action::Unplug { replug_after_ms } => send(
                    entry,
                    UnitCommand::Unplug {
                        replug_after_us: replug_after_ms.map(|ms| ms as i64 * 1000),
                    },
                )?,
                Action::Replug => send(entry, UnitCommand::Replug)?,
                Action::Corrupt {
                    ber,
                    duration_ms,
                    direction,
                } => send(
                    entry,
                    UnitCommand::Corrupt {
                        ber: *ber,
                        direction: *direction,
                        duration_us: *duration_ms as i64 * 1000,
                    },
                )?,
                Action::Delay {
                    delay_ms,
                    duration_ms,
                } => send(
                    entry,
                    UnitCommand::Delay {
                        delay_us: *delay_ms as i64 * 1000,
                        duration_us: *duration_ms as i64 * 1000,
                    },
                )?,
                Action::Duplicate {
                    copies,
                    duration_ms,
                } => send(
                    entry,
                    UnitCommand::Duplicate {
                        copies: *copies,
                        duration_us: *duration_ms as i64 * 1000,
                    },
                )?,
                Action::Wait {
                    condition,
                    timeout_ms,
                } => wait_condition(entry, condition, *timeout_ms).await?,
                Action::PowerCycle { off_ms } => send(
                    entry,
                    UnitCommand::PowerCycle {
                        off_us: *off_ms as i64 * 1000,
                    },
                )?,
                Action::LowPower { on } => send(entry, UnitCommand::LowPower(*on))?,
                Action::End => return Ok(true),
            }
        }
        Ok(false)
    }
}

async fn wait_condition(
    entry: &UnitEntry,
    condition: &Condition,
    timeout_ms: u64,
) -> Result<(), String> {
    let mut receiver = entry.snapshots.clone();
    let waited = tokio::time::timeout(
        Duration::from_millis(timeout_ms),
        receiver.wait_for(|s| condition.holds(s)),
    )
    .await;
    match waited {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(_)) => Err("the simulator has stopped".into()),
        Err(_) => {
            let now = entry.snapshots.borrow().clone();
            let shown = now.display.map(|d| {
                format!(
                    "left `{}` right `{}` text `{}` icons {:?}/{:?}",
                    d.left.time.as_str(),
                    d.right.time.as_str(),
                    d.text.as_str(),
                    view::icon_names(d.left.icons),
                    view::icon_names(d.right.icons)
                )
            });
            Err(format!(
                "unit `{}`: {condition:?} not reached within {timeout_ms} ms \
                 (plugged {}, link {:?}, unacked {}, display {})",
                entry.name,
                now.plugged,
                now.link_state,
                now.unacked,
                shown.unwrap_or_else(|| "blank".into())
            ))
        }
    }
}

/// A script running on the simulator thread.
pub struct ScriptRun {
    done: std::sync::mpsc::Receiver<ScriptReport>,
    /// A one-line progress description (for the view).
    pub progress: watch::Receiver<String>,
}

impl ScriptRun {
    /// Blocks until the script ends.
    pub fn wait(self) -> Result<ScriptReport, SimError> {
        self.done.recv().map_err(|_| SimError::Stopped)
    }

    /// The report, once the script has ended.
    pub fn try_report(&self) -> Option<ScriptReport> {
        self.done.try_recv().ok()
    }
}

/// How a script went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptReport {
    /// Steps performed.
    pub completed: usize,
    pub total: usize,
    /// Stopped by an `end` step.
    pub ended: bool,
    /// The step that failed and why.
    pub error: Option<String>,
}

impl ScriptReport {
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }
}

/// Running simulated units. Dropping it stops them, closes their PTYs and
/// removes their symlinks.
pub struct SimUnits {
    handle: SimHandle,
    paths: Vec<(String, PathBuf)>,
    /// Every configured symlink, removed again at shutdown even if a unit
    /// task never ran.
    links: Vec<PathBuf>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    log_thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for SimUnits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimUnits")
            .field("paths", &self.paths)
            .finish()
    }
}

/// Creates every unit's PTY (and symlink) now, so errors come back here,
/// then starts the simulator thread. On return the paths exist and each
/// unit is already sending HELLO (a unit with a `boot_delay_us`: from
/// then on).
pub fn spawn_units(opts: &SimOptions) -> io::Result<SimUnits> {
    if opts.units.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no units to simulate",
        ));
    }
    for (i, unit) in opts.units.iter().enumerate() {
        if opts.units[..i].iter().any(|other| other.name == unit.name) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("two units are named `{}`", unit.name),
            ));
        }
    }
    let started_us = monotonic_now_us();
    let (log, log_thread) = match &opts.log {
        Some(target) => {
            let (sink, thread) = LogSink::start(target, opts.log_sent)?;
            (sink, Some(thread))
        }
        None => (LogSink::off(), None),
    };
    let mut ptys: Vec<(pty::Pty, Option<PathBuf>)> = Vec::new();
    let mut paths = Vec::new();
    for unit in &opts.units {
        let pty = pty::Pty::open()?;
        if let Some(link) = &unit.link {
            if let Err(error) = pty::point_link(link, &pty.path) {
                for (_, made) in &ptys {
                    if let Some(made) = made {
                        pty::remove_link(made);
                    }
                }
                log.close();
                return Err(error);
            }
        }
        paths.push((
            unit.name.clone(),
            unit.link.clone().unwrap_or_else(|| pty.path.clone()),
        ));
        ptys.push((pty, unit.link.clone()));
    }

    let seed = opts.seed.unwrap_or_else(|| monotonic_now_us() as u64);
    let now = monotonic_now_us();
    let mut entries = Vec::new();
    let mut tasks = Vec::new();
    for (index, (unit, (pty, _))) in opts.units.iter().zip(ptys).enumerate() {
        let boot_id = unit.boot_id.unwrap_or_else(rand::random);
        let model = unit::UnitModel::new(unit.clone(), now, boot_id);
        let (command_tx, command_rx) = mpsc::unbounded_channel();
        let (snapshot_tx, snapshot_rx) =
            watch::channel(model.snapshot(true, Some(pty.path.clone()), false));
        entries.push(UnitEntry {
            name: unit.name.clone(),
            kind: unit.kind,
            commands: command_tx,
            snapshots: snapshot_rx,
        });
        tasks.push(UnitTask {
            model,
            plug_pty: Some(pty),
            commands: command_rx,
            snapshots: snapshot_tx,
            log: log.clone(),
            seed: seed.wrapping_add((index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        });
    }
    // The runtime is built, run and dropped on its own thread, so this
    // works from inside a caller's async context too.
    let (runtime_tx, runtime_rx) = std::sync::mpsc::channel();
    let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("chessclock-sim".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    let _ = runtime_tx.send(Err(error));
                    return;
                }
            };
            let _ = runtime_tx.send(Ok(runtime.handle().clone()));
            runtime.block_on(async move {
                for task in tasks {
                    tokio::spawn(task.run());
                }
                let _ = shutdown_rx.await;
            });
            // Dropping the runtime drops every task: PTYs close, links go.
            drop(runtime);
        });
    let started = match spawned {
        Ok(thread) => match runtime_rx.recv() {
            Ok(Ok(runtime)) => Ok((thread, runtime)),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(io::Error::other("the simulator thread ended at start")),
        },
        Err(error) => Err(error),
    };
    let (thread, runtime) = match started {
        Ok(started) => started,
        Err(error) => {
            for link in opts.units.iter().filter_map(|u| u.link.as_ref()) {
                pty::remove_link(link);
            }
            log.close();
            return Err(error);
        }
    };
    let handle = SimHandle {
        units: entries.into(),
        started_us,
        runtime,
        log,
    };
    Ok(SimUnits {
        handle,
        paths,
        links: opts.units.iter().filter_map(|u| u.link.clone()).collect(),
        shutdown: Some(shutdown_tx),
        thread: Some(thread),
        log_thread,
    })
}

impl SimUnits {
    /// `(unit name, path the daemon should open)`: the stable symlink when
    /// one was configured, else the PTY slave (which changes on replug).
    pub fn paths(&self) -> &[(String, PathBuf)] {
        &self.paths
    }

    /// The path for one unit.
    pub fn path(&self, unit: &str) -> Option<&PathBuf> {
        self.paths
            .iter()
            .find(|(name, _)| name == unit)
            .map(|(_, path)| path)
    }

    /// A handle for commands and snapshots (clone it freely).
    pub fn handle(&self) -> SimHandle {
        self.handle.clone()
    }

    /// Stops the units, closes their PTYs, removes their symlinks and
    /// flushes the log.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        for link in &self.links {
            pty::remove_link(link);
        }
        self.handle.log.close();
        if let Some(thread) = self.log_thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::ops::Deref for SimUnits {
    type Target = SimHandle;
    fn deref(&self) -> &SimHandle {
        &self.handle
    }
}

impl Drop for SimUnits {
    fn drop(&mut self) {
        self.stop();
    }
}
