//! End to end: `eureka-sim check` on the bundled claims (`scenarios/claims/`) and on broken ones,
//! as a CI job would run it: exit codes, one line per claim, the total line.
//!
//! Expected verdicts and figures are derived from the rules in shared/eureka/FACTS.md (each test
//! cites the section), never copied from an earlier run.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::{eureka_sim, repo, temp};

struct Output {
    status: i32,
    stdout: String,
    stderr: String,
}

/// Runs `eureka-sim` in `dir` with `args`; never accepts a panic.
fn run(dir: &Path, args: &[&str]) -> Output {
    let out = eureka_sim(dir, 0, args);
    Output {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The claims of `check`'s output, one per block (a `PASS` or `FAIL` line and its indented
/// lines), each unwrapped into one line: `FAIL f.toml claim[0] (svc-0 kill-9) claim: ... measured:
/// ... source: ...`, spaces collapsed. Every printed line is at most 100 characters wide.
fn claim_lines(stdout: &str) -> Vec<String> {
    let mut claims: Vec<String> = Vec::new();
    for line in stdout.lines() {
        assert!(line.chars().count() <= 100, "wider than 100: `{line}`");
        if line.starts_with("PASS ") || line.starts_with("FAIL ") {
            claims.push(line.to_string());
        } else if let Some(claim) = claims.last_mut().filter(|_| line.starts_with("  ")) {
            for word in line.split_whitespace() {
                claim.push(' ');
                claim.push_str(word);
            }
        }
    }
    claims
}

/// The unwrapped block of claim `index` of `file`.
fn line_of(stdout: &str, file: &str, index: usize) -> String {
    let tag = format!("{file} claim[{index}]");
    claim_lines(stdout)
        .into_iter()
        .find(|l| l.contains(&tag))
        .unwrap_or_else(|| panic!("no line for {tag} in:\n{stdout}"))
}

/// The seconds after `measured: ` in a claim's block.
fn measured_s(line: &str) -> f64 {
    let rest = line
        .split_once(" measured: ")
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("no measured value in `{line}`"));
    let number = rest.split_once(" s").map_or(rest, |(n, _)| n);
    number
        .parse()
        .unwrap_or_else(|_| panic!("`{number}` is not seconds in `{line}`"))
}

/// The bundled kill-9 claims file's scenario part (everything before its first `[[claim]]`).
fn kill9_scenario() -> String {
    let text = fs::read_to_string(repo().join("scenarios/claims/kill-9.toml")).unwrap();
    let at = text.find("\n[[claim]]").expect("a claim");
    text[..=at].to_string()
}

/// `check scenarios/claims/` is the CI job of the seed documents' claims: seed 000's kill -9
/// "90 + 30 + 30 + 30 = 180 s" fails, with a worst case that FACTS.md §13 bounds to (180 s,
/// 330 s]; seed 002's "90 + 90 s" lease holds (§1, §13: no removal before 150 s); the wiki's
/// "up to 2 minutes" holds for a kill -15 (§13, Graceful: <= ~90 s).
#[test]
fn bundled_claims_fail_on_the_180_s_kill_9_claim() {
    let dir = temp();
    let junit = dir.path().join("reports/claims.xml");
    let junit_arg = junit.to_str().unwrap();
    let out = run(
        repo(),
        &["check", "scenarios/claims/", "--junit", junit_arg],
    );
    assert_eq!(
        out.status, 1,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );

    let kill9 = "scenarios/claims/kill-9.toml";
    let line = line_of(&out.stdout, kill9, 0);
    assert!(line.starts_with("FAIL "), "{line}");
    assert!(
        line.contains("claim: exposure_ms max <= 180 s measured: "),
        "{line}"
    );
    assert!(
        line.contains("(observed) in 300 trials, --seed 1"),
        "{line}"
    );
    assert!(
        line.contains("source: document 000_6b018d6b279bfa13.txt"),
        "{line}"
    );
    let worst = measured_s(&line);
    assert!(worst > 180.0 && worst <= 330.0, "worst case {worst} s");

    let line = line_of(&out.stdout, kill9, 1);
    assert!(line.starts_with("PASS "), "{line}");
    assert!(line.contains("server_removed_ms min >= 150 s"), "{line}");
    assert!(measured_s(&line) >= 150.0, "{line}");

    let line = line_of(&out.stdout, kill9, 2);
    assert!(line.starts_with("FAIL "), "{line}");
    assert!(measured_s(&line) > 90.0 + 90.0 - 30.0, "{line}");

    let line = line_of(&out.stdout, "scenarios/claims/kill-15.toml", 0);
    assert!(line.starts_with("PASS "), "{line}");
    assert!(measured_s(&line) <= 95.0, "{line}");

    // One line per [[claim]] of every bundled file, then the total.
    let mut claims = 0;
    for entry in fs::read_dir(repo().join("scenarios/claims")).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        claims += text.lines().filter(|l| l.trim() == "[[claim]]").count();
    }
    let lines = claim_lines(&out.stdout);
    assert_eq!(lines.len(), claims, "{}", out.stdout);
    let failed = lines.iter().filter(|l| l.starts_with("FAIL ")).count();
    let total = format!("{} passed, {failed} failed", claims - failed);
    assert_eq!(out.stdout.lines().last(), Some(total.as_str()));
    assert!(
        out.stderr
            .contains(&format!("{failed} of {claims} claim(s) failed")),
        "{}",
        out.stderr
    );
    // Files run in sorted order.
    let files: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);

    // The JUnit report says the same: one testcase per claim, a failure for each FAIL.
    let xml = fs::read_to_string(&junit).unwrap();
    let report = junit_report(&xml);
    assert_eq!(report.tests, claims);
    assert_eq!(report.failures, failed);
    assert_eq!(report.cases.len(), claims);
    for case in &report.cases {
        let index = case.name.split(' ').next().unwrap();
        let tag = format!("{} {index} ", case.classname);
        let verdict = if case.failure.is_some() {
            "FAIL"
        } else {
            "PASS"
        };
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(verdict) && l.contains(&tag)),
            "no {verdict} line for {tag}"
        );
    }
    let kill9_0 = report
        .cases
        .iter()
        .find(|c| c.classname == kill9 && c.name.starts_with("claim[0] "))
        .expect("kill-9.toml claim[0]");
    let message = kill9_0.failure.as_deref().expect("claim[0] fails");
    assert!(
        message.starts_with("exposure_ms max <= 180 s; measured ")
            && message.contains(" s (observed)"),
        "{message}"
    );
    assert_eq!(
        measured_s(&format!(
            " measured: {}",
            &message[message.find("measured ").unwrap() + 9..]
        )),
        worst
    );
}

