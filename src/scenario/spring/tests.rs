//! Spring files read as Spring Boot reads them: each expectation is the property Spring's
//! `Environment` holds for the same file (the rules in the module docs, with their classes).

use super::*;

fn props(text: &str, format: Format, profiles: Option<&[String]>) -> Vec<(String, String)> {
    read(text, format, profiles)
        .unwrap_or_else(|e| panic!("{e:?}"))
        .into_iter()
        .map(|p| (p.name, p.value))
        .collect()
}

fn yaml(text: &str) -> Vec<(String, String)> {
    props(text, Format::Yaml, None)
}

fn properties(text: &str) -> Vec<(String, String)> {
    props(text, Format::Properties, None)
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `java.util.Properties#load`: `=`, `:` and blanks separate; comments; a continued line
/// loses the next line's leading blanks; escapes.
#[test]
fn properties_follow_java_util_properties() {
    let text =
        "# a comment\n! another\n  a.b = 1\nc:2\nd 3\ne=x\\\n    y\nf=tab\\there\\u0041\ng\\:h=i\n";
    assert_eq!(
        properties(text),
        pairs(&[
            ("a.b", "1"),
            ("c", "2"),
            ("d", "3"),
            ("e", "xy"),
            ("f", "tab\there\u{41}"),
            ("g:h", "i"),
        ])
    );
}

/// Boot 2.4+ multi-document .properties: `#---` starts a document; a profile document applies
/// only with its profile.
#[test]
fn properties_documents_split_at_hash_dashes() {
    let text = "a=1\n#---\nspring.config.activate.on-profile=prod\na=2\nb=3\n";
    assert_eq!(properties(text), pairs(&[("a", "1")]));
    let prod = ["prod".to_string()];
    assert_eq!(
        props(text, Format::Properties, Some(&prod)),
        pairs(&[("a", "2"), ("b", "3")])
    );
}

/// `YamlProcessor#buildFlattenedMap`: nested keys joined by dots, dotted keys as written,
/// sequences indexed, `[bracketed]` keys appended, null as "".
#[test]
fn yaml_flattens_as_spring_does() {
    let text = "a:\n  b:\n    c: 1\n  d.e: two\nlist:\n  - x\n  - y\nmap:\n  \"[k.1]\": v\nnothing:\nquoted: \"~\"\n";
    assert_eq!(
        yaml(text),
        pairs(&[
            ("a.b.c", "1"),
            ("a.d.e", "two"),
            ("list[0]", "x"),
            ("list[1]", "y"),
            ("map[k.1]", "v"),
            ("nothing", ""),
            ("quoted", "~"),
        ])
    );
}

/// Anchors, aliases and `<<` merge keys (SnakeYAML's YAML 1.1 merge): the keys written beside
/// the merge win.
#[test]
fn yaml_aliases_and_merge_keys_expand() {
    let text = "base: &b\n  x: 1\n  y: 2\nchild:\n  <<: *b\n  y: 3\ncopy: *b\n";
    assert_eq!(
        yaml(text),
        pairs(&[
            ("base.x", "1"),
            ("base.y", "2"),
            ("child.x", "1"),
            ("child.y", "3"),
            ("copy.x", "1"),
            ("copy.y", "2"),
        ])
    );
}

/// An alias bomb is refused instead of expanded.
#[test]
fn yaml_alias_bombs_are_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let err = read(&text, Format::Yaml, None).unwrap_err();
    assert!(err.message.contains("more than"), "{err:?}");
}

#[test]
fn yaml_errors_say_where() {
    let err = read("a:\n  b: 1\n c: [\n", Format::Yaml, None).unwrap_err();
    assert!(err.message.starts_with("invalid YAML"), "{err:?}");
    assert!(err.line >= 2, "{err:?}");
}

