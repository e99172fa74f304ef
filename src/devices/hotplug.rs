//! Hotplug without udev: inotify on the device directories. Every node that
//! appears or goes away becomes a hotplug notice to every link task (the
//! same notice [`super::DeviceManager::device_added`] sends); the notices of
//! one inotify read go out as one shared batch per link. Directories
//! that do not exist yet (`/dev/serial/by-id` is removed when empty) are
//! watched as soon as they appear.

use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::PathBuf;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc::UnboundedSender;

use super::link::LinkInput;

struct InotifyFd(Inotify);

impl AsRawFd for InotifyFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

struct Watcher {
    fd: AsyncFd<InotifyFd>,
    wanted: Vec<PathBuf>,
    watches: HashMap<WatchDescriptor, PathBuf>,
    links: Vec<UnboundedSender<LinkInput>>,
}

/// Watches `dirs` until every link task is gone.
pub(super) async fn watch(dirs: Vec<PathBuf>, links: Vec<UnboundedSender<LinkInput>>) {
    let inotify = match Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC) {
        Ok(inotify) => inotify,
        Err(error) => {
            tracing::warn!(%error, "inotify unavailable: hotplug only through device_added/back-off");
            return;
        }
    };
    // `AsyncFd::new` is deprecated because a wrapper could hand out a
    // different or closed descriptor over time; `InotifyFd` owns its
    // descriptor and always returns that same one, which is the condition
    // under which registering it is sound (no `unsafe` needed here).
    #[allow(deprecated)]
    let registered = AsyncFd::new(InotifyFd(inotify));
    let fd = match registered {
        Ok(fd) => fd,
        Err(error) => {
            tracing::warn!(%error, "cannot poll inotify: hotplug only through device_added/back-off");
            return;
        }
    };
    let mut watcher = Watcher {
        fd,
        wanted: dirs,
        watches: HashMap::new(),
        links,
    };
    watcher.add_missing_watches(false);
    watcher.run().await
}

fn flags() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_ONLYDIR
}

impl Watcher {
    async fn run(&mut self) {
        loop {
            if self.links.iter().all(|l| l.is_closed()) {
                return;
            }
            let mut guard = match self.fd.readable().await {
                Ok(guard) => guard,
                Err(error) => {
                    tracing::warn!(%error, "inotify failed; hotplug watching stops");
                    return;
                }
            };
            let events = match guard.try_io(|fd| fd.get_ref().0.read_events().map_err(Into::into)) {
                Ok(Ok(events)) => events,
                Ok(Err(error)) => {
                    tracing::warn!(%error, "inotify read failed; hotplug watching stops");
                    return;
                }
                Err(_would_block) => continue,
            };
            let mut rescan = false;
            let mut notices = Vec::with_capacity(events.len());
            for event in events {
                if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    // Events were lost: let every waiting link look now.
                    rescan = true;
                    notices.extend(self.wanted.iter().map(|dir| (dir.clone(), true)));
                    continue;
                }
                if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                    // The directory itself went away.
                    self.watches.remove(&event.wd);
                    continue;
                }
                let (Some(dir), Some(name)) = (self.watches.get(&event.wd), event.name) else {
                    continue;
                };
                let path = dir.join(name);
                if event.mask.contains(AddWatchFlags::IN_ISDIR) {
                    rescan = true;
                }
                let added = event.mask.intersects(
                    AddWatchFlags::IN_CREATE
                        | AddWatchFlags::IN_MOVED_TO
                        | AddWatchFlags::IN_ATTRIB,
                );
                tracing::trace!(path = %path.display(), added, "device directory changed");
                notices.push((path, added));
            }
            self.notify(notices);
            if rescan {
                self.add_missing_watches(true);
            }
        }
    }

    /// Watches every wanted directory that exists and is not watched yet;
    /// with `announce`, the entries already in a newly watched directory
    /// are announced (they may have appeared before the watch).
    fn add_missing_watches(&mut self, announce: bool) {
        for dir in self.wanted.clone() {
            if self.watches.values().any(|d| d == &dir) || !dir.is_dir() {
                continue;
            }
            match self.fd.get_ref().0.add_watch(&dir, flags()) {
                Ok(wd) => {
                    tracing::debug!(path = %dir.display(), "watching for device hotplug");
                    self.watches.insert(wd, dir.clone());
                    if announce {
                        if let Ok(entries) = std::fs::read_dir(&dir) {
                            self.notify(entries.flatten().map(|e| (e.path(), true)).collect());
                        }
                    }
                }
                Err(error) => {
                    tracing::debug!(path = %dir.display(), %error, "cannot watch directory")
                }
            }
        }
    }

    /// Sends `notices` (in order) to every link as one shared batch.
    fn notify(&self, notices: Vec<(PathBuf, bool)>) {
        if notices.is_empty() {
            return;
        }
        let notices: std::sync::Arc<[(PathBuf, bool)]> = notices.into();
        for link in &self.links {
            let _ = link.send(LinkInput::Hotplug(notices.clone()));
        }
    }
}
