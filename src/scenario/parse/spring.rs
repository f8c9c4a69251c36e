//! `spring-config = "FILE"` in `[server]`, `[clients]`, `[[peer]]`, `[[app]]` and `[[caller]]`,
//! with `env-file = "FILE"` and `env = { NAME = "value" }` beside it (and `[simulation] env` /
//! `env-file` for every such table): the files and variables make one Spring environment per
//! table ([`crate::scenario::spring`]), whose properties become entries of that table, placed
//! before the table's own keys, so that the scenario's keys (and `--set`) override them.
//! `resolve` then binds each as if written in the table; what the model does not use is
//! ignored and listed once per file ([`ignored_warnings`]), never an error, while a near-miss
//! of a modelled key gets its "did you mean".

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::scenario::error::{Location, Place, ScenarioError};
use crate::scenario::keys::{Raw, Section, canonical, path_is};
use crate::scenario::spring::{
    self, EnvVar, Environment, Format, MAX_FILE_BYTES, Property, Request, Runtime, SpringFile,
    SpringProblem,
};

use super::raw::{Entry, RawScenario, RawTable};

/// The key that names the files (Kind::List: one path or an array, applied in order).
pub(in crate::scenario) const SPRING_CONFIG: &str = "spring-config";
/// `[simulation]`'s list of active profiles.
const SPRING_PROFILES: &str = "spring-profiles";
/// A file of environment variables, and variables written in the scenario.
pub(in crate::scenario) const ENV_FILE: &str = "env-file";
pub(in crate::scenario) const ENV: &str = "env";

/// Where Spring files are found: relative paths from the scenario file's folder; texts a
/// [`crate::scenario::ScenarioSource`] already holds (a shard carries them to `merge`) first.
pub(in crate::scenario) struct SpringFiles<'a> {
    pub base: PathBuf,
    pub loaded: &'a BTreeMap<String, String>,
    /// Every text read, by the path as written (from the scenario's folder): what a
    /// [`crate::scenario::ScenarioSource`] keeps.
    pub read: RefCell<BTreeMap<String, String>>,
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
        SpringFiles {
            base,
            loaded,
            read: RefCell::new(BTreeMap::new()),
        }
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

    /// The text of `written`, bounded in size; a `.properties` file is ISO-8859-1, as Spring
    /// Boot reads it (`OriginTrackedPropertiesLoader` reads with `StandardCharsets.ISO_8859_1`;
    /// anything else must be `\uXXXX` escapes), and any other file UTF-8.
    pub(in crate::scenario) fn text(&self, written: &str) -> Result<String, String> {
        self.text_as(written, Format::of(written) == Some(Format::Properties))
    }

    /// The text of `written`, ISO-8859-1 when `iso_8859_1` (a `.properties` file, or one an
    /// extension hint names as such), else UTF-8.
    fn text_as(&self, written: &str, iso_8859_1: bool) -> Result<String, String> {
        if let Some(text) = self.loaded.get(written) {
            return Ok(text.clone());
        }
        let text = if iso_8859_1 {
            read_bounded_bytes(&self.path(written)).map(|b| latin1(&b))?
        } else {
            read_bounded(&self.path(written))?
        };
        self.read
            .borrow_mut()
            .insert(written.to_string(), text.clone());
        Ok(text)
    }

    /// Whether `written` names an existing file (or a text already held).
    fn exists(&self, written: &str) -> bool {
        self.loaded.contains_key(written) || self.path(written).is_file()
    }
}

/// ISO-8859-1: each byte is the character of that code.
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Reads a file of at most [`MAX_FILE_BYTES`] as UTF-8.
pub(in crate::scenario) fn read_bounded(path: &Path) -> Result<String, String> {
    let bytes = read_bounded_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The bytes of a file of at most [`MAX_FILE_BYTES`].
fn read_bounded_bytes(path: &Path) -> Result<Vec<u8>, String> {
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
    Ok(bytes)
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
    let relaxed = canonical(text);
    text.contains('\\')
        || relaxed.contains(&canonical(SPRING_CONFIG))
        || relaxed.contains(&canonical(ENV_FILE))
}

/// Every file the `spring-config` keys of `raw` name, in table order.
#[cfg(test)]
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
    profiles_of(simulation_entry(raw, SPRING_PROFILES)?)
}

