//! What a unit is: its kind (button, display or combined unit), display
//! chip and panels, buzzer and arbiter button, and from that its HELLO
//! capabilities and USB identity (SPEC.md sections 1, 2 and 5.2).
//!
//! The RP2040 firmware picks one [`UnitConfig`] at compile time from its
//! cargo features; the host runner takes any.

use chessclock_protocol::{Capabilities, Hello, Icons, Roles, Text, PROTOCOL_VERSION};

use crate::drivers::{max7219, tm1637};

/// pid.codes, the open-source USB vendor id (SPEC.md section 1).
pub const USB_VENDOR_ID: u16 = 0x1209;
/// The pid.codes **test** PID: for development only. A maker who ships
/// units builds with their own PID (`CHESSCLOCK_USB_PID`, see
/// `hardware/README.md`).
pub const USB_TEST_PRODUCT_ID: u16 = 0x0001;

/// The icons every display of this firmware shows (section 8.2), on LEDs
/// beside the seven-segment modules (`hardware/README.md`): FLAG steady,
/// FIRST_FLAG fast blinking, STAGE_FLAG slow blinking on the panel's flag LED;
/// RUNNING on its running LED; PAUSED, LINK_LOST and LOW_POWER on unit LEDs;
/// NO_BUTTONS blinking the link LED.
pub const DISPLAY_ICONS: Icons = Icons(
    Icons::FLAG.0
        | Icons::FIRST_FLAG.0
        | Icons::STAGE_FLAG.0
        | Icons::RUNNING.0
        | Icons::PAUSED.0
        | Icons::LINK_LOST.0
        | Icons::LOW_POWER.0
        | Icons::NO_BUTTONS.0,
);

/// The three kinds of unit (SPEC.md section 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKind {
    Buttons,
    Display,
    Combined,
}

impl UnitKind {
    pub const fn roles(self) -> Roles {
        match self {
            UnitKind::Buttons => Roles::BUTTONS,
            UnitKind::Display => Roles::DISPLAY,
            UnitKind::Combined => Roles::COMBINED,
        }
    }

    /// The `<role>` of `iSerialNumber` and of the device path.
    pub const fn role_name(self) -> &'static str {
        match self {
            UnitKind::Buttons => "buttons",
            UnitKind::Display => "display",
            UnitKind::Combined => "combined",
        }
    }

    /// `iProduct`, exactly as SPEC.md section 1 has it.
    pub const fn usb_product(self) -> &'static str {
        match self {
            UnitKind::Buttons => "chessclock buttons",
            UnitKind::Display => "chessclock display",
            UnitKind::Combined => "chessclock combined",
        }
    }

    pub const fn has_buttons(self) -> bool {
        !matches!(self, UnitKind::Display)
    }

    pub const fn has_display(self) -> bool {
        !matches!(self, UnitKind::Buttons)
    }
}

/// The seven-segment modules of a display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DisplayChip {
    /// TM1637 four-digit clock modules (colon, no decimal points): `M:SS`
    /// up to `99:59`, no tenths.
    Tm1637,
    /// MAX7219 eight-digit modules (a decimal point per digit): `H:MM:SS`
    /// and tenths.
    Max7219,
}

impl DisplayChip {
    pub const fn digits(self) -> u8 {
        match self {
            DisplayChip::Tm1637 => tm1637::DIGITS as u8,
            DisplayChip::Max7219 => max7219::DIGITS as u8,
        }
    }

    pub const fn brightness_levels(self) -> u8 {
        match self {
            DisplayChip::Tm1637 => tm1637::LEVELS,
            DisplayChip::Max7219 => max7219::LEVELS,
        }
    }

    /// Whether the module can show `.` and a tenths digit.
    pub const fn tenths(self) -> bool {
        matches!(self, DisplayChip::Max7219)
    }
}

/// One unit's build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitConfig {
    pub kind: UnitKind,
    /// Display chip (ignored without the display role).
    pub chip: DisplayChip,
    /// Panels, 1 or 2 (ignored without the display role). A one-panel unit
    /// shows the host's `left` panel.
    pub panels: u8,
    /// A buzzer is fitted (BEEP is obeyed).
    pub buzzer: bool,
    /// An arbiter/pause button is fitted (buttons role).
    pub arbiter_button: bool,
    /// Also report releases (the host uses them for diagnostics only; off,
    /// the queue holds presses only).
    pub report_releases: bool,
}

