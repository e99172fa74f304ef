//! The daemon's assembly: three owners connected by channels.
//!
//! * the **timing thread** ([`timing`]) owns every board's engine and the
//!   device links (a [`DeviceManager`] on its own current-thread tokio
//!   runtime, so a press goes from button port to display port without
//!   waking another thread), asks for SCHED_FIFO and mlockall
//!   ([`realtime`]), and wakes at exactly the next deadline ([`deadline`]);
//! * the **store thread** ([`store`]) owns SQLite: every engine input is
//!   committed before its effect is reported (D-Bus reply, device ACK,
//!   [`BoardEvent`](crate::control::BoardEvent) broadcast);
//! * the **state directory** is held with an exclusive lock ([`lock`]) for
//!   the runtime's life: one daemon per state. Opening it checks it
//!   ([`store::open`]); what was found is the [`StateHealth`] in the
//!   [`ControlHandle`]. A state directory that cannot be used stops the
//!   start with an error, unless `[daemon] crash-safety = false` (then the
//!   state is kept in memory, and the health says so) or `--no-state`;
//! * the **control loop** (a tokio task on the main runtime) owns the
//!   electronic-board tasks: it takes [`Request`]s from the D-Bus layer and
//!   forwards them to the timing thread, and carries DGT commands out.
//!
//! Promises: an input's effect is reported (D-Bus reply, device ACK, board
//! event) only after its row is committed; displays change at once (they are
//! the clock face); a restart rebuilds every game paused (see [`store`] for
//! the time scheme); SIGTERM-style shutdown commits everything queued and
//! sends the last ACKs before [`Runtime::shutdown`] returns.
//!
//! SIGHUP ([`Runtime::reload`]) re-reads the config: [`reload::plan`]
//! decides every changed key (applied, or kept until a restart and said so
//! at WARN); added boards join the timing thread, the control loop and the
//! bus; nothing is ever removed from a running daemon.
//!
//! `crate::daemon::run` puts it together with the D-Bus service and the
//! hall; [`Runtime::start`] gives the same assembly without D-Bus, for
//! tests and tools, and hands out the [`ControlHandle`].

pub mod boot;
pub mod control;
pub mod deadline;
pub mod eboard;
pub mod lock;
pub mod realtime;
pub mod reload;
pub mod store;
pub mod time;
pub mod timing;

mod boards;
use boards::{board_core, build_boards};
pub use boards::{board_setup, game_spec};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::Context;
use tokio::sync::{broadcast, mpsc as tokio_mpsc, oneshot};

use self::time::TimeSource;
use crate::config::{BoardConfig, Config};
use crate::control::{Caller, ControlHandle, SharedHealth, StateHealth};
use crate::devices::{DeviceCommand, DeviceEvent, DeviceKey, DeviceManager};
use crate::engine::{MatchControl, Settings};
use chessclock_core::board::{Board, BoardSetup, GameSpec, Resumed};
use chessclock_core::journal::StoredGame;

use self::lock::{LockError, StateLock};
use self::store::{Opened, Store, StoreError};
use self::timing::{Timing, TimingIo, TimingMsg};

/// Threads the timing thread's runtime may use to open ports (`open` and
/// the line set-up can block on a USB tty); more ports wait their turn.
/// Several, so one stuck `open` does not hold the others.
const PORT_OPENING_THREADS: usize = 8;
/// Their stack: `open` and `tcsetattr` need little.
const PORT_OPENING_STACK: usize = 256 * 1024;
/// Worker threads of the daemon's async runtime (control loop, D-Bus,
/// readers): none of them keeps a deadline, so two are plenty on any board
/// count (tokio's default is one per core).
pub const ASYNC_WORKERS: usize = 2;
/// Its blocking pool: readers' queries of stored games and the live PGN
/// writes, each short.
pub const BLOCKING_THREADS: usize = 4;
/// The stack of those threads (tokio's default is 2 MiB; resident as far as
/// it is touched, and locked, under mlockall). 512 KiB leaves room for zbus,
/// serde and SQLite.
pub const ASYNC_STACK: usize = 512 * 1024;
/// The store thread's stack (SQLite's deepest calls need well under this).
const STORE_STACK: usize = 512 * 1024;
/// The timing thread's stack: the board cores and the device links.
const TIMING_STACK: usize = 1024 * 1024;

