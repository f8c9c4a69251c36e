//! Binding: each flattened entry of a table becomes a [`Setting`] of a known key with a checked
//! value, or an error that says which key was meant.
//!
//! Matching follows [`crate::scenario::keys`]: relaxed for Spring and model keys, exact for Ribbon
//! keys (with a did-you-mean on the wrong case), `<app>.ribbon.<Key>` for the Ribbon keys of
//! one called app, and `niws.loadbalancer.<app>.<Key>` for its circuit breaker's keys. Two spellings of one key in one table are an error; a `--set` entry replaces
//! the file's value instead.

use crate::scenario::error::{Location, Place, ScenarioError, Suggestion};
use crate::scenario::keys::{
    Binding, DEFS, EXACT_ALIASES, KeyDef, Kind, Problem, Raw, Section, Val, canonical,
    canonical_names, canonical_segment, closest,
};
use crate::scenario::spring::{DRAWN_PER_INSTANCE, duration_ms, spring_boolean};

use super::raw::{Entry, RawTable};

/// Which configuration a setting belongs to: the table's own, or one called app's Ribbon client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) enum Scope {
    Global,
    /// `<app>.ribbon.<Key>` or `niws.loadbalancer.<app>.<Key>`: the app's name.
    App(String),
    /// A [`Binding::MapKey`] key: its map key as written (`defaultZone`).
    MapKey(String),
}

/// A key bound to its definition, with a checked value.
#[derive(Debug, Clone)]
pub(in crate::scenario) struct Setting {
    /// Index into [`DEFS`]: settings are applied in this order.
    pub index: usize,
    pub def: &'static KeyDef,
    pub scope: Scope,
    pub val: Val,
    /// The key as written, with its table (`server.eureka.server.x`).
    pub display: String,
    pub key_at: Place,
    pub value_at: Place,
}

/// One table with its keys bound.
#[derive(Debug)]
pub(in crate::scenario) struct Resolved {
    pub section: Section,
    pub label: String,
    pub at: Place,
    /// In [`DEFS`] order, one per key and scope.
    pub settings: Vec<Setting>,
    /// Keys of `spring-config` files the model does not use: (file, key as written).
    pub ignored: Vec<(String, String)>,
    /// Warnings for ignored keys whose values could not be resolved.
    pub unresolved: Vec<String>,
}

impl Resolved {
    /// The setting of `key` (a definition's spelling) in the table's own scope.
    pub(in crate::scenario) fn get(&self, key: &str) -> Option<&Setting> {
        self.settings
            .iter()
            .find(|s| s.def.key == key && s.scope == Scope::Global)
    }

    /// The setting of map key `key` (a definition's spelling) for map key `name`.
    pub(in crate::scenario) fn get_map(&self, key: &str, name: &str) -> Option<&Setting> {
        self.settings
            .iter()
            .find(|s| s.def.key == key && matches!(&s.scope, Scope::MapKey(n) if n == name))
    }

    /// Where `key` was set, or the table itself when it was not.
    pub(in crate::scenario) fn place_of(&self, key: &str) -> Place {
        self.get(key)
            .map_or(self.at.clone(), |s| s.value_at.clone())
    }

    /// The full dotted path of `key` in this table, as the user wrote it if they did.
    pub(in crate::scenario) fn path_of(&self, key: &str) -> String {
        self.get(key)
            .map_or_else(|| format!("{}.{key}", self.label), |s| s.display.clone())
    }
}

