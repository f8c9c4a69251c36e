//! Timing claims (`[[claim]]`): each one measured over a run's trials and decided.
//!
//! A claim reads "over the trials, `statistic` of `metric` for one shutdown is `<op>` `value`".
//! It is decided on the measured **point value** (the statistic of these trials), so a claim's
//! verdict is as reproducible as the run: the same scenario and seed always give the same
//! PASS/FAIL. The 95 % confidence interval says how much the figure could move with other seeds or
//! more trials, and a claim whose interval straddles the threshold is flagged **marginal**: its
//! verdict rests on these particular trials.
//!
//! The intervals:
//! - percentiles: the distribution-free order-statistic interval of [`Stats::percentile_ci95`]
//!   (exact binomial ranks, `experiment::intervals`). Below the trials a percentile needs for one
//!   (p50 6, p90 29, p99 299, p99.9 2995) there is no interval: the claim is still decided on the
//!   point value, and flagged as resting on too few trials ([`Interval::NeedsTrials`]);
//! - mean: the Student t-interval of [`Stats::mean_ci95`] (none below two values);
//! - min and max: none. They are the observed extremes of these trials; more trials can only
//!   widen them, so no interval is given ("observed");
//! - shares (`zero-share`, `unresolved`): the Wilson score interval for a binomial proportion.
//!
//! Trials without a value: for the metrics whose empty cell means "still there when the trial
//! ended" (`exposure_ms` and the four `*_removed_ms`), such a trial counts as later than any time,
//! +∞: it is the largest value for min, max and percentiles, and it makes the mean +∞. A claim
//! "exposure max <= 180 s" therefore fails when a trial never resolved, as it should. For
//! `last_dead_hit_ms`, empty means "no dead hit"; those trials are left out, as in `summary.csv`.
//! When no trial has a value, the claim cannot be measured and fails.

use crate::scenario::{ClaimConfig, Comparison, Scenario, Statistic, Strategy};

use super::{Stats, TrialOutcome};
use crate::scenario::Metric;

/// z for a two-sided 95 % interval.
const Z95: f64 = 1.96;

/// How sure the measured figure is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Interval {
    /// A 95 % confidence interval (bounds may be +∞ for unresolved trials).
    Ci95(f64, f64),
    /// Min and max: the observed extreme, for which there is no interval.
    Observed,
    /// A percentile from fewer trials than it needs for an interval (the number it needs).
    NeedsTrials(usize),
    /// No interval can be given (a mean of fewer than two values, or an infinite mean).
    None,
}

/// One claim, measured and decided.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimResult {
    /// The claim's index in the scenario (`claim[index]`).
    pub index: usize,
    pub claim: ClaimConfig,
    /// The instance id and strategy of the claim's shutdown.
    pub instance: String,
    pub strategy: Strategy,
    /// Trials run.
    pub trials: usize,
    /// Trials without a value of the metric (see the module doc for how they count).
    pub unresolved: usize,
    /// The statistic over the trials, in the metric's unit (ms, a count, or a fraction for
    /// shares); `f64::INFINITY` when unresolved trials decide it; `None` when no trial has a
    /// value to measure.
    pub measured: Option<f64>,
    /// For shares: the number of trials counted in the share (its numerator).
    pub share_count: Option<usize>,
    pub interval: Interval,
    /// Whether `measured <op> value` holds.
    pub passed: bool,
    /// Whether the confidence interval reaches across the threshold, so that the verdict could
    /// flip with other trials.
    pub marginal: bool,
}

/// Measures and decides every claim of `scenario` on `outcomes` (the trials of one run).
pub fn evaluate(scenario: &Scenario, outcomes: &[TrialOutcome]) -> Vec<ClaimResult> {
    scenario
        .claims
        .iter()
        .enumerate()
        .map(|(index, claim)| evaluate_one(scenario, index, claim, outcomes))
        .collect()
}

/// Whether an empty value of `metric` means "still there when the trial ended" (+∞), rather than
/// "never happened" (`last_dead_hit_ms`: no dead hit). Counts always have a value.
pub fn empty_is_never(metric: Metric) -> bool {
    metric.is_time() && metric != Metric::LastDeadHitMs
}

