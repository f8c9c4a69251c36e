//! The Eureka client of one process (`com.netflix.discovery.DiscoveryClient`, FACTS.md §5).
//!
//! Its three tasks are fixed-delay: the heartbeat and the cache refresh re-arm themselves one
//! interval after the previous run ENDED (when its reply arrived; `TimedSupervisorTask`), and the
//! `InstanceInfoReplicator` one interval after its run ended. Request time therefore makes every
//! phase drift later, as in production.
//!
//! The client never sees the world: it is told the time and what happened (its creation, a
//! timer, a reply, a status change, the shutdown) and says what must happen next through
//! [`ClientOutput`]: calls to send, timers to arm, observations, and the few things only the
//! world can do (start the web server, let the balancers read the new lists, go on with the
//! shutdown). The world collects them into a `Vec<ClientEffect>` and carries them out in order
//! once the call returns (some of them need the whole world, which the client is part of).

mod fetch;
mod lifecycle;
mod replicator;
mod task;
use task::SupervisedTask;

use std::rc::Rc;

use crate::engine::{RngStream, SimTime};
use crate::scenario::{ClientConfig, Release};

use super::delta::{LOCAL_VERSION, apply_delta, delta_changes};
use super::ids::{ProcessId, ServerId};
use super::observe::{HashPair, Observation};
use super::protocol::{Call, DeltaPayload, FetchWhy, Payload, ReconcileHash};
use super::protocol::{RegisterWhy, Registrant, Reply};
use super::rate_limiter::RateLimiter;
use super::status::InstanceStatus;
use super::transport::{ClientTransport, Delivery, Stack, TransportStreams};

/// `InstanceInfoReplicator`'s burst size (hard-coded 2 in `DiscoveryClient#initScheduledTasks`).
pub const REPLICATOR_BURST: u64 = 2;

/// `InstanceInfoReplicator#stop` waits this long for running and due tasks (Eureka >= 1.8.7).
pub const REPLICATOR_STOP_WAIT_MS: u64 = 3_000;

/// The two tasks `DiscoveryClient#initScheduledTasks` hands to a [`SupervisedTask`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `HeartbeatThread` (`DiscoveryClient#renew`).
    Heartbeat,
    /// `CacheRefreshThread` (`DiscoveryClient#refreshRegistry`).
    CacheRefresh,
}

impl Task {
    /// Its executor's name in the logs.
    pub fn name(self) -> &'static str {
        match self {
            Task::Heartbeat => "heartbeat",
            Task::CacheRefresh => "cache refresh",
        }
    }
}

/// A client timer, with the generation it was armed with where a later arm or a cancel can make
/// it stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientTimer {
    Task {
        task: Task,
        generation: u32,
    },
    /// The replicator's periodic run.
    Replicator {
        generation: u32,
    },
    /// An on-demand update submitted to the replicator's thread.
    ReplicatorOnDemand,
    /// `InstanceInfoReplicator#stop`'s `awaitTermination` gives up.
    ReplicatorStopDeadline,
    /// `TimedSupervisorTask#run`'s `future.get(timeoutMillis)` gives up on the run armed
    /// with `generation` (with a transport only).
    TaskTimeout {
        task: Task,
        generation: u32,
    },
}

/// How long the Spring context takes from the client's scheduled tasks to a ready web server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextStart {
    /// A `[[deploy]]`'s `startup-s`.
    Fixed(u64),
    /// `simulation.context-start-ms` plus `U[0, spread]` from the client's own stream.
    Drawn { least_ms: u64, spread_ms: u64 },
}

/// Where a client transition puts what it asks of the world, in the order it asks.
pub trait ClientOutput {
    /// Report this observation now.
    fn observe(&mut self, observation: Observation);
    /// Send this REST call to `server`; its reply comes back with `seq`.
    fn send(&mut self, server: ServerId, seq: u32, call: Call);
    /// Arm this timer to fire `delay_ms` from now.
    fn arm(&mut self, delay_ms: u64, timer: ClientTimer);
    /// The context goes on to start the web server, ready `delay_ms` from now.
    fn start_web_server(&mut self, delay_ms: u64);
    /// The local registry was (re)read: the balancers that follow the client's lists read them.
    fn lists_changed(&mut self);
    /// `DiscoveryClient#shutdown` has finished.
    fn shutdown_done(&mut self);
    /// A status PUT or DELETE (the service-registry strategy) was answered.
    fn status_call_done(&mut self);
}

/// A client's request of the world, as data.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEffect {
    Observe(Observation),
    Send {
        server: ServerId,
        seq: u32,
        call: Call,
    },
    Arm {
        delay_ms: u64,
        timer: ClientTimer,
    },
    StartWebServer {
        delay_ms: u64,
    },
    ListsChanged,
    ShutdownDone,
    StatusCallDone,
}

impl ClientOutput for Vec<ClientEffect> {
    fn observe(&mut self, observation: Observation) {
        self.push(ClientEffect::Observe(observation));
    }

    fn send(&mut self, server: ServerId, seq: u32, call: Call) {
        self.push(ClientEffect::Send { server, seq, call });
    }

    fn arm(&mut self, delay_ms: u64, timer: ClientTimer) {
        self.push(ClientEffect::Arm { delay_ms, timer });
    }

    fn start_web_server(&mut self, delay_ms: u64) {
        self.push(ClientEffect::StartWebServer { delay_ms });
    }

    fn lists_changed(&mut self) {
        self.push(ClientEffect::ListsChanged);
    }

    fn shutdown_done(&mut self) {
        self.push(ClientEffect::ShutdownDone);
    }

    fn status_call_done(&mut self) {
        self.push(ClientEffect::StatusCallDone);
    }
}

/// A found renew's reply (200), handled when the server answers instead of as an event when
/// it arrives ([`DiscoveryClient::renew_answered_ahead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenewAnswered {
    /// The renew's call.
    pub seq: u32,
    /// From now until the reply arrives.
    pub delay_ms: u64,
    /// When it arrives.
    pub at: SimTime,
    /// Its place in the queue's order (`EventQueue::reserve`): it is carried out before the
    /// first call into the client from an event ordered after it.
    pub key: u64,
}

/// Steady start: what the server holds for a client that registered long ago.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyLease {
    pub registrant: Registrant,
    /// When its next heartbeat is due (ms from now, in `(0, interval]`).
    pub next_renew_ms: u64,
    pub interval_ms: u64,
}

/// The client's own `InstanceInfo`.
#[derive(Debug, Clone, Copy)]
struct InstanceInfo {
    status: InstanceStatus,
    dirty: bool,
    last_dirty: u64,
}

/// The replicator's single-thread scheduler.
#[derive(Debug, Default)]
struct Replicator {
    limiter: RateLimiter,
    /// A register is in flight on the replicator thread, with the dirty stamp it captured.
    busy: Option<u64>,
    /// On-demand tasks submitted while busy; they run after the current one.
    queued: u32,
    /// When the pending periodic run is due, if one is scheduled.
    periodic_due: Option<SimTime>,
    /// The periodic run due at `periodic_due` is not armed: while the replicator is idle its
    /// runs change nothing but the next one's due time ([`DiscoveryClient::defer_idle_replicator`]).
    deferred: bool,
    generation: u32,
    /// `shutdown()` was called: no new periodic runs; terminated when idle.
    stopping: bool,
    /// The executor is gone (terminated or `shutdownNow`).
    dead: bool,
}

/// Where `DiscoveryClient#shutdown` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShutdownPhase {
    Running,
    /// Waiting for the replicator to stop (two-phase stop).
    StoppingReplicator,
    /// The unregister DELETE is in flight.
    Unregistering,
    Done,
}

