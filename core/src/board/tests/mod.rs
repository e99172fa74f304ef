//! Transcripts of the board core: `step!(rig, at_ms, input => [lines])`
//! feeds one input at an exact instant and checks every action it caused,
//! each rendered as one short line (see [`line`]). Instants are
//! milliseconds after the rig's start; the wall clock runs beside them.

mod arbiter;
mod bounds;
mod defects;
mod eboard;
mod face;
mod laws;
mod restart;

use chessclock_protocol::{Button, Capabilities, Hello, Icons, Roles, Text, PROTOCOL_VERSION};

use super::*;
use crate::contract::ControlError;
use crate::timecontrol::parse;

/// Monotonic µs of the rig's instant 0.
const T0: Micros = 1_000_000_000;
/// Wall-clock µs at T0 (2026-12-01T12:00:00Z).
const WALL0: i64 = 1_796_126_400_000_000;
const BOOT: &str = "8b3e3b7e-1c1d-4c61-9d55-0a4b2f1e0c11";

fn mono(ms: i64) -> Micros {
    T0 + ms * MS
}

fn wall(ms: i64) -> i64 {
    WALL0 + ms * MS
}

fn setup() -> BoardSetup {
    BoardSetup {
        id: "b1".into(),
        buttons: Some("serial:BU1".into()),
        displays: vec![DisplaySetup {
            name: "serial:DU1".into(),
            side: crate::display::DisplaySide::Both,
        }],
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: false,
        display: DisplayConfig::default(),
        moves_from_eboard: true,
        default_time_ms: 0,
        resume_after_restart: false,
        pgn_file: false,
        pgn_tags: Default::default(),
        state_notice: None,
    }
}

fn spec(control: &str) -> GameSpec {
    spec_with(control, Settings::default())
}

fn spec_with(control: &str, settings: Settings) -> GameSpec {
    GameSpec {
        text: control.into(),
        control: MatchControl::same(parse(control).unwrap()),
        settings,
    }
}

fn hello(roles: Roles, serial: &str, boot_id: u32, first_unacked_event: u16) -> Hello {
    Hello {
        protocol_version: PROTOCOL_VERSION,
        roles,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            text_chars: 16,
            ..Capabilities::default()
        },
        vendor: Text::truncated("test"),
        model: Text::truncated("unit"),
        serial: Text::truncated(serial),
        firmware: Text::truncated("1.0"),
        boot_id,
        first_unacked_event,
    }
}

/// A restart at `now_ms` in the rig's boot.
fn resumed(now_ms: i64) -> Resumed {
    Resumed {
        boot_id: Some(BOOT.into()),
        now: mono(now_ms),
        wall: wall(now_ms),
    }
}

/// A board under test, with the store's journal beside it.
struct Rig {
    board: Board,
    /// Every record the board asked for, in order (what the store holds).
    journal: Vec<(u64, Record)>,
    next_token: u64,
    /// Every history row released so far (committed).
    history: Vec<HistoryRow>,
}

fn icon_letters(icons: Icons) -> String {
    [
        (Icons::FLAG, 'F'),
        (Icons::FIRST_FLAG, '1'),
        (Icons::STAGE_FLAG, 'S'),
        (Icons::RUNNING, 'R'),
        (Icons::PAUSED, 'P'),
        (Icons::ARBITER, 'A'),
        (Icons::LINK_LOST, 'L'),
        (Icons::NO_BUTTONS, 'N'),
        (Icons::BONUS, 'B'),
    ]
    .iter()
    .filter(|(bit, _)| icons.0 & bit.0 != 0)
    .map(|(_, c)| *c)
    .collect()
}

fn seconds(us: Micros) -> String {
    format!(
        "{}.{:03}",
        us.div_euclid(SECOND),
        us.rem_euclid(SECOND) / MS
    )
}

