//! The instance and its lease in the story: its stop, its registers and cancels, the eviction
//! runs that hold or remove it, a restart or a deploy that replaces it (FACTS.md §1, §2, §6, §7).

use crate::engine::SimTime;
use crate::eureka::{InstanceStatus, ServerId};
use crate::scenario::Strategy;

use super::story::Story;
use super::{Explanation, gate_text, relative, restart_register_text, secs};

impl Story<'_, '_> {
    pub(super) fn restarted(&mut self, t: SimTime) {
        self.restarted_at = Some(t);
        let text = match self.restart_new {
            Some(new) if new != self.target => format!(
                "[[restart]]: a new process starts under a new instance id ({}); this id's lease \
                 is left to expire",
                self.told.name(new)
            ),
            _ => {
                let held = if self.cancelled_at.is_some() || self.evicted {
                    "its lease was already removed (and internalCancel removed any overridden \
                     status with it), so the server holds nothing for this id"
                } else {
                    "its lease was never cancelled or evicted, so the server still holds it \
                     (and any overridden status) for this id"
                };
                format!(
                    "[[restart]]: a new process (a new JVM and DiscoveryClient, STARTING) starts \
                     under the same instance id; {held} (FACTS.md §6)"
                )
            }
        };
        self.push(t, text);
    }

    pub(super) fn deploy_batch(&mut self, t: SimTime, deploy: usize, size: usize) {
        let Some(pairs) = self.told.layout.deploys.get(deploy) else {
            return;
        };
        let from = self.deploy_offsets[deploy];
        let to = (from + size).min(pairs.len());
        self.deploy_offsets[deploy] = to;
        let target = self.target;
        if let Some((_, new)) = pairs[from..to].iter().find(|(old, _)| *old == target) {
            let d = &self.scenario.deploys[deploy];
            let text = format!(
                "[[deploy]] of {}: a batch of {size} starts with this instance; it departs with \
                 {} and its replacement {} starts at the same instant",
                self.scenario.apps[d.app].name,
                d.strategy.name(),
                self.told.name(*new)
            );
            self.push(t, text);
        }
    }

    pub(super) fn stopped_serving(&mut self, t: SimTime, restarted: bool) {
        let timeout_s = self.timeout_s;
        let text = if restarted {
            "the restarted process stopped serving".to_string()
        } else if self.graceful {
            format!(
                "stopped serving: the graceful phase began (server.shutdown = graceful): from now \
                 every new request sent to it is refused, the requests in flight get up to \
                 {timeout_s} s (spring.lifecycle.timeout-per-shutdown-phase, FACTS.md §7)"
            )
        } else {
            "stopped serving: from now every request sent to it is refused".to_string()
        };
        self.push(t, text);
    }

    pub(super) fn inflight_failed(&mut self, t: SimTime, count: u64) {
        let service = self.scenario.apps[self.config.app].service_time_ms;
        let timeout_s = self.timeout_s;
        // Counted when the graceful phase begins; they fail when it times out.
        let t = if self.graceful {
            SimTime(t.ms() + self.app_client.timeout_per_shutdown_phase_ms)
        } else {
            t
        };
        let why = if self.graceful {
            format!("still running when the graceful phase's {timeout_s} s ran out")
        } else {
            format!(
                "the web server stopped without a graceful phase, each request takes {service} \
                 ms (service-time-ms)"
            )
        };
        self.push(
            t,
            format!(
                "{count} request(s) in flight on it failed as its web server stopped ({why}; \
                 FACTS.md §7)"
            ),
        );
    }

    pub(super) fn registered(
        &mut self,
        t: SimTime,
        server: ServerId,
        status: InstanceStatus,
        from_peer: Option<ServerId>,
        restarted: bool,
    ) {
        let config = self.config;
        let duration_s = self.duration_s;
        let override_held = config.strategy == Strategy::ServiceRegistry
            && (!config.cancel_override || t.ms() < config.at_ms + config.wait_ms)
            && self.cancelled_at.is_none()
            && !self.evicted;
        let ghost = !restarted && self.cancelled_on[server.index()].is_some_and(|c| c < t);
        if ghost {
            self.ghost_registered = Some(t);
        }
        let text = if let Some(from) = from_peer {
            // `isReplication`: the peer passes on a register it got (or its copy taken on a
            // 409); the instance's own calls are told below.
            let again = if ghost {
                format!(
                    ", after the cancel there: it re-creates the lease ({status}, never renewed: \
                     expires {duration_s} s later)"
                )
            } else {
                String::new()
            };
            format!(
                "{} replicated the register (status {status}) to {}: a new lease there{again}",
                Explanation::on(self.scenario, from),
                Explanation::on(self.scenario, server)
            )
        } else if restarted {
            restart_register_text(status, override_held)
        } else if ghost {
            let race = if status == InstanceStatus::Down {
                "; the DOWN register raced the DELETE, spring-cloud-netflix#2101"
            } else {
                ""
            };
            format!(
                "a {status} register arrived AFTER the DELETE and re-created the lease \
                 ({status}, never renewed: expires {duration_s} s later{race})"
            )
        } else {
            self.own_register_text(t, status)
        };
        let text = text.replace("the server", &Explanation::on(self.scenario, server));
        self.push(t, text);
    }

