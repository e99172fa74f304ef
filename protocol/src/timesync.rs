//! Maps device timestamps to the host's monotonic clock (SPEC.md, "Time").
//!
//! Every frame that carries the device clock and arrives at host instant `h`
//! gives one observation `o = h − d`: the true offset between the clocks plus
//! the frame's transport delay, which is never negative. So the smallest
//! observation is the best estimate of the offset, and it is late by only the
//! smallest delay seen (minimum-offset filtering).
//!
//! The device crystal and the host clock drift apart (tens of ppm, up to
//! 500 ppm while NTP slews CLOCK_MONOTONIC), so observations are kept per
//! one-second bucket of device time (the smallest of each), the relative rate
//! is estimated from the lower envelope over up to 64 s, and the offset at a
//! device instant is the smallest of the last 16 s of bucket minima (4 s
//! until a rate is estimated), each carried forward at that rate. The result is never later than the frame's
//! own arrival.
//!
//! Error: if the smallest one-way delay among the heartbeats of the window is
//! at most δ (the `delay_bound_us`, 1 000 µs by default: USB full-speed polls
//! a CDC-ACM IN endpoint every 1 ms), a mapped instant lies within
//! [`ClockSync::error_bound_us`] (δ plus the drift error) after the true one.
//!
//! Heartbeats are the reference. A button event's timestamp is checked
//! against the offset the heartbeats alone give (SPEC.md 9.2, item 7): an
//! observation below it by more than the error bound is impossible for a
//! true stamp (the frame would have arrived before it was stamped), so it is
//! rejected and counted ([`ClockSync::observe_event`]) and moves nothing.
//! Without that check one BUTTON stamped in the future lowered the minimum
//! and made every later press count early by as much.
//!
//! No allocation and no panics: all arithmetic is widened or saturating.

/// Device time covered by one bucket, µs.
pub const BUCKET_US: u64 = 1_000_000;
/// Buckets kept: the baseline of the drift estimate.
pub const BUCKETS: usize = 64;
/// Newest buckets whose minima give the offset once the drift is estimated.
pub const WINDOW_BUCKETS: u64 = 16;
/// Newest buckets whose minima give the offset before the drift is estimated
/// (short, so that an unknown drift costs little).
pub const WINDOW_BUCKETS_UNESTIMATED: u64 = 4;
/// Shortest baseline over which a drift rate is estimated, µs.
pub const MIN_DRIFT_BASELINE_US: u64 = 30_000_000;
/// Largest relative drift believed, parts per billion (device crystal plus
/// NTP slew of the host clock); estimates beyond are clamped.
pub const MAX_DRIFT_PPB: i64 = 1_000_000;
/// Drift assumed possible while no rate is estimated yet, ppb.
pub const UNESTIMATED_DRIFT_PPB: i64 = 600_000;
/// Default bound on the smallest one-way delay within the window, µs.
pub const DEFAULT_DELAY_BOUND_US: u64 = 1_000;

/// No heartbeat in a bucket (only button events lowered it).
const NO_HEARTBEAT: i64 = i64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sample {
    /// Bucket number: `device / BUCKET_US`.
    bucket: u64,
    /// Device time of the smallest observation of the bucket.
    device: u64,
    /// The smallest observation of the bucket (heartbeats and accepted
    /// button events).
    offset: i64,
    /// Device time of the bucket's smallest heartbeat observation.
    hb_device: u64,
    /// The smallest heartbeat observation of the bucket, or [`NO_HEARTBEAT`].
    hb_offset: i64,
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            bucket: 0,
            device: 0,
            offset: 0,
            hb_device: 0,
            hb_offset: NO_HEARTBEAT,
        }
    }
}

/// What [`ClockSync::observe_event`] did with a button event's timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventObservation {
    /// Consistent with the heartbeats: used like a heartbeat observation.
    Used,
    /// Below the heartbeats' offset by more than the error bound: the stamp
    /// cannot be true. Not used; counted.
    Rejected {
        /// How far below the heartbeat offset the observation was, µs.
        below_us: u64,
    },
    /// No heartbeat to check it against yet: not used (the press is mapped
    /// with what the heartbeats give, or at its arrival).
    Unchecked,
}