impl UnitConfig {
    /// A button unit: two levers, an arbiter button, their LEDs.
    pub const fn buttons() -> UnitConfig {
        UnitConfig {
            kind: UnitKind::Buttons,
            chip: DisplayChip::Tm1637,
            panels: 0,
            buzzer: false,
            arbiter_button: true,
            report_releases: false,
        }
    }

    /// A display unit with `panels` modules of `chip` and a buzzer.
    pub const fn display(chip: DisplayChip, panels: u8) -> UnitConfig {
        UnitConfig {
            kind: UnitKind::Display,
            chip,
            panels,
            buzzer: true,
            arbiter_button: false,
            report_releases: false,
        }
    }

    /// Both in one box (a classic chess clock).
    pub const fn combined(chip: DisplayChip, panels: u8) -> UnitConfig {
        UnitConfig {
            kind: UnitKind::Combined,
            chip,
            panels,
            buzzer: true,
            arbiter_button: true,
            report_releases: false,
        }
    }

    /// Panels actually driven: 0 without the display role, else 1 or 2.
    pub const fn panel_count(&self) -> usize {
        if !self.kind.has_display() {
            0
        } else if self.panels >= 2 {
            2
        } else {
            1
        }
    }

    /// What HELLO announces (section 5.2).
    pub fn capabilities(&self) -> Capabilities {
        let display = self.kind.has_display();
        Capabilities {
            displays: self.panel_count() as u8,
            digits: if display { self.chip.digits() } else { 0 },
            tenths: display && self.chip.tenths(),
            icons: if display { DISPLAY_ICONS } else { Icons(0) },
            buzzer: self.buzzer,
            brightness_levels: if display {
                self.chip.brightness_levels()
            } else {
                0
            },
            arbiter_button: self.kind.has_buttons() && self.arbiter_button,
            text_chars: 0,
        }
    }

    /// The HELLO of this unit (`first_unacked_event` is filled in by the
    /// link).
    pub fn hello(&self, identity: &Identity, boot_id: u32) -> Hello {
        Hello {
            protocol_version: PROTOCOL_VERSION,
            roles: self.kind.roles(),
            capabilities: self.capabilities(),
            vendor: identity.vendor,
            model: identity.model,
            serial: identity.serial,
            firmware: identity.firmware,
            boot_id,
            first_unacked_event: 0,
        }
    }
}

/// Who the unit says it is (HELLO strings; the serial is also the USB one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub vendor: Text<16>,
    pub model: Text<16>,
    /// 1 to 16 of `A-Z a-z 0-9` ([`serial_from_unique_id`]).
    pub serial: Text<16>,
    pub firmware: Text<16>,
}

impl Identity {
    /// Strings longer than 16 bytes are cut; a serial that is not 1 to 16
    /// of `A-Z a-z 0-9` is replaced by the characters of it that are (or
    /// `0` if none are).
    pub fn new(vendor: &str, model: &str, serial: &str, firmware: &str) -> Identity {
        Identity {
            vendor: Text::truncated(vendor),
            model: Text::truncated(model),
            serial: clean_serial(serial),
            firmware: Text::truncated(firmware),
        }
    }
}

/// The serial number SPEC.md allows: 1 to 16 characters of `A-Z a-z 0-9`.
pub fn valid_serial(serial: &str) -> bool {
    (1..=16).contains(&serial.len()) && serial.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn clean_serial(serial: &str) -> Text<16> {
    let mut bytes = [0u8; 16];
    let mut len = 0;
    for b in serial.bytes().filter(u8::is_ascii_alphanumeric) {
        if let Some(slot) = bytes.get_mut(len) {
            *slot = b;
            len += 1;
        }
    }
    if len == 0 {
        bytes[0] = b'0';
        len = 1;
    }
    Text::from_utf8(bytes.get(..len).unwrap_or(b"0")).unwrap_or_else(Text::empty)
}

/// The serial from the flash chip's unique id (the RP2040 has none of its
/// own; the W25Q flash of a Pico has a 64-bit one): upper-case hex of its
/// first 8 bytes, 16 characters. Fewer bytes give fewer characters; none
/// give `0`.
pub fn serial_from_unique_id(uid: &[u8]) -> Text<16> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = [0u8; 16];
    let mut len = 0;
    for &b in uid.iter().take(8) {
        for nibble in [b >> 4, b & 0x0F] {
            if let Some(slot) = out.get_mut(len) {
                *slot = HEX[usize::from(nibble)];
                len += 1;
            }
        }
    }
    if len == 0 {
        return clean_serial("");
    }
    Text::from_utf8(out.get(..len).unwrap_or(b"0")).unwrap_or_else(Text::empty)
}

