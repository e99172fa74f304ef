//! Every kind of damage to the state, made on disk the way it happens (a
//! killed daemon's write-ahead log cut, emptied or overwritten; rows
//! removed; another program's database at our path...), then opened: never
//! a silently shorter game, never a write into a file that is not ours, and
//! the evidence kept.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::commits::COMMITS_FILE;
use super::open::{APPLICATION_ID, SCHEMA_VERSION};
use super::*;
use crate::control::{FindingKind, StateHealth};
use crate::engine::Settings;
use crate::engine::Side;

const GAME: usize = 51;

fn new_game() -> Record {
    Record::NewGame {
        control: "300+2".into(),
        settings: Settings::default(),
        epoch: 0,
        caller_uid: Some(1000),
        wall_us: 1_700_000_000_000_000,
        boot_id: None,
    }
}

fn press(n: usize) -> Record {
    Record::Event(EventRow {
        offset_us: n as Micros * 1_000_000,
        wall_us: 1_700_000_000_000_000 + n as i64 * 1_000_000,
        event: if n == 0 {
            StoredEvent::Start
        } else {
            StoredEvent::Press {
                side: if n % 2 == 1 { Side::White } else { Side::Black },
            }
        },
        caller_uid: None,
        caller_name: None,
        origin: None,
    })
}

/// A state holding one game on board `b1` with [`GAME`] events, each
/// committed (and counted) on its own. `crash`: the daemon was killed, so the
/// write-ahead log still holds them; else they were checkpointed into the
/// database at a clean close.
fn state_with_a_game(dir: &Path, crash: bool) {
    let opened = Store::open_state(dir).unwrap();
    assert!(opened.health.is_ok(), "{:?}", opened.health);
    let mut store = opened.store;
    store.write("b1", &new_game()).unwrap();
    for n in 0..GAME {
        store.write("b1", &press(n)).unwrap();
    }
    assert_eq!(store.committed_events(), GAME as u64);
    if crash {
        store.leave_wal_on_close();
    }
    drop(store);
}

fn db(dir: &Path) -> PathBuf {
    dir.join(DB_FILE)
}

fn wal(dir: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", db(dir).display()))
}

fn kinds(health: &StateHealth) -> Vec<FindingKind> {
    health.findings.iter().map(|f| f.kind).collect()
}

fn evidence(health: &StateHealth) -> PathBuf {
    PathBuf::from(
        health
            .evidence
            .clone()
            .unwrap_or_else(|| panic!("no evidence kept: {health:?}")),
    )
}

fn restored_events(opened: &Opened) -> usize {
    opened
        .games
        .iter()
        .find(|g| g.board == "b1")
        .map_or(0, |g| g.events.len())
}

#[test]
fn a_healthy_state_after_a_crash_has_no_findings_and_no_evidence() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    assert!(wal(dir.path()).exists(), "the WAL holds the game");
    let opened = Store::open_state(dir.path()).unwrap();
    assert!(opened.health.is_ok(), "{:?}", opened.health);
    assert_eq!(restored_events(&opened), GAME);
    let damaged = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("damaged-")
        })
        .count();
    assert_eq!(damaged, 0);
}

#[test]
fn a_wal_cut_in_half_is_found_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    let whole = std::fs::read(wal(dir.path())).unwrap();
    std::fs::write(wal(dir.path()), &whole[..whole.len() / 2]).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    let restored = restored_events(&opened);
    assert!(restored < GAME, "{restored}");
    assert!(
        kinds(&opened.health).contains(&FindingKind::EventsMissing),
        "{:?}",
        opened.health
    );
    let message = &opened.health.findings[0].message;
    assert!(
        message.contains(&format!(
            "{} of the {GAME} committed events are missing",
            GAME - restored
        )),
        "{message}"
    );
    // The game that lost its end is named.
    assert!(
        opened
            .health
            .findings
            .iter()
            .any(|f| f.board.as_deref() == Some("b1")
                && f.message.contains(&format!("number {GAME}")))
    );
    // The WAL as the damage left it, before SQLite reset it.
    let kept = evidence(&opened.health);
    assert_eq!(
        std::fs::read(kept.join(format!("{DB_FILE}-wal"))).unwrap(),
        &whole[..whole.len() / 2]
    );
    assert!(kept.join(COMMITS_FILE).exists());
    // Found once: the next open starts from what is there.
    drop(opened);
    let again = Store::open_state(dir.path()).unwrap();
    assert!(again.health.is_ok(), "{:?}", again.health);
}

