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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use tokio::sync::{broadcast, mpsc as tokio_mpsc, oneshot};

use crate::clock::{monotonic_now_us, wall_now_us};
use crate::control::{BoardEvent, ControlError, Reply};
use crate::devices::{DeviceCommand, DeviceKey};
use crate::engine::{Micros, Settings};
pub use chessclock_core::journal::{DeviceOrigin, EventRow, StoredEvent, StoredGame};

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

/// What to write.
#[derive(Clone, Debug)]
pub enum Record {
    NewGame {
        control: String,
        settings: Settings,
        epoch: Micros,
        caller_uid: Option<u32>,
        wall_us: i64,
    },
    Event(EventRow),
    /// Game `game` is the board's active game, on time base `epoch` for
    /// this run (after a restart).
    Epoch {
        game: i64,
        epoch: Micros,
    },
}

/// A reply waiting for its commit.
pub type PendingReply = (
    oneshot::Sender<Result<Reply, ControlError>>,
    Result<Reply, ControlError>,
);

/// One unit of work for the store thread: write `record` (if any), then
/// report: reply, acknowledge the device event, broadcast the events. Jobs
/// are handled in order, so reports keep the order of the inputs.
#[derive(Debug, Default)]
pub struct Job {
    pub board: String,
    pub record: Option<Record>,
    pub reply: Option<PendingReply>,
    pub ack: Option<(DeviceKey, u16)>,
    pub events: Vec<BoardEvent>,
    /// A live PGN to write (directory, file name, text) after the commit.
    pub pgn: Option<(PathBuf, String, String)>,
}

/// Messages for the store thread.
#[derive(Debug)]
pub enum StoreMsg {
    Job(Box<Job>),
    /// Flush and stop (the sender side is done).
    Shutdown,
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

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    control TEXT NOT NULL,
    settings TEXT NOT NULL,
    created_wall_us INTEGER NOT NULL,
    caller_uid INTEGER,
    alive_offset_us INTEGER NOT NULL DEFAULT 0,
    alive_wall_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS games_board ON games(board, id);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    game INTEGER NOT NULL REFERENCES games(id),
    offset_us INTEGER NOT NULL,
    wall_us INTEGER NOT NULL,
    event TEXT NOT NULL,
    caller_uid INTEGER,
    origin TEXT
);
CREATE INDEX IF NOT EXISTS events_game ON events(game, id);
";

impl Store {
    /// Opens (or creates) the database in `dir` and loads each board's
    /// latest game. A database that cannot be opened or read is moved aside
    /// and replaced by a fresh one; the error is logged.
    pub fn open_or_recover(dir: &Path) -> Result<(Store, Vec<StoredGame>), StoreError> {
        let path = dir.join(DB_FILE);
        if let Err(error) = std::fs::create_dir_all(dir) {
            tracing::error!(dir = %dir.display(), %error, "cannot create the state directory");
        }
        match Store::open(&path) {
            Ok(opened) => return Ok(opened),
            Err(error) => {
                tracing::error!(%error, "the state database is unreadable or corrupt; moving it aside and starting with fresh state");
                match move_aside(&path) {
                    Ok(kept) => {
                        tracing::error!(kept = %kept.display(), "the old state database was kept for inspection")
                    }
                    Err(error) => {
                        tracing::error!(%error, "could not move the corrupt database aside")
                    }
                }
            }
        }
        match Store::open(&path) {
            Ok(opened) => Ok(opened),
            Err(error) => {
                tracing::error!(%error, "cannot create a fresh state database; running WITHOUT crash safety (in memory)");
                Store::in_memory()
            }
        }
    }

    fn in_memory() -> Result<(Store, Vec<StoredGame>), StoreError> {
        let path = PathBuf::from(":memory:");
        let sql = |source| StoreError::Sql {
            path: path.clone(),
            source,
        };
        let conn = Connection::open_in_memory().map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok((
            Store {
                conn,
                path: path.clone(),
                active: HashMap::new(),
            },
            Vec::new(),
        ))
    }

