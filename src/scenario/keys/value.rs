//! Value kinds: what a key accepts, and the checked conversion from a value as written ([`Raw`])
//! to a value the typed scenario can take ([`Val`]).
//!
//! People paste from `application.properties`, so integers, numbers and booleans are also accepted
//! as strings (`"30000"`, `"true"`). Every integer kind has a maximum so that an absurd value is an
//! error here rather than a simulation that never ends.

use crate::scenario::metric::{Metric, Statistic};
use crate::scenario::model::{Comparison, FinalStop, HttpMethod, Strategy, SupplierKind};
use crate::scenario::release::{EurekaVersion, Release, ReleaseError, Train};

use super::{canonical_segment, closest};

/// A value as the TOML file (or a `--set` argument) wrote it, before any key is known.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::scenario) enum Raw {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Array(Vec<Raw>),
    /// Anything a key can never take (a date-time, an array of tables), described for messages.
    Other(&'static str),
}

impl Raw {
    /// "an integer (5)", "a string ("x")": the `found` part of a wrong-type message.
    pub(in crate::scenario) fn describe(&self) -> String {
        match self {
            Raw::Int(i) => format!("an integer ({i})"),
            Raw::Float(f) => format!("a number ({})", number(*f)),
            Raw::Bool(b) => format!("a boolean ({b})"),
            Raw::Str(s) => format!("a string ({s:?})"),
            Raw::Array(_) => "an array".to_string(),
            Raw::Other(what) => (*what).to_string(),
        }
    }
}

/// A checked value, of the kind its key's definition declares.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::scenario) enum Val {
    Int(u64),
    Float(f64),
    Bool(bool),
    Text(String),
    List(Vec<String>),
    /// A `simulation.release`: a train, optionally one of its service releases.
    Train(Release),
    Version(EurekaVersion),
    Strategy(Strategy),
    Stop(FinalStop),
    Method(HttpMethod),
    Supplier(SupplierKind),
    Metric(Metric),
    Statistic(Statistic),
    Comparison(Comparison),
    Shutdown(ShutdownRef),
}

/// A claim's `shutdown`: an index into the `[[shutdown]]` tables or the instance id of one,
/// resolved once the shutdowns are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::scenario) enum ShutdownRef {
    Index(usize),
    Instance(String),
}

// Accessors for the setters in `DEFS`. A key's `Kind` decides which `Val` it produces, so a
// mismatch is a bug in the definition table, not in user input; it yields a zero value instead of
// a panic, and `keys::tests::every_key_changes_the_typed_scenario` catches it.
impl Val {
    pub(in crate::scenario) fn int(&self) -> u64 {
        match self {
            Val::Int(n) => *n,
            _ => 0,
        }
    }

    /// An integer key in seconds, as milliseconds.
    pub(in crate::scenario) fn secs_as_ms(&self) -> u64 {
        self.int().saturating_mul(1000)
    }

    pub(in crate::scenario) fn count(&self) -> u32 {
        u32::try_from(self.int()).unwrap_or(u32::MAX)
    }

    pub(in crate::scenario) fn float(&self) -> f64 {
        match self {
            Val::Float(f) => *f,
            _ => 0.0,
        }
    }

    pub(in crate::scenario) fn flag(&self) -> bool {
        matches!(self, Val::Bool(true))
    }

    pub(in crate::scenario) fn text(&self) -> String {
        match self {
            Val::Text(s) => s.clone(),
            _ => String::new(),
        }
    }

    pub(in crate::scenario) fn list(&self) -> Vec<String> {
        match self {
            Val::List(l) => l.clone(),
            _ => Vec::new(),
        }
    }
}

