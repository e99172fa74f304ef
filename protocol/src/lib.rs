//! `chessclock-protocol`: the wire protocol between chessclockd (the host) and
//! USB press-button units and LED display units. The normative description is
//! `SPEC.md` beside this crate; this crate is its reference implementation,
//! usable by device firmware too (`no_std`, no allocation).
//!
//! CONTRACT NOTE (skeleton): the message types and the function signatures
//! below are what the daemon and the simulator code against. Add freely.

#![cfg_attr(not(feature = "std"), no_std)]

/// Protocol version spoken by this crate.
pub const PROTOCOL_VERSION: u8 = 1;

/// Largest decoded frame (message id + sequence + payload + CRC), bytes.
pub const MAX_FRAME: usize = 128;

/// Largest encoded frame on the wire, COBS overhead and delimiter included.
pub const MAX_WIRE_FRAME: usize = MAX_FRAME + MAX_FRAME / 254 + 2;

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
        let src = s.as_bytes();
        if src.len() > N || src.len() > u8::MAX as usize {
            return None;
        }
        let mut bytes = [0; N];
        bytes[..src.len()].copy_from_slice(src);
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
        Self::new(&s[..end]).unwrap_or_else(Self::empty)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..(self.len as usize).min(N)]
    }

    /// The text, or `""` when the bytes are not UTF-8.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }
}

impl<const N: usize> core::fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.as_str(), f)
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
    /// Link to the host lost (the device sets it itself).
    pub const LINK_LOST: Icons = Icons(0x0020);
    /// Low power (the device sets it itself).
    pub const LOW_POWER: Icons = Icons(0x0040);
    /// Increment/delay active for this side.
    pub const BONUS: Icons = Icons(0x0080);
    /// The arbiter has been called.
    pub const ARBITER: Icons = Icons(0x0100);

    pub fn contains(self, other: Icons) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Which physical button (seen from the arbiter facing the unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Button {
    Left,
    Right,
    /// Arbiter / pause button (Art. 6.12b).
    Arbiter,
    Unknown(u8),
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
    pub serial: Text<16>,
    pub firmware: Text<16>,
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
    Unknown(u8),
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
    /// Acknowledges button event `event`.
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
    /// A message id this version does not know (ignored, counted).
    Unknown {
        id: u8,
    },
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

/// Encoding failed: the output buffer is too small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferTooSmall;

/// Encodes `frame` for the wire (COBS, with its CRC and the trailing 0x00
/// delimiter) into `out`; returns the number of bytes written.
pub fn encode(frame: &Frame, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
    let _ = (frame, out);
    todo!("protocol: encode")
}

/// Decodes one COBS-encoded frame (without its 0x00 delimiter).
pub fn decode(wire: &[u8]) -> Result<Frame, FrameError> {
    let _ = wire;
    todo!("protocol: decode")
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
pub struct Accumulator {
    buf: [u8; MAX_WIRE_FRAME],
    len: usize,
    overfull: bool,
}

impl Default for Accumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl Accumulator {
    pub const fn new() -> Self {
        Accumulator {
            buf: [0; MAX_WIRE_FRAME],
            len: 0,
            overfull: false,
        }
    }

    /// Feeds bytes; call again with the returned rest until [`Feed::NeedMore`].
    pub fn feed<'a>(&mut self, input: &'a [u8]) -> Feed<'a> {
        let _ = (input, &self.buf, self.len, self.overfull);
        todo!("protocol: accumulator")
    }
}

pub mod timesync {
    //! Maps device timestamps to the host's monotonic clock (SPEC.md, "Time").

    /// Host-side estimator of the device clock's offset (and drift).
    #[derive(Clone, Debug, Default)]
    pub struct ClockSync {
        _private: (),
    }

    impl ClockSync {
        pub fn new() -> Self {
            ClockSync { _private: () }
        }

        /// Records a frame carrying `device_time_us` that arrived at host
        /// instant `host_arrival_us` (heartbeats and button events).
        pub fn observe(&mut self, device_time_us: u64, host_arrival_us: i64) {
            let _ = (device_time_us, host_arrival_us);
            todo!("timesync: observe")
        }

        /// The host instant of `device_time_us`, never later than
        /// `host_arrival_us` (the frame cannot arrive before it was sent).
        /// Before any observation, `host_arrival_us`.
        pub fn to_host(&self, device_time_us: u64, host_arrival_us: i64) -> i64 {
            let _ = device_time_us;
            host_arrival_us
        }

        /// The current bound on the mapping error, when known.
        pub fn error_bound_us(&self) -> Option<u64> {
            None
        }

        /// Forget everything (device reset / reconnected).
        pub fn reset(&mut self) {}
    }
}
