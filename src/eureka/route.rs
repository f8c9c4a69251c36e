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

use crate::engine::{RngStream, SimTime, StreamFactory};
use crate::scenario::{BalancerKind, CallPolicy, LoadBalancerConfig, RibbonConfig, Scenario};

use super::ids::{ProcessId, RouteId};
use super::layout::Layout;
use super::observe::Observation;
pub use arrivals::Arrivals;
use arrivals::{CountedSpan, SpanTimes};
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
///
/// Every decision that depends on the kind is a method here or on [`Route`] (creation, the
/// steady start, timers, the Eureka client's new lists, one request, batched counting), each a
/// `match` that hands the call to the balancer's own module: the world never asks which
/// balancer a route has. A balancer reports through [`BalancerEffect`]s.
#[derive(Debug)]
pub enum Balancer {
    Ribbon(Ribbon),
    Spring { lb: Option<SpringLoadBalancer> },
}

/// A timer of a route's balancer (the world's `Event::Balancer` carries it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalancerTimer {
    /// Ribbon's `PollingServerListUpdater` task.
    RibbonRefresh,
    /// A Spring Cloud LoadBalancer timer.
    Spring(SpringTimer),
}

/// What a route's balancer asks of the world, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum BalancerEffect {
    /// The balancer (re)read its list: `old` was replaced by `new` (observed as a refresh and
    /// the instances that entered and left).
    ListChanged {
        old: Vec<ProcessId>,
        new: Vec<ProcessId>,
    },
    /// Arm `timer` `delay_ms` from now, guarded by `generation`.
    Schedule {
        delay_ms: u64,
        timer: BalancerTimer,
        generation: u32,
    },
    /// Observe this (a request's attempts, a counted span, a failed request).
    Observe(Observation),
}

/// What a route's balancer reads of the world at one instant.
#[derive(Clone, Copy)]
pub struct CallerView<'a> {
    pub now_ms: u64,
    /// Batched request counting ([`RequestMode::Batched`]).
    pub batched: bool,
    /// What it reads of the caller's Eureka client.
    pub client: ClientLists<'a>,
    /// How each instance answers the caller's connections now.
    pub answer: &'a dyn Fn(ProcessId) -> Answer,
}

impl Balancer {
    /// A route's balancer of `kind`, before its creation.
    fn new(kind: BalancerKind, ribbon: &RibbonConfig, policy: &CallPolicy) -> Balancer {
        match kind {
            BalancerKind::Ribbon => {
                Balancer::Ribbon(Ribbon::new(CircuitBreaker::from_config(ribbon, policy)))
            }
            BalancerKind::LoadBalancer => Balancer::Spring { lb: None },
        }
    }

    /// Whether the balancer has been created.
    pub fn created(&self) -> bool {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.lb().is_some(),
            Balancer::Spring { lb } => lb.is_some(),
        }
    }

    /// Whether the balancer's list holds `p`.
    pub fn lists(&self, p: ProcessId) -> bool {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.lb().is_some_and(|lb| lb.servers.contains(&p)),
            Balancer::Spring { lb } => lb.as_ref().is_some_and(|lb| lb.servers().contains(&p)),
        }
    }

    /// Whether a timer armed with `generation` is still the balancer's.
    pub fn timer_is_current(&self, generation: u32) -> bool {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.refresh_is_current(generation),
            Balancer::Spring { lb } => lb.as_ref().is_some_and(|lb| lb.is_current(generation)),
        }
    }

    /// Batched mode: the request that will read an empty cache is drawn and scheduled (a
    /// Spring Cloud LoadBalancer's), so nothing is counted until it comes.
    fn miss_pending(&self) -> bool {
        match self {
            Balancer::Ribbon(_) => false,
            Balancer::Spring { lb } => lb.as_ref().is_some_and(|lb| lb.miss_pending()),
        }
    }

    /// Ribbon's load balancer, once created.
    fn ribbon_mut(&mut self) -> Option<&mut RibbonLoadBalancer> {
        match self {
            Balancer::Ribbon(ribbon) => ribbon.lb_mut(),
            Balancer::Spring { .. } => None,
        }
    }
}

