//! `eureka-sim recommend`: the shortest wait that makes pause / service-registry clean
//! (`experiment::recommend` measures it), and what shortens it, told as it is measured.

use std::io::{self, Write};

use crate::experiment::intervals::trials_for_percentile;
use crate::experiment::{Recommendation, measure, what_ifs};
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
}

/// `eureka-sim recommend`: for each strategy that waits, measures the shortest clean wait of the
/// first shutdown of `scenario` (the file `text` from `source` with `overrides`) and writes it to
/// `out` as soon as it is measured.
pub fn recommend(
    out: &mut dyn Write,
    text: &str,
    source: &str,
    scenario: &Scenario,
    overrides: &[String],
    options: &RecommendOptions,
) -> Result<(), RecommendError> {
    writeln!(
        out,
        "{source}: shortest wait before the process stops, for {} ({} trials per measurement)",
        scenario.shutdowns[0].instance, scenario.simulation.trials
    )?;
    for strategy in Strategy::ALL.into_iter().filter(|s| s.waits()) {
        if strategy == Strategy::Pause && !scenario.simulation.release.pause_deregisters() {
            // spring-cloud-commons >= 2.2.7: /pause no longer touches Eureka (FACTS.md §7), so
            // no wait drains the instance; measuring would only hit the measuring wait.
            writeln!(
                out,
                "\n  pause:\n    no wait makes it clean on {}: /pause no longer deregisters from \
                 Eureka (spring-cloud-commons 2.2.7, Hoxton.SR10 and 2020.0 on); use \
                 service-registry",
                scenario.simulation.release
            )?;
            continue;
        }
        if strategy == Strategy::Pause && scenario.simulation.release.pause_stops_web_server() {
            // Boot 2.3+ with commons <= 2.2.6: context.stop() stops the web server at the pause
            // (FACTS.md §14), so callers are refused from the pause on, whatever the wait.
            writeln!(
                out,
                "\n  pause:\n    no wait makes it clean on {} (Spring Boot {}): /pause stops the \
                 web server with the rest of the context (spring-cloud-commons#788), so callers \
                 are refused from the pause on; use service-registry",
                scenario.simulation.release, scenario.simulation.release.boot
            )?;
            continue;
        }
        let r = measure(text, source, overrides, strategy, options.target)?;
        print_recommendation(out, &r)?;
        if options.what_if {
            let whatifs = what_ifs(text, source, overrides, strategy, options.target)?;
            writeln!(
                out,
                "    what shortens it (each interval cut to a quarter, {} trials each):",
                r.trials
            )?;
            for w in &whatifs {
                let simulated = match w.percentile {
                    Some(p) => format!("p{p} {}", seconds(w.at_target_s)),
                    None => "no percentile".to_string(),
                };
                writeln!(
                    out,
                    "      {}={}: {simulated}, worst case {} s",
                    w.key, w.value, w.worst_case_s
                )?;
            }
            if let Some(p) = r.percentile
                && let Some(best) = whatifs.iter().filter_map(|w| w.at_target_s).min()
            {
                // Every key at the shortest wait: a tie is told as one, not as the first key.
                let keys: Vec<&str> = whatifs
                    .iter()
                    .filter(|w| w.at_target_s == Some(best))
                    .map(|w| w.key.as_str())
                    .collect();
                match keys.as_slice() {
                    [one] => writeln!(out, "    cutting {one} shortens the p{p} wait most")?,
                    many => writeln!(
                        out,
                        "    cutting {} shortens the p{p} wait alike (to {best} s)",
                        many.join(" or ")
                    )?,
                }
            }
        }
    }
    Ok(())
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
