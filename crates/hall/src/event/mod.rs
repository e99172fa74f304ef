//! The event the hub keeps: its players, its rounds and each game's result
//! and final PGN, in [`store`] (SQLite in the hub's state directory, or in
//! memory for a hub without one). The round's desk
//! ([`crate::round::Desk`]) writes it as the boards' results arrive and
//! reads it for every round's exports.

pub mod store;
