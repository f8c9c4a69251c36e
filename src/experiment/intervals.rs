//! How many trials a percentile needs, and the 95 % intervals the reports give.
//!
//! **Quantiles: distribution-free order-statistic intervals.** With `n` values from any
//! continuous distribution, the number `B` of values at or below the `p`-quantile `q_p` is
//! Binomial(n, p), so for ranks `l < u` of the sorted values
//!
//! ```text
//! P(X(l) <= q_p < X(u)) = P(l <= B <= u - 1) = sum_{i=l}^{u-1} C(n, i) p^i (1 - p)^(n - i)
//! ```
//!
//! whatever the distribution (Conover, *Practical Nonparametric Statistics*, 3rd ed., 1999,
//! §3.2, "confidence interval for a quantile"; David & Nagaraja, *Order Statistics*, 3rd ed.,
//! 2003, §7.1). [`quantile_ranks95`] picks the ranks with the sums computed exactly (in log
//! space, so `n` up to 10^6 neither overflows nor underflows where it matters), about 2.5 % in
//! each tail, and moves what one tail cannot use to the other.
//!
//! **When a percentile is shown.** The widest such interval is `[X(1), X(n)]`, with coverage
//! `1 - p^n - (1 - p)^n`. Below the smallest `n` where that reaches 95 % no sample of `n` values
//! can bound the `p`-quantile at 95 % confidence, so the reports do not give the percentile; they
//! say how many trials it needs ([`trials_for_percentile`]): p50 6, p90 29, p95 59, p99 299,
//! p99.9 2995. The upper half is Wilks' sample size for a one-sided tolerance bound (S. S. Wilks,
//! "Determination of sample sizes for setting tolerance limits", *Ann. Math. Statist.* 12 (1),
//! 1941, 91-96: 59 values for 95 % of the population at 95 % confidence).
//!
//! **Means: Student t-interval.** `mean ± t(0.975, n - 1) s / sqrt(n)`, `s` the sample standard
//! deviation; it needs `n >= 2`. Its t quantile is exact for up to 200 degrees of freedom
//! (Abramowitz & Stegun 26.7.3-4, the closed form of the t distribution for integer degrees,
//! inverted by bisection) and the Cornish-Fisher series of A&S 26.7.5 beyond (error < 1e-9).

use std::sync::OnceLock;

/// The confidence of every interval here.
pub const CONFIDENCE: f64 = 0.95;

/// Tolerance for comparing a computed probability with a bound (rounding only).
const EPS: f64 = 1e-12;

/// The ranks (1-based, into the sorted values) of a 95 % order-statistic interval of a quantile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileRanks {
    pub lower: usize,
    pub upper: usize,
    /// `P(X(lower) <= q_p < X(upper))` for any continuous distribution (>= 0.95).
    pub coverage: f64,
}

/// The smallest number of values from which the `percent` percentile (`99.9` for p99.9) has a
/// 95 % distribution-free interval: the least `n` with `1 - p^n - (1 - p)^n >= 0.95`. `None`
/// when no number of values suffices (`p` = 0 or 100: the minimum and the maximum are observed
/// extremes, with no interval).
pub fn trials_for_percentile(percent: f64) -> Option<usize> {
    let p = percent / 100.0;
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    let worst = p.max(1.0 - p);
    // `worst^n <= 0.05` is needed; start just below where it holds and step up.
    let guess = ((1.0 - CONFIDENCE).ln() / worst.ln()).floor();
    if !guess.is_finite() || guess > 1e9 {
        return None;
    }
    let mut n = (guess as usize).saturating_sub(2).max(2);
    while widest_coverage(n, p) < CONFIDENCE - EPS {
        n += 1;
    }
    Some(n)
}

/// `1 - p^n - (1 - p)^n`: the coverage of `[X(1), X(n)]` for the `p`-quantile.
fn widest_coverage(n: usize, p: f64) -> f64 {
    let n = n as f64;
    1.0 - (n * p.ln()).exp() - (n * (1.0 - p).ln()).exp()
}

