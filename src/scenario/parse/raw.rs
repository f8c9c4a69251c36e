//! Reading: the TOML document and the `--set` arguments become flat tables of dotted keys and
//! values, each with the place it came from. Nothing here knows which keys exist; that is
//! `resolve`'s job.
//!
//! TOML spells one key several ways (`a.b = 1` under `[server]`, `[server.a]` then `b = 1`,
//! `a = { b = 1 }`, `"a.b" = 1`); flattening makes them all the path `["a", "b"]`.

use toml_edit::{Item, TableLike, Value};

use crate::scenario::error::{Location, Place, ScenarioError, Suggestion, TextIndex};
use crate::scenario::keys::{DEFS, Raw, Section, canonical, closest, path_is};

/// One key = value, flattened.
#[derive(Debug, Clone)]
pub(in crate::scenario) struct Entry {
    /// The key's segments within its table, as written (`["eureka", "server", "x"]`).
    pub path: Vec<String>,
    /// What precedes the path in messages: `server.`, `app[0].`, or for a `--set` argument the
    /// table part of its key (`app.svc.`).
    pub prefix: String,
    pub value: Raw,
    /// The text of a `--set` value.
    pub literal: Option<String>,
    pub key_at: Place,
    pub value_at: Place,
    /// Why a `spring-config` value cannot be bound (a placeholder nothing supplies, a value
    /// drawn per instance): an error if a key of the model takes it, a warning otherwise.
    pub refusal: Option<String>,
}

impl Entry {
    /// The key by its full dotted path, as the user wrote it.
    pub(in crate::scenario) fn display(&self) -> String {
        format!("{}{}", self.prefix, self.path.join("."))
    }

    pub(in crate::scenario) fn is_override(&self) -> bool {
        matches!(self.key_at, Place::Set(_))
    }

    /// Read from a `spring-config` file: it binds if it can and is otherwise ignored, and the
    /// scenario's own keys override it.
    pub(in crate::scenario) fn is_spring(&self) -> bool {
        matches!(self.key_at, Place::Spring { .. })
    }
}

/// One table of the file (or one element of an array of tables).
#[derive(Debug, Clone)]
pub(in crate::scenario) struct RawTable {
    pub section: Section,
    /// `server`, `app[0]`.
    pub label: String,
    /// Where the table starts, for "missing key" messages.
    pub at: Place,
    pub entries: Vec<Entry>,
}

impl RawTable {
    fn new(section: Section, label: String, at: Place) -> RawTable {
        RawTable {
            section,
            label,
            at,
            entries: Vec::new(),
        }
    }

    /// The string value of the table's `name` (or `instance`) key, which `--set app.<name>.x`
    /// and `<app>.ribbon.<Key>` refer to; the last one wins, as for any key.
    pub(in crate::scenario) fn ident(&self) -> Option<&str> {
        let key = match self.section {
            Section::Shutdown | Section::Restart => "instance",
            Section::Deploy => "app",
            _ => "name",
        };
        self.entries.iter().rev().find_map(|e| match &e.value {
            Raw::Str(s) if path_is(&e.path, key) => Some(s.as_str()),
            _ => None,
        })
    }
}

/// The whole file, flattened, before any key is bound.
#[derive(Debug, Clone)]
pub(in crate::scenario) struct RawScenario {
    /// `[simulation]`, `[network]`, `[server]`, `[clients]`, present even when the file has not.
    pub singles: Vec<RawTable>,
    pub peers: Vec<RawTable>,
    pub apps: Vec<RawTable>,
    pub callers: Vec<RawTable>,
    pub shutdowns: Vec<RawTable>,
    pub claims: Vec<RawTable>,
    pub restarts: Vec<RawTable>,
    pub deploys: Vec<RawTable>,
    pub faults: Vec<RawTable>,
}

