//! The statistics columns: one list of what `summary.csv`, `compare.csv` and `sweep.csv` show of a
//! metric's [`Stats`], with the name each column has in a CSV header and in a table, and how its
//! CSV cell is written. Each file picks its columns from here; none spells them out again.

use crate::experiment::Stats;

use super::opt;

/// One statistic of a metric over the trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatColumn {
    Trials,
    Unresolved,
    Min,
    P50,
    P90,
    P99,
    P999,
    Max,
    Mean,
    MeanCiLow,
    MeanCiHigh,
    ZeroShare,
}

use StatColumn::*;

/// `summary.csv`, after `instance,strategy,metric`.
pub const SUMMARY_STATS: [StatColumn; 8] = [Trials, Unresolved, Min, P50, P90, P99, Max, Mean];

/// `sweep.csv`, after the varied keys and `instance,metric`.
pub const SWEEP_STATS: [StatColumn; 10] = [
    Trials, Unresolved, Min, P50, P90, P99, P999, Max, Mean, ZeroShare,
];

/// `compare.csv`, after `variant,strategy,wait_s,instance,metric`.
pub const COMPARE_STATS: [StatColumn; 12] = [
    Trials, Unresolved, Min, P50, P90, P99, P999, Max, Mean, MeanCiLow, MeanCiHigh, ZeroShare,
];

impl StatColumn {
    /// The column's name in a CSV header.
    pub fn csv_name(self) -> &'static str {
        match self {
            Trials => "trials",
            Unresolved => "unresolved",
            Min => "min",
            P50 => "p50",
            P90 => "p90",
            P99 => "p99",
            P999 => "p99_9",
            Max => "max",
            Mean => "mean",
            MeanCiLow => "mean_ci_low",
            MeanCiHigh => "mean_ci_high",
            ZeroShare => "zero_share",
        }
    }

    /// The column's heading in a table for people.
    pub fn label(self) -> &'static str {
        match self {
            P999 => "p99.9",
            MeanCiLow | MeanCiHigh => "mean 95 % CI",
            ZeroShare => "share at 0",
            other => other.csv_name(),
        }
    }

    /// The CSV cell: empty for "no value"; means (and their interval) with one decimal, so the
    /// files are byte-stable and every file's `mean` is `summary.csv`'s; shares with four.
    pub fn cell(self, stats: &Stats) -> String {
        let decimal = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.1}"));
        match self {
            Trials => stats.trials.to_string(),
            Unresolved => stats.unresolved.to_string(),
            Min => opt(stats.min),
            P50 => opt(stats.p50),
            P90 => opt(stats.p90),
            P99 => opt(stats.p99),
            P999 => opt(stats.p999),
            Max => opt(stats.max),
            Mean => decimal(stats.mean),
            MeanCiLow => decimal(stats.mean_ci95.map(|c| c.0)),
            MeanCiHigh => decimal(stats.mean_ci95.map(|c| c.1)),
            ZeroShare => format!("{:.4}", stats.zero_share),
        }
    }
}

/// A CSV header: `lead` then the names of `columns`.
pub fn header(lead: &[&'static str], columns: &[StatColumn]) -> Vec<&'static str> {
    lead.iter()
        .copied()
        .chain(columns.iter().map(|c| c.csv_name()))
        .collect()
}

/// The CSV cells of `columns` for `stats`.
pub fn cells(stats: &Stats, columns: &[StatColumn]) -> Vec<String> {
    columns.iter().map(|c| c.cell(stats)).collect()
}

/// Table headings: `lead` then the labels of `columns`.
pub fn labels(lead: &[&str], columns: &[StatColumn]) -> Vec<String> {
    lead.iter()
        .map(|h| h.to_string())
        .chain(columns.iter().map(|c| c.label().to_string()))
        .collect()
}
