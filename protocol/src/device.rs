//! The device side of the link (SPEC.md, "Device state machine") as a pure
//! state machine: no I/O and no clock of its own. Firmware (and the
//! simulator) feed it decoded frames and instants of the device's own
//! microsecond clock, and send the frames it hands out.
//!
//! It promises what SPEC.md requires of a device: HELLO every
//! [`HELLO_INTERVAL_MS`] until WELCOME; after
//! WELCOME a heartbeat at once, then every queued button event oldest first;
//! heartbeats at the interval WELCOME gave; unacknowledged events resent
//! every [`RETRANSMIT_INTERVAL_MS`], kept
//! across link losses; LINK_LOST after the link timeout without a valid
//! frame, and then HELLO again.
//!
//! Driving it:
//! ```
//! use chessclock_protocol::device::{DeviceLink, LinkState};
//! use chessclock_protocol::{Button, Frame, Hello, Message};
//!
//! let mut link: DeviceLink = DeviceLink::new(Hello::default(), 0);
//! // Sleep until `link.next_deadline()` or until a byte/press arrives, then:
//! let hello = link.poll(0).unwrap();
//! assert!(matches!(hello.message, Message::Hello(_)));
//! assert_eq!(link.poll(0), None);
//! let welcome = Frame { seq: 0, message: Message::Welcome {
//!     protocol_version: 1, heartbeat_interval_ms: 250, link_timeout_ms: 1000 } };
//! assert_eq!(link.receive(&welcome, 1_000), None);
//! assert_eq!(link.state(), LinkState::Linked);
//! link.press(Button::Left, true, 1_500).unwrap();
//! let hb = link.poll(2_000).unwrap(); // heartbeat first, for time mapping
//! assert!(matches!(hb.message, Message::DeviceHeartbeat { .. }));
//! let press = link.poll(2_000).unwrap();
//! assert!(matches!(press.message, Message::Button { event: 0, device_time_us: 1_500, .. }));
//! ```

use crate::{
    Button, DisplayState, Frame, FrameError, Hello, Icons, Leds, Message, NakCode,
    DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_LINK_TIMEOUT_MS, HELLO_INTERVAL_MS, PROTOCOL_VERSION,
    RETRANSMIT_INTERVAL_MS,
};

/// Default capacity of the queue of unacknowledged button events.
pub const DEFAULT_QUEUE: usize = 32;

/// Smallest heartbeat interval and link timeout a device accepts from
/// WELCOME (smaller values are raised to these).
pub const MIN_HEARTBEAT_INTERVAL_MS: u16 = 10;

/// Where the link is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Sending HELLO, waiting for WELCOME (after power-up, a link loss or
    /// [`DeviceLink::disconnected`]). The display shows LINK_LOST.
    Handshake,
    /// WELCOME received; heartbeats and events flow.
    Linked,
}

/// A button event waiting for its acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingEvent {
    pub event: u16,
    pub button: Button,
    pub pressed: bool,
    pub device_time_us: u64,
    /// Times it was sent (0: not yet).
    pub sends: u32,
}

/// What the host asked the device to show or do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Display(DisplayState),
    Leds(Leds),
    Beep { duration_ms: u16, count: u8 },
}

/// The event queue is full: the new event was refused (the oldest are kept,
/// since they are the ones the clock needs first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFull;

impl core::fmt::Display for QueueFull {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("button event queue full")
    }
}

#[cfg(feature = "std")]
impl std::error::Error for QueueFull {}

/// Counters, for diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LinkStats {
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Frames refused by the decoder (bad CRC, COBS, oversize, malformed).
    pub frame_errors: u64,
    /// Frames with an id this version does not know, or meant for the host.
    pub unknown_messages: u64,
    pub naks_received: u64,
    /// Events sent again after the retransmission interval or a reconnect.
    pub retransmissions: u64,
    /// Events refused because the queue was full.
    pub events_dropped: u64,
    /// Times the link timeout expired while linked.
    pub link_losses: u64,
}

