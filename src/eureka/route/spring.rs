//! Spring Cloud LoadBalancer as a caller's balancer (FACTS.md §9): Ribbon's successor, the
//! default from Spring Cloud 2020.0.
//!
//! The chain is `DiscoveryClientServiceInstanceListSupplier` (the Eureka client's UP list, read
//! from its local cache) → either `CachingServiceInstanceListSupplier` (default) or
//! `HealthCheckServiceInstanceListSupplier` (`configurations = health-check`) →
//! `RoundRobinLoadBalancer`, with the blocking retry policy's defaults.
//!
//! Unlike Ribbon there is no timer behind the cache: the entry expires `ttl` after it was written
//! and the list is re-read by the first request after that, so a caller without traffic never
//! refreshes. In batched mode that request is found ahead of time: when the entry expires, the
//! next arrival is drawn and a miss is scheduled at it, so every list change happens at its own
//! instant.

use std::collections::HashMap;

use crate::engine::SimTime;
use crate::scenario::{LoadBalancerConfig, SupplierKind};

use super::super::ProcessId;
use super::super::observe::{Observation, Observer, RouteId};
use super::super::world::{Event, World};
use super::attempt::{Answer, AttemptCosts};
use super::{RequestMode, RequestOutcome};

/// `RoundRobinLoadBalancer` and its instance-list supplier for one called service.
#[derive(Debug)]
pub struct SpringLoadBalancer {
    /// `RoundRobinLoadBalancer#position`, seeded `new Random().nextInt(1000)`.
    position: u64,
    /// The list the round robin chooses from (the cached list, the health-checked list, or the
    /// Eureka client's list when caching is off).
    pub servers: Vec<ProcessId>,
    /// Caching supplier: when the cached list was written (`None`: nothing valid is cached).
    written_ms: Option<u64>,
    /// Health-check supplier: the instances it checks (the first list, or the last refetched).
    checked: Vec<ProcessId>,
    /// Guards this balancer's timers.
    generation: u32,
    /// Batched mode: the instant (µs) of the request that will find the cache expired.
    pending_miss_us: Option<f64>,
}

impl SpringLoadBalancer {
    /// Batched mode: the cache is empty and the request that will read it is scheduled.
    pub fn miss_pending(&self) -> bool {
        self.pending_miss_us.is_some()
    }
}

/// The timers of a Spring Cloud LoadBalancer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringTimer {
    /// Batched mode: the cache entry's time to live is over.
    CacheExpired,
    /// Batched mode: the first request after the expiry arrives and re-reads the list.
    CacheMiss,
    /// A health-check round (`health-check.interval`).
    HealthCheck,
    /// `health-check.refetch-instances`: the instances are read again from the Eureka client.
    Refetch,
}

/// What one request did to the round robin and the instances.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Walked {
    first: Option<ProcessId>,
    failed: bool,
    /// The instance that accepted the request.
    accepted: Option<ProcessId>,
    /// Refused or timed-out attempts, in order.
    refused: Vec<ProcessId>,
    /// Per instance whose attempts timed out on connect: the delay waited on them (ms).
    delays: Vec<(ProcessId, u64)>,
}

/// Adds `count` to `key`'s entry of a small association list.
fn add_to(list: &mut Vec<(ProcessId, u64)>, key: ProcessId, count: u64) {
    match list.iter_mut().find(|(q, _)| *q == key) {
        Some(entry) => entry.1 += count,
        None => list.push((key, count)),
    }
}

/// The retry policy in effect: attempts on next instances and on the same instance
/// (`BlockingLoadBalancedRetryPolicy#canRetryNextServer` allows `nextServerCount <=
/// max-retries-on-next-service-instance`, `#canRetrySameServer` `sameServerCount <
/// max-retries-on-same-service-instance`), both only for GET unless `retry-on-all-operations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Retries {
    servers: u32,
    same: u32,
    avoid_previous: bool,
}

