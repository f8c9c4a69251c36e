//! The race against the SimPy oracle (`../shared/oracle/`): the same world and trial
//! count on one core each, eureka-sim in this process on the calling thread, the oracle as
//! `python3 oracle.py --case cases/kill9_default.json --seeds 0..N-1 --jobs 1` (its README's
//! command; `--jobs 1` keeps it to one process). `scripts/oracle-race.sh` runs the same pair as
//! two whole processes pinned to one core.
//!
//! The oracle is optional: without `oracle.py`, python3 or SimPy the race is skipped with the
//! reason, never failed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::scenario::ScenarioError;

use super::{Measurement, time_oracle_world};

/// The oracle's case file, relative to its folder; `bench/oracle-kill9.toml` mirrors it key by
/// key.
pub const ORACLE_CASE: &str = "cases/kill9_default.json";

/// The oracle's side of the race.
#[derive(Debug, Clone)]
pub struct OracleRun {
    pub trials: u32,
    /// Wall time of the whole `python3 oracle.py` process (start-up and its output files
    /// included).
    pub seconds: f64,
    /// The events it reports handling (its `wall ... s; N events` line), if it printed them.
    pub events: Option<u64>,
}

/// Both sides and the ratio.
#[derive(Debug, Clone)]
pub struct OracleRace {
    pub case: PathBuf,
    pub oracle: OracleRun,
    pub ours: Measurement,
}

impl OracleRace {
    /// How many times faster eureka-sim ran the same trial count (oracle seconds over ours).
    pub fn speedup(&self) -> f64 {
        self.oracle.seconds / self.ours.seconds
    }
}

/// What became of the race.
#[derive(Debug, Clone)]
pub enum OracleStatus {
    Ran(OracleRace),
    /// Not run, and why ("simpy not installed", "python3 not found", "no oracle.py in DIR").
    Skipped(String),
    /// The oracle ran and failed (its last lines of stderr).
    Failed(String),
}

/// Races the oracle in `dir` for `trials` trials against eureka-sim on `text` (the scenario that
/// mirrors the oracle's case, from `source`).
pub fn race_oracle(
    dir: &Path,
    text: &str,
    source: &str,
    trials: u32,
) -> Result<OracleStatus, ScenarioError> {
    if !dir.join("oracle.py").is_file() || !dir.join(ORACLE_CASE).is_file() {
        return Ok(OracleStatus::Skipped(format!(
            "no oracle.py and {ORACLE_CASE} in {}",
            dir.display()
        )));
    }
    match Command::new("python3")
        .args(["-c", "import simpy"])
        .output()
    {
        Err(_) => return Ok(OracleStatus::Skipped("python3 not found".into())),
        Ok(out) if !out.status.success() => {
            return Ok(OracleStatus::Skipped("simpy not installed".into()));
        }
        Ok(_) => {}
    }
    let ours = time_oracle_world(text, source, trials)?;
    let out_dir = std::env::temp_dir().join(format!("eureka-sim-oracle-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        return Ok(OracleStatus::Failed(format!(
            "cannot create {}: {e}",
            out_dir.display()
        )));
    }
    let start = Instant::now();
    let result = Command::new("python3")
        .current_dir(dir)
        .arg("oracle.py")
        .args(["--case", ORACLE_CASE, "--jobs", "1"])
        .arg("--seeds")
        .arg(format!("0..{}", trials.max(1) - 1))
        .arg("--out")
        .arg(out_dir.join("oracle.json"))
        .output();
    let seconds = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out_dir);
    let out = match result {
        Ok(out) => out,
        Err(e) => return Ok(OracleStatus::Failed(format!("cannot run python3: {e}"))),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Ok(OracleStatus::Failed(
            tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
        ));
    }
    Ok(OracleStatus::Ran(OracleRace {
        case: dir.join(ORACLE_CASE),
        oracle: OracleRun {
            trials,
            seconds,
            events: events_reported(&String::from_utf8_lossy(&out.stdout)),
        },
        ours,
    }))
}

/// The event count of the oracle's summary line (`  wall 2.31 s with 1 job(s); 123 events; ...`).
fn events_reported(stdout: &str) -> Option<u64> {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("wall "))?;
    let part = line
        .split(';')
        .find(|p| p.trim_end().ends_with(" events"))?;
    part.trim().trim_end_matches(" events").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracles_event_count_is_read_from_its_wall_line() {
        let stdout = "case kill9_default: 200 seeds\n  metric ...\n  wall 2.31 s with 1 job(s); \
                      1234567 events; 534,000 events/s; 11.55 s per 1000 seeds\n";
        assert_eq!(events_reported(stdout), Some(1_234_567));
        assert_eq!(events_reported("nothing\n"), None);
    }

    #[test]
    fn a_folder_without_the_oracle_is_skipped_not_failed() {
        let dir = tempfile::tempdir().unwrap();
        let status = race_oracle(dir.path(), "", "none.toml", 1).unwrap();
        assert!(
            matches!(&status, OracleStatus::Skipped(why) if why.contains("no oracle.py")),
            "{status:?}"
        );
    }
}