/// Documents apply in order with their profile conditions; without `simulation.spring-profiles`
/// the file's own `spring.profiles.active` (and `include`) choose; the legacy `spring.profiles`
/// condition works as well.
#[test]
fn profiles_choose_documents() {
    let text = "spring.profiles.active: prod\na: 1\n---\nspring:\n  config:\n    activate:\n      on-profile: prod\na: 2\n---\nspring.profiles: dev\na: 3\n";
    assert_eq!(yaml(text), pairs(&[("a", "2")]));
    let dev = ["dev".to_string()];
    assert_eq!(props(text, Format::Yaml, Some(&dev)), pairs(&[("a", "3")]));
    let none: [String; 0] = [];
    assert_eq!(props(text, Format::Yaml, Some(&none)), pairs(&[("a", "1")]));
}

/// `Profiles#of` expressions, with a comma list meaning any.
#[test]
fn profile_expressions_follow_spring() {
    let active = ["a".to_string(), "c".to_string()];
    let m = |e: &str| profiles::matches(e, &active);
    assert_eq!(m("a"), Ok(true));
    assert_eq!(m("!a"), Ok(false));
    assert_eq!(m("a & b"), Ok(false));
    assert_eq!(m("a | b"), Ok(true));
    assert_eq!(m("(a | b) & c"), Ok(true));
    assert_eq!(m("b, c"), Ok(true));
    assert_eq!(m("!(a & c)"), Ok(false));
    assert!(m("a & b | c").is_err());
    assert!(m("(a").is_err());
}

/// Placeholders resolve against the file's properties by relaxed name, nested defaults too; the
/// later document's value of a property wins whatever its spelling.
#[test]
fn placeholders_resolve_within_the_file() {
    let text = "eureka:\n  instance:\n    hostName: h\nserver.port: 8761\nurl: http://${eureka.instance.host-name}:${server.port}/${ctx:${missing:eureka}}/\nbase: ${url}x\n";
    let got = yaml(text);
    assert_eq!(got[2], ("url".into(), "http://h:8761/eureka/".into()));
    assert_eq!(got[3], ("base".into(), "http://h:8761/eureka/x".into()));
    let text = "a.b-c: 1\n---\na.bC: 2\nd: ${a.b_c}\n";
    assert_eq!(yaml(text), pairs(&[("a.bC", "2"), ("d", "2")]));
}

#[test]
fn placeholders_that_cannot_resolve_are_errors() {
    let err = read("a: ${NOPE}\n", Format::Yaml, None).unwrap_err();
    assert_eq!(err.file, "application");
    assert!(
        err.message
            .contains("could not resolve placeholder `${NOPE}`"),
        "{err:?}"
    );
    assert_eq!((err.line, err.column), (1, 1));
    let err = read("a: ${b}\nb: ${a}\n", Format::Yaml, None).unwrap_err();
    assert!(err.message.contains("circular"), "{err:?}");
    let err = read("a: ${b\n", Format::Yaml, None).unwrap_err();
    assert!(err.message.contains("without its"), "{err:?}");
}

/// Placeholders that each use the one before twice double at every line: 30 lines would
/// expand to 10 GB (or, with empty values, to 2^30 lookups). Refused at the line whose value
/// passes the file's budget, with what is wrong and what is allowed.
#[test]
fn placeholder_bombs_are_refused() {
    for first in ["xxxxxxxxxx", ""] {
        let mut text = format!("p0={first}\n");
        for i in 1..=30 {
            text.push_str(&format!("p{i}=${{p{p}}}${{p{p}}}\n", p = i - 1));
        }
        let err = read(&text, Format::Properties, None).unwrap_err();
        assert!(
            err.message.contains("expand to more than 16 MiB") && err.message.contains("allowed"),
            "{err:?}"
        );
        assert!(err.line > 1 && err.line <= 31, "{err:?}");
    }
    // Doubling that stays within the budget resolves: 2^10 copies.
    let mut text = String::from("p0=x\n");
    for i in 1..=10 {
        text.push_str(&format!("p{i}=${{p{p}}}${{p{p}}}\n", p = i - 1));
    }
    let got = properties(&text);
    assert_eq!(got[10].1, "x".repeat(1024));
}

/// A file of many keys, most of them placeholders of the first, reads in time that grows with
/// its size, not its square (50 000 keys took more than 30 s before).
#[test]
fn many_properties_read_in_linear_time() {
    let mut text = String::from("base=1\n");
    for i in 0..50_000 {
        text.push_str(&format!("eureka.client.key{i}=${{base}}\n"));
    }
    let started = std::time::Instant::now();
    let got = properties(&text);
    let took = started.elapsed();
    assert_eq!(got.len(), 50_001);
    assert_eq!(got[50_000].1, "1");
    assert!(took.as_secs() < 5, "{took:?}");
}

