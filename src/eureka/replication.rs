//! Replication to one peer: `PeerEurekaNode`'s batching dispatcher (FACTS.md §10,
//! `docs/design/peers.md` §1.1). One `PeerReplicator` per (server, peer) pair.
//!
//! A task replaces a pending task with the same key in place
//! (`AcceptorExecutor.AcceptorRunner#appendTaskHolder`). The position in the processing order
//! stays; the submit time and the expiry become the new task's. A batch leaves when the oldest
//! pending task has waited `MAX_BATCHING_DELAY_MS`, or at once when the buffer is full
//! (`#hasEnoughTasksForNextBatch`). It carries up to `BATCH_SIZE` tasks in processing order, and
//! tasks expired by then are dropped (`#assignBatchWork`).
//!
//! A congested batch (503, or a read timeout) and a batch lost to the network go back to the
//! front of the queue in their order, each task keeping its submit time. A task that has expired
//! or has a newer pending task with its key is dropped (`#reprocess`, `#drainReprocessQueue`).
//! Nothing is sent until 1 s after the last congestion, else 100 ms after the last network
//! error (`TrafficShaper#transmissionDelay`). Any other failure drops the batch.
//!
//! Not modelled: the acceptor's 10 ms poll (a batch leaves exactly when it is due), and the
//! peer list's 10-minute refresh (peers are static).
//!
//! The world wires it for `[[peer]]`s (`docs/design/peers.md` §4).

use std::collections::VecDeque;
use std::rc::Rc;

use crate::engine::SimTime;

use super::ids::ProcessId;
use super::protocol::{
    ActionKind, BatchOutcome, ItemReply, Registrant, Replicated, ReplicationBatch, ReplicationTask,
    TaskKey,
};
use super::status::InstanceStatus;

/// `PeerEurekaNode.MAX_BATCHING_DELAY_MS`: how long the oldest task waits for others.
pub const MAX_BATCHING_DELAY_MS: u64 = 500;
/// `PeerEurekaNode.BATCH_SIZE`: tasks per `POST peerreplication/batch/`.
pub const BATCH_SIZE: usize = 250;
/// `PeerEurekaNode.RETRY_SLEEP_TIME_MS`: the pause after a network error.
pub const RETRY_SLEEP_TIME_MS: u64 = 100;
/// `PeerEurekaNode.SERVER_UNAVAILABLE_SLEEP_TIME_MS`: the pause after a congestion.
pub const SERVER_UNAVAILABLE_SLEEP_TIME_MS: u64 = 1_000;
/// `eureka.server.max-elements-in-peer-replication-pool`: beyond it the oldest task is dropped.
pub const MAX_ELEMENTS_IN_PEER_REPLICATION_POOL: usize = 10_000;
/// `eureka.server.max-threads-for-peer-replication`: batches in flight at once.
pub const MAX_THREADS_FOR_PEER_REPLICATION: usize = 20;

/// What the replicator asks of its server.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplicatorEffect {
    /// Wake the dispatcher `delay_ms` from now (a timer armed with `generation`).
    Arm { delay_ms: u64, generation: u32 },
    /// Send this batch to the peer (shared with the replicator's batches in flight, which keep
    /// it for its outcome: one copy of the tasks, not two).
    Send(Rc<ReplicationBatch>),
}

/// What an answered batch asks of the sending server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PeerAction {
    /// A replicated heartbeat found no lease (404): register the held copy there
    /// (`PeerEurekaNode#heartbeat`, `handleFailure`).
    RegisterRepair(ProcessId, Registrant),
    /// The peer's copy is dirtier (409 with its copy): store the peer's override if it is not
    /// UNKNOWN, and take the copy as a new local lease, not replicated
    /// (`#syncInstancesIfTimestampDiffers`).
    TakePeerCopy(ProcessId, Registrant),
}

/// `TrafficShaper`: when the last congestion and network error happened.
#[derive(Debug, Clone, Copy, Default)]
struct TrafficShaper {
    last_congestion: Option<SimTime>,
    last_network_failure: Option<SimTime>,
}

