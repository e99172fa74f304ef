//! The arbiter's corrections and the record of an appeal: relative
//! corrections at the instant of the command, the undo of a mistaken press
//! (replayed after a restart), notes, moved and cancelled scheduled starts,
//! stages reached (who first), and what each history row says.

use super::*;
use crate::views::{Correction, IgnoredReason};

fn started(control: &str) -> Rig {
    let mut rig = Rig::linked(control);
    rig.command(0, BoardCommand::Start);
    rig.commit_all(0);
    rig
}

/// `--sub 1:00` on a running clock takes the minute from what the clock
/// shows at the instant of the command; the record says before -> after.
#[test]
fn a_relative_correction_applies_at_the_instant_of_the_command() {
    let mut rig = started("300");
    step!(rig, rig.command(30_000, BoardCommand::AdjustBy { side: Side::White, delta_ms: -60_000 }) => [
        "store 2: adjust white by -60.000 remaining 210.000 @30.000",
        "display0: 3:30 [R] | 5:00",
    ]);
    step!(rig, rig.commit_all(30_000) => [
        "history adjust white by -60.000 remaining 210.000 @30.000: white set to remaining time 210.000 s",
        "pgn",
        "view",
        "reply 2: ok",
    ]);
    let row = rig.history.last().unwrap();
    assert_eq!(
        row.correction,
        Some(Correction {
            side: Side::White,
            remaining_before_ms: Some(270_000),
            remaining_after_ms: Some(210_000),
            moves_before: 0,
            moves_after: 0,
            stage_before: 1,
            stage_after: 1,
        })
    );
    assert_eq!(
        record::row_text(row),
        "white -1:00 (relative correction): white 4:30 -> 3:30"
    );
    // The clock runs on from there.
    assert_eq!(rig.state(40_000).white.remaining, Some(200 * SECOND));
    // Taking more than is left is refused; nothing changes.
    step!(rig, rig.command(40_000, BoardCommand::AdjustBy { side: Side::White, delta_ms: -300_000 }) => [
        "display0: 3:20 [R] | 5:00",
        "reply 3: InvalidArgument: white has 3:20 left: taking 5:00 away would leave less than nothing (take at most 3:20, or set the time with --remaining)",
    ]);
    step!(rig, rig.command(40_000, BoardCommand::AdjustBy { side: Side::Black, delta_ms: 0 }) => [
        "reply 4: InvalidArgument: nothing to adjust: the time to add or take away is zero",
    ]);
    // A penalty to Black: +2:00 for White is a bonus to the other side.
    let lines = rig.command(
        41_000,
        BoardCommand::AdjustBy {
            side: Side::Black,
            delta_ms: 120_000,
        },
    );
    assert_eq!(
        lines[0],
        "store 3: adjust black by +120.000 remaining 420.000 @41.000"
    );
    // A restart replays the absolute result.
    rig.commit_all(41_000);
    let stored = rig.stored(42_000);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(42_000));
    assert_eq!(
        board.state(mono(42_000)).black.remaining,
        Some(420 * SECOND)
    );
}

#[test]
fn a_relative_correction_needs_a_clock_that_counts_down() {
    let mut rig = started("-");
    step!(rig, rig.command(1_000, BoardCommand::AdjustBy { side: Side::White, delta_ms: 60_000 }) => [
        "display0: 0:01 [R] | 0:00",
        "reply 2: InvalidState: white's clock counts up (no time limit): there is no remaining time to add to",
    ]);
}

