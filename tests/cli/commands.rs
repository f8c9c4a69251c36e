//! The front door's rough edges: bad input exits 2 for every command, what
//! `recommend` prints can be pasted into `--set`, `compare`'s default wait, and `--format json`
//! carrying the numbers of the CSV files.

use super::test::Test;

/// A missing scenario file is bad input for every command, `recommend` and `bench` included:
/// exit 2 naming the file, nothing on stdout.
#[test]
fn recommend_and_bench_exit_2_on_a_missing_file() {
    for command in ["recommend", "bench", "run", "explain", "compare"] {
        let out = Test::new()
            .args([command, "nope.toml"])
            .status(2)
            .stderr_contains("nope.toml")
            .run();
        assert!(out.stdout.is_empty(), "{command}: {}", out.stdout);
    }
}

/// `bench --trials 0` would measure nothing and report a speed-up of nothing: refused with the
/// range allowed, as is `--oracle-trials 0`.
#[test]
fn bench_refuses_zero_trials() {
    for flag in ["--trials", "--oracle-trials"] {
        let out = Test::new()
            .args(["bench", flag, "0", "--no-oracle"])
            .status(2)
            .stderr_contains(format!("invalid value '0' for '{flag}"))
            .stderr_contains("1..")
            .run();
        assert!(out.stdout.is_empty());
    }
}

/// Without a scenario, `bench` measures the bundled kill-9 world built into the binary, from a
/// folder with no `scenarios/` in it.
#[test]
fn bench_without_a_scenario_does_not_depend_on_the_working_folder() {
    Test::new()
        .args(["bench", "--trials", "1", "--no-oracle"])
        .stdout_contains("scenarios/kill-9.toml (built in): 1 trials per measurement")
        .run();
}

/// `explain --plot` writes SVG or PNG, chosen by the extension: any other name is refused (exit
/// 2, the extensions allowed) instead of SVG written under it, and nothing is written.
#[test]
fn explain_refuses_a_plot_name_it_cannot_honour() {
    for name in ["x.pdf", "x", "x.SVG.txt"] {
        let out = Test::new()
            .copy_bundled("kill-9.toml")
            .args(["explain", "kill-9.toml", "--plot", name])
            .status(2)
            .stderr_contains(".svg or .png")
            .run();
        assert!(!out.path(name).exists(), "{name} written");
        assert!(out.stdout.is_empty());
    }
}

/// The lines `recommend` prints under "what shortens it" start with `KEY=VALUE` overrides;
/// each is accepted verbatim by `--set`, and `caller[*]` sets every [[caller]]: on a file with
/// one caller, the same trials as `caller[0]`.
#[test]
fn recommend_prints_overrides_that_set_accepts() {
    let out = Test::new()
        .copy_bundled("pause.toml")
        .args(["recommend", "pause.toml", "--trials", "6"])
        .run();
    let overrides: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| l.trim_start().split_once(": p").map(|(o, _)| o.to_string()))
        .filter(|o| o.contains('='))
        .collect();
    assert!(overrides.len() >= 3, "{}", out.stdout);
    assert!(
        overrides.iter().any(|o| o.starts_with("caller[*].")),
        "{overrides:?}"
    );
    let run = |set: &str| {
        Test::scenario("pause.toml")
            .trials(3)
            .set(set)
            .run()
            .trials_bytes()
    };
    let baseline = Test::scenario("pause.toml").trials(3).run().trials_bytes();
    for o in &overrides {
        let with = run(o);
        if let Some(rest) = o.strip_prefix("caller[*].") {
            assert_eq!(with, run(&format!("caller[0].{rest}")), "{o}");
            assert_ne!(with, baseline, "{o} changed nothing");
        }
    }
}

/// With the read-only cache off, fetches read the read-write cache, which a change invalidates
/// at once (FACTS.md §3): `recommend` proposes no change of the read-only cache's interval.
#[test]
fn recommend_proposes_no_setting_without_effect() {
    let key = "server.eureka.server.response-cache-update-interval-ms=";
    let on = Test::new()
        .copy_bundled("pause.toml")
        .args(["recommend", "pause.toml", "--trials", "6"])
        .run();
    assert!(on.stdout.contains(key), "{}", on.stdout);
    let off = Test::new()
        .copy_bundled("pause.toml")
        .args(["recommend", "pause.toml", "--trials", "6"])
        .set("server.eureka.server.use-read-only-response-cache=false")
        .run();
    assert!(!off.stdout.contains(key), "{}", off.stdout);
    assert!(
        off.stdout
            .contains("caller[*].ribbon.ServerListRefreshInterval="),
        "{}",
        off.stdout
    );
}

