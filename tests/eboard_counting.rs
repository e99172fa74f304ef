//! The board counts the moves (issue 7, "Counting and the Laws"): with the
//! real timing engine, a forgotten press no longer shifts the stage change,
//! the flag report uses the board's count, and the live PGN gets the clock
//! times of the presses. The detector is fed whole placements (the hand's
//! details are covered by its unit tests and the PTY tests).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclockd::eboard::detect::{BoardEvent, DetectorConfig, MoveDetector};
use chessclockd::eboard::laws::FlagVerdict;
use chessclockd::eboard::placement::Placement;
use chessclockd::eboard::{EboardEvent, Follower, FollowerConfig};
use chessclockd::engine::{
    Adjustment, Engine, Input, MatchControl, Notice, Settings, Side, SECOND,
};
use chessclockd::timecontrol;
use shakmaty::{Chess, Position};

/// A long legal game that does not end: the first legal move (in
/// shakmaty's order) that leaves a position with a legal reply, no
/// checkmate or stalemate, and no capture (so material stays).
fn quiet_game(plies: usize) -> Vec<Chess> {
    let mut positions = Vec::new();
    let mut pos = Chess::default();
    for _ in 0..plies {
        let mv = pos
            .legal_moves()
            .into_iter()
            .rev()
            .find(|m| {
                let mut next = pos.clone();
                next.play_unchecked(*m);
                !m.is_capture() && !next.is_game_over() && !m.is_promotion()
            })
            .expect("a quiet move exists");
        pos.play_unchecked(mv);
        positions.push(pos.clone());
    }
    positions
}

struct Table {
    detector: MoveDetector,
    tracker: Follower,
    engine: Engine,
    now: i64,
    /// Engine moves of each side when presses alone count.
    stage_changes: Vec<(Side, u32)>,
}

impl Table {
    fn new() -> Table {
        let control = MatchControl::same(timecontrol::parse("40/5400:1800").unwrap());
        let mut table = Table {
            detector: MoveDetector::new(DetectorConfig::default()),
            tracker: Follower::new(
                FollowerConfig::default(),
                true,
                Default::default(),
                &control,
            ),
            engine: Engine::new(control, Settings::default()),
            now: 0,
            stage_changes: Vec::new(),
        };
        table.tracker.on_event(&EboardEvent::Connected {
            path: "/dev/null".into(),
            at: 0,
        });
        table.board(&Placement::START);
        table.engine.apply(0, Input::Start).unwrap();
        table
    }

    fn board(&mut self, placement: &Placement) {
        self.now += 7 * SECOND;
        for event in self.detector.placement(self.now, placement) {
            self.tracker.on_board_event(&event);
        }
    }

    /// A press of `side`'s button with the board's count applied first.
    fn press(&mut self, side: Side) {
        self.now += SECOND;
        let state = self.engine.state(self.now);
        if state.running == Some(side) {
            let engine_moves = state.side(side).moves;
            if let Some(moves) = self
                .tracker
                .count_before_press(self.now, side, engine_moves)
            {
                let adjustment = Adjustment {
                    side,
                    remaining: None,
                    moves: Some(moves),
                    stage: None,
                };
                self.engine
                    .apply(self.now, Input::Adjust(adjustment))
                    .unwrap();
            }
        }
        let notices = self.engine.apply(self.now, Input::Press(side)).unwrap();
        let state = self.engine.state(self.now);
        for notice in notices {
            if let Notice::Pressed {
                side,
                move_number,
                used,
            } = notice
            {
                self.tracker
                    .on_press(self.now, side, move_number, used, &state);
                for event in self.detector.clock_pressed(self.now, side) {
                    self.tracker.on_board_event(&event);
                }
            }
            if let Notice::StageChanged { side, .. } = notice {
                self.stage_changes
                    .push((side, self.tracker.side_moves(side)));
            }
        }
        self.tracker.on_clocks(self.now, 0, &state);
        // The follower asks nothing of this game: every press comes after
        // its move and the board is never behind.
        let asked: Vec<_> = self
            .tracker
            .drain()
            .into_iter()
            .filter(|a| *a != chessclockd::eboard::FollowerAction::PgnChanged)
            .collect();
        assert!(asked.is_empty(), "{asked:?}");
    }
}

