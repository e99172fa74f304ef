//! The follower driven exactly as the board core drives it (see the module
//! docs of `eboard`): a move detector fed placements at instants, a real
//! engine, and the actions carried out by inserting inputs and re-running
//! the engine. Every transcript names the issue item it pins.

mod press_sides;

use super::*;
use crate::eboard::detect::{DetectorConfig, MoveDetector};
use crate::eboard::placement::{index_of, Placement};
use crate::engine::{Engine, Input, Notice, Settings, SECOND};
use crate::timecontrol::parse;
use shakmaty::san::SanPlus;
use shakmaty::{Position, Square};

/// 2026-11-30T13:00:00Z.
const WALL0: i64 = 1_796_043_600 * SECOND;

const OPERA: &str = "e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 \
                     Nxb5 cxb5 Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#";

fn ms(t: i64) -> Micros {
    t * MS
}

struct Table {
    det: MoveDetector,
    f: Follower,
    control: MatchControl,
    inputs: Vec<(Micros, Input)>,
    engine: Engine,
    pos: Chess,
    stops: Vec<(Micros, StopReason)>,
    adjusts: Vec<(Micros, Side, u32)>,
    offers: Vec<Micros>,
    commands: Vec<EboardCommand>,
    results: Vec<Option<GameResult>>,
    pgn_changes: usize,
    /// The last instant anything happened at (commands run then).
    now: Micros,
}

impl Table {
    fn new(control: &str, attached: bool) -> Table {
        let control = MatchControl::same(parse(control).unwrap());
        let mut tags = BTreeMap::new();
        tags.insert("Event".to_owned(), "Opera".to_owned());
        let mut table = Table {
            det: MoveDetector::new(DetectorConfig::default()),
            f: Follower::new(FollowerConfig::default(), attached, tags, &control),
            engine: Engine::new(control.clone(), Settings::default()),
            control,
            inputs: Vec::new(),
            pos: Chess::default(),
            stops: Vec::new(),
            adjusts: Vec::new(),
            offers: Vec::new(),
            commands: Vec::new(),
            results: Vec::new(),
            pgn_changes: 0,
            now: 0,
        };
        if attached {
            table.f.on_event(&EboardEvent::Connected {
                path: "/dev/dgt".into(),
                at: 0,
            });
            table.show(0, &Placement::START);
        }
        table
    }

    fn feed(&mut self, events: Vec<BoardEvent>) {
        for event in events {
            self.f.on_board_event(&event);
        }
        self.handle();
    }

    /// The board shows `placement` at `at` (the shell ticks first).
    fn show(&mut self, at: Micros, placement: &Placement) {
        self.now = self.now.max(at);
        let mut events = self.det.tick(at);
        events.extend(self.det.placement(at, placement));
        self.feed(events);
    }

    /// `san` is put down on the board at `at` (one placement: the hand's
    /// details are the detector's business).
    fn play(&mut self, at: Micros, san: &str) {
        let san: SanPlus = san.parse().unwrap();
        let mv = san.san.to_move(&self.pos).unwrap();
        self.pos.play_unchecked(mv);
        let placement = Placement::from_board(self.pos.board());
        self.show(at, &placement);
    }

    fn tick(&mut self, at: Micros) {
        self.now = self.now.max(at);
        let events = self.det.tick(at);
        self.feed(events);
        self.f.tick(at);
        self.handle();
    }

    fn wall(at: Micros) -> i64 {
        WALL0 + at
    }

    fn start(&mut self, at: Micros) {
        self.apply(at, Input::Start);
    }

