//! The boxes of the units: a display unit's panels (times, moves, stage,
//! icons, text line) and a button unit's buttons, LEDs and counters.

use chessclock_protocol::{DisplayState, Icons, Panel};

use super::digits::{draw_time, fit_time, full_time, time_width};
use super::icons::{icon_label, ICON_NAMES};
use super::{fit, Canvas, Scale, Tone, ViewStatus};
use crate::unit::{LinkState, UnitKind, UnitSnapshot};

pub(super) fn link_badge(unit: &UnitSnapshot) -> (&'static str, Tone) {
    if !unit.plugged {
        return ("⏏ UNPLUGGED", Tone::Bad);
    }
    match unit.link_state {
        LinkState::Connecting => ("◌ connecting", Tone::Warn),
        LinkState::Up => ("● link up", Tone::Good),
        LinkState::Lost => ("✖ LINK LOST", Tone::Bad),
    }
}

pub(super) fn unit_header(unit: &UnitSnapshot) -> String {
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
pub(super) fn display_height(unit: &UnitSnapshot, scale: Scale) -> i32 {
    let _ = unit;
    // frame top, header, blank, digits, blank, icons, text, frame bottom
    match scale {
        Scale::Text => 2 + 3,
        _ => 2 + 1 + 1 + scale.digit_rows() + 1 + 1 + 1,
    }
}

pub(super) fn panel_count(unit: &UnitSnapshot) -> i32 {
    if unit.displays == 1 {
        1
    } else {
        2
    }
}

/// Columns a display unit needs at `scale` for the times it shows now (so
/// short blitz times get big digits on an 80-column terminal).
pub(super) fn display_width(unit: &UnitSnapshot, scale: Scale) -> i32 {
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

pub(super) const BUTTONS_HEIGHT: i32 = 4;

#[allow(clippy::too_many_arguments)]
pub(super) fn draw_display_unit(
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
    let (left, right) = super::side_labels(status);
    let sides: [(&str, &Panel); 2] = [(&left, &state.left), (&right, &state.right)];
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

pub(super) fn draw_buttons_unit(
    canvas: &mut Canvas,
    unit: &UnitSnapshot,
    labels: &(String, String),
    x: i32,
    y: i32,
    w: i32,
) {
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
        (labels.0.as_str(), unit.leds.left),
        ("ARBITER · space", unit.leds.arbiter),
        (labels.1.as_str(), unit.leds.right),
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
