//! Ribbon's batched request counting ([`RequestMode::Batched`](crate::eureka::route::RequestMode::Batched)).
//!
//! Between two changes of a route's routing state, every request walks the same deterministic
//! automaton, so requests are counted rather than simulated: their number is drawn for the
//! interval and the round-robin walk is summed ([`run_batch`]). The circuit breaker adds state
//! that changes with the requests themselves (a refused attempt counts a failure; a blackout
//! ends at a known instant), so with it the interval is cut into phases:
//!
//! - every server the availability filter keeps accepts connections: the cursor only moves, up
//!   to the next blackout's end;
//! - every listed server is tripped and refuses: the fallback keeps them all, every attempt is
//!   refused and only pushes the blackouts further; summed with [`run_batch`] up to the next
//!   blackout's end;
//! - otherwise an untripped server refuses: requests are stepped one at a time. This lasts at
//!   most about `threshold × list length` requests per blackout, whatever the request rate.

use crate::eureka::ids::ProcessId;
use crate::eureka::observe::Observation;
use crate::eureka::route::arrivals::CountedSpan;
use crate::eureka::route::{Accepted, Answer, Arrivals, Balancer, BalancerEffect, Route};

use super::RibbonLoadBalancer;
use super::circuit_breaker::CircuitBreaker;
use super::round_robin::{first_pick, run_batch, step};

/// What the routing state of a route allows at one instant (with the circuit breaker).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// No server listed.
    Empty,
    /// Every server the filter keeps accepts connections, until `change_us`.
    Serving { change_us: f64 },
    /// Every listed server is tripped and refuses, until `change_us`.
    AllTrippedRefusing { change_us: f64 },
    /// Some kept server refuses: one request at a time, with the phase re-read at `change_us`.
    Stepping { change_us: f64 },
}

impl Route {
    /// Ribbon's requests in `(from, until]`: one summed walk, or phase by phase with the
    /// circuit breaker.
    pub(in crate::eureka::route) fn count_ribbon(
        &mut self,
        from: f64,
        until: f64,
        answer: &dyn Fn(ProcessId) -> Answer,
        out: &mut Vec<BalancerEffect>,
    ) {
        let Balancer::Ribbon(ribbon) = &self.balancer else {
            return;
        };
        if ribbon.breaker().enabled {
            self.count_with_breaker(from, until, answer, out);
        } else {
            self.count_walk(from, until, false, answer, out);
        }
    }

    fn count_with_breaker(
        &mut self,
        from: f64,
        until: f64,
        answer: &dyn Fn(ProcessId) -> Answer,
        out: &mut Vec<BalancerEffect>,
    ) {
        let mut t = from;
        while t < until {
            let now_ms = (t / 1000.0) as u64;
            match self.routing_phase(now_ms, answer) {
                Phase::Empty => {
                    self.count_walk(t, until, false, answer, out);
                    return;
                }
                Phase::Serving { change_us } => {
                    let end = until.min(change_us);
                    self.count_serving(t, end, now_ms);
                    t = end;
                }
                Phase::AllTrippedRefusing { change_us } => {
                    let end = until.min(change_us);
                    self.count_walk(t, end, true, answer, out);
                    t = end;
                }
                Phase::Stepping { change_us } => {
                    let end = until.min(change_us);
                    let Some(arrivals) = self.arrivals.as_mut() else {
                        return;
                    };
                    match arrivals.next_within(&mut self.rng, t, end) {
                        Some(at) => {
                            let at_ms = (at / 1000.0) as u64;
                            let outcome = self.ribbon_request(at_ms, answer, false, out);
                            self.finish_request(at, outcome, false, out);
                            t = at;
                        }
                        None => t = end,
                    }
                }
            }
        }
    }

    /// Reads the routing state at `now_ms` (see [`Phase`]); `answer` is how each instance
    /// answers the caller, through the faults (a paused instance reads nothing: a read
    /// timeout), as every routing path asks.
    fn routing_phase(&self, now_ms: u64, answer: &dyn Fn(ProcessId) -> Answer) -> Phase {
        let Balancer::Ribbon(ribbon) = &self.balancer else {
            return Phase::Empty;
        };
        let Some(balancer) = ribbon.lb() else {
            return Phase::Empty;
        };
        if balancer.servers.is_empty() {
            return Phase::Empty;
        }
        let accepts = |p: ProcessId| answer(p).accepts();
        if !balancer.stats.any_failures() {
            let change_us = f64::INFINITY;
            return if balancer.servers.iter().all(|&p| accepts(p)) {
                Phase::Serving { change_us }
            } else {
                Phase::Stepping { change_us }
            };
        }
        let breaker = ribbon.breaker();
        let mut change_ms = u64::MAX;
        let mut any_kept = false;
        let mut kept_all_serving = true;
        let mut all_refusing = true;
        for &p in &balancer.servers {
            match breaker.tripped_until_ms(balancer.stats.get(p)) {
                Some(until) if until > now_ms => change_ms = change_ms.min(until),
                _ => {
                    any_kept = true;
                    kept_all_serving &= accepts(p);
                }
            }
            all_refusing &= !accepts(p);
        }
        let change_us = if change_ms == u64::MAX {
            f64::INFINITY
        } else {
            change_ms as f64 * 1000.0
        };
        match (any_kept, kept_all_serving, all_refusing) {
            (true, true, _) => Phase::Serving { change_us },
            (false, _, true) => Phase::AllTrippedRefusing { change_us },
            _ => Phase::Stepping { change_us },
        }
    }

