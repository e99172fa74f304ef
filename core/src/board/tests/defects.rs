//! Regression transcripts, each named after a defect found from outside.

use super::*;

/// Stage advance "at the flag": both sides' next stage when a flag falls.
fn flag_advance() -> Settings {
    Settings {
        stage_advance: crate::engine::StageAdvance::Flag,
        ..Settings::default()
    }
}

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
        "pgn",
        "view",
        "event flag white @1.000 stage 1",
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
        "buttons: ack 0",
        "pgn",
        "view",
        "event flag-withdrawn white @1.000",
        "event pressed white #1 850ms",
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
    rig.commit_revising(10_080, "revise row 1: clock paused");
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
        "buttons: ack 0",
        "view",
        "event press-not-placed white 16000ms late",
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
    let (reply, face) = lines.split_last().expect("some lines");
    assert!(reply.starts_with("reply 2: InvalidArgument"), "{lines:?}");
    assert!(
        face.iter().all(|l| l.starts_with("display0")),
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
    let mut rig = Rig::started_with("2/2:2/2:60", flag_advance());
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

/// Hourglass with `freeze = false`: after White's flag at 10 s, White's
/// clock runs on but has nothing left to give, so Black still has 20 s when
/// White presses at 16 s (not 26 s): the total of both clocks stays at the
/// 20 s the game began with. At 20 s Black has used 4 s of those 20 s.
#[test]
fn hourglass_without_freeze_a_flagged_clock_gives_nothing_and_the_total_stays_constant() {
    let settings = Settings {
        freeze: Some(false),
        ..Settings::default()
    };
    let mut rig = Rig::started_with("*10", settings);
    step!(rig, rig.tick(10_000) => [
        "store 2: flag white @10.000",
        "display0: 0:00.0 [F1R] | 0:20",
    ]);
    rig.commit_all(10_000);
    let total = |state: &ClockState| {
        state.white.remaining.unwrap_or(0) + state.black.remaining.unwrap_or(0)
    };
    assert_eq!(
        total(&rig.state(13_000)),
        20 * SECOND,
        "White's dead clock runs on"
    );
    step!(rig, rig.button(16_000, 0, Button::Left, 16_000) => [
        "store 3: press white @16.000",
        "display0: 0:00.0 [F1] | 0:20 [R]",
        "leds -R-",
    ]);
    rig.commit_all(16_000);
    let pressed = rig.state(16_000);
    assert_eq!(pressed.black.remaining, Some(20 * SECOND), "not 26 s");
    assert_eq!(total(&pressed), 20 * SECOND);
    let later = rig.state(20_000);
    assert_eq!(later.running, Some(Side::Black));
    assert_eq!(later.black.remaining, Some(16 * SECOND));
    assert_eq!(
        later.black.remaining.unwrap_or(0) + later.black.used,
        20 * SECOND,
        "Black has had 20 s in all"
    );
    assert_eq!(later.white.remaining, Some(0));
    assert_eq!(later.flags, [Side::White]);
}

/// A press made before an arbiter's correction, whose frame arrives after
/// it, is placed at its instant; the correction (Black set to 4:00) keeps
/// the result it would have had if the press had come in time, and a
/// restart rebuilds the same game.
#[test]
fn a_late_press_made_before_an_adjust_is_placed_and_the_adjust_keeps_its_result() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    step!(rig, rig.command(10_000, BoardCommand::Adjust { side: Side::Black, remaining_ms: Some(240_000), moves: None, stage: None }) => [
        "store 2: adjust black remaining 240.000 @10.000",
        "display0: 4:50 [R] | 4:00",
    ]);
    rig.commit_all(10_000);
    // White's press made at 9.950 s arrives at 10.080 s.
    step!(rig, rig.button(10_080, 0, Button::Left, 9_950) => [
        "store 3: press white @9.950",
        "display0: 4:51 | 4:00 [R]",
        "leds -R-",
    ]);
    // The correction's row is revised: it still sets 4:00.
    rig.commit_revising(
        10_080,
        "revise row 1: black set to remaining time 240.000 s",
    );
    let state = rig.state(10_080);
    assert_eq!(state.white.moves, 1);
    assert_eq!(state.white.remaining, Some(290_050 * MS));
    // Black ran 50 ms before the correction and 80 ms after it.
    assert_eq!(state.black.remaining, Some(239_920 * MS));
    assert_eq!(state.black.used, 130 * MS);
    let stored = rig.stored(10_080);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(10_080));
    assert_eq!(board.state(mono(10_080)).white, state.white);
    assert_eq!(board.state(mono(10_080)).black, state.black);
}

