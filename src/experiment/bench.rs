//! Throughput measurements (the `bench` command). Wall-clock timing lives here and in the
//! command, never in tests: the machines are shared and noisy, so the figures that matter are
//! ratios measured in one run.
//!
//! Peak memory is the process's high-water mark `VmHWM`, read from `/proc/self/status` (the
//! `libc` crate, which `getrusage(RUSAGE_SELF).ru_maxrss` would need, is not a dependency, and
//! this is the same figure on Linux). Before each measurement it is reset by writing `5` to
//! `/proc/self/clear_refs` (Linux >= 4.0), so each row shows its own peak; where the reset is
//! refused the row shows the peak so far, and the report says so.

mod oracle;

use std::time::Instant;

use crate::engine::trial_seed;
use crate::eureka::RequestMode;
use crate::scenario::{Scenario, ScenarioError, parse_str};

use super::{TrialOutcome, run_trials_with, simulate_with};

pub use oracle::{OracleRace, OracleRun, OracleStatus, race_oracle};

/// One measured configuration.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub label: String,
    pub trials: u32,
    pub events: u64,
    pub seconds: f64,
    /// Simulated instance-hours: the scenario's `[[app]]` instances times the simulated hours of
    /// each trial (its `end_ms`, so a trial that waited past `duration-s` counts its wait),
    /// summed over the trials.
    pub instance_hours: f64,
    /// Peak resident memory during the measurement (`VmHWM`, KiB), if `/proc` has it.
    pub peak_kib: Option<u64>,
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

    /// Simulated instance-hours per wall-clock second.
    pub fn instance_hours_per_s(&self) -> f64 {
        self.instance_hours / self.seconds
    }
}

/// The app instances of `scenario` (the fleet: every `[[app]]`'s `instances`; the callers and
/// Eureka servers are not counted).
pub fn fleet_instances(scenario: &Scenario) -> u64 {
    scenario
        .apps
        .iter()
        .map(|app| u64::from(app.instances))
        .sum()
}

/// Simulated instance-hours of `outcomes`: `instances` times the hours each trial simulated.
pub fn instance_hours(instances: u64, outcomes: impl IntoIterator<Item = u64>) -> f64 {
    let ms: u64 = outcomes.into_iter().sum();
    instances as f64 * ms as f64 / 3_600_000.0
}

/// The peak resident memory of this process (`VmHWM` in `/proc/self/status`, KiB).
pub fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

