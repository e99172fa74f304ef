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
//! it, never a panic: a credentials file that is not TOML names
//! `FILE:LINE:COLUMN` (columns in characters, as the daemon's config errors
//! do); a CA file must hold at least one PEM certificate that TLS can use,
//! so a garbage CA is refused here, when the options are made (`chessclockd
//! --check-config` and start-up), not at every connection attempt.

use std::path::Path;
use std::time::Duration;

use rumqttc::v5::MqttOptions;
use rumqttc::{TlsConfiguration, Transport};
use serde::Deserialize;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::RootCertStore;

use crate::broker::BrokerAddress;

/// The largest MQTT packet a hall client takes, told to the broker at every
/// connection: the broker drops a larger message for this client (the link
/// stays up). Above the broker's own limit (`max_packet_size` 1 MiB in the
/// snippet `scripts/hall-credentials` writes) and well above the largest
/// payload the hall publishes ([`crate::page::MAX_PAYLOAD`]): what lies
/// between reaches the client, which drops and counts it.
pub const MAX_PACKET: usize = 4 * 1024 * 1024;

/// The least keepalive the MQTT 5 client takes (rumqttc refuses less): a
/// shorter one asked for is this.
pub const MIN_KEEPALIVE_SECONDS: u16 = 5;

/// What a credentials file must say.
const CREDENTIALS_FORM: &str = "expected `username = \"...\"` and `password = \"...\"`, \
                                as scripts/hall-credentials writes them";

/// The `[hall] credentials` file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    username: String,
    password: String,
}

/// Reads a credentials file (`username = "..."`, `password = "..."`).
fn read_credentials(path: &Path) -> anyhow::Result<Credentials> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        anyhow::anyhow!(
            "{}: cannot read the credentials file: {error}",
            path.display()
        )
    })?;
    let credentials: Credentials = toml::from_str(&text).map_err(|error| {
        let at = match error.span() {
            Some(span) => {
                let (line, column) = line_column(&text, span.start);
                format!("{}:{line}:{column}", path.display())
            }
            None => path.display().to_string(),
        };
        anyhow::anyhow!(
            "{at}: the credentials file: {} ({CREDENTIALS_FORM})",
            error.message().trim()
        )
    })?;
    if credentials.username.is_empty() {
        anyhow::bail!(
            "{}: the credentials file: the username is empty ({CREDENTIALS_FORM})",
            path.display()
        );
    }
    Ok(credentials)
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Reads a CA file and checks it as the TLS connection will use it: PEM,
/// with at least one certificate that can be a trust anchor.
fn read_ca(path: &Path) -> anyhow::Result<Vec<u8>> {
    let pem = std::fs::read(path)
        .map_err(|error| anyhow::anyhow!("{}: cannot read the CA file: {error}", path.display()))?;
    let mut certificates = Vec::new();
    for item in CertificateDer::pem_slice_iter(&pem) {
        let certificate = item.map_err(|error| {
            anyhow::anyhow!("{}: the CA file is not valid PEM: {error}", path.display())
        })?;
        certificates.push(certificate);
    }
    let found = certificates.len();
    let mut store = RootCertStore::empty();
    let (_, unusable) = store.add_parsable_certificates(certificates);
    if found == 0 {
        anyhow::bail!(
            "{}: the CA file holds no certificate (expected a PEM \
             `-----BEGIN CERTIFICATE-----` block: the hall's ca.pem from scripts/hall-credentials)",
            path.display()
        );
    }
    if store.is_empty() || unusable > 0 {
        anyhow::bail!(
            "{}: the CA file: {unusable} of its {found} certificate(s) cannot be read as X.509",
            path.display()
        );
    }
    Ok(pem)
}

/// Reads and checks the credentials and CA files as [`client_options`]
/// does, without making options (what `--check-config` runs).
pub fn check_files(credentials: Option<&Path>, ca: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = credentials {
        read_credentials(path)?;
    }
    if let Some(path) = ca {
        read_ca(path)?;
    }
    Ok(())
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
        .set_max_packet_size(Some(u32::try_from(MAX_PACKET).unwrap_or(u32::MAX)));
    if let Some(path) = credentials {
        let credentials = read_credentials(path)?;
        options.set_credentials(credentials.username, credentials.password);
    }
    if address.tls {
        let Some(path) = ca else {
            anyhow::bail!("the mqtts:// broker {broker} needs a CA file");
        };
        let ca = read_ca(path)?;
        options.set_transport(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth: None,
        }));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test fails by panicking

    use super::*;

    fn file(dir: &Path, name: &str, text: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn error(result: anyhow::Result<()>) -> String {
        format!("{:#}", result.unwrap_err())
    }

    #[test]
    fn a_credentials_file_is_read_or_refused_with_its_place() {
        let dir = std::env::temp_dir().join(format!("hall-proto-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = file(&dir, "good.toml", b"username = \"pi1\"\npassword = \"x\"\n");
        check_files(Some(&good), None).unwrap();

        let missing = dir.join("missing.toml");
        let text = error(check_files(Some(&missing), None));
        assert!(
            text.starts_with(&format!("{}: cannot read", missing.display())),
            "{text}"
        );

        let text = error(check_files(Some(&dir), None));
        assert!(
            text.starts_with(&format!("{}: cannot read", dir.display())),
            "{text}"
        );

        let empty = file(&dir, "empty.toml", b"");
        let text = error(check_files(Some(&empty), None));
        assert!(text.starts_with(&format!("{}", empty.display())), "{text}");
        assert!(text.contains("username"), "{text}");

        let malformed = file(&dir, "bad.toml", b"username = \"pi1\"\npassword = x\"\n");
        let text = error(check_files(Some(&malformed), None));
        assert!(
            text.starts_with(&format!("{}:2:12:", malformed.display())),
            "{text}"
        );

        let blank = file(&dir, "blank.toml", b"username = \"\"\npassword = \"x\"\n");
        let text = error(check_files(Some(&blank), None));
        assert!(text.contains("the username is empty"), "{text}");

        let garbage = file(&dir, "ca.pem", b"not a certificate\n");
        let text = error(check_files(None, Some(&garbage)));
        assert!(
            text.starts_with(&format!(
                "{}: the CA file holds no certificate",
                garbage.display()
            )),
            "{text}"
        );
        let broken = file(
            &dir,
            "broken.pem",
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        );
        let text = error(check_files(None, Some(&broken)));
        assert!(
            text.starts_with(&format!("{}: the CA file", broken.display())),
            "{text}"
        );
        let options = client_options(
            "mqtts://127.0.0.1",
            "id".into(),
            Some(&good),
            Some(&garbage),
            5,
        );
        assert!(format!("{:#}", options.unwrap_err()).contains("holds no certificate"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
