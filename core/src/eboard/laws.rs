//! The Laws an electronic board lets the clock check: Art. 6.2a1 (a checkmate
//! or stalemate on the board ends the game: stop the clock), Art. 6.4 (at a
//! flag, did the side complete the moves the stage required?) and Art. 6.9
//! (a flag loses, unless the opponent cannot checkmate by any series of
//! legal moves: then it is a draw).
//!
//! Promises: pure functions of a position and counts; never panic.
//!
//! Limits of [`can_checkmate`]: it decides from *material* only, the
//! classification used by `shakmaty`/lichess. It answers `false` exactly for
//! material that can never give mate whatever the moves: a bare king; a king
//! and one knight when the opponent has nothing but a king and queens (with
//! any other piece or pawn the opponent could block its own king); kings and
//! bishops all on squares of one colour when no knight or pawn stands on the
//! board. It does not detect dead positions that depend on where the pieces
//! stand (locked pawn chains, a fortress of blocked pieces), so it may answer
//! `true` where a full analysis would find no mate: it never turns a loss
//! into a draw wrongly, but the arbiter still judges those rare positions.

use shakmaty::fen::Fen;
use shakmaty::{Bitboard, CastlingMode, Chess, Color, Position, Role};

use crate::engine::Side;

/// Why the game ended on the board (Art. 6.2a1: the clock stops).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GameEndReason {
    Checkmate,
    Stalemate,
}

/// The clock side of a chess colour.
pub fn side_of(color: Color) -> Side {
    match color {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

fn color_of(side: Side) -> Color {
    match side {
        Side::White => Color::White,
        Side::Black => Color::Black,
    }
}

/// Whether `side` has material to checkmate the opponent by some series of
/// legal moves (Art. 6.9). See the module docs for the limits.
pub fn can_checkmate(position: &Chess, side: Side) -> bool {
    let board = position.board();
    let us = board.by_color(color_of(side));
    let them = board.by_color(!color_of(side));
    if (us & (board.pawns() | board.rooks_and_queens())).any() {
        return true;
    }
    let our_knights = us & board.knights();
    let our_bishops = us & board.bishops();
    if our_knights.any() {
        // Two minor pieces (knights, or knight and bishop) can mate a bare
        // king with its help; one knight only against blocking material.
        if (us & !board.kings()).count() >= 2 {
            return true;
        }
        let blockers = them & !board.kings() & !board.queens();
        return blockers.any();
    }
    if our_bishops.any() {
        let all_bishops = board.bishops();
        let one_colour = (all_bishops & Bitboard::DARK_SQUARES).is_empty()
            || (all_bishops & Bitboard::LIGHT_SQUARES).is_empty();
        // Bishops of one colour can never attack a king on the other
        // colour; opposite bishops, knights or pawns can block a king in.
        return !(one_colour && board.knights().is_empty() && board.pawns().is_empty());
    }
    false
}

/// Checkmate or stalemate in `position` (Art. 6.2a1 / 5.1, 5.2: the game is
/// over, the clock stops), with the winner of a checkmate.
pub fn game_end(position: &Chess) -> Option<(GameEndReason, Option<Side>)> {
    if position.is_checkmate() {
        Some((
            GameEndReason::Checkmate,
            Some(side_of(position.turn()).other()),
        ))
    } else if position.is_stalemate() {
        Some((GameEndReason::Stalemate, None))
    } else {
        None
    }
}

/// Art. 6.4: had the side completed the moves its stage required?
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StageCheck {
    /// Moves required by the end of the stage, counted from the start of
    /// the game (40 for "40 moves in 90 min", 60 at the end of a second
    /// stage of 20 moves).
    pub required: u32,
    /// Moves the side completed on the board when its flag fell.
    pub completed: u32,
    pub fulfilled: bool,
    /// `required - completed` when not fulfilled, else 0.
    pub missing: u32,
}

/// Art. 6.4 for a side whose flag fell.
pub fn stage_check(required: u32, completed: u32) -> StageCheck {
    StageCheck {
        required,
        completed,
        fulfilled: completed >= required,
        missing: required.saturating_sub(completed),
    }
}

/// What the arbiter is told at a flag fall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagVerdict {
    /// The required moves were completed (Art. 6.4): the flag does not lose.
    MovesCompleted,
    /// Art. 6.9: the flagged side loses.
    Loss,
    /// Art. 6.9: the opponent cannot checkmate by any series of legal
    /// moves: the game is drawn.
    Draw,
    /// The game had already ended on the board (checkmate or stalemate).
    GameAlreadyOver,
}

/// The report for a flag fall, from the board's position and move count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FlagReport {
    pub flagged: Side,
    /// `None` when the stage had no move requirement (sudden death).
    pub stage: Option<StageCheck>,
    /// Whether the flagged side's opponent has mating material.
    pub opponent_can_mate: bool,
    pub verdict: FlagVerdict,
}

