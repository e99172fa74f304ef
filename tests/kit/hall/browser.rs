//! The hub and a headless browser for the page tests: `chessclock-hall`
//! on a free port of 127.0.0.1, Debian's chromedriver and chromium over
//! WebDriver (fantoccini), plain HTTP requests, and screenshots kept in
//! `target/hall-screenshots/` (the bench's output place). Each is stopped
//! when dropped. The browser logs an arbiter in through a page's own login
//! form (`form#login`, as docs/hall-hub.md names its hooks) and waits for a
//! board's row or card on the page.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::kit::hall::WAIT;

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`.
pub async fn listening(port: u16, what: &str) {
    let deadline = Instant::now() + WAIT;
    while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Adds `user` with `password` to the password file `file` through
/// `chessclock-hall passwd` (the password on standard input).
pub fn add_arbiter(file: &Path, user: &str, password: &str) {
    use std::io::Write;
    let mut child = Command::new(crate::kit::binary("chessclock-hall"))
        .arg("passwd")
        .arg(file)
        .arg(user)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{password}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "passwd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An HTTP answer: status, headers (lower-case names) and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }

    /// The value of the first header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim().eq_ignore_ascii_case(name)).then(|| value.trim().to_owned())
        })
    }
}

/// One HTTP/1.1 request (`Connection: close`) with `headers` and a body.
pub async fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut answer))
        .await
        .expect("the hub answered")
        .unwrap();
    let (status, head, body) = super::http_answer(&answer);
    Answer { status, head, body }
}

/// chromedriver of the test's own and a headless chromium session.
pub struct Browser {
    pub client: fantoccini::Client,
    driver: Child,
}

impl Browser {
    pub async fn start() -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is installed (scripts/setup-debian: chromium-driver)");
        listening(port, "chromedriver").await;
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                        "--disable-dev-shm-usage", "--window-size=1400,700"]}),
        );
        let client = fantoccini::ClientBuilder::new(
            hyper_util::client::legacy::connect::HttpConnector::new(),
        )
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a chromium session");
        Browser { client, driver }
    }

    /// Runs `script` (a function body) in the page.
    pub async fn run(&self, script: &str) -> serde_json::Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// Polls `script` until `ready` holds for its value (at most `limit`).
    pub async fn wait(
        &self,
        what: &str,
        limit: Duration,
        script: &str,
        ready: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + limit;
        loop {
            let seen = self.run(script).await;
            if ready(&seen) {
                return seen;
            }
            assert!(Instant::now() < deadline, "{what}: the page shows {seen}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Opens `url` (a hall page: `/`, `/board/<id>`...), waits for its
    /// login form and logs `name` in with `password` through it; returns
    /// once the page says who is logged in (`#whoami`).
    pub async fn log_in(&self, url: &str, name: &str, password: &str) {
        self.open(url).await;
        self.wait(
            "the login form",
            WAIT,
            "const f = document.getElementById('login'); return !!f && !f.hidden;",
            |shown| shown == true,
        )
        .await;
        self.submit_login(name, password).await;
        self.logged_in(name).await;
    }

    /// Types `name` and `password` into the page's login form (what they
    /// held cleared first) and submits it; does not wait for the answer.
    pub async fn submit_login(&self, name: &str, password: &str) {
        use fantoccini::Locator;
        let form = self.client.find(Locator::Css("form#login")).await.unwrap();
        for (field, value) in [("user", name), ("password", password)] {
            let input = form
                .find(Locator::Css(&format!("input[name={field}]")))
                .await
                .unwrap();
            input.clear().await.unwrap();
            input.send_keys(value).await.unwrap();
        }
        self.click("form#login button[type=submit]").await;
    }

    /// Opens `url`.
    pub async fn open(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
    }

    /// Clicks the element `css` finds (fails the test when there is none).
    pub async fn click(&self, css: &str) {
        self.client
            .find(fantoccini::Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .unwrap();
    }

    /// Waits until the page says `name` is logged in (`#whoami`).
    pub async fn logged_in(&self, name: &str) {
        self.wait(
            "logged in",
            WAIT,
            "return document.getElementById('whoami').textContent;",
            |shown| shown == name,
        )
        .await;
    }

    /// Waits until the hall page shows `board`: its table row
    /// (`tr[data-board]`) or its card (`#card-<id>`); returns the one the
    /// page has (`"row"` when both).
    pub async fn wait_for_board(&self, board: &str) -> String {
        let script = format!(
            "const id = {board};
             if (document.querySelector('tr[data-board=\"' + CSS.escape(id) + '\"]')) return 'row';
             return document.getElementById('card-' + id) ? 'card' : null;",
            board = serde_json::Value::from(board)
        );
        let seen = self
            .wait(&format!("board {board} on the page"), WAIT, &script, |v| {
                v.is_string()
            })
            .await;
        seen.as_str().unwrap().to_owned()
    }

    /// Saves a PNG of the page as `target/hall-screenshots/NAME.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let shot = self.client.screenshot().await.unwrap();
        assert!(shot.starts_with(b"\x89PNG"), "a PNG");
        let dir = screenshots();
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}.png"));
        std::fs::write(&file, shot).unwrap();
        file
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// `target/hall-screenshots/`: beside the build's temporary folder
/// (`CARGO_TARGET_TMPDIR` is `target/tmp`).
pub fn screenshots() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("hall-screenshots")
}
