//! Issue 29 items 5 and 8, against a real mosquitto (the test's own) and
//! the hub binary, over plain TCP:
//!
//! * who sees live positions: `/events`, `/boards.json`, `/round.pgn` and
//!   `/broadcast.json` answer 401 without an arbiter's login or a hall
//!   screen's token, and with them the whole states; the public routes
//!   answer anyone with the spectators' view only; a token reads but
//!   never commands; every page carries a Content-Security-Policy without
//!   inline scripts, `nosniff` and `no-referrer`;
//! * the hub sheds what it cannot serve: under an open-files limit of 256
//!   (`ulimit -n`), a slowloris head and a silent connection are closed
//!   after the header timeout, a kept-alive one after the idle timeout;
//!   spectators' streams stop short of the arbiters' reserve (503), and
//!   with 300 idle sockets open on top the arbiters' page, their stream
//!   and their boards still answer.
//!
//! Board `b1`'s state is published (retained) on the broker as a daemon
//! would, with an arbiter call, its devices and its host. Every wait has a
//! deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use kit::hall::browser::request;
use kit::hall::round::free_port;
use kit::hall::watch::{options, Watcher};
use kit::hall::{arbiters, Broker, Hub, ARBITER, ARBITER_PASSWORD, SCREEN_TOKEN, WAIT};

/// Publishes `b1`'s state (an arbiter call, devices, host `pi1`) and the
/// host's `online`, retained, as a daemon does.
async fn publish_board(broker: &Broker) -> Watcher {
    let watcher = Watcher::connect(
        options("test-publisher", broker.port, None),
        "chessclock/open/#",
        WAIT,
    )
    .await;
    let state = json!({
        "board": "b1", "host": "pi1",
        "snapshot": {"board": "b1", "started": true, "paused": true, "running": "white",
                     "white_remaining_ms": 250_000, "black_remaining_ms": 300_000,
                     "white_moves": 12, "black_moves": 11, "flags": [],
                     "arbiter_called": true,
                     "devices": [{"role": "buttons", "connected": true}]},
        "snapshot_wall_ms": 1_000,
        "state": {"result": null},
        "pgn": "[White \"Ann\"]\n[Black \"Bob\"]\n\n1. e4 e5 *\n",
    });
    watcher
        .publish_acked(
            "chessclock/open/board/b1/state",
            true,
            state.to_string().as_bytes(),
        )
        .await;
    watcher
        .publish_acked("chessclock/open/host/pi1/online", true, b"online")
        .await;
    watcher
}

/// Sends `head` (a request without its final blank line) and reads the
/// answer's head: the status and the head; the connection stays open.
async fn open_head(port: u16, head: &str) -> (u16, String, TcpStream) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(format!("{head}\r\n").as_bytes())
        .await
        .unwrap();
    let mut text = Vec::new();
    let mut buffer = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + WAIT;
    while !text.windows(4).any(|w| w == b"\r\n\r\n") {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0)) => panic!("closed before a head: {}", String::from_utf8_lossy(&text)),
            Ok(Ok(n)) => text.extend_from_slice(&buffer[..n]),
            Ok(Err(error)) => panic!("{error}"),
            Err(_) => panic!(
                "no head within {WAIT:?}: {}",
                String::from_utf8_lossy(&text)
            ),
        }
    }
    let text = String::from_utf8_lossy(&text).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap();
    (status, text, stream)
}

/// An event stream's text until `ready` holds for it.
async fn read_until(
    stream: &mut TcpStream,
    mut text: String,
    ready: impl Fn(&str) -> bool,
) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut buffer = [0u8; 8192];
    while !ready(&text) {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0)) => panic!("the stream ended:\n{text}"),
            Ok(Ok(n)) => text.push_str(&String::from_utf8_lossy(&buffer[..n])),
            Ok(Err(error)) => panic!("{error}"),
            Err(_) => panic!("not seen within {WAIT:?}:\n{text}"),
        }
    }
    text
}

