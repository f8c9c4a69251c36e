//! `eureka-sim recommend`: the shortest wait that makes pause / service-registry clean
//! (`experiment::recommend` measures it), and what shortens it, told as it is measured.

use std::io::{self, Write};

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
        let r = measure(text, source, overrides, strategy, options.target)?;
        print_recommendation(out, &r)?;
        if options.what_if {
            let whatifs = what_ifs(text, source, overrides, strategy, options.target)?;
            writeln!(
                out,
                "    what shortens it (each interval cut to a quarter):"
            )?;
            for w in &whatifs {
                writeln!(
                    out,
                    "      {}={}: p{} {}, worst case {} s",
                    w.key,
                    w.value,
                    r.target,
                    seconds(w.at_target_s),
                    w.worst_case_s
                )?;
            }
            if let Some(best) = whatifs
                .iter()
                .min_by_key(|w| w.at_target_s.unwrap_or(u64::MAX))
            {
                writeln!(
                    out,
                    "    cutting {} shortens the p{} wait most",
                    best.key, r.target
                )?;
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

fn print_recommendation(out: &mut dyn Write, r: &Recommendation) -> io::Result<()> {
    writeln!(out, "\n  {}:", r.strategy.name())?;
    let ms = |v: Option<i64>| v.map_or("-".to_string(), |v| format!("{:.1} s", v as f64 / 1000.0));
    writeln!(
        out,
        "    zero dead hits in {}% of trials: wait-s = {} (simulated; needed p50 {}, max {}, {} unresolved)",
        r.target,
        seconds(r.at_target_s),
        ms(r.needed.p50),
        ms(r.needed.max),
        r.needed.unresolved
    )?;
    let terms: Vec<String> = r
        .closed_form
        .terms
        .iter()
        .map(|(name, v)| format!("{name} {:.3} s", *v as f64 / 1000.0))
        .collect();
    writeln!(
        out,
        "    zero dead hits whatever the phases: wait-s = {} s (closed form {} = {:.3} s; simulated max {})",
        r.worst_case_s,
        terms.join(" + "),
        r.closed_form.total_ms() as f64 / 1000.0,
        ms(r.needed.max)
    )?;
    Ok(())
}
