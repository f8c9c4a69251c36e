//! The world's handlers for `client`: each hands the event to the process's
//! [`DiscoveryClient`] (which owns the rules and the state) and carries out the effects it
//! returns, in order.

use crate::engine::{EventQueue, RngStream};
use crate::eureka::client::DiscoveryClient;
use crate::eureka::client::{ClientEffect, ClientOutput, ClientTimer, ContextStart, Task};
use crate::eureka::deploy::DeployRun;
use crate::eureka::ids::{ProcessId, ServerId};
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::protocol::{Call, Reply};
use crate::eureka::status::InstanceStatus;
use crate::eureka::transport::Stack;
use crate::scenario::NetworkConfig;

use super::{Event, World, latency, report};

impl<O: Observer> World<'_, O> {
    /// Calls `rule` on the client of `p` and carries out its effects in the order it asked for
    /// them: at once while they need only the queue, the network and the observer
    /// ([`ClientSink`]); from the first that needs the whole world (which holds the client) on,
    /// after the call.
    #[inline]
    pub(super) fn with_client<R>(
        &mut self,
        p: ProcessId,
        rule: impl FnOnce(&mut DiscoveryClient, &[usize], &mut ClientSink<'_, O>) -> R,
    ) -> R {
        let client = &mut self.processes[p].client;
        client.apply_pending_renew(self.queue.last_key());
        let mut sink = ClientSink {
            process: p,
            network: &self.scenario.network,
            net: &mut self.net[p],
            net_query: &mut self.net_query[p],
            queue: &mut self.queue,
            deploys: &mut self.deploys,
            observer: &mut self.observer,
            deferred: &mut self.client_effects,
            faults_active: self.faults.active(),
        };
        let result = rule(client, &self.applications, &mut sink);
        client.arm_deferred_replicator(sink.queue.now(), &mut sink);
        if !self.client_effects.is_empty() {
            // Taken out while they run: an effect may call a client again (its own deferred
            // effects then start from an empty list), and the list's capacity is kept.
            let mut deferred = std::mem::take(&mut self.client_effects);
            for effect in deferred.drain(..) {
                self.client_effect(p, effect);
            }
            if self.client_effects.is_empty() {
                self.client_effects = deferred;
            }
        }
        result
    }

    /// Carries out one effect of `p`'s client that waited for the world.
    fn client_effect(&mut self, p: ProcessId, effect: ClientEffect) {
        match effect {
            ClientEffect::Observe(observation) => self.observe(observation),
            ClientEffect::Send { server, seq, call } => self.send_to(p, server, seq, call),
            ClientEffect::Arm { delay_ms, timer } => arm(&mut self.queue, p, delay_ms, timer),
            ClientEffect::StartWebServer { delay_ms } => {
                self.queue.schedule_in(delay_ms, Event::WebServerReady(p));
            }
            ClientEffect::ListsChanged => self.after_client_lists_changed(p),
            ClientEffect::ShutdownDone => self.on_client_shutdown_done(p),
            ClientEffect::StatusCallDone => self.on_status_call_done(p),
        }
    }

    /// The servers report renews only to an observer that reads them
    /// ([`crate::eureka::server::EurekaServer::report_renewals`]). In the fast mode, where no
    /// `[[fault]]` can pause a process, every client defers its idle periodic replicator runs
    /// ([`DiscoveryClient::defer_idle_replicator`]). Before the start, which arms the first
    /// runs.
    pub(super) fn leave_out_unobserved(&mut self) {
        let reads_renewals = self.observer.reads_renewals();
        for server in &mut self.servers {
            server.report_renewals(reads_renewals);
        }
        if !self.leaves_out_unobserved || !self.scenario.faults.is_empty() {
            return;
        }
        for process in &mut self.processes {
            process.client.defer_idle_replicator();
        }
    }

    /// The process starts ([`DiscoveryClient::create`]); a vanished host's attempts stop timing
    /// out (a new incarnation refuses).
    pub(super) fn on_client_create(&mut self, p: ProcessId) {
        let (now, wall) = (self.now(), self.wall_now());
        self.set_alive(p, true);
        let sim = &self.scenario.simulation;
        let context_start = match self.processes[p].startup_ms {
            Some(startup) => ContextStart::Fixed(startup),
            None => ContextStart::Drawn {
                least_ms: sim.context_start_ms,
                spread_ms: sim.context_start_spread_ms,
            },
        };
        self.with_client(p, |client, _, out| {
            client.create(now, wall, context_start, out);
        });
    }

    /// A client timer fired; a dead process's timers are void. A cache refresh whose fetches
    /// no one observes ends there, for good, once no read can change a server any more (after
    /// a cold start's first reads filled the caches): [`DiscoveryClient::leave_out_fetches`].
    pub(super) fn on_client_timer(&mut self, p: ProcessId, timer: ClientTimer) {
        if !self.processes[p].alive() {
            return;
        }
        if let ClientTimer::Task {
            task: Task::CacheRefresh,
            ..
        } = timer
            && self.leaves_out_unobserved
            && !self.fetches_observed(p)
            && self.fetches_change_nothing()
        {
            return self.processes[p].client.leave_out_fetches();
        }
        let (now, wall) = (self.now(), self.wall_now());
        self.with_client(p, |client, _, out| client.on_timer(now, wall, timer, out));
    }

    /// A reply reached a live process's current incarnation.
    pub(super) fn on_client_reply(&mut self, p: ProcessId, seq: u32, reply: Reply) {
        let (now, wall) = (self.now(), self.wall_now());
        self.with_client(p, |client, applications, out| {
            client.on_reply(now, wall, seq, reply, applications, out);
        });
    }

    /// `ApplicationInfoManager#setInstanceStatus` on `p` ([`DiscoveryClient::set_instance_status`]).
    pub(in crate::eureka) fn set_instance_status(&mut self, p: ProcessId, status: InstanceStatus) {
        let wall = self.wall_now();
        self.with_client(p, |client, _, out| {
            client.set_instance_status(wall, status, out);
        });
    }

    /// `DiscoveryClient#shutdown` of `p` ([`DiscoveryClient::shutdown`]).
    pub(super) fn client_shutdown(&mut self, p: ProcessId) {
        let now = self.now();
        self.with_client(p, |client, _, out| client.shutdown(now, out));
    }

    /// `EurekaAutoServiceRegistration#start` on `WebServerInitializedEvent`: the instance's status
    /// becomes UP (`eureka.instance.initial-status`), and the web server accepts requests.
    pub(super) fn on_web_server_ready(&mut self, p: ProcessId) {
        if !self.processes[p].alive() {
            return;
        }
        self.set_serving(p, true);
        self.set_instance_status(p, InstanceStatus::Up);
        if let ProcessKind::Caller { caller } = self.processes[p].kind {
            self.start_caller_traffic(caller);
        }
    }

    /// The process dies at once (kill -9, or the end of a graceful exit): nothing more is sent,
    /// replies are dropped, timers are void.
    pub(super) fn kill_process(&mut self, p: ProcessId) {
        // On a vanished host, attempts time out from now on instead of being refused.
        self.set_alive(p, false);
        let client = &mut self.processes[p].client;
        client.apply_pending_renew(self.queue.last_key());
        client.kill();
        if self.processes[p].serving() {
            self.stop_serving_abruptly(p);
        } else {
            self.cut_graceful_phase(p);
        }
        self.on_process_exit(p);
    }

    /// The web server stops accepting requests.
    pub(super) fn stop_serving(&mut self, p: ProcessId) {
        if self.processes[p].serving() {
            self.set_serving(p, false);
            self.observe(Observation::StoppedServing { process: p });
        }
    }
}

