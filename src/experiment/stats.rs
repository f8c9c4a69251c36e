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
    pub max: Option<i64>,
    pub mean: Option<f64>,
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
        let mean = (!present.is_empty())
            .then(|| present.iter().map(|&v| v as f64).sum::<f64>() / present.len() as f64);
        Stats {
            trials,
            unresolved: trials - present.len(),
            min: present.first().copied(),
            p50: percentile(&present, 50.0),
            p90: percentile(&present, 90.0),
            p99: percentile(&present, 99.0),
            max: present.last().copied(),
            mean,
        }
    }
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
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
}
