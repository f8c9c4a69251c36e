//! Whole-pipeline tests: text (and `--set` arguments) in, `Scenario` or message out.

use super::*;
use crate::scenario::keys::{Kind, key_catalogue};
use crate::scenario::model::{FinalStop, HttpMethod};
use crate::scenario::release::{EurekaVersion, Release, Train};

/// The smallest valid scenario.
const MINIMAL: &str = "[[app]]\nname = \"svc\"\n";

/// A scenario using every table.
const FULL: &str = r#"
[simulation]
duration-s = 600
trials = 10
seed = 7
release = "Greenwich"
[network]
latency-ms = 2
[server]
eureka.server.response-cache-update-interval-ms = 5000
eureka.client.fetch-registry = true
[clients]
eureka.client.registry-fetch-interval-seconds = 5
ribbon.ServerListRefreshInterval = 4000
[[app]]
name = "svc"
instances = 5
[[app]]
name = "db"
[[caller]]
name = "gateway"
calls = ["svc", "db"]
rate-per-s = 50
method = "post"
[[shutdown]]
instance = "svc-0"
at-s = 300
strategy = "pause"
wait-s = 60
then = "kill-9"
"#;

/// The scenario of `text` (as file `s.toml`), or why not: the helpers every `*_tests.rs` of
/// the parser reads its tables with.
pub(super) fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    parse_str(text, "s.toml", "s", &[])
}

fn parse_set(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(text, "s.toml", "s", &sets)
}

/// The scenario of a `text` that must parse.
pub(super) fn ok(text: &str) -> Scenario {
    parse(text).unwrap_or_else(|e| panic!("{e}"))
}

