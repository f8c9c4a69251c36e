//! Output that is whole or absent: a signal while a command runs leaves the
//! output folder as the previous run left it, with no half-written file and no staging folder.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::harness::{BIN, eureka_sim, kill9, temp};

/// Every file of `dir` by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

fn staging_exists(dir: &Path) -> bool {
    fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".eureka-sim-staging.")
            })
        })
        .unwrap_or(false)
}

/// SIGTERM during a 10 000-trial run, once it has begun: exit 130, a message that says the
/// folder was left alone, and the folder byte for byte as the previous (complete) run wrote it.
#[test]
fn sigterm_during_a_long_run_leaves_the_previous_output_whole() {
    let dir = temp();
    let out = dir.path().join("out");
    let kill9 = kill9();
    let first = eureka_sim(
        dir.path(),
        0,
        &[
            "run",
            kill9.to_str().unwrap(),
            "--trials",
            "3",
            "--out",
            "out",
        ],
    );
    assert!(first.status.success());
    let before = files(&out);
    assert!(before.contains_key("trials.csv"), "{:?}", before.keys());

    let child = Command::new(BIN)
        .current_dir(dir.path())
        .args([
            "run",
            kill9.to_str().unwrap(),
            "--trials",
            "10000",
            "--out",
            "out",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !staging_exists(&out) && started.elapsed() < Duration::from_secs(60) {
        thread::sleep(Duration::from_millis(10));
    }
    assert!(
        staging_exists(&out),
        "the run never began staging its output"
    );
    thread::sleep(Duration::from_millis(200));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted: nothing written to"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!staging_exists(&out));
    assert_eq!(files(&out), before, "the folder changed");
}
