//! Delta fetches (FACTS.md §4): the server's `recentlyChangedQueue` and its retention, the
//! `ALL_APPS_DELTA` payload, and the client's reconcile hash.
//!
//! Server side (`AbstractInstanceRegistry`): every register, cancel/eviction, status update and
//! override removal appends a `RecentlyChangedItem` holding a reference to the lease; a
//! fixed-delay timer drops items older than the retention. A delta payload renders every item
//! still queued from the lease holder's CURRENT state, so an item's status and action type are
//! those of the moment the payload is generated, not of the moment it was queued.
//!
//! Client side (`DiscoveryClient#updateDelta`): ADDED and MODIFIED replace the instance by id,
//! DELETED removes it; then the local reconcile hash must equal the payload's `appsHashCode` (the
//! full registry's, computed when the delta was generated), else one full fetch replaces the local
//! registry.

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::engine::SimTime;

use super::ids::ProcessId;
pub use super::protocol::{ActionType, DeltaContent, DeltaPayload, Holder, ReconcileHash};
use super::response_cache::Generated;
use super::status::InstanceStatus;

/// The version of a local registry a delta has changed: it is no server payload any more, so it
/// compares different from every payload a later full fetch brings.
pub(in crate::eureka) const LOCAL_VERSION: u64 = u64::MAX;

/// A shared, mutable lease holder: Eureka mutates the `InstanceInfo` in place (status updates,
/// `setActionType`), and every queued item that references it sees the change.
type HolderRef = Rc<Cell<Holder>>;

/// `AbstractInstanceRegistry.RecentlyChangedItem`: the lease (here its holder) and when the item
/// was queued.
#[derive(Debug)]
struct RecentlyChangedItem {
    process: ProcessId,
    holder: HolderRef,
    last_update: SimTime,
}

/// `AbstractInstanceRegistry#recentlyChangedQueue` with the holder of every current lease.
#[derive(Debug)]
pub struct RecentlyChangedQueue {
    items: VecDeque<RecentlyChangedItem>,
    /// The holder of each process's current lease (`None` once cancelled).
    holders: Vec<Option<HolderRef>>,
    retention_ms: u64,
}

impl RecentlyChangedQueue {
    pub fn new(processes: usize, retention_ms: u64) -> RecentlyChangedQueue {
        RecentlyChangedQueue {
            items: VecDeque::new(),
            holders: vec![None; processes],
            retention_ms,
        }
    }

    fn push(&mut self, now: SimTime, p: ProcessId, holder: HolderRef) {
        self.items.push_back(RecentlyChangedItem {
            process: p,
            holder,
            last_update: now,
        });
    }

    /// `AbstractInstanceRegistry#register`: the new lease holds the registrant, a NEW
    /// `InstanceInfo`, unless the existing holder was dirtier (`kept_holder`), in which case the
    /// new lease holds that same object. Either way the holder gets the rules' status and
    /// ActionType ADDED, and an item is queued. A replaced holder keeps its last state.
    pub fn registered(
        &mut self,
        now: SimTime,
        p: ProcessId,
        status: InstanceStatus,
        kept_holder: bool,
    ) {
        let holder = Holder {
            status,
            action: ActionType::Added,
        };
        let reference = match &self.holders[p] {
            Some(existing) if kept_holder => {
                existing.set(holder);
                Rc::clone(existing)
            }
            _ => Rc::new(Cell::new(holder)),
        };
        self.holders[p] = Some(Rc::clone(&reference));
        self.push(now, p, reference);
    }

    /// Steady start: the holder of a lease registered long ago (ADDED, its item long purged),
    /// so that a later cancel or status change queues an item for it.
    pub fn restore_holder(&mut self, p: ProcessId, status: InstanceStatus) {
        self.holders[p] = Some(Rc::new(Cell::new(Holder {
            status,
            action: ActionType::Added,
        })));
    }

    /// `AbstractInstanceRegistry#statusUpdate` (status changed) and `#deleteStatusOverride`
    /// (an override existed): the holder takes `status` and ActionType MODIFIED; an item is
    /// queued.
    pub fn modified(&mut self, now: SimTime, p: ProcessId, status: InstanceStatus) {
        let Some(reference) = self.holders[p].clone() else {
            return;
        };
        reference.set(Holder {
            status,
            action: ActionType::Modified,
        });
        self.push(now, p, reference);
    }

