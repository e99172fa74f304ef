//! The feed of recent activity: every unit's latest happenings, in order.

use super::{fit, Canvas, Tone, ViewStatus};
use crate::unit::UnitSnapshot;

/// The latest happenings of every unit, newest at the bottom.
pub(super) fn draw_activity(
    canvas: &mut Canvas,
    units: &[UnitSnapshot],
    status: &ViewStatus,
    y: i32,
    w: i32,
    h: i32,
) {
    canvas.frame(0, y, w, h, "recent activity", Tone::Dim);
    let mut lines: Vec<(i64, &str, String)> = units
        .iter()
        .flat_map(|u| {
            u.recent.iter().map(move |a| {
                let repeat = if a.count > 1 {
                    format!("  ×{}", a.count)
                } else {
                    String::new()
                };
                (a.at_us, u.name.as_str(), format!("{}{repeat}", a.text))
            })
        })
        .collect();
    lines.sort_by_key(|(at, _, _)| *at);
    let room = (h - 2).max(0) as usize;
    let skip = lines.len().saturating_sub(room);
    let name_width = units
        .iter()
        .map(|u| u.name.chars().count())
        .max()
        .unwrap_or(0);
    for (row, (at, unit, text)) in lines.iter().skip(skip).enumerate() {
        let seconds = (at - status.origin_us) as f64 / 1e6;
        let line = format!("{seconds:>9.3} s  {unit:<name_width$}  {text}");
        canvas.text(2, y + 1 + row as i32, &fit(&line, w - 4), Tone::Normal);
    }
    if lines.is_empty() {
        canvas.text(
            2,
            y + 1,
            "nothing yet: start chessclockd on these paths",
            Tone::Dim,
        );
    }
}
