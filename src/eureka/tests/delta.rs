//! World-level tests of delta fetches (FACTS.md §4): each derives a timeline by hand from the
//! rules and compares it with what the world records.

use super::*;
use crate::eureka::delta::ActionType;

/// The gateway's applied fetches: (when, delta?).
fn fetch_kinds(log: &Log, gw: usize) -> Vec<(SimTime, bool)> {
    log.iter()
        .filter_map(|(t, o)| match o {
            Observation::Fetched {
                observer, delta, ..
            } if *observer == gw => Some((*t, *delta)),
            _ => None,
        })
        .collect()
}

/// When the gateway's local registry first held an UP instance.
fn first_up_in_client(log: &Log, gw: usize) -> SimTime {
    log.iter()
        .find_map(|(t, o)| match o {
            Observation::ClientCache {
                observer, up: true, ..
            } if *observer == gw => Some(*t),
            _ => None,
        })
        .unwrap()
}

/// `DiscoveryClient#fetchRegistry`: the constructor's fetch is full; a periodic fetch is full as
/// long as the local registry is empty; once it holds instances, every periodic fetch is a delta.
/// With every process started together, the constructor's fetch (read at +5 ms) precedes every
/// registration (at +3 s at the earliest), so the first periodic fetch must be a full one.
#[test]
fn fetch_is_full_while_the_local_registry_is_empty() {
    let s = scenario("", &["simulation.start-spread-s=0"]);
    let gw = process(&s, "gateway");
    for seed in 1..4 {
        let (log, _) = record(&s, seed);
        let fetches = fetch_kinds(&log, gw);
        let filled = first_up_in_client(&log, gw);
        assert!(!fetches[0].1 && !fetches[1].1, "seed {seed}: {fetches:?}");
        for &(t, delta) in &fetches {
            assert_eq!(delta, t > filled, "seed {seed}: fetch at {t}");
        }
        assert!(fetches.len() > 20);
    }
}

/// `eureka.client.disable-delta=true` (DefaultEurekaClientConfig#shouldDisableDelta): every fetch
/// is a full one.
#[test]
fn client_disable_delta_always_fetches_full() {
    let s = scenario(KILL9, &["clients.eureka.client.disable-delta=true"]);
    let gw = process(&s, "gateway");
    let (log, _) = record(&s, 2);
    let fetches = fetch_kinds(&log, gw);
    assert!(fetches.len() > 20);
    assert!(fetches.iter().all(|&(_, delta)| !delta));
}

/// `eureka.server.disable-delta=true`: GET /apps/delta answers 403
/// (ApplicationsResource#getContainerDifferential), the client's delta is null and the same run
/// fetches the full registry (DiscoveryClient#getAndUpdateDelta). Each such run is two round
/// trips, so the task (fixed-delay from the end of the run) comes back every 30 000 + 4 x 5 ms,
/// and each full fetch is applied 2 x 5 ms after the 403 arrived.
#[test]
fn server_disable_delta_answers_403_and_the_client_fetches_full() {
    let s = scenario(KILL9, &["server.eureka.server.disable-delta=true"]);
    let gw = process(&s, "gateway");
    let (log, _) = record(&s, 3);
    let fetches = fetch_kinds(&log, gw);
    assert!(fetches.iter().all(|&(_, delta)| !delta));
    let forbidden = times(
        &log,
        |o| matches!(o, Observation::DeltaForbidden { observer } if *observer == gw),
    );
    assert!(forbidden.len() > 20);
    let filled = first_up_in_client(&log, gw);
    let after: Vec<SimTime> = fetches
        .iter()
        .map(|&(t, _)| t)
        .filter(|&t| t > filled)
        .collect();
    assert_eq!(after.len(), forbidden.len());
    for (full, refused) in after.iter().zip(&forbidden) {
        assert_eq!(full.ms(), refused.ms() + 2 * LAT);
    }
    assert!(gaps(&after).iter().all(|&g| g == 30_000 + 4 * LAT));
}

