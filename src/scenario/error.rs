//! Everything that can be wrong with a scenario file or a `--set` argument.
//!
//! Every message is a lowercase fragment that starts with where the problem is (the file and the
//! line:column, or the file and the `--set` argument), names the key by its full dotted path as the
//! user wrote it (`server.eureka.server.eviction-interval-timer-in-ms`, `shutdown[0].strategy`),
//! says what is wrong, and says what is allowed (a range, a list of values, or the closest known
//! key). Nothing here is shown in colour or with snippets: the CLI decides how to present it.

use std::fmt;

/// A place in the scenario: the file, and where in it (or which `--set` argument).
///
/// Errors hold it boxed, which keeps `Result<_, ScenarioError>` small on the happy path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file as the user named it.
    pub file: String,
    pub place: Place,
}

impl Location {
    pub(super) fn boxed(file: &str, place: Place) -> Box<Location> {
        Box::new(Location {
            file: file.to_string(),
            place,
        })
    }
}

/// Where within a scenario a key or value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// 1-based line and column (in characters) in the file.
    LineCol { line: usize, column: usize },
    /// A `--set KEY=VALUE` argument, as given.
    Set(String),
    /// The file as a whole (e.g. a table the file does not have).
    File,
    /// A line and column (1-based) in a Spring file a table's `spring-config` names (the path
    /// as found from the working folder).
    Spring {
        file: String,
        line: usize,
        column: usize,
    },
    /// A setting of the preset `simulation.preset` names.
    Preset(String),
}

impl Place {
    /// In a `spring-config` file.
    pub fn is_spring(&self) -> bool {
        matches!(self, Place::Spring { .. })
    }

    /// Under the scenario's own keys: a `spring-config` file's or the preset's.
    pub fn is_imported(&self) -> bool {
        matches!(self, Place::Spring { .. } | Place::Preset(_))
    }

    /// The line and column of byte `offset` in `text`; never panics, even on an offset past the
    /// end or inside a multi-byte character.
    pub fn of_offset(text: &str, offset: usize) -> Place {
        let bytes = text.as_bytes();
        let before = &bytes[..offset.min(bytes.len())];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        // Count characters, not bytes: every byte that is not a UTF-8 continuation byte starts one.
        let column = before[line_start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count()
            + 1;
        Place::LineCol { line, column }
    }

    /// The place of a span reported by `toml_edit`, or the whole file when there is none.
    pub fn of_span(text: &str, span: Option<std::ops::Range<usize>>) -> Place {
        match span {
            Some(span) => Place::of_offset(text, span.start),
            None => Place::File,
        }
    }
}

/// [`Place::of_offset`] for many offsets of one text, each in time independent of the text's
/// size: the line from the line starts (binary search), the column from a count of characters
/// kept every [`TextIndex::BLOCK`] bytes. Walking the text from its start for every key made a
/// file of n keys cost n² (50 000 keys in 450 KB: more than 30 s in the fuzz build).
pub(in crate::scenario) struct TextIndex<'a> {
    text: &'a str,
    /// The byte offset of each line's start (the first is 0).
    line_starts: Vec<usize>,
    /// The characters before byte `k * BLOCK`, for each `k` up to the text's end.
    chars_before: Vec<usize>,
}

impl<'a> TextIndex<'a> {
    const BLOCK: usize = 256;

