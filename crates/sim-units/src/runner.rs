//! The shell around the pure units: one tokio task per unit on the
//! simulator's own thread (a current-thread runtime), moving bytes between
//! the unit's PTY master and its [`UnitModel`], applying line faults,
//! publishing [`UnitSnapshot`]s through a `watch` channel, logging; and the
//! script task. Each unit task is the only owner of its unit's state; the
//! outside talks to it through a command channel.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use chessclock_protocol::{encode, Accumulator, Button, Feed, Frame, Message, MAX_WIRE_FRAME};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::json;
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, watch};

use super::faults::{Direction, Faults, Window};
use super::log::{button_name, frame_error_name, message_json, LogSink};
use super::pty::{point_link, remove_link, Pty};
use super::unit::{ActivityLog, LinkState, PressRefused, UnitModel, UnitSnapshot};
use chessclock_host::clock::monotonic_now_us;

/// Unwritten bytes kept for a port nobody reads.
const MAX_BACKLOG: usize = 4096;

/// What the outside asks of a unit.
#[derive(Clone, Debug, PartialEq)]
pub enum UnitCommand {
    /// A button went down at the true host instant `at_us`.
    Press {
        button: Button,
        at_us: i64,
    },
    /// Pull the cable; plug it back by itself after `replug_after_us`.
    Unplug {
        replug_after_us: Option<i64>,
    },
    Replug,
    /// Unplug when plugged, else replug.
    TogglePlug,
    Corrupt {
        ber: f64,
        direction: Direction,
        duration_us: i64,
    },
    Delay {
        delay_us: i64,
        duration_us: i64,
    },
    Duplicate {
        copies: u32,
        duration_us: i64,
    },
    /// Cable out and power off; back on (new boot) after `off_us`.
    PowerCycle {
        off_us: i64,
    },
    LowPower(bool),
}

/// The unit's PTY while plugged; dropping it is the unplug (master closed,
/// symlink removed).
struct Plug {
    /// The master, twice (a dup): tokio's pipe halves register a
    /// non-blocking fd with the reactor without `unsafe`.
    rx: pipe::Receiver,
    tx: pipe::Sender,
    path: PathBuf,
    link: Option<PathBuf>,
    _slave: OwnedFd,
}

impl Drop for Plug {
    fn drop(&mut self) {
        if let Some(link) = &self.link {
            remove_link(link);
        }
    }
}

impl Plug {
    /// Takes over an open PTY (inside the runtime) and points the link.
    fn new(pty: Pty, link: Option<PathBuf>) -> io::Result<Plug> {
        let (master, slave, path) = pty.into_parts();
        let tx = pipe::Sender::from_owned_fd_unchecked(master.try_clone()?)?;
        let rx = pipe::Receiver::from_owned_fd_unchecked(master)?;
        if let Some(link) = &link {
            point_link(link, &path)?;
        }
        Ok(Plug {
            rx,
            tx,
            path,
            link,
            _slave: slave,
        })
    }
}

enum Wake {
    Command(Option<UnitCommand>),
    Read(io::Result<Vec<u8>>),
    Wrote(io::Result<usize>),
    Timer,
}

async fn read_some(rx: Option<&pipe::Receiver>) -> io::Result<Vec<u8>> {
    let Some(rx) = rx else {
        return std::future::pending().await;
    };
    let mut buf = [0u8; 512];
    loop {
        rx.readable().await?;
        match rx.try_read(&mut buf) {
            Ok(n) => return Ok(buf[..n].to_vec()),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Err(error),
        }
    }
}

async fn write_some(tx: Option<&pipe::Sender>, bytes: &[u8]) -> io::Result<usize> {
    let Some(tx) = tx else {
        return std::future::pending().await;
    };
    loop {
        tx.writable().await?;
        match tx.try_write(bytes) {
            Ok(n) => return Ok(n),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Err(error),
        }
    }
}

/// Everything one unit task owns.
pub(crate) struct UnitTask {
    pub model: UnitModel,
    pub plug_pty: Option<Pty>,
    pub commands: mpsc::UnboundedReceiver<UnitCommand>,
    pub snapshots: watch::Sender<UnitSnapshot>,
    pub log: LogSink,
    pub seed: u64,
}

