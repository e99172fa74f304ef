//! One emulated unit as pure state: what it is ([`UnitSpec`]), its own clock
//! ([`DeviceClock`]), and what it does with frames and presses
//! ([`UnitModel`]). No I/O here; the runner moves the bytes.

use std::path::PathBuf;
use std::str::FromStr;

use chessclock_protocol::device::{Command, DeviceLink, LinkState as DeviceLinkState, LinkStats};
use chessclock_protocol::{
    Button, Capabilities, DisplayState, Frame, FrameError, Hello, Icons, Leds, Message, Roles,
    Text, PROTOCOL_VERSION,
};

/// The link as the view and scripts see it (the protocol's two device
/// states, with a link loss told apart from a first handshake).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkState {
    /// Sending HELLO after power-up or replug, no WELCOME yet.
    Connecting,
    /// WELCOME received, the host is heard.
    Up,
    /// Was up, then the host fell silent past the link timeout: HELLO again.
    Lost,
}

impl LinkState {
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Up => "up",
            LinkState::Lost => "lost",
        }
    }
}

/// Why a press was not recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PressRefused {
    /// This unit has no such button.
    NoSuchButton,
    /// The unacknowledged-event queue is full (counted by the link).
    QueueFull,
}

/// A serial number as SPEC.md allows: 1 to 16 of `A-Z a-z 0-9`.
pub fn valid_serial(serial: &str) -> bool {
    (1..=16).contains(&serial.len()) && serial.chars().all(|c| c.is_ascii_alphanumeric())
}

/// What kind of unit to emulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// Left/right/arbiter buttons and their LEDs.
    Buttons,
    /// One or two time displays, icons, tenths, buzzer.
    Display,
    /// Both in one box.
    Combined,
}

impl UnitKind {
    pub fn roles(self) -> Roles {
        match self {
            UnitKind::Buttons => Roles::BUTTONS,
            UnitKind::Display => Roles::DISPLAY,
            UnitKind::Combined => Roles(Roles::BUTTONS.0 | Roles::DISPLAY.0),
        }
    }
    pub fn has_buttons(self) -> bool {
        self != UnitKind::Display
    }
    pub fn has_display(self) -> bool {
        self != UnitKind::Buttons
    }
    pub fn name(self) -> &'static str {
        match self {
            UnitKind::Buttons => "buttons",
            UnitKind::Display => "display",
            UnitKind::Combined => "combined",
        }
    }
}

impl FromStr for UnitKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "buttons" | "button" => Ok(UnitKind::Buttons),
            "display" => Ok(UnitKind::Display),
            "combined" => Ok(UnitKind::Combined),
            other => Err(format!(
                "unknown unit kind `{other}` (expected buttons, display or combined)"
            )),
        }
    }
}

/// One unit to emulate. Build with [`UnitSpec::new`] and adjust fields, or
/// parse the CLI form (see [`UnitSpec::from_str`]).
#[derive(Clone, Debug, PartialEq)]
pub struct UnitSpec {
    /// The name scripts, logs and `--link` use (e.g. `buttons`).
    pub name: String,
    pub kind: UnitKind,
    /// HELLO serial number (stable device names are built from it).
    pub serial: String,
    pub vendor: String,
    pub model: String,
    pub firmware: String,
    /// Time displays (1 or 2) of a display or combined unit.
    pub displays: u8,
    pub digits: u8,
    pub tenths: bool,
    pub buzzer: bool,
    pub arbiter_button: bool,
    pub brightness_levels: u8,
    pub text_chars: u8,
    /// Device clock at power-up, µs (real firmware: time since boot).
    pub clock_offset_us: i64,
    /// Device clock rate error, parts per million (+: runs fast).
    pub clock_drift_ppm: f64,
    /// A stable symlink to the PTY slave, kept while the unit is plugged.
    pub link: Option<PathBuf>,
    /// HELLO `boot_id` (none: random at start).
    pub boot_id: Option<u32>,
    /// The unit says its first HELLO this long after the simulator starts
    /// (0: at once); until then its port is there but silent, as a unit
    /// still booting (its snapshot says plugged: the port is there).
    /// Units that boot at different instants are welcomed at different
    /// instants, so their heartbeats are not in phase.
    pub boot_delay_us: u64,
}

