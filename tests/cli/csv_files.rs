//! Reading `trials.csv` and `summary.csv` back, by column name, the way a user's script would.

use std::fmt;

/// `trials.csv`'s header, as documented to users.
pub const TRIALS_HEADER: &str = "trial,seed,instance,strategy,t_stop_ms,exposure_ms,dead_hits,errors,\
inflight_failed,timeout_delay_ms,last_dead_hit_ms,server_removed_ms,readonly_removed_ms,client_removed_ms,ribbon_removed_ms,\
lost_capacity_ms,trial_end_ms,unresolved_reason";

/// `summary.csv`'s header, as documented to users.
pub const SUMMARY_HEADER: &str =
    "instance,strategy,metric,trials,unresolved,min,p50,p90,p99,max,mean,unresolved_reasons";

/// The per-trial metrics that `summary.csv` summarises: the `trials.csv` columns from
/// `exposure_ms` on (t_stop_ms is an absolute time, not a metric of the departure).
pub const METRICS: [&str; 11] = [
    "exposure_ms",
    "dead_hits",
    "errors",
    "inflight_failed",
    "timeout_delay_ms",
    "last_dead_hit_ms",
    "server_removed_ms",
    "readonly_removed_ms",
    "client_removed_ms",
    "ribbon_removed_ms",
    "lost_capacity_ms",
];

/// A CSV file: the header and the records, every record as long as the header.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn parse(bytes: &[u8], name: &str) -> Table {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(bytes);
        let mut records = reader.records().map(|record| {
            let record = record.unwrap_or_else(|e| panic!("{name} is not valid CSV: {e}"));
            record.iter().map(str::to_string).collect::<Vec<_>>()
        });
        let header = records.next().unwrap_or_else(|| panic!("{name} is empty"));
        Table {
            name: name.to_string(),
            header,
            rows: records.collect(),
        }
    }

    /// The header as one comma-separated line.
    pub fn header_line(&self) -> String {
        self.header.join(",")
    }

    /// The index of a column; panics if the file has no such column.
    pub fn column(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{} has no column `{name}`", self.name))
    }

    /// The cells of one column, top to bottom.
    pub fn cells(&self, name: &str) -> Vec<&str> {
        let c = self.column(name);
        self.rows.iter().map(|row| row[c].as_str()).collect()
    }
}

fn number<T: std::str::FromStr>(cell: &str, column: &str) -> T
where
    T::Err: fmt::Debug,
{
    cell.parse()
        .unwrap_or_else(|e| panic!("`{cell}` in column {column} is not a number: {e:?}"))
}

/// An empty cell is "no value" (unresolved); anything else must be a number.
fn optional<T: std::str::FromStr>(cell: &str, column: &str) -> Option<T>
where
    T::Err: fmt::Debug,
{
    (!cell.is_empty()).then(|| number(cell, column))
}

/// One row of `trials.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialRow {
    pub trial: u64,
    pub seed: u64,
    pub instance: String,
    pub strategy: String,
    pub t_stop_ms: Option<u64>,
    pub exposure_ms: Option<i64>,
    pub dead_hits: u64,
    pub errors: u64,
    pub last_dead_hit_ms: Option<i64>,
    pub server_removed_ms: Option<i64>,
    pub readonly_removed_ms: Option<i64>,
    pub client_removed_ms: Option<i64>,
    pub ribbon_removed_ms: Option<i64>,
    /// When the trial ended (`duration-s`, or later when it waited for the news).
    pub trial_end_ms: u64,
    /// Why a removal cell is empty (`listed_at_end`, ...; `;`-joined), empty when none is.
    pub unresolved_reason: String,
}

impl TrialRow {
    pub fn all(table: &Table) -> Vec<TrialRow> {
        let col = |name: &str| table.column(name);
        let c = [
            col("trial"),
            col("seed"),
            col("instance"),
            col("strategy"),
            col("t_stop_ms"),
            col("exposure_ms"),
            col("dead_hits"),
            col("errors"),
            col("last_dead_hit_ms"),
            col("server_removed_ms"),
            col("readonly_removed_ms"),
            col("client_removed_ms"),
            col("ribbon_removed_ms"),
            col("unresolved_reason"),
            col("trial_end_ms"),
        ];
        table
            .rows
            .iter()
            .map(|r| TrialRow {
                trial: number(&r[c[0]], "trial"),
                seed: number(&r[c[1]], "seed"),
                instance: r[c[2]].clone(),
                strategy: r[c[3]].clone(),
                t_stop_ms: optional(&r[c[4]], "t_stop_ms"),
                exposure_ms: optional(&r[c[5]], "exposure_ms"),
                dead_hits: number(&r[c[6]], "dead_hits"),
                errors: number(&r[c[7]], "errors"),
                last_dead_hit_ms: optional(&r[c[8]], "last_dead_hit_ms"),
                server_removed_ms: optional(&r[c[9]], "server_removed_ms"),
                readonly_removed_ms: optional(&r[c[10]], "readonly_removed_ms"),
                client_removed_ms: optional(&r[c[11]], "client_removed_ms"),
                ribbon_removed_ms: optional(&r[c[12]], "ribbon_removed_ms"),
                unresolved_reason: r[c[13]].clone(),
                trial_end_ms: number(&r[c[14]], "trial_end_ms"),
            })
            .collect()
    }
}

/// One row of `summary.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub instance: String,
    pub strategy: String,
    pub metric: String,
    pub trials: u64,
    pub unresolved: u64,
    pub min: Option<i64>,
    pub p50: Option<i64>,
    pub p90: Option<i64>,
    pub p99: Option<i64>,
    pub max: Option<i64>,
    pub mean: Option<f64>,
    /// `unresolved` by reason: `listed_at_end=3;restarted=1`.
    pub unresolved_reasons: String,
}

impl SummaryRow {
    pub fn all(table: &Table) -> Vec<SummaryRow> {
        let col = |name: &str| table.column(name);
        let c = [
            col("instance"),
            col("strategy"),
            col("metric"),
            col("trials"),
            col("unresolved"),
            col("min"),
            col("p50"),
            col("p90"),
            col("p99"),
            col("max"),
            col("mean"),
            col("unresolved_reasons"),
        ];
        table
            .rows
            .iter()
            .map(|r| SummaryRow {
                instance: r[c[0]].clone(),
                strategy: r[c[1]].clone(),
                metric: r[c[2]].clone(),
                trials: number(&r[c[3]], "trials"),
                unresolved: number(&r[c[4]], "unresolved"),
                min: optional(&r[c[5]], "min"),
                p50: optional(&r[c[6]], "p50"),
                p90: optional(&r[c[7]], "p90"),
                p99: optional(&r[c[8]], "p99"),
                max: optional(&r[c[9]], "max"),
                mean: optional(&r[c[10]], "mean"),
                unresolved_reasons: r[c[11]].clone(),
            })
            .collect()
    }
}