/// A mistaken `press` by the arbiter is taken back: the game is re-run
/// without it (White's clock ran all along), the undo is a row of its own
/// and a restart replays it.
#[test]
fn the_arbiters_last_press_can_be_undone_and_a_restart_replays_the_undo() {
    let mut rig = started("300");
    step!(rig, rig.command(10_000, BoardCommand::Press(Side::White)) => [
        "store 2: press white @10.000",
        "display0: 4:50 | 5:00 [R]",
        "leds -R-",
    ]);
    rig.commit_all(10_000);
    step!(rig, rig.command(12_000, BoardCommand::UndoPress) => [
        "store 3: press-undone white pressed@10.000 @12.000",
        "display0: 4:48 [R] | 5:00",
        "leds L--",
    ]);
    step!(rig, rig.commit_all(12_000) => [
        "history press-undone white pressed@10.000 @12.000",
        "view",
        "reply 3: ok",
    ]);
    let state = rig.state(12_000);
    assert_eq!(state.running, Some(Side::White));
    assert_eq!(state.white.moves, 0);
    assert_eq!(state.white.used, 12 * SECOND);
    assert_eq!(state.black.used, 0);
    let row = rig.history.last().unwrap();
    assert_eq!(
        record::row_text(row),
        "the arbiter's press for white at 0:10.000 was undone: white 4:50 -> 4:48, moves 1 -> 0"
    );
    // Nothing more to undo.
    step!(rig, rig.command(13_000, BoardCommand::UndoPress) => [
        "display0: 4:47 [R] | 5:00",
        "reply 4: InvalidState: there is no press by the arbiter to undo on board `b1` (presses on the buttons are the players' own: correct the clock with adjust)",
    ]);
    // After a restart the press stays undone.
    let stored = rig.stored(13_000);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(14_000));
    let state = board.state(mono(14_000));
    assert_eq!(state.white.moves, 0);
    assert_eq!(state.white.used, 14 * SECOND, "charged up to the restart");
    assert!(state.paused);
}

#[test]
fn a_press_followed_by_another_cannot_be_undone() {
    let mut rig = started("300");
    rig.command(10_000, BoardCommand::Press(Side::White));
    rig.commit_all(10_000);
    rig.button(11_000, 0, Button::Right, 11_000);
    rig.commit_all(11_000);
    step!(rig, rig.command(12_000, BoardCommand::UndoPress) => [
        "display0: 4:49 [R] | 4:59",
        "reply 3: InvalidState: the arbiter's press for white at 0:10.000 of the game was followed by 1 press: it can no longer be undone; correct the clock with adjust",
    ]);
    assert_eq!(rig.state(12_000).white.moves, 1);
}

/// An undo can withdraw a flag that fell because of the mistaken press.
#[test]
fn undoing_a_press_withdraws_the_flag_it_caused() {
    let mut rig = started("5");
    rig.command(1_000, BoardCommand::Press(Side::White));
    rig.commit_all(1_000);
    // Black's flag falls at 6 s; the arbiter then sees the press was wrong.
    let lines = rig.tick(6_000);
    assert_eq!(lines[0], "store 3: flag black @6.000");
    rig.commit_all(6_000);
    let lines = rig.command(6_500, BoardCommand::UndoPress);
    assert_eq!(
        lines[..2],
        [
            "store 4: press-undone white pressed@1.000 @6.500",
            "store 5: flag-withdrawn black fell@6.000 @6.500",
        ]
    );
    // White ran all along: its own flag fell at 5 s.
    assert!(
        lines.contains(&"store 6: flag white @5.000".to_owned()),
        "{lines:?}"
    );
    assert_eq!(rig.state(6_500).flags, [Side::White]);
}

#[test]
fn a_note_is_a_row_of_the_record_with_who_wrote_it() {
    let mut rig = started("300");
    step!(rig, rig.command(5_000, BoardCommand::Note("  3-fold claim rejected ".into())) => [
        "store 2: note \"3-fold claim rejected\" @5.000",
        "display0: 4:55 [R] | 5:00",
    ]);
    step!(rig, rig.commit_all(5_000) => [
        "history note \"3-fold claim rejected\" @5.000",
        "reply 2: ok",
    ]);
    let row = rig.history.last().unwrap();
    assert_eq!(row.caller_uid, Some(1000));
    assert_eq!(record::row_text(row), "note: 3-fold claim rejected");
    step!(rig, rig.command(5_000, BoardCommand::Note("  ".into())) => [
        "reply 3: InvalidArgument: the note is empty: give the text to record",
    ]);
    step!(rig, rig.command(5_000, BoardCommand::Note("a\nb".into())) => [
        "reply 4: InvalidArgument: the note must be one line of text (no control characters)",
    ]);
    let long = "x".repeat(501);
    step!(rig, rig.command(5_000, BoardCommand::Note(long)) => [
        "reply 5: InvalidArgument: the note has 501 characters (at most 500)",
    ]);
}

