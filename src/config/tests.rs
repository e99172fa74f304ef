//! The configuration's tests: presets, validation and the exact
//! `line:column` of every kind of error.

use super::errors::line_column;
use super::*;
use crate::engine::{Credit, Side};

fn config(text: &str) -> Result<Config, ConfigError> {
    Config::parse_str(text, Path::new("test.toml"))
}

#[test]
fn builtin_presets_all_resolve_to_what_they_promise() {
    let config = Config::default();
    for preset in builtin_presets() {
        config.resolve_control(preset.name).unwrap();
    }
    let control = |name: &str| config.resolve_control(name).unwrap().0;
    assert_eq!(
        control("fide-classical").white.to_string(),
        "40/5400+30:1800+30"
    );
    assert_eq!(control("fide-rapid").white.to_string(), "900+10");
    assert_eq!(control("blitz").white.to_string(), "180+2");
    assert_eq!(
        control("us-classical").white.to_string(),
        "40/7200d5:1800d5"
    );
    let armageddon = control("armageddon");
    assert_eq!(armageddon.for_side(Side::White).to_string(), "300");
    assert_eq!(armageddon.for_side(Side::Black).to_string(), "240");
}

#[test]
fn notation_when_not_a_preset_with_engine_settings() {
    let config = config("[engine]\ncredit = \"after-move\"\n").unwrap();
    let (control, settings) = config.resolve_control(" G/90;d5 ").unwrap();
    assert_eq!(control.white.to_string(), "5400d5");
    assert_eq!(settings.credit, Credit::AfterMove);
    let err = config.resolve_control("fide-clasical").unwrap_err();
    assert!(err.contains("neither a preset"), "{err}");
    assert!(err.contains("fide-classical"), "lists the presets: {err}");
}

#[test]
fn config_presets_override_builtins_and_may_alias() {
    let config = config(
        "[presets]\nblitz = \"300+3\"\nmy-blitz = \"blitz\"\n\
         [presets.slow]\ncontrol = \"3600\"\nfreeze = true\ncredit = \"after-move\"\n",
    )
    .unwrap();
    assert_eq!(
        config.resolve_control("blitz").unwrap().0.white.to_string(),
        "300+3"
    );
    assert_eq!(
        config
            .resolve_control("my-blitz")
            .unwrap()
            .0
            .white
            .to_string(),
        "300+3"
    );
    let (_, settings) = config.resolve_control("slow").unwrap();
    assert_eq!(settings.freeze, Some(true));
    assert_eq!(settings.credit, Credit::AfterMove);
}

#[test]
fn preset_cycles_and_bad_presets_are_refused() {
    let err = config("[presets]\na = \"b\"\nb = \"a\"\n").unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
    let err = config("[presets]\nbroken = \"40/\"\n").unwrap_err();
    assert!(err.to_string().contains("`broken`"), "{err}");
    let err = config("[presets.half]\nwhite = \"300\"\n").unwrap_err();
    assert!(
        err.to_string().contains("both `white` and `black`"),
        "{err}"
    );
}

