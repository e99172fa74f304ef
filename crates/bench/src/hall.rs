//! The hall bench (issue 16): many daemons on one broker and one hub, on
//! this machine. It starts a mosquitto of its own (127.0.0.1, a free port,
//! anonymous, no persistence), `chessclock-hall` (the hub), and N
//! `chessclockd`s of M boards each (each on a private D-Bus, every board
//! with a simulated button and display unit on PTYs), starts every game
//! from the hall (MQTT commands) and then presses at a steady rate, round
//! robin over the boards, for three phases: broker up, broker down
//! (mosquitto killed), broker up again.
//!
//! What it measures (never asserts):
//! * press to page: from a press's true instant (the simulated unit's) to
//!   the hub's `/events` stream (server-sent events, read over HTTP as a
//!   page's `EventSource` gets them) carrying that board's state with the
//!   press counted; for presses with the broker up (up to 2 s before it
//!   goes down, and after the restart once every board's state reached the
//!   page again), and separately how long presses made while the broker was
//!   down took to reach the page;
//! * the broker's and the hub's CPU (% of one core) and RSS over the first
//!   phase, from `/proc`, and the daemons' together;
//! * the clock's display timing with the broker up and down: how late each
//!   whole-second change of a running clock reached its display unit
//!   against the daemon's own accounting ([`super::analysis::display_lateness`]),
//!   split by phase;
//! * the load average at the start and end (the machine may be shared).
//!
//! Everything it starts is stopped by its own pid when the run ends.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde::Serialize;
use serde_json::{json, Value};

use super::analysis;
use super::procfs::{self, ProcSample, Usage};
use super::rig::{read_jsonl, Binaries, Bus};
use super::stats::Summary;
use chessclock_core::engine::SECOND;
use chessclock_host::clock::monotonic_now_us;
use chessclock_protocol::Button;
use chessclock_sim_units::{LogTarget, SimOptions, SimUnits, UnitKind, UnitSpec};

/// Presses this close before the broker goes down are left out of press
/// to page: their states may be in flight when it dies (µs).
const GUARD_US: i64 = 2_000_000;
/// The hall's name in the bench.
pub(crate) const HALL: &str = "bench";
/// Each game's control: sudden death, so that the display analysis can
/// rebuild the running intervals from the history alone.
pub(crate) const CONTROL_SECONDS: i64 = 600;

/// How to run the hall bench.
#[derive(Clone, Debug)]
pub struct HallOptions {
    pub daemons: usize,
    pub boards_per_daemon: usize,
    /// Presses per second over all boards.
    pub presses_per_second: f64,
    /// Seconds of each phase (up, down, up).
    pub phase_seconds: f64,
    /// The daemons' MQTT keepalive.
    pub keepalive_seconds: u16,
    /// The hub binary (default: beside this one).
    pub hub: Option<PathBuf>,
    /// Keep the temporary folder (logs, the simulator's log).
    pub keep: bool,
}

impl Default for HallOptions {
    fn default() -> HallOptions {
        HallOptions {
            daemons: 16,
            boards_per_daemon: 16,
            presses_per_second: 10.0,
            phase_seconds: 30.0,
            keepalive_seconds: 10,
            hub: None,
            keep: false,
        }
    }
}

/// The figures of one run (ms unless named otherwise).
#[derive(Clone, Debug, Serialize)]
pub struct HallReport {
    pub daemons: usize,
    pub boards: usize,
    pub presses_per_second: f64,
    pub phase_seconds: f64,
    pub load_average_start: [f64; 3],
    pub load_average_end: [f64; 3],
    /// Seconds from the first daemon's start until every board's state,
    /// with its units linked, was on the page.
    pub all_boards_on_page_s: f64,
    /// Press to page with the broker up.
    pub press_to_page_ms: Summary,
    /// Presses made with the broker up, and how many never reached the page.
    pub presses_up: usize,
    pub presses_up_missing: usize,
    /// Presses made while the broker was down: how long until the page
    /// showed them (after the broker came back).
    pub down_press_to_page_ms: Summary,
    pub presses_down: usize,
    pub presses_down_missing: usize,
    /// Seconds from the broker's restart until every board's state was on
    /// the page again.
    pub page_recovered_after_restart_s: f64,
    /// Over the first phase (broker up).
    pub broker: Usage,
    pub hub: Usage,
    /// All daemons together: CPU % of one core, RSS MB summed.
    pub daemons_cpu_percent: f64,
    pub daemons_rss_mb: f64,
    /// Lateness of the displays' second changes, broker up (both up
    /// phases) and broker down.
    pub display_lateness_up_ms: Summary,
    pub display_lateness_down_ms: Summary,
    /// Server-sent events the bench read from the hub.
    pub page_messages: usize,
}