impl UnitSpec {
    /// A unit with the defaults of its kind, serial `SIM<NAME>` (letters
    /// and digits of the name, upper case, at most 16 characters).
    pub fn new(name: &str, kind: UnitKind) -> Self {
        let display = kind.has_display();
        let serial: String = format!("SIM{name}")
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_uppercase())
            .take(16)
            .collect();
        UnitSpec {
            name: name.to_owned(),
            kind,
            serial,
            vendor: "chessclockd".to_owned(),
            model: format!("sim-{}", kind.name()),
            firmware: env!("CARGO_PKG_VERSION").to_owned(),
            displays: if display { 2 } else { 0 },
            digits: if display { 5 } else { 0 },
            tenths: display,
            buzzer: display,
            arbiter_button: kind.has_buttons(),
            brightness_levels: if display { 8 } else { 0 },
            text_chars: if display { 16 } else { 0 },
            clock_offset_us: 0,
            clock_drift_ppm: 0.0,
            link: None,
            boot_id: None,
            boot_delay_us: 0,
        }
    }

    /// The HELLO this unit sends (the link fills in `first_unacked_event`).
    pub fn hello(&self, boot_id: u32) -> Hello {
        let display = self.kind.has_display();
        Hello {
            protocol_version: PROTOCOL_VERSION,
            roles: self.kind.roles(),
            capabilities: Capabilities {
                displays: self.displays,
                digits: self.digits,
                tenths: self.tenths,
                icons: if display { Icons(0x01FF) } else { Icons(0) },
                buzzer: self.buzzer,
                brightness_levels: self.brightness_levels,
                arbiter_button: self.arbiter_button && self.kind.has_buttons(),
                text_chars: self.text_chars,
            },
            vendor: Text::truncated(&self.vendor),
            model: Text::truncated(&self.model),
            serial: Text::truncated(&self.serial),
            firmware: Text::truncated(&self.firmware),
            boot_id,
            first_unacked_event: 0,
        }
    }
}

/// CLI form: `NAME=KIND[,key=value...]`, keys `serial`, `vendor`, `model`,
/// `firmware`, `displays`, `digits`, `tenths`, `buzzer`, `arbiter`,
/// `text-chars`, `offset-us`, `drift-ppm`, `link`, `boot-id`. Example:
/// `display=display,displays=1,serial=CC0042,drift-ppm=120`.
impl FromStr for UnitSpec {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.split(',');
        let head = parts.next().unwrap_or_default();
        let (name, kind) = match head.split_once('=') {
            Some((name, kind)) => (name.trim(), kind.trim().parse::<UnitKind>()?),
            None => (head.trim(), head.trim().parse::<UnitKind>()?),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!("unit name `{name}`: use letters, digits, `-`, `_`"));
        }
        let mut spec = UnitSpec::new(name, kind);
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("unit `{name}`: `{part}` is not key=value"))?;
            let bad = |what: &str| format!("unit `{name}`: {key}={value}: {what}");
            let flag = |v: &str| match v {
                "yes" | "true" | "1" | "on" => Ok(true),
                "no" | "false" | "0" | "off" => Ok(false),
                _ => Err(bad("expected yes or no")),
            };
            match key.trim() {
                "serial" => spec.serial = value.to_owned(),
                "vendor" => spec.vendor = value.to_owned(),
                "model" => spec.model = value.to_owned(),
                "firmware" => spec.firmware = value.to_owned(),
                "displays" => {
                    spec.displays = match value {
                        "1" => 1,
                        "2" => 2,
                        _ => return Err(bad("1 or 2")),
                    }
                }
                "digits" => spec.digits = value.parse().map_err(|_| bad("a number"))?,
                "text-chars" => spec.text_chars = value.parse().map_err(|_| bad("a number"))?,
                "tenths" => spec.tenths = flag(value)?,
                "buzzer" => spec.buzzer = flag(value)?,
                "arbiter" => spec.arbiter_button = flag(value)?,
                "offset-us" => {
                    spec.clock_offset_us = value.parse().map_err(|_| bad("an integer"))?
                }
                "drift-ppm" => {
                    spec.clock_drift_ppm = value
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && v.abs() < 100_000.0)
                        .ok_or_else(|| bad("a number of ppm"))?
                }
                "link" => spec.link = Some(PathBuf::from(value)),
                "boot-id" => {
                    spec.boot_id = Some(value.parse().map_err(|_| bad("a 32-bit number"))?)
                }
                _ => return Err(bad("unknown key")),
            }
        }
        if !valid_serial(&spec.serial) {
            return Err(format!(
                "unit `{name}`: serial `{}` must be 1 to 16 letters and digits",
                spec.serial
            ));
        }
        for (field, value) in [
            ("vendor", &spec.vendor),
            ("model", &spec.model),
            ("firmware", &spec.firmware),
        ] {
            if value.len() > 16 {
                return Err(format!(
                    "unit `{name}`: {field} `{value}` is longer than 16 bytes"
                ));
            }
        }
        Ok(spec)
    }
}

