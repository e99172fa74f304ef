//! The event's store: one SQLite file, `event.sqlite`, in the hub's state
//! directory, locked for the hub's life (`chessclock-hall.lock`, an
//! exclusive `flock`: [`chessclock_host::dirlock`], as the daemon locks its
//! own directory).
//!
//! It keeps the event: the players, the rounds (each round's pairings file
//! as loaded, its board map, its control, its scheduled start, its status
//! and when it changed), each game's result with its termination, who
//! entered it and when, the game's final PGN and the record's summary,
//! every correction made after a round was closed, and the lichess rounds
//! the hub made for each round (`--lichess-broadcast`).
//!
//! Promises:
//! * one hub per state directory: a second gets [`StoreError::Held`]
//!   naming the holder's PID before it opens the database; the kernel
//!   drops the lock when the hub ends however it ends;
//! * the schema's version is the file's `user_version`: an older file is
//!   migrated forward in one transaction; a newer one, or a file that is
//!   not this store's (damaged, or another program's), is refused with a
//!   clear error naming the file, never written to;
//! * every change is one transaction (SQLite's WAL, `synchronous=FULL`):
//!   what a call returned `Ok` for survives a crash or a power cut;
//! * a closed round's results do not change by [`Store::record`]; a
//!   correction ([`Store::correct`]) changes one and is kept beside it;
//!   a corrected result is not changed nor withdrawn by the board's
//!   record after it ([`Recorded::Disputed`]): only another correction
//!   changes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chessclock_host::dirlock::{DirLock, LockError};
use rusqlite::{params, Connection, OptionalExtension};

/// The lock file's name inside the state directory.
pub const LOCK_FILE: &str = "chessclock-hall.lock";
/// The database's name inside the state directory.
pub const DB_FILE: &str = "event.sqlite";
/// This build's schema version (the file's `user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// Why the store cannot be used.
#[derive(Debug)]
pub enum StoreError {
    /// Another hub holds the state directory.
    Held(LockError),
    /// The file is not this store's, or it is damaged.
    Damaged {
        path: PathBuf,
        why: String,
    },
    /// The file was written by a newer hub.
    Newer {
        path: PathBuf,
        version: i64,
    },
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    Sql(rusqlite::Error),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Held(error) => write!(f, "{error}"),
            StoreError::Damaged { path, why } => write!(
                f,
                "the event store {} is damaged or not an event store ({why}): move it aside \
                 to start a new event, or put back a copy from a backup",
                path.display()
            ),
            StoreError::Newer { path, version } => write!(
                f,
                "the event store {} has schema version {version}, newer than this \
                 chessclock-hall's ({SCHEMA_VERSION}): run the newer chessclock-hall",
                path.display()
            ),
            StoreError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            StoreError::Sql(error) => write!(f, "the event store: {error}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> StoreError {
        StoreError::Sql(error)
    }
}

/// Where a round is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundStatus {
    /// Pairings loaded, not sent to the boards yet.
    Loaded,
    /// Sent to the boards.
    Sent,
    /// Closed: its results are frozen (a correction is recorded).
    Closed,
}

impl RoundStatus {
    fn text(self) -> &'static str {
        match self {
            RoundStatus::Loaded => "loaded",
            RoundStatus::Sent => "sent",
            RoundStatus::Closed => "closed",
        }
    }

    fn parse(text: &str) -> RoundStatus {
        match text {
            "sent" => RoundStatus::Sent,
            "closed" => RoundStatus::Closed,
            _ => RoundStatus::Loaded,
        }
    }
}

/// A round as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundRecord {
    pub number: u32,
    /// The pairings file as loaded (TRF or CSV), re-read on every start.
    pub pairings: String,
    /// Which hall board plays which pairing board.
    pub map: BTreeMap<u32, String>,
    /// The control for every board without one of its own.
    pub control: Option<String>,
    /// The round's scheduled start (wall ms), when set.
    pub start_at_ms: Option<i64>,
    pub status: RoundStatus,
    pub loaded_ms: i64,
    pub sent_ms: Option<i64>,
    pub closed_ms: Option<i64>,
}