/// A state as the page got it.
struct PageState {
    at_us: i64,
    board: String,
    moves: u64,
    linked: bool,
}

/// One press the bench made.
struct Press {
    board: usize,
    /// The board's moves once it is counted.
    moves: u64,
    at_us: i64,
}

pub(crate) fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut fields = text
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(f64::NAN));
    [
        fields.next().unwrap_or(f64::NAN),
        fields.next().unwrap_or(f64::NAN),
        fields.next().unwrap_or(f64::NAN),
    ]
}

pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

pub(crate) fn wait_listening(
    port: u16,
    child: &mut Child,
    what: &str,
    limit: Duration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait()? {
            bail!("{what} exited ({status}) before listening on {port}");
        }
        if Instant::now() > deadline {
            bail!("{what} did not listen on {port} within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// A child process stopped (by its pid) when dropped.
pub(crate) struct Process(pub(crate) Child);

impl Process {
    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    pub(crate) fn terminate(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The bench's mosquitto.
pub(crate) struct Mosquitto {
    pub(crate) port: u16,
    config: PathBuf,
    log: PathBuf,
    process: Option<Process>,
}

impl Mosquitto {
    pub(crate) fn start(dir: &Path) -> anyhow::Result<Mosquitto> {
        let port = free_port()?;
        let config = dir.join("mosquitto.conf");
        // `user root`: run as root, mosquitto would otherwise drop to its
        // own user (ignored when not root).
        std::fs::write(
            &config,
            format!(
                "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n\
                 max_queued_messages 100000\n"
            ),
        )?;
        let mut broker = Mosquitto {
            port,
            config,
            log: dir.join("mosquitto.log"),
            process: None,
        };
        broker.run()?;
        Ok(broker)
    }

    fn run(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut child = Command::new("mosquitto")
                .arg("-c")
                .arg(&self.config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&self.log)?)
                .spawn()
                .context("cannot start mosquitto (apt install mosquitto)")?;
            // The old one's port may still be in TIME_WAIT: try again.
            match wait_listening(self.port, &mut child, "mosquitto", Duration::from_secs(5)) {
                Ok(()) => {
                    self.process = Some(Process(child));
                    return Ok(());
                }
                Err(error) if Instant::now() < deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    tracing::debug!(%error, "mosquitto again");
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(error) => return Err(error),
            }
        }
    }

    pub(crate) fn kill(&mut self) {
        self.process = None;
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Process::pid)
    }
}

/// The bench reads live data as a hall screen (the hub's `--screen-tokens`).
pub(crate) const SCREEN_TOKEN: &str = "bench-screen-0123456789abcdef";

/// Reads the hub's `/events` over plain HTTP/1.0 (the body then ends
/// with the connection, no chunks) and hands each board state on.
fn read_page(port: u16, page: std_mpsc::Sender<PageState>) -> anyhow::Result<()> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.write_all(
        format!(
            "GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {SCREEN_TOKEN}\r\n\
             Accept: text/event-stream\r\n\r\n"
        )
        .as_bytes(),
    )?;
    let reader = BufReader::new(stream);
    for line in reader.lines() {
        let line = line?;
        let at_us = monotonic_now_us();
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(data.trim_start()) else {
            continue;
        };
        if value["type"] != "state" {
            continue;
        }
        let snapshot = &value["payload"]["snapshot"];
        let (Some(board), Some(white), Some(black)) = (
            value["board"].as_str(),
            snapshot["white_moves"].as_u64(),
            snapshot["black_moves"].as_u64(),
        ) else {
            continue;
        };
        let linked = snapshot["devices"]
            .as_array()
            .is_some_and(|d| !d.is_empty() && d.iter().all(|d| d["connected"] == true));
        if page
            .send(PageState {
                at_us,
                board: board.to_owned(),
                moves: white + black,
                linked,
            })
            .is_err()
        {
            return Ok(());
        }
    }
    Ok(())
}

/// The bench's MQTT client: sends commands and collects their replies.
pub(crate) struct Controller {
    rt: tokio::runtime::Runtime,
    client: AsyncClient,
    replies: tokio::sync::mpsc::UnboundedReceiver<Value>,
    next: u64,
}

impl Controller {
    pub(crate) fn connect(port: u16) -> anyhow::Result<Controller> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let mut options = MqttOptions::new("chessclock-bench-hall", "127.0.0.1", port);
        options
            .set_keep_alive(Duration::from_secs(30))
            .set_max_packet_size(1 << 22, 1 << 22);
        // The client's event loop is made inside the runtime it runs on.
        let entered = rt.enter();
        let (client, mut eventloop) = AsyncClient::new(options, 1024);
        drop(entered);
        let (tx, replies) = tokio::sync::mpsc::unbounded_channel();
        let (up_tx, up) = std_mpsc::channel();
        let subscriber = client.clone();
        rt.spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                        let filter = format!("chessclock/{HALL}/board/+/reply");
                        let _ = subscriber.subscribe(filter, QoS::AtLeastOnce).await;
                    }
                    Ok(Event::Incoming(Incoming::SubAck(_))) => {
                        let _ = up_tx.send(());
                    }
                    Ok(Event::Incoming(Incoming::Publish(publish))) => {
                        if let Ok(value) = serde_json::from_slice::<Value>(&publish.payload) {
                            let _ = tx.send(value);
                        }
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                }
            }
        });
        up.recv_timeout(Duration::from_secs(20))
            .map_err(|_| anyhow!("the bench's MQTT client did not subscribe"))?;
        Ok(Controller {
            rt,
            client,
            replies,
            next: 0,
        })
    }

    /// Sends `command` to every board and returns the replies by board.
    pub(crate) fn command_all(
        &mut self,
        boards: &[String],
        command: &Value,
        limit: Duration,
    ) -> anyhow::Result<HashMap<String, Value>> {
        let mut waiting: HashMap<String, String> = HashMap::new();
        for board in boards {
            self.next += 1;
            let id = format!("bench-{}", self.next);
            let mut request = json!({"id": id, "arbiter": "Bench"});
            if let (Some(request), Some(fields)) = (request.as_object_mut(), command.as_object()) {
                request.extend(fields.clone());
            }
            let topic = format!("chessclock/{HALL}/board/{board}/command");
            let payload = serde_json::to_vec(&request)?;
            let client = self.client.clone();
            self.rt
                .block_on(client.publish(topic, QoS::AtLeastOnce, false, payload))?;
            waiting.insert(id, board.clone());
        }
        let mut answers = HashMap::new();
        let deadline = tokio::time::Instant::from_std(Instant::now() + limit);
        while !waiting.is_empty() {
            let replies = &mut self.replies;
            let reply = self
                .rt
                .block_on(async { tokio::time::timeout_at(deadline, replies.recv()).await });
            let reply = match reply {
                Ok(Some(reply)) => reply,
                _ => bail!("{} boards did not answer {command}", waiting.len()),
            };
            let Some(board) = reply["id"].as_str().and_then(|id| waiting.remove(id)) else {
                continue;
            };
            answers.insert(board, reply);
        }
        Ok(answers)
    }
}

