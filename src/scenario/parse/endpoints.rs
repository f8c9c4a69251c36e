//! Which Eureka servers each process talks to: `eureka.client.service-url.<zone>` and
//! `eureka.client.availability-zones.<region>` resolved at parse time into
//! [`ResolvedEndpoints`] (docs/design/peers.md §1.5, §2.7; FACTS.md §5.7), with the checks and
//! warnings those keys need.

use std::collections::{HashMap, HashSet};

use super::super::error::{Place, ScenarioError};
use super::super::keys::{AVAILABILITY_ZONES, SERVICE_URL, Section, canonical_segment, closest};
use super::super::model::{
    AppConfig, CallerConfig, ClientConfig, DEFAULT_ZONE, PeerConfig, ResolvedEndpoints,
    ServerConfig,
};
use super::resolve::{Resolved, Setting};
use super::{Builder, MAX_ENDPOINTS};

/// Hosts that mean the one server when there is no `[[peer]]`: Spring's default service URL is
/// `http://localhost:8761/eureka/` (`EurekaClientConfigBean.DEFAULT_URL`).
const LOCAL_HOSTS: [&str; 2] = ["localhost", "127.0.0.1"];

/// The host of a service-url entry: a URL's (`http://user:pw@a:8761/eureka/` is `a`), or the
/// entry itself when it is a bare name (`a`). Surrounding spaces are ignored, as
/// `EurekaClientConfigBean#getEurekaServerServiceUrls` trims each URL.
pub(super) fn host_of(entry: &str) -> Result<&str, String> {
    let entry = entry.trim();
    let Some((scheme, rest)) = entry.split_once("://") else {
        let bare = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        return if entry.chars().all(bare) {
            Ok(entry)
        } else {
            Err(format!(
                "`{entry}` is neither a URL (http://<peer>:8761/eureka/) nor a peer name"
            ))
        };
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!(
            "`{entry}`: the scheme is `{scheme}`, not http or https"
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host_port.split(':').next().unwrap_or_default();
    if host.is_empty() {
        Err(format!("`{entry}` has no host"))
    } else {
        Ok(host)
    }
}

/// The servers of `zone` for `client` (indices into `servers`, by name and zone), before
/// de-duplication: `service-url.<zone>`, else `service-url.defaultZone`
/// (`EurekaClientConfigBean#getEurekaServerServiceUrls`). The model's defaults: a process that
/// sets no service-url has `defaultZone` = every server and `<zone>` = the servers in `<zone>`
/// (every server if none is); one that sets some but not `defaultZone` has `defaultZone` = every
/// server (Spring's `http://localhost:8761/eureka/`).
fn zone_servers(client: &ClientConfig, zone: &str, servers: &Servers<'_>) -> Vec<usize> {
    let every = || (0..servers.list.len()).collect::<Vec<_>>();
    if client.service_url.is_empty() {
        let here: Vec<usize> = (0..servers.list.len())
            .filter(|&k| zone != DEFAULT_ZONE && servers.list[k].1 == zone)
            .collect();
        return if here.is_empty() { every() } else { here };
    }
    let named = |zone: &str| {
        client
            .service_url
            .iter()
            .find(|(z, _)| z == zone)
            .map(|(_, names)| {
                names
                    .iter()
                    .filter_map(|n| servers.index.get(n.as_str()).copied())
                    .collect::<Vec<_>>()
            })
    };
    named(zone)
        .filter(|list| !list.is_empty())
        .or_else(|| named(DEFAULT_ZONE))
        .unwrap_or_else(every)
}

/// The (name, zone) of `Scenario::servers()`, and each server's index by its name (the first
/// so named), so that a service URL's host is found in constant time: a search per host made a
/// file of n peers whose processes each list every peer cost n³.
pub(super) struct Servers<'a> {
    list: Vec<(&'a str, &'a str)>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Servers<'a> {
    fn new(list: Vec<(&'a str, &'a str)>) -> Servers<'a> {
        let mut index = HashMap::new();
        for (k, &(name, _)) in list.iter().enumerate() {
            index.entry(name).or_insert(k);
        }
        Servers { list, index }
    }
}

