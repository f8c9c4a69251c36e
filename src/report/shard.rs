//! The file a shard writes (`shard-I-of-N.json`) and what `merge` checks before it trusts a set
//! of them.
//!
//! A shard (`run`, `compare` or `sweep` with `--shard I/N`) writes no report: only its trials'
//! outcomes, as data, with a manifest of everything that made them (the command and its
//! arguments, the scenario file's text, the overrides, the hash of the validated scenario, the
//! shard and its slice). `merge` reads every shard, checks that they come from one command line
//! and cover every index once, puts the outcomes back in trial order and hands them to the same
//! writer an unsharded run uses: the outputs are byte-identical by construction, not by care.

use std::fs;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::experiment::shard::Shard;
use crate::experiment::{TrialOutcome, Vary};
use crate::scenario::ScenarioSource;

use super::output::{OutputError, create_dir, write_atomic};

/// The first field of every shard file; a file without it is not one. 2: each trial's outcome
/// carries its dead hits (`TrialOutcome::dead_hit_spans`, the timeline `merge` draws), which a
/// format-1 file lacks.
pub const SHARD_FORMAT: &str = "eureka-sim shard 2";

/// The command a shard ran, with the arguments that shape its plan (the rest is the manifest's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardCommand {
    /// `run`; `per_request` is `--per-request`.
    Run { per_request: bool },
    /// `compare --strategy ... --wait-s ...` as given (empty: the defaults).
    Compare {
        strategies: Vec<String>,
        wait_s: Vec<u64>,
    },
    /// `sweep --vary ...`, in order.
    Sweep { vary: Vec<Vary> },
}

impl ShardCommand {
    pub fn name(&self) -> &'static str {
        match self {
            ShardCommand::Run { .. } => "run",
            ShardCommand::Compare { .. } => "compare",
            ShardCommand::Sweep { .. } => "sweep",
        }
    }

    /// What a shard slices: trials (`run`, `compare`, every variant in each shard, so that the
    /// variants keep their common random numbers) or grid points (`sweep`, every trial of each).
    pub fn slices(&self) -> &'static str {
        match self {
            ShardCommand::Run { .. } | ShardCommand::Compare { .. } => "trials",
            ShardCommand::Sweep { .. } => "grid points",
        }
    }
}

/// Everything that made a shard's outcomes; `merge` rebuilds the plan from it alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardManifest {
    /// [`SHARD_FORMAT`].
    pub format: String,
    /// The eureka-sim version that wrote it: another version may simulate differently.
    pub version: String,
    pub command: ShardCommand,
    /// The scenario file's path as named, its name and its text.
    pub scenario: ScenarioSource,
    /// `--trials`, `--seed` and `--set` as given.
    pub trials: Option<u32>,
    pub seed: Option<u64>,
    pub set: Vec<String>,
    /// `scenario_hash` (as in `summary.json`) of the validated base scenario.
    pub scenario_hash: String,
    pub shard: Shard,
    /// How many trials (or grid points) the whole run has, and this shard's slice of them
    /// ([`Shard::range`]).
    pub total: u32,
    pub slice: Range<u32>,
}

impl ShardManifest {
    /// The manifest of the current version for `shard` of `total` items.
    pub fn new(
        command: ShardCommand,
        scenario: ScenarioSource,
        (trials, seed, set): (Option<u32>, Option<u64>, Vec<String>),
        scenario_hash: String,
        shard: Shard,
        total: u32,
    ) -> ShardManifest {
        ShardManifest {
            format: SHARD_FORMAT.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            command,
            scenario,
            trials,
            seed,
            set,
            scenario_hash,
            shard,
            total,
            slice: shard.range(total),
        }
    }
}

/// One group of a shard's outcomes: `run`'s scenario, a `compare` variant, a `sweep` point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardGroup {
    /// The variant's or point's name (the scenario's for `run`), checked against the plan.
    pub label: String,
    /// Its outcomes in trial order: the slice's trials (`run`, `compare`), or every trial
    /// (`sweep`).
    pub outcomes: Vec<TrialOutcome>,
}

