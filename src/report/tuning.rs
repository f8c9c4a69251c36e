//! What `eureka-sim serve`'s page shows of a setting, as JSON: the controls with their keys,
//! values and the release's defaults, and a snapshot of a progressive run (the percentiles with
//! their intervals, the exposure CDF against the baseline, the dead-hit distribution, the
//! stages the news waited in, one trial's timeline, and `summary.json` itself). The figures are
//! the run report's own (`summarize`, `render_summary_json`, `exposure_cdf`, `run_timeline`,
//! `stage_means`), so the page and `eureka-sim run` cannot disagree.

mod export;

pub use export::{Export, ExportError, Snippet, export, scenario_toml, snippets};

use serde::Serialize;

use crate::experiment::tuning::{CONTROLS, Progress, Role, Tuned, ValueKind, release_defaults};
use crate::experiment::{Stats, TrialOutcome};
use crate::scenario::{Metric, Scenario};

use super::explain::run_timeline;
use super::plot::{CdfSeries, cdf_svg_string, timeline_svg_string};
use super::run_report::{exposure_cdf, median_trial, timeline_caption};
use super::terminal::{stage_means, stage_names};
use super::{render_summary_json, summarize};

#[derive(Debug, Serialize)]
struct ControlJson {
    id: &'static str,
    label: &'static str,
    role: &'static str,
    /// The key as `application.yml` (Spring keys) or the scenario (`shutdown.strategy`) spells it.
    key: String,
    unit: &'static str,
    kind: ValueKind,
    choices: Vec<String>,
    /// The value with the page's settings (`null`: the control does not apply).
    value: Option<String>,
    /// The scenario's own value.
    scenario: Option<String>,
    /// The default for the chosen release (`null`: none, or the control does not apply).
    default: Option<String>,
}

#[derive(Debug, Serialize)]
struct ControlsJson {
    scenario: String,
    release: String,
    balancer: &'static str,
    controls: Vec<ControlJson>,
    roles: Vec<&'static str>,
}

/// The controls of the page for `tuned`: each one's key, value, the scenario's and the default
/// of the chosen release.
pub fn controls_json(tuned: &Tuned, base: &Scenario) -> String {
    let release = tuned.current.simulation.release.name();
    let defaults = release_defaults(&release).unwrap_or_default();
    let controls = CONTROLS
        .iter()
        .map(|c| {
            let value = c.value_in(&tuned.current);
            ControlJson {
                id: c.id,
                label: c.label,
                role: c.role.name(),
                key: c.shown_key(),
                unit: c.unit,
                kind: c.kind,
                choices: c.choices(value.as_deref()),
                scenario: c.value_in(base),
                value,
                default: defaults
                    .iter()
                    .find(|(id, _)| *id == c.id)
                    .and_then(|(_, v)| v.clone()),
            }
        })
        .collect();
    to_json(&ControlsJson {
        scenario: base.name.clone(),
        release,
        balancer: tuned.current.balancer_name(),
        controls,
        roles: Role::ALL.iter().map(|r| r.name()).collect(),
    })
}

/// A percentile with its distribution-free 95 % interval (`experiment::intervals`); `value` is
/// `null` while the trials are too few for it, and `needs` says how many it needs.
#[derive(Debug, Serialize)]
struct PercentileJson {
    value: Option<i64>,
    ci95: Option<[i64; 2]>,
    needs: Option<usize>,
}

#[derive(Debug, Serialize)]
struct StatJson {
    trials: usize,
    unresolved: usize,
    p50: PercentileJson,
    p90: PercentileJson,
    p99: PercentileJson,
    max: Option<i64>,
    mean: Option<f64>,
    mean_ci95: Option<[f64; 2]>,
}

