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
