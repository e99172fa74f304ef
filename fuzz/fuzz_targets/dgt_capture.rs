//! A whole capture through the DGT session and move detector (what
//! `chessclock-sim dgt decode` does): errors allowed, panics not.
#![no_main]

use chessclockd::eboard::decode::{decode_capture, CaptureFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_capture(data, CaptureFormat::Raw);
    let _ = decode_capture(data, CaptureFormat::Base64Lines);
});
