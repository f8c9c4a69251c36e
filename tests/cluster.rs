//! End to end on a cluster: `eureka-sim run` on two peers writes `callers.csv` (one row per
//! trial, shutdown and caller) and `servers.csv` (one per trial, shutdown and peer), and
//! `trials.csv` aggregates them: its `server_removed_ms` and `readonly_removed_ms` are the last
//! peer's, its exposure the longest caller's, its dead hits the callers' sum. The terminal adds
//! the peers' removals and whose answers brought each caller the news.

use std::collections::BTreeMap;
use std::fs;

use crate::harness::{eureka_sim, ok, read_csv, temp};

/// `scenarios/kill-9.toml`'s fleet on two peers `a` and `b` (every client calls both), with a
/// second caller.
const TWO_PEERS: &str = r#"
[simulation]
duration-s = 600
release = "Hoxton"

[network]
latency-ms = 1
latency-jitter-ms = 4

[server]
eureka.server.enable-self-preservation = true

[clients]
eureka.client.registry-fetch-interval-seconds = 30

[[peer]]
name = "a"

[[peer]]
name = "b"

[[app]]
name = "svc"
instances = 20

[[caller]]
name = "gateway"
calls = "svc"
rate-per-s = 20

[[caller]]
name = "batch"
calls = "svc"
rate-per-s = 5

[[shutdown]]
instance = "svc-0"
at-s = 200
strategy = "kill-9"
"#;

fn cell(row: &BTreeMap<String, String>, column: &str) -> Option<i64> {
    let text = &row[column];
    (!text.is_empty()).then(|| text.parse().unwrap())
}

#[test]
fn two_peers_write_callers_and_servers_and_trials_aggregates_them() {
    let tmp = temp();
    fs::write(tmp.path().join("two-peers.toml"), TWO_PEERS).unwrap();
    let stdout = ok(eureka_sim(
        tmp.path(),
        0,
        &[
            "run",
            "two-peers.toml",
            "--trials",
            "6",
            "--seed",
            "3",
            "--out",
            "out",
        ],
    ));
    assert!(stdout.contains("callers.csv"), "{stdout}");
    assert!(
        stdout.contains("per peer (mean over the trials that have it): a registry "),
        "{stdout}"
    );
    assert!(
        stdout.contains("whose answer dropped it from each caller's cache (trials): gateway (a "),
        "{stdout}"
    );
    let out = tmp.path().join("out");
    let (header, callers) = read_csv(&out.join("callers.csv"));
    assert_eq!(
        header,
        [
            "trial",
            "seed",
            "instance",
            "caller",
            "server",
            "exposure_ms",
            "dead_hits",
            "errors",
            "last_dead_hit_ms",
            "client_removed_ms",
            "ribbon_removed_ms",
            "lost_capacity_ms"
        ]
    );
    let (header, servers) = read_csv(&out.join("servers.csv"));
    assert_eq!(
        header,
        [
            "trial",
            "seed",
            "instance",
            "server",
            "server_removed_ms",
            "readonly_removed_ms"
        ]
    );
    let (_, trials) = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 6);
    assert_eq!(callers.len(), 6 * 2, "a row per trial and caller");
    assert_eq!(servers.len(), 6 * 2, "a row per trial and peer");
    for trial in &trials {
        let of_trial = |rows: &[BTreeMap<String, String>]| -> Vec<BTreeMap<String, String>> {
            rows.iter()
                .filter(|r| r["trial"] == trial["trial"] && r["instance"] == trial["instance"])
                .cloned()
                .collect()
        };
        let peers = of_trial(&servers);
        let names: Vec<&str> = peers.iter().map(|r| r["server"].as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        for column in ["server_removed_ms", "readonly_removed_ms"] {
            let each: Option<Vec<i64>> = peers.iter().map(|r| cell(r, column)).collect();
            assert_eq!(
                cell(trial, column),
                each.and_then(|v| v.into_iter().max()),
                "trial {}: {column} is the last peer's",
                trial["trial"]
            );
        }
        let by_caller = of_trial(&callers);
        let names: Vec<&str> = by_caller.iter().map(|r| r["caller"].as_str()).collect();
        assert_eq!(names, ["gateway", "batch"]);
        let sum =
            |column: &str| -> i64 { by_caller.iter().map(|r| cell(r, column).unwrap()).sum() };
        assert_eq!(cell(trial, "dead_hits"), Some(sum("dead_hits")));
        assert_eq!(cell(trial, "errors"), Some(sum("errors")));
        let each: Option<Vec<i64>> = by_caller.iter().map(|r| cell(r, "exposure_ms")).collect();
        assert_eq!(
            cell(trial, "exposure_ms"),
            each.and_then(|v| v.into_iter().max())
        );
        for row in &by_caller {
            // The peer whose answer dropped it, whenever the cache dropped it.
            let dropped = cell(row, "client_removed_ms").is_some();
            assert_eq!(
                dropped,
                ["a", "b"].contains(&row["server"].as_str()),
                "{row:?}"
            );
        }
    }
}