impl Retries {
    fn of(config: &LoadBalancerConfig, get: bool) -> Retries {
        if config.retry_enabled && (get || config.retry_on_all_operations) {
            Retries {
                servers: config.max_retries_on_next_service_instance + 1,
                same: config.max_retries_on_same_service_instance + 1,
                avoid_previous: config.avoid_previous_instance,
            }
        } else {
            Retries {
                servers: 1,
                same: 1,
                avoid_previous: false,
            }
        }
    }

    /// The round-robin state that decides a request: the position modulo every list size a
    /// request may choose from (the list, and the list without the instance just tried).
    fn period(self, n: usize) -> u64 {
        let n = n as u64;
        if self.avoid_previous && self.servers > 1 && n > 2 {
            n * (n - 1)
        } else {
            n.max(1)
        }
    }
}

/// `RoundRobinLoadBalancer#getInstanceResponse` over `servers` without position `skip`: a single
/// instance is returned without moving the position; otherwise `position.incrementAndGet()`
/// (masked to a non-negative int) modulo the size picks it.
fn choose(position: &mut u64, servers: &[ProcessId], skip: Option<usize>) -> Option<usize> {
    let n = servers.len() - usize::from(skip.is_some());
    match n {
        0 => None,
        1 => Some(match skip {
            Some(0) => 1,
            _ => 0,
        }),
        _ => {
            *position += 1;
            let k = ((*position & 0x7fff_ffff) % n as u64) as usize;
            // Position k of the list without `skip`.
            Some(match skip {
                Some(s) if k >= s => k + 1,
                _ => k,
            })
        }
    }
}

/// One request with its retries (FACTS.md §9): each retry on a next instance chooses again; with
/// `avoid-previous-instance` (`RetryAwareServiceInstanceListSupplier`) it chooses among the
/// instances other than the one just tried, unless none would be left. Each attempt costs what
/// [`AttemptCosts::attempt`] says (a connect timeout on a vanished host; a Hystrix timeout ends
/// the request).
fn walk_one(
    position: &mut u64,
    servers: &[ProcessId],
    answer: &dyn Fn(ProcessId) -> Answer,
    retries: Retries,
    costs: AttemptCosts,
) -> Walked {
    let mut out = Walked::default();
    let mut spent_ms = 0;
    let mut previous: Option<usize> = None;
    for _ in 0..retries.servers {
        let skip = if retries.avoid_previous && servers.len() > 1 {
            previous
        } else {
            None
        };
        let Some(i) = choose(position, servers, skip) else {
            return out;
        };
        let server = servers[i];
        out.first.get_or_insert(server);
        for _ in 0..retries.same {
            let answered = answer(server);
            let attempted = costs.attempt(&mut spent_ms, answered);
            if answered.accepts() {
                out.accepted = Some(server);
                return out;
            }
            out.refused.push(server);
            if attempted.delay_ms > 0 {
                add_to(&mut out.delays, server, attempted.delay_ms);
            }
            if attempted.gave_up {
                out.failed = true;
                return out;
            }
        }
        previous = Some(i);
    }
    out.failed = out.first.is_some();
    out
}

/// Totals of many requests over a constant list (see [`walk_many`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct ManyWalked {
    /// Per refused instance: attempts refused, 1-based index of the last request with one.
    refused: Vec<(ProcessId, u64, u64)>,
    /// Per first-chosen instance: requests that failed after their retries.
    failed: Vec<(ProcessId, u64)>,
    /// Per instance whose attempts timed out on connect: the delay waited on them (ms).
    delays: Vec<(ProcessId, u64)>,
}