#[derive(Debug)]
pub struct DiscoveryClient {
    /// The process this client runs in (for its observations).
    id: ProcessId,
    /// Shared by every process started from the same configuration (an app's instances), so a
    /// fleet holds one copy per `[[app]]`, not one per instance (344 bytes a client).
    config: Rc<ClientConfig>,
    /// Which Eureka and Spring Cloud versions decide its shutdown.
    release: Release,
    info: InstanceInfo,
    /// Bumped when the process restarts; replies to an earlier incarnation are dropped.
    incarnation: u32,
    /// The status-change listener is registered.
    listener: bool,
    /// The heartbeat and cache-refresh executors run.
    tasks_running: bool,
    heartbeat: SupervisedTask,
    cache_refresh: SupervisedTask,
    /// A heartbeat's re-register is in flight with this dirty stamp.
    heartbeat_reregister: Option<u64>,
    replicator: Replicator,
    shutdown: ShutdownPhase,
    /// How long the context takes to start the web server once the tasks run.
    context_start: ContextStart,
    /// The local registry: the last full fetch with the deltas applied since (a copy of its own
    /// once a delta changed it, see `delta.rs`).
    cache: Option<Rc<Payload>>,
    /// The applications this process routes to (a caller's `calls`), in order.
    called: Vec<usize>,
    /// Per called application: its instances in the order of the last shuffle, UP only with
    /// `filter-only-up-instances` (the default).
    up_lists: Vec<(usize, Vec<ProcessId>)>,
    /// Per called application (as `called`): every process of it, in increasing id, taken once
    /// from the world's `applications` (fixed for a trial), so a shuffle reads the registry
    /// entries of its applications only, not the whole fleet's (10 000 instances).
    members: Vec<Vec<ProcessId>>,
    rng: RngStream,
    /// The server it calls when it has one endpoint (no transport).
    server: ServerId,
    /// Its way to several servers (`eureka.client.service-url`), if it has more than one
    /// endpoint or calls may fail; `None`: every call goes to `server`.
    transport: Option<Box<ClientTransport>>,
    /// The sequence number of the last call sent (0 without a transport).
    last_seq: u32,
    /// `fetchRegistryGeneration`: how many fetches the local registry has stored.
    fetch_generation: u64,
    /// Whether a supervised run's `TaskTimeout` is armed. Off once the world promises that
    /// every call of this client is answered well within a run's timeout
    /// ([`DiscoveryClient::calls_answered_in_time`]), where it could only ever arrive stale.
    arms_task_timeouts: bool,
    /// Its periodic fetches are left out ([`DiscoveryClient::leave_out_fetches`]).
    fetches_left_out: bool,
    /// Idle periodic replicator runs are not armed ([`DiscoveryClient::defer_idle_replicator`]).
    defers_idle_replicator: bool,
    /// A found renew's reply whose transport and run bookkeeping wait for the first call
    /// into the client ordered after it ([`DiscoveryClient::apply_pending_renew`]).
    pending_renew: Option<RenewAnswered>,
}

impl DiscoveryClient {
    /// The client of process `id`, not started; `called`: the applications it routes to.
    pub fn new(
        id: ProcessId,
        config: Rc<ClientConfig>,
        release: Release,
        called: Vec<usize>,
        rng: RngStream,
    ) -> DiscoveryClient {
        let heartbeat = SupervisedTask::new(
            Task::Heartbeat,
            config.lease_renewal_interval_s * 1000,
            config.heartbeat_executor_exponential_back_off_bound,
            config.heartbeat_executor_thread_pool_size,
        );
        let cache_refresh = SupervisedTask::new(
            Task::CacheRefresh,
            config.registry_fetch_interval_s * 1000,
            config.cache_refresh_executor_exponential_back_off_bound,
            config.cache_refresh_executor_thread_pool_size,
        );
        DiscoveryClient {
            id,
            config,
            release,
            info: InstanceInfo {
                status: InstanceStatus::Starting,
                dirty: false,
                last_dirty: 0,
            },
            incarnation: 0,
            listener: false,
            tasks_running: false,
            heartbeat,
            cache_refresh,
            heartbeat_reregister: None,
            replicator: Replicator::default(),
            shutdown: ShutdownPhase::Running,
            context_start: ContextStart::Fixed(0),
            cache: None,
            members: Vec::new(),
            arms_task_timeouts: true,
            fetches_left_out: false,
            defers_idle_replicator: false,
            pending_renew: None,
            called,
            up_lists: Vec::new(),
            rng,
            server: ServerId::FIRST,
            transport: None,
            last_seq: 0,
            fetch_generation: 0,
        }
    }

    /// The only server it calls (no transport).
    pub fn use_server(&mut self, server: ServerId) {
        self.server = server;
        self.transport = None;
    }

    /// Calls go through `transport`: its endpoints, two stacks and retries.
    pub fn use_transport(&mut self, transport: ClientTransport) {
        self.transport = Some(Box::new(transport));
    }

    /// Steady start: the servers its registration and query calls go to (sticky in a running
    /// session with a transport).
    pub fn start_steady_transport(&mut self, now: SimTime) -> (ServerId, ServerId) {
        match self.transport.as_mut() {
            Some(t) => t.start_steady(now),
            None => (self.server, self.server),
        }
    }

    /// Where a call beginning now goes, and its sequence number (0 without a transport).
    pub fn route_call(&mut self, now: SimTime, call: Call) -> (ServerId, u32) {
        match self.transport.as_mut() {
            Some(t) => t.begin(now, call).unwrap_or((self.server, 0)),
            None => (self.server, 0),
        }
    }

    /// Sends `call` to the server its stack picks.
    fn send(&mut self, now: SimTime, call: Call, out: &mut impl ClientOutput) {
        let (server, seq) = self.route_call(now, call);
        self.last_seq = seq;
        out.send(server, seq, call);
    }

    fn task_mut(&mut self, task: Task) -> &mut SupervisedTask {
        match task {
            Task::Heartbeat => &mut self.heartbeat,
            Task::CacheRefresh => &mut self.cache_refresh,
        }
    }

    /// The task's run is over after call `seq`: re-arm (without a transport, where every call
    /// is answered within a latency, always), or end its body ([`SupervisedTask::ended`]).
    fn run_ended(&mut self, task: Task, seq: u32, out: &mut impl ClientOutput) {
        let supervised = self.transport.is_some();
        let task = self.task_mut(task);
        if supervised {
            task.ended(seq, out);
        } else {
            task.arm(out);
        }
    }

    /// The task's body that sent call `seq` goes on with the call just sent.
    fn run_goes_on(&mut self, task: Task, seq: u32) {
        let (next, generation) = (self.last_seq, self.fetch_generation);
        self.task_mut(task).goes_on(seq, next, generation);
    }

    /// Whether the fetch body that sent call `seq` may store what it fetched: no other body
    /// stored a fetch since it began (`fetchRegistryGeneration.compareAndSet`); if so, the
    /// generation moves on.
    fn fetch_stores(&mut self, seq: u32) -> bool {
        if self.transport.is_none() {
            return true;
        }
        let Some(body) = self.cache_refresh.body(seq) else {
            return true;
        };
        if body.fetch_generation != self.fetch_generation {
            return false;
        }
        self.fetch_generation += 1;
        true
    }