impl RawScenario {
    fn empty() -> RawScenario {
        let singles = Section::ALL
            .into_iter()
            .filter(|s| !s.is_array())
            .map(|s| RawTable::new(s, s.name().to_string(), Place::File))
            .collect();
        RawScenario {
            singles,
            peers: Vec::new(),
            apps: Vec::new(),
            callers: Vec::new(),
            shutdowns: Vec::new(),
            claims: Vec::new(),
            restarts: Vec::new(),
            deploys: Vec::new(),
            faults: Vec::new(),
        }
    }

    #[cfg(test)]
    pub(in crate::scenario) fn single(&self, section: Section) -> Option<&RawTable> {
        self.singles.iter().find(|t| t.section == section)
    }

    fn single_mut(&mut self, section: Section) -> Option<&mut RawTable> {
        self.singles.iter_mut().find(|t| t.section == section)
    }

    pub(in crate::scenario) fn array(&self, section: Section) -> &[RawTable] {
        match section {
            Section::Peer => &self.peers,
            Section::App => &self.apps,
            Section::Caller => &self.callers,
            Section::Shutdown => &self.shutdowns,
            Section::Claim => &self.claims,
            Section::Restart => &self.restarts,
            Section::Deploy => &self.deploys,
            Section::Fault => &self.faults,
            _ => &[],
        }
    }

    fn array_mut(&mut self, section: Section) -> Option<&mut Vec<RawTable>> {
        match section {
            Section::Peer => Some(&mut self.peers),
            Section::App => Some(&mut self.apps),
            Section::Caller => Some(&mut self.callers),
            Section::Shutdown => Some(&mut self.shutdowns),
            Section::Claim => Some(&mut self.claims),
            Section::Restart => Some(&mut self.restarts),
            Section::Deploy => Some(&mut self.deploys),
            Section::Fault => Some(&mut self.faults),
            _ => None,
        }
    }

    /// Every table, in file order of sections.
    pub(in crate::scenario) fn tables(&self) -> impl Iterator<Item = &RawTable> {
        self.singles
            .iter()
            .chain(&self.peers)
            .chain(&self.apps)
            .chain(&self.callers)
            .chain(&self.shutdowns)
            .chain(&self.claims)
            .chain(&self.restarts)
            .chain(&self.deploys)
            .chain(&self.faults)
    }
}

/// toml_edit says only "duplicate key" (a fuzzing finding): this names the key, its table and the line
/// of its first definition, read off the text at the error's offset (the key of the second
/// definition) and the table header above it.
fn duplicate_key(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split('=').next().unwrap_or("").trim();
    let key_of = |l: &str| l.split('=').next().unwrap_or("").trim().to_string();
    // The table the key is in: the last header above it, and where that table starts.
    let above = &text[..line_start];
    let (table, table_start) = above
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('['))
        .last()
        .map_or(("the top level".to_string(), 0), |(n, l)| {
            (format!("table {}", l.trim()), n)
        });
    let first = above
        .lines()
        .enumerate()
        .skip(table_start)
        .find(|(_, l)| l.contains('=') && !l.trim_start().starts_with('#') && key_of(l) == key)
        .map(|(n, _)| n + 1);
    let shown: String = key.chars().take(60).collect();
    match (shown.is_empty(), first) {
        (true, _) => "duplicate key".to_string(),
        (false, Some(line)) => format!(
            "duplicate key `{shown}` in {table} (first set at line {line}); a key may be set \
             once per table"
        ),
        (false, None) => format!(
            "duplicate key `{shown}` in {table}; a key may be set once per table (a dotted key \
             or a [table.header] may set it too)"
        ),
    }
}

/// Parses `text` and flattens it. A TOML syntax error is returned at once; problems with the
/// shape of the tables are collected so that one run reports them all.
pub(in crate::scenario) fn read(
    text: &str,
    file: &str,
) -> Result<(RawScenario, Vec<ScenarioError>), ScenarioError> {
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let mut message = e.message().trim().to_string();
        if message == "duplicate key" {
            message = duplicate_key(text, e.span().map_or(0, |s| s.start));
        }
        ScenarioError::Syntax {
            at: Location::boxed(file, Place::of_span(text, e.span())),
            message,
        }
    })?;
    let mut reader = Reader {
        text,
        places: TextIndex::new(text),
        file,
        errors: Vec::new(),
    };
    let mut scenario = RawScenario::empty();
    let root = doc.as_table();
    for (name, item) in root.iter() {
        let key_at = reader.place(root.key(name).and_then(|k| k.span()));
        reader.top_level(&mut scenario, name, item, key_at);
    }
    Ok((scenario, reader.errors))
}

