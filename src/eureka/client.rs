//! The Eureka client of one process (`com.netflix.discovery.DiscoveryClient`, FACTS.md §5).
//!
//! Its three tasks are fixed-delay: the heartbeat and the cache refresh re-arm themselves one
//! interval after the previous run ENDED (when its reply arrived; `TimedSupervisorTask`), and the
//! `InstanceInfoReplicator` one interval after its run ended. Request time therefore makes every
//! phase drift later, as in production.

use std::rc::Rc;

use crate::engine::{RngStream, SimTime};
use crate::scenario::ClientConfig;

use super::ids::{ProcessId, ServerId};
use super::protocol::{Payload, Registrant};
use super::rate_limiter::RateLimiter;
use super::status::InstanceStatus;

/// `InstanceInfoReplicator`'s burst size (hard-coded 2 in `DiscoveryClient#initScheduledTasks`).
pub const REPLICATOR_BURST: u64 = 2;

/// `InstanceInfoReplicator#stop` waits this long for running and due tasks (Eureka >= 1.8.7).
pub const REPLICATOR_STOP_WAIT_MS: u64 = 3_000;

/// The client's own `InstanceInfo`.
#[derive(Debug, Clone, Copy)]
pub struct InstanceInfo {
    pub status: InstanceStatus,
    pub dirty: bool,
    pub last_dirty: u64,
}

/// The replicator's single-thread scheduler.
#[derive(Debug, Default)]
pub struct Replicator {
    pub limiter: RateLimiter,
    /// A register is in flight on the replicator thread, with the dirty stamp it captured.
    pub busy: Option<u64>,
    /// On-demand tasks submitted while busy; they run after the current one.
    pub queued: u32,
    /// When the pending periodic run is due, if one is scheduled.
    pub periodic_due: Option<SimTime>,
    pub generation: u32,
    /// `shutdown()` was called: no new periodic runs; terminated when idle.
    pub stopping: bool,
    /// The executor is gone (terminated or `shutdownNow`).
    pub dead: bool,
}

/// Where `DiscoveryClient#shutdown` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownPhase {
    Running,
    /// Waiting for the replicator to stop (two-phase stop).
    StoppingReplicator,
    /// The unregister DELETE is in flight.
    Unregistering,
    Done,
}

#[derive(Debug)]
pub struct DiscoveryClient {
    pub config: ClientConfig,
    pub info: InstanceInfo,
    /// Bumped when the process restarts; replies to an earlier incarnation are dropped.
    pub incarnation: u32,
    /// The status-change listener is registered.
    pub listener: bool,
    /// The heartbeat and cache-refresh executors run.
    pub tasks_running: bool,
    pub heartbeat_generation: u32,
    pub fetch_generation: u32,
    /// A heartbeat's re-register is in flight with this dirty stamp.
    pub heartbeat_reregister: Option<u64>,
    pub replicator: Replicator,
    pub shutdown: ShutdownPhase,
    /// The local registry: the last full fetch with the deltas applied since (a copy of its own
    /// once a delta changed it, see `delta.rs`).
    pub cache: Option<Rc<Payload>>,
    /// Per called application: its instances in the order of the last shuffle, UP only with
    /// `filter-only-up-instances` (the default).
    pub up_lists: Vec<(usize, Vec<ProcessId>)>,
    pub(in crate::eureka) rng: RngStream,
    /// The server it calls (`eureka.client.service-url.defaultZone`; one server for now).
    pub server: ServerId,
}

impl DiscoveryClient {
    pub fn new(config: ClientConfig, rng: RngStream) -> DiscoveryClient {
        DiscoveryClient {
            config,
            info: InstanceInfo {
                status: InstanceStatus::Starting,
                dirty: false,
                last_dirty: 0,
            },
            incarnation: 0,
            listener: false,
            tasks_running: false,
            heartbeat_generation: 0,
            fetch_generation: 0,
            heartbeat_reregister: None,
            replicator: Replicator::default(),
            shutdown: ShutdownPhase::Running,
            cache: None,
            up_lists: Vec::new(),
            rng,
            server: ServerId::FIRST,
        }
    }

    /// The client's instances of `application` (`getInstancesByVipAddress`: UP only unless
    /// `filter-only-up-instances = false`; empty if it calls none such).
    pub fn up_list(&self, application: usize) -> &[ProcessId] {
        self.up_lists
            .iter()
            .find(|(a, _)| *a == application)
            .map_or(&[], |(_, list)| list.as_slice())
    }

    /// `InstanceInfo#setIsDirtyWithTime`.
    pub(in crate::eureka) fn set_dirty(&mut self, wall_ms: u64) -> u64 {
        self.info.dirty = true;
        self.info.last_dirty = wall_ms;
        wall_ms
    }

    /// `InstanceInfo#unsetIsDirty(ts)`: only if nothing dirtied it after `ts`.
    pub(in crate::eureka) fn unset_dirty(&mut self, ts: u64) {
        if self.info.last_dirty <= ts {
            self.info.dirty = false;
        }
    }

    pub(in crate::eureka) fn registrant(&self) -> Registrant {
        Registrant {
            status: self.info.status,
            overridden_status: InstanceStatus::Unknown,
            last_dirty: self.info.last_dirty,
            lease_duration_ms: self.config.lease_expiration_duration_s * 1000,
        }
    }

    pub(in crate::eureka) fn renewal_interval_ms(&self) -> u64 {
        self.config.lease_renewal_interval_s * 1000
    }

    pub(in crate::eureka) fn fetch_interval_ms(&self) -> u64 {
        self.config.registry_fetch_interval_s * 1000
    }

    pub(in crate::eureka) fn replication_interval_ms(&self) -> u64 {
        self.config.instance_info_replication_interval_s * 1000
    }

    /// `allowedRatePerMinute = 60 * burstSize / replicationIntervalSeconds` (int division).
    pub(in crate::eureka) fn allowed_rate_per_minute(&self) -> u64 {
        60 * REPLICATOR_BURST / self.config.instance_info_replication_interval_s.max(1)
    }
}

/// `Collections.shuffle` (Fisher-Yates from the end) with the client's stream.
pub(in crate::eureka) fn shuffle(list: &mut [ProcessId], rng: &mut RngStream) {
    for i in (1..list.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        list.swap(i, j);
    }
}
