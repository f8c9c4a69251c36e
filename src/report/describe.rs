//! Words and figures shared by the reports of experiments over several scenarios (`compare`,
//! `sweep`): the settings that titles name, and statistics as people read them.

use crate::experiment::{ShutdownStats, Stats, needs_trials};
use crate::scenario::Metric;
use crate::scenario::Scenario;

/// A time in ms as seconds: whole seconds without decimals, others with up to three.
pub(super) fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        let text = format!("{:.3}", ms as f64 / 1000.0);
        format!("{} s", text.trim_end_matches('0'))
    }
}

/// The settings a title names, in a fixed order: `(what, words)`. Per-process settings are those
/// of the first app (lease) and the first caller (fetch, Ribbon refresh, rate).
pub(super) fn settings(scenario: &Scenario) -> Vec<(&'static str, String)> {
    let sim = &scenario.simulation;
    let server = &scenario.server;
    let instances: u32 = scenario.apps.iter().map(|a| a.instances).sum();
    let mut out = vec![
        ("release", sim.release.to_string()),
        ("trials", format!("{} trials", sim.trials)),
        ("seed", format!("seed {}", sim.seed)),
        (
            "fleet",
            format!(
                "{instances} instance(s), {} caller(s)",
                scenario.callers.len()
            ),
        ),
        (
            "eviction",
            format!("eviction every {}", seconds(server.eviction_interval_ms)),
        ),
        (
            "self-preservation",
            format!(
                "self-preservation {}",
                if server.enable_self_preservation {
                    "on"
                } else {
                    "off"
                }
            ),
        ),
        (
            "response cache",
            if server.use_read_only_response_cache {
                format!(
                    "read-only cache {}",
                    seconds(server.response_cache_update_interval_ms)
                )
            } else {
                "no read-only cache".to_string()
            },
        ),
    ];
    if let Some(app) = scenario.apps.first() {
        out.push((
            "lease",
            format!(
                "lease {} / {}",
                seconds(app.client.lease_renewal_interval_s * 1000),
                seconds(app.client.lease_expiration_duration_s * 1000)
            ),
        ));
    }
    if let Some(caller) = scenario.callers.first() {
        out.push((
            "fetch",
            format!(
                "fetch {}",
                seconds(caller.client.registry_fetch_interval_s * 1000)
            ),
        ));
        if let Some(target) = caller.calls.first() {
            let balancer = caller.balancer(&scenario.simulation.release);
            let text = match balancer.settings(caller, target) {
                (label, Some(ms)) => format!("{label} {}", seconds(ms)),
                (label, None) => label.to_string(),
            };
            out.push(("ribbon", text));
        }
        out.push(("rate", format!("{} req/s", caller.rate_per_s)));
    }
    for (i, shutdown) in scenario.shutdowns.iter().enumerate() {
        // A zone outage once, by its zone: its instances share the plan.
        if shutdown.zone.is_some()
            && scenario.shutdowns[..i]
                .iter()
                .any(|s| s.zone == shutdown.zone)
        {
            continue;
        }
        let who = match &shutdown.zone {
            Some(zone) => format!("zone {zone}"),
            None => shutdown.instance.clone(),
        };
        out.push((
            "shutdown",
            format!("{who} stopped at {}", seconds(shutdown.at_ms)),
        ));
        let how = if shutdown.strategy.waits() {
            format!(
                "with {} (wait {})",
                shutdown.strategy.name(),
                seconds(shutdown.wait_ms)
            )
        } else {
            format!("with {}", shutdown.strategy.name())
        };
        out.push(("strategy", how));
    }
    out
}

