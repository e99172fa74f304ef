//! Synthetic placement sequences for every case of the reference's algorithm.

use super::*;
use crate::eboard::placement::{code_of, index_of, piece_of};
use shakmaty::Color;

const MS: Micros = 1_000;

/// A hand moving pieces on a board the detector watches.
struct Hand {
    det: MoveDetector,
    board: Placement,
    now: Micros,
    events: Vec<BoardEvent>,
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

fn code(c: char) -> u8 {
    let role = shakmaty::Role::from_char(c).unwrap();
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    code_of(shakmaty::Piece { color, role })
}

impl Hand {
    fn new() -> Hand {
        let mut hand = Hand {
            det: MoveDetector::new(DetectorConfig::default()),
            board: Placement::START,
            now: 0,
            events: Vec::new(),
        };
        hand.show();
        hand
    }

    /// A game under way from a FEN.
    fn from_fen(fen: &str) -> Hand {
        let det = MoveDetector::resume(DetectorConfig::default(), Some(fen), &[]).unwrap();
        let board = Placement::from_board(det.position().board());
        let mut hand = Hand {
            det,
            board,
            now: 0,
            events: Vec::new(),
        };
        hand.show();
        hand.events.clear();
        hand
    }

    fn show(&mut self) -> Vec<BoardEvent> {
        self.now += 100 * MS;
        let events = self.det.placement(self.now, &self.board.clone());
        self.events.extend(events.clone());
        events
    }

    fn lift(&mut self, square: &str) -> Vec<BoardEvent> {
        self.board.0[index_of(sq(square))] = 0;
        self.show()
    }

    fn put(&mut self, square: &str, piece: char) -> Vec<BoardEvent> {
        self.board.0[index_of(sq(square))] = code(piece);
        self.show()
    }

    /// Lift from `from`, put on `to`, as one gesture.
    fn slide(&mut self, from: &str, to: &str) -> Vec<BoardEvent> {
        let p = piece_of(self.board.code_at(sq(from))).unwrap().char();
        let mut events = self.lift(from);
        events.extend(self.put(to, p));
        events
    }

    fn wait(&mut self, ms: Micros) -> Vec<BoardEvent> {
        self.now += ms * MS;
        let events = self.det.tick(self.now);
        self.events.extend(events.clone());
        events
    }

    /// A clock press of `side`.
    fn press(&mut self, side: Side) -> Vec<BoardEvent> {
        let events = self.det.clock_pressed(self.now, side);
        self.events.extend(events.clone());
        events
    }

    fn ucis(&self) -> Vec<String> {
        self.det.moves().into_iter().map(|m| m.uci).collect()
    }

