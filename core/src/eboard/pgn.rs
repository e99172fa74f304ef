//! A live PGN of the game on an electronic board, with clock times, for
//! broadcast tools (DGT LiveChess, lichess broadcasts read exactly this).
//!
//! Promises:
//! * pure string building ([`LivePgn::render`]), tested byte for byte;
//! * tags: the Seven Tag Roster, then `TimeControl` (PGN notation of the
//!   game's control), `WhiteClock` and `BlackClock` (each side's time left
//!   when the PGN was rendered, `H:MM:SS`);
//! * after every move whose times are known: `{[%clk H:MM:SS] [%emt H:MM:SS]}`,
//!   `%clk` the time left on the mover's clock after the move (after any
//!   increment), rounded *up* to the second like the display (so 0:00:00
//!   only when the flag fell), `%emt` the time the move took, rounded to the
//!   nearest second;
//! * [`write_atomic`] replaces the file in one step (temp file, fsync,
//!   rename, fsync of the directory): a reader never sees half a file.

use super::detect::{BoardEvent, GameEndReason, MoveStatus};
use crate::engine::{Micros, Side, SECOND};
use crate::timecontrol::{Bonus, TimeControl};

/// The tags a board's PGN starts with (`?` where unknown, as PGN wants).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnTags {
    pub event: String,
    pub site: String,
    /// `YYYY.MM.DD` (`????.??.??` unknown).
    pub date: String,
    pub round: String,
    pub white: String,
    pub black: String,
    /// The PGN TimeControl value, e.g. `40/5400+30:1800+30` (see
    /// [`time_control_tag`]).
    pub time_control: String,
}

impl Default for PgnTags {
    fn default() -> Self {
        PgnTags {
            event: "?".into(),
            site: "?".into(),
            date: "????.??.??".into(),
            round: "?".into(),
            white: "?".into(),
            black: "?".into(),
            time_control: "?".into(),
        }
    }
}

/// The clock times of one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveClock {
    /// Time left on the mover's clock after the move, increment included.
    pub clk: Micros,
    /// Time the move took.
    pub emt: Micros,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct PgnMove {
    san: String,
    clock: Option<MoveClock>,
}

/// The PGN of one game, kept up to date move by move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivePgn {
    pub tags: PgnTags,
    moves: Vec<PgnMove>,
    result: String,
    white_clock: Option<Micros>,
    black_clock: Option<Micros>,
}

/// `H:MM:SS`, rounding up to the second (negative shows as 0:00:00).
pub fn clock_text(time: Micros) -> String {
    hms((time.max(0) + SECOND - 1) / SECOND)
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

fn escape(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '\\' => vec!['\\', '\\'],
            '"' => vec!['\\', '"'],
            c => vec![c],
        })
        .collect()
}

impl LivePgn {
    pub fn new(tags: PgnTags) -> LivePgn {
        LivePgn {
            tags,
            moves: Vec::new(),
            result: "*".into(),
            white_clock: None,
            black_clock: None,
        }
    }

    /// Half-moves recorded.
    pub fn ply(&self) -> u32 {
        self.moves.len() as u32
    }

    /// Records move `ply` (1-based): a new move, or a replacement of a
    /// tentative one (its clock times are then kept).
    pub fn set_move(&mut self, ply: u32, san: &str) {
        let index = ply.saturating_sub(1) as usize;
        if index < self.moves.len() {
            self.moves[index].san = san.to_owned();
        } else if index == self.moves.len() {
            self.moves.push(PgnMove {
                san: san.to_owned(),
                clock: None,
            });
        }
    }

    /// The clock times of move `ply` (known when the press comes).
    pub fn set_clock(&mut self, ply: u32, clock: MoveClock) {
        if let Some(m) = self.moves.get_mut(ply.saturating_sub(1) as usize) {
            m.clock = Some(clock);
        }
    }

    /// Keeps the first `ply` half-moves (a takeback).
    pub fn truncate(&mut self, ply: u32) {
        self.moves.truncate(ply as usize);
        self.result = "*".into();
    }

    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn set_result(&mut self, result: &str) {
        self.result = result.to_owned();
    }