/// `scenarios/cluster/zone-outage-self-preservation.toml`: a zone outage is one row of
/// `trials.csv` per instance of the zone, in id order; the zone's gateway died with it (its
/// rows of `callers.csv`: exposure 0, no dead hit) and so did peer `a` (its rows of
/// `servers.csv` empty: going down removes nothing, and a peer down for good is left out of
/// "the registry"). Self-preservation off, every instance is evicted by b
/// and c within the trial; on, every one is still listed at `max-duration-s`, held by
/// self-preservation. `compare` without `--strategy` compares the one strategy a zone outage
/// takes, kill-9, and says so; another one named is refused, naming the key.
#[test]
fn a_zone_outage_is_a_row_per_instance_and_self_preservation_keeps_them() {
    let file = crate::harness::repo().join("scenarios/cluster/zone-outage-self-preservation.toml");
    let file = file.to_str().unwrap();
    let run = |out: &str, extra: &[&str]| {
        let tmp = temp();
        let mut args = vec!["run", file, "--trials", "3", "--seed", "1", "--out", out];
        args.extend_from_slice(extra);
        ok(eureka_sim(tmp.path(), 0, &args));
        let out = tmp.path().join(out);
        (
            read_csv(&out.join("trials.csv")).1,
            read_csv(&out.join("callers.csv")).1,
            read_csv(&out.join("servers.csv")).1,
        )
    };
    let off = [
        "--set",
        "server.eureka.server.enable-self-preservation=false",
    ];
    let (trials, callers, servers) = run("off", &off);
    assert_eq!(trials.len(), 3 * 10);
    let ids: Vec<String> = (0..10).map(|i| format!("svc-z1-{i}")).collect();
    for rows in trials.chunks(10) {
        let names: Vec<&str> = rows.iter().map(|r| r["instance"].as_str()).collect();
        assert_eq!(names, ids);
    }
    for row in &trials {
        assert_eq!(cell(row, "t_stop_ms"), Some(300_000), "{row:?}");
        let exposure = cell(row, "exposure_ms").expect("evicted");
        assert!((150_000..600_000).contains(&exposure), "{row:?}");
    }
    for row in callers.iter().filter(|r| r["caller"] == "gateway-z1") {
        assert_eq!(cell(row, "exposure_ms"), Some(0), "{row:?}");
        assert_eq!(cell(row, "dead_hits"), Some(0), "{row:?}");
        assert_eq!(row["server"], "", "no peer's answer dropped it: {row:?}");
    }
    for row in servers.iter().filter(|r| r["server"] == "a") {
        assert_eq!(cell(row, "server_removed_ms"), None, "{row:?}");
        assert_eq!(cell(row, "readonly_removed_ms"), None, "{row:?}");
    }
    let (trials, _, _) = run("on", &["--set", "simulation.max-duration-s=900"]);
    assert_eq!(trials.len(), 3 * 10);
    for row in &trials {
        assert_eq!(cell(row, "exposure_ms"), None, "{row:?}");
        assert_eq!(row["unresolved_reason"], "self_preservation", "{row:?}");
        assert_eq!(cell(row, "trial_end_ms"), Some(900_000), "{row:?}");
    }
    let tmp = temp();
    let compared = eureka_sim(
        tmp.path(),
        0,
        &["compare", file, "--trials", "2", "--out", "compared"],
    );
    let stderr = String::from_utf8_lossy(&compared.stderr).into_owned();
    assert_eq!(compared.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "note: zone `z1` goes down in a zone outage, which stops its processes with kill-9 \
             only: compare runs kill-9 and leaves out kill-15, pause, service-registry"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("no --wait-s"), "{stderr}");
    let (_, rows) = read_csv(&tmp.path().join("compared/compare.csv"));
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["variant"] == "kill-9"), "{rows:?}");
    let refused = eureka_sim(
        tmp.path(),
        0,
        &[
            "compare",
            file,
            "--trials",
            "2",
            "--strategy",
            "kill-9,kill-15",
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.starts_with("error: variant kill-15: "), "{stderr}");
    assert!(
        stderr.contains("`shutdown[0].strategy`: a zone outage stops every process"),
        "{stderr}"
    );
}
