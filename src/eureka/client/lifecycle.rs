//! The client's lifecycle: creation, the scheduled tasks, status changes, shutdown (FACTS.md §5.1, §7).

use super::*;

/// The lifecycle: creation, the scheduled tasks, status changes, shutdown.
impl DiscoveryClient {
    /// The process starts: `InstanceInfoFactory` builds a STARTING InstanceInfo and the
    /// `DiscoveryClient` constructor runs its synchronous full fetch (FACTS.md §5.1).
    pub fn create(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        context_start: ContextStart,
        out: &mut impl ClientOutput,
    ) {
        out.observe(Observation::ClientCreated { process: self.id });
        self.info = InstanceInfo {
            status: InstanceStatus::Starting,
            dirty: false,
            last_dirty: wall_ms,
        };
        self.context_start = context_start;
        if self.config.fetch_registry {
            let call = Call::FetchAll {
                why: FetchWhy::Init,
            };
            self.send(now, call, out);
        } else {
            self.constructed_fetch(now, wall_ms, out);
        }
    }

    /// `simulation.start = "steady"`: the process has run for a long time. Its InstanceInfo is
    /// UP and clean (registered long ago), its tasks run, its web server is up, and each of its
    /// three periodic tasks (heartbeat, cache refresh, replicator) is at an independent uniform
    /// phase in `(0, interval]` drawn from its own stream (their fixed delays, counted from the
    /// end of each run, drift apart with request times). Returns what the server holds for it
    /// and when its next renew is due, if it registers. [`DiscoveryClient::restore_cache`] then
    /// gives it the registry its last fetch read.
    pub fn start_steady(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) -> Option<SteadyLease> {
        out.observe(Observation::ClientCreated { process: self.id });
        out.observe(Observation::ClientTasksStarted { process: self.id });
        self.info = InstanceInfo {
            status: InstanceStatus::Up,
            dirty: false,
            last_dirty: wall_ms.saturating_sub(1),
        };
        self.tasks_running = true;
        if !self.config.register_with_eureka {
            return None;
        }
        self.listener = self.config.on_demand_update_status_change;
        let renew_interval = self.config.lease_renewal_interval_s * 1000;
        let next_renew = self.rng.phase(renew_interval);
        self.heartbeat.arm_in(next_renew, out);
        let replication = self.replication_interval_ms();
        let next_replication = self.rng.phase(replication);
        self.arm_replicator(now, next_replication, out);
        Some(SteadyLease {
            registrant: self.registrant(),
            next_renew_ms: next_renew,
            interval_ms: renew_interval,
        })
    }

    /// Steady start: the local registry is `payload` (what the server serves; nothing changed
    /// since the last fetch), and the next fetch comes at a uniform phase of the interval.
    pub fn restore_cache(
        &mut self,
        payload: Rc<Payload>,
        applications: &[usize],
        out: &mut impl ClientOutput,
    ) {
        if !self.config.fetch_registry {
            return;
        }
        // The world restores it from its query server's payload: the query stack's sticky
        // server with a transport (`start_steady_transport`), else its one server.
        let server = self
            .transport
            .as_ref()
            .and_then(|t| t.sticky(Stack::Query))
            .unwrap_or(self.server);
        let interval = self.config.registry_fetch_interval_s * 1000;
        if self.fetches_left_out {
            // It holds what it read, and tells no one: the news of 10 000 instances UP in each
            // of 10 000 caches was 80 % of a 20-minute trial of the production fleet (issue
            // 12). It calls nothing, so the shuffle would draw nothing.
            self.cache = Some(payload);
            self.rng.phase(interval);
            return;
        }
        self.apply_fetch(server, payload, applications, out);
        let next = self.rng.phase(interval);
        self.cache_refresh.arm_in(next, out);
    }

    /// After the constructor's fetch: the optional enforced register, then the scheduled tasks.
    pub(super) fn constructed_fetch(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) {
        if self.config.register_with_eureka && self.config.should_enforce_registration_at_init {
            self.send_register(now, RegisterWhy::Init, out);
        } else {
            self.init_scheduled_tasks(now, wall_ms, out);
        }
    }

