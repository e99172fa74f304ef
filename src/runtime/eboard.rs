//! The live PGN file of a board, for broadcast tools: written atomically
//! into `[daemon] pgn-dir` by the control loop once the text is committed.

use std::path::{Path, PathBuf};

/// Writes a live PGN atomically into `dir` (`[daemon] pgn-dir`), creating
/// the directory first if it is missing (the shipped config names one under
/// the state directory that nothing else creates).
pub fn write_pgn(dir: &Path, file_name: &str, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    crate::eboard::files::write_atomic(dir, file_name, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pgn_directory_is_created_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        let pgn_dir = dir.path().join("state").join("pgn");
        let written = write_pgn(&pgn_dir, "b1.pgn", "1. e4 *\n").unwrap();
        assert_eq!(written, pgn_dir.join("b1.pgn"));
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "1. e4 *\n");
        write_pgn(&pgn_dir, "b1.pgn", "1. d4 *\n").unwrap();
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "1. d4 *\n");
        // A file where the directory should be: a clear error, no panic.
        let blocked = dir.path().join("blocked");
        std::fs::write(&blocked, "").unwrap();
        assert!(write_pgn(&blocked, "b1.pgn", "*\n").is_err());
    }
}
