//! `[[restart]]`: a new incarnation of an instance's process.
//!
//! A restart is a new JVM: a new `DiscoveryClient` (STARTING, its own timers from its
//! construction, FACTS.md §5.1) and a new web server, started through the same lifecycle as at
//! boot (`on_client_create`). By default it keeps the instance id, as Spring Cloud's default id
//! `hostname:app:port` does on the same host and port (SCC `IdUtils#getDefaultInstanceId`,
//! FACTS.md §6), so whatever the server still holds for that id applies to the new process:
//!
//! - its lease, if not yet evicted: the first register replaces it (a new lease, no new expected
//!   client, `AbstractInstanceRegistry#register`);
//! - its overridden status: OUT_OF_SERVICE set through /service-registry survives the restart
//!   while the lease lives (`OverrideExistsRule` re-applies it to the UP register), and is gone
//!   after a DELETE or an eviction (`AbstractInstanceRegistry#internalCancel` removes the map
//!   entry). The map's one-hour `expireAfterAccess` is not modelled.
//!
//! With `new-instance-id` the new process is a separate registry entry (`<instance>@1`) and
//! the old lease is left to expire. Replies addressed to the previous incarnation are dropped
//! (`Process::client.incarnation`), and the shutdown metrics of the instance freeze at the
//! restart (`Observation::Restarted`): they describe the incarnation that stopped.

use crate::engine::{RngStream, StreamFactory};
use crate::scenario::{RestartConfig, RestartWhen, Scenario};

use super::ProcessId;
use super::client::DiscoveryClient;
use super::observe::{Observation, Observer};
use super::world::{Event, Layout, ProcessSlot, World};

/// The suffix of the instance id of a process's next incarnation when it takes a new id.
pub const NEW_ID_SUFFIX: &str = "@1";

#[derive(Debug)]
pub struct RestartRun {
    pub config: RestartConfig,
    /// The process that exits.
    pub old: ProcessId,
    /// The process that starts (`old` unless the restart takes a new instance id).
    pub new: ProcessId,
    /// The new incarnation's client stream for a same-id restart (`client/<id>#1`).
    rng: Option<RngStream>,
    scheduled: bool,
    done: bool,
}

/// Appends a process slot for each restart that takes a new instance id; returns (old, new) per
/// restart.
pub(super) fn add_restart_slots(
    scenario: &Scenario,
    processes: &mut Vec<ProcessSlot>,
) -> Vec<(ProcessId, ProcessId)> {
    scenario
        .restarts
        .iter()
        .map(|r| {
            let old = processes
                .iter()
                .position(|p| p.name == r.instance)
                .unwrap_or(usize::MAX);
            if !r.new_instance_id || old == usize::MAX {
                return (old, old);
            }
            let slot = ProcessSlot {
                name: format!("{}{NEW_ID_SUFFIX}", r.instance),
                kind: processes[old].kind,
                application: processes[old].application,
            };
            processes.push(slot);
            (old, processes.len() - 1)
        })
        .collect()
}

impl RestartRun {
    pub fn build_all(
        scenario: &Scenario,
        layout: &Layout,
        streams: &StreamFactory,
    ) -> Vec<RestartRun> {
        scenario
            .restarts
            .iter()
            .zip(&layout.restarts)
            .map(|(config, &(old, new))| RestartRun {
                config: config.clone(),
                old,
                new,
                rng: (old == new).then(|| streams.stream(&format!("client/{}#1", config.instance))),
                scheduled: false,
                done: false,
            })
            .collect()
    }
}

impl<O: Observer> World<'_, O> {
    /// Schedules every restart with a fixed `at-s`.
    pub(super) fn schedule_restarts(&mut self) {
        for run in 0..self.restarts.len() {
            if let RestartWhen::At(at) = self.restarts[run].config.when {
                self.restarts[run].scheduled = true;
                self.queue
                    .schedule(crate::engine::SimTime(at), Event::Restart { run });
            }
        }
    }

    /// A process exited (kill -9, or the end of a graceful exit): start the `down-s` clock of a
    /// restart waiting for it.
    pub(super) fn on_process_exit(&mut self, p: ProcessId) {
        for run in 0..self.restarts.len() {
            let r = &mut self.restarts[run];
            if r.old != p || r.scheduled || r.done {
                continue;
            }
            if let RestartWhen::AfterExit(down) = r.config.when {
                r.scheduled = true;
                self.queue.schedule_in(down, Event::Restart { run });
            }
        }
    }

    /// Starts the new incarnation: a still-running previous one is killed first (an orchestrator
    /// replacing a process does not wait for it), the metrics of the old one freeze, and the new
    /// process goes through the boot lifecycle.
    pub(super) fn on_restart(&mut self, run: usize) {
        let (old, new) = (self.restarts[run].old, self.restarts[run].new);
        if self.restarts[run].done || old >= self.processes.len() {
            return;
        }
        self.restarts[run].done = true;
        if self.processes[old].alive {
            self.kill_process(old);
        }
        self.observe(Observation::Restarted { process: old });
        if new == old {
            let Some(rng) = self.restarts[run].rng.take() else {
                return;
            };
            let previous = &self.processes[old].client;
            let mut client = DiscoveryClient::new(previous.config.clone(), rng);
            // Timer events of the previous incarnation still in the queue carry its generations;
            // starting above them keeps them stale for the new client.
            client.incarnation = previous.incarnation + 1;
            client.heartbeat_generation = previous.heartbeat_generation + 1;
            client.fetch_generation = previous.fetch_generation + 1;
            client.replicator.generation = previous.replicator.generation + 1;
            let process = &mut self.processes[old];
            process.client = client;
            process.serving = false;
        }
        self.on_client_create(new);
    }
}
