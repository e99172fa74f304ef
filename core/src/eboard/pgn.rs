//! PGN text of a game with clock times, for broadcast tools (DGT LiveChess
//! and lichess broadcasts read exactly these tags and comments).
//!
//! Promises:
//! * pure string building ([`PgnGame::render`]), tested byte for byte;
//! * PGN export format (PGN standard 8.2): the Seven Tag Roster first, in
//!   its order (`Event`, `Site`, `Date`, `Round`, `White`, `Black`,
//!   `Result`; `?` / `????.??.??` where unknown), then every other tag in
//!   ASCII order of its name; an empty line; the movetext in lines of at most
//!   79 characters ending with the game termination marker; an empty line.
//!   So files concatenated with `cat` are a valid multi-game PGN (a blank
//!   line between games, as lichess push wants);
//! * after a move whose times are known: `{[%clk H:MM:SS] [%emt H:MM:SS]}`,
//!   `%clk` the time left on the mover's clock after the move (after any
//!   increment), rounded *up* to the second like the display (so 0:00:00
//!   only when the flag fell), `%emt` the time the move took, rounded to the
//!   nearest second;
//! * tag values escaped (`\\`, `\"`), control characters dropped;
//! * building a [`PgnGame`] renders nothing and copies none of the tags
//!   people set ([`PgnGame::set_tags`] is shared): the board core hands it
//!   over on every change of the clocks, and the daemon's control loop,
//!   never the timing thread, calls [`PgnGame::render`];
//! * [`PgnGame::render`] takes time in proportion to the text it writes
//!   (no tag is looked for among the others);
//! * [`time_control_tag`] is always a valid PGN TimeControl value (PGN
//!   9.6.1, with the common `moves/seconds+increment` field), and
//!   [`control_tags`] keeps the exact control in the project's notation in
//!   `ClockControl` (see its docs for per-side controls).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::engine::{MatchControl, Micros, Side, SECOND};
use crate::timecontrol::{Bonus, TimeControl};

/// The clock times of one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveClock {
    /// Time left on the mover's clock after the move, increment included.
    pub clk: Micros,
    /// Time the move took.
    pub emt: Micros,
}

/// A game's result (the termination marker and the `Result` tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
}

impl GameResult {
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// Reads `1-0`, `0-1`, `1/2-1/2` (also `½-½`).
    pub fn parse(text: &str) -> Option<GameResult> {
        match text {
            "1-0" => Some(GameResult::WhiteWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" | "½-½" => Some(GameResult::Draw),
            _ => None,
        }
    }

    /// The result of a win by `side`.
    pub fn win(side: crate::engine::Side) -> GameResult {
        match side {
            crate::engine::Side::White => GameResult::WhiteWins,
            crate::engine::Side::Black => GameResult::BlackWins,
        }
    }
}

/// How a game ended: the PGN `Termination` tag's standard values (PGN
/// standard 9.8.1), with the ways of a `normal` end told apart for the
/// record (a resignation is stored and shown as one; its PGN tag is still
/// `normal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Termination {
    /// A normal end not told more precisely (a draw claimed, say).
    Normal,
    /// A player resigned (PGN `normal`).
    Resignation,
    /// A draw agreed (PGN `normal`).
    Agreement,
    /// Checkmate on the board (PGN `normal`).
    Checkmate,
    /// Stalemate on the board (PGN `normal`).
    Stalemate,
    /// A flag fell (a loss, or a draw by Art. 6.9).
    TimeForfeit,
    RulesInfraction,
    Adjudication,
    Abandoned,
    Death,
    Emergency,
}

