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

/// How long after the request that read the list Caffeine stamps the entry's write time:
/// `CachingServiceInstanceListSupplier` puts the list in the cache once the delegate's flux has
/// given it (`onCacheMissResume(...).andWriteWith(... cache.put ...)`), and Caffeine stamps the
/// write at the put (`BoundedLocalCache`: expired when `now - writeTime >= expiresAfterWrite`).
/// So a request exactly one TTL after the reading one still hits, and with requests on a fixed
/// grid the list is read again one grid step later: the real LoadBalancer callers of the
/// conformance matrix refreshed every 1 050 ms at a 1 000 ms TTL and a 50 ms grid (a break in
/// their round robin order, 122 intervals, mean 1 039 ms, mode 1 050). The model's time runs in
/// whole ms, so the entry lives one ms longer than its TTL.
pub const WRITTEN_AFTER_READ_MS: u64 = 1;

use crate::engine::RngStream;
use crate::scenario::{CallPolicy, LoadBalancerConfig, SupplierKind};

use super::super::ids::ProcessId;
use super::super::observe::Observation;
use super::arrivals::Arrivals;
use super::attempt::{Answer, AttemptCosts};
use super::inflight::Accepted;
use super::{AttemptEffect, AttemptOutput, Balancer, BalancerEffect, RequestOutcome};

/// `RoundRobinLoadBalancer` and its instance-list supplier for one called service.
#[derive(Debug)]
pub struct SpringLoadBalancer {
    /// `RoundRobinLoadBalancer#position`, seeded `new Random().nextInt(1000)`.
    position: u64,
    /// The list the round robin chooses from (the cached list, the health-checked list, or the
    /// Eureka client's list when caching is off).
    servers: Vec<ProcessId>,
    /// Caching supplier: when the cached list expires, `ttl` after it was written (`None`:
    /// nothing valid is cached).
    expires_ms: Option<u64>,
    /// Health-check supplier: the instances it checks (the first list, or the last refetched).
    checked: Vec<ProcessId>,
    /// Guards this balancer's timers.
    generation: u32,
    /// Batched mode: the instant (µs) of the request that will find the cache expired.
    pending_miss_us: Option<f64>,
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

/// What a Spring Cloud LoadBalancer rule reads of its caller at one instant.
pub struct SpringInputs<'a> {
    pub now_ms: u64,
    /// Batched request counting: the cache's expiry is a timer and the request that finds it
    /// expired is drawn ahead (module doc); per-request mode checks the entry at each request.
    pub batched: bool,
    /// The caller's `spring.cloud.loadbalancer.*` settings.
    pub config: &'a LoadBalancerConfig,
    /// The caller's retries ([`CallPolicy`]) and what an attempt costs.
    pub policy: &'a CallPolicy,
    pub costs: AttemptCosts,
    /// The Eureka client's UP list of the called app (`DiscoveryClientServiceInstanceListSupplier`
    /// → `EurekaDiscoveryClient#getInstances`, from the client's local cache).
    pub client_list: &'a [ProcessId],
    /// How each instance answers a connection; its `/actuator/health` answers exactly when it
    /// accepts.
    pub answer: &'a dyn Fn(ProcessId) -> Answer,
}

/// The route's request stream, for the rules that wait for a request: the position's seed and,
/// in batched mode, the request that will find the cache expired.
pub struct Traffic<'a> {
    /// The route's own random stream.
    pub rng: &'a mut RngStream,
    /// The route's arrivals (`None`: no traffic).
    pub arrivals: Option<&'a mut Arrivals>,
    /// Batched mode: requests after this instant (µs) are not yet counted (`None`: none is
    /// counted until the pending miss's request, which is handled singly).
    pub count_from_us: &'a mut Option<f64>,
}

/// What a Spring Cloud LoadBalancer rule asks of the world, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum SpringEffect {
    /// The supplier (re)read its list: `old` was replaced by `new` (observed as a refresh and
    /// the instances that entered and left).
    ListChanged {
        old: Vec<ProcessId>,
        new: Vec<ProcessId>,
    },
    /// Arm `timer` `delay_ms` from now, guarded by `generation`.
    Schedule {
        delay_ms: u64,
        timer: SpringTimer,
        generation: u32,
    },
    /// An attempt of the request at hand (observed one by one).
    Attempt(AttemptEffect),
    /// Batched mode: the request at `at_us` that found the cache expired went through the
    /// balancer singly (kept for the in-flight count, observed if it failed).
    Served { at_us: f64, outcome: RequestOutcome },
}

impl AttemptOutput for Vec<SpringEffect> {
    fn report(&mut self, attempt: AttemptEffect) {
        self.push(SpringEffect::Attempt(attempt));
    }
}

