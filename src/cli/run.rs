//! `eureka-sim run`: parses the arguments and calls [`report::run_report::run`].
//!
//! [`report::run_report::run`]: crate::report::run_report::run

use std::io::{self, Write};
use std::path::Path;

use crate::report::run_report::{RunOptions, run};

use super::RunArgs;
use super::progress::Progress;

pub(crate) fn run_scenario(args: RunArgs) -> anyhow::Result<()> {
    let scenario = super::load(&args.scenario, &args.common.overrides.list())?;
    let default_dir = Path::new("output").join(&scenario.name);
    let options = RunOptions {
        output: args.common.output(&args.scenario, default_dir),
        mode: super::request_mode(args.per_request),
    };
    let progress = Progress::new(u64::from(scenario.simulation.trials), "trials");
    let text = run(&scenario, &options, &|| progress.tick());
    progress.finish();
    io::stdout().lock().write_all(text?.as_bytes())?;
    Ok(())
}
