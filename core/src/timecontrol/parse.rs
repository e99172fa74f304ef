//! The notation parser. One cursor over the characters; every error carries
//! the 1-based position of the character where the input stops making sense.

use super::{Bonus, ParseError, Stage, TimeControl, MAX_MOVES, MAX_TIME};
use crate::time::{Micros, SECOND};

/// The largest number of seconds or moves accepted (a little over 31 years):
/// large enough for anything real, small enough that every sum of times in the
/// engine stays far from overflow.
const MAX_NUMBER: u64 = 1_000_000_000;

/// Parses the project's notation (PGN TimeControl + `d`/`b`), US Chess
/// notation, or the byo-yomi / Canadian textual forms, whichever fits. A
/// text of more than [`crate::limits::MAX_CONTROL`] characters is refused
/// before it is read (every control a board takes comes through here: the
/// configuration, D-Bus, the hall, a replay).
pub fn parse(text: &str) -> Result<TimeControl, ParseError> {
    if let Err(message) =
        crate::limits::check_chars("the time control", text, crate::limits::MAX_CONTROL)
    {
        return Err(ParseError {
            position: crate::limits::MAX_CONTROL + 1,
            message,
        });
    }
    let chars: Vec<char> = text.chars().collect();
    let mut cursor = Cursor { chars, at: 0 };
    cursor.skip_spaces();
    if cursor.at_end() {
        return Err(cursor.error("empty time control"));
    }
    let rest: String = cursor.chars[cursor.at..].iter().collect();
    let lower = rest.to_ascii_lowercase();
    if lower.starts_with("byoyomi:") || lower.starts_with("byo-yomi:") {
        return parse_byo_yomi(&mut cursor);
    }
    if lower.starts_with("canadian:") {
        return parse_canadian(&mut cursor);
    }
    if looks_like_us_chess(&lower) {
        return parse_us(&mut cursor);
    }
    parse_pgn(&mut cursor)
}

/// US Chess notation names its stages `G/` or `SD/`, or uses `,` / `;`, or
/// spells the bonus `inc`; plain PGN never does.
fn looks_like_us_chess(lower: &str) -> bool {
    lower.starts_with("g/")
        || lower.starts_with("g ")
        || lower.contains("sd/")
        || lower.contains("sd ")
        || lower.contains(',')
        || lower.contains(';')
        || lower.contains("inc")
}

struct Cursor {
    chars: Vec<char>,
    at: usize,
}

impl Cursor {
    fn at_end(&self) -> bool {
        self.at >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            position: self.at + 1,
            message: message.into(),
        }
    }

    fn error_at(&self, at: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            position: at + 1,
            message: message.into(),
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// Eats `word` (ASCII, case-insensitive) if it comes next.
    fn eat_word(&mut self, word: &str) -> bool {
        let n = word.chars().count();
        let next: String = self.chars[self.at.min(self.chars.len())..]
            .iter()
            .take(n)
            .collect();
        if next.eq_ignore_ascii_case(word) {
            self.at += n;
            true
        } else {
            false
        }
    }

    /// A whole number of at most [`MAX_NUMBER`]; `what` names it in errors.
    fn number(&mut self, what: &str) -> Result<u64, ParseError> {
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(u64::from(digit));
            self.at += 1;
        }
        if self.at == start {
            return Err(match self.peek() {
                Some(c) => self.error(format!("expected {what} (a whole number), found `{c}`")),
                None => self.error(format!("expected {what} (a whole number), found the end")),
            });
        }
        if value > MAX_NUMBER {
            return Err(self.error_at(start, format!("{what} is too large (at most {MAX_NUMBER})")));
        }
        Ok(value)
    }

    fn seconds(&mut self, what: &str) -> Result<Micros, ParseError> {
        let start = self.at;
        let seconds = self.number(what)?;
        self.bounded_time(start, seconds as Micros * SECOND, what)
    }

    fn minutes(&mut self, what: &str) -> Result<Micros, ParseError> {
        let start = self.at;
        let minutes = self.number(what)?;
        self.bounded_time(start, minutes as Micros * 60 * SECOND, what)
    }

    /// A game holds at most [`MAX_TIME`] in any one place.
    fn bounded_time(&self, start: usize, time: Micros, what: &str) -> Result<Micros, ParseError> {
        if time > MAX_TIME {
            return Err(self.error_at(
                start,
                format!(
                    "{what} is too long (at most {} hours)",
                    MAX_TIME / 3_600 / SECOND
                ),
            ));
        }
        Ok(time)
    }

    /// A number of moves, 1 to [`MAX_MOVES`].
    fn bounded_moves(&self, start: usize, moves: u64) -> Result<u32, ParseError> {
        if moves == 0 {
            return Err(self.error_at(start, "a stage needs at least 1 move"));
        }
        if moves > u64::from(MAX_MOVES) {
            return Err(self.error_at(
                start,
                format!(
                    "a stage of {moves} moves is more than a game can have (at most {MAX_MOVES})"
                ),
            ));
        }
        Ok(moves as u32)
    }

    fn moves(&mut self) -> Result<u32, ParseError> {
        let start = self.at;
        let moves = self.number("a number of moves")?;
        self.bounded_moves(start, moves)
    }

    fn expect_end(&mut self) -> Result<(), ParseError> {
        self.skip_spaces();
        match self.peek() {
            None => Ok(()),
            Some(c) => Err(self.error(format!("unexpected `{c}`"))),
        }
    }
}

