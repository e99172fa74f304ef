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
//! checkpoint is written once a second.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::mpsc as tokio_mpsc;

use super::{Record, Store};
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
const MAX_BATCH: usize = 256;

/// The store thread's loop. Returns when told to shut down or when every
/// sender is gone, after committing what was queued before.
pub fn run_store_thread(
    mut store: Store,
    jobs: mpsc::Receiver<StoreMsg>,
    commits: tokio_mpsc::UnboundedSender<Commit>,
    time: TimeSource,
) {
    const CHECKPOINT: Duration = Duration::from_secs(1);
    let mut last_checkpoint = std::time::Instant::now();
    loop {
        let wait = CHECKPOINT.saturating_sub(last_checkpoint.elapsed());
        let mut stop = false;
        match jobs.recv_timeout(wait) {
            Ok(StoreMsg::Running { id, running }) => {
                if let Err(error) = store.set_running(&id, running) {
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
                            for commit in commit_batch(&mut store, &batch) {
                                let _ = commits.send(commit);
                            }
                            batch.clear();
                            if let Err(error) = store.set_running(&id, running) {
                                tracing::error!(board = %id, %error, "alive checkpoint failed");
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
                    for commit in commit_batch(&mut store, &batch) {
                        // A closed channel means the timing thread is gone.
                        let _ = commits.send(commit);
                    }
                }
            }
            Ok(StoreMsg::Shutdown) | Err(mpsc::RecvTimeoutError::Disconnected) => stop = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if stop {
            if let Err(error) = store.checkpoint(time.monotonic_us(), time.wall_us()) {
                tracing::error!(%error, "final checkpoint failed");
            }
            tracing::debug!("store thread done");
            return;
        }
        if last_checkpoint.elapsed() >= CHECKPOINT {
            last_checkpoint = std::time::Instant::now();
            if let Err(error) = store.checkpoint(time.monotonic_us(), time.wall_us()) {
                tracing::error!(%error, "alive checkpoint failed");
            }
        }
    }
}

/// Writes `batch` in one transaction; returns one commit report per board.
pub fn commit_batch(store: &mut Store, batch: &[Job]) -> Vec<Commit> {
    // Without a transaction (it could not begin) each write commits on
    // its own: slower, equally safe.
    let in_transaction = match store.begin() {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, "cannot begin a transaction; committing one by one");
            false
        }
    };
    let mut boards: BTreeMap<usize, Commit> = BTreeMap::new();
    for job in batch {
        let written = match store.write(&job.id, &job.record) {
            Ok(()) => true,
            Err(error) => {
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
    if in_transaction {
        if let Err(error) = store.commit() {
            tracing::error!(%error, records = batch.len(), "could not commit the records");
            store.rollback();
            boards.values_mut().for_each(|c| c.ok = false);
        }
    }
    boards.into_values().collect()
}
