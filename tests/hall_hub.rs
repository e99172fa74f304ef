//! `chessclock-hall` over HTTP: a real mosquitto (the test's own), the real
//! daemon with a `[hall]` table (one board, no devices, on a private bus),
//! the hub binary, and a plain TCP client: the page, the live event stream
//! (SSE) as a board starts, `/boards.json`, the round's PGN and
//! `chessclockctl --hall URL watch`; then the page in Debian's headless
//! chromium over WebDriver (chromedriver, fantoccini): ticking, a flag, a
//! hub restart, the read-only note, an offline host. Every wait has a
//! deadline and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use kit::daemon::{Client, Daemon, PrivateBus};
use kit::hall::{Broker, SCREEN_TOKEN, WAIT};

struct Hub {
    child: Child,
    port: u16,
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends `GET path` as a hall screen (the kit's token) and returns the
/// whole answer (headers and body).
async fn get(port: u16, path: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(
            format!(
                "GET {path} HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer {SCREEN_TOKEN}\r\n\
                 Connection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut answer))
        .await
        .expect("the hub answered")
        .unwrap();
    answer
}

/// The body of an answer (its `Content-Length` body or its chunks joined).
fn body(answer: &str) -> String {
    kit::hall::http_answer(answer).2
}

/// An open `/events` stream.
struct Events {
    stream: TcpStream,
    text: String,
}

impl Events {
    async fn open(port: u16) -> Events {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream
            .write_all(
                format!(
                    "GET /events?token={SCREEN_TOKEN} HTTP/1.1\r\nHost: hub\r\n\
                     Accept: text/event-stream\r\n\r\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        Events {
            stream,
            text: String::new(),
        }
    }

    /// The first `data:` message from the mark on that `ready` accepts.
    async fn wait(&mut self, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        let mut checked = 0;
        loop {
            let lines: Vec<&str> = self.text.lines().collect();
            for line in &lines[checked.min(lines.len())..] {
                if let Some(data) = line.strip_prefix("data: ") {
                    if let Ok(value) = serde_json::from_str::<Value>(data) {
                        if ready(&value) {
                            let value = value.clone();
                            // Later waits start after this line.
                            let at = self.text.find(line).unwrap() + line.len();
                            self.text.drain(..at);
                            return value;
                        }
                    }
                }
            }
            // The last line may be incomplete: look at it again.
            checked = lines.len().saturating_sub(1);
            let mut buffer = [0u8; 8192];
            match tokio::time::timeout_at(deadline, self.stream.read(&mut buffer)).await {
                Ok(Ok(0)) => panic!("{what}: the stream ended:\n{}", self.text),
                Ok(Ok(n)) => self.text.push_str(&String::from_utf8_lossy(&buffer[..n])),
                Ok(Err(error)) => panic!("{what}: {error}"),
                Err(_) => panic!("{what}: not seen within {WAIT:?}:\n{}", self.text),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_serves_the_page_live_states_and_the_round_pgn() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let config = dir.path().join("chessclockd.toml");
    std::fs::write(
        &config,
        format!(
            r#"{daemon}
[[board]]
id = "b1"
control = "300"

[hall]
broker = "mqtt://127.0.0.1:{port}"
name = "open"
host = "pi1"
"#,
            daemon = kit::daemon::daemon_table(&dir.path().join("state")),
            port = broker.port,
        ),
    )
    .unwrap();
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;

    let port = free_port();
    let hub = spawn_hub(&broker, port, &dir.path().join("hub.log"));
    listening(hub.port, "the hub").await;

    // The page and its script.
    let page = get(hub.port, "/").await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<script src=\"hall.js\">"), "{page}");
    let script = get(hub.port, "/hall.js").await;
    assert!(script.starts_with("HTTP/1.1 200"), "{script}");
    assert!(script.contains("new EventSource(url)"), "{script}");

    // The live stream: the board (retained on the broker) and its host
    // first, then the start as it happens.
    let mut events = Events::open(hub.port).await;
    let first = events
        .wait("the board's state", |m| {
            m["type"] == "state" && m["board"] == "b1"
        })
        .await;
    assert_eq!(first["payload"]["snapshot"]["started"], false);
    assert_eq!(first["payload"]["snapshot"]["white_remaining_ms"], 300_000);
    client.board.start().await.unwrap();
    let running = events
        .wait("the running state", |m| {
            m["type"] == "state" && m["payload"]["snapshot"]["running"] == "white"
        })
        .await;
    assert!(running["payload"]["snapshot_wall_ms"].as_i64().unwrap() > 0);

    // Everything at once.
    let boards: Value = serde_json::from_str(&body(&get(hub.port, "/boards.json").await)).unwrap();
    assert_eq!(boards["hosts"]["pi1"], "online", "{boards}");
    assert_eq!(boards["boards"]["b1"]["snapshot"]["running"], "white");

    // The round's PGN: White's clock runs down from 5:00.
    let answer = get(hub.port, "/round.pgn").await;
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: application/x-chess-pgn"),
        "{answer}"
    );
    let pgn = body(&answer);
    assert!(pgn.contains("[Board \"b1\"]"), "{pgn}");
    assert!(pgn.contains("[Result \"*\"]"), "{pgn}");
    assert!(pgn.contains("[BlackClock \"0:05:00\"]"), "{pgn}");
    let white = pgn
        .lines()
        .find_map(|l| {
            l.strip_prefix("[WhiteClock \"")
                .and_then(|l| l.strip_suffix("\"]"))
        })
        .unwrap();
    assert!(white.starts_with("0:04:") || white == "0:05:00", "{pgn}");

    // The same board in the terminal, read from the hub.
    let watch = ctl_watch_once(hub.port, &token_file(dir.path()));
    assert!(watch.status.success(), "{watch:?}");
    let frame = String::from_utf8_lossy(&watch.stdout).into_owned();
    let line = frame
        .lines()
        .find(|l| l.starts_with("pi1/b1"))
        .unwrap_or_else(|| panic!("{frame}"));
    assert!(line.contains(">4:") || line.contains(">5:00"), "{frame}");
    assert!(frame.starts_with("chessclockd: 1 board"), "{frame}");
    // Without a screen's token the hub does not give its live boards.
    let refused = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["--hall", &format!("http://127.0.0.1:{}", hub.port)])
        .args(["watch", "--once", "--no-color"])
        .env_remove("CHESSCLOCKCTL_HALL_TOKEN_FILE")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("401 Unauthorized: its live boards need a hall screen's token"),
        "{refused:?}"
    );
    let json = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["--hall", &format!("http://127.0.0.1:{}", hub.port)])
        .arg("--hall-token-file")
        .arg(token_file(dir.path()))
        .args(["watch", "--once", "--json"])
        .output()
        .unwrap();
    let snapshot: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(snapshot["board"], "b1", "{snapshot}");
    assert_eq!(snapshot["running"], "white", "{snapshot}");
    // Live on a terminal (a PTY): a change shows without a key, q quits.
    let mut screen = LiveWatch::start(hub.port, &token_file(dir.path()));
    screen.wait_for("pi1/b1").await;
    screen.wait_for("white to move").await;
    client.board.pause().await.unwrap();
    screen.wait_for("paused").await;
    screen.quit().await;
    client.board.resume().await.unwrap();

    // Elsewhere than `watch`, --hall is refused.
    let status = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["--hall", "http://127.0.0.1:1", "status"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&status.stderr).contains("`watch` only"));

    // The daemon stops cleanly: its host goes offline on the stream, and
    // in the terminal.
    assert!(daemon.terminate().success());
    events
        .wait("the host offline", |m| {
            m["type"] == "host" && m["host"] == "pi1" && m["online"] == false
        })
        .await;
    let frame = String::from_utf8_lossy(&ctl_watch_once(hub.port, &token_file(dir.path())).stdout)
        .into_owned();
    assert!(
        frame.contains("pi1/b1") && frame.contains("host pi1 offline"),
        "{frame}"
    );
    // No hub there: a clear failure.
    drop(hub);
    let away = ctl_watch_once(port, &token_file(dir.path()));
    assert_eq!(away.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&away.stderr).contains("cannot read http://127.0.0.1"),
        "{away:?}"
    );
}