struct Reader<'a> {
    text: &'a str,
    /// Where each offset of `text` is (a key's place, in time independent of the file's size).
    places: TextIndex<'a>,
    file: &'a str,
    errors: Vec<ScenarioError>,
}

impl Reader<'_> {
    fn place(&self, span: Option<std::ops::Range<usize>>) -> Place {
        self.places.of_span(span)
    }

    fn at(&self, place: Place) -> Box<Location> {
        Location::boxed(self.file, place)
    }

    fn top_level(&mut self, scenario: &mut RawScenario, name: &str, item: &Item, key_at: Place) {
        let Some(section) = Section::by_name(name) else {
            self.unknown_top_level(name, item, key_at);
            return;
        };
        if !section.is_array() {
            match item.as_table_like() {
                Some(table) => {
                    let mut entries = Vec::new();
                    self.flatten(table, &[], &format!("{name}."), &mut entries);
                    if let Some(raw) = scenario.single_mut(section) {
                        raw.at = key_at;
                        raw.entries = entries;
                    }
                }
                None => self.errors.push(ScenarioError::TableShape {
                    at: self.at(key_at),
                    key: name.to_string(),
                    expected: format!("a table ({})", section.header()),
                    found: describe_item(item),
                }),
            }
            return;
        }
        // An array of tables: `[[app]]` headers, or `app = [{ ... }, { ... }]`.
        let tables: Vec<(&dyn TableLike, Place)> = match item {
            Item::ArrayOfTables(array) => array
                .iter()
                .map(|t| (t as &dyn TableLike, self.place(t.span())))
                .collect(),
            Item::Value(Value::Array(array)) => {
                let mut tables = Vec::new();
                for value in array.iter() {
                    match value.as_inline_table() {
                        Some(t) => tables.push((t as &dyn TableLike, self.place(t.span()))),
                        None => {
                            self.errors.push(ScenarioError::TableShape {
                                at: self.at(self.place(value.span())),
                                key: name.to_string(),
                                expected: format!("an array of tables ({})", section.header()),
                                found: format!("an array holding {}", describe_value(value)),
                            });
                            return;
                        }
                    }
                }
                tables
            }
            _ => {
                self.errors.push(ScenarioError::TableShape {
                    at: self.at(key_at),
                    key: name.to_string(),
                    expected: format!("an array of tables ({})", section.header()),
                    found: describe_item(item),
                });
                return;
            }
        };
        let Some(list) = scenario.array_mut(section) else {
            return;
        };
        for (table, at) in tables {
            let label = format!("{name}[{}]", list.len());
            let mut raw = RawTable::new(section, label.clone(), at);
            self.flatten(table, &[], &format!("{label}."), &mut raw.entries);
            list.push(raw);
        }
    }

    fn unknown_top_level(&mut self, name: &str, item: &Item, key_at: Place) {
        let tables = Section::ALL.map(Section::name);
        let is_table = item.is_table_like() || item.is_array_of_tables();
        if is_table {
            self.errors.push(ScenarioError::UnknownTable {
                at: self.at(key_at),
                table: name.to_string(),
                allowed: Section::ALL.map(Section::header).join(", "),
                suggestion: Suggestion(closest(name, tables).map(str::to_string)),
            });
            return;
        }
        // A key outside any table: say which table it belongs in, when it is a known key.
        let wanted = canonical(name);
        let mut homes: Vec<String> = Vec::new();
        for def in DEFS {
            let header = def.section().header();
            if canonical(def.key) == wanted && !homes.contains(&header) {
                homes.push(header);
            }
        }
        self.errors.push(if homes.is_empty() {
            ScenarioError::UnknownKey {
                at: self.at(key_at),
                key: name.to_string(),
                suggestion: Suggestion(None),
            }
        } else {
            ScenarioError::MisplacedKey {
                at: self.at(key_at),
                key: name.to_string(),
                table: "the top level".to_string(),
                belongs: homes.join(" or "),
            }
        });
    }

    /// Where the written key of a leaf starts: for `a.b.c = 1`, at `a`, although the span
    /// `toml_edit` keeps is that of `c` (and `a` is shared by every key under it). Walks back from
    /// the leaf to the start of its line (or the `{` or `,` before it in an inline table).
    fn key_place(&self, leaf: Option<std::ops::Range<usize>>) -> Option<Place> {
        let start = leaf?.start;
        let bytes = self.text.as_bytes();
        let before = bytes.get(..start)?;
        let mut from = before
            .iter()
            .rposition(|b| matches!(b, b'\n' | b'{' | b','))
            .map_or(0, |i| i + 1);
        while from < start && matches!(bytes.get(from), Some(b' ' | b'\t')) {
            from += 1;
        }
        Some(self.places.of_offset(from))
    }

    /// Appends every leaf of `table` to `out`, with its path below `path`.
    fn flatten(
        &mut self,
        table: &dyn TableLike,
        path: &[String],
        prefix: &str,
        out: &mut Vec<Entry>,
    ) {
        for (name, item) in table.iter() {
            let mut child = path.to_vec();
            child.extend(name.split('.').map(str::to_string));
            if let Some(sub) = item.as_table_like() {
                self.flatten(sub, &child, prefix, out);
                continue;
            }
            let value = match item {
                Item::Value(v) => raw(v),
                Item::ArrayOfTables(_) => Raw::Other("an array of tables"),
                Item::None | Item::Table(_) => continue,
            };
            let value_at = self.place(item.span());
            let key_at = self
                .key_place(table.key(name).and_then(|k| k.span()))
                .unwrap_or_else(|| value_at.clone());
            out.push(Entry {
                path: child,
                prefix: prefix.to_string(),
                value,
                literal: None,
                key_at,
                value_at,
                refusal: None,
            });
        }
    }
}

