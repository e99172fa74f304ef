//! The man pages in `man/` are what the programs write now (chessclockctl,
//! chessclockd and the hub, chessclock-hall): a change of a
//! command line or of the configuration's keys that is not in `man/` fails
//! here. `CHESSCLOCKD_UPDATE_MAN=1 cargo test --test man_pages` rewrites
//! them (then commit `man/`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Every file of `dir`, by name.
fn pages(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut pages = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        pages.insert(name, std::fs::read(entry.path()).unwrap());
    }
    pages
}

fn write_with(program: &str, args: &[&str], dir: &Path) {
    let output = Command::new(program).args(args).arg(dir).output().unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_man_pages_in_the_repository_are_what_the_programs_write() {
    let fresh = tempfile::tempdir().unwrap();
    write_with(env!("CARGO_BIN_EXE_chessclockctl"), &["man"], fresh.path());
    write_with(env!("CARGO_BIN_EXE_chessclockd"), &["--man"], fresh.path());
    let hub = kit::binary("chessclock-hall");
    write_with(hub.to_str().unwrap(), &["man"], fresh.path());
    let fresh = pages(fresh.path());
    for page in [
        "chessclockctl.1",
        "chessclockd.8",
        "chessclockd.toml.5",
        "chessclock-hall.1",
    ] {
        assert!(fresh.contains_key(page), "no {page} was written");
    }
    let kept_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    if std::env::var_os("CHESSCLOCKD_UPDATE_MAN").is_some() {
        if kept_dir.is_dir() {
            std::fs::remove_dir_all(&kept_dir).unwrap();
        }
        std::fs::create_dir_all(&kept_dir).unwrap();
        for (name, text) in &fresh {
            std::fs::write(kept_dir.join(name), text).unwrap();
        }
    }
    let kept = pages(&kept_dir);
    let stale: BTreeSet<&String> = fresh
        .keys()
        .chain(kept.keys())
        .filter(|name| fresh.get(*name) != kept.get(*name))
        .collect();
    assert!(
        stale.is_empty(),
        "man/ is stale ({stale:?} differ, are missing or are left over): \
         regenerate with `CHESSCLOCKD_UPDATE_MAN=1 cargo test --test man_pages` and commit man/"
    );
}
