//! Private D-Bus daemons for the tests: session-style, or system-style with
//! the shipped policy. Each is the test's own child, listening on a socket
//! in a test folder, ready when it returns (or the test fails within 10 s),
//! killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A private `dbus-daemon`, killed when dropped.
pub struct PrivateBus {
    child: Child,
    pub address: String,
    /// The folder of its socket (and, system-style, of its config).
    folder: PathBuf,
    /// That folder, when the bus made it (not with [`PrivateBus::session_in`]).
    _owned: Option<tempfile::TempDir>,
}

impl PrivateBus {
    /// A session-style bus on `unix:path=DIR/bus`, in a folder of its own.
    pub fn session() -> PrivateBus {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut bus = PrivateBus::session_in(dir.path());
        bus._owned = Some(dir);
        bus
    }

    /// A session-style bus on `unix:path=DIR/bus` in the test's folder `dir`.
    pub fn session_in(dir: &Path) -> PrivateBus {
        let address = format!("unix:path={}/bus", dir.display());
        let child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .arg(format!("--address={address}"))
            .stdout(Stdio::piped())
            // It warns about fd limits it may not raise: noise.
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon must be installed (scripts/setup-debian)");
        PrivateBus::wait_ready(child, address, dir.to_owned(), None)
    }

    /// A system-style bus loaded with the shipped policy file (and only it):
    /// copied from /usr/share/dbus-1/system.conf with our listen address,
    /// user root, our include directory and no syslog.
    pub fn system_with_policy(policy: &Path) -> PrivateBus {
        let dir = tempfile::tempdir().expect("tempdir");
        // Other users must reach the socket.
        set_mode(dir.path(), 0o755);
        let includes = dir.path().join("system.d");
        std::fs::create_dir(&includes).unwrap();
        std::fs::copy(policy, includes.join("org.chessclockd.ChessClock1.conf")).unwrap();
        let address = format!("unix:path={}/system_bus_socket", dir.path().display());
        let original =
            std::fs::read_to_string("/usr/share/dbus-1/system.conf").expect("system.conf");
        let mut config = String::new();
        for line in original.lines() {
            let trimmed = line.trim();
            let replaced = if trimmed.starts_with("<listen>") {
                format!("  <listen>{address}</listen>")
            } else if trimmed.starts_with("<user>") {
                "  <user>root</user>".to_owned()
            } else if trimmed.starts_with("<includedir>") {
                format!("  <includedir>{}</includedir>", includes.display())
            } else if trimmed.starts_with("<include ")
                || trimmed == "<syslog/>"
                || trimmed == "<fork/>"
                || trimmed.starts_with("<pidfile>")
                || trimmed.starts_with("<servicehelper>")
                || trimmed == "<standard_system_servicedirs/>"
            {
                String::new()
            } else {
                line.to_owned()
            };
            config.push_str(&replaced);
            config.push('\n');
        }
        let config_path = dir.path().join("system.conf");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config_path.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            // It warns about fd limits it may not raise: noise.
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon must be installed (scripts/setup-debian)");
        PrivateBus::wait_ready(child, address, dir.path().to_owned(), Some(dir))
    }

    fn wait_ready(
        mut child: Child,
        address: String,
        folder: PathBuf,
        owned: Option<tempfile::TempDir>,
    ) -> PrivateBus {
        // dbus-daemon prints its address once it listens.
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) if !line.trim().is_empty() => {}
            other => {
                let _ = child.kill();
                panic!("dbus-daemon did not start: {other:?}");
            }
        }
        PrivateBus {
            child,
            address,
            folder,
            _owned: owned,
        }
    }

    /// The folder of the bus's socket.
    pub fn dir(&self) -> &Path {
        &self.folder
    }

    /// A connection builder for this bus.
    pub fn builder(&self) -> zbus::connection::Builder<'static> {
        zbus::connection::Builder::address(self.address.as_str())
    }

    pub async fn connect(&self) -> zbus::Connection {
        self.builder()
            .build()
            .await
            .expect("connect to the private bus")
    }

    /// The socket path (for tools taking a path).
    pub fn socket_path(&self) -> PathBuf {
        PathBuf::from(self.address.trim_start_matches("unix:path="))
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