/// A JUnit report as a CI system reads it.
struct Junit {
    tests: usize,
    failures: usize,
    cases: Vec<Case>,
}

struct Case {
    classname: String,
    name: String,
    /// The failure's message, if it failed.
    failure: Option<String>,
    /// The failure's text or the passing case's `system-out`.
    text: String,
}

/// Parses `xml` with a conforming XML parser (which rejects any unescaped `<`, `&` or quote) and
/// checks the JUnit shape: `testsuites` > `testsuite` > `testcase`, the suites' counts adding up
/// to the root's.
fn junit_report(xml: &str) -> Junit {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let count = |node: roxmltree::Node, name: &str| -> usize {
        node.attribute(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .parse()
            .unwrap()
    };
    let mut report = Junit {
        tests: count(root, "tests"),
        failures: count(root, "failures"),
        cases: Vec::new(),
    };
    let (mut tests, mut failures) = (0, 0);
    for suite in root.children().filter(|n| n.has_tag_name("testsuite")) {
        tests += count(suite, "tests");
        failures += count(suite, "failures");
        let mut cases = 0;
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            cases += 1;
            let failure = case.children().find(|n| n.has_tag_name("failure"));
            let out = case.children().find(|n| n.has_tag_name("system-out"));
            let text = failure.or(out).and_then(|n| n.text()).unwrap_or("");
            report.cases.push(Case {
                classname: case.attribute("classname").unwrap().to_string(),
                name: case.attribute("name").unwrap().to_string(),
                failure: failure.map(|f| f.attribute("message").unwrap().to_string()),
                text: text.to_string(),
            });
        }
        assert_eq!(cases, count(suite, "tests"), "{xml}");
    }
    assert_eq!((tests, failures), (report.tests, report.failures), "{xml}");
    report
}

