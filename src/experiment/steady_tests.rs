//! `simulation.start = "steady"` against the history it stands for: a fleet that has run for
//! hours after a cold start, and the same stop at any instant of the trial.

use super::tests::ks;
use super::{TrialOutcome, run_trials};
use crate::scenario::Metric;
use crate::scenario::fixture::bundled;

/// The values of `metric` over the trials that have one.
fn values(outcomes: &[TrialOutcome], metric: Metric) -> Vec<i64> {
    outcomes
        .iter()
        .filter_map(|o| o.shutdowns[0].value(metric))
        .collect()
}

/// Two-sample KS at alpha = 0.01 (critical D = 1.63 sqrt((n + m) / (n m))) does not reject.
fn same_law(a: &[i64], b: &[i64], what: &str) {
    let (n, m) = (a.len() as f64, b.len() as f64);
    assert!(n > 100.0 && m > 100.0, "{what}: {n} and {m} values");
    let critical = 1.63 * ((n + m) / (n * m)).sqrt();
    let d = ks(a, b);
    assert!(d < critical, "{what}: KS D = {d:.3} >= {critical:.3}");
}

fn mean(v: &[i64]) -> f64 {
    v.iter().sum::<i64>() as f64 / v.len() as f64
}

/// The steady start is the state a long history leaves: a kill -9 and a kill -15 at 600 s of a
/// steady fleet, and the same 4 hours after a cold start, agree in distribution on the exposure,
/// each layer's removal time and the dead hits. (On Ribbon the cold start's phases are already
/// independent: the refresh starts at the first request, a uniform context-start spread after
/// the fetch timer; Spring Cloud LoadBalancer's cache is the exception, tested below.)
#[test]
fn a_steady_start_is_what_hours_of_history_leave() {
    let metrics = [
        Metric::ExposureMs,
        Metric::ServerRemovedMs,
        Metric::ReadonlyRemovedMs,
        Metric::ClientRemovedMs,
        Metric::RibbonRemovedMs,
        Metric::DeadHits,
    ];
    for stem in ["kill-9", "kill-15"] {
        let steady = run_trials(&bundled(
            stem,
            &[
                "simulation.trials=400".into(),
                "shutdown[0].at-s=600".into(),
            ],
        ));
        let history = run_trials(&bundled(
            stem,
            &[
                "simulation.trials=400".into(),
                "simulation.start=cold".into(),
                "simulation.duration-s=15000".into(),
                "shutdown[0].at-s=14400".into(),
            ],
        ));
        for metric in metrics {
            let what = format!("{stem} {}", metric.name());
            same_law(&values(&steady, metric), &values(&history, metric), &what);
        }
    }
}

/// A kill -15 5 s into a steady trial follows the law of one at 600 s: nothing of a start-up is
/// left to shape it. Its exposure is the read-only tick, the fetch and the Ribbon refresh after
/// the DELETE, each uniform over its 30 s (FACTS.md §3, §5, §8): mean 45 s.
#[test]
fn a_kill_15_at_5_s_follows_the_law_of_one_at_600_s() {
    let at = |at_s: u64| {
        run_trials(&bundled(
            "kill-15",
            &[
                "simulation.trials=400".into(),
                format!("shutdown[0].at-s={at_s}"),
            ],
        ))
    };
    let (early, late) = (at(5), at(600));
    for metric in [
        Metric::ExposureMs,
        Metric::ReadonlyRemovedMs,
        Metric::ClientRemovedMs,
    ] {
        let what = format!("kill-15 at 5 s vs 600 s {}", metric.name());
        same_law(&values(&early, metric), &values(&late, metric), &what);
    }
    let exposure = values(&early, Metric::ExposureMs);
    assert_eq!(exposure.len(), 400, "every trial resolved");
    let m = mean(&exposure);
    // 3 x U(0, 30 s): mean 45 s, sd 15 s; 4 standard errors of 400 trials = 3 s.
    assert!((42_000.0..48_000.0).contains(&m), "mean exposure {m} ms");
}
