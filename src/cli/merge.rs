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

use crate::report::output::OutputOptions;
use crate::report::run_report::{RunOptions, write_run};
use crate::report::scenario_hash;
use crate::report::shard::{
    MergeError, ShardCommand, ShardFile, ShardManifest, check_shards, concat_group, read_shards,
};
use crate::scenario::Scenario;

use super::base_overrides;

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

pub(crate) fn merge(args: MergeArgs) -> anyhow::Result<()> {
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
    let output = OutputOptions {
        source: manifest.scenario.source.clone(),
        set: manifest.set.clone(),
        out_dir: args.out.clone(),
        png: args.png,
    };
    let text = match &manifest.command {
        ShardCommand::Run { per_request } => {
            let options = RunOptions {
                output,
                mode: super::request_mode(*per_request),
            };
            merge_run(&base, &shards, &options)?
        }
        ShardCommand::Compare { .. } | ShardCommand::Sweep { .. } => {
            anyhow::bail!("merge of {} shards comes next", manifest.command.name())
        }
    };
    let text = format!("{text}{}", merged_note(&manifest, &shards));
    io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

/// The last line: which shards made the outputs.
fn merged_note(manifest: &ShardManifest, shards: &[(PathBuf, ShardFile)]) -> String {
    format!(
        "merged {} shard(s) of {} over {} {} from {}\n",
        shards.len(),
        manifest.command.name(),
        manifest.total,
        manifest.command.slices(),
        crate::report::output::list(&shards.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>())
    )
}

/// `run`: the one group of every shard, end to end, is every trial in order.
fn merge_run(
    scenario: &Scenario,
    shards: &[(PathBuf, ShardFile)],
    options: &RunOptions,
) -> anyhow::Result<String> {
    for (path, file) in shards {
        groups_are(path, file, &[scenario.name.as_str()])?;
    }
    let outcomes = concat_group(shards, 0);
    Ok(write_run(scenario, options, &outcomes)?)
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