#[test]
fn forgotten_press_does_not_shift_the_stage_change() {
    let game = quiet_game(84);
    let mut table = Table::new();
    for (i, pos) in game.iter().enumerate() {
        let side = if i % 2 == 0 { Side::White } else { Side::Black };
        table.board(&Placement::from_board(pos.board()));
        // White forgets to press after its 39th move (ply 77); Black replies
        // on the board and presses in vain (White's clock still runs).
        if i + 1 == 77 {
            continue;
        }
        table.press(side);
    }
    // Both sides got the second stage exactly at their real 40th move.
    assert_eq!(
        table.stage_changes,
        vec![(Side::White, 40), (Side::Black, 40)]
    );
    let state = table.engine.state(table.now);
    assert_eq!(state.white.moves, 42);
    assert_eq!(state.black.moves, 42);
    assert_eq!(state.white.stage, 2);
    // The PGN carries every move, with clock times for every move completed
    // by a press of its own: not White's 39th (forgotten) nor Black's 39th
    // (its press came while White's clock ran).
    let text = table.tracker.render();
    assert_eq!(table.tracker.ply(), 84);
    assert_eq!(text.matches("[%clk ").count(), 82, "{text}");
    // White's clock ran from Black's 38th press through White's 39th move
    // (7 s), Black's reply and vain press (8 s) and White's 40th move and
    // press (8 s): the move completed by that press shows 23 s.
    assert!(text.contains("[%emt 0:00:23]"), "{text}");
    // White's clock started at 0 and its first move was pressed at 15 s;
    // Black's took 8 s. No increment in this control.
    let first_line = text.lines().find(|l| l.starts_with("1. ")).unwrap();
    assert!(
        first_line.contains(" {[%clk 1:29:45] [%emt 0:00:15]} 1... ")
            && first_line.ends_with(" {[%clk 1:29:52] [%emt 0:00:08]}"),
        "{first_line}"
    );
    // The tags carry both clocks as the engine has them.
    let white = chessclockd::eboard::pgn::clock_text(state.white.remaining.unwrap());
    let black = chessclockd::eboard::pgn::clock_text(state.black.remaining.unwrap());
    assert!(
        text.contains(&format!("[WhiteClock \"{white}\"]")),
        "{text}"
    );
    assert!(
        text.contains(&format!("[BlackClock \"{black}\"]")),
        "{text}"
    );
    assert!(text.contains("[TimeControl \"40/5400:1800\"]"), "{text}");
    // The second stage's 30 minutes are in White's clock: more than an
    // hour and a half after 42 moves of a few seconds.
    assert!(state.white.remaining.unwrap() > 5_400 * SECOND, "{white}");
}

#[test]
fn without_the_board_the_stage_change_comes_a_move_late() {
    let game = quiet_game(84);
    let mut table = Table::new();
    // The board is not connected: presses alone count.
    table.tracker.on_event(&EboardEvent::Disconnected {
        path: "/dev/null".into(),
        reason: "test".into(),
        at: 0,
    });
    for (i, pos) in game.iter().enumerate() {
        let side = if i % 2 == 0 { Side::White } else { Side::Black };
        table.board(&Placement::from_board(pos.board()));
        if i + 1 == 77 {
            continue;
        }
        table.press(side);
    }
    assert_eq!(
        table.stage_changes,
        vec![(Side::White, 41), (Side::Black, 41)],
        "the press counter lags one move behind the board"
    );
}

#[test]
fn flag_report_uses_the_board_count() {
    let game = quiet_game(77);
    let mut table = Table::new();
    for (i, pos) in game.iter().enumerate() {
        let side = if i % 2 == 0 { Side::White } else { Side::Black };
        table.board(&Placement::from_board(pos.board()));
        table.press(side);
    }
    // White has made 39 moves: its flag in stage 1 is a loss (Art. 6.4 not
    // fulfilled, Black has mating material).
    let control = timecontrol::parse("40/5400:1800").unwrap();
    // (A copy of the follower for each question: a loss becomes the result.)
    let report = table
        .tracker
        .clone()
        .on_flag(table.now, Side::White, 1, &control)
        .unwrap();
    assert_eq!(report.stage.unwrap().completed, 39);
    assert_eq!(report.stage.unwrap().required, 40);
    assert_eq!(report.verdict, FlagVerdict::Loss);
    // Black's flag after Black's 38 moves: also short of 40.
    let report = table
        .tracker
        .clone()
        .on_flag(table.now, Side::Black, 1, &control)
        .unwrap();
    assert_eq!(report.stage.unwrap().missing, 2);
    // Sudden death stage: no move requirement.
    let report = table
        .tracker
        .clone()
        .on_flag(table.now, Side::White, 2, &control)
        .unwrap();
    assert_eq!(report.stage, None);
    // An unrecognised placement makes the board unusable for counting.
    table.tracker.on_board_event(&BoardEvent::Unrecognised {
        placement_fen: "8/8/8/8/8/8/8/8".into(),
        ply: 77,
        at: 0,
    });
    assert!(!table.tracker.usable());
    assert!(table
        .tracker
        .clone()
        .on_flag(table.now, Side::White, 1, &control)
        .is_none());
    assert_eq!(
        table.tracker.count_before_press(table.now, Side::White, 10),
        None
    );
}
