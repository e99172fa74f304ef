//! Saving through a full disk, a read-only remount or I/O errors.
//!
//! Promises:
//! * records are saved in the order they came, whatever fails in between:
//!   once a commit failed, every later record waits behind the failed ones
//!   ([`Saver::waiting`]) and they are written again, oldest first, once a
//!   second until they go in;
//! * the game goes on: a record that waits is reported to its board as
//!   kept ([`Commit`] `ok`), so its ACK, reply and events go out and the
//!   units never fill their queues and refuse a press. What waits in memory
//!   is lost by a crash, and the health says so while it lasts;
//! * a full disk first costs nothing: the store keeps a reserve file
//!   ([`RESERVE_FILE`], up to [`RESERVE_MAX_BYTES`]) and gives it back at the
//!   first commit that finds no space, so records keep being saved while
//!   the arbiter makes room;
//! * the first failed commit is loud at once: [`SavingTrouble`] in the
//!   shared health (every arbiter surface reads it) and an ERROR in the
//!   journal; when everything waiting is saved and the reserve is back the
//!   trouble clears (INFO).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::thread::{commit_batch, BatchFailure, Commit, Job, MAX_BATCH};
use super::Store;
use crate::control::{SaveFailure, SavingTrouble, SharedHealth};

/// The reserve's file name inside the state directory.
pub const RESERVE_FILE: &str = "chessclockd.reserve";
/// The largest reserve: 16 MiB is about 40,000 presses (a press is one
/// event row of 200-300 bytes, and the write-ahead log needs up to 4 MiB
/// before its next checkpoint), some four hours of play for 256 boards and
/// days for one. On a small file system the reserve is a quarter of the
/// free space when the store starts.
pub const RESERVE_MAX_BYTES: u64 = 16 << 20;
/// How often records that could not be saved are tried again.
pub const RETRY_EVERY: Duration = Duration::from_secs(1);

/// The space kept aside for a full disk.
#[derive(Debug)]
pub struct Reserve {
    path: PathBuf,
    /// The size wanted (0: none, a store in memory).
    target: u64,
    /// Whether the file holds its space now.
    held: bool,
}

impl Reserve {
    /// No reserve (a store in memory).
    pub fn none() -> Reserve {
        Reserve {
            path: PathBuf::new(),
            target: 0,
            held: false,
        }
    }

    /// Takes the reserve in `dir`: [`RESERVE_MAX_BYTES`], or a quarter of
    /// the free space when that is less.
    pub fn take(dir: &Path) -> Reserve {
        let path = dir.join(RESERVE_FILE);
        let existing = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let free = free_bytes(dir).unwrap_or(0).saturating_add(existing);
        let target = (free / 4).min(RESERVE_MAX_BYTES) / 4096 * 4096;
        let mut reserve = Reserve {
            path,
            target,
            held: false,
        };
        reserve.fill();
        if reserve.held {
            tracing::info!(path = %reserve.path.display(), bytes = reserve.target,
                "space reserve taken for a full disk");
        } else {
            tracing::warn!(path = %reserve.path.display(), bytes = reserve.target,
                "no space reserve could be taken: a full disk stops the saving at once");
        }
        reserve
    }

    /// Allocates the file's blocks (a sparse file would give nothing back).
    fn fill(&mut self) {
        if self.target == 0 {
            return;
        }
        let result = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&self.path)
            .and_then(|file| {
                nix::fcntl::posix_fallocate(&file, 0, self.target as i64)
                    .map_err(std::io::Error::from)?;
                file.sync_all()
            });
        match result {
            Ok(()) => self.held = true,
            Err(error) => {
                tracing::debug!(path = %self.path.display(), %error, "cannot take the space reserve");
                let _ = std::fs::remove_file(&self.path);
                self.held = false;
            }
        }
    }

    /// Gives the space back; `true` when there was some to give.
    fn release(&mut self) -> bool {
        if !self.held {
            return false;
        }
        self.held = false;
        match std::fs::remove_file(&self.path) {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(path = %self.path.display(), %error, "cannot give the space reserve back");
                false
            }
        }
    }

    /// Takes the reserve again when the file system has room for it twice
    /// over (so that taking it does not fill the disk at once).
    fn restore(&mut self, dir: &Path) -> bool {
        if self.held || self.target == 0 {
            return self.held || self.target == 0;
        }
        if free_bytes(dir).is_some_and(|free| free >= self.target.saturating_mul(2)) {
            self.fill();
        }
        self.held
    }

    pub fn bytes(&self) -> u64 {
        if self.held {
            self.target
        } else {
            0
        }
    }
}

