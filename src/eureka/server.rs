//! The Eureka server: registry, response cache and its five timers (FACTS.md §2, §3, §4, §2.7).
//!
//! Start-up order (FACTS.md §2.7): the registry (whose constructor starts the delta-retention
//! timer, FACTS.md §4) and the response cache with its wall-clock
//! aligned fill timer, the renewal-threshold updater (`init()`), then `openForTraffic` and
//! `postInit()`: the renews-last-minute roll and the eviction timer, both 60 s / one eviction
//! period later. The roll is scheduled before the eviction run, so when both fall on the same
//! millisecond the roll runs first (the queue is FIFO on ties) and eviction sees the window that
//! just closed.

use crate::engine::{RngStream, SimTime};
use crate::scenario::{Release, Scenario, ServerConfig, Start};

use std::rc::Rc;

use super::delta::RecentlyChangedQueue;
use super::ids::{ProcessId, ServerId};
use super::observe::{Holding, Observation};
use super::protocol::{
    BatchOutcome, Call, DeltaPayload, ItemReply, Payload, Registrant, Replicated, ReplicationBatch,
    ReplicationTask, Reply,
};
use super::registry::{DirtyCheck, Registry, RenewOutcome};
use super::replication::{
    PeerAction, PeerReplicator, ReplicatorEffect, override_from_peer, task_expiry,
};
use super::response_cache::{ResponseCache, first_fill_delay};
use super::status::InstanceStatus;

/// `MeasuredRate(60 * 1000)`: the renews-last-minute window is fixed at one minute.
pub const RENEWS_WINDOW_MS: u64 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerTimer {
    Eviction,
    RenewsRoll,
    CacheFill,
    ThresholdUpdate,
    /// `AbstractInstanceRegistry#getDeltaRetentionTask` (FACTS.md §4).
    DeltaRetention,
    /// The batching dispatcher to the server's `peer`-th peer (an index into its replication
    /// set, in service-url order); stale unless `generation` is the dispatcher's.
    Replicate {
        peer: u32,
        generation: u32,
    },
}

/// Where a server transition puts what it asks of the world, in the order it asks: the world
/// (which reports and schedules at once, without a buffer: the server's calls are the
/// simulation's hottest path) or a `Vec<ServerEffect>` (tests).
pub trait ServerOutput {
    /// Report this observation now.
    fn observe(&mut self, observation: Observation);
    /// Arm this timer to fire `delay_ms` from now.
    fn arm(&mut self, delay_ms: u64, timer: ServerTimer);
    /// `POST peerreplication/batch/` to `peer`; its outcome comes back through
    /// [`EurekaServer::on_batch_outcome`].
    fn send_batch(&mut self, peer: ServerId, batch: Rc<ReplicationBatch>);
}

/// A server's request of the world, as data.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEffect {
    /// Report this observation now.
    Observe(Observation),
    /// Arm this timer to fire `delay_ms` from now.
    Arm { delay_ms: u64, timer: ServerTimer },
    /// Send this batch to `peer`.
    SendBatch {
        peer: ServerId,
        batch: Rc<ReplicationBatch>,
    },
}

impl ServerOutput for Vec<ServerEffect> {
    fn observe(&mut self, observation: Observation) {
        self.push(ServerEffect::Observe(observation));
    }

    fn arm(&mut self, delay_ms: u64, timer: ServerTimer) {
        self.push(ServerEffect::Arm { delay_ms, timer });
    }

    fn send_batch(&mut self, peer: ServerId, batch: Rc<ReplicationBatch>) {
        self.push(ServerEffect::SendBatch { peer, batch });
    }
}

/// One peer this server replicates to (`PeerEurekaNode`) and its dispatcher.
struct Peer {
    id: ServerId,
    replicator: PeerReplicator,
}

/// One Eureka server: its registry, response cache and delta queue, and its timers' rules. It
/// never sees the world: it is told the time and the calls, and returns its reply and
/// effects ([`ServerOutput`]).
pub struct EurekaServer {
    /// Which server of the world it is (on its observations).
    pub id: ServerId,
    /// Bumped when a `[[fault]]` restarts the peer: the previous incarnation's timers and
    /// batch answers are stale.
    pub incarnation: u32,
    pub registry: Registry,
    pub cache: ResponseCache,
    /// The `ALL_APPS_DELTA` key of the same response cache.
    pub delta_cache: ResponseCache<DeltaPayload>,
    /// `recentlyChangedQueue`, which delta payloads are built from.
    pub recently_changed: RecentlyChangedQueue,
    config: ServerConfig,
    rng: RngStream,
    /// When the previous eviction run started (for the compensation time).
    last_eviction: Option<SimTime>,
    /// UP-ness of each process in the registry and in the served payload, as last observed.
    registry_up: Vec<bool>,
    served_up: Vec<bool>,
    /// Steady start: when the renews-last-minute roll first runs (ms).
    renews_roll_due_ms: u64,
    /// The peers it replicates to (`PeerEurekaNodes`), none for a standalone server.
    peers: Vec<Peer>,
    /// The replicators' effects, reused between calls.
    scratch: Vec<ReplicatorEffect>,
    /// `shouldAllowAccess` is false up to this instant (inclusive): the server opened with an
    /// effective count of 0 (`peerInstancesTransferEmptyOnStartup`), so GET /apps and
    /// /apps/delta answer 403 for `wait-time-in-ms-when-sync-empty`.
    reads_refused_until: Option<SimTime>,
    /// Whether a renew is reported (`Observation::Renewed`): off where no observer reads it
    /// ([`EurekaServer::report_renewals`]).
    reports_renewals: bool,
}

impl EurekaServer {
    /// The standalone server (`[server]`), `ServerId::FIRST`.
    pub fn new(scenario: &Scenario, processes: usize, rng: RngStream) -> EurekaServer {
        let release = scenario.simulation.release;
        EurekaServer::peer(ServerId::FIRST, &scenario.server, release, processes, rng)
    }

