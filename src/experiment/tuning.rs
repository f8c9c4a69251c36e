//! The settings `eureka-sim serve`'s page tunes, and the progressive runs behind it: which keys
//! the page's controls set, how a page's query becomes `--set` assignments on the scenario's
//! own text, the defaults of the chosen release, and the trials of a setting run in growing
//! chunks (a quick estimate first) against the scenario's baseline on the same seeds.
//!
//! Every setting is a `--set` assignment of a scenario key, parsed by the one scenario parser:
//! the page's scenario is exactly what `eureka-sim run SCENARIO --set ...` runs, and a figure of
//! the page is the CLI's for the same settings and seed.

use std::ops::Range;

use crate::eureka::RequestMode;
use crate::scenario::{
    BalancerKind, Scenario, ScenarioError, ScenarioSource, Strategy, Train, key_catalogue,
};

use super::TrialOutcome;

/// Whose `application.yml` a control's key belongs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The Eureka server (`[server]`).
    Server,
    /// The instances that register and may stop (`[[app]]`).
    Services,
    /// The processes that fetch the registry and route requests (`[[caller]]`).
    Callers,
    /// How the instance stops and the release train: scenario keys, not Spring's.
    Scenario,
    /// The run itself: trials and seed.
    Run,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Server,
        Role::Services,
        Role::Callers,
        Role::Scenario,
        Role::Run,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Services => "services",
            Role::Callers => "callers",
            Role::Scenario => "scenario",
            Role::Run => "run",
        }
    }
}

/// Which tables a control's `--set` assignment names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// `simulation.<key>`.
    Simulation,
    /// `server.<key>`: the standalone server and the base of every `[[peer]]`.
    Server,
    /// `app[*].<key>`: every `[[app]]`, over `[clients]`.
    EveryApp,
    /// `app[k].<key>`, `k` the app of the first `[[shutdown]]`.
    StoppedApp,
    /// `caller[*].<key>`: every `[[caller]]`, over `[clients]`.
    EveryCaller,
    /// `shutdown[*].<key>`.
    EveryShutdown,
}

/// What a control accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum ValueKind {
    /// A whole number; `min..=max` is the slider's range (the parser checks the key's own).
    Number {
        min: u64,
        max: u64,
        step: u64,
    },
    Bool,
    /// One of [`Control::choices`].
    Choice,
}

/// One control of the page: a scenario key, where it is set, and how to read its value back
/// from a validated scenario.
#[derive(Debug)]
pub struct Control {
    /// The page's and the query's name (`fetch`).
    pub id: &'static str,
    pub label: &'static str,
    pub role: Role,
    /// The key as a scenario or an `application.yml` spells it.
    pub key: &'static str,
    /// The unit a number is in (`ms`, `s`), empty for the others.
    pub unit: &'static str,
    pub kind: ValueKind,
    target: Target,
    /// The value in `scenario` as the key writes it; `None` where the control does not apply
    /// (the Ribbon refresh of callers that use Spring Cloud LoadBalancer).
    read: fn(&Scenario) -> Option<String>,
}

fn first_caller(s: &Scenario) -> Option<&crate::scenario::CallerConfig> {
    s.callers.first()
}

fn stopped_app(s: &Scenario) -> Option<&crate::scenario::AppConfig> {
    s.apps.get(s.shutdowns.first()?.app)
}

/// The first caller's balancer: a balancer's control applies only to its callers.
fn balancer(s: &Scenario) -> Option<BalancerKind> {
    first_caller(s).map(|c| c.balancer(&s.simulation.release))
}

