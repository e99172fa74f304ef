//! The crash-safe game store: SQLite (WAL, `synchronous=FULL`) under the
//! state directory, owned by one thread.
//!
//! Promises:
//! * every engine input of every game is one committed row before its effect
//!   is reported (the store thread commits, then replies, acks and
//!   broadcasts: see [`Job`]);
//! * a corrupt or unreadable database is moved aside as
//!   `chessclockd.sqlite3.corrupt-<unix seconds>` with a clear error and a
//!   fresh one is created; when even that fails the daemon runs on an
//!   in-memory database (and says so) rather than stopping the clocks.
//!
//! # Time scheme
//! CLOCK_MONOTONIC does not survive a reboot, so no monotonic instant is
//! stored. Each game has its own time base: engine instants are
//! microseconds since the game was created (`offset_us`); the runtime maps
//! them to the monotonic clock with a per-run `epoch` (monotonic µs at offset
//! 0). Every event row also carries the wall-clock time it happened
//! (`wall_us`, for the arbiter). While a game is loaded, the store thread
//! writes an "alive" checkpoint once a second (`alive_offset_us`,
//! `alive_wall_us`). After a restart the game is rebuilt by replaying its
//! rows at their offsets; its new epoch makes the engine continue at
//! `alive_offset_us` (the last instant the daemon is known to have run), and
//! the down time is the wall-clock gap since `alive_wall_us`, recorded as a
//! `restart` event.

mod open;
#[cfg(test)]
mod tests;
mod thread;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};

use crate::clock::{monotonic_now_us, wall_now_us};
use crate::engine::Micros;
pub use chessclock_core::journal::{DeviceOrigin, EventRow, Record, StoredEvent, StoredGame};
pub use open::move_aside;
pub use thread::{commit_batch, run_store_thread, Commit, Job, StoreMsg};

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
    #[error("state database {path}: cannot move it aside: {source}")]
    MoveAside {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Clone, Copy, Debug)]
struct Active {
    id: i64,
    epoch: Micros,
    /// A clock runs: only then is the alive checkpoint written (no needless
    /// writes to an SD card while nothing happens).
    running: bool,
}

/// The open database. Owned by the store thread.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    active: HashMap<String, Active>,
}

impl Store {
    pub fn path(&self) -> &Path {
        &self.path
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

    /// Makes `id` the board's active game, on time base `epoch`.
    pub fn activate(&mut self, board: &str, id: i64, epoch: Micros) {
        self.active.insert(
            board.to_owned(),
            Active {
                id,
                epoch,
                running: false,
            },
        );
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
                        "INSERT INTO events (game, offset_us, wall_us, event, caller_uid, origin,
                                             caller_name)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        params![
                            active.id,
                            row.offset_us,
                            row.wall_us,
                            event,
                            row.caller_uid,
                            origin,
                            row.caller_name
                        ],
                    )
                    .map_err(|e| self.sql_error(e))?;
                self.conn
                    .execute(
                        "UPDATE games SET alive_offset_us = MAX(alive_offset_us, ?2),
                                          alive_wall_us = ?3 WHERE id = ?1",
                        params![active.id, row.offset_us, row.wall_us],
                    )
                    .map_err(|e| self.sql_error(e))?;
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
            .map_err(|e| self.sql_error(e))
    }

    /// Abandons the open transaction, if any.
    pub fn rollback(&mut self) {
        if !self.conn.is_autocommit() {
            if let Err(error) = self.conn.execute_batch("ROLLBACK") {
                tracing::error!(%error, "rollback failed");
            }
        }
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
