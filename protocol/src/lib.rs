//! `chessclock-protocol`: the wire protocol between chessclockd (the host) and
//! USB press-button units and LED display units. The normative description is
//! `SPEC.md` beside this crate; this crate is its reference implementation,
//! usable by device firmware too (`no_std`, no allocation, no `unsafe`).
//!
//! # What is here
//! - the typed messages of protocol version 1 ([`Message`], [`Frame`]) and
//!   their wire form: [`encode`] into a caller buffer, [`decode`] one frame,
//!   and the [`Accumulator`] that turns partial serial reads into frames;
//! - [`device::DeviceLink`]: the device side of the link as a pure state
//!   machine (HELLO, heartbeats, reliable button events, link-lost), which
//!   firmware and the simulator drive with their own clock;
//! - [`host::EventFilter`]: the host's duplicate filter for button events;
//! - [`timesync::ClockSync`]: the host's mapping of device timestamps to its
//!   monotonic clock.
//!
//! # Panic and validation contract
//! Nothing in this crate panics on any input: not on any byte sequence given
//! to [`decode`] or [`Accumulator::feed`], not on any [`Frame`] given to
//! [`encode`] or to the state machines, not on any sequence of instants.
//! Every length is checked before the bytes it covers are read (reads go
//! through bounds-checked accessors that return [`FrameError::Malformed`]);
//! integer arithmetic on instants saturates or wraps where the protocol says
//! numbers wrap (sequence and event numbers). Bad input is reported as a
//! value ([`FrameError`], [`BufferTooSmall`], [`Message::Unknown`]), never by
//! panicking, and is never fatal to a session: count it and go on.
//! The fuzz target in `fuzz/` and the proptests check this.
//!
//! # Example: a round trip
//! ```
//! use chessclock_protocol::{decode, encode, Accumulator, Button, Feed, Frame, Message, MAX_WIRE_FRAME};
//!
//! let press = Frame {
//!     seq: 7,
//!     message: Message::Button { event: 42, button: Button::Left, pressed: true, device_time_us: 1_000_000 },
//! };
//! let mut wire = [0u8; MAX_WIRE_FRAME];
//! let n = encode(&press, &mut wire).unwrap();
//! assert_eq!(wire[n - 1], 0x00); // the delimiter
//! assert_eq!(decode(&wire[..n - 1]), Ok(press));
//!
//! // The same bytes arriving in two partial reads.
//! let mut acc = Accumulator::new();
//! assert_eq!(acc.feed(&wire[..5]), Feed::NeedMore);
//! assert_eq!(acc.feed(&wire[5..n]), Feed::Frame(press, &[]));
//! ```

#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]

pub mod device;
pub mod host;
pub mod timesync;
mod wire;

use wire::{Reader, Writer};

/// Protocol version spoken by this crate.
pub const PROTOCOL_VERSION: u8 = 1;

/// Largest decoded frame (message id + sequence + payload + CRC), bytes.
pub const MAX_FRAME: usize = 128;

/// Largest encoded frame on the wire, COBS overhead and delimiter included.
pub const MAX_WIRE_FRAME: usize = MAX_FRAME + MAX_FRAME / 254 + 2;

/// Largest COBS-encoded frame without its delimiter: longer is Oversize.
pub const MAX_COBS_FRAME: usize = cobs::max_encoding_length(MAX_FRAME);

/// Bytes of a frame that are not payload: id, sequence, CRC-32.
pub const FRAME_OVERHEAD: usize = 2 + CRC_LEN;

/// Largest payload of one frame.
pub const MAX_PAYLOAD: usize = MAX_FRAME - FRAME_OVERHEAD;

/// Bytes of the CRC at the end of every frame.
pub const CRC_LEN: usize = 4;

