//! The bench report as files: JSON (everything), SVG plots, and the
//! Markdown tables pasted into BENCHMARKS.md.

use std::fmt::Write;
use std::path::Path;

use super::measure::{BenchReport, ScaleReport, Section, WakeLateness};
use super::soak::SoakReport;
use super::stats::Summary;
use super::svg::{self, Series};

/// Writes `latency.svg`, `accuracy.svg`, `display.svg` and `scale.svg`
/// (figures against the number of boards) into `dir`.
pub fn write_plots(report: &BenchReport, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let names: Vec<String> = report
        .scale
        .iter()
        .map(|s| format!("press→display, {} board(s)", s.boards))
        .collect();
    let mut series = vec![Series {
        name: "bare PTY round trip, back to back",
        values: &report.floor_samples,
    }];
    if let Some(first) = report.scale.first() {
        series.push(Series {
            name: "bare PTY round trip at press spacing",
            values: &first.floor_paced_samples,
        });
    }
    for (s, name) in report.scale.iter().zip(&names) {
        series.push(Series {
            name,
            values: &s.latency_samples,
        });
    }
    std::fs::write(
        dir.join("latency.svg"),
        svg::cdf_plot(
            "Press-to-display latency vs. bare PTY round trip",
            "ms",
            &series,
        ),
    )?;
    // Accuracy: one column per (boards, delay).
    let mut names = Vec::new();
    let mut values = Vec::new();
    for s in &report.scale {
        for (delay, errors) in &s.error_samples {
            names.push(format!("{}b {delay}ms", s.boards));
            values.push(errors.clone());
        }
    }
    let series: Vec<Series> = names
        .iter()
        .zip(&values)
        .map(|(name, values)| Series { name, values })
        .collect();
    std::fs::write(
        dir.join("accuracy.svg"),
        svg::strip_plot(
            "Accounting error (accounted − true press instant) by boards and injected delay",
            "ms",
            1.0,
            &series,
        ),
    )?;
    let names: Vec<String> = report
        .scale
        .iter()
        .map(|s| format!("{} board(s)", s.boards))
        .collect();
    let series: Vec<Series> = report
        .scale
        .iter()
        .zip(&names)
        .map(|(s, name)| Series {
            name,
            values: &s.display_samples,
        })
        .collect();
    std::fs::write(
        dir.join("display.svg"),
        svg::cdf_plot("How late each displayed second changes", "ms late", &series),
    )?;
    std::fs::write(dir.join("scale.svg"), scale_plot(report))?;
    Ok(())
}

/// Press→display latency and display lateness (p50 and p99) against the
/// number of boards, with the targets (p99 < 2 ms and < 1 ms), and
/// the daemon's own share of each at p99 (deadline or press to the frame
/// written, by its count) where it reported them.
pub fn scale_plot(report: &BenchReport) -> String {
    let at = |f: &dyn Fn(&super::measure::ScaleReport) -> f64| -> Vec<(f64, f64)> {
        report
            .scale
            .iter()
            .filter(|s| s.latency_ms.count > 0 || s.display_late_ms.count > 0)
            .map(|s| (s.boards as f64, f(s)))
            .collect()
    };
    let latency_p99 = at(&|s| s.latency_ms.p99);
    let latency_p50 = at(&|s| s.latency_ms.p50);
    let late_p99 = at(&|s| s.display_late_ms.p99);
    let late_p50 = at(&|s| s.display_late_ms.p50);
    let own_p99 = |pick: fn(&super::measure::ScaleReport) -> Option<WakeLateness>| {
        report
            .scale
            .iter()
            .filter_map(|s| {
                let p99 = pick(s)?.p99_us?;
                Some((s.boards as f64, p99 as f64 / 1e3))
            })
            .collect::<Vec<_>>()
    };
    let written_after_press_p99 = own_p99(|s| s.display_write_after_press_us.clone());
    let written_after_deadline_p99 = own_p99(|s| s.display_write_after_deadline_us.clone());
    svg::line_plot(
        "Press→display latency and display lateness against boards",
        "boards in one daemon",
        "ms",
        &[1.0, 2.0],
        &[
            svg::Line {
                name: "press→display p99",
                points: &latency_p99,
                dashed: false,
            },
            svg::Line {
                name: "display change late p99",
                points: &late_p99,
                dashed: false,
            },
            svg::Line {
                name: "press→display p50",
                points: &latency_p50,
                dashed: true,
            },
            svg::Line {
                name: "display change late p50",
                points: &late_p50,
                dashed: true,
            },
            svg::Line {
                name: "daemon: press→frame written p99",
                points: &written_after_press_p99,
                dashed: true,
            },
            svg::Line {
                name: "daemon: deadline→frame written p99",
                points: &written_after_deadline_p99,
                dashed: true,
            },
        ],
    )
}

