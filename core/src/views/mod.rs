//! What readers see of a board: typed values the board core publishes after
//! every committed change, and the JSON views computed from them.
//!
//! The board core (on the timing thread) hands out a [`BoardModel`]: a copy
//! of the clock's arithmetic state ([`ClockModel`]) with everything the
//! State view shows beside it. A reader on any thread computes the state at
//! any later instant from it exactly as the engine would ([`BoardModel::state`]),
//! so a read never reaches the timing thread: a flood of readers costs the
//! clock nothing. History rows ([`HistoryRow`]) are appended one by one as
//! they are committed.
//!
//! Promises: [`StateView`] serialises to the replay output schema (see
//! `docs/replay-format.md`) followed by the daemon's additions, on the
//! daemon's monotonic milliseconds; [`HistoryView`] to the documented
//! history; both are shared by D-Bus and `chessclockctl` (which deserialises
//! them), so fields are only ever added. Remaining times are rounded up
//! (a clock shows 0 only once its flag has fallen), used times and instants
//! down.

mod controls;
mod history;
mod players;
pub mod snapshot;
pub mod text;

pub use history::*;

pub use controls::{ControlView, PresetView, SideControlView};

pub use players::Players;
pub use snapshot::{BoardSnapshot, DeviceLink};

use serde::{Deserialize, Serialize};

use crate::display::Marks;
use crate::engine::report::{ceil_ms, floor_ms};
use crate::engine::{ClockModel, ClockState, Settings, Side, SideState};
use crate::journal::{DeviceOrigin, StoredEvent};
use crate::time::{Micros, MS};

/// A device slot of a board, as readers see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceView {
    /// `buttons`, `display`, `eboard`.
    pub role: String,
    /// Path or `serial:...` from the config.
    pub name: String,
    pub connected: bool,
    /// HELLO serial number (or the DGT board's) once known.
    pub serial: Option<String>,
    /// Frames refused from it so far.
    #[serde(default)]
    pub errors: u64,
}

impl DeviceView {
    pub fn link(&self) -> DeviceLink {
        DeviceLink {
            role: self.role.clone(),
            name: self.name.clone(),
            connected: self.connected,
            serial: self.serial.clone(),
        }
    }
}

/// How the game on the electronic board ended (Art. 6.2a1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEndView {
    /// `checkmate` or `stalemate`.
    pub reason: String,
    pub winner: Option<Side>,
}

/// The Art. 6.4 / 6.9 report at a flag fall, from the electronic board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagReportView {
    pub side: Side,
    /// Whether the flagged side completed the moves its stage required
    /// (Art. 6.4); `None` in sudden death.
    pub moves_completed: Option<bool>,
    pub moves_required: Option<u32>,
    pub moves_on_board: Option<u32>,
    /// Art. 6.9: can the opponent still mate by any series of legal moves?
    pub opponent_can_mate: bool,
    /// `loss`, `draw`, `moves-completed`, `game-already-over`.
    pub verdict: String,
}

/// The electronic board of a board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EboardView {
    pub name: String,
    pub connected: bool,
    pub serial: Option<String>,
    /// Whether the board's game can be trusted right now (connected, in step).
    pub usable: bool,
    /// Half-moves seen on the board.
    pub ply: u32,
    pub fen: Option<String>,
    /// The move the board shows that is not confirmed yet (SAN).
    #[serde(default)]
    pub tentative: Option<String>,
    pub game_end: Option<GameEndView>,
    pub flag_report: Option<FlagReportView>,
    /// The board shows the starting position after a finished game while
    /// the clock still has that game: the arbiter may set up a new one.
    #[serde(default)]
    pub next_game_waiting: bool,
    /// What the attached DGT clock's lever does: `presses` or `ignored`.
    #[serde(default)]
    pub dgt_clock_lever: Option<String>,
}

