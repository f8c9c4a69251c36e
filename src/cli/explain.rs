//! `eureka-sim explain`: parses the arguments and calls [`report::explain::explain`].
//!
//! [`report::explain::explain`]: crate::report::explain::explain

use std::io::{self, Write};
use std::path::PathBuf;

use crate::report::explain::{ExplainOptions, explain as explain_trial};

#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Which trial (as numbered in trials.csv).
    #[arg(long, default_value_t = 0)]
    trial: u32,
    /// `--seed` and `--set` as for `run` (`--trials` is accepted and changes nothing: one
    /// trial is explained, whatever the count).
    #[command(flatten)]
    overrides: super::Overrides,
    /// Write every event of the trial to FILE: JSON Lines, or CSV if FILE ends in .csv. Of the
    /// Eureka client caches' news, every change about the stopped instances and every removal
    /// (a cache learning that another instance is UP is left out: N^2 lines in a fleet).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Use the per-request reference mode (as `run --per-request`).
    #[arg(long)]
    per_request: bool,
    /// Write the trial's timeline plot to FILE (.svg, or .png), one per shutdown.
    #[arg(long, value_name = "FILE", value_parser = plot_path)]
    plot: Option<PathBuf>,
}

/// The image formats `--plot` writes, by the extension that chooses them.
const PLOT_EXTENSIONS: [&str; 2] = ["svg", "png"];

/// `--plot FILE`: the extension decides the format, so a file named for another one (`x.pdf`)
/// is refused rather than written as SVG under that name.
fn plot_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if PLOT_EXTENSIONS.contains(&ext) => Ok(path),
        _ => Err(format!(
            "the file name must end in .{}: those are the formats written",
            PLOT_EXTENSIONS.join(" or .")
        )),
    }
}

pub(crate) fn explain(
    args: ExplainArgs,
    budget: &super::budget::BudgetArgs,
) -> super::CommandResult<()> {
    let scenario = super::load(&args.scenario, &args.overrides.list()?)?;
    let mode = super::request_mode(args.per_request);
    budget.check(&[(&scenario, 1)], mode, true)?;
    let options = ExplainOptions {
        trial: args.trial,
        mode: super::request_mode(args.per_request),
        plot: args.plot,
        trace: args.trace,
    };
    // One trial with every event kept: a long or busy scenario takes a while, so a terminal
    // shows that it runs.
    let bar = super::progress::Progress::new(1, "trial, every event kept");
    let told = explain_trial(&scenario, &options);
    bar.tick();
    bar.finish();
    io::stdout().lock().write_all(told?.as_bytes())?;
    Ok(())
}
