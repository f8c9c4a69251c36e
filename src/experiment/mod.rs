//! Experiments: trials of a scenario and their outcomes.

mod bench;
pub mod budget;
mod capacity;
pub mod claims;
pub mod compare;
pub mod conform;
pub mod deploy_metrics;
mod explain;
pub mod intervals;
pub mod matrix;
mod metrics;
mod recommend;
pub mod shard;
mod stats;
pub mod sweep;
pub mod tuning;

pub use bench::{
    BenchReport, Measurement, OracleRace, OracleRun, OracleStatus, bench, fleet_instances,
    instance_hours, race_oracle,
};
pub use claims::{ClaimResult, evaluate};
pub use compare::{
    Comparison, ShutdownStats, Variant, VariantResult, find_stats, shutdown_stats,
    unresolved_by_reason,
};
pub use explain::{TrialTrace, trace_trial};
pub use metrics::{
    CallerOutcome, DeadHitSpan, MetricsObserver, REMOVAL_METRICS, ServerOutcome, ShutdownOutcome,
    Unresolved, news_by_server,
};
pub use recommend::{
    ClosedForm, MeasureError, MeasureProgress, Recommendation, WhatIf, closed_form, measure,
    what_ifs,
};
pub use stats::{Stats, needs_trials, percentile};
pub use sweep::{PointResult, Sweep, Vary};

use rayon::prelude::*;

use crate::engine::trial_seed;
use crate::eureka::{Layout, Observer, RequestMode, World};
use crate::scenario::Scenario;

/// The outcome of one trial. Serde carries it between a shard and `merge`
/// (`report::shard`); nothing else reads it back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrialOutcome {
    pub trial: u32,
    /// The trial's own seed (derived from the scenario seed and the trial index).
    pub seed: u64,
    /// One outcome per `[[shutdown]]`, in scenario order.
    pub shutdowns: Vec<ShutdownOutcome>,
    /// One outcome per `[[deploy]]`, in scenario order (from the same run).
    pub deploys: Vec<deploy_metrics::DeployOutcome>,
    /// Events the trial handled.
    pub events: u64,
    /// When the trial ended: `duration-s`, or later when it waited for a stopped instance to
    /// leave every view (up to `max-duration-s`).
    pub end_ms: u64,
    /// Per `[[shutdown]]`, in scenario order: the dead hits on its instance, kept as the trial
    /// runs ([`MetricsObserver::take_hit_spans`]) so that `run`'s report draws the timeline of
    /// its median trial without simulating that trial again (a 1-trial run used to cost two
    /// simulations). A few spans per routing change in batched mode, whatever the rate; one
    /// per instant with a refused attempt in the per-request reference. Shard files carry them
    /// to `merge`, which draws the same timeline from them.
    pub dead_hit_spans: Vec<Vec<DeadHitSpan>>,
    /// Set when the trial stopped at this event limit ([`budget::event_limit`]) before its
    /// end: its outcomes are not to be reported ([`budget::check_outcomes`]). Never written
    /// when unset, so shard files are as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_event_limit: Option<u64>,
}

/// Simulates one trial. Pure and deterministic: the same scenario and seed give the same outcome.
pub fn simulate(scenario: &Scenario, trial: u32, seed: u64) -> TrialOutcome {
    simulate_with(scenario, trial, seed, RequestMode::default())
}

/// [`simulate`] with a choice of request mode (batched, or the per-request reference).
pub fn simulate_with(
    scenario: &Scenario,
    trial: u32,
    seed: u64,
    mode: RequestMode,
) -> TrialOutcome {
    let shared = RunShared::new(scenario, mode);
    simulate_in(
        scenario,
        &shared,
        trial,
        seed,
        mode,
        Fetches::LeaveOutUnobserved,
    )
}

/// What every trial of a run shares, pure functions of the scenario and the request mode: a
/// run builds them once for all its trials.
struct RunShared {
    layout: Layout,
    /// [`budget::event_limit`].
    event_limit: u64,
}