    /// Server `id` of a cluster with configuration `config`.
    pub fn peer(
        id: ServerId,
        config: &ServerConfig,
        release: Release,
        processes: usize,
        rng: RngStream,
    ) -> EurekaServer {
        let config = config.clone();
        EurekaServer {
            id,
            incarnation: 0,
            registry: Registry::new(processes, &config, release),
            cache: ResponseCache::new(
                config.use_read_only_response_cache,
                config.response_cache_auto_expiration_s * 1000,
            ),
            delta_cache: ResponseCache::new(
                config.use_read_only_response_cache,
                config.response_cache_auto_expiration_s * 1000,
            ),
            recently_changed: RecentlyChangedQueue::new(
                processes,
                config.retention_time_in_ms_in_delta_queue,
            ),
            config,
            rng,
            last_eviction: None,
            registry_up: vec![false; processes],
            served_up: vec![false; processes],
            reads_refused_until: None,
            renews_roll_due_ms: 0,
            peers: Vec::new(),
            scratch: Vec::new(),
            reports_renewals: true,
        }
    }

    /// Whether renews are reported (on by default). The world turns it off where its observer
    /// reads no `Observation::Renewed` (`Observer::reads_renewals`): on the production fleet
    /// those were 1.3 million observations in 20 simulated minutes), and they change
    /// nothing in the server.
    pub fn report_renewals(&mut self, on: bool) {
        self.reports_renewals = on;
    }

    /// `PeerEurekaNodes#resolvePeerUrls`: the peers this server replicates to, in its
    /// service-url order, itself excluded by the caller (`#isThisMyUrl`).
    pub fn replicate_to(&mut self, peers: &[ServerId]) {
        self.peers = peers
            .iter()
            .map(|&id| Peer {
                id,
                replicator: PeerReplicator::default(),
            })
            .collect();
    }

    /// `peer-node-connect-timeout-ms` and `peer-node-read-timeout-ms` (its batches' HTTP).
    pub fn peer_timeouts_ms(&self) -> (u64, u64) {
        (
            self.config.peer_node_connect_timeout_ms,
            self.config.peer_node_read_timeout_ms,
        )
    }

    /// The peers it replicates to, in order.
    pub fn replication_targets(&self) -> Vec<ServerId> {
        self.peers.iter().map(|p| p.id).collect()
    }

    /// `eviction-interval-timer-in-ms` of this server.
    pub fn eviction_interval_ms(&self) -> u64 {
        self.config.eviction_interval_ms
    }

    /// A draw in `[0, n)` from the server's own stream (a peer's cold-start instant).
    pub fn draw_below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    fn compensation_ms(&mut self, now: SimTime) -> u64 {
        let previous = self.last_eviction.replace(now);
        compensation_ms(previous, now, self.config.eviction_interval_ms)
    }

    /// Delay until a fixed-delay `java.util.Timer` task runs again: one period after this run
    /// started, plus this model's wake-up lateness.
    fn timer_delay(&mut self, period_ms: u64) -> u64 {
        period_ms + self.rng.between(0, self.config.timer_lateness_ms)
    }
}

impl EurekaServer {
    /// Why this server still lists `p` at `now`, if it does: the registry's reason
    /// ([`Registry::holding`]) while it is UP there, else [`Holding::ResponseCache`] while
    /// `GET /apps` still serves it UP.
    pub fn holding(&self, now: SimTime, p: ProcessId, renewing: bool) -> Option<Holding> {
        self.registry
            .holding(now, p, renewing)
            .or_else(|| self.served_up[p].then_some(Holding::ResponseCache))
    }
}

impl EurekaServer {
    /// Server bootstrap (see the module doc for the order).
    pub fn start(&mut self, now: SimTime, wall_now_ms: u64, out: &mut impl ServerOutput) {
        self.bootstrap(wall_now_ms, Start::Cold, out);
        self.refuse_reads_if_opened_empty(now);
    }

    /// `PeerAwareInstanceRegistryImpl#openForTraffic(count)` leaves
    /// `peerInstancesTransferEmptyOnStartup` true only for a count of 0, and Spring Cloud's
    /// `InstanceRegistry#openForTraffic` passes `default-open-for-traffic-count` (1) when the
    /// start-up sync found nobody (it never syncs: `registry-sync-retries` 0). So only a
    /// default count set to 0 opens the window: `shouldAllowAccess` refuses reads while
    /// `now <= startupTime + wait-time-in-ms-when-sync-empty` (FACTS.md §2.7).
    fn refuse_reads_if_opened_empty(&mut self, now: SimTime) {
        if self.config.default_open_for_traffic_count == 0 {
            self.reads_refused_until = Some(now + self.config.wait_time_in_ms_when_sync_empty);
        }
    }

    /// Whether no read from `now` on can change anything here: both keys of the
    /// response cache are served from its read-only level and already in it (a read then only
    /// looks them up, `ResponseCache::get`), deltas are served (no 403 and the full fetch it
    /// brings), and reads are never refused again (`shouldAllowAccess`). Holds as long as the
    /// server is not restarted, which only a `[[fault]]` does.
    pub fn reads_change_nothing(&self, now: SimTime) -> bool {
        self.cache.uses_read_only()
            && self.cache.served().is_some()
            && self.delta_cache.served().is_some()
            && !self.config.disable_delta
            && self.reads_refused_until.is_none_or(|until| until < now)
    }

    /// `#shouldAllowAccess` is false now (`ApplicationsResource#getContainers`,
    /// `#getContainerDifferential` answer 403).
    fn refuses_reads(&self, now: SimTime) -> bool {
        self.reads_refused_until.is_some_and(|until| now <= until)
    }

    /// `simulation.start = "steady"`: the server as after a long uptime. Every periodic timer
    /// (delta retention, threshold update, renews roll, eviction) is at an independent uniform
    /// phase in `(0, period]`, drawn from the server's stream (`java.util.Timer` fixed-delay
    /// tasks drift apart with their lateness over days); the read-only fill stays on the wall
    /// clock, whose offset is already random. The registry is opened as [`EurekaServer::start`]
    /// opens it; [`EurekaServer::restore`] then adds the registrations and
    /// [`EurekaServer::settle_caches`] fills the caches.
    pub fn start_steady(&mut self, wall_now_ms: u64, out: &mut impl ServerOutput) {
        self.bootstrap(wall_now_ms, Start::Steady, out);
    }

