//! One serial device's protocol session, host side: a pure state machine.
//!
//! Inputs are decoded frames and frame errors with the instant they were read,
//! the runtime's [`DeviceCommand`]s, link up/down notices from the I/O shell
//! and timer ticks. Outputs ([`Output`]) are frames to send and happenings for
//! the runtime; [`Session::next_deadline`] says when [`Session::on_tick`] must
//! be called next. The session does no I/O and reads no clock: every instant
//! is a parameter (CLOCK_MONOTONIC µs in the daemon), so the tests below are
//! exact transcripts.
//!
//! Promises (the normative rules are `protocol/SPEC.md` 6.1 and 10.2):
//! * a device is welcomed only when its HELLO carries our protocol version,
//!   a valid serial number, every role the slot needs (reserved role bits
//!   are ignored), (for `serial:` slots) the wanted serial number, and a
//!   serial no other link of this host has up (the shell says which serials
//!   are taken, [`Session::on_frame_with`]); otherwise the session says why
//!   ([`Refusal`], once per reason) and answers **every** refused HELLO with
//!   its NAK (`UnsupportedVersion`, `Malformed`, `Busy`), checking each HELLO
//!   afresh, so a device refused for a passing reason is welcomed at its next
//!   HELLO; a HELLO frame refused as Malformed with a valid CRC gets NAK
//!   `Malformed` too ([`Session::on_bad_frame`]); a `serial:` slot's probe of
//!   another device stays silent;
//! * heartbeats both ways; the device is declared lost when no valid frame
//!   arrived for [`SessionConfig::link_timeout`];
//! * every BUTTON frame of the welcomed unit is reported with the unit's
//!   serial, resent ones included (but the resends of a press still held,
//!   below): which events are new, repeated or ahead
//!   of a missing one is decided in one place, the board core's record of
//!   the unit's events (SPEC §7.2), which survives replugs and restarts;
//! * a press is reported at its device timestamp mapped to host time by
//!   [`ClockSync`] (fed by heartbeats; a button frame's stamp is used only
//!   when the heartbeats confirm it could be true, else rejected and
//!   counted, [`SessionStats::stamps_rejected`]), never later than the
//!   frame's arrival;
//! * a press the unit queued while no link was up (stamped before this
//!   link's first heartbeat, SPEC.md 9.2 item 8) is held until this link
//!   brought [`SETTLE_HEARTBEATS`] heartbeats, or for at most that many
//!   heartbeat intervals, and is placed then: right after a link-up the
//!   mapping rests on one or two heartbeats, and one of them read late
//!   (a host busy starting up) would place the press as late. Presses that
//!   arrive while one is held wait behind it, so the order is kept; a link
//!   that ends releases what it holds first, mapped by its own clock;
//! * an event is acknowledged only when the runtime says so
//!   ([`DeviceCommand::Ack`]), after it committed the press to its state
//!   store. Acknowledging on arrival would let the device forget a press the
//!   daemon could still lose in a crash before the commit; acknowledging after
//!   the commit means the device retransmits until the press is durable;
//! * bad frames (CRC, COBS, oversize, malformed), unknown message ids and
//!   messages that make no sense in the current state are counted, reported
//!   (coalesced) as [`Output::Errors`] and otherwise ignored: never fatal;
//! * the latest display state and LED state are kept and sent right after
//!   each WELCOME, so a replugged display is restored at once; each goes out
//!   once per WELCOME (a command equal to what this link already sent is
//!   not sent again), and a display state rendered for another unit's
//!   capabilities (or before any unit was welcomed) waits for the runtime's
//!   rendering for this one instead of going out first.

use std::collections::VecDeque;
use std::fmt;

use chessclock_protocol::timesync::{ClockSync, EventObservation};
use chessclock_protocol::{
    event_before, ids, Button, Capabilities, DisplayState, Frame, FrameError, Hello, Leds, Message,
    NakCode, Roles, DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_LINK_TIMEOUT_MS, PROTOCOL_VERSION,
};

use crate::engine::{Micros, MS};

mod hold;
use hold::{HeldPress, Hold, MAX_HELD};

