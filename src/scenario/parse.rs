//! Scenario file -> validated [`Scenario`], in four steps:
//!
//! 1. `raw`: parse the TOML (keeping spans) and flatten every table into dotted keys with places;
//!    append the `--set KEY=VALUE` overrides to their tables.
//! 2. `resolve`: bind each key to its definition in [`crate::scenario::keys`] (relaxed binding,
//!    Ribbon's exact spelling, `<app>.ribbon.<Key>`) and check its value. Problems of steps 1–2
//!    are collected and reported together.
//! 3. Build the typed configuration from defaults, applying the layers in order:
//!    `[server]` then `[[peer]]` for each peer (server keys and its embedded client's keys);
//!    `[clients]` then `[[app]]`/`[[caller]]`; a caller's Ribbon client for app `a` is
//!    defaults <- `[clients] ribbon.*` <- `[clients] a.ribbon.*` <- caller `ribbon.*` <-
//!    caller `a.ribbon.*`.
//! 4. Check the rules that span keys and tables (required keys, unique names, service URLs
//!    naming peers, shutdown ids and zones, shutdowns within the run, claims about existing
//!    shutdowns with thresholds in their metric's unit), stopping at the first problem; expand
//!    each zone outage (`zone`); resolve each process's Eureka servers (`endpoints`); and
//!    collect warnings for things that are allowed but probably not meant.

#[cfg(test)]
mod claim_tests;
#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod endpoint_tests;
mod endpoints;
mod faults;
mod lifecycle;
#[cfg(test)]
mod peer_tests;
mod preset;
mod raw;
mod resolve;
mod spring;
#[cfg(test)]
mod spring_tests;
#[cfg(test)]
mod tests;
mod zone;
#[cfg(test)]
mod zone_tests;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::balancer::BalancerKind;
use super::error::{Location, Place, ScenarioError};
use super::keys::{
    AVAILABILITY_ZONES, AppDraft, Apply, CallerDraft, ClaimDraft, DEFS, PeerDraft, Section,
    ShutdownDraft, ShutdownRef, Val, closest, set_map,
};
use super::metric::Statistic;
use super::model::{
    AppConfig, CallTarget, CallerConfig, ClaimConfig, ClientConfig, Comparison, DeployConfig,
    FaultConfig, FaultKind, HttpClient, NetworkConfig, PeerConfig, RestartConfig, RestartWhen,
    RibbonConfig, Scenario, ServerConfig, ShutdownConfig, SimulationConfig, Start, Strategy,
    WAIT_FOR_NEWS_MS,
};
use super::release::{EurekaClientTransport, Release, TimeoutProperties, Train};
use resolve::{Resolved, Scope, Setting, resolve};
use spring::SpringFiles;

/// The most zones one `[[app]]` may spread its instances over (`zones`): a region has a few, and
/// each zone is a client configuration of its own that lists every zone.
pub const MAX_APP_ZONES: usize = 64;

/// The most service-url endpoints the client configurations may resolve in all (peers times
/// configurations; `Builder::check_endpoint_count`): 2 000 peers for 5 000 apps, 80 MB.
pub const MAX_ENDPOINTS: usize = 10_000_000;

/// Reads and validates the scenario at `path`, then applies `overrides` (`--set KEY=VALUE`, in
/// order). The scenario is named after the file stem.
pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    ScenarioSource::read(path)?.parse(overrides)
}

/// A scenario file's text, read once, with the names [`load`] gives it. A command that loads
/// the file many times (one per compare variant or sweep point) parses the same text each
/// time, and a shard carries it to `merge`, which needs no access to the file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScenarioSource {
    /// The path as the user named it (messages, reports).
    pub source: String,
    /// The scenario's name: the file stem.
    pub name: String,
    pub text: String,
    /// The `spring-config` files the text names, by the path as written, read with it (so a
    /// shard's `merge` needs neither); one that cannot be read is left out, and parsing says
    /// why.
    #[serde(default)]
    pub spring: BTreeMap<String, String>,
}

impl ScenarioSource {
    /// Reads the file at `path`, and the Spring files it names.
    pub fn read(path: &Path) -> Result<ScenarioSource, ScenarioError> {
        let bytes = std::fs::read(path).map_err(|source| ScenarioError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let text = utf8(bytes, path)?;
        let name = path.file_stem().map_or_else(
            || "scenario".to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let source = path.display().to_string();
        let spring = spring_texts(&text, &source);
        Ok(ScenarioSource {
            source,
            name,
            text,
            spring,
        })
    }

    /// Validates the text with `overrides` applied, as [`load`] does.
    pub fn parse(&self, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let files = SpringFiles::beside(&self.source, &self.spring);
        parse_with(&self.text, &self.source, &self.name, overrides, &files)
    }
}

/// `bytes` as text, or where they stop being UTF-8: the byte offset, and its line and column
/// (columns in characters, as the other messages count them).
fn utf8(bytes: Vec<u8>, path: &Path) -> Result<String, ScenarioError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = String::from_utf8_lossy(&e.as_bytes()[..offset]).into_owned();
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ScenarioError::NotUtf8 {
            path: path.display().to_string(),
            line,
            column,
            offset,
        }
    })
}

/// The readable Spring files `text` names (nothing when it does not parse: `parse` says why).
fn spring_texts(text: &str, source: &str) -> BTreeMap<String, String> {
    let none = BTreeMap::new();
    if !spring::may_name_files(text) {
        return none;
    }
    let files = SpringFiles::beside(source, &none);
    let Ok((mut raw, _)) = raw::read(text, source) else {
        return none;
    };
    // Reading them as a parse does reads every file they import and every variable file too.
    spring::import(&mut raw, &files, source, &mut Vec::new());
    files.read.into_inner()
}

/// Validates scenario `text`; `source` names the file in messages and `name` is the scenario's
/// name. `overrides` are `--set KEY=VALUE` arguments, applied after the file, in order.
pub fn parse_str(
    text: &str,
    source: &str,
    name: &str,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    let none = BTreeMap::new();
    let files = SpringFiles::beside(source, &none);
    parse_with(text, source, name, overrides, &files)
}

/// [`parse_str`] with `spring-config` files found beside `path` instead of `source` (tests
/// that name a bundled file by a shorter name).
#[cfg(test)]
pub(crate) fn parse_beside(
    text: &str,
    source: &str,
    name: &str,
    overrides: &[String],
    path: &Path,
) -> Result<Scenario, ScenarioError> {
    let none = BTreeMap::new();
    let files = SpringFiles::beside(&path.to_string_lossy(), &none);
    parse_with(text, source, name, overrides, &files)
}

/// [`parse_str`] with `spring-config` files found through `files`.
fn parse_with(
    text: &str,
    source: &str,
    name: &str,
    overrides: &[String],
    files: &SpringFiles<'_>,
) -> Result<Scenario, ScenarioError> {
    let (mut raw, mut errors) = raw::read(text, source)?;
    for arg in overrides {
        if let Err(e) = raw.apply_override(arg, source) {
            errors.push(e);
        }
    }
    let spring_notes = spring::import(&mut raw, files, source, &mut errors);
    preset::apply(&mut raw);
    let app_names: Vec<&str> = raw.apps.iter().filter_map(|t| t.ident()).collect();
    let tables: Vec<Resolved> = raw
        .tables()
        .map(|t| resolve(t, &app_names, source, &mut errors))
        .collect();
    if let Some(e) = ScenarioError::from_list(errors) {
        return Err(e);
    }
    let warnings = spring_notes
        .into_iter()
        .chain(
            tables
                .iter()
                .flat_map(|t| spring::ignored_warnings(&t.label, &t.ignored)),
        )
        .chain(tables.iter().flat_map(|t| t.unresolved.iter().cloned()))
        .collect();
    Builder {
        file: source,
        warnings,
    }
    .build(name, &tables)
}

