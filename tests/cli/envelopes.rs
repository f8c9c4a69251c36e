//! The timing envelopes of each bundled scenario, derived from the rules in
//! shared/eureka/FACTS.md and checked on every row of trials.csv.
//!
//! Notation as in FACTS.md §13: every removal is measured in ms from the moment the instance
//! stopped serving (`t_stop_ms`), and the news travels registry -> read-only response cache (next
//! cache tick) -> the caller's Eureka cache (next fetch) -> the caller's Ribbon list (next poll).

use super::csv_files::TrialRow;
use super::invariant_trials;
use super::test::Test;

/// What request times can add to a bound: the bundled scenarios use the default network
/// (1 ms + up to 4 ms jitter each way, so at most 10 ms a round trip), and a stage involves at
/// most a few requests (a fetch and, after a delta whose hash disagrees, a full fetch).
pub const SLACK_MS: i64 = 100;

const S: i64 = 1_000;

fn run(name: &str, sets: &[&str]) -> Vec<TrialRow> {
    run_n(name, sets, invariant_trials())
}

fn run_n(name: &str, sets: &[&str], trials: u32) -> Vec<TrialRow> {
    let mut test = Test::scenario(name).trials(trials);
    for set in sets {
        test = test.set(set);
    }
    let rows = test.run().trials();
    assert_eq!(rows.len() as u32, trials);
    rows
}

fn within(value: Option<i64>, low: i64, high: i64, what: &str, row: &TrialRow) {
    let v = value.unwrap_or_else(|| panic!("{what} is empty in {row:#?}"));
    assert!(
        (low..=high).contains(&v),
        "{what} = {v} is outside [{low}, {high}] in {row:#?}"
    );
}

/// The periods of the three caches after the registry, in ms.
struct Periods {
    /// eureka.server.response-cache-update-interval-ms (FACTS.md §3).
    cache: i64,
    /// eureka.client.registry-fetch-interval-seconds (FACTS.md §5.1).
    fetch: i64,
    /// ribbon.ServerListRefreshInterval (FACTS.md §8).
    ribbon: i64,
}

const DEFAULT_PERIODS: Periods = Periods {
    cache: 30 * S,
    fetch: 30 * S,
    ribbon: 30 * S,
};

/// The news passes the stages in order, and waits at most one period at each:
/// - read-only cache: the next tick of a fixed-delay timer (FACTS.md §3), at most `cache` after
///   the registry changed;
/// - caller's Eureka cache: the first fetch whose request arrives after that tick; fetches are
///   fixed-delay from the end of the previous one (§5.2), so at most `fetch` plus request times;
/// - Ribbon: the next poll of `PollingServerListUpdater` (fixed-delay, reads the local cache
///   without a request, §8), so at most `ribbon` exactly.
///
/// Exposure is how long the stopped instance stayed in a Ribbon list: the Ribbon removal, or 0
/// if every list had dropped it before it stopped.
fn assert_stages(r: &TrialRow, p: &Periods) {
    let server = r.server_removed_ms.expect("server_removed_ms");
    let readonly = r.readonly_removed_ms.expect("readonly_removed_ms");
    let client = r.client_removed_ms.expect("client_removed_ms");
    let ribbon = r.ribbon_removed_ms.expect("ribbon_removed_ms");
    assert!(
        server <= readonly && readonly <= client && client <= ribbon,
        "stages out of order in {r:#?}"
    );
    assert!(
        readonly - server <= p.cache,
        "read-only cache lag in {r:#?}"
    );
    assert!(
        client - readonly <= p.fetch + SLACK_MS,
        "fetch lag in {r:#?}"
    );
    assert!(client + p.ribbon >= ribbon, "Ribbon lag in {r:#?}");
    assert_eq!(r.exposure_ms, Some(ribbon.max(0)), "exposure in {r:#?}");
    // A dead hit is a request sent to the stopped instance: only while a list still has it.
    if let Some(last) = r.last_dead_hit_ms {
        assert!(
            r.dead_hits > 0 && (0..=ribbon).contains(&last),
            "last dead hit in {r:#?}"
        );
    } else {
        assert_eq!(r.dead_hits, 0, "dead hits without a last one in {r:#?}");
    }
}

