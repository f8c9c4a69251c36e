//! The causal chain of one trial in words and times (`eureka-sim explain`), its timeline plot
//! and its full trace as JSON Lines or CSV: renderers of a [`TrialTrace`] (the data, from
//! `experiment::trace_trial`).

use std::fmt::Write;
use std::ops::Deref;
use std::path::PathBuf;

use crate::engine::SimTime;
use crate::eureka::{
    InstanceStatus, Observation, PAUSE_REQUEST_UNLOAD_WAIT_MS, ProcessKind, RequestMode, ServerId,
    Unanswered,
};
use crate::experiment::{ShutdownOutcome, TrialOutcome, TrialTrace, trace_trial};
use crate::scenario::{
    ClientConfig, FaultKind, FinalStop, Release, Scenario, ShutdownConfig, Strategy,
};

use super::output::OutputError;
use story::Story;

mod balancer;
mod clients;
mod lease;
mod servers;
mod story;
use super::plot::{HitSpan, ImageFormat, TimelinePlot, render_timeline};

/// What `eureka-sim explain` tells and writes.
#[derive(Debug, Clone)]
pub struct ExplainOptions {
    /// Which trial (as numbered in `trials.csv`).
    pub trial: u32,
    pub mode: RequestMode,
    /// Write the timeline plot here (`.svg` or `.png`), one file per shutdown.
    pub plot: Option<PathBuf>,
    /// Write every event here: JSON Lines, or CSV if the name ends in `.csv`.
    pub trace: Option<PathBuf>,
}

/// `eureka-sim explain`: runs one trial as `run` does, writes the files asked for and returns the
/// terminal text (the chain of every shutdown, then what was written).
pub fn explain(scenario: &Scenario, options: &ExplainOptions) -> Result<String, OutputError> {
    let trace = trace_trial(scenario, options.trial, options.mode);
    let told = Explanation(&trace);
    let mut out = String::new();
    for s in 0..scenario.shutdowns.len() {
        out.push_str(&told.render(scenario, s));
    }
    if scenario.shutdowns.is_empty() {
        out.push_str("the scenario has no [[shutdown]]: nothing to explain\n");
    }
    if let Some(path) = &options.plot {
        let png = path.extension().is_some_and(|e| e == "png");
        let format = if png {
            ImageFormat::Png
        } else {
            ImageFormat::Svg
        };
        for s in 0..scenario.shutdowns.len() {
            let file = if s == 0 {
                path.clone()
            } else {
                path.with_file_name(format!(
                    "{}-{}.{}",
                    path.file_stem()
                        .map_or("timeline".into(), |f| f.to_string_lossy()),
                    scenario.shutdowns[s].instance,
                    format.extension()
                ))
            };
            create_parent(&file)?;
            render_timeline(&told.timeline(scenario, s), format, &file)?;
            let _ = writeln!(out, "wrote the timeline to {}", file.display());
        }
    }
    if let Some(path) = &options.trace {
        let csv = path.extension().is_some_and(|e| e == "csv");
        create_parent(path)?;
        write_trace(path, |out| {
            if csv {
                told.write_csv(scenario, out)
            } else {
                told.write_json_lines(scenario, out)
            }
        })?;
        let _ = writeln!(
            out,
            "wrote {} events to {}",
            trace.log.len(),
            path.display()
        );
    }
    Ok(out)
}

/// Writes the trace through `write` into a hidden file beside `path`, then renames it there:
/// the file is whole or absent, never half-written (a full disk, an interrupt).
fn write_trace(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    let name = path
        .file_name()
        .map_or("trace".into(), |n| n.to_string_lossy());
    let partial = path.with_file_name(format!(".{name}.partial"));
    let failed = |source: std::io::Error| {
        let _ = std::fs::remove_file(&partial);
        OutputError::Write {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    };
    let file = std::fs::File::create(&partial).map_err(failed)?;
    let mut out = std::io::BufWriter::new(file);
    write(&mut out).map_err(failed)?;
    let file = out.into_inner().map_err(|e| failed(e.into_error()))?;
    file.sync_all().map_err(failed)?;
    std::fs::rename(&partial, path).map_err(failed)
}

/// Creates the folder a file named on the command line goes into.
fn create_parent(file: &std::path::Path) -> Result<(), OutputError> {
    match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|source| OutputError::Create {
            path: dir.to_path_buf(),
            source,
        }),
        None => Ok(()),
    }
}

/// A [`TrialTrace`] being told: `Explanation(&trace).render(&scenario, s)`.
pub struct Explanation<'a>(pub &'a TrialTrace);