/// The value of a `--set` (or preset) literal: TOML if it parses, else a bare word such as
/// kill-15 or 1.9.16.
pub(in crate::scenario) fn literal(value: &str) -> Raw {
    match value.parse::<Value>() {
        Ok(v) => raw(&v),
        Err(_) => Raw::Str(value.to_string()),
    }
}

fn raw(value: &Value) -> Raw {
    match value {
        Value::String(s) => Raw::Str(s.value().clone()),
        Value::Integer(i) => Raw::Int(*i.value()),
        Value::Float(f) => Raw::Float(*f.value()),
        Value::Boolean(b) => Raw::Bool(*b.value()),
        Value::Datetime(_) => Raw::Other("a date-time"),
        Value::Array(a) => Raw::Array(a.iter().map(raw).collect()),
        Value::InlineTable(_) => Raw::Other("a table"),
    }
}

fn describe_value(value: &Value) -> String {
    match value {
        Value::InlineTable(_) => "a table".to_string(),
        v => raw(v).describe(),
    }
}

fn describe_item(item: &Item) -> String {
    match item {
        Item::None => "nothing".to_string(),
        Item::Value(v) => describe_value(v),
        Item::Table(_) => "a table".to_string(),
        Item::ArrayOfTables(_) => "an array of tables".to_string(),
    }
}

/// Appends `--set` `arg`'s assignment of `value` to `path` (displayed after `prefix`) to `table`.
fn push_override(table: &mut RawTable, path: &str, prefix: String, value: &str, arg: &str) {
    let raw = literal(value);
    let place = Place::Set(arg.to_string());
    table.entries.push(Entry {
        path: path.split('.').map(str::to_string).collect(),
        prefix,
        value: raw,
        literal: Some(value.to_string()),
        key_at: place.clone(),
        value_at: place,
        refusal: None,
    });
}