impl Termination {
    /// The PGN tag's value (`normal`, `time forfeit`, ...).
    pub fn pgn(self) -> &'static str {
        match self {
            Termination::Normal
            | Termination::Resignation
            | Termination::Agreement
            | Termination::Checkmate
            | Termination::Stalemate => "normal",
            Termination::TimeForfeit => "time forfeit",
            Termination::RulesInfraction => "rules infraction",
            Termination::Adjudication => "adjudication",
            Termination::Abandoned => "abandoned",
            Termination::Death => "death",
            Termination::Emergency => "emergency",
        }
    }

    /// How the record and every surface say it: `resignation`,
    /// `agreement`, `checkmate`, `stalemate`, else the PGN value.
    pub fn words(self) -> &'static str {
        match self {
            Termination::Resignation => "resignation",
            Termination::Agreement => "agreement",
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            other => other.pgn(),
        }
    }

    /// Reads a tag value or the CLI's words: the PGN values with a space or
    /// a hyphen (`time-forfeit`), and `resignation`, `agreement`,
    /// `checkmate`, `stalemate` (each kept as said; `draw` is `normal`).
    pub fn parse(text: &str) -> Option<Termination> {
        let text = text.trim().to_ascii_lowercase().replace('-', " ");
        Some(match text.as_str() {
            "normal" | "draw" => Termination::Normal,
            "resignation" | "resigned" => Termination::Resignation,
            "agreement" | "agreed" => Termination::Agreement,
            "checkmate" | "mate" => Termination::Checkmate,
            "stalemate" => Termination::Stalemate,
            "time forfeit" | "time" | "flag" => Termination::TimeForfeit,
            "rules infraction" => Termination::RulesInfraction,
            "adjudication" => Termination::Adjudication,
            "abandoned" => Termination::Abandoned,
            "death" => Termination::Death,
            "emergency" => Termination::Emergency,
            _ => return None,
        })
    }
}

/// One half-move of the movetext (SAN) and its clock times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnMove {
    pub san: String,
    pub clock: Option<MoveClock>,
}

/// The tags of the Seven Tag Roster, in order (`Result` comes from the game).
pub const SEVEN_TAG_ROSTER: [&str; 7] =
    ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// The tags people set on a game (the configured ones and those set
/// since), by name: shared between the follower and every [`PgnGame`] made
/// from it, so handing a game's PGN over copies none of them.
pub type SetTags = Arc<BTreeMap<String, String>>;

/// One press of the clock's record (a game whose moves are unknown): the
/// side and its times after the press.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedPress {
    pub side: Side,
    pub clock: Option<MoveClock>,
}

/// A game ready to render: what the board core hands over, cheap to build
/// (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnGame {
    /// The tags people set (never `Result`).
    pub set_tags: SetTags,
    /// Every other tag but `Result` (the STR ones in any order; missing
    /// ones are written `?`). A later duplicate replaces an earlier one,
    /// and one of [`PgnGame::set_tags`].
    pub tags: Vec<(String, String)>,
    /// Comments before the first move, in order.
    pub comments: Vec<String>,
    /// The clock's record when the moves are unknown: one comment a press
    /// after [`PgnGame::comments`], `{1. White [%clk H:MM:SS] [%emt
    /// H:MM:SS]}`, `{1... Black ...}`.
    pub presses: Vec<RecordedPress>,
    pub moves: Vec<PgnMove>,
    /// `None`: the game goes on (`*`).
    pub result: Option<GameResult>,
}

/// `H:MM:SS`, rounding up to the second (negative shows as 0:00:00).
pub fn clock_text(time: Micros) -> String {
    crate::clocktext::remaining(time, crate::clocktext::Style::PGN)
}

/// `H:MM:SS`, rounded to the nearest second.
pub fn duration_text(time: Micros) -> String {
    hms((time.max(0) + SECOND / 2) / SECOND)
}

fn hms(seconds: i64) -> String {
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        (seconds / 60) % 60,
        seconds % 60
    )
}

/// A tag value as written between the quotes.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars().filter(|c| !c.is_control()) {
        if c == '\\' || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether `name` is a PGN tag name: a letter, then letters, digits and
