//! Lost capacity: live instances missing from a caller's balancer list, in instance-milliseconds
//! (`lost_capacity_ms`: a peer that restarts empty, a partition).
//!
//! Per route `r` (a caller calling one app) and instance `q` of that app, `q` is **missing** from
//! `r` at `t` when all of these hold:
//!
//! 1. `r`'s balancer list does not hold `q` at `t` (`Observation::RibbonList`);
//! 2. `q` serves at `t`: it has not stopped serving (`StoppedServing`) since, or resumed
//!    (`ResumedServing`); after a `[[restart]]` under the same id, from the new incarnation's
//!    first register with status UP (it registers UP once its web server is ready, FACTS.md §5.1);
//! 3. `q` is UP in the registry of at least one Eureka server (`Registry`): it wants traffic and
//!    Eureka knows it, so a deliberate leave (a DELETE, DOWN, OUT_OF_SERVICE on every peer) is
//!    not lost capacity, a peer that lost it while another keeps it is;
//! 4. `r`'s list held `q` at some earlier instant while `q` served (in this incarnation), so an
//!    instance still starting, or not yet discovered, is not counted: the measure runs from t = 0
//!    but an instance enters it only once the caller has used it.
//!
//! A route of a caller that died (a zone outage stops callers: `StoppedServing` of the caller's
//! process) misses nothing from then on: it routes no request any more.
//!
//! The route's lost capacity is the integral over the trial (t = 0 to its end) of the number of
//! missing instances: one instance missing for 12.5 s is 12 500 instance-ms (12.5
//! instance-seconds). A caller's is the sum over its routes to the app, a shutdown's (its
//! `trials.csv` column) the sum over the callers of the instance's app. Not counted: an instance
//! still listed after a same-id restart whose listing never changed (it is not re-armed until it
//! enters the list again).

use crate::engine::SimTime;
use crate::eureka::{InstanceStatus, Layout, Observation, ProcessId, RouteId};

/// What the measure needs of one process.
#[derive(Debug, Clone, Copy, Default)]
struct ProcessState {
    /// Not serving: stopped, or restarted and not yet registered UP again.
    stopped: bool,
    /// Restarted under the same id: serving again from its first register with status UP.
    awaiting_up: bool,
    /// The number of servers whose registry lists it UP.
    up_in: u32,
}

/// One route's view of the instances of its app.
#[derive(Debug, Clone)]
struct RouteCapacity {
    listed: Vec<bool>,
    /// Listed at some instant while serving (condition 4).
    armed: Vec<bool>,
    /// How many instances are missing now, since `since`.
    missing: u32,
    since: SimTime,
    /// The integral up to `since`, in instance-ms.
    area_ms: u64,
    /// Its caller died: nothing is missing from then on.
    ended: bool,
}

impl RouteCapacity {
    fn step(&mut self, at: SimTime, now_missing: bool) {
        self.area_ms += u64::from(self.missing) * at.ms().saturating_sub(self.since.ms());
        self.since = at;
        if now_missing {
            self.missing += 1;
        } else {
            self.missing = self.missing.saturating_sub(1);
        }
    }

    fn area_at(&self, end: SimTime) -> u64 {
        self.area_ms + u64::from(self.missing) * end.ms().saturating_sub(self.since.ms())
    }

    /// Its caller died at `at`: the area stops growing.
    fn end(&mut self, at: SimTime) {
        self.area_ms = self.area_at(at);
        self.since = at;
        self.missing = 0;
        self.ended = true;
    }
}

/// The lost capacity of every route (module doc).
#[derive(Debug, Clone)]
pub struct LostCapacity {
    app_of: Vec<usize>,
    routes_of_app: Vec<Vec<RouteId>>,
    /// The caller process of each route.
    route_process: Vec<ProcessId>,
    processes: Vec<ProcessState>,
    routes: Vec<RouteCapacity>,
    scratch: Vec<bool>,
}

