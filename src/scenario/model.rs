//! The validated, typed scenario: what the simulation reads.
//!
//! Raw TOML (with Spring property names, relaxed binding, `--set` overrides) becomes these types in
//! `scenario::parse`; nothing here is optional or unchecked. Every default is the Eureka / Ribbon /
//! Spring Cloud default named in FACTS.md, and every time is integer milliseconds.

use super::release::{EurekaClientTransport, Release, TimeoutProperties, Train};
use super::{Metric, Statistic};

/// A whole scenario, ready to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The scenario's name (its file stem); used for the default output folder.
    pub name: String,
    pub simulation: SimulationConfig,
    pub network: NetworkConfig,
    /// `[server]`: the standalone server, and the base every `[[peer]]` overrides.
    pub server: ServerConfig,
    /// `[[peer]]`s: the Eureka servers of a cluster, in file order (peer `k` is `ServerId(k)`).
    /// Empty: one standalone server configured by `[server]` ([`Scenario::servers`]).
    pub peers: Vec<PeerConfig>,
    pub apps: Vec<AppConfig>,
    pub callers: Vec<CallerConfig>,
    pub shutdowns: Vec<ShutdownConfig>,
    /// `[[restart]]`s: processes brought back after a down time (see `crate::eureka` restart).
    pub restarts: Vec<RestartConfig>,
    /// `[[deploy]]`s: rolling replacements of every instance of an app.
    pub deploys: Vec<DeployConfig>,
    /// `[[fault]]`s: partitions, pauses, peer restarts and crashes (empty by default), in file
    /// order, then a crash per peer of each `[[shutdown]] zone`.
    pub faults: Vec<FaultConfig>,
    /// The callers each `[[shutdown]] zone` stops (empty by default).
    pub caller_stops: Vec<CallerStop>,
    /// `[[claim]]`s: timing assertions that `eureka-sim check` evaluates (empty by default; `run`
    /// ignores them).
    pub claims: Vec<ClaimConfig>,
    /// Things that are allowed but probably not meant (e.g. `wait-s` on a kill-9), shown to the user.
    pub warnings: Vec<String>,
}

/// How long after its last planned action (a stop, the end of a wait or a pause, a restart, a
/// deploy's start) a trial may wait for the news by default: a day, longer than any expiry,
/// eviction and cache chain Eureka's settings allow short of self-preservation.
pub const WAIT_FOR_NEWS_MS: u64 = 86_400_000;

/// `simulation.start`: what the world looks like at time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The fleet has been up for a long time: registered, renewed, caches full, every periodic
    /// timer at an independent uniform phase.
    Steady,
    /// The server and every process start in the first minutes (their timers' phases follow
    /// from the start-up sequence).
    Cold,
}

/// `simulation.end`: when a trial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialEnd {
    /// As soon as nothing measured can change any more: every planned action has happened, every
    /// stopped instance has left every view, no live instance is missing from a caller's list
    /// and no deploy dip is open; at the latest at `duration-s` (and on from there, as
    /// [`TrialEnd::Duration`], while a stopped instance is still listed). The outcomes are
    /// exactly those of [`TrialEnd::Duration`] apart from the end instant (tests compare them).
    Resolved,
    /// The full simulation (the reference): at least `duration-s`, then on while a stopped
    /// instance is still listed, up to `max-duration-s`.
    Duration,
}

/// `[simulation]`: the run itself and the modelling assumptions that are not Spring properties.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulationConfig {
    /// `duration-s`: the simulated time per trial (default 900 s): with `end = "duration"` the
    /// least, with `end = "resolved"` (the default) the most unless a stopped instance is still
    /// listed then.
    pub duration_ms: u64,
    /// `max-duration-s`: the most; a trial still waiting for the news at `duration-s` runs on
    /// to here (default [`WAIT_FOR_NEWS_MS`] after the last planned action, which the parser
    /// works out).
    pub max_duration_ms: u64,
    /// `trials` (default 100).
    pub trials: u32,
    /// `seed` (default 1).
    pub seed: u64,
    /// `release` (default Hoxton) and optional `eureka-version`.
    pub release: Release,
    /// `start`: a fleet up for a long time (default) or a cold start.
    pub start: Start,
    /// `end`: at resolution (default) or the full `duration-s` (the reference).
    pub end: TrialEnd,
    /// `start-spread-s` (cold start): every app instance and caller process starts at a
    /// uniformly random instant in `[0, start-spread)` (default 60 s).
    pub start_spread_ms: u64,
    /// `context-start-ms`: least time from the Eureka client's scheduled tasks starting to the
    /// web server being ready (Spring Cloud registers then, FACTS.md §5.1; default 3000 ms).
    pub context_start_ms: u64,
    /// `context-start-spread-ms`: each process adds a uniform `[0, x]` ms (default 30000), so
    /// registrations and the callers' first requests fall at random phases of the timers.
    pub context_start_spread_ms: u64,
    /// The most events one trial may handle before it stops and its command fails
    /// (`experiment::budget::event_limit`); `None`, always from a file: four times the
    /// budget's upper bound. Not a scenario key: the seam through which tests reach the guard
    /// that only a bug of the model or of its estimate could trip.
    pub event_limit: Option<u64>,
}

/// `[network]`: every REST call's one-way latency is `latency-ms` plus a uniform draw in
/// `[0, latency-jitter-ms]`, each direction drawn separately.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkConfig {
    /// `latency-ms` (default 1).
    pub latency_ms: u64,
    /// `latency-jitter-ms` (default 4).
    pub latency_jitter_ms: u64,
}

