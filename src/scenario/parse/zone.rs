//! `[[shutdown]] zone`: a zone outage. Every process of the zone stops at
//! `at-s`: the zone's app instances (one [`ShutdownConfig`] each, so each is measured as if
//! named by `instance`), its callers ([`CallerStop`]) and its peers (a `[[fault]]` crash each).
//! Who is in a zone is what a `[[fault]]` zone side takes ([`FaultNames::zone_members`]): a
//! process's first availability zone (`InstanceInfo#getZone`), a peer's `[[peer]] zone`.

use super::super::error::ScenarioError;
use super::super::keys::{ShutdownDraft, closest};
use super::super::model::{AppConfig, CallerStop, FaultConfig, FaultKind, ShutdownConfig};
use super::Builder;
use super::faults::{FaultNames, ZoneMembers};
use super::resolve::Resolved;

/// What one `[[shutdown]]` stops: one instance, or a zone's instances, callers and peers.
#[derive(Debug, Default)]
pub(super) struct Stops {
    pub shutdowns: Vec<ShutdownConfig>,
    /// A crash per peer of the zone, at `at-s`.
    pub crashes: Vec<FaultConfig>,
    pub callers: Vec<CallerStop>,
}

impl Builder<'_> {
    /// The members of `[[shutdown]] zone`: a zone somebody is in, with at least one app
    /// instance (a `[[shutdown]]` is there to measure departing instances), and `kill-9`.
    ///
    /// Only kill-9: an outage (power, network, a whole zone's hosts gone) gives no process the
    /// time to run its shutdown hooks, so nothing deregisters, which is what self-preservation
    /// and the 15 % eviction cap are about. A graceful stop of every process of a zone would
    /// also stop its peers gracefully, and whether their last replication batches (the
    /// instances' cancels, 500 ms behind) leave before they stop is a race the model does not
    /// have (`docs/design/peers.md` §1.1); the waiting strategies act through one process's
    /// actuator, which a zone does not have.
    pub(super) fn zone_outage(
        &mut self,
        table: &Resolved,
        draft: &ShutdownDraft,
        zone: &str,
        names: &FaultNames,
        apps: &[AppConfig],
    ) -> Result<ZoneMembers, ScenarioError> {
        let Some(members) = names.zone_members(zone) else {
            let hint = closest(zone, names.zones().iter().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(self.invalid(
                table,
                "zone",
                format!("nobody is in zone `{zone}`{hint}"),
                format!(
                    "a zone of a [[peer]], an [[app]] or a [[caller]] ({})",
                    names.zones().join(", ")
                ),
            ));
        };
        if members.instances.is_empty() {
            let with_instances: Vec<String> = names
                .zones()
                .iter()
                .filter_map(|z| {
                    let m = names.zone_members(z)?;
                    let mut apps_of: Vec<&str> = Vec::new();
                    for (a, _) in m.instances {
                        if !apps_of.contains(&apps[a].name.as_str()) {
                            apps_of.push(&apps[a].name);
                        }
                    }
                    (!apps_of.is_empty()).then(|| format!("{z} ({})", apps_of.join(", ")))
                })
                .collect();
            return Err(self.invalid(
                table,
                "zone",
                format!(
                    "no [[app]] instance is in zone `{zone}`, so nothing departs to measure (a \
                     peer alone goes down with [[fault]] kind = \"crash\")"
                ),
                format!("a zone with app instances: {}", with_instances.join(", ")),
            ));
        }
        if !draft.strategy.stops_a_zone() {
            return Err(self.invalid(
                table,
                "strategy",
                format!(
                    "a zone outage stops every process of zone `{zone}` at once, with no time \
                     for a graceful stop; strategy {} is not one",
                    draft.strategy.name()
                ),
                "kill-9 with zone (instance for the other strategies)".to_string(),
            ));
        }
        let servers: Vec<&str> = names.server_names().collect();
        if members.peers.len() == servers.len() {
            let text = format!(
                "zone `{zone}` holds every Eureka server ({}): after the outage nobody evicts \
                 or answers, and the surviving callers keep their last registry",
                servers.join(", ")
            );
            self.warn(&table.place_of("zone"), text);
        }
        Ok(members)
    }
}

/// The crash of each peer of a zone outage, as a `[[fault]] kind = "crash"` at `at_ms`, its
/// host gone with it (`vanishes`, the default) or still refusing (`host = "stays"`).
pub(super) fn crashes(members: &ZoneMembers, at_ms: u64, vanishes: bool) -> Vec<FaultConfig> {
    members
        .peers
        .iter()
        .map(|&peer| FaultConfig {
            at_ms,
            kind: FaultKind::Crash { peer, vanishes },
        })
        .collect()
}

/// The stop of each caller of a zone outage at `at_ms`.
pub(super) fn caller_stops(members: &ZoneMembers, at_ms: u64) -> Vec<CallerStop> {
    members
        .callers
        .iter()
        .map(|&caller| CallerStop { caller, at_ms })
        .collect()
}