/// A second scheduled start replaces the first and says so; a cancelled
/// one is gone, also after a restart.
#[test]
fn a_scheduled_start_can_be_moved_and_cancelled() {
    let mut rig = Rig::linked("900+10");
    rig.command(
        0,
        BoardCommand::StartAt {
            unix_time_us: wall(90_000),
            forced: false,
        },
    );
    rig.commit_all(0);
    step!(rig, rig.command(1_000, BoardCommand::StartAt { unix_time_us: wall(120_000), forced: true }) => [
        "store 2: start-at 120.000 (replaces 90.000) @1.000",
        "display0: 15:10 | 15:10 \"START 1:59\"",
    ]);
    rig.commit_all(1_000);
    assert!(record::row_text(rig.history.last().unwrap()).ends_with(
        "(forced past the NTP check); replaces the start scheduled for 2026-12-01T12:01:30.000Z"
    ));
    step!(rig, rig.command(2_000, BoardCommand::CancelStart) => [
        "store 3: start-cancelled 120.000 @2.000",
        "display0: 15:10 | 15:10",
    ]);
    rig.commit_all(2_000);
    assert_eq!(rig.deadline_ms(), None);
    step!(rig, rig.command(3_000, BoardCommand::CancelStart) => [
        "reply 4: InvalidState: no start is scheduled on board `b1`",
    ]);
    let stored = rig.stored(3_000);
    let (board, _) = Board::restore(setup(), spec("900+10"), &stored, &resumed(4_000));
    assert!(board.model(mono(4_000)).scheduled_start.is_none());
}

/// A new game on a board waiting for its scheduled start cancels that
/// start, and the old game's record says so (a round's start is never
/// dropped without a word).
#[test]
fn a_new_game_cancels_the_scheduled_start_in_the_record() {
    let mut rig = Rig::linked("900+10");
    rig.command(
        0,
        BoardCommand::StartAt {
            unix_time_us: wall(90_000),
            forced: true,
        },
    );
    rig.commit_all(0);
    let lines = rig.command(1_000, BoardCommand::NewGame(spec("600+5")));
    assert_eq!(
        lines[0], "store 2: start-cancelled 90.000 @1.000",
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("store 3: new-game 600+5")),
        "{lines:?}"
    );
    rig.commit_all(1_000);
    assert_eq!(rig.deadline_ms(), None, "no start is left scheduled");
    assert!(rig.board.model(mono(1_000)).scheduled_start.is_none());
}

/// Reaching a time control is a row of its own, saying who got there first.
#[test]
fn stages_reached_are_rows_saying_who_was_first() {
    let mut rig = started("2/10:60");
    for (i, (at, button)) in [
        (1_000, Button::Left),
        (2_000, Button::Right),
        (3_000, Button::Left),
        (4_000, Button::Right),
    ]
    .into_iter()
    .enumerate()
    {
        rig.button(at, i as u16, button, at);
        rig.commit_all(at);
    }
    let stages: Vec<String> = rig
        .history
        .iter()
        .filter(|r| matches!(r.event, StoredEvent::Stage { .. }))
        .map(record::row_text)
        .collect();
    assert_eq!(
        stages,
        ["white reached stage 2 first", "black reached stage 2"]
    );
    // Restored, the record knows stage 2 was reached already.
    let stored = rig.stored(5_000);
    let (board, _) = Board::restore(setup(), spec("2/10:60"), &stored, &resumed(5_000));
    assert_eq!(board.stages_reached, [2]);
}

/// Each row says what the press did: the move it completed and its time,
/// or why it changed nothing (typed).
#[test]
fn history_rows_carry_moves_and_typed_reasons() {
    let mut rig = started("300");
    rig.button(2_500, 0, Button::Right, 2_500);
    rig.commit_all(2_500);
    rig.button(4_000, 1, Button::Left, 4_000);
    rig.commit_all(4_000);
    let ignored = &rig.history[rig.history.len() - 2];
    assert_eq!(ignored.ignored, Some(IgnoredReason::NotRunningSide));
    assert_eq!(ignored.move_number, None);
    assert_eq!(
        record::row_text(ignored),
        "black's press ignored: that side's clock was not running"
    );
    let pressed = rig.history.last().unwrap();
    assert_eq!(
        (pressed.move_number, pressed.move_used_ms),
        (Some(1), Some(4_000))
    );
    assert_eq!((pressed.white_moves, pressed.black_moves), (1, 0));
    assert_eq!(
        record::row_text(pressed),
        "white completed move 1 in 4.000 s"
    );
}

