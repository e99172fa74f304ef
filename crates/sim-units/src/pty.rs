//! PTY pairs standing in for USB CDC-ACM ports, and the stable symlinks that
//! point at them. The daemon opens the slave path; the simulator keeps the
//! master (the "device end"). Closing the master is a USB unplug: the host's
//! reads return 0 or EIO and the slave path disappears.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};

/// One plugged-in unit's PTY.
#[derive(Debug)]
pub struct Pty {
    /// Device end, non-blocking.
    pub master: OwnedFd,
    /// Kept open so the master never sees a hang-up while the host has the
    /// port closed (a real device does not notice that either).
    _slave: OwnedFd,
    /// The slave's path (`/dev/pts/N`).
    pub path: PathBuf,
}

impl Pty {
    /// Opens a PTY pair, raw on the slave side at once (so nothing the device
    /// writes before the host opens the port is echoed back), non-blocking on
    /// the master side.
    pub fn open() -> io::Result<Pty> {
        let pair = nix::pty::openpty(None, None).map_err(io::Error::from)?;
        let mut termios = tcgetattr(pair.slave.as_fd()).map_err(io::Error::from)?;
        cfmakeraw(&mut termios);
        tcsetattr(pair.slave.as_fd(), SetArg::TCSANOW, &termios).map_err(io::Error::from)?;
        let flags = fcntl(pair.master.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(pair.master.as_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        let path = nix::unistd::ttyname(pair.slave.as_fd()).map_err(io::Error::from)?;
        Ok(Pty {
            master: pair.master,
            _slave: pair.slave,
            path,
        })
    }

    pub fn raw_master(&self) -> i32 {
        self.master.as_raw_fd()
    }

    /// Master, slave, slave path.
    pub fn into_parts(self) -> (OwnedFd, OwnedFd, PathBuf) {
        (self.master, self._slave, self.path)
    }
}

/// Points the symlink `link` at `target`, atomically (a temporary link
/// renamed over the old one), creating parent folders. Refuses to replace
/// anything that is not a symlink.
pub fn point_link(link: &Path, target: &Path) -> io::Result<()> {
    if let Some(parent) = link.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| with_path(e, "creating folder", parent))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(link) {
        if !meta.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a symlink; not replacing it",
                    link.display()
                ),
            ));
        }
    }
    let file_name = link
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = link.with_file_name(format!(".{file_name}.sim-{}", std::process::id()));
    let _ = std::fs::remove_file(&temporary);
    std::os::unix::fs::symlink(target, &temporary)
        .map_err(|e| with_path(e, "creating symlink", &temporary))?;
    std::fs::rename(&temporary, link).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        with_path(e, "renaming symlink to", link)
    })
}

/// Removes the symlink `link` if it is one (ignores a missing link).
pub fn remove_link(link: &Path) {
    if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(link);
    }
}

fn with_path(error: io::Error, doing: &str, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{doing} {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_is_created_repointed_and_removed_but_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("sub/buttons");
        point_link(&link, Path::new("/dev/null")).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/dev/null"));
        point_link(&link, Path::new("/dev/zero")).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/dev/zero"));
        remove_link(&link);
        assert!(std::fs::symlink_metadata(&link).is_err());
        let file = dir.path().join("plain");
        std::fs::write(&file, b"keep").unwrap();
        assert!(point_link(&file, Path::new("/dev/null")).is_err());
        remove_link(&file);
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    }
}