/// `requests` requests over a constant list from `position`: one request's course depends only
/// on the position modulo [`Retries::period`], so the walk of positions is eventually periodic
/// and is summed over its cycle instead of request by request once it repeats. (The position is
/// taken as it is, without `choose`'s 31-bit mask: exact until a route has made 2^31 choices.)
fn walk_many(
    position: &mut u64,
    servers: &[ProcessId],
    answer: &dyn Fn(ProcessId) -> Answer,
    retries: Retries,
    costs: AttemptCosts,
    requests: u64,
) -> ManyWalked {
    let period = retries.period(servers.len());
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut steps: Vec<(Walked, u64)> = Vec::new();
    let mut pos = *position;
    let mut cycle_at = None;
    while (steps.len() as u64) < requests {
        if let Some(&k) = seen.get(&(pos % period)) {
            cycle_at = Some(k);
            break;
        }
        seen.insert(pos % period, steps.len());
        let before = pos;
        let walked = walk_one(&mut pos, servers, answer, retries, costs);
        steps.push((walked, pos - before));
    }
    let (prefix, cycle) = match cycle_at {
        Some(k) => (k, steps.len() - k),
        None => (steps.len(), 0),
    };
    // How many of the requests take step k, and which step request i (0-based) takes.
    let visits = |k: usize| -> u64 {
        if k < prefix {
            1
        } else {
            let after = requests - prefix as u64;
            let offset = (k - prefix) as u64;
            after / cycle as u64 + u64::from(offset < after % cycle as u64)
        }
    };
    let step_of = |i: u64| -> usize {
        if i < prefix as u64 {
            i as usize
        } else {
            prefix + ((i - prefix as u64) % cycle as u64) as usize
        }
    };
    let mut out = ManyWalked::default();
    let mut moved = 0u64;
    for (k, (walked, increments)) in steps.iter().enumerate() {
        let times = visits(k);
        moved += times * increments;
        for &p in &walked.refused {
            match out.refused.iter_mut().find(|(q, _, _)| *q == p) {
                Some(entry) => entry.1 += times,
                None => out.refused.push((p, times, 0)),
            }
        }
        for &(p, delay_ms) in &walked.delays {
            add_to(&mut out.delays, p, times * delay_ms);
        }
        if walked.failed
            && let Some(first) = walked.first
        {
            add_to(&mut out.failed, first, times);
        }
    }
    // The last request refused by each instance lies within the last prefix + cycle requests.
    let mut i = requests;
    let window = steps.len() as u64;
    while i > requests.saturating_sub(window) && out.refused.iter().any(|e| e.2 == 0) {
        i -= 1;
        for &p in &steps[step_of(i)].0.refused {
            if let Some(entry) = out.refused.iter_mut().find(|e| e.0 == p && e.2 == 0) {
                entry.2 = i + 1;
            }
        }
    }
    *position += moved;
    out
}

