//! The fuzz targets' bodies, shared by `fuzz/fuzz_targets/*.rs` (cargo-fuzz,
//! nightly) and the replay of `fuzz/regressions/<target>/` in the stable test suite
//! (`tests/fuzz_regressions.rs`), so that a crash input found by the fuzzer is replayed through
//! exactly the code that found it.
//!
//! Each target takes the fuzzer's bytes and panics only when the project's standard for bad
//! input is broken: a panic of the library itself, or a refusal whose message does not start
//! with where the problem is (the file, or the Spring file of a `spring-config`). What is
//! accepted or refused is not asserted: both are fine. Hangs and memory exhaustion are caught
//! by the fuzzer's `-timeout` and `-rss_limit_mb`, and by the replay test finishing at all.
//!
//! Not part of the library's interface (`#[doc(hidden)]`); it reads no file and no clock,
//! except what a fuzzed `spring-config` names (relative paths from the working folder).

use std::collections::BTreeMap;

use crate::engine::trial_seed;
use crate::eureka::RequestMode;
use crate::experiment::budget::{fleet, trial_cost};
use crate::experiment::simulate;
use crate::scenario::{Scenario, ScenarioError, ScenarioSource, parse_str};

/// The name fuzzed scenario texts are parsed under (messages must start with it).
pub const SOURCE: &str = "fuzz.toml";

/// A fuzz target: the fuzzer's bytes in, what became of them out.
pub type Target = fn(&[u8]) -> Outcome;

/// Every target by the name of its `fuzz/fuzz_targets/<name>.rs` and `fuzz/regressions/<name>/`.
pub const TARGETS: [(&str, Target); 4] = [
    ("scenario_toml", scenario_toml),
    ("set_override", set_override),
    ("spring_import", spring_import),
    ("short_run", short_run),
];

/// What a target did with an input (for tests; the fuzzer only looks for panics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The scenario was accepted (and not simulated).
    Accepted,
    /// Refused, with this message.
    Refused(String),
    /// `short_run`: accepted and one trial simulated, which handled this many events.
    Simulated { events: u64 },
    /// `short_run`: accepted, but too large to simulate here ([`trial_cost`]).
    Skipped,
}

/// `scenario_toml`: the bytes as a scenario file (invalid UTF-8 replaced, as the fuzzer's
/// mutations would otherwise mostly stop at the file read), parsed and validated.
pub fn scenario_toml(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    check(parse_str(&text, SOURCE, "fuzz", &[]), SOURCE).1
}

/// The bundled scenarios `set_override` applies its `--set` arguments to, by the name a first
/// line `@name` chooses (the first one without it, or for a name not listed). Between them they
/// have every kind of table an index can name: apps and callers, restarts and deploys, peers
/// and zones, `spring-config` files, Spring Cloud LoadBalancer.
const BASES: [(&str, &str, &str); 5] = [
    (
        "kill-9",
        "scenarios/kill-9.toml",
        include_str!("../scenarios/kill-9.toml"),
    ),
    (
        "rolling-deploy",
        "scenarios/rolling-deploy.toml",
        include_str!("../scenarios/rolling-deploy.toml"),
    ),
    (
        "three-peers-two-zones",
        "scenarios/cluster/three-peers-two-zones.toml",
        include_str!("../scenarios/cluster/three-peers-two-zones.toml"),
    ),
    (
        "loadbalancer",
        "scenarios/loadbalancer.toml",
        include_str!("../scenarios/loadbalancer.toml"),
    ),
    (
        "spring",
        "scenarios/spring/kill-15-tuned-5s.toml",
        include_str!("../scenarios/spring/kill-15-tuned-5s.toml"),
    ),
];

/// The Spring files `scenarios/spring/kill-15-tuned-5s.toml` names, as it writes them.
const SPRING_FILES: [(&str, &str); 3] = [
    (
        "eureka-server/application.yml",
        include_str!("../scenarios/spring/eureka-server/application.yml"),
    ),
    (
        "svc/application.properties",
        include_str!("../scenarios/spring/svc/application.properties"),
    ),
    (
        "gateway/application.yml",
        include_str!("../scenarios/spring/gateway/application.yml"),
    ),
];

/// `set_override`: the bytes as lines of text, each one `--set` argument given as is (an empty
/// line too, as a shell passes `--set ''`), applied to a bundled scenario chosen by a first line
/// `@name` (see [`BASES`]).
pub fn set_override(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines().peekable();
    let chosen = lines
        .peek()
        .and_then(|first| first.strip_prefix('@'))
        .map(str::trim);
    let (source, text) = match BASES.iter().find(|(name, _, _)| Some(*name) == chosen) {
        Some(&(_, source, text)) => {
            lines.next();
            (source, text)
        }
        None => (BASES[0].1, BASES[0].2),
    };
    let overrides: Vec<String> = lines.map(str::to_string).collect();
    let scenario = ScenarioSource {
        source: source.to_string(),
        name: "fuzz".to_string(),
        text: text.to_string(),
        spring: SPRING_FILES
            .iter()
            .map(|&(written, text)| (written.to_string(), text.to_string()))
            .collect(),
    };
    check(scenario.parse(&overrides), source).1
}

