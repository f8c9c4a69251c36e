//! The world of one trial: every actor, the event queue, and the dispatch loop.
//!
//! `run()` is a loop over `step()`; `step()` pops the next event, advances the clock and hands
//! the event to the actor that owns it. Actors keep their own state (`EurekaServer`,
//! `DiscoveryClient`, `Route`, `ShutdownRun`) in their own modules, which never see the world;
//! the event handlers that connect them are the `impl World` blocks of this folder, one file per
//! rule (`world/client.rs` for `client.rs`, ...). This folder is the only place that knows
//! everyone (`src/import_graph.rs` keeps it so).

mod client;
mod cluster;
mod deploy;
mod faults;
mod inflight;
mod restart;
mod route;
mod routing;
mod server;
mod shutdown;
mod steady;

use std::rc::Rc;

use crate::engine::{EventQueue, RngStream, SimTime, StreamFactory};
use crate::scenario::{ClientConfig, NetworkConfig, RestartWhen, Scenario, Start, TrialEnd};

use super::client::{ClientEffect, ClientTimer, DiscoveryClient, RenewAnswered};
use super::deploy::DeployRun;
use super::faults::Faults;
use super::ids::{ProcessId, RouteId, ServerId};
use super::layout::{Layout, ProcessKind};
use super::observe::{Holding, Observation, Observer};
use super::protocol::{BatchOutcome, Call, ReplicationBatch, Reply};
use super::restart::RestartRun;
use super::route::{BalancerEffect, BalancerTimer, RequestMode, Route};
use super::server::{EurekaServer, RENEWS_WINDOW_MS, ServerTimer};
use super::shutdown::{ShutdownRun, Step};
use super::transport::Stack;
pub use routing::Process;
use routing::Routes;

/// Wall-clock epoch of simulated time 0 (ms since 1970), before the per-trial random offset.
/// Only differences and alignment matter; a realistic size keeps `RateLimiter` arithmetic as in
/// production (its first refill tests against a zero stamp).
const WALL_EPOCH_BASE_MS: u64 = 1_700_000_000_000;

/// A graceful phase that has not ended yet (it may be cut short by a SIGKILL).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GracefulPhase {
    /// When the phase ends, ms.
    pub ends_ms: u64,
    /// If the phase times out: requests that arrived after this instant (µs) were already
    /// counted as failed when the phase began.
    pub timeout_cut_us: Option<f64>,
}

/// Everything that can happen. Timer events carry the generation they were armed with; a
/// cancelled or re-armed timer bumps its generation, so stale events are dropped on arrival.
#[derive(Debug, Clone)]
pub enum Event {
    ServerStart(ServerId),
    /// `incarnation`: the server's when armed (stale after a `[[fault]]` restart).
    ServerTimer {
        server: ServerId,
        incarnation: u32,
        timer: ServerTimer,
    },
    /// A REST call reaches the server.
    /// `seq` numbers the client's call (0 without a transport), for its reply.
    AtServer {
        server: ServerId,
        from: ProcessId,
        seq: u32,
        call: Call,
    },
    /// The reply reaches the client; `incarnation` guards against a restarted process.
    AtClient {
        to: ProcessId,
        incarnation: u32,
        seq: u32,
        reply: Reply,
    },
    ClientCreate(ProcessId),
    WebServerReady(ProcessId),
    /// A timer of `process`'s Eureka client.
    Client {
        process: ProcessId,
        timer: ClientTimer,
    },
    Arrivals {
        route: RouteId,
    },
    /// A timer of `route`'s balancer, armed with `generation`.
    Balancer {
        route: RouteId,
        generation: u32,
        timer: BalancerTimer,
    },
    Shutdown {
        run: usize,
        step: Step,
    },
    /// `[[restart]]` `run` starts its new process.
    Restart {
        run: usize,
    },
    /// `[[deploy]]` `deploy` starts its next batch.
    DeployBatch {
        deploy: usize,
    },
    /// A replication batch from server `from` reaches its peer `to`.
    PeerBatch {
        to: ServerId,
        from: ServerId,
        batch: Rc<ReplicationBatch>,
    },
    /// The peer's answer to batch `batch` reaches the server `to` that sent it.
    PeerBatchReply {
        to: ServerId,
        incarnation: u32,
        peer: ServerId,
        batch: u64,
        outcome: Box<BatchOutcome>,
    },
    /// Call `seq` of `from`'s Eureka client (incarnation `incarnation`) sends its SYN to
    /// `server` again, the first having left at `began` across a partition.
    SynRetransmit {
        from: ProcessId,
        incarnation: u32,
        server: ServerId,
        seq: u32,
        call: Call,
        began: SimTime,
    },
    /// `[[fault]] fault` begins or ends.
    Fault {
        fault: usize,
        edge: faults::Edge,
    },
    /// A zone outage stops caller `caller` (`Scenario::caller_stops`).
    CallerStop {
        caller: usize,
    },
}

