//! Opening the state: the checks before any use, the evidence kept of any
//! damage, the schema and its migrations, the commit record, and the loading
//! of each board's latest game.
//!
//! Promises:
//! * a file that is not ours is never written to: a SQLite database with
//!   another `application_id`, or without ours and with other tables (or
//!   another `user_version`), stops the open with [`StoreError::Foreign`];
//!   one written by a newer daemon (a `user_version` above
//!   [`SCHEMA_VERSION`]) with [`StoreError::TooNew`];
//! * a damaged state is never silently a shorter game. Before anything
//!   writes, a read-only inspection checks the file header, the write-ahead
//!   log's header, SQLite's `integrity_check`, every game's event sequence
//!   (events are numbered 1, 2, 3, ... per game) and the count of committed
//!   events against the commit record kept outside the database
//!   ([`super::commits`]); every finding is returned ([`StateHealth`]) and
//!   logged, and copies of the files as they were are kept in
//!   `damaged-<unix seconds>/` in the state directory before SQLite opens
//!   them for writing (which would reset a damaged WAL). A database that is
//!   not SQLite or fails its integrity check is moved there whole and a
//!   fresh one is started; any other damage keeps the database and restores
//!   what is in it, marked;
//! * a state directory that cannot be used (cannot be created, not
//!   writable, a read-only database, a directory or a symbolic link where
//!   one of the state's files belongs) is [`StoreError::Unusable`] /
//!   [`StoreError::ReadOnly`]; the caller decides (the daemon stops unless
//!   told to run without crash safety);
//! * the schema is owned with `PRAGMA user_version` migrations: version 0
//!   (the schema before versions, which an old database has) is migrated
//!   to version 1 in one transaction.
//!
//! # Schema, version 1
//! * `games`: one row per game (`board`, `control`, `settings` JSON,
//!   `created_wall_us`, `caller_uid`, the alive checkpoint `alive_offset_us`
//!   / `alive_wall_us`), and two nullable columns for the board core's
//!   restart reconstruction: `boot_id TEXT` (the host
//!   boot the game's time base belongs to, `/proc/sys/kernel/random/boot_id`)
//!   and `epoch_mono_us INTEGER` (CLOCK_MONOTONIC µs of the game's offset 0
//!   in that boot);
//! * `events`: one row per input (`game`, `seq` = 1, 2, 3, ... within the
//!   game, unique, `offset_us`, `wall_us`, `event` JSON, `caller_uid`,
//!   `origin` JSON);
//! * `meta`: `instance`, a random identity the commit record names;
//! * indexes: `games_board (board, id)` and the unique `events_game_seq
//!   (game, seq)` (the early version 1 index `events_game (game, id)` is
//!   dropped where found: it duplicated the other and cost a page per
//!   press);
//! * a new database has 1 KiB pages ([`PAGE_SIZE`]): every commit appends
//!   the pages it changed to the write-ahead log, so small pages are fewer
//!   bytes written per press (on the SD card). `synchronous=FULL` as ever.
//! * `PRAGMA application_id` = [`APPLICATION_ID`], `PRAGMA user_version` =
//!   [`SCHEMA_VERSION`].

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::commits::{self, CommitFile, Commits, ReadCommits, COMMITS_FILE};
use super::{EventRow, Store, StoreError, StoredGame, DB_FILE};
use crate::control::{FindingKind, StateFinding, StateHealth, StateMode};
use crate::engine::Settings;
use chessclock_host::clock::wall_now_us;

mod inspect;
use inspect::{inspect, keep_evidence};

/// SQLite's page cache per connection, KiB (`PRAGMA cache_size`; SQLite's
/// default is 2000 KiB, all of it resident under mlockall once filled). The
/// writer appends a few rows per commit and the readers read one game at a
/// time: the pages they touch fit many times over.
pub(crate) const CACHE_KIB: u32 = 256;

/// The page size of a new database, bytes (`PRAGMA page_size`; SQLite's
/// default is 4096). SQLite's smallest is 512; 1024 still holds several
/// event rows per leaf page.
pub(crate) const PAGE_SIZE: u32 = 1024;

