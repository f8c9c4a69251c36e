//! The delta keys (FACTS.md §4): text in, `ServerConfig` / `ClientConfig` or message out.

use super::tests::{err, parse};

const MINIMAL: &str = "[[app]]\nname = \"svc\"\n";

#[test]
fn delta_keys_default_to_eurekas_values() {
    let s = parse(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
    assert!(!s.server.disable_delta);
    assert_eq!(s.server.retention_time_in_ms_in_delta_queue, 180_000);
    assert_eq!(s.server.delta_retention_timer_interval_ms, 30_000);
    assert!(!s.apps[0].client.disable_delta);
}

/// Spring's relaxed binding of `retentionTimeInMSInDeltaQueue` is the odd
/// `retention-time-in-m-s-in-delta-queue`; the camel-case name is the same key.
#[test]
fn delta_keys_bind_relaxed_and_per_role() {
    let text = format!(
        "[server]\neureka.server.retentionTimeInMSInDeltaQueue = 60000\n\
         eureka.server.delta-retention-timer-interval-in-ms = 5000\n\
         eureka.server.disable-delta = true\n\
         [clients]\neureka.client.disable-delta = true\n{MINIMAL}\
         eureka.client.disable-delta = false\n"
    );
    let s = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.server.retention_time_in_ms_in_delta_queue, 60_000);
    assert_eq!(s.server.delta_retention_timer_interval_ms, 5_000);
    assert!(s.server.disable_delta);
    assert!(!s.apps[0].client.disable_delta, "the app's own value wins");
}

#[test]
fn zero_or_negative_delta_intervals_are_errors() {
    let e = err(&format!(
        "[server]\neureka.server.delta-retention-timer-interval-in-ms = 0\n{MINIMAL}"
    ));
    assert_eq!(
        e,
        "s.toml:2:54: `server.eureka.server.delta-retention-timer-interval-in-ms`: must be at \
         least 1, got 0; allowed: an integer in 1..=86400000 (milliseconds)"
    );
    let e = err(&format!(
        "[server]\neureka.server.retention-time-in-m-s-in-delta-queue = -1\n{MINIMAL}"
    ));
    assert!(
        e.contains(
            "`server.eureka.server.retention-time-in-m-s-in-delta-queue`: must be at least 1, \
             got -1; allowed: an integer in 1..=86400000 (milliseconds)"
        ),
        "{e}"
    );
    let e = err(&format!(
        "[clients]\neureka.client.disable-delta = 1\n{MINIMAL}"
    ));
    assert!(
        e.contains("expected a boolean, found an integer (1); allowed: true or false"),
        "{e}"
    );
}
