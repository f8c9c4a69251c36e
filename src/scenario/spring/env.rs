//! Environment variables, only as the scenario gives them (`env`, `env-file`): never the
//! machine's. Spring Boot's `SystemEnvironmentPropertySource` ranks them above every file, and
//! `SystemEnvironmentPropertyMapper` names them: lower case, `_` for `.`, a numeric part an
//! index (`MY_LIST_0_NAME` is `my.list[0].name`); relaxed binding then matches
//! `EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS` to `eureka.client.registry-fetch-interval-seconds`.
//!
//! A variable file holds dotenv lines (`NAME=value`, `export NAME=value`, `#` comments, quotes
//! stripped), or is YAML: a docker-compose file (a service's `environment:` list of
//! `NAME=value` or map), a Kubernetes manifest (a container's `env:` list of `name`/`value`), or
//! a bare `environment:` / `env:`. A compose file's service or a manifest's container is the one
//! named after `#` in the path (`docker-compose.yml#gateway`), else the one named like the table,
//! else the only one.

use std::collections::HashMap;

use super::{Merged, Property, SpringProblem, base_of, yaml};
use crate::scenario::keys::{DEFS, canonical};

/// One variable as given, with where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) struct EnvVar {
    pub name: String,
    pub value: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// `SystemEnvironmentPropertyMapper`: the property name a variable binds as.
pub(in crate::scenario) fn spring_name(var: &str) -> String {
    let mut out = String::new();
    for part in var.split('_').filter(|p| !p.is_empty()) {
        if part.chars().all(|c| c.is_ascii_digit()) && !out.is_empty() {
            out.push('[');
            out.push_str(part);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part.to_ascii_lowercase());
        }
    }
    out
}

/// The variable that binds as property `name` (the form Spring Boot's documentation gives:
/// upper case, `_` for `.`, dashes dropped, `[i]` as `_i_`).
pub(super) fn variable_name(name: &str) -> String {
    name.replace('-', "")
        .replace(['.', '['], "_")
        .replace(']', "")
        .to_ascii_uppercase()
}

/// The variables of one table, by name.
pub(super) struct EnvIndex<'a> {
    vars: Vec<&'a EnvVar>,
}