/// `PRAGMA application_id` of a chessclockd database: "CCKD".
pub const APPLICATION_ID: i32 = 0x4343_4B44;
/// The schema version this daemon writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i32 = 1;

const SCHEMA_V1: &str = "
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    control TEXT NOT NULL,
    settings TEXT NOT NULL,
    created_wall_us INTEGER NOT NULL,
    caller_uid INTEGER,
    alive_offset_us INTEGER NOT NULL DEFAULT 0,
    alive_wall_us INTEGER NOT NULL,
    boot_id TEXT,
    epoch_mono_us INTEGER
);
CREATE INDEX games_board ON games(board, id);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    game INTEGER NOT NULL REFERENCES games(id),
    offset_us INTEGER NOT NULL,
    wall_us INTEGER NOT NULL,
    event TEXT NOT NULL,
    caller_uid INTEGER,
    origin TEXT,
    seq INTEGER NOT NULL,
    caller_name TEXT
);
CREATE UNIQUE INDEX events_game_seq ON events(game, seq);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// An index the first version 1 databases had: `events_game_seq` serves
/// every query it served, and each press updated both (a leaf page of each
/// in every commit). Dropped where found; a daemon that still expects it
/// only runs its queries through the other index.
const DROP_REDUNDANT: &str = "DROP INDEX IF EXISTS events_game;";

/// Version 0 (the schema before versions) to 1: events are numbered per
/// game in the order they were written; meta. The columns of
/// [`COLUMNS_ADDED_IN_1`] come first, each only where it is missing.
const MIGRATE_0_TO_1: &str = "
ALTER TABLE events ADD COLUMN seq INTEGER;
UPDATE events SET seq = (SELECT COUNT(*) FROM events AS e
                         WHERE e.game = events.game AND e.id <= events.id);
CREATE UNIQUE INDEX events_game_seq ON events(game, seq);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// Columns version 1 has that version 0 lacked: `games.boot_id` and
/// `games.epoch_mono_us` map a game's offsets to the monotonic clock of the
/// boot that wrote them (a restart in the same boot charges the outage);
/// `events.caller_name` is the account that made a change. Development
/// builds of version 0 already had some of them, hence one at a time.
const COLUMNS_ADDED_IN_1: [(&str, &str, &str); 3] = [
    ("games", "boot_id", "TEXT"),
    ("games", "epoch_mono_us", "INTEGER"),
    ("events", "caller_name", "TEXT"),
];

fn add_missing_columns(conn: &Connection) -> Result<(), rusqlite::Error> {
    for (table, column, declaration) in COLUMNS_ADDED_IN_1 {
        let present: bool = conn
            .query_row(
                &format!("SELECT COUNT(*) FROM pragma_table_info('{table}') WHERE name = ?1"),
                [column],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)?;
        if !present {
            conn.execute_batch(&format!(
                "ALTER TABLE {table} ADD COLUMN {column} {declaration}"
            ))?;
        }
    }
    Ok(())
}

/// The tables of our schemas (version 0 had the first two).
const OUR_TABLES: [&str; 3] = ["games", "events", "meta"];

/// What opening the state gives.
pub struct Opened {
    pub store: Store,
    pub games: Vec<StoredGame>,
    pub health: StateHealth,
}

/// The files of one state directory.
struct Paths {
    dir: PathBuf,
    db: PathBuf,
    wal: PathBuf,
    shm: PathBuf,
    commits: PathBuf,
}

