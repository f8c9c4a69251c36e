//! Comparing shutdown strategies in the same world, with common random numbers.
//!
//! A comparison runs one scenario once per [`Variant`] (a strategy, and for `pause` and
//! `service-registry` a wait). Every variant keeps the scenario's seed, so trial `k` of every
//! variant has the same trial seed and therefore the same per-actor random streams (they derive
//! from the seed, the trial index and the actor's name; see `crate::engine`): the same start-up
//! phases, timer phases and request arrivals. A difference between two variants in trial `k` is
//! due to the strategy, not to a different draw, which makes small differences visible with few
//! trials (the method of common random numbers).
//!
//! A variant is applied as `--set` overrides on top of the user's own, to *every* `[[shutdown]]`
//! of the scenario: `shutdown[i].strategy=<strategy>` and, for the strategies that wait,
//! `shutdown[i].wait-s=<wait>`. A scenario with several shutdowns is thus compared as "every
//! departure uses this method". `then` (how a waiting strategy finally stops) is left as the
//! scenario has it. Because the variant's overrides come last, they win over a `--set` of the
//! same key.
//!
//! Every variant's scenario is validated before any trial runs ([`plan_compare`]); running is
//! [`run_compare`], pure and deterministic like [`crate::experiment::run_trials`].

use crate::eureka::RequestMode;
use crate::scenario::{Scenario, ScenarioError, Strategy};

use super::{Stats, TrialOutcome, Unresolved, run_trials_with};
use crate::scenario::Metric;

/// One way to stop the scenario's instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub strategy: Strategy,
    /// For `pause` and `service-registry`: the wait in seconds given to every shutdown; `None`
    /// keeps each shutdown's own `wait-s`. Always `None` for the kills, which do not wait.
    pub wait_s: Option<u64>,
}

impl Variant {
    /// The variant's name in files and tables: `kill-9`, `pause-90s`, or `pause` when the
    /// scenario's own waits are kept.
    pub fn name(&self) -> String {
        match self.wait_s {
            Some(wait) => format!("{}-{wait}s", self.strategy.name()),
            None => self.strategy.name().to_string(),
        }
    }

    /// The `--set` overrides that apply the variant to a scenario with `shutdowns` `[[shutdown]]`
    /// tables.
    pub fn overrides(&self, shutdowns: usize) -> Vec<String> {
        let mut overrides = Vec::new();
        for i in 0..shutdowns {
            overrides.push(format!("shutdown[{i}].strategy={}", self.strategy.name()));
            if let Some(wait) = self.wait_s {
                overrides.push(format!("shutdown[{i}].wait-s={wait}"));
            }
        }
        overrides
    }
}

/// The variants of `strategies` (in the order given, repeats dropped): one per strategy for the
/// kills, and one per wait of `waits_s` (in the order given, repeats dropped) for `pause` and
/// `service-registry`. Without waits, the waiting strategies use `default_wait_s`: `Some(w)` for
/// one wait, `None` to keep each shutdown's own.
pub fn expand_variants(
    strategies: &[Strategy],
    waits_s: &[u64],
    default_wait_s: Option<u64>,
) -> Vec<Variant> {
    let mut waits: Vec<Option<u64>> = Vec::new();
    for &w in waits_s {
        if !waits.contains(&Some(w)) {
            waits.push(Some(w));
        }
    }
    if waits.is_empty() {
        waits.push(default_wait_s);
    }
    let mut variants = Vec::new();
    for &strategy in strategies {
        let for_strategy: Vec<Variant> = if strategy.waits() {
            waits
                .iter()
                .map(|&wait_s| Variant { strategy, wait_s })
                .collect()
        } else {
            vec![Variant {
                strategy,
                wait_s: None,
            }]
        };
        for variant in for_strategy {
            if !variants.contains(&variant) {
                variants.push(variant);
            }
        }
    }
    variants
}

/// The wait every shutdown of `scenario` shares, in whole seconds; `None` when they differ (or
/// there is no shutdown).
pub fn common_wait_s(scenario: &Scenario) -> Option<u64> {
    let first = scenario.shutdowns.first()?.wait_ms;
    scenario
        .shutdowns
        .iter()
        .all(|s| s.wait_ms == first)
        .then_some(first / 1000)
}

/// Statistics of one metric of one shutdown over the trials of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ShutdownStats {
    /// Index into `Scenario::shutdowns`.
    pub shutdown: usize,
    pub instance: String,
    pub metric: Metric,
    pub stats: Stats,
    /// The trials without a value (`stats.unresolved`) by reason, in [`Unresolved::ALL`] order,
    /// reasons with no trial left out.
    pub unresolved_by: Vec<(Unresolved, usize)>,
}

/// How many of `outcomes` have no value of `metric` in shutdown `s`, by reason.
pub fn unresolved_by_reason(
    outcomes: &[TrialOutcome],
    s: usize,
    metric: Metric,
) -> Vec<(Unresolved, usize)> {
    Unresolved::ALL
        .into_iter()
        .map(|reason| {
            let count = outcomes
                .iter()
                .filter(|o| {
                    o.shutdowns
                        .get(s)
                        .and_then(|x| x.unresolved(metric))
                        .is_some_and(|r| r == reason)
                })
                .count();
            (reason, count)
        })
        .filter(|&(_, count)| count > 0)
        .collect()
}

