//! The printers: project notation (`Display`) and FIDE-style prose.

use std::fmt::{self, Write as _};

use super::{Bonus, Stage, TimeControl};
use crate::time::{Micros, SECOND};

/// Seconds as the notation writes them: whole seconds plainly, a fraction
/// (only possible for controls built in code) with up to six decimals.
fn seconds(time: Micros) -> String {
    let time = time.max(0);
    let whole = time / SECOND;
    let fraction = time % SECOND;
    if fraction == 0 {
        whole.to_string()
    } else {
        let digits = format!("{fraction:06}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

fn write_bonus(out: &mut String, bonus: Bonus) {
    match bonus {
        Bonus::None => {}
        Bonus::Increment(x) => {
            let _ = write!(out, "+{}", seconds(x));
        }
        Bonus::Delay(x) => {
            let _ = write!(out, "d{}", seconds(x));
        }
        Bonus::Bronstein(x) => {
            let _ = write!(out, "b{}", seconds(x));
        }
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::Upcount => f.write_str("-"),
            TimeControl::Hourglass { time } => write!(f, "*{}", seconds(*time)),
            TimeControl::ByoYomi {
                main,
                periods,
                period,
            } => write!(
                f,
                "byoyomi:{}:{}x{}",
                seconds(*main),
                periods,
                seconds(*period)
            ),
            TimeControl::Canadian { main, moves, block } => write!(
                f,
                "canadian:{}:{}/{}",
                seconds(*main),
                moves,
                seconds(*block)
            ),
            TimeControl::Stages(stages) => {
                let mut out = String::new();
                for (i, stage) in stages.iter().enumerate() {
                    if i > 0 {
                        out.push(':');
                    }
                    if let Some(moves) = stage.moves {
                        let _ = write!(out, "{moves}/");
                    }
                    out.push_str(&seconds(stage.time));
                    write_bonus(&mut out, stage.bonus);
                }
                f.write_str(&out)
            }
        }
    }
}

/// A duration in words: minutes when whole minutes, else seconds
/// ("90 min", "1 min 30 s", "30 s").
fn duration(time: Micros) -> String {
    let time = time.max(0);
    if time >= 60 * SECOND && time % (60 * SECOND) == 0 {
        format!("{} min", time / (60 * SECOND))
    } else if time >= 60 * SECOND {
        format!(
            "{} min {} s",
            time / (60 * SECOND),
            seconds(time % (60 * SECOND))
        )
    } else {
        format!("{} s", seconds(time))
    }
}

fn bonus_words(bonus: Bonus) -> String {
    match bonus {
        Bonus::None => String::new(),
        Bonus::Increment(x) => format!("{} per move", duration(x)),
        Bonus::Delay(x) => format!("{} delay per move", duration(x)),
        Bonus::Bronstein(x) => format!("{} Bronstein delay per move", duration(x)),
    }
}

fn stage_words(stage: &Stage, repeating: bool) -> String {
    match stage.moves {
        Some(moves) if repeating => format!("{} for every {moves} moves", duration(stage.time)),
        Some(moves) => format!("{} for {moves} moves", duration(stage.time)),
        None => duration(stage.time),
    }
}

impl TimeControl {
    /// FIDE-style prose, e.g. "90 min for 40 moves, then 30 min; 30 s per move from move 1".
    pub fn prose(&self) -> String {
        match self {
            TimeControl::Upcount => "no time limit (the clocks count up)".to_owned(),
            TimeControl::Hourglass { time } => format!(
                "hourglass: {} each, the time one side uses is added to the other",
                duration(*time)
            ),
            TimeControl::ByoYomi {
                main,
                periods,
                period,
            } => format!(
                "{}, then byo-yomi: {periods} period{} of {}",
                duration(*main),
                if *periods == 1 { "" } else { "s" },
                duration(*period)
            ),
            TimeControl::Canadian { main, moves, block } => format!(
                "{}, then Canadian overtime: {moves} moves in {}, repeating",
                duration(*main),
                duration(*block)
            ),
            TimeControl::Stages(stages) => stages_prose(stages),
        }
    }
}

fn stages_prose(stages: &[Stage]) -> String {
    let Some(last) = stages.last() else {
        return "no stages".to_owned();
    };
    let repeating = last.moves.is_some();
    let mut text = String::new();
    for (i, stage) in stages.iter().enumerate() {
        if i > 0 {
            text.push_str(", then ");
        }
        text.push_str(&stage_words(stage, repeating && i + 1 == stages.len()));
    }
    // One bonus from some move on to the end of the game reads as one clause;
    // anything else is said stage by stage.
    let first_bonus = stages.iter().position(|s| s.bonus != Bonus::None);
    let Some(first_bonus) = first_bonus else {
        return text;
    };
    let bonus = stages[first_bonus].bonus;
    if stages[first_bonus..].iter().all(|s| s.bonus == bonus) {
        let from_move: u64 = 1 + stages[..first_bonus]
            .iter()
            .map(|s| u64::from(s.moves.unwrap_or(0)))
            .sum::<u64>();
        let _ = write!(text, "; {} from move {from_move}", bonus_words(bonus));
        return text;
    }
    let mut text = String::new();
    for (i, stage) in stages.iter().enumerate() {
        if i > 0 {
            text.push_str(", then ");
        }
        text.push_str(&stage_words(stage, repeating && i + 1 == stages.len()));
        if stage.bonus != Bonus::None {
            let _ = write!(text, " with {}", bonus_words(stage.bonus));
        }
    }
    text
}
