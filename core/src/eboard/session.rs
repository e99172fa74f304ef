//! One DGT board link as a pure state machine: the start-up command
//! sequence, one command at a time, keep-alive, loss of the board after
//! silence, the placement (board dump + field updates) in canonical
//! orientation, and clock readings with lever changes.
//!
//! Promises: no I/O and no clock of its own (every call takes `now`);
//! [`DgtSession::next_deadline`] says when [`DgtSession::poll`] next has
//! something to do; never panics on any input.

use std::collections::VecDeque;

use super::placement::{Orientation, Placement};
use super::protocol::{command, BwTime, ClockReading, Message, ParseIssue, Parsed, Parser};
use crate::engine::Micros;

/// Timing of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// Send RETURN_SERIALNR this often while the link is up (keep-alive).
    pub keepalive_every: Micros,
    /// The board is lost after this long without a byte from it.
    pub lost_after: Micros,
    /// Stop waiting for an answer after this long and go on.
    pub answer_timeout: Micros,
    /// Pause after a command that has no answer, before the next one.
    pub command_gap: Micros,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            keepalive_every: 1_500_000,
            lost_after: 5_000_000,
            answer_timeout: 1_000_000,
            command_gap: 50_000,
        }
    }
}

/// What the session asks of its shell or reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionOutput {
    /// Write these bytes to the board.
    Send(Vec<u8>),
    /// The board answered for the first time since [`DgtSession::start`].
    Connected,
    /// Nothing heard for `silent_for`: the shell should reopen the port.
    Lost {
        silent_for: Micros,
    },
    /// The board's placement changed (canonical orientation).
    Placement(Placement),
    /// The starting position was seen in this orientation.
    Orientation(Orientation),
    Clock(ClockReading),
    /// The clock's lever changed side: a press. `right_up` is the new lever.
    ClockPress {
        right_up: bool,
    },
    ClockAck([u8; 7]),
    Version {
        main: u8,
        sub: u8,
    },
    SerialNumber(String),
    /// Bytes the parser threw away.
    Issue(ParseIssue),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Idle,
    Starting,
    Up,
    Lost,
}

/// The board link state machine. See the module docs.
#[derive(Clone, Debug)]
pub struct DgtSession {
    config: SessionConfig,
    parser: Parser,
    link: Link,
    queue: VecDeque<u8>,
    awaiting: Option<(u8, Micros)>,
    next_send_at: Micros,
    last_heard: Micros,
    last_keepalive: Micros,
    raw: Option<[u8; 64]>,
    orientation: Orientation,
    lever_right_up: Option<bool>,
}

/// The answer a command waits for, if any.
fn answer_of(cmd: u8) -> Option<u8> {
    use super::protocol::message_id as id;
    match cmd {
        command::SEND_CLK => Some(id::BWTIME),
        command::SEND_BRD => Some(id::BOARD_DUMP),
        command::RETURN_SERIALNR => Some(id::SERIALNR),
        command::SEND_VERSION => Some(id::VERSION),
        command::RETURN_LONG_SERIALNR => Some(id::LONG_SERIALNR),
        _ => None,
    }
}

fn id_of(message: &Message) -> u8 {
    use super::protocol::message_id as id;
    match message {
        Message::BoardDump(_) => id::BOARD_DUMP,
        Message::FieldUpdate { .. } => id::FIELD_UPDATE,
        Message::BwTime(_) => id::BWTIME,
        Message::EeMoves(_) => id::EE_MOVES,
        Message::SerialNr(_) => id::SERIALNR,
        Message::Version { .. } => id::VERSION,
        Message::LongSerialNr(_) => id::LONG_SERIALNR,
        Message::Unknown(bytes) => bytes.first().copied().unwrap_or(0),
    }
}

/// The start-up sequence (the reference's; SEND_VERSION last).
pub const STARTUP: [u8; 5] = [
    command::SEND_RESET,
    command::SEND_BRD,
    command::SEND_CLK,
    command::SEND_UPDATE_NICE,
    command::SEND_VERSION,
];

