//! The world's handlers for `route` (the rules and their state live in `eureka::route`).

use crate::engine::SimTime;
use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::route::{AttemptEffect, RIBBON_FIRST_REFRESH_MS, RequestMode, RequestOutcome};
use crate::scenario::Train;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// The caller's web server is up: requests start arriving; with eager loading the load
    /// balancers are created now.
    pub(super) fn start_caller_traffic(&mut self, caller: usize) {
        let now = self.now();
        for r in 0..self.routes.len() {
            if self.routes[r].caller != caller {
                continue;
            }
            if self.routes[r].balancer.uses_ribbon() && self.routes[r].ribbon.eager_load {
                self.create_balancer(r);
            }
            let route = self.route_mut(r);
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
            let route = self.route_mut(r);
            // Unless the first request left an empty cache behind (a miss is then pending).
            if route.balancer.spring().is_none_or(|lb| !lb.miss_pending()) {
                route.batch_from_us = Some(route.next_arrival_us);
            }
            return;
        }
        while self.routes[r].next_arrival_us < horizon_us {
            self.handle_request(r);
            let route = self.route_mut(r);
            route.next_arrival_us += arrivals.next_gap(&mut route.rng);
        }
        let at = SimTime((self.routes[r].next_arrival_us / 1000.0) as u64);
        self.queue.schedule(at, Event::Arrivals { route: r });
    }

    /// One request, now, with per-attempt observations (the reference path).
    fn handle_request(&mut self, r: RouteId) {
        let now_ms = self.now().ms();
        let at_us = self.routes[r].next_arrival_us;
        let outcome = if self.routes[r].balancer.uses_ribbon() {
            if self.routes[r].balancer.ribbon().is_none() {
                self.create_balancer(r);
            }
            self.route_one_request(r, now_ms, true)
        } else {
            if self.routes[r].balancer.spring().is_none() {
                self.create_spring_balancer(r, at_us);
            }
            self.spring_request(r)
        };
        self.note_served_one(r, at_us, outcome.accepted);
        self.report_failed(r, outcome, true);
    }

    /// Observes a request that failed after its retries.
    pub(super) fn report_failed(&mut self, r: RouteId, outcome: RequestOutcome, per_request: bool) {
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

    /// Observes one attempt of a request on route `r` at `now_ms`: `per_attempt` reports every
    /// attempt as an [`Observation::Attempt`]; otherwise refused ones are reported as counts
    /// stamped `now_ms`.
    pub(super) fn observe_attempt(
        &mut self,
        r: RouteId,
        now_ms: u64,
        per_attempt: bool,
        attempt: AttemptEffect,
    ) {
        let observation = match attempt {
            AttemptEffect::NoServer if per_attempt => Observation::NoServer { route: r },
            AttemptEffect::NoServer => Observation::NoServers { route: r, count: 1 },
            AttemptEffect::Attempt { process, dead } if per_attempt => Observation::Attempt {
                route: r,
                process,
                dead,
            },
            AttemptEffect::Attempt {
                process,
                dead: true,
            } => Observation::DeadHits {
                route: r,
                process,
                count: 1,
                last: SimTime(now_ms),
            },
            AttemptEffect::Attempt { dead: false, .. } => return,
            AttemptEffect::ConnectTimeout { process, delay_ms } => Observation::ConnectTimeouts {
                route: r,
                process,
                delay_ms,
            },
        };
        self.observe(observation);
    }

    /// One request through Ribbon with its retries (FACTS.md §8 retry rules) at `now_ms`: each
    /// next-server retry chooses again through the availability filter; each refused or timed
    /// out attempt is a circuit-tripping failure of its server and any accepted one clears the
    /// server's count (`LoadBalancerContext#noteRequestCompletion`); each attempt's cost and the
    /// Hystrix timeout follow [`AttemptCosts::attempt`]. `per_attempt` reports every attempt as
    /// an [`Observation::Attempt`]; otherwise refused ones are reported as counts stamped
    /// `now_ms`.
    pub(super) fn route_one_request(
        &mut self,
        r: RouteId,
        now_ms: u64,
        per_attempt: bool,
    ) -> RequestOutcome {
        let (next_servers, same_server) = self.routes[r].servers_to_try();
        let costs = self.routes[r].costs;
        let mut spent_ms = 0;
        let mut outcome = RequestOutcome::default();
        for _ in 0..next_servers {
            let route = self.route_mut(r);
            let breaker = route.balancer.breaker();
            let Some(server) = route
                .balancer
                .ribbon_mut()
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
                if let Some(b) = self.route_mut(r).balancer.ribbon_mut() {
                    if dead {
                        // Once per recorder of the stack (FACTS.md §14).
                        let times = u64::from(breaker.failures_per_refusal);
                        b.stats.note_failures(server, times, now_ms);
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
        self.route_mut(r).balancer.create_ribbon();
        self.update_server_list(r);
        if self.routes[r].ribbon.eureka_notification_updater {
            // EurekaNotificationServerListUpdater: no timer, the client's fetches drive it.
            return;
        }
        let route = self.route_mut(r);
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
    pub(super) fn notify_ribbon_updaters(&mut self, p: ProcessId) {
        if self.scenario.simulation.release.train == Train::Dalston {
            return;
        }
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.process == p
                && route.balancer.uses_ribbon()
                && route.ribbon.eureka_notification_updater
                && route.balancer.ribbon().is_some()
            {
                self.update_server_list(r);
            }
        }
    }

    /// `PollingServerListUpdater`'s task, re-armed `ServerListRefreshInterval` after it ran.
    pub(super) fn on_ribbon_refresh(&mut self, r: RouteId, generation: u32) {
        let route = &self.routes[r];
        if route.refresh_generation != generation || !self.processes[route.process].alive() {
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

    /// `DynamicServerListLoadBalancer#updateListOfServers`: the UP instances of the app in the
    /// caller's Eureka cache, in the client's order (`DiscoveryEnabledNIWSServerList
    /// #obtainServersViaDiscovery` keeps `status == UP` itself, so with
    /// `filter-only-up-instances = false` Ribbon still drops DOWN instances; the single-zone
    /// filter keeps all).
    fn update_server_list(&mut self, r: RouteId) {
        let route = &self.routes[r];
        let client = &self.processes[route.process].client;
        let fresh: Vec<ProcessId> = client
            .up_list(route.application)
            .iter()
            .copied()
            .filter(|&q| client.is_up_in_cache(q))
            .collect();
        let Some(balancer) = self.route_mut(r).balancer.ribbon_mut() else {
            return;
        };
        let old = std::mem::replace(&mut balancer.servers, fresh.clone());
        self.observe_list_read(r, &old, &fresh);
    }

    /// A balancer of route `r` read its list (observed as a refresh), `old` replaced by `new`:
    /// observes which processes entered and left it, in O(n) with a scratch mark per process.
    pub(super) fn observe_list_read(&mut self, r: RouteId, old: &[ProcessId], new: &[ProcessId]) {
        self.observe(Observation::RibbonRefreshed { route: r });
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
