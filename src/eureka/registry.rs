//! The server's registry of leases, overridden statuses and the renewal threshold
//! (FACTS.md §1, §2, §6; `AbstractInstanceRegistry`, `PeerAwareInstanceRegistryImpl`).
//!
//! Leases are indexed densely by process id (every process of the world has one slot), which is
//! also the iteration order where Eureka iterates a `ConcurrentHashMap` (eviction candidates,
//! payloads). Self-preservation state lives here because Eureka keeps it in the registry too.

use crate::engine::{RngStream, SimTime};
use crate::scenario::{Release, ServerConfig};

use super::ids::ProcessId;
use super::lease::Lease;
use super::measured_rate::MeasuredRate;
use super::observe::Holding;
pub use super::protocol::Registrant;
use super::status::InstanceStatus;

/// The server-held `InstanceInfo` of a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldInfo {
    pub status: InstanceStatus,
    pub overridden_status: InstanceStatus,
    pub last_dirty: u64,
    /// `LeaseInfo#renewalIntervalInSecs` (ms), which bounds a replicated task's wait.
    pub renewal_interval_ms: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub lease: Lease,
    pub info: HeldInfo,
}

/// Outcome of an eviction run, for observation and explanation.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EvictionRun {
    /// Expiration was disabled (self-preservation or a zero threshold): nothing was examined.
    pub gated: bool,
    pub expired: usize,
    pub limit: usize,
    pub evicted: Vec<ProcessId>,
}

#[derive(Debug)]
pub struct Registry {
    entries: Vec<Option<Entry>>,
    overrides: Vec<Option<InstanceStatus>>,
    /// `expectedNumberOfClientsSendingRenews` (>= 1.9.4) or half of `expectedNumberOfRenewsPerMin`
    /// (older versions move it in steps of 2, so the halves are whole).
    expected_clients: i64,
    renews_per_min_threshold: i64,
    pub renews_last_min: MeasuredRate,
    release: Release,
    renewal_percent_threshold: f64,
    expected_client_renewal_interval_s: u64,
    enable_self_preservation: bool,
}

impl Registry {
    /// The registry as the SCN `InstanceRegistry` constructor leaves it: expected clients =
    /// `expected-number-of-clients-sending-renews` (FACTS.md §2.5).
    pub fn new(processes: usize, config: &ServerConfig, release: Release) -> Registry {
        let mut registry = Registry {
            entries: vec![None; processes],
            overrides: vec![None; processes],
            expected_clients: i64::from(config.expected_number_of_clients_sending_renews),
            renews_per_min_threshold: 0,
            renews_last_min: MeasuredRate::default(),
            release,
            renewal_percent_threshold: config.renewal_percent_threshold,
            expected_client_renewal_interval_s: if config.expected_client_renewal_interval_s == 0 {
                30
            } else {
                config.expected_client_renewal_interval_s
            },
            enable_self_preservation: config.enable_self_preservation,
        };
        registry.update_renews_per_min_threshold();
        registry
    }

    pub fn entry(&self, p: ProcessId) -> Option<&Entry> {
        self.entries[p].as_ref()
    }

    pub fn override_of(&self, p: ProcessId) -> Option<InstanceStatus> {
        self.overrides[p]
    }

    pub fn expected_clients(&self) -> i64 {
        self.expected_clients
    }

    pub fn threshold(&self) -> i64 {
        self.renews_per_min_threshold
    }

    /// Whether the process is registered with status UP (what "still UP in the registry" means).
    pub fn is_up(&self, p: ProcessId) -> bool {
        matches!(self.entries[p], Some(e) if e.info.status == InstanceStatus::Up)
    }

