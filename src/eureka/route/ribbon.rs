//! Ribbon (Edgware to Hoxton, FACTS.md §8), all in one place: the load balancer with its server
//! list and round-robin cursor (here), the availability filter's circuit breaker
//! ([`circuit_breaker`]) and the round robin's summed walk for batched requests
//! ([`round_robin`]). What an attempt costs is shared with Spring Cloud LoadBalancer
//! (`route::attempt`).

pub mod circuit_breaker;
pub mod round_robin;

use crate::eureka::ids::ProcessId;

use circuit_breaker::{CircuitBreaker, ServerStatsTable, eligible_servers};

/// Ribbon's `DynamicServerListLoadBalancer` with `ZoneAvoidanceRule` in a single zone: the
/// server list, the round-robin cursor and the per-server circuit-breaker stats.
#[derive(Debug, Default)]
pub struct RibbonLoadBalancer {
    pub servers: Vec<ProcessId>,
    /// `AbstractServerPredicate`'s `nextIndex` AtomicInteger.
    next_index: usize,
    /// `LoadBalancerStats`' `ServerStats`, by process.
    pub stats: ServerStatsTable,
    /// Scratch: the eligible servers of the current pick.
    pub(in crate::eureka) eligible: Vec<ProcessId>,
}

impl RibbonLoadBalancer {
    #[cfg(test)]
    pub fn with_cursor(servers: Vec<ProcessId>, next_index: usize) -> Self {
        RibbonLoadBalancer {
            servers,
            next_index,
            ..RibbonLoadBalancer::default()
        }
    }

    pub fn cursor(&self) -> usize {
        self.next_index
    }

    pub fn set_cursor(&mut self, next_index: usize) {
        self.next_index = next_index;
    }

    /// `AbstractServerPredicate#incrementAndGetModulo`: returns the current cursor and advances
    /// it; a cursor beyond a shrunken list wraps through `(current + 1) % modulo` first.
    fn increment_and_get_modulo(&mut self, modulo: usize) -> usize {
        loop {
            let current = self.next_index;
            self.next_index = (current + 1) % modulo;
            if current < modulo {
                return current;
            }
        }
    }

    /// Round robin over the whole list (no server is tripped).
    pub fn choose(&mut self) -> Option<ProcessId> {
        let modulo = self.servers.len();
        if modulo == 0 {
            return None;
        }
        let i = self.increment_and_get_modulo(modulo);
        Some(self.servers[i])
    }

    /// `PredicateBasedRule#choose` → `chooseRoundRobinAfterFiltering`: the round robin runs over
    /// the servers the availability filter keeps at `now_ms` (every server when all are
    /// tripped), with the one shared cursor.
    pub fn choose_available(&mut self, breaker: &CircuitBreaker, now_ms: u64) -> Option<ProcessId> {
        if !breaker.enabled || !self.stats.any_failures() {
            return self.choose();
        }
        let mut eligible = std::mem::take(&mut self.eligible);
        eligible_servers(breaker, &self.stats, &self.servers, now_ms, &mut eligible);
        let chosen = if eligible.is_empty() {
            None
        } else {
            let i = self.increment_and_get_modulo(eligible.len());
            Some(eligible[i])
        };
        self.eligible = eligible;
        chosen
    }
}
