//! Ribbon's per-server circuit breaker and the availability filter that reads it (FACTS.md §8).
//!
//! Every load balancer keeps a `ServerStats` per server (`LoadBalancerStats`). A refused
//! connection (`ConnectException`, a `SocketException`) counts as a circuit-tripping failure; any
//! response clears the count. From `connectionFailureCountThreshold` successive failures on, the
//! server is "tripped" for a blackout after its last failure, and `ZoneAvoidanceRule`'s
//! `AvailabilityPredicate` leaves it out of the round robin. When every server is tripped, the
//! rule's last fallback (`alwaysTrue`) keeps them all, so requests still reach a tripped server.

use crate::scenario::{CallPolicy, RibbonConfig};

use crate::eureka::ids::ProcessId;

/// The breaker's settings, from `niws.loadbalancer.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitBreaker {
    /// `niws.loadbalancer.availabilityFilteringRule.filterCircuitTripped` (true): whether the
    /// availability filter skips tripped servers at all.
    pub enabled: bool,
    /// `connectionFailureCountThreshold` (3).
    pub threshold: u32,
    /// `circuitTripTimeoutFactorSeconds` (10).
    pub factor_s: u64,
    /// `circuitTripMaxTimeoutSeconds` (30).
    pub max_s: u64,
    /// Failures recorded per refused attempt ([`CallPolicy::failures_per_refusal`]): 1, or 2
    /// for a RestTemplate with spring-retry (`RibbonLoadBalancerClient#execute` and
    /// `RibbonLoadBalancedRetryPolicy#registerThrowable` both record it, FACTS.md §14).
    pub failures_per_refusal: u32,
    /// How long after its send a refusal is stamped ([`CallPolicy::refusal_recorded_after_ms`]).
    pub refusal_recorded_after_ms: u64,
}

impl CircuitBreaker {
    /// The breaker of a route: off when the filter is off, or when the caller's stack records
    /// no failure at all (it only calls `choose`: a WebClient or Spring Cloud Gateway on
    /// Ribbon), since a count that never grows never trips.
    pub fn from_config(ribbon: &RibbonConfig, policy: &CallPolicy) -> CircuitBreaker {
        CircuitBreaker {
            enabled: ribbon.filter_circuit_tripped && policy.failures_per_refusal > 0,
            failures_per_refusal: policy.failures_per_refusal.max(1),
            refusal_recorded_after_ms: policy.refusal_recorded_after_ms,
            threshold: ribbon.connection_failure_count_threshold,
            factor_s: ribbon.circuit_trip_timeout_factor_s,
            max_s: ribbon.circuit_trip_max_timeout_s,
        }
    }

    /// `ServerStats#getCircuitBreakerBlackoutPeriod`: 0 below the threshold, else
    /// `min(2^min(failures - threshold, 16) * factor, max)` seconds, in ms.
    pub fn blackout_ms(&self, failures: u32) -> u64 {
        if failures < self.threshold {
            return 0;
        }
        let diff = (failures - self.threshold).min(16);
        ((1u64 << diff) * self.factor_s).min(self.max_s) * 1000
    }

    /// `ServerStats#getCircuitBreakerTimeout`: the instant the blackout ends, if there is one.
    pub fn tripped_until_ms(&self, stats: ServerStats) -> Option<u64> {
        let blackout = self.blackout_ms(stats.successive_failures);
        (self.enabled && blackout > 0).then(|| stats.last_failure_ms + blackout)
    }

    /// `ServerStats#isCircuitBreakerTripped(now)`: `timeout > now`, strictly.
    pub fn is_tripped(&self, stats: ServerStats, now_ms: u64) -> bool {
        self.tripped_until_ms(stats)
            .is_some_and(|until| until > now_ms)
    }
}

/// The breaker's part of `ServerStats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// `successiveConnectionFailureCount`.
    pub successive_failures: u32,
    /// `lastConnectionFailedTimestamp`, simulated ms.
    pub last_failure_ms: u64,
}

