//! The arithmetic of the clock: a small `Copy` state that the [`super::Engine`]
//! advances through time and inputs. Kept free of history and allocation so
//! that [`super::Engine::state`] can work on a copy (it must not change
//! anything) at the cost of a few dozen bytes.
//!
//! Invariants kept here:
//! * `t` is the instant the state describes; only the side to move, when the
//!   clock runs, changes with time;
//! * no remaining time is ever negative; a side whose time reaches zero gets
//!   its flag at exactly that instant, in the order the flags fall;
//! * nothing is credited to a side after its loss flag (`dead`);
//! * no side completes more than [`MAX_MOVES`] moves: a further press is
//!   ignored ([`Ignored::MoveLimit`]).

use super::{
    Adjustment, ClockState, Credit, EngineError, Ignored, Input, MatchControl, Micros, Notice,
    Settings, Side, SideState, StageAdvance,
};
use crate::timecontrol::{Bonus, TimeControl, MAX_MOVES};

/// One side's clock at the core's instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SideClock {
    /// The display: main time (simple delay), the current byo-yomi period or
    /// Canadian block in overtime; for upcount unused.
    pub remaining: Micros,
    pub used: Micros,
    pub moves: u32,
    pub stage: u32,
    pub flag_at: Option<Micros>,
    /// A loss flag fell (last stage, or any stage under "moves"): the side
    /// stays at zero, is credited nothing and cannot flag again.
    pub dead: bool,
    /// Simple delay left in the current move (meaningful for the side to move).
    pub delay_left: Micros,
    /// Time used in the current move (pauses excluded).
    pub move_used: Micros,
    /// Byo-yomi periods left (the running one included) or Canadian moves
    /// left in the block.
    pub periods_left: u32,
    pub in_overtime: bool,
    /// Everything added to `remaining` since the start of the game beyond the
    /// initial time: increments, delays given back, later stages, periods,
    /// hourglass transfers, simple delay as it is used, corrections (which
    /// may be negative).
    pub credits: Micros,
}

/// The whole clock at instant `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Core {
    pub t: Micros,
    pub started: bool,
    pub to_move: Side,
    pub paused: bool,
    pub frozen: bool,
    /// Fallen, uncleared flags in the order they fell.
    pub flags: [Option<Side>; 2],
    pub white: SideClock,
    pub black: SideClock,
}

/// See [`Core::advance`].
const MAX_EXPIRIES_PER_ADVANCE: usize = 1 << 20;

/// Where notices go; `None` when computing a state that changes nothing.
pub(super) type Sink<'a> = Option<&'a mut Vec<(Micros, Notice)>>;

fn emit(sink: &mut Sink<'_>, at: Micros, notice: Notice) {
    if let Some(sink) = sink.as_deref_mut() {
        sink.push((at, notice));
    }
}

/// The amount credited before the first move under the before-move
/// convention (DGT: "5+3 shows 5:03").
fn initial_credit(control: &TimeControl, settings: Settings) -> Micros {
    if settings.credit != Credit::BeforeMove {
        return 0;
    }
    control.stage(1).map_or(0, |s| pre_credit(s.bonus))
}

/// What the before-move convention credits ahead of a move with this bonus.
fn pre_credit(bonus: Bonus) -> Micros {
    match bonus {
        Bonus::Increment(x) | Bonus::Bronstein(x) => x.max(0),
        _ => 0,
    }
}

fn new_side(control: &TimeControl, settings: Settings) -> SideClock {
    let mut side = SideClock {
        remaining: 0,
        used: 0,
        moves: 0,
        stage: 1,
        flag_at: None,
        dead: false,
        delay_left: 0,
        move_used: 0,
        periods_left: 0,
        in_overtime: false,
        credits: 0,
    };
    match control {
        TimeControl::Stages(_) => {
            let stage = control.stage(1).copied();
            side.remaining = stage.map_or(0, |s| s.time.max(0));
            let credit = initial_credit(control, settings);
            side.remaining = side.remaining.saturating_add(credit);
            side.credits = credit;
            side.delay_left = stage.map_or(0, |s| s.bonus.delay().max(0));
        }
        TimeControl::Hourglass { time } => side.remaining = (*time).max(0),
        TimeControl::Upcount => {}
        TimeControl::ByoYomi {
            main,
            periods,
            period,
        } => {
            side.periods_left = *periods;
            if *main <= 0 && *periods > 0 {
                side.in_overtime = true;
                side.stage = 2;
                side.remaining = (*period).max(0);
                side.credits = side.remaining;
            } else {
                side.remaining = (*main).max(0);
            }
        }
        TimeControl::Canadian { main, moves, block } => {
            side.periods_left = (*moves).max(1);
            if *main <= 0 {
                side.in_overtime = true;
                side.stage = 2;
                side.remaining = (*block).max(0);
                side.credits = side.remaining;
            } else {
                side.remaining = (*main).max(0);
            }
        }
    }
    side
}