/// Names and sources are the file's own text: markup in them is escaped, not interpreted, and a
/// claim that fails carries its measured value and interval in the failure message. The folder
/// of `--junit` is created. FACTS.md §1 and §13: no kill -9'd instance leaves the registry
/// before 150 s, so `server_removed_ms p50 <= 100 s` fails.
#[test]
fn junit_escapes_what_the_file_says_and_carries_the_measure() {
    let dir = temp();
    let text = format!(
        "{}[[claim]]\nname = \"<b>fast</b> & \\\"early\\\" 'removal'\"\nmetric = \
         \"server_removed_ms\"\nstatistic = \"p50\"\nop = \"<=\"\nvalue-s = 100\n\
         source = \"a < b && c > d\"\n",
        kill9_scenario()
    );
    fs::write(dir.path().join("odd.toml"), text).unwrap();
    let out = run(
        dir.path(),
        &[
            "check",
            "odd.toml",
            "--trials",
            "40",
            "--junit",
            "ci/out/claims.xml",
        ],
    );
    assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
    let xml = fs::read_to_string(dir.path().join("ci/out/claims.xml")).unwrap();
    let report = junit_report(&xml);
    assert_eq!((report.tests, report.failures), (1, 1));
    let case = &report.cases[0];
    assert_eq!(case.classname, "odd.toml");
    assert_eq!(case.name, "claim[0] <b>fast</b> & \"early\" 'removal'");
    let message = case.failure.as_deref().unwrap();
    assert!(
        message.starts_with("server_removed_ms p50 <= 100 s; measured ")
            && message.contains(" s (95 % CI "),
        "{message}"
    );
    let median = measured_s(&format!(
        " measured: {}",
        &message[message.find("measured ").unwrap() + 9..]
    ));
    assert!(median >= 150.0, "{message}");
    assert!(
        case.text.contains("source: a < b && c > d"),
        "{}",
        case.text
    );
    assert!(
        case.text.contains("in 40 trials, --seed 1"),
        "{}",
        case.text
    );
    // No temporary file left beside it.
    let names: Vec<_> = fs::read_dir(dir.path().join("ci/out")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

/// `--format json` prints one JSON document with the numbers the text prints.
#[test]
fn check_format_json_carries_the_numbers_of_the_text() {
    let dir = temp();
    fs::write(
        dir.path().join("kill-9.toml"),
        fs::read_to_string(repo().join("scenarios/claims/kill-9.toml")).unwrap(),
    )
    .unwrap();
    let args = ["check", "kill-9.toml", "--trials", "40", "--seed", "5"];
    let text = run(dir.path(), &args);
    let json = run(dir.path(), &[&args[..], &["--format", "json"]].concat());
    assert_eq!((text.status, json.status), (1, 1));
    let doc: serde_json::Value = serde_json::from_str(&json.stdout)
        .unwrap_or_else(|e| panic!("not JSON: {e}\n{}", json.stdout));
    let lines = claim_lines(&text.stdout);
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["scenario"], "kill-9.toml");
    assert_eq!(files[0]["seed"], 5);
    let claims = files[0]["claims"].as_array().unwrap();
    assert_eq!(claims.len(), lines.len());
    let failed = lines.iter().filter(|l| l.starts_with("FAIL ")).count();
    assert_eq!(doc["failed"], failed);
    assert_eq!(doc["passed"], lines.len() - failed);
    for (claim, line) in claims.iter().zip(&lines) {
        assert_eq!(claim["passed"], line.starts_with("PASS "), "{line}");
        assert_eq!(claim["trials"], 40);
        // Times print in seconds to the millisecond; JSON has the milliseconds.
        if claim["metric"].as_str().unwrap().ends_with("_ms") && claim["statistic"] != "mean" {
            let ms = claim["measured"].as_f64().unwrap();
            assert_eq!(measured_s(line), ms / 1000.0, "{line}");
        }
    }
}

/// A file whose only claim holds exits 0. FACTS.md §1 and §13: a kill -9'd lease expires two
/// durations (180 s) after its last renew, which was at most one heartbeat (30 s) before the kill.
#[test]
fn a_holding_claim_passes_with_exit_0() {
    let dir = temp();
    let text = format!(
        "{}[[claim]]\nmetric = \"server_removed_ms\"\nstatistic = \"min\"\nop = \">=\"\n\
         value-s = 150\nsource = \"FACTS.md §13\"\n",
        kill9_scenario()
    );
    fs::write(dir.path().join("holds.toml"), text).unwrap();
    let out = run(dir.path(), &["check", "holds.toml", "--trials", "40"]);
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    let lines = claim_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    assert!(
        lines[0].starts_with(
            "PASS holds.toml claim[0] (svc-0 kill-9) claim: server_removed_ms min >= 150 s \
             measured: "
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].ends_with("in 40 trials, --seed 1 source: FACTS.md §13"),
        "{}",
        lines[0]
    );
    assert_eq!(out.stdout.lines().last(), Some("1 passed, 0 failed"));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

/// `--set` reaches claims: raising the thresholds of the kill -9 claims above FACTS.md §13's
/// envelope (330 s to the Ribbon lists, 240 s to the registry, plus a few seconds for request
/// times) makes every claim hold.
#[test]
fn set_overrides_claim_thresholds() {
    let dir = temp();
    let text = fs::read_to_string(repo().join("scenarios/claims/kill-9.toml")).unwrap();
    let claims = text.lines().filter(|l| l.trim() == "[[claim]]").count();
    fs::write(dir.path().join("kill-9.toml"), text).unwrap();
    let out = run(
        dir.path(),
        &[
            "check",
            "kill-9.toml",
            "--trials",
            "40",
            "--set",
            "claim[0].value-s=335",
            "--set",
            "claim[2].value=245000",
            "--set",
            "claim[3].value-s=335",
        ],
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("exposure_ms max <= 335 s"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("server_removed_ms max <= 245 s"),
        "{}",
        out.stdout
    );
    let total = format!("{claims} passed, 0 failed");
    assert_eq!(out.stdout.lines().last(), Some(total.as_str()));
}

/// A bad claim is bad input: exit 2, with the file, line, column and key, before any trial runs.
#[test]
fn an_unknown_metric_exits_2_naming_the_key_and_line() {
    let dir = temp();
    let scenario = kill9_scenario();
    let line = scenario.lines().count() + 2;
    let text = format!(
        "{scenario}[[claim]]\nmetric = \"exposure\"\nstatistic = \"max\"\nop = \"<=\"\n\
         value = 1\nsource = \"x\"\n"
    );
    fs::write(dir.path().join("bad.toml"), text).unwrap();
    let out = run(dir.path(), &["check", "bad.toml", "--junit", "out.xml"]);
    assert_eq!(out.status, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        !dir.path().join("out.xml").exists(),
        "a report for bad input"
    );
    let expected = format!(
        "error: bad.toml:{line}:10: `claim[0].metric`: unknown metric `exposure`; did you mean \
         `exposure_ms`?; allowed: exposure_ms, dead_hits"
    );
    assert!(out.stderr.starts_with(&expected), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

/// Every file is validated before any runs: one bad file in a folder stops the whole check.
#[test]
fn a_folder_is_validated_before_any_trial_runs() {
    let dir = temp();
    let claims = dir.path().join("claims");
    fs::create_dir(&claims).unwrap();
    let good = format!(
        "{}[[claim]]\nmetric = \"dead_hits\"\nstatistic = \"min\"\nop = \">=\"\nvalue = 0\n\
         source = \"x\"\n",
        kill9_scenario()
    );
    fs::write(claims.join("a-good.toml"), &good).unwrap();
    fs::write(
        claims.join("b-bad.toml"),
        good.replace("\"min\"", "\"p101\""),
    )
    .unwrap();
    fs::write(claims.join("notes.txt"), "not a scenario").unwrap();
    let out = run(dir.path(), &["check", "claims", "--trials", "2"]);
    assert_eq!(out.status, 2, "{}{}", out.stdout, out.stderr);
    let file: PathBuf = ["claims", "b-bad.toml"].iter().collect();
    assert!(
        out.stderr.contains(&format!("{}:", file.display()))
            && out
                .stderr
                .contains("`claim[0].statistic`: unknown statistic `p101`"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

/// `check` needs claims: a scenario without any, or a folder without scenarios, is bad input.
#[test]
fn nothing_to_check_is_an_error() {
    let dir = temp();
    fs::write(dir.path().join("plain.toml"), kill9_scenario()).unwrap();
    let out = run(dir.path(), &["check", "plain.toml"]);
    assert_eq!(out.status, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .starts_with("error: plain.toml: no [[claim]] to check"),
        "{}",
        out.stderr
    );
    fs::create_dir(dir.path().join("empty")).unwrap();
    let out = run(dir.path(), &["check", "empty"]);
    assert_eq!(out.status, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no scenario file (*.toml)"),
        "{}",
        out.stderr
    );
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status, 2, "clap's usage error: {}", out.stderr);
}