    /// An input now: the engine takes it, the follower hears of it.
    fn apply(&mut self, at: Micros, input: Input) {
        self.now = self.now.max(at);
        if let Input::Press(side) = input {
            let state = self.engine.state(at);
            if state.running == Some(side) {
                if let Some(moves) = self.f.count_before_press(at, side, state.side(side).moves) {
                    self.insert(at, Input::Adjust(adjust(side, moves)));
                }
            }
        }
        self.inputs.push((at, input));
        let notices = self.engine.apply(at, input).unwrap();
        self.follow(at, &notices);
        let state = self.engine.state(at);
        self.f.on_clocks(at, Self::wall(at), &state);
        if let Input::Press(side) = input {
            if notices.iter().any(|n| matches!(n, Notice::Pressed { .. })) {
                let events = self.det.clock_pressed(at, side);
                self.feed(events);
            }
        }
        self.handle();
    }

    fn press(&mut self, at: Micros, side: Side) {
        self.apply(at, Input::Press(side));
    }

    fn follow(&mut self, at: Micros, notices: &[Notice]) {
        let state = self.engine.state(at);
        for notice in notices {
            match notice {
                Notice::Started => self.f.on_started(Self::wall(at)),
                Notice::Pressed {
                    side,
                    move_number,
                    used,
                } => self.f.on_press(at, *side, *move_number, *used, &state),
                Notice::FlagFell {
                    side, stage, at, ..
                } => {
                    let control = self.control.for_side(*side).clone();
                    self.f.on_flag(*at, *side, *stage, &control);
                }
                _ => {}
            }
        }
    }

    /// Inserts an input at `at` (before any input at the same instant when
    /// it is an adjustment: it goes before the press it corrects).
    fn insert(&mut self, at: Micros, input: Input) {
        let index = match input {
            Input::Adjust(_) => self.inputs.partition_point(|(t, _)| *t < at),
            _ => self.inputs.partition_point(|(t, _)| *t <= at),
        };
        self.inputs.insert(index, (at, input));
    }

    /// The engine again from its inputs; the follower re-hears the presses
    /// from `from` on and the clocks after the last input.
    fn rerun(&mut self, from: Micros) {
        self.f.rewind(from);
        self.engine = Engine::new(self.control.clone(), Settings::default());
        let inputs = self.inputs.clone();
        for (t, input) in &inputs {
            let notices = self.engine.apply(*t, *input).unwrap();
            if *t >= from {
                let pressed: Vec<Notice> = notices
                    .into_iter()
                    .filter(|n| matches!(n, Notice::Pressed { .. }))
                    .collect();
                self.follow(*t, &pressed);
            }
        }
        let last = inputs.last().map_or(0, |(t, _)| *t);
        let state = self.engine.state(last);
        self.f.on_clocks(last, Self::wall(last), &state);
    }

    fn handle(&mut self) {
        loop {
            let actions = self.f.drain();
            if actions.is_empty() {
                return;
            }
            for action in actions {
                match action {
                    FollowerAction::AdjustMoves { at, side, moves } => {
                        self.adjusts.push((at, side, moves));
                        self.insert(at, Input::Adjust(adjust(side, moves)));
                        self.rerun(at);
                    }
                    FollowerAction::StopClock { at, reason } => {
                        self.stops.push((at, reason));
                        if self.engine.state(at).running.is_some() {
                            self.insert(at, Input::Pause);
                            self.rerun(at);
                        }
                    }
                    FollowerAction::Command(command) => {
                        let at = self.now;
                        let events = match &command {
                            EboardCommand::Finish => self.det.finish(at),
                            EboardCommand::NewGame => self.det.new_game(at),
                            EboardCommand::ClockPressed { at, side } => {
                                self.det.clock_pressed(*at, *side)
                            }
                            _ => Vec::new(),
                        };
                        self.commands.push(command);
                        for event in events {
                            self.f.on_board_event(&event);
                        }
                    }
                    FollowerAction::OfferNewGame { at } => self.offers.push(at),
                    FollowerAction::ResultChanged { result, .. } => self.results.push(result),
                    FollowerAction::PgnChanged => self.pgn_changes += 1,
                }
            }
        }
    }

    /// (SAN, %clk) of each move of the broadcast PGN.
    fn broadcast(&self) -> Vec<(String, Option<MoveClock>)> {
        self.f
            .pgn(false)
            .moves
            .into_iter()
            .map(|m| (m.san, m.clock))
            .collect()
    }

