//! What every end-to-end module shares: the binary under test, the repository's files, running the
//! binary without ever accepting a panic, and reading the CSV files it writes. (`cli::test` builds
//! its `Test` builder on top of these.)

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test, as Cargo built it for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_eureka-sim");

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled `scenarios/kill-9.toml`, by its absolute path.
pub fn kill9() -> PathBuf {
    repo().join("scenarios/kill-9.toml")
}

/// A fresh temporary folder (removed when dropped).
pub fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// Runs the binary in `cwd` with `args` and `threads` rayon threads (0: rayon's default);
/// panics if it panicked.
pub fn eureka_sim<S: AsRef<OsStr>>(cwd: &Path, threads: usize, args: &[S]) -> Output {
    let mut command = Command::new(BIN);
    command.current_dir(cwd).args(args);
    if threads > 0 {
        command.env("RAYON_NUM_THREADS", threads.to_string());
    }
    let output = command.output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    output
}

/// The standard output of a run that must have succeeded.
pub fn ok(output: Output) -> String {
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A CSV file as its header and its rows of column name -> cell.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut reader = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .cloned()
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect();
    (header, rows)
}