/// The unit task's state between wake-ups.
struct Runner {
    model: UnitModel,
    name: String,
    link_path: Option<PathBuf>,
    log: LogSink,
    rng: StdRng,
    faults: Faults,
    accumulator: Accumulator,
    plug: Option<Plug>,
    replug_at: Option<i64>,
    /// Encoded frames waiting for their release instant (delay fault).
    held: VecDeque<(i64, Vec<u8>)>,
    /// Bytes released and not yet written.
    writing: Vec<u8>,
    last_link_state: LinkState,
    /// True press instants of unacknowledged events (for the view's
    /// press-to-ACK figure).
    press_instants: HashMap<u16, i64>,
    /// What the display showed last, to report changes of icons and text
    /// (not every time update) in the activity feed.
    last_display_key: Option<(String, u16, u16)>,
    activity: ActivityLog,
    /// Powered off: the next plug-in is a power-up with a new boot id.
    powered_off: bool,
}

impl UnitTask {
    pub async fn run(self) {
        let UnitTask {
            model,
            plug_pty,
            mut commands,
            snapshots,
            log,
            seed,
        } = self;
        let mut runner = Runner {
            name: model.spec.name.clone(),
            link_path: model.spec.link.clone(),
            last_link_state: model.link_state(),
            model,
            log,
            rng: StdRng::seed_from_u64(seed),
            faults: Faults::default(),
            accumulator: Accumulator::new(),
            plug: None,
            replug_at: None,
            held: VecDeque::new(),
            writing: Vec::new(),
            press_instants: HashMap::new(),
            last_display_key: None,
            activity: ActivityLog::default(),
            powered_off: false,
        };
        if let Some(pty) = plug_pty {
            let boot_delay = runner.model.spec.boot_delay_us;
            if boot_delay > 0 {
                tokio::time::sleep(Duration::from_micros(boot_delay)).await;
            }
            runner.plug_in(pty, monotonic_now_us());
        }
        loop {
            let now = monotonic_now_us();
            runner.on_time(now);
            runner.publish(&snapshots);
            let wait = runner.next_wake().map_or(Duration::from_secs(3600), |t| {
                Duration::from_micros((t - now).max(0) as u64)
            });
            let wake = {
                let rx = runner.plug.as_ref().map(|p| &p.rx);
                let tx = runner
                    .plug
                    .as_ref()
                    .map(|p| &p.tx)
                    .filter(|_| !runner.writing.is_empty());
                tokio::select! {
                    command = commands.recv() => Wake::Command(command),
                    read = read_some(rx) => Wake::Read(read),
                    wrote = write_some(tx, &runner.writing) => Wake::Wrote(wrote),
                    _ = tokio::time::sleep(wait) => Wake::Timer,
                }
            };
            let now = monotonic_now_us();
            match wake {
                Wake::Timer => {}
                Wake::Command(None) => break,
                Wake::Command(Some(command)) => runner.on_command(command, now),
                Wake::Wrote(Ok(n)) => {
                    runner.writing.drain(..n.min(runner.writing.len()));
                }
                Wake::Wrote(Err(error)) | Wake::Read(Err(error)) => runner.on_io_error(&error, now),
                Wake::Read(Ok(bytes)) => runner.on_bytes(bytes, now),
            }
        }
        // Dropping the runner's plug removes the link (also on runtime
        // shutdown, when this future is dropped).
    }
}

impl Runner {
    fn record(&self, at_us: i64, kind: &str, fields: serde_json::Value) {
        self.log.record(at_us, &self.name, kind, fields);
    }

