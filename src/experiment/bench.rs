//! Throughput measurements (the `bench` command). Wall-clock timing lives here and in the
//! command, never in tests: the machines are shared and noisy, so the figures that matter are
//! ratios measured in one run.

use std::time::Instant;

use crate::engine::trial_seed;
use crate::eureka::RequestMode;
use crate::scenario::{Scenario, ScenarioError, parse_str};

use super::{run_trials_with, simulate_with};

/// One measured configuration.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub label: String,
    pub trials: u32,
    pub events: u64,
    pub seconds: f64,
}

impl Measurement {
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.seconds
    }

    pub fn trials_per_s(&self) -> f64 {
        f64::from(self.trials) / self.seconds
    }

    pub fn ms_per_trial(&self) -> f64 {
        self.seconds * 1000.0 / f64::from(self.trials)
    }
}

/// Runs `trials` trials on the calling thread only.
fn one_thread(label: &str, scenario: &Scenario, trials: u32, mode: RequestMode) -> Measurement {
    let start = Instant::now();
    let mut events = 0;
    for trial in 0..trials {
        let seed = trial_seed(scenario.simulation.seed, trial);
        events += simulate_with(scenario, trial, seed, mode).events;
    }
    Measurement {
        label: label.to_string(),
        trials,
        events,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Runs `trials` trials on a pool of `threads` threads.
fn pooled(label: &str, scenario: &Scenario, trials: u32, threads: usize) -> Measurement {
    let mut scenario = scenario.clone();
    scenario.simulation.trials = trials;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .ok();
    let start = Instant::now();
    let run = || run_trials_with(&scenario, RequestMode::Batched, &|| {});
    let outcomes = match &pool {
        Some(pool) => pool.install(run),
        None => run(),
    };
    Measurement {
        label: label.to_string(),
        trials,
        events: outcomes.iter().map(|o| o.events).sum(),
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The benchmark's figures.
#[derive(Debug, Clone)]
pub struct BenchReport {
    pub measurements: Vec<Measurement>,
    /// trials/s with 2 threads over trials/s with 1.
    pub thread_speedup: f64,
    /// Cost of a trial at 1000 requests/s over the cost at 20/s (batched).
    pub rate_cost_ratio: f64,
    /// The same ratio in the per-request reference mode.
    pub rate_cost_ratio_per_request: f64,
}

/// Measures `scenario` (normally `scenarios/kill-9.toml`, whose text is `text`): events/s on one
/// core, trials/s on 1 and 2 threads, and the cost of a trial at 20 vs 1000 requests/s.
pub fn bench(text: &str, source: &str, trials: u32) -> Result<BenchReport, ScenarioError> {
    let at_rate = |rate: u32| {
        parse_str(
            text,
            source,
            "bench",
            &[format!("caller[0].rate-per-s={rate}")],
        )
    };
    let base = parse_str(text, source, "bench", &[])?;
    let slow_rate = at_rate(20)?;
    let fast_rate = at_rate(1000)?;
    // Warm up caches and the allocator.
    one_thread("warm-up", &base, trials.div_ceil(10), RequestMode::Batched);
    let single = one_thread(
        "events, 1 thread (batched)",
        &base,
        trials,
        RequestMode::Batched,
    );
    let t1 = pooled("trials, 1 thread", &base, trials, 1);
    let t2 = pooled("trials, 2 threads", &base, trials, 2);
    let r20 = one_thread(
        "20 requests/s (batched)",
        &slow_rate,
        trials,
        RequestMode::Batched,
    );
    let r1000 = one_thread(
        "1000 requests/s (batched)",
        &fast_rate,
        trials,
        RequestMode::Batched,
    );
    let reference_trials = (trials / 10).max(1);
    let p20 = one_thread(
        "20 requests/s (per request)",
        &slow_rate,
        reference_trials,
        RequestMode::PerRequest,
    );
    let p1000 = one_thread(
        "1000 requests/s (per request)",
        &fast_rate,
        reference_trials,
        RequestMode::PerRequest,
    );
    Ok(BenchReport {
        thread_speedup: t2.trials_per_s() / t1.trials_per_s(),
        rate_cost_ratio: r1000.ms_per_trial() / r20.ms_per_trial(),
        rate_cost_ratio_per_request: p1000.ms_per_trial() / p20.ms_per_trial(),
        measurements: vec![single, t1, t2, r20, r1000, p20, p1000],
    })
}
