//! `eureka-sim presets` and `eureka-sim init`: the preset list, and a commented starter
//! scenario (optionally from the team's Spring files and a preset) that parses as written.

use std::fmt::Write as _;

use crate::scenario::presets::{PRESETS, Preset};

/// Every preset: name, what it is, where it comes from, its settings.
pub fn render_presets() -> String {
    let mut out = String::new();
    for p in PRESETS {
        let _ = writeln!(out, "{}\n  {}\n  source: {}", p.name, p.summary, p.source);
        if p.settings.is_empty() {
            out.push_str("  (every default)\n");
        }
        for (table, key, value) in p.settings {
            let _ = writeln!(out, "  {}.{key} = {value}", table.name());
        }
        out.push('\n');
    }
    out.push_str(
        "Use one with `simulation.preset = \"NAME\"` (the scenario's keys override it).\n",
    );
    out
}

/// What `init` puts in the starter.
#[derive(Debug, Clone, Default)]
pub struct Starter {
    pub preset: Option<&'static Preset>,
    /// Spring files, as paths relative to the scenario file.
    pub server_config: Option<String>,
    pub app_config: Option<String>,
    pub caller_config: Option<String>,
    /// The called app's name (`svc` unless its Spring file's spring.application.name says).
    pub app_name: Option<String>,
    /// Written as the `[[app]]`'s `name`: its file has no spring.application.name.
    pub app_name_written: bool,
    /// The caller's name when its file has no spring.application.name.
    pub caller_name: Option<String>,
    /// The release train the files show, and why.
    pub release: Option<(String, String)>,
    /// The caller's HTTP stack its file shows, and why.
    pub http_client: Option<(String, String)>,
    /// One Eureka peer per profile document of the server's file.
    pub peers: Vec<StarterPeer>,
}

/// A `[[peer]]` of the starter: the server file read with one profile.
#[derive(Debug, Clone, Default)]
pub struct StarterPeer {
    pub name: String,
    pub profile: String,
    pub zone: Option<String>,
    /// Where its document is (`eureka/application.yml line 4`).
    pub from: String,
}

/// A TOML string literal (basic string, escaped).
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A standalone server's table.
fn render_server(out: &mut String, s: &Starter) {
    match &s.server_config {
        Some(f) => {
            let _ = writeln!(
                out,
                "spring-config = {}   # the Eureka server's own application.yml / .properties",
                quoted(f)
            );
        }
        None => out.push_str(
            "# spring-config = \"eureka-server/application.yml\"   # or its settings here:\n\
             eureka.server.response-cache-update-interval-ms = 30000\n\
             eureka.server.eviction-interval-timer-in-ms = 60000\n",
        ),
    }
    out.push_str(
        "eureka.client.register-with-eureka = false   # a standalone server\n\
         eureka.client.fetch-registry = false\n",
    );
}

/// One `[[peer]]` per profile of the server's file, each reading the file with its profile.
fn render_peers(out: &mut String, s: &Starter) {
    out.push_str("# the peers' settings come from their file, each with its profile\n");
    let file = s.server_config.as_deref().unwrap_or_default();
    for p in &s.peers {
        let _ = writeln!(
            out,
            "\n[[peer]]\nname = {}   # eureka.instance.hostname of profile {} ({})\n\
             spring-config = {}\nspring-profiles = [{}]",
            quoted(&p.name),
            p.profile,
            p.from,
            quoted(file),
            quoted(&p.profile)
        );
        if let Some(zone) = &p.zone {
            let _ = writeln!(
                out,
                "zone = {}   # its eureka.instance.metadata-map.zone",
                quoted(zone)
            );
        }
    }
}

/// What a table of a config repository's scenario is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoRole {
    Server,
    App,
    Caller,
}

impl RepoRole {
    pub fn table(self) -> &'static str {
        match self {
            RepoRole::Server => "[server]",
            RepoRole::App => "[[app]]",
            RepoRole::Caller => "[[caller]]",
        }
    }
}

