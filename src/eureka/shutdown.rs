//! The four shutdown strategies as Spring Cloud runs them (FACTS.md §7).
//!
//! - `kill-9`: the JVM dies; nothing is sent.
//! - `kill-15`, Edgware and later on Spring Boot 2.3+: `ContextClosedEvent` sets DOWN (an async
//!   register through the replicator), the web server (a SmartLifecycle) stops taking requests,
//!   then bean destruction runs `DiscoveryClient#shutdown` (replicator stop, DELETE) and the JVM
//!   exits.
//! - `kill-15`, Edgware to Hoxton.SR4 (Spring Boot 1.5–2.2): the same DOWN and bean destruction,
//!   but the web server is stopped in `onClose`, after `destroyBeans()`: the instance keeps
//!   serving until the DELETE is out (`Release::web_server_is_lifecycle`, FACTS.md §14).
//! - `kill-15`, Dalston: DOWN and then, on the same thread, `DiscoveryClient#shutdown` with its
//!   DELETE, racing the DOWN register on the replicator thread; the web server stops afterwards.
//! - `pause`: up to spring-cloud-commons 2.2.6 (Hoxton.SR9), `context.stop()` deregisters
//!   (DOWN; on Dalston also the client shutdown); on Boot 1.5–2.2 the web server keeps serving for
//!   `wait-s`, on Boot 2.3+ `context.stop()` stops the web server's lifecycle first, so the
//!   paused instance refuses every connection (`Release::pause_stops_web_server`,
//!   spring-cloud-commons#788, FACTS.md §14); then the process is stopped with `then`. From
//!   commons 2.2.7 (Hoxton.SR10, 2020.0+) /pause only calls `PauseHandler` beans: nothing reaches
//!   Eureka, the instance stays UP and serving until `then` (`Release::pause_deregisters`,
//!   FACTS.md §7).
//! - `service-registry`: `PUT .../status?value=OUT_OF_SERVICE`, wait `wait-s`, `DELETE
//!   .../status` (UNKNOWN), then `then`.

//!
//! A [`ShutdownRun`] owns its step machine: told a step (or that the client's shutdown finished,
//! or that a status call was answered), it returns what the world must do, in order, as
//! [`ShutdownEffect`]s. The world carries them out: the ones that touch the process's client, web
//! server and in-flight requests, and the scheduling of the run's next steps.

use crate::scenario::{FinalStop, Release, Scenario, ShutdownConfig, Strategy};

use super::ids::ProcessId;
use super::layout::Layout;
use super::protocol::Call;
use super::status::InstanceStatus;

/// Modelling assumption: how long the lifecycle stop (on Boot 2.3+ the web server's) takes before
/// bean destruction starts (uniform, ms). Only the order of the DOWN register and the DELETE
/// depends on it.
pub const WEB_SERVER_STOP_MS: (u64, u64) = (5, 50);

/// Tomcat's `StandardWrapper#unload` waits for the servlet's requests in flight before it
/// destroys the servlet: 21 sleeps of `unloadDelay / 20` (`StandardContext#unloadDelay`, 2000 ms
/// by default), ending early only when none is left (ms). A `/actuator/pause` that stops the web
/// server (Boot 2.3+, commons <= 2.2.6) runs `context.stop()` on the very request thread the
/// DispatcherServlet is serving, so that request never ends while it waits: the stop always
/// waits the whole 2.1 s before the lower lifecycle phases (EurekaAutoServiceRegistration, the
/// DOWN) run. Measured on the real stack (Hoxton.SR9, Boot 2.3.12, Tomcat 9.0.46): the server
/// logs the DOWN register 2,126–2,180 ms after the POST in 30 of 30 trials (median 2,135).
pub const PAUSE_REQUEST_UNLOAD_WAIT_MS: u64 = 21 * (2_000 / 20);

/// Kubernetes' one-off extension of the grace period for a `preStop` hook still running when
/// it expires (ms).
pub const PRESTOP_EXTENSION_MS: u64 = 2_000;