/// Where device commands go and hotplug notices come from. The real one is
/// [`DeviceManager`]; tests may put a fake in its place.
pub trait DeviceBackend: Send + 'static {
    fn send(&self, key: &DeviceKey, command: DeviceCommand);
    fn device_added(&self, path: &Path);
    fn device_removed(&self, path: &Path);
    /// A reload added `board`: its devices should be driven from now on.
    /// A backend that drives a fixed set of devices ignores it.
    fn board_added(&mut self, _board: &BoardConfig) {}
}

impl DeviceBackend for DeviceManager {
    fn send(&self, key: &DeviceKey, command: DeviceCommand) {
        DeviceManager::send(self, key, command)
    }
    fn device_added(&self, path: &Path) {
        DeviceManager::device_added(self, path)
    }
    fn device_removed(&self, path: &Path) {
        DeviceManager::device_removed(self, path)
    }
}

/// The devices as the timing thread drives them.
pub enum DeviceDriver {
    Manager(DeviceManager),
    Custom(Box<dyn DeviceBackend>),
}

impl DeviceDriver {
    fn backend(&self) -> &dyn DeviceBackend {
        match self {
            DeviceDriver::Manager(manager) => manager,
            DeviceDriver::Custom(backend) => backend.as_ref(),
        }
    }

    pub fn send(&self, key: &crate::devices::DeviceKey, command: DeviceCommand) {
        self.backend().send(key, command)
    }

    /// [`DeviceDriver::send`] for a change due at `due` (monotonic µs),
    /// from which the links count a display frame's write.
    pub fn send_due(
        &self,
        key: &crate::devices::DeviceKey,
        command: DeviceCommand,
        due: crate::devices::Due,
    ) {
        match self {
            DeviceDriver::Manager(manager) => manager.send_due(key, command, due),
            DeviceDriver::Custom(backend) => backend.send(key, command),
        }
    }

    /// The links' display write lateness ([`crate::devices::DisplayWrites`]);
    /// `None` for a custom backend.
    pub fn display_writes(&self) -> Option<[crate::lateness::Lateness; 2]> {
        match self {
            DeviceDriver::Manager(manager) => Some(manager.display_writes()),
            DeviceDriver::Custom(_) => None,
        }
    }

    pub fn hotplug(&self, path: &Path, added: bool) {
        if added {
            self.backend().device_added(path)
        } else {
            self.backend().device_removed(path)
        }
    }

    /// Starts driving the devices of a board a reload added.
    pub fn add_board(&mut self, board: &BoardConfig) {
        match self {
            DeviceDriver::Manager(manager) => manager.add_boards(std::slice::from_ref(board)),
            DeviceDriver::Custom(backend) => backend.board_added(board),
        }
    }

    /// Lets every link write what it was given (the last ACKs), then
    /// closes the ports.
    pub async fn close(self) {
        if let DeviceDriver::Manager(manager) = self {
            manager.close(Duration::from_millis(500)).await;
        }
    }
}

/// Which devices the runtime drives.
pub enum Devices {
    /// Start a [`DeviceManager`] for the configured boards.
    Manager,
    /// A given backend and the stream of its events.
    Custom {
        backend: Box<dyn DeviceBackend>,
        events: tokio_mpsc::UnboundedReceiver<DeviceEvent>,
    },
}

