//! A caller's route to one app: its request arrivals and its Ribbon load balancer (FACTS.md §8).

use crate::engine::{RngStream, SimTime, StreamFactory};
use crate::scenario::{HttpMethod, RibbonConfig, Scenario};

use super::ProcessId;
use super::observe::{Observation, Observer, RouteId};
use super::round_robin::run_batch;
use super::world::{Event, Layout, World};

/// `PollingServerListUpdater`'s initial delay (`LISTOFSERVERS_CACHE_UPDATE_DELAY`).
pub const RIBBON_FIRST_REFRESH_MS: u64 = 1_000;

/// Ribbon's `DynamicServerListLoadBalancer` with `ZoneAvoidanceRule` in a single zone: the
/// server list and the round-robin cursor.
#[derive(Debug, Default)]
pub struct RibbonLoadBalancer {
    pub servers: Vec<ProcessId>,
    /// `AbstractServerPredicate`'s `nextIndex` AtomicInteger.
    next_index: usize,
}

impl RibbonLoadBalancer {
    #[cfg(test)]
    pub fn with_cursor(servers: Vec<ProcessId>, next_index: usize) -> Self {
        RibbonLoadBalancer {
            servers,
            next_index,
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
    pub fn choose(&mut self) -> Option<ProcessId> {
        let modulo = self.servers.len();
        if modulo == 0 {
            return None;
        }
        loop {
            let current = self.next_index;
            self.next_index = (current + 1) % modulo;
            if current < modulo {
                return Some(self.servers[current]);
            }
        }
    }
}

/// One `[[caller]]` calling one app.
#[derive(Debug)]
pub struct Route {
    pub caller: usize,
    pub process: ProcessId,
    pub application: usize,
    pub ribbon: RibbonConfig,
    pub retryable: bool,
    /// Mean time between requests in microseconds (`None`: no traffic).
    mean_gap_us: Option<f64>,
    /// Created lazily at the first request (or at start with eager loading).
    pub balancer: Option<RibbonLoadBalancer>,
    refresh_generation: u32,
    /// The next arrival, in microseconds of simulated time (per-request mode).
    next_arrival_us: f64,
    /// Batched mode, after the first request: arrivals since this instant (µs) are not yet
    /// counted.
    batch_from_us: Option<f64>,
    rng: RngStream,
}

/// How requests are simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequestMode {
    /// Requests between two changes of routing state are counted at once: their number is drawn
    /// from the Poisson distribution and the round-robin walk is summed ([`run_batch`]); the time
    /// of the last refused attempt is drawn from the uniform order statistics. Exact in
    /// distribution, and its cost does not grow with the request rate.
    #[default]
    Batched,
    /// One event per millisecond with arrivals, one round-robin step per request: the reference.
    PerRequest,
}

impl Route {
    pub fn build_all(scenario: &Scenario, layout: &Layout, streams: &StreamFactory) -> Vec<Route> {
        layout
            .routes
            .iter()
            .map(|slot| {
                let caller = &scenario.callers[slot.caller];
                let target = &caller.calls[slot.target];
                let name = format!(
                    "route/{}/{}",
                    caller.name, scenario.apps[slot.application].name
                );
                Route {
                    caller: slot.caller,
                    process: slot.process,
                    application: slot.application,
                    ribbon: target.ribbon.clone(),
                    retryable: caller.method == HttpMethod::Get
                        || target.ribbon.ok_to_retry_on_all_operations,
                    mean_gap_us: (caller.rate_per_s > 0.0).then(|| 1e6 / caller.rate_per_s),
                    balancer: None,
                    refresh_generation: 0,
                    next_arrival_us: 0.0,
                    batch_from_us: None,
                    rng: streams.stream(&name),
                }
            })
            .collect()
    }

    /// Attempts per request: `(MaxAutoRetries + 1) * (MaxAutoRetriesNextServer + 1)` when the
    /// request may be retried (GET, or `OkToRetryOnAllOperations`), else 1.
    fn servers_to_try(&self) -> (u32, u32) {
        if self.retryable {
            (
                self.ribbon.max_auto_retries_next_server + 1,
                self.ribbon.max_auto_retries + 1,
            )
        } else {
            (1, 1)
        }
    }
}

impl<O: Observer> World<'_, O> {
    /// The caller's web server is up: requests start arriving; with eager loading the load
    /// balancers are created now.
    pub(super) fn start_caller_traffic(&mut self, caller: usize) {
        let now = self.now();
        for r in 0..self.routes.len() {
            if self.routes[r].caller != caller {
                continue;
            }
            if self.routes[r].ribbon.eager_load {
                self.create_balancer(r);
            }
            let route = &mut self.routes[r];
            if let Some(mean) = route.mean_gap_us {
                route.next_arrival_us = now.ms() as f64 * 1000.0 + route.rng.exponential(mean);
                let at = SimTime((route.next_arrival_us / 1000.0) as u64);
                self.queue.schedule(at, Event::Arrivals { route: r });
            }
        }
    }