/// Heartbeats of its own link a press queued before the link came up waits
/// for (SPEC.md 9.2 item 8): the first comes at once after WELCOME, so four
/// take three heartbeat intervals (750 ms by default).
pub const SETTLE_HEARTBEATS: u32 = 4;

/// What a configured device is for on its board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceRole {
    Buttons,
    /// The n-th display of the board (config order).
    Display(usize),
}

impl std::fmt::Display for DeviceRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceRole::Buttons => f.write_str("buttons"),
            DeviceRole::Display(n) => write!(f, "display{n}"),
        }
    }
}

/// What the runtime asks of a device (through its session).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceCommand {
    /// Show this (latest wins; restored at once after a reconnect).
    Display(DisplayState),
    Leds(Leds),
    Beep {
        duration_ms: u16,
        count: u8,
    },
    /// Acknowledge button event `event`: sent only once the press is
    /// committed to the state store, so an unacknowledged press is resent by
    /// the device after a crash.
    Ack {
        event: u16,
    },
}

/// Timing and identity a session checks and keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// Every role the slot(s) served by this link need (a combined unit
    /// serving both a `buttons` and a `displays` slot needs both).
    pub required_roles: Roles,
    /// `Some` for a `serial:<number>` slot: any other serial is refused with
    /// [`Refusal::WrongSerial`] (the shell then probes the next port).
    pub wanted_serial: Option<String>,
    /// The host sends a heartbeat when it sent nothing else for this long; the
    /// device is told (WELCOME) to do the same.
    pub heartbeat_interval: Micros,
    /// No valid frame for this long: the device is lost. Also sent to the
    /// device in WELCOME (it shows "link lost" after it).
    pub link_timeout: Micros,
    /// No HELLO this long after the link came up: [`Output::HandshakeTimeout`].
    pub hello_timeout: Micros,
    /// Frame errors are reported at most this often (coalesced).
    pub error_report_interval: Micros,
    /// Send the kept display and LED state right after each WELCOME. The
    /// daemon turns this off: its runtime renders for the unit it was told
    /// of and sends that itself, so the unit gets one DISPLAY, not a stale
    /// one first (SPEC.md 6.1 item 2).
    pub restore_on_welcome: bool,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            required_roles: Roles::BUTTONS,
            wanted_serial: None,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL_MS as Micros * MS,
            // HOST_MISSED_HEARTBEATS (4) heartbeat intervals.
            link_timeout: DEFAULT_LINK_TIMEOUT_MS as Micros * MS,
            hello_timeout: 3_000 * MS,
            error_report_interval: 100 * MS,
            restore_on_welcome: true,
        }
    }
}

/// Why a device was not welcomed. The shell keeps the port open and the
/// session answers each further HELLO (checked afresh), except for
/// [`Refusal::WrongSerial`], which just means "not the device we look for"
/// (the shell then probes the next port).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    WrongVersion {
        got: u8,
        want: u8,
    },
    /// The serial is empty, too long or has characters outside
    /// `A-Z a-z 0-9` (NAK Malformed).
    InvalidSerial {
        got: String,
    },
    WrongRoles {
        got: Roles,
        want: Roles,
    },
    WrongSerial {
        got: String,
        want: String,
    },
    /// Another unit with this serial is linked on another port (NAK Busy,
    /// until that one goes away).
    SerialInUse {
        serial: String,
        holder: String,
    },
}

impl Refusal {
    /// A device of the right kind that is simply not the one wanted.
    pub fn is_wrong_serial(&self) -> bool {
        matches!(self, Refusal::WrongSerial { .. })
    }

    /// The NAK that answers the HELLO (`None`: stay silent, SPEC.md 6.1).
    pub fn nak(&self) -> Option<NakCode> {
        match self {
            Refusal::WrongVersion { .. } => Some(NakCode::UnsupportedVersion),
            Refusal::InvalidSerial { .. } => Some(NakCode::Malformed),
            Refusal::WrongRoles { .. } | Refusal::SerialInUse { .. } => Some(NakCode::Busy),
            Refusal::WrongSerial { .. } => None,
        }
    }

    /// A reason that may go away by itself (the next HELLO may be welcome).
    pub fn is_temporary(&self) -> bool {
        matches!(self, Refusal::SerialInUse { .. })
    }
}

