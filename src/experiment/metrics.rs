//! Turns one trial's observations into the metrics of each shutdown.

use crate::engine::SimTime;
use crate::eureka::{Holding, Layout, Observation, Observer, ProcessId};
use crate::scenario::Metric;

/// Whether a process is UP in one view, and since when it is not.
#[derive(Debug, Clone, Copy, Default)]
struct Presence {
    up: bool,
    ever: bool,
    last_down: Option<SimTime>,
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
}

/// The first instant from which the process is no longer UP in any of `views`; `None` while it
/// still is in one at the end, or if no view ever had it.
fn removed_everywhere<'a>(views: impl IntoIterator<Item = &'a Presence>) -> Removal {
    let mut latest: Option<SimTime> = None;
    for view in views {
        if !view.ever {
            continue;
        }
        if view.up {
            return Removal::StillPresent;
        }
        latest = latest.max(view.last_down);
    }
    latest.map_or(Removal::NeverPresent, Removal::At)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Removal {
    At(SimTime),
    StillPresent,
    NeverPresent,
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
    /// A view still listed the instance at `max-duration-s`, for this reason.
    Held(Holding),
    /// A view still listed the instance when the trial ended and no reason was found.
    ListedAtEnd,
}

impl Unresolved {
    /// Every reason, in the order reports list them.
    pub const ALL: [Unresolved; 14] = [
        Unresolved::NoDeadHit,
        Unresolved::StoppedBeforeServing,
        Unresolved::NotStopped,
        Unresolved::Restarted,
        Unresolved::NeverListed,
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

/// The measured outcome of one shutdown in one trial. Times are ms relative to `t_stop`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
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
            .filter(|r| self.removal_unresolved.contains(&Some(*r)))
            .collect()
    }
}

#[derive(Debug, Default)]
struct TargetTracker {
    t_stop: Option<SimTime>,
    /// Per Eureka server (`ServerId` order): its registry's view and its served view.
    registry: Vec<Presence>,
    served: Vec<Presence>,
    /// (caller process, its Eureka cache view), for callers that call the target's app.
    clients: Vec<(ProcessId, Presence)>,
    /// (route, its Ribbon list view), for routes to the target's app.
    ribbons: Vec<(usize, Presence)>,
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
}

/// Observer that keeps just what the metrics need.
#[derive(Debug)]
pub struct MetricsObserver {
    targets: Vec<TargetTracker>,
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
                let mut clients: Vec<(ProcessId, Presence)> = Vec::new();
                for (_, r) in &routes {
                    if !clients.iter().any(|(p, _)| *p == r.process) {
                        clients.push((r.process, Presence::default()));
                    }
                }
                TargetTracker {
                    registry: vec![Presence::default(); servers],
                    served: vec![Presence::default(); servers],
                    clients,
                    ribbons: routes
                        .iter()
                        .map(|(i, _)| (*i, Presence::default()))
                        .collect(),
                    ..TargetTracker::default()
                }
            })
            .collect();
        MetricsObserver { targets, target_of }
    }

    fn tracker(&mut self, process: ProcessId) -> Option<&mut TargetTracker> {
        let t = (*self.target_of.get(process)?)?;
        self.targets.get_mut(t).filter(|t| !t.frozen)
    }

    /// The outcome of each shutdown, in scenario order.
    pub fn outcomes(&self) -> Vec<ShutdownOutcome> {
        self.targets.iter().map(TargetTracker::outcome).collect()
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
                || self.clients.iter().any(|(_, p)| p.up)
                || self.ribbons.iter().any(|(_, p)| p.up))
    }

    fn outcome(&self) -> ShutdownOutcome {
        let Some(t_stop) = self.t_stop else {
            // Ever UP in the registry means it served (it registers UP once its web server is
            // ready, FACTS.md §5.1); a stop while serving always reports `StoppedServing`.
            let why = if self.registry.iter().any(|p| p.ever) {
                Unresolved::NotStopped
            } else {
                Unresolved::StoppedBeforeServing
            };
            return ShutdownOutcome {
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
            Removal::StillPresent if self.frozen => Some(Unresolved::Restarted),
            Removal::StillPresent => Some(
                self.holding
                    .map_or(Unresolved::ListedAtEnd, Unresolved::Held),
            ),
        };
        let registry = removed_everywhere(&self.registry);
        let served = removed_everywhere(&self.served);
        let clients = removed_everywhere(self.clients.iter().map(|(_, p)| p));
        let ribbon = removed_everywhere(self.ribbons.iter().map(|(_, p)| p));
        let exposure_ms = match ribbon {
            Removal::At(at) => Some(at.since(t_stop).max(0)),
            Removal::NeverPresent => Some(0),
            Removal::StillPresent => None,
        };
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
        }
    }
}

