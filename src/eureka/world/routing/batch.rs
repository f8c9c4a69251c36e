//! Batched request counting ([`RequestMode::Batched`](super::RequestMode::Batched)).
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

use crate::engine::SimTime;
use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::route::ribbon::round_robin::{first_pick, run_batch, step};
use crate::eureka::route::{Accepted, Answer};

use super::World;

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

impl<O: Observer> World<'_, O> {
    /// Counts the requests of route `r` that arrived since the last count, up to `until_us`
    /// (the routing state is constant over that interval by construction, apart from the
    /// circuit breaker, which is followed phase by phase).
    pub(super) fn flush_route(&mut self, r: RouteId, until_us: f64) {
        let route = &mut self.routes.list[r];
        let Some(from) = route.batch_from_us else {
            return;
        };
        // A paused caller's requests wait for its resume (`Route::hold`).
        if route.arrivals.is_none() || until_us <= from || route.held() {
            return;
        }
        if !route.balancer.uses_ribbon() {
            route.batch_from_us = Some(until_us);
            self.flush_spring(r, from, until_us);
            return;
        }
        if route.balancer.ribbon().is_none() {
            return;
        }
        route.batch_from_us = Some(until_us);
        if route.balancer.breaker().enabled {
            self.flush_with_breaker(r, from, until_us);
        } else {
            self.count_walk(r, from, until_us, false);
        }
    }

    fn flush_with_breaker(&mut self, r: RouteId, from: f64, until: f64) {
        let mut t = from;
        while t < until {
            let now_ms = (t / 1000.0) as u64;
            match self.routing_phase(r, now_ms) {
                Phase::Empty => {
                    self.count_walk(r, t, until, false);
                    return;
                }
                Phase::Serving { change_us } => {
                    let end = until.min(change_us);
                    self.count_serving(r, t, end, now_ms);
                    t = end;
                }
                Phase::AllTrippedRefusing { change_us } => {
                    let end = until.min(change_us);
                    self.count_walk(r, t, end, true);
                    t = end;
                }
                Phase::Stepping { change_us } => {
                    let end = until.min(change_us);
                    let route = &mut self.routes.list[r];
                    let Some(arrivals) = route.arrivals.as_mut() else {
                        return;
                    };
                    match arrivals.next_within(&mut route.rng, t, end) {
                        Some(at) => {
                            let outcome = self.ribbon_request(r, (at / 1000.0) as u64, false);
                            self.note_served_one(r, at, outcome.accepted());
                            self.report_failed(r, outcome, false);
                            t = at;
                        }
                        None => t = end,
                    }
                }
            }
        }
    }

    /// Reads the routing state of route `r` at `now_ms` (see [`Phase`]).
    fn routing_phase(&self, r: RouteId, now_ms: u64) -> Phase {
        let route = &self.routes.list[r];
        let Some(balancer) = route.balancer.ribbon() else {
            return Phase::Empty;
        };
        if balancer.servers.is_empty() {
            return Phase::Empty;
        }
        // How the caller's connections are answered, through the faults (a paused instance
        // reads nothing: a read timeout), as every routing path asks (`Faults::answer`).
        let (caller, faults) = (route.process, &self.faults);
        let accepts = |p: usize| {
            faults
                .answer(caller, p, self.processes[p].answer())
                .accepts()
        };
        if !balancer.stats.any_failures() {
            let change_us = f64::INFINITY;
            return if balancer.servers.iter().all(|&p| accepts(p)) {
                Phase::Serving { change_us }
            } else {
                Phase::Stepping { change_us }
            };
        }
        let mut change_ms = u64::MAX;
        let mut any_kept = false;
        let mut kept_all_serving = true;
        let mut all_refusing = true;
        for &p in &balancer.servers {
            match route
                .balancer
                .breaker()
                .tripped_until_ms(balancer.stats.get(p))
            {
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

    /// Requests in `(from, until]` while every server the filter keeps accepts: the cursor
    /// moves over the kept servers, and each server picked gets a response, which clears its
    /// failure count.
    fn count_serving(&mut self, r: RouteId, from: f64, until: f64, now_ms: u64) {
        let route = &mut self.routes.list[r];
        let breaker = route.balancer.breaker();
        let tracks_in_flight = route.tracks_in_flight();
        let (Some(arrivals), Some(balancer)) =
            (route.arrivals.as_mut(), route.balancer.ribbon_mut())
        else {
            return;
        };
        let span = arrivals.count(&mut route.rng, from, until);
        let requests = span.requests;
        if requests == 0 {
            return;
        }
        let times = arrivals.span_times(&span);
        let (kept, start) = balancer.serve_kept(&breaker, now_ms, requests);
        let accepted = tracks_in_flight.then(|| Accepted::rotation(kept, start));
        if let Some(accepted) = accepted {
            route.note_served_span(until, requests, times, accepted);
        }
    }

    /// Requests in `(from, until]` as one round-robin walk over the whole list (no filtering,
    /// or the all-tripped fallback); `note_failures` records the refused attempts in the
    /// circuit-breaker stats, each server's last one at its instant.
    fn count_walk(&mut self, r: RouteId, from: f64, until: f64, note_failures: bool) {
        let route = &mut self.routes.list[r];
        let caller = route.process;
        let (next_servers, same_server) = route.servers_to_try();
        let tracks_in_flight = route.tracks_in_flight();
        // Each refused attempt's failures in `ServerStats` (FACTS.md §14).
        let failures_per_refusal = u64::from(route.balancer.breaker().failures_per_refusal);
        let (Some(arrivals), Some(balancer)) =
            (route.arrivals.as_mut(), route.balancer.ribbon_mut())
        else {
            return;
        };
        let span = arrivals.count(&mut route.rng, from, until);
        let requests = span.requests;
        if requests == 0 {
            return;
        }
        if balancer.servers.is_empty() {
            self.observe(Observation::NoServers {
                route: r,
                count: requests,
            });
            return;
        }
        let (processes, faults) = (&self.processes, &self.faults);
        let answer = |p: ProcessId| faults.answer(caller, p, processes[p].answer());
        if balancer.servers.iter().all(|&p| answer(p).accepts()) {
            // Nobody refuses: only the cursor moves (the common case).
            let n = balancer.servers.len();
            let start = first_pick(balancer.cursor(), n);
            balancer.set_cursor(((start as u64 + requests) % n as u64) as usize);
            if tracks_in_flight {
                let accepted = Accepted::rotation(&balancer.servers, start);
                let times = arrivals.span_times(&span);
                route.note_served_span(until, requests, times, accepted);
            }
            return;
        }
        let answers: Vec<Answer> = balancer.servers.iter().map(|&p| answer(p)).collect();
        let costs = route.costs;
        let mut served = None;
        if tracks_in_flight {
            let n = balancer.servers.len();
            let start = first_pick(balancer.cursor(), n);
            let servers = &balancer.servers;
            // Ribbon's walk (see `run_batch`), one request at a time through the same `step`.
            let accepted = Accepted::walk(start as u64, n as u64, |pos| {
                let one = step(*pos as usize, &answers, next_servers, same_server, costs);
                *pos = one.next as u64;
                one.accepted.map(|i| servers[i])
            });
            served = Some((arrivals.span_times(&span), accepted));
        }
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
        let lasts: Vec<u64> = batch.dead_hits.iter().map(|&(_, _, last)| last).collect();
        // One sample of the span's instants serves the last dead hits and the in-flight count.
        let times = match served.as_mut() {
            Some((kept, _)) => lasts
                .iter()
                .map(|&i| kept.time_of(&mut route.rng, i))
                .collect(),
            None => arrivals.times_of(&mut route.rng, &span, &lasts),
        };
        let dead: Vec<(ProcessId, u64, u64)> = batch
            .dead_hits
            .iter()
            .zip(times)
            .map(|(&(process, count, _), at_us)| (process, count, (at_us / 1000.0) as u64))
            .collect();
        if note_failures {
            for &(process, count, last_ms) in &dead {
                balancer
                    .stats
                    .note_failures(process, count * failures_per_refusal, last_ms);
            }
        }
        if let Some((times, accepted)) = served {
            route.note_served_span(until, requests, times, accepted);
        }
        self.observe_span(r, from, &dead, &batch.delays, &batch.failed);
    }

    /// Observes what a counted span did: refused attempts per instance (count and the instant
    /// of the last, ms), connect-timeout delays and failed requests per first-chosen instance.
    pub(super) fn observe_span(
        &mut self,
        r: RouteId,
        from_us: f64,
        dead: &[(ProcessId, u64, u64)],
        delays: &[(ProcessId, u64)],
        failed: &[(ProcessId, u64)],
    ) {
        for &(process, count, last_ms) in dead {
            self.observe(Observation::DeadHits {
                route: r,
                process,
                count,
                since: SimTime(((from_us / 1000.0) as u64).min(last_ms)),
                last: SimTime(last_ms),
            });
        }
        for &(process, delay_ms) in delays {
            self.observe(Observation::ConnectTimeouts {
                route: r,
                process,
                delay_ms,
            });
        }
        for &(first, count) in failed {
            self.observe(Observation::RequestsFailed {
                route: r,
                first,
                count,
            });
        }
    }

    /// Batched mode: the requests of route `r` in `(from, until]` over its constant list
    /// ([`SpringLoadBalancer::walk_requests`](crate::eureka::route::SpringLoadBalancer)).
    fn flush_spring(&mut self, r: RouteId, from: f64, until: f64) {
        let route = &mut self.routes.list[r];
        let caller = route.process;
        let tracks_in_flight = route.tracks_in_flight();
        let (Some(arrivals), Some(lb)) = (route.arrivals.as_mut(), route.balancer.spring_mut())
        else {
            return;
        };
        let span = arrivals.count(&mut route.rng, from, until);
        let requests = span.requests;
        if requests == 0 {
            return;
        }
        if lb.servers().is_empty() {
            self.observe(Observation::NoServers {
                route: r,
                count: requests,
            });
            return;
        }
        let (processes, faults) = (&self.processes, &self.faults);
        let answer = |p: ProcessId| faults.answer(caller, p, processes[p].answer());
        let (policy, costs) = (&route.policy, route.costs);
        let mut served = tracks_in_flight.then(|| {
            let accepted = lb.accepted_walk(&answer, policy, costs);
            (arrivals.span_times(&span), accepted)
        });
        let Some(walked) = lb.walk_requests(&answer, policy, costs, requests) else {
            if let Some((times, accepted)) = served {
                route.note_served_span(until, requests, times, accepted);
            }
            return;
        };
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
        self.observe_span(r, from, &dead, &walked.delays, &walked.failed);
    }
}