    /// Every request due in this millisecond, then the next wake-up. In batched mode only the
    /// first request of the route comes here (it creates the load balancer); later ones are
    /// counted by [`World::flush_route`].
    pub(super) fn on_arrivals(&mut self, r: RouteId) {
        let now = self.now();
        let horizon_us = (now.ms() + 1) as f64 * 1000.0;
        let Some(mean) = self.routes[r].mean_gap_us else {
            return;
        };
        if self.request_mode == RequestMode::Batched {
            self.handle_request(r);
            let route = &mut self.routes[r];
            route.batch_from_us = Some(route.next_arrival_us);
            return;
        }
        while self.routes[r].next_arrival_us < horizon_us {
            self.handle_request(r);
            let route = &mut self.routes[r];
            route.next_arrival_us += route.rng.exponential(mean);
        }
        let at = SimTime((self.routes[r].next_arrival_us / 1000.0) as u64);
        self.queue.schedule(at, Event::Arrivals { route: r });
    }

    /// One request through Ribbon with its retries (FACTS.md §8 retry rules).
    fn handle_request(&mut self, r: RouteId) {
        if self.routes[r].balancer.is_none() {
            self.create_balancer(r);
        }
        let (next_servers, same_server) = self.routes[r].servers_to_try();
        let mut first = None;
        for _ in 0..next_servers {
            let Some(server) = self.routes[r].balancer.as_mut().and_then(|b| b.choose()) else {
                self.observe(Observation::NoServer { route: r });
                return;
            };
            first.get_or_insert(server);
            for _ in 0..same_server {
                let dead = !self.processes[server].serving;
                self.observe(Observation::Attempt {
                    route: r,
                    process: server,
                    dead,
                });
                if !dead {
                    return;
                }
            }
        }
        if let Some(first) = first {
            self.observe(Observation::RequestFailed { route: r, first });
        }
    }

    /// The load balancer's constructor: one synchronous list update, then the polling updater
    /// (first run 1 s later).
    fn create_balancer(&mut self, r: RouteId) {
        self.routes[r].balancer = Some(RibbonLoadBalancer::default());
        self.update_server_list(r);
        let route = &mut self.routes[r];
        route.refresh_generation += 1;
        let generation = route.refresh_generation;
        self.queue.schedule_in(
            RIBBON_FIRST_REFRESH_MS,
            Event::RibbonRefresh {
                route: r,
                generation,
            },
        );
    }

    /// `PollingServerListUpdater`'s task, re-armed `ServerListRefreshInterval` after it ran.
    pub(super) fn on_ribbon_refresh(&mut self, r: RouteId, generation: u32) {
        let route = &self.routes[r];
        if route.refresh_generation != generation || !self.processes[route.process].alive {
            return;
        }
        self.update_server_list(r);
        let interval = self.routes[r].ribbon.server_list_refresh_interval_ms;
        self.queue.schedule_in(
            interval,
            Event::RibbonRefresh {
                route: r,
                generation,
            },
        );
    }

