//! The world's handlers for `server` (the rules and their state live in `eureka::server`).

use crate::eureka::ids::{ProcessId, ServerId};
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::Observer;
use crate::eureka::protocol::Call;
use crate::eureka::server::{ServerEffect, ServerTimer};
use crate::eureka::status::InstanceStatus;

use super::{Event, Process, World};

impl<O: Observer> World<'_, O> {
    /// Server bootstrap ([`EurekaServer::start`]).
    pub(super) fn start_server(&mut self, s: ServerId) {
        let wall = self.wall_now();
        self.servers[s.index()].start(wall);
        self.apply_server_effects(s);
    }

    /// One of the server's timers fired ([`EurekaServer::on_timer`]).
    pub(super) fn on_server_timer(&mut self, s: ServerId, timer: ServerTimer) {
        let now = self.now();
        let processes = &self.processes;
        self.servers[s.index()].on_timer(now, timer, || embedded_client_up_count(processes));
        self.apply_server_effects(s);
    }

    /// A REST call arrives: the resource handles it at once and replies.
    pub(super) fn on_server_call(&mut self, s: ServerId, from: ProcessId, call: Call) {
        let now = self.now();
        let reply = self.servers[s.index()].on_call(now, from, call);
        self.apply_server_effects(s);
        self.reply(from, reply);
    }

    /// Turns what the server asked for into observations and armed timers, in its order.
    fn apply_server_effects(&mut self, s: ServerId) {
        let mut effects = std::mem::take(&mut self.server_effects);
        self.servers[s.index()].take_effects(&mut effects);
        for effect in effects.drain(..) {
            match effect {
                ServerEffect::Observe(observation) => self.observe(observation),
                ServerEffect::Arm { delay_ms, timer } => {
                    self.queue
                        .schedule_in(delay_ms, Event::ServerTimer { server: s, timer });
                }
            }
        }
        self.server_effects = effects;
    }
}

/// UP instances in the server's embedded client's cache (0 without `fetch-registry`), the
/// `count` of the 15-minute threshold update (FACTS.md §2.4).
fn embedded_client_up_count(processes: &[Process]) -> i64 {
    let Some(server_process) = processes.iter().find(|p| p.kind == ProcessKind::Server) else {
        return 0;
    };
    let client = &server_process.client;
    match &client.cache {
        Some(payload) => payload
            .statuses
            .iter()
            .filter(|s| match s {
                Some(status) => {
                    !client.config.filter_only_up_instances || *status == InstanceStatus::Up
                }
                None => false,
            })
            .count() as i64,
        None => 0,
    }
}
