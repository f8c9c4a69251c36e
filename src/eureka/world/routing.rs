//! The one way in to what a caller sees: the routes (balancer lists, round-robin cursors,
//! circuit breakers, Spring Cloud LoadBalancer suppliers) and how each process answers a
//! connection (alive, serving, its host gone).
//!
//! Batched mode counts a route's requests lazily, between two changes of that state
//! ([`World::flush_route`], the balancer's own counting: `Route::count_requests`); a change
//! made before the requests up to now are counted would be seen by requests that arrived
//! before it. So the state is only reachable through this module:
//!
//! - [`Routes`] hands out `&Route` to anyone, and `&mut Route` only through
//!   [`World::route_mut`], which first counts route `r`'s requests up to now;
//! - [`Liveness`] (a process's alive / serving / host-vanishes, a private field of [`Process`],
//!   which is defined here for that reason) is read by anyone and written only through [`World::set_alive`] and [`World::set_serving`], which first count every
//!   route's requests up to now if the process's [`Answer`] changes;
//! - [`World::settle_routes`] counts every route up to now for a reader that needs the counts
//!   themselves (requests in flight on a stopping process, a deploy's start, the trial's end).
//!
//! Counting twice at the same instant is a no-op, so these calls may be made freely.

use std::ops::Index;

use crate::engine::SimTime;
use crate::eureka::ids::{ProcessId, RouteId};
use crate::eureka::observe::Observer;
use crate::eureka::route::{Answer, RequestMode, Route};

use crate::eureka::client::DiscoveryClient;
use crate::eureka::faults::Faults;
use crate::eureka::layout::{ProcessKind, ProcessSlot};

use super::{GracefulPhase, World};

/// Every route of the world, by [`RouteId`]; mutable only through [`World::route_mut`].
#[derive(Debug)]
pub(super) struct Routes {
    list: Vec<Route>,
}

impl Routes {
    pub(super) fn new(list: Vec<Route>) -> Routes {
        Routes { list }
    }

    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Route> {
        self.list.iter()
    }
}

impl Index<RouteId> for Routes {
    type Output = Route;

    fn index(&self, r: RouteId) -> &Route {
        &self.list[r]
    }
}

/// One JVM: its Eureka client and whether it is up and serving.
#[derive(Debug)]
pub struct Process {
    pub name: String,
    pub kind: ProcessKind,
    /// Application index: apps first, then callers, then the server.
    pub application: usize,
    /// Alive, serving, host gone: private to this module, written only through
    /// [`World::set_alive`] / [`World::set_serving`], which settle the batched counts first.
    liveness: Liveness,
    pub client: DiscoveryClient,
    /// A `[[deploy]]`'s `startup-s` for this process, replacing the context-start model.
    pub startup_ms: Option<u64>,
    /// `server.shutdown = graceful`: the graceful phase under way, if any.
    pub graceful_phase: Option<GracefulPhase>,
}

impl Process {
    /// A process of `slot`, not started.
    pub(super) fn new(slot: &ProcessSlot, client: DiscoveryClient, host_vanishes: bool) -> Process {
        Process {
            name: slot.name.clone(),
            kind: slot.kind,
            application: slot.application,
            liveness: Liveness::new(host_vanishes),
            client,
            startup_ms: None,
            graceful_phase: None,
        }
    }

    /// The JVM is running (its threads act and receive replies).
    pub fn alive(&self) -> bool {
        self.liveness.alive()
    }

    /// The web server accepts requests.
    pub fn serving(&self) -> bool {
        self.liveness.serving()
    }

    /// `[[shutdown]] host = "vanishes"`: once the process is gone, so is its host's IP.
    pub fn host_vanishes(&self) -> bool {
        self.liveness.host_vanishes()
    }

    /// How the process answers a connection attempt ([`Liveness::answer`]).
    pub fn answer(&self) -> Answer {
        self.liveness.answer()
    }
}

/// Whether a process's JVM runs, whether its web server accepts, and whether its host's IP is
/// gone with it: what decides its [`Answer`]. Written only through [`World::set_alive`] and
/// [`World::set_serving`].
#[derive(Debug, Clone, Copy)]
pub struct Liveness {
    alive: bool,
    serving: bool,
    host_vanishes: bool,
}

impl Liveness {
    /// A process not started yet; `host_vanishes` is `[[shutdown]] host = "vanishes"`.
    fn new(host_vanishes: bool) -> Liveness {
        Liveness {
            alive: false,
            serving: false,
            host_vanishes,
        }
    }

    /// The JVM is running (its threads act and receive replies).
    pub fn alive(self) -> bool {
        self.alive
    }

    /// The web server accepts requests.
    pub fn serving(self) -> bool {
        self.serving
    }

    /// `[[shutdown]] host = "vanishes"`: once the process is gone, so is its host's IP.
    pub fn host_vanishes(self) -> bool {
        self.host_vanishes
    }

