//! `eureka.client.service-url.<zone>`, `eureka.client.availability-zones.<region>` and the
//! transport keys: each process's Eureka servers resolved by hand from the rules of
//! `ResolvedEndpoints` (FACTS.md §5.7, docs/design/peers.md §1.5).

use super::tests::{err, ok, parse};
use super::*;
use crate::scenario::model::{CallTimeouts, ResolvedEndpoints};

fn endpoints(own: &[usize], others: &[usize]) -> ResolvedEndpoints {
    ResolvedEndpoints {
        own: own.to_vec(),
        others: others.to_vec(),
    }
}

/// The warnings about these keys (not the ever-present ones about peers, callers, shutdowns).
fn key_warnings(s: &Scenario) -> Vec<&str> {
    s.warnings
        .iter()
        .map(String::as_str)
        .filter(|w| {
            ![": no [[caller]]", ": no [[shutdown]]"]
                .iter()
                .any(|common| w.contains(common))
        })
        .collect()
}

const PEERS: &str = r#"
[[peer]]
name = "a"
zone = "z1"
[[peer]]
name = "b"
zone = "z1"
[[peer]]
name = "c"
zone = "z2"
"#;

/// Three peers in two zones: a and b in z1, c in z2.
#[test]
fn three_peers_in_two_zones_resolve_per_process() {
    let s = ok(&format!(
        r#"
[clients]
eureka.client.availability-zones.us-east-1 = "z1,z2"
{PEERS}
[[app]]
name = "svc"
[[app]]
name = "db"
eureka.client.service-url.defaultZone = "http://c:8761/eureka/,http://a:8761/eureka/"
[[caller]]
name = "gw"
calls = "svc"
eureka.client.availability-zones.us-east-1 = ["z2", "z1"]
"#
    ));
    let (svc, db, gw) = (&s.apps[0].client, &s.apps[1].client, &s.callers[0].client);
    // svc sets no service-url: z1 = the peers of z1 (a, b), z2 = those of z2 (c).
    assert_eq!(svc.zone(), "z1");
    assert_eq!(svc.endpoints, endpoints(&[0, 1], &[2]));
    // db: neither z1 nor z2 has a key, both fall back to defaultZone = c, a; so each zone
    // lists both, and they are four endpoints (an `AwsEndpoint` per zone and URL).
    assert_eq!(db.endpoints, endpoints(&[2, 0], &[2, 0]));
    assert_eq!(
        db.service_url,
        [(
            "defaultZone".to_string(),
            vec!["c".to_string(), "a".to_string()]
        )]
    );
    // gw lives in z2: c first, then a and b.
    assert_eq!(gw.zone(), "z2");
    assert_eq!(gw.endpoints, endpoints(&[2], &[0, 1]));
    // The peers' embedded clients take [server], which sets nothing: one zone, defaultZone =
    // every peer; each replicates to the two others.
    for p in &s.peers {
        assert_eq!(p.server.client.zone(), "defaultZone");
        assert_eq!(p.server.client.endpoints, endpoints(&[0, 1, 2], &[]));
    }
    let targets: Vec<Vec<usize>> = (0..3).map(|k| s.peers[k].replicates_to(k)).collect();
    assert_eq!(targets, [vec![1, 2], vec![0, 2], vec![0, 1]]);
    assert!(key_warnings(&s).is_empty(), "{:?}", s.warnings);
}

