//! The resource budget of a command, estimated from the validated scenario before any trial
//! runs (fuzzing found runs that exhausted memory): how many events a trial handles, how much memory it holds, and what the
//! whole run costs on this machine, so that a scenario the machine cannot run is refused in
//! well under a second with the figures and what to change, instead of aborting half-way.
//!
//! The estimate counts the periodic work of every actor, each from the rule that schedules it:
//! - a client that registers renews every `lease-renewal-interval-in-seconds` (the heartbeat
//!   task's run, the renew at the server, its reply and the task's timeout: 4 events,
//!   `DiscoveryClient#renew` under `TimedSupervisorTask`; an upper bound: the timeout is armed
//!   only where a `[[fault]]` may hold a call, `DiscoveryClient::calls_answered_in_time`) and
//!   runs its
//!   `InstanceInfoReplicator` every `instance-info-replication-interval-seconds` (1);
//! - a client that fetches runs its cache refresh every `registry-fetch-interval-seconds` (task,
//!   fetch, reply, timeout: 4); typically not an app instance on a steady start without faults
//!   (it calls nothing, so its fetches are left out: `DiscoveryClient::leave_out_fetches`),
//!   which the upper bound still counts;
//! - each server runs its eviction timer, its read-only cache timer and its renewal-threshold
//!   timer (1 each per period), and replicates each renew to every other peer in batches (2 per
//!   peer per renew, an upper bound: a batch carries several);
//! - each caller's route to an app refreshes its list every `ServerListRefreshInterval` or
//!   cache TTL (1), and in the per-request reference handles one event per millisecond with
//!   arrivals (at most one per ms); batched requests cost a few events per routing change,
//!   counted as 2 per list refresh.
//!
//! `estimate_matches_the_events_of_bundled_scenarios` holds the estimate to the events the
//! trials really handle (within a factor of 2 either way) for every bundled scenario.

use crate::eureka::RequestMode;
use crate::scenario::{ClientConfig, Scenario, Start};

/// Bytes a trial holds for each process of the fleet (its client, lease, registry entries in
/// every server, routes' lists), measured with mimalloc (which keeps more pages than glibc's
/// malloc did: 20 MB then): 10 000 instances on one server, 1 trial, 32.6 MB above the 15 MB of
/// an empty run (`/usr/bin/time -v`, kill-9.toml with `app[0].instances=10000`); 3 peers
/// (`bench/fleet-10k-3peers-24h.toml`, 10 060 processes) 93 MB above it, 3.1 KB per process
/// per server.
const BYTES_PER_PROCESS_PER_SERVER: u64 = 3_300;

/// What the process holds besides the trials (the binary, the thread stacks, the scenario, and
/// mimalloc's arenas, committed eagerly and backed by transparent huge pages: a run of 1 000
/// instances peaks at 33 to 39 MB, 13 MB with glibc's malloc; `MIMALLOC_ARENA_EAGER_COMMIT=0`
/// gives 16 MB back but made the production day's 20 minutes 1.1 to 1.6x slower).
pub const BASE_BYTES: u64 = 32 << 20;

/// Bytes of one observation kept in `explain`'s trace (`(SimTime, Observation)`, 56 bytes, and
/// the vector's growth).
const TRACE_BYTES_PER_EVENT: u64 = 112;

/// Estimated events per second per core, by a trial's memory (its working set): small worlds
/// stay in the CPU's caches, a fleet's registries do not. Each point is what `eureka-sim
/// bench` measured per trial on one thread of this project's 2-core machine (release build),
/// as the estimate's events over the measured seconds, so it also absorbs how far the event
/// count runs ahead of a trial that ends at rest: the bundled scenarios (0.1 to 0.2 MiB a
/// trial) 25 to 61 M/s, `bench/fleet-1k.toml` (3.2 MiB) 21 M/s, 10 000 instances on 3 peers
/// for an hour (95 MiB) 3.1 M/s, 100 000 for half an hour (944 MiB) 2.5 M/s. Between the
/// points the rate is interpolated in the logarithm of the bytes; beyond them it stays at the
/// last.
const EVENTS_PER_SECOND_BY_BYTES: [(f64, f64); 4] = [
    (1.0 * MIB, 35.0e6),
    (3.2 * MIB, 21.0e6),
    (95.0 * MIB, 3.1e6),
    (944.0 * MIB, 2.5e6),
];

const MIB: f64 = 1_048_576.0;

/// [`EVENTS_PER_SECOND_BY_BYTES`] at a trial of `bytes`.
fn events_per_second(bytes: u64) -> f64 {
    let b = (bytes as f64).max(1.0);
    let points = &EVENTS_PER_SECOND_BY_BYTES;
    if b <= points[0].0 {
        return points[0].1;
    }
    for pair in points.windows(2) {
        let ((b0, r0), (b1, r1)) = (pair[0], pair[1]);
        if b <= b1 {
            let x = (b.ln() - b0.ln()) / (b1.ln() - b0.ln());
            return (r0.ln() + x * (r1.ln() - r0.ln())).exp();
        }
    }
    points[points.len() - 1].1
}

