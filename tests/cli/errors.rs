//! Bad input is rejected before any trial runs (STYLE.md "Applied to eureka-sim" 6): exit code
//! 2, a message naming the file, the line where there is one, and the key; never a panic (which
//! `Test::run` checks on every run), and no output written.

use super::test::{OUT, Test, bundled_text, edit, line_of};

/// Runs `run bad.toml --out out` on kill-9.toml with `from` replaced by `to`, expects exit 2
/// with `bad.toml:<line of the edit>:` and each of `expected` on stderr, and no output folder.
fn rejects_edit(from: &str, to: &str, expected: &[&str]) -> String {
    let text = edit(&bundled_text("kill-9.toml"), from, to);
    let line = line_of(&text, to);
    let mut test = Test::new()
        .write("bad.toml", &text)
        .args(["run", "bad.toml", "--out", OUT])
        .status(2)
        .stderr_contains(format!("bad.toml:{line}:"));
    for e in expected {
        test = test.stderr_contains(*e);
    }
    let out = test.run();
    assert!(!out.path(OUT).exists(), "output written for a bad scenario");
    assert!(out.stdout.is_empty(), "stdout: {}", out.stdout);
    out.stderr
}

/// Runs `run kill-9.toml --set ASSIGNMENT`, expects exit 2 naming the file, the `--set`
/// argument and each of `expected`.
fn rejects_set(assignment: &str, expected: &[&str]) -> String {
    let mut test = Test::scenario("kill-9.toml")
        .set(assignment)
        .status(2)
        .stderr_contains("kill-9.toml")
        .stderr_contains(format!("--set {assignment}"));
    for e in expected {
        test = test.stderr_contains(*e);
    }
    let out = test.run();
    assert!(!out.path(OUT).exists(), "output written for a bad --set");
    out.stderr
}

#[test]
fn unknown_key_suggests_the_closest_known_key() {
    rejects_edit(
        "eureka.server.eviction-interval-timer-in-ms = 60000",
        "eureka.server.evicton-interval-timer-in-ms = 60000",
        &[
            "unknown key",
            "evicton-interval-timer-in-ms",
            "did you mean",
            "eureka.server.eviction-interval-timer-in-ms",
        ],
    );
}

#[test]
fn zero_interval_is_rejected() {
    rejects_edit(
        "eureka.server.eviction-interval-timer-in-ms = 60000",
        "eureka.server.eviction-interval-timer-in-ms = 0",
        &["eureka.server.eviction-interval-timer-in-ms", "0"],
    );
}

#[test]
fn negative_value_is_rejected() {
    rejects_edit(
        "rate-per-s = 20",
        "rate-per-s = -5",
        &["caller[0].rate-per-s", "-5"],
    );
}

#[test]
fn wrong_type_is_rejected() {
    rejects_edit(
        "instances = 20",
        "instances = \"twenty\"",
        &["app[0].instances", "integer"],
    );
}

#[test]
fn unknown_strategy_lists_the_strategies() {
    rejects_edit(
        "strategy = \"kill-9\"",
        "strategy = \"kill-8\"",
        &[
            "shutdown[0].strategy",
            "kill-8",
            "kill-9",
            "kill-15",
            "pause",
            "service-registry",
        ],
    );
}

#[test]
fn shutdown_of_an_instance_that_does_not_exist_is_rejected() {
    // svc has 20 instances: svc-0 .. svc-19.
    rejects_edit(
        "instance = \"svc-0\"",
        "instance = \"svc-20\"",
        &["shutdown[0].instance", "svc-20"],
    );
    rejects_edit(
        "instance = \"svc-0\"",
        "instance = \"nosuch-0\"",
        &["shutdown[0].instance", "nosuch-0"],
    );
}

/// Validation stops this at once: simulating 30 years per trial would take hours.
#[test]
fn absurd_duration_is_rejected() {
    rejects_edit(
        "duration-s = 900",
        "duration-s = 999999999",
        &["simulation.duration-s", "999999999"],
    );
}

#[test]
fn shutdown_after_the_end_of_the_trial_is_rejected() {
    rejects_set("shutdown[0].at-s=900", &["shutdown[0].at-s"]);
}