    pub(in crate::scenario) fn new(text: &'a str) -> TextIndex<'a> {
        let bytes = text.as_bytes();
        let line_starts = std::iter::once(0)
            .chain(newlines(bytes).map(|i| i + 1))
            .collect();
        let mut chars_before = Vec::with_capacity(bytes.len() / Self::BLOCK + 1);
        let mut count = 0;
        for block in bytes.chunks(Self::BLOCK) {
            chars_before.push(count);
            count += char_starts(block);
        }
        chars_before.push(count);
        TextIndex {
            text,
            line_starts,
            chars_before,
        }
    }

    /// The same place as [`Place::of_offset`] of the text.
    pub(in crate::scenario) fn of_offset(&self, offset: usize) -> Place {
        let offset = offset.min(self.text.len());
        // The line starts at or before `offset`: the first is 0, so at least one.
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        let column = self.chars_to(offset) - self.chars_to(start) + 1;
        Place::LineCol { line, column }
    }

    /// The same place as [`Place::of_span`] of the text.
    pub(in crate::scenario) fn of_span(&self, span: Option<std::ops::Range<usize>>) -> Place {
        match span {
            Some(span) => self.of_offset(span.start),
            None => Place::File,
        }
    }

    /// The characters that start before byte `offset`.
    fn chars_to(&self, offset: usize) -> usize {
        let block = offset / Self::BLOCK;
        self.chars_before[block] + char_starts(&self.text.as_bytes()[block * Self::BLOCK..offset])
    }
}

/// The offsets of the `\n` bytes of `bytes`.
fn newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter_map(|(i, &b)| (b == b'\n').then_some(i))
}

/// The characters that start in `bytes`: every byte that is not a UTF-8 continuation byte.
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Place::LineCol { line, column } => write!(f, "{}:{line}:{column}", self.file),
            Place::Set(arg) => write!(f, "{} (--set {arg})", self.file),
            Place::File => f.write_str(&self.file),
            Place::Spring { file, line, column } => {
                write!(f, "{file}:{line}:{column} (spring-config of {})", self.file)
            }
            Place::Preset(name) => write!(f, "{} (preset {name})", self.file),
        }
    }
}

/// A place named inside a message about another place ("first set at line 3, column 1").
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::LineCol { line, column } => write!(f, "line {line}, column {column}"),
            Place::Set(arg) => write!(f, "--set {arg}"),
            Place::File => f.write_str("the file"),
            Place::Spring { file, line, column } => {
                write!(f, "{file} line {line}, column {column}")
            }
            Place::Preset(name) => write!(f, "preset {name}"),
        }
    }
}

/// An optional "did you mean" tail, rendered as `; did you mean `x`?` or nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Suggestion(pub Option<String>);

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(s) => write!(f, "; did you mean `{s}`?"),
            None => Ok(()),
        }
    }
}

