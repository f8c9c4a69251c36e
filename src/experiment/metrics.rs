//! Turns one trial's observations into the metrics of each shutdown.

use crate::engine::SimTime;
use crate::eureka::{Holding, Layout, Observation, Observer, ProcessId, RouteId, ServerId};
use crate::scenario::Metric;

use super::capacity::LostCapacity;

/// Whether a process is UP in one view, and since when it is not.
#[derive(Debug, Clone, Copy, Default)]
struct Presence {
    up: bool,
    ever: bool,
    last_down: Option<SimTime>,
    /// The view's server went down while listing it, and no incarnation listed it since.
    lost: bool,
}

impl Presence {
    fn set(&mut self, at: SimTime, up: bool) {
        if up {
            self.up = true;
            self.ever = true;
        } else if self.up {
            self.up = false;
            self.last_down = Some(at);
        }
    }

    /// The view's server went down (`Observation::ServerDown`). Going down removes nothing: a
    /// crashed server lists nothing any more, a restarted one starts empty, and neither told
    /// anyone the instance left. So a view that listed it forgets it ever did: it counts again
    /// only if a new incarnation lists it (then its removal is that incarnation's), and a view
    /// that had already dropped it keeps that removal.
    fn server_down(&mut self) {
        if self.up {
            *self = Presence {
                lost: true,
                ..Presence::default()
            };
        }
    }
}

/// The first instant from which the process is no longer UP in any of `views`; `None` while it
/// still is in one at the end, or if no view ever had it. A view whose server went down while
/// listing it ([`Presence::server_down`]) is left out: "left the registry" is every live
/// server's, and with none left, [`Removal::ServerDown`].
fn removed_everywhere<'a>(views: impl IntoIterator<Item = &'a Presence>) -> Removal {
    let mut latest: Option<SimTime> = None;
    let mut lost = false;
    for view in views {
        if !view.ever {
            lost |= view.lost;
            continue;
        }
        if view.up {
            return Removal::StillPresent;
        }
        latest = latest.max(view.last_down);
    }
    match latest {
        Some(at) => Removal::At(at),
        None if lost => Removal::ServerDown,
        None => Removal::NeverPresent,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Removal {
    At(SimTime),
    StillPresent,
    NeverPresent,
    /// Every view that listed it lost it with its server (crashed, or restarted empty).
    ServerDown,
}

/// Why a trial has no value of a metric (an empty cell in `trials.csv`). The removal metrics
/// (`exposure_ms`, `*_removed_ms`) are measured from the stop and end when the last view drops
/// the instance; `last_dead_hit_ms` needs a dead hit. A trial waits for the removals up to
/// `max-duration-s`; a view that still lists the instance then says why ([`Holding`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unresolved {
    /// `last_dead_hit_ms`: no request was refused by the instance.
    NoDeadHit,
    /// The stop came before the instance ever served: no stop, so nothing is measured from it
    /// (it never stopped serving and was never UP in the registry).
    StoppedBeforeServing,
    /// It served and did not stop serving in the trial (a `pause` with `resume-s`, or a stop that
    /// falls after the end), so nothing is measured from a stop.
    NotStopped,
    /// A `[[restart]]` began a new incarnation while a view still listed the old one; the
    /// metrics froze then (they describe the incarnation that stopped).
    Restarted,
    /// This view never listed the instance (e.g. it was never UP in the registry).
    NeverListed,
    /// Every server that listed the instance went down while listing it (a crash, or a
    /// restart whose new incarnation never listed it): no live registry ever removed it.
    ServerDown,
    /// A view still listed the instance at `max-duration-s`, for this reason.
    Held(Holding),
    /// A view still listed the instance when the trial ended and no reason was found.
    ListedAtEnd,
}

/// As its [`Unresolved::name`], the word `trials.csv` writes (a shard file is read by `merge`
/// of the same version, which checks that).
impl serde::Serialize for Unresolved {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Unresolved {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Unresolved::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown unresolved reason {name:?}")))
    }
}

/// `Option<ServerId>` as an optional index: `ServerId` (in `eureka/`) serializes but does not
/// deserialize, and a shard file needs both.
mod server_index {
    use crate::eureka::ServerId;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(id: &Option<ServerId>, s: S) -> Result<S::Ok, S::Error> {
        id.map(|id| id.0).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ServerId>, D::Error> {
        Ok(Option::<u32>::deserialize(d)?.map(ServerId))
    }
}

impl Unresolved {
    /// Every reason, in the order reports list them.
    pub const ALL: [Unresolved; 15] = [
        Unresolved::NoDeadHit,
        Unresolved::StoppedBeforeServing,
        Unresolved::NotStopped,
        Unresolved::Restarted,
        Unresolved::NeverListed,
        Unresolved::ServerDown,
        Unresolved::Held(Holding::StillRenewing),
        Unresolved::Held(Holding::Override),
        Unresolved::Held(Holding::LeaseNotExpired),
        Unresolved::Held(Holding::SelfPreservation),
        Unresolved::Held(Holding::ZeroThreshold),
        Unresolved::Held(Holding::EvictionPending),
        Unresolved::Held(Holding::ResponseCache),
        Unresolved::Held(Holding::Caller),
        Unresolved::ListedAtEnd,
    ];

    /// The name in `trials.csv`, `summary.csv` and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Unresolved::NoDeadHit => "no_dead_hit",
            Unresolved::StoppedBeforeServing => "stopped_before_serving",
            Unresolved::NotStopped => "not_stopped",
            Unresolved::Restarted => "restarted",
            Unresolved::NeverListed => "never_listed",
            Unresolved::ServerDown => "server_down",
            Unresolved::Held(holding) => holding.name(),
            Unresolved::ListedAtEnd => "listed_at_end",
        }
    }

    /// Words for people.
    pub fn label(self) -> &'static str {
        match self {
            Unresolved::NoDeadHit => "no dead hit",
            Unresolved::StoppedBeforeServing => "stopped before it ever served",
            Unresolved::NotStopped => "did not stop serving in the trial",
            Unresolved::Restarted => "restarted while still listed",
            Unresolved::NeverListed => "never listed",
            Unresolved::ServerDown => "its servers went down while listing it",
            Unresolved::Held(holding) => holding.label(),
            Unresolved::ListedAtEnd => "still listed at the end",
        }
    }
}

/// The metrics measured from the stop to a view's removal, in the order of
/// [`ShutdownOutcome::removal_unresolved`].
pub const REMOVAL_METRICS: [Metric; 5] = [
    Metric::ExposureMs,
    Metric::ServerRemovedMs,
    Metric::ReadonlyRemovedMs,
    Metric::ClientRemovedMs,
    Metric::RibbonRemovedMs,
];

