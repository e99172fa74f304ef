//! Move detection: from a stream of board placements to the moves played,
//! following the algorithm of `docs/dgt-protocol.md`.
//!
//! Promises:
//! * pure: no I/O, no clock; every call takes the instant `now`
//!   ([`Micros`], monotonic base chosen by the caller);
//! * a move is first *tentative* (pieces are often put down on an
//!   intermediate square: d2-d3-d4, a rook sliding a1-d1-e1-f1) and becomes
//!   *confirmed* on a clock press **of the side that made it**
//!   ([`MoveDetector::clock_pressed`]), when the next move is detected, or
//!   after [`DetectorConfig::confirm_after`] without a change of placement
//!   ([`MoveDetector::tick`]). Until then a placement that fits another legal
//!   move from the position *before* it replaces it. A press never confirms
//!   the opponent's tentative move: the press of the side that just moved
//!   often lands a few milliseconds after the opponent's first placement,
//!   which may be a stop on the way (2...d6 on the way to d5);
//! * in-between placements (a piece in the air, a captured piece lifted
//!   first, castling or en passant half done) fit nothing and are ignored;
//! * takebacks are looked for only when no forward move fits, comparing with
//!   earlier positions newest first;
//! * a two-move-deep search runs only on a placement that stayed unchanged
//!   for `confirm_after`, never on a passing one;
//! * a stable placement that fits nothing is reported
//!   ([`BoardEvent::Unrecognised`]) for the arbiter, never guessed;
//! * both kings on the centre squares (or a "magic" result piece) is the
//!   result signal, never a move;
//! * a game ends on the board (checkmate or stalemate confirmed, the result
//!   signal) or when the shell says so ([`MoveDetector::finish`]: a flag, an
//!   arbiter's result). A finished game is kept as it was: no move, no
//!   takeback, no report follows; the starting position standing complete
//!   after it begins the board's next game ([`BoardEvent::StartPosition`]);
//! * [`MoveDetector::new_game`] forgets the game and follows the next one
//!   from the starting position, at once when it already stands.

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{Board, Chess, EnPassantMode, Move, Position, Square};

use super::laws::game_end;
pub use super::laws::{side_of, GameEndReason};
use super::placement::Placement;
use super::protocol::piece;
use crate::engine::{Micros, Side};

/// Timing of the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DetectorConfig {
    /// A tentative move is confirmed after this long without a change; a
    /// placement unchanged this long is "stable" (two-move search, report).
    pub confirm_after: Micros,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            confirm_after: 1_500_000,
        }
    }
}

/// Whether a detected move may still be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MoveStatus {
    Tentative,
    Confirmed,
}

/// A move found on the board.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DetectedMove {
    /// Half-move number, 1 = White's first move.
    pub ply: u32,
    pub side: Side,
    /// Moves `side` has made in this game, this one included (its 40th move
    /// has 40): what the engine's move count for `side` should be once the
    /// move is completed.
    pub side_moves: u32,
    /// SAN with check and mate marks (`Nf3`, `O-O`, `exd6`, `e8=Q+`).
    pub san: String,
    /// UCI (`g1f3`, castling as the king's move `e1g1`, `e7e8q`).
    pub uci: String,
    /// The FEN of the position after the move.
    pub fen_after: String,
    pub status: MoveStatus,
    /// The instant of the placement that showed the move.
    pub at: Micros,
}

/// The result signalled on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignalledResult {
    WhiteWins,
    BlackWins,
    Draw,
}

impl SignalledResult {
    pub fn pgn(self) -> &'static str {
        match self {
            SignalledResult::WhiteWins => "1-0",
            SignalledResult::BlackWins => "0-1",
            SignalledResult::Draw => "1/2-1/2",
        }
    }
}

