//! `eureka-sim sweep`: one scenario over a grid of values of one or more keys, with common random
//! numbers (see `experiment::sweep`); prints the grid and writes `sweep.csv`, line plots (one
//! key) or heatmaps (two keys), and `report.html`.
//!
//! The `--vary` arguments are checked in two stages, as `run` checks `--set`: their shape (and
//! that no key is varied twice) while the command line is parsed, so that clap reports it with
//! exit status 2; then every value and every grid point against the scenario, before any trial
//! runs (also exit 2, naming the `--vary` argument or the grid point).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::experiment::Vary;
use crate::experiment::sweep::{check_distinct_keys, identical_points, plan_sweep};
use crate::report::sweep as sweep_grid;
use crate::scenario::load;

use super::compare::total_trials;
use super::progress::Progress;
use super::{scenario_error_in, warn_new};

#[derive(Debug, clap::Args)]
pub(crate) struct RawSweepArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// A key to vary and its values, e.g.
    /// server.eureka.server.response-cache-update-interval-ms=5000,15000,30000 (the same dotted
    /// paths as --set; commas inside [...] or quotes do not split). Repeat for a grid.
    #[arg(long = "vary", value_name = "KEY=V1,V2,...", required = true)]
    vary: Vec<Vary>,
    #[command(flatten)]
    pub(crate) common: super::Common,
}

/// [`RawSweepArgs`] whose `--vary` keys are distinct.
#[derive(Debug)]
pub(crate) struct SweepArgs(RawSweepArgs);

fn distinct(args: &RawSweepArgs) -> Result<(), clap::Error> {
    check_distinct_keys(&args.vary).map_err(|message| {
        // Formatted here, with this subcommand's usage; clap would add the top-level one.
        let mut cmd =
            RawSweepArgs::augment_args(Command::new("sweep").bin_name("eureka-sim sweep"));
        clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, message).format(&mut cmd)
    })
}

impl FromArgMatches for SweepArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let raw = RawSweepArgs::from_arg_matches(matches)?;
        distinct(&raw)?;
        Ok(SweepArgs(raw))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)?;
        distinct(&self.0)
    }
}

impl Args for SweepArgs {
    fn augment_args(cmd: Command) -> Command {
        RawSweepArgs::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        RawSweepArgs::augment_args_for_update(cmd)
    }
}

pub(crate) fn sweep(SweepArgs(args): SweepArgs) -> anyhow::Result<()> {
    let overrides = args.common.overrides.list();
    let base = super::load(&args.scenario, &overrides)?;
    let plan = plan_sweep(&args.vary, |extra| {
        load(&args.scenario, &[overrides.as_slice(), extra].concat())
    })
    .map_err(|e| {
        let (context, source) = e.into_parts();
        scenario_error_in(&context, source)
    })?;
    let mut seen = Vec::new();
    for p in &plan {
        let label = format!("at {}", p.point.describe(&args.vary));
        warn_new(&base, &p.scenario, &label, &mut seen);
    }
    let mut notes = Vec::new();
    for (i, j) in identical_points(&plan) {
        notes.push(format!(
            "grid points {} and {} give the same scenario, hence the same figures (a varied key \
             without effect, two spellings of one value, or one key varied under two names)",
            plan[i].point.describe(&args.vary),
            plan[j].point.describe(&args.vary)
        ));
    }
    for note in &notes {
        eprintln!("warning: {note}");
    }

    let default_dir = Path::new("output").join(&base.name).join("sweep");
    let options = args.common.output(&args.scenario, default_dir);
    let progress = Progress::new(total_trials(plan.iter().map(|p| &p.scenario)), "trials");
    let text = sweep_grid(&args.vary, plan, &notes, &options, &|| progress.tick());
    progress.finish();
    io::stdout().lock().write_all(text?.as_bytes())?;
    Ok(())
}
