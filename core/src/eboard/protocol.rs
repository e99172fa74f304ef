//! The DGT board's wire format: commands the host sends, messages the board
//! answers, and a byte-stream parser that turns serial reads into messages.
//!
//! Promises: the parser is pure, never panics on any input, carries a
//! partial message over to the next read, trusts the length in the header
//! (not a fixed size per id) and resynchronises on any byte with the top bit
//! set (every header starts with one; every other byte is below 0x80).
//!
//! DGT's protocol may not be used commercially without DGT's written
//! permission (see the module docs of [`crate::eboard`]).

/// Host → board commands (one byte each).
pub mod command {
    pub const SEND_RESET: u8 = 0x40;
    pub const SEND_CLK: u8 = 0x41;
    pub const SEND_BRD: u8 = 0x42;
    pub const SEND_UPDATE: u8 = 0x43;
    pub const SEND_UPDATE_BRD: u8 = 0x44;
    pub const RETURN_SERIALNR: u8 = 0x45;
    pub const SEND_UPDATE_NICE: u8 = 0x4b;
    pub const SEND_VERSION: u8 = 0x4d;
    pub const RETURN_LONG_SERIALNR: u8 = 0x55;
    pub const CLOCK_MESSAGE: u8 = 0x2b;
}

/// Board → host message ids (the first byte, top bit included).
pub mod message_id {
    pub const BOARD_DUMP: u8 = 0x86;
    pub const BWTIME: u8 = 0x8d;
    pub const FIELD_UPDATE: u8 = 0x8e;
    pub const EE_MOVES: u8 = 0x8f;
    pub const SERIALNR: u8 = 0x91;
    pub const VERSION: u8 = 0x93;
    pub const LONG_SERIALNR: u8 = 0xa2;
}

/// Header size: id + two 7-bit length bytes.
pub const HEADER_LEN: usize = 3;
/// The largest length the 14-bit field can express.
pub const MAX_MESSAGE_LEN: usize = (0x7f << 7) | 0x7f;

/// Piece codes of the board (index 0 = a8 ... 63 = h1 in the normal orientation).
pub mod piece {
    pub const EMPTY: u8 = 0;
    pub const WPAWN: u8 = 1;
    pub const WROOK: u8 = 2;
    pub const WKNIGHT: u8 = 3;
    pub const WBISHOP: u8 = 4;
    pub const WKING: u8 = 5;
    pub const WQUEEN: u8 = 6;
    pub const BPAWN: u8 = 7;
    pub const BROOK: u8 = 8;
    pub const BKNIGHT: u8 = 9;
    pub const BBISHOP: u8 = 10;
    pub const BKING: u8 = 11;
    pub const BQUEEN: u8 = 12;
    /// "Magic" result pieces.
    pub const MAGIC_DRAW: u8 = 13;
    pub const MAGIC_WHITE_WINS: u8 = 14;
    pub const MAGIC_BLACK_WINS: u8 = 15;
}

/// One side of a DGT clock's reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockFace {
    pub hours: u8,
    pub minutes: u8,
    pub seconds: u8,
    /// 0x10: flag fallen and clock blocked.
    pub flag_blocked: bool,
    /// 0x20: increment/delay indicator.
    pub bonus_indicator: bool,
    /// 0x40: flag shown while the clock may still run.
    pub flag_shown: bool,
}

impl ClockFace {
    /// The time shown, in seconds.
    pub fn total_seconds(&self) -> u32 {
        u32::from(self.hours) * 3600 + u32::from(self.minutes) * 60 + u32::from(self.seconds)
    }
}

/// A time reading of a DGT clock attached to the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockReading {
    pub right: ClockFace,
    pub left: ClockFace,
    pub running: bool,
    /// The lever is up on the right-hand side (the right clock runs).
    pub lever_right_up: bool,
    pub battery_low: bool,
    /// 0x20 in the status byte: no clock connected, the reading is invalid.
    pub no_clock: bool,
    /// The raw status byte (d6), for logs.
    pub status: u8,
}

/// BWTIME contents: a time reading or a clock acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BwTime {
    Reading(ClockReading),
    /// An acknowledgement of a clock command; the raw seven data bytes.
    Ack([u8; 7]),
}

/// A message from the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// 64 piece codes, board index order (0 = a8 in normal orientation).
    BoardDump([u8; 64]),
    FieldUpdate {
        square: u8,
        piece: u8,
    },
    BwTime(BwTime),
    /// The board's own log of changes since power-up (payload as received).
    EeMoves(Vec<u8>),
    /// ASCII serial number as sent.
    SerialNr(String),
    Version {
        main: u8,
        sub: u8,
    },
    LongSerialNr(String),
    /// A well-formed message whose id or length this host does not know;
    /// the whole message including its header.
    Unknown(Vec<u8>),
}

