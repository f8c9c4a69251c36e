//! `eureka-sim bench`: simulated events/s, trials/s, instance-hours/s and peak memory, how cost
//! grows with the request rate, and the race against the SimPy oracle (parses the arguments and
//! calls [`report::bench_report::bench`]).
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
    /// The SimPy oracle's folder (oracle.py, cases/kill9_default.json): races it on its world,
    /// one core each; skipped, with the reason, without python3, SimPy or the folder.
    #[arg(long, value_name = "DIR", default_value = "../shared/oracle")]
    oracle: PathBuf,
    /// Trials of the oracle race (each side runs as many).
    #[arg(long, default_value_t = 200)]
    oracle_trials: u32,
    /// Leave the oracle race out.
    #[arg(long)]
    no_oracle: bool,
}

pub(crate) fn run_bench(args: BenchArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("cannot read scenario file {}", args.scenario.display()))?;
    let source = args.scenario.display().to_string();
    let oracle = (!args.no_oracle).then_some((args.oracle.as_path(), args.oracle_trials));
    let table = bench(&text, &source, args.trials, oracle)?;
    io::stdout().lock().write_all(table.as_bytes())?;
    Ok(())
}