/// A DELETED item missed by a client whose fetch gap (600 s) exceeds the item's life in the queue
/// (180-210 s) and in the cached delta: the next delta does not carry it, the client still counts
/// svc-0 as UP, so its hash (`UP_21_`) differs from the server's (`UP_20_`) and
/// DiscoveryClient#reconcileAndLogDifference fetches the full registry once, in the same run
/// (2 x 5 ms later). Only that full fetch removes svc-0 from the client; the next delta matches.
#[test]
fn missed_delete_is_reconciled_by_exactly_one_full_fetch() {
    let extra = KILL9
        .replace("kill-9", "kill-15")
        .replace("at-s = 300", "at-s = 700");
    let s = scenario(
        &extra,
        &[
            "simulation.duration-s=2000",
            "simulation.start-spread-s=0",
            "caller.gateway.eureka.client.registry-fetch-interval-seconds=600",
        ],
    );
    let gw = process(&s, "gateway");
    let target = process(&s, "svc-0");
    let (log, _) = record(&s, 4);
    let cancelled = times(
        &log,
        |o| matches!(o, Observation::Cancelled { process, .. } if *process == target),
    )[0];
    let fetches = fetch_kinds(&log, gw);
    let mismatches: Vec<(SimTime, String, String)> = log
        .iter()
        .filter_map(|(t, o)| match o {
            Observation::ReconcileMismatch { observer, hashes } if *observer == gw => {
                Some((*t, hashes.local.clone(), hashes.server.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    let (at, local, server) = &mismatches[0];
    assert!(at.ms() > cancelled.ms() + 210_000);
    assert_eq!((local.as_str(), server.as_str()), ("UP_21_", "UP_20_"));
    // The delta applied at `at`, then the reconcile's full fetch one round trip later.
    let i = fetches.iter().position(|&(t, _)| t == *at).unwrap();
    assert!(fetches[i].1);
    assert_eq!(fetches[i + 1], (*at + 2 * LAT, false));
    let client_down = times(&log, |o| {
        *o == Observation::ClientCache {
            server: ServerId::FIRST,
            observer: gw,
            process: target,
            up: false,
        }
    });
    assert_eq!(client_down, [*at + 2 * LAT]);
    // The next run is a delta again, and matches.
    assert!(fetches[i + 2].1);
}

/// Deltas give callers the same view as full fetches: in a normal kill -15 run, the gateway ends
/// with the same up-list (as a set; the order is a shuffle) with and without
/// `eureka.client.disable-delta`, and learns of the shutdown at the same instant, because once
/// the delta key is in the read-only level each delta is generated at the same tick as the full
/// payload and carries every change since the previous one. Only the very first delta may be
/// fresher than the full payload: a key's first read loads the read-write level now
/// (ResponseCacheImpl#getValue), so registrations since the last tick can show up one fetch
/// earlier with deltas than with full fetches, never later.
#[test]
fn deltas_give_the_same_up_list_as_full_fetches_after_kill15() {
    let client_view = |overrides: &[&str]| {
        let s = scenario(KILL15, overrides);
        let gw = process(&s, "gateway");
        let mut world = World::with_mode(&s, 5, Vec::new(), RequestMode::PerRequest);
        while world.step() {}
        let up_list = world.processes()[gw].client.up_list(0).to_vec();
        let log: Vec<(SimTime, Observation)> = world
            .observer()
            .iter()
            .filter(
                |(_, o)| matches!(o, Observation::ClientCache { observer, .. } if *observer == gw),
            )
            .cloned()
            .collect();
        let deltas = world
            .observer()
            .iter()
            .filter(|(_, o)| matches!(o, Observation::Fetched { delta: true, .. }))
            .count();
        assert!(
            !world
                .observer()
                .iter()
                .any(|(_, o)| matches!(o, Observation::ReconcileMismatch { .. })),
            "a client that fetches every 30 s never misses a change"
        );
        (up_list, log, deltas)
    };
    let (with_deltas, timeline, deltas) = client_view(&[]);
    let (full_only, full_timeline, none) =
        client_view(&["clients.eureka.client.disable-delta=true"]);
    assert!(deltas > 20 && none == 0);
    let sorted = |list: &[usize]| {
        let mut list = list.to_vec();
        list.sort_unstable();
        list
    };
    assert_eq!(sorted(&with_deltas), sorted(&full_only));
    assert_eq!(with_deltas.len(), 19, "svc-0 is gone");
    let after_start = |log: &Log| -> Log {
        log.iter()
            .filter(|(t, _)| t.ms() >= 200_000)
            .cloned()
            .collect()
    };
    let shutdown_news = after_start(&timeline);
    assert_eq!(shutdown_news, after_start(&full_timeline));
    assert_eq!(shutdown_news.len(), 1, "{shutdown_news:?}");
    // Every instance became UP in the client no later with deltas than with full fetches.
    let first_up = |log: &Log, q: usize| {
        log.iter().find_map(|(t, o)| match o {
            Observation::ClientCache {
                process, up: true, ..
            } if *process == q => Some(*t),
            _ => None,
        })
    };
    for q in 0..20 {
        assert!(
            first_up(&timeline, q) <= first_up(&full_timeline, q),
            "svc-{q}"
        );
    }
}

/// Retention with a known timer phase: the retention timer runs at server start + k x 30 s
/// (delay = period, timer lateness 0), so the DELETED item queued at the cancel c is dropped by the
/// first run r with c < r - 180 s, and lives 180-210 s.
#[test]
fn deleted_item_lives_until_the_first_retention_run_180_s_after_it() {
    let s = scenario(KILL15, &[]);
    let target = process(&s, "svc-0");
    let (log, _) = record(&s, 6);
    let start = times(&log, |o| matches!(o, Observation::ServerStarted { .. }))[0];
    let cancelled = times(
        &log,
        |o| matches!(o, Observation::Cancelled { process, .. } if *process == target),
    )[0];
    let mut expected = start.ms();
    while expected <= cancelled.ms() + 180_000 {
        expected += 30_000;
    }
    let lived = expected - cancelled.ms();
    assert!((180_000..=210_000).contains(&lived));

    let mut world = World::with_mode(&s, 6, Vec::new(), RequestMode::PerRequest);
    let queued = |w: &World<'_, Log>| {
        w.server()
            .recently_changed
            .rendered()
            .any(|(p, h, at)| p == target && at == cancelled && h.action == ActionType::Deleted)
    };
    let mut dropped = None;
    let mut seen = false;
    while world.step() {
        let present = queued(&world);
        seen |= present;
        if seen && !present {
            dropped = Some(world.now());
            break;
        }
    }
    assert!(seen);
    assert_eq!(dropped, Some(SimTime(expected)));
}