    /// Why the registry still lists `p` UP at `now` (`None` when it does not): its client
    /// still renews (`renewing`: the process is alive and heartbeats), with an overridden status
    /// of UP deciding what it shows; else (eviction ignores overrides) a lease not yet expired, expiry disabled by self-preservation or by a zero threshold
    /// (`isLeaseExpirationEnabled`, FACTS.md §2.2), or an expired lease whose eviction run has
    /// not come.
    pub fn holding(&self, now: SimTime, p: ProcessId, renewing: bool) -> Option<Holding> {
        if !self.is_up(p) {
            return None;
        }
        let entry = self.entries[p]?;
        Some(
            if renewing && self.overrides[p] == Some(InstanceStatus::Up) {
                Holding::Override
            } else if renewing {
                Holding::StillRenewing
            } else if !entry.lease.is_expired(now, 0) {
                Holding::LeaseNotExpired
            } else if self.is_lease_expiration_enabled() {
                Holding::EvictionPending
            } else if self.enable_self_preservation && self.renews_per_min_threshold <= 0 {
                Holding::ZeroThreshold
            } else {
                Holding::SelfPreservation
            },
        )
    }

    /// Statuses of every registered process, in process order (a full-registry payload).
    pub fn statuses(&self) -> Vec<Option<InstanceStatus>> {
        self.entries
            .iter()
            .map(|e| e.map(|e| e.info.status))
            .collect()
    }

    /// `getLocalRegistrySize()`: every lease, any status, expired ones included.
    pub fn size(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }

    /// `updateRenewsPerMinThreshold` (>= 1.9.4): `(int)(expected * (60.0 / interval) * pct)`;
    /// older: `(int)(expectedNumberOfRenewsPerMin * pct)` with renews/min = 2 per client whatever
    /// the interval (FACTS.md §2.3).
    fn update_renews_per_min_threshold(&mut self) {
        let pct = self.renewal_percent_threshold;
        let value = if self.release.threshold_uses_renewal_interval() {
            self.expected_clients as f64
                * (60.0 / self.expected_client_renewal_interval_s as f64)
                * pct
        } else {
            (self.expected_clients * 2) as f64 * pct
        };
        self.renews_per_min_threshold = value as i64;
    }

    /// `openForTraffic(count)` as SCN calls it: `count == 0 ? default-open-for-traffic-count :
    /// count` (FACTS.md §2.4, §2.5).
    pub fn open_for_traffic(&mut self, count: i64) {
        self.expected_clients = count;
        self.update_renews_per_min_threshold();
    }

    /// `isLeaseExpirationEnabled`: with self-preservation on, expiration needs
    /// `threshold > 0 && renewsLastMin > threshold` (strict; FACTS.md §2.2).
    pub fn is_lease_expiration_enabled(&self) -> bool {
        if !self.enable_self_preservation {
            return true;
        }
        self.renews_per_min_threshold > 0
            && self.renews_last_min.count() as i64 > self.renews_per_min_threshold
    }

    /// The status rule chain `FirstMatchWins(DownOrStarting, OverrideExists, LeaseExists)`,
    /// default AlwaysMatch (FACTS.md §6). `existing` is the lease holder's status, if any.
    fn overridden_status(
        &self,
        p: ProcessId,
        status: InstanceStatus,
        existing: Option<InstanceStatus>,
    ) -> InstanceStatus {
        // DownOrStartingRule: neither UP nor OUT_OF_SERVICE -> that status wins.
        if !matches!(status, InstanceStatus::Up | InstanceStatus::OutOfService) {
            return status;
        }
        // OverrideExistsRule.
        if let Some(over) = self.overrides[p] {
            return over;
        }
        // LeaseExistsRule (never for a replication, whose caller passes no `existing`): an
        // existing UP/OUT_OF_SERVICE holder keeps its status.
        if let Some(held @ (InstanceStatus::Up | InstanceStatus::OutOfService)) = existing {
            return held;
        }
        status
    }

