//! The I/O shell of one device: find its port, open it, move bytes between
//! the port and its [`Session`], reopen with back-off. All protocol decisions
//! are the session's; this task only reads, writes, reads the clock and
//! waits, and tells the session which serials other links have up
//! ([`LinkedSerials`]).
//!
//! At the open it takes what the port already holds and answers the newest
//! HELLO in it (SPEC.md 6.1 item 4), so a replugged unit links right after
//! its first HELLO. A refused device keeps its port open: the session
//! answers each of its HELLOs with a NAK and checks each afresh.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chessclock_protocol::{encode, Accumulator, Feed, Frame, FrameError, Message, MAX_WIRE_FRAME};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::port::Port;
use super::session::{role_names, Output, Refusal, Session, SessionConfig};
use super::{required_roles, DeviceCommand, DeviceEvent, DeviceKey, DeviceRole};
use crate::config::DeviceRef;
use crate::engine::Micros;
use crate::lateness::Lateness;
use chessclock_host::clock::monotonic_now_us;

/// What the manager tells a link task.
#[derive(Debug)]
pub(super) enum LinkInput {
    /// A command and when the change it carries was due (a board's
    /// deadline, a press's arrival): display frames are counted from there
    /// to their write ([`DisplayWrites`]).
    Command(DeviceCommand, Due),
    /// Device nodes that appeared (`true`) or went away, in order: one
    /// batch per inotify read, shared by every link (a notice per node per
    /// link made 512 links × 512 new nodes a quarter of a million messages
    /// at a 256-board start, 14 MB of queues at the peak).
    Hotplug(Arc<[(PathBuf, bool)]>),
}

/// Everything a link task needs to know.
#[derive(Debug)]
pub(super) struct LinkSpec {
    pub device: DeviceRef,
    pub keys: Vec<DeviceKey>,
    pub candidate_dirs: Vec<PathBuf>,
    pub candidate_prefixes: Vec<String>,
    pub session: SessionConfig,
    pub min_backoff: Micros,
    pub max_backoff: Micros,
    pub linked: LinkedSerials,
    pub display_writes: DisplayWrites,
}

/// When the change a command carries was due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// A board's deadline (a display second change, a flag).
    Deadline(Micros),
    /// The arrival of the press that caused it.
    Press(Micros),
    /// Anything else (a command, a commit, a reconnect): not counted.
    Unmeasured,
}

/// How long display changes took from the instant they were due to their
/// frame's write to the port returning, after deadlines and after presses:
/// the daemon's own share of a display's lateness (the wire and the
/// device's read are not in it). Shared by the links of one
/// [`super::DeviceManager`], which all run on the timing thread: the lock
/// is never contended.
#[derive(Clone, Debug, Default)]
pub struct DisplayWrites(Arc<Mutex<[Lateness; 2]>>);

impl DisplayWrites {
    fn record(&self, due: Due, written: Micros) {
        let mut counts = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match due {
            Due::Deadline(at) => counts[0].record(written.saturating_sub(at)),
            Due::Press(at) => counts[1].record(written.saturating_sub(at)),
            Due::Unmeasured => {}
        }
    }

    /// Copies of the counts so far: after deadlines, after presses.
    pub fn lateness(&self) -> [Lateness; 2] {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// The serials with a unit up on some link of this host, and which link
/// (SPEC.md 6.1: a second unit with a serial already linked gets NAK Busy).
/// Shared by the links of one [`super::DeviceManager`].
#[derive(Clone, Debug, Default)]
pub(super) struct LinkedSerials(Arc<Mutex<HashMap<String, String>>>);

impl LinkedSerials {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, String>) -> T) -> T {
        let mut map = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut map)
    }

    /// The link other than `me` that has `serial` up.
    fn holder_other_than(&self, serial: &str, me: &str) -> Option<String> {
        self.with(|map| map.get(serial).filter(|holder| *holder != me).cloned())
    }

    fn claim(&self, serial: &str, me: &str) {
        self.with(|map| map.insert(serial.to_owned(), me.to_owned()));
    }

    /// Forgets every serial `me` holds.
    fn release(&self, me: &str) {
        self.with(|map| map.retain(|_, holder| holder != me));
    }
}

