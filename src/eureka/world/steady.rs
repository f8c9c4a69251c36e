//! `simulation.start = "steady"`: the world at time 0 as after a long uptime. Each rule builds
//! its own steady state (`EurekaServer::start_steady` / `restore` / `settle_caches` /
//! `settle_threshold`, `DiscoveryClient::start_steady` / `restore_cache`, the balancers'
//! steady creation); this file only calls them in the order the history would have left them:
//! the server opens, every process of the fleet is registered and renewed, the caches serve the
//! registry, every client's last fetch read it, the threshold has been updated, and the web
//! servers serve with the callers' traffic and balancers running.

use crate::eureka::ids::ServerId;
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::Observer;

use super::server::embedded_client_up_count;
use crate::eureka::replication::MAX_BATCHING_DELAY_MS;

use super::World;

impl<O: Observer> World<'_, O> {
    /// Builds the steady state of every process below `first_replacement` (replacements start
    /// when their restart or deploy says, as in a cold start).
    ///
    /// In a cluster, each process's lease is restored on the server its registration stack is
    /// sticky on (its home) and on the peers that server replicates to, whose copies were last
    /// renewed one batching delay and one latency later (a lone task's lag,
    /// `docs/design/peers.md` §2.6); its local registry is what its query server serves.
    pub(super) fn start_steady(&mut self, first_replacement: usize) {
        let (now, wall) = (self.now(), self.wall_now());
        let servers: Vec<ServerId> = (0..self.servers.len())
            .map(|k| ServerId(k as u32))
            .collect();
        for &s in &servers {
            self.with_server(s, |server, out| server.start_steady(wall, out));
        }
        let lag = MAX_BATCHING_DELAY_MS + self.scenario.network.latency_ms;
        let mut query_servers = Vec::with_capacity(first_replacement);
        for p in 0..first_replacement {
            self.set_alive(p, true);
            let lease = self.with_client(p, |client, _, out| client.start_steady(now, wall, out));
            let (home, query) = self.processes[p].client.start_steady_transport(now);
            query_servers.push(query);
            let Some(lease) = lease else {
                continue;
            };
            let targets = self.servers[home.index()].replication_targets();
            for (s, delay) in
                std::iter::once((home, 0)).chain(targets.into_iter().map(|t| (t, lag)))
            {
                self.with_server(s, |server, out| {
                    server.restore(
                        p,
                        lease.registrant,
                        lease.next_renew_ms + delay,
                        lease.interval_ms,
                        out,
                    );
                });
            }
        }
        let payloads: Vec<_> = servers
            .iter()
            .map(|&s| {
                self.with_server(s, |server, out| {
                    server.settle_caches(now, out);
                    server.served_payload(now)
                })
            })
            .collect();
        let leave_out = self.leaves_out_unobserved && self.fetches_change_nothing();
        for (p, query) in query_servers.into_iter().enumerate() {
            if leave_out && !self.fetches_observed(p) {
                self.processes[p].client.leave_out_fetches();
            }
            let payload = std::rc::Rc::clone(&payloads[query.index()]);
            self.with_client(p, |client, applications, out| {
                client.restore_cache(payload, applications, out);
            });
        }
        for &s in &servers {
            let count = embedded_client_up_count(&self.processes, s);
            self.servers[s.index()].settle_threshold(count);
        }
        // Every web server serves before any balancer reads (a health-check round checks them).
        for p in 0..first_replacement {
            self.set_serving(p, true);
        }
        for p in 0..first_replacement {
            if let ProcessKind::Caller { caller } = self.processes[p].kind {
                self.start_caller_traffic_steady(caller);
            }
        }
    }
}

impl<O: Observer> World<'_, O> {
    /// Whether no client's fetch can change anything on any server for the whole trial
    /// ([`EurekaServer::reads_change_nothing`] on every server, none of which a `[[fault]]`
    /// restarts, stops or cuts off: with no fault every call is answered at once).
    pub(super) fn fetches_change_nothing(&self) -> bool {
        let now = self.now();
        self.scenario.faults.is_empty() && self.servers.iter().all(|s| s.reads_change_nothing(now))
    }

    /// Whether what `p` fetches is observed: a caller's balancers read its lists, a peer's
    /// embedded client's registry is counted for the renewal threshold. An app instance that
    /// calls nothing only stores what it fetched (its observations of its own cache go to no
    /// measure: `MetricsObserver` follows callers' caches).
    pub(super) fn fetches_observed(&self, p: usize) -> bool {
        let process = &self.processes[p];
        !matches!(process.kind, ProcessKind::AppInstance { .. }) || !process.client.calls_nothing()
    }

    /// Steady start of a caller: its requests arrive from now on (memoryless, or the fixed grid
    /// at a uniform phase) and its balancers exist, as long-running ones are
    /// ([`Route::create_steady`](crate::eureka::route::Route::create_steady)).
    fn start_caller_traffic_steady(&mut self, caller: usize) {
        for r in 0..self.routes.len() {
            if self.routes[r].caller != caller {
                continue;
            }
            self.with_balancer(r, |route, cx, out| route.create_steady(cx, out));
            self.start_arrivals(r);
        }
    }
}
