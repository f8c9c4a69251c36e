//! The event queue: a radix heap ordered by `(time, class, sequence or key)`.
//!
//! Tie-break rule, for events due at the same millisecond:
//! 1. keyed events ([`EventQueue::schedule_keyed`]: the periodic client timers whose event a
//!    fast mode may schedule at another instant than the reference does) fire first, in
//!    increasing key (the world's key names the process and the timer, so their order does not
//!    depend on when they were scheduled);
//! 2. then every other event, in the order it was scheduled (first in, first out): every push
//!    takes the next value of a monotonically increasing sequence number.
//!
//! The order is total, so a run never depends on the queue's internals. Leaving an event out
//! keeps the relative order of the others: sequence numbers are increasing in the order of the
//! pushes that remain, and a keyed event's place does not depend on its push at all.
//!
//! Why a radix heap: the keys are monotone. A new event is due at or after now and takes a
//! sequence number above every other, so its packed key is above the key last popped, which is
//! all a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
//! problem", 1990) needs. An entry sits in the bucket of the highest bit in which its key differs
//! from the last key popped; a push is one `leading_zeros` and one `Vec::push`, and a pop scans
//! only the lowest non-empty bucket, moving its other entries to lower buckets (each entry moves
//! at most 64 times, in practice a few). It pops exactly the order of the binary heap it
//! replaced (the same packed keys, compared as integers), so no output moves.
//!
//! Measured with callgrind (instructions of the whole `run` command, `RAYON_NUM_THREADS=1`, same
//! outputs byte for byte), binary heap -> radix heap:
//! - `scenarios/kill-9.toml --trials 200 --seed 1` (20 instances and a gateway):
//!   855.0 M -> 752.4 M instructions, 0.880x;
//! - `bench/fleet-1k.toml` (1 000 instances in 40 apps, 20 gateways calling 10 apps each, one
//!   hour: some 3 000 periodic timers pending at once), 1 trial: 18.80 G -> 16.64 G, 0.885x.
//!
//! It wins on both, so the binary heap is gone. What is left of the queue's cost is mostly
//! moving the events themselves (into the slab and out to the dispatch); by callgrind's line
//! counts an entry moves between buckets about once in kill-9.toml and 4 times in the fleet.

use super::SimTime;

/// Bits of the packed key below the time: the class bit and the 32-bit sequence number or
/// key. The time (ms) takes the other 31, up to 24.8 days, beyond the longest scenario allowed
/// (7 days).
const SEQ_BITS: u32 = 33;

/// The class bit: set on first-in-first-out events, clear on keyed ones, so in one
/// millisecond every keyed event comes before every other.
const FIFO: u64 = 1 << 32;

/// The longest simulated time the queue can order.
pub const MAX_TIME_MS: u64 = (1 << (64 - SEQ_BITS)) - 1;

/// Bucket entry: the ordering key packed into one integer (time above, sequence below) and the
/// slot of the event in the slab. Keeping the (large) events out of the buckets makes every move
/// between buckets 16 bytes instead of a whole event, and every comparison one integer compare.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Entry {
    key: u64,
    slot: u32,
}

