//! The one way `run`, `compare` and `sweep` run their trials: a command plans groups of trials
//! (the run itself, a compare variant, a sweep's grid point: each a labelled scenario) and gives
//! a pure writer; the driver checks the budget, cuts the plan for `--shard`, runs the trials with
//! one progress bar, stops at a runaway trial, and either writes the shard file or stages the
//! output folder, calls the writer and commits the folder whole. `merge` calls the same writers
//! on the shards' outcomes, so the files are the same bytes either way.

use super::error::NotDeterministic;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::engine::fnv1a64_bytes;
use crate::eureka::RequestMode;
use crate::experiment::budget::check_outcomes;
use crate::experiment::shard::Shard;
use crate::experiment::{TrialOutcome, run_trial_range};
use crate::report::output::{OutputError, OutputOptions};
use crate::report::shard::{ShardGroup, ShardManifest};
use crate::scenario::Scenario;

use super::Common;
use super::budget::BudgetArgs;
use super::progress::Progress;

/// How `--shard` cuts a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Every group runs the shard's slice of the trials (`run`, `compare`: trial k of every
    /// variant draws the same numbers, common random numbers, whichever shard it is in).
    Trials,
    /// The shard runs its slice of the groups, each whole (`sweep`: a grid point's statistics
    /// need all its trials, and points are independent).
    Groups,
}

/// What a command runs: its groups of trials, in order.
pub(crate) struct Plan<'p> {
    /// Each group's label (the shard file's, checked by `merge`) and scenario.
    pub(crate) groups: Vec<(String, &'p Scenario)>,
    pub(crate) mode: RequestMode,
    pub(crate) cut: Cut,
    /// `run --check-determinism`: each slice runs twice, on one thread and on the global pool,
    /// and the command fails naming the first trial whose outcomes differ.
    pub(crate) twice: bool,
}

/// Where a driven command writes.
pub(crate) struct Target<'a> {
    pub(crate) common: &'a Common,
    /// The scenario file, for the output's `source`.
    pub(crate) scenario: &'a Path,
    /// The output folder without `--out`.
    pub(crate) default_dir: PathBuf,
}

/// Where the trials' outcomes go.
enum Sink {
    Shard(Shard),
    Folder(OutputOptions, super::interrupt::Staging),
}

/// What the driver did.
pub(crate) enum Driven {
    /// The writer's terminal text, after the output folder was committed, and that folder.
    Written { text: String, dir: PathBuf },
    /// The shard file was written (and its note printed).
    Sharded,
}

