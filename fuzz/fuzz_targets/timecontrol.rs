//! The time-control notation parser on any text: an error or a control,
//! never a panic; what it accepts prints back to text it accepts again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(control) = chessclockd::timecontrol::parse(text) {
        let printed = control.to_string();
        assert!(
            chessclockd::timecontrol::parse(&printed).is_ok(),
            "{text:?} parsed, but its printed form {printed:?} does not"
        );
    }
});