/// The game's result, as the PGN has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultView {
    /// `1-0`, `0-1`, `1/2-1/2`.
    pub result: String,
    /// The PGN `Termination`: `normal`, `time forfeit`, ...
    pub termination: String,
}

/// A game that is over, and why ([`StateView::over`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverView {
    /// `1-0`, `0-1`, `1/2-1/2`; `None` when a flag ended the game and the
    /// arbiter has yet to say whether it is a loss or a draw (Art. 6.9).
    pub result: Option<String>,
    /// How it ended: `checkmate`, `resignation`, `time forfeit`, ...; for a
    /// flag without a result, `time forfeit`.
    pub termination: String,
    /// For the arbiter: `0-1 (checkmate)`, `white's flag fell`.
    pub why: String,
}

/// One flag fall, in the order they fell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagFall {
    pub side: Side,
    /// Game time (µs) of the fall.
    pub at: Micros,
    pub stage: u32,
    pub last_stage: bool,
}

/// What a restart of the daemon in the middle of this game reconstructed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartInfo {
    /// How long the daemon was down (µs): exact within one boot (the
    /// monotonic clock survives a process restart), the wall-clock gap
    /// after a reboot.
    pub down: Micros,
    /// Whether the restart was within the same boot of the machine (the
    /// running side was charged the true time up to the restart).
    pub same_boot: bool,
    /// The side whose clock ran when the daemon went down, if one did.
    pub was_running: Option<Side>,
    /// Game time (µs) at which the game was paused for the arbiter.
    pub paused_at: Option<Micros>,
}

/// A start scheduled at a wall-clock instant (Art. 6.6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledStart {
    /// Monotonic µs it is due at (this run's mapping of the wall instant).
    pub at: Micros,
    pub unix_time_us: i64,
    /// Whether the NTP check was overridden.
    pub forced: bool,
}

/// Everything a reader needs of a board, as of the instant the board core
/// last changed it. See the module docs.
#[derive(Clone, Debug)]
pub struct BoardModel {
    pub board: String,
    /// The control as given (notation or preset name).
    pub control: String,
    pub clock: ClockModel,
    /// Monotonic µs of the game's instant 0.
    pub epoch: Micros,
    /// Monotonic µs at which this model was made (the snapshot instant).
    pub taken_at: Micros,
    /// Game time (µs) White's clock was first started.
    pub started_at: Option<Micros>,
    pub scheduled_start: Option<ScheduledStart>,
    pub marks: Marks,
    pub devices: Vec<DeviceView>,
    pub eboard: Option<EboardView>,
    /// Art. 6.7's default time (0: none).
    pub default_time_ms: u64,
    /// Every flag fall of the game, in order.
    pub flag_falls: Vec<FlagFall>,
    pub restart: Option<RestartInfo>,
    /// Presses that arrived too late to be placed in the game (recorded,
    /// shown to the arbiter, not applied).
    pub unplaced_presses: u32,
    pub settings: Settings,
    /// The game's result, once decided.
    pub result: Option<ResultView>,
    /// The control in FIDE prose.
    pub control_prose: String,
    /// Where the displays begin to show tenths (ms; 0: never).
    pub tenths_below_ms: u64,
    /// The players named by the game's PGN tags.
    pub players: Players,
}

/// A match control in FIDE prose: one sentence when both sides have the
/// same control, else each side's.
pub fn match_prose(control: &crate::engine::MatchControl) -> String {
    if control.white == control.black {
        control.white.prose()
    } else {
        format!(
            "White: {}; Black: {}",
            control.white.prose(),
            control.black.prose()
        )
    }
}

impl BoardModel {
    /// Game time (µs) of monotonic instant `mono`, never before the model.
    pub fn game_time(&self, mono: Micros) -> Micros {
        mono.saturating_sub(self.epoch).max(self.clock.instant())
    }

    /// The clock's state at monotonic instant `mono`.
    pub fn state(&self, mono: Micros) -> ClockState {
        self.clock.state(self.game_time(mono))
    }

