//! A board card's mini board: the position of a FEN as an SVG, White at
//! the bottom, the last move's squares marked.
//!
//! Promises: pure (the same FEN and move, the same bytes); it draws the
//! pieces as discs with their letter (`K Q R B N`, pawns a smaller disc),
//! White's light with a dark rim, Black's dark: told apart by shape and
//! letter as well as shade, no font of chess glyphs needed; the last move's
//! squares are filled and outlined (dashed where the piece came from,
//! solid where it went), so the mark is a shape too. The picture names the
//! position in its `<title>` (the FEN as parsed, not as given).

use std::fmt::Write;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{Color, File, Rank, Role, Square};

/// One square's side in the picture's units.
const SQUARE: i32 = 45;
const LIGHT: &str = "#ebe6d6";
const DARK: &str = "#a39c88";
/// The last move's squares (a yellow that reads on both shades, and to
/// every colour vision).
const MOVED: &str = "#f3c43c";
/// The mark's outline.
const MARK: &str = "#1f4e9c";

/// The SVG of `fen`'s position (the placement field is enough), with the
/// move `last` (UCI, `e2e4`) marked; an error for a FEN or move that does
/// not parse.
pub fn board_svg(fen: &str, last: Option<&str>) -> Result<String, String> {
    let parsed: Fen = fen
        .trim()
        .parse()
        .map_err(|error| format!("not a FEN ({error})"))?;
    let marked = match last.filter(|l| !l.is_empty()) {
        None => None,
        Some(text) => match text.parse::<UciMove>() {
            Ok(UciMove::Normal { from, to, .. }) => Some((from, to)),
            Ok(UciMove::Put { to, .. }) => Some((to, to)),
            Ok(UciMove::Null) | Err(_) => return Err("not a move in UCI (e2e4)".to_owned()),
        },
    };
    let setup = parsed.as_setup();
    let side = SQUARE * 8;
    let mut svg = String::new();
    let title = match marked {
        Some((from, to)) => format!("{}, last move {from}-{to}", setup.board.board_fen()),
        None => setup.board.board_fen().to_string(),
    };
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {side} {side}\" role=\"img\">\
         <title>{title}</title>"
    );
    // The light squares as one background, the dark ones on it (a1 dark).
    let _ = writeln!(
        svg,
        "<rect width=\"{side}\" height=\"{side}\" fill=\"{LIGHT}\"/>"
    );
    for rank in (0..8u32).rev() {
        for file in (0..8u32).filter(|file| (file + rank) % 2 == 0) {
            let square = Square::from_coords(File::new(file), Rank::new(rank));
            let (x, y) = corner(square);
            let _ = writeln!(
                svg,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{SQUARE}\" height=\"{SQUARE}\" fill=\"{DARK}\"/>"
            );
        }
    }
    if let Some((from, to)) = marked {
        for (square, dash) in [(from, " stroke-dasharray=\"6 4\""), (to, "")] {
            let (x, y) = corner(square);
            let _ = writeln!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{MOVED}\" \
                 stroke=\"{MARK}\" stroke-width=\"3\"{dash}/>",
                x + 2,
                y + 2,
                SQUARE - 4,
                SQUARE - 4
            );
        }
    }
    for (square, piece) in setup.board.clone() {
        let (x, y) = corner(square);
        let (cx, cy) = (x + SQUARE / 2, y + SQUARE / 2);
        let (body, rim, ink) = match piece.color {
            Color::White => ("#ffffff", "#202020", "#202020"),
            Color::Black => ("#202020", "#202020", "#ffffff"),
        };
        if piece.role == Role::Pawn {
            let _ = writeln!(
                svg,
                "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"10\" fill=\"{body}\" stroke=\"{rim}\" stroke-width=\"2\"/>"
            );
            continue;
        }
        let letter = piece.role.upper_char();
        let _ = writeln!(
            svg,
            "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"18\" fill=\"{body}\" stroke=\"{rim}\" stroke-width=\"2\"/>\
             <text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\" font-family=\"sans-serif\" \
             font-weight=\"bold\" font-size=\"22\" fill=\"{ink}\">{letter}</text>",
            cy + 8
        );
    }
    svg.push_str("</svg>\n");
    Ok(svg)
}

/// The top-left corner of `square`, White at the bottom.
fn corner(square: Square) -> (i32, i32) {
    let file = i32::from(square.file());
    let rank = i32::from(square.rank());
    (file * SQUARE, (7 - rank) * SQUARE)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// After 1. e4 e5 2. Nf3 Nc6 3. Bb5, the last move marked. Run with
    /// `CHESSCLOCK_UPDATE_GOLDEN=1` to write the file again after a change
    /// meant (then look at it).
    #[test]
    fn a_known_position_draws_as_its_golden_file() {
        let svg = board_svg(
            "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
            Some("f1b5"),
        )
        .unwrap();
        let golden = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/picture/golden/ruy-lopez.svg"
        );
        if std::env::var_os("CHESSCLOCK_UPDATE_GOLDEN").is_some() {
            std::fs::write(golden, &svg).unwrap();
        }
        assert_eq!(svg, std::fs::read_to_string(golden).unwrap());
    }

    #[test]
    fn bad_input_is_an_error_and_none_of_it_reaches_the_picture() {
        assert!(board_svg("<script>", None).is_err());
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        assert!(board_svg(start, Some("e2e4\"/><script>")).is_err());
        assert!(board_svg(start, Some("0000")).is_err());
        let plain = board_svg(start, None).unwrap();
        assert_eq!(plain.matches("<circle").count(), 32);
        assert!(!plain.contains(MOVED));
        assert!(plain.contains(&format!("<title>{start}</title>")));
    }
}
