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

/// kill -15 on 2021.0 (Spring Cloud LoadBalancer with its cache): three stages with
/// independent phases, the read-only tick U(0, 30 s), the fetch U(0, 30 s) and the cache entry's
/// expiry U(0, 35 s) (FACTS.md §3, §5, §9): mean 15 + 15 + 17.5 = 47.5 s, and the LoadBalancer's
/// own stage (exposure minus the caller's cache removal) uniform over the 35 s ttl (one-sample
/// KS at alpha = 0.01 against U(0, 35 s), critical D = 1.63 / sqrt(n)). A cold start ties the
/// cache's first write to the caller's first fetch, and the stage stays off that law for hours:
/// its mean is more than 4 standard errors from 17.5 s.
#[test]
fn loadbalancer_cache_stage_is_uniform_over_its_ttl_on_a_steady_fleet() {
    let stages = |start: &str| -> (Vec<i64>, Vec<i64>) {
        let outcomes = run_trials(&bundled(
            "kill-15",
            &[
                "simulation.trials=1000".into(),
                "simulation.release=2021.0".into(),
                format!("simulation.start={start}"),
            ],
        ));
        let exposure = values(&outcomes, Metric::ExposureMs);
        let stage = outcomes
            .iter()
            .filter_map(|o| {
                let s = &o.shutdowns[0];
                Some(s.exposure_ms? - s.client_removed_ms?)
            })
            .collect();
        (exposure, stage)
    };
    let (exposure, stage) = stages("steady");
    let se = |v: &[i64]| {
        let m = mean(v);
        let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
        (var / v.len() as f64).sqrt()
    };
    let m = mean(&exposure);
    assert!(
        (m - 47_500.0).abs() < 4.0 * se(&exposure),
        "mean exposure {m} ms"
    );
    let mut sorted = stage.clone();
    sorted.sort_unstable();
    let n = sorted.len() as f64;
    let d = sorted
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = (x as f64 / 35_000.0).clamp(0.0, 1.0);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max);
    assert!(
        d < 1.63 / n.sqrt(),
        "LoadBalancer stage vs U(0, 35 s): KS D = {d:.3}"
    );

    let (_, cold) = stages("cold");
    let m = mean(&cold);
    assert!(
        (m - 17_500.0).abs() > 4.0 * se(&cold),
        "cold start stage mean {m} ms"
    );
}