    fn tag(&self, name: &str) -> Option<String> {
        let game = self.f.pgn(false);
        game.tags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| game.set_tags.get(name).cloned())
    }
}

/// The text with every run of white space as one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn adjust(side: Side, moves: u32) -> crate::engine::Adjustment {
    crate::engine::Adjustment {
        side,
        remaining: None,
        moves: Some(moves),
        stage: None,
    }
}

/// Plays `sans` from `at0`: a move every 2 s, each pressed 1 s after it
/// is put down (both sides press).
fn play_pressed(t: &mut Table, sans: &[&str], at0: Micros) -> Micros {
    let mut at = at0;
    for san in sans {
        at += ms(1_000);
        t.play(at, san);
        at += ms(1_000);
        let side = if t.f.ply() % 2 == 1 {
            Side::White
        } else {
            Side::Black
        };
        t.press(at, side);
    }
    at
}

#[test]
fn item2_a_press_before_the_board_reports_its_move_is_matched_by_time() {
    // Two moves in a minute, then a minute more.
    let mut t = Table::new("2/60:60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    // White's press for move 2 arrives 54 ms before the board's event.
    t.press(ms(5_000), Side::White);
    t.play(ms(5_054), "Nf3");
    let state = t.engine.state(ms(5_100));
    assert_eq!(state.white.moves, 2, "never lowered to the board's 1");
    assert_eq!(state.white.stage, 2, "the stage's minute at the 2nd move");
    assert!(t.adjusts.is_empty(), "{:?}", t.adjusts);
    t.tick(ms(7_000));
    assert!(
        t.adjusts.is_empty(),
        "the press is the move's: {:?}",
        t.adjusts
    );
    let moves = t.broadcast();
    let clk = |ply: usize| moves[ply].1.map(|c| c.clk);
    assert_eq!(clk(0), Some(ms(58_000)), "move 1: 60 s - 2 s");
    assert_eq!(clk(1), Some(ms(58_000)), "move 1...: 60 s - 2 s");
    // 60 s - 2 s - 1 s + 60 s of stage 2, on move 2 (not on move 1).
    assert_eq!(clk(2), Some(ms(117_000)), "{moves:?}");
    assert_eq!(moves[2].0, "Nf3", "confirmed by the press that came first");
}

#[test]
fn item2_a_forgotten_press_then_an_early_press_gets_the_stage_time_at_the_real_move() {
    // Three moves in a minute, then a minute more.
    let mut t = Table::new("3/60:60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    // White forgets to press after 2. Nf3; Black's reply is on White's time.
    t.play(ms(5_000), "Nf3");
    t.play(ms(7_000), "Nc6");
    // White's press for its 3rd move, 54 ms before the board reports it:
    // the engine gives it move 2 (the board shows two White moves then).
    t.press(ms(9_000), Side::White);
    assert_eq!(t.engine.state(ms(9_000)).white.stage, 1);
    t.play(ms(9_054), "Bb5");
    // The board's move within the window is the press's: the count goes in
    // just before the press, which then completes the real 3rd move.
    assert_eq!(t.adjusts, vec![(ms(9_000), Side::White, 2)]);
    let state = t.engine.state(ms(9_100));
    assert_eq!(state.white.moves, 3);
    assert_eq!(state.white.stage, 2, "the stage time at the real 3rd move");
    let moves = t.broadcast();
    // 60 - 2 (move 1) - 7 (from 4 s to 9 s... and 2 s before) + 60.
    assert_eq!(
        moves[4].1.map(|c| c.clk),
        Some(ms(60_000 - 2_000 - 5_000 + 60_000))
    );
    assert_eq!(moves[2].1, None, "the unpressed 2. Nf3 has no clock");
    assert_eq!(moves[3].1, None, "nor Black's reply played on White's time");
}

#[test]
fn item2_a_press_without_a_move_is_lowered_once_settled() {
    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    t.play(ms(5_000), "Nf3");
    t.press(ms(6_000), Side::White);
    // Black presses without moving.
    t.press(ms(8_000), Side::Black);
    assert_eq!(t.engine.state(ms(8_000)).black.moves, 2);
    t.tick(ms(8_900));
    assert!(t.adjusts.is_empty(), "not before it settled");
    t.tick(ms(9_000));
    assert_eq!(t.adjusts, vec![(ms(8_000), Side::Black, 0)]);
    assert_eq!(t.engine.state(ms(9_000)).black.moves, 1);
}

#[test]
fn item3_an_unpressed_mate_stops_the_clock_when_it_appeared_and_gets_its_clock() {
    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "f3");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    t.play(ms(5_000), "g4");
    t.press(ms(6_000), Side::White);
    t.play(ms(8_000), "Qh4#");
    // Nobody presses: the move is confirmed 1.5 s later.
    t.tick(ms(9_500));
    assert_eq!(t.stops, vec![(ms(8_000), StopReason::Checkmate)]);
    let state = t.engine.state(ms(20_000));
    assert_eq!(state.running, None);
    // Black's clock stopped at 8 s, not at the confirmation at 9.5 s.
    assert_eq!(state.black.remaining, Some(ms(60_000 - 2_000 - 2_000)));
    let moves = t.broadcast();
    assert_eq!(moves.len(), 4);
    assert_eq!(
        moves[3].1,
        Some(MoveClock {
            clk: ms(56_000),
            emt: ms(2_000)
        }),
        "the mating move's clock, from the stop"
    );
    assert_eq!(
        t.f.result(),
        Some((GameResult::BlackWins, Termination::Checkmate))
    );
    // A checkmate is kept as one; the PGN tag says `normal`.
    assert_eq!(t.tag("Termination").as_deref(), Some("normal"));
    assert_eq!(t.tag("ClockStatus").as_deref(), Some("stopped"));
    assert!(flat(&t.f.render()).ends_with("Qh4# {[%clk 0:00:56] [%emt 0:00:02]} 0-1"));
}

#[test]
fn item3_a_pressed_mate_stops_the_clock_at_the_press_and_the_move_counts() {
    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "f3");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    t.play(ms(5_000), "g4");
    t.press(ms(6_000), Side::White);
    t.play(ms(8_000), "Qh4#");
    t.press(ms(8_300), Side::Black);
    assert_eq!(t.stops, vec![(ms(8_300), StopReason::Checkmate)]);
    let state = t.engine.state(ms(20_000));
    assert_eq!(state.running, None);
    assert_eq!(state.black.moves, 2);
    assert_eq!(
        state.white.remaining,
        Some(ms(56_000)),
        "White's clock never ran"
    );
    assert_eq!(t.broadcast()[3].1.map(|c| c.clk), Some(ms(55_700)));
}

