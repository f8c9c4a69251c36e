//! `[[restart]]`: a new incarnation of an instance's process.
//!
//! A restart is a new JVM: a new `DiscoveryClient` (STARTING, its own timers from its
//! construction, FACTS.md §5.1) and a new web server, started through the same lifecycle as at
//! boot (`on_client_create`). By default it keeps the instance id, as Spring Cloud's default id
//! `hostname:app:port` does on the same host and port (SCC `IdUtils#getDefaultInstanceId`,
//! FACTS.md §6), so whatever the server still holds for that id applies to the new process:
//!
//! - its lease, if not yet evicted: the first register replaces it (a new lease, no new expected
//!   client, `AbstractInstanceRegistry#register`);
//! - its overridden status: OUT_OF_SERVICE set through /service-registry survives the restart
//!   while the lease lives (`OverrideExistsRule` re-applies it to the UP register), and is gone
//!   after a DELETE or an eviction (`AbstractInstanceRegistry#internalCancel` removes the map
//!   entry). The map's one-hour `expireAfterAccess` is not modelled.
//!
//! With `new-instance-id` the new process is a separate registry entry (`<instance>@1`) and
//! the old lease is left to expire. Replies addressed to the previous incarnation are dropped
//! (`Process::client.incarnation`), and the shutdown metrics of the instance freeze at the
//! restart (`Observation::Restarted`): they describe the incarnation that stopped.

use crate::engine::{RngStream, StreamFactory};
use crate::scenario::{RestartConfig, Scenario};

use super::ids::ProcessId;
use super::layout::Layout;

#[derive(Debug)]
pub struct RestartRun {
    pub config: RestartConfig,
    /// The process that exits.
    pub old: ProcessId,
    /// The process that starts (`old` unless the restart takes a new instance id).
    pub new: ProcessId,
    /// The new incarnation's client stream for a same-id restart (`client/<id>#1`).
    pub(in crate::eureka) rng: Option<RngStream>,
    pub(in crate::eureka) scheduled: bool,
    pub(in crate::eureka) done: bool,
}

impl RestartRun {
    pub fn build_all(
        scenario: &Scenario,
        layout: &Layout,
        streams: &StreamFactory,
    ) -> Vec<RestartRun> {
        scenario
            .restarts
            .iter()
            .zip(&layout.restarts)
            .map(|(config, &(old, new))| RestartRun {
                config: config.clone(),
                old,
                new,
                rng: (old == new).then(|| streams.stream(&format!("client/{}#1", config.instance))),
                scheduled: false,
                done: false,
            })
            .collect()
    }
}
