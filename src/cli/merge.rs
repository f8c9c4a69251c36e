//! `eureka-sim merge DIR... --out DIR`: the shards of one `run`, `compare` or `sweep` (written
//! with `--shard I/N`) back into the files one unsharded run writes.
//!
//! Everything is checked before anything is written (`report::shard::check_shards`: one
//! command line, every shard once, each file what its manifest says), then the plan is built
//! again from the manifest alone (the scenario's text travels in it, so the merging machine
//! needs no copy of the file), the outcomes are put back in trial order and handed to the writer
//! the unsharded command uses. A bad set of shards is bad input: exit 2, naming the file.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::experiment::compare::VariantResult;
use crate::experiment::sweep::PlannedPoint;
use crate::experiment::{Comparison, PointResult, Sweep, TrialOutcome, Vary};
use crate::report::output::OutputOptions;
use crate::report::run_report::write_run;
use crate::report::scenario_hash;
use crate::report::shard::{
    MergeError, ShardCommand, ShardFile, ShardManifest, check_shards, concat_group, read_shards,
};
use crate::report::{write_compare, write_sweep};
use crate::scenario::Scenario;

use super::base_overrides;
use super::compare::parse_strategy;
use super::sweep::SweepPlan;

#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shards: folders holding shard-I-of-N.json files (a shard's --out), or the files.
    #[arg(value_name = "DIR", required = true)]
    shards: Vec<PathBuf>,
    /// Where to write the merged outputs (the files the unsharded command writes).
    #[arg(long)]
    out: PathBuf,
    /// Also write the plots as PNG (SVG is always written).
    #[arg(long)]
    png: bool,
}

