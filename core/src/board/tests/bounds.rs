//! Bounds on what a caller can store (issue 28, item 4), each named after
//! the defect: 50,000 tags were taken, and every press re-rendered them on
//! the timing thread.

use std::collections::BTreeMap;

use super::*;
use crate::limits::{MAX_CALLER_NAME, MAX_TAGS, MAX_TAG_VALUE};

fn tags(count: usize, chars: usize) -> Vec<(String, String)> {
    (0..count)
        .map(|i| (format!("Tag{i:05}"), "x".repeat(chars)))
        .collect()
}

/// The configuration's five tags (`[event]` and the board's keys).
fn configured() -> BTreeMap<String, String> {
    ["Event", "Site", "Round", "White", "Black"]
        .iter()
        .map(|name| ((*name).to_owned(), format!("{name} value")))
        .collect()
}

/// Transcript lines without the store's sequence numbers (`store 3:` is
/// `store:`).
fn unnumbered(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| match line.strip_prefix("store ") {
            Some(rest) => format!("store:{}", rest.split_once(':').map_or("", |(_, r)| r)),
            None => line,
        })
        .collect()
}

/// The PGN an input's actions hand over.
fn committed_pgn(actions: &[Action]) -> Option<&crate::eboard::PgnGame> {
    actions.iter().find_map(|a| match a {
        Action::Pgn(game) => Some(&**game),
        _ => None,
    })
}

#[test]
fn fifty_thousand_tags_are_refused_with_a_clear_error() {
    let mut rig = Rig::started_with("300+2", Settings::default());
    let before = rig.board.pgn();
    let journal = rig.journal.len();
    step!(rig, rig.command(1_000, BoardCommand::SetTags(tags(50_000, 8))) => [
        "display0: 5:01 [R] | 5:02",
        "reply 2: InvalidArgument: too many tags: 50000 (at most 64)",
    ]);
    assert_eq!(rig.journal.len(), journal, "nothing is recorded");
    assert_eq!(rig.board.pgn(), before, "nothing changed");
}

#[test]
fn a_game_carries_at_most_64_tags_with_the_configured_ones() {
    let setup = BoardSetup {
        pgn_tags: configured(),
        ..setup()
    };
    let mut rig = Rig::linked_with(setup, spec("300+2"));
    // Five configured and 60 set: one too many.
    step!(rig, rig.command(0, BoardCommand::SetTags(tags(60, 8))) => [
        "reply 1: InvalidArgument: too many tags on the game: 65 (at most 64)",
    ]);
    assert!(!rig.board.pgn().contains("Tag00000"), "nothing changed");
    // Setting a configured tag again does not count it twice.
    let mut request = tags(MAX_TAGS - 5, 8);
    request.push(("White".into(), "Aap, A.".into()));
    step!(rig, rig.command(0, BoardCommand::SetTags(request)) => [
        "store 1: tags @0.000",
    ]);
    rig.commit_all(0);
    let pgn = rig.board.pgn();
    assert!(pgn.contains("[White \"Aap, A.\"]"), "{pgn}");
    assert!(pgn.contains("[Tag00058 \"xxxxxxxx\"]"), "{pgn}");
    // Full: one more is refused, an empty value (back to the default, or
    // gone) is taken.
    step!(rig, rig.command(0, BoardCommand::SetTags(vec![("Extra".into(), "1".into())])) => [
        "reply 3: InvalidArgument: too many tags on the game: 65 (at most 64)",
    ]);
    step!(rig, rig.command(0, BoardCommand::SetTags(vec![("Tag00000".into(), String::new())])) => [
        "store 2: tags @0.000",
    ]);
}

#[test]
fn tag_names_and_values_beyond_their_limits_are_refused_without_echoing_them() {
    let mut rig = Rig::linked("300+2");
    let long_name = format!("T{}", "a".repeat(10_000));
    step!(rig, rig.command(0, BoardCommand::SetTags(vec![(long_name, "v".into())])) => [
        "reply 1: InvalidArgument: tag `Taaaaaaaaaaaaaaa…`: the name has 10001 characters (at most 64)",
    ]);
    let value = "é".repeat(MAX_TAG_VALUE + 1);
    step!(rig, rig.command(0, BoardCommand::SetTags(vec![("White".into(), value)])) => [
        "reply 2: InvalidArgument: tag `White`: the value has 256 characters (at most 255)",
    ]);
    // At the limit: taken (characters, not bytes).
    let value = "é".repeat(MAX_TAG_VALUE);
    step!(rig, rig.command(0, BoardCommand::SetTags(vec![("White".into(), value)])) => [
        "store 1: tags @0.000",
    ]);
}

