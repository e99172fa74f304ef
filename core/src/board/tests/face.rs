//! The clock face and the device slots: what the displays, LEDs and buzzers
//! are sent, and when, as devices come and go and the config changes.

use super::*;

fn connect(rig: &mut Rig, at_ms: i64, role: DeviceRole, hello: Hello) -> Vec<String> {
    rig.step(
        at_ms,
        BoardInput::Device(DeviceInput::Connected {
            role,
            hello,
            path: "/dev/pts/9".into(),
        }),
    )
}

fn disconnect(rig: &mut Rig, at_ms: i64, role: DeviceRole) -> Vec<String> {
    rig.step(
        at_ms,
        BoardInput::Device(DeviceInput::Disconnected {
            role,
            reason: "unplugged".into(),
        }),
    )
}

/// A whole game to the flag: presses at their instants, the display's
/// seconds change at their exact instants, the flag at its instant.
#[test]
fn a_whole_game_to_the_flag_with_exact_times() {
    let mut rig = Rig::linked("3");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.button(1_000, 0, Button::Left, 1_000);
    rig.commit_all(1_000);
    // Black has 3 s: 3.0 s is shown as "0:03"; tenths from below 20 s.
    let state = rig.state(1_000);
    assert_eq!(state.black.remaining, Some(3 * SECOND));
    assert_eq!(
        rig.deadline_ms(),
        Some(1_100.0),
        "the next tenth on Black's clock"
    );
    step!(rig, rig.tick(1_100) => ["display0: 0:02.0 | 0:02.9 [R]"]);
    rig.button(2_500, 1, Button::Right, 2_500);
    rig.commit_all(2_500);
    // White: 2 s left at 2.5 s; the flag at 4.5 s exactly.
    let due = rig.run_deadlines(5_000);
    let flag = due
        .iter()
        .find(|(_, lines)| {
            lines
                .iter()
                .any(|l| l.starts_with("store") && l.contains("flag"))
        })
        .unwrap();
    assert_eq!(flag.0, 4_500, "{due:?}");
    assert_eq!(rig.state(4_500).white.flag_at, Some(4_500 * MS));
    assert_eq!(rig.state(4_500).white.used, 3 * SECOND);
}

/// A replugged display is restored at once; a lost button unit shows on
/// the displays; times never move.
#[test]
fn unplug_and_replug_keep_times_and_restore_the_display() {
    let mut rig = Rig::linked("60");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.button(100, 0, Button::Left, 100);
    rig.commit_all(100);
    // During a game each link lost or back is a row of the record.
    step!(rig, disconnect(&mut rig, 200, DeviceRole::Display(0)) => [
        "store 3: device display down @0.200",
    ]);
    step!(rig, rig.commit_all(200) => [
        "history device display down @0.200",
        "view",
        "event device display down",
    ]);
    step!(rig, connect(&mut rig, 300, DeviceRole::Display(0), hello(Roles::DISPLAY, "DU1", 9, 0)) => [
        "store 4: device display up @0.300",
        "display0: 1:00 | 1:00 [R]",
    ]);
    rig.commit_all(300);
    step!(rig, disconnect(&mut rig, 400, DeviceRole::Buttons) => [
        "store 5: device buttons down @0.400",
        "display0: 1:00 [N] | 1:00 [RN] \"NO BUTTONS\"",
    ]);
    let text: Vec<String> = rig
        .commit_all(400)
        .into_iter()
        .filter(|l| l.starts_with("history"))
        .collect();
    assert_eq!(text, ["history device buttons down @0.400"]);
    let state = rig.state(400);
    assert_eq!(state.white.used, 100 * MS);
    assert_eq!(state.running, Some(Side::Black));
}

/// Refused frames are counted in the slot's view and change nothing else.
#[test]
fn refused_frames_are_counted_and_change_nothing_else() {
    let mut rig = Rig::linked("60");
    let before = rig.state(10);
    step!(rig, rig.step(10, BoardInput::Device(DeviceInput::Errors { role: DeviceRole::Buttons, count: 7 })) => [
        "view",
    ]);
    assert_eq!(rig.state(10), before);
    assert_eq!(rig.board.model(mono(10)).devices[0].errors, 7);
}

/// White sits at the right-hand button: the left button is Black's and
/// White's time is on the right panel.
#[test]
fn white_sits_at_the_configured_button() {
    let mut board_setup = setup();
    board_setup.white_button = ButtonSide::Right;
    let mut rig = Rig::linked_with(board_setup, spec("60"));
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    // The left button is Black's: not running, ignored (recorded, acked).
    let lines = rig.button(5, 0, Button::Left, 5);
    assert_eq!(lines, ["store 2: press black @0.005"]);
    let lines = rig.commit_all(5);
    assert!(
        lines.contains(
            &"history press black @0.005: ignored: that side's clock is not running".to_owned()
        ),
        "{lines:?}"
    );
    step!(rig, rig.button(10, 1, Button::Right, 10) => [
        "store 3: press white @0.010",
        "display0: 1:00 [R] | 1:00",
        "leds L--",
    ]);
}