/// What is wrong with a value; the caller adds the place, the key and [`Kind::allowed`].
#[derive(Debug, Clone, PartialEq)]
pub(in crate::scenario) enum Problem {
    WrongType { expected: String, found: String },
    Invalid(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scenario) enum Unit {
    Seconds,
    Millis,
    Count,
}

/// The kind of value a key accepts, with its allowed range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::scenario) enum Kind {
    /// A whole number in `min..=max`.
    Int {
        min: u64,
        max: u64,
        unit: Unit,
    },
    /// A finite number in `min..=max`, or `(min, max]` when `above_min`.
    Float {
        min: f64,
        above_min: bool,
        max: f64,
    },
    Bool,
    /// An application name: `[A-Za-z0-9_.-]+`.
    Name,
    Train,
    Version,
    Strategy,
    FinalStop,
    Method,
    /// `spring.cloud.loadbalancer.configurations`.
    Supplier,
    /// One `[[app]]` name or an array of them.
    Apps,
    /// A Spring list property: a comma-separated string (`"a,b"`) or an array of strings, each
    /// item as written (not trimmed; none empty).
    List,
    /// An instance id `<app>-<index>`, checked against the apps once they are known.
    Instance,
    /// Any finite number (a claim's threshold; its unit depends on other keys).
    Number,
    /// Free text, not empty (a claim's name and source).
    Text,
    /// A metric name as in `summary.csv`.
    Metric,
    Statistic,
    Comparison,
    /// A `[[shutdown]]` index or instance id.
    ShutdownRef,
    /// One of these words (case-insensitive), kept as [`Val::Text`] in its listed spelling.
    Choice(&'static [&'static str]),
}

/// Longest accepted name; ids are shown in tables and file names.
const MAX_NAME_LEN: usize = 64;

/// Longest accepted free text (a claim's source): a sentence or two with a URL.
const MAX_TEXT_LEN: usize = 1000;

impl Kind {
    /// An interval or duration: at least 1, at most a day.
    pub(in crate::scenario) const fn seconds(min: u64, max: u64) -> Kind {
        Kind::Int {
            min,
            max,
            unit: Unit::Seconds,
        }
    }

    pub(in crate::scenario) const fn millis(min: u64, max: u64) -> Kind {
        Kind::Int {
            min,
            max,
            unit: Unit::Millis,
        }
    }

    pub(in crate::scenario) const fn count(min: u64, max: u64) -> Kind {
        Kind::Int {
            min,
            max,
            unit: Unit::Count,
        }
    }

