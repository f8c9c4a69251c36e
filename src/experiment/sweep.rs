//! Sweeping scenario keys over a grid of values, with common random numbers.
//!
//! A sweep varies one or more scenario keys (`--vary KEY=V1,V2,...`, the same dotted paths as
//! `--set`) and runs the scenario at every point of the grid they span. Every point keeps the
//! scenario's seed, so trial `k` has the same trial seed and the same per-actor random streams
//! at every point (see [`super::compare`] for why that matters): a difference between two points
//! is due to the setting, not to a different draw.
//!
//! The grid is the Cartesian product of the values, the first `--vary` varying slowest (row-major
//! order, as the points are printed and written). A point is applied as `--set KEY=VALUE`
//! overrides after the user's own, so a varied key wins over a `--set` of the same key.
//!
//! [`plan_sweep`] validates every value and every point before any trial runs; [`run_sweep`]
//! runs them, deterministically.

use std::fmt;

use crate::eureka::RequestMode;
use crate::scenario::{Scenario, ScenarioError};

use super::compare::{ShutdownStats, shutdown_stats};
use super::{Stats, run_trials_with};
use crate::scenario::Metric;

/// One `--vary KEY=V1,V2,...`: a scenario key and the values it takes, in order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Vary {
    /// The dotted path as given (`server.eureka.server.response-cache-update-interval-ms`).
    pub key: String,
    /// The values as given (TOML values or bare words, as for `--set`).
    pub values: Vec<String>,
}

impl Vary {
    /// Parses `KEY=V1,V2,...`. Values are separated by commas outside brackets and quotes, so
    /// an array value (`caller[0].calls=["a","b"],["a"]`) stays whole. Rejects a missing key, an
    /// empty value and a value given twice.
    pub fn parse(arg: &str) -> Result<Vary, String> {
        let Some((key, values)) = arg.split_once('=') else {
            return Err(format!(
                "`{arg}` is not KEY=V1,V2,... (such as \
                 server.eureka.server.response-cache-update-interval-ms=5000,30000)"
            ));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("`{arg}` names no key: write KEY=V1,V2,..."));
        }
        let values = split_values(values);
        let mut seen: Vec<String> = Vec::new();
        for value in values {
            if value.is_empty() {
                return Err(format!(
                    "`{arg}` has an empty value: separate the values of `{key}` with single commas"
                ));
            }
            if seen.contains(&value) {
                return Err(format!("`{arg}` gives the value `{value}` twice"));
            }
            seen.push(value);
        }
        Ok(Vary {
            key: key.to_string(),
            values: seen,
        })
    }

    /// The argument as it is written back: `KEY=V1,V2`.
    pub fn arg(&self) -> String {
        format!("{}={}", self.key, self.values.join(","))
    }
}

impl std::str::FromStr for Vary {
    type Err = String;

    fn from_str(arg: &str) -> Result<Vary, String> {
        Vary::parse(arg)
    }
}

impl fmt::Display for Vary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.arg())
    }
}

/// Splits at commas that are not inside `[...]`, `{...}` or quotes; trims every part.
fn split_values(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let (mut depth, mut quote) = (0usize, None::<char>);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                parts.push(part.trim().to_string());
                part.clear();
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    parts.push(part.trim().to_string());
    parts
}

