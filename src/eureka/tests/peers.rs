//! Clusters: several `[[peer]]`s replicating to each other, each with its own
//! timers; callers reading one peer or another. Instants derived by hand from
//! `PeerEurekaNode`'s rules (`docs/design/peers.md` §3).

use super::*;
use crate::eureka::ids::ServerId;
use crate::eureka::observe::Holding;
use crate::eureka::protocol::Unanswered;

/// Peers `a` and `b`, the instances registered with `a` only, the gateway reading `a` and a
/// second caller `gw-b` reading `b` (one endpoint each: no transport, no draw).
fn two_peers(extra: &str, overrides: &[&str]) -> Scenario {
    let text = format!(
        r#"
[[peer]]
name = "a"
[[peer]]
name = "b"
[[caller]]
name = "gw-b"
calls = "svc"
rate-per-s = 20
eureka.client.service-url.defaultZone = "b"
{extra}
"#
    );
    let mut all = vec!["clients.eureka.client.service-url.defaultZone=a"];
    all.extend_from_slice(overrides);
    scenario(&text, &all)
}

/// Runs the trial event by event and calls `watch` after each with the world.
fn watch<O: crate::eureka::observe::Observer>(
    mut world: World<'_, O>,
    mut watch: impl FnMut(&World<'_, O>),
) {
    while world.step() {
        watch(&world);
    }
}

/// (instant, lease stamp) each time server `s`'s lease of `p` changed its last update.
fn lease_updates(s: &Scenario, seed: u64, server: usize, p: usize) -> Vec<(u64, u64)> {
    let world = World::with_mode(s, seed, Vec::new(), RequestMode::Batched);
    let mut seen = Vec::new();
    let mut last = None;
    watch(world, |w| {
        let stamp = w.servers()[server]
            .registry
            .entry(p)
            .map(|e| e.lease.last_update.ms());
        if stamp != last {
            last = stamp;
            if let Some(stamp) = stamp {
                seen.push((w.now().ms(), stamp));
            }
        }
    });
    seen
}

/// A lone `[[peer]]` named like the standalone server (`eureka-server`) is that server: the
/// same streams, the same process, no replication, no transport; every observation equal.
#[test]
fn a_lone_peer_named_like_the_server_is_the_standalone_server() {
    for start in ["cold", "steady"] {
        let start = format!("simulation.start={start}");
        let alone = scenario(KILL9, &[&start]);
        let peer = scenario(
            &format!("{KILL9}\n[[peer]]\nname = \"eureka-server\"\n"),
            &[&start],
        );
        assert_eq!(alone.servers().len(), 1);
        assert_eq!(peer.peers.len(), 1);
        assert_eq!(record(&alone, 21).0, record(&peer, 21).0, "{start}");
    }
}

/// T4: `a` renews p when its heartbeat arrives (stamp = arrival + 90 000); the heartbeat task
/// leaves in a batch when the oldest pending task has waited 500 ms, so `b` renews p at most
/// 500 ms + one latency (5 ms) later, never sooner than the latency; a lone task (no older one
/// pending) waits exactly 500 ms. Every renew of p at `a` after the start has its copy at `b`.
#[test]
fn replicated_heartbeat_renews_the_peer_copy_later() {
    let s = two_peers("", &[]);
    let p = process(&s, "svc-3");
    let mut lags = Vec::new();
    for seed in 1..4 {
        let at_a = lease_updates(&s, seed, 0, p);
        let at_b = lease_updates(&s, seed, 1, p);
        // Renews only (a renew stamps arrival + duration), after the start-up registration.
        let renews = |v: &[(u64, u64)]| -> Vec<u64> {
            v.iter()
                .filter(|(t, stamp)| *stamp == t + 90_000)
                .map(|(t, _)| *t)
                .collect()
        };
        let (ra, rb) = (renews(&at_a), renews(&at_b));
        assert!(ra.len() > 20, "seed {seed}: {} renews at a", ra.len());
        for &t in &ra {
            let next = rb.iter().copied().find(|&u| u > t).expect("renewed at b");
            let lag = next - t;
            assert!(
                (LAT + 1..=500 + LAT).contains(&lag),
                "seed {seed}: lag {lag}"
            );
            lags.push(lag);
        }
    }
    assert!(
        lags.contains(&(500 + LAT)),
        "a lone task waits 500 ms: {lags:?}"
    );
}

/// When the process a caller reads drops an instance, in trials of a kill -9.
fn removals(s: &Scenario, seed: u64, caller: &str, target: usize) -> Option<u64> {
    let gw = process(s, caller);
    let (log, _) = record(s, seed);
    log.iter()
        .find(|(_, o)| {
            matches!(o, Observation::ClientCache { observer, process, up: false, .. }
                if *observer == gw && *process == target)
        })
        .map(|(t, _)| t.ms())
}

/// A peer with a longer eviction interval delays only its own readers: `b` evicting every
/// 120 s instead of 60 s leaves the gateway reading `a` exactly as it was, trial by trial, and
/// delays `gw-b` by E[U(0, 120 s)] - E[U(0, 60 s)] = 30 s on average (the eviction run after
/// the expiry is uniform in the period; the 0.5 s replication lag moves both equally).
/// 300 trials: the difference's sd is sqrt(120^2/12 + 60^2/12) = 38.7 s, so its mean is
/// within 4 standard errors (8.9 s) of 30 s.
#[test]
fn a_peer_with_a_longer_eviction_interval_delays_only_its_own_readers() {
    let steady = "simulation.start=steady";
    let base = two_peers(KILL9, &[steady]);
    let slow_b = two_peers(
        &format!("{KILL9}\n"),
        &[
            steady,
            "peer.b.eureka.server.eviction-interval-timer-in-ms=120000",
        ],
    );
    let target = process(&base, "svc-0");
    let mut delay_b = Vec::new();
    for seed in 1..=300 {
        let a0 = removals(&base, seed, "gateway", target);
        let a1 = removals(&slow_b, seed, "gateway", target);
        assert_eq!(a0, a1, "seed {seed}: the gateway reads a");
        let b0 = removals(&base, seed, "gw-b", target).expect("removed");
        let b1 = removals(&slow_b, seed, "gw-b", target).expect("removed");
        delay_b.push(b1 as f64 - b0 as f64);
    }
    let mean = delay_b.iter().sum::<f64>() / delay_b.len() as f64 / 1000.0;
    assert!((mean - 30.0).abs() < 8.9, "mean delay at b {mean:.1} s");
}

use crate::scenario::{FaultConfig, FaultKind, FaultSide};

fn with_fault(mut s: Scenario, at_ms: u64, kind: FaultKind) -> Scenario {
    s.faults.push(FaultConfig { at_ms, kind });
    s
}

/// (instant, present) each time server `s`'s registry gains or loses `p`, with the lease's last
/// update just before a loss.
fn presence(s: &Scenario, seed: u64, server: usize, p: usize) -> Vec<(u64, Option<u64>)> {
    let world = World::with_mode(s, seed, Vec::new(), RequestMode::Batched);
    let mut changes = Vec::new();
    let mut last: Option<u64> = None;
    let mut held = false;
    watch(world, |w| {
        let entry = w.servers()[server].registry.entry(p);
        if entry.is_some() != held {
            held = entry.is_some();
            changes.push((w.now().ms(), if held { None } else { last }));
        }
        last = entry.map(|e| e.lease.last_update.ms());
    });
    changes
}

/// T1': a kill -15 cancels svc-0 at `a` at about 300 s while `a` and `b` are cut apart for
/// 65 s. `a`'s cancel task to `b` fails every 200 ms connect timeout + 100 ms and expires
/// after `max-time-for-replication` (30 s), long before the partition heals, so `b` never
/// hears of it: its copy of the lease, last renewed at r (stamped r + 90 s), expires at
/// r + 180 s and goes at `b`'s own eviction run after that, which finds it expired
/// (`now > last update + duration`), within one eviction period (60 s) of the expiry plus
/// the self-preservation wait the partition caused (`b` lost every replicated renew).
#[test]
fn cancel_lost_to_a_partition_is_evicted_on_the_peers_timer() {
    for seed in 1..4 {
        let cut = FaultKind::Partition {
            between: [FaultSide::Peer(0), FaultSide::Peer(1)],
            for_ms: 65_000,
        };
        let s = with_fault(two_peers(KILL15, &[]), 299_000, cut);
        let p = process(&s, "svc-0");
        let at_a = presence(&s, seed, 0, p);
        let at_b = presence(&s, seed, 1, p);
        let cancelled = at_a.iter().find(|(t, _)| *t >= 299_000).expect("left a").0;
        // The premise: the cancel's task expires (30 s) before the partition heals.
        assert!(
            cancelled + 30_000 < 299_000 + 65_000,
            "seed {seed}: a at {cancelled}"
        );
        let &(gone, stamp) = at_b
            .iter()
            .find(|(t, _)| *t >= 299_000)
            .expect("b drops it at last");
        let stamp = stamp.expect("b held a renewed lease");
        // The last renew at b came before the partition: r = stamp - 90 s < 299 s.
        assert!(stamp - 90_000 < 299_000, "seed {seed}");
        assert!(gone > stamp + 90_000, "seed {seed}: expired when evicted");
        assert!(
            gone > 299_000 + 65_000,
            "seed {seed}: after the partition healed"
        );
        let (log, _) = record(&s, seed);
        let evicted = times(&log, |o| {
            *o == Observation::Evicted {
                server: ServerId(1),
                process: p,
            }
        });
        assert_eq!(evicted, vec![SimTime(gone)], "seed {seed}: by b's eviction");
    }
}

/// T3 in a world: `b` is down from 200 s to 260 s; every instance renews at `a`, whose
/// heartbeat tasks for `b` fail (refused after a 10 ms round trip, retried 100 ms later) and
/// are replaced by each newer heartbeat, so one live task per instance waits when `b` comes
/// back empty. The next batch leaves within one retry cycle (110 ms), or, when a newer
/// heartbeat replaced the task at the head of the queue (its submit time renewed: the delay is
/// the head's, `AcceptorRunner#hasEnoughTasksForNextBatch`), up to 500 ms after that
/// heartbeat: within 610 ms. It is answered 404 for every instance 10 ms later, the registers
/// it asks for leave 500 ms after that and arrive 5 ms later: `b` lists the whole fleet within
/// 260 s + 1 125 ms, not one heartbeat interval (30 s) later.
#[test]
fn restarted_peer_refills_from_the_requeued_heartbeats() {
    let down = FaultKind::ServerRestart {
        peer: 1,
        down_ms: 60_000,
    };
    for seed in 1..4 {
        let s = with_fault(two_peers("", &[]), 200_000, down.clone());
        let fleet: Vec<usize> = (0..20).map(|i| process(&s, &format!("svc-{i}"))).collect();
        let mut world = World::with_mode(&s, seed, Vec::new(), RequestMode::Batched);
        let mut at_restart = None;
        let mut listed_at = None;
        while world.step() {
            let t = world.now().ms();
            let held = fleet
                .iter()
                .filter(|&&p| world.servers()[1].registry.entry(p).is_some())
                .count();
            if t >= 260_000 && at_restart.is_none() {
                at_restart = Some(held);
            }
            if t >= 260_000 && held == fleet.len() {
                listed_at = Some(t);
                break;
            }
        }
        assert_eq!(at_restart, Some(0), "seed {seed}: b comes back empty");
        let listed_at = listed_at.expect("refilled");
        assert!(
            listed_at <= 260_000 + 1_125,
            "seed {seed}: refilled at {listed_at}"
        );
    }
}

/// Clients fail over: `gw-b` reads `b` then `a` (`service-url = "b,a"`); `b` crashes at 200 s,
/// so its calls to `b` are refused and retried on `a` (`RetryableEurekaHttpClient`), and it
/// still learns of svc-0's kill -9 at 300 s. With `b` alone in its list it never does.
#[test]
fn a_crashed_peer_is_failed_over() {
    let crash = FaultKind::Crash {
        peer: 1,
        vanishes: false,
    };
    let both = with_fault(
        two_peers(
            KILL9,
            &["caller.gw-b.eureka.client.service-url.defaultZone=b,a"],
        ),
        200_000,
        crash.clone(),
    );
    let alone = with_fault(two_peers(KILL9, &[]), 200_000, crash);
    let target = process(&both, "svc-0");
    for seed in 1..4 {
        let removed = removals(&both, seed, "gw-b", target).expect("learnt through a");
        assert!(removed > 300_000, "seed {seed}");
        assert_eq!(removals(&alone, seed, "gw-b", target), None, "seed {seed}");
    }
}

/// `max-time-for-replication` decides whether a cancel survives a partition: cut a|b for 20 s
/// around a kill -15 whose cancel reaches `a` at about 303 s. With the default 30 s the task is
/// still pending when the partition heals at 319 s and `b` drops svc-0 within a retry cycle
/// (at most 100 ms + 200 ms) and a batching delay after that; with 10 s it expired at about
/// 313 s and `b` keeps its copy until it expires and its eviction removes it. (The DOWN
/// register sent just before the cancel is a register: it expires after the renewal interval,
/// 30 s, and reaches `b` at the heal either way, so `b` serves the copy as DOWN meanwhile; the
/// lease itself is what the cancel would have removed.)
#[test]
fn max_time_for_replication_decides_whether_a_cancel_outlives_a_partition() {
    let cut = FaultKind::Partition {
        between: [FaultSide::Peer(0), FaultSide::Peer(1)],
        for_ms: 20_000,
    };
    let short = "server.eureka.server.max-time-for-replication=10000";
    for seed in 1..4 {
        let kept = with_fault(two_peers(KILL15, &[]), 299_000, cut.clone());
        let lost = with_fault(two_peers(KILL15, &[short]), 299_000, cut.clone());
        let p = process(&kept, "svc-0");
        let gone = |s: &Scenario| {
            presence(s, seed, 1, p)
                .into_iter()
                .find(|(t, _)| *t >= 299_000)
                .expect("b drops it")
        };
        let (kept_at, _) = gone(&kept);
        assert!(
            (319_000..=319_000 + 300 + 505).contains(&kept_at),
            "seed {seed}: {kept_at}"
        );
        let (lost_at, stamp) = gone(&lost);
        assert!(
            lost_at > stamp.expect("renewed") + 90_000,
            "seed {seed}: evicted"
        );
    }
}

/// The standalone scenario with `release` (an override), svc-1 cut from its only server from
/// `at_ms` for `for_ms`.
fn svc1_cut_from_its_server(release: &str, at_ms: u64, for_ms: u64) -> Scenario {
    let cut = FaultKind::Partition {
        between: [FaultSide::Instance { app: 0, index: 1 }, FaultSide::Peer(0)],
        for_ms,
    };
    with_fault(scenario("", &[release]), at_ms, cut)
}

/// `TimedSupervisorTask` in a world (FACTS.md §5.2, §5.7): svc-1 is cut from its only server
/// from 100 s to 400 s. With the RestTemplate transport (2021.0: no connect timeout, so the
/// OS's 127 s) a renew tries its sticky server, then the candidates (the same server, as a
/// failing sticky one is not quarantined): 2 x 127 = 254 s before it fails. Run 1 at t1 times
/// out at T = t1 + 30 (next in 60 s); run 2 at t1 + 90, on the executor's second thread,
/// times out at T + 90 (next in 120 s); run 3 at t1 + 240 = T + 210 finds both threads busy
/// (until t1 + 254 and t1 + 344) and is rejected, next in the same 120 s. The failures come at
/// T + 224 and T + 314 and re-arm nothing. Run 4 at t1 + 360 = T + 330, after the heal, is
/// answered in time; the lease was evicted meanwhile (no renew for 180 s), so its renew gets a
/// 404 and the re-register reaches the server three latencies later. With Jersey (Hoxton:
/// 5 s connect timeout) no run outlasts the interval and nothing times out: the first renew
/// fails after 2 x 5 s, the next ones, with no sticky server left, after 5 s: one every 35 s.
#[test]
fn a_hanging_heartbeat_backs_off_and_a_full_executor_rejects_the_next_run() {
    let events = |release: &str| {
        let s = svc1_cut_from_its_server(release, 100_000, 300_000);
        let p = process(&s, "svc-1");
        let (log, _) = record(&s, 3);
        let mine = |o: &Observation| match o {
            Observation::TaskTimedOut { observer, task, .. } => {
                (*observer == p && *task == "heartbeat").then_some("timeout")
            }
            Observation::TaskRejected { observer, task } => {
                (*observer == p && *task == "heartbeat").then_some("rejected")
            }
            Observation::CallFailed { observer, call } => {
                (*observer == p && *call == "send_heart_beat").then_some("failed")
            }
            Observation::Registered { process, .. } => (*process == p).then_some("registered"),
            _ => None,
        };
        log.iter()
            .filter(|(t, _)| t.ms() >= 100_000)
            .filter_map(|(t, o)| mine(o).map(|kind| (t.ms(), kind)))
            .collect::<Vec<_>>()
    };

    let seen = events("simulation.release=2021.0");
    let t = seen.first().expect("a timeout").0;
    let from_t: Vec<_> = seen.iter().map(|&(at, kind)| (at - t, kind)).collect();
    assert_eq!(
        from_t,
        [
            (0, "timeout"),
            (90_000, "timeout"),
            (210_000, "rejected"),
            (224_000, "failed"),
            (314_000, "failed"),
            (330_000 + 3 * LAT, "registered"),
        ]
    );
    assert!(
        (100_000..130_000).contains(&(t - 30_000)),
        "t1 = {}",
        t - 30_000
    );

    let seen = events("simulation.release=Hoxton");
    let failed: Vec<_> = seen
        .iter()
        .filter(|e| e.1 == "failed")
        .map(|e| e.0)
        .collect();
    assert!(
        seen.iter().all(|e| e.1 == "failed" || e.1 == "registered"),
        "{seen:?}"
    );
    assert!(failed.len() >= 7, "{failed:?}");
    assert!(
        failed.windows(2).all(|w| w[1] - w[0] == 35_000),
        "{failed:?}"
    );
}

/// Linux's SYN retransmissions in a world (`faults::SYN_RETRANSMITS_MS`: net/ipv4/tcp_timer.c,
/// `tcp_syn_retries` 6): svc-1 is cut from its only server from 200 s to 230 s on 2021.0 (no
/// connect timeout: the OS's 127 s). Its renews reach the server one period P apart (the
/// interval and the call's round trip, read off the renews before the cut), so the renew
/// after the last one before 200 s, at a, leaves at h = a + P - one latency, inside the cut
/// (the cut lasts about a period). Its first SYN is dropped; the retransmission at h + d, d
/// the first of 1, 3, 7, 15, 31, 63 s with h + d >= 230 s, gets through, and the renew
/// reaches the server one latency after it (before, it failed at h + 127 s and the next
/// renew went out afterwards).
#[test]
fn a_renew_across_a_partition_gets_through_at_the_syn_retransmission_after_the_heal() {
    let s = svc1_cut_from_its_server("simulation.release=2021.0", 200_000, 30_000);
    let p = process(&s, "svc-1");
    let mut checked = 0;
    for seed in 1..6 {
        let (log, _) = record(&s, seed);
        let renews: Vec<u64> = log
            .iter()
            .filter(|(_, o)| matches!(o, Observation::Renewed { process, .. } if *process == p))
            .map(|(t, _)| t.ms())
            .collect();
        let before: Vec<u64> = renews.iter().copied().filter(|&t| t < 200_000).collect();
        let [.., previous, a] = before[..] else {
            panic!("seed {seed}: two renews before the cut: {renews:?}");
        };
        let h = a + (a - previous) - LAT;
        if !(200_000..230_000).contains(&h) {
            continue;
        }
        let d = [1_000, 3_000, 7_000, 15_000, 31_000, 63_000]
            .into_iter()
            .find(|d| h + d >= 230_000)
            .expect("a retransmission after the heal");
        let next = renews.iter().copied().find(|&t| t > a);
        assert_eq!(next, Some(h + d + LAT), "seed {seed}: h {h}");
        checked += 1;
    }
    assert!(checked >= 3, "{checked} seeds with a renew inside the cut");
}

/// The dead attempts on `target` in a per-request trial: (instant, connect or read timeout
/// waited on it).
fn failed_attempts(s: &Scenario, seed: u64, target: usize) -> (Vec<u64>, u64) {
    let (log, _) = record(s, seed);
    let dead = log
        .iter()
        .filter(|(_, o)| matches!(o, Observation::Attempt { process, dead: true, .. } if *process == target))
        .map(|(t, _)| t.ms())
        .collect();
    let waited = log
        .iter()
        .filter_map(|(_, o)| match o {
            Observation::ConnectTimeouts {
                process, delay_ms, ..
            } if *process == target => Some(*delay_ms),
            _ => None,
        })
        .sum();
    (dead, waited)
}

/// svc-3 out of the gateway's reach for a minute, each fault with what an attempt on svc-3 then
/// waits: cut from it (`ribbon.ConnectTimeout`, 1000 ms), or paused (`ribbon.ReadTimeout`, set
/// to 3000 ms by the tests that use these).
fn svc3_unreachable_for_a_minute() -> [(FaultKind, u64); 2] {
    let svc3 = FaultSide::Instance { app: 0, index: 3 };
    let cut = FaultKind::Partition {
        between: [FaultSide::Caller(0), svc3.clone()],
        for_ms: 60_000,
    };
    let pause = FaultKind::Pause {
        target: svc3,
        for_ms: 60_000,
    };
    [(cut, 1_000), (pause, 3_000)]
}

/// A partition cuts the callers' requests too ("nothing passes either way"):
/// the gateway cut from svc-3, which never stops, from 100 s to 160 s: every attempt on svc-3
/// in that minute fails and waits `ribbon.ConnectTimeout` (1000 ms, Edgware+), none outside it
/// (the next-server retry takes each request elsewhere). A pause of svc-3 over the same minute:
/// the JVM's kernel accepts, nothing reads, each attempt waits `ribbon.ReadTimeout` (set to
/// 3000 ms here to tell it apart). Without a fault, svc-3 fails no attempt.
#[test]
fn a_partition_or_a_pause_fails_the_requests_to_a_live_instance_while_it_lasts() {
    let plain = scenario("", &["clients.ribbon.ReadTimeout=3000"]);
    let target = process(&plain, "svc-3");
    for seed in 1..3 {
        assert_eq!(failed_attempts(&plain, seed, target), (vec![], 0));
        for (fault, cost) in svc3_unreachable_for_a_minute() {
            let s = with_fault(plain.clone(), 100_000, fault);
            let (dead, waited) = failed_attempts(&s, seed, target);
            assert!(!dead.is_empty(), "seed {seed} {cost}");
            assert!(
                dead.iter().all(|t| (100_000..160_000).contains(t)),
                "{dead:?}"
            );
            assert_eq!(waited, cost * dead.len() as u64, "seed {seed}");
        }
    }
}

/// Found by `invariants::batched_and_per_request_counts_agree`): the same
/// minute in the default batched mode, where Ribbon's circuit breaker (on for the Zuul gateway)
/// cuts the requests into phases. The phase used to ask whether each listed process serves
/// (`Process::serving`) instead of how it answers the caller through the faults
/// (`Answers::of`), so a paused or cut-off instance that still serves counted as accepting and
/// batched mode saw no failed attempt at all. Now each attempt on svc-3 inside the minute
/// fails and waits its timeout as in the per-request reference, and as many of them: both
/// follow the breaker's steps (3 failures trip it for 10 s, then a probe at 10, 20 and every
/// 30 s), which depend on the request instants only through the blackouts' ends.
#[test]
fn a_partition_or_a_pause_fails_the_requests_in_batched_mode_with_the_circuit_breaker() {
    let plain = scenario("", &["clients.ribbon.ReadTimeout=3000"]);
    let target = process(&plain, "svc-3");
    for (fault, cost) in svc3_unreachable_for_a_minute() {
        let s = with_fault(plain.clone(), 100_000, fault);
        let (mut batched, mut per_request) = (0, 0);
        for seed in 1..5 {
            let world = World::with_mode(&s, seed, Vec::new(), RequestMode::Batched);
            let (log, _) = world.run();
            let mut waited = 0;
            for (t, o) in &log {
                match o {
                    Observation::DeadHits {
                        process,
                        count,
                        since,
                        last,
                        ..
                    } if *process == target => {
                        // Counted when the routes are settled (at the latest at the fault's
                        // end), each span inside the minute.
                        let span = since.ms()..=last.ms();
                        assert!(*span.start() >= 100_000 && *span.end() < 160_000, "{o:?}");
                        assert!(t.ms() <= 160_000, "{o:?} at {t:?}");
                        batched += count;
                    }
                    Observation::ConnectTimeouts {
                        process, delay_ms, ..
                    } if *process == target => waited += delay_ms,
                    _ => {}
                }
            }
            let (dead, _) = failed_attempts(&s, seed, target);
            per_request += dead.len() as u64;
            assert_eq!(waited, cost * batched_hits(&log, target), "seed {seed}");
        }
        assert!(batched > 0, "{cost}: no failed attempt in batched mode");
        assert_eq!(batched, per_request, "{cost}");
    }
}

/// The gateway sends one request a second (`fixed-rate`) to svc, one instance, svc-0.
fn one_a_second_to_one_instance(extra: &str, overrides: &[&str]) -> Scenario {
    let mut all = vec![
        "app.svc.instances=1",
        "caller[0].rate-per-s=1",
        "caller[0].fixed-rate=true",
    ];
    all.extend_from_slice(overrides);
    scenario(extra, &all)
}

/// (instant, dead) of each attempt on `target` in a per-request trial.
fn attempts_on(log: &Log, target: usize) -> Vec<(u64, bool)> {
    log.iter()
        .filter_map(|(t, o)| match o {
            Observation::Attempt { process, dead, .. } if *process == target => {
                Some((t.ms(), *dead))
            }
            _ => None,
        })
        .collect()
}

/// A paused instance answers late what arrives less than a read timeout before the pause
/// ends (`faults::answered_late_from`): one request a second to svc-0, paused from 400 s to
/// 430 s, `ribbon.ReadTimeout` 5 s. A request arriving at t fails at t + 5 s if svc-0 is still
/// paused then: t from 400 s to just before 425 s, 25 requests (one a second), each waiting
/// the 5 s read timeout. The 5 arriving from 425 s to 430 s are read when the pause ends and
/// answered at 430 s: accepted (they used to be counted as read timeouts too). Before and
/// after the pause no attempt fails. The batched mode counts the same 25.
#[test]
fn a_paused_instance_answers_late_what_arrives_less_than_a_read_timeout_before_its_end() {
    let pause = FaultKind::Pause {
        target: FaultSide::Instance { app: 0, index: 0 },
        for_ms: 30_000,
    };
    let s = with_fault(
        one_a_second_to_one_instance("", &["clients.ribbon.ReadTimeout=5000"]),
        400_000,
        pause,
    );
    let target = process(&s, "svc-0");
    for seed in 1..4 {
        let (log, _) = record(&s, seed);
        let attempts = attempts_on(&log, target);
        let dead: Vec<u64> = attempts.iter().filter(|a| a.1).map(|a| a.0).collect();
        assert_eq!(dead.len(), 25, "seed {seed}: {dead:?}");
        assert!(
            dead.iter().all(|t| (400_000..425_000).contains(t)),
            "{dead:?}"
        );
        let late = attempts
            .iter()
            .filter(|&&(t, dead)| !dead && (425_000..430_000).contains(&t))
            .count();
        assert_eq!(late, 5, "seed {seed}");
        let (_, waited) = failed_attempts(&s, seed, target);
        assert_eq!(waited, 25 * 5_000, "seed {seed}");
        let world = World::with_mode(&s, seed, Vec::new(), RequestMode::Batched);
        let (batched, _) = world.run();
        assert_eq!(batched_hits(&batched, target), 25, "seed {seed}");
    }
}

/// A paused caller sends its requests late (`Route::hold`): the gateway, one request a
/// second to svc-0 alone (at phase + k s), is paused from 400 s to 430 s, and svc-0 is killed
/// (kill -9) at 410 s, inside the pause. The 30 requests due in the pause are sent when it
/// ends, all at 430 s, in their order, all to svc-0 (the gateway's list is the one it had when
/// it stopped), which is dead by then: 30 refused attempts at 430 s, and none from 400 s to
/// 430 s, not even those due before the kill. Then one a second again, from the first due
/// after the pause (430 s + the phase) on. In batched mode the 30 are counted at 430 s, one
/// by one. The same through Ribbon (Hoxton's Zuul) and Spring Cloud LoadBalancer (2021.0's
/// gateway).
#[test]
fn a_paused_caller_sends_the_requests_due_in_its_pause_when_it_resumes() {
    let pause = FaultKind::Pause {
        target: FaultSide::Caller(0),
        for_ms: 30_000,
    };
    let kill = "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 410\nstrategy = \"kill-9\"\n";
    for (release, seed) in [
        ("Hoxton", 1),
        ("Hoxton", 2),
        ("Hoxton", 3),
        ("2021.0", 1),
        ("2021.0", 2),
    ] {
        let release = format!("simulation.release={release}");
        let s = with_fault(
            one_a_second_to_one_instance(kill, &[&release]),
            400_000,
            pause.clone(),
        );
        let target = process(&s, "svc-0");
        let (log, _) = record(&s, seed);
        let attempts = attempts_on(&log, target);
        // The phase of the grid, in ms (attempts are stamped at their millisecond; Spring
        // Cloud LoadBalancer reports refused ones only, so read it after the kill).
        let phase = attempts.iter().find(|a| a.0 > 430_000).expect("attempts").0 % 1_000;
        // A request due in the very millisecond the pause ends joins the late ones.
        let (late, next) = if phase == 0 {
            (31, 431_000)
        } else {
            (30, 430_000 + phase)
        };
        let expected: Vec<(u64, bool)> = (0..late)
            .map(|_| (430_000, true))
            .chain((0..5).map(|k| (next + 1_000 * k, true)))
            .collect();
        let seen: Vec<(u64, bool)> = attempts
            .iter()
            .copied()
            .filter(|a| (400_000..next + 5_000).contains(&a.0))
            .collect();
        assert_eq!(seen, expected, "{release} seed {seed}: phase {phase} ms");

        let world = World::with_mode(&s, seed, Vec::new(), RequestMode::Batched);
        let (batched, _) = world.run();
        let burst: u64 = batched
            .iter()
            .map(|(t, o)| match o {
                Observation::DeadHits {
                    process,
                    count,
                    since,
                    last,
                    ..
                } if *process == target => {
                    assert!(last.ms() >= 430_000, "seed {seed}: {o:?} at {t:?}");
                    if (t.ms(), since.ms(), last.ms()) == (430_000, 430_000, 430_000) {
                        *count
                    } else {
                        0
                    }
                }
                Observation::Attempt {
                    process,
                    dead: true,
                    ..
                } if *process == target => u64::from(t.ms() == 430_000),
                _ => 0,
            })
            .sum();
        assert_eq!(burst, 30, "{release} seed {seed}");
    }
}

/// The refused or timed-out attempts on `target` a batched trial counted.
fn batched_hits(log: &Log, target: usize) -> u64 {
    log.iter()
        .map(|(_, o)| match o {
            Observation::DeadHits { process, count, .. } if *process == target => *count,
            _ => 0,
        })
        .sum()
}

/// A `[[restart]]`ed process keeps its way to the servers: svc-0 lists only `b`
/// (`service-url = "b"`; a fault elsewhere gives every client a transport), is killed at 300 s
/// and back 10 s after; its new incarnation registers with `b` again (the register reaches `b`
/// first, `a` only by replication half a second later), as it did at the start.
#[test]
fn a_restarted_instance_keeps_its_service_urls() {
    let restart = "[[restart]]\ninstance = \"svc-0\"\ndown-s = 10\n";
    let s = with_fault(
        two_peers(
            &format!("{KILL9}{restart}"),
            &["app.svc.eureka.client.service-url.defaultZone=b"],
        ),
        100_000,
        FaultKind::Partition {
            between: [FaultSide::Caller(0), FaultSide::Peer(1)],
            for_ms: 1_000,
        },
    );
    let p = process(&s, "svc-0");
    let (log, _) = record(&s, 2);
    let registers: Vec<(u64, ServerId)> = log
        .iter()
        .filter_map(|(t, o)| match o {
            Observation::Registered {
                server, process, ..
            } if *process == p => Some((t.ms(), *server)),
            _ => None,
        })
        .collect();
    let before: Vec<_> = registers.iter().filter(|r| r.0 < 300_000).collect();
    let after: Vec<_> = registers.iter().filter(|r| r.0 > 310_000).collect();
    assert_eq!(
        before.first().map(|r| r.1),
        Some(ServerId(1)),
        "{registers:?}"
    );
    assert_eq!(
        after.first().map(|r| r.1),
        Some(ServerId(1)),
        "{registers:?}"
    );
}

/// A peer's JVM goes down with its embedded client (made to fetch here,
/// `eureka.client.fetch-registry = true`): after `b` crashes at 200 s its process fetches
/// nothing more; after a `server-restart` of `b` (down 200-260 s) its embedded client
/// is created anew at 260 s and fetches again.
#[test]
fn a_downed_peer_takes_its_embedded_client_with_it() {
    let fetches = |kind: FaultKind| {
        let fetch = ["server.eureka.client.fetch-registry=true"];
        let s = with_fault(two_peers(KILL9, &fetch), 200_000, kind);
        let b = process(&s, "b");
        let (log, _) = record(&s, 4);
        let fetched = times(
            &log,
            |o| matches!(o, Observation::Fetched { observer, .. } if *observer == b),
        );
        let created = times(
            &log,
            |o| matches!(o, Observation::ClientCreated { process } if *process == b),
        );
        (fetched, created)
    };
    let (fetched, created) = fetches(FaultKind::Crash {
        peer: 1,
        vanishes: false,
    });
    assert!(
        fetched.iter().any(|t| t.ms() < 200_000),
        "it fetched before"
    );
    assert!(fetched.iter().all(|t| t.ms() < 200_000), "{fetched:?}");
    assert_eq!(created.len(), 1);
    let (fetched, created) = fetches(FaultKind::ServerRestart {
        peer: 1,
        down_ms: 60_000,
    });
    assert!(
        fetched
            .iter()
            .all(|t| !(200_000..260_000).contains(&t.ms())),
        "{fetched:?}"
    );
    assert!(fetched.iter().any(|t| t.ms() > 260_000), "{fetched:?}");
    assert_eq!(
        created.iter().map(|t| t.ms()).collect::<Vec<_>>()[1..],
        [260_000]
    );
}

/// spring-cloud-netflix#1822 in small: every instance lists only `a`, `gw-b` reads `b`; `a`
/// crashes at 200 s and svc-0 is stopped with kill -15 at 300 s, so its DELETE is refused and
/// `b` never hears of it. At the end (900 s: this test's observer does not wait) `b` still
/// lists svc-0: its copy, last renewed by `a`'s replicated heartbeat before 200.5 s, expired by
/// 380.5 s, but `b` lost every renew but gw-b's own 2 a minute (nothing else lists `b`)
/// against a threshold of (int)((1 + 22) x 2 x 0.85) = 39 (`openForTraffic`'s count 1, then 20
/// instances and 2 gateways registered, each expected to renew twice a minute), so
/// self-preservation blocks every eviction run from 260 s on: the 8 or 9 runs of [400 s,
/// 900 s) all are. That is the reason reported. The crashed `a` is down: what its frozen
/// registry would say (svc-0 expired, its renews last counted above the threshold: "eviction
/// pending") is not asked.
#[test]
fn a_crashed_peer_is_not_asked_why_an_instance_is_still_listed() {
    let s = with_fault(
        two_peers(KILL15, &[]),
        200_000,
        FaultKind::Crash {
            peer: 0,
            vanishes: false,
        },
    );
    let p = process(&s, "svc-0");
    for seed in 1..3 {
        let (log, _) = record(&s, seed);
        let still: Vec<_> = log
            .iter()
            .filter_map(|(_, o)| match o {
                Observation::StillListed { process, holding } if *process == p => Some(*holding),
                _ => None,
            })
            .collect();
        assert_eq!(still, [Holding::SelfPreservation], "seed {seed}");
        let gates: Vec<(u64, i64)> = log
            .iter()
            .filter_map(|(t, o)| match o {
                Observation::EvictionRun {
                    server,
                    gated,
                    renews_last_min,
                    threshold,
                    ..
                } if *server == ServerId(1) && t.ms() >= 400_000 => {
                    assert!(gated, "seed {seed}: b's run at {t:?} is blocked");
                    Some((*renews_last_min, *threshold))
                }
                _ => None,
            })
            .collect();
        assert!((8..=9).contains(&gates.len()), "seed {seed}: {gates:?}");
        assert!(
            gates.iter().all(|&g| g == (2, 39)),
            "seed {seed}: {gates:?}"
        );
    }
}

/// A restarted peer serves its readers what its new incarnation holds. `b` is down from 200 s
/// to 260 s and comes back empty; `a`'s requeued heartbeats refill it by 261.125 s (T3), and
/// svc-0 is killed at 300 s. `gw-b`, whose cache kept svc-0 while `b` was down, reads `b` by
/// deltas. Whether the new `b` ever serves `GET /apps` depends on the trial: a reconcile
/// mismatch makes `gw-b` fetch it in full, and `gw-b`'s own registration, which only its next
/// heartbeat restores (404, then a register), makes its first delta after the restart
/// mismatch unless that heartbeat came first; without it (`register-with-eureka = false`)
/// only a delta read before the refill would. Either way `b` serves svc-0 again (after
/// `go_down`'s drop at 200 s): from `gw-b`'s first read after 260 s, which comes within one
/// fetch interval (30 s), or, if that read came before the refill, from the next fill tick
/// (30 s apart): by 291.125 s. And its readers learn of the kill when `b`'s read-only level
/// takes the payload without it: at the first fill tick after `b`'s eviction of svc-0, a
/// wall-clock multiple of 30 s (no timer lateness here), whichever key (`ALL_APPS`,
/// `ALL_APPS_DELTA`) was read. Before, a `b` read by deltas only never served svc-0 again.
#[test]
fn a_restarted_peer_serves_from_its_new_incarnation() {
    let down = FaultKind::ServerRestart {
        peer: 1,
        down_ms: 60_000,
    };
    let b = ServerId(1);
    let (mut full, mut deltas_only) = (0, 0);
    for quiet in [
        &[][..],
        &["caller.gw-b.eureka.client.register-with-eureka=false"],
    ] {
        let s = with_fault(two_peers(KILL9, quiet), 200_000, down.clone());
        let p = process(&s, "svc-0");
        for seed in 1..5 {
            let (log, epoch) = record(&s, seed);
            let served: Vec<(u64, bool)> = log
                .iter()
                .filter_map(|(t, o)| match o {
                    Observation::Served {
                        server,
                        process,
                        up,
                    } if *server == b && *process == p && t.ms() >= 200_000 => Some((t.ms(), *up)),
                    _ => None,
                })
                .collect();
            let evicted = times(&log, |o| {
                *o == Observation::Evicted {
                    server: b,
                    process: p,
                }
            });
            let evicted = evicted.first().expect("b evicts svc-0").ms();
            let fill = (epoch + evicted) / 30_000 * 30_000 + 30_000 - epoch;
            let (back, gone) = match served.as_slice() {
                [(200_000, false), (back, true), (gone, false)] => (*back, *gone),
                other => panic!("seed {seed}: b served {other:?}"),
            };
            assert!((260_000..=291_125).contains(&back), "seed {seed}: {back}");
            assert_eq!(gone, fill, "seed {seed}: evicted at {evicted}");
            let read_in_full = log.iter().any(|(t, o)| {
                t.ms() > 260_000
                    && matches!(o, Observation::Fetched { server, delta: false, .. } if *server == b)
            });
            if read_in_full {
                full += 1;
            } else {
                deltas_only += 1;
            }
        }
    }
    assert!(full > 0 && deltas_only > 0, "{full} / {deltas_only}");
}

/// Netflix/eureka#1490 (the bundled incident), trial 35: peer b restarts empty at 220 s;
/// gateway-3's delta from it leaves the local reconcile hash UP_23_ (its 20 svc instances and
/// 3 gateways) against b's UP_n_ (n < 23: b has not yet got every registration back), so it
/// fetches b's full registry, which lacks 23 - n of them. That fetch changed the cache and
/// tells each of the 23 - n drops (the trial's streams since the fetches got their own give n = 20; before,
/// 15). Before, it compared
/// payload versions only: b's new incarnation numbers its payloads from 0 again, as the old
/// one did, so an equal number hid a different registry ("changed": false, no drop told).
#[test]
fn a_full_fetch_of_a_partial_registry_tells_what_it_dropped() {
    let s = crate::scenario::fixture::bundled(
        "incidents/eureka-1490-restarted-peer-partial-registry",
        &[],
    );
    let seed = crate::engine::trial_seed(s.simulation.seed, 35);
    let gw = process(&s, "gateway-3");
    let (log, _) = World::with_mode(&s, seed, Vec::new(), RequestMode::Batched).run();
    let mismatch = log
        .iter()
        .find_map(|(t, o)| match o {
            Observation::ReconcileMismatch { observer, hashes } if *observer == gw => {
                Some((*t, hashes.local.clone(), hashes.server.clone()))
            }
            _ => None,
        })
        .expect("a reconcile mismatch");
    // `UP_<n>_`: n instances UP (the reconcile hash of a registry where every one is UP).
    let up = |hash: &str| -> usize {
        let n = hash.strip_prefix("UP_").and_then(|h| h.strip_suffix('_'));
        n.and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("hash {hash}"))
    };
    let (local, server) = (up(&mismatch.1), up(&mismatch.2));
    assert_eq!(local, 23, "its 20 svc instances and 3 gateways");
    assert!(server < local, "b lacks some: {server}");
    let (at, changed) = log
        .iter()
        .find_map(|(t, o)| match o {
            Observation::Fetched {
                server,
                observer,
                changed,
                delta: false,
            } if *observer == gw && *t >= mismatch.0 => {
                assert_eq!(*server, ServerId(1), "from b");
                Some((*t, *changed))
            }
            _ => None,
        })
        .expect("the full fetch");
    assert!(changed, "at {at:?}");
    let dropped = log
        .iter()
        .filter(|(t, o)| {
            *t == at
                && matches!(o, Observation::ClientCache { observer, up: false, .. }
                    if *observer == gw)
        })
        .count();
    assert_eq!(dropped, local - server);
}

