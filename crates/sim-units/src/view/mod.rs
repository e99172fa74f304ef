//! The interactive view, as a pure function: unit snapshots in, a grid of
//! styled characters out ([`render`]). The terminal shell
//! ([`super::interactive`]) only copies the grid to the screen, so the
//! drawing is tested as text.
//!
//! By responsibility: [`canvas`] (the grid), [`digits`] (LED digits and
//! how a panel fits a time), [`icons`], `units` (the boxes of display and
//! button units), `activity` (the feed), [`board`] (the demo's board: who is
//! White and Black, the control, what to press next); this module lays them
//! out.
//!
//! Promises: any size (even 0×0) renders without panicking; the largest
//! digit size that fits is chosen (big 5-row block digits, then narrow
//! block digits, then plain text).

mod activity;
pub mod board;
pub mod canvas;
pub mod digits;
pub mod icons;
#[cfg(test)]
mod tests;
mod units;

pub use board::BoardPanel;
pub use canvas::{Canvas, Cell, Tone};
pub use digits::{fit_time, time_width, Scale};
pub use icons::{icon_by_name, icon_names, ICON_NAMES};

use super::unit::{UnitKind, UnitSnapshot};
use activity::draw_activity;
use units::{display_height, display_width, draw_buttons_unit, draw_display_unit, BUTTONS_HEIGHT};

/// What the status/footer lines say besides the units.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewStatus {
    /// The last thing that happened (e.g. `left pressed (event 4)`).
    pub message: String,
    /// Now, host CLOCK_MONOTONIC µs (for beeps).
    pub now_us: i64,
    /// Whether a script is running, and its progress.
    pub script: Option<String>,
    /// Activity times are shown relative to this instant (µs).
    pub origin_us: i64,
    /// The demo's board (`chessclockd --demo`): names, control, what to press.
    pub board: Option<BoardPanel>,
}

const KEYS_HELP: &str =
    "a/z/⇧L left · l/m/⇧R right · space arbiter · u unplug all · 1-9 one unit · q quit";

/// The board panel's lines wrapped to `room` columns (words kept whole
/// where they fit; a longer word, such as a bus address, is cut).
fn board_rows(status: &ViewStatus, room: i32) -> Vec<(String, Tone)> {
    let room = room.max(8) as usize;
    let mut rows = Vec::new();
    for (line, tone) in status.board.iter().flat_map(|b| b.lines.iter()) {
        let mut current = String::new();
        for word in line.split(' ') {
            let mut word = word.to_owned();
            loop {
                let needed = current.chars().count()
                    + usize::from(!current.is_empty())
                    + word.chars().count();
                if needed <= room {
                    if !current.is_empty() {
                        current.push(' ');
                    }
                    current.push_str(&word);
                    break;
                }
                if !current.is_empty() {
                    rows.push((std::mem::take(&mut current), *tone));
                    continue;
                }
                // A word longer than a row.
                let head: String = word.chars().take(room).collect();
                word = word.chars().skip(room).collect();
                rows.push((head, *tone));
                if word.is_empty() {
                    break;
                }
            }
        }
        if !current.is_empty() {
            rows.push((current, *tone));
        }
    }
    rows
}

/// Rows the board panel takes at `width` (frame included).
fn board_height(status: &ViewStatus, width: i32) -> i32 {
    if status.board.is_none() {
        return 0;
    }
    board_rows(status, width - 4).len() as i32 + 2
}

/// The panel and button labels: the board's side names, or LEFT / RIGHT.
fn side_labels(status: &ViewStatus) -> (String, String) {
    match &status.board {
        Some(board) => (board.left.clone(), board.right.clone()),
        None => ("LEFT".to_owned(), "RIGHT".to_owned()),
    }
}

