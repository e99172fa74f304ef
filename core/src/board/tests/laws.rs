//! The Articles as the board core carries them: the arbiter button pauses
//! (Art. 6.12b), the first flag is marked (Art. 6.11), the deadline
//! property holds for any game.

use proptest::prelude::*;

use super::*;

/// Art. 6.12b: a player's arbiter button stops the clocks and marks the
/// call; resuming clears it.
#[test]
fn art_6_12b_the_arbiter_button_pauses_and_is_marked() {
    let mut rig = Rig::linked("300");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    step!(rig, rig.button(3_000, 0, Button::Arbiter, 3_000) => [
        // An arbiter call is a record of its own, not a plain pause.
        "store 2: arbiter-call @3.000",
        "running false",
        "display0: 4:57 [PA] | 5:00 [PA] \"ARBITER\"",
        "leds --A",
    ]);
    step!(rig, rig.commit_all(3_000) => [
        "history arbiter-call @3.000: clock paused",
        "buttons: ack 0",
        "pgn",
        "view",
        "event arbiter-called",
    ]);
    let lines = rig.command(10_000, BoardCommand::Resume);
    assert!(lines.contains(&"leds L--".to_owned()), "{lines:?}");
    assert!(!rig.board.model(mono(10_000)).marks.arbiter_called);
}

/// The first flag fallen is marked on the display (FIDE equipment
/// standard: which flag fell first must be visible).
#[test]
fn art_6_11_the_first_flag_is_marked() {
    let mut rig = Rig::linked("2");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.button(1_000, 0, Button::Left, 1_000);
    rig.commit_all(1_000);
    rig.button(2_000, 1, Button::Right, 2_000);
    rig.commit_all(2_000);
    // White's flag at 3 s (1 + 1 s left after move 1); sudden death, no
    // increment: Black's clock would run on, but White runs now.
    let lines = rig.tick(3_000);
    assert_eq!(lines[0], "store 4: flag white @3.000");
    let model = rig.board.model(mono(3_000));
    assert_eq!(model.marks.first_flag, Some(Side::White));
}

/// SPEC 8.2: when the arbiter gives the first side time back, the mark goes
/// with its flag to the flag that still stands, and stays there when the
/// corrected side's flag falls again (it used to jump back to that side).
#[test]
fn spec_8_2_first_flag_passes_to_the_flag_still_down_after_time_given_back() {
    let mut rig = Rig::linked("2");
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig.tick(2_000); // White's flag
    rig.commit_all(2_000);
    rig.button(2_500, 0, Button::Left, 2_500);
    rig.commit_all(2_500);
    rig.tick(4_500); // Black's flag
    rig.commit_all(4_500);
    assert_eq!(
        rig.board.model(mono(4_500)).marks.first_flag,
        Some(Side::White)
    );
    rig.command(
        5_000,
        BoardCommand::Adjust {
            side: Side::White,
            remaining_ms: Some(1_000),
            moves: None,
            stage: None,
        },
    );
    rig.commit_all(5_000);
    assert_eq!(
        rig.board.model(mono(5_000)).marks.first_flag,
        Some(Side::Black)
    );
    rig.button(5_500, 1, Button::Right, 5_500);
    rig.commit_all(5_500);
    rig.tick(6_500); // White's flag again, second this time
    rig.commit_all(6_500);
    let model = rig.board.model(mono(6_500));
    let last = model.flag_falls.last().map(|f| (f.side, f.at));
    assert_eq!(
        last,
        Some((Side::White, 6_500_000)),
        "{:?}",
        model.flag_falls
    );
    assert_eq!(model.marks.first_flag, Some(Side::Black));
}