    fn sans(&self) -> Vec<String> {
        self.det.moves().into_iter().map(|m| m.san).collect()
    }
}

fn moves_in(events: &[BoardEvent]) -> Vec<(u32, String, MoveStatus)> {
    events
        .iter()
        .filter_map(|e| match e {
            BoardEvent::MoveDetected(m) => Some((m.ply, m.uci.clone(), m.status)),
            _ => None,
        })
        .collect()
}

use MoveStatus::{Confirmed, Tentative};

#[test]
fn waits_for_the_starting_position() {
    let mut det = MoveDetector::new(DetectorConfig::default());
    let mut p = Placement::START;
    p.0[index_of(Square::E2)] = 0;
    assert_eq!(det.placement(0, &p), vec![]);
    assert!(!det.started());
    assert_eq!(
        det.tick(5_000 * MS),
        vec![],
        "nothing to report before the start"
    );
    assert_eq!(
        det.placement(6_000 * MS, &Placement::START),
        vec![BoardEvent::StartPosition { at: 6_000 * MS }]
    );
    assert!(det.started());
}

#[test]
fn move_is_tentative_then_confirmed_after_quiet_time() {
    let mut h = Hand::new();
    let at = h.now;
    h.events.clear();
    let events = h.slide("e2", "e4");
    assert_eq!(moves_in(&events), vec![(1, "e2e4".into(), Tentative)]);
    let put_at = h.now;
    assert_eq!(h.det.next_deadline(), Some(put_at + 1_500 * MS));
    assert_eq!(h.wait(1_499), vec![]);
    let events = h.wait(1);
    assert_eq!(moves_in(&events), vec![(1, "e2e4".into(), Confirmed)]);
    match &events[0] {
        BoardEvent::MoveDetected(m) => {
            assert_eq!(m.side, Side::White);
            assert_eq!(m.san, "e4");
            assert_eq!(m.at, put_at, "the move happened when it was put down");
            assert_eq!(
                m.fen_after,
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(at < put_at);
    assert_eq!(h.det.next_deadline(), None);
}

#[test]
fn clock_press_confirms() {
    let mut h = Hand::new();
    h.slide("g1", "f3");
    let events = h.press(Side::White);
    assert_eq!(moves_in(&events), vec![(1, "g1f3".into(), Confirmed)]);
    assert_eq!(
        h.press(Side::White),
        vec![],
        "a second press has nothing to confirm"
    );
}

/// Issue 28, item 3: White's press for its move lands just after Black's
/// first placement, a stop on d6 on the way to d5. The press is White's: it
/// completes White's move, never Black's.
#[test]
fn press_of_the_side_that_moved_does_not_confirm_the_opponents_tentative_placement() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.events.clear();
    let events = h.slide("d7", "d6");
    assert_eq!(
        moves_in(&events),
        vec![(1, "e2e4".into(), Confirmed), (2, "d7d6".into(), Tentative)]
    );
    assert_eq!(h.press(Side::White), vec![], "White's press: Black's stop");
    assert!(h.det.last_is_tentative());
    let events = h.slide("d6", "d5");
    assert_eq!(
        moves_in(&events),
        vec![(2, "d7d5".into(), Tentative)],
        "d5 replaces the stop on d6"
    );
    assert_eq!(h.press(Side::White), vec![], "a second press of White's");
    let events = h.press(Side::Black);
    assert_eq!(moves_in(&events), vec![(2, "d7d5".into(), Confirmed)]);
    assert_eq!(h.sans(), vec!["e4", "d5"]);
    // With no press of Black's, the board standing still confirms.
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.slide("d7", "d6");
    h.press(Side::White);
    h.slide("d6", "d5");
    assert_eq!(moves_in(&h.wait(1_499)), vec![]);
    assert_eq!(moves_in(&h.wait(1)), vec![(2, "d7d5".into(), Confirmed)]);
    assert_eq!(h.sans(), vec!["e4", "d5"]);
}

#[test]
fn next_move_confirms_the_previous_one() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    let events = h.slide("e7", "e5");
    assert_eq!(
        moves_in(&events),
        vec![(1, "e2e4".into(), Confirmed), (2, "e7e5".into(), Tentative)]
    );
    match events.last() {
        Some(BoardEvent::MoveDetected(m)) => {
            assert_eq!((m.side, m.side_moves), (Side::Black, 1));
        }
        other => panic!("{other:?}"),
    }
    h.slide("g1", "f3");
    assert_eq!(h.det.moves().last().unwrap().side_moves, 2);
    assert_eq!(side_moves_after(3, Side::White, Side::White), 2);
    assert_eq!(side_moves_after(3, Side::White, Side::Black), 1);
    assert_eq!(side_moves_after(3, Side::Black, Side::Black), 2);
    assert_eq!(ply_of_side_move(Side::White, Side::White, 40), 79);
    assert_eq!(ply_of_side_move(Side::White, Side::Black, 40), 80);
    for ply in 1..=100 {
        let side = if ply % 2 == 1 {
            Side::White
        } else {
            Side::Black
        };
        let n = side_moves_after(ply, Side::White, side);
        assert_eq!(ply_of_side_move(Side::White, side, n), ply);
    }
    assert_eq!(h.det.moves_by(Side::White), 2);
    assert_eq!(h.det.moves_by(Side::Black), 1);
}

#[test]
fn pawn_put_down_on_the_intermediate_square() {
    let mut h = Hand::new();
    let events = h.slide("d2", "d3");
    assert_eq!(moves_in(&events), vec![(1, "d2d3".into(), Tentative)]);
    let events = h.slide("d3", "d4");
    assert_eq!(
        moves_in(&events),
        vec![(1, "d2d4".into(), Tentative)],
        "d4 replaces d3: it is a legal move from the position before"
    );
    h.wait(1_500);
    assert_eq!(h.ucis(), vec!["d2d4"]);
    // Once confirmed, d3 is history: a new tentative for Black follows.
    h.slide("h7", "h6");
    h.slide("h6", "h5");
    assert_eq!(h.ucis(), vec!["d2d4", "h7h5"]);
}

#[test]
fn slow_intermediate_square_is_confirmed_and_the_rest_is_reported() {
    let mut h = Hand::new();
    h.slide("d2", "d3");
    h.wait(1_500);
    h.events.clear();
    h.slide("d3", "d4");
    assert_eq!(h.ucis(), vec!["d2d3"], "a confirmed move is never replaced");
    let events = h.wait(1_500);
    assert!(matches!(
        events.as_slice(),
        [BoardEvent::Unrecognised { ply: 1, .. }]
    ));
}

#[test]
fn rook_sliding_along_the_rank() {
    let mut h = Hand::from_fen("4k3/8/8/8/8/8/8/R5K1 w - - 0 1");
    h.slide("a1", "d1");
    h.slide("d1", "e1");
    let events = h.slide("e1", "f1");
    assert_eq!(moves_in(&events), vec![(1, "a1f1".into(), Tentative)]);
    h.wait(1_500);
    assert_eq!(h.sans(), vec!["Rf1"]);
}

#[test]
fn captured_piece_lifted_first() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.slide("e7", "e5");
    h.slide("g1", "f3");
    h.slide("f7", "f6");
    h.events.clear();
    h.lift("e5"); // the captured pawn first
    h.lift("f3");
    let events = h.put("e5", 'N');
    assert_eq!(
        moves_in(&events),
        vec![(4, "f7f6".into(), Confirmed), (5, "f3e5".into(), Tentative)]
    );
    assert_eq!(h.sans().last().unwrap(), "Nxe5");
    assert!(!h
        .events
        .iter()
        .any(|e| matches!(e, BoardEvent::Unrecognised { .. })));
}

#[test]
fn capturing_piece_lifted_first() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.slide("d7", "d5");
    h.lift("e4");
    h.lift("d5");
    h.put("d5", 'P');
    assert_eq!(h.sans(), vec!["e4", "d5", "exd5"]);
}

