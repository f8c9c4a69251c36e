//! What one request's attempts cost: the single rule every routing path uses (per-request
//! Ribbon, the circuit breaker's stepping, the batched walks of [`run_batch`] and Spring Cloud
//! LoadBalancer's `walk_one` / `walk_many`).
//!
//! - An instance that serves accepts at once; the request's service time is modelled apart
//!   (`service-time-ms`), so an accepted attempt costs nothing here.
//! - A stopped process on a live host refuses the connection at once (`ConnectException`, a
//!   `SocketException`): no cost (FACTS.md §7, kill -9).
//! - A process whose host vanished (`[[shutdown]] host = "vanishes"`, once the process is gone)
//!   never answers the SYN: the attempt waits `ConnectTimeout` and fails with a
//!   `SocketTimeoutException` (FACTS.md §7 last line; `ribbon.ConnectTimeout`, §8). Both
//!   exceptions trip Ribbon's `ServerStats` circuit breaker alike (§8,
//!   `DefaultLoadBalancerRetryHandler` circuitRelated), so both are dead hits.
//! - A Hystrix-wrapped caller (Zuul, §8 `AbstractRibbonCommand#getHystrixTimeout`, or an
//!   explicit `hystrix-timeout-ms`) gives up once its attempts' cost reaches the command's
//!   timeout: the request fails (Hystrix answers with a timeout) even if a later retry would
//!   have been accepted, and the retries after that instant are never made. The caller waited
//!   the timeout, not the whole connect timeout, so the last attempt's delay is cut there.
//!
//! Attempts are stamped at the request's arrival: the retries' own delay does not move them.
//!
//! [`run_batch`]: super::super::round_robin::run_batch

use crate::scenario::{CallerConfig, RibbonConfig};

/// How an instance answers a connection attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The web server accepts the connection.
    Accepts,
    /// Nothing listens on a live host: connection refused at once.
    Refuses,
    /// The host is gone, or a partition drops the SYN: the attempt waits the connect timeout.
    TimesOut,
    /// The connection is accepted but nothing answers (a paused JVM): the attempt waits the
    /// read timeout.
    ReadTimesOut,
}

impl Answer {
    pub fn accepts(self) -> bool {
        self == Answer::Accepts
    }
}

/// The timeouts of one route's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AttemptCosts {
    /// `ribbon.ConnectTimeout` (Dalston 2000 ms, Edgware+ 1000 ms; FACTS.md §8).
    pub connect_timeout_ms: u64,
    /// `ribbon.ReadTimeout` (FACTS.md §8): what an attempt on a paused instance costs.
    pub read_timeout_ms: u64,
    /// The Hystrix command timeout wrapping each request, if any.
    pub hystrix_timeout_ms: Option<u64>,
}

impl AttemptCosts {
    /// The route's costs: `hystrix-timeout-ms` when set; otherwise, for a Zuul caller
    /// ([`CallPolicy::zuul_hystrix`](crate::scenario::CallPolicy)), Zuul's
    /// `AbstractRibbonCommand#getHystrixTimeout` default `(ReadTimeout + ConnectTimeout) *
    /// (MaxAutoRetries + 1) * (MaxAutoRetriesNextServer + 1)` from the route's Ribbon client
    /// config (FACTS.md §8: 4000 ms on Edgware+ defaults); otherwise no Hystrix timeout.
    pub fn of(caller: &CallerConfig, ribbon: &RibbonConfig) -> AttemptCosts {
        let formula = || {
            (ribbon.read_timeout_ms + ribbon.connect_timeout_ms)
                * (u64::from(ribbon.max_auto_retries) + 1)
                * (u64::from(ribbon.max_auto_retries_next_server) + 1)
        };
        AttemptCosts {
            connect_timeout_ms: ribbon.connect_timeout_ms,
            read_timeout_ms: ribbon.read_timeout_ms,
            hystrix_timeout_ms: caller
                .hystrix_timeout_ms
                .or_else(|| caller.is_zuul().then(formula)),
        }
    }