    /// The type noun of a wrong-type message: "expected an integer".
    pub(in crate::scenario) fn expected(&self) -> &'static str {
        match self {
            Kind::Int { .. } => "an integer",
            Kind::Float { .. } | Kind::Number => "a number",
            Kind::Bool => "a boolean",
            Kind::Apps | Kind::List => "a string or an array of strings",
            Kind::ShutdownRef => "an integer or a string",
            Kind::Text | Kind::Metric | Kind::Statistic | Kind::Comparison => "a string",
            Kind::Name
            | Kind::Train
            | Kind::Version
            | Kind::Strategy
            | Kind::FinalStop
            | Kind::Method
            | Kind::Supplier
            | Kind::Choice(_)
            | Kind::Instance => "a string",
        }
    }

    /// `default` written as a TOML value of this kind (`900`, `true`, `"Hoxton"`), or `None`
    /// when the documented default is not one value but words (`(required)`, `the train's`,
    /// `a day after the last planned action`). A default with a note (`1000 (5000 on Dalston)`)
    /// gives its first value.
    pub(in crate::scenario) fn toml_literal(&self, default: &str) -> Option<String> {
        let token = default.split(" (").next().unwrap_or(default).trim();
        let word = !token.is_empty()
            && !token.contains(char::is_whitespace)
            && !token.starts_with(['(', '<']);
        let string = || Some(toml_edit::Value::from(token).to_string());
        match *self {
            Kind::Int { min, max, .. } => token
                .parse::<u64>()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .map(|v| v.to_string()),
            Kind::Float { .. } | Kind::Number => {
                token.parse::<f64>().ok().filter(|v| v.is_finite())?;
                Some(token.to_string())
            }
            Kind::Bool => ["true", "false"]
                .contains(&token)
                .then(|| token.to_string()),
            Kind::Choice(choices) => choices.contains(&token).then(string)?,
            Kind::Strategy => Strategy::ALL
                .iter()
                .any(|s| s.name() == token)
                .then(string)?,
            Kind::ShutdownRef => match token.parse::<u64>() {
                Ok(index) => Some(index.to_string()),
                Err(_) => word.then(string)?,
            },
            Kind::Name
            | Kind::Train
            | Kind::Version
            | Kind::FinalStop
            | Kind::Method
            | Kind::Supplier
            | Kind::Apps
            | Kind::List
            | Kind::Instance
            | Kind::Text
            | Kind::Metric
            | Kind::Statistic
            | Kind::Comparison => word.then(string)?,
        }
    }

    /// What the key accepts, for messages and the key catalogue.
    pub(in crate::scenario) fn allowed(&self) -> String {
        match *self {
            Kind::Int { min, max, unit } => {
                let unit = match unit {
                    Unit::Seconds => " (seconds)",
                    Unit::Millis => " (milliseconds)",
                    Unit::Count => "",
                };
                format!("an integer in {min}..={max}{unit}")
            }
            Kind::Float {
                min,
                above_min: true,
                max,
            } => format!("a number greater than {min} and at most {max}"),
            Kind::Float { min, max, .. } => format!("a number in {min}..={max}"),
            Kind::Bool => "true or false".to_string(),
            Kind::Name => "a name of ASCII letters and digits, `_`, `.` and `-`".to_string(),
            Kind::Train => format!(
                "{} (also Ilford, Jubilee, Kilburn, Leyton, Moorgate, Northfields, Oakwood, latest), \
                 alone (its last service release) or with a service release such as \
                 Hoxton.RELEASE, Hoxton.SR9, 2020.0.3",
                Train::ALL.map(Train::name).join(", ")
            ),
            Kind::Version => "a version number such as 1.9.16 or 2.3.12".to_string(),
            Kind::Strategy => Strategy::ALL.map(Strategy::name).join(", "),
            Kind::FinalStop => "kill-15, kill-9, keep-running".to_string(),
            Kind::Method => "GET, POST".to_string(),
            Kind::Supplier => "default, health-check".to_string(),
            Kind::Choice(choices) => choices.join(", "),
            Kind::Apps => "an [[app]] name or an array of [[app]] names".to_string(),
            Kind::List => "a comma-separated string or an array of strings".to_string(),
            Kind::Instance => "an instance id `<app name>-<index>` such as `svc-0`".to_string(),
            Kind::Number => "a finite number".to_string(),
            Kind::Text => format!("a non-empty string of at most {MAX_TEXT_LEN} characters"),
            Kind::Metric => Metric::ALL.map(Metric::name).join(", "),
            Kind::Statistic => "min, max, mean, p<number> with 0 < number <= 100 (p50, p90, p99, \
                                p99.9), zero-share (share of trials with value 0), unresolved \
                                (share of trials without a value)"
                .to_string(),
            Kind::Comparison => Comparison::ALL.map(Comparison::symbol).join(", "),
            Kind::ShutdownRef => {
                "a [[shutdown]] index (0, 1, ...) or the instance id of a [[shutdown]] (svc-0)"
                    .to_string()
            }
        }
    }

    /// Checks `raw` against this kind. `literal` is the text of a `--set` value, which stands in
    /// for a string when the text happened to parse as another TOML type (`release=2020.0`).
    pub(in crate::scenario) fn convert(
        &self,
        raw: &Raw,
        literal: Option<&str>,
    ) -> Result<Val, Problem> {
        match *self {
            Kind::Int { min, max, .. } => int(raw, min, max, self),
            Kind::Float {
                min,
                above_min,
                max,
            } => float(raw, min, above_min, max, self),
            Kind::Bool => match raw {
                Raw::Bool(b) => Ok(Val::Bool(*b)),
                Raw::Str(s) if s.trim().eq_ignore_ascii_case("true") => Ok(Val::Bool(true)),
                Raw::Str(s) if s.trim().eq_ignore_ascii_case("false") => Ok(Val::Bool(false)),
                _ => Err(self.wrong_type(raw)),
            },
            Kind::Name => name(self.text(raw, literal)?).map(Val::Text),
            Kind::Instance => {
                let text = self.text(raw, literal)?;
                if text.trim().is_empty() {
                    return Err(Problem::Invalid("the instance id is empty".to_string()));
                }
                Ok(Val::Text(text))
            }
            Kind::Train => train(self.text(raw, literal)?),
            Kind::Version => {
                let text = self.text(raw, literal)?;
                EurekaVersion::parse(&text)
                    .map(Val::Version)
                    .ok_or_else(|| Problem::Invalid(format!("`{text}` is not a version")))
            }
            Kind::Strategy => {
                let text = self.text(raw, literal)?;
                let lower = text.trim().to_ascii_lowercase();
                Strategy::parse(&lower)
                    .map(Val::Strategy)
                    .ok_or_else(|| Problem::Invalid(format!("unknown strategy `{text}`")))
            }
            Kind::FinalStop => {
                let stops = [
                    ("kill-15", FinalStop::Kill15),
                    ("kill-9", FinalStop::Kill9),
                    ("keep-running", FinalStop::KeepRunning),
                ];
                named(&self.text(raw, literal)?, &stops, "final stop").map(Val::Stop)
            }
            Kind::Method => {
                let methods = [("GET", HttpMethod::Get), ("POST", HttpMethod::Post)];
                named(&self.text(raw, literal)?, &methods, "method").map(Val::Method)
            }
            Kind::Supplier => {
                let suppliers = [
                    ("default", SupplierKind::Default),
                    ("health-check", SupplierKind::HealthCheck),
                ];
                let what = "load-balancer configuration";
                named(&self.text(raw, literal)?, &suppliers, what).map(Val::Supplier)
            }
            Kind::Choice(choices) => {
                let text = self.text(raw, literal)?;
                let wanted = text.trim().to_ascii_lowercase();
                choices
                    .iter()
                    .find(|c| **c == wanted)
                    .map(|c| Val::Text((*c).to_string()))
                    .ok_or_else(|| Problem::Invalid(format!("unknown value `{text}`")))
            }
            Kind::Apps => apps(raw, self),
            Kind::List => list(raw, literal, self),
            Kind::Number => float(raw, f64::MIN, false, f64::MAX, self),
            Kind::Text => {
                let text = self.text(raw, literal)?;
                if text.trim().is_empty() {
                    Err(Problem::Invalid("the text is empty".to_string()))
                } else if text.chars().count() > MAX_TEXT_LEN {
                    Err(Problem::Invalid(format!(
                        "the text is longer than {MAX_TEXT_LEN} characters"
                    )))
                } else {
                    Ok(Val::Text(text))
                }
            }
            Kind::Metric => metric(self.text(raw, literal)?),
            Kind::Statistic => statistic(self.text(raw, literal)?),
            Kind::Comparison => comparison(self.text(raw, literal)?),
            Kind::ShutdownRef => match raw {
                Raw::Int(i) => usize::try_from(*i)
                    .map(|i| Val::Shutdown(ShutdownRef::Index(i)))
                    .map_err(|_| Problem::Invalid(format!("must be at least 0, got {i}"))),
                _ => {
                    let text = self.text(raw, literal)?;
                    let text = text.trim();
                    if text.is_empty() {
                        Err(Problem::Invalid("the shutdown is empty".to_string()))
                    } else if let Ok(i) = text.parse::<usize>() {
                        Ok(Val::Shutdown(ShutdownRef::Index(i)))
                    } else {
                        Ok(Val::Shutdown(ShutdownRef::Instance(text.to_string())))
                    }
                }
            },
        }
    }

    fn wrong_type(&self, raw: &Raw) -> Problem {
        Problem::WrongType {
            expected: self.expected().to_string(),
            found: raw.describe(),
        }
    }

    /// The text of a string kind: a TOML string, or the literal text of a `--set` value.
    fn text(&self, raw: &Raw, literal: Option<&str>) -> Result<String, Problem> {
        match (raw, literal) {
            (Raw::Str(s), _) => Ok(s.clone()),
            (_, Some(text)) => Ok(text.to_string()),
            _ => Err(self.wrong_type(raw)),
        }
    }
}