const CASTLING: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";

#[test]
fn castling_king_first() {
    let mut h = Hand::from_fen(CASTLING);
    let events = h.slide("e1", "g1");
    assert_eq!(events, vec![], "king on g1 with the rook on h1 is no move");
    let events = h.slide("h1", "f1");
    assert_eq!(moves_in(&events), vec![(1, "e1g1".into(), Tentative)]);
    assert_eq!(h.sans(), vec!["O-O"]);
}

#[test]
fn castling_rook_first_replaces_the_rook_move() {
    let mut h = Hand::from_fen(CASTLING);
    let events = h.slide("h1", "f1");
    assert_eq!(moves_in(&events), vec![(1, "h1f1".into(), Tentative)]);
    let events = h.slide("e1", "g1");
    assert_eq!(moves_in(&events), vec![(1, "e1g1".into(), Tentative)]);
    h.press(Side::White);
    assert_eq!(h.sans(), vec!["O-O"]);
    // Black castles long, rook first, the king slid via d8.
    h.slide("a8", "d8");
    h.slide("e8", "d8");
    assert_eq!(
        h.ucis(),
        vec!["e1g1", "a8d8"],
        "king in the air: nothing yet"
    );
    h.lift("d8");
    h.put("d8", 'r');
    h.put("c8", 'k');
    assert_eq!(h.sans(), vec!["O-O", "O-O-O"]);
}

const EN_PASSANT: &str = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2";

#[test]
fn en_passant_captured_pawn_removed_first() {
    let mut h = Hand::from_fen(EN_PASSANT);
    h.lift("d5");
    let events = h.slide("e5", "d6");
    assert_eq!(moves_in(&events), vec![(1, "e5d6".into(), Tentative)]);
    assert_eq!(h.sans(), vec!["exd6"]);
}

#[test]
fn en_passant_captured_pawn_removed_after() {
    let mut h = Hand::from_fen(EN_PASSANT);
    let events = h.slide("e5", "d6");
    assert_eq!(events, vec![], "both pawns on the board is no move");
    let events = h.lift("d5");
    assert_eq!(moves_in(&events), vec![(1, "e5d6".into(), Tentative)]);
}

const PROMOTION: &str = "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1";

