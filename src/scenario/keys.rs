//! Every key a scenario accepts, defined once: spelling, value kind, default, meaning, and how it
//! is applied to the typed [`Scenario`](super::Scenario).
//!
//! The parser binds keys through [`DEFS`], and [`key_catalogue`] (the docs/keys.md table and the `keys`
//! subcommand) is generated from it, so the documentation cannot drift from what is accepted.
//!
//! Spelling: Spring properties keep their full Spring names and bind the Spring Boot "relaxed" way
//! (each dotted segment compared case-insensitively, ignoring `-` and `_`, see [`canonical`]); the
//! model's own keys (`duration-s`) bind the same way. Ribbon's own keys are read by Archaius, which
//! is case-sensitive, so they must be spelled exactly (`ribbon.ServerListRefreshInterval`), and
//! they can also be given per called app as `<app>.ribbon.<Key>`. The circuit breaker's three
//! `niws.loadbalancer.default.<Key>` keys are read per client as well, by Archaius under the
//! client's name: `niws.loadbalancer.<app>.<Key>`, spelt exactly ([`KeyDef::niws_leaf`]).

mod value;

pub(super) use value::{Kind, Problem, Raw, ShutdownRef, Val};

use super::metric::{Metric, Statistic};
use super::model::{
    ClientConfig, Comparison, DEFAULT_ZONE, FinalStop, HttpClient, HttpMethod, NetworkConfig,
    RibbonConfig, ServerConfig, ShutdownConfig, SimulationConfig, Start, Strategy, TrialEnd,
};

/// A table of the scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Simulation,
    Network,
    Server,
    Clients,
    Peer,
    App,
    Caller,
    Shutdown,
    Claim,
    Restart,
    Deploy,
    Fault,
}

impl Section {
    pub(super) const ALL: [Section; 12] = [
        Section::Simulation,
        Section::Network,
        Section::Server,
        Section::Clients,
        Section::Peer,
        Section::App,
        Section::Caller,
        Section::Shutdown,
        Section::Claim,
        Section::Restart,
        Section::Deploy,
        Section::Fault,
    ];

    /// The table's name in the file (`app` for `[[app]]`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Section::Simulation => "simulation",
            Section::Network => "network",
            Section::Server => "server",
            Section::Clients => "clients",
            Section::Peer => "peer",
            Section::App => "app",
            Section::Caller => "caller",
            Section::Shutdown => "shutdown",
            Section::Claim => "claim",
            Section::Restart => "restart",
            Section::Deploy => "deploy",
            Section::Fault => "fault",
        }
    }

    /// `[[peer]]`, `[[app]]`, `[[caller]]`, `[[shutdown]]`, `[[claim]]`, `[[restart]]`,
    /// `[[deploy]]` and `[[fault]]` are arrays of tables.
    pub(super) fn is_array(self) -> bool {
        matches!(
            self,
            Section::Peer
                | Section::App
                | Section::Caller
                | Section::Shutdown
                | Section::Claim
                | Section::Restart
                | Section::Deploy
                | Section::Fault
        )
    }

    /// The header as written: `[server]`, `[[app]]`.
    pub(super) fn header(self) -> String {
        if self.is_array() {
            format!("[[{}]]", self.name())
        } else {
            format!("[{}]", self.name())
        }
    }

    pub(super) fn by_name(name: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether this table takes the keys defined for `keys`: its own, the client keys in every
    /// table that describes a process with a Eureka client, and in `[[peer]]` the `[server]` keys
    /// (the peer's overrides of `[server]`).
    pub(super) fn accepts(self, keys: Section) -> bool {
        keys == self
            || (keys == Section::Clients
                && matches!(
                    self,
                    Section::Server | Section::Peer | Section::App | Section::Caller
                ))
            || (keys == Section::Server && self == Section::Peer)
    }
}

/// How a key's spelling is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Binding {
    /// Spring Boot relaxed binding (and the model's own keys): see [`canonical`].
    Relaxed,
    /// A Ribbon (Archaius) key: exact spelling; also accepted per called app as
    /// `<app>.ribbon.<Key>`.
    Ribbon,
    /// A Spring `Map<String, String>` property (`eureka.client.service-url.<zone>`): the key's
    /// prefix binds relaxed, then exactly one more segment, the map key, kept as written (Spring
    /// Boot does not relax map keys, so `default-zone` is not `defaultZone`).
    MapKey,
}

/// The legacy name of `eureka.instance.registry.default-open-for-traffic-count`. Spring Cloud
/// Netflix's `InstanceRegistryProperties` (prefix `eureka.instance.registry`) declares the field
/// `@Value("${eureka.server.defaultOpenForTrafficCount:1}") // for backwards compatibility`:
/// `@Value` resolves that exact name (no relaxed binding), and the `@ConfigurationProperties`
/// binding of the modern key runs after the field injection, so it wins when both are set.
pub(super) const LEGACY_OPEN_FOR_TRAFFIC_COUNT: &str = "eureka.server.defaultOpenForTrafficCount";

/// Aliases read by exact name only (`@Value`): another spelling is not the key
/// (`parse/resolve.rs` refuses it in a scenario file and ignores it in a Spring file, as a
/// server does).
pub(super) const EXACT_ALIASES: [&str; 1] = [LEGACY_OPEN_FOR_TRAFFIC_COUNT];

/// `eureka.client.service-url.<zone>`: the Eureka servers of a zone.
pub(super) const SERVICE_URL: &str = "eureka.client.service-url.<zone>";
/// `eureka.client.availability-zones.<region>`: the zones of a region.
pub(super) const AVAILABILITY_ZONES: &str = "eureka.client.availability-zones.<region>";

/// The `[[app]]` keys before the required ones are checked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AppDraft {
    pub name: String,
    pub instances: u32,
    pub service_time_ms: u64,
    /// `zones` as written (empty: not set).
    pub zones: Vec<String>,
}

/// The `[[peer]]` table's own keys before `name` is checked (its `[server]` and client keys go
/// straight into its `ServerConfig`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PeerDraft {
    pub name: String,
    pub zone: String,
}

impl Default for PeerDraft {
    fn default() -> Self {
        PeerDraft {
            name: String::new(),
            zone: DEFAULT_ZONE.to_string(),
        }
    }
}

/// The `[[caller]]` keys before the required ones are checked and `calls` is resolved.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CallerDraft {
    pub name: String,
    pub calls: Vec<String>,
    pub rate_per_s: f64,
    pub method: HttpMethod,
    pub fixed_rate: bool,
    pub http_client: Option<HttpClient>,
    pub zuul: Option<bool>,
    pub spring_retry: bool,
    pub zuul_retryable: Option<bool>,
    pub hystrix_timeout_ms: Option<u64>,
}

/// The `[[shutdown]]` keys before the required ones are checked and `instance` (or `zone`) is
/// resolved.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ShutdownDraft {
    /// `instance` as written; exactly one of it and `zone` is given.
    pub instance: Option<String>,
    /// `zone` as written: a zone outage (`parse/zone.rs`).
    pub zone: Option<String>,
    pub at_ms: u64,
    pub strategy: Strategy,
    pub wait_ms: u64,
    pub then: FinalStop,
    pub sigterm_reaches_jvm: bool,
    pub termination_grace_ms: u64,
    pub resume_ms: Option<u64>,
    pub cancel_override: bool,
    pub prestop_ms: u64,
    /// `host` as written: `None` = the default (`stays` for an instance, `vanishes` for a
    /// zone outage).
    pub host_vanishes: Option<bool>,
}

/// Here rather than in `model.rs`, beside the defaults it reads, so that `model` does not import
/// `keys` (which imports `model`).
impl ShutdownConfig {
    /// A shutdown of instance `index` of app `app` with every optional `[[shutdown]]` key at its
    /// default, as a `[[deploy]]` batch stops its old instances.
    pub fn with_defaults(
        instance: String,
        (app, index): (usize, u32),
        at_ms: u64,
        strategy: Strategy,
        (wait_ms, then): (u64, FinalStop),
    ) -> ShutdownConfig {
        let d = ShutdownDraft::default();
        ShutdownConfig {
            instance,
            app,
            index,
            at_ms,
            strategy,
            wait_ms,
            then,
            sigterm_reaches_jvm: d.sigterm_reaches_jvm,
            termination_grace_ms: d.termination_grace_ms,
            resume_ms: d.resume_ms,
            cancel_override: d.cancel_override,
            prestop_ms: d.prestop_ms,
            host_vanishes: d.host_vanishes.unwrap_or(false),
            zone: None,
        }
    }
}

/// The `[[restart]]` keys before the required ones are checked and `instance` is resolved.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct RestartDraft {
    pub instance: String,
    pub at_ms: Option<u64>,
    pub down_ms: Option<u64>,
    pub new_instance_id: bool,
}

/// The `[[fault]]` keys before the kind's keys are checked and its names resolved. Every key is
/// optional here: which ones a kind needs or refuses is checked in `parse/faults.rs`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct FaultDraft {
    /// `partition`, `pause`, `server-restart` or `crash`.
    pub kind: String,
    pub at_ms: u64,
    pub for_ms: Option<u64>,
    pub down_ms: Option<u64>,
    /// The names as written.
    pub between: Option<Vec<String>>,
    pub target: Option<String>,
}

/// The `[[deploy]]` keys before `app` is resolved and the batch size checked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DeployDraft {
    pub app: String,
    pub at_ms: u64,
    pub strategy: Strategy,
    pub wait_ms: u64,
    pub then: FinalStop,
    pub startup_ms: Option<u64>,
    pub batch_size: u32,
    pub interval_ms: u64,
}

impl Default for DeployDraft {
    fn default() -> Self {
        DeployDraft {
            app: String::new(),
            at_ms: 0,
            strategy: Strategy::Kill15,
            wait_ms: 0,
            then: FinalStop::Kill15,
            startup_ms: None,
            batch_size: 1,
            interval_ms: 0,
        }
    }
}

/// The `[[claim]]` keys before the required ones are checked, `shutdown` is resolved and the
/// threshold is taken from `value` or `value-s`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ClaimDraft {
    pub name: Option<String>,
    pub shutdown: ShutdownRef,
    pub metric: Metric,
    pub statistic: Statistic,
    pub comparison: Comparison,
    pub value: Option<f64>,
    pub value_s: Option<f64>,
    pub source: String,
}

impl Default for ClaimDraft {
    fn default() -> Self {
        ClaimDraft {
            name: None,
            shutdown: ShutdownRef::Index(0),
            metric: Metric::ExposureMs,
            statistic: Statistic::Max,
            comparison: Comparison::AtMost,
            value: None,
            value_s: None,
            source: String::new(),
        }
    }
}

impl Default for AppDraft {
    fn default() -> Self {
        AppDraft {
            name: String::new(),
            instances: 1,
            service_time_ms: 0,
            zones: Vec::new(),
        }
    }
}

impl Default for CallerDraft {
    fn default() -> Self {
        CallerDraft {
            name: String::new(),
            calls: Vec::new(),
            rate_per_s: 20.0,
            method: HttpMethod::Get,
            fixed_rate: false,
            http_client: None,
            zuul: None,
            spring_retry: false,
            zuul_retryable: None,
            hystrix_timeout_ms: None,
        }
    }
}

impl Default for ShutdownDraft {
    fn default() -> Self {
        ShutdownDraft {
            instance: None,
            zone: None,
            at_ms: 0,
            strategy: Strategy::Kill9,
            wait_ms: 0,
            then: FinalStop::Kill15,
            sigterm_reaches_jvm: true,
            termination_grace_ms: 30_000,
            resume_ms: None,
            cancel_override: true,
            prestop_ms: 0,
            host_vanishes: None,
        }
    }
}