/// The same with a relative correction: `adjust --add 1:00` for White at
/// 10 s, White's press made at 9.950 s arriving after it. White's clock
/// stopped at 9.950 s showing 4:50.050, so the minute makes 5:50.050 (the
/// correction replayed as an absolute 5:50.000 would take 50 ms from
/// White). A restart rebuilds the same.
#[test]
fn a_late_press_made_before_a_relative_correction_keeps_the_amount_added() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    step!(rig, rig.command(10_000, BoardCommand::AdjustBy { side: Side::White, delta_ms: 60_000 }) => [
        "store 2: adjust white by +60.000 remaining 350.000 @10.000",
        "display0: 5:50 [R] | 5:00",
    ]);
    rig.commit_all(10_000);
    rig.button(10_080, 0, Button::Left, 9_950);
    rig.commit_revising(
        10_080,
        "revise row 1: white set to remaining time 350.050 s",
    );
    let state = rig.state(10_080);
    assert_eq!(state.white.remaining, Some(350_050 * MS));
    assert_eq!(state.black.remaining, Some(299_870 * MS));
    let stored = rig.stored(10_080);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(10_080));
    assert_eq!(board.state(mono(10_080)).white, state.white);
}

/// Stage advance "at the flag" on `2/60:30`: White's stage flag at 60 s
/// moves both sides to stage 2; White's press made at 59.900 s arrives at
/// 60.200 s. The press is placed at its instant: the stage flag is
/// withdrawn and both sides are back in stage 1, White with the 0.1 s it
/// had left.
#[test]
fn a_late_press_made_before_a_stage_change_is_placed_at_its_instant() {
    let mut rig = Rig::started_with("2/60:30", flag_advance());
    step!(rig, rig.tick(60_000) => [
        "store 2: flag white (stage) @60.000",
        "store 3: stage white 2 first @60.000",
        "store 4: stage black 2 @60.000",
        "display0: 0:30 [1SR] | 1:30",
    ]);
    rig.commit_all(60_000);
    step!(rig, rig.button(60_200, 0, Button::Left, 59_900) => [
        "store 5: press white @59.900",
        "store 6: flag-withdrawn white fell@60.000 @59.900",
        "display0: 0:00.1 | 1:00 [R]",
        "leds -R-",
    ]);
    rig.commit_all(60_200);
    let state = rig.state(60_200);
    assert!(state.flags.is_empty());
    assert_eq!((state.white.stage, state.black.stage), (1, 1));
    assert_eq!(state.white.moves, 1);
    assert_eq!(state.white.remaining, Some(100 * MS));
    assert_eq!(state.black.remaining, Some(59_700 * MS));
    assert_eq!(state.running, Some(Side::Black));
}

/// Canadian overtime: the State view says the moves still to make in the
/// block (`moves_left_in_block`, also as `periods_left`); byo-yomi says
/// the periods left and has no block.
#[test]
fn canadian_state_says_the_moves_left_in_the_block_and_byo_yomi_the_periods_left() {
    let side_view = |control: &str, press: bool| {
        let mut rig = Rig::linked(control);
        rig.command(0, BoardCommand::Start);
        rig.commit_all(0);
        rig.tick(2_000); // the main time ends: overtime begins
        if press {
            rig.button(2_500, 0, Button::Left, 2_500);
            rig.commit_all(2_500);
        }
        rig.board.model(mono(2_500)).state_view(mono(2_500)).white
    };
    let canadian = side_view("canadian:2:3/4", false);
    assert_eq!(canadian.stage, 2);
    assert_eq!(canadian.moves_left_in_block, Some(3));
    assert_eq!(canadian.periods_left, Some(3));
    let canadian = side_view("canadian:2:3/4", true);
    assert_eq!(canadian.moves_left_in_block, Some(2), "one move made");
    assert_eq!(
        canadian.remaining_ms,
        Some(3_500),
        "the block's time runs on"
    );
    let byo_yomi = side_view("byoyomi:2:3x5", true);
    assert_eq!(
        byo_yomi.periods_left,
        Some(3),
        "a move in time keeps the period"
    );
    assert_eq!(byo_yomi.moves_left_in_block, None);
    assert_eq!(byo_yomi.remaining_ms, Some(5_000));
}

