//! The device side of the link, as firmware runs it: HELLO until WELCOME,
//! heartbeats, button events kept and retransmitted until acknowledged,
//! link-lost detection. A pure state machine: time is the device's own
//! microsecond clock, passed in; frames to send come out of
//! [`DeviceLinkSim::poll_transmit`]; [`DeviceLinkSim::next_deadline`] says when
//! to call again.
//!
//! This is the simulator's own minimal implementation, written while
//! `chessclock_protocol::device::DeviceLink` was not yet available; the rest of
//! the simulator only uses the small surface below, so it can be swapped.

use std::collections::VecDeque;

use chessclock_protocol::{Button, Frame, Hello, Message, PROTOCOL_VERSION};

/// Device-side timing (device clock, µs). Host-dictated values arrive in
/// WELCOME and replace the defaults for the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkTiming {
    /// HELLO is repeated this often until WELCOME.
    pub hello_interval_us: u64,
    /// An unacknowledged button event is resent this often.
    pub retransmit_us: u64,
    /// Heartbeat period until WELCOME says otherwise.
    pub heartbeat_interval_us: u64,
    /// Silence from the host after which the link is lost, until WELCOME says
    /// otherwise.
    pub link_timeout_us: u64,
}

impl Default for LinkTiming {
    fn default() -> Self {
        LinkTiming {
            hello_interval_us: 250_000,
            retransmit_us: 100_000,
            heartbeat_interval_us: 500_000,
            link_timeout_us: 2_000_000,
        }
    }
}

/// Where the link stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkState {
    /// Sending HELLO, waiting for WELCOME (after power-up or replug).
    Connecting,
    /// WELCOME received, the host is heard.
    Up,
    /// The host fell silent for longer than the link timeout; HELLO again.
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PendingEvent {
    event: u16,
    button: Button,
    pressed: bool,
    device_time_us: u64,
    next_send_us: u64,
    sends: u32,
}

/// What an incoming frame did to the link (for logs and the view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkNotice {
    Welcomed,
    /// Event acknowledged (after `sends` transmissions).
    Acked {
        event: u16,
        sends: u32,
    },
    /// ACK for an event not pending (a duplicate ACK): ignored.
    StaleAck {
        event: u16,
    },
    None,
}

/// The device's link state machine.
#[derive(Clone, Debug)]
pub struct DeviceLinkSim {
    hello: Hello,
    timing: LinkTiming,
    state: LinkState,
    next_seq: u8,
    next_event: u16,
    pending: VecDeque<PendingEvent>,
    heartbeat_interval_us: u64,
    link_timeout_us: u64,
    next_hello_us: u64,
    next_heartbeat_us: u64,
    last_rx_us: u64,
}

impl DeviceLinkSim {
    /// A device that just powered up at device time `now_us`.
    pub fn new(hello: Hello, timing: LinkTiming, now_us: u64) -> Self {
        DeviceLinkSim {
            hello,
            timing,
            state: LinkState::Connecting,
            next_seq: 0,
            next_event: 0,
            pending: VecDeque::new(),
            heartbeat_interval_us: timing.heartbeat_interval_us,
            link_timeout_us: timing.link_timeout_us,
            next_hello_us: now_us,
            next_heartbeat_us: now_us,
            last_rx_us: now_us,
        }
    }

    pub fn state(&self) -> LinkState {
        self.state
    }

    /// Button events not yet acknowledged.
    pub fn unacked(&self) -> usize {
        self.pending.len()
    }

    /// The cable came back (USB re-enumerated): handshake again. Unacked
    /// events are kept and resent after WELCOME.
    pub fn reconnect(&mut self, now_us: u64) {
        self.state = LinkState::Connecting;
        self.next_hello_us = now_us;
        self.last_rx_us = now_us;
        self.heartbeat_interval_us = self.timing.heartbeat_interval_us;
        self.link_timeout_us = self.timing.link_timeout_us;
    }

    /// A button changed at device time `device_time_us`; returns its event
    /// number. Sent at once when the link is up, else after WELCOME.
    pub fn button(
        &mut self,
        button: Button,
        pressed: bool,
        device_time_us: u64,
        now_us: u64,
    ) -> u16 {
        let event = self.next_event;
        self.next_event = self.next_event.wrapping_add(1);
        self.pending.push_back(PendingEvent {
            event,
            button,
            pressed,
            device_time_us,
            next_send_us: now_us,
            sends: 0,
        });
        event
    }

    /// A valid frame from the host arrived at `now_us`.
    pub fn on_frame(&mut self, frame: &Frame, now_us: u64) -> LinkNotice {
        self.last_rx_us = now_us;
        match frame.message {
            Message::Welcome {
                heartbeat_interval_ms,
                link_timeout_ms,
                ..
            } => {
                self.state = LinkState::Up;
                if heartbeat_interval_ms > 0 {
                    self.heartbeat_interval_us = u64::from(heartbeat_interval_ms) * 1000;
                }
                if link_timeout_ms > 0 {
                    self.link_timeout_us = u64::from(link_timeout_ms) * 1000;
                }
                self.next_heartbeat_us = now_us;
                for pending in &mut self.pending {
                    pending.next_send_us = now_us;
                }
                LinkNotice::Welcomed
            }
            Message::Ack { event } => match self.pending.iter().position(|p| p.event == event) {
                Some(index) => {
                    let sends = self.pending[index].sends;
                    self.pending.remove(index);
                    LinkNotice::Acked { event, sends }
                }
                None => LinkNotice::StaleAck { event },
            },
            _ => LinkNotice::None,
        }
    }