/// Takes a table's own `spring-profiles` out of it (read here, never bound): the profiles its
/// process runs with, as its own `--spring.profiles.active` (one `[[peer]]` per profile of the
/// HA guides' server file).
fn take_profiles(table: &mut RawTable) -> Option<Vec<String>> {
    let (own, rest): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut table.entries)
        .into_iter()
        .partition(|e| path_is(&e.path, SPRING_PROFILES));
    table.entries = rest;
    own.last().and_then(profiles_of)
}

/// The profiles of a `spring-profiles` entry (a comma-separated string or an array).
fn profiles_of(entry: &Entry) -> Option<Vec<String>> {
    let split = |s: &str| {
        s.split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
    };
    let listed = strings(&entry.value, split)?;
    Some(listed.iter().map(|p| p.trim().to_string()).collect())
}

/// The last `[simulation]` entry of `key`.
fn simulation_entry<'r>(raw: &'r RawScenario, key: &str) -> Option<&'r Entry> {
    raw.singles
        .iter()
        .find(|t| t.section == Section::Simulation)?
        .entries
        .iter()
        .rev()
        .find(|e| path_is(&e.path, key))
}

/// The scenario's seed as written (its type is checked later; 1 when unset, its default).
fn seed(raw: &RawScenario) -> u64 {
    match simulation_entry(raw, "seed").map(|e| &e.value) {
        Some(Raw::Int(n)) => u64::try_from(*n).unwrap_or(1),
        Some(Raw::Str(s)) => s.trim().parse().unwrap_or(1),
        _ => 1,
    }
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

/// A problem: where (in a Spring or variable file, else a key of the scenario) and what.
type FileProblem = (Option<Place>, String);

fn spring_place(p: &SpringProblem) -> Place {
    Place::Spring {
        file: p.file.clone(),
        line: p.line,
        column: p.column,
    }
}

/// Takes a table's `env-file` and `env.<NAME>` entries out of it (they are read here, never
/// bound) and returns the variables they give, in order (the file's, then the written ones).
fn take_env(
    table: &mut RawTable,
    files: &SpringFiles<'_>,
    scenario: &str,
    name: Option<&str>,
) -> Result<Vec<EnvVar>, FileProblem> {
    let (env, rest): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut table.entries)
        .into_iter()
        .partition(|e| {
            path_is(&e.path, ENV_FILE) || (e.path.len() == 2 && path_is(&e.path[..1], ENV))
        });
    table.entries = rest;
    let mut vars = Vec::new();
    for e in env.iter().filter(|e| path_is(&e.path, ENV_FILE)) {
        let listed = strings(&e.value, |s| vec![s.to_string()]).ok_or_else(|| {
            (
                Some(e.value_at.clone()),
                format!(
                    "`{}`: a file of environment variables is a path (a string) or a list of \
                     them",
                    e.display()
                ),
            )
        })?;
        for written in listed {
            let (path, select) = match written.split_once('#') {
                Some((p, s)) => (p.to_string(), Some(s.to_string())),
                None => (written.clone(), None),
            };
            let display = files.path(&path).display().to_string();
            let text = files.text(&path).map_err(|why| {
                (
                    Some(e.value_at.clone()),
                    format!("`{}`: `{display}`: {why}", e.display()),
                )
            })?;
            let got = spring::env_file_vars(&text, &display, select.as_deref(), name)
                .map_err(|p| (Some(spring_place(&p)), p.message))?;
            vars.extend(got);
        }
    }
    for e in env.iter().filter(|e| e.path.len() == 2) {
        let value = match &e.value {
            Raw::Str(s) => s.clone(),
            Raw::Int(n) => n.to_string(),
            Raw::Bool(b) => b.to_string(),
            _ => {
                return Err((
                    Some(e.value_at.clone()),
                    format!(
                        "`{}`: an environment variable's value is text (a string, number or \
                         boolean)",
                        e.display()
                    ),
                ));
            }
        };
        let (line, column) = match &e.key_at {
            Place::LineCol { line, column } => (*line, *column),
            _ => (0, 0),
        };
        vars.push(EnvVar {
            name: e.path[1].clone(),
            value,
            file: format!("{scenario} `{}`", e.display()),
            line,
            column,
        });
    }
    Ok(vars)
}

