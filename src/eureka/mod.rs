//! The Eureka world: the server (registry, leases, eviction, self-preservation, response cache),
//! the clients, Ribbon and the callers, the network, and the shutdown strategies.
//!
//! Every modelled rule cites its source (FACTS.md section and the Eureka/Ribbon/Spring class and
//! method) in a doc comment and is pinned by a test beside it.
//!
//! Layers, bottom up (imports point down only; `src/import_graph.rs` keeps it so):
//!
//! - identity and wire: [`ids`] (process, route and server ids), [`layout`] (who is who),
//!   [`protocol`] (REST calls, replies and their payloads), [`status`], `observe`;
//! - rules, each a type with its state and transitions, unit-tested alone: [`lease`],
//!   [`registry`] (eviction, self-preservation, overrides), [`response_cache`], [`delta`],
//!   `server` (the Eureka server: told the time and the calls, it answers and reports through
//!   `ServerOutput`), `client` (`DiscoveryClient`), `route` (a caller's route and its `Balancer`:
//!   Ribbon in `route/ribbon*`, Spring Cloud LoadBalancer in `route/spring.rs`), `shutdown`,
//!   `restart`, `deploy`;
//! - `world/`: the dispatcher. It owns the clock, the queue, the network and the collections
//!   addressed by id (servers, processes, routes), and its handlers (`world/<rule>.rs`) turn
//!   events into rule calls. What callers see changes only through `world/routing.rs`.

mod client;
pub mod delta;
mod deploy;
mod faults;
pub mod ids;
pub mod layout;
pub mod lease;
pub mod measured_rate;
mod observe;
pub mod protocol;
pub mod rate_limiter;
pub mod registry;
pub mod replication;
pub mod response_cache;
mod restart;
mod route;
mod server;
mod shutdown;
pub mod status;
pub mod transport;
mod world;

#[cfg(test)]
mod tests;

pub use client::{DiscoveryClient, REPLICATOR_STOP_WAIT_MS};
pub use ids::{ProcessId, RouteId, ServerId};
pub use layout::{Layout, ProcessKind, ProcessSlot, RouteSlot};
pub use observe::{Holding, Observation, Observer};
pub use protocol::Unanswered;
pub use route::ribbon::{circuit_breaker, round_robin};
pub use route::{RIBBON_FIRST_REFRESH_MS, RequestMode};
pub use server::{EurekaServer, RENEWS_WINDOW_MS};
pub use shutdown::{DALSTON_DEREGISTER_HOP_MS, PAUSE_REQUEST_UNLOAD_WAIT_MS, WEB_SERVER_STOP_MS};
pub use status::InstanceStatus;
pub use world::{Process, Ran, World};