/// `[server]`: the Eureka server's `eureka.server.*` properties and its embedded client.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// `spring.application.name` (default `eureka-server`): its instance id when it registers.
    pub application_name: String,
    /// `eureka.server.eviction-interval-timer-in-ms` (60000).
    pub eviction_interval_ms: u64,
    /// `eureka.server.enable-self-preservation` (true).
    pub enable_self_preservation: bool,
    /// `eureka.server.renewal-percent-threshold` (0.85).
    pub renewal_percent_threshold: f64,
    /// `eureka.server.expected-client-renewal-interval-seconds` (30).
    pub expected_client_renewal_interval_s: u64,
    /// `eureka.server.renewal-threshold-update-interval-ms` (900000).
    pub renewal_threshold_update_interval_ms: u64,
    /// `eureka.server.response-cache-update-interval-ms` (30000).
    pub response_cache_update_interval_ms: u64,
    /// `eureka.server.response-cache-auto-expiration-in-seconds` (180).
    pub response_cache_auto_expiration_s: u64,
    /// `eureka.server.use-read-only-response-cache` (true).
    pub use_read_only_response_cache: bool,
    /// `eureka.server.sync-when-timestamp-differs` (true).
    pub sync_when_timestamp_differs: bool,
    /// `eureka.instance.registry.expected-number-of-clients-sending-renews` (1).
    pub expected_number_of_clients_sending_renews: u32,
    /// `eureka.instance.registry.default-open-for-traffic-count` (1).
    pub default_open_for_traffic_count: u32,
    /// `eureka.server.disable-delta` (false): `GET /apps/delta` answers 403 (FACTS.md §4).
    pub disable_delta: bool,
    /// `eureka.server.retention-time-in-m-s-in-delta-queue` (180000).
    pub retention_time_in_ms_in_delta_queue: u64,
    /// `eureka.server.delta-retention-timer-interval-in-ms` (30000).
    pub delta_retention_timer_interval_ms: u64,
    /// `eureka.server.registry-sync-retries` (0, `EurekaServerConfigBean#registrySyncRetries`;
    /// Netflix 5): start-up syncs tried while they find nothing (FACTS.md §2.5, §2.7).
    pub registry_sync_retries: u32,
    /// `eureka.server.registry-sync-retry-wait-ms` (30000): the sleep before each sync after the
    /// first.
    pub registry_sync_retry_wait_ms: u64,
    /// `eureka.server.wait-time-in-ms-when-sync-empty` (300000): the 403 window of a server that
    /// opened with an effective count of 0 (`PeerAwareInstanceRegistryImpl#shouldAllowAccess`).
    pub wait_time_in_ms_when_sync_empty: u64,
    /// `eureka.server.peer-node-connect-timeout-ms` (200 in Spring Cloud; Netflix 1000).
    pub peer_node_connect_timeout_ms: u64,
    /// `eureka.server.peer-node-read-timeout-ms` (200 in Spring Cloud; Netflix 5000).
    pub peer_node_read_timeout_ms: u64,
    /// `eureka.server.max-time-for-replication` (30000): the expiry of a replicated cancel,
    /// status update or status-override delete (`PeerEurekaNode#cancel`, FACTS.md §10).
    pub max_time_for_replication_ms: u64,
    /// `eureka.server.max-elements-in-peer-replication-pool` (10000): pending tasks per peer.
    pub max_elements_in_peer_replication_pool: u32,
    /// `eureka.server.max-threads-for-peer-replication` (20): batches in flight per peer.
    pub max_threads_for_peer_replication: u32,
    /// `timer-lateness-ms` (model, default 0): each run of a server `java.util.Timer` wakes up a
    /// uniform `[0, x]` ms late, which fixed-delay timers carry forward.
    pub timer_lateness_ms: u64,
    /// The server's embedded Eureka client (`eureka.client.*`, `eureka.instance.*` in `[server]`).
    /// Its defaults differ from an app's: `fetch-registry` and `register-with-eureka` are false,
    /// the standalone setup of seed 003.
    pub client: ClientConfig,
}

/// Spring Cloud's name of the zone of every client and server not configured otherwise
/// (`EurekaClientConfigBean.DEFAULT_ZONE`), the `[[peer]] zone` default.
pub const DEFAULT_ZONE: &str = "defaultZone";

/// One `[[fault]]`: something that goes wrong in the cluster at `at-s`.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultConfig {
    /// `at-s`: when it begins, ms from the start of the trial.
    pub at_ms: u64,
    pub kind: FaultKind,
}

impl FaultConfig {
    /// When it ends, ms from the start of the trial (a crash: when it begins).
    pub fn ends_ms(&self) -> u64 {
        let lasts = match self.kind {
            FaultKind::Partition { for_ms, .. } | FaultKind::Pause { for_ms, .. } => for_ms,
            FaultKind::ServerRestart { down_ms, .. } => down_ms,
            FaultKind::Crash { .. } => 0,
        };
        self.at_ms.saturating_add(lasts)
    }
}

/// `[[fault]] kind` and its own keys.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// `partition`, `between = [A, B]`, `for-s`: nothing passes either way between the two
    /// sides (connects time out as configured) for `for_ms`.
    Partition {
        between: [FaultSide; 2],
        for_ms: u64,
    },
    /// `pause`, `target`, `for-s`: the process stops the world (a GC or VM freeze) for
    /// `for_ms`: its timers fire late and its requests wait, then everything late runs at once.
    Pause { target: FaultSide, for_ms: u64 },
    /// `server-restart`, `target` (a peer), `down-s`: the peer is down for `down_ms`, then
    /// starts again with an empty registry.
    ServerRestart { peer: usize, down_ms: u64 },
    /// `crash`, `target` (a peer): the peer dies for good. `vanishes`: its host goes with it
    /// (power or network gone; a `[[shutdown]] zone`'s default), so connects to it hang until
    /// the caller's connect timeout; otherwise (a `[[fault]] crash`, or a zone outage with
    /// `host = "stays"`) a dead process on a live host refuses them at once.
    Crash { peer: usize, vanishes: bool },
}

/// One side of a partition, or a pause's target, as written: a peer, an instance, a caller,
/// an app (all its instances) or a zone (every peer of that `[[peer]] zone` and every process
/// whose first availability zone it is).
#[derive(Debug, Clone, PartialEq)]
pub enum FaultSide {
    Peer(usize),
    Instance { app: usize, index: u32 },
    Caller(usize),
    App(usize),
    Zone(String),
}

/// One `[[peer]]`: a Eureka server of a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerConfig {
    /// `name`: the peer's host in service URLs (`http://<name>:8761/eureka/`) and its process
    /// name. Unique among peers, apps, callers and instance ids.
    pub name: String,
    /// `zone` (default `defaultZone`): the zone the peer runs in.
    pub zone: String,
    /// `[server]` with the peer's own `[server]` keys on top. Its `client` is the peer's embedded
    /// Eureka client: `[server]`'s client keys, then the peer's (like the standalone server's, it
    /// does not take `[clients]`).
    pub server: ServerConfig,
}

impl PeerConfig {
    /// The peers this one (index `me` in [`Scenario::servers`]) replicates to: its embedded
    /// client's servers but itself (`PeerEurekaNodes#resolvePeerUrls`, `#isThisMyUrl`), own zone
    /// first, or the other zones first with `prefer-same-zone-eureka = false`
    /// (`EndpointUtils#getServiceUrlsFromConfig`, `#getZoneOffset`). By default every other peer;
    /// empty for the standalone server.
    ///
    /// A peer listed under two zones is replicated to once: `PeerEurekaNodes
    /// #updatePeerEurekaNodes` keeps the URLs in sets and makes one `PeerEurekaNode` per URL.
    pub fn replicates_to(&self, me: usize) -> Vec<usize> {
        let client = &self.server.client;
        let e = &client.endpoints;
        let (first, second) = if client.prefer_same_zone_eureka {
            (&e.own, &e.others)
        } else {
            (&e.others, &e.own)
        };
        let mut peers: Vec<usize> = Vec::new();
        for &k in first.iter().chain(second) {
            if k != me && !peers.contains(&k) {
                peers.push(k);
            }
        }
        peers
    }
}

