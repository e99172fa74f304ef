//! `chessclock-sim interactive` on a PTY of the test's own, as a terminal
//! emulator would run it: it ends, promptly and with a status, when its
//! terminal goes away and on SIGTERM / SIGINT, also while it still waits
//! for the terminal to answer its keyboard query (it used to spin at
//! 11-17 % CPU after a hang-up and to ignore SIGTERM for over 2 s).
//!
//! The PTY is not the child's controlling terminal, so closing it sends no
//! SIGHUP: the view has to notice the hang-up itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::pty::{openpty, Winsize};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The generous bound of the assertions (the machine may be loaded); the
/// times measured are printed (`--nocapture`).
const EXIT_WITHIN: Duration = Duration::from_secs(10);

/// The primary device attributes, as a VT220-class terminal answers them.
const DEVICE_ATTRIBUTES: &[u8] = b"\x1B[?62;22c";

/// One test at a time: a child started by another test must not inherit
/// this test's PTY master (`openpty` does not set close-on-exec), or
/// closing it would not close the terminal.
static SERIAL: Mutex<()> = Mutex::new(());

/// The simulator on a PTY; the test holds the terminal's side (the master).
struct Interactive {
    _serial: MutexGuard<'static, ()>,
    child: Child,
    terminal: Option<File>,
    /// Everything the simulator wrote, for the checks and the messages.
    seen: Vec<u8>,
}

impl Drop for Interactive {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Interactive {
    /// On a terminal of 120 × 40.
    fn start(dir: &Path) -> Interactive {
        Interactive::start_sized(dir, 120, 40)
    }

    fn start_sized(dir: &Path, columns: u16, rows: u16) -> Interactive {
        let size = Winsize {
            ws_row: rows,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let pty = openpty(Some(&size), None).unwrap();
        for fd in [&pty.master, &pty.slave] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).unwrap();
        }
        let slave = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
        let child = Command::new(kit::binary("chessclock-sim"))
            .arg("interactive")
            .arg("--link")
            .arg(format!("buttons={}", dir.join("buttons").display()))
            .arg("--link")
            .arg(format!("display={}", dir.join("display").display()))
            .stdin(slave(&pty.slave))
            .stdout(slave(&pty.slave))
            .stderr(slave(&pty.slave))
            .spawn()
            .expect("starting chessclock-sim interactive");
        drop(pty.slave);
        Interactive {
            _serial: serial,
            child,
            terminal: Some(File::from(pty.master)),
            seen: Vec::new(),
        }
    }

    /// Reads what the simulator wrote for at most `within` (keeping its
    /// writes from blocking); true once `done(all output so far)`.
    fn read_until(&mut self, within: Duration, done: impl Fn(&[u8]) -> bool) -> bool {
        let deadline = Instant::now() + within;
        while !done(&self.seen) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.read_for(left.min(Duration::from_millis(50))) {
                return done(&self.seen);
            }
        }
        true
    }

    /// Reads for at most `within`; false once the terminal has nothing more
    /// to give (the simulator closed its side or exited).
    fn read_for(&mut self, within: Duration) -> bool {
        let Some(terminal) = self.terminal.as_mut() else {
            return false;
        };
        let mut fds = [PollFd::new(terminal.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(within).unwrap();
        if poll(&mut fds, timeout).unwrap_or(0) == 0 {
            return true;
        }
        let mut buffer = [0u8; 4096];
        match terminal.read(&mut buffer) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.seen.extend_from_slice(&buffer[..n]);
                true
            }
        }
    }

    /// Waits for the keyboard query and answers it (no kitty protocol).
    fn answer_the_query(&mut self) {
        assert!(
            self.read_until(kit::WAIT, |seen| contains(seen, b"\x1B[c")),
            "no keyboard query: {}",
            String::from_utf8_lossy(&self.seen)
        );
        use std::io::Write;
        self.terminal
            .as_mut()
            .unwrap()
            .write_all(DEVICE_ATTRIBUTES)
            .unwrap();
    }

    /// The view is up: the keyboard query answered and the units drawn.
    fn drawn(&mut self) {
        self.answer_the_query();
        assert!(
            self.read_until(kit::WAIT, |seen| contains(seen, b"simulating")),
            "the view was not drawn: {}",
            String::from_utf8_lossy(&self.seen)
        );
    }

    /// Waits for the exit, reading the terminal meanwhile (while it is
    /// open); the status and how long it took.
    fn exit_within(&mut self, within: Duration) -> (ExitStatus, Duration) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, start.elapsed());
            }
            assert!(
                start.elapsed() < within,
                "chessclock-sim interactive still runs {within:?} later"
            );
            if self.terminal.is_none() || !self.read_for(Duration::from_millis(10)) {
                // nothing to read from: poll the child alone
                let mut none: [PollFd; 0] = [];
                let _ = poll(&mut none, PollTimeout::from(10u8));
            }
        }
    }

    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn links_removed(dir: &Path) {
    for name in ["buttons", "display"] {
        assert!(
            std::fs::symlink_metadata(dir.join(name)).is_err(),
            "{name}'s symlink is left behind"
        );
    }
}

