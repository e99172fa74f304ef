//! `chessclockd`: the chess clock daemon.
//!
//! Runs the boards of the config file (default
//! `/etc/chessclockd/chessclockd.toml`; when that default file is missing,
//! the embedded defaults), or with `--demo` one simulated board `demo` on
//! the session bus. SIGTERM/SIGINT save and exit; SIGHUP reloads the config
//! (each changed key is applied or logged at WARN as needing a restart; see
//! `runtime::reload`). `--check-config FILE` validates a file (and the
//! files its `[hall]` points to) and exits.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use tokio::signal::unix::{signal, SignalKind};

use std::sync::{Arc, Mutex};

use chessclock_core::views::StateView;
use chessclock_sim_units::view::board::DemoInfo;
use chessclock_sim_units::view::BoardPanel;
use chessclock_sim_units::BoardHost;
use chessclockd::config::{BoardConfig, BusKind, ButtonSide, Config, DeviceRef};
use chessclockd::control::{Caller, Command, ControlHandle, Reply};
use chessclockd::daemon::{run, RunOptions};

use chessclockd::manpages::{DaemonArgs as Args, DEFAULT_CONFIG};

fn main() -> ExitCode {
    chessclockd::runtime::realtime::one_malloc_arena();
    let args = Args::parse();
    if let Some(path) = &args.check_config {
        return check_config(path);
    }
    if let Some(dir) = &args.man {
        return match chessclockd::manpages::write_daemon_pages(dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!(
                    "chessclockd: cannot write the man pages into {}: {error}",
                    dir.display()
                );
                ExitCode::FAILURE
            }
        };
    }
    let interactive = args.demo && std::io::stdout().is_terminal();
    if interactive {
        // The terminal view owns the screen: logs go to a file.
        init_file_logging(&demo_state_dir(&args), args.verbose);
    } else if let Err(error) = chessclock_host::logging::init(args.verbose) {
        eprintln!("chessclockd: cannot set up logging: {error}");
    }
    // The control loop, D-Bus and the readers: no deadline is kept here (the
    // timing thread has its own loop). With mlockall the touched part of
    // every thread's stack stays resident, so the workers and the blocking
    // pool are few and their stacks small (tokio's default is 2 MiB each, a worker per core,
    // up to 512 blocking threads).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("chessclockd-async")
        .worker_threads(chessclockd::runtime::ASYNC_WORKERS)
        .max_blocking_threads(chessclockd::runtime::BLOCKING_THREADS)
        .thread_stack_size(chessclockd::runtime::ASYNC_STACK)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("chessclockd: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        if args.demo {
            demo(args, interactive).await
        } else {
            daemon(args).await
        }
    });
    // Device tasks may sit in blocking reads: do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            eprintln!("chessclockd: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `--check-config FILE`: the file is parsed and validated exactly as the
/// daemon (and SIGHUP) would, and the files its `[hall]` points to
/// (credentials, CA) are read and parsed as the hall's start-up reads them;
/// nothing else is touched.
fn check_config(path: &Path) -> ExitCode {
    match Config::load_with_warnings(path) {
        Ok((config, warnings)) => {
            for warning in &warnings {
                eprintln!("{warning}");
            }
            if let Some(hall) = &config.hall {
                if let Err(error) = chessclockd::hall::check(hall) {
                    // The error names the file (and `LINE:COLUMN` in a
                    // credentials file that is not TOML).
                    eprintln!("{error:#} (the [hall] of {})", path.display());
                    return ExitCode::FAILURE;
                }
            }
            let boards = config.boards.len();
            println!(
                "{}: ok ({boards} board{})",
                path.display(),
                if boards == 1 { "" } else { "s" }
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            // The error names the file, and the line and column when it is
            // located (`FILE:LINE:COLUMN: message`).
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn load_config(path: &Path) -> anyhow::Result<(Config, Option<PathBuf>)> {
    if path == Path::new(DEFAULT_CONFIG) && !path.exists() {
        tracing::info!(
            path = DEFAULT_CONFIG,
            "no config file; using the embedded defaults"
        );
        return Ok((Config::default(), None));
    }
    let (config, warnings) = Config::load_with_warnings(path)?;
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    Ok((config, Some(path.to_owned())))
}

/// Completes on SIGTERM or SIGINT. The handlers are installed before this
/// returns, so a signal during start-up is not lost.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM"),
            _ = int.recv() => tracing::info!("SIGINT"),
        }
    })
}

