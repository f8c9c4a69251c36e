//! Renews in the last minute (FACTS.md §2.6, `core/util/MeasuredRate.java`).

/// Two counters: renews go to the current bucket; a fixed-delay timer rolls it every 60 s into the
/// last bucket, which is what `getCount()` returns: the count of the last COMPLETE window, 0 until
/// the first roll.
#[derive(Debug, Clone, Default)]
pub struct MeasuredRate {
    current: u64,
    last: u64,
}

impl MeasuredRate {
    /// `MeasuredRate#increment`.
    pub fn increment(&mut self) {
        self.current += 1;
    }

    /// The roll timer's task: `lastBucket = currentBucket.getAndSet(0)`.
    pub fn roll(&mut self) {
        self.last = std::mem::take(&mut self.current);
    }

    /// Steady start: the counts a long history left, `last` in the last complete window and
    /// `current` since the last roll.
    pub fn restore(&mut self, last: u64, current: u64) {
        self.last = last;
        self.current = current;
    }

    /// The renews counted since the last roll.
    pub fn current(&self) -> u64 {
        self.current
    }

    /// `MeasuredRate#getCount`.
    pub fn count(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_is_the_last_complete_window() {
        let mut rate = MeasuredRate::default();
        rate.increment();
        rate.increment();
        assert_eq!(rate.count(), 0, "0 until the first roll");
        rate.roll();
        assert_eq!(rate.count(), 2);
        rate.increment();
        assert_eq!(rate.count(), 2, "the running window is not counted");
        rate.roll();
        assert_eq!(rate.count(), 1);
    }
}