/// The settings that every scenario shares, joined with commas; a setting that differs between
/// them (the compared strategy, a swept key) is left out: the plot or table shows it.
pub(super) fn common_settings<'a>(scenarios: impl IntoIterator<Item = &'a Scenario>) -> String {
    let all: Vec<Vec<(&'static str, String)>> = scenarios.into_iter().map(settings).collect();
    let Some(first) = all.first() else {
        return String::new();
    };
    first
        .iter()
        .enumerate()
        .filter(|(i, entry)| all.iter().all(|s| s.get(*i) == Some(*entry)))
        .map(|(_, (_, words))| words.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--set` overrides as a title fragment: empty without any.
pub(super) fn with_set(set: &[String]) -> String {
    if set.is_empty() {
        String::new()
    } else {
        format!("; --set {}", set.join(" --set "))
    }
}

/// Whether an empty value of `metric` means "not yet when the trial ended" (the instance was
/// still listed somewhere), which is later than any value, rather than "there is none" (no dead
/// hit at all).
pub(super) fn empty_means_never(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::ExposureMs
            | Metric::ServerRemovedMs
            | Metric::ReadonlyRemovedMs
            | Metric::ClientRemovedMs
            | Metric::RibbonRemovedMs
    )
}

/// A statistic as shown to people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    Value(i64),
    /// It falls on trials that had not resolved when they ended.
    Never,
    /// No trial has a value (e.g. no dead hit at all).
    Missing,
    /// Too few trials for this percentile: it needs this many (`experiment::intervals`).
    NeedsTrials(usize),
}

/// The nearest-rank percentile `p` of `metric` over *all* the trials: for the metrics whose empty
/// value means "not yet at the end" (see [`empty_means_never`]), those trials count as later than
/// every value, so a percentile that falls on them is [`Shown::Never`] rather than a figure of
/// the resolved trials only (which `summary.csv` and `compare.csv` hold, with their count in
/// `unresolved`). Equal to `Stats::percentile` when every trial resolved. Either way, a
/// percentile the trials it is over cannot support is [`Shown::NeedsTrials`], never a figure.
pub(super) fn percentile_shown(metric: Metric, stats: &Stats, p: f64) -> Shown {
    if !empty_means_never(metric) || stats.unresolved == 0 {
        return percentile_of_values(stats, p);
    }
    if stats.trials == 0 {
        return Shown::Missing;
    }
    if let Some(needed) = needs_trials(stats.trials, p) {
        return Shown::NeedsTrials(needed);
    }
    // The same rank as `experiment::percentile`, over all the trials.
    let rank = (p * stats.trials as f64 / 100.0 - 1e-9).ceil() as usize;
    let rank = rank.clamp(1, stats.trials);
    match stats.sorted.get(rank - 1) {
        Some(&v) => Shown::Value(v),
        None => Shown::Never,
    }
}

/// The nearest-rank percentile `p` over the trials that have a value (as in `summary.csv`):
/// [`Shown::NeedsTrials`] when they are too few for it, [`Shown::Missing`] when there are none.
pub(super) fn percentile_of_values(stats: &Stats, p: f64) -> Shown {
    if stats.sorted.is_empty() {
        return Shown::Missing;
    }
    if let Some(needed) = stats.needs_trials(p) {
        return Shown::NeedsTrials(needed);
    }
    stats.percentile(p).map_or(Shown::Missing, Shown::Value)
}

/// The largest value, [`Shown::Never`] when a trial had not resolved (for the metrics where that
/// is later than any value).
pub(super) fn max_shown(metric: Metric, stats: &Stats) -> Shown {
    if empty_means_never(metric) && stats.unresolved > 0 {
        Shown::Never
    } else {
        stats.max.map_or(Shown::Missing, Shown::Value)
    }
}

impl Shown {
    /// Times in seconds with one decimal (no unit), counts as integers.
    pub(super) fn text(self, metric: Metric) -> String {
        match self {
            Shown::Value(v) if metric.is_time() => tenths(v as f64 / 1000.0),
            Shown::Value(v) => v.to_string(),
            Shown::Never => "never".to_string(),
            Shown::Missing => "-".to_string(),
            Shown::NeedsTrials(n) => needs_cell(n),
        }
    }

    /// The value in the unit people read (seconds for times), `None` unless there is one.
    pub(super) fn number(self, metric: Metric) -> Option<f64> {
        match self {
            Shown::Value(v) if metric.is_time() => Some(v as f64 / 1000.0),
            Shown::Value(v) => Some(v as f64),
            _ => None,
        }
    }
}

/// A table cell for a percentile its trials cannot support: `n<299` (fewer trials than the 299
/// it needs). Every table that shows one says so in [`NEEDS_NOTE`].
pub(super) fn needs_cell(needed: usize) -> String {
    if needed == usize::MAX {
        "n/a".to_string()
    } else {
        format!("n<{needed}")
    }
}

/// What an `n<N` cell means.
pub(super) const NEEDS_NOTE: &str = "\"n<N\": too few trials for this percentile, which needs N \
     (the fewest from which a 95 % order-statistic interval of it exists: p50 6, p90 29, p99 299, \
     p99.9 2995)";

/// Which footnotes a table of [`Shown`] cells needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Footnotes {
    /// A cell shows "never".
    pub never: bool,
    /// A cell shows `n<N`.
    pub needs: bool,
}

impl Footnotes {
    /// Notes that `shown` is in the table.
    pub(super) fn add(&mut self, shown: Shown) {
        self.never |= shown == Shown::Never;
        self.needs |= matches!(shown, Shown::NeedsTrials(_));
    }

    pub(super) fn merge(&mut self, other: Footnotes) {
        self.never |= other.never;
        self.needs |= other.needs;
    }

    /// The notes, `never_note` for "never", without a final period.
    pub(super) fn lines(self, never_note: &'static str) -> Vec<&'static str> {
        let mut lines = Vec::new();
        if self.never {
            lines.push(never_note);
        }
        if self.needs {
            lines.push(NEEDS_NOTE);
        }
        lines
    }
}

/// `x` with one decimal, never "-0.0" (a value of -40 ms is 0.0 s to one decimal, not "-0").
pub(super) fn tenths(x: f64) -> String {
    let text = format!("{x:.1}");
    if text == "-0.0" {
        "0.0".to_string()
    } else {
        text
    }
}

/// The mean for people: seconds with one decimal for times, one decimal for counts.
pub(super) fn mean_text(metric: Metric, stats: &Stats) -> String {
    match stats.mean {
        None => "-".to_string(),
        Some(m) if metric.is_time() => tenths(m / 1000.0),
        Some(m) => tenths(m),
    }
}

/// A share of the trials as a percentage with one decimal.
pub(super) fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// A metric's label with its unit, for row and column heads, naming the callers' `balancer`
/// ([`Scenario::balancer_name`]).
pub(super) fn label_with_unit(metric: Metric, balancer: &str) -> String {
    let label = metric.label().replace("Ribbon", balancer);
    // Lost capacity is in instance-seconds, a unit its label already names.
    if metric.is_time() && !label.ends_with(')') {
        format!("{label} (s)")
    } else {
        label
    }
}

/// Plain-text table: the first `left` columns left-aligned, the others right-aligned, two spaces
/// apart, every line indented by two spaces and without trailing blanks.
pub(super) fn text_table(header: &[String], rows: &[Vec<String>], left: usize) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::from("  ");
        for (i, cell) in cells.iter().enumerate().take(columns) {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if i < left {
                out.push_str(cell);
                out.push_str(&pad);
            } else {
                out.push_str(&pad);
                out.push_str(cell);
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// "never" in a percentile cell.
pub(super) const NEVER_NOTE: &str = "\"never\": the percentile falls on trials in which the \
                                     instance was still listed at max-duration-s (they count as \
                                     later than any value)";

/// The trials without a value of `metric` in shutdown `shutdown` among `rows`, with their
/// reasons when there are any: `20 (self_preservation)`, `3 (restarted 1, self_preservation 2)`.
pub(super) fn unresolved_cell(rows: &[ShutdownStats], shutdown: usize, metric: Metric) -> String {
    let Some(row) = rows
        .iter()
        .find(|r| r.shutdown == shutdown && r.metric == metric)
    else {
        return "-".to_string();
    };
    let n = row.stats.unresolved;
    match row.unresolved_by.as_slice() {
        [] => n.to_string(),
        [(reason, _)] => format!("{n} ({})", reason.name()),
        many => {
            let parts: Vec<String> = many
                .iter()
                .map(|(reason, k)| format!("{} {k}", reason.name()))
                .collect();
            format!("{n} ({})", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::Holding;
    use crate::experiment::Unresolved;

    /// The unresolved cell of compare and sweep: the count, then the reasons (one named, several
    /// with their counts), "-" for a metric without a row.
    #[test]
    fn unresolved_cells_name_their_reasons() {
        let row = |by: Vec<(Unresolved, usize)>| ShutdownStats {
            shutdown: 0,
            instance: "svc-0".into(),
            metric: Metric::ExposureMs,
            stats: Stats::of(
                [Some(1)]
                    .into_iter()
                    .chain(vec![None; by.iter().map(|b| b.1).sum()]),
            ),
            unresolved_by: by,
        };
        let m = Metric::ExposureMs;
        assert_eq!(unresolved_cell(&[row(vec![])], 0, m), "0");
        let held = Unresolved::Held(Holding::SelfPreservation);
        assert_eq!(
            unresolved_cell(&[row(vec![(held, 20)])], 0, m),
            "20 (self_preservation)"
        );
        let both = row(vec![(Unresolved::Restarted, 1), (held, 2)]);
        assert_eq!(
            unresolved_cell(&[both], 0, m),
            "3 (restarted 1, self_preservation 2)"
        );
        assert_eq!(unresolved_cell(&[row(vec![])], 1, m), "-");
    }

    #[test]
    fn percentiles_count_unresolved_trials_as_never() {
        // 10 trials, 8 resolved (1..=8 s), 2 still listed at the end.
        let stats = Stats::of((1..=8).map(|s| Some(s * 1000)).chain([None, None]));
        let m = Metric::ExposureMs;
        assert_eq!(percentile_shown(m, &stats, 50.0), Shown::Value(5000));
        assert_eq!(percentile_shown(m, &stats, 90.0), Shown::NeedsTrials(29));
        assert_eq!(max_shown(m, &stats), Shown::Never);
        // 40 trials, 4 of them still listed: p90 (rank 36) is the last resolved one, p95 (rank
        // 38) falls on the unresolved ones.
        let stats = Stats::of((1..=36).map(|s| Some(s * 1000)).chain([None; 4]));
        assert_eq!(percentile_shown(m, &stats, 90.0), Shown::Value(36_000));
        assert_eq!(percentile_shown(m, &stats, 95.0), Shown::NeedsTrials(59));
        assert_eq!(percentile_shown(m, &stats, 92.5), Shown::Never);
        // No dead hit is not "later": the last dead hit uses the resolved trials only.
        let m = Metric::LastDeadHitMs;
        assert_eq!(percentile_shown(m, &stats, 90.0), Shown::Value(33_000));
        assert_eq!(max_shown(m, &stats), Shown::Value(36_000));
        // Every trial resolved: the same as the CSV's figures, where the trials support them.
        let all = Stats::of((1..=300).map(Some));
        for p in [50.0, 90.0, 99.0] {
            assert_eq!(
                percentile_shown(Metric::ExposureMs, &all, p),
                Shown::Value(all.percentile(p).unwrap())
            );
        }
        assert_eq!(
            percentile_shown(Metric::ExposureMs, &all, 99.9),
            Shown::NeedsTrials(2995)
        );
        assert_eq!(Shown::NeedsTrials(299).text(Metric::ExposureMs), "n<299");
        assert_eq!(Shown::Value(1234).text(Metric::ExposureMs), "1.2");
        assert_eq!(Shown::Value(12).text(Metric::DeadHits), "12");
        assert_eq!(Shown::Never.text(Metric::ExposureMs), "never");
        assert_eq!(Shown::Value(-40).text(Metric::ExposureMs), "0.0");
        assert_eq!(Shown::Value(-60).text(Metric::ExposureMs), "-0.1");
    }

    #[test]
    fn seconds_drop_needless_decimals() {
        assert_eq!(seconds(30_000), "30 s");
        assert_eq!(seconds(2_500), "2.5 s");
        assert_eq!(seconds(1), "0.001 s");
    }

    #[test]
    fn text_tables_align_and_trim() {
        let header = ["".to_string(), "a".to_string(), "long head".to_string()];
        let rows = vec![
            vec!["row".to_string(), "1".to_string(), "2".to_string()],
            vec!["longer row".to_string(), "333".to_string(), String::new()],
        ];
        assert_eq!(
            text_table(&header, &rows, 1),
            "                a  long head\n  row           1          2\n  longer row  333\n"
        );
    }
}