/// Host-side estimator of the device clock's offset (and drift).
#[derive(Clone, Debug)]
pub struct ClockSync {
    samples: [Sample; BUCKETS],
    /// Index of the newest sample; samples run backwards from it.
    newest: usize,
    count: usize,
    rate_ppb: i64,
    rate_baseline_us: u64,
    delay_bound_us: u64,
    rejected: u64,
}

impl Default for ClockSync {
    fn default() -> Self {
        Self::new()
    }
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

impl ClockSync {
    pub fn new() -> Self {
        Self::with_delay_bound(DEFAULT_DELAY_BOUND_US)
    }

    /// An estimator whose error bound assumes the smallest one-way delay in
    /// the window is at most `delay_bound_us` (e.g. more for a UART bridge
    /// with a latency timer).
    pub fn with_delay_bound(delay_bound_us: u64) -> Self {
        ClockSync {
            samples: [Sample::default(); BUCKETS],
            newest: 0,
            count: 0,
            rate_ppb: 0,
            rate_baseline_us: 0,
            delay_bound_us,
            rejected: 0,
        }
    }

    /// Records a DEVICE_HEARTBEAT carrying `device_time_us` that arrived at
    /// host instant `host_arrival_us`. Heartbeats are the reference of the
    /// mapping (SPEC.md 9.2).
    pub fn observe(&mut self, device_time_us: u64, host_arrival_us: i64) {
        self.record(device_time_us, host_arrival_us, true);
    }

    /// Same as [`Self::observe`]: a heartbeat.
    pub fn observe_heartbeat(&mut self, device_time_us: u64, host_arrival_us: i64) {
        self.record(device_time_us, host_arrival_us, true);
    }

    /// Records a BUTTON's `device_time_us` that arrived at
    /// `host_arrival_us`, if the heartbeats confirm it could be true: an
    /// observation below the heartbeat-based offset at that device time by
    /// more than [`Self::error_bound_at`] is rejected and counted
    /// ([`Self::rejected_events`]), and one that cannot be checked (no
    /// heartbeat yet) is not used. Either way the mapping does not move.
    pub fn observe_event(&mut self, device_time_us: u64, host_arrival_us: i64) -> EventObservation {
        let Some((hb_offset, from)) = self.heartbeat_offset_at(device_time_us) else {
            return EventObservation::Unchecked;
        };
        let offset = clamp_i64(host_arrival_us as i128 - device_time_us as i128);
        let allowance = self.allowance(device_time_us, from) as i128;
        let below = hb_offset as i128 - offset as i128;
        if below > allowance {
            self.rejected = self.rejected.saturating_add(1);
            return EventObservation::Rejected {
                below_us: below.clamp(0, u64::MAX as i128) as u64,
            };
        }
        self.record(device_time_us, host_arrival_us, false);
        EventObservation::Used
    }

    /// Button timestamps rejected by [`Self::observe_event`] since the last
    /// reset.
    pub fn rejected_events(&self) -> u64 {
        self.rejected
    }

