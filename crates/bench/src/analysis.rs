//! Pure analysis of one run: the simulator's log (true press instants,
//! display frames as the display unit read them) joined with the daemon's
//! history (what it accounted). No I/O; every function is a transcript
//! of its inputs.

use serde_json::Value;

use super::stats::Summary;
use chessclock_core::engine::{Micros, SECOND};

/// A press as the simulated button unit made it.
#[derive(Clone, Debug, PartialEq)]
pub struct TruePress {
    pub unit: String,
    pub event: u64,
    pub button: String,
    /// The true instant (CLOCK_MONOTONIC µs).
    pub at_us: i64,
}

/// A display frame as the simulated display unit read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub unit: String,
    pub at_us: i64,
    pub left: String,
    pub right: String,
    pub left_running: bool,
    pub right_running: bool,
}

/// Every press in the simulator log, with its true instant.
pub fn true_presses(records: &[Value]) -> Vec<TruePress> {
    records
        .iter()
        .filter(|r| r["kind"] == "press")
        .filter_map(|r| {
            Some(TruePress {
                unit: r["unit"].as_str()?.to_owned(),
                event: r["event"].as_u64()?,
                button: r["button"].as_str()?.to_owned(),
                at_us: r["t_us"].as_i64()?,
            })
        })
        .collect()
}

/// The same presses, each at the instant its first BUTTON frame was
/// handed to the PTY (`tx` records, logged when the simulator runs with
/// `log_sent`); presses without one keep their true instant.
pub fn presses_as_written(records: &[Value], presses: &[TruePress]) -> Vec<TruePress> {
    let mut first_tx: std::collections::HashMap<(&str, u64), i64> = Default::default();
    for r in records
        .iter()
        .filter(|r| r["kind"] == "tx" && r["msg"]["type"] == "button")
    {
        if let (Some(unit), Some(event), Some(t)) = (
            r["unit"].as_str(),
            r["msg"]["event"].as_u64(),
            r["t_us"].as_i64(),
        ) {
            first_tx.entry((unit, event)).or_insert(t);
        }
    }
    presses
        .iter()
        .map(|p| TruePress {
            at_us: first_tx
                .get(&(p.unit.as_str(), p.event))
                .copied()
                .unwrap_or(p.at_us),
            ..p.clone()
        })
        .collect()
}

fn running(panel: &Value) -> bool {
    panel["icon_names"]
        .as_array()
        .is_some_and(|names| names.iter().any(|n| n == "running"))
}

/// Display frames received by display units, in log order.
pub fn shown_frames(records: &[Value]) -> Vec<Shown> {
    records
        .iter()
        .filter(|r| r["kind"] == "rx" && r["msg"]["type"] == "display")
        .filter_map(|r| {
            let msg = &r["msg"];
            Some(Shown {
                unit: r["unit"].as_str()?.to_owned(),
                at_us: r["t_us"].as_i64()?,
                left: msg["left"]["time"].as_str()?.to_owned(),
                right: msg["right"]["time"].as_str()?.to_owned(),
                left_running: running(&msg["left"]),
                right_running: running(&msg["right"]),
            })
        })
        .collect()
}

/// Press-to-display latency (ms) of each press in `presses` (one board):
/// from the press (as given: its true instant or when its frame was written) to the first frame on `display` after it
/// showing the other side running. A left press starts the right clock.
/// Presses with no such frame within `give_up_us` count as `None`.
pub fn press_to_display(
    presses: &[TruePress],
    frames: &[Shown],
    give_up_us: i64,
) -> Vec<Option<f64>> {
    presses
        .iter()
        .map(|press| {
            let want_right = press.button == "left";
            frames
                .iter()
                .filter(|f| f.at_us >= press.at_us && f.at_us <= press.at_us + give_up_us)
                .find(|f| {
                    if want_right {
                        f.right_running && !f.left_running
                    } else {
                        f.left_running && !f.right_running
                    }
                })
                .map(|f| (f.at_us - press.at_us) as f64 / 1e3)
        })
        .collect()
}

/// A press as the daemon accounted it.
#[derive(Clone, Debug, PartialEq)]
pub struct Accounted {
    pub serial: String,
    pub event: u64,
    pub side: String,
    /// Offset from the game epoch, µs.
    pub t_us: i64,
    pub ignored: bool,
}