/// `adjust` to a stage the control does not have is refused with a clear
/// error and changes nothing: stage 3 of `2/60:30`, and any stage but 1
/// of hourglass and upcount (which used to be dropped silently).
#[test]
fn adjust_to_a_stage_the_control_does_not_have_is_refused() {
    let refused = |control: &str, stage: u32| {
        let mut rig = Rig::linked(control);
        let lines = rig.command(
            0,
            BoardCommand::Adjust {
                side: Side::White,
                remaining_ms: None,
                moves: None,
                stage: Some(stage),
            },
        );
        assert!(
            rig.journal
                .iter()
                .all(|(_, r)| !matches!(r, Record::Event(_))),
            "{control} stage {stage}: nothing is recorded"
        );
        lines
    };
    step!(rig, refused("2/60:30", 3) => [
        "reply 1: InvalidArgument: white's control `2/60:30` has stages 1 to 2: stage 3 does not exist",
    ]);
    for (control, stage) in [("*10", 2), ("*10", 7), ("-", 2)] {
        let want = format!(
            "reply 1: InvalidArgument: white's control `{control}` has only one stage: \
             stage {stage} does not exist"
        );
        step!(rig, refused(control, stage) => [want.as_str()]);
    }
    // The stages a control has are taken.
    let mut rig = Rig::linked("2/60:30");
    let lines = rig.command(
        0,
        BoardCommand::Adjust {
            side: Side::White,
            remaining_ms: None,
            moves: None,
            stage: Some(2),
        },
    );
    assert_eq!(lines[0], "store 1: adjust white stage 2 @0.000");
}

/// A unit that says HELLO again while linked (same boot: its WELCOME was
/// lost, or it timed the link out) is welcomed again in full: the whole
/// state goes out once more (SPEC.md 6.1 item 2), the event record moves
/// to the HELLO's `first_unacked_event` (SPEC.md 7.2) so the next press is
/// recorded and acknowledged, and the record gets no link row (the link
/// never went down).
#[test]
fn a_repeated_hello_while_linked_resends_the_state_and_takes_the_next_press() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.button(1_000, 0, Button::Left, 1_000);
    rig.commit_all(1_000);
    // The unit numbered events 1..=4 that never reached us (refused while
    // its queue was full, say) and says so in its HELLO: 5 is its oldest.
    step!(rig, rig.step(1_500, BoardInput::Device(DeviceInput::Connected {
        role: DeviceRole::Buttons,
        hello: hello(Roles::BUTTONS, "BU1", 7, 5),
        path: "/dev/pts/1".into(),
    })) => [
        "leds -R-",
        "view",
    ]);
    step!(rig, rig.button(2_000, 5, Button::Right, 2_000) => [
        "store 3: press black @2.000",
        "display0: 4:59 [R] | 4:59",
        "leds L--",
    ]);
    let lines = rig.commit_all(2_000);
    assert!(lines.contains(&"buttons: ack 5".to_owned()), "{lines:?}");
    assert!(
        !lines.iter().any(|l| l.contains("device buttons")),
        "no link row for a re-welcome: {lines:?}"
    );
    assert_eq!(rig.state(2_000).black.moves, 1);
    // The display unit says HELLO again too: its picture goes out again.
    step!(rig, rig.step(2_100, BoardInput::Device(DeviceInput::Connected {
        role: DeviceRole::Display(0),
        hello: hello(Roles::DISPLAY, "DU1", 9, 0),
        path: "/dev/pts/2".into(),
    })) => [
        "display0: 4:59 [R] | 4:59",
        "view",
    ]);
}