fn stat_json(stats: &Stats) -> StatJson {
    let p = |p: f64, value: Option<i64>| PercentileJson {
        value,
        ci95: value
            .and_then(|_| stats.percentile_ci95(p))
            .map(|(a, b)| [a, b]),
        needs: stats.needs_trials(p).filter(|&n| n != usize::MAX),
    };
    StatJson {
        trials: stats.trials,
        unresolved: stats.unresolved,
        p50: p(50.0, stats.p50),
        p90: p(90.0, stats.p90),
        p99: p(99.0, stats.p99),
        max: stats.max,
        mean: stats.mean,
        mean_ci95: stats.mean_ci95.map(|(a, b)| [a, b]),
    }
}

#[derive(Debug, Serialize)]
struct StagesJson {
    /// The trials in which every stage resolved (the means are over them).
    trials: usize,
    means_ms: [f64; 4],
}

#[derive(Debug, Serialize)]
struct FiguresJson {
    strategy: &'static str,
    exposure: StatJson,
    dead_hits: StatJson,
    stages: Option<StagesJson>,
}

fn figures(scenario: &Scenario, outcomes: &[TrialOutcome]) -> (FiguresJson, Vec<Option<i64>>) {
    let rows = summarize(scenario, outcomes);
    let stat = |m: Metric| {
        rows.iter()
            .find(|r| r.shutdown == 0 && r.metric == m)
            .map(|r| r.stats.clone())
            .unwrap_or_else(|| Stats::of(std::iter::empty()))
    };
    let dead_hits = stat(Metric::DeadHits);
    let hits = outcomes
        .iter()
        .map(|o| o.shutdowns.first().and_then(|x| x.value(Metric::DeadHits)))
        .collect();
    let json = FiguresJson {
        strategy: scenario.shutdowns[0].strategy.name(),
        exposure: stat_json(&stat(Metric::ExposureMs)),
        dead_hits: stat_json(&dead_hits),
        stages: stage_means(0, outcomes).map(|(trials, means_ms)| StagesJson { trials, means_ms }),
    };
    (json, hits)
}

/// The dead hits of the two runs in common bins: `edges[i]..edges[i + 1]` (the last bin
/// closed), bin widths 1, 2 or 5 times a power of ten, about 20 bins.
#[derive(Debug, Serialize, PartialEq)]
struct HistogramJson {
    edges: Vec<i64>,
    current: Vec<usize>,
    baseline: Vec<usize>,
    /// Trials without a value in each run.
    current_unresolved: usize,
    baseline_unresolved: usize,
}

/// The smallest 1, 2 or 5 times a power of ten at least `raw`.
fn nice_width(raw: f64) -> i64 {
    let mut unit = 1i64;
    loop {
        for m in [1, 2, 5] {
            if (m * unit) as f64 >= raw {
                return m * unit;
            }
        }
        unit = unit.saturating_mul(10);
        if unit >= i64::MAX / 10 {
            return unit;
        }
    }
}

fn histogram(current: &[Option<i64>], baseline: &[Option<i64>]) -> HistogramJson {
    let max = current
        .iter()
        .chain(baseline)
        .flatten()
        .copied()
        .max()
        .unwrap_or(0)
        .max(0);
    let width = nice_width((max + 1) as f64 / 20.0);
    let bins = (max / width + 1) as usize;
    let count = |values: &[Option<i64>]| {
        let mut counts = vec![0usize; bins];
        for v in values.iter().flatten() {
            counts[((*v).max(0) / width) as usize] += 1;
        }
        counts
    };
    HistogramJson {
        edges: (0..=bins as i64).map(|i| i * width).collect(),
        current: count(current),
        baseline: count(baseline),
        current_unresolved: current.iter().filter(|v| v.is_none()).count(),
        baseline_unresolved: baseline.iter().filter(|v| v.is_none()).count(),
    }
}

#[derive(Debug, Serialize)]
struct SnapshotJson<'a> {
    /// Trials done in both runs, and the trials of the setting.
    done: usize,
    total: u32,
    /// Whether every trial is in: the figures are then the CLI's for the same settings.
    complete: bool,
    query: String,
    overrides: &'a [String],
    command: String,
    instance: &'a str,
    balancer: &'static str,
    stage_names: [String; 4],
    current: FiguresJson,
    baseline: FiguresJson,
    dead_hits: HistogramJson,
    cdf_svg: String,
    timeline_svg: String,
    timeline_caption: String,
    /// `summary.json` of the trials done (`eureka-sim run --format json` once complete).
    summary: Box<serde_json::value::RawValue>,
    warnings: &'a [String],
}