/// Events per request stepped one by one (arrival, attempt, breaker, retry).
const STEPPED_EVENTS: f64 = 4.0;

/// The cost of one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialCost {
    /// Events to `duration-s`.
    pub events: u64,
    /// An upper bound: events up to `max-duration-s` (the longest a trial can wait for the
    /// news), with every request stepped one by one from the first stop on (Ribbon steps the
    /// requests while an untripped refusing server is in its round robin, and self-preservation
    /// can keep one there to the end: 113 000 events where 3 500 are periodic, in
    /// self-preservation.toml).
    pub events_max: u64,
    /// Memory the trial holds at its peak.
    pub bytes: u64,
}

/// The cost of one trial of `scenario` in request mode `mode`.
pub fn trial_cost(scenario: &Scenario, mode: RequestMode) -> TrialCost {
    let duration = scenario.simulation.duration_ms.max(1);
    let cap = scenario.simulation.max_duration_ms.max(duration);
    let per_ms = events_per_ms(scenario, mode, Typical::Not);
    let typical = Typical::Estimate {
        apps_fetch_nothing: app_fetches_left_out(scenario),
        idle_left_out: scenario.faults.is_empty(),
    };
    let typical_per_ms = events_per_ms(scenario, mode, typical);
    let servers = scenario.servers().len().max(1) as u64;
    let processes = fleet(scenario);
    let first_stop = scenario
        .shutdowns
        .iter()
        .map(|s| s.at_ms)
        .min()
        .unwrap_or(0);
    let stepped_ms = cap.saturating_sub(first_stop.min(cap)) as f64;
    let requests_per_ms: f64 = scenario
        .callers
        .iter()
        .map(|c| c.rate_per_s / 1000.0 * c.calls.len() as f64)
        .sum();
    TrialCost {
        events: (typical_per_ms * duration as f64).ceil() as u64,
        events_max: (per_ms * cap as f64 + STEPPED_EVENTS * requests_per_ms * stepped_ms).ceil()
            as u64,
        bytes: processes
            .saturating_mul(servers)
            .saturating_mul(BYTES_PER_PROCESS_PER_SERVER),
    }
}

/// The processes of the fleet: app instances, callers and peers.
pub fn fleet(scenario: &Scenario) -> u64 {
    let instances: u64 = scenario.apps.iter().map(|a| u64::from(a.instances)).sum();
    instances + scenario.callers.len() as u64 + scenario.peers.len() as u64
}

/// Whether a trial of `scenario` leaves out its app instances' fetches (they call nothing, and
/// no read changes a server: `DiscoveryClient::leave_out_fetches`), as far as the scenario
/// tells: a steady start, no `[[fault]]`, every server serving both keys from its read-only
/// cache (filled by the steady start), deltas on, reads never refused.
fn app_fetches_left_out(scenario: &Scenario) -> bool {
    scenario.simulation.start == Start::Steady
        && scenario.faults.is_empty()
        && scenario.servers().iter().all(|peer| {
            let server = &peer.server;
            server.use_read_only_response_cache
                && !server.disable_delta
                && server.default_open_for_traffic_count > 0
        })
}

/// Which events [`events_per_ms`] counts: every one (the upper bound), or those a trial
/// typically handles in the fast mode, which leaves out what no one observes.
#[derive(Clone, Copy)]
enum Typical {
    Not,
    Estimate {
        /// The app instances' fetches are left out ([`app_fetches_left_out`]).
        apps_fetch_nothing: bool,
        /// No `[[fault]]`: idle replicator runs are deferred
        /// (`DiscoveryClient::defer_idle_replicator`), and a found renew's reply is no event (`DiscoveryClient::renew_answered_ahead`).
        idle_left_out: bool,
    },
}