/// Where the runtime keeps its state.
#[derive(Debug, Default)]
pub struct StateOptions {
    /// Overrides `daemon.state-dir`.
    pub dir: Option<PathBuf>,
    /// In memory only (see [`RunOptions::no_state`]).
    pub no_state: bool,
    /// The lock of the state directory, taken by the caller before the
    /// runtime starts (`--demo` takes it before its simulated units, to
    /// refuse a second demo at once). The runtime keeps it instead of
    /// taking the lock again: releasing it in between would let another
    /// daemon in. Must be the lock of the directory the runtime uses.
    pub lock: Option<StateLock>,
}

/// A counter the timing thread bumps on every loop (at least twice a
/// second): the systemd watchdog pings only while it moves.
#[derive(Clone, Debug)]
pub struct Heartbeat(Arc<AtomicU64>);

impl Heartbeat {
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Turns a control text (notation or preset name) into a control and the
/// engine settings for it (the config's presets and `[engine]` defaults).
pub fn resolve_control(config: &Config, text: &str) -> Result<(MatchControl, Settings), String> {
    config.resolve_control(text)
}

/// The running assembly.
pub struct Runtime {
    handle: ControlHandle,
    heartbeat: Heartbeat,
    timing: tokio_mpsc::UnboundedSender<TimingMsg>,
    stop_control: Option<oneshot::Sender<()>>,
    control_task: Option<tokio::task::JoinHandle<()>>,
    timing_thread: Option<std::thread::JoinHandle<()>>,
    store_thread: Option<std::thread::JoinHandle<()>>,
    state_path: PathBuf,
    health: SharedHealth,
    /// The configuration running now (after overrides and reloads): what
    /// the next reload is compared with.
    config: Config,
    /// `--state-dir` was given: the file's `state-dir` is not used.
    state_dir_overridden: bool,
    /// Stored games of boards not running (see [`Runtime::reload`]).
    unclaimed: Vec<StoredGame>,
    /// Where the runtime's threads read the time.
    time: TimeSource,
    /// Held for the runtime's life (none in memory).
    _lock: Option<StateLock>,
}

/// Why the state could not be opened.
enum StateFailure {
    /// Another daemon holds the state directory: always fatal.
    Held(LockError),
    /// The state directory or database cannot be used.
    Unusable(String),
}

/// Locks (unless `held` is the lock already taken) and opens the state of
/// `config` (see [`Runtime::start_with`]).
fn open_state(
    config: &Config,
    no_state: bool,
    held: Option<StateLock>,
) -> anyhow::Result<(Option<StateLock>, Opened)> {
    if no_state {
        tracing::warn!("--no-state: games are kept in memory only (no crash safety)");
        return Ok((None, Store::in_memory("started with --no-state")?));
    }
    let dir = &config.daemon.state_dir;
    let attempt = (|| {
        std::fs::create_dir_all(dir).map_err(|error| {
            StateFailure::Unusable(format!(
                "cannot create the state directory {}: {error}",
                dir.display()
            ))
        })?;
        let lock = match held {
            Some(lock) => lock,
            None => lock::acquire(dir).map_err(|error| match error {
                LockError::Held { .. } => StateFailure::Held(error),
                LockError::Io { .. } => StateFailure::Unusable(format!(
                    "the state directory {} is not writable: {error}",
                    dir.display()
                )),
            })?,
        };
        let opened = Store::open_state(dir)
            .map_err(|error: StoreError| StateFailure::Unusable(error.to_string()))?;
        Ok((Some(lock), opened))
    })();
    match attempt {
        Ok(opened) => Ok(opened),
        Err(StateFailure::Held(error)) => Err(anyhow::Error::new(error)),
        Err(StateFailure::Unusable(reason)) if !config.daemon.crash_safety => {
            tracing::error!(
                reason,
                "the state cannot be used; crash-safety = false: running from memory"
            );
            Ok((None, Store::in_memory(&reason)?))
        }
        Err(StateFailure::Unusable(reason)) => anyhow::bail!(
            "{reason}. chessclockd will not run without crash safety unless told to: \
             fix the state directory, or set `[daemon] crash-safety = false` (or start with \
             --no-state) to keep games in memory only"
        ),
    }
}

impl Runtime {
    /// Opens the state, rebuilds the stored games and starts the threads
    /// and the control loop. Must be called inside a tokio runtime.
    pub fn start(
        config: Config,
        state_dir: Option<PathBuf>,
        devices: Devices,
    ) -> anyhow::Result<Runtime> {
        Self::start_with(
            config,
            StateOptions {
                dir: state_dir,
                no_state: false,
                lock: None,
            },
            devices,
        )
    }

