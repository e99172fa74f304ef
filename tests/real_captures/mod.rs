//! Where the real DGT recordings are: `CHESSCLOCKD_DGT_CAPTURES`, a folder
//! of `N.inbytes` / `N.uci` files, which `scripts/test` sets when it finds
//! them (see CONTRIBUTING.md, "Real DGT recordings"). Missing with the
//! feature `real-captures` on, the test fails saying so: never a skip.

use std::path::PathBuf;

pub fn dir() -> PathBuf {
    let Some(dir) = std::env::var_os("CHESSCLOCKD_DGT_CAPTURES") else {
        panic!(
            "CHESSCLOCKD_DGT_CAPTURES is not set: the real DGT recordings' folder \
             (scripts/test sets it when it finds them)"
        );
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.is_dir(),
        "the DGT recordings are missing: CHESSCLOCKD_DGT_CAPTURES names {}, which is not a folder",
        dir.display()
    );
    dir
}