/// kill -9 with expiration enabled (FACTS.md §13): the last renew r reached the server in the
/// 30 s (plus a request) before the kill; the lease is expirable after r + 2 x 90 s (§1,
/// Consequence A), evicted at the next 60 s eviction tick (§2.1), then the three 30 s caches.
/// So the registry drops it within [150 s, 240 s] and callers within [150 s, 330 s].
fn assert_kill_9_envelope(rows: &[TrialRow], at_s: u64) {
    for r in rows {
        assert_eq!(r.strategy, "kill-9");
        assert_eq!(r.t_stop_ms, Some(at_s * 1_000), "kill -9 stops at once");
        within(
            r.server_removed_ms,
            150 * S - SLACK_MS,
            240 * S + SLACK_MS,
            "server_removed_ms",
            r,
        );
        within(
            r.exposure_ms,
            150 * S - SLACK_MS,
            330 * S + 1_000,
            "exposure_ms",
            r,
        );
        assert_stages(r, &DEFAULT_PERIODS);
        // 20 requests/s spread over the instances by round robin: minutes of exposure mean hits.
        assert!(r.dead_hits > 0, "no dead hits in {r:#?}");
        // The callers are each train's Zuul, which does not retry (zuul.retryable = false, no
        // spring-retry; FACTS.md §14): every refused request is an error.
        assert_eq!(r.errors, r.dead_hits, "{r:#?}");
    }
    // The mean: heartbeat phase ~U(0, 30 s] before the kill, then +180 s, eviction wait
    // ~U(0, 60 s], and three ~U(0, 30 s] waits: 165 + 30 + 15 + 15 + 15 = 240 s (FACTS.md §13),
    // standard deviation sqrt(75 + 300 + 3 * 75) ~ 24.5 s per trial. Six standard errors.
    let n = rows.len() as f64;
    let mean = rows
        .iter()
        .map(|r| r.exposure_ms.unwrap() as f64)
        .sum::<f64>()
        / n;
    let tolerance = 6.0 * 24_500.0 / n.sqrt();
    assert!(
        (mean - 240_000.0).abs() <= tolerance,
        "mean exposure {mean} ms, expected 240 s +- {tolerance} ms"
    );
}

#[test]
fn kill_9_at_defaults_stays_in_the_derived_envelope() {
    assert_kill_9_envelope(&run("kill-9.toml", &[]), 300);
}

/// The lease arithmetic is the same in every Eureka version (FACTS.md §0.2, last line), and
/// with one kill in a 21-client fleet no version's threshold rule engages self-preservation.
/// (Hoxton, the file's own train, is the test above; fewer trials per train here.)
#[test]
fn kill_9_envelope_holds_on_every_ribbon_train() {
    let trials = invariant_trials().div_ceil(3);
    for train in ["Dalston", "Edgware", "Finchley", "Greenwich"] {
        let rows = run_n(
            "kill-9.toml",
            &[&format!("simulation.release={train}")],
            trials,
        );
        assert_kill_9_envelope(&rows, 300);
    }
}

/// Without retries (POST, OkToRetryOnAllOperations = false, FACTS.md §8) every request that
/// Ribbon sends to the dead instance fails.
#[test]
fn kill_9_without_retries_every_dead_hit_is_an_error() {
    let rows = run("kill-9.toml", &["caller[0].method=POST"]);
    for r in &rows {
        assert!(r.dead_hits > 0);
        assert_eq!(r.errors, r.dead_hits, "{r:#?}");
    }
}

/// kill -15 on Edgware and later (FACTS.md §7): ContextClosedEvent sets DOWN, which goes out as
/// a register within one request, and the web server stops at once; callers drop it within
/// read-only cache + fetch + Ribbon <= 90 s (§13, "Graceful").
#[test]
fn kill_15_sends_down_at_once_and_callers_follow_within_90_s() {
    for r in &run("kill-15.toml", &[]) {
        within(
            r.t_stop_ms.map(|t| t as i64),
            300 * S,
            300 * S + SLACK_MS,
            "t_stop_ms",
            r,
        );
        within(r.server_removed_ms, 0, SLACK_MS, "server_removed_ms", r);
        within(r.exposure_ms, 0, 90 * S + SLACK_MS, "exposure_ms", r);
        assert_stages(r, &DEFAULT_PERIODS);
        // Zuul without retry (FACTS.md §14): every refused request is an error.
        assert_eq!(r.errors, r.dead_hits, "{r:#?}");
    }
}

/// Dalston (FACTS.md §7): DOWN and then, on the same thread, the client's shutdown and its
/// DELETE, before the web server stops. Whichever of the two arrives last, the registry no
/// longer lists the instance as UP within a request of the stop, and the same 90 s tail follows.
#[test]
fn kill_15_on_dalston_leaves_the_registry_before_the_stop() {
    for r in &run("kill-15.toml", &["simulation.release=Dalston"]) {
        within(
            r.server_removed_ms,
            -SLACK_MS,
            SLACK_MS,
            "server_removed_ms",
            r,
        );
        within(r.exposure_ms, 0, 90 * S + SLACK_MS, "exposure_ms", r);
        assert_stages(r, &DEFAULT_PERIODS);
    }
}

