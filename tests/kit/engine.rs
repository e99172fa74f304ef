//! A small transcript language for engine tests: times in milliseconds, as
//! an arbiter would read them off the clock.

use chessclockd::engine::{
    Adjustment, ClockState, Credit, Engine, Input, MatchControl, Micros, Notice, Settings, Side,
    StageAdvance, MS,
};
use chessclockd::timecontrol::parse;

// Used by the engine tests only; the kit is in every test file.
#[allow(unused_imports)]
pub use chessclockd::engine::Side::{Black, White};

pub struct Game {
    pub engine: Engine,
}

pub fn game(control: &str) -> Game {
    game_with(control, Settings::default())
}

pub fn game_with(control: &str, settings: Settings) -> Game {
    Game {
        engine: Engine::new(MatchControl::same(parse(control).unwrap()), settings),
    }
}

pub fn per_side(white: &str, black: &str) -> Game {
    Game {
        engine: Engine::new(
            MatchControl {
                white: parse(white).unwrap(),
                black: parse(black).unwrap(),
            },
            Settings::default(),
        ),
    }
}

pub fn after_move() -> Settings {
    Settings {
        credit: Credit::AfterMove,
        ..Settings::default()
    }
}

pub fn by_flag() -> Settings {
    Settings {
        stage_advance: StageAdvance::Flag,
        ..Settings::default()
    }
}

pub fn freeze(freeze: bool) -> Settings {
    Settings {
        freeze: Some(freeze),
        ..Settings::default()
    }
}

pub fn ms(ms: i64) -> Micros {
    ms * MS
}

/// `m:ss` on the clock, in ms.
pub fn clock(minutes: i64, seconds: i64) -> Option<Micros> {
    Some((minutes * 60 + seconds) * 1_000 * MS)
}

impl Game {
    pub fn apply(&mut self, at_ms: i64, input: Input) -> Vec<Notice> {
        self.engine.apply(ms(at_ms), input).unwrap()
    }
    pub fn start(&mut self, at_ms: i64) -> Vec<Notice> {
        self.apply(at_ms, Input::Start)
    }
    pub fn press(&mut self, at_ms: i64, side: Side) -> Vec<Notice> {
        self.apply(at_ms, Input::Press(side))
    }
    pub fn pause(&mut self, at_ms: i64) -> Vec<Notice> {
        self.apply(at_ms, Input::Pause)
    }
    pub fn resume(&mut self, at_ms: i64) -> Vec<Notice> {
        self.apply(at_ms, Input::Resume)
    }
    pub fn adjust(
        &mut self,
        at_ms: i64,
        side: Side,
        remaining_ms: Option<i64>,
        moves: Option<u32>,
        stage: Option<u32>,
    ) -> Vec<Notice> {
        self.apply(
            at_ms,
            Input::Adjust(Adjustment {
                side,
                remaining: remaining_ms.map(ms),
                moves,
                stage,
            }),
        )
    }
    pub fn state(&self, at_ms: i64) -> ClockState {
        self.engine.state(ms(at_ms))
    }
    pub fn remaining(&self, at_ms: i64, side: Side) -> Option<Micros> {
        self.state(at_ms).side(side).remaining
    }
    /// Both sides' remaining time, in ms.
    pub fn clocks_ms(&self, at_ms: i64) -> (Option<i64>, Option<i64>) {
        let state = self.state(at_ms);
        (
            state.white.remaining.map(|r| r / MS),
            state.black.remaining.map(|r| r / MS),
        )
    }
    /// Plays alternate moves, each taking `each_ms`, starting with `first`.
    pub fn moves(&mut self, mut at_ms: i64, first: Side, count: u32, each_ms: i64) -> i64 {
        let mut side = first;
        for _ in 0..count {
            at_ms += each_ms;
            self.press(at_ms, side);
            side = side.other();
        }
        at_ms
    }
}
