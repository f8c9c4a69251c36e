//! Many requests through Ribbon's round robin at once.
//!
//! Between two changes of a route's routing state (its server list, or any instance starting or
//! stopping to serve), every request walks the same deterministic automaton: the shared
//! round-robin cursor picks a server (`incrementAndGetModulo`), a refused connection is retried on
//! the same server `MaxAutoRetries` times and on the next server (the cursor moves on)
//! `MaxAutoRetriesNextServer` times. So the attempts that land on each instance follow from the
//! number of requests and the cursor alone: the walk from the cursor is eventually periodic with
//! a period of at most the list length, and [`run_batch`] sums it in O(list length) instead of
//! one step per request.

use crate::eureka::ids::ProcessId;
use crate::eureka::route::attempt::{Answer, AttemptCosts};

/// What one request does, starting with the cursor at `start`.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub next: usize,
    /// Refused or timed-out attempts, by list position (a position may repeat with same-server
    /// retries), each with the delay the caller waited on it.
    pub dead: Vec<(usize, u64)>,
    /// The position that accepted the request.
    pub accepted: Option<usize>,
    pub failed: bool,
}

/// One request from cursor position `start` (already reduced modulo the list length), every
/// attempt through [`AttemptCosts::attempt`] (a Hystrix timeout ends the request).
pub fn step(
    start: usize,
    answers: &[Answer],
    next_servers: u32,
    same_server: u32,
    costs: AttemptCosts,
) -> Step {
    let mut dead = Vec::new();
    let end = step_into(start, answers, next_servers, same_server, costs, &mut dead);
    Step {
        next: end.next,
        dead,
        accepted: end.accepted,
        failed: end.failed,
    }
}

/// How one request ends: a [`Step`] but for its dead attempts.
#[derive(Debug, Clone, Copy)]
struct StepEnd {
    next: usize,
    accepted: Option<usize>,
    failed: bool,
}

/// [`step`], its dead attempts appended to `dead`: [`run_batch`] keeps every position's in one
/// list rather than one allocation each.
fn step_into(
    start: usize,
    answers: &[Answer],
    next_servers: u32,
    same_server: u32,
    costs: AttemptCosts,
    dead: &mut Vec<(usize, u64)>,
) -> StepEnd {
    let n = answers.len();
    let mut pos = start;
    let mut spent_ms = 0;
    for _ in 0..next_servers {
        let chosen = pos;
        pos = (pos + 1) % n;
        for _ in 0..same_server {
            let attempted = costs.attempt(&mut spent_ms, answers[chosen]);
            if answers[chosen].accepts() {
                return StepEnd {
                    next: pos,
                    accepted: Some(chosen),
                    failed: false,
                };
            }
            dead.push((chosen, attempted.delay_ms));
            if attempted.gave_up {
                return StepEnd {
                    next: pos,
                    accepted: None,
                    failed: true,
                };
            }
        }
    }
    StepEnd {
        next: pos,
        accepted: None,
        failed: true,
    }
}

/// What a batch's requests left on one list position.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    /// Refused or timed-out attempts on it.
    dead: u64,
    /// Requests that chose it first and failed.
    failed: u64,
    /// Delay waited on its connect timeouts (ms).
    delay_ms: u64,
    /// 1-based index of the last request with a dead attempt on it (0: none).
    last: u64,
}

/// Totals of a batch of requests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchOutcome {
    /// Per refused server: (server, attempts refused, 1-based index of the last request among the
    /// batch that had one of them).
    pub dead_hits: Vec<(ProcessId, u64, u64)>,
    /// Per first-chosen server: requests that failed after all retries (or at the Hystrix
    /// timeout).
    pub failed: Vec<(ProcessId, u64)>,
    /// Per server whose attempts timed out on connect: the delay waited on them in all (ms).
    pub delays: Vec<(ProcessId, u64)>,
    /// The cursor after the batch (already reduced modulo the list length).
    pub cursor: usize,
}

/// The position Ribbon's next pick takes over a list of `n > 0` servers with the cursor at
/// `cursor` (`AbstractServerPredicate#incrementAndGetModulo`: a cursor beyond a shrunken list
/// first wraps through `(current + 1) % n`).
pub fn first_pick(cursor: usize, n: usize) -> usize {
    if cursor < n { cursor } else { (cursor + 1) % n }
}

