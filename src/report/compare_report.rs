//! Renderers of a [`Comparison`] of shutdown strategies: the side-by-side terminal table,
//! `compare.csv`, the CDF of exposure per variant, and the sections of `report.html`.

use std::fmt::Write as _;
use std::io::Write;

use crate::experiment::compare::VariantResult;
use crate::experiment::{Comparison, Stats};
use crate::scenario::Metric;

use super::columns::{COMPARE_STATS, StatColumn, cells, header, labels};
use super::describe::{
    Footnotes, NEEDS_NOTE, NEVER_NOTE, Shown, common_settings, label_with_unit, max_shown,
    mean_text, percent, percentile_of_values, percentile_shown, tenths, text_table,
    unresolved_cell, with_set,
};
use super::html::{Figure, HtmlReport, Section, Table, render_html};
use super::output::{OutputError, OutputOptions, begin_with_csv, image_formats, list, write_text};
use super::plot::{CdfPlot, CdfSeries, cdf_svg_string, render_cdf};

/// Writes `compare`'s files for `comparison` and returns the terminal text; `compare` and
/// `merge` share it, so their files are the same bytes.
pub fn write_compare(
    comparison: &Comparison,
    options: &OutputOptions,
) -> Result<String, OutputError> {
    let (source, set, out_dir) = (&options.source, &options.set, &options.out_dir);
    let mut written = begin_with_csv(options, "compare.csv", |w| write_compare_csv(w, comparison))?;
    let cdf = compare_cdf(comparison, source, set);
    let draw = |source| OutputError::Draw {
        context: "failed to draw the CDF of exposure".to_string(),
        source,
    };
    for format in image_formats(options.png) {
        let path = out_dir.join(format!("exposure-cdf.{}", format.extension()));
        render_cdf(&cdf, format, &path).map_err(draw)?;
        written.push(path);
    }
    let svg = cdf_svg_string(&cdf).map_err(draw)?;
    let html_path = out_dir.join("report.html");
    write_text(
        &html_path,
        render_html(&compare_html(comparison, source, set, svg)),
    )?;
    written.push(html_path);
    Ok(format!(
        "{}\nwrote {}\n",
        render_compare(comparison, source),
        list(&written)
    ))
}

/// The header of `compare.csv`: one row per variant, shutdown and metric.
pub fn compare_header() -> Vec<&'static str> {
    header(
        &["variant", "strategy", "wait_s", "instance", "metric"],
        &COMPARE_STATS,
    )
}

/// The wait of a variant's shutdown in whole seconds, for the strategies that wait.
fn wait_cell(result: &VariantResult, shutdown: usize) -> String {
    match result.scenario.shutdowns.get(shutdown) {
        Some(s) if s.strategy.waits() => (s.wait_ms / 1000).to_string(),
        _ => String::new(),
    }
}

/// `compare.csv`. Percentiles are nearest-rank over the trials that have a value (as in
/// `summary.csv`); `unresolved` counts the others. Means have one decimal, `zero_share` four.
pub fn write_compare_csv<W: Write>(out: W, comparison: &Comparison) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(compare_header())?;
    for result in &comparison.variants {
        for row in &result.stats {
            let strategy = result
                .scenario
                .shutdowns
                .get(row.shutdown)
                .map_or(result.variant.strategy, |s| s.strategy);
            let mut record = vec![
                result.variant.name(),
                strategy.name().to_string(),
                wait_cell(result, row.shutdown),
                row.instance.clone(),
                row.metric.name().to_string(),
            ];
            record.extend(cells(&row.stats, &COMPARE_STATS));
            writer.write_record(&record)?;
        }
    }
    writer.flush()?;
    Ok(())
}

/// The shutdowns of the comparison: `(index, instance, at_ms)` of the first variant's scenario
/// (every variant has the same ones).
fn shutdowns(comparison: &Comparison) -> Vec<(usize, String, u64)> {
    comparison
        .variants
        .first()
        .map(|v| {
            v.scenario
                .shutdowns
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.instance.clone(), s.at_ms))
                .collect()
        })
        .unwrap_or_default()
}

