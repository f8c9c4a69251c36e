//! `eureka-sim run`: parses the arguments and calls [`report::run_report::run`]; with `--shard`,
//! runs the shard's trials and writes them for `eureka-sim merge` instead.
//!
//! [`report::run_report::run`]: crate::report::run_report::run

use std::io::{self, Write};

use anyhow::Context;

use crate::experiment::TrialOutcome;
use crate::experiment::budget::check_outcomes;
use crate::experiment::run_trial_range;
use crate::report::run_report::{RunOptions, write_run};
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
        check_outcomes(&outcomes)?;
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
    let outcomes = if args.check_determinism {
        twice(&scenario, mode)?
    } else {
        let progress = Progress::new(u64::from(scenario.simulation.trials), "trials");
        let all = 0..scenario.simulation.trials;
        let outcomes = run_trial_range(&scenario, all, mode, &|| progress.tick());
        progress.finish();
        outcomes
    };
    check_outcomes(&outcomes)?;
    let text = write_run(&scenario, &options.output, &outcomes);
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

/// Two runs of the scenario's trials did not give the same outcomes.
#[derive(Debug, thiserror::Error)]
#[error(
    "determinism check failed: trial {trial} differs between a run on 1 thread and a run on \
     {threads} (hashes {first:016x} and {second:016x}); please report it with the scenario, \
     the seed and this machine's platform"
)]
struct NotDeterministic {
    trial: u32,
    threads: usize,
    first: u64,
    second: u64,
}

/// `--check-determinism`: the trials on a pool of 1 thread, then on the global pool, compared
/// trial by trial (every field, the dead-hit spans included, through their JSON form); the
/// second run's outcomes are returned for writing.
fn twice(
    scenario: &crate::scenario::Scenario,
    mode: crate::eureka::RequestMode,
) -> anyhow::Result<Vec<TrialOutcome>> {
    let trials = 0..scenario.simulation.trials;
    let progress = Progress::new(2 * u64::from(scenario.simulation.trials), "trials (twice)");
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let first =
        one.install(|| run_trial_range(scenario, trials.clone(), mode, &|| progress.tick()));
    let second = run_trial_range(scenario, trials, mode, &|| progress.tick());
    progress.finish();
    let threads = rayon::current_num_threads();
    let hash = |o: &TrialOutcome| fnv1a(&serde_json::to_vec(o).unwrap_or_default());
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
    let whole = fnv1a(&serde_json::to_vec(&second).unwrap_or_default());
    eprintln!(
        "determinism: {} trials run twice (1 thread, then {threads}) gave identical outcomes \
         (hash {whole:016x})",
        second.len()
    );
    Ok(second)
}

/// FNV-1a, 64 bits: a stable hash to print (std's is seeded per process).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