impl SpringLoadBalancer {
    /// The balancer's creation at the first request (`LoadBalancerClientFactory` creates the
    /// child context lazily): the position is seeded from the route's stream, the supplier
    /// reads its first list, and the health-check supplier starts its rounds. `request_us` is
    /// the instant of the request that creates it.
    pub fn create(
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        request_us: f64,
        out: &mut Vec<SpringEffect>,
    ) -> SpringLoadBalancer {
        let mut lb = SpringLoadBalancer::seeded(traffic);
        let config = cx.config;
        match config.configurations {
            SupplierKind::Default => {
                lb.set_list(cx.client_list.to_vec(), out);
                if config.cache_enabled {
                    lb.cache_written(cx, traffic, request_us, out);
                }
            }
            SupplierKind::HealthCheck => {
                lb.checked = cx.client_list.to_vec();
                if config.health_check_initial_delay_ms == 0 {
                    lb.health_check_round(cx, out);
                    lb.schedule(
                        config.health_check_interval_ms,
                        SpringTimer::HealthCheck,
                        out,
                    );
                } else {
                    // Nothing is checked yet: the first list is used as it is.
                    lb.set_list(lb.checked.clone(), out);
                    lb.schedule(
                        config.health_check_initial_delay_ms,
                        SpringTimer::HealthCheck,
                        out,
                    );
                }
                if config.refetch_instances {
                    lb.schedule(
                        config.refetch_instances_interval_ms,
                        SpringTimer::Refetch,
                        out,
                    );
                }
            }
        }
        lb
    }

    /// A balancer with nothing read yet, its position seeded from the route's stream.
    fn seeded(traffic: &mut Traffic<'_>) -> SpringLoadBalancer {
        SpringLoadBalancer {
            position: traffic.rng.below(1000),
            servers: Vec::new(),
            expires_ms: None,
            checked: Vec::new(),
            generation: 0,
            pending_miss_us: None,
        }
    }

    /// `simulation.start = "steady"`: the balancer as after a long run with traffic. The
    /// caching supplier's entry was written by the first request after its previous expiry, so
    /// it expires at a uniform phase of the ttl (drawn from the route's stream); the health-check
    /// supplier's rounds and refetches run at uniform phases of their intervals, over the
    /// client's list, checked once now. The position comes from the route's stream, as at
    /// creation (its value modulo the list size is what matters).
    pub fn create_steady(
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        out: &mut Vec<SpringEffect>,
    ) -> SpringLoadBalancer {
        let mut lb = SpringLoadBalancer::seeded(traffic);
        let config = cx.config;
        match config.configurations {
            SupplierKind::Default => {
                lb.set_list(cx.client_list.to_vec(), out);
                if config.cache_enabled && !lb.servers.is_empty() {
                    let expires_in = traffic.rng.phase(config.cache_ttl_ms);
                    lb.expires_ms = Some(cx.now_ms + expires_in);
                    if cx.batched {
                        lb.schedule(expires_in, SpringTimer::CacheExpired, out);
                    }
                }
            }
            SupplierKind::HealthCheck => {
                lb.checked = cx.client_list.to_vec();
                lb.health_check_round(cx, out);
                let next = traffic.rng.phase(config.health_check_interval_ms);
                lb.schedule(next, SpringTimer::HealthCheck, out);
                if config.refetch_instances {
                    let next = traffic.rng.phase(config.refetch_instances_interval_ms);
                    lb.schedule(next, SpringTimer::Refetch, out);
                }
            }
        }
        lb
    }

    /// The list the round robin chooses from.
    pub fn servers(&self) -> &[ProcessId] {
        &self.servers
    }

    /// Batched mode: the cache is empty and the request that will read it is scheduled.
    pub fn miss_pending(&self) -> bool {
        self.pending_miss_us.is_some()
    }

    /// Whether a timer armed with `generation` is still this balancer's.
    pub fn is_current(&self, generation: u32) -> bool {
        self.generation == generation
    }

    /// A timer fired (a stale one does nothing): the cache entry expired (batched mode: the
    /// next request is drawn and waited for), that request arrived (it re-reads the list, goes
    /// through the balancer and the new entry is written), a health-check round, or a refetch
    /// of the instances to check (a new list starts a new health-check flux on it at once).
    pub fn on_timer(
        &mut self,
        generation: u32,
        timer: SpringTimer,
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        out: &mut Vec<SpringEffect>,
    ) {
        if !self.is_current(generation) {
            return;
        }
        let config = cx.config;
        match timer {
            SpringTimer::CacheExpired => {
                self.pend_cache_miss(cx, traffic, cx.now_ms as f64 * 1000.0, out);
            }
            SpringTimer::CacheMiss => {
                let Some(at) = self.pending_miss_us.take() else {
                    return;
                };
                self.set_list(cx.client_list.to_vec(), out);
                let outcome = self.request(cx, traffic, out);
                out.push(SpringEffect::Served { at_us: at, outcome });
                *traffic.count_from_us = Some(at);
                self.cache_written(cx, traffic, at, out);
            }
            SpringTimer::HealthCheck => {
                self.health_check_round(cx, out);
                self.schedule(
                    config.health_check_interval_ms,
                    SpringTimer::HealthCheck,
                    out,
                );
            }
            SpringTimer::Refetch => {
                self.checked = cx.client_list.to_vec();
                // A new list starts a new health-check flux on it at once.
                self.health_check_round(cx, out);
                self.schedule(
                    config.refetch_instances_interval_ms,
                    SpringTimer::Refetch,
                    out,
                );
            }
        }
    }