/// Every server's `ServerStats` in one load balancer, by process id (grown on first use; the
/// stats outlive list refreshes, as `LoadBalancerStats` keys them by server).
#[derive(Debug, Default, Clone)]
pub struct ServerStatsTable {
    stats: Vec<ServerStats>,
    /// How many servers have a non-zero failure count (none: the breaker cannot matter).
    failing: usize,
}

pub use crate::scenario::REFUSAL_RECORDED_AFTER_MS;

impl ServerStatsTable {
    pub fn get(&self, p: ProcessId) -> ServerStats {
        self.stats.get(p).copied().unwrap_or_default()
    }

    /// `ServerStats#incrementSuccessiveConnectionFailureCount`: one more failure, stamped now.
    pub fn note_failure(&mut self, p: ProcessId, now_ms: u64) {
        self.note_failures(p, 1, now_ms);
    }

    /// `count` failures, the last of them sent at `last_ms` (a batch of them at once), recorded
    /// [`REFUSAL_RECORDED_AFTER_MS`] later.
    pub fn note_failures(&mut self, p: ProcessId, count: u64, last_ms: u64) {
        self.note_failures_recorded_at(p, count, last_ms + REFUSAL_RECORDED_AFTER_MS);
    }

    /// `count` failures, the last of them recorded at `recorded_ms`.
    pub fn note_failures_recorded_at(&mut self, p: ProcessId, count: u64, recorded_ms: u64) {
        if count == 0 {
            return;
        }
        if self.stats.len() <= p {
            self.stats.resize(p + 1, ServerStats::default());
        }
        let s = &mut self.stats[p];
        if s.successive_failures == 0 {
            self.failing += 1;
        }
        s.successive_failures = s
            .successive_failures
            .saturating_add(count.min(u32::MAX as u64) as u32);
        s.last_failure_ms = recorded_ms;
    }

    /// `ServerStats#clearSuccessiveConnectionFailureCount`: a response came back.
    pub fn note_success(&mut self, p: ProcessId) {
        if let Some(s) = self.stats.get_mut(p)
            && s.successive_failures > 0
        {
            s.successive_failures = 0;
            self.failing -= 1;
        }
    }

    /// Whether any server has failures on record (none: the breaker cannot matter).
    pub fn any_failures(&self) -> bool {
        self.failing > 0
    }
}

