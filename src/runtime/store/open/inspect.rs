//! The read-only inspection of a state before anything writes to it (the
//! file header, the write-ahead log's header, SQLite's `integrity_check`,
//! every game's event sequence, the commit record), and the copies of the
//! damaged files kept as evidence. Promises: see the parent module.

use super::*;

/// What the read-only inspection found.
#[derive(Default)]
pub(super) struct Inspection {
    pub(super) findings: Vec<StateFinding>,
    /// The database cannot be used: move it aside and start afresh.
    pub(super) replace: bool,
}

impl Inspection {
    fn find(&mut self, kind: FindingKind, message: String, board: Option<String>) {
        self.findings.push(StateFinding {
            kind,
            message,
            board,
        });
    }
}

fn len_of(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

fn head_of(path: &Path, n: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(n);
    if let Ok(file) = File::open(path) {
        let _ = file.take(n as u64).read_to_end(&mut bytes);
    }
    bytes
}

/// SQLite's WAL header magic (big-endian), either byte order of checksums.
fn wal_header_valid(head: &[u8]) -> bool {
    matches!(head.get(..4), Some([0x37, 0x7f, 0x06, 0x82 | 0x83])) && head.len() >= 32
}

/// Checks the state without writing anything (see the module docs).
pub(super) fn inspect(paths: &Paths, record: &ReadCommits) -> Result<Inspection, StoreError> {
    let mut found = Inspection::default();
    let db_len = len_of(&paths.db);
    let wal_len = len_of(&paths.wal).unwrap_or(0);
    if wal_len > 0 && !wal_header_valid(&head_of(&paths.wal, 32)) {
        found.find(
            FindingKind::WalUnreadable,
            format!(
                "the write-ahead log {} ({wal_len} bytes) has no valid WAL header: SQLite \
                 ignores it, so the commits it held are lost",
                paths.wal.display()
            ),
            None,
        );
    }
    let committed = match record {
        ReadCommits::Valid(c) => Some(*c),
        _ => None,
    };
    let empty = db_len.unwrap_or(0) == 0;
    if empty {
        if let Some(c) = committed.filter(|c| c.events > 0) {
            found.find(
                FindingKind::DatabaseEmptied,
                format!(
                    "the database {} is {} but {} events had been committed to it",
                    paths.db.display(),
                    if db_len.is_none() {
                        "missing"
                    } else {
                        "empty (0 bytes)"
                    },
                    c.events
                ),
                None,
            );
        }
        if db_len.is_none() && wal_len > 0 {
            // A log without its database: SQLite would replay it into a
            // new, empty file and make half a database of it.
            if !found
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::DatabaseEmptied)
            {
                found.find(
                    FindingKind::DatabaseEmptied,
                    format!(
                        "the database {} is missing but its write-ahead log ({wal_len} bytes) \
                         is there; a fresh database is started",
                        paths.db.display()
                    ),
                    None,
                );
            }
            found.replace = true;
            return Ok(found);
        }
        if db_len.is_none() || wal_len == 0 {
            return Ok(found);
        }
    } else {
        let head = head_of(&paths.db, 100);
        if head.len() < 100 || &head[..16] != b"SQLite format 3\0" {
            found.find(
                FindingKind::NotADatabase,
                format!(
                    "the database {} is not a SQLite database ({} bytes): no game can be \
                     restored from it; a fresh database is started",
                    paths.db.display(),
                    db_len.unwrap_or(0)
                ),
                None,
            );
            found.replace = true;
            return Ok(found);
        }
        let app = i32::from_be_bytes([head[68], head[69], head[70], head[71]]);
        if app != 0 && app != APPLICATION_ID {
            return Err(StoreError::Foreign {
                path: paths.db.clone(),
                reason: format!(
                    "its application id is 0x{app:08x}, chessclockd's is 0x{APPLICATION_ID:08x}"
                ),
            });
        }
    }
    let conn = match Connection::open_with_flags(
        &paths.db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(conn) => conn,
        Err(error) => return unreadable(paths, found, error),
    };
    let _ = conn.busy_timeout(Duration::from_secs(2));
    match inspect_sql(paths, &conn, committed, record, &mut found) {
        Ok(()) => Ok(found),
        Err(Inspect::Refuse(error)) => Err(error),
        Err(Inspect::Sql(error)) => unreadable(paths, found, error),
    }
}