struct Builder<'a> {
    file: &'a str,
    warnings: Vec<String>,
}

fn settings(table: Option<&Resolved>) -> &[Setting] {
    table.map_or(&[], |t| t.settings.as_slice())
}

/// Applies the table-wide client keys of `settings` (not the `<app>.ribbon.*` ones), map keys
/// included.
fn apply_client(client: &mut ClientConfig, settings: &[Setting]) {
    for s in settings {
        match (s.def.apply, &s.scope) {
            (Apply::Client(f), Scope::Global) => f(client, &s.val),
            (Apply::ClientMap(f), Scope::MapKey(key)) => f(client, key, &s.val),
            (Apply::Ribbon(f), Scope::Global) => f(&mut client.ribbon, &s.val),
            _ => {}
        }
    }
}

/// The draft of a table from its own keys: each setting whose `apply` writes the draft (`own`
/// picks it out) sets its value.
fn draft_of<D: Default>(table: &Resolved, own: impl Fn(Apply) -> Option<fn(&mut D, &Val)>) -> D {
    let mut draft = D::default();
    for s in &table.settings {
        if let Some(f) = own(s.def.apply) {
            f(&mut draft, &s.val);
        }
    }
    draft
}

/// The client of a process table: `base` (the `[clients]` table's) with the table's own client
/// keys on top.
fn client_of(base: &ClientConfig, table: &Resolved) -> ClientConfig {
    let mut client = base.clone();
    apply_client(&mut client, &table.settings);
    client
}

/// The message and the allowed values of a phase of a shutdown (`what`, "the shutdown ends")
/// that falls at `at_ms`, `key` (`key_ms`) after the shutdown's at-s, not before the end of the
/// trial.
struct LatePhase {
    what: &'static str,
    at_ms: u64,
    key: &'static str,
    key_ms: u64,
}

impl LatePhase {
    fn past(&self, shutdown_at_ms: u64, duration_s: u64) -> (String, String) {
        let LatePhase {
            what,
            at_ms,
            key,
            key_ms,
        } = self;
        let problem = format!(
            "{what} at {} s (at-s {} + {key} {}), not before the end of the trial \
             (simulation.duration-s = {duration_s})",
            at_ms / 1000,
            shutdown_at_ms / 1000,
            key_ms / 1000
        );
        (problem, format!("at-s + {key} below {duration_s}"))
    }
}

/// Applies the server keys of `settings` and their client keys to the embedded client.
fn apply_server(server: &mut ServerConfig, settings: &[Setting]) {
    for s in settings {
        if let Apply::Server(f) = s.def.apply {
            f(server, &s.val);
        }
    }
    apply_client(&mut server.client, settings);
}

/// Applies the Ribbon keys of `settings` in `scope`.
fn apply_ribbon(ribbon: &mut RibbonConfig, settings: &[Setting], scope: &Scope) {
    for s in settings.iter().filter(|s| &s.scope == scope) {
        if let Apply::Ribbon(f) = s.def.apply {
            f(ribbon, &s.val);
        }
    }
}

/// Applies the `niws.loadbalancer.<app>.*` settings of `settings` in `scope` once more, over
/// whatever `niws.loadbalancer.default.*` a later table set.
fn apply_per_client_niws(ribbon: &mut RibbonConfig, settings: &[Setting], scope: &Scope) {
    for s in settings
        .iter()
        .filter(|s| &s.scope == scope && s.def.niws_leaf().is_some())
    {
        if let Apply::Ribbon(f) = s.def.apply {
            f(ribbon, &s.val);
        }
    }
}

