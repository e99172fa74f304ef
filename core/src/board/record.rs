//! The words of the record: what an input caused, as a person reads it in
//! the history, and the refusals a caller is told.

use crate::engine::{Ignored, Input, Notice};
use crate::timecontrol::MAX_MOVES;

use crate::views::text::seconds;
pub use crate::views::text::{correction_text, row_text, utc_text};

/// Why an input changed nothing, in words.
pub fn ignored_reason(reason: Ignored) -> &'static str {
    match reason {
        Ignored::NotStarted => "the game has not started",
        Ignored::AlreadyStarted => "the game has already started",
        Ignored::Paused => "the clock is paused",
        Ignored::NotPaused => "the clock is not paused",
        Ignored::NotRunningSide => "that side's clock is not running",
        Ignored::Frozen => "the clock stopped after a flag fell",
        Ignored::MoveLimit => "that side has made 999 moves, the most a game can have",
    }
}

/// What a caller is told when its input changed nothing.
pub fn ignored_message(input: &Input, reason: Ignored) -> String {
    match reason {
        Ignored::NotStarted => {
            "the game has not started yet: start it first (chessclockctl start)".into()
        }
        Ignored::AlreadyStarted => "the game has already started".into(),
        Ignored::Paused => "the clock is paused: resume it first (chessclockctl resume)".into(),
        Ignored::NotPaused => "the clock is not paused".into(),
        Ignored::NotRunningSide => match input {
            Input::Press(side) => {
                format!("{side}'s clock is not running: only the side to move can press")
            }
            _ => "that side's clock is not running".into(),
        },
        Ignored::Frozen => {
            "the clock stopped after a flag fell: adjust the time or start a new game".into()
        }
        Ignored::MoveLimit => match input {
            Input::Press(side) => format!(
                "{side} has made {MAX_MOVES} moves, the most a game can have (at most {MAX_MOVES})"
            ),
            _ => format!("a side has at most {MAX_MOVES} moves"),
        },
    }
}

/// One notice in words.
pub fn describe(notice: &Notice) -> String {
    match notice {
        Notice::Started => "White's clock started".into(),
        Notice::Pressed {
            side,
            move_number,
            used,
        } => format!("{side} completed move {move_number} in {}", seconds(*used)),
        Notice::Ignored { reason, .. } => format!("ignored: {}", ignored_reason(*reason)),
        Notice::FlagFell {
            side,
            at,
            stage,
            last_stage,
        } => format!(
            "{side}'s flag fell at {} in stage {stage}{}",
            seconds(*at),
            if *last_stage {
                ""
            } else {
                " (not the last stage: the clock runs on)"
            }
        ),
        Notice::StageChanged { side, stage, .. } => format!("{side} reached stage {stage}"),
        Notice::Paused => "clock paused".into(),
        Notice::Resumed => "clock resumed".into(),
        Notice::Adjusted(adjustment) => {
            let mut parts = Vec::new();
            if let Some(remaining) = adjustment.remaining {
                parts.push(format!("remaining time {}", seconds(remaining)));
            }
            if let Some(moves) = adjustment.moves {
                parts.push(format!("moves {moves}"));
            }
            if let Some(stage) = adjustment.stage {
                parts.push(format!("stage {stage}"));
            }
            format!("{} set to {}", adjustment.side, parts.join(", "))
        }
        Notice::Frozen { at } => format!("clock stopped at {} (flag)", seconds(*at)),
    }
}

/// The refusal among `notices`, if the input changed nothing.
pub fn refusal(notices: &[Notice]) -> Option<String> {
    notices.iter().find_map(|n| match n {
        Notice::Ignored { input, reason } => Some(ignored_message(input, *reason)),
        _ => None,
    })
}