/// Pending events of one trial.
pub struct EventQueue<E> {
    /// `buckets[b]` holds the entries whose key's highest bit differing from `last` is bit `b`
    /// (keys are unique and above `last`, so every entry has one).
    buckets: [Vec<Entry>; 64],
    /// Bit `b` set when `buckets[b]` is not empty: the lowest non-empty bucket is one
    /// `trailing_zeros`.
    occupied: u64,
    /// The key of the event last popped (0 before the first): every pending key is above it.
    last: u64,
    len: usize,
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

/// The bucket of `key` relative to the last key popped, `last` (`key >= last`; only the very
/// first key, 0, can equal it, and goes to bucket 0 with the keys that differ in bit 0 alone).
#[inline(always)]
fn bucket_of(key: u64, last: u64) -> usize {
    debug_assert!(key >= last, "radix heap key {key} below {last}");
    63 - ((key ^ last) | 1).leading_zeros() as usize
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            last: 0,
            len: 0,
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
    /// schedule backwards, which would break causality). An event due after [`MAX_TIME_MS`]
    /// (24.8 days) is dropped: no trial runs that long (`max-duration-s` allows 7 days), so it
    /// could never fire, and its time would not fit the packed key (found by fuzzing: a caller with
    /// `rate-per-s = 5e-7` drew its next request 2 * 10^9 ms ahead and panicked here).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let time = time.max(self.now);
        if time.ms() > MAX_TIME_MS {
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        // 2^32 events in one trial: the run's event budget (`experiment::budget`) stops a
        // trial long before.
        assert!(
            seq < FIFO,
            "event queue sequence overflow ({seq} events scheduled in one trial)"
        );
        self.push((time.ms() << SEQ_BITS) | FIFO | seq, event);
    }

    /// Schedules `event` at `time` ahead of the first-in-first-out events of its millisecond,
    /// ordered by `key` among the keyed ones (the module's tie-break rule). Equal keys in one
    /// millisecond must be events whose order does not matter (a stale timer and its
    /// successor). A keyed event can come before one already popped only if it is due now; it
    /// then goes after it, first in first out, as [`EventQueue::schedule`] would put it.
    pub fn schedule_keyed(&mut self, time: SimTime, key: u32, event: E) {
        let time = time.max(self.now);
        if time.ms() > MAX_TIME_MS {
            return;
        }
        let packed = (time.ms() << SEQ_BITS) | u64::from(key);
        if packed < self.last {
            return self.schedule(time, event);
        }
        // Counted with the others ([`EventQueue::scheduled`]); FIFO order only needs increasing
        // numbers, not consecutive ones.
        self.next_seq += 1;
        self.push(packed, event);
    }

    /// The key a first-in-first-out event scheduled now at `time` would take, without
    /// scheduling it: the place in the order of an event a fast mode leaves out and handles
    /// when the first later event comes ([`EventQueue::last_key`] above it). It takes its
    /// sequence number, so the events scheduled after come after it, as they would.
    pub fn reserve(&mut self, time: SimTime) -> u64 {
        let time = time.max(self.now).ms().min(MAX_TIME_MS);
        let seq = self.next_seq;
        self.next_seq += 1;
        (time << SEQ_BITS) | FIFO | seq
    }

    /// The key of the event last popped (the one being handled): an event with a key below
    /// it has come before it.
    pub fn last_key(&self) -> u64 {
        self.last
    }

    #[inline(always)]
    fn push(&mut self, key: u64, event: E) {
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
        // Not below `last`: time >= now, the time of `last`; a FIFO sequence is above every
        // earlier one, and `schedule_keyed` sends a keyed event that would be below to FIFO.
        let bucket = bucket_of(key, self.last);
        self.buckets[bucket].push(Entry { key, slot });
        self.occupied |= 1 << bucket;
        self.len += 1;
    }

    /// Schedules `event` `delay_ms` after now.
    pub fn schedule_in(&mut self, delay_ms: u64, event: E) {
        self.schedule(self.now + delay_ms, event);
    }

    /// Pops the next event if it is due no later than `until`, advancing the clock to it. When it
    /// is not due, nothing changes (not even `last`), so events may still be scheduled between
    /// now and it. Inlined into the world's one caller (`World::step_until`), so the event goes
    /// from the slab to the dispatch without a copy into a returned `Option`.
    #[inline(always)]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize;
        let bucket = &mut self.buckets[b];
        // The minimum of the whole queue is the minimum of its lowest non-empty bucket: every
        // key in a higher bucket has a 1 where this one's keys have `last`'s 0.
        let mut at = 0;
        let mut min = bucket[0].key;
        for (k, entry) in bucket.iter().enumerate().skip(1) {
            if entry.key < min {
                min = entry.key;
                at = k;
            }
        }
        let time = SimTime(min >> SEQ_BITS);
        if time > until {
            return None;
        }
        let entry = bucket.swap_remove(at);
        self.last = entry.key;
        self.len -= 1;
        if bucket.is_empty() {
            self.occupied &= !(1 << b);
        } else if b > 0 {
            // The rest of the bucket now differs from `last` in a lower bit: move each down.
            // (Bucket 0's rest stays: it differs from the new `last` in bit 0 alone.)
            // The mask is kept in a local: through `self` every push would store and reload it.
            let mut rest = std::mem::take(bucket);
            let mut occupied = self.occupied & !(1 << b);
            for moved in rest.drain(..) {
                let to = bucket_of(moved.key, self.last);
                self.buckets[to].push(moved);
                occupied |= 1 << to;
            }
            self.occupied = occupied;
            // Give the bucket its allocation back for the entries to come.
            self.buckets[b] = rest;
        }
        let event = self.slab[entry.slot as usize].take()?;
        self.free.push(entry.slot);
        self.now = time;
        Some((time, event))
    }

    /// Moves the clock to `time` (not back) without popping anything: the end of a trial,
    /// where nothing is due before it.
    pub fn advance_to(&mut self, time: SimTime) {
        self.now = self.now.max(time);
    }