#[test]
fn item4_the_clock_tags_follow_every_change_of_the_clocks() {
    let mut t = Table::new("60", true);
    t.start(0);
    assert_eq!(t.tag("ClockStatus").as_deref(), Some("running"));
    assert_eq!(
        t.tag("ReferenceTime").as_deref(),
        Some("W/2026-11-30T13:00:00.000Z")
    );
    t.play(ms(1_000), "e4");
    t.press(ms(2_500), Side::White);
    assert_eq!(t.tag("WhiteClock").as_deref(), Some("0:00:58"));
    assert_eq!(
        t.tag("ReferenceTime").as_deref(),
        Some("B/2026-11-30T13:00:02.500Z")
    );
    // An arbiter's pause and correction, no press: the tags follow.
    t.apply(ms(10_000), Input::Pause);
    assert_eq!(t.tag("ClockStatus").as_deref(), Some("paused"));
    assert_eq!(t.tag("BlackClock").as_deref(), Some("0:00:53"));
    assert_eq!(
        t.tag("ReferenceTime").as_deref(),
        Some("2026-11-30T13:00:10.000Z"),
        "no running side while paused"
    );
    t.apply(
        ms(11_000),
        Input::Adjust(crate::engine::Adjustment {
            side: Side::Black,
            remaining: Some(ms(90_000)),
            moves: None,
            stage: None,
        }),
    );
    assert_eq!(t.tag("BlackClock").as_deref(), Some("0:01:30"));
    t.apply(ms(12_000), Input::Resume);
    assert_eq!(t.tag("ClockStatus").as_deref(), Some("running"));
    assert_eq!(
        t.tag("ReferenceTime").as_deref(),
        Some("B/2026-11-30T13:00:12.000Z")
    );
}