    /// How the process answers a connection attempt (FACTS.md §7): its web server accepts;
    /// a stopped web server on a live host refuses; a process that is gone from a vanished
    /// host leaves the attempt to time out.
    pub fn answer(self) -> Answer {
        if self.serving {
            Answer::Accepts
        } else if !self.alive && self.host_vanishes {
            Answer::TimesOut
        } else {
            Answer::Refuses
        }
    }
}

/// How processes answer a caller's connections: their own [`Answer`] through the faults under
/// way ([`Faults::answer`]). Every routing path asks here, so a partition or a pause changes
/// the requests of the per-request and the batched modes alike; the world counts every
/// route's requests up to a fault's edge before it changes the faults (`world/faults.rs`).
#[derive(Clone, Copy)]
pub(super) struct Answers<'a> {
    pub(super) processes: &'a [Process],
    faults: &'a Faults,
}

impl Answers<'_> {
    /// How `to` answers a connection from `from`.
    #[inline]
    pub(super) fn of(&self, from: ProcessId, to: ProcessId) -> Answer {
        self.faults.answer(from, to, self.processes[to].answer())
    }
}

impl<O: Observer> World<'_, O> {
    /// Batched mode: counts the requests of route `r` that arrived since the last count, up to
    /// `until_us`, by its balancer's counting (`Route::count_requests`), each instance
    /// answering through the faults ([`Answers::of`]); the observations follow at once.
    pub(super) fn flush_route(&mut self, r: RouteId, until_us: f64) {
        let mut effects = std::mem::take(&mut self.balancer_effects);
        let route = &mut self.routes.list[r];
        let answers = Answers {
            processes: &self.processes,
            faults: &self.faults,
        };
        let caller = route.process;
        route.count_requests(
            until_us,
            &|p: ProcessId| answers.of(caller, p),
            &mut effects,
        );
        self.carry_out_balancer(r, &mut effects);
        self.balancer_effects = effects;
    }

    /// Route `r`, to change it: its requests up to now are counted first.
    pub(super) fn route_mut(&mut self, r: RouteId) -> &mut Route {
        if self.request_mode == RequestMode::Batched {
            let now_us = self.now().ms() as f64 * 1000.0;
            self.flush_route(r, now_us);
        }
        &mut self.routes.list[r]
    }

    /// [`World::route_mut`], with how each process answers the route's caller now
    /// ([`Answers::of`]).
    pub(super) fn route_mut_and_answers(&mut self, r: RouteId) -> (&mut Route, Answers<'_>) {
        self.route_mut(r);
        let answers = Answers {
            processes: &self.processes,
            faults: &self.faults,
        };
        (&mut self.routes.list[r], answers)
    }

    /// Batched mode: how many of route `r`'s requests a pause of its caller held up to now
    /// ([`Route::take_held`]); they count as sent now, and the caller sends them one by one.
    /// Not through [`World::route_mut`], which would count them over the pause instead.
    pub(super) fn take_held(&mut self, r: RouteId) -> u64 {
        let now_us = self.now().ms() as f64 * 1000.0;
        self.routes.list[r].take_held(now_us)
    }

    /// Counts every route's requests up to now.
    pub(super) fn settle_routes(&mut self) {
        let now = self.now();
        self.settle_routes_until(now);
    }

    /// Counts every route's requests up to `until` (the trial's end).
    pub(super) fn settle_routes_until(&mut self, until: SimTime) {
        if self.request_mode != RequestMode::Batched {
            return;
        }
        let until_us = until.ms() as f64 * 1000.0;
        for r in 0..self.routes.len() {
            self.flush_route(r, until_us);
        }
    }

    /// The JVM of `p` starts or dies.
    pub(super) fn set_alive(&mut self, p: ProcessId, alive: bool) {
        self.change_liveness(p, |l| l.alive = alive);
    }

    /// The web server of `p` starts or stops accepting requests.
    pub(super) fn set_serving(&mut self, p: ProcessId, serving: bool) {
        self.change_liveness(p, |l| l.serving = serving);
    }

    fn change_liveness(&mut self, p: ProcessId, change: impl FnOnce(&mut Liveness)) {
        let mut next = self.processes[p].liveness;
        change(&mut next);
        // Only app instances are called (a caller's or a peer's process is nobody's target).
        let called = matches!(self.processes[p].kind, ProcessKind::AppInstance { .. });
        if called && next.answer() != self.processes[p].liveness.answer() {
            self.settle_routes();
        }
        self.processes[p].liveness = next;
    }

    /// Requests of route `r` accepted by `p` with an arrival after `cut_us` (see
    /// `Route::accepted_after`). Bookkeeping only: no caller sees it.
    pub(super) fn accepted_after(
        &mut self,
        r: RouteId,
        p: ProcessId,
        cut_us: f64,
    ) -> (u64, Option<f64>) {
        self.routes.list[r].accepted_after(p, cut_us)
    }
}