/// The unit's own clock: starts at `offset_us` at power-up (host instant
/// `origin_host_us`) and runs `drift_ppm` fast or slow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceClock {
    pub origin_host_us: i64,
    pub offset_us: i64,
    pub drift_ppm: f64,
}

impl DeviceClock {
    /// Device time at host instant `host_us` (never negative).
    pub fn device_us(&self, host_us: i64) -> u64 {
        let elapsed = (host_us - self.origin_host_us) as f64;
        let device = self.offset_us as f64 + elapsed * (1.0 + self.drift_ppm / 1e6);
        device.max(0.0) as u64
    }

    /// Host instant at which the device clock reads `device_us` (rounded up,
    /// so a timer never fires early).
    pub fn host_us(&self, device_us: u64) -> i64 {
        let elapsed = (device_us as f64 - self.offset_us as f64) / (1.0 + self.drift_ppm / 1e6);
        self.origin_host_us + elapsed.ceil() as i64
    }
}

/// Counters shown in the view and the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UnitStats {
    /// Valid frames received.
    pub frames_rx: u64,
    /// Frames written (copies included).
    pub frames_tx: u64,
    /// Frames refused by the decoder.
    pub rx_errors: u64,
    pub presses: u64,
    /// Events acknowledged.
    pub acks: u64,
    pub naks: u64,
    pub unknown: u64,
    pub retransmissions: u64,
    /// Presses refused because the queue was full.
    pub dropped: u64,
    pub link_losses: u64,
}

/// Everything an observer (view, script waits, tests) may look at.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitSnapshot {
    pub name: String,
    pub kind: UnitKind,
    pub serial: String,
    pub displays: u8,
    /// Digit positions per panel (0: no limit) and text line length, as
    /// the unit draws them (SPEC 8.1, 8.3).
    pub digits: u8,
    pub text_chars: u8,
    pub plugged: bool,
    pub low_power: bool,
    /// The PTY slave path while plugged.
    pub pty: Option<PathBuf>,
    /// The stable symlink, when configured.
    pub link: Option<PathBuf>,
    pub link_state: LinkState,
    /// What the display shows now (with the link-lost icon set by the unit
    /// itself); `None` before the host sent any display state.
    pub display: Option<DisplayState>,
    pub leds: Leds,
    /// Beeps requested so far, and the host instant the last one ends.
    pub beeps: u64,
    pub beeping_until_us: i64,
    pub unacked: usize,
    pub stats: UnitStats,
    pub faults_active: bool,
    /// The latest notable happenings, oldest first (for the view).
    pub recent: Vec<Activity>,
}

