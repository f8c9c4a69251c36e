//! World-level tests of Spring Cloud LoadBalancer (FACTS.md §9): the lazy cache, the bound it
//! puts on a graceful shutdown's exposure, and the health-check supplier.

use super::*;
use crate::experiment::run_trials;

/// When the balancer of route 0 read its list (Ribbon's refresh observation is shared).
fn refreshes(log: &Log) -> Vec<SimTime> {
    times(log, |o| {
        matches!(o, Observation::RibbonRefreshed { route: 0 })
    })
}

fn both_modes(s: &Scenario, seed: u64) -> [Log; 2] {
    let batched = World::new(s, seed, Vec::new()).run().0;
    let (per_request, _) = record(s, seed);
    [batched, per_request]
}

/// `CachingServiceInstanceListSupplier` (FACTS.md §9): the entry expires 35 s after it was
/// written and only a request re-reads it. One request every 100 s: every request finds the
/// entry expired, so the list is read exactly at the requests, 100 s apart, never in between
/// (no traffic, no refresh). One request a second: the list is read at the first request after
/// each expiry, 35-36 s apart.
#[test]
fn spring_cloud_loadbalancer_cache_refreshes_only_when_a_request_finds_it_expired() {
    let base = ["simulation.release=2020.0", "caller[0].fixed-rate=true"];
    let mut slow = base.to_vec();
    slow.push("caller[0].rate-per-s=0.01");
    let s = scenario("", &slow);
    for log in both_modes(&s, 3) {
        let r = refreshes(&log);
        assert!(r.len() >= 6, "{r:?}");
        for gap in gaps(&r) {
            assert_eq!(gap, 100_000, "{r:?}");
        }
    }
    let mut fast = base.to_vec();
    fast.push("caller[0].rate-per-s=1");
    let s = scenario("", &fast);
    for log in both_modes(&s, 3) {
        let r = refreshes(&log);
        assert!(r.len() >= 20, "{r:?}");
        for gap in gaps(&r) {
            assert!((35_000..=36_000).contains(&gap), "{gap} in {r:?}");
        }
    }
    // Ribbon's updater runs on its timer instead, traffic or not.
    let mut ribbon = slow.clone();
    ribbon.push("clients.spring.cloud.loadbalancer.ribbon.enabled=true");
    let log = World::new(&scenario("", &ribbon), 3, Vec::new()).run().0;
    assert!(gaps(&refreshes(&log)).iter().skip(1).all(|&g| g == 30_000));
}

/// FACTS.md §9 with §3 and §5.5: after a graceful stop (kill -15 on 2020.0, Edgware+ path: DOWN
/// then the DELETE within the replicator's 3 s stop), the news waits at most one read-only
/// cache tick (30 s), one client fetch (30 s + its round trip) and one cache time to live
/// (35 s + the gap to the next request, 50 ms at 20 fixed requests/s). So the exposure is at
/// most 30 + 30 + 35 + 3 s plus small change (1 s); without the cache, 30 + 30 + 3 + 1 s. The
/// TTL shows: some trial exceeds the cache-less bound.
#[test]
fn spring_cloud_loadbalancer_graceful_exposure_is_bounded_by_tick_fetch_and_ttl() {
    let sets = [
        "simulation.release=2020.0",
        "simulation.trials=200",
        "caller[0].fixed-rate=true",
    ];
    let max_exposure = |extra: &[&str]| {
        let mut all = sets.to_vec();
        all.extend_from_slice(extra);
        let s = scenario(KILL15, &all);
        run_trials(&s)
            .iter()
            .map(|t| t.shutdowns[0].exposure_ms.expect("resolved"))
            .max()
            .unwrap()
    };
    let cached = max_exposure(&[]);
    let uncached = max_exposure(&["clients.spring.cloud.loadbalancer.cache.enabled=false"]);
    assert!(cached <= 99_000, "{cached}");
    assert!(uncached <= 64_000, "{uncached}");
    assert!(cached > 64_000, "the 35 s TTL never showed: {cached}");
}

/// `HealthCheckServiceInstanceListSupplier` (FACTS.md §9): a killed instance fails its next
/// health check, so it leaves the list within one interval (25 s), long before Eureka would
/// drop it (150 s at the earliest, §1).
#[test]
fn health_check_supplier_drops_a_killed_instance_within_one_interval() {
    let s = scenario(
        KILL9,
        &[
            "simulation.release=2020.0",
            "simulation.trials=100",
            "clients.spring.cloud.loadbalancer.configurations=health-check",
        ],
    );
    for t in run_trials(&s) {
        let exposure = t.shutdowns[0].exposure_ms.expect("resolved");
        assert!((0..=25_000).contains(&exposure), "{exposure}");
    }
}

/// FACTS.md §9 (the `refetch-instances` TIP): without refetching, the health-check supplier only
/// ever checks the first list the Eureka client gave it, so instances that registered after the
/// balancer was created are never called; with `refetch-instances = true` they all appear.
#[test]
fn health_check_without_refetch_never_sees_later_instances() {
    let listed = |log: &Log| {
        let mut seen: Vec<usize> = log
            .iter()
            .filter_map(|(_, o)| match o {
                Observation::RibbonList {
                    route: 0,
                    process,
                    listed: true,
                } => Some(*process),
                _ => None,
            })
            .collect();
        seen.sort();
        seen.dedup();
        seen.len()
    };
    let sets = [
        "simulation.release=2020.0",
        "simulation.start-spread-s=120",
        "clients.spring.cloud.loadbalancer.configurations=health-check",
    ];
    let s = scenario("", &sets);
    let mut refetch = sets.to_vec();
    refetch.push("clients.spring.cloud.loadbalancer.health-check.refetch-instances=true");
    let s_refetch = scenario("", &refetch);
    let seed = (1..20)
        .find(|&seed| listed(&World::new(&s, seed, Vec::new()).run().0) < 20)
        .expect("a trial whose caller starts before the last instance registers");
    let log = World::new(&s, seed, Vec::new()).run().0;
    let first_list = log
        .iter()
        .position(|(_, o)| matches!(o, Observation::RibbonRefreshed { route: 0 }))
        .map(|i| {
            // The first list: every listed-entry observed with the first refresh.
            log[i + 1..]
                .iter()
                .take_while(|(_, o)| matches!(o, Observation::RibbonList { .. }))
                .count()
        })
        .unwrap();
    assert!(listed(&log) <= first_list);
    assert_eq!(
        listed(&World::new(&s_refetch, seed, Vec::new()).run().0),
        20
    );
}