impl Plan<'_> {
    /// The groups and trials this process runs: all of them, or the shard's slice.
    fn slices(&self, shard: Option<Shard>) -> Vec<(usize, Range<u32>)> {
        let all = |(g, (_, s)): (usize, &(String, &Scenario))| (g, 0..s.simulation.trials);
        match (shard, self.cut) {
            (None, _) => self.groups.iter().enumerate().map(all).collect(),
            (Some(shard), Cut::Trials) => self
                .groups
                .iter()
                .enumerate()
                .map(|(g, (_, s))| (g, shard.range(s.simulation.trials)))
                .collect(),
            (Some(shard), Cut::Groups) => {
                let mine = shard.range(self.groups.len() as u32);
                self.groups
                    .iter()
                    .enumerate()
                    .skip(mine.start as usize)
                    .take(mine.len())
                    .map(all)
                    .collect()
            }
        }
    }

    /// How many items a shard cuts: the trials of the first group, or the groups.
    pub(crate) fn total(&self) -> u32 {
        match self.cut {
            Cut::Trials => self.groups.first().map_or(0, |(_, s)| s.simulation.trials),
            Cut::Groups => self.groups.len() as u32,
        }
    }

    /// Runs the plan: the budget first (exit 2 before anything runs), then the trials with one
    /// progress bar, then either the shard file (`manifest` describes it) or the output folder,
    /// staged, written by `write` (with every group's outcomes, in plan order) and committed.
    pub(crate) fn drive(
        &self,
        shard: Option<Shard>,
        budget: &BudgetArgs,
        target: Target<'_>,
        manifest: impl FnOnce(Shard, u32) -> ShardManifest,
        write: impl FnOnce(&OutputOptions, Vec<Vec<TrialOutcome>>) -> Result<String, OutputError>,
    ) -> super::CommandResult<Driven> {
        let slices = self.slices(shard);
        let runs: Vec<_> = slices
            .iter()
            .map(|(g, trials)| (self.groups[*g].1, trials.len() as u64))
            .collect();
        budget.check(&runs, self.mode, false)?;
        // Staged before the trials run, so that an output folder that cannot be written is
        // reported at once, not after them.
        let sink = match shard {
            Some(shard) => Sink::Shard(shard),
            None => {
                let (options, staging) = target
                    .common
                    .staged_output(target.scenario, target.default_dir.clone())?;
                Sink::Folder(options, staging)
            }
        };
        let outcomes = self.run(&slices)?;
        match sink {
            Sink::Shard(shard) => {
                let groups = slices
                    .iter()
                    .zip(outcomes)
                    .map(|((g, _), outcomes)| ShardGroup {
                        label: self.groups[*g].0.clone(),
                        outcomes,
                    })
                    .collect();
                let manifest = manifest(shard, self.total());
                super::shard::finish(target.common, target.default_dir, manifest, groups)?;
                Ok(Driven::Sharded)
            }
            Sink::Folder(options, staging) => {
                let text = write(&options, outcomes);
                let dir = staging.out_dir();
                let text = staging.commit(&text?)?;
                Ok(Driven::Written { text, dir })
            }
        }
    }

    /// Every slice's trials, one progress bar over them all; a runaway trial (over its event
    /// limit) stops the command (exit 2) before anything is written.
    fn run(&self, slices: &[(usize, Range<u32>)]) -> super::CommandResult<Vec<Vec<TrialOutcome>>> {
        let total: u64 = slices.iter().map(|(_, t)| t.len() as u64).sum();
        let (total, what) = if self.twice {
            (2 * total, "trials (twice)")
        } else {
            (total, "trials")
        };
        let progress = Progress::new(total, what);
        let tick = || progress.tick();
        let mut outcomes = Vec::with_capacity(slices.len());
        for (g, trials) in slices {
            let scenario = self.groups[*g].1;
            if self.twice {
                outcomes.push(twice(scenario, trials.clone(), self.mode, &tick)?);
            } else {
                outcomes.push(run_trial_range(scenario, trials.clone(), self.mode, &tick));
            }
        }
        progress.finish();
        for group in &outcomes {
            check_outcomes(group)?;
        }
        Ok(outcomes)
    }
}

/// `--check-determinism`: the trials on a pool of 1 thread, then on the global pool, compared
/// trial by trial (every field, the dead-hit spans included, through their JSON form); the
/// second run's outcomes are returned for writing.
fn twice(
    scenario: &Scenario,
    trials: Range<u32>,
    mode: RequestMode,
    tick: &(dyn Fn() + Sync),
) -> super::CommandResult<Vec<TrialOutcome>> {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(anyhow::Error::from)?;
    let first = one.install(|| run_trial_range(scenario, trials.clone(), mode, tick));
    let second = run_trial_range(scenario, trials, mode, tick);
    let threads = rayon::current_num_threads();
    let hash = |o: &TrialOutcome| fnv1a64_bytes(&serde_json::to_vec(o).unwrap_or_default());
    for (a, b) in first.iter().zip(&second) {
        let (ha, hb) = (hash(a), hash(b));
        if ha != hb {
            return Err(NotDeterministic {
                trial: a.trial,
                threads,
                first: ha,
                second: hb,
            }
            .into());
        }
    }
    let whole = fnv1a64_bytes(&serde_json::to_vec(&second).unwrap_or_default());
    eprintln!(
        "determinism: {} trials run twice (1 thread, then {threads}) gave identical outcomes \
         (hash {whole:016x})",
        second.len()
    );
    Ok(second)
}