/// The same server under two zones is two endpoints (`ConfigClusterResolver
/// #getClusterEndpoints` makes an `AwsEndpoint` per zone and URL of
/// `EndpointUtils#getServiceUrlsMapFromConfig`'s map, and `AwsEndpoint#equals` compares the
/// zone; nothing de-duplicates the list): z1 = a, z2 = a, c and z3 = c give own [a] and others
/// [a, c, c], four listings in all; within one zone `a, a` is one. A zone named twice in
/// `availability-zones` is one map key. A peer listing another under two zones replicates to
/// it once (`PeerEurekaNodes#updatePeerEurekaNodes` keeps the URLs in sets).
#[test]
fn a_server_under_two_zones_is_two_endpoints() {
    let s = ok(&format!(
        r#"
[server]
eureka.client.availability-zones.us-east-1 = "z1,z2"
eureka.client.service-url.z1 = "b"
eureka.client.service-url.z2 = "b,c"
{PEERS}
[[app]]
name = "svc"
eureka.client.availability-zones.us-east-1 = "z1,z2,z3,z2"
eureka.client.service-url.z1 = "a,a"
eureka.client.service-url.z2 = "http://a:8761/eureka/,c"
eureka.client.service-url.z3 = "c"
"#
    ));
    assert_eq!(s.apps[0].client.endpoints, endpoints(&[0], &[0, 2, 2]));
    assert_eq!(s.apps[0].client.endpoints.len(), 4);
    assert_eq!(s.peers[0].replicates_to(0), [1, 2]);
    assert_eq!(s.peers[1].replicates_to(1), [2]);
}

