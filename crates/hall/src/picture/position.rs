//! The position a board card shows: the e-board's FEN (the state's
//! `eboard.fen`) and its last move, found by replaying the game's PGN
//! (the state payload's `pgn`, the confirmed moves) with `shakmaty`.
//!
//! Promises: the last move is marked only when the replay reaches the
//! e-board's position (the PGN's last move), or reaches it in one more
//! legal move (a move on the board its clock has not confirmed yet);
//! otherwise the position is shown with no move marked. Never a guess.

use serde_json::{json, Value};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

/// `{"fen", "last"}` for a state payload whose e-board has a position
/// (`last`: the last move in UCI, `e2e4`, or `null`); `null` otherwise.
pub fn position(payload: &Value) -> Value {
    position_of(
        payload["state"]["eboard"]["fen"].as_str(),
        payload["pgn"].as_str(),
    )
}

/// [`position`] of a state's e-board FEN and PGN.
pub fn position_of(fen: Option<&str>, pgn: Option<&str>) -> Value {
    let Some(fen) = fen else {
        return Value::Null;
    };
    json!({"fen": fen, "last": last_move(fen, pgn)})
}

/// The move (UCI) that made the position `fen`, from the game `pgn`.
pub fn last_move(fen: &str, pgn: Option<&str>) -> Option<String> {
    let target: Fen = fen.trim().parse().ok()?;
    let board = target.as_setup().board.clone();
    let (start, sans) = game(pgn?)?;
    let mut position = start;
    let mut last: Option<Move> = None;
    for san in sans {
        let m = san.to_move(&position).ok()?;
        position = position.play(m).ok()?;
        last = Some(m);
    }
    if *position.board() == board {
        return last.map(|m| uci(&m));
    }
    // One move on the board beyond the record: found only if exactly one
    // legal move makes it.
    let mut ahead = position
        .legal_moves()
        .into_iter()
        .filter(|m| position.clone().play(*m).is_ok_and(|p| *p.board() == board));
    match (ahead.next(), ahead.next()) {
        (Some(m), None) => Some(uci(&m)),
        _ => None,
    }
}

fn uci(m: &Move) -> String {
    UciMove::from_standard(*m).to_string()
}

/// The game's start (its `FEN` tag, else the standard position) and its
/// main line's moves; `None` when the PGN cannot be read.
fn game(pgn: &str) -> Option<(Chess, Vec<San>)> {
    let mut start = Chess::default();
    let mut text = String::new();
    for line in pgn.lines() {
        let line = line.trim();
        if let Some(tag) = line.strip_prefix("[FEN \"") {
            let fen: Fen = tag.strip_suffix("\"]")?.parse().ok()?;
            start = fen.into_position(CastlingMode::Standard).ok()?;
        } else if line.starts_with('[') || line.starts_with('%') {
            continue;
        } else {
            text.push_str(line.split(';').next().unwrap_or(""));
            text.push(' ');
        }
    }
    let mut sans = Vec::new();
    let mut depth = 0usize; // inside a variation
    let mut comment = false;
    let mut token = String::new();
    // A token: a move number (`12.`, `12...`, or stuck to its move), a
    // NAG (`$1`), a result, or a move (its `!?` let go).
    let flush = |token: &mut String, depth: usize, sans: &mut Vec<San>| -> Option<()> {
        let result = matches!(token.as_str(), "1-0" | "0-1" | "1/2-1/2" | "*");
        let word = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if depth == 0 && !result && !word.is_empty() && !word.starts_with('$') {
            let word = word.trim_end_matches(['!', '?']);
            sans.push(word.parse::<shakmaty::san::SanPlus>().ok()?.san);
        }
        token.clear();
        Some(())
    };
    for c in text.chars() {
        if comment {
            comment = c != '}';
            continue;
        }
        match c {
            '{' | '(' | ')' => {
                flush(&mut token, depth, &mut sans)?;
                match c {
                    '{' => comment = true,
                    '(' => depth += 1,
                    _ => depth = depth.saturating_sub(1),
                }
            }
            c if c.is_whitespace() => flush(&mut token, depth, &mut sans)?,
            c => token.push(c),
        }
    }
    flush(&mut token, depth, &mut sans)?;
    Some((start, sans))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const RUY: &str = "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3";
    const PGN: &str = "[Event \"Open\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n\n\
        {1. White [%clk 0:05:00] [%emt 0:00:01]} 1. e4 {[%clk 0:04:59] [%emt 0:00:01]} \
        1... e5 {[%clk 0:04:58]} 2. Nf3 Nc6 (2... d6 3. d4) 3. Bb5 $1 *\n\n";

    #[test]
    fn the_last_move_is_the_pgn_s_when_it_reaches_the_e_board_s_position() {
        assert_eq!(last_move(RUY, Some(PGN)).as_deref(), Some("f1b5"));
    }

    #[test]
    fn one_unconfirmed_move_on_the_board_is_found_and_more_are_not_guessed() {
        let pgn = PGN.replace("3. Bb5 $1", "");
        assert_eq!(last_move(RUY, Some(&pgn)).as_deref(), Some("f1b5"));
        let two_behind = PGN.replace("Nc6 (2... d6 3. d4) 3. Bb5 $1", "");
        assert_eq!(last_move(RUY, Some(&two_behind)), None);
        assert_eq!(last_move(RUY, None), None);
        assert_eq!(last_move("not a fen", Some(PGN)), None);
        assert_eq!(last_move(RUY, Some("1. e4 Qxh8")), None);
    }

    #[test]
    fn castling_and_a_set_up_start_are_replayed() {
        let pgn = "[FEN \"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1\"]\n\n1. O-O O-O-O *";
        let fen = "2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2";
        assert_eq!(last_move(fen, Some(pgn)).as_deref(), Some("e8c8"));
    }

    #[test]
    fn a_payload_s_position_needs_an_e_board_fen() {
        let payload = json!({"state": {"eboard": {"fen": RUY}}, "pgn": PGN});
        assert_eq!(position(&payload), json!({"fen": RUY, "last": "f1b5"}));
        assert_eq!(position(&json!({"state": {"eboard": null}})), Value::Null);
        assert_eq!(position(&json!(null)), Value::Null);
    }
}
