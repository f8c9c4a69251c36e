//! `--max-memory` and `--max-events`: every command that runs trials estimates them first
//! (`experiment::budget`) and refuses, with the estimate and what to change, what would not fit
//! (exit 2, before any trial starts and before anything is written), runs fewer trials at once
//! when memory is what limits, and says how long a long run will take.

use crate::eureka::RequestMode;
use crate::experiment::budget::{
    self, BudgetError, DEFAULT_MAX_SECONDS, Estimate, Limits, MemorySource, TimeSource, memory_room,
};
use crate::scenario::Scenario;

/// The budget arguments, global: they may follow any command.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct BudgetArgs {
    /// Refuse a run whose estimated peak memory is above SIZE (e.g. 4G, 512M), and run fewer
    /// trials at once when that is enough [default: the memory this process may still use:
    /// the machine's available memory, its cgroup's memory.max, its ulimit -v, the least].
    #[arg(long, global = true, value_name = "SIZE", value_parser = budget::parse_memory)]
    max_memory: Option<u64>,
    /// Refuse a run estimated to handle more than N simulated events in all.
    #[arg(long, global = true, value_name = "N")]
    max_events: Option<u64>,
    /// Refuse a run estimated to take longer than DURATION on this machine (e.g. 30m, 10h, 2d;
    /// none: no limit) [default: 2h].
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_max_time)]
    max_time: Option<MaxTime>,
}

/// A `--max-time` value: seconds, or no limit (`none`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MaxTime(Option<f64>);

fn parse_max_time(text: &str) -> Result<MaxTime, String> {
    budget::parse_duration(text).map(MaxTime)
}

/// The threads rayon's global pool will have: `RAYON_NUM_THREADS`, else one per core (asking
/// rayon would build the pool, which could then not be narrowed).
pub(crate) fn pool_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A run estimated to take longer than this is announced on stderr with its estimate.
const ANNOUNCE_SECONDS: f64 = 30.0;

impl BudgetArgs {
    /// The limits these arguments set (the machine's available memory by default).
    pub(crate) fn limits(&self) -> Limits {
        let (max_memory, memory_source) = match self.max_memory {
            Some(max) => (Some(max), MemorySource::Flag),
            None => match memory_room() {
                Some((room, source)) => (Some(room), source),
                None => (None, MemorySource::Machine),
            },
        };
        Limits {
            max_memory,
            max_events: self.max_events,
            memory_source,
        }
    }

    /// Checks `runs` (each scenario with the trials it will run) before any starts: refuses,
    /// narrows rayon's pool to what memory allows, and announces a long run.
    pub(crate) fn check(
        &self,
        runs: &[(&Scenario, u64)],
        mode: RequestMode,
        traced: bool,
    ) -> Result<(), BudgetError> {
        let threads = pool_threads();
        let limits = self.limits();
        let mut at_once = threads;
        let (mut events, mut seconds) = (0u64, 0.0);
        let mut largest: Option<Estimate> = None;
        for &(scenario, trials) in runs {
            let mut estimate = Estimate::new(scenario, mode, trials, threads);
            if traced {
                estimate = estimate.traced();
            }
            // The event limit is on the whole command: checked on the sum below.
            let memory_only = Limits {
                max_events: None,
                ..limits
            };
            at_once = at_once.min(estimate.check(&memory_only)?);
            events = events.saturating_add(estimate.events());
            seconds += estimate.seconds();
            if largest.is_none_or(|l| l.cost.bytes < estimate.cost.bytes) {
                largest = Some(estimate);
            }
        }
        if let Some(max) = limits.max_events
            && events > max
        {
            let per_trial = largest.map_or(0, |l| l.cost.events);
            let trials = runs.iter().map(|(_, t)| t).sum();
            return Err(BudgetError::Events {
                estimate: events,
                per_trial,
                trials,
                max,
            });
        }
        let (max_s, from) = match self.max_time {
            Some(MaxTime(flag)) => (flag, TimeSource::Flag),
            None => (Some(DEFAULT_MAX_SECONDS), TimeSource::Default),
        };
        if let Some(max_s) = max_s
            && seconds > max_s
        {
            let trials: u64 = runs.iter().map(|(_, t)| t).sum();
            return Err(BudgetError::Time {
                estimate_s: seconds,
                max_s,
                from,
                threads: at_once,
                events,
                per_trial: events / trials.max(1),
                trials,
            });
        }
        if at_once < threads {
            // A global pool can be set once; a second command in one process keeps the first.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(at_once)
                .build_global();
            if let Some(l) = largest {
                eprintln!(
                    "note: {} trials at once instead of {threads}: each needs about {}",
                    at_once,
                    budget::bytes(l.cost.bytes)
                );
            }
        }
        if seconds > ANNOUNCE_SECONDS
            && let Some(l) = largest
        {
            let whole = Estimate {
                trials: runs.iter().map(|(_, t)| t).sum(),
                cost: budget::TrialCost {
                    events: events / runs.iter().map(|(_, t)| t).sum::<u64>().max(1),
                    ..l.cost
                },
                ..l
            };
            eprintln!(
                "note: {}; Ctrl-C stops it and leaves the output folder as it was \
                 (--max-events N refuses such runs)",
                whole.describe(at_once)
            );
        }
        Ok(())
    }
}