#[test]
fn boards_are_validated() {
    let err = config("[[board]]\nid = \"a\"\n[[board]]\nid = \"a\"\n").unwrap_err();
    assert!(err.to_string().contains("used twice"), "{err}");
    let err = config("[[board]]\nid = \"\"\n").unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    let err = config(
        "[[board]]\nid = \"a\"\nbuttons = \"serial:X\"\n[[board]]\nid = \"b\"\ndisplays = [\"serial:X\"]\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("`serial:X`"), "{err}");
    let err = config("[[board]]\nid = \"a\"\ncontrol = \"nonsense\"\n").unwrap_err();
    assert!(err.to_string().contains("board `a`"), "{err}");
    let ok =
        config("[[board]]\nid = \"Board_7\"\nbuttons = \"serial:X\"\ndisplays = [\"serial:X\"]\n")
            .unwrap();
    assert_eq!(ok.boards[0].control, "fide-rapid");
    let err = config("[[board]]\nid = \"a\"\nbuttons = \"ttyACM0\"\n").unwrap_err();
    match err {
        ConfigError::Syntax { line, .. } => assert_eq!(line, 3),
        other => panic!("{other:?}"),
    }
}

/// Issue 28: every string the configuration gives a board is bounded, with
/// the core's limits and words.
#[test]
fn the_configurations_strings_are_bounded() {
    let id = "b".repeat(65);
    let err = config(&format!("[[board]]\nid = \"{id}\"\n")).unwrap_err();
    assert!(
        err.to_string()
            .contains("a board id has 65 bytes (at most 64)"),
        "{err}"
    );
    let device = format!("/dev/{}", "d".repeat(300));
    let err = config(&format!("[[board]]\nid = \"a\"\nbuttons = \"{device}\"\n")).unwrap_err();
    assert!(
        err.to_string()
            .contains("board `a`: a device's name has 305 bytes (at most 256)"),
        "{err}"
    );
    let err = config(&format!(
        "[[board]]\nid = \"a\"\nwhite = \"{}\"\n",
        "w".repeat(256)
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("tag `White`: the value has 256 characters (at most 255)"),
        "{err}"
    );
    let err = config(&format!(
        "[[board]]\nid = \"a\"\ncontrol = \"{}\"\n",
        "1".repeat(300)
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("the time control has 300 characters (at most 256)"),
        "{err}"
    );
    let name = "p".repeat(257);
    let err = config(&format!("[presets]\n{name} = \"300\"\n")).unwrap_err();
    assert!(
        err.to_string()
            .contains("a preset's name has 257 characters (at most 256)"),
        "{err}"
    );
    // At the limits: taken.
    config(&format!(
        "[[board]]\nid = \"{}\"\nwhite = \"{}\"\n",
        "b".repeat(64),
        "w".repeat(255)
    ))
    .unwrap();
}

#[test]
fn validation_errors_point_at_the_key() {
    let at = |text: &str| match config(text).unwrap_err() {
        ConfigError::InvalidAt { line, column, .. } => (line, column),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        at("[[board]]\nid = \"a\"\n\n[[board]]\n  id = \"a\"\n"),
        (5, 3)
    );
    assert_eq!(at("[[board]]\nid = \"a\"\ncontrol = \"x\"\n"), (3, 1));
    assert_eq!(at("[presets]\nok = \"300\"\nbad = \"3x\"\n"), (3, 1));
    assert_eq!(at("[presets.bad]\nwhite = \"300\"\n"), (1, 1));
    assert_eq!(
        at("[[board]]\nid = \"a\"\nbuttons = \"serial:X\"\n[[board]]\nid = \"b\"\ndisplays = [\"serial:X\"]\n"),
        (6, 13)
    );
}

#[test]
fn displays_take_a_side_and_plain_strings_still_work() {
    let parsed = config(
        "[[board]]\nid = \"a\"\ndisplays = [\"/dev/d0\", { device = \"/dev/d1\", side = \"black\" },\n  { device = \"serial:D2\", side = \"white\" }, { device = \"/dev/d3\" }]\n",
    )
    .unwrap();
    let sides: Vec<(String, DisplaySide)> = parsed.boards[0]
        .displays
        .iter()
        .map(|d| (String::from(d.device.clone()), d.side))
        .collect();
    assert_eq!(
        sides,
        vec![
            ("/dev/d0".to_owned(), DisplaySide::Both),
            ("/dev/d1".to_owned(), DisplaySide::Black),
            ("serial:D2".to_owned(), DisplaySide::White),
            ("/dev/d3".to_owned(), DisplaySide::Both),
        ]
    );
    // Written back the same way (a plain string for `both`).
    let text = toml::to_string(&parsed).unwrap();
    assert!(text.contains("\"/dev/d0\""), "{text}");
    let again = Config::parse_str(&text, Path::new("again.toml")).unwrap();
    assert_eq!(again.boards, parsed.boards);
    // The same device twice on one board, as a display and in a table.
    let err = config(
        "[[board]]\nid = \"a\"\ndisplays = [{ device = \"/dev/x\", side = \"black\" }]\n[[board]]\nid = \"b\"\ndisplays = [\"/dev/x\"]\n",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("`/dev/x` is used by both"),
        "{err}"
    );
}

#[test]
fn bad_display_entries_name_line_and_column() {
    let at = |text: &str| match config(text).unwrap_err() {
        ConfigError::Syntax {
            line,
            column,
            message,
            ..
        } => (line, column, message),
        other => panic!("{other:?}"),
    };
    let (line, column, message) =
        at("[[board]]\nid = \"a\"\ndisplays = [{ device = \"/dev/d1\", side = \"blue\" }]\n");
    assert_eq!((line, column), (3, 42), "{message}");
    assert!(
        message.contains("white") && message.contains("black"),
        "{message}"
    );
    let (line, _, message) = at("[[board]]\nid = \"a\"\n\ndisplays = [{ side = \"black\" }]\n");
    assert_eq!(line, 4);
    assert!(message.contains("missing field `device`"), "{message}");
    let (_, _, message) = at("[[board]]\nid = \"a\"\ndisplays = [{ device = \"ttyACM0\" }]\n");
    assert!(message.contains("must be an absolute path"), "{message}");
    let (_, _, message) =
        at("[[board]]\nid = \"a\"\ndisplays = [{ device = \"/dev/d\", panel = 1 }]\n");
    assert!(message.contains("unknown field `panel`"), "{message}");
    let (_, _, message) = at("[[board]]\nid = \"a\"\ndisplays = [7]\n");
    assert!(message.contains("a device"), "{message}");
}

#[test]
fn an_rt_priority_above_the_kernels_maximum_is_an_error() {
    let (_, max) = crate::platform::fifo_priority_range();
    assert!(max >= 1, "{max}");
    let ok = config(&format!("[daemon]\nrt-priority = {max}\n")).unwrap();
    assert_eq!(i32::from(ok.daemon.rt_priority), max);
    if max < 255 {
        let err = config(&format!(
            "[daemon]\nmlock = true\nrt-priority = {}\n",
            max + 1
        ))
        .unwrap_err();
        match err {
            ConfigError::InvalidAt {
                line,
                column,
                message,
                ..
            } => {
                assert_eq!((line, column), (3, 1));
                assert!(
                    message.contains(&format!("highest SCHED_FIFO priority, {max}")),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(config("[daemon]\nrt-priority = 0\n").is_ok());
}

#[test]
fn zero_time_controls_are_config_errors_at_their_key() {
    let at = |text: &str| match config(text).unwrap_err() {
        ConfigError::InvalidAt {
            line,
            column,
            message,
            ..
        } => (line, column, message),
        other => panic!("{other:?}"),
    };
    let (line, column, message) = at("[[board]]\nid = \"a\"\ncontrol = \"0+0\"\n");
    assert_eq!((line, column), (3, 1));
    assert!(message.contains("0 s"), "{message}");
    let (line, _, message) = at("[presets]\nnothing = \"40/0:1800\"\n");
    assert_eq!(line, 2);
    assert!(
        message.contains("`nothing`") && message.contains("0 s"),
        "{message}"
    );
    let (_, _, message) = at("[presets.t]\nwhite = \"300\"\nblack = \"*0\"\n");
    assert!(message.contains("black"), "{message}");
}

#[test]
fn crash_safety_is_on_unless_turned_off() {
    assert!(Config::default().daemon.crash_safety);
    assert!(
        !config("[daemon]\ncrash-safety = false\n")
            .unwrap()
            .daemon
            .crash_safety
    );
}

#[test]
fn line_column_counts_characters() {
    assert_eq!(line_column("ab\ncé d", 7), (2, 4));
    assert_eq!(line_column("", 5), (1, 1));
}

/// A stage of 1000 moves is refused by the configuration (`control = ...`)
/// and by `resolve_control`, the path of `chessclockctl new` and D-Bus
/// `NewGame`, with the same words naming the limit.
#[test]
fn a_stage_of_1000_moves_is_refused_by_the_config_and_by_new_game() {
    let limit = "a stage of 1000 moves is more than a game can have (at most 999)";
    let err = config("[presets.t]\ncontrol = \"1000/60\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.ends_with(limit), "{err}");
    let err = Config::default()
        .resolve_control("40/5400:1000/60")
        .unwrap_err();
    assert!(err.ends_with(limit), "{err}");
    Config::default().resolve_control("999/60").unwrap();
}

#[test]
fn overtime_tables_are_refused_in_their_own_words() {
    let cases = [
        (
            "byo-yomi",
            "periods = 0, period = 30",
            "byo-yomi needs at least 1 period",
        ),
        (
            "byo-yomi",
            "periods = 1000, period = 30",
            "at most 999 byo-yomi periods",
        ),
        (
            "byo-yomi",
            "periods = 5, period = 0",
            "a byo-yomi period must be longer than 0 s",
        ),
        (
            "canadian",
            "moves = 0, block = 300",
            "a Canadian block needs at least 1 move",
        ),
        (
            "canadian",
            "moves = 1000, block = 300",
            "a Canadian block of 1000 moves is more than a game can have (at most 999)",
        ),
        (
            "canadian",
            "moves = 25, block = 0",
            "a Canadian block must be longer than 0 s",
        ),
    ];
    for (kind, fields, message) in cases {
        let text = format!("[presets.t]\ncontrol = {{ type = \"{kind}\", main = 60, {fields} }}\n");
        let err = config(&text).unwrap_err().to_string();
        assert!(err.ends_with(message), "{text}: {err}");
    }
    let ok = config(
        "[presets]\nb = { control = { type = \"byo-yomi\", main = 60, periods = 5, period = 30 } }\n\
         c = { control = { type = \"canadian\", main = 60, moves = 25, block = 300 } }\n",
    )
    .unwrap();
    let shown = |name: &str| ok.resolve_control(name).unwrap().0.white.to_string();
    assert_eq!(shown("b"), "byoyomi:60:5x30");
    assert_eq!(shown("c"), "canadian:60:25/300");
}

#[test]
fn the_hall_is_off_by_default_and_checked_where_written() {
    assert_eq!(Config::default().hall, None);
    let hall = config("[hall]\nname = \"open\"\n").unwrap().hall.unwrap();
    assert_eq!(hall.broker, "mqtt://127.0.0.1:1883");
    assert_eq!(hall.keepalive_seconds, 5);
    assert!(matches!(
        config("[hall]\nbroker = \"mqtt://h\"\n"),
        Err(ConfigError::Syntax { .. })
    ));
    for (text, line, needle) in [
        (
            "[hall]\nname = \"a\"\nbroker = \"http://x\"\n",
            3,
            "mqtt://",
        ),
        ("[hall]\nbroker = \"mqtt://x:0\"\nname = \"a\"\n", 2, "port"),
        ("[hall]\nname = \"a/b\"\n", 2, "topic level"),
        ("[hall]\nname = \"a\"\nhost = \"pi#1\"\n", 3, "topic level"),
        (
            "[hall]\nname = \"a\"\nkeepalive-seconds = 0\n",
            3,
            "keepalive",
        ),
        ("[hall]\nname = \"a\"\nbroker = \"mqtts://x\"\n", 3, "`ca`"),
        ("[hall]\nname = \"a\"\nca = \"/ca.pem\"\n", 3, "mqtts"),
    ] {
        match config(text) {
            Err(ConfigError::InvalidAt {
                line: at, message, ..
            }) => {
                assert_eq!(at, line, "{text}: {message}");
                assert!(message.contains(needle), "{text}: {message}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn broker_addresses() {
    let at = |url| BrokerAddress::parse(url);
    assert_eq!(
        at("mqtt://127.0.0.1:1884"),
        Ok(BrokerAddress {
            host: "127.0.0.1".into(),
            port: 1884,
            tls: false
        })
    );
    assert_eq!(
        at("mqtts://hall.lan").map(|a| (a.port, a.tls)),
        Ok((8883, true))
    );
    assert_eq!(
        at("mqtt://[::1]:9").map(|a| (a.host, a.port)),
        Ok(("::1".into(), 9))
    );
    assert!(at("mqtt://user@h").is_err());
    assert!(at("mqtt://h:x").is_err());
    assert!(at("mqtt://").is_err());
}

/// Issue 28 item 5: one rule for a control under a minute. The file is
/// valid (a short control is legal, and tests and demos use them) but
/// `--check-config` and the daemon say the same as `chessclockctl new`,
/// at the control's line and column, unless `short-control = true`.
#[test]
fn a_control_under_a_minute_is_warned_of_as_the_cli_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "[[board]]\nid = \"b1\"\ncontrol = \"15+10\"\n").unwrap();
    let (config, warnings) = Config::load_with_warnings(&path).unwrap();
    assert_eq!(config.boards.len(), 1);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let want = format!(
        "{}:3:1: warning: board `b1`: control: `15+10` gives 0:15 of base time",
        path.display()
    );
    assert!(warnings[0].starts_with(&want), "{}", warnings[0]);
    assert!(
        warnings[0].contains("15 minutes is 900+10")
            && warnings[0].contains("short-control = true"),
        "{}",
        warnings[0]
    );
    std::fs::write(
        &path,
        "[[board]]\nid = \"b1\"\ncontrol = \"15+10\"\nshort-control = true\n",
    )
    .unwrap();
    assert!(Config::load_with_warnings(&path).unwrap().1.is_empty());
    std::fs::write(&path, "[[board]]\nid = \"b1\"\ncontrol = \"900+10\"\n").unwrap();
    assert!(Config::load_with_warnings(&path).unwrap().1.is_empty());
}
