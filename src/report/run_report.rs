//! The figures and `report.html` of `eureka-sim run`.

use crate::experiment::TrialOutcome;
use crate::scenario::Metric;
use crate::scenario::Scenario;

use super::SummaryRow;
use super::html::{Figure, HtmlReport, Section, Table};
use super::plot::{CdfPlot, CdfSeries, TimelinePlot};

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
        let header = [
            "metric",
            "unit",
            "min",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "mean",
            "unresolved",
        ]
        .map(String::from)
        .to_vec();
        let table_rows = rows
            .iter()
            .filter(|r| r.shutdown == s)
            .map(|r| {
                let st = &r.stats;
                let m = r.metric;
                vec![
                    m.label().replace("Ribbon", scenario.balancer_name()),
                    if m.is_time() { "s" } else { "count" }.to_string(),
                    fmt(m, st.min),
                    fmt(m, st.p50),
                    fmt(m, st.p90),
                    fmt(m, st.p99),
                    fmt(m, st.p999),
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
        sections.push(Section {
            heading: format!(
                "{} stopped with {}",
                config.instance,
                config.strategy.name()
            ),
            paragraphs: vec![
                format!(
                    "Times are relative to the instant the instance stopped serving; negative \
                     means the layer knew before. {zero:.1} % of the trials had no dead hit."
                ),
                format!(
                    "Exposure is the time callers kept the instance in their {} lists after it \
                     stopped; a dead hit is a request attempt refused by it.",
                    scenario.balancer_name()
                ),
            ],
            tables: vec![Table {
                caption: format!("Summary over {} trials", outcomes.len()),
                header,
                rows: table_rows,
            }],
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

/// A timeline figure's caption.
pub fn timeline_caption(plot: &TimelinePlot) -> String {
    format!(
        "{}. Each lane shows until when the instance was still UP in that layer; red marks are \
         dead hits (drawn from the per-request run of the same trial).",
        plot.title.lines().next().unwrap_or("")
    )
}
