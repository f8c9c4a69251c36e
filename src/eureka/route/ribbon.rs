//! Ribbon (Edgware to Hoxton, FACTS.md §8), all in one place: a route's Ribbon with its server
//! list updaters and its per-request walk ([`Ribbon`]), the load balancer with its server list
//! and round-robin cursor ([`RibbonLoadBalancer`]), the availability filter's circuit breaker
//! ([`circuit_breaker`]) and the round robin's summed walk for batched requests
//! ([`round_robin`]). What an attempt costs is shared with Spring Cloud LoadBalancer
//! (`route::attempt`).
//!
//! Like the other rules, [`Ribbon`] is told the time and what it reads of the caller's Eureka
//! client ([`ClientLists`]) and returns what the world must do ([`RibbonEffect`]s, in order;
//! a request's attempts through [`AttemptOutput`]).

mod batch;
pub mod circuit_breaker;
pub mod round_robin;

use crate::eureka::ids::ProcessId;
use crate::scenario::RibbonConfig;

use super::{Answer, AttemptCosts, AttemptOutput, RequestOutcome};
use circuit_breaker::{CircuitBreaker, ServerStatsTable, eligible_servers};
use round_robin::first_pick;

/// `PollingServerListUpdater`'s initial delay (`LISTOFSERVERS_CACHE_UPDATE_DELAY`).
pub const RIBBON_FIRST_REFRESH_MS: u64 = 1_000;

/// What Ribbon asks of the world, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RibbonEffect {
    /// `updateListOfServers` ran: the list `old` was replaced by `new` (observed as a refresh
    /// and the instances that entered and left).
    ListChanged {
        old: Vec<ProcessId>,
        new: Vec<ProcessId>,
    },
    /// `PollingServerListUpdater`'s task runs `delay_ms` from now, guarded by `generation`.
    ScheduleRefresh { delay_ms: u64, generation: u32 },
}

/// What Ribbon's server list reads of the caller's Eureka client.
#[derive(Clone, Copy)]
pub struct ClientLists<'a> {
    /// The client's UP list of the called app, in the client's order.
    pub up_list: &'a [ProcessId],
    /// Whether an instance's status in the client's local cache is UP.
    pub is_up: &'a dyn Fn(ProcessId) -> bool,
}

/// Ribbon on one route: the availability filter's settings, the load balancer once created, and
/// the generation of its `PollingServerListUpdater` task.
#[derive(Debug)]
pub struct Ribbon {
    /// `niws.loadbalancer.*` availability filter.
    breaker: CircuitBreaker,
    lb: Option<RibbonLoadBalancer>,
    /// Guards the polling updater's timer: a (re)created load balancer starts a new one.
    refresh_generation: u32,
}

impl Ribbon {
    /// A route's Ribbon before its load balancer is created.
    pub fn new(breaker: CircuitBreaker) -> Ribbon {
        Ribbon {
            breaker,
            lb: None,
            refresh_generation: 0,
        }
    }

    /// The circuit breaker's settings.
    pub fn breaker(&self) -> CircuitBreaker {
        self.breaker
    }

    /// The load balancer, once created.
    pub fn lb(&self) -> Option<&RibbonLoadBalancer> {
        self.lb.as_ref()
    }

    pub fn lb_mut(&mut self) -> Option<&mut RibbonLoadBalancer> {
        self.lb.as_mut()
    }

    /// The load balancer's constructor (`DynamicServerListLoadBalancer`, at the first request or
    /// at start with `eager-load`): one synchronous list update, then the polling updater
    /// (first run [`RIBBON_FIRST_REFRESH_MS`] later). `EurekaNotificationServerListUpdater` has
    /// no timer: the client's fetches drive it ([`Ribbon::on_cache_refreshed`]).
    pub fn create(
        &mut self,
        config: &RibbonConfig,
        client: ClientLists<'_>,
        out: &mut Vec<RibbonEffect>,
    ) {
        self.create_refreshing_in(config, client, RIBBON_FIRST_REFRESH_MS, out);
    }