    fn plug_in(&mut self, pty: Pty, now: i64) {
        if self.powered_off {
            self.powered_off = false;
            let boot_id = self.rng.random::<u32>();
            self.model.power_cycle(now, boot_id);
            self.press_instants.clear();
            self.last_display_key = None;
            self.record(now, "power-on", json!({ "boot_id": boot_id }));
            self.activity
                .push(now, format!("powered on (boot {boot_id:08x})"));
        }
        match Plug::new(pty, self.link_path.clone()) {
            Ok(plug) => {
                self.record(now, "plug", json!({ "pty": plug.path, "link": plug.link }));
                self.activity
                    .push(now, format!("plugged in on {}", plug.path.display()));
                self.plug = Some(plug);
                self.accumulator = Accumulator::new();
                self.model.host_gone(now);
            }
            Err(error) => {
                self.record(now, "plug-error", json!({ "error": error.to_string() }));
                self.activity.push(now, format!("cannot plug in: {error}"));
                self.replug_at = Some(now + 1_000_000);
            }
        }
    }

    fn unplug(&mut self, now: i64) {
        if self.plug.take().is_some() {
            self.record(now, "unplug", json!({ "link": self.link_path }));
            self.activity.push(now, "unplugged");
            self.model.host_gone(now);
        }
        // Bytes in flight die with the cable.
        self.held.clear();
        self.writing.clear();
    }

