//! Zone outages (`[[shutdown]] zone`): every process of a zone stops at once,
//! against self-preservation and the 15 % eviction cap (FACTS.md §2.1, §2.2, §2.5). The fleets
//! start together (`start-spread-s = 0`, no jitter), so every client heartbeats at the same
//! instants and the dead leases expire together: the eviction runs that follow are derived by
//! hand.

use super::*;
use crate::eureka::registry::eviction_limit;

/// A cold start of 900 s, no spread, at the exact latency: every instant below is derived by
/// hand from it.
fn cold_start() -> String {
    format!(
        "[simulation]\nduration-s = 900\nmax-duration-s = 900\nstart = \"cold\"\n\
         start-spread-s = 0\ncontext-start-spread-ms = 0\n\
         [network]\nlatency-ms = {LAT}\nlatency-jitter-ms = 0\n"
    )
}

/// Zone z1 goes down at 300 s: every process in it stops at once.
const Z1_DOWN: &str = "[[shutdown]]\nzone = \"z1\"\nat-s = 300\nstrategy = \"kill-9\"\n";

/// The scenario of `text` (as `zone.toml`) with `overrides`.
fn parse_zone(text: &str, overrides: &[&str]) -> Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    parse_str(text, "zone.toml", "zone", &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// At 300 s, zone z1 (`svc`, `k` instances) goes down; `orders` (`20 - k`) and the gateway
/// calling both stay in defaultZone, all registered with the standalone server: 21 leases.
fn standalone(k: u32, overrides: &[&str]) -> Scenario {
    let start = cold_start();
    let text = format!(
        r#"
{start}[[app]]
name = "svc"
instances = {k}
eureka.client.availability-zones.us-east-1 = "z1"
[[app]]
name = "orders"
instances = {}
[[caller]]
name = "gateway"
calls = ["svc", "orders"]
rate-per-s = 5
{Z1_DOWN}"#,
        20 - k
    );
    parse_zone(&text, overrides)
}

const OFF: &str = "server.eureka.server.enable-self-preservation=false";

/// Runs the trial event by event (batched), calling `at_end` with the world at the end.
fn run_to_end(s: &Scenario, seed: u64, at_end: impl FnOnce(&World<'_, Log>)) -> Log {
    let mut world = World::with_mode(s, seed, Vec::new(), RequestMode::Batched);
    while world.step() {}
    at_end(&world);
    world.observer().clone()
}

/// The instant each of `dead`'s leases became expirable at server `server`: from its last
/// renew there at or before `t` (`Lease#isExpired`: last update + duration, strictly after).
fn expirable_from(log: &Log, server: ServerId, dead: &[usize], t: u64) -> Vec<SimTime> {
    dead.iter()
        .map(|&p| {
            log.iter()
                .filter(|(at, _)| at.ms() <= t)
                .filter_map(|(_, o)| match o {
                    Observation::Renewed {
                        server: s,
                        process,
                        expirable_from,
                    } if *s == server && *process == p => Some(*expirable_from),
                    _ => None,
                })
                .next_back()
                .expect("renewed before the outage")
        })
        .collect()
}

/// (instant, expired, evicted) of server `server`'s ungated eviction runs that evicted.
fn evicting_runs(log: &Log, server: ServerId) -> Vec<(SimTime, usize, usize)> {
    log.iter()
        .filter_map(|(t, o)| match o {
            Observation::EvictionRun {
                server: s,
                gated: false,
                expired,
                evicted,
                ..
            } if *s == server && *evicted > 0 => Some((*t, *expired, *evicted)),
            _ => None,
        })
        .collect()
}

/// Self-preservation off: the 10 leases of zone z1 expire together, and each eviction run
/// removes at most `registrySize - (int)(registrySize * 0.85)` of them
/// (`AbstractInstanceRegistry#evict`): 21 leases give 21 - (int)17.85 = 4; then 17 - (int)14.45
/// = 3; then 14 - (int)11.9 = 3. So the first run after the expiry evicts 4 of the 10 expired,
/// the next (60 s later, `eviction-interval-timer-in-ms`) 3 of 6, the next the last 3: the
/// zone leaves the registry 120 s after its first eviction, 4 + 3 + 3 at a time, never
/// touching the 11 live leases.
#[test]
fn zone_outage_is_evicted_fifteen_percent_per_run() {
    // The caps, by hand, against the rule's arithmetic.
    assert_eq!(
        [21, 17, 14].map(|size| eviction_limit(size, 0.85)),
        [4, 3, 3]
    );
    let s = standalone(10, &[OFF]);
    let dead: Vec<usize> = (0..10).map(|i| process(&s, &format!("svc-{i}"))).collect();
    let alive: Vec<usize> = (0..10)
        .map(|i| process(&s, &format!("orders-{i}")))
        .chain([process(&s, "gateway")])
        .collect();
    for seed in 1..4 {
        let log = run_to_end(&s, seed, |w| {
            for &p in &dead {
                assert!(w.server().registry.entry(p).is_none(), "seed {seed}: {p}");
            }
            for &p in &alive {
                assert!(w.server().registry.entry(p).is_some(), "seed {seed}: {p}");
            }
        });
        let expirable = expirable_from(&log, ServerId::FIRST, &dead, 300_000);
        assert!(
            expirable.iter().all(|&e| e == expirable[0]),
            "seed {seed}: the zone renewed together: {expirable:?}"
        );
        let runs = times(&log, |o| matches!(o, Observation::EvictionRun { .. }));
        let first = first_at_or_after(&runs, expirable[0]).expect("a run after the expiry");
        let step = SimTime(first.ms() + 60_000);
        let last = SimTime(first.ms() + 120_000);
        assert_eq!(
            evicting_runs(&log, ServerId::FIRST),
            [(first, 10, 4), (step, 6, 3), (last, 3, 3)],
            "seed {seed}"
        );
        let evicted = times(
            &log,
            |o| matches!(o, Observation::Evicted { process, .. } if dead.contains(process)),
        );
        assert_eq!(evicted.len(), 10, "seed {seed}");
    }
}

/// Self-preservation on (`renewal-percent-threshold` 0.85, FACTS.md §2.5): the server expects
/// 1 + 21 clients, a threshold of (int)(22 * 2 * 0.85) = 37 renews a minute, and gets 42
/// before the outage. Losing a zone of 3 leaves 2 * 18 = 36 <= 37: every run from a window
/// wholly after the outage (from 300 + 120 s on) is gated and the zone's leases stay in the
/// registry to the end. A zone of 2 leaves 2 * 19 = 38 > 37: both are evicted by the first run
/// after their expiry (the cap of 4 does not bind).
#[test]
fn self_preservation_keeps_a_zone_of_more_than_fifteen_percent() {
    assert_eq!((22.0 * 2.0 * 0.85) as i64, 37);
    for seed in 1..4 {
        let s = standalone(3, &[]);
        let dead: Vec<usize> = (0..3).map(|i| process(&s, &format!("svc-{i}"))).collect();
        let log = run_to_end(&s, seed, |w| {
            for &p in &dead {
                assert!(w.server().registry.entry(p).is_some(), "seed {seed}: {p}");
            }
        });
        let late: Vec<(bool, i64, u64)> = log
            .iter()
            .filter(|(t, _)| t.ms() >= 420_000)
            .filter_map(|(_, o)| match o {
                Observation::EvictionRun {
                    gated,
                    threshold,
                    renews_last_min,
                    ..
                } => Some((*gated, *threshold, *renews_last_min)),
                _ => None,
            })
            .collect();
        assert!(late.len() >= 7, "seed {seed}: {late:?}");
        for (gated, threshold, renews) in &late {
            assert!(*gated && *threshold == 37 && *renews <= 36, "seed {seed}");
        }
        assert!(
            !log.iter()
                .any(|(_, o)| matches!(o, Observation::Evicted { .. })),
            "seed {seed}"
        );

        let s = standalone(2, &[]);
        let dead: Vec<usize> = (0..2).map(|i| process(&s, &format!("svc-{i}"))).collect();
        let log = run_to_end(&s, seed, |w| {
            for &p in &dead {
                assert!(w.server().registry.entry(p).is_none(), "seed {seed}: {p}");
            }
        });
        let expirable = expirable_from(&log, ServerId::FIRST, &dead, 300_000);
        let runs = times(&log, |o| matches!(o, Observation::EvictionRun { .. }));
        let first = first_at_or_after(&runs, expirable[0]).expect("a run after the expiry");
        assert_eq!(
            evicting_runs(&log, ServerId::FIRST),
            [(first, 2, 2)],
            "seed {seed}"
        );
    }
}

/// Peers `a` in z1 and `b` in z2; `svc` (10) and `gw-z1` in z1 register with `a`, `orders`
/// (10) and `gw-z2` in z2 with `b`; each caller calls both apps. Zone z1 goes down at 300 s.
fn cluster(overrides: &[&str]) -> Scenario {
    let start = cold_start();
    let text = format!(
        r#"
{start}[server]
eureka.client.register-with-eureka = false
eureka.client.fetch-registry = false
[[peer]]
name = "a"
zone = "z1"
[[peer]]
name = "b"
zone = "z2"
[clients]
eureka.client.availability-zones.us-east-1 = "z1,z2"
[[app]]
name = "svc"
instances = 10
[[app]]
name = "orders"
instances = 10
eureka.client.availability-zones.us-east-1 = "z2,z1"
[[caller]]
name = "gw-z1"
calls = ["svc", "orders"]
rate-per-s = 5
[[caller]]
name = "gw-z2"
calls = ["svc", "orders"]
rate-per-s = 5
eureka.client.availability-zones.us-east-1 = "z2,z1"
{Z1_DOWN}"#
    );
    parse_zone(&text, overrides)
}

/// The zone's peer crashes (`ServerDown`, as a `[[fault]]` crash) and its caller stops at
/// 300 s: `gw-z1` sends no request and no Eureka call after it, while `gw-z2` goes on. `b`
/// holds 22 leases (both apps and both callers, replicated), 11 of them z1's, last renewed
/// there by the same batch from `a`; with self-preservation off it evicts them 4, 3, 3 and 1
/// at a time (22 - (int)18.7, 18 - (int)15.3, 15 - (int)12.75, 12 - (int)10.2 = 4, 3, 3, 2),
/// one eviction interval apart. With it on it expects 23 clients, threshold
/// (int)(23 * 2 * 0.85) = 39, and counts 2 * 11 = 22 renews a minute after the outage: it keeps
/// every lease.
#[test]
fn zone_outage_crashes_its_peer_and_stops_its_caller() {
    assert_eq!(
        [22, 18, 15, 12].map(|size| eviction_limit(size, 0.85)),
        [4, 3, 3, 2]
    );
    assert_eq!((23.0 * 2.0 * 0.85) as i64, 39);
    let off = cluster(&[OFF]);
    let (gw1, gw2) = (process(&off, "gw-z1"), process(&off, "gw-z2"));
    let dead: Vec<usize> = (0..10)
        .map(|i| process(&off, &format!("svc-{i}")))
        .chain([gw1])
        .collect();
    let b = ServerId(1);
    let layout = Layout::new(&off);
    let routes_of = |p: usize| -> Vec<usize> {
        (0..layout.routes.len())
            .filter(|&r| layout.routes[r].process == p)
            .collect()
    };
    let (routes1, routes2) = (routes_of(gw1), routes_of(gw2));
    for seed in 1..3 {
        let (log, _) = record(&off, seed);
        let down = times(&log, |o| {
            *o == Observation::ServerDown {
                server: ServerId(0),
            }
        });
        assert_eq!(down, [SimTime(300_000)], "seed {seed}");
        let requests = |routes: &[usize], after: u64| {
            log.iter()
                .filter(|(t, _)| t.ms() > after)
                .filter(|(_, o)| match o {
                    Observation::Attempt { route, .. }
                    | Observation::NoServer { route }
                    | Observation::RequestFailed { route, .. } => routes.contains(route),
                    _ => false,
                })
                .count()
        };
        assert_eq!(requests(&routes1, 300_000), 0, "seed {seed}: gw-z1 stopped");
        assert!(
            requests(&routes1, 0) > 1000,
            "seed {seed}: gw-z1 called before"
        );
        assert!(
            requests(&routes2, 300_000) > 1000,
            "seed {seed}: gw-z2 goes on"
        );
        let sent_by_gw1 = log.iter().any(|(t, o)| {
            t.ms() > 300_000
                && matches!(o, Observation::Renewed { process, .. }
                    | Observation::Fetched { observer: process, .. } if *process == gw1)
        });
        assert!(!sent_by_gw1, "seed {seed}: gw-z1's client is dead");

        let expirable = expirable_from(&log, b, &dead, 300_000);
        assert!(
            expirable.iter().all(|&e| e == expirable[0]),
            "seed {seed}: one batch renewed the zone at b: {expirable:?}"
        );
        let runs = times(
            &log,
            |o| matches!(o, Observation::EvictionRun { server, .. } if *server == b),
        );
        let first = first_at_or_after(&runs, expirable[0]).expect("a run after the expiry");
        let at = |k: u64| SimTime(first.ms() + k * 60_000);
        assert_eq!(
            evicting_runs(&log, b),
            [(at(0), 11, 4), (at(1), 7, 3), (at(2), 4, 3), (at(3), 1, 1)],
            "seed {seed}"
        );
    }
    let on = cluster(&[]);
    for seed in 1..3 {
        let log = run_to_end(&on, seed, |w| {
            for &p in &dead {
                assert!(
                    w.servers()[1].registry.entry(p).is_some(),
                    "seed {seed}: {p}"
                );
            }
        });
        assert!(
            !log.iter()
                .any(|(_, o)| matches!(o, Observation::Evicted { .. })),
            "seed {seed}"
        );
    }
}

/// `[[app]] zones = ["z1", "z2"]`: svc's instances alternate, svc-0 and svc-2 in z1, svc-1 and
/// svc-3 in z2 (round robin), each process with its zone's client configuration; the outage
/// of z1 at 300 s stops svc-0 and svc-2 only (nothing else is in z1), and svc-1 and svc-3 serve
/// to the end.
#[test]
fn a_spread_app_loses_only_its_instances_in_the_lost_zone() {
    let text = format!(
        r#"
[simulation]
duration-s = 400
max-duration-s = 400
start = "cold"
start-spread-s = 0
[[app]]
name = "svc"
instances = 4
zones = ["z1", "z2"]
[[app]]
name = "orders"
instances = 16
[[caller]]
name = "gateway"
calls = ["svc", "orders"]
rate-per-s = 5
{Z1_DOWN}"#
    );
    let s = parse_zone(&text, &[]);
    let svc: Vec<usize> = (0..4).map(|i| process(&s, &format!("svc-{i}"))).collect();
    let log = run_to_end(&s, 1, |world| {
        let zones: Vec<&str> = svc
            .iter()
            .map(|&p| world.processes()[p].client.config().zone())
            .collect();
        assert_eq!(zones, ["z1", "z2", "z1", "z2"]);
    });
    let stopped: Vec<usize> = log
        .iter()
        .filter_map(|(_, o)| match o {
            Observation::StoppedServing { process } => Some(*process),
            _ => None,
        })
        .collect();
    assert_eq!(stopped, [svc[0], svc[2]]);
}