impl Observer for MetricsObserver {
    /// Every stopped instance has left every view (or will not: it restarted or resumed).
    fn settled(&self) -> bool {
        self.targets.iter().all(TargetTracker::settled)
    }

    #[inline]
    fn observe(&mut self, at: SimTime, observation: Observation) {
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
            Observation::Attempt {
                process,
                dead: true,
                ..
            } => {
                if let Some(t) = self.tracker(process)
                    && t.t_stop.is_some()
                {
                    t.dead_hits += 1;
                    t.last_dead_hit = Some(at);
                }
            }
            Observation::DeadHits {
                process,
                count,
                last,
                ..
            } => {
                if let Some(t) = self.tracker(process)
                    && t.t_stop.is_some()
                {
                    t.dead_hits += count;
                    t.last_dead_hit = t.last_dead_hit.max(Some(last));
                }
            }
            Observation::ConnectTimeouts {
                process, delay_ms, ..
            } => {
                if let Some(t) = self.tracker(process)
                    && t.t_stop.is_some()
                {
                    t.timeout_delay_ms += delay_ms;
                }
            }
            Observation::RequestsFailed { first, count, .. } => {
                if let Some(t) = self.tracker(first)
                    && t.t_stop.is_some()
                {
                    t.errors += count;
                }
            }
            Observation::RequestFailed { first, .. } => {
                if let Some(t) = self.tracker(first)
                    && t.t_stop.is_some()
                {
                    t.errors += 1;
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
            Observation::ClientCache {
                observer,
                process,
                up,
                ..
            } => {
                if let Some(t) = self.tracker(process)
                    && let Some((_, view)) = t.clients.iter_mut().find(|(p, _)| *p == observer)
                {
                    view.set(at, up);
                }
            }
            Observation::RibbonList {
                route,
                process,
                listed,
            } => {
                if let Some(t) = self.tracker(process)
                    && let Some((_, view)) = t.ribbons.iter_mut().find(|(r, _)| *r == route)
                {
                    view.set(at, listed);
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
            }
            _ => {}
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
            clients: vec![(1, Presence::default())],
            ribbons: vec![(0, Presence::default())],
            ..TargetTracker::default()
        }
    }

    fn listed_from(t: &mut TargetTracker, at: u64) {
        t.registry[0].set(SimTime(at), true);
        t.served[0].set(SimTime(at), true);
        t.clients[0].1.set(SimTime(at), true);
        t.ribbons[0].1.set(SimTime(at), true);
    }

    /// "unresolved" split into its reasons: a kill before the web server was ready, a stop that
    /// never came, a restart while listed, still listed at the end, and no dead hit.
    #[test]
    fn unresolved_trials_say_why() {
        // Killed before it served: never UP anywhere, no stop.
        let o = tracker().outcome();
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
            t.outcome().unresolved(Metric::ServerRemovedMs),
            Some(Unresolved::NotStopped)
        );
        // Stopped, the registry dropped it, the callers still list it at the end.
        t.t_stop = Some(SimTime(10_000));
        t.registry[0].set(SimTime(20_000), false);
        let o = t.outcome();
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
            t.outcome().unresolved(Metric::RibbonRemovedMs),
            Some(Unresolved::Restarted)
        );
        // Never in any caller's list: exposure 0, the callers' layers never listed it.
        let mut t = tracker();
        t.registry[0].set(SimTime(1_000), true);
        t.t_stop = Some(SimTime(2_000));
        t.registry[0].set(SimTime(3_000), false);
        let o = t.outcome();
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