    fn record(&mut self, device_time_us: u64, host_arrival_us: i64, heartbeat: bool) {
        let offset = clamp_i64(host_arrival_us as i128 - device_time_us as i128);
        let mut sample = Sample {
            bucket: device_time_us / BUCKET_US,
            device: device_time_us,
            offset,
            ..Sample::default()
        };
        if heartbeat {
            sample.hb_device = device_time_us;
            sample.hb_offset = offset;
        }
        if self.count == 0 {
            self.samples = [Sample::default(); BUCKETS];
            self.newest = 0;
            self.count = 1;
            if let Some(s) = self.samples.get_mut(0) {
                *s = sample;
            }
            return;
        }
        let newest = self.sample(0);
        if sample.bucket > newest.bucket {
            self.newest = (self.newest + 1) % BUCKETS;
            if let Some(s) = self.samples.get_mut(self.newest) {
                *s = sample;
            }
            self.count = (self.count + 1).min(BUCKETS);
            self.estimate_rate();
            return;
        }
        // The newest bucket, or an older one (a resent button event): it
        // says less about the present; use it only when it lowers a bucket
        // still kept.
        for age in 0..self.count {
            let index = self.index(age);
            if let Some(s) = self.samples.get_mut(index) {
                if s.bucket == sample.bucket {
                    if sample.offset < s.offset {
                        s.offset = sample.offset;
                        s.device = sample.device;
                    }
                    if heartbeat && sample.hb_offset < s.hb_offset {
                        s.hb_offset = sample.hb_offset;
                        s.hb_device = sample.hb_device;
                    }
                    break;
                }
                if s.bucket < sample.bucket {
                    break;
                }
            }
        }
    }

    /// The host instant of `device_time_us`, never later than
    /// `host_arrival_us` (the frame cannot arrive before it was sent).
    /// Before any observation, `host_arrival_us`.
    pub fn to_host(&self, device_time_us: u64, host_arrival_us: i64) -> i64 {
        let Some((offset, _)) = self.offset_at(device_time_us) else {
            return host_arrival_us;
        };
        clamp_i64(device_time_us as i128 + offset as i128).min(host_arrival_us)
    }

    /// The current bound on the mapping error, when known: the assumed delay
    /// bound plus the drift error accumulated since the sample that set the
    /// offset (at the newest observation).
    pub fn error_bound_us(&self) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let now = self.sample(0).device;
        let (_, from) = self.offset_at(now)?;
        Some(self.allowance(now, from))
    }

    /// The bound on the error of the heartbeat-based offset at device
    /// instant `at`: the delay bound plus the drift error accumulated since
    /// the heartbeat that set it. `None` before any heartbeat in the window.
    /// This is the tolerance of the check of [`Self::observe_event`].
    pub fn error_bound_at(&self, at: u64) -> Option<u64> {
        let (_, from) = self.heartbeat_offset_at(at)?;
        Some(self.allowance(at, from))
    }

    /// δ plus the drift error over `|at − from|`.
    fn allowance(&self, at: u64, from: u64) -> u64 {
        let age = (at as i128 - from as i128).abs();
        let rate_error_ppb = if self.rate_baseline_us > 0 {
            // Two envelope points each uncertain by the delay bound.
            (2 * self.delay_bound_us as i128 * 1_000_000_000) / self.rate_baseline_us as i128
        } else {
            UNESTIMATED_DRIFT_PPB as i128
        };
        let drift = age.saturating_mul(rate_error_ppb) / 1_000_000_000;
        self.delay_bound_us
            .saturating_add(drift.clamp(0, u64::MAX as i128) as u64)
    }

    /// The estimated rate of the host clock relative to the device clock,
    /// parts per billion (positive: the host clock runs faster), once known.
    pub fn drift_ppb(&self) -> Option<i64> {
        (self.rate_baseline_us > 0).then_some(self.rate_ppb)
    }

    /// Observations kept (bucket minima).
    pub fn samples(&self) -> usize {
        self.count
    }

    /// Forget everything (device reset / reconnected).
    pub fn reset(&mut self) {
        *self = Self::with_delay_bound(self.delay_bound_us);
    }

    /// The offset at device instant `at` and the device time of the sample
    /// that gave it.
    fn offset_at(&self, at: u64) -> Option<(i64, u64)> {
        self.lowest_at(at, |s| Some((s.offset, s.device)))
    }

    /// [`Self::offset_at`] from the heartbeats alone.
    fn heartbeat_offset_at(&self, at: u64) -> Option<(i64, u64)> {
        self.lowest_at(at, |s| {
            (s.hb_offset != NO_HEARTBEAT).then_some((s.hb_offset, s.hb_device))
        })
    }