    /// `DiscoveryClient#initScheduledTasks`: cache refresh at +fetch interval, heartbeat at
    /// +renewal interval, replicator started (InstanceInfo marked dirty) at +initial delay, and
    /// the status-change listener. Then the context goes on to start the web server.
    pub(super) fn init_scheduled_tasks(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        out: &mut impl ClientOutput,
    ) {
        out.observe(Observation::ClientTasksStarted { process: self.id });
        self.tasks_running = true;
        let mut replicator_delay = None;
        if self.config.register_with_eureka {
            self.set_dirty(wall_ms);
            let delay = self.config.initial_instance_info_replication_interval_s * 1000;
            self.replicator.periodic_due = Some(now + delay);
            replicator_delay = Some(delay);
            self.listener = self.config.on_demand_update_status_change;
        }
        if self.config.fetch_registry {
            self.cache_refresh.arm(out);
        }
        if self.config.register_with_eureka {
            self.heartbeat.arm(out);
        }
        if let Some(delay) = replicator_delay {
            self.arm_replicator(now, delay, out);
        }
        let context_start = match self.context_start {
            ContextStart::Fixed(ms) => ms,
            ContextStart::Drawn {
                least_ms,
                spread_ms,
            } => least_ms + self.rng.between(0, spread_ms),
        };
        out.start_web_server(context_start);
    }

    /// `ApplicationInfoManager#setInstanceStatus`: a change marks the InstanceInfo dirty and, if
    /// the listener is registered, asks the replicator for an on-demand update.
    pub fn set_instance_status(
        &mut self,
        wall_ms: u64,
        status: InstanceStatus,
        out: &mut impl ClientOutput,
    ) {
        if self.info.status == status {
            return;
        }
        self.info.status = status;
        self.set_dirty(wall_ms);
        if self.listener {
            self.replicator_on_demand_update(wall_ms, out);
        }
    }

    /// One of the client's timers fired (on a live process: a dead one's timers are void).
    #[inline]
    pub fn on_timer(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        timer: ClientTimer,
        out: &mut impl ClientOutput,
    ) {
        match timer {
            ClientTimer::Task { task, generation } => {
                let supervised = match task {
                    Task::Heartbeat => &self.heartbeat,
                    Task::CacheRefresh => &self.cache_refresh,
                };
                if !self.tasks_running || !supervised.armed_with(generation) {
                    return;
                }
                let supervised = self.transport.is_some();
                if supervised && self.task_mut(task).saturated() {
                    out.observe(Observation::TaskRejected {
                        observer: self.id,
                        task: task.name(),
                    });
                    return self.task_mut(task).arm(out);
                }
                match task {
                    // `DiscoveryClient#renew`.
                    Task::Heartbeat => {
                        let last_dirty = self.info.last_dirty;
                        self.send(now, Call::Renew { last_dirty }, out);
                    }
                    Task::CacheRefresh => self.fetch_registry(now, out),
                }
                if supervised {
                    let (seq, fetched) = (self.last_seq, self.fetch_generation);
                    let arm_timeout = self.arms_task_timeouts;
                    self.task_mut(task).begin(seq, fetched, arm_timeout, out);
                }
            }
            ClientTimer::TaskTimeout { task, generation } => {
                if !self.tasks_running || !self.task_mut(task).armed_with(generation) {
                    return;
                }
                let supervised = self.task_mut(task);
                supervised.timed_out(out);
                let next_in_ms = supervised.delay_ms;
                out.observe(Observation::TaskTimedOut {
                    observer: self.id,
                    task: task.name(),
                    next_in_ms,
                });
            }
            ClientTimer::Replicator { generation } => {
                if self.replicator.generation != generation || self.replicator.dead {
                    return;
                }
                self.replicator.periodic_due = None;
                self.replicator_run(now, wall_ms, out);
            }
            ClientTimer::ReplicatorOnDemand => self.replicator_on_demand(now, wall_ms, out),
            ClientTimer::ReplicatorStopDeadline => self.replicator_stop_deadline(now, out),
        }
    }

