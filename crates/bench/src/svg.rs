//! Plots for BENCHMARKS.md as plain SVG text: a cumulative distribution
//! (several series on one log-scaled x axis), a strip chart of signed
//! errors per series, and figures against a count (lines over a log2 x
//! axis, e.g. latency against the number of boards). No dependencies; the output is deterministic for
//! the same data.

use std::fmt::Write;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

/// One named set of samples.
pub struct Series<'a> {
    pub name: &'a str,
    pub values: &'a [f64],
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn header(out: &mut String, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>
"#,
        WIDTH / 2.0,
        escape(title)
    );
}

fn legend(out: &mut String, names: &[&str]) {
    for (i, name) in names.iter().enumerate() {
        let y = TOP + 14.0 + i as f64 * 16.0;
        let x = WIDTH - RIGHT - 190.0;
        let _ = writeln!(
            out,
            r#"<rect x="{x}" y="{}" width="12" height="4" fill="{}"/><text x="{}" y="{y}">{}</text>"#,
            y - 6.0,
            COLOURS[i % COLOURS.len()],
            x + 18.0,
            escape(name)
        );
    }
}

/// The empirical CDF of each series over a log10 x axis (values must be
/// positive; others are dropped), x labelled in `unit`.
pub fn cdf_plot(title: &str, unit: &str, series: &[Series]) -> String {
    let mut out = String::new();
    header(&mut out, title);
    let positive = |s: &Series| -> Vec<f64> {
        let mut v: Vec<f64> = s
            .values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let all: Vec<Vec<f64>> = series.iter().map(positive).collect();
    let lo = all
        .iter()
        .filter_map(|v| v.first())
        .copied()
        .fold(f64::INFINITY, f64::min);
    let hi = all
        .iter()
        .filter_map(|v| v.last())
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        out.push_str("<text x=\"50%\" y=\"50%\">no data</text></svg>\n");
        return out;
    }
    let (lo_exp, hi_exp) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_of = |v: f64| LEFT + (v.log10() - lo_exp) / (hi_exp - lo_exp) * plot_w;
    let y_of = |q: f64| TOP + (1.0 - q) * plot_h;
    // Axes and grid.
    let mut e = lo_exp;
    while e <= hi_exp + 1e-9 {
        let x = x_of(10f64.powf(e));
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#ddd"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 16.0,
            format_tick(10f64.powf(e))
        );
        e += 1.0;
    }
    for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
        let y = y_of(q);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{q}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{} (log scale)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">fraction of samples ≤ x</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0,
        escape(unit),
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    for (i, values) in all.iter().enumerate() {
        if values.is_empty() {
            continue;
        }
        let n = values.len() as f64;
        let mut points = String::new();
        // At most ~600 vertices: the plot is 650 px wide.
        let step = (values.len() / 600).max(1);
        for (k, v) in values.iter().enumerate() {
            if k % step == 0 || k + 1 == values.len() {
                let _ = write!(points, "{:.1},{:.1} ", x_of(*v), y_of((k + 1) as f64 / n));
            }
        }
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.6" points="{}"/>"#,
            COLOURS[i % COLOURS.len()],
            points.trim_end()
        );
    }
    let names: Vec<&str> = series.iter().map(|s| s.name).collect();
    legend(&mut out, &names);
    out.push_str("</svg>\n");
    out
}

/// Each series as a column of dots (signed values, linear y axis in
/// `unit`), with a band for the target `±limit`.
pub fn strip_plot(title: &str, unit: &str, limit: f64, series: &[Series]) -> String {
    let mut out = String::new();
    header(&mut out, title);
    let span = series
        .iter()
        .flat_map(|s| s.values.iter())
        .filter(|v| v.is_finite())
        .fold(limit.abs(), |m, v| m.max(v.abs()))
        * 1.1;
    let plot_w = WIDTH - LEFT - RIGHT - 200.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y_of = |v: f64| TOP + (1.0 - (v + span) / (2.0 * span)) * plot_h;
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{:.1}" width="{plot_w}" height="{:.1}" fill="#e8f5e9"/>"##,
        y_of(limit),
        y_of(-limit) - y_of(limit)
    );
    for v in [-span / 1.1, -limit, 0.0, limit, span / 1.1] {
        let y = y_of(v);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ccc"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0,
            format_tick(v)
        );
    }
    let column = plot_w / series.len().max(1) as f64;
    for (i, s) in series.iter().enumerate() {
        let centre = LEFT + column * (i as f64 + 0.5);
        let colour = COLOURS[i % COLOURS.len()];
        let n = s.values.len().max(1);
        for (k, v) in s.values.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            // Spread the dots across the column deterministically.
            let jitter = ((k * 7919) % n) as f64 / n as f64 - 0.5;
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="1.8" fill="{colour}" fill-opacity="0.6"/>"#,
                centre + jitter * column * 0.7,
                y_of(*v)
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{centre:.1}" y="{}" text-anchor="middle">{}</text>"#,
            TOP + plot_h + 16.0,
            escape(s.name)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">{}</text><text x="{}" y="{}">green band: target ±{}</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(unit),
        LEFT + plot_w + 20.0,
        TOP + 20.0,
        format_tick(limit)
    );
    out.push_str("</svg>\n");
    out
}