impl LostCapacity {
    pub fn new(layout: &Layout) -> LostCapacity {
        let n = layout.processes.len();
        let app_of: Vec<usize> = layout.processes.iter().map(|p| p.application).collect();
        let apps = app_of.iter().copied().max().map_or(0, |a| a + 1);
        let mut routes_of_app = vec![Vec::new(); apps];
        for (r, route) in layout.routes.iter().enumerate() {
            if let Some(routes) = routes_of_app.get_mut(route.application) {
                routes.push(r);
            }
        }
        let route = RouteCapacity {
            listed: vec![false; n],
            armed: vec![false; n],
            missing: 0,
            since: SimTime(0),
            area_ms: 0,
            ended: false,
        };
        LostCapacity {
            app_of,
            routes_of_app,
            route_process: layout.routes.iter().map(|r| r.process).collect(),
            processes: vec![ProcessState::default(); n],
            routes: vec![route; layout.routes.len()],
            scratch: Vec::new(),
        }
    }

    /// Each route's lost capacity from 0 to `end`, in instance-ms.
    pub fn areas(&self, end: SimTime) -> Vec<u64> {
        self.routes.iter().map(|r| r.area_at(end)).collect()
    }

    /// No live instance is missing from any route now: the areas stop growing.
    pub fn nothing_missing(&self) -> bool {
        self.routes.iter().all(|r| r.missing == 0)
    }

    fn missing(&self, r: RouteId, q: ProcessId) -> bool {
        let route = &self.routes[r];
        let p = &self.processes[q];
        !route.ended && route.armed[q] && !route.listed[q] && !p.stopped && p.up_in > 0
    }

    /// Applies a change of process `q`'s state, and steps every route of its app whose count
    /// it changes.
    fn change(&mut self, at: SimTime, q: ProcessId, apply: impl FnOnce(&mut ProcessState)) {
        let Some(&app) = self.app_of.get(q) else {
            return;
        };
        let routes = std::mem::take(&mut self.routes_of_app[app]);
        let mut before = std::mem::take(&mut self.scratch);
        before.clear();
        before.extend(routes.iter().map(|&r| self.missing(r, q)));
        apply(&mut self.processes[q]);
        let serving = !self.processes[q].stopped;
        for (&r, &was) in routes.iter().zip(&before) {
            if serving && self.routes[r].listed[q] {
                self.routes[r].armed[q] = true;
            }
            let is = self.missing(r, q);
            if is != was {
                self.routes[r].step(at, is);
            }
        }
        self.scratch = before;
        self.routes_of_app[app] = routes;
    }

    /// Route `r`'s list took or dropped `q`.
    fn listed(&mut self, at: SimTime, r: RouteId, q: ProcessId, listed: bool) {
        if r >= self.routes.len() || q >= self.processes.len() {
            return;
        }
        let was = self.missing(r, q);
        self.routes[r].listed[q] = listed;
        if listed && !self.processes[q].stopped {
            self.routes[r].armed[q] = true;
        }
        let is = self.missing(r, q);
        if is != was {
            self.routes[r].step(at, is);
        }
    }

