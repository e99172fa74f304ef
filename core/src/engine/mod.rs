//! The timing engine: a pure state machine implementing FIDE Laws Art. 6 as
//! described in `docs/clock-behaviour.md`.
//!
//! Promises:
//! * no I/O and no clock of its own: every call takes the instant `now`
//!   ([`Micros`] on a monotonic time base chosen by the caller);
//! * instants never go backwards: an input earlier than the last one the
//!   engine saw is refused with [`EngineError::TimeWentBackwards`];
//! * flags fall at their exact computed instant, whenever the engine is asked;
//!   [`Engine::next_deadline`] says when the next one (or the next internal
//!   change, e.g. a byo-yomi period ending) is due, so a runtime can sleep
//!   until exactly then;
//! * nothing panics on any input; arithmetic saturates;
//! * while a side's flag has not fallen, `used + remaining` equals its initial
//!   time plus everything credited to it ([`Engine::credited`]).
//!
//! Decisions where the reference leaves room (see `clock-behaviour.md`):
//! * a flag falls at the instant the time reaches zero, so a press at exactly
//!   that instant comes after the flag;
//! * freeze default: a last-stage (loss) flag freezes the clock when the
//!   flagged side's stage has an increment or a delay, and always in
//!   hourglass, byo-yomi and Canadian overtime (the game cannot go on in
//!   time); never in plain sudden death or upcount. [`Settings::freeze`]
//!   overrides it;
//! * under [`StageAdvance::Flag`] a repeating stage's flags advance the
//!   stage up to [`crate::timecontrol::MAX_STAGE`] (999); a flag there is a
//!   loss flag, which bounds what one advance of a long-running clock does;
//! * under [`StageAdvance::Moves`] running out in any stage is a loss flag
//!   (`last_stage: true`); after a loss flag a side stays at zero, is credited
//!   nothing, and its presses still count moves and switch the clocks when
//!   the game is not frozen;
//! * no side completes more than [`MAX_MOVES`] (999) moves, the bound every
//!   interface states: a press that would be a side's 1000th move is
//!   ignored ([`Ignored::MoveLimit`]) and changes nothing; the replay tool
//!   refuses it as input out of bounds;
//! * byo-yomi and Canadian overtime count as stage 2 once the main time is
//!   over; hourglass transfers follow the running side's control;
//! * what the passing of time causes is recorded in the history under
//!   [`Input::Elapsed`] entries, one per instant.
//!
//! The board core (`crate::board`) drives an [`Engine::untracked`] engine per
//! game and keeps its own record; the replay tool and the tests use the
//! engine's own [`Engine::history`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::timecontrol::{TimeControl, MAX_MOVES, MAX_TIME};

mod core;
pub mod report;
#[cfg(test)]
mod tests;

use self::core::Core;

pub use crate::time::{Micros, MS, SECOND};

/// A player's side. Each side has one clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::White, Side::Black];

    pub fn other(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    /// Parses `white` / `black` (exactly, lower case).
    pub fn parse(text: &str) -> Option<Side> {
        match text {
            "white" => Some(Side::White),
            "black" => Some(Side::Black),
            _ => None,
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a Fischer increment or Bronstein delay is credited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Credit {
    /// FIDE/DGT: the bonus for move 1 is credited before the game starts.
    #[default]
    BeforeMove,
    /// Online convention: credited only after each completed move.
    AfterMove,
}

/// When the next stage's time is added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageAdvance {
    /// Each side at its own N-th completed move (move counter).
    #[default]
    Moves,
    /// Both sides at once when either side's time in a non-last stage reaches zero.
    Flag,
}

/// Engine settings an arbiter or tournament may choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Settings {
    pub credit: Credit,
    pub stage_advance: StageAdvance,
    /// `None`: the FIDE default (freeze with increment or delay, not in plain
    /// sudden death). `Some(x)` overrides it.
    pub freeze: Option<bool>,
}

/// Each side's time control (usually the same for both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchControl {
    pub white: TimeControl,
    pub black: TimeControl,
}

impl MatchControl {
    pub fn same(control: TimeControl) -> MatchControl {
        MatchControl {
            white: control.clone(),
            black: control,
        }
    }

    pub fn for_side(&self, side: Side) -> &TimeControl {
        match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        }
    }
}

