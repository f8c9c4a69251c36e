//! The exports round-trip: the scenario TOML parses to the page's scenario, and the
//! `application.yml` snippets, imported back through `spring-config`, do too.

use std::path::Path;

use super::*;
use crate::experiment::tuning::tune;

fn tuned(path: &str, settings: &[(&str, &str)]) -> (ScenarioSource, Scenario, Tuned) {
    let source = ScenarioSource::read(Path::new(path)).unwrap();
    let base = source.parse(&[]).unwrap();
    let pairs: Vec<(String, String)> = settings
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let tuned = tune(&source, &base, &pairs).unwrap();
    (source, base, tuned)
}

/// `scenario` without what only a file's reading leaves (its warnings).
fn model(mut scenario: Scenario) -> Scenario {
    scenario.warnings.clear();
    scenario
}

/// Parses `text` as the file `<name>.toml` in `dir`, beside `files`.
fn parse_in(dir: &Path, name: &str, text: &str, files: &[(&str, &str)]) -> Scenario {
    for (file, content) in files {
        std::fs::write(dir.join(file), content).unwrap();
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    crate::scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The scenario TOML with the Spring keys of the page's controls taken out of the role
/// tables and read from the snippets through `spring-config` instead. `[clients]` gives its
/// keys to every process: a key of one role moved out of it goes on in the other roles'
/// tables (where they do not set it themselves), so that only the snippets can change it.
/// (`[clients]` does not reach the server's own client: `[server]` takes client keys itself.)
fn with_snippets(toml: &str) -> String {
    let mut doc: DocumentMut = toml.parse().unwrap();
    let roles = [
        (Role::Server, "server", "server.yml"),
        (Role::Services, "app", "services.yml"),
        (Role::Callers, "caller", "callers.yml"),
    ];
    for (role, table, _) in roles {
        for control in CONTROLS.iter().filter(|c| c.role == role) {
            let exact = control.exact_key();
            let Some(clients) = doc.get_mut("clients").and_then(|c| c.as_table_like_mut()) else {
                continue;
            };
            let Some(value) = find_key(clients, control.key, exact) else {
                continue;
            };
            remove_key(clients, control.key, exact);
            let others = roles
                .iter()
                .filter(|(_, t, _)| *t != table && *t != "server");
            for (_, other, _) in others {
                for_tables(&mut doc, other, None, |t| {
                    if find_key(t, control.key, exact).is_none() {
                        set_key(t, control.key, exact, value.clone());
                    }
                })
                .unwrap();
            }
        }
    }
    for (role, table, file) in roles {
        for_tables(&mut doc, table, None, |t| {
            assert!(
                t.get("spring-config").is_none(),
                "a test scenario without spring-config"
            );
            for control in CONTROLS.iter().filter(|c| c.role == role) {
                remove_key(t, control.key, control.exact_key());
            }
            t.insert("spring-config", Item::Value(Value::from(file)));
        })
        .unwrap();
    }
    doc.to_string()
}

/// The page's scenario, exported both ways and read back.
fn round_trip(path: &str, settings: &[(&str, &str)]) {
    let (source, base, tuned) = tuned(path, settings);
    let export = export(&source, &base, &tuned).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let name = &base.name;
    // The TOML alone.
    let read = parse_in(dir.path(), name, &export.toml, &[]);
    assert_eq!(model(read), model(tuned.current.clone()), "{}", export.toml);
    // The snippets through spring-config.
    let files: Vec<(&str, &str)> = export
        .snippets
        .iter()
        .map(|s| match s.role {
            "server" => ("server.yml", s.yaml.as_str()),
            "services" => ("services.yml", s.yaml.as_str()),
            _ => ("callers.yml", s.yaml.as_str()),
        })
        .collect();
    let text = with_snippets(&export.toml);
    let read = parse_in(dir.path(), name, &text, &files);
    assert_eq!(model(read), model(tuned.current), "{text}\n{files:?}");
}

#[test]
fn a_fetch_interval_and_a_strategy_round_trip() {
    round_trip(
        "scenarios/kill-9.toml",
        &[("fetch", "5"), ("strategy", "kill-15")],
    );
}

#[test]
fn every_control_at_once_round_trips() {
    round_trip(
        "scenarios/kill-9.toml",
        &[
            ("cache-update", "5000"),
            ("eviction", "10000"),
            ("self-preservation", "false"),
            ("lease-renewal", "10"),
            ("lease-expiration", "30"),
            ("fetch", "5"),
            ("ribbon-refresh", "5000"),
            ("release", "Greenwich"),
            ("strategy", "pause"),
            ("wait", "45"),
            ("instances", "30"),
            ("trials", "50"),
            ("seed", "9"),
        ],
    );
}

#[test]
fn settings_back_to_the_defaults_round_trip_from_relaxed_spellings() {
    // tuned-5s.toml spells the cache key responseCacheUpdateIntervalMs and tunes the fetch
    // in [clients]: the page sets both back to the defaults, and the snippets leave them out.
    round_trip(
        "scenarios/tuned-5s.toml",
        &[
            ("cache-update", "30000"),
            ("fetch", "30"),
            ("lease-renewal", "15"),
        ],
    );
    round_trip("scenarios/tuned-5s.toml", &[]);
}

#[test]
fn a_loadbalancer_ttl_round_trips() {
    round_trip(
        "scenarios/loadbalancer.toml",
        &[("lb-ttl", "5000"), ("fetch", "5"), ("release", "2023.0")],
    );
}

#[test]
fn snippets_hold_only_the_keys_that_differ_from_the_defaults() {
    let (_, _, tuned) = tuned(
        "scenarios/kill-9.toml",
        &[
            ("fetch", "5"),
            ("ribbon-refresh", "5000"),
            ("cache-update", "5000"),
        ],
    );
    let snippets = snippets(&tuned);
    assert_eq!(snippets.len(), 3);
    assert_eq!(
        snippets[0].yaml,
        "# application.yml of the Eureka server: the keys that differ from the Hoxton defaults\n\
         eureka:\n  server:\n    response-cache-update-interval-ms: 5000\n"
    );
    assert!(snippets[1].keys.is_empty(), "{:?}", snippets[1]);
    assert!(snippets[1].yaml.contains("(none: the defaults hold)"));
    assert_eq!(
        snippets[2].yaml,
        "# application.yml of each caller (gateway): the keys that differ from the Hoxton \
         defaults\neureka:\n  client:\n    registry-fetch-interval-seconds: 5\nribbon:\n  \
         ServerListRefreshInterval: 5000\n"
    );
}

#[test]
fn the_toml_keeps_the_files_comments_and_replaces_a_key_under_any_spelling() {
    let (source, base, tuned) = tuned("scenarios/tuned-5s.toml", &[("cache-update", "7000")]);
    let toml = scenario_toml(&source, &base, &tuned).unwrap();
    assert!(toml.starts_with(source.text.lines().next().unwrap()));
    let keys: String = toml.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(!keys.contains("responseCacheUpdateIntervalMs"), "{toml}");
    assert_eq!(
        toml.matches("response-cache-update-interval-ms = 7000")
            .count(),
        1,
        "{toml}"
    );
}