    /// Number of events scheduled so far (a cheap work counter for benchmarks).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end of a trial: the clock moves forward to it, never back, and what is scheduled
    /// after counts from there.
    #[test]
    fn advance_to_moves_the_clock_forward_only() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 'a');
        assert_eq!(q.pop_until(SimTime(100)), Some((SimTime(10), 'a')));
        q.advance_to(SimTime(50));
        assert_eq!(q.now(), SimTime(50));
        q.advance_to(SimTime(20));
        assert_eq!(q.now(), SimTime(50));
        q.schedule_in(5, 'b');
        assert_eq!(q.pop_until(SimTime(100)), Some((SimTime(55), 'b')));
    }

    /// Found by fuzzing (`rate-per-s = 5e-7` panicked with "event queue key overflow"): an event
    /// beyond the last orderable instant is dropped, and the events before it still pop in
    /// order.
    #[test]
    fn an_event_beyond_the_last_orderable_instant_never_fires() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(MAX_TIME_MS + 1), "never");
        q.schedule(SimTime(u64::MAX), "never either");
        q.schedule(SimTime(MAX_TIME_MS), "last");
        q.schedule(SimTime(7), "first");
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime(u64::MAX)))
            .map(|(_, e)| e)
            .collect();
        assert_eq!(order, ["first", "last"]);
    }

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

    /// The reference order: every scheduled event kept sorted by (time after clamping,
    /// insertion).
    struct Reference {
        pending: std::collections::BTreeSet<(u64, u64)>,
        now: u64,
    }

    impl Reference {
        fn schedule(&mut self, time: u64, id: u64) {
            self.pending.insert((time.max(self.now), id));
        }

        fn pop_until(&mut self, until: u64) -> Option<(u64, u64)> {
            let &(time, id) = self.pending.first()?;
            if time > until {
                return None;
            }
            self.pending.pop_first();
            self.now = time;
            Some((time, id))
        }
    }

    /// Random schedules as a simulation makes them (mostly soon, some far, many at `now` and on
    /// ties, some in the past, pops interleaved and some stopped by a horizon) pop in exactly the
    /// order of sorting by (time, insertion), over many seeds and queue sizes.
    #[test]
    fn random_schedules_pop_in_the_order_of_the_sorted_reference() {
        for seed in 0..60u64 {
            let mut rng = crate::engine::StreamFactory::new(seed).stream("queue");
            let mut q = EventQueue::new();
            let mut reference = Reference {
                pending: Default::default(),
                now: 0,
            };
            // Small seeds keep a short queue, large ones let it grow to thousands.
            let pushes_per_pop = 1 + seed % 4;
            let mut id = 0u64;
            for _ in 0..3_000 {
                for _ in 0..pushes_per_pop {
                    let now = q.now().ms();
                    let time = match rng.below(8) {
                        0 => now,                               // at now
                        1 => now.saturating_sub(rng.below(50)), // in the past: clamped
                        2 => now + rng.below(3),                // ties
                        3 => now + rng.below(90_000_000),       // far (a day)
                        _ => now + rng.below(30_000),           // a timer period
                    };
                    q.schedule(SimTime(time), id);
                    reference.schedule(time, id);
                    id += 1;
                }
                let until = q.now().ms() + rng.below(40_000);
                let got = q.pop_until(SimTime(until)).map(|(t, e)| (t.ms(), e));
                assert_eq!(got, reference.pop_until(until), "seed {seed}");
                assert_eq!(q.len(), reference.pending.len());
            }
            while let Some(expected) = reference.pop_until(MAX_TIME_MS) {
                let got = q.pop_until(SimTime(MAX_TIME_MS)).map(|(t, e)| (t.ms(), e));
                assert_eq!(got, Some(expected), "seed {seed}");
            }
            assert!(q.is_empty());
            assert_eq!(q.pop_until(SimTime(MAX_TIME_MS)), None);
        }
    }

    /// The tie-break rule: in one millisecond, keyed events first in increasing key, whenever
    /// they were scheduled, then the others first in first out.
    #[test]
    fn keyed_events_come_first_in_their_millisecond_by_key() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), "fifo 1");
        q.schedule_keyed(SimTime(10), 7, "key 7");
        q.schedule(SimTime(10), "fifo 2");
        q.schedule_keyed(SimTime(10), 3, "key 3");
        q.schedule_keyed(SimTime(9), 9, "key 9 earlier");
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime(100)))
            .map(|(_, e)| e)
            .collect();
        assert_eq!(
            order,
            ["key 9 earlier", "key 3", "key 7", "fifo 1", "fifo 2"]
        );
    }

    /// A keyed event due now whose key is below the event just popped cannot go back in time:
    /// it comes after, first in first out (and a key above still comes first).
    #[test]
    fn a_keyed_event_below_the_one_popped_goes_first_in_first_out() {
        let mut q = EventQueue::new();
        q.schedule_keyed(SimTime(10), 5, "key 5");
        q.schedule(SimTime(10), "fifo");
        assert_eq!(q.pop_until(SimTime(100)), Some((SimTime(10), "key 5")));
        q.schedule_keyed(SimTime(10), 2, "key 2, late");
        q.schedule_keyed(SimTime(10), 6, "key 6");
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime(100)))
            .map(|(_, e)| e)
            .collect();
        assert_eq!(order, ["key 6", "fifo", "key 2, late"]);
    }

    /// Keyed and FIFO events mixed at random pop in the order of a sorted reference of
    /// (time, class, key or insertion), a keyed event below the last popped counting as FIFO.
    #[test]
    fn keyed_and_fifo_schedules_pop_in_the_order_of_the_sorted_reference() {
        for seed in 0..30u64 {
            let mut rng = crate::engine::StreamFactory::new(seed).stream("keyed");
            let mut q = EventQueue::new();
            let mut pending = std::collections::BTreeSet::new();
            let (mut now, mut last) = (0u64, (0u64, 0u64, 0u64));
            for id in 0..4_000u64 {
                let time = now + [0, 1, 2, 30_000][rng.below(4) as usize] + rng.below(3);
                if rng.below(3) == 0 {
                    // Unique keys: a random high part, the id below.
                    let key = ((rng.below(1 << 11) << 20) | id) as u32;
                    let packed = (time, 0, u64::from(key));
                    let packed = if packed < last { (time, 1, id) } else { packed };
                    pending.insert((packed, id));
                    q.schedule_keyed(SimTime(time), key, id);
                } else {
                    pending.insert(((time, 1, id), id));
                    q.schedule(SimTime(time), id);
                }
                if id % 3 == 0 {
                    let (key, expected) = pending.pop_first().unwrap();
                    (now, last) = (key.0, key);
                    assert_eq!(
                        q.pop_until(SimTime(MAX_TIME_MS)),
                        Some((SimTime(now), expected))
                    );
                }
            }
            while let Some(((time, _, _), expected)) = pending.pop_first() {
                assert_eq!(
                    q.pop_until(SimTime(MAX_TIME_MS)),
                    Some((SimTime(time), expected))
                );
            }
            assert!(q.is_empty(), "seed {seed}");
        }
    }

    /// A reserved key orders as the event it stands for would pop: after the events
    /// scheduled before it (and every keyed event) in its millisecond, before those scheduled
    /// after it.
    #[test]
    fn a_reserved_key_falls_where_its_event_would_pop() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), "before");
        let reserved = q.reserve(SimTime(10));
        q.schedule(SimTime(10), "after");
        q.schedule_keyed(SimTime(10), 1, "keyed");
        let mut seen = Vec::new();
        while let Some((_, e)) = q.pop_until(SimTime(100)) {
            seen.push((e, q.last_key() > reserved));
        }
        assert_eq!(seen, [("keyed", false), ("before", false), ("after", true)]);
    }

    /// A pop stopped by its horizon changes nothing: an event scheduled afterwards between now
    /// and the next one still comes first (the radix heap must not move its base to the next
    /// key on a refused pop).
    #[test]
    fn a_refused_pop_lets_earlier_events_in() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), "a");
        q.schedule(SimTime(1_000_000), "far");
        assert_eq!(q.pop_until(SimTime(20)), Some((SimTime(10), "a")));
        assert_eq!(q.pop_until(SimTime(20)), None);
        q.schedule(SimTime(500), "b");
        q.schedule(SimTime(10), "c");
        q.schedule(SimTime(500), "d");
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime(MAX_TIME_MS))).collect();
        assert_eq!(
            order,
            [
                (SimTime(10), "c"),
                (SimTime(500), "b"),
                (SimTime(500), "d"),
                (SimTime(1_000_000), "far")
            ]
        );
    }

    /// The first event (time 0, sequence 0) has the key the heap starts from.
    #[test]
    fn the_zero_key_pops_first() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(0), 1);
        q.schedule(SimTime(0), 2);
        assert_eq!(q.pop_until(SimTime(0)), Some((SimTime(0), 1)));
        q.schedule(SimTime(0), 3);
        assert_eq!(q.pop_until(SimTime(0)), Some((SimTime(0), 2)));
        assert_eq!(q.pop_until(SimTime(0)), Some((SimTime(0), 3)));
        assert_eq!(q.pop_until(SimTime(0)), None);
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
