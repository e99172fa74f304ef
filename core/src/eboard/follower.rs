//! What the board core follows of a board's game: the moves the electronic
//! board reports, the presses the engine accepted, every change of the
//! clocks, the result, and the tags; from them the PGN for broadcast.
//! Pure: events and instants in, [`FollowerAction`]s out, no clock of its
//! own. One follower per board, also for a board without an electronic
//! board (its PGN then records the presses only, see [`Follower::render`]).
//!
//! All instants are on one base, the caller's monotonic µs (the same as
//! [`EboardEvent`]'s `at`); wall-clock µs are only used for tags.
//!
//! Promises:
//! * **a press and the board's move are matched by time, in either order.**
//!   A press by `side` at `t` completes `side`'s last move shown on the
//!   board by `t`, or the next one if the board reports it within
//!   [`FollowerConfig::press_window`] after `t` with no opponent move in
//!   between (a DGT board reports a move tens of milliseconds after the
//!   piece is put down, so a quick press can arrive first). When that move
//!   count differs from the one the engine gave the press, the follower asks
//!   for [`FollowerAction::AdjustMoves`] just before the press: at once when
//!   the board is ahead (forgotten presses: the stage's time comes at the
//!   real N-th move), and [`FollowerConfig::settle_after`] after the press
//!   when the board is still behind (a press without a move);
//! * the move count is taken from the board only while it is *usable*:
//!   connected, following this game from its start, in step (no
//!   unrecognised placement);
//! * a checkmate or stalemate confirmed on the board, and the result signal
//!   (kings in the centre), end the game: [`FollowerAction::StopClock`] at
//!   the instant the final placement appeared (or at the press that
//!   completed the final move, when it came before the follower knew); an
//!   unpressed last move gets its `%clk` from the clocks at that stop;
//! * the whole game taken back to the starting position (two half-moves or
//!   more) is the pieces set up again: the game is kept as it was and the
//!   board's next game begins, as after a finished game;
//! * a finished game (any result) is kept as it was: no move, no takeback
//!   is applied to it. The starting position after it begins the board's
//!   next game, followed aside and offered ([`FollowerAction::OfferNewGame`])
//!   until [`Follower::new_game`] makes it the current game;
//! * the broadcast PGN ([`Follower::render`]) holds confirmed moves only;
//!   [`Follower::render_live`] adds the tentative one;
//! * the clock tags (`WhiteClock`, `BlackClock`, `ReferenceTime`,
//!   `ClockStatus`) are those of the last [`Follower::on_clocks`], so a
//!   reader can extrapolate the running clock from `ReferenceTime`.

use std::collections::BTreeMap;
use std::sync::Arc;

use shakmaty::Chess;

use super::detect::{ply_of_side_move, side_moves_after, BoardEvent, DetectedMove, MoveStatus};
use super::laws::{
    flag_report, game_end, position_from_fen, FlagReport, FlagVerdict, GameEndReason,
};
use super::link::{EboardCommand, EboardEvent};
use super::pgn::{
    clock_text, control_tags, rfc3339_utc_ms, utc_date_time, valid_tag_name, GameResult, MoveClock,
    PgnGame, PgnMove, RecordedPress, SetTags, Termination,
};
use crate::engine::{ClockState, MatchControl, Micros, Side, MS};
use crate::timecontrol::TimeControl;

/// Timing of the follower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FollowerConfig {
    /// A board move reported up to this long after a press of its side
    /// (with no opponent move in between) is the move that press completed.
    pub press_window: Micros,
    /// A press whose move the board still does not show this long after it
    /// counts as a press without a move (its count is lowered to the
    /// board's).
    pub settle_after: Micros,
}

/// The documented default of [`FollowerConfig::press_window`]: 500 ms.
pub const PRESS_WINDOW: Micros = 500 * MS;

impl Default for FollowerConfig {
    fn default() -> Self {
        FollowerConfig {
            press_window: PRESS_WINDOW,
            settle_after: 1_000 * MS,
        }
    }
}

/// Why the follower asks for the clock to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    Checkmate,
    Stalemate,
    /// Both kings on the centre squares (or a magic piece).
    ResultSignal,
    /// A result the arbiter entered.
    Result,
}