/// Human names of a role set, e.g. `buttons+display`.
pub fn role_names(roles: Roles) -> String {
    let mut names = Vec::new();
    if roles.contains(Roles::BUTTONS) {
        names.push("buttons".to_owned());
    }
    if roles.contains(Roles::DISPLAY) {
        names.push("display".to_owned());
    }
    let unknown = roles.0 & !(Roles::BUTTONS.0 | Roles::DISPLAY.0);
    if unknown != 0 {
        names.push(format!("unknown(0x{unknown:02x})"));
    }
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join("+")
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::WrongVersion { got, want } => write!(
                f,
                "device speaks protocol version {got}, this daemon speaks version {want}"
            ),
            Refusal::WrongRoles { got, want } => write!(
                f,
                "device has roles {}, this slot needs {}",
                role_names(*got),
                role_names(*want)
            ),
            Refusal::WrongSerial { got, want } => {
                write!(f, "device serial is `{got}`, looking for `{want}`")
            }
            Refusal::InvalidSerial { got } => write!(
                f,
                "device serial `{}` is not 1 to 16 of A-Z a-z 0-9",
                got.escape_default()
            ),
            Refusal::SerialInUse { serial, holder } => write!(
                f,
                "another unit with serial `{serial}` is already linked ({holder}); \
                 this one is welcomed once that one is gone"
            ),
        }
    }
}

/// What the session asks of its shell or reports to the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Write this frame to the port.
    Send(Frame),
    /// The handshake completed (WELCOME already queued before this).
    Connected(Hello),
    /// The unit, already linked, said HELLO again with the same boot (its
    /// WELCOME was lost, or it timed the link out): it was welcomed again
    /// (WELCOME queued before this). A full re-welcome: the unit dropped
    /// what it showed and resends its queue, so the runtime sends the
    /// whole state once more (SPEC.md 6.1 item 2) and the event record
    /// takes the HELLO's `first_unacked_event` (SPEC.md 7.2), exactly as
    /// after [`Output::Connected`]; only the link never went down.
    Rewelcomed(Hello),
    /// A welcomed device is gone (or restarted); the shell closes the port
    /// and reconnects with back-off unless the reason came from the shell.
    Disconnected { reason: String },
    /// The device is not welcome (said once per reason; every HELLO is
    /// answered with its NAK). [`Refusal::WrongSerial`]: close the port and
    /// probe on; otherwise keep the port open: the next HELLO is checked
    /// again.
    Refused { hello: Hello, refusal: Refusal },
    /// No HELLO within [`SessionConfig::hello_timeout`]: close, retry later.
    HandshakeTimeout,
    /// A BUTTON frame of the welcomed unit `serial`, resent ones too (but
    /// not the resends of a press still held, SPEC.md 9.2 item 8): the
    /// runtime keeps the record of which events it committed (SPEC §7.2)
    /// and answers duplicates.
    Button {
        serial: String,
        event: u16,
        button: Button,
        pressed: bool,
        /// Device timestamp mapped to host time, `<= arrival`.
        at: Micros,
        arrival: Micros,
    },
    /// Frames refused since the last report.
    Errors { count: u64 },
}

/// Counters of everything refused or ignored, by kind (never reset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorCounts {
    pub cobs: u64,
    pub bad_crc: u64,
    pub oversize: u64,
    pub malformed: u64,
    /// Message ids this protocol version does not know.
    pub unknown_message: u64,
    /// Valid messages that make no sense here (a host message sent by the
    /// device, a button event before WELCOME...).
    pub unexpected: u64,
    /// NAKs the device sent about our frames.
    pub nak_received: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.cobs
            + self.bad_crc
            + self.oversize
            + self.malformed
            + self.unknown_message
            + self.unexpected
            + self.nak_received
    }
}

/// Counters that are not errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    pub frames_received: u64,
    pub frames_sent: u64,
    /// BUTTON frames reported (resent ones included; not the resends of a
    /// press still held, SPEC.md 9.2 item 8).
    pub button_events: u64,
    pub handshakes: u64,
    /// HELLOs refused (each answered with its NAK, SPEC.md 6.1).
    pub hellos_refused: u64,
    /// Button timestamps the heartbeats contradicted (SPEC.md 9.2, item 7):
    /// not used for the time mapping.
    pub stamps_rejected: u64,
}

