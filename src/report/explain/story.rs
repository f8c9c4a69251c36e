//! The story of one shutdown: what `explain` follows through the trace, one observation at a
//! time. The state is here, with the dispatch; the sentences of each layer are in their own
//! module: the instance and its lease ([`super::lease`]), the servers and their caches
//! ([`super::servers`]), the callers' Eureka clients ([`super::clients`]) and their balancers
//! ([`super::balancer`]).

use crate::engine::SimTime;
use crate::eureka::{Observation, ProcessId, ServerId};
use crate::scenario::{ClientConfig, Release, Scenario, ShutdownConfig, Strategy};

use super::{Explanation, FetchKind, Gate, Step, resume_text, strategy_text};

/// What the story has learned so far, per server and per caller, and the steps told.
pub(super) struct Story<'t, 'e> {
    pub(super) told: &'e Explanation<'t>,
    pub(super) scenario: &'e Scenario,
    pub(super) config: &'e ShutdownConfig,
    pub(super) target: ProcessId,
    pub(super) start: SimTime,
    pub(super) release: Release,
    pub(super) app_client: &'e ClientConfig,
    pub(super) steps: Vec<Step>,
    /// When the last renew before the strategy made the lease expirable.
    pub(super) expirable: Option<SimTime>,
    /// Per server (a peer's copy is renewed by the replicated heartbeat, later): when its copy
    /// of the lease became expirable. Found once per server, not per eviction run (a scan per
    /// run made `explain` quadratic in the eviction rate, found by fuzzing).
    pub(super) last_renew_on: Vec<Option<SimTime>>,
    pub(super) first_evicted_on: Vec<Option<SimTime>>,
    pub(super) target_app: usize,
    /// The callers of the stopped instance's app.
    pub(super) callers: Vec<ProcessId>,
    pub(super) duration_s: u64,
    /// The process a `[[restart]]` starts in the instance's place, if any.
    pub(super) restart_new: Option<ProcessId>,
    pub(super) graceful: bool,
    pub(super) timeout_s: f64,
    pub(super) cancelled_at: Option<SimTime>,
    pub(super) evicted: bool,
    pub(super) restarted_at: Option<SimTime>,
    pub(super) ghost_registered: Option<SimTime>,
    /// Per server: its eviction runs blocked while its copy was expired and still held, and
    /// the last one. Each peer evicts on its own, so each is counted and told apart.
    pub(super) gates: Vec<(usize, Option<Gate>)>,
    /// In a cluster, per server: whether it holds the instance's lease. A peer that cancelled
    /// it (or went down) has nothing left for its eviction to remove, so its blocked runs do
    /// not hold the instance. (A standalone server's runs are told as they always were, after
    /// a DELETE too.)
    pub(super) cluster: bool,
    pub(super) holds: Vec<bool>,
    /// Per server: when it last cancelled the instance's lease (a register after that
    /// re-creates it there).
    pub(super) cancelled_on: Vec<Option<SimTime>>,
    /// Per server: when it came back from a `[[fault]]` restart, when (and from which peer's
    /// replication, if any) it got the instance's registration back since, and when what it
    /// serves listed it again. A full fetch from it before that is a partial registry
    /// (Netflix/eureka#1490).
    pub(super) back_at: Vec<Option<SimTime>>,
    pub(super) got_back: Vec<Option<(SimTime, Option<ServerId>)>>,
    pub(super) served_back: Vec<Option<SimTime>>,
    /// The callers whose cache lost the instance to a partial registry (and which), and the
    /// routes whose list lost it so, until they list it again.
    pub(super) partial: Vec<(ProcessId, ServerId)>,
    pub(super) partial_routes: Vec<usize>,
    pub(super) stopped: bool,
    /// Per caller: how its last fetch went (a delta, a full one, why a full one).
    pub(super) fetches: Vec<(ProcessId, FetchKind)>,
    /// Per server: down since (a `[[fault]]` crash or restart), until it starts again.
    pub(super) down_since: Vec<Option<SimTime>>,
    pub(super) deploy_offsets: Vec<usize>,
    /// Per caller of the app: the transport lines told so far (a long outage would tell one
    /// per fetch).
    pub(super) transport_told: Vec<(ProcessId, u32)>,
}

