//! What the world reports while it runs.
//!
//! The simulation emits observations; metrics, explanations and traces are consumers of the same
//! stream. Observers are generic parameters (monomorphised), so an observer that ignores a kind of
//! observation costs nothing for it on the hot path.

use crate::engine::SimTime;

use super::ids::{ProcessId, RouteId, ServerId};
use super::protocol::Unanswered;
use super::status::InstanceStatus;

/// The two reconcile hashes of a [`Observation::ReconcileMismatch`], as Eureka renders them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HashPair {
    pub local: String,
    pub server: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Observation {
    /// `process` became UP / stopped being UP in server `server`'s registry.
    Registry {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        process: ProcessId,
        up: bool,
    },
    /// ... in what `GET /apps` serves (the read-only cache, or the read-write one when off);
    /// while the server's `ALL_APPS` key has never been read (a restarted peer read by deltas),
    /// in the registry its read-only `ALL_APPS_DELTA` payload was generated from, which is what
    /// a reader applying it holds (`EurekaServer::note_served_by_delta`).
    Served {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        process: ProcessId,
        up: bool,
    },
    /// ... in the Eureka client cache of process `observer`, from the answer of `server`.
    ClientCache {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        observer: ProcessId,
        process: ProcessId,
        up: bool,
    },
    /// `process` entered / left the Ribbon server list of `route`.
    RibbonList {
        route: RouteId,
        process: ProcessId,
        listed: bool,
    },
    /// The process stopped accepting requests.
    StoppedServing { process: ProcessId },
    /// A request attempt by `route` to `process`; `dead` when it was refused.
    Attempt {
        route: RouteId,
        process: ProcessId,
        dead: bool,
    },
    /// A request failed after its retries; `first` is the instance its first attempt went to.
    RequestFailed { route: RouteId, first: ProcessId },
    /// A request found an empty server list.
    NoServer { route: RouteId },
    /// `count` requests in flight on `process` failed as its web server stopped (kill -9,
    /// immediate shutdown, or the graceful phase's timeout).
    InflightFailed { process: ProcessId, count: u64 },
    /// Batched mode: `count` attempts of `route` were refused by `process` in the span counted
    /// at once from `since` (exclusive; `last` itself for a single one) to `last`, the last of
    /// them (a plot spreads them over the span).
    DeadHits {
        route: RouteId,
        process: ProcessId,
        count: u64,
        since: SimTime,
        last: SimTime,
    },
    /// Batched mode: `count` requests failed after retries, their first attempt to `first`.
    RequestsFailed {
        route: RouteId,
        first: ProcessId,
        count: u64,
    },
    /// Attempts of `route` to `process` timed out on connect (its host vanished, FACTS.md §7):
    /// the callers waited `delay_ms` on them in all (per attempt in per-request mode, summed
    /// in batched mode). Only emitted when `delay_ms > 0`.
    ConnectTimeouts {
        route: RouteId,
        process: ProcessId,
        delay_ms: u64,
    },
    /// Batched mode: `count` requests found an empty server list.
    NoServers { route: RouteId, count: u64 },
    /// The server handled a register from `process` (a new lease) with the resulting status.
    Registered {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        process: ProcessId,
        status: InstanceStatus,
        /// The peer whose replication carried it (`isReplication`: its batch, or its copy taken
        /// on a 409); `None` for the instance's own register.
        #[serde(skip_serializing_if = "Option::is_none")]
        from_peer: Option<ServerId>,
    },
    /// A successful renew; the lease is now expirable from `expirable_from`.
    Renewed {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        process: ProcessId,
        expirable_from: SimTime,
    },
    /// An explicit cancel removed the lease: the instance's DELETE, or a peer's replication
    /// of the cancel it got.
    Cancelled {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        process: ProcessId,
        /// The peer whose replication batch carried it (`isReplication`); `None` for the
        /// instance's own DELETE.
        #[serde(skip_serializing_if = "Option::is_none")]
        from_peer: Option<ServerId>,
    },
    /// An eviction run; `gated` when self-preservation (or a zero threshold) blocked it.
    EvictionRun {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        gated: bool,
        renews_last_min: u64,
        threshold: i64,
        expired: usize,
        evicted: usize,
    },
    /// An eviction run removed `process`.
    Evicted {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        process: ProcessId,
    },
    /// A `[[fault]]` took server `server` down (a crash, or a restart's down time).
    ServerDown { server: ServerId },
    /// The read-only cache took a new payload.
    ReadOnlyRefreshed {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
    },
    /// A client applied a fetched registry (`delta` false: a full one), `server`'s answer, to its
    /// local registry.
    Fetched {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
        observer: ProcessId,
        changed: bool,
        delta: bool,
    },
    /// A delta left the client's reconcile hash (`local`) different from the payload's
    /// `appsHashCode` (`server`), so a full fetch follows (FACTS.md §4).
    ReconcileMismatch {
        observer: ProcessId,
        /// Boxed: a rare observation should not widen every other one.
        hashes: Box<HashPair>,
    },
    /// The server answered a delta fetch with 403 (`eureka.server.disable-delta`).
    DeltaForbidden { observer: ProcessId },
    /// One attempt of a client's call to `server` got no answer (`why`); the transport tries
    /// the next server unless it was the third (`RetryableEurekaHttpClient#execute`).
    AttemptFailed {
        observer: ProcessId,
        server: ServerId,
        why: Unanswered,
    },
    /// A client's call failed on every attempt (`RetryableEurekaHttpClient` gave up).
    CallFailed {
        observer: ProcessId,
        call: &'static str,
    },
    /// `TimedSupervisorTask`: a heartbeat or cache-refresh run outlasted the interval; the
    /// next run is `next_in_ms` away (the doubled delay).
    TaskTimedOut {
        observer: ProcessId,
        task: &'static str,
        next_in_ms: u64,
    },
    /// `TimedSupervisorTask`: every thread of the task's executor was busy, so the run was
    /// rejected.
    TaskRejected {
        observer: ProcessId,
        task: &'static str,
    },
    /// A caller's balancer re-read its server list (Ribbon's refresh; Spring Cloud
    /// LoadBalancer's cache miss or health-check round).
    RibbonRefreshed { route: RouteId },
    /// The server opened for traffic (its timers start now).
    ServerStarted {
        #[serde(skip_serializing_if = "ServerId::is_first")]
        server: ServerId,
    },
    /// A process started and created its Eureka client.
    ClientCreated { process: ProcessId },
    /// A client's scheduled tasks started (the timers count from here).
    ClientTasksStarted { process: ProcessId },
    /// `[[restart]]`: the process's previous incarnation is over and a new one starts (under
    /// the same id, or under a new id as another process).
    Restarted { process: ProcessId },
    /// `[[deploy]]` `deploy` started a batch of `size` instances.
    DeployBatch { deploy: usize, size: usize },
    /// `/resume` made a stopped process accept requests again.
    ResumedServing { process: ProcessId },
    /// The trial ended while some view (registry, read-only cache, a caller's Eureka cache or
    /// balancer list) still listed the stopped `process`, for this reason.
    StillListed {
        process: ProcessId,
        holding: Holding,
    },
}