/// One named line of `(x, y)` points for [`line_plot`].
pub struct Line<'a> {
    pub name: &'a str,
    pub points: &'a [(f64, f64)],
    /// Drawn dashed (e.g. a p50 beside its p99).
    pub dashed: bool,
}

/// Lines of `(x, y)` over a log2 x axis (x > 0; ticks at the x values
/// given) and a linear y axis from 0 in `unit`, with a dotted horizontal
/// line at each of `limits` (targets) labelled with its value.
pub fn line_plot(title: &str, x_unit: &str, unit: &str, limits: &[f64], lines: &[Line]) -> String {
    let mut out = String::new();
    header(&mut out, title);
    let points = || {
        lines
            .iter()
            .flat_map(|l| l.points.iter())
            .filter(|(x, y)| x.is_finite() && *x > 0.0 && y.is_finite())
    };
    let (x_lo, x_hi) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (x, _)| {
        (lo.min(*x), hi.max(*x))
    });
    if !x_lo.is_finite() {
        out.push_str("<text x=\"50%\" y=\"50%\">no data</text></svg>\n");
        return out;
    }
    let y_hi = points()
        .map(|(_, y)| *y)
        .chain(limits.iter().copied().filter(|l| l.is_finite()))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    let (l_lo, l_hi) = (x_lo.log2(), x_hi.log2().max(x_lo.log2() + 1.0));
    let plot_w = WIDTH - LEFT - RIGHT - 200.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_of = |x: f64| LEFT + (x.log2() - l_lo) / (l_hi - l_lo) * plot_w;
    let y_of = |y: f64| TOP + (1.0 - y / y_hi) * plot_h;
    let mut ticks: Vec<f64> = points().map(|(x, _)| *x).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    for x in ticks {
        let px = x_of(x);
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{}" stroke="#ddd"/><text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 16.0,
            format_tick(x)
        );
    }
    for k in 0..=4 {
        let v = y_hi / 1.1 * f64::from(k) / 4.0;
        let y = y_of(v);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0,
            format_tick((v * 100.0).round() / 100.0)
        );
    }
    for limit in limits.iter().filter(|l| l.is_finite()) {
        let y = y_of(*limit);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#888" stroke-dasharray="2,3"/><text x="{}" y="{:.1}" fill="#555">target {}</text>"##,
            LEFT + plot_w,
            LEFT + plot_w + 4.0,
            y + 4.0,
            format_tick(*limit)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{} (log scale)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0,
        escape(x_unit),
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(unit)
    );
    for (i, line) in lines.iter().enumerate() {
        let mut sorted: Vec<(f64, f64)> = line
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && *x > 0.0 && y.is_finite())
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let colour = COLOURS[i % COLOURS.len()];
        let mut path = String::new();
        for (x, y) in &sorted {
            let _ = write!(path, "{:.1},{:.1} ", x_of(*x), y_of(*y));
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{colour}"/>"#,
                x_of(*x),
                y_of(*y)
            );
        }
        let dash = if line.dashed {
            r#" stroke-dasharray="6,4""#
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.6"{dash} points="{}"/>"#,
            path.trim_end()
        );
    }
    let names: Vec<&str> = lines.iter().map(|l| l.name).collect();
    legend(&mut out, &names);
    out.push_str("</svg>\n");
    out
}

fn format_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_has_one_polyline_per_series_and_is_closed_svg() {
        let a = [0.01, 0.1, 0.2, 1.5];
        let b = [0.05, 0.07];
        let svg = cdf_plot(
            "t",
            "ms",
            &[
                Series {
                    name: "a",
                    values: &a,
                },
                Series {
                    name: "b<",
                    values: &b,
                },
            ],
        );
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("b&lt;"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn cdf_without_positive_values_says_no_data() {
        let svg = cdf_plot(
            "t",
            "ms",
            &[Series {
                name: "a",
                values: &[0.0, -1.0],
            }],
        );
        assert!(svg.contains("no data"));
    }

    #[test]
    fn line_plot_draws_a_polyline_per_line_and_a_point_per_value() {
        let a = [(1.0, 0.4), (32.0, 1.5), (256.0, 2.5), (8.0, f64::NAN)];
        let b = [(1.0, 0.2), (256.0, 0.3)];
        let svg = line_plot(
            "t",
            "boards",
            "ms",
            &[2.0],
            &[
                Line {
                    name: "p99",
                    points: &a,
                    dashed: false,
                },
                Line {
                    name: "p50",
                    points: &b,
                    dashed: true,
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        // The NaN point is dropped: 3 + 2 points.
        assert_eq!(svg.matches("<circle").count(), 5);
        assert!(svg.contains("target 2"));
        assert!(svg.contains("stroke-dasharray=\"6,4\""));
        // Ticks at the x values given.
        for tick in [">1<", ">32<", ">256<"] {
            assert!(svg.contains(tick), "{tick}");
        }
        assert!(line_plot("t", "x", "y", &[], &[]).contains("no data"));
    }

    #[test]
    fn strip_plot_draws_every_finite_value() {
        let v = [0.1, -0.2, f64::NAN, 0.3];
        let svg = strip_plot(
            "t",
            "ms",
            1.0,
            &[Series {
                name: "0 ms",
                values: &v,
            }],
        );
        assert_eq!(svg.matches("<circle").count(), 3);
    }
}