/// Issue 28 item 5: a scheduled start kept its monotonic instant when the
/// wall clock was stepped (a +10 s step made it start 10 s late by the
/// host's clock). It follows the wall clock it was given in: a step
/// forward brings it nearer, a step back puts it off, a step past it
/// starts the game at once, never at an instant before the step was seen.
#[test]
fn a_scheduled_start_follows_the_wall_clock_when_it_is_stepped() {
    // The wall clock read at monotonic `at_ms`, stepped by `step_ms`.
    let stepped = |at_ms: i64, step_ms: i64| WALL0 + (at_ms + step_ms) * MS;
    let start = |rig: &mut Rig| {
        rig.command(
            0,
            BoardCommand::StartAt {
                unix_time_us: wall(90_000),
                forced: false,
            },
        );
        rig.commit_all(0);
    };

    // +10 s at 30 s: the start is due at 80 s on the monotonic clock.
    let mut rig = Rig::linked("900+10");
    start(&mut rig);
    rig.board
        .handle(mono(30_000), stepped(30_000, 10_000), BoardInput::Tick);
    assert_eq!(
        rig.deadline_ms(),
        Some(31_000.0),
        "the countdown's next second"
    );
    let model = rig.board.model(mono(30_000));
    assert_eq!(model.scheduled_start.map(|s| s.at), Some(mono(80_000)));
    rig.board
        .handle(mono(79_999), stepped(79_999, 10_000), BoardInput::Tick);
    assert!(!rig.state(79_999).started, "not before the wall instant");
    rig.board
        .handle(mono(80_001), stepped(80_001, 10_000), BoardInput::Tick);
    let state = rig.state(80_001);
    assert!(state.started, "started when the wall clock reached 90 s");
    assert_eq!(state.white.used, MS, "from 80 s on the monotonic clock");

    // -10 s at 30 s: due at 100 s; at 90 s (80 s on the wall) nothing.
    let mut rig = Rig::linked("900+10");
    start(&mut rig);
    rig.board
        .handle(mono(30_000), stepped(30_000, -10_000), BoardInput::Tick);
    rig.board
        .handle(mono(90_004), stepped(90_004, -10_000), BoardInput::Tick);
    assert!(!rig.state(90_004).started, "the wall clock says 80 s");
    rig.board
        .handle(mono(100_000), stepped(100_000, -10_000), BoardInput::Tick);
    assert!(rig.state(100_000).started);
    assert_eq!(rig.state(100_000).white.used, 0);

    // +2 min at 30 s, past the start: it starts at 30 s, when seen.
    let mut rig = Rig::linked("900+10");
    start(&mut rig);
    rig.board
        .handle(mono(30_000), stepped(30_000, 120_000), BoardInput::Tick);
    let state = rig.state(31_000);
    assert!(state.started);
    assert_eq!(state.white.used, SECOND, "from the step, not before it");

    // Reading jitter within the slack moves nothing: the start stays exact.
    let mut rig = Rig::linked("900+10");
    start(&mut rig);
    rig.board.handle(
        mono(89_000),
        stepped(89_000, 0) + WALL_SLACK,
        BoardInput::Tick,
    );
    rig.board
        .handle(mono(90_004), wall(90_004), BoardInput::Tick);
    assert_eq!(rig.state(100_000).white.used, 10 * SECOND);
}

/// A snapshot read from a view some time after the view was taken (the
/// control loop answering a read) says which view it shows, apart from the
/// instant its times are for: the D-Bus objects order their cached
/// snapshots by the view, and ordering them by `snapshot_ms` kept a read of
/// an older view over the `StateChanged` of a newer one taken a moment
/// before the read (a display unit linked at the daemon's start stayed
/// disconnected on the bus).
#[test]
fn a_snapshot_names_the_view_it_was_read_from() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    let view = rig.board.model(mono(1_000));
    let read_later = view.snapshot(mono(4_000));
    assert_eq!(read_later.snapshot_ms, mono(4_000) / MS);
    assert_eq!(read_later.view_us, mono(1_000));
    assert_eq!(view.snapshot(view.taken_at).view_us, mono(1_000));
    let newer = rig.board.model(mono(2_000)).snapshot(mono(2_000));
    assert!(newer.view_us > read_later.view_us);
    assert!(newer.snapshot_ms < read_later.snapshot_ms);
}