/// Where the link stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// No port open.
    Down,
    /// Port open, waiting for HELLO since this instant.
    AwaitingHello { since: Micros },
    /// Welcomed.
    Up {
        hello: Hello,
        last_rx: Micros,
        last_tx: Micros,
    },
    /// HELLO refused; every further HELLO is checked again.
    Refused,
}

/// The host side of one device link (see the module docs).
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    link: LinkState,
    sync: ClockSync,
    /// The device boot (serial, boot id) whose clock `sync` maps: the
    /// mapping survives a replug of the same running device and starts
    /// afresh for any other boot.
    sync_boot: Option<(String, u32)>,
    /// Device time of this link's first DEVICE_HEARTBEAT: a press stamped
    /// before it was queued while no link was up.
    link_first_heartbeat: Option<u64>,
    /// DEVICE_HEARTBEATs this link brought (since its WELCOME).
    link_heartbeats: u32,
    /// Presses waiting for the mapping to settle.
    hold: Hold,
    /// Events of the current device boot reported and not acknowledged yet.
    awaiting_ack: VecDeque<u16>,
    /// Events of a previous boot still awaiting the runtime's ACK when the
    /// unit came back with a new boot: that ACK would reach the new boot,
    /// which numbers its own events from its own start, and acknowledge a
    /// press of its own the host may not have. Swallowed once each.
    stale_acks: Vec<u16>,
    tx_seq: u8,
    /// Serial of the device last welcomed.
    serial: Option<String>,
    display: Option<DisplayState>,
    /// The capabilities of the unit that was welcomed when `display` was
    /// asked for (the runtime renders for the unit it knows).
    display_for: Option<Capabilities>,
    leds: Option<Leds>,
    /// What this link sent since its last WELCOME (so each goes out once).
    display_sent: Option<DisplayState>,
    leds_sent: Option<Leds>,
    /// Capabilities of the unit last welcomed.
    last_caps: Option<Capabilities>,
    /// The refusal last reported (said once per reason).
    last_refusal: Option<Refusal>,
    errors: ErrorCounts,
    stats: SessionStats,
    unreported_errors: u64,
    first_unreported_at: Micros,
    last_error_report: Option<Micros>,
    outputs: VecDeque<Output>,
}

impl Session {
    pub fn new(config: SessionConfig) -> Session {
        Session {
            config,
            link: LinkState::Down,
            sync: ClockSync::new(),
            sync_boot: None,
            link_first_heartbeat: None,
            link_heartbeats: 0,
            hold: Hold::default(),
            awaiting_ack: VecDeque::new(),
            stale_acks: Vec::new(),
            tx_seq: 0,
            serial: None,
            display: None,
            display_for: None,
            leds: None,
            display_sent: None,
            leds_sent: None,
            last_caps: None,
            last_refusal: None,
            errors: ErrorCounts::default(),
            stats: SessionStats::default(),
            unreported_errors: 0,
            first_unreported_at: 0,
            last_error_report: None,
            outputs: VecDeque::new(),
        }
    }

    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    pub fn link(&self) -> &LinkState {
        &self.link
    }

    /// The HELLO of the device currently welcomed.
    pub fn hello(&self) -> Option<&Hello> {
        match &self.link {
            LinkState::Up { hello, .. } => Some(hello),
            _ => None,
        }
    }

    /// Serial number of the device last welcomed (kept after it left).
    pub fn serial(&self) -> Option<&str> {
        self.serial.as_deref()
    }

    pub fn errors(&self) -> ErrorCounts {
        self.errors
    }

    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// The latest display state the runtime asked for.
    pub fn display(&self) -> Option<&DisplayState> {
        self.display.as_ref()
    }

    /// The latest LED state the runtime asked for.
    pub fn leds(&self) -> Option<&Leds> {
        self.leds.as_ref()
    }

    /// Takes the next output, oldest first.
    pub fn pop_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Takes every pending output.
    pub fn drain_outputs(&mut self) -> Vec<Output> {
        self.outputs.drain(..).collect()
    }

