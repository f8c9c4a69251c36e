//! `eureka-sim bench`: simulated events/s and trials/s, and how cost grows with the request rate.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::experiment::bench;

#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// The scenario to measure.
    #[arg(default_value = "scenarios/kill-9.toml")]
    scenario: PathBuf,
    /// Trials per measurement.
    #[arg(long, default_value_t = 400)]
    trials: u32,
}

pub(crate) fn run_bench(args: BenchArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("cannot read scenario file {}", args.scenario.display()))?;
    let source = args.scenario.display().to_string();
    let report = bench(&text, &source, args.trials.max(1))?;
    let mut out = io::stdout().lock();
    writeln!(out, "{source}: {} trials per measurement", args.trials)?;
    writeln!(
        out,
        "  {:<32}{:>8}{:>14}{:>14}{:>12}{:>12}",
        "", "trials", "events", "events/s", "trials/s", "ms/trial"
    )?;
    for m in &report.measurements {
        writeln!(
            out,
            "  {:<32}{:>8}{:>14}{:>13.2}M{:>12.1}{:>12.3}",
            m.label,
            m.trials,
            m.events,
            m.events_per_s() / 1e6,
            m.trials_per_s(),
            m.ms_per_trial()
        )?;
    }
    writeln!(
        out,
        "  trials/s, 2 threads over 1 thread:           {:.2}x",
        report.thread_speedup
    )?;
    writeln!(
        out,
        "  trial cost, 1000 over 20 requests/s:         {:.2}x (per-request reference: {:.1}x)",
        report.rate_cost_ratio, report.rate_cost_ratio_per_request
    )?;
    Ok(())
}