/// Binds every entry of `table`; `apps` are the declared app names (for `<app>.ribbon.<Key>`).
/// Errors are appended to `errors` so that a file's problems are reported together.
pub(in crate::scenario) fn resolve(
    table: &RawTable,
    apps: &[&str],
    file: &str,
    errors: &mut Vec<ScenarioError>,
) -> Resolved {
    let at = |place: &Place| Location::boxed(file, place.clone());
    let mut settings: Vec<Setting> = Vec::new();
    let mut ignored = Vec::new();
    let mut unresolved = Vec::new();
    for entry in &table.entries {
        let (index, scope) = match bind(table.section, entry, apps, file) {
            Ok(bound) => bound,
            Err(e) => {
                match spring_verdict(table.section, entry, e) {
                    Some(e) => errors.push(e),
                    None => {
                        if let Place::Spring { file, .. } = &entry.key_at {
                            ignored.push((file.clone(), entry.path.join(".")));
                        }
                        // A value drawn per instance is refused for binding only.
                        let unresolvable = entry
                            .refusal
                            .as_ref()
                            .filter(|why| !why.contains(DRAWN_PER_INSTANCE));
                        if let Some(why) = unresolvable {
                            unresolved.push(format!(
                                "{}: {why} (a key the model does not use, so not an error)",
                                at(&entry.value_at)
                            ));
                        }
                    }
                }
                continue;
            }
        };
        let Some(def) = DEFS.get(index) else {
            continue;
        };
        if let Some(why) = &entry.refusal {
            errors.push(ScenarioError::SpringConfig {
                at: at(&entry.value_at),
                problem: format!("{why} (the model binds it to `{}`)", def.key),
            });
            continue;
        }
        let value = if entry.is_spring() {
            spring_value(def, &entry.value)
        } else {
            entry.value.clone()
        };
        let val = match def.kind.convert(&value, entry.literal.as_deref()) {
            Ok(val) => val,
            Err(Problem::WrongType { expected, found }) => {
                errors.push(ScenarioError::WrongType {
                    at: at(&entry.value_at),
                    key: entry.display(),
                    expected,
                    found,
                    allowed: allowed_for(def, entry),
                });
                continue;
            }
            Err(Problem::Invalid(problem)) => {
                errors.push(ScenarioError::InvalidValue {
                    at: at(&entry.value_at),
                    key: entry.display(),
                    problem,
                    allowed: allowed_for(def, entry),
                });
                continue;
            }
        };
        let setting = Setting {
            index,
            def,
            scope,
            val,
            display: entry.display(),
            key_at: entry.key_at.clone(),
            value_at: entry.value_at.clone(),
        };
        let same = settings
            .iter()
            .position(|s| s.index == setting.index && s.scope == setting.scope);
        // Spring binds the `@ConfigurationProperties` key after the legacy `@Value` field
        // (`KeyDef`s with an exact alias, `keys::EXACT_ALIASES`), so among a table's Spring
        // files the modern name wins whichever comes later.
        let legacy = |s: &Setting| EXACT_ALIASES.iter().any(|a| s.display.ends_with(a));
        match same {
            None => settings.push(setting),
            Some(i)
                if entry.is_spring()
                    && settings[i].key_at.is_imported()
                    && legacy(&setting)
                    && !legacy(&settings[i]) => {}
            // `--set` entries come after the file's and replace them (and earlier `--set`s);
            // the preset's and `spring-config` entries come first and anything after replaces
            // them (a file's the preset's, a later file's, the table's own).
            Some(i) if entry.is_override() || settings[i].key_at.is_imported() => {
                settings[i] = setting;
            }
            Some(i) => errors.push(ScenarioError::DuplicateKey {
                at: at(&setting.key_at),
                key: setting.display,
                first_key: settings[i].display.clone(),
                first_at: settings[i].key_at.clone(),
            }),
        }
    }
    settings.sort_by_key(|s| s.index);
    Resolved {
        section: table.section,
        label: table.label.clone(),
        at: table.at.clone(),
        settings,
        ignored,
        unresolved,
    }
}