/// Why bytes were thrown away (counted, reported, never fatal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseIssue {
    /// Bytes below 0x80 where a header was expected.
    StrayBytes(usize),
    /// A message cut short by a new header byte; its bytes so far.
    Truncated(usize),
    /// A header whose length is below the header size.
    BadLength { id: u8, len: usize },
}

/// Output of [`Parser::push`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    Message(Message),
    Issue(ParseIssue),
}

/// Incremental parser: feed serial reads, get whole messages out.
#[derive(Clone, Debug, Default)]
pub struct Parser {
    partial: Vec<u8>,
    stray: usize,
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Bytes of an incomplete message held for the next read.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }

    /// Feeds one read; returns the messages (and problems) it completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Parsed> {
        let mut out = Vec::new();
        for &byte in bytes {
            if byte >= 0x80 {
                self.flush_stray(&mut out);
                if !self.partial.is_empty() {
                    out.push(Parsed::Issue(ParseIssue::Truncated(self.partial.len())));
                    self.partial.clear();
                }
                self.partial.push(byte);
                continue;
            }
            if self.partial.is_empty() {
                self.stray += 1;
                continue;
            }
            self.partial.push(byte);
            if self.partial.len() < HEADER_LEN {
                continue;
            }
            let len = (usize::from(self.partial[1]) << 7) | usize::from(self.partial[2]);
            if len < HEADER_LEN {
                out.push(Parsed::Issue(ParseIssue::BadLength {
                    id: self.partial[0],
                    len,
                }));
                self.partial.clear();
                continue;
            }
            if self.partial.len() == len {
                out.push(Parsed::Message(decode_message(&self.partial)));
                self.partial.clear();
            }
        }
        self.flush_stray(&mut out);
        out
    }

    fn flush_stray(&mut self, out: &mut Vec<Parsed>) {
        if self.stray > 0 {
            out.push(Parsed::Issue(ParseIssue::StrayBytes(self.stray)));
            self.stray = 0;
        }
    }
}

/// Decodes one complete message (header included; `bytes.len()` equals the
/// header's length).
fn decode_message(bytes: &[u8]) -> Message {
    let payload = &bytes[HEADER_LEN..];
    match (bytes[0], payload.len()) {
        (message_id::BOARD_DUMP, 64) => {
            let mut squares = [0u8; 64];
            squares.copy_from_slice(payload);
            Message::BoardDump(squares)
        }
        (message_id::FIELD_UPDATE, 2) => Message::FieldUpdate {
            square: payload[0],
            piece: payload[1],
        },
        (message_id::BWTIME, 7) => {
            let mut data = [0u8; 7];
            data.copy_from_slice(payload);
            Message::BwTime(decode_bwtime(data))
        }
        (message_id::EE_MOVES, _) => Message::EeMoves(payload.to_vec()),
        (message_id::SERIALNR, _) => Message::SerialNr(ascii(payload)),
        (message_id::VERSION, 2) => Message::Version {
            main: payload[0],
            sub: payload[1],
        },
        (message_id::LONG_SERIALNR, _) => Message::LongSerialNr(ascii(payload)),
        _ => Message::Unknown(bytes.to_vec()),
    }
}

fn ascii(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '?'
            }
        })
        .collect()
}

fn bcd(byte: u8) -> u8 {
    (byte >> 4) * 10 + (byte & 0x0f)
}

fn face(hours_and_flags: u8, minutes: u8, seconds: u8) -> ClockFace {
    ClockFace {
        hours: hours_and_flags & 0x0f,
        minutes: bcd(minutes),
        seconds: bcd(seconds),
        flag_blocked: hours_and_flags & 0x10 != 0,
        bonus_indicator: hours_and_flags & 0x20 != 0,
        flag_shown: hours_and_flags & 0x40 != 0,
    }
}

/// Decodes BWTIME's seven data bytes: an acknowledgement when the low nibble
/// of d0 or d3 is 0x0a, else a reading.
pub fn decode_bwtime(d: [u8; 7]) -> BwTime {
    if d[0] & 0x0f == 0x0a || d[3] & 0x0f == 0x0a {
        return BwTime::Ack(d);
    }
    BwTime::Reading(ClockReading {
        right: face(d[0], d[1], d[2]),
        left: face(d[3], d[4], d[5]),
        running: d[6] & 0x01 != 0,
        lever_right_up: d[6] & 0x02 != 0,
        battery_low: d[6] & 0x04 != 0,
        no_clock: d[6] & 0x20 != 0,
        status: d[6],
    })
}

/// Encodes a message (for the simulator and tests): header + payload.
pub fn encode_message(id: u8, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() + HEADER_LEN).min(MAX_MESSAGE_LEN);
    let mut out = Vec::with_capacity(len);
    out.push(id | 0x80);
    out.push(((len >> 7) & 0x7f) as u8);
    out.push((len & 0x7f) as u8);
    out.extend_from_slice(&payload[..len - HEADER_LEN]);
    out
}

