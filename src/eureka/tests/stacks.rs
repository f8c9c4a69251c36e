//! World-level tests of the callers' HTTP stacks (FACTS.md §14): who retries,
//! how many `ServerStats` failures a refusal records, and `filter-only-up-instances`.

use super::*;
use crate::experiment::simulate_with;

/// Both request modes: the batched count and the per-request reference.
fn both_modes(s: &Scenario, seed: u64) -> [Log; 2] {
    let batched = World::new(s, seed, Vec::new()).run().0;
    let (per_request, _) = record(s, seed);
    [batched, per_request]
}

/// Refused attempts on `target` and failed requests first sent to it, from either mode.
fn dead_hits_and_errors(log: &Log, target: usize) -> (u64, u64) {
    let (mut dead, mut failed) = (0, 0);
    for (_, o) in log {
        match *o {
            Observation::Attempt {
                process,
                dead: true,
                ..
            } if process == target => dead += 1,
            Observation::DeadHits { process, count, .. } if process == target => dead += count,
            Observation::RequestFailed { first, .. } if first == target => failed += 1,
            Observation::RequestsFailed { first, count, .. } if first == target => failed += count,
            _ => {}
        }
    }
    (dead, failed)
}

const TWO_AT_10_PER_S: [&str; 4] = [
    "app[0].instances=2",
    "caller[0].rate-per-s=10",
    "caller[0].fixed-rate=true",
    "server.eureka.server.enable-self-preservation=false",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut all: Vec<&'a str> = TWO_AT_10_PER_S.to_vec();
    all.extend_from_slice(extra);
    all
}

/// "A default `zuul = true` caller: every refused request is an error": Zuul's
/// `ZuulProperties#retryable` defaults to false, and without spring-retry its
/// `RibbonLoadBalancingHttpClient` never retries anyway
/// (`getRequestSpecificRetryHandler` = `RequestSpecificRetryHandler(false, false, ...)`), so
/// each refused attempt is a failed request: errors == dead hits, in both modes. A Hoxton caller
/// that says nothing is that Zuul (`HttpClient::default_for`), with the same trial.
#[test]
fn default_zuul_caller_every_refused_request_is_an_error_fact_14() {
    let by_default = scenario(KILL9, &with(&[]));
    let zuul = scenario(KILL9, &with(&["caller[0].zuul=true"]));
    let dead = process(&zuul, "svc-0");
    for seed in [4, 9] {
        let [a, b] = both_modes(&zuul, seed);
        let (default_batched, _) = World::new(&by_default, seed, Vec::new()).run();
        assert_eq!(default_batched, a, "the default caller is Zuul");
        for log in [&a, &b] {
            let (hits, errors) = dead_hits_and_errors(log, dead);
            assert!(hits >= 3, "{hits}");
            assert_eq!(errors, hits);
        }
    }
}

/// FACTS.md §14: `zuul.retryable = true` acts only with spring-retry on the classpath
/// (`RetryableRibbonLoadBalancingHttpClient#isClientRetryable` → `AbstractRibbonCommand#run`
/// calls `execute` under `RibbonLoadBalancedRetryPolicy`); then the next-server retry lands on
/// the live instance and no request fails. Without spring-retry it changes nothing.
#[test]
fn zuul_retryable_with_spring_retry_retries_on_the_next_server_fact_14() {
    let retrying = scenario(
        KILL9,
        &with(&[
            "caller[0].zuul=true",
            "caller[0].zuul.retryable=true",
            "caller[0].spring-retry=true",
        ]),
    );
    let dead = process(&retrying, "svc-0");
    for log in both_modes(&retrying, 4) {
        let (hits, errors) = dead_hits_and_errors(&log, dead);
        assert!(hits >= 3, "{hits}");
        assert_eq!(errors, 0);
    }
    let classpath_lacks_it = scenario(
        KILL9,
        &with(&["caller[0].zuul=true", "caller[0].zuul.retryable=true"]),
    );
    assert!(
        classpath_lacks_it
            .warnings
            .iter()
            .any(|w| w.contains("does nothing without spring-retry")),
        "{:?}",
        classpath_lacks_it.warnings
    );
    for log in both_modes(&classpath_lacks_it, 4) {
        let (hits, errors) = dead_hits_and_errors(&log, dead);
        assert_eq!(errors, hits);
    }
}