    /// Ribbon's load balancer and breaker, the route's arrivals and the span `(from, until]`
    /// counted (its number of requests drawn from the route's stream); `None` without a load
    /// balancer or traffic (nothing drawn), or when no request arrived in the span.
    fn ribbon_span(
        &mut self,
        from: f64,
        until: f64,
    ) -> Option<(
        &mut RibbonLoadBalancer,
        CircuitBreaker,
        &mut Arrivals,
        CountedSpan,
    )> {
        let Balancer::Ribbon(ribbon) = &mut self.balancer else {
            return None;
        };
        let breaker = ribbon.breaker();
        let (Some(arrivals), Some(balancer)) = (self.arrivals.as_mut(), ribbon.lb_mut()) else {
            return None;
        };
        let span = arrivals.count(&mut self.rng, from, until);
        (span.requests > 0).then_some((balancer, breaker, arrivals, span))
    }

    /// Requests in `(from, until]` while every server the filter keeps accepts: the cursor
    /// moves over the kept servers, and each server picked gets a response, which clears its
    /// failure count.
    fn count_serving(&mut self, from: f64, until: f64, now_ms: u64) {
        let tracks_in_flight = self.tracks_in_flight();
        let Some((balancer, breaker, arrivals, span)) = self.ribbon_span(from, until) else {
            return;
        };
        let requests = span.requests;
        let times = arrivals.span_times(&span);
        let (kept, start) = balancer.serve_kept(&breaker, now_ms, requests);
        let accepted = tracks_in_flight.then(|| Accepted::rotation(kept, start));
        if let Some(accepted) = accepted {
            self.note_served_span(until, requests, times, accepted);
        }
    }

    /// Requests in `(from, until]` as one round-robin walk over the whole list (no filtering,
    /// or the all-tripped fallback); `note_failures` records the refused attempts in the
    /// circuit-breaker stats, each server's last one at its instant.
    fn count_walk(
        &mut self,
        from: f64,
        until: f64,
        note_failures: bool,
        answer: &dyn Fn(ProcessId) -> Answer,
        out: &mut Vec<BalancerEffect>,
    ) {
        let (next_servers, same_server) = self.servers_to_try();
        let tracks_in_flight = self.tracks_in_flight();
        let (costs, route) = (self.costs, self.id);
        let Some((balancer, breaker, arrivals, span)) = self.ribbon_span(from, until) else {
            return;
        };
        // Each refused attempt's failures in `ServerStats` (FACTS.md §14).
        let failures_per_refusal = u64::from(breaker.failures_per_refusal);
        let recorded_after = breaker.refusal_recorded_after_ms;
        let requests = span.requests;
        if balancer.servers.is_empty() {
            out.push(BalancerEffect::Observe(Observation::NoServers {
                route,
                count: requests,
            }));
            return;
        }
        if balancer.servers.iter().all(|&p| answer(p).accepts()) {
            // Nobody refuses: only the cursor moves (the common case).
            let n = balancer.servers.len();
            let start = first_pick(balancer.cursor(), n);
            balancer.set_cursor(((start as u64 + requests) % n as u64) as usize);
            if tracks_in_flight {
                let accepted = Accepted::rotation(&balancer.servers, start);
                let times = arrivals.span_times(&span);
                self.note_served_span(until, requests, times, accepted);
            }
            return;
        }
        let answers: Vec<Answer> = balancer.servers.iter().map(|&p| answer(p)).collect();
        let served = tracks_in_flight.then(|| {
            let n = balancer.servers.len();
            let start = first_pick(balancer.cursor(), n);
            let servers = &balancer.servers;
            // Ribbon's walk (see `run_batch`), one request at a time through the same `step`.
            let accepted = Accepted::walk(start as u64, n as u64, |pos| {
                let one = step(*pos as usize, &answers, next_servers, same_server, costs);
                *pos = one.next as u64;
                one.accepted.map(|i| servers[i])
            });
            (arrivals.span_times(&span), accepted)
        });
        let batch = run_batch(
            &balancer.servers,
            &answers,
            balancer.cursor(),
            requests,
            next_servers,
            same_server,
            costs,
        );
        balancer.set_cursor(batch.cursor);
        let dead = self.settle_span(
            (from, until),
            &span,
            served,
            &batch.dead_hits,
            &batch.delays,
            &batch.failed,
            out,
        );
        if note_failures && let Some(balancer) = self.balancer.ribbon_mut() {
            for &(process, count, last_ms) in &dead {
                balancer.stats.note_failures_recorded_at(
                    process,
                    count * failures_per_refusal,
                    last_ms + recorded_after,
                );
            }
        }
    }
}
