//! What stands on the board: 64 DGT piece codes, and conversions to and from
//! `shakmaty` boards.
//!
//! Index 0 is a8, 7 is h8, 8 is a7, ... 63 is h1 ("normal" orientation: the
//! connector on White's left). A board turned round reports every index as
//! `63 - index`; [`Orientation`] maps raw indices to these.

use shakmaty::{Board, Color, Piece, Role, Square};

use super::protocol::piece;

/// How the board stands relative to the players.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Orientation {
    /// Connector on White's left: raw index = canonical index.
    #[default]
    Normal,
    /// White sits on the connector side: canonical index = 63 - raw index.
    TurnedRound,
}

impl Orientation {
    /// The canonical index of a raw board index (0..=63).
    pub fn canonical(self, raw: u8) -> u8 {
        match self {
            Orientation::Normal => raw & 63,
            Orientation::TurnedRound => 63 - (raw & 63),
        }
    }
}

/// 64 piece codes in canonical order (0 = a8).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement(pub [u8; 64]);

/// The standard starting position, canonical order.
pub const START_CODES: [u8; 64] = {
    let mut squares = [0u8; 64];
    let back_black = [8, 9, 10, 12, 11, 10, 9, 8];
    let back_white = [2, 3, 4, 6, 5, 4, 3, 2];
    let mut i = 0;
    while i < 8 {
        squares[i] = back_black[i];
        squares[8 + i] = piece::BPAWN;
        squares[48 + i] = piece::WPAWN;
        squares[56 + i] = back_white[i];
        i += 1;
    }
    squares
};

impl Placement {
    pub const START: Placement = Placement(START_CODES);
    pub const EMPTY: Placement = Placement([0; 64]);

    /// Raw board codes seen from `orientation`, in canonical order.
    pub fn from_raw(raw: &[u8; 64], orientation: Orientation) -> Placement {
        let mut squares = [0u8; 64];
        for (index, &code) in raw.iter().enumerate() {
            squares[usize::from(orientation.canonical(index as u8))] = code & 0x0f;
        }
        Placement(squares)
    }

    /// The raw codes a board standing in `orientation` would report.
    pub fn to_raw(&self, orientation: Orientation) -> [u8; 64] {
        let mut raw = [0u8; 64];
        for (index, slot) in raw.iter_mut().enumerate() {
            *slot = self.0[usize::from(orientation.canonical(index as u8))];
        }
        raw
    }

    /// The orientation in which these raw codes are the starting position.
    pub fn start_orientation(raw: &[u8; 64]) -> Option<Orientation> {
        [Orientation::Normal, Orientation::TurnedRound]
            .into_iter()
            .find(|&o| Placement::from_raw(raw, o) == Placement::START)
    }

    pub fn code_at(&self, square: Square) -> u8 {
        self.0[index_of(square)]
    }

    /// The `shakmaty` board, or `None` if a "magic" result piece stands on it.
    pub fn to_board(&self) -> Option<Board> {
        let mut board = Board::empty();
        for (index, &code) in self.0.iter().enumerate() {
            if code == piece::EMPTY {
                continue;
            }
            board.set_piece_at(square_of(index), piece_of(code)?);
        }
        Some(board)
    }

    pub fn from_board(board: &Board) -> Placement {
        let mut squares = [0u8; 64];
        for (square, p) in board.iter() {
            squares[index_of(square)] = code_of(p);
        }
        Placement(squares)
    }

    /// The first "magic" result piece on the board, if any.
    pub fn magic_piece(&self) -> Option<u8> {
        self.0
            .iter()
            .copied()
            .find(|c| (piece::MAGIC_DRAW..=piece::MAGIC_BLACK_WINS).contains(c))
    }

    /// The board part of a FEN (`?` marks a square the FEN cannot express).
    pub fn board_fen(&self) -> String {
        let mut out = String::new();
        for rank in 0..8 {
            let mut empty = 0;
            for file in 0..8 {
                let code = self.0[rank * 8 + file];
                if code == piece::EMPTY {
                    empty += 1;
                    continue;
                }
                if empty > 0 {
                    out.push(char::from(b'0' + empty));
                    empty = 0;
                }
                out.push(match piece_of(code) {
                    Some(p) => p.char(),
                    None => '?',
                });
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if rank < 7 {
                out.push('/');
            }
        }
        out
    }
}

impl std::fmt::Debug for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Placement({})", self.board_fen())
    }
}

/// The `shakmaty` square of a canonical index.
pub fn square_of(index: usize) -> Square {
    Square::new((index as u32 ^ 56) & 63)
}

/// The canonical index of a square.
pub fn index_of(square: Square) -> usize {
    square.to_usize() ^ 56
}

/// The piece of a board code (`None` for empty and the magic pieces).
pub fn piece_of(code: u8) -> Option<Piece> {
    let (color, role) = match code {
        piece::WPAWN => (Color::White, Role::Pawn),
        piece::WROOK => (Color::White, Role::Rook),
        piece::WKNIGHT => (Color::White, Role::Knight),
        piece::WBISHOP => (Color::White, Role::Bishop),
        piece::WKING => (Color::White, Role::King),
        piece::WQUEEN => (Color::White, Role::Queen),
        piece::BPAWN => (Color::Black, Role::Pawn),
        piece::BROOK => (Color::Black, Role::Rook),
        piece::BKNIGHT => (Color::Black, Role::Knight),
        piece::BBISHOP => (Color::Black, Role::Bishop),
        piece::BKING => (Color::Black, Role::King),
        piece::BQUEEN => (Color::Black, Role::Queen),
        _ => return None,
    };
    Some(Piece { color, role })
}

/// The board code of a piece.
pub fn code_of(p: Piece) -> u8 {
    let white = match p.role {
        Role::Pawn => piece::WPAWN,
        Role::Rook => piece::WROOK,
        Role::Knight => piece::WKNIGHT,
        Role::Bishop => piece::WBISHOP,
        Role::King => piece::WKING,
        Role::Queen => piece::WQUEEN,
    };
    match p.color {
        Color::White => white,
        Color::Black => white + 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_placement_is_the_standard_board() {
        assert_eq!(Placement::START.to_board(), Some(Board::new()));
        assert_eq!(Placement::from_board(&Board::new()), Placement::START);
        assert_eq!(
            Placement::START.board_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
    }

    #[test]
    fn index_zero_is_a8_and_63_is_h1() {
        assert_eq!(square_of(0), Square::A8);
        assert_eq!(square_of(7), Square::H8);
        assert_eq!(square_of(63), Square::H1);
        assert_eq!(index_of(Square::E2), 52);
    }

    #[test]
    fn turned_round_board_is_detected_and_mapped() {
        let raw = Placement::START.to_raw(Orientation::TurnedRound);
        assert_eq!(raw[3], piece::WKING, "e1 is raw index 3 when turned round");
        assert_eq!(
            Placement::start_orientation(&raw),
            Some(Orientation::TurnedRound)
        );
        assert_eq!(
            Placement::start_orientation(&START_CODES),
            Some(Orientation::Normal)
        );
        assert_eq!(Placement::start_orientation(&[0; 64]), None);
        assert_eq!(
            Placement::from_raw(&raw, Orientation::TurnedRound),
            Placement::START
        );
    }

    #[test]
    fn magic_pieces_have_no_board() {
        let mut p = Placement::START;
        p.0[20] = piece::MAGIC_DRAW;
        assert_eq!(p.to_board(), None);
        assert_eq!(p.magic_piece(), Some(piece::MAGIC_DRAW));
        assert!(p.board_fen().contains('?'));
    }
}