    /// One attempt of a request that has already waited `spent_ms` on earlier attempts
    /// (updated). See the module doc for the rule.
    pub fn attempt(self, spent_ms: &mut u64, answer: Answer) -> Attempted {
        let cost = match answer {
            Answer::Accepts => {
                return Attempted {
                    delay_ms: 0,
                    gave_up: false,
                };
            }
            Answer::Refuses => 0,
            Answer::TimesOut => self.connect_timeout_ms,
            Answer::ReadTimesOut => self.read_timeout_ms,
        };
        let mut delay_ms = cost;
        let mut gave_up = false;
        if let Some(timeout) = self.hystrix_timeout_ms
            && cost > 0
            && *spent_ms + cost >= timeout
        {
            delay_ms = timeout.saturating_sub(*spent_ms);
            gave_up = true;
        }
        *spent_ms += delay_ms;
        Attempted { delay_ms, gave_up }
    }
}

/// The outcome of one attempt that was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempted {
    /// How long the caller waited on it (0 unless it timed out).
    pub delay_ms: u64,
    /// The Hystrix timeout was reached during it: the request fails, no further attempt.
    pub gave_up: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eureka::RequestMode;
    use crate::eureka::route::tests::first_shutdowns;
    use crate::experiment::ShutdownOutcome;

    /// One caller at exactly 10 requests/s (`fixed-rate`) over two instances; svc-0 is killed
    /// with kill -9 at 300 s, its host staying or vanishing. Eight trials in `mode`.
    fn two_instances(release: &str, extra: &[&str], mode: RequestMode) -> Vec<ShutdownOutcome> {
        let text = format!(
            r#"
[simulation]
duration-s = 600
trials = 1
seed = 17
release = "{release}"
[server]
eureka.server.enable-self-preservation = false
[[app]]
name = "svc"
instances = 2
[[caller]]
name = "gateway"
calls = "svc"
rate-per-s = 10
fixed-rate = true
[[shutdown]]
instance = "svc-0"
at-s = 300
strategy = "kill-9"
"#
        );
        first_shutdowns(&text, extra, 500, mode)
    }

    const MODES: [RequestMode; 2] = [RequestMode::Batched, RequestMode::PerRequest];

    /// FACTS.md §7 (kill -9: refused on a live host, a connect timeout on a vanished one) and
    /// §8 (`ribbon.ConnectTimeout` 1000 ms from Edgware, Ribbon's 2000 ms on Dalston; the
    /// breaker counts `SocketTimeoutException` like `ConnectException`): the routing is the same
    /// whether the host stays or vanishes (same dead hits, errors and exposure for the same
    /// seed), and each dead hit on the vanished host costs exactly ConnectTimeout, none when it
    /// stays. With a next-server retry (a Feign caller: Ribbon's `LoadBalancerCommand`,
    /// FACTS.md §14) no request fails.
    #[test]
    fn vanished_host_dead_hit_costs_connect_timeout_fact_7_8() {
        for mode in MODES {
            for (release, connect_ms) in [("Hoxton", 1000), ("Edgware", 1000), ("Dalston", 2000)] {
                let feign = "caller[0].http-client=feign";
                let stays = two_instances(release, &[feign], mode);
                let gone = two_instances(release, &["shutdown[0].host=vanishes", feign], mode);
                for (s, g) in stays.iter().zip(&gone) {
                    assert!(g.dead_hits >= 3, "{release} {mode:?}: {g:?}");
                    assert_eq!(s.timeout_delay_ms, 0);
                    assert_eq!(
                        (g.dead_hits, g.errors, g.exposure_ms),
                        (s.dead_hits, s.errors, s.exposure_ms),
                        "{release} {mode:?}"
                    );
                    assert_eq!(g.errors, 0);
                    assert_eq!(
                        g.timeout_delay_ms,
                        connect_ms * g.dead_hits,
                        "{release} {mode:?}"
                    );
                }
            }
        }
    }

    /// FACTS.md §8, Zuul's `AbstractRibbonCommand#getHystrixTimeout` on Edgware+ defaults:
    /// (1000 + 1000) x (0 + 1) x (1 + 1) = 4000 ms (the formula holds whether Zuul retries or
    /// not). A Zuul caller that retries (spring-retry and `zuul.retryable`, FACTS.md §14): a
    /// request to the vanished host waits 1000 ms, then its next-server retry is accepted by the
    /// live one well within 4000 ms: no error, the same dead hits and delays as a caller that
    /// retries the same way without Hystrix (Feign).
    #[test]
    fn zuul_default_hystrix_timeout_lets_the_retry_succeed_fact_8() {
        for mode in MODES {
            let plain = two_instances(
                "Hoxton",
                &["shutdown[0].host=vanishes", "caller[0].http-client=feign"],
                mode,
            );
            let zuul = two_instances(
                "Hoxton",
                &[
                    "shutdown[0].host=vanishes",
                    "caller[0].zuul=true",
                    "caller[0].spring-retry=true",
                    "caller[0].zuul.retryable=true",
                ],
                mode,
            );
            for (p, z) in plain.iter().zip(&zuul) {
                assert!(z.dead_hits >= 3);
                assert_eq!(z.errors, 0, "{mode:?}");
                assert_eq!(z.timeout_delay_ms, 1000 * z.dead_hits);
                assert_eq!(p, z, "{mode:?}");
            }
        }
    }

    /// FACTS.md §8: `hystrix-timeout-ms = 500` replaces Zuul's formula. The connect timeout
    /// (1000 ms) reaches it during the first attempt, so every request whose first attempt goes
    /// to the vanished host fails and never makes its retry: errors = dead hits, and each caller
    /// waited 500 ms (the Hystrix timeout), not 1000.
    #[test]
    fn zuul_hystrix_timeout_below_connect_timeout_fails_every_vanished_first_attempt_fact_8() {
        for mode in MODES {
            for o in two_instances(
                "Hoxton",
                &[
                    "shutdown[0].host=vanishes",
                    "caller[0].zuul=true",
                    "caller[0].hystrix-timeout-ms=500",
                ],
                mode,
            ) {
                assert!(o.dead_hits >= 3, "{mode:?}: {o:?}");
                assert_eq!(o.errors, o.dead_hits, "{mode:?}: {o:?}");
                assert_eq!(o.timeout_delay_ms, 500 * o.dead_hits, "{mode:?}: {o:?}");
            }
        }
    }

    /// FACTS.md §7/§8: a refusal is free, a vanished host costs ConnectTimeout; Hystrix cuts the
    /// wait at its timeout and ends the request.
    #[test]
    fn connect_timeout_costs_and_hystrix_cuts_fact_7_8() {
        let plain = AttemptCosts {
            connect_timeout_ms: 1000,
            read_timeout_ms: 1000,
            hystrix_timeout_ms: None,
        };
        let mut spent = 0;
        assert_eq!(plain.attempt(&mut spent, Answer::Refuses).delay_ms, 0);
        assert_eq!(plain.attempt(&mut spent, Answer::TimesOut).delay_ms, 1000);
        assert_eq!(plain.attempt(&mut spent, Answer::TimesOut).delay_ms, 1000);
        assert_eq!(spent, 2000);
        let zuul = AttemptCosts {
            hystrix_timeout_ms: Some(1500),
            ..plain
        };
        let mut spent = 0;
        let first = zuul.attempt(&mut spent, Answer::TimesOut);
        assert_eq!((first.delay_ms, first.gave_up), (1000, false));
        let second = zuul.attempt(&mut spent, Answer::TimesOut);
        assert_eq!((second.delay_ms, second.gave_up), (500, true));
        assert_eq!(spent, 1500);
    }
}
