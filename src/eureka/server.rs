//! The Eureka server: registry, response cache and its five timers (FACTS.md §2, §3, §4, §2.7).
//!
//! Start-up order (FACTS.md §2.7): the registry (whose constructor starts the delta-retention
//! timer, FACTS.md §4) and the response cache with its wall-clock
//! aligned fill timer, the renewal-threshold updater (`init()`), then `openForTraffic` and
//! `postInit()`: the renews-last-minute roll and the eviction timer, both 60 s / one eviction
//! period later. The roll is scheduled before the eviction run, so when both fall on the same
//! millisecond the roll runs first (the queue is FIFO on ties) and eviction sees the window that
//! just closed.

use crate::engine::{RngStream, SimTime};
use crate::scenario::{Scenario, ServerConfig};

use super::delta::RecentlyChangedQueue;
use super::protocol::DeltaPayload;
use super::registry::Registry;
use super::response_cache::ResponseCache;

/// `MeasuredRate(60 * 1000)`: the renews-last-minute window is fixed at one minute.
pub const RENEWS_WINDOW_MS: u64 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerTimer {
    Eviction,
    RenewsRoll,
    CacheFill,
    ThresholdUpdate,
    /// `AbstractInstanceRegistry#getDeltaRetentionTask` (FACTS.md §4).
    DeltaRetention,
}

pub struct EurekaServer {
    pub registry: Registry,
    pub cache: ResponseCache,
    /// The `ALL_APPS_DELTA` key of the same response cache.
    pub delta_cache: ResponseCache<DeltaPayload>,
    /// `recentlyChangedQueue`, which delta payloads are built from.
    pub recently_changed: RecentlyChangedQueue,
    pub(in crate::eureka) config: ServerConfig,
    pub(in crate::eureka) rng: RngStream,
    /// When the previous eviction run started (for the compensation time).
    pub(in crate::eureka) last_eviction: Option<SimTime>,
    /// UP-ness of each process in the registry and in the served payload, as last observed.
    pub(in crate::eureka) registry_up: Vec<bool>,
    pub(in crate::eureka) served_up: Vec<bool>,
}

impl EurekaServer {
    pub fn new(scenario: &Scenario, processes: usize, rng: RngStream) -> EurekaServer {
        let config = scenario.server.clone();
        EurekaServer {
            registry: Registry::new(processes, &config, scenario.simulation.release),
            cache: ResponseCache::new(
                config.use_read_only_response_cache,
                config.response_cache_auto_expiration_s * 1000,
            ),
            delta_cache: ResponseCache::new(
                config.use_read_only_response_cache,
                config.response_cache_auto_expiration_s * 1000,
            ),
            recently_changed: RecentlyChangedQueue::new(
                processes,
                config.retention_time_in_ms_in_delta_queue,
            ),
            config,
            rng,
            last_eviction: None,
            registry_up: vec![false; processes],
            served_up: vec![false; processes],
        }
    }

    pub(in crate::eureka) fn compensation_ms(&mut self, now: SimTime) -> u64 {
        let previous = self.last_eviction.replace(now);
        compensation_ms(previous, now, self.config.eviction_interval_ms)
    }

    /// Delay until a fixed-delay `java.util.Timer` task runs again: one period after this run
    /// started, plus this model's wake-up lateness.
    pub(in crate::eureka) fn timer_delay(&mut self, period_ms: u64) -> u64 {
        period_ms + self.rng.between(0, self.config.timer_lateness_ms)
    }
}

/// `EvictionTask#getCompensationTimeMs`: how much later than one period after the previous run
/// this run started, never negative; 0 on the first run (FACTS.md §2.1). It is added to every
/// lease's expiry, so a late eviction run does not evict leases a GC pause kept from renewing.
pub fn compensation_ms(previous: Option<SimTime>, now: SimTime, period_ms: u64) -> u64 {
    match previous {
        Some(prev) => now.saturating_since(prev).saturating_sub(period_ms),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// InstanceRegistryTest#testEvictionTaskCompensationTime: runs at 1, 1+P, 1+2P+10 ms and
    /// 1+3P-1 (ns in the original; ms here) give 0, 0, 10, 0.
    #[test]
    fn eviction_compensation_time() {
        let p = 60_000;
        let runs = [1, 1 + p, 1 + 2 * p + 10, 1 + 3 * p - 1];
        let mut previous = None;
        let got: Vec<u64> = runs
            .iter()
            .map(|&t| {
                let c = compensation_ms(previous, SimTime(t), p);
                previous = Some(SimTime(t));
                c
            })
            .collect();
        assert_eq!(got, [0, 0, 10, 0]);
    }
}