/// `client`'s servers: its own zone's, then each other zone's, each in the order written
/// (`EndpointUtils#getServiceUrlsMapFromConfig`: a map from zone to its URLs, own zone first;
/// `ConfigClusterResolver#getClusterEndpoints`: an `AwsEndpoint` per zone and URL;
/// `ZoneAffinityClusterResolver#getClusterEndpoints` before the shuffle: the own zone's, then
/// the rest). A server that two zones list is listed under each: `AwsEndpoint#equals`
/// compares the zone, so they are two endpoints, and nothing de-duplicates the list. Within one
/// zone a server is listed once (the two `AwsEndpoint`s of one zone and URL are equal, so they
/// are quarantined together), and a zone named twice in `availability-zones` once (a map key).
pub(super) fn resolve(client: &ClientConfig, servers: &Servers<'_>) -> ResolvedEndpoints {
    let zones = client.zones();
    let mut own: Vec<usize> = Vec::new();
    let mut others: Vec<usize> = Vec::new();
    // Which servers the zone at hand lists already: searching its list made each process cost
    // the square of the peers (3 000 peers and 3 000 apps: more than a minute in the fuzz
    // build). The zone's servers are unmarked after it.
    let mut listed = vec![false; servers.list.len()];
    let mut resolved: HashSet<&str> = HashSet::new();
    for (i, zone) in zones.iter().enumerate() {
        if !resolved.insert(zone) {
            continue;
        }
        let list = if i == 0 { &mut own } else { &mut others };
        let start = list.len();
        for k in zone_servers(client, zone, servers) {
            if !std::mem::replace(&mut listed[k], true) {
                list.push(k);
            }
        }
        for &k in &list[start..] {
            listed[k] = false;
        }
    }
    ResolvedEndpoints { own, others }
}

/// "app `a`, app `b`, app `c` and 4 more".
fn labels(labels: &[String]) -> String {
    match labels.len() {
        n if n <= 3 => labels.join(", "),
        n => format!("{} and {} more", labels[..3].join(", "), n - 3),
    }
}

/// One process with a Eureka client, for the warnings: its label, its client, the table that
/// describes it and the table it inherits from.
struct Process<'a> {
    label: String,
    client: &'a ClientConfig,
    table: Option<&'a Resolved>,
    base: Option<&'a Resolved>,
}

impl<'a> Process<'a> {
    /// The setting the process took map key `name` of `key` from.
    fn origin(&self, key: &str, name: &str) -> Option<&'a Setting> {
        let get = |t: Option<&'a Resolved>| t.and_then(|t| t.get_map(key, name));
        get(self.table).or_else(|| get(self.base))
    }
}

/// Map-key settings some processes ignore, with the processes and why.
#[derive(Default)]
struct Ignored<'a> {
    found: Vec<(&'a Setting, Vec<String>, String)>,
}

impl<'a> Ignored<'a> {
    fn add(&mut self, setting: &'a Setting, label: &str, why: String) {
        match self
            .found
            .iter_mut()
            .find(|(s, _, _)| std::ptr::eq(*s, setting))
        {
            Some((_, labels, _)) => labels.push(label.to_string()),
            None => self.found.push((setting, vec![label.to_string()], why)),
        }
    }
}

