//! `eureka-sim keys`: every key with its default, in the scenario's tables.

use super::test::Test;

/// A line of `keys`: the table it is listed under, the key and its default as printed.
#[derive(Debug)]
struct Key {
    table: String,
    key: String,
    default: String,
}

/// Parses `[table]` headers and `  key = default    # meaning` lines.
fn keys() -> Vec<Key> {
    let out = Test::new().arg("keys").run();
    assert!(out.stderr.is_empty(), "stderr: {}", out.stderr);
    let mut table = String::new();
    let mut keys = Vec::new();
    for line in out.stdout.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.to_string();
        } else if let Some(entry) = line.strip_prefix("  ") {
            let (key, rest) = entry
                .split_once(" = ")
                .unwrap_or_else(|| panic!("`{line}` is not `key = default    # meaning`"));
            let default = rest.split_once("    #").map_or(rest, |(d, _)| d);
            assert!(!table.is_empty(), "`{line}` before any [table]");
            keys.push(Key {
                table: table.clone(),
                key: key.trim().to_string(),
                default: default.trim().to_string(),
            });
        } else if !line.trim().is_empty() {
            panic!("unexpected line in `keys`: `{line}`");
        }
    }
    keys
}

fn default_of<'a>(keys: &'a [Key], table: &str, key: &str) -> &'a str {
    &keys
        .iter()
        .find(|k| k.table == table && k.key == key)
        .unwrap_or_else(|| panic!("`keys` does not list [{table}] {key}"))
        .default
}

/// The defaults of Eureka, Spring Cloud and Ribbon, each from its section of FACTS.md.
#[test]
fn keys_lists_the_documented_defaults() {
    let keys = keys();
    let expect = [
        // §3: the read-only response cache is refreshed every 30 s.
        (
            "server",
            "eureka.server.response-cache-update-interval-ms",
            "30000",
        ),
        (
            "server",
            "eureka.server.response-cache-auto-expiration-in-seconds",
            "180",
        ),
        (
            "server",
            "eureka.server.use-read-only-response-cache",
            "true",
        ),
        // §2.1-§2.5: eviction, self-preservation, threshold.
        (
            "server",
            "eureka.server.eviction-interval-timer-in-ms",
            "60000",
        ),
        ("server", "eureka.server.enable-self-preservation", "true"),
        ("server", "eureka.server.renewal-percent-threshold", "0.85"),
        (
            "server",
            "eureka.server.renewal-threshold-update-interval-ms",
            "900000",
        ),
        (
            "server",
            "eureka.instance.registry.expected-number-of-clients-sending-renews",
            "1",
        ),
        // §1, §5.1: lease, heartbeat, fetch, replicator.
        (
            "clients",
            "eureka.instance.lease-renewal-interval-in-seconds",
            "30",
        ),
        (
            "clients",
            "eureka.instance.lease-expiration-duration-in-seconds",
            "90",
        ),
        (
            "clients",
            "eureka.client.registry-fetch-interval-seconds",
            "30",
        ),
        (
            "clients",
            "eureka.client.instance-info-replication-interval-seconds",
            "30",
        ),
        (
            "clients",
            "eureka.client.initial-instance-info-replication-interval-seconds",
            "40",
        ),
        ("clients", "eureka.client.filter-only-up-instances", "true"),
        // §8: Ribbon.
        ("clients", "ribbon.ServerListRefreshInterval", "30000"),
        ("clients", "ribbon.MaxAutoRetries", "0"),
        ("clients", "ribbon.MaxAutoRetriesNextServer", "1"),
        ("clients", "ribbon.OkToRetryOnAllOperations", "false"),
    ];
    for (table, key, default) in expect {
        assert_eq!(default_of(&keys, table, key), default, "[{table}] {key}");
    }
}

#[test]
fn keys_are_listed_once_per_table() {
    let keys = keys();
    for (i, a) in keys.iter().enumerate() {
        assert!(
            !keys[..i]
                .iter()
                .any(|b| b.table == a.table && b.key == a.key),
            "[{}] {} listed twice",
            a.table,
            a.key
        );
    }
}

/// A scenario that sets nothing but what is required, so every listed key is at its default.
const MINIMAL: &str = r#"
[[app]]
name = "svc"
instances = 20

[[caller]]
name = "gateway"
calls = "svc"

[[shutdown]]
instance = "svc-0"
at-s = 300
strategy = "kill-9"
"#;

/// `--set TABLE.KEY=DEFAULT` for every key `keys` shows with a concrete default changes nothing:
/// the listing and the parser agree on names, tables and defaults.
#[test]
fn setting_a_key_to_its_listed_default_changes_nothing() {
    let run = |sets: &[String]| {
        let mut test = Test::new().write("minimal.toml", MINIMAL).args([
            "run",
            "minimal.toml",
            "--trials",
            "2",
            "--out",
            "out",
        ]);
        for set in sets {
            test = test.set(set);
        }
        test.run().trials_bytes()
    };
    let baseline = run(&[]);
    let mut checked = 0;
    for k in keys() {
        if !["simulation", "network", "server", "clients"].contains(&k.table.as_str())
            || k.key == "trials"
        {
            continue;
        }
        // `true (false in [server])`: the default in [clients], and another in [server].
        let (default, server_default) = match k.default.split_once(" (") {
            Some((d, note)) => (
                d.to_string(),
                note.strip_suffix(" in [server])").map(str::to_string),
            ),
            None => (k.default.clone(), None),
        };
        if default.contains(' ') || default.starts_with('(') || default.starts_with('<') {
            continue; // "(required)", "the train's", "the ribbon.* value"
        }
        let mut sets = vec![format!("{}.{}={default}", k.table, k.key)];
        if let Some(d) = server_default {
            sets.push(format!("server.{}={d}", k.key));
        }
        for set in sets {
            assert!(
                run(std::slice::from_ref(&set)) == baseline,
                "--set {set} changed the result"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} keys checked");
}

/// README.md's key table is `keys --markdown`, verbatim: the documentation cannot drift from
/// the keys the parser accepts.
#[test]
fn readme_key_table_is_the_generated_one() {
    let out = Test::new().args(["keys", "--markdown"]).run();
    assert!(out.stderr.is_empty(), "stderr: {}", out.stderr);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| table | key |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let generated: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('|')).collect();
    assert!(generated.len() > 50);
    assert_eq!(
        table, generated,
        "README.md's key table differs from `eureka-sim keys --markdown`; paste the new output"
    );
}