/// Puts every table's Spring environment (its files, imports and variables) in front of its
/// entries. Problems with a file as a whole go to `errors`; what the reader should know
/// (profile documents not applied, imports not read) is returned.
pub(super) fn import(
    raw: &mut RawScenario,
    files: &SpringFiles<'_>,
    scenario: &str,
    errors: &mut Vec<ScenarioError>,
) -> Vec<String> {
    let profiles = profiles(raw);
    let seed = seed(raw);
    let mut notes = Vec::new();
    let mut everyone = Vec::new();
    if let Some(simulation) = raw
        .singles
        .iter_mut()
        .find(|t| t.section == Section::Simulation)
    {
        match take_env(simulation, files, scenario, None) {
            Ok(vars) => everyone = vars,
            Err(problem) => errors.push(file_error(scenario, problem, &simulation.at)),
        }
    }
    let tables = raw
        .singles
        .iter_mut()
        .filter(|t| matches!(t.section, Section::Server | Section::Clients))
        .chain(raw.peers.iter_mut())
        .chain(raw.apps.iter_mut())
        .chain(raw.callers.iter_mut());
    for (ordinal, table) in tables.enumerate() {
        let name = table.ident().map(str::to_string);
        let mut env = everyone.clone();
        match take_env(table, files, scenario, name.as_deref()) {
            Ok(vars) => env.extend(vars),
            Err(problem) => {
                errors.push(file_error(scenario, problem, &table.at));
                continue;
            }
        }
        let own_profiles = take_profiles(table);
        // A table that names its own profiles chose the others' documents out.
        let chose = own_profiles.is_some();
        let named = named_files(table);
        if named.is_none() && env.is_empty() {
            continue;
        }
        let (names, at) = match &named {
            Some((names, entry)) => (names.clone(), entry.value_at.clone()),
            None => (Vec::new(), table.at.clone()),
        };
        let runtime = Runtime::new(seed, &table.label, ordinal, table.section == Section::App);
        match environment_of(
            &names,
            env,
            own_profiles.or_else(|| profiles.clone()),
            runtime,
            files,
            name.as_deref(),
        ) {
            Ok(environment) => {
                notes.extend(environment_notes(&environment, &table.label, chose));
                match environment.properties(0) {
                    Ok(properties) => {
                        notes.extend(instance_id_notes(&environment, table));
                        let mut imported = entries(table, properties);
                        imported.append(&mut table.entries);
                        table.entries = imported;
                    }
                    Err(p) => errors.push(file_error(
                        scenario,
                        (Some(spring_place(&p)), p.message),
                        &at,
                    )),
                }
            }
            Err(problem) => errors.push(file_error(scenario, problem, &at)),
        }
    }
    notes
}

fn file_error(scenario: &str, problem: FileProblem, fallback: &Place) -> ScenarioError {
    ScenarioError::SpringConfig {
        at: Location::boxed(scenario, problem.0.unwrap_or_else(|| fallback.clone())),
        problem: problem.1,
    }
}

/// The Spring environment of a table's files `names` and variables `env`; the process is
/// named `name`, else by its files' spring.application.name.
fn environment_of(
    names: &[String],
    env: Vec<EnvVar>,
    profiles: Option<Vec<String>>,
    runtime: Runtime,
    files: &SpringFiles<'_>,
    name: Option<&str>,
) -> Result<Environment, FileProblem> {
    let mut loaded = Vec::new();
    for written in names {
        loaded.push(load(written, files, None)?);
    }
    let import = |importer: &SpringFile, location: &str, optional: bool, hint: Option<Format>| {
        let written = relative_to_importer(&importer.written, location);
        if optional && !files.exists(&written) {
            return Ok(None);
        }
        load(&written, files, hint)
            .map(Some)
            .map_err(|(_, why)| why)
    };
    let mut request = Request {
        files: loaded,
        env,
        profiles,
        runtime: runtime.clone(),
        import: &import,
    };
    let environment =
        spring::environment(&request).map_err(|p| (Some(spring_place(&p)), p.message))?;
    let own = environment
        .value("spring.application.name", 0)
        .and_then(Result::ok);
    match name.map(str::to_string).or(own) {
        Some(n) => {
            request.runtime = runtime.named(&n);
            spring::environment(&request).map_err(|p| (Some(spring_place(&p)), p.message))
        }
        None => Ok(environment),
    }
}

