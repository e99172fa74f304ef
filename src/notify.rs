//! Telling systemd how the daemon is doing: `READY=1`, `STATUS=`,
//! `WATCHDOG=1`, `RELOADING=1`, `STOPPING=1` (the `sd_notify` protocol).
//!
//! Promises:
//! * Everything is a no-op when `NOTIFY_SOCKET` is unset or empty (a daemon run
//!   by hand, a test): methods return `Ok(false)` and touch nothing.
//! * A message is one datagram; `STATUS=` text is cut at the first line break
//!   so it cannot smuggle other assignments in.
//! * The watchdog is fed only while the timing thread proves it is alive:
//!   [`Watchdog::tick`] sends `WATCHDOG=1` only if the [`Liveness`] counter
//!   the timing thread bumps has advanced since the previous tick. A stuck
//!   timing thread therefore gets the service restarted by systemd
//!   (`WatchdogSec=` in the unit) even if the async side still runs.
//!
//! Contract for the timing thread: call [`Liveness::bump`] at least every
//! [`MAX_LIVENESS_GAP`] (cap its sleep at that when no deadline is nearer).

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest the timing thread may go without bumping its [`Liveness`].
/// Well under half of any sensible `WatchdogSec=`, so one slow wake-up never
/// withholds a ping.
pub const MAX_LIVENESS_GAP: Duration = Duration::from_secs(1);

/// A handle on the service manager's notification socket (or on nothing).
#[derive(Clone, Debug, Default)]
pub struct Notifier {
    socket: Option<OsString>,
}

impl Notifier {
    /// The socket named by `NOTIFY_SOCKET`, if any.
    pub fn from_env() -> Self {
        Self::from_socket_var(std::env::var_os("NOTIFY_SOCKET"))
    }

    /// The socket named by a `NOTIFY_SOCKET` value: a path, or `@name` for
    /// an abstract socket. `None` or empty: a disabled notifier.
    pub fn from_socket_var(value: Option<OsString>) -> Self {
        Notifier {
            socket: value.filter(|v| !v.is_empty()),
        }
    }

    /// A notifier that sends nothing.
    pub fn disabled() -> Self {
        Notifier { socket: None }
    }

    /// Whether a service manager listens.
    pub fn is_enabled(&self) -> bool {
        self.socket.is_some()
    }

    /// `READY=1` with a status line: the service is up.
    pub fn ready(&self, status: &str) -> io::Result<bool> {
        self.send(&["READY=1".to_owned(), status_line(status)])
    }

    /// A new status line for `systemctl status`.
    pub fn status(&self, status: &str) -> io::Result<bool> {
        self.send(&[status_line(status)])
    }

    /// `WATCHDOG=1`: prefer [`Watchdog::tick`], which checks liveness first.
    pub fn watchdog(&self) -> io::Result<bool> {
        self.send(&["WATCHDOG=1".to_owned()])
    }

    /// `RELOADING=1` (send [`Notifier::ready`] again when the reload is done).
    pub fn reloading(&self, status: &str) -> io::Result<bool> {
        self.send(&["RELOADING=1".to_owned(), status_line(status)])
    }

    /// `STOPPING=1`: the service is shutting down on purpose.
    pub fn stopping(&self, status: &str) -> io::Result<bool> {
        self.send(&["STOPPING=1".to_owned(), status_line(status)])
    }

    /// Sends the assignments as one datagram; `Ok(false)` when disabled.
    fn send(&self, assignments: &[String]) -> io::Result<bool> {
        let Some(socket) = &self.socket else {
            return Ok(false);
        };
        let message = assignments.join("\n") + "\n";
        let address = socket_address(socket)?;
        let sock = UnixDatagram::unbound()?;
        let sent = sock.send_to_addr(message.as_bytes(), &address)?;
        if sent != message.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("notify socket took {sent} of {} bytes", message.len()),
            ));
        }
        Ok(true)
    }
}

fn status_line(status: &str) -> String {
    let first_line = status.split(['\n', '\r']).next().unwrap_or("");
    format!("STATUS={first_line}")
}

fn socket_address(socket: &OsStr) -> io::Result<SocketAddr> {
    let bytes = socket.as_bytes();
    match bytes.first() {
        Some(b'@') => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(&bytes[1..])
        }
        Some(b'/') => SocketAddr::from_pathname(socket),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("NOTIFY_SOCKET={socket:?} is neither an absolute path nor @abstract"),
        )),
    }
}