/// A release train, with the closest name when it is unknown.
fn train(text: String) -> Result<Val, Problem> {
    Release::parse(&text).map(Val::Train).map_err(|e| match e {
        ReleaseError::UnknownTrain => {
            let names = Train::ALL.map(Train::name);
            let hint = closest(&text, names).map(|n| format!("; did you mean `{n}`?"));
            Problem::Invalid(format!(
                "unknown release train `{text}`{}",
                hint.unwrap_or_default()
            ))
        }
        ReleaseError::UnknownServiceRelease(train) => Problem::Invalid(format!(
            "unknown service release `{text}`: {train} has {} (or {train} \
                     alone for the last)",
            train.service_release_names().join(", ")
        )),
    })
}

/// A metric, relaxed like a key: `exposure-ms` and `ExposureMs` are `exposure_ms`.
fn metric(text: String) -> Result<Val, Problem> {
    let wanted = canonical_segment(text.trim());
    Metric::ALL
        .into_iter()
        .find(|m| canonical_segment(m.name()) == wanted)
        .map(Val::Metric)
        .ok_or_else(|| {
            let hint = closest(&text, Metric::ALL.map(Metric::name))
                .map(|n| format!("; did you mean `{n}`?"));
            Problem::Invalid(format!(
                "unknown metric `{text}`{}",
                hint.unwrap_or_default()
            ))
        })
}