    /// The constructor with the polling updater's first run `first_refresh_ms` away.
    fn create_refreshing_in(
        &mut self,
        config: &RibbonConfig,
        client: ClientLists<'_>,
        first_refresh_ms: u64,
        out: &mut Vec<RibbonEffect>,
    ) {
        self.lb = Some(RibbonLoadBalancer::default());
        self.update_list_of_servers(client, out);
        if config.eureka_notification_updater {
            return;
        }
        self.refresh_generation += 1;
        out.push(RibbonEffect::ScheduleRefresh {
            delay_ms: first_refresh_ms,
            generation: self.refresh_generation,
        });
    }

    /// `simulation.start = "steady"`: the load balancer as after a long run. The list is read
    /// from the client's cache, the round-robin cursor is anywhere in it (`cursor_draw` in
    /// `[0, 1)`: `incrementAndGetModulo` keeps it below the list size), `ServerStats` hold no
    /// failure, and the polling updater's next run is `first_refresh_ms` away (a uniform phase
    /// of its interval, drawn by the caller).
    pub fn create_steady(
        &mut self,
        config: &RibbonConfig,
        client: ClientLists<'_>,
        first_refresh_ms: u64,
        cursor_draw: f64,
        out: &mut Vec<RibbonEffect>,
    ) {
        self.create_refreshing_in(config, client, first_refresh_ms, out);
        if let Some(lb) = self.lb.as_mut() {
            let n = lb.servers.len();
            lb.set_cursor(((cursor_draw * n as f64) as usize).min(n.saturating_sub(1)));
        }
    }

    /// Whether the polling updater's timer armed with `generation` is the current one.
    pub fn refresh_is_current(&self, generation: u32) -> bool {
        self.refresh_generation == generation
    }

    /// `PollingServerListUpdater`'s task, re-armed `ServerListRefreshInterval` after it ran
    /// (a stale timer does nothing).
    pub fn on_refresh(
        &mut self,
        generation: u32,
        config: &RibbonConfig,
        client: ClientLists<'_>,
        out: &mut Vec<RibbonEffect>,
    ) {
        if !self.refresh_is_current(generation) {
            return;
        }
        self.update_list_of_servers(client, out);
        out.push(RibbonEffect::ScheduleRefresh {
            delay_ms: config.server_list_refresh_interval_ms,
            generation,
        });
    }

    /// Whether the client's `CacheRefreshedEvent` updates this load balancer: it uses
    /// `EurekaNotificationServerListUpdater` and has been created.
    pub fn follows_cache_refreshed(&self, config: &RibbonConfig) -> bool {
        config.eureka_notification_updater && self.lb.is_some()
    }

    /// `EurekaNotificationServerListUpdater` (FACTS.md §8): the Eureka client fires a
    /// `CacheRefreshedEvent` after every successful fetch, changed or not, and the updater runs
    /// one `updateListOfServers` on its pool (taken as immediate). (Whether the event reaches
    /// the updater at all is the client's side: not on Dalston, see the world's handler.)
    pub fn on_cache_refreshed(
        &mut self,
        config: &RibbonConfig,
        client: ClientLists<'_>,
        out: &mut Vec<RibbonEffect>,
    ) {
        if self.follows_cache_refreshed(config) {
            self.update_list_of_servers(client, out);
        }
    }

    /// `DynamicServerListLoadBalancer#updateListOfServers`: the UP instances of the app in the
    /// caller's Eureka cache, in the client's order (`DiscoveryEnabledNIWSServerList
    /// #obtainServersViaDiscovery` keeps `status == UP` itself, so with
    /// `filter-only-up-instances = false` Ribbon still drops DOWN instances; the single-zone
    /// filter keeps all).
    fn update_list_of_servers(&mut self, client: ClientLists<'_>, out: &mut Vec<RibbonEffect>) {
        let Some(lb) = self.lb.as_mut() else {
            return;
        };
        // Sized for the whole UP list at once: collected through the filter, the list grew
        // 4, 8, 16 (two reallocations for a dozen instances), at every refresh.
        let mut fresh = Vec::with_capacity(client.up_list.len());
        fresh.extend(
            client
                .up_list
                .iter()
                .copied()
                .filter(|&q| (client.is_up)(q)),
        );
        let old = std::mem::replace(&mut lb.servers, fresh.clone());
        out.push(RibbonEffect::ListChanged { old, new: fresh });
    }