    /// Whether the balancer reads the Eureka client's list at every request
    /// (`cache.enabled = false` with the default supplier), and so follows its new lists at once.
    pub fn follows_client_lists(config: &LoadBalancerConfig) -> bool {
        !config.cache_enabled && config.configurations == SupplierKind::Default
    }

    /// The Eureka client has new lists: a balancer without cache reads them at once
    /// ([`SpringLoadBalancer::follows_client_lists`]).
    pub fn on_client_lists_changed(&mut self, cx: &SpringInputs<'_>, out: &mut Vec<SpringEffect>) {
        if Self::follows_client_lists(cx.config) {
            self.set_list(cx.client_list.to_vec(), out);
        }
    }

    /// One request now through `RoundRobinLoadBalancer` with the retry policy ([`walk_one`]);
    /// in per-request mode the caching supplier first re-reads a stale entry
    /// ([`SpringLoadBalancer::refresh_if_stale`]). Reports to `out` that nothing was chosen, or
    /// every refused or timed-out attempt in order and then the connect-timeout delay waited on
    /// each instance.
    pub fn request(
        &mut self,
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        out: &mut Vec<SpringEffect>,
    ) -> RequestOutcome {
        if !cx.batched {
            self.refresh_if_stale(cx, traffic, out);
        }
        let retries = Retries::of(cx.policy);
        let walked = walk_one(
            &mut self.position,
            &self.servers,
            cx.answer,
            retries,
            cx.costs,
        );
        if walked.first.is_none() {
            out.no_server();
            return RequestOutcome::default();
        }
        for &p in &walked.refused {
            out.attempt(p, true);
        }
        for &(process, delay_ms) in &walked.delays {
            out.connect_timeout(process, delay_ms);
        }
        RequestOutcome {
            first: walked.first,
            failed: walked.failed,
            accepted: walked.accepted,
        }
    }

    /// Batched mode: which instance accepts each request from the current position over the
    /// constant list (for the in-flight count): [`walk_one`]'s course depends only on the
    /// position modulo [`Retries::period`].
    fn accepted_walk(
        &self,
        answer: &dyn Fn(ProcessId) -> Answer,
        policy: &CallPolicy,
        costs: AttemptCosts,
    ) -> Accepted {
        let retries = Retries::of(policy);
        let servers = &self.servers;
        Accepted::walk(self.position, retries.period(servers.len()), |pos| {
            walk_one(pos, servers, answer, retries, costs).accepted
        })
    }

    /// Batched mode: `requests` requests over the constant, non-empty list. `None` when every
    /// instance accepts: only the position moves (`incrementAndGet` per request, not with a
    /// single instance); otherwise what [`walk_many`] counts.
    fn walk_requests(
        &mut self,
        answer: &dyn Fn(ProcessId) -> Answer,
        policy: &CallPolicy,
        costs: AttemptCosts,
        requests: u64,
    ) -> Option<ManyWalked> {
        if self.servers.iter().all(|&p| answer(p).accepts()) {
            if self.servers.len() > 1 {
                self.position += requests;
            }
            return None;
        }
        let retries = Retries::of(policy);
        Some(walk_many(
            &mut self.position,
            &self.servers,
            answer,
            retries,
            costs,
            requests,
        ))
    }

    fn set_list(&mut self, fresh: Vec<ProcessId>, out: &mut Vec<SpringEffect>) {
        let old = std::mem::replace(&mut self.servers, fresh.clone());
        out.push(SpringEffect::ListChanged { old, new: fresh });
    }

    fn schedule(&self, delay_ms: u64, timer: SpringTimer, out: &mut Vec<SpringEffect>) {
        out.push(SpringEffect::Schedule {
            delay_ms,
            timer,
            generation: self.generation,
        });
    }

    /// `CachingServiceInstanceListSupplier` wrote the list now (its entry expires
    /// [`WRITTEN_AFTER_READ_MS`] after the TTL counted from the reading request); an empty list is not kept (it
    /// counts as a miss), so the next request reads again. Batched mode arms the expiry
    /// (per-request mode checks at each request); `request_us` is the instant of the request
    /// that read the list.
    fn cache_written(
        &mut self,
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        request_us: f64,
        out: &mut Vec<SpringEffect>,
    ) {
        let lifetime = cx.config.cache_ttl_ms + WRITTEN_AFTER_READ_MS;
        self.expires_ms = (!self.servers.is_empty()).then_some(cx.now_ms + lifetime);
        if !cx.batched {
            return;
        }
        if self.expires_ms.is_some() {
            self.schedule(lifetime, SpringTimer::CacheExpired, out);
        } else {
            self.pend_cache_miss(cx, traffic, request_us, out);
        }
    }

