//! End to end: `eureka-sim sweep` on the bundled kill-9 scenario: the shape of `sweep.csv`, the
//! plots for one and two keys (none for three), that a grid point has exactly the figures of
//! `run` with the same `--set` (common random numbers), that a faster Ribbon refresh shortens the
//! exposure (FACTS.md §8: the list is refreshed every ServerListRefreshInterval), validation
//! before any trial, and byte-identical output across thread counts.

use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::process::Output;

use crate::harness::{eureka_sim, kill9, ok, read_csv};

/// Metrics per shutdown in `sweep.csv` (one row each).
const METRICS: usize = 11;

const REFRESH: &str = "clients.ribbon.ServerListRefreshInterval";
const CACHE: &str = "server.eureka.server.response-cache-update-interval-ms";

/// Runs `sweep kill-9.toml ARGS --out OUT` in `cwd` with `threads` rayon threads (0: default).
fn sweep(cwd: &Path, out: &Path, threads: usize, args: &[&str]) -> Output {
    let mut all: Vec<OsString> = vec!["sweep".into(), kill9().into()];
    all.extend(args.iter().map(OsString::from));
    all.extend(["--out".into(), out.into()]);
    eureka_sim(cwd, threads, &all)
}

const STATS: [&str; 12] = [
    "instance",
    "metric",
    "trials",
    "unresolved",
    "min",
    "p50",
    "p90",
    "p99",
    "p99_9",
    "max",
    "mean",
    "zero_share",
];

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        // The list of the files themselves (report::output::MANIFEST).
        .filter(|name| name != ".eureka-sim-files")
        .collect();
    names.sort();
    names
}

#[test]
fn one_key_gives_a_row_per_point_and_metric_and_two_line_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let vary = format!("{REFRESH}=30000,5000");
    let stdout = ok(sweep(
        tmp.path(),
        &out,
        0,
        &["--vary", &vary, "--trials", "60", "--png"],
    ));
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let mut expected = vec![REFRESH.to_string()];
    expected.extend(STATS.map(String::from));
    assert_eq!(header, expected);
    assert_eq!(rows.len(), 2 * METRICS);
    assert_eq!(rows[0][REFRESH], "30000");
    assert_eq!(rows[METRICS][REFRESH], "5000");
    assert!(rows.iter().all(|r| r["trials"] == "60"));
    // Refreshing the Ribbon list every 5 s instead of 30 s shortens the exposure.
    let mean = |i: usize| rows[i]["mean"].parse::<f64>().unwrap();
    assert_eq!(rows[0]["metric"], "exposure_ms");
    assert!(mean(METRICS) < mean(0), "{stdout}");
    // 60 trials per point support p90 but not p99 (299): the plots show p90 and say why.
    assert_eq!(
        names(&out),
        [
            "dead-hits-mean.png",
            "dead-hits-mean.svg",
            "exposure-p90.png",
            "exposure-p90.svg",
            "report.html",
            "sweep.csv"
        ]
    );
    assert!(
        stdout.contains(
            "p99 needs at least 299 trials per point (these have 60): the plots show p90"
        ),
        "{stdout}"
    );
    let svg = fs::read_to_string(out.join("exposure-p90.svg")).unwrap();
    assert!(svg.contains(REFRESH) && svg.contains("kill-9.toml"));
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 2);
    // The terminal grid: one line per point with its value first.
    assert!(stdout.contains("p50 exposure (s)") && stdout.contains("mean dead hits"));
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("p99 exposure (s)"))
        .unwrap();
    assert!(lines[at + 1].trim_start().starts_with("30000"));
    assert!(lines[at + 2].trim_start().starts_with("5000"));
    // The grid's p99 column says how many trials it needs instead of a figure.
    assert!(lines[at + 1].contains("n<299"), "{}", lines[at + 1]);
    assert!(stdout.contains("\"n<N\": too few trials for this percentile"));
    // sweep.csv leaves the unsupported percentiles empty.
    assert!(
        rows.iter()
            .all(|r| r["p99"].is_empty() && r["p99_9"].is_empty())
    );
}

