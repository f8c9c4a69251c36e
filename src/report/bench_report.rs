//! `eureka-sim bench`: the measurements of `experiment::bench`, as a table, and the race against
//! the SimPy oracle.

use std::fmt::Write as _;
use std::path::Path;

use crate::experiment::bench as measure;
use crate::experiment::{Measurement, OracleStatus, race_oracle};
use crate::scenario::ScenarioError;

/// The scenario the oracle race runs on eureka-sim's side, and its text: the oracle's
/// `cases/kill9_default.json` mirrored key by key.
pub const ORACLE_SCENARIO: (&str, &str) = (
    "bench/oracle-kill9.toml",
    include_str!("../../bench/oracle-kill9.toml"),
);

/// `eureka-sim bench`: measures the scenario `text` (from `source`) with `trials` trials per
/// measurement and returns the table; with `oracle` (the oracle's folder), races it on its world
/// for `oracle_trials` trials.
pub fn bench(
    text: &str,
    source: &str,
    trials: u32,
    oracle: Option<(&Path, u32)>,
) -> Result<String, ScenarioError> {
    let report = measure(text, source, trials.max(1))?;
    let mut out = String::new();
    let _ = writeln!(out, "{source}: {trials} trials per measurement");
    let _ = writeln!(
        out,
        "  {:<32}{:>8}{:>12}{:>10}{:>10}{:>10}{:>12}{:>10}",
        "", "trials", "events", "events/s", "trials/s", "ms/trial", "inst-h/s", "peak MiB"
    );
    for m in &report.measurements {
        row(&mut out, m);
    }
    let _ = writeln!(
        out,
        "  trials/s, 2 threads over 1 thread:           {:.2}x",
        report.thread_speedup
    );
    let _ = writeln!(
        out,
        "  trial cost, 1000 over 20 requests/s:         {:.2}x (per-request reference: {:.1}x)",
        report.rate_cost_ratio, report.rate_cost_ratio_per_request
    );
    let _ = writeln!(
        out,
        "  inst-h/s: simulated instance-hours per wall second ([[app]] instances x simulated hours)"
    );
    let _ = writeln!(
        out,
        "  peak MiB: VmHWM of /proc/self/status, {}",
        if report.peak_is_per_measurement {
            "reset before each row"
        } else {
            "the peak so far (the reset through /proc/self/clear_refs was refused)"
        }
    );
    let e = &report.estimate;
    let _ = writeln!(
        out,
        "budget estimate of a trial (1 thread): {:.4} s against {:.4} s measured ({:.2}x), \
         {} events against {:.0} ({:.2}x), peak {:.1} MiB",
        e.estimated_seconds,
        e.measured_seconds,
        e.time_ratio(),
        e.estimated_events,
        e.measured_events,
        e.events_ratio(),
        e.estimated_bytes as f64 / 1_048_576.0
    );
    if let Some((dir, oracle_trials)) = oracle {
        let (source, text) = ORACLE_SCENARIO;
        let status = race_oracle(dir, text, source, oracle_trials.max(1))?;
        oracle_text(&mut out, &status);
    }
    Ok(out)
}

fn row(out: &mut String, m: &Measurement) {
    let peak = m.peak_kib.map_or_else(
        || "-".to_string(),
        |kib| format!("{:.1}", kib as f64 / 1024.0),
    );
    let _ = writeln!(
        out,
        "  {:<32}{:>8}{:>12}{:>9.2}M{:>10.1}{:>10.3}{:>12.0}{:>10}",
        m.label,
        m.trials,
        m.events,
        m.events_per_s() / 1e6,
        m.trials_per_s(),
        m.ms_per_trial(),
        m.instance_hours_per_s(),
        peak
    );
}

/// The oracle race in words.
fn oracle_text(out: &mut String, status: &OracleStatus) {
    match status {
        OracleStatus::Skipped(why) => {
            let _ = writeln!(out, "oracle: skipped ({why})");
        }
        OracleStatus::Failed(why) => {
            let _ = writeln!(out, "oracle: failed ({why})");
        }
        OracleStatus::Ran(race) => {
            let (source, _) = ORACLE_SCENARIO;
            let _ = writeln!(
                out,
                "oracle: {} against {source}, {} trials each, one core each",
                race.case.display(),
                race.oracle.trials
            );
            let events = race
                .oracle
                .events
                .map_or_else(String::new, |e| format!(", {e} events"));
            let _ = writeln!(
                out,
                "  SimPy oracle (python3, --jobs 1, window mode): {:>9.3} s{events}",
                race.oracle.seconds
            );
            let _ = writeln!(
                out,
                "  eureka-sim (1 thread, ends at rest):          {:>9.3} s, {} events",
                race.ours.seconds, race.ours.events
            );
            let _ = writeln!(
                out,
                "  eureka-sim is {:.1}x faster (oracle wall over eureka-sim wall)",
                race.speedup()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{OracleRace, OracleRun};

    fn measurement() -> Measurement {
        Measurement {
            label: "oracle's world, 1 thread".into(),
            trials: 200,
            events: 2_000_000,
            seconds: 0.25,
            instance_hours: 2_800.0,
            peak_kib: Some(10_240),
        }
    }

    #[test]
    fn a_row_has_events_trials_instance_hours_and_peak_memory() {
        let mut out = String::new();
        row(&mut out, &measurement());
        // 8.00M events/s, 800.0 trials/s, 1.250 ms/trial, 11 200 instance-hours/s, 10.0 MiB.
        for field in ["8.00M", "800.0", "1.250", "11200", "10.0"] {
            assert!(out.contains(field), "{field} missing from {out}");
        }
    }

    #[test]
    fn a_missing_simpy_is_said_not_failed() {
        let mut out = String::new();
        oracle_text(
            &mut out,
            &OracleStatus::Skipped("simpy not installed".into()),
        );
        assert_eq!(out, "oracle: skipped (simpy not installed)\n");
    }

    #[test]
    fn the_race_gives_both_wall_times_and_the_ratio() {
        let mut out = String::new();
        let race = OracleRace {
            case: "oracle/cases/kill9_default.json".into(),
            oracle: OracleRun {
                trials: 200,
                seconds: 5.0,
                events: Some(900_000),
            },
            ours: measurement(),
        };
        oracle_text(&mut out, &OracleStatus::Ran(race));
        for field in [
            "5.000 s, 900000 events",
            "0.250 s, 2000000 events",
            "20.0x faster",
        ] {
            assert!(out.contains(field), "{field} missing from {out}");
        }
    }

    #[test]
    fn the_oracle_scenario_parses() {
        let (source, text) = ORACLE_SCENARIO;
        let scenario = crate::scenario::parse_str(text, source, "test", &[]).unwrap();
        assert_eq!(crate::experiment::fleet_instances(&scenario), 12);
        assert_eq!(scenario.simulation.duration_ms, 4_200_000);
    }
}