    /// Each side's time left, for the `WhiteClock`/`BlackClock` tags.
    pub fn set_clocks(&mut self, white: Micros, black: Micros) {
        self.white_clock = Some(white);
        self.black_clock = Some(black);
    }

    /// Follows the board: moves (tentative ones too, replaced as they
    /// change), takebacks, and the result of a checkmate, stalemate or a
    /// result signal.
    pub fn apply(&mut self, event: &BoardEvent) {
        match event {
            BoardEvent::MoveDetected(m)
                if m.status == MoveStatus::Tentative || m.ply > self.ply() =>
            {
                self.set_move(m.ply, &m.san);
            }
            BoardEvent::TakeBack { to_ply, .. } => self.truncate(*to_ply),
            BoardEvent::GameEnd { reason, winner, .. } => {
                self.set_result(match (reason, winner) {
                    (GameEndReason::Checkmate, Some(Side::White)) => "1-0",
                    (GameEndReason::Checkmate, Some(Side::Black)) => "0-1",
                    _ => "1/2-1/2",
                });
            }
            BoardEvent::ResultSignal { result, .. } => self.set_result(result.pgn()),
            _ => {}
        }
    }

    /// The PGN text (ends with a newline).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let clock_tag = |t: Option<Micros>| t.map_or_else(|| "?".to_owned(), clock_text);
        let tags: [(&str, String); 10] = [
            ("Event", self.tags.event.clone()),
            ("Site", self.tags.site.clone()),
            ("Date", self.tags.date.clone()),
            ("Round", self.tags.round.clone()),
            ("White", self.tags.white.clone()),
            ("Black", self.tags.black.clone()),
            ("Result", self.result.clone()),
            ("TimeControl", self.tags.time_control.clone()),
            ("WhiteClock", clock_tag(self.white_clock)),
            ("BlackClock", clock_tag(self.black_clock)),
        ];
        for (name, value) in tags {
            out.push_str(&format!("[{name} \"{}\"]\n", escape(&value)));
        }
        out.push('\n');

        let mut tokens = Vec::new();
        let mut after_comment = false;
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
        tokens.push(self.result.clone());

        // PGN export format: lines of at most 79 characters.
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
        out.push('\n');
        out
    }
}