    /// [`Runtime::start`] with the state options: the state directory is
    /// locked (another daemon on it: an error naming its PID), checked and
    /// opened; a state that cannot be used is an error unless
    /// `[daemon] crash-safety = false`.
    pub fn start_with(
        config: Config,
        state: StateOptions,
        devices: Devices,
    ) -> anyhow::Result<Runtime> {
        Self::start_timed(config, state, devices, TimeSource::System)
    }

    /// [`Runtime::start_with`] on `time`: the host's clocks, or a stepped
    /// clock that a test moves (see [`time`]).
    pub fn start_timed(
        mut config: Config,
        state: StateOptions,
        devices: Devices,
        time: TimeSource,
    ) -> anyhow::Result<Runtime> {
        let state_dir_overridden = state.dir.is_some();
        if let Some(dir) = state.dir {
            config.daemon.state_dir = dir;
        }
        let (lock, opened) = open_state(&config, state.no_state, state.lock)?;
        let Opened {
            store,
            games: stored,
            health,
        } = opened;
        let state_path = store.path().to_owned();
        if health.is_damaged() {
            // A damaged game is never resumed without the arbiter.
            config.daemon.resume_after_restart = false;
            tracing::error!(path = %state_path.display(), findings = health.findings.len(),
                evidence = health.evidence.as_deref().unwrap_or(""),
                "the state was found DAMAGED; games come back paused and marked (chessclockctl status)");
        }
        tracing::info!(path = %state_path.display(), games = stored.len(), "state database open");
        let notice = health.display_notice().map(str::to_owned);
        let health = SharedHealth::new(health);
        let boards = build_boards(&config, &stored, boot::boot_id(), notice.as_deref(), &time);
        // The stored games of boards the file does not name: a reload that
        // names one of them again takes its game back (nothing changed it
        // since: no board of this process played it).
        let unclaimed: Vec<StoredGame> = stored
            .into_iter()
            .filter(|game| !config.boards.iter().any(|b| b.id == game.board))
            .collect();

        let (events, _) = broadcast::channel(1024);
        let (requests, requests_rx) = tokio_mpsc::channel(64);
        let (control_tx, control_rx) = tokio_mpsc::unbounded_channel();
        let (store_tx, store_rx) = mpsc::channel();
        let (commits_tx, commits_rx) = tokio_mpsc::unbounded_channel();
        let (timing_tx, timing_rx) = tokio_mpsc::unbounded_channel();
        let heartbeat = Arc::new(AtomicU64::new(0));

        let store_thread = std::thread::Builder::new()
            .name("chessclockd-store".into())
            .stack_size(STORE_STACK)
            .spawn({
                let time = time.clone();
                let health = health.clone();
                move || store::run_store_thread(store, store_rx, commits_tx, time, health)
            })
            .context("cannot start the store thread")?;

        let timing_thread = {
            let config = config.clone();
            let heartbeat = heartbeat.clone();
            let time = time.clone();
            let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
            let thread = std::thread::Builder::new()
                .name("chessclockd-timing".into())
                .stack_size(TIMING_STACK)
                .spawn(move || {
                    realtime::enter_realtime(config.daemon.rt_priority, config.daemon.mlock);
                    // Memory is locked as it is touched: touch the stack a
                    // press can reach now, not during the first press.
                    realtime::prefault_stack(realtime::TIMING_STACK_PREFAULT);
                    // The device links live here too (see the module docs):
                    // one thread, one epoll, for ports, channels and the
                    // deadline timer.
                    // Its blocking pool only opens ports. With mlockall
                    // the touched part of every thread's stack stays
                    // resident for good (glibc keeps exited threads' stacks
                    // for reuse): few threads, small stacks.
                    let local = match tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .max_blocking_threads(PORT_OPENING_THREADS)
                        .thread_stack_size(PORT_OPENING_STACK)
                        .build()
                    {
                        Ok(local) => local,
                        Err(error) => {
                            let _ = ready_tx.send(Err(format!(
                                "cannot build the timing thread's event loop: {error}"
                            )));
                            return;
                        }
                    };
                    local.block_on(async move {
                        let (devices, device_events) = match devices {
                            Devices::Manager => {
                                let (tx, rx) = tokio_mpsc::unbounded_channel();
                                // The timing loop renders for each unit it
                                // is told of and sends that: the sessions
                                // need not restore a stale picture first.
                                let mut options = crate::devices::DeviceOptions::default();
                                options.session.restore_on_welcome = false;
                                let manager = DeviceManager::start_with(
                                    &config.boards,
                                    &config.daemon.watch_dirs,
                                    tx,
                                    options,
                                );
                                (DeviceDriver::Manager(manager), rx)
                            }
                            Devices::Custom { backend, events } => {
                                (DeviceDriver::Custom(backend), events)
                            }
                        };
                        let (mut timing, first) =
                            Timing::new(boards, store_tx, control_tx, heartbeat, time);
                        for (key, command) in first {
                            devices.send(&key, command);
                        }
                        let mut io = TimingIo {
                            inputs: timing_rx,
                            device_events,
                            commits: commits_rx,
                            devices,
                        };
                        timing.settle(&mut io).await;
                        let _ = ready_tx.send(Ok(()));
                        // A task of its own, like the links, not the
                        // runtime's main future: a link's event then wakes
                        // it straight from the run queue, without a turn
                        // of the I/O driver in between.
                        let timing_loop = tokio::spawn(timing.run(io));
                        if let Err(error) = timing_loop.await {
                            tracing::error!(%error, "the timing loop failed");
                        }
                    });
                    // A port `open` stuck in the kernel (blocking pool) must
                    // not hold the daemon's exit.
                    local.shutdown_timeout(Duration::from_secs(1));
                })
                .context("cannot start the timing thread")?;
            // The boards exist (and were restored) before any request is taken.
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(error)) => anyhow::bail!(error),
                Err(_) => anyhow::bail!("the timing thread failed while rebuilding the games"),
            }
            thread
        };