/// Starts the hub `binary` on the broker at `broker_port` (its log in
/// `dir/hub.log`), reading live data only with the bench's screen token:
/// the hub and its HTTP port.
pub(crate) fn start_hub(
    binary: &Path,
    dir: &Path,
    broker_port: u16,
    extra: &[std::ffi::OsString],
) -> anyhow::Result<(Process, u16)> {
    let hub_port = free_port()?;
    let hub_log = std::fs::File::create(dir.join("hub.log"))?;
    let screen_tokens = dir.join("screen-tokens");
    std::fs::write(&screen_tokens, format!("{SCREEN_TOKEN}\n"))?;
    let mut hub_child = Command::new(binary)
        .args(["--broker", &format!("mqtt://127.0.0.1:{broker_port}")])
        .arg("--screen-tokens")
        .arg(&screen_tokens)
        .args(["--hall", HALL])
        .args(["--listen", &format!("127.0.0.1:{hub_port}")])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(hub_log)
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    wait_listening(hub_port, &mut hub_child, "the hub", Duration::from_secs(20))?;
    Ok((Process(hub_child), hub_port))
}

/// Starts a `chessclockd` in `ddir` (its log `ddir/daemon.log`) on a
/// private D-Bus, as hall host `host` on the broker at `broker_port`, with
/// `boards`, each on the simulated units `<board>-buttons` and
/// `<board>-display` linked under `dev`.
pub(crate) fn start_daemon(
    binaries: &Binaries,
    ddir: &Path,
    boards: &[String],
    dev: &Path,
    host: &str,
    broker_port: u16,
    keepalive_seconds: u16,
) -> anyhow::Result<(Process, Bus)> {
    std::fs::create_dir_all(ddir)?;
    let bus = Bus::start(ddir)?;
    let mut config = format!(
        "[daemon]\nstate-dir = \"{}\"\nbus = \"session\"\nrt-priority = 0\nmlock = false\n\n",
        ddir.join("state").display()
    );
    for board in boards {
        config.push_str(&format!(
            "[[board]]\nid = \"{board}\"\ncontrol = \"{CONTROL_SECONDS}\"\nbuttons = \"{}\"\n\
             displays = [\"{}\"]\nwhite-button = \"left\"\n\n",
            dev.join(format!("{board}-buttons")).display(),
            dev.join(format!("{board}-display")).display(),
        ));
    }
    config.push_str(&format!(
        "[hall]\nbroker = \"mqtt://127.0.0.1:{broker_port}\"\nname = \"{HALL}\"\nhost = \"{host}\"\n\
         keepalive-seconds = {keepalive_seconds}\nbuffer = 4096\n"
    ));
    let config_path = ddir.join("chessclockd.toml");
    std::fs::write(&config_path, config)?;
    let child = Command::new(&binaries.daemon)
        .arg("--config")
        .arg(&config_path)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("RUST_LOG", "warn")
        .env_remove("NOTIFY_SOCKET")
        .env_remove("WATCHDOG_USEC")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(ddir.join("daemon.log"))?)
        .spawn()
        .with_context(|| format!("cannot start {}", binaries.daemon.display()))?;
    Ok((Process(child), bus))
}

