//! The world's handlers for `route::spring` (the rules and their state live in `eureka::route::spring`).

use crate::engine::SimTime;
use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::route::spring::{Retries, SpringLoadBalancer, SpringTimer, walk_one};
use crate::eureka::route::{RequestMode, RequestOutcome};
use crate::scenario::SupplierKind;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// The balancer's creation at the first request (`LoadBalancerClientFactory` creates the
    /// child context lazily): the position is seeded, the supplier reads its first list, and the
    /// health-check supplier starts its rounds.
    pub(super) fn create_spring_balancer(&mut self, r: RouteId, request_us: f64) {
        let now = self.now().ms();
        let route = self.route_mut(r);
        let position = route.rng.below(1000);
        route.balancer.create_spring(SpringLoadBalancer {
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
                if let Some(lb) = self.route_mut(r).balancer.spring_mut() {
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
        let Some(lb) = self.route_mut(r).balancer.spring_mut() else {
            return;
        };
        let old = std::mem::replace(&mut lb.servers, fresh.clone());
        self.observe(Observation::RibbonRefreshed { route: r });
        self.observe_list_change(r, &old, &fresh);
    }

    fn schedule_spring(&mut self, r: RouteId, delay_ms: u64, timer: SpringTimer) {
        let Some(lb) = self.routes[r].balancer.spring() else {
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
        let batched = self.request_mode == RequestMode::Batched;
        let Some(lb) = self.route_mut(r).balancer.spring_mut() else {
            return;
        };
        lb.written_ms = (!lb.servers.is_empty()).then_some(now_ms);
        if !batched {
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
        let route = self.route_mut(r);
        route.batch_from_us = None;
        let Some(arrivals) = route.arrivals.as_mut() else {
            return;
        };
        let Some(at) = arrivals.next_within(&mut route.rng, from_us, f64::INFINITY) else {
            return;
        };
        if let Some(lb) = route.balancer.spring_mut() {
            lb.pending_miss_us = Some(at);
            lb.written_ms = None;
        }
        let now = self.now().ms();
        let at_ms = ((at / 1000.0) as u64).max(now);
        self.schedule_spring(r, at_ms - now, SpringTimer::CacheMiss);
    }

    /// A Spring Cloud LoadBalancer timer fired.
    pub(super) fn on_spring_timer(&mut self, r: RouteId, generation: u32, timer: SpringTimer) {
        let route = &self.routes[r];
        let Some(lb) = route.balancer.spring() else {
            return;
        };
        if lb.generation != generation || !self.processes[route.process].alive() {
            return;
        }
        let now = self.now().ms();
        let now_us = now as f64 * 1000.0;
        let config = route.load_balancer.clone();
        match timer {
            SpringTimer::CacheExpired => {
                self.pend_cache_miss(r, now_us);
            }
            SpringTimer::CacheMiss => {
                let Some(at) = self
                    .route_mut(r)
                    .balancer
                    .spring_mut()
                    .and_then(|lb| lb.pending_miss_us.take())
                else {
                    return;
                };
                self.set_spring_list(r, self.client_list(r));
                let outcome = self.spring_request(r, now, true);
                self.note_served_one(r, at, outcome.accepted);
                self.report_failed(r, outcome, true);
                self.route_mut(r).batch_from_us = Some(at);
                self.spring_cache_written(r, now, at);
            }
            SpringTimer::HealthCheck => {
                self.health_check_round(r);
                self.schedule_spring(r, config.health_check_interval_ms, SpringTimer::HealthCheck);
            }
            SpringTimer::Refetch => {
                let list = self.client_list(r);
                if let Some(lb) = self.route_mut(r).balancer.spring_mut() {
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
        let Some(lb) = self.routes[r].balancer.spring() else {
            return;
        };
        let healthy: Vec<ProcessId> = lb
            .checked
            .iter()
            .copied()
            .filter(|&p| self.processes[p].serving())
            .collect();
        self.set_spring_list(r, healthy);
    }

    /// The Eureka client of `p` has new lists: balancers that read it at every request
    /// (`cache.enabled = false`) follow at once.
    pub(super) fn after_client_lists_changed(&mut self, p: ProcessId) {
        self.notify_ribbon_updaters(p);
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.process != p
                || route.balancer.spring().is_none()
                || route.load_balancer.cache_enabled
                || route.load_balancer.configurations != SupplierKind::Default
            {
                continue;
            }
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
        let Some(lb) = route.balancer.spring() else {
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
        let (route, processes) = self.route_mut_and_processes(r);
        let retries = Retries::of(&route.policy);
        let costs = route.costs;
        let Some(lb) = route.balancer.spring_mut() else {
            return RequestOutcome::default();
        };
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
}
