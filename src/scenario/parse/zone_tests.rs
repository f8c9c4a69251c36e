//! `[[shutdown]] zone` (`parse/zone.rs`): a zone outage expands into the zone's instances'
//! shutdowns, its callers' stops and its peers' crashes; bad tables name the key and what is
//! allowed.

use crate::scenario::model::{CallerStop, FaultConfig, FaultKind, Strategy};
use crate::scenario::{Scenario, parse_str};

/// Peers `alpha` (z1) and `beta` (z2); `svc` (3 instances) in z1, `orders` (2) in z2 after
/// `svc` in the file, `gw` in z1 and `edge` in z2; a caller `far` alone in z3; 600 s.
const BASE: &str = r#"
[simulation]
duration-s = 600
[[peer]]
name = "alpha"
zone = "z1"
[[peer]]
name = "beta"
zone = "z2"
[clients]
eureka.client.availability-zones.us-east-1 = "z1,z2"
[[app]]
name = "svc"
instances = 3
[[app]]
name = "orders"
instances = 2
eureka.client.availability-zones.us-east-1 = "z2,z1"
[[caller]]
name = "gw"
calls = "svc"
[[caller]]
name = "edge"
calls = ["svc", "orders"]
eureka.client.availability-zones.us-east-1 = "z2,z1"
[[caller]]
name = "far"
calls = "orders"
eureka.client.availability-zones.us-east-1 = "z3"
"#;

fn parse(extra: &str) -> Result<Scenario, String> {
    parse_str(&format!("{BASE}{extra}"), "s.toml", "s", &[]).map_err(|e| e.to_string())
}

fn ok(extra: &str) -> Scenario {
    parse(extra).unwrap_or_else(|e| panic!("rejected: {e}"))
}

fn error(extra: &str) -> String {
    match parse(extra) {
        Ok(_) => panic!("accepted: {extra}"),
        Err(e) => e,
    }
}

const Z1: &str = "[[shutdown]]\nzone = \"z1\"\nat-s = 300\nstrategy = \"kill-9\"\n";

/// Zone z1 is svc's three instances (shutdowns 0..2, in index order, each as a kill -9 named
/// by instance would be), the caller gw, and the peer alpha (a crash at 300 s after the file's
/// own faults); orders, edge, far and beta are elsewhere.
#[test]
fn a_zone_outage_is_its_instances_callers_and_peers() {
    let s = ok(&format!(
        "{Z1}[[fault]]\nkind = \"pause\"\nat-s = 10\nfor-s = 5\ntarget = \"beta\"\n"
    ));
    let ids: Vec<&str> = s.shutdowns.iter().map(|x| x.instance.as_str()).collect();
    assert_eq!(ids, ["svc-0", "svc-1", "svc-2"]);
    for (i, x) in s.shutdowns.iter().enumerate() {
        assert_eq!((x.app, x.index), (0, i as u32));
        assert_eq!(x.at_ms, 300_000);
        assert_eq!(x.strategy, Strategy::Kill9);
        assert_eq!(x.zone.as_deref(), Some("z1"));
        assert!(x.host_vanishes, "a zone's hosts vanish by default");
    }
    assert_eq!(
        s.caller_stops,
        [CallerStop {
            caller: 0,
            at_ms: 300_000
        }]
    );
    assert_eq!(s.faults.len(), 2, "{:?}", s.faults);
    assert!(matches!(s.faults[0].kind, FaultKind::Pause { .. }));
    assert_eq!(
        s.faults[1],
        FaultConfig {
            at_ms: 300_000,
            kind: FaultKind::Crash {
                peer: 0,
                vanishes: true
            }
        }
    );
    assert_eq!(s.shutdown_tables(), 1);
}

/// `host = "stays"` makes a zone outage the refusing form: its instances and its peers are
/// dead processes on live hosts.
#[test]
fn a_zone_that_stays_refuses() {
    let s = ok(&Z1.replace("kill-9\"\n", "kill-9\"\nhost = \"stays\"\n"));
    assert!(s.shutdowns.iter().all(|x| !x.host_vanishes));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::Crash {
            peer: 0,
            vanishes: false
        }
    );
}

/// The same instances as three `[[shutdown]] instance` tables, but for the zone they carry;
/// `host` applies to each. A zone without peers crashes nothing.
#[test]
fn each_instance_of_a_zone_departs_as_if_named_alone() {
    let zone = ok(&Z1.replace("kill-9\"\n", "kill-9\"\nhost = \"vanishes\"\n"));
    let mut alone = String::new();
    for i in 0..3 {
        alone.push_str(&format!(
            "[[shutdown]]\ninstance = \"svc-{i}\"\nat-s = 300\nstrategy = \"kill-9\"\n\
             host = \"vanishes\"\n"
        ));
    }
    let alone = ok(&alone);
    assert_eq!(alone.shutdown_tables(), 3);
    let mut zoned = zone.shutdowns.clone();
    for x in &mut zoned {
        assert!(x.host_vanishes);
        x.zone = None;
    }
    assert_eq!(zoned, alone.shutdowns);
    let z3 = ok("[[shutdown]]\nzone = \"z2\"\nat-s = 1\nstrategy = \"kill-9\"\n");
    let ids: Vec<&str> = z3.shutdowns.iter().map(|x| x.instance.as_str()).collect();
    assert_eq!(ids, ["orders-0", "orders-1"]);
    assert_eq!(
        z3.faults[0].kind,
        FaultKind::Crash {
            peer: 1,
            vanishes: true
        }
    );
    assert_eq!(z3.caller_stops[0].caller, 1);
}

