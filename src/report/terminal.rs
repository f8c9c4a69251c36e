//! The summary printed after `run`.

use std::fmt::Write;

use crate::experiment::{ShutdownOutcome, Stats, TrialOutcome, Unresolved, news_by_server};
use crate::scenario::Metric;
use crate::scenario::Scenario;

use super::SummaryRow;
use super::describe::{Footnotes, NEEDS_NOTE, Shown, needs_cell, percentile_of_values};

/// Formats a metric value: seconds with one decimal for times, plain integers for counts.
fn cell(metric: Metric, value: Option<i64>) -> String {
    match value {
        None => "-".to_string(),
        Some(v) if metric.is_time() => format!("{:.1}s", v as f64 / 1000.0),
        Some(v) => v.to_string(),
    }
}

/// A percentile over the trials that have a value, or `n<N` when they are too few for it.
fn percentile_cell(metric: Metric, stats: &Stats, p: f64, notes: &mut Footnotes) -> String {
    let shown = percentile_of_values(stats, p);
    notes.add(shown);
    match shown {
        Shown::Value(v) => cell(metric, Some(v)),
        Shown::NeedsTrials(n) => needs_cell(n),
        Shown::Never | Shown::Missing => "-".to_string(),
    }
}

fn mean_cell(metric: Metric, stats: &Stats) -> String {
    match stats.mean {
        None => "-".to_string(),
        Some(m) if metric.is_time() => format!("{:.1}s", m / 1000.0),
        Some(m) => format!("{m:.1}"),
    }
}

/// The whole human summary of a run.
pub fn render_summary(
    scenario: &Scenario,
    source: &str,
    outcomes: &[TrialOutcome],
    rows: &[SummaryRow],
) -> String {
    let mut out = String::new();
    let sim = &scenario.simulation;
    let instances: u32 = scenario.apps.iter().map(|a| a.instances).sum();
    let _ = writeln!(
        out,
        "{source}: {} trial(s), seed {}, {}, {} app instance(s), {} caller(s)",
        outcomes.len(),
        sim.seed,
        sim.release,
        instances,
        scenario.callers.len()
    );
    for (s, shutdown) in scenario.shutdowns.iter().enumerate() {
        let wait = if shutdown.strategy.waits() {
            format!(", wait {} s", shutdown.wait_ms as f64 / 1000.0)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "\n{} stopped with {} at {} s{wait} (times are relative to when it stopped serving)",
            shutdown.instance,
            shutdown.strategy.name(),
            shutdown.at_ms as f64 / 1000.0
        );
        let balancer = scenario.balancer_name();
        let label = |m: Metric| m.label().replace("Ribbon", balancer);
        let w = rows
            .iter()
            .map(|r| label(r.metric).len() + 1)
            .max()
            .unwrap_or(0)
            .max(26);
        let _ = writeln!(
            out,
            "  {:<w$}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>12}",
            "", "min", "p50", "p90", "p99", "max", "mean", "unresolved"
        );
        let mut notes = Footnotes::default();
        for row in rows.iter().filter(|r| r.shutdown == s) {
            let st = &row.stats;
            let m = row.metric;
            let _ = writeln!(
                out,
                "  {:<w$}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>12}",
                label(m),
                cell(m, st.min),
                percentile_cell(m, st, 50.0, &mut notes),
                percentile_cell(m, st, 90.0, &mut notes),
                percentile_cell(m, st, 99.0, &mut notes),
                cell(m, st.max),
                mean_cell(m, st),
                st.unresolved
            );
        }
        if notes.needs {
            let _ = writeln!(out, "  {NEEDS_NOTE}");
        }
        out.push_str(&unresolved_line(s, outcomes));
        out.push_str(&intervals(rows.iter().filter(|r| r.shutdown == s)));
        out.push_str(&where_the_news_waited(s, outcomes, balancer));
        out.push_str(&per_peer(scenario, s, outcomes));
    }
    out.push_str(&waited_line(scenario, outcomes));
    out
}