    /// One request through Ribbon with its retries (FACTS.md §8 retry rules) at `now_ms`:
    /// `(next_servers, same_server)` servers and attempts on each ([`super::Route::servers_to_try`]);
    /// each next-server retry chooses again through the availability filter; each refused or
    /// timed out attempt is a circuit-tripping failure of its server (recorded
    /// `failures_per_refusal` times, once per recorder of the stack, FACTS.md §14) and any
    /// accepted one clears the server's count (`LoadBalancerContext#noteRequestCompletion`);
    /// each attempt's cost and the Hystrix timeout follow [`AttemptCosts::attempt`]. Every
    /// attempt is reported to `out` as it is made, with its connect-timeout delay if any.
    pub fn request(
        &mut self,
        (next_servers, same_server): (u32, u32),
        costs: AttemptCosts,
        now_ms: u64,
        answer: &dyn Fn(ProcessId) -> Answer,
        out: &mut impl AttemptOutput,
    ) -> RequestOutcome {
        let breaker = self.breaker;
        let mut spent_ms = 0;
        let mut outcome = RequestOutcome::default();
        for _ in 0..next_servers {
            let Some(lb) = self.lb.as_mut() else {
                out.no_server();
                return RequestOutcome::default();
            };
            let Some(server) = lb.choose_available(&breaker, now_ms) else {
                out.no_server();
                return RequestOutcome::default();
            };
            outcome.first.get_or_insert(server);
            for _ in 0..same_server {
                let answered = answer(server);
                let dead = !answered.accepts();
                let attempted = costs.attempt(&mut spent_ms, answered);
                if dead {
                    let times = u64::from(breaker.failures_per_refusal);
                    let recorded = now_ms + breaker.refusal_recorded_after_ms;
                    lb.stats.note_failures_recorded_at(server, times, recorded);
                } else {
                    lb.stats.note_success(server);
                }
                out.attempt(server, dead);
                if attempted.delay_ms > 0 {
                    out.connect_timeout(server, attempted.delay_ms);
                }
                if !dead {
                    outcome.accepted = Some(server);
                    return outcome;
                }
                if attempted.gave_up {
                    outcome.failed = true;
                    return outcome;
                }
            }
        }
        outcome.failed = outcome.first.is_some();
        outcome
    }
}

/// Ribbon's `DynamicServerListLoadBalancer` with `ZoneAvoidanceRule` in a single zone: the
/// server list, the round-robin cursor and the per-server circuit-breaker stats.
#[derive(Debug, Default)]
pub struct RibbonLoadBalancer {
    pub servers: Vec<ProcessId>,
    /// `AbstractServerPredicate`'s `nextIndex` AtomicInteger.
    next_index: usize,
    /// `LoadBalancerStats`' `ServerStats`, by process.
    pub stats: ServerStatsTable,
    /// Scratch: the eligible servers of the current pick.
    eligible: Vec<ProcessId>,
}

impl RibbonLoadBalancer {
    #[cfg(test)]
    pub fn with_cursor(servers: Vec<ProcessId>, next_index: usize) -> Self {
        RibbonLoadBalancer {
            servers,
            next_index,
            ..RibbonLoadBalancer::default()
        }
    }

    pub fn cursor(&self) -> usize {
        self.next_index
    }

    pub fn set_cursor(&mut self, next_index: usize) {
        self.next_index = next_index;
    }

    /// `AbstractServerPredicate#incrementAndGetModulo`: returns the current cursor and advances
    /// it; a cursor beyond a shrunken list wraps through `(current + 1) % modulo` first.
    fn increment_and_get_modulo(&mut self, modulo: usize) -> usize {
        loop {
            let current = self.next_index;
            self.next_index = (current + 1) % modulo;
            if current < modulo {
                return current;
            }
        }
    }

    /// Round robin over the whole list (no server is tripped).
    pub fn choose(&mut self) -> Option<ProcessId> {
        let modulo = self.servers.len();
        if modulo == 0 {
            return None;
        }
        let i = self.increment_and_get_modulo(modulo);
        Some(self.servers[i])
    }

