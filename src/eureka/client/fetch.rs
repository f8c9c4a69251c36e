//! The registry fetch: full and delta, the reconcile hash, storing what was fetched (FACTS.md §4).

use super::*;

/// The local registry: full and delta fetches (FACTS.md §4, §5.5).
impl DiscoveryClient {
    /// `DiscoveryClient#fetchRegistry` for the periodic task (FACTS.md §4 "Client rule"): a full
    /// fetch when `eureka.client.disable-delta` is set or the local registry is empty
    /// (`getRegisteredApplications().size() == 0`, which also covers a never-fetched client's
    /// version -1), else a delta.
    pub(super) fn fetch_registry(&mut self, now: SimTime, out: &mut impl ClientOutput) {
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
    pub(super) fn apply_fetch(
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
    pub(super) fn shuffle_up_lists(&mut self, applications: &[usize], out: &mut impl ClientOutput) {
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
    pub(super) fn on_delta_forbidden(
        &mut self,
        now: SimTime,
        seq: u32,
        out: &mut impl ClientOutput,
    ) {
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
    pub(super) fn on_delta_fetched(
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
    pub(super) fn update_delta(&mut self, payload: &DeltaPayload) -> Vec<(ProcessId, bool)> {
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
