//! Tests of the desk: the review's plan for pairings sent again, results
//! recorded from the boards' states, kept once a board moves on, frozen
//! by closing, and TRF26's extra records read past.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

const CSV: &str =
    "board,white,black,white_id,black_id\n1,Ann,Bob,1,2\n2,Cid,Dee,3,4\n3,Eve,Fay,5,6\n";

/// A board's state: its game's `Round` tag and players, started or not,
/// its result.
fn board(round: Option<&str>, white: &str, started: bool, result: Option<&str>) -> Value {
    let mut pgn = String::new();
    if let Some(round) = round {
        pgn.push_str(&format!("[Round \"{round}\"]\n"));
    }
    pgn.push_str(&format!("[White \"{white}\"]\n[Black \"?\"]\n\n*\n"));
    json!({
        "snapshot": {"started": started, "paused": false, "running": "white",
                     "control": "600+5", "white_remaining_ms": 1_000,
                     "black_remaining_ms": 2_000, "flags": []},
        "snapshot_wall_ms": 5,
        "state": {"result": result.map(|r| json!({"result": r, "termination": "normal"}))},
        "pgn": pgn,
    })
}

#[test]
fn pairings_sent_again_never_touch_a_started_or_finished_game_of_the_round() {
    let pairings = Pairings::parse(CSV, 2).unwrap();
    let mut states = BTreeMap::new();
    // Board 1: its game of round 2 is over; board 2: it runs; board 3:
    // the last round's finished game.
    states.insert(
        "b1".to_owned(),
        board(Some("2.1"), "Ann", true, Some("1-0")),
    );
    states.insert("b2".to_owned(), board(Some("2.2"), "Cid", true, None));
    states.insert(
        "b3".to_owned(),
        board(Some("1.3"), "Xan", true, Some("0-1")),
    );
    let plans = plan_pairings(&states, &pairings, &BTreeMap::new(), None);
    assert!(plans[0].kept && plans[0].commands.is_empty(), "{plans:?}");
    assert_eq!(
        plans[0].text(),
        "its game of round 2.1 is over (1-0): left as it is; WARNING: the game on it is Ann - ?, \
         the pairing Ann - Bob: correct it by hand"
    );
    assert!(plans[1].kept && plans[1].commands.is_empty(), "{plans:?}");
    assert!(plans[1].notes[0].contains("has started"), "{plans:?}");
    // The last round's game makes way, with the control it was played at.
    assert!(!plans[2].kept);
    assert_eq!(
        plans[2].commands[0],
        json!({"command": "new-game", "control": "600+5"})
    );
    assert_eq!(plans[2].commands[1]["command"], "set-tags");

    // A board already named for the round, not started: nothing to do.
    let mut named = board(Some("2.3"), "Eve", false, None);
    named["pgn"] = json!("[Round \"2.3\"]\n[White \"Eve\"]\n[Black \"Fay\"]\n\n*\n");
    states.insert("b3".to_owned(), named);
    let plans = plan_pairings(&states, &pairings, &BTreeMap::new(), Some("600+5"));
    assert!(plans[2].commands.is_empty(), "{plans:?}");
    assert!(plans[2].notes[0].starts_with("unchanged"), "{plans:?}");
}