/// One application of a config repository, with its files (paths from the scenario).
#[derive(Debug, Clone)]
pub struct RepoTable {
    pub role: RepoRole,
    pub name: String,
    pub files: Vec<String>,
    pub http_client: Option<(String, String)>,
}

/// The scenario of a Spring Cloud Config repository: each application's table with its files in
/// Spring Cloud Config's order; the first caller calls the first app, whose instance 0 stops.
/// `Err` when the repository has no app to call.
pub fn render_config_repo(
    tables: &[RepoTable],
    profiles: &[String],
    release: Option<&(String, String)>,
) -> Result<String, String> {
    let first_app = tables
        .iter()
        .find(|t| t.role == RepoRole::App)
        .ok_or("no application that is neither the Eureka server nor a gateway")?;
    let mut out = String::from(
        "# A scenario written by `eureka-sim init --config-repo`: each application's files in\n\
         # Spring Cloud Config's order (application, {name}, then per profile\n\
         # application-{profile}, {name}-{profile}; later files override earlier ones).\n\n\
         [simulation]\nduration-s = 900\ntrials = 200\nseed = 1\n",
    );
    match release {
        Some((train, why)) => {
            let _ = writeln!(out, "release = {}   # from {why}", quoted(train));
        }
        None => out.push_str("release = \"Hoxton\"   # nothing in the files tells: set yours\n"),
    }
    if !profiles.is_empty() {
        let listed: Vec<String> = profiles.iter().map(|p| quoted(p)).collect();
        let _ = writeln!(out, "spring-profiles = [{}]", listed.join(", "));
    }
    let list = |files: &[String]| {
        files
            .iter()
            .map(|f| quoted(f))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let server = tables.iter().find(|t| t.role == RepoRole::Server);
    out.push_str("\n[server]\n");
    match server {
        Some(t) => {
            let _ = writeln!(out, "spring-config = [{}]   # {}", list(&t.files), t.name);
        }
        None => out.push_str(
            "eureka.client.register-with-eureka = false   # no server in the repository: a \
             standalone one\neureka.client.fetch-registry = false\n",
        ),
    }
    for t in tables.iter().filter(|t| t.role == RepoRole::App) {
        let _ = writeln!(
            out,
            "\n[[app]]\nname = {}\nspring-config = [{}]\ninstances = 20",
            quoted(&t.name),
            list(&t.files)
        );
    }
    let callers: Vec<&RepoTable> = tables
        .iter()
        .filter(|t| t.role == RepoRole::Caller)
        .collect();
    for t in &callers {
        let _ = writeln!(
            out,
            "\n[[caller]]\nname = {}\nspring-config = [{}]\ncalls = {}\nrate-per-s = 20",
            quoted(&t.name),
            list(&t.files),
            quoted(&first_app.name)
        );
        if let Some((client, why)) = &t.http_client {
            let _ = writeln!(out, "http-client = {}   # from {why}", quoted(client));
        }
    }
    if callers.is_empty() {
        let _ = writeln!(
            out,
            "\n[[caller]]   # no gateway in the repository: a caller of {}\nname = \"caller\"\n\
             calls = {}\nrate-per-s = 20",
            first_app.name,
            quoted(&first_app.name)
        );
    }
    let _ = writeln!(
        out,
        "\n[[shutdown]]\ninstance = {}\nat-s = 300\nstrategy = \"kill-15\"",
        quoted(&format!("{}-0", first_app.name))
    );
    Ok(out)
}

/// The starter scenario's text.
pub fn render_starter(s: &Starter) -> String {
    let mut out = String::from(
        "# A starter scenario written by `eureka-sim init`. Every key is documented by\n\
         # `eureka-sim keys`; run it with `eureka-sim run <this file>`.\n\
         # Question: after one instance of `svc` stops, for how long do the gateway's requests\n\
         # still reach it?\n\n\
         [simulation]\n\
         duration-s = 900    # simulated time per trial\n\
         trials = 200        # independent trials (p99 needs 299)\n\
         seed = 1\n",
    );
    match &s.release {
        Some((train, why)) => {
            let _ = writeln!(
                out,
                "release = {}   # Spring Cloud release train, from {why}",
                quoted(train)
            );
        }
        None => out.push_str(
            "release = \"Hoxton\" # Spring Cloud release train: decides which Eureka rules apply\n",
        ),
    }
    if let Some(p) = s.preset {
        let _ = writeln!(
            out,
            "preset = {}   # {}\n# ({})",
            quoted(p.name),
            p.summary,
            p.source
        );
    }
    out.push_str("\n[server]\n");
    if !s.peers.is_empty() {
        render_peers(&mut out, s);
    } else {
        render_server(&mut out, s);
    }
    out.push_str("\n[[app]]\n");
    match &s.app_config {
        Some(f) if s.app_name_written => {
            let _ = writeln!(
                out,
                "name = {}   # {f} has no spring.application.name (Spring would register it as \
                 UNKNOWN): yours here\nspring-config = {}",
                quoted(s.app_name.as_deref().unwrap_or("svc")),
                quoted(f)
            );
        }
        Some(f) => {
            let _ = writeln!(
                out,
                "spring-config = {}   # its spring.application.name names it",
                quoted(f)
            );
        }
        None => out.push_str(
            "name = \"svc\"\n\
             # spring-config = \"svc/application.properties\"\n\
             eureka.client.registry-fetch-interval-seconds = 30\n\
             eureka.instance.lease-renewal-interval-in-seconds = 30\n",
        ),
    }
    out.push_str("instances = 20\n\n[[caller]]\n");
    match &s.caller_config {
        Some(f) => {
            if let Some(name) = &s.caller_name {
                let _ = writeln!(
                    out,
                    "name = {}   # {f} has no spring.application.name: yours here",
                    quoted(name)
                );
            }
            let _ = writeln!(out, "spring-config = {}   # the gateway's", quoted(f));
            if let Some((client, why)) = &s.http_client {
                let _ = writeln!(out, "http-client = {}   # from {why}", quoted(client));
            }
        }
        None => out.push_str(
            "name = \"gateway\"\n\
             # spring-config = \"gateway/application.yml\"\n\
             ribbon.ServerListRefreshInterval = 30000\n",
        ),
    }
    let name = s.app_name.as_deref().unwrap_or("svc");
    let _ = writeln!(
        out,
        "calls = {}      # the [[app]] name\nrate-per-s = 20\n\n\
         [[shutdown]]\n\
         instance = {} # <app name>-<index>\n\
         at-s = 300\n\
         strategy = \"kill-15\" # kill-9, kill-15, pause, service-registry (with wait-s, then)",
        quoted(name),
        quoted(&format!("{name}-0"))
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;
    use crate::scenario::presets::preset;

    /// The starter parses as written, with and without a preset, and its preset applies.
    #[test]
    fn the_starter_parses() {
        let plain = parse_str(&render_starter(&Starter::default()), "s.toml", "s", &[]).unwrap();
        assert_eq!(plain.apps[0].name, "svc");
        assert_eq!(plain.shutdowns[0].instance, "svc-0");
        let fast = Starter {
            preset: preset("sprboots-fast"),
            ..Starter::default()
        };
        let s = parse_str(&render_starter(&fast), "s.toml", "s", &[]).unwrap();
        // The starter's own 30 s fetch overrides the preset's 5 s; its leases apply.
        assert_eq!(s.apps[0].client.registry_fetch_interval_s, 30);
        assert_eq!(s.apps[0].client.lease_expiration_duration_s, 10);
    }

    #[test]
    fn presets_are_listed_with_their_sources() {
        let text = render_presets();
        for p in PRESETS {
            assert!(
                text.contains(p.name) && text.contains(p.source),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn file_names_are_quoted_as_toml() {
        assert_eq!(quoted(r#"a "b"\c"#), r#""a \"b\"\\c""#);
    }
}