/// One line of a unit's recent activity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    /// Host CLOCK_MONOTONIC µs of the latest occurrence.
    pub at_us: i64,
    pub text: String,
    /// How many times in a row it happened.
    pub count: u32,
}

/// A short bounded history of notable happenings; repeats fold into one
/// line with a count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActivityLog {
    entries: std::collections::VecDeque<Activity>,
}

impl ActivityLog {
    /// Lines kept per unit.
    pub const KEEP: usize = 8;

    pub fn push(&mut self, at_us: i64, text: impl Into<String>) {
        let text = text.into();
        if let Some(last) = self.entries.back_mut() {
            if last.text == text {
                last.count += 1;
                last.at_us = at_us;
                return;
            }
        }
        if self.entries.len() == Self::KEEP {
            self.entries.pop_front();
        }
        self.entries.push_back(Activity {
            at_us,
            text,
            count: 1,
        });
    }

    pub fn entries(&self) -> Vec<Activity> {
        self.entries.iter().cloned().collect()
    }
}

/// The unit's behaviour: the protocol's [`DeviceLink`] plus what the host
/// set (display, LEDs, beeps).
#[derive(Clone, Debug)]
pub struct UnitModel {
    pub spec: UnitSpec,
    pub clock: DeviceClock,
    link: DeviceLink,
    /// Linked at least once since power-up or the last replug (so a
    /// handshake after it is a link loss).
    linked_since_plug: bool,
    low_power: bool,
    display: Option<DisplayState>,
    leds: Leds,
    beeps: u64,
    beeping_until_us: i64,
    stats: UnitStats,
}

/// What one received frame did, for the log.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Received {
    /// Events the frame acknowledged (cumulative ACKs may remove several):
    /// `(event, times sent)`.
    pub acked: Vec<(u16, u32)>,
}

impl UnitModel {
    /// The unit powers up at host instant `now_host_us` with `boot_id`.
    pub fn new(spec: UnitSpec, now_host_us: i64, boot_id: u32) -> Self {
        let clock = DeviceClock {
            origin_host_us: now_host_us,
            offset_us: spec.clock_offset_us,
            drift_ppm: spec.clock_drift_ppm,
        };
        let link = DeviceLink::new(spec.hello(boot_id), clock.device_us(now_host_us));
        UnitModel {
            spec,
            clock,
            link,
            linked_since_plug: false,
            low_power: false,
            display: None,
            leds: Leds::default(),
            beeps: 0,
            beeping_until_us: 0,
            stats: UnitStats::default(),
        }
    }

    pub fn link_state(&self) -> LinkState {
        match (self.link.state(), self.linked_since_plug) {
            (DeviceLinkState::Linked, _) => LinkState::Up,
            (DeviceLinkState::Handshake, true) => LinkState::Lost,
            (DeviceLinkState::Handshake, false) => LinkState::Connecting,
        }
    }

    pub fn stats(&self) -> UnitStats {
        let link: LinkStats = self.link.stats();
        UnitStats {
            rx_errors: link.frame_errors,
            naks: link.naks_received,
            unknown: link.unknown_messages,
            retransmissions: link.retransmissions,
            dropped: link.events_dropped,
            link_losses: link.link_losses,
            ..self.stats
        }
    }

    pub fn hello(&self) -> Hello {
        self.link.hello()
    }

    /// A frame the decoder refused.
    pub fn frame_error(&mut self, error: FrameError) {
        self.link.frame_error(error);
    }

    pub fn count_tx(&mut self, frames: u64) {
        self.stats.frames_tx += frames;
    }

