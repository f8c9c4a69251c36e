//! JSON for machines: `summary.json` (a run's results, with what is needed to reproduce them,
//! also what `run --format json` prints) and what `check --format json` prints. Keys are in a
//! fixed order and there are no timestamps, so the same run prints the same bytes. Times are in
//! milliseconds, shares are fractions in 0..=1; a value that does not exist is `null`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::fnv1a64;
use crate::experiment::ClaimResult;
use crate::experiment::claims::Interval;
use crate::experiment::compare::Comparison;
use crate::scenario::Scenario;

use super::SummaryRow;
use super::check_report::CheckedFile;

#[derive(Debug, Serialize)]
struct SummaryJson<'a> {
    tool: &'static str,
    version: &'static str,
    scenario: &'a str,
    /// FNV-1a 64 of the validated scenario (after `--set` overrides), hex.
    scenario_hash: String,
    seed: u64,
    trials: u32,
    release: String,
    shutdowns: Vec<ShutdownJson>,
}

#[derive(Debug, Serialize)]
struct ShutdownJson {
    instance: String,
    strategy: &'static str,
    metrics: Vec<MetricJson>,
}

#[derive(Debug, Serialize)]
struct MetricJson {
    metric: &'static str,
    trials: usize,
    unresolved: usize,
    min: Option<i64>,
    p50: Option<i64>,
    p90: Option<i64>,
    p99: Option<i64>,
    p99_9: Option<i64>,
    max: Option<i64>,
    mean: Option<f64>,
    /// The mean's 95 % Student t-interval (`null` below 2 values).
    mean_ci95: Option<[f64; 2]>,
    zero_share: f64,
    /// The percentiles left `null` because too few trials have a value, with the number each
    /// needs (`experiment::intervals`): `{"p99": 299, "p99_9": 2995}`.
    needs_trials: BTreeMap<&'static str, usize>,
    /// `unresolved` by reason (`experiment::Unresolved`): `{"listed_at_end": 3}`.
    unresolved_by: BTreeMap<&'static str, usize>,
}

