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
//! - percentiles: the distribution-free order-statistic interval of [`Stats::percentile_ci95`];
//! - mean: the normal-approximation interval of [`Stats::mean_ci95`];
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
fn empty_is_never(metric: Metric) -> bool {
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
            ordered
                .percentile_ci95(p)
                .map_or(Interval::None, |(lo, hi)| {
                    Interval::Ci95(as_f64(lo), as_f64(hi))
                }),
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
        Interval::Observed | Interval::None => false,
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
fn straddles(op: Comparison, value: f64, passed: bool, lo: f64, hi: f64) -> bool {
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

/// `x` with at most `decimals` decimals, trailing zeros dropped: 180, 313.29, 0.975.
fn trimmed(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// A figure of `metric`/`statistic` in people's units: seconds for times (to the millisecond),
/// plain numbers for counts, fractions for shares; `never` for +∞.
pub fn format_value(metric: Metric, statistic: Statistic, value: f64) -> String {
    if value == f64::INFINITY {
        return "never".to_string();
    }
    if statistic.is_share() {
        trimmed(value, 3)
    } else if metric.is_time() {
        format!("{} s", trimmed(value / 1000.0, 3))
    } else {
        trimmed(value, 2)
    }
}

impl ClaimResult {
    /// The claim in words: `exposure_ms max <= 180 s`.
    pub fn claim_text(&self) -> String {
        let c = &self.claim;
        format!(
            "{} {} {} {}",
            c.metric.name(),
            c.statistic.name(),
            c.comparison.symbol(),
            format_value(c.metric, c.statistic, c.value)
        )
    }

    fn fmt(&self, value: f64) -> String {
        format_value(self.claim.metric, self.claim.statistic, value)
    }

    /// What was measured and how sure it is: `313.29 s (observed)`,
    /// `245.4 s (95 % CI 240.1 s .. 251 s)`, `0.975 = 195 of 200 trials (95 % CI 0.943 .. 0.988)`.
    pub fn measured_text(&self) -> String {
        let Some(measured) = self.measured else {
            return "nothing (no trial has a value)".to_string();
        };
        let mut text = self.fmt(measured);
        if let Some(k) = self.share_count {
            text.push_str(&format!(" = {k} of {} trials", self.trials));
        }
        match self.interval {
            Interval::Ci95(lo, hi) => {
                text.push_str(&format!(" (95 % CI {} .. {})", self.fmt(lo), self.fmt(hi)));
            }
            Interval::Observed => text.push_str(" (observed)"),
            Interval::None => {}
        }
        if self.unresolved > 0 && !self.claim.statistic.is_share() {
            let meaning = if empty_is_never(self.claim.metric) {
                "still there at the end, counted as never"
            } else {
                "without a value, left out"
            };
            text.push_str(&format!(
                "; {} of {} trials {meaning}",
                self.unresolved, self.trials
            ));
        }
        text
    }

    /// `PASS` or `FAIL`.
    pub fn verdict(&self) -> &'static str {
        if self.passed { "PASS" } else { "FAIL" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ShutdownOutcome;
    use crate::scenario::parse_str;

    /// One app, one caller, one kill-9 of svc-0; claims are appended.
    const BASE: &str = r#"
[[app]]
name = "svc"
instances = 3
[[caller]]
name = "gw"
calls = "svc"
[[shutdown]]
instance = "svc-0"
at-s = 100
strategy = "kill-9"
"#;

    fn scenario(claims: &str) -> Scenario {
        parse_str(&format!("{BASE}{claims}"), "c.toml", "c", &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    fn claim(metric: &str, statistic: &str, op: &str, value: &str) -> String {
        format!(
            "[[claim]]\nmetric = \"{metric}\"\nstatistic = \"{statistic}\"\nop = \"{op}\"\n\
             value = {value}\nsource = \"test\"\n"
        )
    }

    /// Trials whose only shutdown has the given exposure (ms; `None` = still listed at the end)
    /// and dead hits.
    fn outcomes(rows: &[(Option<i64>, u64)]) -> Vec<TrialOutcome> {
        rows.iter()
            .enumerate()
            .map(|(i, &(exposure_ms, dead_hits))| TrialOutcome {
                trial: i as u32,
                seed: i as u64,
                shutdowns: vec![ShutdownOutcome {
                    t_stop_ms: Some(100_000),
                    exposure_ms,
                    dead_hits,
                    last_dead_hit_ms: (dead_hits > 0).then_some(1_000),
                    ..ShutdownOutcome::default()
                }],
                deploys: Vec::new(),
                events: 0,
            })
            .collect()
    }

    fn one(claims: &str, rows: &[(Option<i64>, u64)]) -> ClaimResult {
        let results = evaluate(&scenario(claims), &outcomes(rows));
        assert_eq!(results.len(), 1);
        results.into_iter().next().unwrap_or_else(|| unreachable!())
    }

    /// Ten trials with exposures 10 s, 20 s, ..., 100 s.
    fn tens() -> Vec<(Option<i64>, u64)> {
        (1..=10).map(|i| (Some(i * 10_000), 0)).collect()
    }

    #[test]
    fn max_is_the_observed_worst_case_and_decides_on_the_point_value() {
        let r = one(&claim("exposure_ms", "max", "<=", "100000"), &tens());
        assert_eq!(r.measured, Some(100_000.0));
        assert_eq!(r.interval, Interval::Observed);
        assert!(r.passed && !r.marginal);
        assert_eq!(r.claim_text(), "exposure_ms max <= 100 s");
        assert_eq!(r.measured_text(), "100 s (observed)");
        let r = one(&claim("exposure_ms", "max", "<", "100000"), &tens());
        assert!(!r.passed);
        let r = one(&claim("exposure_ms", "min", ">=", "10000"), &tens());
        assert_eq!((r.measured, r.passed), (Some(10_000.0), true));
    }

    #[test]
    fn percentiles_are_nearest_rank_with_the_order_statistic_interval() {
        // p50 of 10 values: rank ceil(5) = 5 -> 50 s. Interval: centre 5, half 1.96 sqrt(2.5)
        // = 3.099, ranks floor(1.901) = 1 and ceil(8.099) + 1 = 10 -> 10 s .. 100 s.
        let r = one(&claim("exposure_ms", "p50", "<=", "60000"), &tens());
        assert_eq!(r.measured, Some(50_000.0));
        assert_eq!(r.interval, Interval::Ci95(10_000.0, 100_000.0));
        assert!(r.passed && r.marginal, "the interval reaches past 60 s");
        assert_eq!(r.measured_text(), "50 s (95 % CI 10 s .. 100 s)");
        // p90: rank 9 -> 90 s.
        let r = one(&claim("exposure_ms", "p90", ">", "85000"), &tens());
        assert_eq!((r.measured, r.passed), (Some(90_000.0), true));
    }

    #[test]
    fn mean_uses_the_normal_interval() {
        // 10..100 s: mean 55 s; sample sd of 10, 20, ..., 100 is 30.277 s, so the half-width is
        // 1.96 * 30.277 / sqrt(10) = 18.766 s.
        let r = one(&claim("exposure_ms", "mean", "<=", "60000"), &tens());
        assert_eq!(r.measured, Some(55_000.0));
        let Interval::Ci95(lo, hi) = r.interval else {
            panic!("{:?}", r.interval)
        };
        assert!(
            (lo - 36_234.0).abs() < 1.0 && (hi - 73_766.0).abs() < 1.0,
            "{lo} {hi}"
        );
        assert!(r.passed && r.marginal);
        let r = one(&claim("exposure_ms", "mean", "<=", "80000"), &tens());
        assert!(r.passed && !r.marginal);
    }

    #[test]
    fn unresolved_trials_count_as_never_for_removal_metrics() {
        let mut rows = tens();
        rows[3].0 = None;
        let r = one(&claim("exposure_ms", "max", "<=", "180000"), &rows);
        assert_eq!(r.measured, Some(f64::INFINITY));
        assert!(!r.passed);
        assert_eq!(
            r.measured_text(),
            "never (observed); 1 of 10 trials still there at the end, counted as never"
        );
        // The min is still a real value; p90 (rank 9 of 10) is the 9th smallest: 100 s.
        let r = one(&claim("exposure_ms", "min", "<=", "10000"), &rows);
        assert_eq!(r.measured, Some(10_000.0));
        let r = one(&claim("exposure_ms", "p90", "<=", "100000"), &rows);
        assert_eq!(r.measured, Some(100_000.0));
        let r = one(&claim("exposure_ms", "mean", ">=", "0"), &rows);
        assert_eq!(
            (r.measured, r.interval),
            (Some(f64::INFINITY), Interval::None)
        );
        let r = one(&claim("exposure_ms", "unresolved", "<=", "0.1"), &rows);
        assert_eq!(
            (r.measured, r.share_count, r.passed),
            (Some(0.1), Some(1), true)
        );
    }

    #[test]
    fn last_dead_hit_leaves_trials_without_dead_hits_out() {
        let rows = [(Some(0), 0), (Some(5_000), 3), (Some(0), 0)];
        let r = one(&claim("last_dead_hit_ms", "max", "<=", "1000"), &rows);
        assert_eq!(
            (r.measured, r.unresolved, r.passed),
            (Some(1_000.0), 2, true)
        );
        let none = [(Some(0), 0)];
        let r = one(&claim("last_dead_hit_ms", "max", "<=", "1000"), &none);
        assert_eq!((r.measured, r.passed), (None, false));
        assert_eq!(r.measured_text(), "nothing (no trial has a value)");
    }

    #[test]
    fn shares_use_the_wilson_interval() {
        // 8 of 10 trials without dead hits. Wilson: z^2 = 3.8416, denominator 1.38416,
        // centre (0.8 + 0.19208) / 1.38416 = 0.71679, half 1.96 / 1.38416 *
        // sqrt(0.016 + 0.0096040) = 0.22657 -> 0.4902 .. 0.9434.
        let mut rows = tens();
        rows[0].1 = 4;
        rows[1].1 = 1;
        let r = one(&claim("dead_hits", "zero-share", ">=", "0.9"), &rows);
        assert_eq!(
            (r.measured, r.share_count),
            (Some(0.8), Some(2 + 6)),
            "{r:?}"
        );
        let (lo, hi) = wilson(8, 10).unwrap();
        assert!(
            (lo - 0.4902).abs() < 1e-3 && (hi - 0.9434).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(r.interval, Interval::Ci95(lo, hi));
        assert!(!r.passed && r.marginal, "0.9 is inside the interval");
        let r = one(&claim("dead_hits", "zero-share", ">=", "0.95"), &rows);
        assert!(!r.passed && !r.marginal, "0.95 is above the interval");
        assert_eq!(
            r.measured_text(),
            "0.8 = 8 of 10 trials (95 % CI 0.49 .. 0.943)"
        );
        // All 200 of 200: the interval is 1 / (1 + z^2 / n) .. 1.
        let (lo, hi) = wilson(200, 200).unwrap();
        assert!((lo - 1.0 / (1.0 + 3.8416 / 200.0)).abs() < 1e-12 && hi == 1.0);
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn equality_is_exact_and_marginal_when_the_interval_is_wider() {
        let rows: Vec<_> = (0..10).map(|_| (Some(0), 0)).collect();
        let r = one(&claim("dead_hits", "max", "==", "0"), &rows);
        assert!(r.passed && !r.marginal);
        let r = one(&claim("dead_hits", "zero-share", "==", "1"), &rows);
        assert!(r.passed && r.marginal, "10 trials cannot rule out a miss");
        assert!(straddles(Comparison::Equal, 1.0, false, 0.5, 1.0));
        assert!(!straddles(Comparison::Equal, 1.0, false, 0.2, 0.5));
    }

    #[test]
    fn claims_name_their_shutdown_and_values_format_in_their_unit() {
        let r = one(&claim("server_removed_ms", "min", ">=", "150000"), &tens());
        assert_eq!(
            (r.instance.as_str(), r.strategy),
            ("svc-0", Strategy::Kill9)
        );
        assert_eq!(r.claim_text(), "server_removed_ms min >= 150 s");
        assert_eq!(
            format_value(Metric::ExposureMs, Statistic::Mean, 243_512.4),
            "243.512 s"
        );
        assert_eq!(
            format_value(Metric::DeadHits, Statistic::Mean, 256.55),
            "256.55"
        );
        assert_eq!(format_value(Metric::DeadHits, Statistic::Max, 0.0), "0");
        assert_eq!(
            format_value(Metric::ExposureMs, Statistic::Min, -1500.0),
            "-1.5 s"
        );
        assert_eq!(
            format_value(Metric::ExposureMs, Statistic::ZeroShare, 0.975),
            "0.975"
        );
    }
}
