//! Tests of the process lifecycle beyond one departure: restarts, resume, CANCEL_OVERRIDE, the
//! health-check handler and rolling deploys. Each checks a timeline derived by hand from the
//! rule's source, with a fixed one-way latency `LAT` and no context-start spread, so the new
//! process's web server is ready exactly `2 LAT` (its constructor's fetch) + 3000 ms
//! (context-start-ms) after it starts, and registers UP one `LAT` later.

use super::*;
use crate::eureka::ids::ServerId;
use crate::eureka::status::InstanceStatus;

/// Process start -> UP register at the server (see the module doc).
const BOOT_TO_REGISTER: u64 = 2 * LAT + 3_000 + LAT;

fn registered(log: &Log, p: usize) -> Vec<(SimTime, InstanceStatus)> {
    log.iter()
        .filter_map(|(t, o)| match o {
            Observation::Registered {
                process, status, ..
            } if *process == p => Some((*t, *status)),
            _ => None,
        })
        .collect()
}

/// spring-cloud-netflix#2099 (FACTS.md §7): on Dalston /pause runs `DiscoveryClient#shutdown`
/// (the DELETE removes the instance), so /resume's UP reaches no listener: the instance stays
/// unregistered although it serves. From Edgware on, /pause only sets DOWN and /resume's UP goes
/// out as an on-demand register at once: it arrives at 300 s + 60 s + LAT.
#[test]
fn spring_cloud_netflix_2099_dalston_pause_cannot_resume() {
    let pause = svc0_stops!(300, "pause", "resume-s = 60");
    for (release, back_up) in [("Dalston", None), ("Edgware", Some(360_000 + LAT))] {
        let s = scenario(pause, &[&format!("simulation.release={release}")]);
        let p = process(&s, "svc-0");
        let log = record(&s, 3).0;
        let ups: Vec<u64> = registered(&log, p)
            .into_iter()
            .filter(|(t, status)| t.ms() > 300_000 && *status == InstanceStatus::Up)
            .map(|(t, _)| t.ms())
            .collect();
        assert_eq!(ups.first().copied(), back_up, "{release}");
        let stopped = times(&log, |o| *o == Observation::StoppedServing { process: p });
        assert!(
            stopped.is_empty(),
            "{release}: a resumed process keeps serving"
        );
        let cancelled = times(
            &log,
            |o| matches!(o, Observation::Cancelled { process, .. } if *process == p),
        );
        assert_eq!(
            cancelled.len(),
            usize::from(release == "Dalston"),
            "{release}"
        );
    }
}

/// svc-0 is set OUT_OF_SERVICE through /service-registry at 300 s and, 10 s later, exits by
/// `exit` with its override kept (no CANCEL_OVERRIDE); the same id restarts 20 s after the exit.
fn out_of_service_then_restart(exit: &str) -> Scenario {
    let text = format!(
        r#"
[[shutdown]]
instance = "svc-0"
at-s = 300
strategy = "service-registry"
wait-s = 10
cancel-override = false
then = "{exit}"
[[restart]]
instance = "svc-0"
down-s = 20
"#
    );
    scenario(&text, &[])
}

/// FACTS.md §6: OUT_OF_SERVICE set through /service-registry stays in the server's
/// overridden-status map while the lease lives. A kill -9 at 310 s leaves the lease (it expires
/// 90 s after its last renew at the earliest); the same-id restart 20 s after the exit registers
/// UP at 330 s + BOOT_TO_REGISTER, and OverrideExistsRule turns it into OUT_OF_SERVICE.
#[test]
fn out_of_service_survives_restart_before_lease_expiry() {
    let s = out_of_service_then_restart("kill-9");
    let p = process(&s, "svc-0");
    let log = record(&s, 4).0;
    // PUT at 300 s, answered at 300 s + 2 LAT; kill at + wait-s; restart 20 s later.
    let restart = 300_000 + 2 * LAT + 10_000 + 20_000;
    let after: Vec<(SimTime, InstanceStatus)> = registered(&log, p)
        .into_iter()
        .filter(|(t, _)| t.ms() > 300_000)
        .collect();
    assert_eq!(
        after.first().copied(),
        Some((
            SimTime(restart + BOOT_TO_REGISTER),
            InstanceStatus::OutOfService
        ))
    );
    let back_up = times(&log, |o| {
        *o == Observation::Registry {
            server: ServerId::FIRST,
            process: p,
            up: true,
        }
    });
    assert!(back_up.iter().all(|t| t.ms() < 300_000));
}

/// FACTS.md §6 / `AbstractInstanceRegistry#internalCancel`: a graceful exit's DELETE removes the
/// override, so the restarted process (same id) registers UP, 20 s after it exited (the DELETE's
/// reply, one LAT after the server's cancel) plus BOOT_TO_REGISTER.
#[test]
fn out_of_service_is_cleared_by_the_delete_before_a_restart() {
    let s = out_of_service_then_restart("kill-15");
    let p = process(&s, "svc-0");
    let log = record(&s, 5).0;
    let cancelled = times(
        &log,
        |o| matches!(o, Observation::Cancelled { process, .. } if *process == p),
    )[0];
    let after: Vec<(SimTime, InstanceStatus)> = registered(&log, p)
        .into_iter()
        .filter(|(t, _)| *t > cancelled)
        .collect();
    let expected = cancelled.ms() + LAT + 20_000 + BOOT_TO_REGISTER;
    assert_eq!(
        after.first().copied(),
        Some((SimTime(expected), InstanceStatus::Up))
    );
}