/// `DurationStyle#detectAndParse` with milliseconds as the default unit.
#[test]
fn durations_read_as_spring_reads_them() {
    assert_eq!(duration_ms("500"), Some(500));
    assert_eq!(duration_ms("500ms"), Some(500));
    assert_eq!(duration_ms("35s"), Some(35_000));
    assert_eq!(duration_ms("2m"), Some(120_000));
    assert_eq!(duration_ms("1h"), Some(3_600_000));
    assert_eq!(duration_ms("1d"), Some(86_400_000));
    assert_eq!(duration_ms("PT30S"), Some(30_000));
    assert_eq!(duration_ms("PT1M30.5S"), Some(90_500));
    assert_eq!(duration_ms("P1DT1H"), Some(90_000_000));
    assert_eq!(duration_ms("1500us"), Some(1));
    assert_eq!(duration_ms("thirty"), None);
    assert_eq!(duration_ms("PT"), None);
    assert_eq!(duration_ms("99999999999999999999d"), None);
}

/// `StringToBooleanConverter`.
#[test]
fn booleans_read_as_spring_reads_them() {
    for t in ["true", "ON", "yes", "1", " True "] {
        assert_eq!(spring_boolean(t), Some(true), "{t}");
    }
    for t in ["false", "off", "No", "0"] {
        assert_eq!(spring_boolean(t), Some(false), "{t}");
    }
    assert_eq!(spring_boolean("maybe"), None);
}

/// One environment of several files (a `spring-config` list), with variables and profiles.
fn env_of(
    files: &[(&str, &str)],
    env: &[(&str, &str)],
    profiles: Option<&[&str]>,
) -> Result<Environment, SpringProblem> {
    let files = files
        .iter()
        .map(|(name, text)| SpringFile {
            display: name.to_string(),
            written: name.to_string(),
            format: Format::of(name).unwrap(),
            text: text.to_string(),
        })
        .collect();
    let env = env
        .iter()
        .enumerate()
        .map(|(i, (name, value))| EnvVar {
            name: name.to_string(),
            value: value.to_string(),
            file: ".env".to_string(),
            line: i + 1,
            column: 1,
        })
        .collect();
    let request = Request {
        files,
        env,
        profiles: profiles.map(|p| p.iter().map(|s| s.to_string()).collect()),
        runtime: Runtime::for_tests(),
        import: &|_, _, _, _| Err("no such file".to_string()),
    };
    environment(&request)
}

fn bound(env: &Environment) -> Vec<(String, String)> {
    env.properties(0)
        .unwrap()
        .into_iter()
        .map(|p| (p.name, p.value))
        .collect()
}

/// `spring.profiles.active` written as a YAML list activates each item (the binder reads
/// `active[0]`, `active[1]` as the list `prod, eu`); both profile documents apply.
#[test]
fn active_profiles_written_as_a_yaml_list_apply() {
    let text = "spring:\n  profiles:\n    active:\n      - prod\n      - eu\na: 1\n---\nspring.config.activate.on-profile: prod\na: 2\n---\nspring.config.activate.on-profile: eu\nb: 3\n---\nspring.config.activate.on-profile: dev\na: 4\n";
    assert_eq!(yaml(text), pairs(&[("a", "2"), ("b", "3")]));
}

/// With no profile active Spring activates `default` (`AbstractEnvironment#getDefaultProfiles`),
/// so a `spring.profiles: default` document applies; once another profile is active it does not.
#[test]
fn the_default_profile_document_applies_when_no_profile_is_active() {
    let text = "a: 1\n---\nspring.profiles: default\na: 2\n---\nspring.profiles: prod\na: 3\n";
    assert_eq!(yaml(text), pairs(&[("a", "2")]));
    let prod = ["prod".to_string()];
    assert_eq!(props(text, Format::Yaml, Some(&prod)), pairs(&[("a", "3")]));
    // spring.profiles.default names another default.
    let text = "spring.profiles.default: local\na: 1\n---\nspring.profiles: local\na: 2\n";
    assert_eq!(yaml(text), pairs(&[("a", "2")]));
}

