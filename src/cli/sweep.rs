//! `eureka-sim sweep`: one scenario over a grid of values of one or more keys, with common random
//! numbers (see `experiment::sweep`); prints the grid and writes `sweep.csv`, line plots (one
//! key) or heatmaps (two keys), and `report.html`.
//!
//! The `--vary` arguments are checked in two stages, as `run` checks `--set`: their shape (and
//! that no key is varied twice) while the command line is parsed, so that clap reports it with
//! exit status 2; then every value and every grid point against the scenario, before any trial
//! runs (also exit 2, naming the `--vary` argument or the grid point).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::eureka::RequestMode;
use crate::experiment::Vary;
use crate::experiment::sweep::{check_distinct_keys, identical_points, plan_sweep, run_sweep};
use crate::report::html::{Figure, write_html};
use crate::report::plot::ImageFormat;
use crate::report::{render_sweep, sweep_html, sweep_plots, write_sweep_csv};
use crate::scenario::load;

use super::compare::{create_dir, list, scenario_error_in, warn_new};
use super::progress::Progress;

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
    let base = load(&args.scenario, &overrides)?;
    for warning in &base.warnings {
        eprintln!("warning: {warning}");
    }
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

    let total: u64 = plan
        .iter()
        .map(|p| u64::from(p.scenario.simulation.trials))
        .sum();
    let progress = Progress::new(total, "trials");
    let sweep = run_sweep(&args.vary, plan, RequestMode::default(), &|| {
        progress.tick()
    });
    progress.finish();

    let out_dir = args
        .common
        .out
        .unwrap_or_else(|| Path::new("output").join(&base.name).join("sweep"));
    create_dir(&out_dir)?;
    let source = args.scenario.display().to_string();
    let csv_path = out_dir.join("sweep.csv");
    let file = fs::File::create(&csv_path)
        .with_context(|| format!("failed to create {}", csv_path.display()))?;
    write_sweep_csv(io::BufWriter::new(file), &sweep)
        .with_context(|| format!("failed to write {}", csv_path.display()))?;
    let mut written = vec![csv_path];

    let plots = sweep_plots(&sweep, &source, &args.common.overrides.set);
    let mut figures = Vec::new();
    for named in &plots.plots {
        let what = || format!("failed to draw {}", named.stem);
        let mut formats = vec![ImageFormat::Svg];
        if args.common.png {
            formats.push(ImageFormat::Png);
        }
        for format in formats {
            let path = out_dir.join(format!("{}.{}", named.stem, format.extension()));
            named.render(format, &path).with_context(what)?;
            written.push(path);
        }
        figures.push(Figure {
            caption: named.caption.clone(),
            svg: named.svg().with_context(what)?,
        });
    }
    let html_path = out_dir.join("report.html");
    let report = sweep_html(&sweep, &source, &args.common.overrides.set, figures, &notes);
    write_html(&report, &html_path)
        .with_context(|| format!("failed to write {}", html_path.display()))?;
    written.push(html_path);

    let mut stdout = io::stdout().lock();
    stdout.write_all(render_sweep(&sweep, &source).as_bytes())?;
    if let Some(note) = &plots.note {
        writeln!(stdout, "\n{note}")?;
    }
    writeln!(stdout, "\nwrote {}", list(&written))?;
    Ok(())
}