impl Paths {
    fn new(dir: &Path) -> Paths {
        let db = dir.join(DB_FILE);
        Paths {
            dir: dir.to_owned(),
            wal: PathBuf::from(format!("{}-wal", db.display())),
            shm: PathBuf::from(format!("{}-shm", db.display())),
            commits: dir.join(COMMITS_FILE),
            db,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex16(text: &str) -> Option<[u8; 16]> {
    if text.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The state's files are regular files or absent: a directory, a symbolic
/// link (dangling or not), a device or a FIFO at one of their paths is not
/// ours, so the state is unusable and nothing there is touched, moved or
/// followed (SQLite would write through a link, even create its target
/// outside the state directory).
fn only_regular_files(paths: &Paths) -> Result<(), StoreError> {
    for path in [&paths.db, &paths.wal, &paths.shm, &paths.commits] {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(StoreError::Unusable {
                    path: path.clone(),
                    reason: format!("cannot look at it: {source}"),
                })
            }
        };
        let kind = meta.file_type();
        let what = if kind.is_file() {
            continue;
        } else if kind.is_symlink() {
            "a symbolic link"
        } else if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(StoreError::Unusable {
            path: path.clone(),
            reason: format!(
                "it is {what}, not chessclockd's file; it was not touched: move it away \
                 or give chessclockd another state directory"
            ),
        });
    }
    Ok(())
}

impl Store {
    /// Opens the state in `dir` (created if missing): checks it, keeps
    /// evidence of any damage, migrates it, loads each board's latest game.
    /// See the module docs for what is refused and what is reported.
    pub fn open_state(dir: &Path) -> Result<Opened, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Unusable {
            path: dir.to_owned(),
            reason: format!("cannot create the state directory: {source}"),
        })?;
        let paths = Paths::new(dir);
        only_regular_files(&paths)?;
        let record = commits::read(&paths.commits);
        let inspection = inspect(&paths, &record)?;
        let mut health = StateHealth {
            mode: StateMode::Durable,
            path: Some(paths.db.display().to_string()),
            findings: inspection.findings,
            evidence: None,
            saving: None,
        };
        let is_lasting = |f: &StateFinding| lasting(f.kind);
        if health.findings.iter().any(|f| !is_lasting(f)) {
            // What SQLite would reset or replace once it writes (the WAL,
            // the count, the file itself): kept now, whatever it is.
            let kept = keep_evidence(&paths, &health, inspection.replace)?;
            health.evidence = Some(kept.display().to_string());
        }
        let mut store = open_writable(&paths)?;
        let (games, load_findings) = store.load_latest_games()?;
        health.findings.extend(load_findings);
        let lasting_now: Vec<String> = health
            .findings
            .iter()
            .filter(|f| is_lasting(f))
            .map(fingerprint)
            .collect();
        // Damage that stays in the database (a gap, an unreadable row) is
        // found again at every start while its game is the board's latest:
        // reported each time, kept once.
        let known = store.known_damage();
        match (&health.evidence, known) {
            (None, Some((seen, kept)))
                if !lasting_now.is_empty() && lasting_now.iter().all(|f| seen.contains(f)) =>
            {
                tracing::warn!(kept = %kept, "the state damage found at an earlier start is still there");
                health.evidence = Some(kept);
            }
            _ if !lasting_now.is_empty() => {
                let kept = match &health.evidence {
                    Some(kept) => PathBuf::from(kept),
                    None => keep_evidence(&paths, &health, false)?,
                };
                health.evidence = Some(kept.display().to_string());
                store.remember_damage(&lasting_now, &kept.display().to_string());
            }
            _ => {}
        }
        for finding in &health.findings {
            tracing::error!(kind = ?finding.kind, board = finding.board.as_deref().unwrap_or(""),
                "state damaged: {}", finding.message);
        }
        if let Some(kept) = &health.evidence {
            tracing::error!(kept = %kept, "the damaged state files are kept for inspection");
        }
        store.start_commit_record(&paths.commits)?;
        Ok(Opened {
            store,
            games,
            health,
        })
    }