/// `3 of 200 trial(s) ran past duration-s (900 s) waiting for the stopped instance to leave
/// every view: 2 saw it by 1153.2 s at the latest, 1 reached max-duration-s (87300 s) with it
/// still listed (why: unresolved_reason)`; empty when every trial ended at duration-s.
fn waited_line(scenario: &Scenario, outcomes: &[TrialOutcome]) -> String {
    let sim = &scenario.simulation;
    // Still listed at the end (a trial whose news came exactly at the cap is not).
    let held = |o: &TrialOutcome| {
        o.shutdowns.iter().any(|s| {
            s.unresolved_reasons()
                .iter()
                .any(|r| matches!(r, Unresolved::Held(_) | Unresolved::ListedAtEnd))
        })
    };
    let past: Vec<(u64, bool)> = outcomes
        .iter()
        .filter(|o| o.end_ms > sim.duration_ms)
        .map(|o| (o.end_ms, held(o)))
        .collect();
    if past.is_empty() {
        return String::new();
    }
    let capped = past.iter().filter(|&&(_, held)| held).count();
    let mut parts = Vec::new();
    let saw = past.iter().filter(|&&(_, held)| !held).map(|&(end, _)| end);
    if let Some(latest) = saw.max() {
        parts.push(format!(
            "{} saw it leave by {:.1} s at the latest",
            past.len() - capped,
            latest as f64 / 1000.0
        ));
    }
    if capped > 0 {
        parts.push(format!(
            "{capped} reached max-duration-s ({} s) with it still listed (why: \
             unresolved_reason)",
            sim.max_duration_ms as f64 / 1000.0
        ));
    }
    format!(
        "\n{} of {} trial(s) ran past duration-s ({} s) waiting for the stopped instance to leave \
         every view: {}\n",
        past.len(),
        outcomes.len(),
        sim.duration_ms as f64 / 1000.0,
        parts.join(", ")
    )
}

/// The exposure over the trials: its mean with the mean's 95 % t-interval, the highest
/// percentile the trials support with its 95 % order-statistic interval, what a higher one
/// needs; and the share of clean trials.
fn intervals<'a>(rows: impl Iterator<Item = &'a SummaryRow>) -> String {
    let mut out = String::new();
    for row in rows {
        let st = &row.stats;
        match row.metric {
            Metric::ExposureMs => {
                if let Some(text) = exposure_line(st) {
                    let _ = writeln!(out, "  {text}");
                }
            }
            Metric::DeadHits => {
                let _ = writeln!(
                    out,
                    "  no dead hit in {:.1} % of {} trial(s)",
                    st.zero_share * 100.0,
                    st.trials
                );
            }
            _ => {}
        }
    }
    out
}

/// `exposure over 200 trial(s): mean 243.5s (95 % t-interval 240.1 .. 247.0s); p95 287.9s
/// (95 % order-statistic CI 281.0 .. 293.1s); p99 needs at least 299 trials, p99.9 2995`.
fn exposure_line(st: &Stats) -> Option<String> {
    let n = st.sorted.len();
    let s = |ms: f64| format!("{:.1}s", ms / 1000.0);
    let mean = st.mean?;
    let mean = match st.mean_ci95 {
        Some((lo, hi)) => format!(
            "mean {} (95 % t-interval {:.1} .. {})",
            s(mean),
            lo / 1000.0,
            s(hi)
        ),
        None => format!("mean {} (no interval: it needs at least 2 trials)", s(mean)),
    };
    let mut parts = vec![mean];
    let levels = [50.0, 90.0, 95.0, 99.0, 99.9];
    let supported = levels.iter().rev().find(|&&p| st.needs_trials(p).is_none());
    if let Some(&p) = supported
        && let (Some(v), Some((lo, hi))) = (st.percentile(p), st.percentile_ci95(p))
    {
        parts.push(format!(
            "p{p} {} (95 % order-statistic CI {:.1} .. {})",
            s(v as f64),
            lo as f64 / 1000.0,
            s(hi as f64)
        ));
    }
    let needs: Vec<String> = levels
        .iter()
        .filter_map(|&p| st.needs_trials(p).map(|k| (p, k)))
        .enumerate()
        .map(|(i, (p, k))| {
            if i == 0 {
                format!("p{p} needs at least {k} trials")
            } else {
                format!("p{p} {k}")
            }
        })
        .collect();
    if !needs.is_empty() {
        parts.push(needs.join(", "));
    }
    let unresolved = if st.unresolved > 0 {
        format!(" ({} unresolved left out)", st.unresolved)
    } else {
        String::new()
    };
    Some(format!(
        "exposure over {n} trial(s){unresolved}: {}",
        parts.join("; ")
    ))
}

