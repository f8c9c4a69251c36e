//! The causal chain of one trial, in words and times (`eureka-sim explain`), and its full trace.

use std::fmt::Write;

use crate::engine::{SimTime, trial_seed};
use crate::eureka::{Layout, Observation, RequestMode, World};
use crate::scenario::{Scenario, Strategy};

use super::{MetricsObserver, ShutdownOutcome};

/// One trial with everything it observed.
pub struct TrialTrace {
    pub trial: u32,
    pub seed: u64,
    pub layout: Layout,
    pub log: Vec<(SimTime, Observation)>,
    /// The same outcomes `run` reports for this trial.
    pub outcomes: Vec<ShutdownOutcome>,
}

/// Runs trial `trial` of the scenario exactly as `run` does (same seed, same request mode) and
/// keeps every observation.
pub fn trace_trial(scenario: &Scenario, trial: u32, mode: RequestMode) -> TrialTrace {
    let seed = trial_seed(scenario.simulation.seed, trial);
    let layout = Layout::new(scenario);
    let observer = (MetricsObserver::new(&layout), Vec::new());
    let world = World::with_mode(scenario, seed, observer, mode);
    let ((metrics, log), _) = world.run();
    TrialTrace {
        trial,
        seed,
        layout,
        log,
        outcomes: metrics.outcomes(),
    }
}

/// One line of an explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub at: SimTime,
    pub text: String,
}

fn secs(t: SimTime) -> String {
    format!("{:.3} s", t.ms() as f64 / 1000.0)
}

fn relative(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    format!("{sign}{:.3} s", ms.unsigned_abs() as f64 / 1000.0)
}

impl TrialTrace {
    fn name(&self, process: usize) -> &str {
        self.layout
            .processes
            .get(process)
            .map_or("?", |p| p.name.as_str())
    }

    fn route_name(&self, scenario: &Scenario, route: usize) -> String {
        match self.layout.routes.get(route) {
            Some(r) => format!(
                "{} -> {}",
                self.name(r.process),
                scenario.apps[r.application].name
            ),
            None => "?".to_string(),
        }
    }