/// `iSerialNumber`: `<role>-<serial>` (at most `combined-` + 16 = 25 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsbSerialNumber {
    bytes: [u8; 25],
    len: usize,
}

impl UsbSerialNumber {
    pub fn new(kind: UnitKind, serial: &Text<16>) -> UsbSerialNumber {
        let mut bytes = [0u8; 25];
        let mut len = 0;
        for &b in kind
            .role_name()
            .as_bytes()
            .iter()
            .chain(b"-")
            .chain(serial.as_bytes())
        {
            if let Some(slot) = bytes.get_mut(len) {
                *slot = b;
                len += 1;
            }
        }
        UsbSerialNumber { bytes, len }
    }

    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.bytes.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

/// The USB product id from a build-time setting: `None` (unset) is the
/// test PID; otherwise 1 to 4 hex digits, optionally after `0x`. `None` for
/// anything else (the firmware turns that into a build error: it runs in a
/// `const`).
pub const fn parse_product_id(setting: Option<&str>) -> Option<u16> {
    let Some(text) = setting else {
        return Some(USB_TEST_PRODUCT_ID);
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    if bytes.len() >= 2 && bytes[0] == b'0' && (bytes[1] == b'x' || bytes[1] == b'X') {
        i = 2;
    }
    if bytes.len() == i || bytes.len() - i > 4 {
        return None;
    }
    let mut value: u16 = 0;
    while i < bytes.len() {
        let digit = match bytes[i] {
            b @ b'0'..=b'9' => b - b'0',
            b @ b'a'..=b'f' => b - b'a' + 10,
            b @ b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        value = value * 16 + digit as u16;
        i += 1;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_from_the_flash_id_is_sixteen_hex_characters() {
        let s = serial_from_unique_id(&[0xE6, 0x60, 0x58, 0x38, 0x83, 0x1F, 0x2A, 0x2F]);
        assert_eq!(s.as_str(), "E6605838831F2A2F");
        assert!(valid_serial(s.as_str()));
        assert_eq!(serial_from_unique_id(&[]).as_str(), "0");
        let usb = UsbSerialNumber::new(UnitKind::Combined, &s);
        assert_eq!(usb.as_str(), "combined-E6605838831F2A2F");
    }

    #[test]
    fn identity_cleans_a_bad_serial() {
        let id = Identity::new("a vendor name longer than sixteen", "m", "BU-00 42", "1");
        assert_eq!(id.serial.as_str(), "BU0042");
        assert_eq!(id.vendor.len(), 16);
    }

    #[test]
    fn product_id_setting() {
        assert_eq!(parse_product_id(None), Some(0x0001));
        assert_eq!(parse_product_id(Some("0x4c2A")), Some(0x4C2A));
        assert_eq!(parse_product_id(Some("1234")), Some(0x1234));
        assert_eq!(parse_product_id(Some("0x12345")), None);
        assert_eq!(parse_product_id(Some("0x")), None);
        assert_eq!(parse_product_id(Some("12g4")), None);
    }

    #[test]
    fn capabilities_follow_the_kind() {
        let b = UnitConfig::buttons().capabilities();
        assert_eq!(
            (b.displays, b.digits, b.icons, b.brightness_levels),
            (0, 0, Icons(0), 0)
        );
        assert!(b.arbiter_button);
        let d = UnitConfig::display(DisplayChip::Max7219, 1).capabilities();
        assert_eq!((d.displays, d.digits, d.brightness_levels), (1, 8, 16));
        assert!(d.tenths && d.buzzer && !d.arbiter_button);
        let c = UnitConfig::combined(DisplayChip::Tm1637, 2).capabilities();
        assert_eq!((c.displays, c.digits, c.tenths), (2, 4, false));
    }
}
