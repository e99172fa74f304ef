//! Serial devices (button units, display units; DGT boards live in
//! [`crate::eboard`]): discovery, one task per port, reconnect with back-off,
//! hotplug. Each port's protocol logic is the pure state machine in
//! [`session`]; the tasks here only move bytes and instants. The daemon runs
//! them on its timing thread's own tokio runtime (see [`crate::runtime`]),
//! so a port read costs one `read` per arrival (`port.rs`) and a press
//! reaches the engine without a thread hand-off.
//!
//! Promises:
//! * one task per distinct configured device (a combined unit named both as
//!   `buttons` and in `displays` is one port, one task, one session);
//! * a device is found by path (symlinks followed when opening) or by its
//!   HELLO serial (`serial:<number>`: candidate ports are probed one by one,
//!   never written to before they said HELLO);
//! * a vanished device (end of file, I/O error, path removed, missed
//!   heartbeats) is reported once and reopened with exponential back-off
//!   (100 ms doubling to 5 s), or at once when hotplug (inotify on the device
//!   directories, or [`DeviceManager::device_added`]) says a node appeared;
//! * a device refused (protocol version, invalid serial, a role its slot
//!   needs, a serial another link has up) is reported once per reason
//!   ([`DeviceEvent::Refused`], a warning with the reason); its port stays
//!   open and every HELLO it sends is answered with a NAK and checked again,
//!   so one refused for a passing reason (a duplicate serial) links at its
//!   next HELLO once the reason is gone (SPEC.md 6.1);
//! * input waiting at the open is answered (the newest HELLO in it), so a
//!   replugged device links right after its first HELLO;
//! * the latest display and LED state of each slot is re-sent right after a
//!   reconnect, each once;
//! * [`DeviceManager::send`] and [`DeviceHandle::send`] never block and may
//!   be called from any thread (the real-time timing thread included).
//!
//! [`DeviceEvent`] (reports of a slot) and [`DeviceCommand`] (frames for a
//! slot) are what the timing thread's shell maps to and from the board
//! cores' inputs and actions.

mod hotplug;
mod link;
mod port;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chessclock_protocol::{Button, Hello, Roles};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::task::JoinHandle;

use crate::config::{BoardConfig, DeviceRef};
use crate::engine::Micros;
pub use chessclock_core::session;
pub use chessclock_core::session::{DeviceCommand, DeviceRole};
pub use link::{DisplayWrites, Due};
use link::{LinkInput, LinkSpec};

/// A configured device slot: which board, which role.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceKey {
    pub board: String,
    pub role: DeviceRole,
}

/// From a device task to the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceEvent {
    /// The handshake completed.
    Connected {
        key: DeviceKey,
        hello: Hello,
        path: String,
    },
    /// The device went away (unplug, missed heartbeats, I/O error).
    Disconnected { key: DeviceKey, reason: String },
    /// A BUTTON frame (resent ones too: the board core keeps the unit's
    /// event record). `at` is the device timestamp mapped to host
    /// CLOCK_MONOTONIC µs; `arrival` when the frame was read.
    Button {
        key: DeviceKey,
        /// The unit's HELLO serial (the key of its event record).
        serial: String,
        event: u16,
        button: Button,
        pressed: bool,
        at: Micros,
        arrival: Micros,
    },
    /// Frames refused since the last report (bad CRC, malformed, unknown id...).
    Errors { key: DeviceKey, count: u64 },
    /// A device answered on the slot's port but is not usable there (wrong
    /// protocol version, invalid serial, a role the slot needs, a serial
    /// another link has up). Said once per reason; the port stays open and
    /// the device is welcomed at its first HELLO that is acceptable.
    Refused {
        key: DeviceKey,
        path: String,
        reason: String,
    },
}

/// The running device tasks (one per configured device, plus hotplug).
/// Created inside a tokio runtime; dropping it stops every task (and so
/// closes every port).
#[derive(Debug)]
pub struct DeviceManager {
    handle: DeviceHandle,
    tasks: Vec<JoinHandle<()>>,
    /// The inotify watcher (it holds every link's sender, so it is stopped
    /// first when closing).
    watcher: Option<JoinHandle<()>>,
    /// What starting a link needs again when a reload adds boards (boxed:
    /// the manager is moved around by value and this is rarely used).
    spawner: Box<LinkSpawner>,
}