impl RunShared {
    fn new(scenario: &Scenario, mode: RequestMode) -> RunShared {
        RunShared {
            layout: Layout::new(scenario),
            event_limit: budget::event_limit(scenario, mode),
        }
    }
}

/// Which fetches a trial simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetches {
    /// Those someone observes or that change a server (the default: the production fleet's profile showed the rest cost time and change nothing).
    LeaveOutUnobserved,
    /// Every client's (the reference, [`World::with_every_fetch`]).
    #[cfg_attr(not(test), allow(dead_code))]
    Every,
}

/// The world of one trial with its observer, simulating `fetches`.
fn world<'s, O: Observer>(
    scenario: &'s Scenario,
    shared: &RunShared,
    seed: u64,
    observer: O,
    mode: RequestMode,
    fetches: Fetches,
) -> World<'s, O> {
    match fetches {
        Fetches::LeaveOutUnobserved => {
            World::with_layout(scenario, &shared.layout, seed, observer, mode)
        }
        Fetches::Every => World::with_every_fetch(scenario, seed, observer, mode),
    }
}

/// One trial of `scenario`, with what the run's trials share (`shared`, for `mode`).
fn simulate_in(
    scenario: &Scenario,
    shared: &RunShared,
    trial: u32,
    seed: u64,
    mode: RequestMode,
    fetches: Fetches,
) -> TrialOutcome {
    let layout = &shared.layout;
    let metrics = MetricsObserver::new(layout);
    let limit = shared.event_limit;
    if scenario.deploys.is_empty() {
        let (mut observer, ran) = world(scenario, shared, seed, metrics, mode, fetches)
            .limit_events(limit)
            .run();
        return TrialOutcome {
            trial,
            seed,
            shutdowns: observer.outcomes(ran.end),
            deploys: Vec::new(),
            events: ran.events,
            end_ms: ran.end.ms(),
            dead_hit_spans: observer.take_hit_spans(),
            over_event_limit: ran.over_limit.then_some(limit),
        };
    }
    let deploys = deploy_metrics::DeployObservers::new(scenario, layout);
    let observers = (metrics, deploys);
    let ((mut metrics, deploys), ran) = world(scenario, shared, seed, observers, mode, fetches)
        .limit_events(limit)
        .run();
    TrialOutcome {
        trial,
        seed,
        shutdowns: metrics.outcomes(ran.end),
        deploys: deploys.finish(ran.end),
        events: ran.events,
        end_ms: ran.end.ms(),
        dead_hit_spans: metrics.take_hit_spans(),
        over_event_limit: ran.over_limit.then_some(limit),
    }
}

/// Runs every trial of the scenario on all cores and returns them in trial order. Each trial's
/// streams derive from the scenario seed and the trial index alone, so the result does not depend
/// on the number of threads.
pub fn run_trials(scenario: &Scenario) -> Vec<TrialOutcome> {
    run_trials_with(scenario, RequestMode::default(), &|| {})
}

/// [`run_trials`], calling `on_trial_done` after each trial (from any thread), e.g. for a
/// progress bar.
pub fn run_trials_with(
    scenario: &Scenario,
    mode: RequestMode,
    on_trial_done: &(dyn Fn() + Sync),
) -> Vec<TrialOutcome> {
    run_trial_range(scenario, 0..scenario.simulation.trials, mode, on_trial_done)
}

/// The trials `trials` of the scenario (a shard's slice, [`shard::Shard::range`]), in trial
/// order. Trial `k` has seed `trial_seed(seed, k)` whatever the range, so the ranges of a
/// partition of `0..trials`, concatenated, are [`run_trials_with`]'s outcomes.
pub fn run_trial_range(
    scenario: &Scenario,
    trials: std::ops::Range<u32>,
    mode: RequestMode,
    on_trial_done: &(dyn Fn() + Sync),
) -> Vec<TrialOutcome> {
    let seed = scenario.simulation.seed;
    let shared = RunShared::new(scenario, mode);
    let fetches = Fetches::LeaveOutUnobserved;
    trials
        .into_par_iter()
        .map(|trial| {
            let seed = trial_seed(seed, trial);
            let outcome = simulate_in(scenario, &shared, trial, seed, mode, fetches);
            on_trial_done();
            outcome
        })
        .collect()
}

