//! World-level tests: each runs a small scenario with a fixed network latency, records every
//! observation, and checks a timing rule against a value derived by hand from the rule's source.

use crate::engine::SimTime;
use crate::scenario::fixture::ScenarioText;
use crate::scenario::{Scenario, parse_str};

use super::ids::ServerId;
use super::layout::{Layout, ProcessKind};
use super::observe::Observation;
use super::route::RequestMode;
use super::world::World;

/// One-way latency of every REST call in these tests (no jitter), so request times are exact.
const LAT: u64 = 5;

/// A cold start (`simulation.start = "cold"`): these timelines are derived by hand from the
/// start-up sequence (server open, create, register at web-server start, first fetch), which
/// the steady start replaces by its end state (`steady` tests in `tests/steady.rs`).
fn scenario(extra: &str, overrides: &[&str]) -> Scenario {
    let fleet = ScenarioText::simulation(&[
        "duration-s = 900",
        "trials = 1",
        "start = \"cold\"",
        "context-start-spread-ms = 0",
    ])
    .table(
        "[network]",
        &[&format!("latency-ms = {LAT}"), "latency-jitter-ms = 0"],
    )
    .fleet(20, &["rate-per-s = 20"])
    .text();
    let text = format!("\n{fleet}{extra}\n");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match parse_str(&text, "test.toml", "test", &overrides) {
        Ok(s) => s,
        Err(e) => panic!("test scenario invalid: {e}"),
    }
}

/// A `[[shutdown]]` of `svc-0` at `$at_s` by `$strategy`, then any more of its keys, a line each:
/// the departure most tests time their rules from.
macro_rules! svc0_stops {
    ($at_s:literal, $strategy:literal $(, $line:literal)*) => {
        concat!(
            "\n[[shutdown]]\ninstance = \"svc-0\"\nat-s = ",
            $at_s,
            "\nstrategy = \"",
            $strategy,
            "\"\n",
            $($line, "\n",)*
        )
    };
}

const KILL9: &str = svc0_stops!(300, "kill-9");
const KILL15: &str = svc0_stops!(300, "kill-15");

type Log = Vec<(SimTime, Observation)>;

/// The renewal threshold of the first eviction run after `after_ms`: what a threshold update
/// before it set.
fn threshold_after(log: &Log, after_ms: u64) -> i64 {
    log.iter()
        .filter(|(t, _)| t.ms() > after_ms)
        .find_map(|(_, o)| match o {
            Observation::EvictionRun { threshold, .. } => Some(*threshold),
            _ => None,
        })
        .unwrap()
}

/// Runs a trial in the per-request reference mode, so that every attempt is observed.
fn record(scenario: &Scenario, seed: u64) -> (Log, u64) {
    let world = World::with_mode(scenario, seed, Vec::new(), RequestMode::PerRequest);
    let epoch = world.wall_epoch_ms();
    let (log, _) = world.run();
    (log, epoch)
}

/// [`record`] where every client fetches, also those whose fetches no one observes
/// (`World::with_every_fetch`): for tests that read every client's cache.
fn record_every_fetch(scenario: &Scenario, seed: u64) -> Log {
    World::with_every_fetch(scenario, seed, Vec::new(), RequestMode::PerRequest)
        .run()
        .0
}

fn process(scenario: &Scenario, name: &str) -> usize {
    Layout::new(scenario)
        .processes
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no process {name}"))
}

fn times(log: &Log, pred: impl Fn(&Observation) -> bool) -> Vec<SimTime> {
    log.iter()
        .filter(|(_, o)| pred(o))
        .map(|(t, _)| *t)
        .collect()
}

fn first_at_or_after(list: &[SimTime], t: SimTime) -> Option<SimTime> {
    list.iter().copied().find(|&x| x >= t)
}

fn gaps(list: &[SimTime]) -> Vec<u64> {
    list.windows(2).map(|w| w[1].ms() - w[0].ms()).collect()
}

/// FACTS.md §5.1/§5.2/§0.3: the heartbeat and the fetch start one interval after the client's
/// tasks start, and are fixed-delay from the END of the previous run: each renew reaches the
/// server 5 ms after it is sent, its reply 5 ms later, and the next one is sent 30 s after that,
/// so renews arrive every 30 000 + 2 * 5 ms.
#[test]
fn heartbeat_and_fetch_are_fixed_delay_from_task_start() {
    let s = scenario("", &[]);
    let (log, _) = record(&s, 11);
    let gw = process(&s, "gateway");
    let started = times(&log, |o| {
        *o == Observation::ClientTasksStarted { process: gw }
    })[0];
    let renews = times(
        &log,
        |o| matches!(o, Observation::Renewed { process, .. } if *process == gw),
    );
    assert_eq!(renews[0], started + 30_000 + LAT);
    assert!(gaps(&renews[..10]).iter().all(|&g| g == 30_000 + 2 * LAT));
    let fetches = times(
        &log,
        |o| matches!(o, Observation::Fetched { observer, .. } if *observer == gw),
    );
    // The constructor's fetch completes exactly when the tasks start.
    assert_eq!(fetches[0], started);
    assert_eq!(fetches[1], started + 30_000 + 2 * LAT);
    assert!(gaps(&fetches[1..10]).iter().all(|&g| g == 30_000 + 2 * LAT));
}

/// FACTS.md §5.1: Spring Cloud registers when the web server is up (status STARTING -> UP ->
/// on-demand register), not at the replicator's +40 s.
#[test]
fn spring_cloud_registers_at_web_server_start() {
    let s = scenario("", &[]);
    let (log, _) = record(&s, 12);
    let p = process(&s, "svc-3");
    let started = times(&log, |o| {
        *o == Observation::ClientTasksStarted { process: p }
    })[0];
    let registered = times(
        &log,
        |o| matches!(o, Observation::Registered { process, .. } if *process == p),
    );
    assert_eq!(registered, [started + s.simulation.context_start_ms + LAT]);
}

