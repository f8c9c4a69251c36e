//! `summary.json`: the run's results for machines, with what is needed to reproduce them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::fnv1a64;
use crate::scenario::Scenario;

use super::SummaryRow;

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
    let shutdowns = scenario
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
        .collect();
    let json = SummaryJson {
        tool: "eureka-sim",
        version: env!("CARGO_PKG_VERSION"),
        scenario: &scenario.name,
        scenario_hash: scenario_hash(scenario),
        seed: scenario.simulation.seed,
        trials: scenario.simulation.trials,
        release: scenario.simulation.release.to_string(),
        shutdowns,
    };
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}