/// `${spring.profiles.active}` is a property like any other: the file's value, or the command
/// line's (`simulation.spring-profiles`), which ranks above it.
#[test]
fn the_active_profiles_resolve_as_a_placeholder() {
    let text = "spring.profiles.active: prod\nx: env-${spring.profiles.active}\n";
    assert_eq!(yaml(text), pairs(&[("x", "env-prod")]));
    let dev = ["dev".to_string(), "eu".to_string()];
    assert_eq!(
        props(text, Format::Yaml, Some(&dev)),
        pairs(&[("x", "env-dev,eu")])
    );
}

/// The files of one list are one environment: a name from the first file resolves in the
/// second, and `spring.profiles.active` in the first activates the second's documents.
#[test]
fn placeholders_and_profiles_reach_across_the_files_of_a_list() {
    let env = env_of(
        &[
            ("bootstrap.yml", "spring:\n  application:\n    name: svc\n  profiles:\n    active: prod\n"),
            ("application.yml", "eureka.instance.instance-id: ${spring.application.name}:7\n---\nspring.config.activate.on-profile: prod\neureka.client.registry-fetch-interval-seconds: 5\n"),
        ],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(
        bound(&env),
        pairs(&[
            ("spring.application.name", "svc"),
            ("eureka.instance.instance-id", "svc:7"),
            ("eureka.client.registry-fetch-interval-seconds", "5"),
        ])
    );
}

/// A placeholder nothing supplies keeps its text, with why, instead of failing the file: the
/// binder ignores it (`ignoreUnresolvablePlaceholders`), so only a key that is bound fails.
#[test]
fn an_unresolvable_placeholder_is_kept_with_why() {
    let env = env_of(
        &[(
            "application.yml",
            "spring.datasource.password: ${DB_PASSWORD}\nb: ${DB_USER:sa}\n",
        )],
        &[],
        None,
    )
    .unwrap();
    let got = env.properties(0).unwrap();
    assert_eq!(got[0].value, "${DB_PASSWORD}");
    let why = got[0].refusal.as_deref().unwrap();
    assert!(why.contains("env = { DB_PASSWORD = \"...\" }"), "{why}");
    assert_eq!(
        (got[1].value.as_str(), got[1].refusal.as_deref()),
        ("sa", None)
    );
}

/// `on-cloud-platform` documents apply only on that platform: none in a simulation unless
/// `spring.main.cloud-platform` enforces one; `on-profile` may be a YAML list (any of them).
#[test]
fn cloud_platform_and_profile_list_conditions() {
    let text = "a: 1\n---\nspring.config.activate.on-cloud-platform: kubernetes\na: 2\n---\nspring:\n  config:\n    activate:\n      on-profile:\n        - x\n        - y\nb: 3\n";
    let files = [("application.yml", text)];
    let plain = env_of(&files, &[], None).unwrap();
    assert_eq!(bound(&plain), pairs(&[("a", "1")]));
    let skipped: Vec<(&str, &str, usize)> = plain
        .skipped
        .iter()
        .map(|s| (s.kind, s.condition.as_str(), s.line))
        .collect();
    assert_eq!(
        skipped,
        [
            ("on-cloud-platform", "kubernetes", 3),
            ("on-profile", "x,y", 10)
        ]
    );
    let k8s = env_of(
        &files,
        &[("SPRING_MAIN_CLOUDPLATFORM", "kubernetes")],
        Some(&["y"]),
    )
    .unwrap();
    assert_eq!(
        bound(&k8s),
        pairs(&[
            ("a", "2"),
            ("b", "3"),
            ("spring.main.cloudplatform", "kubernetes")
        ])
    );
}

/// `spring.profiles.group.<name>` (a string or a list) adds its members after the profile,
/// groups of members too (`Profiles#expandProfiles`).
#[test]
fn profile_groups_expand() {
    let text = "spring.profiles.active: prod\nspring.profiles.group.prod: proddb, prodmq\nspring.profiles.group:\n  prodmq:\n    - mq-eu\n---\nspring.config.activate.on-profile: proddb\na: db\n---\nspring.config.activate.on-profile: mq-eu\nb: eu\n";
    let env = env_of(&[("application.yml", text)], &[], None).unwrap();
    assert_eq!(env.active_profiles, ["prod", "proddb", "prodmq", "mq-eu"]);
    assert_eq!(bound(&env), pairs(&[("a", "db"), ("b", "eu")]));
}

/// Variables rank above every file and bind by relaxed name; a variable's value replaces a
/// file's key of the same relaxed name, which keeps its spelling; one that names no file key is
/// added as `SystemEnvironmentPropertyMapper` names it; `SPRING_PROFILES_ACTIVE` activates.
#[test]
fn environment_variables_rank_above_the_files() {
    let text = "eureka:\n  client:\n    registryFetchIntervalSeconds: 30\n---\nspring.config.activate.on-profile: fast\na: 1\n";
    let env = env_of(
        &[("application.yml", text)],
        &[
            ("EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS", "5"),
            ("EUREKA_INSTANCE_LEASERENEWALINTERVALINSECONDS", "10"),
            ("SPRING_PROFILES_ACTIVE", "fast"),
            ("PATH", "/usr/bin"),
        ],
        None,
    )
    .unwrap();
    assert_eq!(
        bound(&env),
        pairs(&[
            ("eureka.client.registryFetchIntervalSeconds", "5"),
            ("a", "1"),
            ("eureka.instance.leaserenewalintervalinseconds", "10"),
        ])
    );
}

/// The run-time sources: `random.*` per instance (distinct between instances, the same for the
/// same seed), the host's name and address, `server.port`'s default.
#[test]
fn runtime_sources_resolve_per_instance() {
    let text = "spring.application.name: svc\neureka.instance.instance-id: ${spring.application.name}:${random.value}\nhost: ${spring.cloud.client.hostname}/${spring.cloud.client.ip-address}:${server.port}\n";
    let env = env_of(&[("application.yml", text)], &[], None).unwrap();
    let ids: Vec<String> = (0..20)
        .map(|k| {
            env.value("eureka.instance.instance-id", k)
                .unwrap()
                .unwrap()
        })
        .collect();
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 20);
    assert!(
        ids.iter()
            .all(|id| id.starts_with("svc:") && id.len() == 4 + 32)
    );
    let again = env_of(&[("application.yml", text)], &[], None).unwrap();
    assert_eq!(
        again
            .value("eureka.instance.instance-id", 3)
            .unwrap()
            .unwrap(),
        ids[3]
    );
    assert_eq!(
        env.value("host", 2).unwrap().unwrap(),
        "svc-2/10.0.0.3:8080"
    );
    // The per-instance value is refused only for binding.
    let p = env.properties(0).unwrap();
    assert!(
        p[1].refusal
            .as_deref()
            .unwrap()
            .contains("draws anew for each instance")
    );
}