#[test]
fn a_wal_cut_to_zero_bytes_is_found() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    std::fs::write(wal(dir.path()), b"").unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), 0);
    let found = kinds(&opened.health);
    assert!(
        found.contains(&FindingKind::DatabaseEmptied)
            || found.contains(&FindingKind::EventsMissing),
        "{:?}",
        opened.health
    );
    assert!(opened.health.is_damaged());
    assert!(evidence(&opened.health)
        .join(format!("{DB_FILE}-wal"))
        .exists());
}

#[test]
fn a_wal_filled_with_garbage_is_found_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    let len = std::fs::metadata(wal(dir.path())).unwrap().len() as usize;
    let garbage: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(wal(dir.path()), &garbage).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), 0);
    let found = kinds(&opened.health);
    assert!(found.contains(&FindingKind::WalUnreadable), "{found:?}");
    assert!(found.len() >= 2, "and the loss itself: {found:?}");
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(format!("{DB_FILE}-wal"))).unwrap(),
        garbage
    );
}

#[test]
fn a_database_cut_to_zero_bytes_is_found() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    assert!(!wal(dir.path()).exists(), "checkpointed at the clean close");
    std::fs::write(db(dir.path()), b"").unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), 0);
    assert_eq!(kinds(&opened.health), [FindingKind::DatabaseEmptied]);
    assert!(opened.health.findings[0]
        .message
        .contains(&format!("{GAME} events")));
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(DB_FILE)).unwrap(),
        b""
    );
}

#[test]
fn a_database_cut_in_half_is_corrupt_and_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    let whole = std::fs::read(db(dir.path())).unwrap();
    let half = &whole[..whole.len() / 2];
    std::fs::write(db(dir.path()), half).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), 0);
    let found = kinds(&opened.health);
    assert!(
        found.contains(&FindingKind::Corrupt) || found.contains(&FindingKind::EventsMissing),
        "{found:?}"
    );
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(DB_FILE)).unwrap(),
        half
    );
}

#[test]
fn rows_deleted_in_the_middle_are_found() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute("DELETE FROM events WHERE seq BETWEEN 20 AND 24", [])
            .unwrap();
    }
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), GAME - 5);
    let found = kinds(&opened.health);
    assert!(found.contains(&FindingKind::SequenceBroken), "{found:?}");
    assert!(found.contains(&FindingKind::EventsMissing), "{found:?}");
    let broken = opened
        .health
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::SequenceBroken)
        .unwrap();
    assert_eq!(broken.board.as_deref(), Some("b1"));
    assert!(
        broken
            .message
            .contains("5 of the numbers 1 to 51 are missing"),
        "{}",
        broken.message
    );
}

#[test]
fn rows_deleted_at_the_end_are_found() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute("DELETE FROM events WHERE seq > 40", [])
            .unwrap();
    }
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), 40);
    assert_eq!(
        kinds(&opened.health),
        [FindingKind::EventsMissing, FindingKind::EventsMissing]
    );
    assert!(opened.health.findings[1]
        .message
        .contains("ends at number 40"));
}

#[test]
fn a_database_of_another_schema_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('la');")
            .unwrap();
    }
    let before = std::fs::read(db(dir.path())).unwrap();
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(matches!(error, StoreError::Foreign { .. }), "{error}");
    assert!(error.to_string().contains("songs"), "{error}");
    assert_eq!(
        std::fs::read(db(dir.path())).unwrap(),
        before,
        "not written"
    );
    assert!(!wal(dir.path()).exists());
    let conn = Connection::open(db(dir.path())).unwrap();
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1, "no tables of ours were added");
}

#[test]
fn a_database_of_another_application_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        // Even with tables named like ours.
        conn.execute_batch(
            "PRAGMA application_id = 1234; CREATE TABLE games (x); CREATE TABLE events (y);",
        )
        .unwrap();
    }
    let before = std::fs::read(db(dir.path())).unwrap();
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(matches!(error, StoreError::Foreign { .. }), "{error}");
    assert!(error.to_string().contains("0x000004d2"), "{error}");
    assert_eq!(std::fs::read(db(dir.path())).unwrap(), before);
}

