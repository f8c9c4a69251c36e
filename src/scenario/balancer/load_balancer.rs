//! Spring Cloud LoadBalancer as the layers above the rules name it (FACTS.md §9): the caching
//! supplier re-reads the Eureka client's list at the first request after its TTL, or at every
//! request without the cache; the health-check supplier keeps the instances whose health check
//! passes, over the list it read first or refetches.

use super::BalancerDescriptor;
use crate::scenario::model::{CallTarget, CallerConfig, SupplierKind};

pub(super) const DESCRIPTOR: BalancerDescriptor = BalancerDescriptor {
    name: "LoadBalancer",
    settings,
    list_step,
    lag_term,
    what_if: Some((
        "LoadBalancer cache TTL",
        "caller[*].spring.cloud.loadbalancer.cache.ttl",
    )),
    circuit_breaker: false,
    policy: CallerConfig::load_balancer_policy,
};

fn settings(caller: &CallerConfig, _: &CallTarget) -> (&'static str, Option<u64>) {
    let lb = &caller.client.load_balancer;
    if lb.cache_enabled {
        ("LoadBalancer cache", Some(lb.cache_ttl_ms))
    } else {
        ("LoadBalancer without cache", None)
    }
}

fn list_step(caller: &CallerConfig) -> &'static str {
    let lb = &caller.client.load_balancer;
    if lb.configurations == SupplierKind::HealthCheck {
        "a Spring Cloud LoadBalancer health check"
    } else if lb.cache_enabled {
        "the first request after Spring Cloud LoadBalancer's cache expired"
    } else {
        "Spring Cloud LoadBalancer (no cache)"
    }
}

/// The cache's time to live (the request that re-reads the list already uses the new one;
/// nothing without the cache); for the health-check supplier, the refetch interval (without
/// refetching, the list never follows Eureka: a stopped instance leaves it only when it fails
/// a health check, one interval after it stopped serving).
fn lag_term(caller: &CallerConfig, _: &CallTarget) -> (&'static str, u64) {
    let lb = &caller.client.load_balancer;
    match lb.configurations {
        SupplierKind::Default if lb.cache_enabled => ("LoadBalancer cache TTL", lb.cache_ttl_ms),
        SupplierKind::Default => ("LoadBalancer read per request", 0),
        SupplierKind::HealthCheck if lb.refetch_instances => {
            ("LoadBalancer refetch", lb.refetch_instances_interval_ms)
        }
        SupplierKind::HealthCheck => ("LoadBalancer health check", lb.health_check_interval_ms),
    }
}