    /// `PredicateBasedRule#choose` → `chooseRoundRobinAfterFiltering`: the round robin runs over
    /// the servers the availability filter keeps at `now_ms` (every server when all are
    /// tripped), with the one shared cursor.
    pub fn choose_available(&mut self, breaker: &CircuitBreaker, now_ms: u64) -> Option<ProcessId> {
        if !breaker.enabled || !self.stats.any_failures() {
            return self.choose();
        }
        let mut eligible = std::mem::take(&mut self.eligible);
        eligible_servers(breaker, &self.stats, &self.servers, now_ms, &mut eligible);
        let chosen = if eligible.is_empty() {
            None
        } else {
            let i = self.increment_and_get_modulo(eligible.len());
            Some(eligible[i])
        };
        self.eligible = eligible;
        chosen
    }

    /// Batched mode: `requests` requests while every server the availability filter keeps at
    /// `now_ms` accepts (`chooseRoundRobinAfterFiltering` over the kept servers, every one when
    /// nobody has failures): the one cursor moves over the kept servers, and each server picked
    /// gets a response, which clears its failure count
    /// (`ServerStats#clearSuccessiveConnectionFailureCount`). Returns the kept servers and the
    /// position of the first pick among them. At least one server must be kept.
    pub fn serve_kept(
        &mut self,
        breaker: &CircuitBreaker,
        now_ms: u64,
        requests: u64,
    ) -> (&[ProcessId], usize) {
        if self.stats.any_failures() {
            eligible_servers(
                breaker,
                &self.stats,
                &self.servers,
                now_ms,
                &mut self.eligible,
            );
        } else {
            self.eligible.clear();
            self.eligible.extend_from_slice(&self.servers);
        }
        let m = self.eligible.len();
        let start = first_pick(self.next_index, m);
        self.next_index = ((start as u64 + requests) % m as u64) as usize;
        if self.stats.any_failures() {
            for i in 0..requests.min(m as u64) as usize {
                self.stats.note_success(self.eligible[(start + i) % m]);
            }
        }
        (&self.eligible, start)
    }
}

#[cfg(test)]
mod tests {
    use super::circuit_breaker::REFUSAL_RECORDED_AFTER_MS;
    use super::*;
    use crate::eureka::route::AttemptEffect;

    const BREAKER: CircuitBreaker = CircuitBreaker {
        enabled: true,
        threshold: 3,
        factor_s: 10,
        max_s: 30,
        failures_per_refusal: 2,
        refusal_recorded_after_ms: REFUSAL_RECORDED_AFTER_MS,
    };

    fn listed(new: &[ProcessId], old: &[ProcessId]) -> RibbonEffect {
        RibbonEffect::ListChanged {
            old: old.to_vec(),
            new: new.to_vec(),
        }
    }

    /// A Ribbon whose load balancer was created over `servers` (all UP), its effects dropped.
    fn created(servers: &[ProcessId]) -> Ribbon {
        let mut ribbon = Ribbon::new(BREAKER);
        let up = |_: ProcessId| true;
        let client = ClientLists {
            up_list: servers,
            is_up: &up,
        };
        ribbon.create(&RibbonConfig::default(), client, &mut Vec::new());
        ribbon
    }

    /// Steady start: the list read from the client, the cursor at `draw x size` (anywhere in
    /// it: `incrementAndGetModulo` keeps it below the size), the polling updater's next run at
    /// the given phase; with the notification updater no timer at all.
    #[test]
    fn a_steady_ribbon_resumes_with_its_cursor_and_phase() {
        let up = |_: ProcessId| true;
        let lists = || ClientLists {
            up_list: &[1, 2, 3, 4],
            is_up: &up,
        };
        let mut ribbon = Ribbon::new(BREAKER);
        let mut out = Vec::new();
        ribbon.create_steady(&RibbonConfig::default(), lists(), 12_345, 0.6, &mut out);
        let lb = ribbon.lb().unwrap();
        assert_eq!(lb.servers, [1, 2, 3, 4]);
        assert_eq!(lb.cursor(), 2);
        assert_eq!(
            out.last(),
            Some(&RibbonEffect::ScheduleRefresh {
                delay_ms: 12_345,
                generation: 1
            })
        );
        let notified = RibbonConfig {
            eureka_notification_updater: true,
            ..RibbonConfig::default()
        };
        let mut ribbon = Ribbon::new(BREAKER);
        let mut out = Vec::new();
        ribbon.create_steady(&notified, lists(), 12_345, 0.999, &mut out);
        assert_eq!(ribbon.lb().unwrap().cursor(), 3);
        assert!(
            !out.iter()
                .any(|e| matches!(e, RibbonEffect::ScheduleRefresh { .. }))
        );
    }

