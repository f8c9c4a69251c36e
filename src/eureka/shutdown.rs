//! The four shutdown strategies as Spring Cloud runs them (FACTS.md §7).
//!
//! - `kill-9`: the JVM dies; nothing is sent.
//! - `kill-15`, Edgware and later: `ContextClosedEvent` sets DOWN (an async register through the
//!   replicator), the web server stops taking requests, then bean destruction runs
//!   `DiscoveryClient#shutdown` (replicator stop, DELETE) and the JVM exits.
//! - `kill-15`, Dalston: DOWN and then, on the same thread, `DiscoveryClient#shutdown` with its
//!   DELETE, racing the DOWN register on the replicator thread; the web server stops afterwards.
//! - `pause`: up to spring-cloud-commons 2.2.6 (Hoxton.SR9), `context.stop()` deregisters
//!   (DOWN; on Dalston also the client shutdown) but the web server keeps serving for `wait-s`;
//!   then the process is stopped with `then`. From commons 2.2.7 (Hoxton.SR10, 2020.0+) /pause
//!   only calls `PauseHandler` beans: nothing reaches Eureka, the instance stays UP and serving
//!   until `then` (`Release::pause_deregisters`, FACTS.md §7).
//! - `service-registry`: `PUT .../status?value=OUT_OF_SERVICE`, wait `wait-s`, `DELETE
//!   .../status` (UNKNOWN), then `then`.

use crate::scenario::{Scenario, ShutdownConfig};

use super::ids::ProcessId;
use super::layout::Layout;

/// Modelling assumption: how long the web server's lifecycle stop takes before bean destruction
/// starts (uniform, ms). Only the order of the DOWN register and the DELETE depends on it.
pub const WEB_SERVER_STOP_MS: (u64, u64) = (5, 50);

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
    /// The Kubernetes `preStop` sleep is over: the SIGTERM.
    Sigterm,
}

/// What to do when the process's `DiscoveryClient#shutdown` completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::eureka) enum AfterClientShutdown {
    Nothing,
    Exit,
    StopServingThenExit,
}

#[derive(Debug)]
pub struct ShutdownRun {
    pub config: ShutdownConfig,
    pub process: ProcessId,
    pub(in crate::eureka) after_client_shutdown: AfterClientShutdown,
    /// Which status call is in flight (service-registry).
    pub(in crate::eureka) awaiting_status_reply: Option<Step>,
    /// The process incarnation the run began on; a restarted process is not this run's.
    pub(in crate::eureka) incarnation: Option<u32>,
    /// The `preStop` hook ran (`prestop-s`).
    pub(in crate::eureka) prestop_done: bool,
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

    pub fn build_all(scenario: &Scenario, layout: &Layout) -> Vec<ShutdownRun> {
        scenario
            .shutdowns
            .iter()
            .zip(&layout.targets)
            .map(|(config, &process)| ShutdownRun::new(config.clone(), process))
            .collect()
    }
}
