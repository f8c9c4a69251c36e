//! The import rule of ARCHITECTURE.md, kept true by a test: no circle of imports between the files of
//! `src/`, except between a module and its ancestors (a parent declares and re-exports its
//! children; a child uses what its parent defines) and between the files of the world's own
//! folder (`src/eureka/world/`, the dispatcher, which is the one place allowed to know everyone).
//!
//! Run it alone with `cargo test --lib import_graph -- --nocapture` (it prints the graph's
//! size). It reads every `src/**/*.rs` file, drops comments, string literals and `#[cfg(test)]`
//! items (tests may import anything), and takes each path that starts with `crate::`, `super::`,
//! `self::` or a child module's name (in `use` lines, with `{...}` groups expanded, and in code).
//! A path points at the deepest module it names; an item a module only re-exports (`pub use
//! child::Item`) is followed to the module that defines it, so a cycle cannot hide behind a
//! `mod.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders whose files may import each other in a circle (the dispatcher's own files).
const CIRCLE_ALLOWED_UNDER: &[&str] = &["crate::eureka::world"];

/// Circles that exist outside `eureka/` and `engine/` and belong to another part of that rule
/// (the layers above the simulation core). Each must go; the test fails on any other circle, so
/// none can be added. Remove an entry when its circle is gone (the test then insists).
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// One module: its file's code (comments, strings and test items removed) and its children.
struct Module {
    file: PathBuf,
    code: String,
    children: BTreeSet<String>,
}

/// `crate::a::b` for `src/a/b.rs` or `src/a/b/mod.rs`; `crate` for `src/lib.rs`.
fn module_path(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    match stem {
        "lib" if parts.is_empty() => {}
        "main" if parts.is_empty() => return None,
        "mod" => {}
        _ => parts.push(stem.to_string()),
    }
    let mut path = String::from("crate");
    for p in parts {
        path.push_str("::");
        path.push_str(&p);
    }
    Some(path)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src/")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Removes comments and the contents of string and char literals (keeping line structure
/// irrelevant: the result is only scanned for paths).
fn strip_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
            && !ident_before(b, i)
        {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\''), or a lifetime ('a) which is kept.
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            // Copy one whole UTF-8 character.
            let len = utf8_len(c);
            out.push_str(&text[i..i + len]);
            i += len;
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Removes every item under `#[cfg(test)]` (a `mod x;` declaration or a braced item), and
/// returns the names of test-only `mod x;` declarations.
fn strip_test_items(code: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(code.len());
    let mut test_mods = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let semi = after.find(';');
        let brace = after.find('{');
        match (semi, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => {
                let decl = after[..s].trim();
                if let Some(name) = decl.strip_prefix("mod ").or(decl.strip_prefix("pub mod ")) {
                    test_mods.push(name.trim().to_string());
                }
                rest = &after[s + 1..];
            }
            (_, Some(b)) => {
                let bytes = after.as_bytes();
                let mut depth = 0usize;
                let mut end = after.len();
                for (k, &ch) in bytes.iter().enumerate().skip(b) {
                    if ch == b'{' {
                        depth += 1;
                    } else if ch == b'}' {
                        depth -= 1;
                        if depth == 0 {
                            end = k + 1;
                            break;
                        }
                    }
                }
                rest = &after[end..];
            }
            _ => rest = "",
        }
    }
    out.push_str(rest);
    (out, test_mods)
}

/// Every `use` statement's paths, braces expanded, as segment lists.
fn use_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while let Some(k) = code[i..].find("use ") {
        let at = i + k;
        i = at + 4;
        if ident_before(b, at) {
            continue;
        }
        let Some(end) = code[i..].find(';') else {
            break;
        };
        expand(&code[i..i + end], &mut Vec::new(), &mut paths);
        i += end + 1;
    }
    paths
}

/// Expands `a::{b, c::{d, e}}` under `prefix` into full paths (`x as y` keeps `x`).
fn expand(body: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let body = body.trim().trim_start_matches("::");
    let segments = |s: &str| -> Vec<String> {
        s.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    if let Some(open) = body.find('{') {
        let n = prefix.len();
        prefix.extend(segments(&body[..open]));
        let inner = &body[open + 1..body.rfind('}').unwrap_or(body.len())];
        let mut depth = 0;
        let mut start = 0;
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..k], prefix, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], prefix, out);
        prefix.truncate(n);
    } else if !body.is_empty() {
        let name = body.split_whitespace().next().unwrap_or(body);
        let mut path = prefix.clone();
        path.extend(segments(name));
        out.push(path);
    }
}

