//! Renderers of a [`Sweep`]: the terminal grid table, `sweep.csv`, the plots (a line plot per
//! metric for one key, heatmaps for two) and the sections of `report.html`.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use crate::experiment::intervals::trials_for_percentile;
use crate::experiment::{PointResult, Sweep, Vary, needs_trials};
use crate::scenario::Metric;

use super::columns::{SWEEP_STATS, cells, header};
use super::describe::{
    Footnotes, NEVER_NOTE, Shown, common_settings, mean_text, percent, percentile_shown,
    text_table, unresolved_cell, with_set,
};
use super::html::{Figure, HtmlReport, Section, Table, render_html};
use super::output::{OutputError, OutputOptions, begin_with_csv, image_formats, list, write_text};
use super::plot::{
    Heatmap, ImageFormat, LinePlot, PlotError, heatmap_svg_string, line_svg_string, render_heatmap,
    render_line,
};

/// Writes `sweep`'s files for `sweep` (with `notes`, the warnings about the grid) and returns the
/// terminal text; `sweep` and `merge` share it, so their files are the same bytes.
pub fn write_sweep(
    sweep: &Sweep,
    notes: &[String],
    options: &OutputOptions,
) -> Result<String, OutputError> {
    let (source, set, out_dir) = (&options.source, &options.set, &options.out_dir);
    let mut written = begin_with_csv(options, "sweep.csv", |w| write_sweep_csv(w, sweep))?;
    let plots = sweep_plots(sweep, source, set);
    let mut figures = Vec::new();
    for named in &plots.plots {
        let draw = |source| OutputError::Draw {
            context: format!("failed to draw {}", named.stem),
            source,
        };
        for format in image_formats(options.png) {
            let path = out_dir.join(format!("{}.{}", named.stem, format.extension()));
            named.render(format, &path).map_err(draw)?;
            written.push(path);
        }
        figures.push(Figure {
            caption: named.caption.clone(),
            svg: named.svg().map_err(draw)?,
        });
    }
    let html_path = out_dir.join("report.html");
    let report = sweep_html(sweep, source, set, figures, notes);
    write_text(&html_path, render_html(&report))?;
    written.push(html_path);
    let mut text = render_sweep(sweep, source);
    if let Some(note) = &plots.note {
        text.push_str(&format!("\n{note}\n"));
    }
    text.push_str(&format!("\nwrote {}\n", list(&written)));
    Ok(text)
}

/// The header of `sweep.csv`: the varied keys as given, `instance`, `metric`, then the
/// statistics.
pub fn sweep_header(sweep: &Sweep) -> Vec<String> {
    let keys: Vec<String> = sweep.varies.iter().map(|v| v.key.clone()).collect();
    keys.into_iter()
        .chain(
            header(&["instance", "metric"], &SWEEP_STATS)
                .into_iter()
                .map(String::from),
        )
        .collect()
}

/// `sweep.csv`, the points in grid order (the first key varying slowest). The figures are those
/// of `summary.csv` and `compare.csv`: nearest-rank percentiles over the trials with a value.
pub fn write_sweep_csv<W: Write>(out: W, sweep: &Sweep) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(sweep_header(sweep))?;
    for point in &sweep.points {
        for row in &point.stats {
            let mut record = point.point.values.clone();
            record.push(row.instance.clone());
            record.push(row.metric.name().to_string());
            record.extend(cells(&row.stats, &SWEEP_STATS));
            writer.write_record(&record)?;
        }
    }
    writer.flush()?;
    Ok(())
}