    /// The shell opened a port: wait for HELLO. The time mapping is kept
    /// only if the HELLO shows the same device boot (its clock ran on);
    /// a reset device starts it afresh.
    pub fn link_up(&mut self, now: Micros) {
        self.end_link("link replaced".to_owned());
        self.link = LinkState::AwaitingHello { since: now };
        self.last_refusal = None;
    }

    /// The shell lost or closed the port. Reports [`Output::Disconnected`]
    /// when a device was welcomed.
    pub fn link_down(&mut self, reason: &str) {
        if self.unreported_errors > 0 {
            self.outputs.push_back(Output::Errors {
                count: self.unreported_errors,
            });
            self.unreported_errors = 0;
        }
        self.end_link(reason.to_owned());
        self.link = LinkState::Down;
    }

    fn end_link(&mut self, reason: String) {
        // Placed by the clock of the link that brought them, before a new
        // boot's HELLO resets it.
        self.release_held();
        if let LinkState::Up { .. } = self.link {
            self.outputs.push_back(Output::Disconnected { reason });
        }
    }

    /// Reports the bad frames not yet reported, whatever the report's
    /// rate limit: a link that ends (the shell may drop the session with
    /// it) must not take its count along unsaid.
    fn flush_errors(&mut self, now: Micros) {
        if self.unreported_errors > 0 {
            self.outputs.push_back(Output::Errors {
                count: self.unreported_errors,
            });
            self.unreported_errors = 0;
            self.last_error_report = Some(now);
        }
    }

    /// A frame decoded from the port, read at `now`, on a host where no
    /// other link has a device up.
    pub fn on_frame(&mut self, frame: Frame, now: Micros) {
        self.on_frame_with(frame, now, |_| None)
    }

    /// A frame decoded from the port, read at `now`. `linked_elsewhere`
    /// names the other link (port) of this host on which a unit with the
    /// given serial is up, if any: a HELLO with that serial is refused
    /// ([`Refusal::SerialInUse`]).
    pub fn on_frame_with(
        &mut self,
        frame: Frame,
        now: Micros,
        linked_elsewhere: impl Fn(&str) -> Option<String>,
    ) {
        self.stats.frames_received += 1;
        match frame.message {
            Message::Hello(hello) => self.on_hello(hello, frame.seq, now, &linked_elsewhere),
            Message::Unknown { .. } => self.count_error(now, |e| &mut e.unknown_message),
            Message::Nak { .. } => self.count_error(now, |e| &mut e.nak_received),
            Message::Button {
                event,
                button,
                pressed,
                device_time_us,
            } => {
                if !self.touch(now) {
                    // Before WELCOME: ignored; the device retransmits it
                    // after the handshake because nobody acknowledged it.
                    self.count_error(now, |e| &mut e.unexpected);
                    return;
                }
                self.on_button(event, button, pressed, device_time_us, now);
            }
            Message::DeviceHeartbeat { device_time_us, .. } => {
                if self.touch(now) {
                    self.sync.observe_heartbeat(device_time_us, now);
                    self.link_first_heartbeat.get_or_insert(device_time_us);
                    self.link_heartbeats = self.link_heartbeats.saturating_add(1);
                    if self.link_heartbeats >= SETTLE_HEARTBEATS {
                        self.release_held();
                    }
                } else {
                    self.count_error(now, |e| &mut e.unexpected);
                }
            }
            Message::Welcome { .. }
            | Message::Ack { .. }
            | Message::Display(_)
            | Message::Leds(_)
            | Message::Beep { .. }
            | Message::HostHeartbeat => self.count_error(now, |e| &mut e.unexpected),
        }
    }

    /// A frame refused by the decoder, read at `now`. Counted, never fatal.
    pub fn on_frame_error(&mut self, error: FrameError, now: Micros) {
        self.on_bad_frame(error, None, now)
    }

