//! `eureka-sim run`: the trials, then their files (`trials.csv`, `callers.csv`, `servers.csv`,
//! `summary.csv`, `summary.json`, `deploy.json`, the plots, `report.html`) and the terminal
//! text.

use std::path::Path;

use crate::experiment::deploy_metrics::summarize_deploy;
use crate::experiment::{TrialOutcome, news_by_server};
use crate::scenario::Metric;
use crate::scenario::Scenario;

use super::SummaryRow;
use super::columns::StatColumn::{Max, Mean, Min, P50, P90, P99, P999, Unresolved};
use super::columns::labels;
use super::describe::{Footnotes, NEEDS_NOTE, percentile_of_values};
use super::explain::run_timeline;
use super::html::{Figure, HtmlReport, Section, Table, render_html};
use super::output::{OutputError, OutputOptions, create_dir, write_text, write_with};
use super::plot::{
    CdfPlot, CdfSeries, ImageFormat, TimelinePlot, cdf_svg_string, render_cdf, render_timeline,
    timeline_svg_string, write_svg,
};
use super::{
    render_deploy, render_summary, render_summary_json, summarize, write_callers_csv,
    write_servers_csv, write_summary_csv, write_trials_csv,
};

/// Writes `run`'s files for `outcomes` (every trial of `scenario`, in trial order) and returns
/// the terminal text. `run` calls it after its trials, `merge` after putting the shards'
/// outcomes back together: one writer, so the files are the same bytes either way. It simulates
/// nothing: the timeline's dead hits are those the median trial kept as it ran
/// (`TrialOutcome::dead_hit_spans`), which the shard files carry too.
pub fn write_run(
    scenario: &Scenario,
    output: &OutputOptions,
    outcomes: &[TrialOutcome],
) -> Result<String, OutputError> {
    let rows = summarize(scenario, outcomes);
    let OutputOptions {
        source,
        out_dir,
        png,
        ..
    } = output;
    create_dir(out_dir)?;
    let trials_path = out_dir.join("trials.csv");
    let summary_path = out_dir.join("summary.csv");
    write_with(&trials_path, |w| write_trials_csv(w, scenario, outcomes))?;
    let callers_path = out_dir.join("callers.csv");
    let servers_path = out_dir.join("servers.csv");
    write_with(&callers_path, |w| write_callers_csv(w, scenario, outcomes))?;
    write_with(&servers_path, |w| write_servers_csv(w, scenario, outcomes))?;
    write_with(&summary_path, |w| write_summary_csv(w, &rows))?;
    let figures = write_figures(scenario, outcomes, out_dir, *png)?;
    let report = run_report(scenario, source, outcomes, &rows, figures);
    let html_path = out_dir.join("report.html");
    write_text(&html_path, render_html(&report))?;
    let json_path = out_dir.join("summary.json");
    write_text(&json_path, render_summary_json(scenario, &rows))?;
    let deploys = deploy_report(scenario, outcomes, out_dir)?;
    let mut text = render_summary(scenario, source, outcomes, &rows);
    if !deploys.is_empty() {
        text.push_str(&format!("\n{deploys}"));
    }
    text.push_str(&format!(
        "\nwrote {}, {}, {}, {}, {}, the plots and {}\n",
        trials_path.display(),
        callers_path.display(),
        servers_path.display(),
        summary_path.display(),
        json_path.display(),
        html_path.display()
    ));
    Ok(text)
}

/// The `[[deploy]]` metrics over the trials, written to `deploy.json`; returns the terminal text
/// (empty without a deploy).
fn deploy_report(
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
    out_dir: &Path,
) -> Result<String, OutputError> {
    if scenario.deploys.is_empty() {
        return Ok(String::new());
    }
    let summaries: Vec<_> = (0..scenario.deploys.len())
        .map(|d| summarize_deploy(scenario, d, outcomes))
        .collect();
    let path = out_dir.join("deploy.json");
    let json = serde_json::to_string_pretty(&summaries).map_err(|e| OutputError::Write {
        path: path.clone(),
        source: Box::new(e),
    })?;
    write_text(&path, json)?;
    Ok(summaries.iter().map(render_deploy).collect())
}