#[test]
fn a_database_of_a_newer_daemon_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {};", SCHEMA_VERSION + 1))
            .unwrap();
    }
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(matches!(error, StoreError::TooNew { .. }), "{error}");
}

#[test]
fn pages_overwritten_in_the_middle_fail_the_integrity_check() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    let mut bytes = std::fs::read(db(dir.path())).unwrap();
    // The page size from the header (bytes 16..18, big-endian): page 2 is
    // the games table's root whatever the size.
    let page = usize::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    assert!(
        bytes.len() >= 3 * page,
        "{} bytes, {page} a page",
        bytes.len()
    );
    for b in &mut bytes[page + 100..2 * page - 100] {
        *b = 0x5A;
    }
    std::fs::write(db(dir.path()), &bytes).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&opened.health), [FindingKind::Corrupt]);
    assert_eq!(restored_events(&opened), 0);
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(DB_FILE)).unwrap(),
        bytes
    );
}

/// Event `seq`'s stored text replaced by `text`: that event is left out,
/// reported by its number, and the files are kept.
fn an_event_stored_as(text: &str, seq: u32) {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute(
            "UPDATE events SET event = ?1 WHERE seq = ?2",
            rusqlite::params![text, seq],
        )
        .unwrap();
    }
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), GAME - 1);
    assert_eq!(kinds(&opened.health), [FindingKind::EventUnreadable]);
    assert!(opened.health.findings[0]
        .message
        .contains(&format!("event {seq}")));
    assert!(opened.health.evidence.is_some());
}

#[test]
fn an_unreadable_event_row_is_left_out_and_reported() {
    an_event_stored_as("{\"do\": \"dance\"}", 7);
}

#[test]
fn a_missing_or_foreign_commit_record_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    let record = std::fs::read(dir.path().join(COMMITS_FILE)).unwrap();
    std::fs::remove_file(dir.path().join(COMMITS_FILE)).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&opened.health), [FindingKind::CommitRecordUnusable]);
    assert_eq!(restored_events(&opened), GAME);
    drop(opened);
    // Another state's record.
    let other = tempfile::tempdir().unwrap();
    state_with_a_game(other.path(), false);
    std::fs::copy(
        other.path().join(COMMITS_FILE),
        dir.path().join(COMMITS_FILE),
    )
    .unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&opened.health), [FindingKind::CommitRecordUnusable]);
    assert!(opened.health.findings[0]
        .message
        .contains("another database"));
    drop(opened);
    std::fs::write(dir.path().join(COMMITS_FILE), &record[..10]).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&opened.health), [FindingKind::CommitRecordUnusable]);
}

