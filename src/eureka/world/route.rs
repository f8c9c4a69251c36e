//! The world's handlers for `route`: a route's arrivals, and its balancer's events handed to
//! the route ([`Route`]'s balancer methods, which hand each to the balancer's own rules), whose
//! [`BalancerEffect`]s are carried out here, in order. No handler asks which balancer a route
//! has.

use crate::engine::SimTime;
use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::route::{
    BalancerEffect, BalancerTimer, CallerView, ClientLists, RequestMode, Route,
};
use crate::scenario::Train;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// The caller's web server is up: requests start arriving; with eager loading the load
    /// balancers are created now.
    pub(super) fn start_caller_traffic(&mut self, caller: usize) {
        for r in 0..self.routes.len() {
            if self.routes[r].caller != caller {
                continue;
            }
            if self.routes[r].created_at_start() {
                let now_us = self.now().ms() as f64 * 1000.0;
                self.with_balancer(r, |route, cx, out| route.create_balancer(cx, now_us, out));
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
        let now_us = self.now().ms() as f64 * 1000.0;
        for _ in 0..held {
            self.with_balancer(r, |route, cx, out| route.serve_one(cx, now_us, false, out));
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
        if !self.routes[r].has_traffic() {
            return;
        }
        if self.request_mode == RequestMode::Batched {
            self.handle_request(r);
            self.route_mut(r).count_after_first();
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
    /// its instant, or earlier when a pause of the caller held it: it is sent now. The first
    /// request creates the balancer.
    fn handle_request(&mut self, r: RouteId) {
        let now_us = self.now().ms() as f64 * 1000.0;
        let at_us = self.routes[r].next_arrival_us();
        let sent_us = at_us.max(now_us);
        if !self.routes[r].balancer.created() {
            self.with_balancer(r, |route, cx, out| route.create_balancer(cx, at_us, out));
        }
        self.with_balancer(r, |route, cx, out| route.serve_one(cx, sent_us, true, out));
    }

    /// Calls `rule` on route `r` (through the choke point) with what its balancer reads now
    /// ([`CallerView`]), then carries out its effects in order.
    pub(super) fn with_balancer<T>(
        &mut self,
        r: RouteId,
        rule: impl FnOnce(&mut Route, &CallerView<'_>, &mut Vec<BalancerEffect>) -> T,
    ) -> T {
        let now_ms = self.now().ms();
        let batched = self.request_mode == RequestMode::Batched;
        let mut effects = std::mem::take(&mut self.balancer_effects);
        let (route, answers) = self.route_mut_and_answers(r);
        let caller = route.process;
        let client = &answers.processes[caller].client;
        let is_up = |q: ProcessId| client.is_up_in_cache(q);
        let answer = |p: ProcessId| answers.of(caller, p);
        let cx = CallerView {
            now_ms,
            batched,
            client: ClientLists {
                up_list: client.up_list(route.application),
                is_up: &is_up,
            },
            answer: &answer,
        };
        let result = rule(route, &cx, &mut effects);
        self.carry_out_balancer(r, &mut effects);
        self.balancer_effects = effects;
        result
    }

    /// Carries out route `r`'s balancer effects, in order (leaves `effects` empty).
    pub(super) fn carry_out_balancer(&mut self, r: RouteId, effects: &mut Vec<BalancerEffect>) {
        for effect in effects.drain(..) {
            match effect {
                BalancerEffect::ListChanged { old, new } => self.observe_list_read(r, &old, &new),
                BalancerEffect::Schedule {
                    delay_ms,
                    timer,
                    generation,
                } => self.queue.schedule_in(
                    delay_ms,
                    Event::Balancer {
                        route: r,
                        generation,
                        timer,
                    },
                ),
                BalancerEffect::Observe(observation) => self.observe(observation),
            }
        }
    }

    /// A timer of route `r`'s balancer fired ([`Route::on_balancer_timer`]); void when stale or
    /// when the caller is dead. A Spring Cloud LoadBalancer cache miss's request run late by a
    /// pause of the caller: the requests after it were held too, and are sent now.
    pub(super) fn on_balancer_timer(&mut self, r: RouteId, generation: u32, timer: BalancerTimer) {
        let route = &self.routes[r];
        if !route.balancer.timer_is_current(generation) || !self.processes[route.process].alive() {
            return;
        }
        self.with_balancer(r, |route, cx, out| {
            route.on_balancer_timer(generation, timer, cx, out);
        });
        self.send_held(r);
    }

    /// The Eureka client of `p` has new lists (it fired its `CacheRefreshedEvent` after a
    /// fetch): the balancers that follow them read them now ([`Route::follows_client_lists`]).
    pub(super) fn after_client_lists_changed(&mut self, p: ProcessId) {
        let notified = self.scenario.simulation.release.train != Train::Dalston;
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.process == p && route.follows_client_lists(notified) {
                self.with_balancer(r, |route, cx, out| route.on_client_lists_changed(cx, out));
            }
        }
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
