//! `chessclock-hall`, the hub: one per event. It follows every board of a
//! hall on the event's MQTT broker and serves the arbiters' page, the
//! spectators' page, a live event stream, the round's PGN and results, and
//! can push the round to a lichess broadcast.
//!
//! The rooms, each importing only those listed before it:
//! * [`pairings`], [`results`]: the round's pairings (TRF16, TRF26, CSV;
//!   its byes) and its results as TRF16, TRF26 and Vega `.res`, pure;
//! * [`event`]: the event's store (SQLite), pure of the rest;
//! * [`broadcast`]: the broadcast's delay at the source (every board's
//!   states with their instants), pure;
//! * [`round`]: the round's desk, its PGN, its exports (results, bulletins)
//!   reconciled with the boards' records, its routes and the lichess push,
//!   over any [`round::RoundSource`];
//! * [`picture`]: the pictures drawn by code (a card's mini board), pure;
//! * [`auth`]: the arbiters' password file, sessions, failed logins;
//! * [`hub`]: what the hub knows, kept from the broker; the round's source;
//! * [`page`]: the pages and the arbiters' API;
//! * [`commands`]: the arbiters' commands, one board's or every board's;
//! * [`gate`]: who may read live data, and every answer's headers;
//! * [`shed`]: the connections: their cap, timeouts and shedding;
//! * [`desk`]: the event desk's page and API (load, review, send, close);
//! * [`board`]: a board's page: its record, chart and time machine;
//! * [`http`]: the routes, served.
//!
//! Promises: the hub depends on neither zbus, the daemon's store nor the
//! serial stack (it talks to the daemons through the broker only, in the
//! hall's protocol, `chessclock-hall-proto`; its own SQLite file keeps the
//! event); nothing it takes from the broker or a browser
//! can make it panic.

pub mod auth;
pub mod board;
pub mod broadcast;
pub mod commands;
pub mod desk;
pub mod event;
pub mod gate;
pub mod http;
pub mod hub;
pub mod page;
pub mod pairings;
pub mod picture;
pub mod results;
pub mod round;
pub mod shed;
pub mod skim;
