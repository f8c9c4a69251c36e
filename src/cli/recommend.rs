//! `eureka-sim recommend`: the shortest clean wait for pause and service-registry.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::experiment::{Recommendation, measure, what_ifs};
use crate::scenario::{Strategy, load};

#[derive(Debug, clap::Args)]
pub(crate) struct RecommendArgs {
    /// The scenario file (TOML); its first [[shutdown]] is the one tuned.
    scenario: PathBuf,
    /// The share of trials that must be clean, as a percentile (p99.9, p99, 95, ...).
    #[arg(long, default_value = "p99.9", value_parser = parse_target)]
    target: f64,
    #[command(flatten)]
    overrides: super::Overrides,
    /// Skip the "what shortens it" runs (three more measurements per strategy).
    #[arg(long)]
    no_what_if: bool,
}

fn parse_target(text: &str) -> Result<f64, String> {
    let number = text
        .trim()
        .trim_start_matches(['p', 'P'])
        .trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(value) if value > 0.0 && value <= 100.0 => Ok(value),
        _ => Err("expected a percentile such as p99.9, p99 or 95 (0 < p <= 100)".to_string()),
    }
}

fn seconds(value: Option<u64>) -> String {
    value.map_or("never (unresolved trials)".to_string(), |s| {
        format!("{s} s")
    })
}

pub(crate) fn recommend(args: RecommendArgs) -> anyhow::Result<()> {
    let target = args.target;
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("cannot read scenario file {}", args.scenario.display()))?;
    let source = args.scenario.display().to_string();
    let overrides = args.overrides.list();
    // Validates the file and the overrides (exit 2 with the usual message).
    let scenario = load(&args.scenario, &overrides)?;
    if scenario.shutdowns.is_empty() {
        anyhow::bail!("{source} has no [[shutdown]] to tune");
    }
    let mut out = io::stdout().lock();
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
        let r = measure(&text, &source, &overrides, strategy, target)?;
        print_recommendation(&mut out, &r)?;
        if !args.no_what_if {
            let whatifs = what_ifs(&text, &source, &overrides, strategy, target)?;
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

fn print_recommendation(out: &mut impl Write, r: &Recommendation) -> io::Result<()> {
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