fn stored_text(event: &StoredEvent) -> String {
    match event {
        StoredEvent::Press { side } => format!("press {side}"),
        StoredEvent::Adjust {
            side,
            remaining_us,
            moves,
            stage,
            source,
            by_us,
        } => format!(
            "adjust {side}{}{}{}{}{}",
            by_us.map_or(String::new(), |b| format!(
                " by {}{}",
                if b < 0 { "-" } else { "+" },
                seconds(b.abs())
            )),
            remaining_us.map_or(String::new(), |r| format!(" remaining {}", seconds(r))),
            moves.map_or(String::new(), |m| format!(" moves {m}")),
            stage.map_or(String::new(), |s| format!(" stage {s}")),
            source.map_or("", |_| " (eboard)")
        ),
        StoredEvent::PressUndone { side, press_at_us } => {
            format!("press-undone {side} pressed@{}", seconds(*press_at_us))
        }
        StoredEvent::Note { text } => format!("note \"{text}\""),
        StoredEvent::Stage { side, stage, first } => {
            format!("stage {side} {stage}{}", if *first { " first" } else { "" })
        }
        StoredEvent::Device {
            role, connected, ..
        } => {
            format!("device {role} {}", if *connected { "up" } else { "down" })
        }
        StoredEvent::StartCancelled { unix_time_us } => {
            format!("start-cancelled {}", seconds(unix_time_us - WALL0))
        }
        StoredEvent::Flag {
            side, last_stage, ..
        } => format!("flag {side}{}", if *last_stage { "" } else { " (stage)" }),
        StoredEvent::FlagWithdrawn { side, flag_at_us } => {
            format!("flag-withdrawn {side} fell@{}", seconds(*flag_at_us))
        }
        StoredEvent::PressNotPlaced { side, device_at_us } => {
            format!("press-not-placed {side} made@{}", seconds(*device_at_us))
        }
        StoredEvent::Restart {
            down_us,
            same_boot,
            was_running,
            ..
        } => format!(
            "restart down {}{}{}",
            seconds(*down_us),
            if *same_boot { " same-boot" } else { " reboot" },
            was_running.map_or(String::new(), |s| format!(" {s} was running"))
        ),
        StoredEvent::StartAt {
            unix_time_us,
            replaces_unix_us,
            ..
        } => format!(
            "start-at {}{}",
            seconds(unix_time_us - WALL0),
            replaces_unix_us.map_or(String::new(), |old| format!(
                " (replaces {})",
                seconds(old - WALL0)
            ))
        ),
        other => serde_json::to_value(other).unwrap()["do"]
            .as_str()
            .unwrap()
            .to_owned(),
    }
}

/// One action as a transcript line.
fn line(action: &Action) -> String {
    match action {
        Action::Device { role, command } => match command {
            DeviceCommand::Display(d) => {
                let text = d.text.as_str();
                format!(
                    "{role}: {}{} | {}{}{}",
                    d.left.time.as_str(),
                    if d.left.icons.0 == 0 {
                        String::new()
                    } else {
                        format!(" [{}]", icon_letters(d.left.icons))
                    },
                    d.right.time.as_str(),
                    if d.right.icons.0 == 0 {
                        String::new()
                    } else {
                        format!(" [{}]", icon_letters(d.right.icons))
                    },
                    if text.is_empty() {
                        String::new()
                    } else {
                        format!(" \"{text}\"")
                    }
                )
            }
            DeviceCommand::Leds(l) => format!(
                "leds {}{}{}",
                if l.left { 'L' } else { '-' },
                if l.right { 'R' } else { '-' },
                if l.arbiter { 'A' } else { '-' }
            ),
            DeviceCommand::Beep { duration_ms, count } => format!("beep {duration_ms}x{count}"),
            DeviceCommand::Ack { event } => format!("{role}: ack {event}"),
        },
        Action::Store { seq, record } => match record {
            Record::NewGame { control, .. } => format!("store {seq}: new-game {control}"),
            Record::Event(row) => format!(
                "store {seq}: {} @{}",
                stored_text(&row.event),
                seconds(row.offset_us)
            ),
            Record::Epoch { epoch, .. } => format!("store {seq}: epoch {}", seconds(epoch - T0)),
        },
        Action::Reply { token, result } => match result {
            Ok(_) => format!("reply {}: ok", token.0),
            Err(error) => format!("reply {}: {}", token.0, error_name(error)),
        },
        Action::Publish(event) => match event {
            BoardEvent::Pressed {
                side,
                move_number,
                used_ms,
                ..
            } => format!("event pressed {side} #{move_number} {used_ms}ms"),
            BoardEvent::FlagFell {
                side,
                at_ms,
                stage,
                last_stage,
                ..
            } => format!(
                "event flag {side} @{} stage {stage}{}",
                seconds((at_ms * MS) - T0),
                if *last_stage { "" } else { " (stage)" }
            ),
            BoardEvent::FlagWithdrawn { side, at_ms, .. } => {
                format!("event flag-withdrawn {side} @{}", seconds(at_ms * MS - T0))
            }
            BoardEvent::PressNotPlaced { side, late_ms, .. } => {
                format!("event press-not-placed {side} {late_ms}ms late")
            }
            BoardEvent::StageChanged { side, stage, .. } => {
                format!("event stage {side} {stage}")
            }
            BoardEvent::DeviceChanged { link, .. } => format!(
                "event device {} {}",
                link.role,
                if link.connected { "up" } else { "down" }
            ),
            BoardEvent::ArbiterCalled { .. } => "event arbiter-called".into(),
            BoardEvent::NewGameOffered { .. } => "event new-game-offered".into(),
            BoardEvent::FlagReport { side, verdict, .. } => {
                format!("event flag-report {side} {verdict}")
            }
            BoardEvent::StateChanged(_) => "event state".into(),
            // Made by the control loop from a history row, never by a board.
            BoardEvent::Recorded { .. } => "event recorded".into(),
        },
        Action::View(_) => "view".into(),
        Action::History(row) => format!(
            "history {} @{}{}",
            stored_text(&row.event),
            seconds(row.t_us),
            if row.outcome.is_empty() {
                String::new()
            } else {
                format!(": {}", row.outcome.join("; "))
            }
        ),
        Action::NewHistory(_) => "new-history".into(),
        Action::ReviseHistory(revision) => format!(
            "revise row {}: {}",
            revision.index,
            revision.outcome.join("; ")
        ),
        Action::Eboard(command) => format!("eboard {command:?}"),
        Action::Pgn(_) => "pgn".into(),
        Action::Running(running) => format!("running {running}"),
    }
}

