//! Maven resource-filtering tokens left in a file that was never filtered. A build that filters
//! `src/main/resources` replaces `@project.version@` (the delimiter `spring-boot-starter-parent`
//! sets, `resource.delimiter`) or, where a project sets `#` as its delimiter as JHipster's build
//! does, `#spring.profiles.active#`, while copying the file into the jar. A simulation reads the
//! file as checked in, where Spring would bind the token as the literal text: a profile named
//! `@spring.profiles.active@`, or, for the `#` form in YAML, nothing at all, since YAML reads
//! `#` after a blank as a comment and the key is empty.

use super::{ACTIVE, Property};
use crate::scenario::keys::canonical;

/// The first token `@name@` in `value` (a letter first, then letters, digits, `.`, `-`, `_`),
/// delimiters included.
fn at_token(value: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(open) = value[from..].find('@') {
        let start = from + open;
        let rest = &value[start + 1..];
        let close = rest.find('@')?;
        let name = &rest[..close];
        if is_token_name(name) {
            return Some(&value[start..start + close + 2]);
        }
        from = start + 1;
    }
    None
}

fn is_token_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// The `#name#` a YAML line `key: #name#` holds after its key, which YAML reads as a comment.
pub(super) fn hash_token_comment(line: &str) -> Option<&str> {
    let (_, after) = line.split_once(':')?;
    if !after.starts_with([' ', '\t']) {
        return None;
    }
    let token = after.trim();
    let name = token.strip_prefix('#')?.strip_suffix('#')?;
    is_token_name(name).then_some(token)
}

/// The token of property `p` (an `@name@` in its value, or `hash` when its YAML line held a
/// `#name#` comment), as the warning names it.
pub(super) fn token_of<'p>(p: &'p Property, hash: Option<&'p str>) -> Option<&'p str> {
    at_token(&p.value).or(hash).or_else(|| {
        let v = p.value.trim();
        v.strip_prefix('#')
            .and_then(|r| r.strip_suffix('#'))
            .filter(|n| is_token_name(n))
            .map(|_| v)
    })
}

/// The warning for `p`, whose value holds the unfiltered `token`; `chosen` when the profiles
/// are chosen on the command line (`simulation.spring-profiles`), over the file's.
pub(super) fn warning(p: &Property, token: &str, chosen: bool) -> String {
    let bound = if token.starts_with('#') && p.value.is_empty() {
        "YAML reads `#` after a blank as the start of a comment, so Spring binds the key as empty"
            .to_string()
    } else {
        format!("Spring binds the text `{}` as written", p.value)
    };
    let effect = if chosen && canonical(&p.name) == canonical(ACTIVE) {
        " (here the profiles chosen by the scenario apply instead)".to_string()
    } else if canonical(&p.name) == canonical(ACTIVE) {
        if p.value.is_empty() {
            ": no profile is active, so Spring activates `default`".to_string()
        } else {
            format!(
                ": the active profile is literally `{}`, so none of the file's profile \
                 documents applies (Spring Boot 3.5+ refuses the name at start: a profile name \
                 begins and ends with a letter or digit)",
                p.value
            )
        }
    } else {
        String::new()
    };
    format!(
        "{}:{}: `{}` holds `{token}`, a Maven resource-filtering token the build replaces when \
         it copies the file into the jar; read unfiltered, {bound}{effect}. Point spring-config \
         at the filtered copy (target/classes/...), or write the value the build puts there",
        p.file, p.line, p.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_and_addresses_are_not() {
        assert_eq!(at_token("@project.version@"), Some("@project.version@"));
        assert_eq!(at_token("v@project.version@-x"), Some("@project.version@"));
        assert_eq!(at_token("ops@example.com"), None);
        assert_eq!(at_token("a@b.com,c@d.com"), None);
        assert_eq!(
            hash_token_comment("    active: #spring.profiles.active#"),
            Some("#spring.profiles.active#")
        );
        assert_eq!(hash_token_comment("    active: prod # the usual"), None);
        assert_eq!(hash_token_comment("url: http://a#b#"), None);
    }
}