/// underscores (at most [`crate::limits::MAX_TAG_NAME`] characters).
pub fn valid_tag_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= crate::limits::MAX_TAG_NAME
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl PgnGame {
    fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| self.set_tags.get(name).map(String::as_str))
    }

    /// The result token: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn result_text(&self) -> &'static str {
        self.result.map_or("*", GameResult::pgn)
    }

    /// The game in PGN export format (see the module docs).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for name in SEVEN_TAG_ROSTER {
            let value = match name {
                "Result" => self.result_text().to_owned(),
                "Date" => self.tag(name).unwrap_or("????.??.??").to_owned(),
                _ => self.tag(name).unwrap_or("?").to_owned(),
            };
            let _ = writeln!(out, "[{name} \"{}\"]", escape(&value));
        }
        // In ASCII order of the name; a later tag replaces an earlier one.
        let mut others: BTreeMap<&str, &str> = BTreeMap::new();
        let set = self.set_tags.iter();
        for (name, value) in set.chain(self.tags.iter().map(|(n, v)| (n, v))) {
            if SEVEN_TAG_ROSTER.contains(&name.as_str()) || !valid_tag_name(name) {
                continue;
            }
            others.insert(name, value);
        }
        for (name, value) in others {
            let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
        }
        out.push('\n');

        let mut tokens: Vec<String> = Vec::new();
        for comment in &self.comments {
            tokens.push(format!("{{{}}}", comment.replace('}', ")")));
        }
        for (i, press) in self.presses.iter().enumerate() {
            let number = i / 2 + 1;
            let mut text = match press.side {
                Side::White => format!("{{{number}. White"),
                Side::Black => format!("{{{number}... Black"),
            };
            if let Some(clock) = press.clock {
                let _ = write!(
                    text,
                    " [%clk {}] [%emt {}]",
                    clock_text(clock.clk),
                    duration_text(clock.emt)
                );
            }
            text.push('}');
            tokens.push(text);
        }
        let mut after_comment = !self.comments.is_empty() || !self.presses.is_empty();
        for (i, m) in self.moves.iter().enumerate() {
            let number = i / 2 + 1;
            if i % 2 == 0 {
                tokens.push(format!("{number}."));
            } else if after_comment {
                tokens.push(format!("{number}..."));
            }
            tokens.push(m.san.clone());
            after_comment = false;
            if let Some(clock) = m.clock {
                tokens.push(format!(
                    "{{[%clk {}] [%emt {}]}}",
                    clock_text(clock.clk),
                    duration_text(clock.emt)
                ));
                after_comment = true;
            }
        }
        tokens.push(self.result_text().to_owned());

        // Export format: lines of at most 79 characters.
        let mut line = String::new();
        for token in tokens {
            if !line.is_empty() && line.len() + 1 + token.len() > 79 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&token);
        }
        out.push_str(&line);
        out.push_str("\n\n");
        out
    }
}