/// A BOARD_DUMP message for these 64 codes.
pub fn encode_board_dump(squares: &[u8; 64]) -> Vec<u8> {
    encode_message(message_id::BOARD_DUMP, squares)
}

/// A FIELD_UPDATE message.
pub fn encode_field_update(square: u8, piece: u8) -> Vec<u8> {
    encode_message(message_id::FIELD_UPDATE, &[square & 0x3f, piece & 0x0f])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(parsed: Vec<Parsed>) -> Vec<Message> {
        parsed
            .into_iter()
            .filter_map(|p| match p {
                Parsed::Message(m) => Some(m),
                Parsed::Issue(_) => None,
            })
            .collect()
    }

    #[test]
    fn field_update_split_across_reads() {
        let mut parser = Parser::new();
        assert!(parser.push(&[0x8e, 0x00]).is_empty());
        assert_eq!(parser.pending(), 2);
        assert!(parser.push(&[0x05, 0x34]).is_empty());
        assert_eq!(
            parser.push(&[0x00, 0x8e]),
            vec![Parsed::Message(Message::FieldUpdate {
                square: 0x34,
                piece: 0
            })]
        );
        assert_eq!(parser.pending(), 1);
    }

    #[test]
    fn resync_on_header_byte_mid_message() {
        let mut parser = Parser::new();
        let out = parser.push(&[0x8e, 0x00, 0x05, 0x34, 0x8e, 0x00, 0x05, 0x24, 0x01]);
        assert_eq!(
            out,
            vec![
                Parsed::Issue(ParseIssue::Truncated(4)),
                Parsed::Message(Message::FieldUpdate {
                    square: 0x24,
                    piece: 1
                })
            ]
        );
    }

    #[test]
    fn stray_bytes_and_bad_length_are_reported_not_fatal() {
        let mut parser = Parser::new();
        let out = parser.push(&[0x01, 0x02, 0x8e, 0x00, 0x01, 0x93, 0x00, 0x05, 0x01, 0x07]);
        assert_eq!(
            out,
            vec![
                Parsed::Issue(ParseIssue::StrayBytes(2)),
                Parsed::Issue(ParseIssue::BadLength { id: 0x8e, len: 1 }),
                Parsed::Message(Message::Version { main: 1, sub: 7 }),
            ]
        );
    }

    #[test]
    fn length_comes_from_the_header_not_the_id() {
        // A FIELD_UPDATE with an extra byte is kept whole, as Unknown.
        let mut parser = Parser::new();
        let out = messages(parser.push(&[0x8e, 0x00, 0x06, 0x01, 0x02, 0x03, 0x91, 0x00, 0x08]));
        assert_eq!(out, vec![Message::Unknown(vec![0x8e, 0x00, 0x06, 1, 2, 3])]);
        let out = messages(parser.push(b"12345"));
        assert_eq!(out, vec![Message::SerialNr("12345".into())]);
    }

    #[test]
    fn bwtime_reading_and_ack() {
        let reading = decode_bwtime([0x20, 0x03, 0x02, 0x21, 0x59, 0x07, 0x13]);
        match reading {
            BwTime::Reading(r) => {
                assert_eq!(r.right.total_seconds(), 182);
                assert!(r.right.bonus_indicator);
                assert_eq!(r.left.hours, 1);
                assert_eq!(r.left.minutes, 59);
                assert_eq!(r.left.seconds, 7);
                assert!(r.running && r.lever_right_up && !r.no_clock);
            }
            BwTime::Ack(_) => panic!("expected a reading"),
        }
        assert!(matches!(
            decode_bwtime([0x0a, 0, 0, 0, 0, 0, 0]),
            BwTime::Ack(_)
        ));
        assert!(matches!(
            decode_bwtime([0x00, 0, 0, 0x1a, 0, 0, 0]),
            BwTime::Ack(_)
        ));
    }

    #[test]
    fn every_message_kind_decodes() {
        let mut stream = encode_board_dump(&[0; 64]);
        stream.extend(encode_message(message_id::EE_MOVES, &[1, 2, 3]));
        stream.extend(encode_message(message_id::LONG_SERIALNR, b"1234567890"));
        let out = messages(Parser::new().push(&stream));
        assert_eq!(
            out,
            vec![
                Message::BoardDump([0; 64]),
                Message::EeMoves(vec![1, 2, 3]),
                Message::LongSerialNr("1234567890".into())
            ]
        );
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        // A deterministic pseudo-random stream covering every byte value.
        let mut parser = Parser::new();
        let mut x: u32 = 12345;
        for _ in 0..20_000 {
            let mut chunk = Vec::new();
            for _ in 0..(x % 17) {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                chunk.push((x >> 16) as u8);
            }
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let _ = parser.push(&chunk);
        }
    }
}