impl Builder<'_> {
    fn at(&self, place: &Place) -> Box<Location> {
        Location::boxed(self.file, place.clone())
    }

    fn warn(&mut self, place: &Place, text: String) {
        let at = self.at(place);
        self.warnings.push(format!("{at}: {text}"));
    }

    fn invalid(
        &self,
        table: &Resolved,
        key: &str,
        problem: String,
        allowed: String,
    ) -> ScenarioError {
        ScenarioError::InvalidValue {
            at: self.at(&table.place_of(key)),
            key: table.path_of(key),
            problem,
            allowed,
        }
    }

    /// Every required key of `table` is present.
    fn require(&self, table: &Resolved) -> Result<(), ScenarioError> {
        let missing = DEFS
            .iter()
            .filter(|d| d.required && d.section() == table.section)
            .find(|d| table.get(d.key).is_none());
        match missing {
            Some(def) => Err(ScenarioError::MissingKey {
                at: self.at(&table.at),
                key: format!("{}.{}", table.label, def.key),
                allowed: def.kind.allowed(),
            }),
            None => Ok(()),
        }
    }

    /// `max-duration-s`: by default a day ([`WAIT_FOR_NEWS_MS`]) after the last planned action
    /// (a shutdown's last step, a restart, a deploy, a fault's end) and never below
    /// `duration-s`; one written below `duration-s` is an error.
    fn resolve_max_duration(
        &self,
        table: Option<&Resolved>,
        simulation: &mut SimulationConfig,
        shutdowns: &[ShutdownConfig],
        restarts: &[RestartConfig],
        deploys: &[DeployConfig],
        faults: &[FaultConfig],
    ) -> Result<(), ScenarioError> {
        let duration = simulation.duration_ms;
        if let Some(table) = table.filter(|t| t.get("max-duration-s").is_some()) {
            if simulation.max_duration_ms < duration {
                return Err(self.invalid(
                    table,
                    "max-duration-s",
                    format!(
                        "{} s is below simulation.duration-s = {} s",
                        simulation.max_duration_ms / 1000,
                        duration / 1000
                    ),
                    format!("at least {} (duration-s)", duration / 1000),
                ));
            }
            return Ok(());
        }
        let last_action = shutdowns
            .iter()
            .map(ShutdownConfig::last_planned_ms)
            .chain(restarts.iter().filter_map(|r| match r.when {
                RestartWhen::At(at) => Some(at),
                RestartWhen::AfterExit(_) => None,
            }))
            .chain(deploys.iter().map(|d| d.at_ms))
            .chain(faults.iter().map(FaultConfig::ends_ms))
            .max()
            .unwrap_or(0);
        simulation.max_duration_ms = duration.max(last_action + WAIT_FOR_NEWS_MS);
        Ok(())
    }

    /// `<app>.ribbon.*` or `niws.loadbalancer.<app>.*` in a table whose process does not route
    /// requests.
    fn warn_per_app_ribbon(&mut self, table: &Resolved, why: &str) {
        for s in table
            .settings
            .iter()
            .filter(|s| matches!(s.scope, Scope::App(_)))
        {
            self.warn(&s.key_at, format!("`{}` has no effect: {why}", s.display));
        }
    }

    fn build(mut self, name: &str, tables: &[Resolved]) -> Result<Scenario, ScenarioError> {
        let single = |s: Section| tables.iter().find(|t| t.section == s);
        let array = |s: Section| tables.iter().filter(move |t| t.section == s);

        let mut simulation = SimulationConfig::default();
        for s in settings(single(Section::Simulation)) {
            if let Apply::Simulation(f) = s.def.apply {
                f(&mut simulation, &s.val);
            }
        }
        let mut network = NetworkConfig::default();
        for s in settings(single(Section::Network)) {
            if let Apply::Network(f) = s.def.apply {
                f(&mut network, &s.val);
            }
        }
        let release = simulation.release;
        let mut server = self.server(single(Section::Server), release);
        let mut peers = Vec::new();
        for table in array(Section::Peer) {
            peers.push(self.peer(table, &server)?);
        }
        let configs =
            1 + peers.len() + array(Section::App).count() + array(Section::Caller).count();
        self.check_endpoint_count(array(Section::Peer).next_back(), peers.len(), configs)?;
        self.check_service_urls(tables, &server, &peers)?;
        let clients = settings(single(Section::Clients));
        let mut base = ClientConfig {
            ribbon: RibbonConfig::for_release(release),
            ..ClientConfig::default()
        };
        apply_client(&mut base, clients);

        let mut apps = Vec::new();
        for table in array(Section::App) {
            apps.push(self.app(table, &base)?);
        }
        if apps.is_empty() {
            return Err(ScenarioError::Invalid {
                at: self.at(&Place::File),
                problem: "no [[app]]: at least one is required, such as [[app]] with \
                          name = \"svc\" and instances = 3"
                    .to_string(),
            });
        }
        let mut callers = Vec::new();
        for table in array(Section::Caller) {
            callers.push(self.caller(table, &base, clients, &apps, release)?);
        }
        self.check_names(tables, &server, &peers, &apps, &callers)?;
        let names = faults::FaultNames::new(&server, &peers, &apps, &callers);
        let Stops {
            shutdowns,
            shutdown_tables,
            zone_crashes,
            caller_stops,
        } = self.shutdowns(array(Section::Shutdown), &apps, &names, &simulation)?;
        let mut claims = Vec::new();
        for table in array(Section::Claim) {
            claims.push(self.claim(table, &shutdowns)?);
        }
        let mut restarts = Vec::new();
        for table in array(Section::Restart) {
            restarts.push(self.restart(table, &apps, &shutdowns, &simulation)?);
        }
        let mut deploys = Vec::new();
        for table in array(Section::Deploy) {
            deploys.push(self.deploy(table, &apps, &simulation)?);
        }
        let faults = self.faults(array(Section::Fault), zone_crashes, &names, &simulation)?;
        let lifecycle_tables: Vec<&Resolved> = tables.iter().collect();
        self.check_lifecycle(&lifecycle_tables, &restarts, &deploys, &shutdowns, &apps)?;

        self.resolve_max_duration(
            single(Section::Simulation),
            &mut simulation,
            &shutdowns,
            &restarts,
            &deploys,
            &faults,
        )?;
        if callers.is_empty() {
            self.warn(
                &Place::File,
                "no [[caller]]: nothing sends requests, so nothing will be measured".to_string(),
            );
        }
        if shutdowns.is_empty() && deploys.is_empty() {
            self.warn(
                &Place::File,
                "no [[shutdown]]: no instance departs, so nothing will be measured".to_string(),
            );
        }
        self.warn_release(tables, &simulation);
        self.warn_transport(tables, &simulation);
        self.resolve_endpoints(tables, &mut server, &mut peers, &mut apps, &mut callers)?;
        self.warn_not_serving_yet(&server, &simulation, &shutdowns, &shutdown_tables);
        self.warn_callers(&callers, &simulation);
        self.warn_pauses(&shutdowns, &deploys, &simulation);

        Ok(Scenario {
            name: name.to_string(),
            simulation,
            network,
            server,
            peers,
            apps,
            callers,
            shutdowns,
            restarts,
            deploys,
            faults,
            caller_stops,
            claims,
            warnings: self.warnings,
        })
    }

    /// Every `[[shutdown]]` table's stops; an instance stopped by two is refused.
    fn shutdowns<'t>(
        &mut self,
        tables: impl Iterator<Item = &'t Resolved>,
        apps: &[AppConfig],
        names: &faults::FaultNames,
        simulation: &SimulationConfig,
    ) -> Result<Stops<'t>, ScenarioError> {
        let mut shutdowns: Vec<ShutdownConfig> = Vec::new();
        // The table of each shutdown, for messages: a zone outage is one table, many shutdowns.
        let mut shutdown_tables: Vec<&Resolved> = Vec::new();
        let mut zone_crashes = Vec::new();
        let mut caller_stops = Vec::new();
        for table in tables {
            let stops = self.shutdown(table, apps, names, simulation)?;
            for shutdown in stops.shutdowns {
                if let Some(i) = shutdowns
                    .iter()
                    .position(|s| s.instance == shutdown.instance)
                {
                    let (earlier, label) = (&shutdowns[i], &shutdown_tables[i].label);
                    return Err(already_shuts_down(self, table, &shutdown, earlier, label));
                }
                shutdowns.push(shutdown);
                shutdown_tables.push(table);
            }
            zone_crashes.extend(stops.crashes.into_iter().map(|c| (c, table)));
            caller_stops.extend(stops.callers);
        }
        Ok(Stops {
            shutdowns,
            shutdown_tables,
            zone_crashes,
            caller_stops,
        })
    }

    /// Every `[[fault]]` table's fault, then a zone outage's crashes; a fault on a peer a crash
    /// took down is refused.
    fn faults<'t>(
        &mut self,
        tables: impl Iterator<Item = &'t Resolved>,
        zone_crashes: Vec<(FaultConfig, &'t Resolved)>,
        names: &faults::FaultNames,
        simulation: &SimulationConfig,
    ) -> Result<Vec<FaultConfig>, ScenarioError> {
        let mut faults = Vec::new();
        let mut fault_tables = Vec::new();
        for table in tables {
            faults.push(self.fault(table, names, simulation)?);
            fault_tables.push(table);
        }
        {
            let written: Vec<(&FaultConfig, &Resolved)> =
                faults.iter().zip(fault_tables.iter().copied()).collect();
            let crashes: Vec<(&FaultConfig, &Resolved)> = written
                .iter()
                .copied()
                .chain(zone_crashes.iter().map(|(c, t)| (c, *t)))
                .filter(|(c, _)| matches!(c.kind, FaultKind::Crash { .. }))
                .collect();
            self.check_crashed_peers(&written, &crashes, names)?;
        }
        faults.extend(zone_crashes.into_iter().map(|(c, _)| c));
        Ok(faults)
    }

    /// A shutdown before its instance is sure to serve (a cold start) gets a note, once per
    /// table: a trial in which it does not serve yet has no t_stop.
    fn warn_not_serving_yet(
        &mut self,
        server: &ServerConfig,
        simulation: &SimulationConfig,
        shutdowns: &[ShutdownConfig],
        shutdown_tables: &[&Resolved],
    ) {
        // Worst case for an instance to serve: the server opens within its first eviction period
        // (at least 60 s), the process starts within start-spread after it, and its web server
        // is ready context-start + spread after its client's tasks started (a fetch later).
        let ready_by_ms = server.eviction_interval_ms.max(60_000)
            + simulation.start_spread_ms
            + simulation.context_start_ms
            + simulation.context_start_spread_ms
            + 1_000;
        let cold = simulation.start == Start::Cold;
        for (i, shutdown) in shutdowns.iter().enumerate() {
            // Once per table: a zone outage's instances share their at-s.
            let label = &shutdown_tables[i].label;
            let first = shutdown_tables[..i].iter().all(|t| t.label != *label);
            if cold && shutdown.at_ms < ready_by_ms && first {
                let who = match &shutdown.zone {
                    Some(zone) => format!("the instances of zone `{zone}`"),
                    None => shutdown.instance.clone(),
                };
                self.warn(
                    &Place::File,
                    format!(
                        "{label} at {} s: {who} may not be serving yet (it is sure to be \
                         from about {} s: server start, start-spread-s, context-start-ms and \
                         its spread); a trial in which it is not has no t_stop",
                        shutdown.at_ms as f64 / 1000.0,
                        ready_by_ms.div_ceil(1000)
                    ),
                );
            }
        }
    }

    /// A caller on a stack its release does not ship (Zuul on LoadBalancer, Ribbon from 2020.0,
    /// LoadBalancer before Hoxton, Dalston's notification updater) gets a note.
    fn warn_callers(&mut self, callers: &[CallerConfig], simulation: &SimulationConfig) {
        for caller in callers {
            let train = simulation.release.train;
            if caller.is_zuul() && caller.balancer(&simulation.release) != BalancerKind::Ribbon {
                self.warn(
                    &Place::File,
                    format!(
                        "caller `{}` is a Zuul gateway on Spring Cloud LoadBalancer ({train}): \
                         Zuul, Hystrix and Ribbon left Spring Cloud Netflix in 2020.0; the \
                         Hystrix formula here still uses the ribbon.* timeouts",
                        caller.name
                    ),
                );
            }
            if train == Train::Dalston
                && caller
                    .calls
                    .iter()
                    .any(|c| c.ribbon.eureka_notification_updater)
            {
                self.warn(
                    &Place::File,
                    format!(
                        "caller `{}` uses the EurekaNotificationServerListUpdater on Dalston, \
                         whose CloudEurekaClient never passes the cache-refreshed event on: its \
                         server lists never change after they are created",
                        caller.name
                    ),
                );
            }
            match caller.client.load_balancer.ribbon_enabled {
                Some(true) if train >= Train::Y2020 => self.warn(
                    &Place::File,
                    format!(
                        "caller `{}` routes through Ribbon on {train}: Spring Cloud 2020.0 removed \
                         Ribbon from Spring Cloud Netflix; this is only possible with \
                         spring-cloud-netflix-ribbon 2.2.x pinned by hand",
                        caller.name
                    ),
                ),
                Some(false) if train < Train::Hoxton => self.warn(
                    &Place::File,
                    format!(
                        "caller `{}` uses Spring Cloud LoadBalancer on {train}: it first shipped \
                         with Hoxton (spring-cloud-commons 2.2)",
                        caller.name
                    ),
                ),
                _ => {}
            }
        }
    }

    /// `/pause` on a release where it no longer deregisters, or where it stops the web server.
    fn warn_pauses(
        &mut self,
        shutdowns: &[ShutdownConfig],
        deploys: &[DeployConfig],
        simulation: &SimulationConfig,
    ) {
        let pauses = shutdowns.iter().any(|s| s.strategy == Strategy::Pause)
            || deploys.iter().any(|d| d.strategy == Strategy::Pause);
        if pauses && !simulation.release.pause_deregisters() {
            self.warn(
                &Place::File,
                format!(
                    "release {}: from spring-cloud-commons 2.2.7 (Hoxton.SR10) and in 2020.0+ \
                     /pause no longer deregisters from Eureka (FACTS.md §7): the instance stays \
                     UP and serving until `then` after wait-s, so pause is no better than its \
                     final stop; Hoxton.SR9 or older is the release where pause deregisters",
                    simulation.release.name()
                ),
            );
        }
        if pauses && simulation.release.pause_stops_web_server() {
            self.warn(
                &Place::File,
                format!(
                    "release {} runs Spring Boot {}: /pause's context.stop() stops the web \
                     server too (spring-cloud-commons#788, FACTS.md §14), so the paused \
                     instance refuses every request from the pause on, as after a kill -15; \
                     on Boot 2.2 (Hoxton.SR4 or older, or simulation.spring-boot) it keeps \
                     serving while it is deregistered",
                    simulation.release.name(),
                    simulation.release.boot
                ),
            );
        }
    }

    fn server(&mut self, table: Option<&Resolved>, release: Release) -> ServerConfig {
        let mut server = ServerConfig::default();
        server.client.ribbon = RibbonConfig::for_release(release);
        apply_server(&mut server, settings(table));
        if let Some(table) = table {
            self.warn_per_app_ribbon(table, "the Eureka server sends no requests");
        }
        server
    }

    /// One `[[peer]]`: `[server]` (`base`) with the table's server and client keys on top.
    /// Every client configuration (`[server]`'s, each `[[peer]]`'s, `[[app]]`'s and
    /// `[[caller]]`'s) resolves its service URLs to a list of servers, up to every peer: with
    /// thousands of each that list is gigabytes before the resource budget could say so (issue
    /// 14: 5 000 peers and 5 000 apps took 470 MB to parse). Refused beyond
    /// [`MAX_ENDPOINTS`] entries, with the counts.
    fn check_endpoint_count(
        &self,
        last_peer: Option<&Resolved>,
        peers: usize,
        configs: usize,
    ) -> Result<(), ScenarioError> {
        let entries = peers.saturating_mul(configs);
        match last_peer {
            Some(table) if entries > MAX_ENDPOINTS => Err(ScenarioError::Invalid {
                at: self.at(&table.at),
                problem: format!(
                    "{peers} [[peer]] tables for {configs} client configurations ([server], each \
                     [[peer]], [[app]] and [[caller]]) make {entries} service-url endpoints to \
                     resolve; at most {MAX_ENDPOINTS} are allowed (a Eureka cluster has a few \
                     peers: every peer replicates every change to every other)"
                ),
            }),
            _ => Ok(()),
        }
    }

    fn peer(&mut self, table: &Resolved, base: &ServerConfig) -> Result<PeerConfig, ScenarioError> {
        self.require(table)?;
        let draft: PeerDraft = draft_of(table, |apply| match apply {
            Apply::Peer(f) => Some(f),
            _ => None,
        });
        let mut server = base.clone();
        apply_server(&mut server, &table.settings);
        self.warn_per_app_ribbon(table, "a Eureka server sends no requests");
        Ok(PeerConfig {
            name: draft.name,
            zone: draft.zone,
            server,
        })
    }

    fn app(&mut self, table: &Resolved, base: &ClientConfig) -> Result<AppConfig, ScenarioError> {
        self.require(table)?;
        let draft: AppDraft = draft_of(table, |apply| match apply {
            Apply::App(f) => Some(f),
            _ => None,
        });
        let mut client = client_of(base, table);
        self.warn_per_app_ribbon(table, "only a [[caller]] sends requests through Ribbon");
        let zone_clients = self.zone_clients(table, &draft.zones, &mut client)?;
        Ok(AppConfig {
            name: draft.name,
            instances: draft.instances,
            zones: draft.zones,
            zone_clients,
            service_time_ms: draft.service_time_ms,
            client,
        })
    }

    /// `[[app]] zones`: one client configuration per zone, each with its zone first in
    /// `availability-zones.<region>` and then the others in the order written (the process's
    /// zone is its first availability zone, `InstanceInfo#getZone`); `client` becomes the
    /// first zone's. Each zone once, and not with the table's own
    /// `eureka.client.availability-zones.<region>`, which would say otherwise.
    fn zone_clients(
        &self,
        table: &Resolved,
        zones: &[String],
        client: &mut ClientConfig,
    ) -> Result<Vec<ClientConfig>, ScenarioError> {
        if zones.is_empty() {
            return Ok(Vec::new());
        }
        let region = client.region.clone();
        if let Some(own) = table.get_map(AVAILABILITY_ZONES, &region) {
            return Err(self.invalid(
                table,
                "zones",
                format!(
                    "`{}` also sets the app's zones, so its instances would be in two places",
                    own.display
                ),
                "one of zones (instances spread over the zones, round robin) and \
                 eureka.client.availability-zones.<region> (every instance in its first zone)"
                    .to_string(),
            ));
        }
        if zones.len() > MAX_APP_ZONES {
            return Err(self.invalid(
                table,
                "zones",
                format!("{} zones", zones.len()),
                format!(
                    "at most {MAX_APP_ZONES} zones (each is a client configuration listing every \
                     zone)"
                ),
            ));
        }
        if let Some((i, zone)) = zones
            .iter()
            .enumerate()
            .find(|(i, z)| zones[..*i].contains(z))
        {
            return Err(self.invalid(
                table,
                "zones",
                format!(
                    "zone `{zone}` is listed twice (at {} and {})",
                    zones.iter().position(|z| z == zone).unwrap_or(0) + 1,
                    i + 1
                ),
                "each zone once; instance i runs in zone i mod n of the list".to_string(),
            ));
        }
        let clients: Vec<ClientConfig> = zones
            .iter()
            .map(|zone| {
                let mut c = client.clone();
                let order = std::iter::once(zone)
                    .chain(zones.iter().filter(|z| *z != zone))
                    .cloned()
                    .collect();
                set_map(&mut c.availability_zones, &region, order);
                c
            })
            .collect();
        *client = clients[0].clone();
        Ok(clients)
    }

    fn caller(
        &mut self,
        table: &Resolved,
        base: &ClientConfig,
        clients: &[Setting],
        apps: &[AppConfig],
        release: Release,
    ) -> Result<CallerConfig, ScenarioError> {
        self.require(table)?;
        let draft: CallerDraft = draft_of(table, |apply| match apply {
            Apply::Caller(f) => Some(f),
            _ => None,
        });
        let client = client_of(base, table);

        let declared: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
        let mut calls = Vec::new();
        for called in &draft.calls {
            let Some(index) = declared.iter().position(|a| a == called) else {
                let hint = closest(called, declared.iter().copied())
                    .map(|a| format!("; did you mean `{a}`?"))
                    .unwrap_or_default();
                return Err(self.invalid(
                    table,
                    "calls",
                    format!("`{called}` is not a declared [[app]]{hint}"),
                    declared.join(", "),
                ));
            };
            // defaults <- [clients] ribbon.* <- [clients] <app>.ribbon.* <- caller ribbon.*
            // <- caller <app>.ribbon.* <- [clients] niws.loadbalancer.<app>.* <- caller
            // niws.loadbalancer.<app>.*: Ribbon never reads niws.loadbalancer.default.* for
            // the client `<app>` (`KeyDef::niws_leaf`), so a caller's `default` cannot undo a
            // [clients] per-client value.
            let app = Scope::App(called.clone());
            let mut ribbon = RibbonConfig::for_release(release);
            apply_ribbon(&mut ribbon, clients, &Scope::Global);
            apply_ribbon(&mut ribbon, clients, &app);
            apply_ribbon(&mut ribbon, &table.settings, &Scope::Global);
            apply_ribbon(&mut ribbon, &table.settings, &app);
            apply_per_client_niws(&mut ribbon, clients, &app);
            apply_per_client_niws(&mut ribbon, &table.settings, &app);
            calls.push(CallTarget { app: index, ribbon });
        }
        for s in &table.settings {
            if let Scope::App(app) = &s.scope
                && !draft.calls.contains(app)
            {
                let text = format!(
                    "`{}` has no effect: `{}` does not call `{app}`",
                    s.display, draft.name
                );
                self.warn(&s.key_at, text);
            }
        }
        if !client.fetch_registry {
            let text = format!(
                "caller `{}` has eureka.client.fetch-registry = false: it can never discover \
                 an instance",
                draft.name
            );
            self.warn(&table.at, text);
        }
        let http_client = self.http_client(table, &draft, release)?;
        Ok(CallerConfig {
            name: draft.name,
            calls,
            rate_per_s: draft.rate_per_s,
            method: draft.method,
            fixed_rate: draft.fixed_rate,
            http_client,
            spring_retry: draft.spring_retry,
            zuul_retryable: draft.zuul_retryable.unwrap_or(false),
            hystrix_timeout_ms: draft.hystrix_timeout_ms,
            client,
        })
    }

    /// `http-client`, with `zuul` as its alias: `zuul = true` is Zuul; `zuul = false` is the
    /// train's default, or RestTemplate where that default is Zuul. The two contradicting each
    /// other is an error; keys that cannot act on the resolved stack are warnings.
    fn http_client(
        &mut self,
        table: &Resolved,
        draft: &CallerDraft,
        release: Release,
    ) -> Result<HttpClient, ScenarioError> {
        let train = release.train;
        let default = HttpClient::default_for(train);
        let client = match (draft.http_client, draft.zuul) {
            (Some(c), Some(zuul)) if (c == HttpClient::Zuul) != zuul => {
                return Err(self.invalid(
                    table,
                    "zuul",
                    format!(
                        "`zuul = {zuul}` contradicts `http-client = \"{}\"` (zuul is its \
                         alias)",
                        c.name()
                    ),
                    "leave out zuul, or make it agree with http-client".to_string(),
                ));
            }
            (Some(c), _) => c,
            (None, Some(true)) => HttpClient::Zuul,
            (None, Some(false)) if default == HttpClient::Zuul => HttpClient::RestTemplate,
            (None, _) => default,
        };
        let name = &draft.name;
        if draft.zuul_retryable.is_some() && client != HttpClient::Zuul {
            self.warn(
                &table.place_of("zuul.retryable"),
                format!(
                    "`zuul.retryable` has no effect: caller `{name}` is {} (http-client), not \
                     Zuul",
                    client.name()
                ),
            );
        }
        if draft.zuul_retryable == Some(true) && !draft.spring_retry {
            self.warn(
                &table.place_of("zuul.retryable"),
                format!(
                    "caller `{name}`: zuul.retryable = true does nothing without spring-retry \
                     on the classpath (RibbonLoadBalancingHttpClient never retries; only \
                     RetryableRibbonLoadBalancingHttpClient reads it): set spring-retry = true"
                ),
            );
        }
        let first = match client {
            HttpClient::Zuul | HttpClient::RestTemplate | HttpClient::Feign => None,
            HttpClient::WebClient | HttpClient::Gateway => Some(Train::Finchley),
        };
        if let Some(first) = first
            && train < first
        {
            self.warn(
                &table.place_of("http-client"),
                format!(
                    "caller `{name}` is {} on {train}: a load-balanced WebClient and Spring \
                     Cloud Gateway first shipped with Finchley (Spring Boot 2.0)",
                    client.name()
                ),
            );
        }
        Ok(client)
    }

    /// Peer, app and caller names are unique; app and caller names differ from the
    /// spring.application.name of every server; a peer is not named like an instance (`svc-0`),
    /// which would make its host ambiguous.
    fn check_names(
        &self,
        tables: &[Resolved],
        server: &ServerConfig,
        peers: &[PeerConfig],
        apps: &[AppConfig],
        callers: &[CallerConfig],
    ) -> Result<(), ScenarioError> {
        const ALLOWED: &str = "a name no other [[peer]], [[app]], [[caller]] or the server uses";
        // `tables` lists the peers, then the apps, then the callers (`RawScenario::tables`).
        let named = tables
            .iter()
            .filter(|t| matches!(t.section, Section::Peer | Section::App | Section::Caller));
        let names = peers
            .iter()
            .map(|p| &p.name)
            .chain(apps.iter().map(|a| &a.name))
            .chain(callers.iter().map(|c| &c.name));
        let server_names: Vec<&str> = std::iter::once(server)
            .chain(peers.iter().map(|p| &p.server))
            .map(|s| s.application_name.as_str())
            .collect();
        // Each name's table, found in constant time (a search of the names before made a file
        // of n tables cost n²).
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for (table, name) in named.zip(names) {
            // A peer may be named like the server application (a lone peer so named is the
            // standalone server).
            if table.section != Section::Peer && server_names.contains(&name.as_str()) {
                return Err(self.invalid(
                    table,
                    "name",
                    format!("`{name}` is the Eureka server's spring.application.name"),
                    ALLOWED.to_string(),
                ));
            }
            if table.section == Section::Peer
                && let Some((app, _)) = instance_of(name, apps)
            {
                return Err(self.invalid(
                    table,
                    "name",
                    format!(
                        "`{name}` is the id of an instance of app `{}`",
                        apps[app].name
                    ),
                    format!("{ALLOWED}, and no instance id (<app name>-<index>)"),
                ));
            }
            if let Some(other) = seen.get(name.as_str()) {
                return Err(self.invalid(
                    table,
                    "name",
                    format!("`{name}` is already the name of {other}"),
                    ALLOWED.to_string(),
                ));
            }
            seen.insert(name, &table.label);
        }
        Ok(())
    }

    /// One `[[shutdown]]`: an instance, or a zone outage (`parse/zone.rs`), exactly one of
    /// them; a plan that falls within the trial.
    fn shutdown(
        &mut self,
        table: &Resolved,
        apps: &[AppConfig],
        names: &faults::FaultNames,
        simulation: &SimulationConfig,
    ) -> Result<zone::Stops, ScenarioError> {
        self.require(table)?;
        let draft: ShutdownDraft = draft_of(table, |apply| match apply {
            Apply::Shutdown(f) => Some(f),
            _ => None,
        });
        let mut stops = zone::Stops::default();
        let targets = self.shutdown_targets(table, &draft, apps, names, &mut stops)?;

        let waits = draft.strategy.waits();
        let resumes = draft.strategy == Strategy::Pause && draft.resume_ms.is_some();
        let planned_ms = draft.strategy.planned_ms(draft.wait_ms, draft.resume_ms);
        let end_ms = draft.at_ms.saturating_add(planned_ms);
        self.check_shutdown_times(table, &draft, simulation, end_ms, resumes)?;
        let sigterm = draft.strategy.ends_in_sigterm(draft.then, resumes);
        if !draft.sigterm_reaches_jvm
            && sigterm
            && end_ms.saturating_add(draft.termination_grace_ms) >= simulation.duration_ms
            && let Some(s) = table.get("sigterm-reaches-jvm")
        {
            let text = format!(
                "`{}`: the SIGKILL comes termination-grace-period-s after the SIGTERM, at or \
                 after the end of the trial, so the instance never stops in it",
                s.display
            );
            self.warn(&s.key_at, text);
        }
        self.warn_lifecycle_keys(table, &draft);
        if !waits {
            for key in ["wait-s", "then"] {
                if let Some(s) = table.get(key) {
                    let text = format!(
                        "`{}` has no effect with strategy {}: only pause and service-registry \
                         wait and then stop",
                        s.display,
                        draft.strategy.name()
                    );
                    self.warn(&s.key_at, text);
                }
            }
        }
        stops.shutdowns = targets
            .into_iter()
            .map(|(instance, (app, index))| ShutdownConfig {
                instance,
                app,
                index,
                at_ms: draft.at_ms,
                strategy: draft.strategy,
                wait_ms: draft.wait_ms,
                then: draft.then,
                sigterm_reaches_jvm: draft.sigterm_reaches_jvm,
                termination_grace_ms: draft.termination_grace_ms,
                resume_ms: draft.resume_ms.filter(|_| resumes),
                cancel_override: draft.cancel_override,
                prestop_ms: draft.prestop_ms,
                host_vanishes: draft.host_vanishes.unwrap_or(draft.zone.is_some()),
                zone: draft.zone.clone(),
            })
            .collect();
        Ok(stops)
    }

    /// Who a `[[shutdown]]` stops: one instance, or a zone outage's instances (its crashes and
    /// callers' stops go in `stops`).
    fn shutdown_targets(
        &mut self,
        table: &Resolved,
        draft: &ShutdownDraft,
        apps: &[AppConfig],
        names: &faults::FaultNames,
        stops: &mut zone::Stops,
    ) -> Result<Vec<Target>, ScenarioError> {
        Ok(match (draft.instance.clone(), draft.zone.clone()) {
            (Some(id), None) => {
                let target = find_instance(&id, apps).map_err(|(problem, allowed)| {
                    self.invalid(table, "instance", problem, allowed)
                })?;
                vec![(id, target)]
            }
            (None, Some(zone)) => {
                let members = self.zone_outage(table, draft, &zone, names, apps)?;
                let vanishes = draft.host_vanishes.unwrap_or(true);
                stops.crashes = zone::crashes(&members, draft.at_ms, vanishes);
                stops.callers = zone::caller_stops(&members, draft.at_ms);
                members
                    .instances
                    .iter()
                    .map(|&(a, i)| (format!("{}-{i}", apps[a].name), (a, i)))
                    .collect()
            }
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    table,
                    "zone",
                    "the shutdown names both an instance and a zone".to_string(),
                    "one of instance (one instance departs) and zone (a zone outage)".to_string(),
                ));
            }
            (None, None) => {
                return Err(ScenarioError::MissingKey {
                    at: self.at(&table.at),
                    key: format!("{}.instance", table.label),
                    allowed: format!(
                        "an instance id `<app name>-<index>` such as `svc-0`, or zone = a zone \
                         for a zone outage ({})",
                        names.zones().join(", ")
                    ),
                });
            }
        })
    }

    /// The SIGTERM, the end of a wait and a `/resume` fall inside the trial.
    fn check_shutdown_times(
        &mut self,
        table: &Resolved,
        draft: &ShutdownDraft,
        simulation: &SimulationConfig,
        end_ms: u64,
        resumes: bool,
    ) -> Result<(), ScenarioError> {
        let waits = draft.strategy.waits();
        let duration_s = simulation.duration_ms / 1000;
        // The SIGTERM comes prestop-s after at-s: the stop must fall inside the trial too.
        let sigterm_ms = draft.at_ms.saturating_add(draft.prestop_ms);
        if draft.prestop_ms > 0 && sigterm_ms >= simulation.duration_ms {
            let late = LatePhase {
                what: "the SIGTERM comes",
                at_ms: sigterm_ms,
                key: "prestop-s",
                key_ms: draft.prestop_ms,
            };
            let (problem, allowed) = late.past(draft.at_ms, duration_s);
            return Err(self.invalid(table, "prestop-s", problem, allowed));
        }
        if end_ms >= simulation.duration_ms {
            let (problem, allowed) = if resumes {
                let late = LatePhase {
                    what: "the pause ends with /resume",
                    at_ms: end_ms,
                    key: "resume-s",
                    key_ms: end_ms.saturating_sub(draft.at_ms),
                };
                late.past(draft.at_ms, duration_s)
            } else if waits {
                let late = LatePhase {
                    what: "the shutdown ends",
                    at_ms: end_ms,
                    key: "wait-s",
                    key_ms: draft.wait_ms,
                };
                late.past(draft.at_ms, duration_s)
            } else {
                (
                    format!(
                        "at-s {} is not before the end of the trial (simulation.duration-s = \
                         {duration_s})",
                        draft.at_ms / 1000
                    ),
                    format!("0..{duration_s}"),
                )
            };
            return Err(self.invalid(table, "at-s", problem, allowed));
        }
        Ok(())
    }

    fn claim(
        &mut self,
        table: &Resolved,
        shutdowns: &[ShutdownConfig],
    ) -> Result<ClaimConfig, ScenarioError> {
        self.require(table)?;
        let draft: ClaimDraft = draft_of(table, |apply| match apply {
            Apply::Claim(f) => Some(f),
            _ => None,
        });
        let shutdown = self.claim_shutdown(table, &draft.shutdown, shutdowns)?;
        let value = self.claim_value(table, &draft)?;
        let label = &table.label;
        if draft.comparison == Comparison::Equal && draft.statistic == Statistic::Mean {
            let text = format!(
                "`{label}` compares a mean with ==, which holds only for an exact value; \
                 <= or >= is probably meant"
            );
            self.warn(&table.place_of("comparison"), text);
        }
        if draft.statistic == Statistic::Unresolved && !draft.metric.is_time() {
            let text = format!(
                "`{label}`: {} has a value in every trial, so its unresolved share is always 0",
                draft.metric.name()
            );
            self.warn(&table.place_of("statistic"), text);
        }
        Ok(ClaimConfig {
            name: draft.name,
            shutdown,
            metric: draft.metric,
            statistic: draft.statistic,
            comparison: draft.comparison,
            value,
            source: draft.source,
        })
    }

    /// The index of the shutdown a claim names (by index or instance id).
    fn claim_shutdown(
        &self,
        table: &Resolved,
        named: &ShutdownRef,
        shutdowns: &[ShutdownConfig],
    ) -> Result<usize, ScenarioError> {
        let ids: Vec<&str> = shutdowns.iter().map(|s| s.instance.as_str()).collect();
        let allowed = match shutdowns.len() {
            0 => "a [[shutdown]] table to make the claim about".to_string(),
            1 => format!("0 or {}", ids[0]),
            n => format!("0..={} or one of {}", n - 1, ids.join(", ")),
        };
        if shutdowns.is_empty() {
            return Err(self.invalid(
                table,
                "shutdown",
                "the scenario has no [[shutdown]], so there is nothing to make a claim about"
                    .to_string(),
                allowed,
            ));
        }
        match named {
            ShutdownRef::Index(i) if *i < shutdowns.len() => Ok(*i),
            ShutdownRef::Index(i) => {
                let count = match shutdowns.len() {
                    1 => "one [[shutdown]]".to_string(),
                    n => format!("{n} [[shutdown]] tables"),
                };
                Err(self.invalid(
                    table,
                    "shutdown",
                    format!("shutdown[{i}] does not exist: the file has {count}"),
                    allowed,
                ))
            }
            ShutdownRef::Instance(id) => ids.iter().position(|s| s == id).ok_or_else(|| {
                let hint = closest(id, ids.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                self.invalid(
                    table,
                    "shutdown",
                    format!("no [[shutdown]] stops `{id}`{hint}"),
                    allowed,
                )
            }),
        }
    }

    /// A claim's threshold in the metric's unit, from `value` or `value-s` (seconds).
    fn claim_value(&self, table: &Resolved, draft: &ClaimDraft) -> Result<f64, ScenarioError> {
        const ALLOWED: &str = "value in the metric's unit (ms for times, a count for dead_hits \
                               and errors, a fraction for zero-share and unresolved), or value-s \
                               in seconds for a time metric";
        let from_set = |key: &str| {
            table
                .get(key)
                .is_some_and(|s| matches!(s.key_at, Place::Set(_)))
        };
        let in_seconds = match (draft.value, draft.value_s) {
            (Some(_), Some(_)) if from_set("value") != from_set("value-s") => from_set("value-s"),
            (Some(_), Some(_)) => {
                let problem = format!(
                    "`{}` is also set; give the threshold once",
                    table.path_of("value")
                );
                return Err(self.invalid(table, "value-s", problem, ALLOWED.to_string()));
            }
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => {
                return Err(ScenarioError::MissingKey {
                    at: self.at(&table.at),
                    key: format!("{}.value", table.label),
                    allowed: ALLOWED.to_string(),
                });
            }
        };
        let metric = draft.metric.name();
        let statistic = draft.statistic.name();
        if in_seconds {
            let seconds = draft.value_s.unwrap_or_default();
            if draft.statistic.is_share() {
                let problem = format!(
                    "{statistic} is a share of the trials, not a time; write the fraction as value"
                );
                return Err(self.invalid(table, "value-s", problem, ALLOWED.to_string()));
            }
            if !draft.metric.is_time() {
                let problem = format!("{metric} is a count, not a time; write it as value");
                return Err(self.invalid(table, "value-s", problem, ALLOWED.to_string()));
            }
            // Rounded to a nanosecond so that 0.1 s is 100 ms exactly.
            let ms = (seconds * 1e9).round() / 1e6;
            if !ms.is_finite() {
                let problem = format!("{seconds} s is too large");
                return Err(self.invalid(table, "value-s", problem, ALLOWED.to_string()));
            }
            return Ok(ms);
        }
        let value = draft.value.unwrap_or_default();
        if draft.statistic.is_share() && !(0.0..=1.0).contains(&value) {
            let problem =
                format!("{statistic} is a share of the trials, a fraction in 0..=1, not {value}");
            return Err(self.invalid(
                table,
                "value",
                problem,
                "a number in 0..=1 (0.95 for 95 %)".to_string(),
            ));
        }
        Ok(value)
    }

    /// Transport keys the release's Eureka client does not read (`Release::eureka_client_
    /// transport`, `Release::eureka_client_timeout_properties`; FACTS.md §5.2): Jersey's
    /// timeouts from 2020.0, a family of timeout properties its transports do not bind, and
    /// `eureka.client.restclient.enabled` where there is no choice of transport.
    fn warn_transport(&mut self, tables: &[Resolved], simulation: &SimulationConfig) {
        let release = simulation.release;
        let transports = [false, true].map(|on| release.eureka_client_transport(on));
        let mut unread: Vec<(String, String)> = Vec::new();
        if transports[0] != EurekaClientTransport::Jersey {
            for key in [
                "eureka.client.eureka-server-connect-timeout-seconds",
                "eureka.client.eureka-server-read-timeout-seconds",
            ] {
                let why = "from 2020.0 the Eureka client calls the server through Spring Cloud's \
                           RestTemplate or RestClient transport, which does not read it (the \
                           Jersey client it configures left the starter)";
                unread.push((key.to_string(), why.to_string()));
            }
        }
        let read: Vec<TimeoutProperties> = transports
            .iter()
            .filter_map(|t| release.eureka_client_timeout_properties(*t))
            .map(|(family, _)| family)
            .collect();
        for family in TimeoutProperties::ALL {
            if read.contains(&family) {
                continue;
            }
            let why = match read.first() {
                Some(other) => format!("its Eureka client reads `{}.*`", other.prefix()),
                None => "its Eureka client's transport has no timeout property".to_string(),
            };
            for leaf in [
                "connect-timeout",
                "connect-request-timeout",
                "socket-timeout",
            ] {
                unread.push((format!("{}.{leaf}", family.prefix()), why.clone()));
            }
        }
        if transports[0] == transports[1] {
            let why = "only 2024.0 and 2025.0 (spring-cloud-netflix 4.2-4.3) offer both \
                       transports";
            unread.push((
                "eureka.client.restclient.enabled".to_string(),
                why.to_string(),
            ));
        }
        for table in tables {
            for (key, why) in &unread {
                if let Some(s) = table.get(key) {
                    let text =
                        format!("`{}` has no effect on {}: {why}", s.display, release.name());
                    self.warn(&s.key_at, text);
                }
            }
        }
    }

    /// Keys the scenario's Eureka version does not have (FACTS.md §0.2).
    fn warn_release(&mut self, tables: &[Resolved], simulation: &SimulationConfig) {
        let release = simulation.release;
        if release.has_unregister_on_shutdown_flag() {
            return;
        }
        for table in tables {
            if let Some(s) = table.get("eureka.client.should-unregister-on-shutdown") {
                let text = format!(
                    "`{}` has no effect on Eureka {}: the flag exists from 1.8.2, and before it \
                     the cancel is always sent",
                    s.display, release.eureka
                );
                self.warn(&s.key_at, text);
            }
        }
    }
}