/// The arbiter button survives a restart as a call (the display keeps
/// saying ARBITER), and the restart row says what was rebuilt.
#[test]
fn an_arbiter_call_and_the_restart_are_in_the_record() {
    let mut rig = started("300");
    rig.button(3_000, 0, Button::Arbiter, 3_000);
    rig.commit_all(3_000);
    rig.command(4_000, BoardCommand::Resume);
    rig.commit_all(4_000);
    let stored = rig.stored(9_000);
    let (board, actions) = Board::restore(setup(), spec("300"), &stored, &resumed(10_000));
    let restart = actions
        .iter()
        .find_map(|a| match a {
            Action::Store {
                record: Record::Event(row),
                ..
            } => Some(row.event.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        restart,
        StoredEvent::Restart {
            down_us: SECOND,
            same_boot: true,
            was_running: Some(Side::White),
            replayed: 3,
            paused: true,
        }
    );
    assert!(
        !board.model(mono(10_000)).marks.arbiter_called,
        "resumed before"
    );
    // Without the resume the call stands after the restart.
    let mut rig = started("300");
    rig.button(3_000, 0, Button::Arbiter, 3_000);
    rig.commit_all(3_000);
    let stored = rig.stored(4_000);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(5_000));
    assert!(board.model(mono(5_000)).marks.arbiter_called);
}

/// The readers' State view carries the prose of the control, the display's
/// tenths threshold and each side's highest stage.
#[test]
fn the_state_view_says_how_to_show_the_board() {
    let rig = Rig::linked("40/5400+30:1800+30");
    let view = rig.board.model(mono(0)).state_view(mono(0));
    assert_eq!(
        view.control_prose.as_deref(),
        Some("90 min for 40 moves, then 30 min; 30 s per move from move 1")
    );
    assert_eq!(view.tenths_below_ms, Some(20_000));
    assert_eq!(view.white.max_stage, Some(2));
}

/// A past game's history is the rows as stored, nothing added.
#[test]
fn a_stored_games_history_is_its_rows() {
    let mut rig = started("300");
    rig.button(2_000, 0, Button::Left, 2_000);
    rig.commit_all(2_000);
    let stored = rig.stored(3_000);
    let history = Board::stored_history(setup(), spec("300"), &stored);
    let kinds: Vec<&str> = history.events.iter().map(|r| r.event.kind()).collect();
    assert_eq!(kinds, ["start", "press"]);
    assert_eq!(history.header.game, Some(1));
}

/// The fixed schema: every kind of row serialises to the same keys, in
/// the documented order, and gives one cell per column.
#[test]
fn every_kind_of_row_has_the_fixed_record_schema() {
    let mut rig = started("2/10:60");
    rig.command(500, BoardCommand::Note("claim".into()));
    rig.commit_all(500);
    rig.button(1_000, 0, Button::Left, 1_000);
    rig.commit_all(1_000);
    rig.button(1_500, 1, Button::Left, 1_500);
    rig.commit_all(1_500);
    rig.command(
        2_000,
        BoardCommand::AdjustBy {
            side: Side::Black,
            delta_ms: 5_000,
        },
    );
    rig.commit_all(2_000);
    rig.button(2_500, 2, Button::Arbiter, 2_500);
    rig.commit_all(2_500);
    let history = crate::views::HistoryView {
        header: rig.board.header.clone(),
        events: rig.history.clone(),
    };
    let records = history.records();
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["start", "note", "press", "press", "adjust", "arbiter-call"]
    );
    for record in &records {
        let value = serde_json::to_value(record).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut sorted = crate::views::RECORD_COLUMNS.to_vec();
        sorted.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, sorted);
        assert_eq!(record.cells().len(), crate::views::RECORD_COLUMNS.len());
        assert!(!record.what.contains("Some("), "{}", record.what);
    }
    assert_eq!(records[3].reason.as_deref(), Some("not-running-side"));
    assert_eq!(records[4].by_ms, Some(5_000));
    assert_eq!(records[4].remaining_after_ms, Some(14_000));
    assert_eq!(records[1].who, "uid 1000");
    assert_eq!(records[2].who, "device BU1");
}