impl<'a> EnvIndex<'a> {
    /// The last variable of each name wins.
    pub(super) fn new(vars: &'a [EnvVar]) -> EnvIndex<'a> {
        let mut kept: Vec<&EnvVar> = Vec::new();
        for v in vars {
            kept.retain(|k| k.name != v.name);
            kept.push(v);
        }
        EnvIndex { vars: kept }
    }

    /// The value the variables give property `name` (relaxed), if any.
    pub(super) fn value(&self, name: &str) -> Option<String> {
        let key = canonical(name);
        self.vars
            .iter()
            .rev()
            .find(|v| canonical(&spring_name(&v.name)) == key)
            .map(|v| v.value.clone())
    }

    /// The variables by exact name.
    pub(super) fn exact(&self) -> HashMap<String, String> {
        self.vars
            .iter()
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect()
    }

    /// `merged` with the variables over it: one that names a property of the files replaces
    /// its value (the property keeps its name as written, which matters for a map key), and one
    /// that names no property is added under its mapped name. A variable of one word (`PATH`)
    /// is no Spring property and only serves placeholders.
    pub(super) fn overlay(&self, merged: &mut Merged, notes: &mut Vec<String>) {
        // The variables are one source: a list they write replaces the files' list whole.
        let mut source = Vec::new();
        for v in &self.vars {
            let name = ribbon_spelling(spring_name(&v.name));
            let key = canonical(&name);
            let property = Property {
                name: name.clone(),
                value: v.value.clone(),
                file: v.file.clone(),
                line: v.line,
                column: v.column,
                refusal: None,
            };
            match merged.index.get(&key) {
                Some(&i) => source.push(Property {
                    name: merged.props[i].name.clone(),
                    ..property
                }),
                None if name.contains('.') => {
                    if canonical(base_of(&name)).starts_with("eureka.client.serviceurl.") {
                        notes.push(service_url_note(v, &name));
                    }
                    source.push(property);
                }
                None => {}
            }
        }
        merged.put_source(source);
    }
}

/// A Ribbon key under its exact spelling: Ribbon asks Archaius for
/// `<client>.ribbon.ServerListRefreshInterval`, and Spring's `SystemEnvironmentPropertySource`
/// finds `SVC_RIBBON_SERVERLISTREFRESHINTERVAL` for it (`resolvePropertyName` tries the name
/// with `_` for `.` in upper case), so the variable sets the exact-case key.
fn ribbon_spelling(name: String) -> String {
    let Some((head, leaf)) = name.rsplit_once('.') else {
        return name;
    };
    if !(head == "ribbon" || head.ends_with(".ribbon")) {
        return name;
    }
    DEFS.iter()
        .filter_map(|d| d.ribbon_leaf())
        .find(|exact| canonical(exact) == canonical(leaf))
        .map_or(name.clone(), |exact| format!("{head}.{exact}"))
}

/// spring-cloud-netflix issues 2541 and 3502: a map key from an environment variable is lower
/// case (Spring Boot's map binding since 2.0), and `EurekaClientConfigBean#getEurekaServerServiceUrls`
/// looks up `defaultZone` exactly; the variable only works over a file key of the same zone.
fn service_url_note(v: &EnvVar, name: &str) -> String {
    format!(
        "{}:{}: `{}` binds as `{name}`: Spring Boot lower-cases a map key that comes from an \
         environment variable, so with no eureka.client.service-url key of that zone in the \
         files it is a zone of its own, and for `defaultZone` Spring keeps its default \
         http://localhost:8761/eureka/ (spring-cloud-netflix issues 2541, 3502); the model does \
         the same. To use the variable, write eureka.client.serviceUrl.defaultZone (any value) \
         in the table's file, which the variable then overrides",
        v.file, v.line, v.name
    )
}

/// The variables of a variable file's `text` (`display` names it; `select` is the service or
/// container after `#`, `table` the table's name).
pub(in crate::scenario) fn env_file_vars(
    text: &str,
    display: &str,
    select: Option<&str>,
    table: Option<&str>,
) -> Result<Vec<EnvVar>, SpringProblem> {
    let lower = display.to_ascii_lowercase();
    if lower.ends_with(".yml") || lower.ends_with(".yaml") {
        yaml_vars(text, display, select, table)
    } else {
        dotenv_vars(text, display)
    }
}

fn problem(display: &str, line: usize, message: String) -> SpringProblem {
    SpringProblem {
        file: display.to_string(),
        line,
        column: 1,
        message,
    }
}

/// Whether `name` is a variable name (letters, digits, `_`, `.`, `-`; not starting with a
/// digit).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn unquote(value: &str) -> &str {
    let v = value.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

fn dotenv_vars(text: &str, display: &str) -> Result<Vec<EnvVar>, SpringProblem> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let t = t.strip_prefix("export ").unwrap_or(t);
        let Some((name, value)) = t.split_once('=') else {
            return Err(problem(
                display,
                i + 1,
                format!(
                    "`{t}` is not `NAME=value`; allowed: dotenv lines `NAME=value` (or \
                     `export NAME=value`, `#` comments), a docker-compose file or a Kubernetes \
                     manifest (.yml)"
                ),
            ));
        };
        let name = name.trim();
        if !valid_name(name) {
            return Err(problem(
                display,
                i + 1,
                format!("`{name}` is not a variable name; allowed: letters, digits and `_`"),
            ));
        }
        out.push(EnvVar {
            name: name.to_string(),
            value: unquote(value).to_string(),
            file: display.to_string(),
            line: i + 1,
            column: 1,
        });
    }
    Ok(out)
}

/// A group of variables in a YAML file: the service or container they belong to.
struct Group {
    owner: String,
    vars: Vec<EnvVar>,
}