    /// `DynamicServerListLoadBalancer#updateListOfServers` through
    /// `DiscoveryEnabledNIWSServerList#obtainServersViaDiscovery`: only instances whose status
    /// is UP in the client's cache are kept, in the client's order. The constructor updates at
    /// once and arms `PollingServerListUpdater`'s first run 1 s later.
    #[test]
    fn refresh_keeps_only_instances_up_in_the_client_cache() {
        let mut ribbon = Ribbon::new(BREAKER);
        let not_2 = |q: ProcessId| q != 2;
        let client = ClientLists {
            up_list: &[1, 2, 3],
            is_up: &not_2,
        };
        let mut out = Vec::new();
        ribbon.create(&RibbonConfig::default(), client, &mut out);
        assert_eq!(
            out,
            [
                listed(&[1, 3], &[]),
                RibbonEffect::ScheduleRefresh {
                    delay_ms: RIBBON_FIRST_REFRESH_MS,
                    generation: 1,
                },
            ]
        );
        assert_eq!(ribbon.lb().unwrap().servers, [1, 3]);
    }

    /// `PollingServerListUpdater`: each run updates the list and runs again
    /// `ServerListRefreshInterval` (30 s) later; a timer of an earlier load balancer (or
    /// generation) does nothing, and a re-created load balancer starts a new one.
    #[test]
    fn polling_updater_rearms_and_drops_stale_timers() {
        let config = RibbonConfig::default();
        let mut ribbon = created(&[1, 2]);
        let up = |_: ProcessId| true;
        let client = ClientLists {
            up_list: &[2, 4],
            is_up: &up,
        };
        let mut out = Vec::new();
        ribbon.on_refresh(1, &config, client, &mut out);
        assert_eq!(
            out,
            [
                listed(&[2, 4], &[1, 2]),
                RibbonEffect::ScheduleRefresh {
                    delay_ms: 30_000,
                    generation: 1,
                },
            ]
        );
        out.clear();
        ribbon.on_refresh(0, &config, client, &mut out);
        assert!(out.is_empty());
        ribbon.create(&config, client, &mut out);
        out.clear();
        ribbon.on_refresh(1, &config, client, &mut out);
        assert!(out.is_empty());
        assert!(ribbon.refresh_is_current(2));
    }

    /// `EurekaNotificationServerListUpdater` (FACTS.md §8): no timer; every
    /// `CacheRefreshedEvent` of a created load balancer runs one update. The polling updater
    /// ignores the event.
    #[test]
    fn notification_updater_follows_cache_refreshes_without_a_timer() {
        let notified = RibbonConfig {
            eureka_notification_updater: true,
            ..RibbonConfig::default()
        };
        let up = |_: ProcessId| true;
        let client = ClientLists {
            up_list: &[7],
            is_up: &up,
        };
        let mut ribbon = Ribbon::new(BREAKER);
        assert!(!ribbon.follows_cache_refreshed(&notified));
        let mut out = Vec::new();
        ribbon.create(&notified, client, &mut out);
        assert_eq!(out, [listed(&[7], &[])]);
        out.clear();
        ribbon.on_cache_refreshed(&notified, client, &mut out);
        assert_eq!(out, [listed(&[7], &[7])]);
        out.clear();
        let mut polling = created(&[7]);
        polling.on_cache_refreshed(&RibbonConfig::default(), client, &mut out);
        assert!(out.is_empty());
    }