impl TrafficShaper {
    /// `#transmissionDelay`: what is left of 1 s after a congestion, else of 100 ms after a
    /// network error, else 0.
    fn delay(&self, now: SimTime) -> u64 {
        let left = |at: Option<SimTime>, pause: u64| {
            at.map_or(0, |at| pause.saturating_sub(now.saturating_since(at)))
        };
        match left(self.last_congestion, SERVER_UNAVAILABLE_SLEEP_TIME_MS) {
            0 => left(self.last_network_failure, RETRY_SLEEP_TIME_MS),
            delay => delay,
        }
    }
}

/// The tasks waiting for one peer and the batches in flight.
#[derive(Debug, Default)]
pub struct PeerReplicator {
    /// Pending tasks by key, `process * ActionKind::COUNT + action`.
    pending: Vec<Option<ReplicationTask>>,
    /// `processingOrder`: the keys of pending tasks, oldest first.
    order: VecDeque<TaskKey>,
    shaper: TrafficShaper,
    in_flight: Vec<Rc<ReplicationBatch>>,
    next_batch: u64,
    /// Guards the dispatcher's timer; `armed_at` is when it fires.
    generation: u32,
    armed_at: Option<SimTime>,
}

impl PeerReplicator {
    fn slot(key: TaskKey) -> usize {
        key.process * ActionKind::COUNT + key.action.index()
    }