/// Events per simulated millisecond, summed over every periodic rule, as `typical` says.
fn events_per_ms(scenario: &Scenario, mode: RequestMode, typical: Typical) -> f64 {
    let servers = scenario.servers();
    let peers = servers.len().max(1) as f64;
    let (apps_fetch_nothing, idle_left_out) = match typical {
        Typical::Not => (false, false),
        Typical::Estimate {
            apps_fetch_nothing,
            idle_left_out,
        } => (apps_fetch_nothing, idle_left_out),
    };
    // Timer, renew, reply and the renew's replication; the reply is no event in the fast mode.
    let heartbeat_events = if idle_left_out { 3.0 } else { 4.0 };
    let replicator_runs = if idle_left_out { 0.0 } else { 1.0 };
    // Each client configuration, how many run it, and whether they fetch.
    let mut clients: Vec<(&ClientConfig, f64, bool)> = Vec::new();
    clients.extend(
        scenario
            .apps
            .iter()
            .map(|a| (&a.client, f64::from(a.instances), !apps_fetch_nothing)),
    );
    clients.extend(scenario.callers.iter().map(|c| (&c.client, 1.0, true)));
    clients.extend(servers.iter().map(|p| (&p.server.client, 1.0, true)));
    let (mut rate, mut renews) = (0.0, 0.0);
    for (c, count, fetches) in clients {
        // `DiscoveryClient`'s service-url refresh (`eureka.client.eureka-service-url-poll-
        // interval-seconds`).
        rate += count / ms(c.service_url_poll_interval_s * 1000);
        if c.register_with_eureka {
            let heartbeat = heartbeat_events / ms(c.lease_renewal_interval_s * 1000);
            renews += count / ms(c.lease_renewal_interval_s * 1000);
            let replicator = replicator_runs / ms(c.instance_info_replication_interval_s * 1000);
            rate += count * (heartbeat + replicator);
        }
        if c.fetch_registry && fetches {
            rate += count * 4.0 / ms(c.registry_fetch_interval_s * 1000);
        }
    }
    for peer in servers.iter() {
        let server = &peer.server;
        rate += 1.0 / ms(server.eviction_interval_ms);
        rate += 1.0 / ms(server.response_cache_update_interval_ms);
        rate += 1.0 / ms(server.renewal_threshold_update_interval_ms);
        rate += 1.0 / ms(server.delta_retention_timer_interval_ms);
    }
    rate += replication_per_ms(renews, peers, typical);
    for caller in &scenario.callers {
        for target in &caller.calls {
            let lb = &caller.client.load_balancer;
            let refresh = target
                .ribbon
                .server_list_refresh_interval_ms
                .min(lb.cache_ttl_ms.max(1));
            rate += 3.0 / ms(refresh);
            // Spring Cloud LoadBalancer's health-check supplier probes every instance of the
            // app each interval, and may refetch the instances too.
            if lb.configurations == crate::scenario::SupplierKind::HealthCheck {
                let instances = scenario
                    .apps
                    .get(target.app)
                    .map_or(1.0, |a| f64::from(a.instances));
                rate += 2.0 * instances / ms(lb.health_check_interval_ms);
                if lb.refetch_instances {
                    rate += 1.0 / ms(lb.refetch_instances_interval_ms);
                }
            }
            if mode == RequestMode::PerRequest {
                // One event per millisecond with arrivals: at most one per ms.
                rate += (caller.rate_per_s / 1000.0).min(1.0);
            }
        }
    }
    rate
}

/// Events per ms of replicating `renews` renews per ms to the other peers of a cluster of
/// `peers`: a batch's arrival and its answer. Each server takes `renews / peers` of them and
/// sends each to every other peer. The upper bound counts a batch per renew; typically a link
/// sends one batch per `MAX_BATCHING_DELAY_MS` while it has traffic, or one per `BATCH_SIZE`
/// tasks when that is more often (`PeerReplicator::next_due`), never more than one per task.
/// (Counting a batch per renew made the day of 10 000 instances on 3 peers 2.1e8 events where
/// it handles 6.1e7.)
fn replication_per_ms(renews: f64, peers: f64, typical: Typical) -> f64 {
    use crate::eureka::replication::{BATCH_SIZE, MAX_BATCHING_DELAY_MS};
    let links = peers * (peers - 1.0);
    let per_link = renews / peers;
    let batches = match typical {
        Typical::Not => per_link,
        Typical::Estimate { .. } => {
            per_link.min((per_link / BATCH_SIZE as f64).max(1.0 / MAX_BATCHING_DELAY_MS as f64))
        }
    };
    2.0 * links * batches
}

/// The most events a trial of `scenario` may handle before it is stopped as a runaway: 4 times
/// the upper bound [`TrialCost::events_max`] (which holds for every bundled scenario, tested),
/// and never below a million.
pub fn event_limit(scenario: &Scenario, mode: RequestMode) -> u64 {
    if let Some(limit) = scenario.simulation.event_limit {
        return limit;
    }
    trial_cost(scenario, mode)
        .events_max
        .saturating_mul(4)
        .max(1_000_000)
}

/// The first trial of `outcomes` that stopped at its event limit, as an error.
pub fn check_outcomes(outcomes: &[crate::experiment::TrialOutcome]) -> Result<(), BudgetError> {
    match outcomes
        .iter()
        .find_map(|o| Some((o.trial, o.over_event_limit?)))
    {
        Some((trial, limit)) => Err(BudgetError::TrialLimit { trial, limit }),
        None => Ok(()),
    }
}

/// A period in ms as a float, at least 1.
fn ms(period: u64) -> f64 {
    period.max(1) as f64
}

/// The whole run of a command: `trials` trials of `cost`, at most `threads` at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub cost: TrialCost,
    pub trials: u64,
    pub threads: usize,
    /// Extra bytes per trial the command keeps (`explain`'s trace).
    pub trace_bytes: u64,
}