impl Event {
    /// Call `seq` of `from`'s Eureka client on its way to `server`.
    fn at_server(server: ServerId, from: ProcessId, seq: u32, call: Call) -> Event {
        Event::AtServer {
            server,
            from,
            seq,
            call,
        }
    }
}

/// One trial's world.
pub struct World<'s, O: Observer> {
    pub(super) scenario: &'s Scenario,
    pub(super) queue: EventQueue<Event>,
    /// The Eureka servers, by [`ServerId`]: the standalone server, or one per `[[peer]]`.
    pub(super) servers: Vec<EurekaServer>,
    /// Each server's own process (its embedded client, its network stream), by [`ServerId`].
    pub(super) server_processes: Vec<ProcessId>,
    /// The `[[fault]]`s under way.
    pub(super) faults: Faults,
    /// The trial's streams, for what starts during the trial (a restarted peer).
    pub(super) streams: StreamFactory,
    pub(super) processes: Vec<Process>,
    /// The application of each process (what a client's lists are sorted by).
    pub(super) applications: Vec<usize>,
    routes: Routes,
    pub(super) shutdowns: Vec<ShutdownRun>,
    pub(super) restarts: Vec<RestartRun>,
    pub(super) deploys: Vec<DeployRun>,
    /// One latency stream per process (`net/<name>`), used for both directions of its
    /// registration stack's calls (register, renew, cancel, status) and its server's batches.
    pub(super) net: Vec<RngStream>,
    /// One per process (`net/<name>/query`) for both directions of its fetches: apart from
    /// `net`, so that leaving out fetches nobody observes moves no other draw.
    pub(super) net_query: Vec<RngStream>,
    pub(super) wall_epoch_ms: u64,
    pub(super) observer: O,
    pub(super) request_mode: RequestMode,
    /// Scratch space: one mark per process (left all false between uses).
    pub(super) scratch_marks: Vec<bool>,
    /// Scratch space: a client's effects that wait for the world, carried out in order.
    pub(super) client_effects: Vec<ClientEffect>,
    /// Scratch space: one balancer call's effects, carried out in order.
    pub(super) balancer_effects: Vec<BalancerEffect>,
    /// `duration-s`: the trial runs at least this long.
    end: SimTime,
    /// `max-duration-s`: and at most this long.
    cap: SimTime,
    /// `simulation.end = "resolved"`: the trial may end before `end` once at rest
    /// ([`World::at_rest`]).
    ends_resolved: bool,
    /// The last instant fixed in the scenario at which a planned action happens (a stop begins,
    /// a fault begins or ends, a caller stops, a fixed restart or a deploy starts): no trial ends
    /// early before it.
    last_planned: SimTime,
    /// `Event::Shutdown` steps scheduled and not yet handled (a stop under way).
    pending_shutdown_steps: u32,
    /// The most events the trial may handle ([`World::limit_events`]; unlimited by default).
    event_limit: u64,
    /// The fast mode: events no one observes and that change nothing are left out (unobserved
    /// fetches, idle replicator runs, found renews' replies); off in the reference,
    /// [`World::with_every_fetch`].
    pub(super) leaves_out_unobserved: bool,
}

