//! `eureka-sim recommend`: the shortest wait that makes pause / service-registry clean
//! (`experiment::recommend` measures it), and what shortens it, told as it is measured.

use std::io::{self, Write};

use crate::experiment::intervals::trials_for_percentile;
use crate::experiment::{MeasureProgress, Recommendation, WhatIf, measure, what_ifs};
use crate::scenario::{Scenario, ScenarioError, Strategy};

/// What `eureka-sim recommend` measures.
#[derive(Debug, Clone, Copy)]
pub struct RecommendOptions {
    /// The share of trials that must be clean, as a percentile (99.9).
    pub target: f64,
    /// Also measure what each interval cut to a quarter gives.
    pub what_if: bool,
}

/// Why `recommend` stopped.
#[derive(Debug, thiserror::Error)]
pub enum RecommendError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A trial stopped at its event limit.
    #[error(transparent)]
    Budget(#[from] crate::experiment::budget::BudgetError),
}

impl From<crate::experiment::MeasureError> for RecommendError {
    fn from(e: crate::experiment::MeasureError) -> Self {
        match e {
            crate::experiment::MeasureError::Scenario(e) => RecommendError::Scenario(e),
            crate::experiment::MeasureError::Budget(e) => RecommendError::Budget(e),
        }
    }
}

/// A measurement of `experiment::recommend` ([`measure`], [`what_ifs`]): the file's text, its
/// source and overrides, the strategy, the target percentile and the progress to tell.
type Measurement<T> = fn(
    &str,
    &str,
    &[String],
    Strategy,
    f64,
    &dyn MeasureProgress,
) -> Result<T, crate::experiment::MeasureError>;

/// One `recommend` request: the first shutdown of `scenario` (the file `text` from `source`
/// with `overrides`), measured as `options` ask, each trial told to `progress`.
pub struct RecommendRequest<'a> {
    pub text: &'a str,
    pub source: &'a str,
    pub scenario: &'a Scenario,
    pub overrides: &'a [String],
    pub options: RecommendOptions,
    pub progress: &'a dyn MeasureProgress,
}

impl RecommendRequest<'_> {
    /// The strategies that wait, each with why no wait can make it clean on the scenario's
    /// release (`None`: it is measured).
    fn strategies(&self) -> impl Iterator<Item = (Strategy, Option<String>)> + '_ {
        Strategy::ALL
            .into_iter()
            .filter(|s| s.waits())
            .map(|s| (s, skip_reason(s, self.scenario)))
    }

    /// The shortest clean wait of `strategy`.
    fn measure(&self, strategy: Strategy) -> Result<Recommendation, RecommendError> {
        self.run(measure, strategy)
    }

    /// What each interval cut to a quarter gives `strategy`'s wait (none unless asked).
    fn what_ifs(&self, strategy: Strategy) -> Result<Vec<WhatIf>, RecommendError> {
        if !self.options.what_if {
            return Ok(Vec::new());
        }
        self.run(what_ifs, strategy)
    }

    /// One measurement of `strategy` (`measure` or `what_ifs`) on the request's file.
    fn run<T>(&self, measurement: Measurement<T>, strategy: Strategy) -> Result<T, RecommendError> {
        let (target, progress) = (self.options.target, self.progress);
        Ok(measurement(
            self.text,
            self.source,
            self.overrides,
            strategy,
            target,
            progress,
        )?)
    }
}