    /// The smallest of `pick(bucket)` over the window, each carried to `at`
    /// at the estimated rate.
    fn lowest_at(
        &self,
        at: u64,
        pick: impl Fn(&Sample) -> Option<(i64, u64)>,
    ) -> Option<(i64, u64)> {
        if self.count == 0 {
            return None;
        }
        let newest_bucket = self.sample(0).bucket;
        let window = if self.rate_baseline_us > 0 {
            WINDOW_BUCKETS
        } else {
            WINDOW_BUCKETS_UNESTIMATED
        };
        let mut best: Option<(i64, u64)> = None;
        for age in 0..self.count {
            let s = self.sample(age);
            if newest_bucket.saturating_sub(s.bucket) >= window {
                break;
            }
            let Some((offset, device)) = pick(&s) else {
                continue;
            };
            let carried = clamp_i64(offset as i128 + self.drift_between(device, at));
            if best.is_none_or(|(b, _)| carried < b) {
                best = Some((carried, device));
            }
        }
        best
    }

    /// How much the offset changes from device instant `from` to `to`.
    fn drift_between(&self, from: u64, to: u64) -> i128 {
        (to as i128 - from as i128) * self.rate_ppb as i128 / 1_000_000_000
    }

    fn sample(&self, age: usize) -> Sample {
        self.samples
            .get(self.index(age))
            .copied()
            .unwrap_or_default()
    }

    fn index(&self, age: usize) -> usize {
        (self.newest + BUCKETS - age % BUCKETS) % BUCKETS
    }