/// What [`World::run`] tells besides the observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    /// Events handled.
    pub events: u64,
    /// The instant the trial ended: `duration-s`, or later when it waited for the news.
    pub end: SimTime,
    /// The trial stopped at its event limit ([`World::limit_events`]) before its end.
    pub over_limit: bool,
}

impl<'s, O: Observer> World<'s, O> {
    /// Builds the world of the trial with seed `trial_seed` and its start: by default the fleet
    /// as after a long uptime (`steady.rs`), or a cold start
    /// ([`World::schedule_cold_start`]).
    pub fn new(scenario: &'s Scenario, trial_seed: u64, observer: O) -> Self {
        Self::with_mode(scenario, trial_seed, observer, RequestMode::default())
    }

    /// [`World::new`] with a choice of how requests are simulated.
    pub fn with_mode(
        scenario: &'s Scenario,
        trial_seed: u64,
        observer: O,
        request_mode: RequestMode,
    ) -> Self {
        let layout = Layout::new(scenario);
        Self::build(scenario, &layout, trial_seed, observer, request_mode, true)
    }

    /// [`World::with_mode`] over `layout`, the scenario's [`Layout::new`] built once for all the
    /// trials of a run (it is a pure function of the scenario, and formatting every instance id
    /// again in each trial was a tenth of a short trial's cost).
    pub fn with_layout(
        scenario: &'s Scenario,
        layout: &Layout,
        trial_seed: u64,
        observer: O,
        request_mode: RequestMode,
    ) -> Self {
        Self::build(scenario, layout, trial_seed, observer, request_mode, true)
    }

    /// The reference mode of the fetch pruning: [`World::with_mode`], but every client
    /// fetches, even one whose fetches no one observes and change nothing
    /// ([`DiscoveryClient::leave_out_fetches`]). Tests compare the two; `explain` tells its
    /// story from this one.
    pub fn with_every_fetch(
        scenario: &'s Scenario,
        trial_seed: u64,
        observer: O,
        request_mode: RequestMode,
    ) -> Self {
        let layout = Layout::new(scenario);
        Self::build(scenario, &layout, trial_seed, observer, request_mode, false)
    }

    fn build(
        scenario: &'s Scenario,
        layout: &Layout,
        trial_seed: u64,
        observer: O,
        request_mode: RequestMode,
        leaves_out_unobserved: bool,
    ) -> Self {
        let streams = StreamFactory::new(trial_seed);
        let mut setup = streams.stream("setup");
        let wall_epoch_ms = WALL_EPOCH_BASE_MS + setup.below(86_400_000);
        debug_assert_eq!(
            layout.processes.len(),
            Layout::new(scenario).processes.len()
        );
        let shutdowns = ShutdownRun::build_all(scenario, layout);
        let mut vanishes = vec![false; layout.processes.len()];
        for run in &shutdowns {
            vanishes[run.process] |= run.config.host_vanishes;
        }
        let processes = build_processes(scenario, layout, &streams, &vanishes);
        let applications = processes.iter().map(|p| p.application).collect();
        let net = processes
            .iter()
            .map(|p| streams.stream_of(&["net/", &p.name]))
            .collect();
        let net_query = processes
            .iter()
            .map(|p| streams.stream_of(&["net/", &p.name, "/query"]))
            .collect();
        let routes = Routes::new(Route::build_all(scenario, layout, &streams));
        let restarts = RestartRun::build_all(scenario, layout, &streams);
        let deploys = DeployRun::build_all(scenario, layout);
        let servers = cluster::build_servers(scenario, processes.len(), &streams);
        let server_processes = layout.server_processes();
        let mut world = World {
            scenario,
            queue: EventQueue::new(),
            faults: Faults::new(processes.len(), servers.len()),
            servers,
            server_processes,
            streams,
            processes,
            applications,
            routes,
            shutdowns,
            restarts,
            deploys,
            net,
            net_query,
            wall_epoch_ms,
            observer,
            request_mode,
            scratch_marks: Vec::new(),
            client_effects: Vec::new(),
            balancer_effects: Vec::new(),
            end: SimTime(scenario.simulation.duration_ms),
            cap: SimTime(
                scenario
                    .simulation
                    .max_duration_ms
                    .max(scenario.simulation.duration_ms),
            ),
            ends_resolved: scenario.simulation.end == TrialEnd::Resolved,
            last_planned: SimTime(last_planned_ms(scenario)),
            pending_shutdown_steps: 0,
            event_limit: u64::MAX,
            leaves_out_unobserved,
        };
        world.connect_clients(&streams);
        world.leave_out_unobserved();
        match scenario.simulation.start {
            Start::Steady => world.start_steady(layout.first_replacement),
            Start::Cold => world.schedule_cold_start(&mut setup, layout.first_replacement),
        }
        for run in 0..world.shutdowns.len() {
            let at = SimTime(world.shutdowns[run].config.at_ms);
            world.schedule_shutdown_step(at, run, Step::Begin);
        }
        world.schedule_restarts();
        world.schedule_faults();
        world.schedule_deploys();
        world.schedule_caller_stops();
        world
    }

