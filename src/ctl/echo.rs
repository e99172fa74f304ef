//! What a changing command says it did: one line per board, from the
//! board's state before and after and from the record row the change wrote
//! (the daemon computes before -> after at the instant of the change, so a
//! running clock's correction is exact). Pure functions.
//!
//! Promises: every change prints what changed (`b2 white 5:11 -> 4:30,
//! moves 12 -> 13`); warnings are separate lines for standard error.

use chessclock_core::engine::Side;
use chessclock_core::journal::StoredEvent;
use chessclock_core::views::text::correction_text_in;
use chessclock_core::views::{ControlView, HistoryRow, StateView};

use super::output::{side_time, start_text};
use super::time::LocalTime;

/// `White` or `Black`, as a sentence names a player.
fn player(side: Side) -> &'static str {
    match side {
        Side::White => "White",
        Side::Black => "Black",
    }
}

fn clocks(view: &StateView) -> String {
    format!(
        "white {} | black {}",
        side_time(view, Side::White),
        side_time(view, Side::Black)
    )
}

/// `b4: new game 900+10: 15 min; 10 s per move from move 1`.
pub fn new_game(board: &str, control: &ControlView) -> String {
    format!("{board}: new game {}: {}", control.control, control.prose)
}

/// `b1: started: White's clock runs (white 5:00 | black 5:00)`.
pub fn started(after: &StateView) -> String {
    format!(
        "{}: started: White's clock runs ({})",
        after.board,
        clocks(after)
    )
}

/// A scheduled start, saying when the one it replaced was due.
pub fn scheduled(before: &StateView, after: &StateView, local: &LocalTime) -> String {
    let when = start_text(after, local).unwrap_or_else(|| "as scheduled".to_owned());
    let check = match after.scheduled_start_forced {
        Some(true) => " (forced past the NTP check)",
        _ => "",
    };
    match before.scheduled_start_unix_ms {
        Some(old) if before.scheduled_start_ms.is_some() => format!(
            "{}: start moved: replaces the start at {}; starts {when}{check}",
            after.board,
            local.time_of_day(old.saturating_mul(1000))
        ),
        _ => format!("{}: starts {when}{check}", after.board),
    }
}

/// `b1: scheduled start at 14:00:00 cancelled`.
pub fn cancelled(before: &StateView, local: &LocalTime) -> String {
    match before.scheduled_start_unix_ms {
        Some(at) => format!(
            "{}: scheduled start at {} cancelled",
            before.board,
            local.time_of_day(at.saturating_mul(1000))
        ),
        None => format!("{}: scheduled start cancelled", before.board),
    }
}

/// `b1: paused (white 4:31 | black 5:00)`.
pub fn paused(after: &StateView) -> String {
    format!("{}: paused ({})", after.board, clocks(after))
}

/// `b1: resumed: Black's clock runs (white 4:31 | black 5:00)`.
pub fn resumed(after: &StateView) -> String {
    match after.running {
        Some(side) => format!(
            "{}: resumed: {}'s clock runs ({})",
            after.board,
            player(side),
            clocks(after)
        ),
        None => format!("{}: resumed ({})", after.board, clocks(after)),
    }
}

/// `b1: white pressed: move 13 in 0:12.345; Black's clock runs (...)`.
pub fn pressed(side: Side, after: &StateView, row: Option<&HistoryRow>) -> String {
    let made = match row.and_then(|r| r.move_number.zip(r.move_used_ms)) {
        Some((number, used)) => format!(
            ": move {number} in {}",
            chessclock_core::clocktext::exact(used.saturating_mul(1000))
        ),
        None => String::new(),
    };
    let runs = match after.running {
        Some(running) => format!("; {}'s clock runs", player(running)),
        None => String::new(),
    };
    format!(
        "{}: {side} pressed{made}{runs} ({})",
        after.board,
        clocks(after)
    )
}

/// `b2 white 5:11 -> 4:30, moves 12 -> 13` (a relative one adds `(+2:00)`).
/// `style`: how the board writes times (its displays' setting).
pub fn corrected(
    board: &str,
    row: &HistoryRow,
    style: chessclock_core::clocktext::Style,
) -> String {
    let change = match &row.correction {
        Some(correction) => correction_text_in(correction, style),
        None => "corrected".to_owned(),
    };
    let by = match &row.event {
        StoredEvent::Adjust {
            by_us: Some(by), ..
        } => format!(
            " ({}{})",
            if *by < 0 { "-" } else { "+" },
            chessclock_core::clocktext::amount(by.saturating_abs())
        ),
        _ => String::new(),
    };
    format!("{board} {change}{by}")
}