#[test]
fn a_server_replicates_to_its_own_service_urls_but_itself() {
    let s = ok(r#"
[server]
eureka.client.service-url.defaultZone = "a,b,c"
[[peer]]
name = "a"
[[peer]]
name = "b"
eureka.client.service-url.defaultZone = ["a", "http://c:8761/eureka/", "b"]
[[peer]]
name = "c"
eureka.client.service-url.defaultZone = "c"
[[app]]
name = "svc"
"#);
    let targets: Vec<Vec<usize>> = (0..3).map(|k| s.peers[k].replicates_to(k)).collect();
    // a takes [server]'s a, b, c; b lists a, c and itself; c only itself.
    assert_eq!(targets, [vec![1, 2], vec![0, 2], vec![]]);
    assert_eq!(
        key_warnings(&s),
        [
            "s.toml:9:1: peer `c` replicates to no other peer: its embedded client's \
          eureka.client.service-url lists only itself, which PeerEurekaNodes#resolvePeerUrls \
          leaves out, so what its clients send it reaches no other peer"
        ]
    );
}

/// `prefer-same-zone-eureka = false` starts a server's peer list in the zone after its own
/// (`EndpointUtils#getZoneOffset`); a client's endpoints stay own zone first.
#[test]
fn prefer_same_zone_orders_a_servers_peers_only() {
    let text = |prefer: bool| {
        format!(
            r#"
[server]
eureka.client.availability-zones.us-east-1 = "z1,z2"
eureka.client.service-url.z1 = "a,b"
eureka.client.service-url.z2 = "c"
eureka.client.prefer-same-zone-eureka = {prefer}
{PEERS}
[[app]]
name = "svc"
eureka.client.prefer-same-zone-eureka = {prefer}
"#
        )
    };
    let same = ok(&text(true));
    let other = ok(&text(false));
    assert_eq!(same.peers[0].replicates_to(0), [1, 2]);
    assert_eq!(other.peers[0].replicates_to(0), [2, 1]);
    assert_eq!(other.peers[2].replicates_to(2), [0, 1]);
    assert_eq!(
        same.apps[0].client.endpoints,
        other.apps[0].client.endpoints
    );
}

#[test]
fn urls_and_bare_names_are_one_setting() {
    let with = |value: &str| {
        ok(&format!(
            "[clients]\neureka.client.service-url.defaultZone = {value}\n{PEERS}\
             [[app]]\nname = \"svc\"\n"
        ))
    };
    let urls = with("\"http://a:8761/eureka/,http://b:8761/eureka/\"");
    let names = with("\"a,b\"");
    let array = with("[\"a\", \" https://user:pw@b/eureka\"]");
    assert_eq!(urls.apps[0].client, names.apps[0].client);
    assert_eq!(array.apps[0].client, names.apps[0].client);
    assert_eq!(
        names.apps[0].client.service_url,
        [(
            "defaultZone".to_string(),
            vec!["a".to_string(), "b".to_string()]
        )]
    );
    assert_eq!(names.apps[0].client.endpoints, endpoints(&[0, 1], &[]));
}

#[test]
fn an_unknown_host_names_the_closest_peer() {
    let text = "[clients]\neureka.client.service-url.defaultZone = \
                \"http://eureka-a:8761/eureka/,http://eureka-bb:8761/eureka/\"\n\
                [[peer]]\nname = \"eureka-a\"\n[[peer]]\nname = \"eureka-b\"\n\
                [[app]]\nname = \"svc\"\n";
    assert_eq!(
        err(text),
        "s.toml:2:41: `clients.eureka.client.service-url.defaultZone`: host `eureka-bb` is not a \
         [[peer]]; did you mean `eureka-b`?; allowed: Spring URLs http://<peer>:<port>/eureka/ \
         or bare peer names (eureka-a, eureka-b), comma-separated or an array"
    );
    let e = err(&text.replace("http://eureka-bb:8761", "ftp://eureka-b"));
    assert!(
        e.contains("`ftp://eureka-b/eureka/`: the scheme is `ftp`, not http or https"),
        "{e}"
    );
    // In a peer's own table too.
    let e = err(&format!(
        "{PEERS}eureka.client.service-url.defaultZone = \"d\"\n[[app]]\nname = \"svc\"\n"
    ));
    assert!(
        e.contains("`peer[2].eureka.client.service-url.defaultZone`: host `d`"),
        "{e}"
    );
}

/// A zone without its own key falls back to defaultZone, and an unset defaultZone (Spring's
/// localhost URL) is every peer.
#[test]
fn a_zone_without_a_key_falls_back_to_default_zone_then_every_peer() {
    let s = ok(&format!(
        "{PEERS}[[app]]\nname = \"svc\"\neureka.client.availability-zones.us-east-1 = \"z1,z2\"\n\
         eureka.client.service-url.z1 = \"b\"\n"
    ));
    assert_eq!(s.apps[0].client.endpoints, endpoints(&[1], &[0, 1, 2]));
}

#[test]
fn zone_keys_outside_the_availability_zones_are_flagged() {
    let s = ok(&format!(
        "[clients]\neureka.client.service-url.z3 = \"a\"\n\
         eureka.client.service-url.default-zone = \"b\"\n{PEERS}\
         [[app]]\nname = \"svc\"\n[[app]]\nname = \"db\"\n"
    ));
    assert_eq!(
        key_warnings(&s),
        [
            "s.toml:2:1: `clients.eureka.client.service-url.z3` has no effect for app `svc`, app \
             `db`: zone `z3` is not one of the zones of region us-east-1 (defaultZone), the only \
             ones whose service-url a client reads (eureka.client.availability-zones.us-east-1; \
             EndpointUtils#getServiceUrlsMapFromConfig)",
            "s.toml:3:1: `clients.eureka.client.service-url.default-zone` has no effect for app \
             `svc`, app `db`: zone `default-zone` is not one of the zones of region us-east-1 \
             (defaultZone), the only ones whose service-url a client reads \
             (eureka.client.availability-zones.us-east-1; \
             EndpointUtils#getServiceUrlsMapFromConfig); Spring keeps a map key as written, so \
             `default-zone` is not defaultZone",
        ]
    );
    // Both zone keys are ignored and defaultZone is unset: every peer.
    assert_eq!(s.apps[0].client.endpoints, endpoints(&[0, 1, 2], &[]));
}

#[test]
fn availability_zones_count_for_the_clients_region_only() {
    let zones = "[clients]\neureka.client.availability-zones.eu-west-1 = \"z2,z1\"\n";
    let s = ok(&format!("{zones}{PEERS}[[app]]\nname = \"svc\"\n"));
    assert_eq!(s.apps[0].client.zone(), "defaultZone");
    assert_eq!(
        key_warnings(&s),
        [
            "s.toml:2:1: `clients.eureka.client.availability-zones.eu-west-1` has no effect for app \
          `svc`: the region is us-east-1 (eureka.client.region)"
        ]
    );
    let s = ok(&format!(
        "{zones}eureka.client.region = \"eu-west-1\"\n{PEERS}[[app]]\nname = \"svc\"\n"
    ));
    assert_eq!(s.apps[0].client.zones(), ["z2", "z1"]);
    assert_eq!(s.apps[0].client.endpoints, endpoints(&[2], &[0, 1]));
    assert!(key_warnings(&s).is_empty(), "{:?}", s.warnings);
}

/// `EurekaClientConfigBean#getAvailabilityZones` splits without trimming: ` z2` is a zone of its
/// own, with no peers and no key, so the model default lists every peer for it.
#[test]
fn zones_keep_their_spaces() {
    let s = ok(&format!(
        "[clients]\neureka.client.availability-zones.us-east-1 = \"z1, z2\"\n{PEERS}\
         [[app]]\nname = \"svc\"\n"
    ));
    assert_eq!(s.apps[0].client.zones(), ["z1", " z2"]);
    assert_eq!(s.apps[0].client.endpoints, endpoints(&[0, 1], &[0, 1, 2]));
    assert_eq!(
        key_warnings(&s),
        [
            "s.toml:2:46: `clients.eureka.client.availability-zones.us-east-1`: zone ` z2` keeps its \
          spaces (EurekaClientConfigBean#getAvailabilityZones splits on commas without \
          trimming), so it is not `z2`"
        ]
    );
}

/// Without [[peer]] every service URL means the one server: silently for its name and
/// localhost, with a warning for another host.
#[test]
fn without_peers_every_url_is_the_server() {
    let with = |url: &str| {
        ok(&format!(
            "[clients]\neureka.client.service-url.defaultZone = \"{url}\"\n[[app]]\nname = \"svc\"\n"
        ))
    };
    for url in [
        "http://localhost:8761/eureka/",
        "http://eureka-server:8761/eureka/",
        "eureka-server",
    ] {
        let s = with(url);
        assert!(key_warnings(&s).is_empty(), "{url}: {:?}", s.warnings);
        let client = &s.apps[0].client;
        assert_eq!(client.endpoints, ResolvedEndpoints::default());
        assert_eq!(
            client.service_url,
            [("defaultZone".to_string(), vec!["eureka-server".to_string()])]
        );
    }
    let s = with("http://eureka.internal:8761/eureka/");
    assert_eq!(s.apps[0].client.endpoints, ResolvedEndpoints::default());
    assert_eq!(
        key_warnings(&s),
        [
            "s.toml:2:41: `clients.eureka.client.service-url.defaultZone`: there is no [[peer]], so \
          `eureka.internal` means the one server `eureka-server`; declare [[peer]] tables to model \
          a cluster"
        ]
    );
    assert_eq!(ok("[[app]]\nname = \"svc\"\n").servers().len(), 1);
}

#[test]
fn set_reaches_map_keys() {
    let sets = [
        "app.svc.eureka.client.availability-zones.us-east-1=z2,z1".to_string(),
        "clients.eureka.client.service-url.z2=b".to_string(),
    ];
    let text = format!("{PEERS}[[app]]\nname = \"svc\"\n");
    let s = parse_str(&text, "s.toml", "s", &sets).unwrap();
    // z2 = b (the key), z1 = defaultZone, unset: every peer, b among them again.
    assert_eq!(s.apps[0].client.endpoints, endpoints(&[1], &[0, 1, 2]));
}

/// The Spring Cloud defaults: EurekaClientConfigBean, CloudEurekaTransportConfig and
/// EurekaServerConfigBean at SCN v2.2.10 and v4.1.0 (FACTS.md §2.5, §2.7, §5.2, §5.7, §10).
#[test]
fn new_keys_default_to_spring_clouds_values() {
    let s = ok("[[app]]\nname = \"svc\"\n");
    let c = &s.apps[0].client;
    assert_eq!(c.region, "us-east-1");
    assert!(c.prefer_same_zone_eureka);
    assert_eq!(c.service_url_poll_interval_s, 300);
    assert_eq!(c.sessioned_client_reconnect_interval_s, 20 * 60);
    assert_eq!(c.retryable_client_quarantine_refresh_percentage, 0.66);
    assert_eq!(c.heartbeat_executor_exponential_back_off_bound, 10);
    assert_eq!(c.cache_refresh_executor_exponential_back_off_bound, 10);
    assert_eq!(c.eureka_server_connect_timeout_s, 5);
    assert_eq!(c.eureka_server_read_timeout_s, 8);
    assert_eq!(c.zones(), ["defaultZone"]);
    assert!(c.service_url.is_empty() && c.availability_zones.is_empty());
    let v = &s.server;
    assert_eq!(v.registry_sync_retries, 0);
    assert_eq!(v.registry_sync_retry_wait_ms, 30 * 1000);
    assert_eq!(v.wait_time_in_ms_when_sync_empty, 5 * 60 * 1000);
    assert_eq!(v.peer_node_connect_timeout_ms, 200);
    assert_eq!(v.peer_node_read_timeout_ms, 200);
    assert_eq!(v.max_time_for_replication_ms, 30_000);
    assert_eq!(v.max_elements_in_peer_replication_pool, 10_000);
    assert_eq!(v.max_threads_for_peer_replication, 20);
    assert_eq!(s.server.client.endpoints, ResolvedEndpoints::default());
    assert_eq!(s.servers()[0].replicates_to(0), Vec::<usize>::new());
}

#[test]
fn new_keys_are_checked_against_their_ranges() {
    let with = |line: &str| err(&format!("[clients]\n{line}\n[[app]]\nname = \"svc\"\n"));
    let key = "eureka.client.transport.retryable-client-quarantine-refresh-percentage";
    assert_eq!(
        with(&format!("{key} = 0")),
        format!(
            "s.toml:2:{}: `clients.{key}`: must be greater than 0, got 0; allowed: a number \
             greater than 0 and at most 1",
            key.len() + 4
        )
    );
    assert!(with(&format!("{key} = 1.5")).contains("must be at most 1, got 1.5"));
    assert!(parse(&format!("[clients]\n{key} = 1\n[[app]]\nname = \"svc\"\n")).is_ok());
    for zero in [
        "eureka.client.heartbeat-executor-exponential-back-off-bound = 0",
        "eureka.client.transport.sessioned-client-reconnect-interval-seconds = 0",
        "eureka.client.eureka-service-url-poll-interval-seconds = 0",
    ] {
        assert!(with(zero).contains("must be at least 1, got 0"), "{zero}");
    }
    let e = with("eureka.client.service-url.defaultZone = \"a,,b\"");
    assert!(e.contains("item 2 is empty"), "{e}");
    let e = with("eureka.client.availability-zones.us-east-1 = 3");
    assert!(
        e.contains("expected a string or an array of strings, found an integer (3)"),
        "{e}"
    );
    let server = |line: &str| parse(&format!("[server]\n{line}\n[[app]]\nname = \"svc\"\n"));
    assert!(server("eureka.server.wait-time-in-ms-when-sync-empty = 0").is_ok());
    assert!(server("eureka.server.max-threads-for-peer-replication = 0").is_err());
    assert!(server("eureka.server.peer-node-read-timeout-ms = 0").is_err());
}

#[test]
fn jersey_timeouts_do_nothing_from_2020_0() {
    let text = |release: &str| {
        format!(
            "[simulation]\nrelease = \"{release}\"\n[clients]\n\
             eureka.client.eureka-server-read-timeout-seconds = 30\n[[app]]\nname = \"svc\"\n"
        )
    };
    assert!(key_warnings(&ok(&text("Hoxton"))).is_empty());
    assert_eq!(
        key_warnings(&ok(&text("2020.0.0"))),
        [
            "s.toml:4:1: `clients.eureka.client.eureka-server-read-timeout-seconds` has no effect on \
          2020.0.0: from 2020.0 the Eureka client calls the server through Spring Cloud's \
          RestTemplate or RestClient transport, which does not read it (the Jersey client it \
          configures left the starter)"
        ]
    );
}

/// The transport timeout keys bind under their Spring names and the relaxed ones, into the
/// family the release reads (`Release::eureka_client_timeout_properties`): 180 000 ms by
/// default from 2022.0, what the file says when set, 0 for none.
#[test]
fn transport_timeouts_bind_per_release_and_relaxed() {
    let text = |release: &str, keys: &str| {
        format!(
            "[simulation]\nrelease = \"{release}\"\n[clients]\n{keys}\n[[app]]\nname = \"svc\"\n"
        )
    };
    let timeouts = |release: &str, keys: &str| {
        let s = ok(&text(release, keys));
        let c = &s.apps[0].client;
        let warnings: Vec<String> = key_warnings(&s).into_iter().map(String::from).collect();
        (c.call_timeouts(s.simulation.release), warnings)
    };
    let none: Vec<String> = Vec::new();
    let t = |connect_ms, read_ms| CallTimeouts {
        connect_ms,
        read_ms,
    };
    assert_eq!(
        timeouts("Hoxton", ""),
        (t(Some(5_000), Some(8_000)), none.clone())
    );
    assert_eq!(timeouts("2020.0", ""), (t(None, None), none.clone()));
    assert_eq!(timeouts("2021.0", ""), (t(None, None), none.clone()));
    assert_eq!(
        timeouts(
            "2021.0",
            "eureka.client.rest-template-timeout.socket-timeout = 5000"
        ),
        (t(None, Some(5_000)), none.clone())
    );
    let three_minutes = t(Some(180_000), Some(180_000));
    for release in ["2022.0", "2023.0", "2024.0", "2025.0", "2025.1"] {
        assert_eq!(timeouts(release, "").0, three_minutes, "{release}");
    }
    for key in [
        "eureka.client.timeout.socket-timeout",
        "eureka.client.timeout.socketTimeout",
        "eureka.client.timeout.socket_timeout",
        "eureka.client.Timeout.SOCKET-TIMEOUT",
    ] {
        assert_eq!(
            timeouts("2025.1", &format!("{key} = 5000")),
            (t(Some(180_000), Some(5_000)), none.clone()),
            "{key}"
        );
    }
    assert_eq!(
        timeouts(
            "2025.0",
            "eureka.client.restTemplateTimeout.connectTimeout = 0"
        )
        .0,
        t(None, Some(180_000))
    );
    let rest_client = "eureka.client.restclient.enabled = true\n\
                       eureka.client.restclient.timeout.socket-timeout = 7000";
    assert_eq!(
        timeouts("2024.0", rest_client).0,
        t(Some(180_000), Some(7_000))
    );
    let (effect, warnings) = timeouts("2025.0", "eureka.client.timeout.socket-timeout = 5000");
    assert_eq!(effect, three_minutes);
    assert_eq!(
        warnings,
        [
            "s.toml:4:1: `clients.eureka.client.timeout.socket-timeout` has no effect on 2025.0: \
             its Eureka client reads `eureka.client.rest-template-timeout.*`"
        ]
    );
    let (_, warnings) = timeouts("2025.1", "eureka.client.restclient.enabled = true");
    assert_eq!(
        warnings,
        [
            "s.toml:4:1: `clients.eureka.client.restclient.enabled` has no effect on 2025.1: only \
             2024.0 and 2025.0 (spring-cloud-netflix 4.2-4.3) offer both transports"
        ]
    );
    let (_, warnings) = timeouts(
        "2020.0",
        "eureka.client.rest-template-timeout.socket-timeout = 1",
    );
    assert_eq!(
        warnings,
        [
            "s.toml:4:1: `clients.eureka.client.rest-template-timeout.socket-timeout` has no \
             effect on 2020.0: its Eureka client's transport has no timeout property"
        ]
    );
    let bad = err(&text("2025.1", "eureka.client.timeout.socket-timeout = -1"));
    assert!(
        bad.contains("eureka.client.timeout.socket-timeout"),
        "{bad}"
    );
}