#[test]
fn several_problems_are_reported_together() {
    let text = edit(
        &edit(
            &bundled_text("kill-9.toml"),
            "rate-per-s = 20",
            "rate-per-s = -5",
        ),
        "eureka.server.eviction-interval-timer-in-ms = 60000",
        "eureka.server.evicton-interval-timer-in-ms = 60000",
    );
    Test::new()
        .write("bad.toml", &text)
        .args(["run", "bad.toml", "--out", OUT])
        .status(2)
        .stderr_contains(format!("bad.toml:{}:", line_of(&text, "rate-per-s = -5")))
        .stderr_contains(format!("bad.toml:{}:", line_of(&text, "evicton-interval")))
        .run();
}

#[test]
fn set_with_unknown_table_is_rejected() {
    rejects_set("nosuch.key=1", &["nosuch"]);
}

#[test]
fn set_with_index_out_of_range_is_rejected() {
    rejects_set("shutdown[5].strategy=kill-15", &["shutdown[5]"]);
}

#[test]
fn set_without_equals_sign_is_rejected() {
    rejects_set("simulation.trials", &["simulation.trials", "KEY=VALUE"]);
}

#[test]
fn set_with_unknown_key_suggests_the_closest() {
    rejects_set(
        "simulation.trails=3",
        &["simulation.trails", "did you mean", "trials"],
    );
}

#[test]
fn set_with_bad_value_is_rejected() {
    rejects_set("simulation.trials=0", &["simulation.trials"]);
    rejects_set("simulation.trials=abc", &["simulation.trials"]);
    rejects_set(
        "shutdown[0].strategy=kill-8",
        &["shutdown[0].strategy", "kill-8"],
    );
    rejects_set("caller[0].rate-per-s=nan", &["caller[0].rate-per-s"]);
}

#[test]
fn missing_scenario_file_is_named() {
    Test::new()
        .args(["run", "missing.toml", "--out", OUT])
        .status(2)
        .stderr_contains("missing.toml")
        .run();
}

#[test]
fn a_folder_is_not_a_scenario_file() {
    Test::new()
        .args(["run", ".", "--out", OUT])
        .status(2)
        .stderr_contains("error")
        .run();
}

#[test]
fn broken_toml_names_the_line() {
    let text = edit(&bundled_text("kill-9.toml"), "[network]", "[network");
    let line = line_of(&text, "[network");
    let out = Test::new()
        .write("broken.toml", &text)
        .args(["run", "broken.toml", "--out", OUT])
        .status(2)
        .stderr_contains(format!("broken.toml:{line}:"))
        .run();
    assert!(!out.path(OUT).exists());
}

#[test]
fn invalid_utf8_is_rejected() {
    Test::new()
        .write("binary.toml", [0xff_u8, 0xfe, b'\n'])
        .args(["run", "binary.toml", "--out", OUT])
        .status(2)
        .stderr_contains("binary.toml")
        .run();
}

#[test]
fn empty_scenario_asks_for_an_app() {
    Test::new()
        .write("empty.toml", "")
        .args(["run", "empty.toml", "--out", OUT])
        .status(2)
        .stderr_contains("empty.toml")
        .stderr_contains("[[app]]")
        .run();
}

#[test]
fn no_arguments_is_a_usage_error() {
    Test::new().status(2).stderr_contains("Usage").run();
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    Test::new()
        .arg("simulate")
        .status(2)
        .stderr_contains("simulate")
        .run();
}

#[test]
fn run_without_a_scenario_is_a_usage_error() {
    Test::new()
        .arg("run")
        .status(2)
        .stderr_contains("Usage")
        .run();
}

#[test]
fn negative_trials_flag_is_a_usage_error() {
    Test::scenario("kill-9.toml")
        .args(["--trials", "-1"])
        .status(2)
        .run();
}

/// A failure while writing is not bad input: exit 1 (src/cli.rs), naming the path.
#[test]
fn unwritable_output_folder_exits_1() {
    Test::new()
        .copy_bundled("kill-9.toml")
        .write("taken", "a file, not a folder")
        .args(["run", "kill-9.toml", "--trials", "1", "--out", "taken"])
        .status(1)
        .stderr_contains("taken")
        .run();
}