/// What the follower asks of the board core (drained with
/// [`Follower::drain`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowerAction {
    /// Set `side`'s move count to `moves` just before its press at `at`
    /// (insert the adjustment there and re-run the engine), so that press
    /// completes move `moves + 1`, the board's count.
    AdjustMoves { at: Micros, side: Side, moves: u32 },
    /// Stop the clock (pause) at `at`, possibly earlier than the last input:
    /// insert it there and re-run.
    StopClock { at: Micros, reason: StopReason },
    /// For the board's shell.
    Command(EboardCommand),
    /// The board shows the starting position after a finished game while the
    /// clock still has that game: offer the arbiter a `new` game.
    OfferNewGame { at: Micros },
    /// The game's result changed (journal it, so a restart keeps it).
    ResultChanged {
        result: Option<GameResult>,
        termination: Option<Termination>,
    },
    /// The PGN text changed: write the broadcast file once what caused it is
    /// committed.
    PgnChanged,
}

/// A move followed on the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowedMove {
    pub ply: u32,
    pub side: Side,
    pub san: String,
    pub uci: String,
    pub fen_after: String,
    /// The instant of the placement that showed it.
    pub at: Micros,
    pub confirmed: bool,
}

impl FollowedMove {
    fn of(m: &DetectedMove) -> FollowedMove {
        FollowedMove {
            ply: m.ply,
            side: m.side,
            san: m.san.clone(),
            uci: m.uci.clone(),
            fen_after: m.fen_after.clone(),
            at: m.at,
            confirmed: m.status == MoveStatus::Confirmed,
        }
    }

    /// As the detector reports it (for journaling).
    pub fn detected(&self) -> DetectedMove {
        DetectedMove {
            ply: self.ply,
            side: self.side,
            side_moves: side_moves_after(self.ply, Side::White, self.side),
            san: self.san.clone(),
            uci: self.uci.clone(),
            fen_after: self.fen_after.clone(),
            status: if self.confirmed {
                MoveStatus::Confirmed
            } else {
                MoveStatus::Tentative
            },
            at: self.at,
        }
    }
}

/// What the clock shows, for the `ClockStatus` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockStatus {
    NotStarted,
    Running,
    Paused,
    /// Frozen after a flag, or stopped for a result.
    Stopped,
}