impl<'t, 'e> Story<'t, 'e> {
    /// The story of shutdown `s` before the first observation: the strategy, the last
    /// heartbeat before it, and a `/resume` if one comes within the run.
    pub(super) fn new(told: &'e Explanation<'t>, scenario: &'e Scenario, s: usize) -> Option<Self> {
        let config = scenario.shutdowns.get(s)?;
        let target = *told.layout.targets.get(s)?;
        let start = SimTime(config.at_ms);
        let release = scenario.simulation.release;
        let app_client = &scenario.apps[config.app].client;
        let servers = scenario.servers().len();
        let target_app = told.layout.processes[target].application;
        let mut story = Story {
            told,
            scenario,
            config,
            target,
            start,
            release,
            app_client,
            steps: vec![Step {
                at: start,
                text: strategy_text(config, release, app_client),
            }],
            expirable: None,
            last_renew_on: vec![None; servers],
            first_evicted_on: vec![None; servers],
            target_app,
            callers: told
                .layout
                .routes
                .iter()
                .filter(|r| r.application == target_app)
                .map(|r| r.process)
                .collect(),
            duration_s: app_client.lease_expiration_duration_s,
            restart_new: told
                .layout
                .restarts
                .iter()
                .find(|(old, _)| *old == target)
                .map(|(_, new)| *new),
            graceful: told.graceful_stop(scenario, s),
            timeout_s: app_client.timeout_per_shutdown_phase_ms as f64 / 1000.0,
            cancelled_at: None,
            evicted: false,
            restarted_at: None,
            ghost_registered: None,
            gates: vec![(0, None); servers],
            cluster: servers > 1,
            holds: vec![true; servers],
            cancelled_on: vec![None; servers],
            back_at: vec![None; servers],
            got_back: vec![None; servers],
            served_back: vec![None; servers],
            partial: Vec::new(),
            partial_routes: Vec::new(),
            stopped: false,
            fetches: Vec::new(),
            down_since: vec![None; servers],
            deploy_offsets: vec![0; told.layout.deploys.len()],
            transport_told: Vec::new(),
        };
        story.last_heartbeat();
        story.renews_and_evictions_per_server();
        story.resume();
        Some(story)
    }

    pub(super) fn push(&mut self, at: SimTime, text: String) {
        self.steps.push(Step { at, text });
    }

    /// The last renew before the strategy started decides when a dead lease can expire.
    fn last_heartbeat(&mut self) {
        let (target, start) = (self.target, self.start);
        let last_renew = self.told.log.iter().rev().find_map(|(t, o)| match o {
            Observation::Renewed {
                server,
                process,
                expirable_from,
            } if *process == target && *t <= start => Some((*t, *expirable_from, *server)),
            _ => None,
        });
        let Some((renewed, expirable, server)) = last_renew else {
            return;
        };
        self.expirable = Some(expirable);
        let duration = expirable.ms().saturating_sub(renewed.ms() + 1) / 2;
        let text = format!(
            "last heartbeat before that reached {}: renew() stamped the lease {} (now + {} s), \
             so it is expirable from {}, 2 x {} s after the renew (Lease#renew adds the \
             duration and isExpired adds it again)",
            Explanation::on(self.scenario, server),
            super::secs(SimTime(renewed.ms() + duration)),
            duration / 1000,
            super::secs(expirable),
            duration / 1000
        );
        self.push(renewed, text);
    }

