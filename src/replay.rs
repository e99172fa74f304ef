//! `chessclockctl replay`: the timing engine over a JSON Lines timeline, with
//! no daemon and no hardware (format: `docs/replay-format.md`, a
//! stable contract).
//!
//! Promises:
//! * one compact JSON line on `out` per event line: the state after that
//!   event at its `t` ([`crate::engine::report::StateReport`]);
//! * all or nothing: the whole input is read and checked (and the engine run)
//!   before anything is printed; on the first problem, one line on `err`
//!   naming the input line (`line 4: "side" must be "white" or "black"`),
//!   nothing on `out`, and exit status 2;
//! * blank (whitespace-only) lines are skipped; they still count in line
//!   numbers. The setup line is the first non-blank line;
//! * the setup line's `control` is a notation string, an object `{"white":
//!   ..., "black": ...}` of two side controls, or a byo-yomi / Canadian table
//!   in the config schema (`{"type": "byo-yomi", "main": 600, "periods": 5,
//!   "period": 30}`); a side control inside `white`/`black` is a string or such
//!   a table;
//! * `adjust` also takes `"stage"` (1-based), an addition to the format,
//!   and needs at least one of `remaining_ms`, `moves`, `stage`;
//! * a press that would be a side's 1000th move is refused like any value
//!   out of its bounds (a side has at most
//!   [`MAX_MOVES`](crate::timecontrol::MAX_MOVES) moves);
//! * per side, `periods_left` (byo-yomi) or `moves_left_in_block`
//!   (Canadian overtime) follow the other fields, absent for other controls.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use crate::config::SpecialControl;
use crate::engine::report::StateReport;
use crate::engine::{
    Adjustment, Credit, Engine, Ignored, Input, MatchControl, Micros, Notice, Settings, Side,
    StageAdvance, MS,
};
use crate::timecontrol::{self, TimeControl, MAX_MOVES};

/// A problem with the input, on 1-based line `line`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ReplayError {
    pub line: usize,
    pub message: String,
}

/// Exit status for bad input.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit status when the output cannot be written.
pub const EXIT_OUTPUT_FAILED: i32 = 1;

/// Runs a replay: reads `input`, writes the states to `out` or one error line
/// to `err`; returns the process exit status (0, 1 output failed, 2 bad input).
pub fn run(input: &mut dyn BufRead, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match replay(input) {
        Ok(lines) => {
            let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
            for line in lines {
                text.push_str(&line);
                text.push('\n');
            }
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => 0,
                Err(e) => {
                    let _ = writeln!(err, "cannot write the output: {e}");
                    EXIT_OUTPUT_FAILED
                }
            }
        }
        Err(e) => {
            let _ = writeln!(err, "{e}");
            let _ = err.flush();
            EXIT_BAD_INPUT
        }
    }
}

/// Runs a replay and returns the output lines (without newlines).
pub fn replay(input: &mut dyn BufRead) -> Result<Vec<String>, ReplayError> {
    let mut engine: Option<Engine> = None;
    let mut last_t: Option<i64> = None;
    let mut output = Vec::new();
    let mut number = 0usize;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        number += 1;
        let fail = |message: String| ReplayError {
            line: number,
            message,
        };
        let read = input
            .read_until(b'\n', &mut raw)
            .map_err(|e| fail(format!("cannot read the input: {e}")))?;
        if read == 0 {
            break;
        }
        let text = std::str::from_utf8(&raw).map_err(|_| fail("not valid UTF-8".into()))?;
        if text.trim().is_empty() {
            continue;
        }
        let text = text.trim_end_matches(['\n', '\r']);
        let value: Value = serde_json::from_str(text).map_err(|e| fail(json_error(&e)))?;
        let Value::Object(object) = value else {
            return Err(fail("expected a JSON object".into()));
        };
        match engine.as_mut() {
            None => {
                let (control, settings) = setup(&object).map_err(fail)?;
                engine = Some(Engine::new(control, settings));
            }
            Some(engine) => {
                let event = event(&object).map_err(fail)?;
                if let Some(last) = last_t {
                    if event.t_ms < last {
                        return Err(fail(format!(
                            "\"t\" goes backwards ({} after {last})",
                            event.t_ms
                        )));
                    }
                }
                last_t = Some(event.t_ms);
                let now = event.t_ms * MS;
                let notices = engine
                    .apply(now, event.input.unwrap_or(Input::Elapsed))
                    .map_err(|e| fail(e.to_string()))?;
                if let Some(side) = beyond_move_limit(&notices) {
                    return Err(fail(format!(
                        "{side}'s press would be its move {}: a side has at most {MAX_MOVES} moves",
                        MAX_MOVES + 1
                    )));
                }
                output.push(StateReport::new(&engine.state(now), engine.control()).to_json());
            }
        }
    }
    if engine.is_none() {
        return Err(ReplayError {
            line: number.max(1),
            message: "missing the setup line ({\"control\": ...})".into(),
        });
    }
    Ok(output)
}