        let eboards = spawn_eboards(&config, &timing_tx);
        let (stop_control, stop_rx) = oneshot::channel();
        let control_task = tokio::spawn(
            control::Control::new(
                config.clone(),
                timing_tx.clone(),
                events.clone(),
                eboards,
                (state_path.as_os_str() != ":memory:").then_some(state_path.as_path()),
                time.clone(),
            )
            .run(control::ControlInputs {
                requests: requests_rx,
                from_timing: control_rx,
                stop: stop_rx,
            }),
        );
        let handle = ControlHandle {
            requests,
            events,
            boards: config.boards.iter().map(|b| b.id.clone()).collect(),
            health: health.clone(),
            host: crate::host::SharedHostHealth::new(config.daemon.radios),
            hall: Default::default(),
        };
        Ok(Runtime {
            config,
            state_dir_overridden,
            unclaimed,
            handle,
            heartbeat: Heartbeat(heartbeat),
            timing: timing_tx,
            stop_control: Some(stop_control),
            control_task: Some(control_task),
            timing_thread: Some(timing_thread),
            store_thread: Some(store_thread),
            state_path,
            health,
            time,
            _lock: lock,
        })
    }

    /// Where the runtime's threads read the time (for the tasks beside it).
    pub fn time(&self) -> TimeSource {
        self.time.clone()
    }

    /// What opening the state found, and whether the store saves now.
    pub fn health(&self) -> Arc<StateHealth> {
        self.health.get()
    }

    pub fn handle(&self) -> ControlHandle {
        self.handle.clone()
    }

    pub fn heartbeat(&self) -> Heartbeat {
        self.heartbeat.clone()
    }

    /// The state database in use.
    pub fn state_path(&self) -> &Path {
        &self.state_path
    }

    /// The configuration running now.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// SIGHUP: compares `new` (a loaded, validated file) with the running
    /// configuration key by key ([`reload::plan`]), logs every change (INFO
    /// when applied, WARN naming the key, both values and "needs a restart"
    /// when not), and applies what can be: the boards' settings (a game in
    /// progress keeps its control) and the added boards, whose cores,
    /// devices and e-boards start here. Returns once the control loop
    /// serves the added boards; the D-Bus side is [`crate::dbus::reconfigure`].
    pub async fn reload(&mut self, mut new: Config) -> Reloaded {
        if self.state_dir_overridden {
            // `--state-dir` wins over the file, now as at the start.
            new.daemon.state_dir = self.config.daemon.state_dir.clone();
        }
        if self.health.get().is_damaged() {
            // As at the start: a damaged game is never resumed without the
            // arbiter, whatever the file says (the start logged why).
            new.daemon.resume_after_restart = false;
        }
        let plan = reload::plan(&self.config, &new);
        log_plan(&plan);
        let mut config = plan.effective;
        let health = self.health.get();
        let notice = health.display_notice();
        let running = self.handle.boards.len();
        let mut boards = Vec::new();
        for (index, board) in config.boards.iter().enumerate().take(running) {
            match game_spec(&config, &board.control) {
                Ok(spec) => boards.push((index, board_setup(&config, board, notice), spec)),
                Err(error) => {
                    tracing::error!(board = %board.id, control = %board.control, %error, "config reload: the board's control is invalid; keeping the old settings")
                }
            }
        }
        let _ = self.timing.send(TimingMsg::Reload {
            boards,
            config: Box::new(config.clone()),
        });
        let mut added = Vec::new();
        let run = Resumed {
            boot_id: boot::boot_id(),
            now: self.time.monotonic_us(),
            wall: self.time.wall_us(),
        };
        for (index, board) in config.boards.iter().enumerate().skip(running) {
            // A board that ran before (and was left out of the file at the
            // start) gets its stored game back, paused, as a restart would.
            let stored = self
                .unclaimed
                .iter()
                .position(|game| game.board == board.id)
                .map(|at| self.unclaimed.swap_remove(at));
            let (core, actions) = board_core(&config, board, stored.as_ref(), &run, notice);
            let game = if stored.is_some() {
                "its stored game, paused"
            } else {
                "a new game"
            };
            let (done, served) = oneshot::channel();
            let (eboard, eboard_events) = start_eboard(board).unzip();
            let message = TimingMsg::AddBoard(Box::new(timing::AddedBoard {
                config: board.clone(),
                board: core,
                actions,
                eboard,
                added: done,
            }));
            let sent = self.timing.send(message).is_ok();
            if let Some(events) = eboard_events {
                // After the board: its first events queue behind it.
                forward_eboard(index, events, &self.timing);
            }
            if !sent || served.await.is_err() {
                tracing::error!(board = %board.id, "config reload: the added board could not be started");
                break;
            }
            self.handle.boards.push(board.id.clone());
            tracing::info!(board = %board.id, control = %board.control, "config reload: board {} added with {game}", board.id);
            added.push(board.id.clone());
        }
        // What did not start is not running (the next reload offers it again).
        config.boards.truncate(running + added.len());
        self.config = config.clone();
        Reloaded { config, added }
    }

    /// Stops the control loop and the threads; every queued event is
    /// committed before this returns.
    pub async fn shutdown(mut self) {
        self.stop().await;
    }

    async fn stop(&mut self) {
        // The timing thread first: it hands its last jobs to the store
        // thread, which commits them and queues their ACKs, which the timing
        // thread gives to the device links before it closes them; then the
        // control loop.
        let _ = self.timing.send(TimingMsg::Shutdown);
        let threads = [self.timing_thread.take(), self.store_thread.take()];
        let _ = tokio::task::spawn_blocking(move || {
            for thread in threads.into_iter().flatten() {
                if thread.join().is_err() {
                    tracing::error!("a runtime thread panicked");
                }
            }
        })
        .await;
        if let Some(stop) = self.stop_control.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.control_task.take() {
            let _ = task.await;
        }
        tracing::info!("runtime stopped; state saved");
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(stop) = self.stop_control.take() {
            let _ = stop.send(());
        }
        let _ = self.timing.send(TimingMsg::Shutdown);
    }
}

