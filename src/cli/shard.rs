//! `--shard I/N` / `--shard auto [--shard-count N]` of `run`, `compare` and `sweep`: which shard
//! this process is, and the shard file it writes instead of the reports
//! (`report::shard`; `eureka-sim merge` puts them together).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::experiment::shard::{Shard, ShardError};
use crate::report::output::list;
use crate::report::shard::{ShardCommand, ShardFile, ShardGroup, ShardManifest};
use crate::report::{scenario_hash, shard::write_shard};
use crate::scenario::{Scenario, ScenarioSource};

use super::Overrides;

/// The shard arguments, flattened into `run`, `compare` and `sweep`.
#[derive(Debug, clap::Args)]
pub(crate) struct ShardArgs {
    /// Run only shard I of N (0 <= I < N): a contiguous slice of the trials (run, compare: every
    /// variant in each shard) or of the grid points (sweep); write shard-I-of-N.json to --out
    /// [default: .../shards] instead of the reports, for `eureka-sim merge`. `auto`: I (and N)
    /// from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with --shard-count) or a Slurm
    /// array (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "I/N|auto")]
    shard: Option<String>,
    /// With --shard auto: the number of shards (a Kubernetes Job's completions; in a Slurm
    /// array it replaces SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "N")]
    shard_count: Option<u32>,
}

impl ShardArgs {
    /// The shard this process runs, `None` without `--shard`. Called before the scenario is
    /// read, so that a bad shard is reported before anything runs.
    pub(crate) fn resolve(&self) -> Result<Option<Shard>, ShardError> {
        match (self.shard.as_deref(), self.shard_count) {
            (None, None) => Ok(None),
            (Some("auto"), count) => {
                Shard::from_env(count, |name| std::env::var(name).ok()).map(Some)
            }
            (Some(text), None) => Shard::parse(text).map(Some),
            (_, Some(_)) => Err(ShardError::CountWithoutAuto),
        }
    }
}

/// The manifest of this process's shard of `command`, once the driver knows the shard and the
/// number of items it cuts (`Plan::drive`).
pub(super) fn manifest<'a>(
    command: ShardCommand,
    source: &'a ScenarioSource,
    overrides: &'a Overrides,
    base: &'a Scenario,
) -> impl FnOnce(Shard, u32) -> ShardManifest + 'a {
    move |shard, total| {
        ShardManifest::new(
            command,
            source.clone(),
            (overrides.trials, overrides.seed, overrides.assignments()),
            scenario_hash(base),
            shard,
            total,
        )
    }
}

/// Writes the shard file into `--out` (or `default_dir/shards`) and prints what it holds and how
/// to merge it.
pub(super) fn finish(
    common: &super::Common,
    default_dir: PathBuf,
    manifest: ShardManifest,
    groups: Vec<ShardGroup>,
) -> super::CommandResult<()> {
    if common.png {
        // A shard draws nothing; the plots are merge's.
        eprintln!("warning: --png has no effect with --shard; give it to eureka-sim merge");
    }
    let dir = common
        .out
        .as_deref()
        .map_or_else(|| default_dir.join("shards"), Path::to_path_buf);
    let m = &manifest;
    let slice = if m.slice.is_empty() {
        "none".to_string()
    } else {
        format!("{} to {}", m.slice.start, m.slice.end - 1)
    };
    let text = format!(
        "{}: {} shard {} ({} {slice} of {}, {} group(s))\n",
        m.scenario.source,
        m.command.name(),
        m.shard,
        m.command.slices(),
        m.total,
        groups.len()
    );
    let path = write_shard(&dir, &ShardFile { manifest, groups })?;
    io::stdout().lock().write_all(
        format!(
            "{text}wrote {}; with every shard done: eureka-sim merge FOLDER... --out DIR\n",
            list(&[path])
        )
        .as_bytes(),
    )?;
    Ok(())
}