    /// [`Self::on_frame_error`] with the refused frame's `(id, seq)` when its
    /// CRC was valid ([`chessclock_protocol::Accumulator::refused_header`]):
    /// a malformed HELLO (e.g. a serial of 17 bytes) is answered with NAK
    /// Malformed (SPEC.md 6.1, 10.2), as a refused HELLO is.
    pub fn on_bad_frame(&mut self, error: FrameError, header: Option<(u8, u8)>, now: Micros) {
        if let (FrameError::Malformed, Some((ids::HELLO, seq))) = (error, header) {
            if !matches!(self.link, LinkState::Down) {
                self.stats.hellos_refused += 1;
                self.send(
                    Message::Nak {
                        code: NakCode::Malformed,
                        seq,
                    },
                    now,
                );
            }
        }
        match error {
            FrameError::Cobs => self.count_error(now, |e| &mut e.cobs),
            FrameError::BadCrc => self.count_error(now, |e| &mut e.bad_crc),
            FrameError::Oversize => self.count_error(now, |e| &mut e.oversize),
            FrameError::Malformed => self.count_error(now, |e| &mut e.malformed),
        }
    }

    /// A command from the runtime. Display and LED states are kept (latest
    /// wins) and sent at once when a device is up; a beep is dropped when
    /// no device is up (it would come too late); an ACK is remembered so a
    /// later retransmission is answered at once.
    pub fn on_command(&mut self, command: DeviceCommand, now: Micros) {
        let up = matches!(self.link, LinkState::Up { .. });
        match command {
            DeviceCommand::Display(state) => {
                self.display = Some(state);
                self.display_for = self.last_caps;
                if up && self.display_sent != Some(state) {
                    self.display_sent = Some(state);
                    self.send(Message::Display(state), now);
                }
            }
            DeviceCommand::Leds(leds) => {
                self.leds = Some(leds);
                if up && self.leds_sent != Some(leds) {
                    self.leds_sent = Some(leds);
                    self.send(Message::Leds(leds), now);
                }
            }
            DeviceCommand::Beep { duration_ms, count } => {
                if up {
                    self.send(Message::Beep { duration_ms, count }, now);
                }
            }
            DeviceCommand::Ack { event } => {
                if let Some(i) = self.stale_acks.iter().position(|&e| e == event) {
                    self.stale_acks.swap_remove(i);
                    return;
                }
                // Cumulative (SPEC.md 7.3): it covers every earlier event.
                self.awaiting_ack.retain(|&e| event_before(event, e));
                if up {
                    self.send(Message::Ack { event }, now);
                }
            }
        }
    }

    /// Handles every deadline due at `now` (heartbeat to send, link timeout,
    /// HELLO timeout, error report).
    pub fn on_tick(&mut self, now: Micros) {
        match self.link.clone() {
            LinkState::AwaitingHello { since } => {
                if now >= since + self.config.hello_timeout {
                    self.link = LinkState::Down;
                    self.outputs.push_back(Output::HandshakeTimeout);
                }
            }
            LinkState::Up {
                last_rx, last_tx, ..
            } => {
                if now >= last_rx + self.config.link_timeout {
                    self.release_held();
                    self.link = LinkState::Down;
                    self.flush_errors(now);
                    self.outputs.push_back(Output::Disconnected {
                        reason: format!(
                            "no frame from the device for {} ms (heartbeats missed)",
                            (now - last_rx) / MS
                        ),
                    });
                } else if now >= last_tx + self.config.heartbeat_interval {
                    self.send(Message::HostHeartbeat, now);
                }
            }
            LinkState::Down | LinkState::Refused => {}
        }
        if self.hold.due().is_some_and(|due| now >= due) {
            self.release_held();
        }
        if self.unreported_errors > 0 && now >= self.error_report_due() {
            self.outputs.push_back(Output::Errors {
                count: self.unreported_errors,
            });
            self.unreported_errors = 0;
            self.last_error_report = Some(now);
        }
    }

    /// When [`Session::on_tick`] must be called next (`None`: nothing timed).
    pub fn next_deadline(&self) -> Option<Micros> {
        let link = match &self.link {
            LinkState::AwaitingHello { since } => Some(since + self.config.hello_timeout),
            LinkState::Up {
                last_rx, last_tx, ..
            } => Some(
                (last_rx + self.config.link_timeout).min(last_tx + self.config.heartbeat_interval),
            ),
            LinkState::Down | LinkState::Refused => None,
        };
        let errors = (self.unreported_errors > 0).then(|| self.error_report_due());
        [link, errors, self.hold.due()].into_iter().flatten().min()
    }

