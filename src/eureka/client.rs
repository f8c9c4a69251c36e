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

/// A task run by `TimedSupervisorTask` (FACTS.md §5.2, §0.3): a one-shot that re-arms itself
/// `delay` after its run ended. Each arm (and a cancel) starts a new generation, so a timer
/// armed before is stale when it fires.
///
/// With a transport (several servers, or faults) a call can outlast the interval, and the
/// supervisor's rules apply (`TimedSupervisorTask#run`): the run is submitted to the task's
/// executor and waited for `timeoutMillis` (the interval). Done in time: `delay` = the
/// interval, next run one delay after it ended. Timed out: `delay = min(maxDelay, delay x 2)`
/// (`maxDelay` = interval x `*-exponential-back-off-bound`), next run one delay after the
/// timeout, and `future.cancel(true)` interrupts a thread blocked in socket I/O, which a
/// blocking `java.net.Socket` ignores, so the body runs on to its end with its side effects
/// (a renew that lands, a fetch that is stored) but re-arms nothing. The executor
/// (`DiscoveryClient#initScheduledTasks`: `ThreadPoolExecutor(1, *-executor-thread-pool-size,
/// SynchronousQueue)`) runs at most that many bodies; a run submitted while all are busy is
/// rejected (`RejectedExecutionException`) and re-armed after the unchanged delay.
#[derive(Debug, Clone)]
struct SupervisedTask {
    task: Task,
    /// `timeoutMillis`: the interval, and the delay after a run done in time.
    interval_ms: u64,
    /// `maxDelay`: interval x the back-off bound.
    max_delay_ms: u64,
    /// The delay of the next arm.
    delay_ms: u64,
    generation: u32,
    /// The executor's threads (`*-executor-thread-pool-size`).
    pool_size: usize,
    /// Bodies still running on the executor, with a transport only: the current run's and
    /// those whose supervisor timed out.
    bodies: Vec<Body>,
    /// The current run's body (the sequence number of its call in flight), while the
    /// supervisor waits for it.
    current: Option<u32>,
}

/// A task body on an executor thread: its call in flight, and `fetchRegistryGeneration` as it
/// read it before the call (`DiscoveryClient#getAndStoreFullRegistry`, `#getAndUpdateDelta`
/// store what they fetched only if no other thread stored a fetch since).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Body {
    seq: u32,
    fetch_generation: u64,
}

impl SupervisedTask {
    fn new(task: Task, interval_ms: u64, back_off_bound: u32, pool_size: u32) -> SupervisedTask {
        SupervisedTask {
            task,
            interval_ms,
            max_delay_ms: interval_ms.saturating_mul(u64::from(back_off_bound)),
            delay_ms: interval_ms,
            generation: 0,
            pool_size: pool_size.max(1) as usize,
            bodies: Vec::new(),
            current: None,
        }
    }

    /// The run ended (or the task starts, or a run was rejected): the next one in one delay.
    #[inline]
    fn arm(&mut self, out: &mut impl ClientOutput) {
        self.generation += 1;
        let (task, generation) = (self.task, self.generation);
        out.arm(self.delay_ms, ClientTimer::Task { task, generation });
    }

    /// Steady start: the next run `delay_ms` from now (a phase of the interval).
    fn arm_in(&mut self, delay_ms: u64, out: &mut impl ClientOutput) {
        self.generation += 1;
        let (task, generation) = (self.task, self.generation);
        out.arm(delay_ms, ClientTimer::Task { task, generation });
    }

    /// The executor is shut down: the armed run never happens.
    fn cancel(&mut self) {
        self.generation += 1;
    }

    fn armed_with(&self, generation: u32) -> bool {
        self.generation == generation
    }

    /// Every thread of the executor runs a body: a submit is rejected.
    fn saturated(&self) -> bool {
        self.bodies.len() >= self.pool_size
    }

    /// A run begins with call `seq`; the supervisor gives up on it one interval later
    /// (`arm_timeout`: unless that timer could only arrive after the run ended, when it is a
    /// no-op and is not armed; [`DiscoveryClient::calls_answered_in_time`]).
    fn begin(
        &mut self,
        seq: u32,
        fetch_generation: u64,
        arm_timeout: bool,
        out: &mut impl ClientOutput,
    ) {
        self.bodies.push(Body {
            seq,
            fetch_generation,
        });
        self.current = Some(seq);
        if arm_timeout {
            let (task, generation) = (self.task, self.generation);
            out.arm(
                self.interval_ms,
                ClientTimer::TaskTimeout { task, generation },
            );
        }
    }

    /// `future.get` timed out: back off; the body runs on, abandoned.
    fn timed_out(&mut self, out: &mut impl ClientOutput) {
        self.delay_ms = self.max_delay_ms.min(self.delay_ms.saturating_mul(2));
        self.current = None;
        self.arm(out);
    }

