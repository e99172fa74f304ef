//! The host side of the serial protocol for the simulator tests: opens a
//! unit's PTY path like the daemon does and exchanges frames with it, with
//! deadlines everywhere (nothing here can hang a test).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use chessclock_protocol::{encode, Accumulator, Feed, Frame, FrameError, Message, MAX_WIRE_FRAME};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

pub const WAIT: Duration = Duration::from_secs(5);

/// A received frame and when it arrived (CLOCK_MONOTONIC µs).
#[derive(Clone, Debug)]
pub struct Arrival {
    pub frame: Frame,
    pub at_us: i64,
}

pub struct Host {
    port: File,
    accumulator: Accumulator,
    seq: u8,
    pub errors: Vec<FrameError>,
    pub frames: Vec<Arrival>,
    /// The port hung up (unplug).
    pub gone: bool,
}

impl Host {
    /// Opens the port (raw already: the simulator made it so).
    pub fn open(path: &Path) -> Host {
        let port = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(path)
            .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
        // As the daemon does: forget what the device wrote before we came.
        let _ = nix::sys::termios::tcflush(port.as_fd(), nix::sys::termios::FlushArg::TCIFLUSH);
        Host {
            port,
            accumulator: Accumulator::new(),
            seq: 0,
            errors: Vec::new(),
            frames: Vec::new(),
            gone: false,
        }
    }

    pub fn send(&mut self, message: Message) {
        let mut wire = [0u8; MAX_WIRE_FRAME];
        let frame = Frame {
            seq: self.seq,
            message,
        };
        self.seq = self.seq.wrapping_add(1);
        let len = encode(&frame, &mut wire).expect("encodable");
        self.port.write_all(&wire[..len]).expect("write to the PTY");
    }

    pub fn welcome(&mut self, heartbeat_interval_ms: u16, link_timeout_ms: u16) {
        self.send(Message::Welcome {
            protocol_version: chessclock_protocol::PROTOCOL_VERSION,
            heartbeat_interval_ms,
            link_timeout_ms,
        });
    }

    /// Reads whatever arrives before `deadline`; false when nothing did.
    fn read_some(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || self.gone {
            return false;
        }
        let timeout = PollTimeout::try_from(left.as_millis().min(60_000) as i32 + 1)
            .unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.port.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
        let at_us = chessclock_host::clock::monotonic_now_us();
        let mut buf = [0u8; 1024];
        let n = match self.port.read(&mut buf) {
            Ok(0) => {
                self.gone = true;
                return false;
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(_) => {
                self.gone = true;
                return false;
            }
        };
        let mut rest: &[u8] = &buf[..n];
        loop {
            match self.accumulator.feed(rest) {
                Feed::NeedMore => break,
                Feed::Frame(frame, remaining) => {
                    self.frames.push(Arrival { frame, at_us });
                    rest = remaining;
                }
                Feed::Error(error, remaining) => {
                    self.errors.push(error);
                    rest = remaining;
                }
            }
        }
        true
    }

    /// The first frame (after those already taken) matching `wanted`,
    /// within `within`. Frames before it are consumed.
    pub fn expect(
        &mut self,
        within: Duration,
        what: &str,
        wanted: impl Fn(&Message) -> bool,
    ) -> Arrival {
        let deadline = Instant::now() + within;
        loop {
            if let Some(index) = self.frames.iter().position(|a| wanted(&a.frame.message)) {
                let found = self.frames[index].clone();
                self.frames.drain(..=index);
                return found;
            }
            self.frames.clear();
            if !self.read_some(deadline) && (Instant::now() >= deadline || self.gone) {
                panic!(
                    "no {what} within {within:?} (gone: {}, errors: {:?})",
                    self.gone, self.errors
                );
            }
        }
    }

    /// Collects every frame arriving within `period` (a bounded listen, used
    /// to check that something does NOT happen).
    pub fn listen(&mut self, period: Duration) -> Vec<Arrival> {
        let deadline = Instant::now() + period;
        while Instant::now() < deadline && !self.gone {
            self.read_some(deadline);
        }
        std::mem::take(&mut self.frames)
    }

    /// Reads until `done` holds for the host's state or `within` passes.
    pub fn until(&mut self, within: Duration, done: impl Fn(&Host) -> bool) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if done(self) {
                return true;
            }
            if Instant::now() >= deadline || (self.gone && !done(self)) {
                return done(self);
            }
            self.read_some(deadline);
        }
    }

    /// HELLO, WELCOME: returns the HELLO.
    pub fn handshake(
        &mut self,
        heartbeat_interval_ms: u16,
        link_timeout_ms: u16,
    ) -> chessclock_protocol::Hello {
        let hello = self.expect(WAIT, "HELLO", |m| matches!(m, Message::Hello(_)));
        self.welcome(heartbeat_interval_ms, link_timeout_ms);
        self.expect(WAIT, "first heartbeat", |m| {
            matches!(m, Message::DeviceHeartbeat { .. })
        });
        match hello.frame.message {
            Message::Hello(hello) => hello,
            _ => unreachable!(),
        }
    }
}

/// Polls `check` until it holds or `within` passes (file-system conditions
/// have no notification to wait on).
pub fn eventually(within: Duration, check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The JSON Lines of a log file.
pub fn log_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("log line {l:?}: {e}")))
        .collect()
}