/// A list is bound from one source (`IndexedElementsBinder#bindIndexed` stops at the first
/// source that has it): a later document's or file's list, indexed, nested or written as one
/// comma-separated value, replaces the earlier one whole, and so do the variables' items; a map
/// merges key by key (`MapBinder`).
#[test]
fn a_list_is_taken_whole_from_one_source_and_a_map_merges_by_key() {
    let got =
        |files: &[(&str, &str)], env: &[(&str, &str)]| bound(&env_of(files, env, None).unwrap());
    // Three items, then one: the one alone (not [w, y, z]).
    assert_eq!(
        got(
            &[(
                "application.yml",
                "a:\n  - x\n  - y\n  - z\n---\na:\n  - w\n"
            )],
            &[]
        ),
        pairs(&[("a[0]", "w")])
    );
    // A list of objects: routes[1] does not survive from the first file.
    assert_eq!(
        got(
            &[
                (
                    "a.yml",
                    "routes:\n  - id: r1\n    uri: lb://one\n  - id: r2\n    uri: lb://two\n"
                ),
                ("b.yml", "routes:\n  - id: r3\n"),
            ],
            &[]
        ),
        pairs(&[("routes[0].id", "r3")])
    );
    // A comma-separated value over items, and items over a comma-separated value.
    assert_eq!(
        got(
            &[
                ("a.properties", "a[0]=x\na[1]=y\n"),
                ("b.properties", "a=w,v\n")
            ],
            &[]
        ),
        pairs(&[("a", "w,v")])
    );
    assert_eq!(
        got(
            &[("a.properties", "a=x,y\n"), ("b.properties", "a[0]=w\n")],
            &[]
        ),
        pairs(&[("a[0]", "w")])
    );
    // The variables are one source: LIST_ITEMS_0_ alone replaces the file's two items.
    assert_eq!(
        got(
            &[("a.yml", "list.items: [x, y]\n")],
            &[("LIST_ITEMS_0_", "e")]
        ),
        pairs(&[("list.items[0]", "e")])
    );
    // A map: the second file's zone joins the first file's.
    assert_eq!(
        got(
            &[
                (
                    "a.yml",
                    "eureka.client.service-url.defaultZone: http://a:8761/eureka/\n"
                ),
                (
                    "b.yml",
                    "eureka.client.service-url.zone2: http://b:8761/eureka/\n"
                ),
            ],
            &[]
        ),
        pairs(&[
            (
                "eureka.client.service-url.defaultZone",
                "http://a:8761/eureka/"
            ),
            ("eureka.client.service-url.zone2", "http://b:8761/eureka/"),
        ])
    );
}