    /// Replugs when due, sends what the link has due, releases held frames.
    fn on_time(&mut self, now: i64) {
        if self.replug_at.is_some_and(|at| now >= at) {
            self.replug_at = None;
            if self.plug.is_none() {
                match Pty::open() {
                    Ok(pty) => self.plug_in(pty, now),
                    Err(error) => {
                        self.record(now, "plug-error", json!({ "error": error.to_string() }));
                        self.replug_at = Some(now + 1_000_000);
                    }
                }
            }
        }
        if self.plug.is_none() {
            return;
        }
        let mut frames = Vec::new();
        self.model.poll_transmit(now, &mut frames);
        let mut wire = [0u8; MAX_WIRE_FRAME];
        let mut out = Vec::new();
        let mut sent = Vec::with_capacity(frames.len());
        for frame in &frames {
            let Ok(len) = encode(frame, &mut wire) else {
                self.record(
                    now,
                    "encode-error",
                    json!({ "msg": message_json(&frame.message) }),
                );
                continue;
            };
            let before = out.len();
            let applied = self
                .faults
                .outgoing(&wire[..len], now, &mut self.rng, &mut out);
            self.model.count_tx((out.len() - before) as u64);
            sent.push((frame, len, applied));
        }
        self.held.extend(out);
        while self.held.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, bytes)) = self.held.pop_front() {
                if self.writing.len() + bytes.len() > MAX_BACKLOG {
                    // Nobody reads the port (no host yet): like a device's
                    // full USB FIFO, drop the backlog instead of growing it.
                    // The host, when it comes, resynchronises at the next
                    // delimiter and the link repeats what matters.
                    self.record(
                        now,
                        "tx-overflow",
                        json!({ "dropped_bytes": self.writing.len() }),
                    );
                    self.writing.clear();
                }
                self.writing.extend_from_slice(&bytes);
            }
        }
        // Written at once, before any logging: a `tx` record's instant is
        // when the frame's bytes went into the PTY (what a latency
        // measurement starts from), not when the frame was built.
        let written_at = self.write_now();
        if self.log.log_sent {
            for (frame, len, applied) in sent {
                let at = match written_at {
                    Some(at) if applied.delayed_us == 0 => at,
                    _ => now,
                };
                self.record(
                    at,
                    "tx",
                    json!({
                        "seq": frame.seq,
                        "msg": message_json(&frame.message),
                        "bytes": len,
                        "flipped_bits": applied.flipped_bits,
                        "delayed_us": applied.delayed_us,
                        "copies": applied.copies,
                    }),
                );
            }
        }
        let state = self.model.link_state();
        if state != self.last_link_state {
            self.record(now, "link", json!({ "state": state.name() }));
            self.activity.push(now, format!("link {}", state.name()));
            self.last_link_state = state;
        }
    }

    /// Writes what is queued without waiting; `Some(instant)` of the write
    /// when all of it went out (the rest, if any, waits for the port to be
    /// writable in the main loop).
    fn write_now(&mut self) -> Option<i64> {
        let plug = self.plug.as_ref()?;
        if self.writing.is_empty() {
            return None;
        }
        let at = monotonic_now_us();
        match plug.tx.try_write(&self.writing) {
            Ok(n) => {
                let all = n >= self.writing.len();
                self.writing.drain(..n.min(self.writing.len()));
                all.then_some(at)
            }
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => None,
            Err(error) => {
                self.on_io_error(&error, at);
                None
            }
        }
    }

    fn publish(&self, snapshots: &watch::Sender<UnitSnapshot>) {
        let mut snapshot = self.model.snapshot(
            self.plug.is_some(),
            self.plug.as_ref().map(|p| p.path.clone()),
            self.faults.any_active(),
        );
        snapshot.recent = self.activity.entries();
        snapshots.send_if_modified(|current| {
            if *current != snapshot {
                *current = snapshot;
                true
            } else {
                false
            }
        });
    }

    fn next_wake(&self) -> Option<i64> {
        let candidates = [
            self.replug_at,
            self.plug
                .as_ref()
                .map(|_| self.model.next_deadline_host_us()),
            self.plug.as_ref().and(self.held.front().map(|(at, _)| *at)),
            self.faults.next_expiry(),
        ];
        candidates.into_iter().flatten().min()
    }

    fn on_command(&mut self, command: UnitCommand, now: i64) {
        match command {
            UnitCommand::Press { button, .. } if self.powered_off => {
                self.activity.push(
                    now,
                    format!("press {} lost: powered off", button_name(button)),
                );
            }
            UnitCommand::PowerCycle { off_us } => {
                self.unplug(now);
                self.powered_off = true;
                self.record(now, "power-off", json!({ "off_us": off_us }));
                self.activity.push(now, "powered off");
                self.replug_at = Some(now + off_us.max(0));
            }
            UnitCommand::LowPower(on) => {
                self.model.set_low_power(on);
                self.record(now, "low-power", json!({ "on": on }));
                self.activity
                    .push(now, if on { "battery low" } else { "battery fine" });
            }
            UnitCommand::Press { button, at_us } => match self.model.press(button, at_us) {
                Ok((event, device_us)) => {
                    self.record(
                        at_us,
                        "press",
                        json!({ "button": button_name(button), "event": event, "device_us": device_us }),
                    );
                    self.press_instants.insert(event, at_us);
                    self.activity.push(
                        now,
                        format!("press {} → event {event}", button_name(button)),
                    );
                }
                Err(refused) => {
                    let reason = match refused {
                        PressRefused::NoSuchButton => "no such button",
                        PressRefused::QueueFull => "event queue full",
                    };
                    self.record(
                        at_us,
                        "press-refused",
                        json!({ "button": button_name(button), "reason": reason }),
                    );
                    self.activity.push(
                        now,
                        format!("press {} refused: {reason}", button_name(button)),
                    );
                }
            },
            UnitCommand::Unplug { replug_after_us } => {
                self.unplug(now);
                self.replug_at = replug_after_us.map(|d| now + d.max(0));
            }
            UnitCommand::Replug => self.replug_at = Some(now),
            UnitCommand::TogglePlug => {
                if self.plug.is_some() {
                    self.unplug(now);
                    self.replug_at = None;
                } else {
                    self.replug_at = Some(now);
                }
            }
            UnitCommand::Corrupt {
                ber,
                direction,
                duration_us,
            } => {
                let until_us = now + duration_us;
                self.faults.corrupt = Some(Window {
                    until_us,
                    what: (ber, direction),
                });
                let fields = json!({
                    "fault": "corrupt", "ber": ber, "direction": direction, "until_us": until_us,
                });
                self.record(now, "fault", fields);
                self.activity.push(
                    now,
                    format!("fault: bit errors {ber} for {} ms", duration_us / 1000),
                );
            }
            UnitCommand::Delay {
                delay_us,
                duration_us,
            } => {
                let until_us = now + duration_us;
                self.faults.delay = Some(Window {
                    until_us,
                    what: delay_us,
                });
                self.record(
                    now,
                    "fault",
                    json!({ "fault": "delay", "delay_us": delay_us, "until_us": until_us }),
                );
                self.activity.push(
                    now,
                    format!(
                        "fault: delay {} ms for {} ms",
                        delay_us / 1000,
                        duration_us / 1000
                    ),
                );
            }
            UnitCommand::Duplicate {
                copies,
                duration_us,
            } => {
                let until_us = now + duration_us;
                self.faults.duplicate = Some(Window {
                    until_us,
                    what: copies,
                });
                self.record(
                    now,
                    "fault",
                    json!({ "fault": "duplicate", "copies": copies, "until_us": until_us }),
                );
                self.activity.push(
                    now,
                    format!("fault: {copies} extra copies for {} ms", duration_us / 1000),
                );
            }
        }
    }

    /// The PTY broke under us: behave like an unplug, and come back.
    fn on_io_error(&mut self, error: &io::Error, now: i64) {
        self.record(now, "io-error", json!({ "error": error.to_string() }));
        self.unplug(now);
        self.replug_at = Some(now + 1_000_000);
    }

    fn on_bytes(&mut self, mut bytes: Vec<u8>, now: i64) {
        let flipped = self.faults.incoming(&mut bytes, now, &mut self.rng);
        let mut rest: &[u8] = &bytes;
        loop {
            match self.accumulator.feed(rest) {
                Feed::NeedMore => break,
                Feed::Frame(frame, remaining) => {
                    rest = remaining;
                    self.on_frame(&frame, now);
                }
                Feed::Error(error, remaining) => {
                    rest = remaining;
                    self.model.frame_error(error);
                    self.record(
                        now,
                        "rx-error",
                        json!({ "error": frame_error_name(error), "flipped_bits": flipped }),
                    );
                    self.activity.push(
                        now,
                        format!("bad frame from host ({})", frame_error_name(error)),
                    );
                }
            }
        }
    }

    fn on_frame(&mut self, frame: &Frame, now: i64) {
        self.record(
            now,
            "rx",
            json!({ "seq": frame.seq, "msg": message_json(&frame.message) }),
        );
        let received = self.model.on_frame(frame, now);
        for (event, sends) in received.acked {
            self.record(now, "ack", json!({ "event": event, "sends": sends }));
            let latency = self
                .press_instants
                .remove(&event)
                .map(|at| format!(", {:.1} ms after the press", (now - at) as f64 / 1000.0))
                .unwrap_or_default();
            self.activity
                .push(now, format!("ACK event {event} (sent {sends}×{latency})"));
        }
        match frame.message {
            Message::Welcome {
                heartbeat_interval_ms,
                link_timeout_ms,
                ..
            } => self.activity.push(
                now,
                format!(
                    "WELCOME: heartbeat {heartbeat_interval_ms} ms, timeout {link_timeout_ms} ms"
                ),
            ),
            Message::Display(state) if self.model.spec.kind.has_display() => {
                let key = (
                    state.text.as_str().to_owned(),
                    state.left.icons.0,
                    state.right.icons.0,
                );
                if self.last_display_key.as_ref() != Some(&key) {
                    let text = state.text.as_str();
                    self.activity.push(
                        now,
                        format!(
                            "display {} | {}{}{}",
                            state.left.time.as_str(),
                            state.right.time.as_str(),
                            if text.is_empty() { "" } else { " · " },
                            text
                        ),
                    );
                    self.last_display_key = Some(key);
                }
            }
            Message::Leds(leds) if self.model.spec.kind.has_buttons() => {
                let on = |b: bool| if b { '●' } else { '○' };
                self.activity.push(
                    now,
                    format!(
                        "LEDs {} left {} arbiter {} right",
                        on(leds.left),
                        on(leds.arbiter),
                        on(leds.right)
                    ),
                );
            }
            Message::Beep { duration_ms, count } => {
                self.activity
                    .push(now, format!("BEEP {count}× {duration_ms} ms"));
            }
            Message::Nak { code, seq } => self
                .activity
                .push(now, format!("NAK {code:?} for frame {seq}")),
            _ => {}
        }
    }
}
