//! A caller's route to one app: its request arrivals and its balancer, Ribbon (FACTS.md §8,
//! [`ribbon`]) or Spring Cloud LoadBalancer (§9, `spring`), each a rule that owns its state and
//! returns its effects to the world.
//!
//! Requests are handled one by one in the per-request reference mode; in the default batched
//! mode they are counted between changes of routing state by [`batch`].

mod arrivals;
mod attempt;
mod inflight;
pub mod ribbon;
mod spring;

use crate::engine::{RngStream, StreamFactory};
use crate::scenario::{CallPolicy, LoadBalancerConfig, RibbonConfig, Scenario};

use super::ids::ProcessId;
use super::layout::Layout;
pub use arrivals::Arrivals;
pub use attempt::{Answer, AttemptCosts};
use inflight::Served;
pub use inflight::{Accepted, GRACEFUL_POLL_MS};
use ribbon::circuit_breaker::CircuitBreaker;
pub use ribbon::{ClientLists, RIBBON_FIRST_REFRESH_MS, Ribbon, RibbonEffect, RibbonLoadBalancer};
pub use spring::{SpringEffect, SpringInputs, SpringLoadBalancer, SpringTimer, Traffic};

/// How a route picks an instance: Ribbon (Edgware to Hoxton: `ZoneAvoidanceRule` with its
/// server list, round-robin cursor and circuit breaker, FACTS.md §8) or Spring Cloud
/// LoadBalancer (2020.0 and later: round robin over its suppliers' list, no breaker). Either is
/// created at the first request (Ribbon also at start with `eager-load`).
#[derive(Debug)]
pub enum Balancer {
    Ribbon(Ribbon),
    Spring { lb: Option<SpringLoadBalancer> },
}

impl Balancer {
    pub fn uses_ribbon(&self) -> bool {
        matches!(self, Balancer::Ribbon(_))
    }

    /// Ribbon's load balancer, once created.
    pub fn ribbon(&self) -> Option<&RibbonLoadBalancer> {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.lb(),
            Balancer::Spring { .. } => None,
        }
    }

    pub fn ribbon_mut(&mut self) -> Option<&mut RibbonLoadBalancer> {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.lb_mut(),
            Balancer::Spring { .. } => None,
        }
    }

    /// Ribbon's circuit breaker settings (a Spring Cloud LoadBalancer has none: disabled).
    pub fn breaker(&self) -> CircuitBreaker {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.breaker(),
            Balancer::Spring { .. } => CircuitBreaker {
                enabled: false,
                threshold: 0,
                factor_s: 0,
                max_s: 0,
                failures_per_refusal: 1,
            },
        }
    }

    /// Spring Cloud LoadBalancer, once created.
    pub fn spring(&self) -> Option<&SpringLoadBalancer> {
        match self {
            Balancer::Spring { lb } => lb.as_ref(),
            Balancer::Ribbon(_) => None,
        }
    }

    pub fn spring_mut(&mut self) -> Option<&mut SpringLoadBalancer> {
        match self {
            Balancer::Spring { lb } => lb.as_mut(),
            Balancer::Ribbon(_) => None,
        }
    }

    /// Creates the Spring Cloud LoadBalancer (a no-op on a Ribbon route).
    pub fn create_spring(&mut self, created: SpringLoadBalancer) {
        if let Balancer::Spring { lb } = self {
            *lb = Some(created);
        }
    }
}

