//! `${name}` and `${name:default}` placeholders, resolved against one table's environment as
//! `PropertySourcesPlaceholdersResolver` does for the binder: nested (in names and defaults),
//! recursive (a value's own placeholders), by relaxed name, each source in Spring's order
//! (the command line's `spring.profiles.active`, the environment variables, `random.*`, the
//! files, `spring.cloud.client.*`, `server.port`'s default). The binder ignores a placeholder
//! it cannot resolve and binds the text as written; here that text is kept and the property
//! carries why ([`Property::refusal`]), an error only if the model binds it.

use super::runtime::{DEFAULT_SERVER_PORT, random_value};
use super::{ACTIVE, Environment, MAX_FILE_BYTES, Property, SpringProblem};
use crate::engine::RngStream;
use crate::scenario::keys::canonical;

/// What the refusal of a value drawn from `random.*` says: a refusal for binding only, never a
/// warning in a key the model does not use.
pub(in crate::scenario) const DRAWN_PER_INSTANCE: &str =
    "which Spring draws anew for each instance";

/// Deepest placeholder nesting (a cycle is reported before this).
const MAX_PLACEHOLDER_DEPTH: usize = 32;

/// The most work resolving one environment's placeholders may take, in bytes written plus
/// placeholders looked up: 16 times the largest file. Placeholders that each use the one
/// before twice double at every step (`a1=${a0}${a0}`, `a2=${a1}${a1}`, ...): 30 lines
/// expand to gigabytes, or to 2^30 lookups of empty values, without any cycle or nesting
/// deeper than [`MAX_PLACEHOLDER_DEPTH`] (found by fuzzing).
const MAX_EXPANSION_WORK: u64 = 16 * MAX_FILE_BYTES;

/// Why one placeholder could not be resolved: the binder keeps the text (`Soft`), or the work
/// budget is spent and the whole environment is refused (`Budget`).
enum Failure {
    Soft(String),
    Budget(String),
}

/// One resolution of an environment's properties for one instance.
pub(super) struct Resolver<'e> {
    env: &'e Environment,
    instance: usize,
    stream: RngStream,
    work_left: u64,
    /// The `random.*` names the property being resolved drew from.
    drew: Vec<String>,
}