/// `chessclockctl games` lists a game the arbiter decided with its result,
/// not as unfinished; a withdrawn result gives the clock's account back.
#[test]
fn a_decided_game_is_listed_with_its_result() {
    use crate::eboard::{GameResult, Termination};
    use crate::views::GameSummary;
    let mut rig = started("300");
    rig.command(
        5_000,
        BoardCommand::SetResult {
            result: Some(GameResult::BlackWins),
            termination: Some(Termination::Normal),
        },
    );
    rig.commit_all(5_000);
    let history = Board::stored_history(setup(), spec("300"), &rig.stored(5_000));
    assert_eq!(GameSummary::of(1, &history, true).result, "0-1 (normal)");
    rig.command(
        6_000,
        BoardCommand::SetResult {
            result: None,
            termination: None,
        },
    );
    rig.commit_all(6_000);
    let history = Board::stored_history(setup(), spec("300"), &rig.stored(6_000));
    assert_eq!(GameSummary::of(1, &history, true).result, "unfinished");
}

/// `result --termination resignation` (and `agreement`) is stored and shown
/// as said, everywhere but the PGN tag, which the standard fixes at
/// `normal` (before, the record and every surface said `normal`).
#[test]
fn a_resignation_is_stored_and_shown_as_a_resignation() {
    use crate::eboard::{GameResult, Termination};
    use crate::views::GameSummary;
    let mut rig = started("300");
    rig.command(
        5_000,
        BoardCommand::SetResult {
            result: Some(GameResult::WhiteWins),
            termination: Termination::parse("resignation"),
        },
    );
    rig.commit_all(5_000);
    let history = Board::stored_history(setup(), spec("300"), &rig.stored(5_000));
    assert_eq!(
        GameSummary::of(1, &history, true).result,
        "1-0 (resignation)"
    );
    let text: Vec<String> = history
        .events
        .iter()
        .map(crate::views::text::row_text)
        .collect();
    assert!(
        text.iter().any(|t| t.contains("result 1-0 (resignation)")),
        "{text:?}"
    );
    let model = rig.board.model(mono(5_000));
    let result = model.state_view(mono(5_000)).result.unwrap();
    assert_eq!(
        (result.result.as_str(), result.termination.as_str()),
        ("1-0", "resignation")
    );
    assert!(rig.board.pgn().contains("[Termination \"normal\"]"));
}

/// `start --at +0s`: a start scheduled for an instant already reached
/// starts with the command that set it (before, at the next tick, after
/// the CLI had read the board and said "starts as scheduled").
#[test]
fn a_start_at_an_instant_already_reached_starts_with_its_command() {
    let mut rig = Rig::linked("300");
    rig.command(
        1_000,
        BoardCommand::StartAt {
            unix_time_us: wall(1_000),
            forced: true,
        },
    );
    assert!(rig.state(1_000).started, "started with the command");
    rig.commit_all(1_000);
    let model = rig.board.model(mono(1_000));
    let view = model.state_view(mono(1_000));
    assert!(view.started && view.scheduled_start_ms.is_none());
    assert_eq!(view.running, Some(Side::White));
}

/// `start --at +1m`, then `start --at +0s`: the second command writes two
/// records (the moved start, then the start itself), and the store may
/// commit them apart. The reply waits for the view of the whole command
/// (behind the start's record): released by the first commit, it reached
/// the caller while the readers' view still showed the start a minute
/// away, and `chessclockctl start` said "start moved" for a game that had
/// started (tests/ctl_daemon.rs, about one run in two on a loaded machine).
#[test]
fn a_reply_waits_for_the_view_of_its_whole_command() {
    let mut rig = Rig::linked("300");
    rig.command(
        0,
        BoardCommand::StartAt {
            unix_time_us: wall(60_000),
            forced: true,
        },
    );
    rig.commit_all(0);
    step!(rig, rig.command(1_000, BoardCommand::StartAt { unix_time_us: wall(1_000), forced: true }) => [
        "store 2: start-at 1.000 (replaces 60.000) @1.000",
        "store 3: start @1.000",
        "running true",
        "display0: 5:00 [R] | 5:00",
        "leds L--",
    ]);
    // The moved start alone is committed: its row, no reply (the view
    // that shows the command's change waits behind the start's record).
    step!(rig, rig.step(1_001, BoardInput::Committed { seq: 2, ok: true }) => [
        "history start-at 1.000 (replaces 60.000) @1.000",
    ]);
    step!(rig, rig.step(1_002, BoardInput::Committed { seq: 3, ok: true }) => [
        "history start @1.000: White's clock started",
        "pgn",
        "view",
        "reply 2: ok",
    ]);
}