/// What the detector reports (serialises as `{"event": "move-detected", ...}`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum BoardEvent {
    /// The starting position stands on the board: a game can be followed
    /// (the first one, the one after [`MoveDetector::new_game`], or the
    /// board's next game after a finished one).
    StartPosition { at: Micros },
    /// A move, tentative or confirmed. A tentative move with the same `ply`
    /// as an earlier one replaces it; a confirmed one fixes it.
    MoveDetected(DetectedMove),
    /// Moves were taken back: the game now has `to_ply` half-moves.
    TakeBack {
        to_ply: u32,
        fen: String,
        at: Micros,
    },
    /// A stable placement fits no legal move (nor a takeback): the arbiter
    /// must look. `placement_fen` is the board part of a FEN.
    Unrecognised {
        placement_fen: String,
        ply: u32,
        at: Micros,
    },
    /// After [`BoardEvent::Unrecognised`], the board shows the game's
    /// position again.
    Synchronised { ply: u32, at: Micros },
    /// Both kings on the centre squares (or a magic result piece).
    ResultSignal { result: SignalledResult, at: Micros },
    /// Checkmate or stalemate on the board, after a confirmed move. `at` is
    /// the instant the final placement appeared (when the game ended), not
    /// the confirmation.
    GameEnd {
        reason: GameEndReason,
        winner: Option<Side>,
        ply: u32,
        at: Micros,
    },
}

#[derive(Clone, Debug)]
struct Played {
    mv: Move,
    after: Chess,
}

/// The move detector of one board. See the module docs.
#[derive(Clone, Debug)]
pub struct MoveDetector {
    config: DetectorConfig,
    start: Option<Chess>,
    moves: Vec<Played>,
    /// Set while the last move is tentative: when it was detected.
    tentative_since: Option<Micros>,
    placement: Option<Placement>,
    last_change: Micros,
    stable_handled: bool,
    out_of_sync: bool,
    signal_shown: bool,
    /// The game is over: the board is watched only for the next start.
    finished: bool,
}

/// A move list could not be applied (resuming a game).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    #[error("bad FEN `{fen}`: {message}")]
    Fen { fen: String, message: String },
    #[error("move {ply} `{uci}` is not legal in that position")]
    IllegalMove { ply: usize, uci: String },
}

fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

impl MoveDetector {
    /// A detector waiting for the standard starting position.
    pub fn new(config: DetectorConfig) -> MoveDetector {
        MoveDetector {
            config,
            start: None,
            moves: Vec::new(),
            tentative_since: None,
            placement: None,
            last_change: 0,
            stable_handled: true,
            out_of_sync: false,
            signal_shown: false,
            finished: false,
        }
    }

    /// A detector following a game already under way (e.g. after a daemon
    /// restart): from `start_fen` (`None`: the standard position) with these
    /// UCI moves played, all confirmed.
    pub fn resume(
        config: DetectorConfig,
        start_fen: Option<&str>,
        uci_moves: &[&str],
    ) -> Result<MoveDetector, ResumeError> {
        let start: Chess = match start_fen {
            None => Chess::default(),
            Some(text) => {
                let fen_error = |message: String| ResumeError::Fen {
                    fen: text.to_owned(),
                    message,
                };
                let fen: Fen = text.parse().map_err(|e| fen_error(format!("{e}")))?;
                fen.into_position(shakmaty::CastlingMode::Standard)
                    .map_err(|e| fen_error(format!("{e}")))?
            }
        };
        let mut detector = MoveDetector::new(config);
        let mut pos = start.clone();
        for (i, text) in uci_moves.iter().enumerate() {
            let illegal = || ResumeError::IllegalMove {
                ply: i + 1,
                uci: (*text).to_owned(),
            };
            let uci: UciMove = text.parse().map_err(|_| illegal())?;
            let mv = uci.to_move(&pos).map_err(|_| illegal())?;
            pos.play_unchecked(mv);
            detector.moves.push(Played {
                mv,
                after: pos.clone(),
            });
        }
        detector.start = Some(start);
        Ok(detector)
    }

    /// True once the starting position (or a resumed game) is known.
    pub fn started(&self) -> bool {
        self.start.is_some()
    }

    /// Whether the game is over (see [`MoveDetector::finish`]).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The placement last read (canonical orientation).
    pub fn last_placement(&self) -> Option<Placement> {
        self.placement
    }

    /// Takes over the placement a previous detector last read (after a
    /// resume in a running shell), without judging it: the next change is
    /// compared with the resumed game.
    pub fn adopt_placement(&mut self, placement: Option<Placement>, now: Micros) {
        self.placement = placement;
        self.last_change = now;
        self.stable_handled = true;
    }