/// FACTS.md §8: the load balancer is created at the first request with one synchronous update,
/// then refreshes 1 s later and every ServerListRefreshInterval (fixed delay, instant update).
#[test]
fn ribbon_refreshes_after_one_second_then_every_interval() {
    let s = scenario("", &["clients.ribbon.ServerListRefreshInterval=7000"]);
    let (log, _) = record(&s, 13);
    let refreshes = times(&log, |o| {
        matches!(o, Observation::RibbonRefreshed { route: 0 })
    });
    assert_eq!(gaps(&refreshes[..2]), [1_000]);
    assert!(gaps(&refreshes[1..20]).iter().all(|&g| g == 7_000));
}

/// FACTS.md §3: the read-only cache's timer is aligned to wall-clock multiples of its interval.
#[test]
fn read_only_refreshes_fall_on_wall_clock_multiples() {
    let s = scenario(KILL9, &[]);
    for seed in 1..4 {
        let (log, epoch) = record(&s, seed);
        let ticks = times(&log, |o| matches!(o, Observation::ReadOnlyRefreshed { .. }));
        assert!(ticks.len() >= 3);
        for t in ticks {
            assert_eq!((epoch + t.ms()) % 30_000, 0, "seed {seed}, tick at {t}");
        }
    }
}

/// FACTS.md §2.1: eviction runs every period from postInit (openForTraffic) + one period.
#[test]
fn eviction_runs_every_period_from_server_start() {
    let s = scenario(
        KILL9,
        &["server.eureka.server.eviction-interval-timer-in-ms=45000"],
    );
    let (log, _) = record(&s, 14);
    let start = times(&log, |o| matches!(o, Observation::ServerStarted { .. }))[0];
    let runs = times(&log, |o| matches!(o, Observation::EvictionRun { .. }));
    assert_eq!(runs[0], start + 45_000);
    assert!(gaps(&runs).iter().all(|&g| g == 45_000));
}

/// FACTS.md §13 kill -9 chain, derived step by step from the rules: the lease becomes expirable
/// 2 x 90 s after its last renew (Lease#isExpired), the first eviction run from then removes it,
/// the first read-only refresh after that serves it, the gateway's first fetch that reaches the
/// server after that refresh learns it, and Ribbon's first refresh after that drops it.
#[test]
fn kill9_news_travels_lease_eviction_cache_fetch_ribbon() {
    let s = scenario(
        KILL9,
        &["server.eureka.server.enable-self-preservation=false"],
    );
    let target = process(&s, "svc-0");
    let gw = process(&s, "gateway");
    for seed in 1..6 {
        let (log, _) = record(&s, seed);
        let t_stop = times(&log, |o| {
            *o == Observation::StoppedServing { process: target }
        })[0];
        assert_eq!(t_stop, SimTime(300_000));
        let expirable = log
            .iter()
            .filter(|(t, _)| *t <= t_stop)
            .rev()
            .find_map(|(_, o)| match o {
                Observation::Renewed {
                    process,
                    expirable_from,
                    ..
                } if *process == target => Some(*expirable_from),
                _ => None,
            })
            .unwrap();
        let evictions = times(&log, |o| matches!(o, Observation::EvictionRun { .. }));
        let evicted = first_at_or_after(&evictions, expirable).unwrap();
        let registry_down = times(&log, |o| {
            *o == Observation::Registry {
                server: ServerId::FIRST,
                process: target,
                up: false,
            }
        });
        assert_eq!(registry_down, [evicted], "seed {seed}");
        assert!(evicted.ms() - t_stop.ms() >= 150_000 && evicted.ms() - t_stop.ms() < 240_000);

        let ticks = times(&log, |o| matches!(o, Observation::ReadOnlyRefreshed { .. }));
        let served = first_at_or_after(&ticks, evicted).unwrap();
        let served_down = times(&log, |o| {
            *o == Observation::Served {
                server: ServerId::FIRST,
                process: target,
                up: false,
            }
        });
        assert_eq!(served_down, [served], "seed {seed}");

        // A fetch is observed when its reply arrives; it was read at the server LAT earlier.
        let fetches = times(
            &log,
            |o| matches!(o, Observation::Fetched { observer, .. } if *observer == gw),
        );
        let fetched = fetches
            .iter()
            .copied()
            .find(|t| t.ms() - LAT >= served.ms())
            .unwrap();
        let client_down = times(&log, |o| {
            *o == Observation::ClientCache {
                server: ServerId::FIRST,
                observer: gw,
                process: target,
                up: false,
            }
        });
        assert_eq!(client_down, [fetched], "seed {seed}");

        let refreshes = times(&log, |o| {
            matches!(o, Observation::RibbonRefreshed { route: 0 })
        });
        let dropped = first_at_or_after(&refreshes, fetched).unwrap();
        let ribbon_down = times(&log, |o| {
            *o == Observation::RibbonList {
                route: 0,
                process: target,
                listed: false,
            }
        });
        assert_eq!(ribbon_down, [dropped], "seed {seed}");
    }
}

