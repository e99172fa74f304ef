//! The e-board's file work, kept out of the pure cores: the live PGN written
//! atomically for broadcast tools, and recorded captures read for offline
//! decoding.
//!
//! Promises: a reader of the PGN file sees the old text or the new one,
//! never a part (temporary file, fsync, rename, fsync of the directory);
//! errors name the file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::decode::{decode_capture, render_moves, CaptureFormat, DecodeError};

/// Writes `contents` to `dir/file_name` atomically: a temporary file in the
/// same directory, fsync, rename over the old file, fsync of the directory.
pub fn write_atomic(dir: &Path, file_name: &str, contents: &str) -> io::Result<PathBuf> {
    if file_name.is_empty() || file_name.contains('/') || file_name.starts_with('.') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("PGN file name `{file_name}` must be a plain name"),
        ));
    }
    let target = dir.join(file_name);
    let temporary = dir.join(format!(".{file_name}.tmp"));
    let result = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temporary, &target)?;
        File::open(dir)?.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temporary);
        return Err(io::Error::new(
            e.kind(),
            format!("writing {}: {e}", target.display()),
        ));
    }
    Ok(target)
}

/// `chessclockctl eboard decode FILE [--san] [--raw]`.
pub fn decode_cli(
    path: &Path,
    raw: bool,
    san: bool,
    out: &mut dyn Write,
) -> Result<(), DecodeError> {
    let input = std::fs::read(path).map_err(|source| DecodeError::Io {
        path: path.to_owned(),
        source,
    })?;
    let format = if raw {
        CaptureFormat::Raw
    } else {
        CaptureFormat::Base64Lines
    };
    let moves = decode_capture(&input, format)?;
    out.write_all(render_moves(&moves, san).as_bytes())
        .map_err(DecodeError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_atomic(dir.path(), "board1.pgn", "first\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "first\n");
        write_atomic(dir.path(), "board1.pgn", "second\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second\n");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["board1.pgn"], "no temporary file left");
        assert!(write_atomic(dir.path(), "../x.pgn", "").is_err());
        let missing = dir.path().join("missing");
        let err = write_atomic(&missing, "b.pgn", "x").unwrap_err();
        assert!(err.to_string().contains("missing/b.pgn"), "{err}");
    }
}
