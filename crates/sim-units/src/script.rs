//! Scripts for the scripted mode: timed actions relative to the start.
//!
//! Two spellings of the same steps, chosen by the file's extension:
//! `.toml` (an array of `[[step]]` tables) or anything else as JSON Lines (one
//! object per line; blank lines and lines starting with `#` are skipped).
//!
//! Every step has an `action` and when it runs: `at_ms` (milliseconds after
//! the script started) or `after_ms` (after the previous step finished;
//! the default is `after_ms = 0`). Steps run in order: a step never starts
//! before the previous one finished, so a `wait` delays all later steps.
//! `unit` names the unit; without it, `press` goes to the first unit with
//! buttons, a `wait` on display content to the first unit with a display,
//! and every other action to every unit.
//!
//! | action | fields |
//! |---|---|
//! | `press` | `button`: `left`, `right` or `arbiter` |
//! | `unplug` | `replug_after_ms` (optional: replug by itself after that long) |
//! | `replug` | |
//! | `corrupt` | `ber` (bit-error rate, 0..=1), `duration_ms`, `direction` (`to-host` default, `from-host`, `both`) |
//! | `delay` | `delay_ms` (frames to the host held that long; presses keep their true timestamp), `duration_ms` |
//! | `duplicate` | `copies` (extra copies of each frame, default 1), `duration_ms` |
//! | `wait` | conditions, all of which must hold: `text`, `left`, `right` (panel times, e.g. `"4:59"`), `icon` (+ `side`: `left`/`right`, default either), `link` (`up`, `lost`, `connecting`), `plugged`, `unacked`; and `timeout_ms` (default 5000; the script fails when it passes) |
//! | `power-cycle` | `off_ms` (default 100): cable out and power off, then a power-up with a new `boot_id` and an empty event queue |
//! | `low-power` | `on` (default true): the battery-low flag in heartbeats and the LOW_POWER icon |
//! | `end` | stops the script (the `run` command then exits) |
//!
//! ```text
//! {"at_ms": 0, "action": "wait", "link": "up", "unit": "buttons"}
//! {"after_ms": 500, "action": "press", "button": "left"}
//! {"after_ms": 0, "action": "wait", "icon": "running", "side": "right", "timeout_ms": 2000}
//! {"at_ms": 3000, "action": "unplug", "unit": "buttons", "replug_after_ms": 1000}
//! ```
//!
//! ```toml
//! [[step]]
//! at_ms = 1000
//! action = "corrupt"
//! ber = 0.001
//! duration_ms = 2000
//! ```

use std::path::Path;

use chessclock_protocol::{Button, Icons};
use serde::Deserialize;

use super::faults::Direction;
use super::unit::LinkState;
use super::unit::UnitSnapshot;
use super::view::icon_by_name;

/// When a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Milliseconds after the script started.
    At(u64),
    /// Milliseconds after the previous step finished.
    After(u64),
}

/// Which side of a display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
    Either,
}

/// What a `wait` step waits for (all given conditions).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Condition {
    pub text: Option<String>,
    pub left: Option<String>,
    pub right: Option<String>,
    pub icon: Option<(Icons, Side)>,
    pub link: Option<LinkState>,
    pub plugged: Option<bool>,
    pub unacked: Option<usize>,
}

impl Condition {
    /// Whether the condition looks at the display.
    pub fn needs_display(&self) -> bool {
        self.text.is_some() || self.left.is_some() || self.right.is_some() || self.icon.is_some()
    }

    pub fn holds(&self, unit: &UnitSnapshot) -> bool {
        let display = unit.display;
        let shown = |f: &dyn Fn(&chessclock_protocol::DisplayState) -> bool| {
            display.as_ref().is_some_and(f)
        };
        self.text
            .as_ref()
            .is_none_or(|t| shown(&|d| d.text.as_str() == t))
            && self
                .left
                .as_ref()
                .is_none_or(|t| shown(&|d| d.left.time.as_str() == t))
            && self
                .right
                .as_ref()
                .is_none_or(|t| shown(&|d| d.right.time.as_str() == t))
            && self.icon.is_none_or(|(icon, side)| {
                shown(&|d| match side {
                    Side::Left => d.left.icons.contains(icon),
                    Side::Right => d.right.icons.contains(icon),
                    Side::Either => d.left.icons.contains(icon) || d.right.icons.contains(icon),
                })
            })
            && self
                .link
                .is_none_or(|l| unit.link_state == l && unit.plugged)
            && self.plugged.is_none_or(|p| unit.plugged == p)
            && self.unacked.is_none_or(|n| unit.unacked == n)
    }
}

