//! Lateness counted on the timing thread: the timer's wake-ups after their
//! deadline ([`crate::runtime`]) and the display frames written after they
//! were due ([`crate::devices`]). A leaf: it imports nothing of the daemon,
//! so both can count with it.
//!
//! Promises: recording allocates nothing and never panics; percentiles are
//! bucket edges, never interpolated.

/// How late something happened after it was due: a fixed histogram (10 µs
/// buckets up to 10 ms), no allocation on the timing thread.
#[derive(Clone, Debug)]
pub struct Lateness {
    buckets: [u32; 1000],
    overflow: u32,
    count: u64,
    max: i64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            buckets: [0; 1000],
            overflow: 0,
            count: 0,
            max: 0,
        }
    }
}

impl Lateness {
    const BUCKET: i64 = 10;

    pub fn record(&mut self, late_us: i64) {
        let late_us = late_us.max(0);
        self.count += 1;
        self.max = self.max.max(late_us);
        match self.buckets.get_mut((late_us / Self::BUCKET) as usize) {
            Some(bucket) => *bucket += 1,
            None => self.overflow += 1,
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_us(&self) -> i64 {
        self.max
    }

    /// The upper edge of the bucket holding the `percent`-th percentile, µs
    /// (`None` with no samples or beyond 10 ms).
    pub fn percentile_us(&self, percent: u64) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        let rank = (self.count * percent).div_ceil(100).max(1);
        let mut seen = 0u64;
        for (index, bucket) in self.buckets.iter().enumerate() {
            seen += u64::from(*bucket);
            if seen >= rank {
                return Some((index as i64 + 1) * Self::BUCKET);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles() {
        let mut lateness = Lateness::default();
        assert_eq!(lateness.percentile_us(50), None);
        for late in [5, 15, 15, 95, 20_000] {
            lateness.record(late);
        }
        assert_eq!(lateness.count(), 5);
        assert_eq!(lateness.max_us(), 20_000);
        assert_eq!(lateness.percentile_us(50), Some(20));
        assert_eq!(lateness.percentile_us(80), Some(100));
        assert_eq!(lateness.percentile_us(100), None);
    }
}
