//! `eureka-sim compare`: one scenario under several shutdown strategies, with common random
//! numbers (see `experiment::compare`); prints a side-by-side table and writes `compare.csv`,
//! `exposure-cdf.svg` (and `.png` with `--png`) and `report.html`.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::eureka::RequestMode;
use crate::experiment::TrialOutcome;
use crate::experiment::closed_form;
use crate::experiment::compare::{
    Comparison, PlannedVariant, VariantResult, common_wait_s, expand_variants, plan_compare,
};
use crate::report::json::render_compare_json;
use crate::report::output::OutputOptions;
use crate::report::shard::ShardCommand;
use crate::report::write_compare;
use crate::scenario::{Scenario, ScenarioSource, Strategy};

use super::driver::{Cut, Driven, Plan, Target};
use super::{scenario_error_in, warn_new};

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The scenario file (TOML): the world every variant runs in.
    scenario: PathBuf,
    /// Strategies to compare, comma-separated: kill-9, kill-15, pause, service-registry
    /// [default: all four; kill-9 alone on a zone outage, the one way a zone goes down].
    #[arg(long, value_name = "STRATEGY,...", value_delimiter = ',', value_parser = parse_strategy)]
    strategy: Vec<Strategy>,
    /// Waits in seconds for pause and service-registry, comma-separated: one variant per wait
    /// (the kills ignore them) [default: the scenario's wait-s].
    #[arg(long = "wait-s", value_name = "SECONDS,...", value_delimiter = ',')]
    wait_s: Vec<u64>,
    #[command(flatten)]
    pub(crate) common: super::Common,
    #[command(flatten)]
    pub(crate) shard: super::shard::ShardArgs,
    #[command(flatten)]
    format: super::FormatArg,
}

pub(super) fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        format!("unknown strategy; allowed: {}", names.join(", "))
    })
}

/// Validates the base scenario and every variant of `strategies` (all four when empty) and
/// `wait_s` from `source` (the file read once); with `warn`, prints their warnings. `merge`
/// plans the same way from a shard's manifest, so its variants are the comparison's.
pub(super) fn plan(
    source: &ScenarioSource,
    overrides: &[String],
    strategies: &[Strategy],
    wait_s: &[u64],
    warn: bool,
) -> super::CommandResult<(Scenario, Vec<PlannedVariant>)> {
    let base = if warn {
        super::load_source(source, overrides)?
    } else {
        source.parse(overrides)?
    };
    let strategies = if strategies.is_empty() {
        default_strategies(&base, warn)
    } else {
        strategies.to_vec()
    };
    let waiting = strategies.iter().any(|s| s.waits());
    if warn && !wait_s.is_empty() && !waiting {
        eprintln!("warning: --wait-s has no effect: no pause or service-registry in --strategy");
    }
    let default_wait = if waiting {
        default_wait_s(&base, wait_s, warn)
    } else {
        None
    };
    let variants = expand_variants(&strategies, wait_s, default_wait);
    let plan = plan_compare(&variants, base.shutdown_tables(), |extra| {
        source.parse(&[overrides, extra].concat())
    })
    .map_err(|e| scenario_error_in(&format!("variant {}", e.variant), *e.source))?;
    if warn {
        let mut seen = Vec::new();
        for p in &plan {
            let label = format!("variant {}", p.variant.name());
            warn_new(&base, &p.scenario, &label, &mut seen);
        }
    }
    Ok((base, plan))
}

/// The strategies compared without `--strategy`: all four, but with a zone outage among the
/// `[[shutdown]]`s only those that stop a zone ([`Strategy::stops_a_zone`]: kill-9), since a
/// variant gives its strategy to every `[[shutdown]]` and the others would be refused. Told on
/// stderr (with `warn`), so the narrower list is never silent.
fn default_strategies(base: &Scenario, warn: bool) -> Vec<Strategy> {
    let Some(zone) = base.shutdowns.iter().find_map(|s| s.zone.as_deref()) else {
        return Strategy::ALL.to_vec();
    };
    let (kept, left): (Vec<Strategy>, Vec<Strategy>) =
        Strategy::ALL.into_iter().partition(|s| s.stops_a_zone());
    if warn {
        let names = |list: &[Strategy]| {
            let names: Vec<&str> = list.iter().map(|s| s.name()).collect();
            names.join(", ")
        };
        eprintln!(
            "note: zone `{zone}` goes down in a zone outage, which stops its processes with {} \
             only: compare runs {} and leaves out {}",
            names(&kept),
            names(&kept),
            names(&left)
        );
    }
    kept
}

