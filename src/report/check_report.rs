//! `eureka-sim check`: a file's trials, its `[[claim]]`s decided (`experiment::claims`) and told
//! one line each.

use crate::eureka::RequestMode;
use crate::experiment::claims::{Interval, empty_is_never};
use crate::experiment::{ClaimResult, evaluate, run_trials_with};
use crate::scenario::{Metric, Scenario, Statistic};

/// The claims of one scenario file, decided.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedFile {
    /// One line per claim (see [`claim_line`]), each ending in a newline.
    pub text: String,
    pub passed: usize,
    pub failed: usize,
}

/// `eureka-sim check` of one file: runs its trials (calling `on_trial_done` after each) and
/// decides its claims.
pub fn check(source: &str, scenario: &Scenario, on_trial_done: &(dyn Fn() + Sync)) -> CheckedFile {
    let outcomes = run_trials_with(scenario, RequestMode::default(), on_trial_done);
    let mut checked = CheckedFile {
        text: String::new(),
        passed: 0,
        failed: 0,
    };
    for result in evaluate(scenario, &outcomes) {
        if result.passed {
            checked.passed += 1;
        } else {
            checked.failed += 1;
        }
        checked.text.push_str(&claim_line(source, &result));
        checked.text.push('\n');
    }
    checked
}

/// One line per claim: verdict, where, the claim in words, what was measured, the source.
pub fn claim_line(source: &str, r: &ClaimResult) -> String {
    let name = r
        .claim
        .name
        .as_deref()
        .map(|n| format!(" \"{n}\""))
        .unwrap_or_default();
    let marginal = match r.interval {
        _ if r.marginal => " [marginal: the 95 % CI straddles the threshold]".to_string(),
        Interval::NeedsTrials(needed) if needed == usize::MAX => String::new(),
        Interval::NeedsTrials(needed) => format!(
            " [too few trials: {} needs at least {needed} for a 95 % interval; the verdict rests \
             on these {} trials]",
            r.claim.statistic.name(),
            r.trials
        ),
        _ => String::new(),
    };
    format!(
        "{} {source} claim[{}]{name} ({} {}): {}; measured {} in {} trials{marginal}; source: {}",
        verdict(r),
        r.index,
        r.instance,
        r.strategy.name(),
        claim_text(r),
        measured_text(r),
        r.trials,
        r.claim.source
    )
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

/// The claim in words: `exposure_ms max <= 180 s`.
pub fn claim_text(r: &ClaimResult) -> String {
    let c = &r.claim;
    format!(
        "{} {} {} {}",
        c.metric.name(),
        c.statistic.name(),
        c.comparison.symbol(),
        format_value(c.metric, c.statistic, c.value)
    )
}

/// What was measured and how sure it is: `313.29 s (observed)`,
/// `245.4 s (95 % CI 240.1 s .. 251 s)`, `0.975 = 195 of 200 trials (95 % CI 0.943 .. 0.988)`.
pub fn measured_text(r: &ClaimResult) -> String {
    let fmt = |value: f64| format_value(r.claim.metric, r.claim.statistic, value);
    let Some(measured) = r.measured else {
        return "nothing (no trial has a value)".to_string();
    };
    let mut text = fmt(measured);
    if let Some(k) = r.share_count {
        text.push_str(&format!(" = {k} of {} trials", r.trials));
    }
    match r.interval {
        Interval::Ci95(lo, hi) => {
            text.push_str(&format!(" (95 % CI {} .. {})", fmt(lo), fmt(hi)));
        }
        Interval::Observed => text.push_str(" (observed)"),
        Interval::NeedsTrials(_) | Interval::None => {}
    }
    if r.unresolved > 0 && !r.claim.statistic.is_share() {
        let meaning = if empty_is_never(r.claim.metric) {
            "still there at the end, counted as never"
        } else {
            "without a value, left out"
        };
        text.push_str(&format!(
            "; {} of {} trials {meaning}",
            r.unresolved, r.trials
        ));
    }
    text
}

/// `PASS` or `FAIL`.
pub fn verdict(r: &ClaimResult) -> &'static str {
    if r.passed { "PASS" } else { "FAIL" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::claims::{straddles, wilson};
    use crate::experiment::{ShutdownOutcome, TrialOutcome};
    use crate::scenario::{Comparison, Strategy, parse_str};

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
                end_ms: 900_000,
                dead_hit_spans: vec![Vec::new()],
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
        assert_eq!(claim_text(&r), "exposure_ms max <= 100 s");
        assert_eq!(measured_text(&r), "100 s (observed)");
        let r = one(&claim("exposure_ms", "max", "<", "100000"), &tens());
        assert!(!r.passed);
        let r = one(&claim("exposure_ms", "min", ">=", "10000"), &tens());
        assert_eq!((r.measured, r.passed), (Some(10_000.0), true));
    }

    #[test]
    fn percentiles_are_nearest_rank_with_the_order_statistic_interval() {
        // p50 of 10 values: rank ceil(5) = 5 -> 50 s. Interval from Binomial(10, 1/2):
        // P(B <= 1) = P(B >= 9) = 11/1024 = 0.0107 <= 0.025 < P(B <= 2) = 56/1024, so ranks 2
        // and 9 -> 20 s .. 90 s (coverage 1 - 22/1024 = 0.979).
        let r = one(&claim("exposure_ms", "p50", "<=", "60000"), &tens());
        assert_eq!(r.measured, Some(50_000.0));
        assert_eq!(r.interval, Interval::Ci95(20_000.0, 90_000.0));
        assert!(r.passed && r.marginal, "the interval reaches past 60 s");
        assert_eq!(measured_text(&r), "50 s (95 % CI 20 s .. 90 s)");
        // p90: rank 9 -> 90 s, decided on these 10 trials, but p90 needs 29 for an interval.
        let r = one(&claim("exposure_ms", "p90", ">", "85000"), &tens());
        assert_eq!((r.measured, r.passed), (Some(90_000.0), true));
        assert_eq!(r.interval, Interval::NeedsTrials(29));
        assert!(!r.marginal);
        assert!(
            claim_line("c.toml", &r).contains(
                "[too few trials: p90 needs at least 29 for a 95 % interval; the verdict rests \
                 on these 10 trials]"
            ),
            "{}",
            claim_line("c.toml", &r)
        );
    }

    #[test]
    fn mean_uses_the_t_interval() {
        // 10..100 s: mean 55 s; sample sd of 10, 20, ..., 100 is 30.277 s, so the half-width is
        // t(0.975, 9) * 30.277 / sqrt(10) = 2.2622 * 9.5743 = 21.659 s.
        let r = one(&claim("exposure_ms", "mean", "<=", "60000"), &tens());
        assert_eq!(r.measured, Some(55_000.0));
        let Interval::Ci95(lo, hi) = r.interval else {
            panic!("{:?}", r.interval)
        };
        assert!(
            (lo - 33_341.4).abs() < 1.0 && (hi - 76_658.6).abs() < 1.0,
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
            measured_text(&r),
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
        assert_eq!(measured_text(&r), "nothing (no trial has a value)");
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
            measured_text(&r),
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
        assert_eq!(claim_text(&r), "server_removed_ms min >= 150 s");
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