    /// Whether the game is over at `state`, and why: a result (on the
    /// board, by a flag's verdict, by the arbiter), or a flag that fell in
    /// the last stage of its side's control with that side's clock the one
    /// stopped at zero (no more time to come: the game is lost or drawn,
    /// Art. 6.9).
    pub fn over(&self, state: &ClockState) -> Option<OverView> {
        if let Some(result) = &self.result {
            return Some(OverView {
                result: Some(result.result.clone()),
                termination: result.termination.clone(),
                why: format!("{} ({})", result.result, result.termination),
            });
        }
        // A flag in the last stage while that side's clock is the one at
        // zero (no clock left to run). A press that went through at the
        // flag's instant set the other clock running: the displays count
        // it, so the state must too, and the arbiter decides.
        let controls = self.clock.control();
        let side = state.flags.iter().copied().find(|&side| {
            controls
                .for_side(side)
                .is_last_stage(state.side(side).stage)
                && state.running.is_none_or(|running| running == side)
        })?;
        Some(OverView {
            result: None,
            termination: "time forfeit".to_owned(),
            why: format!("{side}'s flag fell"),
        })
    }

    /// The D-Bus properties' snapshot at monotonic instant `mono`.
    pub fn snapshot(&self, mono: Micros) -> BoardSnapshot {
        let mut state = self.state(mono);
        if self.over(&state).is_some() {
            // A game that is over has no clock running.
            state.running = None;
        }
        BoardSnapshot {
            board: self.board.clone(),
            control: self.control.clone(),
            snapshot_ms: floor_ms(mono),
            view_us: self.taken_at,
            started: state.started,
            running: state.running,
            paused: state.paused,
            white_remaining_ms: state.white.remaining.map_or(0, ceil_ms),
            black_remaining_ms: state.black.remaining.map_or(0, ceil_ms),
            white_moves: state.white.moves,
            black_moves: state.black.moves,
            white_stage: state.white.stage,
            black_stage: state.black.stage,
            flags: state.flags.clone(),
            devices: self
                .devices
                .iter()
                .map(DeviceView::link)
                .chain(self.eboard.iter().map(|e| DeviceLink {
                    role: "eboard".into(),
                    name: e.name.clone(),
                    connected: e.connected,
                    serial: e.serial.clone(),
                }))
                .collect(),
            arbiter_called: self.marks.arbiter_called,
        }
    }