/// Per shutdown: the exposure CDF and the timeline of the median-exposure trial, as files and as
/// inline SVG for the report.
fn write_figures(
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
    out_dir: &Path,
    png: bool,
) -> Result<Vec<Vec<Figure>>, OutputError> {
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
        // Drawn once, for the file and the report.
        let svg = cdf_svg_string(&cdf)?;
        write_svg(&svg, &path)?;
        if png {
            render_cdf(&cdf, ImageFormat::Png, &path.with_extension("png"))?;
        }
        figures.push(Figure {
            caption: "Exposure over the trials: the share of trials in which callers stopped \
                      routing to the instance within x seconds of its stop."
                .to_string(),
            svg,
        });
        let median = median_trial(outcomes, s).and_then(|t| outcomes.iter().find(|o| o.trial == t));
        if let Some(trial) = median {
            // The run's own trial, drawn from the dead hits it kept as it ran: no simulation
            // here, so a 1-trial run costs one.
            let plot = run_timeline(scenario, s, trial);
            let path = out_dir.join(format!("timeline{suffix}.svg"));
            let svg = timeline_svg_string(&plot)?;
            write_svg(&svg, &path)?;
            if png {
                render_timeline(&plot, ImageFormat::Png, &path.with_extension("png"))?;
            }
            figures.push(Figure {
                caption: timeline_caption(&plot),
                svg,
            });
        }
        all.push(figures);
    }
    Ok(all)
}

/// The exposure CDF of shutdown `s` over the run's trials.
pub fn exposure_cdf(scenario: &Scenario, s: usize, outcomes: &[TrialOutcome]) -> CdfPlot {
    let config = &scenario.shutdowns[s];
    let values: Vec<Option<i64>> = outcomes
        .iter()
        .map(|o| o.shutdowns.get(s).and_then(|x| x.exposure_ms))
        .collect();
    CdfPlot {
        title: format!(
            "{}: exposure of {} ({}) over {} trials\n{}, seed {}",
            scenario.name,
            config.instance,
            config.strategy.name(),
            outcomes.len(),
            scenario.simulation.release,
            scenario.simulation.seed
        ),
        x_label: "exposure: time callers kept routing to it after it stopped (s)".to_string(),
        series: vec![CdfSeries {
            label: config.strategy.name().to_string(),
            values_ms: values.iter().flatten().copied().collect(),
            unresolved: values.iter().filter(|v| v.is_none()).count(),
        }],
    }
}

/// The trial whose exposure is the median (the first such), to show as a typical timeline.
pub fn median_trial(outcomes: &[TrialOutcome], s: usize) -> Option<u32> {
    let mut by_exposure: Vec<(i64, u32)> = outcomes
        .iter()
        .map(|o| {
            let e = o.shutdowns.get(s).and_then(|x| x.exposure_ms);
            (e.unwrap_or(i64::MAX), o.trial)
        })
        .collect();
    by_exposure.sort_unstable();
    by_exposure.get(by_exposure.len() / 2).map(|&(_, t)| t)
}

fn fmt(metric: Metric, v: Option<i64>) -> String {
    match v {
        None => "-".to_string(),
        Some(v) if metric.is_time() => format!("{:.1}", v as f64 / 1000.0),
        Some(v) => v.to_string(),
    }
}

/// The HTML report: the summary table, the exposure CDF and the timeline of a typical trial,
/// per shutdown. `figures[s]` holds the SVGs of shutdown `s`.
pub fn run_report(
    scenario: &Scenario,
    source: &str,
    outcomes: &[TrialOutcome],
    rows: &[SummaryRow],
    figures: Vec<Vec<Figure>>,
) -> HtmlReport {
    let mut sections = Vec::new();
    for (s, config) in scenario.shutdowns.iter().enumerate() {
        let header = labels(
            &["metric", "unit"],
            &[Min, P50, P90, P99, P999, Max, Mean, Unresolved],
        );
        let mut notes = Footnotes::default();
        let table_rows = rows
            .iter()
            .filter(|r| r.shutdown == s)
            .map(|r| {
                let st = &r.stats;
                let m = r.metric;
                let mut percentile = |st: &crate::experiment::Stats, p: f64| {
                    let shown = percentile_of_values(st, p);
                    notes.add(shown);
                    shown.text(m)
                };
                vec![
                    m.label().replace("Ribbon", scenario.balancer_name()),
                    if m.is_time() { "s" } else { "count" }.to_string(),
                    fmt(m, st.min),
                    percentile(st, 50.0),
                    percentile(st, 90.0),
                    percentile(st, 99.0),
                    percentile(st, 99.9),
                    fmt(m, st.max),
                    st.mean.map_or("-".to_string(), |v| {
                        if m.is_time() {
                            format!("{:.1}", v / 1000.0)
                        } else {
                            format!("{v:.1}")
                        }
                    }),
                    st.unresolved.to_string(),
                ]
            })
            .collect();
        let zero = rows
            .iter()
            .find(|r| r.shutdown == s && r.metric == Metric::DeadHits)
            .map_or(0.0, |r| r.stats.zero_share * 100.0);
        let mut paragraphs = vec![
            format!(
                "Times are relative to the instant the instance stopped serving; negative \
                     means the layer knew before. {zero:.1} % of the trials had no dead hit."
            ),
            format!(
                "Exposure is the time callers kept the instance in their {} lists after it \
                     stopped; a dead hit is a request attempt refused by it.",
                scenario.balancer_name()
            ),
        ];
        if notes.needs {
            paragraphs.push(NEEDS_NOTE.to_string() + ".");
        }
        let mut tables = vec![Table {
            caption: format!("Summary over {} trials", outcomes.len()),
            header,
            rows: table_rows,
        }];
        if scenario.servers().len() > 1 {
            let (table, news) = cluster_table(scenario, s, outcomes);
            tables.push(table);
            paragraphs.push(news);
        }
        sections.push(Section {
            heading: format!(
                "{} stopped with {}",
                config.instance,
                config.strategy.name()
            ),
            paragraphs,
            tables,
            figures: figures.get(s).cloned().unwrap_or_default(),
        });
    }
    HtmlReport {
        title: format!("eureka-sim run: {}", scenario.name),
        subtitle: format!(
            "{source}: {} trials, seed {}, {}",
            outcomes.len(),
            scenario.simulation.seed,
            scenario.simulation.release
        ),
        sections,
    }
}