    /// Opens `path` strictly (no recovery).
    pub fn open(path: &Path) -> Result<(Store, Vec<StoredGame>), StoreError> {
        let sql = |source| StoreError::Sql {
            path: path.to_owned(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(Duration::from_secs(2)).map_err(sql)?;
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |row| row.get(0))
            .map_err(sql)?;
        if check != "ok" {
            return Err(StoreError::Invalid {
                path: path.to_owned(),
                message: format!("integrity check failed: {check}"),
            });
        }
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), mode, "SQLite refused WAL mode");
        }
        conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
            active: HashMap::new(),
        };
        let games = store.load_latest_games()?;
        Ok((store, games))
    }

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

    fn load_latest_games(&mut self) -> Result<Vec<StoredGame>, StoreError> {
        let ids: Vec<i64> = {
            let mut statement = self
                .conn
                .prepare("SELECT MAX(id) FROM games GROUP BY board ORDER BY board")
                .map_err(|e| self.sql_error(e))?;
            let rows = statement
                .query_map([], |row| row.get(0))
                .map_err(|e| self.sql_error(e))?;
            rows.collect::<Result<_, _>>()
                .map_err(|e| self.sql_error(e))?
        };
        ids.into_iter().map(|id| self.load_game(id)).collect()
    }

    /// Loads one game with all its events.
    pub fn load_game(&self, id: i64) -> Result<StoredGame, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT board, control, settings, created_wall_us, caller_uid,
                        alive_offset_us, alive_wall_us FROM games WHERE id = ?1",
                [id],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, i64>(3)?,
                        row.get::<_, Option<u32>>(4)?,
                        row.get::<_, i64>(5)?,
                        row.get::<_, i64>(6)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sql_error(e))?
            .ok_or_else(|| self.invalid(format!("game {id} does not exist")))?;
        let settings: Settings = serde_json::from_str(&row.2)
            .map_err(|e| self.invalid(format!("game {id}: bad settings {:?}: {e}", row.2)))?;
        let mut statement = self
            .conn
            .prepare(
                "SELECT offset_us, wall_us, event, caller_uid, origin FROM events
                 WHERE game = ?1 ORDER BY id",
            )
            .map_err(|e| self.sql_error(e))?;
        let raw = statement
            .query_map([id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<u32>>(3)?,
                    row.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(|e| self.sql_error(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql_error(e))?;
        let mut events = Vec::with_capacity(raw.len());
        for (offset_us, wall_us, event, caller_uid, origin) in raw {
            let event = serde_json::from_str(&event)
                .map_err(|e| self.invalid(format!("game {id}: bad event {event:?}: {e}")))?;
            let origin = match origin {
                None => None,
                Some(text) => Some(serde_json::from_str(&text).map_err(|e| {
                    self.invalid(format!("game {id}: bad event origin {text:?}: {e}"))
                })?),
            };
            events.push(EventRow {
                offset_us,
                wall_us,
                event,
                caller_uid,
                origin,
            });
        }
        Ok(StoredGame {
            id,
            board: row.0,
            control: row.1,
            settings,
            created_wall_us: row.3,
            caller_uid: row.4,
            alive_offset_us: row.5,
            alive_wall_us: row.6,
            events,
        })
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
            } => {
                let settings = serde_json::to_string(settings)
                    .map_err(|e| self.invalid(format!("cannot encode settings: {e}")))?;
                self.conn
                    .execute(
                        "INSERT INTO games (board, control, settings, created_wall_us, caller_uid,
                                            alive_offset_us, alive_wall_us)
                         VALUES (?1, ?2, ?3, ?4, ?5, 0, ?4)",
                        params![board, control, settings, wall_us, caller_uid],
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
                        "INSERT INTO events (game, offset_us, wall_us, event, caller_uid, origin)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![
                            active.id,
                            row.offset_us,
                            row.wall_us,
                            event,
                            row.caller_uid,
                            origin
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
            Record::Epoch { game, epoch } => self.activate(board, *game, *epoch),
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

/// Renames the database (and its WAL/SHM files) to `*.corrupt-<unix s>`;
/// returns the new name of the main file.
pub fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let stamp = wall_now_us() / 1_000_000;
    let mut kept = None;
    for suffix in ["", "-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", path.display()));
        if !from.exists() {
            continue;
        }
        let to = PathBuf::from(format!("{}{suffix}.corrupt-{stamp}", path.display()));
        std::fs::rename(&from, &to).map_err(|source| StoreError::MoveAside {
            path: from.clone(),
            source,
        })?;
        if suffix.is_empty() {
            kept = Some(to);
        }
    }
    kept.ok_or_else(|| StoreError::Invalid {
        path: path.to_owned(),
        message: "nothing to move aside".into(),
    })
}

