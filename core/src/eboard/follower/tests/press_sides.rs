//! Issue 28, item 3: a press completes only the pressing side's own last
//! move. Black plays 2...d5 by way of a stop on d6 while White's press for
//! 2. Nf3 (the side that just moved) lands a few milliseconds from Black's
//! first placement: before it, in the same millisecond, or after it, and
//! reaching the detector before or after that placement (the press's
//! confirmation travels through the board core, the placement through the
//! board's shell). The stop on d6 must never be recorded; Black's move is
//! confirmed by Black's own press, by the next move, or by the board
//! standing unchanged for the documented 1.5 s.

use super::*;

/// White's press for 2. Nf3.
const PRESS: Micros = 6_000 * MS;

/// How Black's first placement (the stop on d6) meets White's press.
#[derive(Clone, Copy, Debug)]
struct Meeting {
    /// The placement's instant minus the press's, in ms.
    placed_after_press_ms: i64,
    /// Which of the two reaches the detector first.
    press_arrives_first: bool,
}

/// Every meeting: the placement 5 ms before the press, in the same ms, and
/// 5 ms after it, each arriving before and after the press.
fn meetings() -> Vec<Meeting> {
    let mut all = Vec::new();
    for placed_after_press_ms in [-5, 0, 5] {
        for press_arrives_first in [false, true] {
            all.push(Meeting {
                placed_after_press_ms,
                press_arrives_first,
            });
        }
    }
    all
}

/// 1. e4 e5 2. Nf3 on the board, the first move of each side pressed,
/// 2. Nf3 not yet (it stands tentative).
fn after_nf3() -> Table {
    let mut t = Table::new("60", true);
    t.start(0);
    t.play(ms(1_000), "e4");
    t.press(ms(2_000), Side::White);
    t.play(ms(3_000), "e5");
    t.press(ms(4_000), Side::Black);
    t.play(ms(5_000), "Nf3");
    t
}

/// The board after `san` from the table's position, which does not change
/// (a stop on the way, or a move the test shows by itself).
fn placement_after(t: &Table, san: &str) -> Placement {
    let mv = san.parse::<SanPlus>().unwrap().san.to_move(&t.pos).unwrap();
    let mut pos = t.pos.clone();
    pos.play_unchecked(mv);
    Placement::from_board(pos.board())
}

/// White presses for 2. Nf3 as Black puts a pawn down on `first` (d6):
/// returns the instant of that placement.
fn black_places_as_white_presses(t: &mut Table, meeting: Meeting, first: &str) -> Micros {
    let placed = PRESS + ms(meeting.placed_after_press_ms);
    let placement = placement_after(t, first);
    if meeting.press_arrives_first {
        t.press(PRESS, Side::White);
        t.show(placed, &placement);
    } else {
        t.show(placed, &placement);
        t.press(PRESS, Side::White);
    }
    placed
}

fn sans(t: &Table) -> Vec<String> {
    t.broadcast().into_iter().map(|(san, _)| san).collect()
}

fn tentative(t: &Table) -> Option<String> {
    t.f.tentative().map(|m| m.san.clone())
}

#[test]
fn press_of_the_side_that_moved_does_not_confirm_the_opponents_tentative_placement() {
    for meeting in meetings() {
        let mut t = after_nf3();
        let placed = black_places_as_white_presses(&mut t, meeting, "d6");
        assert_eq!(
            tentative(&t).as_deref(),
            Some("d6"),
            "{meeting:?}: White's press leaves Black's stop tentative"
        );
        assert_eq!(sans(&t), ["e4", "e5", "Nf3"], "{meeting:?}");
        // The hand goes on to d5 300 ms later: it replaces the stop.
        t.play(placed + ms(300), "d5");
        assert_eq!(tentative(&t).as_deref(), Some("d5"), "{meeting:?}");
        assert_eq!(t.f.ply(), 4, "{meeting:?}: the stop was no move");
        // Black's own press completes Black's move.
        t.press(placed + ms(800), Side::Black);
        assert_eq!(tentative(&t), None, "{meeting:?}");
        assert_eq!(sans(&t), ["e4", "e5", "Nf3", "d5"], "{meeting:?}");
        let text = flat(&t.f.render());
        assert!(text.contains("2... d5 {[%clk"), "{meeting:?}: {text}");
        assert!(!text.contains("d6"), "{meeting:?}: {text}");
        let state = t.engine.state(placed + ms(800));
        assert_eq!(
            (state.white.moves, state.black.moves),
            (2, 2),
            "{meeting:?}"
        );
        assert!(t.adjusts.is_empty(), "{meeting:?}: {:?}", t.adjusts);
    }
}