/// `unresolved trials (no exposure or removal time): 3 still listed at the end, 1 restarted
/// while still listed`; empty when every trial resolved. A trial counts once per reason it has.
fn unresolved_line(s: usize, outcomes: &[TrialOutcome]) -> String {
    let parts: Vec<String> = Unresolved::ALL
        .into_iter()
        .filter_map(|reason| {
            let n = outcomes
                .iter()
                .filter_map(|o| o.shutdowns.get(s))
                .filter(|o| o.has_unresolved_reason(reason))
                .count();
            (n > 0).then(|| format!("{n} {}", reason.label()))
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "  unresolved trials (an exposure or removal time is empty): {}\n",
        parts.join(", ")
    )
}

/// With several peers: each peer's mean removals (`servers.csv`) and, per caller, whose answers
/// brought the news; empty for a standalone server.
fn per_peer(scenario: &Scenario, s: usize, outcomes: &[TrialOutcome]) -> String {
    let servers = scenario.servers();
    if servers.len() < 2 {
        return String::new();
    }
    let shutdowns: Vec<_> = outcomes.iter().filter_map(|o| o.shutdowns.get(s)).collect();
    let mean = |values: Vec<Option<i64>>| {
        let known: Vec<i64> = values.into_iter().flatten().collect();
        if known.is_empty() {
            "-".to_string()
        } else {
            let m = known.iter().sum::<i64>() as f64 / known.len() as f64;
            format!("{:.1}s", (m / 100.0).round() / 10.0 + 0.0)
        }
    };
    let peers: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(k, peer)| {
            let registry = shutdowns
                .iter()
                .map(|o| o.servers.get(k).and_then(|v| v.server_removed_ms))
                .collect();
            let served = shutdowns
                .iter()
                .map(|o| o.servers.get(k).and_then(|v| v.readonly_removed_ms))
                .collect();
            format!(
                "{} registry {}, read-only cache {}",
                peer.name,
                mean(registry),
                mean(served)
            )
        })
        .collect();
    let layout = crate::eureka::Layout::new(scenario);
    let callers: Vec<String> = shutdowns
        .first()
        .map(|o| o.callers.iter().map(|c| c.process).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(c, process)| {
            let by_peer: Vec<String> = servers
                .iter()
                .zip(news_by_server(&shutdowns, c, servers.len()))
                .map(|(peer, n)| format!("{} {n}", peer.name))
                .collect();
            let name = layout
                .processes
                .get(process)
                .map_or("?", |p| p.name.as_str());
            format!("{name} ({})", by_peer.join(", "))
        })
        .collect();
    format!(
        "  per peer (mean over the trials that have it): {}\n  whose answer dropped it from \
         each caller's cache (trials): {}\n",
        peers.join("; "),
        callers.join("; ")
    )
}

