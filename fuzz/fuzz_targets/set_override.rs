//! `cargo +nightly fuzz run set_override`: see `eureka_sim::fuzzing::set_override` (shared with the stable
//! replay of `fuzz/regressions/set_override/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    eureka_sim::fuzzing::set_override(data);
});