/// The ids of an app's instances, for messages: `svc-0, svc-1` or `svc-0 .. svc-99`.
fn instance_ids(app: &AppConfig) -> String {
    let name = &app.name;
    match app.instances {
        0 => "none".to_string(),
        n if n <= 6 => (0..n)
            .map(|i| format!("{name}-{i}"))
            .collect::<Vec<_>>()
            .join(", "),
        n => format!("{name}-0 .. {name}-{}", n - 1),
    }
}

/// An instance a `[[shutdown]]` stops: its id, and its app and index.
type Target = (String, (usize, u32));

/// What the `[[shutdown]]` tables stop: each instance's shutdown with its table (a zone outage
/// is one table, many shutdowns), a zone outage's peer crashes and its callers' stops.
struct Stops<'t> {
    shutdowns: Vec<ShutdownConfig>,
    shutdown_tables: Vec<&'t Resolved>,
    zone_crashes: Vec<(FaultConfig, &'t Resolved)>,
    caller_stops: Vec<crate::scenario::CallerStop>,
}

/// The app and index of instance id `id` (`<app name>-<index>`), or the problem and the allowed
/// ids.
/// `shutdown` (from `table`) names an instance that `earlier` (from table `label`) already
/// stops: one `[[shutdown]]` per instance, and one per zone.
fn already_shuts_down(
    builder: &Builder,
    table: &Resolved,
    shutdown: &ShutdownConfig,
    earlier: &ShutdownConfig,
    label: &str,
) -> ScenarioError {
    let id = &shutdown.instance;
    match (&shutdown.zone, &earlier.zone) {
        (Some(zone), Some(before)) if zone == before => builder.invalid(
            table,
            "zone",
            format!("zone `{zone}` already goes down in {label}"),
            "one [[shutdown]] per zone".to_string(),
        ),
        (Some(zone), _) => builder.invalid(
            table,
            "zone",
            format!("`{id}`, of zone `{zone}`, already shuts down in {label}"),
            "one [[shutdown]] per instance (a zone outage stops each instance of the zone)"
                .to_string(),
        ),
        (None, Some(before)) => builder.invalid(
            table,
            "instance",
            format!("`{id}` already shuts down in {label} (zone `{before}`)"),
            "one [[shutdown]] per instance (a zone outage stops each instance of the zone)"
                .to_string(),
        ),
        (None, None) => builder.invalid(
            table,
            "instance",
            format!("`{id}` already shuts down in {label}"),
            "one [[shutdown]] per instance".to_string(),
        ),
    }
}

