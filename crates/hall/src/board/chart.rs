//! The chart of a game's clocks (SVG, built here): x is game time, y each
//! side's remaining time, with the pauses shaded, corrections, stages
//! reached and flags marked, and each completed move that credited time
//! (an increment, a Bronstein delay given back) dotted.
//!
//! Promises:
//! * every point of the lines is the engine's state at that instant over
//!   the record's placed inputs ([`super::record::Record`]): at each input
//!   (just before and just after it), at every instant something happens
//!   by itself (a flag, a byo-yomi period) and where a simple delay ends;
//!   between two points the clock runs straight, as the engine's does;
//! * the markers are the engine's own notices (paused, resumed, adjusted,
//!   stage changed, flag fell), so the picture says what the clock did;
//! * the same record gives the same bytes (a golden file checks it:
//!   `src/board/golden/`), with presentation attributes only (no style
//!   sheet, no script): the hub's Content-Security-Policy lets it show.

use std::fmt::Write as _;

use chessclock_core::engine::{ClockState, Engine, Input, Notice, Side};
use chessclock_core::time::{Micros, SECOND};

use super::record::Record;

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;
/// The most automatic instants sampled between two inputs.
const MAX_DEADLINES: usize = 1_000;

/// One sampled instant: game time, White's and Black's remaining time.
type Sample = (Micros, Micros, Micros);

fn remaining(state: &ClockState, side: Side) -> Micros {
    let own = state.side(side);
    own.remaining.unwrap_or(own.used).max(0)
}

fn sample(state: &ClockState, t: Micros) -> Sample {
    (
        t,
        remaining(state, Side::White),
        remaining(state, Side::Black),
    )
}

/// The engine's samples over the whole game, and its history (the
/// markers), to `end`.
fn samples(record: &Record, end: Micros) -> (Vec<Sample>, Engine, Vec<(Micros, Side)>) {
    let mut engine = Engine::new(record.control.clone(), record.settings);
    let mut points = vec![sample(&engine.state(0), 0)];
    let mut credited = Vec::new();
    let mut last = 0;
    let inputs = record.inputs.iter().copied().map(Some).chain([None]);
    for next in inputs {
        let until = next.map_or(end, |(t, _)| t);
        between(&engine, last, until, &mut points);
        let Some((t, input)) = next else { break };
        let before = engine.state(t);
        points.push(sample(&before, t));
        if engine.apply(t, input).is_err() {
            continue;
        }
        let after = engine.state(t);
        if let Input::Press(side) = input {
            if remaining(&after, side) > remaining(&before, side) {
                credited.push((t, side));
            }
        }
        points.push(sample(&after, t));
        last = t;
    }
    engine.advance(end);
    points.push(sample(&engine.state(end), end));
    points.dedup();
    (points, engine, credited)
}

/// Samples strictly between `from` and `to`: where a simple delay ends,
/// and every instant something happens by itself.
fn between(engine: &Engine, from: Micros, to: Micros, points: &mut Vec<Sample>) {
    let mut instants = Vec::new();
    let state = engine.state(from);
    if let Some(side) = state.running {
        if let Some(delay) = state.side(side).delay_left.filter(|d| *d > 0) {
            instants.push(from.saturating_add(delay));
        }
    }
    let mut probe = engine.clone();
    for _ in 0..MAX_DEADLINES {
        match probe.next_deadline() {
            Some(at) if at > from && at < to => {
                instants.push(at);
                probe.advance(at);
            }
            _ => break,
        }
    }
    instants.retain(|at| *at > from && *at < to);
    instants.sort_unstable();
    instants.dedup();
    for at in instants {
        points.push(sample(&engine.state(at), at));
    }
}

/// A step for about `most` ticks over `span`.
fn tick_step(span: Micros, most: i64) -> Micros {
    const STEPS: [i64; 14] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
    ];
    STEPS
        .iter()
        .map(|s| s * SECOND)
        .find(|step| span / step <= most)
        .unwrap_or(36_000 * SECOND)
}

/// `M:SS` below an hour, `H:MM:SS` above.
fn label(t: Micros) -> String {
    let seconds = t.max(0) / SECOND;
    if seconds >= 3600 {
        format!(
            "{}:{:02}:{:02}",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        )
    } else {
        format!("{}:{:02}", seconds / 60, seconds % 60)
    }
}

fn side_colour(side: Side) -> (&'static str, &'static str) {
    // Told apart by the dash as well as the colour (colour-blind readers).
    match side {
        Side::White => ("#1f5fbf", "none"),
        Side::Black => ("#c0392b", "6 3"),
    }
}

