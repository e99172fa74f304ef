//! The lichess push of the round's PGN (see the parent module's promises):
//! one request at a time, at most [`MAX_GAMES`] games each, the latest PGN,
//! retried with a doubling wait.

use super::*;
/// Where the round goes: a lichess broadcast round.
#[derive(Clone)]
pub struct PushTarget {
    /// `https://lichess.org` (or a stand-in's `http://127.0.0.1:PORT`).
    base: axum::http::Uri,
    round: String,
    token: String,
}

impl std::fmt::Debug for PushTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        write!(f, "PushTarget({})", self.url())
    }
}

impl PushTarget {
    /// Checks the base URL and the round id and reads the token file (its
    /// first line; a token with scope `study:write`).
    pub fn new(base: &str, round: &str, token_file: &Path) -> anyhow::Result<PushTarget> {
        let uri: axum::http::Uri = base
            .trim_end_matches('/')
            .parse()
            .map_err(|error| anyhow::anyhow!("--lichess-url `{base}`: {error}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            anyhow::bail!("--lichess-url `{base}`: expected https://HOST[:PORT] (or http://)");
        }
        if round.is_empty() || !round.chars().all(|c| c.is_ascii_alphanumeric()) {
            anyhow::bail!(
                "--lichess-round `{round}`: expected the broadcast round's id (letters and \
                 digits, as in its URL)"
            );
        }
        let text = std::fs::read_to_string(token_file).with_context(|| {
            format!(
                "the lichess token file: cannot read {}",
                token_file.display()
            )
        })?;
        let token = text.lines().next().unwrap_or_default().trim().to_owned();
        if token.is_empty() || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            anyhow::bail!(
                "the lichess token file {}: its first line must be the token (scope study:write)",
                token_file.display()
            );
        }
        Ok(PushTarget {
            base: uri,
            round: round.to_owned(),
            token,
        })
    }

    /// The push endpoint.
    pub fn url(&self) -> String {
        format!(
            "{}://{}{}{}",
            self.base.scheme_str().unwrap_or("https"),
            self.base.authority().map(|a| a.as_str()).unwrap_or(""),
            self.base.path().trim_end_matches('/'),
            self.path_tail()
        )
    }

    fn path_tail(&self) -> String {
        format!("/api/broadcast/round/{}/push", self.round)
    }
}

/// What the push has done, for `/broadcast.json` and the log.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PushStatus {
    pub enabled: bool,
    /// The push endpoint (no token).
    pub url: Option<String>,
    /// `idle`, `pushing`, `ok`, `retrying`, `refused`.
    pub state: String,
    pub requests_ok: u64,
    pub requests_failed: u64,
    /// Games in the round at the last push.
    pub games: usize,
    pub last_ok_wall_ms: Option<i64>,
    pub last_attempt_wall_ms: Option<i64>,
    pub last_http_status: Option<u16>,
    pub last_error: Option<String>,
    /// The games the server refused in the last answer (`White - Black:
    /// error`).
    pub game_errors: Vec<String>,
    pub next_try_wall_ms: Option<i64>,
}

/// One answer.
struct Answer {
    status: u16,
    retry_after: Option<Duration>,
    body: String,
}

/// How to reach the server.
enum Connector {
    Plain,
    Tls(tokio_rustls::TlsConnector),
}

/// A TLS client with the system's trusted CAs (Debian's
/// `ca-certificates`) and the ring provider.
fn tls_connector() -> anyhow::Result<tokio_rustls::TlsConnector> {
    use tokio_rustls::rustls;
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        anyhow::bail!("no trusted CA certificates on this system (install ca-certificates)");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| anyhow::anyhow!("TLS: {error}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// Sends one request over `stream` and reads the answer.
async fn exchange<S>(
    stream: S,
    request: axum::http::Request<http_body_util::Full<Bytes>>,
) -> Result<Answer, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use http_body_util::BodyExt;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|error| format!("HTTP: {error}"))?;
    let driver = tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| format!("HTTP: {error}"));
    let answer = match response {
        Ok(response) => {
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map(|body| String::from_utf8_lossy(&body.to_bytes()).into_owned())
                .unwrap_or_default();
            Ok(Answer {
                status,
                retry_after,
                body,
            })
        }
        Err(error) => Err(error),
    };
    driver.abort();
    answer
}

/// POSTs one PGN text to the push endpoint.
async fn post(target: &PushTarget, connector: &Connector, body: String) -> Result<Answer, String> {
    let host = target.base.host().unwrap_or_default().to_owned();
    let tls = matches!(connector, Connector::Tls(_));
    let port = target.base.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let path = format!(
        "{}{}",
        target.base.path().trim_end_matches('/'),
        target.path_tail()
    );
    let authority = target
        .base
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_else(|| host.clone());
    let request = axum::http::Request::post(path)
        .header(header::HOST, authority)
        .header(header::AUTHORIZATION, format!("Bearer {}", target.token))
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(
            header::USER_AGENT,
            concat!("chessclock-hall/", env!("CARGO_PKG_VERSION")),
        )
        .body(http_body_util::Full::new(Bytes::from(body)))
        .map_err(|error| format!("the request: {error}"))?;
    let work = async {
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|error| format!("cannot connect to {host}:{port}: {error}"))?;
        let _ = tcp.set_nodelay(true);
        match connector {
            Connector::Plain => exchange(tcp, request).await,
            Connector::Tls(tls) => {
                let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.clone())
                    .map_err(|error| format!("TLS: {host}: {error}"))?;
                let stream = tls
                    .connect(name, tcp)
                    .await
                    .map_err(|error| format!("TLS with {host}: {error}"))?;
                exchange(stream, request).await
            }
        }
    };
    tokio::time::timeout(REQUEST_TIMEOUT, work)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {REQUEST_TIMEOUT:?}")))
}

