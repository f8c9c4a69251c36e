//! Profile expressions of a document's `spring.config.activate.on-profile` (Boot 2.4+) or
//! `spring.profiles` (before): a comma-separated list, active when any item is, each item a
//! `org.springframework.core.env.Profiles#of` expression (`prod`, `!prod`, `a & b`, `a | b`,
//! parentheses; `&` and `|` not mixed without parentheses).

/// `Profiles#expandProfiles` (Boot 2.4+): each profile followed by the members of its
/// `spring.profiles.group.<name>` (`group` reads them), depth first, each profile once.
pub(super) fn expand_groups(
    profiles: &[String],
    group: impl Fn(&str) -> Option<Vec<String>>,
) -> Vec<String> {
    let mut stack: Vec<String> = profiles.iter().rev().cloned().collect();
    let mut out: Vec<String> = Vec::new();
    while let Some(current) = stack.pop() {
        if out.contains(&current) {
            continue;
        }
        if let Some(members) = group(&current) {
            stack.extend(members.into_iter().rev());
        }
        out.push(current);
    }
    out
}

/// Whether `expression` holds when `active` are the active profiles.
pub(super) fn matches(expression: &str, active: &[String]) -> Result<bool, String> {
    let mut any = false;
    for item in expression.split(',') {
        let tokens = tokens(item)?;
        if tokens.is_empty() {
            return Err(format!("`{expression}` has an empty profile expression"));
        }
        let mut at = 0;
        let value = parse_or(&tokens, &mut at, active)?;
        if at != tokens.len() {
            return Err(format!("`{}`: unexpected `{}`", item.trim(), tokens[at]));
        }
        any |= value;
    }
    Ok(any)
}

fn tokens(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if matches!(c, '(' | ')' | '!' | '&' | '|') || c.is_whitespace() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    Ok(out)
}

fn is_word(token: &str) -> bool {
    !matches!(token, "(" | ")" | "!" | "&" | "|")
}

/// `a | b | ...` or `a & b & ...` (one operator per level) of unary terms.
fn parse_or(tokens: &[String], at: &mut usize, active: &[String]) -> Result<bool, String> {
    let mut value = parse_unary(tokens, at, active)?;
    let mut operator: Option<&str> = None;
    while let Some(op) = tokens.get(*at).map(String::as_str) {
        if op != "&" && op != "|" {
            break;
        }
        if operator.is_some_and(|o| o != op) {
            return Err("`&` and `|` are mixed without parentheses".to_string());
        }
        operator = Some(if op == "&" { "&" } else { "|" });
        *at += 1;
        let rhs = parse_unary(tokens, at, active)?;
        value = if op == "&" {
            value && rhs
        } else {
            value || rhs
        };
    }
    Ok(value)
}

fn parse_unary(tokens: &[String], at: &mut usize, active: &[String]) -> Result<bool, String> {
    match tokens.get(*at).map(String::as_str) {
        Some("!") => {
            *at += 1;
            Ok(!parse_unary(tokens, at, active)?)
        }
        Some("(") => {
            *at += 1;
            let value = parse_or(tokens, at, active)?;
            if tokens.get(*at).map(String::as_str) != Some(")") {
                return Err("a `(` without its `)`".to_string());
            }
            *at += 1;
            Ok(value)
        }
        Some(word) if is_word(word) => {
            *at += 1;
            Ok(active.iter().any(|p| p == word))
        }
        Some(other) => Err(format!("unexpected `{other}`")),
        None => Err("an operator without its profile".to_string()),
    }
}
