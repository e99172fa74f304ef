#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

fn round(number: u32, status: RoundStatus) -> RoundRecord {
    RoundRecord {
        number,
        pairings: "board,white,black\n1,A,B\n".to_owned(),
        map: BTreeMap::from([(1, "b1".to_owned())]),
        control: Some("5400+30".to_owned()),
        start_at_ms: None,
        status,
        loaded_ms: 1_000,
        sent_ms: None,
        closed_ms: None,
    }
}

fn result(result: &str, by: &str) -> GameRecord {
    GameRecord {
        board_id: Some("b1".to_owned()),
        result: result.to_owned(),
        termination: "normal".to_owned(),
        entered_by: by.to_owned(),
        recorded_ms: 2_000,
        pgn: Some(format!("[Result \"{result}\"]\n\n{result}\n")),
        summary: None,
    }
}

#[test]
fn a_new_store_has_this_schema_and_keeps_the_event_across_opens() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = Store::open(dir.path()).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        store
            .put_round(&round(1, RoundStatus::Loaded), &[])
            .unwrap();
        store.set_current(1).unwrap();
        assert_eq!(
            store.record(1, 1, &result("1-0", "Ann")).unwrap(),
            Recorded::New
        );
        assert_eq!(
            store.record(1, 1, &result("1-0", "flag")).unwrap(),
            Recorded::Same
        );
    }
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.current().unwrap(), Some(1));
    assert_eq!(store.rounds().unwrap(), vec![round(1, RoundStatus::Loaded)]);
    let games = store.games(1).unwrap();
    assert_eq!(games[&1].result, "1-0");
    assert_eq!(games[&1].entered_by, "Ann");
}

#[test]
fn one_hub_per_state_directory() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Store::open(dir.path()).unwrap();
    let error = Store::open(dir.path()).err().unwrap();
    assert!(matches!(error, StoreError::Held { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains(&format!("PID {}", std::process::id())),
        "{error}"
    );
}

/// A file of schema version 0 (an empty database, as an older hub that
/// never wrote its tables left it) is brought to this version.
#[test]
fn an_older_schema_is_migrated_forward() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Connection::open(dir.path().join(DB_FILE)).unwrap();
        db.execute_batch("CREATE TABLE scratch (x INTEGER); PRAGMA user_version = 0;")
            .unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(store.rounds().unwrap().is_empty());
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Connection::open(dir.path().join(DB_FILE)).unwrap();
        db.execute_batch("PRAGMA user_version = 9;").unwrap();
    }
    let error = Store::open(dir.path()).err().unwrap();
    assert!(
        matches!(error, StoreError::Newer { version: 9, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("newer than this"), "{error}");
    let db = Connection::open(dir.path().join(DB_FILE)).unwrap();
    let version: i64 = db
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 9);
}

#[test]
fn a_damaged_file_gives_a_clear_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    std::fs::write(
        &path,
        b"this is not a database, it is a shopping list\n".repeat(200),
    )
    .unwrap();
    let error = Store::open(dir.path()).err().unwrap();
    let text = error.to_string();
    assert!(matches!(error, StoreError::Damaged { .. }), "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("move it aside"), "{text}");
    // Left as it was.
    assert!(std::fs::read(&path).unwrap().starts_with(b"this is not"));
}

#[test]
fn a_closed_round_s_results_change_only_by_a_recorded_correction() {
    let mut store = Store::in_memory().unwrap();
    store
        .put_round(&round(2, RoundStatus::Loaded), &[])
        .unwrap();
    store.record(2, 1, &result("1-0", "e-board")).unwrap();
    store.set_status(2, RoundStatus::Closed, 5_000).unwrap();
    assert_eq!(
        store.record(2, 1, &result("0-1", "Ann")).unwrap(),
        Recorded::Frozen
    );
    assert!(!store.withdraw(2, 1).unwrap());
    assert_eq!(store.games(2).unwrap()[&1].result, "1-0");
    store
        .correct(2, 1, "1/2-1/2", "normal", "Chief Arbiter", 6_000)
        .unwrap();
    let game = &store.games(2).unwrap()[&1];
    assert_eq!(
        (game.result.as_str(), game.entered_by.as_str()),
        ("1/2-1/2", "Chief Arbiter")
    );
    assert!(game.pgn.is_some(), "the PGN is kept");
    let corrections = store.corrections(2).unwrap();
    assert_eq!(corrections.len(), 1);
    assert_eq!(corrections[0].before.as_deref(), Some("1-0"));
    assert_eq!(store.round(2).unwrap().unwrap().closed_ms, Some(5_000));
}

#[test]
fn loading_a_round_again_keeps_its_status_and_results() {
    let mut store = Store::in_memory().unwrap();
    store
        .put_round(&round(3, RoundStatus::Loaded), &[])
        .unwrap();
    store.set_status(3, RoundStatus::Sent, 7_000).unwrap();
    store.record(3, 1, &result("0-1", "flag")).unwrap();
    let mut again = round(3, RoundStatus::Loaded);
    again.pairings = "board,white,black\n1,A,B\n2,C,D\n".to_owned();
    store.put_round(&again, &[]).unwrap();
    let kept = store.round(3).unwrap().unwrap();
    assert_eq!(kept.status, RoundStatus::Sent);
    assert_eq!(kept.pairings, again.pairings);
    assert_eq!(store.games(3).unwrap()[&1].result, "0-1");
}