/// How long after the final kill-15 the web server stops: at once on Spring Boot 2.3+ (the
/// default Hoxton.SR12 of service-registry.toml); on Boot 2.2 (pause.toml's Hoxton.SR4) only in
/// `onClose`, after bean destruction: the 5–50 ms lifecycle stop, the replicator's stop (up to
/// its 3 s `awaitTermination`, less when its periodic run falls due sooner) and the DELETE's
/// round trip (FACTS.md §5.6, §14).
fn stop_lag_ms(name: &str) -> (i64, i64) {
    if name == "pause.toml" {
        (5, 3_050 + SLACK_MS)
    } else {
        (0, SLACK_MS)
    }
}

/// pause / service-registry with wait-s = 90 (FACTS.md §7): the registry learns DOWN (pause)
/// or OUT_OF_SERVICE (PUT status override) within a request of the start, and the process stops
/// 90 s later (plus [`stop_lag_ms`]); so the registry removal is that long before the stop, and
/// the callers' lists follow within 90 s plus request times, i.e. around the stop.
fn assert_announced_90_s_ahead(name: &str) {
    let (lag_lo, lag_hi) = stop_lag_ms(name);
    for r in &run(name, &[]) {
        within(
            r.t_stop_ms.map(|t| t as i64),
            390 * S + lag_lo,
            390 * S + lag_hi,
            "t_stop_ms",
            r,
        );
        within(
            r.server_removed_ms,
            -90 * S - lag_hi - SLACK_MS,
            -90 * S - lag_lo + SLACK_MS,
            "server_removed_ms",
            r,
        );
        assert_stages(r, &DEFAULT_PERIODS);
        within(r.exposure_ms, 0, 2 * SLACK_MS, "exposure_ms", r);
    }
}

/// With wait-s = 120, longer than 90 s of caches plus request times, every caller has dropped
/// the instance before it stops: nothing reaches it after it stopped.
fn assert_no_exposure_with_wait_120(name: &str) {
    let (lag_lo, lag_hi) = stop_lag_ms(name);
    for r in &run(name, &["shutdown[0].wait-s=120"]) {
        within(
            r.server_removed_ms,
            -120 * S - lag_hi - SLACK_MS,
            -120 * S - lag_lo + SLACK_MS,
            "server_removed_ms",
            r,
        );
        assert_stages(r, &DEFAULT_PERIODS);
        within(r.ribbon_removed_ms, i64::MIN, -1, "ribbon_removed_ms", r);
        assert_eq!(r.exposure_ms, Some(0), "{r:#?}");
        assert_eq!(r.dead_hits, 0, "{r:#?}");
        assert_eq!(r.last_dead_hit_ms, None, "{r:#?}");
        assert_eq!(r.errors, 0, "{r:#?}");
    }
}

#[test]
fn pause_announces_down_90_s_ahead() {
    assert_announced_90_s_ahead("pause.toml");
}

#[test]
fn pause_with_wait_120_has_no_exposure() {
    assert_no_exposure_with_wait_120("pause.toml");
}

#[test]
fn service_registry_announces_out_of_service_90_s_ahead() {
    assert_announced_90_s_ahead("service-registry.toml");
}

#[test]
fn service_registry_with_wait_120_has_no_exposure() {
    assert_no_exposure_with_wait_120("service-registry.toml");
}

/// tuned-5s.toml: OUT_OF_SERVICE 15 s ahead with 5 s caches (FACTS.md §3, §5.1, §8).
#[test]
fn tuned_5s_caches_lag_at_most_5_s_each() {
    let tuned = Periods {
        cache: 5 * S,
        fetch: 5 * S,
        ribbon: 5 * S,
    };
    for r in &run("tuned-5s.toml", &[]) {
        assert_eq!(r.strategy, "service-registry");
        within(
            r.server_removed_ms,
            -15 * S - SLACK_MS,
            -15 * S + SLACK_MS,
            "server_removed_ms",
            r,
        );
        assert_stages(r, &tuned);
        within(r.exposure_ms, 0, 2 * SLACK_MS, "exposure_ms", r);
    }
    // The file's own advice: 16 s covers 5 + 5 + 5 s plus request times.
    for r in &run("tuned-5s.toml", &["shutdown[0].wait-s=16"]) {
        assert_stages(r, &tuned);
        assert_eq!(r.exposure_ms, Some(0), "{r:#?}");
        assert_eq!(r.dead_hits, 0, "{r:#?}");
    }
}