/// The controls, in the page's order.
pub static CONTROLS: &[Control] = &[
    Control {
        id: "cache-update",
        label: "read-only cache update interval",
        role: Role::Server,
        key: "eureka.server.response-cache-update-interval-ms",
        unit: "ms",
        kind: ValueKind::Number {
            min: 1000,
            max: 60_000,
            step: 1000,
        },
        target: Target::Server,
        read: |s| Some(s.server.response_cache_update_interval_ms.to_string()),
    },
    Control {
        id: "eviction",
        label: "eviction timer",
        role: Role::Server,
        key: "eureka.server.eviction-interval-timer-in-ms",
        unit: "ms",
        kind: ValueKind::Number {
            min: 1000,
            max: 120_000,
            step: 1000,
        },
        target: Target::Server,
        read: |s| Some(s.server.eviction_interval_ms.to_string()),
    },
    Control {
        id: "self-preservation",
        label: "self-preservation",
        role: Role::Server,
        key: "eureka.server.enable-self-preservation",
        unit: "",
        kind: ValueKind::Bool,
        target: Target::Server,
        read: |s| Some(s.server.enable_self_preservation.to_string()),
    },
    Control {
        id: "lease-renewal",
        label: "lease renewal interval",
        role: Role::Services,
        key: "eureka.instance.lease-renewal-interval-in-seconds",
        unit: "s",
        kind: ValueKind::Number {
            min: 1,
            max: 60,
            step: 1,
        },
        target: Target::EveryApp,
        read: |s| Some(stopped_app(s)?.client.lease_renewal_interval_s.to_string()),
    },
    Control {
        id: "lease-expiration",
        label: "lease expiration duration",
        role: Role::Services,
        key: "eureka.instance.lease-expiration-duration-in-seconds",
        unit: "s",
        kind: ValueKind::Number {
            min: 1,
            max: 300,
            step: 1,
        },
        target: Target::EveryApp,
        read: |s| {
            Some(
                stopped_app(s)?
                    .client
                    .lease_expiration_duration_s
                    .to_string(),
            )
        },
    },
    Control {
        id: "fetch",
        label: "registry fetch interval",
        role: Role::Callers,
        key: "eureka.client.registry-fetch-interval-seconds",
        unit: "s",
        kind: ValueKind::Number {
            min: 1,
            max: 60,
            step: 1,
        },
        target: Target::EveryCaller,
        read: |s| {
            Some(
                first_caller(s)?
                    .client
                    .registry_fetch_interval_s
                    .to_string(),
            )
        },
    },
    Control {
        id: "ribbon-refresh",
        label: "Ribbon server list refresh",
        role: Role::Callers,
        key: "ribbon.ServerListRefreshInterval",
        unit: "ms",
        kind: ValueKind::Number {
            min: 1000,
            max: 60_000,
            step: 1000,
        },
        target: Target::EveryCaller,
        read: |s| {
            let caller = first_caller(s)?;
            let target = caller.calls.first()?;
            (balancer(s)? == BalancerKind::Ribbon)
                .then(|| target.ribbon.server_list_refresh_interval_ms.to_string())
        },
    },
    Control {
        id: "lb-ttl",
        label: "LoadBalancer cache TTL",
        role: Role::Callers,
        key: "spring.cloud.loadbalancer.cache.ttl",
        unit: "ms",
        kind: ValueKind::Number {
            min: 1000,
            max: 120_000,
            step: 1000,
        },
        target: Target::EveryCaller,
        read: |s| {
            let caller = first_caller(s)?;
            (balancer(s)? == BalancerKind::LoadBalancer)
                .then(|| caller.client.load_balancer.cache_ttl_ms.to_string())
        },
    },
    Control {
        id: "release",
        label: "release train",
        role: Role::Scenario,
        key: "release",
        unit: "",
        kind: ValueKind::Choice,
        target: Target::Simulation,
        read: |s| Some(s.simulation.release.name()),
    },
    Control {
        id: "strategy",
        label: "shutdown strategy",
        role: Role::Scenario,
        key: "strategy",
        unit: "",
        kind: ValueKind::Choice,
        target: Target::EveryShutdown,
        read: |s| Some(s.shutdowns.first()?.strategy.name().to_string()),
    },
    Control {
        id: "wait",
        label: "wait before the stop (pause, service-registry)",
        role: Role::Scenario,
        key: "wait-s",
        unit: "s",
        kind: ValueKind::Number {
            min: 0,
            max: 300,
            step: 5,
        },
        target: Target::EveryShutdown,
        read: |s| Some((s.shutdowns.first()?.wait_ms / 1000).to_string()),
    },
    Control {
        id: "instances",
        label: "fleet size (instances of the stopped app)",
        role: Role::Scenario,
        key: "instances",
        unit: "",
        kind: ValueKind::Number {
            min: 1,
            max: 200,
            step: 1,
        },
        target: Target::StoppedApp,
        read: |s| Some(stopped_app(s)?.instances.to_string()),
    },
    Control {
        id: "trials",
        label: "trials",
        role: Role::Run,
        key: "trials",
        unit: "",
        kind: ValueKind::Number {
            min: 10,
            max: 5000,
            step: 10,
        },
        target: Target::Simulation,
        read: |s| Some(s.simulation.trials.to_string()),
    },
    Control {
        id: "seed",
        label: "seed",
        role: Role::Run,
        key: "seed",
        unit: "",
        kind: ValueKind::Number {
            min: 0,
            max: 1000,
            step: 1,
        },
        target: Target::Simulation,
        read: |s| Some(s.simulation.seed.to_string()),
    },
];

