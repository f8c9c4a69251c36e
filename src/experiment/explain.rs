//! One trial with everything it observed (`eureka-sim explain`, the timeline of `run`'s report).
//! This module only runs the trial and keeps the data; `report::explain` tells it in words, draws
//! its timeline and writes its trace.

use crate::engine::{SimTime, trial_seed};
use crate::eureka::{Layout, Observation, Observer, ProcessId, RequestMode, World};
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
    // A bare log is never at rest: the story runs the full simulation (a restart's new
    // registration, a /resume come after the measures rest), with the same outcomes.
    traced(scenario, trial, mode, |_| Vec::new(), |log| log)
}

/// Runs trial `trial` as `run` does with `log` beside the metrics, and keeps what `into_log`
/// takes of it.
fn traced<L: Observer>(
    scenario: &Scenario,
    trial: u32,
    mode: RequestMode,
    log: impl FnOnce(&Layout) -> L,
    into_log: impl FnOnce(L) -> Vec<(SimTime, Observation)>,
) -> TrialTrace {
    let seed = trial_seed(scenario.simulation.seed, trial);
    let layout = Layout::new(scenario);
    let observer = (MetricsObserver::new(&layout), log(&layout));
    let world = World::with_mode(scenario, seed, observer, mode);
    let ((metrics, log), ran) = world.run();
    TrialTrace {
        trial,
        seed,
        layout,
        log: into_log(log),
        outcomes: metrics.outcomes(ran.end),
        end: ran.end,
    }
}

/// Only the dead hits on the shutdown targets: what a timeline plot needs. At rest whenever the
/// metrics are, so the trial ends where `run`'s did.
struct DeadHitLog {
    targets: Vec<ProcessId>,
    log: Vec<(SimTime, Observation)>,
}

impl Observer for DeadHitLog {
    fn observe(&mut self, at: SimTime, observation: Observation) {
        let process = match observation {
            Observation::Attempt {
                process,
                dead: true,
                ..
            }
            | Observation::DeadHits { process, .. } => process,
            _ => return,
        };
        if self.targets.contains(&process) {
            self.log.push((at, observation));
        }
    }
}

/// Runs trial `trial` exactly as `run` does (same seed, same request mode, same end) and keeps
/// only the dead hits on the shutdown targets (single attempts, or counts over a span in
/// batched mode): the timeline of `run`'s report. Its memory does not grow with the fleet or
/// the request rate (the metrics' own state apart), unlike [`trace_trial`]'s.
pub fn trace_dead_hits(scenario: &Scenario, trial: u32, mode: RequestMode) -> TrialTrace {
    let hits = |layout: &Layout| DeadHitLog {
        targets: layout.targets.clone(),
        log: Vec::new(),
    };
    traced(scenario, trial, mode, hits, |hits| hits.log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::simulate;
    use crate::scenario::fixture::bundled;

    fn kill9() -> Scenario {
        bundled("kill-9", &[])
    }

    /// The timeline's trial is the trial `run` reports, to its end, with the same dead hits as
    /// the full trace (which goes on to duration-s, where no more come).
    #[test]
    fn the_timeline_trial_is_the_run_trial_with_its_dead_hits() {
        let s = kill9();
        let hits = trace_dead_hits(&s, 3, RequestMode::Batched);
        let run = simulate(&s, 3, trial_seed(s.simulation.seed, 3));
        assert_eq!(hits.outcomes, run.shutdowns);
        assert_eq!(hits.end.ms(), run.end_ms);
        let full = trace_trial(&s, 3, RequestMode::Batched);
        let target = full.layout.targets[0];
        let dead: Vec<_> = full
            .log
            .into_iter()
            .filter(
                |(_, o)| matches!(o, Observation::DeadHits { process, .. } if *process == target),
            )
            .collect();
        assert!(!dead.is_empty());
        assert_eq!(hits.log, dead);
        let counted: u64 = dead
            .iter()
            .map(|(_, o)| match o {
                Observation::DeadHits { count, .. } => *count,
                _ => 0,
            })
            .sum();
        assert_eq!(counted, run.shutdowns[0].dead_hits);
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
