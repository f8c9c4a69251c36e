//! `spring-config = "FILE"` in `[server]`, `[clients]`, `[[peer]]`, `[[app]]` and `[[caller]]`:
//! the file's properties ([`crate::scenario::spring`]) become entries of that table, placed
//! before the table's own keys, so that the scenario's keys (and `--set`) override them.
//! `resolve` then binds each as if written in the table; what the model does not use is
//! ignored and listed once per file ([`ignored_warnings`]), never an error, while a near-miss
//! of a modelled key gets its "did you mean".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::scenario::error::{Location, Place, ScenarioError};
use crate::scenario::keys::{Raw, Section, canonical, path_is};
use crate::scenario::spring::{self, Format, MAX_FILE_BYTES, Property};

use super::raw::{Entry, RawScenario, RawTable};

/// The key that names the files (Kind::List: one path or an array, applied in order).
pub(in crate::scenario) const SPRING_CONFIG: &str = "spring-config";
/// `[simulation]`'s list of active profiles.
const SPRING_PROFILES: &str = "spring-profiles";

/// Where Spring files are found: relative paths from the scenario file's folder; texts a
/// [`crate::scenario::ScenarioSource`] already holds (a shard carries them to `merge`) first.
pub(in crate::scenario) struct SpringFiles<'a> {
    pub base: PathBuf,
    pub loaded: &'a BTreeMap<String, String>,
}

impl SpringFiles<'_> {
    /// The folder of scenario `source` (the path as the user named it).
    pub(in crate::scenario) fn beside<'a>(
        source: &str,
        loaded: &'a BTreeMap<String, String>,
    ) -> SpringFiles<'a> {
        let base = Path::new(source)
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        SpringFiles { base, loaded }
    }

    /// The path of `written` from the working folder.
    pub(in crate::scenario) fn path(&self, written: &str) -> PathBuf {
        let path = Path::new(written);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base.join(path)
        }
    }

    /// The text of `written`, bounded in size.
    pub(in crate::scenario) fn text(&self, written: &str) -> Result<String, String> {
        if let Some(text) = self.loaded.get(written) {
            return Ok(text.clone());
        }
        read_bounded(&self.path(written))
    }
}

/// Reads a file of at most [`MAX_FILE_BYTES`] as UTF-8.
pub(in crate::scenario) fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "it is larger than {} KiB; a Spring configuration is a few KiB",
            MAX_FILE_BYTES / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The file names of a table's last `spring-config` entry, with the entry.
fn named_files(table: &RawTable) -> Option<(Vec<String>, Entry)> {
    let entry = table
        .entries
        .iter()
        .rev()
        .find(|e| path_is(&e.path, SPRING_CONFIG))?;
    // Any other type: `resolve` reports it.
    Some((
        strings(&entry.value, |s| vec![s.to_string()])?,
        entry.clone(),
    ))
}

/// Whether scenario `text` may name Spring files: false only when none of its keys can be
/// `spring-config`, so that reading a scenario without one does not parse the text a second time
/// just to learn so (callgrind, `run bench/oracle-kill9.toml --trials 1`: `ScenarioSource::read`
/// 0.55 M -> 0.10 M instructions, the run 5.93 M -> 5.36 M with the digits of `plot/svg.rs`). A key is written whole (bare or quoted), so its relaxed form
/// is a run of the relaxed text; only an escape in a quoted key could spell it otherwise, and a
/// text with a backslash anywhere is parsed.
pub(super) fn may_name_files(text: &str) -> bool {
    text.contains('\\') || canonical(text).contains(&canonical(SPRING_CONFIG))
}

/// Every file the `spring-config` keys of `raw` name, in table order.
pub(super) fn named(raw: &RawScenario) -> Vec<String> {
    raw.singles
        .iter()
        .chain(&raw.peers)
        .chain(&raw.apps)
        .chain(&raw.callers)
        .filter_map(named_files)
        .flat_map(|(files, _)| files)
        .collect()
}

/// The profiles `[simulation] spring-profiles` names, if it does (its type is checked later).
fn profiles(raw: &RawScenario) -> Option<Vec<String>> {
    let simulation = raw
        .singles
        .iter()
        .find(|t| t.section == Section::Simulation)?;
    let entry = simulation
        .entries
        .iter()
        .rev()
        .find(|e| path_is(&e.path, SPRING_PROFILES))?;
    let split = |s: &str| {
        s.split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
    };
    let listed = strings(&entry.value, split)?;
    Some(listed.iter().map(|p| p.trim().to_string()).collect())
}

