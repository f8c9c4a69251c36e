//! The world's handlers for `route`: a route's arrivals, and Ribbon's events handed to the
//! route's [`Ribbon`] (which owns the list updaters, the load balancer and the per-request
//! walk), whose [`RibbonEffect`]s and attempts are carried out here, in order.

use crate::engine::SimTime;
use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::route::{
    AttemptEffect, AttemptOutput, Balancer, ClientLists, RequestMode, RequestOutcome, Ribbon,
    RibbonEffect,
};
use crate::scenario::{RibbonConfig, Train};

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// The caller's web server is up: requests start arriving; with eager loading the load
    /// balancers are created now.
    pub(super) fn start_caller_traffic(&mut self, caller: usize) {
        for r in 0..self.routes.len() {
            if self.routes[r].caller != caller {
                continue;
            }
            if self.routes[r].balancer.uses_ribbon() && self.routes[r].ribbon.eager_load {
                self.create_ribbon_balancer(r);
            }
            self.start_arrivals(r);
        }
    }

    /// Schedules each caller stop of a zone outage (`Scenario::caller_stops`).
    pub(super) fn schedule_caller_stops(&mut self) {
        let scenario = self.scenario;
        for stop in &scenario.caller_stops {
            let event = Event::CallerStop {
                caller: stop.caller,
            };
            self.queue.schedule(SimTime(stop.at_ms), event);
        }
    }

    /// A caller of a zone outage dies as a kill -9 kills a process: its web server, the
    /// gateway's inbound side whose requests it routes, stops, so no request reaches its routes
    /// any more; its Eureka client sends nothing and its balancers' timers are void (they check
    /// that the caller lives). The routes' requests up to now are counted first: the kill
    /// settles every route when the caller's answer changes, and [`World::route_mut`] again.
    pub(super) fn on_caller_stop(&mut self, caller: usize) {
        let kind = ProcessKind::Caller { caller };
        let Some(p) = self.processes.iter().position(|x| x.kind == kind) else {
            return;
        };
        if !self.processes[p].alive() {
            return;
        }
        self.kill_process(p);
        for r in 0..self.routes.len() {
            if self.routes[r].caller == caller {
                self.route_mut(r).stop_arrivals();
            }
        }
    }

    /// Caller process `p` is paused: its routes hold their requests ([`Route::hold`]), counted
    /// up to now first.
    pub(super) fn hold_requests(&mut self, p: ProcessId) {
        for r in 0..self.routes.len() {
            if self.routes[r].process == p {
                self.route_mut(r).hold();
            }
        }
    }

    /// Caller process `p` resumed: each of its routes sends the requests held over the pause,
    /// now, at once and in their order ([`Route::hold`]); the per-request mode's held arrivals
    /// event does the same when it runs, now.
    pub(super) fn release_requests(&mut self, p: ProcessId) {
        for r in 0..self.routes.len() {
            if self.routes[r].process == p {
                self.route_mut(r).release();
                self.send_held(r);
            }
        }
    }

    /// Batched mode: sends route `r`'s requests a pause of its caller held
    /// ([`World::take_held`]), one by one now; nothing otherwise.
    pub(super) fn send_held(&mut self, r: RouteId) {
        let held = self.take_held(r);
        if held == 0 {
            return;
        }
        let (now_ms, now_us) = (self.now().ms(), self.now().ms() as f64 * 1000.0);
        for _ in 0..held {
            let outcome = if self.routes[r].balancer.uses_ribbon() {
                self.ribbon_request(r, now_ms, false)
            } else {
                self.spring_request(r)
            };
            self.note_served_one(r, now_us, outcome.accepted());
            self.report_failed(r, outcome, false);
        }
    }

    /// Route `r`'s requests start arriving now (the first after `Arrivals::first_gap`).
    pub(super) fn start_arrivals(&mut self, r: RouteId) {
        let now = self.now();
        if let Some(first) = self.route_mut(r).start_arrivals(now.ms()) {
            let at = SimTime((first / 1000.0) as u64);
            self.queue.schedule(at, Event::Arrivals { route: r });
        }
    }

    /// Every request due in this millisecond, then the next wake-up. In batched mode only the
    /// first request of the route comes here (it creates the load balancer); later ones are
    /// counted by [`World::flush_route`].
    pub(super) fn on_arrivals(&mut self, r: RouteId) {
        let now = self.now();
        let horizon_us = (now.ms() + 1) as f64 * 1000.0;
        if self.routes[r].arrivals.is_none() {
            return;
        }
        if self.request_mode == RequestMode::Batched {
            self.handle_request(r);
            let route = self.route_mut(r);
            // Unless the first request left an empty cache behind (a miss is then pending).
            if route.balancer.spring().is_none_or(|lb| !lb.miss_pending()) {
                route.batch_from_us = Some(route.next_arrival_us());
            }
            // Run late by a pause of the caller: the requests since the first were held too.
            self.send_held(r);
            return;
        }
        while self.routes[r].next_arrival_us() < horizon_us {
            self.handle_request(r);
            self.route_mut(r).advance_arrival();
        }
        let at = SimTime((self.routes[r].next_arrival_us() / 1000.0) as u64);
        self.queue.schedule(at, Event::Arrivals { route: r });
    }

    /// One request, now, with per-attempt observations (the reference path). It arrived at
    /// its instant, or earlier when a pause of the caller held it: it is sent now.
    fn handle_request(&mut self, r: RouteId) {
        let now_ms = self.now().ms();
        let at_us = self.routes[r].next_arrival_us();
        let sent_us = at_us.max(now_ms as f64 * 1000.0);
        let outcome = if self.routes[r].balancer.uses_ribbon() {
            if self.routes[r].balancer.ribbon().is_none() {
                self.create_ribbon_balancer(r);
            }
            self.ribbon_request(r, now_ms, true)
        } else {
            if self.routes[r].balancer.spring().is_none() {
                self.create_spring_balancer(r, at_us);
            }
            self.spring_request(r)
        };
        self.note_served_one(r, sent_us, outcome.accepted());
        self.report_failed(r, outcome, true);
    }

    /// Observes a request that failed after its retries.
    pub(super) fn report_failed(&mut self, r: RouteId, outcome: RequestOutcome, per_request: bool) {
        let Some(first) = outcome.failed_first() else {
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
                since: SimTime(now_ms),
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

    /// One request through route `r`'s Ribbon at `now_ms` ([`Ribbon::request`]), its attempts
    /// observed as [`World::observe_attempt`] says.
    pub(super) fn ribbon_request(
        &mut self,
        r: RouteId,
        now_ms: u64,
        per_attempt: bool,
    ) -> RequestOutcome {
        let mut attempts = std::mem::take(&mut self.scratch_attempts);
        let (route, answers) = self.route_mut_and_answers(r);
        let caller = route.process;
        let answer = |p: ProcessId| answers.of(caller, p);
        let tries = route.servers_to_try();
        let costs = route.costs;
        let outcome = match &mut route.balancer {
            Balancer::Ribbon(ribbon) => {
                ribbon.request(tries, costs, now_ms, &answer, &mut attempts)
            }
            Balancer::Spring { .. } => {
                attempts.no_server();
                RequestOutcome::default()
            }
        };
        for attempt in attempts.drain(..) {
            self.observe_attempt(r, now_ms, per_attempt, attempt);
        }
        self.scratch_attempts = attempts;
        outcome
    }

    /// Calls `rule` on route `r`'s Ribbon (through the choke point) with what it reads of the
    /// caller's Eureka client, then carries out its effects in order.
    pub(super) fn with_ribbon(
        &mut self,
        r: RouteId,
        rule: impl FnOnce(&mut Ribbon, &RibbonConfig, ClientLists<'_>, &mut Vec<RibbonEffect>),
    ) {
        let mut effects = std::mem::take(&mut self.ribbon_effects);
        let (route, processes) = self.route_mut_and_processes(r);
        let client = &processes[route.process].client;
        let is_up = |q: ProcessId| client.is_up_in_cache(q);
        let lists = ClientLists {
            up_list: client.up_list(route.application),
            is_up: &is_up,
        };
        if let Balancer::Ribbon(ribbon) = &mut route.balancer {
            rule(ribbon, &route.ribbon, lists, &mut effects);
        }
        for effect in effects.drain(..) {
            match effect {
                RibbonEffect::ListChanged { old, new } => self.observe_list_read(r, &old, &new),
                RibbonEffect::ScheduleRefresh {
                    delay_ms,
                    generation,
                } => self.queue.schedule_in(
                    delay_ms,
                    Event::RibbonRefresh {
                        route: r,
                        generation,
                    },
                ),
            }
        }
        self.ribbon_effects = effects;
    }

    /// Ribbon's load balancer is created ([`Ribbon::create`]).
    fn create_ribbon_balancer(&mut self, r: RouteId) {
        self.with_ribbon(r, |ribbon, config, lists, out| {
            ribbon.create(config, lists, out);
        });
    }

    /// The Eureka client of `p` fired its `CacheRefreshedEvent` after a fetch: the routes whose
    /// Ribbon follows it update their lists ([`Ribbon::on_cache_refreshed`]). On Dalston the
    /// event never reaches the updater (`CloudEurekaClient#onCacheRefreshed` did not call the
    /// super method, FACTS.md §8), so the list stays as the constructor read it.
    pub(super) fn notify_ribbon_updaters(&mut self, p: ProcessId) {
        if self.scenario.simulation.release.train == Train::Dalston {
            return;
        }
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            let follows = match &route.balancer {
                Balancer::Ribbon(ribbon) => ribbon.follows_cache_refreshed(&route.ribbon),
                Balancer::Spring { .. } => false,
            };
            if route.process == p && follows {
                self.with_ribbon(r, |ribbon, config, lists, out| {
                    ribbon.on_cache_refreshed(config, lists, out);
                });
            }
        }
    }

    /// `PollingServerListUpdater`'s timer fired ([`Ribbon::on_refresh`]); void when stale or
    /// when the caller is dead.
    pub(super) fn on_ribbon_refresh(&mut self, r: RouteId, generation: u32) {
        let route = &self.routes[r];
        let current = match &route.balancer {
            Balancer::Ribbon(ribbon) => ribbon.refresh_is_current(generation),
            Balancer::Spring { .. } => false,
        };
        if !current || !self.processes[route.process].alive() {
            return;
        }
        self.with_ribbon(r, |ribbon, config, lists, out| {
            ribbon.on_refresh(generation, config, lists, out);
        });
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