/// A database of the schema before versions (what chessclockd wrote before
/// its state had a version) loads and is migrated: events numbered in the
/// order written, the new columns there, our application id set.
#[test]
fn an_old_database_is_migrated_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE games (id INTEGER PRIMARY KEY, board TEXT NOT NULL, control TEXT NOT NULL,
                 settings TEXT NOT NULL, created_wall_us INTEGER NOT NULL, caller_uid INTEGER,
                 alive_offset_us INTEGER NOT NULL DEFAULT 0, alive_wall_us INTEGER NOT NULL);
             CREATE INDEX games_board ON games(board, id);
             CREATE TABLE events (id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id),
                 offset_us INTEGER NOT NULL, wall_us INTEGER NOT NULL, event TEXT NOT NULL,
                 caller_uid INTEGER, origin TEXT);
             CREATE INDEX events_game ON events(game, id);",
        )
        .unwrap();
        let settings = serde_json::to_string(&Settings::default()).unwrap();
        conn.execute(
            "INSERT INTO games (board, control, settings, created_wall_us, alive_wall_us)
             VALUES ('b1', '300+2', ?1, 5, 5), ('b2', '60', ?1, 6, 6)",
            [&settings],
        )
        .unwrap();
        for (game, n) in [(1, 0), (2, 0), (1, 1), (1, 2), (2, 1)] {
            let Record::Event(row) = press(n) else {
                unreachable!()
            };
            conn.execute(
                "INSERT INTO events (game, offset_us, wall_us, event) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![
                    game,
                    row.offset_us,
                    row.wall_us,
                    serde_json::to_string(&row.event).unwrap()
                ],
            )
            .unwrap();
        }
    }
    let opened = Store::open_state(dir.path()).unwrap();
    assert!(opened.health.is_ok(), "{:?}", opened.health);
    assert_eq!(opened.games.len(), 2);
    assert_eq!(restored_events(&opened), 3);
    let mut store = opened.store;
    store.activate("b1", 1, 0);
    store.write("b1", &press(3)).unwrap();
    drop(store);
    let conn = Connection::open(db(dir.path())).unwrap();
    let (app, version): (i32, i32) = conn
        .query_row(
            "SELECT * FROM pragma_application_id, pragma_user_version",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((app, version), (APPLICATION_ID, SCHEMA_VERSION));
    let seqs: Vec<(i64, i64)> = conn
        .prepare("SELECT game, seq FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(seqs, [(1, 1), (2, 1), (1, 2), (1, 3), (2, 2), (1, 4)]);
    let reserved: (Option<String>, Option<i64>) = conn
        .query_row(
            "SELECT boot_id, epoch_mono_us FROM games WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(reserved, (None, None));
    drop(conn);
    let again = Store::open_state(dir.path()).unwrap();
    assert!(again.health.is_ok(), "{:?}", again.health);
}

#[test]
fn a_missing_state_directory_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("a/b/state");
    let opened = Store::open_state(&state).unwrap();
    assert!(opened.health.is_ok());
    assert!(state.join(DB_FILE).exists());
    assert!(state.join(COMMITS_FILE).exists());
}

#[test]
fn a_state_directory_that_is_a_file_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::write(&state, b"a file").unwrap();
    let error = Store::open_state(&state).err().expect("refused");
    assert!(matches!(error, StoreError::Unusable { .. }), "{error}");
}

#[test]
fn the_in_memory_store_says_it_has_no_crash_safety() {
    let opened = Store::in_memory("test").unwrap();
    assert!(!opened.health.is_ok());
    assert!(!opened.health.is_damaged());
    assert_eq!(kinds(&opened.health), [FindingKind::NoCrashSafety]);
    assert_eq!(opened.health.display_notice(), Some("NOT SAVED"));
}

#[test]
fn events_are_numbered_per_game_and_the_record_counts_commits_not_rollbacks() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_state(dir.path()).unwrap().store;
    store.write("b1", &new_game()).unwrap();
    store.write("b2", &new_game()).unwrap();
    store.begin().unwrap();
    store.write("b1", &press(0)).unwrap();
    store.write("b2", &press(0)).unwrap();
    store.write("b1", &press(1)).unwrap();
    store.commit().unwrap();
    assert_eq!(store.committed_events(), 3);
    store.begin().unwrap();
    store.write("b1", &press(2)).unwrap();
    store.rollback();
    assert_eq!(store.committed_events(), 3);
    store.write("b1", &press(3)).unwrap();
    assert_eq!(store.committed_events(), 4);
    drop(store);
    let conn = Connection::open(db(dir.path())).unwrap();
    let seqs: Vec<(i64, i64)> = conn
        .prepare("SELECT game, seq FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(seqs, [(1, 1), (2, 1), (1, 2), (1, 3)]);
    drop(conn);
    let super::commits::ReadCommits::Valid(record) =
        super::commits::read(&dir.path().join(COMMITS_FILE))
    else {
        panic!("no record")
    };
    assert_eq!((record.events, record.last), (4, Some((1, 3))));
}

fn damaged_dirs(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("damaged-")
        })
        .count()
}

/// A gap stays in the database: found (and shown) at every start while its
/// game is the board's latest, kept once; a new game on the board ends it.
#[test]
fn lasting_damage_is_shown_at_every_start_but_kept_once() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute("DELETE FROM events WHERE seq = 10", [])
            .unwrap();
    }
    let first = Store::open_state(dir.path()).unwrap();
    assert!(kinds(&first.health).contains(&FindingKind::SequenceBroken));
    let kept = evidence(&first.health);
    drop(first);
    let second = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&second.health), [FindingKind::SequenceBroken]);
    assert_eq!(evidence(&second.health), kept, "the same evidence");
    assert_eq!(damaged_dirs(dir.path()), 1);
    // A new game on the board: the damaged one is history now.
    let mut store = second.store;
    store.write("b1", &new_game()).unwrap();
    drop(store);
    let third = Store::open_state(dir.path()).unwrap();
    assert!(third.health.is_ok(), "{:?}", third.health);
}

