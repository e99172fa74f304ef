//! The MQTT client's options, the same for the daemon's hall task and the
//! hub: MQTT 5, a broker URL (`mqtt://` or `mqtts://` with the CA file), a
//! credentials file, a keepalive; a clean start; packets up to
//! [`MAX_PACKET`].
//!
//! Why MQTT 5: its CONNECT tells the broker the largest packet this client
//! takes, and a broker keeps to it by dropping a larger message for this
//! client alone (mosquitto logs `Dropping too large outgoing PUBLISH`);
//! with MQTT 3.1.1 the client's only defence is to close the connection,
//! and a retained oversize message closed it again at every reconnection,
//! for good. And its subscriptions can ask for the retain flag as
//! published, so a daemon sees that a command was retained even when it
//! arrives live (MQTT 3.1.1 clears the flag then).
//!
//! Promises: a bad URL, an unreadable or malformed file is an error naming
//! it, never a panic.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use rumqttc::v5::MqttOptions;
use rumqttc::{TlsConfiguration, Transport};
use serde::Deserialize;

use crate::broker::BrokerAddress;

/// The largest MQTT packet a hall client takes, told to the broker at every
/// connection: the broker drops a larger message for this client (the link
/// stays up). Above the broker's own limit (`max_packet_size` 1 MiB in the
/// snippet `scripts/hall-credentials` writes) and well above the largest
/// payload the hall publishes ([`crate::message::MAX_PAYLOAD`]): what lies
/// between reaches the client, which drops and counts it.
pub const MAX_PACKET: usize = 4 * 1024 * 1024;

/// The least keepalive the MQTT 5 client takes (rumqttc refuses less): a
/// shorter one asked for is this.
pub const MIN_KEEPALIVE_SECONDS: u16 = 5;

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
/// with the CA file), a credentials file and a keepalive (at least
/// [`MIN_KEEPALIVE_SECONDS`]): MQTT 5, a clean start, packets up to
/// [`MAX_PACKET`].
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
        .set_keep_alive(Duration::from_secs(u64::from(
            keepalive_seconds.max(MIN_KEEPALIVE_SECONDS),
        )))
        .set_clean_start(true)
        .set_max_packet_size(Some(MAX_PACKET as u32));
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