/// The Eureka client properties of one process (`[clients]`, overridden per `[[app]]`/`[[caller]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientConfig {
    /// `eureka.instance.lease-renewal-interval-in-seconds` (30).
    pub lease_renewal_interval_s: u64,
    /// `eureka.instance.lease-expiration-duration-in-seconds` (90).
    pub lease_expiration_duration_s: u64,
    /// `eureka.client.registry-fetch-interval-seconds` (30).
    pub registry_fetch_interval_s: u64,
    /// `eureka.client.register-with-eureka` (true).
    pub register_with_eureka: bool,
    /// `eureka.client.fetch-registry` (true).
    pub fetch_registry: bool,
    /// `eureka.client.instance-info-replication-interval-seconds` (30).
    pub instance_info_replication_interval_s: u64,
    /// `eureka.client.initial-instance-info-replication-interval-seconds` (40).
    pub initial_instance_info_replication_interval_s: u64,
    /// `eureka.client.on-demand-update-status-change` (true).
    pub on_demand_update_status_change: bool,
    /// `eureka.client.filter-only-up-instances` (true).
    pub filter_only_up_instances: bool,
    /// `eureka.client.should-unregister-on-shutdown` (true; Eureka >= 1.8.2).
    pub should_unregister_on_shutdown: bool,
    /// `eureka.client.should-enforce-registration-at-init` (false; Eureka >= 1.8.4).
    pub should_enforce_registration_at_init: bool,
    /// `eureka.client.healthcheck.enabled` (false): the replicator's `refreshInstanceInfo` asks
    /// SCN's `EurekaHealthCheckHandler` for the status (spring-cloud-netflix#3923).
    pub healthcheck_enabled: bool,
    /// `eureka.client.disable-delta` (false): every periodic fetch is a full one (FACTS.md §4).
    pub disable_delta: bool,
    /// Global `ribbon.*` keys.
    pub ribbon: RibbonConfig,
    /// `spring.cloud.loadbalancer.*` keys (FACTS.md §9).
    pub load_balancer: LoadBalancerConfig,
    /// `server.shutdown` (Spring Boot >= 2.3): `None` = the release's default, see
    /// [`Release::graceful_shutdown_default`](super::Release::graceful_shutdown_default).
    pub server_shutdown: Option<ServerShutdown>,
    /// `spring.lifecycle.timeout-per-shutdown-phase` (30 s): how long the graceful phase waits
    /// for in-flight requests (`DefaultLifecycleProcessor`, FACTS.md §7).
    pub timeout_per_shutdown_phase_ms: u64,
    /// `eureka.client.region` (`us-east-1`).
    pub region: String,
    /// `eureka.client.availability-zones.<region>`: (region, its zones), both as written, in the
    /// order first set. Unset for [`region`](Self::region): `[defaultZone]`; see
    /// [`ClientConfig::zones`].
    pub availability_zones: Vec<(String, Vec<String>)>,
    /// `eureka.client.service-url.<zone>`: (zone as written, the `[[peer]]` names of its servers
    /// in the order written; URLs are reduced to their host). Empty: the model's default, see
    /// [`endpoints`](Self::endpoints).
    pub service_url: Vec<(String, Vec<String>)>,
    /// `eureka.client.prefer-same-zone-eureka` (true): orders a server's peer list own zone
    /// first ([`PeerConfig::replicates_to`]); no effect on a client's order (FACTS.md §5.7).
    pub prefer_same_zone_eureka: bool,
    /// `eureka.client.eureka-service-url-poll-interval-seconds` (300): the `AsyncResolver`'s
    /// period, at which the endpoints are re-shuffled from Eureka 1.10.14
    /// (`Release::endpoint_shuffle_fixed_per_host`).
    pub service_url_poll_interval_s: u64,
    /// `eureka.client.transport.sessioned-client-reconnect-interval-seconds` (1200):
    /// `SessionedEurekaHttpClient`'s mean session, drawn as `d + d(U - 0.5)`.
    pub sessioned_client_reconnect_interval_s: u64,
    /// `eureka.client.transport.retryable-client-quarantine-refresh-percentage` (0.66):
    /// `RetryableEurekaHttpClient` clears its quarantine at `(int)(n x this)` entries.
    pub retryable_client_quarantine_refresh_percentage: f64,
    /// `eureka.client.heartbeat-executor-exponential-back-off-bound` (10): the heartbeat's
    /// `TimedSupervisorTask` delay is at most interval x this.
    pub heartbeat_executor_exponential_back_off_bound: u32,
    /// `eureka.client.cache-refresh-executor-exponential-back-off-bound` (10): the same for the
    /// fetch.
    pub cache_refresh_executor_exponential_back_off_bound: u32,
    /// `eureka.client.heartbeat-executor-thread-pool-size` (2): the heartbeat executor's
    /// maximum threads, so how many heartbeats may hang at once.
    pub heartbeat_executor_thread_pool_size: u32,
    /// `eureka.client.cache-refresh-executor-thread-pool-size` (2): the same for the fetch.
    pub cache_refresh_executor_thread_pool_size: u32,
    /// `eureka.client.eureka-server-connect-timeout-seconds` (5): read by the Jersey transport
    /// only ([`Release::eureka_client_transport`](super::Release::eureka_client_transport)).
    pub eureka_server_connect_timeout_s: u64,
    /// `eureka.client.eureka-server-read-timeout-seconds` (8): Jersey only, as above.
    pub eureka_server_read_timeout_s: u64,
    /// `eureka.client.restclient.enabled` (false): SCN 4.2-4.3's RestClient transport
    /// ([`Release::eureka_client_transport`](super::Release::eureka_client_transport)).
    pub restclient_enabled: bool,
    /// The transport timeouts as the file sets them, one per [`TimeoutProperties`] family in
    /// the order of [`TimeoutProperties::ALL`]; read through [`ClientConfig::call_timeouts`].
    pub http_timeouts: [HttpTimeouts; 3],
    /// The Eureka servers this process talks to, resolved at parse time from the keys above and
    /// the `[[peer]]`s (indices into [`Scenario::servers`]; without `[[peer]]` always `own = [0]`).
    pub endpoints: ResolvedEndpoints,
}

/// One family of transport timeout properties as a file sets them, in milliseconds (`None`:
/// not set, the release's default applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HttpTimeouts {
    /// `<prefix>.connect-timeout`.
    pub connect_ms: Option<u64>,
    /// `<prefix>.connect-request-timeout`: the wait for a pooled connection. Accepted, not
    /// modelled: a client's calls never outnumber its pool (HttpClient 5's
    /// `PoolingHttpClientConnectionManager`: 5 per route; the client runs at most one
    /// heartbeat, one fetch and one register per executor thread).
    pub connect_request_ms: Option<u64>,
    /// `<prefix>.socket-timeout`: how long a read of the answer may wait.
    pub socket_ms: Option<u64>,
}

/// A connect to a host that drops packets, with no shorter connect timeout set: Linux gives up
/// after `tcp_syn_retries = 6` retransmissions, 1 + 2 + 4 + 8 + 16 + 32 + 64 = 127 s (a model
/// assumption, `docs/design/peers.md` §1.5).
pub const OS_CONNECT_TIMEOUT_MS: u64 = 127_000;

/// What bounds a Eureka client's call to a server ([`ClientConfig::call_timeouts`]); `None`:
/// nothing but the OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTimeouts {
    pub connect_ms: Option<u64>,
    pub read_ms: Option<u64>,
}

