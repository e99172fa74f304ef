//! One unit's logic between its USB serial port and its hardware, built
//! around the protocol crate's [`DeviceLink`]: bytes and debounced button
//! events in, bytes and [`Outputs`] (what the panels, LEDs and buzzer show)
//! out. No clock and no I/O: every call takes the device instant (µs since
//! power-up).
//!
//! What it adds to the link:
//! * the byte stream: an [`Accumulator`] for partial USB reads (refused
//!   frames are counted by the link and dropped, never fatal); frames are
//!   encoded as they are handed to the transmitter, and a `0x00` goes before
//!   the first frame after power-up, after every (re)connection and after a
//!   frame the transmitter could not finish (SPEC.md 4.3);
//! * the host's commands: the latest DISPLAY, LEDS and BEEP (latest wins),
//!   kept across link losses;
//! * [`Outputs`]: the panels rendered right-aligned ([`crate::render`]) with
//!   the device's own LINK_LOST and LOW_POWER ORed in, the host's
//!   NO_BUTTONS (the board's button unit is gone) apart, only the icons the
//!   unit announced, a one-panel unit showing the `left` panel, the buzzer
//!   pattern and blinking flags; [`Unit::next_deadline`] says when they or
//!   the link next change by time alone.

use chessclock_protocol::device::{Command, DeviceLink};
use chessclock_protocol::{
    encode, Accumulator, DisplayState, Feed, Icons, Leds, Panel, MAX_WIRE_FRAME,
};

use crate::beep::Beeper;
use crate::config::{Identity, UnitConfig, DISPLAY_ICONS};
use crate::debounce::ButtonEvent;
use crate::render::{render, PanelImage};

/// Unacknowledged button events kept (SPEC.md 7.3: at least 16, 32
/// recommended).
pub const QUEUE: usize = 32;

/// Bytes [`Unit::transmit`] may write: a frame and the `0x00` before it.
pub const TX_BUFFER: usize = MAX_WIRE_FRAME + 1;

/// Half-period of a FIRST_FLAG flag LED (fast blink, 4 Hz).
pub const FIRST_FLAG_BLINK_US: u64 = 125_000;
/// Half-period of a STAGE_FLAG flag LED (slow blink, 1 Hz).
pub const STAGE_FLAG_BLINK_US: u64 = 500_000;

/// Half-period of the link LED while the host shows NO_BUTTONS (1 Hz).
pub const NO_BUTTONS_BLINK_US: u64 = 500_000;

/// Everything the unit's hardware shows at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// `panels[..panel_count]` are shown; `panels[0]` is the left panel.
    pub panels: [PanelImage; 2],
    pub panel_count: usize,
    /// Chip brightness level, `0 ..= levels - 1`.
    pub brightness: u8,
    /// Flag LED of each panel (blinking for FIRST_FLAG and STAGE_FLAG).
    pub flag: [bool; 2],
    /// Running LED of each panel.
    pub running: [bool; 2],
    pub paused: bool,
    /// No link to the host (set by the device itself; a host that sends
    /// LINK_LOST on a panel is ORed in, though SPEC.md 8.2 says it never
    /// does).
    pub link_lost: bool,
    /// The host shows NO_BUTTONS on a panel: this display is linked but the
    /// board's button unit is not (SPEC.md 8.2).
    pub no_buttons: bool,
    /// The unit's link LED: steady while [`Self::link_lost`], blinking at
    /// [`NO_BUTTONS_BLINK_US`] while only [`Self::no_buttons`], so one LED
    /// tells which end of the board is cut off.
    pub link_led: bool,
    pub low_power: bool,
    /// The button unit's LEDs (LEDS; off without the buttons role).
    pub leds: Leds,
    pub buzzer: bool,
}

/// What was refused about a button event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// This unit has no buttons, or not that one (no arbiter button).
    NoSuchButton,
    /// A release, and releases are not reported.
    Release,
    /// The queue of unacknowledged events is full (counted by the link).
    QueueFull,
}