    /// `simulation.start = "cold"`: the server opens at a random instant in `[0, max(eviction
    /// period, 60 s))`, so the phase of its eviction and renews-last-minute timers relative to a
    /// shutdown is random; every app instance and caller is created at a random instant in
    /// `[server start, server start + start-spread)`. Replacement processes (restarts under a
    /// new id, deploys) start when their owner says.
    ///
    /// In a cluster, the first peer starts as the standalone server does and every other peer
    /// at an instant drawn the same way from its own stream (`server/<name>`), so peers start
    /// independently; the fleet's spread counts from the first peer's start.
    fn schedule_cold_start(&mut self, setup: &mut RngStream, first_replacement: usize) {
        let scenario = self.scenario;
        let phase = scenario.server.eviction_interval_ms.max(RENEWS_WINDOW_MS);
        let server_start = setup.below(phase);
        let mut starts = vec![server_start];
        for k in 1..self.servers.len() {
            let peer_phase = self.servers[k].eviction_interval_ms().max(RENEWS_WINDOW_MS);
            starts.push(self.servers[k].draw_below(peer_phase));
        }
        for (k, &at) in starts.iter().enumerate() {
            let event = Event::ServerStart(ServerId(k as u32));
            self.queue.schedule(SimTime(at), event);
        }
        for p in 0..first_replacement {
            let at = match self.processes[p].kind {
                ProcessKind::Server { peer } => starts[peer],
                _ => server_start + setup.below(scenario.simulation.start_spread_ms.max(1)),
            };
            self.queue.schedule(SimTime(at), Event::ClientCreate(p));
        }
    }

    /// Runs the trial and returns the observer, the number of events handled and the instant
    /// the trial ended. It runs to `duration-s`, or with `simulation.end = "resolved"` until the
    /// first event after which the world is at rest ([`World::at_rest`]) if that comes first;
    /// if the observer is not yet settled at `duration-s` (a view still lists a stopped
    /// instance), it goes on until it is, up to `max-duration-s`, and ends at the instant of
    /// the event that settled it. Whatever still lists a stopped instance at the end is
    /// reported with its reason ([`Observation::StillListed`]).
    pub fn run(mut self) -> (O, Ran) {
        let mut events = 0u64;
        let mut over_limit = false;
        // One loop (one inlined dispatch): to `duration-s`, then, while waiting, to the cap.
        let (mut limit, mut end) = (self.end, self.end);
        loop {
            if !self.step_until(limit) {
                if limit == self.cap || self.observer.settled() {
                    break;
                }
                (limit, end) = (self.cap, self.cap);
                continue;
            }
            events += 1;
            if events >= self.event_limit {
                (over_limit, end) = (true, self.now());
                break;
            }
            if limit == self.end {
                if self.ends_resolved && self.at_rest() {
                    end = self.now();
                    break;
                }
            } else if limit == self.cap && self.observer.settled() {
                end = self.now();
                break;
            }
        }
        // The clock moves to the end, so what is told there is told at the end, not at the
        // instant of the last event (which a left-out no-op event would move).
        self.queue.advance_to(end);
        self.settle_routes_until(end);
        self.report_still_listed(end);
        (
            self.observer,
            Ran {
                events,
                end,
                over_limit,
            },
        )
    }