/// Adds `var` to `owner`'s group, which its first variable opens: the groups keep the file's
/// order of services or containers.
fn file_var(groups: &mut Vec<Group>, owner: String, var: EnvVar) {
    match groups.iter_mut().find(|g| g.owner == owner) {
        Some(g) => g.vars.push(var),
        None => groups.push(Group {
            owner,
            vars: vec![var],
        }),
    }
}

impl EnvVar {
    /// Variable `name` = `value`, written where property `p` of file `display` stands.
    fn at(name: String, value: String, display: &str, p: &Property) -> EnvVar {
        EnvVar {
            name,
            value,
            file: display.to_string(),
            line: p.line,
            column: p.column,
        }
    }
}

fn yaml_vars(
    text: &str,
    display: &str,
    select: Option<&str>,
    table: Option<&str>,
) -> Result<Vec<EnvVar>, SpringProblem> {
    let docs = yaml::documents(text).map_err(|p| SpringProblem {
        file: display.to_string(),
        ..p
    })?;
    let mut groups: Vec<Group> = Vec::new();
    for doc in &docs {
        groups.extend(compose_groups(&doc.properties, display));
        groups.extend(kubernetes_groups(&doc.properties, display));
    }
    let names: Vec<&str> = groups.iter().map(|g| g.owner.as_str()).collect();
    let chosen = match select {
        Some(s) => groups.iter().find(|g| g.owner == s),
        None => groups
            .iter()
            .find(|g| table.is_some_and(|t| g.owner == t))
            .or_else(|| (groups.len() == 1).then(|| &groups[0])),
    };
    match chosen {
        Some(g) => Ok(g.vars.clone()),
        None if groups.is_empty() => Err(problem(
            display,
            1,
            "no environment variables found; allowed: a docker-compose file (services.<name>.\
             environment, a list of NAME=value or a map), a Kubernetes manifest (a container's \
             env: list of name/value), a bare environment: or env:, or dotenv lines in a file \
             not named .yml"
                .to_string(),
        )),
        None => Err(problem(
            display,
            1,
            format!(
                "which service's or container's variables? it has {}; name one after `#` \
                 (`env-file = \"{}#{}\"`)",
                names.join(", "),
                display.rsplit(['/', '\\']).next().unwrap_or(display),
                names[0]
            ),
        )),
    }
}

/// `prefix.environment[i]` = `NAME=value` items and `prefix.environment.NAME` = value entries,
/// grouped by `prefix` (`services.<svc>` in a compose file, `` for a bare one).
fn compose_groups(properties: &[Property], display: &str) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for p in properties {
        let Some(at) = find_segment(&p.name, "environment") else {
            continue;
        };
        let owner_path = &p.name[..at];
        let rest = &p.name[at + "environment".len()..];
        let (name, value) = if rest.starts_with('[') {
            match p.value.split_once('=') {
                Some((n, v)) => (n.trim().to_string(), v.to_string()),
                // `- NAME` passes the machine's variable through: never read here.
                None => continue,
            }
        } else if let Some(var) = rest.strip_prefix('.') {
            (var.to_string(), p.value.clone())
        } else {
            continue;
        };
        let owner = owner_path
            .trim_end_matches('.')
            .rsplit('.')
            .next()
            .unwrap_or("")
            .to_string();
        file_var(&mut groups, owner, EnvVar::at(name, value, display, p));
    }
    groups
}

/// The offset of segment `segment` in dotted `name` (at the start or after a `.`), followed by
/// `.`, `[` or the end.
fn find_segment(name: &str, segment: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = name[from..].find(segment) {
        let at = from + found;
        let before_ok = at == 0 || name.as_bytes()[at - 1] == b'.';
        let after = name.as_bytes().get(at + segment.len());
        if before_ok && matches!(after, None | Some(b'.') | Some(b'[')) {
            return Some(at);
        }
        from = at + segment.len();
    }
    None
}