/// FACTS.md §2.5 worked example. 5 instances + 1 gateway: expected 7, threshold 11, healthy renews
/// 12 > 11 so evictions run; after one kill -9, 10 > 11 fails and every run is gated. Without the
/// gateway registering (N = 5), even the healthy fleet is gated: 10 > 10 is false.
#[test]
fn small_fleet_self_preservation_gates_eviction() {
    let gated_runs = |overrides: &[&str]| {
        let s = scenario(KILL9, overrides);
        let (log, _) = record(&s, 3);
        log.iter()
            .filter_map(|(t, o)| match o {
                Observation::EvictionRun {
                    gated, threshold, ..
                } if t.ms() >= 180_000 => Some((*t, *gated, *threshold)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let runs = gated_runs(&["app[0].instances=5"]);
    for (t, gated, threshold) in &runs {
        assert_eq!(*threshold, 11);
        // The window that closed at t holds renews from before the kill until t > kill + 60 s.
        if t.ms() < 300_000 {
            assert!(!gated, "healthy at {t}");
        } else if t.ms() > 360_000 {
            assert!(gated, "after the kill at {t}");
        }
    }
    let runs = gated_runs(&[
        "app[0].instances=5",
        "caller[0].eureka.client.register-with-eureka=false",
    ]);
    assert!(
        runs.iter()
            .all(|(_, gated, threshold)| *gated && *threshold == 10)
    );
}

/// FACTS.md §7 / §5.6 / §14, Edgware and later: DOWN goes out as a register right away at the
/// SIGTERM (300 s), and the DELETE waits for the replicator's stop: `awaitTermination(3 s)` times
/// out on the pending periodic run (due in ~30 s), so the DELETE leaves 3 s after bean
/// destruction. Edgware itself (Eureka 1.7.2) stops the replicator with shutdownNow: no wait.
/// On Boot 2.3+ (Hoxton.SR12) the web server stops at the SIGTERM; on Boot 1.5–2.2 (Edgware,
/// Greenwich) `onClose` stops it after bean destruction, when the DELETE's reply is back.
#[test]
fn kill15_sends_down_then_delete_after_replicator_stop() {
    let target = process(&scenario(KILL15, &[]), "svc-0");
    let sigterm = SimTime(300_000);
    for (release, wait, lifecycle) in [
        ("Hoxton", 3_000, true),
        ("Greenwich", 3_000, false),
        ("Edgware", 0, false),
    ] {
        let s = scenario(KILL15, &[&format!("simulation.release={release}")]);
        let (log, _) = record(&s, 5);
        let down = log
            .iter()
            .find(|(t, o)| {
                *t >= sigterm
                    && matches!(o, Observation::Registered { process, status, .. }
                        if *process == target && *status == super::InstanceStatus::Down)
            })
            .map(|(t, _)| *t)
            .unwrap();
        assert_eq!(down, sigterm + LAT, "{release}");
        let cancelled = times(
            &log,
            |o| matches!(o, Observation::Cancelled { process, .. } if *process == target),
        )[0];
        let after = cancelled.ms() - sigterm.ms();
        let (lo, hi) = super::WEB_SERVER_STOP_MS;
        assert!(
            (wait + lo + LAT..=wait + hi + LAT).contains(&after),
            "{release}: DELETE {after} ms after the SIGTERM"
        );
        let stopped = times(&log, |o| {
            *o == Observation::StoppedServing { process: target }
        });
        let expected = if lifecycle { sigterm } else { cancelled + LAT };
        assert_eq!(stopped, [expected], "{release}");
    }
}

/// seed 000 / spring-cloud-netflix#2101: on Dalston the DOWN register (replicator thread) races
/// the DELETE (closing thread). When the DOWN lands second it re-creates a DOWN lease that is
/// never renewed: it expires 90 s after that register and the next eviction run removes it.
#[test]
fn dalston_down_register_races_the_delete() {
    let s = scenario(
        KILL15,
        &[
            "simulation.release=Dalston",
            "network.latency-jitter-ms=6",
            "server.eureka.server.enable-self-preservation=false",
        ],
    );
    let target = process(&s, "svc-0");
    let (mut ghosts, mut clean) = (0, 0);
    for seed in 1..40 {
        let (log, _) = record(&s, seed);
        let cancelled = times(
            &log,
            |o| matches!(o, Observation::Cancelled { process, .. } if *process == target),
        )[0];
        let late_down = log.iter().find(|(t, o)| {
            *t > cancelled
                && matches!(o, Observation::Registered { process, .. } if *process == target)
        });
        match late_down {
            None => clean += 1,
            Some((registered, _)) => {
                ghosts += 1;
                let evictions = times(&log, |o| matches!(o, Observation::EvictionRun { .. }));
                let due = first_at_or_after(&evictions, *registered + 90_001).unwrap();
                let evicted = times(
                    &log,
                    |o| matches!(o, Observation::Evicted { process, .. } if *process == target),
                );
                assert_eq!(evicted, [due], "seed {seed}");
            }
        }
    }
    assert!(ghosts > 0 && clean > 0, "ghosts {ghosts}, clean {clean}");
}

/// FACTS.md §6: OUT_OF_SERVICE is a server-side override; the instance keeps heartbeating and
/// its renews are counted, but it never turns UP again until the override is deleted.
#[test]
fn out_of_service_override_survives_heartbeats() {
    let text = KILL9
        .replace("kill-9", "service-registry")
        .replace("at-s = 300", "at-s = 300\nwait-s = 200");
    let s = scenario(&text, &[]);
    let target = process(&s, "svc-0");
    let (log, _) = record(&s, 9);
    let down = times(&log, |o| {
        *o == Observation::Registry {
            server: ServerId::FIRST,
            process: target,
            up: false,
        }
    });
    assert_eq!(down[0], SimTime(300_000 + LAT));
    let renews_during_wait = times(
        &log,
        |o| matches!(o, Observation::Renewed { process, .. } if *process == target),
    )
    .into_iter()
    .filter(|t| t.ms() > 300_000 && t.ms() < 500_000)
    .count();
    assert!(renews_during_wait >= 6);
    let back_up = times(&log, |o| {
        *o == Observation::Registry {
            server: ServerId::FIRST,
            process: target,
            up: true,
        }
    });
    assert!(back_up.iter().all(|t| t.ms() < 300_000));
}

/// `pause` keeps serving through the wait: the instance stops serving only at at-s + wait-s.
#[test]
fn pause_keeps_serving_through_the_wait() {
    let text = KILL9
        .replace("kill-9", "pause")
        .replace("at-s = 300", "at-s = 300\nwait-s = 45");
    let s = scenario(&text, &[]);
    let target = process(&s, "svc-0");
    let (log, _) = record(&s, 2);
    let stopped = times(&log, |o| {
        *o == Observation::StoppedServing { process: target }
    });
    assert_eq!(stopped, [SimTime(345_000)]);
}

/// FACTS.md §7, `Release::pause_deregisters`: /pause at 300 s, wait-s 45, then kill-15.
/// Hoxton.SR9 (commons 2.2.6): `context.stop()` sets DOWN once the web server's stop is over,
/// which waits 2.1 s for the /pause request itself (Tomcat `StandardWrapper#unload`,
/// `PAUSE_REQUEST_UNLOAD_WAIT_MS`) plus its own 5–50 ms; the on-demand register reaches the
/// server LAT later. Hoxton.SR10 (commons 2.2.7): /pause
/// touches nothing in Eureka, so the instance stays UP (and keeps renewing) through the wait and
/// the DOWN only comes with the final kill-15 at 345 s, registered at 345 s + LAT. Either way the
/// DELETE follows the web server stop (5–50 ms) and the replicator's 3 s awaitTermination. On
/// SR9 (Boot 2.3) the web server stops at the pause (spring-cloud-commons#788, FACTS.md §14), on
/// SR10 at the kill-15.
#[test]
fn pause_deregisters_up_to_commons_2_2_6_only() {
    let text = KILL9
        .replace("kill-9", "pause")
        .replace("at-s = 300", "at-s = 300\nwait-s = 45\nthen = \"kill-15\"");
    let (lo, hi) = super::WEB_SERVER_STOP_MS;
    let unload = super::PAUSE_REQUEST_UNLOAD_WAIT_MS;
    for (release, earliest, latest) in [
        (
            "Hoxton.SR9",
            300_000 + unload + lo + LAT,
            300_000 + unload + hi + LAT,
        ),
        ("Hoxton.SR10", 345_000 + LAT, 345_000 + LAT),
    ] {
        let s = scenario(&text, &[&format!("simulation.release={release}")]);
        let target = process(&s, "svc-0");
        let (log, _) = record(&s, 6);
        let downs: Vec<SimTime> = log
            .iter()
            .filter(|(t, o)| {
                t.ms() >= 300_000
                    && matches!(o, Observation::Registered { process, status, .. }
                        if *process == target && *status == super::InstanceStatus::Down)
            })
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(downs.len(), 1, "{release}: {downs:?}");
        let down_at = downs[0].ms();
        assert!(
            (earliest..=latest).contains(&down_at),
            "{release}: DOWN at {down_at}"
        );
        let left = times(&log, |o| {
            *o == Observation::Registry {
                server: ServerId::FIRST,
                process: target,
                up: false,
            }
        });
        assert_eq!(left.first(), Some(&SimTime(down_at)), "{release}");
        let stopped = times(&log, |o| {
            *o == Observation::StoppedServing { process: target }
        });
        // Boot 2.3 (SR9) and commons 2.2.6: /pause's `context.stop()` stops the web server.
        let stops_at = if release == "Hoxton.SR9" {
            300_000
        } else {
            345_000
        };
        assert_eq!(stopped, [SimTime(stops_at)], "{release}");
        let renews_in_wait = times(
            &log,
            |o| matches!(o, Observation::Renewed { process, .. } if *process == target),
        )
        .into_iter()
        .filter(|t| t.ms() > 300_000 && t.ms() < 345_000)
        .count();
        assert!(
            renews_in_wait >= 1,
            "{release}: heartbeats go on in the wait"
        );
        let cancelled = times(
            &log,
            |o| matches!(o, Observation::Cancelled { process, .. } if *process == target),
        );
        let (lo, hi) = super::WEB_SERVER_STOP_MS;
        let after = cancelled[0].ms() - 345_000;
        assert!(
            (3_000 + lo + LAT..=3_000 + hi + LAT).contains(&after),
            "{release}: DELETE {after} ms after the stop"
        );
    }
}

/// Same scenario and seed: the same observation stream, event for event.
#[test]
fn trials_are_deterministic() {
    let s = scenario(KILL9, &[]);
    assert_eq!(record(&s, 77), record(&s, 77));
    assert_ne!(record(&s, 77).0, record(&s, 78).0);
}

/// Callers are Eureka clients too: they register unless told not to.
#[test]
fn callers_register_unless_disabled() {
    let registered = |overrides: &[&str]| {
        let s = scenario("", overrides);
        let gw = process(&s, "gateway");
        assert!(matches!(
            Layout::new(&s).processes[gw].kind,
            ProcessKind::Caller { .. }
        ));
        let (log, _) = record(&s, 1);
        log.iter()
            .any(|(_, o)| matches!(o, Observation::Registered { process, .. } if *process == gw))
    };
    assert!(registered(&[]));
    assert!(!registered(&[
        "caller[0].eureka.client.register-with-eureka=false"
    ]));
}

/// FACTS.md §0.3 and §2.1: java.util.Timer is fixed-delay, so each run's wake-up lateness pushes
/// every later run back (runs drift), and the eviction's compensation equals that lateness.
#[test]
fn late_timer_runs_drift_and_are_compensated() {
    let s = scenario(KILL9, &["server.timer-lateness-ms=40"]);
    let (log, _) = record(&s, 21);
    let start = times(&log, |o| matches!(o, Observation::ServerStarted { .. }))[0];
    let runs = times(&log, |o| matches!(o, Observation::EvictionRun { .. }));
    let lateness: Vec<u64> = runs
        .iter()
        .enumerate()
        .map(|(k, t)| t.ms() - start.ms() - 60_000 * (k as u64 + 1))
        .collect();
    assert!(
        lateness.windows(2).all(|w| w[1] >= w[0]),
        "drift accumulates"
    );
    assert!(
        *lateness.last().unwrap() > 40,
        "more than one run's lateness"
    );
    assert!(gaps(&runs).iter().all(|&g| (60_000..=60_040).contains(&g)));
}

/// FACTS.md §2.4: the 15-minute update resets expected clients to the UP instances in the
/// server's embedded client's cache, which is empty unless the server fetches its registry.
#[test]
fn threshold_update_counts_the_embedded_clients_up_instances() {
    let threshold_after_update = |fetch: bool| {
        let s = scenario(
            "",
            &[
                "server.eureka.server.renewal-threshold-update-interval-ms=300000",
                &format!("server.eureka.client.fetch-registry={fetch}"),
            ],
        );
        threshold_after(&record(&s, 4).0, 400_000)
    };
    // 20 instances + gateway + the phantom client: expected 22, threshold (int)(22 * 2 * 0.85).
    assert_eq!(threshold_after_update(false), 37);
    // The embedded client sees 21 UP instances: 21 > 0.85 * 22, so expected = 21.
    assert_eq!(threshold_after_update(true), 35);
}

/// FACTS.md §3: without the read-only level, clients are served the registry as of the last
/// invalidation: a DOWN register is visible at once, not at the next 30 s tick.
#[test]
fn without_read_only_cache_changes_are_served_at_once() {
    let s = scenario(
        KILL15,
        &["server.eureka.server.use-read-only-response-cache=false"],
    );
    let target = process(&s, "svc-0");
    let (log, _) = record(&s, 6);
    let registry = times(&log, |o| {
        *o == Observation::Registry {
            server: ServerId::FIRST,
            process: target,
            up: false,
        }
    });
    let served = times(&log, |o| {
        *o == Observation::Served {
            server: ServerId::FIRST,
            process: target,
            up: false,
        }
    });
    assert_eq!(registry, served);
    assert!(times(&log, |o| matches!(o, Observation::ReadOnlyRefreshed { .. })).is_empty());
}

/// FACTS.md §8 retries: a GET that hits a refused connection is retried once on the next server
/// (MaxAutoRetriesNextServer = 1); with a single, dead instance both attempts fail, so every
/// failed request counts two dead hits. A POST is not retried. (A RestTemplate with
/// spring-retry: `RibbonLoadBalancedRetryPolicy#canRetry`, FACTS.md §14.)
#[test]
fn refused_get_is_retried_on_the_next_server_once() {
    let count = |overrides: &[&str]| {
        let mut all = vec![
            "app[0].instances=1",
            "server.eureka.server.enable-self-preservation=false",
            "caller[0].http-client=rest-template",
            "caller[0].spring-retry=true",
        ];
        all.extend_from_slice(overrides);
        let s = scenario(KILL9, &all);
        let (log, _) = record(&s, 8);
        let dead = log
            .iter()
            .filter(|(_, o)| matches!(o, Observation::Attempt { dead: true, .. }))
            .count();
        let failed = log
            .iter()
            .filter(|(_, o)| matches!(o, Observation::RequestFailed { .. }))
            .count();
        (dead, failed)
    };
    let (dead, failed) = count(&[]);
    assert!(failed > 100);
    assert_eq!(dead, 2 * failed);
    let (dead, failed) = count(&["caller[0].method=POST"]);
    assert_eq!(dead, failed);
    let (dead, failed) = count(&["clients.ribbon.MaxAutoRetries=1"]);
    assert_eq!(dead, 4 * failed);
}

/// Poisson arrivals: the number of requests over the run is close to rate x time.
#[test]
fn requests_arrive_at_the_configured_rate() {
    let s = scenario("", &["caller[0].rate-per-s=50"]);
    let (log, _) = record(&s, 10);
    let attempts = times(&log, |o| matches!(o, Observation::Attempt { .. }));
    let (first, last) = (attempts[0], *attempts.last().unwrap());
    let seconds = (last.ms() - first.ms()) as f64 / 1000.0;
    let rate = attempts.len() as f64 / seconds;
    // ~40 000 arrivals: the standard deviation of the count is ~0.5 %; allow 5 sigma.
    assert!((rate - 50.0).abs() < 50.0 * 0.025, "rate {rate}");
}

/// InstanceInfoReplicatorTest#testOnDemandUpdateRateLimiting and DiscoveryClientRegisterUpdateTest
/// #registerUpdateQuickLifecycleTest (FACTS.md §5.4, §12): three status changes 20 ms apart:
/// the first two go out at once as registers (burst 2), the third is refused by the rate limiter
/// (one token per 15 s) and stays dirty. It reaches the server with whichever comes first: the
/// next periodic run (one replication interval after the second register's reply) or the next
/// heartbeat, which carries the newer dirty timestamp, is answered 404 and re-registers
/// (InstanceResource#validateDirtyTimestamp, FACTS.md §5.3).
#[test]
fn on_demand_updates_are_rate_limited_and_the_last_goes_out_periodically() {
    use super::InstanceStatus::{Down, Up};
    let s = scenario("", &[]);
    let p = process(&s, "svc-2");
    let mut world = World::with_mode(&s, 31, Vec::new(), RequestMode::PerRequest);
    let run_to = |world: &mut World<'_, Log>, t: SimTime| {
        while world.now() < t && world.step() {}
    };
    run_to(&mut world, SimTime(200_000));
    let t0 = world.now();
    world.set_instance_status(p, Down);
    run_to(&mut world, t0 + 20);
    let t1 = world.now();
    world.set_instance_status(p, Up);
    run_to(&mut world, t1 + 20);
    let t2 = world.now();
    world.set_instance_status(p, Down);
    run_to(&mut world, SimTime(260_000));
    let registers: Vec<(SimTime, super::InstanceStatus)> = world
        .observer()
        .iter()
        .filter_map(|(t, o)| match o {
            Observation::Registered {
                process, status, ..
            } if *process == p && *t >= t0 => Some((*t, *status)),
            _ => None,
        })
        .collect();
    assert_eq!(registers.len(), 3, "{registers:?}");
    assert_eq!(registers[0], (t0 + LAT, Down));
    assert_eq!(registers[1], (t1 + LAT, Up));
    assert!(t2 > t1 + 2 * LAT);
    let periodic = t1 + 2 * LAT + 30_000 + LAT;
    let heartbeat = world
        .observer()
        .iter()
        .find_map(|(t, o)| match o {
            Observation::Renewed { process, .. } if *process == p && *t > t2 => Some(*t + 2 * LAT),
            _ => None,
        })
        .unwrap();
    assert_eq!(registers[2], (periodic.min(heartbeat), Down));
    assert!(
        registers[2].0 > t2 + LAT,
        "not sent at once: the rate limiter refused it"
    );
}

/// "A broken PID 1": when the container's PID 1 does not forward SIGTERM, a kill -15
/// sends nothing (no DOWN, no DELETE) and the process dies by SIGKILL after the grace period: a
/// kill -9, 30 s late.
#[test]
fn lost_sigterm_behaves_as_a_late_kill9() {
    let text = svc0_stops!(300, "kill-15", "sigterm-reaches-jvm = false");
    let s = scenario(
        text,
        &["server.eureka.server.enable-self-preservation=false"],
    );
    let target = process(&s, "svc-0");
    let (log, _) = record(&s, 13);
    let stopped = times(&log, |o| {
        *o == Observation::StoppedServing { process: target }
    });
    assert_eq!(stopped, [SimTime(330_000)]);
    let sent = log.iter().any(|(t, o)| {
        t.ms() >= 300_000
            && matches!(o, Observation::Registered { process, .. } | Observation::Cancelled { process, .. }
                if *process == target)
    });
    assert!(!sent, "nothing reaches the server");
    let evicted = times(
        &log,
        |o| matches!(o, Observation::Evicted { process, .. } if *process == target),
    );
    assert_eq!(evicted.len(), 1, "removed by eviction, as after a kill -9");
}

/// Every refused attempt on `target`, one entry per attempt, from either request mode.
fn dead_hit_times(log: &Log, target: usize) -> Vec<SimTime> {
    let mut out = Vec::new();
    for (at, o) in log {
        match *o {
            Observation::Attempt {
                process,
                dead: true,
                ..
            } if process == target => out.push(*at),
            Observation::DeadHits {
                process,
                count,
                last,
                ..
            } if process == target => {
                assert_eq!(
                    count, 1,
                    "a refusing untripped server is stepped request by request"
                );
                out.push(last);
            }
            _ => {}
        }
    }
    out
}

/// Ribbon's circuit breaker, computed by hand (FACTS.md §8; ServerStats#getCircuitBreakerBlackoutPeriod,
/// AvailabilityPredicate, ZoneAvoidanceRule): one caller at exactly 10 requests/s over two
/// instances; one is killed. Round robin with one next-server retry: each request that hits the
/// dead instance retries on the live one, which moves the cursor by two, back to the dead one,
/// so the first three requests after the kill hit it 100 ms apart. The third failure trips it
/// for 10 s; meanwhile the live one takes every request. When the blackout ends the dead one is
/// back in the list at the cursor or next to it, so the 1st or 2nd request hits it (within 200
/// ms), which trips it for 20 s, then 30 s each time, until Ribbon's list drops it. No request
/// fails (the retry lands on the live instance), and the exposure does not depend on the breaker.
/// (Self-preservation is off: one of three clients gone would gate eviction.) The caller is a
/// Feign client, whose Ribbon `LoadBalancerCommand` retries and records one failure per refusal
/// (FACTS.md §14).
#[test]
fn circuit_breaker_trips_after_three_refusals_then_probes_after_10_20_30_s() {
    const GAP: u64 = 100;
    let overrides = [
        "caller[0].http-client=feign",
        "app[0].instances=2",
        "caller[0].rate-per-s=10",
        "caller[0].fixed-rate=true",
        "server.eureka.server.enable-self-preservation=false",
    ];
    let s = scenario(KILL9, &overrides);
    let dead = process(&s, "svc-0");
    let batched = World::new(&s, 21, Vec::new()).run().0;
    let (per_request, _) = record(&s, 21);
    for log in [&batched, &per_request] {
        let stopped = times(log, |o| *o == Observation::StoppedServing { process: dead })[0];
        let dropped = times(
            log,
            |o| matches!(o, Observation::RibbonList { process, listed: false, .. } if *process == dead),
        )[0];
        let hits = dead_hit_times(log, dead);
        assert!(hits.len() >= 6, "{hits:?}");
        assert!(hits[0].ms() - stopped.ms() <= 2 * GAP);
        for k in 1..3 {
            let gap = hits[k].ms() - hits[k - 1].ms();
            assert!(
                gap.abs_diff(GAP) <= 1,
                "hit {k} came {gap} ms after the previous"
            );
        }
        let blackout = |failures: usize| match failures {
            3 => 10_000,
            4 => 20_000,
            _ => 30_000,
        };
        for k in 3..hits.len() {
            let end = hits[k - 1].ms() + blackout(k);
            let late = hits[k].ms().checked_sub(end);
            assert!(
                late.is_some_and(|l| l <= 2 * GAP),
                "hit {k} at {} for a blackout ending at {end}",
                hits[k]
            );
        }
        let last = *hits.last().unwrap();
        assert!(last < dropped);
        assert!(
            last.ms() + blackout(hits.len()) + 2 * GAP >= dropped.ms(),
            "a probe is missing"
        );
        let failed = times(log, |o| {
            matches!(
                o,
                Observation::RequestFailed { .. } | Observation::RequestsFailed { .. }
            )
        });
        assert!(failed.is_empty());
    }
    // Without the breaker every request after the kill hits the dead instance first.
    let mut off = overrides.to_vec();
    off.push("clients.niws.loadbalancer.availabilityFilteringRule.filterCircuitTripped=false");
    let s_off = scenario(KILL9, &off);
    let log = World::new(&s_off, 21, Vec::new()).run().0;
    let with_breaker = dead_hit_times(&batched, dead).len() as u64;
    let without: u64 = log
        .iter()
        .map(|(_, o)| match *o {
            Observation::DeadHits { process, count, .. } if process == dead => count,
            _ => 0,
        })
        .sum();
    let stopped = times(&log, |o| {
        *o == Observation::StoppedServing { process: dead }
    })[0];
    let dropped = times(
        &log,
        |o| matches!(o, Observation::RibbonList { process, listed: false, .. } if *process == dead),
    )[0];
    let batched_dropped = times(
        &batched,
        |o| matches!(o, Observation::RibbonList { process, listed: false, .. } if *process == dead),
    )[0];
    assert_eq!(
        dropped, batched_dropped,
        "the exposure does not depend on the breaker"
    );
    // Every request hits it, except one after a list refresh that reshuffled the order and left
    // the cursor on the live instance.
    let requests = (dropped.ms() - stopped.ms()) / GAP;
    let refreshes = times(&log, |o| matches!(o, Observation::RibbonRefreshed { .. }))
        .into_iter()
        .filter(|&t| t > stopped && t <= dropped)
        .count() as u64;
    assert!(
        without <= requests + 1 && without + refreshes + 2 >= requests,
        "{without} hits for {requests} requests and {refreshes} refreshes"
    );
    assert!(with_breaker < without / 10);
}
mod delta;
mod lifecycle;
mod peers;
mod spring_lb;
mod stacks;
mod steady;
mod zone;

/// `EurekaNotificationServerListUpdater` (FACTS.md §8): Ribbon's list is read again right after
/// each of the caller's fetches (every fetch fires the event, changed or not) and at no other
/// time; on Dalston the event never arrives, so the list is only the one read at creation.
#[test]
fn notification_updater_follows_the_clients_fetches() {
    let s = scenario("", &["clients.eureka-notification-updater=true"]);
    let gw = process(&s, "gateway");
    let log = World::new(&s, 4, Vec::new()).run().0;
    let refreshes = times(&log, |o| {
        matches!(o, Observation::RibbonRefreshed { route: 0 })
    });
    let fetches = times(
        &log,
        |o| matches!(o, Observation::Fetched { observer, .. } if *observer == gw),
    );
    // The first refresh is the constructor's, at the first request; every later one is a fetch.
    let created = refreshes[0];
    let after: Vec<SimTime> = fetches.into_iter().filter(|&t| t > created).collect();
    assert!(after.len() > 20);
    assert_eq!(&refreshes[1..], &after[..]);
    let dalston = scenario(
        "",
        &[
            "clients.eureka-notification-updater=true",
            "simulation.release=Dalston",
        ],
    );
    let log = World::new(&dalston, 4, Vec::new()).run().0;
    let refreshes = times(&log, |o| {
        matches!(o, Observation::RibbonRefreshed { route: 0 })
    });
    assert_eq!(refreshes.len(), 1);
}

/// FACTS.md §2.7, `#shouldAllowAccess` in a cold start: with `default-open-for-traffic-count
/// = 0` the server opens "transfer empty" and answers every GET /apps with 403 until 300 s
/// (`wait-time-in-ms-when-sync-empty`) after it opened: the gateway's fetches all fail before
/// then (its constructor's too, so it starts with no registry) and the first one after it is
/// answered; with the default count of 1 no fetch fails.
#[test]
fn a_server_opened_empty_refuses_fetches_for_five_minutes() {
    let fetches = |count: &str| {
        let s = scenario("", &[count]);
        let gateway = process(&s, "gateway");
        let (log, _) = record(&s, 5);
        let opened = times(&log, |o| matches!(o, Observation::ServerStarted { .. }))[0];
        let failed = times(
            &log,
            |o| matches!(o, Observation::CallFailed { observer, call: "get_applications" } if *observer == gateway),
        );
        let fetched = times(
            &log,
            |o| matches!(o, Observation::Fetched { observer, .. } if *observer == gateway),
        );
        (opened, failed, fetched)
    };
    let modern = fetches("server.eureka.instance.registry.default-open-for-traffic-count=0");
    // The legacy name Spring Cloud reads into the same field
    // (`InstanceRegistryProperties`: `@Value("${eureka.server.defaultOpenForTrafficCount:1}")`).
    assert_eq!(
        fetches("server.eureka.server.defaultOpenForTrafficCount=0"),
        modern
    );
    let (opened, failed, fetched) = modern;
    let until = opened + 300_000;
    assert!(failed.len() >= 9, "{failed:?}");
    assert!(failed.iter().all(|&t| t <= until + LAT), "{failed:?}");
    let first = fetched[0];
    assert!(
        first > until,
        "first fetch {first:?}, window until {until:?}"
    );
    assert!(first <= until + 30_000 + 2 * LAT, "{first:?}");
    let (_, failed, _) =
        fetches("server.eureka.instance.registry.default-open-for-traffic-count=1");
    assert_eq!(failed, []);
}

/// Runs one trial twice, pruned (the default) and with every supervisor timeout armed
/// (`World::arm_every_timeout`); returns both logs, both `Ran`s.
fn pruned_and_reference(
    scenario: &Scenario,
    seed: u64,
    mode: RequestMode,
) -> ((Log, super::world::Ran), (Log, super::world::Ran)) {
    let pruned = World::with_mode(scenario, seed, Vec::new(), mode).run();
    let reference = World::with_mode(scenario, seed, Vec::new(), mode)
        .arm_every_timeout()
        .run();
    (pruned, reference)
}

/// The `TaskTimeout`s a world with no `[[fault]]` leaves out could only have arrived
/// stale, so every observation, at the same instant and in the same order, and the trial's end
/// are those of the reference that arms them all, for every bundled scenario (the clusters
/// without faults prune, the others must not) and a few seeds; the pruned trial handles fewer
/// events where a client has a transport and no fault can hold a call.
#[test]
fn pruned_task_timeouts_change_no_observation() {
    let mut pruned_somewhere = false;
    for stem in crate::scenario::fixture::bundled_stems() {
        let s = crate::scenario::fixture::bundled(&stem, &[]);
        for seed in [1, 2, 3] {
            let ((log, ran), (ref_log, ref_ran)) =
                pruned_and_reference(&s, seed, RequestMode::Batched);
            assert_eq!(ran.end, ref_ran.end, "{stem} seed {seed}");
            assert!(log == ref_log, "{stem} seed {seed}: observations differ");
            assert!(ran.events <= ref_ran.events, "{stem} seed {seed}");
            if !s.faults.is_empty() {
                assert_eq!(ran.events, ref_ran.events, "{stem}: faults, nothing pruned");
            }
            pruned_somewhere |= ran.events < ref_ran.events;
        }
    }
    assert!(pruned_somewhere, "no bundled scenario pruned a timeout");
}

/// One-second tasks, three peers, six instances behind a gateway and a kill -9 at 200 s, each
/// call one way `latency_ms` plus up to 30 ms.
fn one_second_tasks(latency_ms: u64) -> Scenario {
    let text = ScenarioText::simulation(&["duration-s = 400", "trials = 1"])
        .table(
            "[network]",
            &[
                &format!("latency-ms = {latency_ms}"),
                "latency-jitter-ms = 30",
            ],
        )
        .table(
            "[clients]",
            &[
                "eureka.instance.lease-renewal-interval-in-seconds = 1",
                "eureka.client.registry-fetch-interval-seconds = 1",
            ],
        )
        .peer("a", "z1", &[])
        .peer("b", "z1", &[])
        .peer("c", "z1", &[])
        .fleet(6, &["rate-per-s = 20"])
        .shutdown("svc-0", 200, "kill-9", &[])
        .text();
    parse_str(&format!("\n{text}"), "t.toml", "t", &[]).unwrap()
}

/// The same at the edge of the bound: the longest latency that still prunes (a run's 9 round
/// trips of 2 x 55 ms = 990 ms < 1 s), both request modes.
#[test]
fn pruned_task_timeouts_hold_at_the_latency_bound() {
    let s = one_second_tasks(25);
    for mode in [RequestMode::Batched, RequestMode::PerRequest] {
        for seed in [1, 2] {
            let ((log, ran), (ref_log, ref_ran)) = pruned_and_reference(&s, seed, mode);
            assert!(log == ref_log, "{mode:?} seed {seed}: observations differ");
            assert_eq!(ran.end, ref_ran.end);
            assert!(ran.events < ref_ran.events, "{mode:?}: nothing pruned");
        }
    }
}

/// One millisecond more latency and the bound no longer holds: nothing is pruned.
#[test]
fn task_timeouts_are_armed_beyond_the_latency_bound() {
    let s = one_second_tasks(26);
    let ((_, ran), (_, ref_ran)) = pruned_and_reference(&s, 1, RequestMode::Batched);
    assert_eq!(ran.events, ref_ran.events);
}

/// What a client's fetches tell of its own cache (`Fetched`, `ClientCache`,
/// `ReconcileMismatch`, `DeltaForbidden`), if the observer is one of `left_out`.
fn own_fetch_news(o: &Observation, left_out: &[usize]) -> bool {
    let observer = match o {
        Observation::Fetched { observer, .. }
        | Observation::ClientCache { observer, .. }
        | Observation::ReconcileMismatch { observer, .. }
        | Observation::DeltaForbidden { observer } => *observer,
        _ => return false,
    };
    left_out.contains(&observer)
}

/// Runs one trial with unobserved fetches left out (the default) and with every fetch
/// (`World::with_every_fetch`); returns the clients that may be left out (app instances,
/// which call nothing) and both runs.
fn left_out_and_every_fetch(
    scenario: &Scenario,
    seed: u64,
    mode: RequestMode,
) -> (
    Vec<usize>,
    (Log, super::world::Ran),
    (Log, super::world::Ran),
) {
    let world = World::with_mode(scenario, seed, Vec::new(), mode);
    let apps = (0..world.processes().len())
        .filter(|&p| matches!(world.processes()[p].kind, ProcessKind::AppInstance { .. }))
        .collect();
    let reference = World::with_every_fetch(scenario, seed, Vec::new(), mode).run();
    (apps, world.run(), reference)
}

/// The fast mode changes nothing else than the events it leaves out. It leaves out
/// the fetches of clients that call nothing where no read can change a server, the idle
/// periodic replicator runs (`DiscoveryClient::defer_idle_replicator`) and the found renews'
/// replies (`DiscoveryClient::renew_answered_ahead`). Every observation
/// but the left-out clients' news of their own caches, at the same instant and in the same
/// order, and the trial's end are those of the reference that handles every event, for every
/// bundled scenario (those with faults leave nothing out), as written and on a cold start
/// (fetches left out once the first reads filled the caches), a few seeds, both request
/// modes; and it leaves out events where it may.
#[test]
fn the_fast_mode_changes_no_observation() {
    // Whether some cold start, some steady start left out fetches.
    let mut left_out = [false, false];
    for stem in crate::scenario::fixture::bundled_stems() {
        for start in [None, Some("simulation.start=cold".to_string())] {
            let s = crate::scenario::fixture::bundled(&stem, start.as_slice());
            for (seed, mode) in [
                (1, RequestMode::Batched),
                (2, RequestMode::Batched),
                (3, RequestMode::PerRequest),
            ] {
                let (apps, (mut log, ran), (mut ref_log, ref_ran)) =
                    left_out_and_every_fetch(&s, seed, mode);
                log.retain(|(_, o)| !own_fetch_news(o, &apps));
                ref_log.retain(|(_, o)| !own_fetch_news(o, &apps));
                let at = format!("{stem} {start:?} seed {seed}");
                if let Some(k) = (0..log.len().min(ref_log.len())).find(|&k| log[k] != ref_log[k]) {
                    panic!(
                        "{at}: observation {k} differs: {:?}, the reference's {:?}",
                        log[k], ref_log[k]
                    );
                }
                assert!(log == ref_log, "{at}: observations differ");
                assert_eq!(ran.end, ref_ran.end, "{at}");
                if !s.faults.is_empty() {
                    assert_eq!(ran.events, ref_ran.events, "{at}: a fault, yet left out");
                } else {
                    // Not with the read-only cache off, nor on a cold start until every
                    // server's both keys were read (a peer whose `GET /apps` no one read
                    // keeps every fetch).
                    assert!(ran.events <= ref_ran.events, "{at}");
                    let steady = s.simulation.start == crate::scenario::Start::Steady;
                    left_out[usize::from(steady)] |= ran.events < ref_ran.events;
                }
            }
        }
    }
    assert_eq!(
        left_out,
        [true, true],
        "left out somewhere, cold and steady"
    );
}

/// Who is left out on a steady start: app instances that call nothing, never a caller or a
/// peer's embedded client; and nobody with the read-only cache off or deltas refused (a
/// read can then change the cache), or on a cold start, whose first reads fill the caches
/// (its clients are left out later, at a cache refresh after them).
#[test]
fn only_fetches_nobody_reads_and_that_change_nothing_are_left_out() {
    let left_out = |extra: &[&str]| {
        let extra: Vec<String> = extra.iter().map(|e| e.to_string()).collect();
        let s = crate::scenario::fixture::bundled("kill-9", &extra);
        let world = World::new(&s, 1, Vec::new());
        let names: Vec<String> = world
            .processes()
            .iter()
            .filter(|p| p.client.fetches_left_out())
            .map(|p| p.name.clone())
            .collect();
        let apps: Vec<String> = world
            .processes()
            .iter()
            .filter(|p| matches!(p.kind, ProcessKind::AppInstance { .. }))
            .map(|p| p.name.clone())
            .collect();
        (names, apps)
    };
    let (names, apps) = left_out(&[]);
    assert!(!apps.is_empty());
    assert_eq!(names, apps, "every app instance, nothing else");
    for off in [
        "server.eureka.server.use-read-only-response-cache=false",
        "server.eureka.server.disable-delta=true",
        "simulation.start=cold",
    ] {
        assert_eq!(left_out(&[off]).0, Vec::<String>::new(), "{off}");
    }
}