    /// Batched mode: nothing valid is cached from `from_us` on, so the next request re-reads
    /// the list. Draws that request and schedules the miss at it; no request is counted before
    /// it (none arrives in between, by construction).
    fn pend_cache_miss(
        &mut self,
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        from_us: f64,
        out: &mut Vec<SpringEffect>,
    ) {
        *traffic.count_from_us = None;
        let Some(arrivals) = traffic.arrivals.as_deref_mut() else {
            return;
        };
        let Some(at) = arrivals.next_within(traffic.rng, from_us, f64::INFINITY) else {
            return;
        };
        self.pending_miss_us = Some(at);
        self.expires_ms = None;
        let at_ms = ((at / 1000.0) as u64).max(cx.now_ms);
        self.schedule(at_ms - cx.now_ms, SpringTimer::CacheMiss, out);
    }

    /// `HealthCheckServiceInstanceListSupplier#healthCheckFlux`: every checked instance whose
    /// `/actuator/health` answers is kept. A process that does not accept connections fails
    /// its check; one that was taken out of Eureka but still serves passes it (the health
    /// endpoint knows nothing of Eureka's status).
    fn health_check_round(&mut self, cx: &SpringInputs<'_>, out: &mut Vec<SpringEffect>) {
        let healthy: Vec<ProcessId> = self
            .checked
            .iter()
            .copied()
            .filter(|&p| (cx.answer)(p).accepts())
            .collect();
        self.set_list(healthy, out);
    }

    /// Per-request mode: the caching supplier re-reads an expired or empty entry (Caffeine's
    /// `expireAfterWrite`: expired from `written + ttl` on); without the cache every request
    /// reads the Eureka client's list.
    fn refresh_if_stale(
        &mut self,
        cx: &SpringInputs<'_>,
        traffic: &mut Traffic<'_>,
        out: &mut Vec<SpringEffect>,
    ) {
        let config = cx.config;
        if config.configurations != SupplierKind::Default {
            return;
        }
        let stale = !config.cache_enabled
            || self.servers.is_empty()
            || self.expires_ms.is_none_or(|e| cx.now_ms >= e);
        if stale {
            self.set_list(cx.client_list.to_vec(), out);
            if config.cache_enabled {
                self.cache_written(cx, traffic, cx.now_ms as f64 * 1000.0, out);
            }
        }
    }
}

impl super::Route {
    /// Batched mode: the requests in `(from, until]` over the constant list
    /// ([`SpringLoadBalancer::walk_requests`]); `answer` is how each instance answers the
    /// caller.
    pub(in crate::eureka::route) fn count_spring(
        &mut self,
        from: f64,
        until: f64,
        answer: &dyn Fn(ProcessId) -> Answer,
        out: &mut Vec<BalancerEffect>,
    ) {
        let tracks_in_flight = self.tracks_in_flight();
        let Balancer::Spring { lb: Some(lb) } = &mut self.balancer else {
            return;
        };
        let Some(arrivals) = self.arrivals.as_mut() else {
            return;
        };
        let span = arrivals.count(&mut self.rng, from, until);
        let requests = span.requests;
        if requests == 0 {
            return;
        }
        if lb.servers().is_empty() {
            out.push(BalancerEffect::Observe(Observation::NoServers {
                route: self.id,
                count: requests,
            }));
            return;
        }
        let (policy, costs) = (&self.policy, self.costs);
        let served = tracks_in_flight.then(|| {
            let accepted = lb.accepted_walk(answer, policy, costs);
            (arrivals.span_times(&span), accepted)
        });
        let Some(walked) = lb.walk_requests(answer, policy, costs, requests) else {
            if let Some((times, accepted)) = served {
                self.note_served_span(until, requests, times, accepted);
            }
            return;
        };
        self.settle_span(
            (from, until),
            &span,
            served,
            &walked.refused,
            &walked.delays,
            &walked.failed,
            out,
        );
    }
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
/// max-retries-on-same-service-instance`), both only for GET unless `retry-on-all-operations`;
/// none unless the caller's stack retries at all (`CallerConfig::policy`: a RestTemplate or
/// Feign with spring-retry, a WebClient with `retry.enabled = true` set; FACTS.md §14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Retries {
    servers: u32,
    same: u32,
    avoid_previous: bool,
}

