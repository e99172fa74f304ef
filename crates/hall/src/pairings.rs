//! A round's pairings, read from a FIDE TRF16 file or a plain CSV (pure,
//! no I/O), and the rule that puts each pairing's board number on a board
//! of the hall.
//!
//! Promises: any text gives pairings or an [`InputError`] naming the line
//! and column (1-based, in characters) of the first problem, never a
//! panic. Board numbers count from 1; a board number is given to at most
//! one pairing.
//!
//! * **TRF16** (FIDE C.04 Annex 2): one `001` line per player: starting
//!   rank in columns 5-8, title 11-13, name 15-47, rating 49-52,
//!   federation 54-56, FIDE id 58-68, points 81-84; round `r` in the
//!   10-column block from column `92 + 10 (r - 1)`: the opponent's
//!   starting rank in its columns 1-4 (`0000` or blank: no opponent), the
//!   colour in column 6 (`w`, `b`, `-`), the result in column 8. A player
//!   with no opponent in the round and a bye's letter in its result column
//!   (`U` pairing-allocated, `F` full-point, `H` half-point, `Z`
//!   zero-point; any case) has a bye ([`Bye`]); without a letter the
//!   player is simply not in the round. TRF16
//!   does not number boards: they are ordered as the FIDE general handling
//!   rules order them, by the score (before the round) of the pair's
//!   higher scorer, then the pair's total score, then the better starting
//!   rank of the two, highest first.
//! * **CSV**: `board,white,black` with an optional fourth column
//!   `control` (a notation or preset for that board); fields may be
//!   double-quoted (`"Carlsen, Magnus"`, `""` for a quote). A first line
//!   whose first field is not a number is a header naming the columns
//!   (`board`, `white`, `black`, and optionally `control`, `white_id`,
//!   `black_id`: the players' numbers, for the Vega export), in any order.
//!   Empty lines and lines starting with `#` are skipped.
//! * **Board map** (CSV `board,id`): which hall board plays pairing board
//!   N. Without one, board N is the hall board whose id ends in the number
//!   N (`7`, `b7`, `board07`), when exactly one does.

use std::collections::BTreeMap;
use std::fmt;

/// What is wrong with an input, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters; 0 when the whole file is meant.
    pub column: usize,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(
                f,
                "line {}, column {}: {}",
                self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for InputError {}

fn error(line: usize, column: usize, message: impl Into<String>) -> InputError {
    InputError {
        line,
        column,
        message: message.into(),
    }
}

/// One player of a pairing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Player {
    pub name: String,
    /// The starting rank (TRF) or the CSV's `*_id`: the number the
    /// results exports use.
    pub number: Option<u32>,
    pub rating: Option<u32>,
    pub title: Option<String>,
    pub federation: Option<String>,
    pub fide_id: Option<String>,
}

/// One board of the round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Counts from 1.
    pub board: u32,
    pub white: Player,
    pub black: Player,
    /// The control for this board (CSV `control`), if given.
    pub control: Option<String>,
}

impl Pairing {
    /// The PGN tags that name this board's game in round `round`:
    /// `White`, `Black`, `Round` (`R.B`), and each player's `*Elo`,
    /// `*Title`, `*FideId` and `*Federation` where known.
    pub fn tags(&self, round: u32) -> BTreeMap<String, String> {
        let mut tags = BTreeMap::new();
        tags.insert("Round".to_owned(), format!("{round}.{}", self.board));
        for (side, player) in [("White", &self.white), ("Black", &self.black)] {
            tags.insert(side.to_owned(), player.name.clone());
            if let Some(rating) = player.rating {
                tags.insert(format!("{side}Elo"), rating.to_string());
            }
            if let Some(title) = &player.title {
                tags.insert(format!("{side}Title"), title.clone());
            }
            if let Some(id) = &player.fide_id {
                tags.insert(format!("{side}FideId"), id.clone());
            }
            if let Some(federation) = &player.federation {
                tags.insert(format!("{side}Federation"), federation.clone());
            }
        }
        tags
    }
}

