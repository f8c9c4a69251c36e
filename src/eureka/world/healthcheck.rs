//! `eureka.client.healthcheck.enabled` (spring-cloud-netflix#3923).
//!
//! With the flag, SCN registers `EurekaHealthCheckHandler`, and every `InstanceInfoReplicator
//! #run` starts with `DiscoveryClient#refreshInstanceInfo`, which sets the ApplicationInfoManager
//! status to `healthCheckHandler.getStatus(current)`. SCN's handler ignores the current status
//! and returns the aggregate of the application's health indicators
//! (`EurekaHealthCheckHandler#getStatus` -> `getHealthStatus`), which stay UP while the context
//! is alive. So on a graceful shutdown (Edgware and later) the replicator run that the DOWN
//! triggers first turns the status back to UP and registers UP: the log shows DOWN at
//! 29.573, `current=UP, previous=DOWN` on `DiscoveryInfoReplicator-0` at 29.574 and
//! "Registered instance ... with status UP". Every later replicator run does the same until
//! `DiscoveryClient#shutdown` stops the replicator; then only the DELETE removes the instance.
//!
//! Modelling assumptions: health is UP from the first UP (the web server is ready; a STARTING
//! instance is left alone) until `DiscoveryClient#shutdown` begins (bean destruction; a run
//! during the two-phase stop is not flipped); the process's own health never fails otherwise.
//! Whether a later SCN release stops the handler during shutdown is not verified here.

use crate::eureka::client::ShutdownPhase;
use crate::eureka::ids::ProcessId;
use crate::eureka::observe::Observer;
use crate::eureka::status::InstanceStatus;

use super::World;

impl<O: Observer> World<'_, O> {
    /// `DiscoveryClient#refreshInstanceInfo` with SCN's `EurekaHealthCheckHandler`.
    pub(super) fn refresh_instance_info(&mut self, p: ProcessId) {
        let process = &self.processes[p];
        let client = &process.client;
        if !client.config.healthcheck_enabled
            || !process.alive()
            || client.shutdown != ShutdownPhase::Running
            || client.info.status == InstanceStatus::Starting
        {
            return;
        }
        self.set_instance_status(p, InstanceStatus::Up);
    }
}
