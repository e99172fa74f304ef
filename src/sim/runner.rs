//! The shell around the pure units: one tokio task per unit on the
//! simulator's own thread (a current-thread runtime), moving bytes between
//! the unit's PTY master and its [`UnitModel`], applying line faults,
//! publishing [`UnitSnapshot`]s through a `watch` channel, logging; and the
//! script task. Each unit task is the only owner of its unit's state; the
//! outside talks to it through a command channel.

use std::collections::VecDeque;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use chessclock_protocol::{encode, Accumulator, Button, Feed, Frame, MAX_WIRE_FRAME};
use rand::{rngs::StdRng, SeedableRng};
use serde_json::json;
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, watch};

use super::faults::{Direction, Faults, Window};
use super::log::{button_name, frame_error_name, message_json, LogSink};
use super::pty::{point_link, remove_link, Pty};
use super::unit::{UnitModel, UnitSnapshot};
use crate::clock::monotonic_now_us;

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

impl UnitTask {
    pub async fn run(self) {
        let UnitTask {
            mut model,
            plug_pty,
            mut commands,
            snapshots,
            log,
            seed,
        } = self;
        let name = model.spec.name.clone();
        let link_path = model.spec.link.clone();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut faults = Faults::default();
        let mut accumulator = Accumulator::new();
        let mut plug: Option<Plug> = None;
        let mut replug_at: Option<i64> = None;
        // Frames waiting for their release instant (delay fault), then the
        // bytes being written.
        let mut held: VecDeque<(i64, Vec<u8>)> = VecDeque::new();
        let mut writing: Vec<u8> = Vec::new();
        let mut frames: Vec<Frame> = Vec::new();
        let mut last_link_state = model.link_state();
        let mut wire = [0u8; MAX_WIRE_FRAME];

        let plug_in = |pty: Pty, now: i64, log: &LogSink| -> Option<Plug> {
            match Plug::new(pty, link_path.clone()) {
                Ok(p) => {
                    log.record(now, &name, "plug", json!({ "pty": p.path, "link": p.link }));
                    Some(p)
                }
                Err(error) => {
                    log.record(
                        now,
                        &name,
                        "plug-error",
                        json!({ "error": error.to_string() }),
                    );
                    None
                }
            }
        };
        if let Some(pty) = plug_pty {
            plug = plug_in(pty, monotonic_now_us(), &log);
        }

        loop {
            let now = monotonic_now_us();
            if replug_at.is_some_and(|at| now >= at) {
                replug_at = None;
                if plug.is_none() {
                    match Pty::open() {
                        Ok(pty) => {
                            plug = plug_in(pty, now, &log);
                            model.host_gone(now);
                            accumulator = Accumulator::new();
                        }
                        Err(error) => {
                            log.record(
                                now,
                                &name,
                                "plug-error",
                                json!({ "error": error.to_string() }),
                            );
                            replug_at = Some(now + 1_000_000);
                        }
                    }
                }
            }
            if plug.is_some() {
                frames.clear();
                model.poll_transmit(now, &mut frames);
                let mut out = Vec::new();
                for frame in &frames {
                    let Ok(len) = encode(frame, &mut wire) else {
                        log.record(
                            now,
                            &name,
                            "encode-error",
                            json!({ "msg": message_json(&frame.message) }),
                        );
                        continue;
                    };
                    let before = out.len();
                    let applied = faults.outgoing(&wire[..len], now, &mut rng, &mut out);
                    model.count_tx((out.len() - before) as u64);
                    if log.log_sent {
                        log.record(
                            now,
                            &name,
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
                held.extend(out);
                while held.front().is_some_and(|(at, _)| *at <= now) {
                    if let Some((_, bytes)) = held.pop_front() {
                        writing.extend_from_slice(&bytes);
                    }
                }
            }
            let state = model.link_state();
            if state != last_link_state && plug.is_some() {
                log.record(now, &name, "link", json!({ "state": state.name() }));
                last_link_state = state;
            }
            let snapshot = model.snapshot(
                plug.is_some(),
                plug.as_ref().map(|p| p.path.clone()),
                faults.any_active(),
            );
            snapshots.send_if_modified(|current| {
                if *current != snapshot {
                    *current = snapshot;
                    true
                } else {
                    false
                }
            });

            let mut wake_at: Option<i64> = replug_at;
            let mut consider = |t: Option<i64>| {
                if let Some(t) = t {
                    wake_at = Some(wake_at.map_or(t, |w| w.min(t)));
                }
            };
            if plug.is_some() {
                consider(Some(model.next_deadline_host_us()));
                consider(held.front().map(|(at, _)| *at));
            }
            consider(faults.next_expiry());
            let wait = wake_at.map_or(Duration::from_secs(3600), |t| {
                Duration::from_micros((t - now).max(0) as u64)
            });

            let wake = {
                let rx = plug.as_ref().map(|p| &p.rx);
                let tx = plug.as_ref().map(|p| &p.tx).filter(|_| !writing.is_empty());
                tokio::select! {
                    command = commands.recv() => Wake::Command(command),
                    read = read_some(rx) => Wake::Read(read),
                    wrote = write_some(tx, &writing) => Wake::Wrote(wrote),
                    _ = tokio::time::sleep(wait) => Wake::Timer,
                }
            };
            let now = monotonic_now_us();
            match wake {
                Wake::Timer => {}
                Wake::Command(None) => break,
                Wake::Command(Some(command)) => match command {
                    UnitCommand::Press { button, at_us } => {
                        match model.press(button, at_us) {
                            Ok((event, device_us)) => log.record(
                                at_us,
                                &name,
                                "press",
                                json!({ "button": button_name(button), "event": event, "device_us": device_us }),
                            ),
                            Err(refused) => log.record(
                                at_us,
                                &name,
                                "press-refused",
                                json!({ "button": button_name(button), "reason": format!("{refused:?}") }),
                            ),
                        }
                    }
                    UnitCommand::Unplug { replug_after_us } => {
                        if plug.take().is_some() {
                            log.record(now, &name, "unplug", json!({ "link": link_path }));
                            model.host_gone(now);
                        }
                        held.clear();
                        writing.clear();
                        replug_at = replug_after_us.map(|d| now + d.max(0));
                    }
                    UnitCommand::Replug => replug_at = Some(now),
                    UnitCommand::TogglePlug => {
                        if plug.take().is_some() {
                            log.record(now, &name, "unplug", json!({ "link": link_path }));
                            model.host_gone(now);
                            held.clear();
                            writing.clear();
                            replug_at = None;
                        } else {
                            replug_at = Some(now);
                        }
                    }
                    UnitCommand::Corrupt {
                        ber,
                        direction,
                        duration_us,
                    } => {
                        faults.corrupt = Some(Window {
                            until_us: now + duration_us,
                            what: (ber, direction),
                        });
                        log.record(now, &name, "fault", json!({ "fault": "corrupt", "ber": ber, "direction": direction, "until_us": now + duration_us }));
                    }
                    UnitCommand::Delay {
                        delay_us,
                        duration_us,
                    } => {
                        faults.delay = Some(Window {
                            until_us: now + duration_us,
                            what: delay_us,
                        });
                        log.record(now, &name, "fault", json!({ "fault": "delay", "delay_us": delay_us, "until_us": now + duration_us }));
                    }
                    UnitCommand::Duplicate {
                        copies,
                        duration_us,
                    } => {
                        faults.duplicate = Some(Window {
                            until_us: now + duration_us,
                            what: copies,
                        });
                        log.record(now, &name, "fault", json!({ "fault": "duplicate", "copies": copies, "until_us": now + duration_us }));
                    }
                },
                Wake::Wrote(Ok(n)) => {
                    writing.drain(..n.min(writing.len()));
                }
                Wake::Wrote(Err(error)) | Wake::Read(Err(error)) => {
                    // The PTY broke under us: behave like an unplug.
                    log.record(
                        now,
                        &name,
                        "io-error",
                        json!({ "error": error.to_string() }),
                    );
                    plug = None;
                    held.clear();
                    writing.clear();
                    replug_at = Some(now + 1_000_000);
                }
                Wake::Read(Ok(mut bytes)) => {
                    let flipped = faults.incoming(&mut bytes, now, &mut rng);
                    let mut rest: &[u8] = &bytes;
                    loop {
                        match accumulator.feed(rest) {
                            Feed::NeedMore => break,
                            Feed::Frame(frame, remaining) => {
                                rest = remaining;
                                log.record(now, &name, "rx", json!({ "seq": frame.seq, "msg": message_json(&frame.message) }));
                                let received = model.on_frame(&frame, now);
                                for (event, sends) in received.acked {
                                    log.record(
                                        now,
                                        &name,
                                        "ack",
                                        json!({ "event": event, "sends": sends }),
                                    );
                                }
                            }
                            Feed::Error(error, remaining) => {
                                rest = remaining;
                                model.frame_error(error);
                                log.record(now, &name, "rx-error", json!({ "error": frame_error_name(error), "flipped_bits": flipped }));
                            }
                        }
                    }
                }
            }
        }
        // Dropping `plug` here (and on runtime shutdown) removes the link.
        drop(plug);
    }
}