#[test]
fn a_closed_terminal_ends_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Interactive::start(dir.path());
    sim.drawn();
    sim.terminal = None; // the terminal emulator closes its window
    let (status, took) = sim.exit_within(EXIT_WITHIN);
    eprintln!("closed terminal: exit {status} after {took:?}");
    assert!(status.code().is_some(), "ended by a signal: {status}");
    links_removed(dir.path());
}

#[test]
fn a_terminal_closed_before_it_answered_ends_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Interactive::start(dir.path());
    assert!(sim.read_until(kit::WAIT, |seen| contains(seen, b"\x1B[c")));
    sim.terminal = None;
    let (status, took) = sim.exit_within(EXIT_WITHIN);
    eprintln!("terminal closed during the keyboard query: exit {status} after {took:?}");
    assert!(status.code().is_some(), "ended by a signal: {status}");
}

#[test]
fn sigterm_ends_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Interactive::start(dir.path());
    sim.drawn();
    sim.signal(Signal::SIGTERM);
    let (status, took) = sim.exit_within(EXIT_WITHIN);
    eprintln!("SIGTERM: exit {status} after {took:?}");
    assert_eq!(status.code(), Some(0), "{status}");
    links_removed(dir.path());
    // the terminal is given back: the alternate screen left, the cursor shown
    assert!(sim.read_until(kit::WAIT, |seen| contains(seen, b"\x1B[?1049l")));
}

/// A terminal that never answers the keyboard query: SIGTERM used to wait
/// for the query's 2 s to run out. The bound here is below those 2 s (it
/// has to be, to tell), far above the ~50 ms the exit takes.
#[test]
fn sigterm_ends_the_view_while_it_waits_for_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Interactive::start(dir.path());
    assert!(sim.read_until(kit::WAIT, |seen| contains(seen, b"\x1B[c")));
    sim.signal(Signal::SIGTERM);
    let (status, took) = sim.exit_within(EXIT_WITHIN);
    eprintln!("SIGTERM during the keyboard query: exit {status} after {took:?}");
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(
        took < Duration::from_millis(1_500),
        "SIGTERM waited for the keyboard query ({took:?})"
    );
    links_removed(dir.path());
}

#[test]
fn sigint_ends_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Interactive::start(dir.path());
    sim.drawn();
    sim.signal(Signal::SIGINT);
    let (status, took) = sim.exit_within(EXIT_WITHIN);
    eprintln!("SIGINT: exit {status} after {took:?}");
    assert_eq!(status.code(), Some(0), "{status}");
    links_removed(dir.path());
}

/// A terminal that is there but reads nothing: the view blocks in a write
/// (a first frame of 1000 × 300 cells is far more than a PTY holds, and
/// the test stops reading a few kilobytes into it), and SIGTERM still ends
/// the program, after its grace, without the view.
#[test]
fn sigterm_ends_the_view_on_a_terminal_nobody_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Interactive::start_sized(dir.path(), 1000, 300);
    sim.answer_the_query();
    let asked = sim.seen.len();
    assert!(
        sim.read_until(kit::WAIT, |seen| seen.len() > asked + 8192),
        "the first frame did not come"
    );
    let pending = std::mem::take(&mut sim.terminal); // open, never read again
    sim.signal(Signal::SIGTERM);
    let (status, took) = sim.exit_within(EXIT_WITHIN);
    eprintln!("SIGTERM on a terminal nobody reads: exit {status} after {took:?}");
    assert_eq!(status.code(), Some(0), "{status}");
    links_removed(dir.path());
    drop(pending);
}
