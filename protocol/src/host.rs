//! Host-side helpers for the reliable button events (SPEC.md, "Reliability").
//!
//! [`EventFilter`] decides, per device, whether a BUTTON frame is a new event
//! to deliver, a duplicate to acknowledge again, or one that arrived ahead of
//! a lost predecessor (ignored: the device resends both in order). Events are
//! delivered exactly once and in the device's order.

use crate::{event_before, Hello};

/// What to do with a received BUTTON event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventVerdict {
    /// The next event in order: deliver it, and acknowledge it once it is
    /// committed.
    New,
    /// Already delivered: drop it, and acknowledge again the last committed
    /// event (the earlier ACK was lost).
    Duplicate,
    /// An earlier event is missing: drop it without acknowledging; the device
    /// resends from the oldest unacknowledged event.
    Ahead,
}

/// Duplicate filter for one device (keep it across reconnects of the same
/// device: it is what recognises a resent event whose ACK was lost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    boot_id: Option<u32>,
    expected: u16,
}

impl EventFilter {
    pub const fn new() -> Self {
        EventFilter {
            boot_id: None,
            expected: 0,
        }
    }

    /// A filter that resumes from state persisted by the host (the boot and
    /// the next expected event of [`Self::state`]).
    pub const fn resume(boot_id: u32, expected: u16) -> Self {
        EventFilter {
            boot_id: Some(boot_id),
            expected,
        }
    }

    /// `(boot_id, next expected event)`, once a HELLO was seen.
    pub fn state(&self) -> Option<(u32, u16)> {
        self.boot_id.map(|b| (b, self.expected))
    }

    /// A HELLO arrived. A new boot (or the first HELLO) restarts the numbering
    /// at `hello.first_unacked_event`; the same boot keeps the record, so
    /// events resent after a reconnect are recognised as duplicates.
    /// Returns whether the device rebooted (or was not known).
    pub fn on_hello(&mut self, hello: &Hello) -> bool {
        if self.boot_id == Some(hello.boot_id) {
            // A device never forgets an unacknowledged event, so its oldest
            // unacked cannot be ahead of what we expect unless we lost state;
            // trusting the device then loses nothing it still holds.
            if event_before(self.expected, hello.first_unacked_event) {
                self.expected = hello.first_unacked_event;
            }
            return false;
        }
        self.boot_id = Some(hello.boot_id);
        self.expected = hello.first_unacked_event;
        true
    }

    /// Classifies event `event`; [`EventVerdict::New`] advances the filter.
    /// Before any HELLO nothing is new (SPEC.md 6.1: no session yet).
    pub fn check(&mut self, event: u16) -> EventVerdict {
        if self.boot_id.is_none() {
            EventVerdict::Ahead
        } else if event == self.expected {
            self.expected = self.expected.wrapping_add(1);
            EventVerdict::New
        } else if event_before(event, self.expected) {
            EventVerdict::Duplicate
        } else {
            EventVerdict::Ahead
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(boot_id: u32, first_unacked_event: u16) -> Hello {
        Hello {
            boot_id,
            first_unacked_event,
            ..Hello::default()
        }
    }

    #[test]
    fn nothing_is_new_before_hello() {
        let mut f = EventFilter::new();
        assert_eq!(f.check(0), EventVerdict::Ahead);
        assert_eq!(f.state(), None);
    }

    #[test]
    fn in_order_once_across_reconnects_of_one_boot() {
        let mut f = EventFilter::new();
        assert!(f.on_hello(&hello(1, 65534)));
        assert_eq!(f.check(65535), EventVerdict::Ahead);
        assert_eq!(f.check(65534), EventVerdict::New);
        assert_eq!(f.check(65535), EventVerdict::New);
        assert_eq!(f.check(65535), EventVerdict::Duplicate);
        // Reconnect, same boot: the device still holds 65535 (ACK lost).
        assert!(!f.on_hello(&hello(1, 65535)));
        assert_eq!(f.check(65535), EventVerdict::Duplicate);
        assert_eq!(f.check(0), EventVerdict::New);
        assert_eq!(f.state(), Some((1, 1)));
    }

    #[test]
    fn a_new_boot_restarts_the_numbering() {
        let mut f = EventFilter::resume(1, 500);
        assert!(f.on_hello(&hello(2, 0)));
        assert_eq!(f.check(0), EventVerdict::New);
    }
}
