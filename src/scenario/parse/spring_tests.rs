//! `spring-config`: a table's Spring files apply as if their modelled keys were written in it.
//! The reference of each test is the same settings written inline in TOML, or the rule of the
//! module docs (Spring's own binding and precedence).

use std::fs;
use std::path::Path;

use super::*;

/// The Spring guides' standalone server (spring-cloud-netflix docs, "Standalone Mode"), as is.
const GUIDE_SERVER: &str = "server:\n  port: 8761\n\neureka:\n  instance:\n    hostname: localhost\n  client:\n    registerWithEureka: false\n    fetchRegistry: false\n    serviceUrl:\n      defaultZone: http://${eureka.instance.hostname}:${server.port}/eureka/\n";

const TAIL: &str = "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"kill-15\"\n";

/// A scenario at `dir/s.toml` with `files` beside it.
fn scenario_in(dir: &Path, toml: &str, files: &[(&str, &str)]) -> Result<Scenario, String> {
    for (name, text) in files {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let source = dir.join("s.toml");
    fs::write(&source, toml).unwrap();
    load(&source, &[]).map_err(|e| e.to_string())
}

fn with(toml: &str, files: &[(&str, &str)]) -> Result<Scenario, String> {
    let dir = tempfile::tempdir().unwrap();
    scenario_in(dir.path(), toml, files)
}

/// Name and warnings aside (the ignored keys are listed), equal scenarios.
fn same(mut a: Scenario, mut b: Scenario) {
    a.warnings.clear();
    b.warnings.clear();
    a.name.clear();
    b.name.clear();
    assert_eq!(a, b);
}

#[test]
fn the_spring_guides_standalone_server_file_works_as_is() {
    let s = with(
        &format!("[server]\nspring-config = \"server.yml\"\n[[app]]\nname = \"svc\"\ninstances = 2\n{TAIL}"),
        &[("server.yml", GUIDE_SERVER)],
    )
    .unwrap();
    let inline = with(
        &format!("[server]\neureka.client.register-with-eureka = false\neureka.client.fetch-registry = false\neureka.client.service-url.defaultZone = \"http://localhost:8761/eureka/\"\n[[app]]\nname = \"svc\"\ninstances = 2\n{TAIL}"),
        &[],
    )
    .unwrap();
    assert!(!s.server.client.register_with_eureka && !s.server.client.fetch_registry);
    let ignored = "server.yml (spring-config of server): 2 key(s) the model does not use, \
                   ignored: eureka.instance.hostname, server.port";
    assert!(
        s.warnings.iter().any(|w| w.ends_with(ignored)),
        "{:?}",
        s.warnings
    );
    same(s, inline);
}

/// YAML (nested, camelCase, a profile) and .properties (flat, kebab-case, placeholders with
/// defaults, unrelated keys) give the scenario their keys written inline would.
#[test]
fn spring_settings_apply_as_if_written_in_the_table() {
    let app = "spring.application.name=svc\nspring.datasource.url=jdbc:h2:mem:x\neureka.client.registry-fetch-interval-seconds=${FETCH:5}\neureka.instance.lease-renewal-interval-in-seconds: 10\neureka.client.fetch-registry=off\n";
    let gateway = "eureka:\n  client:\n    registryFetchIntervalSeconds: 30\nribbon:\n  ServerListRefreshInterval: 30000\nspring:\n  profiles:\n    active: fast\n  cloud.loadbalancer.cache.ttl: 35s\nhystrix.command.default.execution.isolation.thread.timeoutInMilliseconds: 4000\n---\nspring.config.activate.on-profile: fast\neureka.client.registry_fetch_interval_seconds: 5\nribbon.ServerListRefreshInterval: 5000\n";
    let files = format!(
        "[[app]]\nspring-config = \"svc/application.properties\"\ninstances = 3\n[[caller]]\nname = \"gw\"\nspring-config = \"gw.yml\"\ncalls = \"svc\"\n{TAIL}"
    );
    let inline = format!(
        "[[app]]\nname = \"svc\"\ninstances = 3\neureka.client.registry-fetch-interval-seconds = 5\neureka.instance.lease-renewal-interval-in-seconds = 10\neureka.client.fetch-registry = false\n[[caller]]\nname = \"gw\"\ncalls = \"svc\"\neureka.client.registry-fetch-interval-seconds = 5\nribbon.ServerListRefreshInterval = 5000\nspring.cloud.loadbalancer.cache.ttl = 35000\nhystrix-timeout-ms = 4000\n{TAIL}"
    );
    let a = with(
        &files,
        &[("svc/application.properties", app), ("gw.yml", gateway)],
    )
    .unwrap();
    let b = with(&inline, &[]).unwrap();
    assert_eq!(a.apps[0].client.registry_fetch_interval_s, 5);
    same(a, b);
}

/// The table's own keys override its files, a later file overrides an earlier one, and
/// `--set` overrides them all.
#[test]
fn the_scenario_overrides_its_spring_files() {
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = [\"a.yml\", \"b.properties\"]\neureka.instance.lease-renewal-interval-in-seconds = 7\n{TAIL}"
    );
    let files = [
        (
            "a.yml",
            "eureka.client.registry-fetch-interval-seconds: 11\neureka.instance.lease-renewal-interval-in-seconds: 12\neureka.instance.lease-expiration-duration-in-seconds: 40\n",
        ),
        (
            "b.properties",
            "eureka.client.registryFetchIntervalSeconds=13\n",
        ),
    ];
    let s = scenario_in(dir.path(), &toml, &files).unwrap();
    let c = &s.apps[0].client;
    assert_eq!(
        (
            c.registry_fetch_interval_s,
            c.lease_renewal_interval_s,
            c.lease_expiration_duration_s
        ),
        (13, 7, 40)
    );
    let set = ["app[0].eureka.client.registry-fetch-interval-seconds=3".to_string()];
    let s = load(&dir.path().join("s.toml"), &set).unwrap();
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 3);
}