/// A command's first record fails alone and its last is saved: the reply,
/// behind the last, still says that the change could not all be saved.
#[test]
fn a_reply_behind_several_records_reports_a_failure_of_any_of_them() {
    let mut rig = Rig::linked("300");
    rig.command(
        0,
        BoardCommand::StartAt {
            unix_time_us: wall(60_000),
            forced: true,
        },
    );
    rig.commit_all(0);
    rig.command(
        1_000,
        BoardCommand::StartAt {
            unix_time_us: wall(1_000),
            forced: true,
        },
    );
    rig.step(1_001, BoardInput::Committed { seq: 2, ok: false });
    let lines = rig.step(1_002, BoardInput::Committed { seq: 3, ok: true });
    assert_eq!(
        lines.last().map(String::as_str),
        Some(
            "reply 2: Internal: the change was made but could not be saved to the state \
             database; check the disk and the daemon's log"
        ),
        "{lines:?}"
    );
    // The failure belongs to that command: the next one's reply is its own.
    rig.command(2_000, BoardCommand::Pause);
    let lines = rig.commit_all(2_000);
    assert_eq!(
        lines.last().map(String::as_str),
        Some("reply 3: ok"),
        "{lines:?}"
    );
}

/// Issue 28 item 5: a game that is over says so, with why, and no clock
/// runs in it: after a flag in the last stage (the arbiter decides loss or
/// draw, Art. 6.9), and after a result.
#[test]
fn a_game_that_is_over_says_why_and_runs_no_clock() {
    use crate::eboard::{GameResult, Termination};
    let mut rig = started("3");
    rig.run_deadlines(4_000);
    let view = rig.board.model(mono(4_000)).state_view(mono(4_000));
    assert_eq!(view.flags, [Side::White]);
    assert_eq!(view.running, None, "the flag ended the game");
    let over = view.over.expect("over");
    assert_eq!(
        (over.result, over.why.as_str()),
        (None, "white's flag fell")
    );
    let snapshot = rig.board.model(mono(4_000)).snapshot(mono(4_000));
    assert_eq!(snapshot.running, None);

    let mut rig = started("300");
    rig.command(
        5_000,
        BoardCommand::SetResult {
            result: Some(GameResult::BlackWins),
            termination: Some(Termination::Resignation),
        },
    );
    rig.commit_all(5_000);
    let view = rig.board.model(mono(5_000)).state_view(mono(5_000));
    let over = view.over.expect("over");
    assert_eq!(over.result.as_deref(), Some("0-1"));
    assert_eq!(over.why, "0-1 (resignation)");
    assert_eq!(view.running, None);
}

/// Issue 30 item 5: the State view says when the arbiter was called (the
/// daemon's monotonic ms, as a flag fall's), after a restart too, and
/// names the players of the game's PGN tags.
#[test]
fn the_state_view_has_the_call_s_instant_and_the_players() {
    let mut rig = started("300");
    rig.command(
        1_000,
        BoardCommand::SetTags(vec![
            ("White".into(), "Alpha, Anna".into()),
            ("Black".into(), "?".into()),
        ]),
    );
    rig.commit_all(1_000);
    let view = rig.board.model(mono(1_000)).state_view(mono(1_000));
    assert_eq!(view.arbiter_called_at_ms, None);
    assert_eq!(view.players.white.as_deref(), Some("Alpha, Anna"));
    assert_eq!(view.players.black, None, "`?` names nobody");
    rig.button(3_000, 0, Button::Arbiter, 3_000);
    rig.commit_all(3_000);
    let view = rig.board.model(mono(4_000)).state_view(mono(4_000));
    assert_eq!(view.arbiter_called_at_ms, Some(mono(3_000) / 1_000));
    // The call stands after a restart, at its instant.
    let stored = rig.stored(4_000);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(5_000));
    let view = board.model(mono(5_000)).state_view(mono(5_000));
    assert_eq!(view.arbiter_called_at_ms, Some(mono(3_000) / 1_000));
    assert_eq!(view.players.white.as_deref(), Some("Alpha, Anna"));
    // Resumed: no call, no instant.
    rig.command(6_000, BoardCommand::Resume);
    rig.commit_all(6_000);
    let view = rig.board.model(mono(6_000)).state_view(mono(6_000));
    assert!(!view.arbiter_called);
    assert_eq!(view.arbiter_called_at_ms, None);
}

