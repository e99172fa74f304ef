//! Any bytes, split anywhere, into `decode`, `decode_raw` and the
//! `Accumulator`: nothing may panic, the accumulator must always make
//! progress, and every frame it yields must survive encode → decode.
#![no_main]

use chessclock_protocol::{decode, decode_raw, encode, Accumulator, Feed, MAX_WIRE_FRAME};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode(data);
    let _ = decode_raw(data);
    // The first byte chooses the read size, so splits are explored too.
    let (step, bytes) = match data.split_first() {
        Some((s, rest)) => (usize::from(*s % 32) + 1, rest),
        None => (1, data),
    };
    let mut acc = Accumulator::new();
    for chunk in bytes.chunks(step) {
        let mut rest = chunk;
        loop {
            match acc.feed(rest) {
                Feed::NeedMore => break,
                Feed::Frame(frame, r) => {
                    assert!(r.len() < rest.len(), "accumulator made no progress");
                    let mut out = [0u8; MAX_WIRE_FRAME];
                    let n = encode(&frame, &mut out).expect("a decoded frame re-encodes");
                    assert_eq!(decode(&out[..n - 1]), Ok(frame), "re-encoded frame differs");
                    rest = r;
                }
                Feed::Error(_, r) => {
                    assert!(r.len() < rest.len(), "accumulator made no progress");
                    rest = r;
                }
            }
        }
        assert!(acc.pending() <= MAX_WIRE_FRAME);
    }
});