    fn renews_and_evictions_per_server(&mut self) {
        for (t, o) in &self.told.log {
            match o {
                Observation::Renewed {
                    server,
                    process,
                    expirable_from,
                } if *process == self.target && *t <= self.start => {
                    if let Some(slot) = self.last_renew_on.get_mut(server.index()) {
                        *slot = Some(*expirable_from);
                    }
                }
                Observation::Evicted { server, process } if *process == self.target => {
                    if let Some(slot @ None) = self.first_evicted_on.get_mut(server.index()) {
                        *slot = Some(*t);
                    }
                }
                _ => {}
            }
        }
    }

    /// A `/pause` with a `/resume` that comes within the run (and before any restart).
    fn resume(&mut self) {
        let (Strategy::Pause, Some(resume)) = (self.config.strategy, self.config.resume_ms) else {
            return;
        };
        let at = SimTime(self.config.at_ms + resume);
        let (target, start) = (self.target, self.start);
        let restarted_before = self.told.log.iter().any(|(t, o)| {
            *t >= start && *t <= at && *o == Observation::Restarted { process: target }
        });
        if at.ms() <= self.scenario.simulation.duration_ms && !restarted_before {
            self.push(at, resume_text(self.release));
        }
    }

    pub(super) fn evicted_before(&self, server: ServerId, at: SimTime) -> bool {
        self.first_evicted_on[server.index()].is_some_and(|e| e < at)
    }

    pub(super) fn expirable_on(&self, server: ServerId) -> Option<SimTime> {
        self.last_renew_on
            .get(server.index())
            .copied()
            .flatten()
            .or(self.expirable)
    }

    pub(super) fn is_down(&self, server: ServerId) -> bool {
        self.down_since
            .get(server.index())
            .copied()
            .flatten()
            .is_some()
    }

    /// One observation: first what it changes in the state, then what it tells.
    pub(super) fn observe(&mut self, t: SimTime, o: &Observation) {
        let restarted = self.restarted_at.is_some_and(|r| r <= t);
        self.track(t, o);
        self.tell(t, o, restarted);
    }

    /// The state an observation changes, whatever is told of it.
    fn track(&mut self, t: SimTime, o: &Observation) {
        let target = self.target;
        match o {
            Observation::AttemptFailed {
                observer,
                server,
                why,
            } if t >= self.start && self.tells_transport_of(*observer) => {
                let text = self
                    .told
                    .attempt_failed_text(self.scenario, *observer, *server, *why);
                self.push(t, text);
            }
            Observation::TaskTimedOut {
                observer,
                task,
                next_in_ms,
            } if t >= self.start && self.tells_transport_of(*observer) => {
                self.task_timed_out(t, *observer, task, *next_in_ms);
            }
            Observation::Registered {
                server,
                process,
                from_peer,
                ..
            } if *process == target => {
                let k = server.index();
                self.holds[k] = true;
                if self.back_at[k].is_some() && self.got_back[k].is_none() {
                    self.got_back[k] = Some((t, *from_peer));
                }
            }
            Observation::StoppedServing { process } if *process == target => self.stopped = true,
            Observation::Served {
                server,
                process,
                up: true,
            } if *process == target => {
                let k = server.index();
                if self.back_at[k].is_some() && self.served_back[k].is_none() {
                    self.served_back[k] = Some(t);
                }
            }
            Observation::Cancelled {
                server, process, ..
            }
            | Observation::Evicted { server, process }
                if *process == target =>
            {
                self.holds[server.index()] = false
            }
            Observation::ServerDown { server } => {
                let k = server.index();
                self.holds[k] = false;
                // A new incarnation holds no cancelled lease a register could re-create.
                self.cancelled_on[k] = None;
                self.back_at[k] = None;
                self.got_back[k] = None;
                self.served_back[k] = None;
            }
            _ => {}
        }
    }