/// Bytes an unprivileged process may still write in `dir`'s file system.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let stat = nix::sys::statvfs::statvfs(dir).ok()?;
    Some((stat.blocks_available() as u64).saturating_mul(stat.fragment_size() as u64))
}

/// The store with its queue of records that wait for the disk.
pub struct Saver {
    pub store: Store,
    dir: Option<PathBuf>,
    reserve: Reserve,
    health: SharedHealth,
    /// Records not saved yet, in order (all were reported kept).
    waiting: VecDeque<Job>,
    /// The trouble being shown, if any.
    trouble: Option<SavingTrouble>,
    next_retry: Instant,
    /// [`RETRY_EVERY`] (tests shorten it).
    retry_every: Duration,
    wall_ms: Box<dyn Fn() -> i64 + Send>,
}

impl Saver {
    /// `dir`: the state directory (`None` for a store in memory, which
    /// keeps no reserve).
    pub fn new(
        store: Store,
        dir: Option<PathBuf>,
        health: SharedHealth,
        wall_ms: Box<dyn Fn() -> i64 + Send>,
    ) -> Saver {
        let reserve = match &dir {
            Some(dir) => Reserve::take(dir),
            None => Reserve::none(),
        };
        Saver {
            store,
            dir,
            reserve,
            health,
            waiting: VecDeque::new(),
            trouble: None,
            next_retry: Instant::now(),
            retry_every: RETRY_EVERY,
            wall_ms,
        }
    }

    /// (Tests.) Tries again at every [`Saver::tick`].
    #[cfg(test)]
    pub fn retry_at_every_tick(&mut self) {
        self.retry_every = Duration::ZERO;
    }

    /// (Tests.) Whether the reserve holds its space.
    #[cfg(test)]
    pub fn reserve_bytes(&self) -> u64 {
        self.reserve.bytes()
    }

