//! The validated, typed scenario: what the simulation reads.
//!
//! Raw TOML (with Spring property names, relaxed binding, `--set` overrides) becomes these types in
//! `scenario::parse`; nothing here is optional or unchecked. Every default is the Eureka / Ribbon /
//! Spring Cloud default named in FACTS.md, and every time is integer milliseconds.

use super::release::Release;

/// A whole scenario, ready to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The scenario's name (its file stem); used for the default output folder.
    pub name: String,
    pub simulation: SimulationConfig,
    pub network: NetworkConfig,
    pub server: ServerConfig,
    pub apps: Vec<AppConfig>,
    pub callers: Vec<CallerConfig>,
    pub shutdowns: Vec<ShutdownConfig>,
    /// Things that are allowed but probably not meant (e.g. `wait-s` on a kill-9), shown to the user.
    pub warnings: Vec<String>,
}

/// `[simulation]`: the run itself and the modelling assumptions that are not Spring properties.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulationConfig {
    /// `duration-s`: simulated time per trial (default 900 s).
    pub duration_ms: u64,
    /// `trials` (default 100).
    pub trials: u32,
    /// `seed` (default 1).
    pub seed: u64,
    /// `release` (default Hoxton) and optional `eureka-version`.
    pub release: Release,
    /// `start-spread-s`: every app instance and caller process starts at a uniformly random
    /// instant in `[0, start-spread)` (default 60 s).
    pub start_spread_ms: u64,
    /// `context-start-ms`: least time from the Eureka client's scheduled tasks starting to the
    /// web server being ready (Spring Cloud registers then, FACTS.md §5.1; default 3000 ms).
    pub context_start_ms: u64,
    /// `context-start-spread-ms`: each process adds a uniform `[0, x]` ms (default 30000), so
    /// registrations and the callers' first requests fall at random phases of the timers.
    pub context_start_spread_ms: u64,
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
    /// `timer-lateness-ms` (model, default 0): each run of a server `java.util.Timer` wakes up a
    /// uniform `[0, x]` ms late, which fixed-delay timers carry forward.
    pub timer_lateness_ms: u64,
    /// The server's embedded Eureka client (`eureka.client.*`, `eureka.instance.*` in `[server]`).
    /// Its defaults differ from an app's: `fetch-registry` and `register-with-eureka` are false,
    /// the standalone setup of seed 003.
    pub client: ClientConfig,
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
    /// Global `ribbon.*` keys.
    pub ribbon: RibbonConfig,
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
}

/// One `[[app]]`: a service with identical instances `<name>-0 .. <name>-(n-1)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AppConfig {
    pub name: String,
    pub instances: u32,
    pub client: ClientConfig,
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

/// One `[[shutdown]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShutdownConfig {
    /// The instance id as written (`svc-0`).
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
}

/// How a paused / taken-out-of-service instance finally stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalStop {
    Kill15,
    Kill9,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        SimulationConfig {
            duration_ms: 900_000,
            trials: 100,
            seed: 1,
            release: Release::default(),
            start_spread_ms: 60_000,
            context_start_ms: 3_000,
            context_start_spread_ms: 30_000,
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
            ribbon: RibbonConfig::default(),
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
        }
    }
}

impl Scenario {
    /// The instance id of instance `index` of app `app`, as users write it (`svc-0`).
    pub fn instance_id(&self, app: usize, index: u32) -> String {
        format!("{}-{}", self.apps[app].name, index)
    }
}
