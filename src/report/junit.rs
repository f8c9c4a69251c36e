//! `check --junit FILE`: the decided claims as a JUnit XML report, the format CI systems read
//! test results in (GitHub Actions' test reporters, GitLab's `artifacts:reports:junit`,
//! Jenkins' `junit` step). One `<testsuite>` per scenario file, one `<testcase>` per claim; a
//! claim that does not hold is a `<failure>` whose message carries the measured value and its
//! interval. No timestamps or durations, so the same run writes the same bytes.

use std::fmt::Write as _;

use super::check_report::{CheckedFile, caveat, claim_text, measured_text};
use crate::experiment::ClaimResult;

/// The JUnit XML of every checked file, in the order checked.
pub fn render_junit(files: &[CheckedFile]) -> String {
    let tests: usize = files.iter().map(|f| f.results.len()).sum();
    let failures: usize = files.iter().map(|f| f.failed).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"eureka-sim check\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"0\">"
    );
    for file in files {
        push_suite(&mut xml, file);
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn push_suite(xml: &mut String, file: &CheckedFile) {
    let name = attribute(&file.source);
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">",
        file.results.len(),
        file.failed
    );
    let _ = writeln!(
        xml,
        "    <properties>\n      <property name=\"seed\" value=\"{}\"/>\n    </properties>",
        file.seed
    );
    for result in &file.results {
        push_case(xml, &name, file.seed, result);
    }
    xml.push_str("  </testsuite>\n");
}

/// A claim as a `<testcase>`: named by its index and name; its details (the claim, what was
/// measured, the source) as the failure's text or, when it holds, as `<system-out>`.
fn push_case(xml: &mut String, classname: &str, seed: u64, r: &ClaimResult) {
    let title = match &r.claim.name {
        Some(name) => format!("claim[{}] {name}", r.index),
        None => format!("claim[{}]", r.index),
    };
    let details = format!(
        "shutdown: {} {}\nclaim: {}\nmeasured: {} in {} trials, --seed {seed}{}\nsource: {}",
        r.instance,
        r.strategy.name(),
        claim_text(r),
        measured_text(r),
        r.trials,
        caveat(r),
        r.claim.source
    );
    let _ = writeln!(
        xml,
        "    <testcase name=\"{}\" classname=\"{classname}\">",
        attribute(&title)
    );
    if r.passed {
        let _ = writeln!(xml, "      <system-out>{}</system-out>", text(&details));
    } else {
        let message = format!("{}; measured {}", claim_text(r), measured_text(r));
        let _ = writeln!(
            xml,
            "      <failure type=\"claim\" message=\"{}\">{}</failure>",
            attribute(&message),
            text(&details)
        );
    }
    xml.push_str("    </testcase>\n");
}

/// `value` as XML character data: `&`, `<` and `>` escaped, and the characters XML 1.0 does not
/// allow at all (control characters other than tab, newline and carriage return) replaced by
/// U+FFFD, since no escape can carry them.
fn text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `value` inside a double-quoted attribute: as [`text`], with quotes escaped, and newlines and
/// tabs as character references (a parser would turn them into spaces otherwise).
fn attribute(value: &str) -> String {
    text(value)
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_markup_and_replaces_what_xml_cannot_carry() {
        assert_eq!(text("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(text("bell\u{7}\ttab\nline"), "bell\u{fffd}\ttab\nline");
        assert_eq!(text("č \"q\""), "č \"q\"");
    }

    #[test]
    fn attributes_escape_quotes_and_keep_newlines() {
        assert_eq!(
            attribute("say \"<hi>\" & 'bye'\nnext"),
            "say &quot;&lt;hi&gt;&quot; &amp; &apos;bye&apos;&#10;next"
        );
    }
}