/// How a checked value lands in the typed scenario. The variant also decides the key's table:
/// `Client` and `Ribbon` keys are the `[clients]` keys.
#[derive(Debug, Clone, Copy)]
pub(super) enum Apply {
    Simulation(fn(&mut SimulationConfig, &Val)),
    Network(fn(&mut NetworkConfig, &Val)),
    Server(fn(&mut ServerConfig, &Val)),
    Client(fn(&mut ClientConfig, &Val)),
    /// A [`Binding::MapKey`] client key: the map key as written, and the value.
    ClientMap(fn(&mut ClientConfig, &str, &Val)),
    Ribbon(fn(&mut RibbonConfig, &Val)),
    Peer(fn(&mut PeerDraft, &Val)),
    App(fn(&mut AppDraft, &Val)),
    Caller(fn(&mut CallerDraft, &Val)),
    Shutdown(fn(&mut ShutdownDraft, &Val)),
    Claim(fn(&mut ClaimDraft, &Val)),
    Restart(fn(&mut RestartDraft, &Val)),
    Deploy(fn(&mut DeployDraft, &Val)),
    Fault(fn(&mut FaultDraft, &Val)),
}

impl Apply {
    pub(super) fn section(self) -> Section {
        match self {
            Apply::Simulation(_) => Section::Simulation,
            Apply::Network(_) => Section::Network,
            Apply::Server(_) => Section::Server,
            Apply::Client(_) | Apply::ClientMap(_) | Apply::Ribbon(_) => Section::Clients,
            Apply::Peer(_) => Section::Peer,
            Apply::App(_) => Section::App,
            Apply::Caller(_) => Section::Caller,
            Apply::Shutdown(_) => Section::Shutdown,
            Apply::Claim(_) => Section::Claim,
            Apply::Restart(_) => Section::Restart,
            Apply::Deploy(_) => Section::Deploy,
            Apply::Fault(_) => Section::Fault,
        }
    }
}

/// One accepted key.
#[derive(Debug)]
pub(super) struct KeyDef {
    /// The spelling shown to users (kebab case for Spring keys, Ribbon's own for Ribbon keys).
    pub key: &'static str,
    /// Other names for the same property (older Spring Cloud names).
    pub aliases: &'static [&'static str],
    pub binding: Binding,
    pub kind: Kind,
    /// Required keys have no default; a table without one is an error.
    pub required: bool,
    /// The default as documented; `ScenarioConfig` `Default` impls hold the value itself.
    pub default: &'static str,
    pub meaning: &'static str,
    pub apply: Apply,
}

impl KeyDef {
    pub(super) fn section(&self) -> Section {
        self.apply.section()
    }

    /// A Ribbon key's name after `ribbon.` (`ServerListRefreshInterval`).
    pub(super) fn ribbon_leaf(&self) -> Option<&'static str> {
        match self.binding {
            Binding::Ribbon => self.key.strip_prefix("ribbon."),
            Binding::Relaxed | Binding::MapKey => None,
        }
    }

    /// A circuit-breaker key's name after `niws.loadbalancer.default.`
    /// (`circuitTripTimeoutFactorSeconds`): the keys also read per Ribbon client as
    /// `niws.loadbalancer.<client>.<Key>`.
    ///
    /// Ribbon 2.3.0 `LoadBalancerStats#createServerStats` builds every server's stats with
    /// `new ServerStats(this)`, and `ServerStats(LoadBalancerStats)` takes its three settings from
    /// `LoadBalancerStats#getConnectionFailureCountThreshold`, `#getCircuitTrippedTimeoutFactor`
    /// and `#getCircuitTripMaxTimeoutSeconds`: `CachedDynamicIntProperty("niws.loadbalancer." +
    /// name + ".<Key>", 3 / 10 / 30)`, where `name` is the client's
    /// (`LoadBalancerStats#initWithNiwsConfig`: `clientConfig.getClientName()`;
    /// `BaseLoadBalancer(IClientConfig, IRule, IPing)` creates it from the config). Spring Cloud
    /// Netflix 2.2.x names the client after the called service id (`RibbonClientConfiguration`'s
    /// `@RibbonClientName`, `ribbon.client.name` of `SpringClientFactory`'s child context) and
    /// builds `ZoneAwareLoadBalancer(config, rule, ping, ...)`. The `default` spelling is read
    /// only by `ServerStats()` (no argument) and by a `LoadBalancerStats` named `default`
    /// (`BaseLoadBalancer()`), never as a fallback of the per-client key: the per-client value
    /// wins whatever `default` says.
    pub(super) fn niws_leaf(&self) -> Option<&'static str> {
        self.key.strip_prefix(NIWS_DEFAULT)
    }

    /// A map key's prefix, before its free segment (`eureka.client.service-url`).
    pub(super) fn map_prefix(&self) -> Option<&'static str> {
        match self.binding {
            Binding::MapKey => self.key.rsplit_once('.').map(|(prefix, _)| prefix),
            Binding::Relaxed | Binding::Ribbon => None,
        }
    }
}

/// The prefix of the circuit breaker's keys in the spelling the model applies to every Ribbon
/// client (see [`KeyDef::niws_leaf`]).
const NIWS_DEFAULT: &str = "niws.loadbalancer.default.";

const SECONDS: Kind = Kind::seconds(1, 86_400);
const MILLIS: Kind = Kind::millis(1, 86_400_000);
const RETRIES: Kind = Kind::count(0, 100);
/// Seven days: long enough for any propagation question, short enough to finish.
const MAX_DURATION_S: u64 = 604_800;
/// `max-duration-s`: a week plus the default day of waiting.
const MAX_CAP_S: u64 = MAX_DURATION_S + 86_400;

const fn relaxed(
    key: &'static str,
    kind: Kind,
    default: &'static str,
    meaning: &'static str,
    apply: Apply,
) -> KeyDef {
    KeyDef {
        key,
        aliases: &[],
        binding: Binding::Relaxed,
        kind,
        required: false,
        default,
        meaning,
        apply,
    }
}

const fn required(key: &'static str, kind: Kind, meaning: &'static str, apply: Apply) -> KeyDef {
    KeyDef {
        key,
        aliases: &[],
        binding: Binding::Relaxed,
        kind,
        required: true,
        default: "(required)",
        meaning,
        apply,
    }
}

const fn map_key(
    key: &'static str,
    default: &'static str,
    meaning: &'static str,
    apply: fn(&mut ClientConfig, &str, &Val),
) -> KeyDef {
    KeyDef {
        key,
        aliases: &[],
        binding: Binding::MapKey,
        kind: Kind::List,
        required: false,
        default,
        meaning,
        apply: Apply::ClientMap(apply),
    }
}

/// Sets `map[key]` (a map key as written) to `value`, in place if the key is there.
pub(super) fn set_map(map: &mut Vec<(String, Vec<String>)>, key: &str, value: Vec<String>) {
    match map.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value,
        None => map.push((key.to_string(), value)),
    }
}

/// `Kind::Float` in `(0, 1]`.
const FRACTION: Kind = Kind::Float {
    min: 0.0,
    above_min: true,
    max: 1.0,
};

const fn ribbon(
    key: &'static str,
    kind: Kind,
    default: &'static str,
    meaning: &'static str,
    apply: fn(&mut RibbonConfig, &Val),
) -> KeyDef {
    KeyDef {
        key,
        aliases: &[],
        binding: Binding::Ribbon,
        kind,
        required: false,
        default,
        meaning,
        apply: Apply::Ribbon(apply),
    }
}

