//! Renderers of a conformance run (`experiment::conform`): the terminal table, `conform.csv`,
//! one CDF per strategy and metric with the real and the simulated curve, and `report.html`.

use std::fmt::Write as _;
use std::io::Write;

use crate::experiment::conform::{
    ConformGroup, ConformMetric, MetricComparison, RealTrial, RunInfo, compare_group,
};
use crate::scenario::{Scenario, Strategy};

use super::describe::{common_settings, tenths, text_table};
use super::html::{Figure, HtmlReport, Section, Table, render_html};
use super::output::{OutputError, OutputOptions, begin_with_csv, image_formats, write_text};
use super::plot::{CdfPlot, CdfSeries, cdf_svg_string, render_cdf};

/// One group of `eureka-sim conform`, validated: a strategy and wait, the real trials that ran
/// it (from `source`), and the scenario that carries them.
#[derive(Debug, Clone)]
pub struct PlannedGroup {
    pub strategy: Strategy,
    pub wait_ms: u64,
    pub source: String,
    pub real: Vec<RealTrial>,
    pub scenario: Scenario,
}

/// `eureka-sim conform`: simulates every planned group, compares it with its real trials at
/// level `alpha`, writes `conform.csv`, one CDF per group and metric, and `report.html`; returns
/// the groups (for `--check`) and the terminal text.
pub fn conform(
    plan: Vec<PlannedGroup>,
    alpha: f64,
    options: &OutputOptions,
) -> Result<(Vec<ConformGroup>, String), OutputError> {
    let groups: Vec<ConformGroup> = plan
        .into_iter()
        .map(|g| compare_group(g.strategy, g.wait_ms, g.source, &g.real, g.scenario, alpha))
        .collect();
    let text = write_conform(&groups, alpha, options)?;
    Ok((groups, text))
}

/// Writes `conform.csv`, one CDF per group and metric, and `report.html` of compared groups
/// into `options.out_dir`; returns the terminal text.
pub fn write_conform(
    groups: &[ConformGroup],
    alpha: f64,
    options: &OutputOptions,
) -> Result<String, OutputError> {
    let (source, out_dir) = (&options.source, &options.out_dir);
    let written = begin_with_csv(options, "conform.csv", |w| write_conform_csv(w, groups))?;
    let mut figures = Vec::new();
    for group in groups {
        let mut group_figures = Vec::new();
        for metric in ConformMetric::ALL {
            let plot = conform_cdf(group, metric, source);
            let stem = format!("{}-{}-cdf", group.name(), metric.name());
            for format in image_formats(options.png) {
                let path = out_dir.join(format!("{stem}.{}", format.extension()));
                render_cdf(&plot, format, &path).map_err(|source| OutputError::Draw {
                    context: format!("failed to write {}", path.display()),
                    source,
                })?;
            }
            group_figures.push(Figure {
                caption: format!(
                    "Share of trials at or below x: {}, real stack and simulator.",
                    metric.label()
                ),
                svg: cdf_svg_string(&plot).map_err(|source| OutputError::Draw {
                    context: "failed to draw a CDF".to_string(),
                    source,
                })?,
            });
        }
        figures.push(group_figures);
    }
    let html_path = out_dir.join("report.html");
    write_text(
        &html_path,
        render_html(&conform_html(groups, source, alpha, figures)),
    )?;
    Ok(format!(
        "{}\nwrote {}, the CDFs and {}\n",
        render_conform(groups, source, alpha),
        written[0].display(),
        html_path.display()
    ))
}

/// The columns of `conform.csv`: one row per strategy (and wait) and metric.
pub const CONFORM_HEADER: [&str; 16] = [
    "variant",
    "strategy",
    "wait_ms",
    "metric",
    "real_trials",
    "real_unresolved",
    "real_p50",
    "real_p90",
    "real_max",
    "sim_trials",
    "sim_unresolved",
    "sim_p50",
    "sim_p90",
    "sim_max",
    "ks_d",
    "p_value",
];

fn cell(value: Option<i64>) -> String {
    value.map_or_else(String::new, |v| v.to_string())
}