/// `eureka-sim recommend`: for each strategy that waits, measures the shortest clean wait of the
/// request's shutdown and writes it to `out` as soon as it is measured.
pub fn recommend(out: &mut dyn Write, request: &RecommendRequest) -> Result<(), RecommendError> {
    let scenario = request.scenario;
    writeln!(
        out,
        "{}: shortest wait before the process stops, for {} ({} trials per measurement)",
        request.source, scenario.shutdowns[0].instance, scenario.simulation.trials
    )?;
    for (strategy, skip) in request.strategies() {
        if let Some(reason) = skip {
            writeln!(out, "\n  {}:\n    {reason}", strategy.name())?;
            continue;
        }
        let r = request.measure(strategy)?;
        print_recommendation(out, &r)?;
        if request.options.what_if {
            let whatifs = request.what_ifs(strategy)?;
            writeln!(
                out,
                "    what shortens it (each interval cut to a quarter, {} trials each):",
                r.trials
            )?;
            for w in &whatifs {
                let simulated = match w.percentile {
                    Some(p) => format!(
                        "p{p} {}{}",
                        seconds(w.at_target_s),
                        interval(w.at_target_ci95_s)
                    ),
                    None => "no percentile".to_string(),
                };
                writeln!(
                    out,
                    "      {}={}: {simulated}, worst case {} s",
                    w.key, w.value, w.worst_case_s
                )?;
            }
            if let Some(p) = r.percentile {
                writeln!(out, "{}", shortest(&whatifs, p))?;
            }
        }
    }
    Ok(())
}

/// What `recommend --format json` prints: the same measurements as the text, collected.
#[derive(Debug, serde::Serialize)]
struct RecommendJson<'a> {
    tool: &'static str,
    version: &'static str,
    scenario: &'a str,
    instance: &'a str,
    trials: u32,
    /// `--target`, a percentile.
    target: f64,
    strategies: Vec<StrategyJson>,
}

#[derive(Debug, serde::Serialize)]
struct StrategyJson {
    strategy: &'static str,
    /// `false`: no wait can make it clean on this release (`reason` says why).
    measured: bool,
    reason: Option<String>,
    /// The percentile measured (`target`, or the highest the trials support).
    percentile: Option<f64>,
    /// The trials `target` needs, when these are fewer.
    target_needs_trials: Option<usize>,
    /// The shortest wait clean in `percentile` % of trials, whole seconds.
    wait_s: Option<u64>,
    /// Its 95 % order-statistic interval (the upper bound `null`: never).
    wait_ci95_s: Option<(u64, Option<u64>)>,
    needed_p50_ms: Option<i64>,
    needed_max_ms: Option<i64>,
    resolved_trials: usize,
    unresolved: usize,
    /// Clean whatever the phases: the closed form, rounded up to seconds.
    worst_case_s: Option<u64>,
    closed_form: Vec<TermJson>,
    what_ifs: Vec<WhatIfJson>,
    /// The keys of the cuts that shorten the wait most: one, several (a tie within the 95 %
    /// intervals), or none.
    shortest: Vec<String>,
}

#[derive(Debug, serde::Serialize)]
struct TermJson {
    name: &'static str,
    ms: u64,
}

#[derive(Debug, serde::Serialize)]
struct WhatIfJson {
    key: String,
    value: String,
    percentile: Option<f64>,
    wait_s: Option<u64>,
    wait_ci95_s: Option<(u64, Option<u64>)>,
    worst_case_s: u64,
}

/// `recommend --format json`: the measurements of [`recommend`], as one JSON document.
pub fn recommend_json(request: &RecommendRequest) -> Result<String, RecommendError> {
    let mut strategies = Vec::new();
    for (strategy, skip) in request.strategies() {
        if let Some(reason) = skip {
            strategies.push(StrategyJson {
                strategy: strategy.name(),
                measured: false,
                reason: Some(reason),
                percentile: None,
                target_needs_trials: None,
                wait_s: None,
                wait_ci95_s: None,
                needed_p50_ms: None,
                needed_max_ms: None,
                resolved_trials: 0,
                unresolved: 0,
                worst_case_s: None,
                closed_form: Vec::new(),
                what_ifs: Vec::new(),
                shortest: Vec::new(),
            });
            continue;
        }
        let r = request.measure(strategy)?;
        let whatifs = request.what_ifs(strategy)?;
        strategies.push(StrategyJson {
            strategy: strategy.name(),
            measured: true,
            reason: None,
            percentile: r.percentile,
            target_needs_trials: r.target_needs,
            wait_s: r.at_target_s,
            wait_ci95_s: r.at_target_ci95_s,
            needed_p50_ms: r.needed.p50,
            needed_max_ms: r.needed.max,
            resolved_trials: r.needed.sorted.len(),
            unresolved: r.needed.unresolved,
            worst_case_s: Some(r.worst_case_s),
            closed_form: r
                .closed_form
                .terms
                .iter()
                .map(|&(name, ms)| TermJson { name, ms })
                .collect(),
            shortest: shortest_cuts(&whatifs)
                .iter()
                .map(|w| w.key.clone())
                .collect(),
            what_ifs: whatifs
                .iter()
                .map(|w| WhatIfJson {
                    key: w.key.clone(),
                    value: w.value.clone(),
                    percentile: w.percentile,
                    wait_s: w.at_target_s,
                    wait_ci95_s: w.at_target_ci95_s,
                    worst_case_s: w.worst_case_s,
                })
                .collect(),
        });
    }
    let scenario = request.scenario;
    let doc = RecommendJson {
        tool: "eureka-sim",
        version: env!("CARGO_PKG_VERSION"),
        scenario: request.source,
        instance: &scenario.shutdowns[0].instance,
        trials: scenario.simulation.trials,
        target: request.options.target,
        strategies,
    };
    let mut text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    text.push('\n');
    Ok(text)
}