/// Runs the hall bench.
pub fn run(
    binaries: &Binaries,
    options: &HallOptions,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<HallReport> {
    let load_average_start = load_average();
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
    if options.daemons == 0 || options.boards_per_daemon == 0 {
        bail!("give at least one daemon and one board per daemon");
    }
    let mut dir = tempfile::Builder::new()
        .prefix("chessclock-bench-hall.")
        .tempdir()
        .context("cannot make a temporary folder")?;
    if options.keep {
        dir.disable_cleanup(true);
        progress(&format!("keeping {}", dir.path().display()));
    }
    let mut broker = Mosquitto::start(dir.path())?;

    let (hub, hub_port) = start_hub(&hub_binary, dir.path(), broker.port, &[])?;

    // The page, read from before the first daemon starts.
    let (page_tx, page_rx) = std_mpsc::channel();
    std::thread::Builder::new()
        .name("hall-page".into())
        .spawn(move || {
            if let Err(error) = read_page(hub_port, page_tx) {
                tracing::warn!(%error, "the hub's event stream ended");
            }
        })?;

    // Units: a button and a display unit per board.
    let boards: Vec<String> = (0..options.daemons)
        .flat_map(|d| (0..options.boards_per_daemon).map(move |b| format!("d{d}_b{b}")))
        .collect();
    let dev = dir.path().join("dev");
    std::fs::create_dir_all(&dev)?;
    let mut units = Vec::new();
    for board in &boards {
        let mut buttons = UnitSpec::new(&format!("{board}-buttons"), UnitKind::Buttons);
        buttons.link = Some(dev.join(format!("{board}-buttons")));
        let mut display = UnitSpec::new(&format!("{board}-display"), UnitKind::Display);
        display.link = Some(dev.join(format!("{board}-display")));
        units.push(buttons);
        units.push(display);
    }
    let sim_log = dir.path().join("sim.jsonl");
    let sim: SimUnits = chessclock_sim_units::spawn_units(&SimOptions {
        units,
        log: Some(LogTarget::File(sim_log.clone())),
        log_sent: false,
        seed: Some(16),
    })
    .context("cannot start the simulated units")?;
    let handle = sim.handle();

    progress(&format!(
        "starting {} daemons of {} boards on the broker at 127.0.0.1:{}",
        options.daemons, options.boards_per_daemon, broker.port
    ));
    let started_us = monotonic_now_us();
    let mut buses = Vec::new();
    let mut daemons = Vec::new();
    for d in 0..options.daemons {
        let ddir = dir.path().join(format!("d{d}"));
        let host_boards: Vec<String> = (0..options.boards_per_daemon)
            .map(|b| format!("d{d}_b{b}"))
            .collect();
        let (daemon, bus) = start_daemon(
            binaries,
            &ddir,
            &host_boards,
            &dev,
            &format!("d{d}"),
            broker.port,
            options.keepalive_seconds,
        )?;
        daemons.push(daemon);
        buses.push(bus);
    }

    // Every board on the page with its units linked.
    let mut page: Vec<PageState> = Vec::new();
    let mut linked: BTreeMap<String, bool> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(180);
    while linked.values().filter(|l| **l).count() < boards.len() {
        match page_rx.recv_timeout(Duration::from_millis(200)) {
            Ok(state) => {
                linked.insert(state.board.clone(), state.linked);
                page.push(state);
            }
            Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            Err(std_mpsc::RecvTimeoutError::Disconnected) => bail!("the hub's event stream ended"),
        }
        for (d, daemon) in daemons.iter_mut().enumerate() {
            if let Ok(Some(status)) = daemon.0.try_wait() {
                let log = std::fs::read_to_string(dir.path().join(format!("d{d}/daemon.log")))
                    .unwrap_or_default();
                bail!(
                    "daemon d{d} exited ({status}): {}",
                    super::rig::tail(&log, 5)
                );
            }
        }
        if Instant::now() > deadline {
            bail!(
                "only {} of {} boards reached the page linked within 180 s",
                linked.values().filter(|l| **l).count(),
                boards.len()
            );
        }
    }
    let all_boards_on_page_s = (monotonic_now_us() - started_us) as f64 / 1e6;
    progress(&format!(
        "all {} boards on the page after {all_boards_on_page_s:.1} s",
        boards.len()
    ));

    let mut controller = Controller::connect(broker.port)?;
    let started = controller.command_all(
        &boards,
        &json!({"command": "start"}),
        Duration::from_secs(60),
    )?;
    if let Some((board, reply)) = started.iter().find(|(_, reply)| reply["ok"] != true) {
        bail!("{board} did not start: {reply}");
    }

    // The three phases: presses round robin at a steady rate.
    let phase = Duration::from_secs_f64(options.phase_seconds);
    let interval = Duration::from_secs_f64(1.0 / options.presses_per_second.max(0.1));
    let mut presses: Vec<Press> = Vec::new();
    let mut moves = vec![0u64; boards.len()];
    let mut next_board = 0usize;
    let mut phases_us = [0i64; 4];
    // Broker, hub, then each daemon, over the first phase.
    let mut samples: Vec<Option<(ProcSample, ProcSample)>> = Vec::new();
    let pids = |broker: &Mosquitto| -> Vec<u32> {
        let mut pids = vec![broker.pid().unwrap_or(0), hub.pid()];
        pids.extend(daemons.iter().map(Process::pid));
        pids
    };
    for (index, name) in ["broker up", "broker down", "broker up again"]
        .iter()
        .enumerate()
    {
        match index {
            1 => broker.kill(),
            2 => broker.run()?,
            _ => {}
        }
        phases_us[index] = monotonic_now_us();
        progress(&format!("phase: {name} ({:.0} s)", options.phase_seconds));
        let first: Vec<Option<ProcSample>> =
            pids(&broker).into_iter().map(procfs::sample).collect();
        let phase_start = Instant::now();
        let mut next = phase_start;
        while phase_start.elapsed() < phase {
            let now = Instant::now();
            if now < next {
                std::thread::sleep(next - now);
            }
            next += interval;
            let board = next_board % boards.len();
            next_board += 1;
            let button = if moves[board] % 2 == 0 {
                Button::Left
            } else {
                Button::Right
            };
            let unit = format!("{}-buttons", boards[board]);
            let at_us = handle
                .press_returning_instant(Some(&unit), button)
                .map_err(|e| anyhow!("press on {unit}: {e}"))?;
            moves[board] += 1;
            presses.push(Press {
                board,
                moves: moves[board],
                at_us,
            });
            while let Ok(state) = page_rx.try_recv() {
                page.push(state);
            }
        }
        if index == 0 {
            let last: Vec<Option<ProcSample>> =
                pids(&broker).into_iter().map(procfs::sample).collect();
            samples = first
                .into_iter()
                .zip(last)
                .map(|(first, last)| first.zip(last))
                .collect();
        }
    }
    phases_us[3] = monotonic_now_us();
    // The last presses' states, and those the broker held up.
    let drain_until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < drain_until {
        if let Ok(state) = page_rx.recv_timeout(Duration::from_millis(100)) {
            page.push(state);
        }
    }
    let load_average_end = load_average();

    // Press to page.
    let mut by_board: HashMap<&str, Vec<&PageState>> = HashMap::new();
    for state in &page {
        by_board
            .entry(state.board.as_str())
            .or_default()
            .push(state);
    }
    let reached = |press: &Press| -> Option<i64> {
        by_board
            .get(boards[press.board].as_str())?
            .iter()
            .find(|s| s.at_us >= press.at_us && s.moves >= press.moves)
            .map(|s| s.at_us)
    };
    // After the restart: when every board's state was on the page again.
    let restart_us = phases_us[2];
    let recovered_us = boards
        .iter()
        .map(|board| {
            by_board
                .get(board.as_str())
                .and_then(|states| states.iter().find(|s| s.at_us >= restart_us))
                .map_or(i64::MAX, |s| s.at_us)
        })
        .max()
        .unwrap_or(i64::MAX);
    let page_recovered_after_restart_s = if recovered_us == i64::MAX {
        f64::NAN
    } else {
        (recovered_us - restart_us) as f64 / 1e6
    };
    let mut up = Vec::new();
    let mut down = Vec::new();
    let (mut presses_up, mut presses_up_missing) = (0, 0);
    let (mut presses_down, mut presses_down_missing) = (0, 0);
    for press in &presses {
        let in_down = press.at_us >= phases_us[1] && press.at_us < phases_us[2];
        let in_up = press.at_us < phases_us[1] - GUARD_US || press.at_us >= recovered_us;
        let latency = reached(press).map(|at| (at - press.at_us) as f64 / 1e3);
        if in_down {
            presses_down += 1;
            match latency {
                Some(ms) => down.push(ms),
                None => presses_down_missing += 1,
            }
        } else if in_up {
            presses_up += 1;
            match latency {
                Some(ms) => up.push(ms),
                None => presses_up_missing += 1,
            }
        }
    }

    // Resources over the first phase: broker, hub, then the daemons.
    let usage_of = |i: usize| {
        samples
            .get(i)
            .copied()
            .flatten()
            .map(|(first, last)| procfs::usage(&first, &last, &[first, last]))
            .unwrap_or_default()
    };
    let broker_usage = usage_of(0);
    let hub_usage = usage_of(1);
    let daemon_usages: Vec<Usage> = (2..samples.len()).map(usage_of).collect();
    let daemons_cpu_percent = daemon_usages.iter().map(|u| u.cpu_percent).sum();
    let daemons_rss_mb = daemon_usages.iter().map(|u| u.rss_mb_end).sum();

    // Display timing by phase, from every board's history.
    progress("reading every board's history for the display timing");
    let histories = controller.command_all(
        &boards,
        &json!({"command": "history"}),
        Duration::from_secs(120),
    )?;
    let views = controller.command_all(
        &boards,
        &json!({"command": "state"}),
        Duration::from_secs(120),
    )?;
    for process in &mut daemons {
        process.terminate();
    }
    drop(hub);
    broker.kill();
    sim.shutdown();
    let records = read_jsonl(&sim_log);
    let frames = analysis::shown_frames(&records);
    let mut frames_by_unit: HashMap<&str, Vec<analysis::Shown>> = HashMap::new();
    for frame in &frames {
        frames_by_unit
            .entry(frame.unit.as_str())
            .or_default()
            .push(frame.clone());
    }
    let mut lateness_up = Vec::new();
    let mut lateness_down = Vec::new();
    for board in &boards {
        let (Some(history), Some(view)) = (histories.get(board), views.get(board)) else {
            continue;
        };
        let Some(events) = history["result"]["events"].as_array() else {
            continue;
        };
        let Some(epoch) = view["result"]["game_epoch_us"].as_i64() else {
            continue;
        };
        let runs = analysis::running_intervals(events, epoch, CONTROL_SECONDS * SECOND);
        let Some(frames) = frames_by_unit.get(format!("{board}-display").as_str()) else {
            continue;
        };
        let within = |from: i64, until: i64| -> Vec<analysis::Shown> {
            frames
                .iter()
                .filter(|f| f.at_us >= from && f.at_us < until)
                .cloned()
                .collect()
        };
        lateness_up.extend(analysis::display_lateness(
            &within(phases_us[0], phases_us[1]),
            &runs,
        ));
        lateness_up.extend(analysis::display_lateness(
            &within(phases_us[2], phases_us[3]),
            &runs,
        ));
        lateness_down.extend(analysis::display_lateness(
            &within(phases_us[1], phases_us[2]),
            &runs,
        ));
    }
    drop(buses);
    Ok(HallReport {
        daemons: options.daemons,
        boards: boards.len(),
        presses_per_second: options.presses_per_second,
        phase_seconds: options.phase_seconds,
        load_average_start,
        load_average_end,
        all_boards_on_page_s,
        press_to_page_ms: Summary::of(&up),
        presses_up,
        presses_up_missing,
        down_press_to_page_ms: Summary::of(&down),
        presses_down,
        presses_down_missing,
        page_recovered_after_restart_s,
        broker: broker_usage,
        hub: hub_usage,
        daemons_cpu_percent,
        daemons_rss_mb,
        display_lateness_up_ms: Summary::of(&lateness_up),
        display_lateness_down_ms: Summary::of(&lateness_down),
        page_messages: page.len(),
    })
}

/// `chessclock-bench hall`: its arguments.
#[derive(Clone, Debug, clap::Args)]
pub struct HallArgs {
    /// Daemons (hosts) on the broker.
    #[arg(long, default_value_t = 16)]
    pub daemons: usize,
    /// Boards of each daemon.
    #[arg(long, default_value_t = 16)]
    pub boards_per_daemon: usize,
    /// Presses per second over all boards.
    #[arg(long, default_value_t = 10.0)]
    pub presses_per_second: f64,
    /// Seconds of each phase: broker up, down, up again.
    #[arg(long, default_value_t = 30.0)]
    pub phase_seconds: f64,
    /// The hub binary (default: chessclock-hall beside the daemon).
    #[arg(long)]
    pub hub: Option<PathBuf>,
    /// Keep the temporary folder (logs, the simulator's log).
    #[arg(long)]
    pub keep: bool,
    /// Write the JSON report here (default: stdout).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs `chessclock-bench hall`: the report as JSON, a summary on stderr.
pub fn main(
    binaries: &Binaries,
    args: HallArgs,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<()> {
    let options = HallOptions {
        daemons: args.daemons,
        boards_per_daemon: args.boards_per_daemon,
        presses_per_second: args.presses_per_second,
        phase_seconds: args.phase_seconds,
        hub: args.hub,
        keep: args.keep,
        ..HallOptions::default()
    };
    let report = run(binaries, &options, progress)?;
    progress(&format!(
        "press to page p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} presses); display lateness \
         p50/p99 broker up {:.1}/{:.1} ms, down {:.1}/{:.1} ms; load {:?} -> {:?}",
        report.press_to_page_ms.p50,
        report.press_to_page_ms.p99,
        report.press_to_page_ms.max,
        report.press_to_page_ms.count,
        report.display_lateness_up_ms.p50,
        report.display_lateness_up_ms.p99,
        report.display_lateness_down_ms.p50,
        report.display_lateness_down_ms.p99,
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