/// One game's result as kept.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct GameRecord {
    /// The hall board it was played on.
    pub board_id: Option<String>,
    /// `1-0`, `0-1`, `1/2-1/2`.
    pub result: String,
    /// The PGN `Termination`.
    pub termination: String,
    /// Who entered it: an arbiter's name, `e-board`, `flag`, `board`.
    pub entered_by: String,
    pub recorded_ms: i64,
    /// The game's final PGN, when it was known.
    pub pgn: Option<String>,
    /// The record's summary (JSON text: why it ended, the clocks).
    pub summary: Option<String>,
}

/// A result changed after its round was closed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Correction {
    pub board: u32,
    pub before: Option<String>,
    pub after: String,
    pub termination: String,
    pub entered_by: String,
    pub at_ms: i64,
}

/// What [`Store::record`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    New,
    Same,
    Changed,
    /// The round is closed: nothing changed.
    Frozen,
    /// An arbiter corrected this game's result and the board gives
    /// another: the correction stands, nothing changed (the exports flag
    /// the disagreement, see `crate::round`).
    Disputed,
}

/// The event's store.
pub struct Store {
    db: Connection,
    _lock: Option<DirLock>,
}

const SCHEMA_1: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    name TEXT PRIMARY KEY, number INTEGER, rating INTEGER, title TEXT,
    federation TEXT, fide_id TEXT);
CREATE TABLE IF NOT EXISTS rounds (
    number INTEGER PRIMARY KEY, pairings TEXT NOT NULL, board_map TEXT NOT NULL,
    control TEXT, start_at_ms INTEGER, status TEXT NOT NULL, loaded_ms INTEGER NOT NULL,
    sent_ms INTEGER, closed_ms INTEGER);
CREATE TABLE IF NOT EXISTS games (
    round INTEGER NOT NULL REFERENCES rounds(number), board INTEGER NOT NULL,
    board_id TEXT, result TEXT NOT NULL, termination TEXT NOT NULL,
    entered_by TEXT NOT NULL, recorded_ms INTEGER NOT NULL, pgn TEXT, summary TEXT,
    PRIMARY KEY (round, board));
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY, round INTEGER NOT NULL, board INTEGER NOT NULL,
    before TEXT, after TEXT NOT NULL, termination TEXT NOT NULL,
    entered_by TEXT NOT NULL, at_ms INTEGER NOT NULL);
";

fn lock_dir(dir: &Path) -> Result<DirLock, StoreError> {
    DirLock::acquire(dir, LOCK_FILE, "chessclock-hall").map_err(|error| match error {
        LockError::Held { .. } => StoreError::Held(error),
        LockError::Io { path, source } => StoreError::Io { path, source },
    })
}

fn json_map(map: &BTreeMap<u32, String>) -> String {
    serde_json::to_string(map).unwrap_or_else(|_| "{}".to_owned())
}

