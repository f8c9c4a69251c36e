//! The teams' own Spring Boot files (`spring-config = "FILE"`): application.yml or
//! application.properties, with the environment variables the table is given, read into the
//! properties one Spring `Environment` would hold, so that a scenario can take its settings
//! from the files it makes claims about.
//!
//! One table's files, imports and variables are ONE environment, as Spring Boot builds it
//! (`ConfigDataEnvironment`, Boot 2.4+; the same result as the older `ConfigFileApplicationListener`
//! for the usual layouts):
//! - Documents: YAML's `---` and Boot 2.4+'s `#---` in .properties. A document with
//!   `spring.config.activate.on-profile` (Boot 2.4+) or `spring.profiles` (before), a string or a
//!   YAML list, applies only when its profile expression holds; one with
//!   `spring.config.activate.on-cloud-platform` only on that platform, which a simulation never
//!   runs on unless `spring.main.cloud-platform` says so (`CloudPlatform#isEnforced`). Later
//!   documents override earlier ones, a later file of the list an earlier one, and a file named
//!   by `spring.config.import` the document that imports it (`ConfigDataEnvironmentContributors`).
//!   An import's location may hold placeholders, resolved from the variables and the documents
//!   read before (`ConfigDataEnvironmentContributorPlaceholdersResolver`). Once the profiles are
//!   known, each file brings its profile-specific files from its folder (`application-prod.yml`
//!   beside `application.yml`, `StandardConfigDataLocationResolver#resolveProfileSpecific`),
//!   ranking above it.
//! - Lists are taken whole from one source (`IndexedElementsBinder#bindIndexed`): a later
//!   document's list, indexed or comma-separated, replaces the earlier list; maps merge by key
//!   ([`Merged`]).
//! - Active profiles (`Profiles`): `simulation.spring-profiles` (the command line's
//!   `--spring.profiles.active`), else `spring.profiles.active` from the environment variables or
//!   the documents without a profile condition, string or list, plus `spring.profiles.include`,
//!   each followed by its `spring.profiles.group.<name>` members; none at all is
//!   `spring.profiles.default` (`default`). Every profile document that is not applied is
//!   reported ([`Environment::skipped`]).
//! - Environment variables rank above the files (`SystemEnvironmentPropertySource`) and bind by
//!   `SystemEnvironmentPropertyMapper`'s names (see `env`).
//! - Relaxed binding: one property may be spelt kebab, camel or underscore in different
//!   documents; the later spelling wins, as Boot's binder finds it in the later source first.
//! - `${name}` and `${name:default}` placeholders (nested, in defaults too) resolve against the
//!   whole environment by relaxed name (`PropertySourcesPlaceholdersResolver`), with the run-time
//!   sources Spring adds (`runtime`: `random.*`, `spring.cloud.client.*`, `server.port`). Nothing
//!   is read from the machine, so a run never depends on where it runs. A placeholder nothing
//!   supplies stays as written, as the binder leaves it (`ignoreUnresolvablePlaceholders`), and
//!   its property carries why ([`Property::refusal`]): an error only if the model binds it.
//! - A Maven resource-filtering token left unfiltered (`@project.version@`, `#name#`) is warned
//!   about (`filtering`).
//!
//! The scenario side (which keys bind, which are ignored, precedence) is `parse::spring`.

mod env;
mod evidence;
mod filtering;
mod placeholders;
mod profiles;
mod properties;
mod runtime;
mod yaml;

use std::collections::HashMap;

use super::keys::canonical;

pub(in crate::scenario) use env::{EnvVar, env_file_vars};
pub use evidence::{FileEvidence, ProfileDocument, file_evidence, profile_document};
pub(in crate::scenario) use placeholders::DRAWN_PER_INSTANCE;
pub(in crate::scenario) use runtime::Runtime;

/// The largest Spring file read (a real one is a few kilobytes).
pub(in crate::scenario) const MAX_FILE_BYTES: u64 = 1 << 20;

/// One property as Spring's `Environment` sees it, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) struct Property {
    /// The flattened name as written (`eureka.client.serviceUrl.defaultZone`, `a.b[0]`).
    pub name: String,
    pub value: String,
    /// The file (or the variables' origin) it was written in, as messages name it.
    pub file: String,
    /// 1-based line and column (in characters) of the name.
    pub line: usize,
    pub column: usize,
    /// Why its value cannot be what Spring binds (a placeholder nothing supplies, a value drawn
    /// anew for each instance): said only if the model binds the key.
    pub refusal: Option<String>,
}

