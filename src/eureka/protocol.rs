//! The protocol between the Eureka clients and the server: the REST calls, their replies and the
//! payloads they carry (`InstanceInfo`, `Applications`, the delta), as data only.
//!
//! This is the bottom layer of `eureka`: it imports no rule, so every rule (server, client,
//! cache, delta) can speak it without knowing the others.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use crate::engine::SimTime;

use super::ids::{ProcessId, ServerId};
use super::status::InstanceStatus;

/// A REST call from a client to the Eureka server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `POST /apps/{app}` with the client's InstanceInfo.
    Register { info: Registrant, why: RegisterWhy },
    /// `PUT /apps/{app}/{id}?lastDirtyTimestamp=` (heartbeat).
    Renew { last_dirty: u64 },
    /// `GET /apps` (full fetch).
    FetchAll { why: FetchWhy },
    /// `GET /apps/delta`.
    FetchDelta,
    /// `DELETE /apps/{app}/{id}` (unregister).
    Cancel,
    /// `PUT /apps/{app}/{id}/status?value=`.
    PutStatus {
        status: InstanceStatus,
        last_dirty: u64,
    },
    /// `DELETE /apps/{app}/{id}/status` (no value: the status becomes UNKNOWN).
    DeleteStatus,
}

impl Call {
    /// The call as Eureka's `EurekaHttpClient` names it.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Register { .. } => "register",
            Call::Renew { .. } => "send_heart_beat",
            Call::FetchAll { .. } => "get_applications",
            Call::FetchDelta => "get_delta",
            Call::Cancel => "cancel",
            Call::PutStatus { .. } => "status_update",
            Call::DeleteStatus => "delete_status_override",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterWhy {
    /// The constructor's `shouldEnforceRegistrationAtInit` register.
    Init,
    /// `InstanceInfoReplicator#run` (periodic or on demand).
    Replicator,
    /// A heartbeat answered 404.
    HeartbeatReRegister,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchWhy {
    Init,
    Periodic,
    /// `DiscoveryClient#reconcileAndLogDifference`: the delta left a different reconcile hash.
    Reconcile,
}

/// The server's answer to a [`Call`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Registered {
        why: RegisterWhy,
    },
    Renewed {
        found: bool,
    },
    Fetched {
        why: FetchWhy,
        payload: Rc<Payload>,
    },
    Delta {
        payload: Rc<DeltaPayload>,
    },
    /// `GET /apps/delta` answered 403 (`eureka.server.disable-delta`).
    DeltaForbidden,
    Cancelled,
    StatusPut,
    StatusDeleted,
    /// No answer from `server`: the connection was refused or timed out (the transport tries
    /// another server, `RetryableEurekaHttpClient`).
    Unreachable {
        server: ServerId,
        why: Unanswered,
    },
    /// `GET /apps` answered 403: a peer that opened with an empty registry refuses reads for
    /// `wait-time-in-ms-when-sync-empty` (`#shouldAllowAccess`, FACTS.md §2.7).
    Forbidden {
        why: FetchWhy,
    },
}

/// Why an attempt got no answer (`Observation::AttemptFailed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unanswered {
    /// A stopped process on a live host: the connection is refused at once (RST).
    Refused,
    /// The host is gone or cut off: the SYNs go unanswered until the connect timeout.
    ConnectTimeout,
    /// The server accepted the call and did not answer within the socket (read) timeout.
    ReadTimeout,
}

impl Unanswered {
    /// In words, for `explain`.
    pub fn describe(self) -> &'static str {
        match self {
            Unanswered::Refused => "connection refused",
            Unanswered::ConnectTimeout => "connect timed out",
            Unanswered::ReadTimeout => "read timed out",
        }
    }
}

/// The `InstanceInfo` a client sends with a register (`POST /apps/{app}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registrant {
    pub status: InstanceStatus,
    /// The client's `overriddenStatus` field (UNKNOWN unless a replica carries one).
    pub overridden_status: InstanceStatus,
    pub last_dirty: u64,
    pub lease_duration_ms: u64,
    /// `LeaseInfo#renewalIntervalInSecs` in ms: how long a replicated register or heartbeat
    /// of this instance may wait to be sent (`PeerEurekaNode#getLeaseRenewalOf`).
    pub renewal_interval_ms: u64,
}

