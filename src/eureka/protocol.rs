//! The protocol between the Eureka clients and the server: the REST calls, their replies and the
//! payloads they carry (`InstanceInfo`, `Applications`, the delta), as data only.
//!
//! This is the bottom layer of `eureka`: it imports no rule, so every rule (server, client,
//! cache, delta) can speak it without knowing the others.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use crate::engine::SimTime;

use super::ids::ProcessId;
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
}

/// The `InstanceInfo` a client sends with a register (`POST /apps/{app}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registrant {
    pub status: InstanceStatus,
    /// The client's `overriddenStatus` field (UNKNOWN unless a replica carries one).
    pub overridden_status: InstanceStatus,
    pub last_dirty: u64,
    pub lease_duration_ms: u64,
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