/// `count` dead hits on a shutdown's instance from `since_ms` to `last_ms` (absolute ms of the
/// trial): one `Observation::DeadHits` (a batched count over its span), or the single refused
/// attempts (`Observation::Attempt`) of one instant, summed. What the timeline of `run`'s report
/// draws (`report::explain::timeline_plot`, which spreads a count over its span). Summing the
/// attempts of one instant draws the same plot: a point's hits fall in one bin either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeadHitSpan {
    pub since_ms: u64,
    pub last_ms: u64,
    pub count: u64,
}

/// The measured outcome of one shutdown in one trial. Times are ms relative to `t_stop`.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ShutdownOutcome {
    /// When the instance stopped serving (absolute ms); `None` if it never did in the trial.
    pub t_stop_ms: Option<u64>,
    pub exposure_ms: Option<i64>,
    pub dead_hits: u64,
    pub errors: u64,
    pub last_dead_hit_ms: Option<i64>,
    pub server_removed_ms: Option<i64>,
    pub readonly_removed_ms: Option<i64>,
    pub client_removed_ms: Option<i64>,
    pub ribbon_removed_ms: Option<i64>,
    /// Requests in flight on the instance that failed when its web server stopped
    /// (`[[app]] service-time-ms`; kill -9, immediate shutdown, graceful timeout).
    pub inflight_failed: u64,
    /// The total time callers waited on connect timeouts to the instance (`[[shutdown]] host =
    /// "vanishes"`: each attempt waits `ConnectTimeout`, cut at a Hystrix timeout; FACTS.md §7,
    /// §8), over all its attempts after it stopped serving.
    pub timeout_delay_ms: u64,
    /// Why each of [`REMOVAL_METRICS`] has no value (`None` where it has one).
    pub removal_unresolved: [Option<Unresolved>; 5],
    /// Live instances of the instance's app missing from its callers' balancer lists over the
    /// trial, in instance-ms, summed over the callers (`capacity.rs`: serving, UP in some
    /// server's registry, listed before by that caller).
    pub lost_capacity_ms: u64,
    /// Per caller process that calls the instance's app, in layout order (`callers.csv`).
    pub callers: Vec<CallerOutcome>,
    /// Per Eureka server, by `ServerId` (`servers.csv`).
    pub servers: Vec<ServerOutcome>,
}

/// In how many of `shutdowns` (one shutdown's outcomes over the trials) the answer that dropped
/// the instance from caller `caller`'s Eureka cache ([`CallerOutcome::server`]) came from each
/// of the `servers` Eureka servers, by `ServerId`.
pub fn news_by_server(shutdowns: &[&ShutdownOutcome], caller: usize, servers: usize) -> Vec<usize> {
    (0..servers)
        .map(|k| {
            let from_k = Some(ServerId(k as u32));
            shutdowns
                .iter()
                .filter(|o| o.callers.get(caller).and_then(|c| c.server) == from_k)
                .count()
        })
        .collect()
}

/// What one caller saw of a stopped instance (a row of `callers.csv`). Times are ms relative to
/// the stop, as in [`ShutdownOutcome`]; a removal is `None` while the caller still listed it.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct CallerOutcome {
    /// The caller's process.
    pub process: ProcessId,
    /// The server whose answer (a full or delta fetch) last dropped the instance from the
    /// caller's Eureka cache; `None` if the cache still listed it, or never did.
    #[serde(with = "server_index")]
    pub server: Option<ServerId>,
    /// How long the caller's balancers kept the instance after it stopped (0 if they never
    /// listed it). A caller that died (a zone outage) kept it until its death at most: its
    /// cache and balancers list nothing from then on.
    pub exposure_ms: Option<i64>,
    /// Its requests' attempts refused by the instance.
    pub dead_hits: u64,
    /// Its requests that failed after their retries, their first attempt to the instance.
    pub errors: u64,
    pub last_dead_hit_ms: Option<i64>,
    /// When its Eureka cache dropped the instance.
    pub client_removed_ms: Option<i64>,
    /// When the last of its balancers (one per route to the instance's app) dropped it.
    pub ribbon_removed_ms: Option<i64>,
    /// Its lost capacity over its routes to the instance's app, in instance-ms (`capacity.rs`).
    pub lost_capacity_ms: u64,
}

/// What one Eureka server did with a stopped instance (a row of `servers.csv`). Going down is
/// not a removal: a server that went down while listing the instance has empty cells unless
/// a later incarnation listed it again and dropped it ([`Presence::server_down`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ServerOutcome {
    /// When its registry stopped listing the instance UP.
    pub server_removed_ms: Option<i64>,
    /// When what its `GET /apps` serves stopped listing it UP.
    pub readonly_removed_ms: Option<i64>,
}

impl CallerOutcome {
    /// The metrics measured per caller, in `callers.csv`'s order.
    pub const METRICS: [Metric; 7] = [
        Metric::ExposureMs,
        Metric::DeadHits,
        Metric::Errors,
        Metric::LastDeadHitMs,
        Metric::ClientRemovedMs,
        Metric::RibbonRemovedMs,
        Metric::LostCapacityMs,
    ];

    /// The value of `metric` for this caller; `None` is "no value" (an empty CSV cell), and
    /// so is a metric that is not measured per caller (not in [`Self::METRICS`]).
    pub fn value(&self, metric: Metric) -> Option<i64> {
        match metric {
            Metric::ExposureMs => self.exposure_ms,
            Metric::DeadHits => Some(self.dead_hits as i64),
            Metric::Errors => Some(self.errors as i64),
            Metric::LastDeadHitMs => self.last_dead_hit_ms,
            Metric::ClientRemovedMs => self.client_removed_ms,
            Metric::RibbonRemovedMs => self.ribbon_removed_ms,
            Metric::LostCapacityMs => Some(self.lost_capacity_ms as i64),
            Metric::InflightFailed
            | Metric::TimeoutDelayMs
            | Metric::ServerRemovedMs
            | Metric::ReadonlyRemovedMs => None,
        }
    }
}

