//! One daemon per state directory: an exclusive `flock` on
//! `chessclockd.lock` in the state directory, held for the daemon's life
//! (the lock itself is [`chessclock_host::dirlock`], the hub's too).
//!
//! Promises: while a [`StateLock`] lives, no other process can take the
//! lock of that directory; a second daemon (or a second `chessclockd
//! --demo` on the same state) gets [`LockError::Held`] naming the holder's
//! PID before it opens the database. Two daemons on one database
//! interleaved one game's events. The kernel drops the lock when the
//! process ends however it ends (even `kill -9`), so a stale lock file
//! never blocks a restart.

use std::path::Path;

pub use chessclock_host::dirlock::{DirLock as StateLock, LockError};

/// The lock file's name inside the state directory.
pub const LOCK_FILE: &str = "chessclockd.lock";

/// Takes the daemon's lock of `dir` (which must exist) without waiting.
pub fn acquire(dir: &Path) -> Result<StateLock, LockError> {
    StateLock::acquire(dir, LOCK_FILE, "chessclockd")
}
