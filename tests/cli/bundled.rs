//! Every bundled scenario runs, and the files it writes have the documented shape.

use std::path::Path;

use super::csv_files::{METRICS, SUMMARY_HEADER, TRIALS_HEADER, Table, TrialRow};
use super::test::{OUT, Test, bundled, bundled_text};

/// The `[[shutdown]]` entries of a scenario file, as (instance, strategy), read with a TOML
/// parser independent of the simulator's own.
fn shutdowns(text: &str) -> Vec<(String, String)> {
    let doc: toml_edit::DocumentMut = text.parse().expect("a bundled scenario is valid TOML");
    let tables = doc
        .get("shutdown")
        .and_then(|item| item.as_array_of_tables())
        .expect("a bundled scenario has [[shutdown]] tables");
    tables
        .iter()
        .map(|t| {
            let field = |key: &str| {
                t.get(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_else(|| panic!("[[shutdown]] without a string `{key}`"))
                    .to_string()
            };
            (field("instance"), field("strategy"))
        })
        .collect()
}

#[test]
fn the_bundled_scenarios_are_found() {
    let names = bundled();
    for expected in [
        "kill-9.toml",
        "kill-15.toml",
        "pause.toml",
        "self-preservation.toml",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
}

#[test]
fn every_bundled_scenario_runs_and_writes_both_files() {
    const TRIALS: u64 = 3;
    for name in bundled() {
        let text = bundled_text(&name);
        let shutdowns = shutdowns(&text);
        assert!(!shutdowns.is_empty(), "{name}: no [[shutdown]]");
        let trials_path = Path::new(OUT).join("trials.csv").display().to_string();
        let summary_path = Path::new(OUT).join("summary.csv").display().to_string();
        let out = Test::scenario(&name)
            .trials(TRIALS as u32)
            .stdout_contains(name.as_str())
            .stdout_contains("wrote")
            .stdout_contains(trials_path)
            .stdout_contains(summary_path)
            // A bundled scenario is an example: it sets nothing that has no effect.
            .stderr_lacks("warning")
            .run();

        let trials = out.trials_table();
        assert_eq!(
            trials.header_line(),
            TRIALS_HEADER,
            "{name}: trials.csv header"
        );
        assert_eq!(
            trials.rows.len() as u64,
            TRIALS * shutdowns.len() as u64,
            "{name}: one trials.csv row per trial and shutdown"
        );
        let rows = TrialRow::all(&trials);
        for trial in 0..TRIALS {
            let of_trial: Vec<_> = rows.iter().filter(|r| r.trial == trial).collect();
            let named: Vec<_> = of_trial
                .iter()
                .map(|r| (r.instance.clone(), r.strategy.clone()))
                .collect();
            assert_eq!(
                named, shutdowns,
                "{name}: trial {trial} lists every shutdown, in file order"
            );
            let seeds: Vec<_> = of_trial.iter().map(|r| r.seed).collect();
            assert!(
                seeds.windows(2).all(|w| w[0] == w[1]),
                "{name}: one seed per trial"
            );
        }

        let summary = out.summary();
        assert_eq!(
            out.summary_table().header_line(),
            SUMMARY_HEADER,
            "{name}: summary.csv header"
        );
        assert_eq!(
            summary.len(),
            METRICS.len() * shutdowns.len(),
            "{name}: 8 metric rows per shutdown"
        );
        for (instance, strategy) in &shutdowns {
            let metrics: Vec<_> = summary
                .iter()
                .filter(|r| &r.instance == instance && &r.strategy == strategy)
                .map(|r| r.metric.as_str())
                .collect();
            assert_eq!(metrics, METRICS, "{name}: the metrics of {instance}");
        }
        assert!(
            summary.iter().all(|r| r.trials == TRIALS),
            "{name}: every summary row counts {TRIALS} trials"
        );
    }
}

/// Nearest-rank percentile (`sorted[ceil(q * n) - 1]`), the definition the summary documents,
/// given only from the number of values it needs (README, "Reading the metrics": the least `n`
/// with `1 - q^n - (1 - q)^n >= 0.95`, so `[X(1), X(n)]` is a 95 % interval of it).
fn nearest_rank(sorted: &[i64], q: f64) -> Option<i64> {
    let n = sorted.len();
    let coverage = 1.0 - q.powi(n as i32) - (1.0 - q).powi(n as i32);
    if n == 0 || coverage < 0.95 {
        return None;
    }
    let rank = (q * n as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// summary.csv is a function of trials.csv: recompute each row from the trials.
#[test]
fn summary_csv_agrees_with_trials_csv() {
    for name in bundled() {
        let out = Test::scenario(&name).trials(30).run();
        let trials = out.trials_table();
        let instances = trials.cells("instance");
        let strategies = trials.cells("strategy");
        for row in out.summary() {
            let cells: Vec<&str> = trials
                .cells(&row.metric)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| instances[*i] == row.instance && strategies[*i] == row.strategy)
                .map(|(_, cell)| cell)
                .collect();
            let mut values: Vec<i64> = cells
                .iter()
                .filter(|c| !c.is_empty())
                .map(|c| c.parse().expect("a number"))
                .collect();
            values.sort_unstable();
            let what = format!("{name}: {} {}", row.instance, row.metric);
            assert_eq!(row.trials, cells.len() as u64, "{what}: trials");
            assert_eq!(
                row.unresolved,
                (cells.len() - values.len()) as u64,
                "{what}: unresolved = empty cells"
            );
            // The reasons add up to the unresolved trials.
            let by_reason: u64 = row
                .unresolved_reasons
                .split(';')
                .filter(|part| !part.is_empty())
                .map(|part| {
                    part.split_once('=')
                        .expect("reason=count")
                        .1
                        .parse::<u64>()
                        .unwrap()
                })
                .sum();
            assert_eq!(by_reason, row.unresolved, "{what}: unresolved_reasons");
            assert_eq!(row.min, values.first().copied(), "{what}: min");
            assert_eq!(row.max, values.last().copied(), "{what}: max");
            assert_eq!(row.p50, nearest_rank(&values, 0.50), "{what}: p50");
            assert_eq!(row.p90, nearest_rank(&values, 0.90), "{what}: p90");
            assert_eq!(row.p99, nearest_rank(&values, 0.99), "{what}: p99");
            let mean = (!values.is_empty())
                .then(|| values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64);
            match (row.mean, mean) {
                (Some(shown), Some(exact)) => assert!(
                    (shown - exact).abs() <= 0.05 + 1e-9,
                    "{what}: mean {shown} vs {exact}"
                ),
                (shown, exact) => assert_eq!(shown, exact, "{what}: mean"),
            }
        }
    }
}

#[test]
fn out_folder_is_created_with_its_parents() {
    let out = Test::new()
        .copy_bundled("kill-9.toml")
        .args(["run", "kill-9.toml", "--trials", "1", "--out", "a/b/c"])
        .run();
    for file in ["trials.csv", "summary.csv"] {
        assert!(out.path("a/b/c").join(file).is_file(), "a/b/c/{file}");
    }
}

/// Without `--out` the files go to `output/<scenario file stem>` (documented in `run --help`),
/// relative to the working directory (here the test's temporary folder).
#[test]
fn default_out_folder_is_output_slash_stem() {
    let out = Test::new()
        .copy_bundled("kill-9.toml")
        .args(["run", "kill-9.toml", "--trials", "1"])
        .run();
    let trials = Table::parse(&out.read("output/kill-9/trials.csv"), "trials.csv");
    assert_eq!(trials.rows.len(), 1);
    assert!(out.path("output/kill-9/summary.csv").is_file());
}

/// A run without `--png` into a folder where a `--png` run wrote leaves no PNG of the
/// earlier run beside its own SVGs, and keeps a file the user put there.
#[test]
fn a_run_without_png_removes_the_earlier_runs_pngs() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = |png: bool| {
        let mut cmd = Command::new(crate::harness::BIN);
        cmd.arg("run")
            .arg(crate::harness::kill9())
            .args(["--trials", "3", "--out"])
            .arg(&out);
        if png {
            cmd.arg("--png");
        }
        assert!(cmd.output().unwrap().status.success());
    };
    run(true);
    assert!(out.join("exposure-cdf.png").is_file());
    std::fs::write(out.join("notes.png"), b"mine").unwrap();
    run(false);
    assert!(out.join("exposure-cdf.svg").is_file());
    assert!(!out.join("exposure-cdf.png").exists());
    assert!(!out.join("timeline.png").exists());
    assert!(out.join("notes.png").is_file());
}
