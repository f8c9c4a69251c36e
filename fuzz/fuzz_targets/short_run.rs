//! `cargo +nightly fuzz run short_run`: see `eureka_sim::fuzzing::short_run` (shared with the stable
//! replay of `fuzz/regressions/short_run/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    eureka_sim::fuzzing::short_run(data);
});
