//! The board core with an electronic board, its shell played by a real move
//! detector: the board core's commands are carried to the detector at once
//! and the detector's events come back as the shell sends them.
//!
//! Issue 28, item 3: a press completes only the pressing side's own last
//! move. Black plays 2...d5 by way of a stop on d6 while White's press for
//! 2. Nf3 lands a few milliseconds from Black's first placement; the PGN
//! must say `2... d5`, never `d6`.

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};

use super::*;
use crate::eboard::detect::{DetectorConfig, MoveDetector};
use crate::eboard::placement::Placement;

/// White's press (or lever) for 2. Nf3, in ms.
const PRESS_MS: i64 = 6_000;

/// A board with an e-board at `/dev/dgt` and its shell.
struct Table {
    rig: Rig,
    det: MoveDetector,
    /// The position the hand has played on the board.
    pos: Chess,
    /// The button unit's next event number.
    event: u16,
    /// Every command the board core sent the shell.
    commands: Vec<EboardCommand>,
}

impl Table {
    /// The game of `60` started at 0; `buttons`: a button unit is
    /// configured and linked, else the DGT clock's lever is the clock.
    fn new(buttons: bool) -> Table {
        let mut board_setup = setup();
        board_setup.eboard = Some("/dev/dgt".into());
        if !buttons {
            board_setup.buttons = None;
        }
        let (mut rig, _) = Rig::with(board_setup, spec("60"));
        rig.commit_all(0);
        if buttons {
            rig.step(
                0,
                BoardInput::Device(DeviceInput::Connected {
                    role: DeviceRole::Buttons,
                    hello: hello(Roles::BUTTONS, "BU1", 7, 0),
                    path: "/dev/pts/1".into(),
                }),
            );
        }
        let mut table = Table {
            rig,
            det: MoveDetector::new(DetectorConfig::default()),
            pos: Chess::default(),
            event: 0,
            commands: Vec::new(),
        };
        table.input(
            0,
            BoardInput::Eboard(EboardEvent::Connected {
                path: "/dev/dgt".into(),
                at: mono(0),
            }),
        );
        table.show(0, &Placement::START);
        let token = table.rig.token();
        table.input(
            0,
            BoardInput::Command {
                token,
                caller: Caller::uid(1000),
                command: BoardCommand::Start,
            },
        );
        table
    }

    /// One input at `at_ms`, everything it records committed, and every
    /// command it sends the shell carried out.
    fn input(&mut self, at_ms: i64, input: BoardInput) {
        let actions = self.rig.board.handle(mono(at_ms), wall(at_ms), input);
        self.carry(at_ms, actions);
        if let Some(&(seq, _)) = self.rig.journal.last() {
            let actions = self.rig.board.handle(
                mono(at_ms),
                wall(at_ms),
                BoardInput::Committed { seq, ok: true },
            );
            self.carry(at_ms, actions);
        }
    }