/// Keys the model does not use are listed once per file, grouped by their first two segments;
/// a `<app>.ribbon.*` for an app the scenario lacks and a key of another table are among them.
#[test]
fn unused_keys_are_listed_once_grouped() {
    let file = "spring.datasource.url=x\nspring.datasource.username=y\nmanagement.port=1\nother.ribbon.ReadTimeout=5\neureka.server.enable-self-preservation=false\n";
    let s = with(
        &format!(
            "[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.properties\"\n{TAIL}"
        ),
        &[("svc.properties", file)],
    )
    .unwrap();
    let listed: Vec<&String> = s
        .warnings
        .iter()
        .filter(|w| w.contains("spring-config"))
        .collect();
    assert_eq!(listed.len(), 1, "{:?}", s.warnings);
    assert!(
        listed[0].ends_with(
            "svc.properties (spring-config of app[0]): 5 key(s) the model does not use, ignored: \
             eureka.server.enable-self-preservation, management.port, other.ribbon.ReadTimeout, \
             spring.datasource.* (2)"
        ),
        "{}",
        listed[0]
    );
}

/// A misspelt modelled key, or a Ribbon key in the wrong case (Archaius reads exact names, so
/// the real stack would ignore it), is an error at its line in the Spring file.
#[test]
fn a_near_miss_is_an_error_at_its_line() {
    let toml = format!(
        "[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.properties\"\n[[caller]]\nname = \"gw\"\ncalls = \"svc\"\nspring-config = \"gw.yml\"\n{TAIL}"
    );
    let err = with(
        &toml,
        &[
            (
                "svc.properties",
                "a=1\n  eureka.client.registry-fetch-interval-second=5\n",
            ),
            ("gw.yml", "ribbon:\n  ServerListRefreshInterval: 5000\n"),
        ],
    )
    .unwrap_err();
    assert!(
        err.contains("svc.properties:2:3 (spring-config of "),
        "{err}"
    );
    assert!(
        err.contains("did you mean `app[0].eureka.client.registry-fetch-interval-seconds`?"),
        "{err}"
    );
    assert!(
        err.contains("the real stack would bind nothing from this line and keep the default"),
        "{err}"
    );
    let err = with(
        &toml,
        &[
            ("svc.properties", "a=1\n"),
            ("gw.yml", "ribbon:\n  serverListRefreshInterval: 5000\n"),
        ],
    )
    .unwrap_err();
    assert!(err.contains("gw.yml:2:3"), "{err}");
    assert!(
        err.contains("caller[0].ribbon.ServerListRefreshInterval"),
        "{err}"
    );
    assert!(
        err.contains("Archaius looks Ribbon keys up by their exact name, so the real stack would ignore this one"),
        "{err}"
    );
}

