//! A board's record as the hub reads it back: the daemon's `History()`
//! (fetched page by page over the hall's MQTT `history` command) folded
//! through the pure core, for the board's page, its chart and its time
//! machine.
//!
//! Promises:
//! * the record's rows are folded exactly as a daemon rebuilds a game at a
//!   restart (`chessclock_core::board::game::Game`: each engine input
//!   placed at its own instant, a late press in its place, an undone press
//!   taken out, a relative correction applied again to the clock as it
//!   then stands); the state at any instant ([`Record::at`]) is the
//!   engine's (`chessclock_core::engine::Engine`) over the placed inputs up
//!   to that instant, never an interpolation between rows;
//! * [`Record::replay_lines`] are the same placed inputs in the format of
//!   `chessclockctl replay` (`docs/replay-format.md`): an appeals committee
//!   can run the engine on them itself. The format counts whole
//!   milliseconds; an instant of the record that is not a whole
//!   millisecond is written rounded down;
//! * the position at an instant is the FEN of the last e-board row
//!   (`board-move`, `board-take-back`) at or before it; before the first
//!   e-board move, the standard starting position; `None` for a game
//!   without e-board rows;
//! * nothing here panics on what a daemon sends: a control the core cannot
//!   read (a preset name of the daemon's configuration) is an error in
//!   words.

use chessclock_core::board::game::Game;
use chessclock_core::clocktext::{self, Style};
use chessclock_core::engine::report::{ceil_ms, floor_ms, StateReport};
use chessclock_core::engine::{ClockState, Engine, Input, MatchControl, Settings, Side};
use chessclock_core::journal::StoredEvent;
use chessclock_core::time::{Micros, MS};
use chessclock_core::views::{HistoryRow, HistoryView};
use serde_json::{json, Value};

/// The position the first e-board move is made from.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A board's game, folded.
#[derive(Clone, Debug)]
pub struct Record {
    pub view: HistoryView,
    pub control: MatchControl,
    pub settings: Settings,
    /// The engine inputs in their places: instant, input.
    pub inputs: Vec<(Micros, Input)>,
    style: Style,
}

impl Record {
    /// The record of `view` (the daemon's `History()`).
    pub fn new(view: HistoryView) -> Result<Record, String> {
        let text = view.header.control.trim();
        let control = chessclock_core::timecontrol::parse(text).map_err(|error| {
            format!(
                "the game's control `{text}` is not a notation the hub reads ({error}): \
                 a preset of the daemon's configuration; read the record with \
                 `chessclockctl history`"
            )
        })?;
        let control = MatchControl::same(control);
        let settings = view.header.settings;
        let mut game = Game::new(control.clone(), settings);
        for (index, row) in view.events.iter().enumerate() {
            if let StoredEvent::PressUndone { side, press_at_us } = row.event {
                // As a restart does; an undo of a press the game does not
                // have changes nothing there either.
                let _ = game.remove(press_at_us, Input::Press(side));
            }
            if let Some(input) = row.event.input() {
                // A row the engine refuses was refused by the daemon too
                // (it logged it): the game goes on without it.
                let _ = game.apply_placed(row.t_us, input, index as u64, row.event.relative_by());
            }
        }
        let inputs = game.inputs().iter().map(|p| (p.t, p.input)).collect();
        let style = view.header.style();
        Ok(Record {
            view,
            control,
            settings,
            inputs,
            style,
        })
    }

    pub fn rows(&self) -> &[HistoryRow] {
        &self.view.events
    }

    /// How the board's displays write a clock.
    pub fn style(&self) -> Style {
        self.style
    }

    /// The engine after every input at or before `t`.
    pub fn engine_at(&self, t: Micros) -> Engine {
        let mut engine = Engine::new(self.control.clone(), self.settings);
        for &(at, input) in self.inputs.iter().take_while(|(at, _)| *at <= t) {
            // Refused once in the fold, refused (and skipped) again.
            let _ = engine.apply(at, input);
        }
        engine
    }

    /// The clocks at game time `t`.
    pub fn state(&self, t: Micros) -> ClockState {
        self.engine_at(t).state(t)
    }

