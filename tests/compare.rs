//! End to end: `eureka-sim compare` on the bundled kill-9 scenario. Checks the ranking of the
//! strategies that FACTS.md §7 predicts (kill -9 waits for lease expiry and eviction; kill -15
//! cancels at once but still leaves the caches to catch up; pause / service-registry with a 90 s
//! wait let the caches catch up before the process stops), that a variant's figures are exactly
//! those of `run` with the same overrides (common random numbers: the same seed gives the same
//! trials), and that the files are byte-identical across runs and thread counts.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Output;

use crate::harness::{eureka_sim, kill9, ok};

/// A CSV file as rows of column name -> cell.
fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    crate::harness::read_csv(path).1
}

fn cell<'a>(
    rows: &'a [BTreeMap<String, String>],
    variant: &str,
    metric: &str,
    column: &str,
) -> &'a str {
    let row = rows
        .iter()
        .find(|r| r["variant"] == variant && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {variant} {metric}"));
    &row[column]
}

fn number(rows: &[BTreeMap<String, String>], variant: &str, metric: &str, column: &str) -> f64 {
    cell(rows, variant, metric, column).parse().unwrap()
}

fn path(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

/// `eureka-sim compare` of the bundled kill-9 scenario with `args`, run in `cwd`.
fn compare_kill9(cwd: &Path, args: &[&str]) -> Output {
    let scenario = kill9();
    let mut all = vec!["compare", path(&scenario)];
    all.extend_from_slice(args);
    eureka_sim(cwd, 0, &all)
}

/// The kill-9 scenario's world at defaults: kill -9 > kill -15 > pause / service-registry with a
/// 90 s wait, in median exposure and in mean dead hits.
#[test]
fn at_defaults_kill_9_is_worse_than_kill_15_is_worse_than_a_90_s_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let stdout = ok(compare_kill9(
        tmp.path(),
        &[
            "--strategy",
            "kill-9,kill-15,pause,service-registry",
            "--wait-s",
            "90",
            "--trials",
            "60",
            // The last Hoxton whose /pause deregisters and keeps serving (Boot 2.2, commons 2.2.2).
            "--set",
            "simulation.release=Hoxton.SR4",
            "--out",
            path(&out),
        ],
    ));
    let rows = read_csv(&out.join("compare.csv"));
    let p50 = |v: &str| number(&rows, v, "exposure_ms", "p50");
    let mean_hits = |v: &str| number(&rows, v, "dead_hits", "mean");
    for waited in ["pause-90s", "service-registry-90s"] {
        assert!(p50("kill-9") > p50("kill-15"), "{stdout}");
        assert!(p50("kill-15") > p50(waited), "{stdout}");
        assert!(mean_hits("kill-9") > mean_hits("kill-15"), "{stdout}");
        assert!(mean_hits("kill-15") > mean_hits(waited), "{stdout}");
    }
    // The wait column: empty for the kills, the wait for the others.
    assert_eq!(cell(&rows, "kill-15", "dead_hits", "wait_s"), "");
    assert_eq!(cell(&rows, "pause-90s", "dead_hits", "wait_s"), "90");
    assert_eq!(cell(&rows, "pause-90s", "dead_hits", "strategy"), "pause");
    // One side-by-side table: a column per variant in the header line.
    let header = stdout.lines().find(|l| l.contains("kill-15")).unwrap();
    for v in ["kill-9", "kill-15", "pause-90s", "service-registry-90s"] {
        assert!(header.contains(v), "{header}");
    }
    assert!(stdout.contains("no dead hit"));
    for file in ["compare.csv", "exposure-cdf.svg", "report.html"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    assert!(!out.join("exposure-cdf.png").exists());
}

/// Every column `summary.csv` shares with `compare.csv` has the same text in the variant's rows.
fn assert_same_figures(summary: &Path, compare: &Path, variant: &str) {
    let summary = read_csv(summary);
    let compare = read_csv(compare);
    let rows: Vec<_> = compare.iter().filter(|r| r["variant"] == variant).collect();
    assert_eq!(rows.len(), summary.len(), "{variant}");
    for (s, c) in summary.iter().zip(rows) {
        for (column, value) in s {
            if let Some(other) = c.get(column) {
                assert_eq!(value, other, "{variant} {} {column}", s["metric"]);
            }
        }
        assert!(s.contains_key("p50") && s.contains_key("mean"));
    }
}

/// Common random numbers: the kill-15 and pause-90s variants are exactly `run` with the same
/// overrides and seed.
#[test]
fn a_variant_has_the_figures_of_run_with_the_same_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let (cmp, run15, run_pause) = (
        tmp.path().join("cmp"),
        tmp.path().join("run15"),
        tmp.path().join("pause"),
    );
    let scenario = kill9();
    let scenario = scenario.to_str().unwrap();
    ok(eureka_sim(
        tmp.path(),
        0,
        &[
            "compare",
            scenario,
            "--strategy",
            "kill-9,kill-15,pause",
            "--wait-s",
            "30,90",
            "--trials",
            "50",
            "--seed",
            "7",
            "--out",
            path(&cmp),
        ],
    ));
    ok(eureka_sim(
        tmp.path(),
        0,
        &[
            "run",
            scenario,
            "--set",
            "shutdown[0].strategy=kill-15",
            "--trials",
            "50",
            "--seed",
            "7",
            "--out",
            path(&run15),
        ],
    ));
    ok(eureka_sim(
        tmp.path(),
        0,
        &[
            "run",
            scenario,
            "--set",
            "shutdown[0].strategy=pause",
            "--set",
            "shutdown[0].wait-s=90",
            "--trials",
            "50",
            "--seed",
            "7",
            "--out",
            path(&run_pause),
        ],
    ));
    assert_same_figures(
        &run15.join("summary.csv"),
        &cmp.join("compare.csv"),
        "kill-15",
    );
    assert_same_figures(
        &run_pause.join("summary.csv"),
        &cmp.join("compare.csv"),
        "pause-90s",
    );
}

