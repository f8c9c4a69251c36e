//! `InstanceInfoReplicator`: registers and status changes (FACTS.md §5.4).

use super::*;

/// `InstanceInfoReplicator` (FACTS.md §5.4).
impl DiscoveryClient {
    /// `DiscoveryClient#register`: POST the client's current InstanceInfo.
    pub(super) fn send_register(
        &mut self,
        now: SimTime,
        why: RegisterWhy,
        out: &mut impl ClientOutput,
    ) {
        let info = self.registrant();
        self.send(now, Call::Register { info, why }, out);
    }

    /// `InstanceInfoReplicator#onDemandUpdate`: rate-limited (burst 2, FACTS.md §5.4); a refused
    /// update is dropped and the dirty InstanceInfo goes out at the next periodic run.
    pub(super) fn replicator_on_demand_update(
        &mut self,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) {
        let rate = self.allowed_rate_per_minute();
        if !self
            .replicator
            .limiter
            .acquire(REPLICATOR_BURST, rate, wall_ms)
        {
            return;
        }
        if self.replicator.stopping || self.replicator.dead {
            return;
        }
        out.arm(0, ClientTimer::ReplicatorOnDemand);
    }

    /// The on-demand task: cancel the pending periodic run, then run now (after the running task,
    /// on the single replicator thread).
    pub(super) fn replicator_on_demand(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) {
        let replicator = &mut self.replicator;
        if replicator.dead {
            return;
        }
        if replicator.busy.is_some() {
            replicator.queued += 1;
            return;
        }
        replicator.generation += 1;
        replicator.periodic_due = None;
        self.replicator_run(now, wall_ms, out);
    }

    /// `InstanceInfoReplicator#run`: `refreshInstanceInfo()`, register if dirty, then re-arm
    /// one interval later.
    #[inline]
    pub(super) fn replicator_run(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) {
        self.refresh_instance_info(wall_ms, out);
        if self.info.dirty {
            self.replicator.busy = Some(self.info.last_dirty);
            self.send_register(now, RegisterWhy::Replicator, out);
        } else {
            self.replicator_run_finished(now, wall_ms, out);
        }
    }

    #[inline]
    pub(super) fn replicator_run_finished(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) {
        let replicator = &mut self.replicator;
        replicator.busy = None;
        if replicator.stopping {
            // Re-arming is rejected after shutdown(); queued tasks still run.
            if replicator.queued > 0 {
                replicator.queued -= 1;
                self.replicator_run(now, wall_ms, out);
            } else if replicator.periodic_due.is_none() {
                replicator.dead = true;
                self.continue_shutdown(now, out);
            }
            return;
        }
        let interval = self.replication_interval_ms();
        self.replicator.generation += 1;
        self.arm_replicator(now, interval, out);
        let replicator = &mut self.replicator;
        if replicator.queued > 0 {
            replicator.queued -= 1;
            replicator.generation += 1;
            replicator.periodic_due = None;
            self.replicator_run(now, wall_ms, out);
        }
    }

    /// `DiscoveryClient#refreshInstanceInfo` with SCN's `EurekaHealthCheckHandler`
    /// (`eureka.client.healthcheck.enabled`, spring-cloud-netflix#3923).
    ///
    /// With the flag, SCN registers `EurekaHealthCheckHandler`, and every
    /// `InstanceInfoReplicator#run` starts here, setting the ApplicationInfoManager status to
    /// `healthCheckHandler.getStatus(current)`. SCN's handler ignores the current status and
    /// returns the aggregate of the application's health indicators
    /// (`EurekaHealthCheckHandler#getStatus` -> `getHealthStatus`), which stay UP while the
    /// context is alive. So on a graceful shutdown (Edgware and later) the replicator run that
    /// the DOWN triggers first turns the status back to UP and registers UP: the log
    /// shows DOWN at 29.573, `current=UP, previous=DOWN` on `DiscoveryInfoReplicator-0` at
    /// 29.574 and "Registered instance ... with status UP". Every later replicator run does the
    /// same until `DiscoveryClient#shutdown` stops the replicator; then only the DELETE removes
    /// the instance.
    ///
    /// Modelling assumptions: health is UP from the first UP (the web server is ready; a
    /// STARTING instance is left alone) until `DiscoveryClient#shutdown` begins (bean
    /// destruction; a run during the two-phase stop is not flipped); the process's own health
    /// never fails otherwise (the replicator runs only on a live process). Whether a later SCN
    /// release stops the handler during shutdown is not verified here.
    pub(super) fn refresh_instance_info(&mut self, wall_ms: u64, out: &mut impl ClientOutput) {
        if !self.config.healthcheck_enabled
            || self.shutdown != ShutdownPhase::Running
            || self.info.status == InstanceStatus::Starting
        {
            return;
        }
        self.set_instance_status(wall_ms, InstanceStatus::Up, out);
    }
}