/// What becomes of a `spring-config` entry that binds to no key here: `None` (ignored, listed
/// once) for a key the model does not use, a key of another table, or Ribbon settings of a
/// client the scenario does not call; the error for a near-miss of a key this table takes
/// (a misspelling, Ribbon's exact case), which would otherwise be silently lost. Entries of the
/// scenario file keep every error.
fn spring_verdict(section: Section, entry: &Entry, error: ScenarioError) -> Option<ScenarioError> {
    if !entry.is_spring() {
        return Some(error);
    }
    match error {
        ScenarioError::WrongCase { at, key, expected } => Some(ScenarioError::SpringConfig {
            at,
            problem: format!(
                "unknown key `{key}`: Ribbon keys are case-sensitive; did you mean \
                 `{expected}`? Archaius looks Ribbon keys up by their exact name, so the real \
                 stack would ignore this one and keep the default; write it as `{}` in the file",
                expected.rsplit('.').next().unwrap_or(&expected)
            ),
        }),
        ScenarioError::UnknownKey { at, key, .. } => {
            near_miss(section, &entry.path).map(|best| ScenarioError::SpringConfig {
                at,
                problem: format!(
                    "unknown key `{key}`; did you mean `{}{best}`? Spring's relaxed binding \
                     matches only spellings of the same name, so the real stack would bind \
                     nothing from this line and keep the default of `{best}`; correct the \
                     spelling in the file",
                    entry.prefix
                ),
            })
        }
        _ => None,
    }
}

/// What the real stack does with a value of a Spring file that the key cannot take, and the
/// fix: a Ribbon or Hystrix key is read through Archaius, whose dynamic properties log a value
/// they cannot parse and keep the default (`DynamicIntProperty` and its kin); any other key is
/// bound by Spring Boot's `Binder` into a `@ConfigurationProperties` bean, and a conversion that
/// fails stops the start (`BindException`).
fn spring_consequence(entry: &Entry) -> &'static str {
    let archaius = entry.path.iter().any(|s| canonical(s) == "ribbon")
        || entry
            .path
            .first()
            .is_some_and(|s| matches!(canonical(s).as_str(), "niws" | "hystrix"));
    if archaius {
        "Archaius would log the value and keep the key's default; write an allowed value in \
         the file"
    } else {
        "Spring would fail to start (the binder cannot convert it: BindException); write an \
         allowed value in the file"
    }
}

/// What `def` allows, and for a Spring file's entry what the real stack does with the value.
fn allowed_for(def: &KeyDef, entry: &Entry) -> String {
    if entry.is_spring() {
        format!("{}. {}", def.kind.allowed(), spring_consequence(entry))
    } else {
        def.kind.allowed()
    }
}

/// The key this table takes that `path` misspells: the same segments but the last, whose
/// relaxed form is at most two edits (one for short names) from the key's. Looser
/// resemblance is not a near-miss: a Spring file holds many keys the model does not know.
fn near_miss(section: Section, path: &[String]) -> Option<String> {
    let [head @ .., last] = path else {
        return None;
    };
    let head = canonical(&head.join("."));
    let last = canonical_segment(last);
    let last_chars = last.chars().count();
    let close = |candidate_last: &str| {
        let limit = if candidate_last.len() < 12 { 1 } else { 2 };
        // The distance is at least the difference in length: a name longer or shorter by
        // more than the limit is no near-miss, and is not compared (a comparison costs the
        // product of the lengths; a 1 MB key in a Spring file took seconds per candidate).
        if last_chars.abs_diff(candidate_last.chars().count()) > limit {
            return false;
        }
        let d = strsim::damerau_levenshtein(&last, candidate_last);
        (d > 0 || last != candidate_last) && d <= limit
    };
    let names = |d: &'static KeyDef| std::iter::once(d.key).chain(d.aliases.iter().copied());
    let global = DEFS
        .iter()
        .enumerate()
        .filter(|(_, d)| section.accepts(d.section()))
        .flat_map(|(i, d)| names(d).zip(canonical_names(i)))
        .find(|(_, c)| {
            let (c_head, c_last) = c.rsplit_once('.').unwrap_or(("", c));
            c_head == head && close(c_last)
        })
        .map(|(n, _)| n.to_string());
    // `<client>.ribbon.<Key>`: the Ribbon leaves under the same client.
    let per_app = || {
        let (client, ribbon) = head.rsplit_once('.')?;
        (ribbon == "ribbon" && section.accepts(Section::Clients)).then_some(())?;
        DEFS.iter()
            .filter_map(KeyDef::ribbon_leaf)
            .find(|leaf| close(&canonical_segment(leaf)))
            .map(|leaf| format!("{client}.ribbon.{leaf}"))
    };
    // `niws.loadbalancer.<client>.<Key>`: the breaker's leaves under the same client.
    let per_client = || {
        let client = head.strip_prefix("niws.loadbalancer.")?;
        section.accepts(Section::Clients).then_some(())?;
        DEFS.iter()
            .filter_map(KeyDef::niws_leaf)
            .find(|leaf| close(&canonical_segment(leaf)))
            .map(|leaf| format!("niws.loadbalancer.{client}.{leaf}"))
    };
    global.or_else(per_app).or_else(per_client)
}

