//! Helpers of the round's tests (`hall_broadcast.rs`, `hall_pairings.rs`):
//! the hub binary, plain HTTP requests to it, an MQTT client that commands
//! boards, and a stand-in of lichess's push endpoint and of its making of
//! a broadcast's rounds on 127.0.0.1.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, Event, Incoming, MqttOptions, QoS};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::WAIT;

pub const HALL: &str = "open";

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 GET (`Connection: close`): status, head, body.
pub async fn get(port: u16, path: &str, headers: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: hub\r\n{headers}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("the hub answered")
        .unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (status, head, body) = super::http_answer(&answer);
    (status, head.to_ascii_lowercase(), body)
}

/// The value of a PGN tag in a game's text.
pub fn tag<'t>(game: &'t str, name: &str) -> Option<&'t str> {
    let start = format!("[{name} \"");
    game.lines()
        .find_map(|line| line.strip_prefix(start.as_str()))
        .and_then(|rest| rest.strip_suffix("\"]"))
}

/// The games of a PGN text, split at each `[Event `.
pub fn games(pgn: &str) -> Vec<String> {
    let mut games: Vec<String> = Vec::new();
    for line in pgn.lines() {
        if line.starts_with("[Event ") || games.is_empty() {
            games.push(String::new());
        }
        if let Some(game) = games.last_mut() {
            game.push_str(line);
            game.push('\n');
        }
    }
    games.retain(|g| !g.trim().is_empty());
    games
}

/// The game of board `id` in a PGN text.
pub fn game_of(pgn: &str, id: &str) -> Option<String> {
    games(pgn)
        .into_iter()
        .find(|game| tag(game, "Board") == Some(id))
}

/// An MQTT client that commands the hall's boards.
pub struct Arbiter {
    client: AsyncClient,
    replies: mpsc::UnboundedReceiver<Value>,
    task: tokio::task::JoinHandle<()>,
    next: u32,
}

impl Arbiter {
    pub async fn connect(broker_port: u16) -> Arbiter {
        let mut options = MqttOptions::new("test-arbiter", "127.0.0.1", broker_port);
        options.set_keep_alive(Duration::from_secs(5));
        let (client, mut eventloop) = AsyncClient::new(options, 64);
        let (tx, replies) = mpsc::unbounded_channel();
        let (up_tx, mut up) = mpsc::unbounded_channel();
        let subscriber = client.clone();
        let task = tokio::spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                        let _ = subscriber
                            .subscribe(format!("chessclock/{HALL}/board/+/reply"), QoS::AtLeastOnce)
                            .await;
                    }
                    Ok(Event::Incoming(Incoming::SubAck(_))) => {
                        let _ = up_tx.send(());
                    }
                    Ok(Event::Incoming(Incoming::Publish(p))) => {
                        if let Ok(value) = serde_json::from_slice(&p.payload) {
                            let _ = tx.send(value);
                        }
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        });
        tokio::time::timeout(WAIT, up.recv())
            .await
            .expect("the arbiter's client subscribed");
        Arbiter {
            client,
            replies,
            task,
            next: 0,
        }
    }

    /// Sends `command` to `board` and returns the reply.
    pub async fn command(&mut self, board: &str, command: Value) -> Value {
        self.next += 1;
        let id = format!("test-{}", self.next);
        let mut request = json!({"id": id, "arbiter": "Test Arbiter"});
        for (key, value) in command.as_object().unwrap() {
            request[key] = value.clone();
        }
        self.client
            .publish(
                format!("chessclock/{HALL}/board/{board}/command"),
                QoS::AtLeastOnce,
                false,
                request.to_string(),
            )
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match tokio::time::timeout_at(deadline, self.replies.recv()).await {
                Ok(Some(reply)) if reply["id"] == id.as_str() => return reply,
                Ok(Some(_)) => {}
                _ => panic!("no reply to {request}"),
            }
        }
    }
}

impl Drop for Arbiter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One request the lichess stand-in took.
#[derive(Clone, Debug)]
pub struct Pushed {
    pub path: String,
    pub authorization: Option<String>,
    pub content_type: Option<String>,
    pub body: String,
    pub at: Instant,
}