/// A write-ahead log whose database is gone is moved aside, never replayed
/// into a new file.
#[test]
fn a_deleted_database_with_its_wal_left_is_found_and_the_wal_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    let log = std::fs::read(wal(dir.path())).unwrap();
    std::fs::remove_file(db(dir.path())).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&opened.health), [FindingKind::DatabaseEmptied]);
    assert_eq!(restored_events(&opened), 0);
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(format!("{DB_FILE}-wal"))).unwrap(),
        log
    );
    drop(opened);
    let again = Store::open_state(dir.path()).unwrap();
    assert!(again.health.is_ok(), "{:?}", again.health);
}

// Issue 14: the kinds of damage tried from outside that the tests above do
// not make. Each: found, reported, evidence kept, nothing of ours written
// into a file that is not ours.

/// Every file under `dir` (recursively, symlinks not followed) with its
/// contents: a directory that must stay as it was.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path);
            } else if meta.is_file() {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            } else {
                out.push((path.clone(), Vec::new()));
            }
        }
    }
    out.sort();
    out
}

/// The database put back from an older copy of itself (a backup restored
/// over it): the commit record, outside the database, is ahead of it.
#[test]
fn an_older_copy_of_the_database_behind_its_commit_record_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_state(dir.path()).unwrap().store;
    store.write("b1", &new_game()).unwrap();
    for n in 0..20 {
        store.write("b1", &press(n)).unwrap();
    }
    drop(store);
    let older = std::fs::read(db(dir.path())).unwrap();
    // Later, a game on another board: 31 more events committed.
    let mut store = Store::open_state(dir.path()).unwrap().store;
    store.write("b2", &new_game()).unwrap();
    for n in 0..GAME - 20 {
        store.write("b2", &press(n)).unwrap();
    }
    assert_eq!(store.committed_events(), GAME as u64);
    drop(store);
    std::fs::write(db(dir.path()), &older).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), 20);
    assert!(
        kinds(&opened.health).contains(&FindingKind::EventsMissing),
        "{:?}",
        opened.health
    );
    assert!(opened.health.findings[0]
        .message
        .contains(&format!("{} of the {GAME} committed events", GAME - 20)));
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(DB_FILE)).unwrap(),
        older
    );
}

/// A directory where the database belongs: unusable, and left as it was.
#[test]
fn a_database_path_that_is_a_directory_is_unusable_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(db(dir.path())).unwrap();
    std::fs::write(db(dir.path()).join("photo.jpg"), b"not ours").unwrap();
    let before = snapshot(dir.path());
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(matches!(error, StoreError::Unusable { .. }), "{error}");
    assert!(error.to_string().contains("a directory"), "{error}");
    assert!(
        error.to_string().contains(DB_FILE),
        "names the path: {error}"
    );
    assert_eq!(snapshot(dir.path()), before, "nothing written or moved");
}

/// The database path is a symlink to another program's SQLite file: the
/// target is not written, no journal appears beside it.
#[test]
fn a_database_symlink_to_a_foreign_file_is_not_followed_into_it() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("music.db");
    {
        let conn = Connection::open(&target).unwrap();
        conn.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('la');")
            .unwrap();
    }
    std::os::unix::fs::symlink(&target, db(dir.path())).unwrap();
    let before = snapshot(elsewhere.path());
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(matches!(error, StoreError::Unusable { .. }), "{error}");
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert_eq!(snapshot(elsewhere.path()), before, "the target untouched");
    assert!(std::fs::symlink_metadata(db(dir.path()))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A symlink to a file that does not exist: nothing is created outside the
/// state directory.
#[test]
fn a_dangling_database_symlink_creates_nothing_outside_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("new.db"), db(dir.path())).unwrap();
    let result = Store::open_state(dir.path());
    let outside: Vec<PathBuf> = snapshot(elsewhere.path())
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the state directory: {outside:?}"
    );
    let error = result.err().expect("refused");
    assert!(matches!(error, StoreError::Unusable { .. }), "{error}");
}