impl Builder<'_> {
    /// Every service-url entry is a URL or a name whose host is a `[[peer]]` (an error naming
    /// the closest otherwise). Without `[[peer]]` any host means the one server; one that is
    /// neither its name nor localhost gets a warning.
    pub(super) fn check_service_urls(
        &mut self,
        tables: &[Resolved],
        server: &ServerConfig,
        peers: &[PeerConfig],
    ) -> Result<(), ScenarioError> {
        let names: Vec<&str> = peers.iter().map(|p| p.name.as_str()).collect();
        // Every host is looked up among the peers: in constant time, as a file can list many
        // peers in many tables.
        let known: HashSet<&str> = names.iter().copied().collect();
        let allowed = if names.is_empty() {
            format!(
                "URLs such as http://{}:8761/eureka/ or bare names, comma-separated or an array",
                server.application_name
            )
        } else {
            format!(
                "Spring URLs http://<peer>:<port>/eureka/ or bare peer names ({}), \
                 comma-separated or an array",
                names.join(", ")
            )
        };
        let settings = tables
            .iter()
            .filter(|t| t.section.accepts(Section::Clients))
            .flat_map(|t| &t.settings)
            .filter(|s| s.def.key == SERVICE_URL);
        for s in settings {
            let invalid = |problem: String| ScenarioError::InvalidValue {
                at: self.at(&s.value_at),
                key: s.display.clone(),
                problem,
                allowed: allowed.clone(),
            };
            let mut strangers: Vec<String> = Vec::new();
            for entry in s.val.list() {
                let host = host_of(&entry).map_err(invalid)?;
                if names.is_empty() {
                    if host != server.application_name && !LOCAL_HOSTS.contains(&host) {
                        strangers.push(format!("`{host}`"));
                    }
                } else if !known.contains(host) {
                    let hint = closest(host, names.iter().copied())
                        .map(|n| format!("; did you mean `{n}`?"))
                        .unwrap_or_default();
                    return Err(invalid(format!("host `{host}` is not a [[peer]]{hint}")));
                }
            }
            if !strangers.is_empty() {
                let text = format!(
                    "`{}`: there is no [[peer]], so {} means the one server `{}`; declare \
                     [[peer]] tables to model a cluster",
                    s.display,
                    strangers.join(", "),
                    server.application_name
                );
                self.warn(&s.value_at, text);
            }
        }
        Ok(())
    }

    /// Reduces every process's service-url entries to server names and resolves its
    /// [`ResolvedEndpoints`]; then warns about zone and region keys a process ignores, zones
    /// written with spaces, and peers that replicate to nobody.
    pub(super) fn resolve_endpoints(
        &mut self,
        tables: &[Resolved],
        server: &mut ServerConfig,
        peers: &mut [PeerConfig],
        apps: &mut [AppConfig],
        callers: &mut [CallerConfig],
    ) -> Result<(), ScenarioError> {
        let standalone = peers.is_empty();
        let implicit = server.application_name.clone();
        let servers: Vec<(String, String)> = if standalone {
            vec![(implicit.clone(), DEFAULT_ZONE.to_string())]
        } else {
            peers
                .iter()
                .map(|p| (p.name.clone(), p.zone.clone()))
                .collect()
        };
        let servers = Servers::new(
            servers
                .iter()
                .map(|(n, z)| (n.as_str(), z.as_str()))
                .collect(),
        );
        // A server is an endpoint per zone that lists it: up to every server per zone of each
        // client, where `check_endpoint_count` counted every server once per client.
        let bound = std::iter::once(&server.client)
            .chain(peers.iter().map(|p| &p.server.client))
            .chain(
                apps.iter()
                    .flat_map(|a| std::iter::once(&a.client).chain(&a.zone_clients)),
            )
            .chain(callers.iter().map(|c| &c.client))
            .map(|c| c.zones().len().max(1).saturating_mul(servers.list.len()))
            .fold(0usize, usize::saturating_add);
        if bound > MAX_ENDPOINTS {
            return Err(ScenarioError::Invalid {
                at: self.at(&Place::File),
                problem: format!(
                    "the client configurations' availability zones make up to {bound} \
                     service-url endpoints to resolve (each zone lists up to every Eureka \
                     server, and a server listed under two zones is two endpoints); at most \
                     {MAX_ENDPOINTS} are allowed"
                ),
            });
        }
        let settle = |client: &mut ClientConfig| {
            for (_, entries) in &mut client.service_url {
                for entry in entries.iter_mut() {
                    *entry = if standalone {
                        implicit.clone()
                    } else {
                        host_of(entry).map_or_else(|_| entry.clone(), str::to_string)
                    };
                }
            }
            client.endpoints = resolve(client, &servers);
        };
        settle(&mut server.client);
        peers.iter_mut().for_each(|p| settle(&mut p.server.client));
        for a in apps.iter_mut() {
            settle(&mut a.client);
            a.zone_clients.iter_mut().for_each(settle);
        }
        callers.iter_mut().for_each(|c| settle(&mut c.client));

        let of = |section: Section| tables.iter().filter(move |t| t.section == section);
        let single = |section: Section| of(section).next();
        let mut processes: Vec<Process> = Vec::new();
        if standalone {
            processes.push(Process {
                label: "the server".to_string(),
                client: &server.client,
                table: single(Section::Server),
                base: None,
            });
        }
        for (p, table) in peers.iter().zip(of(Section::Peer)) {
            processes.push(Process {
                label: format!("peer `{}`", p.name),
                client: &p.server.client,
                table: Some(table),
                base: single(Section::Server),
            });
        }
        for (a, table) in apps.iter().zip(of(Section::App)) {
            processes.push(Process {
                label: format!("app `{}`", a.name),
                client: &a.client,
                table: Some(table),
                base: single(Section::Clients),
            });
        }
        for (c, table) in callers.iter().zip(of(Section::Caller)) {
            processes.push(Process {
                label: format!("caller `{}`", c.name),
                client: &c.client,
                table: Some(table),
                base: single(Section::Clients),
            });
        }
        self.warn_ignored_map_keys(&processes);
        self.warn_spaced_zones(tables);
        if peers.len() > 1 {
            for ((k, p), table) in peers.iter().enumerate().zip(of(Section::Peer)) {
                if p.replicates_to(k).is_empty() {
                    let text = format!(
                        "peer `{}` replicates to no other peer: its embedded client's \
                         eureka.client.service-url lists only itself, which \
                         PeerEurekaNodes#resolvePeerUrls leaves out, so what its clients send \
                         it reaches no other peer",
                        p.name
                    );
                    self.warn(&table.at, text);
                }
            }
        }
        Ok(())
    }

    /// `service-url.<zone>` for a zone not among a process's availability zones, and
    /// `availability-zones.<region>` for another region than the process's: no effect there.
    fn warn_ignored_map_keys(&mut self, processes: &[Process]) {
        let mut ignored = Ignored::default();
        for p in processes {
            let client = p.client;
            let zones = client.zones();
            let region = &client.region;
            for (zone, _) in &client.service_url {
                if zone == DEFAULT_ZONE || zones.contains(&zone.as_str()) {
                    continue;
                }
                let Some(s) = p.origin(SERVICE_URL, zone) else {
                    continue;
                };
                let hint = if canonical_segment(zone) == canonical_segment(DEFAULT_ZONE) {
                    format!("; Spring keeps a map key as written, so `{zone}` is not defaultZone")
                } else {
                    String::new()
                };
                let why = format!(
                    "zone `{zone}` is not one of the zones of region {region} ({}), the only \
                     ones whose service-url a client reads \
                     (eureka.client.availability-zones.{region}; \
                     EndpointUtils#getServiceUrlsMapFromConfig){hint}",
                    zones.join(", ")
                );
                ignored.add(s, &p.label, why);
            }
            for (other, _) in &client.availability_zones {
                if other == region {
                    continue;
                }
                let Some(s) = p.origin(AVAILABILITY_ZONES, other) else {
                    continue;
                };
                let why = format!("the region is {region} (eureka.client.region)");
                ignored.add(s, &p.label, why);
            }
        }
        for (s, who, why) in ignored.found {
            let text = format!("`{}` has no effect for {}: {why}", s.display, labels(&who));
            self.warn(&s.key_at, text);
        }
    }

    /// `availability-zones` items with surrounding spaces, which Spring keeps.
    fn warn_spaced_zones(&mut self, tables: &[Resolved]) {
        let settings = tables
            .iter()
            .filter(|t| t.section.accepts(Section::Clients))
            .flat_map(|t| &t.settings)
            .filter(|s| s.def.key == AVAILABILITY_ZONES);
        let mut texts = Vec::new();
        for s in settings {
            for zone in s.val.list() {
                if zone.trim() != zone {
                    let text = format!(
                        "`{}`: zone `{zone}` keeps its spaces \
                         (EurekaClientConfigBean#getAvailabilityZones splits on commas without \
                         trimming), so it is not `{}`",
                        s.display,
                        zone.trim()
                    );
                    texts.push((s.value_at.clone(), text));
                }
            }
        }
        for (at, text) in texts {
            self.warn(&at, text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_urls_or_bare_names() {
        assert_eq!(host_of("http://a:8761/eureka/"), Ok("a"));
        assert_eq!(
            host_of(" https://user:secret@peer-2.x:443/eureka "),
            Ok("peer-2.x")
        );
        assert_eq!(host_of("HTTP://b"), Ok("b"));
        assert_eq!(host_of(" c "), Ok("c"));
        assert!(host_of("ftp://a/").is_err());
        assert!(host_of("http:///eureka/").is_err());
        assert!(host_of("a:8761").is_err());
    }
}