impl Core {
    pub fn new(control: &MatchControl, settings: Settings) -> Core {
        Core {
            t: Micros::MIN,
            started: false,
            to_move: Side::White,
            paused: false,
            frozen: false,
            flags: [None, None],
            white: new_side(&control.white, settings),
            black: new_side(&control.black, settings),
        }
    }

    fn side_mut(&mut self, side: Side) -> &mut SideClock {
        match side {
            Side::White => &mut self.white,
            Side::Black => &mut self.black,
        }
    }

    pub fn side(&self, side: Side) -> &SideClock {
        match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        }
    }

    fn runs(&self) -> bool {
        self.started && !self.paused && !self.frozen
    }

    /// How long after `t` the running side's next change by itself is due.
    fn next_event_in(&self, control: &MatchControl) -> Option<Micros> {
        if !self.runs() {
            return None;
        }
        let side = self.side(self.to_move);
        if side.dead {
            return None;
        }
        let side_control = control.for_side(self.to_move);
        match side_control {
            TimeControl::Upcount => None,
            TimeControl::Stages(_) => {
                let delayed = matches!(
                    side_control.stage(side.stage).map(|s| s.bonus),
                    Some(Bonus::Delay(_))
                );
                let delay = if delayed { side.delay_left } else { 0 };
                Some(delay.saturating_add(side.remaining))
            }
            _ => Some(side.remaining),
        }
    }

    /// The instant of the next change by itself, if any.
    pub fn next_deadline(&self, control: &MatchControl) -> Option<Micros> {
        self.next_event_in(control)
            .map(|dt| self.t.saturating_add(dt))
    }

    /// Lets time run from `t` to `now`, processing every flag, stage change
    /// and period end at its exact instant, in order.
    pub fn advance(
        &mut self,
        now: Micros,
        control: &MatchControl,
        settings: Settings,
        mut sink: Sink<'_>,
    ) {
        if now < self.t {
            return;
        }
        // Each expiry either ends the running side's clock (flag, freeze) or
        // gives it positive time (`expire` turns zero-length stages, periods
        // and blocks into a loss flag), so instants strictly increase. The cap
        // only matters for absurd controls (a million 1 µs periods): past it
        // the rest of the interval is counted without further expiries.
        let mut last_expiry = None;
        for _ in 0..MAX_EXPIRIES_PER_ADVANCE {
            let Some(dt) = self.next_event_in(control) else {
                break;
            };
            let at = self.t.saturating_add(dt);
            // a second expiry at the same instant only happens when time
            // saturates at the end of the i64 range
            if at > now || last_expiry == Some(at) {
                break;
            }
            last_expiry = Some(at);
            self.elapse(dt, control);
            self.t = at;
            self.expire(at, control, settings, &mut sink);
        }
        let dt = now.saturating_sub(self.t);
        self.elapse(dt, control);
        self.t = now;
    }

    /// `dt` of the running side's time passes (no expiry in between).
    fn elapse(&mut self, dt: Micros, control: &MatchControl) {
        if dt <= 0 || !self.runs() {
            return;
        }
        let mover = self.to_move;
        let mover_control = control.for_side(mover);
        let stage = self.side(mover).stage;
        let delay_stage = mover_control.stage(stage).map(|s| s.bonus);
        let side = self.side_mut(mover);
        side.used = side.used.saturating_add(dt);
        side.move_used = side.move_used.saturating_add(dt);
        if !side.dead {
            match mover_control {
                TimeControl::Upcount => {}
                TimeControl::Stages(_) if matches!(delay_stage, Some(Bonus::Delay(_))) => {
                    let from_delay = dt.min(side.delay_left).max(0);
                    side.delay_left -= from_delay;
                    // time spent inside the delay costs nothing: count it as
                    // credited so used + remaining = initial + credits holds
                    side.credits = side.credits.saturating_add(from_delay);
                    side.remaining = side.remaining.saturating_sub(dt - from_delay).max(0);
                }
                _ => side.remaining = side.remaining.saturating_sub(dt).max(0),
            }
        }
        // A flagged mover has no time left to give: the total stays constant.
        let mover_dead = self.side(mover).dead;
        if matches!(mover_control, TimeControl::Hourglass { .. }) && !mover_dead {
            let opponent_upcount = matches!(control.for_side(mover.other()), TimeControl::Upcount);
            let opponent = self.side_mut(mover.other());
            if !opponent.dead && !opponent_upcount {
                opponent.remaining = opponent.remaining.saturating_add(dt);
                opponent.credits = opponent.credits.saturating_add(dt);
            }
        }
    }

    /// A side's flag falls at `at`. A side whose flag is already down (a
    /// second stage flag under "at the flag") keeps its place in the order
    /// and its first instant: which flag fell first, and when, is never
    /// lost. The notice of every fall carries its own instant.
    fn push_flag(&mut self, side: Side, at: Micros) {
        if self.flags.contains(&Some(side)) {
            return;
        }
        self.side_mut(side).flag_at = Some(at);
        if self.flags[0].is_none() {
            self.flags[0] = Some(side);
        } else {
            self.flags[1] = Some(side);
        }
    }

    fn clear_flag(&mut self, side: Side) {
        self.side_mut(side).flag_at = None;
        self.side_mut(side).dead = false;
        if self.flags[0] == Some(side) {
            self.flags[0] = self.flags[1].take();
        } else if self.flags[1] == Some(side) {
            self.flags[1] = None;
        }
    }

    /// A loss flag: the side stays at zero; the clock freezes if the rule says so.
    fn loss_flag(
        &mut self,
        side: Side,
        at: Micros,
        control: &MatchControl,
        settings: Settings,
        sink: &mut Sink<'_>,
    ) {
        self.push_flag(side, at);
        let clock = self.side_mut(side);
        clock.dead = true;
        clock.remaining = 0;
        clock.delay_left = 0;
        let stage = clock.stage;
        emit(
            sink,
            at,
            Notice::FlagFell {
                side,
                at,
                stage,
                last_stage: true,
            },
        );
        let side_control = control.for_side(side);
        let freeze_default = match side_control {
            TimeControl::Stages(_) => side_control
                .stage(stage)
                .is_some_and(|s| s.bonus != Bonus::None),
            TimeControl::Upcount => false,
            _ => true,
        };
        if settings.freeze.unwrap_or(freeze_default) {
            self.frozen = true;
            emit(sink, at, Notice::Frozen { at });
        }
    }

    /// The running side's time reached zero at `at`.
    fn expire(
        &mut self,
        at: Micros,
        control: &MatchControl,
        settings: Settings,
        sink: &mut Sink<'_>,
    ) {
        let mover = self.to_move;
        let mover_control = control.for_side(mover);
        match mover_control {
            TimeControl::Upcount => {}
            TimeControl::Hourglass { .. } => self.loss_flag(mover, at, control, settings, sink),
            TimeControl::Stages(_) => {
                let stage = self.side(mover).stage;
                let next_time = mover_control
                    .stage(stage.saturating_add(1))
                    .map_or(0, |s| s.time);
                if settings.stage_advance == StageAdvance::Moves
                    || mover_control.is_last_stage(stage)
                    || next_time <= 0
                {
                    self.loss_flag(mover, at, control, settings, sink);
                    return;
                }
                self.push_flag(mover, at);
                emit(
                    sink,
                    at,
                    Notice::FlagFell {
                        side: mover,
                        at,
                        stage,
                        last_stage: false,
                    },
                );
                for side in [mover, mover.other()] {
                    let side_control = control.for_side(side);
                    let clock = self.side(side);
                    if clock.dead
                        || !matches!(side_control, TimeControl::Stages(_))
                        || side_control.is_last_stage(clock.stage)
                    {
                        continue;
                    }
                    let new_stage = clock.stage.saturating_add(1);
                    let added = side_control.stage(new_stage).map_or(0, |s| s.time.max(0));
                    let old_bonus = side_control
                        .stage(clock.stage)
                        .map_or(Bonus::None, |s| s.bonus);
                    let new_bonus = side_control
                        .stage(new_stage)
                        .map_or(Bonus::None, |s| s.bonus);
                    // the waiting side's next move now belongs to the new
                    // stage: its bonus replaces the one credited before it
                    let rebased = if side != mover && settings.credit == Credit::BeforeMove {
                        pre_credit(new_bonus).saturating_sub(pre_credit(old_bonus))
                    } else {
                        0
                    };
                    let clock = self.side_mut(side);
                    clock.stage = new_stage;
                    let before = clock.remaining;
                    clock.remaining = before.saturating_add(added).saturating_add(rebased).max(0);
                    clock.credits = clock
                        .credits
                        .saturating_add(clock.remaining.saturating_sub(before));
                    if side != mover {
                        clock.delay_left = new_bonus.delay().max(0);
                    }
                    emit(
                        sink,
                        at,
                        Notice::StageChanged {
                            side,
                            stage: new_stage,
                            at,
                        },
                    );
                }
            }
            TimeControl::ByoYomi {
                periods, period, ..
            } => {
                let clock = self.side_mut(mover);
                if !clock.in_overtime {
                    clock.in_overtime = true;
                    clock.stage = 2;
                    clock.periods_left = *periods;
                    if *periods == 0 || *period <= 0 {
                        self.loss_flag(mover, at, control, settings, sink);
                        return;
                    }
                    clock.remaining = *period;
                    clock.credits = clock.credits.saturating_add(*period);
                    emit(
                        sink,
                        at,
                        Notice::StageChanged {
                            side: mover,
                            stage: 2,
                            at,
                        },
                    );
                } else {
                    clock.periods_left = clock.periods_left.saturating_sub(1);
                    if clock.periods_left == 0 || *period <= 0 {
                        clock.periods_left = 0;
                        self.loss_flag(mover, at, control, settings, sink);
                        return;
                    }
                    clock.remaining = *period;
                    clock.credits = clock.credits.saturating_add(*period);
                }
            }
            TimeControl::Canadian { moves, block, .. } => {
                let clock = self.side_mut(mover);
                if !clock.in_overtime && *block > 0 {
                    clock.in_overtime = true;
                    clock.stage = 2;
                    clock.periods_left = (*moves).max(1);
                    clock.remaining = *block;
                    clock.credits = clock.credits.saturating_add(*block);
                    emit(
                        sink,
                        at,
                        Notice::StageChanged {
                            side: mover,
                            stage: 2,
                            at,
                        },
                    );
                } else {
                    clock.in_overtime = true;
                    clock.stage = 2;
                    self.loss_flag(mover, at, control, settings, sink);
                }
            }
        }
    }

    /// Starts the move of `side` (its clock starts now).
    fn start_move(&mut self, side: Side, control: &MatchControl) {
        let side_control = control.for_side(side);
        let stage = self.side(side).stage;
        let delay = side_control
            .stage(stage)
            .map_or(0, |s| s.bonus.delay().max(0));
        let clock = self.side_mut(side);
        clock.move_used = 0;
        clock.delay_left = if clock.dead { 0 } else { delay };
    }

    /// Applies one input at `t` (the caller has advanced to `t`).
    pub fn input(
        &mut self,
        input: Input,
        control: &MatchControl,
        settings: Settings,
        sink: &mut Sink<'_>,
    ) -> Result<(), EngineError> {
        let at = self.t;
        let ignore = |reason: Ignored, sink: &mut Sink<'_>| {
            emit(sink, at, Notice::Ignored { input, reason });
        };
        match input {
            Input::Elapsed => {}
            Input::Start => {
                if self.started {
                    ignore(Ignored::AlreadyStarted, sink);
                } else {
                    self.started = true;
                    self.paused = false;
                    self.to_move = Side::White;
                    self.start_move(Side::White, control);
                    emit(sink, at, Notice::Started);
                }
            }
            Input::Press(side) => {
                if !self.started {
                    ignore(Ignored::NotStarted, sink);
                } else if self.frozen {
                    ignore(Ignored::Frozen, sink);
                } else if self.paused {
                    ignore(Ignored::Paused, sink);
                } else if side != self.to_move {
                    ignore(Ignored::NotRunningSide, sink);
                } else if self.side(side).moves >= MAX_MOVES {
                    ignore(Ignored::MoveLimit, sink);
                } else {
                    self.press(side, control, settings, sink);
                }
            }
            Input::Pause => {
                if !self.started {
                    ignore(Ignored::NotStarted, sink);
                } else if self.paused {
                    ignore(Ignored::Paused, sink);
                } else if self.frozen {
                    ignore(Ignored::Frozen, sink);
                } else {
                    self.paused = true;
                    emit(sink, at, Notice::Paused);
                }
            }
            Input::Resume => {
                if !self.started {
                    ignore(Ignored::NotStarted, sink);
                } else if !self.paused {
                    ignore(Ignored::NotPaused, sink);
                } else {
                    self.paused = false;
                    emit(sink, at, Notice::Resumed);
                }
            }
            Input::Adjust(adjustment) => self.adjust(adjustment, control, sink)?,
        }
        Ok(())
    }

    fn press(
        &mut self,
        side: Side,
        control: &MatchControl,
        settings: Settings,
        sink: &mut Sink<'_>,
    ) {
        let at = self.t;
        let side_control = control.for_side(side);
        let clock = self.side_mut(side);
        let used = clock.move_used;
        clock.moves = clock.moves.saturating_add(1);
        clock.move_used = 0;
        let move_number = clock.moves;
        emit(
            sink,
            at,
            Notice::Pressed {
                side,
                move_number,
                used,
            },
        );
        if !clock.dead {
            match side_control {
                TimeControl::Stages(_) => {
                    let completed_stage = clock.stage;
                    if settings.stage_advance == StageAdvance::Moves {
                        if let Some(boundary) = side_control.moves_by_end_of(completed_stage) {
                            if u64::from(clock.moves) >= boundary {
                                let new_stage = completed_stage.saturating_add(1);
                                let added =
                                    side_control.stage(new_stage).map_or(0, |s| s.time.max(0));
                                clock.stage = new_stage;
                                clock.remaining = clock.remaining.saturating_add(added);
                                clock.credits = clock.credits.saturating_add(added);
                                emit(
                                    sink,
                                    at,
                                    Notice::StageChanged {
                                        side,
                                        stage: new_stage,
                                        at,
                                    },
                                );
                            }
                        }
                    }
                    let completed = side_control
                        .stage(completed_stage)
                        .map_or(Bonus::None, |s| s.bonus);
                    let next = side_control
                        .stage(clock.stage)
                        .map_or(Bonus::None, |s| s.bonus);
                    let earned = match completed {
                        Bonus::Increment(x) => x.max(0),
                        Bonus::Bronstein(b) => used.min(b).max(0),
                        _ => 0,
                    };
                    let credit = match settings.credit {
                        // The bonus of the completed move was credited before
                        // it; what it earned replaces that, and the next
                        // move's bonus (of the next move's stage) is credited.
                        Credit::BeforeMove => earned
                            .saturating_sub(pre_credit(completed))
                            .saturating_add(pre_credit(next)),
                        Credit::AfterMove => earned,
                    };
                    let before = clock.remaining;
                    clock.remaining = before.saturating_add(credit).max(0);
                    clock.credits = clock
                        .credits
                        .saturating_add(clock.remaining.saturating_sub(before));
                }
                TimeControl::ByoYomi { period, .. } => {
                    if clock.in_overtime {
                        let credit = (*period).max(0).saturating_sub(clock.remaining);
                        clock.remaining = (*period).max(0);
                        clock.credits = clock.credits.saturating_add(credit);
                    }
                }
                TimeControl::Canadian { moves, block, .. } => {
                    if clock.in_overtime {
                        clock.periods_left = clock.periods_left.saturating_sub(1);
                        if clock.periods_left == 0 {
                            let credit = (*block).max(0).saturating_sub(clock.remaining);
                            clock.remaining = (*block).max(0);
                            clock.credits = clock.credits.saturating_add(credit);
                            clock.periods_left = (*moves).max(1);
                        }
                    }
                }
                TimeControl::Hourglass { .. } | TimeControl::Upcount => {}
            }
        }
        self.to_move = side.other();
        self.start_move(side.other(), control);
    }

    fn adjust(
        &mut self,
        adjustment: Adjustment,
        control: &MatchControl,
        sink: &mut Sink<'_>,
    ) -> Result<(), EngineError> {
        let side = adjustment.side;
        let side_control = control.for_side(side);
        if let Some(remaining) = adjustment.remaining {
            if remaining < 0 {
                return Err(EngineError::InvalidAdjustment(format!(
                    "remaining time must not be negative ({remaining} µs)"
                )));
            }
            if matches!(side_control, TimeControl::Upcount) {
                return Err(EngineError::InvalidAdjustment(
                    "an upcount clock has no remaining time to set".into(),
                ));
            }
        }
        if adjustment.stage == Some(0) {
            return Err(EngineError::InvalidAdjustment(
                "stages are numbered from 1".into(),
            ));
        }
        if let Some(stage) = adjustment.stage {
            let clock = self.side_mut(side);
            clock.stage = stage;
            match side_control {
                TimeControl::ByoYomi { periods, .. } => {
                    let overtime = stage >= 2;
                    if overtime && !clock.in_overtime {
                        clock.periods_left = (*periods).max(1);
                    }
                    clock.in_overtime = overtime;
                    if !overtime {
                        clock.periods_left = *periods;
                    }
                }
                TimeControl::Canadian { moves, .. } => {
                    let overtime = stage >= 2;
                    if overtime != clock.in_overtime {
                        clock.periods_left = (*moves).max(1);
                    }
                    clock.in_overtime = overtime;
                }
                TimeControl::Stages(_) => {
                    clock.in_overtime = stage > 1;
                    // the delay of the new stage: in full for a move still to
                    // come, none for a move that started without one
                    let delay = side_control.stage(stage).map_or(0, |s| s.bonus.delay());
                    let moving = self.started && self.to_move == side;
                    let clock = self.side_mut(side);
                    if delay <= 0 {
                        clock.delay_left = 0;
                    } else if !moving {
                        clock.delay_left = delay;
                    }
                }
                _ => clock.stage = 1,
            }
        }
        if let Some(moves) = adjustment.moves {
            self.side_mut(side).moves = moves;
        }
        if let Some(remaining) = adjustment.remaining {
            let clock = self.side_mut(side);
            let change = remaining.saturating_sub(clock.remaining);
            clock.credits = clock.credits.saturating_add(change);
            clock.remaining = remaining;
            if remaining > 0 && clock.flag_at.is_some() {
                self.clear_flag(side);
                if self.frozen && self.flags[0].is_none() {
                    // the game was frozen by that flag: it goes on when the
                    // arbiter resumes it
                    self.frozen = false;
                    self.paused = true;
                }
            } else if remaining > 0 && clock.dead {
                clock.dead = false;
            }
        }
        emit(sink, self.t, Notice::Adjusted(adjustment));
        Ok(())
    }

    /// The public picture of this state.
    pub fn snapshot(&self, control: &MatchControl) -> ClockState {
        let runs = self.runs();
        let mut flags = Vec::with_capacity(2);
        flags.extend(self.flags.iter().flatten().copied());
        ClockState {
            t: self.t,
            started: self.started,
            running: runs.then_some(self.to_move),
            to_move: Some(self.to_move),
            paused: self.paused,
            frozen: self.frozen,
            flags,
            white: self.side_state(Side::White, control),
            black: self.side_state(Side::Black, control),
        }
    }

    fn side_state(&self, side: Side, control: &MatchControl) -> SideState {
        let clock = self.side(side);
        let side_control = control.for_side(side);
        let delay_left = match side_control.stage(clock.stage).map(|s| s.bonus) {
            Some(Bonus::Delay(delay)) => Some(if self.started && self.to_move == side {
                clock.delay_left
            } else if clock.dead {
                0
            } else {
                delay.max(0)
            }),
            _ => None,
        };
        SideState {
            remaining: match side_control {
                TimeControl::Upcount => None,
                _ => Some(clock.remaining),
            },
            used: clock.used,
            moves: clock.moves,
            stage: clock.stage,
            flag_at: clock.flag_at,
            delay_left,
            periods_left: match side_control {
                TimeControl::ByoYomi { .. } | TimeControl::Canadian { .. } => {
                    Some(clock.periods_left)
                }
                _ => None,
            },
            in_overtime: clock.in_overtime || clock.stage > 1,
        }
    }
}
