//! eureka-sim: a deterministic discrete-event simulator of how a Netflix Eureka registry
//! propagates an instance's departure to the callers that route to it.
//!
//! Layout: [`engine`] (time, event queue, RNG streams) drives [`eureka`] (the world: server,
//! response cache, clients, Ribbon, callers, network) built from a validated [`scenario`];
//! [`experiment`] runs trials and [`report`] renders their outcomes.

pub mod engine;
pub mod eureka;
pub mod experiment;
pub mod report;
pub mod scenario;

pub mod cli;

/// The fuzz targets' bodies, for `fuzz/` and the stable replay of its regressions; not an
/// interface.
#[doc(hidden)]
pub mod fuzzing;

#[cfg(test)]
mod import_graph;
