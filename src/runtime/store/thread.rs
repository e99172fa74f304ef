//! The store thread: commits queued jobs in groups, then reports them.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc as tokio_mpsc, oneshot};

use super::{Record, Store};
use crate::clock::{monotonic_now_us, wall_now_us};
use crate::control::{BoardEvent, ControlError, Reply};
use crate::devices::{DeviceCommand, DeviceKey};

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
        if let Err(error) = crate::runtime::eboard::write_pgn(&dir, &file, &text) {
            tracing::warn!(board = %job.board, dir = %dir.display(), %error, "cannot write the live PGN");
        }
    }
}
