//! The world's handlers for `client` (the rules and their state live in `eureka::client`).

use std::rc::Rc;

use crate::eureka::client::{DiscoveryClient, InstanceInfo, REPLICATOR_BURST, ShutdownPhase};
use crate::eureka::client::{REPLICATOR_STOP_WAIT_MS, shuffle};
use crate::eureka::ids::ProcessId;
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::protocol::{Call, FetchWhy, Payload, RegisterWhy, Reply};
use crate::eureka::status::InstanceStatus;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    fn client(&mut self, p: ProcessId) -> &mut DiscoveryClient {
        &mut self.processes[p].client
    }

    /// The process starts: `InstanceInfoFactory` builds a STARTING InstanceInfo and the
    /// `DiscoveryClient` constructor runs its synchronous full fetch (FACTS.md §5.1).
    pub(super) fn on_client_create(&mut self, p: ProcessId) {
        let wall = self.wall_now();
        // A vanished host's attempts stop timing out (a new incarnation refuses).
        self.set_alive(p, true);
        self.observe(Observation::ClientCreated { process: p });
        let client = &mut self.processes[p].client;
        client.info = InstanceInfo {
            status: InstanceStatus::Starting,
            dirty: false,
            last_dirty: wall,
        };
        if client.config.fetch_registry {
            self.send(
                p,
                Call::FetchAll {
                    why: FetchWhy::Init,
                },
            );
        } else {
            self.client_constructed_fetch(p);
        }
    }

    /// After the constructor's fetch: the optional enforced register, then the scheduled tasks.
    fn client_constructed_fetch(&mut self, p: ProcessId) {
        let client = self.client(p);
        if client.config.register_with_eureka && client.config.should_enforce_registration_at_init {
            self.send_register(p, RegisterWhy::Init);
        } else {
            self.init_scheduled_tasks(p);
        }
    }

    /// `DiscoveryClient#initScheduledTasks`: cache refresh at +fetch interval, heartbeat at
    /// +renewal interval, replicator started (InstanceInfo marked dirty) at +initial delay, and
    /// the status-change listener. Then the context goes on to start the web server.
    fn init_scheduled_tasks(&mut self, p: ProcessId) {
        self.observe(Observation::ClientTasksStarted { process: p });
        let now = self.now();
        let wall = self.wall_now();
        let client = self.client(p);
        client.tasks_running = true;
        let fetch = client
            .config
            .fetch_registry
            .then(|| client.fetch_interval_ms());
        let mut replicator_due = None;
        let mut heartbeat = None;
        if client.config.register_with_eureka {
            heartbeat = Some(client.renewal_interval_ms());
            client.set_dirty(wall);
            let due = now + client.config.initial_instance_info_replication_interval_s * 1000;
            client.replicator.periodic_due = Some(due);
            replicator_due = Some(due);
            client.listener = client.config.on_demand_update_status_change;
        }
        let fetch_gen = client.fetch_generation;
        let heartbeat_gen = client.heartbeat_generation;
        let replicator_gen = client.replicator.generation;
        if let Some(delay) = fetch {
            self.queue.schedule_in(
                delay,
                Event::Fetch {
                    process: p,
                    generation: fetch_gen,
                },
            );
        }
        if let Some(delay) = heartbeat {
            self.queue.schedule_in(
                delay,
                Event::Heartbeat {
                    process: p,
                    generation: heartbeat_gen,
                },
            );
        }
        if let Some(due) = replicator_due {
            self.queue.schedule(
                due,
                Event::Replicator {
                    process: p,
                    generation: replicator_gen,
                },
            );
        }
        let sim = &self.scenario.simulation;
        let (least, spread) = (sim.context_start_ms, sim.context_start_spread_ms);
        let context_start = match self.processes[p].startup_ms {
            Some(startup) => startup,
            None => least + self.processes[p].client.rng.between(0, spread),
        };
        self.queue
            .schedule_in(context_start, Event::WebServerReady(p));
    }

    /// `EurekaAutoServiceRegistration#start` on `WebServerInitializedEvent`: the instance's status
    /// becomes UP (`eureka.instance.initial-status`), and the web server accepts requests.
    pub(super) fn on_web_server_ready(&mut self, p: ProcessId) {
        if !self.processes[p].alive() {
            return;
        }
        self.set_serving(p, true);
        self.set_instance_status(p, InstanceStatus::Up);
        if let ProcessKind::Caller { caller } = self.processes[p].kind {
            self.start_caller_traffic(caller);
        }
    }

    /// `ApplicationInfoManager#setInstanceStatus`: a change marks the InstanceInfo dirty and, if
    /// the listener is registered, asks the replicator for an on-demand update.
    pub(in crate::eureka) fn set_instance_status(&mut self, p: ProcessId, status: InstanceStatus) {
        let wall = self.wall_now();
        let client = self.client(p);
        if client.info.status == status {
            return;
        }
        client.info.status = status;
        client.set_dirty(wall);
        if client.listener {
            self.replicator_on_demand_update(p);
        }
    }

    /// `InstanceInfoReplicator#onDemandUpdate`: rate-limited (burst 2, FACTS.md §5.4); a refused
    /// update is dropped and the dirty InstanceInfo goes out at the next periodic run.
    fn replicator_on_demand_update(&mut self, p: ProcessId) {
        let wall = self.wall_now();
        let client = self.client(p);
        let rate = client.allowed_rate_per_minute();
        if !client
            .replicator
            .limiter
            .acquire(REPLICATOR_BURST, rate, wall)
        {
            return;
        }
        if client.replicator.stopping || client.replicator.dead {
            return;
        }
        self.queue
            .schedule_in(0, Event::ReplicatorOnDemand { process: p });
    }

    /// The on-demand task: cancel the pending periodic run, then run now (after the running task,
    /// on the single replicator thread).
    pub(super) fn on_replicator_on_demand(&mut self, p: ProcessId) {
        if !self.processes[p].alive() {
            return;
        }
        let replicator = &mut self.client(p).replicator;
        if replicator.dead {
            return;
        }
        if replicator.busy.is_some() {
            replicator.queued += 1;
            return;
        }
        replicator.generation += 1;
        replicator.periodic_due = None;
        self.replicator_run(p);
    }

    pub(super) fn on_replicator_periodic(&mut self, p: ProcessId, generation: u32) {
        let client = self.client(p);
        if client.replicator.generation != generation || client.replicator.dead {
            return;
        }
        client.replicator.periodic_due = None;
        if !self.processes[p].alive() {
            return;
        }
        self.replicator_run(p);
    }

    /// `DiscoveryClient#register`: POST the client's current InstanceInfo.
    fn send_register(&mut self, p: ProcessId, why: RegisterWhy) {
        let info = self.processes[p].client.registrant();
        self.send(p, Call::Register { info, why });
    }

    /// `InstanceInfoReplicator#run`: `refreshInstanceInfo()`, register if dirty, then re-arm
    /// one interval later.
    fn replicator_run(&mut self, p: ProcessId) {
        self.refresh_instance_info(p);
        let client = self.client(p);
        if client.info.dirty {
            let stamp = client.info.last_dirty;
            client.replicator.busy = Some(stamp);
            self.send_register(p, RegisterWhy::Replicator);
        } else {
            self.replicator_run_finished(p);
        }
    }

    fn replicator_run_finished(&mut self, p: ProcessId) {
        let now = self.now();
        let client = self.client(p);
        let replicator = &mut client.replicator;
        replicator.busy = None;
        if replicator.stopping {
            // Re-arming is rejected after shutdown(); queued tasks still run.
            if replicator.queued > 0 {
                replicator.queued -= 1;
                self.replicator_run(p);
            } else if replicator.periodic_due.is_none() {
                replicator.dead = true;
                self.continue_client_shutdown(p);
            }
            return;
        }
        let due = now + client.replication_interval_ms();
        let replicator = &mut client.replicator;
        replicator.generation += 1;
        replicator.periodic_due = Some(due);
        let generation = replicator.generation;
        self.queue.schedule(
            due,
            Event::Replicator {
                process: p,
                generation,
            },
        );
        let replicator = &mut self.client(p).replicator;
        if replicator.queued > 0 {
            replicator.queued -= 1;
            replicator.generation += 1;
            replicator.periodic_due = None;
            self.replicator_run(p);
        }
    }

    /// The heartbeat task (`DiscoveryClient#renew`).
    pub(super) fn on_heartbeat(&mut self, p: ProcessId, generation: u32) {
        let client = &self.processes[p].client;
        if !self.processes[p].alive()
            || !client.tasks_running
            || client.heartbeat_generation != generation
        {
            return;
        }
        let last_dirty = client.info.last_dirty;
        self.send(p, Call::Renew { last_dirty });
    }

    fn schedule_heartbeat(&mut self, p: ProcessId) {
        let client = self.client(p);
        client.heartbeat_generation += 1;
        let generation = client.heartbeat_generation;
        let delay = client.renewal_interval_ms();
        self.queue.schedule_in(
            delay,
            Event::Heartbeat {
                process: p,
                generation,
            },
        );
    }

    /// The cache-refresh task (`DiscoveryClient#refreshRegistry` -> `#fetchRegistry`: a delta or
    /// a full fetch, see `delta.rs`).
    pub(super) fn on_fetch_timer(&mut self, p: ProcessId, generation: u32) {
        let client = &self.processes[p].client;
        if !self.processes[p].alive()
            || !client.tasks_running
            || client.fetch_generation != generation
        {
            return;
        }
        self.fetch_registry(p);
    }

    pub(super) fn schedule_fetch(&mut self, p: ProcessId) {
        let client = self.client(p);
        client.fetch_generation += 1;
        let generation = client.fetch_generation;
        let delay = client.fetch_interval_ms();
        self.queue.schedule_in(
            delay,
            Event::Fetch {
                process: p,
                generation,
            },
        );
    }

    pub(super) fn on_client_reply(&mut self, p: ProcessId, reply: Reply) {
        match reply {
            Reply::Fetched { why, payload } => match why {
                FetchWhy::Init => {
                    self.apply_fetch(p, payload);
                    self.client_constructed_fetch(p);
                }
                FetchWhy::Periodic | FetchWhy::Reconcile => {
                    if self.processes[p].client.tasks_running {
                        self.apply_fetch(p, payload);
                        self.schedule_fetch(p);
                    }
                }
            },
            Reply::Delta { payload } => self.on_delta_fetched(p, &payload),
            Reply::DeltaForbidden => self.on_delta_forbidden(p),
            Reply::Registered { why } => match why {
                RegisterWhy::Init => self.init_scheduled_tasks(p),
                RegisterWhy::Replicator => {
                    let client = self.client(p);
                    if client.replicator.dead {
                        return;
                    }
                    if let Some(stamp) = client.replicator.busy {
                        client.unset_dirty(stamp);
                    }
                    self.replicator_run_finished(p);
                }
                RegisterWhy::HeartbeatReRegister => {
                    let client = self.client(p);
                    if !client.tasks_running {
                        return;
                    }
                    if let Some(stamp) = client.heartbeat_reregister.take() {
                        client.unset_dirty(stamp);
                    }
                    self.schedule_heartbeat(p);
                }
            },
            Reply::Renewed { found } => {
                if !self.processes[p].client.tasks_running {
                    return;
                }
                if found {
                    self.schedule_heartbeat(p);
                } else {
                    // 404: setIsDirtyWithTime(), register(), unsetIsDirty(ts) on success.
                    let wall = self.wall_now();
                    let client = self.client(p);
                    let stamp = client.set_dirty(wall);
                    client.heartbeat_reregister = Some(stamp);
                    self.send_register(p, RegisterWhy::HeartbeatReRegister);
                }
            }
            Reply::Cancelled => {
                if self.processes[p].client.shutdown == ShutdownPhase::Unregistering {
                    self.client(p).shutdown = ShutdownPhase::Done;
                    self.on_client_shutdown_done(p);
                }
            }
            Reply::StatusPut | Reply::StatusDeleted => self.on_status_call_done(p),
        }
    }

    /// Stores a fetched registry: the client keeps every status but hands out only UP instances
    /// (`filter-only-up-instances`), reshuffled after every fetch (FACTS.md §5.5).
    fn apply_fetch(&mut self, p: ProcessId, payload: Rc<Payload>) {
        let client = self.client(p);
        let previous = client.cache.replace(Rc::clone(&payload));
        let changed = previous.as_ref().map(|old| old.version) != Some(payload.version);
        self.shuffle_up_lists(p);
        self.observe(Observation::Fetched {
            observer: p,
            changed,
            delta: false,
        });
        if changed {
            for q in 0..payload.statuses.len() {
                let was = previous.as_ref().is_some_and(|old| old.is_up(q));
                let is = payload.is_up(q);
                if was != is {
                    self.observe(Observation::ClientCache {
                        observer: p,
                        process: q,
                        up: is,
                    });
                }
            }
        }
    }

    /// `Applications#shuffleInstances(filterOnlyUp)` after every fetch, full or delta: rebuilds
    /// the per-application lists callers read from the local registry, with only UP instances
    /// when `filter-only-up-instances` (default true), else with every instance the registry
    /// holds, whatever its status (`Application#_shuffleAndStoreInstances`; FACTS.md §5.5,
    /// §14). Ribbon filters UP again itself (`update_server_list`); Spring Cloud LoadBalancer
    /// does not (`EurekaDiscoveryClient#getInstances`).
    pub(super) fn shuffle_up_lists(&mut self, p: ProcessId) {
        let called = self.called_applications(p);
        let client = self.client(p);
        let Some(payload) = client.cache.clone() else {
            return;
        };
        let only_up = client.config.filter_only_up_instances;
        let mut lists = std::mem::take(&mut client.up_lists);
        lists.clear();
        for application in called {
            let mut list: Vec<ProcessId> = Vec::new();
            for (q, status) in payload.statuses.iter().enumerate() {
                let listed = match status {
                    Some(s) => !only_up || *s == InstanceStatus::Up,
                    None => false,
                };
                if listed && self.processes[q].application == application {
                    list.push(q);
                }
            }
            let client = &mut self.processes[p].client;
            shuffle(&mut list, &mut client.rng);
            lists.push((application, list));
        }
        self.processes[p].client.up_lists = lists;
        self.after_client_lists_changed(p);
    }

    /// Applications whose instances process `p` routes to.
    fn called_applications(&self, p: ProcessId) -> Vec<usize> {
        match self.processes[p].kind {
            ProcessKind::Caller { caller } => self.scenario.callers[caller]
                .calls
                .iter()
                .map(|target| target.app)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `DiscoveryClient#shutdown` (FACTS.md §5.6): remove the listener, stop the replicator
    /// (two-phase from 1.8.7), stop the heartbeat and fetch executors, then DELETE if registered.
    /// Idempotent: a second call completes at once.
    pub(super) fn client_shutdown(&mut self, p: ProcessId) {
        if self.processes[p].client.shutdown != ShutdownPhase::Running {
            if self.processes[p].client.shutdown == ShutdownPhase::Done {
                self.on_client_shutdown_done(p);
            }
            return;
        }
        let now = self.now();
        let two_phase = self.scenario.simulation.release.replicator_two_phase_stop();
        let client = self.client(p);
        client.listener = false;
        client.shutdown = ShutdownPhase::StoppingReplicator;
        let replicator = &mut client.replicator;
        if !two_phase || replicator.dead {
            replicator.dead = true;
            replicator.generation += 1;
            self.continue_client_shutdown(p);
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
                self.continue_client_shutdown(p);
            }
            Some(due) if idle && due > deadline => {
                replicator.periodic_due = None;
                let generation = replicator.generation;
                self.queue.schedule(
                    deadline,
                    Event::ReplicatorStopDeadline {
                        process: p,
                        generation,
                    },
                );
            }
            _ => {
                let generation = replicator.generation;
                self.queue.schedule(
                    deadline,
                    Event::ReplicatorStopDeadline {
                        process: p,
                        generation,
                    },
                );
            }
        }
    }

    /// `awaitTermination` timed out: `shutdownNow()`.
    pub(super) fn on_replicator_stop_deadline(&mut self, p: ProcessId, _generation: u32) {
        let replicator = &mut self.client(p).replicator;
        if replicator.dead {
            return;
        }
        replicator.dead = true;
        replicator.generation += 1;
        replicator.periodic_due = None;
        self.continue_client_shutdown(p);
    }

    /// After the replicator stopped: cancel the other tasks and unregister.
    fn continue_client_shutdown(&mut self, p: ProcessId) {
        let release = self.scenario.simulation.release;
        let client = self.client(p);
        if client.shutdown != ShutdownPhase::StoppingReplicator {
            return;
        }
        client.tasks_running = false;
        client.heartbeat_generation += 1;
        client.fetch_generation += 1;
        let unregister = client.config.register_with_eureka
            && (!release.has_unregister_on_shutdown_flag()
                || client.config.should_unregister_on_shutdown);
        if unregister {
            // setInstanceStatus(DOWN) with the listener already removed: nothing is sent for it.
            client.info.status = InstanceStatus::Down;
            client.shutdown = ShutdownPhase::Unregistering;
            self.send(p, Call::Cancel);
        } else {
            client.shutdown = ShutdownPhase::Done;
            self.on_client_shutdown_done(p);
        }
    }

    /// The process dies at once (kill -9, or the end of a graceful exit): nothing more is sent,
    /// replies are dropped, timers are void.
    pub(super) fn kill_process(&mut self, p: ProcessId) {
        // On a vanished host, attempts time out from now on instead of being refused.
        self.set_alive(p, false);
        let process = &mut self.processes[p];
        process.client.tasks_running = false;
        process.client.listener = false;
        process.client.replicator.dead = true;
        if process.serving() {
            self.stop_serving_abruptly(p);
        } else {
            self.cut_graceful_phase(p);
        }
        self.on_process_exit(p);
    }

    /// The web server stops accepting requests.
    pub(super) fn stop_serving(&mut self, p: ProcessId) {
        if self.processes[p].serving() {
            self.set_serving(p, false);
            self.observe(Observation::StoppedServing { process: p });
        }
    }
}