/// One scripted action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Press {
        button: Button,
    },
    Unplug {
        replug_after_ms: Option<u64>,
    },
    Replug,
    Corrupt {
        ber: f64,
        duration_ms: u64,
        direction: Direction,
    },
    Delay {
        delay_ms: u64,
        duration_ms: u64,
    },
    Duplicate {
        copies: u32,
        duration_ms: u64,
    },
    Wait {
        condition: Condition,
        timeout_ms: u64,
    },
    PowerCycle {
        off_ms: u64,
    },
    LowPower {
        on: bool,
    },
    End,
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Press { .. } => "press",
            Action::Unplug { .. } => "unplug",
            Action::Replug => "replug",
            Action::Corrupt { .. } => "corrupt",
            Action::Delay { .. } => "delay",
            Action::Duplicate { .. } => "duplicate",
            Action::Wait { .. } => "wait",
            Action::PowerCycle { .. } => "power-cycle",
            Action::LowPower { .. } => "low-power",
            Action::End => "end",
        }
    }
}

/// One step of a script.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub when: When,
    pub unit: Option<String>,
    pub action: Action,
    /// Line (JSON Lines) or step number (TOML), for messages.
    pub line: usize,
}

/// A parsed script.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Script {
    pub steps: Vec<Step>,
}

/// A script that does not parse: where and why.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{source_name}:{line}: {message}")]
pub struct ScriptError {
    pub source_name: String,
    pub line: usize,
    pub message: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStep {
    action: String,
    at_ms: Option<u64>,
    after_ms: Option<u64>,
    unit: Option<String>,
    button: Option<String>,
    replug_after_ms: Option<u64>,
    ber: Option<f64>,
    duration_ms: Option<u64>,
    direction: Option<Direction>,
    delay_ms: Option<u64>,
    copies: Option<u32>,
    text: Option<String>,
    left: Option<String>,
    right: Option<String>,
    icon: Option<String>,
    side: Option<String>,
    link: Option<String>,
    plugged: Option<bool>,
    unacked: Option<usize>,
    timeout_ms: Option<u64>,
    off_ms: Option<u64>,
    on: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlScript {
    #[serde(default)]
    step: Vec<RawStep>,
}

impl RawStep {
    /// Names of the optional fields given, to refuse ones the action ignores.
    fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        let mut note = |present: bool, name: &'static str| {
            if present {
                given.push(name)
            }
        };
        note(self.button.is_some(), "button");
        note(self.replug_after_ms.is_some(), "replug_after_ms");
        note(self.ber.is_some(), "ber");
        note(self.duration_ms.is_some(), "duration_ms");
        note(self.direction.is_some(), "direction");
        note(self.delay_ms.is_some(), "delay_ms");
        note(self.copies.is_some(), "copies");
        note(self.text.is_some(), "text");
        note(self.left.is_some(), "left");
        note(self.right.is_some(), "right");
        note(self.icon.is_some(), "icon");
        note(self.side.is_some(), "side");
        note(self.link.is_some(), "link");
        note(self.plugged.is_some(), "plugged");
        note(self.unacked.is_some(), "unacked");
        note(self.timeout_ms.is_some(), "timeout_ms");
        note(self.off_ms.is_some(), "off_ms");
        note(self.on.is_some(), "on");
        given
    }