/// The path (from the scenario's folder) of `location` as a file at `importer` names it:
/// Spring resolves an import relative to the file that declares it
/// (`StandardConfigDataLocationResolver#resolve` with the parent resource).
fn relative_to_importer(importer: &str, location: &str) -> String {
    if Path::new(location).is_absolute() {
        return location.to_string();
    }
    let folder = Path::new(importer).parent().unwrap_or(Path::new(""));
    folder
        .join(location.trim_start_matches("./"))
        .to_string_lossy()
        .replace('\\', "/")
}

/// The file `written` (from the scenario's folder), read.
fn load(
    written: &str,
    files: &SpringFiles<'_>,
    hint: Option<Format>,
) -> Result<SpringFile, FileProblem> {
    let display = files.path(written).display().to_string();
    let format = hint.or_else(|| Format::of(written)).ok_or_else(|| {
        (
            None,
            format!(
                "`{written}` is neither YAML (.yml, .yaml) nor properties (.properties), the two \
                 formats Spring Boot reads; a file without such an extension is imported with a \
                 hint, as in `optional:file:.env[.properties]`"
            ),
        )
    })?;
    let text = files
        .text_as(written, format == Format::Properties)
        .map_err(|why| (None, format!("`{display}`: {why}")))?;
    Ok(SpringFile {
        display,
        written: written.to_string(),
        format,
        text,
    })
}

/// A note per profile document not applied (unless the table `chose` its profiles itself) and
/// per other remark of the environment.
fn environment_notes(environment: &Environment, label: &str, chose: bool) -> Vec<String> {
    let active = environment.active_profiles.join(", ");
    let mut out: Vec<String> = environment
        .skipped
        .iter()
        .filter(|s| !chose || s.kind != "on-profile")
        .map(|s| match s.kind {
            "on-cloud-platform" => format!(
                "{}:{} (spring-config of {label}): the document for cloud platform `{}` is not \
                 applied: a simulation runs on no cloud platform, and Spring applies it only on \
                 that one; to apply it, give the table `env = {{ SPRING_MAIN_CLOUDPLATFORM = \
                 \"{}\" }}` (spring.main.cloud-platform)",
                s.file, s.line, s.condition, s.condition
            ),
            _ => format!(
                "{}:{} (spring-config of {label}): the document for profile `{}` is not applied \
                 (active profiles: {active}); to apply it, set `simulation.spring-profiles` or \
                 run with --profile, as Spring needs the profile active",
                s.file, s.line, s.condition
            ),
        })
        .collect();
    out.extend(
        environment
            .notes
            .iter()
            .map(|n| format!("{n} (spring-config of {label})")),
    );
    out
}

/// Where the instances of an `[[app]]` would share one `eureka.instance.instance-id` (Eureka
/// keeps one registration per id, `AbstractInstanceRegistry#register`, so they would replace
/// each other), a warning: the model names instances `<app>-<k>` whatever the file says.
fn instance_id_notes(environment: &Environment, table: &RawTable) -> Vec<String> {
    if table.section != Section::App {
        return Vec::new();
    }
    let instances = table
        .entries
        .iter()
        .rev()
        .find_map(|e| match &e.value {
            Raw::Int(n) if path_is(&e.path, "instances") => usize::try_from(*n).ok(),
            _ => None,
        })
        .unwrap_or(1)
        .min(10_000);
    let ids: Vec<String> = (0..instances)
        .filter_map(|k| environment.value("eureka.instance.instance-id", k)?.ok())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    if ids.len() > 1 && sorted.len() < ids.len() {
        vec![format!(
            "{}: the {} instances resolve eureka.instance.instance-id to {} distinct value(s) \
             (`{}` ...): on the real stack Eureka keeps one registration per instance id, so \
             they would replace each other; the model keeps them apart. Make the id unique \
             per instance, as Spring's default does (`${{spring.cloud.client.hostname}}:\
             ${{spring.application.name}}:${{server.port}}`) or with `${{random.value}}`",
            table.label,
            ids.len(),
            sorted.len(),
            ids[0]
        )]
    } else {
        Vec::new()
    }
}