/// Issue 30 item 3: an arbiter acknowledges a player's call: the record
/// has a `call-acknowledged` row with who; the State view says who and
/// when until a resume answers the call; a restart keeps it; with no call
/// standing (or one already acknowledged) the command is refused.
#[test]
fn an_arbiter_call_is_acknowledged_by_name_until_the_resume() {
    let mut rig = started("300");
    step!(rig, rig.command_as(1_000, "Ann", BoardCommand::AckCall) => [
        "display0: 4:59 [R] | 5:00",
        "reply 2: InvalidState: no arbiter call stands on board `b1`: there is nothing to acknowledge",
    ]);
    rig.button(3_000, 0, Button::Arbiter, 3_000);
    rig.commit_all(3_000);
    step!(rig, rig.command_as(4_000, "Ann", BoardCommand::AckCall) => [
        "store 3: call-acknowledged @4.000",
    ]);
    step!(rig, rig.commit_all(4_000) => [
        "history call-acknowledged @4.000",
        "view",
        "reply 3: ok",
    ]);
    let row = rig.history.last().unwrap();
    assert_eq!(row.caller_name.as_deref(), Some("Ann"));
    assert_eq!(
        record::row_text(row),
        "the arbiter call was acknowledged: an arbiter is on the way"
    );
    let view = rig.board.model(mono(4_500)).state_view(mono(4_500));
    assert!(view.arbiter_called, "the call stands until a resume");
    assert_eq!(view.arbiter_called_at_ms, Some(mono(3_000) / 1_000));
    assert_eq!(view.arbiter_call_acknowledged_by.as_deref(), Some("Ann"));
    assert_eq!(
        view.arbiter_call_acknowledged_at_ms,
        Some(mono(4_000) / 1_000)
    );
    assert!(view.paused, "the clocks stay stopped");
    // A second arbiter is told who goes.
    step!(rig, rig.command_as(4_500, "Bob", BoardCommand::AckCall) => [
        "reply 4: InvalidState: the arbiter call on board `b1` was already acknowledged by Ann; resume the clock when the call is dealt with",
    ]);
    // A restart keeps call and acknowledgment.
    let stored = rig.stored(5_000);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(6_000));
    let view = board.model(mono(6_000)).state_view(mono(6_000));
    assert_eq!(view.arbiter_call_acknowledged_by.as_deref(), Some("Ann"));
    assert_eq!(
        view.arbiter_call_acknowledged_at_ms,
        Some(mono(4_000) / 1_000)
    );
    // The resume answers the call: neither stands after it, nor after a
    // restart that replays the resume.
    rig.command(7_000, BoardCommand::Resume);
    rig.commit_all(7_000);
    let view = rig.board.model(mono(7_000)).state_view(mono(7_000));
    assert!(!view.arbiter_called);
    assert_eq!(view.arbiter_call_acknowledged_by, None);
    assert_eq!(view.arbiter_call_acknowledged_at_ms, None);
    let stored = rig.stored(8_000);
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(9_000));
    let view = board.model(mono(9_000)).state_view(mono(9_000));
    assert_eq!(view.arbiter_call_acknowledged_by, None);
    // A new call is acknowledged afresh.
    rig.button(10_000, 1, Button::Arbiter, 10_000);
    rig.commit_all(10_000);
    rig.command(11_000, BoardCommand::AckCall);
    rig.commit_all(11_000);
    let view = rig.board.model(mono(11_000)).state_view(mono(11_000));
    assert_eq!(
        view.arbiter_call_acknowledged_by.as_deref(),
        Some("uid 1000")
    );
}
