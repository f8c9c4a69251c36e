//! `eureka-sim bench`: the measurements of `experiment::bench`, as a table.

use std::fmt::Write as _;

use crate::experiment::bench as measure;
use crate::scenario::ScenarioError;

/// `eureka-sim bench`: measures the scenario `text` (from `source`) with `trials` trials per
/// measurement and returns the table.
pub fn bench(text: &str, source: &str, trials: u32) -> Result<String, ScenarioError> {
    let report = measure(text, source, trials.max(1))?;
    let mut out = String::new();
    let _ = writeln!(out, "{source}: {trials} trials per measurement");
    let _ = writeln!(
        out,
        "  {:<32}{:>8}{:>14}{:>14}{:>12}{:>12}",
        "", "trials", "events", "events/s", "trials/s", "ms/trial"
    );
    for m in &report.measurements {
        let _ = writeln!(
            out,
            "  {:<32}{:>8}{:>14}{:>13.2}M{:>12.1}{:>12.3}",
            m.label,
            m.trials,
            m.events,
            m.events_per_s() / 1e6,
            m.trials_per_s(),
            m.ms_per_trial()
        );
    }
    let _ = writeln!(
        out,
        "  trials/s, 2 threads over 1 thread:           {:.2}x",
        report.thread_speedup
    );
    let _ = writeln!(
        out,
        "  trial cost, 1000 over 20 requests/s:         {:.2}x (per-request reference: {:.1}x)",
        report.rate_cost_ratio, report.rate_cost_ratio_per_request
    );
    Ok(out)
}
