//! The shipped config parses and means what its comments say; broken configs
//! are refused with file, line and column (syntax) or the item (validation).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::path::{Path, PathBuf};

use chessclockd::config::{Config, ConfigError, DeviceRef, DisplaySide};
use chessclockd::engine::{Credit, Side, StageAdvance, SECOND};
use chessclockd::timecontrol::TimeControl;

fn manifest(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn shipped_config_parses_and_resolves_every_board() {
    let config = Config::load(&manifest("config/chessclockd.toml")).unwrap();
    assert_eq!(config.boards.len(), 3);
    assert_eq!(config.boards[0].id, "board1");
    assert_eq!(
        config.boards[0].buttons,
        Some(DeviceRef::Path("/dev/chessclock/buttons-CC0001".into()))
    );
    assert_eq!(
        config.boards[1].buttons,
        Some(DeviceRef::Serial("CC0002".into()))
    );
    // Two one-panel displays, one for each side.
    let sides: Vec<DisplaySide> = config.boards[2].displays.iter().map(|d| d.side).collect();
    assert_eq!(sides, [DisplaySide::White, DisplaySide::Black]);
    assert_eq!(config.boards[0].displays[0].side, DisplaySide::Both);
    assert!(config.daemon.crash_safety);
    assert_eq!(config.engine.credit, Credit::BeforeMove);
    for board in &config.boards {
        config.resolve_control(&board.control).unwrap();
    }
    let (control, settings) = config.resolve_control("no-move-counter").unwrap();
    assert_eq!(settings.stage_advance, StageAdvance::Flag);
    assert_eq!(control.white.to_string(), "40/5400+30:1800+30");
    let (control, _) = config.resolve_control("final-armageddon").unwrap();
    assert_eq!(control.for_side(Side::Black).to_string(), "60/240:0+2");
    let (control, _) = config.resolve_control("go-style").unwrap();
    assert_eq!(
        control.white,
        TimeControl::ByoYomi {
            main: 900 * SECOND,
            periods: 5,
            period: 30 * SECOND
        }
    );
}

#[test]
fn unknown_key_names_file_line_and_column() {
    let path = manifest("tests/config/invalid_unknown_key.toml");
    let err = Config::load(&path).unwrap_err();
    match &err {
        ConfigError::Syntax { line, column, .. } => assert_eq!((*line, *column), (6, 1)),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}:6:1: ", path.display())),
        "{text}"
    );
    assert!(text.contains("credits"), "{text}");
}

#[test]
fn wrong_value_type_names_its_position() {
    let path = manifest("tests/config/invalid_bad_value.toml");
    let text = Config::load(&path).unwrap_err().to_string();
    assert!(
        text.starts_with(&format!("{}:3:10: ", path.display())),
        "{text}"
    );
}

#[test]
fn bad_board_id_is_refused_with_file_line_and_column() {
    let path = manifest("tests/config/invalid_board_id.toml");
    let err = Config::load(&path).unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::InvalidAt {
                line: 2,
                column: 1,
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}:2:1: ", path.display())),
        "{text}"
    );
    assert!(text.contains("`board 1`"), "{text}");
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = Config::load(Path::new("/nonexistent/chessclockd.toml")).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/chessclockd.toml"));
}

#[test]
fn the_shipped_hall_example_parses_when_uncommented() {
    let text = std::fs::read_to_string(manifest("config/chessclockd.toml")).unwrap();
    assert!(Config::parse_str(&text, Path::new("chessclockd.toml"))
        .unwrap()
        .hall
        .is_none());
    let start = text.find("# [hall]").unwrap();
    let block: String = text[start..]
        .lines()
        .map(|line| line.strip_prefix("# ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    let text = format!("{}{block}\n", &text[..start]);
    let config = Config::parse_str(&text, Path::new("chessclockd.toml")).unwrap();
    let hall = config.hall.unwrap();
    assert_eq!(hall.name, "open2026");
    assert_eq!(hall.broker, "mqtt://192.168.1.10:1883");
    assert_eq!(hall.keepalive_seconds, 5);
}
