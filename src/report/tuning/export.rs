//! What the tuning page hands the user to take away: the scenario file with the page's
//! settings written in, and one `application.yml` snippet per role (the Eureka server, the
//! services, the callers) with the keys of the page that differ from the release's defaults.
//!
//! The scenario is the file's own text edited in place (`toml_edit`: its comments and layout
//! kept): each changed setting replaces the key in the tables it names, whatever spelling the
//! file used (Spring's relaxed binding: `responseCacheUpdateIntervalMs` is
//! `response-cache-update-interval-ms`; Ribbon's keys exactly, as Archaius reads them).

use serde::Serialize;
use toml_edit::{DocumentMut, InlineTable, Item, TableLike, Value};

use crate::experiment::tuning::{CONTROLS, Control, Role, Tuned, ValueKind, release_defaults};
use crate::scenario::{Scenario, ScenarioSource};

/// Why the page's settings cannot be written as a scenario file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{file}: the scenario file does not parse as TOML: {message}")]
    Toml { file: String, message: String },
    #[error("{file}: `{table}` is not a table or an array of tables; cannot write {key} in it")]
    NotATable {
        file: String,
        table: String,
        key: String,
    },
}

/// One role's `application.yml` snippet.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Snippet {
    pub role: &'static str,
    /// The YAML text (a comment alone when no key differs from the defaults).
    pub yaml: String,
    /// The keys it sets, as `(key, value)`.
    pub keys: Vec<(&'static str, String)>,
}

/// Everything the page exports.
#[derive(Debug, Serialize)]
pub struct Export {
    /// The settings as the page's query (the shareable URL's).
    pub query: String,
    pub overrides: Vec<String>,
    /// The scenario file with the settings written in.
    pub toml: String,
    pub snippets: Vec<Snippet>,
}

/// The scenario text of `source` with `tuned`'s settings written in (`base`: the file's own
/// scenario, which names the tables).
pub fn scenario_toml(
    source: &ScenarioSource,
    base: &Scenario,
    tuned: &Tuned,
) -> Result<String, ExportError> {
    let mut doc: DocumentMut =
        source
            .text
            .parse()
            .map_err(|e: toml_edit::TomlError| ExportError::Toml {
                file: source.source.clone(),
                message: e.message().to_string(),
            })?;
    for (control, value) in tuned.settings.changed() {
        let value = toml_value(control, value);
        let index = control.table_index(base);
        for_tables(&mut doc, control.table(), index, |table| {
            set_key(table, control.key, control.exact_key(), value.clone());
        })
        .map_err(|table| ExportError::NotATable {
            file: source.source.clone(),
            table,
            key: control.key.to_string(),
        })?;
    }
    Ok(doc.to_string())
}

/// `value` as a TOML value of the control's kind (numbers and booleans bare, names quoted).
fn toml_value(control: &Control, value: &str) -> Value {
    match control.kind {
        ValueKind::Number { .. } => value
            .parse::<i64>()
            .map_or_else(|_| Value::from(value), Value::from),
        ValueKind::Bool => Value::from(value == "true"),
        ValueKind::Choice => Value::from(value),
    }
}

/// Calls `edit` on table `name` (created when absent) or, for an array of tables, on each of
/// them or on the `index`-th; `Err(name)` when the file has something else by that name.
pub(super) fn for_tables(
    doc: &mut DocumentMut,
    name: &str,
    index: Option<usize>,
    mut edit: impl FnMut(&mut dyn TableLike),
) -> Result<(), String> {
    let array = matches!(name, "app" | "caller" | "shutdown" | "peer");
    let item = doc
        .entry(name)
        .or_insert_with(|| Item::Table(toml_edit::Table::new()));
    if array {
        let tables = item
            .as_array_of_tables_mut()
            .ok_or_else(|| name.to_string())?;
        for (k, table) in tables.iter_mut().enumerate() {
            if index.is_none_or(|i| i == k) {
                edit(table);
            }
        }
        return Ok(());
    }
    let table = item.as_table_like_mut().ok_or_else(|| name.to_string())?;
    edit(table);
    Ok(())
}

