//! Metrics of a `[[deploy]]` over the whole deployment (one trial).
//!
//! Definitions (all from the deploy's `at-s` to the end of the trial; "list" is the caller's
//! balancer's list, Ribbon's or Spring Cloud LoadBalancer's, and "retries" its retry policy):
//! - `dead_hits`: request attempts refused by any instance of the app (old or new);
//! - `errors`: requests that failed after Ribbon's retries, first sent to an instance of the app;
//! - `no_server`: requests that found their caller's Ribbon list empty;
//! - `longest_exposure_ms`: over the old instances, the longest time from one stopping serving
//!   to its removal from the last caller's Ribbon list (`None` if one is still listed at the end:
//!   then `unresolved` counts them);
//! - caller capacity dip: an interval in which one caller's Ribbon list for the app holds no
//!   instance that is serving (listed instances that stopped serving do not count; an empty list
//!   is a dip). Counted per caller route: `caller_dips`, their total and longest duration;
//! - registry capacity dip: an interval in which the server's registry holds no UP instance of
//!   the app: `registry_dips`, their total duration.

use serde::Serialize;

use super::TrialOutcome;
use crate::engine::SimTime;
use crate::eureka::{Layout, Observation, Observer, ProcessId};
use crate::scenario::Scenario;

/// The outcome of one deploy in one trial.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DeployOutcome {
    pub dead_hits: u64,
    pub errors: u64,
    pub no_server: u64,
    pub longest_exposure_ms: Option<i64>,
    pub unresolved: u32,
    pub caller_dips: u32,
    pub caller_dip_ms: u64,
    pub longest_caller_dip_ms: u64,
    pub registry_dips: u32,
    pub registry_dip_ms: u64,
}

/// Dips of one "some capacity left" indicator, clipped to `[from, end]`.
#[derive(Debug, Default, Clone)]
struct DipClock {
    since: Option<SimTime>,
    count: u32,
    total: u64,
    longest: u64,
}

impl DipClock {
    fn update(&mut self, at: SimTime, from: SimTime, empty: bool) {
        let at = at.max(from);
        match (empty, self.since) {
            (true, None) => self.since = Some(at),
            (false, Some(since)) => {
                self.close(since, at);
                self.since = None;
            }
            _ => {}
        }
    }

    fn close(&mut self, since: SimTime, at: SimTime) {
        let length = at.ms().saturating_sub(since.ms());
        if length > 0 {
            self.count += 1;
            self.total += length;
            self.longest = self.longest.max(length);
        }
    }
}

struct RouteView {
    route: usize,
    listed: Vec<ProcessId>,
    dips: DipClock,
}

/// Observer of one deploy.
pub struct DeployObserver {
    from: SimTime,
    deploy: usize,
    /// The deploy's first batch has begun: requests count from here. The world counts the
    /// requests before it (batched mode) just before, so none of them is counted.
    started: bool,
    /// Per process: belongs to the deployed app (0 = no, 1 = old, 2 = new).
    role: Vec<u8>,
    stopped: Vec<bool>,
    stopped_at: Vec<Option<SimTime>>,
    /// Per process and route view: listed in that route's Ribbon list.
    routes: Vec<RouteView>,
    registry_up: Vec<bool>,
    registry: DipClock,
    outcome: DeployOutcome,
    /// Per old process: the last time it left a Ribbon list, and whether it is still listed.
    last_unlisted: Vec<Option<SimTime>>,
}

impl DeployObserver {
    pub fn new(scenario: &Scenario, layout: &Layout, deploy: usize) -> DeployObserver {
        let n = layout.processes.len();
        let mut role = vec![0u8; n];
        for &(old, new) in &layout.deploys[deploy] {
            role[old] = 1;
            role[new] = 2;
        }
        let app = scenario.deploys[deploy].app;
        let routes = layout
            .routes
            .iter()
            .enumerate()
            .filter(|(_, r)| r.application == app)
            .map(|(route, _)| RouteView {
                route,
                listed: Vec::new(),
                dips: DipClock::default(),
            })
            .collect();
        DeployObserver {
            from: SimTime(scenario.deploys[deploy].at_ms),
            deploy,
            started: false,
            role,
            stopped: vec![false; n],
            stopped_at: vec![None; n],
            routes,
            registry_up: vec![false; n],
            registry: DipClock::default(),
            outcome: DeployOutcome::default(),
            last_unlisted: vec![None; n],
        }
    }

    fn ours(&self, p: ProcessId) -> bool {
        self.role.get(p).is_some_and(|&r| r > 0)
    }

    fn route_empty(&self, view: &RouteView) -> bool {
        !view.listed.iter().any(|&p| !self.stopped[p])
    }

    fn refresh_routes(&mut self, at: SimTime) {
        for i in 0..self.routes.len() {
            let empty = self.route_empty(&self.routes[i]);
            let from = self.from;
            self.routes[i].dips.update(at, from, empty);
        }
    }