/// Modelling assumption: how long the closing thread takes to get from setting DOWN to sending
/// Dalston's DELETE (uniform, ms), while the replicator thread sends the DOWN register.
pub const DALSTON_DEREGISTER_HOP_MS: (u64, u64) = (0, 2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Begin,
    /// Edgware+: bean destruction after the web server stopped.
    DestroyBeans,
    /// Dalston: the closing thread reaches `eurekaClient.shutdown()`.
    DalstonClientShutdown,
    /// `service-registry`: the wait is over, delete the override.
    DeleteOverride,
    /// The wait is over: stop the process with `then`.
    Final,
    /// The orchestrator's SIGKILL after a SIGTERM that never reached the JVM.
    Sigkill,
    /// `pause` with `resume-s`: `POST /actuator/resume`.
    Resume,
    /// `pause` on Boot 2.3+ (commons <= 2.2.6): the web server's stop is over, the lifecycle
    /// stop reaches `EurekaAutoServiceRegistration#stop` (DOWN).
    PausedWebServerStopped,
    /// The Kubernetes `preStop` sleep is over: the SIGTERM.
    Sigterm,
}

/// What a run reads of its process when it steps.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    pub release: Release,
    /// The web server shuts down gracefully (`server.shutdown`, or the release's default).
    pub graceful_web_server: bool,
    /// The client's `InstanceInfo` dirty timestamp (sent with a status PUT).
    pub last_dirty: u64,
}

/// What a shutdown run asks of the world, in the order it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownEffect {
    /// The JVM dies now (kill -9, SIGKILL, or the end of a graceful exit).
    Kill,
    /// `ApplicationInfoManager#setInstanceStatus`.
    SetStatus(InstanceStatus),
    /// `DiscoveryClient#shutdown`.
    ClientShutdown,
    /// A REST call to the process's server.
    Send(Call),
    /// This run's `step`, `delay_ms` from now.
    Schedule { delay_ms: u64, step: Step },
    /// This run's `step` after a uniform draw from `range` (ms, from the process's own stream).
    ScheduleDrawn { range: (u64, u64), step: Step },
    /// `/resume` on Boot 2.3+ (commons <= 2.2.6): `context.start()` starts the web server's
    /// lifecycle again, so the instance accepts connections again.
    StartServing,
    /// The web server stops: `graceful` lets the requests in flight finish first (its graceful
    /// phase), else they fail. With `then`, the context goes on: that step after the graceful
    /// phase plus a uniform draw from its range (the web server's own stop).
    StopServing {
        graceful: bool,
        then: Option<(Step, (u64, u64))>,
    },
    /// This run's `step`, now (as if it had fired).
    Now(Step),
}

/// What to do when the process's `DiscoveryClient#shutdown` completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterClientShutdown {
    Nothing,
    Exit,
    StopServingThenExit,
}

#[derive(Debug)]
pub struct ShutdownRun {
    pub config: ShutdownConfig,
    pub process: ProcessId,
    after_client_shutdown: AfterClientShutdown,
    /// Which status call is in flight (service-registry).
    awaiting_status_reply: Option<Step>,
    /// The process incarnation the run began on; a restarted process is not this run's.
    incarnation: Option<u32>,
    /// The `preStop` hook ran (`prestop-s`).
    prestop_done: bool,
}

impl ShutdownRun {
    /// A run of `config` on `process` (a `[[deploy]]` builds one per old instance).
    pub fn new(config: ShutdownConfig, process: ProcessId) -> ShutdownRun {
        ShutdownRun {
            config,
            process,
            after_client_shutdown: AfterClientShutdown::Nothing,
            awaiting_status_reply: None,
            incarnation: None,
            prestop_done: false,
        }
    }

    /// Waits for nothing: no client shutdown or status reply is awaited (a step the world
    /// scheduled is counted by the world).
    pub fn idle(&self) -> bool {
        matches!(self.after_client_shutdown, AfterClientShutdown::Nothing)
            && self.awaiting_status_reply.is_none()
    }

    /// The process is on `incarnation`: false if the run began on an earlier one (before a
    /// `[[restart]]`), whose steps are void.
    pub fn is_on(&mut self, incarnation: u32) -> bool {
        *self.incarnation.get_or_insert(incarnation) == incarnation
    }