/// How long until the hub closes `stream` (read gives 0 or an error),
/// writing `dribble` every 200 ms meanwhile if given; `None`: still open
/// after `limit`.
async fn closed_after(
    stream: &mut TcpStream,
    dribble: Option<&[u8]>,
    limit: Duration,
) -> Option<Duration> {
    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + limit;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut buffer = [0u8; 1024];
    loop {
        tokio::select! {
            read = stream.read(&mut buffer) => match read {
                Ok(0) | Err(_) => return Some(start.elapsed()),
                Ok(_) => {}
            },
            _ = tick.tick() => {
                if let Some(bytes) = dribble {
                    if stream.write_all(bytes).await.is_err() {
                        return Some(start.elapsed());
                    }
                }
            }
            () = tokio::time::sleep_until(deadline) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_data_needs_a_login_or_a_screen_token_and_pages_carry_a_csp() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let hub = Hub::with_arbiters(broker.port, dir.path(), &["--round", "1"]).await;
    let _publisher = publish_board(&broker).await;
    // The kit's Hub reads as a hall screen (its token).
    hub.wait_for("/boards.json", "b1 on the hub", |b| {
        b.contains("arbiter_called")
    })
    .await;

    // No login, no token: 401 and nothing of the data, on every live route.
    for path in ["/events", "/boards.json", "/round.pgn", "/broadcast.json"] {
        let (status, head, body) = hub.get_anonymous(path, "").await;
        assert_eq!(status, 401, "{path}: {head}\n{body}");
        assert!(
            body.contains("live data is for the hall's arbiters") && !body.contains("b1"),
            "{path}: {body}"
        );
        let wrong = format!("{path}?token=kit-screen-0123456789abcdeX");
        assert_eq!(hub.get_anonymous(&wrong, "").await.0, 401, "{wrong}");
        let bearer = "Authorization: Bearer kit-screen-0123456789abcdeX\r\n";
        assert_eq!(hub.get_anonymous(path, bearer).await.0, 401, "{path}");
    }
    // The public routes: anyone, the spectators' view only.
    let (status, _, public) = hub.get_anonymous("/public/boards.json", "").await;
    assert_eq!(status, 200);
    assert!(
        public.contains("\"b1\"") && public.contains("\"Ann\""),
        "{public}"
    );
    for hidden in ["arbiter_called", "devices", "pi1", "pgn"] {
        assert!(!public.contains(hidden), "{hidden} in {public}");
    }
    let (status, head, mut stream) = open_head(
        hub.port,
        "GET /public/events HTTP/1.1\r\nHost: hub\r\nAccept: text/event-stream\r\n",
    )
    .await;
    assert_eq!(status, 200, "{head}");
    let text = read_until(&mut stream, head, |t| t.contains("data: ")).await;
    assert!(
        text.contains("\"b1\"") && !text.contains("arbiter_called") && !text.contains("pi1"),
        "{text}"
    );
    drop(stream);

    // A screen's token (in the address, or as a bearer): the whole state.
    let (status, head, mut stream) = open_head(
        hub.port,
        &format!("GET /events?token={SCREEN_TOKEN} HTTP/1.1\r\nHost: hub\r\n"),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    let text = read_until(&mut stream, head, |t| t.contains("\"type\":\"host\"")).await;
    assert!(
        text.contains("arbiter_called") && text.contains("\"pi1\""),
        "{text}"
    );
    drop(stream);
    let (status, _, boards) = hub.get("/boards.json", "").await;
    assert_eq!(status, 200);
    assert!(
        boards.contains("\"devices\"") && boards.contains("\"online\""),
        "{boards}"
    );
    let (status, _, pgn) = hub.get("/round.pgn", "").await;
    assert_eq!(status, 200);
    assert!(pgn.contains("1. e4 e5"), "{pgn}");
    // It reads; it does not command.
    let bearer = format!("Bearer {SCREEN_TOKEN}");
    let command = request(
        hub.port,
        "POST",
        "/api/command",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &bearer),
        ],
        r#"{"board":"b1","command":"resume"}"#,
    )
    .await;
    assert_eq!(command.status, 401, "{command:?}");

    // An arbiter's login: the whole state, until the logout.
    let cookie = hub.log_in(ARBITER, ARBITER_PASSWORD).await.cookie;
    let cookie_header = format!("Cookie: {cookie}\r\n");
    let (status, _, boards) = hub.get_anonymous("/boards.json", &cookie_header).await;
    assert_eq!(status, 200);
    assert!(boards.contains("arbiter_called"), "{boards}");
    let (status, head, _stream) = open_head(
        hub.port,
        &format!("GET /events HTTP/1.1\r\nHost: hub\r\n{cookie_header}"),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    let csrf = request(hub.port, "GET", "/api/session", &[("Cookie", &cookie)], "")
        .await
        .json()["csrf"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = request(
        hub.port,
        "POST",
        "/api/logout",
        &[
            ("Content-Type", "application/json"),
            ("Cookie", &cookie),
            ("X-CSRF-Token", &csrf),
        ],
        "{}",
    )
    .await;
    assert_eq!(out.status, 200, "{out:?}");
    assert_eq!(
        hub.get_anonymous("/boards.json", &cookie_header).await.0,
        401
    );

    // The headers, on pages, scripts, data and refusals alike; the pages
    // have no inline script or style for the policy to forbid.
    for (path, auth) in [
        ("/", ""),
        ("/spectator", ""),
        ("/screen", ""),
        ("/hall.js", ""),
        ("/cards.js", ""),
        ("/public/boards.json", ""),
        ("/boards.json", ""),
        ("/boards.json", bearer.as_str()),
        ("/nowhere", ""),
    ] {
        let headers = if auth.is_empty() {
            String::new()
        } else {
            format!("Authorization: {auth}\r\n")
        };
        let (_, head, body) = hub.get_anonymous(path, &headers).await;
        let head = head.to_ascii_lowercase();
        for needle in [
            "content-security-policy: default-src 'self'; script-src 'self'; style-src 'self'",
            "frame-ancestors 'none'",
            "x-frame-options: deny",
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
        ] {
            assert!(head.contains(needle), "{path}: no {needle}:\n{head}");
        }
        assert!(!head.contains("unsafe-inline"), "{head}");
        if path == "/" || path == "/spectator" || path == "/screen" {
            for script in body.split("<script").skip(1) {
                assert!(
                    script.trim_start().starts_with("src="),
                    "{path}: inline script: {body}"
                );
            }
            assert!(
                !body.contains("<style")
                    && !body.contains(" style=")
                    && !body.contains(" onclick="),
                "{body}"
            );
        }
    }
    drop(hub);

    // The spectators' page may be framed by the sites given; nothing else.
    let hub = Hub::start(
        broker.port,
        dir.path(),
        &["--public-frame-ancestors", "https://club.example 'self'"],
    )
    .await;
    let (_, head, _) = hub.get_anonymous("/spectator", "").await;
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("frame-ancestors https://club.example 'self'"),
        "{head}"
    );
    assert!(!head.contains("x-frame-options"), "{head}");
    // The hall screen as the spectators' page (issue 31 item 4).
    let (_, screen, _) = hub.get_anonymous("/screen", "").await;
    assert!(
        screen
            .to_ascii_lowercase()
            .contains("frame-ancestors https://club.example 'self'"),
        "{screen}"
    );
    let (_, head, _) = hub.get_anonymous("/", "").await;
    assert!(
        head.to_ascii_lowercase().contains("frame-ancestors 'none'"),
        "{head}"
    );
    drop(hub);
    // A value that would break the header is refused at the start.
    let refused = std::process::Command::new(kit::binary("chessclock-hall"))
        .args([
            "--hall",
            "open",
            "--listen",
            &format!("127.0.0.1:{}", free_port()),
        ])
        .args(["--public-frame-ancestors", "x; script-src *"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--public-frame-ancestors"),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_idle_connections_are_shed_and_the_arbiters_page_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let passwords = arbiters(dir.path());
    let _publisher = publish_board(&broker).await;

    // Timeouts of 1 s (heads) and 3 s (idle), the default cap under 256
    // open files.
    let hub = Hub::start_limited(
        broker.port,
        free_port(),
        dir.path().join("hub-short.log"),
        Some(256),
        &[
            "--passwords",
            passwords.to_str().unwrap(),
            "--header-timeout",
            "1",
            "--idle-timeout",
            "3",
        ],
    )
    .await;
    let log = hub.log();
    assert!(
        log.contains("open_files=256")
            && log.contains("max_connections=192")
            && log.contains("kept_for_arbiters=24"),
        "{log}"
    );
    // Slowloris: a head dribbling in a header every 200 ms is closed
    // about 1 s after its first byte.
    let mut slow = TcpStream::connect(("127.0.0.1", hub.port)).await.unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: hub\r\n")
        .await
        .unwrap();
    let took = closed_after(&mut slow, Some(b"X-Slow: 1\r\n"), Duration::from_secs(8))
        .await
        .expect("the slow head is closed");
    eprintln!("slowloris closed after {took:?}");
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // A silent connection: the same.
    let mut silent = TcpStream::connect(("127.0.0.1", hub.port)).await.unwrap();
    let took = closed_after(&mut silent, None, Duration::from_secs(8))
        .await
        .expect("the silent connection is closed");
    eprintln!("silent connection closed after {took:?}");
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // Kept alive after an answer: closed after the idle timeout, not the
    // header timeout.
    let (status, head, mut kept) =
        open_head(hub.port, "GET /hall.css HTTP/1.1\r\nHost: hub\r\n").await;
    assert_eq!(status, 200, "{head}");
    let took = closed_after(&mut kept, None, Duration::from_secs(10))
        .await
        .expect("the idle connection is closed");
    eprintln!("idle kept-alive connection closed after {took:?}");
    assert!(
        took >= Duration::from_millis(2_500) && took < Duration::from_secs(5),
        "{took:?}"
    );
    drop(hub);

    // Default timeouts (10 s heads), 256 open files: 192 connections, 24
    // of them kept from the spectators' streams.
    let hub = Hub::start_limited(
        broker.port,
        free_port(),
        dir.path().join("hub-full.log"),
        Some(256),
        &["--passwords", passwords.to_str().unwrap()],
    )
    .await;
    let cookie = hub.log_in(ARBITER, ARBITER_PASSWORD).await.cookie;
    let mut spectators = Vec::new();
    for _ in 0..168 {
        let (status, head, stream) =
            open_head(hub.port, "GET /public/events HTTP/1.1\r\nHost: hub\r\n").await;
        assert_eq!(
            status,
            200,
            "spectators' stream {}: {head}",
            spectators.len()
        );
        spectators.push(stream);
    }
    let (status, head, _) = open_head(
        hub.port,
        "GET /public/events HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n",
    )
    .await;
    assert_eq!(status, 503, "the 169th spectators' stream: {head}");
    let (status, head, arbiter_stream) = open_head(
        hub.port,
        &format!("GET /events HTTP/1.1\r\nHost: hub\r\nCookie: {cookie}\r\n"),
    )
    .await;
    assert_eq!(status, 200, "the arbiter's stream: {head}");

    // 300 idle sockets on top, more than the cap: the idle are shed, the
    // arbiters' page, boards and a new stream still answer.
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(("127.0.0.1", hub.port)).await.unwrap());
    }
    let asked = Instant::now();
    let page = request(hub.port, "GET", "/", &[], "").await;
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("data-mode=\"arbiters\""), "{page:?}");
    eprintln!(
        "the arbiters' page answered in {:?} with 300 idle sockets open",
        asked.elapsed()
    );
    let boards = request(hub.port, "GET", "/boards.json", &[("Cookie", &cookie)], "").await;
    assert_eq!(boards.status, 200, "{boards:?}");
    assert!(boards.body.contains("arbiter_called"), "{boards:?}");
    let (status, head, _second) = open_head(
        hub.port,
        &format!("GET /events HTTP/1.1\r\nHost: hub\r\nCookie: {cookie}\r\n"),
    )
    .await;
    assert_eq!(status, 200, "a second arbiter's stream: {head}");
    // The idle were shed, oldest first, without waiting for their
    // timeout: count those closed within a second.
    let mut shed = 0;
    for stream in &mut idle {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(3), stream.read(&mut byte)).await
        {
            shed += 1;
        }
    }
    eprintln!("{shed} of 300 idle sockets shed");
    assert!(shed >= 300 - 24, "only {shed} of 300 idle sockets shed");
    // The spectators' streams were kept (the idle went first).
    let mut open = 0;
    for stream in &mut spectators {
        // What they were sent first, then either the end or nothing more.
        let mut buffer = [0u8; 8192];
        loop {
            match tokio::time::timeout(Duration::from_millis(2), stream.read(&mut buffer)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(_)) => {}
                Err(_) => {
                    open += 1;
                    break;
                }
            }
        }
    }
    assert_eq!(open, 168, "spectators' streams still open");
    drop(arbiter_stream);
    let log = hub.log();
    assert!(log.contains("at the connection cap: shedding"), "{log}");
    assert!(!log.contains("cannot accept"), "{log}");
}