/// What a reload did: the configuration now running and the boards it
/// added (for the D-Bus side).
#[derive(Clone, Debug)]
pub struct Reloaded {
    pub config: Config,
    pub added: Vec<String>,
}

/// Logs a reload plan: INFO for what is applied, WARN for what waits for
/// a restart (operators grep for "needs a restart").
fn log_plan(plan: &reload::Plan) {
    if plan.changes.is_empty() {
        tracing::info!("config reload: nothing changed");
    }
    for change in &plan.changes {
        match change.decision {
            reload::Decision::Applied => {
                tracing::info!(key = %change.key, "config reload: {change}")
            }
            reload::Decision::NeedsRestart => {
                tracing::warn!(key = %change.key, "config reload: {change}; the running value is kept")
            }
        }
    }
}

/// Starts a task per configured electronic board; its events reach the
/// timing thread tagged with the board's index.
fn spawn_eboards(
    config: &Config,
    timing: &tokio_mpsc::UnboundedSender<TimingMsg>,
) -> HashMap<usize, crate::eboard::EboardHandle> {
    config
        .boards
        .iter()
        .enumerate()
        .filter_map(|(index, board)| {
            let (handle, events) = start_eboard(board)?;
            forward_eboard(index, events, timing);
            Some((index, handle))
        })
        .collect()
}

