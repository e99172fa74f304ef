//! `[hall]`: the event's MQTT broker (see `crate::hall`): the table, the
//! broker's address and what a topic level may be come from
//! `chessclock_hall_proto::broker`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

// A broker's address and a topic level's rules are the hall's protocol,
// shared with the hub.
pub use chessclock_hall_proto::broker::{check_topic_level, BrokerAddress};

/// `[hall]`: publish every board's state and events to the event's MQTT
/// broker and take the arbiters' commands from it (see [`crate::hall`]).
/// Absent: off. Changes need a daemon restart (SIGHUP keeps the running
/// connection).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct HallConfig {
    /// `mqtt://HOST[:PORT]` (port 1883) or `mqtts://HOST[:PORT]` (TLS,
    /// port 8883; give `ca`).
    #[serde(default = "default_broker")]
    pub broker: String,
    /// The hall's name: the second level of every topic
    /// (`chessclock/<name>/...`).
    pub name: String,
    /// This host's name in `chessclock/<hall>/host/<host>/online` and the
    /// MQTT client id (default: the system's host name).
    #[serde(default)]
    pub host: Option<String>,
    /// A TOML file with `username` and `password` for the broker (keep it
    /// readable by the daemon only).
    #[serde(default)]
    pub credentials: Option<PathBuf>,
    /// The PEM file of the CA that signed the broker's certificate
    /// (`mqtts://` only).
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// MQTT keepalive in seconds (1 ..= 3600): the broker publishes this
    /// host's last will ("offline") within about 1.5 x this after the host
    /// dies.
    #[serde(default = "default_keepalive")]
    pub keepalive_seconds: u16,
    /// Messages (events, replies) kept while the broker is away; beyond it
    /// the oldest are dropped, counted and reported on reconnect. The
    /// boards' states are never dropped (the latest of each is kept).
    #[serde(default = "default_hall_buffer")]
    pub buffer: usize,
}

fn default_broker() -> String {
    "mqtt://127.0.0.1:1883".to_owned()
}

fn default_keepalive() -> u16 {
    5
}

fn default_hall_buffer() -> usize {
    1024
}