/// A process's Eureka servers by zone, as `ConfigClusterResolver#getClusterEndpointsFromConfig`
/// and `ZoneAffinityClusterResolver#getClusterEndpoints` list them before shuffling: for each of
/// the process's zones ([`ClientConfig::zones`]) the servers of `service-url.<zone>`, else of
/// `service-url.defaultZone`. When the process sets no `service-url` at all the model's default
/// is `defaultZone` = every peer and `<zone>` = the peers whose `zone` is `<zone>` (if any); when
/// it sets some but not `defaultZone`, `defaultZone` = every peer (standing in for Spring's
/// `http://localhost:8761/eureka/`). Each zone's list is in the order written, without repeats;
/// a server that two zones list is in both (two endpoints, as `AwsEndpoint#equals` compares the
/// zone), so `others` may repeat a server of `own` or of another zone (`parse/endpoints.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedEndpoints {
    /// The servers of the process's own zone (`availability-zones[0]`): indices into
    /// [`Scenario::servers`]; never empty.
    pub own: Vec<usize>,
    /// The servers of its other zones, zone by zone (a server listed under two zones is here
    /// twice, or here and in `own`).
    pub others: Vec<usize>,
}

impl Default for ResolvedEndpoints {
    /// The one standalone server.
    fn default() -> Self {
        ResolvedEndpoints {
            own: vec![0],
            others: Vec::new(),
        }
    }
}

impl ResolvedEndpoints {
    /// Every server, own zone first.
    pub fn all(&self) -> impl Iterator<Item = usize> + '_ {
        self.own.iter().chain(&self.others).copied()
    }

    /// How many servers.
    pub fn len(&self) -> usize {
        self.own.len() + self.others.len()
    }

    /// Never: `own` holds at least one server.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `server.shutdown` (Spring Boot `Shutdown` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerShutdown {
    /// The web server stops at once; requests in flight fail.
    Immediate,
    /// The web server stops accepting, in-flight requests get up to the phase timeout.
    Graceful,
}

impl ClientConfig {
    /// The transport this process's Eureka client calls through on `release`
    /// ([`Release::eureka_client_transport`] with `eureka.client.restclient.enabled`).
    pub fn transport(&self, release: Release) -> EurekaClientTransport {
        release.eureka_client_transport(self.restclient_enabled)
    }

    /// The timeouts that bound each call this process's Eureka client makes to a server
    /// (register, renew, fetch, cancel; FACTS.md §5.2, §15): Jersey's
    /// `eureka-server-{connect,read}-timeout-seconds` up to Hoxton, then the family of
    /// properties the release's transport reads ([`Release::eureka_client_timeout_properties`])
    /// with the release's default where the file sets none. A value of 0 is no timeout
    /// (HttpClient reads a zero timeout as infinite).
    pub fn call_timeouts(&self, release: Release) -> CallTimeouts {
        let transport = self.transport(release);
        if transport == EurekaClientTransport::Jersey {
            return CallTimeouts {
                connect_ms: Some(self.eureka_server_connect_timeout_s * 1000),
                read_ms: Some(self.eureka_server_read_timeout_s * 1000),
            };
        }
        let Some((family, default_ms)) = release.eureka_client_timeout_properties(transport) else {
            return CallTimeouts {
                connect_ms: None,
                read_ms: None,
            };
        };
        let set = self.http_timeouts_of(family);
        let effective = |v: Option<u64>| v.or(default_ms).filter(|&ms| ms > 0);
        CallTimeouts {
            connect_ms: effective(set.connect_ms),
            read_ms: effective(set.socket_ms),
        }
    }

    /// How long a connect to a host that never answers waits: the connect timeout of
    /// [`ClientConfig::call_timeouts`], never longer than the OS's [`OS_CONNECT_TIMEOUT_MS`],
    /// which ends a connect whose SYNs go unanswered whatever the client asked for.
    pub fn connect_wait_ms(&self, release: Release) -> u64 {
        self.call_timeouts(release)
            .connect_ms
            .map_or(OS_CONNECT_TIMEOUT_MS, |ms| ms.min(OS_CONNECT_TIMEOUT_MS))
    }

    /// The timeouts of one family as the file sets them.
    pub fn http_timeouts_of(&self, family: TimeoutProperties) -> &HttpTimeouts {
        let index = TimeoutProperties::ALL
            .iter()
            .position(|f| *f == family)
            .unwrap_or(0);
        &self.http_timeouts[index]
    }

    /// The zones of the process's region (`eureka.client.availability-zones.<region>`, as
    /// written), `[defaultZone]` when unset (`EurekaClientConfigBean#getAvailabilityZones`).
    pub fn zones(&self) -> Vec<&str> {
        self.availability_zones
            .iter()
            .find(|(region, _)| *region == self.region)
            .map_or_else(
                || vec![DEFAULT_ZONE],
                |(_, zones)| zones.iter().map(String::as_str).collect(),
            )
    }

    /// The process's own zone: the first of [`zones`](Self::zones) (`InstanceInfo#getZone` off
    /// AWS; not `eureka.instance.metadata-map.zone`, FACTS.md §5.7).
    pub fn zone(&self) -> &str {
        self.availability_zones
            .iter()
            .find(|(region, _)| *region == self.region)
            .and_then(|(_, zones)| zones.first())
            .map_or(DEFAULT_ZONE, String::as_str)
    }

    /// Whether the web server shuts down gracefully on `release`: `server.shutdown` if set, else
    /// the Boot version's default; never before Boot 2.3, which has no graceful shutdown
    /// (`Release::graceful_shutdown_available`).
    pub fn graceful_shutdown(&self, release: super::Release) -> bool {
        release.graceful_shutdown_available()
            && match self.server_shutdown {
                Some(mode) => mode == ServerShutdown::Graceful,
                None => release.graceful_shutdown_default(),
            }
    }
}

/// Spring Cloud LoadBalancer's settings for a process's load-balanced calls (FACTS.md §9).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadBalancerConfig {
    /// `spring.cloud.loadbalancer.ribbon.enabled`: route through Ribbon (true) or Spring Cloud
    /// LoadBalancer (false). Unset: Ribbon up to Hoxton, Spring Cloud LoadBalancer from 2020.0,
    /// which removed Ribbon.
    pub ribbon_enabled: Option<bool>,
    /// `spring.cloud.loadbalancer.cache.enabled` (true).
    pub cache_enabled: bool,
    /// `spring.cloud.loadbalancer.cache.ttl` (35 s).
    pub cache_ttl_ms: u64,
    /// `spring.cloud.loadbalancer.configurations` (`default`).
    pub configurations: SupplierKind,
    /// `spring.cloud.loadbalancer.health-check.initial-delay` (0).
    pub health_check_initial_delay_ms: u64,
    /// `spring.cloud.loadbalancer.health-check.interval` (25 s).
    pub health_check_interval_ms: u64,
    /// `spring.cloud.loadbalancer.health-check.refetch-instances` (false).
    pub refetch_instances: bool,
    /// `spring.cloud.loadbalancer.health-check.refetch-instances-interval` (25 s).
    pub refetch_instances_interval_ms: u64,
    /// `spring.cloud.loadbalancer.retry.enabled` (`None`: unset, which the blocking clients
    /// read as true and the reactive `WebClient` as false; `CallerConfig::policy`).
    pub retry_enabled: Option<bool>,
    /// `spring.cloud.loadbalancer.retry.retry-on-all-operations` (false).
    pub retry_on_all_operations: bool,
    /// `spring.cloud.loadbalancer.retry.max-retries-on-same-service-instance` (0).
    pub max_retries_on_same_service_instance: u32,
    /// `spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance` (1).
    pub max_retries_on_next_service_instance: u32,
    /// `spring.cloud.loadbalancer.retry.avoid-previous-instance` (true).
    pub avoid_previous_instance: bool,
}