#[test]
fn item4_a_stage_change_by_flag_shows_the_new_time_at_once() {
    let control = MatchControl::same(parse("1/2:60").unwrap());
    let settings = Settings {
        stage_advance: crate::engine::StageAdvance::Flag,
        ..Settings::default()
    };
    let mut t = Table::new("1/2:60", true);
    t.engine = Engine::new(control.clone(), settings);
    t.start(0);
    let notices = t.engine.advance(ms(2_000));
    assert!(notices
        .iter()
        .any(|n| matches!(n, Notice::StageChanged { .. })));
    t.follow(ms(2_000), &notices);
    let state = t.engine.state(ms(2_000));
    t.f.on_clocks(ms(2_000), Table::wall(ms(2_000)), &state);
    assert_eq!(t.tag("WhiteClock").as_deref(), Some("0:01:00"));
    assert_eq!(t.tag("BlackClock").as_deref(), Some("0:01:02"));
}

#[test]
fn item5_a_flag_with_a_loss_verdict_is_the_result() {
    let mut t = Table::new("5", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    let notices = t.engine.advance(ms(10_000));
    t.follow(ms(10_000), &notices);
    let state = t.engine.state(ms(10_000));
    t.f.on_clocks(ms(10_000), Table::wall(ms(10_000)), &state);
    t.handle();
    assert_eq!(
        t.f.result(),
        Some((GameResult::BlackWins, Termination::TimeForfeit))
    );
    assert_eq!(t.commands, vec![EboardCommand::Finish]);
    let text = t.f.render();
    assert!(text.contains("[Result \"0-1\"]"), "{text}");
    assert!(text.contains("[Termination \"time forfeit\"]"), "{text}");
    assert!(text.contains("[WhiteClock \"0:00:00\"]"), "{text}");
    assert!(text.ends_with("0-1\n\n"), "{text}");
    assert!(text.contains("[ClockStatus \"stopped\"]"), "{text}");
    assert!(
        !text.contains("W/"),
        "no running clock after the result: {text}"
    );
    // Time given back withdraws it.
    t.f.on_flag_withdrawn(Side::White);
    assert_eq!(t.f.result(), None);
    assert!(t.f.render().contains("[Result \"*\"]"));
}

#[test]
fn item5_the_arbiter_decides_and_the_kings_signal_stops_the_clock() {
    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.f.set_result(
        ms(5_000),
        Some(GameResult::WhiteWins),
        Termination::parse("resignation"),
    );
    t.handle();
    assert_eq!(t.stops, vec![(ms(5_000), StopReason::Result)]);
    assert_eq!(t.engine.state(ms(6_000)).running, None);
    assert!(t.f.render().contains("[Termination \"normal\"]"));
    assert_eq!(t.commands, vec![EboardCommand::Finish]);

    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    // Both kings on light centre squares: White wins.
    let mut p = Placement::from_board(t.pos.board());
    p.0[index_of(Square::E1)] = 0;
    p.0[index_of(Square::E8)] = 0;
    p.0[index_of(Square::E4)] = crate::eboard::protocol::piece::WKING;
    p.0[index_of(Square::D5)] = crate::eboard::protocol::piece::BKING;
    t.show(ms(6_000), &p);
    assert_eq!(t.stops, vec![(ms(6_000), StopReason::ResultSignal)]);
    let state = t.engine.state(ms(9_000));
    assert_eq!(state.running, None);
    assert_eq!(state.black.remaining, Some(ms(56_000)));
    assert_eq!(
        t.f.result(),
        Some((GameResult::WhiteWins, Termination::Normal))
    );
}

#[test]
fn item6_the_broadcast_holds_confirmed_moves_only() {
    let mut t = Table::new("60", true);
    t.start(0);
    // 1. e3 on the way to e4: never in the broadcast.
    t.pos.play_unchecked(
        "e3".parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&t.pos)
            .unwrap(),
    );
    let e3 = Placement::from_board(t.pos.board());
    t.pos = Chess::default();
    t.show(ms(1_000), &e3);
    assert_eq!(t.f.tentative().map(|m| m.san.as_str()), Some("e3"));
    assert!(t.broadcast().is_empty());
    assert!(t.f.render_live().contains("1. e3"));
    t.play(ms(1_200), "e4");
    assert!(!t.f.render().contains("e3") && !t.f.render().contains("e4"));
    t.press(ms(1_500), Side::White);
    assert_eq!(t.broadcast()[0].0, "e4");
    assert!(!t.f.render().contains("e3"));
}

