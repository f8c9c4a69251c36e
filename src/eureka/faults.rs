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

/// From when a caller with read timeout `read_timeout_ms` gets a late answer, not a read
/// timeout, from a process paused until `until` (never before the pause began, `began`): a
/// request arriving at t fails at t + read timeout if the process is still paused then, and
/// is answered when the pause ends otherwise (the kernel accepted the connection and queued
/// the request; the JVM reads it after SIGCONT). With the pause's end exclusive, t +
/// read timeout < `until` fails, so the requests from `until - read_timeout_ms` on are answered
/// late. Ribbon's `ReadTimeout` is the socket's `SO_TIMEOUT` (`java.net.SocketInputStream#read`
/// throws `SocketTimeoutException` once that long passed with nothing to read).
pub fn answered_late_from(began: SimTime, until: SimTime, read_timeout_ms: u64) -> SimTime {
    SimTime(until.ms().saturating_sub(read_timeout_ms)).max(began)
}

/// One partition under way: the processes on each side, and when it heals.
#[derive(Debug, Clone)]
struct Cut {
    fault: usize,
    a: Vec<bool>,
    b: Vec<bool>,
    heals: SimTime,
}

/// When Linux sends a lost SYN again, counted from the first SYN: the initial retransmission
/// timeout is 1 s (`TCP_TIMEOUT_INIT`, include/net/tcp.h) and doubles at each retransmission
/// (`tcp_retransmit_timer` in net/ipv4/tcp_timer.c: `icsk_rto = min(icsk_rto << 1,
/// TCP_RTO_MAX)`), so the retransmissions leave 1, 3, 7, 15, 31 and 63 s after it;
/// `tcp_syn_retries` (default 6, `TCP_SYN_RETRIES` in include/net/tcp.h) ends the attempt
/// 64 s after the sixth (`tcp_write_timeout` through `retransmits_timed_out`).
/// Documentation/networking/ip-sysctl: "Default value is 6, which corresponds to 63seconds
/// till the last retransmission with the current initial RTO of 1second. With this the final
/// timeout for an active TCP connection attempt will happen after 127seconds": the OS's
/// [`OS_CONNECT_TIMEOUT_MS`](crate::scenario::OS_CONNECT_TIMEOUT_MS). That is the schedule of
/// kernels 3.7 to 6.4. From 6.5 (`tcp_syn_linear_timeouts`, default 4, commit "tcp: make the
/// first N SYN RTO backoffs linear") the timeout stays 1 s for four more retransmissions
/// before it doubles, and `tcp_write_timeout` allows those four on top: 1, 2, 3, 4, 5, 7, 11,
/// 19, 35 and 67 s, giving up at 131 s. The model keeps the older schedule, as it keeps
/// 127 s.
pub const SYN_RETRANSMITS_MS: [u64; 6] = [1_000, 3_000, 7_000, 15_000, 31_000, 63_000];

