//! The interactive view, as a pure function: unit snapshots in, a grid of
//! styled characters out ([`render`]). The terminal shell
//! ([`super::interactive`]) only copies the grid to the screen, so the
//! drawing is tested as text.
//!
//! Promises: any size (even 0×0) renders without panicking; the largest
//! digit size that fits is chosen (big 5-row block digits, then narrow
//! block digits, then plain text).

use chessclock_protocol::{DisplayState, Icons, Panel};

use super::unit::LinkState;
use super::unit::{UnitKind, UnitSnapshot};

/// How a character is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Normal,
    Dim,
    /// Lit LED segments.
    Led,
    /// LED segments of the side not running.
    LedIdle,
    Good,
    Warn,
    Bad,
    Title,
    /// Header/footer bars.
    Bar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub ch: char,
    pub tone: Tone,
}

/// A width × height grid of cells; writes outside it are clipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canvas {
    pub width: u16,
    pub height: u16,
    pub cells: Vec<Cell>,
}

impl Canvas {
    pub fn new(width: u16, height: u16) -> Self {
        Canvas {
            width,
            height,
            cells: vec![
                Cell {
                    ch: ' ',
                    tone: Tone::Normal
                };
                usize::from(width) * usize::from(height)
            ],
        }
    }

    pub fn put(&mut self, x: i32, y: i32, ch: char, tone: Tone) {
        if x < 0 || y < 0 || x >= i32::from(self.width) || y >= i32::from(self.height) {
            return;
        }
        let index = y as usize * usize::from(self.width) + x as usize;
        self.cells[index] = Cell { ch, tone };
    }

    /// Writes `text` from (x, y); returns the column after it.
    pub fn text(&mut self, x: i32, y: i32, text: &str, tone: Tone) -> i32 {
        let mut column = x;
        for ch in text.chars() {
            self.put(column, y, ch, tone);
            column += 1;
        }
        column
    }

    pub fn fill_row(&mut self, y: i32, tone: Tone) {
        for x in 0..i32::from(self.width) {
            self.put(x, y, ' ', tone);
        }
    }

    /// A box-drawing frame around (x, y, w, h) with an optional title.
    pub fn frame(&mut self, x: i32, y: i32, w: i32, h: i32, title: &str, tone: Tone) {
        if w < 2 || h < 2 {
            return;
        }
        for i in 1..w - 1 {
            self.put(x + i, y, '─', tone);
            self.put(x + i, y + h - 1, '─', tone);
        }
        for j in 1..h - 1 {
            self.put(x, y + j, '│', tone);
            self.put(x + w - 1, y + j, '│', tone);
        }
        self.put(x, y, '┌', tone);
        self.put(x + w - 1, y, '┐', tone);
        self.put(x, y + h - 1, '└', tone);
        self.put(x + w - 1, y + h - 1, '┘', tone);
        if !title.is_empty() && w > 4 {
            let room = (w - 4) as usize;
            let title: String = format!(" {title} ").chars().take(room).collect();
            self.text(x + 2, y, &title, Tone::Title);
        }
    }

    /// The grid as text, one line per row, trailing spaces removed.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for row in self.cells.chunks(usize::from(self.width).max(1)) {
            let line: String = row.iter().map(|c| c.ch).collect();
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Icon names (scripts, logs, the view), in bit order.
pub const ICON_NAMES: [(Icons, &str); 10] = [
    (Icons::FLAG, "flag"),
    (Icons::FIRST_FLAG, "first-flag"),
    (Icons::STAGE_FLAG, "stage-flag"),
    (Icons::RUNNING, "running"),
    (Icons::PAUSED, "paused"),
    (Icons::LINK_LOST, "link-lost"),
    (Icons::LOW_POWER, "low-power"),
    (Icons::BONUS, "bonus"),
    (Icons::ARBITER, "arbiter"),
    (Icons::NO_BUTTONS, "no-buttons"),
];

pub fn icon_names(icons: Icons) -> Vec<&'static str> {
    ICON_NAMES
        .iter()
        .filter(|(icon, _)| icons.contains(*icon))
        .map(|(_, name)| *name)
        .collect()
}