#[test]
fn an_unknown_zone_names_the_closest_and_the_zones() {
    let e = error(&Z1.replace("z1", "z4"));
    assert!(
        e.contains("`shutdown[0].zone`: nobody is in zone `z4`"),
        "{e}"
    );
    assert!(e.contains("did you mean `z"), "{e}");
    assert!(
        e.contains("allowed: a zone of a [[peer]], an [[app]] or a [[caller]] (z1, z2, z3)"),
        "{e}"
    );
}

#[test]
fn a_shutdown_names_an_instance_or_a_zone() {
    let e = error(
        "[[shutdown]]\ninstance = \"svc-0\"\nzone = \"z1\"\nat-s = 300\nstrategy = \"kill-9\"\n",
    );
    assert!(
        e.contains("`shutdown[0].zone`: the shutdown names both an instance and a zone"),
        "{e}"
    );
    assert!(e.contains("allowed: one of instance"), "{e}");
    let e = error("[[shutdown]]\nat-s = 300\nstrategy = \"kill-9\"\n");
    assert!(e.contains("`shutdown[0].instance` is required"), "{e}");
    assert!(
        e.contains("such as `svc-0`, or zone = a zone for a zone outage (z1, z2, z3)"),
        "{e}"
    );
}

/// z3 holds only the caller `far`: nothing to measure. The message lists the zones that have
/// instances, with their apps.
#[test]
fn a_zone_without_instances_is_an_error() {
    let e = error(&Z1.replace("z1", "z3"));
    assert!(
        e.contains("`shutdown[0].zone`: no [[app]] instance is in zone `z3`"),
        "{e}"
    );
    assert!(
        e.contains("allowed: a zone with app instances: z1 (svc), z2 (orders)"),
        "{e}"
    );
}

#[test]
fn a_zone_outage_is_a_kill_9() {
    for strategy in ["kill-15", "pause", "service-registry"] {
        let e = error(&Z1.replace("kill-9", strategy));
        assert!(
            e.contains("`shutdown[0].strategy`: a zone outage stops every process of zone `z1`"),
            "{e}"
        );
        assert!(
            e.contains(&format!("strategy {strategy} is not one")),
            "{e}"
        );
        assert!(e.contains("allowed: kill-9 with zone"), "{e}");
    }
}

/// An instance stops once: a zone and an instance of it, or a zone twice, are errors naming
/// the table that stops it first.
#[test]
fn a_zone_and_its_instance_or_the_zone_twice_are_errors() {
    let e = error(&format!(
        "[[shutdown]]\ninstance = \"svc-1\"\nat-s = 200\nstrategy = \"kill-9\"\n{Z1}"
    ));
    assert!(
        e.contains("`shutdown[1].zone`: `svc-1`, of zone `z1`, already shuts down in shutdown[0]"),
        "{e}"
    );
    let e = error(&format!(
        "{Z1}[[shutdown]]\ninstance = \"svc-2\"\nat-s = 200\nstrategy = \"kill-9\"\n"
    ));
    assert!(
        e.contains("`shutdown[1].instance`: `svc-2` already shuts down in shutdown[0] (zone `z1`)"),
        "{e}"
    );
    let e = error(&format!("{Z1}{}", Z1.replace("300", "400")));
    assert!(
        e.contains("`shutdown[1].zone`: zone `z1` already goes down in shutdown[0]"),
        "{e}"
    );
    // Another zone and another instance are fine; claims name zone instances by id.
    let s = ok(&format!(
        "{Z1}[[shutdown]]\nzone = \"z2\"\nat-s = 400\nstrategy = \"kill-9\"\n\
         [[claim]]\nshutdown = \"orders-1\"\nmetric = \"exposure_ms\"\nstatistic = \"max\"\n\
         comparison = \"<=\"\nvalue-s = 999\nsource = \"x\"\n"
    ));
    assert_eq!(s.shutdowns.len(), 5);
    assert_eq!(s.claims[0].shutdown, 4);
    assert_eq!(s.shutdown_tables(), 2);
}

/// The at-s of a zone outage falls within the trial, as any shutdown's.
#[test]
fn a_zone_outage_falls_within_the_trial() {
    let e = error(&Z1.replace("300", "600"));
    assert!(
        e.contains("`shutdown[0].at-s`: at-s 600 is not before the end of the trial"),
        "{e}"
    );
}