/// The statistics of every metric of every shutdown, shutdown by shutdown in scenario order and
/// metric by metric in [`Metric::ALL`] order: the same figures as `summary.csv` of `run`.
pub fn shutdown_stats(scenario: &Scenario, outcomes: &[TrialOutcome]) -> Vec<ShutdownStats> {
    let mut rows = Vec::new();
    for (s, shutdown) in scenario.shutdowns.iter().enumerate() {
        for metric in Metric::ALL {
            let values = outcomes
                .iter()
                .map(|o| o.shutdowns.get(s).and_then(|x| x.value(metric)));
            rows.push(ShutdownStats {
                shutdown: s,
                instance: shutdown.instance.clone(),
                metric,
                stats: Stats::of(values),
                unresolved_by: unresolved_by_reason(outcomes, s, metric),
            });
        }
    }
    rows
}

/// A variant whose scenario was validated: ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedVariant {
    pub variant: Variant,
    /// The overrides that made it from the base scenario.
    pub overrides: Vec<String>,
    pub scenario: Scenario,
}

/// A variant whose scenario is invalid (e.g. a wait that ends after the trial).
#[derive(Debug, thiserror::Error)]
#[error("apply variant {variant}")]
pub struct VariantError {
    pub variant: String,
    /// Boxed: the error travels up through every call, the scenario error is large.
    #[source]
    pub source: Box<ScenarioError>,
}

/// Validates every variant before anything runs. `load` validates the base scenario (with the
/// user's own overrides) plus the extra overrides it is given; `shutdowns` is the number of
/// `[[shutdown]]` tables of the base scenario ([`Scenario::shutdown_tables`]: a zone outage is
/// one table).
pub fn plan_compare(
    variants: &[Variant],
    shutdowns: usize,
    mut load: impl FnMut(&[String]) -> Result<Scenario, ScenarioError>,
) -> Result<Vec<PlannedVariant>, VariantError> {
    variants
        .iter()
        .map(|&variant| {
            let overrides = variant.overrides(shutdowns);
            let scenario = load(&overrides).map_err(|source| VariantError {
                variant: variant.name(),
                source: Box::new(source),
            })?;
            Ok(PlannedVariant {
                variant,
                overrides,
                scenario,
            })
        })
        .collect()
}

/// One variant's results.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantResult {
    pub variant: Variant,
    pub overrides: Vec<String>,
    pub scenario: Scenario,
    /// As [`shutdown_stats`].
    pub stats: Vec<ShutdownStats>,
}

impl VariantResult {
    /// The statistics of `metric` for shutdown `shutdown`.
    pub fn get(&self, shutdown: usize, metric: Metric) -> Option<&Stats> {
        find_stats(&self.stats, shutdown, metric)
    }
}

/// The statistics of `metric` for shutdown `shutdown` among `rows` (from [`shutdown_stats`]).
pub fn find_stats(rows: &[ShutdownStats], shutdown: usize, metric: Metric) -> Option<&Stats> {
    rows.iter()
        .find(|r| r.shutdown == shutdown && r.metric == metric)
        .map(|r| &r.stats)
}

/// The results of a comparison, variant by variant in the planned order.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub variants: Vec<VariantResult>,
}

/// Runs every planned variant's trials, one variant after the other (each on all cores), calling
/// `on_trial_done` after each trial. Deterministic: the result does not depend on the number of
/// threads.
/// A trial over its event limit fails the comparison ([`super::budget::check_outcomes`]).
pub fn run_compare(
    plan: Vec<PlannedVariant>,
    mode: RequestMode,
    on_trial_done: &(dyn Fn() + Sync),
) -> Result<Comparison, super::budget::BudgetError> {
    let variants = plan
        .into_iter()
        .map(|p| {
            let outcomes = run_trials_with(&p.scenario, mode, on_trial_done);
            super::budget::check_outcomes(&outcomes)?;
            Ok(VariantResult::of(p, &outcomes))
        })
        .collect::<Result<_, _>>()?;
    Ok(Comparison { variants })
}

