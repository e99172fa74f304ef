//! The terminal the interactive view reads its keys from, watched so that
//! the view ends as soon as the terminal goes away or its stop condition
//! comes true.
//!
//! Why crossterm's reader is not left to wait on its own: on a terminal that
//! hung up, its poll retries a read of 0 bytes (or EIO) at once, forever,
//! whatever the timeout, so the view never looked at its stop condition
//! again and kept a CPU busy; and its keyboard-protocol query waits up to
//! 2 s for an answer, which no signal can cut short. Here the terminal is
//! polled first: a hang-up ends the view, crossterm only parses bytes that
//! have arrived, and the query is ours, asked again every
//! [`STEP`] whether to stop.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// How long one wait lasts at most before the caller looks at its stop
/// condition again.
pub const STEP: Duration = Duration::from_millis(40);

/// What the terminal has for us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    /// Bytes to read (keys).
    Input,
    /// Nothing within the wait.
    Idle,
    /// The terminal went away: hung up, closed or in error.
    Gone,
}

/// Where keys come from: standard input when it is a terminal, else
/// `/dev/tty` (where crossterm reads them too).
pub enum KeyInput {
    Stdin(io::Stdin),
    Tty(File),
}

impl KeyInput {
    pub fn open() -> io::Result<KeyInput> {
        let stdin = io::stdin();
        if nix::unistd::isatty(stdin.as_fd()).unwrap_or(false) {
            return Ok(KeyInput::Stdin(stdin));
        }
        let tty = File::options().read(true).write(true).open("/dev/tty")?;
        Ok(KeyInput::Tty(tty))
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            KeyInput::Stdin(stdin) => stdin.as_fd(),
            KeyInput::Tty(file) => file.as_fd(),
        }
    }

    /// Waits at most `timeout` for input. A signal cuts the wait short
    /// ([`Ready::Idle`]).
    pub fn wait(&self, timeout: Duration) -> io::Result<Ready> {
        let timeout = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) | Err(Errno::EINTR) => Ok(Ready::Idle),
            Ok(_) => {
                let events = fds[0].revents().unwrap_or(PollFlags::empty());
                Ok(readiness(events))
            }
            Err(errno) => Err(errno.into()),
        }
    }

    /// Whether the terminal is gone (or cannot be polled), without waiting.
    pub fn gone(&self) -> bool {
        !matches!(self.wait(Duration::ZERO), Ok(Ready::Input | Ready::Idle))
    }

    /// Asks the terminal whether it speaks the kitty keyboard protocol (the
    /// flags query, then the primary device attributes, which every terminal
    /// answers; the method crossterm uses). The answer is read here, so the
    /// wait ends at once when `stop()` comes true or the terminal goes away
    /// (`Ok(None)`); no answer within `timeout` counts as no.
    pub fn kitty_keyboard(
        &self,
        out: &mut impl Write,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> io::Result<Option<bool>> {
        out.write_all(b"\x1B[?u\x1B[c")?;
        out.flush()?;
        let deadline = Instant::now() + timeout;
        let mut answer = Vec::new();
        let mut buffer = [0u8; 256];
        loop {
            if stop() {
                return Ok(None);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Some(false));
            }
            match self.wait(left.min(STEP))? {
                Ready::Gone => return Ok(None),
                Ready::Idle => continue,
                Ready::Input => {}
            }
            match nix::unistd::read(self.fd(), &mut buffer) {
                Ok(0) => return Ok(None),
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
                Err(Errno::EINTR | Errno::EAGAIN) => continue,
                Err(_) => return Ok(None),
            }
            if let Some(kitty) = query_answer(&answer) {
                return Ok(Some(kitty));
            }
            if answer.len() > 4096 {
                // keys typed meanwhile; an answer is short
                answer.drain(..answer.len() - 64);
            }
        }
    }
}

/// What poll's `events` say about the terminal.
fn readiness(events: PollFlags) -> Ready {
    if events.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL) {
        Ready::Gone
    } else if events.contains(PollFlags::POLLIN) {
        Ready::Input
    } else {
        Ready::Idle
    }
}

/// The answer to the kitty keyboard query in `bytes` once it is complete
/// (the primary device attributes `ESC [ ? ... c` arrived): whether the
/// flags report `ESC [ ? flags u` came before it.
fn query_answer(bytes: &[u8]) -> Option<bool> {
    let mut kitty = false;
    let mut rest = bytes;
    while let Some(at) = rest.windows(3).position(|w| w == b"\x1B[?") {
        let tail = &rest[at + 3..];
        let end = tail
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
        match tail[end] {
            b'u' => kitty = true,
            b'c' => return Some(kitty),
            _ => {}
        }
        rest = &tail[end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_answered_by_the_device_attributes() {
        assert_eq!(query_answer(b""), None);
        assert_eq!(query_answer(b"\x1B[?1u"), None, "no attributes yet");
        assert_eq!(query_answer(b"\x1B[?1u\x1B[?62;22"), None, "incomplete");
        assert_eq!(query_answer(b"\x1B[?1u\x1B[?62;22c"), Some(true));
        assert_eq!(query_answer(b"\x1B[?0u\x1B[?6c"), Some(true));
        assert_eq!(query_answer(b"\x1B[?62;22c"), Some(false));
        assert_eq!(query_answer(b"az\x1B[?6c"), Some(false), "keys before");
        assert_eq!(query_answer(b"\x1B[?x\x1B[?1;2c"), Some(false));
    }

    #[test]
    fn a_hang_up_or_an_error_is_gone_whatever_else_is_set() {
        assert_eq!(readiness(PollFlags::POLLIN), Ready::Input);
        assert_eq!(readiness(PollFlags::empty()), Ready::Idle);
        for gone in [PollFlags::POLLHUP, PollFlags::POLLERR, PollFlags::POLLNVAL] {
            assert_eq!(readiness(gone | PollFlags::POLLIN), Ready::Gone);
        }
    }
}