    /// The reference mode of the event pruning: every supervised run arms its
    /// `TaskTimeout`, even where the world knows it can only arrive stale
    /// ([`DiscoveryClient::calls_answered_in_time`]). Tests compare the two modes.
    pub fn arm_every_timeout(mut self) -> Self {
        for process in &mut self.processes {
            process.client.arm_task_timeouts();
        }
        self
    }

    /// Stops the trial after `limit` events (`Ran::over_limit`): a guard against a trial that
    /// runs far beyond what its scenario's periodic rules make (a fuzzing finding), which the caller
    /// reports as an error. One comparison per event.
    pub fn limit_events(mut self, limit: u64) -> Self {
        self.event_limit = limit;
        self
    }

    /// Nothing measured can change any more unless a planned action comes: every fixed planned
    /// instant is past, no stop is under way (a step pending, a reply awaited), every restart
    /// and deploy is done, and the observer is at rest ([`Observer::at_rest`]: the stopped
    /// instances have left every view, no live instance is missing from a list, no deploy dip
    /// is open). Periodic timers and requests go on in the full simulation, but from here they
    /// only repeat what every view already agrees on. Cheap before the last planned instant
    /// (one comparison), so it is asked after every event.
    #[inline]
    fn at_rest(&self) -> bool {
        self.now() >= self.last_planned
            && self.pending_shutdown_steps == 0
            && self.shutdowns.iter().all(ShutdownRun::idle)
            && self.restarts.iter().all(RestartRun::finished)
            && self.deploys.iter().all(DeployRun::finished)
            && self.observer.at_rest()
    }

    /// Schedules step `step` of shutdown run `run` at `at` (counted until it is handled).
    pub(super) fn schedule_shutdown_step(&mut self, at: SimTime, run: usize, step: Step) {
        self.pending_shutdown_steps += 1;
        self.queue.schedule(at, Event::Shutdown { run, step });
    }

    /// Reports, for each stopped shutdown target that a view still lists at `end`, why
    /// ([`EurekaServer::holding`], else a caller that has not caught up). A server that is down
    /// (crashed, or down in a restart) lists nothing and is not asked: its frozen registry
    /// would name a rule that no longer runs (spring-cloud-netflix#1822: the crashed peer's
    /// "eviction pending" hid the live peer's self-preservation).
    fn report_still_listed(&mut self, end: SimTime) {
        for run in 0..self.shutdowns.len() {
            let p = self.shutdowns[run].process;
            if self.processes[p].serving() || self.shutdowns[..run].iter().any(|s| s.process == p) {
                continue;
            }
            let renewing = self.processes[p].alive() && self.processes[p].client.renews();
            // A crashed peer holds nothing for anyone: it neither evicts nor answers.
            let faults = &self.faults;
            let holding = self
                .servers
                .iter()
                .filter(|server| !faults.is_down(server.id))
                .find_map(|server| server.holding(end, p, renewing))
                .or_else(|| self.caller_still_lists(p).then_some(Holding::Caller));
            if let Some(holding) = holding {
                self.observe(Observation::StillListed {
                    process: p,
                    holding,
                });
            }
        }
    }

