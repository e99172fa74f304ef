//! `chessclockctl eboard decode` end to end: the binary prints exactly the
//! moves recorded in the real DGT captures (UCI by default, SAN on request).
//! The captures are not in this repository (CONTRIBUTING.md, "Real DGT
//! recordings"): this file builds only with the feature `real-captures`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::path::PathBuf;
use std::process::Command;

mod real_captures;

fn captures() -> PathBuf {
    real_captures::dir()
}

fn decode(file: &str, extra: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_chessclockctl"))
        .args(["eboard", "decode"])
        .arg(captures().join(file))
        .args(extra)
        .output()
        .expect("run chessclockctl");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The moves of a `N.uci` file ("1. e2e4 e7e5" per line) in order.
fn expected_uci(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(captures().join(file)).expect("read uci file");
    text.lines()
        .flat_map(|line| line.split_whitespace().skip(1).map(str::to_owned))
        .filter(|token| !matches!(token.as_str(), "*" | "1-0" | "0-1" | "1/2-1/2"))
        .collect()
}

#[test]
fn decode_prints_the_recorded_uci_moves_of_capture_1() {
    let (code, out, err) = decode("1.inbytes", &[]);
    assert_eq!(code, 0, "stderr: {err}");
    let moves: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!(moves.len(), 57);
    assert_eq!(moves, expected_uci("1.uci"));
}

#[test]
fn decode_handles_the_turned_round_board_of_capture_2() {
    let (code, out, err) = decode("2.inbytes", &[]);
    assert_eq!(code, 0, "stderr: {err}");
    let moves: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!(moves.len(), 99);
    assert_eq!(moves, expected_uci("2.uci"));
}

#[test]
fn decode_san_matches_the_johan_pgn() {
    let (code, out, err) = decode("johan.inbytes", &["--san"]);
    assert_eq!(code, 0, "stderr: {err}");
    let pgn = std::fs::read_to_string(captures().join("johan.pgn")).expect("read pgn");
    let movetext: String = pgn
        .lines()
        .filter(|line| !line.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let expected: Vec<&str> = movetext
        .split_whitespace()
        .filter(|token| {
            !token.ends_with('.')
                && !matches!(*token, "1-0" | "0-1" | "1/2-1/2" | "*")
                && !token
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit() && token.contains('.'))
        })
        .collect();
    let moves: Vec<&str> = out.lines().collect();
    assert_eq!(moves.len(), 43);
    assert_eq!(moves, expected);
}