/// The PGN TimeControl value of one side's control (PGN 9.6.1), always
/// valid: fields `moves/seconds`, `seconds`, `seconds+increment` (also
/// inside a moves field, the common extension `40/5400+30`), `*seconds`
/// (hourglass) and `-` (no limit), joined by `:`. Forms PGN cannot express
/// are written as their closest valid form:
/// * a simple (US) or Bronstein delay of `d` seconds as `+d`: the most a
///   move can give back (`G/25;d5` is `1500+5`);
/// * byo-yomi and Canadian overtime as their main time (`600`): PGN has no
///   overtime; the exact control is in `ClockControl` ([`control_tags`]).
pub fn time_control_tag(control: &TimeControl) -> String {
    let secs = |t: Micros| (t.max(0) / SECOND).to_string();
    match control {
        TimeControl::Upcount => "-".into(),
        TimeControl::Hourglass { time } => format!("*{}", secs(*time)),
        TimeControl::ByoYomi { main, .. } | TimeControl::Canadian { main, .. } => secs(*main),
        TimeControl::Stages(stages) if stages.is_empty() => "?".into(),
        TimeControl::Stages(stages) => stages
            .iter()
            .map(|stage| {
                let mut field = String::new();
                if let Some(moves) = stage.moves {
                    field.push_str(&format!("{moves}/"));
                }
                field.push_str(&secs(stage.time));
                match stage.bonus {
                    Bonus::None => {}
                    Bonus::Increment(t) | Bonus::Delay(t) | Bonus::Bronstein(t) => {
                        field.push_str(&format!("+{}", secs(t)))
                    }
                }
                field
            })
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// The tags that describe a game's control:
/// * the same control for both sides: `TimeControl` (the valid PGN form,
///   [`time_control_tag`]) and `ClockControl` (the exact control in the
///   project's notation, as `chessclockctl new` takes it: `G/25;d5` is
///   `1500d5`, `byoyomi:600:5x30`);
/// * a different control per side (Armageddon, handicap): `TimeControl "?"`
///   (no single value is right), `WhiteTimeControl` / `BlackTimeControl`
///   (each side's valid PGN form) and `WhiteClockControl` /
///   `BlackClockControl` (each side's exact control).
pub fn control_tags(control: &MatchControl) -> Vec<(String, String)> {
    if control.white == control.black {
        vec![
            ("TimeControl".into(), time_control_tag(&control.white)),
            ("ClockControl".into(), control.white.to_string()),
        ]
    } else {
        vec![
            ("TimeControl".into(), "?".into()),
            ("WhiteTimeControl".into(), time_control_tag(&control.white)),
            ("BlackTimeControl".into(), time_control_tag(&control.black)),
            ("WhiteClockControl".into(), control.white.to_string()),
            ("BlackClockControl".into(), control.black.to_string()),
        ]
    }
}

/// `YYYY.MM.DD` and `HH:MM:SS` (UTC) of a wall-clock instant in µs since the
/// Unix epoch (the `Date`/`UTCDate` and `UTCTime` tags).
pub fn utc_date_time(wall_us: i64) -> (String, String) {
    let seconds = wall_us.div_euclid(SECOND);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        format!("{year:04}.{month:02}.{day:02}"),
        format!(
            "{:02}:{:02}:{:02}",
            of_day / 3600,
            (of_day / 60) % 60,
            of_day % 60
        ),
    )
}

/// RFC 3339 UTC with milliseconds (`2026-11-30T13:02:03.456Z`), as DGT
/// LiveChess writes `ReferenceTime`.
pub fn rfc3339_utc_ms(wall_us: i64) -> String {
    let (date, time) = utc_date_time(wall_us);
    let ms = wall_us.div_euclid(1000).rem_euclid(1000);
    format!("{}T{time}.{ms:03}Z", date.replace('.', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timecontrol::{parse, Stage};

    fn game() -> PgnGame {
        PgnGame {
            tags: vec![
                ("White".into(), "Aap, A.".into()),
                ("TimeControl".into(), "180+2".into()),
                ("Event".into(), "Club \"Open\"".into()),
                ("Site".into(), "Utrecht".into()),
                ("Date".into(), "2026.11.30".into()),
                ("Round".into(), "3".into()),
                ("Black".into(), "Noot, B.".into()),
                ("BlackClock".into(), "0:03:00".into()),
                ("WhiteClock".into(), "0:02:53".into()),
            ],
            moves: vec![
                PgnMove {
                    san: "e4".into(),
                    clock: Some(MoveClock {
                        clk: 174_000_000,
                        emt: 10_000_000,
                    }),
                },
                PgnMove {
                    san: "e5".into(),
                    clock: Some(MoveClock {
                        clk: 179_200_000,
                        emt: 4_800_000,
                    }),
                },
                PgnMove {
                    san: "Nf3".into(),
                    clock: None,
                },
            ],
            ..PgnGame::default()
        }
    }

    #[test]
    fn clock_texts_round_as_documented() {
        assert_eq!(clock_text(174_000_000), "0:02:54");
        assert_eq!(clock_text(173_000_001), "0:02:54");
        assert_eq!(clock_text(400_000), "0:00:01");
        assert_eq!(clock_text(0), "0:00:00");
        assert_eq!(clock_text(-5), "0:00:00");
        assert_eq!(clock_text(5_400_000_000), "1:30:00");
        assert_eq!(duration_text(10_499_999), "0:00:10");
        assert_eq!(duration_text(10_500_000), "0:00:11");
    }

    #[test]
    fn renders_the_seven_tag_roster_first_then_sorted_tags_and_a_closing_blank_line() {
        assert_eq!(
            game().render(),
            "[Event \"Club \\\"Open\\\"\"]\n\
             [Site \"Utrecht\"]\n\
             [Date \"2026.11.30\"]\n\
             [Round \"3\"]\n\
             [White \"Aap, A.\"]\n\
             [Black \"Noot, B.\"]\n\
             [Result \"*\"]\n\
             [BlackClock \"0:03:00\"]\n\
             [TimeControl \"180+2\"]\n\
             [WhiteClock \"0:02:53\"]\n\
             \n\
             1. e4 {[%clk 0:02:54] [%emt 0:00:10]} 1... e5 {[%clk 0:03:00] [%emt 0:00:05]}\n\
             2. Nf3 *\n\
             \n"
        );
    }

    #[test]
    fn missing_roster_tags_are_unknown_and_the_result_is_the_marker() {
        let mut g = PgnGame {
            result: Some(GameResult::Draw),
            ..PgnGame::default()
        };
        g.comments.push("a {note}".into());
        let text = g.render();
        assert!(text.starts_with(
            "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
             [White \"?\"]\n[Black \"?\"]\n[Result \"1/2-1/2\"]\n\n"
        ));
        assert!(text.ends_with("\n{a {note)} 1/2-1/2\n\n"), "{text}");
    }

    #[test]
    fn long_games_wrap_below_80_columns() {
        let mut g = PgnGame::default();
        for ply in 1..=80 {
            g.moves.push(PgnMove {
                san: if ply % 2 == 1 { "Nf3" } else { "Nf6" }.into(),
                clock: Some(MoveClock {
                    clk: 3_600_000_000,
                    emt: 1_000_000,
                }),
            });
        }
        let text = g.render();
        assert!(text.lines().all(|l| l.len() <= 79));
        assert!(text.contains("40... Nf6"));
    }

    #[test]
    fn time_control_tags_are_valid_pgn_for_every_control() {
        let tc = |text: &str| time_control_tag(&parse(text).unwrap());
        assert_eq!(tc("40/5400+30:1800+30"), "40/5400+30:1800+30");
        assert_eq!(tc("180+2"), "180+2");
        assert_eq!(tc("300d5"), "300+5");
        assert_eq!(tc("G/25;d5"), "1500+5");
        assert_eq!(tc("40/120, SD/30;d5"), "40/7200+5:1800+5");
        assert_eq!(tc("300b3"), "300+3");
        assert_eq!(tc("-"), "-");
        assert_eq!(tc("*60"), "*60");
        assert_eq!(tc("byoyomi:600:5x30"), "600");
        assert_eq!(tc("canadian:600:25/300"), "600");
        assert_eq!(time_control_tag(&TimeControl::Stages(vec![])), "?");
        let stage = Stage {
            moves: Some(40),
            time: 7_200 * SECOND,
            bonus: Bonus::None,
        };
        assert_eq!(
            time_control_tag(&TimeControl::Stages(vec![stage])),
            "40/7200"
        );
        // Every value matches PGN 9.6.1's grammar (with the increment in a
        // moves field).
        let valid = |v: &str| {
            v == "?"
                || v == "-"
                || v.split(':').all(|field| {
                    let field = field.strip_prefix('*').unwrap_or(field);
                    let (moves, rest) = field.split_once('/').unwrap_or(("1", field));
                    let (secs, inc) = rest.split_once('+').unwrap_or((rest, "0"));
                    [moves, secs, inc]
                        .iter()
                        .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                })
        };
        for text in [
            "40/5400+30:1800+30",
            "G/25;d5",
            "40/120, SD/30;d5",
            "G/3;inc2",
            "byoyomi:600:5x30",
            "canadian:600:25/300",
            "*180",
            "-",
            "300b3",
        ] {
            assert!(valid(&tc(text)), "{text} -> {}", tc(text));
        }
    }

    #[test]
    fn the_exact_control_is_kept_per_side_when_the_sides_differ() {
        let same = MatchControl::same(parse("G/25;d5").unwrap());
        assert_eq!(
            control_tags(&same),
            vec![
                ("TimeControl".to_owned(), "1500+5".to_owned()),
                ("ClockControl".to_owned(), "1500d5".to_owned())
            ]
        );
        let armageddon = MatchControl {
            white: parse("300").unwrap(),
            black: parse("240").unwrap(),
        };
        let tags = control_tags(&armageddon);
        assert_eq!(tags[0], ("TimeControl".to_owned(), "?".to_owned()));
        assert!(tags.contains(&("WhiteTimeControl".to_owned(), "300".to_owned())));
        assert!(tags.contains(&("BlackTimeControl".to_owned(), "240".to_owned())));
        assert!(tags.contains(&("BlackClockControl".to_owned(), "240".to_owned())));
        let byo = MatchControl::same(parse("byoyomi:600:5x30").unwrap());
        assert_eq!(control_tags(&byo)[1].1, "byoyomi:600:5x30");
    }

    #[test]
    fn results_terminations_and_dates() {
        for r in [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
        ] {
            assert_eq!(GameResult::parse(r.pgn()), Some(r));
        }
        assert_eq!(GameResult::parse("*"), None);
        assert_eq!(
            Termination::parse("time-forfeit"),
            Some(Termination::TimeForfeit)
        );
        assert_eq!(
            Termination::parse("resignation"),
            Some(Termination::Resignation)
        );
        assert_eq!(Termination::parse("bored"), None);
        for t in [
            Termination::Normal,
            Termination::TimeForfeit,
            Termination::RulesInfraction,
            Termination::Adjudication,
            Termination::Abandoned,
            Termination::Death,
            Termination::Emergency,
            Termination::Resignation,
            Termination::Agreement,
            Termination::Checkmate,
            Termination::Stalemate,
        ] {
            assert_eq!(Termination::parse(t.words()), Some(t));
        }
        // Issue 28 item 5: a resignation is kept as one; its tag is `normal`.
        assert_eq!(
            Termination::parse("resignation").map(Termination::pgn),
            Some("normal")
        );
        assert_eq!(
            Termination::parse("agreement").map(Termination::words),
            Some("agreement")
        );
        // 2026-11-30T13:02:03.456Z
        let wall = 1_796_043_723_456_000;
        assert_eq!(
            utc_date_time(wall),
            ("2026.11.30".to_owned(), "13:02:03".to_owned())
        );
        assert_eq!(rfc3339_utc_ms(wall), "2026-11-30T13:02:03.456Z");
        assert_eq!(utc_date_time(0).0, "1970.01.01");
        assert_eq!(utc_date_time(951_782_400 * SECOND).0, "2000.02.29");
    }

    #[test]
    fn tag_names_and_values() {
        assert!(valid_tag_name("WhiteElo"));
        assert!(valid_tag_name("Board_1"));
        assert!(!valid_tag_name("1abc"));
        assert!(!valid_tag_name("White Elo"));
        assert!(!valid_tag_name(""));
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\cd");
        assert!(valid_tag_name(&"a".repeat(crate::limits::MAX_TAG_NAME)));
        assert!(!valid_tag_name(
            &"a".repeat(crate::limits::MAX_TAG_NAME + 1)
        ));
    }

    /// The tags people set are shared, not copied, and merge with the
    /// daemon's own in ASCII order (the roster first); a daemon's tag of the
    /// same name wins.
    #[test]
    fn set_tags_are_shared_and_merged_in_ascii_order() {
        let set: SetTags = Arc::new(
            [
                ("White", "Aap, A."),
                ("Event", "Open"),
                ("WhiteElo", "2100"),
                ("Annotator", "B"),
                ("Site", "set"),
            ]
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        );
        let g = PgnGame {
            set_tags: Arc::clone(&set),
            tags: vec![
                ("UTCDate".into(), "2026.11.30".into()),
                ("Site".into(), "own".into()),
                ("BlackClock".into(), "0:03:00".into()),
            ],
            ..PgnGame::default()
        };
        assert!(
            Arc::ptr_eq(&g.clone().set_tags, &set),
            "a clone shares them"
        );
        assert_eq!(
            g.render(),
            "[Event \"Open\"]\n[Site \"own\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
             [White \"Aap, A.\"]\n[Black \"?\"]\n[Result \"*\"]\n[Annotator \"B\"]\n\
             [BlackClock \"0:03:00\"]\n[UTCDate \"2026.11.30\"]\n[WhiteElo \"2100\"]\n\n*\n\n"
        );
    }
}
