//! `eureka-sim conform`: the real stack's trials (`conformance/rig.py`) beside the simulator's
//! (see `experiment::conform`); prints the comparison and writes `conform.csv`, one CDF per
//! strategy and metric, and `report.html`.

use super::error::ConformanceDiffers;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::experiment::conform::{
    MAX_GROUPS, RealTrialsError, group_overrides, group_real_trials, read_real_trials,
};
use crate::report::conform_report::{PlannedGroup, conform as conform_groups};
use crate::scenario::load;

use super::scenario_error_in;

#[derive(Debug, clap::Args)]
pub(crate) struct ConformArgs {
    /// The scenario equivalent to the rig (conformance/scenario.toml); its first [[shutdown]]
    /// takes each real file's strategy and wait.
    #[arg(required_unless_present = "matrix")]
    scenario: Option<PathBuf>,
    /// A CSV of real trials written by conformance/rig.py (real-<strategy>.csv); repeat for
    /// several strategies.
    #[arg(long, value_name = "FILE", required_unless_present = "matrix")]
    real: Vec<PathBuf>,
    /// The conformance matrix (conformance/matrix.toml): compare every cell that has real
    /// trials (conformance/results/matrix/<cell>/real.csv) with its scenario, write each cell's
    /// CDFs and report there, and conformance/results/matrix.csv.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "real"])]
    matrix: Option<PathBuf>,
    /// With --matrix: recompute only this cell (repeatable); the other rows of matrix.csv stay.
    #[arg(long, value_name = "NAME", requires = "matrix")]
    cell: Vec<String>,
    #[command(flatten)]
    pub(crate) common: super::Common,
    /// Significance level of the Kolmogorov-Smirnov tests.
    #[arg(long, default_value_t = 0.01, value_parser = parse_alpha)]
    alpha: f64,
    /// Exit with status 1 when a test rejects (the real stack and the model differ).
    #[arg(long)]
    check: bool,
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err("allowed: a level strictly between 0 and 1, such as 0.01".to_string()),
    }
}