/// The ranks of a 95 % interval of the `percent` percentile from `n` sorted values; `None` when
/// `n` is below [`trials_for_percentile`].
pub fn quantile_ranks95(n: usize, percent: f64) -> Option<QuantileRanks> {
    let p = percent / 100.0;
    if n < 2 || !(p > 0.0 && p < 1.0) {
        return None;
    }
    let alpha = 1.0 - CONFIDENCE;
    let pmf = binomial_pmf(n, p);
    // below[k] = P(B <= k), summed from 0; above[k] = P(B >= k), summed from n (no cancellation).
    let mut below = Vec::with_capacity(n + 1);
    let mut sum = 0.0;
    for &f in &pmf {
        sum += f;
        below.push(sum);
    }
    let mut above = vec![0.0; n + 2];
    for k in (0..=n).rev() {
        above[k] = above[k + 1] + pmf[k];
    }
    // The smallest tails there are: rank 1 below (`P(B = 0)`), rank n above (`P(B = n)`).
    let (least_low, least_high) = (below[0], above[n]);
    if least_low + least_high > alpha + EPS {
        return None;
    }
    let (low_budget, high_budget) = if least_high > alpha / 2.0 {
        (alpha - least_high, least_high)
    } else if least_low > alpha / 2.0 {
        (least_low, alpha - least_low)
    } else {
        (alpha / 2.0, alpha / 2.0)
    };
    // The largest l with P(B <= l - 1) within budget; the smallest u with P(B >= u) within it.
    let lower = (1..=n)
        .take_while(|&l| below[l - 1] <= low_budget + EPS)
        .last()
        .unwrap_or(1);
    let upper = (1..=n)
        .find(|&u| above[u] <= high_budget + EPS)
        .unwrap_or(n);
    let coverage = 1.0 - below[lower - 1] - above[upper];
    (lower < upper && coverage >= CONFIDENCE - EPS).then_some(QuantileRanks {
        lower,
        upper,
        coverage,
    })
}

/// The Binomial(n, p) probabilities `P(B = k)`, `k = 0..=n`. Built in log space outward from the
/// mode by the ratio of neighbours, `f(k + 1) / f(k) = (n - k) / (k + 1) * p / (1 - p)`, and
/// normalised by their sum: no factorial is formed, and terms far in the tails underflow to 0
/// harmlessly. `0 < p < 1`.
fn binomial_pmf(n: usize, p: f64) -> Vec<f64> {
    let odds = (p / (1.0 - p)).ln();
    let mode = (((n + 1) as f64 * p).floor() as usize).min(n);
    let mut log = vec![0.0f64; n + 1];
    for k in mode + 1..=n {
        log[k] = log[k - 1] + ((n - k + 1) as f64 / k as f64).ln() + odds;
    }
    for k in (0..mode).rev() {
        log[k] = log[k + 1] + ((k + 1) as f64 / (n - k) as f64).ln() - odds;
    }
    let mut pmf: Vec<f64> = log.iter().map(|l| l.exp()).collect();
    let total: f64 = pmf.iter().sum();
    for f in &mut pmf {
        *f /= total;
    }
    pmf
}

