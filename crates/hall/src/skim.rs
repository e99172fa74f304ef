//! What the hub reads of every board state it takes, read from the state's
//! JSON text without building its tree: building and dropping a
//! `serde_json::Value` tree for each state was over half of the hub's time
//! at a 1,000-board hall's peak (BENCHMARKS.md, "Hall at scale"); the tree
//! is now made only when a reader asks for it (`Known::boards`).
//!
//! Promises: [`skim`] gives `None` exactly when the text is not JSON (the
//! tree would be unreadable), and otherwise each field is what the same
//! path of the parsed tree gives, whatever the payload's shape (a field of
//! another type reads as absent, a repeated key as its last value, as in
//! the tree): `host` is `payload["host"].as_str()`, `snapshot_wall_ms`
//! `payload["snapshot_wall_ms"].as_i64()`, `started`
//! `payload["snapshot"]["started"] == true`, `has_result`
//! `payload["state"]["result"].is_object()`, `pgn`
//! `payload["pgn"].as_str()`, `fen`
//! `payload["state"]["eboard"]["fen"].as_str()`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The parts of a state the hub reads as it takes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skim<'a> {
    pub host: Option<Cow<'a, str>>,
    pub snapshot_wall_ms: Option<i64>,
    pub started: bool,
    pub has_result: bool,
    pub pgn: Option<Cow<'a, str>>,
    pub fen: Option<Cow<'a, str>>,
}

/// Skims a state's JSON text; `None` if it is not JSON.
pub fn skim(text: &str) -> Option<Skim<'_>> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let got = Pick(Want::Top).deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(match got {
        Got::Top(skim) => skim,
        _ => Skim::default(),
    })
}

/// The keys the skim looks at, read without copying them.
#[derive(Clone, Copy)]
enum Key {
    Host,
    SnapshotWallMs,
    Snapshot,
    State,
    Pgn,
    Started,
    Result,
    Eboard,
    Fen,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "host" => Key::Host,
                    "snapshot_wall_ms" => Key::SnapshotWallMs,
                    "snapshot" => Key::Snapshot,
                    "state" => Key::State,
                    "pgn" => Key::Pgn,
                    "started" => Key::Started,
                    "result" => Key::Result,
                    "eboard" => Key::Eboard,
                    "fen" => Key::Fen,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// What is wanted of a value (of any JSON type: what does not match is
/// passed over unbuilt).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Nothing: passed over (read through as the tree would be, so that
    /// it is refused exactly where the tree would be, e.g. too deep).
    Skip,
    /// A string.
    Text,
    /// An integer that fits an `i64`.
    Integer,
    /// `true`.
    True,
    /// Whether it is an object.
    IsObject,
    /// `snapshot`: its `started` is `true`.
    Snapshot,
    /// `eboard`: its `fen`.
    Eboard,
    /// `state`: whether its `result` is an object, and the e-board's `fen`.
    State,
    /// The whole state.
    Top,
}

