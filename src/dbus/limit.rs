//! How much reading a caller may ask for: token buckets, per caller and for
//! everyone together, counted in bytes of the answers (a state is about a
//! kilobyte; the history of a 5,000-event game about 1.7 MB).
//!
//! Reads never reach the timing thread (they are answered from the
//! published views), but rendering a long history takes milliseconds of
//! CPU: without a bound, a few local users reading in a loop would keep a
//! core of the Pi busy and slow down the arbiter's own commands. Reading
//! stays open to every local user; only the rate is bounded.
//!
//! Pure: instants are parameters (monotonic µs).

use std::collections::HashMap;

use crate::engine::{Micros, SECOND};

/// One bucket: `rate` bytes per second, holding at most `burst`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Micros,
}

/// The limits of [`ReadLimiter`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Bytes per second one caller may read (sustained).
    pub per_caller: f64,
    /// Bytes one caller may read at once.
    pub per_caller_burst: f64,
    /// Bytes per second all callers together may read.
    pub total: f64,
    pub total_burst: f64,
    /// Callers remembered at most (the oldest are forgotten).
    pub callers: usize,
}

impl Default for Limits {
    /// About two full histories of a 5,000-event game per second per
    /// caller, twelve for everyone (measured: rendering one takes about
    /// 5 ms, so at most a sixth of a core); thousands of state reads.
    fn default() -> Self {
        Limits {
            per_caller: 4_000_000.0,
            per_caller_burst: 8_000_000.0,
            total: 20_000_000.0,
            total_burst: 40_000_000.0,
            callers: 1_024,
        }
    }
}

/// See the module docs.
#[derive(Debug)]
pub struct ReadLimiter {
    limits: Limits,
    callers: HashMap<String, Bucket>,
    total: Bucket,
}

impl ReadLimiter {
    pub fn new(limits: Limits) -> ReadLimiter {
        ReadLimiter {
            limits,
            callers: HashMap::new(),
            total: Bucket {
                tokens: limits.total_burst,
                at: Micros::MIN,
            },
        }
    }

    /// Whether `caller` may read about `bytes` at `now` (the estimate is
    /// taken at once); when not, how long to wait (µs). A read larger than a
    /// burst is allowed once the bucket is full (it then runs into debt), so
    /// no read is impossible.
    pub fn admit(&mut self, caller: &str, bytes: u64, now: Micros) -> Result<(), Micros> {
        let rows = bytes.max(1) as f64;
        let limits = self.limits;
        if !self.callers.contains_key(caller) && self.callers.len() >= limits.callers {
            // Forget the fullest bucket: it belongs to a caller that has
            // not read for a while.
            if let Some(oldest) = self
                .callers
                .iter()
                .min_by_key(|(_, bucket)| bucket.at)
                .map(|(name, _)| name.clone())
            {
                self.callers.remove(&oldest);
            }
        }
        let mine = self.callers.entry(caller.to_owned()).or_insert(Bucket {
            tokens: limits.per_caller_burst,
            at: now,
        });
        refill(mine, now, limits.per_caller, limits.per_caller_burst);
        refill(&mut self.total, now, limits.total, limits.total_burst);
        let wait = |bucket: &Bucket, rate: f64, burst: f64| -> Option<Micros> {
            let need = rows.min(burst);
            (bucket.tokens < need)
                .then(|| (((need - bucket.tokens) / rate) * SECOND as f64).ceil() as Micros)
        };
        let wait_mine = wait(mine, limits.per_caller, limits.per_caller_burst);
        let wait_total = wait(&self.total, limits.total, limits.total_burst);
        match (wait_mine, wait_total) {
            (None, None) => {
                mine.tokens -= rows;
                self.total.tokens -= rows;
                Ok(())
            }
            (a, b) => Err(a.unwrap_or(0).max(b.unwrap_or(0)).max(1)),
        }
    }
}

impl ReadLimiter {
    /// The answer turned out `extra` bytes larger than admitted (it may be
    /// negative): the caller's and everyone's buckets carry the difference.
    pub fn settle(&mut self, caller: &str, extra: i64) {
        if let Some(mine) = self.callers.get_mut(caller) {
            mine.tokens -= extra as f64;
        }
        self.total.tokens -= extra as f64;
    }
}

fn refill(bucket: &mut Bucket, now: Micros, rate: f64, burst: f64) {
    if bucket.at == Micros::MIN {
        bucket.at = now;
        return;
    }
    let elapsed = now.saturating_sub(bucket.at).max(0) as f64 / SECOND as f64;
    bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
    bucket.at = bucket.at.max(now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MS;

    fn small() -> ReadLimiter {
        ReadLimiter::new(Limits {
            per_caller: 1_000.0,
            per_caller_burst: 2_000.0,
            total: 3_000.0,
            total_burst: 3_000.0,
            callers: 4,
        })
    }

    #[test]
    fn a_caller_reads_its_burst_then_at_its_rate() {
        let mut limiter = small();
        assert_eq!(limiter.admit(":1.5", 2_000, 0), Ok(()));
        assert_eq!(limiter.admit(":1.5", 1_000, 0), Err(SECOND));
        // Half a second later half of it is back.
        assert_eq!(limiter.admit(":1.5", 500, 500 * MS), Ok(()));
        assert_eq!(limiter.admit(":1.5", 1, 500 * MS), Err(1_000));
    }

    #[test]
    fn everyone_together_is_bounded_too() {
        let mut limiter = small();
        assert_eq!(limiter.admit("a", 2_000, 0), Ok(()));
        assert_eq!(limiter.admit("b", 1_000, 0), Ok(()));
        // c has its own full bucket but the total is spent.
        assert_eq!(limiter.admit("c", 1_000, 0), Err(SECOND / 3 + 1));
    }

    #[test]
    fn a_read_larger_than_a_burst_is_possible_once_full() {
        let mut limiter = small();
        assert_eq!(limiter.admit("a", 10_000, 0), Ok(()));
        // It ran into debt: the next read waits for it.
        assert!(limiter.admit("a", 1, 0).is_err());
    }

    #[test]
    fn a_larger_answer_than_admitted_is_paid_by_the_next_reads() {
        let mut limiter = small();
        assert_eq!(limiter.admit("a", 1, 0), Ok(()));
        limiter.settle("a", 1_999);
        assert_eq!(limiter.admit("a", 1, 0), Err(1_000));
    }

    #[test]
    fn many_callers_do_not_grow_the_table() {
        let mut limiter = small();
        for n in 0..100 {
            let _ = limiter.admit(&format!(":1.{n}"), 1, n * MS);
        }
        assert!(limiter.callers.len() <= 4);
    }
}