    /// Slope of the lower envelope: the lowest detrended point of the oldest
    /// quarter against that of the newest quarter, refined once.
    fn estimate_rate(&mut self) {
        let oldest = self.sample(self.count - 1);
        let newest = self.sample(0);
        if newest.device.saturating_sub(oldest.device) < MIN_DRIFT_BASELINE_US || self.count < 8 {
            return;
        }
        let quarter = self.count / 4;
        let mut rate = self.rate_ppb;
        for _ in 0..2 {
            let low = |ages: core::ops::Range<usize>| -> Sample {
                let mut best = self.sample(ages.start);
                let mut best_v = i128::MAX;
                for age in ages {
                    let s = self.sample(age);
                    let v = s.offset as i128 - s.device as i128 * rate as i128 / 1_000_000_000;
                    if v < best_v {
                        best_v = v;
                        best = s;
                    }
                }
                best
            };
            let new_end = low(0..quarter);
            let old_end = low(self.count - quarter..self.count);
            let span = new_end.device.saturating_sub(old_end.device);
            if span == 0 {
                return;
            }
            let slope =
                (new_end.offset as i128 - old_end.offset as i128) * 1_000_000_000 / span as i128;
            rate = clamp_i64(slope.clamp(-(MAX_DRIFT_PPB as i128), MAX_DRIFT_PPB as i128));
            self.rate_baseline_us = span;
        }
        self.rate_ppb = rate;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    /// Host instant of device instant `d` for a host clock running
    /// `ppb` faster, with the device booted at host instant 5 s.
    fn truth(d: u64, ppb: i64) -> i64 {
        5_000_000 + d as i64 + (d as i128 * ppb as i128 / 1_000_000_000) as i64
    }

    /// Runs `seconds` of heartbeats every 250 ms (delays 50..1000 µs, one in
    /// ten delayed up to 30 ms) and a press every 730 ms; returns the worst
    /// errors (mapped − true) below and above, µs, once the drift is
    /// estimated, checking every press after 5 s against the bound.
    fn simulate(ppb: i64, seconds: u64, seed: u64) -> (i64, i64) {
        let mut rng = Lcg(seed);
        let mut sync = ClockSync::new();
        let delay = |rng: &mut Lcg| -> i64 {
            let base = 50 + (rng.next() % 950) as i64;
            if rng.next() % 10 == 0 {
                base + (rng.next() % 30_000) as i64
            } else {
                base
            }
        };
        let (mut worst_low, mut worst_high) = (0i64, 0i64);
        let mut next_press = 730_000u64;
        let mut d = 0u64;
        while d < seconds * 1_000_000 {
            d += 250_000;
            sync.observe(d, truth(d, ppb) + delay(&mut rng));
            while next_press <= d {
                let arrival = truth(next_press, ppb) + delay(&mut rng);
                let seen = sync.observe_event(next_press, arrival);
                assert!(
                    !matches!(seen, EventObservation::Rejected { .. }),
                    "ppb {ppb}: true stamp rejected: {seen:?}"
                );
                let mapped = sync.to_host(next_press, arrival);
                assert!(mapped <= arrival);
                let err = mapped - truth(next_press, ppb);
                if next_press > 5_000_000 {
                    let bound = sync.error_bound_us().unwrap() as i64;
                    assert!(err.abs() <= bound, "ppb {ppb}: error {err}, bound {bound}");
                }
                if next_press > 70_000_000 {
                    worst_low = worst_low.min(err);
                    worst_high = worst_high.max(err);
                }
                next_press += 730_000;
            }
        }
        (worst_low, worst_high)
    }

    #[test]
    fn before_any_observation_the_arrival_is_used() {
        let sync = ClockSync::new();
        assert_eq!(sync.to_host(123, 456), 456);
        assert_eq!(sync.error_bound_us(), None);
    }

    #[test]
    fn one_observation_gives_the_offset_and_never_maps_after_arrival() {
        let mut sync = ClockSync::new();
        sync.observe(1_000_000, 6_000_400);
        assert_eq!(sync.to_host(1_100_000, 7_000_000), 6_100_400);
        assert_eq!(sync.to_host(1_100_000, 6_000_000), 6_000_000);
        sync.reset();
        assert_eq!(sync.samples(), 0);
        assert_eq!(sync.to_host(1, 2), 2);
    }

    #[test]
    fn smallest_delay_wins() {
        let mut sync = ClockSync::new();
        sync.observe(1_000_000, 6_030_000);
        sync.observe(1_250_000, 6_250_200);
        sync.observe(1_500_000, 6_510_000);
        assert_eq!(sync.to_host(1_600_000, i64::MAX), 6_600_200);
    }

    #[test]
    fn without_drift_the_error_is_the_smallest_delay() {
        let (low, high) = simulate(0, 120, 1);
        assert!(low >= 0, "{low}");
        assert!(high <= 200, "{high}");
    }

    #[test]
    fn drift_is_tracked_within_the_bound() {
        for (ppb, seed) in [(80_000, 2), (-80_000, 3), (500_000, 4), (-500_000, 5)] {
            let (low, high) = simulate(ppb, 300, seed);
            std::eprintln!("drift {ppb} ppb: mapping error {low}..={high} µs");
            assert!(low >= -100, "ppb {ppb}: mapped {low} µs early");
            assert!(high <= 400, "ppb {ppb}: mapped {high} µs late");
        }
    }

    #[test]
    fn drift_rate_is_estimated() {
        let mut sync = ClockSync::new();
        for k in 1..=240u64 {
            let d = k * 250_000;
            sync.observe(d, truth(d, 120_000) + 100 + (k % 7) as i64 * 50);
        }
        let r = sync.drift_ppb().unwrap();
        assert!((r - 120_000).abs() < 20_000, "{r}");
    }

    /// Regression (issue 13): one BUTTON stamped 1.3 s in the future lowered
    /// the minimum offset, and a normal press a second later was accounted
    /// 1.0-1.3 s early (2.8 s and 5.0 s after several such stamps).
    #[test]
    fn regression_a_button_stamped_in_the_future_does_not_move_the_mapping() {
        let mut sync = ClockSync::new();
        // Device clock = host clock - 5 s; heartbeats arrive 100 µs late.
        let host = |d: u64| d as i64 + 5_000_000;
        for k in 1..=8u64 {
            let d = k * 250_000;
            sync.observe(d, host(d) + 100);
        }
        let before = sync.to_host(2_100_000, i64::MAX);
        // A press frame stamped 1.3 s after the instant it was really made.
        let d_glitch = 2_050_000 + 1_300_000;
        let seen = sync.observe_event(d_glitch, host(2_050_000) + 300);
        assert!(
            matches!(seen, EventObservation::Rejected { below_us } if below_us > 1_290_000),
            "{seen:?}"
        );
        assert_eq!(sync.rejected_events(), 1);
        assert_eq!(
            sync.to_host(2_100_000, i64::MAX),
            before,
            "mapping unchanged"
        );
        // The glitched press itself cannot be placed before its arrival.
        let arrival = host(2_050_000) + 300;
        assert_eq!(sync.to_host(d_glitch, arrival), arrival);
        // Several such stamps, heartbeats going on: a normal press a second
        // later is mapped to its true instant (within the delay).
        for k in 9..=16u64 {
            let d = k * 250_000;
            sync.observe(d, host(d) + 100);
            let glitch = sync.observe_event(d + 2_800_000 + k * 10_000, host(d) + 200);
            assert!(
                matches!(glitch, EventObservation::Rejected { .. }),
                "{glitch:?}"
            );
        }
        let press = 4_100_000;
        let arrival = host(press) + 20_000;
        assert_eq!(sync.observe_event(press, arrival), EventObservation::Used);
        let mapped = sync.to_host(press, arrival);
        assert!(
            (0..=200).contains(&(mapped - host(press))),
            "mapped {} µs off",
            mapped - host(press)
        );
        assert_eq!(sync.rejected_events(), 9);
    }

    #[test]
    fn a_button_within_the_bound_is_used_and_one_without_heartbeats_is_not() {
        let mut sync = ClockSync::new();
        // Nothing to check against: not used, nothing mapped but arrival.
        assert_eq!(
            sync.observe_event(1_000_000, 6_000_000),
            EventObservation::Unchecked
        );
        assert_eq!(sync.samples(), 0);
        assert_eq!(sync.to_host(1_000_000, 6_000_000), 6_000_000);
        // A heartbeat 800 µs late, then a press frame with only 50 µs of
        // delay: 750 µs below the heartbeat offset, within δ = 1000 µs.
        sync.observe(1_000_000, 6_000_800);
        assert_eq!(sync.error_bound_at(1_200_000), Some(1_000 + 120));
        assert_eq!(
            sync.observe_event(1_200_000, 6_200_050),
            EventObservation::Used
        );
        assert_eq!(sync.to_host(1_300_000, i64::MAX), 6_300_050);
        // 2 ms below: impossible for a true stamp.
        assert!(matches!(
            sync.observe_event(1_400_000, 6_398_000),
            EventObservation::Rejected { below_us: 2_800 }
        ));
        assert_eq!(sync.to_host(1_300_000, i64::MAX), 6_300_050);
        // A resent press (an old stamp, a late arrival) is harmless.
        assert_eq!(
            sync.observe_event(1_100_000, 7_000_000),
            EventObservation::Used
        );
        assert_eq!(sync.to_host(1_300_000, i64::MAX), 6_300_050);
        sync.reset();
        assert_eq!(sync.rejected_events(), 0);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        let mut huge = ClockSync::with_delay_bound(u64::MAX);
        for k in 0..100u64 {
            huge.observe(k * 1_000_000, (k * 1_000_000) as i64 + (k % 3) as i64);
        }
        huge.observe(u64::MAX, 0);
        assert!(huge.error_bound_us().is_some());
        let mut sync = ClockSync::new();
        sync.observe(u64::MAX, i64::MIN);
        sync.observe(0, i64::MAX);
        sync.observe(u64::MAX / 2, 0);
        let _ = sync.to_host(u64::MAX, i64::MAX);
        let _ = sync.to_host(0, i64::MIN);
        let _ = sync.error_bound_us();
    }
}