impl Store {
    /// Locks `dir` (made if missing), opens its store (made if missing)
    /// and brings its schema to this build's.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let lock = lock_dir(dir)?;
        let path = dir.join(DB_FILE);
        let db = Connection::open(&path).map_err(|error| StoreError::Damaged {
            path: path.clone(),
            why: error.to_string(),
        })?;
        let mut store = Store {
            db,
            _lock: Some(lock),
        };
        store.prepare(&path)?;
        Ok(store)
    }

    /// A store in memory (a hub without `--state-dir`: kept until it
    /// stops).
    pub fn in_memory() -> Result<Store, StoreError> {
        let mut store = Store {
            db: Connection::open_in_memory()?,
            _lock: None,
        };
        store.prepare(Path::new(":memory:"))?;
        Ok(store)
    }

    fn prepare(&mut self, path: &Path) -> Result<(), StoreError> {
        let damaged = |error: rusqlite::Error| StoreError::Damaged {
            path: path.to_owned(),
            why: error.to_string(),
        };
        // The first read of the file: a file that is not a database fails
        // here ("file is not a database").
        let version: i64 = self
            .db
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(damaged)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: path.to_owned(),
                version,
            });
        }
        let check: String = self
            .db
            .query_row("PRAGMA quick_check", [], |row| row.get(0))
            .map_err(damaged)?;
        if check != "ok" {
            return Err(StoreError::Damaged {
                path: path.to_owned(),
                why: check,
            });
        }
        if version > 0 {
            // A store of this schema has its tables: a file of the same
            // version without them is another program's.
            let tables: i64 = self
                .db
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
                     AND name IN ('rounds', 'games', 'players', 'corrections', 'meta')",
                    [],
                    |row| row.get(0),
                )
                .map_err(damaged)?;
            if tables != 5 {
                return Err(StoreError::Damaged {
                    path: path.to_owned(),
                    why: format!("schema version {version} without its tables"),
                });
            }
        }
        self.db
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(damaged)?;
        self.db
            .pragma_update(None, "synchronous", "FULL")
            .map_err(damaged)?;
        if version < SCHEMA_VERSION {
            let tx = self.db.transaction()?;
            if version < 1 {
                tx.execute_batch(SCHEMA_1)?;
            }
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// The file's schema version.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .db
            .query_row("PRAGMA user_version", [], |row| row.get(0))?)
    }

    /// The round the hub follows now.
    pub fn current(&self) -> Result<Option<u32>, StoreError> {
        let value: Option<String> = self
            .db
            .query_row(
                "SELECT value FROM meta WHERE key = 'current_round'",
                [],
                |row| row.get(0),
            )
            .optional()?;
        Ok(value.and_then(|v| v.parse().ok()))
    }

    pub fn set_current(&self, round: u32) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES ('current_round', ?1) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![round.to_string()],
        )?;
        Ok(())
    }

    /// Round `number`'s broadcast delay in seconds, as set on the desk
    /// (`None`: the hub's `--delay-seconds`). Kept in `meta`, so no schema
    /// change.
    pub fn round_delay(&self, number: u32) -> Result<Option<u32>, StoreError> {
        let value: Option<String> = self
            .db
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                params![format!("delay_seconds.round.{number}")],
                |row| row.get(0),
            )
            .optional()?;
        Ok(value.and_then(|v| v.parse().ok()))
    }

    /// Sets (or with `None` clears) round `number`'s broadcast delay.
    pub fn set_round_delay(&self, number: u32, seconds: Option<u32>) -> Result<(), StoreError> {
        let key = format!("delay_seconds.round.{number}");
        match seconds {
            Some(seconds) => self.db.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) \
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, seconds.to_string()],
            )?,
            None => self
                .db
                .execute("DELETE FROM meta WHERE key = ?1", params![key])?,
        };
        Ok(())
    }

    /// The lichess rounds the hub made in broadcast `tournament` for round
    /// `number` (JSON text, see `crate::round`), if any. Kept in `meta`,
    /// so no schema change.
    pub fn made_rounds(&self, tournament: &str, number: u32) -> Result<Option<String>, StoreError> {
        Ok(self
            .db
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                params![format!("lichess_rounds.{tournament}.round.{number}")],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Sets the lichess rounds made in broadcast `tournament` for round
    /// `number` (JSON text).
    pub fn set_made_rounds(
        &self,
        tournament: &str,
        number: u32,
        text: &str,
    ) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![format!("lichess_rounds.{tournament}.round.{number}"), text],
        )?;
        Ok(())
    }

    /// Keeps a round (new, or its pairings, map and control replaced: its
    /// status and results are left as they are).
    pub fn put_round(
        &mut self,
        round: &RoundRecord,
        players: &[crate::pairings::Player],
    ) -> Result<(), StoreError> {
        let tx = self.db.transaction()?;
        tx.execute(
            "INSERT INTO rounds (number, pairings, board_map, control, start_at_ms, status, \
             loaded_ms, sent_ms, closed_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT(number) DO UPDATE SET pairings = excluded.pairings, \
             board_map = excluded.board_map, control = excluded.control, \
             loaded_ms = excluded.loaded_ms",
            params![
                round.number,
                round.pairings,
                json_map(&round.map),
                round.control,
                round.start_at_ms,
                round.status.text(),
                round.loaded_ms,
                round.sent_ms,
                round.closed_ms
            ],
        )?;
        for player in players {
            tx.execute(
                "INSERT INTO players (name, number, rating, title, federation, fide_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(name) DO UPDATE SET \
                 number = coalesce(excluded.number, number), \
                 rating = coalesce(excluded.rating, rating), \
                 title = coalesce(excluded.title, title), \
                 federation = coalesce(excluded.federation, federation), \
                 fide_id = coalesce(excluded.fide_id, fide_id)",
                params![
                    player.name,
                    player.number,
                    player.rating,
                    player.title,
                    player.federation,
                    player.fide_id
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The event's players, by name.
    pub fn players(&self) -> Result<Vec<(String, Option<u32>)>, StoreError> {
        let mut statement = self
            .db
            .prepare("SELECT name, number FROM players ORDER BY number, name")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn round_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<RoundRecord> {
        let map: String = row.get(2)?;
        let status: String = row.get(5)?;
        Ok(RoundRecord {
            number: row.get(0)?,
            pairings: row.get(1)?,
            map: serde_json::from_str(&map).unwrap_or_default(),
            control: row.get(3)?,
            start_at_ms: row.get(4)?,
            status: RoundStatus::parse(&status),
            loaded_ms: row.get(6)?,
            sent_ms: row.get(7)?,
            closed_ms: row.get(8)?,
        })
    }

    const ROUND_COLUMNS: &'static str = "number, pairings, board_map, control, start_at_ms, \
        status, loaded_ms, sent_ms, closed_ms";

    pub fn round(&self, number: u32) -> Result<Option<RoundRecord>, StoreError> {
        Ok(self
            .db
            .query_row(
                &format!(
                    "SELECT {} FROM rounds WHERE number = ?1",
                    Self::ROUND_COLUMNS
                ),
                params![number],
                Self::round_of,
            )
            .optional()?)
    }

    pub fn rounds(&self) -> Result<Vec<RoundRecord>, StoreError> {
        let mut statement = self.db.prepare(&format!(
            "SELECT {} FROM rounds ORDER BY number",
            Self::ROUND_COLUMNS
        ))?;
        let rows = statement.query_map([], Self::round_of)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sets a round's status (and when), its start when given.
    pub fn set_status(
        &self,
        number: u32,
        status: RoundStatus,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let column = match status {
            RoundStatus::Loaded => "loaded_ms",
            RoundStatus::Sent => "sent_ms",
            RoundStatus::Closed => "closed_ms",
        };
        self.db.execute(
            &format!("UPDATE rounds SET status = ?1, {column} = ?2 WHERE number = ?3"),
            params![status.text(), at_ms, number],
        )?;
        Ok(())
    }

    /// Sets a round's scheduled start.
    pub fn set_start(&self, number: u32, at_ms: Option<i64>) -> Result<(), StoreError> {
        self.db.execute(
            "UPDATE rounds SET start_at_ms = ?1 WHERE number = ?2",
            params![at_ms, number],
        )?;
        Ok(())
    }

    /// Records a game's result as the boards give it (nothing on a closed
    /// round). A record without a PGN keeps the one it had.
    pub fn record(
        &self,
        round: u32,
        board: u32,
        game: &GameRecord,
    ) -> Result<Recorded, StoreError> {
        let status = self.round(round)?.map(|r| r.status);
        if status == Some(RoundStatus::Closed) {
            return Ok(Recorded::Frozen);
        }
        let before = self.games(round)?.remove(&board);
        if before.as_ref().is_some_and(|b| b.result != game.result)
            && self.corrected(round, board)?
        {
            return Ok(Recorded::Disputed);
        }
        let outcome = match &before {
            None => Recorded::New,
            Some(old)
                if old.result == game.result
                    && old.termination == game.termination
                    && (game.pgn.is_none() || old.pgn == game.pgn) =>
            {
                return Ok(Recorded::Same)
            }
            Some(_) => Recorded::Changed,
        };
        self.db.execute(
            "INSERT INTO games (round, board, board_id, result, termination, entered_by, \
             recorded_ms, pgn, summary) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT(round, board) DO UPDATE SET board_id = excluded.board_id, \
             result = excluded.result, termination = excluded.termination, \
             entered_by = CASE WHEN games.result = excluded.result \
                 THEN games.entered_by ELSE excluded.entered_by END, \
             recorded_ms = excluded.recorded_ms, pgn = coalesce(excluded.pgn, games.pgn), \
             summary = coalesce(excluded.summary, games.summary)",
            params![
                round,
                board,
                game.board_id,
                game.result,
                game.termination,
                game.entered_by,
                game.recorded_ms,
                game.pgn,
                game.summary
            ],
        )?;
        Ok(outcome)
    }

    /// Withdraws a game's result (an arbiter's `*`; nothing on a closed
    /// round, nor on a corrected result). Whether there was one.
    pub fn withdraw(&self, round: u32, board: u32) -> Result<bool, StoreError> {
        if self.round(round)?.map(|r| r.status) == Some(RoundStatus::Closed)
            || self.corrected(round, board)?
        {
            return Ok(false);
        }
        Ok(self.db.execute(
            "DELETE FROM games WHERE round = ?1 AND board = ?2",
            params![round, board],
        )? > 0)
    }

    /// Whether an arbiter corrected round `round`'s board `board`.
    fn corrected(&self, round: u32, board: u32) -> Result<bool, StoreError> {
        let count: i64 = self.db.query_row(
            "SELECT count(*) FROM corrections WHERE round = ?1 AND board = ?2",
            params![round, board],
            |row| row.get(0),
        )?;
        Ok(count > 0)
    }

    /// A correction of a game's result, closed round or not: applied and
    /// kept in the round's corrections.
    pub fn correct(
        &mut self,
        round: u32,
        board: u32,
        result: &str,
        termination: &str,
        by: &str,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let before = self.games(round)?.remove(&board);
        let tx = self.db.transaction()?;
        tx.execute(
            "INSERT INTO corrections (round, board, before, after, termination, entered_by, \
             at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                round,
                board,
                before.as_ref().map(|b| b.result.clone()),
                result,
                termination,
                by,
                at_ms
            ],
        )?;
        tx.execute(
            "INSERT INTO games (round, board, board_id, result, termination, entered_by, \
             recorded_ms, pgn, summary) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT(round, board) DO UPDATE SET result = excluded.result, \
             termination = excluded.termination, entered_by = excluded.entered_by, \
             recorded_ms = excluded.recorded_ms",
            params![
                round,
                board,
                before.as_ref().and_then(|b| b.board_id.clone()),
                result,
                termination,
                by,
                at_ms,
                before.as_ref().and_then(|b| b.pgn.clone()),
                before.as_ref().and_then(|b| b.summary.clone())
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A round's recorded games, by pairing board.
    pub fn games(&self, round: u32) -> Result<BTreeMap<u32, GameRecord>, StoreError> {
        let mut statement = self.db.prepare_cached(
            "SELECT board, board_id, result, termination, entered_by, recorded_ms, pgn, \
             summary FROM games WHERE round = ?1 ORDER BY board",
        )?;
        let rows = statement.query_map(params![round], |row| {
            Ok((
                row.get::<_, u32>(0)?,
                GameRecord {
                    board_id: row.get(1)?,
                    result: row.get(2)?,
                    termination: row.get(3)?,
                    entered_by: row.get(4)?,
                    recorded_ms: row.get(5)?,
                    pgn: row.get(6)?,
                    summary: row.get(7)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A round's corrections, in order.
    pub fn corrections(&self, round: u32) -> Result<Vec<Correction>, StoreError> {
        let mut statement = self.db.prepare(
            "SELECT board, before, after, termination, entered_by, at_ms FROM corrections \
             WHERE round = ?1 ORDER BY id",
        )?;
        let rows = statement.query_map(params![round], |row| {
            Ok(Correction {
                board: row.get(0)?,
                before: row.get(1)?,
                after: row.get(2)?,
                termination: row.get(3)?,
                entered_by: row.get(4)?,
                at_ms: row.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests;
