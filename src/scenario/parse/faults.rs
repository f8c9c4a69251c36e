//! `[[fault]]` tables: partitions, pauses, peer restarts and crashes. Each kind
//! takes its own keys (`for-s`, `down-s`, `between`, `target`); the names it acts on resolve to
//! [`FaultSide`]s against the peers, instance ids, callers, apps and zones of the scenario.

use super::super::error::ScenarioError;
use super::super::keys::{Apply, FaultDraft, closest};
use super::super::model::{
    AppConfig, CallerConfig, DEFAULT_ZONE, FaultConfig, FaultKind, FaultSide, PeerConfig,
    ServerConfig, SimulationConfig,
};
use super::resolve::Resolved;
use super::{Builder, instance_of};

/// The `kind` of a fault as written.
fn fault_kind_name(kind: &FaultKind) -> &'static str {
    match kind {
        FaultKind::Partition { .. } => "partition",
        FaultKind::Pause { .. } => "pause",
        FaultKind::ServerRestart { .. } => "server-restart",
        FaultKind::Crash { .. } => "crash",
    }
}

/// The keys of `[[fault]]` that only some kinds take.
const KIND_KEYS: [&str; 4] = ["for-s", "down-s", "between", "target"];

/// What a name may stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A partition side: a peer, an instance, a caller, an app or a zone.
    Side,
    /// A pause target: one process, a peer, an instance or a caller.
    Process,
    /// A server-restart or crash target: a peer.
    Peer,
}

impl Want {
    /// The kinds of names accepted, for messages.
    fn kinds(self) -> &'static str {
        match self {
            Want::Side => {
                "a [[peer]] name, an instance id, a [[caller]] name, an [[app]] name or a zone"
            }
            Want::Process => "a [[peer]] name, an instance id or a [[caller]] name",
            Want::Peer => "a [[peer]] name",
        }
    }
}

/// The processes of one zone ([`FaultNames::zone_members`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ZoneMembers {
    /// (app, index) of each app instance, app by app in file order.
    pub instances: Vec<(usize, u32)>,
    /// Indices into `Scenario::callers`.
    pub callers: Vec<usize>,
    /// Indices into `Scenario::servers()`.
    pub peers: Vec<usize>,
}

/// Every name a `[[fault]]` (or a `[[shutdown]] zone`) can use, gathered once per scenario.
pub(super) struct FaultNames<'a> {
    /// The servers (`Scenario::servers()`): the `[[peer]]`s, or the implicit server named
    /// `spring.application.name` in `defaultZone`; index = peer index.
    servers: Vec<(String, String)>,
    /// No `[[peer]]`: the one server is the implicit one.
    implicit: bool,
    apps: &'a [AppConfig],
    callers: &'a [CallerConfig],
    /// Zones somebody is in: every server's, then every app's and caller's own zone, once each.
    zones: Vec<String>,
}