/// The page's figures for the trials done so far of `tuned` (`source` names the scenario file
/// in the equivalent command line).
pub fn snapshot_json(tuned: &Tuned, progress: &Progress, source: &str) -> String {
    let done = progress.done();
    let total = tuned.current.simulation.trials;
    let current_outcomes = &progress.current[..done];
    let baseline_outcomes = &progress.baseline[..done];
    // The scenario with the trials done, so that summary.json's `trials` is what it summarises
    // (and once complete, the CLI's scenario exactly, hash included).
    let mut so_far = tuned.current.clone();
    so_far.simulation.trials = done as u32;
    let summary_text = render_summary_json(&so_far, &summarize(&so_far, current_outcomes));
    // Embedded as the bytes `run --format json` prints (parsed again, a float could move).
    let summary = serde_json::value::RawValue::from_string(summary_text)
        .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned());
    let (current, current_hits) = figures(&tuned.current, current_outcomes);
    let (baseline, baseline_hits) = figures(&tuned.baseline, baseline_outcomes);
    let cdf_svg = cdf_of(tuned, current_outcomes, baseline_outcomes);
    let (timeline_svg, caption) = timeline_of(&tuned.current, current_outcomes);
    let balancer = tuned.current.balancer_name();
    let mut command = format!("eureka-sim run {source}");
    for o in &tuned.overrides {
        command.push_str(&format!(" --set {}", shell_word(o)));
    }
    to_json(&SnapshotJson {
        done,
        total,
        complete: done == total as usize,
        query: tuned.settings.query(),
        overrides: &tuned.overrides,
        command,
        instance: &tuned.current.shutdowns[0].instance,
        balancer,
        stage_names: stage_names(balancer),
        current,
        baseline,
        dead_hits: histogram(&current_hits, &baseline_hits),
        cdf_svg,
        timeline_svg,
        timeline_caption: caption,
        summary,
        warnings: &tuned.current.warnings,
    })
}

/// `word` quoted for a POSIX shell when it holds anything but plain characters.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.=[]*/:,+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The exposure CDF of the setting against the baseline's, as SVG.
fn cdf_of(tuned: &Tuned, current: &[TrialOutcome], baseline: &[TrialOutcome]) -> String {
    let mut plot = exposure_cdf(&tuned.current, 0, current);
    let base = exposure_cdf(&tuned.baseline, 0, baseline);
    let label = |s: &str| format!("{s} ({})", if s == "setting" { "page" } else { "file" });
    let mut series: Vec<CdfSeries> = base.series;
    for s in &mut series {
        s.label = label("baseline");
    }
    for s in &mut plot.series {
        s.label = label("setting");
    }
    series.append(&mut plot.series);
    plot.series = series;
    cdf_svg_string(&plot).unwrap_or_default()
}

/// The timeline of the setting's median-exposure trial, as `run`'s report draws it.
fn timeline_of(scenario: &Scenario, outcomes: &[TrialOutcome]) -> (String, String) {
    let Some(trial) =
        median_trial(outcomes, 0).and_then(|t| outcomes.iter().find(|o| o.trial == t))
    else {
        return (String::new(), String::new());
    };
    let plot = run_timeline(scenario, 0, trial);
    let caption = timeline_caption(&plot);
    (timeline_svg_string(&plot).unwrap_or_default(), caption)
}

#[derive(Debug, Serialize)]
struct ErrorJson<'a> {
    error: &'a str,
}

/// [`export`] as JSON.
pub fn export_json(
    source: &crate::scenario::ScenarioSource,
    base: &Scenario,
    tuned: &Tuned,
) -> Result<String, ExportError> {
    Ok(to_json(&export(source, base, tuned)?))
}