    /// The game is over (a flag, an arbiter's result): a tentative move is
    /// confirmed, nothing else is followed, and the starting position (at
    /// once if it already stands) begins the next game.
    pub fn finish(&mut self, now: Micros) -> Vec<BoardEvent> {
        let mut out = Vec::new();
        self.confirm(now, &mut out);
        self.finished = true;
        self.out_of_sync = false;
        if self.placement == Some(Placement::START) {
            self.begin(now, &mut out);
        }
        out
    }

    /// Forgets the game and waits for the starting position; when it already
    /// stands, the new game begins at once (`StartPosition` at `now`).
    pub fn new_game(&mut self, now: Micros) -> Vec<BoardEvent> {
        let placement = self.placement;
        *self = MoveDetector::new(self.config);
        self.placement = placement;
        self.last_change = now;
        let mut out = Vec::new();
        if placement == Some(Placement::START) {
            self.begin(now, &mut out);
        }
        out
    }

    fn begin(&mut self, now: Micros, out: &mut Vec<BoardEvent>) {
        self.start = Some(Chess::default());
        self.moves.clear();
        self.tentative_since = None;
        self.stable_handled = true;
        self.out_of_sync = false;
        self.finished = false;
        out.push(BoardEvent::StartPosition { at: now });
    }

    /// The position after every detected move (tentative included).
    pub fn position(&self) -> Chess {
        self.position_at(self.moves.len())
    }

    fn position_at(&self, ply: usize) -> Chess {
        if ply == 0 {
            self.start.clone().unwrap_or_default()
        } else {
            self.moves[ply - 1].after.clone()
        }
    }

    /// Half-moves detected (tentative included).
    pub fn ply(&self) -> u32 {
        self.moves.len() as u32
    }

    /// Whether the last move is still tentative.
    pub fn last_is_tentative(&self) -> bool {
        self.tentative_since.is_some()
    }

    /// Moves `side` has played on the board (tentative included): the move
    /// count the engine should use when the board counts moves.
    pub fn moves_by(&self, side: Side) -> u32 {
        self.moves_by_after(side, self.moves.len())
    }

    fn moves_by_after(&self, side: Side, ply: usize) -> u32 {
        let start_turn = self
            .start
            .as_ref()
            .map(|s| side_of(s.turn()))
            .unwrap_or(Side::White);
        side_moves_after(ply as u32, start_turn, side)
    }

    /// The game's moves so far, oldest first.
    pub fn moves(&self) -> Vec<DetectedMove> {
        (1..=self.moves.len())
            .map(|ply| {
                let status = if ply == self.moves.len() && self.tentative_since.is_some() {
                    MoveStatus::Tentative
                } else {
                    MoveStatus::Confirmed
                };
                self.describe(ply, status, self.last_change)
            })
            .collect()
    }

    /// When [`MoveDetector::tick`] next has something to do.
    pub fn next_deadline(&self) -> Option<Micros> {
        let pending = self.tentative_since.is_some() || !self.stable_handled;
        pending.then(|| self.last_change.saturating_add(self.config.confirm_after))
    }

    fn describe(&self, ply: usize, status: MoveStatus, at: Micros) -> DetectedMove {
        let before = self.position_at(ply - 1);
        let played = &self.moves[ply - 1];
        let side = side_of(before.turn());
        DetectedMove {
            ply: ply as u32,
            side,
            side_moves: self.moves_by_after(side, ply),
            san: SanPlus::from_move(before, played.mv).to_string(),
            uci: UciMove::from_standard(played.mv).to_string(),
            fen_after: fen_of(&played.after),
            status,
            at,
        }
    }

    /// A clock press of `side`: confirms `side`'s own tentative move, and
    /// only that. A tentative move of the other side stays tentative (a
    /// placement on the way may still be replaced): it is confirmed by its
    /// own side's press, by the next move, or by the board staying unchanged
    /// for `confirm_after`.
    pub fn clock_pressed(&mut self, now: Micros, side: Side) -> Vec<BoardEvent> {
        let mut out = Vec::new();
        if self.tentative_side() == Some(side) {
            self.confirm(now, &mut out);
        }
        out
    }