/// FACTS.md §14, computed by hand: a RestTemplate with spring-retry on Ribbon records each
/// refused attempt twice in `ServerStats` (`RibbonLoadBalancerClient#execute` →
/// `RibbonStatsRecorder#recordStats`, then `RibbonLoadBalancedRetryPolicy#registerThrowable` →
/// `updateServerInstanceStats`). One caller at exactly 10 requests/s over two instances, one
/// killed: each request that hits the dead one retries on the live one (the cursor moves by two,
/// back to the dead one), so the first two requests after the kill hit it 100 ms apart; after
/// the second the count is 4 >= 3: tripped, for `2^(4-3) x 10` = 20 s (not 10 s after a third
/// refusal, as with one record per refusal). Each later probe adds 2: 6 failures, 30 s, and 30 s
/// from then on. No request fails. On Dalston (SCN 1.3.x, before commit 7cc8a9a95) the policy
/// records nothing, so the breaker trips after 3 refusals as for any other caller.
#[test]
fn rest_template_with_spring_retry_trips_the_breaker_after_two_refusals_fact_14() {
    const GAP: u64 = 100;
    let rest_template = [
        "caller[0].http-client=rest-template",
        "caller[0].spring-retry=true",
    ];
    for (release, per_refusal) in [("Hoxton", 2), ("Edgware.SR2", 2), ("Dalston", 1)] {
        let release_key = format!("simulation.release={release}");
        let mut overrides = with(&rest_template);
        overrides.push(&release_key);
        let s = scenario(KILL9, &overrides);
        let dead = process(&s, "svc-0");
        // Failures on record after k refusals, and the blackout they give (ServerStats).
        let blackout = |k: usize| match per_refusal * k {
            f if f < 3 => 0,
            3 => 10_000,
            4 => 20_000,
            _ => 30_000,
        };
        let to_trip = if per_refusal == 2 { 2 } else { 3 };
        for log in both_modes(&s, 21) {
            let stopped = times(&log, |o| {
                *o == Observation::StoppedServing { process: dead }
            })[0];
            let hits = dead_hit_times(&log, dead);
            assert!(hits.len() >= to_trip + 3, "{release}: {hits:?}");
            assert!(hits[0].ms() - stopped.ms() <= 2 * GAP);
            for k in 1..to_trip {
                let gap = hits[k].ms() - hits[k - 1].ms();
                assert!(gap.abs_diff(GAP) <= 1, "{release}: hit {k} {gap} ms later");
            }
            assert_eq!(blackout(to_trip - 1), 0, "not tripped one refusal earlier");
            for k in to_trip..hits.len() {
                let end = hits[k - 1].ms() + blackout(k);
                let late = hits[k].ms().checked_sub(end);
                assert!(
                    late.is_some_and(|l| l <= 2 * GAP),
                    "{release}: hit {k} at {} for a blackout ending at {end}",
                    hits[k]
                );
            }
            let (_, errors) = dead_hits_and_errors(&log, dead);
            assert_eq!(errors, 0, "{release}");
        }
    }
}