pub fn icon_by_name(name: &str) -> Option<Icons> {
    ICON_NAMES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(icon, _)| *icon)
}

/// How the icons look on the simulated display.
fn icon_label(icon: Icons) -> (&'static str, Tone) {
    match icon {
        Icons::FLAG => ("⚑ FLAG", Tone::Bad),
        Icons::FIRST_FLAG => ("⚑ FIRST", Tone::Bad),
        Icons::STAGE_FLAG => ("⚐ STAGE", Tone::Warn),
        Icons::RUNNING => ("▶ RUNNING", Tone::Good),
        Icons::PAUSED => ("‖ PAUSED", Tone::Warn),
        Icons::LINK_LOST => ("✖ LINK LOST", Tone::Bad),
        Icons::LOW_POWER => ("▾ LOW POWER", Tone::Warn),
        Icons::BONUS => ("+ BONUS", Tone::Normal),
        Icons::ARBITER => ("☎ ARBITER", Tone::Warn),
        Icons::NO_BUTTONS => ("✖ NO BUTTONS", Tone::Bad),
        _ => ("?", Tone::Dim),
    }
}

/// 3×5 glyphs; `#` is a lit pixel.
fn glyph(ch: char) -> &'static [&'static str; 5] {
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
    fn pixel(self) -> i32 {
        match self {
            Scale::Big => 2,
            _ => 1,
        }
    }
    fn digit_rows(self) -> i32 {
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
fn full_time(digits: u8) -> &'static str {
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

fn draw_time(canvas: &mut Canvas, x: i32, y: i32, time: &str, scale: Scale, tone: Tone) {
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
}

const KEYS_HELP: &str = "a/z/⇧L left · l/m/⇧R right · space arbiter · u unplug/replug · q quit";

fn link_badge(unit: &UnitSnapshot) -> (&'static str, Tone) {
    if !unit.plugged {
        return ("⏏ UNPLUGGED", Tone::Bad);
    }
    match unit.link_state {
        LinkState::Connecting => ("◌ connecting", Tone::Warn),
        LinkState::Up => ("● link up", Tone::Good),
        LinkState::Lost => ("✖ LINK LOST", Tone::Bad),
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

fn unit_header(unit: &UnitSnapshot) -> String {
    let path = match (&unit.link, &unit.pty) {
        (Some(link), Some(pty)) => format!("{} → {}", link.display(), pty.display()),
        (Some(link), None) => link.display().to_string(),
        (None, Some(pty)) => pty.display().to_string(),
        (None, None) => "-".into(),
    };
    format!(
        "{} ({}) · {} · {}",
        unit.name,
        unit.kind.name(),
        unit.serial,
        path
    )
}

/// Rows a display unit needs at `scale`.
fn display_height(unit: &UnitSnapshot, scale: Scale) -> i32 {
    let _ = unit;
    // frame top, header, blank, digits, blank, icons, text, frame bottom
    match scale {
        Scale::Text => 2 + 3,
        _ => 2 + 1 + 1 + scale.digit_rows() + 1 + 1 + 1,
    }
}

fn panel_count(unit: &UnitSnapshot) -> i32 {
    if unit.displays == 1 {
        1
    } else {
        2
    }
}

/// Columns a display unit needs at `scale` for the times it shows now (so
/// short blitz times get big digits on an 80-column terminal).
fn display_width(unit: &UnitSnapshot, scale: Scale) -> i32 {
    let widest = unit
        .display
        .map(|d| {
            time_width(d.left.time.as_str(), scale).max(time_width(d.right.time.as_str(), scale))
        })
        .unwrap_or(0)
        .max(time_width("0:00", scale));
    let panel = widest.max(22) + 4;
    panel * panel_count(unit) + 2 + (panel_count(unit) - 1)
}

const BUTTONS_HEIGHT: i32 = 4;

/// The largest digit size at which every unit fits `width` × `height`.
pub fn choose_scale(units: &[UnitSnapshot], width: u16, height: u16) -> Scale {
    let displays: Vec<&UnitSnapshot> = units.iter().filter(|u| u.kind.has_display()).collect();
    let button_boxes = units.iter().filter(|u| u.kind.has_buttons()).count() as i32;
    let available = i32::from(height) - 1 - 2; // title bar, status and keys
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
    canvas.text(1, 0, "chessclock-sim · simulated clock hardware", Tone::Bar);
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
    let scale = choose_scale(units, width, height);
    let mut y = 1;
    for unit in &displays {
        let box_height = display_height(unit, scale);
        draw_display_unit(&mut canvas, unit, status, 0, y, w, box_height, scale);
        y += box_height;
    }
    for unit in buttons.iter().chain(combined_buttons.iter()) {
        draw_buttons_unit(&mut canvas, unit, 0, y, w);
        y += BUTTONS_HEIGHT;
    }
    let activity_rows = h - 2 - y;
    if activity_rows >= 3 {
        draw_activity(&mut canvas, units, status, y, w, activity_rows);
    }

    canvas.text(1, h - 2, &status.message, Tone::Normal);
    canvas.fill_row(h - 1, Tone::Bar);
    canvas.text(1, h - 1, KEYS_HELP, Tone::Bar);
    canvas
}

/// The latest happenings of every unit, newest at the bottom.
fn draw_activity(
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

#[allow(clippy::too_many_arguments)]
fn draw_display_unit(
    canvas: &mut Canvas,
    unit: &UnitSnapshot,
    status: &ViewStatus,
    x: i32,
    y: i32,
    w: i32,
    h: i32,
    scale: Scale,
) {
    let (badge, tone) = link_badge(unit);
    let room = w - badge.chars().count() as i32 - 10;
    canvas.frame(x, y, w, h, &fit(&unit_header(unit), room), Tone::Dim);
    let badge_x = (x + w - badge.chars().count() as i32 - 3).max(x + 2);
    canvas.text(badge_x, y, &format!(" {badge} "), tone);
    if status.now_us < unit.beeping_until_us {
        canvas.text((badge_x - 10).max(x + 2), y, " ♪ BEEP ", Tone::Warn);
    }

    let waiting = DisplayState::default();
    let state = unit.display.as_ref().unwrap_or(&waiting);
    let panels = panel_count(unit);
    let inner_w = w - 2;
    let panel_w = (inner_w - (panels - 1)) / panels.max(1);
    let sides: [(&str, &Panel); 2] = [("LEFT", &state.left), ("RIGHT", &state.right)];
    for (index, (label, panel)) in sides.iter().take(panels as usize).enumerate() {
        let px = x + 1 + index as i32 * (panel_w + 1);
        if index > 0 {
            for row in 1..h - 2 {
                canvas.put(px - 1, y + row, '│', Tone::Dim);
            }
        }
        let time = fit_time(panel.time.as_str(), unit.digits);
        let area = PanelArea {
            x: px,
            y: y + 1,
            w: panel_w,
            digits: unit.digits,
        };
        draw_panel(
            canvas,
            label,
            panel,
            &time,
            unit.display.is_some(),
            area,
            scale,
        );
    }
    let text_row = y + h - 2;
    let text = if unit.display.is_none() {
        if unit.plugged {
            "waiting for the host…".to_owned()
        } else {
            "unplugged".to_owned()
        }
    } else {
        state
            .text
            .as_str()
            .chars()
            .take(usize::from(unit.text_chars))
            .collect()
    };
    if !text.is_empty() {
        let shown = format!("« {text} »");
        let cx = x + (w - shown.chars().count() as i32) / 2;
        canvas.text(
            cx.max(x + 1),
            text_row,
            &shown,
            if unit.display.is_some() {
                Tone::Warn
            } else {
                Tone::Dim
            },
        );
    }
}

#[allow(clippy::too_many_arguments)]
/// Where a panel is drawn and how many digit positions it has.
struct PanelArea {
    x: i32,
    y: i32,
    w: i32,
    digits: u8,
}

fn draw_panel(
    canvas: &mut Canvas,
    label: &str,
    panel: &Panel,
    time: &str,
    shown: bool,
    area: PanelArea,
    scale: Scale,
) {
    let PanelArea { x, y, w, digits } = area;
    let running = panel.icons.contains(Icons::RUNNING);
    let mut column = canvas.text(
        x + 1,
        y,
        label,
        if running { Tone::Good } else { Tone::Title },
    );
    if panel.moves != 0xFFFF && shown {
        column = canvas.text(
            column + 2,
            y,
            &format!("moves {}", panel.moves),
            Tone::Normal,
        );
    }
    if panel.stage != 0 && shown {
        canvas.text(
            column + 2,
            y,
            &format!("stage {}", panel.stage),
            Tone::Normal,
        );
    }
    let time = if shown && !time.is_empty() {
        time
    } else {
        "-:--"
    };
    let digits_y = if scale == Scale::Text { y + 1 } else { y + 2 };
    let tone = if !shown {
        Tone::Dim
    } else if running {
        Tone::Led
    } else {
        Tone::LedIdle
    };
    // Right-aligned in the block the panel's digit positions take, as an
    // LED panel does: digits keep their place when the text gets shorter.
    let block_w = time_width(full_time(digits), scale)
        .min(w - 2)
        .max(time_width(time, scale).min(w - 2));
    let block_x = x + ((w - block_w) / 2).max(1);
    let tx = block_x + block_w - time_width(time, scale);
    draw_time(canvas, tx, digits_y, time, scale, tone);
    let icons_y = digits_y + scale.digit_rows() + if scale == Scale::Text { 0 } else { 1 };
    let mut ix = x + 1;
    for (icon, _) in ICON_NAMES {
        if panel.icons.contains(icon) && icon != Icons::RUNNING {
            let (label, tone) = icon_label(icon);
            ix = canvas.text(ix, icons_y, label, tone) + 2;
        }
    }
    if running {
        let (label, tone) = icon_label(Icons::RUNNING);
        canvas.text(ix, icons_y, label, tone);
    }
}

fn draw_buttons_unit(canvas: &mut Canvas, unit: &UnitSnapshot, x: i32, y: i32, w: i32) {
    let title = if unit.kind == UnitKind::Combined {
        format!("{} buttons", unit.name)
    } else {
        unit_header(unit)
    };
    let (badge, tone) = link_badge(unit);
    let room = w - badge.chars().count() as i32 - 10;
    canvas.frame(x, y, w, BUTTONS_HEIGHT, &fit(&title, room), Tone::Dim);
    let badge_x = (x + w - badge.chars().count() as i32 - 3).max(x + 2);
    canvas.text(badge_x, y, &format!(" {badge} "), tone);
    let led = |on: bool| {
        if on {
            ('●', Tone::Good)
        } else {
            ('○', Tone::Dim)
        }
    };
    let buttons = [
        ("LEFT", unit.leds.left),
        ("ARBITER", unit.leds.arbiter),
        ("RIGHT", unit.leds.right),
    ];
    let slot = (w - 2) / 3;
    for (index, (label, on)) in buttons.iter().enumerate() {
        let (symbol, tone) = led(*on);
        let text_w = label.chars().count() as i32 + 6;
        let bx = x + 1 + index as i32 * slot + ((slot - text_w) / 2).max(0);
        canvas.text(bx, y + 1, "[ ", Tone::Normal);
        canvas.put(bx + 2, y + 1, symbol, tone);
        canvas.text(
            bx + 4,
            y + 1,
            label,
            if *on { Tone::Good } else { Tone::Normal },
        );
        canvas.text(
            bx + 4 + label.chars().count() as i32,
            y + 1,
            " ]",
            Tone::Normal,
        );
    }
    let stats = unit.stats;
    let line = format!(
        "presses {}  unacked {}  acks {}  frames in {} out {}  rx errors {}{}",
        stats.presses,
        unit.unacked,
        stats.acks,
        stats.frames_rx,
        stats.frames_tx,
        stats.rx_errors,
        if unit.faults_active {
            "  ⚡ faults active"
        } else {
            ""
        }
    ) + if unit.low_power {
        "  ▾ battery low"
    } else {
        ""
    };
    canvas.text(
        x + 2,
        y + 2,
        &line,
        if unit.unacked > 0 {
            Tone::Warn
        } else {
            Tone::Dim
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::unit::{Activity, UnitStats};
    use chessclock_protocol::{Leds, Text};

    fn unit(name: &str, kind: UnitKind) -> UnitSnapshot {
        UnitSnapshot {
            name: name.into(),
            kind,
            serial: format!("SIM-{name}"),
            displays: 2,
            digits: 5,
            text_chars: 16,
            plugged: true,
            low_power: false,
            pty: Some("/dev/pts/7".into()),
            link: Some(format!("/tmp/cc/{name}").into()),
            link_state: LinkState::Up,
            display: None,
            leds: Leds::default(),
            beeps: 0,
            beeping_until_us: 0,
            unacked: 0,
            stats: UnitStats::default(),
            faults_active: false,
            recent: Vec::new(),
        }
    }

    #[test]
    fn glyph_widths_add_up() {
        assert_eq!(time_width("1:29:59", Scale::Big), 5 * 6 + 2 * 2 + 6);
        assert_eq!(time_width("0:19.7", Scale::Narrow), 4 * 3 + 2 + 5);
        assert_eq!(time_width("4:59", Scale::Text), 4);
    }

    #[test]
    fn times_fit_the_panel_positions_like_the_spec_says() {
        assert_eq!(fit_time("1:29:59", 5), "1:29:59");
        assert_eq!(fit_time("1:29:59", 4), "29:59");
        assert_eq!(fit_time("0:19.7", 4), "0:19.7");
        assert_eq!(fit_time("12:34:56", 5), "2:34:56");
        assert_eq!(fit_time("4:59", 0), "4:59");
        assert_eq!(fit_time("", 5), "");
    }

    #[test]
    fn big_digits_draw_the_pattern() {
        let mut canvas = Canvas::new(8, 5);
        draw_time(&mut canvas, 0, 0, "1", Scale::Big, Tone::Led);
        assert_eq!(canvas.to_text(), "  ██\n████\n  ██\n  ██\n██████\n");
    }

    fn playing() -> UnitSnapshot {
        let mut display = unit("display", UnitKind::Display);
        let mut state = DisplayState::default();
        state.left.time = Text::new("1:29:59").unwrap();
        state.left.icons = Icons::RUNNING;
        state.left.moves = 12;
        state.left.stage = 1;
        state.right.time = Text::new("0:19.7").unwrap();
        state.right.icons = Icons(Icons::FLAG.0 | Icons::BONUS.0);
        state.right.moves = 0xFFFF;
        state.text = Text::new("ARBITER").unwrap();
        display.display = Some(state);
        display
    }

    #[test]
    fn wide_terminal_shows_big_digits_icons_and_leds() {
        let mut buttons = unit("buttons", UnitKind::Buttons);
        buttons.leds.left = true;
        buttons.unacked = 2;
        buttons.recent = vec![
            Activity {
                at_us: 2_500_000,
                text: "ACK event 4 (sent 1×)".into(),
                count: 1,
            },
            Activity {
                at_us: 1_500_000,
                text: "bad frame from host (bad-crc)".into(),
                count: 3,
            },
        ];
        let status = ViewStatus {
            message: "left pressed".into(),
            ..ViewStatus::default()
        };
        let canvas = render(&[playing(), buttons], &status, 120, 30);
        let text = canvas.to_text();
        assert!(
            text.contains("display (display) · SIM-display · /tmp/cc/display → /dev/pts/7"),
            "{text}"
        );
        assert!(text.contains("● link up"), "{text}");
        assert!(text.contains("LEFT  moves 12  stage 1"), "{text}");
        assert!(text.contains("▶ RUNNING"), "{text}");
        assert!(text.contains("⚑ FLAG  + BONUS"), "{text}");
        assert!(text.contains("« ARBITER »"), "{text}");
        assert!(text.contains("[ ● LEFT ]"), "{text}");
        assert!(text.contains("[ ○ RIGHT ]"), "{text}");
        assert!(text.contains("unacked 2"), "{text}");
        assert!(text.contains("left pressed"), "{text}");
        let older = text
            .find("    1.500 s  buttons  bad frame from host (bad-crc)  ×3")
            .expect(&text);
        let newer = text
            .find("    2.500 s  buttons  ACK event 4 (sent 1×)")
            .expect(&text);
        assert!(older < newer, "oldest first");
        // Big digits: the `1` of 1:29:59 begins with a 2-column pixel, rows
        // of 2-column pixels follow; the left (running) side is lit.
        let big_rows = text.lines().filter(|l| l.contains("██████")).count();
        assert_eq!(big_rows, 3, "{text}");
        assert_eq!(choose_scale(&[playing()], 120, 30), Scale::Big);
        let lit = canvas
            .cells
            .iter()
            .filter(|c| c.ch == '█' && c.tone == Tone::Led)
            .count();
        let idle = canvas
            .cells
            .iter()
            .filter(|c| c.ch == '█' && c.tone == Tone::LedIdle)
            .count();
        assert!(lit > 0 && idle > 0);
    }

    #[test]
    fn narrow_terminal_falls_back_to_smaller_digits() {
        assert_eq!(choose_scale(&[playing()], 60, 24), Scale::Narrow);
        assert_eq!(choose_scale(&[playing()], 120, 15), Scale::Big);
        assert_eq!(choose_scale(&[playing()], 120, 12), Scale::Text);
        let mut blitz = playing();
        if let Some(d) = blitz.display.as_mut() {
            d.left.time = Text::new("4:59").unwrap();
            d.right.time = Text::new("3:07").unwrap();
        }
        assert_eq!(choose_scale(&[blitz], 80, 24), Scale::Big);
        assert_eq!(choose_scale(&[playing()], 40, 8), Scale::Text);
        let text = render(&[playing()], &ViewStatus::default(), 60, 24).to_text();
        // Narrow `1` of 1:29:59: one column per pixel.
        assert!(
            text.lines().any(|l| l.contains("███   ███ ███   ███ ███")),
            "{text}"
        );
        assert!(text.contains("/tmp/c… ─── ● link up"), "{text}");
        let tiny = render(&[playing()], &ViewStatus::default(), 40, 8).to_text();
        assert!(
            tiny.contains("1:29:59") && tiny.contains("0:19.7"),
            "{tiny}"
        );
    }

    #[test]
    fn unplugged_and_lost_units_say_so() {
        let mut display = playing();
        display.link_state = LinkState::Lost;
        let mut buttons = unit("buttons", UnitKind::Buttons);
        buttons.plugged = false;
        let text = render(&[display, buttons], &ViewStatus::default(), 120, 30).to_text();
        assert!(text.contains("✖ LINK LOST"), "{text}");
        assert!(text.contains("⏏ UNPLUGGED"), "{text}");
        let mut blank = unit("display", UnitKind::Display);
        blank.display = None;
        let text = render(&[blank], &ViewStatus::default(), 120, 30).to_text();
        assert!(text.contains("waiting for the host"), "{text}");
    }

    #[test]
    fn any_size_renders_without_panic() {
        let mut display = unit("display", UnitKind::Display);
        display.display = Some(DisplayState::default());
        let mut buttons = unit("buttons", UnitKind::Buttons);
        buttons.recent = vec![Activity {
            at_us: -5,
            text: "é".repeat(500),
            count: 9,
        }];
        let units = [display, buttons, unit("both", UnitKind::Combined)];
        let status = ViewStatus {
            message: "x".repeat(300),
            script: Some("step 1/2".into()),
            now_us: 0,
            origin_us: 0,
        };
        for width in [0u16, 1, 2, 3, 5, 10, 40, 80, 200] {
            for height in [0u16, 1, 2, 3, 7, 24, 60] {
                let canvas = render(&units, &status, width, height);
                assert_eq!(canvas.cells.len(), usize::from(width) * usize::from(height));
            }
        }
    }
}