enum Inspect {
    Refuse(StoreError),
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Inspect {
    fn from(error: rusqlite::Error) -> Inspect {
        Inspect::Sql(error)
    }
}

/// A database SQLite cannot read: corrupt (replace it), or not readable by
/// us at all (the directory is unusable).
fn unreadable(
    paths: &Paths,
    mut found: Inspection,
    error: rusqlite::Error,
) -> Result<Inspection, StoreError> {
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => {
            found.find(
                FindingKind::Corrupt,
                format!(
                    "the database {} cannot be read ({error}): no game can be restored from \
                     it; a fresh database is started",
                    paths.db.display()
                ),
                None,
            );
            found.replace = true;
            Ok(found)
        }
        _ => Err(StoreError::Unusable {
            path: paths.db.clone(),
            reason: format!("cannot read it: {error}"),
        }),
    }
}

fn inspect_sql(
    paths: &Paths,
    conn: &Connection,
    committed: Option<Commits>,
    record: &ReadCommits,
    found: &mut Inspection,
) -> Result<(), Inspect> {
    let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: BTreeSet<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    let foreign = |reason: String| {
        Inspect::Refuse(StoreError::Foreign {
            path: paths.db.clone(),
            reason,
        })
    };
    if app != 0 && app != APPLICATION_ID {
        return Err(foreign(format!(
            "its application id is 0x{app:08x}, chessclockd's is 0x{APPLICATION_ID:08x}"
        )));
    }
    let others: Vec<&String> = tables
        .iter()
        .filter(|t| !OUR_TABLES.contains(&t.as_str()))
        .collect();
    if app == 0 && !tables.is_empty() {
        if !others.is_empty() || !tables.contains("games") || !tables.contains("events") {
            return Err(foreign(format!(
                "it holds the tables {} and no chessclockd application id",
                tables.iter().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
        if version != 0 {
            return Err(foreign(format!(
                "its user_version is {version} and it has no chessclockd application id"
            )));
        }
    }
    if version > SCHEMA_VERSION {
        return Err(Inspect::Refuse(StoreError::TooNew {
            path: paths.db.clone(),
            version,
        }));
    }
    let check: Vec<String> = conn
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    if check.first().map(String::as_str) != Some("ok") {
        found.find(
            FindingKind::Corrupt,
            format!(
                "the database {} fails its integrity check ({}): no game can be restored \
                 from it; a fresh database is started",
                paths.db.display(),
                check.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
            ),
            None,
        );
        found.replace = true;
        return Ok(());
    }
    if !tables.contains("games") || !tables.contains("events") {
        let emptied = found
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::DatabaseEmptied);
        if committed.is_some_and(|c| c.events > 0) && !emptied {
            found.find(
                FindingKind::DatabaseEmptied,
                format!(
                    "the database {} holds no games although {} events had been committed to it",
                    paths.db.display(),
                    committed.map_or(0, |c| c.events)
                ),
                None,
            );
        }
        return Ok(());
    }
    let total: i64 = conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))?;
    let boards: HashMap<i64, String> = conn
        .prepare("SELECT id, board FROM games")?
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<_, _>>()?;
    let board_of = |game: i64| boards.get(&game).cloned();
    // Events whose game row is gone cannot be restored (no board, no
    // control): a whole game lost, never silently.
    let orphans: Vec<(i64, i64)> = conn
        .prepare(
            "SELECT game, COUNT(*) FROM events WHERE game NOT IN (SELECT id FROM games)
             GROUP BY game ORDER BY game",
        )?
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?
        .collect::<Result<_, _>>()?;
    for (game, count) in orphans {
        found.find(
            FindingKind::EventsMissing,
            format!(
                "game {game}: its {count} events are in the database but the game itself is \
                 gone (its row was removed): they cannot be restored"
            ),
            None,
        );
    }
    let mut last_seq: HashMap<i64, i64> = HashMap::new();
    if version >= 1 {
        let mut statement = conn.prepare(
            "SELECT game, COUNT(*), COUNT(DISTINCT seq), MIN(seq), MAX(seq),
                    SUM(seq IS NULL) FROM events GROUP BY game ORDER BY game",
        )?;
        let rows = statement
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        // The games restored are each board's latest: an older game's
        // damage does not change what is played now.
        let latest: BTreeSet<i64> = conn
            .prepare("SELECT MAX(id) FROM games GROUP BY board")?
            .query_map([], |r| r.get::<_, i64>(0))?
            .collect::<Result<_, _>>()?;
        for (game, count, distinct, min, max, nulls) in rows {
            let (min, max) = (min.unwrap_or(0), max.unwrap_or(0));
            last_seq.insert(game, max);
            if !latest.contains(&game) {
                continue;
            }
            if nulls > 0 || min != 1 || max != count || distinct != count {
                let mut why = Vec::new();
                if max > distinct {
                    why.push(format!(
                        "{} of the numbers 1 to {max} are missing",
                        max - distinct
                    ));
                }
                if count > distinct {
                    why.push(format!("{} numbers repeat", count - distinct));
                }
                if nulls > 0 {
                    why.push(format!("{nulls} events have no number"));
                }
                found.find(
                    FindingKind::SequenceBroken,
                    format!(
                        "game {game}: its event sequence is broken ({}): events were removed \
                         or altered; the game is restored from what is there",
                        why.join(", ")
                    ),
                    board_of(game),
                );
            }
        }
    }
    let instance: Option<String> = if tables.contains("meta") {
        conn.query_row("SELECT value FROM meta WHERE key = 'instance'", [], |r| {
            r.get(0)
        })
        .optional()?
    } else {
        None
    };
    match record {
        ReadCommits::Valid(c) => {
            let ours = instance.as_deref().and_then(unhex16);
            if version >= 1 && ours.is_some_and(|i| i != c.instance) {
                found.find(
                    FindingKind::CommitRecordUnusable,
                    format!(
                        "the commit record {} belongs to another database (instance {}, this \
                         one is {}): a loss of the last events cannot be ruled out",
                        paths.commits.display(),
                        hex(&c.instance),
                        instance.unwrap_or_default()
                    ),
                    None,
                );
            } else if c.events > u64::try_from(total).unwrap_or(0) {
                let missing = c.events - u64::try_from(total).unwrap_or(0);
                found.find(
                    FindingKind::EventsMissing,
                    format!(
                        "{missing} of the {} committed events are missing from the database \
                         (the write-ahead log was cut or lost, or rows were removed); what is \
                         left is restored, marked",
                        c.events
                    ),
                    None,
                );
                if let Some((game, seq)) = c.last {
                    let present = last_seq.get(&game).copied().unwrap_or(0);
                    if present < seq {
                        found.find(
                            FindingKind::EventsMissing,
                            format!(
                                "game {game}: its last committed event was number {seq}, the \
                                 database ends at number {present}"
                            ),
                            board_of(game),
                        );
                    }
                }
            }
        }
        ReadCommits::Unreadable(why) => found.find(
            FindingKind::CommitRecordUnusable,
            format!(
                "the commit record {} cannot be read ({why}): a loss of the last events cannot \
                 be ruled out",
                paths.commits.display()
            ),
            None,
        ),
        ReadCommits::Missing => {
            if version >= 1 && total > 0 {
                found.find(
                    FindingKind::CommitRecordUnusable,
                    format!(
                        "the commit record {} is missing although the database holds {total} \
                         events: a loss of the last events cannot be ruled out",
                        paths.commits.display()
                    ),
                    None,
                );
            }
        }
    }
    Ok(())
}

/// Copies (or, when `replace`, moves) the state files into a new
/// `damaged-<unix seconds>` directory, with the findings beside them.
pub(super) fn keep_evidence(
    paths: &Paths,
    health: &StateHealth,
    replace: bool,
) -> Result<PathBuf, StoreError> {
    let stamp = wall_now_us() / 1_000_000;
    let mut dir = paths.dir.join(format!("damaged-{stamp}"));
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = paths.dir.join(format!("damaged-{stamp}-{n}"));
    }
    let io = |path: &Path, source: std::io::Error| StoreError::MoveAside {
        path: path.to_owned(),
        source,
    };
    std::fs::create_dir(&dir).map_err(|e| io(&dir, e))?;
    for from in [&paths.db, &paths.wal, &paths.shm, &paths.commits] {
        if !from.exists() {
            continue;
        }
        let Some(name) = from.file_name() else {
            continue;
        };
        let to = dir.join(name);
        // The commit record is always copied: it is rewritten afresh.
        if replace && *from != paths.commits {
            std::fs::rename(from, &to).map_err(|e| io(from, e))?;
        } else {
            std::fs::copy(from, &to).map_err(|e| io(from, e))?;
        }
    }
    let mut text = String::from("chessclockd found this state damaged when it started:\n");
    for finding in &health.findings {
        text.push_str(&format!("- {:?}: {}\n", finding.kind, finding.message));
    }
    std::fs::write(dir.join("findings.txt"), text).map_err(|e| io(&dir, e))?;
    Ok(dir)
}