/// Why a stopped instance is still listed when a trial ends, from the state at that instant,
/// layer by layer from the server down (the first layer that holds it decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holding {
    /// The registry keeps it UP because its Eureka client still renews the lease (the process
    /// is alive: its web server stopped but the client heartbeats, e.g. `/pause` on Boot 2.3
    /// with a health check that reports UP).
    StillRenewing,
    /// The registry keeps it UP through an overridden status of UP (`InstanceStatusOverrideRule`:
    /// the override wins over what the instance reports).
    Override,
    /// The lease is not yet expired (`Lease#isExpired`: last renew + duration, counted twice).
    LeaseNotExpired,
    /// Expired, but `isLeaseExpirationEnabled()` is false: the renews of the last minute do not
    /// exceed `numberOfRenewsPerMinThreshold` (self-preservation, FACTS.md §2.2).
    SelfPreservation,
    /// Expired, but the threshold is 0, which disables expiration
    /// (`numberOfRenewsPerMinThreshold > 0 && ...`), e.g. a standalone server with no peers and
    /// `registry-sync-retries = 0` (Netflix/eureka#1459).
    ZeroThreshold,
    /// Expired and expiration enabled: the next eviction run had not come yet.
    EvictionPending,
    /// The registry no longer lists it UP, but `GET /apps` still serves it (the read-only
    /// cache had not been refreshed yet).
    ResponseCache,
    /// The server no longer serves it, but a caller's Eureka cache or balancer list still has
    /// it: that caller did not fetch or refresh since (fetching off, no traffic to re-read a
    /// Spring Cloud LoadBalancer cache, Dalston's notification updater, or the end came first).
    Caller,
}

