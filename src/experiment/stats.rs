//! Summary statistics over trials.

/// Statistics of one metric over the trials in which it has a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub trials: usize,
    /// Trials without a value (see the metric's meaning of "empty").
    pub unresolved: usize,
    pub min: Option<i64>,
    pub p50: Option<i64>,
    pub p90: Option<i64>,
    pub p99: Option<i64>,
    pub p999: Option<i64>,
    pub max: Option<i64>,
    pub mean: Option<f64>,
    /// 95 % confidence interval of the mean (normal approximation, `mean ± 1.96 s / sqrt(n)`).
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
        let mean_ci95 = mean.filter(|_| present.len() > 1).map(|m| {
            let var = present.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / (n - 1.0);
            let half = 1.96 * (var / n).sqrt();
            (m - half, m + half)
        });
        let zeros = present.iter().filter(|&&v| v == 0).count();
        Stats {
            trials,
            unresolved: trials - present.len(),
            min: present.first().copied(),
            p50: percentile(&present, 50.0),
            p90: percentile(&present, 90.0),
            p99: percentile(&present, 99.0),
            p999: percentile(&present, 99.9),
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

    /// The nearest-rank percentile `p` of the present values.
    pub fn percentile(&self, p: f64) -> Option<i64> {
        percentile(&self.sorted, p)
    }

    /// A distribution-free 95 % confidence interval for the `p` percentile: the order statistics
    /// at ranks `n p ± 1.96 sqrt(n p (1 - p))` (normal approximation of the binomial), clamped
    /// to the sample.
    pub fn percentile_ci95(&self, p: f64) -> Option<(i64, i64)> {
        let n = self.sorted.len();
        if n == 0 {
            return None;
        }
        let q = (p / 100.0).clamp(0.0, 1.0);
        let centre = n as f64 * q;
        let half = 1.96 * (n as f64 * q * (1.0 - q)).sqrt();
        let lo = ((centre - half).floor() as i64).clamp(1, n as i64) as usize;
        let hi = ((centre + half).ceil() as i64 + 1).clamp(1, n as i64) as usize;
        Some((self.sorted[lo - 1], self.sorted[hi - 1]))
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
        // Values 0, 2, 4, 6, 8: mean 4, sample sd sqrt(10), half-width 1.96 sqrt(10 / 5).
        let s = Stats::of([0, 2, 4, 6, 8].map(Some));
        let (lo, hi) = s.mean_ci95.unwrap();
        let half = 1.96 * 2f64.sqrt();
        assert!((lo - (4.0 - half)).abs() < 1e-9 && (hi - (4.0 + half)).abs() < 1e-9);
        assert_eq!(s.zero_share, 0.2);
    }

    #[test]
    fn percentile_interval_brackets_the_estimate() {
        let s = Stats::of((1..=1000).map(Some));
        let (lo, hi) = s.percentile_ci95(50.0).unwrap();
        // Binomial(1000, 0.5): sd ~15.8, so ranks ~469..~532.
        assert!(
            (465..=470).contains(&lo) && (530..=535).contains(&hi),
            "{lo} {hi}"
        );
        assert_eq!(s.p999, Some(999));
        let (lo, hi) = s.percentile_ci95(99.9).unwrap();
        assert!(lo <= 999 && hi == 1000);
    }
}