/// The key with Spring's relaxed binding undone (case, dashes and underscores dropped), to tell
/// that two spellings name the same key.
fn loose(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Rejects two `--vary` of the same key (also under two spellings of it, such as
/// `responseCacheUpdateIntervalMs` and `response-cache-update-interval-ms`): the later one would
/// silently win at every point.
pub fn check_distinct_keys(varies: &[Vary]) -> Result<(), String> {
    for (i, a) in varies.iter().enumerate() {
        if let Some(b) = varies[..i].iter().find(|b| loose(&b.key) == loose(&a.key)) {
            return Err(format!(
                "`--vary {}` varies the same key as `--vary {}`: give all the values of a key in \
                 one --vary",
                a.arg(),
                b.arg()
            ));
        }
    }
    Ok(())
}

/// One point of the grid: one value per `--vary`, in `--vary` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridPoint {
    pub values: Vec<String>,
}

impl GridPoint {
    /// The `--set` overrides that make this point from the base scenario.
    pub fn overrides(&self, varies: &[Vary]) -> Vec<String> {
        varies
            .iter()
            .zip(&self.values)
            .map(|(v, value)| format!("{}={value}", v.key))
            .collect()
    }

    /// `KEY=VALUE, KEY=VALUE` for messages.
    pub fn describe(&self, varies: &[Vary]) -> String {
        self.overrides(varies).join(", ")
    }
}

/// Every point of the grid, the first key varying slowest. An empty list of keys gives one
/// point (the base scenario).
pub fn expand_grid(varies: &[Vary]) -> Vec<GridPoint> {
    let mut points = vec![GridPoint { values: Vec::new() }];
    for vary in varies {
        points = points
            .into_iter()
            .flat_map(|p| {
                vary.values.iter().map(move |value| {
                    let mut values = p.values.clone();
                    values.push(value.clone());
                    GridPoint { values }
                })
            })
            .collect();
    }
    points
}

/// A value or a point whose scenario is invalid.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// One value of one `--vary` is invalid on its own.
    #[error("--vary {vary}: value `{value}`")]
    Value {
        vary: String,
        value: String,
        #[source]
        source: Box<ScenarioError>,
    },
    /// Every value is valid on its own, but this combination is not (e.g. a shutdown after the
    /// end of a shortened trial).
    #[error("grid point {point}")]
    Point {
        point: String,
        #[source]
        source: Box<ScenarioError>,
    },
}

impl SweepError {
    /// The scenario's own complaint.
    pub fn scenario_error(&self) -> &ScenarioError {
        match self {
            SweepError::Value { source, .. } | SweepError::Point { source, .. } => source,
        }
    }

    /// Splits the error into its context (what the sweep was doing) and the scenario error.
    pub fn into_parts(self) -> (String, ScenarioError) {
        let context = self.to_string();
        match self {
            SweepError::Value { source, .. } | SweepError::Point { source, .. } => {
                (context, *source)
            }
        }
    }
}

/// A point whose scenario was validated: ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPoint {
    pub point: GridPoint,
    pub scenario: Scenario,
}

/// Validates every value of every key on its own (so that a bad value is reported with the
/// `--vary` that gave it), then every point of the grid, before anything runs. `load` validates
/// the base scenario (with the user's own overrides) plus the extra overrides it is given.
pub fn plan_sweep(
    varies: &[Vary],
    mut load: impl FnMut(&[String]) -> Result<Scenario, ScenarioError>,
) -> Result<Vec<PlannedPoint>, SweepError> {
    for vary in varies {
        for value in &vary.values {
            load(&[format!("{}={value}", vary.key)]).map_err(|source| SweepError::Value {
                vary: vary.arg(),
                value: value.clone(),
                source: Box::new(source),
            })?;
        }
    }
    expand_grid(varies)
        .into_iter()
        .map(|point| {
            let scenario = load(&point.overrides(varies)).map_err(|source| SweepError::Point {
                point: point.describe(varies),
                source: Box::new(source),
            })?;
            Ok(PlannedPoint { point, scenario })
        })
        .collect()
}

/// Pairs of points (indices, the first smaller) that give the same scenario: a varied key that
/// has no effect (overridden by a more specific key), two spellings of one value (`5000` and
/// `5_000`), or two `--vary` that name one key in two ways (`app[0]` and `app.svc`). They run
/// the same trials and give the same figures.
pub fn identical_points(plan: &[PlannedPoint]) -> Vec<(usize, usize)> {
    let bare = |s: &Scenario| Scenario {
        warnings: Vec::new(),
        ..s.clone()
    };
    let scenarios: Vec<Scenario> = plan.iter().map(|p| bare(&p.scenario)).collect();
    let mut pairs = Vec::new();
    for j in 0..scenarios.len() {
        if let Some(i) = (0..j).find(|&i| scenarios[i] == scenarios[j]) {
            pairs.push((i, j));
        }
    }
    pairs
}

