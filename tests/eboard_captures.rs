//! Golden tests: the three real DGT recordings in `shared/data/dgt-captures/`
//! decode to exactly the moves recorded with them.

use std::path::PathBuf;

use chessclockd::eboard::{decode_capture, decode_cli, CaptureFormat};

/// `../shared/data/dgt-captures/` beside the repository (as in CI);
/// `CHESSCLOCKD_SHARED_DIR` names another `shared/` folder (a git worktree
/// that does not sit beside it).
fn captures_dir() -> PathBuf {
    let dir = match std::env::var_os("CHESSCLOCKD_SHARED_DIR") {
        Some(shared) => PathBuf::from(shared).join("data/dgt-captures"),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/data/dgt-captures/"
        )),
    };
    assert!(
        dir.is_dir(),
        "the DGT captures are missing: expected them in {} (the `shared/` folder must sit beside the repository)",
        dir.display()
    );
    dir
}

fn read(name: &str) -> Vec<u8> {
    let path = captures_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The UCI moves of a `N.uci` file: numbered lines, `*` marks the end.
fn uci_moves(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_owned)
        .collect()
}

/// The SAN moves of a PGN movetext (no comments or variations in these files).
fn pgn_moves(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('['))
        .flat_map(|l| l.split_whitespace())
        .filter(|t| !t.ends_with('.') && !matches!(*t, "1-0" | "0-1" | "1/2-1/2" | "*"))
        .map(str::to_owned)
        .collect()
}

fn decoded_uci(name: &str) -> Vec<String> {
    decode_capture(&read(name), CaptureFormat::Base64Lines)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .into_iter()
        .map(|m| m.uci)
        .collect()
}

fn assert_same(name: &str, got: &[String], want: &[String]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "{name}: half-move {} differs (got {got:?})", i + 1);
    }
    assert_eq!(got.len(), want.len(), "{name}: number of half-moves");
}

#[test]
fn capture_1_gives_its_57_moves() {
    let want = uci_moves(&String::from_utf8(read("1.uci")).unwrap());
    assert_eq!(want.len(), 57);
    assert_same("1", &decoded_uci("1.inbytes"), &want);
}

#[test]
fn capture_2_turned_round_board_gives_its_99_moves() {
    let want = uci_moves(&String::from_utf8(read("2.uci")).unwrap());
    assert_eq!(want.len(), 99);
    assert_same("2", &decoded_uci("2.inbytes"), &want);
}

#[test]
fn capture_johan_gives_its_43_moves_in_san() {
    let want = pgn_moves(&String::from_utf8(read("johan.pgn")).unwrap());
    assert_eq!(want.len(), 43);
    let got: Vec<String> = decode_capture(&read("johan.inbytes"), CaptureFormat::Base64Lines)
        .unwrap()
        .into_iter()
        .map(|m| m.san.trim_end_matches(['+', '#']).to_owned())
        .collect();
    assert_same("johan", &got, &want);
}
