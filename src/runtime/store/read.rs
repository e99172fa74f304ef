//! Reading past games: the control loop's own read-only connection to the
//! state database, so that `chessclockctl games` and `history --game` never
//! reach the store thread (which writes) or the timing thread.
//!
//! Promises: the connection is opened read-only (SQLite refuses any write
//! through it); it sees only committed rows (WAL readers never see an
//! open transaction); every call blocks on SQLite, so the control loop runs
//! it on the blocking pool (`spawn_blocking`), never on its own task.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{Store, StoreError, StoredGame};

/// A read-only view of the state database.
pub struct StoreReader {
    store: Store,
}

impl StoreReader {
    /// Opens `path` (the database the store thread writes) read-only.
    pub fn open(path: &Path) -> Result<StoreReader, StoreError> {
        let sql = |source| StoreError::Sql {
            path: path.to_owned(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        conn.busy_timeout(Duration::from_secs(2)).map_err(sql)?;
        conn.execute_batch(&format!("PRAGMA cache_size=-{};", super::open::CACHE_KIB))
            .map_err(sql)?;
        Ok(StoreReader {
            store: Store::with_connection(conn, PathBuf::from(path)),
        })
    }

    /// The numbers of `board`'s games, oldest first.
    pub fn games(&self, board: &str) -> Result<Vec<i64>, StoreError> {
        let mut statement = self
            .store
            .conn
            .prepare("SELECT id FROM games WHERE board = ?1 ORDER BY id")
            .map_err(|e| self.store.sql_error(e))?;
        let ids = statement
            .query_map([board], |row| row.get(0))
            .map_err(|e| self.store.sql_error(e))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(|e| self.store.sql_error(e))?;
        Ok(ids)
    }

    /// Game `id` with every committed row. (Rows that cannot be read are
    /// left out: the daemon reported them when it checked the state at
    /// start-up.)
    pub fn game(&self, id: i64) -> Result<StoredGame, StoreError> {
        self.store.load_game(id).map(|(game, _unreadable)| game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chessclock_core::journal::{EventRow, Record, StoredEvent};

    #[test]
    fn a_reader_sees_committed_games_and_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open_or_recover(dir.path()).unwrap();
        for _ in 0..2 {
            store
                .write(
                    "b1",
                    &Record::NewGame {
                        control: "300".into(),
                        settings: Default::default(),
                        epoch: 0,
                        caller_uid: None,
                        wall_us: 1,
                        boot_id: None,
                    },
                )
                .unwrap();
        }
        store
            .write(
                "b1",
                &Record::Event(EventRow {
                    offset_us: 5,
                    wall_us: 6,
                    event: StoredEvent::Start,
                    ..EventRow::default()
                }),
            )
            .unwrap();
        let reader = StoreReader::open(store.path()).unwrap();
        assert_eq!(reader.games("b1").unwrap(), [1, 2]);
        assert!(reader.games("b2").unwrap().is_empty());
        let game = reader.game(2).unwrap();
        assert_eq!(game.events.len(), 1);
        assert_eq!(game.events[0].event, StoredEvent::Start);
        assert!(reader.game(7).is_err());
        assert!(reader.store.conn.execute("DELETE FROM games", []).is_err());
    }
}