    /// The client of the process's next incarnation (a `[[restart]]` under the same id, a
    /// peer's embedded client after a `server-restart`), with its own streams (`transport`
    /// for its transport, if it has one: [`ClientTransport::restarted`]). Timer events of this
    /// one still in the queue carry its generations; starting above them keeps them stale for
    /// the new client.
    pub fn restarted(&self, rng: RngStream, transport: TransportStreams) -> DiscoveryClient {
        let mut client = DiscoveryClient::new(
            self.id,
            self.config.clone(),
            self.release,
            self.called.clone(),
            rng,
        );
        client.incarnation = self.incarnation + 1;
        client.heartbeat.generation = self.heartbeat.generation + 1;
        client.cache_refresh.generation = self.cache_refresh.generation + 1;
        client.replicator.generation = self.replicator.generation + 1;
        client.server = self.server;
        client.arms_task_timeouts = self.arms_task_timeouts;
        client.defers_idle_replicator = self.defers_idle_replicator;
        client.transport = self
            .transport
            .as_ref()
            .map(|t| Box::new(t.restarted(transport)));
        client
    }

    /// Whether its heartbeats still renew a lease: it registers with Eureka, its scheduled
    /// tasks run and `shutdown()` has not begun (`DiscoveryClient#shutdown` cancels them).
    pub fn renews(&self) -> bool {
        self.config.register_with_eureka
            && self.tasks_running
            && matches!(self.shutdown, ShutdownPhase::Running)
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }

    /// The world's promise that every call of this client is answered, or fails, well within
    /// a supervised run's timeout (one interval): no `[[fault]]` can hold a call, and a run's
    /// longest chain of attempts takes less than its interval. A `TaskTimeout` then always
    /// arrives after its run ended and bumped the task's generation, a stale no-op
    /// (`TimedSupervisorTask#run`'s `future.get` returned in time), so it is not armed at all:
    /// a day of 10 000 clients on three peers schedules 2.4 million fewer events an hour
    /// (the production fleet's profile). Removing events that do nothing leaves every other event's order as it was
    /// (sequence numbers only grow), so the outcome is the same as with them; the world's
    /// reference mode keeps them (`World::arm_every_timeout`) and a test compares the two.
    pub fn calls_answered_in_time(&mut self) {
        self.arms_task_timeouts = false;
    }

    /// Its cache refresh is never armed: the world promises that no one observes what it
    /// fetches and that a fetch changes nothing on any server (the conditions are
    /// `World::fetches_change_nothing` and `World::fetches_observed`). In Eureka the two
    /// stacks are separate HTTP clients (FACTS.md §5.7), and here each draws from its own
    /// streams (`net/<name>/query`, `transport/<name>/query`; the resolver's shuffles do not
    /// depend on who calls), so leaving the fetches out moves no other draw, and removing
    /// events leaves every other event's order as it was (sequence numbers only grow). Set on
    /// a steady start before [`DiscoveryClient::restore_cache`] (the refresh is then never
    /// armed), on a cold start at a cache-refresh timer (the world then handles none of its
    /// timers); a restarted client fetches again.
    pub fn leave_out_fetches(&mut self) {
        self.fetches_left_out = true;
    }

    /// Whether its periodic fetches are left out.
    pub fn fetches_left_out(&self) -> bool {
        self.fetches_left_out
    }

    /// Its idle periodic replicator runs are not armed (on the production fleet they
    /// were a quarter of all events). `InstanceInfoReplicator#run` with a clean InstanceInfo,
    /// nothing in flight or queued and no status for `refreshInstanceInfo()` to change does
    /// nothing but schedule itself one interval later, so while the client stays idle the runs
    /// fall on a fixed grid. The world calls [`DiscoveryClient::arm_deferred_replicator`] after
    /// every call into the client; once the client is no longer idle, it arms the first run of
    /// the grid still to come. Exact because the periodic run is keyed in the queue (first in
    /// its millisecond, whenever it was armed: `engine::queue`), and because only the client's
    /// own calls change its state. The world sets it only where no `[[fault]]` can pause the
    /// process (a paused timer runs late and moves the grid).
    pub fn defer_idle_replicator(&mut self) {
        self.defers_idle_replicator = true;
    }

    /// Whether a periodic replicator run now would do nothing but arm the next one
    /// (`InstanceInfoReplicator#run`: `refreshInstanceInfo()` changes no status, the
    /// InstanceInfo is clean, and no register is in flight or queued, no stop under way).
    fn replicator_idle(&self) -> bool {
        let r = &self.replicator;
        let health_flips_status = self.config.healthcheck_enabled
            && self.shutdown == ShutdownPhase::Running
            && !matches!(
                self.info.status,
                InstanceStatus::Starting | InstanceStatus::Up
            );
        !self.info.dirty
            && r.busy.is_none()
            && r.queued == 0
            && !r.stopping
            && !r.dead
            && !health_flips_status
    }

    /// Arms the periodic replicator run `delay_ms` from now, or defers it while idle.
    fn arm_replicator(&mut self, now: SimTime, delay_ms: u64, out: &mut impl ClientOutput) {
        self.replicator.periodic_due = Some(now + delay_ms);
        self.replicator.deferred = self.defers_idle_replicator && self.replicator_idle();
        if !self.replicator.deferred {
            let generation = self.replicator.generation;
            out.arm(delay_ms, ClientTimer::Replicator { generation });
        }
    }

    /// The deferred periodic runs due by `now` have run (idle; a keyed run is the first event
    /// of its millisecond), each arming the next: `periodic_due` moves to the first still to
    /// come.
    fn catch_up_deferred_replicator(&mut self, now: SimTime) {
        let interval = self.replication_interval_ms().max(1);
        let r = &mut self.replicator;
        if let (true, Some(due)) = (r.deferred, r.periodic_due)
            && due <= now
        {
            let runs = (now.ms() - due.ms()) / interval + 1;
            r.periodic_due = Some(due + runs * interval);
        }
    }

    /// After every call into the client: a deferred periodic run is armed once the
    /// replicator is no longer idle ([`DiscoveryClient::defer_idle_replicator`]).
    #[inline]
    pub fn arm_deferred_replicator(&mut self, now: SimTime, out: &mut impl ClientOutput) {
        if !self.replicator.deferred || self.replicator_idle() {
            return;
        }
        self.catch_up_deferred_replicator(now);
        self.replicator.deferred = false;
        if self.replicator.dead {
            return;
        }
        if let Some(due) = self.replicator.periodic_due {
            let generation = self.replicator.generation;
            out.arm(due.ms() - now.ms(), ClientTimer::Replicator { generation });
        }
    }

    /// Whether the reply to a found renew may be handled when the server answers
    /// ([`DiscoveryClient::renew_answered_ahead`]): the tasks run, and with a transport every
    /// call is answered in time (no `TaskTimeout` can end the run first) and no earlier
    /// reply is still pending.
    pub fn takes_renew_reply_ahead(&self) -> bool {
        self.tasks_running
            && (self.transport.is_none()
                || (!self.arms_task_timeouts && self.pending_renew.is_none()))
    }

    /// The renew `answered.seq` was found (200); its reply arrives `answered.delay_ms` from
    /// now. The next heartbeat is armed now, one interval after the arrival, as
    /// [`DiscoveryClient::on_reply`] would arm it then (the replies were a quarter
    /// of a trial's events). Without a transport that is all the reply does. With one, the
    /// transport's and the run's bookkeeping wait for the first call into the client ordered
    /// after the reply ([`DiscoveryClient::apply_pending_renew`]), so they happen in the
    /// reference's order. Exact because, between now and the arrival, nothing else can end
    /// the run: no heartbeat timer is pending (this run arms the next), no `TaskTimeout` is
    /// armed (`takes_renew_reply_ahead`), and a shutdown that stops the tasks cancels the
    /// heartbeat executor, which makes the timer armed now stale as the reference would then
    /// arm none; a kill voids every timer. The heartbeat timer is keyed in the queue, so its
    /// place among the events of its millisecond does not depend on when it was armed.
    pub fn renew_answered_ahead(&mut self, answered: RenewAnswered, out: &mut impl ClientOutput) {
        let delay_ms = answered.delay_ms;
        if self.transport.is_none() {
            return self
                .heartbeat
                .arm_in(delay_ms + self.heartbeat.delay_ms, out);
        }
        if self.heartbeat.current == Some(answered.seq) {
            self.heartbeat
                .arm_in(delay_ms + self.heartbeat.interval_ms, out);
        }
        self.pending_renew = Some(answered);
    }