/// Every key, grouped by table in file order. Within a table, keys are applied in this order, so
/// `release` comes before `eureka-version` (which pins the version the train chose).
pub(super) static DEFS: &[KeyDef] = &[
    // [simulation]
    relaxed(
        "duration-s",
        Kind::seconds(1, MAX_DURATION_S),
        "900",
        "Simulated time per trial, in seconds; every shutdown must be over before it ends.",
        Apply::Simulation(|c, v| c.duration_ms = v.secs_as_ms()),
    ),
    relaxed(
        "max-duration-s",
        Kind::seconds(1, MAX_CAP_S),
        "a day after the last planned action",
        "Longest simulated time per trial: from duration-s on, a trial goes on until every \
         stopped instance has left every view, and stops here at the latest (reporting why it is \
         still listed). At least duration-s.",
        Apply::Simulation(|c, v| c.max_duration_ms = v.secs_as_ms()),
    ),
    relaxed(
        "trials",
        Kind::count(1, 1_000_000),
        "100",
        "Number of independent trials.",
        Apply::Simulation(|c, v| c.trials = v.count()),
    ),
    relaxed(
        "seed",
        Kind::count(0, u64::MAX),
        "1",
        "Master seed; every trial's random streams derive from it. Above 2^63-1, write it as a \
         string of digits.",
        Apply::Simulation(|c, v| c.seed = v.int()),
    ),
    relaxed(
        "release",
        Kind::Train,
        "Hoxton",
        "Spring Cloud release train, optionally with a service release (Hoxton.SR9, \
         2020.0.3): decides the Eureka and spring-cloud-commons versions and so which rules \
         apply (FACTS.md §0.1, §0.2, §7, §8). A bare train means its last service release.",
        Apply::Simulation(|c, v| {
            if let Val::Train(r) = v {
                c.release = *r;
            }
        }),
    ),
    relaxed(
        "eureka-version",
        Kind::Version,
        "the train's",
        "Pins the Eureka version instead of the one the train ships (e.g. 1.9.16).",
        Apply::Simulation(|c, v| {
            if let Val::Version(e) = v {
                c.release.eureka = *e;
            }
        }),
    ),
    relaxed(
        "spring-boot",
        Kind::Version,
        "the train's",
        "Pins the Spring Boot version of the applications instead of the one the release is \
         built with (e.g. 2.2.13 on Hoxton.SR9): decides when the web server stops on SIGTERM \
         and /pause, and whether graceful shutdown exists and is the default (FACTS.md §14).",
        Apply::Simulation(|c, v| {
            if let Val::Version(b) = v {
                c.release.boot = *b;
            }
        }),
    ),
    relaxed(
        "start",
        Kind::Choice(&["steady", "cold"]),
        "steady",
        "`steady`: at time 0 the fleet has been up for a long time: every process registered, \
         its lease renewed, the caches and balancer lists full, and every periodic timer \
         (heartbeat, fetch, replicator, Ribbon refresh, LoadBalancer cache, eviction, renews \
         roll, threshold update) at an independent uniform phase. `cold`: the server opens in \
         the first eviction period and every process starts within start-spread-s after it, \
         which ties some phases to each other for hours (start-up questions).",
        Apply::Simulation(|c, v| {
            c.start = if v.text() == "cold" {
                Start::Cold
            } else {
                Start::Steady
            }
        }),
    ),
    relaxed(
        "preset",
        Kind::Choice(&crate::scenario::presets::PRESET_NAMES),
        "(none)",
        "A real-world configuration to start from (`eureka-sim presets` lists them with their \
         sources): its settings go under the scenario's, so spring-config files, the tables' own \
         keys and --set override them.",
        // Read before binding (parse::preset); nothing left to apply.
        Apply::Simulation(|_, _| {}),
    ),
    relaxed(
        "spring-profiles",
        Kind::List,
        "(each file's spring.profiles.active)",
        "The active Spring profiles (as spring.profiles.active) for every spring-config file: \
         a document whose spring.config.activate.on-profile (or spring.profiles) expression \
         holds for them applies, later documents overriding earlier ones.",
        // Read before binding (parse::spring); nothing left to apply.
        Apply::Simulation(|_, _| {}),
    ),
    relaxed(
        "env-file",
        Kind::List,
        "(none)",
        "Environment variables for every process's Spring environment (as env-file in each \
         table that takes spring-config, before the table's own); `env = { NAME = \"value\" }` \
         beside it gives them in the scenario. The machine's environment is never read.",
        // Read before binding (parse::spring); nothing left to apply.
        Apply::Simulation(|_, _| {}),
    ),
    relaxed(
        "end",
        Kind::Choice(&["resolved", "duration"]),
        "resolved",
        "`resolved`: a trial ends as soon as nothing it measures can change any more (every \
         planned action done, every stopped instance gone from every view, no live instance \
         missing from a caller's list, no deploy dip open), at the latest at duration-s; the \
         outcomes are those of `duration` apart from trial_end_ms. `duration`: the full \
         simulation to duration-s (the reference). Either way a trial with a stopped instance \
         still listed at duration-s runs on until it leaves, up to max-duration-s.",
        Apply::Simulation(|c, v| {
            c.end = if v.text() == "duration" {
                TrialEnd::Duration
            } else {
                TrialEnd::Resolved
            }
        }),
    ),
    relaxed(
        "start-spread-s",
        Kind::seconds(0, 86_400),
        "60",
        "Every app instance and caller starts at a uniformly random instant in \
         [0, start-spread-s) after the server opened (itself at a random instant in the first \
         eviction period, so timer phases are random); 0 starts them all at once.",
        Apply::Simulation(|c, v| c.start_spread_ms = v.secs_as_ms()),
    ),
    relaxed(
        "context-start-ms",
        Kind::millis(0, 600_000),
        "3000",
        "Least time from the Eureka client's scheduled tasks starting to the web server being \
         ready, when Spring Cloud registers and callers start sending (FACTS.md §5.1).",
        Apply::Simulation(|c, v| c.context_start_ms = v.int()),
    ),
    relaxed(
        "context-start-spread-ms",
        Kind::millis(0, 600_000),
        "30000",
        "Each process adds a uniform [0, x] ms to context-start-ms, so web servers (and the \
         callers' lazily created Ribbon load balancers) start at random phases of the \
         Eureka timers.",
        Apply::Simulation(|c, v| c.context_start_spread_ms = v.int()),
    ),
    // [network]
    relaxed(
        "latency-ms",
        Kind::millis(0, 60_000),
        "1",
        "Fixed one-way latency of every REST call.",
        Apply::Network(|c, v| c.latency_ms = v.int()),
    ),
    relaxed(
        "latency-jitter-ms",
        Kind::millis(0, 60_000),
        "4",
        "Extra one-way latency, uniform in [0, latency-jitter-ms], drawn for each direction.",
        Apply::Network(|c, v| c.latency_jitter_ms = v.int()),
    ),
    // [server]
    relaxed(
        "spring.application.name",
        Kind::Name,
        "eureka-server",
        "The Eureka server's application name (its instance id when it registers); no [[app]] \
         or [[caller]] may use it.",
        Apply::Server(|c, v| c.application_name = v.text()),
    ),
    relaxed(
        "eureka.server.eviction-interval-timer-in-ms",
        MILLIS,
        "60000",
        "Period of the eviction task that removes expired leases (FACTS.md §2.1).",
        Apply::Server(|c, v| c.eviction_interval_ms = v.int()),
    ),
    relaxed(
        "eureka.server.enable-self-preservation",
        Kind::Bool,
        "true",
        "Stop expiring leases while renewals are below the threshold (FACTS.md §2.2).",
        Apply::Server(|c, v| c.enable_self_preservation = v.flag()),
    ),
    relaxed(
        "eureka.server.renewal-percent-threshold",
        Kind::Float {
            min: 0.0,
            above_min: true,
            max: 1.0,
        },
        "0.85",
        "Fraction of the expected renewals below which self-preservation stops eviction \
         (FACTS.md §2.3).",
        Apply::Server(|c, v| c.renewal_percent_threshold = v.float()),
    ),
    relaxed(
        "eureka.server.expected-client-renewal-interval-seconds",
        SECONDS,
        "30",
        "Renewal interval the threshold assumes (Eureka >= 1.9.4; FACTS.md §2.3).",
        Apply::Server(|c, v| c.expected_client_renewal_interval_s = v.int()),
    ),
    relaxed(
        "eureka.server.renewal-threshold-update-interval-ms",
        MILLIS,
        "900000",
        "Period of the task that recomputes the renewal threshold (FACTS.md §2.4).",
        Apply::Server(|c, v| c.renewal_threshold_update_interval_ms = v.int()),
    ),
    relaxed(
        "eureka.server.response-cache-update-interval-ms",
        MILLIS,
        "30000",
        "Period at which the read-only response cache copies the read-write cache (FACTS.md §3).",
        Apply::Server(|c, v| c.response_cache_update_interval_ms = v.int()),
    ),
    relaxed(
        "eureka.server.response-cache-auto-expiration-in-seconds",
        SECONDS,
        "180",
        "Time after which a read-write response cache entry expires (FACTS.md §3).",
        Apply::Server(|c, v| c.response_cache_auto_expiration_s = v.int()),
    ),
    relaxed(
        "eureka.server.use-read-only-response-cache",
        Kind::Bool,
        "true",
        "Serve registry fetches from the read-only response cache (FACTS.md §3).",
        Apply::Server(|c, v| c.use_read_only_response_cache = v.flag()),
    ),
    relaxed(
        "eureka.server.sync-when-timestamp-differs",
        Kind::Bool,
        "true",
        "Answer a renew whose dirty timestamp is newer than the server's with 404, so the client \
         registers again (FACTS.md §5.3).",
        Apply::Server(|c, v| c.sync_when_timestamp_differs = v.flag()),
    ),
    KeyDef {
        aliases: &["eureka.instance.registry.expected-number-of-renews-per-min"],
        ..relaxed(
            "eureka.instance.registry.expected-number-of-clients-sending-renews",
            Kind::count(0, 1_000_000),
            "1",
            "Expected-client count Spring Cloud's InstanceRegistry starts with (FACTS.md §2.5); \
             Dalston-Finchley name: eureka.instance.registry.expected-number-of-renews-per-min.",
            Apply::Server(|c, v| c.expected_number_of_clients_sending_renews = v.count()),
        )
    },
    KeyDef {
        aliases: &[LEGACY_OPEN_FOR_TRAFFIC_COUNT],
        ..relaxed(
            "eureka.instance.registry.default-open-for-traffic-count",
            Kind::count(0, 1_000_000),
            "1",
            "Count Spring Cloud passes to openForTraffic when the start-up sync found no \
             instances (FACTS.md §2.5); legacy name, exact spelling only: \
             eureka.server.defaultOpenForTrafficCount.",
            Apply::Server(|c, v| c.default_open_for_traffic_count = v.count()),
        )
    },
    relaxed(
        "eureka.server.disable-delta",
        Kind::Bool,
        "false",
        "Answer GET /apps/delta with 403, so clients fall back to full fetches (FACTS.md §4).",
        Apply::Server(|c, v| c.disable_delta = v.flag()),
    ),
    relaxed(
        "eureka.server.retention-time-in-m-s-in-delta-queue",
        MILLIS,
        "180000",
        "How long a change stays in the recently-changed queue that deltas are built from; with \
         the retention timer an item lives retention to retention + timer interval (FACTS.md §4).",
        Apply::Server(|c, v| c.retention_time_in_ms_in_delta_queue = v.int()),
    ),
    relaxed(
        "eureka.server.delta-retention-timer-interval-in-ms",
        MILLIS,
        "30000",
        "Period of the task that drops expired items from the recently-changed queue (FACTS.md \
         §4).",
        Apply::Server(|c, v| c.delta_retention_timer_interval_ms = v.int()),
    ),
    relaxed(
        "eureka.server.registry-sync-retries",
        Kind::count(0, 0),
        "0",
        "Start-up syncs (copies of the embedded client's registry) tried while they find no \
         instance: EurekaServerConfigBean#registrySyncRetries is 0, so a Spring Cloud server \
         never syncs and opens empty (Netflix's eureka.numberRegistrySyncRetries is 5; FACTS.md \
         §2.5, §2.7). Only 0 is simulated: the sync itself (PeerAwareInstanceRegistryImpl\
         #syncUp) is not, so other values are refused.",
        Apply::Server(|c, v| c.registry_sync_retries = v.count()),
    ),
    relaxed(
        "eureka.server.registry-sync-retry-wait-ms",
        MILLIS,
        "30000",
        "Sleep before each start-up sync after the first (EurekaServerConfigBean\
         #registrySyncRetryWaitMs; PeerAwareInstanceRegistryImpl#syncUp; FACTS.md §2.7); no \
         effect while registry-sync-retries is 0.",
        Apply::Server(|c, v| c.registry_sync_retry_wait_ms = v.int()),
    ),
    relaxed(
        "eureka.server.wait-time-in-ms-when-sync-empty",
        Kind::millis(0, 86_400_000),
        "300000",
        "How long a server that opened with an effective count of 0 answers GET /apps and \
         /apps/delta with 403 (EurekaServerConfigBean#waitTimeInMsWhenSyncEmpty; \
         PeerAwareInstanceRegistryImpl#shouldAllowAccess; FACTS.md §2.5, §2.7).",
        Apply::Server(|c, v| c.wait_time_in_ms_when_sync_empty = v.int()),
    ),
    relaxed(
        "eureka.server.peer-node-connect-timeout-ms",
        MILLIS,
        "200",
        "Connect timeout of a replication batch to a peer (EurekaServerConfigBean\
         #peerNodeConnectTimeoutMs; Netflix's default 1000; FACTS.md §10).",
        Apply::Server(|c, v| c.peer_node_connect_timeout_ms = v.int()),
    ),
    relaxed(
        "eureka.server.peer-node-read-timeout-ms",
        MILLIS,
        "200",
        "Read timeout of a replication batch to a peer: a slower reply is a congestion, retried \
         (EurekaServerConfigBean#peerNodeReadTimeoutMs; Netflix's default 5000; FACTS.md §10).",
        Apply::Server(|c, v| c.peer_node_read_timeout_ms = v.int()),
    ),
    relaxed(
        "eureka.server.max-time-for-replication",
        MILLIS,
        "30000",
        "How long a replicated cancel or status change may wait to be sent before it is dropped \
         (EurekaServerConfigBean#maxTimeForReplication; PeerEurekaNode#cancel; FACTS.md §10); a \
         register or heartbeat expires after the instance's renewal interval.",
        Apply::Server(|c, v| c.max_time_for_replication_ms = v.int()),
    ),
    relaxed(
        "eureka.server.max-elements-in-peer-replication-pool",
        Kind::count(1, 1_000_000),
        "10000",
        "Replication tasks pending per peer; when full the oldest is dropped \
         (EurekaServerConfigBean#maxElementsInPeerReplicationPool; \
         AcceptorExecutor#appendTaskHolder; FACTS.md §10).",
        Apply::Server(|c, v| c.max_elements_in_peer_replication_pool = v.count()),
    ),
    relaxed(
        "eureka.server.max-threads-for-peer-replication",
        Kind::count(1, 1_000),
        "20",
        "Replication batches in flight per peer (EurekaServerConfigBean\
         #maxThreadsForPeerReplication; TaskExecutors; FACTS.md §10).",
        Apply::Server(|c, v| c.max_threads_for_peer_replication = v.count()),
    ),
    relaxed(
        "timer-lateness-ms",
        Kind::millis(0, 10_000),
        "0",
        "Model: each run of a server java.util.Timer wakes up uniformly [0, x] ms late, and \
         fixed-delay timers carry the lateness forward (FACTS.md §0.3).",
        Apply::Server(|c, v| c.timer_lateness_ms = v.int()),
    ),
    // [clients], also accepted in [server], [[peer]], [[app]] and [[caller]]
    relaxed(
        "eureka.instance.lease-renewal-interval-in-seconds",
        SECONDS,
        "30",
        "Heartbeat period (FACTS.md §5.3).",
        Apply::Client(|c, v| c.lease_renewal_interval_s = v.int()),
    ),
    relaxed(
        "eureka.instance.lease-expiration-duration-in-seconds",
        SECONDS,
        "90",
        "Time without a heartbeat after which the server may evict the instance (FACTS.md §1).",
        Apply::Client(|c, v| c.lease_expiration_duration_s = v.int()),
    ),
    relaxed(
        "eureka.client.registry-fetch-interval-seconds",
        SECONDS,
        "30",
        "Period of the client's registry fetch (FACTS.md §5.5).",
        Apply::Client(|c, v| c.registry_fetch_interval_s = v.int()),
    ),
    relaxed(
        "eureka.client.register-with-eureka",
        Kind::Bool,
        "true (false in [server])",
        "Register this process with the server.",
        Apply::Client(|c, v| c.register_with_eureka = v.flag()),
    ),
    relaxed(
        "eureka.client.fetch-registry",
        Kind::Bool,
        "true (false in [server])",
        "Fetch the registry; a caller that does not can never discover instances.",
        Apply::Client(|c, v| c.fetch_registry = v.flag()),
    ),
    relaxed(
        "eureka.client.instance-info-replication-interval-seconds",
        SECONDS,
        "30",
        "Period of the InstanceInfoReplicator, which re-registers a changed instance (FACTS.md \
         §5.1).",
        Apply::Client(|c, v| c.instance_info_replication_interval_s = v.int()),
    ),
    relaxed(
        "eureka.client.initial-instance-info-replication-interval-seconds",
        SECONDS,
        "40",
        "Delay of the InstanceInfoReplicator's first run (FACTS.md §5.1).",
        Apply::Client(|c, v| c.initial_instance_info_replication_interval_s = v.int()),
    ),
    relaxed(
        "eureka.client.on-demand-update-status-change",
        Kind::Bool,
        "true",
        "Push a status change to the server at once, rate-limited (FACTS.md §5.4).",
        Apply::Client(|c, v| c.on_demand_update_status_change = v.flag()),
    ),
    relaxed(
        "eureka.client.filter-only-up-instances",
        Kind::Bool,
        "true",
        "Keep only UP instances in the lists callers read (FACTS.md §5.5).",
        Apply::Client(|c, v| c.filter_only_up_instances = v.flag()),
    ),
    relaxed(
        "eureka.client.should-unregister-on-shutdown",
        Kind::Bool,
        "true",
        "Send the cancel (DELETE) on shutdown; Eureka >= 1.8.2, always sent before (FACTS.md \
         §5.6).",
        Apply::Client(|c, v| c.should_unregister_on_shutdown = v.flag()),
    ),
    relaxed(
        "eureka.client.should-enforce-registration-at-init",
        Kind::Bool,
        "false",
        "Register synchronously in the client's constructor; Eureka >= 1.8.4 (FACTS.md §5.1).",
        Apply::Client(|c, v| c.should_enforce_registration_at_init = v.flag()),
    ),
    relaxed(
        "eureka.client.healthcheck.enabled",
        Kind::Bool,
        "false",
        "Let SCN's EurekaHealthCheckHandler set the status at every replicator run \
         (DiscoveryClient#refreshInstanceInfo): while the app is healthy it turns a shutdown's \
         DOWN back into UP and registers UP until DiscoveryClient#shutdown \
         (spring-cloud-netflix#3923).",
        Apply::Client(|c, v| c.healthcheck_enabled = v.flag()),
    ),
    relaxed(
        "eureka.client.disable-delta",
        Kind::Bool,
        "false",
        "Always fetch the full registry instead of deltas (FACTS.md §4).",
        Apply::Client(|c, v| c.disable_delta = v.flag()),
    ),
    relaxed(
        "eureka.client.region",
        Kind::Name,
        "us-east-1",
        "The region whose eureka.client.availability-zones.<region> the client reads \
         (EurekaClientConfigBean#region).",
        Apply::Client(|c, v| c.region = v.text()),
    ),
    map_key(
        AVAILABILITY_ZONES,
        "defaultZone",
        "The zones of <region> (EurekaClientConfigBean#availabilityZones, \
         #getAvailabilityZones: split on commas, not trimmed). The first is the process's own \
         zone (InstanceInfo#getZone); its Eureka servers come first, the other zones' after \
         (ZoneAffinityClusterResolver). Only the region of eureka.client.region counts.",
        |c, region, v| set_map(&mut c.availability_zones, region, v.list()),
    ),
    map_key(
        SERVICE_URL,
        "every peer",
        "The Eureka servers of <zone> (EurekaClientConfigBean#serviceUrl): Spring URLs whose \
         host is a [[peer]] name (\"http://a:8761/eureka/,http://b:8761/eureka/\") or bare peer \
         names (\"a,b\"), as a comma-separated string or an array. For each of its availability \
         zones a client reads service-url.<zone>, else service-url.defaultZone \
         (#getEurekaServerServiceUrls; ConfigClusterResolver); other zone keys are ignored. A \
         server replicates to its embedded client's servers but itself \
         (PeerEurekaNodes#resolvePeerUrls). A process that sets none: defaultZone = every peer, \
         <zone> = the peers of that zone; one that sets some but not defaultZone: defaultZone = \
         every peer (Spring's http://localhost:8761/eureka/). Without [[peer]]: the server.",
        |c, zone, v| set_map(&mut c.service_url, zone, v.list()),
    ),
    relaxed(
        "eureka.client.prefer-same-zone-eureka",
        Kind::Bool,
        "true",
        "Order a server's peer list own zone first (EndpointUtils#getServiceUrlsFromConfig); a \
         client's servers are own zone first either way (ZoneAffinityClusterResolver re-splits \
         them) (EurekaClientConfigBean#preferSameZoneEureka).",
        Apply::Client(|c, v| c.prefer_same_zone_eureka = v.flag()),
    ),
    relaxed(
        "eureka.client.eureka-service-url-poll-interval-seconds",
        SECONDS,
        "300",
        "Period at which the client resolves its servers again, re-shuffling them from Eureka \
         1.10.14 (EurekaClientConfigBean#eurekaServiceUrlPollIntervalSeconds; \
         EurekaHttpClients#defaultBootstrapResolver, AsyncResolver; FACTS.md §5.7).",
        Apply::Client(|c, v| c.service_url_poll_interval_s = v.int()),
    ),
    relaxed(
        "eureka.client.transport.sessioned-client-reconnect-interval-seconds",
        SECONDS,
        "1200",
        "Mean session length: a client drops its sticky server after d(1 + U - 0.5), uniform in \
         [d/2, 3d/2) (CloudEurekaTransportConfig#sessionedClientReconnectIntervalSeconds; \
         SessionedEurekaHttpClient#randomizeSessionDuration; FACTS.md §5.7).",
        Apply::Client(|c, v| c.sessioned_client_reconnect_interval_s = v.int()),
    ),
    relaxed(
        "eureka.client.transport.retryable-client-quarantine-refresh-percentage",
        FRACTION,
        "0.66",
        "The quarantine of failed servers is cleared once it holds (int)(n x this) of the n \
         servers, so with 3 or fewer it never filters \
         (CloudEurekaTransportConfig#retryableClientQuarantineRefreshPercentage; \
         RetryableEurekaHttpClient#getHostCandidates; FACTS.md §5.7).",
        Apply::Client(|c, v| c.retryable_client_quarantine_refresh_percentage = v.float()),
    ),
    relaxed(
        "eureka.client.heartbeat-executor-exponential-back-off-bound",
        Kind::count(1, 1_000),
        "10",
        "A heartbeat that outlasts its interval doubles the delay to the next, up to interval x \
         this (EurekaClientConfigBean#heartbeatExecutorExponentialBackOffBound; \
         TimedSupervisorTask#run; FACTS.md §5.2).",
        Apply::Client(|c, v| c.heartbeat_executor_exponential_back_off_bound = v.count()),
    ),
    relaxed(
        "eureka.client.cache-refresh-executor-exponential-back-off-bound",
        Kind::count(1, 1_000),
        "10",
        "The same for the registry fetch (EurekaClientConfigBean\
         #cacheRefreshExecutorExponentialBackOffBound; FACTS.md §5.2).",
        Apply::Client(|c, v| c.cache_refresh_executor_exponential_back_off_bound = v.count()),
    ),
    relaxed(
        "eureka.client.heartbeat-executor-thread-pool-size",
        Kind::count(1, 1_000),
        "2",
        "Threads of the heartbeat executor: heartbeats still hanging after their supervisor \
         timed out keep theirs, and a run finding none free is rejected and re-armed \
         (EurekaClientConfigBean#heartbeatExecutorThreadPoolSize; \
         DiscoveryClient#initScheduledTasks; TimedSupervisorTask#run).",
        Apply::Client(|c, v| c.heartbeat_executor_thread_pool_size = v.count()),
    ),
    relaxed(
        "eureka.client.cache-refresh-executor-thread-pool-size",
        Kind::count(1, 1_000),
        "2",
        "The same for the registry fetch \
         (EurekaClientConfigBean#cacheRefreshExecutorThreadPoolSize).",
        Apply::Client(|c, v| c.cache_refresh_executor_thread_pool_size = v.count()),
    ),
    relaxed(
        "eureka.client.eureka-server-connect-timeout-seconds",
        SECONDS,
        "5",
        "Connect timeout of the client's calls to a Eureka server, read by the Jersey transport \
         only (up to Hoxton; EurekaClientConfigBean#eurekaServerConnectTimeoutSeconds, \
         EurekaClientFactoryBuilder); the RestTemplate transport of 2020.0+ ignores it (FACTS.md \
         §5.2).",
        Apply::Client(|c, v| c.eureka_server_connect_timeout_s = v.int()),
    ),
    relaxed(
        "eureka.client.eureka-server-read-timeout-seconds",
        SECONDS,
        "8",
        "Read timeout of the same calls, Jersey transport only \
         (EurekaClientConfigBean#eurekaServerReadTimeoutSeconds; FACTS.md §5.2).",
        Apply::Client(|c, v| c.eureka_server_read_timeout_s = v.int()),
    ),
    relaxed(
        "eureka.client.restclient.enabled",
        Kind::Bool,
        "false",
        "On 2024.0 and 2025.0 (SCN 4.2-4.3) the Eureka client calls through the RestClient \
         transport instead of the RestTemplate one, reading `eureka.client.restclient.timeout.*` \
         (DiscoveryClientOptionalArgsConfiguration; FACTS.md §5.2). 2025.1 has only RestClient.",
        Apply::Client(|c, v| c.restclient_enabled = v.flag()),
    ),
    relaxed(
        "eureka.client.rest-template-timeout.connect-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Connect timeout (ms) of the Eureka client's calls to a server on SCN 3.1.5-4.3's RestTemplate transport (2021.0.6-2025.0; default -1, none, on 3.1.x; 180000 from 2022.0); 0 is none; a connect to a vanished host fails at the lesser of this and the OS's 127 s (RestTemplateTimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[0].connect_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.rest-template-timeout.connect-request-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Wait (ms) for a pooled connection of the same calls on SCN 3.1.5-4.3's RestTemplate transport (2021.0.6-2025.0; default -1, none, on 3.1.x; 180000 from 2022.0); 0 is none; accepted, not modelled: the pool never runs dry (RestTemplateTimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[0].connect_request_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.rest-template-timeout.socket-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Socket (read) timeout (ms) of the same calls on SCN 3.1.5-4.3's RestTemplate transport (2021.0.6-2025.0; default -1, none, on 3.1.x; 180000 from 2022.0); 0 is none; a server that accepted the call and stopped answering, a paused JVM, fails the attempt at it and the client tries the next server (RestTemplateTimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[0].socket_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.restclient.timeout.connect-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Connect timeout (ms) of the Eureka client's calls to a server on SCN 4.2-4.3's RestClient transport (2024.0-2025.0 with `eureka.client.restclient.enabled`; default 180000); 0 is none; a connect to a vanished host fails at the lesser of this and the OS's 127 s (RestClientTimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[1].connect_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.restclient.timeout.connect-request-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Wait (ms) for a pooled connection of the same calls on SCN 4.2-4.3's RestClient transport (2024.0-2025.0 with `eureka.client.restclient.enabled`; default 180000); 0 is none; accepted, not modelled: the pool never runs dry (RestClientTimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[1].connect_request_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.restclient.timeout.socket-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Socket (read) timeout (ms) of the same calls on SCN 4.2-4.3's RestClient transport (2024.0-2025.0 with `eureka.client.restclient.enabled`; default 180000); 0 is none; a server that accepted the call and stopped answering, a paused JVM, fails the attempt at it and the client tries the next server (RestClientTimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[1].socket_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.timeout.connect-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Connect timeout (ms) of the Eureka client's calls to a server on SCN 5.x's RestClient transport (2025.1; default 180000); 0 is none; a connect to a vanished host fails at the lesser of this and the OS's 127 s (TimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[2].connect_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.timeout.connect-request-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Wait (ms) for a pooled connection of the same calls on SCN 5.x's RestClient transport (2025.1; default 180000); 0 is none; accepted, not modelled: the pool never runs dry (TimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[2].connect_request_ms = Some(v.int())),
    ),
    relaxed(
        "eureka.client.timeout.socket-timeout",
        Kind::millis(0, 2_147_483_647),
        "the train's",
        "Socket (read) timeout (ms) of the same calls on SCN 5.x's RestClient transport (2025.1; default 180000); 0 is none; a server that accepted the call and stopped answering, a paused JVM, fails the attempt at it and the client tries the next server (TimeoutProperties; FACTS.md §5.2, §15).",
        Apply::Client(|c, v| c.http_timeouts[2].socket_ms = Some(v.int())),
    ),
    ribbon(
        "ribbon.ServerListRefreshInterval",
        MILLIS,
        "30000",
        "Period of Ribbon's server-list refresh from the Eureka client's cache (FACTS.md §8).",
        |c, v| c.server_list_refresh_interval_ms = v.int(),
    ),
    ribbon(
        "ribbon.MaxAutoRetries",
        RETRIES,
        "0",
        "Retries on the same server (FACTS.md §8), for the stacks that retry on Ribbon \
         (http-client); before the callers' HTTP stacks were modelled, every Ribbon caller did.",
        |c, v| c.max_auto_retries = v.count(),
    ),
    ribbon(
        "ribbon.MaxAutoRetriesNextServer",
        RETRIES,
        "1",
        "Retries on the next server (FACTS.md §8), for the stacks that retry on Ribbon \
         (http-client): Zuul with spring-retry and zuul.retryable, RestTemplate and Feign with \
         spring-retry, Feign without it; before the callers' HTTP stacks were modelled, every Ribbon caller did.",
        |c, v| c.max_auto_retries_next_server = v.count(),
    ),
    ribbon(
        "ribbon.OkToRetryOnAllOperations",
        Kind::Bool,
        "false",
        "Retry every method, not only GET (FACTS.md §8).",
        |c, v| c.ok_to_retry_on_all_operations = v.flag(),
    ),
    ribbon(
        "ribbon.ConnectTimeout",
        MILLIS,
        "1000 (2000 on Dalston)",
        "Ribbon client connect timeout: SCN's RibbonClientConfiguration sets 1000 from Edgware; \
         Dalston keeps Ribbon's DefaultClientConfigImpl 2000 (FACTS.md §8). Each attempt on a \
         vanished host (`host = \"vanishes\"`) costs it; part of Zuul's Hystrix timeout.",
        |c, v| c.connect_timeout_ms = v.int(),
    ),
    ribbon(
        "ribbon.ReadTimeout",
        MILLIS,
        "1000 (5000 on Dalston)",
        "Ribbon client read timeout: SCN's RibbonClientConfiguration sets 1000 from Edgware; \
         Dalston keeps Ribbon's DefaultClientConfigImpl 5000 (FACTS.md §8). Part of Zuul's \
         Hystrix timeout.",
        |c, v| c.read_timeout_ms = v.int(),
    ),
    relaxed(
        "ribbon.eager-load.enabled",
        Kind::Bool,
        "false",
        "Create the load balancers at start-up instead of at the first request (FACTS.md §8).",
        Apply::Ribbon(|c, v| c.eager_load = v.flag()),
    ),
    relaxed(
        "eureka-notification-updater",
        Kind::Bool,
        "false",
        "Ribbon's server list follows every Eureka client fetch at once \
         (EurekaNotificationServerListUpdater, declared as a @Bean) instead of polling every \
         ServerListRefreshInterval; on Dalston the event never reaches it (FACTS.md §8).",
        Apply::Ribbon(|c, v| c.eureka_notification_updater = v.flag()),
    ),
    relaxed(
        "niws.loadbalancer.availabilityFilteringRule.filterCircuitTripped",
        Kind::Bool,
        "true",
        "ZoneAvoidanceRule's availability filter skips servers whose circuit breaker is tripped \
         (FACTS.md §8); false lets every refused server stay in the round robin.",
        Apply::Ribbon(|c, v| c.filter_circuit_tripped = v.flag()),
    ),
    relaxed(
        "niws.loadbalancer.default.connectionFailureCountThreshold",
        Kind::count(1, 1_000),
        "3",
        "Successive refused connections that trip a server's circuit breaker (ServerStats). The \
         model applies it to every Ribbon client; Ribbon itself reads it only for a client named \
         `default` (LoadBalancerStats reads niws.loadbalancer.<client>.*), so the per-app key \
         wins for its app.",
        Apply::Ribbon(|c, v| c.connection_failure_count_threshold = v.count()),
    ),
    relaxed(
        "niws.loadbalancer.default.circuitTripTimeoutFactorSeconds",
        Kind::seconds(1, 86_400),
        "10",
        "Blackout at the threshold; it doubles with each further failure (ServerStats). Applied \
         to every Ribbon client; niws.loadbalancer.<app>.circuitTripTimeoutFactorSeconds wins \
         for its app.",
        Apply::Ribbon(|c, v| c.circuit_trip_timeout_factor_s = v.int()),
    ),
    relaxed(
        "niws.loadbalancer.default.circuitTripMaxTimeoutSeconds",
        Kind::seconds(1, 86_400),
        "30",
        "Longest blackout of a tripped server (ServerStats). Applied to every Ribbon client; \
         niws.loadbalancer.<app>.circuitTripMaxTimeoutSeconds wins for its app.",
        Apply::Ribbon(|c, v| c.circuit_trip_max_timeout_s = v.int()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.ribbon.enabled",
        Kind::Bool,
        "the train's",
        "Route through Ribbon (true) or Spring Cloud LoadBalancer (false); unset: Ribbon up to \
         Hoxton, Spring Cloud LoadBalancer from 2020.0, which removed Ribbon (FACTS.md §9).",
        Apply::Client(|c, v| c.load_balancer.ribbon_enabled = Some(v.flag())),
    ),
    relaxed(
        "spring.cloud.loadbalancer.cache.enabled",
        Kind::Bool,
        "true",
        "Spring Cloud LoadBalancer caches the instance list (CachingServiceInstanceListSupplier); \
         false reads the Eureka client's cache at every request.",
        Apply::Client(|c, v| c.load_balancer.cache_enabled = v.flag()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.cache.ttl",
        MILLIS,
        "35000",
        "Time to live of the cached list, in ms (expire after write); the list is re-read at the \
         first request after it expired, so without traffic nothing is refreshed (FACTS.md §9).",
        Apply::Client(|c, v| c.load_balancer.cache_ttl_ms = v.int()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.configurations",
        Kind::Supplier,
        "default",
        "The instance-list supplier chain: `default` (discovery client + cache) or `health-check` \
         (discovery client + health checks, no cache) (FACTS.md §9).",
        Apply::Client(|c, v| {
            if let Val::Supplier(k) = v {
                c.load_balancer.configurations = *k;
            }
        }),
    ),
    relaxed(
        "spring.cloud.loadbalancer.health-check.initial-delay",
        Kind::millis(0, 86_400_000),
        "0",
        "Delay before the first health-check round, in ms.",
        Apply::Client(|c, v| c.load_balancer.health_check_initial_delay_ms = v.int()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.health-check.interval",
        MILLIS,
        "25000",
        "Period of the health-check rounds (GET /actuator/health on every instance), in ms.",
        Apply::Client(|c, v| c.load_balancer.health_check_interval_ms = v.int()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.health-check.refetch-instances",
        Kind::Bool,
        "false",
        "Re-read the instances from the Eureka client periodically; false health-checks only the \
         first list forever (FACTS.md §9).",
        Apply::Client(|c, v| c.load_balancer.refetch_instances = v.flag()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.health-check.refetch-instances-interval",
        MILLIS,
        "25000",
        "Period of the re-reads with refetch-instances, in ms.",
        Apply::Client(|c, v| c.load_balancer.refetch_instances_interval_ms = v.int()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.retry.enabled",
        Kind::Bool,
        "the stack's",
        "Spring Cloud LoadBalancer retries refused connections (FACTS.md §9): a RestTemplate or \
         Feign caller with spring-retry unless false; a WebClient caller only when set to true \
         (ReactorLoadBalancerClientAutoConfiguration: havingValue = \"true\", no \
         matchIfMissing); Zuul and Spring Cloud Gateway never read it. Before the callers' HTTP stacks were modelled, every \
         LoadBalancer caller retried unless false.",
        Apply::Client(|c, v| c.load_balancer.retry_enabled = Some(v.flag())),
    ),
    relaxed(
        "spring.cloud.loadbalancer.retry.retry-on-all-operations",
        Kind::Bool,
        "false",
        "Retry every method, not only GET.",
        Apply::Client(|c, v| c.load_balancer.retry_on_all_operations = v.flag()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.retry.max-retries-on-same-service-instance",
        RETRIES,
        "0",
        "Retries on the same instance.",
        Apply::Client(|c, v| c.load_balancer.max_retries_on_same_service_instance = v.count()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance",
        RETRIES,
        "1",
        "Retries on another instance (chosen again by the round robin).",
        Apply::Client(|c, v| c.load_balancer.max_retries_on_next_service_instance = v.count()),
    ),
    relaxed(
        "spring.cloud.loadbalancer.retry.avoid-previous-instance",
        Kind::Bool,
        "true",
        "A retry chooses among the instances other than the one just tried \
         (RetryAwareServiceInstanceListSupplier), unless it was the only one.",
        Apply::Client(|c, v| c.load_balancer.avoid_previous_instance = v.flag()),
    ),
    relaxed(
        "spring-config",
        Kind::List,
        "(none)",
        "The team's own Spring Boot file(s) for this process: application.yml (several \
         documents; profiles from simulation.spring-profiles, else the file's \
         spring.profiles.active) or .properties, relative to the scenario file; a list is read in \
         order, a later file overriding an earlier one. Every key the model uses applies as if \
         written in this table (relaxed binding; ${name:default} placeholders from the file), \
         keys written in the table override it, and the others are listed once as ignored. An \
         [[app]] or [[caller]] without a name takes spring.application.name.",
        // Read before binding (parse::spring); nothing left to apply.
        Apply::Client(|_, _| {}),
    ),
    relaxed(
        "spring-profiles",
        Kind::List,
        "simulation.spring-profiles",
        "The active Spring profiles of this process's spring-config files (its own \
         --spring.profiles.active), over simulation.spring-profiles: one [[peer]] per profile \
         document of a shared server file, as Spring's HA guide runs its peers.",
        // Read before binding (parse::spring); nothing left to apply.
        Apply::Client(|_, _| {}),
    ),
    relaxed(
        "env-file",
        Kind::List,
        "(none)",
        "Environment variables for this process's Spring environment, from a file relative to \
         the scenario: dotenv lines (NAME=value), a docker-compose file (a service's \
         environment: list or map; the service after `#`, as in \"docker-compose.yml#gateway\", \
         else the one named like this table, else the only one) or a Kubernetes manifest (a \
         container's env: list). They rank above the spring-config files and bind as Spring \
         Boot binds environment variables (EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS is \
         eureka.client.registry-fetch-interval-seconds; _0_ is an index) and serve \
         placeholders. The machine's environment is never read.",
        // Read before binding (parse::spring); nothing left to apply.
        Apply::Client(|_, _| {}),
    ),
    map_key(
        "env.<NAME>",
        "(none)",
        "An environment variable for this process's Spring environment, written in the \
         scenario (env = { EUREKA_INSTANCE_PREFERIPADDRESS = \"true\" }); after those of \
         env-file, which it overrides.",
        // Read before binding (parse::spring); nothing left to apply.
        |_, _, _| {},
    ),
    relaxed(
        "server.shutdown",
        Kind::Choice(&["immediate", "graceful"]),
        "the train's",
        "Spring Boot's web-server shutdown (Boot >= 2.3): `immediate` stops the web server at \
         once, failing the requests in flight (inflight_failed); `graceful` stops accepting new \
         connections (they are refused: dead hits) and lets in-flight requests finish within \
         spring.lifecycle.timeout-per-shutdown-phase before the rest of the close, and so the \
         DELETE, proceeds (FACTS.md §7). Unset: immediate up to 2023.0 (Boot <= 3.3), graceful \
         from 2024.0 (Boot 3.4 made it the default).",
        Apply::Client(|c, v| {
            c.server_shutdown = Some(if v.text() == "graceful" {
                crate::scenario::ServerShutdown::Graceful
            } else {
                crate::scenario::ServerShutdown::Immediate
            })
        }),
    ),
    relaxed(
        "spring.lifecycle.timeout-per-shutdown-phase",
        MILLIS,
        "30000",
        "Longest wait of the graceful phase for in-flight requests, in ms \
         (DefaultLifecycleProcessor); requests still running then fail (inflight_failed).",
        Apply::Client(|c, v| c.timeout_per_shutdown_phase_ms = v.int()),
    ),
    // [[peer]], which also takes every [server] key and every client key
    required(
        "name",
        Kind::Name,
        "A Eureka server of the cluster: its host in service URLs (http://<name>:8761/eureka/) \
         and its process name. The [server] keys set in the table override [server] for this \
         peer, the client keys configure its embedded client. No [[peer]]: one standalone \
         server named spring.application.name.",
        Apply::Peer(|c, v| c.name = v.text()),
    ),
    relaxed(
        "zone",
        Kind::Name,
        "defaultZone",
        "The zone the peer runs in: a process that sets no eureka.client.service-url has \
         service-url.<zone> = the peers of <zone> (and defaultZone = every peer).",
        Apply::Peer(|c, v| c.zone = v.text()),
    ),
    // [[app]]
    required(
        "name",
        Kind::Name,
        "The app's name; its instances are <name>-0 .. <name>-(instances-1).",
        Apply::App(|c, v| c.name = v.text()),
    ),
    relaxed(
        "instances",
        Kind::count(1, 10_000),
        "1",
        "Number of identical instances.",
        Apply::App(|c, v| c.instances = v.count()),
    ),
    relaxed(
        "service-time-ms",
        Kind::millis(0, 3_600_000),
        "0",
        "Model: fixed time an instance takes to answer an accepted request. A request is in \
         flight on it for that long; kill -9 and an immediate kill -15 fail the requests in \
         flight (inflight_failed). 0: answered at once, nothing is in flight.",
        Apply::App(|c, v| c.service_time_ms = v.int()),
    ),
    relaxed(
        "zones",
        Kind::List,
        "the app's availability zone",
        "Model: the zones the app's instances run in, round robin: instance i in zone i mod n \
         of the list, its eureka.client.availability-zones.<region> that zone, then the others \
         in the order written (its Eureka servers: its own zone's first). A [[shutdown]] zone \
         or a [[fault]] zone side takes only that zone's instances. Without it every instance \
         is in the app's first availability zone; not with \
         eureka.client.availability-zones.<region> in the same table.",
        Apply::App(|c, v| c.zones = v.list()),
    ),
    // [[caller]]
    required(
        "name",
        Kind::Name,
        "The caller's name (a gateway or any process that routes to apps through Ribbon or \
         Spring Cloud LoadBalancer).",
        Apply::Caller(|c, v| c.name = v.text()),
    ),
    required(
        "calls",
        Kind::Apps,
        "The [[app]] name, or array of names, it sends requests to.",
        Apply::Caller(|c, v| c.calls = v.list()),
    ),
    relaxed(
        "rate-per-s",
        Kind::Float {
            min: 0.0,
            above_min: false,
            max: 100_000.0,
        },
        "20",
        "Poisson rate of requests to each called app, per second.",
        Apply::Caller(|c, v| c.rate_per_s = v.float()),
    ),
    relaxed(
        "method",
        Kind::Method,
        "GET",
        "HTTP method of the requests; only GET is retried unless OkToRetryOnAllOperations \
         (retry-on-all-operations on Spring Cloud LoadBalancer); Feign on Ribbon without \
         spring-retry retries refused connections for every method \
         (FeignLoadBalancer#getRequestSpecificRetryHandler).",
        Apply::Caller(|c, v| {
            if let Val::Method(m) = v {
                c.method = *m;
            }
        }),
    ),
    relaxed(
        "fixed-rate",
        Kind::Bool,
        "false",
        "Requests arrive exactly every 1/rate-per-s seconds (at a random phase) instead of as a \
         Poisson stream: for hand-checkable timelines.",
        Apply::Caller(|c, v| c.fixed_rate = v.flag()),
    ),
    relaxed(
        "http-client",
        Kind::Choice(&["zuul", "rest-template", "feign", "web-client", "gateway"]),
        "the train's gateway",
        "Model: the caller's HTTP stack, which decides its retries and its ServerStats \
         accounting (FACTS.md §14): `zuul` (each request in a Hystrix command, \
         AbstractRibbonCommand#getHystrixTimeout; retries only with spring-retry and \
         zuul.retryable), `rest-template` (retries only with spring-retry: \
         RetryLoadBalancerInterceptor, which on Ribbon records each refused attempt twice, so \
         the breaker trips after 2 refusals), `feign` (on Ribbon, Ribbon's LoadBalancerCommand \
         retries connection errors by the ribbon.* keys; Feign's Retryer is NEVER_RETRY), \
         `web-client` (retries only with spring.cloud.loadbalancer.retry.enabled = true set, \
         2020.0+; on Ribbon it only calls choose(), so the breaker never trips) or `gateway` \
         (Spring Cloud Gateway: no retry without a Retry filter; on Ribbon only choose()). \
         Unset: zuul up to Hoxton, gateway from 2020.0. Before the callers' HTTP stacks were modelled, every caller retried by \
         the ribbon.* or spring.cloud.loadbalancer.retry.* keys whatever its stack.",
        Apply::Caller(|c, v| c.http_client = HttpClient::parse(&v.text())),
    ),
    relaxed(
        "zuul",
        Kind::Bool,
        "false",
        "Alias: true is http-client = \"zuul\"; false is the train's default stack, or \
         rest-template where that default is Zuul (up to Hoxton). Before the callers' HTTP stacks were modelled, a Zuul caller \
         retried by the ribbon.* keys; it now retries only with spring-retry and \
         zuul.retryable = true (ZuulProperties#retryable defaults to false), so every refused \
         request is an error. Zuul routes through Ribbon only: with Spring Cloud LoadBalancer \
         it is a warning.",
        Apply::Caller(|c, v| c.zuul = Some(v.flag())),
    ),
    relaxed(
        "zuul.retryable",
        Kind::Bool,
        "false",
        "ZuulProperties#retryable: a Zuul caller retries by the ribbon.* keys \
         (RibbonLoadBalancedRetryPolicy), but only with spring-retry on its classpath \
         (RetryableRibbonLoadBalancingHttpClient#isClientRetryable); without it \
         RibbonLoadBalancingHttpClient never retries (getRequestSpecificRetryHandler(false, \
         false, ...)).",
        Apply::Caller(|c, v| c.zuul_retryable = Some(v.flag())),
    ),
    relaxed(
        "spring-retry",
        Kind::Bool,
        "false",
        "Model: spring-retry is on the caller's classpath (no starter brings it). It turns on \
         the retry of RestTemplate (RetryLoadBalancerInterceptor, if \
         spring.cloud.loadbalancer.retry.enabled), Feign (RetryableFeignLoadBalancer, \
         RetryableFeignBlockingLoadBalancerClient) and Zuul with zuul.retryable.",
        Apply::Caller(|c, v| c.spring_retry = v.flag()),
    ),
    // Also Hystrix's own name for every command, so a gateway's application.yml sets it
    // (AbstractRibbonCommand#getHystrixTimeout reads the `default` command's value when the
    // route's own is not set).
    KeyDef {
        aliases: &["hystrix.command.default.execution.isolation.thread.timeout-in-milliseconds"],
        ..relaxed(
            "hystrix-timeout-ms",
            MILLIS,
            "(Zuul's formula)",
            "Model: hystrix.command.<route>.execution.isolation.thread.timeoutInMilliseconds, \
             which AbstractRibbonCommand uses instead of its formula when set; also wraps a \
             non-Zuul caller's requests in a Hystrix timeout. Also read as \
             hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds.",
            Apply::Caller(|c, v| c.hystrix_timeout_ms = Some(v.int())),
        )
    },
    // [[shutdown]]
    relaxed(
        "instance",
        Kind::Instance,
        "(required, or zone)",
        "The instance that departs, as <app name>-<index> (svc-0).",
        Apply::Shutdown(|c, v| c.instance = Some(v.text())),
    ),
    relaxed(
        "zone",
        Kind::Name,
        "(none)",
        "Instead of instance, a zone outage: every process of the zone stops at at-s. Each app \
         instance of the zone departs as if named by its own [[shutdown]] (one trials.csv row \
         each), each caller of the zone stops calling, and each [[peer]] of the zone goes down \
         for good (as a crash [[fault]]). A process's zone is its first \
         eureka.client.availability-zones zone (defaultZone without one), a peer's its [[peer]] \
         zone. kill-9 only: an outage gives no process time to deregister.",
        Apply::Shutdown(|c, v| c.zone = Some(v.text())),
    ),
    required(
        "at-s",
        Kind::seconds(0, MAX_DURATION_S),
        "When the shutdown starts, in seconds from the start of the trial.",
        Apply::Shutdown(|c, v| c.at_ms = v.secs_as_ms()),
    ),
    required(
        "strategy",
        Kind::Strategy,
        "How the instance departs (FACTS.md §7).",
        Apply::Shutdown(|c, v| {
            if let Val::Strategy(s) = v {
                c.strategy = *s;
            }
        }),
    ),
    relaxed(
        "wait-s",
        Kind::seconds(0, 86_400),
        "0",
        "For pause and service-registry: how long the instance keeps serving before it stops.",
        Apply::Shutdown(|c, v| c.wait_ms = v.secs_as_ms()),
    ),
    relaxed(
        "then",
        Kind::FinalStop,
        "kill-15",
        "For pause and service-registry: how the process finally stops.",
        Apply::Shutdown(|c, v| {
            if let Val::Stop(s) = v {
                c.then = *s;
            }
        }),
    ),
    relaxed(
        "sigterm-reaches-jvm",
        Kind::Bool,
        "true",
        "Model: false when the container's PID 1 does not forward SIGTERM to the JVM (a shell \
         entrypoint without exec); every kill -15 then does nothing until the SIGKILL after \
         termination-grace-period-s, so it behaves as a late kill -9.",
        Apply::Shutdown(|c, v| c.sigterm_reaches_jvm = v.flag()),
    ),
    relaxed(
        "termination-grace-period-s",
        Kind::seconds(0, 86_400),
        "30",
        "Model: Kubernetes' terminationGracePeriodSeconds, the wait from a lost SIGTERM to the \
         SIGKILL.",
        Apply::Shutdown(|c, v| c.termination_grace_ms = v.secs_as_ms()),
    ),
    relaxed(
        "resume-s",
        Kind::seconds(0, 86_400),
        "(none)",
        "For pause: POST /actuator/resume this long after the pause began (context.start(), \
         which registers UP again on Edgware and later; on Dalston the client was shut down by \
         /pause, so the instance stays unregistered, spring-cloud-netflix#2099; from Hoxton.SR10 \
         /pause and /resume leave Eureka alone). The process then keeps running: wait-s and \
         then do not apply.",
        Apply::Shutdown(|c, v| c.resume_ms = Some(v.secs_as_ms())),
    ),
    relaxed(
        "cancel-override",
        Kind::Bool,
        "true",
        "For service-registry: end the wait with CANCEL_OVERRIDE (DELETE .../status, the status \
         becomes UNKNOWN, FACTS.md §6); false keeps OUT_OF_SERVICE in the server's override map \
         through then (it survives a restart while the lease lives).",
        Apply::Shutdown(|c, v| c.cancel_override = v.flag()),
    ),
    relaxed(
        "prestop-s",
        Kind::seconds(0, 86_400),
        "0",
        "Model, kill-15 only: a Kubernetes preStop sleep before the SIGTERM; the instance keeps \
         serving and stays UP meanwhile, so the whole kill -15 sequence starts this much later. \
         termination-grace-period-s then counts from the start of the preStop hook.",
        Apply::Shutdown(|c, v| c.prestop_ms = v.secs_as_ms()),
    ),
    relaxed(
        "host",
        Kind::Choice(&["stays", "vanishes"]),
        "stays",
        "Model: `stays` = a dead process on a live host, connections are refused at once; \
         `vanishes` = the pod's IP is gone, every attempt waits ribbon.ConnectTimeout before it \
         fails (SocketTimeoutException, which trips the circuit breaker like a refusal; FACTS.md \
         §7, §8), counted in timeout_delay_ms. The host is gone once the process is (kill -9, \
         or the exit after kill-15); a web server stopped in a live JVM still refuses. With \
         `zone` (a zone outage) the default is `vanishes` and it applies to the zone's peers \
         too: the Eureka clients' connects to them hang until their connect timeout (5 s \
         Jersey, else the train's or the OS's 127 s) and TimedSupervisorTask backs off; \
         `stays` makes every process of the zone refuse at once (FACTS.md §15).",
        Apply::Shutdown(|c, v| c.host_vanishes = Some(v.text() == "vanishes")),
    ),
    // [[claim]]
    relaxed(
        "name",
        Kind::Text,
        "(none)",
        "A short label for the claim in check's report.",
        Apply::Claim(|c, v| c.name = Some(v.text())),
    ),
    relaxed(
        "shutdown",
        Kind::ShutdownRef,
        "0",
        "The [[shutdown]] the claim is about: its index (0 is the first; a zone outage counts \
         one per instance of the zone, in [[app]] and index order) or its instance id (svc-0).",
        Apply::Claim(|c, v| {
            if let Val::Shutdown(s) = v {
                c.shutdown = s.clone();
            }
        }),
    ),
    required(
        "metric",
        Kind::Metric,
        "The metric, named as in summary.csv (see Reading the metrics).",
        Apply::Claim(|c, v| {
            if let Val::Metric(m) = v {
                c.metric = *m;
            }
        }),
    ),
    required(
        "statistic",
        Kind::Statistic,
        "What is computed over the trials: min, max, mean, pN (the nearest-rank percentile N, \
         such as p50 or p99.9), zero-share (share of trials with value 0) or unresolved (share \
         of trials without a value).",
        Apply::Claim(|c, v| {
            if let Val::Statistic(s) = v {
                c.statistic = *s;
            }
        }),
    ),
    KeyDef {
        aliases: &["op"],
        ..required(
            "comparison",
            Kind::Comparison,
            "How the statistic compares with the value: <=, <, >=, > or ==; also spelled op.",
            Apply::Claim(|c, v| {
                if let Val::Comparison(o) = v {
                    c.comparison = *o;
                }
            }),
        )
    },
    relaxed(
        "value",
        Kind::Number,
        "(value or value-s required)",
        "The threshold in the metric's unit: ms for times, a count for dead_hits and errors, a \
         fraction in 0..=1 for zero-share and unresolved.",
        Apply::Claim(|c, v| c.value = Some(v.float())),
    ),
    relaxed(
        "value-s",
        Kind::Number,
        "(none)",
        "The threshold of a time metric in seconds, instead of value.",
        Apply::Claim(|c, v| c.value_s = Some(v.float())),
    ),
    required(
        "source",
        Kind::Text,
        "Where the claim comes from, in words (a document, a wiki page, an issue).",
        Apply::Claim(|c, v| c.source = v.text()),
    ),
    // [[restart]]
    required(
        "instance",
        Kind::Instance,
        "The instance whose process is started again, as <app name>-<index> (svc-0).",
        Apply::Restart(|c, v| c.instance = v.text()),
    ),
    relaxed(
        "at-s",
        Kind::seconds(0, MAX_DURATION_S),
        "(at-s or down-s required)",
        "When the new process starts, in seconds from the start of the trial; a previous \
         incarnation still running then is killed first (kill -9).",
        Apply::Restart(|c, v| c.at_ms = Some(v.secs_as_ms())),
    ),
    relaxed(
        "down-s",
        Kind::seconds(0, 86_400),
        "(at-s or down-s required)",
        "Instead of at-s: the new process starts this long after the previous one exited \
         (needs a [[shutdown]] of the instance).",
        Apply::Restart(|c, v| c.down_ms = Some(v.secs_as_ms())),
    ),
    relaxed(
        "new-instance-id",
        Kind::Bool,
        "false",
        "The new process registers under a new instance id (<instance>@1), as on another host or \
         port; false keeps the id, so an override or lease the server still holds applies to it.",
        Apply::Restart(|c, v| c.new_instance_id = v.flag()),
    ),
    // [[deploy]]
    required(
        "app",
        Kind::Name,
        "The [[app]] whose instances are all replaced, batch by batch.",
        Apply::Deploy(|c, v| c.app = v.text()),
    ),
    required(
        "at-s",
        Kind::seconds(0, MAX_DURATION_S),
        "When the first batch starts, in seconds from the start of the trial.",
        Apply::Deploy(|c, v| c.at_ms = v.secs_as_ms()),
    ),
    required(
        "strategy",
        Kind::Strategy,
        "How each old instance departs (as [[shutdown]] strategy).",
        Apply::Deploy(|c, v| {
            if let Val::Strategy(s) = v {
                c.strategy = *s;
            }
        }),
    ),
    relaxed(
        "wait-s",
        Kind::seconds(0, 86_400),
        "0",
        "For pause and service-registry: how long each old instance keeps serving before it stops.",
        Apply::Deploy(|c, v| c.wait_ms = v.secs_as_ms()),
    ),
    relaxed(
        "then",
        Kind::FinalStop,
        "kill-15",
        "For pause and service-registry: how each old process finally stops.",
        Apply::Deploy(|c, v| {
            if let Val::Stop(s) = v {
                c.then = *s;
            }
        }),
    ),
    relaxed(
        "startup-s",
        Kind::seconds(0, 86_400),
        "context-start-ms + spread",
        "From a new process's start to its web server being ready and registering UP (the \
         context-start model without spread).",
        Apply::Deploy(|c, v| c.startup_ms = Some(v.secs_as_ms())),
    ),
    relaxed(
        "batch-size",
        Kind::count(1, 100_000),
        "1",
        "Instances replaced at once: a batch's old instances start departing and their \
         replacements start at the same instant.",
        Apply::Deploy(|c, v| c.batch_size = v.count()),
    ),
    relaxed(
        "interval-s",
        Kind::seconds(0, 86_400),
        "0",
        "Pause between batches: the next batch starts this long after every new instance of the \
         previous batch is UP in the server's registry.",
        Apply::Deploy(|c, v| c.interval_ms = v.secs_as_ms()),
    ),
    // [[fault]]
    required(
        "kind",
        Kind::Choice(&FAULT_KINDS),
        "What goes wrong: partition = nothing passes either way between the two \
         sides of between, Eureka calls, replication batches and the callers' requests to \
         instances alike: connects time out as configured; pause = the target process stops \
         the world (a GC or VM freeze): its Eureka timers fire late and its calls wait, then \
         everything late runs at once, and each request to it waits the caller's read timeout; server-restart = the target peer is down for down-s and \
         comes back with an empty registry, refilled by replication and heartbeat-404 \
         re-registration; crash = the target peer dies for good and clients fail over.",
        Apply::Fault(|c, v| c.kind = v.text()),
    ),
    required(
        "at-s",
        Kind::seconds(0, MAX_DURATION_S),
        "When the fault begins, in seconds from the start of the trial; before \
         simulation.duration-s.",
        Apply::Fault(|c, v| c.at_ms = v.secs_as_ms()),
    ),
    relaxed(
        "for-s",
        Kind::seconds(1, MAX_DURATION_S),
        "(required for partition and pause)",
        "Partition and pause only: how long the fault lasts.",
        Apply::Fault(|c, v| c.for_ms = Some(v.secs_as_ms())),
    ),
    relaxed(
        "down-s",
        Kind::seconds(1, MAX_DURATION_S),
        "(required for server-restart)",
        "Server-restart only: how long the peer is down before it starts again, empty.",
        Apply::Fault(|c, v| c.down_ms = Some(v.secs_as_ms())),
    ),
    relaxed(
        "between",
        Kind::List,
        "(required for partition)",
        "Partition only: the two sides, [A, B], each a [[peer]] name, an instance id (svc-0), a \
         [[caller]] name, an [[app]] name (all its instances) or a zone (every peer of that \
         [[peer]] zone and every process whose own availability zone it is). Without [[peer]] \
         the server is named by its spring.application.name.",
        Apply::Fault(|c, v| c.between = Some(v.list())),
    ),
    relaxed(
        "target",
        Kind::Name,
        "(required for pause, server-restart, crash)",
        "Pause: the process that freezes, a [[peer]] name, an instance id (svc-0) or a \
         [[caller]] name; server-restart and crash: a [[peer]] name (without [[peer]], the \
         server's spring.application.name).",
        Apply::Fault(|c, v| c.target = Some(v.text())),
    ),
];

/// `[[fault]] kind`: the kinds of fault, as written in the file.
pub(super) const FAULT_KINDS: [&str; 4] = ["partition", "pause", "server-restart", "crash"];

/// One accepted key, for the docs/keys.md table and the `keys` subcommand.
///
/// The `clients` keys are also accepted in `[server]` and `[[peer]]` (the server's embedded
/// client), in `[[app]]` and in `[[caller]]`, where they override `[clients]`; the `server` keys
/// also in `[[peer]]`, where they override `[server]` for that peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDoc {
    /// `simulation`, `network`, `server`, `clients`, `peer`, `app`, `caller`, `shutdown`,
    /// `claim`, `restart`, `deploy` or `fault`.
    pub table: &'static str,
    /// Whether the table is an array of tables (`[[app]]`) rather than one table (`[server]`).
    pub array: bool,
    /// The spelling shown to users.
    pub key: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
    /// What the key accepts: "an integer in 1..=86400 (seconds)", "true or false", a list.
    pub allowed: String,
    /// The default as a TOML value (`900`, `"Hoxton"`), or `None` when it is words
    /// (`(required)`, `the train's`).
    pub value: Option<String>,
}

/// Every accepted key of every table, in file order.
pub fn key_catalogue() -> Vec<KeyDoc> {
    let mut docs: Vec<KeyDoc> = DEFS
        .iter()
        .map(|def| KeyDoc {
            table: def.section().name(),
            array: def.section().is_array(),
            key: def.key,
            default: def.default,
            meaning: def.meaning,
            allowed: def.kind.allowed(),
            value: def.kind.toml_literal(def.default),
        })
        .collect();
    // After the last [clients] key, the per-app forms of the Ribbon keys.
    let at = docs
        .iter()
        .rposition(|d| d.table == Section::Clients.name())
        .map_or(docs.len(), |i| i + 1);
    let per_app = DEFS.iter().filter_map(|def| {
        let leaf = def.ribbon_leaf()?;
        let key: &'static str = PER_APP_KEYS
            .iter()
            .find(|k| k.strip_prefix("<app>.ribbon.") == Some(leaf))?;
        Some(KeyDoc {
            table: Section::Clients.name(),
            array: false,
            key,
            default: "the ribbon.* value",
            meaning: "The Ribbon key for calls to one [[app]] only (in [clients] or [[caller]]).",
            allowed: def.kind.allowed(),
            value: None,
        })
    });
    let per_client = DEFS.iter().filter_map(|def| {
        let leaf = def.niws_leaf()?;
        let key: &'static str = PER_CLIENT_NIWS_KEYS
            .iter()
            .find(|k| k.strip_prefix("niws.loadbalancer.<app>.") == Some(leaf))?;
        Some(KeyDoc {
            table: Section::Clients.name(),
            array: false,
            key,
            default: def.default,
            meaning: "The breaker key Ribbon reads for calls to one [[app]] (in [clients] or \
                      [[caller]]); wins over niws.loadbalancer.default.* for that app.",
            allowed: def.kind.allowed(),
            value: None,
        })
    });
    let per_app: Vec<KeyDoc> = per_app.chain(per_client).collect();
    docs.splice(at..at, per_app);
    docs
}

/// The documented spellings of `niws.loadbalancer.<app>.<Key>` ([`KeyDef::niws_leaf`]).
static PER_CLIENT_NIWS_KEYS: &[&str] = &[
    "niws.loadbalancer.<app>.connectionFailureCountThreshold",
    "niws.loadbalancer.<app>.circuitTripTimeoutFactorSeconds",
    "niws.loadbalancer.<app>.circuitTripMaxTimeoutSeconds",
];

/// The documented spellings of `<app>.ribbon.<Key>` (the catalogue needs `'static` strings).
static PER_APP_KEYS: &[&str] = &[
    "<app>.ribbon.ServerListRefreshInterval",
    "<app>.ribbon.MaxAutoRetries",
    "<app>.ribbon.MaxAutoRetriesNextServer",
    "<app>.ribbon.OkToRetryOnAllOperations",
    "<app>.ribbon.ConnectTimeout",
    "<app>.ribbon.ReadTimeout",
];

/// One segment in relaxed form: lower case, without `-` and `_` (Spring Boot's relaxed binding
/// compares property names this way: `responseCacheUpdateIntervalMs`,
/// `response_cache_update_interval_ms` and `response-cache-update-interval-ms` are one key).
pub(super) fn canonical_segment(segment: &str) -> String {
    canonical(segment)
}

/// The bytes of `key` in relaxed form. Byte by byte, not char by char: `-`, `_` and the ASCII
/// letters are single bytes that never occur inside a multi-byte character, so what is kept
/// stays valid UTF-8. (Reading a scenario forms a few hundred of these, most for
/// [`canonical_names`]; as chars mapped per segment and joined they took 0.70 M instructions,
/// now 0.14 M: `run bench/oracle-kill9.toml --trials 1` 6.95 M -> 6.37 M, callgrind.)
fn relaxed_bytes(key: &str) -> impl Iterator<Item = u8> + '_ {
    key.bytes()
        .filter(|b| !matches!(b, b'-' | b'_'))
        .map(|b| b.to_ascii_lowercase())
}

/// Whether the dotted `path` is `key` in relaxed form: `canonical(&path.join(".")) ==
/// canonical(key)`, without forming either string.
pub(super) fn path_is(path: &[String], key: &str) -> bool {
    let dotted = path.iter().enumerate().flat_map(|(i, segment)| {
        let dot = (i > 0).then_some(b'.');
        dot.into_iter().chain(relaxed_bytes(segment))
    });
    dotted.eq(relaxed_bytes(key))
}

/// The relaxed forms ([`canonical`]) of the key and the aliases of `DEFS[index]`, computed
/// once: binding a key compares it with every definition's names, and forming them anew for
/// each key made most of the time of a file of many keys (50 000 unknown keys: 22 s in the
/// fuzz build).
pub(super) fn canonical_names(index: usize) -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        DEFS.iter()
            .map(|d| {
                std::iter::once(d.key)
                    .chain(d.aliases.iter().copied())
                    .map(canonical)
                    .collect()
            })
            .collect()
    })[index]
        .as_slice()
}

/// A dotted key in relaxed form, segment by segment.
pub(super) fn canonical(key: &str) -> String {
    let mut relaxed = Vec::with_capacity(key.len());
    relaxed.extend(relaxed_bytes(key));
    String::from_utf8(relaxed).expect("relaxing a key drops or lowers ASCII bytes only")
}

/// The candidate closest to `word` (compared case-insensitively), if any is reasonably close.
///
/// A candidate less than half or more than twice as long as `word` (in characters) is not
/// compared: it cannot score 0.5 (the edit distance is at least the difference in length, and
/// the score is one minus the distance over the longer length), and a comparison costs the
/// product of the lengths in time and memory (strsim's matrix). Without this, one 200 KB
/// unknown key in a scenario or a Spring file took seconds per candidate key (fuzzing, issue
/// 14); the suggestion is the same.
pub(super) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = word.to_ascii_lowercase();
    let len = word.chars().count();
    candidates
        .into_iter()
        .filter(|c| {
            let n = c.chars().count();
            2 * len.min(n) >= len.max(n)
        })
        .map(|c| {
            let score = strsim::normalized_damerau_levenshtein(&word, &c.to_ascii_lowercase());
            (score, c)
        })
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxed_forms_agree() {
        let kebab = canonical("eureka.server.response-cache-update-interval-ms");
        assert_eq!(
            canonical("eureka.server.responseCacheUpdateIntervalMs"),
            kebab
        );
        assert_eq!(
            canonical("eureka.server.response_cache_update_interval_ms"),
            kebab
        );
        assert_eq!(canonical("durationS"), canonical("duration-s"));
        // Only ASCII is lowered (as Spring relaxes names), never a multi-byte character.
        assert_eq!(canonical("Zone-É_x.Ab"), "zoneÉx.ab");
        let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(path_is(&path(&["Spring_Config"]), "spring-config"));
        assert!(path_is(&path(&["a-B", "cD"]), "ab.cd"));
        assert!(!path_is(&path(&["ab", "cd"]), "abcd"));
        assert!(!path_is(&path(&["ab"]), "ab.cd"));
        assert!(!path_is(&[], "ab"));
        assert!(path_is(&[], ""));
    }

    #[test]
    fn keys_are_unique_within_each_table() {
        for section in Section::ALL {
            let mut seen = Vec::new();
            for def in DEFS.iter().filter(|d| section.accepts(d.section())) {
                for key in std::iter::once(def.key).chain(def.aliases.iter().copied()) {
                    let c = canonical(key);
                    assert!(!seen.contains(&c), "{key} twice in {}", section.name());
                    seen.push(c);
                }
            }
        }
    }

    #[test]
    fn catalogue_lists_every_table_and_the_per_app_ribbon_keys() {
        let docs = key_catalogue();
        for section in Section::ALL {
            assert!(docs.iter().any(|d| d.table == section.name()));
        }
        let per_app = DEFS.iter().filter(|d| d.ribbon_leaf().is_some()).count();
        assert_eq!(
            per_app,
            PER_APP_KEYS.len(),
            "one <app>.ribbon.<Key> per Ribbon key"
        );
        let per_client = DEFS.iter().filter(|d| d.niws_leaf().is_some()).count();
        assert_eq!(
            per_client,
            PER_CLIENT_NIWS_KEYS.len(),
            "one niws.loadbalancer.<app>.<Key> per breaker key"
        );
        assert_eq!(docs.len(), DEFS.len() + per_app + per_client);
        let i = docs
            .iter()
            .position(|d| d.key == "<app>.ribbon.MaxAutoRetries");
        let j = docs.iter().position(|d| d.key == "name");
        assert!(i < j, "per-app Ribbon keys follow the [clients] keys");
        let k = docs
            .iter()
            .position(|d| d.key == "niws.loadbalancer.<app>.circuitTripMaxTimeoutSeconds");
        assert!(
            k.is_some() && k < j,
            "per-client breaker keys follow the [clients] keys"
        );
        let retries = docs.iter().find(|d| d.key == "ribbon.MaxAutoRetries");
        assert_eq!(
            retries.map(|d| d.allowed.as_str()),
            Some("an integer in 0..=100")
        );
    }

    /// A value of `kind` different from every default, so applying it must change something.
    fn sample(kind: Kind) -> Raw {
        match kind {
            Kind::Int { max, .. } => Raw::Int(i64::try_from(max.min(7)).unwrap_or(7)),
            Kind::Float { max, .. } => Raw::Float(max.min(0.5)),
            Kind::Bool => Raw::Bool(true),
            Kind::Name => Raw::Str("x".into()),
            Kind::Train => Raw::Str("Dalston".into()),
            Kind::Version => Raw::Str("1.2.3".into()),
            Kind::Strategy => Raw::Str("pause".into()),
            Kind::FinalStop => Raw::Str("kill-9".into()),
            Kind::Method => Raw::Str("POST".into()),
            Kind::Supplier => Raw::Str("health-check".into()),
            Kind::Choice(choices) => Raw::Str(choices[choices.len() - 1].into()),
            Kind::Apps => Raw::Str("svc".into()),
            Kind::List => Raw::Str("x".into()),
            Kind::Instance => Raw::Str("svc-0".into()),
            Kind::Number => Raw::Float(0.5),
            Kind::Text => Raw::Str("x".into()),
            Kind::Metric => Raw::Str("dead_hits".into()),
            Kind::Statistic => Raw::Str("p90".into()),
            Kind::Comparison => Raw::Str(">".into()),
            Kind::ShutdownRef => Raw::Str("svc-0".into()),
        }
    }

    /// Every definition's setter must write the value its kind produces: set each key to a
    /// sample value (or its opposite for booleans) and check the typed config changed. A key
    /// that allows its default only (`registry-sync-retries`: other values are refused, not
    /// simulated) has no other value to change it with.
    #[test]
    fn every_key_changes_the_typed_scenario() {
        let single = |kind: Kind| matches!(kind, Kind::Int { min, max, .. } if min == max);
        // Read before binding (`parse::spring` imports the files; its tests pin the effect).
        let imported = |key: &str| {
            [
                "spring-config",
                "spring-profiles",
                "preset",
                "env-file",
                "env.<NAME>",
            ]
            .contains(&key)
        };
        for def in DEFS.iter().filter(|d| !single(d.kind) && !imported(d.key)) {
            let val = def.kind.convert(&sample(def.kind), None).unwrap();
            let flipped = def
                .kind
                .convert(&Raw::Bool(false), None)
                .unwrap_or(val.clone());
            let changed = |v: &Val| match def.apply {
                Apply::Simulation(f) => {
                    let mut c = SimulationConfig::default();
                    f(&mut c, v);
                    c != SimulationConfig::default()
                }
                Apply::Network(f) => {
                    let mut c = NetworkConfig::default();
                    f(&mut c, v);
                    c != NetworkConfig::default()
                }
                Apply::Server(f) => {
                    let mut c = ServerConfig::default();
                    f(&mut c, v);
                    c != ServerConfig::default()
                }
                Apply::Client(f) => {
                    let mut c = ClientConfig::default();
                    f(&mut c, v);
                    c != ClientConfig::default()
                }
                Apply::ClientMap(f) => {
                    let mut c = ClientConfig::default();
                    f(&mut c, "z", v);
                    c != ClientConfig::default()
                }
                Apply::Ribbon(f) => {
                    let mut c = RibbonConfig::default();
                    f(&mut c, v);
                    c != RibbonConfig::default()
                }
                Apply::Peer(f) => {
                    let mut c = PeerDraft::default();
                    f(&mut c, v);
                    c != PeerDraft::default()
                }
                Apply::App(f) => {
                    let mut c = AppDraft::default();
                    f(&mut c, v);
                    c != AppDraft::default()
                }
                Apply::Caller(f) => {
                    let mut c = CallerDraft::default();
                    f(&mut c, v);
                    c != CallerDraft::default()
                }
                Apply::Shutdown(f) => {
                    let mut c = ShutdownDraft::default();
                    f(&mut c, v);
                    c != ShutdownDraft::default()
                }
                Apply::Claim(f) => {
                    let mut c = ClaimDraft::default();
                    f(&mut c, v);
                    c != ClaimDraft::default()
                }
                Apply::Restart(f) => {
                    let mut c = RestartDraft::default();
                    f(&mut c, v);
                    c != RestartDraft::default()
                }
                Apply::Deploy(f) => {
                    let mut c = DeployDraft::default();
                    f(&mut c, v);
                    c != DeployDraft::default()
                }
                Apply::Fault(f) => {
                    let mut c = FaultDraft::default();
                    f(&mut c, v);
                    c != FaultDraft::default()
                }
            };
            assert!(
                changed(&val) || changed(&flipped),
                "{} changes nothing",
                def.key
            );
        }
    }

    #[test]
    fn closest_needs_some_resemblance() {
        let keys = ["trials", "seed", "release"];
        assert_eq!(closest("trails", keys), Some("trials"));
        assert_eq!(closest("zzzzzzzzzz", keys), None);
    }

    /// The length filter keeps every suggestion a full comparison gives: a candidate at half
    /// or twice the word's length can still be the one (`ab` for `abab`: distance 2, 0.5).
    #[test]
    fn closest_compares_candidates_up_to_twice_or_half_the_length() {
        assert_eq!(closest("abab", ["ab"]), Some("ab"));
        assert_eq!(closest("ab", ["abab"]), Some("abab"));
        assert_eq!(closest("ababa", ["ab"]), None);
        assert_eq!(closest("", [""]), Some(""));
    }

    /// A 10 MB unknown key against every key of the table returns at once; compared in full
    /// it would take hours (10^7 characters times the ~60 of each of ~200 keys, in time and
    /// in memory per comparison).
    #[test]
    fn closest_of_a_huge_word_returns_at_once() {
        let word = format!("eureka.client.{}", "x".repeat(10_000_000));
        let started = std::time::Instant::now();
        assert_eq!(closest(&word, DEFS.iter().map(|d| d.key)), None);
        let took = started.elapsed();
        assert!(took.as_secs() < 5, "{took:?}");
    }
}