    /// The State view at monotonic instant `mono`.
    pub fn state_view(&self, mono: Micros) -> StateView {
        let t = self.game_time(mono);
        let mut state = self.clock.state(t);
        let over = self.over(&state);
        if over.is_some() {
            // A game that is over has no clock running.
            state.running = None;
        }
        let since_start = self.started_at.map(|start| t - start);
        let default_time = i64::try_from(self.default_time_ms)
            .unwrap_or(i64::MAX / MS)
            .saturating_mul(MS);
        let overrun = match since_start {
            Some(since) if default_time > 0 && since > default_time => Side::BOTH
                .into_iter()
                .filter(|&side| {
                    state.side(side).moves == 0 && (side == Side::White || state.white.moves > 0)
                })
                .collect(),
            _ => Vec::new(),
        };
        let controls = self.clock.control();
        let side_view = |side: Side| {
            let own = state.side(side);
            let canadian = matches!(
                controls.for_side(side),
                crate::timecontrol::TimeControl::Canadian { .. }
            );
            let mut view = SideView::new(own, self.epoch, canadian);
            view.max_stage = Some(controls.for_side(side).max_stage());
            view
        };
        StateView {
            t: floor_ms(t.saturating_add(self.epoch)),
            running: state.running,
            paused: state.paused,
            flags: state.flags.clone(),
            white: side_view(Side::White),
            black: side_view(Side::Black),
            board: self.board.clone(),
            control: self.control.clone(),
            started: state.started,
            frozen: state.frozen,
            to_move: state.to_move,
            game_ms: floor_ms(t),
            game_epoch_us: self.epoch,
            time_since_start_ms: since_start.map(floor_ms),
            default_time_ms: self.default_time_ms,
            default_time_overrun: overrun,
            down_time_ms: self.marks.down_time.map(ceil_ms),
            arbiter_called: self.marks.arbiter_called,
            arbiter_called_at_ms: self
                .marks
                .arbiter_called_at
                .filter(|_| self.marks.arbiter_called)
                .map(|at| floor_ms(at.saturating_add(self.epoch))),
            arbiter_call_acknowledged_by: self
                .marks
                .arbiter_call_acknowledged
                .as_ref()
                .filter(|_| self.marks.arbiter_called)
                .map(|(by, _)| by.clone()),
            arbiter_call_acknowledged_at_ms: self
                .marks
                .arbiter_call_acknowledged
                .as_ref()
                .filter(|_| self.marks.arbiter_called)
                .map(|(_, at)| floor_ms(at.saturating_add(self.epoch))),
            scheduled_start_ms: self.scheduled_start.as_ref().map(|s| floor_ms(s.at)),
            scheduled_start_unix_ms: self
                .scheduled_start
                .as_ref()
                .map(|s| s.unix_time_us.div_euclid(MS)),
            devices: self.devices.clone(),
            eboard: self.eboard.clone(),
            flag_falls: self
                .flag_falls
                .iter()
                .map(|fall| FlagFallView {
                    side: fall.side,
                    at_ms: floor_ms(fall.at.saturating_add(self.epoch)),
                    game_ms: floor_ms(fall.at),
                    stage: fall.stage,
                    last_stage: fall.last_stage,
                })
                .collect(),
            restart: self.restart.as_ref().map(|r| RestartView {
                down_ms: ceil_ms(r.down),
                same_boot: r.same_boot,
                was_running: r.was_running,
                paused_at_game_ms: r.paused_at.map(floor_ms),
            }),
            unplaced_presses: self.unplaced_presses,
            result: self.result.clone(),
            control_prose: Some(self.control_prose.clone()),
            tenths_below_ms: Some(self.tenths_below_ms),
            scheduled_start_forced: self.scheduled_start.as_ref().map(|s| s.forced),
            hourglass: matches!(
                controls.white,
                crate::timecontrol::TimeControl::Hourglass { .. }
            ),
            state_health: None,
            over,
            players: self.players.clone(),
        }
    }
}

/// One side in a [`StateView`]: the replay schema's fields, then additions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideView {
    /// The time on that side's display (for simple delay, the main time;
    /// `None` for upcount), rounded up.
    pub remaining_ms: Option<i64>,
    pub used_ms: i64,
    pub moves: u32,
    pub stage: u32,
    /// The daemon's monotonic ms at which this side's flag (first) fell.
    pub flag_ms: Option<i64>,
    /// Simple delay left in the current move.
    pub delay_left_ms: Option<i64>,
    /// Byo-yomi periods left (the running one included); for Canadian
    /// overtime the moves left in the block (as `moves_left_in_block`).
    pub periods_left: Option<u32>,
    /// Canadian overtime: moves still to make in the current block.
    #[serde(default)]
    pub moves_left_in_block: Option<u32>,
    pub in_overtime: bool,
    /// The highest stage this side's control has (a correction to a higher
    /// one is refused).
    #[serde(default)]
    pub max_stage: Option<u32>,
}

impl SideView {
    fn new(side: &SideState, epoch: Micros, canadian: bool) -> SideView {
        SideView {
            remaining_ms: side.remaining.map(ceil_ms),
            used_ms: floor_ms(side.used),
            moves: side.moves,
            stage: side.stage,
            flag_ms: side.flag_at.map(|at| floor_ms(at.saturating_add(epoch))),
            delay_left_ms: side.delay_left.map(ceil_ms),
            periods_left: side.periods_left,
            moves_left_in_block: side.periods_left.filter(|_| canadian),
            in_overtime: side.in_overtime,
            max_stage: None,
        }
    }
}