/// One document of a file, before profiles apply.
#[derive(Debug, Clone, Default)]
pub(in crate::scenario) struct Document {
    pub properties: Vec<Property>,
    /// The properties (by index) whose YAML line held a `#name#` Maven token, read as a
    /// comment, with the token.
    pub hash_tokens: Vec<(usize, String)>,
}

/// What is wrong in a Spring file, and where (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) struct SpringProblem {
    pub file: String,
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

/// A Spring file's text as read, with the name messages give it.
#[derive(Debug, Clone)]
pub(in crate::scenario) struct SpringFile {
    /// The path as messages show it (from the working folder).
    pub display: String,
    /// The path as the scenario's reader finds it (imports are relative to it).
    pub written: String,
    pub format: Format,
    pub text: String,
}

/// Reads the file `location` that file `importer` imports, in the format its extension names
/// or the one given (an extension hint); `Ok(None)` when an `optional:` location is missing.
pub(in crate::scenario) type Importer<'a> =
    dyn Fn(&SpringFile, &str, bool, Option<Format>) -> Result<Option<SpringFile>, String> + 'a;

/// What one environment is made of.
pub(in crate::scenario) struct Request<'a> {
    /// The `spring-config` files, in order (a later one overrides an earlier one).
    pub files: Vec<SpringFile>,
    /// The environment variables given, in order (a later one of the same name wins).
    pub env: Vec<EnvVar>,
    /// `simulation.spring-profiles`, as `--spring.profiles.active` on the command line.
    pub profiles: Option<Vec<String>>,
    pub runtime: Runtime,
    pub import: &'a Importer<'a>,
}

/// A profile document that was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) struct Skipped {
    /// Its condition as written (`peer2`, `kubernetes`).
    pub condition: String,
    /// `on-profile` or `on-cloud-platform`.
    pub kind: &'static str,
    pub file: String,
    pub line: usize,
}

/// One table's Spring environment: its sources merged, before placeholders resolve.
#[derive(Debug)]
pub(in crate::scenario) struct Environment {
    /// The documents' properties that apply, merged (later ones replacing earlier ones of the
    /// same relaxed name), then the variables that name no such property.
    merged: Vec<Property>,
    index: HashMap<String, usize>,
    /// The variables, by exact name (a placeholder may name one as written: `${DB_PASSWORD}`).
    env_exact: HashMap<String, String>,
    /// `--spring.profiles.active` from `simulation.spring-profiles`.
    command_line: Option<String>,
    pub active_profiles: Vec<String>,
    pub skipped: Vec<Skipped>,
    /// What the reader should know (an import that is not a local file, a variable Spring binds
    /// differently from what its writer meant).
    pub notes: Vec<String>,
    runtime: Runtime,
}

/// Property names that choose documents and profiles: consumed here, never bound.
const ON_PROFILE: [&str; 2] = ["spring.config.activate.on-profile", "spring.profiles"];
const ON_CLOUD_PLATFORM: &str = "spring.config.activate.on-cloud-platform";
const CLOUD_PLATFORM: &str = "spring.main.cloud-platform";
const ACTIVE: &str = "spring.profiles.active";
const INCLUDE: &str = "spring.profiles.include";
const DEFAULT: &str = "spring.profiles.default";
const GROUP: &str = "spring.profiles.group";
const IMPORT: &str = "spring.config.import";

/// Whether property `name` chooses documents or profiles (never bound).
fn is_activation(name: &str) -> bool {
    let key = canonical(base_of(name));
    ON_PROFILE
        .iter()
        .chain(&[ON_CLOUD_PLATFORM, ACTIVE, INCLUDE, DEFAULT, IMPORT])
        .any(|a| canonical(a) == key)
        || key.starts_with(&format!("{}.", canonical(GROUP)))
}

/// `name` without a trailing `[i]`.
fn base_of(name: &str) -> &str {
    match name
        .strip_suffix(']')
        .and_then(|n| n.rfind('[').map(|at| (n, at)))
    {
        Some((n, at)) if n[at + 1..].chars().all(|c| c.is_ascii_digit()) => &n[..at],
        _ => name,
    }
}

