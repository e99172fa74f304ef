//! The crash-safe game store: SQLite (WAL, `synchronous=FULL`) under the
//! state directory, owned by one thread.
//!
//! Promises:
//! * every engine input of every game is one committed row before its effect
//!   is reported (the store thread commits, then replies, acks and
//!   broadcasts: see [`Job`]), numbered 1, 2, 3, ... within its game
//!   (`events.seq`), and every committed batch is counted in the commit
//!   record beside the database ([`commits`]) before it is reported;
//! * opening checks the state and never silently restores a shorter game,
//!   never writes into a file that is not ours, and keeps the evidence of
//!   any damage ([`open`], [`Store::open_state`]); what it found is the
//!   [`crate::control::StateHealth`] it returns.
//!
//! # Time scheme
//! CLOCK_MONOTONIC does not survive a reboot, so no monotonic instant is
//! stored. Each game has its own time base: engine instants are
//! microseconds since the game was created (`offset_us`); the runtime maps
//! them to the monotonic clock with a per-run `epoch` (monotonic µs at offset
//! 0). Every event row also carries the wall-clock time it happened
//! (`wall_us`, for the arbiter). While a game is loaded, the store thread
//! writes an "alive" checkpoint once a second (`alive_offset_us`,
//! `alive_wall_us`); every event row is as good a sign of life (its
//! `offset_us` / `wall_us`), so a press does not update the game's row and
//! loading a game takes the later of the two. After a restart the game is rebuilt by replaying its
//! rows at their offsets; its new epoch makes the engine continue at
//! `alive_offset_us` (the last instant the daemon is known to have run), and
//! the down time is the wall-clock gap since `alive_wall_us`, recorded as a
//! `restart` event.

pub mod commits;
#[cfg(test)]
mod damage_tests;
pub mod open;
pub mod read;
pub mod saver;
#[cfg(test)]
mod saver_tests;
#[cfg(test)]
mod tests;
mod thread;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};

use crate::engine::Micros;
pub use chessclock_core::journal::{DeviceOrigin, EventRow, Record, StoredEvent, StoredGame};
use chessclock_host::clock::{monotonic_now_us, wall_now_us};
pub use open::Opened;
pub use read::StoreReader;
pub use thread::{commit_batch, run_store_thread, BatchFailure, Commit, Job, StoreMsg};

/// The database file name inside the state directory.
pub const DB_FILE: &str = "chessclockd.sqlite3";

/// Store failures (with the database path).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database {path}: {source}")]
    Sql {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("state database {path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("state {path}: cannot keep it aside: {source}")]
    MoveAside {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("state {path} cannot be used: {reason}")]
    Unusable { path: PathBuf, reason: String },
    #[error(
        "state database {path} is read-only ({source}): chessclockd must be able to write it \
         (check its owner and permissions)"
    )]
    ReadOnly {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "{path} is not chessclockd's database ({reason}); it was not touched: move it away \
         or give chessclockd another state directory"
    )]
    Foreign { path: PathBuf, reason: String },
    #[error(
        "state database {path} was written by a newer chessclockd (schema version {version}, \
         this one knows {}); it was not touched",
        open::SCHEMA_VERSION
    )]
    TooNew { path: PathBuf, version: i32 },
}

#[derive(Clone, Copy, Debug)]
struct Active {
    id: i64,
    epoch: Micros,
    /// A clock runs: only then is the alive checkpoint written (no needless
    /// writes to an SD card while nothing happens).
    running: bool,
    /// The sequence number the game's next event gets.
    next_seq: i64,
}

/// The open database. Owned by the store thread.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    active: HashMap<String, Active>,
    /// The commit record (none in memory).
    commits: Option<commits::CommitFile>,
    /// Events committed, all games, and the last one `(game, seq)`.
    committed_events: u64,
    last_committed: Option<(i64, i64)>,
    /// Written in the open transaction, not committed yet.
    pending_events: u64,
    pending_last: Option<(i64, i64)>,
}