/// `p50/p99/max` of one metric of one variant, joined with `sep`, and the footnotes it needs.
fn triple(
    result: &VariantResult,
    shutdown: usize,
    metric: Metric,
    sep: &str,
) -> (String, Footnotes) {
    let mut notes = Footnotes::default();
    let Some(stats) = result.get(shutdown, metric) else {
        return ("-".to_string(), notes);
    };
    let shown = [
        percentile_shown(metric, stats, 50.0),
        percentile_shown(metric, stats, 99.0),
        max_shown(metric, stats),
    ];
    if shown.iter().all(|s| *s == Shown::Missing) {
        return ("-".to_string(), notes);
    }
    for s in shown {
        notes.add(s);
    }
    let text: Vec<String> = shown.iter().map(|s| s.text(metric)).collect();
    (text.join(sep), notes)
}

/// The callers' balancer, as the variants share it.
fn balancer_of(comparison: &Comparison) -> &'static str {
    comparison
        .variants
        .first()
        .map_or("Ribbon", |v| v.scenario.balancer_name())
}

/// The side-by-side table of one shutdown: a row per metric, a column per variant, and rows for
/// the share of trials without a dead hit and the unresolved exposures, with the footnotes its
/// cells need. `sep` separates the three figures of a cell.
fn side_by_side(
    comparison: &Comparison,
    shutdown: usize,
    sep: &str,
) -> (Vec<String>, Vec<Vec<String>>, Footnotes) {
    let mut header = vec![String::new()];
    header.extend(comparison.variants.iter().map(|v| v.variant.name()));
    let mut rows = Vec::new();
    let mut notes = Footnotes::default();
    let balancer = balancer_of(comparison);
    for metric in Metric::ALL {
        let mut row = vec![label_with_unit(metric, balancer)];
        for result in &comparison.variants {
            let (cell, cell_notes) = triple(result, shutdown, metric, sep);
            notes.merge(cell_notes);
            row.push(cell);
        }
        rows.push(row);
    }
    let share_row = |label: &str, cell: &dyn Fn(&Stats) -> String, metric: Metric| {
        let mut row = vec![label.to_string()];
        row.extend(
            comparison
                .variants
                .iter()
                .map(|r| r.get(shutdown, metric).map_or("-".to_string(), cell)),
        );
        row
    };
    rows.push(share_row(
        "no dead hit (share of trials)",
        &|s| percent(s.zero_share),
        Metric::DeadHits,
    ));
    let mut row = vec!["unresolved exposure (trials)".to_string()];
    row.extend(
        comparison
            .variants
            .iter()
            .map(|r| unresolved_cell(&r.stats, shutdown, Metric::ExposureMs)),
    );
    rows.push(row);
    (header, rows, notes)
}

/// The terminal summary: one side-by-side table per shutdown.
pub fn render_compare(comparison: &Comparison, source: &str) -> String {
    let mut out = String::new();
    let Some(first) = comparison.variants.first() else {
        return out;
    };
    let sim = &first.scenario.simulation;
    let instances: u32 = first.scenario.apps.iter().map(|a| a.instances).sum();
    let _ = writeln!(
        out,
        "{source}: {} variant(s) x {} trial(s), seed {} (common random numbers: trial k draws the \
         same random numbers in every variant), {}, {instances} app instance(s), {} caller(s)",
        comparison.variants.len(),
        sim.trials,
        sim.seed,
        sim.release,
        first.scenario.callers.len()
    );
    for (s, instance, at_ms) in shutdowns(comparison) {
        let _ = writeln!(
            out,
            "\n{instance} stopped at {} s; each cell: p50/p99/max over the trials, times in \
             seconds after it stopped serving",
            at_ms as f64 / 1000.0
        );
        let (header, rows, notes) = side_by_side(comparison, s, "/");
        out.push_str(&text_table(&header, &rows, 1));
        for note in notes.lines(NEVER_NOTE) {
            let _ = writeln!(out, "  {note}");
        }
    }
    out
}