#[test]
fn two_keys_give_heatmaps_and_the_keys_lead_the_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cache = format!("{CACHE}=5000,15000,30000");
    let refresh = format!("{REFRESH}=5000,30000");
    ok(sweep(
        tmp.path(),
        &out,
        0,
        &["--vary", &cache, "--vary", &refresh, "--trials", "30"],
    ));
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(&header[..3], [CACHE, REFRESH, "instance"]);
    assert_eq!(rows.len(), 6 * METRICS);
    let points: Vec<(String, String)> = rows
        .iter()
        .step_by(METRICS)
        .map(|r| (r[CACHE].clone(), r[REFRESH].clone()))
        .collect();
    let expected: Vec<(String, String)> = [
        ("5000", "5000"),
        ("5000", "30000"),
        ("15000", "5000"),
        ("15000", "30000"),
        ("30000", "5000"),
        ("30000", "30000"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(points, expected);
    assert_eq!(
        names(&out),
        [
            "dead-hits-mean.svg",
            "exposure-p90.svg",
            "report.html",
            "sweep.csv"
        ]
    );
}

#[test]
fn three_keys_write_the_csv_and_skip_the_plots_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let stdout = ok(sweep(
        tmp.path(),
        &out,
        0,
        &[
            "--vary",
            &format!("{CACHE}=5000,30000"),
            "--vary",
            &format!("{REFRESH}=5000,30000"),
            "--vary",
            "clients.eureka.client.registry-fetch-interval-seconds=5,30",
            "--trials",
            "30",
        ],
    ));
    assert!(stdout.contains("No plots"), "{stdout}");
    assert_eq!(names(&out), ["report.html", "sweep.csv"]);
    let (_, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 8 * METRICS);
}

/// Common random numbers: the point `ServerListRefreshInterval=5000` is exactly `run` with
/// `--set` of the same value (and the same seed).
#[test]
fn a_point_has_the_figures_of_run_with_the_same_set() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, run) = (tmp.path().join("out"), tmp.path().join("run"));
    let vary = format!("{REFRESH}=30000,5000");
    ok(sweep(
        tmp.path(),
        &out,
        0,
        &["--vary", &vary, "--trials", "40", "--seed", "11"],
    ));
    let set = format!("{REFRESH}=5000");
    let mut args: Vec<OsString> = vec!["run".into(), kill9().into()];
    args.extend(["--set", &set, "--trials", "40", "--seed", "11", "--out"].map(OsString::from));
    args.push(run.clone().into());
    ok(eureka_sim(tmp.path(), 0, &args));
    let (_, summary) = read_csv(&run.join("summary.csv"));
    let (_, rows) = read_csv(&out.join("sweep.csv"));
    let point: Vec<_> = rows.iter().filter(|r| r[REFRESH] == "5000").collect();
    assert_eq!(point.len(), summary.len());
    for (s, p) in summary.iter().zip(point) {
        for (column, value) in s {
            if let Some(other) = p.get(column) {
                assert_eq!(value, other, "{} {column}", s["metric"]);
            }
        }
    }
}

/// Every value and point is validated before any trial runs: exit 2, the message names the
/// `--vary` argument, and nothing is written.
#[test]
fn a_bad_value_exits_2_naming_the_vary_argument() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let vary = format!("{CACHE}=5000,0");
    let output = sweep(
        tmp.path(),
        &out,
        0,
        &["--vary", &format!("{REFRESH}=5000"), "--vary", &vary],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("error: --vary {vary}: value `0`: ")),
        "{stderr}"
    );
    assert!(!out.exists());

    // The same key twice (under two spellings), and a malformed argument.
    for args in [
        vec![
            "--vary".to_string(),
            format!("{CACHE}=5000"),
            "--vary".to_string(),
            "server.eureka.server.responseCacheUpdateIntervalMs=1000".to_string(),
        ],
        vec!["--vary".to_string(), CACHE.to_string()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = sweep(tmp.path(), &out, 0, &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("--vary"));
        assert!(!out.exists());
    }
}

#[test]
fn outputs_are_byte_identical_across_thread_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = format!("{CACHE}=5000,30000");
    let refresh = format!("{REFRESH}=5000,30000");
    let mut runs = Vec::new();
    for threads in [1, 2] {
        let out = tmp.path().join(format!("out{threads}"));
        let stdout = ok(sweep(
            tmp.path(),
            &out,
            threads,
            &["--vary", &cache, "--vary", &refresh, "--trials", "30"],
        ));
        let files: Vec<(String, Vec<u8>)> = names(&out)
            .into_iter()
            .map(|n| {
                let bytes = fs::read(out.join(&n)).unwrap();
                (n, bytes)
            })
            .collect();
        runs.push((stdout.replace(out.to_str().unwrap(), "OUT"), files));
    }
    assert_eq!(runs[0], runs[1]);
}
