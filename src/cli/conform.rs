//! `eureka-sim conform`: the real stack's trials (`conformance/rig.py`) beside the simulator's
//! (see `experiment::conform`); prints the comparison and writes `conform.csv`, one CDF per
//! strategy and metric, and `report.html`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::experiment::conform::{
    MAX_GROUPS, RealTrialsError, group_overrides, group_real_trials, read_real_trials,
};
use crate::report::conform_report::{PlannedGroup, conform as conform_groups};
use crate::scenario::load;

use super::scenario_error_in;

#[derive(Debug, clap::Args)]
pub(crate) struct ConformArgs {
    /// The scenario equivalent to the rig (conformance/scenario.toml); its first [[shutdown]]
    /// takes each real file's strategy and wait.
    scenario: PathBuf,
    /// A CSV of real trials written by conformance/rig.py (real-<strategy>.csv); repeat for
    /// several strategies.
    #[arg(long, value_name = "FILE", required = true)]
    real: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) common: super::Common,
    /// Significance level of the Kolmogorov-Smirnov tests.
    #[arg(long, default_value_t = 0.01, value_parser = parse_alpha)]
    alpha: f64,
    /// Exit with status 1 when a test rejects (the real stack and the model differ).
    #[arg(long)]
    check: bool,
}

/// A bad file of real trials is bad input (exit 2), as a bad scenario is.
pub(super) fn is_bad_input(err: &anyhow::Error) -> bool {
    err.downcast_ref::<RealTrialsError>().is_some()
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err("allowed: a level strictly between 0 and 1, such as 0.01".to_string()),
    }
}

/// With `--check`: a test rejected, exit status 1 (the table above says which).
#[derive(Debug, thiserror::Error)]
#[error("{rejected} of {total} comparison(s) differ at alpha = {alpha}")]
struct ConformanceDiffers {
    rejected: usize,
    total: usize,
    alpha: f64,
}

pub(crate) fn conform(args: ConformArgs) -> anyhow::Result<()> {
    let overrides = args.common.overrides.list();
    let base = load(&args.scenario, &overrides)?;
    for warning in &base.warnings {
        eprintln!("warning: {warning}");
    }
    let mut files = Vec::new();
    for path in &args.real {
        files.push((path.display().to_string(), read_real_trials(path)?));
    }
    let mut plan = Vec::new();
    for ((strategy, wait_ms), source, real) in group_real_trials(&files) {
        if plan.len() == MAX_GROUPS {
            return Err(RealTrialsError::Row {
                file: source,
                line: real[0].line,
                message: format!(
                    "more than {MAX_GROUPS} (strategy, wait_ms) groups; each runs the scenario's \
                     trials, so at most {MAX_GROUPS} are compared in one call"
                ),
            }
            .into());
        }
        let extra = group_overrides(strategy, wait_ms).map_err(|message| RealTrialsError::Row {
            file: source.clone(),
            line: real[0].line,
            message,
        })?;
        let scenario = load(&args.scenario, &[overrides.as_slice(), &extra].concat())
            .map_err(|e| scenario_error_in(&format!("strategy from {source}"), e))?;
        plan.push(PlannedGroup {
            strategy,
            wait_ms,
            source,
            real,
            scenario,
        });
    }
    let default_dir = args.real[0]
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let (options, staging) = args.common.staged_output(&args.scenario, default_dir)?;
    let (groups, text) = conform_groups(plan, args.alpha, &options)?;
    let text = staging.commit(&text)?;
    io::stdout().lock().write_all(text.as_bytes())?;
    let comparisons = groups.iter().flat_map(|g| &g.metrics);
    let rejected = comparisons.clone().filter(|m| m.rejected).count();
    if args.check && rejected > 0 {
        return Err(ConformanceDiffers {
            rejected,
            total: comparisons.count(),
            alpha: args.alpha,
        }
        .into());
    }
    Ok(())
}