#[test]
fn item6_castling_rook_first_never_publishes_the_rook_move() {
    let mut t = Table::new("900", true);
    t.start(0);
    let sans: Vec<&str> = OPERA.split_whitespace().take(22).collect();
    let at = play_pressed(&mut t, &sans, 0);
    // 12. O-O-O, the rook first: a1-d1 is Rd1, tentatively.
    let mut p = Placement::from_board(t.pos.board());
    let rook = p.0[index_of(Square::A1)];
    p.0[index_of(Square::A1)] = 0;
    p.0[index_of(Square::D1)] = rook;
    t.show(at + ms(500), &p);
    assert_eq!(t.f.tentative().map(|m| m.san.as_str()), Some("Rd1"));
    assert!(!t.f.render().contains("Rd1"), "{}", t.f.render());
    t.play(at + ms(700), "O-O-O");
    t.press(at + ms(900), Side::White);
    let text = t.f.render();
    assert!(text.contains("12. O-O-O {[%clk"), "{text}");
    assert!(!text.contains("Rd1"), "{text}");
}

#[test]
fn item1_a_board_reset_keeps_the_finished_game_and_starts_the_next() {
    let mut t = Table::new("900", true);
    t.start(0);
    let sans: Vec<&str> = OPERA.split_whitespace().collect();
    let at = play_pressed(&mut t, &sans, 0);
    t.tick(at + ms(2_000));
    assert_eq!(
        t.f.result(),
        Some((GameResult::WhiteWins, Termination::Checkmate))
    );
    let finished = t.f.render();
    assert!(finished.contains("17. Rd8#") && finished.contains("[Result \"1-0\"]"));
    // The pieces go back one by one (any order; the last completes it).
    let mut p = Placement::from_board(t.pos.board());
    let mut at = at + ms(3_000);
    for index in 0..64 {
        if p.0[index] != Placement::START.0[index] {
            p.0[index] = 0;
            at += ms(100);
            t.show(at, &p);
        }
    }
    for index in 0..64 {
        if p.0[index] != Placement::START.0[index] {
            p.0[index] = Placement::START.0[index];
            at += ms(100);
            t.show(at, &p);
        }
    }
    assert_eq!(
        t.f.render(),
        finished,
        "the finished game is kept as it was"
    );
    assert_eq!(t.offers, vec![at], "the arbiter is offered a new game");
    assert!(t.f.next_game_waiting());
    // The next game: the arbiter's `new` (start already standing), then its
    // moves are followed.
    let mut tags = BTreeMap::new();
    tags.insert("Round".to_owned(), "2".to_owned());
    let journal = t.f.new_game(tags, &t.control.clone());
    assert!(journal.is_empty());
    assert!(t.commands.iter().all(|c| *c != EboardCommand::NewGame));
    t.engine = Engine::new(t.control.clone(), Settings::default());
    t.inputs.clear();
    t.pos = Chess::default();
    let start = at + ms(1_000);
    t.start(start);
    let next: Vec<&str> = "d4 d5 c4 e6 Nc3 Nf6".split_whitespace().collect();
    play_pressed(&mut t, &next, start);
    assert_eq!(t.f.ply(), 6);
    let text = t.f.render();
    assert!(
        text.contains("[Round \"2\"]") && text.contains("3. Nc3"),
        "{text}"
    );
    assert!(text.contains("[Result \"*\"]"), "{text}");
}