/// The app and index of instance id `id`, if it is one: [`find_instance`] without its
/// message, which compares `id` with the first ids of every app for a "did you mean". Asked of
/// every peer name and fault side, the message made a file of n peers and n apps cost n²
/// comparisons (3 000 of each: more than a minute in the fuzz build).
fn instance_of(id: &str, apps: &[AppConfig]) -> Option<(usize, u32)> {
    let (name, index) = id.rsplit_once('-')?;
    let (a, app) = apps.iter().enumerate().find(|(_, app)| app.name == name)?;
    // Only the canonical spelling `svc-3` (not `svc-03` or `svc-+3`) is the id of instance 3.
    let i = index
        .parse::<u32>()
        .ok()
        .filter(|i| i.to_string() == index)?;
    (i < app.instances).then_some((a, i))
}

fn find_instance(id: &str, apps: &[AppConfig]) -> Result<(usize, u32), (String, String)> {
    if let Some((name, index)) = id.rsplit_once('-')
        && let Some((a, app)) = apps.iter().enumerate().find(|(_, app)| app.name == name)
    {
        // Only the canonical spelling `svc-3` (not `svc-03` or `svc-+3`) is the id of instance 3.
        let index = index.parse::<u32>().ok().filter(|i| i.to_string() == index);
        return match index {
            Some(i) if i < app.instances => Ok((a, i)),
            _ => Err((
                format!(
                    "`{id}` is not an instance of app `{name}`, which has {} instance{}",
                    app.instances,
                    if app.instances == 1 { "" } else { "s" }
                ),
                instance_ids(app),
            )),
        };
    }
    let all = apps.iter().map(instance_ids).collect::<Vec<_>>().join(", ");
    if let Some(app) = apps.iter().find(|a| a.name == id) {
        return Err((
            format!("`{id}` is an app; name one of its instances"),
            instance_ids(app),
        ));
    }
    // Suggest among the first few ids of each app; enough for a typo in the app name.
    let candidates: Vec<String> = apps
        .iter()
        .flat_map(|a| (0..a.instances.min(10)).map(move |i| format!("{}-{i}", a.name)))
        .collect();
    let hint = closest(id, candidates.iter().map(String::as_str))
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    Err((
        format!("`{id}` is not an instance of any [[app]] (ids are <app name>-<index>){hint}"),
        all,
    ))
}