    /// Whether some live caller's Eureka cache or balancer list still has `p` UP (a caller that
    /// died in a zone outage lists nothing).
    fn caller_still_lists(&self, p: ProcessId) -> bool {
        let application = self.applications[p];
        self.routes.iter().any(|route| {
            route.application == application
                && self.processes[route.process].alive()
                && (self.processes[route.process].client.is_up_in_cache(p)
                    || route.balancer.lists(p))
        })
    }

    /// Handles the next event due by `duration-s`; false when there is none.
    pub fn step(&mut self) -> bool {
        self.step_until(self.end)
    }

    /// Handles the next event due by `until`; false when there is none. Inlined into its
    /// callers: the dispatch runs once per event, and a call per event costs about 1.5 % of a
    /// run (callgrind, kill-9.toml, 200 trials).
    #[inline(always)]
    fn step_until(&mut self, until: SimTime) -> bool {
        let Some((_, event)) = self.queue.pop_until(until) else {
            return false;
        };
        if self.faults.active()
            && let Some(owner) = self.owner(&event)
            && let Some(resume) = self.faults.paused(owner, self.now())
        {
            // Its process is paused: the event waits, and runs in its order after the pause.
            self.queue.schedule(resume, event);
            return true;
        }
        match event {
            Event::ServerStart(s) => self.start_server(s),
            Event::ServerTimer {
                server,
                incarnation,
                timer,
            } => {
                if self.servers[server.index()].incarnation == incarnation
                    && !self.faults.is_down(server)
                {
                    self.on_server_timer(server, timer);
                }
            }
            Event::AtServer {
                server,
                from,
                seq,
                call,
            } => self.on_server_call(server, from, seq, call),
            Event::AtClient {
                to,
                incarnation,
                seq,
                reply,
            } => {
                let process = &self.processes[to];
                if process.alive() && process.client.incarnation() == incarnation {
                    self.on_client_reply(to, seq, reply);
                }
            }
            Event::ClientCreate(p) => self.on_client_create(p),
            Event::WebServerReady(p) => self.on_web_server_ready(p),
            Event::Client { process, timer } => self.on_client_timer(process, timer),
            Event::Arrivals { route } => self.on_arrivals(route),
            Event::Balancer {
                route,
                generation,
                timer,
            } => self.on_balancer_timer(route, generation, timer),
            Event::Shutdown { run, step } => {
                self.pending_shutdown_steps -= 1;
                self.on_shutdown_step(run, step)
            }
            Event::Restart { run } => self.on_restart(run),
            Event::DeployBatch { deploy } => self.on_deploy_batch(deploy),
            Event::PeerBatch { to, from, batch } => self.on_peer_batch(to, from, &batch),
            Event::PeerBatchReply {
                to,
                incarnation,
                peer,
                batch,
                outcome,
            } => {
                if self.servers[to.index()].incarnation == incarnation {
                    self.on_peer_batch_reply(to, peer, batch, *outcome);
                }
            }
            Event::SynRetransmit {
                from,
                incarnation,
                server,
                seq,
                call,
                began,
            } => self.on_syn_retransmit((from, incarnation), (server, seq, call), began),
            Event::Fault { fault, edge } => self.on_fault(fault, edge),
            Event::CallerStop { caller } => self.on_caller_stop(caller),
        }
        true
    }

    pub fn now(&self) -> SimTime {
        self.queue.now()
    }

    /// Wall-clock milliseconds (all machines' clocks agree in this model).
    pub(super) fn wall_now(&self) -> u64 {
        self.wall_epoch_ms + self.queue.now().ms()
    }

    pub(super) fn observe(&mut self, observation: Observation) {
        report(
            &mut self.queue,
            &mut self.deploys,
            &mut self.observer,
            observation,
        );
    }

    /// One network traversal for `p`'s registration calls and its server's batches:
    /// `latency-ms + U[0, jitter]`.
    pub(super) fn latency(&mut self, p: ProcessId) -> u64 {
        latency(&self.scenario.network, &mut self.net[p])
    }