impl Retries {
    fn of(policy: &CallPolicy) -> Retries {
        Retries {
            servers: policy.servers,
            same: policy.same,
            avoid_previous: policy.avoid_previous,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds request `i`'s (0-based) walk to the totals [`walk_many`] counts.
    fn add_walk(expected: &mut ManyWalked, w: Walked, i: u64) {
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
        if w.failed
            && let Some(first) = w.first
        {
            add_to(&mut expected.failed, first, 1);
        }
    }

    /// The totals in a fixed order, to compare.
    fn sorted(mut m: ManyWalked) -> ManyWalked {
        m.refused.sort();
        m.failed.sort();
        m.delays.sort();
        m
    }

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
                        read_timeout_ms: 1000,
                        hystrix_timeout_ms: hystrix,
                    };
                    for requests in [0u64, 1, 7, 40, 1001] {
                        let mut a = 997u64;
                        let many = walk_many(&mut a, servers, &serving, r, costs, requests);
                        let mut b = 997u64;
                        let mut expected = ManyWalked::default();
                        for i in 0..requests {
                            let w = walk_one(&mut b, servers, &serving, r, costs);
                            add_walk(&mut expected, w, i);
                        }
                        assert_eq!(
                            sorted(many),
                            sorted(expected),
                            "{servers:?} {dead:?} {vanished:?} {r:?} {costs:?} {requests}"
                        );
                        assert_eq!(a, b);
                    }
                }
            }
        }
    }

    // The suppliers driven alone: what each rule reads is given, the effects are compared.

    use crate::engine::StreamFactory;

    /// A caller without retries (`CallerConfig::policy` for a stack that does not retry).
    const NO_RETRY: CallPolicy = CallPolicy::NO_RETRY;

    fn accepts(_: ProcessId) -> Answer {
        Answer::Accepts
    }

    /// Every instance accepts but `dead`, which refuses.
    fn refuses(dead: ProcessId) -> impl Fn(ProcessId) -> Answer {
        move |p| {
            if p == dead {
                Answer::Refuses
            } else {
                Answer::Accepts
            }
        }
    }

    fn inputs<'a>(
        now_ms: u64,
        batched: bool,
        config: &'a LoadBalancerConfig,
        client_list: &'a [ProcessId],
        answer: &'a dyn Fn(ProcessId) -> Answer,
    ) -> SpringInputs<'a> {
        SpringInputs {
            now_ms,
            batched,
            config,
            policy: &NO_RETRY,
            costs: AttemptCosts::default(),
            client_list,
            answer,
        }
    }

    /// A route's request stream: one request a second on a fixed grid from `first_us`.
    struct Stream {
        rng: RngStream,
        arrivals: Option<Arrivals>,
        count_from_us: Option<f64>,
    }

    impl Stream {
        fn fixed(first_us: f64) -> Stream {
            let mut arrivals = Arrivals::new(1.0, true).unwrap();
            arrivals.anchor(first_us);
            Stream {
                rng: StreamFactory::new(1).stream("route/test"),
                arrivals: Some(arrivals),
                count_from_us: None,
            }
        }

        fn traffic(&mut self) -> Traffic<'_> {
            Traffic {
                rng: &mut self.rng,
                arrivals: self.arrivals.as_mut(),
                count_from_us: &mut self.count_from_us,
            }
        }
    }

    fn listed(new: &[ProcessId], old: &[ProcessId]) -> SpringEffect {
        SpringEffect::ListChanged {
            old: old.to_vec(),
            new: new.to_vec(),
        }
    }

    fn timer(delay_ms: u64, timer: SpringTimer) -> SpringEffect {
        SpringEffect::Schedule {
            delay_ms,
            timer,
            generation: 0,
        }
    }

    /// Steady start (FACTS.md §9): the caching supplier holds the client's list and its entry
    /// expires at a uniform phase of the 35 s ttl, in `(0, 35 s]`; batched mode arms that expiry,
    /// per-request mode finds the entry stale from then on. Over 200 routes the phases spread
    /// over the ttl: some in each of its quarters. The health-check supplier checks the list
    /// once now (a refusing instance is dropped) and its next round comes within 25 s.
    #[test]
    fn a_steady_balancer_expires_at_a_phase_of_its_ttl() {
        let config = LoadBalancerConfig::default();
        let mut quarters = [0u32; 4];
        let mut stream = Stream::fixed(0.0);
        for _ in 0..200 {
            let mut out = Vec::new();
            let cx = inputs(0, true, &config, &[3, 4], &accepts);
            let lb = SpringLoadBalancer::create_steady(&cx, &mut stream.traffic(), &mut out);
            let expires = lb.expires_ms.expect("cached");
            assert!((1..=35_000).contains(&expires), "{expires}");
            assert_eq!(
                out,
                [
                    listed(&[3, 4], &[]),
                    timer(expires, SpringTimer::CacheExpired)
                ]
            );
            quarters[((expires - 1) / 8_750) as usize] += 1;
        }
        assert!(quarters.iter().all(|&q| q > 20), "{quarters:?}");

        let mut out = Vec::new();
        let cx = inputs(0, false, &config, &[3, 4], &accepts);
        let mut lb = SpringLoadBalancer::create_steady(&cx, &mut stream.traffic(), &mut out);
        assert_eq!(out, [listed(&[3, 4], &[])], "per-request: no timer");
        let expires = lb.expires_ms.unwrap();
        out.clear();
        let cx = inputs(expires - 1, false, &config, &[4], &accepts);
        lb.request(&cx, &mut stream.traffic(), &mut out);
        assert_eq!(lb.servers(), [3, 4], "still fresh 1 ms before the expiry");
        let cx = inputs(expires, false, &config, &[4], &accepts);
        lb.request(&cx, &mut stream.traffic(), &mut out);
        assert_eq!(lb.servers(), [4], "re-read at the expiry");

        let health = LoadBalancerConfig {
            configurations: SupplierKind::HealthCheck,
            ..LoadBalancerConfig::default()
        };
        let refuses_3 = refuses(3);
        let mut out = Vec::new();
        let cx = inputs(0, true, &health, &[3, 4], &refuses_3);
        let lb = SpringLoadBalancer::create_steady(&cx, &mut stream.traffic(), &mut out);
        assert_eq!(lb.servers(), [4]);
        match out.last() {
            Some(SpringEffect::Schedule {
                delay_ms,
                timer: SpringTimer::HealthCheck,
                ..
            }) => assert!((1..=health.health_check_interval_ms).contains(delay_ms)),
            other => panic!("{other:?}"),
        }
    }

    /// `CachingServiceInstanceListSupplier` with Caffeine's `expireAfterWrite` (FACTS.md §9):
    /// read at the first request (1 s) and written just after it ([`WRITTEN_AFTER_READ_MS`]),
    /// the entry holds until 1 + 35 + 0.001 s and is expired from then on, so a request at 36 s
    /// (one TTL after the read) still uses it and one at 36.001 s re-reads the client's list,
    /// which writes the entry again (expired from 36.001 + 35.001 = 71.002 s).
    #[test]
    fn cache_entry_expires_ttl_after_its_write() {
        let config = LoadBalancerConfig::default();
        let mut stream = Stream::fixed(1_000_000.0);
        let mut out = Vec::new();
        let cx = inputs(1_000, false, &config, &[1, 2, 3], &accepts);
        let mut lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1e6, &mut out);
        assert_eq!(out, [listed(&[1, 2, 3], &[])]);
        // The client's list changes; the cache does not see it before the expiry.
        for (now_ms, expected) in [
            (36_000, vec![]),
            (36_001, vec![listed(&[1, 2], &[1, 2, 3])]),
            (71_001, vec![]),
            (71_002, vec![listed(&[1, 2], &[1, 2])]),
        ] {
            out.clear();
            let cx = inputs(now_ms, false, &config, &[1, 2], &accepts);
            lb.request(&cx, &mut stream.traffic(), &mut out);
            let lists: Vec<_> = out
                .iter()
                .filter(|e| matches!(e, SpringEffect::ListChanged { .. }))
                .cloned()
                .collect();
            assert_eq!(lists, expected, "at {now_ms} ms");
        }
    }

    /// An empty list is not kept (the supplier caches only a non-empty list, FACTS.md §9): per
    /// request, the next request reads again; batched, no expiry is armed and the next request
    /// (the fixed grid's next instant, 2.0005 s) is waited for, with nothing counted meanwhile.
    #[test]
    fn an_empty_list_is_not_cached() {
        let config = LoadBalancerConfig::default();
        let mut stream = Stream::fixed(1_000_500.0);
        let mut out = Vec::new();
        let cx = inputs(1_000, false, &config, &[], &accepts);
        let mut lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1_000_500.0, &mut out);
        assert_eq!(lb.expires_ms, None);
        out.clear();
        let cx = inputs(1_001, false, &config, &[5], &accepts);
        lb.request(&cx, &mut stream.traffic(), &mut out);
        assert_eq!(out[0], listed(&[5], &[]));
        // Read at 1.001 s, expires ttl = 35 s and the write's 1 ms later.
        assert_eq!(lb.expires_ms, Some(36_002));

        let mut out = Vec::new();
        stream.count_from_us = Some(0.0);
        let cx = inputs(1_000, true, &config, &[], &accepts);
        let lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1_000_500.0, &mut out);
        assert_eq!(
            out,
            [listed(&[], &[]), timer(1_000, SpringTimer::CacheMiss)]
        );
        assert_eq!(lb.pending_miss_us, Some(2_000_500.0));
        assert!(lb.miss_pending());
        assert_eq!(stream.count_from_us, None);
    }

    /// Batched mode (module doc): the expiry is a timer `ttl` and the write's 1 ms after the read
    /// (36.001 s); at it the next request is drawn (on the fixed grid from 1.0005 s, counted up
    /// to 36.001 s: the one at 36.0005 s still used the entry, so 37.0005 s) and the miss is
    /// scheduled in its millisecond; the miss re-reads the list, sends that request
    /// through the round robin (position 0 + 1 over [2, 3] picks 3, which refuses: without
    /// retries the request fails), counts again from it and writes the entry.
    #[test]
    fn batched_expiry_waits_for_the_request_that_finds_it() {
        let config = LoadBalancerConfig::default();
        let mut stream = Stream::fixed(1_000_500.0);
        let mut out = Vec::new();
        let cx = inputs(1_000, true, &config, &[1, 2], &accepts);
        let mut lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1_000_500.0, &mut out);
        assert_eq!(
            out,
            [
                listed(&[1, 2], &[]),
                timer(35_001, SpringTimer::CacheExpired)
            ]
        );
        // The world counts the requests up to the timer's instant first.
        let arrivals = stream.arrivals.as_mut().unwrap();
        assert_eq!(
            arrivals
                .count(&mut stream.rng, 1_000_500.0, 36.001e6)
                .requests,
            35
        );
        stream.count_from_us = Some(36.001e6);
        out.clear();
        let cx = inputs(36_001, true, &config, &[1, 2], &accepts);
        lb.on_timer(
            0,
            SpringTimer::CacheExpired,
            &cx,
            &mut stream.traffic(),
            &mut out,
        );
        assert_eq!(out, [timer(999, SpringTimer::CacheMiss)]);
        assert_eq!(lb.pending_miss_us, Some(37_000_500.0));
        assert_eq!(stream.count_from_us, None);

        out.clear();
        lb.position = 0;
        let refuses_3 = refuses(3);
        let cx = inputs(37_000, true, &config, &[2, 3], &refuses_3);
        lb.on_timer(
            0,
            SpringTimer::CacheMiss,
            &cx,
            &mut stream.traffic(),
            &mut out,
        );
        let outcome = RequestOutcome {
            first: Some(3),
            failed: true,
            accepted: None,
        };
        assert_eq!(
            out,
            [
                listed(&[2, 3], &[1, 2]),
                SpringEffect::Attempt(AttemptEffect::Attempt {
                    process: 3,
                    dead: true
                }),
                SpringEffect::Served {
                    at_us: 37_000_500.0,
                    outcome
                },
                timer(35_001, SpringTimer::CacheExpired),
            ]
        );
        assert_eq!(stream.count_from_us, Some(37_000_500.0));
        assert_eq!(lb.expires_ms, Some(72_001));
        assert!(!lb.miss_pending());
    }

    /// `HealthCheckServiceInstanceListSupplier#healthCheckFlux` (FACTS.md §9): each round keeps
    /// the checked instances whose health endpoint answers, i.e. that accept connections (a
    /// refusing one and one whose host vanished both fail); without `refetch-instances` the
    /// checked instances stay the first list, so a later instance (4) never appears. Rounds
    /// every `health-check.interval` (25 s), the first at once (`initial-delay` 0).
    #[test]
    fn health_check_round_keeps_only_serving_instances() {
        let config = LoadBalancerConfig {
            configurations: SupplierKind::HealthCheck,
            ..LoadBalancerConfig::default()
        };
        let mut stream = Stream::fixed(0.0);
        let mut out = Vec::new();
        let refuses_2 = refuses(2);
        let cx = inputs(1_000, true, &config, &[1, 2, 3], &refuses_2);
        let mut lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1e6, &mut out);
        assert_eq!(
            out,
            [
                listed(&[1, 3], &[]),
                timer(25_000, SpringTimer::HealthCheck)
            ]
        );
        out.clear();
        let vanished_1 = |p: ProcessId| {
            if p == 1 {
                Answer::TimesOut
            } else {
                Answer::Accepts
            }
        };
        let cx = inputs(26_000, true, &config, &[1, 2, 3, 4], &vanished_1);
        lb.on_timer(
            0,
            SpringTimer::HealthCheck,
            &cx,
            &mut stream.traffic(),
            &mut out,
        );
        assert_eq!(
            out,
            [
                listed(&[2, 3], &[1, 3]),
                timer(25_000, SpringTimer::HealthCheck)
            ]
        );
    }

    /// `health-check.initial-delay`: until the first round the first list is used unchecked;
    /// `refetch-instances`: every `refetch-instances-interval` the list is read again from the
    /// Eureka client and checked at once (a new list starts a new health-check flux).
    #[test]
    fn health_check_initial_delay_and_refetch() {
        let config = LoadBalancerConfig {
            configurations: SupplierKind::HealthCheck,
            health_check_initial_delay_ms: 10_000,
            refetch_instances: true,
            refetch_instances_interval_ms: 20_000,
            ..LoadBalancerConfig::default()
        };
        let mut stream = Stream::fixed(0.0);
        let mut out = Vec::new();
        let refuses_2 = refuses(2);
        let cx = inputs(1_000, true, &config, &[1, 2], &refuses_2);
        let mut lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1e6, &mut out);
        assert_eq!(
            out,
            [
                listed(&[1, 2], &[]),
                timer(10_000, SpringTimer::HealthCheck),
                timer(20_000, SpringTimer::Refetch),
            ]
        );
        out.clear();
        let refuses_5 = refuses(5);
        let cx = inputs(21_000, true, &config, &[4, 5], &refuses_5);
        lb.on_timer(
            0,
            SpringTimer::Refetch,
            &cx,
            &mut stream.traffic(),
            &mut out,
        );
        assert_eq!(
            out,
            [listed(&[4], &[1, 2]), timer(20_000, SpringTimer::Refetch)]
        );
        assert_eq!(lb.checked, [4, 5]);
    }

    /// `cache.enabled = false`: the default chain reads the Eureka client's list at every
    /// request, so it follows the client's new lists at once; with the cache (or the
    /// health-check chain) it does not. A timer of another generation does nothing.
    #[test]
    fn without_cache_the_list_follows_the_client() {
        let uncached = LoadBalancerConfig {
            cache_enabled: false,
            ..LoadBalancerConfig::default()
        };
        let health = LoadBalancerConfig {
            configurations: SupplierKind::HealthCheck,
            cache_enabled: false,
            ..LoadBalancerConfig::default()
        };
        assert!(SpringLoadBalancer::follows_client_lists(&uncached));
        assert!(!SpringLoadBalancer::follows_client_lists(
            &LoadBalancerConfig::default()
        ));
        assert!(!SpringLoadBalancer::follows_client_lists(&health));
        let mut stream = Stream::fixed(0.0);
        let mut out = Vec::new();
        let cx = inputs(1_000, true, &uncached, &[1], &accepts);
        let mut lb = SpringLoadBalancer::create(&cx, &mut stream.traffic(), 1e6, &mut out);
        assert_eq!(out, [listed(&[1], &[])]);
        out.clear();
        let cx = inputs(2_000, true, &uncached, &[1, 2], &accepts);
        lb.on_client_lists_changed(&cx, &mut out);
        assert_eq!(out, [listed(&[1, 2], &[1])]);
        out.clear();
        lb.on_timer(
            1,
            SpringTimer::CacheExpired,
            &cx,
            &mut stream.traffic(),
            &mut out,
        );
        assert!(out.is_empty());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::RngSeed;

        /// Up to 7 distinct instances in any order, each answering as drawn (mostly accepting).
        fn world() -> impl Strategy<Value = Vec<(ProcessId, Answer)>> {
            let answer = prop_oneof![
                4 => Just(Answer::Accepts),
                2 => Just(Answer::Refuses),
                1 => Just(Answer::TimesOut),
                1 => Just(Answer::ReadTimesOut),
            ];
            proptest::collection::btree_map(0usize..40, answer, 0..=7)
                .prop_map(|m| m.into_iter().collect::<Vec<_>>())
                .prop_shuffle()
        }

        fn retries() -> impl Strategy<Value = Retries> {
            (1u32..=3, 1u32..=2, any::<bool>()).prop_map(|(servers, same, avoid_previous)| {
                Retries {
                    servers,
                    same,
                    avoid_previous,
                }
            })
        }

        fn costs() -> impl Strategy<Value = AttemptCosts> {
            proptest::option::of(prop_oneof![Just(500u64), Just(1_500), Just(4_000)]).prop_map(
                |hystrix_timeout_ms| AttemptCosts {
                    connect_timeout_ms: 1_000,
                    read_timeout_ms: 3_000,
                    hystrix_timeout_ms,
                },
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 512,
                rng_seed: RngSeed::Fixed(14),
                ..ProptestConfig::default()
            })]

            /// An invariant of the property tests at the rule, for Spring Cloud LoadBalancer (FACTS.md §9): one
            /// request's walk (`RoundRobinLoadBalancer` with the retry policy, avoiding the
            /// instance just tried or not) only ever chooses instances of its list, first,
            /// refused and accepted alike; it finds none only in an empty list. And the batched
            /// walk is the per-request one summed ([`walk_many`] against `requests` calls of
            /// [`walk_one`] from the same position): the same refused attempts per instance with
            /// the index of the last request that had one, the same failed requests by first
            /// instance, the same delays waited, the same position after. Position below 2^30:
            /// `walk_many` is exact until a route has made 2^31 choices (its doc).
            #[test]
            fn the_walks_stay_in_the_list_and_many_sum_like_single_ones(
                world in world(),
                retries in retries(),
                costs in costs(),
                position in 0u64..(1 << 30),
                requests in 0u64..=300,
            ) {
                let servers: Vec<ProcessId> = world.iter().map(|&(p, _)| p).collect();
                let answer = |p: ProcessId| {
                    world.iter().find(|&&(q, _)| q == p).map_or(Answer::Refuses, |&(_, a)| a)
                };
                let mut single = position;
                let mut expected = ManyWalked::default();
                for i in 0..requests {
                    let w = walk_one(&mut single, &servers, &answer, retries, costs);
                    let chosen = w.first.iter().chain(&w.accepted).chain(&w.refused);
                    for p in chosen {
                        prop_assert!(servers.contains(p), "{} is not in {:?}", p, servers);
                    }
                    prop_assert_eq!(w.first.is_none(), servers.is_empty());
                    add_walk(&mut expected, w, i);
                }
                if servers.is_empty() {
                    return Ok(());
                }
                let mut batched = position;
                let many = walk_many(&mut batched, &servers, &answer, retries, costs, requests);
                prop_assert_eq!(sorted(many), sorted(expected));
                prop_assert_eq!(batched, single);
            }
        }
    }
}