    fn into_step(self, line: usize) -> Result<Step, String> {
        let when = match (self.at_ms, self.after_ms) {
            (Some(_), Some(_)) => return Err("give `at_ms` or `after_ms`, not both".into()),
            (Some(at), None) => When::At(at),
            (None, after) => When::After(after.unwrap_or(0)),
        };
        let allowed: &[&str] = match self.action.as_str() {
            "press" => &["button"],
            "unplug" => &["replug_after_ms"],
            "replug" | "end" => &[],
            "power-cycle" => &["off_ms"],
            "low-power" => &["on"],
            "corrupt" => &["ber", "duration_ms", "direction"],
            "delay" => &["delay_ms", "duration_ms"],
            "duplicate" => &["copies", "duration_ms"],
            "wait" => &[
                "text",
                "left",
                "right",
                "icon",
                "side",
                "link",
                "plugged",
                "unacked",
                "timeout_ms",
            ],
            other => {
                return Err(format!(
                    "unknown action `{other}` (expected press, unplug, replug, corrupt, \
                     delay, duplicate, wait, power-cycle, low-power or end)"
                ))
            }
        };
        if let Some(extra) = self.given().into_iter().find(|f| !allowed.contains(f)) {
            return Err(format!("`{extra}` does not apply to `{}`", self.action));
        }
        let need = |value: Option<u64>, name: &str| {
            value.ok_or_else(|| format!("`{}` needs `{name}`", self.action))
        };
        let action = match self.action.as_str() {
            "press" => {
                let button = match self.button.as_deref() {
                    Some("left") => Button::Left,
                    Some("right") => Button::Right,
                    Some("arbiter") => Button::Arbiter,
                    Some(other) => {
                        return Err(format!("button `{other}`: expected left, right or arbiter"))
                    }
                    None => return Err("`press` needs `button`".into()),
                };
                Action::Press { button }
            }
            "unplug" => Action::Unplug {
                replug_after_ms: self.replug_after_ms,
            },
            "replug" => Action::Replug,
            "power-cycle" => Action::PowerCycle {
                off_ms: self.off_ms.unwrap_or(100),
            },
            "low-power" => Action::LowPower {
                on: self.on.unwrap_or(true),
            },
            "end" => Action::End,
            "corrupt" => {
                let ber = self.ber.ok_or("`corrupt` needs `ber`")?;
                if !(0.0..=1.0).contains(&ber) {
                    return Err(format!("ber {ber}: must be between 0 and 1"));
                }
                Action::Corrupt {
                    ber,
                    duration_ms: need(self.duration_ms, "duration_ms")?,
                    direction: self.direction.unwrap_or_default(),
                }
            }
            "delay" => Action::Delay {
                delay_ms: need(self.delay_ms, "delay_ms")?,
                duration_ms: need(self.duration_ms, "duration_ms")?,
            },
            "duplicate" => Action::Duplicate {
                copies: self.copies.unwrap_or(1),
                duration_ms: need(self.duration_ms, "duration_ms")?,
            },
            _ => {
                let icon = match &self.icon {
                    Some(name) => {
                        let icon =
                            icon_by_name(name).ok_or_else(|| format!("unknown icon `{name}`"))?;
                        let side = match self.side.as_deref() {
                            None | Some("either") => Side::Either,
                            Some("left") => Side::Left,
                            Some("right") => Side::Right,
                            Some(other) => {
                                return Err(format!(
                                    "side `{other}`: expected left, right or either"
                                ))
                            }
                        };
                        Some((icon, side))
                    }
                    None if self.side.is_some() => return Err("`side` needs `icon`".into()),
                    None => None,
                };
                let link = match self.link.as_deref() {
                    None => None,
                    Some("up") => Some(LinkState::Up),
                    Some("lost") => Some(LinkState::Lost),
                    Some("connecting") => Some(LinkState::Connecting),
                    Some(other) => {
                        return Err(format!("link `{other}`: expected up, lost or connecting"))
                    }
                };
                let condition = Condition {
                    text: self.text,
                    left: self.left,
                    right: self.right,
                    icon,
                    link,
                    plugged: self.plugged,
                    unacked: self.unacked,
                };
                if condition == Condition::default() {
                    return Err("`wait` needs at least one condition".into());
                }
                Action::Wait {
                    condition,
                    timeout_ms: self.timeout_ms.unwrap_or(5_000),
                }
            }
        };
        Ok(Step {
            when,
            unit: self.unit,
            action,
            line,
        })
    }
}