    /// Arms the timers in the order of the module doc and opens the registry. A timer's first
    /// run: one period after the start (plus the model's lateness), or on a steady start a
    /// uniform phase of its period.
    fn bootstrap(&mut self, wall_now_ms: u64, start: Start, out: &mut impl ServerOutput) {
        out.observe(Observation::ServerStarted { server: self.id });
        let first_run = |server: &mut EurekaServer, period: u64| match start {
            Start::Cold => server.timer_delay(period),
            Start::Steady => server.rng.phase(period),
        };
        // The registry constructor: `Timer("Eureka-DeltaRetentionTimer")`, delay = period.
        let delay = first_run(self, self.config.delta_retention_timer_interval_ms);
        out.arm(delay, ServerTimer::DeltaRetention);
        let fill_interval = self.config.response_cache_update_interval_ms;
        if self.cache.uses_read_only() {
            let first = first_fill_delay(wall_now_ms, fill_interval);
            let lateness = self.timer_delay(0);
            out.arm(first + lateness, ServerTimer::CacheFill);
        }
        let delay = first_run(self, self.config.renewal_threshold_update_interval_ms);
        out.arm(delay, ServerTimer::ThresholdUpdate);
        // registry-sync-retries = 0: syncUp finds nothing, openForTraffic(0 -> default count).
        let count = i64::from(self.config.default_open_for_traffic_count);
        self.registry.open_for_traffic(count);
        let delay = first_run(self, RENEWS_WINDOW_MS);
        self.renews_roll_due_ms = delay;
        out.arm(delay, ServerTimer::RenewsRoll);
        let delay = first_run(self, self.config.eviction_interval_ms);
        out.arm(delay, ServerTimer::Eviction);
    }

    /// Steady start: `p` registered long ago and has renewed every `interval_ms` since, the
    /// next renew due at `next_renew_ms` (in `(0, interval]`). Its renews are counted into the two buckets of renews-last-minute ([`renews_in_windows`]). Nothing
    /// enters the delta queue: the registrations are older than its retention.
    pub fn restore(
        &mut self,
        p: ProcessId,
        registrant: Registrant,
        next_renew_ms: u64,
        interval_ms: u64,
        out: &mut impl ServerOutput,
    ) {
        let last_renew = next_renew_ms as i64 - interval_ms as i64;
        self.registry.restore(p, registrant, last_renew);
        if let Some(entry) = self.registry.entry(p) {
            self.recently_changed.restore_holder(p, entry.info.status);
        }
        let (last, current) =
            renews_in_windows(next_renew_ms, interval_ms, self.renews_roll_due_ms);
        let rate = &mut self.registry.renews_last_min;
        let (l, c) = (rate.count(), rate.current());
        rate.restore(l + last, c + current);
        self.note_registry(p, out);
    }

    /// Steady start, after the registrations: both keys clients read (`ALL_APPS`,
    /// `ALL_APPS_DELTA`) have been read long ago, so both levels hold them: the registry as it
    /// is, and an empty delta (the registrations are older than the delta queue's retention).
    pub fn settle_caches(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        let server = &mut *self;
        let registry = &server.registry;
        let (payload, _) = server.cache.get(now, || registry.statuses());
        let changed = &server.recently_changed;
        server
            .delta_cache
            .get(now, || changed.delta_content(&registry.statuses()));
        self.note_served(&payload, out);
    }

    /// Steady start: the 15-minute `updateRenewalThreshold` has run many times, which leaves
    /// the threshold where one run leaves it (its reset is idempotent).
    pub fn settle_threshold(&mut self, embedded_client_up_count: i64) {
        self.registry
            .update_renewal_threshold(embedded_client_up_count);
    }

    /// What `GET /apps` serves now (the read-only level, or the read-write one when off).
    pub fn served_payload(&mut self, now: SimTime) -> Rc<Payload> {
        let server = &mut *self;
        let registry = &server.registry;
        if let Some(payload) = server.cache.served() {
            return Rc::clone(payload);
        }
        server.cache.get(now, || registry.statuses()).0
    }

    pub fn on_timer(
        &mut self,
        now: SimTime,
        timer: ServerTimer,
        embedded_client_up_count: impl FnOnce() -> i64,
        out: &mut impl ServerOutput,
    ) {
        let period = match timer {
            ServerTimer::Eviction => {
                self.run_eviction(now, out);
                self.config.eviction_interval_ms
            }
            ServerTimer::RenewsRoll => {
                self.registry.renews_last_min.roll();
                RENEWS_WINDOW_MS
            }
            ServerTimer::CacheFill => {
                self.fill_read_only_cache(now, out);
                self.config.response_cache_update_interval_ms
            }
            ServerTimer::ThresholdUpdate => {
                let count = embedded_client_up_count();
                self.registry.update_renewal_threshold(count);
                self.config.renewal_threshold_update_interval_ms
            }
            ServerTimer::DeltaRetention => {
                self.recently_changed.purge(now);
                self.config.delta_retention_timer_interval_ms
            }
            ServerTimer::Replicate { peer, generation } => {
                // Not periodic: the dispatcher re-arms itself for its next batch.
                self.on_dispatch(now, peer as usize, generation, out);
                return;
            }
        };
        let delay = self.timer_delay(period);
        out.arm(delay, timer);
    }

    /// `EvictionTask#run` -> `evict(compensationTimeMs)`.
    fn run_eviction(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        let compensation = self.compensation_ms(now);
        let renews = self.registry.renews_last_min.count();
        let threshold = self.registry.threshold();
        let server = &mut *self;
        let run = server.registry.evict(now, compensation, &mut server.rng);
        out.observe(Observation::EvictionRun {
            server: self.id,
            gated: run.gated,
            renews_last_min: renews,
            threshold,
            expired: run.expired,
            evicted: run.evicted.len(),
        });
        if run.evicted.is_empty() {
            return;
        }
        for &p in &run.evicted {
            self.recently_changed.cancelled(now, p);
            out.observe(Observation::Evicted {
                server: self.id,
                process: p,
            });
            self.note_registry(p, out);
        }
        self.invalidate_cache(now, out);
    }

