//! `simulation.start = "steady"`: the world at time 0 is what a long uptime leaves.

use super::*;

/// The test fleet (20 instances and a gateway, 5 ms latency) on a steady start, no stop, every
/// client fetching (these tests read every client's cache).
fn steady(seed: u64) -> Log {
    let s = scenario("", &["simulation.start=steady"]);
    record_every_fetch(&s, seed)
}

/// At time 0 every instance and the gateway are UP in the registry, served by `GET /apps`, in
/// the Eureka cache of each of the 21 clients (all fetch) and in the gateway's Ribbon list;
/// nothing registers again later (the registrations are long done).
#[test]
fn at_time_0_every_layer_lists_the_fleet() {
    let log = steady(3);
    let at_0 = |pred: &dyn Fn(&Observation) -> bool| {
        log.iter().filter(|(t, o)| t.ms() == 0 && pred(o)).count()
    };
    assert_eq!(
        at_0(&|o| matches!(o, Observation::Registry { up: true, .. })),
        21
    );
    assert_eq!(
        at_0(&|o| matches!(o, Observation::Served { up: true, .. })),
        21
    );
    assert_eq!(
        at_0(&|o| matches!(o, Observation::ClientCache { up: true, .. })),
        21 * 21
    );
    assert_eq!(
        at_0(&|o| matches!(o, Observation::RibbonList { listed: true, .. })),
        20
    );
    assert!(
        !log.iter()
            .any(|(_, o)| matches!(o, Observation::Registered { .. }))
    );
}

/// The renews of a long uptime are counted already: from the first eviction run on, renews in
/// the last minute are 2 per client (20 instances and the gateway renew every 30 s, so any
/// complete 60 s window holds exactly 2 of each, FACTS.md §2.6), against the threshold of
/// 1 + 21 expected clients, (int)(22 x 2 x 0.85) = 37 (§2.5). A cold start's first runs see 0.
#[test]
fn the_first_eviction_run_sees_a_full_minute_of_renews() {
    for seed in 1..6 {
        let log = steady(seed);
        let runs: Vec<(u64, i64)> = log
            .iter()
            .filter_map(|(_, o)| match o {
                Observation::EvictionRun {
                    renews_last_min,
                    threshold,
                    ..
                } => Some((*renews_last_min, *threshold)),
                _ => None,
            })
            .take(5)
            .collect();
        assert_eq!(runs.len(), 5);
        for run in runs {
            assert_eq!(run, (42, 37), "seed {seed}");
        }
    }
}

/// Every periodic timer at its own uniform phase: over 21 clients, the first heartbeat after
/// time 0 of each arrives within one interval (plus the 5 ms latency), and they are spread over
/// it rather than bunched (every 10 s third of the interval gets some, as 21 uniform draws
/// leave a third empty with probability 3 x (2/3)^21 < 0.0005).
#[test]
fn heartbeats_resume_at_independent_phases() {
    let log = steady(7);
    let mut first = vec![None; 22];
    for (t, o) in &log {
        if let Observation::Renewed { process, .. } = o
            && first[*process].is_none()
        {
            first[*process] = Some(t.ms());
        }
    }
    let firsts: Vec<u64> = first.into_iter().flatten().collect();
    assert_eq!(firsts.len(), 21);
    assert!(
        firsts.iter().all(|&t| (1..=30_000 + LAT).contains(&t)),
        "{firsts:?}"
    );
    for third in 0..3 {
        let (lo, hi) = (third * 10_000, (third + 1) * 10_000 + LAT);
        assert!(firsts.iter().any(|&t| t > lo && t <= hi), "{firsts:?}");
    }
}

/// The delta queue is empty at time 0 and the local registries match the server's: with nothing
/// changing, every fetch is a delta that changes nothing and no reconcile mismatch ever forces a
/// full fetch (FACTS.md §4).
#[test]
fn deltas_reconcile_from_the_start() {
    let log = steady(2);
    let fetches: Vec<(bool, bool)> = log
        .iter()
        .filter(|(t, _)| t.ms() > 0)
        .filter_map(|(_, o)| match o {
            Observation::Fetched { changed, delta, .. } => Some((*changed, *delta)),
            _ => None,
        })
        .collect();
    assert!(fetches.len() > 50);
    assert!(fetches.iter().all(|&f| f == (false, true)), "{fetches:?}");
    assert!(
        !log.iter()
            .any(|(_, o)| matches!(o, Observation::ReconcileMismatch { .. }))
    );
}
