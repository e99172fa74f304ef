//! Tests of the exports: byes carried into the TRF and the CSV, TRF26's
//! records, the bulletin, and a disagreement between the desk and a
//! board's own record flagged (never settled) until a correction.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::exports::{bulletin_of, Disagreement};
use super::*;
use crate::event::store::Correction;

const BYES: &str = include_str!("../../../../tests/data/hall/round2-byes.trf");

/// A board's state: its game of round 2 (`Round "2.B"`), over with
/// `result` or running.
fn board(number: u32, result: Option<&str>) -> Value {
    json!({
        "snapshot": {"started": true, "paused": false, "running": "white",
                     "control": "600+5", "white_remaining_ms": 1_000,
                     "black_remaining_ms": 2_000, "flags": []},
        "snapshot_wall_ms": 5,
        "state": {"result": result.map(|r| json!({"result": r, "termination": "normal"}))},
        "pgn": format!("[Round \"2.{number}\"]\n[White \"?\"]\n[Black \"?\"]\n\n1. e4 e5 *\n"),
    })
}

/// The desk's export `file` over `boards`: status, body.
fn get(
    desk: &Desk,
    boards: &BTreeMap<String, Value>,
    corrections: &[Correction],
    file: &str,
) -> (StatusCode, String) {
    let response = {
        let setup = lock(&desk.setup);
        exports::export(&setup, boards, corrections, file)
    };
    let status = response.status();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let bytes = runtime
        .block_on(axum::body::to_bytes(response.into_body(), 1 << 20))
        .unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

#[test]
fn a_trf_s_byes_are_read_and_count_in_the_points() {
    let pairings = Pairings::parse(BYES, 2).unwrap();
    let boards: Vec<(u32, Option<u32>, Option<u32>)> = pairings
        .games
        .iter()
        .map(|g| (g.board, g.white.number, g.black.number))
        .collect();
    assert_eq!(
        boards,
        vec![
            (1, Some(7), Some(1)),
            (2, Some(4), Some(2)),
            (3, Some(6), Some(3))
        ]
    );
    let byes: Vec<(Option<u32>, char, &str)> = pairings
        .byes
        .iter()
        .map(|b| (b.player.number, b.code, b.kind()))
        .collect();
    assert_eq!(
        byes,
        vec![
            (Some(5), 'H', "half-point bye"),
            (Some(8), 'U', "pairing-allocated bye")
        ]
    );
    // Round 1's byes: 4 (U) and 8 (H).
    let first = Pairings::parse(BYES, 1).unwrap();
    assert_eq!(first.byes.len(), 2);
    let text = results::trf_with_results(BYES, 2, &[]).unwrap();
    let points = |number: u32| -> String {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("001 {number:>4}")))
            .unwrap();
        line[80..84].trim().to_owned()
    };
    // The byes' points: 5 had 0 and takes a half; 8 had a half and takes
    // a point; the others are as they were.
    assert_eq!(points(5), "0.5");
    assert_eq!(points(8), "1.5");
    assert_eq!(points(1), "1.0");
}