#[test]
fn press_of_the_side_that_moved_leaves_the_opponents_stop_to_the_stable_time() {
    // Black's stop on d6, then d5 without a press: the board standing 1.5 s
    // confirms d5, never d6.
    assert_eq!(DetectorConfig::default().confirm_after, 1_500 * MS);
    for meeting in meetings() {
        let mut t = after_nf3();
        let placed = black_places_as_white_presses(&mut t, meeting, "d6");
        let d5_at = placed + ms(300);
        t.play(d5_at, "d5");
        t.tick(d5_at + ms(1_499));
        assert_eq!(tentative(&t).as_deref(), Some("d5"), "{meeting:?}");
        t.tick(d5_at + ms(1_500));
        assert_eq!(tentative(&t), None, "{meeting:?}");
        assert_eq!(sans(&t), ["e4", "e5", "Nf3", "d5"], "{meeting:?}");
        assert!(!t.f.render().contains("d6"), "{meeting:?}");
    }
}

#[test]
fn a_genuine_opponents_move_is_still_recorded_by_its_own_press_or_the_stable_time() {
    for meeting in meetings() {
        // 2...d6 played for good, completed by Black's own press.
        let mut t = after_nf3();
        let placed = black_places_as_white_presses(&mut t, meeting, "d6");
        t.press(placed + ms(700), Side::Black);
        assert_eq!(tentative(&t), None, "{meeting:?}");
        assert_eq!(sans(&t), ["e4", "e5", "Nf3", "d6"], "{meeting:?}");
        let text = flat(&t.f.render());
        assert!(text.contains("2... d6 {[%clk"), "{meeting:?}: {text}");

        // 2...d6 played for good, Black forgets to press: the board standing
        // unchanged for 1.5 s confirms it.
        let mut t = after_nf3();
        let placed = black_places_as_white_presses(&mut t, meeting, "d6");
        t.tick(placed + ms(1_499));
        assert_eq!(tentative(&t).as_deref(), Some("d6"), "{meeting:?}");
        t.tick(placed + ms(1_500));
        assert_eq!(tentative(&t), None, "{meeting:?}");
        assert_eq!(sans(&t), ["e4", "e5", "Nf3", "d6"], "{meeting:?}");

        // 2...d6 played for good, White's next move confirms it.
        let mut t = after_nf3();
        let placed = black_places_as_white_presses(&mut t, meeting, "d6");
        let mv = "d6"
            .parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&t.pos)
            .unwrap();
        t.pos.play_unchecked(mv);
        t.play(placed + ms(1_000), "d4");
        assert_eq!(sans(&t), ["e4", "e5", "Nf3", "d6"], "{meeting:?}");
        assert_eq!(tentative(&t).as_deref(), Some("d4"), "{meeting:?}");
    }
}

#[test]
fn a_press_still_completes_the_pressing_sides_own_tentative_move() {
    // White's own 2. Nf3, tentative, is confirmed by White's press, with no
    // placement of Black's near it.
    let mut t = after_nf3();
    assert_eq!(tentative(&t).as_deref(), Some("Nf3"));
    t.press(PRESS, Side::White);
    assert_eq!(tentative(&t), None);
    assert_eq!(sans(&t), ["e4", "e5", "Nf3"]);
}