/// An arbiter's correction (Art. 6.10b, 6.13). `None` leaves a value unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adjustment {
    pub side: Side,
    pub remaining: Option<Micros>,
    pub moves: Option<u32>,
    pub stage: Option<u32>,
}

/// An input to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// White's clock starts (Art. 6.6).
    Start,
    /// That side's button is pressed.
    Press(Side),
    /// The arbiter (or a player summoning the arbiter) stops the clocks.
    Pause,
    /// Restart the side that was running.
    Resume,
    Adjust(Adjustment),
    /// Not something a caller sends: marks the history entries of what the
    /// passing of time caused (flags, stage changes, freezes), whose notices
    /// carry their exact instants. `apply(now, Input::Elapsed)` is the same
    /// as [`Engine::advance`].
    Elapsed,
}

/// Why an input changed nothing (it is still recorded in the history).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ignored {
    NotStarted,
    AlreadyStarted,
    Paused,
    NotPaused,
    NotRunningSide,
    /// Frozen after a last-stage flag with increment/delay.
    Frozen,
    /// A press that would be the side's move number [`MAX_MOVES`] + 1: no
    /// side has more than [`MAX_MOVES`] moves.
    MoveLimit,
}

/// What an input or the passing of time caused, for the runtime to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    Started,
    /// `side` completed its move number `move_number`, which took `used`.
    Pressed {
        side: Side,
        move_number: u32,
        used: Micros,
    },
    Ignored {
        input: Input,
        reason: Ignored,
    },
    /// `side`'s flag fell at exactly `at`, in `stage`. `last_stage` is false
    /// for a stage flag under [`StageAdvance::Flag`] (the clock runs on),
    /// except in a repeating stage's stage [`crate::timecontrol::MAX_STAGE`],
    /// where it is a loss flag.
    FlagFell {
        side: Side,
        at: Micros,
        stage: u32,
        last_stage: bool,
    },
    StageChanged {
        side: Side,
        stage: u32,
        at: Micros,
    },
    Paused,
    Resumed,
    Adjusted(Adjustment),
    /// The clock stopped after a last-stage flag (freeze rule).
    Frozen {
        at: Micros,
    },
}

/// Refused inputs (nothing changed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("time went backwards: {now} µs is before the last event at {last} µs")]
    TimeWentBackwards { now: Micros, last: Micros },
    #[error("invalid adjustment: {0}")]
    InvalidAdjustment(String),
}

/// One side's state at an instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideState {
    /// Time on the display (for simple delay: the main time; `None` for upcount).
    pub remaining: Option<Micros>,
    /// Total thinking time used so far.
    pub used: Micros,
    /// Moves completed.
    pub moves: u32,
    /// 1-based stage.
    pub stage: u32,
    /// Exact instant this side's flag fell (and was not cleared).
    pub flag_at: Option<Micros>,
    /// Delay still to run before the main time counts down (simple delay),
    /// `None` when not applicable.
    pub delay_left: Option<Micros>,
    /// Byo-yomi periods left, or Canadian moves left in the block.
    pub periods_left: Option<u32>,
    /// True when the next stage's time (or the first byo-yomi / Canadian
    /// period) has been entered.
    pub in_overtime: bool,
}

/// The clock's state at an instant (what the replay tool prints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockState {
    pub t: Micros,
    pub started: bool,
    /// The side whose clock runs (`None`: not started, paused, frozen).
    pub running: Option<Side>,
    /// The side to move (whose clock runs or would run when resumed).
    pub to_move: Option<Side>,
    pub paused: bool,
    pub frozen: bool,
    /// Fallen, uncleared flags, first fallen first.
    pub flags: Vec<Side>,
    pub white: SideState,
    pub black: SideState,
}

impl ClockState {
    pub fn side(&self, side: Side) -> &SideState {
        match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        }
    }
}

/// One entry of the event history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    pub at: Micros,
    pub input: Input,
    /// What it caused (for an ignored input: one [`Notice::Ignored`] saying why).
    pub notices: Vec<Notice>,
}

