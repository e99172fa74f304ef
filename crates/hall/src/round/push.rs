//! The lichess push of the round's PGN as the public sees it (behind the
//! delay, the round's boards only; see the parent module's promises): the
//! boards of each hundred to their own lichess round (boards 1-100 to the
//! first, 101-200 to the second...: the ids given, or the rounds the hub
//! makes in a broadcast, see `created.rs`), one request at a time, at
//! most one per lichess round every push interval, the latest PGN,
//! retried with a doubling wait; what lichess said of each game kept for
//! the desk ([`PushStatus::boards`]).

use super::created::{self, Made};
use super::*;
/// Where the round goes: lichess broadcast rounds.
#[derive(Clone)]
pub struct PushTarget {
    /// `https://lichess.org` (or a stand-in's `http://127.0.0.1:PORT`).
    base: axum::http::Uri,
    /// The lichess rounds: boards 1-100 to the first, 101-200 to the
    /// second, and so on.
    rounds: Rounds,
    token: String,
    /// The least time between two requests to one lichess round.
    interval: Duration,
}

/// The lichess rounds of a push.
#[derive(Clone, Debug)]
pub(super) enum Rounds {
    /// Given (`--lichess-round ID,ID...`).
    Given(Vec<String>),
    /// Made by the hub in this broadcast (`--lichess-broadcast ID`), as
    /// many as the round needs, named after `names`
    /// ([`created::round_name`]; see `created.rs`).
    Made { tournament: String, names: String },
}

impl std::fmt::Debug for PushTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        match &self.rounds {
            Rounds::Given(ids) => write!(f, "PushTarget({})", self.urls_of(ids).join(", ")),
            Rounds::Made { tournament, .. } => {
                write!(
                    f,
                    "PushTarget({})",
                    self.url(&created::new_round_tail(tournament))
                )
            }
        }
    }
}

impl PushTarget {
    /// Checks the base URL and the round ids (`ID[,ID...]`: boards 1-100
    /// go to the first, 101-200 to the second...) and reads the token file
    /// (its first line; a token with scope `study:write`).
    pub fn new(
        base: &str,
        rounds: &str,
        token_file: &Path,
        interval: Duration,
    ) -> anyhow::Result<PushTarget> {
        let ids: Vec<String> = rounds.split(',').map(|r| r.trim().to_owned()).collect();
        for round in &ids {
            if round.is_empty() || !round.chars().all(|c| c.is_ascii_alphanumeric()) {
                anyhow::bail!(
                    "--lichess-round `{rounds}`: expected the broadcast rounds' ids (letters \
                     and digits, as in their URLs), separated by commas: boards 1-100 go to \
                     the first, 101-200 to the second..."
                );
            }
        }
        PushTarget::with(base, Rounds::Given(ids), token_file, interval)
    }

    /// Checks the base URL and the broadcast's id (its tournament, whose
    /// rounds the hub makes: see `created.rs`) and reads the token file.
    pub fn made_in(
        base: &str,
        tournament: &str,
        names: &str,
        token_file: &Path,
        interval: Duration,
    ) -> anyhow::Result<PushTarget> {
        let tournament = created::check_tournament(tournament).map_err(anyhow::Error::msg)?;
        let names = created::check_names(names).map_err(anyhow::Error::msg)?;
        PushTarget::with(
            base,
            Rounds::Made { tournament, names },
            token_file,
            interval,
        )
    }

    fn with(
        base: &str,
        rounds: Rounds,
        token_file: &Path,
        interval: Duration,
    ) -> anyhow::Result<PushTarget> {
        let uri: axum::http::Uri = base
            .trim_end_matches('/')
            .parse()
            .map_err(|error| anyhow::anyhow!("--lichess-url `{base}`: {error}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            anyhow::bail!("--lichess-url `{base}`: expected https://HOST[:PORT] (or http://)");
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
            rounds,
            token,
            interval,
        })
    }

    /// The push endpoints of the lichess rounds given (none when the hub
    /// makes them).
    pub fn urls(&self) -> Vec<String> {
        match &self.rounds {
            Rounds::Given(ids) => self.urls_of(ids),
            Rounds::Made { .. } => Vec::new(),
        }
    }