    /// A lever change of the DGT clock whose side is not known: confirms the
    /// tentative move, whichever side made it. Only for offline decoding of
    /// a capture, which does not record which lever is whose; the daemon
    /// always knows the side and uses [`MoveDetector::clock_pressed`].
    pub fn lever_changed_side_unknown(&mut self, now: Micros) -> Vec<BoardEvent> {
        let mut out = Vec::new();
        self.confirm(now, &mut out);
        out
    }

    /// The side whose move is tentative, if one is.
    fn tentative_side(&self) -> Option<Side> {
        self.tentative_since?;
        let before = self.position_at(self.moves.len().checked_sub(1)?);
        Some(side_of(before.turn()))
    }

    /// The passing of time: confirms a tentative move and handles a stable
    /// placement once it has been unchanged for `confirm_after`.
    pub fn tick(&mut self, now: Micros) -> Vec<BoardEvent> {
        let mut out = Vec::new();
        if now.saturating_sub(self.last_change) < self.config.confirm_after {
            return out;
        }
        self.confirm(now, &mut out);
        if !self.stable_handled {
            self.stable_handled = true;
            self.on_stable(now, &mut out);
        }
        out
    }

    /// A new placement (canonical orientation) read from the board at `now`.
    pub fn placement(&mut self, now: Micros, placement: &Placement) -> Vec<BoardEvent> {
        let mut out = Vec::new();
        if self.placement.as_ref() == Some(placement) {
            return out;
        }
        self.placement = Some(*placement);
        self.last_change = now;
        self.stable_handled = false;

        if let Some(result) = result_signal(placement) {
            if !self.signal_shown && !self.finished {
                self.signal_shown = true;
                // The signal ends the game: a tentative move stands.
                self.confirm(now, &mut out);
                self.finished = true;
                self.out_of_sync = false;
                out.push(BoardEvent::ResultSignal { result, at: now });
            }
            return out;
        }
        self.signal_shown = false;

        if self.start.is_none() || self.finished {
            if *placement == Placement::START {
                self.begin(now, &mut out);
            } else {
                self.stable_handled = true;
            }
            return out;
        }
        let Some(board) = placement.to_board() else {
            return out;
        };

        let current = self.position();
        if *current.board() == board {
            self.stable_handled = true;
            self.resynchronised(now, &mut out);
            return out;
        }

        // A better explanation of the tentative move from the position before it.
        if self.tentative_since.is_some() {
            let ply = self.moves.len();
            let before = self.position_at(ply - 1);
            let replaced = self.moves[ply - 1].mv;
            if let Some((mv, after)) = find_move(&before, &board, Some(replaced)) {
                self.moves[ply - 1] = Played { mv, after };
                self.tentative_since = Some(now);
                self.stable_handled = true;
                self.resynchronised(now, &mut out);
                out.push(BoardEvent::MoveDetected(self.describe(
                    ply,
                    MoveStatus::Tentative,
                    now,
                )));
                return out;
            }
        }

        if let Some((mv, after)) = find_move(&current, &board, None) {
            self.confirm(now, &mut out);
            self.push_tentative(now, mv, after, &mut out);
            return out;
        }

        // Takebacks only when no forward move fits: newest position first.
        for ply in (0..self.moves.len()).rev() {
            if *self.position_at(ply).board() == board {
                self.moves.truncate(ply);
                self.tentative_since = None;
                self.stable_handled = true;
                self.resynchronised(now, &mut out);
                out.push(BoardEvent::TakeBack {
                    to_ply: ply as u32,
                    fen: fen_of(&self.position()),
                    at: now,
                });
                return out;
            }
        }
        out
    }

    fn resynchronised(&mut self, now: Micros, out: &mut Vec<BoardEvent>) {
        if self.out_of_sync {
            self.out_of_sync = false;
            out.push(BoardEvent::Synchronised {
                ply: self.ply(),
                at: now,
            });
        }
    }

    fn push_tentative(&mut self, now: Micros, mv: Move, after: Chess, out: &mut Vec<BoardEvent>) {
        self.resynchronised(now, out);
        self.moves.push(Played { mv, after });
        self.tentative_since = Some(now);
        self.stable_handled = true;
        out.push(BoardEvent::MoveDetected(self.describe(
            self.moves.len(),
            MoveStatus::Tentative,
            now,
        )));
    }