impl Script {
    /// Parses JSON Lines; `source_name` appears in errors.
    pub fn from_json_lines(text: &str, source_name: &str) -> Result<Script, ScriptError> {
        let error = |line: usize, message: String| ScriptError {
            source_name: source_name.to_owned(),
            line,
            message,
        };
        let mut steps = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let raw: RawStep =
                serde_json::from_str(trimmed).map_err(|e| error(index + 1, e.to_string()))?;
            steps.push(raw.into_step(index + 1).map_err(|m| error(index + 1, m))?);
        }
        Ok(Script { steps })
    }

    /// Parses TOML (`[[step]]` tables); errors give the step number.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Script, ScriptError> {
        let parsed: TomlScript = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1))
                .unwrap_or(0);
            ScriptError {
                source_name: source_name.to_owned(),
                line,
                message: e.message().to_owned(),
            }
        })?;
        let mut steps = Vec::new();
        for (index, raw) in parsed.step.into_iter().enumerate() {
            steps.push(raw.into_step(index + 1).map_err(|message| ScriptError {
                source_name: format!("{source_name} [[step]] #"),
                line: index + 1,
                message,
            })?);
        }
        Ok(Script { steps })
    }

    /// Reads a script file: TOML for `.toml`, JSON Lines otherwise.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError {
            source_name: name.clone(),
            line: 0,
            message: e.to_string(),
        })?;
        if path.extension().is_some_and(|e| e == "toml") {
            Script::from_toml(&text, &name)
        } else {
            Script::from_json_lines(&text, &name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_and_toml_give_the_same_steps() {
        let jsonl = r#"
# a comment
{"at_ms": 100, "action": "press", "button": "left"}
{"after_ms": 50, "action": "unplug", "unit": "buttons", "replug_after_ms": 200}
{"action": "wait", "icon": "flag", "side": "right", "timeout_ms": 900}
{"action": "corrupt", "ber": 0.01, "duration_ms": 10, "direction": "both"}
"#;
        let toml = r#"
[[step]]
at_ms = 100
action = "press"
button = "left"
[[step]]
after_ms = 50
action = "unplug"
unit = "buttons"
replug_after_ms = 200
[[step]]
action = "wait"
icon = "flag"
side = "right"
timeout_ms = 900
[[step]]
action = "corrupt"
ber = 0.01
duration_ms = 10
direction = "both"
"#;
        let a = Script::from_json_lines(jsonl, "a.jsonl").unwrap();
        let b = Script::from_toml(toml, "b.toml").unwrap();
        let strip = |s: &Script| {
            s.steps
                .iter()
                .map(|s| (s.when, s.unit.clone(), s.action.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&a), strip(&b));
        assert_eq!(a.steps[0].when, When::At(100));
        assert_eq!(a.steps[0].line, 3);
        assert_eq!(a.steps[2].when, When::After(0));
        assert_eq!(
            a.steps[2].action,
            Action::Wait {
                condition: Condition {
                    icon: Some((Icons::FLAG, Side::Right)),
                    ..Condition::default()
                },
                timeout_ms: 900
            }
        );
    }

    #[test]
    fn power_actions_have_defaults() {
        let script = Script::from_json_lines(
            "{\"action\": \"power-cycle\"}\n{\"action\": \"low-power\", \"on\": false}\n{\"action\": \"low-power\"}",
            "p",
        )
        .unwrap();
        let actions: Vec<_> = script.steps.into_iter().map(|s| s.action).collect();
        assert_eq!(
            actions,
            [
                Action::PowerCycle { off_ms: 100 },
                Action::LowPower { on: false },
                Action::LowPower { on: true }
            ]
        );
    }

    #[test]
    fn bad_steps_say_where_and_what() {
        let cases = [
            (r#"{"action": "press"}"#, "needs `button`"),
            (r#"{"action": "press", "button": "middle"}"#, "middle"),
            (r#"{"action": "jump"}"#, "unknown action `jump`"),
            (
                r#"{"action": "press", "button": "left", "ber": 0.1}"#,
                "`ber` does not apply to `press`",
            ),
            (
                r#"{"action": "corrupt", "ber": 2, "duration_ms": 1}"#,
                "between 0 and 1",
            ),
            (r#"{"action": "wait"}"#, "at least one condition"),
            (
                r#"{"action": "low-power", "off_ms": 3}"#,
                "`off_ms` does not apply to `low-power`",
            ),
            (r#"{"action": "wait", "icon": "unicorn"}"#, "unknown icon"),
            (
                r#"{"action": "press", "button": "left", "at_ms": 1, "after_ms": 2}"#,
                "not both",
            ),
            (r#"{"action": "press", "buton": "left"}"#, "buton"),
            (r#"not json"#, "expected"),
        ];
        for (line, expected) in cases {
            let text = format!("\n{line}\n");
            let error = Script::from_json_lines(&text, "s.jsonl").unwrap_err();
            assert_eq!(error.line, 2, "{line}");
            assert!(error.to_string().contains(expected), "{line}: {error}");
            assert!(error.to_string().starts_with("s.jsonl:2:"), "{error}");
        }
        let error = Script::from_toml("[[step]]\naction = 3\n", "t.toml").unwrap_err();
        assert!(error.to_string().contains("t.toml"), "{error}");
    }
}