    /// One request with a next-server retry: the cursor picks 1 (refused: two failures on
    /// record for a RestTemplate with spring-retry, stamped at the refusal's record
    /// `REFUSAL_RECORDED_AFTER_MS` later; below the threshold of 3, so not tripped), then the
    /// next-server retry moves the cursor on to 2, which accepts.
    #[test]
    fn request_retries_the_next_server_and_records_the_refusal() {
        let mut ribbon = created(&[1, 2]);
        let refuses_1 = |p: ProcessId| {
            if p == 1 {
                Answer::Refuses
            } else {
                Answer::Accepts
            }
        };
        let mut out: Vec<AttemptEffect> = Vec::new();
        let outcome = ribbon.request((2, 1), AttemptCosts::default(), 5_000, &refuses_1, &mut out);
        assert_eq!(
            out,
            [
                AttemptEffect::Attempt {
                    process: 1,
                    dead: true
                },
                AttemptEffect::Attempt {
                    process: 2,
                    dead: false
                },
            ]
        );
        assert_eq!(outcome.accepted(), Some(2));
        assert_eq!(outcome.failed_first(), None);
        let stats = ribbon.lb().unwrap().stats.get(1);
        assert_eq!(stats.successive_failures, 2);
        assert_eq!(stats.last_failure_ms, 5_000 + REFUSAL_RECORDED_AFTER_MS);
    }

    /// A vanished host costs the connect timeout (`AttemptCosts::attempt`) and, with nothing
    /// else to try, the request fails on its first-chosen server; an empty list has no server.
    #[test]
    fn request_reports_connect_timeouts_and_no_server() {
        let mut ribbon = created(&[4]);
        let vanished = |_: ProcessId| Answer::TimesOut;
        let costs = AttemptCosts {
            connect_timeout_ms: 1_000,
            read_timeout_ms: 1000,
            hystrix_timeout_ms: None,
        };
        let mut out: Vec<AttemptEffect> = Vec::new();
        let outcome = ribbon.request((1, 1), costs, 0, &vanished, &mut out);
        assert_eq!(
            out,
            [
                AttemptEffect::Attempt {
                    process: 4,
                    dead: true
                },
                AttemptEffect::ConnectTimeout {
                    process: 4,
                    delay_ms: 1_000
                },
            ]
        );
        assert_eq!(outcome.failed_first(), Some(4));
        let mut empty = created(&[]);
        out.clear();
        let outcome = empty.request((2, 1), costs, 0, &vanished, &mut out);
        assert_eq!(out, [AttemptEffect::NoServer]);
        assert_eq!(outcome, RequestOutcome::default());
    }

