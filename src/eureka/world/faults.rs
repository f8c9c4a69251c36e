//! The world's handlers for `[[fault]]`s (the state lives in `eureka::faults`): their edges,
//! who is on which side, and what a fault does to a message as it leaves
//! (`docs/design/peers.md` §1.6).

use crate::engine::SimTime;
use crate::eureka::faults::{Connect, Faults, answered_late_from};
use crate::eureka::ids::{ProcessId, RouteId, ServerId};
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::protocol::{Call, Reply, Unanswered};
use crate::eureka::server::EurekaServer;
use crate::eureka::transport::{Stack, TransportStreams};
use crate::scenario::{FaultKind, FaultSide};

use super::{Event, World};

/// A fault's beginning or end, or an instant inside a pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Begin,
    End,
    /// From now on until the pause ends, route `route`'s requests to the paused instances of
    /// its application are answered late, not timed out ([`answered_late_from`]).
    AnswersLate {
        route: RouteId,
    },
}

impl<O: Observer> World<'_, O> {
    /// Schedules every `[[fault]]`'s beginning and, but for a crash, its end.
    pub(super) fn schedule_faults(&mut self) {
        let scenario = self.scenario;
        for (fault, config) in scenario.faults.iter().enumerate() {
            let at = SimTime(config.at_ms);
            let begin = Event::Fault {
                fault,
                edge: Edge::Begin,
            };
            self.queue.schedule(at, begin);
            if matches!(config.kind, FaultKind::Crash { .. }) {
                continue;
            }
            let end = Event::Fault {
                fault,
                edge: Edge::End,
            };
            self.queue.schedule(SimTime(config.ends_ms()), end);
        }
    }

    /// `[[fault]] fault` begins or ends.
    pub(super) fn on_fault(&mut self, fault: usize, edge: Edge) {
        let now = self.now();
        if let Edge::AnswersLate { route } = edge {
            return self.answer_late(fault, route);
        }
        if self.changes_requests(fault) {
            // The callers' requests up to now met the faults as they were (batched mode
            // counts them lazily; see `world/routing.rs`).
            self.settle_routes();
        }
        match (&self.scenario.faults[fault].kind, edge) {
            (FaultKind::Partition { between, .. }, Edge::Begin) => {
                let (a, b) = (self.members(&between[0]), self.members(&between[1]));
                let heals = SimTime(self.scenario.faults[fault].ends_ms());
                self.faults.cut(fault, a, b, heals);
            }
            (FaultKind::Partition { .. }, Edge::End) => self.faults.heal(fault),
            (FaultKind::Pause { target, for_ms }, Edge::Begin) => {
                let until = now + *for_ms;
                let members = self.members(target);
                for (p, _) in members.iter().enumerate().filter(|(_, on)| **on) {
                    self.faults.pause(p, until);
                    self.faults.freeze(p, true);
                    if matches!(self.processes[p].kind, ProcessKind::Caller { .. }) {
                        self.hold_requests(p);
                    }
                }
                self.schedule_late_answers(fault, &members, until);
            }
            (FaultKind::Pause { target, .. }, Edge::End) => {
                let members = self.members(target);
                for (p, _) in members.iter().enumerate().filter(|(_, on)| **on) {
                    self.faults.freeze(p, false);
                }
                // The callers it paused send what they held, once every instance it paused
                // answers again (unless a longer pause still holds them).
                for (p, _) in members.iter().enumerate().filter(|(_, on)| **on) {
                    let caller = matches!(self.processes[p].kind, ProcessKind::Caller { .. });
                    if caller && self.faults.paused(p, now).is_none() {
                        self.release_requests(p);
                    }
                }
            }
            (_, Edge::AnswersLate { .. }) => {}
            (FaultKind::ServerRestart { peer, .. }, Edge::Begin)
            | (FaultKind::Crash { peer, .. }, Edge::Begin) => {
                let s = ServerId(*peer as u32);
                match self.scenario.faults[fault].kind {
                    FaultKind::Crash { vanishes: true, .. } => self.faults.set_vanished(s),
                    _ => self.faults.set_down(s, true),
                }
                self.observe(Observation::ServerDown { server: s });
                self.with_server(s, |server, out| server.go_down(out));
                // The JVM goes, and its embedded Eureka client with it (nobody routes requests
                // to a peer's process: nothing in flight to count).
                let p = self.server_processes[s.index()];
                self.set_alive(p, false);
                self.set_serving(p, false);
                self.processes[p].client.kill();
            }
            (FaultKind::ServerRestart { peer, .. }, Edge::End) => {
                self.restart_server(ServerId(*peer as u32));
            }
            (FaultKind::Crash { .. }, Edge::End) => {}
        }
    }

    /// A pause of the processes marked in `members` until `until` began: each route to an
    /// application with a paused instance gets its requests to it answered late from
    /// [`answered_late_from`] on, by its own read timeout (`ribbon.ReadTimeout`).
    fn schedule_late_answers(&mut self, fault: usize, members: &[bool], until: SimTime) {
        let now = self.now();
        for route in 0..self.routes.len() {
            let application = self.routes[route].application;
            let called = |(p, on): (usize, &bool)| {
                *on && self.applications[p] == application
                    && matches!(self.processes[p].kind, ProcessKind::AppInstance { .. })
            };
            if !members.iter().enumerate().any(called) {
                continue;
            }
            let read_timeout_ms = self.routes[route].costs.read_timeout_ms;
            let at = answered_late_from(now, until, read_timeout_ms);
            let edge = Edge::AnswersLate { route };
            self.queue.schedule(at, Event::Fault { fault, edge });
        }
    }

    /// [`Edge::AnswersLate`]: route `route`'s requests up to now met the read timeout; from now
    /// on its requests to the instances `fault` pauses until no later than one read timeout
    /// from now are answered late (a longer pause over the same instance, begun since, keeps
    /// timing them out until its own instant comes).
    fn answer_late(&mut self, fault: usize, route: RouteId) {
        let now = self.now();
        let (caller, application) = (self.routes[route].process, self.routes[route].application);
        let read_timeout_ms = self.routes[route].costs.read_timeout_ms;
        let FaultKind::Pause { target, .. } = &self.scenario.faults[fault].kind else {
            return;
        };
        let members = self.members(target);
        self.route_mut(route);
        for (p, _) in members.iter().enumerate().filter(|(_, on)| **on) {
            let late = self
                .faults
                .paused(p, now)
                .is_some_and(|until| until.ms() <= now.ms() + read_timeout_ms);
            if late && self.applications[p] == application {
                self.faults.answer_late(caller, p);
            }
        }
    }

    /// A restarted peer: a new `EurekaServer` (a new incarnation, its own stream
    /// `server/<name>#<n>`) that opens as a Spring Cloud server does (`registry-sync-retries`
    /// 0: no sync, `openForTraffic(default-open-for-traffic-count)`), with an empty registry
    /// that the other peers' replicated heartbeats refill (404, then a register).
    fn restart_server(&mut self, s: ServerId) {
        let scenario = self.scenario;
        let k = s.index();
        let servers = scenario.servers();
        let peer = &servers[k];
        let incarnation = self.servers[k].incarnation + 1;
        let stream = self
            .streams
            .stream(&format!("server/{}#{incarnation}", peer.name));
        let release = scenario.simulation.release;
        let mut server = EurekaServer::peer(s, &peer.server, release, self.processes.len(), stream);
        server.incarnation = incarnation;
        server.replicate_to(&self.servers[k].replication_targets());
        self.servers[k] = server;
        self.faults.set_down(s, false);
        self.start_server(s);
        self.restart_embedded_client(s, incarnation);
    }

    /// The restarted peer's JVM creates its embedded Eureka client anew (its own streams
    /// `client/<name>#<n>`, `transport/<name>#<n>` and the others of
    /// `TransportStreams::named`), which fetches, registers if it does, and
    /// feeds the renewal threshold's recount as at a first start.
    fn restart_embedded_client(&mut self, s: ServerId, incarnation: u32) {
        let p = self.server_processes[s.index()];
        let name = &self.processes[p].name;
        let rng = self.streams.stream(&format!("client/{name}#{incarnation}"));
        let incarnation_name = format!("{name}#{incarnation}");
        let transport = TransportStreams::named(&self.streams, &incarnation_name);
        self.processes[p].client = self.processes[p].client.restarted(rng, transport);
        self.renew_query_stream(p, &incarnation_name);
        self.set_serving(p, false);
        self.on_client_create(p);
    }

    /// Whether `fault` changes how instances answer callers' requests: a partition with an app
    /// instance or caller on both sides, a pause of one. (Counting a route's requests at an
    /// extra instant draws them differently, so the routes are settled only then.)
    fn changes_requests(&self, fault: usize) -> bool {
        let no_server = |side: &FaultSide| {
            self.members(side)
                .iter()
                .zip(&self.processes)
                .any(|(on, p)| *on && !matches!(p.kind, ProcessKind::Server { .. }))
        };
        match &self.scenario.faults[fault].kind {
            FaultKind::Partition { between, .. } => {
                no_server(&between[0]) && no_server(&between[1])
            }
            FaultKind::Pause { target, .. } => no_server(target),
            FaultKind::ServerRestart { .. } | FaultKind::Crash { .. } => false,
        }
    }

    /// The processes on one side of a partition, or a pause's targets.
    fn members(&self, side: &FaultSide) -> Vec<bool> {
        let servers = self.scenario.servers();
        self.processes
            .iter()
            .map(|process| match (side, process.kind) {
                (FaultSide::Peer(k), ProcessKind::Server { peer }) => *k == peer,
                (
                    FaultSide::Instance { app, index },
                    ProcessKind::AppInstance { app: a, index: i },
                ) => *app == a && *index == i,
                (FaultSide::App(app), ProcessKind::AppInstance { app: a, .. }) => *app == a,
                (FaultSide::Caller(c), ProcessKind::Caller { caller }) => *c == caller,
                (FaultSide::Zone(zone), ProcessKind::Server { peer }) => {
                    servers[peer].zone == *zone
                }
                (FaultSide::Zone(zone), _) => process.client.config().zone() == zone,
                _ => false,
            })
            .collect()
    }

    /// How long `p`'s Eureka client waits for a connect that is never answered: its connect
    /// timeout ([`ClientConfig::call_timeouts`](crate::scenario::ClientConfig::call_timeouts):
    /// Jersey's 5 s up to Hoxton, none on 2020.0-2021.0, 180 s from 2022.0, or what the file
    /// sets), and never longer than the OS's [`OS_CONNECT_TIMEOUT_MS`](crate::scenario::OS_CONNECT_TIMEOUT_MS), which ends a connect
    /// whose SYNs go unanswered whatever the client asked for.
    fn connect_timeout_ms(&self, p: ProcessId) -> u64 {
        let release = self.scenario.simulation.release;
        self.processes[p].client.config().connect_wait_ms(release)
    }

    /// How long `p`'s Eureka client waits for the answer of a server that accepted its call:
    /// the socket timeout (Jersey's 8 s, 180 s from 2022.0, the file's), `None` on 2020.0-2021.0
    /// unless set. When it passes, the attempt fails and the retrying transport tries the next
    /// server (`RetryableEurekaHttpClient#execute`).
    ///
    /// `TimedSupervisorTask#run` gives up on the run after one interval and calls
    /// `future.cancel(true)`, but that interrupt does not end the call: the Apache HttpClient
    /// under the RestTemplate and RestClient transports reads from a blocking `java.net.Socket`
    /// on a platform thread of the task's `ThreadPoolExecutor`, and such a read ignores
    /// `Thread#interrupt` (`java.net.Socket#getInputStream`: only a socket from an
    /// `InterruptibleChannel`, or a virtual thread, is closed by an interrupt). So the body runs
    /// on until this timeout ([`crate::eureka::client`]'s `SupervisedTask`). The real stack
    /// agrees: on the conformance rig (`peers-pause-kill-15`, Spring Cloud 2025.1.4, 2 s client
    /// timeouts, 1 s fetch interval) the supervisor timed out at 1 s and the same call ended
    /// with a read timeout at 2 s (conformance/README.md).
    fn read_timeout_ms(&self, p: ProcessId) -> Option<u64> {
        let release = self.scenario.simulation.release;
        self.processes[p]
            .client
            .config()
            .call_timeouts(release)
            .read_ms
    }

    /// A client call meets the faults as it leaves: a down server refuses it after a round
    /// trip; across a partition its SYNs are dropped, and the connect either gets through at the
    /// first SYN retransmission after the partition heals or times out
    /// ([`Faults::connect`]: the connect timeout counts from `began`, when the first SYN
    /// left); a paused server holds it (the call waits with the server's events) and a client
    /// with a read timeout shorter than the wait gives up at it, while the server still handles
    /// the call when it resumes. Returns whether the call is sent on now.
    pub(super) fn call_meets_faults(
        &mut self,
        from: ProcessId,
        (server, seq, call): (ServerId, u32, Call),
        began: SimTime,
    ) -> bool {
        let stack = Stack::of(&call);
        let server_process = self.server_processes[server.index()];
        let now = self.now();
        let timed_out = |at: SimTime| (at.saturating_since(now), Unanswered::ConnectTimeout);
        let failed_after = if self.faults.is_vanished(server) {
            Some(timed_out(began + self.connect_timeout_ms(from)))
        } else if self.faults.is_down(server) {
            let round_trip = self.call_latency(from, stack) + self.call_latency(from, stack);
            Some((round_trip, Unanswered::Refused))
        } else {
            let ends = (from, server_process);
            match self
                .faults
                .connect(ends, began, now, self.connect_timeout_ms(from))
            {
                Connect::Open => None,
                Connect::TimesOut { at } => Some(timed_out(at)),
                Connect::Retransmit { at } => {
                    let incarnation = self.processes[from].client.incarnation();
                    let event = Event::SynRetransmit {
                        from,
                        incarnation,
                        server,
                        seq,
                        call,
                        began,
                    };
                    self.queue.schedule(at, event);
                    return false;
                }
            }
        };
        if let Some((delay, why)) = failed_after {
            self.unanswered(from, seq, delay, (server, why));
            return false;
        }
        if let (Some(until), Some(read)) = (
            self.faults.paused(server_process, now),
            self.read_timeout_ms(from),
        ) {
            let latency = self.call_latency(from, stack);
            if until.since(now) as u64 > latency + read {
                let why = Unanswered::ReadTimeout;
                self.unanswered(from, seq, latency + read, (server, why));
            }
        }
        true
    }

    /// Call `seq` of `from`'s incarnation `incarnation`, whose connect began at `began`, sends
    /// its SYN again ([`Faults::connect`]); void if the process died or restarted since.
    pub(super) fn on_syn_retransmit(
        &mut self,
        (from, incarnation): (ProcessId, u32),
        (server, seq, call): (ServerId, u32, Call),
        began: SimTime,
    ) {
        let process = &self.processes[from];
        if process.alive() && process.client.incarnation() == incarnation {
            self.send_begun(from, (server, seq, call), began);
        }
    }

    /// Call `seq` of `to` gets no answer from `server`: it learns so, and `why`, `delay_ms`
    /// from now.
    fn unanswered(
        &mut self,
        to: ProcessId,
        seq: u32,
        delay_ms: u64,
        (server, why): (ServerId, Unanswered),
    ) {
        let incarnation = self.processes[to].client.incarnation();
        let event = Event::AtClient {
            to,
            incarnation,
            seq,
            reply: Reply::Unreachable { server, why },
        };
        self.queue.schedule_in(delay_ms, event);
    }

    /// The process that owns `event`: while it is paused, the event waits. A caller owns its
    /// routes' arrivals and balancer timers: a paused caller sends no request and reads no
    /// list until it resumes ([`Route::hold`](crate::eureka::route::Route::hold)).
    pub(super) fn owner(&self, event: &Event) -> Option<ProcessId> {
        let server = |s: &ServerId| self.server_processes.get(s.index()).copied();
        match event {
            Event::ServerTimer { server: s, .. }
            | Event::AtServer { server: s, .. }
            | Event::PeerBatch { to: s, .. }
            | Event::PeerBatchReply { to: s, .. } => server(s),
            Event::AtClient { to, .. } | Event::SynRetransmit { from: to, .. } => Some(*to),
            Event::ClientCreate(p) | Event::WebServerReady(p) => Some(*p),
            Event::Client { process, .. } => Some(*process),
            Event::Arrivals { route } | Event::Balancer { route, .. } => {
                Some(self.routes[*route].process)
            }
            _ => None,
        }
    }
}

