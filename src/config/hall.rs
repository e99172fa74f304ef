//! `[hall]`: the event's MQTT broker (see `crate::hall`): the table, the
//! broker's address, and what a topic level may be.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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

/// Where a `[hall] broker` URL points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerAddress {
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

impl BrokerAddress {
    /// Reads `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]` (an IPv6
    /// address in brackets).
    pub fn parse(url: &str) -> Result<BrokerAddress, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("mqtts://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("mqtt://") {
            (false, rest)
        } else {
            return Err(format!(
                "broker `{url}` must start with mqtt:// or mqtts://"
            ));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let default_port = if tls { 8883 } else { 1883 };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("broker `{url}`: `[` without `]`"))?;
            match after {
                "" => (host, None),
                other => match other.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None => return Err(format!("broker `{url}`: expected `:PORT` after `]`")),
                },
            }
        } else {
            match rest.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            }
        };
        if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
            return Err(format!(
                "broker `{url}`: give a host name or address, then optionally :PORT \
                 (no user, path or query)"
            ));
        }
        let port = match port {
            None => default_port,
            Some(text) => match text.parse::<u16>() {
                Ok(port) if port > 0 => port,
                _ => return Err(format!("broker `{url}`: port `{text}` is not 1 ..= 65535")),
            },
        };
        Ok(BrokerAddress {
            host: host.to_owned(),
            port,
            tls,
        })
    }
}

/// Why a hall or host name cannot be a topic level, if it cannot.
pub fn check_topic_level(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    if name.len() > 64 {
        return Err(format!("{what} `{name}` is longer than 64 bytes"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| matches!(c, '/' | '+' | '#') || c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "{what} `{name}` cannot be an MQTT topic level (found {bad:?}): \
             no `/`, `+`, `#`, spaces or control characters"
        ));
    }
    Ok(())
}