#[test]
fn item1_new_before_the_reset_waits_for_the_start_then_follows() {
    let mut t = Table::new("900", true);
    t.start(0);
    let at = play_pressed(&mut t, &["f3", "e5", "g4", "Qh4#"], 0);
    t.tick(at + ms(2_000));
    assert!(t.f.result().is_some());
    t.f.new_game(BTreeMap::new(), &t.control.clone());
    t.handle();
    assert_eq!(t.commands, vec![EboardCommand::NewGame]);
    // The file shows the new game at once (item 11).
    assert!(t.f.render().contains("[Result \"*\"]"));
    assert!(t.broadcast().is_empty());
    t.pos = Chess::default();
    t.show(at + ms(5_000), &Placement::START);
    t.engine = Engine::new(t.control.clone(), Settings::default());
    t.inputs.clear();
    t.start(at + ms(6_000));
    play_pressed(&mut t, &["e4", "c5"], at + ms(6_000));
    assert_eq!(t.f.ply(), 2);
    assert!(t.f.render().contains("1. e4 {[%clk"));
}

#[test]
fn item1_the_start_seen_again_under_an_unfinished_game_keeps_it_and_offers_the_next() {
    let mut t = Table::new("900", true);
    t.start(0);
    let at = play_pressed(&mut t, &["e4", "e5", "Nf3"], 0);
    let before = t.f.render();
    // A detector that began again (a restart while the pieces were reset).
    t.f.on_board_event(&BoardEvent::StartPosition { at: at + ms(100) });
    t.handle();
    assert_eq!(t.offers, vec![at + ms(100)]);
    assert!(t.f.next_game_waiting());
    assert_eq!(t.f.render(), before, "kept as it was");
    // The whole game taken back counts the same.
    let mut t = Table::new("900", true);
    t.start(0);
    play_pressed(&mut t, &["d4", "d5"], 0);
    t.show(ms(9_000), &Placement::START);
    assert_eq!(t.offers, vec![ms(9_000)]);
    assert_eq!(t.f.ply(), 2);
}

#[test]
fn item11_the_replacement_of_a_pressed_move_taken_back_keeps_its_clock() {
    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    t.play(ms(5_000), "Nf3");
    t.press(ms(6_000), Side::White);
    // White takes 2. Nf3 back and plays 2. Bc4: its clock no longer runs,
    // so no press follows.
    t.pos = Chess::default();
    for san in ["e4", "e5"] {
        let mv = san.parse::<SanPlus>().unwrap().san.to_move(&t.pos).unwrap();
        t.pos.play_unchecked(mv);
    }
    let back = Placement::from_board(t.pos.board());
    t.show(ms(7_000), &back);
    assert_eq!(t.f.ply(), 2);
    t.play(ms(7_500), "Bc4");
    t.tick(ms(9_500));
    let moves = t.broadcast();
    assert_eq!(moves[2].0, "Bc4");
    assert_eq!(moves[2].1.map(|c| c.clk), Some(ms(56_000)), "{moves:?}");
}

