//! Golden tests of `chessclockctl replay` (through `replay::run`): every
//! `tests/replay/NAME.jsonl` is replayed; its output must equal
//! `NAME.out` byte for byte, or, for bad input, the error line must equal
//! `NAME.err` with exit status 2 and nothing on standard output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::path::Path;

use chessclockd::replay;

fn run(input: &[u8]) -> (i32, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = replay::run(&mut &input[..], &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replay");
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 10,
        "golden files missing in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for input in &inputs {
        let (status, out, err) = run(&std::fs::read(input).unwrap());
        let expected_out = input.with_extension("out");
        let expected_err = input.with_extension("err");
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        if expected_err.exists() {
            let want = std::fs::read_to_string(&expected_err).unwrap();
            if status != 2 || !out.is_empty() || err != want {
                failures.push(format!(
                    "{name}: status {status}\nout: {out}\nerr: {err}want err: {want}"
                ));
            }
        } else {
            let want = std::fs::read_to_string(&expected_out)
                .unwrap_or_else(|_| panic!("{name}: no .out or .err file"));
            if status != 0 || out != want || !err.is_empty() {
                failures.push(format!(
                    "{name}: status {status}, err {err}\n got:\n{out}\nwant:\n{want}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every output line of `input` as JSON (the replay must succeed).
fn states(input: &str) -> Vec<serde_json::Value> {
    let (status, out, err) = run(input.as_bytes());
    assert_eq!((status, err.as_str()), (0, ""), "{input}");
    out.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `docs/replay-format.md` promises `periods_left` for byo-yomi: the
/// periods left, the running one included; the output had no such key.
#[test]
fn byo_yomi_output_has_periods_left() {
    let out = states(
        "{\"control\": {\"type\": \"byo-yomi\", \"main\": 5, \"periods\": 3, \"period\": 10}}\n\
         {\"t\": 0, \"do\": \"start\"}\n{\"t\": 16000, \"do\": \"state\"}\n\
         {\"t\": 60000, \"do\": \"state\"}\n",
    );
    let periods = |line: usize, side: &str| out[line][side]["periods_left"].clone();
    assert_eq!(periods(0, "white"), 3);
    assert_eq!(periods(1, "white"), 2, "the first period ran out at 15 s");
    assert_eq!(periods(2, "white"), 0, "the flag fell with the last one");
    assert_eq!(periods(2, "black"), 3);
    assert!(out[0]["white"].get("moves_left_in_block").is_none());
}

/// `docs/replay-format.md` promises `moves_left_in_block` for Canadian
/// overtime: the moves still to make in the current block; the output had
/// no such key.
#[test]
fn canadian_output_has_moves_left_in_block() {
    let out = states(
        "{\"control\": {\"type\": \"canadian\", \"main\": 1, \"moves\": 2, \"block\": 20}}\n\
         {\"t\": 0, \"do\": \"start\"}\n{\"t\": 3000, \"do\": \"press\", \"side\": \"white\"}\n\
         {\"t\": 3000, \"do\": \"press\", \"side\": \"black\"}\n\
         {\"t\": 4000, \"do\": \"press\", \"side\": \"white\"}\n",
    );
    let left = |line: usize| out[line]["white"]["moves_left_in_block"].clone();
    assert_eq!(left(0), 2, "the first block's moves");
    assert_eq!(left(1), 1, "one move made in the block");
    assert_eq!(left(3), 2, "the block's last move starts a new block");
    assert_eq!(out[3]["white"]["remaining_ms"], 20_000);
    assert!(out[0]["white"].get("periods_left").is_none());
}

/// Both overtime keys are absent for every other control, per side.
#[test]
fn other_controls_have_no_overtime_keys() {
    for control in [
        "\"180+2\"",
        "\"*60\"",
        "\"-\"",
        "\"G/5;d3\"",
        "\"40/5400:1800\"",
    ] {
        let out = states(&format!(
            "{{\"control\": {control}}}\n{{\"t\": 0, \"do\": \"start\"}}\n"
        ));
        for side in ["white", "black"] {
            let keys: Vec<&String> = out[0][side].as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                ["flag_ms", "moves", "remaining_ms", "stage", "used_ms"], // (sorted)
                "{control}"
            );
        }
    }
    let out = states(
        "{\"control\": {\"white\": \"300\", \"black\": \"byoyomi:300:5x30\"}}\n\
         {\"t\": 0, \"do\": \"start\"}\n",
    );
    assert!(out[0]["white"].get("periods_left").is_none());
    assert_eq!(out[0]["black"]["periods_left"], 5);
}

/// A stage has at most 999 moves and so has a side: the 1000th press used to
/// be accepted (`"moves": 1000`); it is refused as a value out of its
/// bounds, naming the limit.
#[test]
fn a_1000th_move_is_refused_naming_the_limit() {
    let mut input = String::from("{\"control\": \"7200+1\"}\n{\"t\": 0, \"do\": \"start\"}\n");
    let mut t = 0;
    for _ in 0..999 {
        for side in ["white", "black"] {
            t += 10;
            input.push_str(&format!(
                "{{\"t\": {t}, \"do\": \"press\", \"side\": \"{side}\"}}\n"
            ));
        }
    }
    let out = states(&input);
    assert_eq!(out.last().unwrap()["white"]["moves"], 999);
    assert_eq!(out.last().unwrap()["black"]["moves"], 999);
    input.push_str(&format!(
        "{{\"t\": {}, \"do\": \"press\", \"side\": \"white\"}}\n",
        t + 10
    ));
    let (status, out, err) = run(input.as_bytes());
    assert_eq!(status, 2);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "line 2001: white's press would be its move 1000: a side has at most 999 moves\n"
    );
}

/// `adjust` needs at least one of `remaining_ms`, `moves`, `stage` (the
/// format says so); one with none was accepted as a no-op.
#[test]
fn an_adjust_with_nothing_to_set_is_refused() {
    let (status, out, err) = run(b"{\"control\": \"300\"}\n{\"t\": 0, \"do\": \"start\"}\n\
          {\"t\": 5, \"do\": \"adjust\", \"side\": \"black\"}\n");
    assert_eq!((status, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "line 3: \"adjust\" needs at least one of \"remaining_ms\", \"moves\" or \"stage\"\n"
    );
}
