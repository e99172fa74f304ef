//! Golden tests: the three real DGT recordings decode to exactly the moves
//! recorded with them. The recordings are not in this repository (see
//! CONTRIBUTING.md, "Real DGT recordings"): this file builds only with the
//! feature `real-captures`, which `scripts/test` turns on when they are
//! found, and CI always.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::path::PathBuf;

use chessclockd::eboard::{decode_capture, decode_cli, CaptureFormat};

mod real_captures;

fn captures_dir() -> PathBuf {
    real_captures::dir()
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

#[test]
fn raw_bytes_decode_like_base64_lines() {
    use base64::Engine as _;
    let mut raw = Vec::new();
    for line in String::from_utf8(read("2.inbytes")).unwrap().lines() {
        raw.extend(
            base64::engine::general_purpose::STANDARD
                .decode(line.trim())
                .unwrap(),
        );
    }
    let from_raw: Vec<String> = decode_capture(&raw, CaptureFormat::Raw)
        .unwrap()
        .into_iter()
        .map(|m| m.uci)
        .collect();
    assert_eq!(from_raw, decoded_uci("2.inbytes"));
}

#[test]
fn decode_cli_prints_one_move_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("johan.inbytes");
    std::fs::write(&path, read("johan.inbytes")).unwrap();

    let mut uci = Vec::new();
    decode_cli(&path, false, false, &mut uci).unwrap();
    let uci = String::from_utf8(uci).unwrap();
    assert_eq!(uci.lines().count(), 43);
    assert!(uci.starts_with("e2e4\ne7e5\ng1f3\nf7f5\n"), "{uci}");
    assert!(uci.ends_with("c5c6\n"), "{uci}");

    let mut san = Vec::new();
    decode_cli(&path, false, true, &mut san).unwrap();
    let san = String::from_utf8(san).unwrap();
    assert!(san.starts_with("e4\ne5\nNf3\nf5\nNxe5\n"), "{san}");
    assert!(san.contains("\nO-O\n"), "{san}");
    assert!(san.ends_with("Qxc6\n"), "{san}");
}

#[test]
fn decode_errors_say_what_and_where() {
    let err = decode_capture(b"hgBD\nnot base64!\n", CaptureFormat::Base64Lines).unwrap_err();
    assert!(err.to_string().starts_with("line 2: not base64"), "{err}");
    let err = decode_capture(&[0x8e, 0x00, 0x05, 0x01, 0x00], CaptureFormat::Raw).unwrap_err();
    assert!(
        err.to_string()
            .contains("never shows the starting position"),
        "{err}"
    );
    let missing = std::path::Path::new("/nonexistent/capture.inbytes");
    let err = decode_cli(missing, false, false, &mut Vec::new()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/capture.inbytes: "),
        "{err}"
    );
}
