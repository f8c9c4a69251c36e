//! The Eureka server: registry, response cache and its five timers (FACTS.md §2, §3, §4, §2.7).
//!
//! Start-up order (FACTS.md §2.7): the registry (whose constructor starts the delta-retention
//! timer, FACTS.md §4) and the response cache with its wall-clock
//! aligned fill timer, the renewal-threshold updater (`init()`), then `openForTraffic` and
//! `postInit()`: the renews-last-minute roll and the eviction timer, both 60 s / one eviction
//! period later. The roll is scheduled before the eviction run, so when both fall on the same
//! millisecond the roll runs first (the queue is FIFO on ties) and eviction sees the window that
//! just closed.

use crate::engine::{RngStream, SimTime};
use crate::scenario::{Scenario, ServerConfig, Start};

use std::rc::Rc;

use super::delta::RecentlyChangedQueue;
use super::ids::ProcessId;
use super::observe::{Holding, Observation};
use super::protocol::{Call, DeltaPayload, Payload, Registrant, Reply};
use super::registry::{Registry, RenewOutcome};
use super::response_cache::{ResponseCache, first_fill_delay};
use super::status::InstanceStatus;

/// `MeasuredRate(60 * 1000)`: the renews-last-minute window is fixed at one minute.
pub const RENEWS_WINDOW_MS: u64 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerTimer {
    Eviction,
    RenewsRoll,
    CacheFill,
    ThresholdUpdate,
    /// `AbstractInstanceRegistry#getDeltaRetentionTask` (FACTS.md §4).
    DeltaRetention,
}

/// Where a server transition puts what it asks of the world, in the order it asks: the world
/// (which reports and schedules at once, without a buffer: the server's calls are the
/// simulation's hottest path) or a `Vec<ServerEffect>` (tests).
pub trait ServerOutput {
    /// Report this observation now.
    fn observe(&mut self, observation: Observation);
    /// Arm this timer to fire `delay_ms` from now.
    fn arm(&mut self, delay_ms: u64, timer: ServerTimer);
}

/// A server's request of the world, as data.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEffect {
    /// Report this observation now.
    Observe(Observation),
    /// Arm this timer to fire `delay_ms` from now.
    Arm { delay_ms: u64, timer: ServerTimer },
}

impl ServerOutput for Vec<ServerEffect> {
    fn observe(&mut self, observation: Observation) {
        self.push(ServerEffect::Observe(observation));
    }

    fn arm(&mut self, delay_ms: u64, timer: ServerTimer) {
        self.push(ServerEffect::Arm { delay_ms, timer });
    }
}

/// One Eureka server: its registry, response cache and delta queue, and its timers' rules. It
/// never sees the world: it is told the time and the calls, and returns its reply and
/// effects ([`ServerOutput`]).
pub struct EurekaServer {
    pub registry: Registry,
    pub cache: ResponseCache,
    /// The `ALL_APPS_DELTA` key of the same response cache.
    pub delta_cache: ResponseCache<DeltaPayload>,
    /// `recentlyChangedQueue`, which delta payloads are built from.
    pub recently_changed: RecentlyChangedQueue,
    config: ServerConfig,
    rng: RngStream,
    /// When the previous eviction run started (for the compensation time).
    last_eviction: Option<SimTime>,
    /// UP-ness of each process in the registry and in the served payload, as last observed.
    registry_up: Vec<bool>,
    served_up: Vec<bool>,
    /// Steady start: when the renews-last-minute roll first runs (ms).
    renews_roll_due_ms: u64,
}

impl EurekaServer {
    pub fn new(scenario: &Scenario, processes: usize, rng: RngStream) -> EurekaServer {
        let config = scenario.server.clone();
        EurekaServer {
            registry: Registry::new(processes, &config, scenario.simulation.release),
            cache: ResponseCache::new(
                config.use_read_only_response_cache,
                config.response_cache_auto_expiration_s * 1000,
            ),
            delta_cache: ResponseCache::new(
                config.use_read_only_response_cache,
                config.response_cache_auto_expiration_s * 1000,
            ),
            recently_changed: RecentlyChangedQueue::new(
                processes,
                config.retention_time_in_ms_in_delta_queue,
            ),
            config,
            rng,
            last_eviction: None,
            registry_up: vec![false; processes],
            served_up: vec![false; processes],
            renews_roll_due_ms: 0,
        }
    }

