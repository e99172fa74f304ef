//! Line faults the scripted mode injects: bit errors at a rate, delayed
//! delivery, duplicated frames. Pure: the random source and the instant are
//! parameters, so a fault plan replays exactly with a seeded RNG.

use rand::Rng;

/// Which way a fault applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Device to host (what the host sees: CRC errors, late presses...).
    #[default]
    ToHost,
    /// Host to device.
    FromHost,
    Both,
}

impl Direction {
    pub fn to_host(self) -> bool {
        matches!(self, Direction::ToHost | Direction::Both)
    }
    pub fn from_host(self) -> bool {
        matches!(self, Direction::FromHost | Direction::Both)
    }
}

/// A fault active until a host instant (µs, CLOCK_MONOTONIC).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window<T> {
    pub until_us: i64,
    pub what: T,
}

/// The faults active on one unit's line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    /// Bit-error rate (probability each bit flips) and its direction.
    pub corrupt: Option<Window<(f64, Direction)>>,
    /// Device-to-host frames are held this many µs before they are written.
    pub delay: Option<Window<i64>>,
    /// Device-to-host frames are written this many extra times.
    pub duplicate: Option<Window<u32>>,
    /// When the last delayed frame is released (keeps the line FIFO).
    last_release_us: i64,
}

/// What happened to one outgoing frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Applied {
    pub flipped_bits: u32,
    pub delayed_us: i64,
    pub copies: u32,
}

impl Faults {
    fn expire(&mut self, now_us: i64) {
        if self.corrupt.is_some_and(|w| now_us >= w.until_us) {
            self.corrupt = None;
        }
        if self.delay.is_some_and(|w| now_us >= w.until_us) {
            self.delay = None;
        }
        if self.duplicate.is_some_and(|w| now_us >= w.until_us) {
            self.duplicate = None;
        }
    }

    /// The earliest instant a fault window ends (so the view can refresh).
    pub fn next_expiry(&self) -> Option<i64> {
        [
            self.corrupt.map(|w| w.until_us),
            self.delay.map(|w| w.until_us),
            self.duplicate.map(|w| w.until_us),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn any_active(&self) -> bool {
        self.corrupt.is_some() || self.delay.is_some() || self.duplicate.is_some()
    }

    /// Applies the active faults to one encoded device-to-host frame at
    /// `now_us`: the wire bytes (possibly corrupted) and when to write them,
    /// once per copy.
    pub fn outgoing(
        &mut self,
        wire: &[u8],
        now_us: i64,
        rng: &mut impl Rng,
        out: &mut Vec<(i64, Vec<u8>)>,
    ) -> Applied {
        self.expire(now_us);
        let mut applied = Applied::default();
        let copies = 1 + self.duplicate.map_or(0, |w| w.what);
        applied.copies = copies - 1;
        let mut release = now_us;
        if let Some(delay) = self.delay {
            release += delay.what;
            applied.delayed_us = delay.what;
        }
        // A serial line cannot reorder bytes: never release before an
        // earlier delayed frame.
        release = release.max(self.last_release_us);
        self.last_release_us = release;
        for _ in 0..copies {
            let mut bytes = wire.to_vec();
            if let Some(Window {
                what: (ber, direction),
                ..
            }) = self.corrupt
            {
                if direction.to_host() {
                    applied.flipped_bits += flip_bits(&mut bytes, ber, rng);
                }
            }
            out.push((release, bytes));
        }
        applied
    }

    /// Applies bit errors to bytes read from the host; returns bits flipped.
    pub fn incoming(&mut self, bytes: &mut [u8], now_us: i64, rng: &mut impl Rng) -> u32 {
        self.expire(now_us);
        match self.corrupt {
            Some(Window {
                what: (ber, direction),
                ..
            }) if direction.from_host() => flip_bits(bytes, ber, rng),
            _ => 0,
        }
    }
}

/// Flips each bit of `bytes` with probability `ber`; returns how many flipped.
pub fn flip_bits(bytes: &mut [u8], ber: f64, rng: &mut impl Rng) -> u32 {
    if ber.is_nan() || ber <= 0.0 {
        return 0;
    }
    let ber = ber.min(1.0);
    let mut flipped = 0;
    for byte in bytes.iter_mut() {
        for bit in 0..8 {
            if rng.random_bool(ber) {
                *byte ^= 1 << bit;
                flipped += 1;
            }
        }
    }
    flipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn no_faults_passes_frames_through_now() {
        let mut faults = Faults::default();
        let mut rng = StdRng::seed_from_u64(1);
        let mut out = Vec::new();
        let applied = faults.outgoing(&[1, 2, 0], 10, &mut rng, &mut out);
        assert_eq!(applied, Applied::default());
        assert_eq!(out, vec![(10, vec![1, 2, 0])]);
    }

    #[test]
    fn delay_and_duplicates_keep_fifo_order_and_expire() {
        let mut faults = Faults {
            delay: Some(Window {
                until_us: 100,
                what: 50,
            }),
            duplicate: Some(Window {
                until_us: 100,
                what: 2,
            }),
            ..Faults::default()
        };
        let mut rng = StdRng::seed_from_u64(1);
        let mut out = Vec::new();
        faults.outgoing(&[7, 0], 10, &mut rng, &mut out);
        assert_eq!(
            out,
            vec![(60, vec![7, 0]), (60, vec![7, 0]), (60, vec![7, 0])]
        );
        out.clear();
        // The window is over, but the frame may not overtake the held ones.
        faults.outgoing(&[8, 0], 100, &mut rng, &mut out);
        assert_eq!(out, vec![(100, vec![8, 0])]);
        out.clear();
        faults.delay = Some(Window {
            until_us: 1_000,
            what: 500,
        });
        faults.outgoing(&[9, 0], 200, &mut rng, &mut out);
        faults.delay = None;
        faults.outgoing(&[10, 0], 210, &mut rng, &mut out);
        assert_eq!(out, vec![(700, vec![9, 0]), (700, vec![10, 0])]);
        assert!(!faults.any_active());
    }

    #[test]
    fn bit_error_rate_one_flips_every_bit_and_zero_none() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut bytes = [0x0F, 0xF0];
        assert_eq!(flip_bits(&mut bytes, 1.0, &mut rng), 16);
        assert_eq!(bytes, [0xF0, 0x0F]);
        assert_eq!(flip_bits(&mut bytes, 0.0, &mut rng), 0);
        assert_eq!(flip_bits(&mut bytes, f64::NAN, &mut rng), 0);
        assert_eq!(bytes, [0xF0, 0x0F]);
    }

    #[test]
    fn direction_selects_which_way_is_corrupted() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut faults = Faults {
            corrupt: Some(Window {
                until_us: 100,
                what: (1.0, Direction::FromHost),
            }),
            ..Faults::default()
        };
        let mut out = Vec::new();
        assert_eq!(faults.outgoing(&[0], 0, &mut rng, &mut out).flipped_bits, 0);
        let mut inbound = [0u8];
        assert_eq!(faults.incoming(&mut inbound, 0, &mut rng), 8);
        assert_eq!(faults.incoming(&mut inbound, 100, &mut rng), 0);
        assert_eq!(inbound, [0xFF]);
    }
}