/// Why a scenario was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{path}:{line}:{column}: not UTF-8 (byte {offset} is the first of an invalid \
         sequence); a scenario file is UTF-8 text: save it as UTF-8"
    )]
    NotUtf8 {
        path: String,
        line: usize,
        column: usize,
        offset: usize,
    },

    #[error("{at}: invalid TOML: {message}")]
    Syntax { at: Box<Location>, message: String },

    /// A `spring-config` file that cannot be used as a whole: unreadable, too large, of an
    /// unknown format, not valid YAML or properties, a placeholder that does not resolve.
    #[error("{at}: spring-config: {problem}")]
    SpringConfig { at: Box<Location>, problem: String },

    #[error("{at}: unknown table `{table}`; allowed tables: {allowed}{suggestion}")]
    UnknownTable {
        at: Box<Location>,
        table: String,
        allowed: String,
        suggestion: Suggestion,
    },

    /// A table of the wrong shape: `[app]` instead of `[[app]]`, a value where a table belongs.
    #[error("{at}: `{key}` must be {expected}, not {found}")]
    TableShape {
        at: Box<Location>,
        key: String,
        expected: String,
        found: String,
    },

    #[error("{at}: unknown key `{key}`{suggestion} (`eureka-sim keys` lists every key)")]
    UnknownKey {
        at: Box<Location>,
        key: String,
        suggestion: Suggestion,
    },

    /// A known key in the wrong table (`eureka.server.*` in `[clients]`).
    #[error("{at}: `{key}` is not a key of {table}; it belongs in {belongs}")]
    MisplacedKey {
        at: Box<Location>,
        key: String,
        table: String,
        belongs: String,
    },

    /// A Ribbon key in the wrong case: Archaius reads Ribbon keys case-sensitively.
    #[error(
        "{at}: unknown key `{key}`: Ribbon keys are case-sensitive; did you mean `{expected}`?"
    )]
    WrongCase {
        at: Box<Location>,
        key: String,
        expected: String,
    },

    /// A legacy key that Spring Cloud reads by its exact name (`@Value`), in another spelling:
    /// a server ignores it.
    #[error(
        "{at}: unknown key `{key}`: Spring Cloud reads the legacy name `{expected}` by that exact \
         spelling only (@Value, no relaxed binding), so a server ignores this one; write \
         `{expected}` or `{modern}`"
    )]
    LegacySpelling {
        at: Box<Location>,
        key: String,
        expected: String,
        modern: String,
    },

    /// `<client>.ribbon.<Key>` naming a client that is not a declared `[[app]]`.
    #[error(
        "{at}: `{key}`: `{client}` is not a declared [[app]] (declared: {declared}){suggestion}"
    )]
    UnknownClient {
        at: Box<Location>,
        key: String,
        client: String,
        declared: String,
        suggestion: Suggestion,
    },

    /// One key given twice in one table under two spellings (relaxed binding makes them equal).
    #[error("{at}: `{key}` sets the same property as `{first_key}` at {first_at}; set it once")]
    DuplicateKey {
        at: Box<Location>,
        key: String,
        first_key: String,
        first_at: Place,
    },

    #[error("{at}: `{key}`: expected {expected}, found {found}; allowed: {allowed}")]
    WrongType {
        at: Box<Location>,
        key: String,
        expected: String,
        found: String,
        allowed: String,
    },

    #[error("{at}: `{key}`: {problem}; allowed: {allowed}")]
    InvalidValue {
        at: Box<Location>,
        key: String,
        problem: String,
        allowed: String,
    },

    #[error("{at}: `{key}` is required; allowed: {allowed}")]
    MissingKey {
        at: Box<Location>,
        key: String,
        allowed: String,
    },

    /// A `--set` argument that does not name a table and key, or names one that does not exist.
    #[error("{at}: bad --set argument: {problem}")]
    BadOverride { at: Box<Location>, problem: String },

    /// A rule that spans keys or tables (unique names, shutdown ids, times within the run).
    #[error("{at}: {problem}")]
    Invalid { at: Box<Location>, problem: String },

    /// `eureka-sim check` on a scenario that makes no claim.
    #[error(
        "{file}: no [[claim]] to check; add one, such as [[claim]] with metric = \"exposure_ms\", \
         statistic = \"max\", comparison = \"<=\", value-s = 180 and source = \"...\" \
         (`eureka-sim keys` lists the [claim] keys)"
    )]
    NoClaims { file: String },

    /// A folder given to `eureka-sim check` that cannot be listed.
    #[error("cannot list folder {path}: {source}")]
    ReadDir {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// A folder given to `eureka-sim check` without any `*.toml` file.
    #[error("{path}: no scenario file (*.toml) in this folder")]
    NoScenarios { path: String },

    /// Several independent problems found in one pass (unknown keys, bad values).
    #[error("{} problems:\n{}", .0.len(), list(.0))]
    Many(Vec<ScenarioError>),
}

/// At most this many of [`ScenarioError::Many`]'s problems are listed, the rest counted: a file
/// of 50 000 unknown keys gets a screenful, not 50 000 lines (a fuzzing finding).
pub const LISTED_PROBLEMS: usize = 20;

fn list(errors: &[ScenarioError]) -> String {
    let mut lines: Vec<String> = errors
        .iter()
        .take(LISTED_PROBLEMS)
        .map(|e| format!("  {e}"))
        .collect();
    if errors.len() > LISTED_PROBLEMS {
        lines.push(format!(
            "  ... and {} more (the first {LISTED_PROBLEMS} are listed; fix them and run again)",
            errors.len() - LISTED_PROBLEMS
        ));
    }
    lines.join("\n")
}