    /// `AbstractInstanceRegistry#register`: every register makes a NEW lease (stamp = now, never
    /// renewed); a new id raises expected clients if it is > 0 (FACTS.md §1 Consequence C, §2.4).
    /// Always invalidates the response cache. Returns whether the new lease holds the existing
    /// `InstanceInfo` (it was dirtier than the registrant) rather than the registrant, which
    /// decides what earlier delta items of the old lease show (FACTS.md §4).
    ///
    /// `replication`: the register came from a peer (`isReplication`), so the status rules skip
    /// `LeaseExistsRule` (`rule/LeaseExistsRule#apply` returns no match for a replica).
    pub fn register(
        &mut self,
        now: SimTime,
        p: ProcessId,
        registrant: Registrant,
        replication: bool,
    ) -> bool {
        let existing = self.entries[p];
        let mut info = HeldInfo {
            status: registrant.status,
            overridden_status: registrant.overridden_status,
            last_dirty: registrant.last_dirty,
            renewal_interval_ms: registrant.renewal_interval_ms,
        };
        let mut kept_holder = false;
        match existing {
            // The existing InstanceInfo wins when it is dirtier than the registrant.
            Some(e) if e.info.last_dirty > registrant.last_dirty => {
                info = e.info;
                kept_holder = true;
            }
            Some(_) => {}
            None => {
                if self.expected_clients > 0 {
                    self.expected_clients += 1;
                    self.update_renews_per_min_threshold();
                }
            }
        }
        if info.overridden_status != InstanceStatus::Unknown && self.overrides[p].is_none() {
            self.overrides[p] = Some(info.overridden_status);
        }
        if let Some(over) = self.overrides[p] {
            info.overridden_status = over;
        }
        let held = existing.filter(|_| !replication).map(|e| e.info.status);
        info.status = self.overridden_status(p, info.status, held);
        self.entries[p] = Some(Entry {
            lease: Lease::new(now, registrant.lease_duration_ms),
            info,
        });
        kept_holder
    }

    /// The `InstanceInfo` this registry holds for `p`, as a peer would receive it (the object
    /// `register` mutated, which `replicateToPeers` sends; `PeerEurekaNode#heartbeat`'s info).
    pub fn held_registrant(&self, p: ProcessId) -> Option<Registrant> {
        let e = self.entries[p].as_ref()?;
        Some(Registrant {
            status: e.info.status,
            overridden_status: e.info.overridden_status,
            last_dirty: e.info.last_dirty,
            lease_duration_ms: e.lease.duration_ms,
            renewal_interval_ms: e.info.renewal_interval_ms,
        })
    }

    /// `AbstractInstanceRegistry#storeOverriddenStatusIfRequired`: a replicated heartbeat that
    /// got a 404 for being dirtier, or a 409's copy, carries an override: it goes into the map
    /// and onto the held copy, whose status stays as it is.
    pub fn store_overridden_status_if_required(&mut self, p: ProcessId, status: InstanceStatus) {
        if self.overrides[p] == Some(status) {
            return;
        }
        self.overrides[p] = Some(status);
        if let Some(e) = self.entries[p].as_mut() {
            e.info.overridden_status = status;
        }
    }

    /// Steady start: `p` registered long ago (expected clients counted as `register` counts
    /// them) and last renewed at `renewed_at_ms` (before time 0).
    pub fn restore(&mut self, p: ProcessId, registrant: Registrant, renewed_at_ms: i64) {
        self.register(SimTime(0), p, registrant, false);
        if let Some(entry) = self.entries[p].as_mut() {
            entry.lease = Lease::renewed_before(renewed_at_ms, registrant.lease_duration_ms);
        }
    }

    /// `AbstractInstanceRegistry#renew`: a renew of a held status the rules turn into UNKNOWN fails
    /// (and is not counted); otherwise the held status is silently reset to the rules' answer
    /// (no cache invalidation), the renew is counted and the lease stamped `now + duration`.
    /// Returns whether it succeeded and whether the held status changed silently.
    pub fn renew(&mut self, now: SimTime, p: ProcessId) -> RenewOutcome {
        let Some(entry) = self.entries[p] else {
            return RenewOutcome::NotFound;
        };
        let status = self.overridden_status(p, entry.info.status, Some(entry.info.status));
        if status == InstanceStatus::Unknown {
            return RenewOutcome::NotFound;
        }
        let changed = status != entry.info.status;
        self.renews_last_min.increment();
        if let Some(e) = self.entries[p].as_mut() {
            e.info.status = status;
            e.lease.renew(now);
        }
        RenewOutcome::Renewed {
            silent_status_change: changed,
        }
    }

    /// `getInstanceByAppAndId`: hides an expired lease while expiration is enabled.
    pub fn visible(&self, now: SimTime, p: ProcessId) -> Option<&Entry> {
        let e = self.entries[p].as_ref()?;
        if !self.is_lease_expiration_enabled() || !e.lease.is_expired(now, 0) {
            Some(e)
        } else {
            None
        }
    }