#[test]
fn a_disagreement_is_flagged_and_stops_the_trf_until_a_correction() {
    let desk = Desk::default();
    desk.load_round(2, BYES, BTreeMap::new(), Some("600+5".to_owned()), 1_000)
        .unwrap();
    let ids: Arc<Vec<String>> =
        Arc::new(["b1", "b2", "b3"].iter().map(|s| (*s).to_owned()).collect());
    let mut boards = BTreeMap::new();
    for (number, result) in [(1, "0-1"), (2, "1/2-1/2"), (3, "1-0")] {
        let id = format!("b{number}");
        let state = board(number, Some(result));
        observe_json(&desk, &ids, &id, &state, 2_000);
        boards.insert(id, state);
    }
    desk.close_round(2, 3_000).unwrap();
    let corrections = Vec::new();
    {
        let (status, trf) = get(&desk, &boards, &corrections, "results.trf26");
        assert_eq!(status, StatusCode::OK, "{trf}");
        assert!(trf.contains("\n142 5\n222 600+5\n001    1"), "{trf}");
        assert!(trf.ends_with("XXR 5\n240 H 002    5\n"), "{trf}");
        assert!(trf.contains("### made by hand"), "{trf}");
        let (_, trf16) = get(&desk, &boards, &corrections, "results.trf");
        assert!(
            !trf16.contains("###") && !trf16.contains("\n240"),
            "{trf16}"
        );
        let (_, csv) = get(&desk, &boards, &corrections, "results.csv");
        assert_eq!(
            csv,
            format!(
                "{}2,1,\"Eta, Ed\",7,\"Alpha, Anna\",1,0-1,normal,arbiter,\n\
                 2,2,\"Delta, Dan\",4,\"Beta, Bert\",2,1/2-1/2,normal,arbiter,\n\
                 2,3,\"Zeta, Zed\",6,\"Gamma, Gina\",3,1-0,normal,arbiter,\n\
                 2,,\"Epsilon, Eve\",5,,,H,half-point bye,,\n\
                 2,,\"Theta, Tom\",8,,,U,pairing-allocated bye,,\n",
                exports::CSV_HEADER
            )
        );
    }

    // After the closing, board 2's own record says otherwise (an arbiter
    // on the board): the round is frozen, the desk keeps 1/2-1/2, and the
    // disagreement is flagged, chosen by no one.
    boards.insert("b2".to_owned(), board(2, Some("1-0")));
    observe_json(&desk, &ids, "b2", &boards["b2"], 4_000);
    let (result, disagreement) = {
        let setup = lock(&desk.setup);
        let rows = rows(&setup, &boards).unwrap();
        (rows[1].result.clone(), rows[1].disagreement.clone())
    };
    assert_eq!(result.as_deref(), Some("1/2-1/2"));
    assert_eq!(
        disagreement,
        Some(Disagreement {
            board: 2,
            id: Some("b2".to_owned()),
            desk: "1/2-1/2".to_owned(),
            board_record: "1-0".to_owned(),
            source: "state",
            corrected: false,
        })
    );
    let (status, json) = get(&desk, &boards, &corrections, "results.json");
    assert_eq!(status, StatusCode::OK);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["disagreements"][0]["board_record"], "1-0", "{json}");
    assert_eq!(json["byes"][0]["code"], "H", "{json}");
    for file in ["results.trf", "results.trf26", "results.res"] {
        let (status, text) = get(&desk, &boards, &corrections, file);
        assert_eq!(status, StatusCode::CONFLICT, "{file}: {text}");
        assert!(
            text.contains("board 2 (b2): the desk has 1/2-1/2, the board's state says 1-0"),
            "{text}"
        );
    }
    let bulletin = join(&bulletin_of(&lock(&desk.setup), &boards, &corrections));
    let game = bulletin.split("\n\n[").nth(1).unwrap();
    assert!(game.contains("[Result \"*\"]\n"), "{game}");
    assert!(
        game.ends_with("\n\n{the desk has 1/2-1/2, the board 1-0: not settled} 1. e4 e5 *"),
        "{game}"
    );
    assert!(!bulletin.contains("ClockStatus"), "{bulletin}");
    assert!(bulletin.contains("[White \"Delta, Dan\"]"), "{bulletin}");

    // The arbiter confirms the desk's result by a correction: settled,
    // still listed, and the exports flow.
    desk.correct(2, 2, "1/2-1/2", "normal", "Chief", 5_000)
        .unwrap();
    let corrections = lock(&desk.store).as_ref().unwrap().corrections(2).unwrap();
    let (status, trf) = get(&desk, &boards, &corrections, "results.trf");
    assert_eq!(status, StatusCode::OK, "{trf}");
    let line = trf.lines().find(|l| l.starts_with("001    2")).unwrap();
    assert_eq!(line.chars().nth(108), Some('='), "{line}");
    let (_, json) = get(&desk, &boards, &corrections, "results.json");
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["disagreements"][0]["corrected"], true, "{json}");
    let bulletin = join(&bulletin_of(&lock(&desk.setup), &boards, &corrections));
    assert!(bulletin.contains("1. e4 e5 1/2-1/2\n"), "{bulletin}");
}

#[test]
fn a_corrected_result_is_not_overwritten_by_the_board() {
    let desk = Desk::default();
    desk.load_round(2, BYES, BTreeMap::new(), None, 1_000)
        .unwrap();
    let ids = Arc::new(vec!["b1".to_owned()]);
    observe_json(&desk, &ids, "b1", &board(1, Some("1-0")), 2_000);
    desk.correct(2, 1, "0-1", "normal", "Chief", 3_000).unwrap();
    // The board publishes its result again (the round is open): the
    // correction stands; a `*` does not withdraw it either.
    observe_json(&desk, &ids, "b1", &board(1, Some("1-0")), 4_000);
    assert_eq!(lock(&desk.setup).kept[&1].result, "0-1");
    observe_json(&desk, &ids, "b1", &board(1, None), 5_000);
    let store = lock(&desk.store);
    assert_eq!(store.as_ref().unwrap().games(2).unwrap()[&1].result, "0-1");
}