    fn compensation_ms(&mut self, now: SimTime) -> u64 {
        let previous = self.last_eviction.replace(now);
        compensation_ms(previous, now, self.config.eviction_interval_ms)
    }

    /// Delay until a fixed-delay `java.util.Timer` task runs again: one period after this run
    /// started, plus this model's wake-up lateness.
    fn timer_delay(&mut self, period_ms: u64) -> u64 {
        period_ms + self.rng.between(0, self.config.timer_lateness_ms)
    }
}

impl EurekaServer {
    /// Why this server still lists `p` at `now`, if it does: the registry's reason
    /// ([`Registry::holding`]) while it is UP there, else [`Holding::ResponseCache`] while
    /// `GET /apps` still serves it UP.
    pub fn holding(&self, now: SimTime, p: ProcessId, renewing: bool) -> Option<Holding> {
        self.registry
            .holding(now, p, renewing)
            .or_else(|| self.served_up[p].then_some(Holding::ResponseCache))
    }
}

impl EurekaServer {
    /// Server bootstrap (see the module doc for the order).
    pub fn start(&mut self, wall_now_ms: u64, out: &mut impl ServerOutput) {
        self.bootstrap(wall_now_ms, Start::Cold, out);
    }

    /// `simulation.start = "steady"`: the server as after a long uptime. Every periodic timer
    /// (delta retention, threshold update, renews roll, eviction) is at an independent uniform
    /// phase in `(0, period]`, drawn from the server's stream (`java.util.Timer` fixed-delay
    /// tasks drift apart with their lateness over days); the read-only fill stays on the wall
    /// clock, whose offset is already random. The registry is opened as [`EurekaServer::start`]
    /// opens it; [`EurekaServer::restore`] then adds the registrations and
    /// [`EurekaServer::settle_caches`] fills the caches.
    pub fn start_steady(&mut self, wall_now_ms: u64, out: &mut impl ServerOutput) {
        self.bootstrap(wall_now_ms, Start::Steady, out);
    }

    /// Arms the timers in the order of the module doc and opens the registry. A timer's first
    /// run: one period after the start (plus the model's lateness), or on a steady start a
    /// uniform phase of its period.
    fn bootstrap(&mut self, wall_now_ms: u64, start: Start, out: &mut impl ServerOutput) {
        out.observe(Observation::ServerStarted);
        let first_run = |server: &mut EurekaServer, period: u64| match start {
            Start::Cold => server.timer_delay(period),
            Start::Steady => server.rng.phase(period),
        };
        // The registry constructor: `Timer("Eureka-DeltaRetentionTimer")`, delay = period.
        let delay = first_run(self, self.config.delta_retention_timer_interval_ms);
        out.arm(delay, ServerTimer::DeltaRetention);
        let fill_interval = self.config.response_cache_update_interval_ms;
        if self.cache.uses_read_only() {
            let first = first_fill_delay(wall_now_ms, fill_interval);
            let lateness = self.timer_delay(0);
            out.arm(first + lateness, ServerTimer::CacheFill);
        }
        let delay = first_run(self, self.config.renewal_threshold_update_interval_ms);
        out.arm(delay, ServerTimer::ThresholdUpdate);
        // registry-sync-retries = 0: syncUp finds nothing, openForTraffic(0 -> default count).
        let count = i64::from(self.config.default_open_for_traffic_count);
        self.registry.open_for_traffic(count);
        let delay = first_run(self, RENEWS_WINDOW_MS);
        self.renews_roll_due_ms = delay;
        out.arm(delay, ServerTimer::RenewsRoll);
        let delay = first_run(self, self.config.eviction_interval_ms);
        out.arm(delay, ServerTimer::Eviction);
    }

