//! `trials.csv`, `callers.csv`, `servers.csv` and `summary.csv`.

use std::fmt::{Display, Write as _};
use std::io::Write;

use crate::eureka::Layout;
use crate::experiment::{CallerOutcome, TrialOutcome};
use crate::scenario::{Metric, Scenario};

use super::columns::{SUMMARY_STATS, cells, header};
use super::{SummaryRow, reasons_cell};

/// `trials.csv`: which trial and shutdown ([`TRIAL_KEYS`]), every [`Metric`] in
/// [`Metric::ALL`] order (each cell `ShutdownOutcome::value`, empty for "no value"), then
/// [`TRIAL_TAIL`]. `trial_end_ms` is when the trial ended: `duration-s`, or later when it waited
/// for the stopped instance to leave every view (up to `max-duration-s`). The last column,
/// `unresolved_reason`, says why any of `exposure_ms` and the four `*_removed_ms` cells is empty
/// (`experiment::Unresolved`, names joined by `;`); it is empty when they all have a value.
/// A metric is declared once, in `Metric` and `ShutdownOutcome::value`: its column follows.
pub const TRIALS_HEADER: [&str; 18] = trials_header();

/// The columns of `trials.csv` before the metrics.
pub const TRIAL_KEYS: [&str; 5] = ["trial", "seed", "instance", "strategy", "t_stop_ms"];
/// The columns of `trials.csv` after the metrics.
pub const TRIAL_TAIL: [&str; 2] = ["trial_end_ms", "unresolved_reason"];

const fn trials_header() -> [&'static str; 18] {
    let mut header = [""; 18];
    let mut i = 0;
    while i < TRIAL_KEYS.len() {
        header[i] = TRIAL_KEYS[i];
        i += 1;
    }
    let mut m = 0;
    while m < Metric::ALL.len() {
        header[i] = Metric::ALL[m].name();
        i += 1;
        m += 1;
    }
    let mut t = 0;
    while t < TRIAL_TAIL.len() {
        header[i] = TRIAL_TAIL[t];
        i += 1;
        t += 1;
    }
    assert!(i == 18, "TRIALS_HEADER's length is keys + metrics + tail");
    header
}

/// `callers.csv`: one row per trial, shutdown and caller of the instance's app (a process with a
/// route to it), what that caller saw: [`CALLER_KEYS`], then each metric of
/// [`CallerOutcome::METRICS`] (its exposure (its balancers), its dead hits, errors and last
/// dead hit, when its Eureka cache and its balancers dropped the instance, its lost capacity).
/// `server` is the Eureka server (peer) whose answer to its fetch finally dropped it from its
/// cache. Times in ms from the stop, as in `trials.csv`, whose columns aggregate these rows (the
/// longest exposure, the sum of dead hits and errors, the last removal, the sum of lost
/// capacity). A per-caller metric is declared once, in `CallerOutcome::METRICS` and
/// `CallerOutcome::value`: its column follows.
pub fn callers_header() -> Vec<&'static str> {
    CALLER_KEYS
        .into_iter()
        .chain(CallerOutcome::METRICS.map(Metric::name))
        .collect()
}

/// The columns of `callers.csv` before the metrics.
pub const CALLER_KEYS: [&str; 5] = ["trial", "seed", "instance", "caller", "server"];

/// `servers.csv`: one row per trial, shutdown and Eureka server (each `[[peer]]`, or the one
/// standalone server): when its registry stopped listing the instance UP and when its `GET
/// /apps` did. `trials.csv`'s `server_removed_ms` and `readonly_removed_ms` are the last of
/// these.
pub const SERVERS_HEADER: [&str; 6] = [
    "trial",
    "seed",
    "instance",
    "server",
    "server_removed_ms",
    "readonly_removed_ms",
];

/// The header of `summary.csv`: the statistics, then `unresolved_reasons` (the `unresolved`
/// trials by reason, `listed_at_end=3;restarted=1`).
pub fn summary_header() -> Vec<&'static str> {
    let mut header = header(&["instance", "strategy", "metric"], &SUMMARY_STATS);
    header.push("unresolved_reasons");
    header
}

/// One row per trial and shutdown; empty cells are "no value" (see docs/guide.md, "Reading the metrics").
pub fn write_trials_csv<W: Write>(
    out: W,
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(TRIALS_HEADER)?;
    let mut record = Record::default();
    for trial in outcomes {
        for (shutdown, outcome) in scenario.shutdowns.iter().zip(&trial.shutdowns) {
            record
                .cell(trial.trial)
                .cell(trial.seed)
                .cell(&shutdown.instance)
                .cell(shutdown.strategy.name())
                .opt(outcome.t_stop_ms);
            for metric in Metric::ALL {
                record.opt(outcome.value(metric));
            }
            record
                .cell(trial.end_ms)
                .joined(outcome.unresolved_reasons().iter().map(|r| r.name()), ";")
                .write(&mut writer)?;
        }
    }
    writer.flush()?;
    Ok(())
}