    /// The cache-fill timer's task, for every key in the read-only level (`ALL_APPS`, then
    /// `ALL_APPS_DELTA`).
    fn fill_read_only_cache(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        let server = &mut *self;
        let registry = &server.registry;
        let full = server.cache.tick(now, || registry.statuses());
        let changed = &server.recently_changed;
        let delta = server
            .delta_cache
            .tick(now, || changed.delta_content(&registry.statuses()));
        if let Some(payload) = full {
            out.observe(Observation::ReadOnlyRefreshed { server: self.id });
            self.note_served(&payload, out);
        } else if delta.is_some() {
            self.note_served_by_delta(out);
        }
    }

    /// What a server serves while its `ALL_APPS` key has never been read (a restarted peer
    /// whose readers fetch deltas; at a start every reader's first fetch is a full one, and a
    /// steady start holds both keys): its readers are served through `ALL_APPS_DELTA`, whose
    /// payload was just generated from the registry (the key's first read, or a tick that
    /// replaced it: `ResponseCache::tick` only replaces with a payload loaded now), and a
    /// reader that applies it holds what the registry held then (its reconcile hash checks
    /// that). So that registry is what the server serves, until `GET /apps` is read.
    fn note_served_by_delta(&mut self, out: &mut impl ServerOutput) {
        if self.cache.served().is_some() {
            return;
        }
        let statuses = self.registry.statuses();
        let up = |p: usize| statuses.get(p).copied().flatten() == Some(InstanceStatus::Up);
        self.note_served_with(up, out);
    }

    /// `invalidateCache`: with the read-only level off, a GET regenerates at once, so the served
    /// view is refreshed here (nothing can change the registry between now and that GET without
    /// invalidating again).
    fn invalidate_cache(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        self.cache.invalidate();
        self.delta_cache.invalidate();
        if !self.cache.uses_read_only() {
            let server = &mut *self;
            let registry = &server.registry;
            let (payload, _) = server.cache.get(now, || registry.statuses());
            self.note_served(&payload, out);
        }
    }

    /// Emits a registry observation if `p`'s UP-ness there changed.
    fn note_registry(&mut self, p: ProcessId, out: &mut impl ServerOutput) {
        let up = self.registry.is_up(p);
        if self.registry_up[p] != up {
            self.registry_up[p] = up;
            let server = self.id;
            out.observe(Observation::Registry {
                server,
                process: p,
                up,
            });
        }
    }

    /// The server goes down (a crash, or a restart's down time): nothing it listed is listed
    /// by it any more, in its registry or in what it serves.
    pub fn go_down(&mut self, out: &mut impl ServerOutput) {
        let server = self.id;
        for p in 0..self.registry_up.len() {
            if std::mem::take(&mut self.registry_up[p]) {
                out.observe(Observation::Registry {
                    server,
                    process: p,
                    up: false,
                });
            }
            if std::mem::take(&mut self.served_up[p]) {
                out.observe(Observation::Served {
                    server,
                    process: p,
                    up: false,
                });
            }
        }
    }

    /// Emits served-view observations for every process whose UP-ness differs in `payload`.
    fn note_served(&mut self, payload: &Rc<Payload>, out: &mut impl ServerOutput) {
        self.note_served_with(|p| payload.is_up(p), out);
    }

    /// Emits served-view observations for every process whose UP-ness `up(p)` differs.
    fn note_served_with(&mut self, up: impl Fn(ProcessId) -> bool, out: &mut impl ServerOutput) {
        for p in 0..self.served_up.len() {
            let up = up(p);
            if self.served_up[p] != up {
                self.served_up[p] = up;
                let server = self.id;
                out.observe(Observation::Served {
                    server,
                    process: p,
                    up,
                });
            }
        }
    }

    /// A REST call arrives: the resource handles it at once and replies. A successful
    /// register, renew, cancel or status change is then queued for every peer
    /// (`PeerAwareInstanceRegistryImpl#register/#renew/#cancel/#statusUpdate/
    /// #deleteStatusOverride` replicate only what succeeded locally, and a register always).
    pub fn on_call(
        &mut self,
        now: SimTime,
        from: ProcessId,
        call: Call,
        out: &mut impl ServerOutput,
    ) -> Reply {
        match call {
            Call::Register { info, why } => {
                let kept_holder = self.apply_register(now, from, info, None, out);
                // `register(info)` sends its argument, which the rules mutated in place unless
                // a dirtier holder was kept (then the holder was mutated, not the argument).
                let sent = match self.registry.held_registrant(from) {
                    Some(held) if !kept_holder => held,
                    _ => info,
                };
                self.replicate(now, from, Replicated::Register(sent), out);
                Reply::Registered { why }
            }
            Call::Renew { last_dirty } => Reply::Renewed {
                found: self.handle_renew(now, from, last_dirty, out),
            },
            Call::FetchAll { why } if self.refuses_reads(now) => Reply::Forbidden { why },
            Call::FetchAll { why } => {
                let server = &mut *self;
                let registry = &server.registry;
                let (payload, filled) = server.cache.get(now, || registry.statuses());
                if filled {
                    self.note_served(&payload, out);
                }
                Reply::Fetched { why, payload }
            }
            Call::FetchDelta => self.serve_delta(now, out),
            Call::Cancel => {
                if self.apply_cancel(now, from, None, out) {
                    self.replicate(now, from, Replicated::Cancel, out);
                }
                Reply::Cancelled
            }
            Call::PutStatus { status, last_dirty } => {
                if self.apply_status_update(now, from, status, last_dirty, out) {
                    let last_dirty = self.held_last_dirty(from);
                    let item = Replicated::StatusUpdate { status, last_dirty };
                    self.replicate(now, from, item, out);
                }
                Reply::StatusPut
            }
            Call::DeleteStatus => {
                let status = InstanceStatus::Unknown;
                if self.apply_delete_status_override(now, from, status, out) {
                    let last_dirty = self.held_last_dirty(from);
                    let item = Replicated::DeleteStatusOverride { status, last_dirty };
                    self.replicate(now, from, item, out);
                }
                Reply::StatusDeleted
            }
        }
    }