/// `...containers[i].env[j].name` / `.value` pairs, grouped by the container's `name`
/// (`...containers[i].name`), or `env[j]` at the top for a bare list.
fn kubernetes_groups(properties: &[Property], display: &str) -> Vec<Group> {
    // (owner path, j) -> (name property, value)
    let mut groups: Vec<Group> = Vec::new();
    let owner_name = |path: &str| -> String {
        let key = format!("{path}name");
        properties
            .iter()
            .find(|p| p.name == key)
            .map_or_else(String::new, |p| p.value.clone())
    };
    for p in properties {
        let Some(at) = find_segment(&p.name, "env") else {
            continue;
        };
        let rest = &p.name[at + 3..];
        let Some(item) = rest
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix("].name"))
        else {
            continue;
        };
        let path = &p.name[..at];
        let value_key = format!("{path}env[{item}].value");
        let Some(value) = properties.iter().find(|q| q.name == value_key) else {
            // `valueFrom` (a secret, a field): nothing here gives it.
            continue;
        };
        let owner = owner_name(path);
        let var = EnvVar::at(p.value.clone(), value.value.clone(), display, p);
        file_var(&mut groups, owner, var);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SystemEnvironmentPropertyMapper`: lower case, `_` for `.`, numbers as indices.
    #[test]
    fn variables_map_to_spring_names() {
        assert_eq!(
            spring_name("EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS"),
            "eureka.client.registryfetchintervalseconds"
        );
        assert_eq!(spring_name("MY_LIST_0_NAME"), "my.list[0].name");
        assert_eq!(
            ribbon_spelling(spring_name("SVC_RIBBON_SERVERLISTREFRESHINTERVAL")),
            "svc.ribbon.ServerListRefreshInterval"
        );
        assert_eq!(
            spring_name("SPRING_PROFILES_ACTIVE"),
            "spring.profiles.active"
        );
        assert_eq!(
            canonical(&spring_name(
                "EUREKA_INSTANCE_LEASERENEWALINTERVALINSECONDS"
            )),
            canonical("eureka.instance.lease-renewal-interval-in-seconds")
        );
    }

    fn pairs(vars: &[EnvVar]) -> Vec<(&str, &str, usize)> {
        vars.iter()
            .map(|v| (v.name.as_str(), v.value.as_str(), v.line))
            .collect()
    }

    #[test]
    fn dotenv_lines_read_as_written() {
        let vars = env_file_vars(
            "# comment\nA=1\nexport B = \"two words\"\n\nC='x=y'\n",
            ".env",
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            pairs(&vars),
            [("A", "1", 2), ("B", "two words", 3), ("C", "x=y", 5)]
        );
        let err = env_file_vars("A=1\nnonsense\n", ".env", None, None).unwrap_err();
        assert_eq!((err.file.as_str(), err.line), (".env", 2));
        assert!(err.message.contains("NAME=value"), "{err:?}");
    }

    /// A compose service's list and map forms, chosen by `#`, by the table's name, or alone.
    #[test]
    fn compose_services_give_their_environment() {
        let text = "services:\n  gateway:\n    image: gw\n    environment:\n      - A=1\n      - B=x=y\n      - PASSED_THROUGH\n  svc:\n    environment:\n      C: 3\n";
        let gw = env_file_vars(text, "dc.yml", Some("gateway"), None).unwrap();
        assert_eq!(pairs(&gw), [("A", "1", 5), ("B", "x=y", 6)]);
        let svc = env_file_vars(text, "dc.yml", None, Some("svc")).unwrap();
        assert_eq!(pairs(&svc), [("C", "3", 10)]);
        let err = env_file_vars(text, "dc.yml", None, Some("other")).unwrap_err();
        assert!(
            err.message.contains("gateway, svc") && err.message.contains("dc.yml#gateway"),
            "{err:?}"
        );
    }

    #[test]
    fn kubernetes_containers_give_their_env() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: svc\n          env:\n            - name: A\n              value: \"1\"\n            - name: SECRET\n              valueFrom:\n                secretKeyRef: {name: s, key: k}\n            - name: B\n              value: two\n";
        let vars = env_file_vars(text, "k8s.yaml", None, None).unwrap();
        assert_eq!(pairs(&vars), [("A", "1", 9), ("B", "two", 14)]);
    }
}