/// Same arguments, 1 or 2 threads: the same bytes in every file (PNG included) and on stdout.
#[test]
fn outputs_are_byte_identical_across_runs_and_thread_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = kill9();
    let mut runs = Vec::new();
    for threads in [1, 2, 2] {
        let out = tmp.path().join(format!("out{}", runs.len()));
        let stdout = ok(eureka_sim(
            tmp.path(),
            threads,
            &[
                "compare",
                scenario.to_str().unwrap(),
                "--strategy",
                "kill-15,service-registry",
                "--wait-s",
                "20,40",
                "--trials",
                "30",
                "--png",
                "--out",
                path(&out),
            ],
        ));
        let mut files = BTreeMap::new();
        for entry in fs::read_dir(&out).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() == ".eureka-sim-files" {
                continue; // the list of the files themselves (report::output::MANIFEST)
            }
            files.insert(entry.file_name(), fs::read(entry.path()).unwrap());
        }
        // The folder name is part of the "wrote ..." line.
        runs.push((stdout.replace(path(&out), "OUT"), files));
    }
    assert_eq!(runs[0].1.len(), 4, "{:?}", runs[0].1.keys());
    assert!(runs.windows(2).all(|w| w[0] == w[1]));
}

/// The report is one file: the CDF inline, no external resource.
#[test]
fn the_html_report_is_self_contained() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    ok(compare_kill9(
        tmp.path(),
        &[
            "--strategy",
            "kill-9,pause",
            "--wait-s",
            "60",
            "--trials",
            "30",
            "--out",
            path(&out),
        ],
    ));
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg"));
    assert!(html.contains("Exposure by shutdown strategy"));
    assert!(html.contains("pause-60s") && html.contains("kill-9"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    let svg = fs::read_to_string(out.join("exposure-cdf.svg")).unwrap();
    assert!(svg.contains("kill-9.toml") && svg.contains("pause-60s (n = 30)"));
}

/// Without --out, the files go to output/<stem>/compare/ under the working folder.
#[test]
fn the_default_folder_is_output_stem_compare() {
    let tmp = tempfile::tempdir().unwrap();
    fs::copy(kill9(), tmp.path().join("kill-9.toml")).unwrap();
    let stdout = ok(eureka_sim(
        tmp.path(),
        0,
        &[
            "compare",
            "kill-9.toml",
            "--strategy",
            "kill-15",
            "--trials",
            "30",
        ],
    ));
    let dir = tmp.path().join("output/kill-9/compare");
    assert!(dir.join("compare.csv").is_file(), "{stdout}");
    assert!(
        stdout.contains("output/kill-9/compare/report.html"),
        "{stdout}"
    );
}

/// A variant whose scenario is invalid is reported before any trial runs, naming the variant.
#[test]
fn an_invalid_variant_exits_2_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let output = compare_kill9(
        tmp.path(),
        &[
            "--strategy",
            "kill-9,pause",
            "--wait-s",
            "60,700",
            "--out",
            path(&out),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: variant pause-700s: "),
        "{stderr}"
    );
    assert!(stderr.contains("wait-s"), "{stderr}");
    assert!(!out.exists(), "nothing may be written");

    let output = compare_kill9(tmp.path(), &["--strategy", "kill-8"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kill-9, kill-15, pause, service-registry"),
        "{stderr}"
    );
}
