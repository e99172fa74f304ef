//! Actions waiting for their commit.
//!
//! An input's effect is reported (the D-Bus reply, the device's ACK, the
//! board events, the readers' view) only once its record is committed, so a
//! crash at any moment loses nothing anyone was told about. The board core
//! numbers its records; everything an input causes after its record waits
//! behind that number and is released, in order, by `Committed(seq)`.
//! What does not depend on a commit (display frames, a refusal, a repeated
//! ACK) goes out at once, unless something earlier is still waiting: order
//! is never changed, except that the replies a commit releases go out last
//! of what it released, so a caller that reads right after its reply sees
//! everything its change caused (the view, the history rows), and that the
//! board events an input raises wait for the end of the input
//! ([`Outbox::publish`], [`Outbox::events_after_view`]): they go out behind
//! the readers' view that shows what they announce, held by the input's last
//! record. Whoever hears an event and then reads the board (a D-Bus signal
//! then `State()`, an MQTT event then the retained state) sees the change.

use std::collections::VecDeque;

use super::Action;
use crate::contract::{BoardEvent, ControlError};
use crate::journal::Record;
use crate::session::{DeviceCommand, DeviceRole};

/// What waits for a commit.
#[derive(Debug)]
pub(super) enum Held {
    Action(Action),
    /// A device event whose ACK tells the device it may forget the event:
    /// released only after a successful commit, and then also remembered as
    /// the last committed event of that device.
    Ack {
        role: DeviceRole,
        serial: String,
        event: u16,
    },
    /// The broadcast PGN changed: it is rendered when released, not when
    /// the change happened (a press's path never pays for the text).
    Pgn,
}

#[derive(Debug, Default)]
pub(super) struct Outbox {
    /// To carry out now, in order.
    now: Vec<Action>,
    /// `(seq, held)`: released when `seq` is committed.
    held: VecDeque<(u64, Vec<Held>)>,
    next_seq: u64,
    /// The board events of the input being handled, in the order raised:
    /// placed by [`Outbox::events_after_view`] once its view is.
    events: Vec<BoardEvent>,
}

/// What a commit released, for the board core to finish.
pub(super) struct Released {
    pub actions: Vec<Action>,
    /// Where in `actions` the PGN, rendered now, belongs (the last of the
    /// changes released: one text carries them all).
    pub pgn_at: Option<usize>,
    /// Acknowledged device events: `(serial, event)`.
    pub acked: Vec<(String, u16)>,
}

impl Outbox {
    /// Asks the store to write `record`; what follows waits for its commit.
    pub fn record(&mut self, record: Record) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.now.push(Action::Store { seq, record });
        self.held.push_back((seq, Vec::new()));
        seq
    }

    /// Carries `action` out once everything recorded so far is committed
    /// (at once when nothing waits).
    pub fn after_commit(&mut self, action: Action) {
        match self.held.back_mut() {
            Some((_, held)) => held.push(Held::Action(action)),
            None => self.now.push(action),
        }
    }

    /// The PGN changed: its text goes out once everything recorded so far
    /// is committed, rendered then. Returns whether it is due now (nothing
    /// waits: the caller renders it at once).
    pub fn pgn_after_commit(&mut self) -> bool {
        match self.held.back_mut() {
            Some((_, held)) => {
                // One text carries every change: an earlier mark behind the
                // same record is dropped.
                held.retain(|h| !matches!(h, Held::Pgn));
                held.push(Held::Pgn);
                false
            }
            None => true,
        }
    }

    /// An ACK for a device event, after the commit of what came before it.
    /// With nothing waiting it goes out at once (an event that needed no
    /// record: a release, an unknown button).
    pub fn ack_after_commit(&mut self, role: DeviceRole, serial: String, event: u16) -> bool {
        match self.held.back_mut() {
            Some((_, held)) => {
                held.push(Held::Ack {
                    role,
                    serial,
                    event,
                });
                false
            }
            None => {
                self.now.push(Action::Device {
                    role,
                    command: DeviceCommand::Ack { event },
                });
                true
            }
        }
    }

    /// A board event of the input being handled. It waits for the end of
    /// the input ([`Outbox::events_after_view`]): an event placed behind an
    /// earlier record of the input would be released by that record's
    /// commit, before the view that shows its change, and a listener that
    /// reads the board on hearing it would find the state before it.
    pub fn publish(&mut self, event: BoardEvent) {
        self.events.push(event)
    }

    /// Whether events wait for the input's view.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Places the input's events behind everything it recorded and queued
    /// so far: the board core calls this right after queueing the input's
    /// view, so each event is released with that view (or after it), never
    /// before.
    pub fn events_after_view(&mut self) {
        for event in std::mem::take(&mut self.events) {
            self.after_commit(Action::Publish(event));
        }
    }

    /// Carries `action` out now, unless something waits (then behind it).
    pub fn soon(&mut self, action: Action) {
        self.after_commit(action)
    }

    /// Carries `action` out now, whatever waits (display frames, LEDs,
    /// beeps: the clock face never waits for the disk).
    pub fn immediately(&mut self, action: Action) {
        self.now.push(action)
    }

    /// Whether anything waits for a commit.
    pub fn waiting(&self) -> bool {
        !self.held.is_empty()
    }

    /// The store committed (or failed to commit) everything up to `seq`.
    pub fn committed(&mut self, seq: u64, ok: bool) -> Released {
        let mut released = Released {
            actions: Vec::new(),
            pgn_at: None,
            acked: Vec::new(),
        };
        let mut replies = Vec::new();
        while self.held.front().is_some_and(|(s, _)| *s <= seq) {
            let Some((_, held)) = self.held.pop_front() else {
                break;
            };
            for item in held {
                match item {
                    Held::Action(Action::Reply { token, result }) if !ok => {
                        let result = result.and(Err(ControlError::Internal(
                            "the change was made but could not be saved to the state \
                             database; check the disk and the daemon's log"
                                .into(),
                        )));
                        replies.push(Action::Reply { token, result });
                    }
                    Held::Action(reply @ Action::Reply { .. }) => replies.push(reply),
                    Held::Action(action) => released.actions.push(action),
                    Held::Pgn => released.pgn_at = Some(released.actions.len()),
                    // Unsaved: the device keeps it and sends it again.
                    Held::Ack { .. } if !ok => {}
                    Held::Ack {
                        role,
                        serial,
                        event,
                    } => {
                        released.actions.push(Action::Device {
                            role,
                            command: DeviceCommand::Ack { event },
                        });
                        released.acked.push((serial, event));
                    }
                }
            }
        }
        released.actions.append(&mut replies);
        released
    }

    /// What to carry out now.
    pub fn take(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.now)
    }
}