#[test]
fn promotion_reads_the_new_piece() {
    let mut h = Hand::from_fen(PROMOTION);
    h.lift("a7");
    let events = h.put("a8", 'Q');
    assert_eq!(moves_in(&events), vec![(1, "a7a8q".into(), Tentative)]);
    assert_eq!(h.sans(), vec!["a8=Q"], "the b8 knight blocks the check");
}

#[test]
fn promotion_pawn_put_down_first_then_exchanged() {
    let mut h = Hand::from_fen(PROMOTION);
    h.lift("b8"); // capture on b8, to a knight
    h.lift("a7");
    assert_eq!(
        h.put("b8", 'P'),
        vec![],
        "a pawn on the last rank is no move"
    );
    h.lift("b8");
    let events = h.put("b8", 'N');
    assert_eq!(moves_in(&events), vec![(1, "a7b8n".into(), Tentative)]);
    assert_eq!(h.sans(), vec!["axb8=N"]);
}

#[test]
fn takeback_to_an_earlier_position_newest_first() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.slide("e7", "e5");
    h.slide("g1", "f3");
    h.press(Side::White);
    h.events.clear();
    // Black lifts the knight back first: an earlier position (ply 2).
    let events = h.slide("f3", "g1");
    assert!(
        matches!(events.as_slice(), [BoardEvent::TakeBack { to_ply: 2, .. }]),
        "{events:?}"
    );
    assert_eq!(h.ucis(), vec!["e2e4", "e7e5"]);
    let events = h.slide("e5", "e7");
    assert!(matches!(
        events.as_slice(),
        [BoardEvent::TakeBack { to_ply: 1, .. }]
    ));
    assert_eq!(h.ucis(), vec!["e2e4"]);
    // And play goes on from there.
    h.slide("c7", "c5");
    assert_eq!(h.ucis(), vec!["e2e4", "c7c5"]);
}

#[test]
fn a_forward_move_wins_over_a_takeback() {
    let mut h = Hand::new();
    h.slide("g1", "f3");
    h.slide("g8", "f6");
    h.slide("f3", "g1");
    h.events.clear();
    // The placement is now the starting one: an earlier position, but also
    // Black's legal Ng8.
    let events = h.slide("f6", "g8");
    assert_eq!(
        moves_in(&events),
        vec![(3, "f3g1".into(), Confirmed), (4, "f6g8".into(), Tentative)]
    );
    assert_eq!(h.det.ply(), 4);
}

#[test]
fn kings_in_the_centre_signal_the_result_not_a_move() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.press(Side::White);
    h.events.clear();
    // Both kings on the dark centre squares: Black wins.
    h.lift("e1");
    assert_eq!(h.put("d4", 'K'), vec![]);
    h.lift("e8");
    let events = h.put("e5", 'k');
    assert!(matches!(
        events.as_slice(),
        [BoardEvent::ResultSignal {
            result: SignalledResult::BlackWins,
            ..
        }]
    ));
    assert!(h.det.finished());
    // Unchanged for long: still no move, no report.
    assert_eq!(h.wait(5_000), vec![]);
    assert_eq!(h.ucis(), vec!["e2e4"]);
    // The game is over: the kings going back, pieces lifted, nothing is
    // followed and nothing is reported; the game stays as it was.
    h.slide("d4", "e1");
    h.slide("e5", "e8");
    h.lift("a7");
    assert_eq!(h.wait(5_000), vec![]);
    assert_eq!(h.ucis(), vec!["e2e4"]);
    assert!(!h.events.iter().any(|e| matches!(
        e,
        BoardEvent::TakeBack { .. } | BoardEvent::Unrecognised { .. }
    )));
    // The start position complete: the board's next game begins.
    h.put("a7", 'p');
    let events = h.slide("e4", "e2");
    assert!(
        matches!(events.as_slice(), [BoardEvent::StartPosition { .. }]),
        "{events:?}"
    );
    assert!(!h.det.finished());
    assert_eq!(h.det.ply(), 0);
    let events = h.slide("d2", "d4");
    assert_eq!(moves_in(&events), vec![(1, "d2d4".into(), Tentative)]);
}