/// A shard file: the manifest, then the outcomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardFile {
    pub manifest: ShardManifest,
    /// `run`: one group; `compare`: one per variant, in plan order; `sweep`: one per grid point
    /// of the slice, in grid order.
    pub groups: Vec<ShardGroup>,
}

/// `shard-I-of-N.json`.
pub fn shard_file_name(shard: Shard) -> String {
    format!("shard-{}-of-{}.json", shard.index, shard.count)
}

/// Writes `file` into `dir` (created if need be) as `shard-I-of-N.json`, whole or not at all
/// ([`write_atomic`]); returns its path.
pub fn write_shard(dir: &Path, file: &ShardFile) -> Result<PathBuf, OutputError> {
    create_dir(dir)?;
    let path = dir.join(shard_file_name(file.manifest.shard));
    let json = serde_json::to_vec(file).map_err(|e| OutputError::Write {
        path: path.clone(),
        source: Box::new(e),
    })?;
    write_atomic(&path, json)?;
    Ok(path)
}

/// Why a set of shards cannot be merged (bad input: exit 2). Each names the folder or file and
/// what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{}: no shard file (shard-I-of-N.json) in this folder; allowed: the --out folder of a \
         run, compare or sweep with --shard, or a shard file",
        dir.display()
    )]
    NoShards { dir: PathBuf },
    #[error("{}: not a shard file of eureka-sim: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{}: written as {found:?} by eureka-sim {version}, this is eureka-sim {ours} ({SHARD_FORMAT:?}); \
         allowed: shards written by the version that merges them",
        path.display(),
        ours = env!("CARGO_PKG_VERSION")
    )]
    Version {
        path: PathBuf,
        found: String,
        version: String,
    },
    #[error(
        "{}: its {what} differs from that of {}; allowed: the shards of one command line (same \
         command, scenario file, --trials, --seed, --set and shard count)",
        path.display(),
        first.display()
    )]
    Differs {
        path: PathBuf,
        first: PathBuf,
        what: &'static str,
    },
    #[error(
        "{} and {} are both shard {index} of {count}; allowed: each shard once",
        first.display(),
        second.display()
    )]
    Duplicate {
        index: u32,
        count: u32,
        first: PathBuf,
        second: PathBuf,
    },
    #[error(
        "shard(s) {} of {count} missing (found {}); allowed: every shard 0 to {} once",
        list(missing),
        list(found),
        count - 1
    )]
    Missing {
        count: u32,
        missing: Vec<u32>,
        found: Vec<u32>,
    },
    #[error("{}: {what}; the file is damaged or was edited", path.display())]
    Damaged { path: PathBuf, what: String },
    #[error(
        "{}: the scenario validates to a different hash ({found}) than when the shard ran \
         ({expected}); allowed: shards merged by the version of eureka-sim that ran them",
        path.display()
    )]
    ScenarioChanged {
        path: PathBuf,
        expected: String,
        found: String,
    },
}

fn list(indices: &[u32]) -> String {
    let names: Vec<String> = indices.iter().map(u32::to_string).collect();
    names.join(", ")
}

/// Every shard file among `paths`: a folder gives its `shard-*-of-*.json` files (by name), a file
/// itself. A folder without one is an error: a pod that never ran would otherwise go unseen.
pub fn read_shards(paths: &[PathBuf]) -> Result<Vec<(PathBuf, ShardFile)>, MergeError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = fs::read_dir(path).map_err(|source| MergeError::Read {
                path: path.clone(),
                source,
            })?;
            let mut found = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|source| MergeError::Read {
                    path: path.clone(),
                    source,
                })?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("shard-") && name.ends_with(".json") && name.contains("-of-") {
                    found.push(entry.path());
                }
            }
            if found.is_empty() {
                return Err(MergeError::NoShards { dir: path.clone() });
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    files
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).map_err(|source| MergeError::Read {
                path: path.clone(),
                source,
            })?;
            let file = parse_shard(&path, &bytes)?;
            Ok((path, file))
        })
        .collect()
}

