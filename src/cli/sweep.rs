//! `eureka-sim sweep`: one scenario over a grid of values of one or more keys, with common random
//! numbers (see `experiment::sweep`); prints the grid and writes `sweep.csv`, line plots (one
//! key) or heatmaps (two keys), and `report.html`.
//!
//! The `--vary` arguments are checked in two stages, as `run` checks `--set`: their shape (and
//! that no key is varied twice) while the command line is parsed, so that clap reports it with
//! exit status 2; then every value and every grid point against the scenario, before any trial
//! runs (also exit 2, naming the `--vary` argument or the grid point).

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::eureka::RequestMode;
use crate::experiment::TrialOutcome;
use crate::experiment::Vary;
use crate::experiment::sweep::{
    PlannedPoint, PointResult, Sweep, check_distinct_keys, identical_points, plan_sweep,
};
use crate::report::output::OutputOptions;
use crate::report::shard::ShardCommand;
use crate::report::write_sweep;
use crate::scenario::{Scenario, ScenarioSource};

use super::driver::{Cut, Driven, Plan, Target};
use super::{scenario_error_in, warn_new};

#[derive(Debug, clap::Args)]
pub(crate) struct RawSweepArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// A key to vary and its values, e.g.
    /// server.eureka.server.response-cache-update-interval-ms=5000,15000,30000 (the same dotted
    /// paths as --set; commas inside [...] or quotes do not split). Repeat for a grid.
    #[arg(long = "vary", value_name = "KEY=V1,V2,...", required = true)]
    vary: Vec<Vary>,
    #[command(flatten)]
    pub(crate) common: super::Common,
    #[command(flatten)]
    pub(crate) shard: super::shard::ShardArgs,
}

/// [`RawSweepArgs`] whose `--vary` keys are distinct.
#[derive(Debug)]
pub(crate) struct SweepArgs(RawSweepArgs);

fn distinct(args: &RawSweepArgs) -> Result<(), clap::Error> {
    check_distinct_keys(&args.vary).map_err(|message| {
        // Formatted here, with this subcommand's usage; clap would add the top-level one.
        let mut cmd =
            RawSweepArgs::augment_args(Command::new("sweep").bin_name("eureka-sim sweep"));
        clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, message).format(&mut cmd)
    })
}

impl FromArgMatches for SweepArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let raw = RawSweepArgs::from_arg_matches(matches)?;
        distinct(&raw)?;
        Ok(SweepArgs(raw))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)?;
        distinct(&self.0)
    }
}

impl Args for SweepArgs {
    fn augment_args(cmd: Command) -> Command {
        RawSweepArgs::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        RawSweepArgs::augment_args_for_update(cmd)
    }
}

/// A validated sweep: the base scenario, every grid point, and the notes about the grid.
pub(super) struct SweepPlan {
    pub(super) base: Scenario,
    pub(super) plan: Vec<PlannedPoint>,
    pub(super) notes: Vec<String>,
}

/// Validates the base scenario and every grid point of `vary` from `source` (the file read
/// once); with `warn`, prints the warnings of each and the notes. `merge` plans the same way
/// from a shard's manifest, so its points are the sweep's.
pub(super) fn plan(
    source: &ScenarioSource,
    overrides: &[String],
    vary: &[Vary],
    warn: bool,
) -> super::CommandResult<SweepPlan> {
    let base = if warn {
        super::load_source(source, overrides)?
    } else {
        source.parse(overrides)?
    };
    let plan =
        plan_sweep(vary, |extra| source.parse(&[overrides, extra].concat())).map_err(|e| {
            let (context, source) = e.into_parts();
            scenario_error_in(&context, source)
        })?;
    let mut seen = Vec::new();
    if warn {
        for p in &plan {
            let label = format!("at {}", p.point.describe(vary));
            warn_new(&base, &p.scenario, &label, &mut seen);
        }
    }
    let mut notes = Vec::new();
    for (i, j) in identical_points(&plan) {
        notes.push(format!(
            "grid points {} and {} give the same scenario, hence the same figures (a varied key \
             without effect, two spellings of one value, or one key varied under two names)",
            plan[i].point.describe(vary),
            plan[j].point.describe(vary)
        ));
    }
    if warn {
        for note in &notes {
            eprintln!("warning: {note}");
        }
    }
    Ok(SweepPlan { base, plan, notes })
}

pub(crate) fn sweep(
    SweepArgs(args): SweepArgs,
    budget: &super::budget::BudgetArgs,
) -> super::CommandResult<()> {
    let shard = args.shard.resolve()?;
    let overrides = args.common.overrides.list()?;
    let source = ScenarioSource::read(&args.scenario)?;
    let SweepPlan { base, plan, notes } = plan(&source, &overrides, &args.vary, true)?;
    // Grid points, not trials, are cut by a shard: a point's statistics need all its trials,
    // and points are independent, so a shard runs whole points and merge only puts them side
    // by side.
    let driven = Plan {
        groups: plan
            .iter()
            .map(|p| (p.point.describe(&args.vary), &p.scenario))
            .collect(),
        mode: RequestMode::default(),
        cut: Cut::Groups,
        twice: false,
    };
    let command = ShardCommand::Sweep {
        vary: args.vary.clone(),
    };
    let target = Target {
        common: &args.common,
        scenario: &args.scenario,
        default_dir: super::default_output(&args.scenario, &base.name).join("sweep"),
    };
    let manifest = super::shard::manifest(command, &source, &args.common.overrides, &base);
    let write = |output: &OutputOptions, groups: Vec<Vec<TrialOutcome>>| {
        let points = plan
            .iter()
            .zip(&groups)
            .map(|(p, outcomes)| PointResult::of(p.clone(), outcomes))
            .collect();
        let sweep = Sweep {
            varies: args.vary.clone(),
            points,
        };
        write_sweep(&sweep, &notes, output)
    };
    if let Driven::Written { text, .. } = driven.drive(shard, budget, target, manifest, write)? {
        io::stdout().lock().write_all(text.as_bytes())?;
    }
    Ok(())
}
