//! `eureka-sim conform`: the real stack's trials (`conformance/rig.py`) beside the simulator's
//! (see `experiment::conform`); prints the comparison and writes `conform.csv`, one CDF per
//! strategy and metric, and `report.html`.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::experiment::conform::{
    ConformMetric, RealTrialsError, compare_group, group_overrides, group_real_trials,
    read_real_trials,
};
use crate::report::html::{Figure, write_html};
use crate::report::plot::{ImageFormat, cdf_svg_string, render_cdf};
use crate::report::{conform_cdf, conform_html, render_conform, write_conform_csv};
use crate::scenario::load;

use super::scenario_error_in;
use crate::report::output::create_dir;

#[derive(Debug, clap::Args)]
pub(crate) struct ConformArgs {
    /// The scenario equivalent to the rig (conformance/scenario.toml); its first [[shutdown]]
    /// takes each real file's strategy and wait.
    scenario: PathBuf,
    /// A CSV of real trials written by conformance/rig.py (real-<strategy>.csv); repeat for
    /// several strategies.
    #[arg(long, value_name = "FILE", required = true)]
    real: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) common: super::Common,
    /// Significance level of the Kolmogorov-Smirnov tests.
    #[arg(long, default_value_t = 0.01)]
    alpha: f64,
    /// Exit with status 1 when a test rejects (the real stack and the model differ).
    #[arg(long)]
    check: bool,
}

/// A bad file of real trials is bad input (exit 2), as a bad scenario is.
pub(super) fn is_bad_input(err: &anyhow::Error) -> bool {
    err.downcast_ref::<RealTrialsError>().is_some()
}

/// With `--check`: a test rejected, exit status 1 (the table above says which).
#[derive(Debug, thiserror::Error)]
#[error("{rejected} of {total} comparison(s) differ at alpha = {alpha}")]
struct ConformanceDiffers {
    rejected: usize,
    total: usize,
    alpha: f64,
}

pub(crate) fn conform(args: ConformArgs) -> anyhow::Result<()> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        anyhow::bail!(
            "--alpha {}: allowed: a level strictly between 0 and 1",
            args.alpha
        );
    }
    let overrides = args.common.overrides.list();
    let base = load(&args.scenario, &overrides)?;
    for warning in &base.warnings {
        eprintln!("warning: {warning}");
    }
    let mut files = Vec::new();
    for path in &args.real {
        files.push((path.display().to_string(), read_real_trials(path)?));
    }
    let mut groups = Vec::new();
    for ((strategy, wait_ms), source, trials) in group_real_trials(&files) {
        let extra = group_overrides(strategy, wait_ms).map_err(|message| RealTrialsError::Row {
            file: source.clone(),
            line: trials[0].line,
            message,
        })?;
        let scenario = load(&args.scenario, &[overrides.as_slice(), &extra].concat())
            .map_err(|e| scenario_error_in(&format!("strategy from {source}"), e))?;
        groups.push(compare_group(
            strategy, wait_ms, source, &trials, scenario, args.alpha,
        ));
    }

    let out_dir = args.common.out.clone().unwrap_or_else(|| {
        args.real[0]
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    });
    create_dir(&out_dir)?;
    let source = args.scenario.display().to_string();
    let csv_path = out_dir.join("conform.csv");
    let file = fs::File::create(&csv_path)
        .with_context(|| format!("failed to create {}", csv_path.display()))?;
    write_conform_csv(io::BufWriter::new(file), &groups)
        .with_context(|| format!("failed to write {}", csv_path.display()))?;

    let mut formats = vec![ImageFormat::Svg];
    if args.common.png {
        formats.push(ImageFormat::Png);
    }
    let mut figures = Vec::new();
    for group in &groups {
        let mut group_figures = Vec::new();
        for metric in ConformMetric::ALL {
            let plot = conform_cdf(group, metric, &source);
            let stem = format!("{}-{}-cdf", group.name(), metric.name());
            for format in &formats {
                let path = out_dir.join(format!("{stem}.{}", format.extension()));
                render_cdf(&plot, *format, &path)
                    .with_context(|| format!("failed to write {}", path.display()))?;
            }
            group_figures.push(Figure {
                caption: format!(
                    "Share of trials at or below x: {}, real stack and simulator.",
                    metric.label()
                ),
                svg: cdf_svg_string(&plot).context("failed to draw a CDF")?,
            });
        }
        figures.push(group_figures);
    }
    let html_path = out_dir.join("report.html");
    write_html(
        &conform_html(&groups, &source, args.alpha, figures),
        &html_path,
    )
    .with_context(|| format!("failed to write {}", html_path.display()))?;

    let mut stdout = io::stdout().lock();
    stdout.write_all(render_conform(&groups, &source, args.alpha).as_bytes())?;
    writeln!(
        stdout,
        "\nwrote {}, the CDFs and {}",
        csv_path.display(),
        html_path.display()
    )?;
    let comparisons = groups.iter().flat_map(|g| &g.metrics);
    let rejected = comparisons.clone().filter(|m| m.rejected).count();
    if args.check && rejected > 0 {
        return Err(ConformanceDiffers {
            rejected,
            total: comparisons.count(),
            alpha: args.alpha,
        }
        .into());
    }
    Ok(())
}