    /// The push endpoints of the lichess rounds `ids`, one each.
    pub fn urls_of(&self, ids: &[String]) -> Vec<String> {
        ids.iter().map(|id| self.url(&push_tail(id))).collect()
    }

    /// The URL of the server's path `tail`.
    pub(super) fn url(&self, tail: &str) -> String {
        format!(
            "{}://{}{}{}",
            self.base.scheme_str().unwrap_or("https"),
            self.base.authority().map(|a| a.as_str()).unwrap_or(""),
            self.base.path().trim_end_matches('/'),
            tail
        )
    }
}

/// A lichess round's push endpoint (its path).
fn push_tail(round: &str) -> String {
    format!("/api/broadcast/round/{round}/push")
}

/// The lichess round of a request among `ids`: that of its hundred
/// (`None`: there is none for it).
fn round_of(ids: &[String], key: RequestKey) -> Option<&str> {
    ids.get(key.0 as usize).map(String::as_str)
}

/// What lichess said of one game, for the desk.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct GameStatus {
    /// The lichess round it went to.
    pub round: String,
    /// The PGN's `Round` (`R.B`).
    pub number: Option<String>,
    /// Accepted (no error in the answer).
    pub accepted: bool,
    /// Why lichess refused it.
    pub error: Option<String>,
    /// The moves lichess read.
    pub moves: Option<u64>,
    /// When it was last pushed (wall ms).
    pub pushed_wall_ms: i64,
}

/// What the push has done, for `/broadcast.json` and the log.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PushStatus {
    pub enabled: bool,
    /// The push endpoints (no token), one per lichess round (given, or
    /// made so far).
    pub urls: Vec<String>,
    /// The least time between two requests to one lichess round (ms).
    pub interval_ms: u64,
    /// `idle`, `pushing`, `ok`, `retrying`, `refused`, `waiting` (for a
    /// round number to name the lichess rounds the hub makes after).
    pub state: String,
    /// Requests answered 2xx, and not (pushes, and the requests that
    /// make lichess rounds).
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
    /// Board id (or `Round` tag) -> what lichess said of its game.
    pub boards: BTreeMap<String, GameStatus>,
    /// Boards no lichess round was given for (give more ids), or made
    /// for (no board number).
    pub unpushed: Vec<String>,
    /// With `--lichess-broadcast`: the broadcast and the lichess rounds the
    /// hub made in it for the current round, in board order.
    pub broadcast: Option<String>,
    pub made: Vec<created::MadeRound>,
}

/// One answer.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) retry_after: Option<Duration>,
    pub(super) body: String,
}

