//! The Eureka world: the server (registry, leases, eviction, self-preservation, response cache),
//! the clients, Ribbon and the callers, the network, and the shutdown strategies.
//!
//! Every modelled rule cites its source (FACTS.md section and the Eureka/Ribbon/Spring class and
//! method) in a doc comment and is pinned by a test beside it.

mod client;
pub mod delta;
mod deploy;
pub mod ids;
pub mod layout;
pub mod lease;
pub mod measured_rate;
mod observe;
pub mod protocol;
pub mod rate_limiter;
pub mod registry;
pub mod response_cache;
mod restart;
mod route;
mod server;
mod shutdown;
pub mod status;
mod world;

#[cfg(test)]
mod tests;

pub use client::{DiscoveryClient, REPLICATOR_STOP_WAIT_MS};
pub use ids::{ProcessId, RouteId, ServerId};
pub use layout::{Layout, ProcessKind, ProcessSlot, RouteSlot};
pub use observe::{Observation, Observer};
pub use route::ribbon::{circuit_breaker, round_robin};
pub use route::{RIBBON_FIRST_REFRESH_MS, RequestMode};
pub use server::{EurekaServer, RENEWS_WINDOW_MS};
pub use shutdown::{DALSTON_DEREGISTER_HOP_MS, WEB_SERVER_STOP_MS};
pub use status::InstanceStatus;
pub use world::{Process, World};