impl ClockStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClockStatus::NotStarted => "not-started",
            ClockStatus::Running => "running",
            ClockStatus::Paused => "paused",
            ClockStatus::Stopped => "stopped",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ClockSnapshot {
    wall_us: i64,
    white: Option<Micros>,
    black: Option<Micros>,
    running: Option<Side>,
    status: ClockStatus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PlyClock {
    clock: MoveClock,
    /// The press that gave it (`None`: the stop at the end of the game).
    press_at: Option<Micros>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Press {
    at: Micros,
    side: Side,
    move_number: u32,
    clock: Option<MoveClock>,
    /// The side's total time used right after the press.
    used_after: Micros,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OpenPress {
    at: Micros,
    side: Side,
    move_number: u32,
    /// The count last asked for (asked once).
    corrected: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FinalClock {
    ply: u32,
    side: Side,
    at: Micros,
}

/// Tags the follower writes itself: refused in [`Follower::set_tags`].
pub const RESERVED_TAGS: [&str; 16] = [
    "Result",
    "TimeControl",
    "ClockControl",
    "WhiteTimeControl",
    "BlackTimeControl",
    "WhiteClockControl",
    "BlackClockControl",
    "WhiteClock",
    "BlackClock",
    "ReferenceTime",
    "ClockStatus",
    "Termination",
    "UTCDate",
    "UTCTime",
    "FEN",
    "SetUp",
];

#[derive(Clone, Debug)]
struct Game {
    /// Tags from the configuration (`Event`, `Site`, `Round`, `White`, ...).
    defaults: BTreeMap<String, String>,
    /// Tags set since (D-Bus, CLI, the hub).
    overrides: BTreeMap<String, String>,
    /// `defaults` with `overrides` over them, made when either changes and
    /// shared with every PGN handed over (see `crate::eboard::pgn`).
    tags: SetTags,
    control_tags: Vec<(String, String)>,
    /// The board follows this game (its start was seen, or it was resumed).
    on_board: bool,
    moves: Vec<FollowedMove>,
    clocks: BTreeMap<u32, PlyClock>,
    presses: Vec<Press>,
    result: Option<(GameResult, Termination)>,
    /// When the result was decided (presses after it are not recorded).
    result_at: Option<Micros>,
    game_end: Option<(GameEndReason, Option<Side>)>,
    flag_report: Option<FlagReport>,
    clock: Option<ClockSnapshot>,
    started_wall: Option<i64>,
}

impl Game {
    fn new(defaults: BTreeMap<String, String>, control: &MatchControl) -> Game {
        Game {
            tags: Arc::new(defaults.clone()),
            defaults,
            overrides: BTreeMap::new(),
            control_tags: control_tags(control),
            on_board: false,
            moves: Vec::new(),
            clocks: BTreeMap::new(),
            presses: Vec::new(),
            result: None,
            result_at: None,
            game_end: None,
            flag_report: None,
            clock: None,
            started_wall: None,
        }
    }

    fn tag(&self, name: &str) -> Option<&str> {
        self.tags.get(name).map(String::as_str)
    }
}

/// The follower of one board. See the module docs.
#[derive(Clone, Debug)]
pub struct Follower {
    config: FollowerConfig,
    board_attached: bool,
    connected: bool,
    in_step: bool,
    /// `NewGame` was sent to the shell: its events are stale until the
    /// start position is reported again.
    awaiting_reset: bool,
    restoring: bool,
    game: Game,
    /// The board's next game, followed after the current one finished and
    /// before [`Follower::new_game`].
    next: Option<Vec<FollowedMove>>,
    open: Vec<OpenPress>,
    final_clock: Option<FinalClock>,
    actions: Vec<FollowerAction>,
}

fn apply_move(moves: &mut Vec<FollowedMove>, m: &DetectedMove) {
    let index = m.ply.saturating_sub(1) as usize;
    if m.ply == 0 || index > moves.len() {
        return;
    }
    moves.truncate(index);
    for earlier in moves.iter_mut() {
        earlier.confirmed = true;
    }
    moves.push(FollowedMove::of(m));
}

impl Follower {
    /// A follower for a board (`board_attached`: an electronic board is
    /// configured) whose first game has these tags (from the configuration)
    /// and this control.
    pub fn new(
        config: FollowerConfig,
        board_attached: bool,
        tags: BTreeMap<String, String>,
        control: &MatchControl,
    ) -> Follower {
        Follower {
            config,
            board_attached,
            connected: false,
            in_step: true,
            awaiting_reset: false,
            restoring: false,
            game: Game::new(tags, control),
            next: None,
            open: Vec::new(),
            final_clock: None,
            actions: Vec::new(),
        }
    }

    fn act(&mut self, action: FollowerAction) {
        if !self.restoring {
            self.actions.push(action);
        }
    }

    fn changed(&mut self) {
        self.act(FollowerAction::PgnChanged);
    }

    /// The actions asked for since the last call, in order (at most one
    /// `PgnChanged`, last).
    pub fn drain(&mut self) -> Vec<FollowerAction> {
        let mut actions = std::mem::take(&mut self.actions);
        let pgn = actions.contains(&FollowerAction::PgnChanged);
        actions.retain(|a| *a != FollowerAction::PgnChanged);
        if pgn {
            actions.push(FollowerAction::PgnChanged);
        }
        actions
    }

    // ---- the board ----

    /// Follows one event of the board's shell. Returns whether it belongs to
    /// the current game's moves (a move or takeback to journal).
    pub fn on_event(&mut self, event: &EboardEvent) -> bool {
        match event {
            EboardEvent::Connected { .. } => {
                self.connected = true;
                false
            }
            EboardEvent::Disconnected { .. } => {
                self.connected = false;
                false
            }
            EboardEvent::Board(board) => self.on_board_event(board),
            _ => false,
        }
    }

    fn finished(&self) -> bool {
        self.game.result.is_some()
    }

    /// Follows one event of the move detector (see [`Follower::on_event`]).
    pub fn on_board_event(&mut self, event: &BoardEvent) -> bool {
        if self.awaiting_reset {
            if let BoardEvent::StartPosition { .. } = event {
                self.awaiting_reset = false;
                self.in_step = true;
                self.game.on_board = true;
                self.game.moves.clear();
                self.changed();
            }
            return false;
        }
        match event {
            BoardEvent::StartPosition { at } => {
                self.in_step = true;
                if self.finished() {
                    if self.next.is_none() {
                        self.act(FollowerAction::OfferNewGame { at: *at });
                    }
                    self.next = Some(Vec::new());
                } else if self.game.moves.len() >= 2 {
                    // The detector saw the start again while this game had
                    // moves (set up again while the daemon was away): the
                    // game is kept as it was, the board's next game begins.
                    self.next = Some(Vec::new());
                    self.open.clear();
                    self.act(FollowerAction::OfferNewGame { at: *at });
                } else {
                    self.game.on_board = true;
                    self.game.moves.clear();
                    self.changed();
                }
                false
            }
            BoardEvent::MoveDetected(m) => {
                if let Some(next) = self.next.as_mut() {
                    apply_move(next, m);
                    return false;
                }
                if self.finished() {
                    return false;
                }
                self.game.on_board = true;
                self.in_step = true;
                apply_move(&mut self.game.moves, m);
                if m.status == MoveStatus::Tentative {
                    let window = self.config.press_window;
                    let pressed_before = self.open.iter().any(|o| {
                        o.side == m.side && o.at <= m.at && m.at <= o.at.saturating_add(window)
                    });
                    if pressed_before {
                        // The press came first: it confirms this move too.
                        self.act(FollowerAction::Command(EboardCommand::ClockPressed {
                            at: m.at,
                            side: m.side,
                        }));
                    }
                }
                if m.status == MoveStatus::Confirmed {
                    self.check_game_end(m);
                }
                self.reconsider_open();
                self.changed();
                true
            }
            BoardEvent::TakeBack { to_ply, at, .. } => {
                if let Some(next) = self.next.as_mut() {
                    next.truncate(*to_ply as usize);
                    return false;
                }
                if self.finished() {
                    return false;
                }
                self.in_step = true;
                if *to_ply == 0 && self.game.moves.len() >= 2 {
                    // The whole game taken back is the pieces set up again:
                    // the game is kept as it was, the board's next game begins.
                    self.next = Some(Vec::new());
                    self.open.clear();
                    self.act(FollowerAction::OfferNewGame { at: *at });
                    return false;
                }
                self.game.moves.truncate(*to_ply as usize);
                // Presses are not judged across a takeback: the replacement
                // comes later than the press that completed the move.
                self.open.clear();
                // The move put back keeps its press's clock: its replacement
                // is completed by that press (the player's clock no longer
                // runs, so no second press comes).
                let keep = to_ply.saturating_add(1);
                self.game.clocks.retain(|&ply, _| ply <= keep);
                self.changed();
                true
            }
            BoardEvent::Unrecognised { .. } => {
                self.in_step = false;
                false
            }
            BoardEvent::Synchronised { .. } => {
                self.in_step = true;
                false
            }
            BoardEvent::ResultSignal { result, at } => {
                if self.next.is_some() || self.finished() {
                    return false;
                }
                self.decide(*at, result_of_signal(*result), Termination::Normal);
                self.act(FollowerAction::StopClock {
                    at: *at,
                    reason: StopReason::ResultSignal,
                });
                false
            }
            BoardEvent::GameEnd {
                reason,
                winner,
                ply,
                at,
            } => {
                if self.next.is_none() && !self.finished() {
                    self.end_on_board(*reason, *winner, *ply, *at);
                }
                false
            }
        }
    }

    fn check_game_end(&mut self, m: &DetectedMove) {
        let Ok(position) = position_from_fen(&m.fen_after) else {
            return;
        };
        if let Some((reason, winner)) = game_end(&position) {
            self.end_on_board(reason, winner, m.ply, m.at);
        }
    }

    fn end_on_board(&mut self, reason: GameEndReason, winner: Option<Side>, ply: u32, at: Micros) {
        self.game.game_end = Some((reason, winner));
        let result = winner.map_or(GameResult::Draw, GameResult::win);
        let termination = match reason {
            GameEndReason::Checkmate => Termination::Checkmate,
            GameEndReason::Stalemate => Termination::Stalemate,
        };
        self.decide(at, result, termination);
        let side = self
            .game
            .moves
            .get(ply.saturating_sub(1) as usize)
            .map_or(Side::White, |m| m.side);
        // A press of the mover that completed the final move stops the
        // clock by itself: the game ends there (the move counts), else at
        // the instant the final placement appeared.
        let at = self
            .game
            .presses
            .iter()
            .find(|p| {
                p.side == side
                    && p.at >= at
                    && ply_of_side_move(Side::White, side, p.move_number) == ply
            })
            .map_or(at, |p| p.at);
        self.final_clock = Some(FinalClock { ply, side, at });
        self.act(FollowerAction::StopClock {
            at,
            reason: match reason {
                GameEndReason::Checkmate => StopReason::Checkmate,
                GameEndReason::Stalemate => StopReason::Stalemate,
            },
        });
    }

    fn decide(&mut self, at: Micros, result: GameResult, termination: Termination) {
        self.game.result = Some((result, termination));
        self.game.result_at = Some(at);
        self.open.clear();
        self.act(FollowerAction::ResultChanged {
            result: Some(result),
            termination: Some(termination),
        });
        self.changed();
    }

    // ---- the clock ----

    /// Whether the board's move count may replace the presses now.
    pub fn usable(&self) -> bool {
        self.board_attached
            && self.connected
            && self.in_step
            && self.game.on_board
            && !self.awaiting_reset
            && self.next.is_none()
    }

    /// The move count the board gives a press of `side` at `at`: its moves
    /// shown by `at`, plus its next move if the board reports it within the
    /// press window with no opponent move in between.
    fn board_count(&self, at: Micros, side: Side) -> Option<u32> {
        if !self.usable() || self.finished() {
            return None;
        }
        let moves = &self.game.moves;
        let mut plies = moves.iter().take_while(|m| m.at <= at).count();
        if let Some(next) = moves.get(plies) {
            if next.side == side && next.at <= at.saturating_add(self.config.press_window) {
                plies += 1;
            }
        }
        Some(side_moves_after(plies as u32, Side::White, side))
    }

    /// Before a press of `side` at `at` whose engine count is
    /// `engine_moves`: the count to set first when the board is ahead
    /// (forgotten presses), so the press itself completes the board's move
    /// and a stage's time comes at the real N-th move. Never lowers the
    /// count (the board may not have reported the move yet).
    pub fn count_before_press(&self, at: Micros, side: Side, engine_moves: u32) -> Option<u32> {
        let board = self.board_count(at, side)?;
        (board >= 1 && board > engine_moves.saturating_add(1)).then(|| board - 1)
    }

    /// A press the engine accepted: `side` completed its move `move_number`
    /// at `at`, which took `used`; `state` is the engine's state right after
    /// it. Call again for a press the engine re-ran after an insertion (same
    /// `at`: it replaces the first record), after [`Follower::rewind`].
    pub fn on_press(
        &mut self,
        at: Micros,
        side: Side,
        move_number: u32,
        used: Micros,
        state: &ClockState,
    ) {
        if self.game.result_at.is_some_and(|end| at > end) {
            return;
        }
        let own = state.side(side);
        let clock = own.remaining.map(|clk| MoveClock { clk, emt: used });
        self.game
            .presses
            .retain(|p| !(p.at == at && p.side == side));
        self.game.clocks.retain(|_, c| c.press_at != Some(at));
        let press = Press {
            at,
            side,
            move_number,
            clock,
            used_after: own.used,
        };
        let index = self.game.presses.partition_point(|p| p.at <= at);
        self.game.presses.insert(index, press);
        if let Some(clock) = clock {
            let ply = ply_of_side_move(Side::White, side, move_number);
            self.game.clocks.insert(
                ply,
                PlyClock {
                    clock,
                    press_at: Some(at),
                },
            );
        }
        if !self.restoring && self.usable() && !self.finished() {
            match self.open.iter_mut().find(|o| o.at == at && o.side == side) {
                Some(open) => open.move_number = move_number,
                None => self.open.push(OpenPress {
                    at,
                    side,
                    move_number,
                    corrected: None,
                }),
            }
            self.reconsider_open();
        }
        self.changed();
    }

    /// Before re-feeding the presses of a re-run: forget the presses at or
    /// after `from` (those the engine no longer accepts stay forgotten).
    pub fn rewind(&mut self, from: Micros) {
        self.game.presses.retain(|p| p.at < from);
        self.game
            .clocks
            .retain(|_, c| c.press_at.is_none_or(|at| at < from));
    }

    fn reconsider_open(&mut self) {
        let mut asks = Vec::new();
        for index in 0..self.open.len() {
            let open = self.open[index];
            let Some(board) = self.board_count(open.at, open.side) else {
                continue;
            };
            if board >= 1 && board > open.move_number && open.corrected != Some(board) {
                self.open[index].corrected = Some(board);
                asks.push(FollowerAction::AdjustMoves {
                    at: open.at,
                    side: open.side,
                    moves: board - 1,
                });
            }
        }
        for ask in asks {
            self.act(ask);
        }
    }

    /// The passing of time: presses whose move the board still does not
    /// show [`FollowerConfig::settle_after`] after them are lowered to the
    /// board's count.
    pub fn tick(&mut self, now: Micros) {
        let settle = self.config.settle_after;
        let (due, open): (Vec<OpenPress>, Vec<OpenPress>) = self
            .open
            .iter()
            .partition(|o| now >= o.at.saturating_add(settle));
        self.open = open;
        for press in due {
            let Some(board) = self.board_count(press.at, press.side) else {
                continue;
            };
            if board >= 1 && board < press.move_number && press.corrected != Some(board) {
                self.act(FollowerAction::AdjustMoves {
                    at: press.at,
                    side: press.side,
                    moves: board - 1,
                });
            }
        }
    }

    /// When [`Follower::tick`] next has something to do.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.open
            .iter()
            .map(|o| o.at.saturating_add(self.config.settle_after))
            .min()
    }

    /// After every change of the clocks (press, adjust, pause, resume, flag,
    /// stage change, re-run): the engine's state at `at`, `wall_us` the wall
    /// clock of that instant. The clock tags show exactly this.
    pub fn on_clocks(&mut self, _at: Micros, wall_us: i64, state: &ClockState) {
        let status = if !state.started {
            ClockStatus::NotStarted
        } else if state.running.is_some() {
            ClockStatus::Running
        } else if state.frozen || self.finished() {
            ClockStatus::Stopped
        } else {
            ClockStatus::Paused
        };
        self.game.clock = Some(ClockSnapshot {
            wall_us,
            white: state.white.remaining,
            black: state.black.remaining,
            running: state.running,
            status,
        });
        if let Some(fin) = self.final_clock {
            if state.started && state.running.is_none() {
                self.final_clock = None;
                self.give_final_clock(fin, state);
            }
        }
        self.changed();
    }

    /// The last move of a game ended on the board gets its `%clk` from the
    /// clocks at the stop, unless a press of its own completed it before.
    fn give_final_clock(&mut self, fin: FinalClock, state: &ClockState) {
        let side = fin.side;
        let pressed = self.game.presses.iter().any(|p| {
            p.side == side
                && p.at <= fin.at
                && ply_of_side_move(Side::White, side, p.move_number) >= fin.ply
        });
        if pressed {
            return;
        }
        let own = state.side(side);
        let Some(clk) = own.remaining else {
            return;
        };
        let before = self
            .game
            .presses
            .iter()
            .filter(|p| p.side == side && p.at <= fin.at)
            .map(|p| p.used_after)
            .next_back()
            .unwrap_or(0);
        self.game.clocks.insert(
            fin.ply,
            PlyClock {
                clock: MoveClock {
                    clk,
                    emt: own.used.saturating_sub(before),
                },
                press_at: None,
            },
        );
    }

    /// The game's clock started (`wall_us`): the `Date` tag, unless set.
    pub fn on_started(&mut self, wall_us: i64) {
        if self.game.started_wall.is_none() {
            self.game.started_wall = Some(wall_us);
            self.changed();
        }
    }

    /// A flag fell: `side`'s, at `at`, in `stage` of its `control`. Returns
    /// the Art. 6.4 / 6.9 report when the board can tell (`None`: the
    /// arbiter decides alone); a loss or a draw by Art. 6.9 becomes the
    /// game's result (`Termination "time forfeit"`).
    pub fn on_flag(
        &mut self,
        at: Micros,
        side: Side,
        stage: u32,
        control: &TimeControl,
    ) -> Option<FlagReport> {
        if !(self.board_attached && self.game.on_board && self.in_step && self.next.is_none()) {
            return None;
        }
        let required = control
            .moves_by_end_of(stage)
            .map(|m| u32::try_from(m).unwrap_or(u32::MAX));
        let report = flag_report(&self.position(), side, required, self.side_moves(side));
        self.game.flag_report = Some(report);
        if !self.finished() {
            let result = match report.verdict {
                FlagVerdict::Loss => Some(GameResult::win(side.other())),
                FlagVerdict::Draw => Some(GameResult::Draw),
                FlagVerdict::MovesCompleted | FlagVerdict::GameAlreadyOver => None,
            };
            if let Some(result) = result {
                self.decide(at, result, Termination::TimeForfeit);
                self.act(FollowerAction::Command(EboardCommand::Finish));
            }
        }
        self.changed();
        Some(report)
    }

    /// Time was given back to `side` after its flag: its report, and a
    /// result by time forfeit, are withdrawn.
    pub fn on_flag_withdrawn(&mut self, side: Side) {
        if self.game.flag_report.is_some_and(|r| r.flagged == side) {
            self.game.flag_report = None;
            if self
                .game
                .result
                .is_some_and(|(_, t)| t == Termination::TimeForfeit)
            {
                self.clear_result();
            }
            self.changed();
        }
    }

    fn clear_result(&mut self) {
        self.game.result = None;
        self.game.result_at = None;
        self.game.game_end = None;
        self.next = None;
        self.act(FollowerAction::ResultChanged {
            result: None,
            termination: None,
        });
        if self.board_attached && self.game.on_board {
            let moves = self.game.moves.iter().map(|m| m.uci.clone()).collect();
            self.act(FollowerAction::Command(EboardCommand::Resume {
                moves,
                finished: false,
            }));
        }
        self.changed();
    }

    /// The arbiter's result (a resignation, a draw agreed, a decision), or
    /// `None` to withdraw the result: the clock stops at `at`.
    pub fn set_result(
        &mut self,
        at: Micros,
        result: Option<GameResult>,
        termination: Option<Termination>,
    ) {
        match result {
            Some(result) => {
                let was_finished = self.finished();
                self.decide(at, result, termination.unwrap_or(Termination::Normal));
                if self.board_attached && !was_finished {
                    self.act(FollowerAction::Command(EboardCommand::Finish));
                }
                self.act(FollowerAction::StopClock {
                    at,
                    reason: StopReason::Result,
                });
            }
            None => {
                if self.finished() {
                    self.clear_result();
                }
            }
        }
    }

    // ---- what it knows ----

    /// Half-moves of the current game on the board (tentative included).
    pub fn ply(&self) -> u32 {
        self.game.moves.len() as u32
    }

    /// Moves `side` has made on the board in the current game.
    pub fn side_moves(&self, side: Side) -> u32 {
        side_moves_after(self.ply(), Side::White, side)
    }

    /// The FEN after the last move (`None`: the starting position).
    pub fn fen(&self) -> Option<&str> {
        self.game.moves.last().map(|m| m.fen_after.as_str())
    }

    /// The position on the board.
    pub fn position(&self) -> Chess {
        self.fen()
            .and_then(|fen| position_from_fen(fen).ok())
            .unwrap_or_default()
    }

    /// The moves of the current game.
    pub fn moves(&self) -> &[FollowedMove] {
        &self.game.moves
    }

    /// The last move, while it is still tentative.
    pub fn tentative(&self) -> Option<&FollowedMove> {
        self.game.moves.last().filter(|m| !m.confirmed)
    }

    /// Checkmate or stalemate on the board, if the game ended so.
    pub fn game_end(&self) -> Option<(GameEndReason, Option<Side>)> {
        self.game.game_end
    }

    pub fn result(&self) -> Option<(GameResult, Termination)> {
        self.game.result
    }

    /// The report of the last flag, while not withdrawn.
    pub fn flag_report(&self) -> Option<FlagReport> {
        self.game.flag_report
    }

    /// The board shows its next game's start (or moves) while the clock still
    /// has the finished one.
    pub fn next_game_waiting(&self) -> bool {
        self.next.is_some()
    }

    /// Whether the board follows the current game.
    pub fn on_board(&self) -> bool {
        self.game.on_board
    }
}

fn result_of_signal(signal: super::detect::SignalledResult) -> GameResult {
    match signal {
        super::detect::SignalledResult::WhiteWins => GameResult::WhiteWins,
        super::detect::SignalledResult::BlackWins => GameResult::BlackWins,
        super::detect::SignalledResult::Draw => GameResult::Draw,
    }
}

mod games;
mod record;
pub use record::{check_tag, check_tags};

#[cfg(test)]
mod tests;
