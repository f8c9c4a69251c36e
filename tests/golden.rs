//! Golden outputs: `trials.csv` and `summary.csv` of every scenario file in `scenarios/` (the
//! bundled ones, `claims/` and `incidents/`) at seed 1 and 20 trials, committed under
//! `tests/golden/`. A change that moves any byte of them changes the model's output: it must be
//! on purpose, and its commit says why. Regenerate with `UPDATE_GOLDEN=1 cargo test --test
//! tests golden`, then read the diff.

use std::fs;
use std::path::{Path, PathBuf};

use eureka_sim::experiment::run_trials;
use eureka_sim::report::{summarize, write_summary_csv, write_trials_csv};
use eureka_sim::scenario::load;

const TRIALS: u32 = 20;
const SEED: u64 = 1;

use crate::harness::repo as root;

/// Every `.toml` under `scenarios/`, sorted, as paths relative to the crate root.
fn scenario_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("scenarios"), &mut files);
    files.sort();
    files
}

/// The two files of one scenario, as bytes.
fn outputs(relative: &Path) -> (Vec<u8>, Vec<u8>) {
    let overrides = [
        format!("simulation.trials={TRIALS}"),
        format!("simulation.seed={SEED}"),
    ];
    let scenario = load(&root().join(relative), &overrides)
        .unwrap_or_else(|e| panic!("{}: {e}", relative.display()));
    let outcomes = run_trials(&scenario);
    let mut trials = Vec::new();
    write_trials_csv(&mut trials, &scenario, &outcomes).unwrap();
    let mut summary = Vec::new();
    write_summary_csv(&mut summary, &summarize(&scenario, &outcomes)).unwrap();
    (trials, summary)
}

/// `scenarios/incidents/x.toml` -> `tests/golden/incidents/x`.
fn golden_dir(relative: &Path) -> PathBuf {
    let inner = relative
        .strip_prefix("scenarios")
        .unwrap()
        .with_extension("");
    root().join("tests/golden").join(inner)
}

#[test]
fn outputs_of_every_scenario_file_match_the_golden_files() {
    let files = scenario_files();
    assert!(
        files.len() >= 30,
        "expected the bundled, claim and incident files"
    );
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut differ = Vec::new();
    for relative in &files {
        let (trials, summary) = outputs(relative);
        let dir = golden_dir(relative);
        for (name, bytes) in [("trials.csv", &trials), ("summary.csv", &summary)] {
            let path = dir.join(name);
            if update {
                fs::create_dir_all(&dir).unwrap();
                fs::write(&path, bytes).unwrap();
            } else if fs::read(&path).ok().as_ref() != Some(bytes) {
                differ.push(path.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    assert!(
        differ.is_empty(),
        "outputs differ from the golden files (regenerate with UPDATE_GOLDEN=1 only if the \
         change is on purpose):\n  {}",
        differ.join("\n  ")
    );
}