/// A flag fall in a [`StateView`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagFallView {
    pub side: Side,
    /// Daemon monotonic ms.
    pub at_ms: i64,
    /// Milliseconds since the game was created.
    pub game_ms: i64,
    pub stage: u32,
    pub last_stage: bool,
}

/// A restart in a [`StateView`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartView {
    pub down_ms: i64,
    pub same_boot: bool,
    pub was_running: Option<Side>,
    pub paused_at_game_ms: Option<i64>,
}

/// The D-Bus `State()` answer: the replay output schema (`t` and `flag_ms`
/// on the daemon's monotonic milliseconds), then the daemon's additions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateView {
    pub t: i64,
    pub running: Option<Side>,
    pub paused: bool,
    pub flags: Vec<Side>,
    pub white: SideView,
    pub black: SideView,
    pub board: String,
    pub control: String,
    pub started: bool,
    pub frozen: bool,
    pub to_move: Option<Side>,
    pub game_ms: i64,
    pub game_epoch_us: i64,
    pub time_since_start_ms: Option<i64>,
    pub default_time_ms: u64,
    pub default_time_overrun: Vec<Side>,
    pub down_time_ms: Option<i64>,
    pub arbiter_called: bool,
    /// The daemon's monotonic ms at which the arbiter was called (as
    /// `flag_falls`' `at_ms`); `None` while no call stands.
    #[serde(default)]
    pub arbiter_called_at_ms: Option<i64>,
    /// Who acknowledged the standing call (`ack-call`: the arbiter's name
    /// as the record's `who`); `None` while no call stands or none
    /// acknowledged it.
    #[serde(default)]
    pub arbiter_call_acknowledged_by: Option<String>,
    /// The daemon's monotonic ms of that acknowledgment (as
    /// `arbiter_called_at_ms`).
    #[serde(default)]
    pub arbiter_call_acknowledged_at_ms: Option<i64>,
    pub scheduled_start_ms: Option<i64>,
    #[serde(default)]
    pub scheduled_start_unix_ms: Option<i64>,
    pub devices: Vec<DeviceView>,
    pub eboard: Option<EboardView>,
    #[serde(default)]
    pub flag_falls: Vec<FlagFallView>,
    #[serde(default)]
    pub restart: Option<RestartView>,
    #[serde(default)]
    pub unplaced_presses: u32,
    /// The game's result, once decided (on the board, by a flag verdict, by
    /// the arbiter).
    #[serde(default)]
    pub result: Option<ResultView>,
    /// The control in FIDE prose.
    #[serde(default)]
    pub control_prose: Option<String>,
    /// Where the displays begin to show tenths (ms; 0: never): every
    /// surface writes times as the displays do (see `clocktext`).
    #[serde(default)]
    pub tenths_below_ms: Option<u64>,
    /// Whether the scheduled start overrode the NTP check.
    #[serde(default)]
    pub scheduled_start_forced: Option<bool>,
    /// An hourglass control: the time one side uses is added to the other
    /// (a reader extrapolating the clocks needs to know).
    #[serde(default)]
    pub hourglass: bool,
    /// The state store's health, which D-Bus's `State()` and the hall's
    /// state message add (the board core does not know it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_health: Option<crate::contract::StateHealth>,
    /// The game is over, and why (`null` while it goes on); `running` is
    /// then `null`.
    #[serde(default)]
    pub over: Option<OverView>,
    /// The players, as the game's PGN tags `White` and `Black` name them.
    #[serde(default)]
    pub players: Players,
}

impl StateView {
    /// How times of this board are written (as its displays write them).
    pub fn style(&self) -> crate::clocktext::Style {
        self.tenths_below_ms.map_or(
            crate::clocktext::Style::CLOCK,
            crate::clocktext::Style::tenths_below_ms,
        )
    }

    pub fn side(&self, side: Side) -> &SideView {
        match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        }
    }
}