impl Estimate {
    /// `trials` trials of `scenario` on `threads` threads.
    pub fn new(scenario: &Scenario, mode: RequestMode, trials: u64, threads: usize) -> Estimate {
        Estimate {
            cost: trial_cost(scenario, mode),
            trials,
            threads: threads.max(1),
            trace_bytes: 0,
        }
    }

    /// The same with every observation of each trial kept (`explain`).
    pub fn traced(mut self) -> Estimate {
        self.trace_bytes = self.cost.events.saturating_mul(TRACE_BYTES_PER_EVENT);
        self
    }

    /// Events of the whole run.
    pub fn events(&self) -> u64 {
        self.cost.events.saturating_mul(self.trials)
    }

    fn bytes_per_trial(&self) -> u64 {
        self.cost.bytes.saturating_add(self.trace_bytes)
    }

    /// Peak memory with `threads` trials at once.
    pub fn peak_bytes(&self, threads: usize) -> u64 {
        let at_once = (threads as u64).min(self.trials.max(1));
        BASE_BYTES.saturating_add(self.bytes_per_trial().saturating_mul(at_once))
    }

    /// Wall-clock seconds on `threads` cores (within 2x of `bench`'s measurements on the
    /// bundled scenarios and 1 000 to 100 000 instances).
    pub fn seconds(&self) -> f64 {
        let parallel = (self.threads as u64).min(self.trials.max(1)) as f64;
        self.events() as f64 / events_per_second(self.cost.bytes) / parallel
    }

    /// Checks the estimate against `limits`: the number of trials to run at once (fewer than
    /// the threads when memory is what limits), or why the run is refused.
    pub fn check(&self, limits: &Limits) -> Result<usize, BudgetError> {
        if let Some(max) = limits.max_events
            && self.events() > max
        {
            return Err(BudgetError::Events {
                estimate: self.events(),
                per_trial: self.cost.events,
                trials: self.trials,
                max,
            });
        }
        let Some(memory) = limits.max_memory else {
            return Ok(self.threads);
        };
        if self.peak_bytes(1) > memory {
            return Err(BudgetError::Memory {
                estimate: self.peak_bytes(1),
                max: memory,
                from: limits.memory_source,
            });
        }
        let room = (memory - BASE_BYTES) / self.bytes_per_trial().max(1);
        Ok((room as usize).clamp(1, self.threads))
    }

    /// One line for people: `about 2.3e9 events (4.1e5 a trial), 12 min on 2 cores, 75 MB`.
    pub fn describe(&self, threads: usize) -> String {
        format!(
            "about {} events ({} a trial x {} trials), {} on {} core{}, {} of memory",
            count(self.events()),
            count(self.cost.events),
            self.trials,
            duration(self.seconds()),
            threads,
            if threads == 1 { "" } else { "s" },
            bytes(self.peak_bytes(threads))
        )
    }
}

/// What a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    pub max_memory: Option<u64>,
    pub max_events: Option<u64>,
    /// Where `max_memory` came from, for the message.
    pub memory_source: MemorySource,
}

/// Where a memory limit came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemorySource {
    /// `--max-memory`.
    #[default]
    Flag,
    /// The memory available on this machine (`MemAvailable` of /proc/meminfo).
    Machine,
    /// What the process's control group allows (cgroup v2 `memory.max` less `memory.current`,
    /// the tightest of its ancestors; v1 `memory.limit_in_bytes` less `memory.usage_in_bytes`):
    /// a container's limit, under which the kernel kills the process.
    Cgroup,
    /// The address space left under `RLIMIT_AS` (`ulimit -v`), less what the process already
    /// maps (`VmSize`) and one allocator arena: beyond it an allocation fails and the process
    /// aborts ("memory allocation of N bytes failed").
    AddressSpace,
}