/// The timing engine for one game. See the module docs.
#[derive(Clone, Debug)]
pub struct Engine {
    control: Arc<MatchControl>,
    settings: Settings,
    core: Core,
    /// `None` for an engine that keeps no history of its own (the board
    /// core keeps the game's record itself and clones engines as
    /// checkpoints, which must stay small).
    history: Option<Vec<HistoryEntry>>,
}

/// The clock's arithmetic state frozen at an instant, with its control:
/// enough to compute [`ClockState`] at any later instant exactly as the
/// engine would, without the engine. Small and cheap to clone, so a copy can
/// be handed to readers on other threads.
#[derive(Clone, Debug)]
pub struct ClockModel {
    control: Arc<MatchControl>,
    settings: Settings,
    core: Core,
}

impl ClockModel {
    /// The state at `now` (>= the model's instant; an earlier `now` gives
    /// the state at the model's instant).
    pub fn state(&self, now: Micros) -> ClockState {
        let mut core = self.core;
        core.advance(now, &self.control, self.settings, None);
        core.snapshot(&self.control)
    }

    /// The instant the model describes.
    pub fn instant(&self) -> Micros {
        self.core.t
    }

    pub fn control(&self) -> &MatchControl {
        &self.control
    }

    pub fn settings(&self) -> Settings {
        self.settings
    }
}

impl Engine {
    pub fn new(control: MatchControl, settings: Settings) -> Engine {
        let mut engine = Engine::untracked(Arc::new(control), settings);
        engine.history = Some(Vec::new());
        engine
    }

    /// An engine that keeps no [`Engine::history`] (it stays empty): for a
    /// caller that records the game itself and clones the engine freely.
    pub fn untracked(control: Arc<MatchControl>, settings: Settings) -> Engine {
        let core = Core::new(&control, settings);
        Engine {
            control,
            settings,
            core,
            history: None,
        }
    }

    /// The shared control (for [`Engine::untracked`] engines of the same game).
    pub fn shared_control(&self) -> Arc<MatchControl> {
        Arc::clone(&self.control)
    }

    /// A copy of the clock's state for readers ([`ClockModel`]).
    pub fn model(&self) -> ClockModel {
        ClockModel {
            control: Arc::clone(&self.control),
            settings: self.settings,
            core: self.core,
        }
    }

    pub fn control(&self) -> &MatchControl {
        &self.control
    }

    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The last instant the engine has seen (`Micros::MIN` before any).
    pub fn last_instant(&self) -> Micros {
        self.core.t
    }

    /// Everything credited to `side` at the last instant the engine saw,
    /// beyond the first stage's time: increments (including the one credited
    /// before the first move), Bronstein delay given back, simple delay as it
    /// is used, later stages' time, byo-yomi periods and Canadian blocks,
    /// hourglass transfers and arbiter corrections (possibly negative). While
    /// a side's flag has not fallen, `used + remaining == first stage time +
    /// credited` at every instant.
    pub fn credited(&self, side: Side) -> Micros {
        self.core.side(side).credits
    }

    /// Like [`Engine::credited`], at `now` (>= the last input), without
    /// changing anything.
    pub fn credited_at(&self, now: Micros, side: Side) -> Micros {
        let mut core = self.core;
        core.advance(now, &self.control, self.settings, None);
        core.side(side).credits
    }

    /// The time a side starts with, before any credit: the first stage's time,
    /// the hourglass time, or the main time (0 for upcount).
    pub fn initial_time(&self, side: Side) -> Micros {
        match self.control.for_side(side) {
            TimeControl::Stages(_) => self.control.for_side(side).stage(1).map_or(0, |s| s.time),
            TimeControl::Hourglass { time } => *time,
            TimeControl::Upcount => 0,
            TimeControl::ByoYomi { main, .. } | TimeControl::Canadian { main, .. } => *main,
        }
    }