/// A statistic, with the closest name when it is unknown.
fn statistic(text: String) -> Result<Val, Problem> {
    Statistic::parse(&text).map(Val::Statistic).ok_or_else(|| {
        let hint = closest(&text, Statistic::NAMES).map(|n| format!("; did you mean `{n}`?"));
        Problem::Invalid(format!(
            "unknown statistic `{text}`{}",
            hint.unwrap_or_default()
        ))
    })
}

/// A comparison, with the operator meant when it is a common misspelling.
fn comparison(text: String) -> Result<Val, Problem> {
    Comparison::parse(&text)
        .map(Val::Comparison)
        .ok_or_else(|| {
            let hint = match text.trim() {
                "=" => "; did you mean `==`?",
                "=<" | "≤" => "; did you mean `<=`?",
                "=>" | "≥" => "; did you mean `>=`?",
                _ => "",
            };
            Problem::Invalid(format!("unknown comparison `{text}`{hint}"))
        })
}

/// A float as a message shows it: `1e300` and `1e-300` in scientific notation, not as the 300
/// digits `{}` prints (a fuzzing finding); others as written.
pub(in crate::scenario) fn number(f: f64) -> String {
    if f != 0.0 && f.is_finite() && (f.abs() >= 1e15 || f.abs() < 1e-4) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

fn int(raw: &Raw, min: u64, max: u64, kind: &Kind) -> Result<Val, Problem> {
    // i128 holds every i64 and every u64, so negative and huge values get a range message.
    let n: i128 = match raw {
        Raw::Int(i) => i128::from(*i),
        Raw::Str(s) => s.trim().parse().map_err(|_| kind.wrong_type(raw))?,
        _ => return Err(kind.wrong_type(raw)),
    };
    if n < i128::from(min) {
        return Err(Problem::Invalid(format!("must be at least {min}, got {n}")));
    }
    if n > i128::from(max) {
        return Err(Problem::Invalid(format!("must be at most {max}, got {n}")));
    }
    u64::try_from(n)
        .map(Val::Int)
        .map_err(|_| Problem::Invalid(format!("must be at most {max}, got {n}")))
}

fn float(raw: &Raw, min: f64, above_min: bool, max: f64, kind: &Kind) -> Result<Val, Problem> {
    let f = match raw {
        Raw::Float(f) => *f,
        // Exact for every integer a float key could sensibly take.
        Raw::Int(i) => *i as f64,
        Raw::Str(s) => s.trim().parse().map_err(|_| kind.wrong_type(raw))?,
        _ => return Err(kind.wrong_type(raw)),
    };
    if !f.is_finite() {
        return Err(Problem::Invalid(format!(
            "must be a finite number, got {}",
            number(f)
        )));
    }
    if above_min && f <= min {
        return Err(Problem::Invalid(format!(
            "must be greater than {min}, got {}",
            number(f)
        )));
    }
    if !above_min && f < min {
        return Err(Problem::Invalid(format!(
            "must be at least {min}, got {}",
            number(f)
        )));
    }
    if f > max {
        return Err(Problem::Invalid(format!(
            "must be at most {max}, got {}",
            number(f)
        )));
    }
    Ok(Val::Float(f))
}

/// A name of ASCII letters and digits, `_`, `.` and `-`. ASCII on purpose: names become
/// instance ids in file names, CSV cells, shard manifests, SVG and HTML (one alphabet that needs
/// no escaping or normalisation anywhere), and Eureka's own ids are host-like names.
fn name(text: String) -> Result<String, Problem> {
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    if text.is_empty() {
        Err(Problem::Invalid("the name is empty".to_string()))
    } else if text.len() > MAX_NAME_LEN {
        Err(Problem::Invalid(format!(
            "the name is longer than {MAX_NAME_LEN} characters"
        )))
    } else if let Some(bad) = text.chars().find(|&c| !valid(c)) {
        Err(Problem::Invalid(format!(
            "`{text}` is not a valid name: {bad:?} is not allowed (ASCII letters and digits, \
             `_`, `.` and `-` only)"
        )))
    } else {
        Ok(text)
    }
}

/// The value `text` names among `choices` (trimmed, in any case), or the error naming it an
/// unknown `what`.
fn named<T: Clone>(text: &str, choices: &[(&str, T)], what: &str) -> Result<T, Problem> {
    let name = text.trim();
    choices
        .iter()
        .find(|(choice, _)| choice.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.clone())
        .ok_or_else(|| Problem::Invalid(format!("unknown {what} `{text}`")))
}

/// The strings of an array that must hold nothing else.
fn strings(items: &[Raw]) -> Result<Vec<String>, Problem> {
    items
        .iter()
        .map(|item| match item {
            Raw::Str(s) => Ok(s.clone()),
            other => Err(Problem::WrongType {
                expected: "an array of strings".to_string(),
                found: format!("an array holding {}", other.describe()),
            }),
        })
        .collect()
}

/// A comma-separated string, or an array of strings (each taken whole), as [`Val::List`].
fn list(raw: &Raw, literal: Option<&str>, kind: &Kind) -> Result<Val, Problem> {
    let items: Vec<String> = match raw {
        Raw::Array(items) => strings(items)?,
        _ => kind
            .text(raw, literal)?
            .split(',')
            .map(str::to_string)
            .collect(),
    };
    if items.iter().all(|i| i.trim().is_empty()) {
        return Err(Problem::Invalid("the list is empty".to_string()));
    }
    if let Some(n) = items.iter().position(|i| i.trim().is_empty()) {
        return Err(Problem::Invalid(format!("item {} is empty", n + 1)));
    }
    Ok(Val::List(items))
}

fn apps(raw: &Raw, kind: &Kind) -> Result<Val, Problem> {
    let names = match raw {
        Raw::Str(s) => vec![s.clone()],
        Raw::Array(items) => strings(items)?,
        _ => return Err(kind.wrong_type(raw)),
    };
    if names.is_empty() {
        return Err(Problem::Invalid("must name at least one app".to_string()));
    }
    let mut seen: Vec<&str> = Vec::new();
    for n in &names {
        if seen.contains(&n.as_str()) {
            return Err(Problem::Invalid(format!("names `{n}` twice")));
        }
        seen.push(n);
    }
    names
        .into_iter()
        .map(name)
        .collect::<Result<_, _>>()
        .map(Val::List)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECONDS: Kind = Kind::seconds(1, 86_400);

    #[test]
    fn integers_also_come_as_strings() {
        assert_eq!(SECONDS.convert(&Raw::Int(30), None), Ok(Val::Int(30)));
        assert_eq!(
            SECONDS.convert(&Raw::Str(" 30 ".into()), None),
            Ok(Val::Int(30))
        );
    }

    #[test]
    fn zero_and_negative_intervals_are_below_the_range() {
        let zero = SECONDS.convert(&Raw::Int(0), None);
        assert_eq!(
            zero,
            Err(Problem::Invalid("must be at least 1, got 0".into()))
        );
        let negative = SECONDS.convert(&Raw::Str("-5".into()), None);
        assert_eq!(
            negative,
            Err(Problem::Invalid("must be at least 1, got -5".into()))
        );
        assert_eq!(SECONDS.allowed(), "an integer in 1..=86400 (seconds)");
    }

    #[test]
    fn full_u64_seeds_come_as_strings() {
        let seed = Kind::count(0, u64::MAX);
        let max = seed.convert(&Raw::Str(u64::MAX.to_string()), None);
        assert_eq!(max, Ok(Val::Int(u64::MAX)));
    }

    #[test]
    fn wrong_types_name_both_types() {
        let e = SECONDS.convert(&Raw::Float(1.5), None);
        assert_eq!(
            e,
            Err(Problem::WrongType {
                expected: "an integer".into(),
                found: "a number (1.5)".into()
            })
        );
        assert!(Kind::Bool.convert(&Raw::Str("yes".into()), None).is_err());
        assert_eq!(
            Kind::Bool.convert(&Raw::Str("TRUE".into()), None),
            Ok(Val::Bool(true))
        );
    }

    #[test]
    fn floats_accept_integers_and_respect_open_bounds() {
        let pct = Kind::Float {
            min: 0.0,
            above_min: true,
            max: 1.0,
        };
        assert_eq!(pct.convert(&Raw::Int(1), None), Ok(Val::Float(1.0)));
        assert!(pct.convert(&Raw::Float(0.0), None).is_err());
        assert!(pct.convert(&Raw::Str("nan".into()), None).is_err());
    }

    #[test]
    fn set_literals_stand_in_for_strings() {
        let train = Kind::Train.convert(&Raw::Float(2020.0), Some("2020.0"));
        assert_eq!(train, Ok(Val::Train(Release::of_train(Train::Y2020))));
        assert!(Kind::Train.convert(&Raw::Float(2020.0), None).is_err());
    }

    #[test]
    fn unknown_trains_suggest_the_closest() {
        let e = Kind::Train.convert(&Raw::Str("Hoxtn".into()), None);
        assert_eq!(
            e,
            Err(Problem::Invalid(
                "unknown release train `Hoxtn`; did you mean `Hoxton`?".into()
            ))
        );
    }

    #[test]
    fn apps_are_one_name_or_a_list_of_distinct_names() {
        let one = Kind::Apps.convert(&Raw::Str("svc".into()), None);
        assert_eq!(one, Ok(Val::List(vec!["svc".into()])));
        let two = Raw::Array(vec![Raw::Str("a".into()), Raw::Str("b".into())]);
        assert_eq!(
            Kind::Apps.convert(&two, None),
            Ok(Val::List(vec!["a".into(), "b".into()]))
        );
        assert!(Kind::Apps.convert(&Raw::Array(vec![]), None).is_err());
        let twice = Raw::Array(vec![Raw::Str("a".into()), Raw::Str("a".into())]);
        assert!(Kind::Apps.convert(&twice, None).is_err());
        assert!(
            Kind::Apps
                .convert(&Raw::Array(vec![Raw::Int(1)]), None)
                .is_err()
        );
    }

    #[test]
    fn lists_are_a_comma_string_or_an_array_kept_as_written() {
        let list = |items: &[&str]| Ok(Val::List(items.iter().map(|s| s.to_string()).collect()));
        assert_eq!(
            Kind::List.convert(&Raw::Str("a, b".into()), None),
            list(&["a", " b"])
        );
        let array = Raw::Array(vec![Raw::Str("a,b".into()), Raw::Str("c".into())]);
        assert_eq!(Kind::List.convert(&array, None), list(&["a,b", "c"]));
        assert_eq!(
            Kind::List.convert(&Raw::Str("a,,b".into()), None),
            Err(Problem::Invalid("item 2 is empty".into()))
        );
        assert_eq!(
            Kind::List.convert(&Raw::Str(" ".into()), None),
            Err(Problem::Invalid("the list is empty".into()))
        );
        assert!(Kind::List.convert(&Raw::Array(vec![]), None).is_err());
        assert!(Kind::List.convert(&Raw::Int(1), None).is_err());
    }

    #[test]
    fn names_reject_spaces_and_empty() {
        assert!(
            Kind::Name
                .convert(&Raw::Str("my svc".into()), None)
                .is_err()
        );
        assert!(Kind::Name.convert(&Raw::Str(String::new()), None).is_err());
        assert!(
            Kind::Name
                .convert(&Raw::Str("a.b_c-1".into()), None)
                .is_ok()
        );
    }
}
