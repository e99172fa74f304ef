//! Restarts: the game comes back paused (Art. 6.10a) with the true time
//! charged within one boot, presses made during the outage placed at their
//! instants, and resent presses recognised.

use super::*;

/// A game running at a kill -9 at 12 s, restarted at 14.5 s in the same
/// boot: White is charged up to 14.5 s, then the game is paused.
#[test]
fn restart_in_the_same_boot_charges_the_true_time_and_comes_back_paused() {
    let mut rig = Rig::linked("300");
    rig.command(1_000, BoardCommand::Start);
    rig.commit_all(1_000);
    rig.button(6_000, 0, Button::Left, 6_000);
    rig.commit_all(6_000);
    // Black runs; the daemon dies at 12 s (last alive checkpoint 12 s).
    let stored = rig.stored(12_000);
    let (board, actions) = Board::restore(setup(), spec("300"), &stored, &resumed(14_500));
    let lines: Vec<String> = actions.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            "new-history",
            "history start @1.000: White's clock started",
            "history press white @6.000: white completed move 1 in 5.000 s",
            "store 0: epoch 0.000",
            "store 1: restart down 2.500 same-boot black was running @14.500",
            "store 2: pause @14.500",
            "pgn",
            // No unit is linked yet after the restart: nothing is sent.
            "view",
        ]
    );
    let state = board.state(mono(20_000));
    assert!(state.paused);
    assert_eq!(state.white.used, 5 * SECOND);
    assert_eq!(state.black.used, 8_500 * MS, "charged up to the restart");
    let model = board.model(mono(20_000));
    let restart = model.restart.unwrap();
    assert!(restart.same_boot);
    assert_eq!(restart.down, 2_500 * MS);
    assert_eq!(restart.was_running, Some(Side::Black));
}

/// Black pressed during the outage (at 13 s); the unit resends the press
/// after the daemon is back: it is placed at 13 s, before the restart's
/// pause.
#[test]
fn a_press_made_during_the_outage_is_placed_at_its_instant() {
    let mut rig = Rig::linked("300");
    rig.command(1_000, BoardCommand::Start);
    rig.commit_all(1_000);
    rig.button(6_000, 0, Button::Left, 6_000);
    rig.commit_all(6_000);
    let stored = rig.stored(12_000);
    let mut rig = Rig::restored(setup(), spec("300"), &stored, &resumed(20_000));
    rig.commit_all(20_000);
    rig.step(
        20_010,
        BoardInput::Device(DeviceInput::Connected {
            role: DeviceRole::Buttons,
            hello: hello(Roles::BUTTONS, "BU1", 7, 1),
            path: "/dev/pts/1".into(),
        }),
    );
    // The resent press, made 7 s ago: within the outage.
    let lines = rig.button(20_020, 1, Button::Right, 13_000);
    // (Row 3 is the button unit's link coming back.)
    assert_eq!(lines[0], "store 4: press black @13.000", "{lines:?}");
    let state = rig.state(25_000);
    assert!(state.paused, "still paused for the arbiter");
    assert_eq!(state.black.used, 7 * SECOND);
    assert_eq!(
        state.white.used,
        5 * SECOND + 7 * SECOND,
        "White ran from 13 s to the restart"
    );
    assert_eq!(state.black.moves, 1);
}

/// A press committed before the crash whose ACK was lost is resent after
/// the restart: acknowledged, not counted again.
#[test]
fn a_press_committed_before_the_crash_and_resent_is_not_counted_twice() {
    let mut rig = Rig::linked("300");
    rig.command(1_000, BoardCommand::Start);
    rig.commit_all(1_000);
    rig.button(6_000, 0, Button::Left, 6_000);
    rig.commit_all(6_000);
    let stored = rig.stored(7_000);
    let mut rig = Rig::restored(setup(), spec("300"), &stored, &resumed(8_000));
    rig.commit_all(8_000);
    // Same unit, same boot, still holding event 0.
    rig.step(
        8_010,
        BoardInput::Device(DeviceInput::Connected {
            role: DeviceRole::Buttons,
            hello: hello(Roles::BUTTONS, "BU1", 7, 0),
            path: "/dev/pts/1".into(),
        }),
    );
    rig.commit_all(8_010);
    step!(rig, rig.button(8_020, 0, Button::Left, 6_000) => ["buttons: ack 0"]);
    assert_eq!(rig.state(8_020).white.moves, 1);
}

/// After a reboot the monotonic clock starts afresh: the game continues
/// from its last checkpoint, the down time is the wall-clock gap.
#[test]
fn restart_after_a_reboot_continues_from_the_last_checkpoint() {
    let mut rig = Rig::linked("300");
    rig.command(1_000, BoardCommand::Start);
    rig.commit_all(1_000);
    let stored = rig.stored(11_000);
    // The new boot's monotonic clock is near 0; wall time went on 60 s.
    let resumed = Resumed {
        boot_id: Some("another-boot".into()),
        now: 5 * SECOND,
        wall: wall(71_000),
    };
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed);
    let state = board.state(5 * SECOND + 10 * SECOND);
    assert!(state.paused);
    assert_eq!(
        state.white.used,
        10 * SECOND,
        "charged up to the last checkpoint only"
    );
    let restart = board.model(5 * SECOND).restart.unwrap();
    assert!(!restart.same_boot);
    assert_eq!(restart.down, 60 * SECOND);
}

/// A game restored twice gives the same engine state (the journal replays
/// deterministically, late presses included).
#[test]
fn a_late_press_replays_the_same_after_a_restart() {
    let mut rig = Rig::linked("1");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.tick(1_000);
    rig.commit_all(1_000);
    rig.button(1_150, 0, Button::Left, 850);
    rig.commit_all(1_150);
    let live = rig.state(1_150);
    let stored = rig.stored(1_150);
    let mut setup = setup();
    setup.resume_after_restart = true;
    let (board, _) = Board::restore(setup, spec("1"), &stored, &resumed(1_150));
    assert_eq!(board.state(mono(1_150)), live);
    assert!(board.model(mono(1_150)).flag_falls.is_empty());
}
