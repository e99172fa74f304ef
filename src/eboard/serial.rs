//! The thin shell around a DGT board on a serial port: a tokio task that
//! opens the port (9600 baud, 8N1, no flow control), drives the pure
//! [`DgtSession`] and [`MoveDetector`] with bytes and CLOCK_MONOTONIC
//! instants, and sends [`EboardEvent`]s on a channel. When the board goes
//! away (I/O error, end of file, silence) the port is closed and reopened
//! with back-off; the detector (the game) survives reconnects.
//!
//! The task ends when the event receiver is dropped or on
//! [`EboardCommand::Stop`].

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_serial::{DataBits, FlowControl, Parity, SerialPort, SerialPortBuilderExt, StopBits};

use super::detect::{BoardEvent, DetectorConfig, MoveDetector};
pub use super::link::{EboardCommand, EboardEvent};
use super::session::{DgtSession, SessionConfig, SessionOutput};
use chessclock_host::clock::monotonic_now_us;

/// DGT boards talk at 9600 baud.
pub const BAUD: u32 = 9600;

/// Timings of the shell (the cores have their own configs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShellConfig {
    pub session: SessionConfig,
    pub detector: DetectorConfig,
    /// First wait before reopening a port; doubles up to `backoff_max`.
    pub backoff_min: Duration,
    pub backoff_max: Duration,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            session: SessionConfig::default(),
            detector: DetectorConfig::default(),
            backoff_min: Duration::from_millis(250),
            backoff_max: Duration::from_secs(5),
        }
    }
}

/// The running board task.
#[derive(Debug)]
pub struct EboardHandle {
    pub task: JoinHandle<()>,
    pub commands: UnboundedSender<EboardCommand>,
}

/// Starts the board task for the port at `path` with the default timings.
pub fn spawn(path: PathBuf, events: UnboundedSender<EboardEvent>) -> EboardHandle {
    spawn_with(path, ShellConfig::default(), events)
}

/// Starts the board task with explicit timings.
pub fn spawn_with(
    path: PathBuf,
    config: ShellConfig,
    events: UnboundedSender<EboardEvent>,
) -> EboardHandle {
    let (commands, command_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(run(path, config, events, command_rx));
    EboardHandle { task, commands }
}

/// Why a link ended.
enum LinkEnd {
    Gone(String),
    Stop,
}

struct Shell {
    path: PathBuf,
    config: ShellConfig,
    events: UnboundedSender<EboardEvent>,
    commands: UnboundedReceiver<EboardCommand>,
    commands_open: bool,
    detector: MoveDetector,
    /// The keep-alive answers every 1.5 s: report the number once.
    serial_number: Option<String>,
}

async fn run(
    path: PathBuf,
    config: ShellConfig,
    events: UnboundedSender<EboardEvent>,
    commands: UnboundedReceiver<EboardCommand>,
) {
    let mut shell = Shell {
        path,
        config,
        events,
        commands,
        commands_open: true,
        detector: MoveDetector::new(config.detector),
        serial_number: None,
    };
    let mut backoff = config.backoff_min;
    let mut announced_down = false;
    loop {
        if shell.events.is_closed() {
            return;
        }
        let end = match open(&shell.path) {
            Ok(port) => {
                backoff = config.backoff_min;
                let end = shell.link(port).await;
                announced_down = false;
                end
            }
            Err(e) => LinkEnd::Gone(format!("cannot open {}: {e}", shell.path.display())),
        };
        let reason = match end {
            LinkEnd::Stop => return,
            LinkEnd::Gone(reason) => reason,
        };
        if !announced_down {
            announced_down = true;
            tracing::warn!(path = %shell.path.display(), %reason, "DGT board unavailable");
            shell.emit(EboardEvent::Disconnected {
                path: shell.path.clone(),
                reason,
                at: monotonic_now_us(),
            });
        }
        let wake = tokio::time::Instant::now() + backoff;
        backoff = (backoff * 2).min(config.backoff_max);
        // Keep serving commands while waiting to reconnect.
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(wake) => break,
                command = shell.commands.recv(), if shell.commands_open => {
                    if shell.command(command) {
                        return;
                    }
                }
            }
        }
    }
}

fn open(path: &std::path::Path) -> tokio_serial::Result<tokio_serial::SerialStream> {
    let port = tokio_serial::new(path.to_string_lossy(), BAUD)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .open_native_async()?;
    // Bytes left from before we opened are stale.
    port.clear(tokio_serial::ClearBuffer::Input)?;
    Ok(port)
}

impl Shell {
    fn emit(&self, event: EboardEvent) {
        let _ = self.events.send(event);
    }

    fn emit_board(&self, events: Vec<BoardEvent>) {
        for event in events {
            self.emit(EboardEvent::Board(event));
        }
    }