/// The path the news of a shutdown took in one trial to the caller whose balancer dropped the
/// instance last, cut into its four waits in ms: from the stop to the registry of the server
/// that caller's Eureka cache last heard it from
/// ([`CallerOutcome::server`](crate::experiment::CallerOutcome::server)), on to the same
/// server's read-only cache, on to the caller's Eureka cache, on to its balancer. The waits sum
/// to the trial's `ribbon_removed_ms` (the last balancer's removal).
///
/// Each layer drops the instance after the one before it on the path: a server's read-only
/// cache after its registry (`ResponseCacheImpl`'s fill reads the registry), a caller's cache
/// after the server's answer it applied (`DiscoveryClient#fetchRegistry`). A balancer reads
/// its caller's cache, but a health-checking one can drop a dead instance before the cache
/// does (`HealthCheckServiceInstanceListSupplier`): a wait is counted only up to the balancer's
/// removal, so none is negative but the first, which is when the registry knew before the
/// instance stopped serving (a deregistration ahead of the stop).
///
/// On a cluster the peers drop an instance at different times and a caller hears it from one
/// of them, so a server's and a caller's times are steps of one path only when that caller
/// read that server: the latest removal of each layer across all peers and callers mixes paths
/// (a peer nobody read that dropped the instance late made the "client fetch" wait negative).
///
/// `None` when the trial has no such path: the instance is still listed somewhere, the last
/// balancer's caller heard nothing from a server (it stopped with its zone), or that server has
/// no removal of its own (it went down listing the instance).
pub fn news_path(o: &ShutdownOutcome) -> Option<[i64; 4]> {
    let total = o.ribbon_removed_ms?;
    let caller = o
        .callers
        .iter()
        .find(|c| c.ribbon_removed_ms == Some(total) && c.server.is_some())?;
    let server = o.servers.get(caller.server?.index())?;
    let registry = server.server_removed_ms?.min(total);
    let served = server.readonly_removed_ms?.clamp(registry, total);
    let cache = caller.client_removed_ms?.clamp(served, total);
    Some([registry, served - registry, cache - served, total - cache])
}

/// Mean time the news spent at each layer of shutdown `s` (the registry, the read-only cache,
/// the callers' fetch, the balancer's refresh, in ms) along its path to the last balancer
/// ([`news_path`]), over the trials that have that path, and how many those are; `None` when
/// none does. The terminal's "where the news waited" and the tuning page's stage bars.
pub fn stage_means(s: usize, outcomes: &[TrialOutcome]) -> Option<(usize, [f64; 4])> {
    let mut sums = [0f64; 4];
    let mut n = 0usize;
    for trial in outcomes {
        let Some(path) = trial.shutdowns.get(s).and_then(news_path) else {
            continue;
        };
        n += 1;
        for (sum, v) in sums.iter_mut().zip(path) {
            *sum += v as f64;
        }
    }
    (n > 0).then(|| (n, sums.map(|sum| sum / n as f64)))
}

/// The stages of [`stage_means`] by name, the last after the callers' balancer.
pub fn stage_names(balancer: &str) -> [String; 4] {
    [
        "registry".to_string(),
        "read-only cache".to_string(),
        "client fetch".to_string(),
        format!("{balancer} refresh"),
    ]
}

/// Mean time the news spent at each layer, over trials where every stage resolved.
fn where_the_news_waited(s: usize, outcomes: &[TrialOutcome], balancer: &str) -> String {
    let mut out = String::new();
    if let Some((n, mean_ms)) = stage_means(s, outcomes) {
        let names = stage_names(balancer);
        // Rounded to 0.1 s here so that a tiny negative mean does not print as "-0.0s".
        let means: Vec<f64> = mean_ms
            .iter()
            .map(|m| (m / 100.0).round() / 10.0 + 0.0)
            .collect();
        let parts: Vec<String> = names
            .iter()
            .zip(&means)
            .map(|(name, m)| format!("{name} {m:.1}s"))
            .collect();
        let _ = writeln!(
            out,
            "  where the news waited (mean over {n} trial(s)): {}",
            parts.join(" -> ")
        );
        let (worst, _) = names
            .iter()
            .zip(&means)
            .fold(
                ("", f64::MIN),
                |acc, (name, m)| if *m > acc.1 { (name, *m) } else { acc },
            );
        let _ = writeln!(
            out,
            "  the longest wait was in the {worst}{}",
            if means[0] < 0.0 {
                " (the registry knew before the instance stopped)"
            } else {
                ""
            }
        );
    }
    out
}

