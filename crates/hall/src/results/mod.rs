//! A round's results written for the pairing programs (pure, no I/O):
//! the TRF16 file with the round's result column filled in, and Vega's
//! `.res` import file.
//!
//! Promises: only the round's result character and the points of the
//! players whose result is known (a decided game, or a bye of the round)
//! change in the TRF (every other line and column stays as it was); a game
//! without a result is left out. The TRF26 records and the TRF16 reduction
//! are in [`trf26`].
//!
//! * **TRF16** (FIDE C.04 Annex 2): in each `001` line the round's block
//!   starts at column `92 + 10 (round - 1)`; its column 8 (99 for round 1)
//!   takes `1`, `=` or `0`; the points (columns 81-84, `%4.1f`) are the
//!   sum of the line's results (`1 + W F U` a point, `= D H` a half).
//! * **Vega `.res`**: a first line `pairs round`, then one line `white
//!   black code` per game, the players' numbers and Vega's result key: `1`
//!   (1-0), `0` (0-1), `5` (1/2-1/2). `pairs` counts the lines that
//!   follow.

use super::pairings::{round_column, trf_half_points, InputError};

pub mod trf26;

/// A game's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    WhiteWins,
    BlackWins,
    Draw,
}

impl Outcome {
    /// `1-0`, `0-1`, `1/2-1/2` (also `½-½`); anything else (`*`) is none.
    pub fn parse(result: &str) -> Option<Outcome> {
        match result.trim() {
            "1-0" => Some(Outcome::WhiteWins),
            "0-1" => Some(Outcome::BlackWins),
            "1/2-1/2" | "½-½" => Some(Outcome::Draw),
            _ => None,
        }
    }

    pub fn pgn(self) -> &'static str {
        match self {
            Outcome::WhiteWins => "1-0",
            Outcome::BlackWins => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }

    /// The TRF result characters: White's, Black's.
    fn trf(self) -> (char, char) {
        match self {
            Outcome::WhiteWins => ('1', '0'),
            Outcome::BlackWins => ('0', '1'),
            Outcome::Draw => ('=', '='),
        }
    }

    /// Vega's result key.
    fn vega(self) -> u8 {
        match self {
            Outcome::WhiteWins => 1,
            Outcome::BlackWins => 0,
            Outcome::Draw => 5,
        }
    }
}

/// A decided game: the players' numbers (TRF starting ranks) and the
/// outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameResult {
    pub white: u32,
    pub black: u32,
    pub outcome: Outcome,
}

/// The TRF16 text `trf` with round `round`'s results filled in from
/// `games` and the points of their players summed again. A game whose
/// players the file does not pair that way in that round is an error.
pub fn trf_with_results(trf: &str, round: u32, games: &[GameResult]) -> Result<String, InputError> {
    let column = round_column(round);
    let mut out = String::with_capacity(trf.len());
    let mut found = vec![0u8; games.len()];
    for (index, raw) in trf.split_inclusive('\n').enumerate() {
        let ending_len = raw.len() - raw.trim_end_matches(['\r', '\n']).len();
        let (line, ending) = raw.split_at(raw.len() - ending_len);
        if !line.starts_with("001") {
            out.push_str(raw);
            continue;
        }
        let mut chars: Vec<char> = line.chars().collect();
        let rank: Option<u32> = chars
            .get(4..8.min(chars.len()))
            .map(|c| c.iter().collect::<String>())
            .and_then(|text| text.trim().parse().ok());
        let opponent: Option<u32> = chars
            .get(column - 1..(column + 3).min(chars.len()))
            .map(|c| c.iter().collect::<String>())
            .and_then(|text| text.trim().parse().ok());
        let mut mine = None;
        for (at, game) in games.iter().enumerate() {
            let (white, black) = game.outcome.trf();
            if Some(game.white) == rank {
                mine = Some((at, game.black, white, 'w'));
            } else if Some(game.black) == rank {
                mine = Some((at, game.white, black, 'b'));
            }
        }
        if let Some((at, other, result, colour)) = mine {
            if opponent != Some(other) || chars.get(column + 3 + 1) != Some(&colour) {
                return Err(InputError {
                    line: index + 1,
                    column,
                    message: format!(
                        "round {round}: player {} does not play {other} with {} here",
                        rank.unwrap_or_default(),
                        if colour == 'w' { "white" } else { "black" }
                    ),
                });
            }
            found[at] += 1;
            if chars.len() < column + 7 {
                chars.resize(column + 7, ' ');
            }
            chars[column + 6] = result;
            sum_points(&mut chars);
        } else if opponent.unwrap_or(0) == 0
            && chars
                .get(column + 6)
                .is_some_and(|c| matches!(c.to_ascii_uppercase(), 'U' | 'F' | 'H' | 'Z'))
        {
            // A bye of the round: its points count.
            sum_points(&mut chars);
        }
        out.extend(chars);
        out.push_str(ending);
    }
    if let Some(missing) = found.iter().position(|count| *count != 2) {
        let game = games[missing];
        return Err(InputError {
            line: 0,
            column: 0,
            message: format!(
                "round {round}: players {} and {} are not both in the TRF file",
                game.white, game.black
            ),
        });
    }
    Ok(out)
}

