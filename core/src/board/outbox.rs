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
//! of what it released, and that the board events and the reply an input
//! raises wait for the end of the input ([`Outbox::publish`],
//! [`Outbox::reply`], [`Outbox::after_view`]): they go out behind the
//! readers' view that shows the input's change, held by the input's last
//! record. Whoever hears an event and then reads the board (a D-Bus signal
//! then `State()`, an MQTT event then the retained state), and a caller
//! that reads right after its reply, sees the change (the view, the history
//! rows), however the store groups the input's records into commits.

use std::collections::VecDeque;

use super::{Action, ReplyToken};
use crate::contract::{BoardEvent, ControlError, Reply};
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
    /// The answer to a command, behind the command's last record: `from` is
    /// the command's first record (any failure from there on fails it).
    Reply {
        token: ReplyToken,
        result: Result<Reply, ControlError>,
        from: u64,
    },
}

#[derive(Debug, Default)]
pub(super) struct Outbox {
    /// To carry out now, in order.
    now: Vec<Action>,
    /// `(seq, held)`: released when `seq` is committed.
    held: VecDeque<(u64, Vec<Held>)>,
    next_seq: u64,
    /// The board events of the input being handled, in the order raised:
    /// placed by [`Outbox::after_view`] once its view is.
    events: Vec<BoardEvent>,
    /// The reply of the command being handled: placed by
    /// [`Outbox::after_view`] once its view is.
    reply: Option<(ReplyToken, Result<Reply, ControlError>)>,
    /// The command's first record (the next one when it began).
    command_from: u64,
    /// The last record released by a failed commit.
    failed_to: Option<u64>,
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
    /// the input ([`Outbox::after_view`]): an event placed behind an
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

    /// A command begins: the records from here on are its own (a failure
    /// to save any of them fails its reply).
    pub fn command_begins(&mut self) {
        self.command_from = self.next_seq;
    }

    /// The answer to the command being handled, its refusal too. Like an
    /// event it waits for the end of the input ([`Outbox::after_view`]): a
    /// command may write several records (a start moved to an instant
    /// already reached: the moved start, then the start), and a reply placed
    /// behind the first would be released by that record's commit while the
    /// view that shows the change waits behind the last, so a caller that
    /// reads on its reply would find the board as it was.
    pub fn reply(&mut self, token: ReplyToken, result: Result<Reply, ControlError>) {
        self.reply = Some((token, result));
    }

    /// Places the input's events, then its reply, behind everything it
    /// recorded and queued so far: the board core calls this right after
    /// queueing the input's view, so each is released with that view (or
    /// after it), never before.
    pub fn after_view(&mut self) {
        for event in std::mem::take(&mut self.events) {
            self.after_commit(Action::Publish(event));
        }
        if let Some((token, result)) = self.reply.take() {
            let from = self.command_from;
            match self.held.back_mut() {
                Some((_, held)) => held.push(Held::Reply {
                    token,
                    result,
                    from,
                }),
                None => self.now.push(Action::Reply { token, result }),
            }
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
            let Some((record, held)) = self.held.pop_front() else {
                break;
            };
            if !ok {
                self.failed_to = Some(record);
            }
            for item in held {
                match item {
                    Held::Reply {
                        token,
                        result,
                        from,
                    } => {
                        // Some record of the command, the last or an
                        // earlier one committed apart, was not saved.
                        let unsaved = self.failed_to.is_some_and(|failed| failed >= from);
                        let result = if unsaved {
                            result.and(Err(ControlError::Internal(
                                "the change was made but could not be saved to the state \
                                 database; check the disk and the daemon's log"
                                    .into(),
                            )))
                        } else {
                            result
                        };
                        replies.push(Action::Reply { token, result });
                    }
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
