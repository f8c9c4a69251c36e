//! What `spring-config` must show: a scenario whose server, app and gateway take
//! their settings from YAML and .properties files (camelCase and kebab-case, nested and flat,
//! placeholders, a profile, unrelated keys; the server file is the Spring guides' standalone
//! server, its service URL pointing at itself through placeholders) gives the closed-form law
//! of those settings, and the very trials of the same settings written inline.

use eureka_sim::experiment::run_trials;
use eureka_sim::report::write_trials_csv;
use eureka_sim::scenario::{Metric, load};

use crate::harness::repo;

const SPRING: &str = "scenarios/spring/kill-15-tuned-5s.toml";

/// The CDF of the sum of three independent U(0, 1) (Irwin–Hall, n = 3) at `t`.
fn irwin_hall_3(t: f64) -> f64 {
    match t {
        t if t <= 0.0 => 0.0,
        t if t < 1.0 => t.powi(3) / 6.0,
        t if t < 2.0 => (-2.0 * t.powi(3) + 9.0 * t * t - 9.0 * t + 3.0) / 6.0,
        t if t < 3.0 => 1.0 - (3.0 - t).powi(3) / 6.0,
        _ => 1.0,
    }
}

/// kill -15 with the read-only cache, the fetch and Ribbon at 5 s: the exposure is the
/// read-only tick, the fetch and the Ribbon refresh after the DELETE, each uniform over 5 s
/// (FACTS.md §3, §5, §8), so 3 × U(0, 5 s): mean 7.5 s, sd 2.5 s. One-sample KS against that
/// law at alpha = 0.01 (critical D = 1.63 / sqrt(n)); the mean within 4 standard errors.
#[test]
fn spring_files_give_the_closed_form_law_of_their_settings() {
    let scenario = load(&repo().join(SPRING), &["simulation.trials=400".into()]).unwrap();
    let mut exposure: Vec<f64> = run_trials(&scenario)
        .iter()
        .filter_map(|o| o.shutdowns[0].value(Metric::ExposureMs))
        .map(|ms| ms as f64)
        .collect();
    assert_eq!(exposure.len(), 400, "every trial resolved");
    let n = exposure.len() as f64;
    let mean = exposure.iter().sum::<f64>() / n;
    assert!(
        (mean - 7_500.0).abs() < 4.0 * 2_500.0 / n.sqrt(),
        "mean {mean} ms"
    );
    exposure.sort_by(f64::total_cmp);
    let d = exposure
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = irwin_hall_3(x / 5_000.0);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max);
    assert!(d < 1.63 / n.sqrt(), "KS D = {d:.3}");
}

/// The same settings written inline (the bundled kill-15.toml with `--set`) give the same
/// trials, byte for byte: the files apply exactly as the table's own keys would.
#[test]
fn spring_files_and_inline_settings_give_the_same_trials() {
    let trials = |path: &str, sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let scenario = load(&repo().join(path), &sets).unwrap();
        let mut csv = Vec::new();
        write_trials_csv(&mut csv, &scenario, &run_trials(&scenario)).unwrap();
        csv
    };
    let from_files = trials(SPRING, &[]);
    let inline = trials(
        "scenarios/kill-15.toml",
        &[
            "server.eureka.server.response-cache-update-interval-ms=5000",
            "server.eureka.server.eviction-interval-timer-in-ms=5000",
            "clients.eureka.client.registry-fetch-interval-seconds=5",
            "clients.ribbon.ServerListRefreshInterval=5000",
            "clients.ribbon.ReadTimeout=5000",
        ],
    );
    assert!(from_files == inline, "trials.csv differ");
}