    fn confirm(&mut self, _now: Micros, out: &mut Vec<BoardEvent>) {
        let Some(since) = self.tentative_since.take() else {
            return;
        };
        let ply = self.moves.len();
        out.push(BoardEvent::MoveDetected(self.describe(
            ply,
            MoveStatus::Confirmed,
            since,
        )));
        if let Some((reason, winner)) = game_end(&self.moves[ply - 1].after) {
            self.finished = true;
            out.push(BoardEvent::GameEnd {
                reason,
                winner,
                ply: ply as u32,
                at: since,
            });
        }
    }

    fn on_stable(&mut self, now: Micros, out: &mut Vec<BoardEvent>) {
        let (Some(placement), true) = (self.placement, self.start.is_some()) else {
            return;
        };
        if self.finished {
            return;
        }
        if result_signal(&placement).is_some() {
            return;
        }
        let Some(board) = placement.to_board() else {
            return;
        };
        let current = self.position();
        if *current.board() == board {
            return;
        }
        // Two moves deep, only now that the placement is stable.
        for first in current.legal_moves() {
            let mut middle = current.clone();
            middle.play_unchecked(first);
            if let Some((second, after)) = find_move(&middle, &board, None) {
                self.confirm(now, out);
                self.push_tentative(now, first, middle, out);
                self.confirm(now, out);
                self.push_tentative(now, second, after, out);
                return;
            }
        }
        if !self.out_of_sync {
            self.out_of_sync = true;
            out.push(BoardEvent::Unrecognised {
                placement_fen: placement.board_fen(),
                ply: self.ply(),
                at: now,
            });
        }
    }
}

/// Moves `side` has made after `ply` half-moves of a game whose first move
/// was `first_mover`'s (White's from the standard starting position).
pub fn side_moves_after(ply: u32, first_mover: Side, side: Side) -> u32 {
    if side == first_mover {
        ply.div_ceil(2)
    } else {
        ply / 2
    }
}

/// The ply (1-based half-move number) of `side`'s `n`-th move (n >= 1) in a
/// game whose first move was `first_mover`'s: White's 40th move from the
/// standard start is ply 79, Black's is ply 80.
pub fn ply_of_side_move(first_mover: Side, side: Side, n: u32) -> u32 {
    let n = n.max(1);
    if side == first_mover {
        2 * n - 1
    } else {
        2 * n
    }
}

/// The legal move from `pos` whose resulting board is `board` (different
/// legal moves give different boards, promotions included).
fn find_move(pos: &Chess, board: &Board, except: Option<Move>) -> Option<(Move, Chess)> {
    pos.legal_moves()
        .into_iter()
        .filter(|&mv| Some(mv) != except)
        .find_map(|mv| {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            (after.board() == board).then_some((mv, after))
        })
}

/// The result signal shown by `placement`, if any: both kings (and only
/// them among the kings) on d4, e4, d5, e5 — both on the light squares e4
/// and d5: White wins; both on the dark squares d4 and e5: Black wins; one
/// of each: a draw (DGT's convention). A magic result piece signals too.
pub fn result_signal(placement: &Placement) -> Option<SignalledResult> {
    match placement.magic_piece() {
        Some(piece::MAGIC_DRAW) => return Some(SignalledResult::Draw),
        Some(piece::MAGIC_WHITE_WINS) => return Some(SignalledResult::WhiteWins),
        Some(piece::MAGIC_BLACK_WINS) => return Some(SignalledResult::BlackWins),
        _ => {}
    }
    let squares_of = |code: u8| -> Vec<Square> {
        (0..64)
            .filter(|&i| placement.0[i] == code)
            .map(super::placement::square_of)
            .collect()
    };
    let (white, black) = (squares_of(piece::WKING), squares_of(piece::BKING));
    let ([w], [b]) = (white.as_slice(), black.as_slice()) else {
        return None;
    };
    let centre = [Square::D4, Square::E4, Square::D5, Square::E5];
    if !centre.contains(w) || !centre.contains(b) {
        return None;
    }
    Some(match (w.is_light(), b.is_light()) {
        (true, true) => SignalledResult::WhiteWins,
        (false, false) => SignalledResult::BlackWins,
        _ => SignalledResult::Draw,
    })
}

#[cfg(test)]
mod tests;