#[cfg(test)]
impl Registrant {
    /// An UP instance with no override and the default lease (`LeaseInfo`: 90 s duration,
    /// 30 s renewals), last made dirty at `last_dirty`: the register of most tests.
    pub fn up(last_dirty: u64) -> Registrant {
        Registrant {
            status: InstanceStatus::Up,
            overridden_status: InstanceStatus::Unknown,
            last_dirty,
            lease_duration_ms: 90_000,
            renewal_interval_ms: 30_000,
        }
    }
}

/// A generated `GET /apps` payload: every lease of the registry at generation time, any status,
/// expired-but-not-evicted included, indexed by process id.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// Generation number; a different number means a different object (Eureka compares the
    /// read-only and read-write values by reference).
    pub version: u64,
    pub generated_at: SimTime,
    pub statuses: Vec<Option<InstanceStatus>>,
    /// The reconcile hash of `statuses`, computed at its first use: a full payload is shared by
    /// every client that fetched it, and a local registry that a delta did not change keeps it.
    /// Whoever changes `statuses` must clear it.
    pub hash: Cell<Option<ReconcileHash>>,
}

impl Payload {
    /// `Applications#getReconcileHashCode` of these statuses.
    pub fn reconcile_hash(&self) -> ReconcileHash {
        if let Some(hash) = self.hash.get() {
            return hash;
        }
        let hash = ReconcileHash::of(&self.statuses);
        self.hash.set(Some(hash));
        hash
    }

    pub fn is_up(&self, p: usize) -> bool {
        self.statuses.get(p).copied().flatten() == Some(InstanceStatus::Up)
    }
}

/// `InstanceInfo.ActionType`: what the last change to a lease holder was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ActionType {
    Added,
    Modified,
    Deleted,
}

/// The parts of a lease holder (`InstanceInfo`) a delta renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    pub status: InstanceStatus,
    pub action: ActionType,
}

/// What the delta loader reads from the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaContent {
    /// One rendered instance per changed process, in process order.
    pub instances: Vec<(ProcessId, Holder)>,
    /// `appsHashCode`: the FULL registry's reconcile hash at generation time.
    pub apps_hash: ReconcileHash,
}

/// A generated `GET /apps/delta` payload.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaPayload {
    /// Generation number (`versionDelta` is incremented per generation in Eureka).
    pub version: u64,
    pub generated_at: SimTime,
    pub content: DeltaContent,
    /// The local registries this delta has turned into, shared by every client that applied it
    /// to the same one ([`AppliedDeltas`]).
    pub applied: AppliedDeltas,
}

/// Structural sharing of the clients' local registries: the registries that
/// applying one delta payload to a given local registry gave, keyed by that registry's
/// allocation. Every client that fetched the same payloads holds the same registry, so instead
/// of a copy per client (memory growing with the square of the fleet) they share one `Rc`;
/// a client whose registry differs (it missed a delta, it fetched another peer) gets its own.
/// A cache only: it never changes what a client holds, only where it is stored, and it is left
/// out of equality.
#[derive(Default)]
pub struct AppliedDeltas(std::cell::RefCell<Vec<(Rc<Payload>, Rc<Payload>)>>);

impl AppliedDeltas {
    /// The registry `base` with the delta applied: the shared one if another client built it
    /// from the same `base`, else `build(base)`, kept for the next.
    pub fn get_or_build(
        &self,
        base: &Rc<Payload>,
        build: impl FnOnce(&Payload) -> Payload,
    ) -> Rc<Payload> {
        let mut built = self.0.borrow_mut();
        if let Some((_, result)) = built.iter().find(|(b, _)| Rc::ptr_eq(b, base)) {
            return Rc::clone(result);
        }
        let result = Rc::new(build(base));
        built.push((Rc::clone(base), Rc::clone(&result)));
        result
    }
}

impl Clone for AppliedDeltas {
    /// A copy of a payload shares nothing built from the original.
    fn clone(&self) -> Self {
        AppliedDeltas::default()
    }
}

impl PartialEq for AppliedDeltas {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for AppliedDeltas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AppliedDeltas({})", self.0.borrow().len())
    }
}

/// Statuses in the order of their names, as the `TreeMap` in `Applications
/// #populateInstanceCountMap` sorts them.
const STATUSES_BY_NAME: [InstanceStatus; 5] = [
    InstanceStatus::Down,
    InstanceStatus::OutOfService,
    InstanceStatus::Starting,
    InstanceStatus::Unknown,
    InstanceStatus::Up,
];