/// Peers `a`, `b`, `c` in one zone on 2025.1, the gateway reading any of them; the peer
/// `paused` pauses from 400 s for 300 s. (instant, server) of each of the gateway's fetches.
fn gateway_fetches(seed: u64, paused: Option<usize>, overrides: &[&str]) -> Vec<(u64, usize)> {
    let text = "[[peer]]\nname = \"a\"\n[[peer]]\nname = \"b\"\n[[peer]]\nname = \"c\"\n";
    let mut all = vec!["simulation.release=2025.1"];
    all.extend_from_slice(overrides);
    let mut s = scenario(text, &all);
    if let Some(k) = paused {
        let pause = FaultKind::Pause {
            target: FaultSide::Peer(k),
            for_ms: 300_000,
        };
        s = with_fault(s, 400_000, pause);
    }
    let gw = process(&s, "gateway");
    record_every_fetch(&s, seed)
        .iter()
        .filter_map(|(t, o)| match o {
            Observation::Fetched {
                server, observer, ..
            } if *observer == gw => Some((t.ms(), server.index())),
            _ => None,
        })
        .collect()
}

/// From 2022.0 the Eureka client's calls have a 180 s socket timeout
/// (`RestTemplateTimeoutProperties` 4.0-4.3, `TimeoutProperties` 5.0; FACTS.md §15). The
/// gateway's query stack sticks to P, the peer that answered its last fetch before 400 s, at
/// f0; P pauses at 400 s for 300 s. The next fetch leaves at t_f = f0 + 30 s (the refresh
/// re-arms one interval after a run ends), reaches P one latency later and hangs.
/// `TimedSupervisorTask` gives up on the run at t_f + 30 s, but the body runs on (its
/// interrupt does not end a blocking socket read) until the read times out, one latency + the
/// timeout T after t_f. `RetryableEurekaHttpClient#execute` then drops the sticky client
/// without quarantining it and tries the first candidate of the current order
/// (`getHostCandidates`: the resolver's order minus the quarantine, empty so far), P itself
/// with probability 1/3 (the order is re-shuffled every 300 s from 1.10.14). The first fetch
/// after f0 is then:
/// - T = 180 s: from another peer at t_f + 180 s + 3 latencies (long before the pause ends at
///   700 s); or, if P was tried again (its read cannot time out before the pause ends), from
///   another peer at t_f + 270 s + 3 latencies: the run begun at t_f + 90 s (the 60 s back-off
///   after the first timeout) still went to P, sticky until the first body's read failed, and
///   its read fails in turn; or else P's answer when the pause ends.
/// - T = 5 s (`eureka.client.timeout.socket-timeout = 5000`): from another peer at t_f + 5 s +
///   3 latencies; or, if P was tried again, its second read times out too, P is quarantined
///   and the third attempt goes elsewhere: t_f + 2 (5 s + a latency) + 2 latencies. Either
///   way within one fetch interval and 10 s of the pause's start.
///
/// Without any read timeout (the model before 2022.0's timeouts) every fetch would wait for the
/// pause's end.
#[test]
fn a_paused_server_is_given_up_at_the_socket_timeout() {
    let short = ["clients.eureka.client.timeout.socket-timeout=5000"];
    let mut moved_at_first_timeout = [0u32; 2];
    for seed in 1..=24 {
        for (row, (overrides, timeout)) in [(&[][..], 180_000u64), (&short[..], 5_000)]
            .into_iter()
            .enumerate()
        {
            let last_before = |fetches: &[(u64, usize)]| {
                *fetches
                    .iter()
                    .rev()
                    .find(|(t, _)| *t < 400_000)
                    .expect("fetched before 400 s")
            };
            let (f0, sticky) = last_before(&gateway_fetches(seed, None, overrides));
            let fetches = gateway_fetches(seed, Some(sticky), overrides);
            assert_eq!(last_before(&fetches), (f0, sticky), "seed {seed}");
            let t_f = f0 + 30_000;
            assert!(t_f >= 400_000, "seed {seed}: {f0}");
            let (at, server) = *fetches
                .iter()
                .find(|(t, _)| *t > f0)
                .expect("fetched after the pause began");
            let first = t_f + timeout + 3 * LAT;
            let allowed = if timeout == 180_000 {
                at == first
                    || (at == t_f + 270_000 + 3 * LAT && server != sticky)
                    || (at > 700_000 && server == sticky)
            } else {
                at == first || at == t_f + 2 * (timeout + LAT) + 2 * LAT
            };
            assert!(
                allowed,
                "seed {seed}, {timeout}: ({at}, {server}) t_f {t_f}"
            );
            if at == first {
                assert_ne!(server, sticky);
                moved_at_first_timeout[row] += 1;
            }
        }
    }
    // Another peer first in a fresh order of three: 2/3 of the seeds (16 of 24 expected;
    // fewer than 8 has a probability of about 0.1 %).
    for count in moved_at_first_timeout {
        assert!(count >= 8, "{moved_at_first_timeout:?}");
    }
}