fn any_command() -> impl Strategy<Value = BoardCommand> {
    let side = prop_oneof![Just(Side::White), Just(Side::Black)];
    prop_oneof![
        Just(BoardCommand::Start),
        Just(BoardCommand::Pause),
        Just(BoardCommand::Resume),
        Just(BoardCommand::UndoPress),
        Just(BoardCommand::AckCall),
        Just(BoardCommand::CancelStart),
        Just(BoardCommand::Note("claim".into())),
        (0i64..20_000).prop_map(|ms| BoardCommand::StartAt {
            unix_time_us: wall(ms),
            forced: true
        }),
        (side.clone(), -20_000i64..20_000)
            .prop_map(|(side, delta_ms)| BoardCommand::AdjustBy { side, delta_ms }),
        side.clone().prop_map(BoardCommand::Press),
        (
            side,
            prop::option::of(prop_oneof![
                0i64..10_000,
                Just(i64::MAX),
                Just(MAX_TIME / MS)
            ]),
            prop::option::of(prop_oneof![0u32..5, Just(u32::MAX)]),
            prop::option::of(prop_oneof![0u32..4, Just(u32::MAX)]),
        )
            .prop_map(|(side, remaining_ms, moves, stage)| BoardCommand::Adjust {
                side,
                remaining_ms,
                moves,
                stage,
            }),
    ]
}

proptest! {
    /// For any sequence of commands and ticks, the next deadline is after
    /// the instant handled, or there is none: the timing thread never
    /// spins.
    #[test]
    fn the_next_deadline_is_always_ahead(
        control in prop::sample::select(&["1", "300+2", "2/60:30", "*10", "byoyomi:1:2x1", "-", "5d2"][..]),
        steps in prop::collection::vec((1i64..3_000, any_command()), 1..40),
    ) {
        let mut rig = Rig::linked(control);
        let mut now = 0;
        for (gap, command) in steps {
            now += gap;
            // Follow the shell: tick at every deadline on the way.
            while let Some(deadline) = rig.board.next_deadline() {
                prop_assert!(deadline > mono(now) - gap * MS, "deadline {deadline} behind");
                if deadline > mono(now) {
                    break;
                }
                let actions = rig.board.handle(deadline, wall(0), BoardInput::Tick);
                rig.take(actions);
                let after = rig.board.next_deadline();
                prop_assert!(after.is_none_or(|d| d > deadline), "{after:?} after {deadline}");
            }
            rig.command(now, command);
            rig.commit_all(now);
            if let Some(deadline) = rig.board.next_deadline() {
                prop_assert!(deadline > mono(now), "deadline {deadline} not after {now} ms");
            }
        }
    }
}

proptest! {
    /// "An event is never ahead of the state it announces", for replies:
    /// whatever the commands, and with the store committing every record
    /// apart (the worst grouping), a command's reply is released only once
    /// the readers' view shows all the command did: the caller that reads
    /// right after its reply sees its change (a start moved to an instant
    /// already reached writes two records; its reply once came with the
    /// first).
    #[test]
    fn a_reply_never_goes_out_before_the_view_of_its_change(
        control in prop::sample::select(&["1", "300+2", "2/60:30", "-"][..]),
        steps in prop::collection::vec((1i64..3_000, any_command()), 1..30),
    ) {
        let mut rig = Rig::linked(control);
        let mut now = 0;
        // The readers' copy (what the last view released says).
        let mut seen = rig.board.model(mono(0));
        for (gap, command) in steps {
            now += gap;
            let at = mono(now);
            let token = rig.token();
            let actions = rig.board.handle(at, wall(now), BoardInput::Command {
                token,
                caller: Caller::uid(1000),
                command: command.clone(),
            });
            // What a reader must see once the reply is out.
            let want = rig.board.model(at).state_view(at);
            let from = rig.journal.len();
            let mut batches = vec![actions];
            let mut replied = false;
            let mut next = 0;
            while next < batches.len() {
                let batch = std::mem::take(&mut batches[next]);
                next += 1;
                for action in &batch {
                    match action {
                        Action::View(model) => seen = (**model).clone(),
                        Action::Reply { token: t, .. } if Some(*t) == token => {
                            replied = true;
                            prop_assert_eq!(
                                seen.state_view(at),
                                want.clone(),
                                "the reply to {:?} came before the view of its change",
                                command
                            );
                        }
                        _ => {}
                    }
                }
                rig.take(batch);
                // The store commits this command's records one by one.
                if let Some((seq, _)) = rig.journal.get(from + next - 1).cloned() {
                    batches.push(rig.board.handle(at, wall(now), BoardInput::Committed { seq, ok: true }));
                }
            }
            prop_assert!(replied, "no reply to {:?}", command);
        }
    }
}
