//! The commit record: a small file beside the database,
//! `chessclockd.commits`, that says how many events were committed and
//! which was the last, written and `fdatasync`ed after every committed batch.
//!
//! Why outside the database: a write-ahead log cut short, emptied or
//! overwritten is silently ignored by SQLite (it keeps the commits before
//! the damage and drops the rest), so the database alone cannot tell that
//! it lost its last events. The record can: at the next open, fewer events
//! than the record counts is damage ([`crate::control::FindingKind::EventsMissing`]).
//!
//! Format (all integers little-endian), two 64-byte slots written in turn so
//! a torn write leaves the other one intact:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `CCKDCMT1` |
//! | 8 | 8 | generation (the slot with the larger valid one is current) |
//! | 16 | 16 | instance: the database's identity (its `meta` row `instance`) |
//! | 32 | 8 | committed events in the database (all games) |
//! | 40 | 8 | game id of the last committed event (0: none) |
//! | 48 | 8 | that event's sequence number in its game |
//! | 56 | 4 | reserved, 0 |
//! | 60 | 4 | CRC-32/ISO-HDLC of bytes 0..60 |
//!
//! The database is committed first and the record second, so after a crash
//! between the two the database holds more than the record says (never
//! damage); the other way round means events were lost.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The record's file name inside the state directory.
pub const COMMITS_FILE: &str = "chessclockd.commits";

use chessclock_protocol::CRC;

const MAGIC: &[u8; 8] = b"CCKDCMT1";
const SLOT: usize = 64;

/// What one slot says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Commits {
    pub generation: u64,
    pub instance: [u8; 16],
    pub events: u64,
    /// `(game id, sequence number)` of the last committed event.
    pub last: Option<(i64, i64)>,
}

/// Reading the record found it...
#[derive(Debug, PartialEq, Eq)]
pub enum ReadCommits {
    Missing,
    /// Present but no slot is valid (wrong size, bad magic or CRC).
    Unreadable(String),
    Valid(Commits),
}

fn encode(c: &Commits) -> [u8; SLOT] {
    let mut slot = [0u8; SLOT];
    slot[0..8].copy_from_slice(MAGIC);
    slot[8..16].copy_from_slice(&c.generation.to_le_bytes());
    slot[16..32].copy_from_slice(&c.instance);
    slot[32..40].copy_from_slice(&c.events.to_le_bytes());
    let (game, seq) = c.last.unwrap_or((0, 0));
    slot[40..48].copy_from_slice(&game.to_le_bytes());
    slot[48..56].copy_from_slice(&seq.to_le_bytes());
    let crc = CRC.checksum(&slot[..60]);
    slot[60..64].copy_from_slice(&crc.to_le_bytes());
    slot
}

fn decode(slot: &[u8]) -> Option<Commits> {
    let slot: &[u8; SLOT] = slot.try_into().ok()?;
    if &slot[0..8] != MAGIC {
        return None;
    }
    let crc = u32::from_le_bytes(slot[60..64].try_into().ok()?);
    if CRC.checksum(&slot[..60]) != crc {
        return None;
    }
    let u64_at =
        |at: usize| -> Option<u64> { Some(u64::from_le_bytes(slot[at..at + 8].try_into().ok()?)) };
    let game = u64_at(40)? as i64;
    let seq = u64_at(48)? as i64;
    Some(Commits {
        generation: u64_at(8)?,
        instance: slot[16..32].try_into().ok()?,
        events: u64_at(32)?,
        last: (game != 0).then_some((game, seq)),
    })
}

/// Reads the record at `path` (without changing it).
pub fn read(path: &Path) -> ReadCommits {
    let mut bytes = Vec::new();
    match File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)) {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return ReadCommits::Missing,
        Err(error) => return ReadCommits::Unreadable(error.to_string()),
    }
    if bytes.len() != 2 * SLOT {
        return ReadCommits::Unreadable(format!(
            "{} bytes where {} were written",
            bytes.len(),
            2 * SLOT
        ));
    }
    let best = bytes
        .chunks(SLOT)
        .filter_map(decode)
        .max_by_key(|c| c.generation);
    match best {
        Some(commits) => ReadCommits::Valid(commits),
        None => ReadCommits::Unreadable("no valid slot (bad magic or checksum)".into()),
    }
}

/// The record, open for writing.
#[derive(Debug)]
pub struct CommitFile {
    file: File,
    path: PathBuf,
    current: Commits,
}

impl CommitFile {
    /// Creates or rewrites the record at `path` to say `current`, durably.
    pub fn create(path: &Path, mut current: Commits) -> std::io::Result<CommitFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)?;
        file.set_len(2 * SLOT as u64)?;
        // Both slots the same, so no older state survives in either.
        current.generation = current.generation.wrapping_add(1);
        file.write_all_at(&encode(&current), 0)?;
        file.write_all_at(&encode(&current), SLOT as u64)?;
        file.sync_all()?;
        if let Some(dir) = path.parent() {
            // The new file's directory entry, for a record created just now.
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(CommitFile {
            file,
            path: path.to_owned(),
            current,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn current(&self) -> Commits {
        self.current
    }

    /// Records `events` committed events, the last being `last`: one slot
    /// write and an `fdatasync`.
    pub fn record(&mut self, events: u64, last: Option<(i64, i64)>) -> std::io::Result<()> {
        let next = Commits {
            generation: self.current.generation.wrapping_add(1),
            instance: self.current.instance,
            events,
            last: last.or(self.current.last),
        };
        let slot = (next.generation % 2) * SLOT as u64;
        self.file.write_all_at(&encode(&next), slot)?;
        self.file.sync_data()?;
        self.current = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_round_trips_and_survives_a_torn_slot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(COMMITS_FILE);
        assert_eq!(read(&path), ReadCommits::Missing);
        let instance = [7u8; 16];
        let mut file = CommitFile::create(
            &path,
            Commits {
                instance,
                ..Commits::default()
            },
        )
        .unwrap();
        file.record(3, Some((1, 3))).unwrap();
        file.record(5, Some((2, 2))).unwrap();
        let ReadCommits::Valid(now) = read(&path) else {
            panic!("unreadable")
        };
        assert_eq!(
            (now.events, now.last, now.instance),
            (5, Some((2, 2)), instance)
        );
        // Tear the newest slot: the previous one is used.
        let newest = (now.generation % 2) * SLOT as u64;
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(&[0xFF; 10], newest + 20).unwrap();
        let ReadCommits::Valid(then) = read(&path) else {
            panic!("unreadable")
        };
        assert_eq!((then.events, then.last), (3, Some((1, 3))));
        // Both torn, or the wrong size: unreadable, never a number.
        f.write_all_at(&[0xFF; 10], (1 - now.generation % 2) * SLOT as u64 + 20)
            .unwrap();
        assert!(matches!(read(&path), ReadCommits::Unreadable(_)));
        std::fs::write(&path, b"short").unwrap();
        assert!(matches!(read(&path), ReadCommits::Unreadable(_)));
    }
}
