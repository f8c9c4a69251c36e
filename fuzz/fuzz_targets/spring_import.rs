//! `cargo +nightly fuzz run spring_import`: see `eureka_sim::fuzzing::spring_import` (shared with the stable
//! replay of `fuzz/regressions/spring_import/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    eureka_sim::fuzzing::spring_import(data);
});