/// Most jobs committed in one transaction.
const MAX_BATCH: usize = 256;

/// The store thread's loop: commit jobs, then report them. Jobs already
/// waiting when one arrives are committed with it in one transaction (group
/// commit: one fsync for all of them), then reported in order. Writes an
/// alive checkpoint every second. Returns when told to shut down or when
/// every sender is gone, after committing what was queued before.
pub fn run_store_thread(
    mut store: Store,
    jobs: mpsc::Receiver<StoreMsg>,
    device_out: tokio_mpsc::UnboundedSender<(DeviceKey, DeviceCommand)>,
    events: broadcast::Sender<BoardEvent>,
) {
    const CHECKPOINT: Duration = Duration::from_secs(1);
    let mut last_checkpoint = std::time::Instant::now();
    loop {
        let wait = CHECKPOINT.saturating_sub(last_checkpoint.elapsed());
        let mut stop = false;
        match jobs.recv_timeout(wait) {
            Ok(StoreMsg::Job(job)) => {
                let mut batch = vec![*job];
                while batch.len() < MAX_BATCH {
                    match jobs.try_recv() {
                        Ok(StoreMsg::Job(job)) => batch.push(*job),
                        Ok(StoreMsg::Shutdown) => {
                            stop = true;
                            break;
                        }
                        // Gone senders are seen by the next recv.
                        Err(_) => break,
                    }
                }
                handle_batch(&mut store, batch, &device_out, &events);
            }
            Ok(StoreMsg::Shutdown) | Err(mpsc::RecvTimeoutError::Disconnected) => stop = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if stop {
            if let Err(error) = store.checkpoint(monotonic_now_us(), wall_now_us()) {
                tracing::error!(%error, "final checkpoint failed");
            }
            tracing::debug!("store thread done");
            return;
        }
        if last_checkpoint.elapsed() >= CHECKPOINT {
            last_checkpoint = std::time::Instant::now();
            if let Err(error) = store.checkpoint(monotonic_now_us(), wall_now_us()) {
                tracing::error!(%error, "alive checkpoint failed");
            }
        }
    }
}

/// Commits `batch` in one transaction, then reports each job in order.
fn handle_batch(
    store: &mut Store,
    batch: Vec<Job>,
    device_out: &tokio_mpsc::UnboundedSender<(DeviceKey, DeviceCommand)>,
    events: &broadcast::Sender<BoardEvent>,
) {
    // Without a transaction (it could not begin) each write commits on
    // its own: slower, equally safe.
    let in_transaction = match store.begin() {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, "cannot begin a transaction; committing one by one");
            false
        }
    };
    let mut written: Vec<bool> = batch.iter().map(|job| write_job(store, job)).collect();
    if in_transaction {
        if let Err(error) = store.commit() {
            tracing::error!(%error, jobs = batch.len(), "could not commit the events");
            store.rollback();
            written.iter_mut().for_each(|w| *w = false);
        }
    }
    for (job, committed) in batch.into_iter().zip(written) {
        report_job(store, job, committed, device_out, events);
    }
}

/// Writes what `job` records; `false` when its event could not be written.
fn write_job(store: &mut Store, job: &Job) -> bool {
    let mut written = true;
    if let Some(record) = &job.record {
        if let Err(error) = store.write(&job.board, record) {
            written = false;
            tracing::error!(board = %job.board, %error, "could not commit an event");
        }
    }
    for event in &job.events {
        if let BoardEvent::StateChanged(snapshot) = event {
            if let Err(error) = store.set_running(&snapshot.board, snapshot.running.is_some()) {
                tracing::error!(board = %snapshot.board, %error, "alive checkpoint failed");
            }
        }
    }
    written
}

