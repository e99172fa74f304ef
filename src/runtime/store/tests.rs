//! The store's own tests: round trips, recovery, checkpoints, group commit.

use super::*;
use crate::control::FindingKind;
use crate::engine::{Settings, Side};
use std::sync::mpsc;
use tokio::sync::mpsc as tokio_mpsc;

fn press(offset_us: Micros, side: Side) -> Record {
    Record::Event(EventRow {
        offset_us,
        wall_us: 1_700_000_000_000_000 + offset_us,
        event: StoredEvent::Press { side },
        caller_uid: Some(1000),
        caller_name: Some("alice".into()),
        origin: Some(DeviceOrigin {
            serial: "CC0001".into(),
            boot_id: 3,
            event: 7,
            late_us: 50_000,
        }),
    })
}

#[test]
fn games_round_trip_with_every_event() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, games) = Store::open_or_recover(dir.path()).unwrap();
    assert!(games.is_empty());
    let new_game = Record::NewGame {
        control: "300+2".into(),
        settings: Settings::default(),
        epoch: 5_000,
        caller_uid: None,
        wall_us: 1_700_000_000_000_000,
        boot_id: None,
    };
    store.write("b1", &new_game).unwrap();
    store
        .write(
            "b1",
            &Record::Event(EventRow {
                offset_us: 10,
                wall_us: 1,
                event: StoredEvent::Start,
                caller_uid: Some(0),
                caller_name: None,
                origin: None,
            }),
        )
        .unwrap();
    store.write("b1", &press(1_234_567, Side::White)).unwrap();
    store.write("b2", &new_game).unwrap();
    drop(store);

    let (_store, games) = Store::open_or_recover(dir.path()).unwrap();
    assert_eq!(games.len(), 2);
    let b1 = &games[0];
    assert_eq!(b1.board, "b1");
    assert_eq!(b1.control, "300+2");
    assert_eq!(b1.events.len(), 2);
    assert_eq!(b1.events[1].offset_us, 1_234_567);
    assert_eq!(b1.events[1].event, StoredEvent::Press { side: Side::White });
    assert_eq!(b1.events[1].origin.as_ref().unwrap().event, 7);
    assert_eq!(b1.alive_offset_us, 1_234_567);
    assert!(games[1].events.is_empty());
}

#[test]
fn the_latest_game_of_a_board_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = Store::open_or_recover(dir.path()).unwrap();
    for control in ["60", "120"] {
        store
            .write(
                "b1",
                &Record::NewGame {
                    control: control.into(),
                    settings: Settings::default(),
                    epoch: 0,
                    caller_uid: Some(1),
                    wall_us: 0,
                    boot_id: None,
                },
            )
            .unwrap();
    }
    drop(store);
    let (_, games) = Store::open_or_recover(dir.path()).unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].control, "120");
}

#[test]
fn a_database_that_is_not_sqlite_is_moved_aside_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let garbage = b"this is not a database, just garbage bytes ".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert!(opened.games.is_empty());
    let kinds: Vec<FindingKind> = opened.health.findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FindingKind::NotADatabase]);
    let evidence = PathBuf::from(opened.health.evidence.clone().unwrap());
    assert_eq!(std::fs::read(evidence.join(DB_FILE)).unwrap(), garbage);
    assert!(std::fs::read_to_string(evidence.join("findings.txt"))
        .unwrap()
        .contains("not a SQLite database"));
    // The fresh database works.
    let mut store = opened.store;
    store
        .write(
            "b",
            &Record::NewGame {
                control: "60".into(),
                settings: Settings::default(),
                epoch: 0,
                caller_uid: None,
                wall_us: 0,
                boot_id: None,
            },
        )
        .unwrap();
}

#[test]
fn checkpoint_moves_alive_offset_forward_only() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = Store::open_or_recover(dir.path()).unwrap();
    store
        .write(
            "b",
            &Record::NewGame {
                control: "60".into(),
                settings: Settings::default(),
                epoch: 1_000,
                caller_uid: None,
                wall_us: 0,
                boot_id: None,
            },
        )
        .unwrap();
    // Nothing runs: no checkpoint is written.
    store.checkpoint(2_000, 41).unwrap();
    store.set_running("b", true).unwrap();
    store.checkpoint(6_000, 42).unwrap();
    store.checkpoint(3_000, 43).unwrap();
    drop(store);
    let (_, games) = Store::open_or_recover(dir.path()).unwrap();
    assert_eq!(games[0].alive_offset_us, 5_000);
    assert_eq!(games[0].alive_wall_us, 43);
}

