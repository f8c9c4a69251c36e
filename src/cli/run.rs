//! `eureka-sim run`: parses the arguments and calls [`report::run_report::run`]; with `--shard`,
//! runs the shard's trials and writes them for `eureka-sim merge` instead.
//!
//! [`report::run_report::run`]: crate::report::run_report::run

use std::io::{self, Write};

use anyhow::Context;

use crate::experiment::run_trial_range;
use crate::report::run_report::{RunOptions, run};
use crate::report::shard::{ShardCommand, ShardGroup};
use crate::scenario::ScenarioSource;

use super::RunArgs;
use super::progress::Progress;

pub(crate) fn run_scenario(
    args: RunArgs,
    budget: &super::budget::BudgetArgs,
) -> anyhow::Result<()> {
    let shard = args.shard.resolve()?;
    let source = ScenarioSource::read(&args.scenario)?;
    let scenario = super::load_source(&source, &args.common.overrides.list())?;
    let default_dir = super::default_output(&args.scenario, &scenario.name);
    let mode = super::request_mode(args.per_request);
    let trials = shard.map_or(scenario.simulation.trials, |s| {
        s.range(scenario.simulation.trials).len() as u32
    });
    budget.check(&[(&scenario, u64::from(trials))], mode, false)?;
    if let Some(shard) = shard {
        let total = scenario.simulation.trials;
        let trials = shard.range(total);
        let progress = Progress::new(trials.len() as u64, "trials");
        let outcomes = run_trial_range(&scenario, trials, mode, &|| progress.tick());
        progress.finish();
        let command = ShardCommand::Run {
            per_request: args.per_request,
        };
        let manifest = super::shard::manifest(
            command,
            &source,
            &args.common.overrides,
            &scenario,
            shard,
            total,
        );
        let groups = vec![ShardGroup {
            label: scenario.name.clone(),
            outcomes,
        }];
        return super::shard::finish(&args.common, default_dir, manifest, groups);
    }
    let (output, staging) = args.common.staged_output(&args.scenario, default_dir)?;
    let options = RunOptions { output, mode };
    let progress = Progress::new(u64::from(scenario.simulation.trials), "trials");
    let text = run(&scenario, &options, &|| progress.tick());
    progress.finish();
    let final_dir = staging.out_dir();
    let text = staging.commit(&text?)?;
    if args.format.is_text() {
        io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        // The file the run just wrote: stdout and summary.json cannot differ.
        let path = final_dir.join("summary.json");
        let json =
            std::fs::read(&path).with_context(|| format!("cannot read back {}", path.display()))?;
        io::stdout().lock().write_all(&json)?;
    }
    Ok(())
}