/// `eureka-sim init` from the bundled Spring files and a preset writes a starter that `run`
/// accepts, with the files' and the preset's settings; it never replaces a file unasked, and a
/// bad argument exits 2 with nothing written.
#[test]
fn init_writes_a_starter_from_spring_files_and_a_preset() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let spring = repo().join("scenarios/spring");
    let path = dir.path().join("q.toml");
    let init = |extra: &[&str]| {
        Command::new(crate::harness::BIN)
            .arg("init")
            .arg(&path)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = init(&[
        "--preset",
        "jhipster",
        "--server-config",
        spring
            .join("eureka-server/application.yml")
            .to_str()
            .unwrap(),
        "--app-config",
        spring.join("svc/application.properties").to_str().unwrap(),
        "--caller-config",
        spring.join("gateway/application.yml").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let s = load(&path, &[]).unwrap();
    // The service file's 5 s fetch over the preset's 10 s; the preset's 10 s lease expiry.
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 5);
    assert_eq!(s.apps[0].client.lease_expiration_duration_s, 10);
    assert_eq!(s.server.response_cache_update_interval_ms, 5000);
    let before = std::fs::read(&path).unwrap();
    assert_eq!(init(&[]).status.code(), Some(2));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "replaced without --force"
    );
    let other = dir.path().join("r.toml");
    let out = Command::new(crate::harness::BIN)
        .args(["init", other.to_str().unwrap(), "--preset", "jhipter"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed: netflix-defaults"));
    assert!(!other.exists());
    let listed = Command::new(crate::harness::BIN)
        .arg("presets")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("eureka-1450-observed"));
}

/// The trials.csv of `scenario_text` written beside `files` (name, text) in a fresh folder.
fn trials_of(scenario_text: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("s.toml");
    std::fs::write(&path, scenario_text).unwrap();
    let scenario = load(&path, &[]).unwrap();
    let mut csv = Vec::new();
    write_trials_csv(&mut csv, &scenario, &run_trials(&scenario)).unwrap();
    csv
}

/// A docker-compose service's `environment:` list (EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS=5,
/// EUREKA_INSTANCE_LEASERENEWALINTERVALINSECONDS=5 ...) gives the trials the same values written
/// in YAML give, byte for byte: the bundled compose scenario against its settings as files.
#[test]
fn compose_environment_variables_give_the_trials_of_the_same_yaml() {
    let compose = std::fs::read_to_string(repo().join("scenarios/spring/docker-compose.toml"))
        .unwrap()
        .replace(
            "compose/",
            &format!("{}/", repo().join("scenarios/spring/compose").display()),
        );
    let from_env = trials_of(&compose, &[]);
    let bundled = load(&repo().join("scenarios/spring/docker-compose.toml"), &[]).unwrap();
    let (app, server) = (&bundled.apps[0], &bundled.server);
    assert_eq!(
        (
            app.name.as_str(),
            app.client.registry_fetch_interval_s,
            app.client.lease_renewal_interval_s
        ),
        ("svc", 5, 5)
    );
    assert_eq!(
        (
            server.response_cache_update_interval_ms,
            server.eviction_interval_ms,
            server.client.register_with_eureka
        ),
        (5000, 5000, false)
    );
    assert_eq!(
        bundled.callers[0]
            .client
            .ribbon
            .server_list_refresh_interval_ms,
        5000
    );
    let as_yaml = compose
        .lines()
        .map(|l| match l.split_once('#') {
            Some((head, service)) if head.starts_with("env-file") => {
                format!("spring-config = \"{service}\n").replace("\"\n", ".yml\"")
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let from_yaml = trials_of(
        &as_yaml,
        &[
            (
                "eureka.yml",
                "spring.application.name: eureka-server\neureka:\n  client:\n    register-with-eureka: false\n    fetch-registry: false\n  server:\n    response-cache-update-interval-ms: 5000\n    eviction-interval-timer-in-ms: 5000\n",
            ),
            (
                "svc.yml",
                "spring:\n  application:\n    name: svc\neureka:\n  client:\n    registry-fetch-interval-seconds: 5\n  instance:\n    lease-renewal-interval-in-seconds: 5\n",
            ),
            (
                "gateway.yml",
                "spring.application.name: gateway\neureka.client.registry-fetch-interval-seconds: 5\nribbon:\n  ServerListRefreshInterval: 5000\n  ReadTimeout: 5000\n",
            ),
        ],
    );
    assert!(as_yaml.contains("spring-config = \"svc.yml\""), "{as_yaml}");
    assert!(from_env == from_yaml, "trials.csv differ");
}

/// `instance-id: ${spring.application.name}:${random.value}` imports and runs.
#[test]
fn a_random_instance_id_imports_and_runs() {
    let scenario = load(
        &repo().join("scenarios/spring/random-instance-id.toml"),
        &["simulation.trials=3".into()],
    )
    .unwrap();
    assert_eq!(scenario.apps[0].name, "svc");
    assert_eq!(scenario.apps[0].client.registry_fetch_interval_s, 5);
    let outcomes = run_trials(&scenario);
    assert!(
        outcomes
            .iter()
            .all(|o| o.shutdowns[0].value(Metric::ExposureMs).is_some())
    );
}

/// The HA guide's three-profile server file becomes three `[[peer]]`s with one command, each
/// replicating to the two others its document lists; without `--peer-profiles` the starter's
/// warnings list the three documents not applied (profile, file, line). The bundled
/// ha-peers.toml gives each peer the same settings.
#[test]
fn init_makes_one_peer_per_profile_of_the_ha_server_file() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let file = repo().join("scenarios/spring/ha-peers/eureka-server.yml");
    let init = |name: &str, extra: &[&str]| {
        let path = dir.path().join(name);
        let out = Command::new(crate::harness::BIN)
            .arg("init")
            .arg(&path)
            .args(["--server-config", file.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        (
            load(&path, &[]).unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (s, said) = init("ha.toml", &["--peer-profiles", "peer1,peer2,peer3"]);
    let names: Vec<&str> = s.peers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["peer1", "peer2", "peer3"]);
    for (k, others) in [(0, [1, 2]), (1, [0, 2]), (2, [0, 1])] {
        let mut to = s.peers[k].replicates_to(k);
        to.sort();
        assert_eq!(to, others, "peer{}", k + 1);
        assert_eq!(s.peers[k].server.response_cache_update_interval_ms, 5000);
    }
    for (peer, line) in [("peer1", 12), ("peer2", 23), ("peer3", 34)] {
        assert!(
            said.contains(&format!(
                "[[peer]] {peer} from the `{peer}` document ({} line {line})",
                file.display()
            )),
            "{said}"
        );
    }
    let bundled = load(&repo().join("scenarios/spring/ha-peers.toml"), &[]).unwrap();
    for k in 0..3 {
        assert_eq!(
            bundled.peers[k].replicates_to(k),
            s.peers[k].replicates_to(k)
        );
    }
    let (plain, _) = init("plain.toml", &[]);
    assert!(plain.peers.is_empty());
    for (peer, line) in [("peer1", 12), ("peer2", 23), ("peer3", 34)] {
        let expected = format!(
            "eureka-server.yml:{line} (spring-config of server): the document for profile `{peer}` is not applied"
        );
        assert!(
            plain.warnings.iter().any(|w| w.contains(&expected)),
            "{expected}: {:?}",
            plain.warnings
        );
    }
}

/// `init --config-repo` on the bundled repository proposes its server, app and gateway, each
/// from its files in Spring Cloud Config's order (application, {name}, application-prod,
/// {name}-prod), and every value is the one that order gives: svc fetches every 5 s (svc-prod
/// over application-prod's 10 s over application's 30 s) and renews every 10 s (svc.yml over
/// application's 30 s), the gateway fetches every 10 s (application-prod), the server's
/// read-only cache ticks every 5 s. The bundled config-repo.toml is what it writes.
#[test]
fn init_reads_a_config_repository_in_spring_cloud_configs_order() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo.toml");
    let repo_dir = repo().join("scenarios/spring/config-repo");
    let out = Command::new(crate::harness::BIN)
        .arg("init")
        .arg(&path)
        .args([
            "--config-repo",
            repo_dir.to_str().unwrap(),
            "--profile",
            "prod",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    let d = repo_dir.display();
    assert!(
        said.contains(&format!("[[app]] svc from {d}/application.yml, {d}/svc.yml, {d}/application-prod.yml, {d}/svc-prod.yml")),
        "{said}"
    );
    assert!(said.contains("[server] eureka-server from"), "{said}");
    assert!(said.contains("[[caller]] gateway from"), "{said}");
    for s in [
        load(&path, &[]).unwrap(),
        load(&repo().join("scenarios/spring/config-repo.toml"), &[]).unwrap(),
    ] {
        let (app, caller) = (&s.apps[0], &s.callers[0]);
        assert_eq!(
            (
                app.name.as_str(),
                app.client.registry_fetch_interval_s,
                app.client.lease_renewal_interval_s
            ),
            ("svc", 5, 10)
        );
        assert_eq!(
            (
                caller.name.as_str(),
                caller.client.registry_fetch_interval_s
            ),
            ("gateway", 10)
        );
        assert_eq!(s.server.response_cache_update_interval_ms, 5000);
        assert!(!s.server.client.register_with_eureka);
        assert_eq!(s.simulation.release.train.name(), "2020.0");
    }
}

/// `init --app-config` and `--caller-config` on files without `spring.application.name` write a
/// starter that runs: the app is named `svc` and the caller `gateway`, each with a note saying so
/// (Spring itself would register the app as UNKNOWN, `EurekaInstanceConfigBean`'s default). A
/// Spring Cloud Gateway caller file (`spring.cloud.gateway.routes` with an `lb://` URI, no Ribbon
/// key) makes the starter `release = "2020.0"` with `http-client = "gateway"`, balanced by Spring
/// Cloud LoadBalancer: the oldest train a Gateway on LoadBalancer fits, not Hoxton's Zuul.
#[test]
fn init_names_unnamed_files_and_takes_the_release_from_a_gateway_file() {
    use eureka_sim::scenario::HttpClient;
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.yml");
    std::fs::write(
        &app,
        "eureka:\n  client:\n    registry-fetch-interval-seconds: 7\n",
    )
    .unwrap();
    let gateway = dir.path().join("gateway.yml");
    std::fs::write(
        &gateway,
        "spring:\n  cloud:\n    gateway:\n      routes:\n        - id: svc\n          uri: lb://svc\n          predicates:\n            - Path=/svc/**\n",
    )
    .unwrap();
    let path = dir.path().join("q.toml");
    let out = Command::new(crate::harness::BIN)
        .arg("init")
        .arg(&path)
        .args(["--app-config", app.to_str().unwrap()])
        .args(["--caller-config", gateway.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    for part in [
        "app.yml has no spring.application.name (Spring would register the service as UNKNOWN",
        "the starter names it `svc`",
        "gateway.yml has no spring.application.name; the starter names the caller `gateway`",
        "release = \"2020.0\", from ",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    let s = load(&path, &[]).unwrap();
    assert_eq!(s.apps[0].name, "svc");
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 7);
    assert_eq!(s.callers[0].name, "gateway");
    assert_eq!(s.simulation.release.train.name(), "2020.0");
    assert_eq!(s.callers[0].http_client, HttpClient::Gateway);
    assert_eq!(s.balancer_name(), "LoadBalancer");
}

/// The bundled JHipster layout (scenarios/spring/jhipster/: the JHipster Registry, a gateway on
/// Spring Cloud Gateway and a microservice, each an application.yml with an application-prod.yml
/// beside it, run with SPRING_PROFILES_ACTIVE=prod) imports to the values Spring binds, key by
/// key, each derived from the files by hand:
/// - the registry: its name from spring.application.name; the read-only cache and the evictor
///   at 5 s from application-prod.yml (loaded beside application.yml for `prod`, above it);
///   self-preservation off; its own client neither registers nor fetches, renews every 5 s,
///   expires after 10 s, fetches every 10 s and replicates its InstanceInfo every 10 s;
/// - the service `svc` and the gateway: fetch every 10 s, renew every 5 s, expire after 10 s,
///   replicate every 10 s, the health check on; each one's defaultZone from its
///   application-prod.yml, the password from JHIPSTER_REGISTRY_PASSWORD (the gateway's through
///   `jhipster.registry.password`), so http://admin:admin@jhipster-registry:8761/eureka/, the
///   registry's host; the gateway's instance cache 10 s (`10s`, a Duration);
/// - warnings for the Maven tokens left unfiltered: the registry's `'@project.version@'`
///   (application.yml line 37) and the gateway's `#project.version#`, a YAML comment (line 22).
#[test]
fn the_jhipster_layout_imports_to_the_values_spring_binds() {
    use eureka_sim::scenario::HttpClient;
    let s = load(&repo().join("scenarios/spring/jhipster.toml"), &[]).unwrap();
    let server = &s.server;
    assert_eq!(server.application_name, "jhipster-registry");
    assert_eq!(
        (
            server.response_cache_update_interval_ms,
            server.eviction_interval_ms,
            server.enable_self_preservation
        ),
        (5000, 5000, false)
    );
    let own = &server.client;
    assert_eq!(
        (
            own.register_with_eureka,
            own.fetch_registry,
            own.lease_renewal_interval_s,
            own.lease_expiration_duration_s,
            own.registry_fetch_interval_s,
            own.instance_info_replication_interval_s
        ),
        (false, false, 5, 10, 10, 10)
    );
    // The model keeps a service URL's host: the registry's name.
    let url = vec![(
        "defaultZone".to_string(),
        vec!["jhipster-registry".to_string()],
    )];
    let (app, gateway) = (&s.apps[0], &s.callers[0]);
    assert_eq!(
        (app.name.as_str(), gateway.name.as_str()),
        ("svc", "gateway")
    );
    for c in [&app.client, &gateway.client] {
        assert_eq!(
            (
                c.registry_fetch_interval_s,
                c.lease_renewal_interval_s,
                c.lease_expiration_duration_s,
                c.instance_info_replication_interval_s,
                c.healthcheck_enabled,
                c.register_with_eureka,
                c.fetch_registry
            ),
            (10, 5, 10, 10, true, true, true)
        );
        assert_eq!(c.service_url, url);
    }
    assert_eq!(gateway.http_client, HttpClient::Gateway);
    assert_eq!(gateway.client.load_balancer.cache_ttl_ms, 10_000);
    assert_eq!(s.balancer_name(), "LoadBalancer");
    let registry = repo().join("scenarios/spring/jhipster/registry/application.yml");
    let gateway_file = repo().join("scenarios/spring/jhipster/gateway/application.yml");
    for (file, line, key, token) in [
        (
            registry,
            37,
            "eureka.instance.metadata-map.version",
            "@project.version@",
        ),
        (
            gateway_file,
            22,
            "eureka.instance.metadata-map.version",
            "#project.version#",
        ),
    ] {
        let expected = format!(
            "{}:{line}: `{key}` holds `{token}`, a Maven resource-filtering token",
            file.display()
        );
        assert!(
            s.warnings.iter().any(|w| w.contains(&expected)),
            "{expected}: {:?}",
            s.warnings
        );
    }
}