/// Arms `process`'s `timer` `delay_ms` from now. The periodic timers whose events a fast mode
/// schedules at another instant than the reference (the heartbeat: [`World::reply`]; the
/// replicator's periodic run: [`DiscoveryClient::defer_idle_replicator`]) are keyed by process
/// and timer, so their place among the events of their millisecond is the same in both
/// (`engine::queue`'s tie-break rule: first in their millisecond, heartbeat before replicator,
/// in increasing process id).
#[inline]
fn arm(queue: &mut EventQueue<Event>, process: ProcessId, delay_ms: u64, timer: ClientTimer) {
    let at = queue.now() + delay_ms;
    let event = Event::Client { process, timer };
    match timer {
        ClientTimer::Task {
            task: Task::Heartbeat,
            ..
        } => queue.schedule_keyed(at, timer_key(process, 0), event),
        ClientTimer::Replicator { .. } => queue.schedule_keyed(at, timer_key(process, 1), event),
        _ => queue.schedule(at, event),
    }
}

/// The queue key of `process`'s keyed timer `kind` (0: heartbeat, 1: replicator). Process ids
/// are below 2^31 (a scenario's fleet is bounded far lower: `budget`), so the key is unique.
fn timer_key(process: ProcessId, kind: u32) -> u32 {
    (process as u32) << 1 | kind
}

