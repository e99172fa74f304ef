//! Configuration errors and where they are in the file.
//!
//! Promises: a syntax error names `file:line:column` of the span TOML
//! reports (columns counted in characters, not bytes); a validation error
//! names the line and column of the key at fault when it can be found in the
//! text, and the file alone otherwise. Tests pin these positions: operators
//! and editors jump to them.

use std::path::{Path, PathBuf};

/// A configuration error with its location.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// A validation error located in the file (the key at fault).
    #[error("{path}:{line}:{column}: {message}")]
    InvalidAt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Where in the file a validation error belongs.
pub(super) enum Place {
    /// A key of a top-level table (`[daemon]`, `rt-priority`).
    Key(&'static str, &'static str),
    Preset(String),
    /// The board with this index, at the line of this key or text.
    Board(usize, String),
}

/// 1-based (line, column) of `place` in the config text, if it can be found.
fn locate(text: &str, place: &Place) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let column = |line: &str| line.len() - line.trim_start().len() + 1;
    let is_key = |line: &str, key: &str| {
        let trimmed = line.trim_start();
        let rest = trimmed
            .strip_prefix(key)
            .or_else(|| trimmed.strip_prefix(&format!("\"{key}\"")));
        rest.is_some_and(|r| r.trim_start().starts_with('='))
    };
    match place {
        Place::Key(table, key) => {
            let mut inside = false;
            for (i, line) in lines.iter().enumerate() {
                let trimmed = line.trim();
                if trimmed.starts_with('[') {
                    inside = trimmed == format!("[{table}]");
                } else if inside && is_key(line, key) {
                    return Some((i + 1, column(line)));
                }
            }
            None
        }
        Place::Preset(name) => {
            let mut in_presets = false;
            for (i, line) in lines.iter().enumerate() {
                let trimmed = line.trim();
                if trimmed.starts_with('[') {
                    if trimmed == format!("[presets.{name}]")
                        || trimmed == format!("[presets.\"{name}\"]")
                    {
                        return Some((i + 1, column(line)));
                    }
                    in_presets = trimmed == "[presets]";
                } else if in_presets && is_key(line, name) {
                    return Some((i + 1, column(line)));
                }
            }
            None
        }
        Place::Board(index, needle) => {
            let header = lines
                .iter()
                .enumerate()
                .filter(|(_, line)| line.trim() == "[[board]]")
                .nth(*index)?
                .0;
            for (i, line) in lines.iter().enumerate().skip(header + 1) {
                if line.trim_start().starts_with('[') {
                    break;
                }
                if is_key(line, needle) {
                    return Some((i + 1, column(line)));
                }
                if let Some(at) = line.find(&format!("\"{needle}\"")) {
                    return Some((i + 1, line[..at].chars().count() + 1));
                }
            }
            Some((header + 1, column(lines[header])))
        }
    }
}

/// A TOML error as a [`ConfigError::Syntax`] at its position in `text`.
pub(super) fn syntax(text: &str, path: &Path, error: &toml::de::Error) -> ConfigError {
    let (line, column) = error
        .span()
        .map_or((1, 1), |span| line_column(text, span.start));
    ConfigError::Syntax {
        path: path.to_owned(),
        line,
        column,
        message: error.message().trim().to_owned(),
    }
}

/// A validation error at `place` in `text` (at the file alone if the place
/// cannot be found there).
pub(super) fn invalid(text: &str, path: &Path, message: String, place: &Place) -> ConfigError {
    match locate(text, place) {
        Some((line, column)) => ConfigError::InvalidAt {
            path: path.to_owned(),
            line,
            column,
            message,
        },
        None => ConfigError::Invalid {
            path: path.to_owned(),
            message,
        },
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}
