//! The replay reader (`chessclockctl replay`, `docs/replay-format.md`) on
//! any bytes: an error naming a line, or the states, never a panic. What
//! it accepts it accepts again, with the same output, written the other
//! ways the format allows: each line re-serialised as compact JSON, lines
//! ended with CRLF, blank lines between them. Every output line is a JSON
//! object whose `t` is its event's `t`.
#![no_main]

use std::io::Cursor;

use chessclockd::replay;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let first = replay::replay(&mut Cursor::new(data));
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = replay::run(&mut Cursor::new(data), &mut out, &mut err);
    let Ok(lines) = first else {
        let error = first.unwrap_err();
        assert!(error.line >= 1, "{error:?}");
        assert_eq!(status, replay::EXIT_BAD_INPUT);
        assert!(out.is_empty(), "bad input printed states");
        assert!(String::from_utf8_lossy(&err).starts_with("line "), "{err:?}");
        return;
    };
    assert_eq!(status, 0);
    let printed = String::from_utf8(out).expect("the output is UTF-8");
    assert_eq!(printed.lines().collect::<Vec<_>>(), lines);
    // The same timeline, written otherwise.
    let text = std::str::from_utf8(data).expect("accepted input is UTF-8");
    let values: Vec<Value> = text
        .split('\n')
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l.trim_end_matches(['\n', '\r'])).expect("accepted lines are JSON"))
        .collect();
    assert_eq!(values.len(), lines.len() + 1, "one state per event line");
    let mut rewritten = String::from("\r\n");
    for value in &values {
        rewritten.push_str(&serde_json::to_string(value).expect("a JSON value prints"));
        rewritten.push_str("\r\n \t\r\n");
    }
    let again = replay::replay(&mut Cursor::new(rewritten.as_bytes()));
    assert_eq!(again.as_ref(), Ok(&lines), "rewritten: {rewritten:?}");
    for (state, event) in lines.iter().zip(&values[1..]) {
        let state: Value = serde_json::from_str(state).expect("a state line is JSON");
        assert_eq!(state["t"], event["t"], "{state} after {event}");
        assert!(state["white"].is_object() && state["black"].is_object(), "{state}");
    }
});