    /// A reply from the server (to this incarnation, on a live process) to call `seq`. With a
    /// transport, a failed attempt is tried again on the next server, and a call that failed
    /// on every attempt is handled as failed ([`DiscoveryClient::on_call_failed`]).
    #[inline]
    pub fn on_reply(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        seq: u32,
        reply: Reply,
        applications: &[usize],
        out: &mut impl ClientOutput,
    ) {
        // The server that answered (on the fetch observations).
        let from = if let Some(transport) = self.transport.as_mut() {
            if let Reply::Unreachable { server, why } = reply {
                out.observe(Observation::AttemptFailed {
                    observer: self.id,
                    server,
                    why,
                });
            }
            match transport.on_reply(now, seq, &reply) {
                Delivery::Answered(server) => server,
                Delivery::Retry(server, call, next) => {
                    // The same call on the next server: the body waits on.
                    let generation_of =
                        |t: &SupervisedTask| t.body(seq).map(|b| b.fetch_generation);
                    for task in [Task::Heartbeat, Task::CacheRefresh] {
                        if let Some(g) = generation_of(self.task_mut(task)) {
                            self.task_mut(task).goes_on(seq, next, g);
                        }
                    }
                    return out.send(server, next, call);
                }
                Delivery::Failed(call) => {
                    return self.on_call_failed(now, wall_ms, seq, call, out);
                }
                Delivery::Stale => return,
            }
        } else if let Reply::Forbidden { why } = reply {
            // One server: the 403 fails the fetch (`RetryableEurekaHttpClient` does not accept
            // it and has no other server to try).
            let call = Call::FetchAll { why };
            return self.on_call_failed(now, wall_ms, seq, call, out);
        } else if matches!(reply, Reply::Unreachable { .. }) {
            // One server and no transport: the world sends a refusal only with a transport.
            return;
        } else {
            self.server
        };
        match reply {
            Reply::Fetched { why, payload } => match why {
                FetchWhy::Init => {
                    self.apply_fetch(from, payload, applications, out);
                    self.constructed_fetch(now, wall_ms, out);
                }
                FetchWhy::Periodic | FetchWhy::Reconcile => {
                    if self.tasks_running {
                        if self.fetch_stores(seq) {
                            self.apply_fetch(from, payload, applications, out);
                        }
                        self.run_ended(Task::CacheRefresh, seq, out);
                    }
                }
            },
            Reply::Delta { payload } => {
                self.on_delta_fetched(now, (from, seq), &payload, applications, out)
            }
            Reply::DeltaForbidden => self.on_delta_forbidden(now, seq, out),
            Reply::Registered { why } => match why {
                RegisterWhy::Init => self.init_scheduled_tasks(now, wall_ms, out),
                RegisterWhy::Replicator => {
                    if self.replicator.dead {
                        return;
                    }
                    if let Some(stamp) = self.replicator.busy {
                        self.unset_dirty(stamp);
                    }
                    self.replicator_run_finished(now, wall_ms, out);
                }
                RegisterWhy::HeartbeatReRegister => {
                    if !self.tasks_running {
                        return;
                    }
                    if let Some(stamp) = self.heartbeat_reregister.take() {
                        self.unset_dirty(stamp);
                    }
                    self.run_ended(Task::Heartbeat, seq, out);
                }
            },
            Reply::Renewed { found } => {
                if !self.tasks_running {
                    return;
                }
                if found {
                    self.run_ended(Task::Heartbeat, seq, out);
                } else {
                    // 404: setIsDirtyWithTime(), register(), unsetIsDirty(ts) on success.
                    let stamp = self.set_dirty(wall_ms);
                    self.heartbeat_reregister = Some(stamp);
                    self.send_register(now, RegisterWhy::HeartbeatReRegister, out);
                    self.run_goes_on(Task::Heartbeat, seq);
                }
            }
            Reply::Cancelled => {
                if self.shutdown == ShutdownPhase::Unregistering {
                    self.shutdown = ShutdownPhase::Done;
                    out.shutdown_done();
                }
            }
            Reply::StatusPut | Reply::StatusDeleted => out.status_call_done(),
            Reply::Unreachable { .. } | Reply::Forbidden { .. } => {}
        }
    }

