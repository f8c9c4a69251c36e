//! A small builder for running the real binary, in the manner of casey/just's `Test`:
//!
//! ```ignore
//! Test::scenario("kill-9.toml").trials(3).stdout_contains("kill-9.toml").run();
//! Test::new().write("bad.toml", "...").args(["run", "bad.toml"]).status(2).run();
//! ```
//!
//! Every test runs in a fresh temporary folder that is also the working directory, so nothing
//! can land in the repository (not even in `output/` if `--out` were forgotten). Bundled
//! scenarios are copied into that folder and named by their bare file name, which keeps the
//! file names in messages short and predictable.
//!
//! `run()` always checks, besides the expected exit code, that the binary did not panic: a panic
//! is never an acceptable answer to any input.

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::csv_files::{SummaryRow, Table, TrialRow};

pub use crate::harness::{BIN, repo};

/// The folder `Test::scenario` passes as `--out` (relative to the test's folder).
pub const OUT: &str = "out";

/// A run that takes longer than this is reported as hung (the slowest test run takes well
/// under a second; an absurd duration that slipped through validation would take hours).
const TIMEOUT: Duration = Duration::from_secs(120);

/// The bundled scenario files (`scenarios/*.toml`), by file name, sorted.
pub fn bundled() -> Vec<String> {
    let dir = repo().join("scenarios");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.ends_with(".toml"))
        .collect();
    names.sort();
    names
}

/// The text of a bundled scenario.
pub fn bundled_text(name: &str) -> String {
    let path = repo().join("scenarios").join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `text` with `from` replaced by `to` exactly once; panics if `from` does not occur exactly
/// once, so a test never silently runs on an unedited file.
pub fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "expected `{from}` exactly once in the scenario"
    );
    text.replacen(from, to, 1)
}

/// The 1-based line on which `needle` first occurs in `text`.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in the text"))
        + 1
}

/// A pending run of the binary.
#[must_use]
pub struct Test {
    dir: TempDir,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    status: i32,
    stdout_contains: Vec<String>,
    stderr_contains: Vec<String>,
    stderr_lacks: Vec<String>,
}

impl Test {
    /// No arguments yet, in a fresh empty folder.
    pub fn new() -> Test {
        Test {
            dir: tempfile::Builder::new()
                .prefix("eureka-sim-cli-")
                .tempdir()
                .expect("a temporary folder"),
            args: Vec::new(),
            env: Vec::new(),
            status: 0,
            stdout_contains: Vec::new(),
            stderr_contains: Vec::new(),
            stderr_lacks: Vec::new(),
        }
    }

    /// `run NAME --out out` on a copy of the bundled scenario NAME.
    pub fn scenario(name: &str) -> Test {
        Test::new()
            .copy_bundled(name)
            .args(["run", name, "--out", OUT])
    }

    /// Copies the bundled scenario `name` into the test's folder, under the same name.
    pub fn copy_bundled(self, name: &str) -> Test {
        let text = bundled_text(name);
        self.write(name, &text)
    }

    /// Writes a file into the test's folder.
    pub fn write(self, name: &str, contents: impl AsRef<[u8]>) -> Test {
        let path = self.dir.path().join(name);
        fs::write(&path, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Test {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, A>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the run.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Test {
        self.env.push((key.into(), value.into()));
        self
    }

    /// `--trials N`.
    pub fn trials(self, n: u32) -> Test {
        self.args(["--trials".to_string(), n.to_string()])
    }

    /// `--set KEY=VALUE`.
    pub fn set(self, assignment: &str) -> Test {
        self.args(["--set", assignment])
    }

    /// The expected exit code (0 unless told).
    pub fn status(mut self, code: i32) -> Test {
        self.status = code;
        self
    }

    pub fn stdout_contains(mut self, text: impl Into<String>) -> Test {
        self.stdout_contains.push(text.into());
        self
    }

    pub fn stderr_contains(mut self, text: impl Into<String>) -> Test {
        self.stderr_contains.push(text.into());
        self
    }

    pub fn stderr_lacks(mut self, text: impl Into<String>) -> Test {
        self.stderr_lacks.push(text.into());
        self
    }

    /// Runs the binary and checks the exit code and the expected text; panics with the whole
    /// command, exit code, stdout and stderr on any mismatch.
    pub fn run(self) -> Output {
        let (code, stdout, stderr) = execute(self.dir.path(), &self.args, &self.env);
        let command = format!("eureka-sim {}", shell_words(&self.args));
        let context = format!(
            "command: {command}\nexit code: {code:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "the binary panicked\n{context}"
        );
        assert_eq!(code, Some(self.status), "unexpected exit code\n{context}");
        for text in &self.stdout_contains {
            assert!(
                stdout.contains(text.as_str()),
                "stdout lacks `{text}`\n{context}"
            );
        }
        for text in &self.stderr_contains {
            assert!(
                stderr.contains(text.as_str()),
                "stderr lacks `{text}`\n{context}"
            );
        }
        for text in &self.stderr_lacks {
            assert!(
                !stderr.contains(text.as_str()),
                "stderr has `{text}`\n{context}"
            );
        }
        Output {
            stdout,
            stderr,
            dir: self.dir,
        }
    }
}

/// Runs the binary in `dir`; returns its exit code (`None` if killed by a signal), stdout and
/// stderr. Kills it and panics after [`TIMEOUT`].
fn execute(
    dir: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
) -> (Option<i32>, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the binary") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "eureka-sim {} did not finish within {TIMEOUT:?}",
                shell_words(args)
            );
        }
        thread::sleep(Duration::from_millis(5));
    };
    let stdout = stdout.join().expect("stdout reader");
    let stderr = stderr.join().expect("stderr reader");
    (status.code(), stdout, stderr)
}

fn shell_words(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a finished run left: its output streams and its folder (kept alive until dropped).
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    dir: TempDir,
}

impl Output {
    /// A path inside the test's folder.
    pub fn path(&self, relative: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// The bytes of a file inside the test's folder.
    pub fn read(&self, relative: impl AsRef<Path>) -> Vec<u8> {
        let path = self.path(relative);
        fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    /// `out/trials.csv` as raw bytes.
    pub fn trials_bytes(&self) -> Vec<u8> {
        self.read(Path::new(OUT).join("trials.csv"))
    }

    /// `out/summary.csv` as raw bytes.
    pub fn summary_bytes(&self) -> Vec<u8> {
        self.read(Path::new(OUT).join("summary.csv"))
    }

    /// `out/trials.csv` as a table.
    pub fn trials_table(&self) -> Table {
        Table::parse(&self.trials_bytes(), "trials.csv")
    }

    /// `out/summary.csv` as a table.
    pub fn summary_table(&self) -> Table {
        Table::parse(&self.summary_bytes(), "summary.csv")
    }

    /// The rows of `out/trials.csv`.
    pub fn trials(&self) -> Vec<TrialRow> {
        TrialRow::all(&self.trials_table())
    }

    /// The rows of `out/summary.csv`.
    pub fn summary(&self) -> Vec<SummaryRow> {
        SummaryRow::all(&self.summary_table())
    }
}
