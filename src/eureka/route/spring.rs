//! Spring Cloud LoadBalancer as a caller's balancer (FACTS.md §9): Ribbon's successor, the
//! default from Spring Cloud 2020.0.
//!
//! The chain is `DiscoveryClientServiceInstanceListSupplier` (the Eureka client's UP list, read
//! from its local cache) → either `CachingServiceInstanceListSupplier` (default) or
//! `HealthCheckServiceInstanceListSupplier` (`configurations = health-check`) →
//! `RoundRobinLoadBalancer`, with the blocking retry policy's defaults.
//!
//! Unlike Ribbon there is no timer behind the cache: the entry expires `ttl` after it was written
//! and the list is re-read by the first request after that, so a caller without traffic never
//! refreshes. In batched mode that request is found ahead of time: when the entry expires, the
//! next arrival is drawn and a miss is scheduled at it, so every list change happens at its own
//! instant.

use std::collections::HashMap;

use crate::scenario::CallPolicy;

use super::super::ids::ProcessId;
use super::attempt::{Answer, AttemptCosts};

/// `RoundRobinLoadBalancer` and its instance-list supplier for one called service.
#[derive(Debug)]
pub struct SpringLoadBalancer {
    /// `RoundRobinLoadBalancer#position`, seeded `new Random().nextInt(1000)`.
    pub(in crate::eureka) position: u64,
    /// The list the round robin chooses from (the cached list, the health-checked list, or the
    /// Eureka client's list when caching is off).
    pub servers: Vec<ProcessId>,
    /// Caching supplier: when the cached list was written (`None`: nothing valid is cached).
    pub(in crate::eureka) written_ms: Option<u64>,
    /// Health-check supplier: the instances it checks (the first list, or the last refetched).
    pub(in crate::eureka) checked: Vec<ProcessId>,
    /// Guards this balancer's timers.
    pub(in crate::eureka) generation: u32,
    /// Batched mode: the instant (µs) of the request that will find the cache expired.
    pub(in crate::eureka) pending_miss_us: Option<f64>,
}

impl SpringLoadBalancer {
    /// Batched mode: the cache is empty and the request that will read it is scheduled.
    pub fn miss_pending(&self) -> bool {
        self.pending_miss_us.is_some()
    }
}

/// The timers of a Spring Cloud LoadBalancer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringTimer {
    /// Batched mode: the cache entry's time to live is over.
    CacheExpired,
    /// Batched mode: the first request after the expiry arrives and re-reads the list.
    CacheMiss,
    /// A health-check round (`health-check.interval`).
    HealthCheck,
    /// `health-check.refetch-instances`: the instances are read again from the Eureka client.
    Refetch,
}

/// What one request did to the round robin and the instances.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(in crate::eureka) struct Walked {
    pub(in crate::eureka) first: Option<ProcessId>,
    pub(in crate::eureka) failed: bool,
    /// The instance that accepted the request.
    pub(in crate::eureka) accepted: Option<ProcessId>,
    /// Refused or timed-out attempts, in order.
    pub(in crate::eureka) refused: Vec<ProcessId>,
    /// Per instance whose attempts timed out on connect: the delay waited on them (ms).
    pub(in crate::eureka) delays: Vec<(ProcessId, u64)>,
}

/// Adds `count` to `key`'s entry of a small association list.
fn add_to(list: &mut Vec<(ProcessId, u64)>, key: ProcessId, count: u64) {
    match list.iter_mut().find(|(q, _)| *q == key) {
        Some(entry) => entry.1 += count,
        None => list.push((key, count)),
    }
}

/// The retry policy in effect: attempts on next instances and on the same instance
/// (`BlockingLoadBalancedRetryPolicy#canRetryNextServer` allows `nextServerCount <=
/// max-retries-on-next-service-instance`, `#canRetrySameServer` `sameServerCount <
/// max-retries-on-same-service-instance`), both only for GET unless `retry-on-all-operations`;
/// none unless the caller's stack retries at all (`CallerConfig::policy`: a RestTemplate or
/// Feign with spring-retry, a WebClient with `retry.enabled = true` set; FACTS.md §14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::eureka) struct Retries {
    servers: u32,
    same: u32,
    avoid_previous: bool,
}

impl Retries {
    pub(in crate::eureka) fn of(policy: &CallPolicy) -> Retries {
        Retries {
            servers: policy.servers,
            same: policy.same,
            avoid_previous: policy.avoid_previous,
        }
    }

    /// The round-robin state that decides a request: the position modulo every list size a
    /// request may choose from (the list, and the list without the instance just tried).
    pub(in crate::eureka) fn period(self, n: usize) -> u64 {
        let n = n as u64;
        if self.avoid_previous && self.servers > 1 && n > 2 {
            n * (n - 1)
        } else {
            n.max(1)
        }
    }
}

