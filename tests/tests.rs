//! The one integration-test binary (in the manner of ripgrep's `tests/tests.rs`): every module
//! runs the real `eureka-sim`, or the library as the CLI does, on real scenario files.
//!
//! - `cli`: what a user sees of `run`, `keys` and bad input (exit codes, messages, CSV files);
//! - `check`, `compare`, `sweep`: those commands end to end;
//! - `cluster`: the outputs of a run on several peers (`callers.csv`, `servers.csv`);
//! - `conformance`: the rig's scenario and committed real trials agree with the model;
//! - `incidents`: the reproductions of filed issues (`scenarios/incidents/`), named after them;
//! - `invariants`: the model's invariants as property tests (proptest) on random small worlds;
//! - `golden`: the byte-for-byte outputs of every scenario file;
//! - `docs`: the front page and docs/ (length, links that resolve);
//! - `spring`: scenarios whose settings come from Spring files (`spring-config`);
//! - `fuzz_regressions`: the fuzzer's crash inputs (`fuzz/regressions/`), replayed through its
//!   targets on stable;
//! - `serve`: the tuning page's API against `run`, its bad input, Ctrl-C, and headless Chromium;
//! - `shard`: `--shard I/N` run as separate processes and `merge`d, byte-identical to one run;
//! - `harness`: what they share.
//!
//! Run one module with `cargo test --test tests golden::` (a filter on the test path).

mod harness;

mod check;
mod cli;
mod cluster;
mod compare;
mod conformance;
mod docs;
mod fuzz_regressions;
mod golden;
mod incidents;
mod invariants;
mod serve;
mod shard;
mod spring;
mod sweep;