/// One row per trial, shutdown and caller of the instance's app ([`callers_header`]).
pub fn write_callers_csv<W: Write>(
    out: W,
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
) -> csv::Result<()> {
    let layout = Layout::new(scenario);
    let servers = scenario.servers();
    let process_name = |p: usize| layout.processes.get(p).map_or("?", |s| s.name.as_str());
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(callers_header())?;
    let mut record = Record::default();
    for trial in outcomes {
        for (shutdown, outcome) in scenario.shutdowns.iter().zip(&trial.shutdowns) {
            for caller in &outcome.callers {
                let server = caller.server.and_then(|k| servers.get(k.index()));
                record
                    .cell(trial.trial)
                    .cell(trial.seed)
                    .cell(&shutdown.instance)
                    .cell(process_name(caller.process))
                    .opt(server.map(|s| &s.name));
                for metric in CallerOutcome::METRICS {
                    record.opt(caller.value(metric));
                }
                record.write(&mut writer)?;
            }
        }
    }
    writer.flush()?;
    Ok(())
}

/// One row per trial, shutdown and Eureka server ([`SERVERS_HEADER`]).
pub fn write_servers_csv<W: Write>(
    out: W,
    scenario: &Scenario,
    outcomes: &[TrialOutcome],
) -> csv::Result<()> {
    let servers = scenario.servers();
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(SERVERS_HEADER)?;
    let mut record = Record::default();
    for trial in outcomes {
        for (shutdown, outcome) in scenario.shutdowns.iter().zip(&trial.shutdowns) {
            for (k, server) in outcome.servers.iter().enumerate() {
                record
                    .cell(trial.trial)
                    .cell(trial.seed)
                    .cell(&shutdown.instance)
                    .cell(servers.get(k).map_or("?", |s| s.name.as_str()))
                    .opt(server.server_removed_ms)
                    .opt(server.readonly_removed_ms)
                    .write(&mut writer)?;
            }
        }
    }
    writer.flush()?;
    Ok(())
}

/// One record's cells, written into one buffer that every record of a file reuses: no `String`
/// per cell (a 200-trial run writes some 5 000 cells).
#[derive(Default)]
struct Record {
    text: String,
    /// Where each cell ends in `text`.
    ends: Vec<usize>,
}

impl Record {
    /// Appends the cell `value`, as `to_string` writes it.
    fn cell(&mut self, value: impl Display) -> &mut Record {
        let _ = write!(self.text, "{value}");
        self.ends.push(self.text.len());
        self
    }

    /// Appends the cell `value`, empty for `None` (as `report::opt`).
    fn opt(&mut self, value: Option<impl Display>) -> &mut Record {
        match value {
            Some(value) => self.cell(value),
            None => self.cell(""),
        }
    }

    /// Appends the cell of `parts` joined by `separator`.
    fn joined<'a>(&mut self, parts: impl Iterator<Item = &'a str>, separator: &str) -> &mut Record {
        for (k, part) in parts.enumerate() {
            if k > 0 {
                self.text.push_str(separator);
            }
            self.text.push_str(part);
        }
        self.ends.push(self.text.len());
        self
    }

    /// Writes the record and empties it for the next one.
    fn write<W: Write>(&mut self, writer: &mut csv::Writer<W>) -> csv::Result<()> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        let cells = starts
            .zip(&self.ends)
            .map(|(from, &to)| &self.text[from..to]);
        let written = writer.write_record(cells);
        self.text.clear();
        self.ends.clear();
        written
    }
}

/// One row per shutdown and metric. The mean has one decimal so the file is byte-stable; a
/// percentile's cell is empty when no trial has a value or when too few have one for it (p50
/// needs 6, p90 29, p99 299; `experiment::intervals`).
pub fn write_summary_csv<W: Write>(out: W, rows: &[SummaryRow]) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(summary_header())?;
    for row in rows {
        let mut record = vec![
            row.instance.clone(),
            row.strategy.to_string(),
            row.metric.name().to_string(),
        ];
        record.extend(cells(&row.stats, &SUMMARY_STATS));
        record.push(reasons_cell(&row.unresolved_by));
        writer.write_record(&record)?;
    }
    writer.flush()?;
    Ok(())
}