    /// The shell carries out the board core's commands at `at_ms`.
    fn carry(&mut self, at_ms: i64, actions: Vec<Action>) {
        let commands: Vec<EboardCommand> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Eboard(command) => Some(command.clone()),
                _ => None,
            })
            .collect();
        self.rig.take(actions);
        for command in commands {
            let events = match &command {
                EboardCommand::ClockPressed { at, side } => self.det.clock_pressed(*at, *side),
                EboardCommand::Finish => self.det.finish(mono(at_ms)),
                EboardCommand::NewGame => self.det.new_game(mono(at_ms)),
                _ => Vec::new(),
            };
            self.commands.push(command);
            self.shell_sends(at_ms, events);
        }
    }

    fn shell_sends(&mut self, at_ms: i64, events: Vec<crate::eboard::BoardEvent>) {
        for event in events {
            self.input(at_ms, BoardInput::Eboard(EboardEvent::Board(event)));
        }
    }

    /// The board shows `placement` at `at_ms` (the shell ticks first).
    fn show(&mut self, at_ms: i64, placement: &Placement) {
        let mut events = self.det.tick(mono(at_ms));
        events.extend(self.det.placement(mono(at_ms), placement));
        self.shell_sends(at_ms, events);
    }

    /// The board after `san` from the hand's position, which stays (a stop
    /// on the way).
    fn after(&self, san: &str) -> Placement {
        let mv = san
            .parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&self.pos)
            .unwrap();
        let mut pos = self.pos.clone();
        pos.play_unchecked(mv);
        Placement::from_board(pos.board())
    }

    /// `san` put down at `at_ms`.
    fn play(&mut self, at_ms: i64, san: &str) {
        let placement = self.after(san);
        let mv = san
            .parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&self.pos)
            .unwrap();
        self.pos.play_unchecked(mv);
        self.show(at_ms, &placement);
    }

    /// `side`'s button, pressed at `made_ms`, read at `read_ms`.
    fn press(&mut self, made_ms: i64, read_ms: i64, side: Side) {
        let button = match side {
            Side::White => Button::Left,
            Side::Black => Button::Right,
        };
        let event = self.event;
        self.event += 1;
        self.input(
            read_ms,
            BoardInput::Device(DeviceInput::Button {
                role: DeviceRole::Buttons,
                serial: "BU1".into(),
                event,
                button,
                pressed: true,
                at: mono(made_ms),
                arrival: mono(read_ms),
            }),
        );
    }

    /// `side`'s lever of the DGT clock goes down at `at_ms` (White's is
    /// the left one: the right lever comes up).
    fn lever(&mut self, at_ms: i64, side: Side) {
        self.input(
            at_ms,
            BoardInput::Eboard(EboardEvent::ClockPress {
                right_up: side == Side::White,
                at: mono(at_ms),
            }),
        );
    }

    fn tentative(&self) -> Option<String> {
        self.rig.board.follower.tentative().map(|m| m.san.clone())
    }

    /// The broadcast PGN, white space flattened.
    fn pgn(&self) -> String {
        let text = self.rig.board.follower.render();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// 1. e4 e5 2. Nf3, the first move of each side pressed (by `press`).
    fn play_up_to_nf3(&mut self, press: fn(&mut Table, i64, Side)) {
        self.play(1_000, "e4");
        press(self, 2_000, Side::White);
        self.play(3_000, "e5");
        press(self, 4_000, Side::Black);
        self.play(5_000, "Nf3");
    }
}

fn button_press(t: &mut Table, at_ms: i64, side: Side) {
    t.press(at_ms, at_ms, side);
}

fn lever_press(t: &mut Table, at_ms: i64, side: Side) {
    t.lever(at_ms, side);
}

#[test]
fn press_of_the_side_that_moved_does_not_confirm_the_opponents_tentative_placement() {
    // Black's stop on d6 5 ms before White's press, in the same ms, 5 ms
    // after it; the press read 3 ms after it was made, before or after the
    // board reports the stop (the board's report takes tens of ms).
    for placed_after_press in [-5, 0, 5] {
        for press_read_first in [false, true] {
            let case =
                format!("stop at {placed_after_press:+} ms, press read first: {press_read_first}");
            let mut t = Table::new(true);
            t.play_up_to_nf3(button_press);
            let stop = t.after("d6");
            let placed = PRESS_MS + placed_after_press;
            if press_read_first {
                t.press(PRESS_MS, PRESS_MS + 3, Side::White);
                t.show(placed.max(PRESS_MS + 3), &stop);
            } else {
                t.show(placed, &stop);
                t.press(PRESS_MS, placed.max(PRESS_MS) + 3, Side::White);
            }
            assert!(
                t.commands.contains(&EboardCommand::ClockPressed {
                    at: mono(PRESS_MS),
                    side: Side::White
                }),
                "{case}: {:?}",
                t.commands
            );
            assert_eq!(t.tentative().as_deref(), Some("d6"), "{case}");
            t.play(placed + 300, "d5");
            assert_eq!(t.tentative().as_deref(), Some("d5"), "{case}");
            t.press(placed + 800, placed + 803, Side::Black);
            assert_eq!(t.tentative(), None, "{case}");
            let pgn = t.pgn();
            assert!(pgn.contains("2. Nf3 {[%clk"), "{case}: {pgn}");
            assert!(pgn.contains("2... d5 {[%clk"), "{case}: {pgn}");
            assert!(!pgn.contains("d6"), "{case}: {pgn}");
            let state = t.rig.board.state(mono(placed + 803));
            assert_eq!((state.white.moves, state.black.moves), (2, 2), "{case}");
        }
    }
}

