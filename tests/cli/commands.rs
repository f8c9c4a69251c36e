//! The rough edges of `recommend`, `bench` and `explain` (issue 13): bad input exits 2 as for
//! every other command, and what `recommend` prints can be pasted into `--set`.

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