    /// Steady start: `p` registered long ago and has renewed every `interval_ms` since, the
    /// next renew due at `next_renew_ms` (in `(0, interval]`). Its renews are counted into the two buckets of renews-last-minute ([`renews_in_windows`]). Nothing
    /// enters the delta queue: the registrations are older than its retention.
    pub fn restore(
        &mut self,
        p: ProcessId,
        registrant: Registrant,
        next_renew_ms: u64,
        interval_ms: u64,
        out: &mut impl ServerOutput,
    ) {
        let last_renew = next_renew_ms as i64 - interval_ms as i64;
        self.registry.restore(p, registrant, last_renew);
        if let Some(entry) = self.registry.entry(p) {
            self.recently_changed.restore_holder(p, entry.info.status);
        }
        let (last, current) =
            renews_in_windows(next_renew_ms, interval_ms, self.renews_roll_due_ms);
        let rate = &mut self.registry.renews_last_min;
        let (l, c) = (rate.count(), rate.current());
        rate.restore(l + last, c + current);
        self.note_registry(p, out);
    }

    /// Steady start, after the registrations: both keys clients read (`ALL_APPS`,
    /// `ALL_APPS_DELTA`) have been read long ago, so both levels hold them: the registry as it
    /// is, and an empty delta (the registrations are older than the delta queue's retention).
    pub fn settle_caches(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        let server = &mut *self;
        let registry = &server.registry;
        let (payload, _) = server.cache.get(now, || registry.statuses());
        let changed = &server.recently_changed;
        server
            .delta_cache
            .get(now, || changed.delta_content(&registry.statuses()));
        self.note_served(&payload, out);
    }

    /// Steady start: the 15-minute `updateRenewalThreshold` has run many times, which leaves
    /// the threshold where one run leaves it (its reset is idempotent).
    pub fn settle_threshold(&mut self, embedded_client_up_count: i64) {
        self.registry
            .update_renewal_threshold(embedded_client_up_count);
    }

    /// What `GET /apps` serves now (the read-only level, or the read-write one when off).
    pub fn served_payload(&mut self, now: SimTime) -> Rc<Payload> {
        let server = &mut *self;
        let registry = &server.registry;
        if let Some(payload) = server.cache.served() {
            return Rc::clone(payload);
        }
        server.cache.get(now, || registry.statuses()).0
    }

    pub fn on_timer(
        &mut self,
        now: SimTime,
        timer: ServerTimer,
        embedded_client_up_count: impl FnOnce() -> i64,
        out: &mut impl ServerOutput,
    ) {
        let period = match timer {
            ServerTimer::Eviction => {
                self.run_eviction(now, out);
                self.config.eviction_interval_ms
            }
            ServerTimer::RenewsRoll => {
                self.registry.renews_last_min.roll();
                RENEWS_WINDOW_MS
            }
            ServerTimer::CacheFill => {
                self.fill_read_only_cache(now, out);
                self.config.response_cache_update_interval_ms
            }
            ServerTimer::ThresholdUpdate => {
                let count = embedded_client_up_count();
                self.registry.update_renewal_threshold(count);
                self.config.renewal_threshold_update_interval_ms
            }
            ServerTimer::DeltaRetention => {
                self.recently_changed.purge(now);
                self.config.delta_retention_timer_interval_ms
            }
        };
        let delay = self.timer_delay(period);
        out.arm(delay, timer);
    }

