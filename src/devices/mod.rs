//! Serial devices (button units, display units; DGT boards live in
//! [`crate::eboard`]): discovery, one task per port, reconnect with back-off,
//! hotplug. Each port's protocol logic is the pure state machine in
//! [`session`]; the tasks here only move bytes and instants.
//!
//! CONTRACT NOTE (skeleton): [`DeviceEvent`] and [`DeviceCommand`] are what the
//! runtime (timing thread) codes against. Add freely.

pub mod session;

use chessclock_protocol::{Button, DisplayState, Hello, Leds};

use crate::engine::Micros;

/// What a configured device is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceRole {
    Buttons,
    /// The n-th display of the board (config order).
    Display(usize),
}

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
    /// A new (not duplicate) button event. `at` is the device timestamp mapped
    /// to host CLOCK_MONOTONIC µs; `arrival` when the frame was read.
    Button {
        key: DeviceKey,
        event: u16,
        button: Button,
        pressed: bool,
        at: Micros,
        arrival: Micros,
    },
    /// Frames refused since the last report (bad CRC, malformed, unknown id...).
    Errors { key: DeviceKey, count: u64 },
}

/// From the runtime to a device task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceCommand {
    /// Show this (latest wins; restored at once after a reconnect).
    Display(DisplayState),
    Leds(Leds),
    Beep {
        duration_ms: u16,
        count: u8,
    },
    /// Acknowledge button event `event`: sent only once the press is
    /// committed to the state store, so an unacknowledged press is resent by
    /// the device after a crash.
    Ack {
        event: u16,
    },
}

/// The running device tasks (one per configured device slot, plus hotplug).
/// Created inside a tokio runtime; dropping it stops every task.
#[derive(Debug)]
pub struct DeviceManager {
    _private: (),
}

impl DeviceManager {
    /// Starts a task for every device of `boards`: open, handshake,
    /// heartbeats, reconnect with back-off; events go to `events`.
    pub fn start(
        boards: &[crate::config::BoardConfig],
        watch_dirs: &[std::path::PathBuf],
        events: tokio::sync::mpsc::UnboundedSender<DeviceEvent>,
    ) -> DeviceManager {
        let _ = (boards, watch_dirs, events);
        todo!("devices: start")
    }

    /// Sends a command to a device slot (dropped, with a debug log, when the
    /// slot is unknown; a display state is kept and restored on reconnect).
    pub fn send(&self, key: &DeviceKey, command: DeviceCommand) {
        let _ = (key, command);
        todo!("devices: send")
    }

    /// Hotplug entry point: a device node appeared (udev rule, inotify).
    pub fn device_added(&self, path: &std::path::Path) {
        let _ = path;
        todo!("devices: device_added")
    }

    /// Hotplug entry point: a device node went away.
    pub fn device_removed(&self, path: &std::path::Path) {
        let _ = path;
        todo!("devices: device_removed")
    }
}