/// Why no wait of `strategy` can make the stop clean on the scenario's release, if none can:
/// measuring would only hit the measuring wait.
fn skip_reason(strategy: Strategy, scenario: &Scenario) -> Option<String> {
    let release = scenario.simulation.release;
    if strategy == Strategy::Pause && !release.pause_deregisters() {
        // spring-cloud-commons >= 2.2.7: /pause no longer touches Eureka (FACTS.md §7).
        return Some(format!(
            "no wait makes it clean on {release}: /pause no longer deregisters from Eureka \
             (spring-cloud-commons 2.2.7, Hoxton.SR10 and 2020.0 on); use service-registry"
        ));
    }
    if strategy == Strategy::Pause && release.pause_stops_web_server() {
        // Boot 2.3+ with commons <= 2.2.6: context.stop() stops the web server at the pause
        // (FACTS.md §14), so callers are refused from the pause on, whatever the wait.
        return Some(format!(
            "no wait makes it clean on {release} (Spring Boot {}): /pause stops the web server \
             with the rest of the context (spring-cloud-commons#788), so callers are refused \
             from the pause on; use service-registry",
            release.boot
        ));
    }
    None
}

/// The cuts that shorten the wait most: the shortest alone, or every cut whose 95 % interval
/// reaches down to the shortest's upper bound (the trials cannot tell them apart); empty when
/// no cut has a wait.
fn shortest_cuts(whatifs: &[WhatIf]) -> Vec<&WhatIf> {
    let Some(best) = whatifs
        .iter()
        .filter(|w| w.at_target_s.is_some())
        .min_by_key(|w| w.at_target_s)
    else {
        return Vec::new();
    };
    let best_hi = best.at_target_ci95_s.and_then(|(_, hi)| hi);
    whatifs
        .iter()
        .filter(|w| w.at_target_s.is_some())
        .filter(|w| {
            let lo = w.at_target_ci95_s.map_or(w.at_target_s, |(lo, _)| Some(lo));
            std::ptr::eq(*w, best)
                || w.at_target_s == best.at_target_s
                || best_hi.is_none()
                || lo <= best_hi
        })
        .collect()
}

/// Which cut shortens the wait most: the shortest, unless another's 95 % interval reaches down
/// to the shortest's upper bound, in which case the trials cannot tell them apart and they are
/// told as a tie (whatever their point values; two 61 s are a tie, and so are 61 s and 63 s
/// with overlapping intervals).
fn shortest(whatifs: &[WhatIf], p: f64) -> String {
    let tied = shortest_cuts(whatifs);
    if tied.is_empty() {
        return format!("    no cut gives a p{p} wait");
    }
    if let [one] = tied.as_slice() {
        return format!("    cutting {} shortens the p{p} wait most", one.key);
    }
    let figures: Vec<String> = tied
        .iter()
        .map(|w| format!("{} {}", w.key, seconds(w.at_target_s)))
        .collect();
    format!(
        "    no single cut shortens the p{p} wait most: {} are alike within their 95 % \
         intervals (more trials may tell them apart)",
        figures.join(", ")
    )
}