    /// The outcome, closing open dips at `end`.
    pub fn finish(mut self, end: SimTime) -> DeployOutcome {
        let from = self.from;
        let mut caller = DipClock::default();
        for view in &mut self.routes {
            if let Some(since) = view.dips.since.take() {
                view.dips.close(since.max(from), end);
            }
            caller.count += view.dips.count;
            caller.total += view.dips.total;
            caller.longest = caller.longest.max(view.dips.longest);
        }
        if let Some(since) = self.registry.since.take() {
            self.registry.close(since.max(from), end);
        }
        let mut longest: Option<i64> = None;
        for p in 0..self.role.len() {
            if self.role[p] != 1 {
                continue;
            }
            let Some(stop) = self.stopped_at[p] else {
                continue;
            };
            let listed = self.routes.iter().any(|v| v.listed.contains(&p));
            if listed {
                self.outcome.unresolved += 1;
                continue;
            }
            let removed = self.last_unlisted[p].map_or(0, |at| at.since(stop).max(0));
            longest = Some(longest.map_or(removed, |l| l.max(removed)));
        }
        DeployOutcome {
            longest_exposure_ms: longest,
            caller_dips: caller.count,
            caller_dip_ms: caller.total,
            longest_caller_dip_ms: caller.longest,
            registry_dips: self.registry.count,
            registry_dip_ms: self.registry.total,
            ..self.outcome
        }
    }
}

impl Observer for DeployObserver {
    /// A deploy's dips are read from the balancers' lists, not from renews.
    fn reads_renewals(&self) -> bool {
        false
    }

    /// No dip is open (every route lists a serving instance, the registry one UP) and no stopped
    /// old instance is still listed anywhere: no dead hit, error or dip can come without a new
    /// action.
    fn at_rest(&self) -> bool {
        self.routes
            .iter()
            .all(|view| view.dips.since.is_none() && !view.listed.iter().any(|&p| self.stopped[p]))
            && self.registry.since.is_none()
    }

    fn observe(&mut self, at: SimTime, observation: Observation) {
        if let Observation::DeployBatch { deploy, .. } = observation
            && deploy == self.deploy
        {
            self.started = true;
        }
        let counting = self.started && at >= self.from;
        match observation {
            Observation::Attempt {
                process,
                dead: true,
                ..
            } if counting && self.ours(process) => self.outcome.dead_hits += 1,
            Observation::DeadHits { process, count, .. } if counting && self.ours(process) => {
                self.outcome.dead_hits += count;
            }
            Observation::RequestFailed { first, .. } if counting && self.ours(first) => {
                self.outcome.errors += 1;
            }
            Observation::RequestsFailed { first, count, .. } if counting && self.ours(first) => {
                self.outcome.errors += count;
            }
            Observation::NoServer { route }
                if counting && self.routes.iter().any(|v| v.route == route) =>
            {
                self.outcome.no_server += 1;
            }
            Observation::NoServers { route, count }
                if counting && self.routes.iter().any(|v| v.route == route) =>
            {
                self.outcome.no_server += count;
            }
            Observation::StoppedServing { process } if self.ours(process) => {
                self.stopped[process] = true;
                self.stopped_at[process].get_or_insert(at);
                self.refresh_routes(at);
            }
            Observation::RibbonList {
                route,
                process,
                listed,
            } if self.ours(process) => {
                if let Some(view) = self.routes.iter_mut().find(|v| v.route == route) {
                    if listed {
                        if !view.listed.contains(&process) {
                            view.listed.push(process);
                        }
                    } else {
                        view.listed.retain(|&p| p != process);
                        self.last_unlisted[process] = Some(at);
                    }
                }
                self.refresh_routes(at);
            }
            Observation::Registry { process, up, .. } if self.ours(process) => {
                self.registry_up[process] = up;
                let empty = !self.registry_up.iter().any(|&u| u);
                let from = self.from;
                self.registry.update(at, from, empty);
            }
            _ => {}
        }
    }
}

/// The observers of every `[[deploy]]` of a scenario, fed by the trial's one run.
pub struct DeployObservers(Vec<DeployObserver>);

impl DeployObservers {
    pub fn new(scenario: &Scenario, layout: &Layout) -> DeployObservers {
        DeployObservers(
            (0..scenario.deploys.len())
                .map(|d| DeployObserver::new(scenario, layout, d))
                .collect(),
        )
    }

    /// Each deploy's outcome, closing open dips at `end`.
    pub fn finish(self, end: SimTime) -> Vec<DeployOutcome> {
        self.0.into_iter().map(|o| o.finish(end)).collect()
    }
}

impl Observer for DeployObservers {
    /// A deploy's dips are read from the balancers' lists, not from renews.
    fn reads_renewals(&self) -> bool {
        false
    }

    fn observe(&mut self, at: SimTime, observation: Observation) {
        for observer in &mut self.0 {
            observer.observe(at, observation.clone());
        }
    }

    fn at_rest(&self) -> bool {
        self.0.iter().all(DeployObserver::at_rest)
    }
}

