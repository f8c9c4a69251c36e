//! Shards: one run's work cut into `N` deterministic slices, so that a batch cluster (a
//! Kubernetes Indexed Job, a Slurm array, GNU parallel) can run them as separate processes and
//! `eureka-sim merge` can put them back together.
//!
//! The slice is contiguous: shard `I` of `N` over `T` items (trials for `run` and `compare`, grid
//! points for `sweep`) gets `[floor(I*T/N), floor((I+1)*T/N))`. The slices of `0..N` cover
//! `0..T` once each, in order, and differ in size by at most one, whatever `T` and `N` (a shard
//! may be empty when `N > T`). Trial `k` draws from `trial_seed(seed, k)` in whichever shard it
//! lands, so the union of the shards' outcomes is exactly the outcomes of one unsharded run.

use std::fmt;
use std::ops::Range;

/// Shard `index` of `count` (`index < count`, `count >= 1`: [`Shard::new`] checks both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// What can be wrong with a `--shard` argument or the environment `--shard auto` reads. Each
/// message names the flag or variable, what is wrong and what is allowed (bad input: exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("--shard {text:?}: expected I/N (shard I of N, 0 <= I < N, e.g. 0/4) or auto")]
    Malformed { text: String },
    #[error("{origin}: the shard count is 0; allowed: a count of at least 1")]
    ZeroCount { origin: String },
    #[error(
        "{origin}: shard index {index} is not below the shard count {count}; allowed: 0 to {}",
        count.saturating_sub(1)
    )]
    IndexTooLarge {
        origin: String,
        index: u32,
        count: u32,
    },
    #[error(
        "--shard auto: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor \
         SLURM_ARRAY_TASK_ID (a Slurm array) is set; outside a batch job give --shard I/N"
    )]
    NoBatchIndex,
    #[error(
        "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but --shard-count \
         is not; allowed: --shard-count N with N the Job's completions"
    )]
    NoCount,
    #[error("{var}={value:?}: expected a whole number from 0 to {max}", max = u32::MAX)]
    BadVariable { var: &'static str, value: String },
    #[error(
        "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; allowed: \
         --shard-count N with N the array's task count"
    )]
    NoSlurmCount,
    #[error(
        "--shard auto: SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}; allowed: \
         an array of consecutive task ids, e.g. --array=0-7"
    )]
    SlurmBelowMin { id: u32, min: u32 },
    #[error(
        "--shard-count is given without --shard auto; allowed: --shard auto --shard-count N, \
         or --shard I/N alone"
    )]
    CountWithoutAuto,
}