/// With several peers: per peer and per caller, the removals over the trials (`servers.csv`,
/// `callers.csv`), and a sentence saying whose answers brought each caller the news.
fn cluster_table(scenario: &Scenario, s: usize, outcomes: &[TrialOutcome]) -> (Table, String) {
    use crate::experiment::Stats;
    let servers = scenario.servers();
    let layout = crate::eureka::Layout::new(scenario);
    let shutdowns: Vec<_> = outcomes.iter().filter_map(|o| o.shutdowns.get(s)).collect();
    let mut rows = Vec::new();
    let mut row = |label: String, metric: Metric, values: Vec<Option<i64>>| {
        let st = Stats::of(values);
        let mean = st.mean.map_or("-".to_string(), |v| {
            if metric.is_time() {
                format!("{:.1}", v / 1000.0)
            } else {
                format!("{v:.1}")
            }
        });
        rows.push(vec![
            label,
            if metric.is_time() { "s" } else { "count" }.to_string(),
            fmt(metric, st.min),
            mean,
            fmt(metric, st.max),
            st.unresolved.to_string(),
        ]);
    };
    for (k, peer) in servers.iter().enumerate() {
        let of = |f: fn(&crate::experiment::ServerOutcome) -> Option<i64>| {
            shutdowns
                .iter()
                .map(|o| o.servers.get(k).and_then(f))
                .collect()
        };
        let name = &peer.name;
        let registry = of(|o| o.server_removed_ms);
        row(
            format!("peer {name}: left its registry"),
            Metric::ServerRemovedMs,
            registry,
        );
        let served = of(|o| o.readonly_removed_ms);
        row(
            format!("peer {name}: left its read-only cache"),
            Metric::ReadonlyRemovedMs,
            served,
        );
    }
    let callers: Vec<usize> = shutdowns
        .first()
        .map(|o| o.callers.iter().map(|c| c.process).collect())
        .unwrap_or_default();
    let mut news = Vec::new();
    for (c, &process) in callers.iter().enumerate() {
        let name = layout
            .processes
            .get(process)
            .map_or("?", |p| p.name.as_str());
        let of = |f: fn(&crate::experiment::CallerOutcome) -> Option<i64>| {
            shutdowns
                .iter()
                .map(|o| o.callers.get(c).and_then(f))
                .collect()
        };
        row(
            format!("{name}: exposure"),
            Metric::ExposureMs,
            of(|o| o.exposure_ms),
        );
        row(
            format!("{name}: dead hits"),
            Metric::DeadHits,
            of(|o| Some(o.dead_hits as i64)),
        );
        row(
            format!("{name}: left its Eureka cache"),
            Metric::ClientRemovedMs,
            of(|o| o.client_removed_ms),
        );
        row(
            format!("{name}: lost capacity (instance-s)"),
            Metric::LostCapacityMs,
            of(|o| Some(o.lost_capacity_ms as i64)),
        );
        let by_peer: Vec<String> = servers
            .iter()
            .zip(news_by_server(&shutdowns, c, servers.len()))
            .map(|(peer, n)| format!("peer {} in {n}", peer.name))
            .collect();
        news.push(format!("{name}: {}", by_peer.join(", ")));
    }
    let table = Table {
        caption: format!(
            "Per peer and per caller over {} trials (servers.csv, callers.csv)",
            outcomes.len()
        ),
        header: ["view", "unit", "min", "mean", "max", "unresolved"]
            .map(String::from)
            .to_vec(),
        rows,
    };
    let news = format!(
        "Whose answer (a full or delta fetch) finally dropped the instance from each caller's \
         Eureka cache, in how many trials: {}.",
        news.join("; ")
    );
    (table, news)
}

/// A timeline figure's caption.
pub fn timeline_caption(plot: &TimelinePlot) -> String {
    format!(
        "{}. Each lane shows until when the instance was still UP in that layer; red marks are \
         dead hits (drawn from the per-request run of the same trial).",
        plot.title.lines().next().unwrap_or("")
    )
}
