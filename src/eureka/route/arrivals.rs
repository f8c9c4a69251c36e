//! A route's request stream: a Poisson stream (the default) or requests at a fixed rate.

use crate::engine::RngStream;

/// When a route's requests arrive, in microseconds of simulated time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps with this mean.
    Poisson { mean_gap_us: f64 },
    /// Exactly `gap_us` apart from the first request at `first_us`; `counted` is the index of
    /// the last request already accounted for (the first one is index 0). Kept as an index so
    /// that the grid is never counted twice through rounding.
    Fixed {
        gap_us: f64,
        first_us: f64,
        counted: u64,
    },
}

/// The requests of one counted interval `(from, from + span]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountedSpan {
    pub requests: u64,
    from: f64,
    span: f64,
    /// Fixed rate: the grid index of the request before the first one of the span.
    base: u64,
}

impl Arrivals {
    /// The stream of a caller sending `rate_per_s` requests per second (`None` at rate 0).
    pub fn new(rate_per_s: f64, fixed: bool) -> Option<Arrivals> {
        if rate_per_s <= 0.0 || !rate_per_s.is_finite() {
            return None;
        }
        let gap = 1e6 / rate_per_s;
        Some(if fixed {
            Arrivals::Fixed {
                gap_us: gap,
                first_us: 0.0,
                counted: 0,
            }
        } else {
            Arrivals::Poisson { mean_gap_us: gap }
        })
    }

    /// From the start of traffic to the first request: an exponential gap, or a uniformly
    /// random phase of the fixed grid.
    pub fn first_gap(&self, rng: &mut RngStream) -> f64 {
        match *self {
            Arrivals::Poisson { mean_gap_us } => rng.exponential(mean_gap_us),
            Arrivals::Fixed { gap_us, .. } => gap_us * rng.unit(),
        }
    }

    /// Records the first request's instant (the fixed grid's origin).
    pub fn anchor(&mut self, first: f64) {
        if let Arrivals::Fixed {
            first_us, counted, ..
        } = self
        {
            *first_us = first;
            *counted = 0;
        }
    }

    /// The gap to the next request (per-request mode).
    pub fn next_gap(&self, rng: &mut RngStream) -> f64 {
        match *self {
            Arrivals::Poisson { mean_gap_us } => rng.exponential(mean_gap_us),
            Arrivals::Fixed { gap_us, .. } => gap_us,
        }
    }

    /// Counts the requests in `(from, until]`, which must follow the previously counted span.
    pub fn count(&mut self, rng: &mut RngStream, from: f64, until: f64) -> CountedSpan {
        let span = until - from;
        match self {
            Arrivals::Poisson { mean_gap_us } => CountedSpan {
                requests: rng.poisson(span / *mean_gap_us),
                from,
                span,
                base: 0,
            },
            Arrivals::Fixed {
                gap_us,
                first_us,
                counted,
            } => {
                let base = *counted;
                let last = last_at_or_before(*gap_us, *first_us, until).max(base);
                *counted = last;
                CountedSpan {
                    requests: last - base,
                    from,
                    span,
                    base,
                }
            }
        }
    }

    /// The next request after `from` if it comes by `limit` (it is then counted); `None`
    /// otherwise (a Poisson stream may restart from `limit`: it has no memory).
    pub fn next_within(&mut self, rng: &mut RngStream, from: f64, limit: f64) -> Option<f64> {
        match self {
            Arrivals::Poisson { mean_gap_us } => {
                let at = from + rng.exponential(*mean_gap_us);
                (at <= limit).then_some(at)
            }
            Arrivals::Fixed {
                gap_us,
                first_us,
                counted,
            } => {
                let at = *first_us + (*counted + 1) as f64 * *gap_us;
                (at <= limit).then(|| {
                    *counted += 1;
                    at
                })
            }
        }
    }

    /// The instants of requests `indices` (1-based within `span`, one per entry): drawn from the
    /// uniform order statistics for a Poisson stream (given their number, arrival times are
    /// uniform over the span), read off the grid at a fixed rate.
    pub fn times_of(&self, rng: &mut RngStream, span: &CountedSpan, indices: &[u64]) -> Vec<f64> {
        match *self {
            Arrivals::Poisson { .. } => {
                let n = span.requests;
                let deepest = indices.iter().map(|&i| n - i + 1).max().unwrap_or(0);
                let tops = rng.top_uniform_order_statistics(n, deepest);
                indices
                    .iter()
                    .map(|&i| span.from + tops[(n - i) as usize] * span.span)
                    .collect()
            }
            Arrivals::Fixed {
                gap_us, first_us, ..
            } => indices
                .iter()
                .map(|&i| first_us + (span.base + i) as f64 * gap_us)
                .collect(),
        }
    }
}