/// The shutdowns of the sweep: `(index, instance)`.
fn shutdowns(sweep: &Sweep) -> Vec<(usize, String)> {
    sweep
        .points
        .first()
        .map(|p| {
            p.scenario
                .shutdowns
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.instance.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn shown(point: &PointResult, shutdown: usize, metric: Metric, p: f64) -> Shown {
    point
        .get(shutdown, metric)
        .map_or(Shown::Missing, |s| percentile_shown(metric, s, p))
}

/// The grid of one shutdown: the key values, then p50 and p99 exposure, mean dead hits and the
/// unresolved exposures (`full` adds p99 dead hits and the share without a dead hit), with the
/// footnotes its cells need.
fn grid_table(
    sweep: &Sweep,
    shutdown: usize,
    full: bool,
) -> (Vec<String>, Vec<Vec<String>>, Footnotes) {
    let mut header: Vec<String> = sweep.varies.iter().map(|v| v.key.clone()).collect();
    header.extend(["p50 exposure (s)", "p99 exposure (s)", "mean dead hits"].map(String::from));
    if full {
        header.extend(["p99 dead hits", "no dead hit"].map(String::from));
    }
    header.push("unresolved".to_string());
    let mut notes = Footnotes::default();
    let rows = sweep
        .points
        .iter()
        .map(|point| {
            let mut row = point.point.values.clone();
            let exposure = [50.0, 99.0].map(|p| shown(point, shutdown, Metric::ExposureMs, p));
            for shown in exposure {
                notes.add(shown);
            }
            row.extend(exposure.map(|s| s.text(Metric::ExposureMs)));
            let dead_hits = point.get(shutdown, Metric::DeadHits);
            row.push(dead_hits.map_or("-".to_string(), |s| mean_text(Metric::DeadHits, s)));
            if full {
                let p99 = shown(point, shutdown, Metric::DeadHits, 99.0);
                notes.add(p99);
                row.push(p99.text(Metric::DeadHits));
                row.push(dead_hits.map_or("-".to_string(), |s| percent(s.zero_share)));
            }
            row.push(unresolved_cell(&point.stats, shutdown, Metric::ExposureMs));
            row
        })
        .collect();
    (header, rows, notes)
}

/// The terminal summary: the grid with p50/p99 exposure and mean dead hits per point, one table
/// per shutdown.
pub fn render_sweep(sweep: &Sweep, source: &str) -> String {
    let mut out = String::new();
    if sweep.points.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "{source}: {} grid point(s) over {} (common random numbers: trial k draws the same \
         random numbers at every point)\n  {}",
        sweep.points.len(),
        keys_text(sweep),
        common_settings(sweep.points.iter().map(|p| &p.scenario)),
    );
    for (s, instance) in shutdowns(sweep) {
        let _ = writeln!(
            out,
            "\n{instance}: exposure in seconds after it stopped serving; unresolved: trials in \
             which it was still listed at max-duration-s, with why"
        );
        let (header, rows, notes) = grid_table(sweep, s, false);
        out.push_str(&text_table(&header, &rows, 0));
        for note in notes.lines(NEVER_NOTE) {
            let _ = writeln!(out, "  {note}");
        }
    }
    out
}

/// A plot of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepPlot {
    Line(LinePlot),
    Heatmap(Heatmap),
}

/// A plot with its file stem (`exposure-p99`) and a caption for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedPlot {
    pub stem: String,
    pub caption: String,
    pub plot: SweepPlot,
}

impl NamedPlot {
    /// Draws the plot into `path`.
    pub fn render(&self, format: ImageFormat, path: &Path) -> Result<(), PlotError> {
        match &self.plot {
            SweepPlot::Line(p) => render_line(p, format, path),
            SweepPlot::Heatmap(p) => render_heatmap(p, format, path),
        }
    }

    /// The plot as an SVG document, for the HTML report.
    pub fn svg(&self) -> Result<String, PlotError> {
        match &self.plot {
            SweepPlot::Line(p) => line_svg_string(p),
            SweepPlot::Heatmap(p) => heatmap_svg_string(p),
        }
    }
}

/// The plots of a sweep, or why there are none.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlots {
    pub plots: Vec<NamedPlot>,
    /// Why plots were skipped (more than two keys).
    pub note: Option<String>,
}

/// A statistic of the sweep that is plotted.
#[derive(Debug, Clone, Copy)]
struct Plotted {
    metric: Metric,
    /// `None`: the mean.
    percentile: Option<f64>,
}

/// The percentiles a sweep plots, the first its trials support (see [`plotted_percentile`]).
const PLOTTED_PERCENTILES: [f64; 3] = [99.0, 90.0, 50.0];

impl Plotted {
    fn exposure(p: f64) -> Plotted {
        Plotted {
            metric: Metric::ExposureMs,
            percentile: Some(p),
        }
    }

    fn dead_hits(p: Option<f64>) -> Plotted {
        Plotted {
            metric: Metric::DeadHits,
            percentile: p,
        }
    }

    /// The file stem: `exposure-p99`, `dead-hits-mean`.
    fn stem(self) -> String {
        let what = match self.metric {
            Metric::ExposureMs => "exposure",
            _ => "dead-hits",
        };
        match self.percentile {
            Some(p) => format!("{what}-p{p}"),
            None => format!("{what}-mean"),
        }
    }