/// The device side of one link. `Q` is the capacity of the queue of
/// unacknowledged button events.
#[derive(Clone, Debug)]
pub struct DeviceLink<const Q: usize = DEFAULT_QUEUE> {
    hello: Hello,
    state: LinkState,
    low_power: bool,
    next_seq: u8,
    next_event: u16,
    queue: [Option<PendingEvent>; Q],
    head: usize,
    len: usize,
    /// Queue position of the next event to transmit in this pass.
    tx_cursor: usize,
    heartbeat_interval_us: u64,
    link_timeout_us: u64,
    hello_at: u64,
    heartbeat_at: u64,
    retransmit_at: Option<u64>,
    last_rx: u64,
    nak: Option<(NakCode, u8)>,
    stats: LinkStats,
}

const fn ms(v: u16) -> u64 {
    v as u64 * 1000
}

impl<const Q: usize> DeviceLink<Q> {
    /// A link of a device that just powered up at device instant `now_us`.
    /// `hello` is sent as given except `protocol_version` (always
    /// [`PROTOCOL_VERSION`]) and `first_unacked_event`, which the link fills
    /// in; give it a fresh `boot_id` at every power-up.
    pub fn new(hello: Hello, now_us: u64) -> Self {
        DeviceLink {
            hello,
            state: LinkState::Handshake,
            low_power: false,
            next_seq: 0,
            next_event: 0,
            queue: [None; Q],
            head: 0,
            len: 0,
            tx_cursor: 0,
            heartbeat_interval_us: ms(DEFAULT_HEARTBEAT_INTERVAL_MS),
            link_timeout_us: ms(DEFAULT_LINK_TIMEOUT_MS),
            hello_at: now_us,
            heartbeat_at: now_us,
            retransmit_at: None,
            last_rx: now_us,
            nak: None,
            stats: LinkStats::default(),
        }
    }

    pub fn state(&self) -> LinkState {
        self.state
    }

    /// Whether the display must show LINK_LOST (not linked).
    pub fn link_lost(&self) -> bool {
        self.state != LinkState::Linked
    }

    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// The HELLO this link sends (with the current `first_unacked_event`).
    pub fn hello(&self) -> Hello {
        Hello {
            protocol_version: PROTOCOL_VERSION,
            first_unacked_event: self.front().map_or(self.next_event, |e| e.event),
            ..self.hello
        }
    }

    /// Reported in heartbeats; also shown as LOW_POWER by [`Self::decorate`].
    pub fn set_low_power(&mut self, low_power: bool) {
        self.low_power = low_power;
    }

    /// The heartbeat interval and link timeout in force, µs.
    pub fn timing_us(&self) -> (u64, u64) {
        (self.heartbeat_interval_us, self.link_timeout_us)
    }

