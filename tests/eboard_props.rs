//! Properties: the DGT parser and the move detector never panic on any
//! input, and the parser finds every whole message however reads split it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclockd::eboard::detect::{DetectorConfig, MoveDetector};
use chessclockd::eboard::placement::Placement;
use chessclockd::eboard::protocol::{
    encode_board_dump, encode_field_update, encode_message, message_id, Message, Parsed, Parser,
};
use chessclockd::engine::Side;
use proptest::prelude::*;
use shakmaty::Position;

fn message_strategy() -> impl Strategy<Value = (Vec<u8>, Message)> {
    prop_oneof![
        (0u8..64, 0u8..16).prop_map(|(square, piece)| (
            encode_field_update(square, piece),
            Message::FieldUpdate { square, piece }
        )),
        proptest::collection::vec(0u8..16, 64).prop_map(|codes| {
            let mut board = [0u8; 64];
            board.copy_from_slice(&codes);
            (encode_board_dump(&board), Message::BoardDump(board))
        }),
        (0u8..0x7f, 0u8..0x7f).prop_map(|(main, sub)| (
            encode_message(message_id::VERSION, &[main, sub]),
            Message::Version { main, sub }
        )),
        proptest::collection::vec(0u8..0x80, 0..40).prop_map(|payload| (
            encode_message(message_id::EE_MOVES, &payload),
            Message::EeMoves(payload)
        )),
    ]
}

proptest! {
    #[test]
    fn parser_never_panics(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..40)) {
        let mut parser = Parser::new();
        for chunk in chunks {
            let _ = parser.push(&chunk);
        }
    }

    #[test]
    fn parser_finds_messages_across_any_split(
        messages in proptest::collection::vec(message_strategy(), 1..20),
        garbage in proptest::collection::vec(0u8..0x80, 0..10),
        cuts in proptest::collection::vec(1usize..50, 1..100),
    ) {
        // Stray low bytes before the first header are dropped, never
        // mistaken for a message.
        let mut stream = garbage.clone();
        for (bytes, _) in &messages {
            stream.extend(bytes);
        }
        let mut parser = Parser::new();
        let mut found = Vec::new();
        let mut rest = stream.as_slice();
        let mut cut = cuts.iter().cycle();
        while !rest.is_empty() {
            let n = (*cut.next().unwrap()).min(rest.len());
            for parsed in parser.push(&rest[..n]) {
                if let Parsed::Message(m) = parsed {
                    found.push(m);
                }
            }
            rest = &rest[n..];
        }
        let want: Vec<Message> = messages.into_iter().map(|(_, m)| m).collect();
        prop_assert_eq!(found, want);
        prop_assert_eq!(parser.pending(), 0);
    }

    #[test]
    fn detector_never_panics_and_stays_consistent(
        edits in proptest::collection::vec(
            (0usize..64, 0usize..64, 0u8..16, any::<bool>(), 0i64..3_000_000, any::<bool>()),
            0..120,
        ),
    ) {
        let mut detector = MoveDetector::new(DetectorConfig::default());
        let mut placement = Placement::START;
        let mut now = 0;
        detector.placement(now, &placement);
        for (square, to, code, slide, wait, press) in edits {
            now += wait;
            if slide {
                // Piece-like gestures: a piece slides to another square.
                placement.0[to] = placement.0[square];
                placement.0[square] = 0;
            } else {
                placement.0[square] = code;
            }
            detector.placement(now, &placement);
            if press {
                // Either side's press, as the random codes fall.
                let side = if code % 2 == 0 { Side::White } else { Side::Black };
                detector.clock_pressed(now, side);
            }
            detector.tick(now);
            let moves = detector.moves();
            prop_assert_eq!(moves.len() as u32, detector.ply());
            for m in &moves {
                prop_assert!(chessclockd::eboard::laws::position_from_fen(&m.fen_after).is_ok());
            }
            // Whatever was detected is a legal game from the start.
            let ucis: Vec<&str> = moves.iter().map(|m| m.uci.as_str()).collect();
            let replay = MoveDetector::resume(DetectorConfig::default(), None, &ucis);
            prop_assert!(replay.is_ok());
            let (replayed, current) = (replay.unwrap().position(), detector.position());
            prop_assert_eq!(replayed.board(), current.board());
        }
    }
}