/// Whether the sender's batch reaches the peer, or what its sender hears instead and when:
/// a down peer refuses after a round trip (a network error, retried after 100 ms); a
/// partition times the connect out (`peer-node-connect-timeout-ms`, a network error); a peer
/// paused longer than `peer-node-read-timeout-ms` times the read out (congestion, retried after
/// 1 s), while the batch still reaches it when it resumes (`docs/design/peers.md` §1.6).
pub(super) enum BatchFate {
    Delivered,
    Failed {
        after_ms: u64,
        congestion: bool,
        delivered: bool,
    },
}

/// [`BatchFate`] of a batch from `from` to `to` (server processes), one latency `latency_ms`.
pub(super) fn batch_fate(
    faults: &Faults,
    now: SimTime,
    (to, from, to_process): (ServerId, ProcessId, ProcessId),
    latency_ms: u64,
    (connect_ms, read_ms): (u64, u64),
) -> BatchFate {
    if !faults.active() {
        return BatchFate::Delivered;
    }
    if faults.is_vanished(to) {
        // `peer-node-connect-timeout-ms`: "connect timed out", an IOException that is no read
        // timeout, so a TransientError (`ReplicationTaskProcessor#isNetworkConnectException`).
        return BatchFate::Failed {
            after_ms: connect_ms,
            congestion: false,
            delivered: false,
        };
    }
    if faults.is_down(to) {
        return BatchFate::Failed {
            after_ms: 2 * latency_ms,
            congestion: false,
            delivered: false,
        };
    }
    if !faults.open(from, to_process) {
        return BatchFate::Failed {
            after_ms: connect_ms,
            congestion: false,
            delivered: false,
        };
    }
    match faults.paused(to_process, now) {
        Some(until) if until.since(now) as u64 > latency_ms + read_ms => BatchFate::Failed {
            after_ms: latency_ms + read_ms,
            congestion: true,
            delivered: true,
        },
        _ => BatchFate::Delivered,
    }
}