/// `RoundRobinLoadBalancer#getInstanceResponse` over `servers` without position `skip`: a single
/// instance is returned without moving the position; otherwise `position.incrementAndGet()`
/// (masked to a non-negative int) modulo the size picks it.
fn choose(position: &mut u64, servers: &[ProcessId], skip: Option<usize>) -> Option<usize> {
    let n = servers.len() - usize::from(skip.is_some());
    match n {
        0 => None,
        1 => Some(match skip {
            Some(0) => 1,
            _ => 0,
        }),
        _ => {
            *position += 1;
            let k = ((*position & 0x7fff_ffff) % n as u64) as usize;
            // Position k of the list without `skip`.
            Some(match skip {
                Some(s) if k >= s => k + 1,
                _ => k,
            })
        }
    }
}

/// One request with its retries (FACTS.md §9): each retry on a next instance chooses again; with
/// `avoid-previous-instance` (`RetryAwareServiceInstanceListSupplier`) it chooses among the
/// instances other than the one just tried, unless none would be left. Each attempt costs what
/// [`AttemptCosts::attempt`] says (a connect timeout on a vanished host; a Hystrix timeout ends
/// the request).
pub(in crate::eureka) fn walk_one(
    position: &mut u64,
    servers: &[ProcessId],
    answer: &dyn Fn(ProcessId) -> Answer,
    retries: Retries,
    costs: AttemptCosts,
) -> Walked {
    let mut out = Walked::default();
    let mut spent_ms = 0;
    let mut previous: Option<usize> = None;
    for _ in 0..retries.servers {
        let skip = if retries.avoid_previous && servers.len() > 1 {
            previous
        } else {
            None
        };
        let Some(i) = choose(position, servers, skip) else {
            return out;
        };
        let server = servers[i];
        out.first.get_or_insert(server);
        for _ in 0..retries.same {
            let answered = answer(server);
            let attempted = costs.attempt(&mut spent_ms, answered);
            if answered.accepts() {
                out.accepted = Some(server);
                return out;
            }
            out.refused.push(server);
            if attempted.delay_ms > 0 {
                add_to(&mut out.delays, server, attempted.delay_ms);
            }
            if attempted.gave_up {
                out.failed = true;
                return out;
            }
        }
        previous = Some(i);
    }
    out.failed = out.first.is_some();
    out
}

/// Totals of many requests over a constant list (see [`walk_many`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(in crate::eureka) struct ManyWalked {
    /// Per refused instance: attempts refused, 1-based index of the last request with one.
    pub(in crate::eureka) refused: Vec<(ProcessId, u64, u64)>,
    /// Per first-chosen instance: requests that failed after their retries.
    pub(in crate::eureka) failed: Vec<(ProcessId, u64)>,
    /// Per instance whose attempts timed out on connect: the delay waited on them (ms).
    pub(in crate::eureka) delays: Vec<(ProcessId, u64)>,
}

