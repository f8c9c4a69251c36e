//! The world's handlers for `server` (the rules and their state live in `eureka::server`).

use std::rc::Rc;

use crate::eureka::ids::ProcessId;
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::protocol::{Call, Payload, Reply};
use crate::eureka::registry::RenewOutcome;
use crate::eureka::response_cache::first_fill_delay;
use crate::eureka::server::{RENEWS_WINDOW_MS, ServerTimer};
use crate::eureka::status::InstanceStatus;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    /// Server bootstrap (see the module doc for the order).
    pub(super) fn start_server(&mut self) {
        self.observe(Observation::ServerStarted);
        // The registry constructor: `Timer("Eureka-DeltaRetentionTimer")`, delay = period.
        let retention = self.server.config.delta_retention_timer_interval_ms;
        let delay = self.server.timer_delay(retention);
        self.queue
            .schedule_in(delay, Event::ServerTimer(ServerTimer::DeltaRetention));
        let fill_interval = self.server.config.response_cache_update_interval_ms;
        if self.server.cache.uses_read_only() {
            let first = first_fill_delay(self.wall_now(), fill_interval);
            let lateness = self.server.timer_delay(0);
            self.queue
                .schedule_in(first + lateness, Event::ServerTimer(ServerTimer::CacheFill));
        }
        let update = self.server.config.renewal_threshold_update_interval_ms;
        let delay = self.server.timer_delay(update);
        self.queue
            .schedule_in(delay, Event::ServerTimer(ServerTimer::ThresholdUpdate));
        // registry-sync-retries = 0: syncUp finds nothing, openForTraffic(0 -> default count).
        let count = i64::from(self.server.config.default_open_for_traffic_count);
        self.server.registry.open_for_traffic(count);
        let delay = self.server.timer_delay(RENEWS_WINDOW_MS);
        self.queue
            .schedule_in(delay, Event::ServerTimer(ServerTimer::RenewsRoll));
        let eviction = self.server.config.eviction_interval_ms;
        let delay = self.server.timer_delay(eviction);
        self.queue
            .schedule_in(delay, Event::ServerTimer(ServerTimer::Eviction));
    }

    pub(super) fn on_server_timer(&mut self, timer: ServerTimer) {
        let period = match timer {
            ServerTimer::Eviction => {
                self.run_eviction();
                self.server.config.eviction_interval_ms
            }
            ServerTimer::RenewsRoll => {
                self.server.registry.renews_last_min.roll();
                RENEWS_WINDOW_MS
            }
            ServerTimer::CacheFill => {
                self.fill_read_only_cache();
                self.server.config.response_cache_update_interval_ms
            }
            ServerTimer::ThresholdUpdate => {
                let count = self.embedded_client_up_count();
                self.server.registry.update_renewal_threshold(count);
                self.server.config.renewal_threshold_update_interval_ms
            }
            ServerTimer::DeltaRetention => {
                let now = self.now();
                self.server.recently_changed.purge(now);
                self.server.config.delta_retention_timer_interval_ms
            }
        };
        let delay = self.server.timer_delay(period);
        self.queue.schedule_in(delay, Event::ServerTimer(timer));
    }

    /// `EvictionTask#run` -> `evict(compensationTimeMs)`.
    fn run_eviction(&mut self) {
        let now = self.now();
        let compensation = self.server.compensation_ms(now);
        let renews = self.server.registry.renews_last_min.count();
        let threshold = self.server.registry.threshold();
        let server = &mut self.server;
        let run = server.registry.evict(now, compensation, &mut server.rng);
        self.observe(Observation::EvictionRun {
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
            self.server.recently_changed.cancelled(now, p);
            self.observe(Observation::Evicted { process: p });
            self.note_registry(p);
        }
        self.invalidate_cache();
    }

    /// The cache-fill timer's task, for every key in the read-only level (`ALL_APPS`, then
    /// `ALL_APPS_DELTA`).
    fn fill_read_only_cache(&mut self) {
        let now = self.now();
        let server = &mut self.server;
        let registry = &server.registry;
        let full = server.cache.tick(now, || registry.statuses());
        let changed = &server.recently_changed;
        server
            .delta_cache
            .tick(now, || changed.delta_content(&registry.statuses()));
        if let Some(payload) = full {
            self.observe(Observation::ReadOnlyRefreshed);
            self.note_served(&payload);
        }
    }

    /// UP instances in the server's embedded client's cache (0 without `fetch-registry`), the
    /// `count` of the 15-minute threshold update (FACTS.md §2.4).
    fn embedded_client_up_count(&self) -> i64 {
        let Some(server_process) = self
            .processes
            .iter()
            .find(|p| p.kind == ProcessKind::Server)
        else {
            return 0;
        };
        let client = &server_process.client;
        match &client.cache {
            Some(payload) => payload
                .statuses
                .iter()
                .filter(|s| match s {
                    Some(status) => {
                        !client.config.filter_only_up_instances || *status == InstanceStatus::Up
                    }
                    None => false,
                })
                .count() as i64,
            None => 0,
        }
    }

    /// `invalidateCache`: with the read-only level off, a GET regenerates at once, so the served
    /// view is refreshed here (nothing can change the registry between now and that GET without
    /// invalidating again).
    fn invalidate_cache(&mut self) {
        self.server.cache.invalidate();
        self.server.delta_cache.invalidate();
        if !self.server.cache.uses_read_only() {
            let now = self.now();
            let server = &mut self.server;
            let registry = &server.registry;
            let (payload, _) = server.cache.get(now, || registry.statuses());
            self.note_served(&payload);
        }
    }

    /// Emits a registry observation if `p`'s UP-ness there changed.
    fn note_registry(&mut self, p: ProcessId) {
        let up = self.server.registry.is_up(p);
        if self.server.registry_up[p] != up {
            self.server.registry_up[p] = up;
            self.observe(Observation::Registry { process: p, up });
        }
    }

    /// Emits served-view observations for every process whose UP-ness differs in `payload`.
    fn note_served(&mut self, payload: &Rc<Payload>) {
        for p in 0..self.server.served_up.len() {
            let up = payload.is_up(p);
            if self.server.served_up[p] != up {
                self.server.served_up[p] = up;
                self.observe(Observation::Served { process: p, up });
            }
        }
    }

    /// A REST call arrives: the resource handles it at once and replies.
    pub(super) fn on_server_call(&mut self, from: ProcessId, call: Call) {
        let now = self.now();
        let reply = match call {
            Call::Register { info, why } => {
                let kept_holder = self.server.registry.register(now, from, info);
                let status = self
                    .server
                    .registry
                    .entry(from)
                    .map_or(info.status, |e| e.info.status);
                self.server
                    .recently_changed
                    .registered(now, from, status, kept_holder);
                self.observe(Observation::Registered {
                    process: from,
                    status,
                });
                self.note_registry(from);
                self.invalidate_cache();
                Reply::Registered { why }
            }
            Call::Renew { last_dirty } => Reply::Renewed {
                found: self.handle_renew(from, last_dirty),
            },
            Call::FetchAll { why } => {
                let server = &mut self.server;
                let registry = &server.registry;
                let (payload, filled) = server.cache.get(now, || registry.statuses());
                if filled {
                    self.note_served(&payload);
                }
                Reply::Fetched { why, payload }
            }
            Call::FetchDelta => self.serve_delta(),
            Call::Cancel => {
                if self.server.registry.cancel(now, from, true) {
                    self.server.recently_changed.cancelled(now, from);
                    self.observe(Observation::Cancelled { process: from });
                    self.note_registry(from);
                    self.invalidate_cache();
                }
                Reply::Cancelled
            }
            Call::PutStatus { status, last_dirty } => {
                let changed = self
                    .server
                    .registry
                    .status_update(now, from, status, last_dirty);
                if changed == Some(true) {
                    self.server.recently_changed.modified(now, from, status);
                    self.note_registry(from);
                    self.invalidate_cache();
                }
                Reply::StatusPut
            }
            Call::DeleteStatus => {
                let existed =
                    self.server
                        .registry
                        .delete_status_override(now, from, InstanceStatus::Unknown);
                if existed == Some(true) {
                    self.server
                        .recently_changed
                        .modified(now, from, InstanceStatus::Unknown);
                    self.note_registry(from);
                    self.invalidate_cache();
                }
                Reply::StatusDeleted
            }
        };
        self.reply(from, reply);
    }

    /// `ApplicationsResource#getContainerDifferential`: 403 when `disable-delta` is set on the
    /// server, else the `ALL_APPS_DELTA` key through the response cache (FACTS.md §4). (The
    /// `shouldAllowAccess` 403 window never applies to a Spring Cloud server, FACTS.md §2.5.)
    fn serve_delta(&mut self) -> Reply {
        if self.server.config.disable_delta {
            return Reply::DeltaForbidden;
        }
        let now = self.now();
        let server = &mut self.server;
        let registry = &server.registry;
        let changed = &server.recently_changed;
        let (payload, _) = server
            .delta_cache
            .get(now, || changed.delta_content(&registry.statuses()));
        Reply::Delta { payload }
    }

    /// `InstanceResource#renewLease`: renew first (counted even if the reply becomes 404), then
    /// the dirty-timestamp check (FACTS.md §5.3). Returns false for a 404.
    fn handle_renew(&mut self, from: ProcessId, client_dirty: u64) -> bool {
        let now = self.now();
        match self.server.registry.renew(now, from) {
            RenewOutcome::NotFound => false,
            RenewOutcome::Renewed {
                silent_status_change,
            } => {
                if silent_status_change {
                    if let Some(e) = self.server.registry.entry(from) {
                        let status = e.info.status;
                        self.server
                            .recently_changed
                            .status_set_silently(from, status);
                    }
                    self.note_registry(from);
                }
                if let Some(e) = self.server.registry.entry(from) {
                    let expirable_from = e.lease.expirable_from();
                    self.observe(Observation::Renewed {
                        process: from,
                        expirable_from,
                    });
                }
                !(self.server.config.sync_when_timestamp_differs
                    && self
                        .server
                        .registry
                        .heartbeat_needs_reregister(now, from, client_dirty))
            }
        }
    }
}
