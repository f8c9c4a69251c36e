//! The teams' own Spring Boot files (`spring-config = "FILE"`): application.yml or
//! application.properties read into the properties Spring's `Environment` would hold, so that a
//! scenario can take its settings from the files it makes claims about.
//!
//! - Documents: YAML's `---` and Boot 2.4+'s `#---` in .properties. A document with
//!   `spring.config.activate.on-profile` (Boot 2.4+) or `spring.profiles` (before) applies only
//!   when its profile expression holds; later documents override earlier ones (Boot 2.4+
//!   `StandardConfigDataLocationResolver` order, which is also the pre-2.4 result for the usual
//!   layout of the default document first).
//! - Active profiles: `simulation.spring-profiles`, else the file's own
//!   `spring.profiles.active` plus `spring.profiles.include` (from documents without a profile
//!   condition).
//! - Relaxed binding: one property may be spelt kebab, camel or underscore in different
//!   documents; the later spelling wins, as Boot's binder finds it in the later source first.
//! - `${name}` and `${name:default}` placeholders (nested, in defaults too) resolve against the
//!   file's own properties by relaxed name (`PropertySourcesPlaceholdersResolver`); nothing is
//!   read from the environment, so a run never depends on the machine it runs on: a placeholder
//!   with neither a property nor a default is an error, as it is for Spring.
//!
//! The scenario side (which keys bind, which are ignored, precedence) is `parse::spring`.

mod profiles;
mod properties;
mod yaml;

use std::collections::HashMap;

use super::keys::canonical;

/// The largest Spring file read (a real one is a few kilobytes).
pub(in crate::scenario) const MAX_FILE_BYTES: u64 = 1 << 20;
/// Deepest placeholder nesting (a cycle is reported before this).
const MAX_PLACEHOLDER_DEPTH: usize = 32;

/// One property as Spring's `Environment` sees it, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) struct Property {
    /// The flattened name as written (`eureka.client.serviceUrl.defaultZone`, `a.b[0]`).
    pub name: String,
    pub value: String,
    /// 1-based line and column (in characters) of the name.
    pub line: usize,
    pub column: usize,
}

/// One document of a file, before profiles apply.
#[derive(Debug, Clone, Default)]
pub(in crate::scenario) struct Document {
    pub properties: Vec<Property>,
}

/// What is wrong in a Spring file, and where (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) struct SpringProblem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The format of a Spring file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scenario) enum Format {
    Yaml,
    Properties,
}

impl Format {
    /// `.yml`/`.yaml` or `.properties`; `None` for anything else.
    pub(in crate::scenario) fn of(path: &str) -> Option<Format> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".yml") || lower.ends_with(".yaml") {
            Some(Format::Yaml)
        } else if lower.ends_with(".properties") {
            Some(Format::Properties)
        } else {
            None
        }
    }
}

/// Property names that choose documents and profiles; consumed here, never bound.
const ACTIVATION: [&str; 2] = ["spring.config.activate.on-profile", "spring.profiles"];
const ACTIVE: &str = "spring.profiles.active";
const INCLUDE: &str = "spring.profiles.include";