/// The scenario `spring_import` reads its Spring file through: the server's, an app's and a
/// caller's `spring-config`, the same text each time as YAML for the server and the caller and
/// as .properties for the app, so that one input reaches both readers and both the server's
/// and the clients' keys. Names and the call are written in the tables (which override the
/// files), so the import is what decides the outcome, not a missing name or the one
/// `spring.application.name` given to the server and the caller alike.
const SPRING_SCENARIO: &str = r#"[simulation]
duration-s = 600
trials = 1

[server]
spring-config = "server.yml"
spring.application.name = "eureka-server"

[[app]]
name = "svc"
spring-config = "svc.properties"
instances = 3

[[caller]]
name = "gateway"
spring-config = "gateway.yml"
calls = "svc"
rate-per-s = 5

[[shutdown]]
instance = "svc-0"
at-s = 300
strategy = "kill-15"
"#;

/// `spring_import`: the bytes as one Spring file (invalid UTF-8 replaced), imported as
/// application.yml and as application.properties by [`SPRING_SCENARIO`].
pub fn spring_import(data: &[u8]) -> Outcome {
    let file = String::from_utf8_lossy(data).into_owned();
    let spring: BTreeMap<String, String> = ["server.yml", "svc.properties", "gateway.yml"]
        .into_iter()
        .map(|written| (written.to_string(), file.clone()))
        .collect();
    let scenario = ScenarioSource {
        source: SOURCE.to_string(),
        name: "fuzz".to_string(),
        text: SPRING_SCENARIO.to_string(),
        spring,
    };
    check(scenario.parse(&[]), SOURCE).1
}

/// The most queue events [`short_run`] simulates by its estimate ([`trial_cost`]): about a
/// second of an instrumented fuzz build at most (a few million events a second; the estimate
/// is several times the events a trial handles), so that the fuzzer's `-timeout=10` flags a
/// real hang, not a big world.
pub const MAX_EVENTS: f64 = 2e7;
/// The most processes (servers, app instances, callers) [`short_run`] simulates: memory grows
/// with them (the issue measured 5 GB for 3 trials of 10 000 instances).
pub const MAX_PROCESSES: f64 = 300.0;

/// `short_run`: [`scenario_toml`], then one trial of what it accepts, unless the trial would
/// be large ([`trial_cost`] above [`MAX_EVENTS`] or [`MAX_PROCESSES`]): the fuzzer looks for
/// panics and hangs in the model on small worlds, not for the cost of big ones, which is the
/// resource budget's job.
pub fn short_run(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let (scenario, outcome) = check(parse_str(&text, SOURCE, "fuzz", &[]), SOURCE);
    let Some(scenario) = scenario else {
        return outcome;
    };
    let cost = trial_cost(&scenario, RequestMode::Batched);
    if cost.events_max as f64 > MAX_EVENTS || fleet(&scenario) as f64 > MAX_PROCESSES {
        return Outcome::Skipped;
    }
    let outcome = simulate(&scenario, 0, trial_seed(scenario.simulation.seed, 0));
    // The budget's guard: a trial far beyond its estimate is a finding (of the model or of the
    // estimate), as a panic is.
    assert_eq!(
        outcome.over_event_limit, None,
        "the trial stopped at its event limit ({} events; estimated at most {})",
        outcome.events, cost.events_max
    );
    assert_eq!(
        outcome.shutdowns.len(),
        scenario.shutdowns.len(),
        "one outcome per [[shutdown]]"
    );
    let cap = (scenario.simulation.max_duration_ms).max(scenario.simulation.duration_ms);
    assert!(
        outcome.end_ms <= cap,
        "the trial ended at {} ms, after max-duration-s ({cap} ms)",
        outcome.end_ms
    );
    Outcome::Simulated {
        events: outcome.events,
    }
}

/// The scenario if `result` accepted it, and the outcome; panics if it refused it with a
/// message that does not start with where the problem is.
fn check(result: Result<Scenario, ScenarioError>, source: &str) -> (Option<Scenario>, Outcome) {
    match result {
        Ok(scenario) => (Some(scenario), Outcome::Accepted),
        Err(e) => {
            check_refusal(&e, source);
            (None, Outcome::Refused(e.to_string()))
        }
    }
}