    /// The axis and title label: `p99 exposure (s)`, `mean dead hits`.
    fn label(self) -> String {
        let what = match self.metric {
            Metric::ExposureMs => "exposure (s)",
            _ => "dead hits",
        };
        match self.percentile {
            Some(p) => format!("p{p} {what}"),
            None => format!("mean {what}"),
        }
    }

    /// The value at a point in the unit people read (seconds for times); `None` when it falls
    /// on unresolved trials or there is none.
    fn value(self, point: &PointResult, shutdown: usize) -> Option<f64> {
        let stats = point.get(shutdown, self.metric)?;
        match self.percentile {
            Some(p) => percentile_shown(self.metric, stats, p).number(self.metric),
            None => stats
                .mean
                .map(|m| if self.metric.is_time() { m / 1000.0 } else { m }),
        }
    }
}

/// The percentile the plots show: p99, or the highest of p90 and p50 that the trials of a point
/// support, with a note when it is not p99; `None` (and a note) when they support none.
fn plotted_percentile(sweep: &Sweep) -> (Option<f64>, Option<String>) {
    let trials = sweep
        .points
        .first()
        .map_or(0, |p| p.scenario.simulation.trials as usize);
    let chosen = PLOTTED_PERCENTILES
        .into_iter()
        .find(|&p| needs_trials(trials, p).is_none());
    let wanted = PLOTTED_PERCENTILES[0];
    let note = match chosen {
        Some(p) if p == wanted => None,
        _ => {
            let needed = trials_for_percentile(wanted).unwrap_or(usize::MAX);
            Some(match chosen {
                Some(p) => format!(
                    "p{wanted} needs at least {needed} trials per point (these have {trials}): \
                     the plots show p{p}, the highest percentile {trials} trials support."
                ),
                None => format!(
                    "p{wanted} needs at least {needed} trials per point and p50 at least {} \
                     (these have {trials}): no percentile is plotted.",
                    trials_for_percentile(50.0).unwrap_or(usize::MAX)
                ),
            })
        }
    };
    (chosen, note)
}

/// A value given to `--vary` as a number (TOML allows `5_000`), if it is one.
fn number(value: &str) -> Option<f64> {
    value
        .replace('_', "")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// The plots: for one key, p99 exposure and p99 dead hits against its values (a line per
/// shutdown when the values are numbers, a heatmap with a row per shutdown otherwise); for two
/// keys, heatmaps of p99 exposure and of mean dead hits for each shutdown (the first key along
/// x); for more, none, with a note saying so.
pub fn sweep_plots(sweep: &Sweep, source: &str, set: &[String]) -> SweepPlots {
    let settings = format!(
        "{}{}",
        common_settings(sweep.points.iter().map(|p| &p.scenario)),
        with_set(set)
    );
    let shutdowns = shutdowns(sweep);
    let (percentile, note) = plotted_percentile(sweep);
    let titles = Titles {
        source,
        settings: &settings,
    };
    let plots = match sweep.varies.as_slice() {
        [vary] => {
            let plotted = match percentile {
                // Dead hits as their mean, as the table shows them and as a two-key sweep
                // plots them (a count's expectation; its high percentiles move in steps of one).
                Some(p) => vec![Plotted::exposure(p), Plotted::dead_hits(None)],
                None => vec![Plotted::dead_hits(None)],
            };
            plotted
                .into_iter()
                .map(|plotted| one_key_plot(sweep, vary, &shutdowns, plotted, &titles))
                .collect()
        }
        [x, y] => {
            let plotted: Vec<Plotted> = percentile
                .map(Plotted::exposure)
                .into_iter()
                .chain([Plotted::dead_hits(None)])
                .collect();
            let mut plots = Vec::new();
            for (s, instance) in &shutdowns {
                for &plotted in &plotted {
                    plots.push(two_key_plot(
                        sweep,
                        (x, y),
                        (*s, instance),
                        shutdowns.len(),
                        plotted,
                        &titles,
                    ));
                }
            }
            plots
        }
        _ => {
            return SweepPlots {
                plots: Vec::new(),
                note: sweep_plots_note(sweep),
            };
        }
    };
    SweepPlots { plots, note }
}

/// What every plot's title ends with: the scenario and the settings its points share.
struct Titles<'a> {
    source: &'a str,
    settings: &'a str,
}