/// A player's bye in the round, as the TRF gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bye {
    pub player: Player,
    /// `U` (pairing-allocated), `F` (full point), `H` (half point) or `Z`
    /// (zero points), upper case.
    pub code: char,
}

impl Bye {
    /// What the bye is, in words.
    pub fn kind(&self) -> &'static str {
        match self.code {
            'U' => "pairing-allocated bye",
            'F' => "full-point bye",
            'H' => "half-point bye",
            _ => "zero-point bye",
        }
    }
}

/// Where pairings came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The TRF16 file's text (the results export updates it).
    Trf(String),
    Csv,
}

/// A round's pairings, in board order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairings {
    pub round: u32,
    pub games: Vec<Pairing>,
    /// The round's byes (a TRF's; a CSV has none), by player number.
    pub byes: Vec<Bye>,
    pub source: Source,
}

impl Pairings {
    /// Reads a TRF16 file (any line starting `001`) or else a CSV.
    pub fn parse(text: &str, round: u32) -> Result<Pairings, InputError> {
        if text.lines().any(|line| line.starts_with("001")) {
            parse_trf(text, round)
        } else {
            parse_csv(text, round)
        }
    }

    /// The pairing of board `board`.
    pub fn board(&self, board: u32) -> Option<&Pairing> {
        self.games.iter().find(|game| game.board == board)
    }
}

/// The characters of `line` from 1-based column `from` to `to` (inclusive),
/// trimmed; empty past the line's end.
fn field(chars: &[char], from: usize, to: usize) -> String {
    let start = from.saturating_sub(1).min(chars.len());
    let end = to.min(chars.len());
    chars[start..end.max(start)]
        .iter()
        .collect::<String>()
        .trim()
        .to_owned()
}

fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// The 1-based column of round `round`'s block in a `001` line.
pub fn round_column(round: u32) -> usize {
    92 + 10 * (round as usize).saturating_sub(1)
}

/// Half points of a TRF result character (letters in any case).
pub fn trf_half_points(result: char) -> u32 {
    match result.to_ascii_uppercase() {
        '1' | '+' | 'W' | 'F' | 'U' => 2,
        '=' | 'D' | 'H' => 1,
        _ => 0,
    }
}

/// One `001` line as read.
struct TrfPlayer {
    line: usize,
    player: Player,
    /// Half points before the round.
    before: u32,
    /// This round: opponent (0: none), colour, result.
    opponent: u32,
    colour: char,
    result: char,
}

