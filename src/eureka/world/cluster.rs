//! The cluster: one `EurekaServer` per `[[peer]]` (or the standalone server), who replicates to
//! whom, and which servers each client may call (`docs/design/peers.md` §2.5).

use crate::engine::StreamFactory;
use crate::eureka::ids::ServerId;
use crate::eureka::observe::Observer;
use crate::eureka::server::EurekaServer;
use crate::eureka::transport::{
    ClientTransport, Endpoints, NUMBER_OF_RETRIES, TransportSettings, TransportStreams,
};
use crate::scenario::{ClientConfig, NetworkConfig, Scenario};

use super::World;

/// Every server, by `ServerId`. Server 0 draws from the stream `server` (the standalone
/// server's), server k >= 1 from `server/<name>`, so a lone peer is the standalone server.
/// Each replicates to the other peers of its own embedded client's service URLs
/// (`PeerEurekaNodes#resolvePeerUrls` minus `#isThisMyUrl`).
pub(super) fn build_servers(
    scenario: &Scenario,
    processes: usize,
    streams: &StreamFactory,
) -> Vec<EurekaServer> {
    let release = scenario.simulation.release;
    let peers = scenario.servers();
    let mut servers: Vec<EurekaServer> = peers
        .iter()
        .enumerate()
        .map(|(k, peer)| {
            let stream = match k {
                0 => streams.stream("server"),
                _ => streams.stream_of(&["server/", &peer.name]),
            };
            EurekaServer::peer(ServerId(k as u32), &peer.server, release, processes, stream)
        })
        .collect();
    for (k, server) in servers.iter_mut().enumerate() {
        let targets: Vec<ServerId> = peers[k].replicates_to(k).into_iter().map(id).collect();
        server.replicate_to(&targets);
    }
    servers
}

fn id(k: usize) -> ServerId {
    ServerId(k as u32)
}

/// The servers a client with `config` may call: its own zone's, then the others
/// (`ClientConfig::endpoints`, resolved from its service URLs and zones).
fn endpoints_of(config: &ClientConfig) -> (Vec<ServerId>, Vec<ServerId>) {
    let e = &config.endpoints;
    let ids = |v: &[usize]| v.iter().copied().map(id).collect();
    (ids(&e.own), ids(&e.others))
}

/// The transport keys of a client's configuration.
fn transport_settings(config: &ClientConfig) -> TransportSettings {
    TransportSettings {
        poll_interval_ms: config.service_url_poll_interval_s * 1000,
        session_ms: config.sessioned_client_reconnect_interval_s * 1000,
        quarantine_refresh_percentage: config.retryable_client_quarantine_refresh_percentage,
    }
}

impl<O: Observer> World<'_, O> {
    /// Gives every client its way to the servers: a client with one endpoint calls it
    /// directly; one with more gets a transport drawing from its own streams
    /// (`transport/<name>`, `transport/<name>/query`, `resolver/<name>`), which a standalone
    /// world never creates.
    pub(super) fn connect_clients(&mut self, streams: &StreamFactory) {
        let scenario = self.scenario;
        let fixed = scenario
            .simulation
            .release
            .endpoint_shuffle_fixed_per_host();
        for process in &mut self.processes {
            let (own, others) = endpoints_of(process.client.config());
            // With faults a lone server may fail a call: the transport retries it (3 attempts).
            if own.len() + others.len() <= 1 && scenario.faults.is_empty() {
                let server = own.first().or(others.first()).copied();
                process.client.use_server(server.unwrap_or(ServerId::FIRST));
                continue;
            }
            let endpoints = Endpoints::new(own, others, fixed);
            let settings = transport_settings(process.client.config());
            let rngs = TransportStreams::named(streams, &process.name);
            let transport = ClientTransport::new(endpoints, settings, rngs);
            process.client.use_transport(transport);
            let within = process.client.shortest_task_interval_ms();
            if scenario.faults.is_empty() && longest_run_ms(&scenario.network) < within {
                process.client.calls_answered_in_time();
            }
        }
    }
}

/// Calls in one supervised run at most: a renew and the register after its 404, a delta and
/// the full fetch after it (a reconcile mismatch, a 403), and one more for margin.
const CALLS_PER_RUN: u64 = 3;

/// The longest a supervised run can take when no `[[fault]]` holds a call: every attempt is
/// answered after one round trip (a server answers every call at once), a call makes at most
/// [`NUMBER_OF_RETRIES`] attempts and a run [`CALLS_PER_RUN`] calls, each way at most
/// `latency-ms + latency-jitter-ms`.
fn longest_run_ms(network: &NetworkConfig) -> u64 {
    let one_way = network.latency_ms.saturating_add(network.latency_jitter_ms);
    one_way
        .saturating_mul(2)
        .saturating_mul(u64::from(NUMBER_OF_RETRIES))
        .saturating_mul(CALLS_PER_RUN)
}
