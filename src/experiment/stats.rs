//! Summary statistics over trials.
//!
//! Percentiles are reported only when the trials behind them support them (see
//! [`super::intervals`]: a 95 % order-statistic interval must exist, so p50 needs 6 values, p90
//! 29, p99 299, p99.9 2995); their intervals are order-statistic ones and the mean's a Student
//! t-interval.

use super::intervals::{mean_t_interval95, quantile_ranks95, trials_for_percentile};

/// Statistics of one metric over the trials in which it has a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub trials: usize,
    /// Trials without a value (see the metric's meaning of "empty").
    pub unresolved: usize,
    pub min: Option<i64>,
    /// The nearest-rank percentiles, `None` when no trial has a value **or when fewer trials
    /// have one than the percentile needs** ([`Stats::needs_trials`] tells which);
    /// [`Stats::percentile`] gives the bare figure whatever the count.
    pub p50: Option<i64>,
    pub p90: Option<i64>,
    pub p99: Option<i64>,
    pub p999: Option<i64>,
    pub max: Option<i64>,
    pub mean: Option<f64>,
    /// 95 % Student t-interval of the mean (`mean ± t(0.975, n - 1) s / sqrt(n)`); `None` with
    /// fewer than two values.
    pub mean_ci95: Option<(f64, f64)>,
    /// Share of the trials (all of them, unresolved included) whose value is exactly 0.
    pub zero_share: f64,
    /// The values present, sorted (for percentiles at any level and their intervals).
    pub sorted: Vec<i64>,
}

impl Stats {
    /// Percentiles are nearest-rank: the smallest value with at least p % of the values at or
    /// below it (`sorted[ceil(p/100 * n) - 1]`), so every reported figure was observed.
    pub fn of(values: impl IntoIterator<Item = Option<i64>>) -> Stats {
        let mut trials = 0;
        let mut present: Vec<i64> = Vec::new();
        for v in values {
            trials += 1;
            if let Some(v) = v {
                present.push(v);
            }
        }
        present.sort_unstable();
        let n = present.len() as f64;
        let mean =
            (!present.is_empty()).then(|| present.iter().map(|&v| v as f64).sum::<f64>() / n);
        let mean_ci95 = mean_t_interval95(&present);
        let supported = |p: f64| {
            trials_for_percentile(p)
                .is_some_and(|needed| present.len() >= needed)
                .then(|| percentile(&present, p))
                .flatten()
        };
        let zeros = present.iter().filter(|&&v| v == 0).count();
        Stats {
            trials,
            unresolved: trials - present.len(),
            min: present.first().copied(),
            p50: supported(50.0),
            p90: supported(90.0),
            p99: supported(99.0),
            p999: supported(99.9),
            max: present.last().copied(),
            mean,
            mean_ci95,
            zero_share: if trials == 0 {
                0.0
            } else {
                zeros as f64 / trials as f64
            },
            sorted: present,
        }
    }

    /// The nearest-rank percentile `p` of the present values, whatever their number (claims
    /// decide on it; reports ask [`Stats::needs_trials`] first).
    pub fn percentile(&self, p: f64) -> Option<i64> {
        percentile(&self.sorted, p)
    }

    /// `Some(n)` when the `p` percentile needs `n` values and fewer have one (for p100 and p0,
    /// the observed extremes, never); `None` when it is supported.
    pub fn needs_trials(&self, p: f64) -> Option<usize> {
        needs_trials(self.sorted.len(), p)
    }

    /// The distribution-free 95 % confidence interval for the `p` percentile: the order
    /// statistics at the ranks of [`quantile_ranks95`] (binomial sums, no normal
    /// approximation); `None` when the values are too few for one.
    pub fn percentile_ci95(&self, p: f64) -> Option<(i64, i64)> {
        let ranks = quantile_ranks95(self.sorted.len(), p)?;
        Some((self.sorted[ranks.lower - 1], self.sorted[ranks.upper - 1]))
    }
}

/// With `values` values, `Some(needed)` when the `p` percentile needs more (always for p <= 0 or
/// p >= 100, for which no number suffices: `usize::MAX`), `None` when it is supported.
pub fn needs_trials(values: usize, p: f64) -> Option<usize> {
    match trials_for_percentile(p) {
        Some(needed) if values >= needed => None,
        Some(needed) => Some(needed),
        None => Some(usize::MAX),
    }
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    // p * n / 100 is computed in that order and nudged down so that 99.9 % of 1000 is rank 999,
    // not 1000 through rounding (0.999 is not exact in binary).
    let rank = (p * sorted.len() as f64 / 100.0 - 1e-9).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<i64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50.0), Some(50));
        assert_eq!(percentile(&values, 90.0), Some(90));
        assert_eq!(percentile(&values, 99.0), Some(99));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[1, 2, 3], 50.0), Some(2));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn unresolved_values_are_counted_not_averaged() {
        let s = Stats::of([Some(10), None, Some(30), None]);
        assert_eq!((s.trials, s.unresolved), (4, 2));
        assert_eq!((s.min, s.max), (Some(10), Some(30)));
        assert_eq!(s.mean, Some(20.0));
        let empty = Stats::of([None]);
        assert_eq!((empty.min, empty.mean), (None, None));
    }

    #[test]
    fn mean_interval_and_zero_share() {
        // Values 0, 2, 4, 6, 8: mean 4, sample sd sqrt(10), half-width t(0.975, 4) sqrt(10 / 5).
        let s = Stats::of([0, 2, 4, 6, 8].map(Some));
        let (lo, hi) = s.mean_ci95.unwrap();
        let half = 2.776_445 * 2f64.sqrt();
        assert!((lo - (4.0 - half)).abs() < 1e-4 && (hi - (4.0 + half)).abs() < 1e-4);
        assert_eq!(s.zero_share, 0.2);
        // One value: a mean, no interval.
        let one = Stats::of([Some(7)]);
        assert_eq!((one.mean, one.mean_ci95), (Some(7.0), None));
    }

    #[test]
    fn percentile_interval_brackets_the_estimate() {
        let s = Stats::of((1..=1000).map(Some));
        let (lo, hi) = s.percentile_ci95(50.0).unwrap();
        // Binomial(1000, 0.5): P(B <= 468) = 0.0231, P(B >= 532) = 0.0231, so [X(469), X(532)].
        assert_eq!((lo, hi), (469, 532));
        // p99.9 needs 2995 values: 1000 give neither the figure nor an interval.
        assert_eq!(s.p999, None);
        assert_eq!(s.needs_trials(99.9), Some(2995));
        assert_eq!(s.percentile(99.9), Some(999));
        assert_eq!(s.percentile_ci95(99.9), None);
    }

    /// A percentile is reported only with the values it needs: 20 give p50, not p90 or p99.
    #[test]
    fn percentiles_are_withheld_below_the_trials_they_need() {
        let s = Stats::of((1..=20).map(Some));
        assert_eq!((s.p50, s.p90, s.p99, s.p999), (Some(10), None, None, None));
        assert_eq!(s.needs_trials(50.0), None);
        assert_eq!(s.needs_trials(90.0), Some(29));
        assert_eq!(s.needs_trials(99.0), Some(299));
        assert_eq!(s.percentile(90.0), Some(18));
        // Unresolved trials do not count towards a percentile of the values.
        let s = Stats::of((1..=5).map(Some).chain([None; 10]));
        assert_eq!((s.p50, s.needs_trials(50.0)), (None, Some(6)));
        assert_eq!(s.needs_trials(100.0), Some(usize::MAX));
    }
}