#[test]
fn the_dgt_lever_of_the_side_that_moved_does_not_confirm_the_opponents_tentative_placement() {
    // No button unit: the lever is the clock, and the board core (which
    // knows whose lever is which) tells the shell whose press it was.
    for placed_after_press in [-5, 0, 5] {
        let case = format!("stop at {placed_after_press:+} ms");
        let mut t = Table::new(false);
        t.play_up_to_nf3(lever_press);
        let stop = t.after("d6");
        let placed = PRESS_MS + placed_after_press;
        if placed_after_press < 0 {
            t.show(placed, &stop);
            t.lever(PRESS_MS, Side::White);
        } else {
            t.lever(PRESS_MS, Side::White);
            t.show(placed, &stop);
        }
        assert_eq!(t.tentative().as_deref(), Some("d6"), "{case}");
        t.play(placed + 300, "d5");
        t.lever(placed + 800, Side::Black);
        assert_eq!(t.tentative(), None, "{case}");
        let pgn = t.pgn();
        assert!(pgn.contains("2... d5 {[%clk"), "{case}: {pgn}");
        assert!(!pgn.contains("d6"), "{case}: {pgn}");
    }
}

#[test]
fn an_ignored_lever_still_confirms_its_own_sides_move_only() {
    // With a button unit the lever is no press, but a lever change still
    // confirms the move of the side whose lever went down.
    let mut t = Table::new(true);
    t.play_up_to_nf3(button_press);
    t.press(PRESS_MS, PRESS_MS, Side::White);
    t.play(PRESS_MS + 500, "d6");
    t.lever(PRESS_MS + 510, Side::White);
    assert_eq!(t.tentative().as_deref(), Some("d6"), "White's lever");
    assert_eq!(
        t.commands.last(),
        Some(&EboardCommand::ClockPressed {
            at: mono(PRESS_MS + 510),
            side: Side::White
        })
    );
    t.lever(PRESS_MS + 900, Side::Black);
    assert_eq!(t.tentative(), None, "Black's lever");
    let state = t.rig.board.state(mono(PRESS_MS + 900));
    assert_eq!(state.black.moves, 1, "the ignored lever is no press");
    assert!(t.pgn().contains("2... d6"), "{}", t.pgn());
}

/// Issue 28 item 5: a press from the DGT clock's lever is the player's
/// press, recorded with the device that made it; never "(pressed by the
/// arbiter)" with the daemon as who.
#[test]
fn a_dgt_lever_press_is_recorded_as_the_players_press_not_the_arbiters() {
    let mut t = Table::new(false);
    t.play(1_000, "e4");
    t.lever(2_000, Side::White);
    let row = t
        .rig
        .history
        .iter()
        .rev()
        .find(|row| matches!(row.event, StoredEvent::Press { side: Side::White }))
        .expect("the lever's press is in the history")
        .clone();
    let text = crate::views::text::row_text(&row);
    assert_eq!(text, "white completed move 1 in 2.000 s", "{text}");
    assert!(!text.contains("arbiter"), "{text}");
    assert_eq!((row.caller_uid, row.caller_name.as_deref()), (None, None));
    let device = row.device.as_ref().expect("the lever is the row's device");
    assert_eq!(device.serial, "dgt-clock:/dev/dgt");
    let header = crate::views::GameHeader {
        board: "b1".into(),
        control: "60".into(),
        settings: Settings::default(),
        created_wall_us: 0,
        caller_uid: None,
        game: None,
        control_prose: None,
        tenths_below_ms: None,
    };
    let record = crate::views::RecordRow::new(&header, 0, &row);
    assert_eq!(record.who, "device dgt-clock:/dev/dgt");
    // The arbiter's undo takes back only the arbiter's own presses.
    let token = t.rig.token();
    t.input(
        2_100,
        BoardInput::Command {
            token,
            caller: Caller::uid(1000),
            command: BoardCommand::UndoPress,
        },
    );
    assert_eq!(t.rig.board.state(mono(2_100)).white.moves, 1, "not undone");
}
