//! The world's handlers for `shutdown` (the rules and their state live in `eureka::shutdown`).

use crate::eureka::ids::ProcessId;
use crate::eureka::observe::Observer;
use crate::eureka::protocol::Call;
use crate::eureka::shutdown::{AfterClientShutdown, Step};
use crate::eureka::shutdown::{
    DALSTON_DEREGISTER_HOP_MS, PRESTOP_EXTENSION_MS, WEB_SERVER_STOP_MS,
};
use crate::eureka::status::InstanceStatus;
use crate::scenario::{FinalStop, Strategy};

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    pub(super) fn on_shutdown_step(&mut self, run: usize, step: Step) {
        let p = self.shutdowns[run].process;
        if !self.processes[p].alive() {
            return;
        }
        // Steps of a run that began on an earlier incarnation (before a [[restart]]) are void.
        let incarnation = self.processes[p].client.incarnation();
        if *self.shutdowns[run].incarnation.get_or_insert(incarnation) != incarnation {
            return;
        }
        let config = &self.shutdowns[run].config;
        let (strategy, wait, then) = (config.strategy, config.wait_ms, config.then);
        let resume = config.resume_ms;
        match step {
            Step::Begin => match strategy {
                Strategy::Kill9 => self.kill_process(p),
                Strategy::Kill15 => self.begin_kill15(run),
                Strategy::Pause => {
                    if self.scenario.simulation.release.pause_deregisters() {
                        self.deregister(run, AfterClientShutdown::Nothing);
                    }
                    let (delay, step) = match resume {
                        Some(resume) => (resume, Step::Resume),
                        None => (wait, Step::Final),
                    };
                    self.queue.schedule_in(delay, Event::Shutdown { run, step });
                }
                Strategy::ServiceRegistry => {
                    // CloudEurekaClient#setStatus: a direct PUT; the local status stays UP.
                    let last_dirty = self.processes[p].client.last_dirty();
                    self.shutdowns[run].awaiting_status_reply = Some(Step::Begin);
                    self.send(
                        p,
                        Call::PutStatus {
                            status: InstanceStatus::OutOfService,
                            last_dirty,
                        },
                    );
                }
            },
            Step::DeleteOverride => {
                self.shutdowns[run].awaiting_status_reply = Some(Step::DeleteOverride);
                self.send(p, Call::DeleteStatus);
            }
            Step::Final => match then {
                FinalStop::Kill9 => self.kill_process(p),
                FinalStop::Kill15 => self.begin_kill15(run),
                FinalStop::KeepRunning => {}
            },
            Step::Resume if self.scenario.simulation.release.pause_deregisters() => self.resume(p),
            // commons >= 2.2.7: /resume only calls the PauseHandler beans, as /pause did.
            Step::Resume => {}
            Step::DestroyBeans => {
                self.shutdowns[run].after_client_shutdown = AfterClientShutdown::Exit;
                self.client_shutdown(p);
            }
            Step::DalstonClientShutdown => self.client_shutdown(p),
            Step::Sigkill => self.kill_process(p),
            Step::Sigterm => self.begin_kill15(run),
        }
    }

    /// SIGTERM: `context.close()`; or, when PID 1 does not forward it, nothing until the
    /// orchestrator's SIGKILL after the grace period.
    ///
    /// With `prestop-s`, Kubernetes first runs the container's `preStop` hook (a sleep) and
    /// sends SIGTERM only when it returns; the instance keeps serving and stays UP meanwhile.
    /// `terminationGracePeriodSeconds` counts from the start of the hook, and a hook still
    /// running when it expires gets a one-off 2 s extension before the SIGTERM (Kubernetes
    /// documentation, "Pod Lifetime: Termination of Pods" and "Container Lifecycle Hooks"): so
    /// the SIGKILL comes at `max(grace, prestop + 2 s)` after the hook started.
    fn begin_kill15(&mut self, run: usize) {
        let p = self.shutdowns[run].process;
        let config = &self.shutdowns[run].config;
        if config.prestop_ms > 0 && !self.shutdowns[run].prestop_done {
            let (prestop, grace) = (config.prestop_ms, config.termination_grace_ms);
            let reaches = config.sigterm_reaches_jvm;
            self.shutdowns[run].prestop_done = true;
            let sigkill = if grace > prestop {
                grace
            } else {
                prestop + PRESTOP_EXTENSION_MS
            };
            let sigterm = prestop.min(sigkill);
            self.queue.schedule_in(
                sigkill,
                Event::Shutdown {
                    run,
                    step: Step::Sigkill,
                },
            );
            if reaches {
                self.queue.schedule_in(
                    sigterm,
                    Event::Shutdown {
                        run,
                        step: Step::Sigterm,
                    },
                );
            }
            return;
        }
        if !config.sigterm_reaches_jvm {
            let grace = config.termination_grace_ms;
            self.queue.schedule_in(
                grace,
                Event::Shutdown {
                    run,
                    step: Step::Sigkill,
                },
            );
            return;
        }
        if self
            .scenario
            .simulation
            .release
            .deregister_shuts_client_down()
        {
            // The web server stops after the ContextClosedEvent handler returned.
            self.deregister(run, AfterClientShutdown::StopServingThenExit);
        } else {
            self.set_instance_status(p, InstanceStatus::Down);
            // The graceful phase (if any), then the web server's stop (FACTS.md §7).
            let release = self.scenario.simulation.release;
            let phase = if self.processes[p].client.config().graceful_shutdown(release) {
                self.stop_serving_gracefully(p)
            } else {
                self.stop_serving_abruptly(p);
                0
            };
            let (lo, hi) = WEB_SERVER_STOP_MS;
            let stop = self.net[p].between(lo, hi);
            self.queue.schedule_in(
                phase + stop,
                Event::Shutdown {
                    run,
                    step: Step::DestroyBeans,
                },
            );
        }
    }

    /// `EurekaServiceRegistry#deregister`: DOWN; on Dalston also `eurekaClient.shutdown()` on the
    /// same thread, a moment after the DOWN was handed to the replicator thread.
    fn deregister(&mut self, run: usize, after: AfterClientShutdown) {
        let p = self.shutdowns[run].process;
        self.set_instance_status(p, InstanceStatus::Down);
        if self
            .scenario
            .simulation
            .release
            .deregister_shuts_client_down()
        {
            self.shutdowns[run].after_client_shutdown = after;
            let (lo, hi) = DALSTON_DEREGISTER_HOP_MS;
            let hop = self.net[p].between(lo, hi);
            self.queue.schedule_in(
                hop,
                Event::Shutdown {
                    run,
                    step: Step::DalstonClientShutdown,
                },
            );
        }
    }

    /// `DiscoveryClient#shutdown` of `p` finished.
    pub(super) fn on_client_shutdown_done(&mut self, p: ProcessId) {
        let Some(run) = self.shutdowns.iter().position(|s| s.process == p) else {
            return;
        };
        let after = std::mem::replace(
            &mut self.shutdowns[run].after_client_shutdown,
            AfterClientShutdown::Nothing,
        );
        match after {
            AfterClientShutdown::Nothing => {}
            AfterClientShutdown::Exit => self.kill_process(p),
            // Dalston runs Boot 1.5: no graceful shutdown, the web server stops at once.
            AfterClientShutdown::StopServingThenExit => {
                self.stop_serving_abruptly(p);
                self.kill_process(p);
            }
        }
    }

    /// `/actuator/resume` (spring-cloud-context `RestartEndpoint#resume`, commons <= 2.2.6):
    /// `context.start()` -> `EurekaAutoServiceRegistration#start` -> `EurekaServiceRegistry
    /// #register` -> `setInstanceStatus(initial status UP)` (FACTS.md §7). On Edgware and later
    /// the listener is still registered, so the UP goes out as an on-demand register. On Dalston
    /// /pause already ran `DiscoveryClient#shutdown` (listener removed, tasks stopped, DELETE
    /// sent), so the UP reaches nobody: the instance stays unregistered while serving
    /// (spring-cloud-netflix#2099, fixed by moving the client shutdown to
    /// `EurekaRegistration#close` in SCN 1.4.0).
    fn resume(&mut self, p: ProcessId) {
        self.set_instance_status(p, InstanceStatus::Up);
    }

    /// A status PUT or DELETE of the service-registry strategy was answered.
    pub(super) fn on_status_call_done(&mut self, p: ProcessId) {
        let Some(run) = self.shutdowns.iter().position(|s| s.process == p) else {
            return;
        };
        let wait = self.shutdowns[run].config.wait_ms;
        let cancel_override = self.shutdowns[run].config.cancel_override;
        match self.shutdowns[run].awaiting_status_reply.take() {
            Some(Step::Begin) if !cancel_override => {
                self.queue.schedule_in(
                    wait,
                    Event::Shutdown {
                        run,
                        step: Step::Final,
                    },
                );
            }
            Some(Step::Begin) => {
                self.queue.schedule_in(
                    wait,
                    Event::Shutdown {
                        run,
                        step: Step::DeleteOverride,
                    },
                );
            }
            Some(Step::DeleteOverride) => self.on_shutdown_step(run, Step::Final),
            _ => {}
        }
    }
}
