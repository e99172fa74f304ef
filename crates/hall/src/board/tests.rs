//! The board's page's pure parts: a known game's record folded, its
//! instants, its replay export, and its chart against the golden file
//! (`src/board/golden/chart.svg`; `CHESSCLOCKD_UPDATE_GOLDEN=1` rewrites
//! it, to be looked at before it is committed).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{json, Value};

use super::chart;
use super::record::{Record, START_FEN};

/// The game's creation, wall-clock µs (2026-12-06 14:00:00 UTC).
const CREATED_US: i64 = 1_796_565_600_000_000;

/// A History() row: `event` (its `do` and fields) at game ms `t`.
fn row(t: i64, event: Value) -> Value {
    let mut row = event;
    row["t_ms"] = json!(t);
    row["t_us"] = json!(t * 1000);
    row["wall_us"] = json!(CREATED_US + t * 1000);
    row["caller_uid"] = Value::Null;
    row["outcome"] = json!([]);
    row["white_used_ms"] = json!(0);
    row["black_used_ms"] = json!(0);
    row
}

fn press(t: i64, side: &str) -> Value {
    row(t, json!({"do": "press", "side": side}))
}

/// A known game under `4/120+5:60+5`: three moves each, an arbiter call
/// (the clocks stopped 20 s), White's fourth move into stage 2, a
/// correction of Black's clock, Black's fourth move, two more moves, two
/// e-board moves, a relative correction, and White's flag by time before
/// the last row (a note).
pub fn known_game() -> Value {
    let mut events = vec![row(1_000, json!({"do": "start"}))];
    let mut t = 1_000;
    for (gap, side) in [
        (5_000, "white"),
        (4_000, "black"),
        (5_000, "white"),
        (7_000, "black"),
        (8_000, "white"),
        (11_000, "black"),
    ] {
        t += gap;
        events.push(press(t, side));
    }
    events.push(row(
        2_000,
        json!({"do": "board-move", "ply": 1, "side": "white", "side_moves": 1, "san": "e4",
               "uci": "e2e4", "fen_after": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
               "confirmed": true}),
    ));
    events.push(row(50_000, json!({"do": "arbiter-call"})));
    events.push(row(70_000, json!({"do": "resume"})));
    events.push(press(80_000, "white"));
    events.push(row(
        85_000,
        json!({"do": "adjust", "side": "black", "remaining_us": 90_000_000, "moves": null,
               "stage": null}),
    ));
    events.push(press(100_000, "black"));
    events.push(row(
        110_000,
        json!({"do": "adjust", "side": "white", "remaining_us": 150_000_000, "moves": null,
               "stage": null, "by_us": -30_000_000}),
    ));
    events.push(press(130_000, "white"));
    events.push(press(150_000, "black"));
    events.push(row(
        400_000,
        json!({"do": "note", "text": "flag seen by the arbiter"}),
    ));
    json!({
        "board": "b7", "control": "4/120+5:60+5",
        "settings": {"credit": "before-move", "stage-advance": "moves", "freeze": null},
        "created_wall_us": CREATED_US, "caller_uid": null, "tenths_below_ms": 20_000,
        "events": events,
        "from": 0, "next": null, "total": 17,
    })
}

fn record() -> Record {
    Record::new(serde_json::from_value(known_game()).unwrap()).unwrap()
}

#[test]
fn the_chart_of_a_known_game_is_its_golden_file() {
    let svg = chart::svg(&record());
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/board/golden/chart.svg");
    if std::env::var_os("CHESSCLOCKD_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &svg).unwrap();
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (CHESSCLOCKD_UPDATE_GOLDEN=1 writes it)",
            golden.display()
        )
    });
    assert!(
        svg == expected,
        "the chart differs from {} (CHESSCLOCKD_UPDATE_GOLDEN=1 rewrites it):\n{svg}",
        golden.display()
    );
    // What the picture must show, whatever the golden file says.
    assert_eq!(svg.matches("class=\"pause\"").count(), 1, "{svg}");
    assert_eq!(
        svg.matches("<line class=\"correction\"").count(),
        2,
        "{svg}"
    );
    assert_eq!(svg.matches("<line class=\"stage\"").count(), 2, "{svg}");
    assert_eq!(svg.matches("<line class=\"flag\"").count(), 1, "{svg}");
    assert!(svg.contains("white's flag"), "{svg}");
    assert!(svg.contains("class=\"clock white\"") && svg.contains("class=\"clock black\""));
}