/// The side whose press the engine ignored because it would have been that
/// side's move [`MAX_MOVES`] + 1: out of the format's bounds, so an error.
fn beyond_move_limit(notices: &[Notice]) -> Option<Side> {
    notices.iter().find_map(|notice| match notice {
        Notice::Ignored {
            input: Input::Press(side),
            reason: Ignored::MoveLimit,
        } => Some(*side),
        _ => None,
    })
}

/// serde_json's message without its "at line 1 column N" (the line is ours).
fn json_error(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    };
    format!("invalid JSON: {message} (column {})", error.column())
}

fn check_keys(object: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    for key in object.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(format!(
                "unknown key \"{key}\" (expected {})",
                allowed
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(())
}

fn string<'a>(object: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("\"{key}\" must be a string")),
    }
}

/// The setup line: the control and the engine settings.
pub fn setup(object: &Map<String, Value>) -> Result<(MatchControl, Settings), String> {
    check_keys(object, &["control", "stage_advance", "credit", "freeze"])?;
    let control = match object.get("control") {
        None => return Err("the setup line needs \"control\"".into()),
        Some(value) => match_control(value)?,
    };
    let mut settings = Settings::default();
    if let Some(text) = string(object, "stage_advance")? {
        settings.stage_advance = match text {
            "moves" => StageAdvance::Moves,
            "flag" => StageAdvance::Flag,
            _ => return Err("\"stage_advance\" must be \"moves\" or \"flag\"".into()),
        };
    }
    if let Some(text) = string(object, "credit")? {
        settings.credit = match text {
            "before-move" => Credit::BeforeMove,
            "after-move" => Credit::AfterMove,
            _ => return Err("\"credit\" must be \"before-move\" or \"after-move\"".into()),
        };
    }
    match object.get("freeze") {
        None => {}
        Some(Value::Bool(freeze)) => settings.freeze = Some(*freeze),
        Some(_) => return Err("\"freeze\" must be true or false".into()),
    }
    Ok((control, settings))
}

fn match_control(value: &Value) -> Result<MatchControl, String> {
    match value {
        Value::String(_) => Ok(MatchControl::same(side_control(value, "control")?)),
        Value::Object(object) if object.contains_key("type") => {
            Ok(MatchControl::same(side_control(value, "control")?))
        }
        Value::Object(object) => {
            check_keys(object, &["white", "black"]).map_err(|e| format!("\"control\": {e}"))?;
            let white = object
                .get("white")
                .ok_or("\"control\" needs \"white\" and \"black\"")?;
            let black = object
                .get("black")
                .ok_or("\"control\" needs \"white\" and \"black\"")?;
            Ok(MatchControl {
                white: side_control(white, "control.white")?,
                black: side_control(black, "control.black")?,
            })
        }
        _ => Err("\"control\" must be a time-control string or an object".into()),
    }
}