/// The frame check: CRC-32/ISO-HDLC (poly 0x04C11DB7, init 0xFFFFFFFF,
/// reflected in and out, xorout 0xFFFFFFFF; check value over `"123456789"` is
/// 0xCBF43926), sent little-endian after the bytes it covers.
pub const CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// Message ids of protocol version 1 (SPEC.md, "Message ids").
pub mod ids {
    /// Device → host: introduction.
    pub const HELLO: u8 = 0x01;
    /// Device → host: a button event (reliable).
    pub const BUTTON: u8 = 0x02;
    /// Device → host: heartbeat with the device clock.
    pub const DEVICE_HEARTBEAT: u8 = 0x03;
    /// Both ways: a refused frame.
    pub const NAK: u8 = 0x40;
    /// Host → device: the session is up.
    pub const WELCOME: u8 = 0x81;
    /// Host → device: acknowledges button events (cumulative).
    pub const ACK: u8 = 0x82;
    /// Host → device: the whole display state.
    pub const DISPLAY: u8 = 0x83;
    /// Host → device: button-unit LEDs.
    pub const LEDS: u8 = 0x84;
    /// Host → device: sound the buzzer.
    pub const BEEP: u8 = 0x85;
    /// Host → device: heartbeat.
    pub const HOST_HEARTBEAT: u8 = 0x86;
}

/// Default interval between heartbeats, both ways (WELCOME may change it).
pub const DEFAULT_HEARTBEAT_INTERVAL_MS: u16 = 250;
/// Default time without a valid frame after which a device shows LINK_LOST.
pub const DEFAULT_LINK_TIMEOUT_MS: u16 = 1000;
/// Heartbeat intervals without a valid frame after which the host declares a
/// device lost.
pub const HOST_MISSED_HEARTBEATS: u32 = 4;
/// Interval between HELLOs while a device waits for WELCOME.
pub const HELLO_INTERVAL_MS: u16 = 500;
/// Interval at which a device resends unacknowledged button events.
pub const RETRANSMIT_INTERVAL_MS: u16 = 100;

/// A short fixed-capacity ASCII/UTF-8 string (no allocation).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> Text<N> {
    /// Empty text.
    pub const fn empty() -> Self {
        Text {
            len: 0,
            bytes: [0; N],
        }
    }

    /// `None` when `s` is longer than `N` bytes.
    pub fn new(s: &str) -> Option<Self> {
        Self::from_utf8(s.as_bytes())
    }

    /// `None` when `bytes` is longer than `N` bytes or not UTF-8.
    pub fn from_utf8(src: &[u8]) -> Option<Self> {
        if src.len() > N || src.len() > u8::MAX as usize || core::str::from_utf8(src).is_err() {
            return None;
        }
        let mut bytes = [0; N];
        bytes.get_mut(..src.len())?.copy_from_slice(src);
        Some(Text {
            len: src.len() as u8,
            bytes,
        })
    }

    /// `s` cut to at most `N` bytes (at a character boundary).
    pub fn truncated(s: &str) -> Self {
        let mut end = s.len().min(N);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        Self::new(s.get(..end).unwrap_or("")).unwrap_or_else(Self::empty)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..(self.len as usize).min(N)]
    }

    /// The text, or `""` when the bytes are not UTF-8.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<const N: usize> core::fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> core::fmt::Display for Text<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<const N: usize> Default for Text<N> {
    fn default() -> Self {
        Self::empty()
    }
}

/// Device roles, a bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Roles(pub u8);

impl Roles {
    pub const BUTTONS: Roles = Roles(0x01);
    pub const DISPLAY: Roles = Roles(0x02);
    /// A combined unit: buttons and display in one device.
    pub const COMBINED: Roles = Roles(0x03);
    pub fn contains(self, other: Roles) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }
}

/// What a device can do (from HELLO).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// Number of time displays (1 or 2) on a display unit.
    pub displays: u8,
    /// Digits per time display (e.g. 5 for `H:MM:SS`, 4 for `MM:SS`).
    pub digits: u8,
    /// Can show tenths of a second.
    pub tenths: bool,
    /// Icons the display can show ([`Icons`] bits).
    pub icons: Icons,
    /// Has a buzzer.
    pub buzzer: bool,
    /// Brightness levels (0 = fixed brightness).
    pub brightness_levels: u8,
    /// Button unit has an arbiter/pause button.
    pub arbiter_button: bool,
    /// Characters of short text the display can show (0 = none).
    pub text_chars: u8,
}

