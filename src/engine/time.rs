//! Simulated time: integer milliseconds since the start of a trial.

use std::fmt;
use std::ops::{Add, AddAssign};

/// An instant of simulated time, in milliseconds since the trial started.
///
/// Integer milliseconds keep every comparison exact (Eureka's own arithmetic is in ms, and the
/// lease rule `now > lastUpdate + duration` is strict, so a float would blur it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub fn ms(self) -> u64 {
        self.0
    }

    pub fn from_secs(s: u64) -> SimTime {
        SimTime(s * 1000)
    }

    /// Signed milliseconds from `origin` to `self` (negative when `self` is earlier).
    pub fn since(self, origin: SimTime) -> i64 {
        self.0 as i64 - origin.0 as i64
    }

    /// Milliseconds elapsed since `earlier`, 0 if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// Saturating: a delay drawn from a tiny rate (an exponential gap of 1/5e-7 s, a float that
/// became `u64::MAX`) lands at the end of time instead of wrapping around to the past, and the
/// queue never schedules anything that late ([`EventQueue::schedule`]).
///
/// [`EventQueue::schedule`]: super::EventQueue::schedule
impl Add<u64> for SimTime {
    type Output = SimTime;
    fn add(self, ms: u64) -> SimTime {
        SimTime(self.0.saturating_add(ms))
    }
}

impl AddAssign<u64> for SimTime {
    fn add_assign(&mut self, ms: u64) {
        self.0 = self.0.saturating_add(ms);
    }
}

impl fmt::Display for SimTime {
    /// Seconds with millisecond precision: `312.045s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_display() {
        let t = SimTime::from_secs(90) + 5;
        assert_eq!(t.ms(), 90_005);
        assert_eq!(t.to_string(), "90.005s");
        assert_eq!(SimTime(10).since(SimTime(25)), -15);
        assert_eq!(SimTime(10).saturating_since(SimTime(25)), 0);
    }

    /// Found by fuzzing: `rate-per-s = 5e-7` drew gaps near `u64::MAX` ms; adding one must not wrap.
    #[test]
    fn adding_saturates_at_the_end_of_time() {
        assert_eq!((SimTime(5) + u64::MAX).ms(), u64::MAX);
        let mut t = SimTime(u64::MAX - 1);
        t += 10;
        assert_eq!(t.ms(), u64::MAX);
    }
}
