//! `eureka-sim compare`: one scenario under several shutdown strategies, with common random
//! numbers (see `experiment::compare`); prints a side-by-side table and writes `compare.csv`,
//! `exposure-cdf.svg` (and `.png` with `--png`) and `report.html`.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::eureka::RequestMode;
use crate::experiment::compare::{common_wait_s, expand_variants, plan_compare, run_compare};
use crate::report::html::write_html;
use crate::report::plot::{ImageFormat, cdf_svg_string, render_cdf};
use crate::report::{compare_cdf, compare_html, render_compare, write_compare_csv};
use crate::scenario::{Scenario, ScenarioError, Strategy, load};

use super::progress::Progress;

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The scenario file (TOML): the world every variant runs in.
    scenario: PathBuf,
    /// Strategies to compare, comma-separated: kill-9, kill-15, pause, service-registry
    /// [default: all four].
    #[arg(long, value_name = "STRATEGY,...", value_delimiter = ',', value_parser = parse_strategy)]
    strategy: Vec<Strategy>,
    /// Waits in seconds for pause and service-registry, comma-separated: one variant per wait
    /// (the kills ignore them) [default: the scenario's wait-s].
    #[arg(long = "wait-s", value_name = "SECONDS,...", value_delimiter = ',')]
    wait_s: Vec<u64>,
    #[command(flatten)]
    pub(crate) common: super::Common,
}

fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        format!("unknown strategy; allowed: {}", names.join(", "))
    })
}

/// A scenario error found while applying a variant or a grid point, with what was being
/// applied in front. It stays a [`ScenarioError`] for the exit code (2: bad input), and its
/// message carries the whole text, since only the outermost message of a bad-input error is
/// printed.
pub(super) fn scenario_error_in(context: &str, source: ScenarioError) -> anyhow::Error {
    let message = format!("{context}: {source}");
    anyhow::Error::new(source).context(message)
}

/// Prints the warnings of `scenario` that `base` does not have, once each, after `label`.
pub(super) fn warn_new(base: &Scenario, scenario: &Scenario, label: &str, seen: &mut Vec<String>) {
    for warning in &scenario.warnings {
        if base.warnings.contains(warning) || seen.contains(warning) {
            continue;
        }
        eprintln!("warning: {label}: {warning}");
        seen.push(warning.clone());
    }
}

pub(super) fn create_dir(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir)
        .with_context(|| format!("failed to create output folder {}", dir.display()))
}

pub(crate) fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let overrides = args.common.overrides.list();
    let base = load(&args.scenario, &overrides)?;
    for warning in &base.warnings {
        eprintln!("warning: {warning}");
    }
    let strategies = if args.strategy.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        args.strategy.clone()
    };
    if !args.wait_s.is_empty() && !strategies.iter().any(|s| s.waits()) {
        eprintln!("warning: --wait-s has no effect: no pause or service-registry in --strategy");
    }
    let variants = expand_variants(&strategies, &args.wait_s, common_wait_s(&base));
    let plan = plan_compare(&variants, base.shutdowns.len(), |extra| {
        load(&args.scenario, &[overrides.as_slice(), extra].concat())
    })
    .map_err(|e| scenario_error_in(&format!("variant {}", e.variant), *e.source))?;
    let mut seen = Vec::new();
    for p in &plan {
        warn_new(
            &base,
            &p.scenario,
            &format!("variant {}", p.variant.name()),
            &mut seen,
        );
    }

    let total: u64 = plan
        .iter()
        .map(|p| u64::from(p.scenario.simulation.trials))
        .sum();
    let progress = Progress::new(total, "trials");
    let comparison = run_compare(plan, RequestMode::default(), &|| progress.tick());
    progress.finish();

    let out_dir = args
        .common
        .out
        .unwrap_or_else(|| Path::new("output").join(&base.name).join("compare"));
    create_dir(&out_dir)?;
    let source = args.scenario.display().to_string();
    let csv_path = out_dir.join("compare.csv");
    let file = fs::File::create(&csv_path)
        .with_context(|| format!("failed to create {}", csv_path.display()))?;
    write_compare_csv(io::BufWriter::new(file), &comparison)
        .with_context(|| format!("failed to write {}", csv_path.display()))?;
    let mut written = vec![csv_path];

    let cdf = compare_cdf(&comparison, &source, &args.common.overrides.set);
    let mut formats = vec![ImageFormat::Svg];
    if args.common.png {
        formats.push(ImageFormat::Png);
    }
    for format in formats {
        let path = out_dir.join(format!("exposure-cdf.{}", format.extension()));
        render_cdf(&cdf, format, &path).context("failed to draw the CDF of exposure")?;
        written.push(path);
    }
    let svg = cdf_svg_string(&cdf).context("failed to draw the CDF of exposure")?;
    let html_path = out_dir.join("report.html");
    write_html(
        &compare_html(&comparison, &source, &args.common.overrides.set, svg),
        &html_path,
    )
    .with_context(|| format!("failed to write {}", html_path.display()))?;
    written.push(html_path);

    let mut stdout = io::stdout().lock();
    stdout.write_all(render_compare(&comparison, &source).as_bytes())?;
    writeln!(stdout, "\nwrote {}", list(&written))?;
    Ok(())
}

/// `a, b and c`.
pub(super) fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
