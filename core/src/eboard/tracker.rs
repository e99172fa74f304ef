//! The runtime's picture of the game on a board, built only from the board
//! task's [`EboardEvent`]s: each side's move count, the current position,
//! and whether the board can be trusted right now. Pure; it turns the Laws
//! helpers into the two calls the runtime needs:
//! [`BoardTracker::adjustment_before_press`] (move count from the board, so a
//! stage's time comes at the real N-th move) and [`BoardTracker::flag_report`]
//! (Art. 6.4 / 6.9 at a flag fall).

use shakmaty::Chess;

use super::detect::{ply_of_side_move, side_moves_after, BoardEvent, GameEndReason};
use super::laws::{flag_report, position_from_fen, FlagReport};
use super::link::EboardEvent;
use super::pgn::{LivePgn, MoveClock, PgnTags};
use crate::engine::{Adjustment, ClockState, Notice, Side};
use crate::timecontrol::TimeControl;

/// What the runtime knows of a board's game.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoardTracker {
    connected: bool,
    started: bool,
    in_step: bool,
    ply: u32,
    /// FEN after the last move (`None`: the starting position).
    fen: Option<String>,
    game_end: Option<(GameEndReason, Option<Side>)>,
    pgn: Option<LivePgn>,
}

impl BoardTracker {
    pub fn new() -> BoardTracker {
        BoardTracker::default()
    }

    /// A tracker that also keeps the game's live PGN.
    pub fn with_pgn(tags: PgnTags) -> BoardTracker {
        BoardTracker {
            pgn: Some(LivePgn::new(tags)),
            ..BoardTracker::default()
        }
    }

    /// The live PGN, when kept ([`BoardTracker::with_pgn`]).
    pub fn pgn(&self) -> Option<&LivePgn> {
        self.pgn.as_ref()
    }

    pub fn pgn_mut(&mut self) -> Option<&mut LivePgn> {
        self.pgn.as_mut()
    }

    /// Follows the engine: a press gives its move's `%clk` (the mover's time
    /// left after the press, increment included) and `%emt`, and both
    /// clocks for the `WhiteClock`/`BlackClock` tags. `state` is the
    /// engine's state right after the input that caused `notice`. Returns
    /// whether the PGN changed (write it out then).
    pub fn on_engine_notice(&mut self, notice: &Notice, state: &ClockState) -> bool {
        let Some(pgn) = self.pgn.as_mut() else {
            return false;
        };
        let Notice::Pressed {
            side,
            move_number,
            used,
        } = *notice
        else {
            return false;
        };
        if let Some(clk) = state.side(side).remaining {
            let ply = ply_of_side_move(Side::White, side, move_number);
            pgn.set_clock(ply, MoveClock { clk, emt: used });
        }
        if let (Some(white), Some(black)) = (state.white.remaining, state.black.remaining) {
            pgn.set_clocks(white, black);
        }
        true
    }

    /// Follows one event of the board task.
    pub fn apply(&mut self, event: &EboardEvent) {
        match event {
            EboardEvent::Connected { .. } => self.connected = true,
            EboardEvent::Disconnected { .. } => self.connected = false,
            EboardEvent::Board(board) => self.apply_board(board),
            _ => {}
        }
    }

    /// Follows one event of the move detector.
    pub fn apply_board(&mut self, event: &BoardEvent) {
        if let Some(pgn) = self.pgn.as_mut() {
            pgn.apply(event);
        }
        match event {
            BoardEvent::StartPosition { .. } => {
                self.started = true;
                self.in_step = true;
                self.ply = 0;
                self.fen = None;
                self.game_end = None;
            }
            BoardEvent::MoveDetected(m) => {
                self.started = true;
                self.in_step = true;
                self.ply = m.ply;
                self.fen = Some(m.fen_after.clone());
                self.game_end = None;
            }
            BoardEvent::TakeBack { to_ply, fen, .. } => {
                self.in_step = true;
                self.ply = *to_ply;
                self.fen = Some(fen.clone());
                self.game_end = None;
            }
            BoardEvent::Unrecognised { .. } => self.in_step = false,
            BoardEvent::Synchronised { .. } => self.in_step = true,
            BoardEvent::GameEnd { reason, winner, .. } => self.game_end = Some((*reason, *winner)),
            BoardEvent::ResultSignal { .. } => {}
        }
    }

    /// Connected, following a game, and its placement fits the game: the
    /// board's move count may replace the presses.
    pub fn usable(&self) -> bool {
        self.connected && self.started && self.in_step
    }

    /// Half-moves on the board (tentative included).
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Moves `side` has made on the board.
    pub fn side_moves(&self, side: Side) -> u32 {
        side_moves_after(self.ply, Side::White, side)
    }

    /// The position on the board.
    pub fn position(&self) -> Chess {
        self.fen
            .as_deref()
            .and_then(|fen| position_from_fen(fen).ok())
            .unwrap_or_default()
    }

    pub fn fen(&self) -> Option<&str> {
        self.fen.as_deref()
    }

    /// Checkmate or stalemate on the board, if the game ended so.
    pub fn game_end(&self) -> Option<(GameEndReason, Option<Side>)> {
        self.game_end
    }

    /// The correction to apply to the engine just before `Press(side)` so
    /// that the press leaves the engine's move count equal to the board's
    /// (a press completes every earlier move, Art. 6.2a). `None` when the
    /// board is not usable or the counts already agree.
    pub fn adjustment_before_press(&self, side: Side, engine_moves: u32) -> Option<Adjustment> {
        let board = self.side_moves(side);
        if !self.usable() || board == 0 || engine_moves.saturating_add(1) == board {
            return None;
        }
        Some(Adjustment {
            side,
            remaining: None,
            moves: Some(board - 1),
            stage: None,
        })
    }

    /// Art. 6.4 / 6.9 for `side`'s flag, fallen in `stage` of `control`;
    /// `None` when the board is not usable (the arbiter decides alone).
    pub fn flag_report(&self, side: Side, control: &TimeControl, stage: u32) -> Option<FlagReport> {
        if !(self.started && self.in_step) {
            return None;
        }
        let required = control
            .moves_by_end_of(stage)
            .map(|m| u32::try_from(m).unwrap_or(u32::MAX));
        Some(flag_report(
            &self.position(),
            side,
            required,
            self.side_moves(side),
        ))
    }
}
