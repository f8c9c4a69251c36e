//! `eureka-sim check`: a file's trials, its `[[claim]]`s decided (`experiment::claims`) and told
//! one line each.

use crate::eureka::RequestMode;
use crate::experiment::claims::{Interval, empty_is_never};
use crate::experiment::{ClaimResult, evaluate, run_trials_with};
use crate::scenario::{Metric, Scenario, Statistic};

/// The widest line `check` prints: a CI log or a terminal shows it whole.
pub const WIDTH: usize = 100;

/// Where the continuation of a wrapped line starts, under the text of its field.
const CONTINUATION: &str = "            ";

/// The claims of one scenario file, decided.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedFile {
    /// The scenario file as the user named it.
    pub source: String,
    /// The run's seed (`simulation.seed`, `--seed`).
    pub seed: u64,
    /// One block per claim (see [`claim_block`]), each line ending in a newline.
    pub text: String,
    /// Every claim, measured and decided, in the file's order (for `--junit` and `--format json`).
    pub results: Vec<ClaimResult>,
    pub passed: usize,
    pub failed: usize,
}

/// `eureka-sim check` of one file: runs its trials (calling `on_trial_done` after each) and
/// decides its claims.
/// A trial over its event limit fails the check ([`crate::experiment::budget::check_outcomes`]).
pub fn check(
    source: &str,
    scenario: &Scenario,
    on_trial_done: &(dyn Fn() + Sync),
) -> Result<CheckedFile, crate::experiment::budget::BudgetError> {
    let outcomes = run_trials_with(scenario, RequestMode::default(), on_trial_done);
    crate::experiment::budget::check_outcomes(&outcomes)?;
    let results = evaluate(scenario, &outcomes);
    let seed = scenario.simulation.seed;
    let text = results
        .iter()
        .map(|r| claim_block(source, seed, r))
        .collect();
    let passed = results.iter().filter(|r| r.passed).count();
    Ok(CheckedFile {
        source: source.to_string(),
        seed,
        text,
        failed: results.len() - passed,
        passed,
        results,
    })
}

/// One block per claim: the verdict, where and which claim on the first line, then the claim,
/// what was measured (with the run's `--seed`, named as the flag so that it cannot be taken for
/// the name of a source document) and the source, each line at most [`WIDTH`] wide:
///
/// ```text
/// FAIL c.toml claim[0] "over within 180 s" (svc-0 kill-9)
///   claim:    exposure_ms max <= 180 s
///   measured: 307.094 s (observed) in 300 trials, --seed 1
///   source:   ...
/// ```
pub fn claim_block(source: &str, seed: u64, r: &ClaimResult) -> String {
    let name = r
        .claim
        .name
        .as_deref()
        .map(|n| format!(" \"{n}\""))
        .unwrap_or_default();
    let header = format!(
        "{} {source} claim[{}]{name} ({} {})",
        verdict(r),
        r.index,
        r.instance,
        r.strategy.name()
    );
    let measured = format!(
        "{} in {} trials, --seed {seed}{}",
        measured_text(r),
        r.trials,
        caveat(r)
    );
    [
        wrap(&header),
        wrap(&format!("  claim:    {}", claim_text(r))),
        wrap(&format!("  measured: {measured}")),
        wrap(&format!("  source:   {}", r.claim.source)),
    ]
    .concat()
}

/// Why a verdict is less sure than it reads: ` [marginal: ...]`, ` [too few trials: ...]`, or
/// nothing.
pub fn caveat(r: &ClaimResult) -> String {
    match r.interval {
        _ if r.marginal => " [marginal: the 95 % CI straddles the threshold]".to_string(),
        Interval::NeedsTrials(needed) if needed == usize::MAX => String::new(),
        Interval::NeedsTrials(needed) => format!(
            " [too few trials: {} needs at least {needed} for a 95 % interval; the verdict rests \
             on these {} trials]",
            r.claim.statistic.name(),
            r.trials
        ),
        _ => String::new(),
    }
}

/// `line` broken at spaces into lines of at most [`WIDTH`] characters (a word longer than that
/// stays whole), continued under [`CONTINUATION`]; each line ends in a newline. Nothing but the
/// spaces at a break is dropped.
fn wrap(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line.to_string();
    while let Some(cut) = break_at(&rest) {
        out.push_str(rest[..cut].trim_end());
        out.push('\n');
        rest = format!("{CONTINUATION}{}", rest[cut..].trim_start());
    }
    out.push_str(&rest);
    out.push('\n');
    out
}