    pub fn observe(&mut self, at: SimTime, observation: &Observation) {
        match *observation {
            Observation::RibbonList {
                route,
                process,
                listed,
            } => self.listed(at, route, process, listed),
            Observation::Registry { process, up, .. } => self.change(at, process, |p| {
                if up {
                    p.up_in += 1;
                } else {
                    p.up_in = p.up_in.saturating_sub(1);
                }
            }),
            Observation::StoppedServing { process } => {
                self.change(at, process, |p| p.stopped = true);
                for (r, &caller) in self.route_process.iter().enumerate() {
                    if caller == process {
                        self.routes[r].end(at);
                    }
                }
            }
            Observation::ResumedServing { process } => self.change(at, process, |p| {
                p.stopped = false;
                p.awaiting_up = false;
            }),
            Observation::Restarted { process } => {
                self.change(at, process, |p| {
                    p.stopped = true;
                    p.awaiting_up = true;
                });
                // The new incarnation is armed anew (condition 4).
                for route in &mut self.routes {
                    if let Some(armed) = route.armed.get_mut(process) {
                        *armed = false;
                    }
                }
            }
            Observation::Registered {
                process,
                status: InstanceStatus::Up,
                ..
            } if self.processes.get(process).is_some_and(|p| p.awaiting_up) => {
                self.change(at, process, |p| {
                    p.stopped = false;
                    p.awaiting_up = false;
                })
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::ServerId;
    use crate::scenario::fixture::bundled;

    /// kill-9.toml's layout: svc-0..svc-19 are processes 0..19, the gateway 20 with route 0.
    fn capacity() -> LostCapacity {
        let layout = Layout::new(&bundled("kill-9", &[]));
        assert_eq!(layout.routes.len(), 1);
        LostCapacity::new(&layout)
    }

    fn registry(server: u32, process: ProcessId, up: bool) -> Observation {
        Observation::Registry {
            server: ServerId(server),
            process,
            up,
        }
    }

    fn list(process: ProcessId, listed: bool) -> Observation {
        Observation::RibbonList {
            route: 0,
            process,
            listed,
        }
    }

    /// Instance 1, UP on peer 0 only, leaves the gateway's list at 20 s and comes back at
    /// 32.5 s: 12.5 instance-seconds. Instance 2 leaves at 40 s while it still serves but is UP
    /// nowhere (a deregistration): nothing. Instance 3 leaves at 50 s and stops serving at
    /// 53 s: 3 instance-seconds. Instance 4 was never listed: nothing. At the end (100 s)
    /// instance 5 has been missing since 90 s: 10 more.
    #[test]
    fn missing_while_serving_and_known_counts_instance_seconds() {
        let mut c = capacity();
        let events = [
            (0, registry(0, 1, true)),
            (0, registry(0, 2, true)),
            (0, registry(0, 3, true)),
            (0, registry(1, 3, true)),
            (0, registry(0, 4, true)),
            (0, registry(0, 5, true)),
            (0, list(1, true)),
            (0, list(2, true)),
            (0, list(3, true)),
            (0, list(5, true)),
            (20_000, list(1, false)),
            (32_500, list(1, true)),
            (35_000, registry(0, 2, false)),
            (40_000, list(2, false)),
            (50_000, list(3, false)),
            (53_000, Observation::StoppedServing { process: 3 }),
            (60_000, registry(0, 3, false)),
            (90_000, list(5, false)),
        ];
        for (at, o) in &events {
            c.observe(SimTime(*at), o);
        }
        assert_eq!(c.areas(SimTime(100_000)), [12_500 + 3_000 + 10_000]);
    }

    /// The gateway (process 20, route 0) dies at 95 s: instance 5, missing since 90 s, is
    /// missing 5 s, and nothing after the death counts, not even a later drop.
    #[test]
    fn a_dead_callers_routes_miss_nothing() {
        let mut c = capacity();
        for (at, o) in [
            (0, registry(0, 5, true)),
            (0, registry(0, 6, true)),
            (0, list(5, true)),
            (0, list(6, true)),
            (90_000, list(5, false)),
            (95_000, Observation::StoppedServing { process: 20 }),
            (96_000, list(6, false)),
        ] {
            c.observe(SimTime(at), &o);
        }
        assert_eq!(c.areas(SimTime(200_000)), [5_000]);
    }

    /// A restart under the same id: the stopped incarnation is not counted; the new one counts
    /// only once it registered UP and entered the list again.
    #[test]
    fn a_restarted_instance_counts_again_once_listed_anew() {
        let mut c = capacity();
        c.observe(SimTime(0), &registry(0, 1, true));
        c.observe(SimTime(0), &list(1, true));
        c.observe(SimTime(10_000), &Observation::StoppedServing { process: 1 });
        c.observe(SimTime(11_000), &Observation::Restarted { process: 1 });
        c.observe(SimTime(12_000), &list(1, false));
        let up = Observation::Registered {
            server: ServerId(0),
            process: 1,
            status: InstanceStatus::Up,
            from_peer: None,
        };
        c.observe(SimTime(20_000), &up);
        assert_eq!(
            c.areas(SimTime(30_000)),
            [0],
            "not listed since the restart"
        );
        c.observe(SimTime(30_000), &list(1, true));
        c.observe(SimTime(40_000), &list(1, false));
        assert_eq!(c.areas(SimTime(41_500)), [1_500]);
    }
}