/// What `--set` accepts before `.`, for messages.
const SET_TABLES: &str = "simulation, network, server, clients, peer[N], app[N], caller[N], \
                          shutdown[N], claim[N], restart[N], deploy[N], fault[N] (or \
                          peer.<name>, \
                          app.<name>, ..., or caller[*] for every [[caller]])";

impl RawScenario {
    /// Applies one `--set KEY=VALUE`: the entry is appended to its table and, being from `--set`,
    /// replaces the file's value for the same key when keys are bound.
    pub(in crate::scenario) fn apply_override(
        &mut self,
        arg: &str,
        file: &str,
    ) -> Result<(), ScenarioError> {
        let bad = |problem: String| ScenarioError::BadOverride {
            at: Location::boxed(file, Place::Set(arg.to_string())),
            problem,
        };
        let Some((key, value)) = arg.split_once('=') else {
            return Err(bad(format!(
                "`{arg}` is not KEY=VALUE (such as simulation.trials=10)"
            )));
        };
        let (key, value) = (key.trim(), value.trim());
        let end = key.find(['.', '[']).unwrap_or(key.len());
        let (table_name, rest) = key.split_at(end);
        let Some(section) = Section::by_name(table_name) else {
            let hint = closest(table_name, Section::ALL.map(Section::name))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(bad(format!(
                "unknown table `{table_name}` in `{key}`; allowed: {SET_TABLES}{hint}"
            )));
        };
        if let Some(after) = rest.strip_prefix("[*]").filter(|_| section.is_array()) {
            return self
                .apply_to_every(section, after, value, arg)
                .map_err(|problem| bad(format!("`{key}`: {problem}")));
        }
        let (table, path) = if !section.is_array() {
            let table = self.single_mut(section);
            match (table, rest.strip_prefix('.')) {
                (Some(table), Some(path)) => (table, path),
                _ => {
                    return Err(bad(format!(
                        "`{key}` names no key: write {table_name}.<key>=<value>"
                    )));
                }
            }
        } else {
            self.array_target(section, rest)
                .map_err(|problem| bad(format!("`{key}`: {problem}")))?
        };
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(bad(format!("`{key}` names no key")));
        }
        let prefix = key[..key.len() - path.len()].to_string();
        push_override(table, path, prefix, value, arg);
        Ok(())
    }

    /// `--set TABLE[*].path=value`: the assignment to every table of the array (`caller[*]`:
    /// every `[[caller]]`), as if given once per index.
    fn apply_to_every(
        &mut self,
        section: Section,
        after: &str,
        value: &str,
        arg: &str,
    ) -> Result<(), String> {
        let name = section.name();
        let Some(path) = after
            .strip_prefix('.')
            .filter(|p| !p.split('.').any(str::is_empty))
        else {
            return Err(format!("expected a key after {name}[*]"));
        };
        let tables = self.array_mut(section).map_or(&mut [][..], |t| &mut t[..]);
        if tables.is_empty() {
            return Err(format!("the file has no {}", section.header()));
        }
        for (index, table) in tables.iter_mut().enumerate() {
            push_override(table, path, format!("{name}[{index}]."), value, arg);
        }
        Ok(())
    }

    /// The table and key path of `[N].path` or `.<name>.path` in an array section.
    fn array_target<'s, 'k>(
        &'s mut self,
        section: Section,
        rest: &'k str,
    ) -> Result<(&'s mut RawTable, &'k str), String> {
        let name = section.name();
        let header = section.header();
        let idents: Vec<Option<String>> = self
            .array(section)
            .iter()
            .map(|t| t.ident().map(str::to_string))
            .collect();
        let count = idents.len();
        let (index, path) = if let Some(indexed) = rest.strip_prefix('[') {
            let Some((index, after)) = indexed.split_once(']') else {
                return Err(format!("expected {name}[N]"));
            };
            let Ok(index) = index.trim().parse::<usize>() else {
                return Err(format!(
                    "`{index}` is not an index; expected {name}[N], or {name}[*] for every one"
                ));
            };
            if index >= count {
                let range = match count {
                    0 => format!("the file has no {header}"),
                    1 => format!("the file has one {header}: {name}[0]"),
                    n => format!("the file has {n} {header}: {name}[0] .. {name}[{}]", n - 1),
                };
                return Err(format!("{name}[{index}] does not exist: {range}"));
            }
            let Some(path) = after.strip_prefix('.') else {
                return Err(format!("expected a key after {name}[{index}]"));
            };
            (index, path)
        } else if let Some(named) = rest.strip_prefix('.') {
            // By name: the longest declared name followed by `.`.
            let found = idents
                .iter()
                .enumerate()
                .filter_map(|(i, id)| {
                    let id = id.as_deref()?;
                    let path = named.strip_prefix(id)?.strip_prefix('.')?;
                    Some((i, id.len(), path))
                })
                .max_by_key(|&(_, len, _)| len);
            let Some((index, _, path)) = found else {
                let known: Vec<&str> = idents.iter().filter_map(|i| i.as_deref()).collect();
                let known = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                return Err(format!(
                    "no {header} is named by the start of `{named}` (declared: {known}); \
                     or use {name}[N]"
                ));
            };
            (index, path)
        } else {
            return Err(format!("expected {name}[N].<key> or {name}.<name>.<key>"));
        };
        match self.array_mut(section).and_then(|list| list.get_mut(index)) {
            Some(table) => Ok((table, path)),
            None => Err(format!("{name}[{index}] does not exist")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_ok(text: &str) -> RawScenario {
        let (raw, errors) = read(text, "t.toml").unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        raw
    }

    fn paths(table: &RawTable) -> Vec<String> {
        table.entries.iter().map(|e| e.path.join(".")).collect()
    }

    #[test]
    fn dotted_keys_sub_tables_inline_tables_and_quoted_keys_flatten_alike() {
        let forms = [
            "[server]\neureka.server.x = 1\n",
            "[server.eureka.server]\nx = 1\n",
            "[server]\neureka = { server = { x = 1 } }\n",
            "[server]\n\"eureka.server.x\" = 1\n",
            "server.eureka.server.x = 1\n",
        ];
        for text in forms {
            let raw = read_ok(text);
            let server = raw.single(Section::Server).unwrap();
            assert_eq!(paths(server), ["eureka.server.x"], "{text}");
            assert_eq!(server.entries[0].display(), "server.eureka.server.x");
            assert_eq!(server.entries[0].value, Raw::Int(1));
        }
    }

    #[test]
    fn places_point_at_the_start_of_the_written_key() {
        let raw = read_ok("[server]\n\n  eureka.server.x = 1\n");
        let e = &raw.single(Section::Server).unwrap().entries[0];
        assert_eq!(e.key_at, Place::LineCol { line: 3, column: 3 });
        assert_eq!(
            e.value_at,
            Place::LineCol {
                line: 3,
                column: 21
            }
        );
    }

    #[test]
    fn arrays_of_tables_are_numbered() {
        let raw = read_ok("[[app]]\nname = \"a\"\n[[app]]\nname = \"b\"\n");
        assert_eq!(raw.apps.len(), 2);
        assert_eq!(raw.apps[1].label, "app[1]");
        assert_eq!(raw.apps[1].ident(), Some("b"));
        assert_eq!(raw.apps[1].at, Place::LineCol { line: 3, column: 1 });
        let inline = read_ok("app = [{ name = \"a\" }]\n");
        assert_eq!(inline.apps[0].ident(), Some("a"));
    }

    #[test]
    fn wrong_shapes_and_unknown_tables_are_errors() {
        let (_, errors) = read("[app]\nname = \"a\"\n[simulaton]\n", "t.toml").unwrap();
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            text,
            [
                "t.toml:1:2: `app` must be an array of tables ([[app]]), not a table",
                "t.toml:3:2: unknown table `simulaton`; allowed tables: [simulation], \
                 [network], [server], [clients], [[peer]], [[app]], [[caller]], \
                 [[shutdown]], [[claim]], [[restart]], [[deploy]], [[fault]]; did you mean \
                 `simulation`?"
            ]
        );
        let (_, errors) = read("trials = 3\n", "t.toml").unwrap();
        assert_eq!(
            errors[0].to_string(),
            "t.toml:1:1: `trials` is not a key of the top level; it belongs in [simulation]"
        );
    }

    #[test]
    fn syntax_errors_have_a_line_and_column() {
        let e = read("[server]\nx = \n", "t.toml").unwrap_err();
        assert!(e.to_string().starts_with("t.toml:2:"), "{e}");
    }

    #[test]
    fn overrides_append_entries_with_their_argument_as_place() {
        let mut raw = read_ok("[[app]]\nname = \"svc\"\n[[shutdown]]\ninstance = \"svc-0\"\n");
        raw.apply_override("shutdown[0].strategy=kill-15", "t.toml")
            .unwrap();
        raw.apply_override("app.svc.instances=3", "t.toml").unwrap();
        raw.apply_override("simulation.release=2020.0", "t.toml")
            .unwrap();
        let e = raw.shutdowns[0].entries.last().unwrap();
        assert_eq!(e.value, Raw::Str("kill-15".into()));
        assert_eq!(e.display(), "shutdown[0].strategy");
        assert!(e.is_override());
        let e = raw.apps[0].entries.last().unwrap();
        assert_eq!(
            (e.display(), &e.value),
            ("app.svc.instances".into(), &Raw::Int(3))
        );
        let e = &raw.single(Section::Simulation).unwrap().entries[0];
        assert_eq!(e.literal.as_deref(), Some("2020.0"));
    }

    /// `caller[*]` assigns the key in every `[[caller]]`, each entry named by its own index.
    #[test]
    fn a_star_index_sets_every_table_of_the_array() {
        let text = "[[caller]]\nname = \"a\"\n[[caller]]\nname = \"b\"\n[[caller]]\nname = \"c\"\n";
        let mut raw = read_ok(text);
        raw.apply_override("caller[*].ribbon.ServerListRefreshInterval=7500", "t.toml")
            .unwrap();
        for (i, caller) in raw.callers.iter().enumerate() {
            let e = caller.entries.last().unwrap();
            assert_eq!(
                (e.display(), &e.value),
                (
                    format!("caller[{i}].ribbon.ServerListRefreshInterval"),
                    &Raw::Int(7500)
                )
            );
            assert!(e.is_override());
        }
    }

    #[test]
    fn bad_override_targets_name_the_argument() {
        let mut raw = read_ok("[[app]]\nname = \"svc\"\n");
        let cases = [
            ("trials", "is not KEY=VALUE"),
            ("simulaton.trials=1", "unknown table `simulaton`"),
            (
                "app[1].instances=3",
                "app[1] does not exist: the file has one [[app]]: app[0]",
            ),
            (
                "caller[0].rate-per-s=1",
                "caller[0] does not exist: the file has no [[caller]]",
            ),
            ("app.svx.instances=3", "declared: svc"),
            ("app[x].instances=3", "is not an index"),
            ("app[x].instances=3", "or app[*] for every one"),
            ("caller[*].rate-per-s=1", "the file has no [[caller]]"),
            ("app[*]=3", "expected a key after app[*]"),
            ("app[*].=3", "expected a key after app[*]"),
            ("server=1", "names no key"),
            ("server.=1", "names no key"),
        ];
        for (arg, expected) in cases {
            let e = raw.apply_override(arg, "t.toml").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("t.toml (--set {arg}): bad --set argument")),
                "{e}"
            );
            assert!(e.contains(expected), "{arg}: {e}");
        }
    }
}