/// FACTS.md §14: a WebClient or Spring Cloud Gateway on Ribbon (Hoxton) only calls
/// `choose()` (`LoadBalancerExchangeFilterFunction`, `LoadBalancerClientFilter`): nothing is
/// recorded in `ServerStats`, so the breaker never trips and the dead instance takes its full
/// round-robin share, each hit an error (no retry).
#[test]
fn choose_only_stacks_never_trip_the_breaker_fact_14() {
    let zuul = scenario(KILL9, &with(&[]));
    let dead = process(&zuul, "svc-0");
    let (zuul_hits, _) = dead_hits_and_errors(&World::new(&zuul, 5, Vec::new()).run().0, dead);
    for client in ["web-client", "gateway"] {
        let key = format!("caller[0].http-client={client}");
        let s = scenario(KILL9, &with(&[&key]));
        for log in both_modes(&s, 5) {
            let (hits, errors) = dead_hits_and_errors(&log, dead);
            assert_eq!(errors, hits, "{client}");
            assert!(
                hits > 10 * zuul_hits,
                "{client}: {hits} vs Zuul's {zuul_hits}"
            );
        }
    }
}

const DRAIN: &str = svc0_stops!(300, "service-registry", "wait-s = 120");

/// FACTS.md §14 and §5.5: with `eureka.client.filter-only-up-instances = false` the Eureka
/// client keeps instances of every status in the lists it hands out
/// (`Application#_shuffleAndStoreInstances`), and Spring Cloud LoadBalancer takes them as they
/// are (`EurekaDiscoveryClient#getInstances` does not filter). An OUT_OF_SERVICE drain with a
/// 120 s wait then keeps the instance listed (and chosen) through the wait, so its kill -15
/// costs dead hits until the DELETE reaches the caller; with the default filter, none. Ribbon's
/// `DiscoveryEnabledNIWSServerList` keeps only UP itself, so a Ribbon caller is unaffected.
#[test]
fn filter_only_up_instances_false_keeps_out_of_service_instances_on_spring_lb_fact_14() {
    let outcomes = |overrides: &[&str]| {
        let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
        let text = format!(
            "[simulation]\nduration-s = 900\ntrials = 1\n[[app]]\nname = \"svc\"\ninstances = 4\n\
             [[caller]]\nname = \"gateway\"\ncalls = \"svc\"\nrate-per-s = 20\n{DRAIN}"
        );
        let s = parse_str(&text, "t.toml", "t", &overrides).unwrap();
        let mut all = Vec::new();
        for mode in [RequestMode::Batched, RequestMode::PerRequest] {
            for trial in 0..6 {
                all.push(
                    simulate_with(&s, trial, 40 + u64::from(trial), mode).shutdowns[0].clone(),
                );
            }
        }
        all
    };
    let keep = "clients.eureka.client.filter-only-up-instances=false";
    for o in outcomes(&["simulation.release=2020.0"]) {
        assert_eq!(o.dead_hits, 0, "{o:?}");
    }
    for o in outcomes(&["simulation.release=2020.0", keep]) {
        assert!(o.dead_hits > 0, "{o:?}");
        assert_eq!(o.errors, o.dead_hits, "a gateway does not retry");
        assert!(o.exposure_ms.is_some_and(|e| e > 0), "{o:?}");
    }
    for o in outcomes(&["simulation.release=Hoxton", keep]) {
        assert_eq!(o.dead_hits, 0, "Ribbon filters UP itself: {o:?}");
    }
}

/// The same after a kill -15 on 2020.0: the DOWN instance stays in the LoadBalancer's list
/// until the caller's registry no longer holds it at all, so it leaves the list only after the
/// server has taken the DELETE.
#[test]
fn filter_only_up_instances_false_keeps_down_instances_until_the_delete_fact_14() {
    let s = scenario(
        KILL15,
        &[
            "simulation.release=2020.0",
            "clients.eureka.client.filter-only-up-instances=false",
            "app[0].instances=4",
        ],
    );
    let target = process(&s, "svc-0");
    for log in both_modes(&s, 8) {
        let cancelled = times(
            &log,
            |o| matches!(o, Observation::Cancelled { process, .. } if *process == target),
        );
        let dropped = times(
            &log,
            |o| matches!(o, Observation::RibbonList { process, listed: false, .. } if *process == target),
        );
        assert_eq!(cancelled.len(), 1, "one DELETE");
        assert!(!dropped.is_empty());
        assert!(dropped[0] > cancelled[0], "{dropped:?} vs {cancelled:?}");
    }
}
