//! The config parser (TOML, validation, presets) on any text: a located
//! error or a config, never a panic; every board's control resolves or
//! says why not.
#![no_main]

use std::path::Path;

use chessclockd::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = Config::parse_str(text, Path::new("fuzz.toml")) {
        for board in &config.boards {
            let _ = config.resolve_control(&board.control);
        }
    }
});