fn bus_choice(args: &Args) -> Option<BusKind> {
    if args.session {
        Some(BusKind::Session)
    } else if args.system {
        Some(BusKind::System)
    } else {
        None
    }
}

async fn daemon(args: Args) -> anyhow::Result<()> {
    let shutdown = shutdown_signal()?;
    let (config, config_path) = load_config(&args.config)?;
    let options = RunOptions {
        state_dir: args.state_dir.clone(),
        bus: bus_choice(&args),
        config_path,
        no_state: args.no_state,
        ..RunOptions::default()
    };
    run(config, options, shutdown).await
}

/// `$XDG_STATE_HOME/chessclockd-demo` (or `~/.local/state/...`, or a folder
/// under the temporary directory), unless `--state-dir` says otherwise.
fn demo_state_dir(args: &Args) -> PathBuf {
    if let Some(dir) = &args.state_dir {
        return dir.clone();
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local/state"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("chessclockd-demo")
}

fn init_file_logging(dir: &Path, verbosity: u8) {
    let _ = std::fs::create_dir_all(dir);
    let path = dir.join("chessclockd.log");
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(chessclock_host::logging::default_directive(verbosity))
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}

/// A private session bus started for the demo (killed on drop).
struct PrivateBus {
    address: String,
    pid: Option<i32>,
}

impl PrivateBus {
    fn start() -> anyhow::Result<PrivateBus> {
        let output = std::process::Command::new("dbus-daemon")
            .args(["--session", "--fork", "--print-address=1", "--print-pid=1"])
            .stdin(std::process::Stdio::null())
            .output()
            .context("no session bus and cannot start dbus-daemon (install dbus)")?;
        anyhow::ensure!(
            output.status.success(),
            "dbus-daemon failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        let text = String::from_utf8_lossy(&output.stdout);
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let address = lines
            .next()
            .context("dbus-daemon printed no address")?
            .to_owned();
        let pid = lines.next().and_then(|p| p.parse().ok());
        Ok(PrivateBus { address, pid })
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }
}

async fn demo(args: Args, interactive: bool) -> anyhow::Result<()> {
    use chessclock_sim_units::{spawn_units, SimOptions};

    let shutdown = shutdown_signal()?;
    let state_dir = demo_state_dir(&args);
    std::fs::create_dir_all(&state_dir)
        .with_context(|| format!("cannot create {}", state_dir.display()))?;
    // Before the simulated units and the terminal view start: a second
    // demo on this state says so at once. The runtime keeps this lock
    // (released and taken again, a second demo started in between got in).
    let state_lock = if args.no_state {
        None
    } else {
        Some(chessclockd::runtime::lock::acquire(&state_dir)?)
    };
    // Stable names for the simulated units (the PTY changes on a replug).
    let links = std::env::temp_dir().join(format!("chessclockd-demo-{}", std::process::id()));
    std::fs::create_dir_all(&links)
        .with_context(|| format!("cannot create {}", links.display()))?;
    let mut sim = SimOptions::demo();
    for unit in &mut sim.units {
        unit.link = Some(links.join(&unit.name));
    }
    let units = spawn_units(&sim).context("cannot start the simulated units")?;
    let device = |name: &str| -> anyhow::Result<DeviceRef> {
        let path = units
            .path(name)
            .with_context(|| format!("the simulator has no unit `{name}`"))?;
        Ok(DeviceRef::Path(path.clone()))
    };

    let mut config = Config::default();
    config.daemon.bus = BusKind::Session;
    config.daemon.rt_priority = 0;
    config.daemon.mlock = false;
    config.daemon.require_ntp_for_scheduled_start = false;
    config.boards = vec![BoardConfig {
        short_control: false,
        id: "demo".into(),
        control: DEMO_CONTROL.into(),
        buttons: Some(device("buttons")?),
        displays: vec![device("display")?.into()],
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: true,
        event: None,
        site: None,
        round: None,
        white: None,
        black: None,
    }];

    let private_bus = if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty())
    {
        None
    } else {
        let bus = PrivateBus::start()?;
        println!(
            "No session bus was running: started one. Use it with\n  DBUS_SESSION_BUS_ADDRESS='{}' chessclockctl --user status demo",
            bus.address
        );
        Some(bus)
    };
    println!(
        "chessclockd demo: board `demo`, state in {}",
        state_dir.display()
    );
    let bus_line = match &private_bus {
        Some(bus) => format!(
            "From another terminal: DBUS_SESSION_BUS_ADDRESS='{}' chessclockctl --user status demo",
            bus.address
        ),
        None => "From another terminal: chessclockctl --user status demo (CHESSCLOCKCTL_BUS=user saves --user)"
            .to_owned(),
    };

    let (handle_tx, handle_rx) = tokio::sync::oneshot::channel();
    let options = RunOptions {
        state_dir: Some(state_dir),
        bus: Some(BusKind::Session),
        bus_address: private_bus.as_ref().map(|b| b.address.clone()),
        no_state: args.no_state,
        handle: Some(handle_tx),
        state_lock,
        ..RunOptions::default()
    };
    let host = Arc::new(DemoHost {
        runtime: tokio::runtime::Handle::current(),
        handle: Mutex::new(None),
        info: Mutex::new(DemoInfo {
            bus: bus_line,
            white_left: true,
            start_on_black_press: true,
            notice: None,
        }),
        cached: Mutex::new(None),
    });
    {
        let host = Arc::clone(&host);
        let keep = args.keep_state;
        tokio::spawn(async move {
            if let Ok(handle) = handle_rx.await {
                let notice = demo_first_game(&handle, keep).await;
                if let Some(notice) = &notice {
                    println!("{notice}");
                }
                if let Ok(mut info) = host.info.lock() {
                    info.notice = notice;
                }
                if let Ok(mut slot) = host.handle.lock() {
                    *slot = Some(handle);
                }
            }
        });
    }
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (view, idle_units) = if interactive {
        let host = Arc::clone(&host);
        let view = std::thread::spawn(move || {
            let result = chessclock_sim_units::run_demo(units, host.as_ref(), &|| false);
            let _ = stop_tx.send(());
            result
        });
        (Some(view), None)
    } else {
        drop(stop_tx);
        (None, Some(units))
    };
    let stop = async move {
        tokio::select! {
            _ = shutdown => {},
            Ok(()) = &mut stop_rx => tracing::info!("the terminal view was closed"),
        }
    };
    let result = run(config, options, stop).await;
    if let Some(units) = idle_units {
        // Stopping the simulator joins its threads; do not let that hold up
        // the exit (the PTYs close with the process anyway).
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            units.shutdown();
            let _ = done_tx.send(());
        });
        let _ = done_rx.recv_timeout(std::time::Duration::from_millis(300));
    }
    if let Some(view) = view {
        // Only join a view that has ended (the user quit); after a signal
        // the process exits with the view still open.
        if view.is_finished() {
            if let Ok(Err(error)) = view.join() {
                tracing::warn!(%error, "terminal view");
            }
        } else {
            // Stopped by a signal with the view still drawing: give the
            // terminal back in a usable state.
            let _ = crossterm::terminal::disable_raw_mode();
            let _ = crossterm::execute!(
                std::io::stdout(),
                crossterm::terminal::LeaveAlternateScreen,
                crossterm::cursor::Show
            );
        }
    }
    drop(private_bus);
    let _ = std::fs::remove_dir_all(&links);
    result
}