    /// The causal chain of shutdown `s`: what happened to the instance, layer by layer.
    pub fn explain(&self, scenario: &Scenario, s: usize) -> Vec<Step> {
        let Some(config) = scenario.shutdowns.get(s) else {
            return Vec::new();
        };
        let target = self.layout.targets[s];
        let start = SimTime(config.at_ms);
        let mut steps = vec![Step {
            at: start,
            text: strategy_text(
                config.strategy,
                config.wait_ms,
                scenario.simulation.release.pause_deregisters(),
            ),
        }];
        let push = |steps: &mut Vec<Step>, at: SimTime, text: String| {
            steps.push(Step { at, text });
        };
        // The last renew before the strategy started decides when a dead lease can expire.
        let last_renew = self.log.iter().rev().find_map(|(t, o)| match o {
            Observation::Renewed {
                process,
                expirable_from,
            } if *process == target && *t <= start => Some((*t, *expirable_from)),
            _ => None,
        });
        if let Some((renewed, expirable)) = last_renew {
            let duration = expirable.ms().saturating_sub(renewed.ms() + 1) / 2;
            push(
                &mut steps,
                renewed,
                format!(
                    "last heartbeat before that reached the server: renew() stamped the lease \
                     {} (now + {} s), so it is expirable from {}, 2 x {} s after the renew \
                     (Lease#renew adds the duration and isExpired adds it again)",
                    secs(SimTime(renewed.ms() + duration)),
                    duration / 1000,
                    secs(expirable),
                    duration / 1000
                ),
            );
        }
        let expirable = last_renew.map(|(_, e)| e);
        let target_app = self.layout.processes[target].application;
        let callers: Vec<usize> = self
            .layout
            .routes
            .iter()
            .filter(|r| r.application == target_app)
            .map(|r| r.process)
            .collect();
        let mut cancelled_at = None;
        let mut ghost_registered = None;
        let mut gated_after_expiry = 0usize;
        let mut last_gate = None;
        for (t, o) in &self.log {
            let t = *t;
            match o {
                Observation::StoppedServing { process } if *process == target => push(
                    &mut steps,
                    t,
                    "stopped serving: from now every request sent to it is refused".to_string(),
                ),
                Observation::Registered { process, status } if *process == target && t >= start => {
                    let ghost = cancelled_at.is_some_and(|c| c < t);
                    if ghost {
                        ghost_registered = Some(t);
                    }
                    let text = if ghost {
                        format!(
                            "a {status} register arrived AFTER the DELETE and re-created the \
                             lease ({status}, never renewed: expires 90 s later; \
                             spring-cloud-netflix#2101)"
                        )
                    } else {
                        format!(
                            "a register with status {status} reached the server (a new lease; \
                             status changes go out as registers through the \
                             InstanceInfoReplicator)"
                        )
                    };
                    push(&mut steps, t, text);
                }
                Observation::Cancelled { process } if *process == target => {
                    cancelled_at = Some(t);
                    push(
                        &mut steps,
                        t,
                        "the DELETE (unregister) reached the server: lease cancelled".to_string(),
                    );
                }
                Observation::Registry { process, up } if *process == target && t >= start => {
                    let text = if *up {
                        "UP again in the server's registry".to_string()
                    } else {
                        "no longer UP in the server's registry".to_string()
                    };
                    push(&mut steps, t, text);
                }
                Observation::EvictionRun {
                    gated,
                    renews_last_min,
                    threshold,
                    expired,
                    evicted,
                } if expirable.is_some_and(|e| t >= e) && !self.evicted_before(target, t) => {
                    if *gated {
                        gated_after_expiry += 1;
                        last_gate = Some((t, *renews_last_min, *threshold));
                        if gated_after_expiry == 1 {
                            let why = gate_text(*renews_last_min, *threshold);
                            push(&mut steps, t, format!("eviction run: {why}"));
                        }
                    } else if !self.evicted_at(target, t) && *expired > 0 {
                        push(
                            &mut steps,
                            t,
                            format!(
                                "eviction run: {expired} expired lease(s), {evicted} evicted \
                                 (the 15 % cap); this one must wait for the next run"
                            ),
                        );
                    }
                }
                Observation::Evicted { process } if *process == target => {
                    let text = match (ghost_registered, expirable) {
                        (Some(g), _) => format!(
                            "the eviction run removed the re-created lease (registered at {}, \
                             never renewed, so expirable 90 s later)",
                            secs(g)
                        ),
                        (None, Some(e)) => format!(
                            "the eviction run removed the expired lease, {} after it became \
                             expirable",
                            relative(t.since(e))
                        ),
                        (None, None) => "the eviction run removed the expired lease".to_string(),
                    };
                    push(&mut steps, t, text);
                }
                Observation::Served { process, up: false } if *process == target => push(
                    &mut steps,
                    t,
                    if scenario.server.use_read_only_response_cache {
                        "read-only response cache refresh (a wall-clock multiple of its \
                         interval): GET /apps now serves it as not UP"
                            .to_string()
                    } else {
                        "GET /apps serves it as not UP (read-only cache off)".to_string()
                    },
                ),
                Observation::ClientCache {
                    observer,
                    process,
                    up: false,
                } if *process == target && callers.contains(observer) => push(
                    &mut steps,
                    t,
                    format!(
                        "{}'s registry fetch brought the news to its Eureka client cache",
                        self.name(*observer)
                    ),
                ),
                Observation::RibbonList {
                    route,
                    process,
                    listed: false,
                } if *process == target => push(
                    &mut steps,
                    t,
                    format!(
                        "{} of {} dropped it from the server list",
                        balancer_step(scenario, self.layout.routes.get(*route).map(|r| r.caller)),
                        self.route_name(scenario, *route)
                    ),
                ),
                _ => {}
            }
        }
        if let Some((t, renews, threshold)) = last_gate.filter(|_| gated_after_expiry > 1) {
            push(
                &mut steps,
                t,
                format!(
                    "... {gated_after_expiry} eviction runs in all were blocked (the last: {})",
                    gate_text(renews, threshold)
                ),
            );
        }
        steps.sort_by_key(|step| step.at);
        steps
    }

    fn evicted_at(&self, target: usize, at: SimTime) -> bool {
        self.log
            .iter()
            .any(|(t, o)| *t == at && *o == Observation::Evicted { process: target })
    }

    fn evicted_before(&self, target: usize, at: SimTime) -> bool {
        self.log
            .iter()
            .any(|(t, o)| *t < at && *o == Observation::Evicted { process: target })
    }