/// Where to break `line` (a byte index of a space), or `None` if it fits or cannot break: the
/// last space within [`WIDTH`] characters, else the first after (a long word stays whole); never
/// inside the indentation, so a continuation always moves on.
fn break_at(line: &str) -> Option<usize> {
    if line.chars().count() <= WIDTH {
        return None;
    }
    let spaces = line
        .char_indices()
        .enumerate()
        .filter(|&(at, (_, c))| c == ' ' && at > CONTINUATION.len())
        .map(|(at, (byte, _))| (at, byte));
    let mut last_fitting = None;
    for (at, byte) in spaces {
        if at <= WIDTH {
            last_fitting = Some(byte);
        } else {
            return last_fitting.or(Some(byte));
        }
    }
    last_fitting
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
    use crate::scenario::fixture::{SVC_AND_GW, ScenarioText};
    use crate::scenario::{Comparison, Strategy, parse_str};

    /// One app, one caller, one kill-9 of svc-0; claims are appended.
    fn scenario(claims: &str) -> Scenario {
        let kill9 = ScenarioText::default()
            .shutdown("svc-0", 100, "kill-9", &[])
            .text();
        let text = format!("\n{SVC_AND_GW}{kill9}{claims}");
        parse_str(&text, "c.toml", "c", &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Found by fuzzing: a trial that stops at its event limit fails the check with that error instead
    /// of deciding claims on a cut trial.
    #[test]
    fn a_trial_over_its_event_limit_fails_the_check() {
        let mut s = scenario(&claim("exposure_ms", "max", "<=", "1000000"));
        s.simulation.trials = 2;
        assert!(check("c.toml", &s, &|| {}).is_ok());
        s.simulation.event_limit = Some(50);
        let err = check("c.toml", &s, &|| {}).err().unwrap();
        assert_eq!(
            err,
            crate::experiment::budget::BudgetError::TrialLimit {
                trial: 0,
                limit: 50
            }
        );
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
                over_event_limit: None,
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
        assert_eq!(
            caveat(&r),
            " [too few trials: p90 needs at least 29 for a 95 % interval; the verdict rests \
             on these 10 trials]"
        );
        let block = claim_block("c.toml", 7, &r);
        assert!(
            block.replace(&format!("\n{CONTINUATION}"), " ").contains(
                "  measured: 90 s in 10 trials, --seed 7 [too few trials: p90 needs at least 29 \
                 for a 95 % interval; the verdict rests on these 10 trials]\n"
            ),
            "{block}"
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

    #[test]
    fn wrapped_lines_fit_the_width_and_lose_no_word() {
        let words: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
        let line = format!("  source:   {}", words.join(" "));
        let wrapped = wrap(&line);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() > 1, "{wrapped}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{wrapped}"
        );
        assert!(lines[1..].iter().all(|l| l.starts_with(CONTINUATION)));
        let joined: Vec<&str> = wrapped.split_whitespace().collect();
        let expected: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(joined, expected);
        // A word wider than a line stays whole on its own line.
        let long = "x".repeat(WIDTH + 5);
        let wrapped = wrap(&format!("  source:   a {long} b"));
        assert_eq!(
            wrapped,
            format!("  source:   a\n{CONTINUATION}{long}\n{CONTINUATION}b\n")
        );
        assert_eq!(wrap("short"), "short\n");
    }

    #[test]
    fn a_claim_block_names_verdict_claim_measure_seed_and_source() {
        let mut text = claim("exposure_ms", "max", "<=", "90000");
        text = text.replace(
            "source = \"test\"",
            "source = \"doc 000\"\nname = \"quick\"",
        );
        let r = one(&text, &tens());
        assert_eq!(
            claim_block("c.toml", 3, &r),
            "FAIL c.toml claim[0] \"quick\" (svc-0 kill-9)\n\
             \x20 claim:    exposure_ms max <= 90 s\n\
             \x20 measured: 100 s (observed) in 10 trials, --seed 3\n\
             \x20 source:   doc 000\n"
        );
    }
}