impl DgtSession {
    pub fn new(config: SessionConfig) -> DgtSession {
        DgtSession {
            config,
            parser: Parser::new(),
            link: Link::Idle,
            queue: VecDeque::new(),
            awaiting: None,
            next_send_at: 0,
            last_heard: 0,
            last_keepalive: 0,
            raw: None,
            orientation: Orientation::Normal,
            lever_right_up: None,
        }
    }

    /// The port was (re)opened at `now`: forget the old link and begin the
    /// start-up sequence. The orientation is kept (the board did not turn).
    pub fn start(&mut self, now: Micros) -> Vec<SessionOutput> {
        self.parser = Parser::new();
        self.link = Link::Starting;
        self.queue = STARTUP.iter().copied().collect();
        self.awaiting = None;
        self.next_send_at = now;
        self.last_heard = now;
        self.last_keepalive = now;
        self.raw = None;
        self.lever_right_up = None;
        self.poll(now)
    }

    /// True between the first answer and the loss of the board.
    pub fn is_up(&self) -> bool {
        self.link == Link::Up
    }

    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// The placement last read, canonical orientation.
    pub fn placement(&self) -> Option<Placement> {
        self.raw
            .map(|raw| Placement::from_raw(&raw, self.orientation))
    }

    /// Queues a one-byte command (sent in turn, one at a time).
    pub fn queue_command(&mut self, cmd: u8) {
        self.queue.push_back(cmd);
    }

    /// Bytes read from the board at `now`.
    pub fn on_bytes(&mut self, now: Micros, bytes: &[u8]) -> Vec<SessionOutput> {
        let mut out = Vec::new();
        if bytes.is_empty() {
            return out;
        }
        self.last_heard = now;
        for parsed in self.parser.push(bytes) {
            match parsed {
                Parsed::Issue(issue) => out.push(SessionOutput::Issue(issue)),
                Parsed::Message(message) => self.on_message(message, &mut out),
            }
        }
        out.extend(self.poll(now));
        out
    }

    fn on_message(&mut self, message: Message, out: &mut Vec<SessionOutput>) {
        if matches!(self.link, Link::Starting | Link::Lost) {
            self.link = Link::Up;
            out.push(SessionOutput::Connected);
        }
        if let Some((cmd, _)) = self.awaiting {
            if answer_of(cmd) == Some(id_of(&message)) {
                self.awaiting = None;
            }
        }
        match message {
            Message::BoardDump(raw) => {
                self.raw = Some(raw);
                self.placement_changed(out);
            }
            Message::FieldUpdate { square, piece } => {
                // Without a dump the rest of the board is unknown: ignore.
                if let Some(raw) = self.raw.as_mut() {
                    raw[usize::from(square & 63)] = piece & 0x0f;
                    self.placement_changed(out);
                }
            }
            Message::BwTime(BwTime::Ack(data)) => out.push(SessionOutput::ClockAck(data)),
            Message::BwTime(BwTime::Reading(reading)) => self.on_reading(reading, out),
            Message::Version { main, sub } => out.push(SessionOutput::Version { main, sub }),
            Message::SerialNr(serial) | Message::LongSerialNr(serial) => {
                out.push(SessionOutput::SerialNumber(serial))
            }
            Message::EeMoves(_) | Message::Unknown(_) => {}
        }
    }

    fn on_reading(&mut self, reading: ClockReading, out: &mut Vec<SessionOutput>) {
        let all_zero = reading.status == 0
            && reading.left.total_seconds() == 0
            && reading.right.total_seconds() == 0;
        // Minutes or seconds beyond 59 (bad BCD) are a garbled reading.
        let garbled = [reading.left, reading.right]
            .iter()
            .any(|f| f.minutes > 59 || f.seconds > 59);
        if all_zero || garbled || reading.no_clock {
            return;
        }
        if let Some(previous) = self.lever_right_up {
            if previous != reading.lever_right_up {
                out.push(SessionOutput::ClockPress {
                    right_up: reading.lever_right_up,
                });
            }
        }
        self.lever_right_up = Some(reading.lever_right_up);
        out.push(SessionOutput::Clock(reading));
    }