    /// The explanation as text, times absolute and relative to when the instance stopped serving.
    pub fn render(&self, scenario: &Scenario, s: usize) -> String {
        let mut out = String::new();
        let Some(config) = scenario.shutdowns.get(s) else {
            return out;
        };
        let outcome = self.outcomes.get(s).cloned().unwrap_or_default();
        let _ = writeln!(
            out,
            "trial {} (seed {}) of {}: {} stopped with {} at {} s",
            self.trial,
            self.seed,
            scenario.name,
            config.instance,
            config.strategy.name(),
            config.at_ms as f64 / 1000.0
        );
        let origin = outcome.t_stop_ms.map(SimTime);
        for step in self.explain(scenario, s) {
            let rel = origin.map_or(String::new(), |o| relative(step.at.since(o)));
            let _ = writeln!(out, "  {:>11}  {:>12}  {}", secs(step.at), rel, step.text);
        }
        let _ = writeln!(out, "  result:");
        let ms = |v: Option<i64>| v.map_or("never (still there at the end)".to_string(), relative);
        let _ = writeln!(
            out,
            "    exposure {}, {} dead hit(s), {} error(s), last dead hit {}",
            outcome
                .exposure_ms
                .map_or("unresolved (still listed at the end)".to_string(), relative),
            outcome.dead_hits,
            outcome.errors,
            outcome
                .last_dead_hit_ms
                .map_or("none".to_string(), relative)
        );
        let _ = writeln!(
            out,
            "    left the registry {}, read-only cache {}, callers' caches {}, Ribbon {}",
            ms(outcome.server_removed_ms),
            ms(outcome.readonly_removed_ms),
            ms(outcome.client_removed_ms),
            ms(outcome.ribbon_removed_ms)
        );
        out
    }

