//! `eureka-sim explain`: the causal chain of one trial, and optionally its full trace.

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::eureka::RequestMode;
use crate::experiment::trace_trial;
use crate::report::plot::{ImageFormat, render_timeline};
use crate::scenario::load;

#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Which trial (as numbered in trials.csv).
    #[arg(long, default_value_t = 0)]
    trial: u32,
    /// Seed of the run (same as --set simulation.seed=S).
    #[arg(long)]
    seed: Option<u64>,
    /// Override any scenario key by its dotted path (as for `run`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write every event of the trial to FILE: JSON Lines, or CSV if FILE ends in .csv.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Use the per-request reference mode (as `run --per-request`).
    #[arg(long)]
    per_request: bool,
    /// Write the trial's timeline plot to FILE (.svg, or .png), one per shutdown.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

pub(crate) fn explain(args: ExplainArgs) -> anyhow::Result<()> {
    let overrides = super::base_overrides(None, args.seed, &args.set);
    let scenario = load(&args.scenario, &overrides)?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    let mode = if args.per_request {
        RequestMode::PerRequest
    } else {
        RequestMode::Batched
    };
    let trace = trace_trial(&scenario, args.trial, mode);
    let mut out = io::stdout().lock();
    for s in 0..scenario.shutdowns.len() {
        out.write_all(trace.render(&scenario, s).as_bytes())?;
    }
    if scenario.shutdowns.is_empty() {
        writeln!(out, "the scenario has no [[shutdown]]: nothing to explain")?;
    }
    if let Some(path) = &args.plot {
        let png = path.extension().is_some_and(|e| e == "png");
        let format = if png {
            ImageFormat::Png
        } else {
            ImageFormat::Svg
        };
        for s in 0..scenario.shutdowns.len() {
            let file = if s == 0 {
                path.clone()
            } else {
                path.with_file_name(format!(
                    "{}-{}.{}",
                    path.file_stem()
                        .map_or("timeline".into(), |f| f.to_string_lossy()),
                    scenario.shutdowns[s].instance,
                    format.extension()
                ))
            };
            if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                fs::create_dir_all(dir)
                    .with_context(|| format!("failed to create {}", dir.display()))?;
            }
            render_timeline(&trace.timeline(&scenario, s), format, &file)?;
            writeln!(out, "wrote the timeline to {}", file.display())?;
        }
    }
    if let Some(path) = &args.trace {
        let csv = path.extension().is_some_and(|e| e == "csv");
        let text = if csv {
            trace.to_csv(&scenario)
        } else {
            trace.to_json_lines(&scenario)
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)
                .with_context(|| format!("failed to create {}", dir.display()))?;
        }
        fs::write(path, text).with_context(|| format!("failed to write {}", path.display()))?;
        writeln!(
            out,
            "wrote {} events to {}",
            trace.log.len(),
            path.display()
        )?;
    }
    Ok(())
}