impl ShutdownOutcome {
    /// The value of `metric` in this outcome; `None` is "no value" (an empty CSV cell).
    pub fn value(&self, metric: Metric) -> Option<i64> {
        match metric {
            Metric::ExposureMs => self.exposure_ms,
            Metric::DeadHits => Some(self.dead_hits as i64),
            Metric::Errors => Some(self.errors as i64),
            Metric::LastDeadHitMs => self.last_dead_hit_ms,
            Metric::ServerRemovedMs => self.server_removed_ms,
            Metric::ReadonlyRemovedMs => self.readonly_removed_ms,
            Metric::ClientRemovedMs => self.client_removed_ms,
            Metric::RibbonRemovedMs => self.ribbon_removed_ms,
            Metric::InflightFailed => Some(self.inflight_failed as i64),
            Metric::TimeoutDelayMs => Some(self.timeout_delay_ms as i64),
            Metric::LostCapacityMs => Some(self.lost_capacity_ms as i64),
        }
    }

    /// Why `metric` has no value in this outcome; `None` when it has one (counts always do).
    pub fn unresolved(&self, metric: Metric) -> Option<Unresolved> {
        if self.value(metric).is_some() {
            return None;
        }
        if metric == Metric::LastDeadHitMs {
            return Some(Unresolved::NoDeadHit);
        }
        let i = REMOVAL_METRICS.iter().position(|&m| m == metric)?;
        self.removal_unresolved[i]
    }

    /// The reasons the removal metrics are empty, each once, in [`Unresolved::ALL`] order
    /// (empty when all have a value): the `unresolved_reason` of `trials.csv`.
    pub fn unresolved_reasons(&self) -> Vec<Unresolved> {
        Unresolved::ALL
            .into_iter()
            .filter(|&r| self.has_unresolved_reason(r))
            .collect()
    }

    /// Whether `reason` is one of [`ShutdownOutcome::unresolved_reasons`], without building
    /// the list: the summary asks it of every trial for every reason.
    pub fn has_unresolved_reason(&self, reason: Unresolved) -> bool {
        self.removal_unresolved.contains(&Some(reason))
    }
}

/// One caller of the target's app: its Eureka cache's view of the target and what its requests
/// met.
#[derive(Debug, Clone, Default)]
struct CallerTracker {
    process: ProcessId,
    cache: Presence,
    /// The server whose answer last took the target out of the cache.
    removed_by: Option<ServerId>,
    dead_hits: u64,
    errors: u64,
    last_dead_hit: Option<SimTime>,
    /// The caller died (a zone outage): its views ended then.
    stopped: bool,
}

/// One route to the target's app: its balancer's view, and its caller (an index into
/// `TargetTracker::callers`).
#[derive(Debug, Clone, Default)]
struct RouteView {
    route: RouteId,
    caller: usize,
    view: Presence,
}

#[derive(Debug, Default)]
struct TargetTracker {
    t_stop: Option<SimTime>,
    /// Per Eureka server (`ServerId` order): its registry's view and its served view.
    registry: Vec<Presence>,
    served: Vec<Presence>,
    /// The callers that call the target's app, in layout order.
    callers: Vec<CallerTracker>,
    /// The routes to the target's app, with their balancer views.
    ribbons: Vec<RouteView>,
    dead_hits: u64,
    errors: u64,
    last_dead_hit: Option<SimTime>,
    inflight_failed: u64,
    timeout_delay_ms: u64,
    /// The process restarted: the outcome is that of the incarnation that stopped.
    frozen: bool,
    /// `/resume` made it serve again after its stop.
    resumed: bool,
    /// Why a view still listed it when the trial ended.
    holding: Option<Holding>,
    /// Every dead hit on the process, before its stop and after a restart too (unlike
    /// `dead_hits`): the timeline draws what the process refused. As many as the counted spans
    /// in batched mode (a few per routing change), not one per request.
    hit_spans: Vec<DeadHitSpan>,
}

/// Observer that keeps just what the metrics need.
#[derive(Debug)]
pub struct MetricsObserver {
    targets: Vec<TargetTracker>,
    capacity: LostCapacity,
    /// For each process, the index of its tracker, if it is a shutdown target.
    target_of: Vec<Option<usize>>,
}