impl Deref for Explanation<'_> {
    type Target = TrialTrace;

    fn deref(&self) -> &TrialTrace {
        self.0
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

impl Explanation<'_> {
    fn name(&self, process: usize) -> &str {
        self.layout
            .processes
            .get(process)
            .map_or("?", |p| p.name.as_str())
    }

    /// When a zone outage stopped caller process `p`, if it did (`Scenario::caller_stops`).
    fn caller_stop(&self, scenario: &Scenario, p: usize) -> Option<u64> {
        let caller = match self.layout.processes.get(p)?.kind {
            ProcessKind::Caller { caller } => caller,
            _ => return None,
        };
        scenario
            .caller_stops
            .iter()
            .find(|stop| stop.caller == caller)
            .map(|stop| stop.at_ms)
    }

    /// Whether process `p` is a caller of app `app`.
    fn calls_app(&self, p: usize, app: usize) -> bool {
        self.layout
            .routes
            .iter()
            .any(|r| r.process == p && r.application == app)
    }

    /// An attempt of `observer`'s Eureka client that got no answer from `server`, and why:
    /// a refusal (a dead process on a live host), a connect timeout (a vanished host or a
    /// partition: the connect timeout of its release, `ClientConfig::call_timeouts`, at most
    /// the OS's 127 s) or a read timeout (a paused server).
    fn attempt_failed_text(
        &self,
        scenario: &Scenario,
        observer: usize,
        server: ServerId,
        why: Unanswered,
    ) -> String {
        let release = scenario.simulation.release;
        let client = match self.layout.processes.get(observer).map(|p| p.kind) {
            Some(ProcessKind::Caller { caller }) => scenario.callers.get(caller).map(|c| &c.client),
            _ => None,
        };
        let waited = match (why, client) {
            (Unanswered::ConnectTimeout, Some(c)) => {
                format!(" after {} s", c.connect_wait_ms(release) as f64 / 1000.0)
            }
            (Unanswered::ReadTimeout, Some(c)) => match c.call_timeouts(release).read_ms {
                Some(ms) => format!(" after {} s", ms as f64 / 1000.0),
                None => String::new(),
            },
            _ => String::new(),
        };
        let host = match why {
            Unanswered::Refused => "a dead process on a live host",
            Unanswered::ConnectTimeout => "its host does not answer",
            Unanswered::ReadTimeout => "it accepted the call and did not answer",
        };
        format!(
            "{}'s Eureka client got no answer from {}: {}{waited} ({host}); the transport tries \
             the next server (RetryableEurekaHttpClient, 3 attempts)",
            self.name(observer),
            Self::on(scenario, server),
            why.describe()
        )
    }

    /// The server a piece of news waited on, in words: "the server" for a standalone server,
    /// "peer b" in a cluster.
    fn on(scenario: &Scenario, server: ServerId) -> String {
        let servers = scenario.servers();
        match servers.get(server.index()) {
            Some(peer) if servers.len() > 1 => format!("peer {}", peer.name),
            _ => "the server".to_string(),
        }
    }

    /// "" for a standalone server, "peer b: " in a cluster (before a step a server took).
    fn at_peer(scenario: &Scenario, server: ServerId) -> String {
        if scenario.servers().len() > 1 {
            format!("{}: ", Self::on(scenario, server))
        } else {
            String::new()
        }
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
        let Some(mut story) = Story::new(self, scenario, s) else {
            return Vec::new();
        };
        for (t, o) in &self.log {
            story.observe(*t, o);
        }
        story.finish(s)
    }

    /// Whether shutdown `s` ends with a graceful web-server stop: its final stop is a kill -15
    /// that reaches the JVM, on Edgware or later (Dalston runs Boot 1.5), with `server.shutdown =
    /// graceful` (FACTS.md §7).
    fn graceful_stop(&self, scenario: &Scenario, s: usize) -> bool {
        let Some(config) = scenario.shutdowns.get(s) else {
            return false;
        };
        let release = scenario.simulation.release;
        config.ends_in_sigterm()
            && config.sigterm_reaches_jvm
            && !release.deregister_shuts_client_down()
            && scenario.apps[config.app].client.graceful_shutdown(release)
    }

    /// Why a refused instance collects few dead hits on Ribbon: its circuit breaker (FACTS.md
    /// §8). Placed when the instance stopped serving; only when the trial's dead hits reached the
    /// breaker's threshold on a route that filters tripped servers.
    fn circuit_breaker_step(&self, scenario: &Scenario, s: usize) -> Option<(SimTime, String)> {
        let outcome = self.outcomes.get(s)?;
        let t_stop = SimTime(outcome.t_stop_ms?);
        let target = *self.layout.targets.get(s)?;
        let app = self.layout.processes.get(target)?.application;
        let release = scenario.simulation.release;
        let breaker = self.layout.routes.iter().find_map(|r| {
            let caller = scenario.callers.get(r.caller)?;
            let call = caller.calls.get(r.target)?;
            let policy = caller.policy(call, &release);
            let breaker =
                crate::eureka::circuit_breaker::CircuitBreaker::from_config(&call.ribbon, &policy);
            (r.application == app
                && caller.balancer(&release).has_circuit_breaker()
                && breaker.enabled)
                .then_some(breaker)
        })?;
        // A RestTemplate with spring-retry records each refusal twice (FACTS.md §14).
        let per_refusal = breaker.failures_per_refusal.max(1);
        let threshold = breaker.threshold.max(1).div_ceil(per_refusal);
        if outcome.dead_hits < u64::from(threshold) || scenario.apps[app].instances < 2 {
            return None;
        }
        let probes: Vec<String> = (0..3)
            .map(|k| {
                format!(
                    "{}",
                    breaker.blackout_ms((threshold + k) * per_refusal) / 1000
                )
            })
            .collect();
        let (serving, instances) = self.serving_after(app, t_stop);
        if serving == 0 {
            // Every server tripped: `CompositePredicate#getEligibleServers` falls back to
            // `alwaysTrue` and keeps them all (`circuit_breaker.rs`), so nothing is skipped.
            return Some((
                t_stop,
                format!(
                    "the circuit breaker spared no request ({} dead hit(s)): after {threshold} \
                     refused connections in a row Ribbon's circuit breaker tripped it, but every \
                     instance of {} on the route was dead ({instances} of {instances}), and with \
                     every server tripped the rule's last fallback (alwaysTrue) keeps them all, \
                     so requests still reached it (CompositePredicate, ServerStats, FACTS.md §8)",
                    outcome.dead_hits, scenario.apps[app].name
                ),
            ));
        }
        Some((
            t_stop,
            format!(
                "why the dead hits are few ({}): after {threshold} refused connections in a row \
                 Ribbon's circuit breaker skipped it (AvailabilityPredicate, while another server \
                 is available); probes after {} s (each refused probe lengthens the blackout; \
                 ServerStats, FACTS.md §8)",
                outcome.dead_hits,
                probes.join("/")
            ),
        ))
    }

    /// How many instances of app `app` still serve once the stops of instant `at` are done,
    /// and how many it has: an instance (`<app>-<index>`, whichever of its processes, as a
    /// restart or a deploy makes new ones) is dead from a `StoppedServing` until one of its
    /// processes resumes or restarts.
    fn serving_after(&self, app: usize, at: SimTime) -> (usize, usize) {
        let Some(count) = self.instance_count(app) else {
            return (0, 0);
        };
        let mut dead = vec![false; count];
        for (_, o) in self.log.iter().take_while(|(t, _)| *t <= at) {
            let (process, stopped) = match o {
                Observation::StoppedServing { process } => (*process, true),
                Observation::ResumedServing { process } | Observation::Restarted { process } => {
                    (*process, false)
                }
                _ => continue,
            };
            if let Some(ProcessKind::AppInstance { app: a, index }) =
                self.layout.processes.get(process).map(|p| p.kind)
                && a == app
                && let Some(slot) = dead.get_mut(index as usize)
            {
                *slot = stopped;
            }
        }
        (dead.iter().filter(|d| !**d).count(), dead.len())
    }

    /// How many instances app `app` has (the highest instance index in the layout, plus one).
    fn instance_count(&self, app: usize) -> Option<usize> {
        self.layout
            .processes
            .iter()
            .filter_map(|p| match p.kind {
                ProcessKind::AppInstance { app: a, index } if a == app => Some(index as usize + 1),
                _ => None,
            })
            .max()
    }

    /// How many instances of application `app` the Eureka client cache of `observer` dropped at
    /// `at` (one fetch's drops).
    fn dropped_with(&self, observer: usize, app: usize, at: SimTime) -> usize {
        self.at(at)
            .iter()
            .filter(|(_, o)| {
                matches!(o, Observation::ClientCache { observer: w, process, up: false, .. }
                        if *w == observer
                            && self.layout.processes.get(*process)
                                .is_some_and(|p| p.application == app))
            })
            .count()
    }

    /// Whether `server`'s read-only level took a new `GET /apps` payload at `at`.
    fn refreshed_at(&self, server: ServerId, at: SimTime) -> bool {
        self.at(at)
            .iter()
            .any(|(_, o)| *o == Observation::ReadOnlyRefreshed { server })
    }

    /// The observations at instant `at`. The log is in time order (the queue never goes back),
    /// so this is two binary searches: the steps ask it once per eviction run or cache fill,
    /// and a scan of the whole log each time made `explain` quadratic in the eviction rate
    /// (found by fuzzing: `eviction-interval-timer-in-ms = 10`, 8 s).
    fn at(&self, at: SimTime) -> &[(SimTime, Observation)] {
        let from = self.log.partition_point(|(t, _)| *t < at);
        let to = self.log.partition_point(|(t, _)| *t <= at);
        &self.log[from..to]
    }

    /// When `server` last went down by the end of the trial, if it did, and whether it came
    /// back after that.
    fn last_down(&self, server: ServerId) -> Option<(SimTime, bool)> {
        let down = self.log.iter().rposition(
            |(_, o)| matches!(o, Observation::ServerDown { server: s } if *s == server),
        )?;
        let back = self.log[down..]
            .iter()
            .any(|(_, o)| matches!(o, Observation::ServerStarted { server: s } if *s == server));
        Some((self.log[down].0, back))
    }

    /// Whether `server` evicted `target` at `at` (each peer evicts on its own).
    fn evicted_at(&self, target: usize, server: ServerId, at: SimTime) -> bool {
        self.at(at).iter().any(|(_, o)| {
            matches!(o, Observation::Evicted { server: s, process }
                    if *process == target && *s == server)
        })
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
        let (still, never) = self.still_listed(config, self.layout.targets[s]);
        let ms = |v: Option<i64>| v.map_or(never.clone(), relative);
        if outcome.t_stop_ms.is_none() {
            let _ = writeln!(
                out,
                "    it never stopped serving in this trial: exposure and the removal times are \
                 measured from the stop, so there are none; {} dead hit(s), {} error(s)",
                outcome.dead_hits, outcome.errors
            );
            return out;
        }
        let inflight = if outcome.inflight_failed > 0 {
            format!(", {} in-flight request(s) failed", outcome.inflight_failed)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "    exposure {}, {} dead hit(s), {} error(s){inflight}, last dead hit {}",
            outcome
                .exposure_ms
                .map_or(format!("unresolved ({still})"), relative),
            outcome.dead_hits,
            outcome.errors,
            outcome
                .last_dead_hit_ms
                .map_or("none".to_string(), relative)
        );
        let _ = writeln!(
            out,
            "    left the registry {}, read-only cache {}, callers' caches {}, {} {}",
            ms(outcome.server_removed_ms),
            ms(outcome.readonly_removed_ms),
            ms(outcome.client_removed_ms),
            scenario.balancer_name(),
            match (outcome.ribbon_removed_ms, outcome.exposure_ms) {
                // Exposure 0 without a removal: no caller's list ever held it (e.g. a health-check
                // supplier whose first list predates the instance).
                (None, Some(0)) => "never listed it".to_string(),
                (removed, _) => ms(removed),
            }
        );
        if scenario.servers().len() > 1 {
            let (peers, callers) = self.per_peer_and_caller(scenario, &outcome, &ms);
            let _ = writeln!(out, "    per peer: {peers}");
            let _ = writeln!(out, "    per caller: {callers}");
        }
        out
    }

    /// How the metrics' "never" reads: they freeze when the process restarts
    /// (`Observation::Restarted`), and a lease still held at the end says what held it.
    fn still_listed(&self, config: &ShutdownConfig, target: usize) -> (String, String) {
        let restart = self.log.iter().find(|(t, o)| {
            t.ms() >= config.at_ms && *o == Observation::Restarted { process: target }
        });
        match restart {
            Some((t, _)) => (
                format!("still listed when its process restarted at {}", secs(*t)),
                "not before the restart".to_string(),
            ),
            None => {
                let end = secs(self.end);
                let why = self.log.iter().find_map(|(_, o)| match o {
                    Observation::StillListed { process, holding } if *process == target => {
                        Some(holding.label())
                    }
                    _ => None,
                });
                match why {
                    Some(why) => (
                        format!("{why} when the trial ended at {end}"),
                        format!("never (by {end})"),
                    ),
                    None => (
                        "still listed at the end".to_string(),
                        "never (still there at the end)".to_string(),
                    ),
                }
            }
        }
    }

    /// In a cluster: when each peer let the instance go, and each caller's cache and balancer.
    fn per_peer_and_caller(
        &self,
        scenario: &Scenario,
        outcome: &ShutdownOutcome,
        ms: &dyn Fn(Option<i64>) -> String,
    ) -> (String, String) {
        let servers = scenario.servers();
        let peers: Vec<String> = outcome
            .servers
            .iter()
            .zip(servers.iter())
            .enumerate()
            .map(|(k, (o, peer))| {
                let down = self.last_down(ServerId(k as u32));
                match (o.server_removed_ms, o.readonly_removed_ms, down) {
                    // Going down removes nothing (`ServerOutcome`): say why it is empty.
                    (None, None, Some((at, false))) => format!(
                        "{} went down at {} while listing it and stayed down (not counted)",
                        peer.name,
                        secs(at)
                    ),
                    _ => format!(
                        "{} left the registry {}, read-only cache {}",
                        peer.name,
                        ms(o.server_removed_ms),
                        ms(o.readonly_removed_ms)
                    ),
                }
            })
            .collect();
        let callers: Vec<String> = outcome
            .callers
            .iter()
            .map(|c| {
                if let Some(at) = self.caller_stop(scenario, c.process) {
                    let when = outcome.t_stop_ms.map(|t| at as i64 - t as i64);
                    return format!(
                        "{} stopped with its zone at {} (it lists nothing after)",
                        self.name(c.process),
                        ms(when)
                    );
                }
                let from = c
                    .server
                    .and_then(|k| servers.get(k.index()))
                    .map_or(String::new(), |peer| {
                        format!(" (peer {}'s answer)", peer.name)
                    });
                format!(
                    "{}'s cache {}{from}, {} {}",
                    self.name(c.process),
                    ms(c.client_removed_ms),
                    scenario.balancer_name(),
                    ms(c.ribbon_removed_ms)
                )
            })
            .collect();
        (peers.join("; "), callers.join("; "))
    }

    /// The timeline plot of shutdown `s` in this trial: when the instance left each layer, and
    /// its dead hits from the trace (each one when the trial ran per request; each count over
    /// its span otherwise).
    pub fn timeline(&self, scenario: &Scenario, s: usize) -> TimelinePlot {
        let outcome = self.outcomes.get(s).cloned().unwrap_or_default();
        let target = self.layout.targets[s];
        let t_stop = t_stop_of(scenario, s, &outcome);
        let dead_hits: Vec<HitSpan> = self
            .log
            .iter()
            .filter_map(|(t, o)| match o {
                Observation::Attempt {
                    process,
                    dead: true,
                    ..
                } if *process == target => Some(HitSpan::at(t.ms() as i64 - t_stop)),
                Observation::DeadHits {
                    process,
                    count,
                    since,
                    last,
                    ..
                } if *process == target => Some(HitSpan {
                    from: since.ms() as i64 - t_stop,
                    to: last.ms() as i64 - t_stop,
                    count: *count,
                }),
                _ => None,
            })
            .collect();
        timeline_plot(scenario, s, (self.trial, self.seed), &outcome, dead_hits)
    }
    /// One observation as the JSON object the trace writes: `t_ms`, `kind` and the
    /// observation's fields, with process and route names added.
    fn trace_object(&self, scenario: &Scenario, t: SimTime, o: &Observation) -> serde_json::Value {
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
        value
    }

    /// Writes every observation as JSON Lines, one at a time: a day's trace is gigabytes, and
    /// held whole as text beside the log it doubled the memory `explain --trace` needs.
    pub fn write_json_lines(
        &self,
        scenario: &Scenario,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        for (t, o) in &self.log {
            serde_json::to_writer(&mut *out, &self.trace_object(scenario, *t, o))?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Every observation as JSON Lines (the trace of a small trial, for tests).
    pub fn to_json_lines(&self, scenario: &Scenario) -> String {
        let mut out = Vec::new();
        let _ = self.write_json_lines(scenario, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes every observation as CSV (`t_ms`, `kind`, `process`, then the other fields as
    /// `key=value`), one at a time, as [`Self::write_json_lines`] does.
    pub fn write_csv(&self, scenario: &Scenario, out: impl std::io::Write) -> std::io::Result<()> {
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(["t_ms", "kind", "process", "detail"])?;
        for (t, o) in &self.log {
            let serde_json::Value::Object(mut map) = self.trace_object(scenario, *t, o) else {
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
            writer.write_record([t, kind, process, detail.join(" ")])?;
        }
        writer.flush()
    }

    /// Every observation as CSV (the trace of a small trial, for tests).
    pub fn to_csv(&self, scenario: &Scenario) -> String {
        let mut out = Vec::new();
        let _ = self.write_csv(scenario, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Who sent a register: a peer's replication (`from_peer`), else the instance itself.
fn register_source(scenario: &Scenario, from_peer: Option<ServerId>) -> String {
    match from_peer {
        Some(peer) => format!("{}'s replicated register", Explanation::on(scenario, peer)),
        None => "the instance's own register".to_string(),
    }
}

/// A server going down at `at` (a `[[fault]]` crash or server-restart, or shutdown `config`'s
/// zone outage): what it takes with it.
fn server_down_text(
    scenario: &Scenario,
    config: &ShutdownConfig,
    server: ServerId,
    at: SimTime,
) -> String {
    let peer = Explanation::on(scenario, server);
    let peer_zone = scenario
        .servers()
        .get(server.index())
        .map(|p| p.zone.clone());
    if at.ms() == config.at_ms && config.zone.is_some() && config.zone == peer_zone {
        // The zone outage's own crash (`parse/zone.rs`), its host gone or still refusing.
        let vanished = scenario.faults.iter().any(|f| {
            f.at_ms == at.ms()
                && matches!(f.kind, FaultKind::Crash { peer, vanishes: true } if peer == server.index())
        });
        let how = if vanished {
            "its host vanished with the zone (host = \"vanishes\", the default): connects to \
             it hang until each client's connect timeout"
        } else {
            "a dead process on a live host (host = \"stays\"): connects to it are refused at \
             once"
        };
        return format!(
            "{peer} went down (with the zone; {how}): it lists nothing any more and answers no \
             one"
        );
    }
    let fault = scenario.faults.iter().find_map(|f| match f.kind {
        FaultKind::ServerRestart { peer, down_ms }
            if peer == server.index() && f.at_ms == at.ms() =>
        {
            Some(Some(down_ms))
        }
        FaultKind::Crash { peer, .. } if peer == server.index() && f.at_ms == at.ms() => Some(None),
        _ => None,
    });
    match fault {
        Some(Some(down_ms)) => format!(
            "{peer} went down ([[fault]] server-restart, back at {}): calls to it are refused; \
             its registry and caches go with it, which removes nothing (it tells no reader \
             anything: its readers keep their caches, and its new incarnation counts afresh)",
            secs(SimTime(at.ms() + down_ms))
        ),
        _ => format!(
            "{peer} went down for good ([[fault]] crash): calls to it are refused; its registry \
             and caches go with it, which removes nothing (it tells no reader anything), and \
             it no longer counts among the registries that list or drop it"
        ),
    }
}

/// Counts a transport line of `observer`; false once it had 6 (the rest are alike).
fn tell_transport(told: &mut Vec<(usize, u32)>, observer: usize) -> bool {
    const MAX_PER_CALLER: u32 = 6;
    match told.iter_mut().find(|(p, _)| *p == observer) {
        Some((_, n)) if *n >= MAX_PER_CALLER => false,
        Some((_, n)) => {
            *n += 1;
            true
        }
        None => {
            told.push((observer, 1));
            true
        }
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

/// A blocked eviction run: when, the renews of the last minute, the threshold.
type Gate = (SimTime, u64, i64);

/// How a caller's last registry fetch went, for the sentence that says it brought the news.
#[derive(Debug, Clone, PartialEq)]
enum FetchKind {
    /// No fetch seen yet (the client's first one is a full fetch).
    Unknown,
    /// `GET /apps/delta`, applied to the local registry.
    Delta,
    /// `GET /apps`.
    Full,
    /// A delta left the reconcile hash different; the full fetch is under way.
    ReconcilePending { local: String, server: String },
    /// The full fetch that followed a reconcile mismatch.
    Reconciled { local: String, server: String },
    /// The server answered the delta with 403; the full fetch is under way.
    ForbiddenPending,
    /// The full fetch that followed a 403 to the delta.
    AfterForbidden,
}

impl FetchKind {
    /// FACTS.md §4.
    fn describe(&self) -> String {
        match self {
            FetchKind::Delta => "a delta, GET /apps/delta".to_string(),
            FetchKind::Reconciled { local, server } => format!(
                "a full GET /apps: the delta before it left the local reconcile hash {} \
                 different from the server's appsHashCode {}, FACTS.md §4",
                shown_hash(local),
                shown_hash(server)
            ),
            FetchKind::AfterForbidden => "a full GET /apps: the server answered the delta with \
                 403 (eureka.server.disable-delta), FACTS.md §4"
                .to_string(),
            FetchKind::Full
            | FetchKind::Unknown
            | FetchKind::ReconcilePending { .. }
            | FetchKind::ForbiddenPending => "a full GET /apps".to_string(),
        }
    }
}

/// A reconcile hash as Eureka renders it; an empty registry's is the empty string, which
/// would vanish from the sentence (a peer that came back empty).
fn shown_hash(hash: &str) -> &str {
    if hash.is_empty() {
        "\"\" (an empty registry)"
    } else {
        hash
    }
}

/// A register from a restarted process (a new incarnation under the same id). `override_held`:
/// the server's overridden-status map still holds OUT_OF_SERVICE for the id (FACTS.md §6).
fn restart_register_text(status: InstanceStatus, override_held: bool) -> String {
    match status {
        InstanceStatus::OutOfService if override_held => "the restarted process registered UP, \
             but the server's overridden-status map still holds OUT_OF_SERVICE for this id (no \
             DELETE, no eviction removed it), so OverrideExistsRule stores it OUT_OF_SERVICE \
             (FACTS.md §6, Netflix/eureka#717)"
            .to_string(),
        InstanceStatus::OutOfService => "the restarted process registered UP over the old \
             OUT_OF_SERVICE lease, and LeaseExistsRule keeps OUT_OF_SERVICE (FACTS.md §6)"
            .to_string(),
        status => format!(
            "the restarted process's register reached the server: a new lease with status \
             {status} (its first status change goes out as a register, FACTS.md §5.1)"
        ),
    }
}

/// `/resume` of a pause with `resume-s` (FACTS.md §7).
fn resume_text(release: Release) -> String {
    if !release.pause_deregisters() {
        "/resume (spring-cloud-commons >= 2.2.7): only PauseHandler beans resume; Eureka was never \
         told of the pause and is not told now"
            .to_string()
    } else if release.deregister_shuts_client_down() {
        "/resume: context.start() sets UP, but on Dalston /pause already shut the Eureka client \
         down (listener removed, no heartbeats): nothing is registered, it serves while in no \
         registry (spring-cloud-netflix#2099)"
            .to_string()
    } else if release.pause_stops_web_server() {
        "/resume: context.start() sets UP again (a register) and starts the web server /pause \
         had stopped (Spring Boot 2.3+, FACTS.md §14)"
            .to_string()
    } else {
        "/resume: context.start() sets UP again; the status change goes out as a register \
         (FACTS.md §7)"
            .to_string()
    }
}

/// How a pause / service-registry wait ends (`then`).
fn final_text(then: FinalStop) -> &'static str {
    match then {
        FinalStop::Kill15 => "stop with kill -15",
        FinalStop::Kill9 => "stop with kill -9",
        FinalStop::KeepRunning => "keep running",
    }
}

/// The strategy as configured: `strategy`, `wait-s`, `then`, `resume-s`, `cancel-override`,
/// `prestop-s`, `sigterm-reaches-jvm` (FACTS.md §6, §7).
fn strategy_text(config: &ShutdownConfig, release: Release, client: &ClientConfig) -> String {
    let wait = config.wait_ms as f64 / 1000.0;
    let until = match config.resume_ms {
        Some(resume) => format!("until /resume {} s later", resume as f64 / 1000.0),
        None => format!("for {wait} s, then {}", final_text(config.then)),
    };
    let kill15 = || {
        if release.deregister_shuts_client_down() {
            "kill -15 (Dalston): the ContextClosedEvent handler sets DOWN and at once shuts the \
             Eureka client down with its DELETE, racing the DOWN register \
             (spring-cloud-netflix#2101); the web server stops afterwards"
                .to_string()
        } else if client.graceful_shutdown(release) {
            format!(
                "kill -15: the context closes (DOWN, the graceful phase: new requests refused, \
                 those in flight get up to {} s; then the web server stop and the Eureka client's \
                 shutdown with its DELETE)",
                client.timeout_per_shutdown_phase_ms as f64 / 1000.0
            )
        } else if !release.web_server_is_lifecycle() {
            format!(
                "kill -15 (Spring Boot {}): the context closes (DOWN, then the Eureka client's \
                 shutdown with its DELETE at bean destruction; the web server serves until \
                 onClose stops it after that, FACTS.md §14)",
                release.boot
            )
        } else {
            "kill -15: the context closes (DOWN, web server stop, then the Eureka client's \
             shutdown with its DELETE)"
                .to_string()
        }
    };
    match config.strategy {
        Strategy::Kill9 => match &config.zone {
            Some(zone) => format!(
                "kill -9 with all of zone {zone} (a zone outage: its callers stop, its peers go \
                 down): the JVM dies; no DOWN, no DELETE is sent"
            ),
            None => "kill -9: the JVM dies; no DOWN, no DELETE is sent".to_string(),
        },
        Strategy::Kill15 if !config.sigterm_reaches_jvm => format!(
            "kill -15 that never reaches the JVM (PID 1 does not forward SIGTERM): nothing \
             happens until the orchestrator's SIGKILL {} s later (a kill -9: no DOWN, no DELETE)",
            config.termination_grace_ms as f64 / 1000.0
        ),
        Strategy::Kill15 if config.prestop_ms > 0 => format!(
            "preStop sleep of {} s (still serving and UP), then {}",
            config.prestop_ms as f64 / 1000.0,
            kill15()
        ),
        Strategy::Kill15 => kill15(),
        Strategy::Pause if !release.pause_deregisters() => format!(
            "/pause (spring-cloud-commons >= 2.2.7): only PauseHandler beans pause; Eureka is not \
             told, the instance stays UP and serving {until}"
        ),
        Strategy::Pause if release.pause_stops_web_server() => format!(
            "/pause on Spring Boot {} (spring-cloud-commons {}): context.stop() stops the web \
             server first, so every request is refused from now, then sets DOWN (deregister; \
             spring-cloud-commons#788, FACTS.md §14) {:.1} s later, once Tomcat has waited for \
             the /pause request itself (StandardWrapper#unload); the process runs on {until}",
            release.boot,
            release.commons,
            PAUSE_REQUEST_UNLOAD_WAIT_MS as f64 / 1000.0
        ),
        Strategy::Pause if release.deregister_shuts_client_down() => format!(
            "/pause (Dalston): context.stop() sets DOWN and EurekaServiceRegistry#deregister shuts \
             the Eureka client down (its DELETE; no more heartbeats, spring-cloud-netflix#2099); \
             the web server keeps serving {until}"
        ),
        Strategy::Pause => format!(
            "/pause: context.stop() sets DOWN (deregister) but the web server keeps serving {until}"
        ),
        Strategy::ServiceRegistry if config.cancel_override => format!(
            "/service-registry OUT_OF_SERVICE: a PUT stores a server-side override; wait {wait} s, \
             then CANCEL_OVERRIDE (DELETE .../status: UNKNOWN until its next heartbeat \
             re-registers it UP, FACTS.md §6) and {}",
            final_text(config.then)
        ),
        Strategy::ServiceRegistry => format!(
            "/service-registry OUT_OF_SERVICE: a PUT stores a server-side override; wait {wait} s, \
             then {} without CANCEL_OVERRIDE (cancel-override = false): OUT_OF_SERVICE stays in \
             the server's overridden-status map until a DELETE or an eviction removes it \
             (FACTS.md §6)",
            final_text(config.then)
        ),
    }
}

/// What re-read the list in the caller's balancer (FACTS.md §8, §9), as its balancer words it
/// ([`crate::scenario::BalancerKind::list_step`]).
fn balancer_step(scenario: &Scenario, caller: Option<usize>) -> &'static str {
    let Some(caller) = caller.and_then(|c| scenario.callers.get(c)) else {
        return "the load balancer";
    };
    caller
        .balancer(&scenario.simulation.release)
        .list_step(caller)
}

/// When shutdown `s`'s instance stopped serving in a trial with `outcome` (its planned instant
/// if it never did): the origin of the timeline's times.
fn t_stop_of(scenario: &Scenario, s: usize, outcome: &ShutdownOutcome) -> i64 {
    outcome.t_stop_ms.unwrap_or(scenario.shutdowns[s].at_ms) as i64
}

/// The timeline of shutdown `s` in `run`'s trial `outcome`, its dead hits from the spans the
/// trial kept as it ran ([`TrialOutcome::dead_hit_spans`]): the figure of `run`'s report, with
/// no simulation. The same plot as [`Explanation::timeline`] of the same trial, whose full
/// trace holds the same dead hits (`the_run_timeline_is_the_traced_one`).
pub fn run_timeline(scenario: &Scenario, s: usize, outcome: &TrialOutcome) -> TimelinePlot {
    let shutdown = outcome.shutdowns.get(s).cloned().unwrap_or_default();
    let t_stop = t_stop_of(scenario, s, &shutdown);
    let dead_hits = outcome
        .dead_hit_spans
        .get(s)
        .into_iter()
        .flatten()
        .map(|h| HitSpan {
            from: h.since_ms as i64 - t_stop,
            to: h.last_ms as i64 - t_stop,
            count: h.count,
        })
        .collect();
    timeline_plot(
        scenario,
        s,
        (outcome.trial, outcome.seed),
        &shutdown,
        dead_hits,
    )
}

/// The timeline plot of shutdown `s` in trial `trial` (with its seed): when the instance left
/// each layer (`outcome`), and `dead_hits` (ms relative to its stop). `explain` takes the hits
/// from its trace, `run` from the spans its trials kept: one drawing.
fn timeline_plot(
    scenario: &Scenario,
    s: usize,
    (trial, seed): (u32, u64),
    outcome: &ShutdownOutcome,
    dead_hits: Vec<HitSpan>,
) -> TimelinePlot {
    let config = &scenario.shutdowns[s];
    let t_stop = t_stop_of(scenario, s, outcome);
    let mut stages = vec![(
        format!("{} started", config.strategy.name()),
        Some(config.at_ms as i64 - t_stop),
    )];
    let servers = scenario.servers();
    if servers.len() > 1 {
        // One lane per peer for its registry, then one per peer for what it serves.
        for (o, peer) in outcome.servers.iter().zip(servers.iter()) {
            stages.push((
                format!("left peer {}'s registry", peer.name),
                o.server_removed_ms,
            ));
        }
        for (o, peer) in outcome.servers.iter().zip(servers.iter()) {
            stages.push((
                format!("left peer {}'s read-only cache", peer.name),
                o.readonly_removed_ms,
            ));
        }
    } else {
        stages.push(("left the registry".to_string(), outcome.server_removed_ms));
        stages.push((
            "left the read-only cache".to_string(),
            outcome.readonly_removed_ms,
        ));
    }
    stages.extend([
        (
            "left the callers' Eureka caches".to_string(),
            outcome.client_removed_ms,
        ),
        (
            format!("left the {} lists", scenario.balancer_name()),
            outcome.ribbon_removed_ms,
        ),
    ]);
    let known = stages
        .iter()
        .filter_map(|(_, v)| *v)
        .chain(dead_hits.iter().flat_map(|h| [h.from, h.to]));
    let (lo, hi) = known.fold((0i64, 0i64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let margin = ((hi - lo) / 20).max(5_000);
    TimelinePlot {
        title: format!(
            "{}: {} stopped with {} - trial {} (seed {})\n{}, {} dead hit(s); times relative \
             to when it stopped serving",
            scenario.name,
            config.instance,
            config.strategy.name(),
            trial,
            seed,
            scenario.simulation.release,
            outcome.dead_hits
        ),
        stages,
        dead_hits,
        x_range: (lo - margin, hi + margin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::RequestMode;
    use crate::experiment::trace_trial;
    use crate::scenario::fixture::{ScenarioText, bundled};
    use crate::scenario::parse_str;

    fn kill9() -> Scenario {
        bundled("kill-9", &[])
    }

    /// `run`'s timeline, drawn from the dead hits its trial kept, is the drawing of the same
    /// trial's full trace (explain's), in both request modes, byte for byte: the spans kept
    /// are the trace's (single attempts of one instant summed, which bins them alike), and
    /// the stages come from the same outcome.
    #[test]
    fn the_run_timeline_is_the_traced_one() {
        use crate::engine::trial_seed;
        use crate::experiment::simulate_with;
        use crate::report::plot::timeline_svg_string;
        for (mode, set) in [
            (RequestMode::Batched, vec![]),
            (RequestMode::Batched, vec!["caller[0].rate-per-s=1000"]),
            (RequestMode::PerRequest, vec![]),
        ] {
            let set: Vec<String> = set.iter().map(|x| x.to_string()).collect();
            let s = bundled("kill-9", &set);
            for trial in [0, 3] {
                let seed = trial_seed(s.simulation.seed, trial);
                let run = simulate_with(&s, trial, seed, mode);
                let trace = trace_trial(&s, trial, mode);
                let ours = run_timeline(&s, 0, &run);
                let theirs = Explanation(&trace).timeline(&s, 0);
                assert!(ours.dead_hits.iter().map(|h| h.count).sum::<u64>() > 0);
                assert_eq!(ours.stages, theirs.stages, "{mode:?} {set:?}");
                assert_eq!(ours.title, theirs.title, "{mode:?} {set:?}");
                assert_eq!(
                    timeline_svg_string(&ours).unwrap(),
                    timeline_svg_string(&theirs).unwrap(),
                    "{mode:?} {set:?} trial {trial}"
                );
            }
        }
    }

    /// The chain names each layer in causal order for a kill -9.
    #[test]
    fn kill9_chain_is_in_causal_order() {
        let s = kill9();
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let text = Explanation(&trace).render(&s, 0);
        let order = [
            "last heartbeat",
            "kill -9",
            "stopped serving",
            "eviction run removed",
            "read-only response cache refresh",
            "'s registry fetch (",
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
        let jsonl = Explanation(&trace).to_json_lines(&s);
        assert_eq!(jsonl.lines().count(), trace.log.len());
        assert!(jsonl.contains(r#""kind":"evicted""#));
        assert!(jsonl.contains(r#""process_name":"svc-0""#));
        let csv = Explanation(&trace).to_csv(&s);
        assert_eq!(csv.lines().count(), trace.log.len() + 1);
    }

    fn scenario(text: &str) -> Scenario {
        parse_str(text, "test.toml", "test", &[]).unwrap()
    }

    fn explained(text: &str) -> String {
        let s = scenario(text);
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        (0..s.shutdowns.len())
            .map(|i| Explanation(&trace).render(&s, i))
            .collect()
    }

    /// Two instances and a gateway, on `release`, with no server peers.
    fn base(release: &str) -> ScenarioText {
        let release = format!("release = \"{release}\"");
        ScenarioText::simulation(&["duration-s = 500", "trials = 1", "seed = 1", &release])
            .table(
                "[server]",
                &[
                    "eureka.client.register-with-eureka = false",
                    "eureka.client.fetch-registry = false",
                ],
            )
            .fleet(2, &["rate-per-s = 10"])
    }

    /// `[[restart]]` of svc-0 after 10 s down.
    const RESTART: [&str; 2] = ["instance = \"svc-0\"", "down-s = 10"];

    /// Netflix/eureka#717: a kill -9 after /service-registry without CANCEL_OVERRIDE, then a
    /// restart under the same id: the restart's UP register is stored OUT_OF_SERVICE by
    /// OverrideExistsRule (FACTS.md §6); it is neither a #2101 race nor a CANCEL_OVERRIDE.
    #[test]
    fn restart_register_under_a_kept_override_is_the_restarts() {
        let text = explained(
            &base("Hoxton")
                .shutdown(
                    "svc-0",
                    200,
                    "service-registry",
                    &[
                        "wait-s = 30",
                        "cancel-override = false",
                        "then = \"kill-9\"",
                    ],
                )
                .table("[[restart]]", &RESTART)
                .text(),
        );
        assert!(
            text.contains("then stop with kill -9 without CANCEL_OVERRIDE"),
            "{text}"
        );
        assert!(!text.contains("then CANCEL_OVERRIDE"), "{text}");
        assert!(text.contains("[[restart]]: a new process"), "{text}");
        assert!(
            text.contains("the restarted process registered UP, but the server's overridden-status map still holds OUT_OF_SERVICE"),
            "{text}"
        );
        assert!(text.contains("OverrideExistsRule"), "{text}");
        assert!(!text.contains("#2101"), "{text}");
    }

    /// A kill -15 (DELETE) then a restart: the new process's UP register comes after the
    /// DELETE but is the restart's registration, not the Dalston DOWN-after-DELETE race.
    #[test]
    fn restart_after_delete_is_not_the_2101_race() {
        let text = explained(
            &base("Hoxton")
                .shutdown("svc-0", 200, "kill-15", &[])
                .table("[[restart]]", &RESTART)
                .text(),
        );
        assert!(text.contains("lease cancelled"), "{text}");
        assert!(
            text.contains(
                "the restarted process's register reached the server: a new lease with status UP"
            ),
            "{text}"
        );
        assert!(
            text.contains("the restarted process is UP in the server's registry"),
            "{text}"
        );
        assert!(!text.contains("AFTER the DELETE"), "{text}");
        assert!(!text.contains("#2101"), "{text}");
    }

    /// cancel-override = true is still described as a CANCEL_OVERRIDE, with its `then`.
    #[test]
    fn service_registry_with_cancel_override_says_so() {
        let text = explained(
            &base("Hoxton")
                .shutdown(
                    "svc-0",
                    200,
                    "service-registry",
                    &["wait-s = 30", "then = \"keep-running\""],
                )
                .text(),
        );
        assert!(
            text.contains("then CANCEL_OVERRIDE (DELETE .../status"),
            "{text}"
        );
        assert!(text.contains("and keep running"), "{text}");
    }

    /// A pause of svc-0 at 200 s with a /resume 60 s later, on `release`.
    fn pause_resume(release: &str) -> String {
        base(release)
            .shutdown("svc-0", 200, "pause", &["resume-s = 60"])
            .text()
    }

    /// spring-cloud-netflix#2099: on Dalston /resume registers nothing; on Edgware it registers
    /// UP; from spring-cloud-commons 2.2.7 pause and resume do not touch Eureka (FACTS.md §7).
    #[test]
    fn resume_is_explained_per_release() {
        let dalston = explained(&pause_resume("Dalston"));
        assert!(
            dalston.contains("shuts the Eureka client down"),
            "{dalston}"
        );
        assert!(
            dalston.contains("/resume: context.start() sets UP, but on Dalston /pause already shut the Eureka client down"),
            "{dalston}"
        );
        assert!(dalston.contains("spring-cloud-netflix#2099"), "{dalston}");
        assert!(!dalston.contains("UP again"), "{dalston}");
        assert!(
            dalston.contains("it never stopped serving in this trial"),
            "{dalston}"
        );
        let edgware = explained(&pause_resume("Edgware"));
        assert!(
            edgware.contains("/resume: context.start() sets UP again"),
            "{edgware}"
        );
        assert!(
            edgware.contains("/resume's UP reached the server"),
            "{edgware}"
        );
        assert!(
            edgware.contains("UP again in the server's registry"),
            "{edgware}"
        );
        let sr10 = explained(&pause_resume("Hoxton.SR10"));
        assert!(
            sr10.contains("/resume (spring-cloud-commons >= 2.2.7)"),
            "{sr10}"
        );
        assert!(!sr10.contains("register"), "{sr10}");
    }

    /// spring-cloud-netflix#3923: the UP register during a kill -15 is the health-check handler.
    #[test]
    fn healthcheck_up_register_is_explained() {
        let text = explained(
            &base("Hoxton.SR8")
                .table("[clients]", &["eureka.client.healthcheck.enabled = true"])
                .shutdown("svc-0", 200, "kill-15", &[])
                .text(),
        );
        assert!(text.contains("a register with status UP reached the server: the replicator run that the DOWN triggered"), "{text}");
        assert!(text.contains("spring-cloud-netflix#3923"), "{text}");
    }

    /// In-flight failures are shown on the result line, and the balancer is named as configured:
    /// Spring Cloud LoadBalancer from 2020.0 (no Ribbon circuit breaker sentence there).
    #[test]
    fn result_line_names_the_balancer_and_inflight_failures() {
        let text = explained(
            &base("2020.0")
                .shutdown("svc-0", 200, "kill-9", &[])
                .text()
                .replace("instances = 2", "instances = 2\nservice-time-ms = 2000"),
        );
        assert!(text.contains("in-flight request(s) failed"), "{text}");
        assert!(text.contains(", LoadBalancer "), "{text}");
        assert!(!text.contains(", Ribbon "), "{text}");
        assert!(!text.contains("circuit breaker"), "{text}");
    }

    /// FACTS.md §9: without `refetch-instances` the health-check supplier keeps its first list,
    /// so an instance missing from it is never listed: the result line says so instead of
    /// "still there at the end".
    #[test]
    fn a_balancer_that_never_listed_the_instance_is_said_so() {
        let sets = [
            "simulation.release=2020.0".to_string(),
            "simulation.start=cold".to_string(),
            "simulation.start-spread-s=120".to_string(),
            "clients.spring.cloud.loadbalancer.configurations=health-check".to_string(),
        ];
        let s = bundled("kill-9", &sets);
        let seed = s.simulation.seed;
        let trial = (0..40)
            .find(|&k| {
                let o = crate::experiment::simulate(&s, k, crate::engine::trial_seed(seed, k));
                o.shutdowns[0].exposure_ms == Some(0) && o.shutdowns[0].ribbon_removed_ms.is_none()
            })
            .expect("a trial whose first list lacks svc-0");
        let rendered = Explanation(&trace_trial(&s, trial, RequestMode::Batched)).render(&s, 0);
        assert!(
            rendered.contains("LoadBalancer never listed it"),
            "{rendered}"
        );
        assert!(!rendered.contains("still there at the end"), "{rendered}");
    }

    /// Ribbon: the dead hits of a kill -9 are few because of the circuit breaker (FACTS.md §8).
    #[test]
    fn ribbon_circuit_breaker_is_explained() {
        let s = kill9();
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let text = Explanation(&trace).render(&s, 0);
        assert!(
            text.contains(
                "after 3 refused connections in a row Ribbon's circuit breaker skipped it"
            ),
            "{text}"
        );
        assert!(text.contains("probes after 10/20/30 s"), "{text}");
        assert!(text.contains(", Ribbon "), "{text}");
        assert!(text.contains("(a delta, GET /apps/delta)"), "{text}");
    }

    /// Both instances of a two-instance app killed at 300 s: every server Ribbon holds trips,
    /// and `ZoneAvoidanceRule`'s `CompositePredicate` then falls back to `alwaysTrue`, which
    /// keeps them all, so the breaker skips nothing. The chain says so instead of "while
    /// another server is available" (FACTS.md §8).
    #[test]
    fn a_breaker_with_every_instance_dead_is_said_to_skip_nothing() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/kill-9.toml"),
        )
        .unwrap()
        .replace("instances = 20", "instances = 2")
            + "\n[[shutdown]]\ninstance = \"svc-1\"\nat-s = 300\nstrategy = \"kill-9\"\n";
        let s = parse_str(&text, "kill-9.toml", "kill-9", &[]).unwrap();
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let rendered = Explanation(&trace).render(&s, 0);
        assert!(
            rendered.contains("every instance of svc on the route was dead (2 of 2)"),
            "{rendered}"
        );
        assert!(rendered.contains("alwaysTrue"), "{rendered}");
        assert!(!rendered.contains("while another server"), "{rendered}");
        // svc-1 comes back 400 s later (a process slot of its own, not started at 300 s): still
        // two instances, both dead when the breaker trips.
        let text = text + "\n[[restart]]\ninstance = \"svc-1\"\ndown-s = 400\n";
        let s = parse_str(&text, "kill-9.toml", "kill-9", &[]).unwrap();
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let rendered = Explanation(&trace).render(&s, 0);
        assert!(
            rendered.contains("every instance of svc on the route was dead (2 of 2)"),
            "{rendered}"
        );
        // One of twenty dead: the breaker skips it while the others serve.
        let one = bundled("kill-9", &[]);
        let trace = trace_trial(&one, 0, RequestMode::Batched);
        let rendered = Explanation(&trace).render(&one, 0);
        assert!(
            rendered.contains("while another server is available"),
            "{rendered}"
        );
    }

    /// On two peers the chain names the peer of each piece of news, the result gives each
    /// peer's and each caller's removals, and the timeline has a registry lane and a read-only
    /// cache lane per peer; kill-9.toml's fleet with `[[peer]]`s a and b.
    #[test]
    fn a_cluster_names_the_peer_each_piece_of_news_waited_on() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/kill-9.toml"),
        )
        .unwrap()
            + "\n[[peer]]\nname = \"a\"\n\n[[peer]]\nname = \"b\"\n";
        let s = scenario(&text);
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let told = Explanation(&trace).render(&s, 0);
        for peer in ["a", "b"] {
            assert!(
                told.contains(&format!("no longer UP in peer {peer}'s registry")),
                "{told}"
            );
            assert!(
                told.contains(&format!("peer {peer}: the eviction run removed")),
                "{told}"
            );
            assert!(
                told.contains(&format!("peer {peer}: read-only response cache")),
                "{told}"
            );
        }
        assert!(
            told.contains("gateway's registry fetch from peer "),
            "{told}"
        );
        assert!(told.contains("per peer: a left the registry +"), "{told}");
        assert!(told.contains("per caller: gateway's cache +"), "{told}");
        assert!(!told.contains("the server's"), "{told}");
        assert!(!told.contains("reached the server"), "{told}");
        let lanes: Vec<String> = Explanation(&trace)
            .timeline(&s, 0)
            .stages
            .into_iter()
            .map(|(label, _)| label)
            .collect();
        assert_eq!(
            lanes,
            [
                "kill-9 started",
                "left peer a's registry",
                "left peer b's registry",
                "left peer a's read-only cache",
                "left peer b's read-only cache",
                "left the callers' Eureka caches",
                "left the Ribbon lists"
            ]
        );
        // The lanes are the peers' own removals; the registry's aggregate is the later one.
        let o = &trace.outcomes[0];
        let last = o
            .servers
            .iter()
            .map(|v| v.server_removed_ms)
            .max()
            .flatten();
        assert_eq!(o.server_removed_ms, last);
    }

    /// A zone outage (`scenarios/cluster/zone-outage-self-preservation.toml`, self-preservation
    /// off): the zone's peer is told once as going down, not as news of the instance, and the
    /// zone's dead gateway as stopped with it; the survivors' eviction runs name the 15 % cap.
    #[test]
    fn a_zone_outage_tells_the_peer_and_the_caller_that_went_with_it() {
        let s = bundled(
            "cluster/zone-outage-self-preservation",
            &["server.eureka.server.enable-self-preservation=false".to_string()],
        );
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let told: String = (0..s.shutdowns.len())
            .map(|i| Explanation(&trace).render(&s, i))
            .collect();
        assert!(
            told.contains("kill -9 with all of zone z1 (a zone outage"),
            "{told}"
        );
        assert!(
            told.contains(
                "peer a went down (with the zone; its host vanished with the zone (host = \
                 \"vanishes\", the default): connects to it hang until each client's connect \
                 timeout): it lists nothing any more"
            ),
            "{told}"
        );
        assert!(!told.contains("peer a's registry"), "{told}");
        assert!(!told.contains("peer a: read-only"), "{told}");
        assert!(
            told.contains("gateway-z1 stopped with its zone at +0.000 s (it lists nothing after)"),
            "{told}"
        );
        assert!(told.contains("evicted (the 15 % cap)"), "{told}");
    }

    /// A vanished zone's readers (FACTS.md §15): on 2021.0 (no connect timeout: the OS's
    /// 127 s) the surviving gateway-z2, made to read only peer a of the lost zone, tells each
    /// connect timeout and the TimedSupervisorTask back-off (its runs outlast the 30 s
    /// interval); with `host = "stays"` it tells refusals and no back-off.
    #[test]
    fn a_vanished_zone_tells_connect_timeouts_and_back_off() {
        let told = |host: &str| {
            let s = bundled(
                "cluster/zone-outage-self-preservation",
                &[
                    "simulation.release=2021.0".to_string(),
                    "caller.gateway-z2.eureka.client.service-url.z2=a".to_string(),
                    "caller.gateway-z2.eureka.client.availability-zones.us-east-1=z2".to_string(),
                    format!("shutdown[0].host={host}"),
                ],
            );
            let trace = trace_trial(&s, 0, RequestMode::Batched);
            Explanation(&trace).render(&s, 0)
        };
        let vanished = told("vanishes");
        assert!(
            vanished.contains("its host vanished with the zone"),
            "{vanished}"
        );
        assert!(
            vanished.contains(
                "gateway-z2's Eureka client got no answer from peer a: connect timed out after \
                 127 s (its host does not answer)"
            ),
            "{vanished}"
        );
        assert!(
            vanished.contains(
                "outlasted its interval (its call still hangs): TimedSupervisorTask \
                 backs off, the next run in 60 s"
            ),
            "{vanished}"
        );
        let refusing = told("stays");
        assert!(
            refusing.contains("a dead process on a live host (host = \"stays\")"),
            "{refusing}"
        );
        assert!(
            refusing.contains(
                "gateway-z2's Eureka client got no answer from peer a: connection refused"
            ),
            "{refusing}"
        );
        assert!(
            !refusing.contains("TimedSupervisorTask backs off"),
            "{refusing}"
        );
    }

    /// The lines of `text` whose absolute time is `at`, e.g. "200.000 s".
    fn lines_at<'t>(text: &'t str, at: &str) -> Vec<&'t str> {
        text.lines()
            .filter(|l| l.trim_start().starts_with(at))
            .collect()
    }

    /// peer-restart.toml, trial 0: b is down from 200 s to 260 s, svc-0 is killed at 300 s.
    /// Going down is told as such, not as a cache refresh or a registry drop, and counts as no
    /// removal: b's registry drops svc-0 at its eviction at 500 s (+200.000 s: its eviction
    /// timer restarted at 260 s, so it runs at 320, 380, 440, 500 s, and the lease, renewed
    /// last at 276.174 s, is expirable from 456.175 s), and its read-only cache at the next
    /// fill, 515.641 s (+215.641 s: the fills are wall-clock multiples of 30 s, a's is there
    /// too), before gateway-b's delta from b brings the news at +236.253 s.
    #[test]
    fn a_restarted_peer_going_down_is_no_removal() {
        let s = bundled("cluster/peer-restart", &[]);
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let told = Explanation(&trace).render(&s, 0);
        let at_200 = lines_at(&told, "200.000 s");
        assert_eq!(at_200.len(), 1, "{told}");
        assert!(
            at_200[0].contains("peer b went down ([[fault]] server-restart, back at 260.000 s)"),
            "{told}"
        );
        assert!(
            lines_at(&told, "260.000 s")
                .iter()
                .any(|l| l.contains("peer b is back: a new incarnation")),
            "{told}"
        );
        assert!(
            told.contains(
                "per peer: a left the registry +189.097 s, read-only cache +215.641 s; \
                 b left the registry +200.000 s, read-only cache +215.641 s"
            ),
            "{told}"
        );
        assert!(
            told.contains("gateway-b's cache +236.253 s (peer b's answer)"),
            "{told}"
        );
    }

    /// spring-cloud-netflix#1822 (run to 900 s), trial 0: peer a crashes at 200 s, before the
    /// kill -15 at 300 s. The crash is told once, and a's empty cells say why.
    #[test]
    fn a_crashed_peer_is_told_and_not_counted() {
        let s = bundled(
            "incidents/scn-1822-one-service-url-peer-down",
            &["simulation.max-duration-s=900".to_string()],
        );
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let told = Explanation(&trace).render(&s, 0);
        let at_200 = lines_at(&told, "200.000 s");
        assert_eq!(at_200.len(), 1, "{told}");
        assert!(
            at_200[0].contains("peer a went down for good ([[fault]] crash)"),
            "{told}"
        );
        assert!(
            told.contains(
                "per peer: a went down at 200.000 s while listing it and stayed down (not \
                 counted); b left the registry never"
            ),
            "{told}"
        );
    }

    /// Netflix/eureka#1102, trial 0: the Failure Peer, cut off from 120 s to 600 s, last got
    /// svc-0's heartbeat (replicated) at 96.135 s, so its copy is expirable from 276.136 s;
    /// its eviction runs (at 43.091 s + 60 s k) find no renews while it is cut off (0 <= 28)
    /// and are blocked at 283.091, 343.091, ..., 583.091 s: 6 runs, until the one at 643.091 s
    /// evicts it (30 renews). Peers a and b cancelled svc-0 at about 303 s (the DELETE and its
    /// replication), so their blocked runs after that (a's at 669.097 s: 27 <= 28) hold
    /// nothing of it and are not told; before, they were counted in with the Failure Peer's.
    #[test]
    fn blocked_eviction_runs_are_counted_per_peer_up_to_its_eviction() {
        let s = bundled("incidents/eureka-1102-isolated-peer-evicts-on-its-own", &[]);
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let told = Explanation(&trace).render(&s, 0);
        let first = lines_at(&told, "283.091 s");
        assert_eq!(first.len(), 1, "{told}");
        assert!(
            first[0].contains(
                "peer failure-peer: eviction run: renews in the last minute 0 <= threshold 28"
            ),
            "{told}"
        );
        let all = lines_at(&told, "583.091 s");
        assert_eq!(all.len(), 1, "{told}");
        assert!(
            all[0].contains(
                "... peer failure-peer: 6 eviction runs in all were blocked (the last: renews \
                 in the last minute 0 <= threshold 28"
            ),
            "{told}"
        );
        assert_eq!(told.matches("eviction runs in all were blocked").count(), 1);
        assert!(
            !told.contains("peer a: eviction run") && !told.contains("peer b: eviction run"),
            "{told}"
        );
    }

    /// Netflix/eureka#1102, trial 0: svc-0's DOWN register reaches b (its registration server)
    /// at 300.002 s and b's replication batch brings it to a at 300.507 s; its DELETE reaches b
    /// at 303.050 s and b's replication of it reaches a at 303.552 s (each batch leaves when its
    /// oldest task, here the replicated call itself, has waited 500 ms, and takes a latency). The instance's own calls are told as its register and
    /// its DELETE, the replications as b's; the trace marks them `from_peer`.
    #[test]
    fn a_replicated_cancel_is_told_as_the_peers_replication() {
        let s = bundled("incidents/eureka-1102-isolated-peer-evicts-on-its-own", &[]);
        let trace = trace_trial(&s, 0, RequestMode::Batched);
        let told = Explanation(&trace).render(&s, 0);
        let line = |at: &str| lines_at(&told, at).join("\n");
        assert!(
            line("300.002 s").contains("a register with status DOWN reached peer b"),
            "{told}"
        );
        assert!(
            line("300.507 s")
                .contains("peer b replicated the register (status DOWN) to peer a: a new lease"),
            "{told}"
        );
        assert!(
            line("303.050 s").contains("the DELETE (unregister) reached peer b: lease cancelled"),
            "{told}"
        );
        assert!(
            line("303.552 s").contains(
                "peer b replicated the cancel (the DELETE it got) to peer a: lease cancelled \
                 there"
            ),
            "{told}"
        );
        assert_eq!(told.matches("the DELETE (unregister) reached").count(), 1);
        let json = Explanation(&trace).to_json_lines(&s);
        let cancels: Vec<&str> = json
            .lines()
            .filter(|l| l.contains("\"kind\":\"cancelled\"") && l.contains("\"process\":0,"))
            .collect();
        assert_eq!(cancels.len(), 2, "{cancels:?}");
        assert!(!cancels[0].contains("from_peer"), "{cancels:?}");
        assert!(cancels[1].contains("\"from_peer\":1"), "{cancels:?}");
    }

    /// Netflix/eureka#1490, trial 1: peer b restarts (down 200-220 s) empty. gateway-2's
    /// delta from b at 227.273 s mismatches (UP_23_ against UP_18_: b has 18 of the 23
    /// registrations back) and its full fetch from b gets b's partial registry: svc-0 and 4
    /// more svc instances leave its cache, and its LoadBalancer list at 243.283 s. svc-0's own
    /// next heartbeat to b (404, then a register) gives it back to b at 229.619 s, b's
    /// read-only level serves it from its next fill (249.140 s), gateway-2's delta at 257.277 s
    /// lists it again and its list at 278.343 s: 35.060 s without it ("for 35 s" in the
    /// incident's file). Each step is told with its cause, the values read from the trace.
    /// (Trial 35 showed it before the fetches' draws moved to their own streams.)
    #[test]
    fn a_partial_registry_is_told_and_so_is_the_way_back() {
        let s = bundled("incidents/eureka-1490-restarted-peer-partial-registry", &[]);
        let trace = trace_trial(&s, 1, RequestMode::Batched);
        let told = Explanation(&trace).render(&s, 0);
        let b = ServerId(1);
        let first = |pred: &dyn Fn(&Observation) -> bool| {
            trace
                .log
                .iter()
                .find(|(t, o)| t.ms() > 220_000 && pred(o))
                .map(|(t, _)| secs(*t))
                .expect("in the trace")
        };
        let registered = first(&|o| {
            matches!(o, Observation::Registered { server, process: 0, from_peer: None, .. }
                if *server == b)
        });
        let served = first(
            &|o| matches!(o, Observation::Served { server, process: 0, up: true } if *server == b),
        );
        assert_eq!(
            (registered.as_str(), served.as_str()),
            ("229.619 s", "249.140 s")
        );
        let dropped = lines_at(&told, "227.273 s");
        assert_eq!(dropped.len(), 1, "{told}");
        for part in [
            "gateway-2's registry fetch from peer b (a full GET /apps: the delta before it left \
             the local reconcile hash UP_23_ different from the server's appsHashCode UP_18_",
            "replaced its Eureka client cache with peer b's partial registry: peer b came back \
             empty at 220.000 s and had not got this instance's registration back",
            "5 instances of svc in all",
        ] {
            assert!(dropped[0].contains(part), "{part:?} in\n{told}");
        }
        assert!(
            lines_at(&told, "243.283 s")[0].contains(
                "gateway-2 -> svc dropped it from the server list (its caller's cache lost it to \
                 peer b's partial registry)"
            ),
            "{told}"
        );
        assert!(
            lines_at(&told, "257.277 s")[0].contains(
                "gateway-2's registry fetch from peer b (a delta, GET /apps/delta) listed it UP \
                 again: peer b got its registration back at 229.619 s (the instance's own \
                 register) and serves it since 249.140 s"
            ),
            "{told}"
        );
        assert!(
            lines_at(&told, "278.343 s")[0].contains("of gateway-2 -> svc listed it again"),
            "{told}"
        );
    }

    /// An empty registry's reconcile hash is the empty string: shown as such, not left out
    /// (peer-restart, trial 15: gateway-b's delta from b right after it came back).
    #[test]
    fn an_empty_reconcile_hash_is_shown() {
        let kind = FetchKind::Reconciled {
            local: "UP_22_".to_string(),
            server: String::new(),
        };
        assert_eq!(
            kind.describe(),
            "a full GET /apps: the delta before it left the local reconcile hash UP_22_ different \
             from the server's appsHashCode \"\" (an empty registry), FACTS.md §4"
        );
    }
}