/// What the manager started its links with, kept for the links of boards
/// a reload adds.
#[derive(Debug)]
struct LinkSpawner {
    events: UnboundedSender<DeviceEvent>,
    options: DeviceOptions,
    candidate_dirs: Vec<PathBuf>,
    linked: link::LinkedSerials,
    display_writes: DisplayWrites,
    /// The directories the inotify watcher watches.
    watched: Vec<PathBuf>,
}

/// A cheap, cloneable, `Send + Sync` handle for sending commands and hotplug
/// notices from any thread without blocking (e.g. the timing thread keeps
/// one). Sends after the manager was dropped are ignored.
#[derive(Clone, Debug, Default)]
pub struct DeviceHandle {
    slots: HashMap<DeviceKey, UnboundedSender<LinkInput>>,
    links: Vec<UnboundedSender<LinkInput>>,
}

impl DeviceKey {
    pub fn new(board: &str, role: DeviceRole) -> DeviceKey {
        DeviceKey {
            board: board.to_owned(),
            role,
        }
    }
}

impl std::fmt::Display for DeviceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.board, self.role)
    }
}

/// The configured devices grouped by port: one group per distinct
/// [`DeviceRef`], with every slot it serves (config order).
pub fn group_slots(boards: &[BoardConfig]) -> Vec<(DeviceRef, Vec<DeviceKey>)> {
    let mut groups: Vec<(DeviceRef, Vec<DeviceKey>)> = Vec::new();
    let mut add =
        |device: &DeviceRef, key: DeviceKey| match groups.iter_mut().find(|(d, _)| d == device) {
            Some((_, keys)) => keys.push(key),
            None => groups.push((device.clone(), vec![key])),
        };
    for board in boards {
        if let Some(device) = &board.buttons {
            add(device, DeviceKey::new(&board.id, DeviceRole::Buttons));
        }
        for (n, display) in board.displays.iter().enumerate() {
            add(
                &display.device,
                DeviceKey::new(&board.id, DeviceRole::Display(n)),
            );
        }
    }
    groups
}

/// The roles a device must have to serve `keys`.
pub fn required_roles(keys: &[DeviceKey]) -> Roles {
    let mut roles = 0;
    for key in keys {
        roles |= match key.role {
            DeviceRole::Buttons => Roles::BUTTONS.0,
            DeviceRole::Display(_) => Roles::DISPLAY.0,
        };
    }
    Roles(roles)
}

impl DeviceManager {
    /// Starts a task for every device of `boards`: open, handshake,
    /// heartbeats, reconnect with back-off; events go to `events`.
    pub fn start(
        boards: &[crate::config::BoardConfig],
        watch_dirs: &[std::path::PathBuf],
        events: tokio::sync::mpsc::UnboundedSender<DeviceEvent>,
    ) -> DeviceManager {
        Self::start_with(boards, watch_dirs, events, DeviceOptions::default())
    }

    /// [`DeviceManager::start`] with explicit timing and discovery options.
    pub fn start_with(
        boards: &[BoardConfig],
        watch_dirs: &[PathBuf],
        events: UnboundedSender<DeviceEvent>,
        options: DeviceOptions,
    ) -> DeviceManager {
        let mut watched = options.device_dirs.clone();
        watched.extend(watch_dirs.iter().cloned());
        let mut candidate_dirs = options.device_dirs.clone();
        candidate_dirs.extend(watch_dirs.iter().cloned());
        let mut manager = DeviceManager {
            handle: DeviceHandle::default(),
            tasks: Vec::new(),
            watcher: None,
            spawner: Box::new(LinkSpawner {
                events,
                options,
                candidate_dirs,
                linked: link::LinkedSerials::default(),
                display_writes: DisplayWrites::default(),
                watched,
            }),
        };
        manager.spawn_links(boards);
        manager
    }

    /// Starts the links of boards added by a reload (their devices are not
    /// used by a running board: the reload plan refuses those) and
    /// restarts the hotplug watcher so that it tells the new links too.
    pub fn add_boards(&mut self, boards: &[BoardConfig]) {
        self.spawn_links(boards);
    }