/// Art. 6.4 and 6.9 at `flagged`'s flag: `required` moves of its stage
/// (`None` in sudden death), `completed` moves counted on the board.
pub fn flag_report(
    position: &Chess,
    flagged: Side,
    required: Option<u32>,
    completed: u32,
) -> FlagReport {
    let stage = required.map(|r| stage_check(r, completed));
    let opponent_can_mate = can_checkmate(position, flagged.other());
    let verdict = if game_end(position).is_some() {
        FlagVerdict::GameAlreadyOver
    } else if stage.is_some_and(|s| s.fulfilled) {
        FlagVerdict::MovesCompleted
    } else if opponent_can_mate {
        FlagVerdict::Loss
    } else {
        FlagVerdict::Draw
    };
    FlagReport {
        flagged,
        stage,
        opponent_can_mate,
        verdict,
    }
}

/// A position from a FEN (as carried by [`super::detect::DetectedMove`]).
pub fn position_from_fen(fen: &str) -> Result<Chess, String> {
    let parsed: Fen = fen.parse().map_err(|e| format!("bad FEN `{fen}`: {e}"))?;
    parsed
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("impossible position `{fen}`: {e}"))
}

/// Counts of each role, for reports ("K+B vs K").
pub fn material_summary(position: &Chess, side: Side) -> String {
    let material = position.board().material_side(color_of(side));
    let mut out = String::from("K");
    for (role, letter) in [
        (Role::Queen, 'Q'),
        (Role::Rook, 'R'),
        (Role::Bishop, 'B'),
        (Role::Knight, 'N'),
        (Role::Pawn, 'P'),
    ] {
        for _ in 0..material[role] {
            out.push(letter);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Chess {
        position_from_fen(fen).unwrap()
    }

    #[test]
    fn bare_king_cannot_mate() {
        let p = pos("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        assert!(!can_checkmate(&p, Side::White));
        assert!(!can_checkmate(&p, Side::Black));
        assert_eq!(material_summary(&p, Side::White), "K");
    }

    #[test]
    fn king_and_minor_against_bare_king_cannot_mate() {
        let knight = pos("4k3/8/8/8/8/8/8/4KN2 w - - 0 1");
        assert!(!can_checkmate(&knight, Side::White));
        let bishop = pos("4k3/8/8/8/8/8/8/4KB2 w - - 0 1");
        assert!(!can_checkmate(&bishop, Side::White));
    }

    #[test]
    fn bishops_of_one_colour_cannot_mate() {
        // f1 and c8 are both light squares.
        let p = pos("2b1k3/8/8/8/8/8/8/4KB2 w - - 0 1");
        assert!(!can_checkmate(&p, Side::White));
        assert!(!can_checkmate(&p, Side::Black));
        // c1 is dark: opposite bishops can mate (the other bishop blocks).
        let opposite = pos("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1");
        assert!(can_checkmate(&opposite, Side::White));
    }

    #[test]
    fn knight_can_mate_when_the_opponent_can_block_itself() {
        let with_pawn = pos("4k3/4p3/8/8/8/8/8/4KN2 w - - 0 1");
        assert!(can_checkmate(&with_pawn, Side::White));
        let with_queen = pos("4k3/4q3/8/8/8/8/8/4KN2 w - - 0 1");
        assert!(!can_checkmate(&with_queen, Side::White));
        let two_knights = pos("4k3/8/8/8/8/8/8/4KNN1 w - - 0 1");
        assert!(can_checkmate(&two_knights, Side::White));
        let knight_bishop = pos("4k3/8/8/8/8/8/8/4KNB1 w - - 0 1");
        assert!(can_checkmate(&knight_bishop, Side::White));
    }

    #[test]
    fn pawn_rook_or_queen_can_mate() {
        for fen in [
            "4k3/8/8/8/8/8/P7/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/R3K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
        ] {
            assert!(can_checkmate(&pos(fen), Side::White), "{fen}");
            assert!(!can_checkmate(&pos(fen), Side::Black), "{fen}");
        }
    }

    #[test]
    fn agrees_with_shakmaty_on_material_classes() {
        for fen in [
            "4k3/8/8/8/8/8/8/4KN2 w - - 0 1",
            "4k3/4r3/8/8/8/8/8/4KN2 w - - 0 1",
            "2b1k3/8/8/8/8/8/8/4KB2 w - - 0 1",
            "2b1k3/8/8/3n4/8/8/8/4KB2 w - - 0 1",
            "4k3/8/8/8/8/8/8/4KNN1 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ] {
            let p = pos(fen);
            for side in Side::BOTH {
                assert_eq!(
                    can_checkmate(&p, side),
                    !p.has_insufficient_material(color_of(side)),
                    "{fen} {side}"
                );
            }
        }
    }

    #[test]
    fn art_6_4_moves_completed_or_not() {
        assert_eq!(
            stage_check(40, 39),
            StageCheck {
                required: 40,
                completed: 39,
                fulfilled: false,
                missing: 1
            }
        );
        assert_eq!(
            stage_check(40, 40),
            StageCheck {
                required: 40,
                completed: 40,
                fulfilled: true,
                missing: 0
            }
        );
        assert!(stage_check(60, 61).fulfilled);
    }

    #[test]
    fn flag_report_verdicts() {
        let middlegame = pos("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
        let r = flag_report(&middlegame, Side::White, Some(40), 39);
        assert_eq!(r.verdict, FlagVerdict::Loss);
        assert_eq!(r.stage.unwrap().missing, 1);
        assert!(r.opponent_can_mate);
        let r = flag_report(&middlegame, Side::White, Some(40), 40);
        assert_eq!(r.verdict, FlagVerdict::MovesCompleted);
        // White's flag falls; Black has only king and knight against king and
        // queen (nothing to block its own king with): a draw.
        let lone_knight = pos("4k3/8/2n5/8/8/8/8/3QK3 w - - 0 1");
        let r = flag_report(&lone_knight, Side::White, None, 55);
        assert_eq!(r.verdict, FlagVerdict::Draw);
        assert_eq!(r.stage, None);
        assert!(!r.opponent_can_mate);
        // Black's flag: White has a queen: a loss for Black.
        let r = flag_report(&lone_knight, Side::Black, None, 55);
        assert_eq!(r.verdict, FlagVerdict::Loss);
        // Mate already on the board.
        let mated = pos("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
        assert_eq!(
            game_end(&mated),
            Some((GameEndReason::Checkmate, Some(Side::Black)))
        );
        let r = flag_report(&mated, Side::White, None, 2);
        assert_eq!(r.verdict, FlagVerdict::GameAlreadyOver);
    }

    #[test]
    fn stalemate_is_a_game_end_without_winner() {
        let p = pos("7k/5Q2/8/8/8/8/8/K7 b - - 0 1");
        assert_eq!(game_end(&p), Some((GameEndReason::Stalemate, None)));
        assert_eq!(game_end(&Chess::default()), None);
    }

    #[test]
    fn bad_fen_is_an_error_not_a_panic() {
        assert!(position_from_fen("not a fen").is_err());
        assert!(position_from_fen("8/8/8/8/8/8/8/8 w - - 0 1").is_err());
    }
}