    /// `AbstractInstanceRegistry#register` with what follows it here: the delta queue, the
    /// observations, the cache invalidation. `from_peer`: the peer whose replication it is
    /// (`isReplication`). Returns whether a dirtier holder was kept.
    fn apply_register(
        &mut self,
        now: SimTime,
        p: ProcessId,
        info: Registrant,
        from_peer: Option<ServerId>,
        out: &mut impl ServerOutput,
    ) -> bool {
        let kept_holder = self.registry.register(now, p, info, from_peer.is_some());
        let status = self
            .registry
            .entry(p)
            .map_or(info.status, |e| e.info.status);
        self.recently_changed
            .registered(now, p, status, kept_holder);
        out.observe(Observation::Registered {
            server: self.id,
            process: p,
            status,
            from_peer,
        });
        self.note_registry(p, out);
        self.invalidate_cache(now, out);
        kept_holder
    }

    /// `cancel` (explicit, from the instance or, `from_peer`, a peer's replication). Returns
    /// whether a lease went.
    fn apply_cancel(
        &mut self,
        now: SimTime,
        p: ProcessId,
        from_peer: Option<ServerId>,
        out: &mut impl ServerOutput,
    ) -> bool {
        if !self.registry.cancel(now, p, true) {
            return false;
        }
        self.recently_changed.cancelled(now, p);
        out.observe(Observation::Cancelled {
            server: self.id,
            process: p,
            from_peer,
        });
        self.note_registry(p, out);
        self.invalidate_cache(now, out);
        true
    }

    /// `statusUpdate`. Returns whether the lease was found (what `statusUpdate` returns, and
    /// what decides replication), whether or not the status changed.
    fn apply_status_update(
        &mut self,
        now: SimTime,
        p: ProcessId,
        status: InstanceStatus,
        last_dirty: u64,
        out: &mut impl ServerOutput,
    ) -> bool {
        let changed = self.registry.status_update(now, p, status, last_dirty);
        if changed == Some(true) {
            self.recently_changed.modified(now, p, status);
            self.note_registry(p, out);
            self.invalidate_cache(now, out);
        }
        changed.is_some()
    }

    /// `deleteStatusOverride`. Returns whether the lease was found.
    fn apply_delete_status_override(
        &mut self,
        now: SimTime,
        p: ProcessId,
        status: InstanceStatus,
        out: &mut impl ServerOutput,
    ) -> bool {
        let existed = self.registry.delete_status_override(now, p, status);
        if existed == Some(true) {
            self.recently_changed.modified(now, p, status);
            self.note_registry(p, out);
            self.invalidate_cache(now, out);
        }
        existed.is_some()
    }

    fn held_last_dirty(&self, p: ProcessId) -> u64 {
        self.registry.entry(p).map_or(0, |e| e.info.last_dirty)
    }

    /// `ApplicationsResource#getContainerDifferential`: 403 when `disable-delta` is set on the
    /// server or inside the `shouldAllowAccess` window ([`EurekaServer::refuses_reads`]: only a
    /// server opened with a count of 0, FACTS.md §2.7), else the `ALL_APPS_DELTA` key through
    /// the response cache (FACTS.md §4).
    fn serve_delta(&mut self, now: SimTime, out: &mut impl ServerOutput) -> Reply {
        if self.config.disable_delta || self.refuses_reads(now) {
            return Reply::DeltaForbidden;
        }
        let server = &mut *self;
        let registry = &server.registry;
        let changed = &server.recently_changed;
        let (payload, filled) = server
            .delta_cache
            .get(now, || changed.delta_content(&registry.statuses()));
        if filled {
            self.note_served_by_delta(out);
        }
        Reply::Delta { payload }
    }

    /// `InstanceResource#renewLease`: renew first (counted even if the reply becomes 404), then
    /// the dirty-timestamp check (FACTS.md §5.3). Returns false for a 404.
    fn handle_renew(
        &mut self,
        now: SimTime,
        from: ProcessId,
        client_dirty: u64,
        out: &mut impl ServerOutput,
    ) -> bool {
        match self.registry.renew(now, from) {
            RenewOutcome::NotFound => false,
            RenewOutcome::Renewed {
                silent_status_change,
            } => {
                self.note_renewed(from, silent_status_change, out);
                // `PeerAwareInstanceRegistryImpl#renew` replicates inside `renew`, before the
                // resource's dirty-timestamp check (so a 404 here still replicates).
                self.replicate_heartbeat(now, from, out);
                !(self.config.sync_when_timestamp_differs
                    && self
                        .registry
                        .heartbeat_needs_reregister(now, from, client_dirty))
            }
        }
    }
}

impl EurekaServer {
    /// After a renew: the silent status reset, if any, and the observation.
    fn note_renewed(
        &mut self,
        p: ProcessId,
        silent_status_change: bool,
        out: &mut impl ServerOutput,
    ) {
        if silent_status_change {
            if let Some(e) = self.registry.entry(p) {
                let status = e.info.status;
                self.recently_changed.status_set_silently(p, status);
            }
            self.note_registry(p, out);
        }
        if !self.reports_renewals {
            return;
        }
        if let Some(e) = self.registry.entry(p) {
            let expirable_from = e.lease.expirable_from();
            out.observe(Observation::Renewed {
                server: self.id,
                process: p,
                expirable_from,
            });
        }
    }

    /// `#replicateInstanceActionsToPeers(Heartbeat)`: the held copy as
    /// `getInstanceByAppAndId(app, id, false)` returns it (none if hidden as expired) and the
    /// overridden status from the map.
    fn replicate_heartbeat(&mut self, now: SimTime, p: ProcessId, out: &mut impl ServerOutput) {
        if self.peers.is_empty() {
            return;
        }
        let held = self
            .registry
            .visible(now, p)
            .and_then(|_| self.registry.held_registrant(p));
        let overridden = self.registry.override_of(p);
        self.replicate(now, p, Replicated::Heartbeat { held, overridden }, out);
    }