/// `CompositePredicate#getEligibleServers` for `ZoneAvoidanceRule` in one zone: the servers that
/// are not tripped, or all of them when none is left (fallback `alwaysTrue`, since the fallback
/// `AvailabilityPredicate` alone gives the same empty list).
pub fn eligible_servers(
    breaker: &CircuitBreaker,
    stats: &ServerStatsTable,
    servers: &[ProcessId],
    now_ms: u64,
    out: &mut Vec<ProcessId>,
) {
    out.clear();
    out.extend(
        servers
            .iter()
            .copied()
            .filter(|&p| !breaker.is_tripped(stats.get(p), now_ms)),
    );
    if out.is_empty() {
        out.extend_from_slice(servers);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> CircuitBreaker {
        CircuitBreaker {
            enabled: true,
            threshold: 3,
            factor_s: 10,
            max_s: 30,
            failures_per_refusal: 1,
            refusal_recorded_after_ms: REFUSAL_RECORDED_AFTER_MS,
        }
    }

    /// `ServerStats#getCircuitBreakerBlackoutPeriod` at Ribbon's defaults (FACTS.md §8): 3
    /// failures 10 s, 4 failures 20 s, 5 or more 30 s; nothing below the threshold.
    #[test]
    fn blackout_doubles_from_the_threshold_up_to_the_max() {
        let b = defaults();
        let got: Vec<u64> = (0..=8).map(|f| b.blackout_ms(f)).collect();
        assert_eq!(
            got,
            [0, 0, 0, 10_000, 20_000, 30_000, 30_000, 30_000, 30_000]
        );
        // The exponent is capped at 16 so a huge count does not overflow.
        let wide = CircuitBreaker {
            max_s: u64::MAX / 1000,
            ..b
        };
        assert_eq!(wide.blackout_ms(1_000), (1u64 << 16) * 10_000);
    }

    /// The breaker of a route reads the called app's own keys: Ribbon's `ServerStats` of the
    /// client `svc` takes `niws.loadbalancer.svc.*` (`LoadBalancerStats#getCircuitTrippedTimeoutFactor`,
    /// Ribbon 2.3.0). With the factor at 1 s, three refusals at 0 ms black the server out until
    /// 1 ms + 1 s (not 10 s), a fourth for 2 s; a key for another app leaves the defaults.
    #[test]
    fn a_per_client_factor_sets_the_blackout_of_that_app_only() {
        let text = "[[app]]\nname = \"svc\"\n[[app]]\nname = \"db\"\n[[caller]]\nname = \"gw\"\n\
                    calls = [\"svc\", \"db\"]\nhttp-client = \"zuul\"\n\
                    niws.loadbalancer.svc.circuitTripTimeoutFactorSeconds = 1\n";
        let s = crate::scenario::parse_str(text, "s.toml", "s", &[]).unwrap();
        let gw = &s.callers[0];
        let breaker = |i: usize| {
            let target = &gw.calls[i];
            CircuitBreaker::from_config(&target.ribbon, &gw.policy(target, &s.simulation.release))
        };
        let (svc, db) = (breaker(0), breaker(1));
        assert!(svc.enabled && svc.failures_per_refusal == 1, "{svc:?}");
        let mut table = ServerStatsTable::default();
        table.note_failures(0, 3, 0);
        assert_eq!(svc.tripped_until_ms(table.get(0)), Some(1 + 1_000));
        assert!(svc.is_tripped(table.get(0), 1_000));
        assert!(!svc.is_tripped(table.get(0), 1_001));
        assert_eq!(svc.blackout_ms(4), 2_000);
        assert_eq!(db.tripped_until_ms(table.get(0)), Some(1 + 10_000));
    }

    /// `isCircuitBreakerTripped`: `lastConnectionFailedTimestamp + blackout > now`, strictly, the
    /// timestamp being the refusal's record ([`REFUSAL_RECORDED_AFTER_MS`] after the send).
    #[test]
    fn tripped_until_the_blackout_ends_exclusive() {
        let b = defaults();
        let mut table = ServerStatsTable::default();
        table.note_failure(7, 1_000);
        table.note_failure(7, 1_100);
        assert!(
            !b.is_tripped(table.get(7), 1_100),
            "two failures do not trip"
        );
        table.note_failure(7, 1_200);
        assert!(b.is_tripped(table.get(7), 1_200));
        // The third refusal, sent at 1 200 ms, is recorded at 1 201 ms: tripped until 11 201.
        assert!(b.is_tripped(table.get(7), 11_200));
        assert!(!b.is_tripped(table.get(7), 11_201));
        table.note_success(7);
        assert!(
            !b.is_tripped(table.get(7), 1_300),
            "a response clears the count"
        );
        let off = CircuitBreaker {
            enabled: false,
            ..b
        };
        table.note_failures(7, 5, 2_000);
        assert!(
            !off.is_tripped(table.get(7), 2_001),
            "filterCircuitTripped = false"
        );
    }

    /// `CompositePredicate` falls back to every server when all are tripped.
    #[test]
    fn all_tripped_falls_back_to_every_server() {
        let b = defaults();
        let mut table = ServerStatsTable::default();
        table.note_failures(1, 3, 0);
        let mut out = Vec::new();
        eligible_servers(&b, &table, &[1, 2], 5, &mut out);
        assert_eq!(out, [2]);
        table.note_failures(2, 3, 0);
        eligible_servers(&b, &table, &[1, 2], 5, &mut out);
        assert_eq!(out, [1, 2]);
        eligible_servers(&b, &table, &[1, 2], 10_000, &mut out);
        assert_eq!(out, [1, 2], "both blackouts over");
    }
}