/// A one-key sweep's plot of `plotted`: a line over numeric values, else a heatmap.
fn one_key_plot(
    sweep: &Sweep,
    vary: &Vary,
    shutdowns: &[(usize, String)],
    plotted: Plotted,
    titles: &Titles,
) -> NamedPlot {
    let Titles { source, settings } = titles;
    let numbers: Option<Vec<f64>> = vary.values.iter().map(|v| number(v)).collect();
    let label = plotted.label();
    let title = format!("{label} vs {}: {source}\n{settings}", vary.key);
    let caption = format!("{label} against {}.", vary.key);
    let plot = match &numbers {
        Some(xs) => {
            // Left to right, whatever the order of the values.
            let mut order: Vec<usize> = (0..xs.len()).collect();
            order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
            SweepPlot::Line(LinePlot {
                title,
                x_label: vary.key.clone(),
                y_label: label.clone(),
                xs: order.iter().map(|&i| xs[i]).collect(),
                series: shutdowns
                    .iter()
                    .map(|(s, instance)| {
                        let ys = order
                            .iter()
                            .map(|&i| plotted.value(&sweep.points[i], *s))
                            .collect();
                        (instance.clone(), ys)
                    })
                    .collect(),
            })
        }
        None => SweepPlot::Heatmap(Heatmap {
            title,
            x_label: vary.key.clone(),
            y_label: "instance".to_string(),
            xs: vary.values.clone(),
            ys: shutdowns.iter().map(|(_, i)| i.clone()).collect(),
            values: shutdowns
                .iter()
                .map(|(s, _)| sweep.points.iter().map(|p| plotted.value(p, *s)).collect())
                .collect(),
            value_label: label.clone(),
        }),
    };
    NamedPlot {
        stem: plotted.stem(),
        caption,
        plot,
    }
}

/// A two-key sweep's heatmap of `plotted` for shutdown `s`.
fn two_key_plot(
    sweep: &Sweep,
    (x, y): (&Vary, &Vary),
    (s, instance): (usize, &String),
    shutdown_count: usize,
    plotted: Plotted,
    titles: &Titles,
) -> NamedPlot {
    let Titles { source, settings } = titles;
    let label = plotted.label();
    let (stem, of) = if shutdown_count > 1 {
        (
            format!("{}-{instance}", plotted.stem()),
            format!(" of {instance}"),
        )
    } else {
        (plotted.stem(), String::new())
    };
    // Points are row-major with the first key slowest: point (i, j) is
    // i * ny + j, and the heatmap wants values[j][i].
    let ny = y.values.len();
    let values = (0..ny)
        .map(|j| {
            (0..x.values.len())
                .map(|i| plotted.value(&sweep.points[i * ny + j], s))
                .collect()
        })
        .collect();
    NamedPlot {
        stem,
        caption: format!("{label}{of} by {} (x) and {} (y).", x.key, y.key),
        plot: SweepPlot::Heatmap(Heatmap {
            title: format!(
                "{label}{of} by {} and {}: {source}\n{settings}",
                x.key, y.key
            ),
            x_label: x.key.clone(),
            y_label: y.key.clone(),
            xs: x.values.clone(),
            ys: y.values.clone(),
            values,
            value_label: label.clone(),
        }),
    }
}

