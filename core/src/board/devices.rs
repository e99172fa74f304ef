//! A board's view of its device slots: which unit is linked, what each
//! display was last sent, and the record of every button unit's events.
//!
//! The event record is the one place a resent press is recognised (SPEC
//! §7.2): per unit serial, the unit's boot and the next event number it
//! should send, restored from the journal after a daemon restart, so a press
//! committed before a crash and sent again after it is acknowledged, not
//! counted twice.

use std::collections::HashMap;

use chessclock_protocol::host::{EventFilter, EventVerdict};
use chessclock_protocol::{event_before, Capabilities, DisplayState, Hello, Leds};

use crate::display::{ButtonSide, DisplayConfig, DisplayRules, DisplaySide};
use crate::session::DeviceRole;
use crate::views::DeviceView;

/// One configured slot.
#[derive(Clone, Debug)]
pub(super) struct Slot {
    pub role: DeviceRole,
    /// Path or `serial:...` from the config.
    pub name: String,
    pub connected: bool,
    pub serial: Option<String>,
    /// The linked unit's boot (its event numbers are unique within it).
    pub boot_id: u32,
    pub caps: Capabilities,
    pub errors: u64,
}

impl Slot {
    fn new(role: DeviceRole, name: &str) -> Slot {
        Slot {
            role,
            name: name.to_owned(),
            connected: false,
            serial: None,
            boot_id: 0,
            caps: Capabilities::default(),
            errors: 0,
        }
    }

    pub fn view(&self) -> DeviceView {
        DeviceView {
            role: match self.role {
                DeviceRole::Buttons => "buttons".into(),
                DeviceRole::Display(_) => "display".into(),
            },
            name: self.name.clone(),
            connected: self.connected,
            serial: self.serial.clone(),
            errors: self.errors,
        }
    }
}

/// A display slot and what it was last sent.
#[derive(Clone, Debug)]
pub(super) struct DisplaySlot {
    pub slot: Slot,
    /// The side(s) the unit is configured to show.
    pub side: DisplaySide,
    pub rules: DisplayRules,
    pub sent: Option<DisplayState>,
}

/// The record of one button unit's events (by serial).
#[derive(Clone, Copy, Debug, Default)]
struct Ledger {
    filter: EventFilter,
    /// The last event committed (and so acknowledged) in the current boot.
    committed: Option<u16>,
}

/// What to do with a button event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// A new event: apply it; acknowledge it once committed.
    New,
    /// Already committed: acknowledge `ack` again at once (its ACK was lost).
    Repeat { ack: u16 },
    /// Already taken, commit pending: its ACK comes with the commit.
    Pending,
    /// An earlier event is missing: drop it without an ACK (the unit resends
    /// from its oldest).
    Ahead,
}

/// Every slot of a board.
#[derive(Clone, Debug)]
pub(super) struct Devices {
    pub buttons: Option<Slot>,
    pub displays: Vec<DisplaySlot>,
    pub leds_sent: Option<Leds>,
    ledgers: HashMap<String, Ledger>,
}

/// Capabilities assumed for a display before its HELLO arrives.
pub(super) fn default_display_caps() -> Capabilities {
    Capabilities {
        displays: 2,
        digits: 5,
        tenths: true,
        text_chars: 16,
        ..Capabilities::default()
    }
}

impl Devices {
    pub fn new(
        buttons: Option<&str>,
        displays: &[super::DisplaySetup],
        config: &DisplayConfig,
        white_button: ButtonSide,
    ) -> Devices {
        Devices {
            buttons: buttons.map(|name| Slot::new(DeviceRole::Buttons, name)),
            displays: displays
                .iter()
                .enumerate()
                .map(|(index, display)| DisplaySlot {
                    slot: Slot::new(DeviceRole::Display(index), &display.name),
                    side: display.side,
                    rules: DisplayRules::for_side(
                        config,
                        &default_display_caps(),
                        white_button,
                        display.side,
                    ),
                    sent: None,
                })
                .collect(),
            leds_sent: None,
            ledgers: HashMap::new(),
        }
    }

    pub fn slot_mut(&mut self, role: DeviceRole) -> Option<&mut Slot> {
        match role {
            DeviceRole::Buttons => self.buttons.as_mut(),
            DeviceRole::Display(n) => self.displays.get_mut(n).map(|d| &mut d.slot),
        }
    }