/// A `spring-config` value as Spring's converters read it for `def`: booleans by
/// `StringToBooleanConverter` (`on`, `yes`, `1` ...), `java.time.Duration` properties by
/// `DurationStyle` (`30s`, `PT30S`, a bare number in ms) into the model's milliseconds.
fn spring_value(def: &KeyDef, value: &Raw) -> Raw {
    let Raw::Str(text) = value else {
        return value.clone();
    };
    match def.kind {
        Kind::Bool => spring_boolean(text).map_or_else(|| value.clone(), Raw::Bool),
        _ if SPRING_DURATIONS.contains(&def.key) => duration_ms(text)
            .and_then(|ms| i64::try_from(ms).ok())
            .map_or_else(|| value.clone(), Raw::Int),
        _ => value.clone(),
    }
}

/// The modelled keys Spring binds as `java.time.Duration` (in ms without a unit):
/// `LoadBalancerCacheProperties#ttl`, `LoadBalancerProperties.HealthCheck#initialDelay`,
/// `#interval`, `#refetchInstancesInterval` (spring-cloud-commons) and
/// `LifecycleProperties#timeoutPerShutdownPhase` (Spring Boot).
const SPRING_DURATIONS: [&str; 5] = [
    "spring.cloud.loadbalancer.cache.ttl",
    "spring.cloud.loadbalancer.health-check.initial-delay",
    "spring.cloud.loadbalancer.health-check.interval",
    "spring.cloud.loadbalancer.health-check.refetch-instances-interval",
    "spring.lifecycle.timeout-per-shutdown-phase",
];

/// The definition (index into [`DEFS`]) and scope `entry` names in `section`.
fn bind(
    section: Section,
    entry: &Entry,
    apps: &[&str],
    file: &str,
) -> Result<(usize, Scope), ScenarioError> {
    let at = Location::boxed(file, entry.key_at.clone());
    let written = entry.path.join(".");
    let wanted = canonical(&written);
    let accepted = || {
        DEFS.iter()
            .enumerate()
            .filter(move |(_, d)| section.accepts(d.section()))
    };

    let known = |i: usize| canonical_names(i).contains(&wanted);
    if let Some((index, def)) = accepted()
        .filter(|(_, d)| d.binding != Binding::MapKey)
        .find(|&(i, _)| known(i))
    {
        if def.binding == Binding::Ribbon && written != def.key {
            return Err(ScenarioError::WrongCase {
                at,
                key: entry.display(),
                expected: format!("{}{}", entry.prefix, def.key),
            });
        }
        let exact = def
            .aliases
            .iter()
            .copied()
            .find(|&a| EXACT_ALIASES.contains(&a) && canonical(a) == wanted);
        if let Some(alias) = exact.filter(|&a| written != a) {
            return Err(ScenarioError::LegacySpelling {
                at,
                key: entry.display(),
                expected: format!("{}{alias}", entry.prefix),
                modern: format!("{}{}", entry.prefix, def.key),
            });
        }
        return Ok((index, Scope::Global));
    }

    if let Some((index, key)) =
        accepted().find_map(|(i, d)| map_key(d, &entry.path).map(|k| (i, k)))
    {
        return Ok((index, Scope::MapKey(key)));
    }

    // Per-client keys bind only in the tables of processes with a Ribbon client.
    if section.accepts(Section::Clients) {
        if let Some(bound) = bind_per_app(entry, apps, &at) {
            return bound;
        }
        if let Some(bound) = bind_per_client_niws(entry, apps, &at) {
            return bound;
        }
    }

    let homes: Vec<String> = Section::ALL
        .into_iter()
        .filter(|s| {
            DEFS.iter()
                .enumerate()
                .any(|(i, d)| d.section() == *s && (known(i) || map_key(d, &entry.path).is_some()))
        })
        .map(Section::header)
        .collect();
    if !homes.is_empty() {
        return Err(ScenarioError::MisplacedKey {
            at,
            key: entry.display(),
            table: section.header(),
            belongs: homes.join(" or "),
        });
    }

    // A Spring file's unknown key is a near-miss or ignored (`spring_verdict`): no suggestion
    // among all the keys for it.
    if entry.is_spring() {
        return Err(ScenarioError::UnknownKey {
            at,
            key: entry.display(),
            suggestion: Suggestion(None),
        });
    }
    let candidates: Vec<(&str, &str)> = accepted()
        .flat_map(|(i, d)| canonical_names(i).iter().map(move |c| (c.as_str(), d.key)))
        .collect();
    let best = closest(&wanted, candidates.iter().map(|&(c, _)| c));
    let suggestion = best
        .and_then(|b| candidates.iter().find(|&&(c, _)| c == b))
        .map(|(_, key)| format!("{}{key}", entry.prefix));
    Err(ScenarioError::UnknownKey {
        at,
        key: entry.display(),
        suggestion: Suggestion(suggestion),
    })
}