/// One point's results.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    pub point: GridPoint,
    pub scenario: Scenario,
    /// As [`shutdown_stats`].
    pub stats: Vec<ShutdownStats>,
}

impl PointResult {
    /// The result of point `p` from its outcomes (every trial, in trial order): from
    /// [`run_sweep`], or from `merge` with the points of every shard.
    pub fn of(p: PlannedPoint, outcomes: &[super::TrialOutcome]) -> PointResult {
        PointResult {
            point: p.point,
            stats: shutdown_stats(&p.scenario, outcomes),
            scenario: p.scenario,
        }
    }

    /// The statistics of `metric` for shutdown `shutdown`.
    pub fn get(&self, shutdown: usize, metric: Metric) -> Option<&Stats> {
        super::compare::find_stats(&self.stats, shutdown, metric)
    }
}

/// The results of a sweep, point by point in grid order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub varies: Vec<Vary>,
    pub points: Vec<PointResult>,
}

/// Runs every planned point's trials, one point after the other (each on all cores), calling
/// `on_trial_done` after each trial. Deterministic: the result does not depend on the number of
/// threads. A trial over its event limit fails the sweep ([`super::budget::check_outcomes`]).
pub fn run_sweep(
    varies: &[Vary],
    plan: Vec<PlannedPoint>,
    mode: RequestMode,
    on_trial_done: &(dyn Fn() + Sync),
) -> Result<Sweep, super::budget::BudgetError> {
    let points = plan
        .into_iter()
        .map(|p| {
            let outcomes = run_trials_with(&p.scenario, mode, on_trial_done);
            super::budget::check_outcomes(&outcomes)?;
            Ok(PointResult::of(p, &outcomes))
        })
        .collect::<Result<_, _>>()?;
    Ok(Sweep {
        varies: varies.to_vec(),
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::fixture::{ScenarioText, parse};

    fn vary(arg: &str) -> Vary {
        Vary::parse(arg).unwrap()
    }

    #[test]
    fn vary_arguments_split_at_top_level_commas() {
        let v = vary("server.eureka.server.response-cache-update-interval-ms= 5000, 15000,30000");
        assert_eq!(
            v.key,
            "server.eureka.server.response-cache-update-interval-ms"
        );
        assert_eq!(v.values, ["5000", "15000", "30000"]);
        let v = vary(r#"caller[0].calls=["a","b"],"a,b",['c']"#);
        assert_eq!(v.values, [r#"["a","b"]"#, r#""a,b""#, "['c']"]);
        assert_eq!(vary("simulation.release=Dalston").values, ["Dalston"]);
    }

    #[test]
    fn bad_vary_arguments_say_what_is_wrong() {
        for (arg, expected) in [
            ("server.x", "is not KEY=V1,V2"),
            ("=1,2", "names no key"),
            ("a.b=1,,2", "empty value"),
            ("a.b=", "empty value"),
            ("a.b=1,2,1", "gives the value `1` twice"),
        ] {
            let e = Vary::parse(arg).unwrap_err();
            assert!(e.contains(expected), "{arg}: {e}");
        }
    }

    #[test]
    fn one_key_may_be_varied_once_under_any_spelling() {
        let a = vary("server.eureka.server.response-cache-update-interval-ms=1,2");
        let b = vary("server.eureka.server.responseCacheUpdateIntervalMs=3");
        let c = vary("clients.ribbon.ServerListRefreshInterval=5000");
        assert!(check_distinct_keys(&[a.clone(), c.clone()]).is_ok());
        let e = check_distinct_keys(&[a, c, b]).unwrap_err();
        assert!(e.contains("responseCacheUpdateIntervalMs=3"), "{e}");
    }

    #[test]
    fn the_grid_is_row_major_with_the_first_key_slowest() {
        let varies = [vary("a.x=1,2,3"), vary("b.y=p,q")];
        let grid = expand_grid(&varies);
        let points: Vec<String> = grid.iter().map(|p| p.values.join("/")).collect();
        assert_eq!(points, ["1/p", "1/q", "2/p", "2/q", "3/p", "3/q"]);
        assert_eq!(grid[3].overrides(&varies), ["a.x=2", "b.y=q"]);
        assert_eq!(grid[3].describe(&varies), "a.x=2, b.y=q");
        assert_eq!(expand_grid(&[]).len(), 1);
        let three = [vary("a.x=1,2"), vary("b.y=1,2,3"), vary("c.z=1,2")];
        assert_eq!(expand_grid(&three).len(), 12);
    }

    fn base() -> String {
        ScenarioText::simulation(&["duration-s = 600", "trials = 4"])
            .fleet(20, &[])
            .shutdown("svc-0", 300, "kill-9", &[])
            .text()
    }

    fn load(extra: &[String]) -> Result<Scenario, ScenarioError> {
        parse(&base(), extra)
    }

    #[test]
    fn a_bad_value_is_reported_with_its_vary_argument() {
        let varies = [
            vary("clients.ribbon.ServerListRefreshInterval=5000,30000"),
            vary("server.eureka.server.eviction-interval-timer-in-ms=60000,abc"),
        ];
        let e = plan_sweep(&varies, load).unwrap_err();
        assert!(matches!(e, SweepError::Value { .. }));
        assert_eq!(
            e.to_string(),
            "--vary server.eureka.server.eviction-interval-timer-in-ms=60000,abc: value `abc`"
        );
        assert!(
            e.scenario_error()
                .to_string()
                .contains("expected an integer")
        );
    }

    #[test]
    fn a_bad_combination_is_reported_with_its_point() {
        // Each value is fine with the base's 600 s and 300 s; a 320 s trial cannot hold a
        // shutdown at 330 s.
        let varies = [
            vary("simulation.duration-s=600,320"),
            vary("shutdown[0].at-s=100,330"),
        ];
        let e = plan_sweep(&varies, load).unwrap_err();
        assert_eq!(
            e.to_string(),
            "grid point simulation.duration-s=320, shutdown[0].at-s=330"
        );
    }

    #[test]
    fn points_that_give_the_same_scenario_are_found() {
        let varies = [vary(
            "clients.ribbon.ServerListRefreshInterval=5000,5_000,30000",
        )];
        let plan = plan_sweep(&varies, load).unwrap();
        assert_eq!(plan.len(), 3);
        assert_eq!(identical_points(&plan), [(0, 1)]);
    }

    /// Found by fuzzing: a trial that stops at its event limit fails the sweep, as it fails `run`.
    #[test]
    fn a_trial_over_its_event_limit_fails_the_sweep() {
        let varies = [vary("clients.ribbon.ServerListRefreshInterval=5000,30000")];
        let mut plan = plan_sweep(&varies, load).unwrap();
        plan[1].scenario.simulation.event_limit = Some(50);
        let err = run_sweep(&varies, plan, RequestMode::default(), &|| {}).unwrap_err();
        assert!(
            matches!(
                err,
                crate::experiment::budget::BudgetError::TrialLimit { limit: 50, .. }
            ),
            "{err}"
        );
    }

    #[test]
    fn every_point_runs_with_the_same_seed() {
        let varies = [vary("clients.ribbon.ServerListRefreshInterval=5000,30000")];
        let plan = plan_sweep(&varies, load).unwrap();
        let sweep = run_sweep(&varies, plan.clone(), RequestMode::default(), &|| {}).unwrap();
        assert_eq!(sweep.points.len(), 2);
        for (p, planned) in sweep.points.iter().zip(&plan) {
            let outcomes = crate::experiment::run_trials(&planned.scenario);
            assert_eq!(p.stats, shutdown_stats(&planned.scenario, &outcomes));
            assert_eq!(p.get(0, Metric::DeadHits).unwrap().trials, 4);
        }
        // With the server's timers drawn the same at both points, a 5 s Ribbon refresh shortens
        // the exposure (deterministic: the seed is fixed).
        let mean = |i: usize| {
            sweep.points[i]
                .get(0, Metric::ExposureMs)
                .and_then(|s| s.mean)
                .unwrap()
        };
        assert!(mean(0) < mean(1), "{} vs {}", mean(0), mean(1));
    }
}