impl MetricsObserver {
    pub fn new(layout: &Layout) -> MetricsObserver {
        let mut target_of = vec![None; layout.processes.len()];
        let servers = layout.server_processes().len();
        let targets = layout
            .targets
            .iter()
            .enumerate()
            .map(|(t, &process)| {
                if let Some(slot) = target_of.get_mut(process) {
                    *slot = Some(t);
                }
                let application = layout.processes.get(process).map(|p| p.application);
                let routes: Vec<_> = layout
                    .routes
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| Some(r.application) == application)
                    .collect();
                let mut callers: Vec<CallerTracker> = Vec::new();
                let mut ribbons = Vec::new();
                for (route, r) in routes {
                    let caller = match callers.iter().position(|c| c.process == r.process) {
                        Some(c) => c,
                        None => {
                            callers.push(CallerTracker {
                                process: r.process,
                                ..CallerTracker::default()
                            });
                            callers.len() - 1
                        }
                    };
                    ribbons.push(RouteView {
                        route,
                        caller,
                        view: Presence::default(),
                    });
                }
                TargetTracker {
                    registry: vec![Presence::default(); servers],
                    served: vec![Presence::default(); servers],
                    callers,
                    ribbons,
                    ..TargetTracker::default()
                }
            })
            .collect();
        MetricsObserver {
            targets,
            target_of,
            capacity: LostCapacity::new(layout),
        }
    }

    fn tracker(&mut self, process: ProcessId) -> Option<&mut TargetTracker> {
        let t = (*self.target_of.get(process)?)?;
        self.targets.get_mut(t).filter(|t| !t.frozen)
    }

    /// `count` dead hits of `route` on `process` from `since` to `last` (one refused attempt:
    /// `since == last`). Out of line: a few calls a trial in batched mode, kept off `observe`'s
    /// hot path (inlined, its span bookkeeping cost every observation about 8 instructions).
    #[inline(never)]
    fn dead_hits(
        &mut self,
        route: RouteId,
        process: ProcessId,
        count: u64,
        since: SimTime,
        last: SimTime,
    ) {
        self.record_hits(process, since, last, count);
        if let Some(t) = self.tracker(process)
            && t.t_stop.is_some()
        {
            t.dead_hits(route, count, last);
        }
    }

    /// Keeps `count` dead hits on `process` from `since` to `last` if it is a shutdown's
    /// instance, whatever the state of its metrics (see `TargetTracker::hit_spans`).
    fn record_hits(&mut self, process: ProcessId, since: SimTime, last: SimTime, count: u64) {
        let Some(Some(t)) = self.target_of.get(process) else {
            return;
        };
        let spans = &mut self.targets[*t].hit_spans;
        let (since_ms, last_ms) = (since.ms(), last.ms());
        if since_ms == last_ms
            && let Some(prev) = spans.last_mut()
            && prev.since_ms == last_ms
            && prev.last_ms == last_ms
        {
            // Single attempts of one instant (per-request mode): one point with their sum.
            prev.count += count;
            return;
        }
        spans.push(DeadHitSpan {
            since_ms,
            last_ms,
            count,
        });
    }

    /// The outcome of each shutdown, in scenario order, for a trial that ended at `end`.
    pub fn outcomes(&self, end: SimTime) -> Vec<ShutdownOutcome> {
        let areas = self.capacity.areas(end);
        self.targets.iter().map(|t| t.outcome(&areas)).collect()
    }

    /// The dead hits on each shutdown's instance, in scenario order and in the order they came
    /// (what `run`'s timeline draws for its median trial); leaves none behind.
    pub fn take_hit_spans(&mut self) -> Vec<Vec<DeadHitSpan>> {
        self.targets
            .iter_mut()
            .map(|t| std::mem::take(&mut t.hit_spans))
            .collect()
    }

    /// What a server lists and serves, and a server going down (`EurekaServer::go_down`).
    fn observe_server(&mut self, at: SimTime, observation: Observation) {
        match observation {
            // Before the server's own `Registry`/`Served` drops (`EurekaServer::go_down`),
            // which then find nothing listed: going down is no removal.
            Observation::ServerDown { server } => {
                for t in self.targets.iter_mut().filter(|t| !t.frozen) {
                    if let Some(view) = t.registry.get_mut(server.index()) {
                        view.server_down();
                    }
                    if let Some(view) = t.served.get_mut(server.index()) {
                        view.server_down();
                    }
                }
            }
            Observation::Registry {
                server,
                process,
                up,
            } => {
                if let Some(t) = self.tracker(process)
                    && let Some(view) = t.registry.get_mut(server.index())
                {
                    view.set(at, up);
                }
            }
            Observation::Served {
                server,
                process,
                up,
            } => {
                if let Some(t) = self.tracker(process)
                    && let Some(view) = t.served.get_mut(server.index())
                {
                    view.set(at, up);
                }
            }
            _ => {}
        }
    }

    /// What a caller's Eureka client cache and its balancer's list hold.
    fn observe_caller(&mut self, at: SimTime, observation: Observation) {
        match observation {
            Observation::ClientCache {
                server,
                observer,
                process,
                up,
            } => {
                if let Some(t) = self.tracker(process)
                    && let Some(c) = t
                        .callers
                        .iter_mut()
                        .find(|c| c.process == observer && !c.stopped)
                {
                    if c.cache.up && !up {
                        c.removed_by = Some(server);
                    }
                    c.cache.set(at, up);
                }
            }
            Observation::RibbonList {
                route,
                process,
                listed,
            } => {
                if let Some(t) = self.tracker(process)
                    && let Some(r) = t.ribbons.iter().position(|r| r.route == route)
                    && !t
                        .callers
                        .get(t.ribbons[r].caller)
                        .is_some_and(|c| c.stopped)
                {
                    t.ribbons[r].view.set(at, listed);
                }
            }
            _ => {}
        }
    }

    /// Dead hits, connect timeouts and failed requests.
    fn observe_request(&mut self, at: SimTime, observation: Observation) {
        match observation {
            Observation::Attempt {
                route,
                process,
                dead: true,
            } => self.dead_hits(route, process, 1, at, at),
            Observation::DeadHits {
                route,
                process,
                count,
                since,
                last,
            } => self.dead_hits(route, process, count, since, last),
            Observation::ConnectTimeouts {
                process, delay_ms, ..
            } => {
                if let Some(t) = self.tracker(process)
                    && t.t_stop.is_some()
                {
                    t.timeout_delay_ms += delay_ms;
                }
            }
            Observation::RequestsFailed {
                route,
                first,
                count,
            } => {
                if let Some(t) = self.tracker(first)
                    && t.t_stop.is_some()
                {
                    t.errors(route, count);
                }
            }
            Observation::RequestFailed { route, first } => {
                if let Some(t) = self.tracker(first)
                    && t.t_stop.is_some()
                {
                    t.errors(route, 1);
                }
            }
            _ => {}
        }
    }

    /// The stopped instance's own life: stopped serving, resumed, restarted, still listed at the end.
    fn observe_instance(&mut self, at: SimTime, observation: Observation) {
        match observation {
            Observation::ResumedServing { process } => {
                if let Some(t) = self.tracker(process) {
                    t.resumed = true;
                }
            }
            Observation::StillListed { process, holding } => {
                if let Some(t) = self.tracker(process) {
                    t.holding = Some(holding);
                }
            }
            Observation::Restarted { process } => {
                if let Some(t) = self.tracker(process) {
                    t.frozen = true;
                }
            }
            Observation::InflightFailed { process, count } => {
                if let Some(t) = self.tracker(process) {
                    t.inflight_failed += count;
                }
            }
            Observation::StoppedServing { process } => {
                if let Some(t) = self.tracker(process) {
                    t.t_stop.get_or_insert(at);
                }
                for t in &mut self.targets {
                    t.caller_stopped(process, at);
                }
            }
            _ => {}
        }
    }
}

impl TargetTracker {
    /// Nothing more to wait for: it restarted, resumed, never stopped, or no view lists it.
    fn settled(&self) -> bool {
        self.frozen
            || self.resumed
            || self.t_stop.is_none()
            || !(self.registry.iter().any(|p| p.up)
                || self.served.iter().any(|p| p.up)
                || self.callers.iter().any(|c| c.cache.up)
                || self.ribbons.iter().any(|r| r.view.up))
    }

    /// Caller process `process` died (it stopped serving: only a zone outage stops a caller):
    /// its Eureka cache and its balancers list nothing from `at` on, so a dead caller's frozen
    /// list neither keeps the exposure open nor holds the trial; it makes no request after.
    fn caller_stopped(&mut self, process: ProcessId, at: SimTime) {
        let Some(c) = self.callers.iter().position(|c| c.process == process) else {
            return;
        };
        self.callers[c].cache.set(at, false);
        self.callers[c].stopped = true;
        for r in self.ribbons.iter_mut().filter(|r| r.caller == c) {
            r.view.set(at, false);
        }
    }

    /// The caller of `route`, if it routes to the target's app.
    fn caller_of(&mut self, route: RouteId) -> Option<&mut CallerTracker> {
        let c = self.ribbons.iter().find(|r| r.route == route)?.caller;
        self.callers.get_mut(c)
    }