    fn error_report_due(&self) -> Micros {
        match self.last_error_report {
            Some(last) => self
                .first_unreported_at
                .max(last + self.config.error_report_interval),
            None => self.first_unreported_at,
        }
    }

    fn count_error(&mut self, now: Micros, counter: impl FnOnce(&mut ErrorCounts) -> &mut u64) {
        *counter(&mut self.errors) += 1;
        if self.unreported_errors == 0 {
            self.first_unreported_at = now;
        }
        self.unreported_errors += 1;
    }

    /// Records a valid frame while up; `false` when not up.
    fn touch(&mut self, now: Micros) -> bool {
        match &mut self.link {
            LinkState::Up { last_rx, .. } => {
                *last_rx = now;
                true
            }
            _ => false,
        }
    }

    fn on_hello(
        &mut self,
        hello: Hello,
        seq: u8,
        now: Micros,
        linked_elsewhere: &dyn Fn(&str) -> Option<String>,
    ) {
        let mut again = false;
        match &self.link {
            LinkState::Down => {
                // No port we listen to: the shell is closing it.
                return;
            }
            LinkState::Up { hello: current, .. } => {
                if current.serial == hello.serial && current.boot_id == hello.boot_id {
                    // Same device, same boot: our WELCOME was lost or the
                    // device timed the link out. Welcome it again, in full
                    // (SPEC 6.1: the host answers every HELLO, and sends
                    // the state once per WELCOME).
                    again = true;
                } else {
                    // The device restarted within the session (a UART
                    // bridge keeps the port open across a device reset).
                    self.end_link("device restarted (HELLO with a new boot id)".to_owned());
                    self.link = LinkState::AwaitingHello { since: now };
                }
            }
            LinkState::AwaitingHello { .. } | LinkState::Refused => {}
        }
        if let Some(refusal) = self.check(&hello, linked_elsewhere).filter(|_| !again) {
            // SPEC 6.1/10.2: every refused HELLO gets its NAK; a device that
            // is merely not the serial a probing slot looks for is not
            // refused by the daemon (another slot may want it): nothing.
            if let Some(code) = refusal.nak() {
                self.stats.hellos_refused += 1;
                self.send(Message::Nak { code, seq }, now);
            }
            self.link = LinkState::Refused;
            if self.last_refusal.as_ref() != Some(&refusal) || refusal.is_wrong_serial() {
                self.last_refusal = Some(refusal.clone());
                self.outputs.push_back(Output::Refused { hello, refusal });
            }
            return;
        }
        self.last_refusal = None;
        self.stats.handshakes += 1;
        let serial = hello.serial.as_str().to_owned();
        let boot = (serial.clone(), hello.boot_id);
        if self.sync_boot.as_ref() != Some(&boot) {
            // Another device or a new boot: its clock has another origin,
            // and the ACKs still due to the old one are not for it.
            self.sync.reset();
            self.sync_boot = Some(boot);
            self.stale_acks = std::mem::take(&mut self.awaiting_ack).into();
        }
        self.serial = Some(serial);
        // The unit sends its heartbeat and then its queue after every
        // WELCOME (SPEC.md 6.1), a repeated one too.
        self.link_first_heartbeat = None;
        self.link_heartbeats = 0;
        self.hold.new_link();
        self.link = LinkState::Up {
            hello,
            last_rx: now,
            last_tx: now,
        };
        self.send(
            Message::Welcome {
                protocol_version: PROTOCOL_VERSION,
                heartbeat_interval_ms: clamp_ms(self.config.heartbeat_interval),
                link_timeout_ms: clamp_ms(self.config.link_timeout),
            },
            now,
        );
        self.outputs.push_back(if again {
            Output::Rewelcomed(hello)
        } else {
            Output::Connected(hello)
        });
        self.last_caps = Some(hello.capabilities);
        self.display_sent = None;
        self.leds_sent = None;
        if !self.config.restore_on_welcome {
            return;
        }
        if hello.roles.contains(Roles::DISPLAY) {
            // A state rendered for another unit (or before any was
            // welcomed) would be replaced at once by the runtime's
            // rendering for this one: send only what fits this unit.
            if let Some(state) = self.display.filter(|_| self.display_for == self.last_caps) {
                self.display_sent = Some(state);
                self.send(Message::Display(state), now);
            }
        }
        if hello.roles.contains(Roles::BUTTONS) {
            if let Some(leds) = self.leds {
                self.leds_sent = Some(leds);
                self.send(Message::Leds(leds), now);
            }
        }
    }

