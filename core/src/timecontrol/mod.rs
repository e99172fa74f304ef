//! Time-control notation: the PGN TimeControl grammar with `d`/`b` delay
//! extensions (see `docs/replay-format.md`), US Chess notation
//! (`G/90;d5`, `40/120, SD/30;d5`, `G/3;inc2`), and FIDE-style prose.
//!
//! Promises:
//! * [`parse`] accepts exactly the project grammar, US Chess notation, and the
//!   project's textual forms of byo-yomi (`byoyomi:MAIN:PERIODSxSECONDS`, e.g.
//!   `byoyomi:600:5x30`) and Canadian overtime (`canadian:MAIN:MOVES/SECONDS`,
//!   e.g. `canadian:600:25/300`); anything else is an error naming the 1-based
//!   character position where it goes wrong;
//! * `?` (PGN "unknown") is refused: it is not a control one can play;
//! * [`TimeControl`]'s `Display` prints the project notation, and parsing the
//!   printed text gives the same control back (for whole seconds);
//! * [`TimeControl::prose`] describes a control the way FIDE regulations do;
//! * nothing panics, whatever the input (huge numbers are errors).

mod parse;
mod print;

pub use parse::parse;

use crate::time::Micros;

/// The longest time anything of a game can hold: a stage, a bonus, a
/// side's remaining time after a correction (100 hours). Longer values are
/// refused at every interface; the bound keeps every instant the engine
/// computes far from overflow.
pub const MAX_TIME: Micros = 100 * 3_600 * 1_000_000;
/// The most moves a side can have completed (a correction, a stage's move
/// count).
pub const MAX_MOVES: u32 = 999;
/// The highest stage number a repeating control is allowed to reach.
pub const MAX_STAGE: u32 = MAX_MOVES;

/// The bonus of a stage: at most one of increment or delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Bonus {
    #[default]
    None,
    /// Fischer increment.
    Increment(Micros),
    /// Simple (US) delay.
    Delay(Micros),
    /// Bronstein delay.
    Bronstein(Micros),
}

impl Bonus {
    /// The amount, whatever the kind (0 for none).
    pub fn amount(self) -> Micros {
        match self {
            Bonus::None => 0,
            Bonus::Increment(x) | Bonus::Delay(x) | Bonus::Bronstein(x) => x,
        }
    }

    /// The Fischer increment (0 for other kinds).
    pub fn increment(self) -> Micros {
        match self {
            Bonus::Increment(x) => x,
            _ => 0,
        }
    }

    /// The simple delay (0 for other kinds).
    pub fn delay(self) -> Micros {
        match self {
            Bonus::Delay(x) => x,
            _ => 0,
        }
    }

    /// The Bronstein delay (0 for other kinds).
    pub fn bronstein(self) -> Micros {
        match self {
            Bonus::Bronstein(x) => x,
            _ => 0,
        }
    }
}

/// A stage ("period"): `time` for `moves` moves (`None`: rest of the game).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    pub moves: Option<u32>,
    pub time: Micros,
    pub bonus: Bonus,
}

/// One side's time control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// Stages in order; the last one repeats when it has a move count.
    Stages(Vec<Stage>),
    /// Sandclock: time used is added to the opponent.
    Hourglass { time: Micros },
    /// No limit; clocks count up. No flags. (PGN `-`.)
    Upcount,
    /// Main time, then `periods` periods of `period` each.
    ByoYomi {
        main: Micros,
        periods: u32,
        period: Micros,
    },
    /// Main time, then blocks of `moves` moves in `block` time.
    Canadian {
        main: Micros,
        moves: u32,
        block: Micros,
    },
}

/// A notation error, naming the 1-based character position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at position {position}: {message}")]
pub struct ParseError {
    pub position: usize,
    pub message: String,
}

impl TimeControl {
    /// A single sudden-death stage with an optional bonus.
    pub fn sudden_death(time: Micros, bonus: Bonus) -> TimeControl {
        TimeControl::Stages(vec![Stage {
            moves: None,
            time,
            bonus,
        }])
    }

    /// The stage used for 1-based stage number `stage` (the last stage repeats;
    /// `None` for controls without stages).
    pub fn stage(&self, stage: u32) -> Option<&Stage> {
        match self {
            TimeControl::Stages(stages) if !stages.is_empty() => {
                let index = (stage.max(1) as usize - 1).min(stages.len() - 1);
                stages.get(index)
            }
            _ => None,
        }
    }

    /// Whether 1-based `stage` is the last one (all remaining moves must be
    /// completed in it). A repeating last field counts as the last stage
    /// from [`MAX_STAGE`] on: stage flags under "at the flag" end there (a
    /// flag in it is a loss flag), so a clock left running for days through
    /// a repeating one-second stage costs a bounded number of flags, not
    /// millions. (Under "by moves" every flag is a loss flag anyway; a
    /// one-move repeating field can still pass stage 999 by its presses.)
    /// Special
    /// controls: byo-yomi and Canadian overtime are in their last stage from
    /// stage 2 (overtime) on; hourglass and upcount have only one stage.
    pub fn is_last_stage(&self, stage: u32) -> bool {
        match self {
            TimeControl::Stages(stages) => match stages.last() {
                None => true,
                Some(last) => {
                    stage as usize >= stages.len() && (last.moves.is_none() || stage >= MAX_STAGE)
                }
            },
            TimeControl::ByoYomi { .. } | TimeControl::Canadian { .. } => stage >= 2,
            TimeControl::Hourglass { .. } | TimeControl::Upcount => true,
        }
    }

    /// The total number of moves to complete by the end of 1-based `stage`,
    /// or `None` when that stage has no move count.
    pub fn moves_by_end_of(&self, stage: u32) -> Option<u64> {
        let TimeControl::Stages(stages) = self else {
            return None;
        };
        let last = stages.last()?;
        let stage = u64::from(stage.max(1));
        if stage as usize > stages.len() || stage == stages.len() as u64 {
            // in or beyond the last field: it must repeat
            let per_repeat = u64::from(last.moves?);
            let before: u64 = stages[..stages.len() - 1]
                .iter()
                .map(|s| u64::from(s.moves.unwrap_or(0)))
                .sum();
            let repeats = stage - (stages.len() as u64 - 1);
            return Some(before.saturating_add(per_repeat.saturating_mul(repeats)));
        }
        stages[stage as usize - 1].moves?;
        Some(
            stages[..stage as usize]
                .iter()
                .map(|s| u64::from(s.moves.unwrap_or(0)))
                .sum(),
        )
    }

    /// The highest 1-based stage number a game under this control can be in:
    /// the number of fields, or [`MAX_STAGE`] when the last field repeats;
    /// 2 for byo-yomi and Canadian overtime (main time, overtime); 1 for
    /// hourglass and upcount.
    pub fn max_stage(&self) -> u32 {
        match self {
            TimeControl::Stages(stages) => match stages.last() {
                None => 1,
                Some(last) if last.moves.is_some() => MAX_STAGE,
                Some(_) => u32::try_from(stages.len()).unwrap_or(MAX_STAGE).max(1),
            },
            TimeControl::ByoYomi { .. } | TimeControl::Canadian { .. } => 2,
            TimeControl::Hourglass { .. } | TimeControl::Upcount => 1,
        }
    }

    /// Whether any stage has an increment or a delay.
    pub fn has_bonus(&self) -> bool {
        match self {
            TimeControl::Stages(stages) => stages.iter().any(|s| s.bonus != Bonus::None),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
