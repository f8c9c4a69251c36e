//! `eureka-sim bench`: simulated events/s and trials/s, and how cost grows with the request rate
//! (parses the arguments and calls [`report::bench_report::bench`]).
//!
//! [`report::bench_report::bench`]: crate::report::bench_report::bench

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::report::bench_report::bench;

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
    let table = bench(&text, &source, args.trials)?;
    io::stdout().lock().write_all(table.as_bytes())?;
    Ok(())
}
