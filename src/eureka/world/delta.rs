//! The world's handlers for `delta` (the rules and their state live in `eureka::delta`).

use std::rc::Rc;

use crate::engine::SimTime;
use crate::eureka::delta::{LOCAL_VERSION, apply_delta, delta_changes};
use crate::eureka::ids::ProcessId;
use crate::eureka::observe::{HashPair, Observation, Observer};
use crate::eureka::protocol::{Call, DeltaContent, DeltaPayload, FetchWhy, Payload, ReconcileHash};
use crate::eureka::status::InstanceStatus;

use super::World;

impl<O: Observer> World<'_, O> {
    /// `DiscoveryClient#fetchRegistry` for the periodic task (FACTS.md §4 "Client rule"): a full
    /// fetch when `eureka.client.disable-delta` is set or the local registry is empty
    /// (`getRegisteredApplications().size() == 0`, which also covers a never-fetched client's
    /// version -1), else a delta.
    pub(super) fn fetch_registry(&mut self, p: ProcessId) {
        let client = &self.processes[p].client;
        let empty = client
            .cache
            .as_ref()
            .is_none_or(|local| local.statuses.iter().all(Option::is_none));
        let call = if client.config.disable_delta || empty {
            Call::FetchAll {
                why: FetchWhy::Periodic,
            }
        } else {
            Call::FetchDelta
        };
        self.send(p, call);
    }

    /// `DiscoveryClient#getAndUpdateDelta` with a non-200 answer: the delta is null, so the same
    /// run does a full fetch (`getAndStoreFullRegistry`) instead.
    pub(super) fn on_delta_forbidden(&mut self, p: ProcessId) {
        if !self.processes[p].client.tasks_running {
            return;
        }
        self.observe(Observation::DeltaForbidden { observer: p });
        self.send(
            p,
            Call::FetchAll {
                why: FetchWhy::Periodic,
            },
        );
    }

    /// `DiscoveryClient#getAndUpdateDelta` with a 200: `updateDelta` (apply, then shuffle), then
    /// compare the local reconcile hash with the payload's `appsHashCode`; on a mismatch
    /// `reconcileAndLogDifference` fetches the full registry once more in the same run, else the
    /// run is over and the task re-arms.
    pub(super) fn on_delta_fetched(&mut self, p: ProcessId, payload: &DeltaPayload) {
        if !self.processes[p].client.tasks_running {
            return;
        }
        let changes = self.update_delta(p, &payload.content);
        self.shuffle_up_lists(p);
        self.observe(Observation::Fetched {
            observer: p,
            changed: !changes.is_empty(),
            delta: true,
        });
        for (q, up) in changes {
            self.observe(Observation::ClientCache {
                observer: p,
                process: q,
                up,
            });
        }
        let local = self.processes[p]
            .client
            .cache
            .as_ref()
            .map_or_else(ReconcileHash::default, |l| l.reconcile_hash());
        let server = payload.content.apps_hash;
        if local == server {
            self.schedule_fetch(p);
            return;
        }
        self.observe(Observation::ReconcileMismatch {
            observer: p,
            hashes: Box::new(HashPair {
                local: local.to_string(),
                server: server.to_string(),
            }),
        });
        self.send(
            p,
            Call::FetchAll {
                why: FetchWhy::Reconcile,
            },
        );
    }

    /// Applies a delta to `p`'s local registry, copying it first only if it is shared and the
    /// delta changes something. Returns the instances whose UP-ness changed.
    fn update_delta(&mut self, p: ProcessId, delta: &DeltaContent) -> Vec<(ProcessId, bool)> {
        let client = &mut self.processes[p].client;
        let local = client.cache.get_or_insert_with(|| {
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
        let local = Rc::make_mut(local);
        local.version = LOCAL_VERSION;
        local.hash.set(None);
        let mut changes = Vec::new();
        apply_delta(&mut local.statuses, delta, |q, old, new| {
            let up = Some(InstanceStatus::Up);
            if (old == up) != (new == up) {
                changes.push((q, new == up));
            }
        });
        changes
    }
}