/// `run --format json` prints summary.json, byte for byte, instead of the text: the numbers of
/// summary.csv, and nothing else on stdout.
#[test]
fn run_format_json_is_summary_json_with_the_numbers_of_summary_csv() {
    let out = Test::scenario("kill-9.toml")
        .trials(30)
        .args(["--format", "json"])
        .run();
    assert_eq!(out.stdout.as_bytes(), out.read("out/summary.json"));
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(doc["trials"], 30);
    let metrics = doc["shutdowns"][0]["metrics"].as_array().unwrap();
    let rows = out.summary();
    assert_eq!(metrics.len(), rows.len());
    for (json, csv) in metrics.iter().zip(&rows) {
        assert_eq!(json["metric"], csv.metric.as_str());
        assert_eq!(json["trials"], csv.trials);
        for (key, value) in [
            ("min", csv.min),
            ("p50", csv.p50),
            ("p90", csv.p90),
            ("max", csv.max),
        ] {
            assert_eq!(json[key].as_i64(), value, "{} {key}", csv.metric);
        }
        let (a, b) = (json["mean"].as_f64(), csv.mean);
        assert!(
            a.zip(b).is_some_and(|(a, b)| (a - b).abs() < 0.05) || a == b,
            "{} mean {a:?} {b:?}",
            csv.metric
        );
    }
}

/// `compare --format json`: one entry per variant with the numbers of compare.csv.
#[test]
fn compare_format_json_has_the_numbers_of_compare_csv() {
    let out = Test::new()
        .copy_bundled("kill-15.toml")
        .args([
            "compare",
            "kill-15.toml",
            "--trials",
            "8",
            "--wait-s",
            "30,60",
        ])
        .args(["--out", "out", "--format", "json"])
        .run();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let variants = doc["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "kill-9",
            "kill-15",
            "pause-30s",
            "pause-60s",
            "service-registry-30s",
            "service-registry-60s"
        ]
    );
    let (_, rows) = crate::harness::read_csv(&out.path("out/compare.csv"));
    let mut checked = 0;
    for row in &rows {
        let variant = variants
            .iter()
            .find(|v| v["name"] == row["variant"].as_str())
            .unwrap();
        let metric = variant["shutdowns"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == row["metric"].as_str())
            .unwrap();
        for key in ["min", "p50", "max"] {
            let cell = row[key].parse::<i64>().ok();
            assert_eq!(
                metric[key].as_i64(),
                cell,
                "{} {} {key}",
                row["variant"],
                row["metric"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 6 * 3 * 5, "only {checked}");
}

/// `compare` on a kill scenario without `--wait-s` does not compare 0 s drains (as bad as a
/// kill -15): pause and service-registry wait the closed-form worst case, at defaults the read-only
/// cache 30 s + fetch 30 s + Ribbon 30 s + four one-way latencies of at most 1 + 4 ms = 90.02 s,
/// rounded up to 91 s; and it says so.
#[test]
fn compare_without_waits_drains_for_the_worst_case_and_says_why() {
    let out = Test::new()
        .copy_bundled("kill-9.toml")
        .args(["compare", "kill-9.toml", "--trials", "3", "--out", "out"])
        .args(["--format", "json"])
        .stderr_contains("note: no --wait-s: pause and service-registry wait 91 s")
        .run();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let names: Vec<&str> = doc["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["kill-9", "kill-15", "pause-91s", "service-registry-91s"]
    );
}

/// `č` is a letter, but not one a name may hold: names become ids in file names, CSV, SVG and
/// HTML, and are ASCII. The message says so rather than calling `č` "not a letter".
#[test]
fn a_non_ascii_name_is_refused_saying_ascii() {
    let text = super::test::edit(
        &super::test::bundled_text("kill-9.toml"),
        "name = \"svc\"",
        "name = \"svč\"",
    );
    let out = Test::new()
        .write("bad.toml", text)
        .args(["run", "bad.toml", "--out", "out"])
        .status(2)
        .stderr_contains("'č' is not allowed (ASCII letters and digits, `_`, `.` and `-` only)")
        .run();
    assert!(!out.path("out").exists());
}

/// `recommend --format json` carries the numbers the text tells, for the same seed and
/// trials: each measured strategy's wait and worst case, and the shortest cut(s).
#[test]
fn recommend_json_carries_the_texts_numbers() {
    use std::process::Command;
    let run = |json: bool| {
        let mut cmd = Command::new(crate::harness::BIN);
        cmd.arg("recommend")
            .arg(crate::harness::repo().join("scenarios/service-registry.toml"))
            .args(["--trials", "30"]);
        if json {
            cmd.args(["--format", "json"]);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let (text, json) = (run(false), run(true));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let measured: Vec<&serde_json::Value> = doc["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["measured"] == true)
        .collect();
    assert!(!measured.is_empty(), "{json}");
    for s in measured {
        let wait = s["wait_s"].as_u64().unwrap();
        let worst = s["worst_case_s"].as_u64().unwrap();
        assert!(
            text.contains(&format!("wait-s = {wait} s (simulated over 30")),
            "{text}"
        );
        assert!(
            text.contains(&format!("whatever the phases: wait-s = {worst} s")),
            "{text}"
        );
        let shortest: Vec<&str> = s["shortest"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        match shortest.as_slice() {
            [one] => assert!(text.contains(&format!("cutting {one} shortens")), "{text}"),
            many => assert!(
                many.iter().all(|k| text.contains(&format!("{k} "))),
                "{text}"
            ),
        }
    }
}
