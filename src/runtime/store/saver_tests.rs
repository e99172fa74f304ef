//! The saver through a full disk and a read-only database: nothing lost,
//! nothing out of order, the trouble shown at the first failure and
//! cleared once all is saved. A full disk is the database's page limit
//! (`PRAGMA max_page_count`: SQLITE_FULL, exactly what a full file system
//! gives SQLite); a read-only one is `PRAGMA query_only`.

use super::saver::{Saver, RESERVE_FILE};
use super::*;
use crate::control::{SaveFailure, SharedHealth};
use crate::engine::{Settings, Side};

fn press(offset_us: Micros, side: Side) -> Record {
    Record::Event(EventRow {
        offset_us,
        wall_us: 1_700_000_000_000_000 + offset_us,
        event: StoredEvent::Press { side },
        caller_uid: None,
        caller_name: None,
        origin: None,
    })
}

fn job(seq: u64, record: Record) -> Job {
    Job {
        board: 0,
        id: "b1".into(),
        seq,
        record,
    }
}

fn new_game() -> Record {
    Record::NewGame {
        control: "300".into(),
        settings: Settings::default(),
        epoch: 0,
        caller_uid: None,
        wall_us: 0,
        boot_id: None,
    }
}

fn saver(dir: &std::path::Path, health: &SharedHealth) -> Saver {
    let (store, _) = Store::open_or_recover(dir).unwrap();
    let mut saver = Saver::new(
        store,
        Some(dir.to_owned()),
        health.clone(),
        Box::new(|| 1_700_000_000_000),
    );
    saver.retry_at_every_tick();
    saver
}

fn side(n: u64) -> Side {
    if n % 2 == 0 {
        Side::White
    } else {
        Side::Black
    }
}

/// Issue 28 item 1: with the disk full mid-game every record is kept (its
/// board hears "committed", so presses are acknowledged and the units never
/// refuse one), the trouble shows at the first failed commit, and once
/// there is space again everything is saved in order and the warning
/// clears.
#[test]
fn a_full_disk_loses_nothing_says_so_at_once_and_saves_all_in_order_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let health = SharedHealth::default();
    let mut saver = saver(dir.path(), &health);
    assert!(saver.reserve_bytes() > 0, "a reserve is taken at the start");
    assert!(dir.path().join(RESERVE_FILE).exists());
    let first = saver.save(vec![job(0, new_game()), job(1, press(1_000, Side::White))]);
    assert_eq!(
        first,
        [Commit {
            board: 0,
            seq: 1,
            ok: true
        }]
    );
    assert!(health.get().saving.is_none());

    // The disk is full now (the reserve, given back, does not help: the
    // limit is the database's own).
    let pages = saver.store.pages();
    saver.store.limit_pages(pages);
    let mut seq = 2;
    let mut reported = Vec::new();
    for _ in 0..200 {
        reported.extend(saver.save(vec![job(seq, press(seq as i64 * 1_000, side(seq)))]));
        seq += 1;
    }
    // Every record was reported kept, in order.
    assert_eq!(reported.len(), 200);
    assert!(reported.iter().all(|c| c.ok));
    assert_eq!(reported.last().map(|c| c.seq), Some(seq - 1));
    let trouble = health.get().saving.clone().expect("the trouble is shown");
    assert_eq!(trouble.reason, SaveFailure::NoSpace);
    assert!(!trouble.saving);
    // The last page's free room took the first few; the rest wait.
    let waiting = trouble.waiting_records;
    assert!(waiting > 100 && waiting < 200, "{waiting}");
    assert!(
        trouble.message.starts_with("not saving: no space"),
        "{}",
        trouble.message
    );
    assert!(saver.stalled());
    assert!(
        !dir.path().join(RESERVE_FILE).exists(),
        "the reserve was given back at the first failure"
    );
    // Still full: a tick saves nothing and loses nothing.
    saver.tick();
    assert_eq!(
        health.get().saving.as_ref().map(|t| t.waiting_records),
        Some(waiting)
    );

    // Space again.
    saver.store.limit_pages(1 << 30);
    saver.tick();
    assert!(!saver.stalled());
    assert!(health.get().saving.is_none(), "the warning clears");
    assert!(saver.reserve_bytes() > 0, "the reserve is back");
    assert!(dir.path().join(RESERVE_FILE).exists());
    drop(saver);
    let (_, games) = Store::open_or_recover(dir.path()).unwrap();
    let offsets: Vec<Micros> = games[0].events.iter().map(|e| e.offset_us).collect();
    let want: Vec<Micros> = (1..seq as i64).map(|n| n * 1_000).collect();
    assert_eq!(offsets, want, "every record, in order, none twice");
}

/// A database that became read-only (a file system remounted read-only
/// after errors) keeps the game going the same way, and says why.
#[test]
fn a_read_only_state_keeps_every_record_in_order_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let health = SharedHealth::default();
    let mut saver = saver(dir.path(), &health);
    saver.save(vec![job(0, new_game())]);
    saver.store.query_only(true);
    let kept = saver.save(vec![
        job(1, press(1_000, Side::White)),
        job(2, press(2_000, Side::Black)),
    ]);
    assert_eq!(
        kept,
        [Commit {
            board: 0,
            seq: 2,
            ok: true
        }]
    );
    let trouble = health.get().saving.clone().expect("the trouble is shown");
    assert_eq!(trouble.reason, SaveFailure::ReadOnly);
    assert!(
        trouble.message.starts_with("not saving: read-only"),
        "{}",
        trouble.message
    );
    saver.store.query_only(false);
    saver.save(vec![job(3, press(3_000, Side::White))]);
    saver.tick();
    assert!(health.get().saving.is_none());
    drop(saver);
    let (_, games) = Store::open_or_recover(dir.path()).unwrap();
    let offsets: Vec<Micros> = games[0].events.iter().map(|e| e.offset_us).collect();
    assert_eq!(offsets, [1_000, 2_000, 3_000]);
}