/// A zone holding every server (the standalone server is in defaultZone) is allowed, with a
/// warning: nobody evicts afterwards.
#[test]
fn a_zone_with_every_server_warns() {
    let text = "[simulation]\nduration-s = 600\n[[app]]\nname = \"svc\"\ninstances = 2\n\
                [[shutdown]]\nzone = \"defaultZone\"\nat-s = 300\nstrategy = \"kill-9\"\n";
    let s = parse_str(text, "s.toml", "s", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::Crash {
            peer: 0,
            vanishes: true
        }
    );
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("zone `defaultZone` holds every Eureka server (eureka-server)")),
        "{:?}",
        s.warnings
    );
    assert!(
        !ok(Z1)
            .warnings
            .iter()
            .any(|w| w.contains("holds every Eureka server"))
    );
}

/// `--set` reaches a zone outage like any `[[shutdown]]` key.
#[test]
fn a_zone_can_be_set_from_the_command_line() {
    let text = format!("{BASE}{Z1}");
    let s = parse_str(&text, "s.toml", "s", &["shutdown[0].zone=z2".to_string()])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.shutdowns[0].instance, "orders-0");
}

/// An app spread over zones (`zones`, a model key): instance i in zone i mod n of the list,
/// round robin, its availability zones that zone first and then the others in the order
/// written, and its Eureka servers its own zone's first.
const SPREAD: &str = r#"
[[app]]
name = "cart"
instances = 5
zones = ["z2", "z1"]
"#;

/// `cart` (5 instances over z2, z1): cart-0, cart-2, cart-4 in z2 and cart-1, cart-3 in z1.
/// Each instance's client lists its own zone first (z2 instances: "z2,z1", beta first; z1
/// instances: "z1,z2", alpha first).
#[test]
fn an_app_spreads_its_instances_over_its_zones_round_robin() {
    let s = ok(SPREAD);
    let cart = &s.apps[2];
    let zones: Vec<&str> = (0..5).map(|i| cart.zone_of(i)).collect();
    assert_eq!(zones, ["z2", "z1", "z2", "z1", "z2"]);
    assert_eq!(cart.client_of(0).zones(), ["z2", "z1"]);
    assert_eq!(cart.client_of(1).zones(), ["z1", "z2"]);
    assert_eq!(cart.client_of(0).endpoints.own, [1]);
    assert_eq!(cart.client_of(0).endpoints.others, [0]);
    assert_eq!(cart.client_of(3).endpoints.own, [0]);
    assert_eq!(cart.client_of(3).endpoints.others, [1]);
    // A string list is the same.
    let s = ok(&SPREAD.replace("[\"z2\", \"z1\"]", "\"z2,z1\""));
    assert_eq!(s.apps[2].zone_of(1), "z1");
}

/// A zone outage takes only the zone's instances of a spread app: z1 stops svc-0..2 (all in
/// z1) and cart-1 and cart-3 (the odd ones of z2, z1), not cart-0, -2, -4.
#[test]
fn a_zone_outage_takes_only_that_zones_instances_of_a_spread_app() {
    let s = ok(&format!("{SPREAD}{Z1}"));
    let stopped: Vec<&str> = s.shutdowns.iter().map(|x| x.instance.as_str()).collect();
    assert_eq!(stopped, ["svc-0", "svc-1", "svc-2", "cart-1", "cart-3"]);
}

/// `zones` with the table's own `availability-zones` (two answers to where the instances
/// run), a zone twice, more than 64 zones, or a partition between a spread app and one of its
/// zones (its instances there on both sides) are refused, naming the key and what is allowed.
#[test]
fn zones_conflicts_are_refused() {
    let e = error(&format!(
        "{SPREAD}eureka.client.availability-zones.us-east-1 = \"z1\"\n"
    ));
    assert!(e.contains("`app[2].zones`"), "{e}");
    assert!(
        e.contains("`app[2].eureka.client.availability-zones.us-east-1` also sets the app's zones"),
        "{e}"
    );
    assert!(e.contains("allowed: one of zones"), "{e}");
    let many: Vec<String> = (0..65).map(|k| format!("\"r{k}\"")).collect();
    let e = error(&SPREAD.replace("[\"z2\", \"z1\"]", &format!("[{}]", many.join(", "))));
    assert!(
        e.contains("`app[2].zones`: 65 zones; allowed: at most 64 zones"),
        "{e}"
    );
    let e = error(&SPREAD.replace("[\"z2\", \"z1\"]", "[\"z2\", \"z1\", \"z2\"]"));
    assert!(
        e.contains("`app[2].zones`: zone `z2` is listed twice"),
        "{e}"
    );
    let e = error(&format!(
        "{SPREAD}[[fault]]\nkind = \"partition\"\nat-s = 100\nfor-s = 10\nbetween = [\"cart\", \
         \"z1\"]\n"
    ));
    assert!(
        e.contains("`cart` has instances in zone `z1` (`cart-1`: [[app]] zones)"),
        "{e}"
    );
}