/// `requests` requests over a constant list from `position`: one request's course depends only
/// on the position modulo [`Retries::period`], so the walk of positions is eventually periodic
/// and is summed over its cycle instead of request by request once it repeats. (The position is
/// taken as it is, without `choose`'s 31-bit mask: exact until a route has made 2^31 choices.)
pub(in crate::eureka) fn walk_many(
    position: &mut u64,
    servers: &[ProcessId],
    answer: &dyn Fn(ProcessId) -> Answer,
    retries: Retries,
    costs: AttemptCosts,
    requests: u64,
) -> ManyWalked {
    let period = retries.period(servers.len());
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut steps: Vec<(Walked, u64)> = Vec::new();
    let mut pos = *position;
    let mut cycle_at = None;
    while (steps.len() as u64) < requests {
        if let Some(&k) = seen.get(&(pos % period)) {
            cycle_at = Some(k);
            break;
        }
        seen.insert(pos % period, steps.len());
        let before = pos;
        let walked = walk_one(&mut pos, servers, answer, retries, costs);
        steps.push((walked, pos - before));
    }
    let (prefix, cycle) = match cycle_at {
        Some(k) => (k, steps.len() - k),
        None => (steps.len(), 0),
    };
    // How many of the requests take step k, and which step request i (0-based) takes.
    let visits = |k: usize| -> u64 {
        if k < prefix {
            1
        } else {
            let after = requests - prefix as u64;
            let offset = (k - prefix) as u64;
            after / cycle as u64 + u64::from(offset < after % cycle as u64)
        }
    };
    let step_of = |i: u64| -> usize {
        if i < prefix as u64 {
            i as usize
        } else {
            prefix + ((i - prefix as u64) % cycle as u64) as usize
        }
    };
    let mut out = ManyWalked::default();
    let mut moved = 0u64;
    for (k, (walked, increments)) in steps.iter().enumerate() {
        let times = visits(k);
        moved += times * increments;
        for &p in &walked.refused {
            match out.refused.iter_mut().find(|(q, _, _)| *q == p) {
                Some(entry) => entry.1 += times,
                None => out.refused.push((p, times, 0)),
            }
        }
        for &(p, delay_ms) in &walked.delays {
            add_to(&mut out.delays, p, times * delay_ms);
        }
        if walked.failed
            && let Some(first) = walked.first
        {
            add_to(&mut out.failed, first, times);
        }
    }
    // The last request refused by each instance lies within the last prefix + cycle requests.
    let mut i = requests;
    let window = steps.len() as u64;
    while i > requests.saturating_sub(window) && out.refused.iter().any(|e| e.2 == 0) {
        i -= 1;
        for &p in &steps[step_of(i)].0.refused {
            if let Some(entry) = out.refused.iter_mut().find(|e| e.0 == p && e.2 == 0) {
                entry.2 = i + 1;
            }
        }
    }
    *position += moved;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retries(servers: u32, avoid_previous: bool) -> Retries {
        Retries {
            servers,
            same: 1,
            avoid_previous,
        }
    }

    /// `RoundRobinLoadBalancer`: `position.incrementAndGet() % size`; one instance does not
    /// move the position.
    #[test]
    fn round_robin_increments_then_picks() {
        let mut position = 999;
        let picks: Vec<_> = (0..4)
            .map(|_| choose(&mut position, &[10, 11, 12], None).unwrap())
            .collect();
        // 1000 % 3 = 1, then 2, 0, 1.
        assert_eq!(picks, [1, 2, 0, 1]);
        assert_eq!(choose(&mut position, &[10], None), Some(0));
        assert_eq!(position, 1003);
        assert_eq!(choose(&mut position, &[], None), None);
    }

    /// `RetryAwareServiceInstanceListSupplier`: the retry chooses among the others; of two, the
    /// other one is returned without moving the position.
    #[test]
    fn retry_avoids_the_previous_instance() {
        let serving = |p: ProcessId| {
            if p == 10 {
                Answer::Accepts
            } else {
                Answer::Refuses
            }
        };
        let free = AttemptCosts::default();
        let mut position = 0;
        // Position 1 of [10, 11] is 11 (refused); the retry list is [10], a single instance.
        let w = walk_one(&mut position, &[10, 11], &serving, retries(2, true), free);
        assert_eq!(w.refused, [11]);
        assert!(!w.failed);
        assert_eq!(position, 1);
        // Without avoid-previous the retry moves on: position 2 -> 10.
        let mut position = 0;
        let w = walk_one(&mut position, &[10, 11], &serving, retries(2, false), free);
        assert_eq!((w.refused.as_slice(), position), (&[11][..], 2));
        // Three instances, 11 refuses: the retry picks among [10, 12] at position 2 -> 12.
        let mut position = 0;
        let w = walk_one(
            &mut position,
            &[10, 11, 12],
            &serving,
            retries(2, true),
            free,
        );
        assert_eq!(w.refused, [11]);
        assert_eq!(position, 2);
    }

    /// The cycle summation equals request-by-request walking.
    #[test]
    fn many_requests_sum_like_single_ones() {
        let lists: [&[ProcessId]; 3] = [&[1, 2, 3, 4, 5], &[1, 2], &[7, 3, 9, 4]];
        for servers in lists {
            for (dead, vanished) in [
                (&[3usize][..], &[][..]),
                (&[1, 2][..], &[2usize][..]),
                (&[9, 7][..], &[9, 7][..]),
                (&[][..], &[4, 5][..]),
            ] {
                let serving = |p: ProcessId| {
                    if vanished.contains(&p) {
                        Answer::TimesOut
                    } else if dead.contains(&p) {
                        Answer::Refuses
                    } else {
                        Answer::Accepts
                    }
                };
                for (r, hystrix) in [
                    (retries(1, false), None),
                    (retries(2, true), None),
                    (retries(3, true), Some(1500)),
                    (retries(2, false), Some(500)),
                    (retries(2, false), Some(4000)),
                ] {
                    let costs = AttemptCosts {
                        connect_timeout_ms: 1000,
                        hystrix_timeout_ms: hystrix,
                    };
                    for requests in [0u64, 1, 7, 40, 1001] {
                        let mut a = 997u64;
                        let many = walk_many(&mut a, servers, &serving, r, costs, requests);
                        let mut b = 997u64;
                        let mut expected = ManyWalked::default();
                        for i in 0..requests {
                            let w = walk_one(&mut b, servers, &serving, r, costs);
                            for (p, delay_ms) in w.delays {
                                add_to(&mut expected.delays, p, delay_ms);
                            }
                            for p in w.refused {
                                match expected.refused.iter_mut().find(|e| e.0 == p) {
                                    Some(e) => {
                                        e.1 += 1;
                                        e.2 = i + 1;
                                    }
                                    None => expected.refused.push((p, 1, i + 1)),
                                }
                            }
                            if w.failed {
                                let first = w.first.unwrap();
                                match expected.failed.iter_mut().find(|e| e.0 == first) {
                                    Some(e) => e.1 += 1,
                                    None => expected.failed.push((first, 1)),
                                }
                            }
                        }
                        let sort = |mut m: ManyWalked| {
                            m.refused.sort();
                            m.failed.sort();
                            m.delays.sort();
                            m
                        };
                        assert_eq!(
                            sort(many),
                            sort(expected),
                            "{servers:?} {dead:?} {vanished:?} {r:?} {costs:?} {requests}"
                        );
                        assert_eq!(a, b);
                    }
                }
            }
        }
    }
}
