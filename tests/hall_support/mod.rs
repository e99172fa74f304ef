//! A mosquitto of the test's own, for the hall tests: on a free port of
//! 127.0.0.1, no persistence, killed when dropped.
#![allow(dead_code)] // each test file uses its own part

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
        let mut broker = Broker {
            port,
            config,
            log: dir.join("mosquitto.log"),
            child: None,
        };
        broker.run();
        broker
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