impl Shard {
    /// Shard `index` of `count`; `origin` names where the numbers came from, for the message.
    pub fn new(index: u32, count: u32, origin: &str) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::ZeroCount {
                origin: origin.to_string(),
            });
        }
        if index >= count {
            return Err(ShardError::IndexTooLarge {
                origin: origin.to_string(),
                index,
                count,
            });
        }
        Ok(Shard { index, count })
    }

    /// `I/N` as `--shard` takes it.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let malformed = || ShardError::Malformed {
            text: text.to_string(),
        };
        let (i, n) = text.split_once('/').ok_or_else(malformed)?;
        let number = |s: &str| {
            // `u32::from_str` takes a leading '+'; an index is digits only.
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(malformed());
            }
            s.parse::<u32>().map_err(|_| malformed())
        };
        Shard::new(
            number(i.trim())?,
            number(n.trim())?,
            &format!("--shard {text}"),
        )
    }

    /// The shard `--shard auto` means, from the environment a batch system sets (`var` looks a
    /// variable up; the CLI passes `std::env::var`, tests a map):
    ///
    /// - a Kubernetes Indexed Job sets `JOB_COMPLETION_INDEX` (0 to completions - 1) but not the
    ///   count, so `--shard-count` (`count`) is required;
    /// - a Slurm array sets `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_MIN` and
    ///   `SLURM_ARRAY_TASK_COUNT`; the index is `ID - MIN` (so `--array=1-8` works as well as
    ///   `--array=0-7`), the count `SLURM_ARRAY_TASK_COUNT` unless `--shard-count` is given.
    ///
    /// Kubernetes is asked first: a pod does not carry Slurm's variables, and a Slurm job that
    /// starts a container rarely carries the Job's.
    pub fn from_env(
        count: Option<u32>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        let number = |name: &'static str| -> Result<Option<u32>, ShardError> {
            match var(name) {
                None => Ok(None),
                Some(value) => value
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| ShardError::BadVariable { var: name, value }),
            }
        };
        if let Some(index) = number("JOB_COMPLETION_INDEX")? {
            let count = count.ok_or(ShardError::NoCount)?;
            return Shard::new(
                index,
                count,
                &format!("--shard auto (JOB_COMPLETION_INDEX={index}, --shard-count {count})"),
            );
        }
        let Some(id) = number("SLURM_ARRAY_TASK_ID")? else {
            return Err(ShardError::NoBatchIndex);
        };
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let index = id
            .checked_sub(min)
            .ok_or(ShardError::SlurmBelowMin { id, min })?;
        let (count, origin) = match count {
            Some(n) => (
                n,
                format!(
                    "--shard auto (SLURM_ARRAY_TASK_ID={id}, SLURM_ARRAY_TASK_MIN={min}, --shard-count {n})"
                ),
            ),
            None => {
                let n = number("SLURM_ARRAY_TASK_COUNT")?.ok_or(ShardError::NoSlurmCount)?;
                (
                    n,
                    format!(
                        "--shard auto (SLURM_ARRAY_TASK_ID={id}, SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_COUNT={n})"
                    ),
                )
            }
        };
        Shard::new(index, count, &origin)
    }

    /// This shard's slice of `0..total`: `[floor(I*T/N), floor((I+1)*T/N))`, in `u64` so that
    /// `I*T` cannot overflow.
    pub fn range(self, total: u32) -> Range<u32> {
        let at = |i: u32| (u64::from(i) * u64::from(total) / u64::from(self.count)) as u32;
        at(self.index)..at(self.index + 1)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn shard(i: u32, n: u32) -> Shard {
        Shard::new(i, n, "test").unwrap()
    }

    #[test]
    fn slices_are_the_floor_blocks_of_the_issue() {
        // 10 trials over 4 shards: floor(0*10/4)=0, floor(10/4)=2, floor(20/4)=5, floor(30/4)=7.
        let ranges: Vec<_> = (0..4).map(|i| shard(i, 4).range(10)).collect();
        assert_eq!(ranges, [0..2, 2..5, 5..7, 7..10]);
        // More shards than trials: some are empty, none overlaps.
        let ranges: Vec<_> = (0..5).map(|i| shard(i, 5).range(3)).collect();
        assert_eq!(ranges, [0..0, 0..1, 1..1, 1..2, 2..3]);
        assert_eq!(shard(0, 1).range(200), 0..200);
        // No overflow at the extremes.
        assert_eq!(
            shard(u32::MAX - 1, u32::MAX).range(u32::MAX),
            u32::MAX - 1..u32::MAX
        );
    }

    #[test]
    fn the_slices_of_every_shard_cover_every_trial_once_in_order() {
        for total in 0..40 {
            for count in 1..12 {
                let all: Vec<u32> = (0..count)
                    .flat_map(|i| shard(i, count).range(total))
                    .collect();
                assert_eq!(all, (0..total).collect::<Vec<_>>(), "T={total} N={count}");
                let sizes: Vec<u32> = (0..count)
                    .map(|i| shard(i, count).range(total).len() as u32)
                    .collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1, "T={total} N={count}: {sizes:?}");
            }
        }
    }

    #[test]
    fn parse_accepts_i_of_n_and_names_what_is_wrong() {
        assert_eq!(Shard::parse("3/8"), Ok(shard(3, 8)));
        assert_eq!(Shard::parse("0/1"), Ok(shard(0, 1)));
        for bad in [
            "",
            "3",
            "3/",
            "/8",
            "a/8",
            "3/b",
            "-1/4",
            "+1/4",
            "1/4/2",
            "1.0/4",
            "99999999999/4",
        ] {
            let err = Shard::parse(bad).unwrap_err();
            assert!(
                matches!(err, ShardError::Malformed { .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains("expected I/N"), "{err}");
        }
        let err = Shard::parse("4/4").unwrap_err().to_string();
        assert_eq!(
            err,
            "--shard 4/4: shard index 4 is not below the shard count 4; allowed: 0 to 3"
        );
        let err = Shard::parse("0/0").unwrap_err().to_string();
        assert_eq!(
            err,
            "--shard 0/0: the shard count is 0; allowed: a count of at least 1"
        );
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn auto_reads_a_kubernetes_indexed_job_with_its_count_from_the_flag() {
        assert_eq!(
            Shard::from_env(Some(5), env(&[("JOB_COMPLETION_INDEX", "4")])),
            Ok(shard(4, 5))
        );
        assert_eq!(
            Shard::from_env(None, env(&[("JOB_COMPLETION_INDEX", "4")])),
            Err(ShardError::NoCount)
        );
        let err = Shard::from_env(Some(4), env(&[("JOB_COMPLETION_INDEX", "4")])).unwrap_err();
        assert!(err.to_string().contains("JOB_COMPLETION_INDEX=4"), "{err}");
        assert!(err.to_string().contains("allowed: 0 to 3"), "{err}");
        let err = Shard::from_env(Some(4), env(&[("JOB_COMPLETION_INDEX", "x")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "JOB_COMPLETION_INDEX=\"x\": expected a whole number from 0 to 4294967295"
        );
    }

    #[test]
    fn auto_reads_a_slurm_array_from_its_first_task_id() {
        let slurm = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        assert_eq!(Shard::from_env(None, env(&slurm)), Ok(shard(2, 8)));
        assert_eq!(Shard::from_env(Some(3), env(&slurm)), Ok(shard(2, 3)));
        let no_min = [
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        assert_eq!(Shard::from_env(None, env(&no_min)), Ok(shard(7, 8)));
        assert_eq!(
            Shard::from_env(None, env(&[("SLURM_ARRAY_TASK_ID", "1")])),
            Err(ShardError::NoSlurmCount)
        );
        let below = [("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_MIN", "1")];
        assert_eq!(
            Shard::from_env(None, env(&below)),
            Err(ShardError::SlurmBelowMin { id: 0, min: 1 })
        );
        assert_eq!(
            Shard::from_env(Some(2), env(&[])),
            Err(ShardError::NoBatchIndex)
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::RngSeed;

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 1024,
                rng_seed: RngSeed::Fixed(14),
                ..ProptestConfig::default()
            })]

            /// "Shards merged equal one run", at its arithmetic, for any `T`
            /// trials and `N` shards up to `u32::MAX` (the exhaustive test above stops at 40 and
            /// 12): the slices are `[floor(I T / N), floor((I + 1) T / N))` (computed apart, in
            /// 128 bits: no overflow), start at 0, end at `T`,
            /// each begins where the one before ended (so they cover `0..T` once, in order), and
            /// each holds `floor(T / N)` or `ceil(T / N)` trials. Checked on a few shards `I` of
            /// each draw, with their neighbours, and on the first and the last.
            #[test]
            fn the_slices_partition_the_trials_for_any_count(
                total in prop_oneof![0u32..=100, any::<u32>()],
                count in prop_oneof![1u32..=20, 1u32..=u32::MAX],
                picks in proptest::collection::vec(any::<proptest::sample::Index>(), 1..=4),
            ) {
                let at = |i: u32| Shard::new(i, count, "test").unwrap().range(total);
                prop_assert_eq!(at(0).start, 0);
                prop_assert_eq!(at(count - 1).end, total);
                let (low, high) = (total / count, total.div_ceil(count));
                for pick in picks {
                    let i = pick.index(count as usize) as u32;
                    let r = at(i);
                    // The documented floor, computed apart in 128 bits.
                    let floor = |i: u32| (u128::from(i) * u128::from(total) / u128::from(count)) as u32;
                    prop_assert_eq!(r.clone(), floor(i)..floor(i + 1));
                    prop_assert!(r.start <= r.end);
                    prop_assert!((low..=high).contains(&(r.end - r.start)), "shard {} {:?}", i, r);
                    if i + 1 < count {
                        prop_assert_eq!(r.end, at(i + 1).start);
                    }
                    if i > 0 {
                        prop_assert_eq!(at(i - 1).end, r.start);
                    }
                }
            }
        }
    }
}