fn row(s: &Summary, digits: usize) -> String {
    format!(
        "{:.d$} | {:.d$} | {:.d$} | {}",
        s.p50,
        s.p99,
        s.max,
        s.count,
        d = digits
    )
}

/// One table of a lateness the daemon counted itself, per board count.
fn daemon_lateness_table(
    out: &mut String,
    report: &BenchReport,
    title: &str,
    pick: fn(&ScaleReport) -> Option<WakeLateness>,
) {
    let _ = writeln!(
        out,
        "\n| {title} | p50 | p99 | max | n |\n|---|---|---|---|---|"
    );
    for s in &report.scale {
        match pick(s) {
            Some(w) => {
                // the daemon's histogram ends at 10 ms
                let ms = |us: Option<u64>| match (us, w.wakeups) {
                    (_, 0) => "none".to_owned(),
                    (Some(us), _) => format!("{:.3}", us as f64 / 1e3),
                    (None, _) => "> 10".to_owned(),
                };
                let _ = writeln!(
                    out,
                    "| {} board(s) | {} | {} | {:.3} | {} |",
                    s.boards,
                    ms(w.p50_us),
                    ms(w.p99_us),
                    w.max_us as f64 / 1e3,
                    w.wakeups
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "| {} board(s) | (no report: not a clean stop) | | | |",
                    s.boards
                );
            }
        }
    }
}

/// The tables of the board-count games.
fn scale_markdown(report: &BenchReport, out: &mut String) {
    let f = &report.pty_floor_ms;
    let _ = writeln!(out, "| latency (ms) | p50 | p99 | max | n | ratio p50 | ratio p99 | ratio to paced floor p50 | ratio to paced floor p99 |\n|---|---|---|---|---|---|---|---|---|");
    let _ = writeln!(
        out,
        "| bare PTY round trip, back to back (0.5 ms apart) | {} | 1 | 1 | | |",
        row(f, 3)
    );
    for s in &report.scale {
        let _ = writeln!(
            out,
            "| bare PTY round trip at press spacing, during the {}-board game | {} | | | 1 | 1 |",
            s.boards,
            row(&s.pty_floor_paced_ms, 3),
        );
        let _ = writeln!(
            out,
            "| press→display, {} board(s) | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            s.boards,
            row(&s.latency_ms, 3),
            s.latency_ratio_p50,
            s.latency_ratio_p99,
            s.latency_ratio_paced_p50,
            s.latency_ratio_paced_p99
        );
    }
    let _ = writeln!(out, "\n| accounting error, accounted − true (ms) | delay | p50 | p99 | max | n | max abs |\n|---|---|---|---|---|---|---|");
    for s in &report.scale {
        for (delay, e) in &s.accounting_error_ms {
            let abs = &s.accounting_abs_error_ms[delay];
            let _ = writeln!(
                out,
                "| {} board(s) | {delay} ms | {} | {:.3} |",
                s.boards,
                row(e, 3),
                abs.max
            );
        }
    }
    let _ = writeln!(
        out,
        "\n| display second changes, late (ms) | p50 | p99 | max | n |\n|---|---|---|---|---|"
    );
    for s in &report.scale {
        let _ = writeln!(
            out,
            "| {} board(s) | {} |",
            s.boards,
            row(&s.display_late_ms, 3)
        );
    }
    for (title, pick) in [
        (
            "the timing thread's timer wake-ups, late (ms; the daemon's own count)",
            (|s: &ScaleReport| s.timer_wake_late_us.clone()) as fn(&ScaleReport) -> _,
        ),
        (
            "display frames written after their deadline (ms; the daemon's own count)",
            |s: &ScaleReport| s.display_write_after_deadline_us.clone(),
        ),
        (
            "display frames written after their press's arrival (ms; the daemon's own count)",
            |s: &ScaleReport| s.display_write_after_press_us.clone(),
        ),
    ] {
        daemon_lateness_table(out, report, title, pick);
    }
    let _ = writeln!(out, "\n| resources over the game | seconds | presses | RSS max (MB) | VmHWM (MB) | CPU (% of a core) | wake-ups/s | threads (FIFO) | harness CPU % | unaccounted | ignored | bytes written / press |\n|---|---|---|---|---|---|---|---|---|---|---|---|");
    for s in &report.scale {
        let r = &s.resources;
        let _ = writeln!(
            out,
            "| {} board(s) | {:.1} | {} | {:.1} | {:.1} | {:.2} | {:.0} | {} ({}) | {:.1} | {} | {} | {:.0} |",
            s.boards,
            r.seconds,
            s.presses,
            r.rss_mb_max,
            r.hwm_mb,
            r.cpu_percent,
            r.wakeups_per_second,
            r.threads,
            r.fifo_threads,
            s.harness_cpu_percent,
            s.presses_unaccounted,
            s.presses_ignored,
            s.write_bytes_per_press
        );
    }
}