impl<'a> FaultNames<'a> {
    pub(super) fn new(
        server: &ServerConfig,
        peers: &[PeerConfig],
        apps: &'a [AppConfig],
        callers: &'a [CallerConfig],
    ) -> FaultNames<'a> {
        let servers: Vec<(String, String)> = if peers.is_empty() {
            vec![(server.application_name.clone(), DEFAULT_ZONE.to_string())]
        } else {
            peers
                .iter()
                .map(|p| (p.name.clone(), p.zone.clone()))
                .collect()
        };
        let mut zones: Vec<String> = Vec::new();
        let own = servers
            .iter()
            .map(|(_, zone)| zone.as_str())
            .chain(apps.iter().flat_map(AppConfig::instance_zones))
            .chain(callers.iter().map(|c| c.client.zone()));
        // A set beside the list: apps spread over zones name many.
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for zone in own {
            if seen.insert(zone) {
                zones.push(zone.to_string());
            }
        }
        FaultNames {
            servers,
            implicit: peers.is_empty(),
            apps,
            callers,
            zones,
        }
    }

    /// `name` as `want` asks, or what is wrong and what is allowed.
    fn resolve(&self, name: &str, want: Want) -> Result<FaultSide, (String, String)> {
        if let Some(k) = self.servers.iter().position(|(n, _)| n == name) {
            return Ok(FaultSide::Peer(k));
        }
        if let Some((app, index)) = instance_of(name, self.apps) {
            return match want {
                Want::Peer => Err((
                    format!("`{name}` is an instance, not a Eureka server"),
                    self.allowed(want),
                )),
                Want::Side | Want::Process => Ok(FaultSide::Instance { app, index }),
            };
        }
        if let Some(c) = self.callers.iter().position(|c| c.name == name) {
            return match want {
                Want::Peer => Err((
                    format!("`{name}` is a [[caller]], not a Eureka server"),
                    self.allowed(want),
                )),
                Want::Side | Want::Process => Ok(FaultSide::Caller(c)),
            };
        }
        if let Some(a) = self.apps.iter().position(|a| a.name == name) {
            return match want {
                Want::Side => Ok(FaultSide::App(a)),
                Want::Process => Err((
                    format!(
                        "`{name}` is an [[app]]: a pause freezes one process; name one of its \
                         instances, such as `{name}-0`"
                    ),
                    self.allowed(want),
                )),
                Want::Peer => Err((
                    format!("`{name}` is an [[app]], not a Eureka server"),
                    self.allowed(want),
                )),
            };
        }
        if self.zones.iter().any(|z| z == name) {
            return match want {
                Want::Side => Ok(FaultSide::Zone(name.to_string())),
                Want::Process | Want::Peer => Err((
                    format!("`{name}` is a zone, not one process"),
                    self.allowed(want),
                )),
            };
        }
        let candidates = self.candidates(want);
        let hint = closest(name, candidates.iter().map(String::as_str))
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        let what = match want {
            Want::Side => "a [[peer]], an instance, a [[caller]], an [[app]] or a zone",
            Want::Process => "a [[peer]], an instance or a [[caller]]",
            Want::Peer if self.implicit => "the Eureka server (there is no [[peer]])",
            Want::Peer => "a [[peer]]",
        };
        Err((format!("`{name}` is not {what}{hint}"), self.allowed(want)))
    }

    /// The names `want` accepts, for the did-you-mean (the first ten ids of each app).
    fn candidates(&self, want: Want) -> Vec<String> {
        let mut names: Vec<String> = self.servers.iter().map(|(n, _)| n.clone()).collect();
        if want == Want::Peer {
            return names;
        }
        names.extend(
            self.apps
                .iter()
                .flat_map(|a| (0..a.instances.min(10)).map(move |i| format!("{}-{i}", a.name))),
        );
        names.extend(self.callers.iter().map(|c| c.name.clone()));
        if want == Want::Side {
            names.extend(self.apps.iter().map(|a| a.name.clone()));
            names.extend(self.zones.iter().cloned());
        }
        names
    }

    /// What `want` accepts, with the names of this scenario.
    fn allowed(&self, want: Want) -> String {
        let peers = self
            .servers
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let mut parts = vec![format!("a [[peer]] name ({peers})")];
        if want != Want::Peer {
            let ids = self
                .apps
                .iter()
                .map(|a| match a.instances {
                    0 => format!("{} has none", a.name),
                    1 => format!("{}-0", a.name),
                    n => format!("{0}-0 .. {0}-{1}", a.name, n - 1),
                })
                .collect::<Vec<_>>()
                .join(", ");
            parts.push(format!("an instance id ({ids})"));
            let callers = self
                .callers
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>();
            if !callers.is_empty() {
                parts.push(format!("a [[caller]] name ({})", callers.join(", ")));
            }
        }
        if want == Want::Side {
            let apps = self
                .apps
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            parts.push(format!("an [[app]] name ({apps})"));
            parts.push(format!("a zone ({})", self.zones.join(", ")));
        }
        let last = parts.pop().unwrap_or_default();
        if parts.is_empty() {
            last
        } else {
            format!("{} or {last}", parts.join(", "))
        }
    }

    /// The name of a side, for messages.
    fn name_of(&self, side: &FaultSide) -> String {
        match side {
            FaultSide::Peer(k) => self.servers[*k].0.clone(),
            FaultSide::Instance { app, index } => format!("{}-{index}", self.apps[*app].name),
            FaultSide::Caller(c) => self.callers[*c].name.clone(),
            FaultSide::App(a) => self.apps[*a].name.clone(),
            FaultSide::Zone(z) => z.clone(),
        }
    }

    /// Zones somebody is in, in the order of [`FaultNames::new`].
    pub(super) fn zones(&self) -> &[String] {
        &self.zones
    }

    /// The servers' names, by peer index.
    pub(super) fn server_names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|(n, _)| n.as_str())
    }

    /// Every process of `zone`, as a `[[fault]]` zone side takes them (the same
    /// [`FaultNames::within`]): the instances of the apps whose zone it is, the callers whose
    /// zone it is, and the peers of that `[[peer]] zone`. `None` if nobody is in `zone`.
    pub(super) fn zone_members(&self, zone: &str) -> Option<ZoneMembers> {
        if !self.zones.iter().any(|z| z == zone) {
            return None;
        }
        let side = FaultSide::Zone(zone.to_string());
        let instances = self
            .apps
            .iter()
            .enumerate()
            .flat_map(|(a, app)| (0..app.instances).map(move |index| (a, index)))
            .filter(|&(app, index)| self.within(&FaultSide::Instance { app, index }, &side))
            .collect();
        let callers = (0..self.callers.len())
            .filter(|&c| self.within(&FaultSide::Caller(c), &side))
            .collect();
        let peers = (0..self.servers.len())
            .filter(|&k| self.within(&FaultSide::Peer(k), &side))
            .collect();
        Some(ZoneMembers {
            instances,
            callers,
            peers,
        })
    }

    /// The first instance of app `app` that runs in zone `zone`, when `app` spreads its
    /// instances over zones and is not wholly in that one (`within` covers that), by id.
    fn instance_in(&self, app: &FaultSide, zone: &FaultSide) -> Option<String> {
        let (FaultSide::App(a), FaultSide::Zone(z)) = (app, zone) else {
            return None;
        };
        let app = &self.apps[*a];
        (0..app.instances)
            .find(|&i| app.zone_of(i) == z)
            .map(|i| format!("{}-{i}", app.name))
    }

    /// Whether every process of `part` is also in `whole` (an instance in its app, a peer or a
    /// process in its own zone).
    fn within(&self, part: &FaultSide, whole: &FaultSide) -> bool {
        match (part, whole) {
            (FaultSide::Instance { app, .. }, FaultSide::App(a)) => app == a,
            (FaultSide::Peer(k), FaultSide::Zone(z)) => self.servers[*k].1 == *z,
            (FaultSide::Instance { app, index }, FaultSide::Zone(z)) => {
                self.apps[*app].zone_of(*index) == z
            }
            (FaultSide::App(app), FaultSide::Zone(z)) => {
                self.apps[*app].instance_zones().iter().all(|x| x == z)
            }
            (FaultSide::Caller(c), FaultSide::Zone(z)) => self.callers[*c].client.zone() == z,
            _ => false,
        }
    }
}