    /// `EvictionTask#run` -> `evict(compensationTimeMs)`.
    fn run_eviction(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        let compensation = self.compensation_ms(now);
        let renews = self.registry.renews_last_min.count();
        let threshold = self.registry.threshold();
        let server = &mut *self;
        let run = server.registry.evict(now, compensation, &mut server.rng);
        out.observe(Observation::EvictionRun {
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
            self.recently_changed.cancelled(now, p);
            out.observe(Observation::Evicted { process: p });
            self.note_registry(p, out);
        }
        self.invalidate_cache(now, out);
    }

    /// The cache-fill timer's task, for every key in the read-only level (`ALL_APPS`, then
    /// `ALL_APPS_DELTA`).
    fn fill_read_only_cache(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        let server = &mut *self;
        let registry = &server.registry;
        let full = server.cache.tick(now, || registry.statuses());
        let changed = &server.recently_changed;
        server
            .delta_cache
            .tick(now, || changed.delta_content(&registry.statuses()));
        if let Some(payload) = full {
            out.observe(Observation::ReadOnlyRefreshed);
            self.note_served(&payload, out);
        }
    }

    /// `invalidateCache`: with the read-only level off, a GET regenerates at once, so the served
    /// view is refreshed here (nothing can change the registry between now and that GET without
    /// invalidating again).
    fn invalidate_cache(&mut self, now: SimTime, out: &mut impl ServerOutput) {
        self.cache.invalidate();
        self.delta_cache.invalidate();
        if !self.cache.uses_read_only() {
            let server = &mut *self;
            let registry = &server.registry;
            let (payload, _) = server.cache.get(now, || registry.statuses());
            self.note_served(&payload, out);
        }
    }

    /// Emits a registry observation if `p`'s UP-ness there changed.
    fn note_registry(&mut self, p: ProcessId, out: &mut impl ServerOutput) {
        let up = self.registry.is_up(p);
        if self.registry_up[p] != up {
            self.registry_up[p] = up;
            out.observe(Observation::Registry { process: p, up });
        }
    }

    /// Emits served-view observations for every process whose UP-ness differs in `payload`.
    fn note_served(&mut self, payload: &Rc<Payload>, out: &mut impl ServerOutput) {
        for p in 0..self.served_up.len() {
            let up = payload.is_up(p);
            if self.served_up[p] != up {
                self.served_up[p] = up;
                out.observe(Observation::Served { process: p, up });
            }
        }
    }

    /// A REST call arrives: the resource handles it at once and replies.
    pub fn on_call(
        &mut self,
        now: SimTime,
        from: ProcessId,
        call: Call,
        out: &mut impl ServerOutput,
    ) -> Reply {
        match call {
            Call::Register { info, why } => {
                let kept_holder = self.registry.register(now, from, info);
                let status = self
                    .registry
                    .entry(from)
                    .map_or(info.status, |e| e.info.status);
                self.recently_changed
                    .registered(now, from, status, kept_holder);
                out.observe(Observation::Registered {
                    process: from,
                    status,
                });
                self.note_registry(from, out);
                self.invalidate_cache(now, out);
                Reply::Registered { why }
            }
            Call::Renew { last_dirty } => Reply::Renewed {
                found: self.handle_renew(now, from, last_dirty, out),
            },
            Call::FetchAll { why } => {
                let server = &mut *self;
                let registry = &server.registry;
                let (payload, filled) = server.cache.get(now, || registry.statuses());
                if filled {
                    self.note_served(&payload, out);
                }
                Reply::Fetched { why, payload }
            }
            Call::FetchDelta => self.serve_delta(now),
            Call::Cancel => {
                if self.registry.cancel(now, from, true) {
                    self.recently_changed.cancelled(now, from);
                    out.observe(Observation::Cancelled { process: from });
                    self.note_registry(from, out);
                    self.invalidate_cache(now, out);
                }
                Reply::Cancelled
            }
            Call::PutStatus { status, last_dirty } => {
                let changed = self.registry.status_update(now, from, status, last_dirty);
                if changed == Some(true) {
                    self.recently_changed.modified(now, from, status);
                    self.note_registry(from, out);
                    self.invalidate_cache(now, out);
                }
                Reply::StatusPut
            }
            Call::DeleteStatus => {
                let existed =
                    self.registry
                        .delete_status_override(now, from, InstanceStatus::Unknown);
                if existed == Some(true) {
                    self.recently_changed
                        .modified(now, from, InstanceStatus::Unknown);
                    self.note_registry(from, out);
                    self.invalidate_cache(now, out);
                }
                Reply::StatusDeleted
            }
        }
    }

    /// `ApplicationsResource#getContainerDifferential`: 403 when `disable-delta` is set on the
    /// server, else the `ALL_APPS_DELTA` key through the response cache (FACTS.md §4). (The
    /// `shouldAllowAccess` 403 window never applies to a Spring Cloud server, FACTS.md §2.5.)
    fn serve_delta(&mut self, now: SimTime) -> Reply {
        if self.config.disable_delta {
            return Reply::DeltaForbidden;
        }
        let server = &mut *self;
        let registry = &server.registry;
        let changed = &server.recently_changed;
        let (payload, _) = server
            .delta_cache
            .get(now, || changed.delta_content(&registry.statuses()));
        Reply::Delta { payload }
    }

    /// `InstanceResource#renewLease`: renew first (counted even if the reply becomes 404), then
    /// the dirty-timestamp check (FACTS.md §5.3). Returns false for a 404.
    fn handle_renew(
        &mut self,
        now: SimTime,
        from: ProcessId,
        client_dirty: u64,
        out: &mut impl ServerOutput,
    ) -> bool {
        match self.registry.renew(now, from) {
            RenewOutcome::NotFound => false,
            RenewOutcome::Renewed {
                silent_status_change,
            } => {
                if silent_status_change {
                    if let Some(e) = self.registry.entry(from) {
                        let status = e.info.status;
                        self.recently_changed.status_set_silently(from, status);
                    }
                    self.note_registry(from, out);
                }
                if let Some(e) = self.registry.entry(from) {
                    let expirable_from = e.lease.expirable_from();
                    out.observe(Observation::Renewed {
                        process: from,
                        expirable_from,
                    });
                }
                !(self.config.sync_when_timestamp_differs
                    && self
                        .registry
                        .heartbeat_needs_reregister(now, from, client_dirty))
            }
        }
    }
}

/// Steady start: of the renews at `next - k * interval` (k >= 1, all before time 0), how many
/// fell in the last complete renews-last-minute window, `(roll - 120 s, roll - 60 s]`, and how
/// many since the last roll, `(roll - 60 s, 0]`, where `roll` in `(0, 60 s]` is the roll
/// timer's next run.
pub fn renews_in_windows(next_ms: u64, interval_ms: u64, roll_ms: u64) -> (u64, u64) {
    let interval = interval_ms.max(1) as i64;
    let next = next_ms as i64;
    // #{k >= 1 : next - k * interval > a}
    let after = |a: i64| -> u64 {
        if next - a <= 0 {
            0
        } else {
            ((next - a - 1) / interval) as u64
        }
    };
    let window = RENEWS_WINDOW_MS as i64;
    let roll = roll_ms as i64;
    let current = after(roll - window);
    let last = after(roll - 2 * window) - current;
    (last, current)
}

/// `EvictionTask#getCompensationTimeMs`: how much later than one period after the previous run
/// this run started, never negative; 0 on the first run (FACTS.md §2.1). It is added to every
/// lease's expiry, so a late eviction run does not evict leases a GC pause kept from renewing.
pub fn compensation_ms(previous: Option<SimTime>, now: SimTime, period_ms: u64) -> u64 {
    match previous {
        Some(prev) => now.saturating_since(prev).saturating_sub(period_ms),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;
    use crate::eureka::protocol::{RegisterWhy, Registrant};
    use crate::scenario::parse_str;

    fn server() -> EurekaServer {
        let text = "[[app]]\nname = \"svc\"\ninstances = 2\n";
        let scenario = parse_str(text, "t.toml", "t", &[]).expect("valid scenario");
        EurekaServer::new(&scenario, 3, StreamFactory::new(1).stream("server"))
    }

    /// Steady start's renew counts, by hand: renews every 30 s at -20, -50, -80, -110 s ...
    /// (next at +10 s); the roll due at +20 s, so the last roll was at -40 s and the one before
    /// at -100 s: one renew since (-20 s), two in the last complete window (-50, -80 s). With
    /// renews every 10 s (next at +10 s: -0, -10, ... s) a 60 s window holds 6 whatever the phase.
    #[test]
    fn steady_renews_fill_the_last_minute_windows() {
        assert_eq!(renews_in_windows(10_000, 30_000, 20_000), (2, 1));
        // Renews at 0, -30, -60 s ...; rolls at 0 and -60 s: none since, 0 and -30 s before.
        assert_eq!(renews_in_windows(30_000, 30_000, 60_000), (2, 0));
        for roll in [1, 7_000, 59_999, 60_000] {
            let (last, _) = renews_in_windows(10_000, 10_000, roll);
            assert_eq!(last, 6, "roll {roll}");
        }
        // A renew exactly on the last roll (-40 s) counts in the window that roll closed.
        assert_eq!(renews_in_windows(20_000, 60_000, 20_000), (1, 0));
    }

    /// The server alone, without a world: bootstrap arms its timers in the order of FACTS.md
    /// §2.7 (delta retention, cache fill, threshold update, renews roll, eviction).
    #[test]
    fn start_arms_the_timers_in_bootstrap_order() {
        let mut server = server();
        let mut out = Vec::new();
        server.start(1_700_000_000_000, &mut out);
        let timers: Vec<ServerTimer> = out
            .into_iter()
            .filter_map(|e| match e {
                ServerEffect::Arm { timer, .. } => Some(timer),
                ServerEffect::Observe(_) => None,
            })
            .collect();
        assert_eq!(
            timers,
            vec![
                ServerTimer::DeltaRetention,
                ServerTimer::CacheFill,
                ServerTimer::ThresholdUpdate,
                ServerTimer::RenewsRoll,
                ServerTimer::Eviction,
            ]
        );
    }

    /// A register is answered and observed (registered, then UP in the registry); a cancel
    /// takes it out again.
    #[test]
    fn register_then_cancel_replies_and_observes() {
        let mut server = server();
        server.start(1_700_000_000_000, &mut Vec::new());
        let info = Registrant {
            status: InstanceStatus::Up,
            overridden_status: InstanceStatus::Unknown,
            last_dirty: 1,
            lease_duration_ms: 90_000,
        };
        let why = RegisterWhy::Init;
        let mut out = Vec::new();
        let reply = server.on_call(SimTime(10), 0, Call::Register { info, why }, &mut out);
        assert_eq!(reply, Reply::Registered { why });
        assert_eq!(
            std::mem::take(&mut out),
            vec![
                ServerEffect::Observe(Observation::Registered {
                    process: 0,
                    status: InstanceStatus::Up
                }),
                ServerEffect::Observe(Observation::Registry {
                    process: 0,
                    up: true
                }),
            ]
        );
        let reply = server.on_call(SimTime(20), 0, Call::Cancel, &mut out);
        assert_eq!(reply, Reply::Cancelled);
        assert_eq!(
            out,
            vec![
                ServerEffect::Observe(Observation::Cancelled { process: 0 }),
                ServerEffect::Observe(Observation::Registry {
                    process: 0,
                    up: false
                }),
            ]
        );
    }

    /// InstanceRegistryTest#testEvictionTaskCompensationTime: runs at 1, 1+P, 1+2P+10 ms and
    /// 1+3P-1 (ns in the original; ms here) give 0, 0, 10, 0.
    #[test]
    fn eviction_compensation_time() {
        let p = 60_000;
        let runs = [1, 1 + p, 1 + 2 * p + 10, 1 + 3 * p - 1];
        let mut previous = None;
        let got: Vec<u64> = runs
            .iter()
            .map(|&t| {
                let c = compensation_ms(previous, SimTime(t), p);
                previous = Some(SimTime(t));
                c
            })
            .collect();
        assert_eq!(got, [0, 0, 10, 0]);
    }
}