/// Columns 81-84 of a `001` line: the sum of its round blocks' results.
fn sum_points(chars: &mut Vec<char>) {
    let mut halves = 0;
    let mut block = round_column(1) + 7;
    while block <= chars.len() {
        halves += trf_half_points(chars[block - 1]);
        block += 10;
    }
    if chars.len() < 84 {
        chars.resize(84, ' ');
    }
    let points = format!("{:>4}", format!("{}.{}", halves / 2, halves % 2 * 5));
    for (offset, c) in points.chars().enumerate() {
        chars[80 + offset] = c;
    }
}

/// Vega's `.res` file for round `round`'s decided games.
pub fn vega_res(round: u32, games: &[GameResult]) -> String {
    let mut text = format!("{} {round}\n", games.len());
    for game in games {
        text.push_str(&format!(
            "{} {} {}\n",
            game.white,
            game.black,
            game.outcome.vega()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const TRF: &str = include_str!("../../../../tests/data/hall/round2.trf");
    const EXPECTED: &str = include_str!("../../../../tests/data/hall/round2-results.trf");

    fn games() -> Vec<GameResult> {
        vec![
            GameResult {
                white: 2,
                black: 1,
                outcome: Outcome::BlackWins,
            },
            GameResult {
                white: 6,
                black: 5,
                outcome: Outcome::Draw,
            },
            GameResult {
                white: 4,
                black: 3,
                outcome: Outcome::WhiteWins,
            },
        ]
    }

    #[test]
    fn the_trf_gets_the_rounds_results_and_points() {
        let text = trf_with_results(TRF, 2, &games()).unwrap();
        assert_eq!(text, EXPECTED);
        // Only the result characters and the points changed.
        for (before, after) in TRF.lines().zip(text.lines()) {
            let changed: Vec<usize> = before
                .chars()
                .zip(after.chars())
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, _)| i + 1)
                .collect();
            assert!(
                changed.iter().all(|c| (81..=84).contains(c) || *c == 109),
                "{changed:?}\n{before}\n{after}"
            );
        }
    }

    #[test]
    fn a_partial_round_and_a_wrong_game() {
        let one = &games()[..1];
        let text = trf_with_results(TRF, 2, one).unwrap();
        let line = text.lines().find(|l| l.starts_with("001    1")).unwrap();
        assert_eq!(&line[80..84], " 2.0");
        assert_eq!(line.chars().nth(108), Some('1'));
        let untouched = text.lines().find(|l| l.starts_with("001    3")).unwrap();
        assert_eq!(
            untouched,
            TRF.lines().find(|l| l.starts_with("001    3")).unwrap()
        );
        let wrong = [GameResult {
            white: 1,
            black: 2,
            outcome: Outcome::Draw,
        }];
        let error = trf_with_results(TRF, 2, &wrong).unwrap_err();
        assert!(error.message.contains("does not play"), "{error}");
        let absent = [GameResult {
            white: 7,
            black: 8,
            outcome: Outcome::Draw,
        }];
        assert!(trf_with_results(TRF, 2, &absent).is_err());
    }

    #[test]
    fn vega_res_lists_the_decided_games() {
        let expected = include_str!("../../../../tests/data/hall/round2.res");
        assert_eq!(vega_res(2, &games()), expected);
        assert_eq!(vega_res(1, &[]), "0 1\n");
    }

    #[test]
    fn outcomes_from_pgn_results() {
        assert_eq!(Outcome::parse("1-0"), Some(Outcome::WhiteWins));
        assert_eq!(Outcome::parse("1/2-1/2"), Some(Outcome::Draw));
        assert_eq!(Outcome::parse("*"), None);
        assert_eq!(Outcome::Draw.pgn(), "1/2-1/2");
    }
}
