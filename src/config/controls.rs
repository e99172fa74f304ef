//! Time controls in the configuration: the table forms (per side, byo-yomi,
//! Canadian overtime), the built-in presets and how a name or a notation
//! resolves to what the engine runs.
//!
//! Promises: a preset of the config's `[presets]` replaces a built-in one of
//! the same name; a preset may name another, and a cycle ends in an error,
//! never a loop; a table's `credit`, `stage-advance` and `freeze` override
//! the `[engine]` defaults; every time a table gives is bounded by what a
//! game can have (as the notation).

use super::{Config, ControlSpec, ControlTable, SideControlSpec, SpecialControl};
use crate::engine::{MatchControl, Settings, SECOND};
use crate::timecontrol::{self, TimeControl, MAX_MOVES};

/// The largest time a config table may give, in seconds (as the notation).
const MAX_SECONDS: u64 = (crate::timecontrol::MAX_TIME / SECOND) as u64;

fn seconds(value: u64, what: &str) -> Result<i64, String> {
    if value > MAX_SECONDS {
        return Err(format!("{what} is too large (at most {MAX_SECONDS} s)"));
    }
    Ok(value as i64 * SECOND)
}

impl SpecialControl {
    /// The engine's control for this table.
    pub fn to_control(&self) -> Result<TimeControl, String> {
        self.check_overtime()?;
        Ok(match *self {
            SpecialControl::ByoYomi {
                main,
                periods,
                period,
            } => TimeControl::ByoYomi {
                main: seconds(main, "`main`")?,
                periods,
                period: seconds(period, "`period`")?,
            },
            SpecialControl::Canadian { main, moves, block } => TimeControl::Canadian {
                main: seconds(main, "`main`")?,
                moves,
                block: seconds(block, "`block`")?,
            },
        })
    }

    /// The overtime's count (byo-yomi periods, or the moves of a Canadian
    /// block) must be 1 to [`MAX_MOVES`] and its length longer than 0 s; the
    /// error says which, in the words of that kind of overtime.
    fn check_overtime(&self) -> Result<(), String> {
        let (count, length) = match *self {
            SpecialControl::ByoYomi {
                periods, period, ..
            } => (periods, period),
            SpecialControl::Canadian { moves, block, .. } => (moves, block),
        };
        let byo_yomi = matches!(self, SpecialControl::ByoYomi { .. });
        if count == 0 {
            return Err(if byo_yomi {
                "byo-yomi needs at least 1 period".into()
            } else {
                "a Canadian block needs at least 1 move".into()
            });
        }
        if count > MAX_MOVES {
            return Err(if byo_yomi {
                format!("at most {MAX_MOVES} byo-yomi periods")
            } else {
                format!(
                    "a Canadian block of {count} moves is more than a game can have \
                     (at most {MAX_MOVES})"
                )
            });
        }
        if length == 0 {
            return Err(if byo_yomi {
                "a byo-yomi period must be longer than 0 s".into()
            } else {
                "a Canadian block must be longer than 0 s".into()
            });
        }
        Ok(())
    }
}

impl SideControlSpec {
    /// The engine's control: a notation (not a preset name) or a special table.
    pub fn to_control(&self) -> Result<TimeControl, String> {
        match self {
            SideControlSpec::Notation(text) => {
                timecontrol::parse(text).map_err(|e| format!("`{text}`: {e}"))
            }
            SideControlSpec::Special(special) => special.to_control(),
        }
    }
}

impl ControlTable {
    /// The per-side controls of this table, and its settings merged over `base`.
    pub fn resolve(&self, base: Settings) -> Result<(MatchControl, Settings), String> {
        let control = match (&self.control, &self.white, &self.black) {
            (Some(both), None, None) => MatchControl::same(both.to_control()?),
            (None, Some(white), Some(black)) => MatchControl {
                white: white.to_control().map_err(|e| format!("white: {e}"))?,
                black: black.to_control().map_err(|e| format!("black: {e}"))?,
            },
            (None, Some(_), None) | (None, None, Some(_)) => {
                return Err("give both `white` and `black`, or `control`".into())
            }
            (None, None, None) => return Err("give `control`, or `white` and `black`".into()),
            (Some(_), _, _) => {
                return Err("give either `control` or `white` and `black`, not both".into())
            }
        };
        let settings = Settings {
            credit: self.credit.unwrap_or(base.credit),
            stage_advance: self.stage_advance.unwrap_or(base.stage_advance),
            freeze: self.freeze.or(base.freeze),
        };
        Ok((control, settings))
    }
}

/// A built-in preset: name, description, control.
pub struct BuiltinPreset {
    pub name: &'static str,
    pub description: &'static str,
    pub spec: fn() -> ControlSpec,
}

fn notation(text: &str) -> ControlSpec {
    ControlSpec::Notation(text.to_owned())
}

fn per_side(white: &str, black: &str, description: &str) -> ControlSpec {
    ControlSpec::Table(ControlTable {
        description: Some(description.to_owned()),
        white: Some(SideControlSpec::Notation(white.to_owned())),
        black: Some(SideControlSpec::Notation(black.to_owned())),
        ..ControlTable::default()
    })
}

fn special(control: SpecialControl, description: &str) -> ControlSpec {
    ControlSpec::Table(ControlTable {
        description: Some(description.to_owned()),
        control: Some(SideControlSpec::Special(control)),
        ..ControlTable::default()
    })
}