/// An error for the page: `{"error": "..."}`.
pub fn error_json(message: &str) -> String {
    to_json(&ErrorJson { error: message })
}

fn to_json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The statistics the page shows for the exposure of a complete run, keyed by name, for tests.
#[cfg(test)]
fn exposure_row(
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
) -> std::collections::BTreeMap<&'static str, i64> {
    let rows = summarize(scenario, outcomes);
    let row = rows
        .iter()
        .find(|r| r.metric == Metric::ExposureMs)
        .unwrap();
    let mut out = std::collections::BTreeMap::new();
    if let Some(v) = row.stats.p50 {
        out.insert("p50", v);
    }
    if let Some(v) = row.stats.p99 {
        out.insert("p99", v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::RequestMode;
    use crate::experiment::tuning::{Progress, chunks, tune};
    use crate::scenario::ScenarioSource;

    #[test]
    fn nice_widths_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_width(0.05), 1);
        assert_eq!(nice_width(1.0), 1);
        assert_eq!(nice_width(1.5), 2);
        assert_eq!(nice_width(3.0), 5);
        assert_eq!(nice_width(7.0), 10);
        assert_eq!(nice_width(120.0), 200);
    }

    #[test]
    fn the_histogram_counts_every_value_once_in_common_bins() {
        // max 39 -> width nice(40 / 20 = 2) = 2, bins 0..2, ..., 38..40.
        let current = [Some(0), Some(1), Some(2), Some(39), None];
        let baseline = [Some(3), Some(3), None, None];
        let h = histogram(&current, &baseline);
        assert_eq!(h.edges.len(), 21);
        assert_eq!(h.edges[1], 2);
        assert_eq!(h.current[0], 2);
        assert_eq!(h.current[1], 1);
        assert_eq!(h.current[19], 1);
        assert_eq!(h.baseline[1], 2);
        assert_eq!(h.current.iter().sum::<usize>(), 4);
        assert_eq!((h.current_unresolved, h.baseline_unresolved), (1, 2));
        let none = histogram(&[None], &[]);
        assert_eq!(none.edges, [0, 1]);
        assert_eq!(none.current, [0]);
    }

    #[test]
    fn a_complete_snapshot_carries_the_runs_summary_json() {
        let source = ScenarioSource::read(std::path::Path::new("scenarios/kill-9.toml")).unwrap();
        let base = source.parse(&[]).unwrap();
        let pairs = [("trials", "20"), ("fetch", "5")].map(|(a, b)| (a.into(), b.into()));
        let tuned = tune(&source, &base, &pairs).unwrap();
        let mut progress = Progress::default();
        let mode = RequestMode::Batched;
        for range in chunks(20, 4) {
            progress.extend(&tuned, range, mode, &[]);
        }
        let json: serde_json::Value =
            serde_json::from_str(&snapshot_json(&tuned, &progress, "kill-9.toml")).unwrap();
        let outcomes = crate::experiment::run_trials_with(&tuned.current, mode, &|| {});
        let expected = render_summary_json(&tuned.current, &summarize(&tuned.current, &outcomes));
        let expected: serde_json::Value = serde_json::from_str(&expected).unwrap();
        assert_eq!(json["summary"], expected);
        assert_eq!(json["complete"], true);
        assert_eq!(json["done"], 20);
        let row = exposure_row(&tuned.current, &outcomes);
        assert_eq!(json["current"]["exposure"]["p50"]["value"], row["p50"]);
        // 20 trials are too few for p99 (it needs 299): withheld, and the page says so.
        assert_eq!(
            json["current"]["exposure"]["p99"]["value"],
            serde_json::Value::Null
        );
        assert_eq!(json["current"]["exposure"]["p99"]["needs"], 299);
        assert_eq!(
            json["command"],
            "eureka-sim run kill-9.toml --set caller[*].eureka.client.registry-fetch-interval-seconds=5 --set simulation.trials=20"
        );
        assert!(json["cdf_svg"].as_str().unwrap().starts_with("<svg"));
        assert!(json["timeline_svg"].as_str().unwrap().starts_with("<svg"));
    }
}
