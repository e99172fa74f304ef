//! The store thread: commits the board cores' records in groups and says
//! which are committed. It knows nothing of devices, replies or D-Bus: what
//! waits for a commit waits in the board core, which `Committed(seq)`
//! releases.
//!
//! Promises: records are written in the order they arrive, several at a
//! time in one transaction (group commit: one fsync for all of them); after
//! each transaction every board with a record in it is told the highest
//! sequence number now committed (or that the transaction failed). A
//! record that fails alone (a board without a game) fails its board's
//! commit report, not the others'. While a clock runs the game's "alive"
//! checkpoint is written once a second. A batch the disk refuses (full,
//! read-only, failing) is kept and written again in order
//! ([`super::saver`]).

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::mpsc as tokio_mpsc;

use rusqlite::ErrorCode;

use super::saver::Saver;
use super::{Record, Store, StoreError};
use crate::control::{SaveFailure, SharedHealth};
use crate::runtime::time::TimeSource;

/// A record for the store thread.
#[derive(Debug)]
pub struct Job {
    /// The board's index in the runtime (echoed in the [`Commit`]).
    pub board: usize,
    /// The board's id (the database's key).
    pub id: String,
    pub seq: u64,
    pub record: Record,
}

/// Messages for the store thread.
#[derive(Debug)]
pub enum StoreMsg {
    Job(Box<Job>),
    /// Whether board `id`'s clock runs (no record: it decides whether the
    /// game's alive checkpoint is kept).
    Running {
        id: String,
        running: bool,
    },
    /// Commit what is queued and stop.
    Shutdown,
}

/// The store's answer: board `board`'s records up to `seq` are committed
/// (`ok`), or could not be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commit {
    pub board: usize,
    pub seq: u64,
    pub ok: bool,
}

/// Most records committed in one transaction.
pub const MAX_BATCH: usize = 256;

/// Why a batch was not committed: the disk, not the records (they are
/// kept and written again).
#[derive(Clone, Copy, Debug)]
pub struct BatchFailure {
    pub reason: SaveFailure,
}

/// Whether `error` is the disk's (worth waiting for) rather than the
/// record's own (a board without a game: it fails alone).
fn disk_failure(error: &StoreError) -> Option<SaveFailure> {
    let source = match error {
        StoreError::Sql { source, .. } | StoreError::ReadOnly { source, .. } => source,
        _ => return None,
    };
    match source.sqlite_error_code()? {
        ErrorCode::DiskFull => Some(SaveFailure::NoSpace),
        ErrorCode::ReadOnly => Some(SaveFailure::ReadOnly),
        ErrorCode::SystemIoFailure
        | ErrorCode::CannotOpen
        | ErrorCode::DatabaseBusy
        | ErrorCode::DatabaseLocked
        | ErrorCode::OutOfMemory => Some(SaveFailure::IoError),
        _ => None,
    }
}

/// The store thread's loop. Returns when told to shut down or when every
/// sender is gone, after committing what was queued before.
pub fn run_store_thread(
    store: Store,
    jobs: mpsc::Receiver<StoreMsg>,
    commits: tokio_mpsc::UnboundedSender<Commit>,
    time: TimeSource,
    health: SharedHealth,
) {
    const CHECKPOINT: Duration = Duration::from_secs(1);
    let dir = store.dir();
    let wall = {
        let time = time.clone();
        Box::new(move || time.wall_us() / 1000)
    };
    let mut saver = Saver::new(store, dir, health, wall);
    let mut last_checkpoint = std::time::Instant::now();
    let report = |list: Vec<Commit>| {
        for commit in list {
            // A closed channel means the timing thread is gone.
            let _ = commits.send(commit);
        }
    };
    loop {
        let mut wait = CHECKPOINT.saturating_sub(last_checkpoint.elapsed());
        if let Some(due) = saver.due() {
            wait = wait.min(due.saturating_duration_since(std::time::Instant::now()));
        }
        let mut stop = false;
        match jobs.recv_timeout(wait) {
            Ok(StoreMsg::Running { id, running }) => {
                if let Err(error) = saver.store.set_running(&id, running) {
                    tracing::error!(board = %id, %error, "alive checkpoint failed");
                }
            }
            Ok(StoreMsg::Job(job)) => {
                let mut batch = vec![*job];
                while batch.len() < MAX_BATCH {
                    match jobs.try_recv() {
                        Ok(StoreMsg::Job(job)) => batch.push(*job),
                        Ok(StoreMsg::Running { id, running }) => {
                            // Keep the order: what came before is written first.
                            report(saver.save(std::mem::take(&mut batch)));
                            if saver.may_checkpoint() {
                                if let Err(error) = saver.store.set_running(&id, running) {
                                    tracing::error!(board = %id, %error, "alive checkpoint failed");
                                }
                            }
                        }
                        Ok(StoreMsg::Shutdown) => {
                            stop = true;
                            break;
                        }
                        // Gone senders are seen by the next recv.
                        Err(_) => break,
                    }
                }
                if !batch.is_empty() {
                    report(saver.save(batch));
                }
            }
            Ok(StoreMsg::Shutdown) | Err(mpsc::RecvTimeoutError::Disconnected) => stop = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        saver.tick();
        if stop {
            saver.finish();
            if saver.may_checkpoint() {
                if let Err(error) = saver.store.checkpoint(time.monotonic_us(), time.wall_us()) {
                    tracing::error!(%error, "final checkpoint failed");
                }
            }
            tracing::debug!("store thread done");
            return;
        }
        if last_checkpoint.elapsed() >= CHECKPOINT {
            last_checkpoint = std::time::Instant::now();
            if saver.may_checkpoint() {
                if let Err(error) = saver.store.checkpoint(time.monotonic_us(), time.wall_us()) {
                    tracing::warn!(%error, "alive checkpoint failed");
                }
            }
        }
    }
}

/// Writes `batch` in one transaction; returns one commit report per board,
/// or why the disk took none of it (then nothing of it is written).
pub fn commit_batch(store: &mut Store, batch: &[Job]) -> Result<Vec<Commit>, BatchFailure> {
    // Without a transaction (it could not begin) each write would commit
    // on its own, and a failure halfway would leave half the batch in:
    // the batch waits instead.
    if let Err(error) = store.begin() {
        let reason = disk_failure(&error).unwrap_or(SaveFailure::IoError);
        tracing::warn!(%error, "cannot begin a transaction");
        return Err(BatchFailure { reason });
    }
    let mut boards: BTreeMap<usize, Commit> = BTreeMap::new();
    for job in batch {
        let written = match store.write(&job.id, &job.record) {
            Ok(()) => true,
            Err(error) => {
                if let Some(reason) = disk_failure(&error) {
                    tracing::warn!(board = %job.id, %error, "could not write a record");
                    store.rollback();
                    return Err(BatchFailure { reason });
                }
                tracing::error!(board = %job.id, %error, "could not write a record");
                false
            }
        };
        let commit = boards.entry(job.board).or_insert(Commit {
            board: job.board,
            seq: job.seq,
            ok: true,
        });
        commit.seq = commit.seq.max(job.seq);
        commit.ok &= written;
    }
    if let Err(error) = store.commit() {
        tracing::warn!(%error, records = batch.len(), "could not commit the records");
        store.rollback();
        let reason = disk_failure(&error).unwrap_or(SaveFailure::IoError);
        return Err(BatchFailure { reason });
    }
    Ok(boards.into_values().collect())
}
