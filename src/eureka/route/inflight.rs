//! Requests in flight on an instance when it stops serving (`[[app]] service-time-ms`).
//!
//! The service time `S` is fixed, so a request accepted at `a` is in flight over `[a, a + S)`:
//! at an instant `t` the requests in flight on `p` are exactly the attempts `p` accepted with
//! an arrival in `(t - S, t]`. (A fixed time is the simplest rule that is exact in batched mode;
//! an exponential one would need each request's own draw, i.e. one event per request.)
//!
//! Per-request mode records every accepted request with its instant. Batched mode records, for
//! each counted span of the last `S`, what is needed to answer the question later, without
//! drawing anything up front:
//!
//! - which server accepted request `i` of the span ([`Accepted`]): the routing state is constant
//!   over the span, so the accepting server is a deterministic, eventually periodic function of
//!   `i` (the round-robin walk from the span's cursor), stored as a prefix and a cycle;
//! - the instants of the requests ([`SpanTimes`]): read from the last request backwards, from
//!   the uniform order statistics of a Poisson span (given their number, arrivals are uniform
//!   over the span) or the grid of a fixed-rate one.
//!
//! At a stop at `t`, every span ending after `t - S` is read backwards until an arrival at or
//! before `t - S`: the count of its requests accepted by `p` is then exact in distribution, and
//! the instants drawn are kept, so later questions about the same span agree with earlier ones.
//! The cost is one step per request in the window `S`, only when a process stops.

use std::collections::HashMap;

use super::super::ids::ProcessId;
use super::Route;
use super::arrivals::SpanTimes;

/// Tomcat's `GracefulShutdown#doShutdown` checks for active requests every 50 ms
/// (`Thread.sleep(50)` between `isActive` checks; Spring Boot 2.3+).
pub const GRACEFUL_POLL_MS: u64 = 50;

/// Which server accepted request `i` (1-based) of a span, `None` when it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    Periodic {
        prefix: Vec<Option<ProcessId>>,
        cycle: Vec<Option<ProcessId>>,
    },
}

impl Accepted {
    pub fn get(&self, i: u64) -> Option<ProcessId> {
        let Accepted::Periodic { prefix, cycle } = self;
        let k = (i - 1) as usize;
        if k < prefix.len() {
            prefix[k]
        } else if cycle.is_empty() {
            None
        } else {
            cycle[(k - prefix.len()) % cycle.len()]
        }
    }

    /// Plain round robin over `list` from position `start`: request `i` goes to
    /// `list[(start + i - 1) % len]` and is accepted there.
    pub fn rotation(list: &[ProcessId], start: usize) -> Accepted {
        let n = list.len();
        Accepted::Periodic {
            prefix: Vec::new(),
            cycle: (0..n).map(|k| Some(list[(start + k) % n])).collect(),
        }
    }

    /// The walk of a deterministic automaton: `step` runs one request from `state` (advancing
    /// it) and returns the server that accepted it; states repeat modulo `modulo`, so the walk is
    /// a prefix then a cycle, found within `modulo + 1` steps.
    pub fn walk(
        mut state: u64,
        modulo: u64,
        mut step: impl FnMut(&mut u64) -> Option<ProcessId>,
    ) -> Accepted {
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut out = Vec::new();
        loop {
            let key = state % modulo.max(1);
            if let Some(&k) = seen.get(&key) {
                let cycle = out.split_off(k);
                return Accepted::Periodic { prefix: out, cycle };
            }
            seen.insert(key, out.len());
            out.push(step(&mut state));
        }
    }

    fn any(&self) -> bool {
        let Accepted::Periodic { prefix, cycle } = self;
        prefix.iter().chain(cycle).any(Option::is_some)
    }
}

/// Requests of one route that may still be in flight.
#[derive(Debug, Clone)]
pub enum Served {
    /// One request at this instant (µs), accepted by this server.
    One { at_us: f64, by: ProcessId },
    /// `requests` counted requests of a span ending at `until_us`.
    Span {
        until_us: f64,
        requests: u64,
        times: SpanTimes,
        accepted: Accepted,
    },
}

impl Served {
    fn until_us(&self) -> f64 {
        match *self {
            Served::One { at_us, .. } => at_us,
            Served::Span { until_us, .. } => until_us,
        }
    }
}

impl Route {
    /// Whether requests of this route can be in flight (the called app has a service time).
    pub(in crate::eureka) fn tracks_in_flight(&self) -> bool {
        self.service_us > 0.0
    }

    fn keep_served(&mut self, served: Served) {
        let horizon = served.until_us() - self.service_us;
        while self.served.front().is_some_and(|s| s.until_us() <= horizon) {
            self.served.pop_front();
        }
        self.served.push_back(served);
    }

