//! The test kit: what the integration tests start and find, in one place.
//!
//! * [`binary`]: where the programs under test are;
//! * [`bus`]: private D-Bus daemons;
//! * [`daemon`]: the real `chessclockd` on a private bus, and a client;
//! * [`dbus`]: a fake runtime behind the real D-Bus service, for the API
//!   and CLI tests;
//! * [`units`]: the host side of the serial protocol on a unit's PTY;
//! * [`eboard`]: a simulated DGT board with the daemon, and the PGN read
//!   back by independent tools;
//! * [`hall`]: a mosquitto of the test's own, the hub, a fake lichess, a
//!   TLS hall, a browser over WebDriver, an MQTT watcher;
//! * [`runtime`]: the runtime in-process: a test's configuration, a board,
//!   no devices;
//! * [`engine`]: the transcript language of the engine tests.
//!
//! Every test file includes all of it (`mod kit;`) and uses what it needs.
//!
//! The daemon's own binaries come from Cargo (`CARGO_BIN_EXE_*`); the hub,
//! the simulator and the bench are other packages of the workspace, whose
//! binaries Cargo builds into the same `target/<profile>/` folder
//! (`cargo build --bins`, which `scripts/test` runs before the tests).
// Every test file includes the whole kit and uses a part of it.
#![allow(dead_code)]

pub mod bus;
pub mod daemon;
pub mod dbus;
pub mod eboard;
pub mod engine;
pub mod hall;
pub mod runtime;
pub mod units;

use std::path::PathBuf;
use std::time::Duration;

/// How long a test waits for what it expects before it fails: generous,
/// because the machine may be loaded (a deadline, never a fixed sleep).
pub const WAIT: Duration = Duration::from_secs(30);

/// The workspace binary `name` (`chessclock-hall`, `chessclock-sim`, ...),
/// built beside the running test executable. Panics, saying how to build
/// it, when it is missing: a test that cannot find its program must fail
/// loudly, never skip.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable's folder");
    // Test executables live in `target/<profile>/deps/`.
    let profile = if deps.ends_with("deps") {
        deps.parent().unwrap_or(deps)
    } else {
        deps
    };
    let path = profile.join(name);
    assert!(
        path.is_file(),
        "{} is missing: build the workspace's binaries first (`cargo build --workspace --bins`; \
         scripts/test does)",
        path.display()
    );
    path
}
