//! Summaries of samples: percentiles by the nearest-rank method, so every
//! reported figure is one of the measured values.

use serde::Serialize;

/// p50/p99/max (and friends) of a set of samples, in the samples' unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

/// The nearest-rank percentile `p` (0..=100) of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Summary {
    pub fn of(samples: &[f64]) -> Summary {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return Summary {
                count: 0,
                min: f64::NAN,
                p50: f64::NAN,
                p90: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
                mean: f64::NAN,
            };
        }
        Summary {
            count: sorted.len(),
            min: sorted[0],
            p50: percentile(&sorted, 50.0),
            p90: percentile(&sorted, 90.0),
            p99: percentile(&sorted, 99.0),
            max: sorted[sorted.len() - 1],
            mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
        }
    }

    /// Summary of absolute values (for signed errors).
    pub fn of_abs(samples: &[f64]) -> Summary {
        let abs: Vec<f64> = samples.iter().map(|v| v.abs()).collect();
        Summary::of(&abs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_are_samples() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&samples);
        assert_eq!(s.count, 100);
        assert_eq!(s.p50, 50.0);
        assert_eq!(s.p99, 99.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.mean, 50.5);
    }

    #[test]
    fn empty_and_non_finite_samples_give_nan_not_a_panic() {
        let s = Summary::of(&[f64::NAN]);
        assert_eq!(s.count, 0);
        assert!(s.p99.is_nan());
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
    }

    #[test]
    fn abs_summary_folds_signs() {
        let s = Summary::of_abs(&[-3.0, 1.0, 2.0]);
        assert_eq!(s.max, 3.0);
        assert_eq!(s.min, 1.0);
    }
}