/// The task of `board`'s electronic board, if it has one, and its events
/// (not yet forwarded: see [`forward_eboard`]).
fn start_eboard(
    board: &BoardConfig,
) -> Option<(
    crate::eboard::EboardHandle,
    tokio_mpsc::UnboundedReceiver<crate::eboard::EboardEvent>,
)> {
    let path = match board.eboard.as_ref()? {
        crate::config::DeviceRef::Path(path) => path.clone(),
        crate::config::DeviceRef::Serial(serial) => {
            tracing::error!(board = %board.id, serial, "electronic boards are named by path (DGT boards have no HELLO serial); this one is not used");
            return None;
        }
    };
    let (tx, rx) = tokio_mpsc::unbounded_channel();
    Some((crate::eboard::spawn(path, tx), rx))
}

/// Hands an electronic board's events to the timing thread, tagged with
/// its board's index. Started only once the timing thread has (or was
/// sent) the board: an event for an index it does not know is dropped.
fn forward_eboard(
    index: usize,
    mut rx: tokio_mpsc::UnboundedReceiver<crate::eboard::EboardEvent>,
    timing: &tokio_mpsc::UnboundedSender<TimingMsg>,
) {
    let timing = timing.clone();
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let message = TimingMsg::Eboard {
                board: index,
                event,
            };
            if timing.send(message).is_err() {
                break;
            }
        }
    });
}
