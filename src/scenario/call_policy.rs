//! The retry and `ServerStats` policy a caller's HTTP stack (`[[caller]] http-client`,
//! [`HttpClient`]) gets on a given balancer and release (FACTS.md §8, §9, §14).
//!
//! The rules read a [`CallPolicy`], resolved once per caller and called app by
//! [`CallerConfig::policy`]; nothing below `scenario` asks which client a caller is.
//!
//! What each stack does with a refused connection (read from the sources named):
//!
//! | stack | balancer | retry | `ServerStats` failures per refused attempt |
//! |---|---|---|---|
//! | Zuul | Ribbon | only with spring-retry **and** `zuul.retryable = true` (default false): `RetryableRibbonLoadBalancingHttpClient#isClientRetryable` → `AbstractRibbonCommand#run` calls `execute` under a `RibbonLoadBalancedRetryPolicy`; otherwise `executeWithLoadBalancer` with `getRequestSpecificRetryHandler` = `RequestSpecificRetryHandler(false, false, …)` (no retry on the same or the next server) | 1 (`LoadBalancerCommand` → `noteRequestCompletion`; with the retry, `RibbonLoadBalancedRetryPolicy#registerThrowable` → `updateServerInstanceStats`) |
//! | RestTemplate | Ribbon | with spring-retry and `spring.cloud.loadbalancer.retry.enabled` (default true): `RetryLoadBalancerInterceptor` + `RibbonLoadBalancedRetryPolicy` (`ribbon.*` counts, GET or `OkToRetryOnAllOperations`); otherwise `LoadBalancerInterceptor`, no retry | 2 with the retry interceptor (`RibbonLoadBalancerClient#execute` → `RibbonStatsRecorder#recordStats`, then `registerThrowable` → `updateServerInstanceStats`; from SCN 1.4.3 = Edgware.SR2), else 1 |
//! | Feign | Ribbon | without spring-retry: Ribbon's own `LoadBalancerCommand` with `FeignLoadBalancer#getRequestSpecificRetryHandler` = `(true, GET or OkToRetryOnAllOperations, …)`: connection errors retried for every method, `ribbon.*` counts; with spring-retry: `RetryableFeignLoadBalancer` + `RibbonLoadBalancedRetryPolicy` (GET or OkToRetryOnAllOperations). Feign's own `Retryer` is `NEVER_RETRY` (`FeignClientsConfiguration#feignRetryer`) | 1 |
//! | WebClient | Ribbon (Hoxton) | none: `LoadBalancerExchangeFilterFunction` only calls `choose` | 0: `choose` records nothing, the breaker never trips |
//! | Gateway | Ribbon (Finchley–Hoxton) | none without a `Retry` filter: `LoadBalancerClientFilter#choose` | 0 |
//! | RestTemplate, Feign | LoadBalancer | with spring-retry and `spring.cloud.loadbalancer.retry.enabled` (default true): `RetryLoadBalancerInterceptor` / `RetryableFeignBlockingLoadBalancerClient` + `BlockingLoadBalancedRetryPolicy` (`spring.cloud.loadbalancer.retry.*`); otherwise none | (no breaker) |
//! | WebClient | LoadBalancer | only when `spring.cloud.loadbalancer.retry.enabled = true` is **set** (2020.0+): `ReactorLoadBalancerClientAutoConfiguration` creates `RetryableLoadBalancerExchangeFilterFunction` with `havingValue = "true"` and no `matchIfMissing`, the plain `ReactorLoadBalancerExchangeFilterFunction` otherwise | (no breaker) |
//! | Gateway | LoadBalancer | none without a `Retry` filter (`ReactiveLoadBalancerClientFilter`) | (no breaker) |
//!
//! spring-retry is in none of the starters (spring-cloud-starter-netflix-zuul, -ribbon,
//! -eureka-client, spring-cloud-starter-loadbalancer), so `spring-retry` defaults to false: SCN
//! reference "Retrying Failed Requests": "you need to include Spring Retry on your application's
//! classpath".

