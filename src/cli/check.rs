//! `eureka-sim check`: runs the trials of scenario files and decides their `[[claim]]`s, for CI.
//!
//! Every file is read and validated before any trial runs, so a typo in the last file is reported
//! (exit 2) without waiting for the first. Then each file's trials run and each claim prints one
//! line; the last line counts them. Exit 1 when a claim fails, so a CI job fails with it.

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::report::check_report::check as check_file;
use crate::scenario::{Scenario, ScenarioError, load};

use super::progress::Progress;

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Scenario files with [[claim]] tables, or folders (every *.toml in them, sorted).
    #[arg(value_name = "FILE_OR_DIR", required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    overrides: super::Overrides,
}

/// Claims failed: exit status 1 (the lines above say which).
#[derive(Debug, thiserror::Error)]
#[error("{failed} of {total} claim(s) failed")]
struct ClaimsFailed {
    failed: usize,
    total: usize,
}

pub(crate) fn check(args: CheckArgs) -> anyhow::Result<()> {
    let overrides = args.overrides.list();

    let files = scenario_files(&args.paths)?;
    let mut scenarios: Vec<(String, Scenario)> = Vec::new();
    let mut errors = Vec::new();
    for path in &files {
        let source = path.display().to_string();
        match load(path, &overrides) {
            Ok(s) if s.claims.is_empty() => errors.push(ScenarioError::NoClaims { file: source }),
            Ok(s) => scenarios.push((source, s)),
            // One flat list when several files have several problems each.
            Err(ScenarioError::Many(many)) => errors.extend(many),
            Err(e) => errors.push(e),
        }
    }
    if let Some(e) = first_or_many(errors) {
        return Err(e.into());
    }
    for (_, scenario) in &scenarios {
        for warning in &scenario.warnings {
            eprintln!("warning: {warning}");
        }
    }

    let mut stdout = io::stdout().lock();
    let (mut passed, mut failed) = (0, 0);
    for (source, scenario) in &scenarios {
        let what = format!("trials of {source}");
        let progress = Progress::new(u64::from(scenario.simulation.trials), &what);
        let checked = check_file(source, scenario, &|| progress.tick());
        progress.finish();
        stdout.write_all(checked.text.as_bytes())?;
        passed += checked.passed;
        failed += checked.failed;
    }
    writeln!(stdout, "{passed} passed, {failed} failed")?;
    if failed > 0 {
        return Err(ClaimsFailed {
            failed,
            total: passed + failed,
        }
        .into());
    }
    Ok(())
}

/// The files named by `paths`: files as given, folders as their `*.toml` files, sorted.
fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScenarioError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let listing = fs::read_dir(path).map_err(|source| ScenarioError::ReadDir {
            path: path.display().to_string(),
            source,
        })?;
        let mut found: Vec<PathBuf> = listing
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "toml"))
            .collect();
        if found.is_empty() {
            return Err(ScenarioError::NoScenarios {
                path: path.display().to_string(),
            });
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

fn first_or_many(mut errors: Vec<ScenarioError>) -> Option<ScenarioError> {
    match errors.len() {
        0 => None,
        1 => errors.pop(),
        _ => Some(ScenarioError::Many(errors)),
    }
}
