//! `eureka-sim keys`: every scenario key with its default, as a TOML listing or a Markdown table
//! (the one in docs/keys.md).

use std::fmt::Write as _;

use crate::scenario::{KeyDoc, key_catalogue};

/// Width of the comment lines of the TOML listing.
const WIDTH: usize = 100;

/// The keys as TOML, or with `markdown` as a table. The TOML parses as TOML, and each key's
/// value is its default, so it can be copied into a scenario file: each key is preceded by its
/// meaning and what it accepts as comments; a key whose default is words (`(required)`, `the
/// train's`) is itself a comment.
pub fn render_keys(markdown: bool) -> String {
    if markdown {
        return render_markdown();
    }
    let keys = key_catalogue();
    let mut out = String::from(
        "# Every scenario key of eureka-sim with its default (`eureka-sim keys`). Each key is\n\
         # preceded by what it means and what it accepts; a key whose default is not one value\n\
         # is commented out, with its default in words.\n",
    );
    let mut table = "";
    for key in &keys {
        if key.table != table {
            table = key.table;
            let header = if key.array {
                format!("[[{table}]]")
            } else {
                format!("[{table}]")
            };
            let _ = write!(out, "\n{header}\n");
        } else {
            out.push('\n');
        }
        push_key(&mut out, key, &keys);
    }
    out
}

fn push_key(out: &mut String, key: &KeyDoc, keys: &[KeyDoc]) {
    push_comment(out, key.meaning);
    push_comment(out, &format!("allowed: {}", key.allowed));
    let name = toml_key(key, keys);
    // A key with a placeholder (`<app>.ribbon.ConnectTimeout`) is a pattern, not a key to copy.
    let value = key.value.as_ref().filter(|_| !key.key.contains('<'));
    match value {
        Some(value) => {
            if value.trim_matches('"') != key.default {
                push_comment(out, &format!("default: {}", key.default));
            }
            let _ = writeln!(out, "{name} = {value}");
        }
        None => {
            push_comment(out, &format!("default: {}", key.default));
            let _ = writeln!(out, "# {name} =");
        }
    }
}

/// The key as written in the listing: dotted as in a scenario file, or quoted whole where a
/// shorter key of the table is its prefix (`zuul` and `zuul.retryable`: dotted, `zuul` would be a
/// value and a table at once). The parser reads both spellings alike.
fn toml_key(key: &KeyDoc, keys: &[KeyDoc]) -> String {
    let shadowed = keys.iter().any(|other| {
        other.table == key.table
            && other.value.is_some()
            && key
                .key
                .strip_prefix(other.key)
                .is_some_and(|rest| rest.starts_with('.'))
    });
    if shadowed {
        toml_edit::Value::from(key.key).to_string()
    } else {
        key.key.to_string()
    }
}

/// `text` as `# ` comment lines of at most [`WIDTH`] characters (a word longer stays whole).
fn push_comment(out: &mut String, text: &str) {
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() > 1 && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}

fn render_markdown() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| table | key | default | meaning |");
    let _ = writeln!(out, "|---|---|---|---|");
    for key in key_catalogue() {
        let _ = writeln!(
            out,
            "| `[{}]` | `{}` | {} | {} |",
            key.table,
            key.key,
            key.default,
            key.meaning.replace('|', "\\|")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_wrap_without_losing_words() {
        let text = "word ".repeat(50);
        let mut out = String::new();
        push_comment(&mut out, &text);
        assert!(out.lines().all(|l| l.starts_with("# ") && l.len() <= WIDTH));
        let words: Vec<&str> = out.split_whitespace().filter(|w| *w != "#").collect();
        assert_eq!(words.len(), 50);
    }
}
