//! Reports: renderers of trial outcomes for people (terminal) and machines (CSV).

pub mod bench_report;
pub mod check_report;
pub mod columns;
mod compare_report;
pub mod conform_report;
mod csv_files;
mod describe;
pub mod explain;
pub mod html;
pub mod json;
pub mod junit;
mod keys;
pub mod matrix_report;
pub mod output;
pub mod plot;
pub mod recommend_report;
pub mod run_report;
pub mod shard;
pub mod starter;
mod sweep_report;
mod terminal;
pub mod tuning;

pub use compare_report::{
    compare_cdf, compare_header, compare_html, render_compare, write_compare, write_compare_csv,
};
pub use conform_report::{
    CONFORM_HEADER, conform_cdf, conform_html, render_conform, write_conform_csv,
};
pub use csv_files::{
    SERVERS_HEADER, TRIALS_HEADER, callers_header, summary_header, write_callers_csv,
    write_servers_csv, write_summary_csv, write_trials_csv,
};
pub use json::{render_summary_json, scenario_hash};
pub use keys::render_keys;
pub use sweep_report::{
    NamedPlot, SweepPlot, SweepPlots, render_sweep, sweep_header, sweep_html, sweep_plots,
    write_sweep, write_sweep_csv,
};
pub use terminal::{render_deploy, render_summary};

use crate::experiment::{Stats, TrialOutcome, Unresolved, shutdown_stats};
use crate::scenario::Metric;
use crate::scenario::Scenario;

/// One row of `summary.csv`: a shutdown's statistics for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub shutdown: usize,
    pub instance: String,
    pub strategy: &'static str,
    pub metric: Metric,
    pub stats: Stats,
    /// `stats.unresolved` by reason (reasons with no trial left out).
    pub unresolved_by: Vec<(Unresolved, usize)>,
}

/// `listed_at_end=3;restarted=1`: a count of trials by reason, as `summary.csv` writes it (empty
/// when there is none).
pub(crate) fn reasons_cell(by: &[(Unresolved, usize)]) -> String {
    by.iter()
        .map(|(r, n)| format!("{}={n}", r.name()))
        .collect::<Vec<_>>()
        .join(";")
}

/// A CSV cell: the value, or empty for "no value".
pub(crate) fn opt<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(String::new, |v| v.to_string())
}

/// Statistics of every metric of every shutdown (the rows of `summary.csv`).
pub fn summarize(scenario: &Scenario, outcomes: &[TrialOutcome]) -> Vec<SummaryRow> {
    shutdown_stats(scenario, outcomes)
        .into_iter()
        .map(|row| SummaryRow {
            shutdown: row.shutdown,
            instance: row.instance,
            strategy: scenario.shutdowns[row.shutdown].strategy.name(),
            metric: row.metric,
            stats: row.stats,
            unresolved_by: row.unresolved_by,
        })
        .collect()
}