    fn spawn_links(&mut self, boards: &[BoardConfig]) {
        let spawner = &mut self.spawner;
        for (device, keys) in group_slots(boards) {
            if let DeviceRef::Path(path) = &device {
                if let Some(parent) = path.parent() {
                    spawner.watched.push(parent.to_path_buf());
                }
            }
            let (tx, rx) = unbounded_channel();
            for key in &keys {
                self.handle.slots.insert(key.clone(), tx.clone());
            }
            self.handle.links.push(tx);
            let spec = LinkSpec {
                device,
                keys,
                candidate_dirs: spawner.candidate_dirs.clone(),
                candidate_prefixes: spawner.options.candidate_prefixes.clone(),
                session: spawner.options.session.clone(),
                min_backoff: spawner.options.min_backoff,
                max_backoff: spawner.options.max_backoff,
                linked: spawner.linked.clone(),
                display_writes: spawner.display_writes.clone(),
            };
            self.tasks
                .push(tokio::spawn(link::run(spec, rx, spawner.events.clone())));
        }
        if spawner.options.inotify && !self.handle.links.is_empty() {
            if let Some(old) = self.watcher.take() {
                old.abort();
            }
            spawner.watched.sort();
            spawner.watched.dedup();
            let links = self.handle.links.clone();
            self.watcher = Some(tokio::spawn(hotplug::watch(spawner.watched.clone(), links)));
        }
    }

    /// Sends a command to a device slot (dropped, with a debug log, when the
    /// slot is unknown; a display state is kept and restored on reconnect).
    pub fn send(&self, key: &DeviceKey, command: DeviceCommand) {
        self.handle.send(key, command)
    }

    /// [`DeviceHandle::send_due`].
    pub fn send_due(&self, key: &DeviceKey, command: DeviceCommand, due: Due) {
        self.handle.send_due(key, command, due)
    }

    /// How late, from the instant each was due, the links wrote the display
    /// frames so far: after deadlines, after presses.
    pub fn display_writes(&self) -> [crate::lateness::Lateness; 2] {
        self.spawner.display_writes.lateness()
    }

    /// Hotplug entry point: a device node appeared (udev rule, inotify).
    pub fn device_added(&self, path: &std::path::Path) {
        self.handle.device_added(path)
    }

    /// Hotplug entry point: a device node went away.
    pub fn device_removed(&self, path: &std::path::Path) {
        self.handle.device_removed(path)
    }

    /// A handle for other threads (the timing thread, the D-Bus layer).
    pub fn handle(&self) -> DeviceHandle {
        self.handle.clone()
    }

    /// Every configured slot.
    pub fn slots(&self) -> Vec<DeviceKey> {
        let mut keys: Vec<DeviceKey> = self.handle.slots.keys().cloned().collect();
        keys.sort();
        keys
    }
}

impl DeviceManager {
    /// Ends every link after it handled the commands already sent (so the
    /// last ACKs and display frames reach the devices), waiting at most
    /// `limit`; links still busy then are stopped where they are.
    pub async fn close(mut self, limit: std::time::Duration) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
        // Dropping the senders is what tells a link to finish.
        self.handle = DeviceHandle::default();
        let deadline = tokio::time::Instant::now() + limit;
        for task in &mut self.tasks {
            if tokio::time::timeout_at(deadline, &mut *task).await.is_err() {
                tracing::debug!("a device link did not finish in time; stopping it");
                break;
            }
        }
    }
}