    /// `internalCancel` plus the expected-clients decrement: from 1.9.17 every removal (explicit
    /// or eviction) lowers it; before, only an explicit cancel (`PeerAwareInstanceRegistryImpl
    /// #cancel`) does (FACTS.md §2.4). Removes the overridden status. Returns whether a lease was
    /// removed (false = 404).
    pub fn cancel(&mut self, now: SimTime, p: ProcessId, explicit: bool) -> bool {
        let Some(mut entry) = self.entries[p].take() else {
            return false;
        };
        self.overrides[p] = None;
        entry.lease.cancel(now);
        if (explicit || self.release.eviction_lowers_expected()) && self.expected_clients > 0 {
            // Older versions subtract 2 from renews per minute: one client either way.
            self.expected_clients -= 1;
            self.update_renews_per_min_threshold();
        }
        true
    }

    /// `AbstractInstanceRegistry#statusUpdate` (PUT .../status?value=S): renews the lease (not
    /// counted as a renew); if the status differs, stores the override and sets it. `None` = 404.
    /// Returns whether the status changed (then the cache is invalidated).
    pub fn status_update(
        &mut self,
        now: SimTime,
        p: ProcessId,
        new_status: InstanceStatus,
        last_dirty: u64,
    ) -> Option<bool> {
        self.visible(now, p)?;
        let override_slot = &mut self.overrides[p];
        let entry = self.entries[p].as_mut()?;
        entry.lease.renew(now);
        if entry.info.status == new_status {
            return Some(false);
        }
        *override_slot = Some(new_status);
        entry.info.overridden_status = new_status;
        entry.info.status = new_status;
        if last_dirty > entry.info.last_dirty {
            entry.info.last_dirty = last_dirty;
        }
        Some(true)
    }

    /// `AbstractInstanceRegistry#deleteStatusOverride` (DELETE .../status, no value => UNKNOWN):
    /// renews the lease; if an override existed, clears it and sets `new_status`. `None` = 404.
    /// Returns whether an override existed (then the cache is invalidated).
    pub fn delete_status_override(
        &mut self,
        now: SimTime,
        p: ProcessId,
        new_status: InstanceStatus,
    ) -> Option<bool> {
        self.visible(now, p)?;
        let had_override = self.overrides[p].take().is_some();
        let entry = self.entries[p].as_mut()?;
        entry.lease.renew(now);
        if had_override {
            entry.info.overridden_status = InstanceStatus::Unknown;
            entry.info.status = new_status;
        }
        Some(had_override)
    }

    /// `InstanceResource#validateDirtyTimestamp` for a client (not a replica): the client is
    /// dirtier -> 404 (forces a re-register); otherwise 200.
    pub fn heartbeat_needs_reregister(
        &self,
        now: SimTime,
        p: ProcessId,
        client_dirty: u64,
    ) -> bool {
        match self.visible(now, p) {
            Some(e) => client_dirty > e.info.last_dirty,
            None => false,
        }
    }

    /// `InstanceResource#validateDirtyTimestamp` for a replicated heartbeat: the incoming copy
    /// is dirtier -> 404 (the sender registers it here); the held copy is dirtier -> 409 with
    /// the held copy (the sender takes it); else 200. A lease hidden as expired is 200.
    pub fn validate_replicated_dirty(
        &self,
        now: SimTime,
        p: ProcessId,
        incoming_dirty: u64,
    ) -> DirtyCheck {
        let Some(e) = self.visible(now, p) else {
            return DirtyCheck::Ok;
        };
        if incoming_dirty > e.info.last_dirty {
            DirtyCheck::NotFound
        } else if e.info.last_dirty > incoming_dirty {
            self.held_registrant(p)
                .map_or(DirtyCheck::Ok, DirtyCheck::Conflict)
        } else {
            DirtyCheck::Ok
        }
    }