    /// Applies `input` at `now` (first processing any flag that fell before).
    pub fn apply(&mut self, now: Micros, input: Input) -> Result<Vec<Notice>, EngineError> {
        if now < self.core.t {
            return Err(EngineError::TimeWentBackwards {
                now,
                last: self.core.t,
            });
        }
        if let Input::Adjust(adjustment) = input {
            self.check_adjustment(adjustment)?;
        }
        let mut notices = self.advance(now);
        if input == Input::Elapsed {
            return Ok(notices);
        }
        // An input causes one or two notices (a press: pressed, perhaps a
        // stage change): sized for that, so no growth on the way.
        let mut caused = Vec::with_capacity(2);
        let mut core = self.core;
        core.input(input, &self.control, self.settings, &mut Some(&mut caused))?;
        // an input can make a flag fall at once (a clock set to zero, a
        // clock started with no time)
        core.advance(now, &self.control, self.settings, Some(&mut caused));
        self.core = core;
        let caused: Vec<Notice> = caused.into_iter().map(|(_, notice)| notice).collect();
        if let Some(history) = self.history.as_mut() {
            history.push(HistoryEntry {
                at: now,
                input,
                notices: caused.clone(),
            });
        }
        // Nothing fell before the input (the usual case): its notices are
        // the answer as they are, no second vector.
        if notices.is_empty() {
            return Ok(caused);
        }
        notices.extend(caused);
        Ok(notices)
    }

    /// Whether `adjustment` is one a game can have: a remaining time of 0
    /// to [`MAX_TIME`], at most [`MAX_MOVES`] moves, a stage the side's
    /// control has. Nothing else is ever applied, so every instant the
    /// engine computes stays far from overflow.
    pub fn check_adjustment(&self, adjustment: Adjustment) -> Result<(), EngineError> {
        if let Some(remaining) = adjustment.remaining {
            if remaining < 0 {
                return Err(EngineError::InvalidAdjustment(
                    "remaining time must not be negative".into(),
                ));
            }
            if remaining > MAX_TIME {
                return Err(EngineError::InvalidAdjustment(format!(
                    "a remaining time of {} ms is more than a game can have (at most {} h)",
                    report::ceil_ms(remaining),
                    MAX_TIME / (3_600 * SECOND)
                )));
            }
        }
        if let Some(moves) = adjustment.moves {
            if moves > MAX_MOVES {
                return Err(EngineError::InvalidAdjustment(format!(
                    "{moves} moves is more than a game can have (at most {MAX_MOVES})"
                )));
            }
        }
        if let Some(stage) = adjustment.stage {
            if stage == 0 {
                return Err(EngineError::InvalidAdjustment(
                    "stages are numbered from 1".into(),
                ));
            }
            let control = self.control.for_side(adjustment.side);
            let max = control.max_stage();
            if stage > max {
                return Err(EngineError::InvalidAdjustment(if max == 1 {
                    format!(
                        "{}'s control `{control}` has only one stage: stage {stage} does not exist",
                        adjustment.side
                    )
                } else {
                    format!(
                        "{}'s control `{control}` has stages 1 to {max}: stage {stage} does not exist",
                        adjustment.side
                    )
                }));
            }
        }
        Ok(())
    }

    /// Processes the passing of time up to `now` (flags, stage changes,
    /// byo-yomi periods). Idempotent for the same `now`.
    pub fn advance(&mut self, now: Micros) -> Vec<Notice> {
        let mut timed = Vec::new();
        self.core
            .advance(now, &self.control, self.settings, Some(&mut timed));
        // one history entry per instant at which something happened
        let mut notices = Vec::with_capacity(timed.len());
        for (at, notice) in timed {
            if let Some(history) = self.history.as_mut() {
                match history.last_mut() {
                    Some(entry) if entry.input == Input::Elapsed && entry.at == at => {
                        entry.notices.push(notice.clone())
                    }
                    _ => history.push(HistoryEntry {
                        at,
                        input: Input::Elapsed,
                        notices: vec![notice.clone()],
                    }),
                }
            }
            notices.push(notice);
        }
        notices
    }

    /// The next instant at which something happens by itself (a flag, a
    /// byo-yomi period ending), or `None` when nothing will.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.core.next_deadline(&self.control)
    }

    /// The state at `now` (>= the last input), without changing anything:
    /// flags that fell before `now` are included. For an earlier `now`, the
    /// state at the last input.
    pub fn state(&self, now: Micros) -> ClockState {
        let mut core = self.core;
        core.advance(now, &self.control, self.settings, None);
        core.snapshot(&self.control)
    }

    /// Every input with its instant and effect, oldest first, and entries
    /// ([`Input::Elapsed`]) for what the passing of time caused.
    pub fn history(&self) -> &[HistoryEntry] {
        self.history.as_deref().unwrap_or_default()
    }
}
