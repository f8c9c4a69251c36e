//! The end-to-end layer (STYLE.md, "Tests in three layers"): one integration-test binary that
//! runs the real `eureka-sim` on the real scenario files, and on broken ones, and checks what a
//! user sees: exit codes, messages, and the CSV files.
//!
//! Expected values are derived from the rules in shared/eureka/FACTS.md (each test cites the
//! section) or from the documented interface (headers, exit codes, `--set`), never copied from an
//! earlier run of the simulator.
//!
//! The modules live in tests/cli/.

mod bundled;
mod commands;
mod csv_files;
mod determinism;
mod envelopes;
mod errors;
mod hardening;
mod interrupt;
mod keys;
mod overrides;
mod shell;
mod statistics;
mod test;

/// Trials per run in the invariant tests: enough to meet the envelopes' corners, few enough
/// to keep the suite within seconds. Set `EUREKA_SIM_CLI_TRIALS` (e.g. to 2000) for a deeper
/// sweep of the same envelopes.
pub fn invariant_trials() -> u32 {
    std::env::var("EUREKA_SIM_CLI_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}