use super::model::{
    CallTarget, CallerConfig, HttpClient, HttpMethod, LoadBalancerConfig, RibbonConfig,
};
use super::release::{Release, Train};

/// How long after an attempt is sent its refusal is recorded, on the clock of the caller's sends:
/// `noteRequestCompletion` runs when the `ConnectException` has come back, one connect round trip
/// after the send, and stamps `lastConnectionFailedTimestamp` with `System.currentTimeMillis()`
/// then (`LoadBalancerContext#noteRequestCompletion`,
/// `ServerStats#incrementSuccessiveConnectionFailureCount`). On the conformance rig's loopback
/// 153 of 175 refusals were stamped 0–2 ms after their send (conformance/README.md, the Ribbon
/// caller); the model takes 1 ms, which also keeps a blackout from ending exactly on the send
/// instant of a later request of a fixed-rate caller whose period divides it (the real plain
/// RestTemplate then still sees the server tripped: of 24 probes after a blackout, none came on
/// that instant).
pub const REFUSAL_RECORDED_AFTER_MS: u64 = 1;

/// The same for a RestTemplate under spring-retry: `RetryLoadBalancerInterceptor` builds a
/// `RibbonLoadBalancedRetryPolicy` and a `RetryTemplate` for every request before its first
/// `choose`, so each request chooses later after its send than a refusal takes to be stamped:
/// relative to the sends the refusal is stamped at its own send instant, and a blackout that ends
/// exactly on a later request's send lets that request choose the server again. Measured on the
/// real stack (Hoxton.SR12, 20 requests/s, whole-second blackouts): 8 of 42 probes after a
/// blackout came on exactly that instant, which a still-tripped server never allows, and the
/// probes came 81 ms after the blackout's end on the mean against 124–147 ms with the 1 ms stamp
/// (conformance cell resttemplate-retry-kill-9).
pub const RETRY_TEMPLATE_REFUSAL_RECORDED_AFTER_MS: u64 = 0;

/// How one caller's requests to one app are retried and accounted (the rules read only this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPolicy {
    /// Servers tried per request: 1 + retries on the next server (1: no next-server retry).
    pub servers: u32,
    /// Attempts on each server: 1 + retries on the same server.
    pub same: u32,
    /// Spring Cloud LoadBalancer's `avoid-previous-instance` (`RetryAwareServiceInstanceListSupplier`).
    pub avoid_previous: bool,
    /// `ServerStats` successive connection failures recorded per refused or timed-out attempt
    /// (Ribbon only): 0 when the stack only calls `choose` (the breaker never trips), 2 for
    /// RestTemplate with the retry interceptor.
    pub failures_per_refusal: u32,
    /// [`REFUSAL_RECORDED_AFTER_MS`], or [`RETRY_TEMPLATE_REFUSAL_RECORDED_AFTER_MS`] for a
    /// RestTemplate with the retry interceptor.
    pub refusal_recorded_after_ms: u64,
    /// Zuul's Hystrix command (`AbstractRibbonCommand#getHystrixTimeout`) wraps each request.
    pub zuul_hystrix: bool,
    /// The class that retries, if any (for `explain` and tests).
    pub retrier: Option<&'static str>,
}

impl CallPolicy {
    /// No retry, one failure per refusal.
    pub const NO_RETRY: CallPolicy = CallPolicy {
        servers: 1,
        same: 1,
        avoid_previous: false,
        failures_per_refusal: 1,
        refusal_recorded_after_ms: REFUSAL_RECORDED_AFTER_MS,
        zuul_hystrix: false,
        retrier: None,
    };

    /// Whether a refused first attempt can be saved by a retry.
    pub fn retries(&self) -> bool {
        self.servers > 1 || self.same > 1
    }

