//! The hold of presses a unit queued while it had no link (SPEC.md 9.2
//! item 8), for [`super::Session`].
//!
//! Right after a link-up the time mapping may rest on the link's first
//! heartbeat alone, so a press stamped before it is kept here until the
//! link has brought enough heartbeats, or until its deadline. Promises:
//! presses come out in event order (RFC 1982), each event once per hold (a
//! resend of a held event changes nothing), at most [`MAX_HELD`] are kept
//! (beyond, the oldest comes out at once and a resend of it is not held
//! again on this link), and [`Hold::due`] is the earliest deadline of all
//! held presses. No clock is read: instants are parameters.

use std::collections::VecDeque;

use chessclock_protocol::{event_before, Button};

use crate::engine::Micros;

/// Presses held at most; beyond, the oldest is placed at once (a unit
/// queues at least 16, 32 recommended: SPEC.md 7.3).
pub const MAX_HELD: usize = 64;

/// A BUTTON frame waiting for the time mapping to settle.
#[derive(Clone, Debug)]
pub(super) struct HeldPress {
    pub serial: String,
    pub event: u16,
    pub button: Button,
    pub pressed: bool,
    pub device_time_us: u64,
    /// The frame's first arrival: the press is never placed later.
    pub arrival: Micros,
    /// Placed by then whatever the heartbeats did.
    pub release_by: Micros,
}

#[derive(Debug, Default)]
pub(super) struct Hold {
    /// In event order.
    held: VecDeque<HeldPress>,
    /// Events pushed out because the hold was full, on this link.
    evicted: Vec<u16>,
}

impl Hold {
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Whether `event` was pushed out on this link: its resends are
    /// duplicates for the board core, placed at once rather than held.
    pub fn was_evicted(&self, event: u16) -> bool {
        self.evicted.contains(&event)
    }

    /// A new link (WELCOME): what was pushed out before does not count.
    pub fn new_link(&mut self) {
        self.evicted.clear();
    }

    /// Keeps `press` in event order. A resend of a held event changes
    /// nothing. When full, returns the oldest, pushed out, to be placed at
    /// once.
    pub fn hold(&mut self, press: HeldPress) -> Option<HeldPress> {
        if self.held.iter().any(|p| p.event == press.event) {
            return None;
        }
        let mut out = None;
        if self.held.len() >= MAX_HELD {
            out = self.held.pop_front();
            if let Some(oldest) = &out {
                if self.evicted.len() < MAX_HELD {
                    self.evicted.push(oldest.event);
                }
            }
        }
        // A lost first send puts an event's resend behind later ones: the
        // board core expects them in event order (SPEC.md 7.2).
        let at = self
            .held
            .iter()
            .position(|p| event_before(press.event, p.event))
            .unwrap_or(self.held.len());
        self.held.insert(at, press);
        out
    }

    /// The earliest deadline of the held presses (event order is not
    /// arrival order).
    pub fn due(&self) -> Option<Micros> {
        self.held.iter().map(|p| p.release_by).min()
    }

    /// Takes every held press, in event order.
    pub fn take_all(&mut self) -> VecDeque<HeldPress> {
        std::mem::take(&mut self.held)
    }
}