/// The percentiles of `summary.json` by their JSON names.
const PERCENTILES: [(&str, f64); 4] =
    [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99_9", 99.9)];

/// A stable hash of the validated scenario, so two results can be told apart by their inputs.
pub fn scenario_hash(scenario: &Scenario) -> String {
    format!("{:016x}", fnv1a64(&format!("{scenario:?}")))
}

/// Renders `summary.json` (pretty-printed, keys in a fixed order, no timestamps).
pub fn render_summary_json(scenario: &Scenario, rows: &[SummaryRow]) -> String {
    let json = SummaryJson {
        tool: "eureka-sim",
        version: env!("CARGO_PKG_VERSION"),
        scenario: &scenario.name,
        scenario_hash: scenario_hash(scenario),
        seed: scenario.simulation.seed,
        trials: scenario.simulation.trials,
        release: scenario.simulation.release.to_string(),
        shutdowns: shutdowns_json(scenario, rows),
    };
    pretty(&json)
}

/// Pretty-printed JSON with a final newline.
fn pretty(json: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(json).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// What `compare --format json` prints: the base scenario, then per variant (`kill-9`,
/// `pause-90s`, ...) its shutdowns with the statistics of `summary.json`.
#[derive(Debug, Serialize)]
struct CompareJson<'a> {
    tool: &'static str,
    version: &'static str,
    scenario: &'a str,
    seed: u64,
    trials: u32,
    release: String,
    variants: Vec<VariantJson>,
}

#[derive(Debug, Serialize)]
struct VariantJson {
    name: String,
    strategy: &'static str,
    /// The wait of pause and service-registry, seconds (`null`: each shutdown's own).
    wait_s: Option<u64>,
    scenario_hash: String,
    shutdowns: Vec<ShutdownJson>,
}

/// Renders what `compare --format json` prints.
pub fn render_compare_json(base: &Scenario, comparison: &Comparison) -> String {
    let variants = comparison
        .variants
        .iter()
        .map(|v| {
            let rows: Vec<SummaryRow> = v
                .stats
                .iter()
                .map(|row| SummaryRow {
                    shutdown: row.shutdown,
                    instance: row.instance.clone(),
                    strategy: v.scenario.shutdowns[row.shutdown].strategy.name(),
                    metric: row.metric,
                    stats: row.stats.clone(),
                    unresolved_by: row.unresolved_by.clone(),
                })
                .collect();
            VariantJson {
                name: v.variant.name(),
                strategy: v.variant.strategy.name(),
                wait_s: v.variant.wait_s,
                scenario_hash: scenario_hash(&v.scenario),
                shutdowns: shutdowns_json(&v.scenario, &rows),
            }
        })
        .collect();
    pretty(&CompareJson {
        tool: "eureka-sim",
        version: env!("CARGO_PKG_VERSION"),
        scenario: &base.name,
        seed: base.simulation.seed,
        trials: base.simulation.trials,
        release: base.simulation.release.to_string(),
        variants,
    })
}

/// Each shutdown of `scenario` with the statistics of its metrics in `rows`.
fn shutdowns_json(scenario: &Scenario, rows: &[SummaryRow]) -> Vec<ShutdownJson> {
    scenario
        .shutdowns
        .iter()
        .enumerate()
        .map(|(s, shutdown)| ShutdownJson {
            instance: shutdown.instance.clone(),
            strategy: shutdown.strategy.name(),
            metrics: rows
                .iter()
                .filter(|r| r.shutdown == s)
                .map(|r| {
                    let st = &r.stats;
                    MetricJson {
                        metric: r.metric.name(),
                        trials: st.trials,
                        unresolved: st.unresolved,
                        min: st.min,
                        p50: st.p50,
                        p90: st.p90,
                        p99: st.p99,
                        p99_9: st.p999,
                        max: st.max,
                        mean: st.mean,
                        mean_ci95: st.mean_ci95.map(|(lo, hi)| [lo, hi]),
                        zero_share: st.zero_share,
                        needs_trials: PERCENTILES
                            .iter()
                            .filter(|_| !st.sorted.is_empty())
                            .filter_map(|&(name, p)| st.needs_trials(p).map(|n| (name, n)))
                            .collect(),
                        unresolved_by: r
                            .unresolved_by
                            .iter()
                            .map(|&(reason, n)| (reason.name(), n))
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect()
}

/// What `check --format json` prints.
#[derive(Debug, Serialize)]
struct CheckJson<'a> {
    tool: &'static str,
    version: &'static str,
    passed: usize,
    failed: usize,
    files: Vec<CheckFileJson<'a>>,
}

#[derive(Debug, Serialize)]
struct CheckFileJson<'a> {
    scenario: &'a str,
    seed: u64,
    passed: usize,
    failed: usize,
    claims: Vec<ClaimJson<'a>>,
}

/// One claim, decided: the claim as the file states it, then what was measured.
#[derive(Debug, Serialize)]
struct ClaimJson<'a> {
    index: usize,
    name: Option<&'a str>,
    instance: &'a str,
    strategy: &'static str,
    metric: &'static str,
    statistic: String,
    op: &'static str,
    /// The threshold in the metric's unit (ms for times, a count, a fraction for shares).
    value: f64,
    source: &'a str,
    passed: bool,
    /// The 95 % interval straddles the threshold: the verdict rests on these trials.
    marginal: bool,
    trials: usize,
    unresolved: usize,
    /// The statistic over the trials; `null` when no trial has a value or when it is +∞
    /// (`never` says which).
    measured: Option<f64>,
    /// The statistic is +∞: a trial still listed the instance when it ended.
    never: bool,
    /// For shares: the trials counted in the share.
    share_count: Option<usize>,
    /// `ci95`, `observed` (min and max: no interval), `needs_trials` or `none`.
    interval: &'static str,
    /// The 95 % interval's bounds (`null` for an infinite bound), with `interval` = `ci95`.
    ci95: Option<[Option<f64>; 2]>,
    /// With `interval` = `needs_trials`: the trials the percentile needs for an interval.
    needs_trials: Option<usize>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn claim_json(r: &ClaimResult) -> ClaimJson<'_> {
    let (interval, ci95, needs_trials) = match r.interval {
        Interval::Ci95(lo, hi) => ("ci95", Some([finite(lo), finite(hi)]), None),
        Interval::Observed => ("observed", None, None),
        Interval::NeedsTrials(n) if n != usize::MAX => ("needs_trials", None, Some(n)),
        Interval::NeedsTrials(_) | Interval::None => ("none", None, None),
    };
    ClaimJson {
        index: r.index,
        name: r.claim.name.as_deref(),
        instance: &r.instance,
        strategy: r.strategy.name(),
        metric: r.claim.metric.name(),
        statistic: r.claim.statistic.name(),
        op: r.claim.comparison.symbol(),
        value: r.claim.value,
        source: &r.claim.source,
        passed: r.passed,
        marginal: r.marginal,
        trials: r.trials,
        unresolved: r.unresolved,
        measured: r.measured.and_then(finite),
        never: r.measured == Some(f64::INFINITY),
        share_count: r.share_count,
        interval,
        ci95,
        needs_trials,
    }
}

/// Renders what `check --format json` prints: every file's claims, decided.
pub fn render_check_json(files: &[CheckedFile]) -> String {
    let json = CheckJson {
        tool: "eureka-sim",
        version: env!("CARGO_PKG_VERSION"),
        passed: files.iter().map(|f| f.passed).sum(),
        failed: files.iter().map(|f| f.failed).sum(),
        files: files
            .iter()
            .map(|f| CheckFileJson {
                scenario: &f.source,
                seed: f.seed,
                passed: f.passed,
                failed: f.failed,
                claims: f.results.iter().map(claim_json).collect(),
            })
            .collect(),
    };
    pretty(&json)
}