    /// `RibbonLoadBalancedRetryPolicy#canRetry` (GET or `OkToRetryOnAllOperations`) with
    /// `canRetrySameServer` `sameServerCount < MaxAutoRetries` and `canRetryNextServer`
    /// `nextServerCount <= MaxAutoRetriesNextServer` (FACTS.md §8), or Ribbon's own
    /// `LoadBalancerCommand` when `any_method` (Feign: `okToRetryOnConnectErrors = true`).
    fn ribbon(ribbon: &RibbonConfig, get: bool, any_method: bool, retrier: &'static str) -> Self {
        if get || any_method || ribbon.ok_to_retry_on_all_operations {
            CallPolicy {
                servers: ribbon.max_auto_retries_next_server + 1,
                same: ribbon.max_auto_retries + 1,
                retrier: Some(retrier),
                ..CallPolicy::NO_RETRY
            }
        } else {
            CallPolicy::NO_RETRY
        }
    }

    /// `BlockingLoadBalancedRetryPolicy` (and the reactive one): GET unless
    /// `retry-on-all-operations`, `max-retries-on-same-service-instance`,
    /// `max-retries-on-next-service-instance`, `avoid-previous-instance` (FACTS.md §9).
    fn load_balancer(config: &LoadBalancerConfig, get: bool, retrier: &'static str) -> Self {
        if get || config.retry_on_all_operations {
            CallPolicy {
                servers: config.max_retries_on_next_service_instance + 1,
                same: config.max_retries_on_same_service_instance + 1,
                avoid_previous: config.avoid_previous_instance,
                retrier: Some(retrier),
                ..CallPolicy::NO_RETRY
            }
        } else {
            CallPolicy::NO_RETRY
        }
    }
}

impl CallerConfig {
    /// The policy of this caller's requests to `target` on `release` (see the module doc's
    /// table for every rule and its source): its balancer's ([`super::BalancerKind::policy`]),
    /// with Zuul's Hystrix command on either.
    pub fn policy(&self, target: &CallTarget, release: &Release) -> CallPolicy {
        let mut policy = self.balancer(release).policy(self, target, release);
        policy.zuul_hystrix = self.http_client == HttpClient::Zuul;
        policy
    }

    /// The module doc's Ribbon rows.
    pub(super) fn ribbon_policy(&self, target: &CallTarget, release: &Release) -> CallPolicy {
        let get = self.method == HttpMethod::Get;
        let ribbon = &target.ribbon;
        match self.http_client {
            HttpClient::Zuul if self.spring_retry && self.zuul_retryable => {
                CallPolicy::ribbon(ribbon, get, false, "RibbonLoadBalancedRetryPolicy")
            }
            HttpClient::Zuul => CallPolicy::NO_RETRY,
            HttpClient::RestTemplate if self.blocking_retry() => CallPolicy {
                failures_per_refusal: if release.retry_policy_records_failures() {
                    2
                } else {
                    1
                },
                refusal_recorded_after_ms: RETRY_TEMPLATE_REFUSAL_RECORDED_AFTER_MS,
                ..CallPolicy::ribbon(ribbon, get, false, "RibbonLoadBalancedRetryPolicy")
            },
            HttpClient::RestTemplate => CallPolicy::NO_RETRY,
            HttpClient::Feign if self.spring_retry => {
                CallPolicy::ribbon(ribbon, get, false, "RibbonLoadBalancedRetryPolicy")
            }
            HttpClient::Feign => CallPolicy::ribbon(ribbon, get, true, "LoadBalancerCommand"),
            HttpClient::WebClient | HttpClient::Gateway => CallPolicy {
                failures_per_refusal: 0,
                ..CallPolicy::NO_RETRY
            },
        }
    }

    /// The module doc's LoadBalancer rows.
    pub(super) fn load_balancer_policy(&self, _: &CallTarget, release: &Release) -> CallPolicy {
        let get = self.method == HttpMethod::Get;
        let lb = &self.client.load_balancer;
        match self.http_client {
            HttpClient::Zuul if self.spring_retry && self.zuul_retryable => {
                CallPolicy::load_balancer(lb, get, "BlockingLoadBalancedRetryPolicy")
            }
            HttpClient::RestTemplate | HttpClient::Feign if self.blocking_retry() => {
                CallPolicy::load_balancer(lb, get, "BlockingLoadBalancedRetryPolicy")
            }
            HttpClient::WebClient
                if release.train >= Train::Y2020 && lb.retry_enabled == Some(true) =>
            {
                CallPolicy::load_balancer(lb, get, "RetryableLoadBalancerExchangeFilterFunction")
            }
            _ => CallPolicy::NO_RETRY,
        }
    }

