//! One program per state directory: an exclusive `flock` on a lock file
//! in the directory, held for the program's life (the daemon's
//! `chessclockd.lock`, the hub's `chessclock-hall.lock`).
//!
//! Promises: while a [`DirLock`] lives, no other process can take the lock
//! of that directory; a second program on it gets [`LockError::Held`]
//! naming the holder's PID, read from the lock file, before it opens
//! anything else there (two daemons on one database interleaved one game's
//! events). The kernel drops the lock when the process ends however it ends
//! (even `kill -9`), so a stale lock file never blocks a restart. The lock
//! file is not inherited by the programs a holder starts (`O_CLOEXEC`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg, OFlag};

/// Why the state directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "the state directory {dir} is in use by another {program} ({holder}): \
         stop that one first, or give this one another state directory (--state-dir)"
    )]
    Held {
        dir: PathBuf,
        /// The program that takes such locks (`chessclockd`).
        program: &'static str,
        /// `PID 1234`, or `PID unknown` when the file does not say.
        holder: String,
    },
    #[error("cannot create the lock file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The held lock (released when dropped or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    _lock: Flock<File>,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock file `name` of `dir` (which must exist) for
    /// `program` without waiting, and writes this process's PID into it
    /// for the next one to name.
    pub fn acquire(dir: &Path, name: &str, program: &'static str) -> Result<DirLock, LockError> {
        let path = dir.join(name);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(OFlag::O_CLOEXEC.bits())
            .open(&path)
            .map_err(io)?;
        let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => lock,
            Err((mut file, errno)) => {
                if errno == nix::errno::Errno::EWOULDBLOCK {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    let holder = match text.trim().parse::<u32>() {
                        Ok(pid) => format!("PID {pid}"),
                        Err(_) => "PID unknown".to_owned(),
                    };
                    return Err(LockError::Held {
                        dir: dir.to_owned(),
                        program,
                        holder,
                    });
                }
                return Err(io(std::io::Error::from(errno)));
            }
        };
        let pid = format!("{}\n", std::process::id());
        lock.set_len(0).map_err(io)?;
        lock.seek(SeekFrom::Start(0)).map_err(io)?;
        lock.write_all(pid.as_bytes()).map_err(io)?;
        Ok(DirLock { _lock: lock, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_second_lock_on_one_directory_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path(), "x.lock", "chessclockd").unwrap();
        assert_eq!(
            std::fs::read_to_string(first.path()).unwrap(),
            format!("{}\n", std::process::id())
        );
        // Another open file description, as another process would have.
        let error = DirLock::acquire(dir.path(), "x.lock", "chessclockd").unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, LockError::Held { .. }), "{text}");
        assert!(
            text.contains(&format!("another chessclockd (PID {})", std::process::id())),
            "{text}"
        );
        assert!(text.contains(&dir.path().display().to_string()), "{text}");
        drop(first);
        let again = DirLock::acquire(dir.path(), "x.lock", "chessclockd").unwrap();
        drop(again);
    }

    #[test]
    fn a_missing_directory_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let error =
            DirLock::acquire(&dir.path().join("missing"), "x.lock", "chessclockd").unwrap_err();
        assert!(matches!(error, LockError::Io { .. }), "{error}");
    }
}
