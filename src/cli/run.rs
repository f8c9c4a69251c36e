//! `eureka-sim run`: plans the scenario's trials as one group for the driver (`cli/driver.rs`:
//! budget, `--shard`, progress, the staged output folder) and writes them with
//! [`report::run_report::write_run`].
//!
//! [`report::run_report::write_run`]: crate::report::run_report::write_run

use std::io::{self, Write};

use anyhow::Context;

use crate::experiment::TrialOutcome;
use crate::report::output::OutputOptions;
use crate::report::run_report::write_run;
use crate::report::shard::ShardCommand;
use crate::scenario::ScenarioSource;

use super::RunArgs;
use super::driver::{Cut, Driven, Plan, Target};

pub(crate) fn run_scenario(
    args: RunArgs,
    budget: &super::budget::BudgetArgs,
) -> super::CommandResult<()> {
    let shard = args.shard.resolve()?;
    let source = ScenarioSource::read(&args.scenario)?;
    let scenario = super::load_source(&source, &args.common.overrides.list()?)?;
    let plan = Plan {
        groups: vec![(scenario.name.clone(), &scenario)],
        mode: super::request_mode(args.per_request),
        cut: Cut::Trials,
        twice: args.check_determinism,
    };
    let target = Target {
        common: &args.common,
        scenario: &args.scenario,
        default_dir: super::default_output(&args.scenario, &scenario.name),
    };
    let command = ShardCommand::Run {
        per_request: args.per_request,
    };
    let manifest = super::shard::manifest(command, &source, &args.common.overrides, &scenario);
    let write = |output: &OutputOptions, groups: Vec<Vec<TrialOutcome>>| {
        let outcomes = groups.into_iter().next().unwrap_or_default();
        write_run(&scenario, output, &outcomes)
    };
    let Driven::Written { text, dir } = plan.drive(shard, budget, target, manifest, write)? else {
        return Ok(());
    };
    if args.format.is_text() {
        io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        // The file the run just wrote: stdout and summary.json cannot differ.
        let path = dir.join("summary.json");
        let json =
            std::fs::read(&path).with_context(|| format!("cannot read back {}", path.display()))?;
        io::stdout().lock().write_all(&json)?;
    }
    Ok(())
}