    /// `AbstractInstanceRegistry#internalCancel` (explicit cancel or eviction): the holder keeps
    /// its status and takes ActionType DELETED; an item is queued. Earlier items of the same lease
    /// now render as DELETED too.
    pub fn cancelled(&mut self, now: SimTime, p: ProcessId) {
        let Some(reference) = self.holders[p].take() else {
            return;
        };
        let mut holder = reference.get();
        holder.action = ActionType::Deleted;
        reference.set(holder);
        self.push(now, p, reference);
    }

    /// `AbstractInstanceRegistry#renew` resetting the status to the override with
    /// `setStatusWithoutDirty`: no item is queued, but queued items of this lease render the new
    /// status.
    pub fn status_set_silently(&mut self, p: ProcessId, status: InstanceStatus) {
        if let Some(reference) = &self.holders[p] {
            let mut holder = reference.get();
            holder.status = status;
            reference.set(holder);
        }
    }

    /// `AbstractInstanceRegistry#getDeltaRetentionTask`: pop from the head while
    /// `item.lastUpdateTime < now - retentionTimeInMSInDeltaQueue`, stopping at the first younger
    /// item (FACTS.md §4). Returns how many items were dropped.
    pub fn purge(&mut self, now: SimTime) -> usize {
        let mut dropped = 0;
        while let Some(head) = self.items.front() {
            if head.last_update.ms().saturating_add(self.retention_ms) >= now.ms() {
                break;
            }
            self.items.pop_front();
            dropped += 1;
        }
        dropped
    }

    /// Every queued item as a payload would render it now, in queue order: (process, holder's
    /// current state, when the item was queued).
    pub fn rendered(&self) -> impl Iterator<Item = (ProcessId, Holder, SimTime)> + '_ {
        self.items
            .iter()
            .map(|item| (item.process, item.holder.get(), item.last_update))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The content of a delta payload generated now (`AbstractInstanceRegistry
    /// #getApplicationDeltas`): one instance per id, a later item replacing an earlier one
    /// (`Application#addInstance` is keyed by id), and the reconcile hash of the full registry
    /// `statuses`, computed in the same locked section.
    pub fn delta_content(&self, statuses: &[Option<InstanceStatus>]) -> DeltaContent {
        let mut latest: Vec<Option<Holder>> = vec![None; self.holders.len()];
        for (p, holder, _) in self.rendered() {
            latest[p] = Some(holder);
        }
        let instances = latest
            .into_iter()
            .enumerate()
            .filter_map(|(p, h)| h.map(|h| (p, h)))
            .collect();
        DeltaContent {
            instances,
            apps_hash: ReconcileHash::of(statuses),
        }
    }
}

impl Generated for DeltaPayload {
    type Content = DeltaContent;

    fn build(version: u64, generated_at: SimTime, content: DeltaContent) -> DeltaPayload {
        DeltaPayload {
            version,
            generated_at,
            content,
            applied: Default::default(),
        }
    }

    fn version(&self) -> u64 {
        self.version
    }
}

/// `DiscoveryClient#updateDelta` on a local registry (statuses by process): ADDED and MODIFIED
/// replace the instance by id (`Application#addInstance`), DELETED removes it
/// (`Application#removeInstance`). Calls `changed(p, old, new)` for every instance whose local
/// status changes, before the change is written; returns whether any did.
pub fn apply_delta(
    local: &mut [Option<InstanceStatus>],
    delta: &DeltaContent,
    mut changed: impl FnMut(ProcessId, Option<InstanceStatus>, Option<InstanceStatus>),
) -> bool {
    let mut any = false;
    for &(p, holder) in &delta.instances {
        let new = match holder.action {
            ActionType::Added | ActionType::Modified => Some(holder.status),
            ActionType::Deleted => None,
        };
        if let Some(slot) = local.get_mut(p)
            && *slot != new
        {
            changed(p, *slot, new);
            *slot = new;
            any = true;
        }
    }
    any
}

