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
/// measures came to rest. (`run`'s own timeline needs no trace: its trials keep their dead hits,
/// `TrialOutcome::dead_hit_spans`.)
pub fn trace_trial(scenario: &Scenario, trial: u32, mode: RequestMode) -> TrialTrace {
    let seed = trial_seed(scenario.simulation.seed, trial);
    let layout = Layout::new(scenario);
    // A bare log is never at rest: the story runs the full simulation (a restart's new
    // registration, a /resume come after the measures rest), with the same outcomes.
    let targets = layout.targets.clone();
    let observer = (MetricsObserver::new(&layout), TraceLog::new(targets));
    // Bounded as `run`'s trials are (`budget::event_limit`): a runaway trial stops there.
    // Every client fetches (the story may tell any client's fetch), with the same outcomes
    // as `run`'s trial (`the_fast_mode_changes_no_observation`).
    let world = World::with_every_fetch(scenario, seed, observer, mode)
        .limit_events(super::budget::event_limit(scenario, mode));
    let ((metrics, trace), ran) = world.run();
    TrialTrace {
        trial,
        seed,
        layout,
        log: trace.log,
        outcomes: metrics.outcomes(ran.end),
        end: ran.end,
    }
}

/// The observations a trace keeps: all of them but a Eureka client cache's news that some
/// instance other than a stopped one is UP. A fleet starts with every cache listing every
/// instance, so those are N^2 (10^8 at 10 000 instances: 5.5 GB, found by fuzzing), and nothing in an
/// explanation reads them: it follows the stopped instances, and counts what a fetch dropped
/// (`up: false`, kept for every instance).
struct TraceLog {
    targets: Vec<ProcessId>,
    log: Vec<(SimTime, Observation)>,
}

impl TraceLog {
    fn new(targets: Vec<ProcessId>) -> TraceLog {
        TraceLog {
            targets,
            log: Vec::new(),
        }
    }
}

impl Observer for TraceLog {
    fn observe(&mut self, at: SimTime, observation: Observation) {
        if let Observation::ClientCache {
            process, up: true, ..
        } = observation
            && !self.targets.contains(&process)
        {
            return;
        }
        self.log.push((at, observation));
    }

    /// Like a bare log, never at rest: the story runs the full simulation.
    fn at_rest(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{DeadHitSpan, simulate, simulate_with};
    use crate::scenario::fixture::bundled;

    fn kill9() -> Scenario {
        bundled("kill-9", &[])
    }

    /// The trace leaves out only a client cache learning that a non-stopped instance is UP
    /// (N^2 at a fleet's start): the stopped instance's cache entries are there, both ways, and
    /// a cold start's caches learning the other instances are not.
    #[test]
    fn the_trace_keeps_the_stopped_instances_cache_news_and_drops_the_fleets() {
        let s = bundled("kill-9", &["simulation.start=\"cold\"".into()]);
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let target = trace.layout.targets[0];
        let cache = |up: bool, of_target: bool| {
            trace.log.iter().any(|(_, o)| {
                matches!(o, Observation::ClientCache { process, up: u, .. }
                    if *u == up && (*process == target) == of_target)
            })
        };
        assert!(cache(true, true), "the stopped instance listed UP");
        assert!(cache(false, true), "the stopped instance dropped");
        assert!(!cache(true, false), "another instance listed UP was kept");
    }

    /// The dead hits a trial keeps as it runs (`run`'s timeline) are those the full trace
    /// observes on the instance (which goes on to duration-s, where no more come): in batched
    /// mode the counted spans themselves; and they add up to the trial's dead hits.
    #[test]
    fn a_trial_keeps_the_dead_hits_its_trace_observes() {
        let s = kill9();
        let run = simulate(&s, 3, trial_seed(s.simulation.seed, 3));
        let full = trace_trial(&s, 3, RequestMode::Batched);
        let target = full.layout.targets[0];
        let traced: Vec<DeadHitSpan> = full
            .log
            .iter()
            .filter_map(|(_, o)| match o {
                Observation::DeadHits {
                    process,
                    count,
                    since,
                    last,
                    ..
                } if *process == target => Some(DeadHitSpan {
                    since_ms: since.ms(),
                    last_ms: last.ms(),
                    count: *count,
                }),
                _ => None,
            })
            .collect();
        assert!(!traced.is_empty());
        assert_eq!(run.dead_hit_spans, vec![traced]);
        let counted: u64 = run.dead_hit_spans[0].iter().map(|h| h.count).sum();
        assert_eq!(counted, run.shutdowns[0].dead_hits);
    }

    /// Per request, each refused attempt is an observation of its own; the trial keeps one
    /// point per instant with their number, as many hits in all as the trace has attempts.
    /// (Round robin sends two requests of one instant to different instances, so points rarely
    /// merge here; `dead_hits_are_kept_for_the_timeline_as_spans` merges some.)
    #[test]
    fn per_request_hits_are_kept_one_point_per_instant() {
        let s = kill9();
        let seed = trial_seed(s.simulation.seed, 3);
        let run = simulate_with(&s, 3, seed, RequestMode::PerRequest);
        let full = trace_trial(&s, 3, RequestMode::PerRequest);
        let target = full.layout.targets[0];
        let mut instants: Vec<(u64, u64)> = Vec::new();
        for (t, o) in &full.log {
            if matches!(o, Observation::Attempt { process, dead: true, .. } if *process == target) {
                match instants.last_mut() {
                    Some((at, n)) if *at == t.ms() => *n += 1,
                    _ => instants.push((t.ms(), 1)),
                }
            }
        }
        assert!(instants.len() > 10);
        let kept: Vec<(u64, u64)> = run.dead_hit_spans[0]
            .iter()
            .map(|h| {
                assert_eq!(h.since_ms, h.last_ms);
                (h.since_ms, h.count)
            })
            .collect();
        assert_eq!(kept, instants);
        let total: u64 = instants.iter().map(|&(_, n)| n).sum();
        assert_eq!(total, run.shutdowns[0].dead_hits);
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
