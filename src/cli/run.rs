//! `eureka-sim run`.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;

use crate::eureka::RequestMode;
use crate::experiment::run_trials_with;
use crate::report::{
    render_summary, render_summary_json, summarize, write_summary_csv, write_trials_csv,
};
use crate::scenario::load;

use super::RunArgs;
use super::progress::Progress;

pub(crate) fn run_scenario(args: RunArgs) -> anyhow::Result<()> {
    let mut overrides = Vec::new();
    if let Some(trials) = args.trials {
        overrides.push(format!("simulation.trials={trials}"));
    }
    if let Some(seed) = args.seed {
        overrides.push(format!("simulation.seed={seed}"));
    }
    overrides.extend(args.set.iter().cloned());
    let scenario = load(&args.scenario, &overrides)?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    let out_dir = args
        .out
        .unwrap_or_else(|| Path::new("output").join(&scenario.name));
    let progress = Progress::new(u64::from(scenario.simulation.trials), "trials");
    let mode = if args.per_request {
        RequestMode::PerRequest
    } else {
        RequestMode::Batched
    };
    let outcomes = run_trials_with(&scenario, mode, &|| progress.tick());
    progress.finish();
    let rows = summarize(&scenario, &outcomes);
    fs::create_dir_all(&out_dir)
        .with_context(|| format!("failed to create output folder {}", out_dir.display()))?;
    let trials_path = out_dir.join("trials.csv");
    let summary_path = out_dir.join("summary.csv");
    let file = fs::File::create(&trials_path)
        .with_context(|| format!("failed to create {}", trials_path.display()))?;
    write_trials_csv(io::BufWriter::new(file), &scenario, &outcomes)
        .with_context(|| format!("failed to write {}", trials_path.display()))?;
    let file = fs::File::create(&summary_path)
        .with_context(|| format!("failed to create {}", summary_path.display()))?;
    write_summary_csv(io::BufWriter::new(file), &rows)
        .with_context(|| format!("failed to write {}", summary_path.display()))?;
    let json_path = out_dir.join("summary.json");
    fs::write(&json_path, render_summary_json(&scenario, &rows))
        .with_context(|| format!("failed to write {}", json_path.display()))?;
    let source = args.scenario.display().to_string();
    let mut stdout = io::stdout().lock();
    stdout.write_all(render_summary(&scenario, &source, &outcomes, &rows).as_bytes())?;
    writeln!(
        stdout,
        "\nwrote {}, {} and {}",
        trials_path.display(),
        summary_path.display(),
        json_path.display()
    )?;
    Ok(())
}
