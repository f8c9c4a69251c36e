//! The conformance matrix (`conformance/matrix.toml`): each cell's real trials beside the
//! simulator's, reduced to one row of figures (`conformance/results/matrix.csv`).
//!
//! A cell names a configuration of the real stack (train, servers, caller, strategy, fault);
//! `conformance/matrix.py gen` writes its `cell.properties` (read by the real processes and by
//! the scenario) and its `scenario.toml`; `matrix.py run` appends the real trials to
//! `conformance/results/matrix/<cell>/real.csv`. Here the quiet real trials ([`Quiet`]) are
//! compared with the scenario's trials:
//!
//! - exposure: the last failed request to a stopped instance, ms after it stopped serving (0
//!   without one), **censored at the rig's window** (`max-wait-s`): the rig stops looking then,
//!   so a trial still unresolved there, on either side, counts as the window itself. With
//!   several victims a trial's exposure is the latest of theirs and its dead hits their sum;
//! - the two-sample Kolmogorov-Smirnov test on exposure and on dead hits (an unresolved trial's
//!   dead hits are +infinity, as in `conform`);
//! - the mean exposure difference (real - simulated) with a 95 % percentile-bootstrap interval
//!   ([`bootstrap_mean_difference`]), because KS at n = 30 is weak;
//! - the smallest difference of means the cell could have detected
//!   ([`minimum_detectable_difference`]).

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::experiment::TrialOutcome;
use crate::experiment::conform::{RealTrial, ks_p_value, ks_statistic};

/// What a person concluded about a cell (`verdict` in matrix.toml), or what the figures say
/// when nobody has yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Fewer real trials than a verdict needs ([`MIN_REAL_TRIALS`]).
    Pending,
    /// Neither KS test rejects at [`ALPHA`] and the mean difference's interval holds 0.
    Agree,
    /// The real stack showed a rule the model lacked; it is modelled now (the note names the
    /// commit and the test) and the cell was re-run.
    Modelled,
    /// A difference written down with its size and why it stays.
    KnownDifference,
    /// The figures differ and nobody has explained it yet: a red flag, not a verdict.
    Differs,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pending => "pending",
            Verdict::Agree => "agree",
            Verdict::Modelled => "modelled",
            Verdict::KnownDifference => "known-difference",
            Verdict::Differs => "differs",
        }
    }

    fn declared(text: &str) -> Option<Verdict> {
        match text {
            "pending" | "agree" => Some(Verdict::Pending),
            "modelled" => Some(Verdict::Modelled),
            "known-difference" => Some(Verdict::KnownDifference),
            _ => None,
        }
    }
}

/// Significance level of the cell's KS tests.
pub const ALPHA: f64 = 0.01;
/// Real trials a cell needs before its figures give a verdict (the rig's floor for cells whose
/// trial takes over two minutes; 30 for the others is matrix.toml's `trials`).
pub const MIN_REAL_TRIALS: usize = 20;
/// Bootstrap resamples of the mean difference.
pub const BOOTSTRAP_REPS: usize = 4000;

/// When a real trial counts (`[quiet]` of matrix.toml): the rig's timings are honest only on a
/// quiet machine. The rig records, per trial, the CPUs' worth of work done by anything else
/// during the measurement window (`other_cpu`); a trial above the limit, or without the
/// reading, is left out. (The load average, also recorded, lags by a minute; the rig's own
/// run-queue wait, also recorded, mostly measures its own JVMs contending on two cores.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quiet {
    pub max_other_cpu: f64,
}

impl Quiet {
    pub fn holds(&self, trial: &RealTrial) -> bool {
        trial.other_cpu.is_some_and(|c| c <= self.max_other_cpu)
    }
}

/// One cell of matrix.toml, as the comparison needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixCell {
    pub name: String,
    pub train: String,
    pub boot: String,
    pub servers: u32,
    pub self_preservation: bool,
    pub caller: String,
    pub strategy: String,
    pub fault: String,
    pub max_wait_s: u64,
    pub seed: u64,
    /// `verdict` as written (`pending` when unset).
    pub declared: Verdict,
    pub note: String,
    pub quiet: Quiet,
}

