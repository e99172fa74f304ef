//! The test kit: what the integration tests start and find, in one place.
//!
//! * [`binary`]: where the programs under test are;
//! * [`bus`]: private D-Bus daemons.
//!
//! The daemon's own binaries come from Cargo (`CARGO_BIN_EXE_*`); the hub,
//! the simulator and the bench are other packages of the workspace, whose
//! binaries Cargo builds into the same `target/<profile>/` folder
//! (`cargo build --bins`, which `scripts/test` runs before the tests).
#![allow(dead_code)]

pub mod bus;

use std::path::PathBuf;

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
