//! The buzzer pattern of BEEP (SPEC.md 5.9) and the low-battery detector.
//! Pure: instants in, levels out.

/// BEEP `duration_ms`, `count`: `count` beeps of `duration_ms`, separated by
/// pauses of `duration_ms`; a new BEEP replaces the pattern; `count = 0`
/// stops it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Beeper {
    start_us: u64,
    duration_us: u64,
    count: u8,
}

impl Beeper {
    pub fn start(&mut self, duration_ms: u16, count: u8, now_us: u64) {
        *self = Beeper {
            start_us: now_us,
            duration_us: u64::from(duration_ms) * 1000,
            count,
        };
    }

    /// Half-periods since the start, if the pattern is still running.
    fn phase(&self, now_us: u64) -> Option<u64> {
        if self.count == 0 || self.duration_us == 0 || now_us < self.start_us {
            return None;
        }
        let k = (now_us - self.start_us) / self.duration_us;
        // The last beep ends the pattern (no pause after it).
        (k < 2 * u64::from(self.count) - 1).then_some(k)
    }

    /// Whether the buzzer sounds at `now_us`.
    pub fn is_on(&self, now_us: u64) -> bool {
        self.phase(now_us).is_some_and(|k| k % 2 == 0)
    }

    /// The next instant the buzzer changes, if it will.
    pub fn next_change(&self, now_us: u64) -> Option<u64> {
        let k = self.phase(now_us)?;
        Some(
            self.start_us
                .saturating_add((k + 1).saturating_mul(self.duration_us)),
        )
    }
}

/// Low battery with hysteresis, from the supply voltage (VSYS on a Pico).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowBattery {
    low: bool,
    /// At or below: low.
    pub threshold_mv: u32,
    /// Back above `threshold_mv + hysteresis_mv`: not low.
    pub hysteresis_mv: u32,
}

impl LowBattery {
    /// 3.6 V: three AA cells nearly empty (1.2 V each); a unit powered over
    /// USB reads about 4.7 V (VBUS through the Pico's Schottky diode).
    pub const fn new() -> LowBattery {
        LowBattery {
            low: false,
            threshold_mv: 3_600,
            hysteresis_mv: 150,
        }
    }

    pub fn update(&mut self, supply_mv: u32) -> bool {
        if supply_mv <= self.threshold_mv {
            self.low = true;
        } else if supply_mv > self.threshold_mv + self.hysteresis_mv {
            self.low = false;
        }
        self.low
    }

    pub fn is_low(&self) -> bool {
        self.low
    }
}

impl Default for LowBattery {
    fn default() -> Self {
        Self::new()
    }
}

/// VSYS in mV from a 12-bit reading of the Pico's VSYS/3 divider (ADC3,
/// GPIO29) against the 3.3 V reference.
pub fn vsys_mv(raw12: u16) -> u32 {
    u32::from(raw12.min(4095)) * 3 * 3300 / 4095
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_beeps_of_100_ms() {
        let mut b = Beeper::default();
        assert!(!b.is_on(0));
        b.start(100, 3, 1_000_000);
        let on: std::vec::Vec<bool> = (0..6)
            .map(|i| b.is_on(1_000_000 + i * 100_000 + 50_000))
            .collect();
        assert_eq!(on, [true, false, true, false, true, false]);
        assert_eq!(b.next_change(1_000_000), Some(1_100_000));
        assert_eq!(b.next_change(1_450_000), Some(1_500_000));
        assert_eq!(b.next_change(1_500_000), None);
        b.start(100, 0, 1_500_000);
        assert!(!b.is_on(1_500_000));
    }

    #[test]
    fn low_battery_has_hysteresis() {
        let mut l = LowBattery::new();
        assert!(!l.update(4_700));
        assert!(l.update(3_550));
        assert!(l.update(3_700));
        assert!(!l.update(3_800));
        assert_eq!(vsys_mv(4095), 9_900);
        assert_eq!(vsys_mv(1489), 3_599);
    }
}