    /// The cable was pulled or plugged back at `now_host_us`: the host is
    /// gone (SPEC 6.4), HELLO again; queued events stay.
    pub fn host_gone(&mut self, now_host_us: i64) {
        self.link.disconnected(self.clock.device_us(now_host_us));
        self.linked_since_plug = false;
    }

    /// Power off and on again at `now_host_us` with a new `boot_id`: the
    /// clock restarts, unacknowledged events are lost (SPEC 7.3 keeps them
    /// across reconnects, not power-ups), the display is blank until the
    /// host sends again. Counters are kept.
    pub fn power_cycle(&mut self, now_host_us: i64, boot_id: u32) {
        let stats = self.stats;
        *self = UnitModel::new(self.spec.clone(), now_host_us, boot_id);
        self.stats = stats;
    }

    /// Battery low (reported in heartbeats, shown as LOW_POWER).
    pub fn set_low_power(&mut self, low_power: bool) {
        self.link.set_low_power(low_power);
        self.low_power = low_power;
    }

    /// A button pressed at the true host instant `at_host_us`; returns the
    /// event number and the device timestamp it carries.
    pub fn press(&mut self, button: Button, at_host_us: i64) -> Result<(u16, u64), PressRefused> {
        let allowed = self.spec.kind.has_buttons()
            && match button {
                Button::Left | Button::Right => true,
                Button::Arbiter => self.spec.arbiter_button,
                Button::Unknown(_) => false,
            };
        if !allowed {
            return Err(PressRefused::NoSuchButton);
        }
        let device_time_us = self.clock.device_us(at_host_us);
        let event = self
            .link
            .press(button, true, device_time_us)
            .map_err(|_| PressRefused::QueueFull)?;
        self.stats.presses += 1;
        Ok((event, device_time_us))
    }

    /// A valid frame from the host.
    pub fn on_frame(&mut self, frame: &Frame, now_host_us: i64) -> Received {
        self.stats.frames_rx += 1;
        let before: Vec<(u16, u32)> = match frame.message {
            Message::Ack { .. } => self.link.pending().map(|e| (e.event, e.sends)).collect(),
            _ => Vec::new(),
        };
        let command = self.link.receive(frame, self.clock.device_us(now_host_us));
        if self.link.state() == DeviceLinkState::Linked {
            self.linked_since_plug = true;
        }
        let mut received = Received::default();
        if !before.is_empty() {
            let still: Vec<u16> = self.link.pending().map(|e| e.event).collect();
            received.acked = before
                .into_iter()
                .filter(|(e, _)| !still.contains(e))
                .collect();
            self.stats.acks += received.acked.len() as u64;
        }
        match command {
            Some(Command::Display(state)) if self.spec.kind.has_display() => {
                self.display = Some(state);
            }
            Some(Command::Leds(leds)) if self.spec.kind.has_buttons() => self.leds = leds,
            Some(Command::Beep { duration_ms, count }) if self.spec.buzzer => {
                self.beeps += u64::from(count);
                // `count` beeps with equal gaps take twice their length.
                let total_us = i64::from(duration_ms) * 1000 * i64::from(count.max(1)) * 2;
                self.beeping_until_us = now_host_us + total_us;
            }
            _ => {}
        }
        received
    }

    /// Frames due at `now_host_us`.
    pub fn poll_transmit(&mut self, now_host_us: i64, out: &mut Vec<Frame>) {
        let now = self.clock.device_us(now_host_us);
        // The link hands out a bounded number of frames per instant; the
        // cap only guards against a runaway loop.
        for _ in 0..256 {
            match self.link.poll(now) {
                Some(frame) => out.push(frame),
                None => break,
            }
        }
    }

    /// Host instant of the next link deadline.
    pub fn next_deadline_host_us(&self) -> i64 {
        self.clock.host_us(self.link.next_deadline())
    }

    /// What the display shows: the host's state plus the unit's own icons
    /// (LINK_LOST while not linked).
    pub fn shown_display(&self) -> Option<DisplayState> {
        self.display.map(|state| self.link.decorate(&state))
    }

