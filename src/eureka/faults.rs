//! The network and the processes as `[[fault]]`s leave them (
//! `docs/design/peers.md` §1.6): which pairs of processes a partition separates, which
//! processes are paused until when, which servers are down. A rule of its own: it is told the
//! faults' edges and answers the world's questions; it never sees the world.
//!
//! What a fault does to a message is decided where the message leaves (`world/faults.rs`): a
//! connect across a partition times out; a connect to a down server is refused after a round
//! trip; an event owned by a paused process waits for the pause's end, then everything late
//! runs in its order.

use crate::engine::SimTime;

use super::ids::{ProcessId, ServerId};
use super::route::Answer;

/// One partition under way: the processes on each side.
#[derive(Debug, Clone)]
struct Cut {
    fault: usize,
    a: Vec<bool>,
    b: Vec<bool>,
}

/// The faults under way.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    cuts: Vec<Cut>,
    /// Per process: paused until this instant (exclusive), if a pause is under way.
    paused_until: Vec<Option<SimTime>>,
    /// Per server: down (crashed, or between a restart's stop and start).
    down: Vec<bool>,
    /// Per server: down with its host gone (a vanished zone): connects to it time out
    /// instead of being refused.
    vanished: Vec<bool>,
    /// Per process: how many pauses under way hold the requests sent to it (set at the pause's
    /// edges, after the callers' requests up to then were counted; see [`Faults::answer`]).
    frozen: Vec<u32>,
    /// Some fault has begun: the messages' paths are checked (one branch otherwise).
    active: bool,
}

impl Faults {
    pub fn new(processes: usize, servers: usize) -> Faults {
        Faults {
            cuts: Vec::new(),
            paused_until: vec![None; processes],
            down: vec![false; servers],
            vanished: vec![false; servers],
            frozen: vec![0; processes],
            active: false,
        }
    }

    /// Whether any fault has begun in this trial (the messages' fast path checks this only).
    #[inline]
    pub fn active(&self) -> bool {
        self.active
    }

    /// Partition `fault` begins between the processes marked in `a` and those in `b`.
    pub fn cut(&mut self, fault: usize, a: Vec<bool>, b: Vec<bool>) {
        self.active = true;
        self.cuts.push(Cut { fault, a, b });
    }

    /// Partition `fault` ends.
    pub fn heal(&mut self, fault: usize) {
        self.cuts.retain(|c| c.fault != fault);
    }

    /// Whether a message from `from` can reach `to` now: no partition under way separates them.
    pub fn open(&self, from: ProcessId, to: ProcessId) -> bool {
        let side = |v: &[bool], p: ProcessId| v.get(p).copied().unwrap_or(false);
        !self
            .cuts
            .iter()
            .any(|c| (side(&c.a, from) && side(&c.b, to)) || (side(&c.b, from) && side(&c.a, to)))
    }

    /// Process `p` stops the world until `until` (a later pause extends it).
    pub fn pause(&mut self, p: ProcessId, until: SimTime) {
        self.active = true;
        if let Some(slot) = self.paused_until.get_mut(p) {
            *slot = Some(slot.map_or(until, |u| u.max(until)));
        }
    }

    /// When `p` resumes, if it is paused at `now`.
    #[inline]
    pub fn paused(&self, p: ProcessId, now: SimTime) -> Option<SimTime> {
        self.paused_until
            .get(p)
            .copied()
            .flatten()
            .filter(|&until| until > now)
    }

    /// A pause of `p` begins (`true`) or ends: requests sent to it meanwhile are held.
    pub fn freeze(&mut self, p: ProcessId, frozen: bool) {
        self.active = true;
        if let Some(n) = self.frozen.get_mut(p) {
            *n = if frozen { *n + 1 } else { n.saturating_sub(1) };
        }
    }

    /// How a connection from `from` to `to` fares, given how `to` answers on its own (`own`,
    /// FACTS.md §7): across a partition the SYN is dropped and the connect times out (whatever
    /// `to` would answer); a paused JVM's kernel still accepts the connection, but nothing reads
    /// the request, so the caller's read timeout ends it (`SocketTimeoutException: Read timed
    /// out`). A request arriving less than a read timeout before the pause ends would be
    /// answered late instead: the model counts it as timed out too (at most one read timeout per
    /// pause, `docs/design/peers.md` §1.6).
    #[inline]
    pub fn answer(&self, from: ProcessId, to: ProcessId, own: Answer) -> Answer {
        if !self.active {
            return own;
        }
        if !self.open(from, to) {
            return Answer::TimesOut;
        }
        if own == Answer::Accepts && self.frozen.get(to).is_some_and(|&n| n > 0) {
            return Answer::ReadTimesOut;
        }
        own
    }