/// Over the trials of deploy `d`: (mean, max) of each count and the worst exposure and dips.
#[derive(Debug, Clone, Serialize)]
pub struct DeploySummary {
    pub app: String,
    pub trials: usize,
    pub dead_hits_mean: f64,
    pub dead_hits_max: u64,
    pub errors_mean: f64,
    pub errors_max: u64,
    pub no_server_max: u64,
    pub longest_exposure_ms_max: Option<i64>,
    pub unresolved_trials: usize,
    pub trials_with_caller_dip: usize,
    pub longest_caller_dip_ms_max: u64,
    pub trials_with_registry_dip: usize,
    pub registry_dip_ms_max: u64,
}

pub fn summarize_deploy(scenario: &Scenario, d: usize, outcomes: &[TrialOutcome]) -> DeploySummary {
    let rows: Vec<&DeployOutcome> = outcomes.iter().filter_map(|t| t.deploys.get(d)).collect();
    let n = rows.len().max(1) as f64;
    DeploySummary {
        app: scenario.apps[scenario.deploys[d].app].name.clone(),
        trials: rows.len(),
        dead_hits_mean: rows.iter().map(|o| o.dead_hits as f64).sum::<f64>() / n,
        dead_hits_max: rows.iter().map(|o| o.dead_hits).max().unwrap_or(0),
        errors_mean: rows.iter().map(|o| o.errors as f64).sum::<f64>() / n,
        errors_max: rows.iter().map(|o| o.errors).max().unwrap_or(0),
        no_server_max: rows.iter().map(|o| o.no_server).max().unwrap_or(0),
        longest_exposure_ms_max: rows.iter().filter_map(|o| o.longest_exposure_ms).max(),
        unresolved_trials: rows.iter().filter(|o| o.unresolved > 0).count(),
        trials_with_caller_dip: rows.iter().filter(|o| o.caller_dips > 0).count(),
        longest_caller_dip_ms_max: rows
            .iter()
            .map(|o| o.longest_caller_dip_ms)
            .max()
            .unwrap_or(0),
        trials_with_registry_dip: rows.iter().filter(|o| o.registry_dips > 0).count(),
        registry_dip_ms_max: rows.iter().map(|o| o.registry_dip_ms).max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::closed_form;
    use crate::scenario::fixture::{ScenarioText, parse};

    fn scenario(deploy: &str) -> Scenario {
        let text = ScenarioText::simulation(&["duration-s = 900", "trials = 1"])
            .table("[network]", &["latency-ms = 5", "latency-jitter-ms = 0"])
            .fleet(4, &["rate-per-s = 20"])
            .table("[[deploy]]", &["app = \"svc\"", "at-s = 300", deploy])
            .text();
        parse(&text, &[]).unwrap_or_else(|e| panic!("test scenario invalid: {e}"))
    }

    /// Replacing all instances at once with kill -9: the callers keep listing the dead old
    /// instances (no DOWN, no DELETE; eviction takes >= 90 s) while the new ones are not listed
    /// before they register, reach the read-only cache, the caller's fetch and Ribbon: every
    /// caller's list has no serving instance for a while, in every trial.
    #[test]
    fn all_at_once_kill9_deploy_dips_capacity() {
        let s = scenario("strategy = \"kill-9\"\nbatch-size = 4\nstartup-s = 10");
        for seed in 1..6 {
            let o = &crate::experiment::simulate(&s, 0, seed).deploys[0];
            assert!(o.caller_dips >= 1, "seed {seed}: {o:?}");
            assert!(o.longest_caller_dip_ms >= 10_000, "seed {seed}: {o:?}");
            assert!(o.dead_hits > 0, "seed {seed}: {o:?}");
        }
    }

    /// service-registry one instance at a time with wait-s above the closed-form bound
    /// (src/experiment/recommend.rs: read-only tick + fetch + Ribbon refresh + 4 latencies =
    /// 30 + 30 + 30 s + 20 ms, so 91 s): every caller drops each old instance before it stops
    /// serving, and a new instance is listed before the next old one leaves, so no request is
    /// refused and no list is ever without a serving instance.
    #[test]
    fn one_by_one_service_registry_deploy_with_adequate_wait_has_no_dead_hits() {
        let bound = closed_form(&scenario("strategy = \"kill-9\"")).total_ms();
        let wait_s = bound.div_ceil(1000);
        assert_eq!(wait_s, 91);
        let s = scenario(&format!(
            "strategy = \"service-registry\"\nwait-s = {wait_s}\nbatch-size = 1\nstartup-s = 10"
        ));
        for seed in 1..6 {
            let o = &crate::experiment::simulate(&s, 0, seed).deploys[0];
            assert_eq!(o.dead_hits, 0, "seed {seed}: {o:?}");
            assert_eq!(o.errors, 0, "seed {seed}: {o:?}");
            assert_eq!(o.caller_dips, 0, "seed {seed}: {o:?}");
            assert_eq!(o.registry_dips, 0, "seed {seed}: {o:?}");
        }
    }

    /// The DipClock counts intervals clipped to the deploy's start.
    #[test]
    fn dips_are_clipped_to_the_deploy_start() {
        let mut d = DipClock::default();
        let from = SimTime(100);
        d.update(SimTime(0), from, true);
        d.update(SimTime(150), from, false);
        d.update(SimTime(200), from, true);
        d.update(SimTime(260), from, false);
        assert_eq!((d.count, d.total, d.longest), (2, 110, 60));
    }
}