#[test]
fn without_a_board_the_movetext_is_the_clock_record_in_comments() {
    let mut t = Table::new("180+2", false);
    t.start(0);
    t.press(ms(3_000), Side::White);
    t.press(ms(7_000), Side::Black);
    t.press(ms(8_500), Side::White);
    let game = t.f.pgn(false);
    assert!(game.moves.is_empty());
    assert_eq!(
        game.comments,
        vec!["moves not recorded; the presses of the clock:"]
    );
    // The presses as they are, written only when the PGN is rendered.
    let sides: Vec<Side> = game.presses.iter().map(|p| p.side).collect();
    assert_eq!(sides, [Side::White, Side::Black, Side::White]);
    let text = t.f.render();
    assert!(
        flat(&text).ends_with(
            "{moves not recorded; the presses of the clock:} \
             {1. White [%clk 0:03:01] [%emt 0:00:03]} {1... Black [%clk 0:03:00] [%emt 0:00:04]} \
             {2. White [%clk 0:03:02] [%emt 0:00:02]} *"
        ),
        "{text}"
    );
    assert!(text.contains("[ClockControl \"180+2\"]"), "{text}");
}

#[test]
fn item10_tags_come_from_the_config_then_from_the_arbiter() {
    let mut t = Table::new("60", false);
    assert!(t.f.render().contains("[Event \"Opera\"]"));
    assert!(t.f.render().contains("[Date \"????.??.??\"]"));
    t.f.set_tags(&[
        ("White".into(), "Morphy, Paul".into()),
        ("Round".into(), "3.1".into()),
        ("WhiteElo".into(), "2690".into()),
    ])
    .unwrap();
    t.start(0);
    let text = t.f.render();
    assert!(
        text.contains("[Round \"3.1\"]\n[White \"Morphy, Paul\"]"),
        "{text}"
    );
    assert!(text.contains("[Date \"2026.11.30\"]"), "{text}");
    assert!(text.contains("[UTCTime \"13:00:00\"]"), "{text}");
    assert!(text.contains("[WhiteElo \"2690\"]"), "{text}");
    // Refused as a whole, with the tag named.
    let err =
        t.f.set_tags(&[
            ("Black".into(), "x".into()),
            ("Result".into(), "1-0".into()),
        ])
        .unwrap_err();
    assert!(err.contains("Result"), "{err}");
    assert!(!t.f.render().contains("[Black \"x\"]"));
    assert!(t
        .f
        .set_tags(&[("Date".into(), "30.11.2026".into())])
        .is_err());
    assert!(t.f.set_tags(&[("Bad Name".into(), "x".into())]).is_err());
    // An empty value gives the default back.
    t.f.set_tags(&[("Event".into(), "Other".into())]).unwrap();
    t.f.set_tags(&[("Event".into(), String::new())]).unwrap();
    assert!(t.f.render().contains("[Event \"Opera\"]"));
}

#[test]
fn restoring_rebuilds_without_asking_and_resumes_the_shell() {
    let mut t = Table::new("60", true);
    t.start(0);
    let at = play_pressed(&mut t, &["e4", "e5", "Nf3"], 0);
    let live = t.f.render();
    // A new follower fed what a journal holds.
    let mut f = Follower::new(
        FollowerConfig::default(),
        true,
        {
            let mut tags = BTreeMap::new();
            tags.insert("Event".to_owned(), "Opera".to_owned());
            tags
        },
        &t.control,
    );
    f.begin_restore();
    for m in t.f.moves().to_vec() {
        f.on_board_event(&BoardEvent::MoveDetected(m.detected()));
    }
    let mut engine = Engine::new(t.control.clone(), Settings::default());
    for (time, input) in t.inputs.clone() {
        let notices = engine.apply(time, input).unwrap();
        let state = engine.state(time);
        for n in notices {
            match n {
                Notice::Started => f.on_started(Table::wall(time)),
                Notice::Pressed {
                    side,
                    move_number,
                    used,
                } => f.on_press(time, side, move_number, used, &state),
                _ => {}
            }
        }
        f.on_clocks(time, Table::wall(time), &state);
    }
    assert_eq!(
        f.end_restore(),
        Some(EboardCommand::Resume {
            moves: vec!["e2e4".into(), "e7e5".into(), "g1f3".into()],
            finished: false
        })
    );
    assert!(f.drain().is_empty());
    assert_eq!(f.render(), live);
    let _ = at;
}