/// Icon bits of a time display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Icons(pub u16);

impl Icons {
    /// This side's flag has fallen (last stage: lost on time unless Art. 6.9).
    pub const FLAG: Icons = Icons(0x0001);
    /// This side's flag fell first (FIDE: show which flag fell first).
    pub const FIRST_FLAG: Icons = Icons(0x0002);
    /// This side's flag fell in a non-last stage.
    pub const STAGE_FLAG: Icons = Icons(0x0004);
    /// This side's clock is running.
    pub const RUNNING: Icons = Icons(0x0008);
    /// The clock is paused.
    pub const PAUSED: Icons = Icons(0x0010);
    /// Link to the host lost (the device sets it itself; the host never
    /// sends it).
    pub const LINK_LOST: Icons = Icons(0x0020);
    /// Low power (the device sets it itself; the host never sends it).
    pub const LOW_POWER: Icons = Icons(0x0040);
    /// Increment/delay active for this side.
    pub const BONUS: Icons = Icons(0x0080);
    /// The arbiter has been called.
    pub const ARBITER: Icons = Icons(0x0100);
    /// The board's button unit has no link to the host ("partner lost"):
    /// set by the host (SPEC.md 8.2, added in 1.1). The display's own link
    /// is fine, unlike [`Icons::LINK_LOST`].
    pub const NO_BUTTONS: Icons = Icons(0x0200);
    /// The icons only a device sets; a host sends them as 0.
    pub const DEVICE_OWN: Icons = Icons(0x0060);
    /// Every icon bit defined by version 1 (document version 1.1).
    pub const ALL: Icons = Icons(0x03FF);

    pub fn contains(self, other: Icons) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn union(self, other: Icons) -> Icons {
        Icons(self.0 | other.0)
    }

    /// These icons without those of `other`.
    pub fn without(self, other: Icons) -> Icons {
        Icons(self.0 & !other.0)
    }
}

/// Which physical button (seen from the arbiter facing the unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Button {
    Left,
    Right,
    /// Arbiter / pause button (Art. 6.12b).
    Arbiter,
    /// A button code this version does not define (never 0, 1 or 2).
    Unknown(u8),
}

impl Button {
    /// The wire code (SPEC.md, BUTTON).
    pub fn code(self) -> u8 {
        match self {
            Button::Left => 0,
            Button::Right => 1,
            Button::Arbiter => 2,
            Button::Unknown(c) => c,
        }
    }

    pub fn from_code(code: u8) -> Button {
        match code {
            0 => Button::Left,
            1 => Button::Right,
            2 => Button::Arbiter,
            c => Button::Unknown(c),
        }
    }
}

/// One time display's content, rendered by the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Panel {
    /// The characters to show: digits, `:`, `.`, space, `-` (e.g. `1:29:59`,
    /// `4:59`, `0:19.7`).
    pub time: Text<10>,
    pub icons: Icons,
    /// Moves completed by this side (0xFFFF: none shown).
    pub moves: u16,
    /// 1-based stage (0: none shown).
    pub stage: u8,
}

/// A display unit's whole state: every update carries all of it (latest wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DisplayState {
    pub left: Panel,
    pub right: Panel,
    /// Short text (e.g. `PAUSE`, `ARBITER`), empty for none.
    pub text: Text<16>,
    pub brightness: u8,
}

/// Button-unit LED state (latest wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Leds {
    pub left: bool,
    pub right: bool,
    pub arbiter: bool,
}