impl Control {
    /// The control named `id`.
    pub fn by_id(id: &str) -> Option<&'static Control> {
        CONTROLS.iter().find(|c| c.id == id)
    }

    /// The scenario table the key is in (`server`, `app`, `caller`, `shutdown`, `simulation`).
    pub fn table(&self) -> &'static str {
        match self.target {
            Target::Simulation => "simulation",
            Target::Server => "server",
            Target::EveryApp | Target::StoppedApp => "app",
            Target::EveryCaller => "caller",
            Target::EveryShutdown => "shutdown",
        }
    }

    /// Which of the [`Control::table`] tables the control sets: `Some(k)` for the `k`-th only
    /// (the stopped app), `None` for every one.
    pub fn table_index(&self, scenario: &Scenario) -> Option<usize> {
        match self.target {
            Target::StoppedApp => Some(scenario.shutdowns.first().map_or(0, |s| s.app)),
            _ => None,
        }
    }

    /// Whether the key is a Ribbon (Archaius) key, matched by its exact spelling; the others
    /// bind the relaxed way.
    pub fn exact_key(&self) -> bool {
        self.key.starts_with("ribbon.")
    }

    /// The key as the page shows it: a Spring key as `application.yml` spells it, a scenario
    /// key with its table (`shutdown.strategy`).
    pub fn shown_key(&self) -> String {
        match self.role {
            Role::Server | Role::Services | Role::Callers => self.key.to_string(),
            Role::Scenario | Role::Run => format!("{}.{}", self.table(), self.key),
        }
    }

    /// The value in `scenario` (`None`: the control does not apply to it).
    pub fn value_in(&self, scenario: &Scenario) -> Option<String> {
        (self.read)(scenario)
    }

    /// The allowed values of a [`ValueKind::Choice`] (the release trains, the strategies), with
    /// `current` among them when it is a service release (`Hoxton.SR9`) rather than a train.
    pub fn choices(&self, current: Option<&str>) -> Vec<String> {
        let mut all: Vec<String> = match self.id {
            "release" => Train::ALL.iter().map(|t| t.name().to_string()).collect(),
            "strategy" => Strategy::ALL.iter().map(|s| s.name().to_string()).collect(),
            _ => Vec::new(),
        };
        if let Some(current) = current
            && !all.iter().any(|c| c == current)
            && !all.is_empty()
        {
            all.push(current.to_string());
        }
        all
    }

    /// The `--set` assignment giving the control `value` in `scenario`.
    pub fn assignment(&self, scenario: &Scenario, value: &str) -> String {
        let table = match self.target {
            Target::Simulation => "simulation".to_string(),
            Target::Server => "server".to_string(),
            Target::EveryApp => "app[*]".to_string(),
            Target::StoppedApp => {
                let app = scenario.shutdowns.first().map_or(0, |s| s.app);
                format!("app[{app}]")
            }
            Target::EveryCaller => "caller[*]".to_string(),
            Target::EveryShutdown => "shutdown[*]".to_string(),
        };
        format!("{table}.{}={value}", self.key)
    }

    /// `value` as the key writes it, or why the control does not take it. Ranges are the
    /// parser's to check (its message names the key and what it allows); this only makes sure
    /// that what reaches the parser is a single value of the right type.
    fn normalize(&self, value: &str, current: Option<&str>) -> Result<String, TuningError> {
        let bad = |expected: String| TuningError::BadValue {
            id: self.id,
            key: self.key,
            value: shorten(value),
            expected,
        };
        match self.kind {
            ValueKind::Number { .. } => value
                .trim()
                .parse::<u64>()
                .map(|n| n.to_string())
                .map_err(|_| bad("a whole number".to_string())),
            ValueKind::Bool => match value.trim() {
                "true" | "false" => Ok(value.trim().to_string()),
                _ => Err(bad("true or false".to_string())),
            },
            ValueKind::Choice => {
                let choices = self.choices(current);
                choices
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(value.trim()))
                    .cloned()
                    .ok_or_else(|| bad(format!("one of {}", choices.join(", "))))
            }
        }
    }
}