#[test]
fn a_finished_game_survives_the_reset_and_the_start_begins_the_next_one() {
    let mut h = Hand::new();
    h.slide("f2", "f3");
    h.slide("e7", "e5");
    h.slide("g2", "g4");
    h.slide("d8", "h4");
    let mate_at = h.now;
    let events = h.wait(1_500);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, BoardEvent::GameEnd { at, .. } if *at == mate_at)),
        "the game ends at the mating placement's instant: {events:?}"
    );
    h.events.clear();
    // The pieces go back one by one: the last one completes the start.
    h.slide("h4", "d8");
    h.slide("g4", "g2");
    h.slide("e5", "e7");
    assert_eq!(h.wait(3_000), vec![]);
    assert_eq!(h.det.ply(), 4, "the finished game is kept as it was");
    let events = h.slide("f3", "f2");
    assert_eq!(events, vec![BoardEvent::StartPosition { at: h.now }]);
    let events = h.slide("e2", "e4");
    assert_eq!(moves_in(&events), vec![(1, "e2e4".into(), Tentative)]);
}

#[test]
fn finish_from_outside_and_new_game_with_the_start_already_standing() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    // A flag falls: the shell finishes the game, the tentative move stands.
    let events = h.det.finish(h.now);
    assert_eq!(moves_in(&events), vec![(1, "e2e4".into(), Confirmed)]);
    h.events.clear();
    h.slide("e4", "e2");
    assert_eq!(h.det.ply(), 0, "the start after a finished game: next game");
    assert!(matches!(
        h.events.as_slice(),
        [BoardEvent::StartPosition { .. }]
    ));
    // The arbiter's `new` with the start already on the board: followed at
    // once, with no change of placement needed.
    let events = h.det.new_game(h.now);
    assert_eq!(events, vec![BoardEvent::StartPosition { at: h.now }]);
    let events = h.slide("g1", "f3");
    assert_eq!(moves_in(&events), vec![(1, "g1f3".into(), Tentative)]);
    // `new` in the middle of a game: wait for the start position.
    assert_eq!(h.det.new_game(h.now), vec![]);
    assert!(!h.det.started());
    let events = h.slide("f3", "g1");
    assert!(matches!(
        events.as_slice(),
        [BoardEvent::StartPosition { .. }]
    ));
}

#[test]
fn result_signal_colours() {
    let with_kings = |white: Square, black: Square| {
        let mut p = Placement::START;
        p.0[index_of(Square::E1)] = 0;
        p.0[index_of(Square::E8)] = 0;
        p.0[index_of(white)] = piece::WKING;
        p.0[index_of(black)] = piece::BKING;
        result_signal(&p)
    };
    assert_eq!(
        with_kings(Square::E4, Square::D5),
        Some(SignalledResult::WhiteWins)
    );
    assert_eq!(
        with_kings(Square::D4, Square::E5),
        Some(SignalledResult::BlackWins)
    );
    assert_eq!(
        with_kings(Square::D4, Square::D5),
        Some(SignalledResult::Draw)
    );
    assert_eq!(with_kings(Square::D4, Square::C5), None);
    let mut p = Placement::START;
    p.0[0] = piece::MAGIC_BLACK_WINS;
    assert_eq!(result_signal(&p), Some(SignalledResult::BlackWins));
}

#[test]
fn two_moves_deep_only_on_a_stable_placement() {
    let mut h = Hand::new();
    h.events.clear();
    // Both moves appear at once (e.g. the board was read after a reconnect).
    let mut both = Placement::START;
    for (from, to, c) in [("e2", "e4", 'P'), ("e7", "e5", 'p')] {
        both.0[index_of(sq(from))] = 0;
        both.0[index_of(sq(to))] = code(c);
    }
    h.board = both;
    assert_eq!(h.show(), vec![]);
    // Passing: changed again before it was stable: no search.
    h.wait(1_000);
    h.board = Placement::START;
    assert_eq!(h.show(), vec![]);
    assert_eq!(h.wait(1_500), vec![], "back to the position: nothing");
    // Now stable.
    h.board = both;
    h.show();
    assert_eq!(h.wait(1_499), vec![]);
    let events = h.wait(1);
    assert_eq!(
        moves_in(&events),
        vec![
            (1, "e2e4".into(), Tentative),
            (1, "e2e4".into(), Confirmed),
            (2, "e7e5".into(), Tentative)
        ]
    );
    assert_eq!(h.ucis(), vec!["e2e4", "e7e5"]);
}