    fn placement_changed(&mut self, out: &mut Vec<SessionOutput>) {
        let Some(raw) = self.raw else { return };
        if let Some(orientation) = Placement::start_orientation(&raw) {
            if orientation != self.orientation {
                self.orientation = orientation;
                out.push(SessionOutput::Orientation(orientation));
            }
        }
        out.push(SessionOutput::Placement(Placement::from_raw(
            &raw,
            self.orientation,
        )));
    }

    /// Timers: loss of the board, answer timeouts, keep-alive, the next
    /// command. Call at [`DgtSession::next_deadline`] (calling more often is
    /// harmless).
    pub fn poll(&mut self, now: Micros) -> Vec<SessionOutput> {
        let mut out = Vec::new();
        if matches!(self.link, Link::Idle | Link::Lost) {
            return out;
        }
        let silent_for = now.saturating_sub(self.last_heard);
        if silent_for >= self.config.lost_after {
            self.link = Link::Lost;
            self.queue.clear();
            self.awaiting = None;
            out.push(SessionOutput::Lost { silent_for });
            return out;
        }
        if let Some((_, since)) = self.awaiting {
            if now.saturating_sub(since) >= self.config.answer_timeout {
                self.awaiting = None;
                self.next_send_at = now;
            }
        }
        if self.link == Link::Up
            && self.queue.is_empty()
            && self.awaiting.is_none()
            && now.saturating_sub(self.last_keepalive) >= self.config.keepalive_every
        {
            self.queue.push_back(command::RETURN_SERIALNR);
        }
        if self.awaiting.is_none() && now >= self.next_send_at {
            if let Some(cmd) = self.queue.pop_front() {
                if cmd == command::RETURN_SERIALNR {
                    self.last_keepalive = now;
                }
                out.push(SessionOutput::Send(vec![cmd]));
                match answer_of(cmd) {
                    Some(_) => self.awaiting = Some((cmd, now)),
                    None => self.next_send_at = now.saturating_add(self.config.command_gap),
                }
            }
        }
        out
    }