/// `conform.csv`: percentiles nearest-rank over the resolved trials, `ks_d` and `p_value` with
/// four decimals.
pub fn write_conform_csv<W: Write>(out: W, groups: &[ConformGroup]) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(CONFORM_HEADER)?;
    for group in groups {
        for m in &group.metrics {
            writer.write_record([
                group.name(),
                group.strategy.name().to_string(),
                group.wait_ms.to_string(),
                m.metric.name().to_string(),
                m.real.trials.to_string(),
                m.real.unresolved.to_string(),
                // The bare nearest-rank figures, as the terminal table shows them: at small n
                // Stats' p90 is empty (its interval needs 29 values), the figure is not.
                cell(m.real.percentile(50.0)),
                cell(m.real.percentile(90.0)),
                cell(m.real.max),
                m.simulated.trials.to_string(),
                m.simulated.unresolved.to_string(),
                cell(m.simulated.percentile(50.0)),
                cell(m.simulated.percentile(90.0)),
                cell(m.simulated.max),
                format!("{:.4}", m.ks_d),
                format!("{:.4}", m.p_value),
            ])?;
        }
    }
    writer.flush()?;
    Ok(())
}

/// A value as shown: seconds with one decimal for times, the count otherwise, `never` for an
/// unresolved trial.
fn shown(metric: ConformMetric, value: Option<i64>) -> String {
    match value {
        None => "never".to_string(),
        Some(v) if metric.is_time() => format!("{}s", tenths(v as f64 / 1000.0)),
        Some(v) => v.to_string(),
    }
}

/// `p50 / p90 / max` of one side, over all its trials (unresolved ones are +infinity).
fn quantiles(metric: ConformMetric, values: &[Option<i64>]) -> String {
    let mut sorted: Vec<Option<i64>> = values.to_vec();
    // None sorts first in Option's order; put it last (it is +infinity).
    sorted.sort_by_key(|v| (v.is_none(), *v));
    let at = |p: f64| {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted.get(rank - 1).copied().flatten()
    };
    if sorted.is_empty() {
        return "-".to_string();
    }
    format!(
        "{} / {} / {}",
        shown(metric, at(50.0)),
        shown(metric, at(90.0)),
        shown(metric, at(100.0))
    )
}

fn verdict(m: &MetricComparison, alpha: f64) -> String {
    if m.rejected {
        format!("differ (p < {alpha})")
    } else {
        "agree".to_string()
    }
}

fn comparison_rows(groups: &[ConformGroup], alpha: f64) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "strategy",
        "metric",
        "real: p50 / p90 / max",
        "simulated: p50 / p90 / max",
        "n real",
        "n sim",
        "KS D",
        "p",
        "verdict",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for group in groups {
        for m in &group.metrics {
            rows.push(vec![
                group.name(),
                m.metric.label().to_string(),
                quantiles(m.metric, &m.real_values),
                quantiles(m.metric, &m.simulated_values),
                m.real_values.len().to_string(),
                m.simulated_values.len().to_string(),
                format!("{:.3}", m.ks_d),
                format!("{:.3}", m.p_value),
                verdict(m, alpha),
            ]);
        }
    }
    (header, rows)
}

/// The terminal text: what ran, then one row per strategy and metric.
pub fn render_conform(groups: &[ConformGroup], source: &str, alpha: f64) -> String {
    let mut out = String::new();
    let settings = common_settings(groups.iter().map(|g| &g.scenario));
    let _ = writeln!(
        out,
        "{source}: the real stack beside the simulator; {settings}"
    );
    for group in groups {
        let _ = writeln!(
            out,
            "  {}: {} real trial(s) from {}",
            group.name(),
            group.real_trials,
            group.source
        );
        if let Some(run) = &group.run {
            let versions: Vec<String> = run
                .versions
                .iter()
                .map(|(a, v)| format!("{a} {v}"))
                .collect();
            let _ = writeln!(out, "    {}", run_text(run, group.real_trials));
            if !versions.is_empty() {
                let _ = writeln!(out, "    versions: {}", versions.join(", "));
            }
        }
    }
    out.push('\n');
    let (header, rows) = comparison_rows(groups, alpha);
    out.push_str(&text_table(&header, &rows, 2));
    let _ = writeln!(
        out,
        "\ntwo-sample Kolmogorov-Smirnov test at alpha = {alpha}; exposure = the last failed \
         request to the stopped instance after it stopped serving (0 without one)"
    );
    out
}

