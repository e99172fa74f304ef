//! The players of a board's game, as its PGN tags name them: what every
//! reader of the board (`chessclockctl status` and `watch`, the hall's page)
//! shows beside the clocks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The players as the game's PGN tags `White` and `Black` name them (from
/// the configuration or `set-tags`, e.g. the hub's pairings); `None` where
/// a tag is unset, empty or PGN's unknown `?`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Players {
    pub white: Option<String>,
    pub black: Option<String>,
}

impl Players {
    /// The players named by `tags` (a game's PGN tags).
    pub fn from_tags(tags: &BTreeMap<String, String>) -> Players {
        let name = |tag: &str| {
            tags.get(tag)
                .map(|v| v.trim())
                .filter(|v| !v.is_empty() && *v != "?")
                .map(str::to_owned)
        };
        Players {
            white: name("White"),
            black: name("Black"),
        }
    }

    /// Whether neither player is named.
    pub fn is_empty(&self) -> bool {
        self.white.is_none() && self.black.is_none()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn unknown_and_empty_names_are_none() {
        let mut tags = BTreeMap::new();
        tags.insert("White".to_owned(), " Alpha, Anna ".to_owned());
        tags.insert("Black".to_owned(), "?".to_owned());
        let players = Players::from_tags(&tags);
        assert_eq!(players.white.as_deref(), Some("Alpha, Anna"));
        assert_eq!(players.black, None);
        assert!(!players.is_empty());
        assert!(Players::from_tags(&BTreeMap::new()).is_empty());
    }
}
