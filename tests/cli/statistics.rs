//! "Honest statistics": a percentile only from the trials that support it
//! (README, "Reading the metrics": the least n with 1 - p^n - (1 - p)^n >= 0.95), no quantile
//! interval below that, every `recommend` figure naming its trials, and "unresolved" split into
//! its reasons.

use super::test::{OUT, Test, repo};

/// Two trials: the summary gives min, max and mean, no percentile, no quantile interval, and
/// says how many trials each percentile needs; summary.csv leaves the cells empty and
/// summary.json says why.
#[test]
fn a_two_trial_run_gives_no_percentile_and_says_what_each_needs() {
    let out = Test::scenario("kill-9.toml")
        .trials(2)
        .stdout_contains("n<29")
        .stdout_contains("p90 29")
        .stdout_contains("\"n<N\": too few trials for this percentile, which needs N")
        .stdout_contains("exposure over 2 trial(s): mean ")
        .stdout_contains("(95 % t-interval ")
        .run();
    assert!(
        !out.stdout.contains("order-statistic CI"),
        "a quantile interval from 2 trials:\n{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("p99.9 ") || out.stdout.contains("p99.9 2995"),
        "{}",
        out.stdout
    );
    for row in out.summary() {
        assert_eq!((row.p50, row.p90, row.p99), (None, None, None), "{row:?}");
        assert_eq!(row.trials, 2);
    }
    let json: serde_json::Value =
        serde_json::from_slice(&out.read(format!("{OUT}/summary.json"))).unwrap();
    let exposure = &json["shutdowns"][0]["metrics"][0];
    assert_eq!(exposure["metric"], "exposure_ms");
    assert!(exposure["p90"].is_null());
    assert_eq!(exposure["needs_trials"]["p50"], 6);
    assert_eq!(exposure["needs_trials"]["p90"], 29);
    assert_eq!(exposure["needs_trials"]["p99_9"], 2995);
}

/// 30 trials support p50 and p90 (29) with an order-statistic interval, not p99 (299).
#[test]
fn thirty_trials_give_p90_with_its_order_statistic_interval() {
    let out = Test::scenario("kill-9.toml")
        .trials(30)
        .stdout_contains("(95 % order-statistic CI ")
        .stdout_contains("p95 needs at least 59 trials, p99 299, p99.9 2995")
        .run();
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("exposure over 30 trial(s)"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.contains("; p90 "), "{line}");
    for row in out.summary() {
        assert!(row.p50.is_some() && row.p90.is_some(), "{row:?}");
        assert_eq!(row.p99, None, "{row:?}");
    }
}

/// `recommend --trials 200` never gives a p99.9 (it needs 2995 trials): it says so, gives the
/// highest percentile 200 trials support (p95), and names the trials behind every figure.
#[test]
fn recommend_at_200_trials_never_gives_a_p99_9() {
    let out = Test::new()
        .copy_bundled("pause.toml")
        .args(["recommend", "pause.toml", "--trials", "200", "--no-what-if"])
        .stdout_contains("zero dead hits in 99.9% of trials: not measured, it needs at least 2995 trials (these are 200)")
        .stdout_contains("zero dead hits in 95% of trials, the most 200 trials support: wait-s = ")
        .stdout_contains("(simulated over 200 trials; needed p50 ")
        .stdout_contains("simulated max ")
        .run();
    for line in out.stdout.lines() {
        assert!(!line.contains("p99.9"), "{line}");
        assert!(!line.contains("99.9% of trials: wait-s"), "{line}");
        if line.contains("simulated") {
            assert!(
                line.contains("200 trials"),
                "a figure without its trials: {line}"
            );
        }
    }
}

/// With the trials a target needs, `recommend` gives it.
#[test]
fn recommend_gives_the_target_when_the_trials_support_it() {
    let out = Test::new()
        .copy_bundled("pause.toml")
        .args([
            "recommend",
            "pause.toml",
            "--trials",
            "60",
            "--target",
            "p95",
            "--no-what-if",
        ])
        .stdout_contains("zero dead hits in 95% of trials: wait-s = ")
        .run();
    assert!(!out.stdout.contains("not measured"), "{}", out.stdout);
}

/// "unresolved" by reason: a kill -9 whose process restarts while callers still list it
/// (rolling-deploy.toml's auth-0) is `restarted`, a pause that resumes is `not_stopped`.
#[test]
fn unresolved_trials_say_why() {
    let out = Test::scenario("rolling-deploy.toml")
        .trials(3)
        .stdout_contains("unresolved trials (an exposure or removal time is empty): 3 restarted while still listed")
        .run();
    let auth = out.trials();
    let auth: Vec<_> = auth.iter().filter(|r| r.instance == "auth-0").collect();
    assert_eq!(auth.len(), 3);
    for row in auth {
        assert_eq!(row.exposure_ms, None);
        assert_eq!(row.unresolved_reason, "restarted", "{row:?}");
    }
    let exposure = out
        .summary()
        .into_iter()
        .find(|r| r.instance == "auth-0" && r.metric == "exposure_ms")
        .unwrap();
    assert_eq!(exposure.unresolved_reasons, "restarted=3");
    let last = out
        .summary()
        .into_iter()
        .find(|r| r.instance == "auth-0" && r.metric == "last_dead_hit_ms")
        .unwrap();
    assert_eq!(last.unresolved_reasons, "");

    let text = std::fs::read_to_string(
        repo().join("scenarios/incidents/scn-2099-dalston-resume-never-registers.toml"),
    )
    .unwrap();
    let out = Test::new()
        .write("resume.toml", text)
        .args(["run", "resume.toml", "--trials", "2", "--out", OUT])
        .stdout_contains("2 did not stop serving in the trial")
        .run();
    let paused: Vec<_> = out
        .trials()
        .into_iter()
        .filter(|r| r.strategy == "pause")
        .collect();
    assert_eq!(paused.len(), 2);
    for row in paused {
        assert_eq!(row.t_stop_ms, None, "{row:?}");
        assert_eq!(row.unresolved_reason, "not_stopped", "{row:?}");
    }
}