impl Builder<'_> {
    /// One `[[fault]]`: the keys its kind takes and no others, a start within the trial, and
    /// names that resolve to what the kind acts on. Warns when it is still on at the end of the
    /// trial.
    pub(super) fn fault(
        &mut self,
        table: &Resolved,
        names: &FaultNames,
        simulation: &SimulationConfig,
    ) -> Result<FaultConfig, ScenarioError> {
        self.require(table)?;
        let mut draft = FaultDraft::default();
        for s in &table.settings {
            if let Apply::Fault(f) = s.def.apply {
                f(&mut draft, &s.val);
            }
        }
        let kind = draft.kind.as_str();
        let takes: &[&str] = match kind {
            "partition" => &["between", "for-s"],
            "pause" => &["target", "for-s"],
            "server-restart" => &["target", "down-s"],
            _ => &["target"],
        };
        let takes_text = format!("with kind = \"{kind}\": at-s, {}", takes.join(", "));
        if let Some(key) = KIND_KEYS
            .iter()
            .find(|k| !takes.contains(k) && table.get(k).is_some())
        {
            return Err(self.invalid(
                table,
                key,
                format!("{key} is not a key of a {kind} fault"),
                takes_text,
            ));
        }
        if let Some(key) = takes.iter().find(|k| table.get(k).is_none()) {
            let what = match *key {
                "between" => "the two sides, [A, B]",
                "target" => "what it acts on",
                "for-s" => "how long it lasts",
                _ => "how long the peer is down",
            };
            return Err(self.invalid(
                table,
                key,
                format!("a {kind} fault needs {key} ({what})"),
                takes_text,
            ));
        }
        self.at_before_end(table, draft.at_ms, simulation)?;
        let target = |this: &mut Self, want: Want| {
            let name = draft.target.clone().unwrap_or_default();
            let side = names
                .resolve(&name, want)
                .map_err(|(problem, allowed)| this.invalid(table, "target", problem, allowed))?;
            this.warn_zone_shadowed(table, "target", &name, names);
            Ok::<_, ScenarioError>(side)
        };
        let (fault, end) = match kind {
            "partition" => {
                let between = self.between(table, &draft, names)?;
                let for_ms = draft.for_ms.unwrap_or_default();
                let fault = FaultKind::Partition { between, for_ms };
                (fault, Some(("for-s", for_ms, "the partition is still on")))
            }
            "pause" => {
                let side = target(self, Want::Process)?;
                let for_ms = draft.for_ms.unwrap_or_default();
                let fault = FaultKind::Pause {
                    target: side,
                    for_ms,
                };
                (
                    fault,
                    Some(("for-s", for_ms, "the process is still paused")),
                )
            }
            "server-restart" => {
                let FaultSide::Peer(peer) = target(self, Want::Peer)? else {
                    unreachable!("Want::Peer resolves to peers only")
                };
                let down_ms = draft.down_ms.unwrap_or_default();
                let fault = FaultKind::ServerRestart { peer, down_ms };
                (fault, Some(("down-s", down_ms, "the peer is still down")))
            }
            _ => {
                let FaultSide::Peer(peer) = target(self, Want::Peer)? else {
                    unreachable!("Want::Peer resolves to peers only")
                };
                (
                    FaultKind::Crash {
                        peer,
                        vanishes: false,
                    },
                    None,
                )
            }
        };
        if let Some((key, length_ms, still)) = end {
            let end_ms = draft.at_ms.saturating_add(length_ms);
            if end_ms > simulation.duration_ms {
                let duration_s = simulation.duration_ms / 1000;
                let text = format!(
                    "the {kind} ends at {} s, after the end of the trial (simulation.duration-s \
                     = {duration_s}): {still} when the trial ends",
                    end_ms as f64 / 1000.0
                );
                self.warn(&table.place_of(key), text);
            }
        }
        Ok(FaultConfig {
            at_ms: draft.at_ms,
            kind: fault,
        })
    }

    /// No `[[fault]]` acts on a peer that a crash has taken down: a crash is for good (the
    /// world never starts that server again), so a server-restart whose peer crashes before
    /// it is over would bring back a server that cannot come back (its end starts a new
    /// incarnation), and a pause, a partition or a second crash beginning once it is down
    /// would act on a process that is gone. The crashes are `crashes`: the `[[fault]]` ones
    /// (also in `faults`, with their tables) and a zone outage's, each with the table it comes
    /// from. A zone outage's own crash of a peer already crashed is its zone going down with
    /// it, and is not refused. Nor does a server-restart begin while another keeps its peer
    /// down (the first one's end would start the peer during the second's down time).
    pub(super) fn check_crashed_peers(
        &self,
        faults: &[(&FaultConfig, &Resolved)],
        crashes: &[(&FaultConfig, &Resolved)],
        names: &FaultNames,
    ) -> Result<(), ScenarioError> {
        let secs = |ms: u64| ms as f64 / 1000.0;
        for &(fault, table) in faults {
            let me = crashes.iter().position(|(c, _)| std::ptr::eq(*c, fault));
            let acts_on = peers_acted_on(fault);
            for (peer, key, alive_until, would) in acts_on {
                // The first crash of the peer that comes before: one at an earlier instant, at
                // the instant the fault needs the peer (a crash then wins the race), or, for a
                // crash, one at the same instant written before it.
                let conflicts = |j: usize, c: &FaultConfig| match me {
                    Some(me) => {
                        j != me && (c.at_ms < alive_until || (c.at_ms == alive_until && j < me))
                    }
                    None => c.at_ms <= alive_until,
                };
                let crash = crashes
                    .iter()
                    .enumerate()
                    .filter(|(_, (c, _))| {
                        matches!(c.kind, FaultKind::Crash { peer: p, .. } if p == peer)
                    })
                    .filter(|(j, (c, _))| conflicts(*j, c))
                    .map(|(_, crash)| *crash)
                    .min_by_key(|(c, _)| c.at_ms);
                let Some((crash, by)) = crash else {
                    continue;
                };
                let name = &names.servers[peer].0;
                let kind = fault_kind_name(&fault.kind);
                let by = match by.get("zone") {
                    Some(zone) => format!(
                        "the zone outage of {} (zone `{}`)",
                        by.label,
                        zone.val.text()
                    ),
                    None => format!("the crash of {}", by.label),
                };
                let allowed = match fault.kind {
                    FaultKind::ServerRestart { .. } => format!(
                        "a server-restart of `{name}` that is over before {} s (at-s + down-s), \
                         or none: a crashed peer never comes back",
                        secs(crash.at_ms)
                    ),
                    FaultKind::Crash { .. } => format!("one crash of `{name}`"),
                    _ => format!("a {kind} that begins before {} s", secs(crash.at_ms)),
                };
                return Err(self.invalid(
                    table,
                    key,
                    format!(
                        "peer `{name}` is down for good from {} s ({by}): this {kind} at {} s \
                         {would}",
                        secs(crash.at_ms),
                        secs(fault.at_ms)
                    ),
                    allowed,
                ));
            }
        }
        self.check_overlapping_restarts(faults, names)
    }

    /// A server-restart that begins while another keeps the peer down: the earlier one's end
    /// would start the peer in the middle of this one's down time.
    fn check_overlapping_restarts(
        &self,
        faults: &[(&FaultConfig, &Resolved)],
        names: &FaultNames,
    ) -> Result<(), ScenarioError> {
        let secs = |ms: u64| ms as f64 / 1000.0;
        for (i, &(fault, table)) in faults.iter().enumerate() {
            let FaultKind::ServerRestart { peer, .. } = fault.kind else {
                continue;
            };
            let down = faults.iter().enumerate().find(|&(j, (other, _))| {
                j != i
                    && matches!(other.kind, FaultKind::ServerRestart { peer: p, .. } if p == peer)
                    && (other.at_ms < fault.at_ms || (other.at_ms == fault.at_ms && j < i))
                    && fault.at_ms <= other.ends_ms()
            });
            if let Some((_, (other, by))) = down {
                let name = &names.servers[peer].0;
                return Err(self.invalid(
                    table,
                    "target",
                    format!(
                        "peer `{name}` is down from {} to {} s (the server-restart of {}): this \
                         server-restart at {} s begins while it is down",
                        secs(other.at_ms),
                        secs(other.ends_ms()),
                        by.label,
                        secs(fault.at_ms)
                    ),
                    format!(
                        "a server-restart of `{name}` that begins after {} s",
                        secs(other.ends_ms())
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A partition's `between`: exactly two names, resolved, different and apart.
    fn between(
        &mut self,
        table: &Resolved,
        draft: &FaultDraft,
        names: &FaultNames,
    ) -> Result<[FaultSide; 2], ScenarioError> {
        let written = draft.between.clone().unwrap_or_default();
        let sides: Vec<&str> = written.iter().map(|s| s.trim()).collect();
        let [a, b] = sides[..] else {
            return Err(self.invalid(
                table,
                "between",
                format!("a partition has two sides, between names {}", sides.len()),
                format!("[A, B], each {}", Want::Side.kinds()),
            ));
        };
        let mut resolved = Vec::with_capacity(2);
        for name in [a, b] {
            let side = names
                .resolve(name, Want::Side)
                .map_err(|(problem, allowed)| self.invalid(table, "between", problem, allowed))?;
            self.warn_zone_shadowed(table, "between", name, names);
            resolved.push(side);
        }
        let [a, b]: [FaultSide; 2] = resolved
            .try_into()
            .unwrap_or_else(|_| unreachable!("two names, two sides"));
        let apart = "two sides with no process in common".to_string();
        if a == b {
            return Err(self.invalid(
                table,
                "between",
                format!("both sides are `{}`", names.name_of(&a)),
                apart,
            ));
        }
        for (part, whole) in [(&a, &b), (&b, &a)] {
            if names.within(part, whole) {
                return Err(self.invalid(
                    table,
                    "between",
                    format!(
                        "`{}` is part of `{}`, so it would be on both sides",
                        names.name_of(part),
                        names.name_of(whole)
                    ),
                    apart,
                ));
            }
            if let Some(instance) = names.instance_in(part, whole) {
                return Err(self.invalid(
                    table,
                    "between",
                    format!(
                        "`{}` has instances in zone `{}` (`{instance}`: [[app]] zones), so they \
                         would be on both sides",
                        names.name_of(part),
                        names.name_of(whole)
                    ),
                    apart,
                ));
            }
        }
        Ok([a, b])
    }

    /// A name that is a peer, instance, caller or app and also somebody's zone is taken as the
    /// former: say so.
    fn warn_zone_shadowed(&mut self, table: &Resolved, key: &str, name: &str, names: &FaultNames) {
        if names.zones.iter().any(|z| z == name)
            && names
                .resolve(name, Want::Side)
                .is_ok_and(|s| !matches!(s, FaultSide::Zone(_)))
        {
            let text = format!(
                "`{name}` is also a zone; the fault acts on the process(es) of that name, not the \
                 zone"
            );
            self.warn(&table.place_of(key), text);
        }
    }
}

/// The peers a fault acts on: (peer, the key that names it, when the fault needs it alive,
/// what it would do).
fn peers_acted_on(fault: &FaultConfig) -> Vec<(usize, &'static str, u64, &'static str)> {
    match &fault.kind {
        FaultKind::ServerRestart { peer, .. } => {
            vec![(*peer, "target", fault.ends_ms(), "would start it again")]
        }
        FaultKind::Pause {
            target: FaultSide::Peer(peer),
            ..
        } => vec![(
            *peer,
            "target",
            fault.at_ms,
            "would pause a process that is gone",
        )],
        FaultKind::Partition { between, .. } => between
            .iter()
            .filter_map(|side| match side {
                FaultSide::Peer(peer) => Some((
                    *peer,
                    "between",
                    fault.at_ms,
                    "would cut off a process that is gone",
                )),
                _ => None,
            })
            .collect(),
        FaultKind::Crash { peer, .. } => {
            vec![(*peer, "target", fault.at_ms, "would crash it again")]
        }
        FaultKind::Pause { .. } => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::scenario::fixture::SVC_AND_GW;
    use crate::scenario::model::{FaultConfig, FaultKind, FaultSide};
    use crate::scenario::parse_str;

    /// Two peers in two zones, three instances of `svc`, a caller `gw` whose own zone is `z3`
    /// (no peer there), and a 600 s trial.
    fn base() -> String {
        let peers =
            "[[peer]]\nname = \"alpha\"\nzone = \"z1\"\n[[peer]]\nname = \"beta\"\nzone = \"z2\"\n";
        let gw_zone = "eureka.client.availability-zones.us-east-1 = \"z3\"\n";
        format!("{SIMULATION}{peers}{SVC_AND_GW}{gw_zone}")
    }

    /// The 600 s trial of both scenarios here.
    const SIMULATION: &str = "\n[simulation]\nduration-s = 600\n";

    /// No [[peer]]: the implicit server `eureka-server`.
    fn standalone() -> String {
        format!("{SIMULATION}{SVC_AND_GW}")
    }

    fn parse(base: &str, extra: &str) -> Result<Scenario, String> {
        parse_str(&format!("{base}{extra}"), "s.toml", "s", &[]).map_err(|e| e.to_string())
    }

    fn ok(extra: &str) -> Scenario {
        parse(&base(), extra).unwrap_or_else(|e| panic!("rejected: {e}"))
    }

    fn error(extra: &str) -> String {
        match parse(&base(), extra) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e,
        }
    }

    fn fault(extra: &str) -> FaultConfig {
        let s = ok(extra);
        assert_eq!(s.faults.len(), 1, "{:?}", s.faults);
        s.faults[0].clone()
    }

    /// `max-duration-s` defaults to a day after the last planned action, and a fault's end is
    /// one: a partition from 500 s to 2 500 s leaves the registry's news a day after 2 500 s;
    /// a crash counts at its instant.
    #[test]
    fn the_default_max_duration_counts_from_the_last_faults_end() {
        let day = crate::scenario::model::WAIT_FOR_NEWS_MS;
        let plain = ok("").simulation.max_duration_ms;
        let cut = ok(
            "[[fault]]\nkind = \"partition\"\nat-s = 500\nfor-s = 2000\n\
                      between = [\"alpha\", \"z2\"]\n",
        );
        assert_eq!(cut.simulation.max_duration_ms, 2_500_000 + day);
        assert!(plain < 2_500_000 + day, "{plain}");
        let crash = ok("[[fault]]\nkind = \"crash\"\nat-s = 590\ntarget = \"beta\"\n");
        assert_eq!(crash.simulation.max_duration_ms, plain.max(590_000 + day));
    }

    #[test]
    fn no_fault_table_is_no_fault() {
        assert!(ok("").faults.is_empty());
    }

    #[test]
    fn a_partition_between_a_peer_and_a_zone() {
        let f = fault(
            "[[fault]]\nkind = \"partition\"\nat-s = 300\nfor-s = 60\n\
             between = [\"alpha\", \"z2\"]\n",
        );
        assert_eq!(
            f,
            FaultConfig {
                at_ms: 300_000,
                kind: FaultKind::Partition {
                    between: [FaultSide::Peer(0), FaultSide::Zone("z2".into())],
                    for_ms: 60_000,
                },
            }
        );
    }

    #[test]
    fn partition_sides_are_instances_callers_apps_and_process_zones() {
        let f = fault(
            "[[fault]]\nkind = \"partition\"\nat-s = 0\nfor-s = 1\nbetween = [\"svc-2\", \"gw\"]\n",
        );
        assert_eq!(
            f.kind,
            FaultKind::Partition {
                between: [
                    FaultSide::Instance { app: 0, index: 2 },
                    FaultSide::Caller(0)
                ],
                for_ms: 1_000,
            }
        );
        // The comma form of a list, trimmed; z3 is only the caller's zone.
        let f =
            fault("[[fault]]\nkind = \"partition\"\nat-s = 10\nfor-s = 5\nbetween = \"svc, z3\"\n");
        assert_eq!(
            f.kind,
            FaultKind::Partition {
                between: [FaultSide::App(0), FaultSide::Zone("z3".into())],
                for_ms: 5_000,
            }
        );
    }

    #[test]
    fn a_pause_of_an_instance_a_caller_or_a_peer() {
        let f = fault("[[fault]]\nkind = \"pause\"\nat-s = 120\nfor-s = 10\ntarget = \"svc-1\"\n");
        assert_eq!(
            f,
            FaultConfig {
                at_ms: 120_000,
                kind: FaultKind::Pause {
                    target: FaultSide::Instance { app: 0, index: 1 },
                    for_ms: 10_000,
                },
            }
        );
        let f = fault("[[fault]]\nkind = \"pause\"\nat-s = 120\nfor-s = 10\ntarget = \"gw\"\n");
        assert_eq!(
            f.kind,
            FaultKind::Pause {
                target: FaultSide::Caller(0),
                for_ms: 10_000
            }
        );
        let f = fault("[[fault]]\nkind = \"pause\"\nat-s = 1\nfor-s = 2\ntarget = \"beta\"\n");
        assert_eq!(
            f.kind,
            FaultKind::Pause {
                target: FaultSide::Peer(1),
                for_ms: 2_000
            }
        );
    }

    #[test]
    fn a_server_restart_of_a_peer() {
        let f = fault(
            "[[fault]]\nkind = \"server-restart\"\nat-s = 200\ndown-s = 30\ntarget = \"beta\"\n",
        );
        assert_eq!(
            f,
            FaultConfig {
                at_ms: 200_000,
                kind: FaultKind::ServerRestart {
                    peer: 1,
                    down_ms: 30_000
                },
            }
        );
    }

    /// `[[fault]] kind = "<kind>"` at `at` s on `target` (a restart down 30 s, a pause 10 s).
    fn on(kind: &str, at: u64, target: &str) -> String {
        let length = match kind {
            "server-restart" => "down-s = 30\n",
            "pause" => "for-s = 10\n",
            _ => "",
        };
        format!("[[fault]]\nkind = \"{kind}\"\nat-s = {at}\n{length}target = \"{target}\"\n")
    }

    /// A crash is for good: a server-restart of the crashed peer would bring it back (its end
    /// starts a new server), so it is refused, naming the fault, the peer, the crash and what
    /// is allowed; so is one whose 30 s down spans the crash (50-80 s against 70 s). One that
    /// is over before the crash is a restart and then a crash.
    #[test]
    fn a_server_restart_of_a_crashed_peer_is_refused() {
        let e = error(&(on("crash", 100, "alpha") + &on("server-restart", 200, "alpha")));
        assert!(
            e.contains(
                "`fault[1].target`: peer `alpha` is down for good from 100 s (the crash of \
                 fault[0]): this server-restart at 200 s would start it again; allowed: a \
                 server-restart of `alpha` that is over before 100 s (at-s + down-s), or none"
            ),
            "{e}"
        );
        let e = error(&(on("server-restart", 50, "alpha") + &on("crash", 70, "alpha")));
        assert!(
            e.contains("`fault[0].target`: peer `alpha` is down for good from 70 s"),
            "{e}"
        );
        let s = ok(&(on("server-restart", 50, "alpha") + &on("crash", 81, "alpha")));
        assert_eq!(s.faults.len(), 2);
    }

    /// A zone outage crashes its zone's peers (here alpha, with `db` in z1): a server-restart
    /// of alpha after it is refused the same way, naming the outage.
    #[test]
    fn a_server_restart_of_a_peer_of_a_lost_zone_is_refused() {
        let zone = "[[app]]\nname = \"db\"\neureka.client.availability-zones.us-east-1 = \"z1\"\n\
                    [[shutdown]]\nzone = \"z1\"\nat-s = 100\nstrategy = \"kill-9\"\n";
        let e = error(&format!("{zone}{}", on("server-restart", 200, "alpha")));
        assert!(
            e.contains(
                "`fault[0].target`: peer `alpha` is down for good from 100 s (the zone outage of \
                 shutdown[0] (zone `z1`)): this server-restart at 200 s would start it again"
            ),
            "{e}"
        );
        // Beta is in z2: its restart stands. A crash of alpha before the outage is the zone
        // going down with a peer already gone.
        ok(&format!("{zone}{}", on("server-restart", 200, "beta")));
        ok(&format!("{zone}{}", on("crash", 50, "alpha")));
    }

    /// Two server-restarts of one peer that overlap (100-160 s and 120-150 s): the first one's
    /// end would start the peer during the second's down time. Refused; one after the first is
    /// over (161 s) stands.
    #[test]
    fn overlapping_server_restarts_of_a_peer_are_refused() {
        let e = error(
            &(on("server-restart", 100, "alpha").replace("down-s = 30", "down-s = 60")
                + &on("server-restart", 120, "alpha")),
        );
        assert!(
            e.contains(
                "`fault[1].target`: peer `alpha` is down from 100 to 160 s (the server-restart of \
                 fault[0]): this server-restart at 120 s begins while it is down; allowed: a \
                 server-restart of `alpha` that begins after 160 s"
            ),
            "{e}"
        );
        ok(
            &(on("server-restart", 100, "alpha").replace("down-s = 30", "down-s = 60")
                + &on("server-restart", 161, "alpha")),
        );
        ok(&(on("server-restart", 100, "alpha") + &on("server-restart", 120, "beta")));
    }

    /// A pause or a partition of a peer once it crashed, or a second crash, acts on a process
    /// that is gone: refused. A pause that begins before the crash and lasts past it stands.
    #[test]
    fn a_pause_a_partition_or_a_crash_of_a_crashed_peer_is_refused() {
        let e = error(&(on("crash", 100, "alpha") + &on("pause", 150, "alpha")));
        assert!(
            e.contains(
                "`fault[1].target`: peer `alpha` is down for good from 100 s (the crash of \
                 fault[0]): this pause at 150 s would pause a process that is gone; allowed: a \
                 pause that begins before 100 s"
            ),
            "{e}"
        );
        ok(&(on("crash", 100, "alpha") + &on("pause", 95, "alpha")));
        let e = error(&format!(
            "{}[[fault]]\nkind = \"partition\"\nat-s = 150\nfor-s = 10\nbetween = [\"gw\", \
             \"beta\"]\n",
            on("crash", 100, "beta")
        ));
        assert!(
            e.contains("`fault[1].between`: peer `beta` is down for good from 100 s"),
            "{e}"
        );
        assert!(
            e.contains("this partition at 150 s would cut off a process"),
            "{e}"
        );
        let e = error(&(on("crash", 100, "alpha") + &on("crash", 100, "alpha")));
        assert!(
            e.contains("`fault[1].target`: peer `alpha` is down for good from 100 s"),
            "{e}"
        );
        assert!(e.contains("allowed: one crash of `alpha`"), "{e}");
    }

    #[test]
    fn a_crash_of_a_peer() {
        let f = fault("[[fault]]\nkind = \"crash\"\nat-s = 450\ntarget = \"alpha\"\n");
        assert_eq!(
            f,
            FaultConfig {
                at_ms: 450_000,
                kind: FaultKind::Crash {
                    peer: 0,
                    vanishes: false
                },
            }
        );
    }

    #[test]
    fn without_peers_the_server_is_named_by_its_application_name() {
        let s = parse(
            &standalone(),
            "[[fault]]\nkind = \"crash\"\nat-s = 450\ntarget = \"eureka-server\"\n\
             [[fault]]\nkind = \"partition\"\nat-s = 10\nfor-s = 5\n\
             between = [\"eureka-server\", \"gw\"]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.servers()[0].name, "eureka-server");
        assert_eq!(
            s.faults,
            [
                FaultConfig {
                    at_ms: 450_000,
                    kind: FaultKind::Crash {
                        peer: 0,
                        vanishes: false
                    },
                },
                FaultConfig {
                    at_ms: 10_000,
                    kind: FaultKind::Partition {
                        between: [FaultSide::Peer(0), FaultSide::Caller(0)],
                        for_ms: 5_000,
                    },
                },
            ]
        );
        let e = parse(
            &standalone(),
            "[[fault]]\nkind = \"crash\"\nat-s = 450\ntarget = \"eureka-srever\"\n",
        )
        .unwrap_err();
        assert!(e.contains("s.toml") && e.contains("fault[0].target"), "{e}");
        assert!(
            e.contains("did you mean `eureka-server`?") && e.contains("there is no [[peer]]"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_side_names_the_closest_and_the_kinds_of_names() {
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 300\nfor-s = 60\n\
             between = [\"alpha\", \"betta\"]\n",
        );
        assert!(e.contains("`fault[0].between`"), "{e}");
        assert!(e.contains("`betta` is not a [[peer]]"), "{e}");
        assert!(e.contains("did you mean `beta`?"), "{e}");
        assert!(
            e.contains("a [[peer]] name (alpha, beta)")
                && e.contains("an instance id (svc-0 .. svc-2)")
                && e.contains("a [[caller]] name (gw)")
                && e.contains("an [[app]] name (svc)")
                && e.contains("a zone (z1, z2, defaultZone, z3)"),
            "{e}"
        );
    }

    #[test]
    fn a_zone_nobody_is_in_is_an_error() {
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 300\nfor-s = 60\nbetween = [\"alpha\", \"z4\"]\n",
        );
        assert!(e.contains("`fault[0].between`: `z4` is not"), "{e}");
        assert!(e.contains("did you mean `z"), "{e}");
    }

    #[test]
    fn targets_must_be_what_the_kind_acts_on() {
        let e = error("[[fault]]\nkind = \"crash\"\nat-s = 450\ntarget = \"svc-0\"\n");
        assert!(
            e.contains("`fault[0].target`: `svc-0` is an instance"),
            "{e}"
        );
        assert!(e.contains("allowed: a [[peer]] name (alpha, beta)"), "{e}");
        let e = error("[[fault]]\nkind = \"crash\"\nat-s = 450\ntarget = \"alpa\"\n");
        assert!(
            e.contains("`alpa` is not a [[peer]]; did you mean `alpha`?"),
            "{e}"
        );
        let e =
            error("[[fault]]\nkind = \"server-restart\"\nat-s = 4\ndown-s = 1\ntarget = \"gw\"\n");
        assert!(
            e.contains("`gw` is a [[caller]], not a Eureka server"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"pause\"\nat-s = 4\nfor-s = 1\ntarget = \"svc\"\n");
        assert!(
            e.contains("`fault[0].target`: `svc` is an [[app]]") && e.contains("`svc-0`"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"pause\"\nat-s = 4\nfor-s = 1\ntarget = \"z1\"\n");
        assert!(e.contains("`z1` is a zone"), "{e}");
        let e = error("[[fault]]\nkind = \"pause\"\nat-s = 4\nfor-s = 1\ntarget = \"svc-9\"\n");
        assert!(e.contains("did you mean `svc-"), "{e}");
        assert!(
            e.contains(
                "a [[peer]] name (alpha, beta), an instance id (svc-0 .. svc-2) or a \
                        [[caller]] name (gw)"
            ),
            "{e}"
        );
    }

    #[test]
    fn keys_of_another_kind_are_errors() {
        let e = error(
            "[[fault]]\nkind = \"pause\"\nat-s = 4\nfor-s = 1\ntarget = \"gw\"\n\
             between = [\"alpha\", \"beta\"]\n",
        );
        assert!(
            e.contains("`fault[0].between`: between is not a key of a pause fault"),
            "{e}"
        );
        assert!(
            e.contains("with kind = \"pause\": at-s, target, for-s"),
            "{e}"
        );
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\ndown-s = 1\n\
             between = [\"alpha\", \"beta\"]\n",
        );
        assert!(
            e.contains("`fault[0].down-s`: down-s is not a key of a partition"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"crash\"\nat-s = 4\nfor-s = 1\ntarget = \"alpha\"\n");
        assert!(
            e.contains("`fault[0].for-s`: for-s is not a key of a crash"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\ntarget = \"alpha\"\n");
        assert!(
            e.contains("`fault[0].target`: target is not a key of a partition"),
            "{e}"
        );
    }

    #[test]
    fn each_kind_needs_its_keys() {
        let e = error("[[fault]]\nat-s = 4\ntarget = \"alpha\"\n");
        assert!(e.contains("`fault[0].kind` is required"), "{e}");
        assert!(e.contains("partition, pause, server-restart, crash"), "{e}");
        let e = error("[[fault]]\nkind = \"crash\"\ntarget = \"alpha\"\n");
        assert!(e.contains("`fault[0].at-s` is required"), "{e}");
        let e = error("[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\n");
        assert!(
            e.contains("`fault[0].between`: a partition fault needs between"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"partition\"\nat-s = 4\nbetween = \"alpha,beta\"\n");
        assert!(
            e.contains("`fault[0].for-s`: a partition fault needs for-s"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"pause\"\nat-s = 4\nfor-s = 1\n");
        assert!(
            e.contains("`fault[0].target`: a pause fault needs target"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"server-restart\"\nat-s = 4\ntarget = \"alpha\"\n");
        assert!(
            e.contains("`fault[0].down-s`: a server-restart fault needs down-s"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"crash\"\nat-s = 4\n");
        assert!(
            e.contains("`fault[0].target`: a crash fault needs target"),
            "{e}"
        );
    }

    #[test]
    fn values_out_of_range_are_errors() {
        let e = error("[[fault]]\nkind = \"partitoin\"\nat-s = 4\n");
        assert!(
            e.contains("fault[0].kind") && e.contains("unknown value `partitoin`"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"pause\"\nat-s = 4\nfor-s = 0\ntarget = \"gw\"\n");
        assert!(
            e.contains("fault[0].for-s") && e.contains("at least 1"),
            "{e}"
        );
        let e = error(
            "[[fault]]\nkind = \"server-restart\"\nat-s = 4\ndown-s = 0\ntarget = \"alpha\"\n",
        );
        assert!(
            e.contains("fault[0].down-s") && e.contains("at least 1"),
            "{e}"
        );
        let e = error("[[fault]]\nkind = \"crash\"\nat-s = 600\ntarget = \"alpha\"\n");
        assert!(
            e.contains(
                "`fault[0].at-s`: at-s 600 is not before the end of the trial \
                        (simulation.duration-s = 600); allowed: 0..600"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_partition_has_two_distinct_disjoint_sides() {
        let e =
            error("[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\nbetween = [\"alpha\"]\n");
        assert!(
            e.contains("`fault[0].between`: a partition has two sides, between names 1"),
            "{e}"
        );
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\n\
             between = [\"alpha\", \"beta\", \"gw\"]\n",
        );
        assert!(e.contains("between names 3"), "{e}");
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\nbetween = [\"gw\", \"gw\"]\n",
        );
        assert!(e.contains("`fault[0].between`: both sides are `gw`"), "{e}");
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\nbetween = [\"svc\", \"svc-1\"]\n",
        );
        assert!(e.contains("`svc-1` is part of `svc`"), "{e}");
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\nbetween = [\"beta\", \"z2\"]\n",
        );
        assert!(e.contains("`beta` is part of `z2`"), "{e}");
        let e = error(
            "[[fault]]\nkind = \"partition\"\nat-s = 4\nfor-s = 1\n\
             between = [\"defaultZone\", \"svc-0\"]\n",
        );
        assert!(e.contains("`svc-0` is part of `defaultZone`"), "{e}");
    }

    #[test]
    fn a_fault_still_on_at_the_end_is_a_warning() {
        let s = ok(
            "[[fault]]\nkind = \"pause\"\nat-s = 590\nfor-s = 20\ntarget = \"svc-0\"\n\
                    [[fault]]\nkind = \"partition\"\nat-s = 500\nfor-s = 100\n\
                    between = [\"alpha\", \"beta\"]\n\
                    [[fault]]\nkind = \"server-restart\"\nat-s = 599\ndown-s = 2\n\
                    target = \"beta\"\n",
        );
        let warned: Vec<&String> = s
            .warnings
            .iter()
            .filter(|w| w.contains("after the end of the trial"))
            .collect();
        assert_eq!(warned.len(), 2, "{:?}", s.warnings);
        assert!(
            warned[0].contains("the pause ends at 610 s") && warned[0].contains("still paused"),
            "{warned:?}"
        );
        assert!(
            warned[1].contains("the server-restart ends at 601 s")
                && warned[1].contains("still down"),
            "{warned:?}"
        );
    }

    #[test]
    fn faults_can_be_set_from_the_command_line() {
        let base = base();
        let text = format!("{base}[[fault]]\nkind = \"crash\"\nat-s = 450\ntarget = \"alpha\"\n");
        let s = parse_str(&text, "s.toml", "s", &["fault[0].target=beta".to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.faults[0].kind,
            FaultKind::Crash {
                peer: 1,
                vanishes: false
            }
        );
    }
}