/// One unit.
#[derive(Debug)]
pub struct Unit {
    config: UnitConfig,
    link: DeviceLink<QUEUE>,
    accumulator: Accumulator,
    display: DisplayState,
    leds: Leds,
    beeper: Beeper,
    muted: bool,
    low_power: bool,
    resync: bool,
}

impl Unit {
    /// A unit that powered up at `now_us` with a fresh `boot_id`.
    pub fn new(config: UnitConfig, identity: &Identity, boot_id: u32, now_us: u64) -> Unit {
        Unit {
            config,
            link: DeviceLink::new(config.hello(identity, boot_id), now_us),
            accumulator: Accumulator::new(),
            display: DisplayState::default(),
            leds: Leds::default(),
            beeper: Beeper::default(),
            muted: false,
            low_power: false,
            resync: true,
        }
    }

    pub fn config(&self) -> &UnitConfig {
        &self.config
    }

    pub fn link(&self) -> &DeviceLink<QUEUE> {
        &self.link
    }

    /// The latest DISPLAY from the host (as sent, without the device's own
    /// icons).
    pub fn display_state(&self) -> &DisplayState {
        &self.display
    }

    /// The host opened the way (USB configured): HELLO at once, after a
    /// `0x00` that ends any partial frame the host holds.
    pub fn host_connected(&mut self, now_us: u64) {
        self.link.disconnected(now_us);
        self.accumulator.clear();
        self.resync = true;
    }

    /// The host went away (USB reset, suspend, unplug): back to HELLO;
    /// queued events stay.
    pub fn host_gone(&mut self, now_us: u64) {
        self.link.disconnected(now_us);
        self.accumulator.clear();
        self.resync = true;
    }

    /// The transmitter dropped part of a frame: the next one starts with a
    /// `0x00`, so the host loses only the broken one.
    pub fn transmit_failed(&mut self) {
        self.resync = true;
    }

    /// Battery state, reported in heartbeats and shown as LOW_POWER.
    pub fn set_low_power(&mut self, low: bool) {
        self.link.set_low_power(low);
        self.low_power = low;
    }

    /// The alarm switch (FIDE: the audible alarm can be switched off).
    pub fn set_muted(&mut self, muted: bool) {
        self.muted = muted;
    }

    /// A debounced button event (stamped at its first edge). Returns the
    /// event number it was given.
    pub fn button(&mut self, event: ButtonEvent) -> Result<u16, Refused> {
        if !self.config.kind.has_buttons() {
            return Err(Refused::NoSuchButton);
        }
        if event.button == chessclock_protocol::Button::Arbiter && !self.config.arbiter_button {
            return Err(Refused::NoSuchButton);
        }
        if !event.pressed && !self.config.report_releases {
            return Err(Refused::Release);
        }
        self.link
            .press(event.button, event.pressed, event.at_us)
            .map_err(|_| Refused::QueueFull)
    }

    /// Bytes read from the host at `now_us`, any split.
    pub fn receive(&mut self, mut bytes: &[u8], now_us: u64) {
        loop {
            match self.accumulator.feed(bytes) {
                Feed::NeedMore => return,
                Feed::Error(error, rest) => {
                    self.link.frame_error(error);
                    bytes = rest;
                }
                Feed::Frame(frame, rest) => {
                    if let Some(command) = self.link.receive(&frame, now_us) {
                        self.obey(command, now_us);
                    }
                    bytes = rest;
                }
            }
        }
    }

    fn obey(&mut self, command: Command, now_us: u64) {
        match command {
            Command::Display(d) => {
                if self.config.kind.has_display() {
                    self.display = d;
                }
            }
            Command::Leds(l) => {
                if self.config.kind.has_buttons() {
                    self.leds = l;
                }
            }
            Command::Beep { duration_ms, count } => {
                if self.config.buzzer {
                    self.beeper.start(duration_ms, count, now_us);
                }
            }
        }
    }

