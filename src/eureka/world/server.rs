//! The world's handlers for `server` (the rules and their state live in `eureka::server`).

use std::rc::Rc;

use crate::engine::{EventQueue, RngStream};
use crate::eureka::deploy::DeployRun;
use crate::eureka::ids::{ProcessId, ServerId};
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::Observation;
use crate::eureka::observe::Observer;
use crate::eureka::protocol::{BatchOutcome, Call, ReplicationBatch};
use crate::eureka::server::{EurekaServer, ServerOutput, ServerTimer};
use crate::scenario::NetworkConfig;

use super::faults::{BatchFate, batch_fate};
use super::{Event, Process, World, latency, report};
use crate::eureka::faults::Faults;
use crate::eureka::protocol::{Reply, Unanswered};
use crate::eureka::transport::Stack;

impl<O: Observer> World<'_, O> {
    /// Server bootstrap ([`EurekaServer::start`]).
    pub(super) fn start_server(&mut self, s: ServerId) {
        let (now, wall) = (self.now(), self.wall_now());
        self.with_server(s, |server, out| server.start(now, wall, out));
    }

    /// Calls `rule` on server `s` with the world as its output.
    pub(super) fn with_server<R>(
        &mut self,
        s: ServerId,
        rule: impl FnOnce(&mut EurekaServer, &mut ServerSink<'_, O>) -> R,
    ) -> R {
        self.with_server_reading(s, |server, _, out| rule(server, out))
    }

    /// [`World::with_server`], with the processes for `rule` to read.
    fn with_server_reading<R>(
        &mut self,
        s: ServerId,
        rule: impl FnOnce(&mut EurekaServer, &[Process], &mut ServerSink<'_, O>) -> R,
    ) -> R {
        let mut out = ServerSink {
            server: s,
            queue: &mut self.queue,
            deploys: &mut self.deploys,
            observer: &mut self.observer,
            network: &self.scenario.network,
            net: &mut self.net[self.server_processes[s.index()]],
            faults: &self.faults,
            server_processes: &self.server_processes,
            incarnation: self.servers[s.index()].incarnation,
            peer_timeouts_ms: self.servers[s.index()].peer_timeouts_ms(),
        };
        rule(&mut self.servers[s.index()], &self.processes, &mut out)
    }

    /// One of the server's timers fired ([`EurekaServer::on_timer`]).
    pub(super) fn on_server_timer(&mut self, s: ServerId, timer: ServerTimer) {
        let now = self.now();
        self.with_server_reading(s, |server, processes, out| {
            server.on_timer(now, timer, || embedded_client_up_count(processes, s), out);
        });
    }

    /// A REST call arrives: the resource handles it at once and replies.
    pub(super) fn on_server_call(&mut self, s: ServerId, from: ProcessId, seq: u32, call: Call) {
        let stack = Stack::of(&call);
        if self.faults.is_down(s) {
            // It went down while the call was on its way: refused (a host that vanished in
            // that latency is taken as refusing too).
            let why = Unanswered::Refused;
            return self.reply(from, seq, stack, Reply::Unreachable { server: s, why });
        }
        let now = self.now();
        let reply = self.with_server(s, |server, out| server.on_call(now, from, call, out));
        self.reply(from, seq, stack, reply);
    }

    /// A peer's replication batch arrives ([`EurekaServer::on_batch`]); the answer goes back
    /// after one latency of the receiving server's process.
    pub(super) fn on_peer_batch(&mut self, to: ServerId, from: ServerId, batch: &ReplicationBatch) {
        let now = self.now();
        if self.faults.is_down(to) {
            return;
        }
        let replies = self.with_server(to, |server, out| server.on_batch(now, from, batch, out));
        let delay = self.latency(self.server_processes[to.index()]);
        let reply = Event::PeerBatchReply {
            to: from,
            incarnation: self.servers[from.index()].incarnation,
            peer: to,
            batch: batch.id,
            outcome: Box::new(BatchOutcome::Replied(replies)),
        };
        self.queue.schedule_in(delay, reply);
    }

    /// The answer to a batch reaches its sender ([`EurekaServer::on_batch_outcome`]).
    pub(super) fn on_peer_batch_reply(
        &mut self,
        to: ServerId,
        peer: ServerId,
        batch: u64,
        outcome: BatchOutcome,
    ) {
        let now = self.now();
        self.with_server(to, |server, out| {
            server.on_batch_outcome(now, peer, batch, outcome, out);
        });
    }
}

/// The world as a server sees it: observations are reported and timers armed at once, in the
/// server's order (the parts of the world it needs, borrowed beside the server).
pub(super) struct ServerSink<'w, O: Observer> {
    server: ServerId,
    queue: &'w mut EventQueue<Event>,
    deploys: &'w mut [DeployRun],
    observer: &'w mut O,
    network: &'w NetworkConfig,
    /// The server process's latency stream (its calls and batches).
    net: &'w mut RngStream,
    faults: &'w Faults,
    server_processes: &'w [ProcessId],
    incarnation: u32,
    peer_timeouts_ms: (u64, u64),
}

impl<O: Observer> ServerOutput for ServerSink<'_, O> {
    fn observe(&mut self, observation: Observation) {
        report(self.queue, self.deploys, self.observer, observation);
    }

    fn arm(&mut self, delay_ms: u64, timer: ServerTimer) {
        let (server, incarnation) = (self.server, self.incarnation);
        let event = Event::ServerTimer {
            server,
            incarnation,
            timer,
        };
        self.queue.schedule_in(delay_ms, event);
    }

    /// The batch reaches the peer after one latency of this server's process.
    fn send_batch(&mut self, peer: ServerId, batch: Rc<ReplicationBatch>) {
        let delay = latency(self.network, self.net);
        let now = self.queue.now();
        let from_process = self.server_processes[self.server.index()];
        let to_process = self.server_processes[peer.index()];
        let ends = (peer, from_process, to_process);
        let fate = batch_fate(self.faults, now, ends, delay, self.peer_timeouts_ms);
        let (reached, failure) = match fate {
            BatchFate::Delivered => (true, None),
            BatchFate::Failed {
                after_ms,
                congestion,
                delivered,
            } => (delivered, Some((after_ms, congestion))),
        };
        if let Some((after_ms, congestion)) = failure {
            let outcome = if congestion {
                BatchOutcome::Congestion
            } else {
                BatchOutcome::NetworkError
            };
            let event = Event::PeerBatchReply {
                to: self.server,
                incarnation: self.incarnation,
                peer,
                batch: batch.id,
                outcome: Box::new(outcome),
            };
            self.queue.schedule_in(after_ms, event);
        }
        if reached {
            let event = Event::PeerBatch {
                to: peer,
                from: self.server,
                batch,
            };
            self.queue.schedule_in(delay, event);
        }
    }
}

/// Server `s`'s embedded client's count for the 15-minute threshold update (FACTS.md §2.4).
pub(super) fn embedded_client_up_count(processes: &[Process], s: ServerId) -> i64 {
    processes
        .iter()
        .find(|p| p.kind == ProcessKind::Server { peer: s.index() })
        .map_or(0, |server| server.client.registry_instance_count())
}
