//! Same scenario and seed, same bytes (STYLE.md "Applied to eureka-sim" 1 and 3: `simulate` is
//! pure, and every random stream derives from (seed, trial, actor)).

use super::csv_files::TrialRow;
use super::test::{Output, Test, bundled};

fn run(name: &str, extra: &[&str]) -> Output {
    Test::scenario(name)
        .trials(10)
        .args(extra.iter().copied())
        .run()
}

#[test]
fn same_seed_gives_byte_identical_files() {
    for name in bundled() {
        let a = run(&name, &["--seed", "42"]);
        let b = run(&name, &["--seed", "42"]);
        assert!(
            a.trials_bytes() == b.trials_bytes(),
            "{name}: trials.csv differs between two identical runs"
        );
        assert!(
            a.summary_bytes() == b.summary_bytes(),
            "{name}: summary.csv differs between two identical runs"
        );
        // Both runs name the same relative file and folder, so the terminal summary is equal too.
        assert_eq!(a.stdout, b.stdout, "{name}: stdout differs");
    }
}

#[test]
fn a_different_seed_gives_different_trials() {
    let a = run("kill-9.toml", &["--seed", "1"]);
    let b = run("kill-9.toml", &["--seed", "2"]);
    assert!(
        a.trials_bytes() != b.trials_bytes(),
        "seeds 1 and 2 gave the same trials.csv"
    );
    let seeds = |o: &Output| o.trials().iter().map(|r| r.seed).collect::<Vec<_>>();
    let (sa, sb) = (seeds(&a), seeds(&b));
    assert!(
        sa.iter().all(|s| !sb.contains(s)),
        "per-trial seeds of master seeds 1 and 2 overlap: {sa:?} / {sb:?}"
    );
    let exposures = |o: &Output| o.trials().iter().map(|r| r.exposure_ms).collect::<Vec<_>>();
    assert_ne!(
        exposures(&a),
        exposures(&b),
        "the outcomes, not just the seeds, differ"
    );
}

#[test]
fn seed_flag_is_the_same_as_set_simulation_seed() {
    let a = run("kill-9.toml", &["--seed", "7"]);
    let b = run("kill-9.toml", &["--set", "simulation.seed=7"]);
    assert!(a.trials_bytes() == b.trials_bytes());
    assert!(a.summary_bytes() == b.summary_bytes());
}

/// A trial's outcome depends on (seed, trial) only, not on how many trials the run has: the
/// rows of a 3-trial run are the first rows of a 10-trial run.
#[test]
fn fewer_trials_are_a_prefix_of_more_trials() {
    for name in ["kill-9.toml", "service-registry.toml"] {
        let three = Test::scenario(name).trials(3).run().trials();
        let ten = run(name, &[]).trials();
        assert_eq!(ten.len(), 10);
        assert_eq!(three[..], ten[..3], "{name}");
    }
}

#[test]
fn trials_are_numbered_from_zero_with_distinct_seeds() {
    let rows: Vec<TrialRow> = run("kill-15.toml", &[]).trials();
    let numbers: Vec<u64> = rows.iter().map(|r| r.trial).collect();
    assert_eq!(numbers, (0..10).collect::<Vec<_>>());
    let mut seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), 10, "every trial has its own seed");
}

/// Trials run in parallel; each one's streams derive from (seed, trial) alone, so the files do
/// not depend on how many threads ran them (src/experiment: `run_trials`).
#[test]
fn thread_count_does_not_change_the_files() {
    let with = |threads: &str| {
        Test::scenario("kill-9.toml")
            .trials(12)
            .env("RAYON_NUM_THREADS", threads)
            .run()
    };
    let one = with("1");
    let three = with("3");
    assert!(one.trials_bytes() == three.trials_bytes());
    assert!(one.summary_bytes() == three.summary_bytes());
}