    /// Pending tasks, in processing order.
    pub fn pending(&self) -> impl Iterator<Item = &ReplicationTask> + '_ {
        self.order
            .iter()
            .filter_map(|&key| self.pending.get(Self::slot(key))?.as_ref())
    }

    /// `#appendTaskHolder`: a task with a pending key replaces it in place; a new key joins the
    /// end, dropping the oldest task when the pool is full. Then the dispatcher is armed for the
    /// next batch.
    pub fn submit(&mut self, now: SimTime, task: ReplicationTask, out: &mut Vec<ReplicatorEffect>) {
        let key = task.key();
        let slot = Self::slot(key);
        if self.pending.len() <= slot {
            self.pending.resize(slot + 1, None);
        }
        if self.pending[slot].is_none() {
            if self.order.len() >= MAX_ELEMENTS_IN_PEER_REPLICATION_POOL
                && let Some(oldest) = self.order.pop_front()
            {
                self.pending[Self::slot(oldest)] = None;
            }
            self.order.push_back(key);
        }
        self.pending[slot] = Some(task);
        // Armed already and the pool not full: the next batch's due instant cannot have moved
        // earlier (the oldest task is still the oldest, the shaper's pause only runs out), and
        // [`PeerReplicator::arm_for_next_batch`] would keep the timer. Checked first: on the
        // production fleet this was 801 400 calls in 20 minutes).
        if self.armed_at.is_some() && self.order.len() < MAX_ELEMENTS_IN_PEER_REPLICATION_POOL {
            return;
        }
        self.arm_for_next_batch(now, out);
    }

    /// When the next batch is due: at once when the pool is full, else when the oldest pending
    /// task has waited `MAX_BATCHING_DELAY_MS`, and never before the traffic shaper allows.
    fn next_due(&self, now: SimTime) -> Option<SimTime> {
        let oldest = self.pending().next()?;
        let full = self.order.len() >= MAX_ELEMENTS_IN_PEER_REPLICATION_POOL;
        let ready = if full {
            now
        } else {
            (oldest.submitted + MAX_BATCHING_DELAY_MS).max(now)
        };
        Some(ready.max(now + self.shaper.delay(now)))
    }

    /// Arms the dispatcher for the next batch unless it is armed for that instant or earlier.
    fn arm_for_next_batch(&mut self, now: SimTime, out: &mut Vec<ReplicatorEffect>) {
        if self.in_flight.len() >= MAX_THREADS_FOR_PEER_REPLICATION {
            return;
        }
        let Some(due) = self.next_due(now) else {
            return;
        };
        if self.armed_at.is_some_and(|at| at <= due) {
            return;
        }
        self.generation += 1;
        self.armed_at = Some(due);
        out.push(ReplicatorEffect::Arm {
            delay_ms: due.since(now) as u64,
            generation: self.generation,
        });
    }

    /// The dispatcher's timer fired (a stale one does nothing): if a batch is due, it takes up
    /// to `BATCH_SIZE` tasks in order, drops the expired ones (`expiry > now` is kept) and sends
    /// the rest; then it arms for the next batch.
    pub fn on_dispatch(&mut self, now: SimTime, generation: u32, out: &mut Vec<ReplicatorEffect>) {
        if generation != self.generation || self.armed_at.is_none() {
            return;
        }
        self.armed_at = None;
        if self.in_flight.len() < MAX_THREADS_FOR_PEER_REPLICATION
            && self.next_due(now).is_some_and(|due| due <= now)
        {
            let mut tasks = Vec::with_capacity(self.order.len().min(BATCH_SIZE));
            while tasks.len() < BATCH_SIZE {
                let Some(key) = self.order.pop_front() else {
                    break;
                };
                if let Some(task) = self.pending[Self::slot(key)].take()
                    && task.expires > now
                {
                    tasks.push(task);
                }
            }
            if !tasks.is_empty() {
                let batch = Rc::new(ReplicationBatch {
                    id: self.next_batch,
                    tasks,
                });
                self.next_batch += 1;
                self.in_flight.push(Rc::clone(&batch));
                out.push(ReplicatorEffect::Send(batch));
            }
        }
        self.arm_for_next_batch(now, out);
    }

    /// Batch `id` came back. Replied: per item, a 404 to a heartbeat that carried a held copy
    /// asks for a register, a 409 for taking the peer's copy. Congestion or a network error: the
    /// batch's tasks go back to the front, in order, keeping their submit times, except expired
    /// ones and ones whose key has a newer pending task; the shaper pauses sending. Anything
    /// else drops the batch.
    pub fn on_outcome(
        &mut self,
        now: SimTime,
        id: u64,
        outcome: BatchOutcome,
        out: &mut Vec<ReplicatorEffect>,
    ) -> Vec<PeerAction> {
        let Some(i) = self.in_flight.iter().position(|b| b.id == id) else {
            return Vec::new();
        };
        let batch = self.in_flight.swap_remove(i);
        let mut actions = Vec::new();
        match outcome {
            BatchOutcome::Replied(replies) => {
                for (task, reply) in batch.tasks.iter().zip(replies) {
                    match (task.item, reply) {
                        (
                            Replicated::Heartbeat {
                                held: Some(held), ..
                            },
                            ItemReply::NotFound,
                        ) => actions.push(PeerAction::RegisterRepair(task.process, held)),
                        (_, ItemReply::Conflict(copy)) => {
                            actions.push(PeerAction::TakePeerCopy(task.process, copy));
                        }
                        _ => {}
                    }
                }
            }
            BatchOutcome::Congestion | BatchOutcome::NetworkError => {
                if outcome == BatchOutcome::Congestion {
                    self.shaper.last_congestion = Some(now);
                } else {
                    self.shaper.last_network_failure = Some(now);
                }
                // The batch's event may still hold it (a failure told before delivery).
                let tasks = Rc::try_unwrap(batch).map_or_else(|b| b.tasks.clone(), |b| b.tasks);
                self.reprocess(now, tasks);
            }
            BatchOutcome::Failed => {}
        }
        self.arm_for_next_batch(now, out);
        actions
    }

    /// `#reprocess` then `#drainReprocessQueue`: back to the front of the processing order, in
    /// their order (`pollLast` + `addFirst`).
    fn reprocess(&mut self, now: SimTime, tasks: Vec<ReplicationTask>) {
        for task in tasks.into_iter().rev() {
            let key = task.key();
            let slot = Self::slot(key);
            if task.expires <= now || self.pending[slot].is_some() {
                continue;
            }
            if self.order.len() >= MAX_ELEMENTS_IN_PEER_REPLICATION_POOL {
                break;
            }
            self.pending[slot] = Some(task);
            self.order.push_front(key);
        }
    }
}

/// When a task submitted `now` expires (`PeerEurekaNode#register/#heartbeat`: the instance's
/// lease renewal interval; the others `max_time_for_replication_ms`,
/// `eureka.server.max-time-for-replication`, 30 s by default).
pub fn task_expiry(
    now: SimTime,
    item: &Replicated,
    renewal_interval_ms: u64,
    max_time_for_replication_ms: u64,
) -> SimTime {
    match item {
        Replicated::Register(_) | Replicated::Heartbeat { .. } => now + renewal_interval_ms,
        _ => now + max_time_for_replication_ms,
    }
}

/// `eureka.server.max-time-for-replication`: how long a cancel or status task may wait.
pub const MAX_TIME_FOR_REPLICATION_MS: u64 = 30_000;