/// `chessclockctl --hall http://127.0.0.1:PORT watch --once` as a hall
/// screen.
fn ctl_watch_once(port: u16, token: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["--hall", &format!("http://127.0.0.1:{port}")])
        .arg("--hall-token-file")
        .arg(token)
        .args(["watch", "--once", "--no-color"])
        .output()
        .unwrap()
}

/// chromedriver of the test's own, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The kit's hall screen token in a file in `dir`, for the hub's
/// `--screen-tokens` and `chessclockctl --hall-token-file`.
fn token_file(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("screen.token");
    std::fs::write(&file, format!("{SCREEN_TOKEN}\n")).unwrap();
    file
}

fn spawn_hub(broker: &Broker, port: u16, log: &std::path::Path) -> Hub {
    Hub {
        child: Command::new(crate::kit::binary("chessclock-hall"))
            .args(["--broker", &format!("mqtt://127.0.0.1:{}", broker.port)])
            .arg("--screen-tokens")
            .arg(token_file(log.parent().unwrap()))
            .args(["--hall", "open", "--listen", &format!("127.0.0.1:{port}")])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap(),
        port,
    }
}

async fn listening(port: u16, what: &str) {
    let deadline = Instant::now() + WAIT;
    while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The page's row of board b1 (`tr[data-board="b1"]`, also
/// `#board-b1`): `[class, white's time, black's time]`, and the status line.
const ROW: &str = "const r = document.getElementById('board-b1');
return [r ? r.className : null,
        r ? r.querySelector('td.white').textContent : null,
        r ? r.querySelector('td.black').textContent : null,
        document.getElementById('status').textContent];";

async fn row(browser: &fantoccini::Client) -> (Option<String>, String, String, String) {
    let value = browser.execute(ROW, vec![]).await.unwrap();
    let text = |i: usize| value[i].as_str().unwrap_or_default().to_owned();
    (
        value[0].as_str().map(str::to_owned),
        text(1),
        text(2),
        text(3),
    )
}

/// Polls the page until `ready` holds for its row; returns it.
async fn wait_row(
    browser: &fantoccini::Client,
    what: &str,
    limit: Duration,
    ready: impl Fn(&(Option<String>, String, String, String)) -> bool,
) -> (Option<String>, String, String, String) {
    let deadline = Instant::now() + limit;
    loop {
        let seen = row(browser).await;
        if ready(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "{what}: the page shows {seen:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_in_headless_chromium_ticks_flags_and_recovers_after_a_hub_restart() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let bus = PrivateBus::session_in(dir.path());
    let config = dir.path().join("chessclockd.toml");
    std::fs::write(
        &config,
        format!(
            "[daemon]\nbus = \"session\"\nstate-dir = \"{}\"\nrt-priority = 0\nmlock = false\n\n\
             [[board]]\nid = \"b1\"\ncontrol = \"3\"\n\n\
             [hall]\nbroker = \"mqtt://127.0.0.1:{}\"\nname = \"open\"\nhost = \"pi1\"\n",
            dir.path().join("state").display(),
            broker.port,
        ),
    )
    .unwrap();
    let daemon = Daemon::spawn(&config, &bus, dir.path().join("daemon.log"));
    let client = Client::connect_when(&bus, &daemon, WAIT, |_| true).await;
    let hub_port = free_port();
    let hub = spawn_hub(&broker, hub_port, &dir.path().join("hub.log"));
    listening(hub_port, "the hub").await;

    let driver_port = free_port();
    let driver = Driver {
        child: Command::new("chromedriver")
            .arg(format!("--port={driver_port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is installed (scripts/setup-debian: chromium-driver)"),
        port: driver_port,
    };
    listening(driver.port, "chromedriver").await;
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                    "--disable-dev-shm-usage", "--window-size=1200,600"]}),
    );
    let browser =
        fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .expect("a chromium session");
    browser
        // A hall screen: the token in the address gives the live view
        // (hosts, devices) without a login.
        .goto(&format!(
            "http://127.0.0.1:{hub_port}/?token={SCREEN_TOKEN}"
        ))
        .await
        .unwrap();

    // The row appears with the board's times: 3 s, below the displays'
    // tenths threshold (20 s), in tenths as they show it.
    wait_row(
        &browser,
        "the board's row",
        WAIT,
        |(class, white, black, status)| {
            class.is_some() && white == "0:03.0" && black == "0:03.0" && status == "live"
        },
    )
    .await;

    // Started: White's clock ticks in the browser (no state is published
    // between the start and the flag), then the flag turns the row red
    // within a second of its fall.
    client.board.start().await.unwrap();
    let started = Instant::now();
    wait_row(&browser, "the clock ticking", WAIT, |(_, white, _, _)| {
        white.starts_with("0:02.")
    })
    .await;
    wait_row(&browser, "the clock ticking", WAIT, |(_, white, _, _)| {
        white.starts_with("0:01.")
    })
    .await;
    let flagged = wait_row(&browser, "the flag", WAIT, |(class, ..)| {
        class.as_deref() == Some("flag")
    })
    .await;
    // The flag fell 3 s after the start, which was before `started`.
    assert!(
        started.elapsed() < Duration::from_millis(4_200),
        "the row turned red {:?} after the start: {flagged:?}",
        started.elapsed()
    );
    assert_eq!(flagged.1, "0:00.0");
    assert_eq!(flagged.2, "0:03.0");
    // Without a password file the page is read-only and says how to let
    // arbiters in.
    let note = browser
        .execute(
            "const n = document.getElementById('arbiters-off');
             return [n.hidden, n.textContent, document.getElementById('login').hidden];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(note[0], false, "{note}");
    assert!(
        note[1].as_str().unwrap().contains("--passwords FILE"),
        "{note}"
    );
    assert_eq!(note[2], true, "{note}");
    let shot = browser.screenshot().await.unwrap();
    // target/hall-screenshots/ (CARGO_TARGET_TMPDIR is target/tmp).
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let shots = tmp.parent().unwrap_or(tmp).join("hall-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    std::fs::write(shots.join("flag.png"), shot).unwrap();

    // The hub restarts: the page reconnects by itself and is live again.
    drop(hub);
    wait_row(&browser, "the page noticing", WAIT, |(.., status)| {
        status != "live"
    })
    .await;
    let _hub = spawn_hub(&broker, hub_port, &dir.path().join("hub2.log"));
    wait_row(
        &browser,
        "the page live again",
        WAIT,
        |(class, _, _, status)| status == "live" && class.as_deref() == Some("flag"),
    )
    .await;
    // The daemon stops: its host goes offline, and the row says so.
    assert!(daemon.terminate().success());
    const HOST: &str = "const r = document.querySelector('tr[data-board=\"b1\"]');
                        return [Array.from(r.classList), r.querySelector('td.host').textContent];";
    let deadline = Instant::now() + WAIT;
    let offline = loop {
        let seen = browser.execute(HOST, vec![]).await.unwrap();
        if seen[0].as_array().unwrap().iter().any(|c| c == "offline") {
            break seen;
        }
        assert!(Instant::now() < deadline, "the host offline: {seen}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert!(
        offline[1]
            .as_str()
            .unwrap()
            .starts_with("pi1 OFFLINE, last seen "),
        "{offline}"
    );
    let _ = browser.close().await;
}

/// `chessclockctl --hall URL watch` on a PTY; its output collected.
struct LiveWatch {
    child: tokio::process::Child,
    master: std::fs::File,
    text: tokio::sync::mpsc::UnboundedReceiver<String>,
    seen: String,
}

impl LiveWatch {
    fn start(port: u16, token: &std::path::Path) -> LiveWatch {
        use std::io::Read;
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let slave = std::fs::File::from(pty.slave);
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
            .args(["--hall", &format!("http://127.0.0.1:{port}"), "watch"])
            .arg("--hall-token-file")
            .arg(token)
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let master = std::fs::File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let (tx, text) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0
                    || tx
                        .send(String::from_utf8_lossy(&buffer[..n]).into_owned())
                        .is_err()
                {
                    return;
                }
            }
        });
        LiveWatch {
            child,
            master,
            text,
            seen: String::new(),
        }
    }

    /// Waits for `needle` in what was drawn since the last wait.
    async fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + WAIT;
        while !self.seen.contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.text.recv()).await {
                Ok(Some(chunk)) => self.seen.push_str(&chunk),
                _ => panic!("`{needle}` not drawn: {}", self.seen),
            }
        }
        self.seen.clear();
    }

    async fn quit(mut self) {
        use std::io::Write;
        self.master.write_all(b"q").unwrap();
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("watch quits on q")
            .unwrap();
        assert!(status.success());
    }
}
