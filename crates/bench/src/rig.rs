//! The test rig: a private `dbus-daemon`, the REAL `chessclockd` binary
//! with a generated config, and simulated button and display units on
//! PTYs (one pair per board), all under one temporary folder. Everything
//! started here is stopped (by its own pid) when the rig is dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use rand::{Rng, SeedableRng};
use serde_json::Value;

use chessclock_host::clock::monotonic_now_us;
use chessclock_sim_units::{LogTarget, SimHandle, SimOptions, SimUnits, UnitKind, UnitSpec};
use chessclockd::dbus::client::{BoardProxy, ManagerProxy};

/// Where the binaries under test are.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub daemon: PathBuf,
    pub ctl: PathBuf,
}

impl Binaries {
    /// `chessclockd` and `chessclockctl` in the folder of the running
    /// executable (how cargo lays out `target/<profile>/`). They are
    /// another package's binaries, so a test of this crate finds them there
    /// once built (`cargo build --bins`, as `scripts/test` does first): a
    /// missing one is an error that says so.
    pub fn beside_current_exe() -> anyhow::Result<Binaries> {
        let exe = std::env::current_exe().context("cannot find the running executable")?;
        let dir = exe
            .parent()
            .ok_or_else(|| anyhow!("{} has no folder", exe.display()))?;
        // Test executables live one level down, in `deps/`.
        let dir = if dir.ends_with("deps") {
            dir.parent().unwrap_or(dir)
        } else {
            dir
        };
        let binaries = Binaries {
            daemon: dir.join("chessclockd"),
            ctl: dir.join("chessclockctl"),
        };
        for binary in [&binaries.daemon, &binaries.ctl] {
            if !binary.is_file() {
                bail!(
                    "{} is missing: build the daemon's binaries first (`cargo build --bins`; \
                     scripts/test does)",
                    binary.display()
                );
            }
        }
        Ok(binaries)
    }
}

/// A private session-style `dbus-daemon`.
pub struct Bus {
    child: Child,
    pub address: String,
}