/// A shard file's bytes, its format and version checked first (so that a file of another
/// version is named as such, not as a parse error of a field it lacks).
fn parse_shard(path: &Path, bytes: &[u8]) -> Result<ShardFile, MergeError> {
    #[derive(Deserialize)]
    struct Head {
        manifest: HeadManifest,
    }
    #[derive(Deserialize)]
    struct HeadManifest {
        format: String,
        version: String,
    }
    let parse = |source| MergeError::Parse {
        path: path.to_path_buf(),
        source,
    };
    let head: Head = serde_json::from_slice(bytes).map_err(parse)?;
    if head.manifest.format != SHARD_FORMAT || head.manifest.version != env!("CARGO_PKG_VERSION") {
        return Err(MergeError::Version {
            path: path.to_path_buf(),
            found: head.manifest.format,
            version: head.manifest.version,
        });
    }
    serde_json::from_slice(bytes).map_err(parse)
}

/// Checks that `shards` are the shards of one command line, each index once, each file
/// consistent with its manifest; returns the common manifest and the shards in index order.
pub fn check_shards(
    mut shards: Vec<(PathBuf, ShardFile)>,
) -> Result<(ShardManifest, Vec<(PathBuf, ShardFile)>), MergeError> {
    let Some((first_path, first)) = shards.first() else {
        return Err(MergeError::Missing {
            count: 1,
            missing: vec![0],
            found: Vec::new(),
        });
    };
    let (first_path, base) = (first_path.clone(), first.manifest.clone());
    for (path, file) in &shards {
        let m = &file.manifest;
        let fields = [
            ("command", m.command == base.command),
            ("scenario file", m.scenario == base.scenario),
            ("--trials", m.trials == base.trials),
            ("--seed", m.seed == base.seed),
            ("--set", m.set == base.set),
            ("scenario hash", m.scenario_hash == base.scenario_hash),
            ("shard count", m.shard.count == base.shard.count),
            ("number of trials or grid points", m.total == base.total),
        ];
        if let Some((what, _)) = fields.iter().find(|(_, same)| !same) {
            return Err(MergeError::Differs {
                path: path.clone(),
                first: first_path,
                what,
            });
        }
        check_own(path, file)?;
    }
    shards.sort_by_key(|(_, f)| f.manifest.shard.index);
    for pair in shards.windows(2) {
        if pair[0].1.manifest.shard.index == pair[1].1.manifest.shard.index {
            return Err(MergeError::Duplicate {
                index: pair[0].1.manifest.shard.index,
                count: base.shard.count,
                first: pair[0].0.clone(),
                second: pair[1].0.clone(),
            });
        }
    }
    let found: Vec<u32> = shards.iter().map(|(_, f)| f.manifest.shard.index).collect();
    let missing: Vec<u32> = (0..base.shard.count)
        .filter(|i| !found.contains(i))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            count: base.shard.count,
            missing,
            found,
        });
    }
    Ok((base, shards))
}