/// HELLO: a device introduces itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Hello {
    pub protocol_version: u8,
    pub roles: Roles,
    pub capabilities: Capabilities,
    pub vendor: Text<16>,
    pub model: Text<16>,
    /// Serial number: 1 to 16 of `A-Z a-z 0-9`; equal to the serial part of
    /// the USB iSerial string (SPEC.md, "USB identity").
    pub serial: Text<16>,
    pub firmware: Text<16>,
    /// Changes at every power-up or reset of the device (random or a
    /// persistent counter): event numbers are only unique within one boot.
    pub boot_id: u32,
    /// The oldest unacknowledged event number (the next one to be assigned
    /// when none is waiting); a host with no record of this boot expects it.
    pub first_unacked_event: u16,
}

/// Longest HELLO `serial` (SPEC.md 5.2).
pub const MAX_SERIAL: usize = 16;

/// Whether `serial` is a valid HELLO serial number: 1 to [`MAX_SERIAL`]
/// characters from `A-Z a-z 0-9` (SPEC.md 5.2). A host refuses a HELLO with
/// any other serial with NAK Malformed (SPEC.md 6.1).
pub fn serial_is_valid(serial: &str) -> bool {
    (1..=MAX_SERIAL).contains(&serial.len()) && serial.bytes().all(|b| b.is_ascii_alphanumeric())
}

impl Hello {
    /// [`serial_is_valid`] of this HELLO's serial.
    pub fn has_valid_serial(&self) -> bool {
        serial_is_valid(self.serial.as_str())
    }
}

/// NAK reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NakCode {
    BadCrc,
    Oversize,
    UnknownMessage,
    Malformed,
    UnsupportedVersion,
    Busy,
    /// A code this version does not define (never 1 to 6).
    Unknown(u8),
}

impl NakCode {
    /// The wire code (SPEC.md, NAK).
    pub fn code(self) -> u8 {
        match self {
            NakCode::BadCrc => 1,
            NakCode::Oversize => 2,
            NakCode::UnknownMessage => 3,
            NakCode::Malformed => 4,
            NakCode::UnsupportedVersion => 5,
            NakCode::Busy => 6,
            NakCode::Unknown(c) => c,
        }
    }

    pub fn from_code(code: u8) -> NakCode {
        match code {
            1 => NakCode::BadCrc,
            2 => NakCode::Oversize,
            3 => NakCode::UnknownMessage,
            4 => NakCode::Malformed,
            5 => NakCode::UnsupportedVersion,
            6 => NakCode::Busy,
            c => NakCode::Unknown(c),
        }
    }
}

/// Every message of protocol version 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    // device -> host
    Hello(Hello),
    /// A button event: `event` is the reliable event sequence number, kept
    /// until acknowledged; `device_time_us` the device clock at the press.
    Button {
        event: u16,
        button: Button,
        pressed: bool,
        device_time_us: u64,
    },
    /// Device heartbeat, carrying the device clock (for time mapping).
    DeviceHeartbeat {
        device_time_us: u64,
        low_power: bool,
    },
    // host -> device
    /// Answer to HELLO: the session is up.
    Welcome {
        protocol_version: u8,
        heartbeat_interval_ms: u16,
        link_timeout_ms: u16,
    },
    /// Acknowledges button event `event` (and, cumulatively, every earlier
    /// one still queued).
    Ack {
        event: u16,
    },
    Display(DisplayState),
    Leds(Leds),
    Beep {
        duration_ms: u16,
        count: u8,
    },
    HostHeartbeat,
    // both ways
    Nak {
        code: NakCode,
        /// The sequence number of the refused frame.
        seq: u8,
    },
    /// A message id this version does not know (ignored, counted). Decoding
    /// gives it for any id not in [`ids`]; encoding it sends an empty payload
    /// with that id (for tests of receivers).
    Unknown {
        id: u8,
    },
}