    /// The last instant of the record: its last row, or a flag that fell
    /// after it on a clock left running, whichever is later.
    pub fn end(&self) -> Micros {
        let last = self.rows().iter().map(|r| r.t_us).max().unwrap_or(0).max(0);
        let state = self.state(last);
        let flags = [state.white.flag_at, state.black.flag_at];
        flags.into_iter().flatten().fold(last, Micros::max)
    }

    /// Wall-clock µs of game time `t`: from the last row at or before it
    /// (a restart's down time lies between rows), else from the game's
    /// creation.
    pub fn wall_of(&self, t: Micros) -> i64 {
        self.rows()
            .iter()
            .filter(|r| r.t_us <= t)
            .max_by_key(|r| (r.t_us, r.wall_us))
            .map_or(self.view.header.created_wall_us.saturating_add(t), |r| {
                r.wall_us.saturating_add(t - r.t_us)
            })
    }

    /// Game time of wall-clock µs `wall`: from the last row at or before
    /// it, held at the next row's instant (time the clock did not run:
    /// a daemon down); before the first row, from the game's creation.
    pub fn game_of_wall(&self, wall: i64) -> Micros {
        let mut rows: Vec<(i64, Micros)> =
            self.rows().iter().map(|r| (r.wall_us, r.t_us)).collect();
        rows.sort_unstable();
        match rows.iter().rposition(|(w, _)| *w <= wall) {
            None => wall
                .saturating_sub(self.view.header.created_wall_us)
                .clamp(0, rows.first().map_or(Micros::MAX, |r| r.1.max(0))),
            Some(index) => {
                let (w, t) = rows[index];
                let t = t.saturating_add(wall - w);
                match rows.get(index + 1) {
                    Some(&(_, next)) => t.min(next.max(rows[index].1)),
                    None => t,
                }
            }
        }
    }

    /// The position at game time `t` (see the module's promises).
    pub fn fen_at(&self, t: Micros) -> Option<String> {
        let mut fen = None;
        let mut seen = false;
        for row in self.rows() {
            match &row.event {
                StoredEvent::BoardMove { fen_after, .. } => {
                    seen = true;
                    if row.t_us <= t {
                        fen = Some(fen_after.clone());
                    }
                }
                StoredEvent::BoardTakeBack { fen: back, .. } => {
                    seen = true;
                    if row.t_us <= t {
                        fen = Some(back.clone());
                    }
                }
                _ => {}
            }
        }
        seen.then(|| fen.unwrap_or_else(|| START_FEN.to_owned()))
    }

    /// The time machine's answer at game time `t`: both clocks, the running
    /// side, the moves, the position, the record's last row at or before
    /// it, and `report`, the line `chessclockctl replay` prints for a
    /// `state` at that instant.
    pub fn at(&self, t: Micros) -> Value {
        let t = t.max(0);
        let state = self.state(t);
        let report = StateReport::new(&state, &self.control);
        let side = |s: Side| {
            let own = state.side(s);
            json!({
                "remaining_ms": own.remaining.map(ceil_ms),
                "text": own.remaining.map_or_else(
                    || clocktext::elapsed(own.used, self.style),
                    |r| clocktext::remaining(r, self.style)),
                "moves": own.moves,
                "stage": own.stage,
                "flag_ms": own.flag_at.map(floor_ms),
            })
        };
        let row = self
            .rows()
            .iter()
            .enumerate()
            .filter(|(_, r)| r.t_us <= t)
            .max_by_key(|(index, r)| (r.t_us, *index))
            .map(|(index, _)| index + 1);
        json!({
            "ok": true,
            "t_ms": floor_ms(t),
            "game_time": game_time(t),
            "wall_ms": floor_ms(self.wall_of(t)),
            "started": state.started,
            "running": state.running,
            "paused": state.paused,
            "flags": state.flags,
            "white": side(Side::White),
            "black": side(Side::Black),
            "move": state.white.moves.max(state.black.moves + 1),
            "fen": self.fen_at(t),
            "row": row,
            "report": serde_json::to_value(&report).unwrap_or(Value::Null),
        })
    }