/// ` (95 % CI 58 .. 66 s)`, or nothing without an interval.
fn interval(ci: Option<(u64, Option<u64>)>) -> String {
    match ci {
        Some((lo, Some(hi))) => format!(" (95 % CI {lo} .. {hi} s)"),
        Some((lo, None)) => format!(" (95 % CI {lo} s .. never)"),
        None => String::new(),
    }
}

fn seconds(value: Option<u64>) -> String {
    value.map_or("never (unresolved trials)".to_string(), |s| {
        format!("{s} s")
    })
}

/// Every simulated figure names the trials behind it; a percentile the trials cannot support is
/// not given (the highest one they support is, with what the target needs).
fn print_recommendation(out: &mut dyn Write, r: &Recommendation) -> io::Result<()> {
    writeln!(out, "\n  {}:", r.strategy.name())?;
    let ms = |v: Option<i64>| v.map_or("-".to_string(), |v| format!("{:.1} s", v as f64 / 1000.0));
    let n = r.trials;
    let resolved = r.needed.sorted.len();
    let p50 = match r.needed.needs_trials(50.0) {
        None => format!("p50 {}, ", ms(r.needed.p50)),
        Some(_) if resolved == 0 => String::new(),
        Some(k) => format!("p50 needs at least {k}, "),
    };
    let needed = format!(
        "needed {p50}max {} over the {resolved} trial(s) that dropped it, {} unresolved",
        ms(r.needed.max),
        r.needed.unresolved
    );
    if let Some(k) = r.target_needs {
        writeln!(
            out,
            "    zero dead hits in {}% of trials: not measured, it needs at least {k} trials \
             (these are {n})",
            r.target
        )?;
    }
    match r.percentile {
        Some(p) => {
            let most = if r.target_needs.is_some() {
                format!(", the most {n} trials support")
            } else {
                String::new()
            };
            writeln!(
                out,
                "    zero dead hits in {p}% of trials{most}: wait-s = {} (simulated over {n} \
                 trials; {needed})",
                seconds(r.at_target_s),
            )?;
        }
        None => writeln!(
            out,
            "    no percentile: {n} trials support none (p50 needs at least {}); simulated {needed}",
            trials_for_percentile(50.0).unwrap_or(usize::MAX)
        )?,
    }
    let terms: Vec<String> = r
        .closed_form
        .terms
        .iter()
        .map(|(name, v)| format!("{name} {:.3} s", *v as f64 / 1000.0))
        .collect();
    writeln!(
        out,
        "    zero dead hits whatever the phases: wait-s = {} s (closed form {} = {:.3} s; simulated max {} over {n} trials)",
        r.worst_case_s,
        terms.join(" + "),
        r.closed_form.total_ms() as f64 / 1000.0,
        ms(r.needed.max)
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(key: &str, at: u64, ci: (u64, u64)) -> WhatIf {
        WhatIf {
            key: key.to_string(),
            value: "1".to_string(),
            percentile: Some(95.0),
            at_target_s: Some(at),
            at_target_ci95_s: Some((ci.0, Some(ci.1))),
            worst_case_s: 100,
        }
    }

    #[test]
    fn a_cut_wins_only_outside_the_others_intervals() {
        // 40 s (CI 38 .. 42) against 61 s (CI 58 .. 66): apart, the first wins.
        let apart = [cut("a", 40, (38, 42)), cut("b", 61, (58, 66))];
        assert_eq!(
            shortest(&apart, 95.0),
            "    cutting a shortens the p95 wait most"
        );
        // 61 s and 61 s: a tie, whatever the order.
        let equal = [
            cut("a", 61, (58, 66)),
            cut("b", 61, (59, 64)),
            cut("c", 90, (85, 95)),
        ];
        let told = shortest(&equal, 95.0);
        assert!(
            told.starts_with(
                "    no single cut shortens the p95 wait most: a 61 s, b 61 s are alike"
            ),
            "{told}"
        );
        // 61 s against 63 s whose interval reaches down to 60 s, under the first's 66 s: a tie.
        let close = [cut("b", 63, (60, 68)), cut("a", 61, (58, 66))];
        let told = shortest(&close, 95.0);
        assert!(told.contains("b 63 s, a 61 s are alike"), "{told}");
    }
}