/// The plot title's second line: the settings every variant shares, and the `--set` overrides.
fn settings_line(comparison: &Comparison, set: &[String]) -> String {
    let shared = common_settings(comparison.variants.iter().map(|v| &v.scenario));
    format!("{shared}{}", with_set(set))
}

/// The CDF of exposure, one curve per variant (per variant and shutdown when there are several
/// shutdowns). Variants with exactly the same exposures (common random numbers make that common:
/// pause and service-registry with the same wait) share one curve, labelled with every name,
/// since the later curve would hide the earlier.
pub fn compare_cdf(comparison: &Comparison, source: &str, set: &[String]) -> CdfPlot {
    let shutdowns = shutdowns(comparison);
    let mut series: Vec<CdfSeries> = Vec::new();
    for result in &comparison.variants {
        for (s, instance, _) in &shutdowns {
            let Some(stats) = result.get(*s, Metric::ExposureMs) else {
                continue;
            };
            let label = if shutdowns.len() > 1 {
                format!("{}, {instance}", result.variant.name())
            } else {
                result.variant.name()
            };
            let same = series
                .iter_mut()
                .find(|c| c.values_ms == stats.sorted && c.unresolved == stats.unresolved);
            match same {
                Some(curve) => {
                    curve.label.push_str(" = ");
                    curve.label.push_str(&label);
                }
                None => series.push(CdfSeries {
                    label,
                    values_ms: stats.sorted.clone(),
                    unresolved: stats.unresolved,
                }),
            }
        }
    }
    CdfPlot {
        title: format!(
            "Exposure by shutdown strategy: {source}\n{}",
            settings_line(comparison, set)
        ),
        x_label: "exposure: how long after the instance stopped serving a caller could still \
                  pick it (s)"
            .to_string(),
        series,
    }
}

fn strings<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.map(str::to_string).to_vec()
}

/// `report.html`: the side-by-side tables and the CDF (given as SVG), every statistic of every
/// variant, and how the variants were made.
pub fn compare_html(
    comparison: &Comparison,
    source: &str,
    set: &[String],
    cdf_svg: String,
) -> HtmlReport {
    let shutdowns = shutdowns(comparison);
    HtmlReport {
        title: format!("Shutdown strategies compared: {source}"),
        subtitle: settings_line(comparison, set),
        sections: vec![
            summary_section(comparison, &shutdowns),
            distribution_section(cdf_svg),
            statistics_section(comparison, &shutdowns),
            variants_section(comparison),
        ],
    }
}

/// The side-by-side tables, one per shutdown.
fn summary_section(comparison: &Comparison, shutdowns: &[(usize, String, u64)]) -> Section {
    let trials = comparison
        .variants
        .first()
        .map_or(0, |v| v.scenario.simulation.trials);
    let mut summary = Section {
        heading: "Side by side".to_string(),
        paragraphs: vec![
            format!(
                "{} variant(s), {trials} trial(s) each. Every variant runs with the same seed, so \
                 trial k of every variant draws the same random numbers (start-up and timer \
                 phases, request arrivals): the differences come from the strategy.",
                comparison.variants.len()
            ),
            "Each cell: p50 / p99 / max over the trials (nearest rank); times in seconds after \
             the instance stopped serving; a negative time means the layer knew before it \
             stopped."
                .to_string(),
        ],
        ..Section::default()
    };
    let mut notes = Footnotes::default();
    for (s, instance, at_ms) in shutdowns {
        let (header, rows, table_notes) = side_by_side(comparison, *s, " / ");
        notes.merge(table_notes);
        summary.tables.push(Table {
            caption: format!("{instance}, stopped at {} s", *at_ms as f64 / 1000.0),
            header,
            rows,
        });
    }
    for note in notes.lines(NEVER_NOTE) {
        summary.paragraphs.push(note.to_string() + ".");
    }
    summary
}