/// Why [`Link::next_input`] stopped the session.
enum Wake {
    /// The port is gone (the reason).
    Gone(String),
    /// The manager was dropped.
    Shutdown,
}

/// How a port's session ended.
#[derive(Debug)]
enum LinkEnd {
    /// Gone or silent: reopen after back-off.
    Lost,
    /// Not the serial we look for: try the next candidate.
    WrongSerial,
    /// The manager was dropped.
    Shutdown,
}

struct Link {
    spec: LinkSpec,
    label: String,
    session: Session,
    inputs: UnboundedReceiver<LinkInput>,
    events: UnboundedSender<DeviceEvent>,
    last_open_error: Option<String>,
    /// When the display command being handled was due (see [`DisplayWrites`]).
    display_due: Option<Due>,
}

/// Runs one device link until the manager is dropped.
pub(super) async fn run(
    spec: LinkSpec,
    inputs: UnboundedReceiver<LinkInput>,
    events: UnboundedSender<DeviceEvent>,
) {
    let mut config = spec.session.clone();
    config.required_roles = required_roles(&spec.keys);
    if let DeviceRef::Serial(serial) = &spec.device {
        config.wanted_serial = Some(serial.clone());
        // Probing waits this long on each candidate: a device says HELLO
        // every HELLO_INTERVAL_MS until welcomed.
        config.hello_timeout = config
            .hello_timeout
            .min(3 * chessclock_protocol::HELLO_INTERVAL_MS as Micros * crate::engine::MS);
    }
    let label = spec
        .keys
        .iter()
        .map(|k| k.role.to_string())
        .collect::<Vec<_>>()
        .join("+");
    let session = Session::new(config);
    let mut link = Link {
        label,
        session,
        spec,
        inputs,
        events,
        last_open_error: None,
        display_due: None,
    };
    link.run().await
}

impl Link {
    fn board(&self) -> &str {
        self.spec
            .keys
            .first()
            .map(|k| k.board.as_str())
            .unwrap_or("")
    }

    fn device_name(&self) -> String {
        String::from(self.spec.device.clone())
    }

    async fn run(&mut self) {
        // Never a tight loop, whatever the options say.
        self.spec.min_backoff = self.spec.min_backoff.max(crate::engine::MS);
        self.spec.max_backoff = self.spec.max_backoff.max(self.spec.min_backoff);
        let mut backoff = self.spec.min_backoff;
        tracing::info!(
            board = self.board(),
            device = %self.label,
            path = %self.device_name(),
            roles = %role_names(self.session.config().required_roles),
            "device slot configured"
        );
        loop {
            let handshakes_before = self.session.stats().handshakes;
            let end = match self.spec.device.clone() {
                DeviceRef::Path(path) => self.try_port(&path).await,
                DeviceRef::Serial(_) => self.probe_candidates().await,
            };
            if self.session.stats().handshakes > handshakes_before {
                // It worked: the next attempt starts the back-off afresh.
                backoff = self.spec.min_backoff;
            }
            match end {
                Some(LinkEnd::Shutdown) => return,
                _ => {
                    if !self.wait_for_node(None, Some(backoff)).await {
                        return;
                    }
                    backoff = (backoff * 2).min(self.spec.max_backoff);
                }
            }
        }
    }

