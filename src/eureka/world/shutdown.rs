//! The world's handlers for `shutdown`: each hands the event to the [`ShutdownRun`] (which owns
//! the step machine) and carries out the [`ShutdownEffect`]s it returns, in order.

use crate::eureka::ids::ProcessId;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::shutdown::{Context, ShutdownEffect, ShutdownRun, Step};

use super::World;

impl<O: Observer> World<'_, O> {
    /// Step `step` of shutdown run `run` ([`ShutdownRun::on_step`]); void on a dead process or
    /// on a later incarnation than the run began on.
    pub(super) fn on_shutdown_step(&mut self, run: usize, step: Step) {
        let p = self.shutdowns[run].process;
        if !self.processes[p].alive() {
            return;
        }
        let incarnation = self.processes[p].client.incarnation();
        if !self.shutdowns[run].is_on(incarnation) {
            return;
        }
        let client = &self.processes[p].client;
        let release = self.scenario.simulation.release;
        let cx = Context {
            release,
            graceful_web_server: client.config().graceful_shutdown(release),
            last_dirty: client.last_dirty(),
        };
        let mut effects = Vec::new();
        self.shutdowns[run].on_step(step, cx, &mut effects);
        self.shutdown_effects(run, effects);
    }

    /// `DiscoveryClient#shutdown` of `p` finished ([`ShutdownRun::on_client_shutdown_done`]).
    pub(super) fn on_client_shutdown_done(&mut self, p: ProcessId) {
        self.with_shutdown_of(p, ShutdownRun::on_client_shutdown_done);
    }

    /// A status PUT or DELETE of `p` was answered ([`ShutdownRun::on_status_reply`]).
    pub(super) fn on_status_call_done(&mut self, p: ProcessId) {
        self.with_shutdown_of(p, ShutdownRun::on_status_reply);
    }

    /// Calls `rule` on the (first) shutdown run of `p`, if any, and carries out its effects.
    fn with_shutdown_of(
        &mut self,
        p: ProcessId,
        rule: impl FnOnce(&mut ShutdownRun, &mut Vec<ShutdownEffect>),
    ) {
        let Some(run) = self.shutdowns.iter().position(|s| s.process == p) else {
            return;
        };
        let mut effects = Vec::new();
        rule(&mut self.shutdowns[run], &mut effects);
        self.shutdown_effects(run, effects);
    }

    fn shutdown_effects(&mut self, run: usize, effects: Vec<ShutdownEffect>) {
        let p = self.shutdowns[run].process;
        for effect in effects {
            match effect {
                ShutdownEffect::Kill => self.kill_process(p),
                ShutdownEffect::SetStatus(status) => self.set_instance_status(p, status),
                ShutdownEffect::ClientShutdown => self.client_shutdown(p),
                ShutdownEffect::Send(call) => self.send(p, call),
                ShutdownEffect::Schedule { delay_ms, step } => {
                    let at = self.now() + delay_ms;
                    self.schedule_shutdown_step(at, run, step);
                }
                ShutdownEffect::ScheduleDrawn { range, step } => {
                    let delay_ms = self.net[p].between(range.0, range.1);
                    let at = self.now() + delay_ms;
                    self.schedule_shutdown_step(at, run, step);
                }
                ShutdownEffect::StopServing { graceful, then } => {
                    let phase = if graceful {
                        self.stop_serving_gracefully(p)
                    } else {
                        self.stop_serving_abruptly(p);
                        0
                    };
                    if let Some((step, (lo, hi))) = then {
                        let stop = self.net[p].between(lo, hi);
                        let at = self.now() + (phase + stop);
                        self.schedule_shutdown_step(at, run, step);
                    }
                }
                ShutdownEffect::StartServing => {
                    self.set_serving(p, true);
                    self.observe(Observation::ResumedServing { process: p });
                }
                ShutdownEffect::Now(step) => self.on_shutdown_step(run, step),
            }
        }
    }
}
