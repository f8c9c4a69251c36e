//! `eureka-sim compare`: one scenario under several shutdown strategies, with common random
//! numbers (see `experiment::compare`); prints a side-by-side table and writes `compare.csv`,
//! `exposure-cdf.svg` (and `.png` with `--png`) and `report.html`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::experiment::compare::{common_wait_s, expand_variants, plan_compare};
use crate::report::compare as compare_variants;
use crate::scenario::{Scenario, Strategy, load};

use super::progress::Progress;
use super::{scenario_error_in, warn_new};

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The scenario file (TOML): the world every variant runs in.
    scenario: PathBuf,
    /// Strategies to compare, comma-separated: kill-9, kill-15, pause, service-registry
    /// [default: all four].
    #[arg(long, value_name = "STRATEGY,...", value_delimiter = ',', value_parser = parse_strategy)]
    strategy: Vec<Strategy>,
    /// Waits in seconds for pause and service-registry, comma-separated: one variant per wait
    /// (the kills ignore them) [default: the scenario's wait-s].
    #[arg(long = "wait-s", value_name = "SECONDS,...", value_delimiter = ',')]
    wait_s: Vec<u64>,
    #[command(flatten)]
    pub(crate) common: super::Common,
}

fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        format!("unknown strategy; allowed: {}", names.join(", "))
    })
}

pub(crate) fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let overrides = args.common.overrides.list();
    let base = super::load(&args.scenario, &overrides)?;
    let strategies = if args.strategy.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        args.strategy.clone()
    };
    if !args.wait_s.is_empty() && !strategies.iter().any(|s| s.waits()) {
        eprintln!("warning: --wait-s has no effect: no pause or service-registry in --strategy");
    }
    let variants = expand_variants(&strategies, &args.wait_s, common_wait_s(&base));
    let plan = plan_compare(&variants, base.shutdown_tables(), |extra| {
        load(&args.scenario, &[overrides.as_slice(), extra].concat())
    })
    .map_err(|e| scenario_error_in(&format!("variant {}", e.variant), *e.source))?;
    let mut seen = Vec::new();
    for p in &plan {
        warn_new(
            &base,
            &p.scenario,
            &format!("variant {}", p.variant.name()),
            &mut seen,
        );
    }

    let default_dir = Path::new("output").join(&base.name).join("compare");
    let options = args.common.output(&args.scenario, default_dir);
    let progress = Progress::new(total_trials(plan.iter().map(|p| &p.scenario)), "trials");
    let text = compare_variants(plan, &options, &|| progress.tick());
    progress.finish();
    io::stdout().lock().write_all(text?.as_bytes())?;
    Ok(())
}

/// The trials of every scenario of a plan, for the progress bar.
pub(super) fn total_trials<'a>(scenarios: impl Iterator<Item = &'a Scenario>) -> u64 {
    scenarios.map(|s| u64::from(s.simulation.trials)).sum()
}