/// The entries of `properties` for `table`: `name[i]` items gathered into one array in the order
/// of their indices (Spring binds an indexed list or a comma-separated string alike,
/// `IndexedElementsBinder#bindIndexed` from `[0]` up), and `spring.application.name` as the
/// `name` of an `[[app]]` or `[[caller]]` that does not set one. A list with a missing index is
/// refused where it binds: the binder stops at the gap and fails on the items after it
/// (`UnboundConfigurationPropertiesException`).
fn entries(table: &RawTable, properties: Vec<Property>) -> Vec<Entry> {
    let named = table.ident().is_some();
    let names_process = matches!(table.section, Section::App | Section::Caller);
    let mut out: Vec<Entry> = Vec::new();
    // Each list's entry in `out`, and its items by index.
    let mut lists: BTreeMap<String, (usize, Vec<(usize, Property)>)> = BTreeMap::new();
    for p in properties {
        let place = Place::Spring {
            file: p.file.clone(),
            line: p.line,
            column: p.column,
        };
        if names_process && canonical(&p.name) == canonical("spring.application.name") {
            if !named {
                let mut e = entry(table, vec!["name".to_string()], Raw::Str(p.value), place);
                e.refusal = p.refusal;
                out.push(e);
            }
            continue;
        }
        if let Some((base, index)) = indexed(&p.name) {
            let key = canonical(base);
            match lists.get_mut(&key) {
                Some((_, items)) => items.push((index, p)),
                None => {
                    let e = entry(table, segments(base), Raw::Array(Vec::new()), place);
                    lists.insert(key, (out.len(), vec![(index, p)]));
                    out.push(e);
                }
            }
            continue;
        }
        let mut e = entry(table, segments(&p.name), Raw::Str(p.value.clone()), place);
        e.literal = Some(p.value);
        e.refusal = p.refusal;
        out.push(e);
    }
    for (at, mut items) in lists.into_values() {
        items.sort_by_key(|(index, _)| *index);
        let e = &mut out[at];
        let mut values = Vec::new();
        for (expected, (index, p)) in items.into_iter().enumerate() {
            if index != expected && e.refusal.is_none() {
                e.refusal = Some(format!(
                    "`{}` has no item [{expected}] before [{index}]: Spring's binder reads a \
                     list from [0] up to the first missing index and refuses to start on the \
                     items after it (UnboundConfigurationPropertiesException); number the items \
                     from 0 without a gap",
                    p.name
                        .get(..p.name.rfind('[').unwrap_or(p.name.len()))
                        .unwrap_or(&p.name)
                ));
            }
            if e.refusal.is_none() {
                e.refusal = p.refusal;
            }
            values.push(Raw::Str(p.value));
        }
        e.value = Raw::Array(values);
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
        refusal: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn property(name: &str, value: &str, line: usize) -> Property {
        Property {
            name: name.to_string(),
            value: value.to_string(),
            file: "application.properties".to_string(),
            line,
            column: 1,
            refusal: None,
        }
    }

    /// `IndexedElementsBinder#bindIndexed` reads a list from `[0]` up, whatever the order the
    /// items were written in, and fails on items after a missing index
    /// (`UnboundConfigurationPropertiesException`).
    #[test]
    fn list_items_bind_in_index_order_and_a_gap_is_refused() {
        let table = RawTable {
            section: Section::App,
            label: "app[0]".to_string(),
            at: Place::File,
            entries: Vec::new(),
        };
        let got = entries(
            &table,
            vec![property("a.b[1]", "y", 1), property("a.b[0]", "x", 2)],
        );
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].value,
            Raw::Array(vec![Raw::Str("x".into()), Raw::Str("y".into())])
        );
        assert_eq!(got[0].refusal, None);
        let got = entries(
            &table,
            vec![property("a.b[0]", "x", 1), property("a.b[2]", "z", 2)],
        );
        let why = got[0].refusal.as_deref().unwrap();
        assert!(
            why.starts_with("`a.b` has no item [1] before [2]")
                && why.contains("UnboundConfigurationPropertiesException"),
            "{why}"
        );
    }
}
