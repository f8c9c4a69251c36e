//! `[[claim]]` tables: text (and `--set` arguments) in, `ClaimConfig` or message out.

use super::*;
use crate::scenario::Metric;
use crate::scenario::model::Comparison;

/// One app with two instances, each stopped by a shutdown.
const BASE: &str = r#"[[app]]
name = "svc"
instances = 2
[[shutdown]]
instance = "svc-0"
at-s = 100
strategy = "kill-9"
[[shutdown]]
instance = "svc-1"
at-s = 200
strategy = "kill-15"
"#;

/// Line 12 of `BASE + CLAIM` is `[[claim]]`; its keys follow on lines 13..=18.
const CLAIM: &str = r#"[[claim]]
metric = "exposure_ms"
statistic = "max"
comparison = "<="
value = 180000
source = "seed 000"
"#;

fn parse(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(&format!("{BASE}{text}"), "c.toml", "c", &sets)
}

/// The warnings about claims (the others are about the fleet).
fn claim_warnings(s: &Scenario) -> Vec<&str> {
    s.warnings
        .iter()
        .map(String::as_str)
        .filter(|w| w.contains("claim"))
        .collect()
}

fn ok(text: &str) -> Vec<ClaimConfig> {
    parse(text, &[]).unwrap_or_else(|e| panic!("{e}")).claims
}