/// self-preservation.toml (FACTS.md §2.5 worked example): 5 instances + 1 gateway give
/// expected = 7 and threshold floor(7 x 2 x 0.85) = 11; after the kill 10 renews a minute do not
/// exceed it, expiration stays disabled and the lease is never evicted: every trial waits to its
/// cap (a day after the kill), unresolved with the reason `self_preservation`, and the gateway
/// keeps hitting the dead instance until then.
#[test]
fn self_preservation_never_evicts() {
    let out = Test::scenario("self-preservation.toml")
        .trials(invariant_trials())
        .run();
    let rows = out.trials();
    let doc: toml_edit::DocumentMut = super::test::bundled_text("self-preservation.toml")
        .parse()
        .expect("valid TOML");
    let at_ms = doc["shutdown"][0]["at-s"].as_integer().unwrap() * S;
    let end_ms = at_ms + 86_400 * S;
    for r in &rows {
        assert_eq!(r.unresolved_reason, "self_preservation", "{r:#?}");
        assert_eq!(r.trial_end_ms as i64, end_ms, "{r:#?}");
        assert_eq!(r.exposure_ms, None, "{r:#?}");
        assert_eq!(r.server_removed_ms, None, "{r:#?}");
        assert_eq!(r.readonly_removed_ms, None, "{r:#?}");
        assert_eq!(r.client_removed_ms, None, "{r:#?}");
        assert_eq!(r.ribbon_removed_ms, None, "{r:#?}");
        assert!(r.dead_hits > 0, "{r:#?}");
        // Still hit in the trial's last minute (even a tripped Ribbon circuit breaker lets a
        // request through every 30 s at most, FACTS.md §8).
        within(
            r.last_dead_hit_ms,
            end_ms - at_ms - 60 * S,
            end_ms - at_ms,
            "last_dead_hit_ms",
            r,
        );
    }
    let summary = out.summary();
    let exposure = summary
        .iter()
        .find(|s| s.metric == "exposure_ms")
        .expect("an exposure_ms row");
    assert_eq!(exposure.trials, u64::from(invariant_trials()));
    assert_eq!(exposure.unresolved, exposure.trials);
    assert_eq!(
        (exposure.min, exposure.max, exposure.mean),
        (None, None, None)
    );
}

/// The remedy in the file's comment: 20 instances + 1 gateway give expected 22, threshold
/// floor(1.7 x 22) = 37 and 40 renews a minute after one kill, so expiration stays enabled and
/// the kill -9 resolves in every trial, within the kill -9 envelope.
#[test]
fn self_preservation_with_20_instances_resolves() {
    let rows = run("self-preservation.toml", &["app[0].instances=20"]);
    assert!(rows.iter().all(|r| r.exposure_ms.is_some()));
    assert_kill_9_envelope(&rows, 300);
}

/// FACTS.md §9 with §3 and §5.5: on Spring Cloud LoadBalancer (`loadbalancer.toml`, 2020.0) a
/// kill -15's exposure is bounded by one read-only tick, one fetch and the 35 s cache TTL after
/// the DELETE (which follows the stop within the replicator's 3 s), and the OUT_OF_SERVICE drain
/// with a 96 s wait (the closed form) has no dead hit.
#[test]
fn loadbalancer_graceful_exposure_is_within_tick_fetch_and_ttl() {
    let rows = Test::scenario("loadbalancer.toml")
        .trials(invariant_trials())
        .run()
        .trials();
    assert_eq!(
        rows.len() as u32,
        2 * invariant_trials(),
        "two shutdowns per trial"
    );
    for row in rows {
        let ttl_bound = (30 + 30 + 35 + 3) * S + SLACK_MS;
        if row.instance == "svc-0" {
            within(row.exposure_ms, 0, ttl_bound, "exposure_ms", &row);
        } else {
            assert_eq!(row.dead_hits, 0, "{row:#?}");
        }
    }
}

/// From spring-cloud-commons 2.2.7 /pause no longer touches Eureka (FACTS.md §7): `recommend`
/// says no wait makes it clean instead of measuring one.
#[test]
fn recommend_refuses_a_pause_that_does_not_deregister() {
    Test::new()
        .copy_bundled("loadbalancer.toml")
        .args([
            "recommend",
            "loadbalancer.toml",
            "--trials",
            "20",
            "--no-what-if",
        ])
        .stdout_contains("/pause no longer deregisters")
        .stdout_contains("LoadBalancer cache TTL 35.000 s")
        .run();
}
