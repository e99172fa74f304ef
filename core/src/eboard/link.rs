//! What passes between a DGT board's shell (the task on its serial port) and
//! the runtime: the board's happenings and the runtime's commands, as plain
//! values. `at` instants are CLOCK_MONOTONIC microseconds.

use std::path::PathBuf;

use super::detect::BoardEvent;
use super::placement::Orientation;
use super::protocol::ClockReading;
use crate::engine::Side;
use crate::time::Micros;

/// From the board task to the runtime. `at` is CLOCK_MONOTONIC µs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EboardEvent {
    /// The board answered after the port was opened.
    Connected {
        path: PathBuf,
        at: Micros,
    },
    /// The board went away (sent once per outage; reconnecting goes on).
    Disconnected {
        path: PathBuf,
        reason: String,
        at: Micros,
    },
    Version {
        main: u8,
        sub: u8,
    },
    SerialNumber(String),
    /// The starting position was seen in this orientation.
    Orientation(Orientation),
    /// What the move detector found (moves, takebacks, reports).
    Board(BoardEvent),
    /// A DGT clock attached to the board showed these times.
    Clock {
        reading: ClockReading,
        at: Micros,
    },
    /// The attached DGT clock's lever changed side.
    ClockPress {
        right_up: bool,
        at: Micros,
    },
}

/// From the runtime to the board task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EboardCommand {
    /// A press of `side` at `at` (a button unit's, or the DGT clock's
    /// lever): confirms `side`'s own tentative move, never the opponent's
    /// ([`super::detect::MoveDetector::clock_pressed`]).
    ClockPressed {
        at: Micros,
        side: Side,
    },
    /// Forget the game and follow the next one from the starting position
    /// (at once when it already stands on the board).
    NewGame,
    /// The game is over (a flag, an arbiter's result): keep it as it is;
    /// the starting position begins the board's next game.
    Finish,
    /// Follow a game already under way (after a daemon restart, or after a
    /// result was withdrawn): these UCI moves from the starting position,
    /// `finished` when the game is over.
    Resume {
        moves: Vec<String>,
        finished: bool,
    },
    Stop,
}
