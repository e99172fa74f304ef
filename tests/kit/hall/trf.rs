//! An independent reader of TRF files (16 or 26) as FIDE's format
//! describes them (Handbook C.02.03, annex A), sharing no code with the
//! hub's writer: the exports of the hall tests are read back with it.

use std::collections::BTreeMap;

/// One round of a player's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The opponent's starting rank, 0 for none (`0000` or blank).
    pub opponent: u32,
    /// `w`, `b` or `-`.
    pub colour: char,
    /// The result code, upper case; `Z` for a blank.
    pub result: char,
}

#[derive(Debug)]
pub struct Player {
    pub name: String,
    /// Tenths of a point, as written in columns 81-84.
    pub points: u32,
    pub rounds: Vec<Round>,
}

#[derive(Debug, Default)]
pub struct File {
    pub players: BTreeMap<u32, Player>,
    /// Other records, by their code (columns 1-3): the rest of the line
    /// from column 5.
    pub records: Vec<(String, String)>,
}

/// Columns `from`-`to` (1-based, inclusive) of a line, trimmed.
fn columns(line: &[char], from: usize, to: usize) -> String {
    line.iter()
        .skip(from - 1)
        .take(to + 1 - from)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Tenths of a point a result code is worth (the default scoring:
/// win, forfeit win, full-point and pairing-allocated byes 1; draws
/// and half-point byes 1/2).
pub fn tenths(code: char) -> u32 {
    match code {
        '1' | '+' | 'W' | 'F' | 'U' => 10,
        '=' | 'D' | 'H' => 5,
        _ => 0,
    }
}

pub fn read(text: &str) -> File {
    let mut file = File::default();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let code = columns(&chars, 1, 3);
        if code != "001" {
            file.records
                .push((code, columns(&chars, 5, chars.len().max(5))));
            continue;
        }
        let rank: u32 = columns(&chars, 5, 8).parse().expect("a starting rank");
        let points = columns(&chars, 81, 84);
        let (whole, half) = points.split_once('.').expect("points as 11.5");
        let points = whole.parse::<u32>().unwrap() * 10 + half.parse::<u32>().unwrap();
        let mut rounds = Vec::new();
        let mut start = 92;
        while start <= chars.len() {
            let opponent = columns(&chars, start, start + 3);
            let colour = chars.get(start + 4).copied().unwrap_or(' ');
            let result = chars.get(start + 6).copied().unwrap_or(' ');
            rounds.push(Round {
                opponent: if opponent.is_empty() {
                    0
                } else {
                    opponent.parse().expect("an opponent's rank")
                },
                colour: if colour == ' ' { '-' } else { colour },
                result: if result == ' ' {
                    'Z'
                } else {
                    result.to_ascii_uppercase()
                },
            });
            start += 10;
        }
        let player = Player {
            name: columns(&chars, 15, 47),
            points,
            rounds,
        };
        assert!(
            file.players.insert(rank, player).is_none(),
            "rank {rank} twice"
        );
    }
    file
}