    /// Waits for the back-off to run out (`Some`) or for a hotplug notice
    /// of a node appearing (`path`: only that path; `None`: any). Commands
    /// arriving meanwhile go to the session (kept for the next connection).
    /// `false`: the manager was dropped.
    async fn wait_for_node(&mut self, path: Option<&Path>, backoff: Option<Micros>) -> bool {
        let deadline =
            backoff.map(|b| tokio::time::Instant::now() + Duration::from_micros(b as u64));
        loop {
            let input = match deadline {
                Some(deadline) => {
                    tokio::select! {
                        input = self.inputs.recv() => input,
                        _ = tokio::time::sleep_until(deadline) => return true,
                    }
                }
                None => self.inputs.recv().await,
            };
            match input {
                None => return false,
                Some(LinkInput::Command(command, _)) => self.command(command),
                Some(LinkInput::Hotplug(notices)) => {
                    let appeared = notices.iter().filter(|(_, added)| *added).find(
                        |(added_path, _)| match path {
                            Some(path) => same_node(path, added_path),
                            None => true,
                        },
                    );
                    if let Some((added_path, _)) = appeared {
                        tracing::debug!(board = self.board(), device = %self.label, path = %added_path.display(), "device node appeared; retrying now");
                        return true;
                    }
                }
            }
        }
    }

    fn command(&mut self, command: DeviceCommand) {
        self.session.on_command(command, monotonic_now_us());
        // Nothing is open: the session only keeps state; drop any output.
        for output in self.session.drain_outputs() {
            tracing::trace!(?output, "dropped while no device is connected");
        }
    }

    /// Probes every candidate port once, in name order, for the wanted
    /// serial. `None` when no candidate answered usefully.
    async fn probe_candidates(&mut self) -> Option<LinkEnd> {
        let wanted = self
            .session
            .config()
            .wanted_serial
            .clone()
            .unwrap_or_default();
        let candidates = probe_order(
            candidate_ports(&self.spec.candidate_dirs, &self.spec.candidate_prefixes),
            &wanted,
        );
        tracing::debug!(board = self.board(), device = %self.label, serial = %self.device_name(), count = candidates.len(), "probing candidate ports");
        for path in candidates {
            match self.try_port(&path).await {
                None | Some(LinkEnd::WrongSerial) => continue,
                end => return end,
            }
        }
        None
    }