/// One `[[caller]]` calling one app.
#[derive(Debug)]
pub struct Route {
    /// Its index in the layout's routes.
    pub id: RouteId,
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
    arrivals: Option<Arrivals>,
    /// Which balancer picks the instance, and its state once created.
    pub balancer: Balancer,
    /// The next arrival, in microseconds of simulated time (per-request mode; in batched mode
    /// the first request).
    next_arrival_us: f64,
    /// Batched mode, after the first request: arrivals since this instant (µs) are not yet
    /// counted.
    batch_from_us: Option<f64>,
    rng: RngStream,
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
    /// One report, as data.
    fn report(&mut self, attempt: AttemptEffect);

    /// Nothing to choose from: the request fails at once.
    fn no_server(&mut self) {
        self.report(AttemptEffect::NoServer);
    }

    /// An attempt on `process`; `dead`: refused or timed out.
    fn attempt(&mut self, process: ProcessId, dead: bool) {
        self.report(AttemptEffect::Attempt { process, dead });
    }

    /// The caller waited `delay_ms` on `process`'s connect timeout.
    fn connect_timeout(&mut self, process: ProcessId, delay_ms: u64) {
        self.report(AttemptEffect::ConnectTimeout { process, delay_ms });
    }
}

/// One report of [`AttemptOutput`], as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptEffect {
    NoServer,
    Attempt { process: ProcessId, dead: bool },
    ConnectTimeout { process: ProcessId, delay_ms: u64 },
}

impl AttemptOutput for Vec<AttemptEffect> {
    fn report(&mut self, attempt: AttemptEffect) {
        self.push(attempt);
    }
}