fn error_name(error: &ControlError) -> String {
    match error {
        ControlError::InvalidArgument(m) => format!("InvalidArgument: {m}"),
        ControlError::InvalidState(m) => format!("InvalidState: {m}"),
        ControlError::NotPermitted(m) => format!("NotPermitted: {m}"),
        ControlError::UnknownBoard(m) => format!("UnknownBoard: {m}"),
        ControlError::NotSynchronized(m) => format!("NotSynchronized: {m}"),
        ControlError::Internal(m) => format!("Internal: {m}"),
    }
}

impl Rig {
    /// A board with a new game of `control`, created at instant 0; its
    /// first actions are checked by [`Rig::created`].
    fn new(control: &str) -> (Rig, Vec<String>) {
        Rig::with(setup(), spec(control))
    }

    fn with(setup: BoardSetup, spec: GameSpec) -> (Rig, Vec<String>) {
        let (board, actions) = Board::new(
            setup,
            spec,
            Some(BOOT.into()),
            Caller::DAEMON,
            mono(0),
            wall(0),
        );
        let mut rig = Rig::around(board);
        let lines = rig.take(actions);
        (rig, lines)
    }

    /// Everything settled: the game created, committed, both units linked.
    fn linked(control: &str) -> Rig {
        Rig::linked_with(setup(), spec(control))
    }

    fn linked_with(setup: BoardSetup, spec: GameSpec) -> Rig {
        let (mut rig, _) = Rig::with(setup, spec);
        rig.commit_all(0);
        rig.step(
            0,
            BoardInput::Device(DeviceInput::Connected {
                role: DeviceRole::Buttons,
                hello: hello(Roles::BUTTONS, "BU1", 7, 0),
                path: "/dev/pts/1".into(),
            }),
        );
        rig.step(
            0,
            BoardInput::Device(DeviceInput::Connected {
                role: DeviceRole::Display(0),
                hello: hello(Roles::DISPLAY, "DU1", 9, 0),
                path: "/dev/pts/2".into(),
            }),
        );
        rig
    }

    /// [`Rig::linked_with`] the default setup, the game started at 0 and
    /// committed.
    fn started_with(control: &str, settings: Settings) -> Rig {
        let mut rig = Rig::linked_with(setup(), spec_with(control, settings));
        rig.command(0, BoardCommand::Start);
        rig.commit_all(0);
        rig
    }

    /// A rig around a board restored from `stored` as of `run`.
    fn restored(
        setup: BoardSetup,
        spec: GameSpec,
        stored: &crate::journal::StoredGame,
        run: &Resumed,
    ) -> Rig {
        let (board, actions) = Board::restore(setup, spec, stored, run);
        let mut rig = Rig::around(board);
        rig.take(actions);
        rig
    }