impl<O: Observer> World<'_, O> {
    /// The balancer's creation at the first request (`LoadBalancerClientFactory` creates the
    /// child context lazily): the position is seeded, the supplier reads its first list, and the
    /// health-check supplier starts its rounds.
    pub(super) fn create_spring_balancer(&mut self, r: RouteId, request_us: f64) {
        let now = self.now().ms();
        let route = &mut self.routes[r];
        let position = route.rng.below(1000);
        route.spring = Some(SpringLoadBalancer {
            position,
            servers: Vec::new(),
            written_ms: None,
            checked: Vec::new(),
            generation: 0,
            pending_miss_us: None,
        });
        let config = route.load_balancer.clone();
        match config.configurations {
            SupplierKind::Default => {
                self.set_spring_list(r, self.client_list(r));
                if config.cache_enabled {
                    self.spring_cache_written(r, now, request_us);
                }
            }
            SupplierKind::HealthCheck => {
                let list = self.client_list(r);
                if let Some(lb) = self.routes[r].spring.as_mut() {
                    lb.checked = list.clone();
                }
                if config.health_check_initial_delay_ms == 0 {
                    self.health_check_round(r);
                    self.schedule_spring(
                        r,
                        config.health_check_interval_ms,
                        SpringTimer::HealthCheck,
                    );
                } else {
                    // Nothing is checked yet: the first list is used as it is.
                    self.set_spring_list(r, list);
                    self.schedule_spring(
                        r,
                        config.health_check_initial_delay_ms,
                        SpringTimer::HealthCheck,
                    );
                }
                if config.refetch_instances {
                    self.schedule_spring(
                        r,
                        config.refetch_instances_interval_ms,
                        SpringTimer::Refetch,
                    );
                }
            }
        }
    }

    /// The Eureka client's UP list of the route's app (`EurekaDiscoveryClient#getInstances`).
    fn client_list(&self, r: RouteId) -> Vec<ProcessId> {
        let route = &self.routes[r];
        self.processes[route.process]
            .client
            .up_list(route.application)
            .to_vec()
    }

    fn set_spring_list(&mut self, r: RouteId, fresh: Vec<ProcessId>) {
        let Some(lb) = self.routes[r].spring.as_mut() else {
            return;
        };
        let old = std::mem::replace(&mut lb.servers, fresh.clone());
        self.observe(Observation::RibbonRefreshed { route: r });
        self.observe_list_change(r, &old, &fresh);
    }

    fn schedule_spring(&mut self, r: RouteId, delay_ms: u64, timer: SpringTimer) {
        let Some(lb) = self.routes[r].spring.as_ref() else {
            return;
        };
        let generation = lb.generation;
        self.queue.schedule_in(
            delay_ms,
            Event::SpringLoadBalancer {
                route: r,
                generation,
                timer,
            },
        );
    }

    /// `CachingServiceInstanceListSupplier` wrote the list at `now_ms`; an empty list is not
    /// kept (it counts as a miss), so the next request reads again. Batched mode arms the
    /// expiry (per-request mode checks at each request); `request_us` is the instant of the
    /// request that read the list.
    fn spring_cache_written(&mut self, r: RouteId, now_ms: u64, request_us: f64) {
        let ttl = self.routes[r].load_balancer.cache_ttl_ms;
        let Some(lb) = self.routes[r].spring.as_mut() else {
            return;
        };
        lb.written_ms = (!lb.servers.is_empty()).then_some(now_ms);
        if self.request_mode != RequestMode::Batched {
            return;
        }
        if lb.written_ms.is_some() {
            self.schedule_spring(r, ttl, SpringTimer::CacheExpired);
        } else {
            self.pend_cache_miss(r, request_us);
        }
    }

    /// Batched mode: nothing valid is cached from `from_us` on, so the next request re-reads
    /// the list. Draws that request and schedules the miss at it; no request is counted before
    /// it (none arrives in between, by construction).
    fn pend_cache_miss(&mut self, r: RouteId, from_us: f64) {
        let route = &mut self.routes[r];
        route.batch_from_us = None;
        let Some(arrivals) = route.arrivals.as_mut() else {
            return;
        };
        let Some(at) = arrivals.next_within(&mut route.rng, from_us, f64::INFINITY) else {
            return;
        };
        if let Some(lb) = route.spring.as_mut() {
            lb.pending_miss_us = Some(at);
            lb.written_ms = None;
        }
        let now = self.now().ms();
        let at_ms = ((at / 1000.0) as u64).max(now);
        self.schedule_spring(r, at_ms - now, SpringTimer::CacheMiss);
    }

    /// A Spring Cloud LoadBalancer timer fired.
    pub(in crate::eureka) fn on_spring_timer(
        &mut self,
        r: RouteId,
        generation: u32,
        timer: SpringTimer,
    ) {
        let route = &self.routes[r];
        let Some(lb) = route.spring.as_ref() else {
            return;
        };
        if lb.generation != generation || !self.processes[route.process].alive {
            return;
        }
        let now = self.now().ms();
        let now_us = now as f64 * 1000.0;
        let config = route.load_balancer.clone();
        match timer {
            SpringTimer::CacheExpired => {
                self.flush_route(r, now_us);
                self.pend_cache_miss(r, now_us);
            }
            SpringTimer::CacheMiss => {
                let Some(at) = self.routes[r]
                    .spring
                    .as_mut()
                    .and_then(|lb| lb.pending_miss_us.take())
                else {
                    return;
                };
                self.set_spring_list(r, self.client_list(r));
                let outcome = self.spring_request(r, now, true);
                self.note_served_one(r, at, outcome.accepted);
                self.report_failed(r, outcome, true);
                self.routes[r].batch_from_us = Some(at);
                self.spring_cache_written(r, now, at);
            }
            SpringTimer::HealthCheck => {
                self.flush_route(r, now_us);
                self.health_check_round(r);
                self.schedule_spring(r, config.health_check_interval_ms, SpringTimer::HealthCheck);
            }
            SpringTimer::Refetch => {
                self.flush_route(r, now_us);
                let list = self.client_list(r);
                if let Some(lb) = self.routes[r].spring.as_mut() {
                    lb.checked = list;
                }
                // A new list starts a new health-check flux on it at once.
                self.health_check_round(r);
                self.schedule_spring(
                    r,
                    config.refetch_instances_interval_ms,
                    SpringTimer::Refetch,
                );
            }
        }
    }

    /// `HealthCheckServiceInstanceListSupplier#healthCheckFlux`: every checked instance whose
    /// `/actuator/health` answers is kept. A process that does not accept connections fails
    /// its check; one that was taken out of Eureka but still serves passes it (the health
    /// endpoint knows nothing of Eureka's status).
    fn health_check_round(&mut self, r: RouteId) {
        let Some(lb) = self.routes[r].spring.as_ref() else {
            return;
        };
        let healthy: Vec<ProcessId> = lb
            .checked
            .iter()
            .copied()
            .filter(|&p| self.processes[p].serving)
            .collect();
        self.set_spring_list(r, healthy);
    }

    /// The Eureka client of `p` has new lists: balancers that read it at every request
    /// (`cache.enabled = false`) follow at once.
    pub(in crate::eureka) fn after_client_lists_changed(&mut self, p: ProcessId) {
        self.notify_ribbon_updaters(p);
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.process != p
                || route.spring.is_none()
                || route.load_balancer.cache_enabled
                || route.load_balancer.configurations != SupplierKind::Default
            {
                continue;
            }
            let now_us = self.now().ms() as f64 * 1000.0;
            self.flush_route(r, now_us);
            self.set_spring_list(r, self.client_list(r));
        }
    }

    /// Per-request mode: the caching supplier re-reads an expired or empty entry (Caffeine's
    /// `expireAfterWrite`: expired from `written + ttl` on); without the cache every request
    /// reads the Eureka client's list.
    fn spring_refresh_if_stale(&mut self, r: RouteId, now_ms: u64) {
        let route = &self.routes[r];
        let config = &route.load_balancer;
        if config.configurations != SupplierKind::Default {
            return;
        }
        let Some(lb) = route.spring.as_ref() else {
            return;
        };
        let stale = !config.cache_enabled
            || lb.servers.is_empty()
            || lb
                .written_ms
                .is_none_or(|w| now_ms >= w + config.cache_ttl_ms);
        if stale {
            let cache_enabled = config.cache_enabled;
            self.set_spring_list(r, self.client_list(r));
            if cache_enabled {
                self.spring_cache_written(r, now_ms, now_ms as f64 * 1000.0);
            }
        }
    }

    /// One request at `now_ms` through the Spring Cloud LoadBalancer of route `r`.
    pub(super) fn spring_request(
        &mut self,
        r: RouteId,
        now_ms: u64,
        per_attempt: bool,
    ) -> RequestOutcome {
        if self.request_mode == RequestMode::PerRequest {
            self.spring_refresh_if_stale(r, now_ms);
        }
        let route = &mut self.routes[r];
        let retries = Retries::of(&route.load_balancer, route.get);
        let costs = route.costs;
        let Some(lb) = route.spring.as_mut() else {
            return RequestOutcome::default();
        };
        let processes = &self.processes;
        let answer = |p: ProcessId| processes[p].answer();
        let walked = walk_one(&mut lb.position, &lb.servers, &answer, retries, costs);
        if walked.first.is_none() {
            let o = if per_attempt {
                Observation::NoServer { route: r }
            } else {
                Observation::NoServers { route: r, count: 1 }
            };
            self.observe(o);
            return RequestOutcome::default();
        }
        if per_attempt {
            // Every attempt, the accepted last one included.
            for &p in &walked.refused {
                self.observe(Observation::Attempt {
                    route: r,
                    process: p,
                    dead: true,
                });
            }
        } else {
            for &p in &walked.refused {
                self.observe(Observation::DeadHits {
                    route: r,
                    process: p,
                    count: 1,
                    last: SimTime(now_ms),
                });
            }
        }
        for &(process, delay_ms) in &walked.delays {
            self.observe(Observation::ConnectTimeouts {
                route: r,
                process,
                delay_ms,
            });
        }
        RequestOutcome {
            first: walked.first,
            failed: walked.failed,
            accepted: walked.accepted,
        }
    }

    /// Batched mode: the requests of route `r` in `(from, until]` over its constant list.
    pub(super) fn flush_spring(&mut self, r: RouteId, from: f64, until: f64) {
        let route = &mut self.routes[r];
        let retries = Retries::of(&route.load_balancer, route.get);
        let costs = route.costs;
        let (Some(arrivals), Some(lb)) = (route.arrivals.as_mut(), route.spring.as_mut()) else {
            return;
        };
        let span = arrivals.count(&mut route.rng, from, until);
        let requests = span.requests;
        if requests == 0 {
            return;
        }
        if lb.servers.is_empty() {
            self.observe(Observation::NoServers {
                route: r,
                count: requests,
            });
            return;
        }
        let processes = &self.processes;
        let mut served = None;
        if route.service_us > 0.0 {
            let answer = |p: ProcessId| processes[p].answer();
            let servers = &lb.servers;
            let accepted = super::inflight::Accepted::walk(
                lb.position,
                retries.period(servers.len()),
                |pos| walk_one(pos, servers, &answer, retries, costs).accepted,
            );
            served = Some((arrivals.span_times(&span), accepted));
        }
        if lb.servers.iter().all(|&p| processes[p].serving) {
            if lb.servers.len() > 1 {
                lb.position += requests;
            }
            if let Some((times, accepted)) = served {
                route.note_served_span(until, requests, times, accepted);
            }
            return;
        }
        let answer = |p: ProcessId| processes[p].answer();
        let walked = walk_many(
            &mut lb.position,
            &lb.servers,
            &answer,
            retries,
            costs,
            requests,
        );
        let lasts: Vec<u64> = walked.refused.iter().map(|&(_, _, last)| last).collect();
        // One sample of the span's instants serves the last dead hits and the in-flight count.
        let times = match served.as_mut() {
            Some((kept, _)) => lasts
                .iter()
                .map(|&i| kept.time_of(&mut route.rng, i))
                .collect(),
            None => arrivals.times_of(&mut route.rng, &span, &lasts),
        };
        if let Some((times, accepted)) = served {
            route.note_served_span(until, requests, times, accepted);
        }
        let dead: Vec<(ProcessId, u64, u64)> = walked
            .refused
            .iter()
            .zip(times)
            .map(|(&(process, count, _), at_us)| (process, count, (at_us / 1000.0) as u64))
            .collect();
        self.observe_span(r, &dead, &walked.delays, &walked.failed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retries(servers: u32, avoid_previous: bool) -> Retries {
        Retries {
            servers,
            same: 1,
            avoid_previous,
        }
    }

    /// `RoundRobinLoadBalancer`: `position.incrementAndGet() % size`; one instance does not
    /// move the position.
    #[test]
    fn round_robin_increments_then_picks() {
        let mut position = 999;
        let picks: Vec<_> = (0..4)
            .map(|_| choose(&mut position, &[10, 11, 12], None).unwrap())
            .collect();
        // 1000 % 3 = 1, then 2, 0, 1.
        assert_eq!(picks, [1, 2, 0, 1]);
        assert_eq!(choose(&mut position, &[10], None), Some(0));
        assert_eq!(position, 1003);
        assert_eq!(choose(&mut position, &[], None), None);
    }

    /// `RetryAwareServiceInstanceListSupplier`: the retry chooses among the others; of two, the
    /// other one is returned without moving the position.
    #[test]
    fn retry_avoids_the_previous_instance() {
        let serving = |p: ProcessId| {
            if p == 10 {
                Answer::Accepts
            } else {
                Answer::Refuses
            }
        };
        let free = AttemptCosts::default();
        let mut position = 0;
        // Position 1 of [10, 11] is 11 (refused); the retry list is [10], a single instance.
        let w = walk_one(&mut position, &[10, 11], &serving, retries(2, true), free);
        assert_eq!(w.refused, [11]);
        assert!(!w.failed);
        assert_eq!(position, 1);
        // Without avoid-previous the retry moves on: position 2 -> 10.
        let mut position = 0;
        let w = walk_one(&mut position, &[10, 11], &serving, retries(2, false), free);
        assert_eq!((w.refused.as_slice(), position), (&[11][..], 2));
        // Three instances, 11 refuses: the retry picks among [10, 12] at position 2 -> 12.
        let mut position = 0;
        let w = walk_one(
            &mut position,
            &[10, 11, 12],
            &serving,
            retries(2, true),
            free,
        );
        assert_eq!(w.refused, [11]);
        assert_eq!(position, 2);
    }

    /// The cycle summation equals request-by-request walking.
    #[test]
    fn many_requests_sum_like_single_ones() {
        let lists: [&[ProcessId]; 3] = [&[1, 2, 3, 4, 5], &[1, 2], &[7, 3, 9, 4]];
        for servers in lists {
            for (dead, vanished) in [
                (&[3usize][..], &[][..]),
                (&[1, 2][..], &[2usize][..]),
                (&[9, 7][..], &[9, 7][..]),
                (&[][..], &[4, 5][..]),
            ] {
                let serving = |p: ProcessId| {
                    if vanished.contains(&p) {
                        Answer::TimesOut
                    } else if dead.contains(&p) {
                        Answer::Refuses
                    } else {
                        Answer::Accepts
                    }
                };
                for (r, hystrix) in [
                    (retries(1, false), None),
                    (retries(2, true), None),
                    (retries(3, true), Some(1500)),
                    (retries(2, false), Some(500)),
                    (retries(2, false), Some(4000)),
                ] {
                    let costs = AttemptCosts {
                        connect_timeout_ms: 1000,
                        hystrix_timeout_ms: hystrix,
                    };
                    for requests in [0u64, 1, 7, 40, 1001] {
                        let mut a = 997u64;
                        let many = walk_many(&mut a, servers, &serving, r, costs, requests);
                        let mut b = 997u64;
                        let mut expected = ManyWalked::default();
                        for i in 0..requests {
                            let w = walk_one(&mut b, servers, &serving, r, costs);
                            for (p, delay_ms) in w.delays {
                                add_to(&mut expected.delays, p, delay_ms);
                            }
                            for p in w.refused {
                                match expected.refused.iter_mut().find(|e| e.0 == p) {
                                    Some(e) => {
                                        e.1 += 1;
                                        e.2 = i + 1;
                                    }
                                    None => expected.refused.push((p, 1, i + 1)),
                                }
                            }
                            if w.failed {
                                let first = w.first.unwrap();
                                match expected.failed.iter_mut().find(|e| e.0 == first) {
                                    Some(e) => e.1 += 1,
                                    None => expected.failed.push((first, 1)),
                                }
                            }
                        }
                        let sort = |mut m: ManyWalked| {
                            m.refused.sort();
                            m.failed.sort();
                            m.delays.sort();
                            m
                        };
                        assert_eq!(
                            sort(many),
                            sort(expected),
                            "{servers:?} {dead:?} {vanished:?} {r:?} {costs:?} {requests}"
                        );
                        assert_eq!(a, b);
                    }
                }
            }
        }
    }
}