fn parse_pgn(cursor: &mut Cursor) -> Result<TimeControl, ParseError> {
    match cursor.peek() {
        Some('?') => {
            return Err(cursor.error("`?` (unknown time control) is not a control one can play"))
        }
        Some('-') => {
            cursor.at += 1;
            cursor.expect_end()?;
            return Ok(TimeControl::Upcount);
        }
        Some('*') => {
            cursor.at += 1;
            let time_at = cursor.at;
            let time = cursor.seconds("the hourglass time in seconds")?;
            if time == 0 {
                return Err(cursor.error_at(time_at, ZERO_TIME));
            }
            if cursor.peek() == Some(':') {
                return Err(cursor.error("an hourglass control `*seconds` must stand alone"));
            }
            cursor.expect_end()?;
            return Ok(TimeControl::Hourglass { time });
        }
        _ => {}
    }
    let mut stages: Vec<Stage> = Vec::new();
    loop {
        let field_start = cursor.at;
        if cursor.peek() == Some('*') {
            return Err(cursor.error("an hourglass control `*seconds` must stand alone"));
        }
        let first = cursor.number("seconds or a number of moves")?;
        let mut time_at = field_start;
        let (moves, time) = if cursor.eat('/') {
            time_at = cursor.at;
            (
                Some(cursor.bounded_moves(field_start, first)?),
                cursor.seconds("the seconds of the stage")?,
            )
        } else {
            (
                None,
                cursor.bounded_time(
                    field_start,
                    first as Micros * SECOND,
                    "the seconds of the stage",
                )?,
            )
        };
        let bonus = match cursor.peek() {
            Some('+') => {
                cursor.at += 1;
                Bonus::Increment(cursor.seconds("the increment in seconds")?)
            }
            Some('d') | Some('D') => {
                cursor.at += 1;
                Bonus::Delay(cursor.seconds("the delay in seconds")?)
            }
            Some('b') | Some('B') => {
                cursor.at += 1;
                Bonus::Bronstein(cursor.seconds("the Bronstein delay in seconds")?)
            }
            _ => Bonus::None,
        };
        check_stage_time(cursor, time_at, time, bonus, stages.is_empty())?;
        stages.push(Stage { moves, time, bonus });
        match cursor.peek() {
            Some(':') => {
                if moves.is_none() {
                    return Err(cursor.error_at(
                        field_start,
                        "only the last field may leave out the number of moves",
                    ));
                }
                cursor.at += 1;
            }
            None => break,
            Some(' ') | Some('\t') => {
                cursor.expect_end()?;
                break;
            }
            Some(c) => return Err(cursor.error(format!("unexpected `{c}`"))),
        }
    }
    Ok(TimeControl::Stages(stages))
}

/// Why a control that gives no time is refused.
const ZERO_TIME: &str =
    "a time control of 0 s gives the player no time at all: give more than 0 seconds";

/// A stage must give time: the first more than 0 s, a later one more than
/// 0 s or a bonus of more than 0 s (`60/300:0+2`: 2 s a move from move 61).
fn check_stage_time(
    cursor: &Cursor,
    at: usize,
    time: Micros,
    bonus: Bonus,
    first: bool,
) -> Result<(), ParseError> {
    if time > 0 {
        return Ok(());
    }
    if first {
        return Err(cursor.error_at(
            at,
            "the first stage of 0 s gives the player no time at the start: give more than 0 seconds",
        ));
    }
    if bonus.amount() == 0 {
        return Err(cursor.error_at(
            at,
            "a stage of 0 s with no increment or delay gives no time: give seconds or a bonus",
        ));
    }
    Ok(())
}