    /// The lasting damage reported at an earlier start, and where its
    /// evidence is.
    fn known_damage(&self) -> Option<(Vec<String>, String)> {
        let text: String = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'known_damage'",
                [],
                |r| r.get(0),
            )
            .optional()
            .ok()??;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        let seen = value
            .get("findings")?
            .as_array()?
            .iter()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        Some((seen, value.get("evidence")?.as_str()?.to_owned()))
    }

    fn remember_damage(&self, findings: &[String], evidence: &str) {
        let value = serde_json::json!({"findings": findings, "evidence": evidence});
        if let Err(error) = self.conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('known_damage', ?1)",
            [value.to_string()],
        ) {
            tracing::warn!(%error, "cannot note the damage found; it will be kept again at the next start");
        }
    }

    /// A store that keeps everything in memory (no crash safety); `why` is
    /// said in its health.
    pub fn in_memory(why: &str) -> Result<Opened, StoreError> {
        let path = PathBuf::from(":memory:");
        let sql = |source| StoreError::Sql {
            path: path.clone(),
            source,
        };
        let conn = Connection::open_in_memory().map_err(sql)?;
        conn.execute_batch(SCHEMA_V1).map_err(sql)?;
        let store = Store::with_connection(conn, path);
        Ok(Opened {
            store,
            games: Vec::new(),
            health: StateHealth {
                mode: StateMode::Memory,
                path: None,
                findings: vec![StateFinding {
                    kind: FindingKind::NoCrashSafety,
                    message: format!(
                        "running WITHOUT crash safety: games are kept in memory only and a \
                         crash or restart loses them ({why})"
                    ),
                    board: None,
                }],
                evidence: None,
                saving: None,
            },
        })
    }

    /// (For tests and tools.) [`Store::open_state`] without the health.
    pub fn open_or_recover(dir: &Path) -> Result<(Store, Vec<StoredGame>), StoreError> {
        Store::open_state(dir).map(|opened| (opened.store, opened.games))
    }

    /// Writes the commit record afresh for the database as it is now.
    fn start_commit_record(&mut self, path: &Path) -> Result<(), StoreError> {
        let instance: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'instance'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql_error(e))?;
        let instance = instance.and_then(|text| unhex16(&text)).unwrap_or_default();
        let events: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
            .map_err(|e| self.sql_error(e))?;
        let last: Option<(i64, i64)> = self
            .conn
            .query_row(
                "SELECT game, seq FROM events ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql_error(e))?;
        let previous = match commits::read(path) {
            ReadCommits::Valid(c) => c.generation,
            _ => 0,
        };
        let file = CommitFile::create(
            path,
            Commits {
                generation: previous,
                instance,
                events: u64::try_from(events).unwrap_or(0),
                last,
            },
        )
        .map_err(|source| StoreError::Unusable {
            path: path.to_owned(),
            reason: format!("cannot write the commit record: {source}"),
        })?;
        self.committed_events = file.current().events;
        self.last_committed = last;
        self.commits = Some(file);
        Ok(())
    }

    fn load_latest_games(&mut self) -> Result<(Vec<StoredGame>, Vec<StateFinding>), StoreError> {
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
        let mut games = Vec::new();
        let mut findings = Vec::new();
        for id in ids {
            match self.load_game(id) {
                Ok((game, mut bad)) => {
                    findings.append(&mut bad);
                    games.push(game);
                }
                Err(error) => findings.push(StateFinding {
                    kind: FindingKind::Corrupt,
                    message: format!("game {id} cannot be read ({error}); it is not restored"),
                    board: None,
                }),
            }
        }
        Ok((games, findings))
    }

    /// Loads one game with all its events; events that cannot be read are
    /// left out and reported.
    pub fn load_game(&self, id: i64) -> Result<(StoredGame, Vec<StateFinding>), StoreError> {
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
                "SELECT offset_us, wall_us, event, caller_uid, origin, seq, caller_name
                 FROM events WHERE game = ?1 ORDER BY seq, id",
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
                    row.get::<_, Option<i64>>(5)?,
                    row.get::<_, Option<String>>(6)?,
                ))
            })
            .map_err(|e| self.sql_error(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql_error(e))?;
        let mut events = Vec::with_capacity(raw.len());
        let mut findings = Vec::new();
        let board = row.0.clone();
        for (offset_us, wall_us, event, caller_uid, origin, seq, caller_name) in raw {
            let decoded = serde_json::from_str(&event)
                .map_err(|e| format!("event {event:?}: {e}"))
                .and_then(|event| {
                    let origin = match origin {
                        None => None,
                        Some(text) => Some(
                            serde_json::from_str(&text)
                                .map_err(|e| format!("event origin {text:?}: {e}"))?,
                        ),
                    };
                    Ok((event, origin))
                });
            match decoded {
                Ok((event, origin)) => events.push(EventRow {
                    offset_us,
                    wall_us,
                    event,
                    caller_uid,
                    caller_name,
                    origin,
                }),
                Err(why) => findings.push(StateFinding {
                    kind: FindingKind::EventUnreadable,
                    message: format!(
                        "game {id}, event {}: cannot be read ({why}); the game is restored without it",
                        seq.map_or("?".to_owned(), |s| s.to_string())
                    ),
                    board: Some(board.clone()),
                }),
            }
        }
        // The game was alive at its last checkpoint and at its last event
        // (a press does not update the game's row: see `Store::write`):
        // the later of the two, with its wall-clock time.
        let (alive_offset_us, alive_wall_us) = events
            .iter()
            .map(|e| (e.offset_us, e.wall_us))
            .fold((row.5, row.6), |alive, event| {
                if event.0 > alive.0 {
                    event
                } else {
                    alive
                }
            });
        Ok((
            StoredGame {
                id,
                board: row.0,
                control: row.1,
                settings,
                created_wall_us: row.3,
                caller_uid: row.4,
                alive_offset_us,
                alive_wall_us,
                boot_id: row.7,
                epoch_mono_us: row.8,
                events,
            },
            findings,
        ))
    }
}