/// The chart of `record`'s game, as SVG text.
pub fn svg(record: &Record) -> String {
    let end = record.end().max(SECOND);
    let (points, engine, credited) = samples(record, end);
    let top = points
        .iter()
        .map(|&(_, w, b)| w.max(b))
        .max()
        .unwrap_or(SECOND)
        .max(SECOND);
    let y_step = tick_step(top, 6);
    let y_max = (top + y_step - 1) / y_step * y_step;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |t: Micros| LEFT + plot_w * (t as f64) / (end as f64);
    let y = |v: Micros| TOP + plot_h * (1.0 - (v as f64) / (y_max as f64));
    let mut out = String::with_capacity(16 * 1024);
    let _ = writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="11" role="img" aria-labelledby="chart-title">"##
    );
    let _ = writeln!(
        out,
        r##"<title id="chart-title">Board {}: both clocks over the game ({})</title>"##,
        escape(&record.view.header.board),
        escape(&record.view.header.control)
    );
    let _ = writeln!(
        out,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    // The pauses, shaded first (under the lines).
    let history = engine.history();
    let mut paused_at: Option<Micros> = None;
    let mut bands = Vec::new();
    for entry in history {
        for notice in &entry.notices {
            match notice {
                Notice::Paused => paused_at = paused_at.or(Some(entry.at)),
                Notice::Resumed => {
                    if let Some(from) = paused_at.take() {
                        bands.push((from, entry.at));
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(from) = paused_at {
        bands.push((from, end));
    }
    for (from, to) in bands {
        let _ = writeln!(
            out,
            r##"<rect class="pause" x="{:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="#e8e8e8"><title>paused {} to {}</title></rect>"##,
            x(from),
            (x(to) - x(from)).max(1.0),
            label(from),
            label(to)
        );
    }
    // The axes and their ticks.
    let x_step = tick_step(end, 10);
    let mut tick = 0;
    while tick <= end {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1:.1}" stroke="#eeeeee"/><text x="{0:.1}" y="{2:.1}" text-anchor="middle">{3}</text>"##,
            x(tick),
            TOP + plot_h,
            TOP + plot_h + 14.0,
            label(tick)
        );
        tick += x_step;
    }
    let mut value = 0;
    while value <= y_max {
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#eeeeee"/><text x="{2:.1}" y="{3:.1}" text-anchor="end">{4}</text>"##,
            y(value),
            LEFT + plot_w,
            LEFT - 6.0,
            y(value) + 4.0,
            label(value)
        );
        value += y_step;
    }
    let _ = writeln!(
        out,
        r##"<path d="M{LEFT} {TOP}V{0:.1}H{1:.1}" fill="none" stroke="#444444"/>"##,
        TOP + plot_h,
        LEFT + plot_w
    );
    let _ = writeln!(
        out,
        r##"<text x="{0:.1}" y="{1:.1}" text-anchor="middle">game time</text><text x="12" y="{2:.1}" transform="rotate(-90 12 {2:.1})" text-anchor="middle">time left</text>"##,
        LEFT + plot_w / 2.0,
        HEIGHT - 6.0,
        TOP + plot_h / 2.0
    );
    // Corrections, stages and flags.
    for entry in history {
        for notice in &entry.notices {
            let (class, colour, text, at) = match notice {
                Notice::Adjusted(a) => (
                    "correction",
                    "#7d3c98",
                    format!("correction {}", a.side),
                    entry.at,
                ),
                Notice::StageChanged { side, stage, at } => {
                    ("stage", "#117a65", format!("{side} stage {stage}"), *at)
                }
                Notice::FlagFell { side, at, .. } => {
                    ("flag", "#b00000", format!("{side}'s flag"), *at)
                }
                _ => continue,
            };
            let _ = writeln!(
                out,
                r##"<line class="{class}" x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1:.1}" stroke="{colour}" stroke-dasharray="2 2"><title>{2} at {3}</title></line>"##,
                x(at),
                TOP + plot_h,
                escape(&text),
                label(at)
            );
            if class == "flag" {
                let _ = writeln!(
                    out,
                    r##"<path class="flag" d="M{0:.1} {1:.1}l-5 -9h10z" fill="{colour}"><title>{2} at {3}</title></path>"##,
                    x(at),
                    TOP + plot_h,
                    escape(&text),
                    label(at)
                );
            }
        }
    }
    // The clocks.
    for side in Side::BOTH {
        let (colour, dash) = side_colour(side);
        let mut path = String::new();
        for (index, &(t, white, black)) in points.iter().enumerate() {
            let v = if side == Side::White { white } else { black };
            let _ = write!(
                path,
                "{}{:.1} {:.1}",
                if index == 0 { "M" } else { "L" },
                x(t),
                y(v)
            );
        }
        let _ = writeln!(
            out,
            r##"<path class="clock {side}" d="{path}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>"##
        );
    }
    for &(t, side) in &credited {
        let (colour, _) = side_colour(side);
        let after = points
            .iter()
            .rev()
            .find(|p| p.0 == t)
            .map_or(0, |&(_, w, b)| if side == Side::White { w } else { b });
        let _ = writeln!(
            out,
            r##"<circle class="increment {side}" cx="{:.1}" cy="{:.1}" r="2" fill="{colour}"/>"##,
            x(t),
            y(after)
        );
    }
    // The legend.
    for (index, side) in Side::BOTH.into_iter().enumerate() {
        let (colour, dash) = side_colour(side);
        let left = LEFT + 8.0 + 110.0 * index as f64;
        let _ = writeln!(
            out,
            r##"<line x1="{left:.1}" y1="14" x2="{:.1}" y2="14" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{:.1}" y="18">{}</text>"##,
            left + 24.0,
            left + 30.0,
            if side == Side::White {
                "White"
            } else {
                "Black"
            }
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="18" fill="#555555">grey: paused; dotted lines: corrections, stages, flags</text>"##,
        LEFT + 230.0
    );
    out.push_str("</svg>\n");
    out
}

/// Text for an SVG element or attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