/// Paths in code that start with `crate::`, `super::` or `self::`.
fn code_paths(code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut paths = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|s| code[i..].starts_with(s));
        if starts && !ident_before(b, i) {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b':') {
                j += 1;
            }
            paths.push(
                code[i..j]
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
            i = j;
        } else {
            i += 1;
        }
    }
    paths
}

fn parent(module: &str) -> &str {
    module.rsplit_once("::").map_or("crate", |(p, _)| p)
}

/// True if module `a` is `b` or inside it.
fn inside(a: &str, b: &str) -> bool {
    a == b || a.strip_prefix(b).is_some_and(|rest| rest.starts_with("::"))
}

/// True if `a` is `b` or one of its ancestors or descendants.
fn related(a: &str, b: &str) -> bool {
    inside(a, b) || inside(b, a)
}

struct Graph {
    modules: BTreeMap<String, Module>,
    /// Per module: item name -> module path it re-exports from (`pub use child::Item`).
    reexports: BTreeMap<String, BTreeMap<String, String>>,
}

impl Graph {
    fn load(src: &Path) -> Graph {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        let mut modules = BTreeMap::new();
        let mut test_only = BTreeSet::new();
        for file in files {
            let Some(path) = module_path(src, &file) else {
                continue;
            };
            let text = std::fs::read_to_string(&file).expect("read a source file");
            let (code, test_mods) = strip_test_items(&strip_comments_and_strings(&text));
            for m in test_mods {
                test_only.insert(format!("{path}::{m}"));
            }
            modules.insert(
                path,
                Module {
                    file,
                    code,
                    children: BTreeSet::new(),
                },
            );
        }
        modules.retain(|path, _| !test_only.iter().any(|t| inside(path, t)));
        let paths: Vec<String> = modules.keys().cloned().collect();
        for path in &paths {
            if path != "crate" {
                let name = path.rsplit("::").next().unwrap_or_default().to_string();
                if let Some(parent) = modules.get_mut(parent(path)) {
                    parent.children.insert(name);
                }
            }
        }
        let mut graph = Graph {
            modules,
            reexports: BTreeMap::new(),
        };
        for path in &paths {
            let code = graph.modules[path].code.clone();
            let mut map = BTreeMap::new();
            let mut i = 0;
            while let Some(k) = code[i..].find("pub") {
                let at = i + k;
                i = at + 3;
                let rest = code[i..].trim_start();
                let rest = if rest.starts_with('(') {
                    rest[rest.find(')').map_or(0, |p| p + 1)..].trim_start()
                } else {
                    rest
                };
                if let Some(stmt) = rest.strip_prefix("use ") {
                    let stmt = &stmt[..stmt.find(';').unwrap_or(stmt.len())];
                    let mut out = Vec::new();
                    expand(stmt, &mut Vec::new(), &mut out);
                    for p in out {
                        if let Some(item) = p.last()
                            && let Some((target, _)) = graph.resolve(path, &p[..p.len() - 1])
                        {
                            map.insert(item.clone(), target);
                        }
                    }
                }
            }
            graph.reexports.insert(path.clone(), map);
        }
        graph
    }

    /// The module a path's module prefix names, from module `from`, and the index of the first
    /// segment after it; `None` if the path leaves the crate.
    fn resolve(&self, from: &str, segments: &[String]) -> Option<(String, usize)> {
        let mut at = from.to_string();
        let mut i = 0;
        match segments.first().map(String::as_str) {
            Some("crate") => {
                at = "crate".into();
                i = 1;
            }
            Some("self") => i = 1,
            Some("super") => {}
            Some(first) if self.modules[from].children.contains(first) => {}
            _ => return None,
        }
        while segments.get(i).map(String::as_str) == Some("super") {
            at = parent(&at).to_string();
            i += 1;
        }
        while let Some(seg) = segments.get(i) {
            let child = format!("{at}::{seg}");
            if !self.modules.contains_key(&child) {
                break;
            }
            at = child;
            i += 1;
        }
        Some((at, i))
    }

    /// The module that defines what `segments` names, following re-exports.
    fn target(&self, from: &str, segments: &[String]) -> Option<String> {
        let (mut at, i) = self.resolve(from, segments)?;
        if let Some(item) = segments.get(i) {
            for _ in 0..8 {
                match self.reexports.get(&at).and_then(|m| m.get(item)) {
                    Some(next) if *next != at => at = next.clone(),
                    _ => break,
                }
            }
        }
        Some(at)
    }

    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (path, module) in &self.modules {
            let set = edges.entry(path.clone()).or_default();
            let all = use_paths(&module.code)
                .into_iter()
                .chain(code_paths(&module.code));
            for segments in all {
                if let Some(to) = self.target(path, &segments)
                    && &to != path
                {
                    set.insert(to);
                }
            }
        }
        edges
    }
}