impl Drop for DeviceManager {
    fn drop(&mut self) {
        if let Some(watcher) = &self.watcher {
            watcher.abort();
        }
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl DeviceHandle {
    /// See [`DeviceManager::send`]. Never blocks.
    pub fn send(&self, key: &DeviceKey, command: DeviceCommand) {
        self.send_due(key, command, Due::Unmeasured)
    }

    /// [`DeviceHandle::send`] for a change that was due at `due` (monotonic
    /// µs): a board's deadline, a press's arrival. A display frame's write
    /// is counted from there ([`DeviceManager::display_writes`]).
    pub fn send_due(&self, key: &DeviceKey, command: DeviceCommand, due: Due) {
        match self.slots.get(key) {
            Some(link) => {
                if link.send(LinkInput::Command(command, due)).is_err() {
                    tracing::debug!(board = %key.board, device = %key.role, "device task stopped; command dropped");
                }
            }
            None => {
                tracing::debug!(board = %key.board, device = %key.role, "no such device slot; command dropped")
            }
        }
    }

    /// See [`DeviceManager::device_added`].
    pub fn device_added(&self, path: &Path) {
        self.hotplug(path, true)
    }

    /// See [`DeviceManager::device_removed`].
    pub fn device_removed(&self, path: &Path) {
        self.hotplug(path, false)
    }

    fn hotplug(&self, path: &Path, added: bool) {
        tracing::debug!(path = %path.display(), added, "hotplug notice");
        let notices: std::sync::Arc<[(PathBuf, bool)]> =
            std::sync::Arc::new([(path.to_path_buf(), added)]);
        for link in &self.links {
            let _ = link.send(LinkInput::Hotplug(notices.clone()));
        }
    }
}

/// Timing and discovery knobs (defaults suit the daemon; tests shorten them).
#[derive(Clone, Debug)]
pub struct DeviceOptions {
    /// Protocol timing of every session (its `required_roles` and
    /// `wanted_serial` are set per device).
    pub session: session::SessionConfig,
    pub min_backoff: Micros,
    pub max_backoff: Micros,
    /// Directories watched for hotplug and listed for `serial:` probing.
    pub device_dirs: Vec<PathBuf>,
    /// Only entries whose file name starts with one of these are probed in
    /// `device_dirs` (entries of the configured `watch_dirs` are all probed).
    pub candidate_prefixes: Vec<String>,
    /// Watch the directories with inotify.
    pub inotify: bool,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            session: session::SessionConfig::default(),
            min_backoff: 100 * crate::engine::MS,
            max_backoff: 5 * crate::engine::SECOND,
            device_dirs: vec![
                PathBuf::from("/dev"),
                PathBuf::from("/dev/serial"),
                PathBuf::from("/dev/serial/by-id"),
                PathBuf::from("/dev/chessclock"),
            ],
            candidate_prefixes: vec!["ttyACM".into(), "ttyUSB".into()],
            inotify: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ButtonSide;

    fn board(id: &str, buttons: Option<&str>, displays: &[&str]) -> BoardConfig {
        let device = |s: &str| DeviceRef::try_from(s.to_owned()).unwrap();
        BoardConfig {
            short_control: false,
            id: id.to_owned(),
            control: "fide-rapid".to_owned(),
            buttons: buttons.map(device),
            displays: displays.iter().map(|s| device(s).into()).collect(),
            eboard: None,
            white_button: ButtonSide::Left,
            start_on_black_press: false,
            event: None,
            site: None,
            round: None,
            white: None,
            black: None,
        }
    }

    #[test]
    fn a_combined_unit_is_one_port_serving_two_slots() {
        let boards = [
            board(
                "a",
                Some("/dev/chessclock/unit-1"),
                &["/dev/chessclock/unit-1"],
            ),
            board("b", Some("serial:CC9"), &["/dev/ttyACM3", "/dev/ttyACM4"]),
        ];
        let groups = group_slots(&boards);
        let summary: Vec<(String, Vec<String>)> = groups
            .iter()
            .map(|(d, keys)| {
                (
                    String::from(d.clone()),
                    keys.iter().map(|k| k.to_string()).collect(),
                )
            })
            .collect();
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            summary,
            vec![
                (
                    "/dev/chessclock/unit-1".to_owned(),
                    strings(&["a/buttons", "a/display0"])
                ),
                ("serial:CC9".to_owned(), strings(&["b/buttons"])),
                ("/dev/ttyACM3".to_owned(), strings(&["b/display0"])),
                ("/dev/ttyACM4".to_owned(), strings(&["b/display1"])),
            ]
        );
        assert_eq!(required_roles(&groups[0].1), Roles(0x03));
        assert_eq!(required_roles(&groups[1].1), Roles::BUTTONS);
        assert_eq!(required_roles(&groups[2].1), Roles::DISPLAY);
    }

    #[test]
    fn sends_to_unknown_slots_or_stopped_tasks_do_not_panic() {
        let handle = DeviceHandle::default();
        handle.send(
            &DeviceKey::new("nowhere", DeviceRole::Buttons),
            DeviceCommand::Ack { event: 1 },
        );
        handle.device_added(Path::new("/dev/ttyACM9"));
        let (tx, rx) = unbounded_channel();
        drop(rx);
        let mut handle = DeviceHandle::default();
        handle
            .slots
            .insert(DeviceKey::new("x", DeviceRole::Buttons), tx.clone());
        handle.links.push(tx);
        handle.send(
            &DeviceKey::new("x", DeviceRole::Buttons),
            DeviceCommand::Ack { event: 1 },
        );
        handle.device_removed(Path::new("/dev/ttyACM9"));
    }
}