/// The map key `path` gives under map-key definition `def` (`defaultZone` for
/// `eureka.client.serviceUrl.defaultZone`): the prefix binds relaxed, the last segment is kept as
/// written. `None` when `def` is no map key or `path` does not have its shape.
fn map_key(def: &KeyDef, path: &[String]) -> Option<String> {
    let prefix = def.map_prefix()?;
    let [head @ .., key] = path else {
        return None;
    };
    (canonical(&head.join(".")) == canonical(prefix)).then(|| key.clone())
}

/// `<app>.ribbon.<Key>` (in the tables of processes with a Ribbon client); `None` when the entry
/// does not have that shape.
fn bind_per_app(
    entry: &Entry,
    apps: &[&str],
    at: &Location,
) -> Option<Result<(usize, Scope), ScenarioError>> {
    let [client @ .., ribbon, leaf] = entry.path.as_slice() else {
        return None;
    };
    if client.is_empty() || canonical_segment(ribbon) != "ribbon" {
        return None;
    }
    let client = client.join(".");
    let leaves = || {
        DEFS.iter()
            .enumerate()
            .filter_map(|(i, d)| d.ribbon_leaf().map(|leaf| (i, leaf)))
    };
    let full = |leaf: &str| format!("{}{client}.ribbon.{leaf}", entry.prefix);
    let Some((index, exact)) =
        leaves().find(|(_, l)| canonical_segment(l) == canonical_segment(leaf))
    else {
        let best = closest(leaf, leaves().map(|(_, l)| l));
        return Some(Err(ScenarioError::UnknownKey {
            at: Box::new(at.clone()),
            key: entry.display(),
            suggestion: Suggestion(best.map(full)),
        }));
    };
    if ribbon != "ribbon" || leaf != exact {
        return Some(Err(ScenarioError::WrongCase {
            at: Box::new(at.clone()),
            key: entry.display(),
            expected: full(exact),
        }));
    }
    Some(
        declared_client(client, apps, entry, at, |app| {
            format!("{}{app}.ribbon.{exact}", entry.prefix)
        })
        .map(|scope| (index, scope)),
    )
}