/// The watchdog timeout systemd expects pings within (`WATCHDOG_USEC`), if
/// the watchdog is enabled for this process.
pub fn watchdog_interval() -> Option<Duration> {
    let usec = std::env::var("WATCHDOG_USEC").ok();
    let pid = std::env::var("WATCHDOG_PID").ok();
    parse_watchdog(usec.as_deref(), pid.as_deref(), std::process::id())
}

/// [`watchdog_interval`] from explicit values (pure, for tests):
/// `WATCHDOG_USEC` must be a positive integer, and `WATCHDOG_PID`, when set,
/// must name this process (a child that inherited the variables must not
/// ping on the parent's behalf).
pub fn parse_watchdog(usec: Option<&str>, pid: Option<&str>, own_pid: u32) -> Option<Duration> {
    let usec: u64 = usec?.trim().parse().ok().filter(|&u| u > 0)?;
    if let Some(pid) = pid {
        if pid.trim().parse::<u32>().ok()? != own_pid {
            return None;
        }
    }
    Some(Duration::from_micros(usec))
}

/// A counter the timing thread bumps to prove it is alive. Cheap to clone;
/// one writer (the timing thread), one reader ([`Watchdog`]).
#[derive(Clone, Debug, Default)]
pub struct Liveness(Arc<AtomicU64>);

impl Liveness {
    pub fn new() -> Self {
        Self::default()
    }

    /// "Still here": call at least every [`MAX_LIVENESS_GAP`].
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// The current count.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What one [`Watchdog::tick`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ping {
    /// `WATCHDOG=1` was sent.
    Sent,
    /// The timing thread did not bump its counter since the last tick:
    /// nothing sent, so systemd restarts the service if this goes on.
    Withheld,
    /// No watchdog configured or no notify socket: nothing to do.
    Disabled,
}

/// Feeds systemd's watchdog while the timing thread is alive.
pub struct Watchdog {
    notifier: Notifier,
    progress: Box<dyn Fn() -> u64 + Send + Sync>,
    timeout: Option<Duration>,
    last_count: u64,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog")
            .field("notifier", &self.notifier)
            .field("timeout", &self.timeout)
            .field("last_count", &self.last_count)
            .finish_non_exhaustive()
    }
}

impl Watchdog {
    /// `timeout` is `WatchdogSec` as given by [`watchdog_interval`].
    pub fn new(notifier: Notifier, liveness: Liveness, timeout: Option<Duration>) -> Self {
        Self::with_counter(notifier, timeout, move || liveness.count())
    }