/// One `[[caller]]` calling one app.
#[derive(Debug)]
pub struct Route {
    pub caller: usize,
    pub process: ProcessId,
    pub application: usize,
    /// The caller's HTTP client settings (`ribbon.*`: timeouts and retries apply to both
    /// balancers).
    pub ribbon: RibbonConfig,
    /// The caller's stack's retries and `ServerStats` accounting (`CallerConfig::policy`).
    pub policy: CallPolicy,
    /// What an attempt costs and the Hystrix timeout, if any ([`attempt`]).
    pub costs: AttemptCosts,
    /// The caller's `spring.cloud.loadbalancer.*` settings.
    pub load_balancer: LoadBalancerConfig,
    /// The request stream (`None`: no traffic).
    pub(in crate::eureka) arrivals: Option<Arrivals>,
    /// Which balancer picks the instance, and its state once created.
    pub balancer: Balancer,
    /// The next arrival, in microseconds of simulated time (per-request mode; in batched mode
    /// the first request).
    next_arrival_us: f64,
    /// Batched mode, after the first request: arrivals since this instant (µs) are not yet
    /// counted.
    pub(in crate::eureka) batch_from_us: Option<f64>,
    pub(in crate::eureka) rng: RngStream,
    /// The caller is paused: its requests wait for its resume ([`Route::hold`]).
    held: bool,
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
    /// ([`run_batch`](ribbon::round_robin::run_batch)); the time of the last refused attempt is
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
pub struct RequestOutcome {
    /// The instance chosen first.
    first: Option<ProcessId>,
    /// The request failed after its retries (or at the Hystrix timeout).
    failed: bool,
    /// The server that accepted the request.
    accepted: Option<ProcessId>,
}

impl RequestOutcome {
    /// The server that accepted the request, if any.
    pub fn accepted(&self) -> Option<ProcessId> {
        self.accepted
    }

    /// The first-chosen instance of a request that failed after its retries (`None`: it did
    /// not fail, or nothing was chosen).
    pub fn failed_first(&self) -> Option<ProcessId> {
        if self.failed { self.first } else { None }
    }
}

/// Where a balancer reports one request's attempts, in the order it makes them (the world turns
/// them into observations).
pub trait AttemptOutput {
    /// Nothing to choose from: the request fails at once.
    fn no_server(&mut self);
    /// An attempt on `process`; `dead`: refused or timed out.
    fn attempt(&mut self, process: ProcessId, dead: bool);
    /// The caller waited `delay_ms` on `process`'s connect timeout.
    fn connect_timeout(&mut self, process: ProcessId, delay_ms: u64);
}

/// One report of [`AttemptOutput`], as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptEffect {
    NoServer,
    Attempt { process: ProcessId, dead: bool },
    ConnectTimeout { process: ProcessId, delay_ms: u64 },
}

impl AttemptOutput for Vec<AttemptEffect> {
    fn no_server(&mut self) {
        self.push(AttemptEffect::NoServer);
    }

    fn attempt(&mut self, process: ProcessId, dead: bool) {
        self.push(AttemptEffect::Attempt { process, dead });
    }

    fn connect_timeout(&mut self, process: ProcessId, delay_ms: u64) {
        self.push(AttemptEffect::ConnectTimeout { process, delay_ms });
    }
}

impl Route {
    pub fn build_all(scenario: &Scenario, layout: &Layout, streams: &StreamFactory) -> Vec<Route> {
        layout
            .routes
            .iter()
            .map(|slot| {
                let caller = &scenario.callers[slot.caller];
                let target = &caller.calls[slot.target];
                let policy = caller.policy(target, &scenario.simulation.release);
                let name = format!(
                    "route/{}/{}",
                    caller.name, scenario.apps[slot.application].name
                );
                Route {
                    caller: slot.caller,
                    process: slot.process,
                    application: slot.application,
                    ribbon: target.ribbon.clone(),
                    policy,
                    costs: AttemptCosts::of(caller, &target.ribbon),
                    load_balancer: caller.client.load_balancer.clone(),
                    arrivals: Arrivals::new(caller.rate_per_s, caller.fixed_rate),
                    balancer: if caller.uses_ribbon(&scenario.simulation.release) {
                        Balancer::Ribbon(Ribbon::new(CircuitBreaker::from_config(
                            &target.ribbon,
                            &policy,
                        )))
                    } else {
                        Balancer::Spring { lb: None }
                    },
                    next_arrival_us: 0.0,
                    batch_from_us: None,
                    held: false,
                    rng: streams.stream(&name),
                    service_us: scenario.apps[slot.application].service_time_ms as f64 * 1000.0,
                    served: std::collections::VecDeque::new(),
                }
            })
            .collect()
    }