/// The wait of pause and service-registry without `--wait-s`: the scenario's own when its
/// shutdowns wait; when they are kills (whose `wait-s` means nothing) not 0 s, which would make
/// every drain look as bad as a kill -15, but the closed-form worst case of the news reaching
/// every caller (`experiment::closed_form`, the "90 s" of the runbooks at defaults): the wait
/// after which no phase of the timers leaves a caller routing to the instance. Told on stderr
/// (with `warn`), so the choice is never silent.
fn default_wait_s(base: &Scenario, wait_s: &[u64], warn: bool) -> Option<u64> {
    let own = common_wait_s(base);
    if !wait_s.is_empty() || base.shutdowns.iter().any(|s| s.strategy.waits()) {
        return own;
    }
    let form = closed_form(base);
    let chosen = form.total_ms().div_ceil(1000);
    if warn {
        let terms: Vec<String> = form
            .terms
            .iter()
            .map(|(name, ms)| format!("{name} {:.1} s", *ms as f64 / 1000.0))
            .collect();
        eprintln!(
            "note: no --wait-s: pause and service-registry wait {chosen} s, the worst case of the \
             news reaching every caller ({}); --wait-s to compare others",
            terms.join(" + ")
        );
    }
    Some(chosen)
}

pub(crate) fn compare(
    args: CompareArgs,
    budget: &super::budget::BudgetArgs,
) -> super::CommandResult<()> {
    let shard = args.shard.resolve()?;
    let overrides = args.common.overrides.list()?;
    let source = ScenarioSource::read(&args.scenario)?;
    let (base, planned) = plan(&source, &overrides, &args.strategy, &args.wait_s, true)?;
    // Every variant runs the same trials (a shard's slice of them): trial k of each variant
    // draws the same numbers (common random numbers) whichever shard it is in.
    let plan = Plan {
        groups: planned
            .iter()
            .map(|p| (p.variant.name(), &p.scenario))
            .collect(),
        mode: RequestMode::default(),
        cut: Cut::Trials,
        twice: false,
    };
    let command = ShardCommand::Compare {
        strategies: args.strategy.iter().map(|s| s.name().to_string()).collect(),
        wait_s: args.wait_s.clone(),
    };
    let target = Target {
        common: &args.common,
        scenario: &args.scenario,
        default_dir: super::default_output(&args.scenario, &base.name).join("compare"),
    };
    let manifest = super::shard::manifest(command, &source, &args.common.overrides, &base);
    let mut compared = None;
    let write = |output: &OutputOptions, groups: Vec<Vec<TrialOutcome>>| {
        let variants = planned
            .iter()
            .zip(&groups)
            .map(|(p, outcomes)| VariantResult::of(p.clone(), outcomes))
            .collect();
        let comparison = Comparison { variants };
        let text = write_compare(&comparison, output);
        compared = Some(comparison);
        text
    };
    let driven = plan.drive(shard, budget, target, manifest, write)?;
    let (Driven::Written { text, .. }, Some(comparison)) = (driven, compared) else {
        return Ok(());
    };
    let text = if args.format.is_text() {
        text
    } else {
        render_compare_json(&base, &comparison)
    };
    io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(path: &str) -> Vec<String> {
        let source = ScenarioSource::read(std::path::Path::new(path)).unwrap();
        let (_, planned) = plan(&source, &[], &[], &[], false).unwrap();
        planned.iter().map(|p| p.variant.name()).collect()
    }

    /// A zone outage stops its zone with kill-9 only (`parse/zone.rs`), and a variant gives its
    /// strategy to every `[[shutdown]]`: without `--strategy` the comparison is kill-9 alone,
    /// where the four strategies used to be planned and the first waiting one refused.
    #[test]
    fn a_zone_outage_is_compared_with_the_strategies_a_zone_takes() {
        assert_eq!(
            planned("scenarios/cluster/zone-outage-self-preservation.toml"),
            ["kill-9"]
        );
        let source = ScenarioSource::read(std::path::Path::new(
            "scenarios/cluster/zone-outage-self-preservation.toml",
        ))
        .unwrap();
        let e = plan(&source, &[], &[Strategy::Kill15], &[], false).unwrap_err();
        assert!(format!("{e:#}").contains("variant kill-15"), "{e:#}");
    }

    /// Without a zone outage all four are compared, as before.
    #[test]
    fn an_instance_is_compared_with_all_four_strategies() {
        let names = planned("scenarios/kill-9.toml");
        assert_eq!(names.len(), 4, "{names:?}");
        assert_eq!(names[..2], ["kill-9", "kill-15"]);
    }
}