    /// Batched requests while every kept server accepts (`chooseRoundRobinAfterFiltering`):
    /// 2 is tripped (3 failures at 10 s: blackout 10 s, to 20.001 s), so [1, 3] are kept; three
    /// requests from cursor 0 go to 1, 3, 1, leave the cursor at 3 % 2 = 1 and clear 1's single
    /// failure; 2 keeps its count.
    #[test]
    fn serve_kept_walks_the_kept_servers_and_clears_their_failures() {
        let mut lb = RibbonLoadBalancer::with_cursor(vec![1, 2, 3], 0);
        lb.stats.note_failures(2, 3, 10_000);
        lb.stats.note_failures(1, 1, 10_000);
        let (kept, start) = lb.serve_kept(&BREAKER, 15_000, 3);
        assert_eq!((kept, start), (&[1, 3][..], 0));
        assert_eq!(lb.cursor(), 1);
        assert_eq!(lb.stats.get(1).successive_failures, 0);
        assert_eq!(lb.stats.get(2).successive_failures, 3);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::RngSeed;

        /// A load balancer over `servers` with its cursor at `cursor` (possibly beyond a
        /// shrunken list) and `failures` on record: `(server, count, last failure sent at)`.
        fn balancer(
            servers: &[ProcessId],
            cursor: usize,
            failures: &[(ProcessId, u64, u64)],
        ) -> RibbonLoadBalancer {
            let mut lb = RibbonLoadBalancer::with_cursor(servers.to_vec(), cursor);
            for &(p, count, last_ms) in failures {
                lb.stats.note_failures(p, count, last_ms);
            }
            lb
        }

        fn breaker() -> impl Strategy<Value = CircuitBreaker> {
            (
                any::<bool>(),
                1u32..=5,
                1u64..=20,
                1u64..=60,
                1u32..=2,
                0u64..=1,
            )
                .prop_map(
                    |(
                        enabled,
                        threshold,
                        factor_s,
                        max_s,
                        failures_per_refusal,
                        recorded_after,
                    )| {
                        CircuitBreaker {
                            enabled,
                            threshold,
                            factor_s,
                            max_s,
                            failures_per_refusal,
                            refusal_recorded_after_ms: recorded_after,
                        }
                    },
                )
        }

        /// A list of up to 8 distinct process ids in any order.
        fn servers() -> impl Strategy<Value = Vec<ProcessId>> {
            proptest::collection::btree_set(0usize..40, 0..=8)
                .prop_map(|set| set.into_iter().collect::<Vec<_>>())
                .prop_shuffle()
        }

        fn failures() -> impl Strategy<Value = Vec<(ProcessId, u64, u64)>> {
            proptest::collection::vec((0usize..40, 1u64..=8, 0u64..=60_000), 0..=12)
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 512,
                rng_seed: RngSeed::Fixed(14),
                ..ProptestConfig::default()
            })]

            /// The property tests' invariant "a caller never routes to an instance absent from its list", at
            /// the rule: `PredicateBasedRule#choose` (FACTS.md §8) picks from the servers of the
            /// list the availability filter keeps at `now`, the untripped ones, or all of them
            /// when every one is tripped (fallback `alwaysTrue`); it finds none only in an empty
            /// list. And `chooseRoundRobinAfterFiltering`'s one cursor
            /// (`incrementAndGetModulo`) walks the kept servers: as many picks as there are
            /// kept servers, with nothing recorded in between, give each exactly once, from any
            /// cursor, even one beyond a shrunken list. The expectation is computed here from
            /// `is_tripped` server by server.
            #[test]
            fn a_pick_is_a_listed_server_the_filter_keeps(
                servers in servers(),
                cursor in 0usize..20,
                failures in failures(),
                breaker in breaker(),
                now_ms in 0u64..=120_000,
            ) {
                let mut lb = balancer(&servers, cursor, &failures);
                let untripped: Vec<ProcessId> = servers
                    .iter()
                    .copied()
                    .filter(|&p| !breaker.is_tripped(lb.stats.get(p), now_ms))
                    .collect();
                let kept = if untripped.is_empty() { servers.clone() } else { untripped };
                let mut picks: Vec<ProcessId> = (0..kept.len())
                    .map(|_| lb.choose_available(&breaker, now_ms).unwrap())
                    .collect();
                picks.sort_unstable();
                let mut expected = kept.clone();
                expected.sort_unstable();
                prop_assert_eq!(picks, expected);
                if servers.is_empty() {
                    prop_assert_eq!(lb.choose_available(&breaker, now_ms), None);
                }
            }

            /// The batched walk picks what the per-request picks pick
            /// ([`RibbonLoadBalancer::serve_kept`] against `choose_available`): while some
            /// server is untripped and every kept one accepts (the batched counting's "serving"
            /// phase), `requests` requests at once go to the same servers in the same order as
            /// `requests` single picks, each followed by its response
            /// (`ServerStats#clearSuccessiveConnectionFailureCount`), and leave the same cursor
            /// and the same failure counts: a kept server stays kept when its count is cleared,
            /// so the filter does not change within the batch.
            #[test]
            fn the_batched_walk_picks_what_single_picks_pick(
                servers in servers().prop_filter("a server", |s| !s.is_empty()),
                cursor in 0usize..20,
                failures in failures(),
                breaker in breaker().prop_map(|b| CircuitBreaker { enabled: true, ..b }),
                now_ms in 0u64..=120_000,
                requests in 1u64..=30,
            ) {
                let mut single = balancer(&servers, cursor, &failures);
                let mut batched = balancer(&servers, cursor, &failures);
                prop_assume!(servers
                    .iter()
                    .any(|&p| !breaker.is_tripped(single.stats.get(p), now_ms)));
                let picks: Vec<ProcessId> = (0..requests)
                    .map(|_| {
                        let p = single.choose_available(&breaker, now_ms).unwrap();
                        single.stats.note_success(p);
                        p
                    })
                    .collect();
                let (kept, start) = batched.serve_kept(&breaker, now_ms, requests);
                let walked: Vec<ProcessId> = (0..requests as usize)
                    .map(|i| kept[(start + i) % kept.len()])
                    .collect();
                prop_assert_eq!(walked, picks);
                prop_assert_eq!(batched.cursor(), single.cursor());
                for &p in &servers {
                    prop_assert_eq!(batched.stats.get(p), single.stats.get(p));
                }
            }
        }
    }
}