    /// A dead hit (`count` refused attempts, the last at `last`) by `route`.
    fn dead_hits(&mut self, route: RouteId, count: u64, last: SimTime) {
        self.dead_hits += count;
        self.last_dead_hit = self.last_dead_hit.max(Some(last));
        if let Some(c) = self.caller_of(route) {
            c.dead_hits += count;
            c.last_dead_hit = c.last_dead_hit.max(Some(last));
        }
    }

    /// `count` requests of `route` failed, their first attempt to the target.
    fn errors(&mut self, route: RouteId, count: u64) {
        self.errors += count;
        if let Some(c) = self.caller_of(route) {
            c.errors += count;
        }
    }

    /// Per caller and per server, the removals relative to `t_stop` (no unresolved reasons:
    /// an empty cell is "still listed, or never", as in the aggregate); without a stop only the
    /// counts.
    fn details(
        &self,
        t_stop: Option<SimTime>,
        areas: &[u64],
    ) -> (Vec<CallerOutcome>, Vec<ServerOutcome>) {
        let relative = |removal: Removal| match (removal, t_stop) {
            (Removal::At(at), Some(t_stop)) => Some(at.since(t_stop)),
            _ => None,
        };
        let callers = self
            .callers
            .iter()
            .enumerate()
            .map(|(c, caller)| {
                let routes = || self.ribbons.iter().filter(|r| r.caller == c);
                let ribbon = removed_everywhere(routes().map(|r| &r.view));
                let client = removed_everywhere([&caller.cache]);
                CallerOutcome {
                    process: caller.process,
                    server: caller
                        .removed_by
                        .filter(|_| matches!(client, Removal::At(_))),
                    exposure_ms: t_stop.and_then(|t_stop| exposure(ribbon, t_stop)),
                    dead_hits: caller.dead_hits,
                    errors: caller.errors,
                    last_dead_hit_ms: t_stop
                        .and_then(|t_stop| Some(caller.last_dead_hit?.since(t_stop))),
                    client_removed_ms: relative(client),
                    ribbon_removed_ms: relative(ribbon),
                    lost_capacity_ms: routes()
                        .map(|r| areas.get(r.route).copied().unwrap_or(0))
                        .sum(),
                }
            })
            .collect();
        let servers = self
            .registry
            .iter()
            .zip(&self.served)
            .map(|(registry, served)| ServerOutcome {
                server_removed_ms: relative(removed_everywhere([registry])),
                readonly_removed_ms: relative(removed_everywhere([served])),
            })
            .collect();
        (callers, servers)
    }

    /// The outcome; `areas`: each route's lost capacity.
    fn outcome(&self, areas: &[u64]) -> ShutdownOutcome {
        let Some(t_stop) = self.t_stop else {
            // Ever UP in the registry means it served (it registers UP once its web server is
            // ready, FACTS.md §5.1); a stop while serving always reports `StoppedServing`.
            let why = if self.registry.iter().any(|p| p.ever || p.lost) {
                Unresolved::NotStopped
            } else {
                Unresolved::StoppedBeforeServing
            };
            let (callers, servers) = self.details(None, areas);
            return ShutdownOutcome {
                lost_capacity_ms: callers.iter().map(|c| c.lost_capacity_ms).sum(),
                callers,
                servers,
                dead_hits: self.dead_hits,
                errors: self.errors,
                inflight_failed: self.inflight_failed,
                timeout_delay_ms: self.timeout_delay_ms,
                removal_unresolved: [Some(why); 5],
                ..ShutdownOutcome::default()
            };
        };
        let relative = |removal: Removal| match removal {
            Removal::At(at) => Some(at.since(t_stop)),
            _ => None,
        };
        let why = |removal: Removal| match removal {
            Removal::At(_) => None,
            Removal::NeverPresent => Some(Unresolved::NeverListed),
            Removal::ServerDown => Some(Unresolved::ServerDown),
            Removal::StillPresent if self.frozen => Some(Unresolved::Restarted),
            Removal::StillPresent => Some(
                self.holding
                    .map_or(Unresolved::ListedAtEnd, Unresolved::Held),
            ),
        };
        let registry = removed_everywhere(&self.registry);
        let served = removed_everywhere(&self.served);
        let clients = removed_everywhere(self.callers.iter().map(|c| &c.cache));
        let ribbon = removed_everywhere(self.ribbons.iter().map(|r| &r.view));
        let exposure_ms = exposure(ribbon, t_stop);
        let (callers, servers) = self.details(Some(t_stop), areas);
        let exposure_why = match ribbon {
            Removal::NeverPresent => None,
            other => why(other),
        };
        ShutdownOutcome {
            t_stop_ms: Some(t_stop.ms()),
            exposure_ms,
            dead_hits: self.dead_hits,
            errors: self.errors,
            last_dead_hit_ms: self.last_dead_hit.map(|at| at.since(t_stop)),
            server_removed_ms: relative(registry),
            readonly_removed_ms: relative(served),
            client_removed_ms: relative(clients),
            ribbon_removed_ms: relative(ribbon),
            inflight_failed: self.inflight_failed,
            timeout_delay_ms: self.timeout_delay_ms,
            removal_unresolved: [
                exposure_why,
                why(registry),
                why(served),
                why(clients),
                why(ribbon),
            ],
            lost_capacity_ms: callers.iter().map(|c| c.lost_capacity_ms).sum(),
            callers,
            servers,
        }
    }
}

/// Exposure from the balancers' removal: from the stop to it, 0 if it came before the stop or
/// no balancer ever listed the instance, `None` while one still does.
fn exposure(ribbon: Removal, t_stop: SimTime) -> Option<i64> {
    match ribbon {
        Removal::At(at) => Some(at.since(t_stop).max(0)),
        Removal::NeverPresent | Removal::ServerDown => Some(0),
        Removal::StillPresent => None,
    }
}

impl Observer for MetricsObserver {
    /// Every stopped instance has left every view (or will not: it restarted or resumed).
    fn settled(&self) -> bool {
        self.targets.iter().all(TargetTracker::settled)
    }

    /// Settled, and no live instance missing from a caller's list (the lost capacity would
    /// grow).
    fn at_rest(&self) -> bool {
        self.settled() && self.capacity.nothing_missing()
    }

    /// Leases are measured by what the registries list, not by their renews.
    fn reads_renewals(&self) -> bool {
        false
    }