/// The HTTP client a caller sends its load-balanced requests with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpClient {
    /// Zuul 1 (`spring-cloud-netflix-zuul`, SCN <= 2.2.x): Ribbon routes through the Apache
    /// `RibbonLoadBalancingHttpClient`, each in a Hystrix command.
    Zuul,
    /// A `@LoadBalanced RestTemplate`.
    RestTemplate,
    /// An OpenFeign client (`@FeignClient`).
    Feign,
    /// A `@LoadBalanced WebClient.Builder`.
    WebClient,
    /// Spring Cloud Gateway with an `lb://` route.
    Gateway,
}

impl HttpClient {
    pub const ALL: [HttpClient; 5] = [
        HttpClient::Zuul,
        HttpClient::RestTemplate,
        HttpClient::Feign,
        HttpClient::WebClient,
        HttpClient::Gateway,
    ];

    /// The spelling in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            HttpClient::Zuul => "zuul",
            HttpClient::RestTemplate => "rest-template",
            HttpClient::Feign => "feign",
            HttpClient::WebClient => "web-client",
            HttpClient::Gateway => "gateway",
        }
    }

    pub fn parse(text: &str) -> Option<HttpClient> {
        HttpClient::ALL.into_iter().find(|c| c.name() == text)
    }

    /// The train's gateway, the caller a scenario means when it says nothing: Zuul up to
    /// Hoxton; Spring Cloud Gateway from 2020.0, where Spring Cloud Netflix 3.0 removed Zuul,
    /// Ribbon and Hystrix (FACTS.md §0.1).
    pub fn default_for(train: Train) -> HttpClient {
        if train < Train::Y2020 {
            HttpClient::Zuul
        } else {
            HttpClient::Gateway
        }
    }
}

/// `spring.cloud.loadbalancer.configurations`: which `ServiceInstanceListSupplier` chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SupplierKind {
    /// `default`: discovery client, then the caching supplier.
    Default,
    /// `health-check`: discovery client, then the health-check supplier.
    HealthCheck,
}

impl SupplierKind {
    pub fn name(self) -> &'static str {
        match self {
            SupplierKind::Default => "default",
            SupplierKind::HealthCheck => "health-check",
        }
    }
}

impl Default for LoadBalancerConfig {
    fn default() -> Self {
        LoadBalancerConfig {
            ribbon_enabled: None,
            cache_enabled: true,
            cache_ttl_ms: 35_000,
            configurations: SupplierKind::Default,
            health_check_initial_delay_ms: 0,
            health_check_interval_ms: 25_000,
            refetch_instances: false,
            refetch_instances_interval_ms: 25_000,
            retry_enabled: None,
            retry_on_all_operations: false,
            max_retries_on_same_service_instance: 0,
            max_retries_on_next_service_instance: 1,
            avoid_previous_instance: true,
        }
    }
}

/// Ribbon client configuration (`ribbon.<Key>` globally, `<app>.ribbon.<Key>` per called app).
#[derive(Debug, Clone, PartialEq)]
pub struct RibbonConfig {
    /// `ServerListRefreshInterval` (30000 ms).
    pub server_list_refresh_interval_ms: u64,
    /// `MaxAutoRetries` (0).
    pub max_auto_retries: u32,
    /// `MaxAutoRetriesNextServer` (1).
    pub max_auto_retries_next_server: u32,
    /// `OkToRetryOnAllOperations` (false).
    pub ok_to_retry_on_all_operations: bool,
    /// Spring `ribbon.eager-load.enabled` (false): create the load balancer at start-up instead
    /// of at the first request.
    pub eager_load: bool,
    /// `eureka-notification-updater` (model, false): the load balancer's `ServerListUpdater` is
    /// `EurekaNotificationServerListUpdater` (a @Bean in Spring Cloud Netflix) instead of the
    /// polling one.
    pub eureka_notification_updater: bool,
    /// `niws.loadbalancer.availabilityFilteringRule.filterCircuitTripped` (true): the
    /// availability filter skips servers whose circuit breaker is tripped (FACTS.md §8).
    pub filter_circuit_tripped: bool,
    /// `niws.loadbalancer.<app>.connectionFailureCountThreshold` (3), or the model's
    /// `niws.loadbalancer.default.*` for every client (Ribbon reads the per-client key only:
    /// `LoadBalancerStats#getConnectionFailureCountThreshold`).
    pub connection_failure_count_threshold: u32,
    /// `niws.loadbalancer.<app>.circuitTripTimeoutFactorSeconds` (10), or `default.*`.
    pub circuit_trip_timeout_factor_s: u64,
    /// `niws.loadbalancer.<app>.circuitTripMaxTimeoutSeconds` (30), or `default.*`.
    pub circuit_trip_max_timeout_s: u64,
    /// `ConnectTimeout` (1000 ms; 2000 on Dalston, see `Release::ribbon_timeouts_ms`).
    pub connect_timeout_ms: u64,
    /// `ReadTimeout` (1000 ms; 5000 on Dalston).
    pub read_timeout_ms: u64,
}

/// One `[[app]]`: a service with identical instances `<name>-0 .. <name>-(n-1)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AppConfig {
    pub name: String,
    pub instances: u32,
    /// `zones` (model): the zones its instances are spread over, round robin (instance `i` in
    /// `zones[i % n]`); empty when not set, every instance then in `client`'s zone.
    pub zones: Vec<String>,
    /// With `zones`, one client configuration per zone, in its order: `client` with
    /// `availability-zones.<region>` that zone, then the others in order, and its endpoints
    /// resolved from them; empty without `zones`. [`AppConfig::client_of`] picks an instance's.
    pub zone_clients: Vec<ClientConfig>,
    /// `service-time-ms` (model, default 0): how long the instance takes to answer a request it
    /// accepted. A fixed time (not a distribution): the set of requests in flight at an instant
    /// `t` is then exactly the accepted ones that arrived in `(t - S, t]`, which batched mode can
    /// count exactly. 0 = requests are answered at once (nothing is ever in flight).
    pub service_time_ms: u64,
    pub client: ClientConfig,
}

impl AppConfig {
    /// The Eureka client configuration of instance `index`: with `zones`, its zone's
    /// (`zone_clients[index % n]`), else the app's.
    pub fn client_of(&self, index: u32) -> &ClientConfig {
        match self.zone_clients.len() {
            0 => &self.client,
            n => &self.zone_clients[index as usize % n],
        }
    }

