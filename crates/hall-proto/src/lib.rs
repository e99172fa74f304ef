//! The hall's protocol: what the daemons (`chessclockd`, one per Pi) and the
//! hub (`chessclock-hall`) say to each other over the event's MQTT broker.
//!
//! * [`message`]: the topics and JSON payloads (states, events, replies),
//!   pure;
//! * [`command`]: the arbiters' commands and how a payload is read;
//! * [`page`]: the largest payload and the pages of a `history` read;
//! * [`broker`]: a broker's address and what a name may be in a topic;
//! * `client` (feature `mqtt`): the MQTT client's options both sides
//!   connect with.
//!
//! Promises: the default build depends on serde and the core's contract
//! only, so anything that speaks the hall's language can use it without an
//! MQTT client; nothing here panics on a payload from the broker.

pub mod broker;
#[cfg(feature = "mqtt")]
pub mod client;
pub mod command;
pub mod message;
pub mod page;