impl<'e> Resolver<'e> {
    pub(super) fn new(env: &'e Environment, instance: usize) -> Resolver<'e> {
        Resolver {
            env,
            instance,
            stream: env.runtime.stream(instance),
            work_left: MAX_EXPANSION_WORK,
            drew: Vec::new(),
        }
    }

    /// `p` with its value resolved; a value drawn from `random.*` is refused for binding (the
    /// model gives every instance of a table one value of a key it uses).
    pub(super) fn resolve_property(&mut self, p: &Property) -> Result<Property, SpringProblem> {
        self.drew.clear();
        let problem = |message: String| SpringProblem {
            file: p.file.clone(),
            line: p.line,
            column: p.column,
            message: format!("`{}`: {message}", p.name),
        };
        match self.expand(&p.value, &mut Vec::new()) {
            Ok(value) => {
                let refusal = (!self.drew.is_empty()).then(|| {
                    format!(
                        "`{}` takes `${{random.{}}}`, {DRAWN_PER_INSTANCE} \
                         (RandomValuePropertySource), while the model gives every instance of a \
                         table one value of a key it uses; write a fixed value (random values \
                         are fine in keys the model does not use, such as \
                         eureka.instance.instance-id)",
                        p.name, self.drew[0]
                    )
                });
                Ok(Property {
                    value,
                    refusal,
                    ..p.clone()
                })
            }
            Err(Failure::Soft(why)) => Ok(Property {
                refusal: Some(format!("`{}`: {why}", p.name)),
                ..p.clone()
            }),
            Err(Failure::Budget(why)) => Err(problem(why)),
        }
    }

    /// Whether the last property resolved drew from `random.*`.
    pub(super) fn drew_random(&self) -> bool {
        !self.drew.is_empty()
    }

    fn spend(&mut self, amount: usize) -> Result<(), Failure> {
        let amount = u64::try_from(amount).unwrap_or(u64::MAX);
        self.work_left = self.work_left.checked_sub(amount).ok_or_else(|| {
            Failure::Budget(format!(
                "its placeholders expand to more than {} MiB of text (placeholders that use \
                 others several times over double at every step); allowed: placeholders that \
                 expand to at most that, in all, for the table's files",
                MAX_EXPANSION_WORK >> 20
            ))
        })?;
        Ok(())
    }

    /// The value of `name` from the first source that has it, not yet expanded, and whether
    /// it is final (a drawn or supplied value, not to be expanded again).
    fn lookup(&mut self, name: &str) -> Result<Option<(String, bool)>, Failure> {
        let key = canonical(name);
        if let Some(v) = self
            .env
            .command_line
            .as_ref()
            .filter(|_| key == canonical(ACTIVE))
        {
            return Ok(Some((v.clone(), false)));
        }
        if let Some(v) = self.env.env_exact.get(name) {
            return Ok(Some((v.clone(), false)));
        }
        if let Some(kind) = name.strip_prefix("random.") {
            let v = random_value(kind, &mut self.stream).map_err(Failure::Soft)?;
            self.drew.push(kind.to_string());
            return Ok(Some((v, true)));
        }
        let found = self.env.index.get(&key).map(|&i| &self.env.merged[i]);
        if let Some(p) = found.filter(|p| !p.name.is_empty()) {
            return Ok(Some((p.value.clone(), false)));
        }
        let runtime = &self.env.runtime;
        let found = if key == canonical("spring.cloud.client.hostname") {
            Some(runtime.hostname(self.instance))
        } else if key == canonical("spring.cloud.client.ip-address") {
            Some(runtime.ip_address(self.instance))
        } else if key == canonical("server.port") {
            Some(DEFAULT_SERVER_PORT.to_string())
        } else {
            None
        };
        Ok(found.map(|v| (v, true)))
    }

    /// `text` with every `${name[:default]}` replaced; `seen` are the names being expanded.
    fn expand(&mut self, text: &str, seen: &mut Vec<String>) -> Result<String, Failure> {
        if seen.len() > MAX_PLACEHOLDER_DEPTH {
            return Err(Failure::Soft(format!(
                "placeholders nested deeper than {MAX_PLACEHOLDER_DEPTH}; Spring would fail \
                 too; allowed: at most that depth"
            )));
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            self.spend(start + 1)?;
            out.push_str(&rest[..start]);
            let inner_start = start + 2;
            let end = closing_brace(&rest[inner_start..]).ok_or_else(|| {
                Failure::Soft(format!(
                    "`{text}` has a `${{` without its `}}`; Spring would bind the text as \
                     written; close the placeholder"
                ))
            })?;
            let inner = &rest[inner_start..inner_start + end];
            let (name, default) = split_default(inner);
            let name = self.expand(name, seen)?;
            let name = name.trim();
            let key = canonical(name);
            if seen.contains(&key) {
                return Err(Failure::Soft(format!(
                    "circular placeholder reference `{name}`; Spring would fail to start \
                     (PropertyPlaceholderHelper); break the cycle"
                )));
            }
            let value = match (self.lookup(name)?, default) {
                (Some((v, true)), _) => v,
                (Some((v, false)), _) => {
                    seen.push(key);
                    let v = self.expand(&v, seen)?;
                    seen.pop();
                    v
                }
                (None, Some(default)) => self.expand(default, seen)?,
                (None, None) => return Err(Failure::Soft(unresolved(name))),
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

/// The message for a placeholder nothing supplies: what Spring does and the ways to give it.
fn unresolved(name: &str) -> String {
    let variable = if name.contains('.') {
        super::env::variable_name(name)
    } else {
        name.to_string()
    };
    format!(
        "could not resolve placeholder `${{{name}}}`: no property, environment variable or \
         run-time source supplies `{name}` and it has no default. Spring would bind the text \
         `${{{name}}}` as written (and fail where it must be a number or a URL); a simulation \
         never reads the machine's environment. Give it with `env = {{ {variable} = \"...\" }}` \
         or `env-file = \"FILE\"` in this table (`[simulation] env` for every process), set \
         `{name}` in the file, or write `${{{name}:default}}`"
    )
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