/// Markdown tables of every figure.
pub fn markdown(report: &BenchReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Host: {}. Mode: {}.{}\n",
        report.host,
        if report.options.quick {
            "quick"
        } else {
            "full"
        },
        if !report.options.sections.contains(&Section::Scale) {
            String::new()
        } else if report.options.boot_spread_ms > 0 {
            format!(
                " Scale run: units booted at random within {} ms, {} ms after the start.",
                report.options.boot_spread_ms,
                super::rig::BOOT_AFTER_US / 1000
            )
        } else {
            " Scale run: units booted all at once (heartbeats in phase).".to_owned()
        }
    );
    if !report.scale.is_empty() {
        scale_markdown(report, &mut out);
    }
    if let Some(st) = &report.store {
        let _ = writeln!(out, "\n| state store | value |\n|---|---|");
        let _ = writeln!(
            out,
            "| events committed/s, sequential D-Bus `Press()` | {:.0} |",
            st.sequential_events_per_second
        );
        let _ = writeln!(
            out,
            "| events committed/s, 32 calls in flight | {:.0} |",
            st.pipelined_events_per_second
        );
        let _ = writeln!(
            out,
            "| restart (kill -9) to restored {}-move game, ms | {:.1} |",
            st.moves, st.restart_to_restored_ms
        );
        let _ = writeln!(
            out,
            "| restart to all devices reconnected, ms | {:.1} |",
            st.restart_to_devices_ms
        );
        let _ = writeln!(
            out,
            "| events before / after restart, mismatches | {} / {} / {} |",
            st.events_before, st.events_after, st.mismatches
        );
    }
    edges_markdown(report, &mut out);
    let _ = writeln!(
        out,
        "\n| target | limit | measured | met |\n|---|---|---|---|"
    );
    for t in &report.targets {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            t.what,
            t.limit,
            t.measured,
            if t.met { "yes" } else { "**no**" }
        );
    }
    out
}

