//! Turns one trial's observations into the metrics of each shutdown.

use crate::engine::SimTime;
use crate::eureka::{Layout, Observation, Observer, ProcessId};
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
}

#[derive(Debug, Default)]
struct TargetTracker {
    t_stop: Option<SimTime>,
    registry: Presence,
    served: Presence,
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
    fn outcome(&self) -> ShutdownOutcome {
        let Some(t_stop) = self.t_stop else {
            return ShutdownOutcome {
                dead_hits: self.dead_hits,
                errors: self.errors,
                inflight_failed: self.inflight_failed,
                timeout_delay_ms: self.timeout_delay_ms,
                ..ShutdownOutcome::default()
            };
        };
        let relative = |removal: Removal| match removal {
            Removal::At(at) => Some(at.since(t_stop)),
            _ => None,
        };
        let ribbon = removed_everywhere(self.ribbons.iter().map(|(_, p)| p));
        let exposure_ms = match ribbon {
            Removal::At(at) => Some(at.since(t_stop).max(0)),
            Removal::NeverPresent => Some(0),
            Removal::StillPresent => None,
        };
        ShutdownOutcome {
            t_stop_ms: Some(t_stop.ms()),
            exposure_ms,
            dead_hits: self.dead_hits,
            errors: self.errors,
            last_dead_hit_ms: self.last_dead_hit.map(|at| at.since(t_stop)),
            server_removed_ms: relative(removed_everywhere([&self.registry])),
            readonly_removed_ms: relative(removed_everywhere([&self.served])),
            client_removed_ms: relative(removed_everywhere(self.clients.iter().map(|(_, p)| p))),
            ribbon_removed_ms: relative(ribbon),
            inflight_failed: self.inflight_failed,
            timeout_delay_ms: self.timeout_delay_ms,
        }
    }
}

impl Observer for MetricsObserver {
    #[inline]
    fn observe(&mut self, at: SimTime, observation: Observation) {
        match observation {
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
            Observation::Registry { process, up } => {
                if let Some(t) = self.tracker(process) {
                    t.registry.set(at, up);
                }
            }
            Observation::Served { process, up } => {
                if let Some(t) = self.tracker(process) {
                    t.served.set(at, up);
                }
            }
            Observation::ClientCache {
                observer,
                process,
                up,
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