/// The message of a `text` that must be refused.
pub(super) fn err(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn empty_tables_give_the_default_impls() {
    let s = ok(&format!(
        "[simulation]\n[network]\n[server]\n[clients]\n{MINIMAL}"
    ));
    assert_eq!(s.name, "s");
    assert_eq!(s.simulation, SimulationConfig::default());
    assert_eq!(s.network, NetworkConfig::default());
    assert_eq!(s.server, ServerConfig::default());
    assert_eq!(s.apps.len(), 1);
    assert_eq!(s.apps[0].name, "svc");
    assert_eq!(s.apps[0].instances, 1);
    assert_eq!(s.apps[0].client, ClientConfig::default());
    assert!(s.callers.is_empty() && s.shutdowns.is_empty());
    assert_eq!(
        s.warnings,
        [
            "s.toml: no [[caller]]: nothing sends requests, so nothing will be measured",
            "s.toml: no [[shutdown]]: no instance departs, so nothing will be measured",
        ]
    );
}

/// The catalogue's documented defaults are the `Default` impls: writing every documented default
/// explicitly changes nothing.
#[test]
fn documented_defaults_are_the_default_impls() {
    let mut text = String::new();
    for table in ["simulation", "network", "server", "clients"] {
        text.push_str(&format!("[{table}]\n"));
        for doc in key_catalogue().iter().filter(|d| d.table == table) {
            // <app>.ribbon.<Key>, and the map keys (`service-url.<zone>`), which name no key.
            if doc.key.contains('<') {
                continue;
            }
            let Some(def) = DEFS.iter().find(|d| d.key == doc.key) else {
                continue;
            };
            // Defaults worked out from other keys.
            // Or none at all (`spring-config`, `spring-profiles`: read before binding).
            if [
                "the train's",
                "the stack's",
                "a day after the last planned action",
                "(none)",
                "(each file's spring.profiles.active)",
            ]
            .contains(&doc.default)
            {
                continue;
            }
            // "true (false in [server])": the [server] default is the Default impl's too.
            let mut value = doc
                .default
                .split(" (")
                .next()
                .unwrap_or_default()
                .to_string();
            if table == "server" && doc.default.contains("in [server]") {
                value = "false".into();
            }
            let value = match def.kind {
                Kind::Int { .. } | Kind::Float { .. } | Kind::Bool => value,
                _ => format!("{value:?}"),
            };
            text.push_str(&format!("{} = {value}\n", doc.key));
        }
    }
    let explicit = ok(&format!("{text}{MINIMAL}"));
    let implicit = ok(MINIMAL);
    assert_eq!(explicit.simulation, implicit.simulation);
    assert_eq!(explicit.network, implicit.network);
    assert_eq!(explicit.apps, implicit.apps);
    assert_eq!(explicit.server.client, ServerConfig::default().client);
    assert_eq!(
        ServerConfig {
            client: ServerConfig::default().client,
            ..explicit.server
        },
        ServerConfig::default()
    );
}

#[test]
fn a_full_scenario_is_typed() {
    let s = ok(FULL);
    assert_eq!(s.simulation.duration_ms, 600_000);
    assert_eq!(s.simulation.trials, 10);
    assert_eq!(s.simulation.seed, 7);
    assert_eq!(s.simulation.release, Release::of_train(Train::Greenwich));
    assert_eq!(s.network.latency_ms, 2);
    assert_eq!(s.server.response_cache_update_interval_ms, 5000);
    assert!(s.server.client.fetch_registry);
    assert!(!s.server.client.register_with_eureka);
    assert_eq!(s.apps[0].instances, 5);
    assert_eq!(s.apps[1].client.registry_fetch_interval_s, 5);
    let gw = &s.callers[0];
    assert_eq!(gw.method, HttpMethod::Post);
    assert_eq!(gw.rate_per_s, 50.0);
    assert_eq!(gw.calls.iter().map(|c| c.app).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(gw.calls[0].ribbon.server_list_refresh_interval_ms, 4000);
    let sd = &s.shutdowns[0];
    assert_eq!((sd.app, sd.index, sd.at_ms), (0, 0, 300_000));
    assert_eq!(
        (sd.strategy, sd.wait_ms, sd.then),
        (Strategy::Pause, 60_000, FinalStop::Kill9)
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn relaxed_binding_gives_the_same_value() {
    for key in [
        "eureka.server.response-cache-update-interval-ms",
        "eureka.server.responseCacheUpdateIntervalMs",
        "eureka.server.response_cache_update_interval_ms",
    ] {
        let s = ok(&format!("[server]\n{key} = 5000\n{MINIMAL}"));
        assert_eq!(s.server.response_cache_update_interval_ms, 5000, "{key}");
    }
    for key in ["duration-s", "durationS", "duration_s", "DURATION_S"] {
        let s = ok(&format!("[simulation]\n{key} = 60\n{MINIMAL}"));
        assert_eq!(s.simulation.duration_ms, 60_000, "{key}");
    }
}

#[test]
fn the_dalston_finchley_name_of_expected_clients_is_accepted() {
    let key = "eureka.instance.registry.expected-number-of-renews-per-min";
    let s = ok(&format!("[server]\n{key} = 4\n{MINIMAL}"));
    assert_eq!(s.server.expected_number_of_clients_sending_renews, 4);
}

/// Spring Cloud Netflix's `InstanceRegistryProperties` reads the legacy
/// `@Value("${eureka.server.defaultOpenForTrafficCount:1}")` into the field of
/// `eureka.instance.registry.default-open-for-traffic-count`: the same setting, in `[server]`
/// and in a `[[peer]]`. `@Value` resolves that exact name only: another spelling is refused,
/// naming both keys, and setting both in one table is one key set twice.
#[test]
fn the_legacy_open_for_traffic_count_is_the_same_setting_by_its_exact_name() {
    let legacy = "eureka.server.defaultOpenForTrafficCount";
    let s = ok(&format!("[server]\n{legacy} = 0\n{MINIMAL}"));
    assert_eq!(s.server.default_open_for_traffic_count, 0);
    let s = ok(&format!(
        "[[peer]]\nname = \"a\"\n{legacy} = 3\n[[peer]]\nname = \"b\"\n{MINIMAL}"
    ));
    let servers = s.servers();
    assert_eq!(servers[0].server.default_open_for_traffic_count, 3);
    assert_eq!(servers[1].server.default_open_for_traffic_count, 1);
    let s = parse_set(MINIMAL, &[&format!("server.{legacy}=0")]).unwrap();
    assert_eq!(s.server.default_open_for_traffic_count, 0);
    for spelling in [
        "eureka.server.default-open-for-traffic-count",
        "eureka.server.defaultopenfortrafficcount",
    ] {
        let e = err(&format!("[server]\n{spelling} = 0\n{MINIMAL}"));
        assert!(e.starts_with("s.toml:2:1: "), "{e}");
        assert!(
            e.contains(&format!("unknown key `server.{spelling}`")),
            "{e}"
        );
        assert!(
            e.contains("`server.eureka.server.defaultOpenForTrafficCount`"),
            "{e}"
        );
        assert!(
            e.contains("`server.eureka.instance.registry.default-open-for-traffic-count`"),
            "{e}"
        );
    }
    let both = err(&format!(
        "[server]\neureka.instance.registry.default-open-for-traffic-count = 1\n{legacy} = 0\n{MINIMAL}"
    ));
    assert!(both.contains("sets the same property"), "{both}");
}

#[test]
fn dotted_keys_sub_tables_and_inline_tables_are_equivalent() {
    let forms = [
        "[server]\neureka.server.eviction-interval-timer-in-ms = 1000\n",
        "[server.eureka.server]\neviction-interval-timer-in-ms = 1000\n",
        "[server]\neureka.server = { eviction-interval-timer-in-ms = 1000 }\n",
        "[server]\neureka = { server = { evictionIntervalTimerInMs = 1000 } }\n",
        "server = { \"eureka.server.eviction-interval-timer-in-ms\" = 1000 }\n",
    ];
    for form in forms {
        let s = ok(&format!("{form}{MINIMAL}"));
        assert_eq!(s.server.eviction_interval_ms, 1000, "{form}");
    }
    let inline_apps = ok("app = [{ name = \"svc\", instances = 2 }]\n");
    assert_eq!(inline_apps.apps[0].instances, 2);
}

#[test]
fn unknown_keys_name_file_line_key_and_suggestion() {
    let e = err(&format!(
        "[server]\n\neureka.server.eviction-interval-timer-ms = 1\n{MINIMAL}"
    ));
    assert_eq!(
        e,
        "s.toml:3:1: unknown key `server.eureka.server.eviction-interval-timer-ms`; did you mean \
         `server.eureka.server.eviction-interval-timer-in-ms`? (`eureka-sim keys` lists every key)"
    );
}

#[test]
fn all_unknown_keys_are_reported_together() {
    let e = err(&format!("[simulation]\ntrails = 1\nsed = 2\n{MINIMAL}"));
    assert!(e.starts_with("2 problems:\n"), "{e}");
    assert!(
        e.contains(
            "s.toml:2:1: unknown key `simulation.trails`; did you mean `simulation.trials`?"
        ),
        "{e}"
    );
    assert!(
        e.contains("s.toml:3:1: unknown key `simulation.sed`; did you mean `simulation.seed`?"),
        "{e}"
    );
}

#[test]
fn zero_and_negative_intervals_are_rejected_with_the_range() {
    let e = err(&format!(
        "[server]\neureka.server.eviction-interval-timer-in-ms = 0\n{MINIMAL}"
    ));
    assert_eq!(
        e,
        "s.toml:2:47: `server.eureka.server.eviction-interval-timer-in-ms`: must be at least 1, \
         got 0; allowed: an integer in 1..=86400000 (milliseconds)"
    );
    let e = err(&format!(
        "[clients]\neureka.client.registryFetchIntervalSeconds = -30\n{MINIMAL}"
    ));
    assert!(
        e.contains("must be at least 1, got -30; allowed: an integer in 1..=86400 (seconds)"),
        "{e}"
    );
    let e = err("[[app]]\nname = \"svc\"\ninstances = 0\n");
    assert!(
        e.contains("`app[0].instances`: must be at least 1, got 0"),
        "{e}"
    );
    let e = err(&format!(
        "[server]\neureka.server.renewal-percent-threshold = 0\n{MINIMAL}"
    ));
    assert!(
        e.contains("must be greater than 0, got 0; allowed: a number greater than 0 and at most 1"),
        "{e}"
    );
    let e = err(&format!("[simulation]\nduration-s = 999999999\n{MINIMAL}"));
    assert!(e.contains("must be at most 604800"), "{e}");
}

#[test]
fn wrong_types_say_what_was_expected() {
    let e = err(&format!("[simulation]\ntrials = \"many\"\n{MINIMAL}"));
    assert_eq!(
        e,
        "s.toml:2:10: `simulation.trials`: expected an integer, found a string (\"many\"); \
         allowed: an integer in 1..=1000000"
    );
    let e = err(&format!(
        "[clients]\neureka.client.fetch-registry = 1\n{MINIMAL}"
    ));
    assert!(
        e.contains("expected a boolean, found an integer (1); allowed: true or false"),
        "{e}"
    );
}

#[test]
fn strings_from_application_properties_are_accepted() {
    let s = ok(&format!(
        "[simulation]\ntrials = \"5\"\nseed = \"18446744073709551615\"\n\
         [clients]\neureka.client.fetch-registry = \"false\"\n{MINIMAL}"
    ));
    assert_eq!(s.simulation.trials, 5);
    assert_eq!(s.simulation.seed, u64::MAX);
    assert!(!s.apps[0].client.fetch_registry);
}

#[test]
fn eureka_version_pins_the_trains_version() {
    let s = ok(&format!(
        "[simulation]\neureka-version = \"1.9.16\"\nrelease = \"hoxton\"\n{MINIMAL}"
    ));
    assert_eq!(s.simulation.release.train, Train::Hoxton);
    assert_eq!(s.simulation.release.eureka, EurekaVersion::new(1, 9, 16));
    let e = err(&format!("[simulation]\nrelease = \"Camden\"\n{MINIMAL}"));
    assert!(
        e.contains("unknown release train `Camden`; allowed: Dalston, Edgware"),
        "{e}"
    );
}

/// A service release after the train; an unknown one names the key and lists the train's.
#[test]
fn release_takes_a_service_release() {
    let s = ok(&format!(
        "[simulation]\nrelease = \"hoxton.sr9\"\n{MINIMAL}"
    ));
    assert_eq!(s.simulation.release.name(), "Hoxton.SR9");
    assert_eq!(s.simulation.release.eureka, EurekaVersion::new(1, 10, 7));
    let s = parse_set(MINIMAL, &["simulation.release=2020.0.3"]).unwrap();
    assert_eq!(s.simulation.release.eureka, EurekaVersion::new(1, 10, 14));
    let pinned = ok(&format!(
        "[simulation]\nrelease = \"Hoxton.SR3\"\neureka-version = \"1.9.16\"\n{MINIMAL}"
    ));
    assert!(!pinned.simulation.release.eviction_lowers_expected());
    let e = err(&format!(
        "[simulation]\nrelease = \"Hoxton.SR13\"\n{MINIMAL}"
    ));
    assert!(
        e.contains(
            "`simulation.release`: unknown service release `Hoxton.SR13`: Hoxton has \
             Hoxton.RELEASE, Hoxton.SR1, "
        ) && e.contains("Hoxton.SR12 (or Hoxton alone for the last)"),
        "{e}"
    );
}

/// FACTS.md §8: Ribbon's timeouts default to 2000 / 5000 on Dalston (Ribbon's own defaults)
/// and 1000 / 1000 from Edgware (SCN RibbonClientConfiguration), whichever table sets them;
/// `ribbon.*` and `<app>.ribbon.*` override the train's default.
#[test]
fn ribbon_timeouts_default_per_train() {
    let text = "[[app]]\nname = \"svc\"\n[[app]]\nname = \"db\"\n\
                [[caller]]\nname = \"gw\"\ncalls = [\"svc\", \"db\"]\n";
    for (release, connect, read) in [
        ("Dalston", 2000, 5000),
        ("Dalston.SR1", 2000, 5000),
        ("Edgware.RELEASE", 1000, 1000),
        ("Hoxton", 1000, 1000),
        ("2020.0", 1000, 1000),
    ] {
        let s = parse_set(text, &[&format!("simulation.release={release}")]).unwrap();
        let timeouts = |r: &RibbonConfig| (r.connect_timeout_ms, r.read_timeout_ms);
        for call in &s.callers[0].calls {
            assert_eq!(timeouts(&call.ribbon), (connect, read), "{release}");
        }
        assert_eq!(timeouts(&s.callers[0].client.ribbon), (connect, read));
        assert_eq!(timeouts(&s.apps[0].client.ribbon), (connect, read));
        assert_eq!(timeouts(&s.server.client.ribbon), (connect, read));
    }
    let s = parse_set(
        text,
        &[
            "simulation.release=Dalston",
            "clients.ribbon.ReadTimeout=3000",
            "caller.gw.db.ribbon.ConnectTimeout=250",
        ],
    )
    .unwrap();
    let calls = &s.callers[0].calls;
    assert_eq!(
        (
            calls[0].ribbon.connect_timeout_ms,
            calls[0].ribbon.read_timeout_ms
        ),
        (2000, 3000)
    );
    assert_eq!(
        (
            calls[1].ribbon.connect_timeout_ms,
            calls[1].ribbon.read_timeout_ms
        ),
        (250, 3000)
    );
    let e = err(&format!("[clients]\nribbon.connectTimeout = 5\n{MINIMAL}"));
    assert!(e.contains("ribbon.connectTimeout"), "{e}");
}

/// FACTS.md §14: /pause on Boot 2.3 with commons <= 2.2.6 (Hoxton.SR5–SR9) stops the web server,
/// with a warning; not on Boot 2.2 (Hoxton.SR4, or SR9 pinned to 2.2.13), nor from SR10.
#[test]
fn pause_warns_that_it_stops_the_web_server_on_boot_2_3() {
    let pause = "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"pause\"\n\
                 wait-s = 60\n";
    let warned = |sets: &[&str]| {
        let s = parse_set(&format!("{MINIMAL}{pause}"), sets).unwrap();
        s.warnings
            .iter()
            .any(|w| w.contains("stops the web server too"))
    };
    assert!(warned(&["simulation.release=Hoxton.SR9"]));
    assert!(warned(&["simulation.release=Hoxton.SR5"]));
    assert!(!warned(&["simulation.release=Hoxton.SR4"]));
    assert!(!warned(&[
        "simulation.release=Hoxton.SR9",
        "simulation.spring-boot=2.2.13"
    ]));
    assert!(!warned(&["simulation.release=Hoxton.SR10"]));
}

/// A lost SIGTERM (`sigterm-reaches-jvm = false`) whose SIGKILL would come after the trial's end
/// is warned about, but a `/resume`d pause sends no SIGTERM at all (`ShutdownRun` schedules the
/// resume, not `then`), so it has nothing to warn about.
#[test]
fn a_resumed_pause_is_not_warned_about_a_lost_sigterm() {
    let pause = "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"pause\"\n\
                 wait-s = 60\nsigterm-reaches-jvm = false\ntermination-grace-period-s = 900\n";
    let warned = |sets: &[&str]| {
        let s = parse_set(&format!("{MINIMAL}{pause}"), sets).unwrap();
        s.warnings.iter().any(|w| w.contains("never stops in it"))
    };
    let sr9 = "simulation.release=Hoxton.SR9";
    assert!(warned(&[sr9]));
    assert!(!warned(&[sr9, "shutdown[0].resume-s=60"]));
    assert!(!warned(&[sr9, "shutdown[0].then=kill-9"]));
}

/// FACTS.md §7: /pause on commons >= 2.2.7 is modelled as doing nothing to Eureka, with a
/// warning; on Hoxton.SR9 it deregisters and nothing is said of that (but see the next test).
#[test]
fn pause_warns_from_commons_2_2_7() {
    let pause = "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"pause\"\n\
                 wait-s = 60\n";
    let warned = |release: &str| {
        let s = parse_set(
            &format!("{MINIMAL}{pause}"),
            &[&format!("simulation.release={release}")],
        )
        .unwrap();
        s.warnings
            .iter()
            .any(|w| w.contains("/pause no longer deregisters"))
    };
    assert!(!warned("Hoxton.SR9"));
    assert!(!warned("Hoxton.SR4"));
    assert!(!warned("Dalston"));
    assert!(warned("Hoxton.SR10"));
    assert!(warned("Hoxton"));
    assert!(warned("2020.0.0"));
}

#[test]
fn set_overrides_file_values() {
    let s = parse_set(
        FULL,
        &[
            "shutdown[0].strategy=kill-15",
            "clients.ribbon.ServerListRefreshInterval=5000",
            "simulation.trials=3",
            "simulation.trials=4",
            "server.eureka.server.responseCacheUpdateIntervalMs=7000",
            "app[0].instances=3",
            "app.db.instances=2",
            "caller.gateway.rate-per-s=0.5",
            "simulation.release=2020.0",
            "network.latency-jitter-ms=0",
        ],
    )
    .unwrap();
    let sd = &s.shutdowns[0];
    assert_eq!(sd.strategy, Strategy::Kill15);
    assert_eq!(
        s.callers[0].calls[0].ribbon.server_list_refresh_interval_ms,
        5000
    );
    assert_eq!(
        s.callers[0].client.ribbon.server_list_refresh_interval_ms,
        5000
    );
    assert_eq!(s.simulation.trials, 4);
    assert_eq!(s.server.response_cache_update_interval_ms, 7000);
    assert_eq!((s.apps[0].instances, s.apps[1].instances), (3, 2));
    assert_eq!(s.callers[0].rate_per_s, 0.5);
    assert_eq!(s.simulation.release.train, Train::Y2020);
    assert_eq!(s.network.latency_jitter_ms, 0);
    // wait-s and then are now on a kill-15: allowed, with warnings at their lines (2020.0
    // routes through Spring Cloud LoadBalancer, as it should: no warning).
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert!(
        s.warnings[0].starts_with("s.toml:29:1: `shutdown[0].wait-s` has no effect"),
        "{:?}",
        s.warnings
    );
}

#[test]
fn bad_set_values_and_targets_name_the_argument() {
    let e = parse_set(FULL, &["simulation.trials=0"])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.toml (--set simulation.trials=0): `simulation.trials`: must be at least 1, got 0; \
         allowed: an integer in 1..=1000000"
    );
    let e = parse_set(FULL, &["shutdown[0].strategy=kill-3"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown strategy `kill-3`; allowed: kill-9, kill-15, pause, service-registry"),
        "{e}"
    );
    let e = parse_set(FULL, &["shutdown[1].strategy=kill-9"])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.toml (--set shutdown[1].strategy=kill-9): bad --set argument: \
         `shutdown[1].strategy`: shutdown[1] does not exist: the file has one [[shutdown]]: \
         shutdown[0]"
    );
    let e = parse_set(FULL, &["sever.x=1"]).unwrap_err().to_string();
    assert!(e.contains("unknown table `sever`"), "{e}");
    assert!(e.contains("did you mean `server`?"), "{e}");
    let e = parse_set(FULL, &["clients.ribbon.serverListRefreshInterval=5"])
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("did you mean `clients.ribbon.ServerListRefreshInterval`?"),
        "{e}"
    );
    let e = parse_set(FULL, &["clients.eureka.server.x=5"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown key `clients.eureka.server.x`"), "{e}");
}

#[test]
fn set_may_add_keys_and_tables_the_file_lacks() {
    let s = parse_set(
        MINIMAL,
        &["simulation.seed=9", "app[0].svc.ribbon.MaxAutoRetries=2"],
    )
    .unwrap();
    assert_eq!(s.simulation.seed, 9);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("only a [[caller]] sends requests"))
    );
    // Above i64::MAX the value is not a TOML integer, so it arrives as a string of digits.
    let s = parse_set(MINIMAL, &["simulation.seed=18446744073709551615"]).unwrap();
    assert_eq!(s.simulation.seed, u64::MAX);
}

#[test]
fn app_keys_override_clients_keys() {
    let s = ok(r#"
[clients]
eureka.instance.lease-renewal-interval-in-seconds = 10
eureka.client.registry-fetch-interval-seconds = 5
ribbon.MaxAutoRetries = 2
[[app]]
name = "a"
eureka.instance.leaseRenewalIntervalInSeconds = 3
ribbon.MaxAutoRetries = 4
[[app]]
name = "b"
"#);
    let (a, b) = (&s.apps[0].client, &s.apps[1].client);
    assert_eq!(
        (a.lease_renewal_interval_s, b.lease_renewal_interval_s),
        (3, 10)
    );
    assert_eq!(
        (a.registry_fetch_interval_s, b.registry_fetch_interval_s),
        (5, 5)
    );
    assert_eq!(
        (a.ribbon.max_auto_retries, b.ribbon.max_auto_retries),
        (4, 2)
    );
    // The server's embedded client does not take [clients].
    assert_eq!(s.server.client.lease_renewal_interval_s, 30);
}

#[test]
fn per_app_ribbon_keys_layer_in_order() {
    let base = r#"
[clients]
ribbon.ServerListRefreshInterval = 1000
ribbon.MaxAutoRetries = 1
ribbon.MaxAutoRetriesNextServer = 1
ribbon.OkToRetryOnAllOperations = false
svc.ribbon.MaxAutoRetries = 2
svc.ribbon.MaxAutoRetriesNextServer = 2
svc.ribbon.OkToRetryOnAllOperations = true
[[app]]
name = "svc"
[[app]]
name = "db"
[[caller]]
name = "gw"
calls = ["svc", "db"]
ribbon.MaxAutoRetriesNextServer = 3
svc.ribbon.OkToRetryOnAllOperations = false
"#;
    let s = ok(base);
    let (svc, db) = (&s.callers[0].calls[0].ribbon, &s.callers[0].calls[1].ribbon);
    // defaults <- [clients] ribbon.* <- [clients] svc.ribbon.* <- caller ribbon.* <- caller svc.ribbon.*
    assert_eq!(svc.server_list_refresh_interval_ms, 1000);
    assert_eq!(svc.max_auto_retries, 2);
    assert_eq!(svc.max_auto_retries_next_server, 3);
    assert!(!svc.ok_to_retry_on_all_operations);
    assert_eq!(db.max_auto_retries, 1);
    assert_eq!(db.max_auto_retries_next_server, 3);
    assert!(!db.ok_to_retry_on_all_operations);
    // The caller's own client sees the global keys only.
    assert_eq!(s.callers[0].client.ribbon.max_auto_retries, 1);
    assert_eq!(s.callers[0].client.ribbon.max_auto_retries_next_server, 3);
}

/// Ribbon reads the breaker keys of the client `svc` as `niws.loadbalancer.svc.*` and never
/// `niws.loadbalancer.default.*` (`LoadBalancerStats#getCircuitTrippedTimeoutFactor`, Ribbon
/// 2.3.0): the per-client value wins for `svc` from either table, the `default` one (the model's
/// every-client key) applies to the others, and Ribbon's own 3 / 10 / 30 where neither is set.
#[test]
fn per_client_breaker_keys_win_for_their_app_only() {
    let text = r#"
[clients]
niws.loadbalancer.svc.circuitTripTimeoutFactorSeconds = 1
niws.loadbalancer.default.circuitTripMaxTimeoutSeconds = 20
[[app]]
name = "svc"
[[app]]
name = "db"
[[caller]]
name = "gw"
calls = ["svc", "db"]
niws.loadbalancer.default.circuitTripTimeoutFactorSeconds = 5
niws.loadbalancer.svc.circuitTripMaxTimeoutSeconds = 3
niws.loadbalancer.db.connectionFailureCountThreshold = 2
"#;
    let s = ok(text);
    let niws = |s: &Scenario| -> Vec<String> {
        s.warnings
            .iter()
            .filter(|w| w.contains("niws"))
            .cloned()
            .collect()
    };
    let breaker = |r: &RibbonConfig| {
        (
            r.connection_failure_count_threshold,
            r.circuit_trip_timeout_factor_s,
            r.circuit_trip_max_timeout_s,
        )
    };
    let (svc, db) = (&s.callers[0].calls[0].ribbon, &s.callers[0].calls[1].ribbon);
    // svc: threshold unset anywhere (3); factor 1 from [clients] svc, not the caller's default 5;
    // max 3 from the caller's svc, not [clients] default 20.
    assert_eq!(breaker(svc), (3, 1, 3));
    // db: its own threshold 2; the defaults 5 (caller over nothing) and 20.
    assert_eq!(breaker(db), (2, 5, 20));
    assert!(niws(&s).is_empty(), "{:?}", s.warnings);
    // A key for an app the caller does not call warns and changes nothing.
    let one = text.replace("calls = [\"svc\", \"db\"]", "calls = \"svc\"");
    let s = ok(&one);
    assert_eq!(breaker(&s.callers[0].calls[0].ribbon), (3, 1, 3));
    let warned = niws(&s);
    assert_eq!(warned.len(), 1, "{:?}", s.warnings);
    assert!(
        warned[0].ends_with(
            "`caller[0].niws.loadbalancer.db.connectionFailureCountThreshold` has no effect: `gw` \
             does not call `db`"
        ),
        "{}",
        warned[0]
    );
    // In an [[app]] table it warns as `<app>.ribbon.*` does.
    let s = ok("[[app]]\nname = \"svc\"\nniws.loadbalancer.svc.circuitTripMaxTimeoutSeconds = 3\n");
    let warned = niws(&s);
    assert_eq!(warned.len(), 1, "{:?}", s.warnings);
    assert!(
        warned[0].ends_with("only a [[caller]] sends requests through Ribbon"),
        "{}",
        warned[0]
    );
    // An undeclared app is an error naming the declared ones.
    let e = err(&format!(
        "{MINIMAL}[clients]\nniws.loadbalancer.svx.circuitTripMaxTimeoutSeconds = 3\n"
    ));
    assert!(
        e.contains("`svx` is not a declared [[app]] (declared: svc)"),
        "{e}"
    );
}

#[test]
fn ribbon_keys_in_the_wrong_case_suggest_the_exact_spelling() {
    let e = err(&format!(
        "[clients]\nribbon.serverlistrefreshinterval = 5\n{MINIMAL}"
    ));
    assert_eq!(
        e,
        "s.toml:2:1: unknown key `clients.ribbon.serverlistrefreshinterval`: Ribbon keys are \
         case-sensitive; did you mean `clients.ribbon.ServerListRefreshInterval`?"
    );
    let e = err(&format!(
        "{MINIMAL}[[caller]]\nname = \"gw\"\ncalls = \"svc\"\nsvc.Ribbon.MaxAutoRetries = 1\n"
    ));
    assert!(
        e.ends_with("did you mean `caller[0].svc.ribbon.MaxAutoRetries`?"),
        "{e}"
    );
}

#[test]
fn shutdown_instances_must_exist() {
    let text = "[[app]]\nname = \"svc\"\ninstances = 5\n[[shutdown]]\ninstance = \"svc-9\"\nat-s = 1\nstrategy = \"kill-9\"\n";
    assert_eq!(
        err(text),
        "s.toml:5:12: `shutdown[0].instance`: `svc-9` is not an instance of app `svc`, which has \
         5 instances; allowed: svc-0, svc-1, svc-2, svc-3, svc-4"
    );
    let e = err(&text.replace("svc-9", "svx-1"));
    assert!(e.contains("`svx-1` is not an instance of any [[app]] (ids are <app name>-<index>); did you mean `svc-1`?"), "{e}");
    let e = err(&text.replace("svc-9", "svc-01"));
    assert!(
        e.contains("`svc-01` is not an instance of app `svc`"),
        "{e}"
    );
    let e = err(&text.replace("svc-9", "svc"));
    assert!(
        e.contains("`svc` is an app; name one of its instances"),
        "{e}"
    );
    let big = text
        .replace("instances = 5", "instances = 100")
        .replace("svc-9", "svc-100");
    assert!(err(&big).ends_with("allowed: svc-0 .. svc-99"));
    // Names with dashes: the index follows the last one.
    let dashed = text
        .replace("\"svc\"", "\"my-svc\"")
        .replace("svc-9", "my-svc-4");
    assert_eq!(ok(&dashed).shutdowns[0].index, 4);
}

#[test]
fn shutdowns_are_required_keys_once_per_instance_within_the_run() {
    let one = "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 10\nstrategy = \"kill-9\"\n";
    let e = err(&format!("{MINIMAL}{one}{one}"));
    assert!(
        e.starts_with(
            "s.toml:8:12: `shutdown[1].instance`: `svc-0` already shuts down in shutdown[0]"
        ),
        "{e}"
    );
    let e = err(&format!("{MINIMAL}[[shutdown]]\ninstance = \"svc-0\"\n"));
    assert_eq!(
        e,
        "s.toml:3:1: `shutdown[0].at-s` is required; allowed: an integer in 0..=604800 (seconds)"
    );
    let late = "[simulation]\nduration-s = 100\n[[shutdown]]\ninstance = \"svc-0\"\nat-s = 50\nstrategy = \"pause\"\nwait-s = 60\n";
    let e = err(&format!("{MINIMAL}{late}"));
    assert!(e.contains("`shutdown[0].at-s`: the shutdown ends at 110 s (at-s 50 + wait-s 60), not before the end of the trial (simulation.duration-s = 100); allowed: at-s + wait-s below 100"), "{e}");
    let e = err(&format!(
        "{MINIMAL}{}",
        late.replace("50", "100").replace("pause", "kill-9")
    ));
    assert!(
        e.contains("at-s 100 is not before the end of the trial"),
        "{e}"
    );
}

#[test]
fn names_are_unique_and_calls_name_apps() {
    let e = err("[[app]]\nname = \"svc\"\n[[caller]]\nname = \"svc\"\ncalls = \"svc\"\n");
    assert_eq!(
        e,
        "s.toml:4:8: `caller[0].name`: `svc` is already the name of app[0]; allowed: a name no \
         other [[peer]], [[app]], [[caller]] or the server uses"
    );
    let e = err("[[app]]\nname = \"eureka-server\"\n");
    assert!(
        e.contains("is the Eureka server's spring.application.name"),
        "{e}"
    );
    let e = err("[[app]]\nname = \"svc\"\n[[caller]]\nname = \"gw\"\ncalls = [\"svx\"]\n");
    assert!(
        e.contains(
            "`caller[0].calls`: `svx` is not a declared [[app]]; did you mean `svc`?; allowed: svc"
        ),
        "{e}"
    );
    let e = err("[[app]]\nname = \"a b\"\n");
    assert!(e.contains("`a b` is not a valid name"), "{e}");
    let e = err("[[caller]]\nname = \"gw\"\n");
    assert!(
        e.contains("no [[app]]: at least one is required") || e.contains("required"),
        "{e}"
    );
    assert!(err("[simulation]\n").contains("no [[app]]"));
}

#[test]
fn duplicate_keys_in_two_spellings_name_both_places() {
    let e = err(&format!(
        "[server]\neureka.server.response-cache-update-interval-ms = 1\n\
         \"eureka.server.responseCacheUpdateIntervalMs\" = 2\n{MINIMAL}"
    ));
    assert_eq!(
        e,
        "s.toml:3:1: `server.eureka.server.responseCacheUpdateIntervalMs` sets the same property \
         as `server.eureka.server.response-cache-update-interval-ms` at line 2, column 1; set it \
         once"
    );
    let e = err(&format!(
        "[server]\neureka.server.response-cache-update-interval-ms = 1\n\
         eureka.server.response_cache_update_interval_ms = 2\n{MINIMAL}"
    ));
    assert!(e.starts_with("s.toml:3:1: "), "{e}");
    let alias = err(&format!(
        "[server]\neureka.instance.registry.expected-number-of-renews-per-min = 1\n\
         eureka.instance.registry.expected-number-of-clients-sending-renews = 1\n{MINIMAL}"
    ));
    assert!(alias.contains("sets the same property"), "{alias}");
}

/// A shutdown before the instance is sure to serve (server start within the first eviction
/// period + start spread + context start and its spread) is allowed but flagged, on a cold
/// start; a steady fleet serves from time 0.
#[test]
fn an_early_shutdown_is_flagged() {
    let early = |at: u64| {
        parse(&format!(
            "[simulation]\nstart = \"cold\"\n{MINIMAL}[[caller]]\nname = \"gw\"\ncalls = \"svc\"\n\
             [[shutdown]]\ninstance = \"svc-0\"\nat-s = {at}\nstrategy = \"kill-9\"\n"
        ))
        .unwrap()
        .warnings
        .iter()
        .any(|w| w.contains("may not be serving yet"))
    };
    // 60 + 60 + 3 + 30 + 1 = 154 s at defaults.
    assert!(early(153));
    assert!(!early(154));
    let steady = ok(&format!(
        "{MINIMAL}[[caller]]\nname = \"gw\"\ncalls = \"svc\"\n\
         [[shutdown]]\ninstance = \"svc-0\"\nat-s = 0\nstrategy = \"kill-9\"\n"
    ));
    assert!(
        steady
            .warnings
            .iter()
            .all(|w| !w.contains("may not be serving yet"))
    );
}

#[test]
fn warnings_flag_settings_without_effect() {
    let s = ok(&format!(
        "[simulation]\nrelease = \"Dalston\"\n[clients]\neureka.client.should-unregister-on-shutdown = false\n\
         {MINIMAL}[[caller]]\nname = \"gw\"\ncalls = \"svc\"\neureka.client.fetch-registry = false\n\
         [[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"kill-9\"\nwait-s = 5\n"
    ));
    assert_eq!(
        s.warnings,
        [
            "s.toml:7:1: caller `gw` has eureka.client.fetch-registry = false: it can never \
             discover an instance",
            "s.toml:15:1: `shutdown[0].wait-s` has no effect with strategy kill-9: only pause and \
             service-registry wait and then stop",
            "s.toml:4:1: `clients.eureka.client.should-unregister-on-shutdown` has no effect on \
             Eureka 1.6.2: the flag exists from 1.8.2, and before it the cancel is always sent",
        ]
    );
}

#[test]
fn garbage_gives_a_syntax_error_with_line_and_column() {
    let e = err("[simulation]\ntrials = = 3\n");
    assert!(e.starts_with("s.toml:2:"), "{e}");
    assert!(e.contains("invalid TOML"), "{e}");
    let e = err("\u{0}\u{ff}[[[");
    assert!(e.starts_with("s.toml:1:"), "{e}");
}

/// Malformed inputs of every kind are errors, never panics: truncations of a full scenario at
/// every character, and every key of every table given a value of each wrong type.
#[test]
fn malformed_inputs_are_errors_not_panics() {
    for (i, _) in FULL.char_indices() {
        let _ = parse(&FULL[..i]);
        let _ = parse_set(
            &FULL[..i],
            &[
                "app[0].name=x",
                "shutdown.svc-0.at-s=1",
                "=",
                "app[99999999999999999999].x=1",
            ],
        );
    }
    let wrong = [
        "\"\"",
        "-1",
        "1.5e300",
        "[]",
        "[1, \"a\"]",
        "{ a = 1 }",
        "1979-05-27",
        "nan",
        "\"é\"",
        "true",
    ];
    for doc in key_catalogue() {
        let header = match doc.table {
            "app" | "caller" | "shutdown" | "claim" => format!("[[{}]]", doc.table),
            t => format!("[{t}]"),
        };
        let key = doc.key.replace("<app>", "svc");
        for value in wrong {
            let text = format!("{MINIMAL}{header}\n{key} = {value}\n");
            let _ = parse(&text);
            let _ = parse_set(MINIMAL, &[format!("{}.{key}={value}", doc.table).as_str()]);
            let _ = parse_set(
                MINIMAL,
                &[format!("{}[0].{key}={value}", doc.table).as_str()],
            );
        }
    }
    for text in [
        "[[app]]\nname = 1\n",
        "app = 3\n",
        "app = [1]\n",
        "[server]\neureka = 1\n",
        "[app.x]\n",
        "[[server]]\n",
        "x.y.z = 1\n",
    ] {
        assert!(parse(text).is_err(), "{text}");
    }
}

#[test]
fn load_names_the_scenario_after_the_file_and_reports_io_errors() {
    let dir = std::env::temp_dir().join(format!("eureka-sim-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kill-one.toml");
    std::fs::write(&path, MINIMAL).unwrap();
    let s = load(&path, &["app[0].instances=2".to_string()]).unwrap();
    assert_eq!((s.name.as_str(), s.apps[0].instances), ("kill-one", 2));
    let missing = dir.join("missing.toml");
    let e = load(&missing, &[]).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "cannot read scenario file {}: ",
            missing.display()
        )),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `max-duration-s`: by default a day after the last planned action (here the pause's end,
/// 300 + 60 s), never below `duration-s`; written, it must be at least `duration-s`.
#[test]
fn max_duration_defaults_to_a_day_after_the_last_action() {
    let s = ok(FULL);
    assert_eq!(s.simulation.max_duration_ms, 360_000 + 86_400_000);
    let s = parse_set(FULL, &["simulation.max-duration-s=600"]).unwrap();
    assert_eq!(s.simulation.max_duration_ms, 600_000);
    let e = parse_set(FULL, &["simulation.max-duration-s=599"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("simulation.max-duration-s"), "{e}");
    assert!(
        e.contains("599 s is below simulation.duration-s = 600 s"),
        "{e}"
    );
    assert!(e.contains("at least 600"), "{e}");
}

/// A kill -15 after a preStop sleep stops at at-s + prestop-s: that must fall inside the trial
/// (else the trial would end before the stop and report it as never stopped).
#[test]
fn a_prestop_that_ends_after_the_trial_is_refused() {
    let text = |at: u64, prestop: u64| {
        format!(
            "[simulation]\nduration-s = 900\n{MINIMAL}[[shutdown]]\ninstance = \"svc-0\"\n\
             at-s = {at}\nstrategy = \"kill-15\"\nprestop-s = {prestop}\n"
        )
    };
    let e = err(&text(880, 30));
    assert!(e.contains("prestop-s"), "{e}");
    assert!(
        e.contains("the SIGTERM comes at 910 s (at-s 880 + prestop-s 30)"),
        "{e}"
    );
    assert!(e.contains("at-s + prestop-s below 900"), "{e}");
    ok(&text(860, 30));
}

/// A file of many tables and keys parses in time that grows with its size, not its square
/// (fuzzing): each key's line and column, each table's name checked against the
/// others, each peer's name against the instance ids, each process's servers. 2 000 peers and
/// 2 000 apps, with an unknown key each, took more than a minute in the fuzz build before.
#[test]
fn many_tables_parse_in_linear_time() {
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!("[[peer]]\nname = \"p{i}\"\nunknown-{i} = 1\n"));
        text.push_str(&format!("[[app]]\nname = \"a{i}\"\nunknown-{i} = 1\n"));
    }
    let started = std::time::Instant::now();
    let e = parse_str(&text, "t.toml", "t", &[])
        .unwrap_err()
        .to_string();
    let took = started.elapsed();
    assert!(
        e.starts_with("4000 problems:\n  t.toml:3:1: unknown key `peer[0].unknown-0`"),
        "{}",
        &e[..200]
    );
    assert!(took.as_secs() < 5, "{took:?}");
    // Every process lists every peer by name (each host found among the peers, each listed
    // once: n² lookups, not n³).
    let every_peer: Vec<String> = (0..2000).map(|i| format!("p{i}")).collect();
    let names_only = format!(
        "[clients]\neureka.client.service-url.defaultZone = \"{}\"\n{}",
        every_peer.join(","),
        text.replace("unknown-", "# unknown-")
    );
    let started = std::time::Instant::now();
    let s = parse_str(&names_only, "t.toml", "t", &[]).unwrap();
    let took = started.elapsed();
    assert_eq!((s.peers.len(), s.apps.len()), (2000, 2000));
    assert_eq!(s.apps[1999].client.endpoints.len(), 2000);
    assert!(took.as_secs() < 5, "{took:?}");
}

/// Found by fuzzing: thousands of peers for thousands of apps made the parser resolve peers x
/// configurations service-url endpoints (5 000 x 5 000: 470 MB) before the resource budget
/// could refuse the scenario. Beyond `MAX_ENDPOINTS` it is refused at the last `[[peer]]`
/// table with the counts; 3 200 peers for 3 200 apps and the server (3 200 x 6 401 = 20.5 M).
#[test]
fn peers_times_configurations_beyond_the_limit_are_refused() {
    let mut text = String::new();
    for i in 0..3200 {
        text.push_str(&format!("[[peer]]\nname = \"p{i}\"\n"));
    }
    for i in 0..3200 {
        text.push_str(&format!("[[app]]\nname = \"a{i}\"\n"));
    }
    let e = parse_str(&text, "t.toml", "t", &[])
        .unwrap_err()
        .to_string();
    let entries = 3200 * (1 + 3200 + 3200);
    assert!(entries > crate::scenario::parse::MAX_ENDPOINTS);
    // The last [[peer]] table opens line 2 x 3 199 + 1.
    assert!(
        e.starts_with("t.toml:6399:1: 3200 [[peer]] tables for 6401 client configurations"),
        "{e}"
    );
    assert!(
        e.contains(&format!("make {entries} service-url endpoints")),
        "{e}"
    );
    assert!(e.contains("at most 10000000 are allowed"), "{e}");
}