impl MatrixCell {
    /// `conformance/cells/<name>/scenario.toml`, beside matrix.toml.
    pub fn scenario_path(&self, matrix: &Path) -> PathBuf {
        conformance_dir(matrix)
            .join("cells")
            .join(&self.name)
            .join("scenario.toml")
    }

    /// `conformance/results/matrix/<name>/real.csv`.
    pub fn real_path(&self, matrix: &Path) -> PathBuf {
        results_dir(matrix).join(&self.name).join("real.csv")
    }
}

/// `conformance/`: the folder of matrix.toml.
pub fn conformance_dir(matrix: &Path) -> PathBuf {
    matrix
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `conformance/results/matrix/`.
pub fn results_dir(matrix: &Path) -> PathBuf {
    conformance_dir(matrix).join("results").join("matrix")
}

/// What is wrong with matrix.toml.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    #[error("{file}: cannot read it: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// Longest matrix.toml read.
const MAX_MATRIX_BYTES: u64 = 1 << 20;

/// The cells of matrix.toml, `[defaults]` applied (the same rules as `matrix.py`'s loader,
/// which checks every key; here only the keys the comparison reads).
pub fn read_matrix(path: &Path) -> Result<Vec<MatrixCell>, MatrixError> {
    let file = path.display().to_string();
    let invalid = |message: String| MatrixError::Invalid {
        file: file.clone(),
        message,
    };
    let size = std::fs::metadata(path)
        .map_err(|source| MatrixError::Io {
            file: file.clone(),
            source,
        })?
        .len();
    if size > MAX_MATRIX_BYTES {
        return Err(invalid(format!(
            "{size} bytes; at most {MAX_MATRIX_BYTES} are read"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|source| MatrixError::Io {
        file: file.clone(),
        source,
    })?;
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| invalid(e.to_string()))?;
    let defaults = doc.get("defaults").and_then(|d| d.as_table_like());
    let cells = doc
        .get("cell")
        .and_then(|c| c.as_array_of_tables())
        .ok_or_else(|| invalid("no [[cell]]".to_string()))?;
    let max_other = doc
        .get("quiet")
        .and_then(|q| q.get("max-other-cpu"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .filter(|v| *v > 0.0)
        .ok_or_else(|| invalid("[quiet] needs max-other-cpu, a positive number of CPUs".into()))?;
    let quiet = Quiet {
        max_other_cpu: max_other,
    };
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let get = |key: &str| cell.get(key).or_else(|| defaults.and_then(|d| d.get(key)));
        let string = |key: &str, fallback: &str| -> Result<String, MatrixError> {
            match get(key) {
                None => Ok(fallback.to_string()),
                Some(v) => v
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| invalid(format!("cell[{i}].{key}: not a string"))),
            }
        };
        let integer = |key: &str, fallback: i64| -> Result<i64, MatrixError> {
            match get(key) {
                None => Ok(fallback),
                Some(v) => v
                    .as_integer()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| invalid(format!("cell[{i}].{key}: not a whole number from 0"))),
            }
        };
        let name = string("name", "")?;
        if name.is_empty() {
            return Err(invalid(format!("cell[{i}]: `name` is required")));
        }
        let declared_text = string("verdict", "pending")?;
        let declared = Verdict::declared(&declared_text).ok_or_else(|| {
            invalid(format!(
                "cell[{i}] ({name}).verdict: `{declared_text}`; allowed: pending, agree, \
                 modelled, known-difference"
            ))
        })?;
        let self_preservation = get("properties")
            .and_then(|p| p.as_table_like())
            .and_then(|p| p.get("eureka.server.enable-self-preservation"))
            .and_then(|v| v.as_str())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        out.push(MatrixCell {
            train: string("train", "")?,
            boot: string("boot", "")?,
            servers: integer("servers", 1)? as u32,
            self_preservation,
            caller: string("caller", "")?,
            strategy: string("strategy", "")?,
            fault: string("fault", "none")?,
            max_wait_s: integer("max-wait-s", 60)? as u64,
            seed: integer("seed", 1)? as u64,
            declared,
            note: string("note", "")?,
            quiet,
            name,
        });
    }
    Ok(out)
}

/// A cell's figures: the columns of matrix.csv.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFigures {
    pub n_real: usize,
    /// Real trials left out because the machine was loaded (`quiet` = 0).
    pub n_loaded: usize,
    pub n_sim: usize,
    pub real_mean_s: Option<f64>,
    pub sim_mean_s: Option<f64>,
    pub mean_diff_s: Option<f64>,
    pub mean_diff_ci_s: Option<(f64, f64)>,
    pub ks_d: f64,
    pub ks_p: f64,
    pub dead_hits_ks_d: f64,
    pub dead_hits_ks_p: f64,
    pub real_dead_hits_mean: Option<f64>,
    pub sim_dead_hits_mean: Option<f64>,
    pub mdd_s: Option<f64>,
    pub verdict: Verdict,
}

/// A real trial's exposure (ms), censored at the window.
pub fn real_exposure(trial: &RealTrial, window_ms: i64) -> i64 {
    if trial.unresolved {
        window_ms
    } else {
        trial.last_dead_hit_ms.unwrap_or(0).clamp(0, window_ms)
    }
}

/// A simulated trial's exposure (ms) over all its shutdowns, censored at the window: the latest
/// last dead hit; a shutdown whose instance never left a caller's list, or never stopped
/// serving, counts as the window.
pub fn simulated_exposure(outcome: &TrialOutcome, window_ms: i64) -> i64 {
    let mut worst = 0i64;
    for s in &outcome.shutdowns {
        let value = if s.t_stop_ms.is_none() || s.exposure_ms.is_none() {
            window_ms
        } else {
            s.last_dead_hit_ms.unwrap_or(0)
        };
        worst = worst.max(value);
    }
    worst.clamp(0, window_ms)
}

/// A simulated trial's dead hits over all its shutdowns; `None` (+infinity) when one of its
/// instances never left a caller's list or never stopped serving.
pub fn simulated_dead_hits(outcome: &TrialOutcome) -> Option<i64> {
    let mut sum = 0i64;
    for s in &outcome.shutdowns {
        s.t_stop_ms?;
        s.exposure_ms?;
        sum += s.dead_hits as i64;
    }
    Some(sum)
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn variance(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    (values.len() >= 2)
        .then(|| values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (values.len() - 1) as f64)
}

/// The 95 % percentile-bootstrap interval of `mean(a) - mean(b)`: `reps` resamples of each
/// sample with replacement (independently, as the two samples are), the 2.5th and 97.5th
/// percentiles of the resampled differences (Efron & Tibshirani 1993, §13.3). Seeded, so the
/// same samples and seed give the same interval.
pub fn bootstrap_mean_difference(
    a: &[f64],
    b: &[f64],
    reps: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() || reps == 0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut resample = |v: &[f64]| -> f64 {
        let mut sum = 0.0;
        for _ in 0..v.len() {
            sum += v[rng.gen_range(0..v.len())];
        }
        sum / v.len() as f64
    };
    let mut diffs: Vec<f64> = (0..reps).map(|_| resample(a) - resample(b)).collect();
    diffs.sort_by(f64::total_cmp);
    let at = |q: f64| diffs[((q * reps as f64).floor() as usize).min(reps - 1)];
    Some((at(0.025), at(0.975)))
}

/// z of the standard normal at 0.975 and at 0.80.
const Z_975: f64 = 1.959_964;
const Z_80: f64 = 0.841_621;

/// The smallest difference of means a two-sided test at 5 % finds with 80 % power:
/// `(z₀.₉₇₅ + z₀.₈₀) · √(s_a²/n_a + s_b²/n_b)` (the normal approximation of Welch's test).
pub fn minimum_detectable_difference(a: &[f64], b: &[f64]) -> Option<f64> {
    let se = (variance(a)? / a.len() as f64 + variance(b)? / b.len() as f64).sqrt();
    Some((Z_975 + Z_80) * se)
}

/// The figures of one cell from its real trials and the simulator's outcomes. `seed` seeds
/// the bootstrap (the cell's seed, so a row is reproducible).
pub fn cell_figures(
    cell: &MatrixCell,
    real: &[RealTrial],
    outcomes: &[TrialOutcome],
) -> CellFigures {
    let window = (cell.max_wait_s * 1000) as i64;
    let quiet: Vec<&RealTrial> = real.iter().filter(|t| cell.quiet.holds(t)).collect();
    let n_loaded = real.len() - quiet.len();
    let seconds = |ms: i64| ms as f64 / 1000.0;
    let real_s: Vec<f64> = quiet
        .iter()
        .map(|t| seconds(real_exposure(t, window)))
        .collect();
    let sim_s: Vec<f64> = outcomes
        .iter()
        .map(|o| seconds(simulated_exposure(o, window)))
        .collect();
    let real_ms: Vec<Option<i64>> = quiet
        .iter()
        .map(|t| Some(real_exposure(t, window)))
        .collect();
    let sim_ms: Vec<Option<i64>> = outcomes
        .iter()
        .map(|o| Some(simulated_exposure(o, window)))
        .collect();
    let real_dh: Vec<Option<i64>> = quiet
        .iter()
        .map(|t| (!t.unresolved).then_some(t.dead_hits as i64))
        .collect();
    let sim_dh: Vec<Option<i64>> = outcomes.iter().map(simulated_dead_hits).collect();
    let ks_d = ks_statistic(&real_ms, &sim_ms);
    let ks_p = ks_p_value(ks_d, real_ms.len(), sim_ms.len());
    let dead_hits_ks_d = ks_statistic(&real_dh, &sim_dh);
    let dead_hits_ks_p = ks_p_value(dead_hits_ks_d, real_dh.len(), sim_dh.len());
    let finite_mean = |v: &[Option<i64>]| {
        let f: Vec<f64> = v.iter().flatten().map(|&x| x as f64).collect();
        mean(&f)
    };
    let (real_mean_s, sim_mean_s) = (mean(&real_s), mean(&sim_s));
    let mean_diff_s = real_mean_s.zip(sim_mean_s).map(|(r, s)| r - s);
    let mean_diff_ci_s = bootstrap_mean_difference(&real_s, &sim_s, BOOTSTRAP_REPS, cell.seed);
    let verdict = match cell.declared {
        _ if quiet.len() < MIN_REAL_TRIALS => Verdict::Pending,
        Verdict::Modelled | Verdict::KnownDifference => cell.declared,
        _ => {
            let covers = mean_diff_ci_s.is_some_and(|(lo, hi)| lo <= 0.0 && 0.0 <= hi);
            if ks_p >= ALPHA && dead_hits_ks_p >= ALPHA && covers {
                Verdict::Agree
            } else {
                Verdict::Differs
            }
        }
    };
    CellFigures {
        n_real: quiet.len(),
        n_loaded,
        n_sim: outcomes.len(),
        real_mean_s,
        sim_mean_s,
        mean_diff_s,
        mean_diff_ci_s,
        ks_d,
        ks_p,
        dead_hits_ks_d,
        dead_hits_ks_p,
        real_dead_hits_mean: finite_mean(&real_dh),
        sim_dead_hits_mean: finite_mean(&sim_dh),
        mdd_s: minimum_detectable_difference(&real_s, &sim_s),
        verdict,
    }
}

/// The columns of matrix.csv: the ones every reader relies on first, then the dead-hit test,
/// the detectable difference, the loaded trials left out, and the note.
pub const MATRIX_HEADER: [&str; 26] = [
    "cell",
    "train",
    "boot",
    "servers",
    "self_preservation",
    "caller",
    "strategy",
    "fault",
    "n_real",
    "n_sim",
    "real_mean_s",
    "sim_mean_s",
    "mean_diff_s",
    "mean_diff_lo_s",
    "mean_diff_hi_s",
    "ks_d",
    "ks_p",
    "verdict",
    "dead_hits_ks_d",
    "dead_hits_ks_p",
    "real_dead_hits_mean",
    "sim_dead_hits_mean",
    "mdd_s",
    "n_loaded",
    "window_s",
    "note",
];

/// One matrix.csv row: seconds with three decimals, test figures with four.
pub fn matrix_row(cell: &MatrixCell, f: Option<&CellFigures>) -> Vec<String> {
    let s3 = |v: Option<f64>| v.map_or_else(String::new, |x| format!("{x:.3}"));
    let f4 = |v: f64| format!("{v:.4}");
    let mut row = vec![
        cell.name.clone(),
        cell.train.clone(),
        cell.boot.clone(),
        cell.servers.to_string(),
        cell.self_preservation.to_string(),
        cell.caller.clone(),
        cell.strategy.clone(),
        cell.fault.clone(),
    ];
    match f {
        None => {
            row.extend(["0", "0"].map(String::from));
            row.extend(std::iter::repeat_n(String::new(), 7));
            row.push(Verdict::Pending.name().to_string());
            row.extend(std::iter::repeat_n(String::new(), 5));
            row.push("0".to_string());
        }
        Some(f) => {
            row.extend([
                f.n_real.to_string(),
                f.n_sim.to_string(),
                s3(f.real_mean_s),
                s3(f.sim_mean_s),
                s3(f.mean_diff_s),
                s3(f.mean_diff_ci_s.map(|c| c.0)),
                s3(f.mean_diff_ci_s.map(|c| c.1)),
                f4(f.ks_d),
                f4(f.ks_p),
                f.verdict.name().to_string(),
                f4(f.dead_hits_ks_d),
                f4(f.dead_hits_ks_p),
                s3(f.real_dead_hits_mean),
                s3(f.sim_dead_hits_mean),
                s3(f.mdd_s),
                f.n_loaded.to_string(),
            ]);
        }
    }
    row.push(cell.max_wait_s.to_string());
    row.push(cell.note.clone());
    row
}

/// The figures back from matrix.csv's text, by cell (`None` for a cell without real trials):
/// what [`matrix_row`] wrote, read back for the README's table of cells not recomputed.
pub fn figures_of_csv(text: &str) -> std::collections::BTreeMap<String, Option<CellFigures>> {
    let mut out = std::collections::BTreeMap::new();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    for record in reader.records().flatten() {
        let at = |i: usize| record.get(i).unwrap_or("");
        let num = |i: usize| at(i).parse::<f64>().ok();
        let count = |i: usize| at(i).parse::<usize>().unwrap_or(0);
        let verdict = match at(17) {
            "agree" => Verdict::Agree,
            "modelled" => Verdict::Modelled,
            "known-difference" => Verdict::KnownDifference,
            "differs" => Verdict::Differs,
            _ => Verdict::Pending,
        };
        let figures = (count(8) > 0 || count(23) > 0).then(|| CellFigures {
            n_real: count(8),
            n_loaded: count(23),
            n_sim: count(9),
            real_mean_s: num(10),
            sim_mean_s: num(11),
            mean_diff_s: num(12),
            mean_diff_ci_s: num(13).zip(num(14)),
            ks_d: num(15).unwrap_or(0.0),
            ks_p: num(16).unwrap_or(1.0),
            dead_hits_ks_d: num(18).unwrap_or(0.0),
            dead_hits_ks_p: num(19).unwrap_or(1.0),
            real_dead_hits_mean: num(20),
            sim_dead_hits_mean: num(21),
            mdd_s: num(22),
            verdict,
        });
        out.insert(at(0).to_string(), figures);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: a = {1, 2, 3} (mean 2, s² = 1), b = {2, 4} (mean 3, s² = 2):
    /// SE = √(1/3 + 2/2) = 1.1547, MDD = 2.8016 × 1.1547 = 3.2350.
    #[test]
    fn minimum_detectable_difference_by_hand() {
        let mdd = minimum_detectable_difference(&[1.0, 2.0, 3.0], &[2.0, 4.0]).unwrap();
        assert!((mdd - 3.2350).abs() < 1e-3, "{mdd}");
        assert_eq!(minimum_detectable_difference(&[1.0], &[2.0, 3.0]), None);
    }

    /// Constant samples: every resample has the same means, so the interval is the point.
    /// Shifted samples: the interval is the shift's, whatever the seed; the same seed gives the
    /// same interval.
    #[test]
    fn bootstrap_interval_is_the_difference_for_constant_samples_and_is_seeded() {
        let (lo, hi) = bootstrap_mean_difference(&[5.0; 10], &[3.0; 40], 500, 7).unwrap();
        assert_eq!((lo, hi), (2.0, 2.0));
        let a: Vec<f64> = (0..30).map(|i| f64::from(i % 7)).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 1.5).collect();
        let one = bootstrap_mean_difference(&a, &b, 2000, 1).unwrap();
        assert_eq!(one, bootstrap_mean_difference(&a, &b, 2000, 1).unwrap());
        // The difference of means is exactly -1.5; its bootstrap spread for two independent
        // samples of sd ≈ 2.0 and n = 30 is about 1.96 × √(2 × 4/30) ≈ 1.0 either side.
        assert!(one.0 < -1.5 && -1.5 < one.1, "{one:?}");
        assert!(one.0 > -3.0 && one.1 < 0.0, "{one:?}");
    }

    fn trial(last: Option<i64>, dead: u64, unresolved: bool, quiet: bool) -> RealTrial {
        let other_cpu = Some(if quiet { 0.1 } else { 1.5 });
        RealTrial {
            line: 2,
            trial: 0,
            strategy: crate::scenario::Strategy::Kill9,
            wait_ms: 0,
            dead_hits: dead,
            last_dead_hit_ms: last,
            unresolved,
            other_cpu,
        }
    }

    /// The window censors both sides: an unresolved real trial counts as the window, a longer
    /// one is cut to it, a trial without a dead hit counts as 0.
    #[test]
    fn real_exposure_is_censored_at_the_window() {
        assert_eq!(
            real_exposure(&trial(Some(7000), 30, false, true), 60_000),
            7000
        );
        assert_eq!(real_exposure(&trial(None, 0, false, true), 60_000), 0);
        assert_eq!(
            real_exposure(&trial(Some(9000), 3, true, true), 60_000),
            60_000
        );
        assert_eq!(
            real_exposure(&trial(Some(90_000), 3, false, true), 60_000),
            60_000
        );
    }

    #[test]
    fn loaded_trials_are_left_out_and_counted() {
        let cell = MatrixCell {
            name: "c".into(),
            train: "2025.1.4".into(),
            boot: "4.0.7".into(),
            servers: 1,
            self_preservation: false,
            caller: "loadbalancer".into(),
            strategy: "kill-9".into(),
            fault: "none".into(),
            max_wait_s: 60,
            seed: 1,
            declared: Verdict::Pending,
            note: String::new(),
            quiet: Quiet {
                max_other_cpu: 0.25,
            },
        };
        let real = [
            trial(Some(1000), 5, false, true),
            trial(Some(3000), 7, false, true),
            trial(Some(50_000), 9, false, false),
        ];
        let f = cell_figures(&cell, &real, &[]);
        assert_eq!((f.n_real, f.n_loaded, f.n_sim), (2, 1, 0));
        assert_eq!(f.real_mean_s, Some(2.0));
        assert_eq!(f.real_dead_hits_mean, Some(6.0));
        assert_eq!(f.verdict, Verdict::Pending);
    }
}