/// The demo's control.
const DEMO_CONTROL: &str = "300+3";

/// The demo board seen from the terminal view: its panel and the keys `r`
/// (resume) and `n` (new game), through the runtime's control handle.
struct DemoHost {
    runtime: tokio::runtime::Handle,
    handle: Mutex<Option<ControlHandle>>,
    info: Mutex<DemoInfo>,
    /// The last panel and when it was made (read at most 10 times a second).
    cached: Mutex<Option<(std::time::Instant, BoardPanel)>>,
}

impl DemoHost {
    fn call(&self, command: Command) -> Result<Reply, String> {
        let handle = self
            .handle
            .lock()
            .ok()
            .and_then(|h| h.clone())
            .ok_or_else(|| "the daemon is still starting".to_owned())?;
        let uid = nix::unistd::getuid().as_raw();
        let caller = Caller {
            uid: Some(uid),
            name: chessclockd::dbus::auth::account_name(uid),
        };
        self.runtime
            .block_on(handle.call("demo", command, caller))
            .map_err(|e| e.to_string())
    }
}

impl BoardHost for DemoHost {
    fn panel(&self) -> Option<BoardPanel> {
        if let Ok(cached) = self.cached.lock() {
            if let Some((at, panel)) = cached.as_ref() {
                if at.elapsed() < std::time::Duration::from_millis(100) {
                    return Some(panel.clone());
                }
            }
        }
        let Ok(Reply::Json(text)) = self.call(Command::State) else {
            return None;
        };
        let view: StateView = serde_json::from_str(&text).ok()?;
        let info = self.info.lock().ok()?.clone();
        let panel = BoardPanel::of(&view, &info);
        if let Ok(mut cached) = self.cached.lock() {
            *cached = Some((std::time::Instant::now(), panel.clone()));
        }
        Some(panel)
    }