pub(crate) fn conform(args: ConformArgs) -> super::CommandResult<()> {
    if let Some(matrix) = &args.matrix {
        return matrix::conform_matrix(matrix, &args.cell, &args.common);
    }
    let scenario_path = args
        .scenario
        .clone()
        .expect("clap requires a scenario without --matrix");
    let overrides = args.common.overrides.list()?;
    let base = load(&scenario_path, &overrides)?;
    for warning in &base.warnings {
        eprintln!("warning: {warning}");
    }
    let mut files = Vec::new();
    for path in &args.real {
        files.push((path.display().to_string(), read_real_trials(path)?));
    }
    let mut plan = Vec::new();
    for ((strategy, wait_ms), source, real) in group_real_trials(&files) {
        if plan.len() == MAX_GROUPS {
            return Err(RealTrialsError::Row {
                file: source,
                line: real[0].line,
                message: format!(
                    "more than {MAX_GROUPS} (strategy, wait_ms) groups; each runs the scenario's \
                     trials, so at most {MAX_GROUPS} are compared in one call"
                ),
            }
            .into());
        }
        let extra = group_overrides(strategy, wait_ms).map_err(|message| RealTrialsError::Row {
            file: source.clone(),
            line: real[0].line,
            message,
        })?;
        if let Some(first) = base.shutdowns.first()
            && (first.strategy != strategy || strategy.waits() && first.wait_ms != wait_ms)
        {
            eprintln!(
                "note: {source}: its trials ran {}; the scenario's first [[shutdown]] ({}) is \
                 compared as {} instead",
                describe_strategy(strategy, wait_ms),
                describe_strategy(first.strategy, first.wait_ms),
                describe_strategy(strategy, wait_ms),
            );
        }
        let scenario = load(&scenario_path, &[overrides.as_slice(), &extra].concat())
            .map_err(|e| scenario_error_in(&format!("strategy from {source}"), e))?;
        plan.push(PlannedGroup {
            strategy,
            wait_ms,
            source,
            real,
            scenario,
        });
    }
    // Not the folder of the real files: the rig's committed results stay as the rig wrote them.
    let default_dir = Path::new("output").join("conform").join(
        scenario_path
            .file_stem()
            .map_or_else(|| "scenario".into(), |s| s.to_os_string()),
    );
    let (options, staging) = args.common.staged_output(&scenario_path, default_dir)?;
    let (groups, text) = conform_groups(plan, args.alpha, &options)?;
    let text = staging.commit(&text)?;
    io::stdout().lock().write_all(text.as_bytes())?;
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

/// `kill-9`, or `service-registry with a 5 s wait`.
fn describe_strategy(strategy: crate::scenario::Strategy, wait_ms: u64) -> String {
    if strategy.waits() {
        format!("{} with a {} ms wait", strategy.name(), wait_ms)
    } else {
        strategy.name().to_string()
    }
}

mod matrix {
    //! `eureka-sim conform --matrix conformance/matrix.toml`.

    use std::collections::BTreeMap;
    use std::io::Write as _;
    use std::path::Path;

    use anyhow::Context as _;

    use crate::experiment::conform::{compare_outcomes, read_real_trials};
    use crate::experiment::matrix::{
        ALPHA, CellFigures, MatrixCell, cell_figures, read_matrix, results_dir,
    };
    use crate::experiment::run_trials_with;

    use super::super::progress::Progress;
    use crate::report::conform_report::write_conform;
    use crate::report::matrix_report::{matrix_csv, matrix_markdown, render_matrix};
    use crate::report::output::OutputOptions;
    use crate::scenario::load;

    pub(super) fn conform_matrix(
        matrix: &Path,
        only: &[String],
        common: &super::super::Common,
    ) -> super::super::CommandResult<()> {
        let cells = read_matrix(matrix).map_err(anyhow::Error::from)?;
        if let Some(unknown) = only.iter().find(|n| !cells.iter().any(|c| &c.name == *n)) {
            return Err(anyhow::anyhow!(
                "{}: no cell named `{unknown}`; cells: {}",
                matrix.display(),
                cells
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .into());
        }
        let out = results_dir(matrix);
        let csv_path = out
            .parent()
            .map_or_else(|| out.join("matrix.csv"), |p| p.join("matrix.csv"));
        let kept = existing_rows(&csv_path);
        let mut rows: Vec<(MatrixCell, Option<CellFigures>)> = Vec::new();
        let mut kept_lines: BTreeMap<String, String> = BTreeMap::new();
        for cell in cells {
            if !only.is_empty() && !only.contains(&cell.name) {
                if let Some(line) = kept.get(&cell.name) {
                    kept_lines.insert(cell.name.clone(), line.clone());
                }
                rows.push((cell, None));
                continue;
            }
            let figures = cell_row(matrix, &cell, common)?;
            rows.push((cell, figures));
        }
        let text = matrix_csv(&rows).map_err(anyhow::Error::from)?;
        // Cells not recomputed keep their line of the previous matrix.csv.
        let text = text
            .lines()
            .enumerate()
            .map(|(i, line)| {
                let name = line.split(',').next().unwrap_or_default();
                match (i, kept_lines.get(name)) {
                    (0, _) | (_, None) => line.to_string(),
                    (_, Some(old)) => old.clone(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        std::fs::create_dir_all(&out)?;
        let tmp = csv_path.with_extension("csv.tmp");
        std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &csv_path)
            .with_context(|| format!("cannot write {}", csv_path.display()))?;
        // The README's table, from the rows as written (the kept ones too).
        let md_path = csv_path.with_extension("md");
        let written_rows = rows_of_csv(&text, rows);
        std::fs::write(&md_path, matrix_markdown(&written_rows))
            .with_context(|| format!("cannot write {}", md_path.display()))?;
        let mut stdout = std::io::stdout().lock();
        write!(stdout, "{}", render_matrix(&written_rows))?;
        writeln!(
            stdout,
            "wrote {} and {}",
            csv_path.display(),
            md_path.display()
        )?;
        Ok(())
    }

    /// The rows with the figures of matrix.csv's text: cells not recomputed this time get theirs
    /// back from the kept lines.
    fn rows_of_csv(
        text: &str,
        rows: Vec<(MatrixCell, Option<CellFigures>)>,
    ) -> Vec<(MatrixCell, Option<CellFigures>)> {
        let parsed = crate::experiment::matrix::figures_of_csv(text);
        rows.into_iter()
            .map(|(cell, f)| {
                let f = f.or_else(|| parsed.get(&cell.name).cloned().flatten());
                (cell, f)
            })
            .collect()
    }

    fn existing_rows(path: &Path) -> BTreeMap<String, String> {
        std::fs::read_to_string(path)
            .map(|t| {
                t.lines()
                    .skip(1)
                    .filter_map(|l| Some((l.split(',').next()?.to_string(), l.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One cell: its figures when it has real trials (and its CDFs and report.html written
    /// into its results folder), else `None`.
    fn cell_row(
        matrix: &Path,
        cell: &MatrixCell,
        common: &super::super::Common,
    ) -> super::super::CommandResult<Option<CellFigures>> {
        let real_path = cell.real_path(matrix);
        if !real_path.exists() {
            return Ok(None);
        }
        let real = read_real_trials(&real_path)?;
        let scenario_path = cell.scenario_path(matrix);
        let scenario = load(&scenario_path, &common.overrides.list()?)?;
        let bar = Progress::new(
            u64::from(scenario.simulation.trials),
            &format!("simulated trials of {}", cell.name),
        );
        let outcomes = run_trials_with(&scenario, crate::eureka::RequestMode::default(), &|| {
            bar.tick()
        });
        bar.finish();
        let figures = cell_figures(cell, &real, &outcomes);
        let first = &scenario.shutdowns[0];
        let quiet: Vec<_> = real
            .iter()
            .filter(|t| cell.quiet.holds(t))
            .cloned()
            .collect();
        let group = compare_outcomes(
            first.strategy,
            first.wait_ms,
            real_path.display().to_string(),
            &quiet,
            scenario.clone(),
            &outcomes,
            ALPHA,
        );
        let options = OutputOptions {
            source: scenario_path.display().to_string(),
            set: common.overrides.set.clone(),
            out_dir: real_path
                .parent()
                .expect("a cell's real.csv is in its folder")
                .to_path_buf(),
            png: common.png,
        };
        write_conform(std::slice::from_ref(&group), ALPHA, &options)?;
        Ok(Some(figures))
    }
}
