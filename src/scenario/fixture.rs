//! Scenario texts for unit tests in every layer, built from parts: most tests want "a fleet of
//! `svc` instances behind a `gateway`, and what stops it", with a few keys of their own.
//! (Test-only; `#[cfg(test)]`.)

use super::{Scenario, ScenarioError, parse_str};

/// A scenario file's text, built table by table in the order of the calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScenarioText(String);

impl ScenarioText {
    /// `[simulation]` with `lines` (`duration-s = 600`, `trials = 6`, ...).
    pub(crate) fn simulation(lines: &[&str]) -> ScenarioText {
        ScenarioText::default().table("[simulation]", lines)
    }

    /// `header` (`[network]`, `[[restart]]`, ...) with `lines`.
    pub(crate) fn table(mut self, header: &str, lines: &[&str]) -> ScenarioText {
        self.0.push_str(header);
        self.0.push('\n');
        for line in lines {
            self.0.push_str(line);
            self.0.push('\n');
        }
        self
    }

    /// `[[app]]` `svc` with `instances`, and `[[caller]]` `gateway` calling it with `caller`'s
    /// lines (`rate-per-s = 20`, ...).
    pub(crate) fn fleet(self, instances: u32, caller: &[&str]) -> ScenarioText {
        let caller: Vec<&str> = ["name = \"gateway\"", "calls = \"svc\""]
            .into_iter()
            .chain(caller.iter().copied())
            .collect();
        self.table(
            "[[app]]",
            &["name = \"svc\"", &format!("instances = {instances}")],
        )
        .table("[[caller]]", &caller)
    }

    /// `[[shutdown]]` of `instance` at `at_s` by `strategy`, then `lines` (`wait-s = 30`, ...).
    pub(crate) fn shutdown(
        self,
        instance: &str,
        at_s: u64,
        strategy: &str,
        lines: &[&str],
    ) -> ScenarioText {
        let head = [
            format!("instance = \"{instance}\""),
            format!("at-s = {at_s}"),
            format!("strategy = \"{strategy}\""),
        ];
        let all: Vec<&str> = head
            .iter()
            .map(String::as_str)
            .chain(lines.iter().copied())
            .collect();
        self.table("[[shutdown]]", &all)
    }

    /// `[[peer]]` `name` in `zone`, then `lines` (its own `[server]` or client keys).
    pub(crate) fn peer(self, name: &str, zone: &str, lines: &[&str]) -> ScenarioText {
        let head = [format!("name = \"{name}\""), format!("zone = \"{zone}\"")];
        let all: Vec<&str> = head
            .iter()
            .map(String::as_str)
            .chain(lines.iter().copied())
            .collect();
        self.table("[[peer]]", &all)
    }

    /// The text.
    pub(crate) fn text(self) -> String {
        self.0
    }
}

/// `[[app]]` `svc` (3 instances) and `[[caller]]` `gw` calling it: the least a scenario file
/// needs, for the tests of one more table (a shutdown, a claim, a fault) written after it.
pub(crate) const SVC_AND_GW: &str =
    "[[app]]\nname = \"svc\"\ninstances = 3\n[[caller]]\nname = \"gw\"\ncalls = \"svc\"\n";

/// The stem of every bundled scenario, as [`bundled`] takes it (`kill-9`,
/// `cluster/peer-restart`, `incidents/...`), sorted.
pub(crate) fn bundled_stems() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut names = Vec::new();
    for dir in ["", "incidents", "cluster"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                names.push(match dir {
                    "" => stem,
                    _ => format!("{dir}/{stem}"),
                });
            }
        }
    }
    names.sort();
    names
}

/// The bundled `scenarios/<stem>.toml` with `overrides`, parsed as `run` parses it.
pub(crate) fn bundled(stem: &str, overrides: &[String]) -> Scenario {
    let file = format!("{stem}.toml");
    let path = std::path::Path::new("scenarios").join(&file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read scenarios/{file}: {e}"));
    super::parse::parse_beside(&text, &file, stem, overrides, &path)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Parses a test scenario (as `t.toml`) with `overrides`.
pub(crate) fn parse(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    parse_str(text, "t.toml", "t", overrides)
}