fn err(text: &str) -> String {
    match parse(text, &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// `CLAIM` with the line starting `key =` replaced by `line` (or removed when empty).
fn with(key: &str, line: &str) -> String {
    let mut found = false;
    let lines: Vec<&str> = CLAIM
        .lines()
        .filter_map(|l| {
            if l.starts_with(&format!("{key} =")) {
                found = true;
                (!line.is_empty()).then_some(line)
            } else {
                Some(l)
            }
        })
        .collect();
    assert!(found, "no `{key}` in CLAIM");
    lines.join("\n") + "\n"
}

#[test]
fn scenarios_have_no_claims_by_default() {
    assert!(ok("").is_empty());
}

#[test]
fn a_claim_is_typed_with_its_defaults() {
    let claims = ok(CLAIM);
    assert_eq!(
        claims,
        [ClaimConfig {
            name: None,
            shutdown: 0,
            metric: Metric::ExposureMs,
            statistic: Statistic::Max,
            comparison: Comparison::AtMost,
            value: 180_000.0,
            source: "seed 000".into(),
        }]
    );
}

#[test]
fn every_key_of_a_claim_is_read() {
    let claims = ok(r#"[[claim]]
name = "lease expiry is 90 + 90 s"
shutdown = "svc-1"
metric = "server-removed-ms"
statistic = "P99.9"
op = ">="
value-s = 150.5
source = "seed 002"
[[claim]]
shutdown = 1
metric = "dead_hits"
statistic = "zero_share"
comparison = "=="
value = 0.95
source = "s"
"#);
    let c = &claims[0];
    assert_eq!(c.name.as_deref(), Some("lease expiry is 90 + 90 s"));
    assert_eq!(c.shutdown, 1);
    assert_eq!(c.metric, Metric::ServerRemovedMs);
    assert_eq!(c.statistic, Statistic::Percentile(99.9));
    assert_eq!(c.comparison, Comparison::AtLeast);
    assert_eq!(c.value, 150_500.0, "value-s is converted to ms");
    let c = &claims[1];
    assert_eq!((c.shutdown, c.statistic), (1, Statistic::ZeroShare));
    assert_eq!(c.value, 0.95);
}

#[test]
fn statistics_parse_by_name_and_percentile() {
    let cases = [
        ("min", Some(Statistic::Min)),
        ("MAX", Some(Statistic::Max)),
        ("mean", Some(Statistic::Mean)),
        ("p50", Some(Statistic::Percentile(50.0))),
        ("p99.9", Some(Statistic::Percentile(99.9))),
        ("p100", Some(Statistic::Percentile(100.0))),
        ("zero-share", Some(Statistic::ZeroShare)),
        ("zeroShare", Some(Statistic::ZeroShare)),
        ("unresolved", Some(Statistic::Unresolved)),
        ("p0", None),
        ("p100.1", None),
        ("p", None),
        ("p1e2", None),
        ("p-5", None),
        ("p9.9.9", None),
        ("pinf", None),
        ("median", None),
    ];
    for (text, expected) in cases {
        assert_eq!(Statistic::parse(text), expected, "{text}");
    }
    assert_eq!(Statistic::Percentile(99.9).name(), "p99.9");
    assert_eq!(Statistic::Percentile(50.0).name(), "p50");
}

#[test]
fn unknown_metrics_name_the_key_the_line_and_the_closest_metric() {
    let e = err(&with("metric", "metric = \"exposure\""));
    assert_eq!(
        e,
        "c.toml:13:10: `claim[0].metric`: unknown metric `exposure`; did you mean `exposure_ms`?; \
         allowed: exposure_ms, dead_hits, errors, inflight_failed, timeout_delay_ms, \
         last_dead_hit_ms, server_removed_ms, readonly_removed_ms, client_removed_ms, \
         ribbon_removed_ms, lost_capacity_ms"
    );
}

#[test]
fn unknown_statistics_and_comparisons_say_what_is_allowed() {
    let e = err(&with("statistic", "statistic = \"meen\""));
    assert!(
        e.starts_with(
            "c.toml:14:13: `claim[0].statistic`: unknown statistic `meen`; did you mean \
             `mean`?; allowed: min, max, mean, p<number>"
        ),
        "{e}"
    );
    let e = err(&with("comparison", "comparison = \"=\""));
    assert_eq!(
        e,
        "c.toml:15:14: `claim[0].comparison`: unknown comparison `=`; did you mean `==`?; \
         allowed: <=, <, >=, >, =="
    );
    let e = err(&with("comparison", "op = \"!=\""));
    assert!(
        e.starts_with("c.toml:15:6: `claim[0].op`: unknown comparison `!=`"),
        "{e}"
    );
}

#[test]
fn unknown_claim_keys_suggest_the_closest() {
    let e = err(&format!("{CLAIM}metrc = \"x\"\n"));
    assert_eq!(
        e,
        "c.toml:18:1: unknown key `claim[0].metrc`; did you mean `claim[0].metric`? \
         (`eureka-sim keys` lists every key)"
    );
}

#[test]
fn required_keys_are_named_with_the_table() {
    let e = err(&with("source", ""));
    assert!(
        e.starts_with("c.toml:12:1: `claim[0].source` is required; allowed: a non-empty string"),
        "{e}"
    );
    let e = err(&with("metric", ""));
    assert!(
        e.starts_with("c.toml:12:1: `claim[0].metric` is required"),
        "{e}"
    );
    let e = err(&with("value", ""));
    assert!(
        e.starts_with(
            "c.toml:12:1: `claim[0].value` is required; allowed: value in the metric's unit"
        ),
        "{e}"
    );
    let e = err(&with("source", "source = \"  \""));
    assert!(e.contains("`claim[0].source`: the text is empty"), "{e}");
}

#[test]
fn the_threshold_is_given_once_in_the_metrics_unit() {
    let e = err(&format!("{CLAIM}value-s = 180\n"));
    assert!(
        e.starts_with(
            "c.toml:18:11: `claim[0].value-s`: `claim[0].value` is also set; give the threshold \
             once"
        ),
        "{e}"
    );
    let counts = with("metric", "metric = \"dead_hits\"");
    let e = err(&with("value", "value-s = 1").replace("exposure_ms", "dead_hits"));
    assert!(
        e.contains("`claim[0].value-s`: dead_hits is a count, not a time; write it as value"),
        "{e}"
    );
    assert_eq!(ok(&counts)[0].value, 180_000.0, "a count takes value");
    let share = with("statistic", "statistic = \"zero-share\"");
    let e = err(&share);
    assert_eq!(
        e,
        "c.toml:16:9: `claim[0].value`: zero-share is a share of the trials, a fraction in \
         0..=1, not 180000; allowed: a number in 0..=1 (0.95 for 95 %)"
    );
    let e = err(&with("statistic", "statistic = \"unresolved\"").replace("value =", "value-s ="));
    assert!(
        e.contains("unresolved is a share of the trials, not a time"),
        "{e}"
    );
    let e = err(&with("value", "value = \"soon\""));
    assert!(
        e.contains("`claim[0].value`: expected a number, found a string (\"soon\")"),
        "{e}"
    );
}

#[test]
fn the_shutdown_must_exist() {
    let e = err(&format!("{CLAIM}shutdown = 2\n"));
    assert_eq!(
        e,
        "c.toml:18:12: `claim[0].shutdown`: shutdown[2] does not exist: the file has 2 \
         [[shutdown]] tables; allowed: 0..=1 or one of svc-0, svc-1"
    );
    let e = err(&format!("{CLAIM}shutdown = \"svc-2\"\n"));
    assert!(
        e.contains("no [[shutdown]] stops `svc-2`; did you mean `svc-"),
        "{e}"
    );
    let e = err(&format!("{CLAIM}shutdown = -1\n"));
    assert!(e.contains("must be at least 0, got -1"), "{e}");
    let none = parse_str(
        &format!("[[app]]\nname = \"svc\"\n{CLAIM}"),
        "c.toml",
        "c",
        &[],
    );
    let e = none.err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        e,
        "c.toml:3:1: `claim[0].shutdown`: the scenario has no [[shutdown]], so there is nothing \
         to make a claim about; allowed: a [[shutdown]] table to make the claim about"
    );
}

#[test]
fn set_overrides_claims_and_its_threshold_replaces_the_files() {
    let s = parse(CLAIM, &["claim[0].value=200000", "claim[0].statistic=p90"]).unwrap();
    assert_eq!(s.claims[0].value, 200_000.0);
    assert_eq!(s.claims[0].statistic, Statistic::Percentile(90.0));
    // A --set value-s replaces the file's value (and the other way round).
    let s = parse(CLAIM, &["claim[0].value-s=200"]).unwrap();
    assert_eq!(s.claims[0].value, 200_000.0);
    let in_seconds = with("value", "value-s = 180");
    let s = parse(&in_seconds, &["claim[0].value=1"]).unwrap();
    assert_eq!(s.claims[0].value, 1.0);
    let s = parse(CLAIM, &["claim[0].shutdown=svc-1", "claim[0].op=>"]).unwrap();
    assert_eq!(
        (s.claims[0].shutdown, s.claims[0].comparison),
        (1, Comparison::Above)
    );
    let e = parse(CLAIM, &["claim[1].value=1"]).unwrap_err().to_string();
    assert!(
        e.contains("claim[1] does not exist: the file has one [[claim]]: claim[0]"),
        "{e}"
    );
    let e = parse(CLAIM, &["claim[0].metric=hits"])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("c.toml (--set claim[0].metric=hits): `claim[0].metric`: unknown metric"),
        "{e}"
    );
}

#[test]
fn claims_that_cannot_mean_much_are_warned_about() {
    let mean = with("statistic", "statistic = \"mean\"").replace("\"<=\"", "\"==\"");
    let s = parse(&mean, &[]).unwrap();
    assert_eq!(
        claim_warnings(&s),
        [
            "c.toml:15:14: `claim[0]` compares a mean with ==, which holds only for an exact value; \
          <= or >= is probably meant"
        ]
    );
    let unresolved = with("statistic", "statistic = \"unresolved\"")
        .replace("exposure_ms", "errors")
        .replace("180000", "0");
    let s = parse(&unresolved, &[]).unwrap();
    assert_eq!(
        claim_warnings(&s),
        [
            "c.toml:14:13: `claim[0]`: errors has a value in every trial, so its unresolved share \
          is always 0"
        ]
    );
}