/// What one file must hold to be the shard its manifest says: a valid index, the slice of the
/// documented arithmetic, and for `run` / `compare` the slice's trials in order in every group.
fn check_own(path: &Path, file: &ShardFile) -> Result<(), MergeError> {
    let m = &file.manifest;
    let damaged = |what: String| MergeError::Damaged {
        path: path.to_path_buf(),
        what,
    };
    let shard = Shard::new(m.shard.index, m.shard.count, "shard")
        .map_err(|e| damaged(format!("its shard is invalid ({e})")))?;
    if m.slice != shard.range(m.total) {
        return Err(damaged(format!(
            "shard {shard} of {} {} has the slice {:?}, not {:?}",
            m.total,
            m.command.slices(),
            m.slice,
            shard.range(m.total)
        )));
    }
    match m.command {
        ShardCommand::Run { .. } | ShardCommand::Compare { .. } => {
            for group in &file.groups {
                let trials: Vec<u32> = group.outcomes.iter().map(|o| o.trial).collect();
                if !trials.iter().copied().eq(m.slice.clone()) {
                    return Err(damaged(format!(
                        "{} holds {} outcome(s), not trials {} to {} in order",
                        group.label,
                        trials.len(),
                        m.slice.start,
                        m.slice.end.saturating_sub(1)
                    )));
                }
            }
        }
        ShardCommand::Sweep { .. } => {
            if file.groups.len() != m.slice.len() {
                return Err(damaged(format!(
                    "it holds {} grid point(s), its slice {}",
                    file.groups.len(),
                    m.slice.len()
                )));
            }
        }
    }
    Ok(())
}

/// The outcomes of group `g` of every shard (in index order), end to end: for `run` and
/// `compare`, one group's trials `0..total`.
pub fn concat_group(shards: &[(PathBuf, ShardFile)], g: usize) -> Vec<TrialOutcome> {
    shards
        .iter()
        .filter_map(|(_, f)| f.groups.get(g))
        .flat_map(|group| group.outcomes.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Unresolved, run_trials};
    use crate::scenario::fixture::bundled;

    fn file_of(outcomes: Vec<TrialOutcome>) -> ShardFile {
        let source = ScenarioSource {
            source: "scenarios/kill-9.toml".to_string(),
            name: "kill-9".to_string(),
            text: String::new(),
            spring: Default::default(),
        };
        let command = ShardCommand::Run { per_request: false };
        let shard = Shard::new(0, 1, "test").unwrap();
        let manifest = ShardManifest::new(
            command,
            source,
            (None, None, Vec::new()),
            "0".to_string(),
            shard,
            outcomes.len() as u32,
        );
        ShardFile {
            manifest,
            groups: vec![ShardGroup {
                label: "kill-9".to_string(),
                outcomes,
            }],
        }
    }

    /// What `merge` reads back is what the shard ran, field for field: a rolling deploy (deploy
    /// outcomes), three peers (callers' servers), and every reason a metric can be empty.
    #[test]
    fn outcomes_read_back_from_a_shard_file_equal_the_trials_run() {
        let mut outcomes = run_trials(&bundled("rolling-deploy", &["simulation.trials=2".into()]));
        outcomes.extend(run_trials(&bundled(
            "cluster/three-peers-two-zones",
            &["simulation.trials=2".into()],
        )));
        assert!(outcomes.iter().any(|o| !o.deploys.is_empty()));
        assert!(
            outcomes
                .iter()
                .flat_map(|o| &o.shutdowns)
                .flat_map(|s| &s.callers)
                .any(|c| c.server.is_some_and(|s| s.0 > 0))
        );
        let mut reasons = outcomes[0].clone();
        for (i, reason) in Unresolved::ALL.into_iter().enumerate() {
            reasons.shutdowns[0].removal_unresolved[i % 5] = Some(reason);
            outcomes.push(reasons.clone());
        }
        let file = file_of(outcomes);
        let bytes = serde_json::to_vec(&file).unwrap();
        let back = parse_shard(Path::new("shard-0-of-1.json"), &bytes).unwrap();
        assert_eq!(back, file);
    }

    #[test]
    fn a_shard_file_of_another_version_is_named_as_such() {
        let mut file = file_of(Vec::new());
        file.manifest.version = "0.0.1".to_string();
        let bytes = serde_json::to_vec(&file).unwrap();
        let err = parse_shard(Path::new("s/shard-0-of-1.json"), &bytes).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "s/shard-0-of-1.json: written as \"{SHARD_FORMAT}\" by eureka-sim 0.0.1, this is \
                 eureka-sim {}",
                env!("CARGO_PKG_VERSION")
            )),
            "{err}"
        );
    }
}