/// A value the key does not take is an error at the Spring file's line, with what is allowed.
#[test]
fn a_bad_value_is_an_error_at_its_line() {
    let err = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}"),
        &[("svc.yml", "eureka:\n  client:\n    fetch-registry: maybe\n")],
    )
    .unwrap_err();
    for part in [
        "svc.yml:3:5",
        "fetch-registry",
        "Spring would fail to start (the binder cannot convert it: BindException)",
        "write an allowed value in the file",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    // A Ribbon key is read through Archaius, which keeps its default instead.
    let err = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\n[[caller]]\nname = \"gw\"\ncalls = \"svc\"\nspring-config = \"gw.yml\"\n{TAIL}"),
        &[("gw.yml", "ribbon:\n  ServerListRefreshInterval: soon\n")],
    )
    .unwrap_err();
    for part in [
        "gw.yml:2:3",
        "ServerListRefreshInterval",
        "Archaius would log the value and keep the key's default",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// A file that cannot be used as a whole names itself and what is wrong.
#[test]
fn files_that_cannot_be_used_say_why() {
    let toml = |file: &str| {
        format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"{file}\"\n{TAIL}")
    };
    let err = with(&toml("missing.yml"), &[]).unwrap_err();
    assert!(err.contains("missing.yml`: cannot read it"), "{err}");
    assert!(err.contains("s.toml:4:17"), "{err}");
    let err = with(&toml("svc.conf"), &[("svc.conf", "a=1\n")]).unwrap_err();
    assert!(
        err.contains("neither YAML (.yml, .yaml) nor properties"),
        "{err}"
    );
    let err = with(&toml("svc.yml"), &[("svc.yml", "a: [1,\n")]).unwrap_err();
    assert!(err.contains("invalid YAML"), "{err}");
    let err = with(
        &toml("svc.yml"),
        &[(
            "svc.yml",
            "eureka:\n  client:\n    registryFetchIntervalSeconds: ${FETCH}\n",
        )],
    )
    .unwrap_err();
    assert!(err.contains("svc.yml:3:5"), "{err}");
    for part in [
        "`eureka.client.registryFetchIntervalSeconds`: could not resolve placeholder `${FETCH}`",
        "Spring would bind the text `${FETCH}` as written",
        "env = { FETCH = \"...\" }",
        "${FETCH:default}",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// `simulation.spring-profiles` chooses the documents instead of the file's own
/// `spring.profiles.active`.
#[test]
fn simulation_spring_profiles_choose_the_documents() {
    let file = "spring.profiles.active: prod\neureka.client.registry-fetch-interval-seconds: 30\n---\nspring.config.activate.on-profile: prod\neureka.client.registry-fetch-interval-seconds: 5\n---\nspring.config.activate.on-profile: dev\neureka.client.registry-fetch-interval-seconds: 1\n";
    let toml = |profiles: &str| {
        format!(
            "[simulation]\n{profiles}[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}"
        )
    };
    let fetch = |profiles: &str| {
        with(&toml(profiles), &[("svc.yml", file)]).unwrap().apps[0]
            .client
            .registry_fetch_interval_s
    };
    assert_eq!(fetch(""), 5);
    assert_eq!(fetch("spring-profiles = \"dev\"\n"), 1);
    // Spring's name for "no profile active".
    assert_eq!(fetch("spring-profiles = \"default\"\n"), 30);
}

/// A scenario read from disk carries its Spring files (a shard's manifest takes them to
/// `merge`, which may run where they are not).
#[test]
fn a_source_carries_its_spring_files() {
    let dir = tempfile::tempdir().unwrap();
    let toml =
        format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}");
    let first = scenario_in(
        dir.path(),
        &toml,
        &[(
            "svc.yml",
            "eureka.client.registry-fetch-interval-seconds: 9\n",
        )],
    )
    .unwrap();
    let source = ScenarioSource::read(&dir.path().join("s.toml")).unwrap();
    fs::remove_file(dir.path().join("svc.yml")).unwrap();
    assert_eq!(source.parse(&[]).unwrap(), first);
}

/// The text check that spares a scenario without Spring files a second parse says "maybe" for
/// every spelling of the key Spring's relaxed binding accepts, quoted and escaped ones included,
/// and "no" only for texts whose keys name no file.
#[test]
fn only_a_text_that_names_no_spring_file_skips_the_second_parse() {
    let naming = [
        "[server]\nspring-config = \"a.yml\"\n",
        "[server]\nSpring_Config = \"a.yml\"\n",
        "[server]\nspringConfig = \"a.yml\"\n",
        "[server]\ns-p_r-ing-con_fig = \"a.yml\"\n",
        "[server]\n'spring-config' = \"a.yml\"\n",
        "[server]\n\"spring\\u002Dconfig\" = \"a.yml\"\n",
        "[server]\n\"\\u0073pring-config\" = \"a.yml\"\n",
    ];
    for text in naming {
        let (raw, _) = raw::read(text, "s.toml").unwrap();
        assert_eq!(spring::named(&raw), ["a.yml"], "{text}");
        assert!(spring::may_name_files(text), "{text}");
    }
    let silent = [
        "",
        "[simulation]\nspring-cloud = \"Hoxton\"\nspring-boot = \"2.3\"\n",
        "[server]\nspring.config = \"a.yml\"\n",
        "[server]\nspring-configs = \"a.yml\"\n",
    ];
    for text in silent {
        let (raw, _) = raw::read(text, "s.toml").unwrap();
        assert!(spring::named(&raw).is_empty(), "{text}");
    }
    assert!(!spring::may_name_files(silent[1]));
    assert!(!spring::may_name_files(silent[2]));
}

/// The files of a `spring-config` list are one environment: bootstrap.yml names the application
/// and activates `prod`, application.yml uses the name and holds the `prod` document.
#[test]
fn the_files_of_a_list_share_placeholders_and_profiles() {
    let s = with(
        &format!("[[app]]\nspring-config = [\"bootstrap.yml\", \"application.yml\"]\ninstances = 2\n{TAIL}"),
        &[
            ("bootstrap.yml", "spring:\n  application:\n    name: svc\n  profiles:\n    active: prod\n"),
            ("application.yml", "eureka.instance.instance-id: ${spring.application.name}:${server.port}\n---\nspring.config.activate.on-profile: prod\neureka.client.registry-fetch-interval-seconds: 5\n"),
        ],
    )
    .unwrap();
    assert_eq!(s.apps[0].name, "svc");
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 5);
}