    /// Gives process `p`'s next incarnation, called `name` (`svc-0#1`), fetches of its own
    /// (`net/<name>/query`): what the earlier one's drew depends on whether they were left out
    /// (`DiscoveryClient::leave_out_fetches`).
    pub(super) fn renew_query_stream(&mut self, p: ProcessId, name: &str) {
        self.net_query[p] = self.streams.stream(&format!("net/{name}/query"));
    }

    /// One network traversal for a call of `p`'s `stack`, from that stack's stream.
    pub(super) fn call_latency(&mut self, p: ProcessId, stack: Stack) -> u64 {
        let stream = match stack {
            Stack::Registration => &mut self.net[p],
            Stack::Query => &mut self.net_query[p],
        };
        latency(&self.scenario.network, stream)
    }

    /// Sends a REST call from `p` to the server its client picks; it arrives after one
    /// latency.
    pub(super) fn send(&mut self, from: ProcessId, call: Call) {
        let now = self.now();
        let key = self.queue.last_key();
        let client = &mut self.processes[from].client;
        client.apply_pending_renew(key);
        let (server, seq) = client.route_call(now, call);
        self.send_to(from, server, seq, call);
    }

    /// Sends call `seq` from `from` to `server`; it arrives after one latency, unless a
    /// `[[fault]]` stops it.
    pub(super) fn send_to(&mut self, from: ProcessId, server: ServerId, seq: u32, call: Call) {
        let now = self.now();
        self.send_begun(from, (server, seq, call), now);
    }

    /// [`World::send_to`] for a call whose connect began at `began` (now, or earlier for a SYN
    /// retransmission across a partition).
    pub(super) fn send_begun(
        &mut self,
        from: ProcessId,
        (server, seq, call): (ServerId, u32, Call),
        began: SimTime,
    ) {
        if self.faults.active() && !self.call_meets_faults(from, (server, seq, call), began) {
            return;
        }
        let delay = self.call_latency(from, Stack::of(&call));
        self.queue
            .schedule_in(delay, Event::at_server(server, from, seq, call));
    }

    /// Sends the server's reply to call `seq` (of `to`'s `stack`) back to `to`.
    ///
    /// In the fast mode, with no `[[fault]]` (which could hold the reply), a found renew's reply
    /// to a live client is no event: the client handles it now
    /// ([`DiscoveryClient::renew_answered_ahead`]) at the place in the order the event would
    /// have taken ([`EventQueue::reserve`]). A reply to a dead process is dropped either way
    /// (it could only reach a later incarnation, which drops it).
    pub(super) fn reply(&mut self, to: ProcessId, seq: u32, stack: Stack, reply: Reply) {
        let delay = self.call_latency(to, stack);
        if let Reply::Renewed { found: true } = reply
            && self.leaves_out_unobserved
            && self.scenario.faults.is_empty()
        {
            let process = &self.processes[to];
            if !process.alive() {
                return;
            }
            if process.client.takes_renew_reply_ahead() {
                let at = self.now() + delay;
                let key = self.queue.reserve(at);
                let answered = RenewAnswered {
                    seq,
                    delay_ms: delay,
                    at,
                    key,
                };
                return self.with_client(to, |c, _, out| c.renew_answered_ahead(answered, out));
            }
        }
        let incarnation = self.processes[to].client.incarnation();
        let event = Event::AtClient {
            to,
            incarnation,
            seq,
            reply,
        };
        self.queue.schedule_in(delay, event);
    }

    /// The observer, e.g. to inspect it mid-run in tests.
    pub fn observer(&self) -> &O {
        &self.observer
    }

    /// Wall-clock milliseconds at simulated time 0.
    pub fn wall_epoch_ms(&self) -> u64 {
        self.wall_epoch_ms
    }

    /// The first (for now the only) Eureka server.
    pub fn server(&self) -> &EurekaServer {
        &self.servers[ServerId::FIRST.index()]
    }

    pub fn servers(&self) -> &[EurekaServer] {
        &self.servers
    }

    pub fn processes(&self) -> &[Process] {
        &self.processes
    }
}

