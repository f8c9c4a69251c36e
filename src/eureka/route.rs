//! A caller's route to one app: its request arrivals and its Ribbon load balancer (FACTS.md §8).
//!
//! Requests are handled one by one in the per-request reference mode; in the default batched
//! mode they are counted between changes of routing state by [`batch`].

mod arrivals;
mod attempt;
mod batch;
mod inflight;
mod spring;

use crate::engine::{RngStream, SimTime, StreamFactory};
use crate::scenario::{HttpMethod, LoadBalancerConfig, RibbonConfig, Scenario, Train};

use super::ProcessId;
use super::circuit_breaker::{CircuitBreaker, ServerStatsTable, eligible_servers};
use super::observe::{Observation, Observer, RouteId};
use super::world::{Event, Layout, World};
pub use arrivals::Arrivals;
pub use attempt::{Answer, AttemptCosts};
use inflight::Served;
pub use spring::{SpringLoadBalancer, SpringTimer};

/// `PollingServerListUpdater`'s initial delay (`LISTOFSERVERS_CACHE_UPDATE_DELAY`).
pub const RIBBON_FIRST_REFRESH_MS: u64 = 1_000;

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
    eligible: Vec<ProcessId>,
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

/// One `[[caller]]` calling one app.
#[derive(Debug)]
pub struct Route {
    pub caller: usize,
    pub process: ProcessId,
    pub application: usize,
    pub ribbon: RibbonConfig,
    pub breaker: CircuitBreaker,
    pub retryable: bool,
    /// The caller's requests are GETs (retried by default).
    pub get: bool,
    /// Ribbon (true) or Spring Cloud LoadBalancer (false) routes these calls.
    pub uses_ribbon: bool,
    /// What an attempt costs and the Hystrix timeout, if any ([`attempt`]).
    pub costs: AttemptCosts,
    /// The caller's `spring.cloud.loadbalancer.*` settings.
    pub load_balancer: LoadBalancerConfig,
    /// Spring Cloud LoadBalancer, created at the first request.
    pub spring: Option<SpringLoadBalancer>,
    /// The request stream (`None`: no traffic).
    arrivals: Option<Arrivals>,
    /// Created lazily at the first request (or at start with eager loading).
    pub balancer: Option<RibbonLoadBalancer>,
    refresh_generation: u32,
    /// The next arrival, in microseconds of simulated time (per-request mode).
    next_arrival_us: f64,
    /// Batched mode, after the first request: arrivals since this instant (µs) are not yet
    /// counted.
    batch_from_us: Option<f64>,
    rng: RngStream,
    /// The called app's `service-time-ms`, in µs (0: nothing is ever in flight).
    service_us: f64,
    /// Accepted requests of the last `service_us` ([`inflight`]).
    served: std::collections::VecDeque<Served>,
}

/// How requests are simulated.
///
/// A request that arrives in the same millisecond as a change of routing state: in batched
/// mode, requests up to the change's instant (`(…, t]` in µs, t = the change's ms × 1000) see
/// the old state and later ones the new; in per-request mode every request due in millisecond
/// t is handled in one event at t, before or after the change by the queue's FIFO order. The
/// two differ only within that millisecond (the KS tests in `experiment` bound the effect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequestMode {
    /// Requests between two changes of routing state are counted at once: their number is drawn
    /// from the Poisson distribution and the round-robin walk is summed
    /// ([`run_batch`](super::round_robin::run_batch)); the time of the last refused attempt is
    /// drawn from the uniform order statistics. With the circuit breaker, requests are stepped
    /// one by one only while an untripped refusing server is in the round robin. Exact in
    /// distribution, and its cost does not grow with the request rate.
    #[default]
    Batched,
    /// One event per millisecond with arrivals, one round-robin step per request: the reference.
    PerRequest,
}