impl ScenarioError {
    /// One error as itself, several as [`ScenarioError::Many`]; `None` when there are none.
    pub(super) fn from_list(mut errors: Vec<ScenarioError>) -> Option<ScenarioError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(ScenarioError::Many(errors)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing: 50 000 unknown keys gave a 50 000-line message. Every problem is still found
    /// (the count says so), only the first [`LISTED_PROBLEMS`] are listed, in file order.
    #[test]
    fn a_file_of_many_bad_keys_lists_the_first_twenty() {
        let mut text = String::from("[simulation]\n");
        for k in 0..30 {
            text.push_str(&format!("bogus-key-{k} = 1\n"));
        }
        let err = crate::scenario::fixture::parse(&text, &[]).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("30 problems:"), "{message}");
        assert!(message.contains("bogus-key-19"), "{message}");
        assert!(!message.contains("bogus-key-20"), "{message}");
        assert!(message.contains("... and 10 more"), "{message}");
        assert_eq!(
            message.lines().count(),
            1 + LISTED_PROBLEMS + 1,
            "{message}"
        );
    }

    #[test]
    fn line_and_column_count_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(
            Place::of_offset(text, 0),
            Place::LineCol { line: 1, column: 1 }
        );
        assert_eq!(
            Place::of_offset(text, 6),
            Place::LineCol { line: 2, column: 1 }
        );
        // "bé " is 4 bytes but 3 characters.
        assert_eq!(
            Place::of_offset(text, 10),
            Place::LineCol { line: 2, column: 4 }
        );
    }

    #[test]
    fn offsets_out_of_range_do_not_panic() {
        let text = "é";
        assert!(matches!(
            Place::of_offset(text, 1),
            Place::LineCol { line: 1, .. }
        ));
        assert_eq!(
            Place::of_offset(text, 99),
            Place::LineCol { line: 1, column: 2 }
        );
        assert_eq!(Place::of_span(text, None), Place::File);
    }

    /// The index gives [`Place::of_offset`]'s place at every offset (and past the end), over
    /// several blocks, multi-byte characters straddling a block's edge and empty lines.
    #[test]
    fn the_text_index_agrees_with_walking_the_text() {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&"é".repeat(i % 7));
            text.push_str(&"a".repeat(i % 5));
            text.push_str(if i % 3 == 0 { "\n\n" } else { "\n" });
        }
        text.push_str("čč");
        assert!(text.len() > 3 * TextIndex::BLOCK);
        let index = TextIndex::new(&text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(
                index.of_offset(offset),
                Place::of_offset(&text, offset),
                "offset {offset}"
            );
        }
        assert_eq!(index.of_span(None), Place::File);
        let empty = TextIndex::new("");
        assert_eq!(empty.of_offset(5), Place::of_offset("", 5));
    }

    #[test]
    fn locations_render_file_line_column_or_set_argument() {
        let at = |place| Location {
            file: "s.toml".into(),
            place,
        };
        assert_eq!(
            at(Place::LineCol { line: 3, column: 7 }).to_string(),
            "s.toml:3:7"
        );
        assert_eq!(
            at(Place::Set("simulation.trials=0".into())).to_string(),
            "s.toml (--set simulation.trials=0)"
        );
        assert_eq!(at(Place::File).to_string(), "s.toml");
    }

    #[test]
    fn many_lists_each_problem_on_its_own_line() {
        let at = Location {
            file: "s.toml".into(),
            place: Place::File,
        };
        let e = ScenarioError::from_list(vec![
            ScenarioError::Invalid {
                at: Box::new(at.clone()),
                problem: "one".into(),
            },
            ScenarioError::Invalid {
                at: Box::new(at),
                problem: "two".into(),
            },
        ]);
        let text = e.map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(text, "2 problems:\n  s.toml: one\n  s.toml: two");
    }
}