/// The terminal lines of a deploy summary.
pub fn render_deploy(s: &crate::experiment::deploy_metrics::DeploySummary) -> String {
    let secs = |ms: u64| ms as f64 / 1000.0;
    let exposure = s
        .longest_exposure_ms_max
        .map_or("unresolved".to_string(), |ms| {
            format!("{:.1} s", ms as f64 / 1000.0)
        });
    format!(
        "deploy of {app} ({n} trials):\n  dead hits mean {dh:.1}, max {dhm}; errors mean {em:.1}, \
         max {emx}; empty-list requests max {ns}\n  longest exposure of an old instance: \
         {exposure} (trials with an instance still listed at the end: {un})\n  caller capacity \
         dips (a caller's list has no serving instance): {cd} trial(s), longest {cl:.1} s\n  \
         registry capacity dips (no UP instance of the app): {rd} trial(s), longest total \
         {rl:.1} s\n",
        app = s.app,
        n = s.trials,
        dh = s.dead_hits_mean,
        dhm = s.dead_hits_max,
        em = s.errors_mean,
        emx = s.errors_max,
        ns = s.no_server_max,
        un = s.unresolved_trials,
        cd = s.trials_with_caller_dip,
        cl = secs(s.longest_caller_dip_ms_max),
        rd = s.trials_with_registry_dip,
        rl = secs(s.registry_dip_ms_max),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::ids::ServerId;
    use crate::experiment::{CallerOutcome, ServerOutcome, run_trials};
    use crate::scenario::fixture::bundled;

    /// One trial of one shutdown, ms from the stop.
    fn trial(o: ShutdownOutcome) -> TrialOutcome {
        TrialOutcome {
            trial: 0,
            seed: 1,
            shutdowns: vec![o],
            deploys: Vec::new(),
            events: 0,
            end_ms: 0,
            dead_hit_spans: Vec::new(),
            over_event_limit: None,
        }
    }

    fn peer(registry: i64, served: i64) -> ServerOutcome {
        ServerOutcome {
            server_removed_ms: Some(registry),
            readonly_removed_ms: Some(served),
        }
    }

    fn caller(process: usize, server: u32, cache: i64, balancer: i64) -> CallerOutcome {
        CallerOutcome {
            process,
            server: Some(ServerId(server)),
            client_removed_ms: Some(cache),
            ribbon_removed_ms: Some(balancer),
            ..CallerOutcome::default()
        }
    }

    /// A kill -9 on three peers, by hand: b evicts the lease at 95.0 s and replicates the
    /// cancel, which a applies at 95.5 s and c at 95.6 s; their read-only caches fill on their
    /// own phases, a at 110 s, b at 120 s, c at 125 s. Caller 7 reads a at 118 s and its Ribbon
    /// list drops the instance at 130 s, the last of the two; caller 8 reads b at 121 s, its
    /// list at 128 s. The latest removal of each layer is 95.6 s (c's registry), 125 s (c's
    /// cache, which nobody read), 121 s (caller 8's cache) and 130 s: the "client fetch" wait
    /// came out 121 - 125 = -4 s. The path to the last list is a's: 95.5 s in a's registry,
    /// 110 - 95.5 = 14.5 s in a's read-only cache, 118 - 110 = 8 s to caller 7's fetch, 130 -
    /// 118 = 12 s to its list, 130 s in all.
    #[test]
    fn the_news_waits_along_the_path_to_the_last_list_on_three_peers() {
        let o = ShutdownOutcome {
            t_stop_ms: Some(300_000),
            server_removed_ms: Some(95_600),
            readonly_removed_ms: Some(125_000),
            client_removed_ms: Some(121_000),
            ribbon_removed_ms: Some(130_000),
            servers: vec![
                peer(95_500, 110_000),
                peer(95_000, 120_000),
                peer(95_600, 125_000),
            ],
            callers: vec![
                caller(7, 0, 118_000, 130_000),
                caller(8, 1, 121_000, 128_000),
            ],
            ..ShutdownOutcome::default()
        };
        assert_eq!(news_path(&o), Some([95_500, 14_500, 8_000, 12_000]));
        let (n, means) = stage_means(0, &[trial(o)]).unwrap();
        assert_eq!((n, means), (1, [95_500.0, 14_500.0, 8_000.0, 12_000.0]));
    }

    /// A health-checking balancer that drops the dead instance at 20 s, before the registry
    /// (95 s) and the caller's cache (118 s) do: the news did not reach it through Eureka, so
    /// each Eureka wait counts up to 20 s only: 20 s in the registry, nothing after.
    #[test]
    fn a_balancer_ahead_of_its_cache_ends_the_path() {
        let o = ShutdownOutcome {
            ribbon_removed_ms: Some(20_000),
            servers: vec![peer(95_000, 110_000)],
            callers: vec![caller(3, 0, 118_000, 20_000)],
            ..ShutdownOutcome::default()
        };
        assert_eq!(news_path(&o), Some([20_000, 0, 0, 0]));
    }

    /// A caller that stopped with its zone heard nothing from a server: no path.
    #[test]
    fn a_caller_that_heard_from_no_server_has_no_path() {
        let mut stopped = caller(3, 0, 0, 0);
        stopped.server = None;
        let o = ShutdownOutcome {
            ribbon_removed_ms: Some(0),
            servers: vec![peer(95_000, 110_000)],
            callers: vec![stopped],
            ..ShutdownOutcome::default()
        };
        assert_eq!(news_path(&o), None);
    }

    /// On the bundled three-peer cluster (Ribbon, no health check) every trial's path to the
    /// last list passes the layers in order, each no earlier than the one before, as the rules
    /// say (a cache fills from its registry, a caller applies a server's answer, Ribbon reads
    /// the cache): so no clamping happens, every wait after the first is non-negative and the
    /// four sum to the trial's last removal from a list.
    #[test]
    fn on_three_peers_every_wait_is_non_negative_and_they_sum_to_the_last_removal() {
        let scenario = bundled(
            "cluster/three-peers-two-zones",
            &["simulation.trials=40".to_string()],
        );
        let outcomes = run_trials(&scenario);
        let mut paths = 0;
        for t in &outcomes {
            let o = &t.shutdowns[0];
            let Some(path) = news_path(o) else {
                continue;
            };
            paths += 1;
            let total = o.ribbon_removed_ms.unwrap();
            assert_eq!(path.iter().sum::<i64>(), total, "trial {}", t.trial);
            assert!(
                path[1..].iter().all(|&w| w >= 0),
                "trial {}: {path:?}",
                t.trial
            );
            // The path's own times, unclamped, are in order.
            let c = o
                .callers
                .iter()
                .find(|c| c.ribbon_removed_ms == Some(total) && c.server.is_some())
                .unwrap();
            let k = c.server.unwrap().index();
            let times = [
                o.servers[k].server_removed_ms.unwrap(),
                o.servers[k].readonly_removed_ms.unwrap(),
                c.client_removed_ms.unwrap(),
                total,
            ];
            assert!(times.is_sorted(), "trial {}: {times:?}", t.trial);
        }
        assert_eq!(paths, outcomes.len());
        let (n, means) = stage_means(0, &outcomes).unwrap();
        assert_eq!(n, outcomes.len());
        assert!(means.iter().all(|&m| m >= 0.0), "{means:?}");
    }
}
