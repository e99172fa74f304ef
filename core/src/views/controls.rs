//! What a control means, as the Manager's `DescribeControl()` and
//! `Presets()` answer it and `chessclockctl new` shows it; and the one rule
//! for a control under a minute ([`ControlView::short_base`]).

use serde::{Deserialize, Serialize};

use super::match_prose;
use crate::engine::report::floor_ms;

/// One side's control, as `DescribeControl` and `chessclockctl new` show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideControlView {
    /// The project notation (`900+10`).
    pub notation: String,
    /// FIDE prose.
    pub prose: String,
    /// The time the side starts with before any bonus (the first stage,
    /// the main time); `None` for upcount.
    pub base_ms: Option<i64>,
    /// The highest stage the control has.
    pub stages: u32,
}

impl SideControlView {
    pub fn of(control: &crate::timecontrol::TimeControl) -> SideControlView {
        use crate::timecontrol::TimeControl;
        let base = match control {
            TimeControl::Stages(stages) => stages.first().map(|s| s.time),
            TimeControl::Hourglass { time } => Some(*time),
            TimeControl::ByoYomi { main, .. } | TimeControl::Canadian { main, .. } => Some(*main),
            TimeControl::Upcount => None,
        };
        SideControlView {
            notation: control.to_string(),
            prose: control.prose(),
            base_ms: base.map(floor_ms),
            stages: control.max_stage(),
        }
    }
}

/// What a control (notation or preset name) means: the Manager's
/// `DescribeControl()` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlView {
    /// The control as given.
    pub control: String,
    /// FIDE prose of the whole match.
    pub prose: String,
    pub white: SideControlView,
    pub black: SideControlView,
}

impl ControlView {
    pub fn of(text: &str, control: &crate::engine::MatchControl) -> ControlView {
        ControlView {
            control: text.to_owned(),
            prose: match_prose(control),
            white: SideControlView::of(&control.white),
            black: SideControlView::of(&control.black),
        }
    }

    /// The smaller of the two sides' base times (`None`: no limit).
    pub fn base_ms(&self) -> Option<i64> {
        match (self.white.base_ms, self.black.base_ms) {
            (Some(w), Some(b)) => Some(w.min(b)),
            (w, b) => w.or(b),
        }
    }

    /// Under a minute of base time is most often a slip (`15+10` for 15
    /// minutes: the notation counts seconds). The one rule for every place
    /// a person writes a control (`chessclockctl new` refuses it without
    /// `--yes`, the configuration without `short-control = true`): what is
    /// wrong, in words, with the minutes it likely meant.
    pub fn short_base(&self) -> Option<String> {
        let base = self.base_ms().filter(|&b| b < 60_000)?;
        let text = self.control.as_str();
        let minutes = text
            .split(['+', 'd', 'b'])
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| {
                text.chars()
                    .all(|c| c.is_ascii_digit() || "+db".contains(c))
            });
        let hint = match minutes {
            Some(n) => format!(
                " (the notation counts seconds: {n} minutes is {}{})",
                n * 60,
                &text[n.to_string().len()..]
            ),
            None => String::new(),
        };
        Some(format!(
            "`{text}` gives {} of base time ({}){hint}",
            crate::clocktext::remaining_ms(base, crate::clocktext::Style::SECONDS),
            self.prose
        ))
    }
}

/// A preset, as the Manager's `Presets()` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresetView {
    pub name: String,
    /// The notation it stands for (`white / black` when the sides differ).
    pub control: String,
    /// FIDE prose.
    pub prose: String,
    pub description: Option<String>,
    /// `builtin` or `config`.
    pub source: String,
}