/// `report.html`: the grid, the plots (as SVG, with their captions), and `notes` (things the
/// user was warned about).
pub fn sweep_html(
    sweep: &Sweep,
    source: &str,
    set: &[String],
    figures: Vec<Figure>,
    notes: &[String],
) -> HtmlReport {
    let trials = sweep
        .points
        .first()
        .map_or(0, |p| p.scenario.simulation.trials);
    let keys: Vec<String> = sweep.varies.iter().map(|v| v.arg()).collect();
    let mut grid = Section {
        heading: "Grid".to_string(),
        paragraphs: vec![
            format!(
                "{} point(s) of --vary {}, {trials} trial(s) each. Every point runs with the same \
                 seed, so trial k draws the same random numbers at every point: the differences \
                 come from the settings.",
                sweep.points.len(),
                keys.join(" --vary ")
            ),
            "Exposure in seconds after the instance stopped serving; percentiles are nearest \
             rank; unresolved counts the trials in which the instance was still listed when the \
             trial ended."
                .to_string(),
        ],
        ..Section::default()
    };
    let mut footnotes = Footnotes::default();
    for (s, instance) in shutdowns(sweep) {
        let (header, rows, table_notes) = grid_table(sweep, s, true);
        footnotes.merge(table_notes);
        grid.tables.push(Table {
            caption: instance,
            header,
            rows,
        });
    }
    for note in footnotes.lines(NEVER_NOTE) {
        grid.paragraphs.push(note.to_string() + ".");
    }
    let mut plots = Section {
        heading: "Plots".to_string(),
        figures,
        ..Section::default()
    };
    let mut sections = vec![grid];
    let skipped = sweep_plots_note(sweep).or_else(|| plotted_percentile(sweep).1);
    if let Some(note) = skipped {
        plots.paragraphs.push(note);
    }
    sections.push(plots);
    if !notes.is_empty() {
        sections.push(Section {
            heading: "Notes".to_string(),
            paragraphs: notes.to_vec(),
            ..Section::default()
        });
    }
    HtmlReport {
        title: format!("Sweep of {}: {source}", keys_text(sweep)),
        subtitle: format!(
            "{}{}",
            common_settings(sweep.points.iter().map(|p| &p.scenario)),
            with_set(set)
        ),
        sections,
    }
}