impl Store {
    fn with_connection(conn: Connection, path: PathBuf) -> Store {
        Store {
            conn,
            path,
            active: HashMap::new(),
            commits: None,
            committed_events: 0,
            last_committed: None,
            pending_events: 0,
            pending_last: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state directory (`None` for a store in memory).
    pub fn dir(&self) -> Option<PathBuf> {
        if self.path == Path::new(":memory:") {
            return None;
        }
        self.path.parent().map(Path::to_path_buf)
    }

    fn sql_error(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    fn invalid(&self, message: String) -> StoreError {
        StoreError::Invalid {
            path: self.path.clone(),
            message,
        }
    }

    /// Makes `id` the board's active game, on time base `epoch`; its next
    /// event follows the last one stored.
    pub fn activate(&mut self, board: &str, id: i64, epoch: Micros) {
        let next_seq = self.next_seq_of(id);
        self.active.insert(
            board.to_owned(),
            Active {
                id,
                epoch,
                running: false,
                next_seq,
            },
        );
    }

    fn next_seq_of(&self, game: i64) -> i64 {
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE game = ?1",
                [game],
                |r| r.get(0),
            )
            .unwrap_or(1)
    }

    /// Counts committed events (after a commit, or a write outside any
    /// transaction) and writes the commit record.
    fn committed(&mut self) {
        if self.pending_events == 0 {
            return;
        }
        self.committed_events += std::mem::take(&mut self.pending_events);
        self.last_committed = self.pending_last.take().or(self.last_committed);
        let (events, last) = (self.committed_events, self.last_committed);
        if let Some(record) = &mut self.commits {
            if let Err(error) = record.record(events, last) {
                tracing::error!(path = %record.path().display(), %error,
                    "cannot write the commit record: a later loss of these events could go unnoticed");
            }
        }
    }

    /// Whether `board`'s clock runs. When it stops, the last alive
    /// checkpoint is written at once.
    pub fn set_running(&mut self, board: &str, running: bool) -> Result<(), StoreError> {
        let Some(active) = self.active.get_mut(board) else {
            return Ok(());
        };
        let stopped = active.running && !running;
        active.running = running;
        let active = *active;
        if stopped {
            self.conn
                .execute(
                    "UPDATE games SET alive_offset_us = MAX(alive_offset_us, ?2),
                                      alive_wall_us = ?3 WHERE id = ?1",
                    params![active.id, monotonic_now_us() - active.epoch, wall_now_us()],
                )
                .map_err(|e| self.sql_error(e))?;
        }
        Ok(())
    }

    /// Writes one record for `board` (committed when this returns Ok).
    pub fn write(&mut self, board: &str, record: &Record) -> Result<(), StoreError> {
        match record {
            Record::NewGame {
                control,
                settings,
                epoch,
                caller_uid,
                wall_us,
                boot_id,
            } => {
                let settings = serde_json::to_string(settings)
                    .map_err(|e| self.invalid(format!("cannot encode settings: {e}")))?;
                self.conn
                    .execute(
                        "INSERT INTO games (board, control, settings, created_wall_us, caller_uid,
                                            alive_offset_us, alive_wall_us, boot_id, epoch_mono_us)
                         VALUES (?1, ?2, ?3, ?4, ?5, 0, ?4, ?6, ?7)",
                        params![board, control, settings, wall_us, caller_uid, boot_id, epoch],
                    )
                    .map_err(|e| self.sql_error(e))?;
                let id = self.conn.last_insert_rowid();
                self.activate(board, id, *epoch);
            }
            Record::Event(row) => {
                let Some(active) = self.active.get(board).copied() else {
                    return Err(self.invalid(format!("board {board} has no game to record into")));
                };
                let seq = active.next_seq;
                let event = serde_json::to_string(&row.event)
                    .map_err(|e| self.invalid(format!("cannot encode event: {e}")))?;
                let origin = row
                    .origin
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()
                    .map_err(|e| self.invalid(format!("cannot encode origin: {e}")))?;
                self.conn
                    .execute(
                        "INSERT INTO events (game, seq, offset_us, wall_us, event, caller_uid, origin,
                                             caller_name)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        params![
                            active.id,
                            seq,
                            row.offset_us,
                            row.wall_us,
                            event,
                            row.caller_uid,
                            origin,
                            row.caller_name
                        ],
                    )
                    .map_err(|e| self.sql_error(e))?;
                if let Some(active) = self.active.get_mut(board) {
                    active.next_seq = seq + 1;
                }
                self.pending_events += 1;
                self.pending_last = Some((active.id, seq));
                // The game's row is not touched: the event row itself says
                // the game was alive at its offset (loading a game takes
                // the later of the two, see `load_game`). One B-tree page
                // fewer per press in the write-ahead log.
            }
            Record::Epoch {
                game,
                epoch,
                boot_id,
            } => {
                self.conn
                    .execute(
                        "UPDATE games SET boot_id = ?2, epoch_mono_us = ?3 WHERE id = ?1",
                        params![game, boot_id, epoch],
                    )
                    .map_err(|e| self.sql_error(e))?;
                self.activate(board, *game, *epoch);
            }
        }
        if self.conn.is_autocommit() {
            // Outside a transaction each write committed on its own.
            self.committed();
        }
        Ok(())
    }