impl Holding {
    /// The name in `trials.csv` (`unresolved_reason`) and `summary.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Holding::StillRenewing => "still_renewing",
            Holding::Override => "status_override",
            Holding::LeaseNotExpired => "lease_not_expired",
            Holding::SelfPreservation => "self_preservation",
            Holding::ZeroThreshold => "zero_threshold",
            Holding::EvictionPending => "eviction_pending",
            Holding::ResponseCache => "response_cache",
            Holding::Caller => "caller_not_refreshed",
        }
    }

    /// Words for people.
    pub fn label(self) -> &'static str {
        match self {
            Holding::StillRenewing => "still listed: its client still renews the lease",
            Holding::Override => "still listed: an overridden status of UP",
            Holding::LeaseNotExpired => "still listed: the lease had not expired",
            Holding::SelfPreservation => "still listed: self-preservation blocks eviction",
            Holding::ZeroThreshold => "still listed: a renewal threshold of 0 disables eviction",
            Holding::EvictionPending => "still listed: expired, the eviction run had not come",
            Holding::ResponseCache => "still listed: the read-only cache had not refreshed",
            Holding::Caller => "still listed: a caller had not fetched or refreshed since",
        }
    }
}

/// A consumer of observations.
pub trait Observer {
    fn observe(&mut self, at: SimTime, observation: Observation);

    /// Whether this observer has the news it waits for. From `duration-s` on, a trial goes on
    /// until every observer is settled, up to `max-duration-s`; one that waits for nothing is
    /// settled at once (the default).
    fn settled(&self) -> bool {
        true
    }

    /// Whether nothing this observer measures can change any more while no planned action
    /// happens: a trial with `simulation.end = "resolved"` ends at the first such instant after
    /// its last planned action. At least [`Observer::settled`]; an observer that measures
    /// something else (lost capacity, a deploy's dips) says when that is at rest too.
    fn at_rest(&self) -> bool {
        self.settled()
    }

    /// Whether it reads [`Observation::Renewed`]; if not, the servers do not report renews
    /// (`EurekaServer::report_renewals`). Yes by default.
    fn reads_renewals(&self) -> bool {
        true
    }
}

/// Ignores everything (for benchmarks of the bare engine).
impl Observer for () {
    #[inline]
    fn observe(&mut self, _: SimTime, _: Observation) {}

    fn reads_renewals(&self) -> bool {
        false
    }
}

/// Feeds two observers (e.g. the metrics and a trace of the same trial).
impl<A: Observer, B: Observer> Observer for (A, B) {
    #[inline]
    fn observe(&mut self, at: SimTime, observation: Observation) {
        self.0.observe(at, observation.clone());
        self.1.observe(at, observation);
    }

    fn settled(&self) -> bool {
        self.0.settled() && self.1.settled()
    }

    fn at_rest(&self) -> bool {
        self.0.at_rest() && self.1.at_rest()
    }

    fn reads_renewals(&self) -> bool {
        self.0.reads_renewals() || self.1.reads_renewals()
    }
}

/// Records everything (for tests and traces).
impl Observer for Vec<(SimTime, Observation)> {
    fn observe(&mut self, at: SimTime, observation: Observation) {
        self.push((at, observation));
    }

    /// A bare log knows no measure that could come to rest: alone, it records the full
    /// simulation (the rules' tests read timelines to `duration-s`). Beside a measuring observer
    /// it is wrapped so that the pair ends when the measure does (`experiment::trace_trial`).
    fn at_rest(&self) -> bool {
        false
    }
}