    /// Handles a command; true when the task must end.
    fn command(&mut self, command: Option<EboardCommand>) -> bool {
        match command {
            None => {
                self.commands_open = false;
                false
            }
            Some(EboardCommand::Stop) => true,
            Some(EboardCommand::ClockPressed { at, side }) => {
                let events = self.detector.clock_pressed(at, side);
                self.emit_board(events);
                false
            }
            Some(EboardCommand::NewGame) => {
                let events = self.detector.new_game(monotonic_now_us());
                self.emit_board(events);
                false
            }
            Some(EboardCommand::Finish) => {
                let events = self.detector.finish(monotonic_now_us());
                self.emit_board(events);
                false
            }
            Some(EboardCommand::Resume { moves, finished }) => {
                let moves: Vec<&str> = moves.iter().map(String::as_str).collect();
                match MoveDetector::resume(self.config.detector, None, &moves) {
                    Ok(mut detector) => {
                        let now = monotonic_now_us();
                        detector.adopt_placement(self.detector.last_placement(), now);
                        if finished {
                            // The start may already stand: the next game.
                            let events = detector.finish(now);
                            self.detector = detector;
                            self.emit_board(events);
                        } else {
                            self.detector = detector;
                        }
                    }
                    Err(e) => tracing::error!(%e, "cannot resume the board's game"),
                }
                false
            }
        }
    }

    async fn link(&mut self, mut port: tokio_serial::SerialStream) -> LinkEnd {
        let mut session = DgtSession::new(self.config.session);
        let mut buf = [0u8; 256];
        let outputs = session.start(monotonic_now_us());
        if let Err(reason) = self.handle(&mut port, outputs).await {
            return LinkEnd::Gone(reason);
        }
        loop {
            if self.events.is_closed() {
                return LinkEnd::Stop;
            }
            let now = monotonic_now_us();
            let deadline = [session.next_deadline(), self.detector.next_deadline()]
                .into_iter()
                .flatten()
                .min();
            let sleep = deadline.map_or(Duration::from_secs(1), |d| {
                Duration::from_micros(d.saturating_sub(now).max(0) as u64)
            });
            let outputs = tokio::select! {
                read = AsyncReadExt::read(&mut port, &mut buf) => match read {
                    Ok(0) => return LinkEnd::Gone("the port closed".into()),
                    Ok(n) => session.on_bytes(monotonic_now_us(), &buf[..n]),
                    Err(e) => return LinkEnd::Gone(format!("read: {e}")),
                },
                _ = tokio::time::sleep(sleep) => {
                    let now = monotonic_now_us();
                    let events = self.detector.tick(now);
                    self.emit_board(events);
                    session.poll(now)
                }
                command = self.commands.recv(), if self.commands_open => {
                    if self.command(command) {
                        return LinkEnd::Stop;
                    }
                    Vec::new()
                }
            };
            if let Err(reason) = self.handle(&mut port, outputs).await {
                return LinkEnd::Gone(reason);
            }
        }
    }

    async fn handle(
        &mut self,
        port: &mut tokio_serial::SerialStream,
        outputs: Vec<SessionOutput>,
    ) -> Result<(), String> {
        let now = monotonic_now_us();
        for output in outputs {
            match output {
                SessionOutput::Send(bytes) => {
                    // A board that stops reading must not stall the task.
                    match tokio::time::timeout(Duration::from_secs(1), port.write_all(&bytes)).await
                    {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return Err(format!("write: {e}")),
                        Err(_) => return Err("write: the board took no bytes for 1 s".into()),
                    }
                }
                SessionOutput::Connected => {
                    tracing::info!(path = %self.path.display(), "DGT board connected");
                    self.emit(EboardEvent::Connected {
                        path: self.path.clone(),
                        at: now,
                    });
                }
                SessionOutput::Lost { silent_for } => {
                    return Err(format!(
                        "no answer from the board for {} ms",
                        silent_for / 1000
                    ));
                }
                SessionOutput::Placement(placement) => {
                    let mut events = self.detector.tick(now);
                    events.extend(self.detector.placement(now, &placement));
                    self.emit_board(events);
                }
                SessionOutput::Orientation(o) => self.emit(EboardEvent::Orientation(o)),
                SessionOutput::Clock(reading) => self.emit(EboardEvent::Clock { reading, at: now }),
                SessionOutput::ClockPress { right_up } => {
                    // Not confirmed here: which lever is whose is the board
                    // core's to know, and a press confirms only the
                    // presser's own move (`EboardCommand::ClockPressed`).
                    self.emit(EboardEvent::ClockPress { right_up, at: now });
                }
                SessionOutput::ClockAck(_) => {}
                SessionOutput::Version { main, sub } => {
                    self.emit(EboardEvent::Version { main, sub })
                }
                SessionOutput::SerialNumber(serial) => {
                    if self.serial_number.as_ref() != Some(&serial) {
                        self.serial_number = Some(serial.clone());
                        self.emit(EboardEvent::SerialNumber(serial));
                    }
                }
                SessionOutput::Issue(issue) => {
                    tracing::debug!(path = %self.path.display(), ?issue, "DGT bytes dropped");
                }
            }
        }
        Ok(())
    }
}