/// `Applications#getReconcileHashCode`: the number of instances per status over every instance
/// of every application, all statuses (`getInstancesAsIsFromEureka`), rendered
/// `STATUS_count_` in status-name order, e.g. `DOWN_1_UP_2_` (FACTS.md §4). Only counts are
/// compared: two registries with the same counts per status but different instances agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReconcileHash {
    /// Counts in `STATUSES_BY_NAME` order; a zero count is not rendered, so equal arrays are
    /// exactly equal strings.
    counts: [u32; 5],
}

impl ReconcileHash {
    pub fn of(statuses: &[Option<InstanceStatus>]) -> ReconcileHash {
        let mut counts = [0u32; 5];
        for status in statuses.iter().flatten() {
            counts[Self::slot(*status)] += 1;
        }
        ReconcileHash { counts }
    }

    fn slot(status: InstanceStatus) -> usize {
        match status {
            InstanceStatus::Down => 0,
            InstanceStatus::OutOfService => 1,
            InstanceStatus::Starting => 2,
            InstanceStatus::Unknown => 3,
            InstanceStatus::Up => 4,
        }
    }
}

impl fmt::Display for ReconcileHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (status, count) in STATUSES_BY_NAME.iter().zip(self.counts) {
            if count > 0 {
                write!(f, "{}_{}_", status.name(), count)?;
            }
        }
        Ok(())
    }
}

/// What one server asks its peers to repeat (`PeerEurekaNode`'s task kinds), for one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    Register,
    Heartbeat,
    Cancel,
    StatusUpdate,
    DeleteStatusOverride,
}

impl ActionKind {
    /// How many kinds there are (a dense index per instance and kind).
    pub const COUNT: usize = 5;

    pub fn index(self) -> usize {
        self as usize
    }
}

/// `PeerEurekaNode#taskId`: `action#app/id`. A newer task with the same key replaces a pending
/// one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaskKey {
    pub process: ProcessId,
    pub action: ActionKind,
}

/// The item a replication task carries (`ReplicationInstance`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Replicated {
    /// The registrant as the sender's rules left it.
    Register(Registrant),
    /// The sender's held copy (none if it hid the lease as expired) and its override.
    Heartbeat {
        held: Option<Registrant>,
        overridden: Option<InstanceStatus>,
    },
    Cancel,
    StatusUpdate {
        status: InstanceStatus,
        last_dirty: u64,
    },
    DeleteStatusOverride {
        status: InstanceStatus,
        last_dirty: u64,
    },
}

impl Replicated {
    /// The task kind of this item.
    pub fn action(&self) -> ActionKind {
        match self {
            Replicated::Register(_) => ActionKind::Register,
            Replicated::Heartbeat { .. } => ActionKind::Heartbeat,
            Replicated::Cancel => ActionKind::Cancel,
            Replicated::StatusUpdate { .. } => ActionKind::StatusUpdate,
            Replicated::DeleteStatusOverride { .. } => ActionKind::DeleteStatusOverride,
        }
    }
}

/// A task waiting in a peer's `AcceptorExecutor`: its item, when it was submitted and when it
/// expires (`TaskHolder`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicationTask {
    pub process: ProcessId,
    pub item: Replicated,
    pub submitted: SimTime,
    pub expires: SimTime,
}

impl ReplicationTask {
    pub fn key(&self) -> TaskKey {
        TaskKey {
            process: self.process,
            action: self.item.action(),
        }
    }
}

/// One `POST peerreplication/batch/`: up to 250 tasks in processing order.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicationBatch {
    /// Numbered by the sending replicator, to match its outcome.
    pub id: u64,
    pub tasks: Vec<ReplicationTask>,
}

/// A peer's answer to one item of a batch (`ReplicationInstanceResponse`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ItemReply {
    Ok,
    /// 404: no lease there (or a heartbeat dirtier than the held copy).
    NotFound,
    /// 409 with the peer's held copy (its copy is dirtier than the sender's).
    Conflict(Registrant),
    /// Any other status.
    Error,
}

/// How a batch went (`ReplicationTaskProcessor#process(List)`).
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOutcome {
    /// 200 with one reply per task, in order.
    Replied(Vec<ItemReply>),
    /// 503, or a read timeout: the batch is retried after 1 s.
    Congestion,
    /// Refused or a connect timeout: retried after 100 ms.
    NetworkError,
    /// Anything else: the batch is dropped.
    Failed,
}