/// A lichess round the stand-in made (`POST /broadcast/{id}/new`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MadeRound {
    pub tournament: String,
    pub name: String,
    pub id: String,
}

/// A stand-in of lichess on 127.0.0.1: `POST /api/broadcast/round/{id}/push`
/// and `POST /broadcast/{id}/new` (which makes a round: a new id each
/// time). It records every request and answers from a script (its first
/// answers, whichever the endpoint; then 200 with the games' tags, as
/// lichess does, or the new round); with [`Lichess::expect_token`], a
/// request without that Bearer token gets 401.
pub struct Lichess {
    pub port: u16,
    pub pushed: Arc<Mutex<Vec<Pushed>>>,
    /// Every request to make a round, answered or not.
    pub making: Arc<Mutex<Vec<Pushed>>>,
    made: Arc<Mutex<Vec<MadeRound>>>,
    token: Arc<Mutex<Option<String>>>,
    task: tokio::task::JoinHandle<()>,
}

/// A form value (`application/x-www-form-urlencoded`) decoded.
fn form_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

impl Lichess {
    /// `script`: the first answers' status and `Retry-After` seconds.
    pub async fn start(script: Vec<(u16, Option<u64>)>) -> Lichess {
        use axum::http::{HeaderMap, StatusCode, Uri};
        use axum::response::{IntoResponse, Response};
        let pushed: Arc<Mutex<Vec<Pushed>>> = Arc::default();
        let making: Arc<Mutex<Vec<Pushed>>> = Arc::default();
        let made: Arc<Mutex<Vec<MadeRound>>> = Arc::default();
        let token: Arc<Mutex<Option<String>>> = Arc::default();
        let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
        // The script's next answer, or 401 for a wrong token: `None` to
        // answer as lichess does.
        let scripted = {
            let script = script.clone();
            let token = token.clone();
            move |headers: &HeaderMap| -> Option<Response> {
                if let Some(token) = token.lock().unwrap().as_deref() {
                    let sent = headers.get("authorization").and_then(|v| v.to_str().ok());
                    if sent != Some(format!("Bearer {token}").as_str()) {
                        return Some(
                            (StatusCode::UNAUTHORIZED, "{\"error\":\"No such token\"}")
                                .into_response(),
                        );
                    }
                }
                let (status, retry) = script.lock().unwrap().pop_front()?;
                let mut response = (
                    StatusCode::from_u16(status).unwrap(),
                    "{\"error\":\"scripted\"}",
                )
                    .into_response();
                if let Some(seconds) = retry {
                    response
                        .headers_mut()
                        .insert("retry-after", seconds.to_string().parse().unwrap());
                }
                Some(response)
            }
        };
        let recorded = |uri: &Uri, headers: &HeaderMap, body: &str| {
            let header = |name: &str| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            Pushed {
                path: uri.path().to_owned(),
                authorization: header("authorization"),
                content_type: header("content-type"),
                body: body.to_owned(),
                at: Instant::now(),
            }
        };
        let push = {
            let record = pushed.clone();
            let scripted = scripted.clone();
            move |uri: Uri, headers: HeaderMap, body: String| {
                record.lock().unwrap().push(recorded(&uri, &headers, &body));
                let answer = scripted(&headers);
                async move {
                    if let Some(answer) = answer {
                        return answer;
                    }
                    let games: Vec<Value> = games(&body)
                        .iter()
                        .map(|g| {
                            json!({"tags": {"White": tag(g, "White"), "Black": tag(g, "Black")},
                                   "moves": 0})
                        })
                        .collect();
                    axum::Json(json!({"games": games})).into_response()
                }
            }
        };
        let make = {
            let record = making.clone();
            let made = made.clone();
            move |uri: Uri, headers: HeaderMap, body: String| {
                record.lock().unwrap().push(recorded(&uri, &headers, &body));
                let answer = scripted(&headers).unwrap_or_else(|| {
                    let tournament = uri
                        .path()
                        .trim_start_matches("/broadcast/")
                        .trim_end_matches("/new")
                        .to_owned();
                    let name = body
                        .split('&')
                        .find_map(|field| field.strip_prefix("name="))
                        .map(form_decoded);
                    let Some(name) = name.filter(|n| n.len() >= 3) else {
                        return (
                            StatusCode::BAD_REQUEST,
                            "{\"error\":{\"name\":[\"required\"]}}",
                        )
                            .into_response();
                    };
                    let mut made = made.lock().unwrap();
                    let id = format!("new{:05}", made.len() + 1);
                    made.push(MadeRound {
                        tournament: tournament.clone(),
                        name: name.clone(),
                        id: id.clone(),
                    });
                    axum::Json(json!({
                        "round": {"id": id, "name": name, "slug": "round",
                                  "url": format!("https://lichess.org/broadcast/t/round/{id}")},
                        "tour": {"id": tournament, "name": "Stand-in"},
                        "study": {"features": {"chat": true}}
                    }))
                    .into_response()
                });
                async move { answer }
            }
        };
        let app = axum::Router::new()
            .route("/api/broadcast/round/{id}/push", axum::routing::post(push))
            .route("/broadcast/{id}/new", axum::routing::post(make));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Lichess {
            port,
            pushed,
            making,
            made,
            token,
            task,
        }
    }