/// Every problem of `e` is located: its message starts with the scenario file (`fuzz.toml:3:1`,
/// `fuzz.toml (--set ...)`) or with the Spring file of one of its `spring-config`s
/// (`svc.properties:2:1 (spring-config of fuzz.toml)`).
fn check_refusal(e: &ScenarioError, source: &str) {
    if let ScenarioError::Many(problems) = e {
        assert!(
            problems.len() >= 2,
            "a list of {} problem(s)",
            problems.len()
        );
        for problem in problems {
            check_refusal(problem, source);
        }
        return;
    }
    let message = e.to_string();
    let spring = format!("(spring-config of {source})");
    assert!(
        message.starts_with(source) || message.contains(&spring),
        "a refusal that does not start with where the problem is: {message}"
    );
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::scenario::ScenarioSource;

    /// Every `*.toml` under `dir`, sorted.
    fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                toml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
        out.sort();
    }

    /// `short_run` is only worth its time if it simulates what users write: every bundled
    /// scenario is under its bounds, and the estimate is above the events its trial handles
    /// (the estimate is what keeps fuzzed worlds small; an estimate below reality would let the
    /// fuzzer's timeout fire on large worlds instead of hangs).
    #[test]
    fn short_run_simulates_every_bundled_scenario_within_its_estimate() {
        let mut files = Vec::new();
        toml_files(Path::new("scenarios"), &mut files);
        assert!(files.len() > 30, "{} scenario files", files.len());
        for path in files {
            let scenario = ScenarioSource::read(&path).unwrap().parse(&[]).unwrap();
            let cost = trial_cost(&scenario, RequestMode::Batched);
            let at = path.display();
            assert!(cost.events_max as f64 <= MAX_EVENTS, "{at}: {cost:?}");
            assert!(fleet(&scenario) as f64 <= MAX_PROCESSES, "{at}");
            let trial = simulate(&scenario, 0, trial_seed(scenario.simulation.seed, 0));
            assert!(
                trial.events <= cost.events_max,
                "{at}: {} events, estimated {cost:?}",
                trial.events
            );
        }
    }

    #[test]
    fn short_run_skips_a_large_world_and_simulates_a_small_one() {
        let kill9 = include_str!("../scenarios/kill-9.toml");
        // Simulated for real: its 20 instances' heartbeats alone (a timer and a renew every
        // 30 s) are 400 events before the stop at 300 s.
        assert!(matches!(
            short_run(kill9.as_bytes()),
            Outcome::Simulated { events } if events > 400
        ));
        let fleet = kill9.replace("instances = 20", "instances = 10000");
        assert_eq!(short_run(fleet.as_bytes()), Outcome::Skipped);
        let often = kill9.replace(
            "eviction-interval-timer-in-ms = 60000",
            "eviction-interval-timer-in-ms = 1",
        );
        assert_eq!(short_run(often.as_bytes()), Outcome::Skipped);
    }

    /// `@name` chooses the base: kill-9.toml has no `[[deploy]]` for `deploy[0]` to name,
    /// rolling-deploy.toml has.
    #[test]
    fn set_override_applies_its_lines_to_the_base_its_first_line_names() {
        assert_eq!(set_override(b"simulation.trials=3\n"), Outcome::Accepted);
        assert!(matches!(
            set_override(b"deploy[0].batch-size=1"),
            Outcome::Refused(m) if m.starts_with("scenarios/kill-9.toml (--set deploy[0]")
        ));
        assert_eq!(
            set_override(b"@rolling-deploy\ndeploy[0].batch-size=1"),
            Outcome::Accepted
        );
        assert_eq!(set_override(b"@spring\n"), Outcome::Accepted);
    }

    /// The bundled gateway file is accepted as both formats; a placeholder that resolves to
    /// nothing is refused at its line in the Spring file.
    #[test]
    fn spring_import_reads_the_input_as_each_table_s_file() {
        let gateway = include_str!("../scenarios/spring/gateway/application.yml");
        assert_eq!(spring_import(gateway.as_bytes()), Outcome::Accepted);
        assert!(matches!(
            spring_import(b"eureka.client.registry-fetch-interval-seconds=${nowhere}\n"),
            Outcome::Refused(m) if m.contains("(spring-config of fuzz.toml)")
        ));
    }

    /// The property the targets hold refusals to can fail: a message that does not start with
    /// the file it is about.
    #[test]
    #[should_panic(expected = "does not start with where the problem is")]
    fn a_refusal_without_its_place_fails_the_target() {
        check_refusal(
            &ScenarioError::NoScenarios {
                path: "elsewhere".into(),
            },
            SOURCE,
        );
    }
}