/// A user-given value cut for a message.
fn shorten(value: &str) -> String {
    if value.chars().count() > 40 {
        let head: String = value.chars().take(40).collect();
        format!("{head}... ({} characters)", value.chars().count())
    } else {
        value.to_string()
    }
}

/// Why a page's settings cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum TuningError {
    #[error("unknown setting `{name}`; the settings are: {allowed}")]
    UnknownSetting { name: String, allowed: String },
    #[error("setting `{id}` ({key}) given twice")]
    Twice { id: &'static str, key: &'static str },
    #[error("setting `{id}` ({key}): `{value}` is not {expected}")]
    BadValue {
        id: &'static str,
        key: &'static str,
        value: String,
        expected: String,
    },
    #[error("setting `{id}` ({key}) does not apply to this scenario ({why})")]
    NotApplicable {
        id: &'static str,
        key: &'static str,
        why: &'static str,
    },
    #[error(
        "the page needs a scenario with a [[shutdown]] of an instance, an [[app]] and a [[caller]]"
    )]
    NoShutdown,
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
}

/// The values a page set, in [`CONTROLS`] order: those that differ from the scenario's (a
/// value equal to the scenario's is no change, so the baseline itself has no assignment).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: Vec<(&'static Control, String)>,
}

impl Settings {
    /// Reads `pairs` (a query's `name=value` pairs) against the scenario as written (`base`).
    ///
    /// A control applies, and has its current value, in the scenario of the release the
    /// settings choose (`reference`: `base` with the page's release, where the balancer of
    /// the callers follows the train); the release itself is compared with `base`'s.
    pub fn from_pairs(
        pairs: &[(String, String)],
        base: &Scenario,
        reference: &Scenario,
    ) -> Result<Settings, TuningError> {
        let mut values: Vec<(&'static Control, String)> = Vec::new();
        for (name, value) in pairs {
            let control = Control::by_id(name).ok_or_else(|| TuningError::UnknownSetting {
                name: shorten(name),
                allowed: CONTROLS.iter().map(|c| c.id).collect::<Vec<_>>().join(", "),
            })?;
            if values.iter().any(|(c, _)| c.id == control.id) {
                return Err(TuningError::Twice {
                    id: control.id,
                    key: control.key,
                });
            }
            let scenario = if control.id == "release" {
                base
            } else {
                reference
            };
            let current = control.value_in(scenario);
            let Some(current) = current else {
                return Err(TuningError::NotApplicable {
                    id: control.id,
                    key: control.key,
                    why: not_applicable(control),
                });
            };
            let value = control.normalize(value, Some(&current))?;
            if value != current {
                values.push((control, value));
            }
        }
        values.sort_by_key(|(c, _)| CONTROLS.iter().position(|x| x.id == c.id));
        Ok(Settings { values })
    }

    /// The value set for `id`, if it differs from the scenario's.
    pub fn get(&self, id: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(c, _)| c.id == id)
            .map(|(_, v)| v.as_str())
    }

    /// The changed controls and their values, in page order.
    pub fn changed(&self) -> impl Iterator<Item = (&'static Control, &str)> {
        self.values.iter().map(|(c, v)| (*c, v.as_str()))
    }

    /// The settings as a query string (`fetch=5&strategy=kill-15`), the page's shareable URL.
    pub fn query(&self) -> String {
        self.values
            .iter()
            .map(|(c, v)| format!("{}={}", c.id, v))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The `--set` assignments of every changed control, in page order.
    pub fn overrides(&self, base: &Scenario) -> Vec<String> {
        self.values
            .iter()
            .map(|(c, v)| c.assignment(base, v))
            .collect()
    }

    /// The `--set` assignments of the run controls only (trials, seed): the baseline's, so that
    /// the baseline runs the same trials on the same seeds (common random numbers).
    pub fn baseline_overrides(&self, base: &Scenario) -> Vec<String> {
        self.values
            .iter()
            .filter(|(c, _)| c.role == Role::Run)
            .map(|(c, v)| c.assignment(base, v))
            .collect()
    }
}

fn not_applicable(control: &Control) -> &'static str {
    match control.id {
        "ribbon-refresh" => "its callers use Spring Cloud LoadBalancer: set lb-ttl",
        "lb-ttl" => "its callers use Ribbon: set ribbon-refresh",
        _ => "it has no such table",
    }
}