    /// Whether records wait for the disk.
    pub fn stalled(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// When [`Saver::tick`] has work: the next retry, or the next look for
    /// the space to take the reserve back.
    pub fn due(&self) -> Option<Instant> {
        self.trouble.as_ref().map(|_| self.next_retry)
    }

    /// Saves `batch` (in order, behind whatever waits); returns what to
    /// report to the boards.
    pub fn save(&mut self, batch: Vec<Job>) -> Vec<Commit> {
        if !self.waiting.is_empty() {
            // Behind the records already waiting: kept now, saved in turn.
            let kept = kept(&batch);
            self.waiting.extend(batch);
            if Instant::now() >= self.next_retry {
                self.retry();
            } else {
                self.show();
            }
            return kept;
        }
        match commit_batch(&mut self.store, &batch) {
            Ok(commits) => commits,
            Err(failure) => {
                let failure = self.classify(failure);
                if failure == SaveFailure::NoSpace && self.reserve.release() {
                    tracing::error!(
                        "the state's disk is full: the space reserve was given back and the \
                         records are saved into it; make room on the state's file system"
                    );
                    self.begin_trouble(failure);
                    if let Ok(commits) = commit_batch(&mut self.store, &batch) {
                        self.show();
                        return commits;
                    }
                }
                self.begin_trouble(failure);
                let kept = kept(&batch);
                self.waiting.extend(batch);
                self.next_retry = Instant::now() + self.retry_every;
                tracing::error!(
                    reason = failure.words(),
                    waiting = self.waiting.len(),
                    "not saving: the records wait in memory, in order, and are saved as soon as \
                     the state can be written (a crash before that loses them)"
                );
                self.show();
                kept
            }
        }
    }

    /// Once a second while in trouble: saves what waits, takes the reserve
    /// back when there is room, clears the trouble when all is well.
    pub fn tick(&mut self) {
        if self.trouble.is_some() && Instant::now() >= self.next_retry {
            self.retry();
        }
    }

    /// Whether the alive checkpoint may be written (not while records
    /// wait: it would fail as they do).
    pub fn may_checkpoint(&self) -> bool {
        self.waiting.is_empty()
    }

    /// At shutdown: one last try for what waits.
    pub fn finish(&mut self) {
        if !self.waiting.is_empty() {
            self.retry();
        }
        if !self.waiting.is_empty() {
            tracing::error!(
                records = self.waiting.len(),
                "stopping with records that could not be saved: they are lost"
            );
        }
    }

    fn retry(&mut self) {
        self.next_retry = Instant::now() + self.retry_every;
        while !self.waiting.is_empty() {
            let n = self.waiting.len().min(MAX_BATCH);
            let chunk = &self.waiting.make_contiguous()[..n];
            match commit_batch(&mut self.store, chunk) {
                Ok(commits) => {
                    for commit in commits.iter().filter(|c| !c.ok) {
                        tracing::error!(
                            board = commit.board,
                            seq = commit.seq,
                            "a kept record could not be saved at all"
                        );
                    }
                    self.waiting.drain(..n);
                }
                Err(failure) => {
                    let failure = self.classify(failure);
                    if failure == SaveFailure::NoSpace && self.reserve.release() {
                        continue;
                    }
                    if let Some(trouble) = &mut self.trouble {
                        trouble.reason = failure;
                    }
                    self.show();
                    return;
                }
            }
        }
        // Everything is saved: the trouble ends once the reserve is back.
        let restored = match &self.dir {
            Some(dir) => self.reserve.restore(dir),
            None => true,
        };
        if restored {
            if self.trouble.take().is_some() {
                tracing::info!(
                    reserve = self.reserve.bytes(),
                    "the state is saved again: every waiting record is in, the reserve is back"
                );
            }
            self.health.set_saving(None);
        } else {
            self.show();
        }
    }

    fn classify(&self, failure: BatchFailure) -> SaveFailure {
        let reason = failure.reason;
        // Some file systems say "I/O error" for a full disk.
        if reason == SaveFailure::IoError
            && self
                .dir
                .as_deref()
                .and_then(free_bytes)
                .is_some_and(|free| free < 64 * 1024)
        {
            return SaveFailure::NoSpace;
        }
        reason
    }

    fn begin_trouble(&mut self, reason: SaveFailure) {
        if self.trouble.is_none() {
            self.trouble = Some(SavingTrouble {
                reason,
                saving: true,
                waiting_records: 0,
                reserve_left_bytes: 0,
                since_wall_ms: (self.wall_ms)(),
                message: String::new(),
            });
            self.next_retry = Instant::now() + self.retry_every;
        } else if let Some(trouble) = &mut self.trouble {
            trouble.reason = reason;
        }
    }

    /// Publishes the trouble as it is now.
    fn show(&mut self) {
        let Some(trouble) = &mut self.trouble else {
            return;
        };
        let place = self
            .dir
            .as_deref()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        trouble.waiting_records = self.waiting.len() as u64;
        trouble.saving = self.waiting.is_empty();
        trouble.reserve_left_bytes = if trouble.saving {
            self.dir.as_deref().and_then(free_bytes).unwrap_or(0)
        } else {
            0
        };
        trouble.message = if trouble.saving {
            format!(
                "disk full (no space): saving into the reserve, {} KiB left; make room in {place}",
                trouble.reserve_left_bytes / 1024
            )
        } else {
            format!(
                "not saving: {}; {} records wait in memory and are saved once the state can be \
                 written (a crash before that loses them); check {place}",
                trouble.reason.words(),
                trouble.waiting_records
            )
        };
        self.health.set_saving(Some(trouble.clone()));
    }
}

/// What to tell the boards of records that wait: kept.
fn kept(batch: &[Job]) -> Vec<Commit> {
    let mut commits: Vec<Commit> = Vec::new();
    for job in batch {
        match commits.iter_mut().find(|c| c.board == job.board) {
            Some(commit) => commit.seq = commit.seq.max(job.seq),
            None => commits.push(Commit {
                board: job.board,
                seq: job.seq,
                ok: true,
            }),
        }
    }
    commits
}