    /// Like [`Watchdog::new`], for a progress counter kept elsewhere (e.g.
    /// the runtime's own heartbeat): `progress` returns its current value.
    pub fn with_counter(
        notifier: Notifier,
        timeout: Option<Duration>,
        progress: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Self {
        let last_count = progress();
        Watchdog {
            notifier,
            progress: Box::new(progress),
            timeout,
            last_count,
        }
    }

    /// From `NOTIFY_SOCKET` and `WATCHDOG_USEC`.
    pub fn from_env(liveness: Liveness) -> Self {
        Self::new(Notifier::from_env(), liveness, watchdog_interval())
    }

    /// How often to call [`Watchdog::tick`]: half the timeout, as systemd
    /// recommends. `None` when the watchdog is off.
    pub fn tick_period(&self) -> Option<Duration> {
        if !self.notifier.is_enabled() {
            return None;
        }
        self.timeout.map(|t| (t / 2).max(Duration::from_millis(1)))
    }

    /// Pings if the timing thread advanced its counter since the last tick.
    pub fn tick(&mut self) -> io::Result<Ping> {
        if self.tick_period().is_none() {
            return Ok(Ping::Disabled);
        }
        let count = (self.progress)();
        if count == self.last_count {
            return Ok(Ping::Withheld);
        }
        self.last_count = count;
        self.notifier.watchdog()?;
        Ok(Ping::Sent)
    }

    /// Ticks every [`Watchdog::tick_period`] until `shutdown` completes;
    /// returns at once when the watchdog is off. Logs a withheld ping once
    /// per stall and a send error once per failure streak.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        let Some(period) = self.tick_period() else {
            return;
        };
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        let mut last = Ping::Sent;
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                _ = ticker.tick() => {}
            }
            match self.tick() {
                Ok(Ping::Withheld) if last != Ping::Withheld => {
                    last = Ping::Withheld;
                    tracing::error!(
                        "timing thread made no progress for {period:?}: withholding the watchdog ping"
                    );
                }
                Ok(ping) => {
                    if ping == Ping::Sent && last == Ping::Withheld {
                        tracing::warn!("timing thread alive again: watchdog pings resumed");
                    }
                    last = ping;
                }
                Err(error) => {
                    if last != Ping::Disabled {
                        tracing::warn!(%error, "cannot send the watchdog ping");
                    }
                    // Reuse `Disabled` as "failing" so the error is logged once.
                    last = Ping::Disabled;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake service manager: a datagram socket in a temporary folder.
    struct FakeManager {
        _dir: tempfile::TempDir,
        socket: UnixDatagram,
        path: std::path::PathBuf,
    }

    impl FakeManager {
        fn new() -> Self {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("notify");
            let socket = UnixDatagram::bind(&path).expect("bind fake notify socket");
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            FakeManager {
                _dir: dir,
                socket,
                path,
            }
        }

        fn notifier(&self) -> Notifier {
            Notifier::from_socket_var(Some(self.path.clone().into_os_string()))
        }

        fn receive(&self) -> String {
            let mut buf = [0u8; 4096];
            let n = self.socket.recv(&mut buf).expect("a datagram");
            String::from_utf8(buf[..n].to_vec()).expect("utf-8")
        }

        fn nothing_pending(&self) -> bool {
            self.socket.set_nonblocking(true).unwrap();
            let mut buf = [0u8; 64];
            let pending = self.socket.recv(&mut buf).is_ok();
            self.socket.set_nonblocking(false).unwrap();
            !pending
        }
    }

    #[test]
    fn ready_arrives_with_its_status() {
        let manager = FakeManager::new();
        assert!(manager.notifier().ready("2 boards, 3 devices").unwrap());
        assert_eq!(manager.receive(), "READY=1\nSTATUS=2 boards, 3 devices\n");
    }

    #[test]
    fn watchdog_status_reloading_and_stopping_arrive() {
        let manager = FakeManager::new();
        let notifier = manager.notifier();
        notifier.watchdog().unwrap();
        assert_eq!(manager.receive(), "WATCHDOG=1\n");
        notifier.status("board a: running").unwrap();
        assert_eq!(manager.receive(), "STATUS=board a: running\n");
        notifier.reloading("reloading config").unwrap();
        assert_eq!(manager.receive(), "RELOADING=1\nSTATUS=reloading config\n");
        notifier.stopping("saving").unwrap();
        assert_eq!(manager.receive(), "STOPPING=1\nSTATUS=saving\n");
    }

    #[test]
    fn a_status_cannot_inject_other_assignments() {
        let manager = FakeManager::new();
        manager.notifier().status("fine\nREADY=1").unwrap();
        assert_eq!(manager.receive(), "STATUS=fine\n");
    }

    #[test]
    fn without_notify_socket_everything_is_a_no_op() {
        for notifier in [
            Notifier::disabled(),
            Notifier::from_socket_var(None),
            Notifier::from_socket_var(Some(OsString::new())),
        ] {
            assert!(!notifier.is_enabled());
            assert!(!notifier.ready("x").unwrap());
            assert!(!notifier.watchdog().unwrap());
        }
        let mut dog = Watchdog::new(
            Notifier::disabled(),
            Liveness::new(),
            Some(Duration::from_secs(10)),
        );
        assert_eq!(dog.tick_period(), None);
        assert_eq!(dog.tick().unwrap(), Ping::Disabled);
    }

    #[test]
    fn a_vanished_manager_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let notifier = Notifier::from_socket_var(Some(dir.path().join("gone").into_os_string()));
        assert!(notifier.ready("x").is_err());
        let relative = Notifier::from_socket_var(Some("relative/path".into()));
        assert_eq!(
            relative.watchdog().unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn abstract_sockets_are_reached_by_their_at_name() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("chessclockd-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let socket = UnixDatagram::bind_addr(&addr).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        Notifier::from_socket_var(Some(format!("@{name}").into()))
            .watchdog()
            .unwrap();
        let mut buf = [0u8; 64];
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"WATCHDOG=1\n");
    }

    #[test]
    fn watchdog_usec_is_parsed_and_checked_against_the_pid() {
        assert_eq!(
            parse_watchdog(Some("10000000"), None, 42),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_watchdog(Some("10000000"), Some("42"), 42),
            Some(Duration::from_secs(10))
        );
        assert_eq!(parse_watchdog(Some("10000000"), Some("41"), 42), None);
        assert_eq!(parse_watchdog(Some("10000000"), Some("junk"), 42), None);
        assert_eq!(parse_watchdog(Some("0"), None, 42), None);
        assert_eq!(parse_watchdog(Some("ten"), None, 42), None);
        assert_eq!(parse_watchdog(None, Some("42"), 42), None);
    }

    #[test]
    fn the_watchdog_pings_only_after_the_timing_thread_made_progress() {
        let manager = FakeManager::new();
        let liveness = Liveness::new();
        let mut dog = Watchdog::new(
            manager.notifier(),
            liveness.clone(),
            Some(Duration::from_secs(10)),
        );
        assert_eq!(dog.tick_period(), Some(Duration::from_secs(5)));

        // Nothing happened since the watchdog was made: no ping.
        assert_eq!(dog.tick().unwrap(), Ping::Withheld);
        assert!(manager.nothing_pending());

        liveness.bump();
        assert_eq!(dog.tick().unwrap(), Ping::Sent);
        assert_eq!(manager.receive(), "WATCHDOG=1\n");

        // Stalled again: withheld, however often we tick.
        assert_eq!(dog.tick().unwrap(), Ping::Withheld);
        assert_eq!(dog.tick().unwrap(), Ping::Withheld);
        assert!(manager.nothing_pending());

        // Many bumps between ticks still mean one ping.
        liveness.bump();
        liveness.bump();
        liveness.bump();
        assert_eq!(dog.tick().unwrap(), Ping::Sent);
        assert_eq!(manager.receive(), "WATCHDOG=1\n");
        assert!(manager.nothing_pending());
    }

    #[test]
    fn an_external_counter_drives_the_watchdog_too() {
        let manager = FakeManager::new();
        let counter = Arc::new(AtomicU64::new(7));
        let mut dog = Watchdog::with_counter(manager.notifier(), Some(Duration::from_secs(4)), {
            let counter = counter.clone();
            move || counter.load(Ordering::Relaxed)
        });
        assert_eq!(dog.tick_period(), Some(Duration::from_secs(2)));
        assert_eq!(dog.tick().unwrap(), Ping::Withheld);
        counter.store(8, Ordering::Relaxed);
        assert_eq!(dog.tick().unwrap(), Ping::Sent);
        assert_eq!(manager.receive(), "WATCHDOG=1\n");
    }

    #[test]
    fn without_a_timeout_the_watchdog_is_off_even_with_a_socket() {
        let manager = FakeManager::new();
        let liveness = Liveness::new();
        let mut dog = Watchdog::new(manager.notifier(), liveness.clone(), None);
        liveness.bump();
        assert_eq!(dog.tick().unwrap(), Ping::Disabled);
        assert!(manager.nothing_pending());
    }

    #[test]
    fn run_pings_while_alive_and_stops_on_shutdown() {
        let manager = FakeManager::new();
        let liveness = Liveness::new();
        let dog = Watchdog::new(
            manager.notifier(),
            liveness.clone(),
            Some(Duration::from_millis(20)),
        );
        liveness.bump();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        // The first interval tick is immediate, so one ping is due at once;
        // shutdown then ends the loop (the test would hang otherwise, and the
        // outer timeout makes that a failure instead).
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        runtime.block_on(async {
            let task = tokio::spawn(dog.run(async {
                let _ = stop_rx.await;
            }));
            let received = tokio::task::spawn_blocking({
                let socket = manager.socket.try_clone().unwrap();
                move || {
                    let mut buf = [0u8; 64];
                    let n = socket.recv(&mut buf).expect("a ping within 5 s");
                    String::from_utf8(buf[..n].to_vec()).unwrap()
                }
            })
            .await
            .unwrap();
            assert_eq!(received, "WATCHDOG=1\n");
            stop_tx.send(()).unwrap();
            tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .expect("run returns after shutdown")
                .unwrap();
        });
    }
}