/// An unresolvable placeholder in a key the model does not use is a warning that names the
/// file, line, key and the ways to give it; the scenario loads.
#[test]
fn an_unresolvable_placeholder_in_an_unused_key_is_a_warning() {
    let s = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}"),
        &[(
            "svc.yml",
            "spring:\n  datasource:\n    password: ${DB_PASSWORD}\n",
        )],
    )
    .unwrap();
    let w = s
        .warnings
        .iter()
        .find(|w| w.contains("DB_PASSWORD"))
        .unwrap_or_else(|| panic!("{:?}", s.warnings));
    for part in [
        "svc.yml:3:5",
        "`spring.datasource.password`",
        "env = { DB_PASSWORD",
        "not an error",
    ] {
        assert!(w.contains(part), "{part}: {w}");
    }
}

/// Spring Boot reads .properties as ISO-8859-1: byte 0xE9 is `é`.
#[test]
fn properties_files_are_latin_1() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("svc.properties"),
        b"spring.application.name=caf\xe9\neureka.client.registry-fetch-interval-seconds=7\n",
    )
    .unwrap();
    let none = BTreeMap::new();
    let files = SpringFiles::beside(&dir.path().join("s.toml").to_string_lossy(), &none);
    assert!(
        files
            .text("svc.properties")
            .unwrap()
            .starts_with("spring.application.name=caf\u{e9}\n")
    );
    fs::write(
        dir.path().join("svc.properties"),
        b"info.owner=Andr\xe9\neureka.client.registry-fetch-interval-seconds=7\n",
    )
    .unwrap();
    let s = scenario_in(
        dir.path(),
        &format!(
            "[[app]]\nname = \"svc\"\nspring-config = \"svc.properties\"\ninstances = 2\n{TAIL}"
        ),
        &[],
    )
    .unwrap();
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 7);
}