/// A run refused before it starts (exit 2).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BudgetError {
    #[error(
        "this run would handle about {} events ({} a trial x {trials} trials), more than \
         --max-events {max}; run fewer trials (--trials), a shorter simulation \
         (simulation.duration-s) or a smaller fleet, or raise --max-events",
        count(*estimate), count(*per_trial)
    )]
    Events {
        estimate: u64,
        per_trial: u64,
        trials: u64,
        max: u64,
    },
    #[error(
        "this run would take about {} on {threads} core{} ({} events: {} a trial x {trials} \
         trials), more than {}; run fewer trials (--trials), a shorter simulation \
         (simulation.duration-s) or a smaller fleet, or allow it with --max-time {}",
        duration(*estimate_s), if *threads == 1 { "" } else { "s" }, count(*events),
        count(*per_trial), match from {
            TimeSource::Default => format!("the default budget of {}", duration(*max_s)),
            TimeSource::Flag => format!("--max-time {}", duration(*max_s)),
        },
        allowance(*estimate_s)
    )]
    Time {
        estimate_s: f64,
        max_s: f64,
        from: TimeSource,
        threads: usize,
        events: u64,
        per_trial: u64,
        trials: u64,
    },
    #[error(
        "trial {trial} stopped after {limit} events, 4 times the most this scenario's periodic \
         rules should make: nothing was written; this is a bug of the model or of its \
         estimate (src/experiment/budget.rs), please report it with the scenario and seed"
    )]
    TrialLimit { trial: u32, limit: u64 },
    #[error(
        "one trial of this scenario would need about {} of memory, more than {}; run fewer \
         instances, peers or callers{}",
        bytes(*estimate), match from {
            MemorySource::Flag => format!("--max-memory {}", bytes(*max)),
            MemorySource::Machine => format!("the {} this machine has available", bytes(*max)),
            MemorySource::Cgroup => format!(
                "the {} left under this process's cgroup limit (memory.max)", bytes(*max)
            ),
            MemorySource::AddressSpace => format!(
                "the {} of address space left under this process's limit (ulimit -v, \
                 RLIMIT_AS)", bytes(*max)
            ),
        },
        match from {
            MemorySource::Flag => ", or raise --max-memory",
            MemorySource::Machine => "",
            MemorySource::Cgroup => ", or run in a container with more memory",
            MemorySource::AddressSpace => ", or raise the limit (ulimit -v)",
        }
    )]
    Memory {
        estimate: u64,
        max: u64,
        from: MemorySource,
    },
}

/// Where a time limit came from, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeSource {
    /// [`DEFAULT_MAX_SECONDS`].
    #[default]
    Default,
    /// `--max-time`.
    Flag,
}

/// The longest run a command starts without `--max-time`: 2 hours. A run estimated above it is
/// almost always a slip (a day of simulation at 1 000 requests a second, a trial count with
/// three zeros too many), and it is cheaper to say so at once than after an hour.
pub const DEFAULT_MAX_SECONDS: f64 = 2.0 * 3600.0;

/// A `--max-time` value that allows a run estimated at `seconds`: the estimate rounded up, in
/// whole hours above 2 h and whole minutes below.
fn allowance(seconds: f64) -> String {
    if seconds > 7200.0 {
        format!("{}h", (seconds / 3600.0).ceil() as u64 + 1)
    } else {
        format!("{}m", (seconds / 60.0).ceil() as u64 + 1)
    }
}

/// Parses a `--max-time` value: seconds, or a number with `s`, `m`, `h` or `d` (`90m`, `2h`,
/// `1.5d`); `none` for no limit (`None`).
pub fn parse_duration(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!("`{text}` is not a duration: a number with s, m, h or d (e.g. 90m, 10h), or none")
    })?;
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => {
            return Err(format!(
                "`{text}`: the unit must be s, m, h or d (e.g. 90m, 10h), or none for no limit"
            ));
        }
    };
    let seconds = value * factor;
    if !(seconds.is_finite() && seconds >= 1.0) {
        return Err(format!(
            "`{text}` is out of range (at least 1 s), or none for no limit"
        ));
    }
    Ok(Some(seconds))
}

/// `1.2e9`-style counts above a million, plain below.
fn count(n: u64) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("{:.1e}", n as f64)
    }
}

/// `75 MB`, `5.1 GB`.
pub fn bytes(n: u64) -> String {
    const MB: f64 = 1_048_576.0;
    let mb = n as f64 / MB;
    if mb < 1024.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{:.1} GB", mb / 1024.0)
    }
}

/// `40 s`, `12 min`, `3.5 h`.
fn duration(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{:.0} s", seconds.max(1.0))
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// Parses a `--max-memory` value: bytes, or with a unit `K`, `M`, `G` (powers of 1024; `KB`,
/// `MiB` and the like read the same).
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size: a number with K, M or G, e.g. 4G"))?;
    let factor: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => return Err(format!("`{text}`: the unit must be K, M, G or T (e.g. 4G)")),
    };
    let total = value * factor as f64;
    if !(total.is_finite() && total >= 1.0 && total < u64::MAX as f64) {
        return Err(format!("`{text}` is out of range (1 byte to 16 EiB)"));
    }
    Ok(total as u64)
}

/// The memory available on this machine (`MemAvailable` of /proc/meminfo), if it says.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kilobytes(&text, "MemAvailable:")
}

/// The memory this process may still use, and which limit says so: the least of the machine's
/// available memory, its control group's room and its address-space room
/// ([`MemorySource`]). A container's `memory.max` or a `ulimit -v` is far below the machine's
/// memory, and a run sized by the machine alone was killed or aborted there.
pub fn memory_room() -> Option<(u64, MemorySource)> {
    [
        available_memory().map(|b| (b, MemorySource::Machine)),
        cgroup_room().map(|b| (b, MemorySource::Cgroup)),
        address_space_room().map(|b| (b, MemorySource::AddressSpace)),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|(b, _)| *b)
}

