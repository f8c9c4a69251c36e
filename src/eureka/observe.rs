//! What the world reports while it runs.
//!
//! The simulation emits observations; metrics, explanations and traces are consumers of the same
//! stream. Observers are generic parameters (monomorphised), so an observer that ignores a kind of
//! observation costs nothing for it on the hot path.

use crate::engine::SimTime;

use super::ids::{ProcessId, RouteId};
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
    /// `process` became UP / stopped being UP in the server's registry.
    Registry { process: ProcessId, up: bool },
    /// ... in what `GET /apps` serves (the read-only cache, or the read-write one when off).
    Served { process: ProcessId, up: bool },
    /// ... in the Eureka client cache of process `observer`.
    ClientCache {
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
    /// Batched mode: `count` attempts of `route` were refused by `process` since the previous
    /// count, the last of them at `last`.
    DeadHits {
        route: RouteId,
        process: ProcessId,
        count: u64,
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
        process: ProcessId,
        status: InstanceStatus,
    },
    /// A successful renew; the lease is now expirable from `expirable_from`.
    Renewed {
        process: ProcessId,
        expirable_from: SimTime,
    },
    /// An explicit cancel (DELETE) removed the lease.
    Cancelled { process: ProcessId },
    /// An eviction run; `gated` when self-preservation (or a zero threshold) blocked it.
    EvictionRun {
        gated: bool,
        renews_last_min: u64,
        threshold: i64,
        expired: usize,
        evicted: usize,
    },
    /// An eviction run removed `process`.
    Evicted { process: ProcessId },
    /// The read-only cache took a new payload.
    ReadOnlyRefreshed,
    /// A client applied a fetched registry (`delta` false: a full one) to its local registry.
    Fetched {
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
    /// A caller's balancer re-read its server list (Ribbon's refresh; Spring Cloud
    /// LoadBalancer's cache miss or health-check round).
    RibbonRefreshed { route: RouteId },
    /// The server opened for traffic (its timers start now).
    ServerStarted,
    /// A process started and created its Eureka client.
    ClientCreated { process: ProcessId },
    /// A client's scheduled tasks started (the timers count from here).
    ClientTasksStarted { process: ProcessId },
    /// `[[restart]]`: the process's previous incarnation is over and a new one starts (under
    /// the same id, or under a new id as another process).
    Restarted { process: ProcessId },
    /// `[[deploy]]` `deploy` started a batch of `size` instances.
    DeployBatch { deploy: usize, size: usize },
}

/// A consumer of observations.
pub trait Observer {
    fn observe(&mut self, at: SimTime, observation: Observation);
}

/// Ignores everything (for benchmarks of the bare engine).
impl Observer for () {
    #[inline]
    fn observe(&mut self, _: SimTime, _: Observation) {}
}

/// Feeds two observers (e.g. the metrics and a trace of the same trial).
impl<A: Observer, B: Observer> Observer for (A, B) {
    #[inline]
    fn observe(&mut self, at: SimTime, observation: Observation) {
        self.0.observe(at, observation.clone());
        self.1.observe(at, observation);
    }
}

/// Records everything (for tests and traces).
impl Observer for Vec<(SimTime, Observation)> {
    fn observe(&mut self, at: SimTime, observation: Observation) {
        self.push((at, observation));
    }
}