/// The `VmHWM:` line of a `/proc/<pid>/status` text, in KiB.
fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line["VmHWM:".len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Resets the peak to the current resident size (`echo 5 > /proc/self/clear_refs`); false where
/// the kernel refuses, and peaks then accumulate over the run.
fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Runs `trials` trials on the calling thread only.
fn one_thread(label: &str, scenario: &Scenario, trials: u32, mode: RequestMode) -> Measurement {
    reset_peak_memory();
    let start = Instant::now();
    let mut events = 0;
    let mut end_ms = 0;
    for trial in 0..trials {
        let seed = trial_seed(scenario.simulation.seed, trial);
        let outcome = simulate_with(scenario, trial, seed, mode);
        events += outcome.events;
        end_ms += outcome.end_ms;
    }
    let seconds = start.elapsed().as_secs_f64();
    Measurement {
        label: label.to_string(),
        trials,
        events,
        seconds,
        instance_hours: instance_hours(fleet_instances(scenario), [end_ms]),
        peak_kib: peak_memory_kib(),
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
    reset_peak_memory();
    let start = Instant::now();
    let run = || run_trials_with(&scenario, RequestMode::Batched, &|| {});
    let outcomes: Vec<TrialOutcome> = match &pool {
        Some(pool) => pool.install(run),
        None => run(),
    };
    let seconds = start.elapsed().as_secs_f64();
    Measurement {
        label: label.to_string(),
        trials,
        events: outcomes.iter().map(|o| o.events).sum(),
        seconds,
        instance_hours: instance_hours(
            fleet_instances(&scenario),
            outcomes.iter().map(|o| o.end_ms),
        ),
        peak_kib: peak_memory_kib(),
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
    /// Whether each measurement's peak memory is its own (the reset worked) or the peak so far.
    pub peak_is_per_measurement: bool,
    /// The budget's estimate of a trial against the one-thread measurement.
    pub estimate: EstimateAccuracy,
}

/// The budget's estimate (`experiment::budget`, what every command refuses or announces by)
/// beside what one thread measured, per trial: the benchmark of the estimate's accuracy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimateAccuracy {
    pub estimated_events: u64,
    pub measured_events: f64,
    pub estimated_seconds: f64,
    pub measured_seconds: f64,
    pub estimated_bytes: u64,
}

impl EstimateAccuracy {
    /// The estimate of `scenario`'s trial beside `measured` (one thread, batched).
    pub fn of(scenario: &Scenario, measured: &Measurement) -> EstimateAccuracy {
        let estimate = super::budget::Estimate::new(scenario, RequestMode::Batched, 1, 1);
        let trials = f64::from(measured.trials.max(1));
        EstimateAccuracy {
            estimated_events: estimate.cost.events,
            measured_events: measured.events as f64 / trials,
            estimated_seconds: estimate.seconds(),
            measured_seconds: measured.seconds / trials,
            estimated_bytes: estimate.peak_bytes(1),
        }
    }

    /// Estimated time over measured time (above 1: the estimate is pessimistic).
    pub fn time_ratio(&self) -> f64 {
        self.estimated_seconds / self.measured_seconds.max(1e-9)
    }

    /// Estimated events over measured events.
    pub fn events_ratio(&self) -> f64 {
        self.estimated_events as f64 / self.measured_events.max(1.0)
    }
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
    let peak_is_per_measurement = reset_peak_memory();
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
    let estimate = EstimateAccuracy::of(&base, &single);
    Ok(BenchReport {
        estimate,
        thread_speedup: t2.trials_per_s() / t1.trials_per_s(),
        rate_cost_ratio: r1000.ms_per_trial() / r20.ms_per_trial(),
        rate_cost_ratio_per_request: p1000.ms_per_trial() / p20.ms_per_trial(),
        measurements: vec![single, t1, t2, r20, r1000, p20, p1000],
        peak_is_per_measurement,
    })
}

/// Times `trials` trials of the oracle's world (`text`, the scenario mirroring its case file) on
/// the calling thread: eureka-sim's side of [`race_oracle`].
pub fn time_oracle_world(
    text: &str,
    source: &str,
    trials: u32,
) -> Result<Measurement, ScenarioError> {
    let scenario = parse_str(text, source, "bench", &[])?;
    Ok(one_thread(
        "oracle's world, 1 thread",
        &scenario,
        trials,
        RequestMode::Batched,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_hours_are_instances_times_simulated_hours() {
        // 12 instances, 200 trials of 4 200 s each: 12 x 200 x 4200 / 3600 = 2 800.
        let hours = instance_hours(12, std::iter::repeat_n(4_200_000, 200));
        assert!((hours - 2_800.0).abs() < 1e-9, "{hours}");
        // A trial that ran on to 5 400 s counts its extra 20 minutes.
        let hours = instance_hours(10, [3_600_000, 5_400_000]);
        assert!((hours - 25.0).abs() < 1e-9, "{hours}");
        let m = Measurement {
            label: String::new(),
            trials: 2,
            events: 100,
            seconds: 0.5,
            instance_hours: hours,
            peak_kib: None,
        };
        assert!((m.instance_hours_per_s() - 50.0).abs() < 1e-9);
    }

    #[test]
    fn the_fleet_counts_app_instances_only() {
        let text = "[[app]]\nname = \"a\"\ninstances = 3\n[[app]]\nname = \"b\"\ninstances = \
                    4\n[[caller]]\nname = \"gw\"\ncalls = [\"a\", \"b\"]\n";
        let scenario = parse_str(text, "t.toml", "test", &[]).unwrap();
        assert_eq!(fleet_instances(&scenario), 7);
    }

    #[test]
    fn vm_hwm_is_read_in_kib() {
        let status =
            "Name:\teureka-sim\nVmPeak:\t  20000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 100 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(12_345));
        assert_eq!(parse_vm_hwm("Name: x\n"), None);
    }

    #[test]
    fn this_process_has_a_peak_memory_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_memory_kib().is_some_and(|kib| kib > 0));
        }
    }
}