    /// `AbstractInstanceRegistry#evict(additionalLeaseMs)` (FACTS.md §2.1): gate on expiration,
    /// collect expired leases, cap at `size - (int)(size * pct)`, evict in random order by a
    /// partial Fisher-Yates shuffle.
    pub fn evict(&mut self, now: SimTime, additional_ms: u64, rng: &mut RngStream) -> EvictionRun {
        if !self.is_lease_expiration_enabled() {
            return EvictionRun {
                gated: true,
                ..EvictionRun::default()
            };
        }
        let mut expired: Vec<ProcessId> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Some(e) if e.lease.is_expired(now, additional_ms)))
            .map(|(p, _)| p)
            .collect();
        let limit = eviction_limit(self.size(), self.renewal_percent_threshold);
        let to_evict = expired.len().min(limit);
        let mut run = EvictionRun {
            gated: false,
            expired: expired.len(),
            limit,
            evicted: Vec::with_capacity(to_evict),
        };
        for i in 0..to_evict {
            let next = i + rng.below((expired.len() - i) as u64) as usize;
            expired.swap(i, next);
            let p = expired[i];
            self.cancel(now, p, false);
            run.evicted.push(p);
        }
        run
    }

    /// The 15-minute `updateRenewalThreshold` with `count` = UP instances in the embedded client's
    /// cache (FACTS.md §2.4). Returns whether expected clients were reset.
    pub fn update_renewal_threshold(&mut self, count: i64) -> bool {
        let pct = self.renewal_percent_threshold;
        let fires = if self.release.threshold_update_compares_expected() {
            count as f64 > pct * self.expected_clients as f64
        } else {
            (count * 2) as f64 > pct * self.renews_per_min_threshold as f64
        };
        if fires || !self.enable_self_preservation {
            self.expected_clients = count;
            self.update_renews_per_min_threshold();
            true
        } else {
            false
        }
    }
}

/// The 15 % cap with Java's int arithmetic: `size - (int)(size * pct)`.
pub fn eviction_limit(registry_size: usize, pct: f64) -> usize {
    let threshold = (registry_size as f64 * pct) as usize;
    registry_size - threshold.min(registry_size)
}