    /// One request at `at_us` accepted by `by` (if any).
    pub(super) fn note_served_one(&mut self, at_us: f64, by: Option<ProcessId>) {
        if let (true, Some(by)) = (self.tracks_in_flight(), by) {
            self.keep_served(Served::One { at_us, by });
        }
    }

    /// A counted span (batched mode).
    pub(super) fn note_served_span(
        &mut self,
        until_us: f64,
        requests: u64,
        times: SpanTimes,
        accepted: Accepted,
    ) {
        if self.tracks_in_flight() && requests > 0 && accepted.any() {
            self.keep_served(Served::Span {
                until_us,
                requests,
                times,
                accepted,
            });
        }
    }

    /// The requests of this route accepted by `p` with an arrival after `cut_us`, and the
    /// latest such arrival.
    pub(in crate::eureka) fn accepted_after(
        &mut self,
        p: ProcessId,
        cut_us: f64,
    ) -> (u64, Option<f64>) {
        let mut count = 0;
        let mut latest: Option<f64> = None;
        let rng = &mut self.rng;
        for served in self.served.iter_mut().rev() {
            if served.until_us() <= cut_us {
                break;
            }
            match served {
                Served::One { at_us, by } => {
                    if *by == p {
                        count += 1;
                        latest = Some(latest.map_or(*at_us, |l: f64| l.max(*at_us)));
                    }
                }
                Served::Span {
                    requests,
                    times,
                    accepted,
                    ..
                } => {
                    for i in (1..=*requests).rev() {
                        let at = times.time_of(rng, i);
                        if at <= cut_us {
                            break;
                        }
                        if accepted.get(i) == Some(p) {
                            count += 1;
                            latest = Some(latest.map_or(at, |l: f64| l.max(at)));
                        }
                    }
                }
            }
        }
        (count, latest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::RequestMode;
    use crate::eureka::route::tests::first_shutdowns;
    use crate::experiment::ShutdownOutcome;

    /// One fixed-rate caller (20 requests/s, a grid 50 ms apart at a random phase) calling a
    /// single instance with `service-time-ms = S`; it departs at 300 s.
    fn one_instance(strategy: &str, extra: &[&str], mode: RequestMode) -> Vec<ShutdownOutcome> {
        let text = format!(
            r#"
[simulation]
duration-s = 500
trials = 1
seed = 11
release = "Hoxton"
[[app]]
name = "svc"
instances = 1
[[caller]]
name = "gateway"
calls = "svc"
rate-per-s = 20
fixed-rate = true
[[shutdown]]
instance = "svc-0"
at-s = 300
strategy = "{strategy}"
"#
        );
        first_shutdowns(&text, extra, 1000, mode)
    }

    /// Hand-derived: at rate R on a grid and one instance, the window `(t - S, t]` holds
    /// exactly `R * S` arrivals (a half-open window of a whole number of gaps), all accepted by
    /// the one instance, so a kill -9 fails `20/s * 1 s = 20` in-flight requests, and an
    /// immediate kill -15 (Hoxton's Boot 2.2/2.3 default) as many. With `n` instances in a
    /// stable round robin each gets `R * S / n` of them (floor or ceil when not whole).
    #[test]
    fn kill_fails_exactly_rate_times_service_time() {
        for mode in [RequestMode::Batched, RequestMode::PerRequest] {
            for strategy in ["kill-9", "kill-15"] {
                for o in one_instance(strategy, &["app[0].service-time-ms=1000"], mode) {
                    assert_eq!(o.inflight_failed, 20, "{strategy} {mode:?}");
                }
                for o in one_instance(strategy, &["app[0].service-time-ms=125"], mode) {
                    // 0.125 s * 20/s = 2.5: 2 or 3 by the phase of the grid.
                    assert!((2..=3).contains(&o.inflight_failed), "{o:?}");
                }
            }
        }
        // service-time-ms = 0 (the default): nothing is ever in flight.
        for o in one_instance("kill-9", &[], RequestMode::Batched) {
            assert_eq!(o.inflight_failed, 0);
        }
    }

    /// Graceful shutdown: in-flight requests finish within the phase (S = 1 s < 30 s), so none
    /// fails (the DELETE waits for them, after the DOWN that callers follow). With S = 40 s and the
    /// 30 s timeout, the requests still running at the timeout fail: those that arrived in the
    /// last 40 - 30 = 10 s before the stop, 20/s * 10 s = 200.
    #[test]
    fn graceful_shutdown_lets_in_flight_requests_finish() {
        for mode in [RequestMode::Batched, RequestMode::PerRequest] {
            let immediate = one_instance(
                "kill-15",
                &[
                    "app[0].service-time-ms=1000",
                    "clients.server.shutdown=immediate",
                ],
                mode,
            );
            let graceful = one_instance(
                "kill-15",
                &[
                    "app[0].service-time-ms=1000",
                    "clients.server.shutdown=graceful",
                ],
                mode,
            );
            for (i, g) in immediate.iter().zip(&graceful) {
                assert_eq!(g.inflight_failed, 0);
                assert_eq!(i.inflight_failed, 20);
                // The DOWN goes out before the graceful phase, so callers see the same timeline.
                assert_eq!(i.t_stop_ms, g.t_stop_ms);
                assert_eq!(i.server_removed_ms, g.server_removed_ms);
            }
            for o in one_instance(
                "kill-15",
                &[
                    "app[0].service-time-ms=40000",
                    "clients.server.shutdown=graceful",
                ],
                mode,
            ) {
                assert_eq!(o.inflight_failed, 200, "{mode:?}");
            }
        }
        // From 2024.0 (Boot 3.4) graceful is the default.
        let text_release = ["simulation.release=2024.0", "app[0].service-time-ms=1000"];
        for o in one_instance("kill-15", &text_release, RequestMode::Batched) {
            assert_eq!(o.inflight_failed, 0);
        }
        for o in one_instance("kill-9", &text_release, RequestMode::Batched) {
            assert_eq!(o.inflight_failed, 20);
        }
    }

    /// Kubernetes' grace period counts from the preStop hook: prestop 25 s, grace 30 s, so the
    /// SIGTERM comes at +25 s and the SIGKILL at +30 s, 5 s into a graceful phase that would
    /// time out after 30 s. With S = 40 s at 20 requests/s: the phase's start fails the requests
    /// that would still run at its timeout (arrived in the last 40 - 30 = 10 s: 200); the SIGKILL
    /// 5 s later fails every request still running then (arrived after -35 s: 700), 500 more.
    /// With a grace long enough for the phase, only the 200.
    #[test]
    fn sigkill_during_the_graceful_phase_fails_the_requests_still_running() {
        let base = [
            "app[0].service-time-ms=40000",
            "clients.server.shutdown=graceful",
            "shutdown[0].prestop-s=25",
        ];
        for mode in [RequestMode::Batched, RequestMode::PerRequest] {
            let mut cut = base.to_vec();
            cut.push("shutdown[0].termination-grace-period-s=30");
            for o in one_instance("kill-15", &cut, mode) {
                assert_eq!(o.inflight_failed, 700, "{mode:?}");
            }
            let mut long = base.to_vec();
            long.push("shutdown[0].termination-grace-period-s=120");
            for o in one_instance("kill-15", &long, mode) {
                assert_eq!(o.inflight_failed, 200, "{mode:?}");
            }
        }
    }

    /// preStop: the kill -15 sequence starts `prestop-s` later; the instance serves meanwhile.
    #[test]
    fn prestop_delays_the_whole_kill_15() {
        let plain = one_instance("kill-15", &[], RequestMode::Batched);
        let delayed = one_instance(
            "kill-15",
            &[
                "shutdown[0].prestop-s=20",
                "shutdown[0].termination-grace-period-s=60",
            ],
            RequestMode::Batched,
        );
        for (a, b) in plain.iter().zip(&delayed) {
            assert_eq!(a.t_stop_ms, Some(300_000));
            assert_eq!(b.t_stop_ms, Some(320_000));
        }
        // A grace period shorter than the hook: SIGKILL 2 s after it (no SIGTERM handling).
        for o in one_instance(
            "kill-15",
            &[
                "shutdown[0].prestop-s=40",
                "shutdown[0].termination-grace-period-s=30",
            ],
            RequestMode::Batched,
        ) {
            assert_eq!(o.t_stop_ms, Some(340_000));
        }
    }

    #[test]
    fn periodic_walk_finds_prefix_and_cycle() {
        // States 0 -> 1 -> 2 -> 1 ...: prefix [a], cycle [b, c].
        let a = Accepted::walk(0, 10, |s| {
            let out = Some(*s as usize + 100);
            *s = if *s == 2 { 1 } else { *s + 1 };
            out
        });
        assert_eq!(
            a,
            Accepted::Periodic {
                prefix: vec![Some(100)],
                cycle: vec![Some(101), Some(102)]
            }
        );
        assert_eq!(a.get(1), Some(100));
        assert_eq!(a.get(4), Some(101));
        assert_eq!(a.get(5), Some(102));
        let r = Accepted::rotation(&[7, 8, 9], 2);
        assert_eq!((r.get(1), r.get(2), r.get(4)), (Some(9), Some(7), Some(9)));
    }
}
