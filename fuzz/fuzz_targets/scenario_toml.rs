//! `cargo +nightly fuzz run scenario_toml`: see `eureka_sim::fuzzing::scenario_toml` (shared with the stable
//! replay of `fuzz/regressions/scenario_toml/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    eureka_sim::fuzzing::scenario_toml(data);
});