/// What one request did (batched mode reports it as counts).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct RequestOutcome {
    first: Option<ProcessId>,
    failed: bool,
    /// The server that accepted the request.
    accepted: Option<ProcessId>,
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
                    breaker: CircuitBreaker::from_config(&target.ribbon),
                    retryable: caller.method == HttpMethod::Get
                        || target.ribbon.ok_to_retry_on_all_operations,
                    get: caller.method == HttpMethod::Get,
                    uses_ribbon: caller.uses_ribbon(&scenario.simulation.release),
                    costs: AttemptCosts::of(caller, &target.ribbon),
                    load_balancer: caller.client.load_balancer.clone(),
                    spring: None,
                    arrivals: Arrivals::new(caller.rate_per_s, caller.fixed_rate),
                    balancer: None,
                    refresh_generation: 0,
                    next_arrival_us: 0.0,
                    batch_from_us: None,
                    rng: streams.stream(&name),
                    service_us: scenario.apps[slot.application].service_time_ms as f64 * 1000.0,
                    served: std::collections::VecDeque::new(),
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
            if self.routes[r].uses_ribbon && self.routes[r].ribbon.eager_load {
                self.create_balancer(r);
            }
            let route = &mut self.routes[r];
            if let Some(arrivals) = route.arrivals.as_mut() {
                let first = now.ms() as f64 * 1000.0 + arrivals.first_gap(&mut route.rng);
                arrivals.anchor(first);
                route.next_arrival_us = first;
                let at = SimTime((first / 1000.0) as u64);
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
        let Some(arrivals) = self.routes[r].arrivals else {
            return;
        };
        if self.request_mode == RequestMode::Batched {
            self.handle_request(r);
            let route = &mut self.routes[r];
            // Unless the first request left an empty cache behind (a miss is then pending).
            if route.spring.as_ref().is_none_or(|lb| !lb.miss_pending()) {
                route.batch_from_us = Some(route.next_arrival_us);
            }
            return;
        }
        while self.routes[r].next_arrival_us < horizon_us {
            self.handle_request(r);
            let route = &mut self.routes[r];
            route.next_arrival_us += arrivals.next_gap(&mut route.rng);
        }
        let at = SimTime((self.routes[r].next_arrival_us / 1000.0) as u64);
        self.queue.schedule(at, Event::Arrivals { route: r });
    }

    /// One request, now, with per-attempt observations (the reference path).
    fn handle_request(&mut self, r: RouteId) {
        let now_ms = self.now().ms();
        let at_us = self.routes[r].next_arrival_us;
        let outcome = if self.routes[r].uses_ribbon {
            if self.routes[r].balancer.is_none() {
                self.create_balancer(r);
            }
            self.route_one_request(r, now_ms, true)
        } else {
            if self.routes[r].spring.is_none() {
                let request_us = self.routes[r].next_arrival_us;
                self.create_spring_balancer(r, request_us);
            }
            self.spring_request(r, now_ms, true)
        };
        self.note_served_one(r, at_us, outcome.accepted);
        self.report_failed(r, outcome, true);
    }

    /// Observes a request that failed after its retries.
    fn report_failed(&mut self, r: RouteId, outcome: RequestOutcome, per_request: bool) {
        if !outcome.failed {
            return;
        }
        let Some(first) = outcome.first else {
            return;
        };
        if per_request {
            self.observe(Observation::RequestFailed { route: r, first });
        } else {
            self.observe(Observation::RequestsFailed {
                route: r,
                first,
                count: 1,
            });
        }
    }

    /// One request through Ribbon with its retries (FACTS.md §8 retry rules) at `now_ms`: each
    /// next-server retry chooses again through the availability filter; each refused or timed
    /// out attempt is a circuit-tripping failure of its server and any accepted one clears the
    /// server's count (`LoadBalancerContext#noteRequestCompletion`); each attempt's cost and the
    /// Hystrix timeout follow [`AttemptCosts::attempt`]. `per_attempt` reports every attempt as
    /// an [`Observation::Attempt`]; otherwise refused ones are reported as counts stamped
    /// `now_ms`.
    fn route_one_request(&mut self, r: RouteId, now_ms: u64, per_attempt: bool) -> RequestOutcome {
        let (next_servers, same_server) = self.routes[r].servers_to_try();
        let costs = self.routes[r].costs;
        let mut spent_ms = 0;
        let mut outcome = RequestOutcome::default();
        for _ in 0..next_servers {
            let route = &mut self.routes[r];
            let breaker = route.breaker;
            let Some(server) = route
                .balancer
                .as_mut()
                .and_then(|b| b.choose_available(&breaker, now_ms))
            else {
                if per_attempt {
                    self.observe(Observation::NoServer { route: r });
                } else {
                    self.observe(Observation::NoServers { route: r, count: 1 });
                }
                return RequestOutcome::default();
            };
            outcome.first.get_or_insert(server);
            for _ in 0..same_server {
                let answer = self.processes[server].answer();
                let dead = !answer.accepts();
                let attempted = costs.attempt(&mut spent_ms, answer);
                if let Some(b) = self.routes[r].balancer.as_mut() {
                    if dead {
                        b.stats.note_failure(server, now_ms);
                    } else {
                        b.stats.note_success(server);
                    }
                }
                if per_attempt {
                    self.observe(Observation::Attempt {
                        route: r,
                        process: server,
                        dead,
                    });
                } else if dead {
                    self.observe(Observation::DeadHits {
                        route: r,
                        process: server,
                        count: 1,
                        last: SimTime(now_ms),
                    });
                }
                if attempted.delay_ms > 0 {
                    self.observe(Observation::ConnectTimeouts {
                        route: r,
                        process: server,
                        delay_ms: attempted.delay_ms,
                    });
                }
                if !dead {
                    outcome.accepted = Some(server);
                    return outcome;
                }
                if attempted.gave_up {
                    outcome.failed = true;
                    return outcome;
                }
            }
        }
        outcome.failed = outcome.first.is_some();
        outcome
    }

    /// The load balancer's constructor: one synchronous list update, then the polling updater
    /// (first run 1 s later).
    fn create_balancer(&mut self, r: RouteId) {
        self.routes[r].balancer = Some(RibbonLoadBalancer::default());
        self.update_server_list(r);
        if self.routes[r].ribbon.eureka_notification_updater {
            // EurekaNotificationServerListUpdater: no timer, the client's fetches drive it.
            return;
        }
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

    /// `EurekaNotificationServerListUpdater` (FACTS.md §8): the Eureka client fires a
    /// `CacheRefreshedEvent` after every successful fetch, changed or not, and the updater runs
    /// one `updateListOfServers` on its pool (taken as immediate). On Dalston the event never
    /// reaches it (`CloudEurekaClient#onCacheRefreshed` did not call the super method), so the
    /// list stays as the constructor read it.
    pub(in crate::eureka) fn notify_ribbon_updaters(&mut self, p: ProcessId) {
        if self.scenario.simulation.release.train == Train::Dalston {
            return;
        }
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.process == p
                && route.uses_ribbon
                && route.ribbon.eureka_notification_updater
                && route.balancer.is_some()
            {
                self.update_server_list(r);
            }
        }
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
        let old = std::mem::replace(&mut balancer.servers, fresh.clone());
        self.observe(Observation::RibbonRefreshed { route: r });
        self.observe_list_change(r, &old, &fresh);
    }

    /// Observes which processes entered and left route `r`'s balancer list, in O(n) with a
    /// scratch mark per process.
    pub(super) fn observe_list_change(&mut self, r: RouteId, old: &[ProcessId], new: &[ProcessId]) {
        let mut marks = std::mem::take(&mut self.scratch_marks);
        marks.resize(self.processes.len(), false);
        for &p in old {
            marks[p] = true;
        }
        let mut entered = Vec::new();
        for &p in new {
            if marks[p] {
                marks[p] = false;
            } else {
                entered.push(p);
            }
        }
        for &p in old {
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
        let mut lb = RibbonLoadBalancer::with_cursor(vec![10, 11, 12], 0);
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