/// A setting ready to run: the scenario with the settings, and the baseline (the scenario as
/// written, with the same trials and seed).
#[derive(Debug, Clone)]
pub struct Tuned {
    pub settings: Settings,
    /// The `--set` assignments that make `current` from the file.
    pub overrides: Vec<String>,
    pub current: Scenario,
    pub baseline: Scenario,
}

/// Reads the page's `pairs` for the scenario in `source` (`base` is its parse without
/// overrides) and validates the result with the scenario parser.
pub fn tune(
    source: &ScenarioSource,
    base: &Scenario,
    pairs: &[(String, String)],
) -> Result<Tuned, TuningError> {
    if base.shutdowns.is_empty() || base.callers.is_empty() {
        return Err(TuningError::NoShutdown);
    }
    // The release first: which controls apply (Ribbon or LoadBalancer) follows it.
    let chosen: Vec<(String, String)> = pairs
        .iter()
        .filter(|(k, _)| k == "release")
        .cloned()
        .collect();
    let reference = if chosen.is_empty() {
        base.clone()
    } else {
        let release = Settings::from_pairs(&chosen, base, base)?;
        source.parse(&release.overrides(base))?
    };
    let settings = Settings::from_pairs(pairs, base, &reference)?;
    let overrides = settings.overrides(base);
    let current = source.parse(&overrides)?;
    let baseline = source.parse(&settings.baseline_overrides(base))?;
    Ok(Tuned {
        settings,
        overrides,
        current,
        baseline,
    })
}

/// The value of every control in a scenario of `release` that sets nothing else: the defaults
/// of that release, read from the model itself (one parse of a minimal scenario), so the page
/// shows what the parser would use. `None` for a control that does not apply.
pub fn release_defaults(release: &str) -> Result<Vec<(&'static str, Option<String>)>, TuningError> {
    let text = format!(
        "[simulation]\nrelease = \"{}\"\n\n[[app]]\nname = \"svc\"\ninstances = 2\n\n\
         [[caller]]\nname = \"gateway\"\ncalls = \"svc\"\n\n\
         [[shutdown]]\ninstance = \"svc-0\"\nat-s = 1\nstrategy = \"kill-9\"\n",
        release.replace(['"', '\\'], "")
    );
    let scenario = crate::scenario::parse_str(&text, "(defaults)", "defaults", &[])?;
    let catalogue = key_catalogue();
    Ok(CONTROLS
        .iter()
        .map(|c| {
            let value = match c.role {
                Role::Server | Role::Services | Role::Callers => c.value_in(&scenario),
                // Scenario and run keys: the documented default, where there is one.
                Role::Scenario | Role::Run => catalogue
                    .iter()
                    .find(|d| d.table == c.table() && d.key == c.key && d.value.is_some())
                    .and_then(|d| d.value.clone())
                    .map(|v| v.trim_matches('"').to_string()),
            };
            (c.id, value)
        })
        .collect())
}

/// The trial ranges of a progressive run of `total` trials: a first chunk of `first` (at least
/// 1), then chunks doubling, so a quick estimate comes first and the number of summaries
/// computed grows only with the logarithm of the trials.
pub fn chunks(total: u32, first: u32) -> Vec<Range<u32>> {
    let mut out = Vec::new();
    let mut start = 0u32;
    let mut size = first.max(1);
    while start < total {
        let end = start.saturating_add(size).min(total);
        out.push(start..end);
        start = end;
        size = size.saturating_mul(2);
    }
    out
}

/// How many trials the first chunk runs so that it takes about `target_s` seconds at
/// `seconds_per_trial`: at least 1, at most `cap`.
pub fn first_chunk(seconds_per_trial: f64, target_s: f64, cap: u32) -> u32 {
    if seconds_per_trial.is_nan() || seconds_per_trial <= 0.0 {
        return cap.max(1);
    }
    let n = (target_s / seconds_per_trial).floor();
    (n.min(f64::from(cap)) as u32).max(1)
}

/// A progressive run's outcomes so far: the current setting's and the baseline's trials
/// `0..done`, each trial on the seed `trial_seed(seed, k)` in both (common random numbers).
#[derive(Debug, Clone, Default)]
pub struct Progress {
    pub current: Vec<TrialOutcome>,
    pub baseline: Vec<TrialOutcome>,
}

impl Progress {
    /// Trials done in both.
    pub fn done(&self) -> usize {
        self.current.len().min(self.baseline.len())
    }