    /// The zone of instance `index` (its first availability zone, `InstanceInfo#getZone`).
    pub fn zone_of(&self, index: u32) -> &str {
        self.client_of(index).zone()
    }

    /// The zones its instances are in, each once, in `zones`' order (or the app's one zone).
    pub fn instance_zones(&self) -> Vec<&str> {
        if self.zone_clients.is_empty() {
            vec![self.client.zone()]
        } else {
            self.zone_clients.iter().map(ClientConfig::zone).collect()
        }
    }
}

/// One `[[caller]]`: a process (gateway) that routes requests to apps through Ribbon.
#[derive(Debug, Clone, PartialEq)]
pub struct CallerConfig {
    pub name: String,
    /// The apps it calls, each with its resolved Ribbon client configuration.
    pub calls: Vec<CallTarget>,
    /// `rate-per-s`: Poisson arrival rate of requests to each called app.
    pub rate_per_s: f64,
    /// `method` (GET): only GET is retried unless `OkToRetryOnAllOperations`.
    pub method: HttpMethod,
    /// `fixed-rate` (model, default false): requests arrive exactly every `1 / rate-per-s`
    /// seconds (at a random phase) instead of as a Poisson stream.
    pub fixed_rate: bool,
    /// `http-client` (model; the `zuul` key is its alias): the HTTP stack the caller sends with,
    /// by default the train's gateway (`HttpClient::default_for`). Its retry and `ServerStats`
    /// policy: [`CallerConfig::policy`].
    pub http_client: HttpClient,
    /// `spring-retry` (model, default false): spring-retry is on the caller's classpath, which
    /// the retrying Ribbon clients and the blocking LoadBalancer retry need (FACTS.md §14).
    pub spring_retry: bool,
    /// `zuul.retryable` (`ZuulProperties#retryable`, default false).
    pub zuul_retryable: bool,
    /// `hystrix-timeout-ms` (model): the Hystrix command timeout
    /// (`hystrix.command.<route>.execution.isolation.thread.timeoutInMilliseconds`); unset: Zuul's
    /// `(ReadTimeout + ConnectTimeout) * (MaxAutoRetries + 1) * (MaxAutoRetriesNextServer + 1)`.
    /// Setting it makes the caller a Hystrix-wrapped one even when it is not Zuul
    /// (`AttemptCosts::of`).
    pub hystrix_timeout_ms: Option<u64>,
    pub client: ClientConfig,
}

/// A called app with the caller's Ribbon configuration for it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallTarget {
    /// Index into `Scenario::apps`.
    pub app: usize,
    pub ribbon: RibbonConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMethod {
    Get,
    Post,
}

/// One `[[shutdown]]` of one instance: a `[[shutdown]] instance`, or one instance of a
/// `[[shutdown]] zone` (a zone outage is one of these per instance of the zone, so each is
/// measured alone).
#[derive(Debug, Clone, PartialEq)]
pub struct ShutdownConfig {
    /// The instance id (`svc-0`), as written or, in a zone outage, as the zone's app names it.
    pub instance: String,
    /// Index into `Scenario::apps`, and the instance's index within the app.
    pub app: usize,
    pub index: u32,
    /// `at-s`: when the strategy starts.
    pub at_ms: u64,
    pub strategy: Strategy,
    /// `wait-s`: for `pause` and `service-registry`, how long the instance keeps serving.
    pub wait_ms: u64,
    /// `then`: how the process finally dies after a `pause` or `service-registry` wait.
    pub then: FinalStop,
    /// `sigterm-reaches-jvm` (model, default true): false models a container whose PID 1 does not
    /// forward SIGTERM to the JVM (a shell entrypoint without `exec`): a kill -15 does nothing
    /// and the orchestrator kills the process with SIGKILL after the grace period.
    pub sigterm_reaches_jvm: bool,
    /// `termination-grace-period-s` (model, default 30, Kubernetes'
    /// `terminationGracePeriodSeconds`): how long a lost SIGTERM waits for the SIGKILL.
    pub termination_grace_ms: u64,
    /// `resume-s` (pause only): `/resume` this long after the pause began; the process then keeps
    /// running (no `then` stop). `None`: no resume.
    pub resume_ms: Option<u64>,
    /// `cancel-override` (service-registry only, default true): whether the wait ends with the
    /// CANCEL_OVERRIDE (`DELETE .../status`); false leaves OUT_OF_SERVICE in the server's
    /// overridden-status map for `then` (e.g. to see it survive a restart, FACTS.md §6).
    pub cancel_override: bool,
    /// `prestop-s` (model, default 0, kill-15 only): a Kubernetes `preStop` sleep before the
    /// SIGTERM; the instance keeps serving (and stays UP) meanwhile.
    pub prestop_ms: u64,
    /// `host = "vanishes"` (model, default `stays`): the instance's IP is gone once its process is
    /// (a deleted pod), so a connection attempt waits `ConnectTimeout` instead of being refused
    /// at once (FACTS.md §7 last line; `Process::answer`).
    pub host_vanishes: bool,
    /// `zone`: the zone outage this shutdown is part of (`None` for `[[shutdown]] instance`).
    pub zone: Option<String>,
}

/// A caller stopped by a zone outage (`[[shutdown]] zone`): its process dies (kill -9) at
/// `at_ms`, so from then on it routes no request and its Eureka client sends nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct CallerStop {
    /// Index into `Scenario::callers`.
    pub caller: usize,
    pub at_ms: u64,
}

/// One `[[restart]]`: a new incarnation of an instance's process (a new JVM with a new
/// `DiscoveryClient`), by default under the same instance id.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartConfig {
    /// The instance id as written (`svc-0`).
    pub instance: String,
    pub app: usize,
    pub index: u32,
    pub when: RestartWhen,
    /// `new-instance-id` (default false): the new process registers under a new id
    /// (`<instance>@1`), as a process on a new host or port would with Spring Cloud's default id
    /// `hostname:app:port`; the old lease is left to expire.
    pub new_instance_id: bool,
}

/// When a restart starts the new process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartWhen {
    /// `at-s`: at this instant (a still-running previous incarnation is killed first).
    At(u64),
    /// `down-s`: this long after the previous incarnation's process exited.
    AfterExit(u64),
}

/// One `[[deploy]]`: replace every instance of an app in batches (see `crate::eureka` deploy).
#[derive(Debug, Clone, PartialEq)]
pub struct DeployConfig {
    /// Index into `Scenario::apps`.
    pub app: usize,
    /// `at-s`: when the first batch starts.
    pub at_ms: u64,
    /// `strategy`: how each old instance departs.
    pub strategy: Strategy,
    /// `wait-s` and `then`: as for `[[shutdown]]` (pause and service-registry).
    pub wait_ms: u64,
    pub then: FinalStop,
    /// `startup-s`: from a new process's start to its web server being ready (the context-start
    /// model with no spread); `None` = `[simulation]` context-start-ms and its spread.
    pub startup_ms: Option<u64>,
    /// `batch-size` (default 1): instances replaced at once.
    pub batch_size: u32,
    /// `interval-s` (default 0): pause after a batch's new instances are all UP in the server's
    /// registry before the next batch starts.
    pub interval_ms: u64,
}