impl Message {
    /// The message id on the wire.
    pub fn id(&self) -> u8 {
        match self {
            Message::Hello(_) => ids::HELLO,
            Message::Button { .. } => ids::BUTTON,
            Message::DeviceHeartbeat { .. } => ids::DEVICE_HEARTBEAT,
            Message::Welcome { .. } => ids::WELCOME,
            Message::Ack { .. } => ids::ACK,
            Message::Display(_) => ids::DISPLAY,
            Message::Leds(_) => ids::LEDS,
            Message::Beep { .. } => ids::BEEP,
            Message::HostHeartbeat => ids::HOST_HEARTBEAT,
            Message::Nak { .. } => ids::NAK,
            Message::Unknown { id } => *id,
        }
    }

    /// A short name for logs (`"HELLO"`, `"BUTTON"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Message::Hello(_) => "HELLO",
            Message::Button { .. } => "BUTTON",
            Message::DeviceHeartbeat { .. } => "DEVICE_HEARTBEAT",
            Message::Welcome { .. } => "WELCOME",
            Message::Ack { .. } => "ACK",
            Message::Display(_) => "DISPLAY",
            Message::Leds(_) => "LEDS",
            Message::Beep { .. } => "BEEP",
            Message::HostHeartbeat => "HOST_HEARTBEAT",
            Message::Nak { .. } => "NAK",
            Message::Unknown { .. } => "UNKNOWN",
        }
    }
}

/// A decoded frame: a message with its frame sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub seq: u8,
    pub message: Message,
}

/// Why a frame was refused. Never fatal: count it and go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Not valid COBS.
    Cobs,
    BadCrc,
    /// Longer than [`MAX_FRAME`].
    Oversize,
    /// Too short or a payload that does not fit its message id.
    Malformed,
}

impl FrameError {
    /// The NAK code that reports this error.
    pub fn nak_code(self) -> NakCode {
        match self {
            FrameError::Cobs | FrameError::BadCrc => NakCode::BadCrc,
            FrameError::Malformed => NakCode::Malformed,
            FrameError::Oversize => NakCode::Oversize,
        }
    }
}

impl core::fmt::Display for FrameError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            FrameError::Cobs => "frame is not valid COBS",
            FrameError::BadCrc => "frame CRC-32 does not match",
            FrameError::Oversize => "frame longer than 128 decoded bytes",
            FrameError::Malformed => "frame too short or payload does not fit its message id",
        })
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FrameError {}

/// Encoding failed: the output buffer is too small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferTooSmall;

impl core::fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("output buffer too small for the encoded frame")
    }
}

#[cfg(feature = "std")]
impl std::error::Error for BufferTooSmall {}

/// Writes the decoded form of `frame` (id, seq, payload, CRC) into `out`;
/// returns its length. This is what the CRC and COBS apply to.
pub fn encode_raw(frame: &Frame, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
    let mut w = Writer::new(out);
    w.u8(frame.message.id())?;
    w.u8(frame.seq)?;
    write_payload(&frame.message, &mut w)?;
    let crc = CRC.checksum(w.written());
    w.bytes(&crc.to_le_bytes())?;
    Ok(w.pos())
}

/// Encodes `frame` for the wire (COBS, with its CRC and the trailing 0x00
/// delimiter) into `out`; returns the number of bytes written. An `out` of
/// [`MAX_WIRE_FRAME`] bytes is always enough.
pub fn encode(frame: &Frame, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
    let mut raw = [0u8; MAX_FRAME];
    let raw_len = encode_raw(frame, &mut raw)?;
    let body = raw.get(..raw_len).ok_or(BufferTooSmall)?;
    let n = cobs::try_encode(body, out).map_err(|_| BufferTooSmall)?;
    *out.get_mut(n).ok_or(BufferTooSmall)? = 0x00;
    Ok(n + 1)
}

/// Decodes one COBS-encoded frame (without its 0x00 delimiter).
pub fn decode(wire: &[u8]) -> Result<Frame, FrameError> {
    if wire.len() > MAX_COBS_FRAME {
        return Err(FrameError::Oversize);
    }
    if wire.is_empty() || wire.contains(&0) {
        return Err(FrameError::Cobs);
    }
    let mut raw = [0u8; MAX_FRAME];
    let report = cobs::decode(wire, &mut raw).map_err(|e| match e {
        cobs::DecodeError::TargetBufTooSmall => FrameError::Oversize,
        _ => FrameError::Cobs,
    })?;
    let raw = raw.get(..report.frame_size()).ok_or(FrameError::Oversize)?;
    decode_raw(raw)
}

