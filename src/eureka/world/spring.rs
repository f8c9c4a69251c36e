//! The world's handlers for `route::spring`: each hands the event to the route's
//! [`SpringLoadBalancer`] (which owns the suppliers' rules and state) with what it reads of the
//! world ([`SpringInputs`], [`Traffic`]), and carries out the [`SpringEffect`]s it returns, in
//! order.

use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::observe::Observer;
use crate::eureka::route::{
    Balancer, RequestMode, RequestOutcome, SpringEffect, SpringInputs, SpringLoadBalancer,
    SpringTimer, Traffic,
};

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// Calls `rule` on route `r`'s balancer (through the choke point) with what a Spring rule
    /// reads now, then carries out its effects in order.
    pub(super) fn with_spring<T>(
        &mut self,
        r: RouteId,
        rule: impl FnOnce(
            &mut Balancer,
            &SpringInputs<'_>,
            &mut Traffic<'_>,
            &mut Vec<SpringEffect>,
        ) -> T,
    ) -> T {
        let now_ms = self.now().ms();
        let batched = self.request_mode == RequestMode::Batched;
        let mut effects = std::mem::take(&mut self.spring_effects);
        let (route, answers) = self.route_mut_and_answers(r);
        let processes = answers.processes;
        let caller = route.process;
        let answer = |p: ProcessId| answers.of(caller, p);
        let cx = SpringInputs {
            now_ms,
            batched,
            config: &route.load_balancer,
            policy: &route.policy,
            costs: route.costs,
            client_list: processes[route.process].client.up_list(route.application),
            answer: &answer,
        };
        let mut traffic = Traffic {
            rng: &mut route.rng,
            arrivals: route.arrivals.as_mut(),
            count_from_us: &mut route.batch_from_us,
        };
        let result = rule(&mut route.balancer, &cx, &mut traffic, &mut effects);
        for effect in effects.drain(..) {
            self.spring_effect(r, now_ms, effect);
        }
        self.spring_effects = effects;
        result
    }

    /// Carries out one effect of route `r`'s Spring Cloud LoadBalancer.
    fn spring_effect(&mut self, r: RouteId, now_ms: u64, effect: SpringEffect) {
        match effect {
            SpringEffect::ListChanged { old, new } => self.observe_list_read(r, &old, &new),
            SpringEffect::Schedule {
                delay_ms,
                timer,
                generation,
            } => self.queue.schedule_in(
                delay_ms,
                Event::SpringLoadBalancer {
                    route: r,
                    generation,
                    timer,
                },
            ),
            SpringEffect::Attempt(attempt) => self.observe_attempt(r, now_ms, true, attempt),
            SpringEffect::Served { at_us, outcome } => {
                self.note_served_one(r, at_us, outcome.accepted());
                self.report_failed(r, outcome, true);
            }
        }
    }

    /// The balancer's creation at the first request, at `request_us`
    /// ([`SpringLoadBalancer::create`]).
    pub(super) fn create_spring_balancer(&mut self, r: RouteId, request_us: f64) {
        self.with_spring(r, |balancer, cx, traffic, out| {
            balancer.create_spring(SpringLoadBalancer::create(cx, traffic, request_us, out));
        });
    }

    /// A Spring Cloud LoadBalancer timer fired ([`SpringLoadBalancer::on_timer`]); void when
    /// stale or when the caller is dead.
    pub(super) fn on_spring_timer(&mut self, r: RouteId, generation: u32, timer: SpringTimer) {
        let route = &self.routes[r];
        let current = route
            .balancer
            .spring()
            .is_some_and(|lb| lb.is_current(generation));
        if !current || !self.processes[route.process].alive() {
            return;
        }
        self.with_spring(r, |balancer, cx, traffic, out| {
            if let Some(lb) = balancer.spring_mut() {
                lb.on_timer(generation, timer, cx, traffic, out);
            }
        });
        // A cache miss's request run late by a pause of the caller: the requests after it
        // were held too.
        self.send_held(r);
    }

    /// The Eureka client of `p` has new lists: Ribbon's notification updaters run, and Spring
    /// balancers that read it at every request follow at once
    /// ([`SpringLoadBalancer::on_client_lists_changed`]).
    pub(super) fn after_client_lists_changed(&mut self, p: ProcessId) {
        self.notify_ribbon_updaters(p);
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.process != p
                || route.balancer.spring().is_none()
                || !SpringLoadBalancer::follows_client_lists(&route.load_balancer)
            {
                continue;
            }
            self.with_spring(r, |balancer, cx, _, out| {
                if let Some(lb) = balancer.spring_mut() {
                    lb.on_client_lists_changed(cx, out);
                }
            });
        }
    }

    /// One request now through the Spring Cloud LoadBalancer of route `r`
    /// ([`SpringLoadBalancer::request`]), every attempt observed.
    pub(super) fn spring_request(&mut self, r: RouteId) -> RequestOutcome {
        self.with_spring(r, |balancer, cx, traffic, out| {
            balancer
                .spring_mut()
                .map_or_else(RequestOutcome::default, |lb| lb.request(cx, traffic, out))
        })
    }
}