pub(crate) fn merge(args: MergeArgs) -> super::CommandResult<()> {
    let (manifest, shards) = check_shards(read_shards(&args.shards)?)?;
    let overrides = base_overrides(manifest.trials, manifest.seed, &manifest.set);
    let base = manifest.scenario.parse(&overrides)?;
    let first = &shards[0].0;
    let found = scenario_hash(&base);
    if found != manifest.scenario_hash {
        return Err(MergeError::ScenarioChanged {
            path: first.clone(),
            expected: manifest.scenario_hash.clone(),
            found,
        }
        .into());
    }
    let staging = super::interrupt::stage(&args.out)?;
    let output = OutputOptions {
        source: manifest.scenario.source.clone(),
        set: manifest.set.clone(),
        out_dir: staging.dir(),
        png: args.png,
    };
    let text = match &manifest.command {
        // The trials ran in the shards (per request or not): merge only writes them.
        ShardCommand::Run { .. } => merge_run(&base, &shards, &output)?,
        ShardCommand::Sweep { vary } => merge_sweep(&manifest, vary, &overrides, &shards, &output)?,
        ShardCommand::Compare { strategies, wait_s } => {
            merge_compare(strategies, wait_s, &overrides, &shards, &output)?
        }
    };
    let text = staging.commit(&text)?;
    let text = format!(
        "{text}{}",
        merged_note(&manifest, shards.len(), &args.shards)
    );
    io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

/// The last line: which shards made the outputs (the folders as given: a cluster's shards
/// are many files in one folder).
fn merged_note(manifest: &ShardManifest, count: usize, given: &[PathBuf]) -> String {
    format!(
        "merged {count} shard(s) of {} over {} {} from {}\n",
        manifest.command.name(),
        manifest.total,
        manifest.command.slices(),
        crate::report::output::list(given)
    )
}

/// `run`: the one group of every shard, end to end, is every trial in order.
fn merge_run(
    scenario: &Scenario,
    shards: &[(PathBuf, ShardFile)],
    output: &OutputOptions,
) -> super::CommandResult<String> {
    for (path, file) in shards {
        groups_are(path, file, &[scenario.name.as_str()])?;
    }
    let outcomes = concat_group(shards, 0);
    Ok(write_run(scenario, output, &outcomes)?)
}

/// Checks that `file` holds one group per label of the plan, in order.
fn groups_are(path: &std::path::Path, file: &ShardFile, labels: &[&str]) -> Result<(), MergeError> {
    let found: Vec<&str> = file.groups.iter().map(|g| g.label.as_str()).collect();
    if found != labels {
        return Err(MergeError::Damaged {
            path: path.to_path_buf(),
            what: format!("it holds the group(s) {found:?}, its command plans {labels:?}"),
        });
    }
    Ok(())
}

/// `compare`: the variants planned again from the manifest; each shard holds every variant's
/// slice of the trials, so variant v's trials are group v of every shard, end to end.
fn merge_compare(
    strategies: &[String],
    wait_s: &[u64],
    overrides: &[String],
    shards: &[(PathBuf, ShardFile)],
    output: &OutputOptions,
) -> super::CommandResult<String> {
    let first = &shards[0].0;
    let strategies = strategies
        .iter()
        .map(|name| {
            parse_strategy(name).map_err(|e| damaged(first, format!("strategy {name:?}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (_, plan) = super::compare::plan(
        &shards[0].1.manifest.scenario,
        overrides,
        &strategies,
        wait_s,
        false,
    )?;
    let labels: Vec<String> = plan.iter().map(|p| p.variant.name()).collect();
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    for (path, file) in shards {
        groups_are(path, file, &labels)?;
    }
    let variants = plan
        .into_iter()
        .enumerate()
        .map(|(v, p)| {
            let outcomes = concat_group(shards, v);
            all_trials(first, labels[v], &p.scenario, &outcomes)?;
            Ok(VariantResult::of(p, &outcomes))
        })
        .collect::<Result<Vec<_>, MergeError>>()?;
    Ok(write_compare(&Comparison { variants }, output)?)
}

/// `sweep`: the sweep planned again from the manifest; each shard holds its slice of the grid
/// points, whole, in grid order.
fn merge_sweep(
    manifest: &ShardManifest,
    vary: &[Vary],
    overrides: &[String],
    shards: &[(PathBuf, ShardFile)],
    output: &OutputOptions,
) -> super::CommandResult<String> {
    let SweepPlan { plan, notes, .. } =
        super::sweep::plan(&manifest.scenario, overrides, vary, false)?;
    let first = &shards[0].0;
    if plan.len() != manifest.total as usize {
        return Err(super::CommandError::from(damaged(
            first,
            format!(
                "it was cut from {} grid points, the sweep plans {}",
                manifest.total,
                plan.len()
            ),
        )));
    }
    let mut planned = plan.into_iter();
    let mut points = Vec::new();
    for (path, file) in shards {
        let mine: Vec<PlannedPoint> = planned.by_ref().take(file.manifest.slice.len()).collect();
        let labels: Vec<String> = mine.iter().map(|p| p.point.describe(vary)).collect();
        groups_are(
            path,
            file,
            &labels.iter().map(String::as_str).collect::<Vec<_>>(),
        )?;
        for (p, group) in mine.into_iter().zip(&file.groups) {
            all_trials(path, &group.label, &p.scenario, &group.outcomes)?;
            points.push(PointResult::of(p, &group.outcomes));
        }
    }
    let sweep = Sweep {
        varies: vary.to_vec(),
        points,
    };
    Ok(write_sweep(&sweep, &notes, output)?)
}

/// Checks that `outcomes` are every trial of `scenario`, in order.
fn all_trials(
    path: &std::path::Path,
    label: &str,
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
) -> Result<(), MergeError> {
    let trials = scenario.simulation.trials;
    if !outcomes.iter().map(|o| o.trial).eq(0..trials) {
        return Err(damaged(
            path,
            format!(
                "{label}: its trials are not 0 to {} in order ({} outcome(s))",
                trials.saturating_sub(1),
                outcomes.len()
            ),
        ));
    }
    Ok(())
}

fn damaged(path: &std::path::Path, what: String) -> MergeError {
    MergeError::Damaged {
        path: path.to_path_buf(),
        what,
    }
}
