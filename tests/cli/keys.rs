//! `eureka-sim keys`: every key with its default, in the scenario's tables.

use super::test::Test;

/// A key of `keys`: the table it is listed under, the key, its default as a TOML value (`None`
/// when the default is words and the key is commented out) and its default in words.
#[derive(Debug)]
struct Key {
    table: String,
    key: String,
    /// The value as written (`30000`, `"Hoxton"`), for `--set`.
    literal: Option<String>,
    /// The default: the value (`30000`, `Hoxton`), or the `# default:` comment when there is one
    /// (`true (false in [server])`, `(required)`).
    default: String,
}

/// Reads `keys` line by line: `[table]` or `[[table]]` headers, `# default: ...` comments, and
/// each key as `key = value` or, commented out, `# key =`. (That the whole parses as TOML is
/// [`keys_output_is_toml_with_the_allowed_values`].)
fn keys() -> Vec<Key> {
    let out = Test::new().arg("keys").run();
    assert!(out.stderr.is_empty(), "stderr: {}", out.stderr);
    let mut table = String::new();
    let mut default_note: Option<String> = None;
    let mut keys = Vec::new();
    for line in out.stdout.lines() {
        if let Some(name) = line.strip_prefix('[') {
            table = name.trim_matches(['[', ']']).to_string();
        } else if let Some(note) = line.strip_prefix("# default: ") {
            default_note = Some(note.to_string());
        } else if let Some(key) = line
            .strip_prefix("# ")
            .and_then(|l| l.strip_suffix(" ="))
            .filter(|key| !key.contains(' '))
        {
            let default = default_note
                .take()
                .expect("a commented key has a default note");
            keys.push(Key {
                table: table.clone(),
                key: key.trim_matches('"').to_string(),
                literal: None,
                default,
            });
        } else if let Some((key, value)) = line.split_once(" = ").filter(|_| !line.starts_with('#'))
        {
            assert!(!table.is_empty(), "`{line}` before any [table]");
            let parsed: toml_edit::Value = value
                .parse()
                .unwrap_or_else(|e| panic!("`{value}` is not a TOML value: {e}"));
            let shown = match &parsed {
                toml_edit::Value::String(s) => s.value().clone(),
                other => other.to_string().trim().to_string(),
            };
            keys.push(Key {
                table: table.clone(),
                key: key.trim_matches('"').to_string(),
                literal: Some(value.to_string()),
                default: default_note.take().unwrap_or(shown),
            });
        } else {
            assert!(
                line.is_empty() || line.starts_with('#'),
                "unexpected line in `keys`: `{line}`"
            );
        }
    }
    keys
}

/// `keys` is a TOML document (as a scenario file is read, with `toml_edit`): every table of the
/// scenario format, the array tables as arrays, and the allowed values of the enumerated keys in
/// the comment above each, as the scenario's own types name them.
#[test]
fn keys_output_is_toml_with_the_allowed_values() {
    let out = Test::new().arg("keys").run();
    let doc: toml_edit::DocumentMut = out
        .stdout
        .parse()
        .unwrap_or_else(|e| panic!("`keys` is not TOML: {e}"));
    for table in ["simulation", "network", "server", "clients"] {
        assert!(doc[table].is_table(), "[{table}]");
    }
    for array in [
        "peer", "app", "caller", "shutdown", "claim", "restart", "deploy", "fault",
    ] {
        assert!(doc[array].is_array_of_tables(), "[[{array}]]");
    }
    assert_eq!(doc["simulation"]["duration-s"].as_integer(), Some(900));
    assert_eq!(doc["shutdown"][0]["then"].as_str(), Some("kill-15"));
    assert_eq!(
        doc["server"]["eureka"]["server"]["response-cache-update-interval-ms"].as_integer(),
        Some(30_000)
    );
    // The comment block right above a key (or its commented-out form).
    let block_above = |key_line: &str| -> Vec<&str> {
        let lines: Vec<&str> = out.stdout.lines().collect();
        let at = lines
            .iter()
            .position(|l| *l == key_line)
            .unwrap_or_else(|| panic!("no line `{key_line}`"));
        lines[..at]
            .iter()
            .rev()
            .take_while(|l| l.starts_with('#'))
            .copied()
            .collect()
    };
    // The strategies of FACTS.md §7 and the final stops of pause / service-registry.
    let strategy = block_above("# strategy =");
    assert!(
        strategy.contains(&"# allowed: kill-9, kill-15, pause, service-registry"),
        "{strategy:?}"
    );
    let then = block_above("then = \"kill-15\"");
    assert!(
        then.contains(&"# allowed: kill-15, kill-9, keep-running"),
        "{then:?}"
    );
    let start = block_above("start = \"steady\"");
    assert!(start.contains(&"# allowed: steady, cold"), "{start:?}");
    assert!(
        out.stdout.lines().all(|l| l.chars().count() <= 100),
        "a line wider than 100"
    );
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
        let Some(literal) = &k.literal else {
            continue; // "(required)", "the train's", "the ribbon.* value"
        };
        // `true (false in [server])`: the default in [clients], and another in [server].
        let server_default = k
            .default
            .split_once(" (")
            .and_then(|(_, note)| note.strip_suffix(" in [server])"))
            .map(str::to_string);
        let default = literal.clone();
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

/// docs/keys.md's key table is `keys --markdown`, verbatim: the documentation cannot drift from
/// the keys the parser accepts.
#[test]
fn the_key_reference_is_the_generated_one() {
    let out = Test::new().args(["keys", "--markdown"]).run();
    assert!(out.stderr.is_empty(), "stderr: {}", out.stderr);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/keys.md"))
        .expect("docs/keys.md");
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| table | key |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let generated: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('|')).collect();
    assert!(generated.len() > 50);
    assert_eq!(
        table, generated,
        "docs/keys.md's key table differs from `eureka-sim keys --markdown`; paste the new output"
    );
}