/// How a connect whose SYN may cross a partition goes on ([`Faults::connect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connect {
    /// Nothing separates the two ends now: the SYN (or its retransmission) is answered.
    Open,
    /// The SYN was lost; the retransmission at `at`, the first at or after the partition heals,
    /// is sent before the connect timeout: ask again then.
    Retransmit { at: SimTime },
    /// No SYN gets through before the connect timeout: the connect fails at `at`.
    TimesOut { at: SimTime },
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
    /// (caller, paused process): the caller's requests to it from now on arrive less than the
    /// caller's read timeout before the pause ends, so they are answered late
    /// ([`Faults::answer_late`]); dropped when the pause ends.
    late: Vec<(ProcessId, ProcessId)>,
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
            late: Vec::new(),
            active: false,
        }
    }

    /// Whether any fault has begun in this trial (the messages' fast path checks this only).
    #[inline]
    pub fn active(&self) -> bool {
        self.active
    }

    /// Partition `fault` begins between the processes marked in `a` and those in `b`; it heals
    /// at `heals`.
    pub fn cut(&mut self, fault: usize, a: Vec<bool>, b: Vec<bool>, heals: SimTime) {
        self.active = true;
        self.cuts.push(Cut { fault, a, b, heals });
    }

    /// Partition `fault` ends.
    pub fn heal(&mut self, fault: usize) {
        self.cuts.retain(|c| c.fault != fault);
    }

    /// Whether a message from `from` can reach `to` now: no partition under way separates them.
    pub fn open(&self, from: ProcessId, to: ProcessId) -> bool {
        self.separating(from, to).next().is_none()
    }

    /// The partitions under way between `from` and `to`.
    fn separating(&self, from: ProcessId, to: ProcessId) -> impl Iterator<Item = &Cut> {
        let side = |v: &[bool], p: ProcessId| v.get(p).copied().unwrap_or(false);
        self.cuts.iter().filter(move |c| {
            (side(&c.a, from) && side(&c.b, to)) || (side(&c.b, from) && side(&c.a, to))
        })
    }

    /// A Eureka client's connect from `from` to `to`, whose first SYN left at `began`, asked
    /// at `now` (`began`, or a retransmission it was told to wait for), with the client's
    /// connect timeout `wait_ms` (at most the OS's 127 s). Across a partition the SYN is
    /// dropped; Linux sends it again at the instants of [`SYN_RETRANSMITS_MS`], so a partition
    /// that heals while the connect still waits lets the first retransmission at or after the
    /// heal through, and the connect succeeds then. It fails at `began + wait_ms` if that
    /// retransmission would leave at or after the timeout (the SYN-ACK would come after the
    /// client gave up), or if none is left. A partition that begins after `began` is met at
    /// the next retransmission the same way.
    pub fn connect(
        &self,
        (from, to): (ProcessId, ProcessId),
        began: SimTime,
        now: SimTime,
        wait_ms: u64,
    ) -> Connect {
        let Some(heals) = self.separating(from, to).map(|c| c.heals).max() else {
            return Connect::Open;
        };
        let timeout = began + wait_ms;
        SYN_RETRANSMITS_MS
            .iter()
            .map(|&after| began + after)
            .find(|&at| at > now && at >= heals)
            .filter(|&at| at < timeout)
            .map_or(Connect::TimesOut { at: timeout }, |at| {
                Connect::Retransmit { at }
            })
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

    /// A pause of `p` begins (`true`) or ends: requests sent to it meanwhile are held. Once no
    /// pause holds `p`, nothing is answered late any more.
    pub fn freeze(&mut self, p: ProcessId, frozen: bool) {
        self.active = true;
        if let Some(n) = self.frozen.get_mut(p) {
            *n = if frozen { *n + 1 } else { n.saturating_sub(1) };
            if *n == 0 {
                self.late.retain(|&(_, to)| to != p);
            }
        }
    }

    /// How a connection from `from` to `to` fares, given how `to` answers on its own (`own`,
    /// FACTS.md §7): across a partition the SYN is dropped and the connect times out (whatever
    /// `to` would answer); a paused JVM's kernel still accepts the connection (the listening
    /// socket's backlog completes the handshake without the process), but nothing reads the
    /// request, so the caller's read timeout ends it (`SocketTimeoutException: Read timed
    /// out`), unless the pause ends first: from the instant [`answered_late_from`] on, which the
    /// world marks with [`Faults::answer_late`], the process reads the request when it resumes
    /// (SIGCONT) and answers it late, and the caller gets that answer.
    #[inline]
    pub fn answer(&self, from: ProcessId, to: ProcessId, own: Answer) -> Answer {
        if !self.active {
            return own;
        }
        if !self.open(from, to) {
            return Answer::TimesOut;
        }
        if own == Answer::Accepts
            && self.frozen.get(to).is_some_and(|&n| n > 0)
            && !self.late.contains(&(from, to))
        {
            return Answer::ReadTimesOut;
        }
        own
    }

    /// From now on until `to`'s pause ends, the requests `from` sends it are answered late
    /// ([`answered_late_from`]); the world marks it at that instant, after counting `from`'s
    /// requests up to it.
    pub fn answer_late(&mut self, from: ProcessId, to: ProcessId) {
        if !self.late.contains(&(from, to)) {
            self.late.push((from, to));
        }
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
        f.cut(0, marks(4, &[0]), marks(4, &[2, 3]), SimTime(9_000));
        assert!(f.active());
        assert!(!f.open(0, 2) && !f.open(3, 0));
        assert!(f.open(0, 1) && f.open(1, 2) && f.open(2, 3));
        f.cut(1, marks(4, &[2]), marks(4, &[0]), SimTime(9_000));
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
        f.cut(0, marks(4, &[0]), marks(4, &[2]), SimTime(9_000));
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

    /// Linux's SYN retransmissions (`tcp_retransmit_timer`, initial RTO 1 s doubling,
    /// `tcp_syn_retries` 6) across a partition that heals, for a connect begun at 100 s: they
    /// leave at 101, 103, 107, 115, 131 and 163 s, and the attempt ends at 227 s.
    /// - heals at 110 s, no shorter connect timeout (127 s): the connect gets through at 115 s;
    /// - heals at 110 s, Jersey's 5 s connect timeout: the next SYN (115 s) would leave after
    ///   the timeout, so it fails at 105 s; heals at 103 s: the retransmission at 103 s gets
    ///   through, before the timeout;
    /// - a 15 s connect timeout and a heal at 110 s: the SYN of 115 s leaves as the client gives
    ///   up, so it fails at 115 s;
    /// - heals at 163 s: the last retransmission gets through; at 300 s: none, it fails at 227 s;
    /// - a second partition from 112 s to 140 s is met at the retransmission of 115 s, which
    ///   waits for the first one after 140 s: 163 s.
    #[test]
    fn a_connect_gets_through_at_the_first_syn_retransmission_after_the_heal() {
        let s = SimTime;
        let connect = |heals: u64, wait_ms: u64| {
            let mut f = Faults::new(2, 1);
            f.cut(0, marks(2, &[0]), marks(2, &[1]), s(heals));
            f.connect((0, 1), s(100_000), s(100_000), wait_ms)
        };
        // (heals at, connect timeout, what the connect of 100 s meets)
        for (heals, wait_ms, expected) in [
            (110_000, 127_000, Connect::Retransmit { at: s(115_000) }),
            (110_000, 5_000, Connect::TimesOut { at: s(105_000) }),
            (103_000, 5_000, Connect::Retransmit { at: s(103_000) }),
            (110_000, 15_000, Connect::TimesOut { at: s(115_000) }),
            (163_000, 127_000, Connect::Retransmit { at: s(163_000) }),
            (300_000, 127_000, Connect::TimesOut { at: s(227_000) }),
        ] {
            assert_eq!(
                connect(heals, wait_ms),
                expected,
                "heals {heals}, wait {wait_ms}"
            );
        }

        let mut f = Faults::new(2, 1);
        f.cut(0, marks(2, &[0]), marks(2, &[1]), s(110_000));
        let began = s(100_000);
        assert_eq!(
            f.connect((0, 1), began, began, 127_000),
            Connect::Retransmit { at: s(115_000) }
        );
        f.heal(0);
        assert_eq!(f.connect((1, 0), began, s(105_000), 127_000), Connect::Open);
        f.cut(1, marks(2, &[1]), marks(2, &[0]), s(140_000));
        assert_eq!(
            f.connect((0, 1), began, s(115_000), 127_000),
            Connect::Retransmit { at: s(163_000) }
        );
    }

    /// A process paused from 10 s to 40 s, a caller with a 5 s read timeout: its requests
    /// arriving from 10 s to just before 35 s fail 5 s later (15 s to 40 s, the pause still on),
    /// those from 35 s on are answered when the pause ends at 40 s; the world marks the
    /// caller at 35 s. A pause of 3 s, shorter than the read timeout, answers every request
    /// late. Another caller, not marked, still times out; at the pause's end the mark goes.
    #[test]
    fn a_request_arriving_less_than_a_read_timeout_before_the_pause_ends_is_answered_late() {
        use Answer::{Accepts, ReadTimesOut};
        let s = SimTime;
        assert_eq!(answered_late_from(s(10_000), s(40_000), 5_000), s(35_000));
        assert_eq!(answered_late_from(s(10_000), s(13_000), 5_000), s(10_000));
        let mut f = Faults::new(3, 1);
        f.pause(2, s(40_000));
        f.freeze(2, true);
        assert_eq!(f.answer(0, 2, Accepts), ReadTimesOut, "at 34.999 s");
        f.answer_late(0, 2);
        assert_eq!(
            f.answer(0, 2, Accepts),
            Accepts,
            "at 35 s: answered at 40 s"
        );
        assert_eq!(f.answer(1, 2, Accepts), ReadTimesOut, "another caller");
        f.freeze(2, false);
        f.freeze(2, true);
        assert_eq!(f.answer(0, 2, Accepts), ReadTimesOut, "a new pause");
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
