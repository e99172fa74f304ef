//! Opening the state database: the schema, the checks before any use, and
//! the loading of each board's latest game.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};

use super::{EventRow, Store, StoreError, StoredGame, DB_FILE};
use crate::clock::wall_now_us;
use crate::engine::Settings;

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

/// Columns added after the first schema: `(table, column, declaration)`.
/// `games.boot_id` and `games.epoch_mono_us` map a game's offsets to the
/// monotonic clock of the boot it last ran in (restart reconstruction);
/// `events.caller_name` is the name of who made a change.
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("games", "boot_id", "TEXT"),
    ("games", "epoch_mono_us", "INTEGER"),
    ("events", "caller_name", "TEXT"),
];

/// Adds the columns a database of an older daemon lacks.
fn add_missing_columns(conn: &Connection) -> rusqlite::Result<()> {
    for (table, column, declaration) in ADDED_COLUMNS {
        let mut statement = conn.prepare(&format!("PRAGMA table_info({table})"))?;
        let names: Vec<String> = statement
            .query_map([], |row| row.get::<_, String>(1))?
            .collect::<Result<_, _>>()?;
        if !names.iter().any(|name| name == column) {
            conn.execute_batch(&format!(
                "ALTER TABLE {table} ADD COLUMN {column} {declaration}"
            ))?;
        }
    }
    Ok(())
}

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
        add_missing_columns(&conn).map_err(sql)?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
            active: HashMap::new(),
        };
        let games = store.load_latest_games()?;
        Ok((store, games))
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
                        alive_offset_us, alive_wall_us, boot_id, epoch_mono_us
                 FROM games WHERE id = ?1",
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
                        row.get::<_, Option<String>>(7)?,
                        row.get::<_, Option<i64>>(8)?,
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
                "SELECT offset_us, wall_us, event, caller_uid, origin, caller_name FROM events
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
                    row.get::<_, Option<String>>(5)?,
                ))
            })
            .map_err(|e| self.sql_error(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql_error(e))?;
        let mut events = Vec::with_capacity(raw.len());
        for (offset_us, wall_us, event, caller_uid, origin, caller_name) in raw {
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
                caller_name,
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
            boot_id: row.7,
            epoch_mono_us: row.8,
            events,
        })
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
