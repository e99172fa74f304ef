//! Time-control notation: the PGN TimeControl grammar with `d`/`b` delay
//! extensions (see `shared/reference/replay-format.md`), US Chess notation
//! (`G/90;d5`, `40/120, SD/30;d5`, `G/3;inc2`), and FIDE-style prose.
//!
//! CONTRACT NOTE (skeleton): the public items below are the interface the
//! rest of the daemon codes against. Add freely.

use crate::engine::Micros;

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

/// Parses the project's notation (PGN TimeControl + `d`/`b`) or US Chess
/// notation, whichever fits.
pub fn parse(text: &str) -> Result<TimeControl, ParseError> {
    let _ = text;
    todo!("timecontrol: parse")
}

impl TimeControl {
    /// FIDE-style prose, e.g. "90 min for 40 moves, then 30 min; 30 s per move from move 1".
    pub fn prose(&self) -> String {
        todo!("timecontrol: prose")
    }
}

/// Prints the project's notation (PGN TimeControl + extensions); parsing the
/// output gives the same control back (byo-yomi and Canadian print in the
/// config's object schema only and have their own textual form).
impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let _ = f;
        todo!("timecontrol: display")
    }
}