/// How to reach the server.
pub(super) enum Connector {
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

/// POSTs one PGN text to lichess round `round`'s push endpoint.
async fn post(
    target: &PushTarget,
    round: &str,
    connector: &Connector,
    body: String,
) -> Result<Answer, String> {
    send(
        target,
        &push_tail(round),
        "text/plain; charset=utf-8",
        connector,
        body,
    )
    .await
}

/// POSTs `body` (of `content_type`) to the server's path `tail`, with the
/// token.
pub(super) async fn send(
    target: &PushTarget,
    tail: &str,
    content_type: &str,
    connector: &Connector,
    body: String,
) -> Result<Answer, String> {
    let host = target.base.host().unwrap_or_default().to_owned();
    let tls = matches!(connector, Connector::Tls(_));
    let port = target.base.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let path = format!("{}{}", target.base.path().trim_end_matches('/'), tail);
    let authority = target
        .base
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_else(|| host.clone());
    let request = axum::http::Request::post(path)
        .header(header::HOST, authority)
        .header(header::AUTHORIZATION, format!("Bearer {}", target.token))
        .header(header::CONTENT_TYPE, content_type)
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

/// The games of a request's text with what the answer says of each (in
/// the order pushed, as lichess answers): board id (else `Round`) ->
/// status.
pub(super) fn game_statuses(
    body: &str,
    answer: &str,
    round: &str,
    now_ms: i64,
) -> Vec<(String, GameStatus)> {
    let answered: Vec<Value> = serde_json::from_str::<Value>(answer)
        .ok()
        .and_then(|v| v["games"].as_array().cloned())
        .unwrap_or_default();
    let mut games: Vec<String> = Vec::new();
    for line in body.lines() {
        if line.starts_with("[Event ") || games.is_empty() {
            games.push(String::new());
        }
        if let Some(game) = games.last_mut() {
            game.push_str(line);
            game.push('\n');
        }
    }
    games
        .iter()
        .filter(|g| !g.trim().is_empty())
        .enumerate()
        .map(|(index, game)| {
            let tags = split_pgn(game).0;
            let tag = |name: &str| tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
            let said = answered.get(index);
            let error = said.and_then(|g| g["error"].as_str()).map(str::to_owned);
            let key = tag("Board")
                .or_else(|| tag("Round"))
                .unwrap_or_else(|| format!("#{}", index + 1));
            (
                key,
                GameStatus {
                    round: round.to_owned(),
                    number: tag("Round"),
                    accepted: said.is_some() && error.is_none(),
                    error,
                    moves: said.and_then(|g| g["moves"].as_u64()),
                    pushed_wall_ms: now_ms,
                },
            )
        })
        .collect()
}

/// Starts pushing the round to `target` on every change of the public
/// feed, for good.
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
        match &target.rounds {
            Rounds::Given(ids) => status.urls = target.urls_of(ids),
            Rounds::Made { tournament, .. } => status.broadcast = Some(tournament.clone()),
        }
        status.interval_ms = target.interval.as_millis() as u64;
        status.state = "idle".to_owned();
    }
    match &target.rounds {
        Rounds::Given(ids) => tracing::info!(urls = %target.urls_of(ids).join(", "),
            "hub: pushing the round to lichess"),
        Rounds::Made { tournament, .. } => tracing::info!(%tournament,
            "hub: pushing the round to lichess rounds it makes in the broadcast"),
    }
    Ok(tokio::spawn(push_loop(hub, target, connector)))
}

/// Why a push stopped.
enum Failure {
    /// Try again after the wait.
    Retry(Option<Duration>, String),
    /// The server refused this text: wait for a change.
    Refused(String),
    /// Nothing can be pushed yet (no round to name lichess rounds
    /// after): wait for a change.
    Waiting(String),
}

/// How long the push waits for a change before it looks again anyway (a
/// recorded game's PGN comes public when its delay has passed, with no
/// state to announce it).
const LOOK_AGAIN: Duration = Duration::from_secs(5);

