//! Where the hall's broker is and what a name may be in a topic: the rules
//! the daemon's `[hall]` table and the hub's command line share.
//!
//! Promises: pure; every refusal names the value and the forms taken.

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