/// `niws.loadbalancer.<app>.<Key>` for the circuit breaker's keys ([`KeyDef::niws_leaf`]) (in the
/// tables of processes with a Ribbon client); `None` when the entry does not have that shape.
/// Archaius reads the name exactly, so every segment but the app's must be spelt as Ribbon
/// spells it (`niws.loadbalancer.default.*` itself binds before this, as a key of the table).
fn bind_per_client_niws(
    entry: &Entry,
    apps: &[&str],
    at: &Location,
) -> Option<Result<(usize, Scope), ScenarioError>> {
    let [niws, loadbalancer, client @ .., leaf] = entry.path.as_slice() else {
        return None;
    };
    if client.is_empty()
        || canonical_segment(niws) != "niws"
        || canonical_segment(loadbalancer) != "loadbalancer"
    {
        return None;
    }
    let client = client.join(".");
    let (index, exact) = DEFS.iter().enumerate().find_map(|(i, d)| {
        let l = d.niws_leaf()?;
        (canonical_segment(l) == canonical_segment(leaf)).then_some((i, l))
    })?;
    let full = |app: &str| format!("{}niws.loadbalancer.{app}.{exact}", entry.prefix);
    if niws != "niws" || loadbalancer != "loadbalancer" || leaf != exact {
        return Some(Err(ScenarioError::WrongCase {
            at: Box::new(at.clone()),
            key: entry.display(),
            expected: full(&client),
        }));
    }
    Some(declared_client(client, apps, entry, at, full).map(|scope| (index, scope)))
}