/// The games a 200 answer says were refused.
pub(super) fn refused_games(body: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    value["games"]
        .as_array()
        .map(|games| {
            games
                .iter()
                .filter_map(|game| {
                    let error = game["error"].as_str()?;
                    let tags = &game["tags"];
                    Some(format!(
                        "{} - {}: {error}",
                        tags["White"].as_str().unwrap_or("?"),
                        tags["Black"].as_str().unwrap_or("?")
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Starts pushing the round to `target` on every change, for good.
pub fn spawn_push(
    hub: Arc<impl RoundSource>,
    target: PushTarget,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let connector = match target.base.scheme_str() {
        Some("https") => Connector::Tls(tls_connector()?),
        _ => Connector::Plain,
    };
    {
        let mut status = hub.desk().push_status();
        status.enabled = true;
        status.url = Some(target.url());
        status.state = "idle".to_owned();
    }
    tracing::info!(url = %target.url(), "hub: pushing the round to lichess");
    Ok(tokio::spawn(push_loop(hub, target, connector)))
}

/// Why a push stopped.
enum Failure {
    /// Try again after the wait.
    Retry(Option<Duration>, String),
    /// The server refused this text: wait for a change.
    Refused(String),
}

async fn push_loop(hub: Arc<impl RoundSource>, target: PushTarget, connector: Connector) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let mut changes = hub.changes();
    // The requests the server last accepted (or refused for good).
    let mut done: BTreeMap<RequestKey, String> = BTreeMap::new();
    let mut wait = FIRST_RETRY;
    loop {
        let (games, bodies) = round_requests(&*hub);
        let mut failure = None;
        for (index, (key, body)) in bodies.iter().enumerate() {
            if done.get(key) == Some(body) {
                continue;
            }
            {
                let mut status = hub.desk().push_status();
                status.state = "pushing".to_owned();
                status.games = games;
                status.last_attempt_wall_ms = Some(hub.now_ms());
                status.next_try_wall_ms = None;
            }
            let count =
                body.matches("\n[Event ").count() + usize::from(body.starts_with("[Event "));
            let started = std::time::Instant::now();
            let answer = post(&target, &connector, body.clone()).await;
            let mut status = hub.desk().push_status();
            match answer {
                Ok(answer) if (200..300).contains(&answer.status) => {
                    status.requests_ok += 1;
                    status.last_ok_wall_ms = Some(hub.now_ms());
                    status.last_http_status = Some(answer.status);
                    status.last_error = None;
                    status.game_errors = refused_games(&answer.body);
                    for error in &status.game_errors {
                        tracing::warn!(%error, "hub: lichess refused a game");
                    }
                    tracing::info!(
                        request = index + 1,
                        of = bodies.len(),
                        games = count,
                        ms = started.elapsed().as_millis() as u64,
                        "hub: pushed the round"
                    );
                    done.insert(*key, body.clone());
                }
                Ok(answer) => {
                    status.requests_failed += 1;
                    status.last_http_status = Some(answer.status);
                    let excerpt: String = answer.body.chars().take(300).collect();
                    let message = format!("HTTP {}: {}", answer.status, excerpt.trim());
                    status.last_error = Some(message.clone());
                    failure = Some(match answer.status {
                        408 | 429 | 500..=599 => Failure::Retry(answer.retry_after, message),
                        _ => {
                            done.insert(*key, body.clone());
                            Failure::Refused(message)
                        }
                    });
                    break;
                }
                Err(message) => {
                    status.requests_failed += 1;
                    status.last_http_status = None;
                    status.last_error = Some(message.clone());
                    failure = Some(Failure::Retry(None, message));
                    break;
                }
            }
        }
        if failure.is_none() {
            done.retain(|key, _| bodies.iter().any(|(k, _)| k == key));
        }
        match failure {
            Some(Failure::Retry(after, message)) => {
                let pause = after.unwrap_or(wait).min(MAX_RETRY * 5);
                tracing::warn!(error = %message, retry_in_ms = pause.as_millis() as u64,
                    "hub: the push failed");
                {
                    let mut status = hub.desk().push_status();
                    status.state = "retrying".to_owned();
                    status.next_try_wall_ms = Some(hub.now_ms() + pause.as_millis() as i64);
                }
                tokio::time::sleep(pause).await;
                wait = (wait * 2).min(MAX_RETRY);
                continue;
            }
            Some(Failure::Refused(message)) => {
                tracing::error!(error = %message, "hub: lichess refused the push");
                hub.desk().push_status().state = "refused".to_owned();
                wait = FIRST_RETRY;
            }
            None => {
                wait = FIRST_RETRY;
                let mut status = hub.desk().push_status();
                status.state = "ok".to_owned();
                status.games = games;
            }
        }
        // The next change; those that came meanwhile are in the next push.
        match changes.recv().await {
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
        while let Ok(_) | Err(TryRecvError::Lagged(_)) = changes.try_recv() {}
    }
}