impl Route {
    pub fn build_all(scenario: &Scenario, layout: &Layout, streams: &StreamFactory) -> Vec<Route> {
        layout
            .routes
            .iter()
            .enumerate()
            .map(|(id, slot)| {
                let caller = &scenario.callers[slot.caller];
                let target = &caller.calls[slot.target];
                let policy = caller.policy(target, &scenario.simulation.release);
                let name = format!(
                    "route/{}/{}",
                    caller.name, scenario.apps[slot.application].name
                );
                Route {
                    id,
                    caller: slot.caller,
                    process: slot.process,
                    application: slot.application,
                    ribbon: target.ribbon.clone(),
                    policy,
                    costs: AttemptCosts::of(caller, &target.ribbon),
                    load_balancer: caller.client.load_balancer.clone(),
                    arrivals: Arrivals::new(caller.rate_per_s, caller.fixed_rate),
                    balancer: Balancer::new(
                        caller.balancer(&scenario.simulation.release),
                        &target.ribbon,
                        &policy,
                    ),
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
    fn servers_to_try(&self) -> (u32, u32) {
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

    /// Whether the caller sends requests on this route (its traffic has not stopped).
    pub fn has_traffic(&self) -> bool {
        self.arrivals.is_some()
    }

    /// Batched mode: the first request was handled singly (it created the balancer); the
    /// requests after it are counted from its instant on, unless it left an empty cache
    /// behind (a miss is then pending, and counting waits for its request).
    pub fn count_after_first(&mut self) {
        if !self.balancer.miss_pending() {
            self.batch_from_us = Some(self.next_arrival_us);
        }
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

/// The balancer's rules, handed to its own module by kind ([`Balancer`]).
impl Route {
    /// Whether the balancer is created when the caller's web server is up (Ribbon with
    /// `eager-load`), not at the first request.
    pub fn created_at_start(&self) -> bool {
        match self.balancer {
            Balancer::Ribbon(_) => self.ribbon.eager_load,
            Balancer::Spring { .. } => false,
        }
    }

    /// The balancer's creation, at the first request (at `request_us`) or at start
    /// ([`Route::created_at_start`]): Ribbon's constructor ([`Ribbon::create`]), or Spring
    /// Cloud LoadBalancer's child context ([`SpringLoadBalancer::create`]).
    pub fn create_balancer(
        &mut self,
        cx: &CallerView<'_>,
        request_us: f64,
        out: &mut Vec<BalancerEffect>,
    ) {
        match self.balancer {
            Balancer::Ribbon(_) => self.ribbon_call(cx, out, |ribbon, config, lists, out| {
                ribbon.create(config, lists, out);
            }),
            Balancer::Spring { .. } => self.spring_call(cx, out, |lb, cx, traffic, out| {
                *lb = Some(SpringLoadBalancer::create(cx, traffic, request_us, out));
            }),
        }
    }

    /// `simulation.start = "steady"`: the balancer as after a long run, if one exists by then.
    /// A balancer is created at the first request (Ribbon also at start with eager loading):
    /// a route without traffic has none, however long it has run. Ribbon's polling updater's
    /// next run is at a uniform phase of its interval and its cursor anywhere, drawn from the
    /// route's stream ([`Ribbon::create_steady`]). An empty list is not cached: a Spring Cloud
    /// LoadBalancer over one is created by its first request, which then waits for the next,
    /// as on a cold start ([`SpringLoadBalancer::create_steady`]).
    pub fn create_steady(&mut self, cx: &CallerView<'_>, out: &mut Vec<BalancerEffect>) {
        let has_traffic = self.arrivals.is_some();
        match self.balancer {
            Balancer::Ribbon(_) => {
                if !has_traffic && !self.ribbon.eager_load {
                    return;
                }
                let first_refresh = self.rng.phase(self.ribbon.server_list_refresh_interval_ms);
                let cursor_draw = self.rng.unit();
                self.ribbon_call(cx, out, |ribbon, config, lists, out| {
                    ribbon.create_steady(config, lists, first_refresh, cursor_draw, out);
                });
            }
            Balancer::Spring { .. } => {
                if has_traffic && !cx.client.up_list.is_empty() {
                    self.spring_call(cx, out, |lb, cx, traffic, out| {
                        *lb = Some(SpringLoadBalancer::create_steady(cx, traffic, out));
                    });
                }
            }
        }
    }

    /// A timer of the balancer fired ([`Ribbon::on_refresh`], [`SpringLoadBalancer::on_timer`]);
    /// a stale one does nothing.
    pub fn on_balancer_timer(
        &mut self,
        generation: u32,
        timer: BalancerTimer,
        cx: &CallerView<'_>,
        out: &mut Vec<BalancerEffect>,
    ) {
        match timer {
            BalancerTimer::RibbonRefresh => {
                self.ribbon_call(cx, out, |ribbon, config, lists, out| {
                    ribbon.on_refresh(generation, config, lists, out);
                });
            }
            BalancerTimer::Spring(timer) => self.spring_call(cx, out, |lb, cx, traffic, out| {
                if let Some(lb) = lb {
                    lb.on_timer(generation, timer, cx, traffic, out);
                }
            }),
        }
    }

    /// Whether the balancer reads the Eureka client's new lists at once: Ribbon's
    /// `EurekaNotificationServerListUpdater`, once created, when the client's
    /// `CacheRefreshedEvent` reaches it (`notified`: not on Dalston, whose
    /// `CloudEurekaClient#onCacheRefreshed` did not call the super method, FACTS.md §8); a
    /// Spring Cloud LoadBalancer that reads the list at every request
    /// ([`SpringLoadBalancer::follows_client_lists`]).
    pub fn follows_client_lists(&self, notified: bool) -> bool {
        match &self.balancer {
            Balancer::Ribbon(ribbon) => notified && ribbon.follows_cache_refreshed(&self.ribbon),
            Balancer::Spring { lb } => {
                lb.is_some() && SpringLoadBalancer::follows_client_lists(&self.load_balancer)
            }
        }
    }

    /// The Eureka client has new lists ([`Route::follows_client_lists`]):
    /// [`Ribbon::on_cache_refreshed`], [`SpringLoadBalancer::on_client_lists_changed`].
    pub fn on_client_lists_changed(&mut self, cx: &CallerView<'_>, out: &mut Vec<BalancerEffect>) {
        match self.balancer {
            Balancer::Ribbon(_) => self.ribbon_call(cx, out, |ribbon, config, lists, out| {
                ribbon.on_cache_refreshed(config, lists, out);
            }),
            Balancer::Spring { .. } => self.spring_call(cx, out, |lb, cx, _, out| {
                if let Some(lb) = lb {
                    lb.on_client_lists_changed(cx, out);
                }
            }),
        }
    }

    /// One request handled singly at `cx.now_ms` (it arrived, or was sent, at `at_us`) through
    /// the balancer ([`Ribbon::request`], [`SpringLoadBalancer::request`]): its attempts
    /// observed (every one when `per_request`, else Ribbon's refused ones as counts; Spring
    /// Cloud LoadBalancer's every one), kept for the in-flight count, observed if it failed.
    pub fn serve_one(
        &mut self,
        cx: &CallerView<'_>,
        at_us: f64,
        per_request: bool,
        out: &mut Vec<BalancerEffect>,
    ) {
        let outcome = match self.balancer {
            Balancer::Ribbon(_) => self.ribbon_request(cx.now_ms, cx.answer, per_request, out),
            Balancer::Spring { .. } => self.spring_call(cx, out, |lb, cx, traffic, out| {
                lb.as_mut()
                    .map_or_else(RequestOutcome::default, |lb| lb.request(cx, traffic, out))
            }),
        };
        self.finish_request(at_us, outcome, per_request, out);
    }

    /// Batched mode: counts the requests that arrived since the last count, up to `until_us`
    /// (the routing state is constant over that interval by construction, apart from Ribbon's
    /// circuit breaker, which its counting follows phase by phase); `answer` is how each
    /// instance answers the caller. Nothing before the first request (it creates the
    /// balancer) and nothing of a paused caller (its requests wait for its resume,
    /// [`Route::hold`]).
    pub fn count_requests(
        &mut self,
        until_us: f64,
        answer: &dyn Fn(ProcessId) -> Answer,
        out: &mut Vec<BalancerEffect>,
    ) {
        let Some(from) = self.batch_from_us else {
            return;
        };
        if self.arrivals.is_none() || until_us <= from || self.held || !self.balancer.created() {
            return;
        }
        self.batch_from_us = Some(until_us);
        match self.balancer {
            Balancer::Ribbon(_) => self.count_ribbon(from, until_us, answer, out),
            Balancer::Spring { .. } => self.count_spring(from, until_us, answer, out),
        }
    }

    /// One request through Ribbon at `now_ms` ([`Ribbon::request`]), its attempts observed as
    /// [`attempt_observation`] says.
    fn ribbon_request(
        &mut self,
        now_ms: u64,
        answer: &dyn Fn(ProcessId) -> Answer,
        per_attempt: bool,
        out: &mut Vec<BalancerEffect>,
    ) -> RequestOutcome {
        let (tries, costs, route) = (self.servers_to_try(), self.costs, self.id);
        let Balancer::Ribbon(ribbon) = &mut self.balancer else {
            return RequestOutcome::default();
        };
        let mut observed = Observed {
            out,
            route,
            now_ms,
            per_attempt,
        };
        ribbon.request(tries, costs, now_ms, answer, &mut observed)
    }

    /// A request handled singly ended: kept for the in-flight count, observed if it failed.
    fn finish_request(
        &mut self,
        at_us: f64,
        outcome: RequestOutcome,
        per_request: bool,
        out: &mut Vec<BalancerEffect>,
    ) {
        self.note_served_one(at_us, outcome.accepted());
        if let Some(observation) = failed_observation(self.id, outcome, per_request) {
            out.push(BalancerEffect::Observe(observation));
        }
    }

    /// Calls `rule` on the route's [`Ribbon`] with its settings and the client's lists, and
    /// turns its effects into the route's.
    fn ribbon_call(
        &mut self,
        cx: &CallerView<'_>,
        out: &mut Vec<BalancerEffect>,
        rule: impl FnOnce(&mut Ribbon, &RibbonConfig, ClientLists<'_>, &mut Vec<RibbonEffect>),
    ) {
        let Balancer::Ribbon(ribbon) = &mut self.balancer else {
            return;
        };
        let mut effects = Vec::new();
        rule(ribbon, &self.ribbon, cx.client, &mut effects);
        out.extend(effects.into_iter().map(|effect| match effect {
            RibbonEffect::ListChanged { old, new } => BalancerEffect::ListChanged { old, new },
            RibbonEffect::ScheduleRefresh {
                delay_ms,
                generation,
            } => BalancerEffect::Schedule {
                delay_ms,
                timer: BalancerTimer::RibbonRefresh,
                generation,
            },
        }));
    }

    /// Calls `rule` on the route's Spring Cloud LoadBalancer (created or not) with what it
    /// reads ([`SpringInputs`], [`Traffic`]), and turns its effects into the route's: its
    /// requests' attempts are observed one by one wherever the request is handled, and a cache
    /// miss's request is kept for the in-flight count and observed if it failed.
    fn spring_call<T: Default>(
        &mut self,
        cx: &CallerView<'_>,
        out: &mut Vec<BalancerEffect>,
        rule: impl FnOnce(
            &mut Option<SpringLoadBalancer>,
            &SpringInputs<'_>,
            &mut Traffic<'_>,
            &mut Vec<SpringEffect>,
        ) -> T,
    ) -> T {
        let Balancer::Spring { lb } = &mut self.balancer else {
            return T::default();
        };
        let inputs = SpringInputs {
            now_ms: cx.now_ms,
            batched: cx.batched,
            config: &self.load_balancer,
            policy: &self.policy,
            costs: self.costs,
            client_list: cx.client.up_list,
            answer: cx.answer,
        };
        let mut traffic = Traffic {
            rng: &mut self.rng,
            arrivals: self.arrivals.as_mut(),
            count_from_us: &mut self.batch_from_us,
        };
        let mut effects = Vec::new();
        let result = rule(lb, &inputs, &mut traffic, &mut effects);
        for effect in effects {
            match effect {
                SpringEffect::ListChanged { old, new } => {
                    out.push(BalancerEffect::ListChanged { old, new });
                }
                SpringEffect::Schedule {
                    delay_ms,
                    timer,
                    generation,
                } => out.push(BalancerEffect::Schedule {
                    delay_ms,
                    timer: BalancerTimer::Spring(timer),
                    generation,
                }),
                SpringEffect::Attempt(attempt) => {
                    let observed = attempt_observation(self.id, cx.now_ms, true, attempt);
                    out.extend(observed.map(BalancerEffect::Observe));
                }
                SpringEffect::Served { at_us, outcome } => {
                    self.finish_request(at_us, outcome, true, out);
                }
            }
        }
        result
    }

    /// Batched mode, the end of a counted span `(from, until]` whose requests met refusals:
    /// the last refused request of each instance (`refused`: instance, attempts, 1-based index
    /// of the last request with one) gets its instant, from the in-flight sample when one is
    /// kept (`served`, then noted), else drawn from the span (one sample of the span's
    /// instants serves both); the span is observed ([`span_observations`]). Returns the
    /// refusals with the millisecond of each instance's last.
    #[allow(clippy::too_many_arguments)]
    fn settle_span(
        &mut self,
        (from, until): (f64, f64),
        span: &CountedSpan,
        served: Option<(SpanTimes, Accepted)>,
        refused: &[(ProcessId, u64, u64)],
        delays: &[(ProcessId, u64)],
        failed: &[(ProcessId, u64)],
        out: &mut Vec<BalancerEffect>,
    ) -> Vec<(ProcessId, u64, u64)> {
        let lasts: Vec<u64> = refused.iter().map(|&(_, _, last)| last).collect();
        let mut served = served;
        let times = match (served.as_mut(), self.arrivals.as_ref()) {
            (Some((kept, _)), _) => lasts
                .iter()
                .map(|&i| kept.time_of(&mut self.rng, i))
                .collect(),
            (None, Some(arrivals)) => arrivals.times_of(&mut self.rng, span, &lasts),
            (None, None) => Vec::new(),
        };
        if let Some((times, accepted)) = served {
            self.note_served_span(until, span.requests, times, accepted);
        }
        let dead: Vec<(ProcessId, u64, u64)> = refused
            .iter()
            .zip(times)
            .map(|(&(process, count, _), at_us)| (process, count, (at_us / 1000.0) as u64))
            .collect();
        span_observations(self.id, from, &dead, delays, failed, out);
        dead
    }
}

/// How one attempt of a request on `route` at `now_ms` is observed: every attempt as an
/// [`Observation::Attempt`] when `per_attempt`, else refused ones as counts stamped `now_ms`.
fn attempt_observation(
    route: RouteId,
    now_ms: u64,
    per_attempt: bool,
    attempt: AttemptEffect,
) -> Option<Observation> {
    Some(match attempt {
        AttemptEffect::NoServer if per_attempt => Observation::NoServer { route },
        AttemptEffect::NoServer => Observation::NoServers { route, count: 1 },
        AttemptEffect::Attempt { process, dead } if per_attempt => Observation::Attempt {
            route,
            process,
            dead,
        },
        AttemptEffect::Attempt {
            process,
            dead: true,
        } => Observation::DeadHits {
            route,
            process,
            count: 1,
            since: SimTime(now_ms),
            last: SimTime(now_ms),
        },
        AttemptEffect::Attempt { dead: false, .. } => return None,
        AttemptEffect::ConnectTimeout { process, delay_ms } => Observation::ConnectTimeouts {
            route,
            process,
            delay_ms,
        },
    })
}

/// How a request that failed after its retries is observed (`None`: it did not fail).
fn failed_observation(
    route: RouteId,
    outcome: RequestOutcome,
    per_request: bool,
) -> Option<Observation> {
    let first = outcome.failed_first()?;
    Some(if per_request {
        Observation::RequestFailed { route, first }
    } else {
        Observation::RequestsFailed {
            route,
            first,
            count: 1,
        }
    })
}

/// What a counted span did: refused attempts per instance (count and the instant of the last,
/// ms), connect-timeout delays and failed requests per first-chosen instance.
fn span_observations(
    route: RouteId,
    from_us: f64,
    dead: &[(ProcessId, u64, u64)],
    delays: &[(ProcessId, u64)],
    failed: &[(ProcessId, u64)],
    out: &mut Vec<BalancerEffect>,
) {
    for &(process, count, last_ms) in dead {
        out.push(BalancerEffect::Observe(Observation::DeadHits {
            route,
            process,
            count,
            since: SimTime(((from_us / 1000.0) as u64).min(last_ms)),
            last: SimTime(last_ms),
        }));
    }
    for &(process, delay_ms) in delays {
        out.push(BalancerEffect::Observe(Observation::ConnectTimeouts {
            route,
            process,
            delay_ms,
        }));
    }
    for &(first, count) in failed {
        out.push(BalancerEffect::Observe(Observation::RequestsFailed {
            route,
            first,
            count,
        }));
    }
}

/// A request's attempts, observed as they are made ([`attempt_observation`]).
struct Observed<'a> {
    out: &'a mut Vec<BalancerEffect>,
    route: RouteId,
    now_ms: u64,
    per_attempt: bool,
}

impl AttemptOutput for Observed<'_> {
    fn report(&mut self, attempt: AttemptEffect) {
        if let Some(o) = attempt_observation(self.route, self.now_ms, self.per_attempt, attempt) {
            self.out.push(BalancerEffect::Observe(o));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{ShutdownOutcome, simulate_with};
    use crate::scenario::parse_str;

    /// Eight trials of the scenario `text` with `--set` assignments `extra` in `mode`, trial
    /// `k` on seed `seed_base + k`: the first shutdown's outcome of each.
    pub(super) fn first_shutdowns(
        text: &str,
        extra: &[&str],
        seed_base: u64,
        mode: RequestMode,
    ) -> Vec<ShutdownOutcome> {
        let overrides: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let scenario = parse_str(text, "t.toml", "t", &overrides).unwrap();
        (0..8)
            .map(|trial| {
                let seed = seed_base + trial as u64;
                simulate_with(&scenario, trial, seed, mode).shutdowns[0].clone()
            })
            .collect()
    }

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
