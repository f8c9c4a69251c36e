//! The on-demand update rate limiter (FACTS.md §5.4, `client/util/RateLimiter.java`).

/// Token bucket over wall-clock milliseconds with `TimeUnit.MINUTES` (60 000 ms per rate unit).
/// `InstanceInfoReplicator` uses burst 2 and `60 * 2 / replicationIntervalSeconds` per minute, i.e.
/// one token back every 15 s at defaults.
#[derive(Debug, Clone, Default)]
pub struct RateLimiter {
    consumed_tokens: u64,
    last_refill_time: u64,
}

const RATE_TO_MS_CONVERSION: u64 = 60_000;

impl RateLimiter {
    /// `RateLimiter#acquire(burstSize, averageRate, currentTimeMillis)`.
    pub fn acquire(&mut self, burst_size: u64, average_rate: u64, now_wall_ms: u64) -> bool {
        if burst_size == 0 || average_rate == 0 {
            return true;
        }
        self.refill_token(burst_size, average_rate, now_wall_ms);
        self.consume_token(burst_size)
    }

    /// `RateLimiter#refillToken`: whole tokens only; the refill time advances by the time those
    /// tokens took, so fractions carry over. The very first refill (stamp 0) just starts the clock.
    fn refill_token(&mut self, burst_size: u64, average_rate: u64, now_wall_ms: u64) {
        let refill_time = self.last_refill_time;
        let time_delta = now_wall_ms.saturating_sub(refill_time);
        let new_tokens = time_delta * average_rate / RATE_TO_MS_CONVERSION;
        if new_tokens > 0 {
            self.last_refill_time = if refill_time == 0 {
                now_wall_ms
            } else {
                refill_time + new_tokens * RATE_TO_MS_CONVERSION / average_rate
            };
            let adjusted_level = self.consumed_tokens.min(burst_size);
            self.consumed_tokens = adjusted_level.saturating_sub(new_tokens);
        }
    }

    /// `RateLimiter#consumeToken`.
    fn consume_token(&mut self, burst_size: u64) -> bool {
        if self.consumed_tokens >= burst_size {
            return false;
        }
        self.consumed_tokens += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPOCH: u64 = 1_700_000_000_000;

    /// RateLimiterTest#testBursts: burst of 2 passes, the 3rd at the same instant fails, one token
    /// returns after one average step (15 s at 4 per minute).
    #[test]
    fn bursts_then_one_token_per_step() {
        let mut limiter = RateLimiter::default();
        assert!(limiter.acquire(2, 4, EPOCH));
        assert!(limiter.acquire(2, 4, EPOCH));
        assert!(!limiter.acquire(2, 4, EPOCH));
        assert!(!limiter.acquire(2, 4, EPOCH + 14_999));
        assert!(limiter.acquire(2, 4, EPOCH + 15_000));
        assert!(!limiter.acquire(2, 4, EPOCH + 15_001));
    }

    /// RateLimiterTest#testEvenLoad: a steady load at the average rate always passes.
    #[test]
    fn even_load_at_the_average_rate_passes() {
        let mut limiter = RateLimiter::default();
        for k in 0..20 {
            assert!(limiter.acquire(2, 4, EPOCH + k * 15_000), "call {k}");
        }
    }
}