fn keys_text(sweep: &Sweep) -> String {
    sweep
        .varies
        .iter()
        .map(|v| v.key.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The note of [`sweep_plots`] without drawing anything.
fn sweep_plots_note(sweep: &Sweep) -> Option<String> {
    (sweep.varies.len() > 2).then(|| {
        format!(
            "No plots: a sweep of {} keys has no line plot or heatmap (one key gives line plots, \
             two give heatmaps); sweep.csv has every point.",
            sweep.varies.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::RequestMode;
    use crate::experiment::Vary;
    use crate::experiment::sweep::{plan_sweep, run_sweep};
    use crate::scenario::fixture::{ScenarioText, parse};

    fn scenario(trials: u32) -> String {
        let trials = format!("trials = {trials}");
        ScenarioText::simulation(&["duration-s = 500", &trials])
            .fleet(20, &[])
            .shutdown("svc-0", 200, "kill-15", &[])
            .shutdown("svc-1", 250, "kill-15", &[])
            .text()
    }

    /// The sweep at 3 trials per point.
    fn sweep(args: &[&str]) -> Sweep {
        sweep_with(3, args)
    }

    fn sweep_with(trials: u32, args: &[&str]) -> Sweep {
        let varies: Vec<Vary> = args.iter().map(|a| Vary::parse(a).unwrap()).collect();
        let plan = plan_sweep(&varies, |extra| parse(&scenario(trials), extra)).unwrap();
        run_sweep(&varies, plan, RequestMode::default(), &|| {}).unwrap()
    }

    const REFRESH: &str = "clients.ribbon.ServerListRefreshInterval=30000,5000";
    const RELEASE: &str = "simulation.release=Dalston,Hoxton";
    const CACHE: &str = "server.eureka.server.response-cache-update-interval-ms=5000,15000,30000";

    #[test]
    fn sweep_csv_leads_with_the_varied_keys() {
        let sweep = sweep(&[REFRESH, RELEASE]);
        let mut out = Vec::new();
        write_sweep_csv(&mut out, &sweep).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "clients.ribbon.ServerListRefreshInterval,simulation.release,instance,metric,trials,\
             unresolved,min,p50,p90,p99,p99_9,max,mean,zero_share"
        );
        // 4 points x 2 shutdowns x every metric.
        assert_eq!(lines.len(), 1 + 4 * 2 * Metric::ALL.len());
        for line in &lines[1..] {
            assert_eq!(line.split(',').count(), 2 + 12, "{line}");
        }
        assert!(lines[1].starts_with("30000,Dalston,svc-0,exposure_ms,3,"));
        assert!(
            lines
                .last()
                .unwrap()
                .starts_with("5000,Hoxton,svc-1,lost_capacity_ms,3,")
        );
    }

    /// 30 trials per point support p90, not p99 (299): the plots show p90 and say why.
    #[test]
    fn one_numeric_key_draws_lines_sorted_by_value() {
        let sweep = sweep_with(30, &[REFRESH]);
        let plots = sweep_plots(&sweep, "t.toml", &[]);
        assert_eq!(
            plots.note.as_deref(),
            Some(
                "p99 needs at least 299 trials per point (these have 30): the plots show p90, \
                 the highest percentile 30 trials support."
            )
        );
        let stems: Vec<&str> = plots.plots.iter().map(|p| p.stem.as_str()).collect();
        // Dead hits by their mean, as the table and a two-key sweep show them.
        assert_eq!(stems, ["exposure-p90", "dead-hits-mean"]);
        let SweepPlot::Line(line) = &plots.plots[0].plot else {
            panic!("not a line plot");
        };
        assert_eq!(line.xs, [5000.0, 30000.0]);
        assert_eq!(line.series.len(), 2);
        assert_eq!(line.series[1].0, "svc-1");
        // The 5000 point (second in the grid) comes first.
        let p90 = |point: usize| {
            sweep.points[point]
                .get(0, Metric::ExposureMs)
                .and_then(|s| s.p90)
                .map(|v| v as f64 / 1000.0)
        };
        assert!(p90(0).is_some());
        assert_eq!(line.series[0].1, [p90(1), p90(0)]);
        assert!(
            line.title.starts_with(
                "p90 exposure (s) vs clients.ribbon.ServerListRefreshInterval: t.toml\n"
            )
        );
        assert!(!line.title.contains("Ribbon refresh"), "{}", line.title);
    }

    #[test]
    fn one_word_key_draws_a_heatmap_with_a_row_per_shutdown() {
        let sweep = sweep(&[RELEASE]);
        let plots = sweep_plots(&sweep, "t.toml", &[]);
        let SweepPlot::Heatmap(map) = &plots.plots[0].plot else {
            panic!("not a heatmap");
        };
        assert_eq!(map.xs, ["Dalston", "Hoxton"]);
        assert_eq!(map.ys, ["svc-0", "svc-1"]);
    }

    /// 3 trials per point support no percentile: no percentile plot, the grid says `n<N`.
    #[test]
    fn too_few_trials_plot_no_percentile() {
        let sweep = sweep(&[REFRESH]);
        let plots = sweep_plots(&sweep, "t.toml", &[]);
        let stems: Vec<&str> = plots.plots.iter().map(|p| p.stem.as_str()).collect();
        assert_eq!(stems, ["dead-hits-mean"]);
        assert!(plots.note.unwrap().contains("no percentile is plotted"));
        let text = render_sweep(&sweep, "t.toml");
        assert!(text.contains("n<6") && text.contains("n<299"), "{text}");
        assert!(text.contains("\"n<N\": too few trials"), "{text}");
    }

    #[test]
    fn two_keys_draw_heatmaps_per_shutdown_with_the_first_key_along_x() {
        let sweep = sweep_with(6, &[CACHE, REFRESH]);
        let plots = sweep_plots(&sweep, "t.toml", &[]);
        let stems: Vec<&str> = plots.plots.iter().map(|p| p.stem.as_str()).collect();
        assert_eq!(
            stems,
            [
                "exposure-p50-svc-0",
                "dead-hits-mean-svc-0",
                "exposure-p50-svc-1",
                "dead-hits-mean-svc-1"
            ]
        );
        let SweepPlot::Heatmap(map) = &plots.plots[1].plot else {
            panic!("not a heatmap");
        };
        assert_eq!(map.xs, ["5000", "15000", "30000"]);
        assert_eq!(map.ys, ["30000", "5000"]);
        // values[y][x] is the point (x, y): index x * 2 + y in the grid.
        let mean = |point: usize| sweep.points[point].get(0, Metric::DeadHits).unwrap().mean;
        assert_eq!(map.values[1][2], mean(2 * 2 + 1));
        assert_eq!(map.values[0][1], mean(2));
    }

    #[test]
    fn three_keys_skip_the_plots_with_a_note() {
        let sweep = sweep(&[CACHE, REFRESH, RELEASE]);
        let plots = sweep_plots(&sweep, "t.toml", &[]);
        assert!(plots.plots.is_empty());
        assert!(plots.note.unwrap().contains("3 keys"));
        let html = sweep_html(&sweep, "t.toml", &[], vec![], &[]);
        assert!(html.sections[1].paragraphs[0].contains("No plots"));
        let text = render_sweep(&sweep, "t.toml");
        assert_eq!(text.matches("\n  5000  ").count(), 0);
        assert!(text.contains("12 grid point(s)"));
    }
}