/// Reads round `round`'s pairings from a TRF16 file.
pub fn parse_trf(text: &str, round: u32) -> Result<Pairings, InputError> {
    if round == 0 {
        return Err(error(0, 0, "rounds count from 1"));
    }
    let mut players: BTreeMap<u32, TrfPlayer> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if !line.starts_with("001") {
            continue;
        }
        let chars: Vec<char> = line.trim_end_matches('\r').chars().collect();
        let rank_text = field(&chars, 5, 8);
        let rank: u32 = rank_text
            .parse()
            .ok()
            .filter(|rank| *rank > 0)
            .ok_or_else(|| {
                error(
                    number,
                    5,
                    format!("`{rank_text}` is not a starting rank (columns 5-8: a number from 1)"),
                )
            })?;
        if let Some(first) = players.get(&rank) {
            return Err(error(
                number,
                5,
                format!("starting rank {rank} again (first on line {})", first.line),
            ));
        }
        let name = field(&chars, 15, 47);
        if name.is_empty() {
            return Err(error(number, 15, "no name (columns 15-47)".to_owned()));
        }
        let rating_text = field(&chars, 49, 52);
        let rating = if rating_text.is_empty() {
            None
        } else {
            Some(rating_text.parse::<u32>().map_err(|_| {
                error(
                    number,
                    49,
                    format!("`{rating_text}` is not a rating (columns 49-52)"),
                )
            })?)
        }
        .filter(|rating| *rating > 0);
        let mut before = 0;
        for earlier in 1..round {
            let column = round_column(earlier) + 7;
            if let Some(result) = chars.get(column - 1) {
                before += trf_half_points(*result);
            }
        }
        let column = round_column(round);
        let opponent_text = field(&chars, column, column + 3);
        let opponent = if opponent_text.is_empty() {
            0
        } else {
            opponent_text.parse::<u32>().map_err(|_| {
                error(
                    number,
                    column,
                    format!(
                        "round {round}: `{opponent_text}` is not an opponent's starting rank \
                         (columns {column}-{})",
                        column + 3
                    ),
                )
            })?
        };
        let colour = chars.get(column + 4).copied().unwrap_or(' ');
        if !matches!(colour, 'w' | 'b' | '-' | ' ') {
            return Err(error(
                number,
                column + 5,
                format!("round {round}: colour `{colour}`: expected w, b or -"),
            ));
        }
        if opponent > 0 && !matches!(colour, 'w' | 'b') {
            return Err(error(
                number,
                column + 5,
                format!("round {round}: a game against {opponent} needs a colour, w or b"),
            ));
        }
        players.insert(
            rank,
            TrfPlayer {
                line: number,
                player: Player {
                    name,
                    number: Some(rank),
                    rating,
                    title: non_empty(field(&chars, 11, 13)),
                    federation: non_empty(field(&chars, 54, 56)),
                    fide_id: non_empty(field(&chars, 58, 68)).filter(|id| id != "0"),
                },
                before,
                opponent,
                colour,
                result: chars.get(column + 6).copied().unwrap_or(' '),
            },
        );
    }
    if players.is_empty() {
        return Err(error(0, 0, "no player lines (`001`): not a TRF16 file"));
    }
    let mut pairs = Vec::new();
    let mut byes = Vec::new();
    for (rank, player) in &players {
        if player.opponent == 0 {
            let code = player.result.to_ascii_uppercase();
            if matches!(code, 'U' | 'F' | 'H' | 'Z') {
                byes.push(Bye {
                    player: player.player.clone(),
                    code,
                });
            }
            continue;
        }
        let column = round_column(round);
        let Some(opponent) = players.get(&player.opponent) else {
            return Err(error(
                player.line,
                column,
                format!(
                    "round {round}: opponent {} has no `001` line",
                    player.opponent
                ),
            ));
        };
        let other = match player.colour {
            'w' => 'b',
            _ => 'w',
        };
        if opponent.opponent != *rank || opponent.colour != other {
            return Err(error(
                opponent.line,
                column,
                format!(
                    "round {round}: player {} should play {rank} with {} (line {} says so)",
                    player.opponent,
                    if other == 'w' { "white" } else { "black" },
                    player.line
                ),
            ));
        }
        if player.colour == 'w' {
            pairs.push((player, opponent));
        }
    }
    if pairs.is_empty() {
        return Err(error(
            0,
            0,
            format!("round {round} has no games in this TRF file (no opponents in its columns)"),
        ));
    }
    // Board order: the higher scorer's score, the pair's total score, the
    // better starting rank; highest first.
    pairs.sort_by_key(|(white, black)| {
        let high = white.before.max(black.before);
        let total = white.before + black.before;
        let best = white
            .player
            .number
            .unwrap_or(u32::MAX)
            .min(black.player.number.unwrap_or(u32::MAX));
        (std::cmp::Reverse(high), std::cmp::Reverse(total), best)
    });
    let games = pairs
        .into_iter()
        .zip(1u32..)
        .map(|((white, black), board)| Pairing {
            board,
            white: white.player.clone(),
            black: black.player.clone(),
            control: None,
        })
        .collect();
    Ok(Pairings {
        round,
        games,
        byes,
        source: Source::Trf(text.to_owned()),
    })
}