/// The world as a client sees it: observations are reported, calls sent and timers armed at
/// once (the parts of the world they need, borrowed beside the client), until the client asks
/// for something only the whole world can do (the balancers' lists, a shutdown's next step);
/// from then on its effects wait in `deferred`, in order, for the call to return.
pub(super) struct ClientSink<'w, O: Observer> {
    process: ProcessId,
    network: &'w NetworkConfig,
    /// The process's latency streams: registration calls, fetches (`World::call_latency`).
    net: &'w mut RngStream,
    net_query: &'w mut RngStream,
    queue: &'w mut EventQueue<Event>,
    deploys: &'w mut [DeployRun],
    observer: &'w mut O,
    deferred: &'w mut Vec<ClientEffect>,
    /// A `[[fault]]` has begun: calls go through the world ([`World::send_to`]).
    faults_active: bool,
}

impl<O: Observer> ClientOutput for ClientSink<'_, O> {
    #[inline]
    fn observe(&mut self, observation: Observation) {
        if self.deferred.is_empty() {
            report(self.queue, self.deploys, self.observer, observation);
        } else {
            self.deferred.push(ClientEffect::Observe(observation));
        }
    }

    #[inline]
    fn send(&mut self, server: ServerId, seq: u32, call: Call) {
        if !self.deferred.is_empty() || self.faults_active {
            return self.deferred.push(ClientEffect::Send { server, seq, call });
        }
        let stream = match Stack::of(&call) {
            Stack::Registration => &mut *self.net,
            Stack::Query => &mut *self.net_query,
        };
        let delay = latency(self.network, stream);
        let event = Event::at_server(server, self.process, seq, call);
        self.queue.schedule_in(delay, event);
    }

    #[inline]
    fn arm(&mut self, delay_ms: u64, timer: ClientTimer) {
        if !self.deferred.is_empty() {
            return self.deferred.push(ClientEffect::Arm { delay_ms, timer });
        }
        arm(self.queue, self.process, delay_ms, timer);
    }

    fn start_web_server(&mut self, delay_ms: u64) {
        if !self.deferred.is_empty() {
            return self
                .deferred
                .push(ClientEffect::StartWebServer { delay_ms });
        }
        let process = self.process;
        self.queue
            .schedule_in(delay_ms, Event::WebServerReady(process));
    }

    fn lists_changed(&mut self) {
        self.deferred.push(ClientEffect::ListsChanged);
    }

    fn shutdown_done(&mut self) {
        self.deferred.push(ClientEffect::ShutdownDone);
    }

    fn status_call_done(&mut self) {
        self.deferred.push(ClientEffect::StatusCallDone);
    }
}