    /// Servers tried per request and attempts on each: `(MaxAutoRetriesNextServer + 1,
    /// MaxAutoRetries + 1)` when the caller's stack retries this request, else `(1, 1)`
    /// ([`CallPolicy`]).
    pub(in crate::eureka) fn servers_to_try(&self) -> (u32, u32) {
        (self.policy.servers, self.policy.same)
    }

    /// The caller's traffic starts at `now_ms`: the first request comes an exponential gap later,
    /// or at a uniformly random phase of the fixed grid ([`Arrivals::first_gap`]). Returns its
    /// instant (µs), `None` without traffic.
    pub fn start_arrivals(&mut self, now_ms: u64) -> Option<f64> {
        let arrivals = self.arrivals.as_mut()?;
        let first = now_ms as f64 * 1000.0 + arrivals.first_gap(&mut self.rng);
        arrivals.anchor(first);
        self.next_arrival_us = first;
        Some(first)
    }

    /// The caller's traffic stops for good (its process died, `Scenario::caller_stops`): no
    /// request arrives any more, in either mode. The requests up to now must be counted first
    /// (the world reaches a route to change it only through its choke point, which does so).
    pub fn stop_arrivals(&mut self) {
        self.arrivals = None;
        self.batch_from_us = None;
    }

    /// The caller's process is paused (a `[[fault]]` pause, SIGSTOP): the threads that send its
    /// requests are stopped, so a request due now is not sent now. It is sent when the pause
    /// ends, with every other request due meanwhile, at once and in their order; then the
    /// requests come at their rate again. The requests up to now must be counted first (the
    /// choke point does so); a held route's requests are not counted until
    /// [`Route::release`].
    pub fn hold(&mut self) {
        self.held = true;
    }

    /// Whether the caller is paused ([`Route::hold`]).
    pub fn held(&self) -> bool {
        self.held
    }

    /// The caller's pause ended ([`Route::hold`]); [`Route::take_held`] then gives the requests
    /// it held.
    pub fn release(&mut self) {
        self.held = false;
    }

    /// Batched mode: how many requests, not yet counted, arrived before `now_us`, when they
    /// can only be requests a pause of the caller held (counting runs up to the present
    /// otherwise); they are counted now, to be sent now, one after the other. None in
    /// per-request mode, where the held arrivals' event runs at the resume instead.
    pub fn take_held(&mut self, now_us: f64) -> u64 {
        let (Some(from), Some(arrivals)) = (self.batch_from_us, self.arrivals.as_mut()) else {
            return 0;
        };
        if self.held || now_us <= from {
            return 0;
        }
        self.batch_from_us = Some(now_us);
        arrivals.count(&mut self.rng, from, now_us).requests
    }

    /// The instant (µs) of the next request to handle singly: every request in per-request
    /// mode, the first one in batched mode.
    pub fn next_arrival_us(&self) -> f64 {
        self.next_arrival_us
    }

    /// Per-request mode: the request at [`Route::next_arrival_us`] was handled; the next one
    /// comes a gap later ([`Arrivals::next_gap`]).
    pub fn advance_arrival(&mut self) {
        if let Some(arrivals) = self.arrivals {
            self.next_arrival_us += arrivals.next_gap(&mut self.rng);
        }
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
        lb.set_cursor(2);
        // current 2 >= modulo 2: next = 1, loop; current 1 -> returns 21, next = 0.
        assert_eq!(lb.choose(), Some(21));
        assert_eq!(lb.choose(), Some(20));
        lb.servers.clear();
        assert_eq!(lb.choose(), None);
    }
}