    /// The first reason, in the order of SPEC.md 6.1, to refuse `hello`.
    /// A `serial:` slot probing ports looks at the serial first: a foreign
    /// device of another kind is "not ours", not "refused".
    fn check(
        &self,
        hello: &Hello,
        linked_elsewhere: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Refusal> {
        if let Some(want) = &self.config.wanted_serial {
            if hello.serial.as_str() != want {
                return Some(Refusal::WrongSerial {
                    got: hello.serial.as_str().to_owned(),
                    want: want.clone(),
                });
            }
        }
        if hello.protocol_version != PROTOCOL_VERSION {
            return Some(Refusal::WrongVersion {
                got: hello.protocol_version,
                want: PROTOCOL_VERSION,
            });
        }
        if !hello.has_valid_serial() {
            return Some(Refusal::InvalidSerial {
                got: String::from_utf8_lossy(hello.serial.as_bytes()).into_owned(),
            });
        }
        if !hello.roles.contains(self.config.required_roles) {
            return Some(Refusal::WrongRoles {
                got: hello.roles,
                want: self.config.required_roles,
            });
        }
        if let Some(holder) = linked_elsewhere(hello.serial.as_str()) {
            return Some(Refusal::SerialInUse {
                serial: hello.serial.as_str().to_owned(),
                holder,
            });
        }
        None
    }

    fn on_button(
        &mut self,
        event: u16,
        button: Button,
        pressed: bool,
        device_time_us: u64,
        now: Micros,
    ) {
        if let EventObservation::Rejected { .. } = self.sync.observe_event(device_time_us, now) {
            self.stats.stamps_rejected += 1;
        }
        let Some(serial) = self.serial.clone() else {
            return;
        };
        let press = HeldPress {
            serial,
            event,
            button,
            pressed,
            device_time_us,
            arrival: now,
            release_by: now.saturating_add(
                self.config
                    .heartbeat_interval
                    .saturating_mul(SETTLE_HEARTBEATS as Micros),
            ),
        };
        let queued = self
            .link_first_heartbeat
            .is_none_or(|first| device_time_us < first);
        let unsettled = self.link_heartbeats < SETTLE_HEARTBEATS;
        let hold =
            (!self.hold.is_empty() || (queued && unsettled)) && !self.hold.was_evicted(event);
        if !hold {
            self.place(press);
            return;
        }
        if let Some(oldest) = self.hold.hold(press) {
            self.place(oldest);
        }
    }

    /// Reports a press at its device instant mapped by the clock as it is
    /// now, never later than its arrival.
    fn place(&mut self, press: HeldPress) {
        self.stats.button_events += 1;
        if !self.awaiting_ack.contains(&press.event) {
            if self.awaiting_ack.len() >= MAX_HELD {
                self.awaiting_ack.pop_front();
            }
            self.awaiting_ack.push_back(press.event);
        }
        let at = self
            .sync
            .to_host(press.device_time_us, press.arrival)
            .min(press.arrival);
        self.outputs.push_back(Output::Button {
            serial: press.serial,
            event: press.event,
            button: press.button,
            pressed: press.pressed,
            at,
            arrival: press.arrival,
        });
    }

    /// Places every held press, in event order.
    fn release_held(&mut self) {
        for press in self.hold.take_all() {
            self.place(press);
        }
    }

    fn send(&mut self, message: Message, now: Micros) {
        let frame = Frame {
            seq: self.tx_seq,
            message,
        };
        self.tx_seq = self.tx_seq.wrapping_add(1);
        self.stats.frames_sent += 1;
        if let LinkState::Up { last_tx, .. } = &mut self.link {
            *last_tx = now;
        }
        self.outputs.push_back(Output::Send(frame));
    }
}

fn clamp_ms(us: Micros) -> u16 {
    (us / MS).clamp(0, u16::MAX as Micros) as u16
}

#[cfg(test)]
mod tests;
