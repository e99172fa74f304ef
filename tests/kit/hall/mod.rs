//! The hall's services for the tests: a mosquitto of the test's own (on a
//! free port of 127.0.0.1, no persistence, killed when dropped), the hub
//! and a fake lichess ([`round`]), a TLS hall built by
//! `scripts/hall-credentials` ([`secure`]), a browser ([`browser`]), an MQTT
//! watcher ([`watch`]), the event desk's set-up ([`event`]) and an
//! independent TRF reader ([`trf`]). A hub with arbiters
//! ([`Hub::with_arbiters`]) reads the password file [`arbiters`] writes
//! into the test's folder; [`Hub::log_in`] logs one in over the API,
//! [`browser::Browser::log_in`] through a page's login form.

pub mod browser;
pub mod event;
pub mod round;
pub mod secure;
pub mod trf;
pub mod watch;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The longest any condition of the hall tests is waited for.
pub const WAIT: Duration = Duration::from_secs(10);

/// A mosquitto of the test's own.
pub struct Broker {
    pub port: u16,
    config: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Broker {
    pub fn start(dir: &Path) -> Broker {
        Broker::start_with(dir, "allow_anonymous true\n")
    }

    /// Only the users of the password file (`user password` pairs) get in.
    /// `acl`: the text of an ACL file (empty: none).
    pub fn with_users(dir: &Path, users: &[(&str, &str)], acl: &str) -> Broker {
        let file = dir.join("passwords");
        for (index, (user, password)) in users.iter().enumerate() {
            let mut command = Command::new("mosquitto_passwd");
            if index == 0 {
                command.arg("-c");
            }
            let status = command
                .arg("-b")
                .arg(&file)
                .args([user, password])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("mosquitto_passwd is installed (package mosquitto)");
            assert!(status.success());
        }
        // As root, mosquitto would drop to its own user, who cannot read
        // the test's folder: it stays the test's user.
        let mut access = format!(
            "allow_anonymous false\npassword_file {}\nuser root\n",
            file.display()
        );
        if !acl.is_empty() {
            let acl_file = dir.join("acl");
            std::fs::write(&acl_file, acl).unwrap();
            access.push_str(&format!("acl_file {}\n", acl_file.display()));
        }
        Broker::start_with(dir, &access)
    }

    /// TLS only: a CA and a certificate for 127.0.0.1 made with openssl
    /// in `dir` (the CA's PEM is `dir/ca.pem`).
    pub fn with_tls(dir: &Path) -> Broker {
        let run = |args: &[&str]| {
            let status = Command::new("openssl")
                .args(args)
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("openssl is installed (scripts/setup-debian)");
            assert!(status.success(), "openssl {args:?}");
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        run(&[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=hall-test-ca",
            ],
        ]
        .concat());
        run(&[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat());
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        // As root, mosquitto would drop to its own user, who cannot read
        // the key in the test's folder.
        Broker::start_with(
            dir,
            &format!(
                "allow_anonymous true\nuser root\ncafile {0}/ca.pem\ncertfile {0}/server.pem\n\
                 keyfile {0}/server.key\n",
                dir.display()
            ),
        )
    }

    pub fn start_with(dir: &Path, access: &str) -> Broker {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.join("mosquitto.conf");
        std::fs::write(
            &config,
            format!("listener {port} 127.0.0.1\npersistence false\n{access}"),
        )
        .unwrap();
        Broker::with_config(port, config, dir.join("mosquitto.log"))
    }

    /// mosquitto on `port` with the configuration file `config`, its log in
    /// `log`, listening when this returns.
    pub fn with_config(port: u16, config: PathBuf, log: PathBuf) -> Broker {
        let mut broker = Broker {
            port,
            config,
            log,
            child: None,
        };
        broker.run();
        broker
    }

    /// What mosquitto wrote to its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Starts mosquitto (again) on the port and waits until it listens.
    pub fn run(&mut self) {
        let program = ["/usr/sbin/mosquitto", "mosquitto"]
            .into_iter()
            .find(|p| !p.starts_with('/') || Path::new(p).exists())
            .unwrap();
        let deadline = Instant::now() + WAIT;
        loop {
            let mut child = Command::new(program)
                .arg("-c")
                .arg(&self.config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&self.log).unwrap())
                .spawn()
                .expect("mosquitto is installed (scripts/setup-debian)");
            // Listening, or exited (the port is still held by the old one
            // in TIME_WAIT: try again).
            loop {
                if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                    self.child = Some(child);
                    return;
                }
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "mosquitto did not listen on {}: {}",
                    self.port,
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(
                Instant::now() < deadline,
                "mosquitto would not start: {}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// mosquitto's process id while it runs (to freeze it with SIGSTOP).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The arbiter of the kit's password file ([`arbiters`]): her name...
pub const ARBITER: &str = "ann";
/// ...and her password.
pub const ARBITER_PASSWORD: &str = "correct horse";

/// `dir/arbiters`, the arbiters' password file with [`ARBITER`] in it,
/// made as an organiser makes it (`chessclock-hall passwd`). Made at the
/// first call; a later call (a hub started again) gets the same file.
pub fn arbiters(dir: &Path) -> PathBuf {
    let file = dir.join("arbiters");
    if !file.exists() {
        browser::add_arbiter(&file, ARBITER, ARBITER_PASSWORD);
    }
    file
}

/// The hall screen token every kit [`Hub`] takes (`--screen-tokens`):
/// [`Hub::get`] and [`Hub::wait_for`] send it, as a hall screen would, to
/// read live data; [`Hub::get_anonymous`] sends nothing.
pub const SCREEN_TOKEN: &str = "kit-screen-0123456789abcdef";

/// `chessclock-hall` of the test's own, for hall `open`, killed when
/// dropped.
pub struct Hub {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Hub {
    /// Starts the hub on a free port with `extra` arguments, its log in
    /// `dir`, and waits until it listens.
    pub async fn start(broker_port: u16, dir: &Path, extra: &[&str]) -> Hub {
        let port = round::free_port();
        Hub::start_on(
            broker_port,
            port,
            dir.join(format!("hub-{port}.log")),
            extra,
        )
        .await
    }

    /// [`Hub::start`] with `--passwords` the file of [`arbiters`]`(dir)`:
    /// [`ARBITER`] can log in.
    pub async fn with_arbiters(broker_port: u16, dir: &Path, extra: &[&str]) -> Hub {
        let passwords = arbiters(dir);
        let mut args = vec!["--passwords", passwords.to_str().unwrap()];
        args.extend_from_slice(extra);
        Hub::start(broker_port, dir, &args).await
    }

    /// Starts the hub on `port` (a hub started again on the port a page
    /// knows), its log in `log`, and waits until it listens.
    pub async fn start_on(broker_port: u16, port: u16, log: PathBuf, extra: &[&str]) -> Hub {
        Hub::start_limited(broker_port, port, log, None, extra).await
    }

    /// As [`Hub::start_on`], with the open-files limit `nofile` (soft and
    /// hard, set by `sh`'s `ulimit -n` before the hub starts) if given.
    pub async fn start_limited(
        broker_port: u16,
        port: u16,
        log: PathBuf,
        nofile: Option<u32>,
        extra: &[&str],
    ) -> Hub {
        let tokens = log.with_extension("screen-tokens");
        std::fs::write(&tokens, format!("{SCREEN_TOKEN}\n")).unwrap();
        let binary = crate::kit::binary("chessclock-hall");
        let mut command = match nofile {
            Some(nofile) => {
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
                    .arg(binary);
                sh
            }
            None => Command::new(binary),
        };
        if !extra.contains(&"--screen-tokens") {
            command.arg("--screen-tokens").arg(&tokens);
        }
        let child = command
            .args(["--broker", &format!("mqtt://127.0.0.1:{broker_port}")])
            .args([
                "--hall",
                round::HALL,
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let hub = Hub { child, port, log };
        let deadline = Instant::now() + WAIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "the hub did not listen: {}",
                hub.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        hub
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The hub's process id (to freeze it with SIGSTOP).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `http://127.0.0.1:PORT` and `path` (`/`, `/board/b1`...).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// [`Hub::url`] as a hall screen opens it: with [`SCREEN_TOKEN`].
    pub fn screen_url(&self, path: &str) -> String {
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("{}{sep}token={SCREEN_TOKEN}", self.url(path))
    }

    /// `GET path` as a hall screen (with [`SCREEN_TOKEN`]): status,
    /// headers (lower-case names), body.
    pub async fn get(&self, path: &str, headers: &str) -> (u16, String, String) {
        let headers = format!("Authorization: Bearer {SCREEN_TOKEN}\r\n{headers}");
        round::get(self.port, path, &headers).await
    }

    /// `GET path` with no login and no token.
    pub async fn get_anonymous(&self, path: &str, headers: &str) -> (u16, String, String) {
        round::get(self.port, path, headers).await
    }

    /// Logs `name` in with `password` through `POST /api/login` (as the
    /// pages do); fails the test unless the hub answers 200.
    pub async fn log_in(&self, name: &str, password: &str) -> Session {
        let login = browser::request(
            self.port,
            "POST",
            "/api/login",
            &[("Content-Type", "application/json")],
            &serde_json::json!({"user": name, "password": password}).to_string(),
        )
        .await;
        assert_eq!(login.status, 200, "{login:?}");
        let cookie = login.header("set-cookie").unwrap();
        Session {
            cookie: cookie.split(';').next().unwrap().to_owned(),
            csrf: login.json()["csrf"].as_str().unwrap().to_owned(),
        }
    }

    /// Waits until the hub has a state of each of `ids` (its
    /// `/boards.json`); returns that answer.
    pub async fn wait_for_boards(&self, ids: &[&str]) -> serde_json::Value {
        let body = self
            .wait_for("/boards.json", &format!("{ids:?} on the hub"), |body| {
                serde_json::from_str::<serde_json::Value>(body)
                    .is_ok_and(|v| ids.iter().all(|id| v["boards"][id].is_object()))
            })
            .await;
        serde_json::from_str(&body).unwrap()
    }

    /// Polls `path` until `ready` holds for its body; returns the body.
    pub async fn wait_for(&self, path: &str, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let (status, _, body) = self.get(path, "").await;
            if status == 200 && ready(&body) {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {path} answers {status}:\n{body}\nhub log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// An arbiter's session at a hub ([`Hub::log_in`]).
pub struct Session {
    /// The session cookie, `name=value`.
    pub cookie: String,
    /// The CSRF token her commands carry.
    pub csrf: String,
}

impl Session {
    /// The headers of her JSON commands: the content type, the cookie and
    /// the CSRF token.
    pub fn headers(&self) -> Vec<(String, String)> {
        vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Cookie".to_owned(), self.cookie.clone()),
            ("X-CSRF-Token".to_owned(), self.csrf.clone()),
        ]
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP/1.1 answer read to its end: status, head (as sent) and body
/// (a chunked body joined).
pub fn http_answer(answer: &str) -> (u16, String, String) {
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap();
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return (status, head.to_owned(), rest.to_owned());
    }
    let mut body = String::new();
    let mut rest = rest;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    (status, head.to_owned(), body)
}
