//! The runtime in-process: a configuration fit for a test (no real-time
//! priority, no locked memory), a board of it, and a device backend with no
//! devices.

use std::path::Path;

use chessclockd::config::{BoardConfig, ButtonSide, Config};
use chessclockd::devices::{DeviceCommand, DeviceKey};
use chessclockd::runtime::DeviceBackend;

/// The default configuration without SCHED_FIFO or mlockall (a test runs
/// beside others, as whoever it is).
pub fn config() -> Config {
    let mut config = Config::default();
    config.daemon.rt_priority = 0;
    config.daemon.mlock = false;
    config
}

/// Board `id` playing `control`, with no units and no e-board: set the
/// fields a test needs with `..board(id, control)`.
pub fn board(id: &str, control: &str) -> BoardConfig {
    BoardConfig {
        short_control: false,
        id: id.to_owned(),
        control: control.to_owned(),
        buttons: None,
        displays: Vec::new(),
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

/// A device backend with no devices: whatever is sent goes nowhere.
pub struct NoDevices;

impl DeviceBackend for NoDevices {
    fn send(&self, _: &DeviceKey, _: DeviceCommand) {}
    fn device_added(&self, _: &Path) {}
    fn device_removed(&self, _: &Path) {}
}
