//! The game as an event-sourced fold: the engine inputs in the order of
//! their instants, an engine that is their fold, and how far the passing of
//! time has been processed.
//!
//! The engine is deterministic, so its state is a function of the sorted
//! inputs and the instant it was advanced to. An input that arrives late
//! (its instant is before what was already processed: a press whose frame
//! was resent, a press made during a daemon outage) is inserted in its place
//! and the engine is re-run from the last checkpoint before it. What the
//! re-run changed about the flags is reported, so the record can say that a
//! flag shown for a moment was withdrawn.
//!
//! A relative correction (`adjust --add/--sub`) is kept as what it was: an
//! amount added to what the clock showed at its instant. A re-run applies
//! that amount to the re-run clock, so a late press placed before the
//! correction leaves it the result it would have had if the press had come
//! in time.
//!
//! Promises: [`Game::apply`] either applies the input (in its place) or
//! changes nothing and says why; inputs at equal instants keep their
//! arrival order; a re-run costs at most [`CHECKPOINT_EVERY`] inputs plus
//! the inputs after the inserted one.

use std::sync::Arc;

use crate::engine::{ClockState, Engine, EngineError, Input, MatchControl, Notice, Settings};
use crate::time::Micros;
use crate::timecontrol::MAX_TIME;
use crate::views::FlagFall;

/// An engine copy is kept after every this many inputs.
pub const CHECKPOINT_EVERY: usize = 32;

/// What applying an input did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// What the passing of time caused up to the input's instant, before it
    /// (only when the input was applied in order).
    pub elapsed: Vec<Notice>,
    /// What the input itself caused.
    pub caused: Vec<Notice>,
    /// Set when the input was placed before inputs or time already processed.
    pub rerun: Option<Rerun>,
}

/// What re-running the game with a late input changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rerun {
    /// Inputs after the late one that were applied again.
    pub later_inputs: usize,
    /// Flags the clock had shown that no longer stand.
    pub withdrawn: Vec<FlagFall>,
    /// Flags that now stand and had not been shown.
    pub added: Vec<FlagFall>,
    /// From the late input on, every input applied again (for the record
    /// and for those who follow the presses, such as the e-board's PGN).
    pub replayed: Vec<Replayed>,
}

/// One input applied again by a re-run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// Its instant.
    pub t: Micros,
    /// The tag it was applied with ([`Game::apply_tagged`]).
    pub tag: u64,
    /// What it caused this time.
    pub notices: Vec<Notice>,
    /// The state right after it.
    pub state: ClockState,
}

/// One input in its place in the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Its instant (game time).
    pub t: Micros,
    /// The input as last applied.
    pub input: Input,
    /// The caller's tag (the board core's history row of the input).
    pub tag: u64,
    /// For a relative correction: the amount added to the side's remaining
    /// time at `t` (a re-run recomputes `input` from it).
    pub by: Option<Micros>,
}

/// See the module docs.
#[derive(Clone, Debug)]
pub struct Game {
    engine: Engine,
    inputs: Vec<Placed>,
    /// `checkpoints[k]` is the engine after `inputs[..k * CHECKPOINT_EVERY]`.
    checkpoints: Vec<Engine>,
    /// Time passing was processed up to here (>= every input's instant).
    processed_to: Micros,
}