/// The presets every daemon knows; a config's `[presets]` entry of the same
/// name replaces one.
pub fn builtin_presets() -> &'static [BuiltinPreset] {
    const PRESETS: &[BuiltinPreset] = &[
        BuiltinPreset {
            name: "fide-classical",
            description:
                "FIDE classical: 90 min for 40 moves, then 30 min, 30 s per move from move 1",
            spec: || notation("40/5400+30:1800+30"),
        },
        BuiltinPreset {
            name: "fide-rapid",
            description: "FIDE rapid: 15 min, 10 s per move",
            spec: || notation("900+10"),
        },
        BuiltinPreset {
            name: "fide-blitz",
            description: "FIDE blitz: 3 min, 2 s per move",
            spec: || notation("180+2"),
        },
        BuiltinPreset {
            name: "blitz",
            description: "blitz: 3 min, 2 s per move",
            spec: || notation("180+2"),
        },
        BuiltinPreset {
            name: "blitz-5",
            description: "blitz: 5 min, 3 s per move",
            spec: || notation("300+3"),
        },
        BuiltinPreset {
            name: "bullet",
            description: "bullet: 1 min, 1 s per move",
            spec: || notation("60+1"),
        },
        BuiltinPreset {
            name: "armageddon",
            description: "Armageddon: White 5 min, Black 4 min (draw odds), no increment",
            spec: || per_side("300", "240", "Armageddon: White 5 min, Black 4 min"),
        },
        BuiltinPreset {
            name: "us-classical",
            description: "US Chess: 40 moves in 120 min, then 30 min sudden death, 5 s delay",
            spec: || notation("40/120, SD/30;d5"),
        },
        BuiltinPreset {
            name: "us-rapid",
            description: "US Chess: game in 25 min, 5 s delay",
            spec: || notation("G/25;d5"),
        },
        BuiltinPreset {
            name: "byo-yomi",
            description: "10 min, then byo-yomi: 5 periods of 30 s",
            spec: || {
                special(
                    SpecialControl::ByoYomi {
                        main: 600,
                        periods: 5,
                        period: 30,
                    },
                    "10 min, then byo-yomi: 5 periods of 30 s",
                )
            },
        },
        BuiltinPreset {
            name: "canadian",
            description: "10 min, then Canadian overtime: 25 moves in 5 min",
            spec: || {
                special(
                    SpecialControl::Canadian {
                        main: 600,
                        moves: 25,
                        block: 300,
                    },
                    "10 min, then Canadian overtime: 25 moves in 5 min",
                )
            },
        },
        BuiltinPreset {
            name: "hourglass",
            description: "hourglass: 3 min each, time used goes to the opponent",
            spec: || notation("*180"),
        },
        BuiltinPreset {
            name: "upcount",
            description: "no time limit: both clocks count up",
            spec: || notation("-"),
        },
    ];
    PRESETS
}

impl Config {
    /// The engine settings of `[engine]`.
    pub fn settings(&self) -> Settings {
        Settings {
            credit: self.engine.credit,
            stage_advance: self.engine.stage_advance,
            freeze: self.engine.freeze,
        }
    }

    /// The preset of that name: the config's own first, then the built-in one.
    pub fn preset(&self, name: &str) -> Option<ControlSpec> {
        if let Some(spec) = self.presets.get(name) {
            return Some(spec.clone());
        }
        builtin_presets()
            .iter()
            .find(|p| p.name == name)
            .map(|p| (p.spec)())
    }

    /// Every preset name this config knows (built-in and its own), sorted.
    pub fn preset_names(&self) -> Vec<String> {
        let mut names: Vec<String> = builtin_presets()
            .iter()
            .map(|p| p.name.to_owned())
            .chain(self.presets.keys().cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// A preset name or a notation, as the engine needs it, with the
    /// `[engine]` settings (overridden by a preset table's own).
    pub fn resolve_control(&self, text: &str) -> Result<(MatchControl, Settings), String> {
        // Refused before it is looked up (or written back in an error).
        chessclock_core::limits::check_chars(
            "the time control",
            text,
            chessclock_core::limits::MAX_CONTROL,
        )?;
        self.resolve_at_depth(text.trim(), 0)
    }

    fn resolve_at_depth(
        &self,
        text: &str,
        depth: usize,
    ) -> Result<(MatchControl, Settings), String> {
        // a preset may name another preset; a cycle must end in an error
        if depth > 8 {
            return Err(format!(
                "preset `{text}`: presets refer to each other in a cycle"
            ));
        }
        match self.preset(text) {
            Some(ControlSpec::Table(table)) => table
                .resolve(self.settings())
                .map_err(|e| format!("preset `{text}`: {e}")),
            Some(ControlSpec::Notation(inner)) => {
                if inner.trim() != text && self.preset(inner.trim()).is_some() {
                    return self.resolve_at_depth(inner.trim(), depth + 1);
                }
                let control = timecontrol::parse(&inner)
                    .map_err(|e| format!("preset `{text}` = `{inner}`: {e}"))?;
                Ok((MatchControl::same(control), self.settings()))
            }
            None => match timecontrol::parse(text) {
                Ok(control) => Ok((MatchControl::same(control), self.settings())),
                Err(e) => Err(format!(
                    "`{text}` is neither a preset ({}) nor a time control: {e}",
                    self.preset_names().join(", ")
                )),
            },
        }
    }
}
