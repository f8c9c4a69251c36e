//! Conformance: the simulator beside trials of the real stack (`conformance/rig.py`).
//!
//! The rig stops a real Spring Cloud instance next to a real Eureka server and writes one row
//! per trial (`real-<strategy>.csv`). Here those rows are read, the equivalent scenario is run
//! under the same strategy and wait, and each metric's two distributions are compared with the
//! two-sample Kolmogorov-Smirnov test.
//!
//! How the two sides are put on one scale, per trial:
//! - `last_dead_hit_ms`: the last request sent to the stopped instance that failed, after it
//!   stopped serving (the real rig's and the simulator's `last_dead_hit_ms`). Not trials.csv's
//!   `exposure_ms`, which runs until the instance left the last caller's list: the rig sees
//!   requests, not lists, so this is the quantity both sides measure. A trial
//!   with no such request counts as 0; a trial that never resolved (the rig gave up, the
//!   simulated instance was never dropped) as +infinity, so it can only widen the gap.
//! - `dead_hits`: requests to the stopped instance that failed, after it stopped serving.

use std::collections::BTreeMap;
use std::path::Path;

use crate::experiment::{Stats, TrialOutcome, run_trials};
use crate::scenario::{Scenario, Strategy};

/// One trial of the real stack, as `conformance/rig.py` writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct RealTrial {
    /// The line of the row in its file (1-based, the header is line 1).
    pub line: usize,
    pub trial: u32,
    pub strategy: Strategy,
    /// For pause and service-registry: how long the instance kept serving (ms).
    pub wait_ms: u64,
    pub dead_hits: u64,
    /// Last failed request to the stopped instance, ms after it stopped serving.
    pub last_dead_hit_ms: Option<i64>,
    /// The rig gave up waiting for the callers to drop the instance.
    pub unresolved: bool,
    /// CPUs' worth of work done by anything but the rig during the trial's window (`other_cpu`,
    /// written by the matrix rig; `None` in files without the column or a trial without the
    /// reading). The matrix leaves out trials above its `[quiet]` limit (`experiment::matrix`).
    pub other_cpu: Option<f64>,
}

/// What is wrong with a file of real trials.
#[derive(Debug, thiserror::Error)]
pub enum RealTrialsError {
    #[error("{file}: cannot read it: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}:{line}: {message}")]
    Row {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}: no trials: the file has a header but no rows")]
    Empty { file: String },
}

/// The columns every file of real trials needs (others, such as `stop_epoch_ms` or `chosen`,
/// are kept for people and ignored here).
pub const REAL_COLUMNS: [&str; 6] = [
    "trial",
    "strategy",
    "wait_ms",
    "dead_hits",
    "last_dead_hit_ms",
    "unresolved",
];

/// Most (strategy, wait) groups compared in one call: each runs the scenario's trials.
pub const MAX_GROUPS: usize = 32;

/// Longest `run-<strategy>.json` read beside a file of real trials.
const MAX_RUN_INFO_BYTES: u64 = 1 << 20;

/// Longest file of real trials read (the rig writes about 100 bytes a trial).
const MAX_REAL_BYTES: u64 = 64 << 20;