/// What was found.
enum Got<'de> {
    Nothing,
    Text(Cow<'de, str>),
    Integer(i64),
    Flag(bool),
    State(bool, Option<Cow<'de, str>>),
    Top(Skim<'de>),
}

impl<'de> Got<'de> {
    fn text(self) -> Option<Cow<'de, str>> {
        match self {
            Got::Text(text) => Some(text),
            _ => None,
        }
    }

    fn flag(self) -> bool {
        matches!(self, Got::Flag(true))
    }
}

struct Pick(Want);

impl<'de> DeserializeSeed<'de> for Pick {
    type Value = Got<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Got<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pick {
    type Value = Got<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Got<'de>, E> {
        Ok(if self.0 == Want::True {
            Got::Flag(b)
        } else {
            Got::Nothing
        })
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Got<'de>, E> {
        Ok(if self.0 == Want::Integer {
            Got::Integer(n)
        } else {
            Got::Nothing
        })
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Got<'de>, E> {
        Ok(match i64::try_from(n) {
            Ok(n) if self.0 == Want::Integer => Got::Integer(n),
            _ => Got::Nothing,
        })
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Got<'de>, E> {
        Ok(Got::Nothing)
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Got<'de>, E> {
        Ok(if self.0 == Want::Text {
            Got::Text(Cow::Borrowed(text))
        } else {
            Got::Nothing
        })
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Got<'de>, E> {
        Ok(if self.0 == Want::Text {
            Got::Text(Cow::Owned(text.to_owned()))
        } else {
            Got::Nothing
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Got<'de>, E> {
        Ok(Got::Nothing)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Got<'de>, A::Error> {
        while seq.next_element_seed(Pick(Want::Skip))?.is_some() {}
        Ok(Got::Nothing)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Got<'de>, A::Error> {
        // A repeated key: its last value counts, as in the tree.
        let mut skim = Skim::default();
        while let Some(key) = map.next_key::<Key>()? {
            let want = match (self.0, key) {
                (Want::Top, Key::Host | Key::Pgn) => Want::Text,
                (Want::Top, Key::SnapshotWallMs) => Want::Integer,
                (Want::Top, Key::Snapshot) => Want::Snapshot,
                (Want::Top, Key::State) => Want::State,
                (Want::Snapshot, Key::Started) => Want::True,
                (Want::State, Key::Result) => Want::IsObject,
                (Want::State, Key::Eboard) => Want::Eboard,
                (Want::Eboard, Key::Fen) => Want::Text,
                _ => {
                    map.next_value_seed(Pick(Want::Skip))?;
                    continue;
                }
            };
            let got = map.next_value_seed(Pick(want))?;
            match (self.0, key) {
                (Want::Top, Key::Host) => skim.host = got.text(),
                (Want::Top, Key::Pgn) => skim.pgn = got.text(),
                (Want::Top, Key::SnapshotWallMs) => {
                    skim.snapshot_wall_ms = match got {
                        Got::Integer(n) => Some(n),
                        _ => None,
                    }
                }
                (Want::Top, Key::Snapshot) | (Want::Snapshot, Key::Started) => {
                    skim.started = got.flag();
                }
                (Want::Top, Key::State) => {
                    (skim.has_result, skim.fen) = match got {
                        Got::State(has_result, fen) => (has_result, fen),
                        _ => (false, None),
                    };
                }
                (Want::State, Key::Result) => skim.has_result = got.flag(),
                (Want::State, Key::Eboard) | (Want::Eboard, Key::Fen) => skim.fen = got.text(),
                _ => {}
            }
        }
        Ok(match self.0 {
            Want::Top => Got::Top(skim),
            Want::Snapshot => Got::Flag(skim.started),
            Want::State => Got::State(skim.has_result, skim.fen),
            Want::Eboard => skim.fen.map_or(Got::Nothing, Got::Text),
            Want::IsObject => Got::Flag(true),
            Want::Skip | Want::Text | Want::Integer | Want::True => Got::Nothing,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use serde_json::{json, Value};

    /// What the tree says of the same paths.
    fn from_tree(value: &Value) -> Skim<'static> {
        let text = |v: &Value| v.as_str().map(|s| Cow::Owned(s.to_owned()));
        Skim {
            host: text(&value["host"]),
            snapshot_wall_ms: value["snapshot_wall_ms"].as_i64(),
            started: value["snapshot"]["started"] == true,
            has_result: value["state"]["result"].is_object(),
            pgn: text(&value["pgn"]),
            fen: text(&value["state"]["eboard"]["fen"]),
        }
    }

    #[test]
    fn the_skim_reads_what_the_tree_reads_whatever_the_shape() {
        let texts = [
            json!({"host": "pi1", "snapshot_wall_ms": 1_796_061_600_000_i64,
                   "snapshot": {"started": true, "flags": [1, {"a": [null]}]},
                   "state": {"result": {"result": "1-0"}, "eboard": {"fen": "8/8 w", "x": 1}},
                   "pgn": "[Round \"1.1\"]\n1. e4 *"})
            .to_string(),
            json!({"host": 5, "snapshot_wall_ms": 1.5, "snapshot": [true],
                   "state": {"result": "1-0", "eboard": "x"}, "pgn": null})
            .to_string(),
            json!({"snapshot_wall_ms": u64::MAX, "snapshot": {"started": "true"},
                   "state": null})
            .to_string(),
            json!({"snapshot_wall_ms": -5, "state": {"eboard": {"fen": 7}}}).to_string(),
            json!([1, 2, {"host": "pi1"}]).to_string(),
            "\"pi1\"".to_owned(),
            "null".to_owned(),
            // Escapes in keys and values; a repeated key counts its last.
            r#"{"ho\u0073t": "p\"i1", "host": "pi2", "snapshot": {"started": true},
                "snapshot": {"started": false}, "pgn": "a\nb"}"#
                .to_owned(),
        ];
        for text in &texts {
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(skim(text), Some(from_tree(&tree)), "{text}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_none() {
        for text in [
            "",
            "{",
            "{\"host\": }",
            "{} x",
            "nul",
            "{\"a\": 1,}",
            "\u{0}",
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err());
            assert_eq!(skim(text), None, "{text:?}");
        }
        // As deep as the tree reads, and no deeper.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            skim(&deep).is_some(),
            serde_json::from_str::<Value>(&deep).is_ok()
        );
    }
}
