//! Pure analysis of one run: the simulator's log (true press instants,
//! display frames as the display unit read them) joined with the daemon's
//! history (what it accounted). No I/O; every function is a transcript
//! of its inputs.

use serde_json::Value;

use crate::engine::{Micros, SECOND};

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
}