    /// `spring.cloud.loadbalancer.retry.enabled`: default true for the blocking clients, which
    /// retry with spring-retry on the classpath.
    fn blocking_retry(&self) -> bool {
        self.spring_retry && self.client.load_balancer.retry_enabled.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::scenario::fixture::{ScenarioText, parse};

    fn scenario(release: &str, caller: &[&str], overrides: &[&str]) -> Scenario {
        let text = ScenarioText::simulation(&[&format!("release = \"{release}\"")])
            .fleet(2, caller)
            .text();
        let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
        parse(&text, &overrides).unwrap_or_else(|e| panic!("{e}"))
    }

    fn policy(release: &str, caller: &[&str]) -> CallPolicy {
        let s = scenario(release, caller, &[]);
        let c = &s.callers[0];
        c.policy(&c.calls[0], &s.simulation.release)
    }

    /// `HttpClient::default_for`: Zuul up to Hoxton, Spring Cloud Gateway from 2020.0 (SCN 3.0
    /// removed Zuul; FACTS.md §0.1).
    #[test]
    fn a_caller_defaults_to_the_trains_gateway() {
        for train in Train::ALL {
            let s = scenario(train.name(), &[], &[]);
            let expected = if train < Train::Y2020 {
                HttpClient::Zuul
            } else {
                HttpClient::Gateway
            };
            assert_eq!(s.callers[0].http_client, expected, "{train}");
        }
    }

    /// FACTS.md §14 / the module table: no stack retries by default, Zuul keeps its Hystrix
    /// command, and only a RestTemplate with spring-retry records a refusal twice.
    #[test]
    fn each_stack_gets_its_sources_retry_and_accounting_fact_14() {
        let zuul = policy("Hoxton", &[]);
        assert!(!zuul.retries() && zuul.zuul_hystrix && zuul.failures_per_refusal == 1);
        let zuul_retry = policy("Hoxton", &["zuul.retryable = true", "spring-retry = true"]);
        assert_eq!((zuul_retry.servers, zuul_retry.same), (2, 1));
        assert_eq!(zuul_retry.failures_per_refusal, 1);
        assert!(!policy("Hoxton", &["zuul.retryable = true"]).retries());
        assert!(!policy("Hoxton", &["http-client = \"rest-template\""]).retries());
        let rest = policy(
            "Hoxton",
            &["http-client = \"rest-template\"", "spring-retry = true"],
        );
        assert_eq!((rest.servers, rest.failures_per_refusal), (2, 2));
        assert_eq!(rest.retrier, Some("RibbonLoadBalancedRetryPolicy"));
        for (release, failures) in [("Dalston", 1), ("Edgware.SR1", 1), ("Edgware.SR2", 2)] {
            let p = policy(
                release,
                &["http-client = \"rest-template\"", "spring-retry = true"],
            );
            assert_eq!(p.failures_per_refusal, failures, "{release}");
        }
        // spring.cloud.loadbalancer.retry.enabled = false: NeverRetryPolicy, one record.
        let never = policy(
            "Hoxton",
            &[
                "http-client = \"rest-template\"",
                "spring-retry = true",
                "spring.cloud.loadbalancer.retry.enabled = false",
            ],
        );
        assert_eq!((never.servers, never.failures_per_refusal), (1, 1));
        // Only the retry interceptor chooses after its refusals are stamped (the constants' docs).
        let plain = policy("Hoxton", &["http-client = \"rest-template\""]);
        assert_eq!(
            (
                plain.refusal_recorded_after_ms,
                rest.refusal_recorded_after_ms
            ),
            (
                REFUSAL_RECORDED_AFTER_MS,
                RETRY_TEMPLATE_REFUSAL_RECORDED_AFTER_MS
            )
        );
        assert_eq!(never.refusal_recorded_after_ms, REFUSAL_RECORDED_AFTER_MS);
        // Feign on Ribbon: LoadBalancerCommand retries connection errors for every method.
        let feign_post = policy("Hoxton", &["http-client = \"feign\"", "method = \"POST\""]);
        assert_eq!(feign_post.servers, 2);
        assert_eq!(feign_post.retrier, Some("LoadBalancerCommand"));
        let feign_retry_post = policy(
            "Hoxton",
            &[
                "http-client = \"feign\"",
                "method = \"POST\"",
                "spring-retry = true",
            ],
        );
        assert!(
            !feign_retry_post.retries(),
            "RibbonLoadBalancedRetryPolicy#canRetry: GET"
        );
        for client in ["web-client", "gateway"] {
            let p = policy("Hoxton", &[&format!("http-client = \"{client}\"")]);
            assert_eq!((p.servers, p.failures_per_refusal), (1, 0), "{client}");
        }
        // Spring Cloud LoadBalancer (2020.0): the gateway and a WebClient do not retry unless
        // told to; a RestTemplate or Feign with spring-retry does.
        assert!(!policy("2020.0", &[]).retries());
        assert!(!policy("2020.0", &["http-client = \"web-client\""]).retries());
        let web_retry = policy(
            "2020.0",
            &[
                "http-client = \"web-client\"",
                "spring.cloud.loadbalancer.retry.enabled = true",
            ],
        );
        assert_eq!(
            web_retry.retrier,
            Some("RetryableLoadBalancerExchangeFilterFunction")
        );
        assert!(web_retry.avoid_previous);
        for client in ["rest-template", "feign"] {
            let key = format!("http-client = \"{client}\"");
            assert!(!policy("2021.0", &[&key]).retries(), "{client}");
            let p = policy("2021.0", &[&key, "spring-retry = true"]);
            assert_eq!(
                p.retrier,
                Some("BlockingLoadBalancedRetryPolicy"),
                "{client}"
            );
        }
    }

    /// `zuul` is an alias of `http-client`: true is Zuul; false is the train's default, or
    /// RestTemplate where that is Zuul; contradicting `http-client` is an error (exit 2).
    #[test]
    fn zuul_is_an_alias_of_http_client() {
        let client =
            |release: &str, caller: &[&str]| scenario(release, caller, &[]).callers[0].http_client;
        assert_eq!(client("2021.0", &["zuul = true"]), HttpClient::Zuul);
        assert_eq!(
            client("Hoxton", &["zuul = false"]),
            HttpClient::RestTemplate
        );
        assert_eq!(client("2021.0", &["zuul = false"]), HttpClient::Gateway);
        assert_eq!(
            client("Hoxton", &["zuul = false", "http-client = \"feign\""]),
            HttpClient::Feign
        );
        let text = ScenarioText::simulation(&[])
            .fleet(2, &["zuul = true", "http-client = \"feign\""])
            .text();
        let e = parse(&text, &[]).unwrap_err().to_string();
        assert!(e.contains("contradicts"), "{e}");
        let warned = scenario("2021.0", &["zuul = true"], &[]);
        assert!(
            warned
                .warnings
                .iter()
                .any(|w| w.contains("Zuul gateway on Spring Cloud LoadBalancer"))
        );
        let warned = scenario(
            "Hoxton",
            &["http-client = \"feign\"", "zuul.retryable = true"],
            &[],
        );
        assert!(
            warned
                .warnings
                .iter()
                .any(|w| w.contains("zuul.retryable` has no effect"))
        );
        let warned = scenario("Edgware", &["http-client = \"gateway\""], &[]);
        assert!(
            warned
                .warnings
                .iter()
                .any(|w| w.contains("first shipped with Finchley"))
        );
    }
}