    /// Carries out a pending renew reply ordered before `before` (the key of the event being
    /// handled) as [`DiscoveryClient::on_reply`] would have on its arrival, without the re-arm
    /// already done: the transport hears the answer, and the run ends.
    #[inline]
    pub fn apply_pending_renew(&mut self, before: u64) {
        match self.pending_renew {
            Some(answered) if answered.key < before => {
                self.pending_renew = None;
                self.renew_arrived(answered);
            }
            _ => {}
        }
    }

    fn renew_arrived(&mut self, answered: RenewAnswered) {
        let Some(transport) = self.transport.as_mut() else {
            return;
        };
        let found = Reply::Renewed { found: true };
        if let Delivery::Answered(_) = transport.on_reply(answered.at, answered.seq, &found)
            && self.tasks_running
        {
            self.heartbeat.ended_armed_ahead(answered.seq);
        }
    }

    /// Whether it routes to no application (a caller's `calls` are empty): nothing reads the
    /// lists its fetches build.
    pub fn calls_nothing(&self) -> bool {
        self.called.is_empty()
    }

    /// Every supervised run arms its `TaskTimeout` again (the reference mode).
    pub fn arm_task_timeouts(&mut self) {
        self.arms_task_timeouts = true;
    }

    /// The longest a supervised run of this client may take without its timeout firing: the
    /// shorter of its two tasks' intervals.
    pub fn shortest_task_interval_ms(&self) -> u64 {
        self.heartbeat
            .interval_ms
            .min(self.cache_refresh.interval_ms)
    }

    /// The server it calls.
    pub fn server(&self) -> ServerId {
        self.server
    }

    /// `InstanceInfo#getLastDirtyTimestamp`.
    pub fn last_dirty(&self) -> u64 {
        self.info.last_dirty
    }

    /// `q` is UP in the client's local registry (what `DiscoveryEnabledNIWSServerList` keeps).
    pub fn is_up_in_cache(&self, q: ProcessId) -> bool {
        self.cache.as_ref().is_some_and(|c| c.is_up(q))
    }

    /// The client's instances of `application` (`getInstancesByVipAddress`: UP only unless
    /// `filter-only-up-instances = false`; empty if it calls none such).
    pub fn up_list(&self, application: usize) -> &[ProcessId] {
        self.up_lists
            .iter()
            .find(|(a, _)| *a == application)
            .map_or(&[], |(_, list)| list.as_slice())
    }

    /// Instances in the local registry, UP ones only with `filter-only-up-instances` (0 before
    /// the first fetch): a Eureka server's embedded client's `count` for the renewal threshold
    /// (FACTS.md §2.4).
    pub fn registry_instance_count(&self) -> i64 {
        let Some(payload) = &self.cache else {
            return 0;
        };
        let filter = self.config.filter_only_up_instances;
        payload
            .statuses
            .iter()
            .filter(|s| match s {
                Some(status) => !filter || *status == InstanceStatus::Up,
                None => false,
            })
            .count() as i64
    }

    /// `InstanceInfo#setIsDirtyWithTime`.
    fn set_dirty(&mut self, wall_ms: u64) -> u64 {
        self.info.dirty = true;
        self.info.last_dirty = wall_ms;
        wall_ms
    }

    /// `InstanceInfo#unsetIsDirty(ts)`: only if nothing dirtied it after `ts`.
    fn unset_dirty(&mut self, ts: u64) {
        if self.info.last_dirty <= ts {
            self.info.dirty = false;
        }
    }

    fn registrant(&self) -> Registrant {
        Registrant {
            status: self.info.status,
            overridden_status: InstanceStatus::Unknown,
            last_dirty: self.info.last_dirty,
            lease_duration_ms: self.config.lease_expiration_duration_s * 1000,
            renewal_interval_ms: self.config.lease_renewal_interval_s * 1000,
        }
    }

    fn replication_interval_ms(&self) -> u64 {
        self.config.instance_info_replication_interval_s * 1000
    }

    /// `allowedRatePerMinute = 60 * burstSize / replicationIntervalSeconds` (int division).
    fn allowed_rate_per_minute(&self) -> u64 {
        60 * REPLICATOR_BURST / self.config.instance_info_replication_interval_s.max(1)
    }
}

/// Per application of `called`, the processes `q` with `applications[q]` equal to it, in
/// increasing `q`.
fn members_of(called: &[usize], applications: &[usize]) -> Vec<Vec<ProcessId>> {
    called
        .iter()
        .map(|&application| {
            (0..applications.len())
                .filter(|&q| applications[q] == application)
                .collect()
        })
        .collect()
}