impl Game {
    pub fn new(control: MatchControl, settings: Settings) -> Game {
        let engine = Engine::untracked(Arc::new(control), settings);
        Game {
            checkpoints: vec![engine.clone()],
            engine,
            inputs: Vec::new(),
            processed_to: Micros::MIN,
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// How far time has been processed (`Micros::MIN` before any input).
    pub fn processed_to(&self) -> Micros {
        self.processed_to
    }

    /// The inputs so far, in game order.
    pub fn inputs(&self) -> &[Placed] {
        &self.inputs
    }

    /// The state at `t` (at least the processed instant), changing nothing.
    pub fn state(&self, t: Micros) -> ClockState {
        self.engine.state(t.max(self.processed_to))
    }

    /// The next instant something happens by itself (a flag, a period).
    pub fn next_deadline(&self) -> Option<Micros> {
        self.engine.next_deadline()
    }

    /// Processes the passing of time up to `t`; nothing for an instant
    /// already processed.
    pub fn advance(&mut self, t: Micros) -> Vec<Notice> {
        if t <= self.processed_to {
            return Vec::new();
        }
        self.processed_to = t;
        self.engine.advance(t)
    }

    /// Whether the engine would take `input` at all (a correction a game
    /// cannot have is refused whatever its instant).
    pub fn check(&self, input: Input) -> Result<(), EngineError> {
        match input {
            Input::Adjust(adjustment) => self.engine.check_adjustment(adjustment),
            _ => Ok(()),
        }
    }

    /// Applies `input` at game time `t`, in its place among the inputs.
    pub fn apply(&mut self, t: Micros, input: Input) -> Result<Applied, EngineError> {
        self.apply_tagged(t, input, 0)
    }

    /// [`Game::apply`], with a tag a re-run hands back with the input.
    pub fn apply_tagged(
        &mut self,
        t: Micros,
        input: Input,
        tag: u64,
    ) -> Result<Applied, EngineError> {
        self.apply_placed(t, input, tag, None)
    }

    /// [`Game::apply_tagged`]; `by` marks `input` (an [`Input::Adjust`]
    /// setting the remaining time) as a relative correction of that amount,
    /// which a re-run applies again to the clock as it then stands.
    pub fn apply_placed(
        &mut self,
        t: Micros,
        input: Input,
        tag: u64,
        by: Option<Micros>,
    ) -> Result<Applied, EngineError> {
        self.check(input)?;
        let placed = Placed { t, input, tag, by };
        if t >= self.processed_to {
            let elapsed = self.advance(t);
            let caused = self.engine.apply(t, input)?;
            self.processed_to = t;
            self.inputs.push(placed);
            self.keep_checkpoint();
            return Ok(Applied {
                elapsed,
                caused,
                rerun: None,
            });
        }
        self.insert(placed)
    }

    fn keep_checkpoint(&mut self) {
        if self.inputs.len() % CHECKPOINT_EVERY == 0
            && self.checkpoints.len() == self.inputs.len() / CHECKPOINT_EVERY
        {
            self.checkpoints.push(self.engine.clone());
        }
    }

    /// The late path: re-run from the last checkpoint before `t`.
    fn insert(&mut self, placed: Placed) -> Result<Applied, EngineError> {
        let index = self.inputs.partition_point(|entry| entry.t <= placed.t);
        let mut inputs = self.inputs.clone();
        inputs.insert(index, placed);
        self.rerun(inputs, index, Some(index))
    }

    /// Takes input `input` made at `t` out of the game (the last such one)
    /// and re-runs the game without it. `None` when there is no such input
    /// (nothing changes).
    pub fn remove(&mut self, t: Micros, input: Input) -> Option<Result<Applied, EngineError>> {
        let index = self
            .inputs
            .iter()
            .rposition(|entry| entry.t == t && entry.input == input)?;
        let mut inputs = self.inputs.clone();
        inputs.remove(index);
        Some(self.rerun(inputs, index, None))
    }

    /// Re-runs the game over `inputs`, which differ from the current ones
    /// from position `changed` on, from the last checkpoint before it.
    /// `caused` names the input whose notices to return. Nothing changes
    /// on a refusal.
    fn rerun(
        &mut self,
        mut inputs: Vec<Placed>,
        changed: usize,
        caused_by: Option<usize>,
    ) -> Result<Applied, EngineError> {
        let shown = flag_falls(&self.engine.state(self.processed_to));
        let first = (changed / CHECKPOINT_EVERY).min(self.checkpoints.len().saturating_sub(1));
        let mut engine = match self.checkpoints.get(first) {
            Some(engine) => engine.clone(),
            None => self.checkpoints[0].clone(),
        };
        let mut checkpoints: Vec<Engine> = self.checkpoints[..=first].to_vec();
        let mut caused = Vec::new();
        let mut replayed = Vec::new();
        for (position, entry) in inputs.iter_mut().enumerate().skip(first * CHECKPOINT_EVERY) {
            entry.input = again(&engine, entry);
            let at = entry.t;
            let notices = engine.apply(at, entry.input)?;
            if Some(position) == caused_by {
                caused = notices.clone();
            }
            if position >= changed {
                replayed.push(Replayed {
                    t: at,
                    tag: entry.tag,
                    state: engine.state(at),
                    notices,
                });
            }
            let applied = position + 1;
            if applied % CHECKPOINT_EVERY == 0 && checkpoints.len() == applied / CHECKPOINT_EVERY {
                checkpoints.push(engine.clone());
            }
        }
        engine.advance(self.processed_to);
        let now_standing = flag_falls(&engine.state(self.processed_to));
        let rerun = Rerun {
            later_inputs: inputs
                .len()
                .saturating_sub(changed + usize::from(caused_by.is_some())),
            withdrawn: shown
                .iter()
                .filter(|fall| !now_standing.contains(fall))
                .copied()
                .collect(),
            added: now_standing
                .iter()
                .filter(|fall| !shown.contains(fall))
                .copied()
                .collect(),
            replayed,
        };
        self.engine = engine;
        self.inputs = inputs;
        self.checkpoints = checkpoints;
        Ok(Applied {
            elapsed: Vec::new(),
            caused,
            rerun: Some(rerun),
        })
    }
}

/// `entry`'s input as a re-run applies it to `engine` (which has every
/// input before it): a relative correction adds its amount to the side's
/// remaining time as it now stands, kept within what a game can have (it
/// was accepted once, so a re-run never refuses it); any other input as it
/// is.
fn again(engine: &Engine, entry: &Placed) -> Input {
    match (entry.input, entry.by) {
        (Input::Adjust(mut adjustment), Some(by)) => {
            let shown = engine.state(entry.t).side(adjustment.side).remaining;
            if let Some(shown) = shown {
                adjustment.remaining = Some(shown.max(0).saturating_add(by).clamp(0, MAX_TIME));
            }
            Input::Adjust(adjustment)
        }
        (input, _) => input,
    }
}

/// The flags standing in `state`, with their first instants. (Stage and
/// kind are not part of a state; they are kept as the engine reported them
/// at the fall, so compare by side and instant.)
fn flag_falls(state: &ClockState) -> Vec<FlagFall> {
    state
        .flags
        .iter()
        .filter_map(|&side| {
            let own = state.side(side);
            own.flag_at.map(|at| FlagFall {
                side,
                at,
                stage: own.stage,
                last_stage: true,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Side;
    use crate::time::{MS, SECOND};
    use crate::timecontrol::parse;

    fn game(control: &str) -> Game {
        Game::new(
            MatchControl::same(parse(control).unwrap()),
            Settings::default(),
        )
    }

    #[test]
    fn a_late_press_before_a_flag_withdraws_it() {
        let mut g = game("1");
        g.apply(0, Input::Start).unwrap();
        // White's flag falls at 1 s and is processed.
        let flag = g.advance(SECOND);
        assert!(
            matches!(flag[..], [Notice::FlagFell { side: Side::White, at, .. }] if at == SECOND)
        );
        // White's press 150 ms before the flag arrives 300 ms late.
        let applied = g.apply(850 * MS, Input::Press(Side::White)).unwrap();
        let rerun = applied.rerun.unwrap();
        assert_eq!(rerun.withdrawn.len(), 1);
        assert_eq!(rerun.withdrawn[0].at, SECOND);
        assert!(rerun.added.is_empty());
        assert!(matches!(
            applied.caused[..],
            [Notice::Pressed {
                side: Side::White,
                ..
            }]
        ));
        let state = g.state(1_150 * MS);
        assert!(state.flags.is_empty());
        assert_eq!(state.running, Some(Side::Black));
        assert_eq!(state.white.remaining, Some(150 * MS));
        assert_eq!(state.black.remaining, Some(SECOND - 300 * MS));
    }

    #[test]
    fn a_late_press_is_placed_before_a_pause() {
        let mut g = game("300");
        g.apply(0, Input::Start).unwrap();
        g.apply(10 * SECOND, Input::Pause).unwrap();
        let applied = g.apply(9_900 * MS, Input::Press(Side::White)).unwrap();
        assert_eq!(applied.rerun.as_ref().unwrap().later_inputs, 1);
        let state = g.state(20 * SECOND);
        assert!(state.paused);
        assert_eq!(state.white.used, 9_900 * MS);
        assert_eq!(state.black.used, 100 * MS);
        assert_eq!(state.to_move, Some(Side::Black));
    }

    #[test]
    fn re_running_from_a_checkpoint_gives_the_fold_of_the_sorted_inputs() {
        let mut live = game("300+2");
        live.apply(0, Input::Start).unwrap();
        let mut t = 0;
        let mut side = Side::White;
        let mut presses = Vec::new();
        for _ in 0..100 {
            t += 700 * MS;
            presses.push((t, side));
            side = side.other();
        }
        // Every 10th press arrives after the next one was applied: a late
        // input in the middle of a long game, after many checkpoints.
        let mut order: Vec<usize> = (0..presses.len()).collect();
        for chunk in order.chunks_mut(10) {
            chunk.swap(0, 1.min(chunk.len() - 1));
        }
        for &i in &order {
            let (at, who) = presses[i];
            live.apply(at, Input::Press(who)).unwrap();
        }
        let mut sorted = game("300+2");
        sorted.apply(0, Input::Start).unwrap();
        for &(at, who) in &presses {
            sorted.apply(at, Input::Press(who)).unwrap();
        }
        assert_eq!(live.state(t + SECOND), sorted.state(t + SECOND));
        assert_eq!(live.inputs(), sorted.inputs());
    }

    #[test]
    fn removing_a_press_re_runs_the_game_without_it() {
        let mut g = game("300");
        g.apply(0, Input::Start).unwrap();
        g.apply(10 * SECOND, Input::Press(Side::White)).unwrap();
        g.apply(15 * SECOND, Input::Pause).unwrap();
        let removed = g
            .remove(10 * SECOND, Input::Press(Side::White))
            .unwrap()
            .unwrap();
        assert_eq!(removed.rerun.unwrap().later_inputs, 1);
        let state = g.state(20 * SECOND);
        assert!(state.paused);
        assert_eq!(state.white.used, 15 * SECOND, "White ran on to the pause");
        assert_eq!(state.black.used, 0);
        assert_eq!(state.white.moves, 0);
        assert_eq!(state.to_move, Some(Side::White));
        assert_eq!(g.inputs().len(), 2);
        assert!(g.remove(10 * SECOND, Input::Press(Side::White)).is_none());
    }

    #[test]
    fn a_refused_late_input_changes_nothing() {
        let mut g = game("300");
        g.apply(0, Input::Start).unwrap();
        g.apply(5 * SECOND, Input::Pause).unwrap();
        let before = g.state(6 * SECOND);
        let refused = g.apply(
            4 * SECOND,
            Input::Adjust(crate::engine::Adjustment {
                side: Side::White,
                remaining: None,
                moves: None,
                stage: Some(2),
            }),
        );
        assert!(refused.is_err());
        assert_eq!(g.state(6 * SECOND), before);
        assert_eq!(g.inputs().len(), 2);
    }
}