    /// Ticks at every deadline up to `until_ms`: `(ms, lines)` per tick.
    fn run_deadlines(&mut self, until_ms: i64) -> Vec<(i64, Vec<String>)> {
        let mut ticks = Vec::new();
        while let Some(deadline) = self.board.next_deadline() {
            if deadline > mono(until_ms) {
                break;
            }
            let actions = self
                .board
                .handle(deadline, wall((deadline - T0) / MS), BoardInput::Tick);
            ticks.push(((deadline - T0) / MS, self.take(actions)));
        }
        ticks
    }

    /// A rig around a board (a restored one).
    fn around(board: Board) -> Rig {
        Rig {
            board,
            journal: Vec::new(),
            next_token: 1,
            history: Vec::new(),
        }
    }

    fn take(&mut self, actions: Vec<Action>) -> Vec<String> {
        every_event_follows_its_view(&actions);
        for action in &actions {
            match action {
                Action::Store { seq, record } => self.journal.push((*seq, record.clone())),
                Action::History(row) => self.history.push((**row).clone()),
                Action::NewHistory(_) => self.history.clear(),
                _ => {}
            }
        }
        actions.iter().map(line).collect()
    }

    fn step(&mut self, at_ms: i64, input: BoardInput) -> Vec<String> {
        let actions = self.board.handle(mono(at_ms), wall(at_ms), input);
        self.take(actions)
    }

    /// Every record so far is committed.
    fn commit_all(&mut self, at_ms: i64) -> Vec<String> {
        match self.journal.last() {
            Some(&(seq, _)) => self.step(at_ms, BoardInput::Committed { seq, ok: true }),
            None => Vec::new(),
        }
    }

    /// Every record so far is committed, and the commit revises a history
    /// row as `revision` says (a `revise row N: ...` line): a late input
    /// re-ran the game.
    fn commit_revising(&mut self, at_ms: i64, revision: &str) {
        let lines = self.commit_all(at_ms);
        assert!(
            lines.iter().any(|line| line == revision),
            "no `{revision}` in {lines:?}"
        );
    }

    fn token(&mut self) -> Option<ReplyToken> {
        let token = ReplyToken(self.next_token);
        self.next_token += 1;
        Some(token)
    }

    fn command(&mut self, at_ms: i64, command: BoardCommand) -> Vec<String> {
        let token = self.token();
        self.step(
            at_ms,
            BoardInput::Command {
                token,
                caller: Caller::uid(1000),
                command,
            },
        )
    }

    /// A command by a named caller (a hall arbiter, an account name).
    fn command_as(&mut self, at_ms: i64, name: &str, command: BoardCommand) -> Vec<String> {
        let token = self.token();
        self.step(
            at_ms,
            BoardInput::Command {
                token,
                caller: Caller {
                    uid: Some(1000),
                    name: Some(name.to_owned()),
                },
                command,
            },
        )
    }

    /// A button frame of unit BU1 (boot 7): `event`, made at `made_ms`,
    /// read at `at_ms`.
    fn button(&mut self, at_ms: i64, event: u16, button: Button, made_ms: i64) -> Vec<String> {
        self.step(
            at_ms,
            BoardInput::Device(DeviceInput::Button {
                role: DeviceRole::Buttons,
                serial: "BU1".into(),
                event,
                button,
                pressed: true,
                at: mono(made_ms),
                arrival: mono(at_ms),
            }),
        )
    }

    fn tick(&mut self, at_ms: i64) -> Vec<String> {
        self.step(at_ms, BoardInput::Tick)
    }

    /// The state's instant `at_ms`.
    fn state(&self, at_ms: i64) -> ClockState {
        self.board.state(mono(at_ms))
    }

    /// The next deadline, in ms after the rig's start.
    fn deadline_ms(&self) -> Option<f64> {
        self.board
            .next_deadline()
            .map(|d| (d - T0) as f64 / MS as f64)
    }

