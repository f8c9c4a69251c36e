//! The shortest wait that makes a graceful shutdown clean (`eureka-sim recommend`).
//!
//! With `pause` and `service-registry` the instance is taken out of the registry first and stops
//! serving `wait-s` later. It gets no request after it stopped iff every caller's Ribbon list
//! dropped it by then. Nothing before the stop depends on the wait, so one run with a long wait
//! measures, per trial, the wait that would have been just enough: the time from the start of the
//! wait to the last Ribbon removal. Its percentile is the wait that is clean in that share of
//! trials; the worst case is bounded in closed form by the rules (FACTS.md §13):
//! registry change (one request) + read-only tick (C) + the next fetch (F plus its round trip) +
//! the next Ribbon refresh (L).
//!
//! The percentile is the one asked for (`--target`, p99.9) only when the trials support it
//! (`experiment::intervals`: p99.9 needs 2995, p99 299, p95 59, p90 29, p50 6); otherwise the
//! highest of those the trials do support, and the report says what the target needs. Trials in
//! which some caller still listed the instance at the end count as "never" (later than any wait).

use crate::scenario::{Scenario, ScenarioError, Strategy, parse_str};

use super::{Stats, needs_trials, run_trials_with};
use crate::eureka::RequestMode;
use crate::scenario::Metric;