    /// What an observation tells: a flat table from the observation (and the state it must
    /// meet) to the sentence of its layer.
    fn tell(&mut self, t: SimTime, o: &Observation, restarted: bool) {
        let target = self.target;
        let started = t >= self.start;
        match o {
            Observation::Restarted { process } if *process == target && started => {
                self.restarted(t)
            }
            Observation::DeployBatch { deploy, size } => self.deploy_batch(t, *deploy, *size),
            Observation::StoppedServing { process } if *process == target => {
                self.stopped_serving(t, restarted)
            }
            Observation::InflightFailed { process, count } if *process == target => {
                self.inflight_failed(t, *count)
            }
            Observation::Registered {
                server,
                process,
                status,
                from_peer,
            } if *process == target && started => {
                self.registered(t, *server, *status, *from_peer, restarted)
            }
            Observation::Cancelled {
                server,
                process,
                from_peer,
            } if *process == target => self.cancelled(t, *server, *from_peer),
            Observation::ServerDown { server } => self.server_down(t, *server),
            Observation::ServerStarted { server } if self.is_down(*server) => {
                self.server_started(t, *server)
            }
            // What a server held goes with it when it goes down (`EurekaServer::go_down`):
            // no removal, told above.
            Observation::Registry {
                server, up: false, ..
            }
            | Observation::Served {
                server, up: false, ..
            } if self.is_down(*server) => {}
            Observation::Registry {
                server,
                process,
                up,
            } if *process == target && started => self.registry(t, *server, *up, restarted),
            Observation::EvictionRun {
                server,
                gated,
                renews_last_min,
                threshold,
                expired,
                evicted,
                ..
            } if self.expirable_on(*server).is_some_and(|e| t >= e)
                && !restarted
                && (!self.cluster || self.holds[server.index()])
                && !self.evicted_before(*server, t) =>
            {
                self.eviction_run(
                    t,
                    *server,
                    *gated,
                    (*renews_last_min, *threshold),
                    (*expired, *evicted),
                )
            }
            Observation::Evicted { server, process } if *process == target => {
                self.evicted_lease(t, *server)
            }
            Observation::Served {
                server,
                process,
                up: false,
            } if *process == target => self.served_without(t, *server),
            Observation::Fetched {
                observer, delta, ..
            } => self.fetched(*observer, *delta),
            Observation::ReconcileMismatch { observer, hashes } => self.set_fetch(
                *observer,
                FetchKind::ReconcilePending {
                    local: hashes.local.clone(),
                    server: hashes.server.clone(),
                },
            ),
            Observation::DeltaForbidden { observer } => {
                self.set_fetch(*observer, FetchKind::ForbiddenPending)
            }
            Observation::ClientCache {
                server,
                observer,
                process,
                up: false,
            } if *process == target && self.lost_to_a_partial_registry(*observer, *server) => {
                self.cache_lost_to_partial(t, *observer, *server)
            }
            Observation::ClientCache {
                server,
                observer,
                process,
                up: true,
            } if *process == target && self.partial.iter().any(|(o, _)| o == observer) => {
                self.cache_listed_again(t, *observer, *server)
            }
            Observation::ClientCache {
                server,
                observer,
                process,
                up: false,
            } if *process == target && self.callers.contains(observer) => {
                self.cache_news(t, *observer, *server)
            }
            Observation::RibbonList {
                route,
                process,
                listed,
            } if *process == target && (!*listed || self.partial_routes.contains(route)) => {
                self.balancer_list(t, *route, *listed)
            }
            _ => {}
        }
    }

    /// The steps in time order, with the count of each server's blocked eviction runs and the
    /// circuit breaker's part, if any.
    pub(super) fn finish(mut self, s: usize) -> Vec<Step> {
        for (k, (count, last)) in std::mem::take(&mut self.gates).into_iter().enumerate() {
            if let Some((t, renews, threshold)) = last.filter(|_| count > 1) {
                let peer = Explanation::at_peer(self.scenario, ServerId(k as u32));
                let text = format!(
                    "... {peer}{count} eviction runs in all were blocked (the last: {})",
                    super::gate_text(renews, threshold)
                );
                self.push(t, text);
            }
        }
        if let Some((at, text)) = self.told.circuit_breaker_step(self.scenario, s) {
            self.push(at, text);
        }
        self.steps.sort_by_key(|step| step.at);
        self.steps
    }
}
