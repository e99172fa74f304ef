//! LED digits: the 3×5 glyphs at each scale, and how a panel with a given
//! number of digit positions fits a time (SPEC 8.1).

use super::{Canvas, Tone};

/// 3×5 glyphs; `#` is a lit pixel.
pub(super) fn glyph(ch: char) -> &'static [&'static str; 5] {
    match ch {
        '0' => &["###", "# #", "# #", "# #", "###"],
        '1' => &[" # ", "## ", " # ", " # ", "###"],
        '2' => &["###", "  #", "###", "#  ", "###"],
        '3' => &["###", "  #", "###", "  #", "###"],
        '4' => &["# #", "# #", "###", "  #", "  #"],
        '5' => &["###", "#  ", "###", "  #", "###"],
        '6' => &["###", "#  ", "###", "# #", "###"],
        '7' => &["###", "  #", "  #", "  #", "  #"],
        '8' => &["###", "# #", "###", "# #", "###"],
        '9' => &["###", "# #", "###", "  #", "###"],
        ':' => &[" ", "#", " ", "#", " "],
        '.' => &[" ", " ", " ", " ", "#"],
        '-' => &["   ", "   ", "###", "   ", "   "],
        ' ' => &["   ", "   ", "   ", "   ", "   "],
        // SPEC 8.1: unknown characters show as blank.
        _ => &["   ", "   ", "   ", "   ", "   "],
    }
}

/// Digit sizes, largest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Each pixel two columns wide: 5 rows.
    Big,
    /// Each pixel one column wide: 5 rows.
    Narrow,
    /// Plain text on one row.
    Text,
}

impl Scale {
    pub(super) fn pixel(self) -> i32 {
        match self {
            Scale::Big => 2,
            _ => 1,
        }
    }
    pub(super) fn digit_rows(self) -> i32 {
        match self {
            Scale::Text => 1,
            _ => 5,
        }
    }
}

/// `time` as a panel with `digits` digit positions shows it (SPEC 8.1):
/// every character but `:` and `.` takes a position; when there are more
/// than `digits`, the leftmost are not shown. `digits` 0: no limit.
pub fn fit_time(time: &str, digits: u8) -> String {
    let is_position = |c: char| c != ':' && c != '.';
    let positions = time.chars().filter(|&c| is_position(c)).count();
    let mut drop = positions.saturating_sub(usize::from(digits));
    if digits == 0 {
        drop = 0;
    }
    let mut out = String::new();
    for c in time.chars() {
        if drop > 0 {
            if is_position(c) {
                drop -= 1;
            }
            continue;
        }
        if out.is_empty() && !is_position(c) && positions > usize::from(digits) && digits > 0 {
            // A separator left of the first shown position has no place.
            continue;
        }
        out.push(c);
    }
    out
}

/// A time using all `digits` positions, for the width a panel reserves.
pub(super) fn full_time(digits: u8) -> &'static str {
    match digits {
        0 | 5 => "0:00:00",
        1 => "0",
        2 => "00",
        3 => "0:00",
        4 => "00:00",
        6 => "00:00:00",
        _ => "000:00:00",
    }
}

/// Columns `time` takes at `scale`.
pub fn time_width(time: &str, scale: Scale) -> i32 {
    if scale == Scale::Text {
        return time.chars().count() as i32;
    }
    let gap = 1;
    let mut width = 0;
    for (i, ch) in time.chars().enumerate() {
        if i > 0 {
            width += gap;
        }
        width += glyph(ch)[0].chars().count() as i32 * scale.pixel();
    }
    width
}

pub(super) fn draw_time(canvas: &mut Canvas, x: i32, y: i32, time: &str, scale: Scale, tone: Tone) {
    if scale == Scale::Text {
        canvas.text(x, y, time, tone);
        return;
    }
    let pixel = scale.pixel();
    let mut column = x;
    for (i, ch) in time.chars().enumerate() {
        if i > 0 {
            column += 1;
        }
        let rows = glyph(ch);
        let glyph_width = rows[0].chars().count() as i32;
        for (row, pattern) in rows.iter().enumerate() {
            for (px, lit) in pattern.chars().enumerate() {
                if lit == '#' {
                    for dx in 0..pixel {
                        canvas.put(column + px as i32 * pixel + dx, y + row as i32, '█', tone);
                    }
                }
            }
        }
        column += glyph_width * pixel;
    }
}