#[test]
fn queued_records_are_committed_together_and_each_board_told_its_last() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open_or_recover(dir.path()).unwrap();
    let (jobs_tx, jobs_rx) = mpsc::channel();
    let (commits_tx, mut commits) = tokio_mpsc::unbounded_channel();
    let new_game = Record::NewGame {
        control: "300".into(),
        settings: Settings::default(),
        epoch: 0,
        caller_uid: None,
        wall_us: 0,
        boot_id: Some("boot-1".into()),
    };
    let job = |board: usize, id: &str, seq: u64, record: Record| {
        StoreMsg::Job(Box::new(Job {
            board,
            id: id.into(),
            seq,
            record,
        }))
    };
    // All queued before the thread starts: one batch. Board 1 writes into
    // a board without a game and fails alone.
    jobs_tx.send(job(0, "b", 0, new_game)).unwrap();
    jobs_tx
        .send(job(0, "b", 1, press(1_000, Side::White)))
        .unwrap();
    jobs_tx
        .send(job(1, "nogame", 0, press(1_500, Side::Black)))
        .unwrap();
    jobs_tx
        .send(job(0, "b", 2, press(2_000, Side::Black)))
        .unwrap();
    jobs_tx.send(StoreMsg::Shutdown).unwrap();
    run_store_thread(
        store,
        jobs_rx,
        commits_tx,
        crate::runtime::time::TimeSource::System,
        crate::control::SharedHealth::default(),
    );
    let mut reports = Vec::new();
    while let Ok(commit) = commits.try_recv() {
        reports.push(commit);
    }
    assert_eq!(
        reports,
        [
            Commit {
                board: 0,
                seq: 2,
                ok: true
            },
            Commit {
                board: 1,
                seq: 0,
                ok: false
            },
        ]
    );
    let (_, games) = Store::open_or_recover(dir.path()).unwrap();
    assert_eq!(games.len(), 1);
    let offsets: Vec<Micros> = games[0].events.iter().map(|e| e.offset_us).collect();
    assert_eq!(offsets, [1_000, 2_000]);
    assert_eq!(games[0].boot_id.as_deref(), Some("boot-1"));
    assert_eq!(games[0].epoch_mono_us, Some(0));
    assert_eq!(games[0].events[0].caller_name.as_deref(), Some("alice"));
}

#[test]
fn a_press_leaves_the_game_row_and_loading_takes_the_later_sign_of_life() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = Store::open_or_recover(dir.path()).unwrap();
    for board in ["early", "late"] {
        store
            .write(
                board,
                &Record::NewGame {
                    control: "60".into(),
                    settings: Settings::default(),
                    epoch: 1_000,
                    caller_uid: None,
                    wall_us: 0,
                    boot_id: None,
                },
            )
            .unwrap();
        store.set_running(board, true).unwrap();
    }
    // Both games alive at offset 5_000 (wall 42) by the checkpoint.
    store.checkpoint(6_000, 42).unwrap();
    // "late": a press after the checkpoint; "early": one committed after it
    // but made before it.
    store.write("late", &press(9_000, Side::White)).unwrap();
    store.write("early", &press(4_000, Side::White)).unwrap();
    let rows: Vec<(String, i64, i64)> = store
        .conn
        .prepare("SELECT board, alive_offset_us, alive_wall_us FROM games ORDER BY board")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // The presses did not write the games' rows.
    assert_eq!(
        rows,
        [("early".into(), 5_000, 42), ("late".into(), 5_000, 42)]
    );
    drop(store);
    let (_, games) = Store::open_or_recover(dir.path()).unwrap();
    let alive = |board: &str| {
        let game = games.iter().find(|g| g.board == board).unwrap();
        (game.alive_offset_us, game.alive_wall_us)
    };
    assert_eq!(alive("late"), (9_000, 1_700_000_000_000_000 + 9_000));
    assert_eq!(alive("early"), (5_000, 42));
}

#[test]
fn a_new_database_has_small_pages_and_one_events_index() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open_or_recover(dir.path()).unwrap();
    let page: i64 = store
        .conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(page, i64::from(open::PAGE_SIZE));
    let indexes = |conn: &Connection| -> Vec<String> {
        conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'
             AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    assert_eq!(indexes(&store.conn), ["events_game_seq"]);
    // A database of the first version 1 daemons has the redundant index:
    // it goes at the next open, and nothing else changes.
    store
        .conn
        .execute_batch("CREATE INDEX events_game ON events(game, id)")
        .unwrap();
    assert_eq!(indexes(&store.conn).len(), 2);
    drop(store);
    let (store, _) = Store::open_or_recover(dir.path()).unwrap();
    assert_eq!(indexes(&store.conn), ["events_game_seq"]);
}