    /// The timeline plot of shutdown `s` in this trial: when the instance left each layer, and
    /// its dead hits (each one when the trial ran per request; the last of each count otherwise).
    pub fn timeline(&self, scenario: &Scenario, s: usize) -> crate::report::plot::TimelinePlot {
        let outcome = self.outcomes.get(s).cloned().unwrap_or_default();
        let config = &scenario.shutdowns[s];
        let target = self.layout.targets[s];
        let t_stop = outcome.t_stop_ms.unwrap_or(config.at_ms) as i64;
        let dead_hits: Vec<i64> = self
            .log
            .iter()
            .filter_map(|(t, o)| match o {
                Observation::Attempt {
                    process,
                    dead: true,
                    ..
                } if *process == target => Some(t.ms() as i64 - t_stop),
                Observation::DeadHits { process, last, .. } if *process == target => {
                    Some(last.ms() as i64 - t_stop)
                }
                _ => None,
            })
            .collect();
        let stages = vec![
            (
                format!("{} started", config.strategy.name()),
                Some(config.at_ms as i64 - t_stop),
            ),
            ("left the registry".to_string(), outcome.server_removed_ms),
            (
                "left the read-only cache".to_string(),
                outcome.readonly_removed_ms,
            ),
            (
                "left the callers' Eureka caches".to_string(),
                outcome.client_removed_ms,
            ),
            (
                "left the Ribbon lists".to_string(),
                outcome.ribbon_removed_ms,
            ),
        ];
        let known = stages
            .iter()
            .filter_map(|(_, v)| *v)
            .chain(dead_hits.iter().copied());
        let (lo, hi) = known.fold((0i64, 0i64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let margin = ((hi - lo) / 20).max(5_000);
        crate::report::plot::TimelinePlot {
            title: format!(
                "{}: {} stopped with {} - trial {} (seed {})\n{}, {} dead hit(s); times relative \
                 to when it stopped serving",
                scenario.name,
                config.instance,
                config.strategy.name(),
                self.trial,
                self.seed,
                scenario.simulation.release,
                outcome.dead_hits
            ),
            stages,
            dead_hits,
            x_range: (lo - margin, hi + margin),
        }
    }

    /// Every observation as JSON Lines: `t_ms`, `kind` and the observation's fields, with
    /// process and route names added.
    pub fn to_json_lines(&self, scenario: &Scenario) -> String {
        let mut out = String::new();
        for (t, o) in &self.log {
            let mut value = serde_json::to_value(o).unwrap_or(serde_json::Value::Null);
            if let Some(map) = value.as_object_mut() {
                let mut names = Vec::new();
                for key in ["process", "observer", "first"] {
                    if let Some(id) = map.get(key).and_then(|v| v.as_u64()) {
                        names.push((format!("{key}_name"), self.name(id as usize).to_string()));
                    }
                }
                if let Some(id) = map.get("route").and_then(|v| v.as_u64()) {
                    names.push((
                        "route_name".to_string(),
                        self.route_name(scenario, id as usize),
                    ));
                }
                for (k, v) in names {
                    map.insert(k, serde_json::Value::String(v));
                }
                map.insert("t_ms".to_string(), serde_json::Value::from(t.ms()));
            }
            out.push_str(&value.to_string());
            out.push('\n');
        }
        out
    }

    /// Every observation as CSV: `t_ms,kind,process,detail` (detail = the other fields).
    pub fn to_csv(&self, scenario: &Scenario) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let _ = writer.write_record(["t_ms", "kind", "process", "detail"]);
        for line in self.to_json_lines(scenario).lines() {
            let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(line) else {
                continue;
            };
            let take = |map: &mut serde_json::Map<String, serde_json::Value>, k: &str| {
                map.remove(k).map_or(String::new(), |v| match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                })
            };
            let t = take(&mut map, "t_ms");
            let kind = take(&mut map, "kind");
            let process = take(&mut map, "process_name");
            map.remove("process");
            let detail: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writer.write_record([t, kind, process, detail.join(" ")]);
        }
        let bytes = writer.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// Why an eviction run did nothing (PeerAwareInstanceRegistryImpl#isLeaseExpirationEnabled).
fn gate_text(renews: u64, threshold: i64) -> String {
    if threshold <= 0 {
        format!(
            "the renewal threshold is {threshold}, and a threshold of 0 disables \
             expiry (expected clients 0: Netflix/eureka#1459); isLeaseExpirationEnabled is false"
        )
    } else {
        format!(
            "renews in the last minute {renews} <= threshold {threshold}, so \
             self-preservation keeps every lease (isLeaseExpirationEnabled is false)"
        )
    }
}

/// `pause_deregisters`: `Release::pause_deregisters` (spring-cloud-commons <= 2.2.6, FACTS.md §7).
fn strategy_text(strategy: Strategy, wait_ms: u64, pause_deregisters: bool) -> String {
    let wait = wait_ms as f64 / 1000.0;
    match strategy {
        Strategy::Kill9 => "kill -9: the JVM dies; no DOWN, no DELETE is sent".to_string(),
        Strategy::Kill15 => {
            "kill -15: the context closes (DOWN, web server stop, then the Eureka client's \
             shutdown with its DELETE)"
                .to_string()
        }
        Strategy::Pause if !pause_deregisters => format!(
            "/pause (spring-cloud-commons >= 2.2.7): only PauseHandler beans pause; Eureka is not \
             told, the instance stays UP and serving for {wait} s"
        ),
        Strategy::Pause => format!(
            "/pause: context.stop() sets DOWN (deregister) but the web server keeps serving for \
             {wait} s"
        ),
        Strategy::ServiceRegistry => format!(
            "/service-registry OUT_OF_SERVICE: a PUT stores a server-side override; wait {wait} s, \
             then CANCEL_OVERRIDE and stop"
        ),
    }
}

/// What re-read the list in the caller's balancer (FACTS.md §8, §9).
fn balancer_step(scenario: &Scenario, caller: Option<usize>) -> &'static str {
    use crate::scenario::SupplierKind;
    let Some(caller) = caller.and_then(|c| scenario.callers.get(c)) else {
        return "the load balancer";
    };
    let lb = &caller.client.load_balancer;
    if caller.uses_ribbon(&scenario.simulation.release) {
        "Ribbon refresh"
    } else if lb.configurations == SupplierKind::HealthCheck {
        "a Spring Cloud LoadBalancer health check"
    } else if lb.cache_enabled {
        "the first request after Spring Cloud LoadBalancer's cache expired"
    } else {
        "Spring Cloud LoadBalancer (no cache)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::simulate;
    use crate::scenario::parse_str;

    fn kill9() -> Scenario {
        let text = std::fs::read_to_string("scenarios/kill-9.toml").unwrap();
        parse_str(&text, "kill-9.toml", "kill-9", &[]).unwrap()
    }

    /// The explained trial is the trial `run` reports: same seed, same outcome.
    #[test]
    fn explain_reproduces_the_run_trial() {
        let s = kill9();
        let trace = trace_trial(&s, 3, RequestMode::Batched);
        let run = simulate(&s, 3, trial_seed(s.simulation.seed, 3));
        assert_eq!(trace.outcomes, run.shutdowns);
    }

    /// The chain names each layer in causal order for a kill -9.
    #[test]
    fn kill9_chain_is_in_causal_order() {
        let s = kill9();
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let text = trace.render(&s, 0);
        let order = [
            "last heartbeat",
            "kill -9",
            "stopped serving",
            "eviction run removed",
            "read-only response cache refresh",
            "registry fetch brought the news",
            "Ribbon refresh of gateway -> svc dropped it",
        ];
        let mut from = 0;
        for needle in order {
            let at = text[from..]
                .find(needle)
                .unwrap_or_else(|| panic!("{needle:?} missing or out of order in\n{text}"));
            from += at;
        }
    }

    #[test]
    fn trace_has_one_line_per_observation_with_names() {
        let s = kill9();
        let trace = trace_trial(&s, 1, RequestMode::Batched);
        let jsonl = trace.to_json_lines(&s);
        assert_eq!(jsonl.lines().count(), trace.log.len());
        assert!(jsonl.contains(r#""kind":"evicted""#));
        assert!(jsonl.contains(r#""process_name":"svc-0""#));
        let csv = trace.to_csv(&s);
        assert_eq!(csv.lines().count(), trace.log.len() + 1);
    }
}