/// Runs `requests` requests over `servers` (with `answers[i]` telling how `servers[i]` answers a
/// connection) from round-robin cursor `cursor`; `next_servers` = MaxAutoRetriesNextServer + 1
/// and `same_server` = MaxAutoRetries + 1 (both 1 when the request may not be retried); each
/// attempt costs what [`AttemptCosts::attempt`] says.
pub fn run_batch(
    servers: &[ProcessId],
    answers: &[Answer],
    cursor: usize,
    requests: u64,
    next_servers: u32,
    same_server: u32,
    costs: AttemptCosts,
) -> BatchOutcome {
    let n = servers.len();
    if n == 0 || requests == 0 {
        return BatchOutcome {
            cursor,
            ..BatchOutcome::default()
        };
    }
    let start = first_pick(cursor, n);
    if answers.iter().all(|a| a.accepts()) {
        return BatchOutcome {
            cursor: ((start as u64 + requests) % n as u64) as usize,
            ..BatchOutcome::default()
        };
    }
    // Each position's step; their dead attempts in one list, position s's ending at
    // `steps[s].1`.
    let mut dead = Vec::new();
    let steps: Vec<(StepEnd, usize)> = (0..n)
        .map(|s| {
            let end = step_into(s, answers, next_servers, same_server, costs, &mut dead);
            (end, dead.len())
        })
        .collect();
    let dead_of = |s: usize| {
        let from = if s == 0 { 0 } else { steps[s - 1].1 };
        &dead[from..steps[s].1]
    };
    // The walk start, s1, s2, ... enters a cycle within n steps.
    let mut first_seen = vec![usize::MAX; n];
    let mut walk = Vec::with_capacity(n + 1);
    let mut s = start;
    while first_seen[s] == usize::MAX {
        first_seen[s] = walk.len();
        walk.push(s);
        s = steps[s].0.next;
    }
    let prefix = first_seen[s];
    let cycle = walk.len() - prefix;
    let state_at = |i: u64| -> usize {
        if i < prefix as u64 {
            walk[i as usize]
        } else {
            walk[prefix + ((i - prefix as u64) % cycle as u64) as usize]
        }
    };
    // How many times each walk position is visited among the first `requests` requests.
    let visits = |k: usize| -> u64 {
        if k < prefix {
            u64::from(requests > k as u64)
        } else if requests <= k as u64 {
            0
        } else {
            let after = requests - prefix as u64;
            let offset = (k - prefix) as u64;
            after / cycle as u64 + u64::from(offset < after % cycle as u64)
        }
    };
    let mut tallies = vec![Tally::default(); n];
    for (k, &state) in walk.iter().enumerate() {
        let times = visits(k);
        if times == 0 {
            continue;
        }
        for &(position, delay_ms) in dead_of(state) {
            tallies[position].dead += times;
            tallies[position].delay_ms += times * delay_ms;
        }
        if steps[state].0.failed {
            tallies[state].failed += times;
        }
    }
    // The last request touching each dead server lies within the last prefix + cycle requests.
    let window = (prefix + cycle) as u64;
    let mut i = requests;
    while i > requests.saturating_sub(window) {
        i -= 1;
        for &(position, _) in dead_of(state_at(i)) {
            if tallies[position].last == 0 {
                tallies[position].last = i + 1;
            }
        }
    }
    let dead_hits = (0..n)
        .filter(|&p| tallies[p].dead > 0)
        .map(|p| (servers[p], tallies[p].dead, tallies[p].last))
        .collect();
    let failed = (0..n)
        .filter(|&p| tallies[p].failed > 0)
        .map(|p| (servers[p], tallies[p].failed))
        .collect();
    let delays = (0..n)
        .filter(|&p| tallies[p].delay_ms > 0)
        .map(|p| (servers[p], tallies[p].delay_ms))
        .collect();
    BatchOutcome {
        dead_hits,
        failed,
        delays,
        cursor: state_at(requests),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;
    use crate::eureka::route::RibbonLoadBalancer;

    /// The reference: one request at a time through `RibbonLoadBalancer::choose`, exactly as the
    /// per-request path does.
    fn one_by_one(
        servers: &[ProcessId],
        answers: &[Answer],
        cursor: usize,
        requests: u64,
        next_servers: u32,
        same_server: u32,
        costs: AttemptCosts,
    ) -> BatchOutcome {
        let mut lb = RibbonLoadBalancer::with_cursor(servers.to_vec(), cursor);
        let answer = |p: ProcessId| answers[servers.iter().position(|&s| s == p).unwrap()];
        let mut dead: Vec<(ProcessId, u64, u64)> = Vec::new();
        let mut failed: Vec<(ProcessId, u64)> = Vec::new();
        let mut delays: Vec<(ProcessId, u64)> = Vec::new();
        for r in 1..=requests {
            let mut first = None;
            let mut ok = false;
            let mut spent_ms = 0;
            'request: for _ in 0..next_servers {
                let server = lb.choose().unwrap();
                first.get_or_insert(server);
                for _ in 0..same_server {
                    let attempted = costs.attempt(&mut spent_ms, answer(server));
                    if answer(server).accepts() {
                        ok = true;
                        break 'request;
                    }
                    match dead.iter_mut().find(|(p, _, _)| *p == server) {
                        Some(entry) => {
                            entry.1 += 1;
                            entry.2 = r;
                        }
                        None => dead.push((server, 1, r)),
                    }
                    if attempted.delay_ms > 0 {
                        match delays.iter_mut().find(|(p, _)| *p == server) {
                            Some(entry) => entry.1 += attempted.delay_ms,
                            None => delays.push((server, attempted.delay_ms)),
                        }
                    }
                    if attempted.gave_up {
                        break 'request;
                    }
                }
            }
            if !ok {
                let first = first.unwrap();
                match failed.iter_mut().find(|(p, _)| *p == first) {
                    Some(entry) => entry.1 += 1,
                    None => failed.push((first, 1)),
                }
            }
        }
        let order = |p: &ProcessId| servers.iter().position(|s| s == p).unwrap();
        dead.sort_by_key(|(p, _, _)| order(p));
        failed.sort_by_key(|(p, _)| order(p));
        delays.sort_by_key(|(p, _)| order(p));
        BatchOutcome {
            dead_hits: dead,
            failed,
            delays,
            cursor: lb.cursor(),
        }
    }

    #[test]
    fn batch_equals_request_by_request() {
        let mut rng = StreamFactory::new(5).stream("test");
        for case in 0..3000 {
            let n = 1 + rng.below(9) as usize;
            let servers: Vec<ProcessId> = (0..n).map(|i| 100 + i * 7).collect();
            let answers: Vec<Answer> = (0..n)
                .map(|_| match rng.below(7) {
                    0 => Answer::Refuses,
                    1 => Answer::TimesOut,
                    2 => Answer::ReadTimesOut,
                    _ => Answer::Accepts,
                })
                .collect();
            let cursor = rng.below(2 * n as u64) as usize;
            let requests = rng.below(60);
            let next_servers = 1 + rng.below(3) as u32;
            let same_server = 1 + rng.below(2) as u32;
            let costs = AttemptCosts {
                connect_timeout_ms: 1000,
                read_timeout_ms: 3000,
                hystrix_timeout_ms: [None, Some(500), Some(1500), Some(4000)]
                    [rng.below(4) as usize],
            };
            let fast = run_batch(
                &servers,
                &answers,
                cursor,
                requests,
                next_servers,
                same_server,
                costs,
            );
            let slow = one_by_one(
                &servers,
                &answers,
                cursor,
                requests,
                next_servers,
                same_server,
                costs,
            );
            assert_eq!(
                fast, slow,
                "case {case}: {servers:?} {answers:?} {costs:?} cursor {cursor} x{requests}"
            );
        }
    }

    #[test]
    fn large_batches_are_exact_totals() {
        // One dead server out of four, 1 retry on the next server: every request starting at the
        // dead one is refused once and succeeds on the next, so a full cycle of 4 positions
        // takes 3 requests (the dead position is skipped as a start) with 1 dead hit.
        let servers = [1, 2, 3, 4];
        let answers = [
            Answer::Accepts,
            Answer::Refuses,
            Answer::Accepts,
            Answer::Accepts,
        ];
        let out = run_batch(
            &servers,
            &answers,
            0,
            3_000_000,
            2,
            1,
            AttemptCosts::default(),
        );
        assert_eq!(out.dead_hits, vec![(2, 1_000_000, 2_999_999)]);
        assert!(out.failed.is_empty());
    }
}
