//! Puts `memory.x` where the linker looks for it (cortex-m-rt's `link.x`
//! includes it), and rebuilds when it or the build-time identity changes.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("write memory.x to OUT_DIR");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-env-changed=CHESSCLOCK_USB_PID");
    println!("cargo:rerun-if-env-changed=CHESSCLOCK_VENDOR");
}
