//! The simulated event, short: 3 rounds on 4 boards through the pure board
//! core into the real store (`chessclock-bench event` runs 20 × 32). Memory
//! stays flat (no timing is asserted), and every game's presses, flag and
//! result are in the state database, in the order they were played.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclock_bench::event::{self, EventOptions, FLAT_MARGIN_KB};
use chessclock_core::eboard::GameResult;
use chessclock_core::journal::StoredEvent;
use chessclockd::runtime::store::{StoreReader, DB_FILE};

#[test]
fn a_short_event_keeps_memory_flat_and_every_game_in_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let options = EventOptions {
        rounds: 3,
        boards: 4,
        seed: 18,
        state_dir: Some(dir.path().to_path_buf()),
    };
    let report = event::run(&options, &mut |line| eprintln!("event: {line}")).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&report.rounds).unwrap());
    assert_eq!(report.rounds.len(), 3);
    assert_eq!(report.games.len(), 12);
    // Flat: the third round ends within the margin of the second, and the
    // database grew with each round's rows.
    assert!(report.memory_flat, "{:?}", report.rounds);
    assert!(
        report.rounds[2].rss_kb <= report.rounds[1].rss_kb + FLAT_MARGIN_KB,
        "{:?}",
        report.rounds
    );
    assert!(report
        .rounds
        .iter()
        .all(|r| r.records > 0 && r.db_bytes > 0));
    assert!(report.final_db_bytes > 0);
    // Simulated time: three rounds of classical games are hours, not
    // seconds.
    assert!(report.simulated_hours > 3.0, "{}", report.simulated_hours);

    let reader = StoreReader::open(&dir.path().join(DB_FILE)).unwrap();
    for board in ["b1", "b2", "b3", "b4"] {
        let ids = reader.games(board).unwrap();
        let played: Vec<_> = report.games.iter().filter(|g| g.board == board).collect();
        assert_eq!(ids.len(), played.len(), "{board}: one stored game a round");
        for (id, game) in ids.iter().zip(&played) {
            let stored = reader.game(*id).unwrap();
            if std::env::var("EVENT_DEBUG").is_ok() {
                for r in &stored.events {
                    eprintln!("{:?}", r.event);
                }
            }
            assert_eq!(stored.control, event::CONTROL);
            let presses = stored
                .events
                .iter()
                .filter(|r| matches!(r.event, StoredEvent::Press { .. }) && r.origin.is_some())
                .count();
            assert_eq!(
                presses, game.presses as usize,
                "{board} round {}",
                game.round
            );
            assert!(game.presses >= 20, "{game:?}");
            assert!(
                stored
                    .events
                    .iter()
                    .any(|r| matches!(r.event, StoredEvent::Start)),
                "{board} round {}: no start",
                game.round
            );
            let result = stored.events.iter().rev().find_map(|r| match &r.event {
                StoredEvent::GameResult { result, .. } => Some(*result),
                _ => None,
            });
            let result: Option<GameResult> = result.expect("a result row");
            assert_eq!(result.map(|r| r.pgn()), Some(game.result.as_str()));
            let flagged = stored
                .events
                .iter()
                .any(|r| matches!(r.event, StoredEvent::Flag { .. }));
            assert_eq!(flagged, game.flag, "{board} round {}", game.round);
            // Instants never go back within a game's presses.
            let offsets: Vec<_> = stored
                .events
                .iter()
                .filter(|r| matches!(r.event, StoredEvent::Press { .. }))
                .map(|r| r.offset_us)
                .collect();
            assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{board}");
        }
    }
}