/// The last instant the scenario fixes for a planned action: a `[[shutdown]]`'s start, a
/// `[[fault]]`'s start and end, a zone outage's caller stop, a `[[restart]]` at a fixed time, a
/// `[[deploy]]`'s start. What follows from them (a stop's later steps, a restart after an exit,
/// a deploy's next batches) is tracked by the runs themselves ([`World::at_rest`]).
fn last_planned_ms(scenario: &Scenario) -> u64 {
    let shutdowns = scenario.shutdowns.iter().map(|s| s.at_ms);
    let faults = scenario.faults.iter().map(|f| f.at_ms.max(f.ends_ms()));
    let callers = scenario.caller_stops.iter().map(|c| c.at_ms);
    let restarts = scenario.restarts.iter().filter_map(|r| match r.when {
        RestartWhen::At(at) => Some(at),
        _ => None,
    });
    let deploys = scenario.deploys.iter().map(|d| d.at_ms);
    shutdowns
        .chain(faults)
        .chain(callers)
        .chain(restarts)
        .chain(deploys)
        .max()
        .unwrap_or(0)
}

/// One network traversal: `latency-ms + U[0, jitter]` from the sender's stream.
fn latency(network: &NetworkConfig, stream: &mut RngStream) -> u64 {
    network.latency_ms + stream.between(0, network.latency_jitter_ms)
}

/// Reports an observation now. A rolling deploy waits for its new instances to be UP in the
/// registry, so a registry UP may start its next batch.
fn report<O: Observer>(
    queue: &mut EventQueue<Event>,
    deploys: &mut [DeployRun],
    observer: &mut O,
    observation: Observation,
) {
    if let Observation::Registry {
        process, up: true, ..
    } = observation
    {
        for (deploy, run) in deploys.iter_mut().enumerate() {
            if let Some(interval) = run.saw_up(process) {
                queue.schedule_in(interval, Event::DeployBatch { deploy });
            }
        }
    }
    observer.observe(queue.now(), observation);
}

/// Every process, not started; `vanishes[p]`: `[[shutdown]] host = "vanishes"` for `p`.
fn build_processes(
    scenario: &Scenario,
    layout: &Layout,
    streams: &StreamFactory,
    vanishes: &[bool],
) -> Vec<Process> {
    let servers = scenario.servers();
    // One copy of each configuration, shared by the processes started from it.
    let shared = |configs: Vec<&ClientConfig>| -> Vec<Rc<ClientConfig>> {
        configs.into_iter().map(|c| Rc::new(c.clone())).collect()
    };
    // An app spread over zones has one configuration per zone (`AppConfig::client_of`).
    let apps: Vec<Vec<Rc<ClientConfig>>> = scenario
        .apps
        .iter()
        .map(|a| match a.zone_clients.len() {
            0 => shared(vec![&a.client]),
            _ => shared(a.zone_clients.iter().collect()),
        })
        .collect();
    let callers = shared(scenario.callers.iter().map(|c| &c.client).collect());
    let peers = shared(servers.iter().map(|s| &s.server.client).collect());
    layout
        .processes
        .iter()
        .zip(vanishes)
        .enumerate()
        .map(|(p, (slot, &host_vanishes))| {
            let config = match slot.kind {
                ProcessKind::AppInstance { app, index } => {
                    &apps[app][index as usize % apps[app].len()]
                }
                ProcessKind::Caller { caller } => &callers[caller],
                ProcessKind::Server { peer } => &peers[peer],
            };
            // The applications it routes to.
            let called = match slot.kind {
                ProcessKind::Caller { caller } => scenario.callers[caller]
                    .calls
                    .iter()
                    .map(|t| t.app)
                    .collect(),
                _ => Vec::new(),
            };
            let stream = streams.stream_of(&["client/", &slot.name]);
            let release = scenario.simulation.release;
            let client = DiscoveryClient::new(p, Rc::clone(config), release, called, stream);
            Process::new(slot, client, host_vanishes)
        })
        .collect()
}