    /// Opens a transaction for a group of writes ([`Store::commit`] ends
    /// it). It takes the write lock at once, so the commit cannot fail for
    /// a lock.
    pub fn begin(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.sql_error(e))
    }

    /// Commits what was written since [`Store::begin`] (durable when this
    /// returns Ok: WAL with `synchronous=FULL`).
    pub fn commit(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| self.sql_error(e))?;
        self.committed();
        Ok(())
    }

    /// Abandons the open transaction, if any.
    pub fn rollback(&mut self) {
        if !self.conn.is_autocommit() {
            if let Err(error) = self.conn.execute_batch("ROLLBACK") {
                tracing::error!(%error, "rollback failed");
            }
        }
        // Nothing written since the last commit stands: renumber from the
        // database.
        self.pending_events = 0;
        self.pending_last = None;
        let games: Vec<(String, i64)> = self
            .active
            .iter()
            .map(|(board, active)| (board.clone(), active.id))
            .collect();
        for (board, game) in games {
            let next = self.next_seq_of(game);
            if let Some(active) = self.active.get_mut(&board) {
                active.next_seq = next;
            }
        }
    }

    /// (Tests.) Closing the connection leaves the write-ahead log as a
    /// killed daemon leaves it: no checkpoint, the WAL file kept.
    #[cfg(test)]
    pub(crate) fn leave_wal_on_close(&self) {
        let _ = self.conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        );
    }

    /// (Tests.) Makes the database full at `pages` pages (`PRAGMA
    /// max_page_count`): every write that needs another page fails with
    /// SQLITE_FULL, as on a full disk. A large number gives the space back.
    #[cfg(test)]
    pub(crate) fn limit_pages(&self, pages: u64) -> u64 {
        self.conn
            .query_row(&format!("PRAGMA max_page_count={pages}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .map_or(0, |n| n as u64)
    }

    /// (Tests.) `PRAGMA query_only`: every write fails with
    /// SQLITE_READONLY, as on a file system remounted read-only.
    #[cfg(test)]
    pub(crate) fn query_only(&self, on: bool) {
        let _ = self
            .conn
            .execute_batch(&format!("PRAGMA query_only={}", i32::from(on)));
    }

    /// (Tests.) Pages in the database now.
    #[cfg(test)]
    pub(crate) fn pages(&self) -> u64 {
        self.conn
            .query_row("PRAGMA page_count", [], |r| r.get::<_, i64>(0))
            .map_or(0, |n| n as u64)
    }

    /// Events committed so far (all games), as the commit record says.
    pub fn committed_events(&self) -> u64 {
        self.committed_events
    }

    /// Records that every running game was alive at monotonic `mono_now`.
    pub fn checkpoint(&mut self, mono_now: Micros, wall_now: i64) -> Result<(), StoreError> {
        let transaction = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.sql_error(e))?;
        for active in self.active.values().filter(|a| a.running) {
            transaction
                .execute(
                    "UPDATE games SET alive_offset_us = MAX(alive_offset_us, ?2),
                                      alive_wall_us = ?3 WHERE id = ?1",
                    params![active.id, mono_now - active.epoch, wall_now],
                )
                .map_err(|e| StoreError::Sql {
                    path: self.path.clone(),
                    source: e,
                })?;
        }
        transaction.commit().map_err(|e| self.sql_error(e))
    }
}