    /// Server `s` goes down (`true`) or comes back (`false`).
    pub fn set_down(&mut self, s: ServerId, down: bool) {
        self.active = true;
        if let Some(slot) = self.down.get_mut(s.index()) {
            *slot = down;
        }
    }

    pub fn is_down(&self, s: ServerId) -> bool {
        self.down.get(s.index()).copied().unwrap_or(false)
    }

    /// Server `s` goes down with its host: from now on a connect to it is never answered.
    pub fn set_vanished(&mut self, s: ServerId) {
        self.set_down(s, true);
        if let Some(slot) = self.vanished.get_mut(s.index()) {
            *slot = true;
        }
    }

    /// Whether `s` is down with its host gone (connects time out), not refusing.
    pub fn is_vanished(&self, s: ServerId) -> bool {
        self.vanished.get(s.index()).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(n: usize, on: &[usize]) -> Vec<bool> {
        (0..n).map(|p| on.contains(&p)).collect()
    }

    /// A partition separates its two sides both ways and nothing else; it heals by id, and two
    /// partitions over the same pair need both healed.
    #[test]
    fn a_partition_cuts_both_ways_between_its_sides_only() {
        let mut f = Faults::new(4, 1);
        assert!(!f.active());
        f.cut(0, marks(4, &[0]), marks(4, &[2, 3]));
        assert!(f.active());
        assert!(!f.open(0, 2) && !f.open(3, 0));
        assert!(f.open(0, 1) && f.open(1, 2) && f.open(2, 3));
        f.cut(1, marks(4, &[2]), marks(4, &[0]));
        f.heal(0);
        assert!(!f.open(0, 2), "the second partition still cuts 0|2");
        assert!(f.open(0, 3));
        f.heal(1);
        assert!(f.open(0, 2));
    }

    /// What a request meets: across a partition a connect timeout, even to a process that
    /// would refuse; to a paused process that would accept, a read timeout, and nothing more
    /// once every pause over it ended; a refusing process refuses all the same when paused;
    /// without faults, the process's own answer.
    #[test]
    fn requests_time_out_across_a_partition_and_read_time_out_on_a_paused_process() {
        use Answer::{Accepts, ReadTimesOut, Refuses, TimesOut};
        let mut f = Faults::new(4, 1);
        assert_eq!(f.answer(0, 2, Refuses), Refuses);
        f.cut(0, marks(4, &[0]), marks(4, &[2]));
        assert_eq!(f.answer(0, 2, Accepts), TimesOut);
        assert_eq!(f.answer(2, 0, Refuses), TimesOut);
        assert_eq!(f.answer(1, 2, Accepts), Accepts);
        f.freeze(3, true);
        f.freeze(3, true);
        assert_eq!(f.answer(1, 3, Accepts), ReadTimesOut);
        assert_eq!(f.answer(1, 3, Refuses), Refuses);
        f.freeze(3, false);
        assert_eq!(
            f.answer(1, 3, Accepts),
            ReadTimesOut,
            "the second pause holds"
        );
        f.freeze(3, false);
        assert_eq!(f.answer(1, 3, Accepts), Accepts);
        f.heal(0);
        assert_eq!(f.answer(0, 2, Accepts), Accepts);
    }

    /// A pause holds until its end (exclusive: at the end instant the process runs again);
    /// overlapping pauses hold until the later end.
    #[test]
    fn a_pause_holds_until_its_end() {
        let mut f = Faults::new(2, 1);
        f.pause(1, SimTime(5_000));
        assert_eq!(f.paused(1, SimTime(4_999)), Some(SimTime(5_000)));
        assert_eq!(f.paused(1, SimTime(5_000)), None);
        assert_eq!(f.paused(0, SimTime(10)), None);
        f.pause(1, SimTime(3_000));
        assert_eq!(f.paused(1, SimTime(10)), Some(SimTime(5_000)));
    }
}
