//! `[[peer]]` tables: the servers of a cluster, their names and their overrides of `[server]`.

use super::tests::{err, ok, parse};
use super::*;
use crate::scenario::fixture::ScenarioText;
use crate::scenario::model::DEFAULT_ZONE;

const APP: &str = "[[app]]\nname = \"svc\"\ninstances = 2\n";

/// Three peers in two zones; `b` overrides one `[server]` key and one client key.
fn three() -> String {
    let b_own = [
        "eureka.server.eviction-interval-timer-in-ms = 90000",
        "eureka.client.fetch-registry = true",
    ];
    let text = ScenarioText::default()
        .table(
            "[server]",
            &[
                "eureka.server.eviction-interval-timer-in-ms = 30000",
                "eureka.server.response-cache-update-interval-ms = 5000",
                "eureka.client.registry-fetch-interval-seconds = 10",
            ],
        )
        .table(
            "[clients]",
            &["eureka.client.registry-fetch-interval-seconds = 5"],
        )
        .peer("a", "z1", &[])
        .peer("b", "z1", &b_own)
        .peer("c", "z2", &[])
        .text();
    format!("\n{text}")
}

#[test]
fn no_peer_is_one_standalone_server_named_after_the_application() {
    let s = ok(APP);
    assert!(s.peers.is_empty());
    let servers = s.servers();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "eureka-server");
    assert_eq!(servers[0].zone, DEFAULT_ZONE);
    assert_eq!(servers[0].server, s.server);
    let renamed = ok(&format!(
        "[server]\nspring.application.name = \"disco\"\n{APP}"
    ));
    assert_eq!(renamed.servers()[0].name, "disco");
}

#[test]
fn peers_take_server_then_their_own_keys() {
    let s = ok(&format!("{}{APP}", three()));
    let names: Vec<(&str, &str)> = s
        .peers
        .iter()
        .map(|p| (p.name.as_str(), p.zone.as_str()))
        .collect();
    assert_eq!(names, [("a", "z1"), ("b", "z1"), ("c", "z2")]);
    assert_eq!(s.servers().len(), 3);
    // [server] 30000, overridden by b alone.
    let eviction: Vec<u64> = s
        .peers
        .iter()
        .map(|p| p.server.eviction_interval_ms)
        .collect();
    assert_eq!(eviction, [30_000, 90_000, 30_000]);
    // [server] keys b does not set reach it.
    assert_eq!(s.peers[1].server.response_cache_update_interval_ms, 5000);
    // The embedded client: [server]'s client keys (10 s, not [clients]' 5 s), then the peer's.
    let fetch: Vec<(u64, bool)> = s
        .peers
        .iter()
        .map(|p| {
            let c = &p.server.client;
            (c.registry_fetch_interval_s, c.fetch_registry)
        })
        .collect();
    assert_eq!(fetch, [(10, false), (10, true), (10, false)]);
    // Peer a sets nothing of its own: it is [server] exactly.
    assert_eq!(s.peers[0].server, s.server);
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 5);
}

#[test]
fn a_lone_peer_named_like_the_server_is_the_standalone_server() {
    let lone = ok(&format!("[[peer]]\nname = \"eureka-server\"\n{APP}"));
    let standalone = ok(APP);
    assert_eq!(lone.servers(), standalone.servers());
}

#[test]
fn peer_keys_can_be_set_by_name_or_index() {
    let sets = [
        "peer.b.eureka.server.eviction-interval-timer-in-ms=1000".to_string(),
        "peer[2].zone=z3".to_string(),
    ];
    let s = parse_str(&format!("{}{APP}", three()), "s.toml", "s", &sets).unwrap();
    assert_eq!(s.peers[1].server.eviction_interval_ms, 1000);
    assert_eq!(s.peers[2].zone, "z3");
}

#[test]
fn a_peer_needs_a_name() {
    let e = err(&format!("[[peer]]\nzone = \"z1\"\n{APP}"));
    assert_eq!(
        e,
        "s.toml:1:1: `peer[0].name` is required; allowed: a name of ASCII letters and digits, `_`, `.` \
         and `-`"
    );
}

#[test]
fn peer_names_are_unique_and_not_an_app_caller_or_instance() {
    let e = err(&format!(
        "[[peer]]\nname = \"a\"\n[[peer]]\nname = \"a\"\n{APP}"
    ));
    assert_eq!(
        e,
        "s.toml:4:8: `peer[1].name`: `a` is already the name of peer[0]; allowed: a name no \
         other [[peer]], [[app]], [[caller]] or the server uses"
    );
    // The app comes after the peers in the file's sections, so the app is the duplicate.
    let e = err(&format!("[[peer]]\nname = \"svc\"\n{APP}"));
    assert_eq!(
        e,
        "s.toml:4:8: `app[0].name`: `svc` is already the name of peer[0]; allowed: a name no \
         other [[peer]], [[app]], [[caller]] or the server uses"
    );
    let e = err(&format!(
        "[[peer]]\nname = \"gw\"\n{APP}[[caller]]\nname = \"gw\"\ncalls = \"svc\"\n"
    ));
    assert!(
        e.contains("`caller[0].name`: `gw` is already the name of peer[0]"),
        "{e}"
    );
    let e = err(&format!("[[peer]]\nname = \"svc-1\"\n{APP}"));
    assert_eq!(
        e,
        "s.toml:2:8: `peer[0].name`: `svc-1` is the id of an instance of app `svc`; allowed: a \
         name no other [[peer]], [[app]], [[caller]] or the server uses, and no instance id \
         (<app name>-<index>)"
    );
    // svc has 2 instances: svc-2 is no instance id.
    assert!(parse(&format!("[[peer]]\nname = \"svc-2\"\n{APP}")).is_ok());
}

#[test]
fn apps_may_not_take_a_peers_application_name() {
    let e = err(
        "[[peer]]\nname = \"a\"\nspring.application.name = \"registry\"\n[[app]]\nname = \"registry\"\n",
    );
    assert_eq!(
        e,
        "s.toml:5:8: `app[0].name`: `registry` is the Eureka server's spring.application.name; \
         allowed: a name no other [[peer]], [[app]], [[caller]] or the server uses"
    );
}

#[test]
fn per_app_ribbon_keys_in_a_peer_are_flagged() {
    let s = ok(&format!(
        "[[peer]]\nname = \"a\"\nsvc.ribbon.MaxAutoRetries = 1\n{APP}"
    ));
    assert!(
        s.warnings.iter().any(|w| w.contains(
            "`peer[0].svc.ribbon.MaxAutoRetries` has no effect: a Eureka \
                                server sends no requests"
        )),
        "{:?}",
        s.warnings
    );
}

#[test]
fn app_keys_are_not_peer_keys() {
    let e = err(&format!("[[peer]]\nname = \"a\"\ninstances = 3\n{APP}"));
    assert_eq!(
        e,
        "s.toml:3:1: `peer[0].instances` is not a key of [[peer]]; it belongs in [[app]]"
    );
}
