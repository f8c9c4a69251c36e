//! A registration lease (FACTS.md §1, `core/lease/Lease.java`).

use crate::engine::SimTime;

/// One lease as the server holds it.
///
/// The arithmetic is Eureka's, including its admitted bug: `renew()` sets the last-update stamp to
/// `now + duration` and `isExpired()` adds the duration once more, so a renewed lease expires
/// `2 * duration` after its last renew, while a fresh (never renewed) lease expires `duration`
/// after registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub registration: SimTime,
    pub last_update: SimTime,
    pub duration_ms: u64,
    pub eviction: Option<SimTime>,
    /// Whether `renew()` ran since the lease was created (for explanations only).
    pub renewed: bool,
}

impl Lease {
    /// `Lease#Lease(T, int)`: `registrationTimestamp = now; lastUpdateTimestamp = now`. A fresh
    /// lease is NOT stamped `now + duration`.
    pub fn new(now: SimTime, duration_ms: u64) -> Lease {
        Lease {
            registration: now,
            last_update: now,
            duration_ms,
            eviction: None,
            renewed: false,
        }
    }

    /// `Lease#renew`: `lastUpdateTimestamp = now + duration`.
    pub fn renew(&mut self, now: SimTime) {
        self.last_update = now + self.duration_ms;
        self.renewed = true;
    }

    /// Steady start: the lease as its last `renew()` at `renewed_at_ms` (before time 0, so
    /// possibly negative) left it, `lastUpdateTimestamp = renewed_at + duration` (clamped at 0,
    /// the earliest instant the simulation knows).
    pub fn renewed_before(renewed_at_ms: i64, duration_ms: u64) -> Lease {
        let last_update = (renewed_at_ms + duration_ms as i64).max(0) as u64;
        Lease {
            registration: SimTime(0),
            last_update: SimTime(last_update),
            duration_ms,
            eviction: None,
            renewed: true,
        }
    }

    /// `Lease#cancel`: the first cancel wins.
    pub fn cancel(&mut self, now: SimTime) {
        if self.eviction.is_none() {
            self.eviction = Some(now);
        }
    }

    /// `Lease#isExpired(additionalLeaseMs)`:
    /// `evictionTimestamp > 0 || now > lastUpdateTimestamp + duration + additionalLeaseMs`
    /// (strict `>`).
    pub fn is_expired(&self, now: SimTime, additional_ms: u64) -> bool {
        self.eviction.is_some()
            || now.ms() > self.last_update.ms() + self.duration_ms + additional_ms
    }

    /// The first millisecond at which `is_expired(_, 0)` holds.
    pub fn expirable_from(&self) -> SimTime {
        SimTime(self.last_update.ms() + self.duration_ms + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: u64 = 90_000;

    /// Steady start: a lease last renewed 20 s before time 0 holds `lastUpdateTimestamp` =
    /// -20 + 90 = 70 s and is expirable from 70 + 90 s + 1 ms (the renewed form, not a fresh
    /// registration's 90 s); one renewed longer ago than its duration is clamped at 0.
    #[test]
    fn a_lease_renewed_before_time_0() {
        let lease = Lease::renewed_before(-20_000, 90_000);
        assert_eq!(lease.last_update, SimTime(70_000));
        assert_eq!(lease.expirable_from(), SimTime(160_001));
        assert!(lease.renewed);
        assert_eq!(
            Lease::renewed_before(-100_000, 90_000).last_update,
            SimTime(0)
        );
    }

    #[test]
    fn fresh_lease_expires_one_duration_after_registration() {
        let lease = Lease::new(SimTime(1_000), D);
        assert!(
            !lease.is_expired(SimTime(1_000 + D), 0),
            "strict > at the boundary"
        );
        assert!(lease.is_expired(SimTime(1_000 + D + 1), 0));
        assert_eq!(lease.expirable_from(), SimTime(1_000 + D + 1));
    }

    #[test]
    fn renewed_lease_expires_two_durations_after_last_renew() {
        // Lease#isExpired Javadoc: "the expiry will actually be 2 * duration".
        let mut lease = Lease::new(SimTime(0), D);
        lease.renew(SimTime(30_000));
        assert!(!lease.is_expired(SimTime(30_000 + 2 * D), 0));
        assert!(lease.is_expired(SimTime(30_000 + 2 * D + 1), 0));
    }

    #[test]
    fn compensation_lengthens_the_lease() {
        let mut lease = Lease::new(SimTime(0), D);
        lease.renew(SimTime(0));
        assert!(!lease.is_expired(SimTime(2 * D + 5), 10));
        assert!(lease.is_expired(SimTime(2 * D + 11), 10));
    }

    #[test]
    fn first_cancel_wins_and_expires_at_once() {
        let mut lease = Lease::new(SimTime(0), D);
        lease.cancel(SimTime(5));
        lease.cancel(SimTime(9));
        assert_eq!(lease.eviction, Some(SimTime(5)));
        assert!(lease.is_expired(SimTime(6), 0));
    }
}