/// The CDF of one metric of one group: the real trials and the simulated ones.
pub fn conform_cdf(group: &ConformGroup, metric: ConformMetric, source: &str) -> CdfPlot {
    let side = |label: &str, values: &[Option<i64>]| CdfSeries {
        label: label.to_string(),
        values_ms: values.iter().flatten().copied().collect(),
        unresolved: values.iter().filter(|v| v.is_none()).count(),
    };
    let m = group
        .metrics
        .iter()
        .find(|m| m.metric == metric)
        .expect("every group compares every metric");
    let x_label = if metric.is_time() {
        "last failed request to the stopped instance, after it stopped serving (s)".to_string()
    } else {
        // The CDF plot shows values in seconds; a count is drawn in thousandths so that its
        // axis reads as the count itself.
        "dead hits (count)".to_string()
    };
    let scale = |values: &[Option<i64>]| -> Vec<Option<i64>> {
        if metric.is_time() {
            values.to_vec()
        } else {
            values.iter().map(|v| v.map(|c| c * 1000)).collect()
        }
    };
    CdfPlot {
        title: format!(
            "{}: real stack vs simulator, {}\n{source}; KS D = {:.3}, p = {:.3}",
            group.name(),
            metric.label(),
            m.ks_d,
            m.p_value
        ),
        x_label,
        series: vec![
            side("real stack", &scale(&m.real_values)),
            side("simulator", &scale(&m.simulated_values)),
        ],
    }
}

/// The rig's run in one sentence: server per trial or not, Java, wall times.
fn run_text(run: &RunInfo, trials: usize) -> String {
    let server = if run.fresh_server {
        "a fresh Eureka server for every trial"
    } else {
        "one Eureka server process for every trial"
    };
    let mut text = format!("The rig ran with {server}");
    if !run.java.is_empty() {
        let _ = write!(text, " on {}", run.java);
    }
    if let Some(wall) = run.wall_s {
        let _ = write!(
            text,
            "; the run took {} s ({} s a trial",
            tenths(wall),
            tenths(wall / trials.max(1) as f64)
        );
        if let Some(startup) = run.startup_wall_s {
            let _ = write!(text, ", after {} s of start-up", tenths(startup));
        }
        text.push(')');
    }
    text.push('.');
    text
}

/// `report.html`: the comparison table, then per group its two CDFs.
pub fn conform_html(
    groups: &[ConformGroup],
    source: &str,
    alpha: f64,
    figures: Vec<Vec<Figure>>,
) -> HtmlReport {
    let (header, rows) = comparison_rows(groups, alpha);
    let mut summary = Section {
        heading: "Side by side".to_string(),
        paragraphs: vec![
            format!(
                "Each strategy's real trials (conformance/rig.py on this machine) beside the \
                 simulator's trials of the same scenario with the same strategy and wait. \
                 Quantiles are nearest-rank over all trials, an unresolved one counting as \
                 never. The verdict is the two-sample Kolmogorov-Smirnov test at alpha = {alpha} \
                 (asymptotic p-value with Stephens' correction; conservative with ties)."
            ),
            "Exposure here is the last request sent to the stopped instance that failed, after \
             it stopped serving (0 when none did): what the caller's log shows. The simulator's \
             own exposure (when the balancer dropped the instance) is at most one round-robin \
             turn later."
                .to_string(),
        ],
        ..Section::default()
    };
    summary.tables.push(Table {
        caption: String::new(),
        header,
        rows,
    });
    let mut sections = vec![summary];
    for (group, figures) in groups.iter().zip(figures) {
        sections.push(Section {
            heading: group.name(),
            paragraphs: vec![format!(
                "{} real trial(s) from {}; {} simulated trial(s).",
                group.real_trials, group.source, group.scenario.simulation.trials
            )],
            figures,
            ..Section::default()
        });
    }
    HtmlReport {
        title: format!("The real stack beside the simulator: {source}"),
        subtitle: common_settings(groups.iter().map(|g| &g.scenario)),
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_put_unresolved_trials_last() {
        let q = quantiles(ConformMetric::Exposure, &[None, Some(2000), Some(1000)]);
        assert_eq!(q, "2.0s / never / never");
        let q = quantiles(
            ConformMetric::DeadHits,
            &[Some(3), Some(1), Some(2), Some(4)],
        );
        assert_eq!(q, "2 / 4 / 4");
    }
}
