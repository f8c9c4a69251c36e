//! `eureka-sim bench`: simulated events/s, trials/s, instance-hours/s and peak memory, how cost
//! grows with the request rate, and the race against the SimPy oracle (parses the arguments and
//! calls [`report::bench_report::bench`]).
//!
//! [`report::bench_report::bench`]: crate::report::bench_report::bench

use std::io::{self, Write};
use std::path::PathBuf;

use crate::report::bench_report::bench;
use crate::scenario::ScenarioSource;

/// The bundled `scenarios/kill-9.toml`, built into the binary: `bench` without a scenario measures
/// the same world from whatever folder it runs in.
const BUILT_IN: &str = include_str!("../../scenarios/kill-9.toml");

#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// The scenario to measure [default: the bundled scenarios/kill-9.toml, built into the
    /// binary, so it does not depend on the working folder].
    scenario: Option<PathBuf>,
    /// Trials per measurement (at least 1).
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u32).range(1..))]
    trials: u32,
    /// The SimPy oracle's folder (oracle.py, cases/kill9_default.json): races it on its world,
    /// one core each; skipped, with the reason, without python3, SimPy or the folder.
    #[arg(long, value_name = "DIR", default_value = "../shared/oracle")]
    oracle: PathBuf,
    /// Trials of the oracle race (each side runs as many; at least 1).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    oracle_trials: u32,
    /// Leave the oracle race out.
    #[arg(long)]
    no_oracle: bool,
}

pub(crate) fn run_bench(args: BenchArgs) -> super::CommandResult<()> {
    // A missing or unreadable file is bad input (exit 2), as for every command.
    let (text, source) = match &args.scenario {
        Some(path) => {
            let file = ScenarioSource::read(path)?;
            (file.text, file.source)
        }
        None => (
            BUILT_IN.to_string(),
            "scenarios/kill-9.toml (built in)".to_string(),
        ),
    };
    let oracle = (!args.no_oracle).then_some((args.oracle.as_path(), args.oracle_trials));
    let table = bench(&text, &source, args.trials, oracle)?;
    io::stdout().lock().write_all(table.as_bytes())?;
    Ok(())
}