/// `b1: undid the arbiter's press for white: white 4:50 -> 4:48, moves 1 -> 0; White's clock runs`.
pub fn undone(after: &StateView, row: Option<&HistoryRow>) -> String {
    let side = match row.map(|r| &r.event) {
        Some(StoredEvent::PressUndone { side, .. }) => format!(" for {side}"),
        _ => String::new(),
    };
    let change = row
        .and_then(|r| r.correction.as_ref())
        .map_or(String::new(), |c| {
            format!(": {}", correction_text_in(c, after.style()))
        });
    let runs = match after.running {
        Some(running) => format!("; {}'s clock runs", player(running)),
        None => String::new(),
    };
    format!(
        "{}: undid the arbiter's press{side}{change}{runs}",
        after.board
    )
}

/// `b1: note recorded: 3-fold claim rejected`.
/// What `ack-call` did: who acknowledged the call, and what still answers
/// it.
pub fn call_acknowledged(board: &str, after: &StateView) -> String {
    let by = after
        .arbiter_call_acknowledged_by
        .as_deref()
        .map_or(String::new(), |by| format!(" by {by}"));
    format!(
        "{board}: arbiter call acknowledged{by}; the clock stays stopped until \
         chessclockctl resume {board}"
    )
}

pub fn noted(board: &str, text: &str) -> String {
    format!("{board}: note recorded: {}", text.trim())
}

/// A warning when the move counts do not fit the side to move (White to
/// move: both sides have made as many moves; Black to move: White one
/// more).
pub fn move_count_warning(view: &StateView) -> Option<String> {
    if !view.started {
        return None;
    }
    let to_move = view.to_move?;
    let (white, black) = (view.white.moves, view.black.moves);
    let fits = match to_move {
        Side::White => white == black,
        Side::Black => white == black + 1,
    };
    (!fits).then(|| {
        format!(
            "warning: {}: white has {white} moves and black {black} with {to_move} to move; \
             {} (check --moves)",
            view.board,
            match to_move {
                Side::White => "with White to move both should have made as many moves",
                Side::Black => "with Black to move White should have made one move more",
            }
        )
    })
}

/// The last row of `rows` that `matches`, searching from the end.
pub fn last_row(rows: &[HistoryRow], matches: impl Fn(&HistoryRow) -> bool) -> Option<&HistoryRow> {
    rows.iter().rev().find(|r| matches(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chessclock_core::clocktext::Style;
    use chessclock_core::views::Correction;

    fn adjust_row(by_us: Option<i64>) -> HistoryRow {
        let row: HistoryRow = serde_json::from_value(serde_json::json!({
            "do": "adjust", "side": "white", "remaining_us": 270_000_000, "moves": 13,
            "stage": null, "t_ms": 0, "t_us": 0, "wall_us": 0, "caller_uid": 1000,
            "device": null, "outcome": [], "white_used_ms": 0, "black_used_ms": 0,
            "white_remaining_ms": 270_000, "black_remaining_ms": 300_000
        }))
        .unwrap();
        HistoryRow {
            event: match row.event {
                StoredEvent::Adjust {
                    side,
                    remaining_us,
                    moves,
                    stage,
                    source,
                    ..
                } => StoredEvent::Adjust {
                    side,
                    remaining_us,
                    moves,
                    stage,
                    source,
                    by_us,
                },
                other => other,
            },
            correction: Some(Correction {
                side: Side::White,
                remaining_before_ms: Some(311_000),
                remaining_after_ms: Some(270_000),
                moves_before: 12,
                moves_after: 13,
                stage_before: 1,
                stage_after: 1,
            }),
            ..row
        }
    }

    #[test]
    fn a_correction_says_before_and_after() {
        assert_eq!(
            corrected("b2", &adjust_row(None), Style::CLOCK),
            "b2 white 5:11 -> 4:30, moves 12 -> 13"
        );
        assert_eq!(
            corrected("b2", &adjust_row(Some(-41_000_000)), Style::CLOCK),
            "b2 white 5:11 -> 4:30, moves 12 -> 13 (-0:41)"
        );
    }

    #[test]
    fn move_counts_that_do_not_fit_the_side_to_move_are_warned_about() {
        let mut view = super::super::output::tests::view("b1");
        assert_eq!(move_count_warning(&view), None);
        view.white.moves = 4;
        let warning = move_count_warning(&view).unwrap();
        assert!(
            warning.starts_with("warning: b1: white has 4 moves and black 3 with white to move"),
            "{warning}"
        );
        view.to_move = Some(Side::Black);
        assert_eq!(move_count_warning(&view), None);
    }
}