    /// A register the instance sent itself (not a replication, a restart or a ghost).
    fn own_register_text(&self, t: SimTime, status: InstanceStatus) -> String {
        let config = self.config;
        if config.strategy == Strategy::Pause
            && config.resume_ms.is_some_and(|r| t.ms() >= config.at_ms + r)
            && status == InstanceStatus::Up
        {
            "/resume's UP reached the server: the status change went out as a register through \
             the InstanceInfoReplicator (FACTS.md §7)"
                .to_string()
        } else if config.strategy == Strategy::ServiceRegistry
            && config.cancel_override
            && t.ms() >= config.at_ms + config.wait_ms
            && status == InstanceStatus::Up
        {
            "its heartbeat got 404 (the CANCEL_OVERRIDE left it UNKNOWN), so the client \
             re-registered with its own status UP (FACTS.md §6)"
                .to_string()
        } else if self.app_client.healthcheck_enabled && status == InstanceStatus::Up {
            "a register with status UP reached the server: the replicator run that the DOWN \
             triggered starts with refreshInstanceInfo, and the health-check handler \
             (eureka.client.healthcheck.enabled) turned the status back to the health \
             indicators' UP (spring-cloud-netflix#3923, FACTS.md §7)"
                .to_string()
        } else {
            format!(
                "a register with status {status} reached the server (a new lease; status changes \
                 go out as registers through the InstanceInfoReplicator)"
            )
        }
    }

    pub(super) fn cancelled(&mut self, t: SimTime, server: ServerId, from_peer: Option<ServerId>) {
        self.cancelled_at = Some(t);
        self.cancelled_on[server.index()] = Some(t);
        let text = match from_peer {
            // Replications are not replicated again: the sender got the DELETE.
            Some(from) => format!(
                "{} replicated the cancel (the DELETE it got) to {}: lease cancelled there",
                Explanation::on(self.scenario, from),
                Explanation::on(self.scenario, server)
            ),
            None => format!(
                "the DELETE (unregister) reached {}: lease cancelled",
                Explanation::on(self.scenario, server)
            ),
        };
        self.push(t, text);
    }

    /// An eviction run after the lease became expirable there: blocked by self-preservation
    /// (the first one told, the rest counted), or past the 15 % cap.
    pub(super) fn eviction_run(
        &mut self,
        t: SimTime,
        server: ServerId,
        gated: bool,
        (renews_last_min, threshold): (u64, i64),
        (expired, n_evicted): (usize, usize),
    ) {
        if gated {
            let (count, last) = &mut self.gates[server.index()];
            *count += 1;
            *last = Some((t, renews_last_min, threshold));
            if *count == 1 {
                let why = gate_text(renews_last_min, threshold);
                let peer = Explanation::at_peer(self.scenario, server);
                self.push(t, format!("{peer}eviction run: {why}"));
            }
        } else if !self.told.evicted_at(self.target, server, t) && expired > 0 {
            let text = format!(
                "{}eviction run: {expired} expired lease(s), {n_evicted} evicted (the 15 % cap); \
                 this one must wait for the next run",
                Explanation::at_peer(self.scenario, server)
            );
            self.push(t, text);
        }
    }

    pub(super) fn evicted_lease(&mut self, t: SimTime, server: ServerId) {
        self.evicted = true;
        let duration_s = self.duration_s;
        let text = match (self.ghost_registered, self.expirable_on(server)) {
            (Some(g), _) => format!(
                "the eviction run removed the re-created lease (registered at {}, never renewed, \
                 so expirable {duration_s} s later)",
                secs(g)
            ),
            (None, Some(e)) => format!(
                "the eviction run removed the expired lease, {} after it became expirable",
                relative(t.since(e))
            ),
            (None, None) => "the eviction run removed the expired lease".to_string(),
        };
        let text = format!("{}{text}", Explanation::at_peer(self.scenario, server));
        self.push(t, text);
    }
}