    /// Frames due at `now_us`, in sending order.
    pub fn poll_transmit(&mut self, now_us: u64, out: &mut Vec<Frame>) {
        if self.state == LinkState::Up
            && now_us.saturating_sub(self.last_rx_us) >= self.link_timeout_us
        {
            self.state = LinkState::Lost;
            self.next_hello_us = now_us;
        }
        match self.state {
            LinkState::Connecting | LinkState::Lost => {
                if now_us >= self.next_hello_us {
                    let hello = Message::Hello(Hello {
                        protocol_version: PROTOCOL_VERSION,
                        ..self.hello
                    });
                    self.push(hello, out);
                    self.next_hello_us = now_us + self.timing.hello_interval_us;
                }
            }
            LinkState::Up => {
                if now_us >= self.next_heartbeat_us {
                    self.push(
                        Message::DeviceHeartbeat {
                            device_time_us: now_us,
                            low_power: false,
                        },
                        out,
                    );
                    self.next_heartbeat_us = now_us + self.heartbeat_interval_us;
                }
                let retransmit = self.timing.retransmit_us;
                let mut due = Vec::new();
                for pending in &mut self.pending {
                    if pending.next_send_us <= now_us {
                        pending.next_send_us = now_us + retransmit;
                        pending.sends += 1;
                        due.push(Message::Button {
                            event: pending.event,
                            button: pending.button,
                            pressed: pending.pressed,
                            device_time_us: pending.device_time_us,
                        });
                    }
                }
                for message in due {
                    self.push(message, out);
                }
            }
        }
    }

    /// The next device instant at which [`Self::poll_transmit`] has work.
    pub fn next_deadline(&self) -> u64 {
        match self.state {
            LinkState::Connecting | LinkState::Lost => self.next_hello_us,
            LinkState::Up => {
                let lost_at = self.last_rx_us.saturating_add(self.link_timeout_us);
                let resend = self.pending.iter().map(|p| p.next_send_us).min();
                let mut deadline = lost_at.min(self.next_heartbeat_us);
                if let Some(resend) = resend {
                    deadline = deadline.min(resend);
                }
                deadline
            }
        }
    }

    fn push(&mut self, message: Message, out: &mut Vec<Frame>) {
        out.push(Frame {
            seq: self.next_seq,
            message,
        });
        self.next_seq = self.next_seq.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> DeviceLinkSim {
        DeviceLinkSim::new(Hello::default(), LinkTiming::default(), 1_000)
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

    fn kinds(frames: &[Frame]) -> Vec<&'static str> {
        frames
            .iter()
            .map(|f| match f.message {
                Message::Hello(_) => "hello",
                Message::DeviceHeartbeat { .. } => "heartbeat",
                Message::Button { .. } => "button",
                _ => "other",
            })
            .collect()
    }

    #[test]
    fn hello_repeats_until_welcome_then_heartbeats() {
        let mut link = link();
        let mut out = Vec::new();
        link.poll_transmit(1_000, &mut out);
        assert_eq!(kinds(&out), ["hello"]);
        assert_eq!(link.next_deadline(), 251_000);
        out.clear();
        link.poll_transmit(100_000, &mut out);
        assert!(out.is_empty());
        link.poll_transmit(251_000, &mut out);
        assert_eq!(kinds(&out), ["hello"]);
        assert_eq!(out[0].seq, 1);
        assert_eq!(link.on_frame(&welcome(), 260_000), LinkNotice::Welcomed);
        out.clear();
        link.poll_transmit(260_000, &mut out);
        assert_eq!(kinds(&out), ["heartbeat"]);
        assert_eq!(link.next_deadline(), 360_000);
    }

    #[test]
    fn press_is_held_until_welcome_and_resent_until_acked() {
        let mut link = link();
        let mut out = Vec::new();
        let event = link.button(Button::Left, true, 5_000, 5_000);
        link.poll_transmit(5_000, &mut out);
        assert_eq!(kinds(&out), ["hello"]);
        link.on_frame(&welcome(), 10_000);
        out.clear();
        link.poll_transmit(10_000, &mut out);
        assert_eq!(kinds(&out), ["heartbeat", "button"]);
        match out[1].message {
            Message::Button {
                event: e,
                device_time_us,
                ..
            } => {
                assert_eq!(e, event);
                assert_eq!(device_time_us, 5_000);
            }
            _ => unreachable!(),
        }
        out.clear();
        link.poll_transmit(110_000, &mut out);
        assert_eq!(kinds(&out), ["heartbeat", "button"]);
        let ack = Frame {
            seq: 1,
            message: Message::Ack { event },
        };
        assert_eq!(
            link.on_frame(&ack, 120_000),
            LinkNotice::Acked { event, sends: 2 }
        );
        assert_eq!(link.on_frame(&ack, 121_000), LinkNotice::StaleAck { event });
        assert_eq!(link.unacked(), 0);
    }

    #[test]
    fn silence_loses_the_link_and_hello_resumes() {
        let mut link = link();
        let mut out = Vec::new();
        link.on_frame(&welcome(), 0);
        link.poll_transmit(0, &mut out);
        link.poll_transmit(299_999, &mut out);
        assert_eq!(link.state(), LinkState::Up);
        out.clear();
        link.poll_transmit(300_000, &mut out);
        assert_eq!(link.state(), LinkState::Lost);
        assert_eq!(kinds(&out), ["hello"]);
        link.on_frame(&welcome(), 310_000);
        assert_eq!(link.state(), LinkState::Up);
    }
}
