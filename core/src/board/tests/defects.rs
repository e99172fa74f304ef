//! Regression transcripts, each named after a defect found from outside.

use super::*;

/// White has 1.0 s and presses 150 ms before the flag; the frame reaches the
/// host 300 ms late (a lost frame and its resend). The press counts at its
/// instant: the flag, shown for a moment, is withdrawn, and the record keeps
/// both.
#[test]
fn a_late_press_before_a_flag_counts_and_withdraws_the_flag() {
    let mut rig = Rig::linked("1");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    assert_eq!(rig.deadline_ms(), Some(100.0), "the display's next tenth");
    // The flag falls at 1.000 s and is shown at once.
    // Sudden death without increment: White's clock stays the running one
    // (at zero) until White presses; no freeze.
    step!(rig, rig.tick(1_000) => [
        "store 2: flag white @1.000",
        "display0: 0:00.0 [F1R] | 0:01.0",
    ]);
    step!(rig, rig.commit_all(1_001) => [
        "history flag white @1.000: white's flag fell at 1.000 s in stage 1",
        "event flag white @1.000 stage 1",
        "pgn",
        "view",
    ]);
    // The press made at 0.850 s arrives at 1.150 s.
    step!(rig, rig.button(1_150, 0, Button::Left, 850) => [
        "store 3: press white @0.850",
        "store 4: flag-withdrawn white fell@1.000 @0.850",
        "display0: 0:00.2 | 0:00.7 [R]",
        "leds -R-",
    ]);
    step!(rig, rig.commit_all(1_151) => [
        "history press white @0.850: white completed move 1 in 0.850 s",
        "history flag-withdrawn white fell@1.000 @0.850",
        "event flag-withdrawn white @1.000",
        "event pressed white #1 850ms",
        "buttons: ack 0",
        "pgn",
        "view",
    ]);
    let state = rig.state(1_150);
    assert!(state.flags.is_empty());
    assert_eq!(state.white.remaining, Some(150 * MS));
    assert_eq!(state.black.remaining, Some(700 * MS));
}

/// A press made before an arbiter's pause, whose frame arrives after it, is
/// a press: not "ignored: Paused".
#[test]
fn a_press_made_before_an_arbiter_pause_counts() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.command(10_000, BoardCommand::Pause);
    rig.commit_all(10_000);
    step!(rig, rig.button(10_080, 0, Button::Left, 9_950) => [
        "store 3: press white @9.950",
        "display0: 4:51 [P] | 5:00 [P] \"PAUSE\"",
    ]);
    // The pause's row now says what it does after the press.
    let lines = rig.commit_all(10_080);
    assert!(
        lines.contains(&"revise row 1: clock paused".to_owned()),
        "{lines:?}"
    );
    let state = rig.state(20_000);
    assert!(state.paused);
    assert_eq!(state.white.moves, 1);
    assert_eq!(state.white.used, 9_950 * MS);
    assert_eq!(state.black.used, 50 * MS);
    assert_eq!(state.to_move, Some(Side::Black));
}

/// A press whose frame comes later than the placement window is recorded
/// and shown to the arbiter, not applied.
#[test]
fn a_press_beyond_the_window_is_recorded_not_applied() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.command(20_000, BoardCommand::Pause);
    rig.commit_all(20_000);
    step!(rig, rig.button(26_000, 0, Button::Left, 10_000) => [
        "store 3: press-not-placed white made@10.000 @26.000",
    ]);
    step!(rig, rig.commit_all(26_000) => [
        "history press-not-placed white made@10.000 @26.000",
        "event press-not-placed white 16000ms late",
        "buttons: ack 0",
        "view",
    ]);
    assert_eq!(rig.state(26_000).white.moves, 0);
    assert_eq!(rig.board.model(mono(26_000)).unplaced_presses, 1);
}

/// A resent press (its ACK was lost) is acknowledged again, not counted.
#[test]
fn a_resent_press_is_acknowledged_once_more_and_not_counted() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.button(4_000, 0, Button::Left, 4_000);
    // Resent before the commit: its ACK comes with the commit.
    step!(rig, rig.button(4_100, 0, Button::Left, 4_000) => []);
    rig.commit_all(4_101);
    // Resent after the commit (the ACK was lost): ACK again at once.
    step!(rig, rig.button(4_200, 0, Button::Left, 4_000) => ["buttons: ack 0"]);
    assert_eq!(rig.state(4_200).white.moves, 1);
    // An event ahead of a missing one is dropped without an ACK.
    step!(rig, rig.button(4_300, 2, Button::Right, 4_250) => []);
    assert_eq!(rig.state(4_300).black.moves, 0);
}

/// `adjust --remaining 9999999999999999` on the running side used to spin
/// the timing thread; every value is bounded and `next_deadline` is always
/// after the processed instant.
#[test]
fn a_huge_correction_is_refused_and_the_deadline_is_never_behind() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    let lines = rig.command(
        1_000,
        BoardCommand::Adjust {
            side: Side::White,
            remaining_ms: Some(9_999_999_999_999_999),
            moves: None,
            stage: None,
        },
    );
    assert!(
        lines[0].starts_with("reply 2: InvalidArgument"),
        "{lines:?}"
    );
    assert!(
        lines[1..].iter().all(|l| l.starts_with("display0")),
        "only the face moves on: {lines:?}"
    );
    // The longest correction a game can have is accepted, and the next
    // deadline is after now.
    rig.command(
        1_000,
        BoardCommand::Adjust {
            side: Side::White,
            remaining_ms: Some(MAX_TIME / MS),
            moves: None,
            stage: None,
        },
    );
    let deadline = rig.board.next_deadline().unwrap();
    assert!(deadline > mono(1_000));
}

/// Stage advance "at the flag": a side whose flag falls twice keeps its
/// place and its first instant; every fall is in the record.
#[test]
fn a_flag_that_falls_twice_keeps_the_order_and_every_instant() {
    let settings = Settings {
        stage_advance: crate::engine::StageAdvance::Flag,
        ..Settings::default()
    };
    let mut rig = Rig::linked_with(setup(), spec_with("2/2:2/2:60", settings));
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.tick(2_000); // White's stage flag at 2 s: both sides get stage 2
    rig.commit_all(2_000);
    rig.tick(4_000); // White's second stage flag at 4 s
    rig.commit_all(4_000);
    let model = rig.board.model(mono(4_000));
    let falls: Vec<(Side, Micros)> = model.flag_falls.iter().map(|f| (f.side, f.at)).collect();
    assert_eq!(
        falls,
        [(Side::White, 2 * SECOND), (Side::White, 4 * SECOND)]
    );
    let state = rig.state(4_000);
    assert_eq!(state.flags, [Side::White]);
    assert_eq!(
        state.white.flag_at,
        Some(2 * SECOND),
        "the first instant is kept"
    );
}