    /// `#replicateToPeers`: queue `item` for every peer (nothing for a standalone server).
    fn replicate(
        &mut self,
        now: SimTime,
        p: ProcessId,
        item: Replicated,
        out: &mut impl ServerOutput,
    ) {
        for k in 0..self.peers.len() {
            self.submit(now, k, p, item, out);
        }
    }

    /// Queue `item` for the `k`-th peer, expiring as `PeerEurekaNode` sets it: registers and
    /// heartbeats after the instance's renewal interval (`#getLeaseRenewalOf`, 90 s without
    /// a lease info), the rest after `max-time-for-replication`.
    fn submit(
        &mut self,
        now: SimTime,
        k: usize,
        p: ProcessId,
        item: Replicated,
        out: &mut impl ServerOutput,
    ) {
        let renewal_interval_ms = match item {
            Replicated::Register(r) | Replicated::Heartbeat { held: Some(r), .. } => {
                r.renewal_interval_ms
            }
            _ => DEFAULT_DURATION_MS,
        };
        let task = ReplicationTask {
            process: p,
            item,
            submitted: now,
            expires: task_expiry(
                now,
                &item,
                renewal_interval_ms,
                self.config.max_time_for_replication_ms,
            ),
        };
        let mut effects = std::mem::take(&mut self.scratch);
        self.peers[k].replicator.submit(now, task, &mut effects);
        self.emit(k, &mut effects, out);
        self.scratch = effects;
    }

    /// The `k`-th peer's dispatcher timer fired.
    fn on_dispatch(
        &mut self,
        now: SimTime,
        k: usize,
        generation: u32,
        out: &mut impl ServerOutput,
    ) {
        let mut effects = std::mem::take(&mut self.scratch);
        if let Some(peer) = self.peers.get_mut(k) {
            peer.replicator.on_dispatch(now, generation, &mut effects);
        }
        self.emit(k, &mut effects, out);
        self.scratch = effects;
    }

    /// Hands a replicator's effects to the world, in order.
    fn emit(&self, k: usize, effects: &mut Vec<ReplicatorEffect>, out: &mut impl ServerOutput) {
        for effect in effects.drain(..) {
            match effect {
                ReplicatorEffect::Arm {
                    delay_ms,
                    generation,
                } => out.arm(
                    delay_ms,
                    ServerTimer::Replicate {
                        peer: k as u32,
                        generation,
                    },
                ),
                ReplicatorEffect::Send(batch) => out.send_batch(self.peers[k].id, batch),
            }
        }
    }

    /// The index of `peer` in this server's replication set.
    fn peer_index(&self, peer: ServerId) -> Option<usize> {
        self.peers.iter().position(|p| p.id == peer)
    }

    /// `PeerReplicationResource#batchReplication`: a peer's batch, item by item in order,
    /// through the same resources as a client's call with `isReplication`, so nothing is
    /// replicated again (`#replicateToPeers` returns at once for a replication).
    pub fn on_batch(
        &mut self,
        now: SimTime,
        from: ServerId,
        batch: &ReplicationBatch,
        out: &mut impl ServerOutput,
    ) -> Vec<ItemReply> {
        batch
            .tasks
            .iter()
            .map(|task| self.apply_replicated(now, from, task.process, task.item, out))
            .collect()
    }

    /// One item of peer `from`'s batch (`PeerReplicationResource#dispatch`).
    fn apply_replicated(
        &mut self,
        now: SimTime,
        from: ServerId,
        p: ProcessId,
        item: Replicated,
        out: &mut impl ServerOutput,
    ) -> ItemReply {
        let found = |found: bool| {
            if found {
                ItemReply::Ok
            } else {
                ItemReply::NotFound
            }
        };
        match item {
            Replicated::Register(info) => {
                self.apply_register(now, p, info, Some(from), out);
                ItemReply::Ok
            }
            Replicated::Heartbeat { held, overridden } => {
                self.handle_replicated_heartbeat(now, p, held, overridden, out)
            }
            Replicated::Cancel => found(self.apply_cancel(now, p, Some(from), out)),
            Replicated::StatusUpdate { status, last_dirty } => {
                found(self.apply_status_update(now, p, status, last_dirty, out))
            }
            Replicated::DeleteStatusOverride { status, .. } => {
                found(self.apply_delete_status_override(now, p, status, out))
            }
        }
    }

    /// `PeerReplicationResource#handleHeartbeat` -> `InstanceResource#renewLease` as a replica:
    /// renew first (counted even if the answer turns 404 or 409), then the dirty check against
    /// the sender's copy: a dirtier incoming copy is 404 (its override stored, if any and not
    /// UNKNOWN); a dirtier held copy is 409 with the held copy.
    fn handle_replicated_heartbeat(
        &mut self,
        now: SimTime,
        p: ProcessId,
        held: Option<Registrant>,
        overridden: Option<InstanceStatus>,
        out: &mut impl ServerOutput,
    ) -> ItemReply {
        let RenewOutcome::Renewed {
            silent_status_change,
        } = self.registry.renew(now, p)
        else {
            return ItemReply::NotFound;
        };
        self.note_renewed(p, silent_status_change, out);
        let Some(incoming) = held.filter(|_| self.config.sync_when_timestamp_differs) else {
            return ItemReply::Ok;
        };
        match self
            .registry
            .validate_replicated_dirty(now, p, incoming.last_dirty)
        {
            DirtyCheck::Ok => ItemReply::Ok,
            DirtyCheck::NotFound => {
                if let Some(status) = overridden.filter(|s| *s != InstanceStatus::Unknown) {
                    self.registry.store_overridden_status_if_required(p, status);
                }
                ItemReply::NotFound
            }
            DirtyCheck::Conflict(copy) => ItemReply::Conflict(copy),
        }
    }