#[test]
fn results_are_recorded_kept_when_the_board_moves_on_and_frozen_by_closing() {
    let desk = Desk::default();
    desk.load_round(2, CSV, BTreeMap::new(), None, 1_000)
        .unwrap();
    let ids: Arc<Vec<String>> =
        Arc::new(["b1", "b2", "b3"].iter().map(|s| (*s).to_owned()).collect());
    // The last round's game on b2 is not this round's.
    observe_json(
        &desk,
        &ids,
        "b2",
        &board(Some("1.2"), "Old", true, Some("1-0")),
        2_000,
    );
    observe_json(
        &desk,
        &ids,
        "b1",
        &board(Some("2.1"), "Ann", true, Some("0-1")),
        3_000,
    );
    {
        let setup = lock(&desk.setup);
        assert_eq!(setup.kept.keys().copied().collect::<Vec<_>>(), vec![1]);
        let kept = &setup.kept[&1];
        assert_eq!(
            (kept.result.as_str(), kept.entered_by.as_str()),
            ("0-1", "arbiter")
        );
        assert!(kept.pgn.as_deref().unwrap().contains("[Round \"2.1\"]"));
    }
    // b1 moves on to a new game: the record stays, and so do the exports.
    observe_json(
        &desk,
        &ids,
        "b1",
        &board(Some("2.1"), "Ann", false, None),
        4_000,
    );
    let boards: BTreeMap<String, Value> = ids
        .iter()
        .map(|id| (id.clone(), board(None, "?", false, None)))
        .collect();
    {
        let setup = lock(&desk.setup);
        let rows = rows(&setup, &boards).unwrap();
        assert_eq!(rows[0].result.as_deref(), Some("0-1"));
        let pgn = join(&round_games_of(&setup, &boards, None));
        assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
    }
    // An arbiter's withdrawal on the started game removes it.
    desk.note_arbiter("b3", "Ann Arbiter");
    observe_json(
        &desk,
        &ids,
        "b3",
        &board(Some("2.3"), "Eve", true, Some("1/2-1/2")),
        5_000,
    );
    observe_json(
        &desk,
        &ids,
        "b3",
        &board(Some("2.3"), "Eve", true, None),
        6_000,
    );
    assert!(!lock(&desk.setup).kept.contains_key(&3));
    observe_json(
        &desk,
        &ids,
        "b3",
        &board(Some("2.3"), "Eve", true, Some("1-0")),
        7_000,
    );
    assert_eq!(lock(&desk.setup).kept[&3].entered_by, "arbiter");
    // Closed: frozen; a correction is recorded.
    desk.close_round(2, 8_000).unwrap();
    observe_json(
        &desk,
        &ids,
        "b3",
        &board(Some("2.3"), "Eve", true, Some("0-1")),
        9_000,
    );
    assert_eq!(lock(&desk.setup).kept[&3].result, "1-0");
    desk.correct(2, 3, "0-1", "normal", "Chief", 10_000)
        .unwrap();
    assert_eq!(lock(&desk.setup).kept[&3].result, "0-1");
    let event = desk.event_json();
    assert_eq!(event["rounds"][0]["status"], "closed", "{event}");
    assert_eq!(
        event["rounds"][0]["corrections"][0]["before"], "1-0",
        "{event}"
    );
    // A closed round's pairings cannot change; the same file again (a
    // restart with the same --pairings) leaves it closed, as it was.
    let other = "board,white,black\n1,Ann,Bob\n";
    assert!(matches!(
        desk.load_round(2, other, BTreeMap::new(), None, 11_000),
        Err(LoadError::Closed(2))
    ));
    desk.load_round(2, CSV, BTreeMap::new(), None, 12_000)
        .unwrap();
    assert!(lock(&desk.setup).closed);
    assert_eq!(lock(&desk.setup).kept[&3].result, "0-1");
}

#[test]
fn new_pairings_cannot_give_a_recorded_result_to_other_players() {
    let desk = Desk::default();
    desk.load_round(3, CSV, BTreeMap::new(), None, 1_000)
        .unwrap();
    let ids = Arc::new(vec!["b1".to_owned()]);
    observe_json(
        &desk,
        &ids,
        "b1",
        &board(Some("3.1"), "Ann", true, Some("1-0")),
        2_000,
    );
    let swapped = "board,white,black\n1,Cid,Dee\n2,Ann,Bob\n";
    assert!(matches!(
        desk.load_round(3, swapped, BTreeMap::new(), None, 3_000),
        Err(LoadError::Conflict(boards)) if boards == vec![1]
    ));
    // The same file again is fine, and keeps the result.
    desk.load_round(3, CSV, BTreeMap::new(), None, 4_000)
        .unwrap();
    assert_eq!(lock(&desk.setup).kept[&1].result, "1-0");
}

/// TRF26 (FIDE C.02.03 annex A) adds record types (142 rounds, 192
/// pairing system, 222 time control, 240 byes...): read past.
#[test]
fn trf26_records_are_read_past() {
    let trf = include_str!("../../../../tests/data/hall/round2.trf");
    let mut trf26 = String::from(
        "142 9\n192 FIDE Dutch system\n222 5400/40+1800+30\n240 F 2 7\n999 an unknown record\n",
    );
    trf26.push_str(trf);
    let pairings = Pairings::parse(&trf26, 2).unwrap();
    assert_eq!(pairings.games, Pairings::parse(trf, 2).unwrap().games);
    assert_eq!(pairings.games.len(), 3);
}
