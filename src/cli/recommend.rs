//! `eureka-sim recommend`: the shortest clean wait for pause and service-registry.

use super::error::NothingToTune;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::eureka::RequestMode;
use crate::report::recommend_report::{
    RecommendError, RecommendOptions, RecommendRequest, recommend as recommend_waits,
    recommend_json,
};
use crate::scenario::ScenarioSource;

#[derive(Debug, clap::Args)]
pub(crate) struct RecommendArgs {
    /// The scenario file (TOML); its first [[shutdown]] is the one tuned.
    scenario: PathBuf,
    /// The share of trials that must be clean, as a percentile (p99.9, p99, 95, ...).
    #[arg(long, default_value = "p99.9", value_parser = parse_target)]
    target: f64,
    #[command(flatten)]
    overrides: super::Overrides,
    /// Skip the "what shortens it" runs (three more measurements per strategy).
    #[arg(long)]
    no_what_if: bool,
    #[command(flatten)]
    format: super::FormatArg,
}

fn parse_target(text: &str) -> Result<f64, String> {
    let number = text
        .trim()
        .trim_start_matches(['p', 'P'])
        .trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(value) if value > 0.0 && value <= 100.0 => Ok(value),
        _ => Err("expected a percentile such as p99.9, p99 or 95 (0 < p <= 100)".to_string()),
    }
}

pub(crate) fn recommend(
    args: RecommendArgs,
    budget: &super::budget::BudgetArgs,
) -> super::CommandResult<()> {
    let target = args.target;
    // A missing or unreadable file is bad input (exit 2), as for every command.
    let file = ScenarioSource::read(&args.scenario)?;
    let (text, source) = (&file.text, &file.source);
    let overrides = args.overrides.list()?;
    // Validates the file and the overrides (exit 2 with the usual message).
    let scenario = super::load_source(&file, &overrides)?;
    if scenario.shutdowns.is_empty() {
        return Err(NothingToTune(source.clone()).into());
    }
    // The base run; the what-ifs and the wait search rerun it a few times each.
    budget.check(
        &[(&scenario, u64::from(scenario.simulation.trials))],
        RequestMode::default(),
        false,
    )?;
    let options = RecommendOptions {
        target,
        what_if: !args.no_what_if,
    };
    let failed = |e| match e {
        RecommendError::Scenario(e) => super::CommandError::from(e),
        RecommendError::Io(e) => super::CommandError::from(e),
        RecommendError::Budget(e) => super::CommandError::from(e),
    };
    let bar = MeasureBar::default();
    let request = RecommendRequest {
        text,
        source,
        scenario: &scenario,
        overrides: &overrides,
        options,
        progress: &bar,
    };
    let mut out = io::stdout().lock();
    if args.format.is_text() {
        return recommend_waits(&mut out, &request).map_err(failed);
    }
    let json = recommend_json(&request).map_err(failed)?;
    out.write_all(json.as_bytes())?;
    Ok(())
}

/// A progress bar per measurement, on a terminal: each strategy's and each what-if's trials.
#[derive(Default)]
struct MeasureBar(std::sync::Mutex<Option<super::progress::Progress>>);

impl crate::experiment::MeasureProgress for MeasureBar {
    fn measuring(&self, what: &str, trials: u64) {
        if let Ok(mut bar) = self.0.lock() {
            *bar = Some(super::progress::Progress::new(trials, what));
        }
    }

    fn trial_done(&self) {
        if let Ok(bar) = self.0.lock()
            && let Some(bar) = bar.as_ref()
        {
            bar.tick();
        }
    }

    fn measured(&self) {
        if let Ok(mut bar) = self.0.lock()
            && let Some(bar) = bar.take()
        {
            bar.finish();
        }
    }
}