    /// Counts the requests of route `r` that arrived since the last count, up to `until_us`
    /// (batched mode; the routing state is constant over that interval by construction).
    pub(super) fn flush_route(&mut self, r: RouteId, until_us: f64) {
        let route = &mut self.routes[r];
        let (Some(from), Some(mean)) = (route.batch_from_us, route.mean_gap_us) else {
            return;
        };
        if until_us <= from {
            return;
        }
        route.batch_from_us = Some(until_us);
        let span = until_us - from;
        let requests = route.rng.poisson(span / mean);
        if requests == 0 {
            return;
        }
        let (next_servers, same_server) = route.servers_to_try();
        let Some(balancer) = route.balancer.as_mut() else {
            return;
        };
        if balancer.servers.is_empty() {
            self.observe(Observation::NoServers {
                route: r,
                count: requests,
            });
            return;
        }
        if balancer.servers.iter().all(|&p| self.processes[p].serving) {
            // Nobody refuses: only the cursor moves (the common case).
            let n = balancer.servers.len();
            let cursor = balancer.cursor();
            let start = if cursor < n { cursor } else { (cursor + 1) % n };
            balancer.set_cursor(((start as u64 + requests) % n as u64) as usize);
            return;
        }
        if balancer.servers.iter().all(|&p| self.processes[p].serving) {
            // Nobody refuses: only the cursor moves (the common case).
            let n = balancer.servers.len();
            let cursor = balancer.cursor();
            let start = if cursor < n { cursor } else { (cursor + 1) % n };
            balancer.set_cursor(((start as u64 + requests) % n as u64) as usize);
            return;
        }
        let alive: Vec<bool> = balancer
            .servers
            .iter()
            .map(|&p| self.processes[p].serving)
            .collect();
        let batch = run_batch(
            &balancer.servers,
            &alive,
            balancer.cursor(),
            requests,
            next_servers,
            same_server,
        );
        balancer.set_cursor(batch.cursor);
        // Arrival times given their number are uniform order statistics over the interval.
        let deepest = batch
            .dead_hits
            .iter()
            .map(|&(_, _, last)| requests - last + 1)
            .max()
            .unwrap_or(0);
        let tops = self.routes[r]
            .rng
            .top_uniform_order_statistics(requests, deepest);
        for (process, count, last) in batch.dead_hits {
            let u = tops[(requests - last) as usize];
            let at_us = from + u * span;
            self.observe(Observation::DeadHits {
                route: r,
                process,
                count,
                last: SimTime((at_us / 1000.0) as u64),
            });
        }
        for (first, count) in batch.failed {
            self.observe(Observation::RequestsFailed {
                route: r,
                first,
                count,
            });
        }
    }

    /// Counts every route's pending requests up to now (before a routing state changes).
    pub(super) fn flush_all_routes(&mut self, until: SimTime) {
        if self.request_mode != RequestMode::Batched {
            return;
        }
        let until_us = until.ms() as f64 * 1000.0;
        for r in 0..self.routes.len() {
            self.flush_route(r, until_us);
        }
    }

    /// `DynamicServerListLoadBalancer#updateListOfServers`: the UP instances of the app in the
    /// caller's Eureka cache, in the client's order (`DiscoveryEnabledNIWSServerList` keeps UP
    /// only; the single-zone filter keeps all).
    fn update_server_list(&mut self, r: RouteId) {
        if self.request_mode == RequestMode::Batched {
            let now_us = self.now().ms() as f64 * 1000.0;
            self.flush_route(r, now_us);
        }
        let route = &self.routes[r];
        let fresh = self.processes[route.process]
            .client
            .up_list(route.application)
            .to_vec();
        let Some(balancer) = self.routes[r].balancer.as_mut() else {
            return;
        };
        let old = std::mem::replace(&mut balancer.servers, fresh);
        self.observe(Observation::RibbonRefreshed { route: r });
        // Membership diff in O(n) with a scratch mark per process.
        let mut marks = std::mem::take(&mut self.scratch_marks);
        marks.resize(self.processes.len(), false);
        for &p in &old {
            marks[p] = true;
        }
        let new = self.routes[r]
            .balancer
            .as_ref()
            .map_or(&[][..], |b| b.servers.as_slice());
        let mut entered = Vec::new();
        for &p in new {
            if marks[p] {
                marks[p] = false;
            } else {
                entered.push(p);
            }
        }
        for &p in &old {
            if marks[p] {
                marks[p] = false;
                self.observe(Observation::RibbonList {
                    route: r,
                    process: p,
                    listed: false,
                });
            }
        }
        for p in entered {
            self.observe(Observation::RibbonList {
                route: r,
                process: p,
                listed: true,
            });
        }
        self.scratch_marks = marks;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `incrementAndGetModulo`: returns current, advances; wraps a cursor past a shrunken list.
    #[test]
    fn round_robin_cursor_follows_ribbon() {
        let mut lb = RibbonLoadBalancer {
            servers: vec![10, 11, 12],
            next_index: 0,
        };
        let picks: Vec<_> = (0..4).map(|_| lb.choose().unwrap()).collect();
        assert_eq!(picks, [10, 11, 12, 10]);
        lb.servers = vec![20, 21];
        lb.next_index = 2;
        // current 2 >= modulo 2: next = 1, loop; current 1 -> returns 21, next = 0.
        assert_eq!(lb.choose(), Some(21));
        assert_eq!(lb.choose(), Some(20));
        lb.servers.clear();
        assert_eq!(lb.choose(), None);
    }
}