    /// The next bytes to hand to the transmitter at `now_us` (call until
    /// `None`; each is one frame, maybe after a `0x00`). Call it right before
    /// writing: a heartbeat carries this instant.
    pub fn transmit(&mut self, now_us: u64, out: &mut [u8; TX_BUFFER]) -> Option<usize> {
        let frame = self.link.poll(now_us)?;
        let start = usize::from(self.resync);
        out[0] = 0;
        let (_, body) = out.split_at_mut(start);
        match encode(&frame, body) {
            Ok(n) => {
                self.resync = false;
                Some(start + n)
            }
            // Cannot happen with a TX_BUFFER; if it did, the frame is lost
            // like one on a noisy line (events are resent).
            Err(_) => None,
        }
    }

    /// What the hardware shows at `now_us`.
    pub fn outputs(&self, now_us: u64) -> Outputs {
        let shown = self.link.decorate(&self.display);
        let count = self.config.panel_count();
        let digits = usize::from(self.config.chip.digits());
        let panels: [&Panel; 2] = [&shown.left, &shown.right];
        let mut out = Outputs {
            panels: [PanelImage::blank(digits); 2],
            panel_count: count,
            brightness: 0,
            flag: [false; 2],
            running: [false; 2],
            paused: false,
            link_lost: self.link.link_lost(),
            no_buttons: false,
            link_led: false,
            low_power: self.low_power,
            leds: if self.config.kind.has_buttons() {
                self.leds
            } else {
                Leds::default()
            },
            buzzer: self.beeper.is_on(now_us) && !self.muted,
        };
        for i in 0..count {
            let Some(panel) = panels.get(i) else { continue };
            let icons = Icons(panel.icons.0 & DISPLAY_ICONS.0);
            if let Some(image) = out.panels.get_mut(i) {
                *image = render(panel.time.as_str(), digits);
            }
            out.flag[i] = flag_led(icons, now_us);
            out.running[i] = icons.contains(Icons::RUNNING);
            out.paused |= icons.contains(Icons::PAUSED);
            // The panels' LINK_LOST and LOW_POWER are the device's own ORed
            // with whatever the host sent: one unit LED each.
            out.link_lost |= icons.contains(Icons::LINK_LOST);
            out.low_power |= icons.contains(Icons::LOW_POWER);
            out.no_buttons |= icons.contains(Icons::NO_BUTTONS);
        }
        out.link_led = out.link_lost || (out.no_buttons && (now_us / NO_BUTTONS_BLINK_US) % 2 == 0);
        let levels = self.config.chip.brightness_levels();
        out.brightness = shown.brightness.min(levels.saturating_sub(1));
        out
    }

    /// The device instant at which the link or the outputs next change by
    /// time alone (at or before `now_us`: something is due now).
    pub fn next_deadline(&self, now_us: u64) -> u64 {
        let mut t = self.link.next_deadline();
        if let Some(b) = self.beeper.next_change(now_us) {
            t = t.min(b);
        }
        let panels: [&Panel; 2] = [&self.display.left, &self.display.right];
        for panel in panels.iter().take(self.config.panel_count()) {
            let icons = Icons(panel.icons.0 & DISPLAY_ICONS.0);
            let no_buttons = icons
                .contains(Icons::NO_BUTTONS)
                .then_some(NO_BUTTONS_BLINK_US);
            for half in [blink_half_period(icons), no_buttons].into_iter().flatten() {
                t = t.min((now_us / half + 1).saturating_mul(half));
            }
        }
        t
    }
}

fn blink_half_period(icons: Icons) -> Option<u64> {
    if icons.contains(Icons::FIRST_FLAG) {
        Some(FIRST_FLAG_BLINK_US)
    } else if icons.contains(Icons::FLAG) {
        None
    } else if icons.contains(Icons::STAGE_FLAG) {
        Some(STAGE_FLAG_BLINK_US)
    } else {
        None
    }
}

fn flag_led(icons: Icons, now_us: u64) -> bool {
    match blink_half_period(icons) {
        Some(half) => (now_us / half) % 2 == 0,
        None => icons.contains(Icons::FLAG),
    }
}