    /// Runs the trials `range` of both scenarios (the baseline's from `cached` where it holds
    /// them already) and appends them.
    pub fn extend(
        &mut self,
        tuned: &Tuned,
        range: Range<u32>,
        mode: RequestMode,
        cached_baseline: &[TrialOutcome],
    ) {
        let none = &|| {};
        let current = super::run_trial_range(&tuned.current, range.clone(), mode, none);
        self.current.extend(current);
        let cached = cached_baseline
            .get(range.start as usize..range.end as usize)
            .filter(|c| c.len() == range.len());
        match cached {
            Some(c) => self.baseline.extend_from_slice(c),
            None => {
                let baseline = super::run_trial_range(&tuned.baseline, range, mode, none);
                self.baseline.extend(baseline);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kill9() -> (ScenarioSource, Scenario) {
        let source = ScenarioSource::read(std::path::Path::new("scenarios/kill-9.toml")).unwrap();
        let base = source.parse(&[]).unwrap();
        (source, base)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn every_control_reads_the_value_its_assignment_sets() {
        // Set each control to a value other than kill-9.toml's through its own assignment and
        // read it back from the parsed scenario: the `read` and `target` of a control agree.
        let (source, base) = kill9();
        for control in CONTROLS {
            let Some(now) = control.value_in(&base) else {
                assert_eq!(control.id, "lb-ttl", "kill-9.toml's gateway uses Ribbon");
                continue;
            };
            let other = match control.kind {
                ValueKind::Number { .. } => (now.parse::<u64>().unwrap() + 7).to_string(),
                ValueKind::Bool => (now != "true").to_string(),
                ValueKind::Choice => control
                    .choices(Some(&now))
                    .into_iter()
                    .find(|c| *c != now && c != "2025.1")
                    .unwrap(),
            };
            let set = control.assignment(&base, &other);
            let scenario = source
                .parse(std::slice::from_ref(&set))
                .unwrap_or_else(|e| panic!("{set}: {e}"));
            assert_eq!(
                control.value_in(&scenario).as_deref(),
                Some(other.as_str()),
                "{set}"
            );
        }
    }

    #[test]
    fn a_value_equal_to_the_scenarios_is_no_change() {
        let (_, base) = kill9();
        let settings = Settings::from_pairs(
            &pairs(&[("fetch", "30"), ("strategy", "kill-15")]),
            &base,
            &base,
        )
        .unwrap();
        assert_eq!(settings.query(), "strategy=kill-15");
        assert_eq!(settings.overrides(&base), ["shutdown[*].strategy=kill-15"]);
        assert!(settings.baseline_overrides(&base).is_empty());
    }

    #[test]
    fn settings_come_out_in_page_order_whatever_the_query_order() {
        let (_, base) = kill9();
        let settings = Settings::from_pairs(
            &pairs(&[("seed", "7"), ("fetch", "5"), ("cache-update", "5000")]),
            &base,
            &base,
        )
        .unwrap();
        assert_eq!(settings.query(), "cache-update=5000&fetch=5&seed=7");
        assert_eq!(
            settings.overrides(&base),
            [
                "server.eureka.server.response-cache-update-interval-ms=5000",
                "caller[*].eureka.client.registry-fetch-interval-seconds=5",
                "simulation.seed=7"
            ]
        );
        assert_eq!(settings.baseline_overrides(&base), ["simulation.seed=7"]);
    }

    #[test]
    fn bad_settings_name_the_setting_and_what_it_takes() {
        let (source, base) = kill9();
        let err =
            |list: &[(&str, &str)]| tune(&source, &base, &pairs(list)).unwrap_err().to_string();
        assert!(err(&[("fetchh", "5")]).contains("unknown setting `fetchh`"));
        assert!(err(&[("fetch", "five")]).contains("`five` is not a whole number"));
        assert!(err(&[("fetch", "5"), ("fetch", "6")]).contains("given twice"));
        assert!(err(&[("strategy", "kill-8")]).contains("one of kill-9, kill-15"));
        assert!(err(&[("lb-ttl", "5000")]).contains("use Ribbon"));
        // Ranges are the parser's: its message names the key and what it allows.
        let zero = err(&[("fetch", "0")]);
        assert!(zero.contains("registry-fetch-interval-seconds"), "{zero}");
        assert!(zero.contains("1..=86400"), "{zero}");
    }

    #[test]
    fn a_release_without_ribbon_takes_the_loadbalancer_ttl() {
        // Spring Cloud 2020.0 removed Ribbon: on kill-9.toml (Hoxton, Ribbon) the page's
        // release 2020.0 makes the LoadBalancer TTL a setting, and the Ribbon refresh none.
        let (source, base) = kill9();
        let list = pairs(&[("lb-ttl", "5000"), ("release", "2020.0")]);
        let tuned = tune(&source, &base, &list).unwrap();
        assert_eq!(tuned.settings.query(), "lb-ttl=5000&release=2020.0");
        assert_eq!(
            Control::by_id("lb-ttl")
                .unwrap()
                .value_in(&tuned.current)
                .as_deref(),
            Some("5000")
        );
        let ribbon = pairs(&[("ribbon-refresh", "5000"), ("release", "2020.0")]);
        let err = tune(&source, &base, &ribbon).unwrap_err().to_string();
        assert!(err.contains("Spring Cloud LoadBalancer"), "{err}");
    }

    #[test]
    fn release_defaults_follow_the_train() {
        // Spring Cloud 2020.0 removed Ribbon (spring-cloud-netflix 3.0): its callers use
        // Spring Cloud LoadBalancer, whose cache TTL defaults to 35 s
        // (LoadBalancerCacheProperties#ttl); Hoxton's use Ribbon, refreshing every 30 s
        // (CommonClientConfigKey.ServerListRefreshInterval, DefaultClientConfigImpl).
        let hoxton = release_defaults("Hoxton").unwrap();
        let y2020 = release_defaults("2020.0").unwrap();
        let get = |d: &[(&str, Option<String>)], id: &str| {
            d.iter().find(|(i, _)| *i == id).unwrap().1.clone()
        };
        assert_eq!(get(&hoxton, "ribbon-refresh").as_deref(), Some("30000"));
        assert_eq!(get(&hoxton, "lb-ttl"), None);
        assert_eq!(get(&y2020, "ribbon-refresh"), None);
        assert_eq!(get(&y2020, "lb-ttl").as_deref(), Some("35000"));
        // Eureka's own defaults (EurekaServerConfigBean, EurekaInstanceConfigBean,
        // EurekaClientConfigBean).
        assert_eq!(get(&hoxton, "cache-update").as_deref(), Some("30000"));
        assert_eq!(get(&hoxton, "eviction").as_deref(), Some("60000"));
        assert_eq!(get(&hoxton, "lease-renewal").as_deref(), Some("30"));
        assert_eq!(get(&hoxton, "lease-expiration").as_deref(), Some("90"));
        assert_eq!(get(&hoxton, "fetch").as_deref(), Some("30"));
        assert_eq!(get(&hoxton, "self-preservation").as_deref(), Some("true"));
        assert_eq!(get(&hoxton, "wait").as_deref(), Some("0"));
    }

    #[test]
    fn chunks_double_and_cover_the_trials_once() {
        assert_eq!(chunks(100, 10), [0..10, 10..30, 30..70, 70..100]);
        assert_eq!(chunks(5, 10), vec![0..5]);
        assert_eq!(chunks(3, 0), [0..1, 1..3]);
        assert!(chunks(0, 10).is_empty());
        assert_eq!(first_chunk(0.01, 0.25, 50), 25);
        assert_eq!(first_chunk(10.0, 0.25, 50), 1);
        assert_eq!(first_chunk(0.0, 0.25, 50), 50);
    }

    #[test]
    fn progressive_outcomes_are_the_whole_runs() {
        // Chunked trials are the trials of one run (trial k on trial_seed(seed, k) whatever the
        // chunk), for the setting and for its baseline, cached or not.
        let (source, base) = kill9();
        let tuned = tune(&source, &base, &pairs(&[("trials", "12"), ("fetch", "5")])).unwrap();
        let mode = RequestMode::Batched;
        let mut progress = Progress::default();
        for range in chunks(12, 3) {
            progress.extend(&tuned, range, mode, &[]);
        }
        let whole = super::super::run_trials_with(&tuned.current, mode, &|| {});
        let baseline = super::super::run_trials_with(&tuned.baseline, mode, &|| {});
        assert_eq!(progress.current, whole);
        assert_eq!(progress.baseline, baseline);
        let mut again = Progress::default();
        for range in chunks(12, 5) {
            again.extend(&tuned, range, mode, &baseline);
        }
        assert_eq!(again.baseline, baseline);
        assert_eq!(again.done(), 12);
    }
}