/// The four shutdown methods of seed 000 (FACTS.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Kill9,
    Kill15,
    Pause,
    ServiceRegistry,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Kill9,
        Strategy::Kill15,
        Strategy::Pause,
        Strategy::ServiceRegistry,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Kill9 => "kill-9",
            Strategy::Kill15 => "kill-15",
            Strategy::Pause => "pause",
            Strategy::ServiceRegistry => "service-registry",
        }
    }

    pub fn parse(text: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == text)
    }

    /// Whether the strategy takes the instance out of routing first and then waits (`wait-s`,
    /// `then`) before it stops the process: `pause` and `service-registry`. The kills stop at
    /// once and ignore `wait-s`. The one place that decides it (parsing, `compare`, `conform`,
    /// `recommend` and the reports ask here).
    pub fn waits(self) -> bool {
        matches!(self, Strategy::Pause | Strategy::ServiceRegistry)
    }

    /// Whether a zone outage (`[[shutdown]] zone`) stops its zone this way: `kill-9` only. An
    /// outage (power, network, a zone's hosts gone) gives no process the time to run its
    /// shutdown hooks, and the waiting strategies act through one process's actuator, which a
    /// zone does not have (`parse/zone.rs`). The one place that decides it (parsing and
    /// `compare`'s default strategies ask here).
    pub fn stops_a_zone(self) -> bool {
        self == Strategy::Kill9
    }

    /// Whether a stop of this strategy ends in a SIGTERM: a `kill-15`, or a waiting strategy
    /// whose `then` is `kill-15`, except a `/pause` that is `/resume`d (the process runs on;
    /// `ShutdownRun` schedules `/resume` instead of the final stop). The one place that decides
    /// it: parsing (a SIGTERM that never reaches the JVM, `sigterm-reaches-jvm`) and `explain`
    /// (the graceful web-server stop) ask here.
    pub fn ends_in_sigterm(self, then: FinalStop, resumes: bool) -> bool {
        match self {
            Strategy::Kill9 => false,
            Strategy::Kill15 => true,
            Strategy::Pause => !resumes && then == FinalStop::Kill15,
            Strategy::ServiceRegistry => then == FinalStop::Kill15,
        }
    }

    /// How long after `at-s` the strategy's own steps end (ms): the `/resume` of a resumed pause,
    /// the wait of a waiting strategy, nothing for the kills (they ignore `wait-s`).
    pub fn planned_ms(self, wait_ms: u64, resume_ms: Option<u64>) -> u64 {
        match resume_ms {
            Some(resume) if self == Strategy::Pause => resume,
            _ if self.waits() => wait_ms,
            _ => 0,
        }
    }
}

impl ShutdownConfig {
    /// The last instant the plan acts (ms): the stop, the end of a wait, a `/resume`, a
    /// `preStop` sleep, or the SIGKILL after a lost SIGTERM.
    pub fn last_planned_ms(&self) -> u64 {
        let wait = self.strategy.planned_ms(self.wait_ms, self.resume_ms);
        let grace = if self.sigterm_reaches_jvm {
            0
        } else {
            self.termination_grace_ms
        };
        self.at_ms
            .saturating_add(self.prestop_ms)
            .saturating_add(wait)
            .saturating_add(grace)
    }

    /// Whether this stop ends in a SIGTERM (`Strategy::ends_in_sigterm`).
    pub fn ends_in_sigterm(&self) -> bool {
        let resumes = self.resume_ms.is_some();
        self.strategy.ends_in_sigterm(self.then, resumes)
    }
}

/// How a paused / taken-out-of-service instance finally stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalStop {
    Kill15,
    Kill9,
    /// `keep-running`: the process does not stop (e.g. after a CANCEL_OVERRIDE it comes back UP).
    KeepRunning,
}

/// One `[[claim]]`: "over the trials, `statistic` of `metric` for shutdown `shutdown` is `comparison`
/// `value`", such as seed 000's "a kill -9 is over within 180 s" as `exposure_ms max <= 180000`.
///
/// `eureka-sim check` decides it on the measured point value (the confidence interval only flags
/// it as marginal); see `crate::experiment::claims`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimConfig {
    /// `name` (optional): a short label for the report.
    pub name: Option<String>,
    /// `shutdown` (default 0): index into `Scenario::shutdowns`; the file may also name the
    /// shutdown by its instance id (`svc-0`).
    pub shutdown: usize,
    /// `metric`: a metric as named in `summary.csv` (`exposure_ms`, `dead_hits`, ...).
    pub metric: Metric,
    /// `statistic`: what is computed over the trials.
    pub statistic: Statistic,
    /// `comparison` (or `op`).
    pub comparison: Comparison,
    /// `value` in the metric's unit: ms for time metrics, a count for counts, a fraction in
    /// `0..=1` for `zero-share` and `unresolved`. `value-s` (seconds) is stored here in ms.
    pub value: f64,
    /// `source`: where the claim comes from, in words (a document, a wiki page, a ticket).
    pub source: String,
}

/// How a claim compares the measured statistic with its `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `<=`
    AtMost,
    /// `<`
    Below,
    /// `>=`
    AtLeast,
    /// `>`
    Above,
    /// `==`
    Equal,
}

impl Comparison {
    pub const ALL: [Comparison; 5] = [
        Comparison::AtMost,
        Comparison::Below,
        Comparison::AtLeast,
        Comparison::Above,
        Comparison::Equal,
    ];

    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::AtMost => "<=",
            Comparison::Below => "<",
            Comparison::AtLeast => ">=",
            Comparison::Above => ">",
            Comparison::Equal => "==",
        }
    }

    pub fn parse(text: &str) -> Option<Comparison> {
        let text = text.trim();
        Comparison::ALL.into_iter().find(|c| c.symbol() == text)
    }

    /// Whether `measured <op> value` holds. Equality is exact: measured values are whole
    /// milliseconds, whole counts, or shares k/n (which equal the decimal a user writes for
    /// them, both being the nearest double to the same number).
    pub fn holds(self, measured: f64, value: f64) -> bool {
        match self {
            Comparison::AtMost => measured <= value,
            Comparison::Below => measured < value,
            Comparison::AtLeast => measured >= value,
            Comparison::Above => measured > value,
            Comparison::Equal => measured == value,
        }
    }
}