    pub fn slot(&self, role: DeviceRole) -> Option<&Slot> {
        match role {
            DeviceRole::Buttons => self.buttons.as_ref(),
            DeviceRole::Display(n) => self.displays.get(n).map(|d| &d.slot),
        }
    }

    pub fn views(&self) -> Vec<DeviceView> {
        self.buttons
            .iter()
            .map(Slot::view)
            .chain(self.displays.iter().map(|d| d.slot.view()))
            .collect()
    }

    /// A unit linked on `role`: remember it; a button unit's HELLO updates
    /// its event record (SPEC §7.2: a new boot restarts the numbering).
    pub fn connected(
        &mut self,
        role: DeviceRole,
        hello: &Hello,
        config: &DisplayConfig,
        white_button: ButtonSide,
    ) {
        let serial = hello.serial.as_str().to_owned();
        if role == DeviceRole::Buttons {
            self.leds_sent = None;
            let ledger = self.ledgers.entry(serial.clone()).or_default();
            if ledger.filter.on_hello(hello) {
                ledger.committed = None;
            }
        }
        if let DeviceRole::Display(n) = role {
            if let Some(display) = self.displays.get_mut(n) {
                display.rules =
                    DisplayRules::for_side(config, &hello.capabilities, white_button, display.side);
                // Restore at once, whatever was sent before.
                display.sent = None;
            }
        }
        if let Some(slot) = self.slot_mut(role) {
            slot.connected = true;
            slot.serial = Some(serial);
            slot.boot_id = hello.boot_id;
            slot.caps = hello.capabilities;
        }
    }

    /// The boot of button unit `serial` as its last HELLO said.
    pub fn boot_of(&self, serial: &str) -> u32 {
        if let Some(slot) = self
            .buttons
            .as_ref()
            .filter(|s| s.serial.as_deref() == Some(serial))
        {
            return slot.boot_id;
        }
        self.ledgers
            .get(serial)
            .and_then(|l| l.filter.state())
            .map_or(0, |(boot, _)| boot)
    }

    /// Classifies button event `event` of unit `serial` (SPEC §7.2).
    pub fn check_event(&mut self, serial: &str, event: u16) -> Verdict {
        let ledger = self.ledgers.entry(serial.to_owned()).or_default();
        match ledger.filter.check(event) {
            EventVerdict::New => Verdict::New,
            EventVerdict::Ahead => Verdict::Ahead,
            EventVerdict::Duplicate => match ledger.committed {
                Some(last) if !event_before(last, event) => Verdict::Repeat { ack: last },
                _ => Verdict::Pending,
            },
        }
    }

    /// Event `event` of unit `serial` is committed and acknowledged.
    pub fn acked(&mut self, serial: &str, event: u16) {
        let ledger = self.ledgers.entry(serial.to_owned()).or_default();
        if ledger
            .committed
            .is_none_or(|last| event_before(last, event))
        {
            ledger.committed = Some(event);
        }
    }

    /// After a restart: event `event` of boot `boot_id` of unit `serial` was
    /// committed before the daemon went down.
    pub fn resume(&mut self, serial: &str, boot_id: u32, event: u16) {
        self.ledgers.insert(
            serial.to_owned(),
            Ledger {
                filter: EventFilter::resume(boot_id, event.wrapping_add(1)),
                committed: Some(event),
            },
        );
    }

    /// Keeps what the units told us when the board's game is replaced.
    pub fn carry_over(&mut self, old: &Devices) {
        self.buttons.clone_from(&old.buttons);
        self.ledgers.clone_from(&old.ledgers);
        for (new, old) in self.displays.iter_mut().zip(&old.displays) {
            new.slot = old.slot.clone();
            new.rules = old.rules.clone();
        }
    }

    /// The `[display]` config or the board's button side changed.
    pub fn reconfigure(&mut self, config: &DisplayConfig, white_button: ButtonSide) {
        for display in &mut self.displays {
            let caps = if display.slot.connected {
                display.slot.caps
            } else {
                default_display_caps()
            };
            display.rules = DisplayRules::for_side(config, &caps, white_button, display.side);
            display.sent = None;
        }
    }
}