#[test]
fn unrecognised_placement_is_reported_once_then_resynchronised() {
    let mut h = Hand::new();
    h.slide("e2", "e4");
    h.press(Side::White);
    h.events.clear();
    // A black pawn pushed from a7 to a4 and a knight misplaced: no legal fit.
    h.slide("a7", "a4");
    h.slide("b8", "b6");
    assert_eq!(h.wait(1_500).len(), 1);
    assert!(matches!(
        h.events.as_slice(),
        [BoardEvent::Unrecognised { ply: 1, placement_fen, .. }]
            if placement_fen == "r1bqkbnr/1ppppppp/1n6/8/p3P3/8/PPPP1PPP/RNBQKBNR"
    ));
    assert_eq!(h.wait(5_000), vec![], "reported once");
    assert_eq!(h.ucis(), vec!["e2e4"], "never guessed");
    h.slide("b6", "b8");
    let events = h.slide("a4", "a7");
    assert!(matches!(
        events.as_slice(),
        [BoardEvent::Synchronised { ply: 1, .. }]
    ));
}

#[test]
fn checkmate_ends_the_game_when_confirmed() {
    let mut h = Hand::new();
    h.slide("f2", "f3");
    h.slide("e7", "e5");
    h.slide("g2", "g4");
    h.events.clear();
    h.slide("d8", "h4");
    assert!(!h
        .events
        .iter()
        .any(|e| matches!(e, BoardEvent::GameEnd { .. })));
    let events = h.wait(1_500);
    assert!(
        matches!(
            events.as_slice(),
            [
                BoardEvent::MoveDetected(DetectedMove {
                    ply: 4,
                    status: Confirmed,
                    ..
                }),
                BoardEvent::GameEnd {
                    reason: GameEndReason::Checkmate,
                    winner: Some(Side::Black),
                    ply: 4,
                    ..
                }
            ]
        ),
        "{events:?}"
    );
    assert_eq!(h.sans().last().unwrap(), "Qh4#");
}

#[test]
fn stalemate_ends_the_game() {
    let mut h = Hand::from_fen("7k/8/6Q1/8/8/8/8/K7 w - - 0 1");
    h.slide("g6", "f7");
    let events = h.press(Side::White);
    assert!(matches!(
        events.as_slice(),
        [
            BoardEvent::MoveDetected(_),
            BoardEvent::GameEnd {
                reason: GameEndReason::Stalemate,
                winner: None,
                ..
            }
        ]
    ));
}

#[test]
fn resume_refuses_illegal_moves() {
    assert!(matches!(
        MoveDetector::resume(DetectorConfig::default(), None, &["e2e4", "e2e4"]),
        Err(ResumeError::IllegalMove { ply: 2, .. })
    ));
    assert!(matches!(
        MoveDetector::resume(DetectorConfig::default(), Some("nonsense"), &[]),
        Err(ResumeError::Fen { .. })
    ));
    let det =
        MoveDetector::resume(DetectorConfig::default(), None, &["e2e4", "c7c5", "g1f3"]).unwrap();
    assert_eq!(det.moves_by(Side::White), 2);
    assert_eq!(det.moves_by(Side::Black), 1);
    assert!(!det.last_is_tentative());
}

#[test]
fn lifting_and_replacing_a_piece_changes_nothing() {
    let mut h = Hand::new();
    h.events.clear();
    h.lift("g1");
    h.put("g1", 'N');
    assert_eq!(h.wait(5_000), vec![]);
    assert_eq!(h.events, vec![]);
}

#[test]
fn events_serialise_for_d_bus_and_logs() {
    let mut h = Hand::new();
    let events = h.slide("e2", "e4");
    let json = serde_json::to_string(&events[0]).unwrap();
    assert_eq!(
        json,
        format!(
            "{{\"event\":\"move-detected\",\"ply\":1,\"side\":\"white\",\"side_moves\":1,\
             \"san\":\"e4\",\"uci\":\"e2e4\",\"fen_after\":\"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\",\
             \"status\":\"tentative\",\"at\":{}}}",
            h.now
        )
    );
    let json = serde_json::to_string(&BoardEvent::ResultSignal {
        result: SignalledResult::Draw,
        at: 5,
    })
    .unwrap();
    assert_eq!(json, r#"{"event":"result-signal","result":"draw","at":5}"#);
}
