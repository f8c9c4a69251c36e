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
    let out = eureka_sim(
        dir.path(),
        0,
        &[
            "check".as_ref(),
            incidents().as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
    );
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

    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("check's JSON");
    let checked = doc["files"].as_array().expect("files");
    let total: usize = files.iter().map(|(_, n)| n).sum();
    for (name, claims) in &files {
        let file = checked
            .iter()
            .find(|f| {
                f["scenario"]
                    .as_str()
                    .is_some_and(|s| s.ends_with(&format!("/{name}")))
            })
            .unwrap_or_else(|| panic!("{name} not checked:\n{stdout}"));
        let results = file["claims"].as_array().expect("claims");
        assert_eq!(results.len(), *claims, "{name}");
        for claim in results {
            assert_eq!(claim["passed"], true, "{name}: {claim}");
            // The source names the issue it reproduces.
            let source = claim["source"].as_str().unwrap_or_default();
            const REPOS: [&str; 4] = [
                "Netflix/eureka#",
                "spring-cloud-netflix#",
                "spring-cloud-gateway#",
                "spring-cloud-commons#",
            ];
            assert!(REPOS.iter().any(|r| source.contains(r)), "{name}: {source}");
        }
    }
    assert_eq!(
        (doc["passed"].as_u64(), doc["failed"].as_u64()),
        (Some(total as u64), Some(0))
    );
}