/// The message id and frame sequence number of a COBS-encoded frame
/// (without its delimiter) whose CRC is valid, even when its payload is
/// malformed: what a NAK of a malformed frame names (SPEC.md 10.2). `None`
/// when the frame is not valid COBS, too short or fails its CRC.
pub fn frame_header(wire: &[u8]) -> Option<(u8, u8)> {
    if wire.is_empty() || wire.len() > MAX_COBS_FRAME || wire.contains(&0) {
        return None;
    }
    let mut raw = [0u8; MAX_FRAME];
    let report = cobs::decode(wire, &mut raw).ok()?;
    let raw = raw.get(..report.frame_size())?;
    if raw.len() < FRAME_OVERHEAD {
        return None;
    }
    let (body, crc_bytes) = raw.split_at(raw.len() - CRC_LEN);
    let mut crc = [0u8; CRC_LEN];
    crc.copy_from_slice(crc_bytes);
    if CRC.checksum(body) != u32::from_le_bytes(crc) {
        return None;
    }
    Some((*body.first()?, *body.get(1)?))
}

/// Decodes a frame already stripped of COBS (id, seq, payload, CRC).
pub fn decode_raw(raw: &[u8]) -> Result<Frame, FrameError> {
    if raw.len() > MAX_FRAME {
        return Err(FrameError::Oversize);
    }
    if raw.len() < FRAME_OVERHEAD {
        return Err(FrameError::Malformed);
    }
    let (body, crc_bytes) = raw.split_at(raw.len() - CRC_LEN);
    let mut crc = [0u8; CRC_LEN];
    crc.copy_from_slice(crc_bytes);
    if CRC.checksum(body) != u32::from_le_bytes(crc) {
        return Err(FrameError::BadCrc);
    }
    let mut r = Reader::new(body);
    let id = r.u8()?;
    let seq = r.u8()?;
    let message = read_payload(id, &mut r)?;
    Ok(Frame { seq, message })
}

fn write_panel(p: &Panel, w: &mut Writer<'_>) -> Result<(), BufferTooSmall> {
    w.text(&p.time)?;
    w.u16(p.icons.0)?;
    w.u16(p.moves)?;
    w.u8(p.stage)
}

fn read_panel(r: &mut Reader<'_>) -> Result<Panel, FrameError> {
    Ok(Panel {
        time: r.text()?,
        icons: Icons(r.u16()?),
        moves: r.u16()?,
        stage: r.u8()?,
    })
}

const CAP_TENTHS: u8 = 0x01;
const CAP_BUZZER: u8 = 0x02;
const CAP_ARBITER_BUTTON: u8 = 0x04;
const LED_LEFT: u8 = 0x01;
const LED_RIGHT: u8 = 0x02;
const LED_ARBITER: u8 = 0x04;
const HB_LOW_POWER: u8 = 0x01;