/// The instants of a counted span's requests read from the last one backwards, for the
/// requests in flight at a stop ([`super::inflight`]). Given their number, the arrivals of a
/// Poisson span are uniform on it, so request `i` of `K` is at the `i`-th uniform order
/// statistic; they are drawn from the top (`U(K) = V^(1/K)`, `U(k-1) = U(k) V^(1/(k-1))`,
/// as [`RngStream::top_uniform_order_statistics`]) and kept, so every later question about the
/// same span sees the same instants.
#[derive(Debug, Clone, PartialEq)]
pub enum SpanTimes {
    /// Poisson: `drawn[j]` is the order statistic (on `[0, 1)`) of request `K - j`.
    Uniform {
        from: f64,
        span: f64,
        requests: u64,
        drawn: Vec<f64>,
    },
    /// Fixed rate: request `i` is at `first + (base + i) * gap`.
    Grid { first: f64, gap: f64, base: u64 },
}

impl SpanTimes {
    /// The instant of request `i` (1-based) of the span.
    pub fn time_of(&mut self, rng: &mut RngStream, i: u64) -> f64 {
        match self {
            SpanTimes::Uniform {
                from,
                span,
                requests,
                drawn,
            } => {
                let depth = (*requests - i) as usize;
                while drawn.len() <= depth {
                    let k = *requests - drawn.len() as u64;
                    let above = drawn.last().copied().unwrap_or(1.0);
                    drawn.push(above * (1.0 - rng.unit()).powf(1.0 / k as f64));
                }
                *from + drawn[depth] * *span
            }
            SpanTimes::Grid { first, gap, base } => *first + (*base + i) as f64 * *gap,
        }
    }
}

impl Arrivals {
    /// How to read the instants of `span`'s requests (see [`SpanTimes`]).
    pub fn span_times(&self, span: &CountedSpan) -> SpanTimes {
        match *self {
            Arrivals::Poisson { .. } => SpanTimes::Uniform {
                from: span.from,
                span: span.span,
                requests: span.requests,
                drawn: Vec::new(),
            },
            Arrivals::Fixed {
                gap_us, first_us, ..
            } => SpanTimes::Grid {
                first: first_us,
                gap: gap_us,
                base: span.base,
            },
        }
    }
}

/// The index of the last grid point `first + k * gap` at or before `x` (0 before the grid).
fn last_at_or_before(gap: f64, first: f64, x: f64) -> u64 {
    if x <= first {
        return 0;
    }
    let mut k = ((x - first) / gap).floor() as u64;
    // The division may round either way; settle on the grid points themselves.
    while first + (k + 1) as f64 * gap <= x {
        k += 1;
    }
    while k > 0 && first + k as f64 * gap > x {
        k -= 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;

    /// Consecutive spans partition the grid: every request is counted once, whatever the cuts.
    #[test]
    fn fixed_rate_spans_count_each_request_once() {
        let mut rng = StreamFactory::new(1).stream("t");
        let mut a = Arrivals::new(3.0, true).unwrap();
        a.anchor(1_000.0);
        let gap = 1e6 / 3.0;
        // Cut exactly on grid points and between them.
        let cuts = [
            1_000.0,
            1_000.0 + gap,
            1_000.0 + 2.5 * gap,
            1_000.0 + 7.0 * gap,
        ];
        let total: u64 = cuts
            .windows(2)
            .map(|w| a.count(&mut rng, w[0], w[1]).requests)
            .sum();
        assert_eq!(total, 7);
        assert_eq!(
            a.next_within(&mut rng, cuts[3], cuts[3] + gap),
            Some(1_000.0 + 8.0 * gap)
        );
        assert_eq!(a.next_within(&mut rng, 0.0, 1_000.0 + 8.5 * gap), None);
    }

    /// The times of a fixed-rate span are its grid points.
    #[test]
    fn fixed_rate_times_are_the_grid() {
        let mut rng = StreamFactory::new(1).stream("t");
        let mut a = Arrivals::new(10.0, true).unwrap();
        a.anchor(50.0);
        a.count(&mut rng, 50.0, 250_000.0); // requests 1 and 2
        let span = a.count(&mut rng, 250_000.0, 650_000.0);
        assert_eq!(span.requests, 4);
        assert_eq!(a.times_of(&mut rng, &span, &[1, 4]), [300_050.0, 600_050.0]);
    }
}