/// Reads a `real-<strategy>.csv` written by the rig.
pub fn read_real_trials(path: &Path) -> Result<Vec<RealTrial>, RealTrialsError> {
    let file = path.display().to_string();
    let io = |source| RealTrialsError::Io {
        file: file.clone(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_REAL_BYTES {
        return Err(RealTrialsError::Row {
            file,
            line: 1,
            message: format!(
                "the file is {size} bytes; at most {MAX_REAL_BYTES} are read (about 600 000 trials)"
            ),
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse_real_trials(&text, &file)
}

/// [`read_real_trials`] of a file's text; `file` names it in errors.
pub fn parse_real_trials(text: &str, file: &str) -> Result<Vec<RealTrial>, RealTrialsError> {
    let row_error = |line: usize, message: String| RealTrialsError::Row {
        file: file.to_string(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| row_error(1, format!("cannot read the header: {e}")))?
        .clone();
    let mut index = [0usize; REAL_COLUMNS.len()];
    for (slot, name) in index.iter_mut().zip(REAL_COLUMNS) {
        *slot = header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| {
                row_error(
                    1,
                    format!(
                        "no column `{name}`; a file of real trials needs {}",
                        REAL_COLUMNS.join(", ")
                    ),
                )
            })?;
    }
    let other_column = header.iter().position(|h| h.trim() == "other_cpu");
    let mut trials = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            row_error(line, format!("not a CSV row: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let cell = |i: usize| record.get(index[i]).unwrap_or("").trim();
        let mut trial = parse_row(&cell, line).map_err(|m| row_error(line, m))?;
        if let Some(i) = other_column {
            let text = record.get(i).unwrap_or("").trim();
            trial.other_cpu = match text.parse::<f64>() {
                // Not measured (an early rig's reading was lost): the trial is not quiet.
                _ if text.is_empty() => None,
                Ok(v) if v.is_finite() && v >= 0.0 => Some(v),
                _ => {
                    return Err(row_error(
                        line,
                        format!(
                            "column `other_cpu` is `{text}`; allowed: empty (not measured) or \
                             CPUs from 0, such as 0.12"
                        ),
                    ));
                }
            };
        }
        trials.push(trial);
    }
    if trials.is_empty() {
        return Err(RealTrialsError::Empty {
            file: file.to_string(),
        });
    }
    Ok(trials)
}

fn parse_row<'a>(cell: &dyn Fn(usize) -> &'a str, line: usize) -> Result<RealTrial, String> {
    fn number<T: std::str::FromStr>(text: &str, column: &str, allowed: &str) -> Result<T, String> {
        text.parse()
            .map_err(|_| format!("column `{column}` is `{text}`; allowed: {allowed}"))
    }
    let strategy = Strategy::parse(cell(1)).ok_or_else(|| {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        format!(
            "column `strategy` is `{}`; allowed: {}",
            cell(1),
            names.join(", ")
        )
    })?;
    let last = cell(4);
    let last_dead_hit_ms = if last.is_empty() {
        None
    } else {
        Some(number::<i64>(
            last,
            "last_dead_hit_ms",
            "empty (no dead hit) or whole milliseconds",
        )?)
    };
    let unresolved = match cell(5) {
        "0" | "false" | "" => false,
        "1" | "true" => true,
        other => {
            return Err(format!(
                "column `unresolved` is `{other}`; allowed: 0, 1, true, false"
            ));
        }
    };
    Ok(RealTrial {
        line,
        trial: number(cell(0), "trial", "a whole number from 0")?,
        strategy,
        wait_ms: number(cell(2), "wait_ms", "whole milliseconds from 0")?,
        dead_hits: number(cell(3), "dead_hits", "a whole number from 0")?,
        last_dead_hit_ms,
        unresolved,
        other_cpu: None,
    })
}

/// What the rig recorded about one run (`run-<strategy>.json` beside `real-<strategy>.csv`):
/// the versions it read from the jars and its wall time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    /// (artifact, version), sorted by artifact.
    pub versions: Vec<(String, String)>,
    pub java: String,
    pub wall_s: Option<f64>,
    pub startup_wall_s: Option<f64>,
    /// Whether the rig restarted the Eureka server before every trial.
    pub fresh_server: bool,
}

/// The `run-<strategy>.json` beside a `real-<strategy>.csv`, if there is one that reads.
pub fn read_run_info(real_csv: &Path) -> Option<RunInfo> {
    let name = real_csv.file_name()?.to_str()?;
    let strategy = name.strip_prefix("real-")?.strip_suffix(".csv")?;
    let json_path = real_csv.with_file_name(format!("run-{strategy}.json"));
    if std::fs::metadata(&json_path).ok()?.len() > MAX_RUN_INFO_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(json_path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let versions = value
        .get("versions")
        .and_then(|v| v.as_object())
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let java = value
        .get("java_version")
        .and_then(|v| v.as_str())
        .and_then(|s| s.lines().next())
        .unwrap_or_default()
        .to_string();
    Some(RunInfo {
        versions,
        java,
        wall_s: value.get("wall_s").and_then(serde_json::Value::as_f64),
        startup_wall_s: value
            .get("startup_wall_s")
            .and_then(serde_json::Value::as_f64),
        fresh_server: value
            .get("fresh_server")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
    })
}

/// A metric compared between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConformMetric {
    /// The last failed request to the stopped instance (0 without one, +inf unresolved).
    Exposure,
    DeadHits,
}

impl ConformMetric {
    pub const ALL: [ConformMetric; 2] = [ConformMetric::Exposure, ConformMetric::DeadHits];

    pub fn name(self) -> &'static str {
        match self {
            ConformMetric::Exposure => "last_dead_hit_ms",
            ConformMetric::DeadHits => "dead_hits",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ConformMetric::Exposure => "last dead hit (the last failed request to it)",
            ConformMetric::DeadHits => "dead hits",
        }
    }

    pub fn is_time(self) -> bool {
        self == ConformMetric::Exposure
    }

    /// The real trial's value; `None` is +infinity (unresolved).
    pub fn real(self, trial: &RealTrial) -> Option<i64> {
        match self {
            _ if trial.unresolved => None,
            ConformMetric::Exposure => Some(trial.last_dead_hit_ms.unwrap_or(0)),
            ConformMetric::DeadHits => Some(trial.dead_hits as i64),
        }
    }

    /// The simulated trial's value for its first shutdown; `None` is +infinity (the instance
    /// never left the balancer's list, or never stopped serving).
    pub fn simulated(self, outcome: &TrialOutcome) -> Option<i64> {
        let shutdown = outcome.shutdowns.first()?;
        shutdown.t_stop_ms?;
        let dropped = shutdown.exposure_ms.is_some();
        match self {
            ConformMetric::Exposure if dropped => Some(shutdown.last_dead_hit_ms.unwrap_or(0)),
            ConformMetric::DeadHits if dropped => Some(shutdown.dead_hits as i64),
            _ => None,
        }
    }
}

/// The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical
/// CDFs. `None` values are +infinity: they sit above every value and never close the gap.
pub fn ks_statistic(a: &[Option<i64>], b: &[Option<i64>]) -> f64 {
    let sorted = |v: &[Option<i64>]| {
        let mut s: Vec<i64> = v.iter().flatten().copied().collect();
        s.sort_unstable();
        s
    };
    let (sa, sb) = (sorted(a), sorted(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < sa.len() || j < sb.len() {
        let x = match (sa.get(i), sb.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        while sa.get(i) == Some(&x) {
            i += 1;
        }
        while sb.get(j) == Some(&x) {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

/// The asymptotic p-value of a two-sample KS statistic `d` for sample sizes `n` and `m`:
/// `Q_KS(λ)` with `λ = (√nₑ + 0.12 + 0.11/√nₑ) d` and `nₑ = nm/(n+m)` (Stephens' correction,
/// Numerical Recipes §14.3), where `Q_KS(λ) = 2 Σ_{j≥1} (-1)^{j-1} e^{-2j²λ²}`. With ties
/// (counts, whole milliseconds) the test is conservative: the true p-value is larger.
pub fn ks_p_value(d: f64, n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    let ne = (n * m) as f64 / (n + m) as f64;
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    kolmogorov_q(lambda)
}

/// `Q_KS(λ) = P(K > λ)` of the Kolmogorov distribution.
pub fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda < 0.2 {
        return 1.0; // the series converges slowly here, and the sum is 1 to 1e-9
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for j in 1..=100 {
        let j = f64::from(j);
        let term = sign * (-2.0 * j * j * lambda * lambda).exp();
        sum += term;
        if term.abs() < 1e-12 {
            break;
        }
        sign = -sign;
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// One metric's comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricComparison {
    pub metric: ConformMetric,
    pub real: Stats,
    pub simulated: Stats,
    pub real_values: Vec<Option<i64>>,
    pub simulated_values: Vec<Option<i64>>,
    pub ks_d: f64,
    pub p_value: f64,
    /// `p_value < alpha`: the two samples differ.
    pub rejected: bool,
}

impl MetricComparison {
    fn new(
        metric: ConformMetric,
        real: Vec<Option<i64>>,
        simulated: Vec<Option<i64>>,
        alpha: f64,
    ) -> MetricComparison {
        let ks_d = ks_statistic(&real, &simulated);
        let p_value = ks_p_value(ks_d, real.len(), simulated.len());
        MetricComparison {
            metric,
            real: Stats::of(real.iter().copied()),
            simulated: Stats::of(simulated.iter().copied()),
            real_values: real,
            simulated_values: simulated,
            ks_d,
            p_value,
            rejected: p_value < alpha,
        }
    }
}

/// The real trials of one strategy and wait beside the simulator's.
#[derive(Debug, Clone)]
pub struct ConformGroup {
    pub strategy: Strategy,
    pub wait_ms: u64,
    /// The file the real trials came from.
    pub source: String,
    pub real_trials: usize,
    /// The rig's record of the run, when found beside the file.
    pub run: Option<RunInfo>,
    /// The scenario the simulator ran (with the group's strategy and wait).
    pub scenario: Scenario,
    pub metrics: Vec<MetricComparison>,
}

impl ConformGroup {
    /// `kill-9`, or `service-registry-5s` for a strategy that waits.
    pub fn name(&self) -> String {
        if self.wait_ms > 0 {
            format!("{}-{}s", self.strategy.name(), self.wait_ms / 1000)
        } else {
            self.strategy.name().to_string()
        }
    }
}

/// The real trials grouped by (strategy, wait), in first-seen order; `source` is the file each
/// came from.
pub fn group_real_trials(
    files: &[(String, Vec<RealTrial>)],
) -> Vec<((Strategy, u64), String, Vec<RealTrial>)> {
    let mut order: Vec<(Strategy, u64)> = Vec::new();
    let mut groups: BTreeMap<usize, (String, Vec<RealTrial>)> = BTreeMap::new();
    for (file, trials) in files {
        for trial in trials {
            let key = (trial.strategy, trial.wait_ms);
            let slot = order.iter().position(|k| *k == key).unwrap_or_else(|| {
                order.push(key);
                order.len() - 1
            });
            groups
                .entry(slot)
                .or_insert_with(|| (file.clone(), Vec::new()))
                .1
                .push(trial.clone());
        }
    }
    groups
        .into_iter()
        .map(|(slot, (file, trials))| (order[slot], file, trials))
        .collect()
}

/// The `--set` overrides that put a group's strategy and wait on the scenario's first shutdown.
/// Waits are whole seconds in a scenario.
pub fn group_overrides(strategy: Strategy, wait_ms: u64) -> Result<Vec<String>, String> {
    let mut sets = vec![format!("shutdown[0].strategy={}", strategy.name())];
    if strategy.waits() {
        if !wait_ms.is_multiple_of(1000) {
            return Err(format!(
                "wait_ms {wait_ms} is not whole seconds; a scenario's wait-s is"
            ));
        }
        sets.push(format!("shutdown[0].wait-s={}", wait_ms / 1000));
    }
    Ok(sets)
}

/// Runs `scenario` (already carrying the group's strategy and wait) and compares it with the
/// group's real trials at level `alpha`.
pub fn compare_group(
    strategy: Strategy,
    wait_ms: u64,
    source: String,
    real: &[RealTrial],
    scenario: Scenario,
    alpha: f64,
) -> ConformGroup {
    let outcomes = run_trials(&scenario);
    compare_outcomes(strategy, wait_ms, source, real, scenario, &outcomes, alpha)
}

/// [`compare_group`] on outcomes already simulated (the matrix runs a cell's scenario once for
/// its row and its report).
pub fn compare_outcomes(
    strategy: Strategy,
    wait_ms: u64,
    source: String,
    real: &[RealTrial],
    scenario: Scenario,
    outcomes: &[TrialOutcome],
    alpha: f64,
) -> ConformGroup {
    let metrics = ConformMetric::ALL
        .into_iter()
        .map(|metric| {
            MetricComparison::new(
                metric,
                real.iter().map(|t| metric.real(t)).collect(),
                outcomes.iter().map(|o| metric.simulated(o)).collect(),
                alpha,
            )
        })
        .collect();
    ConformGroup {
        strategy,
        wait_ms,
        run: read_run_info(Path::new(&source)),
        source,
        real_trials: real.len(),
        scenario,
        metrics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Kolmogorov distribution's upper quantiles (Smirnov 1948's table):
    /// P(K > 1.3581) = 0.05, P(K > 1.6276) = 0.01, P(K > 1.2238) = 0.10.
    #[test]
    fn kolmogorov_q_matches_the_tabled_quantiles() {
        assert!((kolmogorov_q(1.3581) - 0.05).abs() < 2e-4);
        assert!((kolmogorov_q(1.6276) - 0.01).abs() < 1e-4);
        assert!((kolmogorov_q(1.2238) - 0.10).abs() < 2e-4);
        assert_eq!(kolmogorov_q(0.0), 1.0);
        assert!(kolmogorov_q(5.0) < 1e-20);
    }

    /// By hand: a = {1, 2, 3}, b = {2, 4, 5, 6}; after 3 the CDFs are 1 and 1/4: D = 3/4.
    #[test]
    fn ks_statistic_by_hand() {
        let a = [Some(1), Some(2), Some(3)];
        let b = [Some(2), Some(4), Some(5), Some(6)];
        assert!((ks_statistic(&a, &b) - 0.75).abs() < 1e-12);
        assert_eq!(ks_statistic(&a, &a), 0.0);
        // A value at +infinity never closes: {1, inf} against {1, 2} tops out at 1/2 vs 1.
        assert!((ks_statistic(&[Some(1), None], &[Some(1), Some(2)]) - 0.5).abs() < 1e-12);
    }

    /// With ties the statistic is taken after the whole tie: {1, 1} against {1, 2} is 1/2
    /// (at 1: 1 vs 1/2), not 1 (which a step inside the tie would give).
    #[test]
    fn ks_statistic_steps_over_ties_at_once() {
        let d = ks_statistic(&[Some(1), Some(1)], &[Some(1), Some(2)]);
        assert!((d - 0.5).abs() < 1e-12);
    }

    /// n = m = 30 and D = 0.4: nₑ = 15, λ = (3.873 + 0.12 + 0.0284) × 0.4 = 1.6087, and
    /// Q_KS(1.6087) = 0.0113 (the series by hand: 2(e^{-5.176} - e^{-20.70} + ...)).
    #[test]
    fn ks_p_value_uses_the_effective_size() {
        let p = ks_p_value(0.4, 30, 30);
        assert!((p - 2.0 * (-5.1758f64).exp()).abs() < 2e-4, "{p}");
    }

    const GOOD: &str = "trial,strategy,wait_ms,stop_epoch_ms,dead_hits,last_dead_hit_ms,unresolved\n\
                        0,kill-9,0,1700000000000,37,7412,0\n\
                        1,kill-15,0,1700000010000,0,,0\n\
                        2,service-registry,5000,1700000020000,3,99,1\n";

    #[test]
    fn real_trials_are_read_by_column_name() {
        let trials = parse_real_trials(GOOD, "real.csv").unwrap();
        assert_eq!(trials.len(), 3);
        assert_eq!(trials[0].strategy, Strategy::Kill9);
        assert_eq!(trials[0].last_dead_hit_ms, Some(7412));
        assert_eq!(trials[1].last_dead_hit_ms, None);
        assert_eq!(trials[2].line, 4);
        assert!(trials[2].unresolved);
        assert_eq!(ConformMetric::Exposure.real(&trials[1]), Some(0));
        assert_eq!(ConformMetric::Exposure.real(&trials[2]), None);
    }

    #[test]
    fn bad_real_trials_name_the_file_line_column_and_what_is_allowed() {
        let missing = "trial,strategy\n0,kill-9\n";
        let e = parse_real_trials(missing, "r.csv").unwrap_err().to_string();
        assert!(e.starts_with("r.csv:1: no column `wait_ms`"), "{e}");
        let bad = GOOD.replace("kill-15", "kill-3");
        let e = parse_real_trials(&bad, "r.csv").unwrap_err().to_string();
        assert!(
            e.starts_with("r.csv:3: column `strategy` is `kill-3`; allowed: kill-9"),
            "{e}"
        );
        let bad = GOOD.replace(",7412,", ",7.4s,");
        let e = parse_real_trials(&bad, "r.csv").unwrap_err().to_string();
        assert!(
            e.contains("r.csv:2: column `last_dead_hit_ms` is `7.4s`"),
            "{e}"
        );
        let e = parse_real_trials(
            "trial,strategy,wait_ms,dead_hits,last_dead_hit_ms,unresolved\n",
            "r.csv",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no trials"), "{e}");
        let e = parse_real_trials("\u{0}\u{1}", "r.csv")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.csv:1:"), "{e}");
    }

    #[test]
    fn groups_keep_first_seen_order_and_waits_apart() {
        let trials = parse_real_trials(GOOD, "a.csv").unwrap();
        let groups = group_real_trials(&[("a.csv".into(), trials)]);
        let keys: Vec<_> = groups.iter().map(|g| g.0).collect();
        assert_eq!(
            keys,
            [
                (Strategy::Kill9, 0),
                (Strategy::Kill15, 0),
                (Strategy::ServiceRegistry, 5000)
            ]
        );
        assert_eq!(
            group_overrides(Strategy::ServiceRegistry, 5000).unwrap(),
            [
                "shutdown[0].strategy=service-registry",
                "shutdown[0].wait-s=5"
            ]
        );
        assert!(group_overrides(Strategy::Pause, 5500).is_err());
    }
}