    fn resume(&self) -> String {
        match self.call(Command::Resume) {
            Ok(_) => "resumed: the clock runs".to_owned(),
            Err(error) => format!("not resumed: {error}"),
        }
    }

    fn new_game(&self) -> String {
        // The old game stays in the record; a running clock is paused first.
        let _ = self.call(Command::Pause);
        let result = self.call(Command::NewGame {
            control: DEMO_CONTROL.to_owned(),
        });
        if let Ok(mut info) = self.info.lock() {
            info.notice = None;
        }
        match result {
            Ok(_) => "a new game: press l to start White's clock".to_owned(),
            Err(error) => format!("no new game: {error}"),
        }
    }
}

/// The demo's first game: a fresh one unless `keep` (the last run's game
/// stays in the record); with `keep`, what the kept game is.
async fn demo_first_game(handle: &ControlHandle, keep: bool) -> Option<String> {
    let state: StateView = match handle.call("demo", Command::State, Caller::DAEMON).await {
        Ok(Reply::Json(text)) => serde_json::from_str(&text).ok()?,
        _ => return None,
    };
    if !state.started {
        return None;
    }
    if keep {
        return Some(if state.paused {
            "The game of the last demo run is back, paused: press r to resume, n for a new game."
                .to_owned()
        } else {
            "The game of the last demo run goes on.".to_owned()
        });
    }
    let _ = handle.call("demo", Command::Pause, Caller::DAEMON).await;
    match handle
        .call(
            "demo",
            Command::NewGame {
                control: DEMO_CONTROL.to_owned(),
            },
            Caller::DAEMON,
        )
        .await
    {
        Ok(_) => Some(
            "A fresh game (the last run's game is kept in the record: chessclockctl --user games demo; \
             chessclockd --demo --keep-state continues it)."
                .to_owned(),
        ),
        Err(error) => Some(format!("The last run's game could not be replaced: {error}")),
    }
}