    /// A batch sent to `peer` came back ([`PeerReplicator::on_outcome`]): a heartbeat's 404
    /// queues a register of the held copy for that peer only (`PeerEurekaNode#heartbeat`
    /// `handleFailure`); a 409's copy becomes a new local lease, its override stored first,
    /// not replicated (`#syncInstancesIfTimestampDiffers` -> `register(infoFromPeer, true)`).
    pub fn on_batch_outcome(
        &mut self,
        now: SimTime,
        peer: ServerId,
        batch: u64,
        outcome: BatchOutcome,
        out: &mut impl ServerOutput,
    ) {
        let Some(k) = self.peer_index(peer) else {
            return;
        };
        let mut effects = std::mem::take(&mut self.scratch);
        let actions = self.peers[k]
            .replicator
            .on_outcome(now, batch, outcome, &mut effects);
        self.emit(k, &mut effects, out);
        self.scratch = effects;
        for action in actions {
            match action {
                PeerAction::RegisterRepair(p, held) => {
                    self.submit(now, k, p, Replicated::Register(held), out);
                }
                PeerAction::TakePeerCopy(p, copy) => {
                    if let Some(status) = override_from_peer(&copy) {
                        self.registry.store_overridden_status_if_required(p, status);
                    }
                    self.apply_register(now, p, copy, Some(peer), out);
                }
            }
        }
    }
}

/// `Lease.DEFAULT_DURATION_IN_SECS` in ms: a task's expiry when the info has no lease info.
const DEFAULT_DURATION_MS: u64 = 90_000;

/// Steady start: of the renews at `next - k * interval` (k >= 1, all before time 0), how many
/// fell in the last complete renews-last-minute window, `(roll - 120 s, roll - 60 s]`, and how
/// many since the last roll, `(roll - 60 s, 0]`, where `roll` in `(0, 60 s]` is the roll
/// timer's next run.
pub fn renews_in_windows(next_ms: u64, interval_ms: u64, roll_ms: u64) -> (u64, u64) {
    let interval = interval_ms.max(1) as i64;
    let next = next_ms as i64;
    // #{k >= 1 : next - k * interval > a}
    let after = |a: i64| -> u64 {
        if next - a <= 0 {
            0
        } else {
            ((next - a - 1) / interval) as u64
        }
    };
    let window = RENEWS_WINDOW_MS as i64;
    let roll = roll_ms as i64;
    let current = after(roll - window);
    let last = after(roll - 2 * window) - current;
    (last, current)
}

/// `EvictionTask#getCompensationTimeMs`: how much later than one period after the previous run
/// this run started, never negative; 0 on the first run (FACTS.md §2.1). It is added to every
/// lease's expiry, so a late eviction run does not evict leases a GC pause kept from renewing.
pub fn compensation_ms(previous: Option<SimTime>, now: SimTime, period_ms: u64) -> u64 {
    match previous {
        Some(prev) => now.saturating_since(prev).saturating_sub(period_ms),
        None => 0,
    }
}