/// Replies, acknowledges and broadcasts `job` once its commit is known.
fn report_job(
    store: &Store,
    job: Job,
    committed: bool,
    device_out: &tokio_mpsc::UnboundedSender<(DeviceKey, DeviceCommand)>,
    events: &broadcast::Sender<BoardEvent>,
) {
    if let Some((reply, answer)) = job.reply {
        let answer = if committed {
            answer
        } else {
            Err(ControlError::Internal(format!(
                "the change was made but could not be saved to {}; check the disk and the logs",
                store.path().display()
            )))
        };
        let _ = reply.send(answer);
    }
    if let Some((key, event)) = job.ack {
        if committed {
            let _ = device_out.send((key, DeviceCommand::Ack { event }));
        }
    }
    for event in job.events {
        // No receivers is fine: nobody listens yet.
        let _ = events.send(event);
    }
    if let Some((dir, file, text)) = job.pgn {
        if let Err(error) = super::eboard::write_pgn(&dir, &file, &text) {
            tracing::warn!(board = %job.board, dir = %dir.display(), %error, "cannot write the live PGN");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Side;

    fn press(offset_us: Micros, side: Side) -> Record {
        Record::Event(EventRow {
            offset_us,
            wall_us: 1_700_000_000_000_000 + offset_us,
            event: StoredEvent::Press { side },
            caller_uid: Some(1000),
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
    fn corrupt_database_is_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        std::fs::write(
            &path,
            b"this is not a database, just garbage bytes ".repeat(100),
        )
        .unwrap();
        assert!(Store::open(&path).is_err());
        let (mut store, games) = Store::open_or_recover(dir.path()).unwrap();
        assert!(games.is_empty());
        let kept: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("chessclockd.sqlite3.corrupt-"))
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        let old = std::fs::read(dir.path().join(&kept[0])).unwrap();
        assert!(old.starts_with(b"this is not a database"));
        // The fresh database works.
        store
            .write(
                "b",
                &Record::NewGame {
                    control: "60".into(),
                    settings: Settings::default(),
                    epoch: 0,
                    caller_uid: None,
                    wall_us: 0,
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
    fn queued_jobs_are_committed_together_and_reported_in_order() {
        use crate::devices::DeviceRole;
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::open_or_recover(dir.path()).unwrap();
        let (jobs_tx, jobs_rx) = mpsc::channel();
        let (device_out, mut acks) = tokio_mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(16);
        let key = DeviceKey::new("b", DeviceRole::Buttons);
        let new_game = Record::NewGame {
            control: "300".into(),
            settings: Settings::default(),
            epoch: 0,
            caller_uid: None,
            wall_us: 0,
        };
        let mut replies = Vec::new();
        let mut job = |board: &str, record: Record, ack: u16| {
            let (reply, answer) = oneshot::channel();
            replies.push(answer);
            Job {
                board: board.into(),
                record: Some(record),
                reply: Some((reply, Ok(Reply::Done))),
                ack: Some((key.clone(), ack)),
                ..Job::default()
            }
        };
        // All queued before the thread starts: one batch. The third writes
        // into a board without a game and fails alone.
        let queued = vec![
            job("b", new_game, 1),
            job("b", press(1_000, Side::White), 2),
            job("nogame", press(1_500, Side::Black), 3),
            job("b", press(2_000, Side::Black), 4),
        ];
        for job in queued {
            jobs_tx.send(StoreMsg::Job(Box::new(job))).unwrap();
        }
        jobs_tx.send(StoreMsg::Shutdown).unwrap();
        run_store_thread(store, jobs_rx, device_out, events);

        let answers: Vec<bool> = replies
            .into_iter()
            .map(|mut answer| answer.try_recv().unwrap().is_ok())
            .collect();
        assert_eq!(answers, [true, true, false, true]);
        let mut acked = Vec::new();
        while let Ok((_, DeviceCommand::Ack { event })) = acks.try_recv() {
            acked.push(event);
        }
        assert_eq!(
            acked,
            [1, 2, 4],
            "only committed events are acknowledged, in order"
        );
        let (_, games) = Store::open_or_recover(dir.path()).unwrap();
        assert_eq!(games.len(), 1);
        let offsets: Vec<Micros> = games[0].events.iter().map(|e| e.offset_us).collect();
        assert_eq!(offsets, [1_000, 2_000]);
    }
}