/// Press events with a device origin, from a `History()` array.
pub fn accounted_presses(history: &[Value]) -> Vec<Accounted> {
    history
        .iter()
        .filter(|e| e["do"] == "press")
        .filter_map(|e| {
            let device = &e["device"];
            Some(Accounted {
                serial: device["serial"].as_str()?.to_owned(),
                event: device["event"].as_u64()?,
                side: e["side"].as_str().unwrap_or("").to_owned(),
                t_us: e["t_us"].as_i64()?,
                ignored: e["outcome"].as_array().is_some_and(|o| {
                    o.iter()
                        .any(|s| s.as_str().is_some_and(|s| s.starts_with("ignored")))
                }),
            })
        })
        .collect()
}

/// Accounting error (ms, signed: + = accounted later than the true
/// instant) of each true press found in the history.
pub fn accounting_errors(
    presses: &[TruePress],
    serial: &str,
    history: &[Accounted],
    epoch_us: i64,
) -> Vec<f64> {
    presses
        .iter()
        .filter_map(|p| {
            history
                .iter()
                .find(|a| a.serial == serial && a.event == p.event)
                .map(|a| (epoch_us + a.t_us - p.at_us) as f64 / 1e3)
        })
        .collect()
}

/// `M:SS` or `H:MM:SS` as seconds; `None` for tenths or text.
pub fn parse_clock_text(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    parts.iter().try_fold(0i64, |acc, p| {
        p.chars()
            .all(|c| c.is_ascii_digit())
            .then(|| acc * 60 + p.parse::<i64>().unwrap_or(0))
    })
}

/// One interval in which one side's clock ran, rebuilt from the history of
/// a game without increment or delay: from `from_us` (absolute) with
/// `remaining_us` left at that instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Running {
    pub side: String,
    pub from_us: i64,
    pub until_us: i64,
    pub remaining_us: Micros,
}