/// Damage that stays in the database (found again at the next start)
/// rather than in what SQLite resets when it writes.
fn lasting(kind: FindingKind) -> bool {
    matches!(
        kind,
        FindingKind::SequenceBroken | FindingKind::EventUnreadable
    )
}

fn fingerprint(finding: &StateFinding) -> String {
    format!(
        "{:?}|{}|{}",
        finding.kind,
        finding.board.as_deref().unwrap_or(""),
        finding.message
    )
}

/// Opens the database for writing (it must be writable) in WAL mode and
/// brings its schema to [`SCHEMA_VERSION`].
fn open_writable(paths: &Paths) -> Result<Store, StoreError> {
    let sql = |source| StoreError::Sql {
        path: paths.db.clone(),
        source,
    };
    let conn = Connection::open(&paths.db).map_err(|source| StoreError::Unusable {
        path: paths.db.clone(),
        reason: format!("cannot open it: {source}"),
    })?;
    conn.busy_timeout(Duration::from_secs(2)).map_err(sql)?;
    let read_only = |source: rusqlite::Error| match source.sqlite_error_code() {
        Some(ErrorCode::ReadOnly)
        | Some(ErrorCode::CannotOpen)
        | Some(ErrorCode::PermissionDenied) => StoreError::ReadOnly {
            path: paths.db.clone(),
            source,
        },
        _ => StoreError::Sql {
            path: paths.db.clone(),
            source,
        },
    };
    // A new database gets small pages (an existing one keeps its own: the
    // pragma does nothing once the file has pages). Each commit appends
    // every page it changed to the write-ahead log: a press changes a leaf
    // of the events table and one of its index, so the pages' size is
    // what a press costs the SD card.
    conn.execute_batch(&format!("PRAGMA page_size={PAGE_SIZE};"))
        .map_err(read_only)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
        .map_err(read_only)?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(path = %paths.db.display(), mode, "SQLite refused WAL mode");
    }
    conn.execute_batch(&format!(
        "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-{CACHE_KIB};"
    ))
    .map_err(sql)?;
    conn.execute_batch("BEGIN IMMEDIATE").map_err(read_only)?;
    let migrated = migrate(&conn).and_then(|()| conn.execute_batch("COMMIT"));
    if let Err(error) = migrated {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(read_only(error));
    }
    Ok(Store::with_connection(conn, paths.db.clone()))
}

/// Creates the schema in an empty database or migrates an older one, inside
/// the caller's transaction.
fn migrate(conn: &Connection) -> Result<(), rusqlite::Error> {
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let has_games: bool = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'games'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)?;
    if !has_games {
        conn.execute_batch(SCHEMA_V1)?;
    } else if version == 0 {
        tracing::info!("migrating the state database from schema version 0 to 1");
        add_missing_columns(conn)?;
        conn.execute_batch(MIGRATE_0_TO_1)?;
    }
    let has_instance: bool = conn
        .query_row(
            "SELECT COUNT(*) FROM meta WHERE key = 'instance'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)?;
    if !has_instance {
        let instance: [u8; 16] = rand::random();
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('instance', ?1)",
            [hex(&instance)],
        )?;
    }
    conn.execute_batch(DROP_REDUNDANT)?;
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
    ))?;
    Ok(())
}
