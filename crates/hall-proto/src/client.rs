//! The MQTT client's options, the same for the daemon's hall task and the
//! hub: a broker URL (`mqtt://` or `mqtts://` with the CA file), a
//! credentials file, a keepalive; a clean session; packets up to
//! [`MAX_PACKET`].
//!
//! Promises: a bad URL, an unreadable or malformed file is an error naming
//! it, never a panic.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use rumqttc::{MqttOptions, TlsConfiguration, Transport};
use serde::Deserialize;

use crate::broker::BrokerAddress;

/// The largest MQTT packet either side sends or takes.
pub const MAX_PACKET: usize = 1024 * 1024;

/// The `[hall] credentials` file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    username: String,
    password: String,
}

/// Reads a credentials file (`username = "..."`, `password = "..."`).
fn read_credentials(path: &Path) -> anyhow::Result<Credentials> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("the credentials file: cannot read {}", path.display()))?;
    toml::from_str(&text).map_err(|error| {
        anyhow::anyhow!(
            "the credentials file {}: {} (expected `username = \"...\"` and `password = \"...\"`)",
            path.display(),
            error.message().trim()
        )
    })
}

/// The MQTT client's options for a broker URL (`mqtt://` or `mqtts://`
/// with the CA file), a credentials file and a keepalive: a clean
/// session, packets up to 1 MiB.
pub fn client_options(
    broker: &str,
    client_id: String,
    credentials: Option<&Path>,
    ca: Option<&Path>,
    keepalive_seconds: u16,
) -> anyhow::Result<MqttOptions> {
    let address = BrokerAddress::parse(broker).map_err(anyhow::Error::msg)?;
    let mut options = MqttOptions::new(client_id, address.host.clone(), address.port);
    options
        .set_keep_alive(Duration::from_secs(u64::from(keepalive_seconds.max(1))))
        .set_clean_session(true)
        .set_max_packet_size(MAX_PACKET, MAX_PACKET);
    if let Some(path) = credentials {
        let credentials = read_credentials(path)?;
        options.set_credentials(credentials.username, credentials.password);
    }
    if address.tls {
        let Some(path) = ca else {
            anyhow::bail!("the mqtts:// broker {broker} needs a CA file");
        };
        let ca = std::fs::read(path)
            .with_context(|| format!("the CA file: cannot read {}", path.display()))?;
        options.set_transport(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth: None,
        }));
    }
    Ok(options)
}