/// `spring.config.import` of a local file, relative to the importing file; the imported values
/// override the importer's; `optional:` skips a missing file; a missing required one is an
/// error at the import's line with what Spring does and the fix.
#[test]
fn local_imports_are_read_relative_to_the_importer() {
    let toml =
        format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"conf/app.yml\"\n{TAIL}");
    let s = with(
        &toml,
        &[
            ("conf/app.yml", "eureka.client.registry-fetch-interval-seconds: 30\neureka.instance.lease-renewal-interval-in-seconds: 10\nspring.config.import: optional:file:./eureka.properties, optional:missing.yml\n"),
            ("conf/eureka.properties", "eureka.client.registry-fetch-interval-seconds=5\n"),
        ],
    )
    .unwrap();
    let c = &s.apps[0].client;
    assert_eq!(
        (c.registry_fetch_interval_s, c.lease_renewal_interval_s),
        (5, 10)
    );
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("optional:missing.yml") && w.contains("skipped")),
        "{:?}",
        s.warnings
    );
    let err = with(
        &toml,
        &[(
            "conf/app.yml",
            "a: 1\nspring.config.import: file:gone.yml\n",
        )],
    )
    .unwrap_err();
    for part in [
        "conf/app.yml:2:1",
        "file:gone.yml",
        "Spring would fail to start",
        "optional:file:gone.yml",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// Every profile document that is not applied is listed: its profile, file and line.
#[test]
fn unapplied_profile_documents_are_listed() {
    let server = "spring.application.name: eureka-server\n---\nspring.profiles: peer1\neureka.instance.hostname: peer1\n---\nspring.profiles: peer2\neureka.instance.hostname: peer2\n";
    let s = with(
        &format!("[server]\nspring-config = \"eureka.yml\"\n[[app]]\nname = \"svc\"\ninstances = 2\n{TAIL}"),
        &[("eureka.yml", server)],
    )
    .unwrap();
    for (profile, line) in [("peer1", 3), ("peer2", 6)] {
        let expected = format!(
            "eureka.yml:{line} (spring-config of server): the document for profile `{profile}` is not applied (active profiles: default)"
        );
        assert!(
            s.warnings.iter().any(|w| w.contains(&expected)),
            "{expected}: {:?}",
            s.warnings
        );
    }
}

/// `env` and `env-file` (a docker-compose service) give the settings their YAML form gives.
#[test]
fn environment_variables_set_what_the_yaml_sets() {
    let yaml = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}"),
        &[("svc.yml", "eureka:\n  client:\n    registryFetchIntervalSeconds: 5\n  instance:\n    leaseRenewalIntervalInSeconds: 5\n")],
    )
    .unwrap();
    let compose = "services:\n  svc:\n    image: svc\n    environment:\n      - EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS=5\n      - EUREKA_INSTANCE_LEASERENEWALINTERVALINSECONDS=5\n";
    let env_file = with(
        &format!(
            "[[app]]\nname = \"svc\"\ninstances = 2\nenv-file = \"docker-compose.yml\"\n{TAIL}"
        ),
        &[("docker-compose.yml", compose)],
    )
    .unwrap();
    let inline = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nenv = {{ EUREKA_INSTANCE_LEASERENEWALINTERVALINSECONDS = \"5\", EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS = 5 }}\n{TAIL}"),
        &[],
    )
    .unwrap();
    assert_eq!(yaml.apps[0].client.registry_fetch_interval_s, 5);
    assert_eq!(yaml.apps[0].client.lease_renewal_interval_s, 5);
    same(yaml.clone(), env_file);
    same(yaml, inline);
    // `[simulation] env` reaches every process, the server's own client too.
    let everyone = with(
        &format!("[simulation]\nenv = {{ EUREKA_INSTANCE_LEASERENEWALINTERVALINSECONDS = \"5\" }}\n[[app]]\nname = \"svc\"\ninstances = 2\n{TAIL}"),
        &[],
    )
    .unwrap();
    assert_eq!(everyone.apps[0].client.lease_renewal_interval_s, 5);
    assert_eq!(everyone.server.client.lease_renewal_interval_s, 5);
}

