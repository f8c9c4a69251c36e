//! application.properties: `java.util.Properties#load`'s syntax, split into documents the way
//! Spring Boot's `OriginTrackedPropertiesLoader` does (Boot 2.4+: a line `#---` or `!---`).
//!
//! A logical line may continue over natural lines ending in an odd number of backslashes (the
//! next line's leading blanks dropped); `#` and `!` start comment lines; the key ends at the
//! first unescaped `=`, `:` or blank, then blanks, at most one `=` or `:`, and blanks separate it
//! from the value; `\t \n \r \f \uXXXX` are escapes and any other escaped character stands for
//! itself.

use super::{Document, Property, SpringProblem};

/// The documents of `text`, in file order.
pub(super) fn documents(text: &str) -> Result<Vec<Document>, SpringProblem> {
    let mut docs = vec![Document::default()];
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let first = i;
        let natural = lines[i];
        let trimmed = natural.trim_start();
        i += 1;
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('#') || trimmed.starts_with('!') {
            if matches!(natural.trim_end(), "#---" | "!---") {
                docs.push(Document::default());
            }
            continue;
        }
        let column = natural.len() - trimmed.len();
        // Join continuation lines.
        let mut logical = trimmed.to_string();
        while ends_in_continuation(&logical) {
            logical.pop();
            match lines.get(i) {
                Some(next) => {
                    logical.push_str(next.trim_start());
                    i += 1;
                }
                None => break,
            }
        }
        let (key, value) = split(&logical);
        let problem = |message: String| SpringProblem {
            file: String::new(),
            line: first + 1,
            column: column + 1,
            message,
        };
        let name = unescape(key).map_err(problem)?;
        let value = unescape(value).map_err(problem)?;
        let doc = docs.last_mut().expect("one document at least");
        doc.properties.push(Property {
            file: String::new(),
            refusal: None,
            name,
            value,
            line: first + 1,
            column: natural[..column].chars().count() + 1,
        });
    }
    Ok(docs)
}

/// An odd number of trailing backslashes continues the line.
fn ends_in_continuation(line: &str) -> bool {
    line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// The raw key and value of a logical line (escapes still in).
fn split(line: &str) -> (&str, &str) {
    let mut escaped = false;
    let mut end = line.len();
    for (at, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '=' | ':' | ' ' | '\t' | '\u{c}') {
            end = at;
            break;
        }
    }
    let key = &line[..end];
    let mut rest = line[end..].trim_start_matches([' ', '\t', '\u{c}']);
    if let Some(after) = rest.strip_prefix(['=', ':']) {
        rest = after.trim_start_matches([' ', '\t', '\u{c}']);
    }
    (key, rest)
}

fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .ok_or_else(|| format!("malformed \\uxxxx escape `\\u{hex}`"))?;
                // A surrogate half (of a pair written as two escapes) is not a character here.
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}