/// The strings of a string value (as `one` reads it) or of an array's string items; `None`
/// for any other type, which binding reports.
fn strings(value: &Raw, one: impl Fn(&str) -> Vec<String>) -> Option<Vec<String>> {
    match value {
        Raw::Str(s) => Some(one(s)),
        Raw::Array(items) => Some(
            items
                .iter()
                .filter_map(|i| match i {
                    Raw::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Puts every named file's properties in front of its table's entries. Problems with a file
/// as a whole go to `errors`.
pub(super) fn import(
    raw: &mut RawScenario,
    files: &SpringFiles<'_>,
    scenario: &str,
    errors: &mut Vec<ScenarioError>,
) {
    let profiles = profiles(raw);
    let tables = raw
        .singles
        .iter_mut()
        .filter(|t| matches!(t.section, Section::Server | Section::Clients))
        .chain(raw.peers.iter_mut())
        .chain(raw.apps.iter_mut())
        .chain(raw.callers.iter_mut());
    for table in tables {
        let Some((names, entry)) = named_files(table) else {
            continue;
        };
        let mut imported = Vec::new();
        for written in names {
            match load(&written, files, profiles.as_deref()) {
                Ok((display, properties)) => {
                    imported.extend(entries(table, &display, properties));
                }
                Err(problem) => errors.push(ScenarioError::SpringConfig {
                    at: Location::boxed(scenario, problem.0.unwrap_or(entry.value_at.clone())),
                    problem: problem.1,
                }),
            }
        }
        imported.append(&mut table.entries);
        table.entries = imported;
    }
}

/// A problem with a file: where (in the Spring file, else the `spring-config` value) and what.
type FileProblem = (Option<Place>, String);

/// The properties of file `written`, with the path shown in messages.
fn load(
    written: &str,
    files: &SpringFiles<'_>,
    profiles: Option<&[String]>,
) -> Result<(String, Vec<Property>), FileProblem> {
    let display = files.path(written).display().to_string();
    let format = Format::of(written).ok_or_else(|| {
        (
            None,
            format!(
                "`{written}` is neither YAML (.yml, .yaml) nor properties (.properties), the two \
                 formats Spring Boot reads"
            ),
        )
    })?;
    let text = files
        .text(written)
        .map_err(|why| (None, format!("`{display}`: {why}")))?;
    let properties = spring::read(&text, format, profiles).map_err(|p| {
        let place = Place::Spring {
            file: display.clone(),
            line: p.line,
            column: p.column,
        };
        (Some(place), p.message)
    })?;
    Ok((display, properties))
}

/// The entries of `properties` for `table`: `name[i]` items gathered into one array (Spring
/// binds an indexed list or a comma-separated string alike), and `spring.application.name` as
/// the `name` of an `[[app]]` or `[[caller]]` that does not set one.
fn entries(table: &RawTable, file: &str, properties: Vec<Property>) -> Vec<Entry> {
    let named = table.ident().is_some();
    let names_process = matches!(table.section, Section::App | Section::Caller);
    let mut out: Vec<Entry> = Vec::new();
    let mut lists: BTreeMap<String, usize> = BTreeMap::new();
    for p in properties {
        let place = Place::Spring {
            file: file.to_string(),
            line: p.line,
            column: p.column,
        };
        if names_process && canonical(&p.name) == canonical("spring.application.name") {
            if !named {
                out.push(entry(
                    table,
                    vec!["name".to_string()],
                    Raw::Str(p.value),
                    place,
                ));
            }
            continue;
        }
        if let Some((base, _index)) = indexed(&p.name) {
            let key = canonical(base);
            match lists.get(&key) {
                Some(&at) => {
                    if let Raw::Array(items) = &mut out[at].value {
                        items.push(Raw::Str(p.value));
                    }
                }
                None => {
                    lists.insert(key, out.len());
                    let path = segments(base);
                    out.push(entry(
                        table,
                        path,
                        Raw::Array(vec![Raw::Str(p.value)]),
                        place,
                    ));
                }
            }
            continue;
        }
        let mut e = entry(table, segments(&p.name), Raw::Str(p.value.clone()), place);
        e.literal = Some(p.value);
        out.push(e);
    }
    out
}

fn entry(table: &RawTable, path: Vec<String>, value: Raw, place: Place) -> Entry {
    Entry {
        path,
        prefix: format!("{}.", table.label),
        value,
        literal: None,
        key_at: place.clone(),
        value_at: place,
    }
}

/// `base[i]` (the last segment indexed): the base and the index.
fn indexed(name: &str) -> Option<(&str, usize)> {
    let open = name.rfind('[')?;
    let index = name.strip_suffix(']')?[open + 1..].parse().ok()?;
    Some((&name[..open], index))
}

/// The dotted segments of `name`, dots inside `[...]` kept, brackets around a whole segment
/// dropped (`a.[b.c]` is `a`, `b.c`).
fn segments(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '[' => {
                if !current.is_empty() && depth == 0 {
                    out.push(std::mem::take(&mut current));
                }
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// One warning per Spring file: the keys of `ignored` (file, key as written), grouped by their
/// first two segments when several share them.
pub(super) fn ignored_warnings(label: &str, ignored: &[(String, String)]) -> Vec<String> {
    let mut by_file: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (file, key) in ignored {
        by_file.entry(file).or_default().push(key);
    }
    by_file
        .into_iter()
        .map(|(file, keys)| {
            let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
            for key in &keys {
                let head: Vec<&str> = key.splitn(3, '.').take(2).collect();
                groups.entry(head.join(".")).or_default().push(key);
            }
            let shown: Vec<String> = groups
                .into_iter()
                .map(|(head, members)| match members.as_slice() {
                    [one] => (*one).to_string(),
                    many => format!("{head}.* ({})", many.len()),
                })
                .collect();
            format!(
                "{file} (spring-config of {label}): {} key(s) the model does not use, ignored: {}",
                keys.len(),
                shown.join(", ")
            )
        })
        .collect()
}