/// The PGN TimeControl value of a control (PGN 9.6.1; a simple or Bronstein
/// delay uses the project's `d`/`b` extension; byo-yomi and Canadian
/// overtime, which PGN cannot express, give `?`).
pub fn time_control_tag(control: &TimeControl) -> String {
    let secs = |t: Micros| (t / SECOND).to_string();
    match control {
        TimeControl::Upcount => "-".into(),
        TimeControl::Hourglass { time } => format!("*{}", secs(*time)),
        TimeControl::ByoYomi { .. } | TimeControl::Canadian { .. } => "?".into(),
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
                    Bonus::Increment(t) => field.push_str(&format!("+{}", secs(t))),
                    Bonus::Delay(t) => field.push_str(&format!("d{}", secs(t))),
                    Bonus::Bronstein(t) => field.push_str(&format!("b{}", secs(t))),
                }
                field
            })
            .collect::<Vec<_>>()
            .join(":"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eboard::detect::{DetectedMove, SignalledResult};
    use crate::timecontrol::Stage;

    fn tags() -> PgnTags {
        PgnTags {
            event: "Club \"Open\"".into(),
            site: "Utrecht".into(),
            date: "2026.11.30".into(),
            round: "3".into(),
            white: "Aap, A.".into(),
            black: "Noot, B.".into(),
            time_control: "180+2".into(),
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
    fn renders_tags_moves_and_clock_comments_exactly() {
        let mut pgn = LivePgn::new(tags());
        pgn.set_move(1, "e4");
        pgn.set_clock(
            1,
            MoveClock {
                clk: 174_000_000,
                emt: 10_000_000,
            },
        );
        pgn.set_move(2, "e5");
        pgn.set_clock(
            2,
            MoveClock {
                clk: 179_200_000,
                emt: 4_800_000,
            },
        );
        pgn.set_move(3, "Nf3");
        pgn.set_clocks(172_500_000, 179_200_000);
        assert_eq!(
            pgn.render(),
            "[Event \"Club \\\"Open\\\"\"]\n\
             [Site \"Utrecht\"]\n\
             [Date \"2026.11.30\"]\n\
             [Round \"3\"]\n\
             [White \"Aap, A.\"]\n\
             [Black \"Noot, B.\"]\n\
             [Result \"*\"]\n\
             [TimeControl \"180+2\"]\n\
             [WhiteClock \"0:02:53\"]\n\
             [BlackClock \"0:03:00\"]\n\
             \n\
             1. e4 {[%clk 0:02:54] [%emt 0:00:10]} 1... e5 {[%clk 0:03:00] [%emt 0:00:05]}\n\
             2. Nf3 *\n"
        );
    }

    #[test]
    fn follows_board_events() {
        let mut pgn = LivePgn::new(PgnTags::default());
        let mv = |ply: u32, san: &str, status| {
            BoardEvent::MoveDetected(DetectedMove {
                ply,
                side: Side::White,
                side_moves: 1,
                san: san.into(),
                uci: String::new(),
                fen_after: String::new(),
                status,
                at: 0,
            })
        };
        pgn.apply(&mv(1, "d3", MoveStatus::Tentative));
        pgn.apply(&mv(1, "d4", MoveStatus::Tentative));
        pgn.set_clock(
            1,
            MoveClock {
                clk: 60_000_000,
                emt: 0,
            },
        );
        pgn.apply(&mv(1, "d4", MoveStatus::Confirmed));
        pgn.apply(&mv(2, "d5", MoveStatus::Tentative));
        pgn.apply(&mv(3, "c4", MoveStatus::Tentative));
        pgn.apply(&BoardEvent::TakeBack {
            to_ply: 2,
            fen: String::new(),
            at: 0,
        });
        pgn.apply(&BoardEvent::ResultSignal {
            result: SignalledResult::Draw,
            at: 0,
        });
        let text = pgn.render();
        assert!(text.contains("[Result \"1/2-1/2\"]"), "{text}");
        assert!(text.contains("[WhiteClock \"?\"]"), "{text}");
        assert!(
            text.ends_with("\n1. d4 {[%clk 0:01:00] [%emt 0:00:00]} 1... d5 1/2-1/2\n"),
            "{text}"
        );
        pgn.apply(&BoardEvent::GameEnd {
            reason: GameEndReason::Checkmate,
            winner: Some(Side::Black),
            ply: 2,
            at: 0,
        });
        assert!(pgn.render().ends_with(" 0-1\n"));
    }

    #[test]
    fn long_games_wrap_below_80_columns() {
        let mut pgn = LivePgn::new(PgnTags::default());
        for ply in 1..=80 {
            pgn.set_move(ply, if ply % 2 == 1 { "Nf3" } else { "Nf6" });
            pgn.set_clock(
                ply,
                MoveClock {
                    clk: 3_600_000_000,
                    emt: 1_000_000,
                },
            );
        }
        let text = pgn.render();
        assert!(text.lines().all(|l| l.len() <= 79));
        assert!(text.contains("40... Nf6"));
    }

    #[test]
    fn time_control_tags() {
        let stage = |moves, time, bonus| Stage { moves, time, bonus };
        let classical = TimeControl::Stages(vec![
            stage(Some(40), 5_400 * SECOND, Bonus::Increment(30 * SECOND)),
            stage(None, 1_800 * SECOND, Bonus::Increment(30 * SECOND)),
        ]);
        assert_eq!(time_control_tag(&classical), "40/5400+30:1800+30");
        assert_eq!(
            time_control_tag(&TimeControl::Stages(vec![stage(
                None,
                300 * SECOND,
                Bonus::Delay(5 * SECOND)
            )])),
            "300d5"
        );
        assert_eq!(time_control_tag(&TimeControl::Upcount), "-");
        assert_eq!(
            time_control_tag(&TimeControl::Hourglass { time: 60 * SECOND }),
            "*60"
        );
    }
}