/// `G/90;d5`, `40/120, SD/30;d5`, `G/3;inc2`, `G/5+3`: minutes, stages
/// separated by `,`, one bonus for the whole game after `;` (or `+`).
fn parse_us(cursor: &mut Cursor) -> Result<TimeControl, ParseError> {
    let mut stages: Vec<Stage> = Vec::new();
    let mut bonus = Bonus::None;
    loop {
        cursor.skip_spaces();
        let field_start = cursor.at;
        let moves = if cursor.eat_word("SD/") || cursor.eat_word("G/") {
            None
        } else if cursor.peek().is_some_and(|c| c.is_ascii_digit()) {
            let moves = cursor.moves()?;
            if !cursor.eat('/') {
                return Err(cursor.error("expected `/` after the number of moves"));
            }
            Some(moves)
        } else {
            return Err(cursor.error("expected `G/`, `SD/` or `moves/minutes`"));
        };
        let time_at = cursor.at;
        let time = cursor.minutes("the minutes of the stage")?;
        if time == 0 {
            // US Chess has no stage of 0 minutes (its bonus is the game's).
            return Err(cursor.error_at(
                time_at,
                "a stage of 0 minutes gives no time: give more than 0 minutes",
            ));
        }
        stages.push(Stage {
            moves,
            time,
            bonus: Bonus::None,
        });
        cursor.skip_spaces();
        if cursor.peek() == Some('+') {
            cursor.at += 1;
            bonus = Bonus::Increment(cursor.seconds("the increment in seconds")?);
            cursor.skip_spaces();
        }
        match cursor.peek() {
            Some(',') => {
                if moves.is_none() {
                    return Err(cursor.error_at(
                        field_start,
                        "sudden death (`G/` or `SD/`) must be the last stage",
                    ));
                }
                if bonus != Bonus::None {
                    return Err(cursor.error("the bonus comes after the last stage"));
                }
                cursor.at += 1;
            }
            Some(';') => {
                cursor.at += 1;
                if bonus != Bonus::None {
                    return Err(cursor.error("the bonus is given twice"));
                }
                cursor.skip_spaces();
                bonus = parse_us_bonus(cursor)?;
                cursor.expect_end()?;
                break;
            }
            None => break,
            Some(c) => return Err(cursor.error(format!("unexpected `{c}`"))),
        }
    }
    for stage in &mut stages {
        stage.bonus = bonus;
    }
    Ok(TimeControl::Stages(stages))
}

fn parse_us_bonus(cursor: &mut Cursor) -> Result<Bonus, ParseError> {
    if cursor.eat_word("inc") || cursor.eat('+') {
        cursor.skip_spaces();
        return Ok(Bonus::Increment(
            cursor.seconds("the increment in seconds")?,
        ));
    }
    if cursor.eat_word("d") {
        cursor.skip_spaces();
        return Ok(Bonus::Delay(cursor.seconds("the delay in seconds")?));
    }
    if cursor.eat_word("b") {
        cursor.skip_spaces();
        return Ok(Bonus::Bronstein(
            cursor.seconds("the Bronstein delay in seconds")?,
        ));
    }
    Err(cursor.error("expected `d`, `inc`, `+` or `b` and seconds after `;`"))
}

/// `byoyomi:MAIN:PERIODSxSECONDS`, all times in seconds.
fn parse_byo_yomi(cursor: &mut Cursor) -> Result<TimeControl, ParseError> {
    if !cursor.eat_word("byoyomi:") {
        cursor.eat_word("byo-yomi:");
    }
    let main = cursor.seconds("the main time in seconds")?;
    if !cursor.eat(':') {
        return Err(cursor.error("expected `:` and then PERIODSxSECONDS"));
    }
    let periods_at = cursor.at;
    let periods = cursor.number("the number of periods")?;
    if periods == 0 {
        return Err(cursor.error_at(periods_at, "byo-yomi needs at least 1 period"));
    }
    if periods > u64::from(MAX_MOVES) {
        return Err(cursor.error_at(periods_at, format!("at most {MAX_MOVES} byo-yomi periods")));
    }
    if !(cursor.eat('x') || cursor.eat('X')) {
        return Err(cursor.error("expected `x` between the periods and their seconds"));
    }
    let period_at = cursor.at;
    let period = cursor.seconds("the seconds of a period")?;
    if period == 0 {
        return Err(cursor.error_at(period_at, "a byo-yomi period must be longer than 0 s"));
    }
    cursor.expect_end()?;
    Ok(TimeControl::ByoYomi {
        main,
        periods: periods as u32,
        period,
    })
}

/// `canadian:MAIN:MOVES/SECONDS`, all times in seconds.
fn parse_canadian(cursor: &mut Cursor) -> Result<TimeControl, ParseError> {
    cursor.eat_word("canadian:");
    let main = cursor.seconds("the main time in seconds")?;
    if !cursor.eat(':') {
        return Err(cursor.error("expected `:` and then MOVES/SECONDS"));
    }
    let moves = cursor.moves()?;
    if !cursor.eat('/') {
        return Err(cursor.error("expected `/` between the moves and the seconds of a block"));
    }
    let block_at = cursor.at;
    let block = cursor.seconds("the seconds of a block")?;
    if block == 0 {
        return Err(cursor.error_at(block_at, "a Canadian block must be longer than 0 s"));
    }
    cursor.expect_end()?;
    Ok(TimeControl::Canadian { main, moves, block })
}
