//! Experiments: trials of a scenario and their outcomes.

mod metric;
mod metrics;
mod stats;

pub use metric::Metric;
pub use metrics::{MetricsObserver, ShutdownOutcome};
pub use stats::{Stats, percentile};

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

/// Runs every trial of the scenario, in trial order.
pub fn run_trials(scenario: &Scenario) -> Vec<TrialOutcome> {
    let seed = scenario.simulation.seed;
    (0..scenario.simulation.trials)
        .map(|trial| simulate(scenario, trial, trial_seed(seed, trial)))
        .collect()
}
