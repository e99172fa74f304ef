//! The DGT message parser on any bytes, cut into reads at any points: it
//! must never panic, never hold more than a message's worth of bytes, and
//! give the same messages however the stream is cut.
#![no_main]

use chessclockd::eboard::protocol::Parser;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First byte: the read size (1..=64) for the cut stream.
    let Some((&step, stream)) = data.split_first() else {
        return;
    };
    let step = usize::from(step % 64) + 1;
    let mut whole = Parser::new();
    let at_once = whole.push(stream);
    let mut cut = Parser::new();
    let mut pieces = Vec::new();
    for chunk in stream.chunks(step) {
        pieces.extend(cut.push(chunk));
    }
    assert_eq!(format!("{at_once:?}"), format!("{pieces:?}"));
    assert_eq!(whole.pending(), cut.pending());
});