/// Maven resource-filtering tokens left unfiltered are warned about with file, line and key:
/// `@project.version@` binds as its text, `@spring.profiles.active@` becomes a profile of that
/// name (so `default` is not active), and JHipster's `#spring.profiles.active#` is a YAML
/// comment (the key is empty, so `default` is active); in .properties `#...#` is the text.
#[test]
fn unfiltered_maven_tokens_are_warned_about() {
    let env = env_of(
        &[(
            "application.yml",
            "spring:\n  profiles:\n    active: '@spring.profiles.active@'\ninfo:\n  version: \"@project.version@\"\nops: ops@example.com\n",
        )],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(env.active_profiles, ["@spring.profiles.active@"]);
    assert_eq!(env.notes.len(), 2, "{:?}", env.notes);
    assert!(
        env.notes[0].starts_with(
            "application.yml:3: `spring.profiles.active` holds `@spring.profiles.active@`, a Maven resource-filtering token"
        ) && env.notes[0].contains("the active profile is literally `@spring.profiles.active@`"),
        "{}",
        env.notes[0]
    );
    assert!(
        env.notes[1].starts_with("application.yml:5: `info.version` holds `@project.version@`")
            && env.notes[1].contains("Spring binds the text `@project.version@` as written"),
        "{}",
        env.notes[1]
    );
    let jhipster = env_of(
        &[(
            "application.yml",
            "spring:\n  profiles:\n    # filled in by the build\n    active: #spring.profiles.active#\n",
        )],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(jhipster.active_profiles, ["default"]);
    assert!(
        jhipster.notes[0].starts_with(
            "application.yml:4: `spring.profiles.active` holds `#spring.profiles.active#`"
        ) && jhipster.notes[0].contains("YAML reads `#` after a blank as the start of a comment")
            && jhipster.notes[0].contains("Spring activates `default`"),
        "{:?}",
        jhipster.notes
    );
    let properties = env_of(
        &[(
            "application.properties",
            "spring.profiles.active=#spring.profiles.active#\n",
        )],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(properties.active_profiles, ["#spring.profiles.active#"]);
    assert!(
        properties.notes[0].contains("Spring binds the text `#spring.profiles.active#` as written"),
        "{:?}",
        properties.notes
    );
    // Profiles chosen on the command line apply instead, and the warning says so.
    let chosen = env_of(
        &[(
            "application.properties",
            "spring.profiles.active=@spring.profiles.active@
",
        )],
        &[],
        Some(&["prod"]),
    )
    .unwrap();
    assert_eq!(chosen.active_profiles, ["prod"]);
    assert!(
        chosen.notes[0].contains("(here the profiles chosen by the scenario apply instead)"),
        "{:?}",
        chosen.notes
    );
}