#[test]
fn the_time_machine_is_the_engine_over_the_record() {
    let record = record();
    // Before the start: full clocks, nothing runs.
    let at = record.at(500_000);
    assert_eq!(at["started"], false);
    assert_eq!(at["white"]["remaining_ms"], 125_000, "{at}");
    // White thinking 3 s into move 1 (120 s + 5 s credited before it).
    let at = record.at(4_000_000);
    assert_eq!(at["running"], "white");
    assert_eq!(at["white"]["remaining_ms"], 122_000, "{at}");
    assert_eq!(at["white"]["text"], "2:02");
    assert_eq!(at["game_time"], "0:00:04.000");
    assert!(at["fen"].as_str().unwrap().contains("4P3"), "{at}");
    assert_eq!(record.at(1_500_000)["fen"], START_FEN);
    assert_eq!(
        at["row"], 8,
        "the e-board's move at 2 s, the last row before"
    );
    // During the arbiter call: stopped, both clocks held.
    let during = record.at(60_000_000);
    let before = record.at(50_000_000);
    assert_eq!(during["paused"], true);
    assert_eq!(during["running"], Value::Null);
    assert_eq!(during["white"], before["white"]);
    assert_eq!(
        during["black"]["remaining_ms"],
        before["black"]["remaining_ms"]
    );
    assert_eq!(during["white"]["moves"], 3);
    assert!(during["fen"].as_str().unwrap().contains("4P3"), "{during}");
    // The correction set Black to 1:30 at 85 s, Black running since 80 s.
    assert_eq!(record.at(85_000_000)["black"]["remaining_ms"], 90_000);
    assert_eq!(record.at(95_000_000)["black"]["remaining_ms"], 80_000);
    // White's flag fell by time, between rows.
    let end = record.at(400_000_000);
    assert_eq!(end["flags"], json!(["white"]), "{end}");
    let flag_ms = end["white"]["flag_ms"].as_i64().unwrap();
    assert!(flag_ms > 150_000 && flag_ms < 400_000, "{end}");
    assert_eq!(end["white"]["text"], "0:00.0");
    // The report is the replay tool's line.
    assert_eq!(end["report"]["t"], 400_000);
    assert_eq!(end["report"]["white"]["remaining_ms"], 0);
}

#[test]
fn instants_map_between_game_time_and_time_of_day() {
    let record = record();
    assert_eq!(record.wall_of(12_345_000), CREATED_US + 12_345_000);
    assert_eq!(record.game_of_wall(CREATED_US + 12_345_000), 12_345_000);
    assert_eq!(record.game_of_wall(CREATED_US - 5_000_000), 0);
    assert_eq!(record.game_of_wall(CREATED_US + 999_000_000), 999_000_000);
}

#[test]
fn the_replay_export_is_the_placed_inputs() {
    let lines = record().replay_lines();
    assert_eq!(
        lines[0],
        r#"{"control":"4/120+5:60+5","credit":"before-move","stage_advance":"moves"}"#
    );
    assert_eq!(lines[1], r#"{"do":"start","t":1000}"#);
    assert!(
        lines.contains(&r#"{"do":"pause","t":50000}"#.to_owned()),
        "{lines:?}"
    );
    assert!(
        lines.contains(
            &r#"{"do":"adjust","remaining_ms":90000,"side":"black","t":85000}"#.to_owned()
        ),
        "{lines:?}"
    );
    // A relative correction made in order: the time it set, as stored.
    assert!(
        lines.contains(
            &r#"{"do":"adjust","remaining_ms":150000,"side":"white","t":110000}"#.to_owned()
        ),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 1 + 1 + 6 + 2 + 1 + 1 + 1 + 1 + 2, "{lines:?}");
}

#[test]
fn the_moves_carry_their_clock_and_san() {
    let mut game = known_game();
    // The daemon's clocks after White's first press, as History() has them.
    game["events"][1]["white_remaining_ms"] = json!(125_000);
    game["events"][1]["move_number"] = json!(1);
    game["events"][1]["move_used_ms"] = json!(5_000);
    let record = Record::new(serde_json::from_value(game).unwrap()).unwrap();
    let moves = record.moves();
    assert_eq!(moves[0]["white"]["san"], "e4");
    assert_eq!(moves[0]["white"]["clk"], "0:02:05");
    assert_eq!(moves[0]["white"]["used"], "0:05.000");
    let table = record.table();
    assert_eq!(table.len(), 17);
    assert_eq!(table[0]["kind"], "start");
    assert_eq!(table[0]["who"], "chessclockd");
}

#[test]
fn a_preset_name_is_refused_in_words() {
    let mut game = known_game();
    game["control"] = json!("rapid-club");
    let error = Record::new(serde_json::from_value(game).unwrap()).unwrap_err();
    assert!(error.contains("rapid-club"), "{error}");
}