fn side_control(value: &Value, name: &str) -> Result<TimeControl, String> {
    match value {
        Value::String(text) => {
            timecontrol::parse(text).map_err(|e| format!("\"{name}\" `{text}`: {e}"))
        }
        Value::Object(_) => {
            let special: SpecialControl =
                serde_json::from_value(value.clone()).map_err(|e| format!("\"{name}\": {e}"))?;
            special.to_control().map_err(|e| format!("\"{name}\": {e}"))
        }
        _ => Err(format!(
            "\"{name}\" must be a time-control string or a byo-yomi / Canadian object"
        )),
    }
}

/// One parsed event line. `input: None` is a `state` query.
struct Event {
    t_ms: i64,
    input: Option<Input>,
}

/// The largest |t| (ms) whose microseconds fit comfortably in an i64.
const MAX_T_MS: i64 = i64::MAX / MS / 4;

fn integer(object: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("\"{key}\" must be a whole number")),
        Some(_) => Err(format!("\"{key}\" must be a whole number")),
    }
}

fn side(object: &Map<String, Value>, event: &str) -> Result<Side, String> {
    match object.get("side") {
        None => Err(format!("\"{event}\" needs \"side\"")),
        Some(Value::String(text)) => {
            Side::parse(text).ok_or_else(|| "\"side\" must be \"white\" or \"black\"".to_owned())
        }
        Some(_) => Err("\"side\" must be \"white\" or \"black\"".into()),
    }
}

fn event(object: &Map<String, Value>) -> Result<Event, String> {
    let t_ms = integer(object, "t")?.ok_or("an event needs \"t\"")?;
    if !(-MAX_T_MS..=MAX_T_MS).contains(&t_ms) {
        return Err(format!("\"t\" is out of range (at most {MAX_T_MS} ms)"));
    }
    let kind = match object.get("do") {
        None => return Err("an event needs \"do\"".into()),
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err("\"do\" must be a string".into()),
    };
    let input = match kind {
        "start" | "pause" | "resume" | "state" => {
            check_keys(object, &["t", "do"])?;
            match kind {
                "start" => Some(Input::Start),
                "pause" => Some(Input::Pause),
                "resume" => Some(Input::Resume),
                _ => None,
            }
        }
        "press" => {
            check_keys(object, &["t", "do", "side"])?;
            Some(Input::Press(side(object, kind)?))
        }
        "adjust" => {
            check_keys(
                object,
                &["t", "do", "side", "remaining_ms", "moves", "stage"],
            )?;
            let side = side(object, kind)?;
            let remaining = match integer(object, "remaining_ms")? {
                None => None,
                Some(ms) if (0..=MAX_T_MS).contains(&ms) => Some(ms * MS as Micros),
                Some(_) => {
                    return Err(format!("\"remaining_ms\" must be between 0 and {MAX_T_MS}"))
                }
            };
            let moves = match integer(object, "moves")? {
                None => None,
                Some(n) => Some(
                    u32::try_from(n)
                        .map_err(|_| format!("\"moves\" must be between 0 and {}", u32::MAX))?,
                ),
            };
            let stage = match integer(object, "stage")? {
                None => None,
                Some(n) if n >= 1 => Some(
                    u32::try_from(n)
                        .map_err(|_| format!("\"stage\" must be between 1 and {}", u32::MAX))?,
                ),
                Some(_) => return Err(format!("\"stage\" must be between 1 and {}", u32::MAX)),
            };
            if remaining.is_none() && moves.is_none() && stage.is_none() {
                return Err(
                    "\"adjust\" needs at least one of \"remaining_ms\", \"moves\" or \"stage\""
                        .into(),
                );
            }
            Some(Input::Adjust(Adjustment {
                side,
                remaining,
                moves,
                stage,
            }))
        }
        other => {
            return Err(format!(
                "unknown event \"{other}\" (expected start, press, pause, resume, adjust or state)"
            ))
        }
    };
    Ok(Event { t_ms, input })
}
