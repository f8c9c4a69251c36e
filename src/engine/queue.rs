//! The event queue: a min-heap ordered by `(time, sequence)`.
//!
//! Tie-break rule: events due at the same millisecond fire in the order they were scheduled
//! (first in, first out), because every push takes the next value of a monotonically increasing
//! sequence number. The order is total, so a run never depends on heap internals.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::SimTime;

/// Bits of the packed key that hold the sequence number; the time (ms) takes the other 31, up to
/// 24.8 days, beyond the longest scenario allowed (7 days).
const SEQ_BITS: u32 = 33;

/// The longest simulated time the queue can order.
pub const MAX_TIME_MS: u64 = (1 << (64 - SEQ_BITS)) - 1;

/// Heap entry: the ordering key packed into one integer (time above, sequence below) and the slot
/// of the event in the slab. Keeping the (large) events out of the heap makes every sift move 16
/// bytes instead of a whole event, and every comparison one integer compare.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Entry {
    key: u64,
    slot: u32,
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
        other.key.cmp(&self.key)
    }
}

/// Pending events of one trial.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry>,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
    now: SimTime,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(256),
            slab: Vec::with_capacity(256),
            free: Vec::with_capacity(256),
            next_seq: 0,
            now: SimTime::ZERO,
        }
    }

    /// The time of the event last popped (the simulation clock).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `time`; a time in the past is clamped to now (an actor can never
    /// schedule backwards, which would break causality).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let time = time.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(event);
                slot
            }
            None => {
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        assert!(
            time.ms() <= MAX_TIME_MS && seq < (1 << SEQ_BITS),
            "event queue key overflow (time {time}, sequence {seq})"
        );
        let key = (time.ms() << SEQ_BITS) | seq;
        self.heap.push(Entry { key, slot });
    }

    /// Schedules `event` `delay_ms` after now.
    pub fn schedule_in(&mut self, delay_ms: u64, event: E) {
        self.schedule(self.now + delay_ms, event);
    }

    /// Pops the next event if it is due no later than `until`, advancing the clock to it.
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        let time = SimTime(self.heap.peek()?.key >> SEQ_BITS);
        if time > until {
            return None;
        }
        let entry = self.heap.pop()?;
        let event = self.slab[entry.slot as usize].take()?;
        self.free.push(entry.slot);
        self.now = time;
        Some((time, event))
    }

    /// Number of events scheduled so far (a cheap work counter for benchmarks).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_time_first_then_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(20), "c");
        q.schedule(SimTime(10), "a");
        q.schedule(SimTime(20), "d");
        q.schedule(SimTime(10), "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime(100)))
            .map(|(_, e)| e)
            .collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
    }

    /// Many events at random times come out sorted by (time, insertion order).
    #[test]
    fn total_order_on_random_schedules() {
        let mut rng = crate::engine::StreamFactory::new(3).stream("q");
        let mut q = EventQueue::new();
        let mut expected = Vec::new();
        for k in 0..5_000u64 {
            let t = rng.below(200).max(q.now().ms());
            q.schedule(SimTime(t), k);
            expected.push((t, k));
            if k % 7 == 0 {
                // Interleave pops, as a simulation does.
                let (time, id) = q.pop_until(SimTime(u64::MAX >> 40)).unwrap();
                expected.sort();
                let pos = expected.iter().position(|&(_, i)| i == id).unwrap();
                assert_eq!(pos, 0, "popped {id} at {time}");
                expected.remove(0);
            }
        }
        expected.sort();
        for (t, id) in expected.drain(..) {
            assert_eq!(q.pop_until(SimTime(u64::MAX >> 40)), Some((SimTime(t), id)));
        }
        assert!(expected.is_empty());
    }

    #[test]
    fn stops_at_horizon_and_clamps_the_past() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(50), 1);
        q.schedule(SimTime(150), 2);
        assert_eq!(q.pop_until(SimTime(100)), Some((SimTime(50), 1)));
        assert_eq!(q.pop_until(SimTime(100)), None);
        q.schedule(SimTime(10), 3);
        assert_eq!(q.pop_until(SimTime(100)), Some((SimTime(50), 3)));
        assert_eq!(q.now(), SimTime(50));
    }
}