/// The CDF of exposure.
fn distribution_section(cdf_svg: String) -> Section {
    Section {
        heading: "Distribution of exposure".to_string(),
        paragraphs: vec![
            "Variants whose exposures are the same in every trial share one curve, named \
             \"a = b\" in the legend. Curves that differ by less than a pixel still hide each \
             other (pause and service-registry with the same wait often differ by a few \
             milliseconds only): the tables have their figures."
                .to_string(),
        ],
        figures: vec![Figure {
            caption: "Share of trials whose exposure is at or below x, per variant.".to_string(),
            svg: cdf_svg,
        }],
        ..Section::default()
    }
}

/// Every statistic of every variant, the figures of compare.csv.
fn statistics_section(comparison: &Comparison, shutdowns: &[(usize, String, u64)]) -> Section {
    let mut statistics = Section {
        heading: "Every statistic".to_string(),
        paragraphs: vec![
            "The figures of compare.csv, times in seconds. Percentiles and means are over the \
             trials that have a value; unresolved counts the others (for exposure and the \
             stages: still listed when the trial ended; for the last dead hit: no dead hit). \
             The mean's 95 % interval is a Student t-interval (none below 2 values)."
                .to_string(),
        ],
        ..Section::default()
    };
    let mut stat_notes = Footnotes::default();
    for (s, instance, _) in shutdowns {
        // The interval is one cell here, under one heading.
        let columns = COMPARE_STATS
            .iter()
            .filter(|&&c| c != StatColumn::MeanCiHigh);
        let header = labels(
            &["variant", "metric"],
            &columns.copied().collect::<Vec<_>>(),
        );
        let mut rows = Vec::new();
        for result in &comparison.variants {
            for metric in Metric::ALL {
                let Some(stats) = result.get(*s, metric) else {
                    continue;
                };
                let value =
                    |v: Option<i64>| Shown::text(v.map_or(Shown::Missing, Shown::Value), metric);
                let mut percentile = |p: f64| {
                    let shown = percentile_of_values(stats, p);
                    stat_notes.add(shown);
                    shown.text(metric)
                };
                let ci = match stats.mean_ci95 {
                    Some((lo, hi)) if metric.is_time() => {
                        format!("{} .. {}", tenths(lo / 1000.0), tenths(hi / 1000.0))
                    }
                    Some((lo, hi)) => format!("{} .. {}", tenths(lo), tenths(hi)),
                    None => "-".to_string(),
                };
                rows.push(vec![
                    result.variant.name(),
                    label_with_unit(metric, balancer_of(comparison)),
                    stats.trials.to_string(),
                    stats.unresolved.to_string(),
                    value(stats.min),
                    percentile(50.0),
                    percentile(90.0),
                    percentile(99.0),
                    percentile(99.9),
                    value(stats.max),
                    mean_text(metric, stats),
                    ci,
                    percent(stats.zero_share),
                ]);
            }
        }
        statistics.tables.push(Table {
            caption: instance.clone(),
            header,
            rows,
        });
    }
    if stat_notes.needs {
        statistics.paragraphs.push(NEEDS_NOTE.to_string() + ".");
    }
    statistics
}