    fn body(&self, seq: u32) -> Option<Body> {
        self.bodies.iter().copied().find(|b| b.seq == seq)
    }

    /// The body whose call was `seq` goes on with call `next` (a retry on the next server, a
    /// re-register, a full fetch), which read `fetch_generation`.
    fn goes_on(&mut self, seq: u32, next: u32, fetch_generation: u64) {
        if let Some(body) = self.bodies.iter_mut().find(|b| b.seq == seq) {
            *body = Body {
                seq: next,
                fetch_generation,
            };
        }
        if self.current == Some(seq) {
            self.current = Some(next);
        }
    }

    /// The body whose call was `seq` is over. If the supervisor still waited for it, the run
    /// was done in time: the delay is the interval again and the task re-arms.
    fn ended(&mut self, seq: u32, out: &mut impl ClientOutput) {
        if self.ended_armed_ahead(seq) {
            self.arm(out);
        }
    }

    /// [`SupervisedTask::ended`] whose re-arm was done ahead, when the reply was handled
    /// ([`DiscoveryClient::renew_answered_ahead`]): whether the run was done in time.
    fn ended_armed_ahead(&mut self, seq: u32) -> bool {
        self.bodies.retain(|b| b.seq != seq);
        let in_time = self.current == Some(seq);
        if in_time {
            self.current = None;
            self.delay_ms = self.interval_ms;
        }
        in_time
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
    fn constructed_fetch(&mut self, now: SimTime, wall_ms: u64, out: &mut impl ClientOutput) {
        if self.config.register_with_eureka && self.config.should_enforce_registration_at_init {
            self.send_register(now, RegisterWhy::Init, out);
        } else {
            self.init_scheduled_tasks(now, wall_ms, out);
        }
    }

    /// `DiscoveryClient#initScheduledTasks`: cache refresh at +fetch interval, heartbeat at
    /// +renewal interval, replicator started (InstanceInfo marked dirty) at +initial delay, and
    /// the status-change listener. Then the context goes on to start the web server.
    fn init_scheduled_tasks(&mut self, now: SimTime, wall_ms: u64, out: &mut impl ClientOutput) {
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
    fn on_call_failed(
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
    fn replicator_stop_deadline(&mut self, now: SimTime, out: &mut impl ClientOutput) {
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
    fn continue_shutdown(&mut self, now: SimTime, out: &mut impl ClientOutput) {
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

/// `InstanceInfoReplicator` (FACTS.md §5.4).
impl DiscoveryClient {
    /// `DiscoveryClient#register`: POST the client's current InstanceInfo.
    fn send_register(&mut self, now: SimTime, why: RegisterWhy, out: &mut impl ClientOutput) {
        let info = self.registrant();
        self.send(now, Call::Register { info, why }, out);
    }

    /// `InstanceInfoReplicator#onDemandUpdate`: rate-limited (burst 2, FACTS.md §5.4); a refused
    /// update is dropped and the dirty InstanceInfo goes out at the next periodic run.
    fn replicator_on_demand_update(&mut self, wall_ms: u64, out: &mut impl ClientOutput) {
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
    fn replicator_on_demand(&mut self, now: SimTime, wall_ms: u64, out: &mut impl ClientOutput) {
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
    fn replicator_run(&mut self, now: SimTime, wall_ms: u64, out: &mut impl ClientOutput) {
        self.refresh_instance_info(wall_ms, out);
        if self.info.dirty {
            self.replicator.busy = Some(self.info.last_dirty);
            self.send_register(now, RegisterWhy::Replicator, out);
        } else {
            self.replicator_run_finished(now, wall_ms, out);
        }
    }

    #[inline]
    fn replicator_run_finished(&mut self, now: SimTime, wall_ms: u64, out: &mut impl ClientOutput) {
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
    /// the DOWN triggers first turns the status back to UP and registers UP: the issue's log
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
    fn refresh_instance_info(&mut self, wall_ms: u64, out: &mut impl ClientOutput) {
        if !self.config.healthcheck_enabled
            || self.shutdown != ShutdownPhase::Running
            || self.info.status == InstanceStatus::Starting
        {
            return;
        }
        self.set_instance_status(wall_ms, InstanceStatus::Up, out);
    }
}

/// The local registry: full and delta fetches (FACTS.md §4, §5.5).
impl DiscoveryClient {
    /// `DiscoveryClient#fetchRegistry` for the periodic task (FACTS.md §4 "Client rule"): a full
    /// fetch when `eureka.client.disable-delta` is set or the local registry is empty
    /// (`getRegisteredApplications().size() == 0`, which also covers a never-fetched client's
    /// version -1), else a delta.
    fn fetch_registry(&mut self, now: SimTime, out: &mut impl ClientOutput) {
        let empty = self
            .cache
            .as_ref()
            .is_none_or(|local| local.statuses.iter().all(Option::is_none));
        let call = if self.config.disable_delta || empty {
            Call::FetchAll {
                why: FetchWhy::Periodic,
            }
        } else {
            Call::FetchDelta
        };
        self.send(now, call, out);
    }

    /// Stores a fetched registry: the client keeps every status but hands out only UP instances
    /// (`filter-only-up-instances`), reshuffled after every fetch (FACTS.md §5.5).
    fn apply_fetch(
        &mut self,
        server: ServerId,
        payload: Rc<Payload>,
        applications: &[usize],
        out: &mut impl ClientOutput,
    ) {
        let previous = self.cache.replace(Rc::clone(&payload));
        // A version numbers one server incarnation's generations of its cache only: another
        // peer's payload, or a restarted peer's (numbered from 0 again), can carry the same
        // number with other contents (Netflix/eureka#1490's partial registry), so the contents
        // decide too. A new generation with the same contents still counts as a change.
        let changed = previous
            .as_ref()
            .is_none_or(|old| old.version != payload.version || old.statuses != payload.statuses);
        self.shuffle_up_lists(applications, out);
        let observer = self.id;
        out.observe(Observation::Fetched {
            server,
            observer,
            changed,
            delta: false,
        });
        if changed {
            for q in 0..payload.statuses.len() {
                let was = previous.as_ref().is_some_and(|old| old.is_up(q));
                let is = payload.is_up(q);
                if was != is {
                    out.observe(Observation::ClientCache {
                        server,
                        observer,
                        process: q,
                        up: is,
                    });
                }
            }
        }
    }

    /// `Applications#shuffleInstances(filterOnlyUp)` after every fetch, full or delta: rebuilds
    /// the per-application lists callers read from the local registry (`applications[q]`: the
    /// application of process `q`), with only UP instances when `filter-only-up-instances`
    /// (default true), else with every instance the registry holds, whatever its status
    /// (`Application#_shuffleAndStoreInstances`; FACTS.md §5.5, §14). Ribbon filters UP again
    /// itself (`update_server_list`); Spring Cloud LoadBalancer does not
    /// (`EurekaDiscoveryClient#getInstances`).
    fn shuffle_up_lists(&mut self, applications: &[usize], out: &mut impl ClientOutput) {
        let Some(payload) = self.cache.clone() else {
            return;
        };
        if self.members.len() != self.called.len() {
            self.members = members_of(&self.called, applications);
        }
        let only_up = self.config.filter_only_up_instances;
        let mut lists = std::mem::take(&mut self.up_lists);
        lists.clear();
        for (&application, members) in self.called.iter().zip(&self.members) {
            // The same list, in the same order, as a scan of the whole registry in process
            // order keeping `applications[q] == application`.
            let mut list: Vec<ProcessId> = Vec::with_capacity(members.len());
            for &q in members {
                let listed = match payload.statuses.get(q) {
                    Some(Some(s)) => !only_up || *s == InstanceStatus::Up,
                    _ => false,
                };
                if listed {
                    list.push(q);
                }
            }
            shuffle(&mut list, &mut self.rng);
            lists.push((application, list));
        }
        self.up_lists = lists;
        if !self.called.is_empty() {
            out.lists_changed();
        }
    }

    /// `DiscoveryClient#getAndUpdateDelta` with a non-200 answer: the delta is null, so the same
    /// run does a full fetch (`getAndStoreFullRegistry`) instead.
    fn on_delta_forbidden(&mut self, now: SimTime, seq: u32, out: &mut impl ClientOutput) {
        if !self.tasks_running {
            return;
        }
        out.observe(Observation::DeltaForbidden { observer: self.id });
        let call = Call::FetchAll {
            why: FetchWhy::Periodic,
        };
        self.send(now, call, out);
        self.run_goes_on(Task::CacheRefresh, seq);
    }

    /// `DiscoveryClient#getAndUpdateDelta` with a 200: `updateDelta` (apply, then shuffle), then
    /// compare the local reconcile hash with the payload's `appsHashCode`; on a mismatch
    /// `reconcileAndLogDifference` fetches the full registry once more in the same run, else the
    /// run is over and the task re-arms.
    fn on_delta_fetched(
        &mut self,
        now: SimTime,
        (from, seq): (ServerId, u32),
        payload: &DeltaPayload,
        applications: &[usize],
        out: &mut impl ClientOutput,
    ) {
        if !self.tasks_running {
            return;
        }
        if !self.fetch_stores(seq) {
            // "Not updating application delta as another thread is updating it already".
            return self.run_ended(Task::CacheRefresh, seq, out);
        }
        let changes = self.update_delta(payload);
        self.shuffle_up_lists(applications, out);
        let observer = self.id;
        out.observe(Observation::Fetched {
            server: from,
            observer,
            changed: !changes.is_empty(),
            delta: true,
        });
        for (q, up) in changes {
            out.observe(Observation::ClientCache {
                server: from,
                observer,
                process: q,
                up,
            });
        }
        let local = self
            .cache
            .as_ref()
            .map_or_else(ReconcileHash::default, |l| l.reconcile_hash());
        let server = payload.content.apps_hash;
        if local == server {
            return self.run_ended(Task::CacheRefresh, seq, out);
        }
        out.observe(Observation::ReconcileMismatch {
            observer,
            hashes: Box::new(HashPair {
                local: local.to_string(),
                server: server.to_string(),
            }),
        });
        let call = Call::FetchAll {
            why: FetchWhy::Reconcile,
        };
        self.send(now, call, out);
        self.run_goes_on(Task::CacheRefresh, seq);
    }

    /// Applies a delta to the local registry if it changes something. The new registry is
    /// shared with every client that applied the same payload to the same registry
    /// ([`AppliedDeltas`]), so a fleet holds a few registries rather than one per client.
    /// Returns the instances whose UP-ness changed.
    fn update_delta(&mut self, payload: &DeltaPayload) -> Vec<(ProcessId, bool)> {
        let delta = &payload.content;
        let local = self.cache.get_or_insert_with(|| {
            Rc::new(Payload {
                version: LOCAL_VERSION,
                generated_at: SimTime(0),
                statuses: Vec::new(),
                hash: Default::default(),
            })
        });
        if !delta_changes(&local.statuses, delta) {
            return Vec::new();
        }
        let mut changes = Vec::new();
        let updated = payload.applied.get_or_build(local, |base| {
            let mut statuses = base.statuses.clone();
            apply_delta(&mut statuses, delta, |_, _, _| {});
            Payload {
                version: LOCAL_VERSION,
                generated_at: base.generated_at,
                statuses,
                hash: Default::default(),
            }
        });
        let up = Some(InstanceStatus::Up);
        for &(q, _) in &delta.instances {
            let (old, new) = (
                local.statuses.get(q).copied(),
                updated.statuses.get(q).copied(),
            );
            if let (Some(old), Some(new)) = (old, new)
                && (old == up) != (new == up)
            {
                changes.push((q, new == up));
            }
        }
        *local = updated;
        changes
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
        let interval = c.config().lease_renewal_interval_s * 1000;
        let (late, _, next, at) = run_and_time_out(&mut c, Task::Heartbeat, &effects, interval);
        let (delay, timer) = armed(&next, Task::Heartbeat).unwrap();
        assert_eq!(delay, 2 * interval);

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

        // The next run is answered in time: the delay is the interval again.
        let now = at + delay;
        let mut out = Vec::new();
        c.on_timer(SimTime(now), WALL + now, timer, &mut out);
        let seq = sent(&out).unwrap();
        let mut out = Vec::new();
        c.on_reply(SimTime(now + 3), WALL, seq, renewed, &[], &mut out);
        assert_eq!(armed(&out, Task::Heartbeat).map(|a| a.0), Some(interval));
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
        let interval = c.config().registry_fetch_interval_s * 1000;
        let (old, _, next, at) = run_and_time_out(&mut c, Task::CacheRefresh, &effects, interval);
        let (delay, timer) = armed(&next, Task::CacheRefresh).unwrap();
        assert_eq!(delay, 2 * interval);

        let now = at + delay;
        let mut out = Vec::new();
        c.on_timer(SimTime(now), WALL + now, timer, &mut out);
        let seq = sent(&out).unwrap();
        let periodic = |version| Reply::Fetched {
            why: FetchWhy::Periodic,
            payload: payload(version),
        };
        let mut out = Vec::new();
        c.on_reply(SimTime(now + 3), WALL, seq, periodic(2), &[], &mut out);
        assert_eq!(armed(&out, Task::CacheRefresh).map(|a| a.0), Some(interval));
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
        assert_eq!(
            out,
            [ClientEffect::Send {
                server: ServerId::FIRST,
                seq: 0,
                call: Call::Cancel
            }]
        );
        let mut out = Vec::new();
        hoxton.on_reply(SimTime(4_010), WALL, 0, Reply::Cancelled, &[], &mut out);
        assert_eq!(out, [ClientEffect::ShutdownDone]);

        let (mut dalston, _) = started(Train::Dalston);
        let mut out = Vec::new();
        dalston.shutdown(SimTime(1_000), &mut out);
        assert_eq!(
            out,
            [ClientEffect::Send {
                server: ServerId::FIRST,
                seq: 0,
                call: Call::Cancel
            }]
        );
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