    /// When [`DgtSession::poll`] next has something to do.
    pub fn next_deadline(&self) -> Option<Micros> {
        if matches!(self.link, Link::Idle | Link::Lost) {
            return None;
        }
        let mut deadline = self.last_heard.saturating_add(self.config.lost_after);
        if let Some((_, since)) = self.awaiting {
            deadline = deadline.min(since.saturating_add(self.config.answer_timeout));
        } else if !self.queue.is_empty() {
            deadline = deadline.min(self.next_send_at);
        } else if self.link == Link::Up {
            deadline = deadline.min(
                self.last_keepalive
                    .saturating_add(self.config.keepalive_every),
            );
        }
        Some(deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eboard::placement::START_CODES;
    use crate::eboard::protocol::{encode_board_dump, encode_field_update, encode_message};

    const MS: Micros = 1_000;

    fn sends(out: &[SessionOutput]) -> Vec<u8> {
        out.iter()
            .filter_map(|o| match o {
                SessionOutput::Send(bytes) => Some(bytes.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    #[test]
    fn startup_sequence_one_command_at_a_time() {
        let mut s = DgtSession::new(SessionConfig::default());
        // RESET has no answer: it goes out at once, BRD after the gap.
        assert_eq!(sends(&s.start(0)), vec![command::SEND_RESET]);
        assert_eq!(s.next_deadline(), Some(50 * MS));
        assert_eq!(sends(&s.poll(49 * MS)), Vec::<u8>::new());
        assert_eq!(sends(&s.poll(50 * MS)), vec![command::SEND_BRD]);
        // Waiting for the dump: nothing else is sent.
        assert_eq!(sends(&s.poll(500 * MS)), Vec::<u8>::new());
        let out = s.on_bytes(600 * MS, &encode_board_dump(&START_CODES));
        assert!(out.contains(&SessionOutput::Connected));
        assert!(out.contains(&SessionOutput::Placement(Placement::START)));
        assert_eq!(sends(&out), vec![command::SEND_CLK]);
        // No clock answers: the timeout moves on.
        let out = s.poll(1600 * MS);
        assert_eq!(sends(&out), vec![command::SEND_UPDATE_NICE]);
        assert_eq!(sends(&s.poll(1650 * MS)), vec![command::SEND_VERSION]);
        let out = s.on_bytes(
            1700 * MS,
            &encode_message(super::super::protocol::message_id::VERSION, &[1, 7]),
        );
        assert!(out.contains(&SessionOutput::Version { main: 1, sub: 7 }));
        assert!(s.is_up());
    }

    #[test]
    fn keepalive_and_loss() {
        let mut s = DgtSession::new(SessionConfig::default());
        s.start(0);
        s.poll(50 * MS);
        s.on_bytes(100 * MS, &encode_board_dump(&START_CODES));
        s.poll(1100 * MS); // CLK timed out, UPDATE_NICE sent
        s.poll(1150 * MS); // VERSION sent
                           // VERSION times out at 2.15 s; the keep-alive (due since 1.5 s) follows.
        assert_eq!(sends(&s.poll(2150 * MS)), vec![command::RETURN_SERIALNR]);
        let out = s.on_bytes(
            2300 * MS,
            &encode_message(super::super::protocol::message_id::SERIALNR, b"12345"),
        );
        assert!(out.contains(&SessionOutput::SerialNumber("12345".into())));
        assert_eq!(s.next_deadline(), Some(3650 * MS));
        assert_eq!(sends(&s.poll(3649 * MS)), Vec::<u8>::new());
        assert_eq!(sends(&s.poll(3650 * MS)), vec![command::RETURN_SERIALNR]);
        // Silence: lost 5 s after the last byte.
        assert!(!s
            .poll(7299 * MS)
            .iter()
            .any(|o| matches!(o, SessionOutput::Lost { .. })));
        assert_eq!(
            s.poll(7300 * MS),
            vec![SessionOutput::Lost {
                silent_for: 5000 * MS
            }]
        );
        assert!(!s.is_up());
        assert_eq!(s.next_deadline(), None);
    }

    #[test]
    fn turned_round_board_is_mapped() {
        let mut s = DgtSession::new(SessionConfig::default());
        s.start(0);
        let raw = Placement::START.to_raw(Orientation::TurnedRound);
        let out = s.on_bytes(MS, &encode_board_dump(&raw));
        assert!(out.contains(&SessionOutput::Orientation(Orientation::TurnedRound)));
        assert!(out.contains(&SessionOutput::Placement(Placement::START)));
        // e2 (canonical 52) is raw 11 on a turned board.
        let out = s.on_bytes(2 * MS, &encode_field_update(11, 0));
        let mut expected = Placement::START;
        expected.0[52] = 0;
        assert_eq!(
            out.last(),
            Some(&SessionOutput::Placement(expected)),
            "{out:?}"
        );
    }

    #[test]
    fn lever_change_is_a_press() {
        let mut s = DgtSession::new(SessionConfig::default());
        s.start(0);
        let bw = |status: u8| {
            encode_message(
                super::super::protocol::message_id::BWTIME,
                &[0x20, 3, 2, 0x20, 3, 1, status],
            )
        };
        let out = s.on_bytes(MS, &bw(0x09));
        assert!(!out
            .iter()
            .any(|o| matches!(o, SessionOutput::ClockPress { .. })));
        let out = s.on_bytes(2 * MS, &bw(0x13));
        assert!(out.contains(&SessionOutput::ClockPress { right_up: true }));
        let out = s.on_bytes(3 * MS, &bw(0x13));
        assert!(!out
            .iter()
            .any(|o| matches!(o, SessionOutput::ClockPress { .. })));
        // All-zero and garbled readings are ignored (no press, no reading).
        let zero = encode_message(super::super::protocol::message_id::BWTIME, &[0; 7]);
        assert_eq!(s.on_bytes(4 * MS, &zero), vec![]);
        let garbled = encode_message(
            super::super::protocol::message_id::BWTIME,
            &[0x00, 0x7f, 0x00, 0x00, 0x03, 0x00, 0x09],
        );
        assert_eq!(s.on_bytes(5 * MS, &garbled), vec![]);
    }
}
