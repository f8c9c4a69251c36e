//! `--set KEY=VALUE`, `--trials` and `--seed` change the scenario as documented in `run --help`.

use super::envelopes::SLACK_MS;
use super::test::{OUT, Test, bundled_text, edit};

#[test]
fn set_shutdown_strategy_changes_the_strategy_column_and_the_behaviour() {
    let rows = Test::scenario("kill-9.toml")
        .trials(10)
        .set("shutdown[0].strategy=kill-15")
        .run()
        .trials();
    assert_eq!(rows.len(), 10);
    for r in &rows {
        assert_eq!(r.strategy, "kill-15");
        // Graceful: the DOWN register reaches the registry within one request (FACTS.md §7),
        // instead of minutes later through lease expiry.
        let removed = r.server_removed_ms.expect("the registry drops it");
        assert!((0..=SLACK_MS).contains(&removed), "{r:?}");
    }
}

#[test]
fn trials_flag_sets_the_number_of_rows() {
    let rows = Test::scenario("kill-9.toml").trials(4).run().trials();
    assert_eq!(rows.len(), 4);
}

#[test]
fn set_simulation_trials_sets_the_number_of_rows() {
    let rows = Test::scenario("kill-9.toml")
        .set("simulation.trials=2")
        .run()
        .trials();
    assert_eq!(rows.len(), 2);
}

#[test]
fn without_overrides_the_file_decides_the_number_of_trials() {
    // The bundled files ask for hundreds of trials; a copy asking for 7 keeps this quick.
    let text = edit(&bundled_text("kill-15.toml"), "trials = 200", "trials = 7");
    let rows = Test::new()
        .write("seven.toml", text)
        .args(["run", "seven.toml", "--out", OUT])
        .run()
        .trials();
    assert_eq!(rows.len(), 7);
}

/// A server key is a dotted Spring property inside a dotted `--set` path; setting the read-only
/// cache period to 5 s bounds the registry -> read-only cache lag by 5 s (FACTS.md §3).
#[test]
fn set_a_dotted_server_key() {
    let lag = |rows: Vec<super::csv_files::TrialRow>| {
        rows.iter()
            .map(|r| r.readonly_removed_ms.unwrap() - r.server_removed_ms.unwrap())
            .collect::<Vec<_>>()
    };
    let default = lag(Test::scenario("kill-9.toml").trials(50).run().trials());
    let tuned = lag(Test::scenario("kill-9.toml")
        .trials(50)
        .set("server.eureka.server.response-cache-update-interval-ms=5000")
        .run()
        .trials());
    // Uniform over (0, 30 s] at the default: some of 50 trials wait longer than 5 s.
    assert!(
        default.iter().any(|&l| l > 5_000 + SLACK_MS),
        "default lags {default:?}"
    );
    assert!(
        tuned.iter().all(|&l| (0..=5_000 + SLACK_MS).contains(&l)),
        "5 s lags {tuned:?}"
    );
}

/// `app.<name>.key` addresses the same table as `app[<index>].key`.
#[test]
fn set_by_app_name_equals_set_by_index() {
    let by_name = Test::scenario("kill-9.toml")
        .trials(5)
        .set("app.svc.instances=7")
        .run();
    let by_index = Test::scenario("kill-9.toml")
        .trials(5)
        .set("app[0].instances=7")
        .run();
    let neither = Test::scenario("kill-9.toml").trials(5).run();
    assert!(by_name.trials_bytes() == by_index.trials_bytes());
    assert!(by_name.trials_bytes() != neither.trials_bytes());
}

#[test]
fn a_key_without_effect_warns_but_runs() {
    Test::scenario("kill-9.toml")
        .trials(1)
        .set("shutdown[0].wait-s=100")
        .stderr_contains("warning")
        .stderr_contains("shutdown[0].wait-s")
        .run();
}

/// `--trials 3` with `--set simulation.trials=1000000` ran a million trials: the explicit flag
/// and the `--set` of its key disagree, so neither wins in silence (exit 2, both named, nothing
/// written). The same for `--seed`, and for every command that reads them.
#[test]
fn an_explicit_flag_and_a_set_of_its_key_that_disagree_are_refused() {
    for (flag, value, set) in [
        ("--trials", "3", "simulation.trials=1000000"),
        ("--seed", "7", "simulation.seed=8"),
    ] {
        for command in ["run", "explain", "compare"] {
            let out = Test::new()
                .copy_bundled("kill-9.toml")
                .args([command, "kill-9.toml", flag, value, "--set", set])
                .status(2)
                .stderr_contains(format!("{flag} {value} and --set {set} disagree"))
                .run();
            assert!(out.stdout.is_empty(), "{command} {flag}: {}", out.stdout);
            for folder in [OUT, "output"] {
                assert!(
                    !out.path(folder).exists(),
                    "{command} {flag} wrote {folder}"
                );
            }
        }
    }
    // Agreeing is no conflict.
    let rows = Test::scenario("kill-9.toml")
        .trials(2)
        .set("simulation.trials=2")
        .run()
        .trials();
    assert_eq!(rows.len(), 2);
}

/// A run estimated above the default budget of 2 hours is refused before any trial (exit 2),
/// with the estimate and the flag that allows it; nothing is written. The oversized run of
/// the report: 100 000 trials of a week at 1 000 requests a second over 10 000 instances.
#[test]
fn a_run_above_the_time_budget_is_refused_with_the_flag_that_allows_it() {
    let out = Test::new()
        .copy_bundled("kill-9.toml")
        .env("RAYON_NUM_THREADS", "2")
        .args(["run", "kill-9.toml", "--out", OUT, "--trials", "100000"])
        .args(["--set", "app[0].instances=10000"])
        .args(["--set", "simulation.duration-s=604800"])
        .args(["--set", "caller[0].rate-per-s=1000"])
        .status(2)
        .stderr_contains("more than the default budget of 2.0 h")
        .stderr_contains("allow it with --max-time")
        .run();
    assert!(!out.path(OUT).exists());
    // A limit given on the command line is named as such.
    Test::new()
        .copy_bundled("kill-9.toml")
        .env("RAYON_NUM_THREADS", "2")
        .args(["run", "kill-9.toml", "--out", OUT, "--trials", "100000"])
        .args(["--max-time", "1s"])
        .status(2)
        .stderr_contains("more than --max-time 1 s")
        .run();
}