/// A key path in Spring's relaxed form: each segment lower case without `-` and `_`.
fn relaxed(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| s.replace(['-', '_'], "").to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether the dotted path `segments` names `key`.
fn names(segments: &[String], key: &str, exact: bool) -> bool {
    if exact {
        segments.join(".") == key
    } else {
        let key: Vec<String> = key.split('.').map(str::to_string).collect();
        relaxed(segments) == relaxed(&key)
    }
}

/// Removes every spelling of `key` from `table` (and the tables emptied by it); whether one
/// was there.
pub(super) fn remove_key(table: &mut dyn TableLike, key: &str, exact: bool) -> bool {
    let mut path = Vec::new();
    remove_in(table, &mut path, key, exact)
}

fn remove_in(table: &mut dyn TableLike, path: &mut Vec<String>, key: &str, exact: bool) -> bool {
    let keys: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
    let mut found = false;
    for k in keys {
        path.push(k.clone());
        let Some(item) = table.get_mut(&k) else {
            path.pop();
            continue;
        };
        if let Some(sub) = item.as_table_like_mut() {
            if remove_in(sub, path, key, exact) {
                found = true;
                if sub.is_empty() {
                    table.remove(&k);
                }
            }
        } else if names(path, key, exact) {
            table.remove(&k);
            found = true;
        }
        path.pop();
    }
    found
}

/// The value of `key` in `table` under any spelling, if it is there.
#[cfg(test)]
pub(super) fn find_key(table: &dyn TableLike, key: &str, exact: bool) -> Option<Value> {
    fn find_in(
        table: &dyn TableLike,
        path: &mut Vec<String>,
        key: &str,
        exact: bool,
    ) -> Option<Value> {
        for (k, item) in table.iter() {
            path.push(k.to_string());
            let found = match item.as_table_like() {
                Some(sub) => find_in(sub, path, key, exact),
                None if names(path, key, exact) => item.as_value().cloned(),
                None => None,
            };
            path.pop();
            if found.is_some() {
                return found;
            }
        }
        None
    }
    find_in(table, &mut Vec::new(), key, exact)
}

/// Sets `key` (dotted) in `table` to `value`, replacing it under any spelling.
pub(super) fn set_key(table: &mut dyn TableLike, key: &str, exact: bool, value: Value) {
    remove_key(table, key, exact);
    let segments: Vec<&str> = key.split('.').collect();
    insert_dotted(table, &segments, value);
}

/// Inserts `value` at the dotted path `segments`, written as dotted keys
/// (`eureka.server.x = 1`) under tables that are already there.
fn insert_dotted(table: &mut dyn TableLike, segments: &[&str], value: Value) {
    let [first, rest @ ..] = segments else {
        return;
    };
    if rest.is_empty() {
        table.insert(first, Item::Value(value));
        return;
    }
    let is_table = table.get(first).is_some_and(|i| i.is_table_like());
    if !is_table {
        let mut sub = InlineTable::new();
        sub.set_dotted(true);
        table.insert(first, Item::Value(Value::InlineTable(sub)));
    }
    if let Some(sub) = table.get_mut(first).and_then(|i| i.as_table_like_mut()) {
        insert_dotted(sub, rest, value);
    }
}

/// The `application.yml` snippets of the page's scenario: per role, the keys of its controls
/// whose value in that role's processes (the stopped app, the first caller, the server)
/// differs from the release's default.
pub fn snippets(tuned: &Tuned) -> Vec<Snippet> {
    let scenario = &tuned.current;
    let release = scenario.simulation.release.name();
    let defaults = release_defaults(&release).unwrap_or_default();
    [Role::Server, Role::Services, Role::Callers]
        .into_iter()
        .map(|role| {
            let keys: Vec<(&'static str, String)> = CONTROLS
                .iter()
                .filter(|c| c.role == role)
                .filter_map(|c| {
                    let value = c.value_in(scenario)?;
                    let default = defaults.iter().find(|(id, _)| *id == c.id)?.1.clone();
                    (default.as_deref() != Some(value.as_str())).then_some((c.key, value))
                })
                .collect();
            Snippet {
                role: role.name(),
                yaml: yaml(role, &release, &keys),
                keys,
            }
        })
        .collect()
}

/// Nested YAML of dotted `keys` (each a number or a boolean), after a comment naming the role.
fn yaml(role: Role, release: &str, keys: &[(&'static str, String)]) -> String {
    let whose = match role {
        Role::Server => "the Eureka server",
        Role::Services => "each service instance",
        _ => "each caller (gateway)",
    };
    let mut out =
        format!("# application.yml of {whose}: the keys that differ from the {release} defaults\n");
    if keys.is_empty() {
        out.push_str("# (none: the defaults hold)\n");
        return out;
    }
    let mut written: Vec<&str> = Vec::new();
    for (key, value) in keys {
        let segments: Vec<&str> = key.split('.').collect();
        // The segments already opened by the previous key.
        let shared = written
            .iter()
            .zip(&segments)
            .take_while(|(a, b)| a == b)
            .count()
            .min(segments.len() - 1);
        for (depth, segment) in segments.iter().enumerate().skip(shared) {
            let indent = "  ".repeat(depth);
            if depth + 1 == segments.len() {
                out.push_str(&format!("{indent}{segment}: {value}\n"));
            } else {
                out.push_str(&format!("{indent}{segment}:\n"));
            }
        }
        written = segments;
    }
    out
}

/// Everything the page exports for `tuned`, as JSON.
pub fn export(
    source: &ScenarioSource,
    base: &Scenario,
    tuned: &Tuned,
) -> Result<Export, ExportError> {
    Ok(Export {
        query: tuned.settings.query(),
        overrides: tuned.overrides.clone(),
        toml: scenario_toml(source, base, tuned)?,
        snippets: snippets(tuned),
    })
}

#[cfg(test)]
mod tests;