impl VariantResult {
    /// The result of variant `p` from its outcomes (every trial, in trial order): from
    /// [`run_compare`], or from `merge` putting the shards' trials back together.
    pub fn of(p: PlannedVariant, outcomes: &[TrialOutcome]) -> VariantResult {
        VariantResult {
            variant: p.variant,
            overrides: p.overrides,
            stats: shutdown_stats(&p.scenario, outcomes),
            scenario: p.scenario,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::fixture::{ScenarioText, parse};

    const KILL9: Variant = Variant {
        strategy: Strategy::Kill9,
        wait_s: None,
    };

    fn names(variants: &[Variant]) -> Vec<String> {
        variants.iter().map(Variant::name).collect()
    }

    #[test]
    fn kills_ignore_waits_and_waiting_strategies_get_one_variant_per_wait() {
        let variants = expand_variants(&Strategy::ALL, &[30, 60, 90], Some(0));
        assert_eq!(
            names(&variants),
            [
                "kill-9",
                "kill-15",
                "pause-30s",
                "pause-60s",
                "pause-90s",
                "service-registry-30s",
                "service-registry-60s",
                "service-registry-90s"
            ]
        );
    }

    #[test]
    fn without_waits_the_scenario_wait_is_used() {
        let variants = expand_variants(&[Strategy::Pause, Strategy::Kill15], &[], Some(90));
        assert_eq!(names(&variants), ["pause-90s", "kill-15"]);
        let variants = expand_variants(&[Strategy::ServiceRegistry], &[], None);
        assert_eq!(names(&variants), ["service-registry"]);
        assert_eq!(
            variants[0].overrides(1),
            ["shutdown[0].strategy=service-registry"]
        );
    }

    #[test]
    fn repeated_strategies_and_waits_are_dropped_in_order() {
        let variants = expand_variants(
            &[Strategy::Kill15, Strategy::Pause, Strategy::Kill15],
            &[60, 30, 60],
            None,
        );
        assert_eq!(names(&variants), ["kill-15", "pause-60s", "pause-30s"]);
    }

    #[test]
    fn a_variant_applies_to_every_shutdown() {
        let pause = Variant {
            strategy: Strategy::Pause,
            wait_s: Some(45),
        };
        assert_eq!(
            pause.overrides(2),
            [
                "shutdown[0].strategy=pause",
                "shutdown[0].wait-s=45",
                "shutdown[1].strategy=pause",
                "shutdown[1].wait-s=45"
            ]
        );
        assert_eq!(KILL9.overrides(1), ["shutdown[0].strategy=kill-9"]);
    }

    fn two_shutdowns() -> String {
        ScenarioText::simulation(&["duration-s = 600", "trials = 6"])
            .fleet(20, &[])
            .shutdown("svc-0", 200, "kill-9", &[])
            .shutdown("svc-1", 250, "pause", &["wait-s = 30"])
            .text()
    }

    fn load(extra: &[String]) -> Result<Scenario, ScenarioError> {
        parse(&two_shutdowns(), extra)
    }

    #[test]
    fn planning_validates_every_variant_and_names_the_bad_one() {
        let base = load(&[]).unwrap();
        assert_eq!(common_wait_s(&base), None);
        let variants = expand_variants(&[Strategy::Kill15, Strategy::Pause], &[60, 400], None);
        let e = plan_compare(&variants, 2, load).unwrap_err();
        assert_eq!(e.variant, "pause-400s");
        assert!(e.source.to_string().contains("wait-s"), "{}", e.source);

        let variants = expand_variants(&[Strategy::Kill15, Strategy::Pause], &[60], None);
        let plan = plan_compare(&variants, 2, load).unwrap();
        let strategies: Vec<Vec<Strategy>> = plan
            .iter()
            .map(|p| p.scenario.shutdowns.iter().map(|s| s.strategy).collect())
            .collect();
        assert_eq!(
            strategies,
            [
                [Strategy::Kill15, Strategy::Kill15],
                [Strategy::Pause, Strategy::Pause]
            ]
        );
        assert!(
            plan[1]
                .scenario
                .shutdowns
                .iter()
                .all(|s| s.wait_ms == 60_000)
        );
    }

    /// Found by fuzzing: a trial that stops at its event limit fails the comparison with the trial and
    /// the limit (a limit of 50 events: a trial handles thousands), as it fails `run`.
    #[test]
    fn a_trial_over_its_event_limit_fails_the_comparison() {
        let mut plan = plan_compare(&[KILL9], 2, load).unwrap();
        plan[0].scenario.simulation.event_limit = Some(50);
        let err = run_compare(plan, RequestMode::default(), &|| {}).unwrap_err();
        assert_eq!(
            err,
            super::super::budget::BudgetError::TrialLimit {
                trial: 0,
                limit: 50
            }
        );
    }

    /// Common random numbers: every variant's trial k has the same trial seed, and a variant
    /// equal to the base scenario reproduces the base run exactly.
    #[test]
    fn variants_share_trial_seeds_and_reproduce_a_plain_run() {
        let plan = plan_compare(&[KILL9], 2, load).unwrap();
        let comparison = run_compare(plan.clone(), RequestMode::default(), &|| {}).unwrap();
        let outcomes = crate::experiment::run_trials(&plan[0].scenario);
        assert_eq!(
            comparison.variants[0].stats,
            shutdown_stats(&plan[0].scenario, &outcomes)
        );

        let two = plan_compare(
            &expand_variants(&[Strategy::Kill9, Strategy::Kill15], &[], None),
            2,
            load,
        )
        .unwrap();
        let seeds = |p: &PlannedVariant| -> Vec<u64> {
            crate::experiment::run_trials(&p.scenario)
                .iter()
                .map(|o| o.seed)
                .collect()
        };
        assert_eq!(seeds(&two[0]), seeds(&two[1]));
    }
}