/// Whether applying `delta` would change `local` (so an unchanged, re-served delta costs no copy
/// of a shared local registry).
pub fn delta_changes(local: &[Option<InstanceStatus>], delta: &DeltaContent) -> bool {
    delta.instances.iter().any(|&(p, holder)| {
        let new = match holder.action {
            ActionType::Added | ActionType::Modified => Some(holder.status),
            ActionType::Deleted => None,
        };
        local.get(p).is_some_and(|slot| *slot != new)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use InstanceStatus::{Down, Up};

    fn rendered(q: &RecentlyChangedQueue) -> Vec<(ProcessId, ActionType, InstanceStatus)> {
        q.rendered()
            .map(|(p, h, _)| (p, h.action, h.status))
            .collect()
    }

    /// `getDeltaRetentionTask` with the timer's runs at 30, 60, 90 ... s (delay = period = 30 s
    /// from the registry constructor at 0): an item queued at e is dropped by the first run r with
    /// e < r - 180 s. Hand-computed: queued at 5 s -> first run with r > 185 s is 210 s (lives
    /// 205 s); at 29.999 s -> 210 s (180.001 s); at 30 s -> not at 210 s (30 < 30 is false) but at
    /// 240 s (210 s, the longest); at 120.001 s -> first run after 300.001 s is 330 s.
    #[test]
    fn retention_keeps_an_item_180_to_210_s() {
        let queued = [5_000, 29_999, 30_000, 120_001];
        let expected_drop = [210_000, 210_000, 240_000, 330_000];
        let mut q = RecentlyChangedQueue::new(queued.len(), 180_000);
        for (p, &t) in queued.iter().enumerate() {
            q.registered(SimTime(t), p, Up, false);
        }
        let mut dropped_at = vec![None; queued.len()];
        let mut dropped = 0;
        for run in 1..=20u64 {
            let now = SimTime(run * 30_000);
            let n = q.purge(now);
            for slot in dropped_at.iter_mut().skip(dropped).take(n) {
                *slot = Some(now.ms());
            }
            dropped += n;
        }
        let expected: Vec<Option<u64>> = expected_drop.iter().map(|&t| Some(t)).collect();
        assert_eq!(dropped_at, expected);
        for (e, r) in queued.iter().zip(expected_drop) {
            let lived = r - e;
            assert!((180_000..=210_000).contains(&lived), "lived {lived} ms");
        }
    }

    /// Items are dropped from the head only: an old item behind a younger one would wait, but
    /// the queue is in time order, so the first younger item ends the run.
    #[test]
    fn purge_stops_at_the_first_younger_item() {
        let mut q = RecentlyChangedQueue::new(2, 180_000);
        q.registered(SimTime(0), 0, Up, false);
        q.registered(SimTime(100_000), 1, Up, false);
        assert_eq!(q.purge(SimTime(180_001)), 1);
        assert_eq!(q.len(), 1);
        assert_eq!(q.purge(SimTime(280_000)), 0, "100 + 180 = 280 is not older");
        assert_eq!(q.purge(SimTime(280_001)), 1);
        assert!(q.is_empty());
    }

    /// FACTS.md §4 / `RecentlyChangedItem` holds the lease: a delta generated after a cancel shows
    /// the earlier ADDED item of that lease as DELETED as well.
    #[test]
    fn delta_after_cancel_shows_the_added_item_as_deleted() {
        let mut q = RecentlyChangedQueue::new(1, 180_000);
        q.registered(SimTime(0), 0, Up, false);
        assert_eq!(rendered(&q), [(0, ActionType::Added, Up)]);
        q.cancelled(SimTime(10), 0);
        assert_eq!(
            rendered(&q),
            [(0, ActionType::Deleted, Up), (0, ActionType::Deleted, Up)]
        );
        // Purging the DELETED item's younger sibling is impossible (FIFO); dropping the ADDED one
        // still leaves the instance DELETED in the payload.
        q.purge(SimTime(180_001));
        let content = q.delta_content(&[None]);
        assert_eq!(
            content.instances,
            [(
                0,
                Holder {
                    status: Up,
                    action: ActionType::Deleted
                }
            )]
        );
    }

    /// A register with a fresh `InstanceInfo` replaces the holder: items of the old lease keep the
    /// old holder's last state. A register that keeps the (dirtier) existing holder re-renders the
    /// old items too. A status update renders every item of the lease MODIFIED; a silent renew
    /// reset changes the status without an item.
    #[test]
    fn items_render_their_own_holder() {
        let mut q = RecentlyChangedQueue::new(1, 180_000);
        q.registered(SimTime(0), 0, Up, false);
        q.registered(SimTime(1), 0, Down, false);
        assert_eq!(
            rendered(&q),
            [(0, ActionType::Added, Up), (0, ActionType::Added, Down)]
        );
        q.registered(SimTime(2), 0, Down, true);
        q.modified(SimTime(3), 0, InstanceStatus::OutOfService);
        q.status_set_silently(0, Up);
        assert_eq!(
            rendered(&q),
            [
                (0, ActionType::Added, Up),
                (0, ActionType::Modified, Up),
                (0, ActionType::Modified, Up),
                (0, ActionType::Modified, Up),
            ]
        );
        // The latest item per id wins in the payload.
        let content = q.delta_content(&[Some(Up)]);
        assert_eq!(content.instances.len(), 1);
        assert_eq!(content.instances[0].1.action, ActionType::Modified);
        assert_eq!(content.apps_hash.to_string(), "UP_1_");
    }

    /// InstanceRegistryTest#testAppsHashCodeAfterRefresh ("UP_1_" then "UP_2_") and
    /// DiscoveryClientRegistryTest#testAppsHashCodeAfterRefresh ("UP_1_" -> "DOWN_1_UP_1_").
    #[test]
    fn reconcile_hash_counts_per_status_in_name_order() {
        assert_eq!(ReconcileHash::of(&[Some(Up), None]).to_string(), "UP_1_");
        assert_eq!(
            ReconcileHash::of(&[Some(Up), Some(Up)]).to_string(),
            "UP_2_"
        );
        assert_eq!(
            ReconcileHash::of(&[Some(Up), Some(Down)]).to_string(),
            "DOWN_1_UP_1_"
        );
        let all = [
            Some(Up),
            Some(InstanceStatus::Unknown),
            Some(InstanceStatus::Starting),
            Some(InstanceStatus::OutOfService),
            Some(Down),
            Some(Up),
        ];
        assert_eq!(
            ReconcileHash::of(&all).to_string(),
            "DOWN_1_OUT_OF_SERVICE_1_STARTING_1_UNKNOWN_1_UP_2_"
        );
        assert_eq!(ReconcileHash::of(&[None]).to_string(), "");
    }

    /// The hash compares counts, not identities: a client that holds instance 0 where the server
    /// holds instance 1 (both UP) passes the check.
    #[test]
    fn reconcile_hash_does_not_see_identity() {
        assert_eq!(
            ReconcileHash::of(&[Some(Up), None]),
            ReconcileHash::of(&[None, Some(Up)])
        );
        assert_ne!(
            ReconcileHash::of(&[Some(Up), None]),
            ReconcileHash::of(&[Some(Up), Some(Up)])
        );
    }

    /// `DiscoveryClient#updateDelta`: ADDED/MODIFIED replace by id, DELETED removes; re-applying
    /// the same delta changes nothing.
    #[test]
    fn client_applies_added_modified_deleted() {
        let delta = DeltaContent {
            instances: vec![
                (
                    0,
                    Holder {
                        status: Up,
                        action: ActionType::Added,
                    },
                ),
                (
                    1,
                    Holder {
                        status: Down,
                        action: ActionType::Modified,
                    },
                ),
                (
                    2,
                    Holder {
                        status: Up,
                        action: ActionType::Deleted,
                    },
                ),
            ],
            apps_hash: ReconcileHash::default(),
        };
        let mut local = vec![None, Some(Up), Some(Up), Some(Up)];
        let mut changes = Vec::new();
        assert!(delta_changes(&local, &delta));
        assert!(apply_delta(&mut local, &delta, |p, old, new| changes
            .push((p, old, new))));
        assert_eq!(local, [Some(Up), Some(Down), None, Some(Up)]);
        assert_eq!(
            changes,
            [
                (0, None, Some(Up)),
                (1, Some(Up), Some(Down)),
                (2, Some(Up), None)
            ]
        );
        assert!(!delta_changes(&local, &delta));
        assert!(!apply_delta(&mut local, &delta, |_, _, _| {}));
    }
}