/// The scope of a per-client key for `client`, or the error naming the declared apps when no
/// `[[app]]` has that name (`full` spells the key for a suggested app).
fn declared_client(
    client: String,
    apps: &[&str],
    entry: &Entry,
    at: &Location,
    full: impl Fn(&str) -> String,
) -> Result<Scope, ScenarioError> {
    if apps.contains(&client.as_str()) {
        return Ok(Scope::App(client));
    }
    let suggestion = closest(&client, apps.iter().copied()).map(full);
    Err(ScenarioError::UnknownClient {
        at: Box::new(at.clone()),
        key: entry.display(),
        client,
        declared: if apps.is_empty() {
            "none".to_string()
        } else {
            apps.join(", ")
        },
        suggestion: Suggestion(suggestion),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse::raw::read;

    /// The settings of `[clients]` (or the errors) for a file.
    fn clients(text: &str) -> Result<Resolved, Vec<String>> {
        let (raw, mut errors) = read(text, "t.toml").map_err(|e| vec![e.to_string()])?;
        let table = raw.single(Section::Clients).unwrap();
        let resolved = resolve(table, &["svc"], "t.toml", &mut errors);
        if errors.is_empty() {
            Ok(resolved)
        } else {
            Err(errors.iter().map(|e| e.to_string()).collect())
        }
    }

    fn one_error(text: &str) -> String {
        let errors = clients(text).err().unwrap();
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].clone()
    }

    /// A near-miss is a name within two edits of a key's; the filter on length keeps them all
    /// and skips a 10 MB name at once (compared in full, it took seconds per key).
    #[test]
    fn near_misses_are_within_two_edits_whatever_the_name_s_length() {
        let path = |last: &str| ["eureka".to_string(), "client".to_string(), last.to_string()];
        assert_eq!(
            near_miss(Section::Clients, &path("registry-fetch-interval-secondss")).as_deref(),
            Some("eureka.client.registry-fetch-interval-seconds")
        );
        assert_eq!(
            near_miss(Section::Clients, &path("registry-fetch-interval-secs")),
            None
        );
        let huge = path(&"x".repeat(10_000_000));
        let started = std::time::Instant::now();
        assert_eq!(near_miss(Section::Clients, &huge), None);
        let took = started.elapsed();
        assert!(took.as_secs() < 5, "{took:?}");
    }

    #[test]
    fn relaxed_spellings_bind_to_one_key() {
        for key in [
            "eureka.client.registry-fetch-interval-seconds",
            "eureka.client.registryFetchIntervalSeconds",
            "eureka.client.registry_fetch_interval_seconds",
            "Eureka.Client.REGISTRY-FETCH-INTERVAL-SECONDS",
        ] {
            let r = clients(&format!("[clients]\n{key} = 5\n")).unwrap();
            let s = r
                .get("eureka.client.registry-fetch-interval-seconds")
                .unwrap();
            assert_eq!(
                (s.val.clone(), s.display.clone()),
                (Val::Int(5), format!("clients.{key}"))
            );
        }
    }

    #[test]
    fn ribbon_keys_are_case_sensitive_with_a_suggestion() {
        let e = one_error("[clients]\nribbon.serverListRefreshInterval = 5\n");
        assert_eq!(
            e,
            "t.toml:2:1: unknown key `clients.ribbon.serverListRefreshInterval`: Ribbon keys are \
             case-sensitive; did you mean `clients.ribbon.ServerListRefreshInterval`?"
        );
        let e = one_error("[clients]\nsvc.ribbon.maxAutoRetries = 1\n");
        assert!(
            e.ends_with("did you mean `clients.svc.ribbon.MaxAutoRetries`?"),
            "{e}"
        );
        // `ribbon.eager-load.enabled` is a Spring key: relaxed.
        assert!(clients("[clients]\nribbon.eagerLoad.enabled = true\n").is_ok());
    }

    #[test]
    fn per_app_ribbon_keys_need_a_declared_app() {
        let r = clients("[clients]\nsvc.ribbon.MaxAutoRetries = 2\n").unwrap();
        assert_eq!(r.settings[0].scope, Scope::App("svc".into()));
        let e = one_error("[clients]\nsvx.ribbon.MaxAutoRetries = 2\n");
        assert_eq!(
            e,
            "t.toml:2:1: `clients.svx.ribbon.MaxAutoRetries`: `svx` is not a declared [[app]] \
             (declared: svc); did you mean `clients.svc.ribbon.MaxAutoRetries`?"
        );
    }

    /// `LoadBalancerStats` reads `niws.loadbalancer.<clientName>.<Key>` (Ribbon 2.3.0): the
    /// client's name is a scope, and Archaius compares the name exactly.
    #[test]
    fn per_client_breaker_keys_bind_exactly_to_a_declared_app() {
        let r = clients("[clients]\nniws.loadbalancer.svc.circuitTripTimeoutFactorSeconds = 1\n")
            .unwrap();
        let s = &r.settings[0];
        assert_eq!(
            (s.def.key, &s.scope, &s.val),
            (
                "niws.loadbalancer.default.circuitTripTimeoutFactorSeconds",
                &Scope::App("svc".into()),
                &Val::Int(1)
            )
        );
        // The `default` spelling stays the table's own key.
        let r = clients("[clients]\nniws.loadbalancer.default.circuitTripMaxTimeoutSeconds = 3\n")
            .unwrap();
        assert_eq!(r.settings[0].scope, Scope::Global);
        let e =
            one_error("[clients]\nniws.loadbalancer.svc.circuit-trip-max-timeout-seconds = 3\n");
        assert_eq!(
            e,
            "t.toml:2:1: unknown key `clients.niws.loadbalancer.svc.circuit-trip-max-timeout-seconds`: \
             Ribbon keys are case-sensitive; did you mean \
             `clients.niws.loadbalancer.svc.circuitTripMaxTimeoutSeconds`?"
        );
        let e = one_error("[clients]\nniws.loadBalancer.svc.connectionFailureCountThreshold = 2\n");
        assert!(
            e.ends_with(
                "did you mean `clients.niws.loadbalancer.svc.connectionFailureCountThreshold`?"
            ),
            "{e}"
        );
        let e = one_error("[clients]\nniws.loadbalancer.svx.connectionFailureCountThreshold = 2\n");
        assert_eq!(
            e,
            "t.toml:2:1: `clients.niws.loadbalancer.svx.connectionFailureCountThreshold`: `svx` is \
             not a declared [[app]] (declared: svc); did you mean \
             `clients.niws.loadbalancer.svc.connectionFailureCountThreshold`?"
        );
    }

    #[test]
    fn unknown_keys_suggest_the_closest_key_of_the_table() {
        let e = one_error("[clients]\n\neureka.client.registry-fetch-interval-secs = 5\n");
        assert_eq!(
            e,
            "t.toml:3:1: unknown key `clients.eureka.client.registry-fetch-interval-secs`; did \
             you mean `clients.eureka.client.registry-fetch-interval-seconds`? (`eureka-sim keys` \
             lists every key)"
        );
    }

    #[test]
    fn server_keys_in_clients_say_where_they_belong() {
        let e = one_error("[clients]\neureka.server.responseCacheUpdateIntervalMs = 5\n");
        assert_eq!(
            e,
            "t.toml:2:1: `clients.eureka.server.responseCacheUpdateIntervalMs` is not a key of \
             [clients]; it belongs in [server]"
        );
        let e = one_error("[clients]\nname = \"x\"\n");
        assert!(
            e.ends_with("it belongs in [[peer]] or [[app]] or [[caller]] or [[claim]]"),
            "{e}"
        );
    }

    #[test]
    fn two_spellings_of_one_key_are_an_error_naming_both() {
        let e = one_error(
            "[clients]\neureka.client.fetch-registry = true\neureka.client.fetchRegistry = false\n",
        );
        assert_eq!(
            e,
            "t.toml:3:1: `clients.eureka.client.fetchRegistry` sets the same property as \
             `clients.eureka.client.fetch-registry` at line 2, column 1; set it once"
        );
    }

    #[test]
    fn values_are_checked_against_the_key() {
        let e = one_error("[clients]\neureka.instance.lease-renewal-interval-in-seconds = 0\n");
        assert_eq!(
            e,
            "t.toml:2:53: `clients.eureka.instance.lease-renewal-interval-in-seconds`: must be at \
             least 1, got 0; allowed: an integer in 1..=86400 (seconds)"
        );
        let e = one_error("[clients]\neureka.client.fetch-registry = 1\n");
        assert_eq!(
            e,
            "t.toml:2:32: `clients.eureka.client.fetch-registry`: expected a boolean, found an \
             integer (1); allowed: true or false"
        );
    }

    #[test]
    fn map_keys_bind_their_prefix_relaxed_and_keep_the_map_key() {
        for key in [
            "eureka.client.service-url.defaultZone",
            "eureka.client.serviceUrl.defaultZone",
            "Eureka.Client.SERVICE_URL.defaultZone",
        ] {
            let r = clients(&format!("[clients]\n{key} = \"a\"\n")).unwrap();
            let s = r
                .get_map("eureka.client.service-url.<zone>", "defaultZone")
                .unwrap();
            assert_eq!(s.val, Val::List(vec!["a".into()]), "{key}");
        }
        // Spring does not relax a map key: `default-zone` is a zone of its own.
        let r = clients("[clients]\neureka.client.service-url.default-zone = \"a\"\n").unwrap();
        assert_eq!(
            r.settings[0].scope,
            Scope::MapKey("default-zone".to_string())
        );
        // A TOML sub-table is the same key.
        let r =
            clients("[clients.eureka.client.availability-zones]\nus-east-1 = [\"z1\", \"z2\"]\n")
                .unwrap();
        assert_eq!(r.settings[0].scope, Scope::MapKey("us-east-1".to_string()));
        let e = one_error(
            "[clients]\neureka.client.service-url.z1 = \"a\"\neureka.client.serviceUrl.z1 = \"b\"\n",
        );
        assert!(e.contains("sets the same property as"), "{e}");
        // Without its map key the property is unknown, and the suggestion shows the shape.
        let e = one_error("[clients]\neureka.client.service-url = \"a\"\n");
        assert!(
            e.ends_with(
                "did you mean `clients.eureka.client.service-url.<zone>`? (`eureka-sim keys` \
                 lists every key)"
            ),
            "{e}"
        );
        // One segment after the prefix, no more.
        let e = one_error("[clients]\neureka.client.service-url.z1.x = \"a\"\n");
        assert!(e.contains("unknown key"), "{e}");
    }

    #[test]
    fn map_keys_in_a_table_without_clients_say_where_they_belong() {
        let text = "[network]\neureka.client.service-url.z1 = \"a\"\n";
        let (raw, mut errors) = read(text, "t.toml").unwrap();
        let table = raw.single(Section::Network).unwrap();
        resolve(table, &[], "t.toml", &mut errors);
        assert_eq!(
            errors[0].to_string(),
            "t.toml:2:1: `network.eureka.client.service-url.z1` is not a key of [network]; it \
             belongs in [clients]"
        );
    }

    #[test]
    fn all_problems_of_a_table_are_reported() {
        let errors = clients("[clients]\na = 1\nb = 2\nribbon.MaxAutoRetries = -1\n").unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
    }
}