    /// The observable state.
    pub fn snapshot(
        &self,
        plugged: bool,
        pty: Option<PathBuf>,
        faults_active: bool,
    ) -> UnitSnapshot {
        UnitSnapshot {
            name: self.spec.name.clone(),
            kind: self.spec.kind,
            serial: self.spec.serial.clone(),
            displays: self.spec.displays,
            digits: self.spec.digits,
            text_chars: self.spec.text_chars,
            plugged,
            low_power: self.low_power,
            pty,
            link: self.spec.link.clone(),
            link_state: self.link_state(),
            display: self.shown_display(),
            leds: self.leds,
            beeps: self.beeps,
            beeping_until_us: self.beeping_until_us,
            unacked: self.link.pending().count(),
            stats: self.stats(),
            faults_active,
            recent: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses_cli_form_and_refuses_nonsense() {
        let spec: UnitSpec = "front=display,displays=1,serial=CC0042,drift-ppm=120,offset-us=-5"
            .parse()
            .unwrap();
        assert_eq!(spec.name, "front");
        assert_eq!(spec.kind, UnitKind::Display);
        assert_eq!(spec.displays, 1);
        assert_eq!(spec.serial, "CC0042");
        assert_eq!(spec.clock_drift_ppm, 120.0);
        assert_eq!(spec.clock_offset_us, -5);
        let plain: UnitSpec = "buttons".parse().unwrap();
        assert_eq!(
            (plain.name.as_str(), plain.kind),
            ("buttons", UnitKind::Buttons)
        );
        assert!("x=toaster"
            .parse::<UnitSpec>()
            .unwrap_err()
            .contains("toaster"));
        assert!("x=display,displays=3".parse::<UnitSpec>().is_err());
        assert!("x=display,colour=red"
            .parse::<UnitSpec>()
            .unwrap_err()
            .contains("unknown key"));
        assert!("x=display,serial=ABCDEFGHIJKLMNOPQ"
            .parse::<UnitSpec>()
            .is_err());
        assert!("a b=display".parse::<UnitSpec>().is_err());
    }

    #[test]
    fn hello_carries_roles_and_capabilities() {
        let hello = UnitSpec::new("c", UnitKind::Combined).hello(7);
        assert!(hello.roles.contains(Roles::BUTTONS) && hello.roles.contains(Roles::DISPLAY));
        assert_eq!(hello.serial.as_str(), "SIMC");
        assert_eq!(hello.boot_id, 7);
        assert_eq!(hello.capabilities.displays, 2);
        assert!(hello.capabilities.arbiter_button);
        let buttons = UnitSpec::new("b", UnitKind::Buttons).hello(1);
        assert_eq!(buttons.capabilities.displays, 0);
        assert!(!buttons.roles.contains(Roles::DISPLAY));
    }

    #[test]
    fn activity_folds_repeats_and_keeps_the_latest() {
        let mut log = ActivityLog::default();
        log.push(1, "bad frame");
        log.push(2, "bad frame");
        log.push(3, "ACK 1");
        let entries = log.entries();
        assert_eq!(entries.len(), 2);
        assert_eq!((entries[0].count, entries[0].at_us), (2, 2));
        for i in 0..20 {
            log.push(10 + i, format!("line {i}"));
        }
        let entries = log.entries();
        assert_eq!(entries.len(), ActivityLog::KEEP);
        assert_eq!(entries.last().unwrap().text, "line 19");
    }

    #[test]
    fn device_clock_offsets_and_drifts_and_inverts() {
        let clock = DeviceClock {
            origin_host_us: 1_000_000,
            offset_us: 5_000,
            drift_ppm: 100.0,
        };
        assert_eq!(clock.device_us(1_000_000), 5_000);
        assert_eq!(clock.device_us(2_000_000), 5_000 + 1_000_100);
        assert!(clock.host_us(clock.device_us(1_500_000)) >= 1_499_999);
        assert!(clock.host_us(clock.device_us(1_500_000)) <= 1_500_001);
        let early = DeviceClock {
            origin_host_us: 0,
            offset_us: -10,
            drift_ppm: 0.0,
        };
        assert_eq!(early.device_us(0), 0);
    }

    fn welcome() -> Frame {
        Frame {
            seq: 0,
            message: Message::Welcome {
                protocol_version: PROTOCOL_VERSION,
                heartbeat_interval_ms: 100,
                link_timeout_ms: 300,
            },
        }
    }

    #[test]
    fn display_unit_ignores_presses_and_button_unit_ignores_display() {
        let mut display = UnitModel::new(UnitSpec::new("d", UnitKind::Display), 0, 1);
        assert_eq!(
            display.press(Button::Left, 0),
            Err(PressRefused::NoSuchButton)
        );
        let mut buttons = UnitModel::new(UnitSpec::new("b", UnitKind::Buttons), 0, 1);
        assert_eq!(buttons.press(Button::Left, 10), Ok((0, 10)));
        let frame = Frame {
            seq: 0,
            message: Message::Display(DisplayState::default()),
        };
        buttons.on_frame(&frame, 30);
        assert_eq!(buttons.shown_display(), None);
        display.on_frame(&welcome(), 20);
        display.on_frame(&frame, 30);
        assert_eq!(display.shown_display(), Some(DisplayState::default()));
    }

    #[test]
    fn link_states_hello_press_ack_and_loss_through_the_model() {
        let mut unit = UnitModel::new(UnitSpec::new("b", UnitKind::Combined), 1_000, 9);
        let mut out = Vec::new();
        unit.poll_transmit(1_000, &mut out);
        assert!(matches!(out[..], [Frame { message: Message::Hello(h), .. }] if h.boot_id == 9));
        assert_eq!(unit.link_state(), LinkState::Connecting);
        let (event, device_us) = unit.press(Button::Right, 1_500).unwrap();
        assert_eq!(device_us, 500);
        unit.on_frame(&welcome(), 2_000);
        assert_eq!(unit.link_state(), LinkState::Up);
        out.clear();
        unit.poll_transmit(2_000, &mut out);
        let resent = |f: &Frame| matches!(f.message, Message::Button { event: e, device_time_us: 500, .. } if e == event);
        assert!(out.iter().any(resent));
        let ack = Frame {
            seq: 1,
            message: Message::Ack { event },
        };
        assert_eq!(unit.on_frame(&ack, 3_000).acked, vec![(event, 1)]);
        assert_eq!(unit.snapshot(true, None, false).unacked, 0);
        // Silence past the link timeout: lost, and the display says so.
        let display = Frame {
            seq: 2,
            message: Message::Display(DisplayState::default()),
        };
        unit.on_frame(&display, 3_000);
        out.clear();
        unit.poll_transmit(303_000, &mut out);
        assert_eq!(unit.link_state(), LinkState::Lost);
        assert!(unit
            .shown_display()
            .unwrap()
            .left
            .icons
            .contains(Icons::LINK_LOST));
        unit.host_gone(400_000);
        assert_eq!(unit.link_state(), LinkState::Connecting);
        // A power cycle forgets the queue and restarts the clock.
        unit.press(Button::Left, 400_000).unwrap();
        unit.set_low_power(true);
        assert!(unit.snapshot(true, None, false).low_power);
        unit.power_cycle(500_000, 10);
        let snapshot = unit.snapshot(true, None, false);
        assert_eq!(
            (snapshot.unacked, snapshot.low_power, snapshot.display),
            (0, false, None)
        );
        assert_eq!(snapshot.stats.presses, 2);
        assert_eq!(unit.hello().boot_id, 10);
        assert_eq!(unit.clock.device_us(500_000), 0);
    }
}
