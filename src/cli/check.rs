//! `eureka-sim check`: runs the trials of scenario files and decides their `[[claim]]`s, for CI.
//!
//! Every file is read and validated before any trial runs, so a typo in the last file is reported
//! (exit 2) without waiting for the first. Then each file's trials run and each claim prints one
//! line; the last line counts them. Exit 1 when a claim fails, so a CI job fails with it.

use super::error::ClaimsFailed;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::report::check_report::{CheckedFile, check as check_file};
use crate::report::json::render_check_json;
use crate::report::junit::render_junit;
use crate::report::output::{OutputError, create_dir, write_atomic};
use crate::scenario::{Scenario, ScenarioError, load};

use super::progress::Progress;

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Scenario files with [[claim]] tables, or folders (every *.toml in them, sorted).
    #[arg(value_name = "FILE_OR_DIR", required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    overrides: super::Overrides,
    /// Also write the verdicts as JUnit XML to FILE (one testcase per claim, a failure for each
    /// claim that does not hold), for CI systems that read test reports. Written whole or not at
    /// all; its folder is created if missing.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    #[command(flatten)]
    format: super::FormatArg,
}

pub(crate) fn check(
    args: CheckArgs,
    budget: &super::budget::BudgetArgs,
) -> super::CommandResult<()> {
    let overrides = args.overrides.list()?;

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

    let runs: Vec<_> = scenarios
        .iter()
        .map(|(_, s)| (s, u64::from(s.simulation.trials)))
        .collect();
    budget.check(&runs, crate::eureka::RequestMode::default(), false)?;
    let mut stdout = io::stdout().lock();
    let mut checked = Vec::new();
    for (source, scenario) in &scenarios {
        let what = format!("trials of {source}");
        let progress = Progress::new(u64::from(scenario.simulation.trials), &what);
        let file = check_file(source, scenario, &|| progress.tick())?;
        progress.finish();
        if args.format.is_text() {
            stdout.write_all(file.text.as_bytes())?;
        }
        checked.push(file);
    }
    let passed: usize = checked.iter().map(|f| f.passed).sum();
    let failed: usize = checked.iter().map(|f| f.failed).sum();
    if args.format.is_text() {
        writeln!(stdout, "{passed} passed, {failed} failed")?;
    } else {
        stdout.write_all(render_check_json(&checked).as_bytes())?;
    }
    if let Some(path) = &args.junit {
        write_junit(path, &checked)?;
    }
    if failed > 0 {
        return Err(ClaimsFailed {
            failed,
            total: passed + failed,
        }
        .into());
    }
    Ok(())
}

/// Writes the JUnit report to `path` (creating its folder) as a whole or not at all.
fn write_junit(path: &Path, checked: &[CheckedFile]) -> Result<(), OutputError> {
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir(folder)?;
    }
    write_atomic(path, render_junit(checked))
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