async fn push_loop(hub: Arc<impl RoundSource>, target: PushTarget, connector: Connector) {
    // The requests the server last accepted (or refused for good), with
    // the lichess round each went to.
    let mut done: BTreeMap<RequestKey, (String, String)> = BTreeMap::new();
    // When each request last went: at most one per lichess round every
    // interval, counted from the request itself (a pass sends its rounds
    // one after another).
    let mut last_sent: BTreeMap<RequestKey, tokio::time::Instant> = BTreeMap::new();
    let mut wait = FIRST_RETRY;
    let mut made = Made::default();
    loop {
        // The earliest instant a request left out for its interval is due.
        let mut due: Option<tokio::time::Instant> = None;
        let (games, bodies) = round_requests(&*hub);
        // The lichess rounds, made first where the hub makes them: nothing
        // goes to a round that does not exist.
        let (ids, not_made) = match &target.rounds {
            Rounds::Given(ids) => (ids.clone(), None),
            Rounds::Made { tournament, names } => {
                let outcome = made
                    .ensure(&*hub, &target, &connector, tournament, names, &bodies)
                    .await;
                (made.ids(), outcome.err())
            }
        };
        let mut failure = None;
        let mut unpushed = Vec::new();
        for (key, body) in &bodies {
            let Some(round) = round_of(&ids, *key) else {
                match &not_made {
                    // Its round could not be made (yet): the desk says why.
                    Some(created::NotMade::Failed(_, message)) if key.0 != u32::MAX => {
                        let mut status = hub.desk().push_status();
                        for (board, mut game) in game_statuses(body, "", "", hub.now_ms()) {
                            game.error = Some(format!("no lichess round yet: {message}"));
                            status.boards.insert(board, game);
                        }
                    }
                    _ => {
                        unpushed.extend(game_statuses(body, "", "", 0).into_iter().map(|(k, _)| k))
                    }
                }
                continue;
            };
            if done
                .get(key)
                .is_some_and(|(to, text)| to == round && text == body)
            {
                continue;
            }
            if let Some(next) = last_sent
                .get(key)
                .map(|at| *at + target.interval)
                .filter(|next| *next > tokio::time::Instant::now())
            {
                // Its interval is not over: sent with the latest text when
                // it is.
                due = Some(due.map_or(next, |d| d.min(next)));
                continue;
            }
            {
                let mut status = hub.desk().push_status();
                status.state = "pushing".to_owned();
                status.games = games;
                status.last_attempt_wall_ms = Some(hub.now_ms());
                status.next_try_wall_ms = None;
            }
            let count = count_games(body);
            let started = std::time::Instant::now();
            last_sent.insert(*key, tokio::time::Instant::now());
            let answer = post(&target, round, &connector, body.clone()).await;
            let mut status = hub.desk().push_status();
            match answer {
                Ok(answer) if (200..300).contains(&answer.status) => {
                    status.requests_ok += 1;
                    let now = hub.now_ms();
                    status.last_ok_wall_ms = Some(now);
                    status.last_http_status = Some(answer.status);
                    status.last_error = None;
                    status.game_errors = refused_games(&answer.body);
                    for error in &status.game_errors {
                        tracing::warn!(%error, "hub: lichess refused a game");
                    }
                    status
                        .boards
                        .extend(game_statuses(body, &answer.body, round, now));
                    tracing::info!(
                        round = %round,
                        games = count,
                        ms = started.elapsed().as_millis() as u64,
                        "hub: pushed the round"
                    );
                    done.insert(*key, (round.to_owned(), body.clone()));
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
                            let now = hub.now_ms();
                            for (board, mut game) in game_statuses(body, "", round, now) {
                                game.error = Some(message.clone());
                                status.boards.insert(board, game);
                            }
                            done.insert(*key, (round.to_owned(), body.clone()));
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
        if !unpushed.is_empty() && hub.desk().push_status().unpushed != unpushed {
            match &target.rounds {
                Rounds::Given(_) => tracing::warn!(boards = ?unpushed,
                    "hub: boards without a lichess round: give more --lichess-round ids"),
                Rounds::Made { .. } => tracing::warn!(boards = ?unpushed,
                    "hub: boards without a lichess round (no board number, or beyond the \
                     rounds the hub makes)"),
            }
        }
        hub.desk().push_status().unpushed = unpushed;
        // A round that could not be made is tried again as a failed push
        // is (what was pushed meanwhile to the rounds that exist stands).
        match not_made {
            Some(created::NotMade::Failed(after, message)) => {
                hub.desk().push_status().last_error = Some(message.clone());
                if !matches!(failure, Some(Failure::Retry(..))) {
                    failure = Some(Failure::Retry(after, message));
                }
            }
            Some(created::NotMade::Waiting(message)) if failure.is_none() => {
                hub.desk().push_status().last_error = Some(message.clone());
                failure = Some(Failure::Waiting(message));
            }
            _ => {}
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
                tokio::time::sleep(pause.max(target.interval)).await;
                wait = (wait * 2).min(MAX_RETRY);
                continue;
            }
            Some(Failure::Refused(message)) => {
                tracing::error!(error = %message, "hub: lichess refused the push");
                hub.desk().push_status().state = "refused".to_owned();
                wait = FIRST_RETRY;
            }
            Some(Failure::Waiting(message)) => {
                if hub.desk().push_status().state != "waiting" {
                    tracing::warn!(why = %message, "hub: the push waits");
                }
                hub.desk().push_status().state = "waiting".to_owned();
                wait = FIRST_RETRY;
            }
            None => {
                wait = FIRST_RETRY;
                let mut status = hub.desk().push_status();
                status.state = "ok".to_owned();
                status.games = games;
            }
        }
        // A request left out for its interval: the next pass when it is
        // due (with the latest text, and what changed meanwhile).
        if let Some(due) = due {
            tokio::time::sleep_until(due).await;
            continue;
        }
        // The next change; those that came meanwhile are in the next pass
        // (one permit for all of them).
        let _ = tokio::time::timeout(LOOK_AGAIN, hub.public_changed().notified()).await;
    }
}
