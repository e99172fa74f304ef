//! Who sits at each hall board: its number in the round and the players
//! its pairing names, for the arbiters' page (the hub's `seats` message).
//!
//! Promises: a board's number and players are the round's own (the same
//! assignment of pairing boards to hall boards as the review and the
//! exports, [`super::seats`]); a board off the pairings keeps the number
//! its id gives only while no pairings are loaded, and names nobody.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{lock, seats, Desk};

impl Desk {
    /// Each board of `boards` (id -> state payload) that has a number in
    /// the round or a pairing: `{"number", "white", "black"}` (`null` where
    /// not known).
    pub fn seating(&self, boards: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
        let setup = lock(&self.setup);
        seats(&setup, boards)
            .into_iter()
            .filter(|seat| seat.number.is_some() || seat.pairing.is_some())
            .map(|seat| {
                let name = |name: Option<&str>| {
                    name.filter(|n| !n.trim().is_empty())
                        .map_or(Value::Null, |n| json!(n))
                };
                (
                    seat.id.to_owned(),
                    json!({
                        "number": seat.number,
                        "white": name(seat.pairing.map(|p| p.white.name.as_str())),
                        "black": name(seat.pairing.map(|p| p.black.name.as_str())),
                    }),
                )
            })
            .collect()
    }

    /// The round's boards among `boards` (those a pairing is given to):
    /// the public feed's; `None` without pairings (every board is then).
    pub fn members(
        &self,
        boards: &BTreeMap<String, Value>,
    ) -> Option<std::collections::BTreeSet<String>> {
        let setup = lock(&self.setup);
        setup.pairings.as_ref()?;
        Some(
            seats(&setup, boards)
                .into_iter()
                .filter(|seat| seat.pairing.is_some())
                .map(|seat| seat.id.to_owned())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use crate::pairings::Pairings;

    #[test]
    fn each_board_gets_its_pairing_s_number_and_players() {
        let desk = Desk::default();
        let mut boards = BTreeMap::new();
        for id in ["b1", "b2", "spare"] {
            boards.insert(id.to_owned(), json!({"board": id}));
        }
        // Without pairings: the number an id ends in, nobody named.
        let seating = desk.seating(&boards);
        assert_eq!(
            seating["b2"],
            json!({"number": 2, "white": null, "black": null})
        );
        assert!(!seating.contains_key("spare"));
        let pairings =
            Pairings::parse("board,white,black\n1,\"Alpha, Anna\",\"Beta, Bob\"\n", 3).unwrap();
        desk.set_pairings(pairings);
        let seating = desk.seating(&boards);
        assert_eq!(
            seating["b1"],
            json!({"number": 1, "white": "Alpha, Anna", "black": "Beta, Bob"})
        );
        assert!(!seating.contains_key("b2"), "off the pairings: {seating:?}");
    }
}