/// How each variant was made.
fn variants_section(comparison: &Comparison) -> Section {
    let mut variants = Section {
        heading: "Variants".to_string(),
        paragraphs: vec![
            "Each variant is the scenario with these --set overrides after the command line's \
             own, applied to every [[shutdown]]. The kills ignore --wait-s; pause and \
             service-registry get one variant per wait and stop with the scenario's `then`."
                .to_string(),
        ],
        ..Section::default()
    };
    variants.tables.push(Table {
        caption: String::new(),
        header: strings(["variant", "overrides"]),
        rows: comparison
            .variants
            .iter()
            .map(|r| vec![r.variant.name(), r.overrides.join(" ")])
            .collect(),
    });
    variants
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::RequestMode;
    use crate::experiment::compare::{expand_variants, plan_compare, run_compare};
    use crate::scenario::Strategy;
    use crate::scenario::fixture::{ScenarioText, parse};

    /// Hoxton.SR4: the last release whose /pause deregisters and keeps serving
    /// (`Release::pause_deregisters`, Spring Boot 2.2: `Release::pause_stops_web_server`).
    fn scenario() -> String {
        let simulation = ["duration-s = 500", "trials = 5", "release = \"Hoxton.SR4\""];
        ScenarioText::simulation(&simulation)
            .fleet(20, &[])
            .shutdown("svc-0", 200, "kill-9", &[])
            .text()
    }

    fn comparison() -> Comparison {
        let variants = expand_variants(
            &[Strategy::Kill15, Strategy::Pause, Strategy::ServiceRegistry],
            &[60, 90],
            None,
        );
        let plan = plan_compare(&variants, 1, |extra| parse(&scenario(), extra)).unwrap();
        run_compare(plan, RequestMode::default(), &|| {}).unwrap()
    }

    fn csv(comparison: &Comparison) -> String {
        let mut out = Vec::new();
        write_compare_csv(&mut out, comparison).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn compare_csv_has_a_row_per_variant_shutdown_and_metric() {
        let comparison = comparison();
        let text = csv(&comparison);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], compare_header().join(","));
        assert_eq!(lines.len(), 1 + 5 * Metric::ALL.len());
        for line in &lines[1..] {
            assert_eq!(line.split(',').count(), compare_header().len(), "{line}");
        }
        let first: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(
            &first[..6],
            ["kill-15", "kill-15", "", "svc-0", "exposure_ms", "5"]
        );
        let pause: Vec<&str> = lines[1 + Metric::ALL.len()].split(',').collect();
        assert_eq!(
            &pause[..5],
            ["pause-60s", "pause", "60", "svc-0", "exposure_ms"]
        );
        // One decimal for the mean and its interval, four for the share.
        let mean = first[13];
        assert_eq!(mean.split('.').nth(1).map(str::len), Some(1), "{mean}");
        assert_eq!(first[16].split('.').nth(1).map(str::len), Some(4));
    }

    #[test]
    fn the_terminal_table_has_a_column_per_variant() {
        let comparison = comparison();
        let text = render_compare(&comparison, "t.toml");
        let header = text
            .lines()
            .find(|l| l.contains("kill-15"))
            .expect("a header line");
        for name in ["kill-15", "pause-60s", "pause-90s", "service-registry-90s"] {
            assert!(header.contains(name), "{header}");
        }
        for label in [
            "exposure (s)",
            "dead hits",
            "left the Ribbon lists (s)",
            "no dead hit",
        ] {
            assert!(text.contains(label), "{label}");
        }
        assert!(!text.contains("-0.0"));
    }

    #[test]
    fn identical_variants_share_one_curve() {
        let mut comparison = comparison();
        // A copy of the first variant under another name has the same exposures.
        let mut copy = comparison.variants[0].clone();
        copy.variant.strategy = Strategy::Kill9;
        comparison.variants.push(copy);
        let cdf = compare_cdf(&comparison, "t.toml", &[]);
        assert_eq!(cdf.series[0].label, "kill-15 = kill-9");
        // Every variant is named once, on one curve or another.
        let labels: Vec<String> = cdf.series.iter().map(|s| s.label.clone()).collect();
        let mut names: Vec<&str> = labels.iter().flat_map(|l| l.split(" = ")).collect();
        names.sort_unstable();
        let mut expected: Vec<String> = comparison
            .variants
            .iter()
            .map(|v| v.variant.name())
            .collect();
        expected.sort_unstable();
        assert_eq!(names, expected);
        assert!(
            cdf.title
                .starts_with("Exposure by shutdown strategy: t.toml\n")
        );
        assert!(cdf.title.contains("svc-0 stopped at 200 s"));
        assert!(!cdf.title.contains("with kill-15"), "{}", cdf.title);
    }
}