/// The 95 % Student t-interval of the mean of `values`; `None` for fewer than two.
pub fn mean_t_interval95(values: &[i64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / nf;
    let var = values
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        / (nf - 1.0);
    let half = t_quantile975(n - 1) * (var / nf).sqrt();
    Some((mean - half, mean + half))
}

/// `t(0.975, dof)`: the two-sided 95 % quantile of Student's t with `dof >= 1` degrees of
/// freedom (12.706 for 1, 2.262 for 9, 1.984 for 100, 1.96 in the limit).
///
/// Each `dof` up to 200 is solved once per process and kept: a run's summary asks for the same
/// one for every metric and view (about 80 times for 200 trials, 8 M instructions under callgrind
/// when each call solved it again: a quarter of `run`'s cost outside the simulation).
pub fn t_quantile975(dof: usize) -> f64 {
    static SOLVED: [OnceLock<f64>; EXACT_DOF + 1] = [const { OnceLock::new() }; EXACT_DOF + 1];
    let dof = dof.max(1);
    match SOLVED.get(dof) {
        Some(solved) => *solved.get_or_init(|| solve_t_quantile975(dof)),
        None => cornish_fisher975(dof as f64),
    }
}

/// Up to this many degrees of freedom `t_quantile975` solves the exact distribution; above, the
/// Cornish-Fisher series agrees to 1e-8.
const EXACT_DOF: usize = 200;

/// `t(0.975, dof)` by bisection of the exact distribution.
fn solve_t_quantile975(dof: usize) -> f64 {
    // P(|T| < t) grows with t: bisection on [0, 1000] (t(0.975, 1) = 12.7), until the interval
    // is two adjacent floats (about 60 halvings): a further step would change nothing.
    let (mut lo, mut hi) = (0.0f64, 1000.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            break;
        }
        if central_t_probability(mid, dof) < CONFIDENCE {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `P(-t < T < t)` for Student's t with `dof` degrees of freedom (A&S 26.7.3 for odd, 26.7.4
/// for even `dof`), with `theta = atan(t / sqrt(dof))`.
fn central_t_probability(t: f64, dof: usize) -> f64 {
    let theta = (t / (dof as f64).sqrt()).atan();
    let (sin, cos) = theta.sin_cos();
    let cos2 = cos * cos;
    if dof % 2 == 1 {
        // (2/pi) [theta + sin (cos + 2/3 cos^3 + ... + (2.4...(dof-3))/(1.3...(dof-2)) cos^(dof-2))]
        let mut series = 0.0;
        if dof > 1 {
            let mut term = cos;
            series = term;
            for k in (3..=dof - 2).step_by(2) {
                term *= (k - 1) as f64 / k as f64 * cos2;
                series += term;
            }
        }
        2.0 / std::f64::consts::PI * (theta + sin * series)
    } else {
        // sin [1 + 1/2 cos^2 + (1.3)/(2.4) cos^4 + ... + (1.3...(dof-3))/(2.4...(dof-2)) cos^(dof-2)]
        let mut term = 1.0;
        let mut series = 1.0;
        for k in (2..=dof - 2).step_by(2) {
            term *= (k - 1) as f64 / k as f64 * cos2;
            series += term;
        }
        sin * series
    }
}

/// A&S 26.7.5: `t ≈ z + g1/v + g2/v^2 + g3/v^3 + g4/v^4` with `z` the normal 0.975 quantile.
fn cornish_fisher975(v: f64) -> f64 {
    let z: f64 = 1.959_963_984_540_054;
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    let g4 = (79.0 * z.powi(9) + 776.0 * z.powi(7) + 1482.0 * z.powi(5)
        - 1920.0 * z.powi(3)
        - 945.0 * z)
        / 92160.0;
    z + g1 / v + g2 / v.powi(2) + g3 / v.powi(3) + g4 / v.powi(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binomial table: B ~ Binomial(20, 1/2), P(B <= 5) = P(B >= 15) = 0.0207, so the median
    /// of 20 values lies in [X(6), X(15)] with probability 1 - 2 x 0.0207 = 0.9586.
    #[test]
    fn median_of_20_values_is_between_ranks_6_and_15() {
        let r = quantile_ranks95(20, 50.0).unwrap();
        assert_eq!((r.lower, r.upper), (6, 15));
        assert!((r.coverage - 0.958_610_5).abs() < 1e-6, "{}", r.coverage);
    }

    /// p90 of 200 values, against a binomial sum computed here the plain way (each term as a
    /// product of f64 factors: C(200, k) < 1e59 and 0.1^200 = 1e-200 both fit).
    #[test]
    fn p90_of_200_values_matches_a_direct_binomial_sum() {
        let (n, p) = (200usize, 0.9f64);
        let term = |k: usize| {
            let mut c = 1.0f64;
            for i in 0..k {
                c = c * (n - i) as f64 / (i + 1) as f64;
            }
            c * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
        };
        let below = |k: usize| (0..=k).map(term).sum::<f64>();
        let above = |k: usize| (k..=n).map(term).sum::<f64>();
        let lower = (1..=n).filter(|&l| below(l - 1) <= 0.025).max().unwrap();
        let upper = (1..=n).filter(|&u| above(u) <= 0.025).min().unwrap();
        let coverage = 1.0 - below(lower - 1) - above(upper);
        let r = quantile_ranks95(n, 90.0).unwrap();
        assert_eq!((r.lower, r.upper), (lower, upper));
        // Worked out once with Python's math.comb: P(B <= 170) = 0.016327, P(B >= 189) =
        // 0.016790, so ranks 171 and 189, coverage 0.96688.
        assert_eq!((r.lower, r.upper), (171, 189));
        assert!((r.coverage - coverage).abs() < 1e-9);
        assert!((r.coverage - 0.966_884).abs() < 1e-6, "{}", r.coverage);
    }

    /// 1 - p^n - (1 - p)^n >= 0.95: p50 needs 6 (1 - 2/64 = 0.969; with 5, 0.9375), p90 29
    /// (0.9^28 = 0.052, 0.9^29 = 0.047), p95 59 (Wilks 1941), p99 299, p99.9 2995.
    #[test]
    fn trials_needed_for_each_percentile() {
        assert_eq!(trials_for_percentile(50.0), Some(6));
        assert_eq!(trials_for_percentile(90.0), Some(29));
        assert_eq!(trials_for_percentile(95.0), Some(59));
        assert_eq!(trials_for_percentile(99.0), Some(299));
        assert_eq!(trials_for_percentile(99.9), Some(2995));
        assert_eq!(trials_for_percentile(10.0), Some(29));
        assert_eq!(trials_for_percentile(100.0), None);
        assert_eq!(trials_for_percentile(0.0), None);
    }

    /// An interval exists from exactly the number of trials the percentile needs on, and then
    /// rests on the extremes with what one tail cannot use moved to the other.
    #[test]
    fn intervals_exist_from_the_trials_needed_on() {
        for p in [50.0, 90.0, 99.0, 99.9] {
            let needed = trials_for_percentile(p).unwrap();
            assert_eq!(quantile_ranks95(needed - 1, p), None, "p{p}");
            let r = quantile_ranks95(needed, p).unwrap();
            assert!(r.coverage >= 0.95, "p{p}: {r:?}");
        }
        // p90 of 29: the upper tail cannot go below P(B = 29) = 0.9^29 = 0.0471, so the upper
        // end is X(29) and the lower tail gets what is left, 0.05 - 0.0471 = 0.0029: P(B <= 20)
        // = 0.00155 fits, P(B <= 21) does not, so [X(21), X(29)], coverage 0.95135 (math.comb).
        let r = quantile_ranks95(29, 90.0).unwrap();
        assert_eq!((r.lower, r.upper), (21, 29));
        assert!((r.coverage - 0.951_348_5).abs() < 1e-6, "{}", r.coverage);
        assert_eq!(quantile_ranks95(1, 50.0), None);
        assert_eq!(quantile_ranks95(0, 50.0), None);
    }

    /// Large n: no overflow or underflow, ranks near n p ± 1.96 sqrt(n p (1 - p)), coverage 95 %.
    #[test]
    fn a_million_values_give_ranks_near_the_normal_ones() {
        let n = 1_000_000;
        for p in [0.5, 0.99, 0.999] {
            let r = quantile_ranks95(n, p * 100.0).unwrap();
            let (centre, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
            assert!(
                (r.lower as f64 - (centre - 1.96 * sd)).abs() < 3.0,
                "{p}: {r:?}"
            );
            assert!(
                (r.upper as f64 - (centre + 1.96 * sd)).abs() < 3.0,
                "{p}: {r:?}"
            );
            assert!(r.coverage >= 0.95 && r.coverage < 0.951, "{p}: {r:?}");
        }
    }

    /// Student's t table (two-sided 95 %): 12.706, 4.303, 3.182, 2.776, 2.571; 2.228 (10),
    /// 2.042 (30), 1.984 (100), 1.972 (200), 1.962 (1000).
    #[test]
    fn t_quantiles_match_the_table() {
        let table = [
            (1, 12.706),
            (2, 4.303),
            (3, 3.182),
            (4, 2.776),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (100, 1.984),
            (200, 1.972),
            (201, 1.972),
            (1000, 1.962),
        ];
        for (dof, t) in table {
            let got = t_quantile975(dof);
            assert!((got - t).abs() < 5e-4, "dof {dof}: {got}");
        }
        // Where the exact form hands over to the series, they agree.
        assert!((t_quantile975(200) - cornish_fisher975(200.0)).abs() < 1e-8);
    }

    /// Stopping the bisection once the interval is two adjacent floats, and keeping each
    /// answer, changes no bit: every dof gives what 200 full halvings give.
    #[test]
    fn the_early_stop_and_the_memo_change_no_bit() {
        let full = |dof: usize| {
            let (mut lo, mut hi) = (0.0f64, 1000.0f64);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if central_t_probability(mid, dof) < CONFIDENCE {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        };
        for dof in 1..=EXACT_DOF {
            let expected = full(dof).to_bits();
            assert_eq!(t_quantile975(dof).to_bits(), expected, "dof {dof}");
            assert_eq!(t_quantile975(dof).to_bits(), expected, "dof {dof}, kept");
        }
    }

    /// Values 0, 2, 4, 6, 8: mean 4, s = sqrt(10), half-width t(0.975, 4) sqrt(10 / 5).
    #[test]
    fn mean_interval_is_a_t_interval() {
        let (lo, hi) = mean_t_interval95(&[0, 2, 4, 6, 8]).unwrap();
        let half = 2.776_445 * 2f64.sqrt();
        assert!((lo - (4.0 - half)).abs() < 1e-4 && (hi - (4.0 + half)).abs() < 1e-4);
        assert_eq!(mean_t_interval95(&[5]), None);
    }
}
