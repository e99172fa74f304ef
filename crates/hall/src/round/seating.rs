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
    /// not known), and `white_rating`, `white_title`, `black_rating`,
    /// `black_title` where the pairings give them.
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
                let mut seat_value = json!({
                    "number": seat.number,
                    "white": name(seat.pairing.map(|p| p.white.name.as_str())),
                    "black": name(seat.pairing.map(|p| p.black.name.as_str())),
                });
                // Ratings and titles only where the pairings give them.
                if let Some(pairing) = seat.pairing {
                    for (side, player) in [("white", &pairing.white), ("black", &pairing.black)] {
                        if let Some(rating) = player.rating {
                            seat_value[format!("{side}_rating")] = json!(rating);
                        }
                        if let Some(title) =
                            player.title.as_deref().filter(|t| !t.trim().is_empty())
                        {
                            seat_value[format!("{side}_title")] = json!(title.trim());
                        }
                    }
                }
                (seat.id.to_owned(), seat_value)
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

    /// Issue 31 item 1: the cards show the pairings' ratings and titles.
    #[test]
    fn ratings_and_titles_come_where_the_pairings_give_them() {
        let desk = Desk::default();
        let mut boards = BTreeMap::new();
        boards.insert("b1".to_owned(), json!({"board": "b1"}));
        boards.insert("b3".to_owned(), json!({"board": "b3"}));
        let trf = include_str!("../../../../tests/data/hall/round2.trf");
        desk.set_pairings(crate::pairings::parse_trf(trf, 2).unwrap());
        let seating = desk.seating(&boards);
        assert_eq!(
            seating["b1"],
            json!({"number": 1, "white": "Beta, Bert", "black": "Alpha, Anna",
                   "white_rating": 2500, "white_title": "IM",
                   "black_rating": 2650, "black_title": "GM"})
        );
        assert_eq!(
            seating["b3"],
            json!({"number": 3, "white": "Delta, Dan", "black": "Gamma, Gina",
                   "white_rating": 2300, "black_rating": 2400})
        );
    }
}