    /// The placed inputs as `chessclockctl replay` input lines (the setup
    /// line first).
    pub fn replay_lines(&self) -> Vec<String> {
        let mut lines = vec![json!({
            "control": self.view.header.control.trim(),
            "stage_advance": self.settings.stage_advance,
            "credit": self.settings.credit,
        })
        .to_string()];
        if let Some(freeze) = self.settings.freeze {
            if let Some(first) = lines.first_mut() {
                let mut setup: Value = serde_json::from_str(first).unwrap_or(Value::Null);
                setup["freeze"] = json!(freeze);
                *first = setup.to_string();
            }
        }
        for &(t, input) in &self.inputs {
            let t = floor_ms(t);
            let line = match input {
                Input::Start => json!({"t": t, "do": "start"}),
                Input::Press(side) => json!({"t": t, "do": "press", "side": side}),
                Input::Pause => json!({"t": t, "do": "pause"}),
                Input::Resume => json!({"t": t, "do": "resume"}),
                Input::Adjust(a) => {
                    let mut line = json!({"t": t, "do": "adjust", "side": a.side});
                    if let Some(remaining) = a.remaining {
                        line["remaining_ms"] = json!(floor_ms(remaining));
                    }
                    if let Some(moves) = a.moves {
                        line["moves"] = json!(moves);
                    }
                    if let Some(stage) = a.stage {
                        line["stage"] = json!(stage);
                    }
                    line
                }
                Input::Elapsed => continue,
            };
            lines.push(line.to_string());
        }
        lines
    }

    /// The moves: per move number, each side's SAN (from the e-board's
    /// rows, if any), its `%clk` (the clock after the press, as the PGN
    /// writes it) and the time it took.
    pub fn moves(&self) -> Vec<Value> {
        let mut moves: Vec<Value> = Vec::new();
        for row in self.rows() {
            let (Some(number), StoredEvent::Press { side }) = (row.move_number, &row.event) else {
                continue;
            };
            let clock = match side {
                Side::White => row.white_remaining_ms,
                Side::Black => row.black_remaining_ms,
            };
            let san = self.rows().iter().rev().find_map(|r| match &r.event {
                StoredEvent::BoardMove {
                    side: s,
                    side_moves,
                    san,
                    ..
                } if s == side && *side_moves == number => Some(san.clone()),
                _ => None,
            });
            let entry = json!({
                "san": san,
                "clk": clock.map(|ms| clocktext::remaining_ms(ms, Style::PGN)),
                "clk_ms": clock,
                "used_ms": row.move_used_ms,
                "used": row.move_used_ms.map(|ms| clocktext::exact(ms.saturating_mul(MS))),
                "t_ms": row.t_ms,
            });
            let index = (number as usize).saturating_sub(1);
            while moves.len() <= index {
                moves.push(json!({"number": moves.len() + 1, "white": null, "black": null}));
            }
            moves[index][side.as_str()] = entry;
        }
        moves
    }

    /// The appeal record: every row, as the history table shows it.
    pub fn table(&self) -> Vec<Value> {
        self.rows()
            .iter()
            .enumerate()
            .map(|(index, row)| {
                let who = row
                    .caller_name
                    .clone()
                    .or_else(|| row.caller_uid.map(|uid| format!("uid {uid}")))
                    .or_else(|| row.device.as_ref().map(|d| format!("device {}", d.serial)))
                    .unwrap_or_else(|| "chessclockd".to_owned());
                let clock = |ms: Option<i64>| ms.map(|ms| clocktext::remaining_ms(ms, self.style));
                json!({
                    "seq": index + 1,
                    "kind": row.event.kind(),
                    "t_ms": row.t_ms,
                    "game_time": game_time(row.t_us),
                    "wall_ms": row.wall_us.div_euclid(1000),
                    "side": row.event.side(),
                    "move_number": row.move_number,
                    "used_ms": row.move_used_ms,
                    "white": clock(row.white_remaining_ms),
                    "black": clock(row.black_remaining_ms),
                    "who": who,
                    "what": row.outcome.join("; "),
                    "reason": row.ignored.map(|r| r.as_str()),
                })
            })
            .collect()
    }
}

/// Game time as `H:MM:SS.mmm` (rounded down to the millisecond, as the
/// record's game time).
pub fn game_time(t: Micros) -> String {
    let ms = t.max(0) / 1000;
    let seconds = ms / 1000;
    format!(
        "{}:{:02}:{:02}.{:03}",
        seconds / 3600,
        (seconds / 60) % 60,
        seconds % 60,
        ms % 1000
    )
}