/// A stage passed beeps only when configured (on units with a buzzer).
#[test]
fn beeps_only_when_configured() {
    for beep_on_control in [false, true] {
        let mut board_setup = setup();
        board_setup.display.beep_on_control = beep_on_control;
        let (mut rig, _) = Rig::with(board_setup, spec("1/60:60"));
        rig.commit_all(0);
        let mut buzzer = hello(Roles::BUTTONS, "BU1", 7, 0);
        buzzer.capabilities.buzzer = true;
        connect(&mut rig, 0, DeviceRole::Buttons, buzzer);
        rig.command(0, BoardCommand::Start);
        rig.commit_all(0);
        let lines = rig.button(10, 0, Button::Left, 10);
        let beeps = lines.iter().filter(|l| l.starts_with("beep")).count();
        assert_eq!(beeps, usize::from(beep_on_control), "{lines:?}");
        assert_eq!(rig.state(10).white.stage, 2);
    }
}

/// The last seconds beep once each when configured.
#[test]
fn beeps_in_the_last_seconds_when_configured() {
    let mut board_setup = setup();
    board_setup.display.beep_last_seconds = 3;
    let (mut rig, _) = Rig::with(board_setup, spec("5"));
    rig.commit_all(0);
    let mut buzzer = hello(Roles::BUTTONS, "BU1", 7, 0);
    buzzer.capabilities.buzzer = true;
    connect(&mut rig, 0, DeviceRole::Buttons, buzzer);
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    let beeps: Vec<i64> = rig
        .run_deadlines(6_000)
        .into_iter()
        .filter(|(_, lines)| lines.iter().any(|l| l.starts_with("beep")))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(beeps, [2_000, 3_000, 4_000], "3, 2 and 1 seconds left");
}

/// Art. 6.7: past the default time without a move, the side is flagged
/// for the arbiter in the State view.
#[test]
fn the_default_time_overrun_is_shown_to_the_arbiter() {
    let mut board_setup = setup();
    board_setup.default_time_ms = 30;
    let mut rig = Rig::linked_with(board_setup, spec("60"));
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    let model = rig.board.model(mono(0));
    assert!(model.state_view(mono(30)).default_time_overrun.is_empty());
    assert_eq!(
        model.state_view(mono(31)).default_time_overrun,
        [Side::White]
    );
    rig.command(40, BoardCommand::Press(Side::White));
    rig.commit_all(40);
    let model = rig.board.model(mono(40));
    assert_eq!(
        model.state_view(mono(41)).default_time_overrun,
        [Side::Black]
    );
}

/// SIGHUP: a board without a game in progress takes the new control; a
/// running game keeps its own.
#[test]
fn a_reload_applies_only_to_a_board_without_a_game() {
    let mut rig = Rig::linked("60");
    let mut reloaded = setup();
    reloaded.white_button = ButtonSide::Right;
    let lines = rig.step(
        10,
        BoardInput::Reconfigure(Box::new(reloaded.clone()), Box::new(spec("120"))),
    );
    assert_eq!(lines[0], "store 1: new-game 120", "{lines:?}");
    rig.commit_all(10);
    assert_eq!(rig.state(10).white.remaining, Some(120 * SECOND));
    rig.command(20, BoardCommand::Start);
    rig.commit_all(20);
    rig.step(
        30,
        BoardInput::Reconfigure(Box::new(reloaded), Box::new(spec("300"))),
    );
    assert_eq!(
        rig.board.model(mono(30)).control,
        "120",
        "a running game keeps its control"
    );
}

/// `resume-after-restart = true`: the clock runs on after a restart.
#[test]
fn resume_after_restart_keeps_the_clock_running_when_configured() {
    let mut rig = Rig::linked("300");
    rig.command(1_000, BoardCommand::Start);
    rig.commit_all(1_000);
    let stored = rig.stored(5_000);
    let mut board_setup = setup();
    board_setup.resume_after_restart = true;
    let (board, _) = Board::restore(
        board_setup,
        spec("300"),
        &stored,
        &Resumed {
            boot_id: Some(BOOT.into()),
            now: mono(6_000),
            wall: wall(6_000),
        },
    );
    let state = board.state(mono(7_000));
    assert_eq!(state.running, Some(Side::White));
    assert_eq!(state.white.used, 6 * SECOND);
}

/// Hourglass: the waiting side's time grows on the display too.
#[test]
fn hourglass_shows_the_waiting_side_growing() {
    let mut rig = Rig::linked("*30");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    // Black's 30 s grows to 30.x: shown "0:31" from the first microsecond.
    assert_eq!(rig.board.next_deadline(), Some(mono(0) + 1));
    let lines = rig.board.handle(mono(0) + 1, wall(0), BoardInput::Tick);
    assert_eq!(rig.take(lines), ["display0: 0:30 [R] | 0:31"]);
}

/// Byo-yomi: the first period shows the moment it begins, with the periods
/// left in the State view.
#[test]
fn a_byo_yomi_period_shows_as_soon_as_it_begins() {
    let mut rig = Rig::linked("byoyomi:2:3x5");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    let mut at = 0;
    while let Some(deadline) = rig.board.next_deadline() {
        if deadline > mono(2_000) {
            break;
        }
        at = deadline;
        let actions = rig.board.handle(deadline, wall(0), BoardInput::Tick);
        rig.take(actions);
    }
    assert_eq!(at, mono(2_000), "the main time's end is a deadline");
    let actions = rig.board.handle(mono(2_000), wall(0), BoardInput::Tick);
    let _ = rig.take(actions);
    let view = rig.board.model(mono(2_000)).state_view(mono(2_000));
    assert_eq!(view.white.stage, 2);
    assert_eq!(view.white.periods_left, Some(3));
    assert_eq!(view.white.remaining_ms, Some(5_000));
}