/// The closed-form worst case of a graceful departure, term by term (ms).
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedForm {
    pub terms: Vec<(&'static str, u64)>,
}

impl ClosedForm {
    pub fn total_ms(&self) -> u64 {
        self.terms.iter().map(|(_, ms)| ms).sum()
    }
}

/// The worst case from the start of the wait to the last Ribbon list dropping the instance:
/// the registry change arrives within one request latency; the read-only cache refreshes within
/// one interval (plus timer lateness); the first fetch that reads the server after that arrives
/// within one fetch interval and a round trip and its reply within one latency; Ribbon re-reads
/// the client cache within one refresh interval. Callers take their slowest settings.
pub fn closed_form(scenario: &Scenario) -> ClosedForm {
    let server = &scenario.server;
    let latency = scenario.network.latency_ms + scenario.network.latency_jitter_ms;
    let fetch_s = scenario
        .callers
        .iter()
        .map(|c| c.client.registry_fetch_interval_s)
        .max()
        .unwrap_or(0);
    let (balancer, balancer_ms) = scenario
        .callers
        .iter()
        .flat_map(|c| c.calls.iter().map(move |t| balancer_term(scenario, c, t)))
        .max_by_key(|&(_, ms)| ms)
        .unwrap_or(("Ribbon refresh", 0));
    let cache_ms = if server.use_read_only_response_cache {
        server.response_cache_update_interval_ms + server.timer_lateness_ms
    } else {
        0
    };
    ClosedForm {
        terms: vec![
            ("read-only cache refresh", cache_ms),
            ("client fetch", fetch_s * 1000),
            (balancer, balancer_ms),
            ("request times (4 one-way latencies)", 4 * latency),
        ],
    }
}

/// How long a caller's balancer may keep a list after its Eureka client changed (FACTS.md §8,
/// §9), as its balancer words it ([`crate::scenario::BalancerKind::lag_term`]).
fn balancer_term(
    scenario: &Scenario,
    caller: &crate::scenario::CallerConfig,
    target: &crate::scenario::CallTarget,
) -> (&'static str, u64) {
    caller
        .balancer(&scenario.simulation.release)
        .lag_term(caller, target)
}

/// What one strategy needs.
#[derive(Debug, Clone)]
pub struct Recommendation {
    pub strategy: Strategy,
    pub trials: u32,
    /// Per trial, the wait (ms) that would have been just enough; `None` if the instance was never
    /// dropped by every caller within the trial.
    pub needed: Stats,
    /// The percentile asked for (`--target`).
    pub target: f64,
    /// The percentile measured: `target` if the trials support it, else the highest of
    /// [`FALLBACK_PERCENTILES`] below it that they do; `None` if they support none.
    pub percentile: Option<f64>,
    /// How many trials `target` needs, when these are fewer.
    pub target_needs: Option<usize>,
    /// Whole seconds: zero dead hits in `percentile` % of trials (`None`: the percentile falls on
    /// trials that never dropped the instance, or there is no percentile).
    pub at_target_s: Option<u64>,
    /// The 95 % order-statistic interval of `at_target_s`, whole seconds (`None` above: the
    /// interval reaches trials that never dropped the instance); `None` without one.
    pub at_target_ci95_s: Option<(u64, Option<u64>)>,
    pub closed_form: ClosedForm,
    /// Whole seconds: zero dead hits whatever the phases (the closed form, rounded up).
    pub worst_case_s: u64,
}

/// The same with one interval changed, to show which setting shortens the wait most.
#[derive(Debug, Clone)]
pub struct WhatIf {
    pub key: String,
    pub value: String,
    /// As in [`Recommendation`]: the percentile measured and its wait.
    pub percentile: Option<f64>,
    pub at_target_s: Option<u64>,
    pub at_target_ci95_s: Option<(u64, Option<u64>)>,
    pub worst_case_s: u64,
}

/// The long wait used to measure: long enough for any chain at sane settings, short enough to fit
/// in the trial.
fn measuring_wait_ms(scenario: &Scenario, at_ms: u64) -> u64 {
    let room = scenario
        .simulation
        .duration_ms
        .saturating_sub(at_ms)
        .saturating_sub(60_000);
    room.clamp(1_000, 600_000)
}

fn ceil_s(ms: i64) -> u64 {
    (ms.max(0) as u64).div_ceil(1000)
}

/// The percentiles `recommend` falls back to, highest first, when the trials do not support the
/// target.
pub const FALLBACK_PERCENTILES: [f64; 5] = [99.9, 99.0, 95.0, 90.0, 50.0];

/// The percentile `trials` support: `target` if they do, else the highest of
/// [`FALLBACK_PERCENTILES`] below it that they do.
pub fn supported_percentile(trials: usize, target: f64) -> Option<f64> {
    std::iter::once(target)
        .chain(FALLBACK_PERCENTILES.into_iter().filter(|&p| p < target))
        .find(|&p| needs_trials(trials, p).is_none())
}

/// `needed` over all its trials, those that never dropped the instance as `i64::MAX` (later
/// than any value).
fn with_never_last(needed: &Stats) -> Stats {
    Stats::of(
        needed
            .sorted
            .iter()
            .map(|&v| Some(v))
            .chain(std::iter::repeat_n(Some(i64::MAX), needed.unresolved)),
    )
}

/// The nearest-rank `p` percentile of `needed` over all its trials, those that never dropped
/// the instance counting as later than any value (`None` when it falls on them).
fn wait_at(needed: &Stats, p: f64) -> Option<u64> {
    with_never_last(needed)
        .percentile(p)
        .filter(|&v| v != i64::MAX)
        .map(ceil_s)
}

/// The 95 % order-statistic interval of [`wait_at`]'s percentile, whole seconds; the upper
/// bound `None` when it falls on trials that never dropped the instance.
fn wait_ci_at(needed: &Stats, p: f64) -> Option<(u64, Option<u64>)> {
    let (lo, hi) = with_never_last(needed).percentile_ci95(p)?;
    (lo != i64::MAX).then(|| (ceil_s(lo), (hi != i64::MAX).then(|| ceil_s(hi))))
}

/// Why [`measure`] could not: the scenario with its overrides is invalid, or a trial stopped at
/// its event limit ([`super::budget::check_outcomes`]).
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Budget(#[from] super::budget::BudgetError),
}

/// Told of each measurement's trials as they run, e.g. for a progress bar; `()` tells nothing.
pub trait MeasureProgress: Sync {
    /// A measurement of `trials` trials starts; `what` names it.
    fn measuring(&self, _what: &str, _trials: u64) {}
    /// One trial is done (from any thread).
    fn trial_done(&self) {}
    /// The measurement is done.
    fn measured(&self) {}
}

impl MeasureProgress for () {}

/// Measures the needed wait of shutdown 0 under `strategy`.
pub fn measure(
    text: &str,
    source: &str,
    overrides: &[String],
    strategy: Strategy,
    target: f64,
    progress: &dyn MeasureProgress,
) -> Result<Recommendation, MeasureError> {
    let base = parse_str(text, source, "recommend", overrides)?;
    let at_ms = base.shutdowns.first().map_or(0, |s| s.at_ms);
    let wait_ms = measuring_wait_ms(&base, at_ms);
    let mut all = overrides.to_vec();
    all.push(format!("shutdown[0].strategy={}", strategy.name()));
    all.push(format!("shutdown[0].wait-s={}", wait_ms as f64 / 1000.0));
    let scenario = parse_str(text, source, "recommend", &all)?;
    progress.measuring(
        &format!("trials of {}", strategy.name()),
        u64::from(scenario.simulation.trials),
    );
    let outcomes = run_trials_with(&scenario, RequestMode::default(), &|| progress.trial_done());
    progress.measured();
    super::budget::check_outcomes(&outcomes)?;
    let needed = Stats::of(outcomes.iter().map(|o| {
        o.shutdowns
            .first()
            .and_then(|s| s.value(Metric::RibbonRemovedMs))
            .map(|removed| removed + wait_ms as i64)
    }));
    let closed_form = closed_form(&scenario);
    let trials = scenario.simulation.trials;
    let percentile = supported_percentile(trials as usize, target);
    Ok(Recommendation {
        strategy,
        trials,
        at_target_s: percentile.and_then(|p| wait_at(&needed, p)),
        at_target_ci95_s: percentile.and_then(|p| wait_ci_at(&needed, p)),
        percentile,
        target_needs: needs_trials(trials as usize, target),
        worst_case_s: closed_form.total_ms().div_ceil(1000),
        closed_form,
        needed,
        target,
    })
}

/// The three intervals on the path, each cut to a quarter, for the "what shortens it" table.
pub fn what_ifs(
    text: &str,
    source: &str,
    overrides: &[String],
    strategy: Strategy,
    target: f64,
    progress: &dyn MeasureProgress,
) -> Result<Vec<WhatIf>, MeasureError> {
    let base = parse_str(text, source, "recommend", overrides)?;
    let mut out = Vec::new();
    for (key, value) in what_if_changes(&base) {
        // As printed: `caller[*]` is `--set`'s every [[caller]], so the line can be pasted.
        let mut all = overrides.to_vec();
        all.push(format!("{key}={value}"));
        let r = measure(text, source, &all, strategy, target, progress)?;
        out.push(WhatIf {
            key,
            value,
            percentile: r.percentile,
            at_target_s: r.at_target_s,
            at_target_ci95_s: r.at_target_ci95_s,
            worst_case_s: r.worst_case_s,
        });
    }
    Ok(out)
}

/// The what-ifs' settings: each interval on the path (the read-only cache's, the callers'
/// fetch, their balancer's) cut to a quarter, as `--set` key and value.
fn what_if_changes(base: &Scenario) -> Vec<(String, String)> {
    let mut changes: Vec<(String, String)> = Vec::new();
    // Without the read-only cache, fetches read the read-write cache, which a change
    // invalidates at once (FACTS.md §3): its refresh interval is on no one's path.
    if base.server.use_read_only_response_cache {
        let cache = base.server.response_cache_update_interval_ms;
        changes.push((
            "server.eureka.server.response-cache-update-interval-ms".into(),
            (cache / 4).max(1).to_string(),
        ));
    }
    let fetch = base
        .callers
        .iter()
        .map(|c| c.client.registry_fetch_interval_s)
        .max()
        .unwrap_or(30);
    changes.push((
        "caller[*].eureka.client.registry-fetch-interval-seconds".into(),
        (fetch / 4).max(1).to_string(),
    ));
    // The balancer's own interval, for whichever balancer the callers use.
    let terms: Vec<(&str, u64)> = base
        .callers
        .iter()
        .flat_map(|c| c.calls.iter().map(|t| balancer_term(base, c, t)))
        .collect();
    let longest = |label: &str| {
        terms
            .iter()
            .filter(|(l, _)| *l == label)
            .map(|&(_, ms)| ms)
            .max()
    };
    for kind in crate::scenario::BalancerKind::ALL {
        let Some((label, key)) = kind.what_if() else {
            continue;
        };
        if let Some(ms) = longest(label) {
            changes.push((key.into(), (ms / 4).max(1).to_string()));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::run_trials;
    use crate::scenario::fixture::bundled;

    /// 200 trials support p95 (59) but not p99 (299) or p99.9 (2995); 3000 support p99.9.
    #[test]
    fn the_percentile_falls_back_to_what_the_trials_support() {
        assert_eq!(supported_percentile(200, 99.9), Some(95.0));
        assert_eq!(supported_percentile(1000, 99.9), Some(99.0));
        assert_eq!(supported_percentile(3000, 99.9), Some(99.9));
        assert_eq!(supported_percentile(200, 97.0), Some(97.0));
        assert_eq!(supported_percentile(60, 97.0), Some(95.0));
        assert_eq!(supported_percentile(5, 99.9), None);
        // A trial that never dropped the instance is later than any wait.
        let needed = Stats::of((1..=9).map(|s| Some(s * 1000)).chain([None]));
        assert_eq!(wait_at(&needed, 50.0), Some(5));
        assert_eq!(wait_at(&needed, 95.0), None);
    }

    #[test]
    fn closed_form_at_defaults_is_three_intervals_and_request_times() {
        let s = bundled("pause", &[]);
        let cf = closed_form(&s);
        // 30 + 30 + 30 s + 4 x (1 + 4) ms.
        assert_eq!(cf.total_ms(), 90_020);
    }

    /// The acceptance test: the recommended wait, fed back into `run` with 10 000
    /// trials, gives zero dead hits.
    #[test]
    fn recommended_wait_gives_zero_dead_hits_in_10000_trials() {
        let text = std::fs::read_to_string("scenarios/pause.toml").unwrap();
        let r = measure(
            &text,
            "pause.toml",
            &["simulation.trials=200".into()],
            Strategy::Pause,
            99.9,
            &(),
        )
        .unwrap();
        assert_eq!(r.worst_case_s, 91);
        // 200 trials cannot support p99.9: the recommendation is at p95, and says so.
        assert_eq!((r.percentile, r.target_needs), (Some(95.0), Some(2995)));
        let max = r.needed.max.unwrap();
        assert!(
            max <= 90_020,
            "simulated need {max} ms exceeds the closed form"
        );
        let check = parse_str(
            &text,
            "pause.toml",
            "pause",
            &[
                "simulation.trials=10000".into(),
                format!("shutdown[0].wait-s={}", r.worst_case_s),
            ],
        )
        .unwrap();
        let outcomes = run_trials(&check);
        let hits: u64 = outcomes.iter().map(|o| o.shutdowns[0].dead_hits).sum();
        assert_eq!(hits, 0);
    }

    /// Through Spring Cloud LoadBalancer (2020.0, FACTS.md §9) the balancer's term is the cache's
    /// 35 s time to live: 30 + 30 + 35 s + 4 x (1 + 4) ms, so 96 s; fed back with 10 000 trials
    /// of an OUT_OF_SERVICE wait (pause no longer deregisters on 2020.0), no dead hit.
    #[test]
    fn spring_cloud_loadbalancer_wait_adds_the_cache_ttl() {
        let text = std::fs::read_to_string("scenarios/service-registry.toml").unwrap();
        let sets = ["simulation.release=2020.0".to_string()];
        let s = parse_str(&text, "service-registry.toml", "sr", &sets).unwrap();
        assert_eq!(closed_form(&s).total_ms(), 95_020);
        let r = measure(
            &text,
            "service-registry.toml",
            &[sets[0].clone(), "simulation.trials=200".into()],
            Strategy::ServiceRegistry,
            99.9,
            &(),
        )
        .unwrap();
        assert_eq!(r.worst_case_s, 96);
        assert!(r.needed.max.unwrap() <= 95_020);
        let check = parse_str(
            &text,
            "service-registry.toml",
            "sr",
            &[
                sets[0].clone(),
                "simulation.trials=10000".into(),
                format!("shutdown[0].wait-s={}", r.worst_case_s),
            ],
        )
        .unwrap();
        let hits: u64 = run_trials(&check)
            .iter()
            .map(|o| o.shutdowns[0].dead_hits)
            .sum();
        assert_eq!(hits, 0);
    }
}