/// The properties of `text` in `format` with the profiles `profiles` (or the file's own when
/// `None`) active, merged and with placeholders resolved, in the order they were first written.
pub(in crate::scenario) fn read(
    text: &str,
    format: Format,
    profiles: Option<&[String]>,
) -> Result<Vec<Property>, SpringProblem> {
    let docs = match format {
        Format::Yaml => yaml::documents(text)?,
        Format::Properties => properties::documents(text)?,
    };
    let conditions: Vec<Option<&Property>> = docs
        .iter()
        .map(|d| {
            d.properties.iter().rev().find(|p| {
                ACTIVATION
                    .iter()
                    .any(|a| canonical(&p.name) == canonical(a))
            })
        })
        .collect();
    let active: Vec<String> = match profiles {
        Some(p) => p.to_vec(),
        None => own_profiles(&docs, &conditions),
    };
    let mut merged: Vec<Property> = Vec::new();
    // Each merged property's index by its relaxed name: a search of `merged` per property made
    // a file of n keys cost n² (50 000 keys: more than 30 s in the fuzz build; issue 14).
    let mut index: HashMap<String, usize> = HashMap::new();
    for (doc, condition) in docs.iter().zip(&conditions) {
        if let Some(condition) = condition {
            let applies =
                profiles::matches(&condition.value, &active).map_err(|message| SpringProblem {
                    line: condition.line,
                    column: condition.column,
                    message: format!("profile expression: {message}"),
                })?;
            if !applies {
                continue;
            }
        }
        for p in &doc.properties {
            let key = canonical(&p.name);
            if ACTIVATION
                .iter()
                .chain(&[ACTIVE, INCLUDE])
                .any(|a| canonical(a) == key)
            {
                continue;
            }
            match index.get(&key) {
                Some(&i) => merged[i] = p.clone(),
                None => {
                    index.insert(key, merged.len());
                    merged.push(p.clone());
                }
            }
        }
    }
    resolve_placeholders(&merged, &index)
}

/// `spring.profiles.active` and `spring.profiles.include` of the unconditional documents (the
/// last value of each wins), comma-separated.
fn own_profiles(docs: &[Document], conditions: &[Option<&Property>]) -> Vec<String> {
    let last = |name: &str| {
        docs.iter()
            .zip(conditions)
            .filter(|(_, c)| c.is_none())
            .flat_map(|(d, _)| &d.properties)
            .rfind(|p| canonical(&p.name) == canonical(name))
            .map(|p| p.value.clone())
    };
    [last(ACTIVE), last(INCLUDE)]
        .into_iter()
        .flatten()
        .flat_map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The properties with their placeholders resolved; `index` finds a property by its relaxed
/// name.
fn resolve_placeholders(
    properties: &[Property],
    index: &HashMap<String, usize>,
) -> Result<Vec<Property>, SpringProblem> {
    let mut expansion = Expansion {
        properties,
        index,
        work_left: MAX_EXPANSION_WORK,
    };
    properties
        .iter()
        .map(|p| {
            let value = expansion
                .expand(&p.value, &mut Vec::new())
                .map_err(|message| SpringProblem {
                    line: p.line,
                    column: p.column,
                    message: format!("`{}`: {message}", p.name),
                })?;
            Ok(Property { value, ..p.clone() })
        })
        .collect()
}

/// The most work resolving one file's placeholders may take, in bytes written plus
/// placeholders looked up: 16 times the largest file. Placeholders that each use the one
/// before twice double at every step (`a1=${a0}${a0}`, `a2=${a1}${a1}`, ...): 30 lines
/// expand to gigabytes, or to 2^30 lookups of empty values, without any cycle or nesting
/// deeper than [`MAX_PLACEHOLDER_DEPTH`] (fuzzing, issue 14).
const MAX_EXPANSION_WORK: u64 = 16 * MAX_FILE_BYTES;

/// One file's placeholder resolution, with the work it has left.
struct Expansion<'a> {
    properties: &'a [Property],
    index: &'a HashMap<String, usize>,
    work_left: u64,
}