/// The value of the `key` line of a /proc file in kB, in bytes.
fn kilobytes(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(key))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kb| kb * 1024)
}

/// The room under the process's cgroup memory limits: for cgroup v2, the tightest
/// `memory.max - memory.current` of its group and every ancestor (a limit set on a parent
/// binds its children); for v1, `memory.limit_in_bytes - memory.usage_in_bytes` (a limit near
/// 2^63 means none). `None` when no limit is set or the files cannot be read.
fn cgroup_room() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |path: &std::path::Path| std::fs::read_to_string(path).ok();
    let mut rooms = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if id == "0" && controllers.is_empty() {
            let mut dir = std::path::Path::new("/sys/fs/cgroup").join(path);
            loop {
                let max = read(&dir.join("memory.max"));
                let current = read(&dir.join("memory.current"));
                if let (Some(max), Some(current)) = (max, current) {
                    rooms.push(cgroup_v2_room(&max, &current));
                }
                if !dir.pop() || !dir.starts_with("/sys/fs/cgroup") {
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = std::path::Path::new("/sys/fs/cgroup/memory").join(path);
            let limit = read(&dir.join("memory.limit_in_bytes"));
            let usage = read(&dir.join("memory.usage_in_bytes"));
            if let (Some(limit), Some(usage)) = (limit, usage) {
                rooms.push(cgroup_v1_room(&limit, &usage));
            }
        }
    }
    rooms.into_iter().flatten().min()
}

/// cgroup v2: `max` (a byte count, or `max` for none) less `current`.
fn cgroup_v2_room(max: &str, current: &str) -> Option<u64> {
    let max: u64 = max.trim().parse().ok()?;
    let current: u64 = current.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// cgroup v1: the limit less the usage; a limit of 2^62 or more is the kernel's "none".
fn cgroup_v1_room(limit: &str, usage: &str) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?;
    let usage: u64 = usage.trim().parse().ok()?;
    (limit < 1 << 62).then(|| limit.saturating_sub(usage))
}

/// What mimalloc reserves at once when it needs more address space (`arena_reserve`, 1 GiB on
/// 64-bit systems): the room under `RLIMIT_AS` must leave one such reservation free.
const ARENA_RESERVE_BYTES: u64 = 1 << 30;

/// The address space left under the soft `RLIMIT_AS` (the "Max address space" line of
/// /proc/self/limits), less the process's `VmSize` and one allocator arena; `None` when
/// unlimited.
fn address_space_room() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    address_space_room_of(&limits, &status)
}