    /// A call failed on every attempt (`TransportException`), and how each caller goes on:
    /// `DiscoveryClient#renew` returns false (no re-register) and the heartbeat re-arms; a
    /// fetch keeps the local registry and the refresh re-arms (the constructor's goes on
    /// without it); a register leaves the InstanceInfo dirty for the replicator's next run;
    /// the unregister and the status calls are best effort.
    pub(super) fn on_call_failed(
        &mut self,
        now: SimTime,
        wall_ms: u64,
        seq: u32,
        call: Call,
        out: &mut impl ClientOutput,
    ) {
        out.observe(Observation::CallFailed {
            observer: self.id,
            call: call.name(),
        });
        match call {
            Call::Renew { .. } => {
                if self.tasks_running {
                    self.run_ended(Task::Heartbeat, seq, out);
                }
            }
            Call::FetchAll {
                why: FetchWhy::Init,
            } => self.constructed_fetch(now, wall_ms, out),
            Call::FetchAll { .. } | Call::FetchDelta => {
                if self.tasks_running {
                    self.run_ended(Task::CacheRefresh, seq, out);
                }
            }
            Call::Register { why, .. } => match why {
                RegisterWhy::Init => self.init_scheduled_tasks(now, wall_ms, out),
                RegisterWhy::Replicator => {
                    if !self.replicator.dead {
                        self.replicator_run_finished(now, wall_ms, out);
                    }
                }
                RegisterWhy::HeartbeatReRegister => {
                    if self.tasks_running {
                        self.heartbeat_reregister = None;
                        self.run_ended(Task::Heartbeat, seq, out);
                    }
                }
            },
            Call::Cancel => {
                if self.shutdown == ShutdownPhase::Unregistering {
                    self.shutdown = ShutdownPhase::Done;
                    out.shutdown_done();
                }
            }
            Call::PutStatus { .. } | Call::DeleteStatus => out.status_call_done(),
        }
    }

    /// `DiscoveryClient#shutdown` (FACTS.md §5.6): remove the listener, stop the replicator
    /// (two-phase from 1.8.7), stop the heartbeat and fetch executors, then DELETE if registered.
    /// Idempotent: a second call completes at once.
    pub fn shutdown(&mut self, now: SimTime, out: &mut impl ClientOutput) {
        if self.shutdown != ShutdownPhase::Running {
            if self.shutdown == ShutdownPhase::Done {
                out.shutdown_done();
            }
            return;
        }
        let two_phase = self.release.replicator_two_phase_stop();
        self.catch_up_deferred_replicator(now);
        self.listener = false;
        self.shutdown = ShutdownPhase::StoppingReplicator;
        let replicator = &mut self.replicator;
        if !two_phase || replicator.dead {
            replicator.dead = true;
            replicator.generation += 1;
            self.continue_shutdown(now, out);
            return;
        }
        // shutdown(): the running task and queued tasks finish; a delayed periodic task still runs
        // if due before awaitTermination(3 s) gives up and calls shutdownNow().
        replicator.stopping = true;
        let deadline = now + REPLICATOR_STOP_WAIT_MS;
        let idle = replicator.busy.is_none() && replicator.queued == 0;
        match replicator.periodic_due {
            None if idle => {
                replicator.dead = true;
                self.continue_shutdown(now, out);
            }
            Some(due) if idle && due > deadline => {
                replicator.periodic_due = None;
                out.arm(REPLICATOR_STOP_WAIT_MS, ClientTimer::ReplicatorStopDeadline);
            }
            _ => out.arm(REPLICATOR_STOP_WAIT_MS, ClientTimer::ReplicatorStopDeadline),
        }
    }

    /// The process dies at once: nothing more is sent, timers are void.
    pub fn kill(&mut self) {
        // A renew reply still on its way would reach a dead process (the world carried out
        // those that arrived: `World::kill_process`).
        self.pending_renew = None;
        self.tasks_running = false;
        self.listener = false;
        self.replicator.dead = true;
    }

    /// `awaitTermination` timed out: `shutdownNow()`.
    pub(super) fn replicator_stop_deadline(&mut self, now: SimTime, out: &mut impl ClientOutput) {
        let replicator = &mut self.replicator;
        if replicator.dead {
            return;
        }
        replicator.dead = true;
        replicator.generation += 1;
        replicator.periodic_due = None;
        self.continue_shutdown(now, out);
    }

    /// After the replicator stopped: cancel the other tasks and unregister.
    pub(super) fn continue_shutdown(&mut self, now: SimTime, out: &mut impl ClientOutput) {
        if self.shutdown != ShutdownPhase::StoppingReplicator {
            return;
        }
        self.tasks_running = false;
        self.heartbeat.cancel();
        self.cache_refresh.cancel();
        let unregister = self.config.register_with_eureka
            && (!self.release.has_unregister_on_shutdown_flag()
                || self.config.should_unregister_on_shutdown);
        if unregister {
            // setInstanceStatus(DOWN) with the listener already removed: nothing is sent for it.
            self.info.status = InstanceStatus::Down;
            self.shutdown = ShutdownPhase::Unregistering;
            self.send(now, Call::Cancel, out);
        } else {
            self.shutdown = ShutdownPhase::Done;
            out.shutdown_done();
        }
    }
}