/// A shared-memory index (`-shm`) of garbage after a crash: it is only an
/// index SQLite rebuilds, so the whole game comes back, nothing reported.
#[test]
fn a_shm_file_of_garbage_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    let shm = PathBuf::from(format!("{}-shm", db(dir.path()).display()));
    std::fs::write(&shm, vec![0xA5u8; 32 * 1024]).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(restored_events(&opened), GAME);
    assert!(opened.health.is_ok(), "{:?}", opened.health);
}

/// An event renumbered into the future (a gap before it): the sequence is
/// broken, reported, the evidence kept.
#[test]
fn an_event_with_a_future_number_breaks_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute("UPDATE events SET seq = 1000 WHERE seq = 30", [])
            .unwrap();
    }
    let opened = Store::open_state(dir.path()).unwrap();
    assert!(
        kinds(&opened.health).contains(&FindingKind::SequenceBroken),
        "{:?}",
        opened.health
    );
    assert!(opened.health.evidence.is_some());
    // Every row is still there: the whole game, marked.
    assert_eq!(restored_events(&opened), GAME);
}

/// An event whose text is not JSON at all.
#[test]
fn an_event_that_is_not_json_is_left_out_and_reported() {
    an_event_stored_as("{\"do\": \"pre", 12);
}

/// The game row deleted while its events remain: the committed events are
/// not silently dropped.
#[test]
fn events_whose_game_row_is_missing_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    {
        let conn = Connection::open(db(dir.path())).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF; DELETE FROM games;")
            .unwrap();
    }
    let opened = Store::open_state(dir.path()).unwrap();
    assert_eq!(kinds(&opened.health), [FindingKind::EventsMissing]);
    assert!(
        opened.health.findings[0]
            .message
            .contains(&format!("game 1: its {GAME} events")),
        "{:?}",
        opened.health
    );
    assert!(opened.health.is_damaged());
    assert_eq!(restored_events(&opened), 0);
    let kept = evidence(&opened.health);
    let conn = Connection::open(kept.join(DB_FILE)).unwrap();
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, GAME as i64, "the evidence holds the events");
}

/// A text file where the database belongs: not a database, moved aside
/// whole, a fresh one started.
#[test]
fn a_text_file_at_the_database_path_is_not_a_database_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    let text = b"these are not the pages you are looking for\n".repeat(200);
    std::fs::write(db(dir.path()), &text).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert!(
        kinds(&opened.health).contains(&FindingKind::NotADatabase),
        "{:?}",
        opened.health
    );
    assert_eq!(restored_events(&opened), 0);
    assert_eq!(
        std::fs::read(evidence(&opened.health).join(DB_FILE)).unwrap(),
        text
    );
}

/// Another state's write-ahead log beside our database (files mixed up
/// after a crash): never a silently different game.
#[test]
fn a_wal_of_another_state_is_not_silently_replayed() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), true);
    let other = tempfile::tempdir().unwrap();
    {
        let mut store = Store::open_state(other.path()).unwrap().store;
        store.write("b1", &new_game()).unwrap();
        for n in 0..5 {
            store.write("b1", &press(n)).unwrap();
        }
        store.leave_wal_on_close();
    }
    std::fs::copy(wal(other.path()), wal(dir.path())).unwrap();
    let opened = Store::open_state(dir.path()).unwrap();
    assert!(opened.health.is_damaged(), "{:?}", opened.health);
    assert!(opened.health.evidence.is_some());
}

/// A directory where the commit record belongs, or a symlink where the
/// write-ahead log belongs: unusable, nothing touched.
#[test]
fn a_directory_or_symlink_at_the_record_or_the_wal_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    state_with_a_game(dir.path(), false);
    std::fs::remove_file(dir.path().join(COMMITS_FILE)).unwrap();
    std::fs::create_dir(dir.path().join(COMMITS_FILE)).unwrap();
    let before = snapshot(dir.path());
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(error.to_string().contains(COMMITS_FILE), "{error}");
    assert_eq!(snapshot(dir.path()), before);
    std::fs::remove_dir(dir.path().join(COMMITS_FILE)).unwrap();

    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("log"), wal(dir.path())).unwrap();
    let error = Store::open_state(dir.path()).err().expect("refused");
    assert!(matches!(error, StoreError::Unusable { .. }), "{error}");
    assert!(error.to_string().contains("-wal"), "{error}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}