fn address_space_room_of(limits: &str, status: &str) -> Option<u64> {
    let soft = limits
        .lines()
        .find_map(|line| line.strip_prefix("Max address space"))?
        .split_whitespace()
        .next()?;
    let soft: u64 = soft.parse().ok()?; // "unlimited" does not parse: no limit
    let mapped = kilobytes(status, "VmSize:")?;
    Some(
        soft.saturating_sub(mapped)
            .saturating_sub(ARENA_RESERVE_BYTES),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::simulate;
    use crate::scenario::fixture::bundled;

    /// The estimate of a trial's events is within a factor of 2 of the events the trial really
    /// handles, for scenarios of every kind (one server and peers, Ribbon and LoadBalancer,
    /// restarts and deploys) whose requests are batched, run to `duration-s`.
    #[test]
    fn estimate_matches_the_events_of_bundled_scenarios() {
        for name in [
            "kill-9",
            "kill-15",
            "pause",
            "loadbalancer",
            "rolling-deploy",
            "cluster/three-peers-two-zones",
            "cluster/peer-gc-pause",
        ] {
            let s = bundled(name, &["simulation.end=\"duration\"".into()]);
            let real = simulate(&s, 0, 1).events as f64;
            let estimate = trial_cost(&s, RequestMode::Batched).events as f64;
            let ratio = estimate / real;
            assert!(
                (0.5..=2.0).contains(&ratio),
                "{name}: estimate {estimate}, real {real} (x{ratio:.2})"
            );
        }
    }

    /// The rate is each measured point at its bytes, falls as a trial's memory grows, and
    /// between two points lies between them (log-linear: halfway in log bytes between 3.2 and
    /// 95 MiB is sqrt(21 x 3.1) M/s); beyond the points it stays at the last one's.
    #[test]
    fn the_event_rate_follows_the_measured_points() {
        for (bytes, rate) in EVENTS_PER_SECOND_BY_BYTES {
            let at = events_per_second(bytes as u64);
            assert!((at / rate - 1.0).abs() < 1e-3, "{bytes}: {at} vs {rate}");
        }
        assert_eq!(events_per_second(1), 35.0e6);
        assert_eq!(events_per_second(1 << 40), 2.5e6);
        let mid = ((3.2 * MIB).ln() + (95.0 * MIB).ln()) / 2.0;
        let expected = (21.0e6_f64 * 3.1e6).sqrt();
        assert!((events_per_second(mid.exp() as u64) / expected - 1.0).abs() < 1e-3);
        let mut last = f64::INFINITY;
        for mib in [0.5, 2.0, 10.0, 100.0, 500.0, 2000.0] {
            let r = events_per_second((mib * MIB) as u64);
            assert!(r <= last, "{mib} MiB: {r} > {last}");
            last = r;
        }
    }

    /// Replication is counted in batches (hand-computed): 10 000 instances renewing every 30 s
    /// on 3 peers send 111 renews a second down each of the 6 links, fewer than 250 per 500 ms,
    /// so each link sends 2 batches a second, 24 events a second in all (arrival and answer);
    /// 3 instances on 2 peers send each renew alone (0.05 a second per link, 0.2 events a
    /// second). The upper bound counts a batch per renew to each other peer.
    #[test]
    fn replication_is_counted_in_batches() {
        let typical = Typical::Estimate {
            apps_fetch_nothing: true,
            idle_left_out: true,
        };
        let fleet = 10_000.0 / 30_000.0;
        assert!((replication_per_ms(fleet, 3.0, typical) - 0.024).abs() < 1e-12);
        assert!((replication_per_ms(fleet, 3.0, Typical::Not) - 4.0 * fleet).abs() < 1e-12);
        let few = 3.0 / 30_000.0;
        assert!((replication_per_ms(few, 2.0, typical) - 0.0002).abs() < 1e-12);
        assert_eq!(replication_per_ms(fleet, 1.0, typical), 0.0);
    }

    /// The upper bound holds for every bundled scenario, the incidents and clusters included,
    /// in both request modes (self-preservation steps its requests to the end).
    #[test]
    fn the_upper_bound_holds_for_every_bundled_scenario() {
        let names = crate::scenario::fixture::bundled_stems();
        assert!(names.len() > 20, "{names:?}");
        for name in names {
            let s = bundled(&name, &[]);
            for mode in [RequestMode::Batched, RequestMode::PerRequest] {
                let real = crate::experiment::simulate_with(&s, 0, 1, mode).events;
                let bound = trial_cost(&s, mode).events_max;
                assert!(
                    real <= bound,
                    "{name} {mode:?}: {real} events, bound {bound}"
                );
            }
        }
    }

    /// The per-request reference handles one event per millisecond with arrivals: at 20
    /// requests/s, some 20 a second more than batched.
    #[test]
    fn per_request_mode_adds_the_arrivals() {
        let s = bundled("kill-9", &[]);
        let batched = trial_cost(&s, RequestMode::Batched).events;
        let per_request = trial_cost(&s, RequestMode::PerRequest).events;
        let arrivals = 20 * s.simulation.duration_ms / 1000;
        // Each is rounded up from a float sum.
        assert!((per_request - batched).abs_diff(arrivals) <= 1);
    }

    /// Cost grows linearly with the fleet and the simulated time.
    #[test]
    fn cost_is_linear_in_instances_and_time() {
        let small = trial_cost(
            &bundled("kill-9", &["app[0].instances=1000".into()]),
            RequestMode::Batched,
        );
        let large = trial_cost(
            &bundled("kill-9", &["app[0].instances=10000".into()]),
            RequestMode::Batched,
        );
        let ratio = large.events as f64 / small.events as f64;
        assert!((9.0..10.5).contains(&ratio), "{ratio}");
        assert!((9.0..10.5).contains(&(large.bytes as f64 / small.bytes as f64)));
        let long = trial_cost(
            &bundled(
                "kill-9",
                &[
                    "app[0].instances=1000".into(),
                    "simulation.duration-s=1800".into(),
                ],
            ),
            RequestMode::Batched,
        );
        assert!(long.events.abs_diff(2 * small.events) <= 2);
    }

    /// Memory limits: refused with the estimate when one trial does not fit; fewer trials at
    /// once when several do not.
    #[test]
    fn memory_refuses_or_narrows() {
        let s = bundled("kill-9", &["app[0].instances=10000".into()]);
        let e = Estimate::new(&s, RequestMode::Batched, 100, 8);
        let one = e.peak_bytes(1);
        let limits = |max| Limits {
            max_memory: Some(max),
            ..Limits::default()
        };
        assert_eq!(e.check(&limits(u64::MAX)), Ok(8));
        assert_eq!(e.check(&limits(one + e.cost.bytes)), Ok(2));
        let err = e.check(&limits(one - 1)).unwrap_err();
        assert!(matches!(err, BudgetError::Memory { .. }), "{err}");
        assert!(err.to_string().contains("--max-memory"), "{err}");
    }

    #[test]
    fn events_limit_names_the_estimate() {
        let s = bundled("kill-9", &[]);
        let e = Estimate::new(&s, RequestMode::Batched, 1_000_000, 2);
        let limits = Limits {
            max_events: Some(1_000_000),
            ..Limits::default()
        };
        let err = e.check(&limits).unwrap_err().to_string();
        assert!(err.contains("x 1000000 trials"), "{err}");
        assert!(err.contains("--max-events 1000000"), "{err}");
    }

    /// A world stopped at a small event limit says so in its outcome, and the check names the
    /// trial; the limit itself is above what every trial of kill-9.toml handles.
    #[test]
    fn a_trial_over_its_event_limit_is_stopped_and_reported() {
        use crate::eureka::{Layout, World};
        use crate::experiment::{MetricsObserver, simulate};
        let s = bundled("kill-9", &[]);
        let metrics = MetricsObserver::new(&Layout::new(&s));
        let (_, ran) = World::with_mode(&s, 7, metrics, RequestMode::Batched)
            .limit_events(100)
            .run();
        assert!(ran.over_limit);
        assert_eq!(ran.events, 100);
        let mut outcome = simulate(&s, 3, 7);
        assert_eq!(outcome.over_event_limit, None);
        assert!(outcome.events < event_limit(&s, RequestMode::Batched));
        assert_eq!(check_outcomes(std::slice::from_ref(&outcome)), Ok(()));
        outcome.over_event_limit = Some(100);
        let err = check_outcomes(&[outcome]).unwrap_err().to_string();
        assert!(err.starts_with("trial 3 stopped after 100 events"), "{err}");
    }

    #[test]
    fn memory_sizes_parse() {
        assert_eq!(parse_memory("4G"), Ok(4 << 30));
        assert_eq!(parse_memory("512MiB"), Ok(512 << 20));
        assert_eq!(parse_memory("1.5 GB"), Ok(3 << 29));
        assert_eq!(parse_memory("100"), Ok(100));
        assert!(parse_memory("4X").unwrap_err().contains("unit"));
        assert!(parse_memory("lots").is_err());
        assert!(parse_memory("0").is_err());
        assert!(parse_memory("1e300G").is_err());
    }

    /// `--max-time`: seconds, or with s, m, h or d; `none` lifts the limit; nonsense is refused
    /// with what is allowed.
    #[test]
    fn parse_duration_reads_the_units() {
        assert_eq!(parse_duration("90"), Ok(Some(90.0)));
        assert_eq!(parse_duration("90s"), Ok(Some(90.0)));
        assert_eq!(parse_duration("30m"), Ok(Some(1800.0)));
        assert_eq!(parse_duration("2h"), Ok(Some(7200.0)));
        assert_eq!(parse_duration("1.5d"), Ok(Some(129_600.0)));
        assert_eq!(parse_duration("none"), Ok(None));
        assert!(
            parse_duration("2 weeks")
                .unwrap_err()
                .contains("s, m, h or d")
        );
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("not a duration")
        );
        assert!(parse_duration("0").unwrap_err().contains("at least 1 s"));
    }

    /// The refusal's `--max-time` value allows the run it refused: above the estimate, rounded
    /// up (8 684.2 h -> 8686h; 3 h -> 4h; 25 min -> 26m).
    #[test]
    fn the_allowance_covers_the_estimate() {
        assert_eq!(allowance(8_684.2 * 3600.0), "8686h");
        assert_eq!(allowance(3.0 * 3600.0), "4h");
        assert_eq!(allowance(25.0 * 60.0), "26m");
        for seconds in [61.0, 7199.0, 7201.0, 1e7] {
            let allowed = parse_duration(&allowance(seconds)).unwrap().unwrap();
            assert!(allowed > seconds, "{seconds} -> {allowed}");
        }
    }

    /// The address-space room from the kernel's own lines: a 6 GiB `ulimit -v` (6 291 456 kB)
    /// with 1 GiB mapped leaves 5 GiB less the 1 GiB arena reservation; "unlimited" is no
    /// limit.
    #[test]
    fn the_address_space_room_reads_proc_self() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         6442450944           unlimited            bytes\n";
        let status = "Name:\teureka-sim\nVmSize:\t 1048576 kB\n";
        assert_eq!(address_space_room_of(limits, status), Some(4 << 30));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_room_of(unlimited, status), None);
    }

    /// cgroup rooms: v2 `max` is no limit; v1's 2^63-ish limit is no limit.
    #[test]
    fn cgroup_rooms_read_the_kernels_files() {
        assert_eq!(cgroup_v2_room("max\n", "1000\n"), None);
        assert_eq!(
            cgroup_v2_room("6442450944\n", "1073741824\n"),
            Some(5 << 30)
        );
        assert_eq!(cgroup_v1_room("9223372036854771712\n", "5\n"), None);
        assert_eq!(
            cgroup_v1_room("2147483648\n", "1073741824\n"),
            Some(1 << 30)
        );
    }
}