/// The order statistics' stand-in for +∞ (an unresolved trial).
const NEVER: i64 = i64::MAX;

fn as_f64(v: i64) -> f64 {
    if v == NEVER { f64::INFINITY } else { v as f64 }
}

fn evaluate_one(
    scenario: &Scenario,
    index: usize,
    claim: &ClaimConfig,
    outcomes: &[TrialOutcome],
) -> ClaimResult {
    let values: Vec<Option<i64>> = outcomes
        .iter()
        .map(|o| {
            o.shutdowns
                .get(claim.shutdown)
                .and_then(|s| s.value(claim.metric))
        })
        .collect();
    let stats = Stats::of(values.iter().copied());
    let trials = stats.trials;
    let unresolved = stats.unresolved;
    // Order statistics with unresolved trials as +∞ where that is what they mean.
    let ordered = if empty_is_never(claim.metric) {
        Stats::of(values.iter().map(|v| Some(v.unwrap_or(NEVER))))
    } else {
        stats.clone()
    };

    let mut share_count = None;
    let (measured, interval) = match claim.statistic {
        Statistic::Min => (ordered.min.map(as_f64), Interval::Observed),
        Statistic::Max => (ordered.max.map(as_f64), Interval::Observed),
        Statistic::Percentile(p) => (
            ordered.percentile(p).map(as_f64),
            match (ordered.percentile_ci95(p), ordered.needs_trials(p)) {
                (Some((lo, hi)), _) => Interval::Ci95(as_f64(lo), as_f64(hi)),
                (None, Some(needed)) if !ordered.sorted.is_empty() => Interval::NeedsTrials(needed),
                (None, _) => Interval::None,
            },
        ),
        Statistic::Mean if unresolved > 0 && empty_is_never(claim.metric) => {
            (Some(f64::INFINITY), Interval::None)
        }
        Statistic::Mean => (
            stats.mean,
            stats
                .mean_ci95
                .map_or(Interval::None, |(lo, hi)| Interval::Ci95(lo, hi)),
        ),
        Statistic::ZeroShare | Statistic::Unresolved => {
            let k = if claim.statistic == Statistic::ZeroShare {
                values.iter().filter(|v| **v == Some(0)).count()
            } else {
                unresolved
            };
            share_count = Some(k);
            match wilson(k, trials) {
                Some((lo, hi)) => (Some(k as f64 / trials as f64), Interval::Ci95(lo, hi)),
                None => (None, Interval::None),
            }
        }
    };
    let passed = measured.is_some_and(|m| claim.comparison.holds(m, claim.value));
    let marginal = match interval {
        Interval::Ci95(lo, hi) => straddles(claim.comparison, claim.value, passed, lo, hi),
        Interval::Observed | Interval::NeedsTrials(_) | Interval::None => false,
    };
    let shutdown = scenario.shutdowns.get(claim.shutdown);
    ClaimResult {
        index,
        claim: claim.clone(),
        instance: shutdown.map_or_else(String::new, |s| s.instance.clone()),
        strategy: shutdown.map_or(Strategy::Kill9, |s| s.strategy),
        trials,
        unresolved,
        measured,
        share_count,
        interval,
        passed,
        marginal,
    }
}

/// Whether some point of `[lo, hi]` gives the other verdict than `passed`.
pub(crate) fn straddles(op: Comparison, value: f64, passed: bool, lo: f64, hi: f64) -> bool {
    match op {
        // True at exactly one point: a passing claim is marginal unless the interval is that
        // point, a failing one when the interval contains it.
        Comparison::Equal if passed => lo < hi,
        Comparison::Equal => lo <= value && value <= hi,
        // Monotone in the measured value: compare the ends.
        _ => op.holds(lo, value) != op.holds(hi, value),
    }
}

/// The Wilson score interval (95 %) for `k` successes in `n` trials; `None` for no trials.
pub fn wilson(k: usize, n: usize) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}