    #[inline]
    fn observe(&mut self, at: SimTime, observation: Observation) {
        self.capacity.observe(at, &observation);
        match observation {
            Observation::ServerDown { .. }
            | Observation::Registry { .. }
            | Observation::Served { .. } => self.observe_server(at, observation),
            Observation::ClientCache { .. } | Observation::RibbonList { .. } => {
                self.observe_caller(at, observation)
            }
            Observation::Attempt { .. }
            | Observation::DeadHits { .. }
            | Observation::ConnectTimeouts { .. }
            | Observation::RequestsFailed { .. }
            | Observation::RequestFailed { .. } => self.observe_request(at, observation),
            _ => self.observe_instance(at, observation),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> TargetTracker {
        TargetTracker {
            registry: vec![Presence::default()],
            served: vec![Presence::default()],
            callers: vec![CallerTracker {
                process: 1,
                ..CallerTracker::default()
            }],
            ribbons: vec![RouteView::default()],
            ..TargetTracker::default()
        }
    }

    fn listed_from(t: &mut TargetTracker, at: u64) {
        t.registry[0].set(SimTime(at), true);
        t.served[0].set(SimTime(at), true);
        t.callers[0].cache.set(SimTime(at), true);
        t.ribbons[0].view.set(SimTime(at), true);
    }

    /// "unresolved" split into its reasons: a kill before the web server was ready, a stop that
    /// never came, a restart while listed, still listed at the end, and no dead hit.
    #[test]
    fn unresolved_trials_say_why() {
        // Killed before it served: never UP anywhere, no stop.
        let o = tracker().outcome(&[]);
        assert_eq!(o.exposure_ms, None);
        assert_eq!(
            o.unresolved(Metric::ExposureMs),
            Some(Unresolved::StoppedBeforeServing)
        );
        assert_eq!(o.unresolved_reasons(), [Unresolved::StoppedBeforeServing]);
        assert_eq!(
            o.unresolved(Metric::LastDeadHitMs),
            Some(Unresolved::NoDeadHit)
        );
        assert_eq!(o.unresolved(Metric::DeadHits), None);
        // UP and serving, never stopped (a pause that resumed).
        let mut t = tracker();
        listed_from(&mut t, 1_000);
        assert_eq!(
            t.outcome(&[]).unresolved(Metric::ServerRemovedMs),
            Some(Unresolved::NotStopped)
        );
        // Stopped, the registry dropped it, the callers still list it at the end.
        t.t_stop = Some(SimTime(10_000));
        t.registry[0].set(SimTime(20_000), false);
        let o = t.outcome(&[]);
        assert_eq!(o.server_removed_ms, Some(10_000));
        assert_eq!(o.unresolved(Metric::ServerRemovedMs), None);
        assert_eq!(
            o.unresolved(Metric::ExposureMs),
            Some(Unresolved::ListedAtEnd)
        );
        assert_eq!(o.unresolved_reasons(), [Unresolved::ListedAtEnd]);
        // The same, frozen by a restart.
        t.frozen = true;
        assert_eq!(
            t.outcome(&[]).unresolved(Metric::RibbonRemovedMs),
            Some(Unresolved::Restarted)
        );
        // Never in any caller's list: exposure 0, the callers' layers never listed it.
        let mut t = tracker();
        t.registry[0].set(SimTime(1_000), true);
        t.t_stop = Some(SimTime(2_000));
        t.registry[0].set(SimTime(3_000), false);
        let o = t.outcome(&[]);
        assert_eq!(
            (o.exposure_ms, o.unresolved(Metric::ExposureMs)),
            (Some(0), None)
        );
        assert_eq!(
            o.unresolved(Metric::ClientRemovedMs),
            Some(Unresolved::NeverListed)
        );
        assert_eq!(o.unresolved_reasons(), [Unresolved::NeverListed]);
    }

    /// The observations of the two-peer test below: the stop at 10 s, each caller's dead hits
    /// and failed requests, then each peer's registry and read-only cache, each caller's cache
    /// and list letting the instance go.
    fn two_peer_events(a: ServerId, b: ServerId) -> Vec<(u64, Observation)> {
        vec![
            (10_000, Observation::StoppedServing { process: 0 }),
            (
                11_000,
                Observation::Attempt {
                    route: 0,
                    process: 0,
                    dead: true,
                },
            ),
            (
                12_000,
                Observation::DeadHits {
                    route: 1,
                    process: 0,
                    count: 4,
                    since: SimTime(12_000),
                    last: SimTime(12_500),
                },
            ),
            (13_000, Observation::RequestFailed { route: 0, first: 0 }),
            (
                13_000,
                Observation::RequestsFailed {
                    route: 1,
                    first: 0,
                    count: 2,
                },
            ),
            (
                20_000,
                Observation::Registry {
                    server: a,
                    process: 0,
                    up: false,
                },
            ),
            (
                25_500,
                Observation::Registry {
                    server: b,
                    process: 0,
                    up: false,
                },
            ),
            (
                30_000,
                Observation::Served {
                    server: a,
                    process: 0,
                    up: false,
                },
            ),
            (
                31_000,
                Observation::Served {
                    server: b,
                    process: 0,
                    up: false,
                },
            ),
            (
                35_000,
                Observation::ClientCache {
                    server: a,
                    observer: 2,
                    process: 0,
                    up: false,
                },
            ),
            (
                40_000,
                Observation::ClientCache {
                    server: b,
                    observer: 1,
                    process: 0,
                    up: false,
                },
            ),
            (
                41_000,
                Observation::RibbonList {
                    route: 1,
                    process: 0,
                    listed: false,
                },
            ),
            (
                45_000,
                Observation::RibbonList {
                    route: 0,
                    process: 0,
                    listed: false,
                },
            ),
        ]
    }

    /// Two peers, two callers (process 1 on route 0, process 2 on route 1), the target is
    /// process 0, stopped at 10 s. Every view lists it from 0; each drop below is given, so
    /// every cell follows by subtraction from the stop.
    #[test]
    fn each_caller_and_each_peer_gets_its_own_removals() {
        let listed = |t: &mut TargetTracker| {
            for k in 0..2 {
                t.registry[k].set(SimTime(0), true);
                t.served[k].set(SimTime(0), true);
                t.callers[k].cache.set(SimTime(0), true);
                t.ribbons[k].view.set(SimTime(0), true);
            }
        };
        let caller = |process| CallerTracker {
            process,
            ..CallerTracker::default()
        };
        let route = |route, caller| RouteView {
            route,
            caller,
            view: Presence::default(),
        };
        let mut tracker = TargetTracker {
            registry: vec![Presence::default(); 2],
            served: vec![Presence::default(); 2],
            callers: vec![caller(1), caller(2)],
            ribbons: vec![route(0, 0), route(1, 1)],
            ..TargetTracker::default()
        };
        listed(&mut tracker);
        let mut m = MetricsObserver {
            targets: vec![tracker],
            target_of: vec![Some(0), None, None],
            capacity: LostCapacity::new(&Layout::new(&crate::scenario::fixture::bundled(
                "kill-9",
                &[],
            ))),
        };
        let (a, b) = (ServerId(0), ServerId(1));
        let events = two_peer_events(a, b);
        for (at, o) in events {
            m.observe(SimTime(at), o);
        }
        let o = &m.outcomes(SimTime(50_000))[0];
        let servers: Vec<_> = o
            .servers
            .iter()
            .map(|s| (s.server_removed_ms, s.readonly_removed_ms))
            .collect();
        assert_eq!(
            servers,
            [(Some(10_000), Some(20_000)), (Some(15_500), Some(21_000))]
        );
        assert_eq!(
            o.callers,
            [
                CallerOutcome {
                    process: 1,
                    server: Some(b),
                    exposure_ms: Some(35_000),
                    dead_hits: 1,
                    errors: 1,
                    last_dead_hit_ms: Some(1_000),
                    client_removed_ms: Some(30_000),
                    ribbon_removed_ms: Some(35_000),
                    lost_capacity_ms: 0,
                },
                CallerOutcome {
                    process: 2,
                    server: Some(a),
                    exposure_ms: Some(31_000),
                    dead_hits: 4,
                    errors: 2,
                    last_dead_hit_ms: Some(2_500),
                    client_removed_ms: Some(25_000),
                    ribbon_removed_ms: Some(31_000),
                    lost_capacity_ms: 0,
                },
            ]
        );
        // The aggregates: the last peer, the last caller, the sums.
        assert_eq!(
            (o.server_removed_ms, o.readonly_removed_ms),
            (Some(15_500), Some(21_000))
        );
        assert_eq!(
            (o.client_removed_ms, o.ribbon_removed_ms),
            (Some(30_000), Some(35_000))
        );
        assert_eq!((o.exposure_ms, o.dead_hits, o.errors), (Some(35_000), 5, 3));
        assert_eq!(o.last_dead_hit_ms, Some(2_500));
    }

    /// A zone outage stops the target (process 0) at 10 s and caller 1 at 12 s; caller 2 lives
    /// and drops the target at 40 s. Caller 1's views end at its death: its exposure is
    /// 12 - 10 = 2 s, the aggregate is caller 2's 30 s, and a late list change of the dead
    /// caller's route counts for nothing. Without caller 2 the trial settles at the death.
    #[test]
    fn a_dead_caller_lists_nothing_from_its_death() {
        let observer = |callers: &[ProcessId]| {
            let tracker = TargetTracker {
                registry: vec![Presence::default()],
                served: vec![Presence::default()],
                callers: callers
                    .iter()
                    .map(|&process| CallerTracker {
                        process,
                        ..CallerTracker::default()
                    })
                    .collect(),
                ribbons: (0..callers.len())
                    .map(|c| RouteView {
                        route: c,
                        caller: c,
                        view: Presence::default(),
                    })
                    .collect(),
                ..TargetTracker::default()
            };
            let mut m = MetricsObserver {
                targets: vec![tracker],
                target_of: vec![Some(0), None, None],
                capacity: LostCapacity::new(&Layout::new(&crate::scenario::fixture::bundled(
                    "kill-9",
                    &[],
                ))),
            };
            let t = &mut m.targets[0];
            t.registry[0].set(SimTime(0), true);
            for c in 0..callers.len() {
                t.callers[c].cache.set(SimTime(0), true);
                t.ribbons[c].view.set(SimTime(0), true);
            }
            m.observe(SimTime(10_000), Observation::StoppedServing { process: 0 });
            m
        };
        let dead_list = |listed| Observation::RibbonList {
            route: 0,
            process: 0,
            listed,
        };
        let mut m = observer(&[1, 2]);
        m.observe(SimTime(12_000), Observation::StoppedServing { process: 1 });
        assert!(!m.settled(), "caller 2 still lists it");
        m.observe(SimTime(13_000), dead_list(true));
        m.observe(
            SimTime(40_000),
            Observation::RibbonList {
                route: 1,
                process: 0,
                listed: false,
            },
        );
        m.observe(
            SimTime(40_000),
            Observation::ClientCache {
                server: ServerId(0),
                observer: 2,
                process: 0,
                up: false,
            },
        );
        let o = &m.outcomes(SimTime(50_000))[0];
        let dead = &o.callers[0];
        assert_eq!(
            (
                dead.exposure_ms,
                dead.ribbon_removed_ms,
                dead.client_removed_ms
            ),
            (Some(2_000), Some(2_000), Some(2_000))
        );
        assert_eq!(dead.server, None, "no server's answer dropped it");
        assert_eq!(o.callers[1].exposure_ms, Some(30_000));
        assert_eq!(o.exposure_ms, Some(30_000));
        let mut m = observer(&[1]);
        assert!(!m.settled());
        m.observe(SimTime(12_000), Observation::StoppedServing { process: 1 });
        m.observe(
            SimTime(14_000),
            Observation::Registry {
                server: ServerId(0),
                process: 0,
                up: false,
            },
        );
        assert!(m.settled(), "only a dead caller listed it");
        assert_eq!(m.outcomes(SimTime(20_000))[0].exposure_ms, Some(2_000));
    }

    /// Two peers list the target from 0 and it stops at 10 s. Peer a goes down at 40 s while
    /// still listing it (`ServerDown`, then the server's own drops, as `go_down` reports them):
    /// not a removal, so a's cells stay empty and the last registry is b's, dropped at 20 s
    /// (+10 s), served dropped at 30 s (+20 s). Counting a's drop would give +30 s for both.
    #[test]
    fn a_peer_that_goes_down_while_listing_it_does_not_remove_it() {
        let mut t = two_peer_tracker();
        t.t_stop = Some(SimTime(10_000));
        t.registry[1].set(SimTime(20_000), false);
        t.served[1].set(SimTime(30_000), false);
        let mut m = observer_of(t);
        go_down(&mut m, 40_000, ServerId(0));
        let o = &m.outcomes(SimTime(50_000))[0];
        let cells: Vec<_> = o
            .servers
            .iter()
            .map(|s| (s.server_removed_ms, s.readonly_removed_ms))
            .collect();
        assert_eq!(cells, [(None, None), (Some(10_000), Some(20_000))]);
        assert_eq!(
            (o.server_removed_ms, o.readonly_removed_ms),
            (Some(10_000), Some(20_000))
        );
        assert!(m.settled(), "a peer that is down lists nothing");
    }

    /// A peer restarted before the stop (down at 5 s, back empty): its new incarnation's
    /// registry lists the target again at 6 s and evicts it at 25 s (+15 s from the stop at
    /// 10 s); its read-only cache never served it again (no `Served` UP after the restart), so
    /// that cell is empty, not -5 s (the instant it went down). The other peer dropped it at
    /// 12 s / 13 s: the last registry is the restarted peer's +15 s, the last read-only cache
    /// the other's +3 s.
    #[test]
    fn a_restarted_peer_counts_only_its_new_incarnation() {
        let mut t = two_peer_tracker();
        t.t_stop = Some(SimTime(10_000));
        let mut m = observer_of(t);
        go_down(&mut m, 5_000, ServerId(0));
        let events = [
            (6_000, registry(0, true)),
            (12_000, registry(1, false)),
            (13_000, served(1, false)),
            (25_000, registry(0, false)),
        ];
        for (at, o) in events {
            m.observe(SimTime(at), o);
        }
        let o = &m.outcomes(SimTime(50_000))[0];
        let cells: Vec<_> = o
            .servers
            .iter()
            .map(|s| (s.server_removed_ms, s.readonly_removed_ms))
            .collect();
        assert_eq!(cells, [(Some(15_000), None), (Some(2_000), Some(3_000))]);
        assert_eq!(
            (o.server_removed_ms, o.readonly_removed_ms),
            (Some(15_000), Some(3_000))
        );
    }

    /// The only server crashes at 5 s while listing the target, which stops at 10 s: no live
    /// registry ever removed it, so the server cells are empty with the reason `server_down`
    /// (not -5 s, not "never listed"); the callers, who still list it, keep theirs.
    #[test]
    fn with_every_server_down_the_reason_is_server_down() {
        let mut t = tracker();
        listed_from(&mut t, 1_000);
        t.t_stop = Some(SimTime(10_000));
        let mut m = observer_of(t);
        go_down(&mut m, 5_000, ServerId(0));
        let o = &m.outcomes(SimTime(50_000))[0];
        assert_eq!((o.server_removed_ms, o.readonly_removed_ms), (None, None));
        assert_eq!(
            o.unresolved(Metric::ServerRemovedMs),
            Some(Unresolved::ServerDown)
        );
        assert_eq!(
            o.unresolved(Metric::ReadonlyRemovedMs),
            Some(Unresolved::ServerDown)
        );
        assert_eq!(
            o.unresolved_reasons(),
            [Unresolved::ServerDown, Unresolved::ListedAtEnd]
        );
        // Never stopped: it served (it was UP in a registry that then went down).
        let mut t = tracker();
        listed_from(&mut t, 1_000);
        let mut m = observer_of(t);
        go_down(&mut m, 5_000, ServerId(0));
        let o = &m.outcomes(SimTime(50_000))[0];
        assert_eq!(
            o.unresolved(Metric::ServerRemovedMs),
            Some(Unresolved::NotStopped)
        );
    }

    fn two_peer_tracker() -> TargetTracker {
        let mut t = TargetTracker {
            registry: vec![Presence::default(); 2],
            served: vec![Presence::default(); 2],
            callers: vec![CallerTracker {
                process: 1,
                ..CallerTracker::default()
            }],
            ribbons: vec![RouteView::default()],
            ..TargetTracker::default()
        };
        for k in 0..2 {
            t.registry[k].set(SimTime(0), true);
            t.served[k].set(SimTime(0), true);
        }
        t
    }

    /// The dead hits the timeline draws are kept whatever the metrics make of them: single
    /// attempts of one instant summed into one point, a counted span as it came, hits before
    /// the stop too (the count `dead_hits` starts at the stop); none for another process.
    #[test]
    fn dead_hits_are_kept_for_the_timeline_as_spans() {
        let mut m = observer_of(tracker());
        let at = SimTime;
        let attempt = |process| Observation::Attempt {
            route: 0,
            process,
            dead: true,
        };
        m.observe(at(500), attempt(0));
        m.observe(at(1_000), Observation::StoppedServing { process: 0 });
        m.observe(at(2_000), attempt(0));
        m.observe(at(2_000), attempt(0));
        m.observe(at(2_000), attempt(1));
        m.observe(
            at(9_000),
            Observation::DeadHits {
                route: 0,
                process: 0,
                count: 5,
                since: at(3_000),
                last: at(9_000),
            },
        );
        m.observe(at(9_500), attempt(0));
        let span = |since_ms, last_ms, count| DeadHitSpan {
            since_ms,
            last_ms,
            count,
        };
        assert_eq!(
            m.take_hit_spans(),
            vec![vec![
                span(500, 500, 1),
                span(2_000, 2_000, 2),
                span(3_000, 9_000, 5),
                span(9_500, 9_500, 1),
            ]]
        );
        let o = &m.outcomes(at(10_000))[0];
        assert_eq!(o.dead_hits, 2 + 5 + 1);
        assert!(m.take_hit_spans()[0].is_empty(), "taken");
    }

    fn observer_of(t: TargetTracker) -> MetricsObserver {
        MetricsObserver {
            targets: vec![t],
            target_of: vec![Some(0), None],
            capacity: LostCapacity::new(&Layout::new(&crate::scenario::fixture::bundled(
                "kill-9",
                &[],
            ))),
        }
    }

    fn registry(server: u32, up: bool) -> Observation {
        Observation::Registry {
            server: ServerId(server),
            process: 0,
            up,
        }
    }

    fn served(server: u32, up: bool) -> Observation {
        Observation::Served {
            server: ServerId(server),
            process: 0,
            up,
        }
    }

    /// `server` goes down at `at` as the world reports it: `ServerDown`, then its own drops of
    /// whatever it listed (`EurekaServer::go_down`).
    fn go_down(m: &mut MetricsObserver, at: u64, server: ServerId) {
        let at = SimTime(at);
        m.observe(at, Observation::ServerDown { server });
        m.observe(at, registry(server.0, false));
        m.observe(at, served(server.0, false));
    }

    #[test]
    fn removal_is_the_last_transition_to_down() {
        let mut p = Presence::default();
        p.set(SimTime(10), true);
        p.set(SimTime(20), false);
        p.set(SimTime(30), true);
        p.set(SimTime(40), false);
        assert_eq!(removed_everywhere([&p]), Removal::At(SimTime(40)));
        let mut q = Presence::default();
        q.set(SimTime(5), true);
        assert_eq!(removed_everywhere([&p, &q]), Removal::StillPresent);
        let never = Presence::default();
        assert_eq!(removed_everywhere([&never]), Removal::NeverPresent);
        q.set(SimTime(50), false);
        assert_eq!(
            removed_everywhere([&p, &q, &never]),
            Removal::At(SimTime(50))
        );
    }
}