/// The fields of one CSV line with the column each starts at.
fn csv_fields(line: &str, number: usize) -> Result<Fields, InputError> {
    let mut fields = Vec::new();
    let mut chars = line.chars().enumerate().peekable();
    let mut start = 1;
    let mut current = String::new();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some((index, c)) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek().map(|(_, c)| *c) == Some('"') {
                    chars.next();
                    current.push('"');
                } else {
                    quoted = false;
                }
            } else {
                current.push(c);
            }
            continue;
        }
        match c {
            ',' => {
                fields.push((start, std::mem::take(&mut current)));
                start = index + 2;
                was_quoted = false;
            }
            '"' if current.trim().is_empty() && !was_quoted => {
                current.clear();
                quoted = true;
                was_quoted = true;
            }
            '"' => {
                return Err(error(
                    number,
                    index + 1,
                    "a quote inside a field: quote the whole field and double the quote",
                ))
            }
            _ if was_quoted && !c.is_whitespace() => {
                return Err(error(
                    number,
                    index + 1,
                    "text after a quoted field's closing quote",
                ))
            }
            _ => current.push(c),
        }
    }
    if quoted {
        return Err(error(number, start, "a quoted field is not closed"));
    }
    fields.push((start, current));
    Ok(fields
        .into_iter()
        .map(|(column, text)| (column, text.trim().to_owned()))
        .collect())
}

/// A CSV line's fields, each with the column it starts at.
type Fields = Vec<(usize, String)>;

/// The lines of a CSV that carry data: (line number, fields).
fn csv_lines(text: &str) -> Result<Vec<(usize, Fields)>, InputError> {
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        let line = if index == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        lines.push((index + 1, csv_fields(line, index + 1)?));
    }
    Ok(lines)
}

fn positive(text: &str, what: &str, line: usize, column: usize) -> Result<u32, InputError> {
    text.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
        error(
            line,
            column,
            format!("{what} `{text}`: expected a number from 1"),
        )
    })
}

/// Reads pairings from a CSV (see the module's documentation).
pub fn parse_csv(text: &str, round: u32) -> Result<Pairings, InputError> {
    if round == 0 {
        return Err(error(0, 0, "rounds count from 1"));
    }
    let mut lines = csv_lines(text)?;
    // The columns: a header names them, else board, white, black, control.
    let mut columns: BTreeMap<&str, usize> = [("board", 0), ("white", 1), ("black", 2)]
        .into_iter()
        .collect();
    let mut width = (3, 4);
    if let Some((number, fields)) = lines.first() {
        let first = fields.first().map(|(_, f)| f.as_str()).unwrap_or_default();
        if first.parse::<u32>().is_err() {
            columns.clear();
            for (index, (column, name)) in fields.iter().enumerate() {
                let key = match name.to_ascii_lowercase().as_str() {
                    "board" => "board",
                    "white" => "white",
                    "black" => "black",
                    "control" => "control",
                    "white_id" => "white_id",
                    "black_id" => "black_id",
                    other => {
                        return Err(error(
                            *number,
                            *column,
                            format!(
                                "unknown column `{other}`: expected board, white, black, \
                                 control, white_id, black_id"
                            ),
                        ))
                    }
                };
                if columns.insert(key, index).is_some() {
                    return Err(error(*number, *column, format!("column `{key}` twice")));
                }
            }
            for needed in ["board", "white", "black"] {
                if !columns.contains_key(needed) {
                    return Err(error(
                        *number,
                        1,
                        format!("the header has no `{needed}` column"),
                    ));
                }
            }
            width = (fields.len(), fields.len());
            lines.remove(0);
        } else {
            columns.insert("control", 3);
        }
    }
    let mut games: Vec<Pairing> = Vec::new();
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for (number, fields) in lines {
        if fields.len() < width.0 || fields.len() > width.1 {
            let expected = if width.0 == width.1 {
                width.0.to_string()
            } else {
                format!("{} or {}", width.0, width.1)
            };
            return Err(error(
                number,
                1,
                format!(
                    "{} fields where {expected} are expected (board,white,black[,control])",
                    fields.len()
                ),
            ));
        }
        let get = |key: &str| -> Option<(usize, &str)> {
            columns
                .get(key)
                .and_then(|index| fields.get(*index))
                .map(|(column, text)| (*column, text.as_str()))
        };
        let (column, board_text) = get("board").unwrap_or((1, ""));
        let board = positive(board_text, "board", number, column)?;
        if let Some(first) = seen.insert(board, number) {
            return Err(error(
                number,
                column,
                format!("board {board} again (first on line {first})"),
            ));
        }
        let player = |side: &str| -> Result<Player, InputError> {
            let (column, name) = get(side).unwrap_or((1, ""));
            if name.is_empty() {
                return Err(error(number, column, format!("no {side} player")));
            }
            if name.chars().any(char::is_control) {
                return Err(error(
                    number,
                    column,
                    format!("the {side} player's name holds a control character"),
                ));
            }
            let id = match get(&format!("{side}_id")) {
                Some((_, "")) | None => None,
                Some((column, text)) => Some(positive(text, "player number", number, column)?),
            };
            Ok(Player {
                name: name.to_owned(),
                number: id,
                ..Player::default()
            })
        };
        let white = player("white")?;
        let black = player("black")?;
        let control = get("control")
            .map(|(_, text)| text.to_owned())
            .filter(|text| !text.is_empty());
        games.push(Pairing {
            board,
            white,
            black,
            control,
        });
    }
    if games.is_empty() {
        return Err(error(0, 0, "no pairings in the CSV (board,white,black)"));
    }
    games.sort_by_key(|game| game.board);
    Ok(Pairings {
        round,
        games,
        byes: Vec::new(),
        source: Source::Csv,
    })
}