    /// The stored game as the store would load it now.
    fn stored(&self, alive_ms: i64) -> crate::journal::StoredGame {
        let mut game = crate::journal::StoredGame {
            id: 1,
            board: "b1".into(),
            control: String::new(),
            settings: Settings::default(),
            created_wall_us: 0,
            caller_uid: None,
            alive_offset_us: 0,
            alive_wall_us: 0,
            boot_id: None,
            epoch_mono_us: None,
            events: Vec::new(),
        };
        for (_, record) in &self.journal {
            match record {
                Record::NewGame {
                    control,
                    settings,
                    epoch,
                    caller_uid,
                    wall_us,
                    boot_id,
                } => {
                    game.control.clone_from(control);
                    game.settings = *settings;
                    game.created_wall_us = *wall_us;
                    game.caller_uid = *caller_uid;
                    game.boot_id.clone_from(boot_id);
                    game.epoch_mono_us = Some(*epoch);
                    game.events.clear();
                }
                Record::Event(row) => game.events.push(row.clone()),
                Record::Epoch { epoch, boot_id, .. } => {
                    game.epoch_mono_us = Some(*epoch);
                    game.boot_id.clone_from(boot_id);
                }
            }
        }
        let alive = alive_ms * MS;
        game.alive_offset_us = game
            .events
            .iter()
            .map(|r| r.offset_us)
            .max()
            .unwrap_or(0)
            .max(alive);
        game.alive_wall_us = wall(alive_ms);
        game
    }
}

/// The promise of `Outbox::publish`, checked on every step of every
/// transcript: a board event goes out only behind a view taken after it was
/// raised, so a listener that reads the board on hearing the event sees
/// what it announces. An event raised by an input is released with the
/// input's view, so that view comes before it in the same release.
fn every_event_follows_its_view(actions: &[Action]) {
    let mut viewed = false;
    for action in actions {
        match action {
            Action::View(_) => viewed = true,
            Action::Publish(_) => assert!(
                viewed,
                "an event ahead of the view that shows it: {:?}",
                actions.iter().map(line).collect::<Vec<_>>()
            ),
            _ => {}
        }
    }
}

macro_rules! step {
    ($rig:expr, $lines:expr => [$($line:expr),* $(,)?]) => {{
        let got: Vec<String> = $lines;
        let want: Vec<&str> = vec![$($line),*];
        assert_eq!(got, want, "\ngot:\n{}\n", got.join("\n"));
    }};
}
pub(crate) use step;

#[test]
fn a_new_game_is_recorded_and_reported_after_its_commit() {
    let (mut rig, created) = Rig::new("300+2");
    // Readers see the new board at once; its record follows.
    step!(rig, created => [
        "store 0: new-game 300+2",
        "new-history",
        "pgn",
        // No unit is linked yet: nothing is sent to one.
        "view",
    ]);
    step!(rig, rig.commit_all(0) => ["view"]);
}

#[test]
fn presses_account_at_their_device_instant_and_are_acknowledged_after_the_commit() {
    let mut rig = Rig::linked("300+2");
    step!(rig, rig.command(1_000, BoardCommand::Start) => [
        "store 1: start @1.000",
        "running true",
        "display0: 5:02 [R] | 5:02",
        "leds L--",
    ]);
    step!(rig, rig.commit_all(1_000) => [
        "history start @1.000: White's clock started",
        "pgn",
        "view",
        "reply 1: ok",
    ]);
    // White presses at 13.5 s; the frame is read 20 ms later.
    step!(rig, rig.button(13_520, 0, Button::Left, 13_500) => [
        "store 2: press white @13.500",
        "display0: 4:52 | 5:02 [R]",
        "leds -R-",
    ]);
    step!(rig, rig.commit_all(13_530) => [
        "history press white @13.500: white completed move 1 in 12.500 s",
        "buttons: ack 0",
        "pgn",
        "view",
        "event pressed white #1 12500ms",
    ]);
    assert_eq!(rig.state(13_530).black.used, 30 * MS);
}

/// A press that comes after White's flag time with no tick in between: the
/// flag's record is written before the press's, and the store may commit
/// the two apart. The flag's event waits for the input's view all the same
/// (behind the press's record): released by the first commit, it would
/// reach a listener whose read still showed the flag standing up.
#[test]
fn an_event_waits_for_its_inputs_view_when_the_input_writes_several_records() {
    let mut rig = Rig::linked("1");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    step!(rig, rig.button(1_500, 0, Button::Left, 1_500) => [
        "store 2: flag white @1.000",
        "store 3: press white @1.500",
        "display0: 0:00.0 [F1] | 0:01.0 [R]",
        "leds -R-",
    ]);
    // The flag's record alone is committed: its row, nothing announced.
    step!(rig, rig.step(1_501, BoardInput::Committed { seq: 2, ok: true }) => [
        "history flag white @1.000: white's flag fell at 1.000 s in stage 1",
    ]);
    step!(rig, rig.step(1_502, BoardInput::Committed { seq: 3, ok: true }) => [
        "history press white @1.500: white completed move 1 in 1.500 s",
        "buttons: ack 0",
        "pgn",
        "view",
        "event flag white @1.000 stage 1",
        "event pressed white #1 1500ms",
    ]);
}

