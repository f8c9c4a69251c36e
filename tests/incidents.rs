//! End to end: `eureka-sim check scenarios/incidents/`, the reproductions of issues people filed
//! (Netflix/eureka and spring-cloud-netflix), as a CI job would run it. Every incident file states
//! what its issue reported as `[[claim]]`s; they are reproductions, so every claim must hold and
//! the command must exit 0.
//!
//! The command runs in a temporary folder on the absolute path of the incidents, so nothing is
//! written into the repository.

use std::fs;
use std::path::PathBuf;

use crate::harness::{eureka_sim, repo, temp};

fn incidents() -> PathBuf {
    repo().join("scenarios/incidents")
}

/// The incident files, sorted, with the number of `[[claim]]` tables each holds.
fn files() -> Vec<(String, usize)> {
    let mut files: Vec<(String, usize)> = fs::read_dir(incidents())
        .expect("scenarios/incidents/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .map(|path| {
            let text = fs::read_to_string(&path).unwrap();
            let claims = text.lines().filter(|l| l.trim() == "[[claim]]").count();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, claims)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_incident_claim_passes() {
    let files = files();
    assert!(!files.is_empty(), "no incident file");
    for (name, claims) in &files {
        assert!(*claims >= 1, "{name} has no [[claim]]");
    }

    let dir = temp();
    let out = eureka_sim(dir.path(), 0, &["check".as_ref(), incidents().as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        fs::read_dir(dir.path()).unwrap().next().is_none(),
        "check wrote files"
    );

    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("PASS ") || l.starts_with("FAIL "))
        .collect();
    let total: usize = files.iter().map(|(_, n)| n).sum();
    assert_eq!(lines.len(), total, "{stdout}");
    for (name, claims) in &files {
        for index in 0..*claims {
            let tag = format!("{name} claim[{index}]");
            let line = lines
                .iter()
                .find(|l| l.contains(&tag))
                .unwrap_or_else(|| panic!("no line for {tag} in:\n{stdout}"));
            assert!(line.starts_with("PASS "), "{line}");
            // The source names the issue it reproduces.
            let source = line
                .split_once("; source: ")
                .map(|(_, s)| s)
                .unwrap_or_else(|| panic!("no source in `{line}`"));
            const REPOS: [&str; 4] = [
                "Netflix/eureka#",
                "spring-cloud-netflix#",
                "spring-cloud-gateway#",
                "spring-cloud-commons#",
            ];
            assert!(REPOS.iter().any(|r| source.contains(r)), "{line}");
        }
    }
    let expected = format!("{total} passed, 0 failed");
    assert_eq!(stdout.lines().last(), Some(expected.as_str()), "{stdout}");
}