/// A variable that a placeholder of a modelled key needs resolves from `env`; without it the
/// error names the file, line, key and variable, what Spring does and the ways to give it.
#[test]
fn a_placeholder_of_a_modelled_key_takes_a_variable() {
    let file = (
        "svc.yml",
        "eureka.client.registry-fetch-interval-seconds: ${FETCH_S}\n",
    );
    let toml = |env: &str| {
        format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{env}{TAIL}")
    };
    let s = with(&toml("env = { FETCH_S = \"9\" }\n"), &[file]).unwrap();
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 9);
    let err = with(&toml(""), &[file]).unwrap_err();
    for part in [
        "svc.yml:1:1",
        "`eureka.client.registry-fetch-interval-seconds`",
        "`${FETCH_S}`",
        "Spring would bind the text",
        "env = { FETCH_S",
        "env-file",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// The most copied line of the Eureka guides imports: the random instance id is a key the model
/// does not use. A fixed id shared by several instances is a warning (Eureka would keep one).
#[test]
fn a_random_instance_id_imports_and_a_shared_one_is_a_warning() {
    let toml = format!("[[app]]\nspring-config = \"svc.yml\"\ninstances = 3\n{TAIL}");
    let s = with(&toml, &[("svc.yml", "spring.application.name: svc\neureka:\n  instance:\n    instance-id: ${spring.application.name}:${random.value}\n")]).unwrap();
    assert!(
        !s.warnings
            .iter()
            .any(|w| w.contains("distinct") || w.contains("random")),
        "{:?}",
        s.warnings
    );
    let s = with(&toml, &[("svc.yml", "spring.application.name: svc\neureka.instance.instance-id: ${spring.application.name}:${server.port}\n")]).unwrap();
    let w = s.warnings.iter().find(|w| w.contains("distinct")).unwrap();
    assert!(
        w.contains(
            "the 3 instances resolve eureka.instance.instance-id to 1 distinct value(s) (`svc:8080`"
        ),
        "{w}"
    );
}

/// The rig's Ribbon caller file sets the breaker per client (`niws.loadbalancer.svc.*`, what
/// `LoadBalancerStats` reads for the client `svc`): from a caller's Spring file it is the same as
/// written in the `[[caller]]` table; a client the scenario lacks is listed as unused, and a
/// near-miss of a breaker key is an error at its line.
#[test]
fn per_client_breaker_keys_bind_from_a_spring_file() {
    let head =
        "[[app]]\nname = \"svc\"\ninstances = 2\n[[caller]]\nname = \"gw\"\ncalls = \"svc\"\n";
    let props = "niws.loadbalancer.svc.circuitTripTimeoutFactorSeconds=1\nniws.loadbalancer.svc.circuitTripMaxTimeoutSeconds=3\nniws.loadbalancer.other.circuitTripMaxTimeoutSeconds=7\n";
    let from_file = with(
        &format!("{head}spring-config = \"gw.properties\"\n{TAIL}"),
        &[("gw.properties", props)],
    )
    .unwrap();
    let ribbon = &from_file.callers[0].calls[0].ribbon;
    assert_eq!(
        (
            ribbon.circuit_trip_timeout_factor_s,
            ribbon.circuit_trip_max_timeout_s
        ),
        (1, 3)
    );
    assert!(
        from_file.warnings.iter().any(|w| w.ends_with(
            "1 key(s) the model does not use, ignored: \
             niws.loadbalancer.other.circuitTripMaxTimeoutSeconds"
        )),
        "{:?}",
        from_file.warnings
    );
    let inline = with(
        &format!(
            "{head}niws.loadbalancer.svc.circuitTripTimeoutFactorSeconds = 1\n\
             niws.loadbalancer.svc.circuitTripMaxTimeoutSeconds = 3\n{TAIL}"
        ),
        &[],
    )
    .unwrap();
    same(from_file, inline);
    let err = with(
        &format!("{head}spring-config = \"gw.properties\"\n{TAIL}"),
        &[(
            "gw.properties",
            "niws.loadbalancer.svc.circuitTripTimeoutFactorSecond=1\n",
        )],
    )
    .unwrap_err();
    assert!(err.contains("gw.properties:1:1"), "{err}");
    assert!(
        err.contains(
            "did you mean `caller[0].niws.loadbalancer.svc.circuitTripTimeoutFactorSeconds`?"
        ),
        "{err}"
    );
}

/// Spring Cloud Netflix's `InstanceRegistryProperties` takes the legacy
/// `@Value("${eureka.server.defaultOpenForTrafficCount:1}")` by field injection, and its
/// `eureka.instance.registry` binding runs after it: a Spring file with both names gets the
/// modern one's value in either order. The legacy name alone is the setting; another spelling
/// of it is no name `@Value` reads, so a server ignores it, and so does the model.
#[test]
fn the_legacy_open_for_traffic_count_yields_to_the_modern_key_in_spring_files() {
    let toml =
        format!("[server]\nspring-config = \"server.properties\"\n[[app]]\nname = \"svc\"\n{TAIL}");
    let count = |props: &str| {
        with(&toml, &[("server.properties", props)])
            .unwrap()
            .server
            .default_open_for_traffic_count
    };
    let legacy = "eureka.server.defaultOpenForTrafficCount=0\n";
    let modern = "eureka.instance.registry.default-open-for-traffic-count=3\n";
    assert_eq!(count(legacy), 0);
    assert_eq!(count(&format!("{legacy}{modern}")), 3);
    assert_eq!(count(&format!("{modern}{legacy}")), 3);
    assert_eq!(count("eureka.server.default-open-for-traffic-count=0\n"), 1);
}

/// A `${random.*}` value in a key the model binds is an error at its line: Spring draws it anew
/// for each instance (`RandomValuePropertySource`), while the model gives every instance of a
/// table one value; the message names the file, line, key and the fix.
#[test]
fn a_random_value_in_a_modelled_key_is_an_error_at_its_line() {
    let err = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}"),
        &[(
            "svc.yml",
            "eureka:\n  client:\n    registry-fetch-interval-seconds: ${random.int[5,30]}\n",
        )],
    )
    .unwrap_err();
    for part in [
        "svc.yml:3:5",
        "eureka.client.registry-fetch-interval-seconds` takes `${random.int[5,30]}`",
        "Spring draws anew for each instance (RandomValuePropertySource)",
        "write a fixed value",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// Placeholders in `spring.config.import` resolve as Spring resolves them while it reads imports
/// (`ConfigDataEnvironmentContributorPlaceholdersResolver`): from the variables given and from
/// the files read before. One nothing supplies stays as written, so the location names no
/// file: an optional import is skipped with a note, a required one is an error at its line.
#[test]
fn placeholders_in_import_locations_resolve_from_the_variables_and_earlier_files() {
    let extra = (
        "conf/extra/eureka.yml",
        "eureka.client.registry-fetch-interval-seconds: 5\n",
    );
    let app = "eureka.client.registry-fetch-interval-seconds: 30\nspring.config.import: optional:file:${CONFIG_DIR}/eureka.yml\n";
    let toml = |rest: &str| format!("[[app]]\nname = \"svc\"\ninstances = 2\n{rest}\n{TAIL}");
    let fetch = |s: Scenario| s.apps[0].client.registry_fetch_interval_s;
    let by_property = app.replace("${CONFIG_DIR}", "${config.dir}");
    let required = app.replace("optional:", "");
    // From a variable: CONFIG_DIR = extra, relative to conf/app.yml.
    let s = with(
        &toml("spring-config = \"conf/app.yml\"\nenv = { CONFIG_DIR = \"extra\" }"),
        &[("conf/app.yml", app), extra],
    )
    .unwrap();
    assert_eq!(fetch(s), 5);
    // From an earlier file of the list.
    let s = with(
        &toml("spring-config = [\"base.yml\", \"conf/app.yml\"]"),
        &[
            ("base.yml", "config.dir: extra\n"),
            ("conf/app.yml", by_property.as_str()),
            extra,
        ],
    )
    .unwrap();
    assert_eq!(fetch(s), 5);
    // Unresolved and optional: skipped with a note naming the file, line and placeholder.
    let s = with(
        &toml("spring-config = \"conf/app.yml\""),
        &[("conf/app.yml", app), extra],
    )
    .unwrap();
    assert_eq!(fetch(s.clone()), 30);
    assert!(
        s.warnings.iter().any(|w| w.contains(
            "conf/app.yml:2: spring.config.import `optional:file:${CONFIG_DIR}/eureka.yml`: "
        ) && w.contains("could not resolve placeholder `${CONFIG_DIR}`")
            && w.contains("skips the optional import")),
        "{:?}",
        s.warnings
    );
    // Unresolved and required: an error with what Spring does and the ways to supply it.
    let err = with(
        &toml("spring-config = \"conf/app.yml\""),
        &[("conf/app.yml", required.as_str()), extra],
    )
    .unwrap_err();
    for part in [
        "conf/app.yml:2:1",
        "spring.config.import `file:${CONFIG_DIR}/eureka.yml`",
        "fails to start (ConfigDataResourceNotFoundException)",
        "env = { CONFIG_DIR = \"...\" }",
        "`optional:`",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// `StandardConfigDataLocationResolver#resolveProfileSpecific`: a listed `application.yml`
/// brings `application-<profile>.yml` from its folder for each accepted profile, ranking above
/// the file (its own `prod` document too) and below the next file of the list; with two
/// profiles the last ranks highest; with none active, `application-default.yml`.
#[test]
fn profile_specific_files_beside_a_listed_file_apply() {
    let app = "spring.profiles.active: prod\neureka.client.registry-fetch-interval-seconds: 30\neureka.instance.lease-renewal-interval-in-seconds: 30\n---\nspring.config.activate.on-profile: prod\neureka.client.registry-fetch-interval-seconds: 6\n";
    let files = [
        ("svc/application.yml", app),
        (
            "svc/application-prod.yml",
            "eureka.client.registry-fetch-interval-seconds: 5\n",
        ),
        (
            "svc/application-eu.yml",
            "eureka.client.registry-fetch-interval-seconds: 7\n",
        ),
        (
            "svc/application-default.yml",
            "eureka.instance.lease-renewal-interval-in-seconds: 10\n",
        ),
        (
            "svc/extra.yml",
            "eureka.client.registry-fetch-interval-seconds: 9\n",
        ),
    ];
    let intervals = |rest: &str| {
        let s = with(
            &format!("{rest}[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc/application.yml\"\n{TAIL}"),
            &files,
        )
        .unwrap();
        let c = &s.apps[0].client;
        (c.registry_fetch_interval_s, c.lease_renewal_interval_s)
    };
    // application-prod.yml's 5 s over the file's prod document's 6 s; the 30 s renewal stays.
    assert_eq!(intervals(""), (5, 30));
    // prod then eu: eu's 7 s, the last profile ranking highest.
    assert_eq!(
        intervals("[simulation]\nspring-profiles = \"prod,eu\"\n"),
        (7, 30)
    );
    // No profile active: `default` is, and application-default.yml renews every 10 s.
    assert_eq!(
        intervals("[simulation]\nspring-profiles = \"default\"\n"),
        (30, 10)
    );
    // The next file of the list ranks above the first file's profile-specific file.
    let s = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = [\"svc/application.yml\", \"svc/extra.yml\"]\n{TAIL}"),
        &files,
    )
    .unwrap();
    assert_eq!(s.apps[0].client.registry_fetch_interval_s, 9);
}

/// A malformed profile expression and a circular placeholder in a modelled key are errors at
/// their line in the Spring file, each with what Spring does (`Profiles#of` refuses the
/// expression, `PropertyPlaceholderHelper` the cycle, both at start) and the fix.
#[test]
fn a_bad_profile_expression_and_a_placeholder_cycle_are_errors_at_their_line() {
    let toml =
        format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"svc.yml\"\n{TAIL}");
    let err = with(
        &toml,
        &[(
            "svc.yml",
            "a: 1\n---\nspring.config.activate.on-profile: a & b | c\neureka.client.registry-fetch-interval-seconds: 5\n",
        )],
    )
    .unwrap_err();
    for part in [
        "svc.yml:3:1",
        "`spring.config.activate.on-profile`: profile expression",
        "`&` and `|` are mixed without parentheses",
        "Spring would refuse to start (Profiles#of)",
        "allowed: profile names with `!`, `&`, `|` and parentheses",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    let err = with(
        &toml,
        &[(
            "svc.yml",
            "eureka.client.registry-fetch-interval-seconds: ${fetch}\nfetch: ${eureka.client.registry-fetch-interval-seconds}\n",
        )],
    )
    .unwrap_err();
    for part in [
        "svc.yml:1:1",
        "`eureka.client.registry-fetch-interval-seconds`: circular placeholder reference",
        "Spring would fail to start (PropertyPlaceholderHelper)",
        "break the cycle",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// A folder location imports the `application` files in it (`.yaml`, `.yml`, then
/// `.properties`, which takes precedence in the same location), and an extension hint imports
/// a file without a known extension in the format it names (`optional:file:.env[.properties]`),
/// as `StandardConfigDataLocationResolver` resolves them.
#[test]
fn folder_imports_and_extension_hints_are_read() {
    let s = with(
        &format!("[[app]]\nname = \"svc\"\ninstances = 2\nspring-config = \"conf/app.yml\"\n{TAIL}"),
        &[
            (
                "conf/app.yml",
                "eureka.client.registry-fetch-interval-seconds: 30\neureka.instance.lease-renewal-interval-in-seconds: ${RENEW:30}\nspring.config.import: optional:file:./conf.d/, optional:file:./.env[.properties], optional:file:./none.d/\n",
            ),
            ("conf/conf.d/application.yml", "eureka.client.registry-fetch-interval-seconds: 7\n"),
            ("conf/conf.d/application.properties", "eureka.client.registry-fetch-interval-seconds=8\n"),
            ("conf/.env", "RENEW=12\n"),
        ],
    )
    .unwrap();
    let c = &s.apps[0].client;
    assert_eq!(
        (c.registry_fetch_interval_s, c.lease_renewal_interval_s),
        (8, 12)
    );
    assert!(
        s.warnings.iter().any(|w| w.contains(
            "`optional:file:./none.d/`: no application.properties, .yml or .yaml in that folder"
        )),
        "{:?}",
        s.warnings
    );
}