/// The tables of issue 13's three figures (those that ran).
fn edges_markdown(report: &BenchReport, out: &mut String) {
    if let Some(late) = &report.late_flag {
        let _ = writeln!(
            out,
            "\n| late presses before a flag (load average {}) | p50 | p99 | max | n |\n|---|---|---|---|---|",
            late.load_average
        );
        let _ = writeln!(
            out,
            "| accounting error, accounted − true (ms) | {} |",
            row(&late.error_ms, 3)
        );
        let _ = writeln!(
            out,
            "| the same, absolute (ms) | {} |",
            row(&late.abs_error_ms, 3)
        );
        let _ = writeln!(
            out,
            "| absolute, ordinary presses of the same games (ms) | {} |",
            row(&late.ordinary_abs_error_ms, 3)
        );
        for (band, e) in &late.abs_error_by_delay_ms {
            let _ = writeln!(out, "| absolute, frame {band} ms late | {} |", row(e, 3));
        }
        let _ = writeln!(
            out,
            "\n| late presses before a flag: counts | value |\n|---|---|\n| flags shown, then withdrawn | {} |\n| **flags wrongly left standing** | **{}** |\n| presses ignored / not placed / missing | {} / {} / {} |\n| trials left out (the harness pressed after the flag) | {} |",
            late.flags_withdrawn,
            late.flags_standing,
            late.presses_ignored,
            late.presses_not_placed,
            late.presses_missing,
            late.trials_late_harness
        );
    }
    if let Some(flood) = &report.reader_flood {
        let _ = writeln!(
            out,
            "\n| reader flood: {} readers, game of {} rows (load average {}) | p50 | p99 | max | n | ratio p50 | ratio p99 | within noise |\n|---|---|---|---|---|---|---|---|",
            flood.readers, flood.events_at_start, flood.load_average
        );
        for (what, figure) in [
            ("press→display (ms)", &flood.latency_ms),
            ("display second changes, late (ms)", &flood.display_late_ms),
            ("press→ACK received (ms; not a goal)", &flood.ack_ms),
        ] {
            let _ = writeln!(
                out,
                "| {what}, no readers | {} | | | |",
                row(&figure.without, 3)
            );
            let _ = writeln!(
                out,
                "| {what}, {} readers | {} | {:.2} | {:.2} | {} |",
                flood.readers,
                row(&figure.with, 3),
                figure.ratio_p50,
                figure.ratio_p99,
                if figure.within_noise { "yes" } else { "**no**" }
            );
        }
        let _ = writeln!(
            out,
            "\n| reader flood: counts | value |\n|---|---|\n| game built by | {} ({:.1} s) |\n| phases | {} × ({:.0} s without, {:.0} s with readers) |\n| `History()` answered / rate-limited / other errors | {} / {} / {} |\n| history read by the readers | {:.0} MB |\n| press→display missing (without / with) | {} / {} |\n| daemon RLIMIT_RTTIME | {} |\n| daemon alive at the end | {} |",
            flood.built_how,
            flood.build_seconds,
            flood.rounds,
            flood.phase_seconds,
            flood.phase_seconds,
            flood.reads.answered,
            flood.reads.rate_limited,
            flood.reads.errors,
            flood.reads.mb,
            flood.latency_missing[0],
            flood.latency_missing[1],
            flood
                .rttime_us
                .map_or_else(|| "none".to_owned(), |us| format!("{us} µs")),
            if flood.daemon_alive { "yes" } else { "**no**" }
        );
    }
    if let Some(kill) = &report.kill_charge {
        let _ = writeln!(
            out,
            "\n| time charged across kill -9 (load average {}) | p50 | p99 | max | n |\n|---|---|---|---|---|",
            kill.load_average
        );
        let _ = writeln!(
            out,
            "| charged − true (ms) | {} |\n| the same, absolute (ms) | {} |",
            row(&kill.error_ms, 3),
            row(&kill.abs_error_ms, 3)
        );
        let outages: Vec<f64> = kill.trials.iter().map(|t| t.outage_ms).collect();
        let _ = writeln!(
            out,
            "| outage, kill to spawn (ms) | {} |",
            row(&Summary::of(&outages), 1)
        );
        let _ = writeln!(
            out,
            "\n| kill -9: counts | value |\n|---|---|\n| restarts without a figure | {} |\n| game epoch changed by the restart | {} |\n| restart instant outside spawn..first answer | {} |",
            kill.trials_without_figure, kill.epochs_changed, kill.restarts_out_of_bracket
        );
    }
}

pub fn soak_markdown(report: &SoakReport) -> String {
    format!(
        "| soak | value |\n|---|---|\n| seconds | {:.1} |\n| presses sent | {} |\n| presses accounted | {} |\n| presses in unplugged windows | {} |\n| presses lost outside unplugged windows | {} |\n| unplug/replug cycles | {} |\n| line-noise windows | {} |\n| kill -9 + restart | {} |\n| state mismatches after restart | {} |\n| crashes | {} |\n| malformed D-Bus calls (accepted) | {} ({}) |\n",
        report.seconds,
        report.presses_sent,
        report.presses_accounted,
        report.presses_in_unplugged_windows,
        report.presses_lost_outside_unplugged,
        report.unplugs,
        report.noise_windows,
        report.kills,
        report.state_mismatches,
        report.crashes,
        report.malformed_calls,
        report.malformed_accepted.len()
    )
}