impl Expansion<'_> {
    /// Counts `amount` of work; an error once the file has used it all.
    fn spend(&mut self, amount: usize) -> Result<(), String> {
        let amount = u64::try_from(amount).unwrap_or(u64::MAX);
        self.work_left = self.work_left.checked_sub(amount).ok_or_else(|| {
            format!(
                "its placeholders expand to more than {} MiB of text (placeholders that use \
                 others several times over double at every step); allowed: placeholders that \
                 expand to at most that, in all, for the file",
                MAX_EXPANSION_WORK >> 20
            )
        })?;
        Ok(())
    }

    /// `text` with every `${name[:default]}` replaced; `seen` are the names being expanded.
    fn expand(&mut self, text: &str, seen: &mut Vec<String>) -> Result<String, String> {
        if seen.len() > MAX_PLACEHOLDER_DEPTH {
            return Err(format!(
                "placeholders nested deeper than {MAX_PLACEHOLDER_DEPTH}"
            ));
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            self.spend(start + 1)?;
            out.push_str(&rest[..start]);
            let inner_start = start + 2;
            let end = closing_brace(&rest[inner_start..])
                .ok_or_else(|| format!("`{}` has a `${{` without its `}}`", text))?;
            let inner = &rest[inner_start..inner_start + end];
            let (name, default) = split_default(inner);
            let name = self.expand(name, seen)?;
            let key = canonical(name.trim());
            if seen.contains(&key) {
                return Err(format!("circular placeholder reference `{name}`"));
            }
            let found = self.index.get(&key).map(|&i| &self.properties[i]);
            let value = match (found, default) {
                (Some(p), _) => {
                    seen.push(key);
                    let v = self.expand(&p.value, seen)?;
                    seen.pop();
                    v
                }
                (None, Some(default)) => self.expand(default, seen)?,
                (None, None) => {
                    return Err(format!(
                        "could not resolve placeholder `${{{name}}}`: no property `{name}` in \
                         the file and no default (write `${{{name}:default}}`); the \
                         environment is not read"
                    ));
                }
            };
            self.spend(value.len())?;
            out.push_str(&value);
            rest = &rest[inner_start + end + 1..];
        }
        self.spend(rest.len())?;
        out.push_str(rest);
        Ok(out)
    }
}

/// The offset of the `}` that closes a placeholder whose body starts `body`.
fn closing_brace(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'{') {
            depth += 1;
            i += 2;
            continue;
        }
        if bytes[i] == b'}' {
            if depth == 0 {
                return Some(i);
            }
            depth -= 1;
        }
        i += 1;
    }
    None
}

/// `name:default` at the first `:` outside a nested placeholder.
fn split_default(inner: &str) -> (&str, Option<&str>) {
    let mut depth = 0usize;
    let bytes = inner.as_bytes();
    for i in 0..bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 0 => return (&inner[..i], Some(&inner[i + 1..])),
            _ => {}
        }
    }
    (inner, None)
}

/// Spring's `StringToBooleanConverter`: `true`, `on`, `yes`, `1` and `false`, `off`, `no`,
/// `0`, any case, trimmed; anything else is left as written (and refused by the key).
pub(in crate::scenario) fn spring_boolean(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Some(true),
        "false" | "off" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Spring Boot's `DurationStyle#detectAndParse` with milliseconds as the default unit (the
/// unit of every `java.time.Duration` property the model reads): `500`, `500ms`, `30s`, `2m`,
/// `1h`, `1d`, `us`/`ns` (rounded down to ms), or ISO-8601 `PT30S`, `PT1M30.5S`, `P1D`. The
/// result in whole milliseconds, or `None` when it is neither.
pub(in crate::scenario) fn duration_ms(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if t.starts_with(['P', 'p']) {
        return iso_duration_ms(t);
    }
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '-' && c != '+')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: i128 = number.parse().ok()?;
    let scale_ns: i128 = match unit.to_ascii_lowercase().as_str() {
        "" | "ms" => 1_000_000,
        "ns" => 1,
        "us" => 1_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    };
    u64::try_from(n.checked_mul(scale_ns)? / 1_000_000).ok()
}

/// `PnDTnHnMn.nS` (java.time.Duration#parse), days to fractional seconds.
fn iso_duration_ms(text: &str) -> Option<u64> {
    let upper = text.to_ascii_uppercase();
    let body = upper.strip_prefix('P')?;
    let (days, time) = match body.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    let mut ms: f64 = 0.0;
    if !days.is_empty() {
        ms += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400_000.0;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (unit, scale) in [('H', 3_600_000.0), ('M', 60_000.0), ('S', 1_000.0)] {
            if let Some(at) = time.find(unit) {
                ms += time[..at].parse::<f64>().ok()? * scale;
                time = &time[at + 1..];
            }
        }
        if !time.is_empty() {
            return None;
        }
    }
    (ms.is_finite() && ms >= 0.0 && ms < u64::MAX as f64).then(|| ms.floor() as u64)
}

#[cfg(test)]
mod tests;