/// FACTS.md §6: CANCEL_OVERRIDE (`DELETE .../status`, no value) sets UNKNOWN; the instance's
/// next heartbeat fails with 404 (the renew is refused by the rules) and the client
/// re-registers with its own status UP, which arrives two latencies after that renew reached the
/// server, i.e. one heartbeat period (30 s + the previous renew's reply) after the last renew
/// that succeeded, plus 2 LAT.
#[test]
fn cancel_override_then_404_then_reregister_up() {
    let text = svc0_stops!(
        300,
        "service-registry",
        "wait-s = 60",
        "then = \"keep-running\""
    );
    let s = scenario(text, &[]);
    let p = process(&s, "svc-0");
    let log = record(&s, 6).0;
    let delete_at = 300_000 + 2 * LAT + 60_000 + LAT;
    let renews = times(
        &log,
        |o| matches!(o, Observation::Renewed { process, .. } if *process == p),
    );
    let last_ok = renews
        .iter()
        .copied()
        .rfind(|t| t.ms() < delete_at)
        .unwrap();
    let failed_renew = last_ok.ms() + LAT + 30_000 + LAT;
    assert!(failed_renew > delete_at && failed_renew - delete_at <= 30_000 + 2 * LAT);
    let back = registered(&log, p)
        .into_iter()
        .find(|(t, _)| t.ms() > delete_at);
    assert_eq!(
        back,
        Some((SimTime(failed_renew + 2 * LAT), InstanceStatus::Up))
    );
    let up = times(&log, |o| {
        *o == Observation::Registry {
            server: ServerId::FIRST,
            process: p,
            up: true,
        }
    });
    assert_eq!(up.last().copied(), Some(SimTime(failed_renew + 2 * LAT)));
}

/// spring-cloud-netflix#3923 (Hoxton.SR8): with `eureka.client.healthcheck.enabled`, the
/// replicator run that the shutdown's DOWN triggers starts with `refreshInstanceInfo`, whose
/// health check answers UP: the status flips back and the register carries UP, arriving LAT
/// after the SIGTERM. No DOWN reaches the server; only the DELETE (after the replicator's
/// two-phase stop) removes the instance. Without the flag, the DOWN arrives at the same instant.
#[test]
fn spring_cloud_netflix_3923_healthcheck_registers_up_during_shutdown() {
    for (flag, status) in [(true, InstanceStatus::Up), (false, InstanceStatus::Down)] {
        let s = scenario(
            KILL15,
            &[&format!("app[0].eureka.client.healthcheck.enabled={flag}")],
        );
        let p = process(&s, "svc-0");
        let log = record(&s, 7).0;
        let after: Vec<(SimTime, InstanceStatus)> = registered(&log, p)
            .into_iter()
            .filter(|(t, _)| t.ms() >= 300_000)
            .collect();
        assert_eq!(after, [(SimTime(300_000 + LAT), status)], "flag {flag}");
        let down = times(&log, |o| {
            *o == Observation::Registry {
                server: ServerId::FIRST,
                process: p,
                up: false,
            }
        });
        let cancelled = times(
            &log,
            |o| matches!(o, Observation::Cancelled { process, .. } if *process == p),
        );
        if flag {
            assert_eq!(down, cancelled, "UP until the DELETE");
        } else {
            assert_eq!(down, [SimTime(300_000 + LAT)]);
        }
    }
}

/// FACTS.md §2.4 (b), Netflix/eureka#1127: the 15-minute threshold update counts the instances
/// in the embedded client's cache that `filter-only-up-instances` keeps, so an OUT_OF_SERVICE
/// instance is not counted. 20 instances + gateway registered, one of them OUT_OF_SERVICE: count
/// 20 -> expected 20, threshold (int)(20 * 2 * 0.85) = 34; without the filter count 21 -> 35.
#[test]
fn threshold_update_counts_only_up_instances_of_the_embedded_cache() {
    let oos = svc0_stops!(
        200,
        "service-registry",
        "wait-s = 600",
        "then = \"keep-running\""
    );
    let threshold = |filter: bool| {
        let s = scenario(
            oos,
            &[
                "server.eureka.server.renewal-threshold-update-interval-ms=300000",
                "server.eureka.client.fetch-registry=true",
                &format!("server.eureka.client.filter-only-up-instances={filter}"),
            ],
        );
        threshold_after(&record(&s, 8).0, 400_000)
    };
    assert_eq!(threshold(true), 34);
    assert_eq!(threshold(false), 35);
}

/// A restart under a new instance id is a new lease (expected clients + 1, FACTS.md §2.4) and
/// registers UP at its start + BOOT_TO_REGISTER, while the old lease is left to expire.
#[test]
fn restart_with_a_new_instance_id_registers_a_new_lease() {
    let text = KILL9.to_string()
        + r#"[[restart]]
instance = "svc-0"
at-s = 320
new-instance-id = true
"#;
    let s = scenario(&text, &[]);
    let new = process(&s, "svc-0@1");
    let log = record(&s, 9).0;
    assert_eq!(
        registered(&log, new),
        [(SimTime(320_000 + BOOT_TO_REGISTER), InstanceStatus::Up)]
    );
}

/// Same scenario and seed, same observations, with restarts and a deploy.
#[test]
fn lifecycle_trials_are_deterministic() {
    let text = KILL9.to_string()
        + r#"[[restart]]
instance = "svc-0"
down-s = 5
[[deploy]]
app = "other"
at-s = 200
strategy = "kill-15"
[[app]]
name = "other"
instances = 3
"#;
    let s = scenario(&text, &[]);
    assert_eq!(record(&s, 11).0, record(&s, 11).0);
}
