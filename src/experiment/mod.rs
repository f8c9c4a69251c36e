//! Experiments: trials of a scenario and their outcomes.

mod metric;
mod metrics;
mod stats;

pub use metric::Metric;
pub use metrics::{MetricsObserver, ShutdownOutcome};
pub use stats::{Stats, percentile};

use rayon::prelude::*;

use crate::engine::trial_seed;
use crate::eureka::{Layout, World};
use crate::scenario::Scenario;

/// The outcome of one trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialOutcome {
    pub trial: u32,
    /// The trial's own seed (derived from the scenario seed and the trial index).
    pub seed: u64,
    /// One outcome per `[[shutdown]]`, in scenario order.
    pub shutdowns: Vec<ShutdownOutcome>,
    /// Events the trial handled.
    pub events: u64,
}

/// Simulates one trial. Pure and deterministic: the same scenario and seed give the same outcome.
pub fn simulate(scenario: &Scenario, trial: u32, seed: u64) -> TrialOutcome {
    let layout = Layout::new(scenario);
    let world = World::new(scenario, seed, MetricsObserver::new(&layout));
    let (observer, events) = world.run();
    TrialOutcome {
        trial,
        seed,
        shutdowns: observer.outcomes(),
        events,
    }
}

/// Runs every trial of the scenario on all cores and returns them in trial order. Each trial's
/// streams derive from the scenario seed and the trial index alone, so the result does not depend
/// on the number of threads.
pub fn run_trials(scenario: &Scenario) -> Vec<TrialOutcome> {
    run_trials_with(scenario, &|| {})
}

/// [`run_trials`], calling `on_trial_done` after each trial (from any thread), e.g. for a
/// progress bar.
pub fn run_trials_with(
    scenario: &Scenario,
    on_trial_done: &(dyn Fn() + Sync),
) -> Vec<TrialOutcome> {
    let seed = scenario.simulation.seed;
    (0..scenario.simulation.trials)
        .into_par_iter()
        .map(|trial| {
            let outcome = simulate(scenario, trial, trial_seed(seed, trial));
            on_trial_done();
            outcome
        })
        .collect()
}