/// `text` cut to `room` characters, with an ellipsis when cut.
fn fit(text: &str, room: i32) -> String {
    let room = room.max(0) as usize;
    if text.chars().count() <= room {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(room.saturating_sub(1)).collect();
    if room > 0 {
        cut.push('…');
    }
    cut
}

/// The largest digit size at which every unit fits `width` × `height`.
pub fn choose_scale(units: &[UnitSnapshot], width: u16, height: u16) -> Scale {
    choose_scale_with(units, width, height, 0)
}

/// [`choose_scale`] with `reserved` rows taken by something else (the
/// demo's board panel).
pub fn choose_scale_with(units: &[UnitSnapshot], width: u16, height: u16, reserved: i32) -> Scale {
    let displays: Vec<&UnitSnapshot> = units.iter().filter(|u| u.kind.has_display()).collect();
    let button_boxes = units.iter().filter(|u| u.kind.has_buttons()).count() as i32;
    let available = i32::from(height) - 1 - 2 - reserved; // title bar, status and keys
    let needed = |scale: Scale| {
        displays
            .iter()
            .map(|u| display_height(u, scale))
            .sum::<i32>()
            + button_boxes * BUTTONS_HEIGHT
    };
    [Scale::Big, Scale::Narrow]
        .into_iter()
        .find(|&s| {
            needed(s) <= available
                && displays
                    .iter()
                    .all(|u| display_width(u, s) <= i32::from(width))
        })
        .unwrap_or(Scale::Text)
}

/// Draws everything into a `width` × `height` canvas.
pub fn render(units: &[UnitSnapshot], status: &ViewStatus, width: u16, height: u16) -> Canvas {
    let mut canvas = Canvas::new(width, height);
    let w = i32::from(width);
    let h = i32::from(height);
    if w == 0 || h == 0 {
        return canvas;
    }
    canvas.fill_row(0, Tone::Bar);
    let title = if status.board.is_some() {
        "chessclockd --demo · a chess clock with simulated units"
    } else {
        "chessclock-sim · simulated clock hardware"
    };
    canvas.text(1, 0, title, Tone::Bar);
    if let Some(script) = &status.script {
        let x = (w - script.chars().count() as i32 - 1).max(44);
        canvas.text(x, 0, script, Tone::Bar);
    }

    let displays: Vec<&UnitSnapshot> = units.iter().filter(|u| u.kind.has_display()).collect();
    let buttons: Vec<&UnitSnapshot> = units
        .iter()
        .filter(|u| u.kind == UnitKind::Buttons)
        .collect();
    let combined_buttons: Vec<&UnitSnapshot> = units
        .iter()
        .filter(|u| u.kind == UnitKind::Combined)
        .collect();
    let reserved = board_height(status, w);
    let scale = choose_scale_with(units, width, height, reserved);
    let mut y = 1;
    if let Some(board) = &status.board {
        canvas.frame(0, y, w, reserved, &fit(&board.title, w - 6), Tone::Dim);
        for (row, (line, tone)) in board_rows(status, w - 4).iter().enumerate() {
            canvas.text(2, y + 1 + row as i32, line, *tone);
        }
        y += reserved;
    }
    for unit in &displays {
        let box_height = display_height(unit, scale);
        draw_display_unit(&mut canvas, unit, status, 0, y, w, box_height, scale);
        y += box_height;
    }
    for unit in buttons.iter().chain(combined_buttons.iter()) {
        draw_buttons_unit(&mut canvas, unit, &side_labels(status), 0, y, w);
        y += BUTTONS_HEIGHT;
    }
    let activity_rows = h - 2 - y;
    if activity_rows >= 3 {
        draw_activity(&mut canvas, units, status, y, w, activity_rows);
    }

    canvas.text(1, h - 2, &status.message, Tone::Normal);
    canvas.fill_row(h - 1, Tone::Bar);
    let keys = status.board.as_ref().map_or(KEYS_HELP, |b| b.keys.as_str());
    canvas.text(1, h - 1, keys, Tone::Bar);
    canvas
}