/// Strongly connected components of more than one module, after dropping the allowed edges.
fn forbidden_cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let allowed_circle = |a: &str, b: &str| {
        CIRCLE_ALLOWED_UNDER
            .iter()
            .any(|w| inside(a, w) && inside(b, w))
    };
    let kept: BTreeMap<&str, Vec<&str>> = edges
        .iter()
        .map(|(a, tos)| {
            let list = tos
                .iter()
                .filter(|b| !related(a, b) && !allowed_circle(a, b))
                .map(String::as_str)
                .collect();
            (a.as_str(), list)
        })
        .collect();
    // Tarjan's algorithm.
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, g: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in g.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !s.index.contains_key(w) {
                visit(w, g, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for &v in kept.keys() {
        if !state.index.contains_key(v) {
            visit(v, &kept, &mut state);
        }
    }
    state.out
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_circle_outside_the_world_folder_or_between_a_module_and_its_parent() {
    let graph = Graph::load(&src_dir());
    let edges = graph.edges();
    let count: usize = edges.values().map(BTreeSet::len).sum();
    println!("{} modules, {} import edges", edges.len(), count);
    let mut cycles = forbidden_cycles(&edges);
    for known in KNOWN_CIRCLES {
        let known: Vec<String> = known.iter().map(|s| s.to_string()).collect();
        let found = cycles.iter().position(|c| *c == known);
        assert!(
            found.is_some(),
            "the known circle {known:?} is gone: remove it from KNOWN_CIRCLES"
        );
        cycles.retain(|c| *c != known);
    }
    let mut report = String::new();
    for cycle in &cycles {
        report.push_str("circle between:\n");
        for m in cycle {
            let file = graph.modules[m].file.display();
            let inside: Vec<&str> = edges[m]
                .iter()
                .filter(|t| cycle.contains(t))
                .map(String::as_str)
                .collect();
            report.push_str(&format!("  {m} ({file}) imports {inside:?}\n"));
        }
    }
    assert!(cycles.is_empty(), "{report}");
}

/// The rules never see the world; its handlers (the world's `impl` blocks) live in its
/// own folder only. An `impl` header is any code line starting with `impl` whose words before
/// `{` or `for` name `World`, with or without generics.
fn opens_world(code: &str) -> bool {
    code.lines().any(|line| {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("impl") else {
            return false;
        };
        let head = rest.split('{').next().unwrap_or_default();
        let target = head.rsplit(" for ").next().unwrap_or(head);
        target
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == "World")
    })
}

#[test]
fn opens_world_sees_every_spelling_of_the_header() {
    // Spelt in two pieces so that a grep for the header does not find this test.
    assert!(opens_world(concat!("impl<O: Observer> ", "World<'_, O> {")));
    assert!(opens_world(concat!("  impl ", "World {")));
    assert!(opens_world("impl<'a, O> Drop for World<'a, O> {"));
    assert!(!opens_world("impl Route {"));
    assert!(!opens_world("impl WorldView for Route {"));
    assert!(!opens_world(concat!("// impl ", "World")));
}

#[test]
fn no_impl_world_outside_the_world_folder() {
    let graph = Graph::load(&src_dir());
    let world = "crate::eureka::world";
    let outside: Vec<String> = graph
        .modules
        .iter()
        .filter(|(path, module)| !inside(path, world) && opens_world(&module.code))
        .map(|(_, module)| module.file.display().to_string())
        .collect();
    assert!(
        outside.is_empty(),
        "the world's impl blocks outside src/eureka/world/: {outside:?}"
    );
}

#[test]
fn the_scanner_sees_a_circle_and_follows_a_reexport() {
    let mut edges = BTreeMap::new();
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    edges.insert("crate::a::x".to_string(), set(&["crate::a::y"]));
    edges.insert("crate::a::y".to_string(), set(&["crate::a::x", "crate::a"]));
    edges.insert("crate::a".to_string(), set(&["crate::a::x"]));
    edges.insert(
        "crate::eureka::world::h".to_string(),
        set(&["crate::eureka::world"]),
    );
    edges.insert(
        "crate::eureka::world".to_string(),
        set(&["crate::eureka::world::h"]),
    );
    assert_eq!(
        forbidden_cycles(&edges),
        vec![vec!["crate::a::x".to_string(), "crate::a::y".to_string()]]
    );
    let mut out = Vec::new();
    expand("super::{a, b::{C, D}}", &mut Vec::new(), &mut out);
    assert_eq!(
        out,
        vec![
            vec!["super", "a"],
            vec!["super", "b", "C"],
            vec!["super", "b", "D"]
        ]
    );
}