/// The running intervals of a sudden-death game of `initial_us` per side
/// (White starts), from its history.
pub fn running_intervals(history: &[Value], epoch_us: i64, initial_us: Micros) -> Vec<Running> {
    let mut used = [0 as Micros; 2];
    let mut out: Vec<Running> = Vec::new();
    let mut current: Option<(usize, i64)> = None;
    for e in history {
        let Some(t) = e["t_us"].as_i64() else {
            continue;
        };
        let ignored = e["outcome"].as_array().is_some_and(|o| {
            o.iter()
                .any(|s| s.as_str().is_some_and(|s| s.starts_with("ignored")))
        });
        match e["do"].as_str() {
            Some("start") if current.is_none() => current = Some((0, t)),
            Some("press") if !ignored => {
                let side = if e["side"] == "white" { 0 } else { 1 };
                if let Some((running, since)) = current {
                    if running == side {
                        used[side] += t - since;
                        out.push(Running {
                            side: name(side).into(),
                            from_us: epoch_us + since,
                            until_us: epoch_us + t,
                            remaining_us: initial_us - (used[side] - (t - since)),
                        });
                        current = Some((1 - side, t));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some((running, since)) = current {
        out.push(Running {
            side: name(running).into(),
            from_us: epoch_us + since,
            until_us: i64::MAX,
            remaining_us: initial_us - used[running],
        });
    }
    out
}

fn name(side: usize) -> &'static str {
    if side == 0 {
        "white"
    } else {
        "black"
    }
}

/// How late (ms) each whole-second change of a running clock reached the
/// display, against the instant the daemon's own accounting puts it at
/// (remaining = n s exactly; displays round up). Left panel = White.
/// Frames at or just after a switch are left out (that is latency).
pub fn display_lateness(frames: &[Shown], intervals: &[Running]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut previous: Option<&Shown> = None;
    for frame in frames {
        let Some(before) = previous.replace(frame) else {
            continue;
        };
        for (white, was_running, is_running, old, new) in [
            (
                true,
                before.left_running,
                frame.left_running,
                &before.left,
                &frame.left,
            ),
            (
                false,
                before.right_running,
                frame.right_running,
                &before.right,
                &frame.right,
            ),
        ] {
            if !(was_running && is_running) {
                continue;
            }
            let (Some(old), Some(new)) = (parse_clock_text(old), parse_clock_text(new)) else {
                continue;
            };
            if old != new + 1 {
                continue;
            }
            let side = if white { "white" } else { "black" };
            let Some(run) = intervals.iter().find(|r| {
                r.side == side
                    && r.from_us <= frame.at_us
                    && frame.at_us < r.until_us.saturating_add(50_000)
            }) else {
                continue;
            };
            let due = run.from_us + run.remaining_us - new * SECOND;
            if due < run.from_us || due > run.until_us {
                continue;
            }
            out.push((frame.at_us - due) as f64 / 1e3);
        }
    }
    out
}

/// From each press to the first `ack` record of its unit and event after
/// it (the unit received the daemon's ACK), ms; `None` when none came.
pub fn ack_latency(records: &[Value], presses: &[TruePress]) -> Vec<Option<f64>> {
    presses
        .iter()
        .map(|p| {
            records
                .iter()
                .filter(|r| r["kind"] == "ack" && r["unit"] == p.unit.as_str())
                .filter(|r| r["event"].as_u64() == Some(p.event))
                .filter_map(|r| r["t_us"].as_i64())
                .find(|t| *t >= p.at_us)
                .map(|t| (t - p.at_us) as f64 / 1e3)
        })
        .collect()
}

/// What the daemon made of one press made shortly before the pressing
/// side's flag and delivered late (issue 13: late presses before a flag).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LatePressOutcome {
    /// Accounted − true instant, ms, when the press is in the history as
    /// placed (a `press` row with its serial and event).
    pub error_ms: Option<f64>,
    /// Its `press` row says it was ignored (e.g. the flag had fallen).
    pub ignored: bool,
    /// It was recorded as `press-not-placed` (arrived too late to place).
    pub not_placed: bool,
    /// A flag of the pressing side was shown (a `flag` row after the true
    /// press instant) and withdrawn (a `flag-withdrawn` row for it).
    pub flag_withdrawn: bool,
    /// A flag of the pressing side after the true press instant stands in
    /// the history: shown and never withdrawn. Always wrong here.
    pub flag_standing: bool,
}

/// The outcome of the press `(serial, event)` by `side`, truly made at
/// `true_at_us` (CLOCK_MONOTONIC µs), in a `History()` array of a game
/// whose epoch is `epoch_us`, read before the other side pressed again
/// (which gives `side` its clock back, and a flag that may rightly fall).
pub fn late_press_outcome(
    history: &[Value],
    serial: &str,
    event: u64,
    side: &str,
    true_at_us: i64,
    epoch_us: i64,
) -> LatePressOutcome {
    let ours = |e: &Value| {
        e["device"]["serial"].as_str() == Some(serial)
            && e["device"]["event"].as_u64() == Some(event)
    };
    let mut out = LatePressOutcome::default();
    if let Some(row) = history.iter().find(|e| e["do"] == "press" && ours(e)) {
        out.error_ms = row["t_us"]
            .as_i64()
            .map(|t| (epoch_us + t - true_at_us) as f64 / 1e3);
        out.ignored = row["outcome"].as_array().is_some_and(|o| {
            o.iter()
                .any(|s| s.as_str().is_some_and(|s| s.starts_with("ignored")))
        });
    }
    out.not_placed = history
        .iter()
        .any(|e| e["do"] == "press-not-placed" && ours(e));
    let withdrawn: Vec<i64> = history
        .iter()
        .filter(|e| e["do"] == "flag-withdrawn" && e["side"] == side)
        .filter_map(|e| e["flag_at_us"].as_i64())
        .collect();
    for flag in history
        .iter()
        .filter(|e| e["do"] == "flag" && e["side"] == side)
        .filter_map(|e| e["t_us"].as_i64())
        .filter(|t| epoch_us + t > true_at_us)
    {
        if withdrawn.contains(&flag) {
            out.flag_withdrawn = true;
        } else {
            out.flag_standing = true;
        }
    }
    out
}

/// What the daemon charged the running side across a restart, against the
/// truth (issue 13: time charged across kill -9).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RestartCharge {
    /// The side whose clock ran when the daemon went down.
    pub side: String,
    /// µs the daemon charged it from the press that started its clock up
    /// to the restart (its `restart` row).
    pub charged_us: i64,
    /// µs from the true press instant to the restart instant the daemon
    /// states (epoch + the `restart` row's offset).
    pub truth_us: i64,
    /// charged − truth, ms.
    pub error_ms: f64,
    /// The restart instant the daemon states, CLOCK_MONOTONIC µs.
    pub restart_at_us: i64,
    /// The down time the `restart` row states, ms.
    pub down_ms: f64,
    pub same_boot: bool,
}

/// The charge of the press `(serial, event)` (truly made at `true_at_us`)
/// up to the first `restart` row after it, from a `History()` array of a
/// game whose epoch is `epoch_us`. `None` when either row is missing, when
/// the `restart` row names no running side or another side than the one the
/// press started, or when another clock input (press, pause, resume,
/// adjust, start) lies between them: then the difference of their instants
/// is not what the side was charged.
pub fn charge_across_restart(
    history: &[Value],
    serial: &str,
    event: u64,
    true_at_us: i64,
    epoch_us: i64,
) -> Option<RestartCharge> {
    let at = history.iter().position(|e| {
        e["do"] == "press"
            && e["device"]["serial"].as_str() == Some(serial)
            && e["device"]["event"].as_u64() == Some(event)
    })?;
    let press = &history[at];
    let started = match press["side"].as_str()? {
        "white" => "black",
        "black" => "white",
        _ => return None,
    };
    let t_press = press["t_us"].as_i64()?;
    let rest = &history[at + 1..];
    let restart_at = rest.iter().position(|e| e["do"] == "restart")?;
    let clock_input = |e: &Value| {
        matches!(
            e["do"].as_str(),
            Some("press" | "pause" | "resume" | "adjust" | "start" | "start-at")
        )
    };
    if rest[..restart_at].iter().any(clock_input) {
        return None;
    }
    let restart = &rest[restart_at];
    if restart["was_running"].as_str() != Some(started) {
        return None;
    }
    let t_restart = restart["t_us"].as_i64()?;
    let charged_us = t_restart - t_press;
    let truth_us = epoch_us + t_restart - true_at_us;
    Some(RestartCharge {
        side: started.to_owned(),
        charged_us,
        truth_us,
        error_ms: (charged_us - truth_us) as f64 / 1e3,
        restart_at_us: epoch_us + t_restart,
        down_ms: restart["down_us"].as_i64().unwrap_or(0) as f64 / 1e3,
        same_boot: restart["same_boot"].as_bool().unwrap_or(false),
    })
}

/// One figure (ms) measured with and without a load, and how they compare
/// (issue 13: the reader flood).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Beside {
    pub without: Summary,
    pub with: Summary,
    /// with / without.
    pub ratio_p50: f64,
    pub ratio_p99: f64,
    pub ratio_max: f64,
    /// Equal within noise: the loaded median at most 25 % + 0.05 ms above
    /// the quiet one, and the loaded p99 at most 0.5 ms above the quiet p99
    /// (identical runs on the bench VM differ by up to about 0.3 ms at p99).
    pub within_noise: bool,
}

/// Compares the samples taken under a load with those taken without it.
pub fn beside(without: &[f64], with: &[f64]) -> Beside {
    let without = Summary::of(without);
    let with = Summary::of(with);
    let within_noise = with.count > 0
        && without.count > 0
        && with.p50 <= without.p50 * 1.25 + 0.05
        && with.p99 <= without.p99 + 0.5;
    Beside {
        ratio_p50: with.p50 / without.p50,
        ratio_p99: with.p99 / without.p99,
        ratio_max: with.max / without.max,
        without,
        with,
        within_noise,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(at: i64, left: &str, right: &str, lr: bool, rr: bool) -> Shown {
        Shown {
            unit: "d".into(),
            at_us: at,
            left: left.into(),
            right: right.into(),
            left_running: lr,
            right_running: rr,
        }
    }

    #[test]
    fn parses_clock_texts() {
        assert_eq!(parse_clock_text("4:59"), Some(299));
        assert_eq!(parse_clock_text("1:00:00"), Some(3600));
        assert_eq!(parse_clock_text("19.9"), None);
        assert_eq!(parse_clock_text("PAUSE"), None);
        assert_eq!(parse_clock_text(":5"), None);
    }

    #[test]
    fn latency_is_to_the_first_frame_showing_the_switch() {
        let presses = [TruePress {
            unit: "b".into(),
            event: 1,
            button: "left".into(),
            at_us: 1000,
        }];
        let frames = [
            frame(900, "5:00", "5:00", true, false),
            frame(1500, "4:59", "5:00", true, false),
            frame(2300, "4:59", "5:00", false, true),
            frame(2400, "4:59", "5:00", false, true),
        ];
        assert_eq!(press_to_display(&presses, &frames, 10_000), vec![Some(1.3)]);
        assert_eq!(press_to_display(&presses, &frames, 1_000), vec![None]);
    }

    #[test]
    fn written_instant_is_the_first_transmission() {
        let records = [
            json!({"kind": "press", "unit": "b", "event": 4, "button": "left", "t_us": 100}),
            json!({"kind": "tx", "unit": "b", "t_us": 130, "msg": {"type": "button", "event": 4}}),
            json!({"kind": "tx", "unit": "b", "t_us": 900, "msg": {"type": "button", "event": 4}}),
            json!({"kind": "press", "unit": "b", "event": 5, "button": "right", "t_us": 1000}),
        ];
        let presses = true_presses(&records);
        let written = presses_as_written(&records, &presses);
        assert_eq!(written[0].at_us, 130);
        assert_eq!(written[1].at_us, 1000);
    }

    #[test]
    fn accounting_error_joins_on_serial_and_event() {
        let presses = [
            TruePress {
                unit: "b".into(),
                event: 1,
                button: "left".into(),
                at_us: 10_000,
            },
            TruePress {
                unit: "b".into(),
                event: 2,
                button: "right".into(),
                at_us: 20_000,
            },
        ];
        let history = accounted_presses(&[
            json!({"do": "press", "side": "white", "t_us": 9_250, "device": {"serial": "S", "event": 1}, "outcome": []}),
            json!({"do": "press", "side": "black", "t_us": 19_000, "device": {"serial": "X", "event": 2}, "outcome": []}),
        ]);
        assert_eq!(
            accounting_errors(&presses, "S", &history, 1_000),
            vec![0.25]
        );
    }

    #[test]
    fn intervals_and_display_lateness_of_a_sudden_death_game() {
        let history = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "press", "side": "white", "t_us": 2_500_000, "outcome": []}),
            json!({"do": "press", "side": "white", "t_us": 2_600_000, "outcome": ["ignored: NotRunningSide"]}),
        ];
        let runs = running_intervals(&history, 100, 300 * SECOND);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].side, "white");
        assert_eq!(runs[0].remaining_us, 300 * SECOND);
        assert_eq!(runs[1].side, "black");
        assert_eq!(runs[1].from_us, 2_500_100);
        // White's 4:59 is due at 1 s (+ epoch 100 µs); shown 300 µs late.
        let frames = [
            frame(50, "5:00", "5:00", true, false),
            frame(1_000_400, "4:59", "5:00", true, false),
            frame(2_000_100, "4:58", "5:00", true, false),
            frame(2_500_900, "4:58", "5:00", false, true),
            frame(3_500_200, "4:58", "4:59", false, true),
        ];
        assert_eq!(display_lateness(&frames, &runs), vec![0.3, 0.0, 0.1]);
    }

    #[test]
    fn ack_latency_is_to_the_first_ack_of_the_same_event_after_the_press() {
        let records = [
            json!({"kind": "press", "unit": "b", "event": 1, "button": "left", "t_us": 1_000}),
            json!({"kind": "ack", "unit": "c", "event": 1, "t_us": 1_100}),
            json!({"kind": "ack", "unit": "b", "event": 1, "t_us": 3_500}),
            json!({"kind": "press", "unit": "b", "event": 2, "button": "right", "t_us": 5_000}),
            json!({"kind": "ack", "unit": "b", "event": 1, "t_us": 9_000}),
        ];
        let presses = true_presses(&records);
        assert_eq!(ack_latency(&records, &presses), vec![Some(2.5), None]);
    }

    #[test]
    fn a_late_press_before_a_flag_is_placed_and_its_flag_withdrawn() {
        // Epoch 1_000 µs; White truly pressed at 1_951_000 (offset 1.95 s),
        // 50 ms before her flag at 2 s; the frame came 300 ms late.
        let history = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "flag", "side": "white", "t_us": 2_000_000}),
            json!({"do": "press", "side": "white", "t_us": 1_950_100,
                   "device": {"serial": "S", "event": 7}, "outcome": []}),
            json!({"do": "flag-withdrawn", "side": "white", "flag_at_us": 2_000_000, "t_us": 2_250_000}),
        ];
        let out = late_press_outcome(&history, "S", 7, "white", 1_951_000, 1_000);
        assert_eq!(out.error_ms, Some(0.1));
        assert!(out.flag_withdrawn && !out.flag_standing);
        assert!(!out.ignored && !out.not_placed);
        // The same with the withdrawal missing: the flag stands.
        let out = late_press_outcome(&history[..3], "S", 7, "white", 1_951_000, 1_000);
        assert!(out.flag_standing && !out.flag_withdrawn);
        // Moved to the flag instant and ignored: 50 ms late, flag standing.
        let moved = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "flag", "side": "white", "t_us": 2_000_000}),
            json!({"do": "press", "side": "white", "t_us": 2_000_000,
                   "device": {"serial": "S", "event": 7}, "outcome": ["ignored: Flagged"]}),
        ];
        let out = late_press_outcome(&moved, "S", 7, "white", 1_951_000, 1_000);
        assert_eq!(out.error_ms, Some(50.0));
        assert!(out.ignored && out.flag_standing);
        // Not placed; another side's flag and another press do not count.
        let unplaced = [
            json!({"do": "flag", "side": "black", "t_us": 2_000_000}),
            json!({"do": "press", "side": "white", "t_us": 1_000, "device": {"serial": "S", "event": 6}}),
            json!({"do": "press-not-placed", "side": "white", "device_at_us": 1_950_000,
                   "t_us": 9_000_000, "device": {"serial": "S", "event": 7}}),
        ];
        let out = late_press_outcome(&unplaced, "S", 7, "white", 1_951_000, 1_000);
        assert_eq!(out.error_ms, None);
        assert!(out.not_placed && !out.flag_standing && !out.flag_withdrawn);
    }

    #[test]
    fn the_charge_across_a_restart_is_from_the_press_to_the_restart_row() {
        // Epoch 500 µs. White pressed truly at 1_000_400 (accounted 1_000_000
        // after the epoch: 100 µs late); the daemon restarts at 3_000_000.
        let history = [
            json!({"do": "start", "t_us": 0}),
            json!({"do": "press", "side": "white", "t_us": 1_000_000,
                   "device": {"serial": "S", "event": 3}, "outcome": []}),
            json!({"do": "restart", "t_us": 3_000_000, "down_us": 250_000,
                   "same_boot": true, "was_running": "black"}),
            json!({"do": "pause", "t_us": 3_000_000}),
        ];
        let charge = charge_across_restart(&history, "S", 3, 1_000_400, 500).unwrap();
        assert_eq!(charge.side, "black");
        assert_eq!(charge.charged_us, 2_000_000);
        assert_eq!(charge.truth_us, 2_000_100);
        assert_eq!(charge.error_ms, -0.1);
        assert_eq!(charge.restart_at_us, 3_000_500);
        assert_eq!(charge.down_ms, 250.0);
        assert!(charge.same_boot);
        // A pause between them, or the other side named: no figure.
        let mut paused = history.to_vec();
        paused.insert(2, json!({"do": "pause", "t_us": 2_000_000}));
        assert_eq!(charge_across_restart(&paused, "S", 3, 1_000_400, 500), None);
        let mut other = history.to_vec();
        other[2]["was_running"] = json!("white");
        assert_eq!(charge_across_restart(&other, "S", 3, 1_000_400, 500), None);
        assert_eq!(
            charge_across_restart(&history[..2], "S", 3, 1_000_400, 500),
            None
        );
    }

    #[test]
    fn beside_compares_the_loaded_figures_with_the_quiet_ones() {
        let quiet: Vec<f64> = (1..=100).map(|v| f64::from(v) / 100.0).collect();
        let same = beside(&quiet, &quiet);
        assert_eq!(same.ratio_p50, 1.0);
        assert!(same.within_noise);
        let slow: Vec<f64> = quiet.iter().map(|v| v * 2.0).collect();
        let worse = beside(&quiet, &slow);
        assert_eq!(worse.ratio_p50, 2.0);
        assert_eq!(worse.ratio_max, 2.0);
        assert!(!worse.within_noise);
        // A slightly slower tail is noise; nothing measured is not equal.
        let tail: Vec<f64> = quiet
            .iter()
            .map(|v| if *v > 0.98 { v + 0.4 } else { *v })
            .collect();
        assert!(beside(&quiet, &tail).within_noise);
        assert!(!beside(&quiet, &[]).within_noise);
    }
}