    /// Events waiting for acknowledgement, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &PendingEvent> + '_ {
        (0..self.len).filter_map(move |i| self.slot(i).as_ref())
    }

    /// `state` as the device must show it: the host's icons plus LINK_LOST
    /// (when not linked) and LOW_POWER, on both panels.
    pub fn decorate(&self, state: &DisplayState) -> DisplayState {
        let mut own = Icons(0);
        if self.link_lost() {
            own = own.union(Icons::LINK_LOST);
        }
        if self.low_power {
            own = own.union(Icons::LOW_POWER);
        }
        let mut out = *state;
        out.left.icons = out.left.icons.union(own);
        out.right.icons = out.right.icons.union(own);
        out
    }

    /// A debounced button event at device instant `at_us` (the first edge).
    /// Returns its event number; it is sent at once when linked, otherwise
    /// after the next WELCOME, and resent until acknowledged.
    pub fn press(&mut self, button: Button, pressed: bool, at_us: u64) -> Result<u16, QueueFull> {
        if self.len >= Q {
            self.stats.events_dropped = self.stats.events_dropped.saturating_add(1);
            return Err(QueueFull);
        }
        let event = self.next_event;
        let index = self.index(self.len);
        if let Some(slot) = self.queue.get_mut(index) {
            *slot = Some(PendingEvent {
                event,
                button,
                pressed,
                device_time_us: at_us,
                sends: 0,
            });
        } else {
            self.stats.events_dropped = self.stats.events_dropped.saturating_add(1);
            return Err(QueueFull);
        }
        self.len += 1;
        self.next_event = self.next_event.wrapping_add(1);
        Ok(event)
    }

    /// The host went away as far as the device can tell (USB unplugged or
    /// unconfigured, DTR dropped): back to HELLO at once. Queued events stay.
    pub fn disconnected(&mut self, now_us: u64) {
        self.state = LinkState::Handshake;
        self.hello_at = now_us;
        self.retransmit_at = None;
    }

    /// A frame refused by the decoder or the accumulator: counted, ignored.
    pub fn frame_error(&mut self, error: FrameError) {
        let _ = error;
        self.stats.frame_errors = self.stats.frame_errors.saturating_add(1);
    }

    /// A valid frame from the host at device instant `now_us`. Returns what
    /// the application must show or do; link messages are handled here.
    pub fn receive(&mut self, frame: &Frame, now_us: u64) -> Option<Command> {
        self.stats.frames_received = self.stats.frames_received.saturating_add(1);
        self.last_rx = now_us;
        match frame.message {
            Message::Welcome {
                protocol_version,
                heartbeat_interval_ms,
                link_timeout_ms,
            } => {
                if protocol_version != PROTOCOL_VERSION {
                    self.nak = Some((NakCode::UnsupportedVersion, frame.seq));
                    return None;
                }
                let hb = heartbeat_interval_ms.max(MIN_HEARTBEAT_INTERVAL_MS);
                self.heartbeat_interval_us = ms(hb);
                self.link_timeout_us = ms(link_timeout_ms.max(hb));
                self.state = LinkState::Linked;
                self.heartbeat_at = now_us;
                self.tx_cursor = 0;
                self.retransmit_at = None;
                None
            }
            Message::Ack { event } => {
                if self.state == LinkState::Linked {
                    self.acknowledge(event, now_us);
                }
                None
            }
            Message::Display(d) => Some(Command::Display(d)),
            Message::Leds(l) => Some(Command::Leds(l)),
            Message::Beep { duration_ms, count } => Some(Command::Beep { duration_ms, count }),
            Message::HostHeartbeat => None,
            Message::Nak { .. } => {
                self.stats.naks_received = self.stats.naks_received.saturating_add(1);
                None
            }
            Message::Unknown { .. } => {
                self.stats.unknown_messages = self.stats.unknown_messages.saturating_add(1);
                self.nak = Some((NakCode::UnknownMessage, frame.seq));
                None
            }
            Message::Hello(_) | Message::Button { .. } | Message::DeviceHeartbeat { .. } => {
                self.stats.unknown_messages = self.stats.unknown_messages.saturating_add(1);
                None
            }
        }
    }

    /// The next frame to send at device instant `now_us`, if any: call until
    /// `None`, then sleep until [`Self::next_deadline`] (or an input).
    pub fn poll(&mut self, now_us: u64) -> Option<Frame> {
        if self.state == LinkState::Linked
            && now_us >= self.last_rx.saturating_add(self.link_timeout_us)
        {
            self.state = LinkState::Handshake;
            self.hello_at = now_us;
            self.retransmit_at = None;
            self.stats.link_losses = self.stats.link_losses.saturating_add(1);
        }
        if let Some((code, seq)) = self.nak.take() {
            return Some(self.frame(Message::Nak { code, seq }));
        }
        match self.state {
            LinkState::Handshake => {
                if now_us >= self.hello_at {
                    self.hello_at = now_us.saturating_add(ms(HELLO_INTERVAL_MS));
                    let hello = self.hello();
                    return Some(self.frame(Message::Hello(hello)));
                }
                None
            }
            LinkState::Linked => {
                if now_us >= self.heartbeat_at {
                    self.heartbeat_at = now_us.saturating_add(self.heartbeat_interval_us);
                    return Some(self.frame(Message::DeviceHeartbeat {
                        device_time_us: now_us,
                        low_power: self.low_power,
                    }));
                }
                if self.len == 0 {
                    self.retransmit_at = None;
                    return None;
                }
                if self.retransmit_at.is_some_and(|t| now_us >= t) {
                    self.tx_cursor = 0;
                    self.retransmit_at = None;
                }
                if self.tx_cursor < self.len {
                    let index = self.index(self.tx_cursor);
                    let e = self.queue.get_mut(index)?.as_mut()?;
                    if e.sends > 0 {
                        self.stats.retransmissions = self.stats.retransmissions.saturating_add(1);
                    }
                    e.sends = e.sends.saturating_add(1);
                    let message = Message::Button {
                        event: e.event,
                        button: e.button,
                        pressed: e.pressed,
                        device_time_us: e.device_time_us,
                    };
                    self.tx_cursor += 1;
                    if self.retransmit_at.is_none() {
                        self.retransmit_at =
                            Some(now_us.saturating_add(ms(RETRANSMIT_INTERVAL_MS)));
                    }
                    return Some(self.frame(message));
                }
                None
            }
        }
    }

    /// The device instant at which [`Self::poll`] next has something to do
    /// (a time in the past, e.g. 0, when it has something now).
    pub fn next_deadline(&self) -> u64 {
        if self.nak.is_some() {
            return 0;
        }
        match self.state {
            LinkState::Handshake => self.hello_at,
            LinkState::Linked => {
                let mut t = self
                    .heartbeat_at
                    .min(self.last_rx.saturating_add(self.link_timeout_us));
                if self.len > 0 {
                    if self.tx_cursor < self.len {
                        return 0;
                    }
                    if let Some(r) = self.retransmit_at {
                        t = t.min(r);
                    }
                }
                t
            }
        }
    }

    fn acknowledge(&mut self, event: u16, now_us: u64) {
        let Some(front) = self.front().map(|e| e.event) else {
            return;
        };
        let distance = usize::from(event.wrapping_sub(front));
        if distance >= self.len {
            return; // not a queued event: stale or bogus
        }
        let count = distance + 1;
        for _ in 0..count {
            let index = self.head;
            if let Some(slot) = self.queue.get_mut(index) {
                *slot = None;
            }
            self.head = (self.head + 1) % Q.max(1);
            self.len -= 1;
        }
        self.tx_cursor = self.tx_cursor.saturating_sub(count);
        self.retransmit_at = if self.len == 0 {
            None
        } else {
            Some(now_us.saturating_add(ms(RETRANSMIT_INTERVAL_MS)))
        };
    }

    fn front(&self) -> Option<&PendingEvent> {
        if self.len == 0 {
            return None;
        }
        self.slot(0).as_ref()
    }

    fn index(&self, position: usize) -> usize {
        (self.head + position) % Q.max(1)
    }

    fn slot(&self, position: usize) -> &Option<PendingEvent> {
        self.queue.get(self.index(position)).unwrap_or(&None)
    }

    fn frame(&mut self, message: Message) -> Frame {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        self.stats.frames_sent = self.stats.frames_sent.saturating_add(1);
        Frame { seq, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Frame, Message};

    fn welcome(seq: u8) -> Frame {
        Frame {
            seq,
            message: Message::Welcome {
                protocol_version: 1,
                heartbeat_interval_ms: 250,
                link_timeout_ms: 1000,
            },
        }
    }

    fn ack(event: u16) -> Frame {
        Frame {
            seq: 0,
            message: Message::Ack { event },
        }
    }

    fn drain(link: &mut DeviceLink<4>, now: u64) -> std::vec::Vec<Message> {
        core::iter::from_fn(|| link.poll(now).map(|f| f.message)).collect()
    }

    extern crate std;

    #[test]
    fn hello_repeats_until_welcome_then_heartbeat_then_queued_events() {
        let mut link: DeviceLink<4> = DeviceLink::new(Hello::default(), 0);
        assert_eq!(link.press(Button::Left, true, 10), Ok(0));
        let m = drain(&mut link, 0);
        assert!(matches!(&m[..], [Message::Hello(h)] if h.first_unacked_event == 0));
        assert_eq!(link.next_deadline(), 500_000);
        assert!(drain(&mut link, 499_999).is_empty());
        assert_eq!(drain(&mut link, 500_000).len(), 1);
        assert!(link.link_lost());
        link.receive(&welcome(0), 600_000);
        assert!(!link.link_lost());
        let m = drain(&mut link, 600_000);
        assert!(matches!(
            m[0],
            Message::DeviceHeartbeat {
                device_time_us: 600_000,
                ..
            }
        ));
        assert!(matches!(
            m[1],
            Message::Button {
                event: 0,
                device_time_us: 10,
                ..
            }
        ));
        assert_eq!(m.len(), 2);
        assert_eq!(link.next_deadline(), 700_000); // retransmission
    }

    #[test]
    fn resends_until_acked_and_ack_is_cumulative() {
        let mut link: DeviceLink<4> = DeviceLink::new(Hello::default(), 0);
        drain(&mut link, 0);
        link.receive(&welcome(0), 0);
        drain(&mut link, 0);
        link.press(Button::Left, true, 1).unwrap();
        link.press(Button::Right, true, 2).unwrap();
        assert_eq!(drain(&mut link, 5).len(), 2);
        assert!(drain(&mut link, 100_004).is_empty());
        let m = drain(&mut link, 100_005);
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(link.stats().retransmissions, 2);
        link.receive(&ack(1), 100_010);
        assert_eq!(link.pending().count(), 0);
        assert!(drain(&mut link, 1_000).is_empty());
    }

    #[test]
    fn stale_ack_is_ignored_and_queue_keeps_oldest() {
        let mut link: DeviceLink<4> = DeviceLink::new(Hello::default(), 0);
        for i in 0..4 {
            assert_eq!(link.press(Button::Left, true, i), Ok(i as u16));
        }
        assert_eq!(link.press(Button::Left, true, 9), Err(QueueFull));
        drain(&mut link, 0);
        link.receive(&welcome(0), 0);
        link.receive(&ack(40), 0);
        assert_eq!(link.pending().count(), 4);
        link.receive(&ack(1), 0);
        let left: std::vec::Vec<u16> = link.pending().map(|e| e.event).collect();
        assert_eq!(left, [2, 3]);
        assert_eq!(link.press(Button::Right, true, 10), Ok(4));
    }

    #[test]
    fn link_lost_after_timeout_then_hello_and_resend() {
        let mut link: DeviceLink<4> = DeviceLink::new(Hello::default(), 0);
        drain(&mut link, 0);
        link.receive(&welcome(0), 0);
        link.press(Button::Left, true, 5).unwrap();
        drain(&mut link, 0);
        link.receive(
            &Frame {
                seq: 1,
                message: Message::HostHeartbeat,
            },
            200_000,
        );
        assert_eq!(link.next_deadline(), 100_000); // the retransmission
                                                   // No frame from the host for the link timeout.
        let m = drain(&mut link, 1_200_000);
        assert!(link.link_lost());
        assert!(matches!(&m[..], [Message::Hello(h)] if h.first_unacked_event == 0));
        // ACKs are not taken before WELCOME.
        link.receive(&ack(0), 1_300_000);
        assert_eq!(link.pending().count(), 1);
        link.receive(&welcome(2), 1_400_000);
        let m = drain(&mut link, 1_400_000);
        assert!(matches!(m[1], Message::Button { event: 0, .. }));
        let shown = link.decorate(&DisplayState::default());
        assert!(!shown.left.icons.contains(Icons::LINK_LOST));
    }

    #[test]
    fn unsupported_welcome_is_naked_and_unknown_ids_counted() {
        let mut link: DeviceLink<4> = DeviceLink::new(Hello::default(), 0);
        drain(&mut link, 0);
        let mut w = welcome(9);
        if let Message::Welcome {
            protocol_version, ..
        } = &mut w.message
        {
            *protocol_version = 2;
        }
        link.receive(&w, 10);
        assert_eq!(link.state(), LinkState::Handshake);
        let m = drain(&mut link, 10);
        assert_eq!(
            m,
            [Message::Nak {
                code: NakCode::UnsupportedVersion,
                seq: 9
            }]
        );
        link.receive(
            &Frame {
                seq: 3,
                message: Message::Unknown { id: 0x99 },
            },
            20,
        );
        assert_eq!(link.stats().unknown_messages, 1);
        assert_eq!(link.next_deadline(), 0);
        let shown = link.decorate(&DisplayState::default());
        assert!(shown.right.icons.contains(Icons::LINK_LOST));
    }
}