/// Reads a board map: CSV lines `board,id` (a header line optional).
pub fn parse_board_map(text: &str) -> Result<BTreeMap<u32, String>, InputError> {
    let mut map = BTreeMap::new();
    for (index, (number, fields)) in csv_lines(text)?.into_iter().enumerate() {
        let [(board_column, board), (id_column, id)] = fields.as_slice() else {
            return Err(error(number, 1, "expected `board,id` (two fields)"));
        };
        if index == 0 && board.parse::<u32>().is_err() {
            continue;
        }
        let board = positive(board, "board", number, *board_column)?;
        if id.is_empty() || id.contains('/') || id.contains(['+', '#']) {
            return Err(error(
                number,
                *id_column,
                format!("board id `{id}`: expected a board's id as in the daemons' config"),
            ));
        }
        if map.insert(board, id.clone()).is_some() {
            return Err(error(number, *board_column, format!("board {board} again")));
        }
    }
    Ok(map)
}

/// The number a board id ends in (`b7` -> 7, `board07` -> 7, `12` -> 12).
pub fn id_number(id: &str) -> Option<u32> {
    let digits = id.len() - id.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    id[id.len() - digits..].parse().ok()
}

/// The hall board of each pairing board number among `ids`: the map's,
/// else the one id ending in the number (and not mapped to another).
/// Numbers without a board are left out. Linear in the numbers and the
/// ids: a hall of 1,000 boards asks it at every board coming or going.
pub fn assign<'a>(
    numbers: impl IntoIterator<Item = u32>,
    ids: impl IntoIterator<Item = &'a str>,
    map: &BTreeMap<u32, String>,
) -> BTreeMap<u32, String> {
    let mapped: std::collections::HashSet<&str> = map.values().map(String::as_str).collect();
    // Number -> the one unmapped id ending in it (`None`: several do).
    let mut by_number: std::collections::HashMap<u32, Option<&str>> =
        std::collections::HashMap::new();
    for id in ids.into_iter().filter(|id| !mapped.contains(id)) {
        if let Some(number) = id_number(id) {
            by_number
                .entry(number)
                .and_modify(|one| *one = None)
                .or_insert(Some(id));
        }
    }
    let mut assigned = BTreeMap::new();
    for number in numbers {
        if let Some(id) = map.get(&number) {
            assigned.insert(number, id.clone());
        } else if let Some(Some(id)) = by_number.get(&number) {
            assigned.insert(number, (*id).to_owned());
        }
    }
    assigned
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// A TRF16 file of six players after round 1, paired for round 2
    /// (columns as in C.04 Annex 2; the round blocks start at 92 and 102).
    const TRF: &str = include_str!("../../../tests/data/hall/round2.trf");

    #[test]
    fn the_trf_columns_are_where_the_format_puts_them() {
        let line = TRF.lines().nth(3).unwrap();
        let chars: Vec<char> = line.chars().collect();
        assert_eq!(field(&chars, 5, 8), "1");
        assert_eq!(field(&chars, 15, 47), "Alpha, Anna");
        assert_eq!(field(&chars, 49, 52), "2650");
        assert_eq!(field(&chars, 81, 84), "1.0");
        assert_eq!(field(&chars, 92, 95), "4");
        assert_eq!(chars[96], 'w');
        assert_eq!(chars[98], '1');
        assert_eq!(field(&chars, 102, 105), "2");
        assert_eq!(chars[106], 'b');
    }

    #[test]
    fn trf_round_2_in_board_order() {
        let pairings = parse_trf(TRF, 2).unwrap();
        assert_eq!(pairings.round, 2);
        let boards: Vec<(u32, &str, &str)> = pairings
            .games
            .iter()
            .map(|g| (g.board, g.white.name.as_str(), g.black.name.as_str()))
            .collect();
        // Scores before round 2: 1 and 6 have 1, 2 and 5 have 1/2.
        // 2-1 (high 1, total 1.5, best 1), 6-5 (high 1, total 1.5, best 5),
        // 4-3 (0, 0, 3).
        assert_eq!(
            boards,
            vec![
                (1, "Beta, Bert", "Alpha, Anna"),
                (2, "Zeta, Zed", "Epsilon, Eve"),
                (3, "Delta, Dan", "Gamma, Gina"),
            ]
        );
        let first = &pairings.games[0];
        assert_eq!(first.white.number, Some(2));
        assert_eq!(first.white.title.as_deref(), Some("IM"));
        assert_eq!(first.black.rating, Some(2650));
        assert_eq!(first.black.fide_id.as_deref(), Some("1503014"));
        let tags = first.tags(2);
        assert_eq!(tags["Round"], "2.1");
        assert_eq!(tags["White"], "Beta, Bert");
        assert_eq!(tags["BlackElo"], "2650");
        assert_eq!(tags["WhiteTitle"], "IM");
        assert_eq!(tags["BlackFederation"], "NOR");
        assert!(!tags.contains_key("Board"));
        for (name, value) in &tags {
            chessclock_core::eboard::follower::check_tag(name, value).unwrap();
        }
    }

    #[test]
    fn trf_round_1_and_errors_with_their_place() {
        let pairings = parse_trf(TRF, 1).unwrap();
        assert_eq!(pairings.games.len(), 3);
        assert_eq!(pairings.games[0].white.name, "Alpha, Anna");
        assert!(matches!(pairings.source, Source::Trf(_)));
        let error = parse_trf(TRF, 3).unwrap_err();
        assert!(error.message.contains("round 3 has no games"), "{error}");

        let bad = TRF.replace("     3 w  \n", "     3 x  \n");
        let error = parse_trf(&bad, 2).unwrap_err();
        assert_eq!((error.line, error.column), (7, 107), "{error}");
        assert!(error
            .to_string()
            .starts_with("line 7, column 107: round 2: colour `x`"));

        let bad = TRF.replace("     2 b  \n", "     9 b  \n");
        let error = parse_trf(&bad, 2).unwrap_err();
        assert_eq!((error.line, error.column), (4, 102), "{error}");
        assert!(
            error.message.contains("opponent 9 has no `001` line"),
            "{error}"
        );

        let bad = TRF.replace("001    2 m", "001    1 m");
        let error = parse_trf(&bad, 2).unwrap_err();
        assert_eq!((error.line, error.column), (5, 5), "{error}");

        let bad = TRF.replace("     3 w  \n", "     3 b  \n");
        let error = parse_trf(&bad, 2).unwrap_err();
        assert!(error.message.contains("should play"), "{error}");

        assert!(parse_trf("012 nothing\n", 1).is_err());
        assert!(parse_trf("001 xx", 1).is_err());
    }

    #[test]
    fn csv_with_and_without_a_header() {
        let pairings = Pairings::parse(
            "1,\"Carlsen, Magnus\",Caruana\n# a comment\n\n2,A,\"B \"\"the\"\" C\",G/25;d5\n",
            4,
        )
        .unwrap();
        assert_eq!(pairings.round, 4);
        assert_eq!(pairings.games[0].white.name, "Carlsen, Magnus");
        assert_eq!(pairings.games[1].black.name, "B \"the\" C");
        assert_eq!(pairings.games[1].control.as_deref(), Some("G/25;d5"));
        assert_eq!(pairings.games[0].control, None);
        assert_eq!(pairings.source, Source::Csv);

        let pairings = parse_csv(
            "Black,Board,White,white_id,black_id\nB2,2,W2,3,4\nB1,1,W1,1,2\n",
            1,
        )
        .unwrap();
        assert_eq!(pairings.games[0].board, 1);
        assert_eq!(pairings.games[0].white.name, "W1");
        assert_eq!(pairings.games[1].white.number, Some(3));
        assert_eq!(pairings.games[1].black.number, Some(4));
    }

    #[test]
    fn csv_errors_name_line_and_column() {
        for (text, line, column, what) in [
            ("1,A,B\nx,C,D\n", 2, 1, "board `x`"),
            ("1,A,B\n1,C,D\n", 2, 1, "board 1 again"),
            ("1,A\n", 1, 1, "2 fields"),
            ("1,A,\n", 1, 5, "no black player"),
            ("board,white,blak\n1,A,B\n", 1, 13, "unknown column `blak`"),
            ("board,white\n1,A\n", 1, 1, "no `black` column"),
            ("1,\"A,B\n", 1, 3, "not closed"),
            ("1,A\"x,B\n", 1, 4, "a quote inside"),
            ("0,A,B\n", 1, 1, "board `0`"),
            ("", 0, 0, "no pairings"),
        ] {
            let error = parse_csv(text, 1).unwrap_err();
            assert_eq!(
                (error.line, error.column),
                (line, column),
                "{text:?}: {error}"
            );
            assert!(error.message.contains(what), "{text:?}: {error}");
        }
    }

    #[test]
    fn boards_by_the_number_their_id_ends_in_or_by_the_map() {
        assert_eq!(id_number("b7"), Some(7));
        assert_eq!(id_number("board07"), Some(7));
        assert_eq!(id_number("12"), Some(12));
        assert_eq!(id_number("table"), None);
        let ids = ["b1", "b2", "b3", "x2", "top"];
        let map: BTreeMap<u32, String> = parse_board_map("board,id\n4,top\n").unwrap();
        let assigned = assign([1, 2, 3, 4, 5], ids.iter().copied(), &map);
        // Board 2 is ambiguous (b2 and x2); board 5 has none.
        assert_eq!(
            assigned,
            [(1, "b1"), (3, "b3"), (4, "top")]
                .into_iter()
                .map(|(n, id)| (n, id.to_owned()))
                .collect()
        );
        // A board the map gives another number keeps that one.
        let map: BTreeMap<u32, String> = parse_board_map("5,b3\n").unwrap();
        let assigned = assign([3, 5], ids.iter().copied(), &map);
        assert_eq!(assigned, [(5, "b3".to_owned())].into_iter().collect());
        let error = parse_board_map("1,b1\n1,b2\n").unwrap_err();
        assert_eq!((error.line, error.column), (2, 1));
        assert!(parse_board_map("1,a/b\n").is_err());
    }

    #[test]
    fn any_text_gives_pairings_or_an_error() {
        let mut seed = 0x1234_5678_u32;
        let alphabet: Vec<char> = "001 wb-=10,\"\n\r 23456789xé".chars().collect();
        for length in 0..300 {
            let text: String = (0..length)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    alphabet[seed as usize % alphabet.len()]
                })
                .collect();
            let _ = Pairings::parse(&text, 1 + length as u32 % 3);
            let _ = parse_board_map(&text);
        }
        let long = format!("{}\n", TRF.lines().nth(3).unwrap());
        let _ = parse_trf(&long, 40);
    }
}