fn write_payload(m: &Message, w: &mut Writer<'_>) -> Result<(), BufferTooSmall> {
    match m {
        Message::Hello(h) => {
            let c = &h.capabilities;
            w.u8(h.protocol_version)?;
            w.u8(h.roles.0)?;
            w.u8(c.displays)?;
            w.u8(c.digits)?;
            let flags = (if c.tenths { CAP_TENTHS } else { 0 })
                | (if c.buzzer { CAP_BUZZER } else { 0 })
                | (if c.arbiter_button {
                    CAP_ARBITER_BUTTON
                } else {
                    0
                });
            w.u8(flags)?;
            w.u8(c.brightness_levels)?;
            w.u8(c.text_chars)?;
            w.u16(c.icons.0)?;
            w.u32(h.boot_id)?;
            w.u16(h.first_unacked_event)?;
            w.text(&h.vendor)?;
            w.text(&h.model)?;
            w.text(&h.serial)?;
            w.text(&h.firmware)
        }
        Message::Button {
            event,
            button,
            pressed,
            device_time_us,
        } => {
            w.u16(*event)?;
            w.u8(button.code())?;
            w.u8(u8::from(*pressed))?;
            w.u64(*device_time_us)
        }
        Message::DeviceHeartbeat {
            device_time_us,
            low_power,
        } => {
            w.u64(*device_time_us)?;
            w.u8(if *low_power { HB_LOW_POWER } else { 0 })
        }
        Message::Welcome {
            protocol_version,
            heartbeat_interval_ms,
            link_timeout_ms,
        } => {
            w.u8(*protocol_version)?;
            w.u16(*heartbeat_interval_ms)?;
            w.u16(*link_timeout_ms)
        }
        Message::Ack { event } => w.u16(*event),
        Message::Display(d) => {
            write_panel(&d.left, w)?;
            write_panel(&d.right, w)?;
            w.text(&d.text)?;
            w.u8(d.brightness)
        }
        Message::Leds(l) => w.u8((if l.left { LED_LEFT } else { 0 })
            | (if l.right { LED_RIGHT } else { 0 })
            | (if l.arbiter { LED_ARBITER } else { 0 })),
        Message::Beep { duration_ms, count } => {
            w.u16(*duration_ms)?;
            w.u8(*count)
        }
        Message::HostHeartbeat => Ok(()),
        Message::Nak { code, seq } => {
            w.u8(code.code())?;
            w.u8(*seq)
        }
        Message::Unknown { .. } => Ok(()),
    }
}

fn read_payload(id: u8, r: &mut Reader<'_>) -> Result<Message, FrameError> {
    let m = match id {
        ids::HELLO => {
            let protocol_version = r.u8()?;
            let roles = Roles(r.u8()?);
            let displays = r.u8()?;
            let digits = r.u8()?;
            let flags = r.u8()?;
            let brightness_levels = r.u8()?;
            let text_chars = r.u8()?;
            let icons = Icons(r.u16()?);
            let boot_id = r.u32()?;
            let first_unacked_event = r.u16()?;
            Message::Hello(Hello {
                protocol_version,
                roles,
                capabilities: Capabilities {
                    displays,
                    digits,
                    tenths: flags & CAP_TENTHS != 0,
                    icons,
                    buzzer: flags & CAP_BUZZER != 0,
                    brightness_levels,
                    arbiter_button: flags & CAP_ARBITER_BUTTON != 0,
                    text_chars,
                },
                vendor: r.text()?,
                model: r.text()?,
                serial: r.text()?,
                firmware: r.text()?,
                boot_id,
                first_unacked_event,
            })
        }
        ids::BUTTON => Message::Button {
            event: r.u16()?,
            button: Button::from_code(r.u8()?),
            pressed: match r.u8()? {
                0 => false,
                1 => true,
                _ => return Err(FrameError::Malformed),
            },
            device_time_us: r.u64()?,
        },
        ids::DEVICE_HEARTBEAT => Message::DeviceHeartbeat {
            device_time_us: r.u64()?,
            low_power: r.u8()? & HB_LOW_POWER != 0,
        },
        ids::WELCOME => Message::Welcome {
            protocol_version: r.u8()?,
            heartbeat_interval_ms: r.u16()?,
            link_timeout_ms: r.u16()?,
        },
        ids::ACK => Message::Ack { event: r.u16()? },
        ids::DISPLAY => Message::Display(DisplayState {
            left: read_panel(r)?,
            right: read_panel(r)?,
            text: r.text()?,
            brightness: r.u8()?,
        }),
        ids::LEDS => {
            let b = r.u8()?;
            Message::Leds(Leds {
                left: b & LED_LEFT != 0,
                right: b & LED_RIGHT != 0,
                arbiter: b & LED_ARBITER != 0,
            })
        }
        ids::BEEP => Message::Beep {
            duration_ms: r.u16()?,
            count: r.u8()?,
        },
        ids::HOST_HEARTBEAT => Message::HostHeartbeat,
        ids::NAK => Message::Nak {
            code: NakCode::from_code(r.u8()?),
            seq: r.u8()?,
        },
        // Unknown ids: the payload is not ours to judge.
        id => return Ok(Message::Unknown { id }),
    };
    r.finish()?;
    Ok(m)
}