/// `Collections.shuffle` (Fisher-Yates from the end) with the client's stream.
fn shuffle(list: &mut [ProcessId], rng: &mut RngStream) {
    for i in (1..list.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        list.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;
    use crate::scenario::Train;

    const WALL: u64 = 1_700_000_000_000;

    /// The members of each called application, in process order, whatever the order of
    /// `called` (hand-made: processes 1 and 2 run application 1, 0 and 3 application 0).
    #[test]
    fn members_of_lists_each_called_application_in_process_order() {
        assert_eq!(
            members_of(&[1, 0], &[0, 1, 1, 0, 2]),
            vec![vec![1, 2], vec![0, 3]]
        );
        assert_eq!(members_of(&[5], &[0, 1]), vec![Vec::<ProcessId>::new()]);
    }

    fn client(config: ClientConfig, train: Train) -> DiscoveryClient {
        let rng = StreamFactory::new(1).stream("client/svc-0");
        DiscoveryClient::new(
            0,
            Rc::new(config),
            Release::of_train(train),
            Vec::new(),
            rng,
        )
    }

    /// A client created at 0 without the constructor's fetch, so its tasks start at once.
    fn started(train: Train) -> (DiscoveryClient, Vec<ClientEffect>) {
        let config = ClientConfig {
            fetch_registry: false,
            ..ClientConfig::default()
        };
        let mut c = client(config, train);
        let mut out = Vec::new();
        c.create(SimTime(0), WALL, ContextStart::Fixed(5_000), &mut out);
        (c, out)
    }

    /// The one timer armed for `task` among `effects`: (delay, timer).
    fn armed(effects: &[ClientEffect], task: Task) -> Option<(u64, ClientTimer)> {
        effects.iter().find_map(|e| match *e {
            ClientEffect::Arm { delay_ms, timer } => match timer {
                ClientTimer::Task { task: t, .. } if t == task => Some((delay_ms, timer)),
                _ => None,
            },
            _ => None,
        })
    }

    /// `DiscoveryClient#initScheduledTasks` (FACTS.md §5.1): heartbeat one renewal interval
    /// (`lease-renewal-interval-in-seconds`, 30) after the start, replicator after
    /// `initial-instance-info-replication-interval-seconds` (40), then the web server.
    #[test]
    fn scheduled_tasks_start_one_interval_and_the_initial_delay_after_creation() {
        let (c, out) = started(Train::Hoxton);
        let config = c.config();
        let (delay, _) = armed(&out, Task::Heartbeat).expect("heartbeat armed");
        assert_eq!(delay, config.lease_renewal_interval_s * 1000);
        assert!(out.contains(&ClientEffect::Arm {
            delay_ms: config.initial_instance_info_replication_interval_s * 1000,
            timer: ClientTimer::Replicator { generation: 0 },
        }));
        assert_eq!(
            out.last(),
            Some(&ClientEffect::StartWebServer { delay_ms: 5_000 })
        );
    }

    /// `DiscoveryClient#renew` (FACTS.md §5.3): a 404 makes the client mark its InstanceInfo
    /// dirty now and register; the heartbeat task re-arms only when that run (the register)
    /// has ended, one interval later (`TimedSupervisorTask`, FACTS.md §5.2), and the timer
    /// armed before is stale.
    #[test]
    fn renew_404_registers_again_and_the_heartbeat_rearms_after_the_register() {
        let (mut c, out) = started(Train::Hoxton);
        let (_, first) = armed(&out, Task::Heartbeat).unwrap();
        let interval = c.config().lease_renewal_interval_s * 1000;
        let mut out = Vec::new();
        c.on_timer(SimTime(interval), WALL + interval, first, &mut out);
        assert_eq!(
            out,
            [ClientEffect::Send {
                server: ServerId::FIRST,
                seq: 0,
                call: Call::Renew { last_dirty: WALL }
            }]
        );

        let wall_404 = WALL + interval + 3;
        let mut out = Vec::new();
        let renewed = Reply::Renewed { found: false };
        c.on_reply(SimTime(interval + 3), wall_404, 0, renewed, &[], &mut out);
        let ClientEffect::Send {
            call: Call::Register { info, why },
            ..
        } = out[0]
        else {
            panic!("expected a register, got {out:?}");
        };
        assert_eq!(why, RegisterWhy::HeartbeatReRegister);
        assert_eq!(info.last_dirty, wall_404);
        assert_eq!(armed(&out, Task::Heartbeat), None);

        let mut out = Vec::new();
        let registered = Reply::Registered { why };
        c.on_reply(
            SimTime(interval + 6),
            wall_404 + 3,
            0,
            registered,
            &[],
            &mut out,
        );
        let (delay, next) = armed(&out, Task::Heartbeat).unwrap();
        assert_eq!(delay, interval);
        assert_ne!(next, first);
        let mut out = Vec::new();
        c.on_timer(SimTime(2 * interval), WALL + 2 * interval, first, &mut out);
        assert!(out.is_empty(), "a stale heartbeat sends nothing: {out:?}");
    }

    /// The cache refresh runs on the same `TimedSupervisorTask` rule as the heartbeat: a full
    /// fetch while the local registry is empty, re-armed one `registry-fetch-interval-seconds`
    /// after its reply.
    #[test]
    fn cache_refresh_rearms_one_fetch_interval_after_its_reply() {
        let mut c = client(ClientConfig::default(), Train::Hoxton);
        let fetch_ms = c.config().registry_fetch_interval_s * 1000;
        let mut out = Vec::new();
        c.create(SimTime(0), WALL, ContextStart::Fixed(0), &mut out);
        let init = FetchWhy::Init;
        assert_eq!(
            out[1],
            ClientEffect::Send {
                server: ServerId::FIRST,
                seq: 0,
                call: Call::FetchAll { why: init }
            }
        );
        let payload = Rc::new(Payload {
            version: 1,
            generated_at: SimTime(0),
            statuses: Vec::new(),
            hash: Default::default(),
        });
        let mut out = Vec::new();
        let fetched = Reply::Fetched {
            why: init,
            payload: Rc::clone(&payload),
        };
        c.on_reply(SimTime(10), WALL + 10, 0, fetched, &[], &mut out);
        let (delay, timer) = armed(&out, Task::CacheRefresh).unwrap();
        assert_eq!(delay, fetch_ms);
        let mut out = Vec::new();
        c.on_timer(SimTime(fetch_ms + 10), WALL, timer, &mut out);
        let periodic = FetchWhy::Periodic;
        assert_eq!(
            out,
            [ClientEffect::Send {
                server: ServerId::FIRST,
                seq: 0,
                call: Call::FetchAll { why: periodic }
            }]
        );
        let mut out = Vec::new();
        let fetched = Reply::Fetched {
            why: periodic,
            payload,
        };
        c.on_reply(SimTime(fetch_ms + 20), WALL, 0, fetched, &[], &mut out);
        assert_eq!(armed(&out, Task::CacheRefresh).map(|a| a.0), Some(fetch_ms));
    }

    /// A started client whose calls go through a transport over three servers of one zone
    /// (so its tasks are supervised), with `pool` threads per task executor.
    fn supervised(pool: u32, fetch_registry: bool) -> (DiscoveryClient, Vec<ClientEffect>) {
        use crate::eureka::transport::{Endpoints, TransportSettings};
        let config = ClientConfig {
            fetch_registry,
            heartbeat_executor_thread_pool_size: pool,
            cache_refresh_executor_thread_pool_size: pool,
            ..ClientConfig::default()
        };
        let mut c = client(config, Train::Hoxton);
        let servers = [0, 1, 2].map(ServerId).to_vec();
        let streams = TransportStreams::named(&StreamFactory::new(1), "svc-0");
        let endpoints = Endpoints::new(servers, Vec::new(), true);
        c.use_transport(ClientTransport::new(
            endpoints,
            TransportSettings::default(),
            streams,
        ));
        let mut out = Vec::new();
        c.create(SimTime(0), WALL, ContextStart::Fixed(5_000), &mut out);
        if fetch_registry {
            // The constructor's fetch, answered with an empty registry.
            let seq = sent(&out).expect("the constructor's fetch");
            out.clear();
            let fetched = Reply::Fetched {
                why: FetchWhy::Init,
                payload: payload(0),
            };
            c.on_reply(SimTime(5), WALL + 5, seq, fetched, &[], &mut out);
        }
        (c, out)
    }

    fn payload(version: u64) -> Rc<Payload> {
        Rc::new(Payload {
            version,
            generated_at: SimTime(0),
            statuses: Vec::new(),
            hash: Default::default(),
        })
    }

    /// Clients that apply one delta payload to the same local registry end up
    /// sharing one registry (one allocation, not a copy each), with exactly the statuses
    /// `apply_delta` gives; a client whose registry differs gets its own, also exact; a delta
    /// that changes nothing leaves the registry as it was.
    #[test]
    fn clients_applying_the_same_delta_share_the_result() {
        use crate::eureka::protocol::{ActionType, DeltaContent, Holder};
        use InstanceStatus::{Down, Up};
        let full = Rc::new(Payload {
            version: 7,
            generated_at: SimTime(30_000),
            statuses: vec![Some(Up), Some(Up), Some(Up)],
            hash: Default::default(),
        });
        let other = Rc::new(Payload {
            statuses: vec![Some(Up), Some(Down), Some(Up)],
            ..(*full).clone()
        });
        let holder = |status, action| Holder { status, action };
        let delta = DeltaPayload {
            version: 3,
            generated_at: SimTime(60_000),
            content: DeltaContent {
                instances: vec![
                    (0, holder(Down, ActionType::Modified)),
                    (1, holder(Up, ActionType::Modified)),
                    (2, holder(Up, ActionType::Deleted)),
                ],
                apps_hash: Default::default(),
            },
            applied: Default::default(),
        };
        let mut clients: Vec<DiscoveryClient> = (0..3)
            .map(|_| client(ClientConfig::default(), Train::Hoxton))
            .collect();
        clients[0].cache = Some(Rc::clone(&full));
        clients[1].cache = Some(Rc::clone(&full));
        clients[2].cache = Some(Rc::clone(&other));
        let changes: Vec<_> = clients.iter_mut().map(|c| c.update_delta(&delta)).collect();
        let held: Vec<Rc<Payload>> = clients.iter().map(|c| c.cache.clone().unwrap()).collect();
        assert!(Rc::ptr_eq(&held[0], &held[1]));
        assert!(!Rc::ptr_eq(&held[0], &held[2]));
        assert_eq!(held[0].statuses, [Some(Down), Some(Up), None]);
        assert_eq!(held[2].statuses, [Some(Down), Some(Up), None]);
        assert_eq!(changes[0], [(0, false), (2, false)]);
        assert_eq!(changes[2], [(0, false), (1, true), (2, false)]);
        // The base registries are untouched (a server's full payload is shared too).
        assert_eq!(full.statuses, [Some(Up); 3]);
        // Applied again, the delta changes nothing and keeps the shared registry.
        assert!(clients[0].update_delta(&delta).is_empty());
        assert!(Rc::ptr_eq(clients[0].cache.as_ref().unwrap(), &held[0]));
    }

    /// The sequence number of the one call among `effects`.
    fn sent(effects: &[ClientEffect]) -> Option<u32> {
        effects.iter().find_map(|e| match *e {
            ClientEffect::Send { seq, .. } => Some(seq),
            _ => None,
        })
    }

    /// The supervisor's timeout armed among `effects`: (delay, timer).
    fn timeout(effects: &[ClientEffect]) -> Option<(u64, ClientTimer)> {
        effects.iter().find_map(|e| match *e {
            ClientEffect::Arm {
                delay_ms,
                timer: timer @ ClientTimer::TaskTimeout { .. },
            } => Some((delay_ms, timer)),
            _ => None,
        })
    }

    /// Runs the task armed among `effects` at `now` and lets its supervisor time out: returns
    /// the run's call (its sequence number), the timeout's delay and the effects of the
    /// timeout (the next arm), and the instant of the timeout.
    fn run_and_time_out(
        c: &mut DiscoveryClient,
        task: Task,
        effects: &[ClientEffect],
        now: u64,
    ) -> (Option<u32>, u64, Vec<ClientEffect>, u64) {
        let (_, timer) = armed(effects, task).expect("task armed");
        let mut out = Vec::new();
        c.on_timer(SimTime(now), WALL + now, timer, &mut out);
        let seq = sent(&out);
        let (wait, expire) = timeout(&out).expect("timeout armed");
        let mut next = Vec::new();
        c.on_timer(SimTime(now + wait), WALL + now + wait, expire, &mut next);
        (seq, wait, next, now + wait)
    }

    /// The interval of `task`'s runs: the heartbeat's lease renewal interval, or the registry
    /// fetch interval.
    fn interval_ms(c: &DiscoveryClient, task: Task) -> u64 {
        let config = c.config();
        1000 * match task {
            Task::Heartbeat => config.lease_renewal_interval_s,
            Task::CacheRefresh => config.registry_fetch_interval_s,
        }
    }

    /// The first run of `task` (armed among `effects`) outlasts its interval and is abandoned:
    /// the delay to the next run doubles. Returns the abandoned run's sequence number, when it
    /// was abandoned, and the delay and timer of the next run.
    fn abandon_first_run(
        c: &mut DiscoveryClient,
        task: Task,
        effects: &[ClientEffect],
    ) -> (Option<u32>, u64, u64, ClientTimer) {
        let interval = interval_ms(c, task);
        let (seq, _, next, at) = run_and_time_out(c, task, effects, interval);
        let (delay, timer) = armed(&next, task).unwrap();
        assert_eq!(delay, 2 * interval);
        (seq, at, delay, timer)
    }

    /// The run of `task` due at `now` on `timer` is answered `reply` 3 ms later, in time: the
    /// delay to the next is the interval again.
    fn run_in_time(
        c: &mut DiscoveryClient,
        task: Task,
        timer: ClientTimer,
        now: u64,
        reply: Reply,
    ) {
        let mut out = Vec::new();
        c.on_timer(SimTime(now), WALL + now, timer, &mut out);
        let seq = sent(&out).unwrap();
        let mut out = Vec::new();
        c.on_reply(SimTime(now + 3), WALL, seq, reply, &[], &mut out);
        assert_eq!(armed(&out, task).map(|a| a.0), Some(interval_ms(c, task)));
    }

    /// `TimedSupervisorTask#run` (FACTS.md §5.2): a run that outlasts the interval (30 s, its
    /// `timeoutMillis`) doubles the delay to the next, up to interval x
    /// `heartbeat-executor-exponential-back-off-bound` (10): 60, 120, 240, 300, 300 s after
    /// each timeout (`TimedSupervisorTaskTest#testSupervisorTaskAsPeriodicScheduledJob
    /// TestTaskTimingOut`), with threads enough that no run is rejected.
    #[test]
    fn consecutive_timeouts_back_off_60_120_240_300_300_s() {
        let (mut c, mut effects) = supervised(10, false);
        let interval = c.config().lease_renewal_interval_s * 1000;
        let mut now = interval;
        let mut delays = Vec::new();
        for _ in 0..5 {
            let (seq, wait, next, at) = run_and_time_out(&mut c, Task::Heartbeat, &effects, now);
            assert!(
                seq.is_some_and(|s| s > 0),
                "a renew sent through the transport"
            );
            assert_eq!(wait, interval, "the supervisor waits one interval");
            let (delay, _) = armed(&next, Task::Heartbeat).expect("re-armed after the timeout");
            delays.push(delay / 1000);
            now = at + delay;
            effects = next;
        }
        assert_eq!(delays, [60, 120, 240, 300, 300]);
    }

    /// `TimedSupervisorTask#run`: a run done in time sets the delay back to the interval; the
    /// body of a timed-out run goes on (a blocked socket ignores `future.cancel(true)`) and its
    /// late answer re-arms nothing.
    #[test]
    fn a_run_in_time_resets_the_delay_and_a_late_answer_rearms_nothing() {
        let (mut c, effects) = supervised(10, false);
        let (late, at, delay, timer) = abandon_first_run(&mut c, Task::Heartbeat, &effects);

        // The abandoned renew lands after all.
        let mut out = Vec::new();
        let renewed = Reply::Renewed { found: true };
        c.on_reply(
            SimTime(at + 1),
            WALL,
            late.unwrap(),
            renewed.clone(),
            &[],
            &mut out,
        );
        assert_eq!(out, [], "an abandoned body re-arms nothing");

        run_in_time(&mut c, Task::Heartbeat, timer, at + delay, renewed);
    }

    /// `DiscoveryClient#initScheduledTasks`: `ThreadPoolExecutor(1, heartbeat-executor-thread-
    /// pool-size = 2, SynchronousQueue)`. Two hanging heartbeats hold both threads, so the
    /// third run is rejected (`RejectedExecutionException`): nothing is sent and the task
    /// re-arms after the unchanged delay (120 s after two timeouts); once a body ends its thread
    /// is free and the next run goes out.
    #[test]
    fn a_full_executor_rejects_the_run_and_keeps_the_delay() {
        let (mut c, effects) = supervised(2, false);
        let interval = c.config().lease_renewal_interval_s * 1000;
        let (first, _, next, at) = run_and_time_out(&mut c, Task::Heartbeat, &effects, interval);
        let now = at + armed(&next, Task::Heartbeat).unwrap().0;
        let (second, _, next, at) = run_and_time_out(&mut c, Task::Heartbeat, &next, now);
        assert_ne!(first, second);
        let (delay, timer) = armed(&next, Task::Heartbeat).unwrap();
        assert_eq!(delay, 4 * interval);

        let now = at + delay;
        let mut out = Vec::new();
        c.on_timer(SimTime(now), WALL + now, timer, &mut out);
        assert_eq!(sent(&out), None, "rejected: no thread free");
        let (again, timer) = armed(&out, Task::Heartbeat).expect("re-armed after a rejection");
        assert_eq!(again, delay, "the delay is unchanged");

        // The first body fails at last: one thread is free for the next run.
        let mut out = Vec::new();
        for _ in 0..3 {
            let Some(seq) = sent(&out).or(first) else {
                break;
            };
            out.clear();
            c.on_reply(
                SimTime(now + 1),
                WALL,
                seq,
                Reply::Unreachable {
                    server: ServerId(1),
                    why: crate::eureka::protocol::Unanswered::Refused,
                },
                &[],
                &mut out,
            );
            if sent(&out).is_none() {
                break;
            }
        }
        let now = now + again;
        let mut out = Vec::new();
        c.on_timer(SimTime(now), WALL + now, timer, &mut out);
        assert!(sent(&out).is_some(), "a thread was free again");
    }

    /// `DiscoveryClient#getAndStoreFullRegistry`: a fetch stores its registry only if
    /// `fetchRegistryGeneration` has not moved since it began. A fetch abandoned by its
    /// supervisor that answers after a later run stored its own is dropped, and re-arms
    /// nothing.
    #[test]
    fn an_abandoned_fetch_answering_after_a_newer_one_is_not_stored() {
        let (mut c, effects) = supervised(2, true);
        let (old, at, delay, timer) = abandon_first_run(&mut c, Task::CacheRefresh, &effects);
        let periodic = |version| Reply::Fetched {
            why: FetchWhy::Periodic,
            payload: payload(version),
        };
        let now = at + delay;
        run_in_time(&mut c, Task::CacheRefresh, timer, now, periodic(2));
        assert_eq!(c.cache.as_ref().map(|p| p.version), Some(2));

        let mut out = Vec::new();
        c.on_reply(
            SimTime(now + 4),
            WALL,
            old.unwrap(),
            periodic(1),
            &[],
            &mut out,
        );
        assert_eq!(out, [], "dropped: nothing stored, observed or armed");
        assert_eq!(c.cache.as_ref().map(|p| p.version), Some(2));
    }

    /// The same rule lets an abandoned fetch store its registry when no other fetch stored one
    /// since it began (its side effects stand, `future.cancel(true)` notwithstanding).
    #[test]
    fn an_abandoned_fetch_answering_first_is_stored() {
        let (mut c, effects) = supervised(2, true);
        let interval = c.config().registry_fetch_interval_s * 1000;
        let (old, _, next, at) = run_and_time_out(&mut c, Task::CacheRefresh, &effects, interval);
        let fetched = Reply::Fetched {
            why: FetchWhy::Periodic,
            payload: payload(7),
        };
        let mut out = Vec::new();
        c.on_reply(SimTime(at + 1), WALL, old.unwrap(), fetched, &[], &mut out);
        assert_eq!(c.cache.as_ref().map(|p| p.version), Some(7));
        assert_eq!(armed(&out, Task::CacheRefresh), None);
        assert!(armed(&next, Task::CacheRefresh).is_some());
    }

    /// `InstanceInfoReplicator#onDemandUpdate` (FACTS.md §5.4): burst 2 and
    /// `60 * 2 / 30` = 4 tokens a minute, so two quick status changes go out on demand, a third
    /// is dropped, and one token is back 15 s after the first.
    #[test]
    fn on_demand_updates_are_limited_to_a_burst_of_two_and_a_token_per_15_s() {
        use InstanceStatus::{Down, Up};
        let (mut c, _) = started(Train::Hoxton);
        let on_demand = |c: &mut DiscoveryClient, wall: u64, status| {
            let mut out = Vec::new();
            c.set_instance_status(wall, status, &mut out);
            out.contains(&ClientEffect::Arm {
                delay_ms: 0,
                timer: ClientTimer::ReplicatorOnDemand,
            })
        };
        let t = WALL + 60_000;
        assert!(on_demand(&mut c, t, Up));
        assert!(on_demand(&mut c, t + 1, Down));
        assert!(!on_demand(&mut c, t + 2, Up));
        let token_ms = 60_000 * c.config().instance_info_replication_interval_s / 60 / 2;
        assert!(!on_demand(&mut c, t + token_ms - 1, Down));
        assert!(on_demand(&mut c, t + token_ms, Up));
    }

    /// `InstanceInfoReplicator#stop` from Eureka 1.8.7 (FACTS.md §0.2): `awaitTermination(3 s)`
    /// for a periodic run due later gives up after 3 s, then the client unregisters; before
    /// 1.8.7 (Dalston, Eureka 1.6.2) `shutdownNow()` and the DELETE at once.
    #[test]
    fn two_phase_replicator_stop_delays_the_delete_by_three_seconds() {
        // The DELETE, to the one server.
        let cancel = ClientEffect::Send {
            server: ServerId::FIRST,
            seq: 0,
            call: Call::Cancel,
        };
        let (mut hoxton, _) = started(Train::Hoxton);
        let mut out = Vec::new();
        hoxton.shutdown(SimTime(1_000), &mut out);
        assert_eq!(
            out,
            [ClientEffect::Arm {
                delay_ms: REPLICATOR_STOP_WAIT_MS,
                timer: ClientTimer::ReplicatorStopDeadline,
            }]
        );
        let mut out = Vec::new();
        let deadline = ClientTimer::ReplicatorStopDeadline;
        hoxton.on_timer(SimTime(4_000), WALL + 4_000, deadline, &mut out);
        assert_eq!(out, std::slice::from_ref(&cancel));
        let mut out = Vec::new();
        hoxton.on_reply(SimTime(4_010), WALL, 0, Reply::Cancelled, &[], &mut out);
        assert_eq!(out, [ClientEffect::ShutdownDone]);

        let (mut dalston, _) = started(Train::Dalston);
        let mut out = Vec::new();
        dalston.shutdown(SimTime(1_000), &mut out);
        assert_eq!(out, std::slice::from_ref(&cancel));
    }
    /// The Replicator timer armed among `effects`, if any.
    fn replicator_armed(effects: &[ClientEffect]) -> Option<(u64, ClientTimer)> {
        effects.iter().find_map(|e| match *e {
            ClientEffect::Arm { delay_ms, timer } => {
                matches!(timer, ClientTimer::Replicator { .. }).then_some((delay_ms, timer))
            }
            _ => None,
        })
    }

    /// A found renew answered 4 ms after `at`, as the world hands it over ahead.
    fn answered_ahead(seq: u32, at: SimTime) -> RenewAnswered {
        RenewAnswered {
            seq,
            delay_ms: 4,
            at: at + 4,
            key: 0,
        }
    }

    /// The renew reply handled ahead, against the reference (the reply as an event):
    /// the next heartbeat is due at the same instant, one interval after the reply arrives,
    /// with the same timer; a shutdown before the reply arrives leaves that timer stale, as
    /// the reference then arms nothing.
    #[test]
    fn a_found_renew_answered_ahead_arms_the_heartbeat_the_reply_would() {
        let (mut fused, out) = started(Train::Hoxton);
        let (mut reference, _) = started(Train::Hoxton);
        let (_, first) = armed(&out, Task::Heartbeat).unwrap();
        let interval = fused.config().lease_renewal_interval_s * 1000;
        let at = SimTime(interval);
        for c in [&mut fused, &mut reference] {
            c.on_timer(at, WALL + interval, first, &mut Vec::new());
        }
        assert!(fused.takes_renew_reply_ahead());
        let mut ahead = Vec::new();
        fused.renew_answered_ahead(answered_ahead(0, at), &mut ahead);
        let mut on_reply = Vec::new();
        let found = Reply::Renewed { found: true };
        let wall = WALL + interval + 4;
        reference.on_reply(at + 4, wall, 0, found.clone(), &[], &mut on_reply);
        let (delay, timer) = armed(&ahead, Task::Heartbeat).unwrap();
        assert_eq!(Some((delay - 4, timer)), armed(&on_reply, Task::Heartbeat));
        assert_eq!(delay, 4 + interval);

        // Dalston stops the replicator at once (no two-phase stop), so the shutdown stops the
        // heartbeat before the reply arrives.
        let (mut fused, out) = started(Train::Dalston);
        let (mut reference, _) = started(Train::Dalston);
        let (_, first) = armed(&out, Task::Heartbeat).unwrap();
        for c in [&mut fused, &mut reference] {
            c.on_timer(at, WALL + interval, first, &mut Vec::new());
        }
        let mut ahead = Vec::new();
        fused.renew_answered_ahead(answered_ahead(0, at), &mut ahead);
        let (delay, timer) = armed(&ahead, Task::Heartbeat).unwrap();
        for c in [&mut fused, &mut reference] {
            c.shutdown(at + 2, &mut Vec::new());
        }
        let mut on_reply = Vec::new();
        reference.on_reply(at + 4, WALL, 0, found, &[], &mut on_reply);
        assert_eq!(armed(&on_reply, Task::Heartbeat), None);
        let mut out = Vec::new();
        fused.on_timer(at + delay, WALL, timer, &mut out);
        assert!(out.is_empty(), "a heartbeat after the shutdown: {out:?}");
        assert!(!fused.takes_renew_reply_ahead(), "the tasks have stopped");
    }

    /// With a transport (one executor thread, so a run still counted would reject the next),
    /// the reply handled ahead arms the heartbeat the reference's reply arms, its
    /// bookkeeping waits for a later call into the client, and then the next run goes out as
    /// the reference's does; a second reply waits for the first to be carried out.
    #[test]
    fn a_renew_answered_ahead_through_a_transport_ends_its_run_when_applied() {
        let (mut fused, out) = supervised(1, false);
        let (mut reference, _) = supervised(1, false);
        fused.calls_answered_in_time();
        reference.calls_answered_in_time();
        let (delay, first) = armed(&out, Task::Heartbeat).unwrap();
        let at = SimTime(delay);
        let mut seqs = Vec::new();
        for c in [&mut fused, &mut reference] {
            let mut out = Vec::new();
            c.on_timer(at, WALL + delay, first, &mut out);
            seqs.push(sent(&out).expect("the renew"));
        }
        assert_eq!(seqs[0], seqs[1]);
        assert!(fused.takes_renew_reply_ahead());
        let mut ahead = Vec::new();
        fused.renew_answered_ahead(answered_ahead(seqs[0], at), &mut ahead);
        assert!(
            !fused.takes_renew_reply_ahead(),
            "one pending reply at a time"
        );
        let mut on_reply = Vec::new();
        let found = Reply::Renewed { found: true };
        reference.on_reply(at + 4, WALL, seqs[1], found, &[], &mut on_reply);
        let (ahead_delay, timer) = armed(&ahead, Task::Heartbeat).unwrap();
        assert_eq!(
            Some((ahead_delay - 4, timer)),
            armed(&on_reply, Task::Heartbeat)
        );

        fused.apply_pending_renew(0);
        assert!(
            !fused.takes_renew_reply_ahead(),
            "not before its place in the order"
        );
        fused.apply_pending_renew(1);
        assert!(fused.takes_renew_reply_ahead());
        let next = at + ahead_delay;
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        fused.on_timer(next, WALL, timer, &mut ours);
        reference.on_timer(next, WALL, timer, &mut theirs);
        assert!(sent(&ours).is_some(), "not rejected: {ours:?}");
        assert_eq!(ours, theirs);
    }

    /// The deferred replicator runs, against the reference that arms every run
    /// (`InstanceInfoReplicator#run` re-arms one interval after it ends, FACTS.md §5.4): idle
    /// runs arm nothing; once a status change leaves the InstanceInfo dirty (here with the
    /// listener off, so no on-demand update), the first run of the grid still to come is
    /// armed, at the instant and with the timer the reference's chain has pending, and it
    /// registers as the reference's does.
    #[test]
    fn idle_replicator_runs_are_deferred_until_the_instance_info_is_dirty() {
        let config = ClientConfig {
            fetch_registry: false,
            on_demand_update_status_change: false,
            ..ClientConfig::default()
        };
        let (mut deferred, mut reference) = (
            client(config.clone(), Train::Hoxton),
            client(config, Train::Hoxton),
        );
        deferred.defer_idle_replicator();
        let interval = deferred.replication_interval_ms();
        let mut first = None;
        let mut chain = None;
        for (c, defers) in [(&mut deferred, true), (&mut reference, false)] {
            let mut out = Vec::new();
            c.create(SimTime(0), WALL, ContextStart::Fixed(5_000), &mut out);
            // The first run is armed either way: starting marks the InstanceInfo dirty.
            first = replicator_armed(&out);
            let (delay, timer) = first.expect("the first run is armed");
            let mut out = Vec::new();
            c.on_timer(SimTime(delay), WALL + delay, timer, &mut out);
            let seq = sent(&out).expect("the first run registers");
            let mut out = Vec::new();
            let registered = Reply::Registered {
                why: RegisterWhy::Replicator,
            };
            let ended = SimTime(delay + 5);
            c.on_reply(ended, WALL + delay + 5, seq, registered, &[], &mut out);
            c.arm_deferred_replicator(ended, &mut out);
            chain = replicator_armed(&out);
            if defers {
                assert_eq!(chain, None, "an idle run is deferred");
            }
        }
        // Two idle runs of the reference, each re-arming one interval later.
        let (delay, mut next) = chain.expect("the reference re-arms");
        assert_eq!(delay, interval);
        let mut at = first.unwrap().0 + 5 + delay;
        for _ in 0..2 {
            let mut out = Vec::new();
            reference.on_timer(SimTime(at), WALL + at, next, &mut out);
            let (delay, timer) = replicator_armed(&out).expect("an idle run re-arms");
            assert_eq!(out.len(), 1, "an idle run only re-arms: {out:?}");
            assert_eq!(delay, interval);
            (at, next) = (at + delay, timer);
        }
        let changed = at - interval + 500;
        let mut out = Vec::new();
        deferred.set_instance_status(WALL + changed, InstanceStatus::Down, &mut out);
        deferred.arm_deferred_replicator(SimTime(changed), &mut out);
        let (delay, timer) = replicator_armed(&out).expect("armed once dirty");
        assert_eq!(changed + delay, at, "the reference's pending run");
        reference.set_instance_status(WALL + changed, InstanceStatus::Down, &mut Vec::new());
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        deferred.on_timer(SimTime(at), WALL + at, timer, &mut ours);
        reference.on_timer(SimTime(at), WALL + at, next, &mut theirs);
        assert!(matches!(
            ours[..],
            [ClientEffect::Send {
                call: Call::Register { .. },
                ..
            }]
        ));
        assert_eq!(ours, theirs);
    }
}