#[cfg(test)]
mod steady_tests;
#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::Holding;
    use crate::scenario::Metric;
    use crate::scenario::fixture::{ScenarioText, bundled, parse};

    /// With the measures that end a trial at rest (`MetricsObserver`, a deploy's
    /// observers), leaving out the fetches no one observes gives every bundled scenario's
    /// trials the same outcomes, ends included, as the reference where every client fetches,
    /// as written and on a cold start, in both request modes; only the count of events
    /// handled is lower. The fast mode runs over the run's shared layout
    /// (`World::with_layout`), the reference over a layout of its own (`World::with_every_fetch`),
    /// so this holds the shared layout too.
    #[test]
    fn outcomes_are_those_of_the_reference_that_fetches_everything() {
        let cold = ["simulation.start=cold".to_string()];
        for stem in crate::scenario::fixture::bundled_stems() {
            for start in [&[][..], &cold[..]] {
                let s = bundled(&stem, start);
                for (trial, mode) in [
                    (0, RequestMode::Batched),
                    (1, RequestMode::Batched),
                    (2, RequestMode::PerRequest),
                ] {
                    let seed = trial_seed(s.simulation.seed, trial);
                    let shared = RunShared::new(&s, mode);
                    let fast =
                        simulate_in(&s, &shared, trial, seed, mode, Fetches::LeaveOutUnobserved);
                    let reference = simulate_in(&s, &shared, trial, seed, mode, Fetches::Every);
                    assert!(fast.events <= reference.events, "{stem} trial {trial}");
                    let events = TrialOutcome {
                        events: reference.events,
                        ..fast
                    };
                    assert_eq!(
                        events, reference,
                        "{stem} {start:?} trial {trial} ({mode:?})"
                    );
                }
            }
        }
    }

    /// `MetricsObserver` reads no renews, so the servers do not report them
    /// (`EurekaServer::report_renewals`); its outcomes are those it gives beside a log that
    /// reads every renew (which turns the reports on), trial ends included.
    #[test]
    fn metrics_are_the_same_whether_or_not_renews_are_reported() {
        use crate::eureka::Observation;
        /// Counts renews, and is at rest at once (so the pair ends as the metrics do).
        struct Renews(usize);
        impl Observer for Renews {
            fn observe(&mut self, _: crate::engine::SimTime, observation: Observation) {
                self.0 += usize::from(matches!(observation, Observation::Renewed { .. }));
            }
        }
        for stem in [
            "kill-9",
            "self-preservation",
            "cluster/three-peers-two-zones",
        ] {
            let s = bundled(stem, &[]);
            let layout = Layout::new(&s);
            for trial in 0..2 {
                let seed = trial_seed(s.simulation.seed, trial);
                let metrics = MetricsObserver::new(&layout);
                assert!(!metrics.reads_renewals());
                let (alone, ran) = World::new(&s, seed, metrics).run();
                let beside = (MetricsObserver::new(&layout), Renews(0));
                let ((with_log, renews), ran_with_log) = World::new(&s, seed, beside).run();
                assert!(renews.0 > 0, "{stem}: renews reported beside a reader");
                assert_eq!(ran.end, ran_with_log.end, "{stem} trial {trial}");
                assert_eq!(
                    alone.outcomes(ran.end),
                    with_log.outcomes(ran_with_log.end),
                    "{stem} trial {trial}"
                );
            }
        }
    }

    /// Two-sample Kolmogorov-Smirnov statistic.
    pub(super) fn ks(a: &[i64], b: &[i64]) -> f64 {
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.sort_unstable();
        b.sort_unstable();
        let (mut i, mut j, mut d) = (0, 0, 0f64);
        while i < a.len() && j < b.len() {
            let x = a[i].min(b[j]);
            while i < a.len() && a[i] <= x {
                i += 1;
            }
            while j < b.len() && b[j] <= x {
                j += 1;
            }
            d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
        }
        d
    }

    /// The batched counting and the per-request reference agree in distribution. The routing
    /// timeline is the same in both (it does not depend on request draws), so exposure is equal
    /// trial by trial; dead hits, errors and the last dead hit are compared by the two-sample
    /// Kolmogorov-Smirnov test at alpha = 0.001 (critical D = 1.95 sqrt(2 / n)) and by their
    /// means (within 4 standard errors).
    #[test]
    fn batched_counting_matches_the_per_request_reference() {
        modes_agree(&[]);
    }

    /// The same without Ribbon's circuit breaker and with one next-server retry: the plain
    /// round-robin walk of `run_batch`.
    #[test]
    fn batched_counting_matches_without_the_circuit_breaker() {
        modes_agree(&[
            "clients.niws.loadbalancer.availabilityFilteringRule.filterCircuitTripped=false",
            "clients.ribbon.MaxAutoRetriesNextServer=1",
            "caller[0].http-client=feign",
        ]);
    }

    /// The same for a RestTemplate with spring-retry, which records each refused attempt twice
    /// in `ServerStats` (FACTS.md §14): the breaker's stepping and the all-tripped walk count 2
    /// per refusal; and for a gateway that only calls `choose()` (no record: no breaker).
    #[test]
    fn batched_counting_matches_for_the_callers_stacks() {
        modes_agree(&[
            "caller[0].http-client=rest-template",
            "caller[0].spring-retry=true",
            "clients.ribbon.MaxAutoRetriesNextServer=1",
        ]);
        modes_agree(&[
            "caller[0].http-client=rest-template",
            "caller[0].spring-retry=true",
            "app[0].instances=1",
            "caller[0].rate-per-s=40",
        ]);
        modes_agree(&["caller[0].http-client=gateway"]);
    }

    /// The same with a single instance: once tripped it stays in the list through the
    /// all-tripped fallback, and every request still reaches it.
    #[test]
    fn batched_counting_matches_when_every_server_is_tripped() {
        modes_agree(&["app[0].instances=1", "caller[0].rate-per-s=40"]);
    }

    /// The same through Spring Cloud LoadBalancer (2020.0): its lazy cache and its round robin,
    /// with the default retry on another instance (avoiding the one just tried) and without.
    #[test]
    fn batched_counting_matches_through_spring_cloud_loadbalancer() {
        modes_agree(&[
            "simulation.release=2020.0",
            "caller[0].http-client=rest-template",
            "caller[0].spring-retry=true",
        ]);
        modes_agree(&[
            "simulation.release=2020.0",
            "clients.spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance=0",
            "caller[0].rate-per-s=40",
        ]);
    }

    /// The same with requests in flight (`service-time-ms`): the in-flight count at a kill -9
    /// (read back from the counted spans' order statistics), through Spring Cloud LoadBalancer,
    /// and at a graceful kill -15 whose phase times out (S = 3 s > 1 s).
    #[test]
    fn batched_counting_matches_with_requests_in_flight() {
        modes_agree(&["app[0].service-time-ms=2000"]);
        modes_agree(&["app[0].service-time-ms=2000", "simulation.release=2020.0"]);
        modes_agree(&[
            "app[0].service-time-ms=3000",
            "shutdown[0].strategy=kill-15",
            "clients.server.shutdown=graceful",
            "clients.spring.lifecycle.timeout-per-shutdown-phase=1000",
        ]);
    }

    /// The same with a vanished host (FACTS.md §7: each attempt on it costs ConnectTimeout) and
    /// a Zuul caller (§8: Hystrix timeout from `AbstractRibbonCommand#getHystrixTimeout`): the
    /// cost summed over `run_batch`'s walk and the breaker's stepping, with the default
    /// 4000 ms that lets the next-server retry succeed; a 1500 ms timeout with a same-server
    /// retry (1000 + 1000 >= 1500: the request fails); and through Spring Cloud
    /// LoadBalancer's `walk_many`.
    #[test]
    fn batched_counting_matches_with_a_vanished_host_and_zuul() {
        modes_agree(&[
            "shutdown[0].host=vanishes",
            "caller[0].zuul=true",
            "caller[0].spring-retry=true",
            "caller[0].zuul.retryable=true",
            "clients.ribbon.MaxAutoRetriesNextServer=1",
        ]);
        modes_agree(&[
            "shutdown[0].host=vanishes",
            "caller[0].zuul=true",
            "caller[0].spring-retry=true",
            "caller[0].zuul.retryable=true",
            "caller[0].hystrix-timeout-ms=1500",
            "clients.ribbon.MaxAutoRetries=1",
            "clients.ribbon.MaxAutoRetriesNextServer=1",
        ]);
        modes_agree(&["shutdown[0].host=vanishes", "simulation.release=2020.0"]);
    }

    /// spring-cloud-commons#788 / spring-cloud-netflix#3869 (FACTS.md §14): on Hoxton.SR9
    /// (Spring Boot 2.3, commons 2.2.6) /pause's `context.stop()` stops the web server before it
    /// sets DOWN, so from the pause on callers are refused exactly as after a kill -15 at the
    /// same instant: the exposures of the two follow one law (two-sample KS at alpha = 0.01,
    /// critical D = 1.63 sqrt(2 / n), does not reject), about read-only cache + fetch + Ribbon
    /// refresh = 3 x U(0, 30 s), mean 45 s. Pinned to Boot 2.2 (`simulation.spring-boot`), the
    /// paused instance serves through its 120 s wait, long after every list dropped it: no dead
    /// hit at all.
    #[test]
    fn spring_cloud_commons_788_pause_refuses_like_kill_15_on_boot_2_3() {
        let text = |strategy: &str, extra: &[&str]| {
            ScenarioText::simulation(&[
                "duration-s = 900",
                "trials = 300",
                "seed = 11",
                "release = \"Hoxton.SR9\"",
            ])
            .fleet(20, &["rate-per-s = 20"])
            .shutdown("svc-0", 300, strategy, extra)
            .text()
        };
        let pause = parse(&text("pause", &["wait-s = 120"]), &[]).unwrap();
        let kill15 = parse(&text("kill-15", &[]), &[]).unwrap();
        let exposures = |s: &Scenario| -> Vec<i64> {
            run_trials(s)
                .iter()
                .filter_map(|o| o.shutdowns[0].exposure_ms)
                .collect()
        };
        let (a, b) = (exposures(&pause), exposures(&kill15));
        let critical = 1.63 * (2.0 / a.len() as f64).sqrt();
        let d = ks(&a, &b);
        assert!(d < critical, "KS D = {d:.3} >= {critical:.3}");
        let mean = a.iter().sum::<i64>() as f64 / a.len() as f64;
        assert!(
            (35_000.0..55_000.0).contains(&mean),
            "mean exposure {mean} ms"
        );

        let boot_2_2 = parse(
            &text("pause", &["wait-s = 120"]),
            &["simulation.spring-boot=2.2.13".to_string()],
        )
        .unwrap();
        for o in run_trials(&boot_2_2) {
            assert_eq!(o.shutdowns[0].dead_hits, 0, "trial {}", o.trial);
        }
    }

    /// Issue: a kill -9 50 s before the planned end used to be cut by the end and reported
    /// "unresolved" like self-preservation. The trial now waits for the news: every trial
    /// resolves, inside the kill -9 bounds of FACTS.md §1-§8 (last renew 0-30 s before the stop,
    /// expiry 2 x 90 s after it, then eviction 0-60 s, read-only cache, fetch and Ribbon refresh
    /// 0-30 s each: 150-330 s), with the same law as a kill -9 well inside the trial
    /// (two-sample KS at alpha = 0.01 does not reject); and the trial ends at the instant the
    /// last view dropped it.
    #[test]
    fn a_kill_9_just_before_the_end_waits_for_the_news() {
        let at = |at_s: u64| {
            let sets = [
                format!("shutdown[0].at-s={at_s}"),
                "simulation.trials=300".into(),
            ];
            run_trials(&bundled("kill-9", &sets))
        };
        let late = at(850);
        let early = at(500);
        let exposures = |outcomes: &[TrialOutcome]| -> Vec<i64> {
            outcomes
                .iter()
                .map(|o| o.shutdowns[0].exposure_ms.expect("resolved"))
                .collect()
        };
        let (a, b) = (exposures(&late), exposures(&early));
        for &x in &a {
            assert!((150_000..=330_000).contains(&x), "exposure {x} ms");
        }
        let critical = 1.63 * (2.0 / a.len() as f64).sqrt();
        let d = ks(&a, &b);
        assert!(d < critical, "KS D = {d:.3} >= {critical:.3}");
        for o in &late {
            let x = &o.shutdowns[0];
            let last_removal = [
                x.server_removed_ms,
                x.readonly_removed_ms,
                x.client_removed_ms,
                x.ribbon_removed_ms,
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap();
            assert_eq!(o.end_ms, x.t_stop_ms.unwrap() + last_removal as u64);
        }
        // Well inside the trial it ends at the same instant (`simulation.end = "resolved"`),
        // or at duration-s with the full simulation.
        for o in &early {
            let x = &o.shutdowns[0];
            let last = x.ribbon_removed_ms.max(x.client_removed_ms).unwrap();
            assert_eq!(o.end_ms, x.t_stop_ms.unwrap() + last as u64);
        }
        let sets = [
            "shutdown[0].at-s=500".into(),
            "simulation.end=duration".into(),
        ];
        let full = run_trials(&bundled("kill-9", &sets));
        assert!(full.iter().all(|o| o.end_ms == 900_000));
    }

    /// Every `.toml` under `scenarios/`, as stems for [`bundled`], in a stable order.
    fn every_bundled_stem() -> Vec<String> {
        fn walk(dir: &std::path::Path, into: &mut Vec<String>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    walk(&path, into);
                } else if path.extension().is_some_and(|e| e == "toml") {
                    let stem = path.strip_prefix("scenarios").unwrap().with_extension("");
                    into.push(stem.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let mut stems = Vec::new();
        walk(std::path::Path::new("scenarios"), &mut stems);
        stems
    }

    /// The timing fixtures under `bench/` stay valid scenario files (they have no golden
    /// outputs, so nothing else would notice a key that no longer parses).
    #[test]
    fn every_bench_file_parses() {
        let mut files: Vec<_> = std::fs::read_dir("bench")
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 3, "{files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.to_string_lossy().to_string();
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            let s = crate::scenario::parse_str(&text, &name, &stem, &[])
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!s.shutdowns.is_empty(), "{name}");
        }
    }

    /// Ending a trial once it is at rest (`simulation.end = "resolved"`, the
    /// default) changes no outcome of any bundled scenario, only the end instant, which is never
    /// later than the full simulation's (`"duration"`, the reference): the same seed gives the
    /// same events up to the early end, and from there nothing measured can change. Every
    /// scenario file, 6 trials each, every field of every outcome compared (callers and servers
    /// included).
    #[test]
    fn ending_at_rest_changes_nothing_but_the_end() {
        let mut ended_early = 0;
        for stem in every_bundled_stem() {
            let resolved = bundled(&stem, &["simulation.trials=6".into()]);
            let full = bundled(
                &stem,
                &[
                    "simulation.trials=6".into(),
                    "simulation.end=duration".into(),
                ],
            );
            for (a, b) in run_trials(&resolved).into_iter().zip(run_trials(&full)) {
                assert!(a.end_ms <= b.end_ms, "{stem} trial {}", a.trial);
                ended_early += usize::from(a.end_ms < b.end_ms);
                assert_eq!(a.shutdowns, b.shutdowns, "{stem} trial {}", a.trial);
                assert_eq!(a.deploys, b.deploys, "{stem} trial {}", a.trial);
            }
        }
        // It is not vacuous: most trials of most files end early.
        assert!(ended_early > 100, "{ended_early} trials ended early");
    }

    /// What holds an instance at the cap is named (FACTS.md §2.2): self-preservation in the
    /// bundled 5-instance fleet (renews 10 <= threshold 11), a zero threshold in the standalone
    /// server of Netflix/eureka#1459; the trial ran to `max-duration-s`, a day after the kill.
    #[test]
    fn still_listed_at_the_cap_says_why() {
        let cases = [
            ("self-preservation", Holding::SelfPreservation),
            (
                "incidents/eureka-1459-standalone-threshold-0",
                Holding::ZeroThreshold,
            ),
        ];
        for (stem, holding) in cases {
            let s = bundled(stem, &["simulation.trials=3".to_string()]);
            let cap = s.shutdowns[0].at_ms + crate::scenario::WAIT_FOR_NEWS_MS;
            assert_eq!(s.simulation.max_duration_ms, cap, "{stem}");
            for o in run_trials(&s) {
                assert_eq!(o.end_ms, cap, "{stem}");
                assert_eq!(
                    o.shutdowns[0].unresolved(Metric::ExposureMs),
                    Some(Unresolved::Held(holding)),
                    "{stem}"
                );
                assert_eq!(
                    o.shutdowns[0].unresolved_reasons(),
                    [Unresolved::Held(holding)]
                );
            }
        }
    }

    /// spring-cloud-netflix#1822 (the bundled incident, run to 900 s): peer a crashes at 200 s
    /// while it lists svc-0, which is stopped at 300 s. A crash removes nothing: a's cells in
    /// servers.csv stay empty (they said -100 s, the crash instant, before), b still lists
    /// svc-0 by self-preservation, so the last registry has no value and b's reason.
    #[test]
    fn a_crashed_peer_neither_removes_nor_still_lists_the_instance() {
        let s = bundled(
            "incidents/scn-1822-one-service-url-peer-down",
            &["simulation.max-duration-s=900".to_string()],
        );
        for trial in 0..2 {
            let o = &simulate(&s, trial, trial_seed(s.simulation.seed, trial)).shutdowns[0];
            let cells: Vec<_> = o
                .servers
                .iter()
                .map(|x| (x.server_removed_ms, x.readonly_removed_ms))
                .collect();
            assert_eq!(cells, [(None, None), (None, None)], "trial {trial}");
            assert_eq!(
                o.unresolved(Metric::ServerRemovedMs),
                Some(Unresolved::Held(Holding::SelfPreservation)),
                "trial {trial}"
            );
        }
    }

    fn modes_agree(overrides: &[&str]) {
        modes_agree_with(&[], None, overrides);
    }

    /// [`modes_agree`] with extra tables (`[[peer]]`s) and a `[[fault]]`.
    fn modes_agree_with(
        tables: &[(&str, &[&str])],
        fault: Option<crate::scenario::FaultConfig>,
        overrides: &[&str],
    ) {
        let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
        // With one instance, the one that stops is svc-0.
        let alone = overrides
            .iter()
            .any(|o| o.starts_with("app[0].instances=1"));
        let text = ScenarioText::simulation(&["duration-s = 700", "trials = 400", "seed = 5"])
            .table(
                "[server]",
                &["eureka.server.enable-self-preservation = false"],
            )
            .table("[clients]", &["ribbon.MaxAutoRetriesNextServer = 0"])
            .fleet(4, &["rate-per-s = 15"])
            .shutdown(if alone { "svc-0" } else { "svc-1" }, 300, "kill-9", &[]);
        let text = tables
            .iter()
            .fold(text, |text, (name, keys)| text.table(name, keys))
            .text();
        let mut scenario = parse(&text, &overrides).unwrap();
        scenario.faults.extend(fault);
        let caller = &scenario.callers[0];
        let spring = scenario.simulation.release.train >= crate::scenario::Train::Y2020;
        let no_retry = !caller
            .policy(&caller.calls[0], &scenario.simulation.release)
            .retries();
        let fast = run_trials_with(&scenario, RequestMode::Batched, &|| {});
        let slow = run_trials_with(&scenario, RequestMode::PerRequest, &|| {});
        let n = fast.len();
        let critical = 1.95 * (2.0 / n as f64).sqrt();
        // Spring Cloud LoadBalancer re-reads its list at a request, so there the exposure depends
        // on the request draws too and is compared in distribution.
        let mut metrics = vec![
            Metric::DeadHits,
            Metric::Errors,
            Metric::LastDeadHitMs,
            Metric::InflightFailed,
            Metric::TimeoutDelayMs,
        ];
        if spring {
            metrics.push(Metric::ExposureMs);
        }
        for metric in metrics {
            let values = |outcomes: &[TrialOutcome]| -> Vec<i64> {
                outcomes
                    .iter()
                    .filter_map(|o| o.shutdowns[0].value(metric))
                    .collect()
            };
            let (a, b) = (values(&fast), values(&slow));
            let d = ks(&a, &b);
            assert!(
                d < critical,
                "{}: KS D = {d:.3} >= {critical:.3}",
                metric.name()
            );
            let mean = |v: &[i64]| v.iter().sum::<i64>() as f64 / v.len() as f64;
            let sd = |v: &[i64]| {
                let m = mean(v);
                (v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64)
                    .sqrt()
            };
            let se = (sd(&a).powi(2) / a.len() as f64 + sd(&b).powi(2) / b.len() as f64).sqrt();
            assert!(
                (mean(&a) - mean(&b)).abs() < 4.0 * se.max(1e-9),
                "{}: means {} vs {}",
                metric.name(),
                mean(&a),
                mean(&b)
            );
        }
        for (f, s) in fast.iter().zip(&slow) {
            if !spring {
                assert_eq!(f.shutdowns[0].exposure_ms, s.shutdowns[0].exposure_ms);
            }
            if no_retry {
                // Without retries every dead hit is a failed request.
                assert_eq!(f.shutdowns[0].dead_hits, f.shutdowns[0].errors);
            }
        }
    }

    /// The same on a cluster: three peers in two zones, every client calling all three
    /// (own zone first), with replication between them; and with the peers of zone z2 cut
    /// off from z1 for 90 s around the kill (calls fail over, batches are retried).
    #[test]
    fn batched_counting_matches_on_a_cluster() {
        let peers: [(&str, &[&str]); 3] = [
            ("[[peer]]", &["name = \"a\"", "zone = \"z1\""]),
            ("[[peer]]", &["name = \"b\"", "zone = \"z2\""]),
            ("[[peer]]", &["name = \"c\"", "zone = \"z2\""]),
        ];
        modes_agree_with(&peers, None, &[]);
        let cut = crate::scenario::FaultConfig {
            at_ms: 250_000,
            kind: crate::scenario::FaultKind::Partition {
                between: [
                    crate::scenario::FaultSide::Peer(0),
                    crate::scenario::FaultSide::Zone("z2".into()),
                ],
                for_ms: 90_000,
            },
        };
        modes_agree_with(&peers, Some(cut), &[]);
    }

    /// Results do not depend on the number of threads.
    #[test]
    fn thread_count_does_not_change_results() {
        let scenario = bundled("kill-9", &["simulation.trials=16".into()]);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| run_trials(&scenario));
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| run_trials(&scenario));
        assert_eq!(one, two);
    }
}
