//! One trial with everything it observed (`eureka-sim explain`, the timeline of `run`'s report).
//! This module only runs the trial and keeps the data; `report::explain` tells it in words, draws
//! its timeline and writes its trace.

use crate::engine::{SimTime, trial_seed};
use crate::eureka::{Layout, Observation, RequestMode, World};
use crate::scenario::Scenario;

use super::{MetricsObserver, ShutdownOutcome};

/// One trial with everything it observed.
pub struct TrialTrace {
    pub trial: u32,
    pub seed: u64,
    pub layout: Layout,
    pub log: Vec<(SimTime, Observation)>,
    /// The same outcomes `run` reports for this trial.
    pub outcomes: Vec<ShutdownOutcome>,
    /// When the trial ended (`duration-s`, or later when it waited for the news).
    pub end: SimTime,
}

/// Runs trial `trial` of the scenario exactly as `run` does (same seed, same request mode) and
/// keeps every observation, to `duration-s` at least: the full simulation, whose outcomes are
/// `run`'s (`ending_at_rest_changes_nothing_but_the_end`) but whose story goes on after the
/// measures came to rest.
pub fn trace_trial(scenario: &Scenario, trial: u32, mode: RequestMode) -> TrialTrace {
    let seed = trial_seed(scenario.simulation.seed, trial);
    let layout = Layout::new(scenario);
    // A bare log is never at rest: the story runs the full simulation (a restart's new
    // registration, a /resume come after the measures rest), with the same outcomes.
    let observer = (MetricsObserver::new(&layout), Vec::new());
    let world = World::with_mode(scenario, seed, observer, mode);
    let ((metrics, log), ran) = world.run();
    TrialTrace {
        trial,
        seed,
        layout,
        log,
        outcomes: metrics.outcomes(ran.end),
        end: ran.end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::simulate;
    use crate::scenario::fixture::bundled;

    fn kill9() -> Scenario {
        bundled("kill-9", &[])
    }

    /// The explained trial is the trial `run` reports: same seed, same outcome; `run` ended it
    /// at rest, the trace goes on to `duration-s`.
    #[test]
    fn explain_reproduces_the_run_trial() {
        let s = kill9();
        let trace = trace_trial(&s, 3, RequestMode::Batched);
        let run = simulate(&s, 3, trial_seed(s.simulation.seed, 3));
        assert_eq!(trace.outcomes, run.shutdowns);
        assert!(run.end_ms < s.simulation.duration_ms, "it ended at rest");
        assert_eq!(trace.end.ms(), s.simulation.duration_ms);
    }
}
