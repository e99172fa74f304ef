//! The demo's board above the units (`chessclockd --demo`): which panel and
//! button is White's and Black's, the control in words, what is happening
//! and what to press next, and how to reach the daemon from another
//! terminal. Pure: built from the board's State view.

use chessclock_core::clocktext;
use chessclock_core::engine::Side;
use chessclock_core::views::StateView;

use super::Tone;

/// What the view shows of the board (absent for the plain simulator).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoardPanel {
    /// The box's title: the board and its control.
    pub title: String,
    /// The situation and what to press, one line each.
    pub lines: Vec<(String, Tone)>,
    /// Labels of the left and right panels and buttons (`WHITE · a`).
    pub left: String,
    pub right: String,
    /// The keys line at the bottom.
    pub keys: String,
}

/// What the demo knows besides the board's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DemoInfo {
    /// How to read the board from another terminal.
    pub bus: String,
    /// White sits at the left button.
    pub white_left: bool,
    /// Black's press starts White's clock.
    pub start_on_black_press: bool,
    /// Something to say once (a game kept from the last run, a new game).
    pub notice: Option<String>,
}

/// The keys of the demo, as [`super::super::interactive::key_action`] maps them.
pub const DEMO_KEYS: &str =
    "a White · l Black · space arbiter · r resume · n new game · u unplug all · 1-9 one unit · q quit";

impl BoardPanel {
    /// The panel for the board's state `view`.
    pub fn of(view: &StateView, info: &DemoInfo) -> BoardPanel {
        let (white_key, black_key) = if info.white_left {
            ("a", "l")
        } else {
            ("l", "a")
        };
        let label = |side: Side| match side {
            Side::White => format!("WHITE · key {white_key}"),
            Side::Black => format!("BLACK · key {black_key}"),
        };
        let (left, right) = if info.white_left {
            (label(Side::White), label(Side::Black))
        } else {
            (label(Side::Black), label(Side::White))
        };
        let key = |side: Side| match side {
            Side::White => white_key,
            Side::Black => black_key,
        };
        let prose = view.control_prose.as_deref().unwrap_or("");
        let title = format!("board {} · {} · {prose}", view.board, view.control);
        let mut lines = Vec::new();
        if let Some(notice) = &info.notice {
            lines.push((notice.clone(), Tone::Title));
        }
        let down: Vec<&str> = view
            .devices
            .iter()
            .filter(|d| !d.connected)
            .map(|d| d.role.as_str())
            .collect();
        let situation = if view.arbiter_called {
            (
                "ARBITER called (space): the clocks are stopped. Press r to resume when dealt with."
                    .to_owned(),
                Tone::Warn,
            )
        } else if let Some(first) = view.flags.first() {
            (
                format!(
                    "{}'s flag fell: the game is over on time. Press n for a new game.",
                    name(*first)
                ),
                Tone::Bad,
            )
        } else if !view.started {
            match view.scheduled_start_ms {
                Some(at) => (
                    format!(
                        "White's clock starts in {} (scheduled).",
                        clocktext::remaining_ms((at - view.t).max(0), clocktext::Style::SECONDS)
                    ),
                    Tone::Title,
                ),
                None if info.start_on_black_press => (
                    format!(
                        "To start, press {black_key}: Black's button starts White's clock. Then each \
                         side presses its own button after its move."
                    ),
                    Tone::Good,
                ),
                None => (
                    "Start the clocks with chessclockctl --user start demo.".to_owned(),
                    Tone::Good,
                ),
            }
        } else if view.paused {
            let on_resume = view.to_move.map_or(String::new(), |side| {
                format!(" ({}'s clock runs)", name(side))
            });
            match &view.restart {
                Some(restart) => (
                    format!(
                        "The daemon restarted after {} down: the clocks are paused. Press r to \
                         resume{on_resume}, n for a new game.",
                        clocktext::remaining_ms(restart.down_ms, clocktext::Style::SECONDS)
                    ),
                    Tone::Warn,
                ),
                None => (
                    format!("Paused. Press r to resume{on_resume}, n for a new game."),
                    Tone::Warn,
                ),
            }
        } else if let Some(side) = view.running {
            (
                format!(
                    "{} to move: {} presses {} after the move.",
                    name(side),
                    name(side),
                    key(side)
                ),
                Tone::Good,
            )
        } else {
            (
                "The clocks are stopped. Press n for a new game.".to_owned(),
                Tone::Normal,
            )
        };
        lines.push(situation);
        if !down.is_empty() {
            lines.push((
                format!(
                    "{} unplugged: u (or its number) plugs it back; nothing is lost.",
                    down.join(" and ")
                ),
                Tone::Bad,
            ));
        }
        lines.push((info.bus.clone(), Tone::Dim));
        BoardPanel {
            title,
            lines,
            left,
            right,
            keys: DEMO_KEYS.to_owned(),
        }
    }
}

fn name(side: Side) -> &'static str {
    match side {
        Side::White => "White",
        Side::Black => "Black",
    }
}