/// With the largest tags a caller can set, a press does exactly what it
/// does without tags, and the PGN it hands over shares the tags (the
/// timing thread copies none and renders none: the control loop renders).
#[test]
fn a_press_with_the_largest_tags_copies_and_renders_no_tag() {
    let mut plain = Rig::started_with("300+2", Settings::default());
    let mut tagged = Rig::started_with("300+2", Settings::default());
    tagged.command(0, BoardCommand::SetTags(tags(MAX_TAGS, MAX_TAG_VALUE)));
    tagged.commit_all(0);
    let mut shared = Vec::new();
    for (n, at_ms) in [(0u16, 4_000i64), (1, 9_000), (2, 12_000)] {
        let button = if n % 2 == 0 {
            Button::Left
        } else {
            Button::Right
        };
        assert_eq!(
            unnumbered(tagged.button(at_ms, n, button, at_ms)),
            unnumbered(plain.button(at_ms, n, button, at_ms)),
            "the press at {at_ms} ms"
        );
        let seq = tagged.journal.last().unwrap().0;
        let actions = tagged.board.handle(
            mono(at_ms),
            wall(at_ms),
            BoardInput::Committed { seq, ok: true },
        );
        let lines: Vec<String> = actions.iter().map(line).collect();
        assert_eq!(lines, plain.commit_all(at_ms), "the commit at {at_ms} ms");
        let game = committed_pgn(&actions).expect("the PGN goes out with the commit");
        assert_eq!(game.set_tags.len(), MAX_TAGS);
        shared.push(std::sync::Arc::clone(&game.set_tags));
    }
    assert!(
        shared
            .windows(2)
            .all(|w| std::sync::Arc::ptr_eq(&w[0], &w[1])),
        "every press hands over the same tags, not a copy"
    );
    let text = tagged.board.pgn();
    assert!(text.contains(&format!("[Tag00063 \"{}\"]", "x".repeat(MAX_TAG_VALUE))));
}

#[test]
fn a_caller_name_longer_than_128_bytes_is_refused() {
    let mut rig = Rig::started_with("300+2", Settings::default());
    let caller = Caller {
        uid: None,
        name: Some("a".repeat(MAX_CALLER_NAME + 1)),
    };
    let lines = rig.step(
        1_000,
        BoardInput::Command {
            token: Some(ReplyToken(9)),
            caller,
            command: BoardCommand::Pause,
        },
    );
    step!(rig, lines => [
        "display0: 5:01 [R] | 5:02",
        "reply 9: InvalidArgument: the caller's name has 129 bytes (at most 128)",
    ]);
    assert!(rig.state(1_000).running.is_some(), "the clock still runs");
}

/// A journal written before the bounds (50,000 tags in one row): the row is
/// refused at the restart as a live request would be, and the game comes
/// back with everything else.
#[test]
fn a_stored_flood_of_tags_is_refused_at_a_restart_and_the_game_kept() {
    let mut rig = Rig::linked("300");
    rig.command(1_000, BoardCommand::Start);
    rig.commit_all(1_000);
    rig.command(
        2_000,
        BoardCommand::SetTags(vec![("Round".into(), "3.1".into())]),
    );
    rig.commit_all(2_000);
    rig.button(6_000, 0, Button::Left, 6_000);
    rig.commit_all(6_000);
    let mut stored = rig.stored(12_000);
    let flood: BTreeMap<String, String> = tags(50_000, 4).into_iter().collect();
    stored.events.push(crate::journal::EventRow {
        offset_us: 7_000 * MS,
        wall_us: wall(7_000),
        event: StoredEvent::Tags { tags: flood },
        caller_uid: Some(1000),
        caller_name: None,
        origin: None,
    });
    let (board, _) = Board::restore(setup(), spec("300"), &stored, &resumed(14_500));
    let pgn = board.pgn();
    assert!(pgn.contains("[Round \"3.1\"]"), "{pgn}");
    assert!(!pgn.contains("Tag00000"), "{pgn}");
    assert_eq!(board.state(mono(14_500)).white.moves, 1);
}