    /// From now on, a request without `Authorization: Bearer {token}` gets
    /// 401.
    pub fn expect_token(&self, token: &str) {
        *self.token.lock().unwrap() = Some(token.to_owned());
    }

    /// The rounds made so far, in the order made.
    pub fn made(&self) -> Vec<MadeRound> {
        self.made.lock().unwrap().clone()
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pushed(&self) -> Vec<Pushed> {
        self.pushed.lock().unwrap().clone()
    }

    /// Waits until a request taken from `from` on satisfies `ready`;
    /// returns its index.
    pub async fn wait(&self, from: usize, what: &str, ready: impl Fn(&Pushed) -> bool) -> usize {
        // The kit's long wait: a hub in a debug build takes a 300-board
        // hall's retained states in about 2 s on a quiet machine, and failed
        // the 10 s wait twice on a loaded one, its last boards still coming
        // in; what the pushes are checked for is their content and order.
        let deadline = Instant::now() + crate::kit::WAIT;
        loop {
            if let Some(index) = self
                .pushed()
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, p)| ready(p))
                .map(|(i, _)| i)
            {
                return index;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not pushed; pushed:\n{:#?}",
                self.pushed().last()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Lichess {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A hall of many boards without devices (`b1`...`bN`, 300 s each) on the
/// real daemon, on a mosquitto of its own: the set-up of the tests of a
/// section split over several lichess rounds.
pub struct ManyBoards {
    pub broker: super::Broker,
    pub bus: crate::kit::daemon::PrivateBus,
    pub daemon: crate::kit::daemon::Daemon,
    _client: crate::kit::daemon::Client,
}

impl ManyBoards {
    /// Starts them in `dir` and waits until the daemon serves its boards.
    pub async fn start(dir: &std::path::Path, boards: u32) -> ManyBoards {
        use crate::kit::daemon::{Client, Daemon, PrivateBus};
        let broker = super::Broker::start(dir);
        let bus = PrivateBus::session_in(dir);
        let tables: Vec<String> = (1..=boards)
            .map(|board| super::event::plain_board(&format!("b{board}")))
            .collect();
        let url = format!("mqtt://127.0.0.1:{}", broker.port);
        let config = super::event::hall_daemon_config(dir, &url, "pi1", &tables, "");
        let daemon = Daemon::spawn(&config, &bus, dir.join("daemon.log"));
        let client = Client::connect_when(&bus, &daemon, crate::kit::WAIT, |_| true).await;
        ManyBoards {
            broker,
            bus,
            daemon,
            _client: client,
        }
    }

    /// Stops the daemon; whether it ended well.
    pub fn terminate(self) -> bool {
        self.daemon.terminate().success()
    }
}