    /// Opens `path` and runs the session on it until it ends. `None` when
    /// the port could not be opened.
    async fn try_port(&mut self, path: &Path) -> Option<LinkEnd> {
        let port = match Port::open(path).await {
            Ok(port) => {
                self.last_open_error = None;
                port
            }
            Err(error) => {
                // Said once per kind of failure, not at every retry.
                let text = error.to_string();
                if matches!(self.spec.device, DeviceRef::Path(_))
                    && self.last_open_error.as_deref() != Some(text.as_str())
                {
                    tracing::info!(board = self.board(), device = %self.label, path = %path.display(), error = %text, "device not available; waiting for it");
                } else {
                    tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), error = %text, "cannot open device");
                }
                self.last_open_error = Some(text);
                return None;
            }
        };
        tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), "port opened; waiting for HELLO");
        if matches!(self.spec.device, DeviceRef::Path(_)) {
            // SPEC 11.2: a delimiter ends whatever partial frame the device
            // may hold from before. Probed ports (`serial:`) are not written
            // to before they said HELLO: they may be someone else's device.
            let flush = tokio::time::timeout(Duration::from_millis(100), port.write_all(&[0]));
            if !matches!(flush.await, Ok(Ok(()))) {
                tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), "could not write the opening delimiter");
            }
        }
        Some(self.serve(port, path).await)
    }

    /// The label this link holds serials under in [`LinkedSerials`].
    fn holder_label(&self, path: &Path) -> String {
        format!(
            "board {} {} on {}",
            self.board(),
            self.label,
            path.display()
        )
    }

    /// Hands one decoded frame to the session (with the serials other
    /// links have up).
    fn frame_in(&mut self, frame: Frame, now: Micros, me: &str) {
        tracing::trace!(board = self.board(), device = %self.label, ?frame, "frame received");
        let rejected = self.session.stats().stamps_rejected;
        let linked = self.spec.linked.clone();
        self.session
            .on_frame_with(frame, now, |serial| linked.holder_other_than(serial, me));
        if self.session.stats().stamps_rejected > rejected {
            tracing::warn!(board = self.board(), device = %self.label,
                total = self.session.stats().stamps_rejected,
                "a button timestamp contradicts the device's heartbeats (SPEC 9.2); \
                 the press is accounted without it, at most at its arrival");
        }
    }

    fn bad_frame_in(
        &mut self,
        error: FrameError,
        header: Option<(u8, u8)>,
        now: Micros,
        path: &Path,
    ) {
        tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), ?error, "bad frame");
        self.session.on_bad_frame(error, header, now);
    }

    /// What the port held at the open: every frame is parsed, but of the
    /// HELLOs only the newest is answered (a device still in HANDSHAKE takes
    /// any WELCOME; answering each would only repeat it).
    fn take_backlog(
        &mut self,
        port: &Port,
        accumulator: &mut Accumulator,
        path: &Path,
        me: &str,
    ) -> Result<(), String> {
        let mut buf = [0u8; 512];
        let mut newest_hello: Option<Frame> = None;
        let mut refused = Vec::new();
        loop {
            let n = port
                .read_waiting(&mut buf)
                .map_err(|error| format!("read failed: {error}"))?;
            if n == 0 {
                break;
            }
            let mut input = &buf[..n];
            loop {
                match accumulator.feed(input) {
                    Feed::NeedMore => break,
                    Feed::Frame(frame, rest) => {
                        if matches!(frame.message, Message::Hello(_)) {
                            newest_hello = Some(frame);
                        }
                        input = rest;
                    }
                    Feed::Error(error, rest) => {
                        refused.push((error, accumulator.refused_header()));
                        input = rest;
                    }
                }
            }
        }
        let now = monotonic_now_us();
        if let Some(hello) = newest_hello {
            tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), "a HELLO was waiting at the open; answering it");
            self.frame_in(hello, now, me);
        } else {
            for (error, header) in refused {
                self.bad_frame_in(error, header, now, path);
            }
        }
        Ok(())
    }

    /// Waits for the port, the manager or the session's next deadline, and
    /// hands what came to the session.
    async fn next_input(
        &mut self,
        port: &Port,
        accumulator: &mut Accumulator,
        buf: &mut [u8],
        path: &Path,
        canonical: Option<&Path>,
        me: &str,
    ) -> Result<(), Wake> {
        let sleep_for = self
            .session
            .next_deadline()
            .map(|deadline| (deadline - monotonic_now_us()).max(0) as u64);
        let mut gone: Option<String> = None;
        tokio::select! {
            read = port.read(buf) => {
                let now = monotonic_now_us();
                match read {
                    Ok(0) => gone = Some("port closed (end of file)".to_owned()),
                    Ok(n) => {
                        let mut input = &buf[..n];
                        loop {
                            match accumulator.feed(input) {
                                Feed::NeedMore => break,
                                Feed::Frame(frame, rest) => {
                                    self.frame_in(frame, now, me);
                                    input = rest;
                                }
                                Feed::Error(error, rest) => {
                                    self.bad_frame_in(error, accumulator.refused_header(), now, path);
                                    input = rest;
                                }
                            }
                        }
                    }
                    Err(error) => gone = Some(format!("read failed: {error}")),
                }
            }
            input = self.inputs.recv() => match input {
                None => {
                    self.session.link_down("daemon stopping");
                    self.session.drain_outputs();
                    return Err(Wake::Shutdown);
                }
                Some(LinkInput::Command(command, due)) => {
                    if matches!(command, DeviceCommand::Display(_)) {
                        self.display_due = Some(due);
                    }
                    self.session.on_command(command, monotonic_now_us());
                }
                Some(LinkInput::Hotplug(notices)) => {
                    let removed = notices.iter().find(|(removed, added)| {
                        !*added && (*removed == path || canonical == Some(removed.as_path()))
                    });
                    if let Some((removed, _)) = removed {
                        gone = Some(format!("device node {} removed", removed.display()));
                    }
                }
            },
            _ = sleep_maybe(sleep_for) => {}
        }
        match gone {
            Some(reason) => Err(Wake::Gone(reason)),
            None => Ok(()),
        }
    }

    /// Moves bytes between `port` and the session until the link ends.
    async fn serve(&mut self, port: Port, path: &Path) -> LinkEnd {
        let canonical = std::fs::canonicalize(path).ok();
        let me = self.holder_label(path);
        let end = self
            .serve_port(&port, path, canonical.as_deref(), &me)
            .await;
        self.spec.linked.release(&me);
        end
    }

    async fn serve_port(
        &mut self,
        port: &Port,
        path: &Path,
        canonical: Option<&Path>,
        me: &str,
    ) -> LinkEnd {
        let mut accumulator = Accumulator::new();
        let mut buf = [0u8; 512];
        let mut wire = [0u8; MAX_WIRE_FRAME];
        // A link that ended in the middle of a pass may have left one: the
        // welcome's display resend is not due at that old instant.
        self.display_due = None;
        self.session.link_up(monotonic_now_us());
        let mut first = true;
        loop {
            let step = if std::mem::take(&mut first) {
                self.take_backlog(port, &mut accumulator, path, me)
                    .map_err(Wake::Gone)
            } else {
                self.next_input(port, &mut accumulator, &mut buf, path, canonical, me)
                    .await
            };
            match step {
                Ok(()) => {}
                Err(Wake::Gone(reason)) => return self.lost(path, &reason),
                Err(Wake::Shutdown) => return LinkEnd::Shutdown,
            }
            self.session.on_tick(monotonic_now_us());
            while let Some(output) = self.session.pop_output() {
                match output {
                    Output::Send(frame) => {
                        let n = match encode(&frame, &mut wire) {
                            Ok(n) => n,
                            Err(_) => {
                                tracing::error!(
                                    ?frame,
                                    "frame does not fit the wire buffer; not sent"
                                );
                                continue;
                            }
                        };
                        // A device that stops reading fills the line: give
                        // up after the link timeout instead of waiting forever.
                        let limit =
                            Duration::from_micros(self.session.config().link_timeout.max(0) as u64);
                        match tokio::time::timeout(limit, port.write_all(&wire[..n])).await {
                            Ok(Ok(())) => {
                                if matches!(frame.message, Message::Display(_)) {
                                    if let Some(due) = self.display_due.take() {
                                        self.spec.display_writes.record(due, monotonic_now_us());
                                    }
                                }
                            }
                            Ok(Err(error)) => {
                                return self.lost(path, &format!("write failed: {error}"));
                            }
                            Err(_) => {
                                return self
                                    .lost(path, "write stalled (the device stopped reading)");
                            }
                        }
                    }
                    Output::Connected(hello) => {
                        self.spec.linked.release(me);
                        self.spec.linked.claim(hello.serial.as_str(), me);
                        tracing::info!(
                            board = self.board(),
                            device = %self.label,
                            path = %path.display(),
                            serial = hello.serial.as_str(),
                            vendor = hello.vendor.as_str(),
                            model = hello.model.as_str(),
                            firmware = hello.firmware.as_str(),
                            roles = %role_names(hello.roles),
                            "device connected"
                        );
                        for key in &self.spec.keys {
                            self.emit(DeviceEvent::Connected {
                                key: key.clone(),
                                hello,
                                path: path.display().to_string(),
                            });
                        }
                    }
                    Output::Rewelcomed(hello) => {
                        tracing::info!(
                            board = self.board(),
                            device = %self.label,
                            path = %path.display(),
                            serial = hello.serial.as_str(),
                            first_unacked_event = hello.first_unacked_event,
                            "device said HELLO again (same boot) and was welcomed again"
                        );
                        // To the board a re-welcome is a connect: it sends
                        // the whole state again and moves the unit's event
                        // record to the HELLO (SPEC.md 6.1 item 2, 7.2).
                        for key in &self.spec.keys {
                            self.emit(DeviceEvent::Connected {
                                key: key.clone(),
                                hello,
                                path: path.display().to_string(),
                            });
                        }
                    }
                    Output::Disconnected { reason } => {
                        // Missed heartbeats or a device restart mid-session.
                        self.spec.linked.release(me);
                        self.report_disconnected(path, &reason);
                        if self.session.hello().is_none() {
                            return LinkEnd::Lost;
                        }
                    }
                    Output::Refused { hello, refusal } => {
                        if let Some(end) = self.refused(path, &hello, &refusal) {
                            return end;
                        }
                    }
                    Output::HandshakeTimeout => {
                        tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), "no HELLO; closing the port");
                        return LinkEnd::Lost;
                    }
                    button @ Output::Button { .. } => self.forward_button(button),
                    Output::Errors { count } => {
                        let errors = self.session.errors();
                        tracing::warn!(board = self.board(), device = %self.label, path = %path.display(), count, total = errors.total(), ?errors, "bad frames from the device (ignored)");
                        if let Some(key) = self.spec.keys.first().cloned() {
                            self.emit(DeviceEvent::Errors { key, count });
                        }
                    }
                }
            }
            // A display the unit already shows sends nothing: not counted.
            self.display_due = None;
        }
    }

    /// Hands a press to the runtime (or, for a combined unit used as a
    /// display only, acknowledges it: nobody will commit its presses).
    fn forward_button(&mut self, output: Output) {
        let Output::Button {
            serial,
            event,
            button,
            pressed,
            at,
            arrival,
        } = output
        else {
            return;
        };
        match self.key_of(DeviceRole::Buttons) {
            Some(key) => {
                tracing::debug!(board = %key.board, device = "buttons", event, ?button, pressed, at, late_us = arrival - at, "button event");
                self.emit(DeviceEvent::Button {
                    key,
                    serial,
                    event,
                    button,
                    pressed,
                    at,
                    arrival,
                });
            }
            None => {
                self.session
                    .on_command(DeviceCommand::Ack { event }, monotonic_now_us());
            }
        }
    }

    fn key_of(&self, role: DeviceRole) -> Option<DeviceKey> {
        self.spec.keys.iter().find(|k| k.role == role).cloned()
    }

    fn emit(&self, event: DeviceEvent) {
        if self.events.send(event).is_err() {
            tracing::debug!("the runtime stopped listening to device events");
        }
    }

    fn report_disconnected(&self, path: &Path, reason: &str) {
        let serial = self.session.serial().unwrap_or("");
        tracing::warn!(board = self.board(), device = %self.label, path = %path.display(), serial, reason, "device disconnected");
        for key in &self.spec.keys {
            self.emit(DeviceEvent::Disconnected {
                key: key.clone(),
                reason: reason.to_owned(),
            });
        }
    }

    fn lost(&mut self, path: &Path, reason: &str) -> LinkEnd {
        self.session.link_down(reason);
        for output in self.session.drain_outputs() {
            match output {
                // Presses the session held for its clock to settle: they
                // came over this link, so they count (SPEC.md 9.2 item 8).
                button @ Output::Button { .. } => self.forward_button(button),
                Output::Disconnected { reason } => self.report_disconnected(path, &reason),
                _ => {}
            }
        }
        if self.session.stats().handshakes == 0 {
            tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), reason, "port closed before any handshake");
        }
        LinkEnd::Lost
    }

    /// Reports a refusal. `Some`: the port is closed (not the device a
    /// `serial:` slot looks for); otherwise the port stays open and the
    /// session answers every further HELLO.
    fn refused(
        &mut self,
        path: &Path,
        hello: &chessclock_protocol::Hello,
        refusal: &Refusal,
    ) -> Option<LinkEnd> {
        if refusal.is_wrong_serial() {
            tracing::debug!(board = self.board(), device = %self.label, path = %path.display(), serial = hello.serial.as_str(), %refusal, "not the wanted device");
            self.session.link_down("not the wanted device");
            self.session.drain_outputs();
            return Some(LinkEnd::WrongSerial);
        }
        // Its NAK went out just before this output (the session queues it
        // first).
        let then = if refusal.is_temporary() {
            "welcomed at its first HELLO once the reason is gone"
        } else {
            "every HELLO is answered with a NAK until the device is fixed or replaced"
        };
        let reason = format!(
            "{refusal} (serial `{}`, {} {}); {then}",
            hello.serial.as_str().escape_default(),
            hello.vendor.as_str().escape_default(),
            hello.model.as_str().escape_default()
        );
        tracing::warn!(board = self.board(), device = %self.label, path = %path.display(), serial = hello.serial.as_str(), reason = %reason, "device refused");
        for key in &self.spec.keys {
            self.emit(DeviceEvent::Refused {
                key: key.clone(),
                path: path.display().to_string(),
                reason: reason.clone(),
            });
        }
        None
    }
}