/// The status a 409's copy asks the sender to store as its override, if any (not UNKNOWN).
pub fn override_from_peer(copy: &Registrant) -> Option<InstanceStatus> {
    (copy.overridden_status != InstanceStatus::Unknown).then_some(copy.overridden_status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heartbeat(p: ProcessId, at: u64, dirty: u64) -> ReplicationTask {
        let item = Replicated::Heartbeat {
            held: Some(Registrant::up(dirty)),
            overridden: None,
        };
        ReplicationTask {
            process: p,
            item,
            submitted: SimTime(at),
            expires: task_expiry(SimTime(at), &item, 30_000, MAX_TIME_FOR_REPLICATION_MS),
        }
    }

    fn cancel(p: ProcessId, at: u64) -> ReplicationTask {
        ReplicationTask {
            process: p,
            item: Replicated::Cancel,
            submitted: SimTime(at),
            expires: task_expiry(
                SimTime(at),
                &Replicated::Cancel,
                30_000,
                MAX_TIME_FOR_REPLICATION_MS,
            ),
        }
    }

    /// The batches a replicator sends when its timer fires at each instant it asked for,
    /// through `until`; every batch is answered at once with `answer`.
    fn drive(
        r: &mut PeerReplicator,
        mut effects: Vec<ReplicatorEffect>,
        until: u64,
        answer: impl Fn(&ReplicationBatch) -> BatchOutcome,
    ) -> Vec<(u64, Vec<ProcessId>)> {
        let mut sent = Vec::new();
        let mut timers: Vec<(u64, u32)> = Vec::new();
        let mut now = 0;
        loop {
            for effect in effects.drain(..) {
                match effect {
                    ReplicatorEffect::Arm {
                        delay_ms,
                        generation,
                    } => timers.push((now + delay_ms, generation)),
                    ReplicatorEffect::Send(batch) => {
                        sent.push((now, batch.tasks.iter().map(|t| t.process).collect()));
                        let outcome = answer(&batch);
                        let mut more = Vec::new();
                        r.on_outcome(SimTime(now), batch.id, outcome, &mut more);
                        timers.extend(more.into_iter().filter_map(|e| match e {
                            ReplicatorEffect::Arm {
                                delay_ms,
                                generation,
                            } => Some((now + delay_ms, generation)),
                            ReplicatorEffect::Send(_) => None,
                        }));
                    }
                }
            }
            timers.sort();
            let Some(&(at, generation)) = timers.first() else {
                return sent;
            };
            if at > until {
                return sent;
            }
            timers.remove(0);
            now = at;
            r.on_dispatch(SimTime(now), generation, &mut effects);
        }
    }

    fn ok(batch: &ReplicationBatch) -> BatchOutcome {
        BatchOutcome::Replied(vec![ItemReply::Ok; batch.tasks.len()])
    }

    /// A lone task leaves exactly 500 ms after it was submitted; one that joins it 200 ms later
    /// goes in the same batch (it waits 300 ms).
    #[test]
    fn a_batch_leaves_when_its_oldest_task_has_waited_500_ms() {
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        r.submit(SimTime(0), heartbeat(1, 0, 1), &mut out);
        r.submit(SimTime(200), cancel(2, 200), &mut out);
        assert_eq!(drive(&mut r, out, 10_000, ok), [(500, vec![1, 2])]);
    }

    /// `#appendTaskHolder`: a newer heartbeat of the same instance replaces the pending one in
    /// place, with its own submit time (so the batch waits for the newer one), and goes once.
    #[test]
    fn a_newer_task_with_the_same_key_replaces_the_pending_one() {
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        r.submit(SimTime(0), heartbeat(1, 0, 1), &mut out);
        r.submit(SimTime(100), cancel(2, 100), &mut out);
        r.submit(SimTime(300), heartbeat(1, 300, 2), &mut out);
        let pending: Vec<_> = r.pending().map(|t| (t.process, t.submitted.ms())).collect();
        assert_eq!(pending, [(1, 300), (2, 100)]);
        assert_eq!(drive(&mut r, out, 10_000, ok), [(800, vec![1, 2])]);
    }

    /// 251 tasks at once: a batch of 250 at +500 ms, the last one right after it.
    #[test]
    fn batches_hold_at_most_250_tasks() {
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        for p in 0..251 {
            r.submit(SimTime(0), cancel(p, 0), &mut out);
        }
        let sent = drive(&mut r, out, 10_000, ok);
        let sizes: Vec<(u64, usize)> = sent.iter().map(|(t, b)| (*t, b.len())).collect();
        assert_eq!(sizes, [(500, 250), (500, 1)]);
    }

    /// Congestion (503): the batch is re-sent no sooner than 1 s after it, in its order; a
    /// network error: 100 ms after. A heartbeat re-queued after its 30 s expiry is dropped, a
    /// cancel (30 s too) is dropped the same way.
    #[test]
    fn congestion_and_network_errors_retry_after_their_pauses() {
        for (outcome, pause) in [
            (BatchOutcome::Congestion, SERVER_UNAVAILABLE_SLEEP_TIME_MS),
            (BatchOutcome::NetworkError, RETRY_SLEEP_TIME_MS),
        ] {
            let mut r = PeerReplicator::default();
            let mut out = Vec::new();
            r.submit(SimTime(0), heartbeat(3, 0, 1), &mut out);
            r.submit(SimTime(0), cancel(4, 0), &mut out);
            let first = std::cell::Cell::new(true);
            let sent = drive(&mut r, out, 10_000, |b| {
                if first.replace(false) {
                    outcome.clone()
                } else {
                    ok(b)
                }
            });
            assert_eq!(sent, [(500, vec![3, 4]), (500 + pause, vec![3, 4])]);
        }
        // Failing forever: retried every 100 ms until both expire at 30 s.
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        r.submit(SimTime(0), heartbeat(3, 0, 1), &mut out);
        let sent = drive(&mut r, out, 100_000, |_| BatchOutcome::NetworkError);
        assert_eq!(sent.first().map(|s| s.0), Some(500));
        assert_eq!(sent.last().map(|s| s.0), Some(29_900));
        assert_eq!(sent.len(), 295);
        assert_eq!(r.pending().count(), 0);
    }

    /// A failure that is neither congestion nor a network error drops the batch.
    #[test]
    fn other_failures_drop_the_batch() {
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        r.submit(SimTime(0), cancel(4, 0), &mut out);
        let sent = drive(&mut r, out, 100_000, |_| BatchOutcome::Failed);
        assert_eq!(sent, [(500, vec![4])]);
    }

    /// A 404 to a replicated heartbeat asks for a register of the held copy; a 409 hands back
    /// the peer's dirtier copy (FACTS.md §10).
    #[test]
    fn a_404_asks_for_a_register_and_a_409_for_the_peers_copy() {
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        r.submit(SimTime(0), heartbeat(1, 0, 5), &mut out);
        r.submit(SimTime(0), heartbeat(2, 0, 5), &mut out);
        r.submit(SimTime(0), cancel(3, 0), &mut out);
        out.clear();
        r.on_dispatch(SimTime(500), r.generation, &mut out);
        let Some(ReplicatorEffect::Send(batch)) = out.first().cloned() else {
            panic!("{out:?}");
        };
        let peers_copy = Registrant {
            overridden_status: InstanceStatus::OutOfService,
            ..Registrant::up(9)
        };
        let replies = vec![
            ItemReply::NotFound,
            ItemReply::Conflict(peers_copy),
            ItemReply::NotFound,
        ];
        let actions = r.on_outcome(
            SimTime(510),
            batch.id,
            BatchOutcome::Replied(replies),
            &mut out,
        );
        assert_eq!(
            actions,
            [
                PeerAction::RegisterRepair(1, Registrant::up(5)),
                PeerAction::TakePeerCopy(2, peers_copy)
            ]
        );
        assert_eq!(
            override_from_peer(&peers_copy),
            Some(InstanceStatus::OutOfService)
        );
        assert_eq!(override_from_peer(&Registrant::up(9)), None);
    }

    /// The pool holds 10 000 tasks; the next new key drops the oldest.
    #[test]
    fn a_full_pool_drops_its_oldest_task() {
        let mut r = PeerReplicator::default();
        let mut out = Vec::new();
        for p in 0..=MAX_ELEMENTS_IN_PEER_REPLICATION_POOL {
            r.submit(SimTime(0), cancel(p, 0), &mut out);
        }
        assert_eq!(r.pending().count(), MAX_ELEMENTS_IN_PEER_REPLICATION_POOL);
        assert_eq!(r.pending().next().map(|t| t.process), Some(1));
    }
}
