//! The fuzzer's findings, kept: every file under `fuzz/regressions/<target>/`
//! is an input that once crashed, hung or exhausted memory in that cargo-fuzz target, replayed
//! on the stable toolchain through the very code the target runs (`eureka_sim::fuzzing`).
//! Each must now return, within the fuzzer's `-timeout` (10 s): accepted, or refused with a
//! message that starts with where the problem is (the target panics otherwise).
//! `fuzz/README.md` says how to add one.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eureka_sim::fuzzing::{Outcome, TARGETS};

use crate::harness::repo;

/// The fuzzer's `-timeout` (`fuzz/run.sh`): what takes longer is a hang to it. Parsing one of
/// these inputs takes milliseconds; a test run on a loaded machine stays far below.
const TIMEOUT: Duration = Duration::from_secs(10);

fn regressions() -> PathBuf {
    repo().join("fuzz/regressions")
}

/// The files of `dir`, sorted (none if it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs target `name` on `file`; the panic message if it panicked.
fn replay(name: &str, file: &Path) -> Result<Outcome, String> {
    let (_, target) = TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no fuzz target {name}"));
    let data = fs::read(file).unwrap();
    catch_unwind(AssertUnwindSafe(|| target(&data))).map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn every_fuzz_regression_returns_with_a_located_message() {
    let mut failed = Vec::new();
    let mut replayed = 0;
    for (name, _) in TARGETS {
        for file in files(&regressions().join(name)) {
            replayed += 1;
            let started = Instant::now();
            let result = replay(name, &file);
            let took = started.elapsed();
            if let Err(panic) = result {
                failed.push(format!("{}: panicked: {panic}", file.display()));
            } else if took > TIMEOUT {
                failed.push(format!("{}: took {took:?}", file.display()));
            }
        }
    }
    assert!(replayed > 0, "no file under {}", regressions().display());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A folder that names no target would never be replayed.
#[test]
fn every_regression_folder_is_a_fuzz_target() {
    for entry in fs::read_dir(regressions()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            path.is_dir() && TARGETS.iter().any(|(n, _)| *n == name),
            "{}: not a folder named after a fuzz target ({:?})",
            path.display(),
            TARGETS.map(|(n, _)| n)
        );
    }
}

/// The fuzzers' dictionary (`fuzz/scenario.dict`) holds every scenario key of docs/keys.md's
/// table (itself `eureka-sim keys --markdown`, which a test keeps equal to the code), so a new
/// key reaches the mutator as a token, not only by chance.
#[test]
fn the_fuzz_dictionary_holds_every_scenario_key() {
    let readme = fs::read_to_string(repo().join("docs/keys.md")).unwrap();
    let dict = fs::read_to_string(repo().join("fuzz/scenario.dict")).unwrap();
    let tokens: std::collections::HashSet<&str> = dict
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::trim)
        .collect();
    let keys: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `["))
        .filter_map(|l| l.split('|').nth(2))
        .map(|cell| cell.trim().trim_matches('`'))
        .collect();
    assert!(
        keys.len() > 100,
        "{} keys in the docs/keys.md table",
        keys.len()
    );
    let missing: Vec<&&str> = keys
        .iter()
        .filter(|k| !tokens.contains(format!("\"{k}\"").as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "fuzz/scenario.dict lacks {missing:?}: regenerate its keys (the command at its top)"
    );
}