    /// Step `step` of the run (on a live process of its incarnation).
    pub fn on_step(&mut self, step: Step, cx: Context, out: &mut Vec<ShutdownEffect>) {
        let config = &self.config;
        let (strategy, wait, then) = (config.strategy, config.wait_ms, config.then);
        let resume = config.resume_ms;
        match step {
            Step::Begin => match strategy {
                Strategy::Kill9 => out.push(ShutdownEffect::Kill),
                Strategy::Kill15 => self.begin_kill15(cx, out),
                Strategy::Pause => {
                    if cx.release.pause_stops_web_server() {
                        // context.stop(): WebServerGracefulShutdownLifecycle / StartStop
                        // (phases MAX_VALUE, MAX_VALUE - 1) stop before
                        // EurekaAutoServiceRegistration (phase 0) sets DOWN, and the web
                        // server's stop waits for the /pause request itself.
                        let (lo, hi) = WEB_SERVER_STOP_MS;
                        let wait = PAUSE_REQUEST_UNLOAD_WAIT_MS;
                        out.push(ShutdownEffect::StopServing {
                            graceful: cx.graceful_web_server,
                            then: Some((Step::PausedWebServerStopped, (wait + lo, wait + hi))),
                        });
                    } else if cx.release.pause_deregisters() {
                        self.deregister(AfterClientShutdown::Nothing, cx, out);
                    }
                    let (delay_ms, step) = match resume {
                        Some(resume) => (resume, Step::Resume),
                        None => (wait, Step::Final),
                    };
                    out.push(ShutdownEffect::Schedule { delay_ms, step });
                }
                Strategy::ServiceRegistry => {
                    // CloudEurekaClient#setStatus: a direct PUT; the local status stays UP.
                    self.awaiting_status_reply = Some(Step::Begin);
                    out.push(ShutdownEffect::Send(Call::PutStatus {
                        status: InstanceStatus::OutOfService,
                        last_dirty: cx.last_dirty,
                    }));
                }
            },
            Step::DeleteOverride => {
                self.awaiting_status_reply = Some(Step::DeleteOverride);
                out.push(ShutdownEffect::Send(Call::DeleteStatus));
            }
            Step::Final => match then {
                FinalStop::Kill9 => out.push(ShutdownEffect::Kill),
                FinalStop::Kill15 => self.begin_kill15(cx, out),
                FinalStop::KeepRunning => {}
            },
            Step::PausedWebServerStopped => self.deregister(AfterClientShutdown::Nothing, cx, out),
            Step::Resume if cx.release.pause_deregisters() => Self::resume(cx, out),
            // commons >= 2.2.7: /resume only calls the PauseHandler beans, as /pause did.
            Step::Resume => {}
            Step::DestroyBeans => {
                // Boot <= 2.2: `onClose` stops the web server after `destroyBeans()`.
                self.after_client_shutdown = if cx.release.web_server_is_lifecycle() {
                    AfterClientShutdown::Exit
                } else {
                    AfterClientShutdown::StopServingThenExit
                };
                out.push(ShutdownEffect::ClientShutdown);
            }
            Step::DalstonClientShutdown => out.push(ShutdownEffect::ClientShutdown),
            Step::Sigkill => out.push(ShutdownEffect::Kill),
            Step::Sigterm => self.begin_kill15(cx, out),
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
    fn begin_kill15(&mut self, cx: Context, out: &mut Vec<ShutdownEffect>) {
        let config = &self.config;
        if config.prestop_ms > 0 && !self.prestop_done {
            let (prestop, grace) = (config.prestop_ms, config.termination_grace_ms);
            let reaches = config.sigterm_reaches_jvm;
            self.prestop_done = true;
            let sigkill = if grace > prestop {
                grace
            } else {
                prestop + PRESTOP_EXTENSION_MS
            };
            let sigterm = prestop.min(sigkill);
            out.push(ShutdownEffect::Schedule {
                delay_ms: sigkill,
                step: Step::Sigkill,
            });
            if reaches {
                out.push(ShutdownEffect::Schedule {
                    delay_ms: sigterm,
                    step: Step::Sigterm,
                });
            }
            return;
        }
        if !config.sigterm_reaches_jvm {
            out.push(ShutdownEffect::Schedule {
                delay_ms: config.termination_grace_ms,
                step: Step::Sigkill,
            });
            return;
        }
        if cx.release.deregister_shuts_client_down() {
            // The web server stops after the ContextClosedEvent handler returned.
            self.deregister(AfterClientShutdown::StopServingThenExit, cx, out);
        } else if cx.release.web_server_is_lifecycle() {
            // The graceful phase (if any), then the web server's stop (FACTS.md §7, §14).
            out.push(ShutdownEffect::SetStatus(InstanceStatus::Down));
            out.push(ShutdownEffect::StopServing {
                graceful: cx.graceful_web_server,
                then: Some((Step::DestroyBeans, WEB_SERVER_STOP_MS)),
            });
        } else {
            // Boot <= 2.2: the lifecycle stop leaves the web server alone; it stops in
            // `onClose`, after bean destruction (FACTS.md §14).
            out.push(ShutdownEffect::SetStatus(InstanceStatus::Down));
            out.push(ShutdownEffect::ScheduleDrawn {
                range: WEB_SERVER_STOP_MS,
                step: Step::DestroyBeans,
            });
        }
    }

    /// `EurekaServiceRegistry#deregister`: DOWN; on Dalston also `eurekaClient.shutdown()` on the
    /// same thread, a moment after the DOWN was handed to the replicator thread.
    fn deregister(
        &mut self,
        after: AfterClientShutdown,
        cx: Context,
        out: &mut Vec<ShutdownEffect>,
    ) {
        out.push(ShutdownEffect::SetStatus(InstanceStatus::Down));
        if cx.release.deregister_shuts_client_down() {
            self.after_client_shutdown = after;
            out.push(ShutdownEffect::ScheduleDrawn {
                range: DALSTON_DEREGISTER_HOP_MS,
                step: Step::DalstonClientShutdown,
            });
        }
    }

    /// `/actuator/resume` (spring-cloud-context `RestartEndpoint#resume`, commons <= 2.2.6):
    /// `context.start()` -> `EurekaAutoServiceRegistration#start` -> `EurekaServiceRegistry
    /// #register` -> `setInstanceStatus(initial status UP)` (FACTS.md §7). On Edgware and later
    /// the listener is still registered, so the UP goes out as an on-demand register. On Dalston
    /// /pause already ran `DiscoveryClient#shutdown` (listener removed, tasks stopped, DELETE
    /// sent), so the UP reaches nobody: the instance stays unregistered while serving
    /// (spring-cloud-netflix#2099, fixed by moving the client shutdown to
    /// `EurekaRegistration#close` in SCN 1.4.0). On Boot 2.3+ `context.start()` also starts the
    /// web server /pause had stopped (its lifecycle phase starts after Eureka's phase 0).
    fn resume(cx: Context, out: &mut Vec<ShutdownEffect>) {
        out.push(ShutdownEffect::SetStatus(InstanceStatus::Up));
        if cx.release.pause_stops_web_server() {
            out.push(ShutdownEffect::StartServing);
        }
    }

    /// `DiscoveryClient#shutdown` of the run's process finished.
    pub fn on_client_shutdown_done(&mut self, out: &mut Vec<ShutdownEffect>) {
        let after = std::mem::replace(
            &mut self.after_client_shutdown,
            AfterClientShutdown::Nothing,
        );
        match after {
            AfterClientShutdown::Nothing => {}
            AfterClientShutdown::Exit => out.push(ShutdownEffect::Kill),
            // Dalston, and Boot <= 2.2 after bean destruction: no graceful shutdown, the web
            // server stops at once (`onClose`).
            AfterClientShutdown::StopServingThenExit => {
                out.push(ShutdownEffect::StopServing {
                    graceful: false,
                    then: None,
                });
                out.push(ShutdownEffect::Kill);
            }
        }
    }

    /// A status PUT or DELETE of the service-registry strategy was answered: wait, then delete
    /// the override (`cancel-override`) or stop with `then`.
    pub fn on_status_reply(&mut self, out: &mut Vec<ShutdownEffect>) {
        let delay_ms = self.config.wait_ms;
        match self.awaiting_status_reply.take() {
            Some(Step::Begin) if !self.config.cancel_override => {
                out.push(ShutdownEffect::Schedule {
                    delay_ms,
                    step: Step::Final,
                });
            }
            Some(Step::Begin) => out.push(ShutdownEffect::Schedule {
                delay_ms,
                step: Step::DeleteOverride,
            }),
            Some(Step::DeleteOverride) => out.push(ShutdownEffect::Now(Step::Final)),
            _ => {}
        }
    }

    pub fn build_all(scenario: &Scenario, layout: &Layout) -> Vec<ShutdownRun> {
        scenario
            .shutdowns
            .iter()
            .zip(&layout.targets)
            .map(|(config, &process)| ShutdownRun::new(config.clone(), process))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Train;

    fn run(strategy: Strategy) -> ShutdownRun {
        let config = ShutdownConfig::with_defaults(
            "svc-0".into(),
            (0, 0),
            1_000,
            strategy,
            (0, FinalStop::Kill9),
        );
        ShutdownRun::new(config, 0)
    }

    fn context(train: Train) -> Context {
        Context {
            release: Release::of_train(train),
            graceful_web_server: false,
            last_dirty: 7,
        }
    }

    fn step(run: &mut ShutdownRun, step: Step, cx: Context) -> Vec<ShutdownEffect> {
        let mut out = Vec::new();
        run.on_step(step, cx, &mut out);
        out
    }

    /// A kill-15 run on `train` after its first step, which sets DOWN (`ContextClosedEvent`,
    /// every train), and what that step does next.
    fn begun_kill15(train: Train) -> (ShutdownRun, Context, ShutdownEffect) {
        let mut kill15 = run(Strategy::Kill15);
        let cx = context(train);
        let begin = step(&mut kill15, Step::Begin, cx);
        let [down, next] = begin[..] else {
            panic!("DOWN and one more effect, got {begin:?}");
        };
        assert_eq!(down, ShutdownEffect::SetStatus(InstanceStatus::Down));
        (kill15, cx, next)
    }

    fn client_shutdown_done(run: &mut ShutdownRun) -> Vec<ShutdownEffect> {
        let mut out = Vec::new();
        run.on_client_shutdown_done(&mut out);
        out
    }

    /// Kubernetes: the SIGKILL comes at `max(grace, prestop + 2 s)` after the `preStop` hook
    /// started, the SIGTERM when the hook returns (never after the SIGKILL).
    #[test]
    fn prestop_longer_than_the_grace_period_gets_the_two_second_extension() {
        let mut kill15 = run(Strategy::Kill15);
        kill15.config.prestop_ms = 40_000;
        kill15.config.termination_grace_ms = 30_000;
        assert_eq!(
            step(&mut kill15, Step::Begin, context(Train::Hoxton)),
            [
                ShutdownEffect::Schedule {
                    delay_ms: 40_000 + 2_000,
                    step: Step::Sigkill
                },
                ShutdownEffect::Schedule {
                    delay_ms: 40_000,
                    step: Step::Sigterm
                },
            ]
        );
    }

    /// Boot 2.3+ (Hoxton.SR5 on, FACTS.md §7, §14): `ContextClosedEvent` sets DOWN, the web
    /// server's lifecycle stops, then bean destruction runs `DiscoveryClient#shutdown`, and the
    /// JVM exits after it.
    #[test]
    fn kill_15_on_boot_2_3_sets_down_stops_the_web_server_then_shuts_the_client_down() {
        for train in [Train::Hoxton, Train::Y2021, Train::Y2025_1] {
            let (mut kill15, cx, next) = begun_kill15(train);
            let then = Some((Step::DestroyBeans, WEB_SERVER_STOP_MS));
            let graceful = false;
            assert_eq!(next, ShutdownEffect::StopServing { graceful, then });
            assert_eq!(
                step(&mut kill15, Step::DestroyBeans, cx),
                [ShutdownEffect::ClientShutdown]
            );
            assert_eq!(client_shutdown_done(&mut kill15), [ShutdownEffect::Kill]);
        }
    }

    /// Boot 1.5–2.2 after Dalston (Edgware … Hoxton.SR4; FACTS.md §14): DOWN, the lifecycle stop
    /// leaves the web server alone, bean destruction runs `DiscoveryClient#shutdown`, and only
    /// then does `onClose` stop the web server (at once) before the JVM exits.
    #[test]
    fn kill_15_on_boot_2_2_keeps_serving_until_the_client_shut_down() {
        for train in [Train::Edgware, Train::Finchley, Train::Greenwich] {
            let (mut kill15, cx, next) = begun_kill15(train);
            let (range, step_) = (WEB_SERVER_STOP_MS, Step::DestroyBeans);
            assert_eq!(next, ShutdownEffect::ScheduleDrawn { range, step: step_ });
            assert_eq!(
                step(&mut kill15, Step::DestroyBeans, cx),
                [ShutdownEffect::ClientShutdown]
            );
            let stop = ShutdownEffect::StopServing {
                graceful: false,
                then: None,
            };
            assert_eq!(
                client_shutdown_done(&mut kill15),
                [stop, ShutdownEffect::Kill]
            );
        }
        let sr4 = Context {
            release: Release::parse("Hoxton.SR4").unwrap(),
            ..context(Train::Hoxton)
        };
        let mut kill15 = run(Strategy::Kill15);
        let begin = step(&mut kill15, Step::Begin, sr4);
        assert!(
            !begin
                .iter()
                .any(|e| matches!(e, ShutdownEffect::StopServing { .. }))
        );
    }

    /// /pause (FACTS.md §7, §14): on Hoxton.SR5–SR9 (Boot 2.3, commons <= 2.2.6)
    /// `context.stop()` stops the web server, which waits 2.1 s for the /pause request itself
    /// (Tomcat `StandardWrapper#unload`), then sets DOWN; /resume sets UP and starts it
    /// again. On Hoxton.SR4 (Boot 2.2) only DOWN; from SR10 nothing at all.
    #[test]
    fn pause_stops_the_web_server_only_on_boot_2_3_before_commons_2_2_7() {
        let on = |release: &str| Context {
            release: Release::parse(release).unwrap(),
            ..context(Train::Hoxton)
        };
        let mut pause = run(Strategy::Pause);
        pause.config.resume_ms = Some(10_000);
        // Tomcat's StandardWrapper#unload: 21 x (unloadDelay 2000 ms / 20) for the /pause
        // request in flight, then the web server's own stop, then the DOWN.
        let stop = ShutdownEffect::StopServing {
            graceful: false,
            then: Some((Step::PausedWebServerStopped, (2_105, 2_150))),
        };
        let down = ShutdownEffect::SetStatus(InstanceStatus::Down);
        let resume = ShutdownEffect::Schedule {
            delay_ms: 10_000,
            step: Step::Resume,
        };
        assert_eq!(
            step(&mut pause, Step::Begin, on("Hoxton.SR9")),
            [stop, resume]
        );
        assert_eq!(
            step(&mut pause, Step::PausedWebServerStopped, on("Hoxton.SR9")),
            [down]
        );
        assert_eq!(
            step(&mut pause, Step::Resume, on("Hoxton.SR9")),
            [
                ShutdownEffect::SetStatus(InstanceStatus::Up),
                ShutdownEffect::StartServing
            ]
        );
        assert_eq!(
            step(&mut pause, Step::Begin, on("Hoxton.SR4")),
            [down, resume]
        );
        assert_eq!(step(&mut pause, Step::Begin, on("Hoxton.SR10")), [resume]);
    }

    /// Dalston (FACTS.md §7): DOWN, then `DiscoveryClient#shutdown` on the same thread a moment
    /// later; only after it does the web server stop (at once, Boot 1.5) and the JVM exit.
    #[test]
    fn kill_15_on_dalston_shuts_the_client_down_before_the_web_server_stops() {
        let (mut kill15, _, next) = begun_kill15(Train::Dalston);
        let range = DALSTON_DEREGISTER_HOP_MS;
        let step = Step::DalstonClientShutdown;
        assert_eq!(next, ShutdownEffect::ScheduleDrawn { range, step });
        assert_eq!(
            client_shutdown_done(&mut kill15),
            [
                ShutdownEffect::StopServing {
                    graceful: false,
                    then: None
                },
                ShutdownEffect::Kill
            ]
        );
    }

    /// `service-registry` with `cancel-override`: PUT OUT_OF_SERVICE (with the client's dirty
    /// timestamp), wait `wait-s` after the reply, DELETE the override, then stop with `then`.
    #[test]
    fn service_registry_waits_after_the_put_then_deletes_the_override_then_stops() {
        let mut registry = run(Strategy::ServiceRegistry);
        registry.config.wait_ms = 5_000;
        registry.config.cancel_override = true;
        let cx = context(Train::Hoxton);
        assert_eq!(
            step(&mut registry, Step::Begin, cx),
            [ShutdownEffect::Send(Call::PutStatus {
                status: InstanceStatus::OutOfService,
                last_dirty: 7
            })]
        );
        let mut out = Vec::new();
        registry.on_status_reply(&mut out);
        assert_eq!(
            out,
            [ShutdownEffect::Schedule {
                delay_ms: 5_000,
                step: Step::DeleteOverride
            }]
        );
        assert_eq!(
            step(&mut registry, Step::DeleteOverride, cx),
            [ShutdownEffect::Send(Call::DeleteStatus)]
        );
        let mut out = Vec::new();
        registry.on_status_reply(&mut out);
        assert_eq!(out, [ShutdownEffect::Now(Step::Final)]);
        assert_eq!(step(&mut registry, Step::Final, cx), [ShutdownEffect::Kill]);
    }

    /// A run that began on one incarnation ignores the steps on a restarted process.
    #[test]
    fn steps_of_a_run_that_began_before_a_restart_are_void() {
        let mut kill9 = run(Strategy::Kill9);
        assert!(kill9.is_on(0));
        assert!(kill9.is_on(0));
        assert!(!kill9.is_on(1));
    }
}