/// [`Registry::validate_replicated_dirty`]'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirtyCheck {
    Ok,
    NotFound,
    Conflict(Registrant),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewOutcome {
    NotFound,
    Renewed { silent_status_change: bool },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;
    use crate::scenario::{EurekaVersion, Train};

    fn registry(n: usize) -> Registry {
        Registry::new(n, &ServerConfig::default(), Release::default())
    }

    fn with_status(status: InstanceStatus, dirty: u64) -> Registrant {
        Registrant {
            status,
            ..Registrant::up(dirty)
        }
    }

    fn status(r: &Registry, p: ProcessId) -> InstanceStatus {
        r.entry(p).unwrap().info.status
    }

    /// Why a stopped instance is still UP, one rule each: a live client renewing, a fresh
    /// lease before `registration + 90 s` (`Lease#isExpired`, strict), a zero threshold, renews
    /// at or below the threshold (self-preservation: `renewsLastMin > threshold`, strict), and an
    /// expired lease with expiry enabled (the eviction run has not come).
    #[test]
    fn holding_names_the_rule_that_keeps_an_instance() {
        let t0 = SimTime(0);
        let mut r = registry(3);
        r.register(t0, 0, Registrant::up(1), false);
        assert_eq!(r.holding(t0, 1, false), None, "never registered");
        assert_eq!(r.holding(t0, 0, true), Some(Holding::StillRenewing));
        assert_eq!(
            r.holding(SimTime(90_000), 0, false),
            Some(Holding::LeaseNotExpired)
        );
        let expired = SimTime(90_001);
        // No expected clients (`openForTraffic(0)` on a server that synced none): threshold 0.
        r.open_for_traffic(0);
        assert_eq!(r.threshold(), 0);
        assert_eq!(r.holding(expired, 0, false), Some(Holding::ZeroThreshold));
        // 2 expected clients: threshold (int)(2 * 2 * 0.85) = 3.
        r.open_for_traffic(2);
        assert_eq!(r.threshold(), 3);
        for _ in 0..3 {
            r.renews_last_min.increment();
        }
        r.renews_last_min.roll();
        assert_eq!(
            r.holding(expired, 0, false),
            Some(Holding::SelfPreservation)
        );
        r.renews_last_min.increment();
        r.renews_last_min.increment();
        r.renews_last_min.increment();
        r.renews_last_min.increment();
        r.renews_last_min.roll();
        assert_eq!(r.holding(expired, 0, false), Some(Holding::EvictionPending));
        r.cancel(expired, 0, true);
        assert_eq!(r.holding(expired, 0, false), None, "cancelled");
        // An override of UP (PUT .../status?value=UP) decides what a renewing client shows; a
        // dead one is held by its lease like any other (evict() ignores overrides).
        r.register(t0, 1, Registrant::up(1), false);
        assert_eq!(r.status_update(t0, 1, InstanceStatus::Up, 2), Some(false));
        r.overrides[1] = Some(InstanceStatus::Up);
        assert_eq!(r.holding(t0, 1, true), Some(Holding::Override));
        assert_eq!(r.holding(t0, 1, false), Some(Holding::LeaseNotExpired));
    }

    #[test]
    fn eviction_cap_examples_from_facts_2_1() {
        let cases = [(1, 1), (6, 1), (7, 2), (10, 2), (20, 3), (100, 15)];
        for (size, limit) in cases {
            assert_eq!(eviction_limit(size, 0.85), limit, "size {size}");
        }
    }

    /// FACTS.md §2.5 worked example: N clients + the phantom 1 -> threshold floor(1.7 (N+1)).
    #[test]
    fn threshold_counts_the_phantom_client() {
        let mut r = registry(20);
        r.open_for_traffic(1);
        assert_eq!(r.threshold(), 1);
        for p in 0..10 {
            r.register(SimTime(0), p, Registrant::up(0), false);
        }
        assert_eq!(r.expected_clients(), 11);
        assert_eq!(r.threshold(), 18);
        // Re-registering an existing id does not count again.
        r.register(SimTime(5), 3, Registrant::up(0), false);
        assert_eq!(r.expected_clients(), 11);
    }

    #[test]
    fn expected_zero_never_grows() {
        // Netflix/eureka#1459: the expected == 0 guard.
        let mut r = registry(5);
        r.open_for_traffic(0);
        r.register(SimTime(0), 0, Registrant::up(0), false);
        assert_eq!(r.expected_clients(), 0);
        assert_eq!(r.threshold(), 0);
        for _ in 0..100 {
            r.renews_last_min.increment();
        }
        r.renews_last_min.roll();
        assert!(
            !r.is_lease_expiration_enabled(),
            "threshold 0 => never expire"
        );
    }

    #[test]
    fn expiration_needs_strictly_more_renews_than_the_threshold() {
        let mut r = registry(20);
        r.open_for_traffic(1);
        for p in 0..10 {
            r.register(SimTime(0), p, Registrant::up(0), false);
        }
        for _ in 0..18 {
            r.renews_last_min.increment();
        }
        r.renews_last_min.roll();
        assert!(!r.is_lease_expiration_enabled(), "18 > 18 is false");
        for _ in 0..19 {
            r.renews_last_min.increment();
        }
        r.renews_last_min.roll();
        assert!(r.is_lease_expiration_enabled());
    }

    #[test]
    fn eviction_lowers_expected_only_from_1_9_17() {
        let old = Release {
            eureka: EurekaVersion::new(1, 9, 16),
            ..Release::of_train(Train::Greenwich)
        };
        for (release, expected_after) in [(Release::default(), 2), (old, 3)] {
            let mut r = Registry::new(4, &ServerConfig::default(), release);
            r.open_for_traffic(1);
            r.register(SimTime(0), 0, Registrant::up(0), false);
            r.register(SimTime(0), 1, Registrant::up(0), false);
            assert_eq!(r.expected_clients(), 3);
            assert!(r.cancel(SimTime(1), 0, false));
            assert_eq!(r.expected_clients(), expected_after, "{release}");
            assert!(r.cancel(SimTime(1), 1, true));
            assert_eq!(r.expected_clients(), expected_after - 1);
            assert!(!r.cancel(SimTime(1), 1, true), "second cancel is a 404");
        }
    }

    /// InstanceRegistryTest#testStatusOverrideSetAndRemoval.
    #[test]
    fn override_set_and_removal() {
        let mut r = registry(2);
        r.open_for_traffic(1);
        r.register(SimTime(0), 0, Registrant::up(1), false);
        assert_eq!(
            r.status_update(SimTime(1), 0, InstanceStatus::OutOfService, 1),
            Some(true)
        );
        assert_eq!(status(&r, 0), InstanceStatus::OutOfService);
        r.register(SimTime(2), 0, Registrant::up(5), false);
        assert_eq!(
            status(&r, 0),
            InstanceStatus::OutOfService,
            "override beats a later UP"
        );
        assert_eq!(
            r.delete_status_override(SimTime(3), 0, InstanceStatus::Down),
            Some(true)
        );
        assert_eq!(status(&r, 0), InstanceStatus::Down);
        r.register(SimTime(4), 0, Registrant::up(6), false);
        assert_eq!(status(&r, 0), InstanceStatus::Up);
    }

    /// InstanceRegistryTest#testStatusOverrideWithRenewAppliedToAReplica: a renew resets the held
    /// status to the override, silently.
    #[test]
    fn renew_reapplies_the_override_silently() {
        let mut r = registry(1);
        r.register(SimTime(0), 0, Registrant::up(1), false);
        r.status_update(SimTime(1), 0, InstanceStatus::OutOfService, 1);
        r.entries[0].as_mut().unwrap().info.status = InstanceStatus::Up;
        assert_eq!(
            r.renew(SimTime(2), 0),
            RenewOutcome::Renewed {
                silent_status_change: true
            }
        );
        assert_eq!(status(&r, 0), InstanceStatus::OutOfService);
    }

    /// InstanceRegistryTest#testStatusOverrideStartingStatus: STARTING beats the override.
    #[test]
    fn starting_beats_the_override() {
        let mut r = registry(1);
        r.register(SimTime(0), 0, Registrant::up(1), false);
        r.status_update(SimTime(1), 0, InstanceStatus::OutOfService, 1);
        r.register(
            SimTime(2),
            0,
            with_status(InstanceStatus::Starting, 2),
            false,
        );
        assert_eq!(status(&r, 0), InstanceStatus::Starting);
    }

    /// InstanceRegistryTest#testStatusOverrideWithExistingLeaseUp / ...OutOfService.
    #[test]
    fn existing_lease_keeps_up_or_out_of_service() {
        let mut r = registry(2);
        r.register(SimTime(0), 0, Registrant::up(1), false);
        r.register(
            SimTime(1),
            0,
            with_status(InstanceStatus::OutOfService, 2),
            false,
        );
        assert_eq!(status(&r, 0), InstanceStatus::Up);
        r.register(
            SimTime(0),
            1,
            with_status(InstanceStatus::OutOfService, 1),
            false,
        );
        r.register(SimTime(1), 1, Registrant::up(2), false);
        assert_eq!(status(&r, 1), InstanceStatus::OutOfService);
        r.register(SimTime(2), 1, Registrant::up(3), false);
        assert_eq!(status(&r, 1), InstanceStatus::OutOfService);
    }

    /// FACTS.md §6: CANCEL_OVERRIDE -> UNKNOWN -> the next renew fails (404, not counted) -> the
    /// client re-registers UP.
    #[test]
    fn unknown_after_cancel_override_fails_the_renew() {
        let mut r = registry(1);
        r.register(SimTime(0), 0, Registrant::up(1), false);
        r.status_update(SimTime(1), 0, InstanceStatus::OutOfService, 1);
        r.delete_status_override(SimTime(2), 0, InstanceStatus::Unknown);
        assert_eq!(status(&r, 0), InstanceStatus::Unknown);
        assert_eq!(r.renew(SimTime(3), 0), RenewOutcome::NotFound);
        r.renews_last_min.roll();
        assert_eq!(r.renews_last_min.count(), 0);
        r.register(SimTime(4), 0, Registrant::up(4), false);
        assert_eq!(status(&r, 0), InstanceStatus::Up);
    }

    #[test]
    fn a_late_register_over_a_dirtier_lease_keeps_the_held_info() {
        let mut r = registry(1);
        r.register(SimTime(0), 0, with_status(InstanceStatus::Down, 10), false);
        r.register(SimTime(1), 0, Registrant::up(5), false);
        assert_eq!(status(&r, 0), InstanceStatus::Down);
    }

    #[test]
    fn eviction_is_capped_and_gated() {
        let mut rng = StreamFactory::new(1).stream("server");
        let mut r = registry(10);
        r.open_for_traffic(1);
        for p in 0..10 {
            r.register(SimTime(0), p, Registrant::up(0), false);
        }
        // Not renewed since registration: expirable after 90 s. Enough renews to enable expiry.
        for _ in 0..100 {
            r.renews_last_min.increment();
        }
        r.renews_last_min.roll();
        let run = r.evict(SimTime(90_001), 0, &mut rng);
        assert!(!run.gated);
        assert_eq!((run.expired, run.limit, run.evicted.len()), (10, 2, 2));
        assert_eq!(r.size(), 8);
        let mut distinct = run.evicted.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 2);
        // Compensation lengthens leases: nothing is expired with 10 s extra at 90.001 s.
        let run = r.evict(SimTime(90_001), 10_000, &mut rng);
        assert_eq!(run.expired, 0);
    }

    #[test]
    fn threshold_update_uses_up_count_and_the_version_rule() {
        let mut r = registry(1);
        r.open_for_traffic(1);
        assert!(
            !r.update_renewal_threshold(0),
            "count 0 never lowers with self-preservation"
        );
        assert!(r.update_renewal_threshold(5));
        assert_eq!(r.expected_clients(), 5);
        assert_eq!(r.threshold(), 8);
        assert!(!r.update_renewal_threshold(4), "4 > 4.25 is false");
    }

    /// TimeConsumingInstanceRegistryTest#testLeaseExpirationAndUpdateRenewalThreshold (FACTS.md
    /// §12), re-expressed: threshold updates every 5 s, eviction every 10 s, pct 0.85,
    /// openForTraffic(1); 50 instances with a 30 s lease registered at t = 0, 45 of them renewing
    /// at 15, 45, 75 and 105 s. Checkpoints: at 40 s expiration is disabled (no complete window
    /// yet, renews 0) and 50 instances remain; at 80 s it is enabled, renews 90, and the 5 leases
    /// never renewed (expirable at registration + 30 s) were evicted: 45 remain; at 120 s, once
    /// the embedded client's view holds 151 instances, the threshold is (int)(151 * 2 * 0.85) =
    /// 256 and 45 instances remain. The initial threshold is "(50*2 + 1(initial value))*85% = 86".
    #[test]
    fn time_consuming_registry_checkpoints() {
        let config = ServerConfig {
            renewal_threshold_update_interval_ms: 5_000,
            eviction_interval_ms: 10_000,
            ..ServerConfig::default()
        };
        let mut rng = StreamFactory::new(12).stream("server");
        let mut r = Registry::new(50, &config, Release::default());
        r.open_for_traffic(1);
        let lease = |dirty| Registrant {
            lease_duration_ms: 30_000,
            renewal_interval_ms: 10_000,
            ..Registrant::up(dirty)
        };
        for p in 0..50 {
            r.register(SimTime(0), p, lease(0), false);
        }
        assert_eq!(r.threshold(), 86);
        let mut checkpoints = Vec::new();
        for step in 1..=24u64 {
            let now = SimTime(step * 5_000);
            let secs = step * 5;
            if [15, 45, 75, 105].contains(&secs) {
                for p in 0..45 {
                    r.renew(now, p);
                }
            }
            if secs % 60 == 0 {
                r.renews_last_min.roll();
            }
            // The embedded client's view: empty until the 150 more instances show up at 120 s.
            r.update_renewal_threshold(if secs >= 120 { 151 } else { 0 });
            if secs % 10 == 0 {
                r.evict(now, 0, &mut rng);
            }
            if [40, 80, 120].contains(&secs) {
                checkpoints.push((
                    secs,
                    r.is_lease_expiration_enabled(),
                    r.renews_last_min.count(),
                    r.size(),
                    r.threshold(),
                ));
            }
        }
        assert_eq!(checkpoints[0], (40, false, 0, 50, 86));
        let (_, enabled, renews, size, _) = checkpoints[1];
        assert_eq!((enabled, renews, size), (true, 90, 45));
        let (_, _, _, size, threshold) = checkpoints[2];
        assert_eq!((size, threshold), (45, 256));
        assert!(
            (45..50).all(|p| r.entry(p).is_none()),
            "the never-renewed five are gone"
        );
    }
}
