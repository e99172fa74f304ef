//! The DGT message parser on any bytes, cut into reads at any points: it
//! must never panic, and give the same messages and drop the same number of
//! stray bytes however the stream is cut (how stray bytes are grouped into
//! issues may follow the reads).
#![no_main]

use chessclockd::eboard::protocol::{ParseIssue, Parsed, Parser};
use libfuzzer_sys::fuzz_target;

fn split(parsed: Vec<Parsed>) -> (Vec<String>, usize, Vec<String>) {
    let mut messages = Vec::new();
    let mut stray = 0;
    let mut other = Vec::new();
    for p in parsed {
        match p {
            Parsed::Message(m) => messages.push(format!("{m:?}")),
            Parsed::Issue(ParseIssue::StrayBytes(n)) => stray += n,
            Parsed::Issue(issue) => other.push(format!("{issue:?}")),
        }
    }
    (messages, stray, other)
}

fuzz_target!(|data: &[u8]| {
    // First byte: the read size (1..=64) for the cut stream.
    let Some((&step, stream)) = data.split_first() else {
        return;
    };
    let step = usize::from(step % 64) + 1;
    let mut whole = Parser::new();
    let at_once = split(whole.push(stream));
    let mut cut = Parser::new();
    let mut pieces = Vec::new();
    for chunk in stream.chunks(step) {
        pieces.extend(cut.push(chunk));
    }
    let pieces = split(pieces);
    assert_eq!(at_once, pieces);
    assert_eq!(whole.pending(), cut.pending());
});