/// The documents of one file.
fn documents(file: &SpringFile) -> Result<Vec<Document>, SpringProblem> {
    let mut docs = match file.format {
        Format::Yaml => yaml::documents(&file.text),
        Format::Properties => properties::documents(&file.text),
    }
    .map_err(|p| SpringProblem {
        file: file.display.clone(),
        ..p
    })?;
    let lines: Vec<&str> = match file.format {
        Format::Yaml => file.text.lines().collect(),
        Format::Properties => Vec::new(),
    };
    for doc in &mut docs {
        for (i, p) in doc.properties.iter_mut().enumerate() {
            p.file.clone_from(&file.display);
            let comment = p
                .value
                .is_empty()
                .then(|| lines.get(p.line.wrapping_sub(1)))
                .flatten()
                .and_then(|line| filtering::hash_token_comment(line));
            if let Some(token) = comment {
                doc.hash_tokens.push((i, token.to_string()));
            }
        }
    }
    Ok(docs)
}

/// A document with where it came from, and the conditions it applies under (its own, and those
/// of the document that imported it).
struct Placed {
    doc: Document,
    conditions: Vec<Property>,
}

/// The value of a string-or-list property among `properties` (the last one written wins, a
/// list as a whole): `name = a,b` or `name[0] = a`, `name[1] = b`, comma-split, trimmed.
fn list_value<'p>(
    properties: impl Iterator<Item = &'p Property>,
    name: &str,
) -> Option<Vec<String>> {
    let key = canonical(name);
    let mut found: Option<Vec<String>> = None;
    let mut in_list = false;
    for p in properties {
        let own = canonical(&p.name) == key;
        let item = !own && canonical(base_of(&p.name)) == key && base_of(&p.name) != p.name;
        if own {
            found = Some(split_list(&p.value));
            in_list = false;
        } else if item {
            let list = found.get_or_insert_with(Vec::new);
            if !in_list {
                list.clear();
                in_list = true;
            }
            list.extend(split_list(&p.value));
        } else {
            in_list = false;
        }
    }
    found
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The condition of a document: its `on-profile` (joined when a list) and `on-cloud-platform`.
fn conditions_of(doc: &Document) -> Vec<Property> {
    let mut out = Vec::new();
    for (names, kind) in [
        (&ON_PROFILE[..], ON_PROFILE[0]),
        (&[ON_CLOUD_PLATFORM][..], ON_CLOUD_PLATFORM),
    ] {
        let matching: Vec<&Property> = doc
            .properties
            .iter()
            .filter(|p| {
                names
                    .iter()
                    .any(|n| canonical(base_of(&p.name)) == canonical(n))
            })
            .collect();
        let Some(first) = matching.first() else {
            continue;
        };
        let written = names
            .iter()
            .find_map(|n| list_value(matching.iter().copied(), n))
            .unwrap_or_default();
        out.push(Property {
            name: kind.to_string(),
            value: written.join(","),
            ..(*first).clone()
        });
    }
    out
}

/// Every document of `request`'s files in precedence order (lowest first), imports expanded
/// after the document that names them. With `profiles` (the accepted profiles, once known),
/// each file is followed by its profile-specific files beside it, and the files placed are
/// returned too (for [`has_profile_files`]).
fn placed_documents(
    request: &Request<'_>,
    notes: &mut Vec<String>,
    profiles: Option<&[String]>,
) -> Result<(Vec<Placed>, Vec<SpringFile>), SpringProblem> {
    let mut placing = Placing {
        request,
        profiles,
        seen: Vec::new(),
        files: Vec::new(),
        out: Vec::new(),
        notes,
    };
    for file in &request.files {
        placing.place_file(file, &[], 0, true)?;
    }
    Ok((placing.out, placing.files))
}

/// Deepest chain of imports (a file importing itself is read once, as Spring reads it).
const MAX_IMPORT_DEPTH: usize = 16;

/// The state of placing one request's documents.
struct Placing<'r, 'n> {
    request: &'r Request<'r>,
    profiles: Option<&'r [String]>,
    seen: Vec<String>,
    files: Vec<SpringFile>,
    out: Vec<Placed>,
    notes: &'n mut Vec<String>,
}

/// The name of `file`'s profile-specific file for `profile`: `application.yml` ->
/// `application-prod.yml`, the same extension (`StandardConfigDataReference`: the root, `-`,
/// the profile, the extension of the file named).
fn profile_file_name(file: &SpringFile, profile: &str) -> Option<String> {
    let name = std::path::Path::new(&file.written).file_name()?.to_str()?;
    let (stem, extension) = name.rsplit_once('.')?;
    Some(format!("{stem}-{profile}.{extension}"))
}

/// Whether any of `files` has a profile-specific file beside it for one of `profiles`.
fn has_profile_files(request: &Request<'_>, files: &[SpringFile], profiles: &[String]) -> bool {
    files.iter().any(|f| {
        profiles.iter().any(|p| {
            profile_file_name(f, p)
                .is_some_and(|name| matches!((request.import)(f, &name, true, None), Ok(Some(_))))
        })
    })
}

impl Placing<'_, '_> {
    /// Places `file`'s documents (each followed by what it imports) and, when `beside`, then
    /// the profile-specific files beside it.
    fn place_file(
        &mut self,
        file: &SpringFile,
        inherited: &[Property],
        depth: usize,
        beside: bool,
    ) -> Result<(), SpringProblem> {
        self.seen.push(file.display.clone());
        self.files.push(file.clone());
        for doc in documents(file)? {
            let mut conditions = inherited.to_vec();
            conditions.extend(conditions_of(&doc));
            let imported = self.imports_of(file, &doc, depth)?;
            self.out.push(Placed {
                doc,
                conditions: conditions.clone(),
            });
            for found in imported {
                self.place_file(&found, &conditions, depth + 1, true)?;
            }
        }
        if beside {
            self.place_profile_files(file, inherited, depth)?;
        }
        Ok(())
    }

    /// `StandardConfigDataLocationResolver#resolveProfileSpecific`: with the profiles known, a
    /// file named `application.yml` brings `application-<profile>.yml` from the same folder when
    /// it exists, for each accepted profile in order (the last one ranking highest), each above
    /// the file and what it imports (`ConfigDataImporter#load` orders the profile-specific
    /// resource before its file). A file the `spring-config` list names itself keeps its place
    /// in the list, and one already read is not read again.
    fn place_profile_files(
        &mut self,
        file: &SpringFile,
        inherited: &[Property],
        depth: usize,
    ) -> Result<(), SpringProblem> {
        let Some(profiles) = self.profiles else {
            return Ok(());
        };
        for profile in profiles {
            let Some(name) = profile_file_name(file, profile) else {
                continue;
            };
            // A profile-specific location is skippable (`StandardConfigDataReference#isSkippable`).
            let Ok(Some(found)) = (self.request.import)(file, &name, true, None) else {
                continue;
            };
            let listed = self
                .request
                .files
                .iter()
                .any(|f| f.display == found.display);
            if listed || self.seen.contains(&found.display) {
                continue;
            }
            self.place_file(&found, inherited, depth + 1, false)?;
        }
        Ok(())
    }

    /// The local files `doc` (of `file`) imports, read; notes for those not read.
    fn imports_of(
        &mut self,
        file: &SpringFile,
        doc: &Document,
        depth: usize,
    ) -> Result<Vec<SpringFile>, SpringProblem> {
        let imports = doc
            .properties
            .iter()
            .filter(|p| canonical(base_of(&p.name)) == canonical(IMPORT))
            .flat_map(|p| split_list(&p.value).into_iter().map(move |l| (p, l)))
            .collect::<Vec<_>>();
        let mut imported = Vec::new();
        for (at, written) in imports {
            let problem = |message: String| SpringProblem {
                file: at.file.clone(),
                line: at.line,
                column: at.column,
                message,
            };
            let at_line = format!("{}:{}", at.file, at.line);
            let Some(location) =
                self.import_location_resolved(&written, doc, &at_line, &problem)?
            else {
                continue;
            };
            let shown = if location == written {
                format!("`{written}`")
            } else {
                format!("`{written}` (`{location}`)")
            };
            let (optional, rest) = match location.strip_prefix("optional:") {
                Some(rest) => (true, rest.trim()),
                None => (false, location.as_str()),
            };
            let local = rest
                .strip_prefix("file:")
                .or_else(|| (!rest.contains(':') || rest.starts_with('/')).then_some(rest));
            let Some(local) = local else {
                self.notes.push(format!(
                    "{}:{}: spring.config.import {shown} is not read (a simulation reads \
                     local files only; Spring would fetch it {}); write the settings it holds \
                     in a file and import that with `file:`, or `init --config-repo DIR` for a \
                     Spring Cloud Config repository",
                    at.file,
                    at.line,
                    if optional {
                        "and go on without it when it is missing"
                    } else {
                        "and fail to start without it"
                    }
                ));
                continue;
            };
            if depth >= MAX_IMPORT_DEPTH {
                return Err(problem(format!(
                    "spring.config.import: imports nested deeper than {MAX_IMPORT_DEPTH}; allowed: \
                     at most that many"
                )));
            }
            if local.ends_with('/') {
                let found = self.folder_import(file, local)?;
                if found.is_empty() {
                    self.notes.push(format!(
                        "{}:{}: spring.config.import {shown}: no application.properties, .yml or \
                         .yaml in that folder (Spring goes on when the folder exists{})",
                        at.file,
                        at.line,
                        if optional {
                            " or the import is optional"
                        } else {
                            ", and fails to start when it does not"
                        }
                    ));
                }
                imported.extend(
                    found
                        .into_iter()
                        .filter(|f| !self.seen.contains(&f.display)),
                );
                continue;
            }
            let (local, hint) = extension_hint(local);
            match (self.request.import)(file, local, optional, hint).map_err(|why| {
                problem(format!(
                    "spring.config.import {shown}: {why}. Spring would fail to start \
                     (ConfigDataResourceNotFoundException); fix the path (relative to {}), or \
                     write `optional:file:{local}` to go on without it",
                    file.display
                ))
            })? {
                Some(found) if self.seen.contains(&found.display) => {}
                Some(found) => imported.push(found),
                None => self.notes.push(format!(
                    "{}:{}: spring.config.import {shown}: no such file, skipped as Spring \
                     skips an optional import",
                    at.file, at.line
                )),
            }
        }
        Ok(imported)
    }

    /// An import location with its placeholders resolved (`None`: an optional one that does
    /// not resolve, skipped with a note as Spring skips it; a required one is an error).
    fn import_location_resolved(
        &mut self,
        written: &str,
        doc: &Document,
        at_line: &str,
        problem: &dyn Fn(String) -> SpringProblem,
    ) -> Result<Option<String>, SpringProblem> {
        if !written.contains("${") {
            return Ok(Some(written.to_string()));
        }
        match self.import_location(written, doc) {
            Ok(location) => Ok(Some(location)),
            Err(why) if written.trim_start().starts_with("optional:") => {
                self.notes.push(format!(
                    "{at_line}: spring.config.import `{written}`: {why}. Spring leaves the \
                     placeholder as written, finds no such location and skips the optional \
                     import (ConfigDataEnvironmentContributorPlaceholdersResolver)"
                ));
                Ok(None)
            }
            Err(why) => Err(problem(format!(
                "spring.config.import `{written}`: {why}. Spring leaves the placeholder as \
                 written (ConfigDataEnvironmentContributorPlaceholdersResolver), finds no such \
                 location and fails to start (ConfigDataResourceNotFoundException); supply the \
                 value, or write the import as `optional:` to go on without it"
            ))),
        }
    }

    /// The files a folder location (`optional:file:./config/`) names: `application` with each
    /// extension Spring Boot reads, each optional (`StandardConfigDataLocationResolver#
    /// getReferencesForDirectory`), lowest first: `.yaml`, `.yml`, then `.properties`, which
    /// takes precedence in the same location.
    fn folder_import(
        &self,
        file: &SpringFile,
        folder: &str,
    ) -> Result<Vec<SpringFile>, SpringProblem> {
        let mut out = Vec::new();
        for name in [
            "application.yaml",
            "application.yml",
            "application.properties",
        ] {
            if let Ok(Some(found)) =
                (self.request.import)(file, &format!("{folder}{name}"), true, None)
            {
                out.push(found);
            }
        }
        Ok(out)
    }

    /// An import's location with its placeholders resolved as Spring resolves them while it
    /// reads imports (`ConfigDataEnvironmentContributorPlaceholdersResolver`): from the
    /// environment variables, the documents read so far that apply without a profile (no
    /// profile is active yet) and the importing document itself, the variables first, then the
    /// later documents; `Err` with why when one cannot be resolved.
    fn import_location(&self, written: &str, doc: &Document) -> Result<String, String> {
        let mut merged = Merged::default();
        for p in self.out.iter().filter(|p| p.conditions.is_empty()) {
            merged.put_source(p.doc.properties.iter().cloned());
        }
        merged.put_source(doc.properties.iter().cloned());
        let env = env::EnvIndex::new(&self.request.env);
        env.overlay(&mut merged, &mut Vec::new());
        let environment = Environment {
            merged: merged.props,
            index: merged.index,
            env_exact: env.exact(),
            command_line: None,
            active_profiles: Vec::new(),
            skipped: Vec::new(),
            notes: Vec::new(),
            runtime: self.request.runtime.clone(),
        };
        let location = Property {
            name: IMPORT.to_string(),
            value: written.to_string(),
            file: String::new(),
            line: 0,
            column: 0,
            refusal: None,
        };
        let mut resolver = placeholders::Resolver::new(&environment, 0);
        let resolved = resolver
            .resolve_property(&location)
            .map_err(|p| p.message)?;
        match resolved.refusal {
            Some(why) if !resolver.drew_random() => Err(why),
            _ => Ok(resolved.value),
        }
    }
}

/// A location with an extension hint (`file:.env[.properties]`, Boot 2.4+'s way to import a
/// file without a known extension, `StandardConfigDataLocationResolver`'s
/// `EXTENSION_HINT_PATTERN`): the path without the hint, and the format the hint names.
fn extension_hint(location: &str) -> (&str, Option<Format>) {
    let hinted = location
        .strip_suffix(']')
        .and_then(|rest| rest.rfind("[.").map(|at| (&rest[..at], &rest[at + 1..])))
        .filter(|(path, hint)| {
            !path.is_empty()
                && hint.len() > 1
                && hint[1..].chars().all(|c| c.is_alphanumeric() || c == '_')
        });
    match hinted {
        Some((path, hint)) => match Format::of(hint) {
            Some(format) => (path, Some(format)),
            None => (location, None),
        },
        None => (location, None),
    }
}

/// The platforms `CloudPlatform` knows, as `spring.main.cloud-platform` names them.
const CLOUD_PLATFORMS: [&str; 7] = [
    "none",
    "cloud_foundry",
    "heroku",
    "sap",
    "kubernetes",
    "azure_app_service",
    "nomad",
];

/// Builds the environment of `request`. Problems with a file as a whole (it does not parse,
/// an import is missing, a profile expression is malformed) are errors.
pub(in crate::scenario) fn environment(
    request: &Request<'_>,
) -> Result<Environment, SpringProblem> {
    let mut import_notes = Vec::new();
    let (mut placed, files) = placed_documents(request, &mut import_notes, None)?;
    let mut notes = Vec::new();
    let env = env::EnvIndex::new(&request.env);
    // Phase one (`ConfigDataEnvironment#processWithoutProfiles`): the documents without a
    // profile condition, for the platform and the profiles.
    let unconditional = || {
        placed
            .iter()
            .filter(|p| p.conditions.is_empty())
            .flat_map(|p| &p.doc.properties)
    };
    let platform = env
        .value(CLOUD_PLATFORM)
        .or_else(|| list_value(unconditional(), CLOUD_PLATFORM).map(|v| v.join(",")))
        .map(|p| p.trim().to_ascii_lowercase().replace('-', "_"));
    if let Some(p) = platform
        .as_ref()
        .filter(|p| !CLOUD_PLATFORMS.contains(&p.as_str()))
    {
        notes.push(format!(
            "spring.main.cloud-platform `{p}` is not a platform Spring Boot knows \
             (CloudPlatform: {}); no on-cloud-platform document applies",
            CLOUD_PLATFORMS.join(", ")
        ));
    }
    let command_line = request.profiles.as_ref().map(|p| p.join(","));
    let list = |name: &str| -> Vec<String> {
        env.value(name)
            .map(|v| split_list(&v))
            .or_else(|| list_value(unconditional(), name))
            .unwrap_or_default()
    };
    let mut active = match &request.profiles {
        Some(p) => p.clone(),
        None => list(ACTIVE),
    };
    let included = list(INCLUDE);
    let mut chosen: Vec<String> = included;
    chosen.retain(|p| !active.contains(p));
    chosen.append(&mut active);
    if chosen.is_empty() {
        chosen = env
            .value(DEFAULT)
            .map(|v| split_list(&v))
            .or_else(|| list_value(unconditional(), DEFAULT))
            .unwrap_or_else(|| vec!["default".to_string()]);
    }
    let active_profiles = profiles::expand_groups(&chosen, |name| {
        list_value(unconditional(), &format!("{GROUP}.{name}"))
    });
    // Phase two (`ConfigDataEnvironment#processWithProfiles`): the profile-specific files beside
    // each file, then every document whose conditions hold, in order.
    if has_profile_files(request, &files, &active_profiles) {
        import_notes.clear();
        placed = placed_documents(request, &mut import_notes, Some(active_profiles.as_slice()))?.0;
    }
    import_notes.append(&mut notes);
    let mut notes = import_notes;
    let mut merged = Merged::default();
    let mut skipped = Vec::new();
    for p in &placed {
        if !document_applies(p, platform.as_deref(), &active_profiles, &mut skipped)? {
            continue;
        }
        merged.put_source(p.doc.properties.iter().cloned());
    }
    env.overlay(&mut merged, &mut notes);
    notes.extend(unfiltered_tokens(&placed, &merged, command_line.is_some()));
    Ok(Environment {
        merged: merged.props,
        index: merged.index,
        env_exact: env.exact(),
        command_line,
        active_profiles,
        skipped,
        notes,
        runtime: request.runtime.clone(),
    })
}

/// Whether a document's conditions (`spring.config.activate.on-profile`, `on-cloud-platform`)
/// hold; the first that does not is listed in `skipped`, once per document.
fn document_applies(
    p: &Placed,
    platform: Option<&str>,
    active_profiles: &[String],
    skipped: &mut Vec<Skipped>,
) -> Result<bool, SpringProblem> {
    for c in &p.conditions {
        let holds = if c.name == ON_CLOUD_PLATFORM {
            let wanted = c.value.trim().to_ascii_lowercase().replace('-', "_");
            platform == Some(wanted.as_str())
        } else {
            profiles::matches(&c.value, active_profiles).map_err(|message| SpringProblem {
                file: c.file.clone(),
                line: c.line,
                column: c.column,
                message: format!(
                    "`{}`: profile expression: {message}; Spring would refuse to start \
                     (Profiles#of); allowed: profile names with `!`, `&`, `|` and \
                     parentheses, a comma between alternatives",
                    c.name
                ),
            })?
        };
        if !holds {
            if !skipped
                .iter()
                .any(|s: &Skipped| s.file == c.file && s.line == c.line)
            {
                skipped.push(Skipped {
                    condition: c.value.clone(),
                    kind: if c.name == ON_CLOUD_PLATFORM {
                        "on-cloud-platform"
                    } else {
                        "on-profile"
                    },
                    file: c.file.clone(),
                    line: c.line,
                });
            }
            return Ok(false);
        }
    }
    Ok(true)
}

/// A warning for each property whose value Spring binds is a Maven resource-filtering token
/// left unfiltered (`filtering`), naming its file, line and key; `chosen` when the command line
/// chose the profiles.
fn unfiltered_tokens(placed: &[Placed], merged: &Merged, chosen: bool) -> Vec<String> {
    let hash = |p: &Property| {
        placed.iter().find_map(|d| {
            d.doc.hash_tokens.iter().find_map(|(i, token)| {
                let q = &d.doc.properties[*i];
                (q.file == p.file && q.line == p.line).then_some(token.as_str())
            })
        })
    };
    // Only the Spring files are built with Maven; a variable's value is taken as given.
    let files: std::collections::HashSet<&str> = placed
        .iter()
        .flat_map(|d| d.doc.properties.first())
        .map(|p| p.file.as_str())
        .collect();
    merged
        .props
        .iter()
        .filter(|p| !p.name.is_empty() && files.contains(p.file.as_str()))
        .filter_map(|p| {
            let hash = if p.value.is_empty() { hash(p) } else { None };
            filtering::token_of(p, hash).map(|token| filtering::warning(p, token, chosen))
        })
        .collect()
}

/// The list property `name` is part of: `name` up to its first numeric index (`a.b[0].c` and
/// `a.b[1]` are items of the list `a.b`); `None` when it has no numeric index (`a[key]` is a map
/// key).
fn list_root(name: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(open) = name[from..].find('[') {
        let at = from + open;
        let close = name[at..].find(']')? + at;
        let inside = &name[at + 1..close];
        if !inside.is_empty() && inside.chars().all(|c| c.is_ascii_digit()) {
            return Some(&name[..at]);
        }
        from = close + 1;
    }
    None
}

/// The properties of the sources put so far, by relaxed name, lowest precedence first.
#[derive(Debug, Default)]
pub(in crate::scenario) struct Merged {
    /// In the order first written; a property taken out has an empty name.
    pub props: Vec<Property>,
    pub index: HashMap<String, usize>,
    /// The items of each list (`a[0]`, `a[1].b` under `a`), by the list's relaxed name.
    lists: HashMap<String, Vec<usize>>,
}

impl Merged {
    /// Puts one property source (a document, the variables) over the others. A property of the
    /// same relaxed name is replaced in place; a list the source writes (`a[0]`, `a[1]`, or `a`
    /// as one value) replaces the whole list of the sources below, as Spring Boot's binder takes
    /// a list from the first source that has it (`IndexedElementsBinder#bindIndexed`), while a
    /// map merges key by key (`MapBinder`): each key is a property of its own.
    pub(in crate::scenario) fn put_source(&mut self, source: impl IntoIterator<Item = Property>) {
        let mut written: std::collections::HashSet<String> = std::collections::HashSet::new();
        for p in source {
            let root = list_root(&p.name).map(canonical);
            let key = canonical(&p.name);
            let list = root.clone().unwrap_or_else(|| key.clone());
            if written.insert(list.clone()) {
                self.take_list(&list, root.is_some());
            }
            match self.index.get(&key) {
                Some(&i) => self.props[i] = p,
                None => {
                    self.index.insert(key, self.props.len());
                    if let Some(root) = root {
                        self.lists.entry(root).or_default().push(self.props.len());
                    }
                    self.props.push(p);
                }
            }
        }
    }

    /// Takes out the items of list `list` put so far, and its value as a whole (`a = x,y`) when
    /// `whole`.
    fn take_list(&mut self, list: &str, whole: bool) {
        for i in self.lists.remove(list).unwrap_or_default() {
            self.take(i);
        }
        if let Some(&i) = self.index.get(list).filter(|_| whole) {
            self.take(i);
        }
    }

    fn take(&mut self, i: usize) {
        let key = canonical(&self.props[i].name);
        if !self.props[i].name.is_empty() && self.index.get(&key) == Some(&i) {
            self.index.remove(&key);
            self.props[i].name.clear();
        }
    }
}

impl Environment {
    /// The properties the model may bind, for instance `instance` of the table (the run-time
    /// sources differ per instance), in the order they were first written, placeholders
    /// resolved. A value that cannot be resolved is kept as written with its refusal.
    pub(in crate::scenario) fn properties(
        &self,
        instance: usize,
    ) -> Result<Vec<Property>, SpringProblem> {
        let mut resolver = placeholders::Resolver::new(self, instance);
        let mut out = Vec::new();
        for p in self
            .merged
            .iter()
            .filter(|p| !p.name.is_empty() && !is_activation(&p.name))
        {
            out.push(resolver.resolve_property(p)?);
        }
        Ok(out)
    }

    /// The value of property `name` for instance `instance`, resolved; `None` when no source
    /// holds it, `Err` with why when it cannot be resolved.
    pub(in crate::scenario) fn value(
        &self,
        name: &str,
        instance: usize,
    ) -> Option<Result<String, String>> {
        let &i = self.index.get(&canonical(name))?;
        let mut resolver = placeholders::Resolver::new(self, instance);
        Some(match resolver.resolve_property(&self.merged[i]) {
            // A value drawn for this instance is what this instance gets.
            Ok(p) if resolver.drew_random() => Ok(p.value),
            Ok(p) => p.refusal.map_or(Ok(p.value), Err),
            Err(e) => Err(e.message),
        })
    }
}

/// The properties of one file `text` with the profiles `profiles` (or the file's own when
/// `None`) active, resolved for instance 0 of seed 1: the reading of a file alone.
#[cfg(test)]
pub(in crate::scenario) fn read(
    text: &str,
    format: Format,
    profiles: Option<&[String]>,
) -> Result<Vec<Property>, SpringProblem> {
    let request = Request {
        files: vec![SpringFile {
            display: "application".to_string(),
            written: "application".to_string(),
            format,
            text: text.to_string(),
        }],
        env: Vec::new(),
        profiles: profiles.map(<[String]>::to_vec),
        runtime: Runtime::for_tests(),
        import: &|_, _, _, _| Err("no imports here".to_string()),
    };
    let props = environment(&request)?.properties(0)?;
    match props.iter().find_map(|p| p.refusal.clone().map(|r| (p, r))) {
        Some((p, message)) => Err(SpringProblem {
            file: p.file.clone(),
            line: p.line,
            column: p.column,
            message,
        }),
        None => Ok(props),
    }
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
