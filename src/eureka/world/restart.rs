//! The world's handlers for `restart` (the rules and their state live in `eureka::restart`).

use crate::engine::SimTime;
use crate::eureka::ids::ProcessId;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::transport::TransportStreams;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// Schedules every restart with a fixed `at-s`.
    pub(super) fn schedule_restarts(&mut self) {
        for run in 0..self.restarts.len() {
            if let Some(at) = self.restarts[run].schedule_fixed() {
                self.queue.schedule(SimTime(at), Event::Restart { run });
            }
        }
    }

    /// A process exited (kill -9, or the end of a graceful exit): start the `down-s` clock of a
    /// restart waiting for it.
    pub(super) fn on_process_exit(&mut self, p: ProcessId) {
        for run in 0..self.restarts.len() {
            if let Some(down) = self.restarts[run].on_exit(p) {
                self.queue.schedule_in(down, Event::Restart { run });
            }
        }
    }

    /// Starts the new incarnation: a still-running previous one is killed first (an orchestrator
    /// replacing a process does not wait for it), the metrics of the old one freeze, and the new
    /// process goes through the boot lifecycle.
    pub(super) fn on_restart(&mut self, run: usize) {
        let (old, new) = (self.restarts[run].old, self.restarts[run].new);
        if old >= self.processes.len() || !self.restarts[run].begin() {
            return;
        }
        if self.processes[old].alive() {
            self.kill_process(old);
        }
        self.observe(Observation::Restarted { process: old });
        if new == old {
            let Some(rng) = self.restarts[run].take_client_stream() else {
                return;
            };
            let name = format!("{}#1", self.processes[old].name);
            let transport = TransportStreams::named(&self.streams, &name);
            self.processes[old].client = self.processes[old].client.restarted(rng, transport);
            self.renew_query_stream(old, &name);
            self.set_serving(old, false);
        }
        self.on_client_create(new);
    }
}