impl Default for SimulationConfig {
    fn default() -> Self {
        SimulationConfig {
            duration_ms: 900_000,
            max_duration_ms: WAIT_FOR_NEWS_MS,
            start: Start::Steady,
            end: TrialEnd::Resolved,
            trials: 100,
            seed: 1,
            release: Release::default(),
            start_spread_ms: 60_000,
            context_start_ms: 3_000,
            context_start_spread_ms: 30_000,
            event_limit: None,
        }
    }
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            latency_ms: 1,
            latency_jitter_ms: 4,
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            application_name: "eureka-server".to_string(),
            eviction_interval_ms: 60_000,
            enable_self_preservation: true,
            renewal_percent_threshold: 0.85,
            expected_client_renewal_interval_s: 30,
            renewal_threshold_update_interval_ms: 900_000,
            response_cache_update_interval_ms: 30_000,
            response_cache_auto_expiration_s: 180,
            use_read_only_response_cache: true,
            sync_when_timestamp_differs: true,
            expected_number_of_clients_sending_renews: 1,
            default_open_for_traffic_count: 1,
            disable_delta: false,
            retention_time_in_ms_in_delta_queue: 180_000,
            delta_retention_timer_interval_ms: 30_000,
            registry_sync_retries: 0,
            registry_sync_retry_wait_ms: 30_000,
            wait_time_in_ms_when_sync_empty: 300_000,
            peer_node_connect_timeout_ms: 200,
            peer_node_read_timeout_ms: 200,
            max_time_for_replication_ms: 30_000,
            max_elements_in_peer_replication_pool: 10_000,
            max_threads_for_peer_replication: 20,
            timer_lateness_ms: 0,
            client: ClientConfig {
                register_with_eureka: false,
                fetch_registry: false,
                ..ClientConfig::default()
            },
        }
    }
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            lease_renewal_interval_s: 30,
            lease_expiration_duration_s: 90,
            registry_fetch_interval_s: 30,
            register_with_eureka: true,
            fetch_registry: true,
            instance_info_replication_interval_s: 30,
            initial_instance_info_replication_interval_s: 40,
            on_demand_update_status_change: true,
            filter_only_up_instances: true,
            should_unregister_on_shutdown: true,
            should_enforce_registration_at_init: false,
            healthcheck_enabled: false,
            disable_delta: false,
            ribbon: RibbonConfig::default(),
            load_balancer: LoadBalancerConfig::default(),
            server_shutdown: None,
            timeout_per_shutdown_phase_ms: 30_000,
            region: "us-east-1".to_string(),
            availability_zones: Vec::new(),
            service_url: Vec::new(),
            prefer_same_zone_eureka: true,
            service_url_poll_interval_s: 300,
            sessioned_client_reconnect_interval_s: 1200,
            retryable_client_quarantine_refresh_percentage: 0.66,
            heartbeat_executor_exponential_back_off_bound: 10,
            cache_refresh_executor_exponential_back_off_bound: 10,
            heartbeat_executor_thread_pool_size: 2,
            cache_refresh_executor_thread_pool_size: 2,
            eureka_server_connect_timeout_s: 5,
            eureka_server_read_timeout_s: 8,
            restclient_enabled: false,
            http_timeouts: [HttpTimeouts::default(); 3],
            endpoints: ResolvedEndpoints::default(),
        }
    }
}

impl Default for RibbonConfig {
    fn default() -> Self {
        RibbonConfig {
            server_list_refresh_interval_ms: 30_000,
            max_auto_retries: 0,
            max_auto_retries_next_server: 1,
            ok_to_retry_on_all_operations: false,
            eager_load: false,
            eureka_notification_updater: false,
            filter_circuit_tripped: true,
            connection_failure_count_threshold: 3,
            circuit_trip_timeout_factor_s: 10,
            circuit_trip_max_timeout_s: 30,
            // Edgware and later (the default Hoxton's); the parser sets the train's with
            // `RibbonConfig::for_release`.
            connect_timeout_ms: 1000,
            read_timeout_ms: 1000,
        }
    }
}

impl RibbonConfig {
    /// The defaults, with the release's Ribbon timeouts (`Release::ribbon_timeouts_ms`, FACTS.md
    /// §8): the train is known only once `[simulation]` is read, so these defaults are resolved
    /// then, before any `ribbon.*` key is applied.
    pub fn for_release(release: Release) -> RibbonConfig {
        let (connect_timeout_ms, read_timeout_ms) = release.ribbon_timeouts_ms();
        RibbonConfig {
            connect_timeout_ms,
            read_timeout_ms,
            ..RibbonConfig::default()
        }
    }
}

impl CallerConfig {
    /// Whether the caller is a Zuul gateway (`http-client = "zuul"`, or `zuul = true`).
    pub fn is_zuul(&self) -> bool {
        self.http_client == HttpClient::Zuul
    }
}

impl Scenario {
    /// The Eureka servers: the `[[peer]]`s, or without any the one standalone server, named
    /// `server.application_name` (the server process's name today) in `defaultZone` with the
    /// `[server]` configuration. Index `k` is `ServerId(k)`.
    pub fn servers(&self) -> std::borrow::Cow<'_, [PeerConfig]> {
        if self.peers.is_empty() {
            std::borrow::Cow::Owned(vec![PeerConfig {
                name: self.server.application_name.clone(),
                zone: DEFAULT_ZONE.to_string(),
                server: self.server.clone(),
            }])
        } else {
            std::borrow::Cow::Borrowed(&self.peers)
        }
    }

    /// How many `[[shutdown]]` tables the file has (what `--set shutdown[i]` can name): a zone
    /// outage is one table and several `shutdowns`. Two tables never name the same zone.
    pub fn shutdown_tables(&self) -> usize {
        let mut zones: Vec<&str> = Vec::new();
        let mut tables = 0;
        for s in &self.shutdowns {
            match &s.zone {
                None => tables += 1,
                Some(z) if !zones.contains(&z.as_str()) => {
                    zones.push(z);
                    tables += 1;
                }
                Some(_) => {}
            }
        }
        tables
    }

    /// The instance id of instance `index` of app `app`, as users write it (`svc-0`).
    pub fn instance_id(&self, app: usize, index: u32) -> String {
        format!("{}-{}", self.apps[app].name, index)
    }
}

#[cfg(test)]
mod tests {
    use super::{FinalStop, Strategy};

    /// `ShutdownRun::on_step` (eureka/shutdown.rs): a kill -15 begins with the SIGTERM; a
    /// waiting strategy reaches its `then` at `Step::Final`; a resumed pause schedules
    /// `Step::Resume` instead and never stops; a kill -9 sends no signal the JVM sees.
    #[test]
    fn a_stop_ends_in_sigterm_only_through_kill_15() {
        use FinalStop::{KeepRunning, Kill9, Kill15};
        for then in [Kill15, Kill9, KeepRunning] {
            assert!(!Strategy::Kill9.ends_in_sigterm(then, false));
            assert!(Strategy::Kill15.ends_in_sigterm(then, false));
            assert!(!Strategy::Pause.ends_in_sigterm(then, true));
            for waiting in [Strategy::Pause, Strategy::ServiceRegistry] {
                assert_eq!(waiting.ends_in_sigterm(then, false), then == Kill15);
            }
        }
    }

    /// The wait counts only for the waiting strategies and a `/resume` only for a pause.
    #[test]
    fn the_planned_steps_end_at_the_wait_or_the_resume() {
        assert_eq!(Strategy::Kill9.planned_ms(60_000, Some(30_000)), 0);
        assert_eq!(Strategy::Kill15.planned_ms(60_000, None), 0);
        assert_eq!(Strategy::Pause.planned_ms(60_000, None), 60_000);
        assert_eq!(Strategy::Pause.planned_ms(60_000, Some(30_000)), 30_000);
        assert_eq!(
            Strategy::ServiceRegistry.planned_ms(60_000, Some(30_000)),
            60_000
        );
    }
}