#[cfg(test)]
mod peer_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;
    use crate::eureka::protocol::{RegisterWhy, Registrant};
    use crate::scenario::parse_str;

    fn server() -> EurekaServer {
        let text = "[[app]]\nname = \"svc\"\ninstances = 2\n";
        let scenario = parse_str(text, "t.toml", "t", &[]).expect("valid scenario");
        EurekaServer::new(&scenario, 3, StreamFactory::new(1).stream("server"))
    }

    /// Steady start's renew counts, by hand: renews every 30 s at -20, -50, -80, -110 s ...
    /// (next at +10 s); the roll due at +20 s, so the last roll was at -40 s and the one before
    /// at -100 s: one renew since (-20 s), two in the last complete window (-50, -80 s). With
    /// renews every 10 s (next at +10 s: -0, -10, ... s) a 60 s window holds 6 whatever the phase.
    #[test]
    fn steady_renews_fill_the_last_minute_windows() {
        assert_eq!(renews_in_windows(10_000, 30_000, 20_000), (2, 1));
        // Renews at 0, -30, -60 s ...; rolls at 0 and -60 s: none since, 0 and -30 s before.
        assert_eq!(renews_in_windows(30_000, 30_000, 60_000), (2, 0));
        for roll in [1, 7_000, 59_999, 60_000] {
            let (last, _) = renews_in_windows(10_000, 10_000, roll);
            assert_eq!(last, 6, "roll {roll}");
        }
        // A renew exactly on the last roll (-40 s) counts in the window that roll closed.
        assert_eq!(renews_in_windows(20_000, 60_000, 20_000), (1, 0));
    }

    /// The server alone, without a world: bootstrap arms its timers in the order of FACTS.md
    /// §2.7 (delta retention, cache fill, threshold update, renews roll, eviction).
    #[test]
    fn start_arms_the_timers_in_bootstrap_order() {
        let mut server = server();
        let mut out = Vec::new();
        server.start(SimTime(0), 1_700_000_000_000, &mut out);
        let timers: Vec<ServerTimer> = out
            .into_iter()
            .filter_map(|e| match e {
                ServerEffect::Arm { timer, .. } => Some(timer),
                ServerEffect::Observe(_) | ServerEffect::SendBatch { .. } => None,
            })
            .collect();
        assert_eq!(
            timers,
            vec![
                ServerTimer::DeltaRetention,
                ServerTimer::CacheFill,
                ServerTimer::ThresholdUpdate,
                ServerTimer::RenewsRoll,
                ServerTimer::Eviction,
            ]
        );
    }

    /// `#shouldAllowAccess` (FACTS.md §2.7): a server opened with a count of 0
    /// (`default-open-for-traffic-count = 0`) answers GET /apps and /apps/delta with 403 up to
    /// `startupTime + wait-time-in-ms-when-sync-empty` inclusive (`now > startup + wait` allows),
    /// then serves; with Spring Cloud's default count of 1 it serves at once.
    #[test]
    fn a_server_opened_with_a_count_of_0_refuses_reads_for_the_wait() {
        let text = "[[app]]\nname = \"svc\"\ninstances = 2\n";
        let overrides = [
            "server.eureka.instance.registry.default-open-for-traffic-count=0".to_string(),
            "server.eureka.server.wait-time-in-ms-when-sync-empty=60000".to_string(),
        ];
        let scenario = parse_str(text, "t.toml", "t", &overrides).expect("valid scenario");
        let stream = || StreamFactory::new(1).stream("server");
        let all = Call::FetchAll {
            why: crate::eureka::protocol::FetchWhy::Periodic,
        };
        let mut server = EurekaServer::new(&scenario, 3, stream());
        server.start(SimTime(5_000), 1_700_000_000_000, &mut Vec::new());
        let mut out = Vec::new();
        let at = |server: &mut EurekaServer, ms, call, out: &mut Vec<ServerEffect>| {
            server.on_call(SimTime(ms), 0, call, out)
        };
        assert!(matches!(
            at(&mut server, 5_000, all, &mut out),
            Reply::Forbidden { .. }
        ));
        assert!(matches!(
            at(&mut server, 65_000, all, &mut out),
            Reply::Forbidden { .. }
        ));
        assert_eq!(
            at(&mut server, 65_000, Call::FetchDelta, &mut out),
            Reply::DeltaForbidden
        );
        assert!(matches!(
            at(&mut server, 65_001, all, &mut out),
            Reply::Fetched { .. }
        ));
        assert!(matches!(
            at(&mut server, 65_001, Call::FetchDelta, &mut out),
            Reply::Delta { .. }
        ));

        let mut server = EurekaServer::new(&tests_scenario(), 3, stream());
        server.start(SimTime(5_000), 1_700_000_000_000, &mut Vec::new());
        assert!(matches!(
            at(&mut server, 5_000, all, &mut out),
            Reply::Fetched { .. }
        ));
    }

    fn tests_scenario() -> Scenario {
        parse_str(
            "[[app]]\nname = \"svc\"\ninstances = 2\n",
            "t.toml",
            "t",
            &[],
        )
        .unwrap()
    }

    /// An UP instance's InstanceInfo with the default lease (90 s, renewed every 30 s).
    fn up_registrant() -> Registrant {
        Registrant {
            status: InstanceStatus::Up,
            overridden_status: InstanceStatus::Unknown,
            last_dirty: 1,
            lease_duration_ms: 90_000,
            renewal_interval_ms: 30_000,
        }
    }

    /// A register is answered and observed (registered, then UP in the registry); a cancel
    /// takes it out again.
    #[test]
    fn register_then_cancel_replies_and_observes() {
        let mut server = server();
        server.start(SimTime(0), 1_700_000_000_000, &mut Vec::new());
        let info = up_registrant();
        let why = RegisterWhy::Init;
        let mut out = Vec::new();
        let reply = server.on_call(SimTime(10), 0, Call::Register { info, why }, &mut out);
        assert_eq!(reply, Reply::Registered { why });
        assert_eq!(
            std::mem::take(&mut out),
            vec![
                ServerEffect::Observe(Observation::Registered {
                    server: ServerId::FIRST,
                    process: 0,
                    status: InstanceStatus::Up,
                    from_peer: None,
                }),
                ServerEffect::Observe(Observation::Registry {
                    server: ServerId::FIRST,
                    process: 0,
                    up: true
                }),
            ]
        );
        let reply = server.on_call(SimTime(20), 0, Call::Cancel, &mut out);
        assert_eq!(reply, Reply::Cancelled);
        assert_eq!(
            out,
            vec![
                ServerEffect::Observe(Observation::Cancelled {
                    server: ServerId::FIRST,
                    process: 0,
                    from_peer: None,
                }),
                ServerEffect::Observe(Observation::Registry {
                    server: ServerId::FIRST,
                    process: 0,
                    up: false
                }),
            ]
        );
    }

    /// A renew is reported (`Renewed`, with the lease's new expiry) unless the world turned
    /// the reports off, and is answered and counted the same either way.
    #[test]
    fn a_renew_is_reported_only_where_renewals_are_read() {
        let info = up_registrant();
        let mut replies = Vec::new();
        for reports in [true, false] {
            let mut server = server();
            server.report_renewals(reports);
            server.start(SimTime(0), 1_700_000_000_000, &mut Vec::new());
            let why = RegisterWhy::Init;
            server.on_call(
                SimTime(10),
                0,
                Call::Register { info, why },
                &mut Vec::new(),
            );
            let mut out = Vec::new();
            let renew = Call::Renew { last_dirty: 1 };
            replies.push(server.on_call(SimTime(30_010), 0, renew, &mut out));
            let renewed: Vec<_> = out
                .iter()
                .filter(|e| matches!(e, ServerEffect::Observe(Observation::Renewed { .. })))
                .collect();
            assert_eq!(renewed.len(), usize::from(reports), "{out:?}");
            // Renewed at 30.010 s: `Lease#renew` sets lastUpdateTimestamp to now + duration
            // and `isExpired` adds the duration again and compares with `>` (FACTS.md §1), so
            // expirable from 30.010 + 90 + 90 s and one millisecond.
            if let Some(ServerEffect::Observe(Observation::Renewed { expirable_from, .. })) =
                renewed.first()
            {
                assert_eq!(*expirable_from, SimTime(30_010 + 2 * 90_000 + 1));
            }
        }
        assert_eq!(replies[0], replies[1]);
        assert_eq!(replies[0], Reply::Renewed { found: true });
    }

    /// InstanceRegistryTest#testEvictionTaskCompensationTime: runs at 1, 1+P, 1+2P+10 ms and
    /// 1+3P-1 (ns in the original; ms here) give 0, 0, 10, 0.
    #[test]
    fn eviction_compensation_time() {
        let p = 60_000;
        let runs = [1, 1 + p, 1 + 2 * p + 10, 1 + 3 * p - 1];
        let mut previous = None;
        let got: Vec<u64> = runs
            .iter()
            .map(|&t| {
                let c = compensation_ms(previous, SimTime(t), p);
                previous = Some(SimTime(t));
                c
            })
            .collect();
        assert_eq!(got, [0, 0, 10, 0]);
    }
}