/// Peers `a` (zone z1) and `b` (z3); svc's three instances in z1; the gateway in z2, reading
/// `a` first and `b` after it (`service-url.z2 = a`, `service-url.z3 = b`: own zone first, no
/// shuffle), not registering; zone z1 goes down at 300 s, its hosts vanishing (the default) or
/// staying (`host = "stays"`). Self-preservation off, so that `b` evicts the lost instances.
fn zone_outage_world(release: &str, host: &str) -> Scenario {
    let text = format!(
        r#"
[[peer]]
name = "a"
zone = "z1"
[[peer]]
name = "b"
zone = "z3"
[[shutdown]]
zone = "z1"
at-s = 300
strategy = "kill-9"
{host}
"#
    );
    scenario(
        &text,
        &[
            &format!("simulation.release={release}"),
            "app.svc.instances=3",
            "app.svc.eureka.client.availability-zones.us-east-1=z1",
            "caller.gateway.eureka.client.register-with-eureka=false",
            "server.eureka.server.enable-self-preservation=false",
            "caller.gateway.eureka.client.availability-zones.us-east-1=z2,z3",
            "caller.gateway.eureka.client.service-url.z2=a",
            "caller.gateway.eureka.client.service-url.z3=b",
        ],
    )
}

/// The gateway's failed attempts (instant, why) and fetches (instant, server) from 300 s on,
/// and the instants its Eureka cache dropped each svc instance.
fn gateway_after_outage(s: &Scenario, seed: u64) -> (Vec<(u64, Unanswered)>, Vec<u64>, Vec<u64>) {
    let gw = process(s, "gateway");
    let (log, _) = record(s, seed);
    let (mut failed, mut fetched, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
    for (t, o) in log.iter().filter(|(t, _)| t.ms() >= 300_000) {
        match o {
            Observation::AttemptFailed { observer, why, .. } if *observer == gw => {
                failed.push((t.ms(), *why))
            }
            Observation::Fetched {
                observer, server, ..
            } if *observer == gw => {
                assert_eq!(server.index(), 1, "only b answers after the outage");
                fetched.push(t.ms());
            }
            Observation::ClientCache {
                observer,
                up: false,
                ..
            } if *observer == gw => dropped.push(t.ms()),
            _ => {}
        }
    }
    (failed, fetched, dropped)
}

/// A vanished zone against a refusing one (FACTS.md §15), Hoxton (Jersey: connect timeout
/// C = 5 s). The gateway's first fetch after the outage, at t_f, goes to its sticky `a`:
/// refused after a round trip (2 latencies), or unanswered until C. `RetryableEurekaHttpClient`
/// drops the sticky client without quarantining it, so the second attempt is `a` again (the
/// first of the order), which fails alike and is quarantined; the third goes to `b`, answered
/// after a round trip. So the attempts fail at t_f + 2L, t_f + 4L (refused) or t_f + C,
/// t_f + 2C (vanished), and the fetch lands at t_f + 6L or t_f + 2C + 2L: Δ = 2C - 4L = 9 980 ms
/// later. Every later fetch follows one interval after the run's end, so the whole fetch grid
/// after the outage is shifted by exactly Δ. The gateway's cache drops an instance at the
/// first fetch after `b` serves it as gone (an instant the gateway does not move), so against
/// the refusing form it drops it Δ later, or P - Δ earlier when a fetch of the refusing grid
/// fell in the Δ before that instant (P = 30 s + 2L, the fetch period): the mean exposure
/// does not move (Δ (1 - Δ/P) - (P - Δ) Δ/P = 0). What does cost more is each request the
/// gateway sends a vanished instance meanwhile: Ribbon's ConnectTimeout (1 s), which the
/// refusing form does not have.
#[test]
fn a_vanished_zone_costs_connect_timeouts_where_a_refusing_one_does_not() {
    let c = 5_000;
    let delta = 2 * c - 4 * LAT;
    let period = 30_000 + 2 * LAT;
    for seed in 1..4 {
        let refusing = zone_outage_world("Hoxton", "host = \"stays\"");
        let vanished = zone_outage_world("Hoxton", "");
        let (r_failed, r_fetched, r_dropped) = gateway_after_outage(&refusing, seed);
        let (v_failed, v_fetched, v_dropped) = gateway_after_outage(&vanished, seed);
        let t_f = r_failed[0].0 - 2 * LAT;
        assert_eq!(
            r_failed[..2],
            [
                (t_f + 2 * LAT, Unanswered::Refused),
                (t_f + 4 * LAT, Unanswered::Refused)
            ],
            "seed {seed}"
        );
        assert_eq!(
            v_failed[..2],
            [
                (t_f + c, Unanswered::ConnectTimeout),
                (t_f + 2 * c, Unanswered::ConnectTimeout)
            ],
            "seed {seed}"
        );
        assert_eq!(r_fetched[0], t_f + 6 * LAT);
        assert_eq!(v_fetched[0], t_f + 2 * c + 2 * LAT);
        // Until a new session (10-30 min) starts on `a` again and pays once more.
        let until = [&r_failed, &v_failed]
            .iter()
            .filter_map(|f| f.get(2).map(|x| x.0))
            .min()
            .unwrap_or(u64::MAX);
        let mut compared = 0;
        for (v, r) in v_fetched.iter().zip(&r_fetched) {
            if *v >= until {
                break;
            }
            assert_eq!(*v, r + delta, "seed {seed}");
            compared += 1;
        }
        assert!(compared >= 5, "seed {seed}: {compared}");
        assert_eq!(r_dropped.len(), 3);
        assert_eq!(v_dropped.len(), 3);
        for (v, r) in v_dropped
            .iter()
            .zip(&r_dropped)
            .filter(|(v, _)| **v < until)
        {
            assert!(
                *v == r + delta || *v + (period - delta) == *r,
                "seed {seed}: dropped at {v} against {r}"
            );
        }
    }
}