impl Bus {
    pub fn start(dir: &Path) -> anyhow::Result<Bus> {
        let socket = dir.join("bus");
        let mut child = Command::new("dbus-daemon")
            .arg("--session")
            .arg("--nofork")
            .arg("--nopidfile")
            .arg(format!("--address=unix:path={}", socket.display()))
            .arg("--print-address=1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start dbus-daemon (is it installed? scripts/setup-debian)")?;
        let stdout = child.stdout.take().context("dbus-daemon stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("reading the address dbus-daemon prints")?;
        if line.trim().is_empty() {
            let _ = child.kill();
            let _ = child.wait();
            bail!("dbus-daemon printed no address");
        }
        Ok(Bus {
            child,
            address: line.trim().to_owned(),
        })
    }
}

impl Bus {
    /// The `dbus-daemon`'s process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The daemon process under test.
pub struct Daemon {
    child: Child,
    pub started_us: i64,
}

impl Daemon {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(status)` if it has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// kill -9, then reap.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait up to `within` for a clean exit (then kill -9).
    /// Returns whether it exited by itself in time.
    pub fn terminate(mut self, within: Duration) -> bool {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// How to build a rig.
#[derive(Clone, Debug)]
pub struct RigOptions {
    pub boards: usize,
    /// Ask for SCHED_FIFO / mlockall as the shipped config does.
    pub realtime: bool,
    /// Also log frames the simulated units send.
    pub log_sent: bool,
    pub seed: u64,
    /// Run the daemon on these CPUs (`taskset -c` list; see
    /// [`super::placement`]).
    pub daemon_cpus: Option<String>,
    /// Run the daemon under this `RLIMIT_RTTIME` (µs of real-time CPU
    /// without a blocking call; the shipped unit's `LimitRTTIME=1s` is
    /// 1,000,000), set by `prlimit` (util-linux), which then execs it.
    pub rttime_us: Option<u64>,
    /// Each unit boots at a random instant within this many µs, from
    /// [`BOOT_AFTER_US`] on ([`UnitSpec::boot_delay_us`]; 0: all at once,
    /// at the start, their heartbeats in phase).
    pub boot_spread_us: u64,
}

/// When units boot at random ([`RigOptions::boot_spread_us`]), none boots
/// before this many µs after the start: by then the daemon (started
/// 30-200 ms after the units) holds every port open, so it welcomes each
/// unit at its own first HELLO. A unit that booted before the open would
/// be welcomed with all the others at the open (SPEC 6.1 item 4: the
/// host answers a HELLO waiting in the port at once), in phase with them.
/// One second plus a spread of at most one second stays within the
/// host's 3 s wait for a HELLO after the open.
pub const BOOT_AFTER_US: u64 = 1_000_000;

/// The names of board `i`'s units and board id.
pub fn board_id(i: usize) -> String {
    format!("b{i}")
}
pub fn buttons_unit(i: usize) -> String {
    format!("b{i}-buttons")
}
pub fn display_unit(i: usize) -> String {
    format!("b{i}-display")
}
/// The HELLO serial number the simulator derives from a unit name.
pub fn unit_serial(unit: &str) -> String {
    UnitSpec::new(unit, UnitKind::Buttons).serial
}

/// A running rig.
pub struct Rig {
    pub dir: tempfile::TempDir,
    pub binaries: Binaries,
    pub boards: Vec<String>,
    pub config_path: PathBuf,
    pub sim_log: PathBuf,
    daemon_log_index: u32,
    daemon_cpus: Option<String>,
    rttime_us: Option<u64>,
    // Order of fields = drop order: daemon first, then its devices, bus last.
    pub daemon: Option<Daemon>,
    pub sim: SimUnits,
    pub rt: tokio::runtime::Runtime,
    conn: Option<zbus::Connection>,
    pub bus: Bus,
}

impl Rig {
    pub fn start(binaries: &Binaries, options: &RigOptions) -> anyhow::Result<Rig> {
        for binary in [&binaries.daemon, &binaries.ctl] {
            if !binary.exists() {
                bail!(
                    "{} not found: build it first (cargo build --release --bins)",
                    binary.display()
                );
            }
        }
        let dir = tempfile::Builder::new()
            .prefix("chessclock-bench.")
            .tempdir()
            .context("cannot make a temporary folder")?;
        let dev = dir.path().join("dev");
        std::fs::create_dir_all(&dev)?;
        let sim_log = dir.path().join("sim.jsonl");
        let mut units = Vec::new();
        let mut boot_rng = rand::rngs::StdRng::seed_from_u64(options.seed);
        let mut boot_delay = || {
            if options.boot_spread_us == 0 {
                0
            } else {
                BOOT_AFTER_US + boot_rng.random_range(0..options.boot_spread_us)
            }
        };
        for i in 0..options.boards {
            let mut buttons = UnitSpec::new(&buttons_unit(i), UnitKind::Buttons);
            buttons.link = Some(dev.join(buttons_unit(i)));
            buttons.boot_delay_us = boot_delay();
            let mut display = UnitSpec::new(&display_unit(i), UnitKind::Display);
            display.link = Some(dev.join(display_unit(i)));
            display.boot_delay_us = boot_delay();
            units.push(buttons);
            units.push(display);
        }
        let sim = chessclock_sim_units::spawn_units(&SimOptions {
            units,
            log: Some(LogTarget::File(sim_log.clone())),
            log_sent: options.log_sent,
            seed: Some(options.seed),
        })
        .context("cannot start the simulated units")?;

        let state_dir = dir.path().join("state");
        let boards: Vec<String> = (0..options.boards).map(board_id).collect();
        let mut config = format!(
            "[daemon]\nstate-dir = \"{}\"\nbus = \"session\"\nrt-priority = {}\nmlock = {}\nwatch-dirs = [\"{}\"]\n\n",
            state_dir.display(),
            if options.realtime { 50 } else { 0 },
            options.realtime,
            dev.display()
        );
        for i in 0..options.boards {
            config.push_str(&format!(
                "[[board]]\nid = \"{}\"\ncontrol = \"300\"\nbuttons = \"{}\"\ndisplays = [\"{}\"]\nwhite-button = \"left\"\n\n",
                board_id(i),
                dev.join(buttons_unit(i)).display(),
                dev.join(display_unit(i)).display()
            ));
        }
        let config_path = dir.path().join("chessclockd.toml");
        std::fs::write(&config_path, config)?;
        let bus = Bus::start(dir.path())?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let mut rig = Rig {
            dir,
            binaries: binaries.clone(),
            boards,
            config_path,
            sim_log,
            daemon_log_index: 0,
            daemon_cpus: options.daemon_cpus.clone(),
            rttime_us: options.rttime_us,
            daemon: None,
            sim,
            rt,
            conn: None,
            bus,
        };
        rig.spawn_daemon()?;
        rig.wait_ready(Duration::from_secs(30))?;
        Ok(rig)
    }

    pub fn sim(&self) -> SimHandle {
        self.sim.handle()
    }

    /// Starts `chessclockd --config ...` on the private bus.
    pub fn spawn_daemon(&mut self) -> anyhow::Result<()> {
        if self.daemon.is_some() {
            bail!("the daemon is already running");
        }
        self.daemon_log_index += 1;
        let log = self
            .dir
            .path()
            .join(format!("daemon.{}.log", self.daemon_log_index));
        let stderr = std::fs::File::create(&log)?;
        let started_us = monotonic_now_us();
        // taskset (util-linux) sets the affinity before the daemon starts,
        // so every thread it makes inherits it; it then execs the daemon
        // (same process id).
        // prlimit (util-linux) likewise sets the limit, then execs.
        let mut argv: Vec<std::ffi::OsString> = Vec::new();
        if let Some(rttime) = self.rttime_us {
            argv.push("prlimit".into());
            argv.push(format!("--rttime={rttime}").into());
        }
        if let Some(cpus) = &self.daemon_cpus {
            argv.push("taskset".into());
            argv.push("-c".into());
            argv.push(cpus.into());
        }
        argv.push(self.binaries.daemon.clone().into());
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]);
        let child = command
            .arg("--config")
            .arg(&self.config_path)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .env(
                "RUST_LOG",
                // The timing thread's info lines say how late its timer
                // wake-ups were (read by the scale run at its clean stop).
                std::env::var("CHESSCLOCK_BENCH_DAEMON_LOG")
                    .unwrap_or_else(|_| "warn,chessclockd::runtime::timing=info".into()),
            )
            .env_remove("NOTIFY_SOCKET")
            .env_remove("WATCHDOG_USEC")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("cannot start {}", self.binaries.daemon.display()))?;
        self.daemon = Some(Daemon { child, started_us });
        Ok(())
    }

    /// Every daemon log written so far, concatenated.
    pub fn daemon_logs(&self) -> String {
        (1..=self.daemon_log_index)
            .filter_map(|i| {
                std::fs::read_to_string(self.dir.path().join(format!("daemon.{i}.log"))).ok()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn daemon_pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(Daemon::pid)
    }

    fn connection(&mut self) -> anyhow::Result<zbus::Connection> {
        if let Some(conn) = &self.conn {
            return Ok(conn.clone());
        }
        let address = self.bus.address.clone();
        let conn = self.rt.block_on(async move {
            zbus::connection::Builder::address(address.as_str())
                .build()
                .await
        })?;
        self.conn = Some(conn.clone());
        Ok(conn)
    }

    /// Runs `f` with a board proxy on the rig's runtime.
    pub fn board_call<T>(
        &mut self,
        board: &str,
        f: impl AsyncFnOnce(BoardProxy<'static>) -> Result<T, chessclockd::dbus::error::Error>,
    ) -> anyhow::Result<T> {
        let conn = self.connection()?;
        let path = chessclockd::dbus::board_path(board);
        self.rt.block_on(async move {
            let proxy = BoardProxy::builder(&conn)
                .path(path)
                .cache_properties(zbus::proxy::CacheProperties::No)
                .build()
                .await?;
            let result = tokio::time::timeout(Duration::from_secs(10), f(proxy))
                .await
                .map_err(|_| anyhow!("board {board}: no D-Bus reply within 10 s"))?;
            result.map_err(|e| anyhow!("board {board}: {e}"))
        })
    }

    /// Waits until the daemon owns its bus name, lists every board, and
    /// every board has both its devices connected. Returns how long it took
    /// from the daemon's spawn. On a timeout the error says what the last
    /// look saw (the boards listed, each board's devices), the simulated
    /// units' log, each board's `State()` read afresh (beside the D-Bus
    /// object's cached snapshot, which the look reads) and the daemon's
    /// threads, and the temporary folder is kept.
    pub fn wait_ready(&mut self, timeout: Duration) -> anyhow::Result<Duration> {
        let deadline = Instant::now() + timeout;
        let started = self.daemon.as_ref().map(|d| d.started_us).unwrap_or(0);
        loop {
            if let Some(daemon) = self.daemon.as_mut() {
                if let Some(status) = daemon.exited() {
                    bail!(
                        "the daemon exited ({status}) while starting:\n{}",
                        tail(&self.daemon_logs(), 30)
                    );
                }
            }
            let last_seen = match self.readiness() {
                Ok(None) => {
                    return Ok(Duration::from_micros(
                        (monotonic_now_us() - started).max(0) as u64
                    ))
                }
                Ok(Some(missing)) => missing,
                Err(error) => format!("asking failed: {error:#}"),
            };
            if Instant::now() > deadline {
                self.keep_dir();
                bail!(
                    "the daemon was not ready (boards listed, devices connected) within {timeout:?}\n\
                     last seen: {last_seen}\n\
                     the boards' State() (read afresh, not the D-Bus objects' cache): {}\n\
                     the daemon's threads: {}\n\
                     the simulated units' log ({}, kept):\n{}\n\
                     the daemon's log:\n{}",
                    self.fresh_states(),
                    self.daemon_threads(),
                    self.sim_log.display(),
                    tail(&std::fs::read_to_string(&self.sim_log).unwrap_or_default(), 60),
                    tail(&self.daemon_logs(), 30)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `None` when every board is listed and has both devices connected;
    /// otherwise what is missing (the boards listed, each board's devices).
    fn readiness(&mut self) -> anyhow::Result<Option<String>> {
        let conn = self.connection()?;
        let wanted = self.boards.len();
        let listed = self.rt.block_on(async {
            let manager = ManagerProxy::new(&conn).await?;
            manager.list_boards().await.map_err(anyhow::Error::from)
        })?;
        if listed.len() < wanted {
            return Ok(Some(format!("boards listed: {listed:?}")));
        }
        let mut missing = Vec::new();
        for board in self.boards.clone() {
            let snapshot: Value =
                serde_json::from_str(&self.board_call(&board, async |b| b.snapshot().await)?)?;
            let devices = snapshot["devices"].as_array().cloned().unwrap_or_default();
            let connected = devices
                .iter()
                .filter(|d| d["connected"].as_bool().unwrap_or(false))
                .count();
            if connected < 2 {
                missing.push(format!(
                    "board {board}: {connected} of 2 devices connected: {}",
                    Value::Array(devices)
                ));
            }
        }
        if missing.is_empty() {
            Ok(None)
        } else {
            Ok(Some(format!(
                "boards listed: {listed:?}; {}",
                missing.join("; ")
            )))
        }
    }

    /// Each board's `State()`: the control loop's own read of the board,
    /// where `Snapshot()` answers from the D-Bus object's cache.
    fn fresh_states(&mut self) -> String {
        self.boards
            .clone()
            .iter()
            .map(
                |board| match self.board_call(board, async |b| b.state().await) {
                    Ok(state) => format!("{board}: {state}"),
                    Err(error) => format!("{board}: {error:#}"),
                },
            )
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The daemon's threads with their state and kernel wait channel (what
    /// a stuck daemon is waiting in).
    fn daemon_threads(&self) -> String {
        match self.daemon_pid() {
            Some(pid) => super::procfs::threads(pid),
            None => "no daemon".into(),
        }
    }

    /// New game with `control` and start it, on every board.
    pub fn new_games(&mut self, control: &str) -> anyhow::Result<()> {
        for board in self.boards.clone() {
            let control = control.to_owned();
            // A running game must be paused before it is replaced.
            let _ = self.board_call(&board, async |b| b.pause().await);
            self.board_call(&board, async move |b| b.new_game(&control).await)?;
            self.board_call(&board, async |b| b.start().await)?;
        }
        Ok(())
    }

    /// The board's history (JSON array of events) and game epoch (µs).
    pub fn history(&mut self, board: &str) -> anyhow::Result<(Vec<Value>, i64)> {
        let history: Value =
            serde_json::from_str(&self.board_call(board, async |b| b.history().await)?)?;
        let state: Value =
            serde_json::from_str(&self.board_call(board, async |b| b.state().await)?)?;
        let events = history_events(history);
        let epoch = state["game_epoch_us"]
            .as_i64()
            .ok_or_else(|| anyhow!("board {board}: the state has no game_epoch_us"))?;
        Ok((events, epoch))
    }

    /// Leaves the temporary folder in place when the rig is dropped.
    pub fn keep_dir(&mut self) {
        self.dir.disable_cleanup(true);
    }

    /// The simulator's log so far.
    pub fn sim_records(&self) -> Vec<Value> {
        read_jsonl(&self.sim_log)
    }
}

/// A proxy of `board` on a connection of its own to the bus at `address`
/// (so a caller of its own, with its own read share).
pub async fn own_board_proxy(address: &str, board: &str) -> anyhow::Result<BoardProxy<'static>> {
    let conn = zbus::connection::Builder::address(address).build().await?;
    Ok(BoardProxy::builder(&conn)
        .path(chessclockd::dbus::board_path(board))
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await?)
}

/// Parses a JSON Lines file, skipping a torn last line.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The events of a D-Bus history answer: a bare array, or an object with
/// an `events` array (anything else: none).
pub fn history_events(history: Value) -> Vec<Value> {
    match history {
        Value::Array(events) => events,
        Value::Object(map) => map
            .get("events")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}