async fn sleep_maybe(micros: Option<u64>) {
    match micros {
        Some(us) => tokio::time::sleep(Duration::from_micros(us)).await,
        None => std::future::pending().await,
    }
}

/// Whether two paths name the same device node (the same path, or both
/// resolving to the same file).
fn same_node(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Ports worth probing for a `serial:` device: in `/dev` the names starting
/// with one of `prefixes` (`ttyACM`, `ttyUSB`), in every other directory
/// every entry that is not a directory; each device once (by canonical
/// path), in name order.
///
/// Sorted so names that carry the wanted serial come first (the udev rule
/// names devices `/dev/chessclock/<role>-<serial>`, and by-id names contain
/// the USB serial string), so the usual case needs one probe.
pub(super) fn probe_order(mut ports: Vec<PathBuf>, serial: &str) -> Vec<PathBuf> {
    ports.sort_by_key(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        !(name.ends_with(&format!("-{serial}")) || name.contains(&format!("-{serial}-")))
    });
    ports
}

/// Candidate ports (see [`probe_order`] for the order they are tried in):
pub(super) fn candidate_ports(dirs: &[PathBuf], prefixes: &[String]) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut ports = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| {
                dir != Path::new("/dev")
                    || prefixes
                        .iter()
                        .any(|p| e.file_name().to_string_lossy().starts_with(p.as_str()))
            })
            .map(|e| e.path())
            .filter(|p| !p.is_dir())
            .collect();
        names.sort();
        for path in names {
            let Ok(canonical) = std::fs::canonicalize(&path) else {
                continue; // a dangling symlink
            };
            if seen.insert(canonical) {
                ports.push(path);
            }
        }
    }
    ports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_each_device_once_in_name_order_without_dirs_or_dangling_links() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("ttyX-a");
        let b = dir.path().join("ttyX-b");
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        // Two names of the same node: probed once, by the first name.
        std::os::unix::fs::symlink(&b, dir.path().join("by-id-b")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("dangling")).unwrap();
        std::fs::create_dir(dir.path().join("by-path")).unwrap();
        let found = candidate_ports(&[dir.path().to_path_buf()], &[]);
        assert_eq!(found, vec![dir.path().join("by-id-b"), a]);
        assert!(candidate_ports(&[dir.path().join("missing")], &[]).is_empty());
    }

    #[test]
    fn names_carrying_the_serial_are_probed_first() {
        let ports = vec![
            PathBuf::from("/dev/ttyACM0"),
            PathBuf::from("/dev/chessclock/display-CC2"),
            PathBuf::from("/dev/serial/by-id/usb-Maker_chessclock_buttons-CC1-if00"),
            PathBuf::from("/dev/chessclock/buttons-CC1"),
        ];
        assert_eq!(
            probe_order(ports, "CC1"),
            vec![
                PathBuf::from("/dev/serial/by-id/usb-Maker_chessclock_buttons-CC1-if00"),
                PathBuf::from("/dev/chessclock/buttons-CC1"),
                PathBuf::from("/dev/ttyACM0"),
                PathBuf::from("/dev/chessclock/display-CC2"),
            ]
        );
    }

    #[test]
    fn same_node_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("ttyACM0");
        std::fs::write(&node, b"").unwrap();
        let alias = dir.path().join("buttons");
        std::os::unix::fs::symlink(&node, &alias).unwrap();
        assert!(same_node(&alias, &node));
        assert!(same_node(&dir.path().join("x"), &dir.path().join("x")));
        assert!(!same_node(&alias, &dir.path().join("other")));
    }
}
