//! `eureka-sim run`.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;

use crate::eureka::RequestMode;
use crate::experiment::{TrialOutcome, run_trials_with, trace_trial};
use crate::report::html::{Figure, write_html};
use crate::report::plot::{
    ImageFormat, cdf_svg_string, render_cdf, render_timeline, timeline_svg_string,
};
use crate::report::run_report::{exposure_cdf, median_trial, run_report, timeline_caption};
use crate::report::{
    render_summary, render_summary_json, summarize, write_summary_csv, write_trials_csv,
};
use crate::scenario::{Scenario, load};

use super::RunArgs;
use super::progress::Progress;

pub(crate) fn run_scenario(args: RunArgs) -> anyhow::Result<()> {
    let overrides = args.common.overrides.list();
    let scenario = load(&args.scenario, &overrides)?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    let out_dir = args
        .common
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
    let figures = write_figures(&scenario, &outcomes, &out_dir, args.common.png)?;
    let report = run_report(
        &scenario,
        &args.scenario.display().to_string(),
        &outcomes,
        &rows,
        figures,
    );
    let html_path = out_dir.join("report.html");
    write_html(&report, &html_path)
        .with_context(|| format!("failed to write {}", html_path.display()))?;
    let json_path = out_dir.join("summary.json");
    fs::write(&json_path, render_summary_json(&scenario, &rows))
        .with_context(|| format!("failed to write {}", json_path.display()))?;
    let source = args.scenario.display().to_string();
    let deploys = deploy_report(&scenario, &outcomes, &out_dir)?;
    let mut stdout = io::stdout().lock();
    stdout.write_all(render_summary(&scenario, &source, &outcomes, &rows).as_bytes())?;
    if !deploys.is_empty() {
        stdout.write_all(format!("\n{deploys}").as_bytes())?;
    }
    writeln!(
        stdout,
        "\nwrote {}, {}, {}, the plots and {}",
        trials_path.display(),
        summary_path.display(),
        json_path.display(),
        html_path.display()
    )?;
    Ok(())
}

/// The `[[deploy]]` metrics over the trials, written to `deploy.json`; returns the terminal text
/// (empty without a deploy).
fn deploy_report(
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
    out_dir: &Path,
) -> anyhow::Result<String> {
    use crate::experiment::deploy_metrics::{render_deploy, summarize_deploy};
    if scenario.deploys.is_empty() {
        return Ok(String::new());
    }
    let summaries: Vec<_> = (0..scenario.deploys.len())
        .map(|d| summarize_deploy(scenario, d, outcomes))
        .collect();
    let path = out_dir.join("deploy.json");
    fs::write(&path, serde_json::to_string_pretty(&summaries)?)
        .with_context(|| format!("failed to write {}", path.display()))?;
    Ok(summaries.iter().map(render_deploy).collect())
}

/// Per shutdown: the exposure CDF and the timeline of the median-exposure trial, as files and as
/// inline SVG for the report.
fn write_figures(
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
    out_dir: &Path,
    png: bool,
) -> anyhow::Result<Vec<Vec<Figure>>> {
    let mut all = Vec::new();
    for s in 0..scenario.shutdowns.len() {
        let suffix = if scenario.shutdowns.len() > 1 {
            format!("-{}", scenario.shutdowns[s].instance)
        } else {
            String::new()
        };
        let mut figures = Vec::new();
        let cdf = exposure_cdf(scenario, s, outcomes);
        let path = out_dir.join(format!("exposure-cdf{suffix}.svg"));
        render_cdf(&cdf, ImageFormat::Svg, &path)?;
        if png {
            render_cdf(&cdf, ImageFormat::Png, &path.with_extension("png"))?;
        }
        figures.push(Figure {
            caption: "Exposure over the trials: the share of trials in which callers stopped \
                      routing to the instance within x seconds of its stop."
                .to_string(),
            svg: cdf_svg_string(&cdf)?,
        });
        if let Some(trial) = median_trial(outcomes, s) {
            // The same trial, per request, so each dead hit has its own time.
            let trace = trace_trial(scenario, trial, RequestMode::PerRequest);
            let plot = trace.timeline(scenario, s);
            let path = out_dir.join(format!("timeline{suffix}.svg"));
            render_timeline(&plot, ImageFormat::Svg, &path)?;
            if png {
                render_timeline(&plot, ImageFormat::Png, &path.with_extension("png"))?;
            }
            figures.push(Figure {
                caption: timeline_caption(&plot),
                svg: timeline_svg_string(&plot)?,
            });
        }
        all.push(figures);
    }
    Ok(all)
}