/// What [`Accumulator::feed`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Feed<'a> {
    /// All input consumed, no complete frame yet.
    NeedMore,
    /// A frame, and the input not yet consumed.
    Frame(Frame, &'a [u8]),
    /// A refused frame (counted by the caller), and the rest.
    Error(FrameError, &'a [u8]),
}

/// Collects bytes from partial serial reads into frames.
///
/// Bytes up to each 0x00 delimiter form one frame; empty frames (two 0x00 in
/// a row, or a leading 0x00) are skipped silently, so a sender may put a 0x00
/// before a frame to resynchronise the receiver. A frame longer than
/// [`MAX_COBS_FRAME`] bytes is dropped as it arrives and reported once as
/// [`FrameError::Oversize`] at its delimiter; reception resumes after it.
pub struct Accumulator {
    buf: [u8; MAX_WIRE_FRAME],
    len: usize,
    overfull: bool,
    refused_header: Option<(u8, u8)>,
}

impl Default for Accumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for Accumulator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Accumulator")
            .field("len", &self.len)
            .field("overfull", &self.overfull)
            .finish()
    }
}

impl Accumulator {
    pub const fn new() -> Self {
        Accumulator {
            buf: [0; MAX_WIRE_FRAME],
            len: 0,
            overfull: false,
            refused_header: None,
        }
    }

    /// Feeds bytes; call again with the returned rest until [`Feed::NeedMore`].
    pub fn feed<'a>(&mut self, input: &'a [u8]) -> Feed<'a> {
        let mut rest = input;
        while let Some((&byte, tail)) = rest.split_first() {
            rest = tail;
            if byte != 0 {
                if self.len < MAX_COBS_FRAME && !self.overfull {
                    if let Some(slot) = self.buf.get_mut(self.len) {
                        *slot = byte;
                        self.len += 1;
                        continue;
                    }
                }
                self.overfull = true;
                self.len = 0;
                continue;
            }
            if self.overfull {
                self.overfull = false;
                self.len = 0;
                self.refused_header = None;
                return Feed::Error(FrameError::Oversize, rest);
            }
            if self.len == 0 {
                continue;
            }
            let len = core::mem::take(&mut self.len);
            let wire = self.buf.get(..len).unwrap_or(&[]);
            let result = decode(wire);
            self.refused_header = match result {
                Err(FrameError::Malformed) => frame_header(wire),
                _ => None,
            };
            return match result {
                Ok(frame) => Feed::Frame(frame, rest),
                Err(e) => Feed::Error(e, rest),
            };
        }
        Feed::NeedMore
    }

    /// After [`Feed::Error`] with [`FrameError::Malformed`]: the message id
    /// and sequence number of that frame when its CRC was valid (see
    /// [`frame_header`]), else `None`. Cleared by the next frame.
    pub fn refused_header(&self) -> Option<(u8, u8)> {
        self.refused_header
    }

    /// Bytes of an unfinished frame held.
    pub fn pending(&self) -> usize {
        self.len
    }

    /// Drops any unfinished frame (e.g. after the port was reopened).
    pub fn clear(&mut self) {
        self.len = 0;
        self.overfull = false;
    }
}

/// Serial-number order of 16-bit event numbers (RFC 1982): `a` comes before
/// `b` when `b - a` (mod 2^16) is in `1..=32767`.
pub fn event_before(a: u16, b: u16) -> bool {
    let d = b.wrapping_sub(a);
    d != 0 && d < 0x8000
}

#[cfg(test)]
mod tests;