#[test]
fn black_press_starts_white_clock_when_the_board_says_so() {
    let mut board_setup = setup();
    board_setup.start_on_black_press = true;
    let mut rig = Rig::linked_with(board_setup, spec("180+2"));
    step!(rig, rig.button(2_000, 0, Button::Right, 2_000) => [
        "store 1: start @2.000",
        "running true",
        "display0: 3:02 [R] | 3:02",
        "leds L--",
    ]);
    step!(rig, rig.commit_all(2_000) => [
        "history start @2.000: White's clock started",
        "buttons: ack 0",
        "pgn",
        "view",
    ]);
    // A second press of Black's is a press, not a start.
    let lines = rig.button(3_000, 1, Button::Right, 3_000);
    assert_eq!(lines[0], "store 2: press black @3.000");
    assert!(rig.state(3_000).running == Some(Side::White));
}

#[test]
fn a_scheduled_start_starts_white_at_its_instant() {
    let mut rig = Rig::linked("900+10");
    step!(rig, rig.command(0, BoardCommand::StartAt { unix_time_us: wall(90_000), forced: false }) => [
        "store 1: start-at 90.000 @0.000",
        // The displays count down to the start.
        "display0: 15:10 | 15:10 \"START 1:30\"",
    ]);
    step!(rig, rig.commit_all(0) => [
        "history start-at 90.000 @0.000",
        "view",
        "reply 1: ok",
    ]);
    // The countdown changes every second.
    assert_eq!(rig.deadline_ms(), Some(1_000.0));
    step!(rig, rig.tick(1_000) => ["display0: 15:10 | 15:10 \"START 1:29\""]);
    step!(rig, rig.tick(89_000) => ["display0: 15:10 | 15:10 \"START 0:01\""]);
    assert_eq!(rig.deadline_ms(), Some(90_000.0));
    // Woken a little late: the start is at its instant all the same.
    step!(rig, rig.tick(90_004) => [
        "store 2: start @90.000",
        "running true",
        "display0: 15:10 [R] | 15:10",
        "leds L--",
    ]);
    let state = rig.state(100_000);
    assert_eq!(state.white.used, 10 * SECOND);
}

#[test]
fn a_reply_waits_for_its_commit_and_a_failed_commit_is_an_error_without_ack() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.button(5_000, 0, Button::Left, 5_000);
    let lines = rig.step(5_001, BoardInput::Committed { seq: 2, ok: false });
    assert!(!lines.iter().any(|l| l.contains("ack")), "{lines:?}");
    let lines = rig.command(6_000, BoardCommand::Pause);
    assert_eq!(
        lines,
        [
            "store 3: pause @6.000",
            "running false",
            "display0: 4:55 [P] | 4:59 [P] \"PAUSE\"",
            "leds ---"
        ]
    );
    let lines = rig.step(6_001, BoardInput::Committed { seq: 3, ok: false });
    assert!(
        lines.iter().any(|l| l.starts_with("reply 2: Internal: the change was made but could not be saved")),
        "{lines:?}"
    );
}

#[test]
fn a_refused_command_changes_nothing_and_says_why() {
    let mut rig = Rig::linked("300");
    step!(rig, rig.command(0, BoardCommand::Adjust { side: Side::White, remaining_ms: None, moves: None, stage: Some(2) }) => [
        "reply 1: InvalidArgument: white's control `300` has only one stage: stage 2 does not exist",
    ]);
    step!(rig, rig.command(0, BoardCommand::Adjust { side: Side::White, remaining_ms: Some(9_999_999_999_999_999), moves: None, stage: None }) => [
        "reply 2: InvalidArgument: a remaining time of 9999999999999999 ms is more than a game can have (at most 100 h)",
    ]);
    step!(rig, rig.command(0, BoardCommand::Adjust { side: Side::Black, remaining_ms: None, moves: Some(1_000), stage: None }) => [
        "reply 3: InvalidArgument: 1000 moves is more than a game can have (at most 999)",
    ]);
    assert!(rig
        .journal
        .iter()
        .all(|(_, r)| !matches!(r, Record::Event(_))));
}
